// SPDX-License-Identifier: MIT
/*
 * ptoctl dump's reader: an args dump's manifest (args_dump.json, parsed
 * by ptoctl_json.c) and its payloads (args.bin) read back into the
 * library's records (lib/dump/dump.h); the listing and one record's
 * values as a grid.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "ptoctl_dump.h"

/* A tensor lies in one device's GM: at most 4 GiB, so 2^32 elements. */
#define DD_MAX_NUMEL (1ULL << 32)

void dd_free(struct dd_dump *d)
{
	free(d->value);
	dump_set_fini(&d->set);
	jfree(&d->root);
	free(d->text);
	memset(d, 0, sizeof(*d));
}

/* @v as an array of at most @max unsigned integers into @out. */
static int dims(const struct jv *v, unsigned int max, uint64_t *out,
		unsigned int *n)
{
	size_t i;

	if (!v || v->type != J_ARR || v->n > max)
		return -EINVAL;
	for (i = 0; i < v->n; i++)
		if (jnum(&v->kid[i], false, &out[i]))
			return -EINVAL;
	*n = (unsigned int)v->n;
	return 0;
}

static int name_of(const struct jv *o, const char *key,
		   const char *(*names)(unsigned int), unsigned int n)
{
	const char *s = jstr(o, key);

	return s ? dump_name_index(names, n, s) : -1;
}

static int flag(const struct jv *o, const char *key, bool *out)
{
	const struct jv *v = jget(o, key);

	if (!v || v->type != J_BOOL)
		return -EINVAL;
	*out = v->b;
	return 0;
}

/* A scalar's value back to its bits (an f32 NaN as the quiet NaN); the
 * manifest's value itself is kept for the export. */
static void scalar_bits(const struct jv *v, struct dump_rec *r)
{
	uint32_t u;
	int64_t i;
	float x;

	if (r->dtype == PTO_DTYPE_F32) {
		if (v->type == J_NUM)
			x = strtof(v->num, NULL);
		else if (v->type == J_STR && !strcmp(v->str, "$Inf"))
			x = INFINITY;
		else if (v->type == J_STR && !strcmp(v->str, "-$Inf"))
			x = -INFINITY;
		else
			x = NAN;
		memcpy(&u, &x, sizeof(u));
		r->value = u;
	} else if (!jint(v, &i)) {
		r->value = r->dtype == PTO_DTYPE_I32 ? (uint32_t)i : (uint64_t)i;
	}
}

/* One record of "args"; "overwritten" is pto's, so a manifest of the
 * reference runtime, which has none, reads as never overwritten. */
