// SPDX-License-Identifier: MIT
/*
 * ptoctl trace's reader: a small JSON parser, then only what the
 * library's trace writer emits (lib/trace/trace_json.c: otherData.format
 * "pto-trace", version 1); anything else is refused with a message.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "ptoctl_trace.h"

/* ---- JSON ----------------------------------------------------------- */

struct jparse {
	const char *p, *end;
	const char *err;
	int depth;
};

static void jfree(struct jv *v)
{
	size_t i;

	for (i = 0; i < v->n; i++) {
		jfree(&v->kid[i]);
		if (v->key)
			free(v->key[i]);
	}
	free(v->kid);
	free(v->key);
	free(v->str);
}

static void jws(struct jparse *jp)
{
	while (jp->p < jp->end && (*jp->p == ' ' || *jp->p == '\n' ||
				   *jp->p == '\t' || *jp->p == '\r'))
		jp->p++;
}

static int jfail(struct jparse *jp, const char *why)
{
	if (!jp->err)
		jp->err = why;
	return -EINVAL;
}

static int jstring(struct jparse *jp, char **out)
{
	size_t cap = 16, n = 0;
	char *s = malloc(cap);

	if (!s)
		return -ENOMEM;
	jp->p++;			/* the opening quote */
	while (jp->p < jp->end && *jp->p != '"') {
		char c = *jp->p++;

		if ((unsigned char)c < 0x20) {
			free(s);
			return jfail(jp, "control character in a string");
		}
		if (c == '\\') {
			if (jp->p >= jp->end)
				break;
			c = *jp->p++;
			switch (c) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case '"': case '\\': case '/': break;
			case 'u': {
				unsigned int u;

				if (jp->end - jp->p < 4 ||
				    sscanf(jp->p, "%4x", &u) != 1 || u > 0x7f) {
					free(s);
					return jfail(jp, "a \\u escape beyond ASCII");
				}
				jp->p += 4;
				c = (char)u;
				break;
			}
			default:
				free(s);
				return jfail(jp, "bad escape in a string");
			}
		}
		if (n + 2 > cap) {
			char *t = realloc(s, cap *= 2);

			if (!t) {
				free(s);
				return -ENOMEM;
			}
			s = t;
		}
		s[n++] = c;
	}
	if (jp->p >= jp->end) {
		free(s);
		return jfail(jp, "unterminated string");
	}
	jp->p++;
	s[n] = 0;
	*out = s;
	return 0;
}

static int jvalue(struct jparse *jp, struct jv *v);

/* An array's or object's members, until @close. */
static int jmembers(struct jparse *jp, struct jv *v, char close)
{
	size_t cap = 0;
	int ret;

	jp->p++;
	jws(jp);
	if (jp->p < jp->end && *jp->p == close) {
		jp->p++;
		return 0;
	}
	for (;;) {
		char *key = NULL;

		if (v->n == cap) {
			struct jv *k;

			cap = cap ? 2 * cap : 8;
			k = realloc(v->kid, cap * sizeof(*k));
			if (!k)
				return -ENOMEM;
			v->kid = k;
			if (v->type == J_OBJ) {
				char **kk = realloc(v->key, cap * sizeof(*kk));

				if (!kk)
					return -ENOMEM;
				v->key = kk;
			}
		}
		jws(jp);
		if (v->type == J_OBJ) {
			if (jp->p >= jp->end || *jp->p != '"')
				return jfail(jp, "an object key is not a string");
			ret = jstring(jp, &key);
			if (ret)
				return ret;
			jws(jp);
			if (jp->p >= jp->end || *jp->p != ':') {
				free(key);
				return jfail(jp, "':' expected");
			}
			jp->p++;
			v->key[v->n] = key;
		}
		memset(&v->kid[v->n], 0, sizeof(v->kid[0]));
		v->n++;
		ret = jvalue(jp, &v->kid[v->n - 1]);
		if (ret)
			return ret;
		jws(jp);
		if (jp->p < jp->end && *jp->p == ',') {
			jp->p++;
			continue;
		}
		if (jp->p < jp->end && *jp->p == close) {
			jp->p++;
			return 0;
		}
		return jfail(jp, "',' or a closing bracket expected");
	}
}

