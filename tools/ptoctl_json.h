/* SPDX-License-Identifier: MIT */
/* ptoctl's JSON reader (ptoctl_json.c), for the files the library writes:
 * run traces (ptoctl_trace_read.c) and args dumps (ptoctl_dump.c). A
 * whole document is parsed into a tree of values; strings are unescaped
 * (ASCII escapes only), numbers kept as their text. */
#ifndef PTOCTL_JSON_H
#define PTOCTL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A parsed JSON value. */
enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jv {
	enum jtype type;
	const char *num;	/* J_NUM: its text in the input */
	size_t numlen;
	char *str;		/* J_STR: unescaped */
	bool b;
	size_t n;		/* J_ARR / J_OBJ members */
	struct jv *kid;
	char **key;		/* J_OBJ */
};

/* The file at @path, whole, in a malloc'd *@text of *@len bytes (NUL
 * after them). 0 or -errno. */
int json_read_file(const char *path, char **text, size_t *len);
/* One JSON value filling @text[0..@len) into *@root (numbers point into
 * @text, which must outlive it). On error -EINVAL or -ENOMEM, with *@why
 * what is wrong (NULL if out of memory) and *@at its byte offset; *@root
 * is then released. */
int json_parse(const char *text, size_t len, struct jv *root,
	       const char **why, size_t *at);
/* Releases what json_parse() allocated below @v. */
void jfree(struct jv *v);

/* @o's member @key, NULL if @o is not an object or has none. */
const struct jv *jget(const struct jv *o, const char *key);
/* @o's member @key if a string, else NULL. */
const char *jstr(const struct jv *o, const char *key);
/* An unsigned decimal integer, or (@frac3) one with up to three decimals
 * scaled by 1000: the trace writer's microseconds read back as exact ns. */
int jnum(const struct jv *v, bool frac3, uint64_t *out);
/* A signed decimal integer. 0 or -EINVAL. */
int jint(const struct jv *v, int64_t *out);
/* jnum(jget(@o, @key), false, @out). */
int jkey_u64(const struct jv *o, const char *key, uint64_t *out);

#endif /* PTOCTL_JSON_H */
