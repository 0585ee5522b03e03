// SPDX-License-Identifier: MIT
/*
 * ptoctl dump's reader (tools/ptoctl_dump_read.c, included here, on
 * tools/ptoctl_json.c): the writer's synthetic set written and read back
 * record for record and byte for byte; the filters; the export grids
 * (contiguous, strided, truncated, overwritten, scalar, rank 3) compared
 * as text; the listing of the built ptoctl compared as text; a manifest
 * that is not one, or names bytes past args.bin, refused.
 */
#include <sys/stat.h>
#include <unistd.h>
#include "kselftest_harness.h"
#include "dump_fixture.h"
#include "../../tools/ptoctl_json.c"
#include "../../tools/ptoctl_dump_read.c"

FIXTURE(rt)
{
	struct dump_dir d;
	struct dump_set s;		/* as written (sorted by the write) */
	struct dd_dump r;		/* as read */
};

FIXTURE_SETUP(rt)
{
	ASSERT_EQ(0, dump_dir_make(&self->d));
	ASSERT_EQ(0, build(&self->s));
	ASSERT_EQ(0, dump_write(&self->s, self->d.dir));
	ASSERT_EQ(0, dd_load(self->d.dir, &self->r));
}

FIXTURE_TEARDOWN(rt)
{
	dd_free(&self->r);
	dump_set_fini(&self->s);
	dump_dir_remove(&self->d);
}

static int same_rec(struct __test_metadata *_metadata, const struct dump_rec *a,
		    const struct dump_rec *b)
{
	unsigned int i;

	EXPECT_EQ(a->task_id, b->task_id);
	EXPECT_EQ(a->nfunc, b->nfunc);
	for (i = 0; i < a->nfunc; i++)
		EXPECT_EQ(a->func_id[i], b->func_id[i]);
	EXPECT_EQ(a->arg_index, b->arg_index);
	EXPECT_EQ(a->role, b->role);
	EXPECT_EQ(a->stage, b->stage);
	EXPECT_EQ(a->kind, b->kind);
	EXPECT_EQ(a->dtype, b->dtype);
	EXPECT_EQ(a->rank, b->rank);
	for (i = 0; i < a->rank; i++) {
		EXPECT_EQ(a->shape[i], b->shape[i]);
		EXPECT_EQ(a->strides[i], b->strides[i]);
	}
	EXPECT_EQ(a->start_offset, b->start_offset);
	EXPECT_EQ(a->bin_offset, b->bin_offset);
	EXPECT_EQ(a->bin_size, b->bin_size);
	EXPECT_EQ(a->contiguous, b->contiguous);
	EXPECT_EQ(a->truncated, b->truncated);
	EXPECT_EQ(a->overwritten, b->overwritten);
	return _metadata->passed;
}

TEST_F(rt, round_trip)
{
	const struct dump_set *s = &self->s, *r = &self->r.set;
	size_t i;

	EXPECT_EQ((uint32_t)DUMP_LEVEL_FULL, r->level);
	EXPECT_EQ(2u, r->dropped);
	EXPECT_EQ(15u, r->collected);
	EXPECT_FALSE(r->unknown);
	ASSERT_EQ(s->n, r->n);
	ASSERT_EQ(s->bin_len, r->bin_len);
	EXPECT_EQ(0, memcmp(s->bin, r->bin, s->bin_len));
	for (i = 0; i < s->n; i++) {
		ASSERT_TRUE(same_rec(_metadata, &s->rec[i], &r->rec[i]))
			TH_LOG("record %zu", i);
		/* A scalar's value back to its bits (NaN: the quiet NaN). */
		if (s->rec[i].kind == DUMP_KIND_SCALAR) {
			EXPECT_EQ(s->rec[i].value, r->rec[i].value)
				TH_LOG("record %zu", i);
		}
	}
}

/* Records each filter selects, as a bitmask of their indices. */
static uint32_t selected(const struct dd_dump *d, struct dd_filter f)
{
	uint32_t m = 0;
	size_t i;

	for (i = 0; i < d->set.n; i++)
		if (dd_match(&f, &d->set.rec[i]))
			m |= 1u << i;
	return m;
}

