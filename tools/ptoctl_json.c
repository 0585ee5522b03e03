// SPDX-License-Identifier: MIT
/*
 * ptoctl's JSON reader: a recursive-descent parser of one document into a
 * tree (depth bounded), and the lookups its readers use.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ptoctl_json.h"

struct jparse {
	const char *p, *end;
	const char *err;
	int depth;
};

void jfree(struct jv *v)
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

const struct jv *jget(const struct jv *o, const char *key)
{
	size_t i;

	if (!o || o->type != J_OBJ)
		return NULL;
	for (i = 0; i < o->n; i++)
		if (!strcmp(o->key[i], key))
			return &o->kid[i];
	return NULL;
}

const char *jstr(const struct jv *o, const char *key)
{
	const struct jv *v = jget(o, key);

	return v && v->type == J_STR ? v->str : NULL;
}

int jnum(const struct jv *v, bool frac3, uint64_t *out)
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

int jkey_u64(const struct jv *o, const char *key, uint64_t *out)
{
	return jnum(jget(o, key), false, out);
}

int jint(const struct jv *v, int64_t *out)
{
	struct jv mag;
	uint64_t x;
	bool neg;

	if (!v || v->type != J_NUM)
		return -EINVAL;
	mag = *v;
	neg = mag.numlen && mag.num[0] == '-';
	if (neg) {
		mag.num++;
		mag.numlen--;
	}
	if (jnum(&mag, false, &x) || x > (uint64_t)INT64_MAX + neg)
		return -EINVAL;
	*out = neg ? (int64_t)(0 - x) : (int64_t)x;
	return 0;
}

int json_parse(const char *text, size_t len, struct jv *root,
	       const char **why, size_t *at)
{
	struct jparse jp = { .p = text, .end = text + len };
	int ret;

	memset(root, 0, sizeof(*root));
	ret = jvalue(&jp, root);
	jws(&jp);
	if (!ret && jp.p != jp.end)
		ret = jfail(&jp, "text after the JSON value");
	*why = jp.err;
	*at = (size_t)(jp.p - text);
	if (ret) {
		jfree(root);
		memset(root, 0, sizeof(*root));
	}
	return ret;
}

int json_read_file(const char *path, char **text, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return -errno;
	for (;;) {
		char *nb = realloc(buf, n + 65536 + 1);
		size_t got;

		if (!nb) {
			fclose(f);
			free(buf);
			return -ENOMEM;
		}
		buf = nb;
		got = fread(buf + n, 1, 65536, f);
		n += got;
		if (got < 65536)
			break;
	}
	if (ferror(f)) {
		fclose(f);
		free(buf);
		return -EIO;
	}
	fclose(f);
	buf[n] = 0;
	*text = buf;
	*len = n;
	return 0;
}