static int one_rec(const struct jv *o, struct dump_rec *r,
		   const struct jv **value, const char **why)
{
	const char *task = jstr(o, "task_id");
	const struct jv *func = jget(o, "func_id"), *val = jget(o, "value");
	uint64_t shape[DUMP_MAX_RANK], strides[DUMP_MAX_RANK], arg, numel;
	unsigned int rank = 0, nstr = 0, i;
	int role, stage, kind;
	char *end = NULL;

	memset(r, 0, sizeof(*r));
	*why = "a record without task_id, func_id or arg_index";
	if (!task || strncmp(task, "0x", 2) || !func || func->type != J_ARR ||
	    !func->n || func->n > DUMP_MAX_FUNCS ||
	    jkey_u64(o, "arg_index", &arg) || arg > UINT32_MAX)
		return -EINVAL;
	r->task_id = strtoull(task + 2, &end, 16);
	if (!end || *end || strlen(task) != 18)
		return -EINVAL;
	for (i = 0; i < func->n; i++) {
		int64_t f;

		if (jint(&func->kid[i], &f) || f < INT32_MIN || f > INT32_MAX)
			return -EINVAL;
		r->func_id[i] = (int32_t)f;
	}
	r->nfunc = (uint32_t)func->n;
	r->arg_index = (uint32_t)arg;
	role = name_of(o, "role", dump_role_name, DUMP_ROLE_NR);
	stage = name_of(o, "stage", dump_stage_name, DUMP_STAGE_NR);
	kind = name_of(o, "kind", dump_kind_name, DUMP_KIND_NR);
	*why = "a record's role, stage, kind or dtype is not one of its names";
	if (role < 0 || stage < 0 || kind < 0 || !jstr(o, "dtype"))
		return -EINVAL;
	r->role = (uint8_t)role;
	r->stage = (uint8_t)stage;
	r->kind = (uint8_t)kind;
	r->dtype = dump_dtype_of(jstr(o, "dtype"));
	if (!r->dtype)
		return -EINVAL;
	*why = "a record's layout, payload or flags are missing or malformed";
	if (dims(jget(o, "shape"), DUMP_MAX_RANK, shape, &rank) ||
	    dims(jget(o, "strides"), DUMP_MAX_RANK, strides, &nstr) ||
	    nstr != rank || jkey_u64(o, "start_offset", &r->start_offset) ||
	    jkey_u64(o, "bin_offset", &r->bin_offset) ||
	    jkey_u64(o, "bin_size", &r->bin_size) ||
	    flag(o, "is_contiguous", &r->contiguous) ||
	    flag(o, "truncated", &r->truncated) ||
	    (jget(o, "overwritten") && flag(o, "overwritten", &r->overwritten)))
		return -EINVAL;
	r->rank = (uint8_t)rank;
	for (i = 0; i < rank; i++) {
		if (shape[i] > UINT32_MAX)
			return -EINVAL;
		r->shape[i] = (uint32_t)shape[i];
		r->strides[i] = strides[i];
	}
	*why = "a record's shape has more elements than any dump holds";
	for (i = 0, numel = 1; i < rank; i++)
		if (__builtin_mul_overflow(numel, shape[i], &numel) ||
		    numel > DD_MAX_NUMEL)
			return -EINVAL;
	*value = NULL;
	if (kind == DUMP_KIND_SCALAR) {
		*why = "a scalar record without a value";
		if (!val)
			return -EINVAL;
		scalar_bits(val, r);
		*value = val;
	}
	return 0;
}

/* The manifest's top level: the level, the lanes' counts and records. */
static int manifest(struct dd_dump *d, const char **why)
{
	const struct jv *args = jget(&d->root, "args"), *bin;
	const char *acct = jstr(&d->root, "accounting");
	uint64_t level;
	size_t i;
	int ret;

	*why = "not an args dump manifest (no run_dir \"args_dump\", "
	       "dump_args_level or args)";
	if (!jstr(&d->root, "run_dir") ||
	    strcmp(jstr(&d->root, "run_dir"), "args_dump") ||
	    jkey_u64(&d->root, "dump_args_level", &level) ||
	    level >= DUMP_LEVEL_NR || !args || args->type != J_ARR)
		return -EINVAL;
	d->set.level = (uint32_t)level;
	jkey_u64(&d->root, "dropped_records", &d->set.dropped);
	d->set.unknown = !acct || strcmp(acct, "complete");
	bin = jget(&d->root, "bin_file");
	d->value = calloc(args->n + 1, sizeof(*d->value));
	d->set.rec = calloc(args->n + 1, sizeof(*d->set.rec));
	if (!d->value || !d->set.rec)
		return -ENOMEM;
	d->set.cap = args->n + 1;
	for (i = 0; i < args->n; i++) {
		struct dump_rec *r = &d->set.rec[i];

		ret = one_rec(&args->kid[i], r, &d->value[i], why);
		if (ret)
			return ret;
		*why = "a record's payload lies outside args.bin";
		if (r->bin_size && (!bin || bin->type != J_STR ||
				    r->bin_offset > d->set.bin_len ||
				    r->bin_size > d->set.bin_len - r->bin_offset))
			return -EINVAL;
		d->set.n++;
	}
	d->set.collected = d->set.n;
	jkey_u64(&d->root, "collected", &d->set.collected);
	return 0;
}

