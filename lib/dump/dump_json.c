// SPDX-License-Identifier: MIT
/*
 * The args dump's files, in the reference runtime's format so the tools
 * its users have read pto's dumps (Documentation/dump-files.md): the
 * manifest args_dump.json, one line per record in (task_id, stage,
 * arg_index, role) order, and args.bin, each payload's logically
 * contiguous bytes with no header or padding. Every string the file holds
 * comes from the name tables, so nothing needs escaping.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "dump/dump.h"

#define RUN_DIR "args_dump"
#define JSON_FILE "args_dump.json"
#define BIN_FILE "args.bin"

static int cmp_rec(const void *a, const void *b)
{
	const struct dump_rec *x = a, *y = b;

	if (x->task_id != y->task_id)
		return x->task_id < y->task_id ? -1 : 1;
	if (x->stage != y->stage)
		return x->stage < y->stage ? -1 : 1;
	if (x->arg_index != y->arg_index)
		return x->arg_index < y->arg_index ? -1 : 1;
	return (int)x->role - (int)y->role;
}

void dump_set_sort(struct dump_set *s)
{
	if (s->n)
		qsort(s->rec, s->n, sizeof(*s->rec), cmp_rec);
}

/* A float32 in the fewest significant digits, at least the reference
 * runtime's six, that read back as the same value. */
static void put_f32(char *buf, size_t size, float x)
{
	int p;

	for (p = 6; p < 9; p++) {
		snprintf(buf, size, "%.*g", p, (double)x);
		if (strtof(buf, NULL) == x)
			return;
	}
	snprintf(buf, size, "%.9g", (double)x);
}

/* A scalar's decoded value: an f32 with ".0" when it reads as an
 * integer, NaN as null and the infinities as the strings "$Inf" /
 * "-$Inf", JSON having none of them. */
static void put_value(FILE *f, const struct dump_rec *r)
{
	char buf[32];
	uint32_t lo = (uint32_t)r->value;
	float x;

	switch (r->dtype) {
	case PTO_DTYPE_F32:
		memcpy(&x, &lo, sizeof(x));
		if (isnan(x)) {
			fputs(", \"value\": null", f);
		} else if (isinf(x)) {
			fputs(x < 0 ? ", \"value\": \"-$Inf\"" :
			      ", \"value\": \"$Inf\"", f);
		} else {
			put_f32(buf, sizeof(buf), x);
			fprintf(f, ", \"value\": %s%s", buf,
				strpbrk(buf, ".e") ? "" : ".0");
		}
		break;
	case PTO_DTYPE_I32:
		fprintf(f, ", \"value\": %" PRId32, (int32_t)lo);
		break;
	default:
		fprintf(f, ", \"value\": %" PRIu64, r->value);
	}
}

static void put_dims(FILE *f, const char *key, unsigned int n,
		     const uint64_t *v)
{
	unsigned int i;

	fprintf(f, ", \"%s\": [", key);
	for (i = 0; i < n; i++)
		fprintf(f, "%s%" PRIu64, i ? ", " : "", v[i]);
	fputc(']', f);
}

static const char *tf(bool b)
{
	return b ? "true" : "false";
}

static void put_rec(FILE *f, const struct dump_rec *r)
{
	const char *dtype = dump_dtype_name(r->dtype);
	unsigned int i, rank = r->rank > DUMP_MAX_RANK ? DUMP_MAX_RANK : r->rank;
	uint64_t shape[DUMP_MAX_RANK];

	for (i = 0; i < rank; i++)
		shape[i] = r->shape[i];

	fprintf(f, "    {\"task_id\": \"0x%016" PRIx64 "\", \"func_id\": [",
		r->task_id);
	for (i = 0; i < r->nfunc && i < DUMP_MAX_FUNCS; i++)
		fprintf(f, "%s%" PRId32, i ? ", " : "", r->func_id[i]);
	fprintf(f, "], \"arg_index\": %" PRIu32 ", \"role\": \"%s\", "
		"\"stage\": \"%s\", \"kind\": \"%s\", \"dtype\": \"%s\"",
		r->arg_index, dump_role_name(r->role) ?: "unknown",
		dump_stage_name(r->stage) ?: "unknown",
		dump_kind_name(r->kind) ?: "unknown", dtype ? dtype : "unknown");
	if (r->kind == DUMP_KIND_SCALAR)
		put_value(f, r);
	fprintf(f, ", \"is_contiguous\": %s", tf(r->contiguous));
	put_dims(f, "shape", rank, shape);
	put_dims(f, "strides", rank, r->strides);
	fprintf(f, ", \"start_offset\": %" PRIu64 ", \"numel\": %" PRIu64
		", \"bin_offset\": %" PRIu64 ", \"bin_size\": %" PRIu64
		", \"truncated\": %s, \"overwritten\": %s}", r->start_offset,
		dump_numel(rank, r->shape), r->bin_offset, r->bin_size,
		tf(r->truncated), tf(r->overwritten));
}