static int jvalue(struct jparse *jp, struct jv *v)
{
	const char *s;
	int ret;

	jws(jp);
	if (jp->p >= jp->end)
		return jfail(jp, "unexpected end of input");
	switch (*jp->p) {
	case '{':
	case '[':
		if (++jp->depth > 32)
			return jfail(jp, "nested too deep");
		v->type = *jp->p == '{' ? J_OBJ : J_ARR;
		ret = jmembers(jp, v, *jp->p == '{' ? '}' : ']');
		jp->depth--;
		return ret;
	case '"':
		v->type = J_STR;
		return jstring(jp, &v->str);
	}
	for (s = jp->p; jp->p < jp->end && strchr("-+.eE0123456789", *jp->p);)
		jp->p++;
	if (jp->p > s) {
		v->type = J_NUM;
		v->num = s;
		v->numlen = (size_t)(jp->p - s);
		return 0;
	}
	if (jp->end - jp->p >= 4 && !strncmp(jp->p, "null", 4)) {
		jp->p += 4;
		return 0;
	}
	if (jp->end - jp->p >= 4 && !strncmp(jp->p, "true", 4)) {
		jp->p += 4;
		v->type = J_BOOL;
		v->b = true;
		return 0;
	}
	if (jp->end - jp->p >= 5 && !strncmp(jp->p, "false", 5)) {
		jp->p += 5;
		v->type = J_BOOL;
		return 0;
	}
	return jfail(jp, "not a JSON value");
}

static const struct jv *jget(const struct jv *o, const char *key)
{
	size_t i;

	if (!o || o->type != J_OBJ)
		return NULL;
	for (i = 0; i < o->n; i++)
		if (!strcmp(o->key[i], key))
			return &o->kid[i];
	return NULL;
}

static const char *jstr(const struct jv *o, const char *key)
{
	const struct jv *v = jget(o, key);

	return v && v->type == J_STR ? v->str : NULL;
}

/* An unsigned decimal integer, or (@frac3) one with up to three decimals
 * scaled by 1000: the writer's microseconds read back as exact ns. */
static int jnum(const struct jv *v, bool frac3, uint64_t *out)
{
	uint64_t x = 0;
	size_t i = 0;
	int dec = -1;

	if (!v || v->type != J_NUM)
		return -EINVAL;
	for (; i < v->numlen; i++) {
		char c = v->num[i];

		if (c == '.' && frac3 && dec < 0 && i) {
			dec = 0;
			continue;
		}
		if (c < '0' || c > '9' || dec == 3 || x > UINT64_MAX / 10 - 1)
			return -EINVAL;
		x = x * 10 + (uint64_t)(c - '0');
		if (dec >= 0)
			dec++;
	}
	if (!i || dec == 0)
		return -EINVAL;
	if (frac3)
		for (dec = dec < 0 ? 0 : dec; dec < 3; dec++)
			x *= 10;
	*out = x;
	return 0;
}

static int jkey_u64(const struct jv *o, const char *key, uint64_t *out)
{
	return jnum(jget(o, key), false, out);
}

/* ---- the trace ------------------------------------------------------ */

static const char *const tr_stamp_key[TR_NSTAMP] = {
	"submitted", "ready", "dispatched", "started", "ended", "completed",
	"consumed",
};

void tr_free(struct tr_trace *tr)
{
	size_t i;

	for (i = 0; i < tr->n; i++)
		free(tr->t[i].deps);
	free(tr->t);
	free(tr->row);
	free(tr->flow);
	jfree(&tr->root);
	free(tr->text);
	memset(tr, 0, sizeof(*tr));
}

static int tr_task(struct tr_trace *tr, const struct jv *ev, const char **why)
{
	const struct jv *a = jget(ev, "args"), *deps;
	struct tr_task *t = &tr->t[tr->n];
	uint64_t pid, tid;
	size_t i;

	memset(t, 0, sizeof(*t));
	t->name = jstr(ev, "name");
	if (!t->name || jkey_u64(a, "run", &t->run) ||
	    jkey_u64(a, "task", &t->task) || jkey_u64(a, "func", &t->func) ||
	    jkey_u64(ev, "pid", &pid) || jkey_u64(ev, "tid", &tid)) {
		*why = "a task event without name, pid, tid, run, task or func";
		return -EINVAL;
	}
	t->pid = (int64_t)pid;
	t->tid = (int64_t)tid;
	for (i = 0; i < TR_NSTAMP; i++) {
		const struct jv *s = jget(a, tr_stamp_key[i]);

		if (!s)
			continue;
		if (jnum(s, false, &t->ts[i])) {
			*why = "a task stamp is not an unsigned integer";
			return -EINVAL;
		}
		t->have |= 1u << i;
	}
	if (!(t->have & (1u << TR_STARTED)) || !(t->have & (1u << TR_ENDED)) ||
	    t->ts[TR_ENDED] < t->ts[TR_STARTED]) {
		*why = "a task event without ordered started / ended stamps";
		return -EINVAL;
	}
	deps = jget(a, "deps");
	if (deps && deps->type == J_ARR && deps->n) {
		t->deps = calloc(deps->n, sizeof(*t->deps));
		if (!t->deps)
			return -ENOMEM;
		for (i = 0; i < deps->n; i++)
			if (jnum(&deps->kid[i], false, &t->deps[t->ndeps++])) {
				*why = "a dependency is not a task id";
				return -EINVAL;
			}
	}
	tr->n++;
	return 0;
}