TEST_F(rt, filters)
{
	const struct dd_filter all = { .stage = -1, .role = -1, .arg = -1 };
	struct dd_filter f = all;

	/* Sorted: 0, 1 A's tensor inputs; 2..10 its scalars (args 3..11);
	 * 11 A's output; 12 B's; 13, 14 C's inout before, after. */
	EXPECT_EQ(0x7fffu, selected(&self->r, all));
	f.has_task = true;
	f.task = TASK_C;
	EXPECT_EQ(0x6000u, selected(&self->r, f));
	f.stage = DUMP_AFTER_COMPLETION;
	EXPECT_EQ(0x4000u, selected(&self->r, f));
	f = all;
	f.stage = DUMP_AFTER_COMPLETION;
	EXPECT_EQ(0x5800u, selected(&self->r, f));
	f.role = DUMP_ROLE_OUTPUT;
	EXPECT_EQ(0x1800u, selected(&self->r, f));
	f = all;
	f.arg = 2;
	EXPECT_EQ(0x1800u, selected(&self->r, f));
	f = all;
	f.role = DUMP_ROLE_INPUT;
	f.arg = 5;
	EXPECT_EQ(0x0010u, selected(&self->r, f));
}

static char *export_of(const struct dd_dump *d, size_t i)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	if (dd_export(f, d, i)) {
		fclose(f);
		free(text);
		return NULL;
	}
	fclose(f);
	return text;
}

TEST_F(rt, export_grids)
{
	static const struct { size_t rec; const char *text; } want[] = {
		{ 0, "# record 0: task 0x0000000100000001, before_dispatch, "
		     "input, arg 0\n# tensor float32 [2, 3] strides [3, 1] "
		     "start_offset 0, 6 elements, 24 bytes\n"
		     "0.5   1 1.5\n  2 2.5   3\n" },
		{ 1, "# record 1: task 0x0000000100000001, before_dispatch, "
		     "input, arg 1\n# tensor float32 [2, 2] strides [4, 2] "
		     "start_offset 5, 4 elements, 16 bytes\n10 20\n30 40\n" },
		{ 4, "# record 4: task 0x0000000100000001, before_dispatch, "
		     "input, arg 5\n# scalar int32\n-7\n" },
		{ 5, "# record 5: task 0x0000000100000001, before_dispatch, "
		     "input, arg 6\n# scalar float32\nnull\n" },
		{ 6, "# record 6: task 0x0000000100000001, before_dispatch, "
		     "input, arg 7\n# scalar float32\n$Inf\n" },
		{ 12, "# record 12: task 0x0000000100000002, after_completion, "
		      "output, arg 2\n# tensor float32 [8] strides [1] "
		      "start_offset 0, 8 elements, 16 bytes\n# TRUNCATED: 4 of 8 "
		      "elements in the dump; -- marks the rest\n"
		      " 1  2  3  4 -- -- -- --\n" },
		{ 14, "# record 14: task 0x0000000200000000, after_completion, "
		      "inout, arg 0\n# tensor int32 [4] strides [1] start_offset "
		      "0, 4 elements, 16 bytes\n# OVERWRITTEN: the arena reused "
		      "these bytes before the host copied them; they are not the "
		      "captured values\n14 16 18 20\n" },
	};
	size_t i;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		char *got = export_of(&self->r, want[i].rec);

		ASSERT_NE(NULL, got);
		EXPECT_STREQ(want[i].text, got);
		free(got);
	}
}