int dump_write_json(struct dump_set *s, FILE *f)
{
	uint64_t stage[DUMP_STAGE_NR] = { 0 }, role[DUMP_ROLE_NR] = { 0 };
	uint64_t truncated = 0, overwritten = 0;
	size_t i;

	dump_set_sort(s);
	for (i = 0; i < s->n; i++) {
		const struct dump_rec *r = &s->rec[i];

		if (r->stage < DUMP_STAGE_NR)
			stage[r->stage]++;
		if (r->role < DUMP_ROLE_NR)
			role[r->role]++;
		truncated += r->truncated;
		overwritten += r->overwritten;
	}
	fprintf(f, "{\n  \"run_dir\": \"" RUN_DIR "\",\n  \"bin_format\": {\n"
		"    \"type\": \"logical_contiguous\",\n"
		"    \"byte_order\": \"little_endian\"\n  },\n"
		"  \"dump_args_level\": %" PRIu32 ",\n  \"total_args\": %zu,\n"
		"  \"before_dispatch\": %" PRIu64 ",\n"
		"  \"after_completion\": %" PRIu64 ",\n"
		"  \"input_args\": %" PRIu64 ",\n  \"output_args\": %" PRIu64
		",\n  \"inout_args\": %" PRIu64 ",\n  \"truncated_args\": %"
		PRIu64 ",\n  \"dropped_records\": %" PRIu64 ",\n"
		"  \"dropped_overwrite\": %" PRIu64 ",\n  \"bin_file\": %s,\n"
		"  \"args\": [", s->level, s->n, stage[DUMP_BEFORE_DISPATCH],
		stage[DUMP_AFTER_COMPLETION], role[DUMP_ROLE_INPUT],
		role[DUMP_ROLE_OUTPUT], role[DUMP_ROLE_INOUT], truncated,
		s->dropped, overwritten,
		s->bin_len ? "\"" BIN_FILE "\"" : "null");
	for (i = 0; i < s->n; i++) {
		fputs(i ? ",\n" : "\n", f);
		put_rec(f, &s->rec[i]);
	}
	fprintf(f, "%s],\n  \"collected\": %" PRIu64 ",\n  \"accounting\": "
		"\"%s\"\n}\n", s->n ? "\n  " : "", s->collected,
		s->unknown ? "unknown" : "complete");
	return ferror(f) ? -EIO : 0;
}

/* @path written through @path.tmp: a reader never sees half a file. */
static int write_file(const char *path, struct dump_set *s, bool json)
{
	char tmp[4200];
	FILE *f;
	int ret = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	if (json)
		ret = dump_write_json(s, f);
	else if (fwrite(s->bin, 1, s->bin_len, f) != s->bin_len)
		ret = -EIO;
	if (fclose(f) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

int dump_write(struct dump_set *s, const char *dir)
{
	char d[4000], path[4096];
	int ret;

	if (snprintf(d, sizeof(d), "%s/" RUN_DIR, dir) >= (int)sizeof(d))
		return -ENAMETOOLONG;
	/* DIR itself too, one level: a run's fresh --dump-dir. */
	if (mkdir(dir, 0777) && errno != EEXIST)
		return -errno;
	if (mkdir(d, 0777) && errno != EEXIST)
		return -errno;
	snprintf(path, sizeof(path), "%s/" BIN_FILE, d);
	if (s->bin_len)
		ret = write_file(path, s, false);
	else
		ret = unlink(path) && errno != ENOENT ? -errno : 0;
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "%s/" JSON_FILE, d);
	return write_file(path, s, true);
}
