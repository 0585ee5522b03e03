/* SPDX-License-Identifier: MIT */
/* The args dump tests' synthetic set (test_dump_json.c, test_dump_read.c):
 * records added out of the file's order, and a file read whole. */
#ifndef PTO_TEST_DUMP_FIXTURE_H
#define PTO_TEST_DUMP_FIXTURE_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dump/dump.h"

#define TASK_A 0x0000000100000001ull
#define TASK_B 0x0000000100000002ull
#define TASK_C 0x0000000200000000ull

static inline uint64_t f32_bits(float x)
{
	uint32_t u;

	memcpy(&u, &x, sizeof(u));
	return u;
}

static inline struct dump_rec tensor(uint64_t task, uint32_t arg,
				     enum dump_role role, enum dump_stage stage,
				     uint32_t dtype, unsigned int rank,
				     const uint32_t *shape,
				     const uint64_t *strides)
{
	struct dump_rec r = { .task_id = task, .nfunc = 1, .arg_index = arg,
			      .role = role, .stage = stage,
			      .kind = DUMP_KIND_TENSOR, .rank = (uint8_t)rank,
			      .dtype = dtype };

	r.func_id[0] = PTO_FUNC_ADD;
	memcpy(r.shape, shape, rank * sizeof(*shape));
	memcpy(r.strides, strides, rank * sizeof(*strides));
	r.contiguous = dump_is_contiguous(rank, shape, strides);
	return r;
}

static inline struct dump_rec scalar(uint32_t arg, uint32_t dtype,
				     uint64_t bits)
{
	struct dump_rec r = { .task_id = TASK_A, .nfunc = 1, .arg_index = arg,
			      .role = DUMP_ROLE_INPUT,
			      .stage = DUMP_BEFORE_DISPATCH,
			      .kind = DUMP_KIND_SCALAR, .dtype = dtype,
			      .value = bits, .contiguous = true };

	r.func_id[0] = PTO_FUNC_ADD;
	return r;
}

/* Payload bytes of the set, in the order they are added. */
static const float p_trunc[4] = { 1, 2, 3, 4 };
static const float p_in0[6] = { 0.5f, 1, 1.5f, 2, 2.5f, 3 };
static const float p_in1[4] = { 10, 20, 30, 40 };
static const float p_out[6] = { -1, -2, -3, -4, -5, -6 };
static const int32_t p_io0[4] = { 7, 8, 9, 10 };
static const int32_t p_io1[4] = { 14, 16, 18, 20 };

/* The set, added out of the file's order. */
static inline int build(struct dump_set *s)
{
	static const uint32_t s8[1] = { 8 }, s23[2] = { 2, 3 },
			      s22[2] = { 2, 2 }, s4[1] = { 4 };
	static const uint64_t c1[1] = { 1 }, c31[2] = { 3, 1 },
			      st42[2] = { 4, 2 };
	const struct { uint32_t arg, dtype; uint64_t bits; } scalars[] = {
		{ 9, PTO_DTYPE_F32, f32_bits(1e-7f) },
		{ 4, PTO_DTYPE_F32, f32_bits(2.0f) },
		{ 3, PTO_DTYPE_F32, f32_bits(1.5f) },
		{ 5, PTO_DTYPE_I32, 0xfffffff9u },	/* -7 */
		{ 6, PTO_DTYPE_F32, f32_bits(NAN) },
		{ 7, PTO_DTYPE_F32, f32_bits(INFINITY) },
		{ 8, PTO_DTYPE_F32, f32_bits(-INFINITY) },
		{ 10, PTO_DTYPE_F32, f32_bits(0.1f) },
		{ 11, PTO_DTYPE_F32, f32_bits(16777215.0f) },
	};
	struct dump_rec r;
	int ret = 0;
	size_t i;

	dump_set_init(s, DUMP_LEVEL_FULL);
	s->dropped = 2;
	r = tensor(TASK_B, 2, DUMP_ROLE_OUTPUT, DUMP_AFTER_COMPLETION,
		   PTO_DTYPE_F32, 1, s8, c1);
	r.truncated = true;
	ret |= dump_set_add(s, &r, p_trunc, sizeof(p_trunc));
	r = tensor(TASK_A, 0, DUMP_ROLE_INPUT, DUMP_BEFORE_DISPATCH,
		   PTO_DTYPE_F32, 2, s23, c31);
	ret |= dump_set_add(s, &r, p_in0, sizeof(p_in0));
	r = tensor(TASK_A, 1, DUMP_ROLE_INPUT, DUMP_BEFORE_DISPATCH,
		   PTO_DTYPE_F32, 2, s22, st42);
	r.start_offset = 5;
	ret |= dump_set_add(s, &r, p_in1, sizeof(p_in1));
	/* Scalars: arg_index = 3 tensors + the scalar's index. */
	for (i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++) {
		r = scalar(scalars[i].arg, scalars[i].dtype, scalars[i].bits);
		ret |= dump_set_add(s, &r, NULL, 0);
	}
	r = tensor(TASK_A, 2, DUMP_ROLE_OUTPUT, DUMP_AFTER_COMPLETION,
		   PTO_DTYPE_F32, 2, s23, c31);
	ret |= dump_set_add(s, &r, p_out, sizeof(p_out));
	/* A MIX task whose second subtask's function is not known. */
	r = tensor(TASK_C, 0, DUMP_ROLE_INOUT, DUMP_AFTER_COMPLETION,
		   PTO_DTYPE_I32, 1, s4, c1);
	r.nfunc = 3;
	r.func_id[0] = 5;
	r.func_id[1] = DUMP_FUNC_UNKNOWN;
	r.func_id[2] = 6;
	r.overwritten = true;
	ret |= dump_set_add(s, &r, p_io1, sizeof(p_io1));
	r.stage = DUMP_BEFORE_DISPATCH;
	r.overwritten = false;
	ret |= dump_set_add(s, &r, p_io0, sizeof(p_io0));
	return ret;
}

/* The file at @path, NUL-terminated, its length in *@len; NULL if none. */
static inline char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf) {
		buf[n] = 0;
		*len = (size_t)n;
	}
	return buf;
}

/* args_dump.json of @s as text (malloc'd), NULL on error. */
static inline char *json_of(struct dump_set *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	if (dump_write_json(s, f)) {
		fclose(f);
		free(text);
		return NULL;
	}
	fclose(f);
	return text;
}

/* A fresh directory for dump_write() and the paths it writes. */
struct dump_dir {
	char dir[64], sub[96], json[128], bin[128];
};

static inline int dump_dir_make(struct dump_dir *d)
{
	snprintf(d->dir, sizeof(d->dir), "/tmp/pto-dump-XXXXXX");
	if (!mkdtemp(d->dir))
		return -1;
	snprintf(d->sub, sizeof(d->sub), "%s/args_dump", d->dir);
	snprintf(d->json, sizeof(d->json), "%s/args_dump.json", d->sub);
	snprintf(d->bin, sizeof(d->bin), "%s/args.bin", d->sub);
	return 0;
}

static inline void dump_dir_remove(const struct dump_dir *d)
{
	char cmd[96];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->dir);
	if (system(cmd))
		fprintf(stderr, "# could not remove %s\n", d->dir);
}

#endif /* PTO_TEST_DUMP_FIXTURE_H */