TEST(export_rank3_slices)
{
	static const uint32_t shape[3] = { 2, 2, 3 };
	static const uint64_t strides[3] = { 6, 3, 1 };
	struct dump_dir dd;
	struct dump_set s;
	struct dd_dump r;
	struct dump_rec rec;
	int32_t v[12];
	char *got;
	int i;

	for (i = 0; i < 12; i++)
		v[i] = i;
	ASSERT_EQ(0, dump_dir_make(&dd));
	dump_set_init(&s, DUMP_LEVEL_FULL);
	rec = tensor(7, 0, DUMP_ROLE_OUTPUT, DUMP_AFTER_COMPLETION,
		     PTO_DTYPE_I32, 3, shape, strides);
	ASSERT_EQ(0, dump_set_add(&s, &rec, v, sizeof(v)));
	ASSERT_EQ(0, dump_write(&s, dd.dir));
	ASSERT_EQ(0, dd_load(dd.dir, &r));
	got = export_of(&r, 0);
	ASSERT_NE(NULL, got);
	EXPECT_STREQ("# record 0: task 0x0000000000000007, after_completion, "
		     "output, arg 0\n# tensor int32 [2, 2, 3] strides [6, 3, 1] "
		     "start_offset 0, 12 elements, 48 bytes\n"
		     "# [0, :, :]\n 0  1  2\n 3  4  5\n\n"
		     "# [1, :, :]\n 6  7  8\n 9 10 11\n", got);
	free(got);
	dd_free(&r);
	dump_set_fini(&s);
	dump_dir_remove(&dd);
}

/* What @p gives until its end, NUL-terminated. */
static char *read_all(FILE *p)
{
	char *out = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&out, &len);
	int c;

	if (!m)
		return NULL;
	while ((c = fgetc(p)) != EOF)
		fputc(c, m);
	fclose(m);
	return out;
}

/* tools/ptoctl from the tree's root (make's directory). */
TEST_F(rt, ptoctl_listing_and_export)
{
	char cmd[256], want[1024], *out = NULL, path[256];
	size_t len = 0;
	FILE *p;

	ASSERT_EQ(0, access("tools/ptoctl", X_OK));
	snprintf(cmd, sizeof(cmd), "tools/ptoctl dump %s --task 0x200000000",
		 self->d.dir);
	p = popen(cmd, "r");
	ASSERT_NE(NULL, p);
	out = read_all(p);
	EXPECT_EQ(0, pclose(p));
	ASSERT_NE(NULL, out);
	snprintf(want, sizeof(want),
		 "# %s: level 2 (FULL), 15 records, 2 dropped, accounting "
		 "complete\n"
		 "index  task                stage   role     arg  dtype    "
		 "shape             bytes\n"
		 "   13  0x0000000200000000  before  inout      0  int32    "
		 "[4]               16\n"
		 "   14  0x0000000200000000  after   inout      0  int32    "
		 "[4]               16  overwritten\n", self->d.sub);
	EXPECT_STREQ(want, out);
	free(out);
	/* --export: one file per selected record, the grid of dd_export(). */
	snprintf(cmd, sizeof(cmd), "tools/ptoctl dump %s --stage after "
		 "--role output --arg 2 --export >/dev/null", self->d.dir);
	EXPECT_EQ(0, system(cmd));
	snprintf(path, sizeof(path), "%s/export/0012-0x0000000100000002-after-"
		 "output-arg2.txt", self->d.sub);
	out = slurp(path, &len);
	ASSERT_NE(NULL, out);
	EXPECT_NE(NULL, strstr(out, " 1  2  3  4 -- -- -- --\n"));
	free(out);
	snprintf(path, sizeof(path), "%s/export/0011-0x0000000100000001-after-"
		 "output-arg2.txt", self->d.sub);
	EXPECT_EQ(0, access(path, F_OK));
	snprintf(path, sizeof(path), "%s/export/0000-0x0000000100000001-before-"
		 "input-arg0.txt", self->d.sub);
	EXPECT_EQ(-1, access(path, F_OK));
	snprintf(cmd, sizeof(cmd), "tools/ptoctl dump %s --stage during "
		 "2>/dev/null", self->d.dir);
	EXPECT_NE(0, system(cmd));
}

/* The reference runtime's own manifest: no "overwritten", no pto keys;
 * read all the same, its accounting unknown (it does not say). */