static int tr_event(struct tr_trace *tr, const struct jv *ev, const char **why)
{
	const char *ph = jstr(ev, "ph"), *cat = jstr(ev, "cat");
	uint64_t pid = 0, tid = 0, ts = 0, id = 0;

	if (!ph) {
		*why = "an event without \"ph\"";
		return -EINVAL;
	}
	if (!strcmp(ph, "X") && cat && !strcmp(cat, "task"))
		return tr_task(tr, ev, why);
	if (!strcmp(ph, "M") && jstr(ev, "name") &&
	    !strcmp(jstr(ev, "name"), "thread_name") &&
	    !jkey_u64(ev, "pid", &pid) && !jkey_u64(ev, "tid", &tid) &&
	    (pid == TR_PID_DEVICE || pid == TR_PID_HOST)) {
		struct tr_row *r = &tr->row[tr->nrow++];
		const char *name = jstr(jget(ev, "args"), "name");

		r->pid = (int64_t)pid;
		r->tid = (int64_t)tid;
		snprintf(r->name, sizeof(r->name), "%s", name ? name : "?");
		return 0;
	}
	if ((!strcmp(ph, "s") || !strcmp(ph, "f"))) {
		struct tr_flow *f = &tr->flow[tr->nflow];

		if (jkey_u64(ev, "id", &id) || jkey_u64(ev, "pid", &pid) ||
		    jkey_u64(ev, "tid", &tid) ||
		    jnum(jget(ev, "ts"), true, &ts)) {
			*why = "a flow event without id, pid, tid or ts";
			return -EINVAL;
		}
		*f = (struct tr_flow){ id, ts, (int64_t)pid, (int64_t)tid,
				       ph[0] == 's' };
		tr->nflow++;
	}
	return 0;
}

/* Reads @path into @tr. On error, a message on stderr names the file. */
int tr_load(const char *path, struct tr_trace *tr)
{
	struct jparse jp = { 0 };
	const struct jv *evs, *od, *fmt;
	const char *why = NULL;
	uint64_t version = 0;
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f;
	int ret;

	memset(tr, 0, sizeof(*tr));
	f = fopen(path, "r");
	if (!f) {
		ret = -errno;
		fprintf(stderr, "ptoctl trace: %s: %s\n", path, strerror(errno));
		return ret;
	}
	for (;;) {
		char *nb = realloc(buf, len + 65536);
		size_t got;

		if (!nb) {
			fclose(f);
			free(buf);
			return -ENOMEM;
		}
		buf = nb;
		got = fread(buf + len, 1, 65536, f);
		len += got;
		if (got < 65536)
			break;
	}
	fclose(f);
	tr->text = buf;
	jp.p = buf;
	jp.end = buf + len;
	ret = jvalue(&jp, &tr->root);
	jws(&jp);
	if (!ret && jp.p != jp.end)
		ret = jfail(&jp, "text after the JSON value");
	if (ret) {
		fprintf(stderr, "ptoctl trace: %s: not JSON (%s at byte %zu)\n",
			path, jp.err ? jp.err : strerror(-ret),
			(size_t)(jp.p - buf));
		goto err;
	}
	od = jget(&tr->root, "otherData");
	fmt = jget(od, "format");
	evs = jget(&tr->root, "traceEvents");
	if (!fmt || fmt->type != J_STR || strcmp(fmt->str, "pto-trace") ||
	    jkey_u64(od, "version", &version) || version != 1 || !evs ||
	    evs->type != J_ARR) {
		fprintf(stderr, "ptoctl trace: %s: not a pto run trace (version "
			"1, as `ptoctl run EXAMPLE --trace FILE` writes)\n", path);
		ret = -EINVAL;
		goto err;
	}
	jkey_u64(od, "dropped", &tr->dropped);
	tr->t = calloc(evs->n + 1, sizeof(*tr->t));
	tr->row = calloc(evs->n + 1, sizeof(*tr->row));
	tr->flow = calloc(evs->n + 1, sizeof(*tr->flow));
	ret = -ENOMEM;
	if (!tr->t || !tr->row || !tr->flow)
		goto err;
	for (i = 0; i < evs->n; i++) {
		ret = tr_event(tr, &evs->kid[i], &why);
		if (ret) {
			fprintf(stderr, "ptoctl trace: %s: event %zu: %s\n", path,
				i, why ? why : strerror(-ret));
			goto err;
		}
	}
	return 0;
err:
	tr_free(tr);
	return ret;
}

