// SPDX-License-Identifier: MIT
/*
 * ptoctl trace's reader: the file parsed by ptoctl_json.c, then only what
 * the library's trace writer emits (lib/trace/trace_json.c:
 * otherData.format "pto-trace", version 1); anything else is refused with
 * a message.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "ptoctl_json.h"
#include "ptoctl_trace.h"

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
	const struct jv *evs, *od, *fmt;
	const char *why = NULL;
	uint64_t version = 0;
	size_t len = 0, i, at = 0;
	int ret;

	memset(tr, 0, sizeof(*tr));
	ret = json_read_file(path, &tr->text, &len);
	if (ret) {
		fprintf(stderr, "ptoctl trace: %s: %s\n", path, strerror(-ret));
		return ret;
	}
	ret = json_parse(tr->text, len, &tr->root, &why, &at);
	if (ret) {
		fprintf(stderr, "ptoctl trace: %s: not JSON (%s at byte %zu)\n",
			path, why ? why : strerror(-ret), at);
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