TEST_F(rt, reads_the_reference_form)
{
	struct dd_dump r;
	FILE *f;

	f = fopen(self->d.json, "w");
	ASSERT_NE(NULL, f);
	fputs("{\n  \"run_dir\": \"args_dump\",\n  \"dump_args_level\": 1,\n"
	      "  \"dropped_records\": 0,\n  \"bin_file\": \"args.bin\",\n"
	      "  \"args\": [\n    {\"task_id\": \"0x0000000000000009\", "
	      "\"func_id\": [3], \"arg_index\": 1, \"role\": \"output\", "
	      "\"stage\": \"after_completion\", \"kind\": \"tensor\", "
	      "\"dtype\": \"float32\", \"is_contiguous\": true, \"shape\": "
	      "[2], \"strides\": [1], \"start_offset\": 0, \"numel\": 2, "
	      "\"bin_offset\": 8, \"bin_size\": 8, \"truncated\": false}\n"
	      "  ]\n}\n", f);
	fclose(f);
	ASSERT_EQ(0, dd_load(self->d.dir, &r));
	ASSERT_EQ(1u, r.set.n);
	EXPECT_EQ(9u, r.set.rec[0].task_id);
	EXPECT_EQ(3, r.set.rec[0].func_id[0]);
	EXPECT_FALSE(r.set.rec[0].overwritten);
	EXPECT_TRUE(r.set.unknown);
	/* args.bin is the fixture's: bytes 8..15 are p_trunc[2..3]. */
	EXPECT_EQ(0, memcmp(r.set.bin + 8, p_trunc + 2, 8));
	dd_free(&r);
}

/* A manifest that is not one, and one whose record names bytes past the
 * end of args.bin, are refused; so is a directory with no dump. */
TEST_F(rt, refuses_bad_manifests)
{
	struct dd_dump r;
	FILE *f;

	EXPECT_EQ(-ENOENT, dd_load("/nonexistent/dir", &r));
	ASSERT_EQ(0, truncate(self->d.bin, 100));
	EXPECT_EQ(-EINVAL, dd_load(self->d.dir, &r));
	f = fopen(self->d.json, "w");
	ASSERT_NE(NULL, f);
	fputs("{\"run_dir\": \"elsewhere\", \"args\": []}\n", f);
	fclose(f);
	EXPECT_EQ(-EINVAL, dd_load(self->d.dir, &r));
	f = fopen(self->d.json, "w");
	ASSERT_NE(NULL, f);
	fputs("{\"run_dir\": \"args_dump\", \"args\": [\n", f);
	fclose(f);
	EXPECT_EQ(-EINVAL, dd_load(self->d.dir, &r));
}

/* Replace the first @from in @path's text by @to. */
static int rewrite(const char *path, const char *from, const char *to)
{
	char *text = NULL, *at;
	size_t len = 0;
	FILE *f;
	int ok;

	if (json_read_file(path, &text, &len))
		return -1;
	at = strstr(text, from);
	f = at ? fopen(path, "w") : NULL;
	ok = f && fwrite(text, 1, (size_t)(at - text), f) == (size_t)(at - text) &&
	     fputs(to, f) >= 0 && fputs(at + strlen(from), f) >= 0;
	if (f)
		ok = !fclose(f) && ok;
	free(text);
	return ok ? 0 : -1;
}

/* Hostile manifests: an unknown dtype, a shape past any GM, a bin_file
 * out of the directory; each refused where it is read. */
TEST_F(rt, refuses_hostile_fields)
{
	struct dd_dump r;

	ASSERT_EQ(0, rewrite(self->d.json, "\"float32\"", "\"float33\""));
	EXPECT_EQ(-EINVAL, dd_load(self->d.dir, &r));
	ASSERT_EQ(0, rewrite(self->d.json, "\"float33\"", "\"float32\""));
	ASSERT_EQ(0, dd_load(self->d.dir, &r));
	dd_free(&r);
	ASSERT_EQ(0, rewrite(self->d.json, "\"shape\": [",
			     "\"shape\": [4294967295, 4294967295, "));
	ASSERT_EQ(0, rewrite(self->d.json, "\"strides\": [",
			     "\"strides\": [1, 1, "));
	EXPECT_EQ(-EINVAL, dd_load(self->d.dir, &r));
	dump_dir_remove(&self->d);
	ASSERT_EQ(0, dump_dir_make(&self->d));
	ASSERT_EQ(0, dump_write(&self->s, self->d.dir));
	ASSERT_EQ(0, rewrite(self->d.json, "\"args.bin\"", "\"../args.bin\""));
	EXPECT_EQ(-EINVAL, dd_load(self->d.dir, &r));
}

TEST_HARNESS_MAIN