int dd_load(const char *dir, struct dd_dump *d)
{
	char path[4096];
	const char *why = NULL;
	size_t len = 0, at = 0;
	struct stat st;
	int ret;

	memset(d, 0, sizeof(*d));
	snprintf(d->dir, sizeof(d->dir), "%s/args_dump", dir);
	snprintf(path, sizeof(path), "%s/args_dump.json", d->dir);
	if (stat(path, &st))
		snprintf(d->dir, sizeof(d->dir), "%s", dir);
	snprintf(path, sizeof(path), "%s/args_dump.json", d->dir);
	ret = json_read_file(path, &d->text, &len);
	if (ret) {
		fprintf(stderr, "ptoctl dump: %s: %s\n", path, strerror(-ret));
		return ret;
	}
	ret = json_parse(d->text, len, &d->root, &why, &at);
	if (ret) {
		fprintf(stderr, "ptoctl dump: %s: not JSON (%s at byte %zu)\n",
			path, why ? why : strerror(-ret), at);
		goto err;
	}
	if (jstr(&d->root, "bin_file")) {
		const char *name = jstr(&d->root, "bin_file");
		char bin[4096], *bytes = NULL;

		/* A file beside the manifest, never a path out of DIR. */
		if (!*name || strchr(name, '/') || !strcmp(name, "..")) {
			fprintf(stderr, "ptoctl dump: %s: bin_file \"%s\" is not "
				"a file name in %s\n", path, name, d->dir);
			ret = -EINVAL;
			goto err;
		}

		snprintf(bin, sizeof(bin), "%s/%s", d->dir, name);
		ret = json_read_file(bin, &bytes, &d->set.bin_len);
		d->set.bin = (uint8_t *)bytes;
		if (ret) {
			fprintf(stderr, "ptoctl dump: %s: %s\n", bin,
				strerror(-ret));
			goto err;
		}
	}
	ret = manifest(d, &why);
	if (ret) {
		fprintf(stderr, "ptoctl dump: %s: %s\n", path,
			ret == -ENOMEM ? strerror(ENOMEM) : why);
		goto err;
	}
	return 0;
err:
	dd_free(d);
	return ret;
}

bool dd_match(const struct dd_filter *f, const struct dump_rec *r)
{
	return (!f->has_task || r->task_id == f->task) &&
	       (f->stage < 0 || r->stage == f->stage) &&
	       (f->role < 0 || r->role == f->role) &&
	       (f->arg < 0 || r->arg_index == (uint64_t)f->arg);
}

static void shape_text(char *buf, size_t size, const struct dump_rec *r)
{
	size_t n = 0;
	unsigned int i;

	n += (size_t)snprintf(buf, size, "[");
	for (i = 0; i < r->rank && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%" PRIu32,
				      i ? ", " : "", r->shape[i]);
	if (n < size)
		snprintf(buf + n, size - n, "]");
}

static const char *const level_names[DUMP_LEVEL_NR] = {
	"OFF", "PARTIAL", "FULL", "HYBRID",
};

void dd_list(FILE *out, const struct dd_dump *d, const struct dd_filter *f)
{
	const struct dump_set *s = &d->set;
	char shape[64];
	size_t i;

	fprintf(out, "# %s: level %" PRIu32 " (%s), %zu records, %" PRIu64
		" dropped, accounting %s\n", d->dir, s->level,
		level_names[s->level], s->n, s->dropped,
		s->unknown ? "unknown" : "complete");
	fprintf(out, "%5s  %-18s  %-6s  %-6s  %4s  %-7s  %-16s  %s\n", "index",
		"task", "stage", "role", "arg", "dtype", "shape", "bytes");
	for (i = 0; i < s->n; i++) {
		const struct dump_rec *r = &s->rec[i];
		const char *dtype = dump_dtype_name(r->dtype);

		if (!dd_match(f, r))
			continue;
		shape_text(shape, sizeof(shape), r);
		fprintf(out, "%5zu  0x%016" PRIx64 "  %-6s  %-6s  %4" PRIu32
			"  %-7s  %-16s  %" PRIu64 "%s%s\n", i, r->task_id,
			r->stage == DUMP_BEFORE_DISPATCH ? "before" : "after",
			dump_role_name(r->role), r->arg_index,
			dtype ? dtype : "unknown",
			r->kind == DUMP_KIND_SCALAR ? "scalar" : shape,
			r->bin_size, r->truncated ? "  truncated" : "",
			r->overwritten ? "  overwritten" : "");
	}
}

/* Element @k of a payload as text: an f32 in full (9 digits). */
static void elem_text(char *buf, size_t size, const struct dump_rec *r,
		      const uint8_t *p, uint64_t k)
{
	uint32_t u;
	float x;

	memcpy(&u, p + k * 4, 4);
	if (r->dtype == PTO_DTYPE_F32) {
		memcpy(&x, &u, sizeof(x));
		snprintf(buf, size, "%.9g", (double)x);
	} else {
		snprintf(buf, size, "%" PRId32, (int32_t)u);
	}
}

/*
 * The grid: the innermost dimension across, one row per index of the
 * others; above rank 2 a "# [i, j, :, :]" line before each 2-D slice.
 * Elements past a truncated payload's end are "--".
 */
static void grid(FILE *out, const struct dump_rec *r, const uint8_t *p,
		 uint64_t have)
{
	uint64_t numel = dump_numel(r->rank, r->shape), k;
	uint32_t cols = r->rank ? r->shape[r->rank - 1] : 1;
	uint32_t rows2 = r->rank >= 2 ? r->shape[r->rank - 2] : 1;
	char buf[32];
	int width = 2;

	for (k = 0; k < have; k++) {
		elem_text(buf, sizeof(buf), r, p, k);
		if ((int)strlen(buf) > width)
			width = (int)strlen(buf);
	}
	for (k = 0; k < numel; k++) {
		if (r->rank > 2 && k % ((uint64_t)cols * rows2) == 0) {
			uint64_t rest = k / ((uint64_t)cols * rows2);
			unsigned int dd, lead = r->rank - 2;
			uint64_t idx[DUMP_MAX_RANK];

			for (dd = lead; dd-- > 0;) {
				idx[dd] = rest % r->shape[dd];
				rest /= r->shape[dd];
			}
			fprintf(out, "%s# [", k ? "\n" : "");
			for (dd = 0; dd < lead; dd++)
				fprintf(out, "%" PRIu64 ", ", idx[dd]);
			fprintf(out, ":, :]\n");
		}
		if (k < have)
			elem_text(buf, sizeof(buf), r, p, k);
		else
			snprintf(buf, sizeof(buf), "--");
		fprintf(out, "%s%*s", k % cols ? " " : "", width, buf);
		if (k % cols == cols - 1)
			fputc('\n', out);
	}
}

int dd_export(FILE *out, const struct dd_dump *d, size_t i)
{
	const struct dump_rec *r = &d->set.rec[i];
	const char *dtype = dump_dtype_name(r->dtype);
	size_t es = dump_dtype_size(r->dtype);
	uint64_t numel = dump_numel(r->rank, r->shape);
	char shape[64];
	unsigned int k;

	fprintf(out, "# record %zu: task 0x%016" PRIx64 ", %s, %s, arg %" PRIu32
		"\n# %s %s", i, r->task_id, dump_stage_name(r->stage),
		dump_role_name(r->role), r->arg_index,
		dump_kind_name(r->kind), dtype ? dtype : "unknown");
	if (r->kind == DUMP_KIND_TENSOR) {
		shape_text(shape, sizeof(shape), r);
		fprintf(out, " %s strides [", shape);
		for (k = 0; k < r->rank; k++)
			fprintf(out, "%s%" PRIu64, k ? ", " : "", r->strides[k]);
		fprintf(out, "] start_offset %" PRIu64 ", %" PRIu64
			" elements, %" PRIu64 " bytes", r->start_offset, numel,
			r->bin_size);
	}
	fputc('\n', out);
	if (r->overwritten)
		fprintf(out, "# OVERWRITTEN: the arena reused these bytes before "
			"the host copied them; they are not the captured values\n");
	if (r->kind == DUMP_KIND_SCALAR) {
		const struct jv *v = d->value[i];

		if (v->type == J_NUM)
			fprintf(out, "%.*s\n", (int)v->numlen, v->num);
		else
			fprintf(out, "%s\n", v->type == J_STR ? v->str : "null");
	} else if (!r->bin_size) {
		fprintf(out, "# no payload\n");
	} else if (!es) {
		fprintf(out, "# no element size for this dtype\n");
	} else {
		uint64_t have = r->bin_size / es;

		if (have > numel)
			have = numel;
		if (r->truncated || have < numel)
			fprintf(out, "# TRUNCATED: %" PRIu64 " of %" PRIu64
				" elements in the dump; -- marks the rest\n",
				have, numel);
		grid(out, r, d->set.bin + r->bin_offset, have);
	}
	return ferror(out) ? -EIO : 0;
}

