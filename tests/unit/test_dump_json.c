// SPDX-License-Identifier: MIT
/*
 * The args dump's writer (lib/dump/): a synthetic set of records - a
 * contiguous and a strided tensor, a scalar of each dtype and the f32
 * values JSON cannot spell, a truncated and an overwritten payload, an
 * unknown subtask - written as args_dump.json and compared as text, and
 * args.bin compared byte for byte; a set with no payload names no
 * bin_file and leaves no args.bin; a run whose lane never settled still
 * writes its records, its accounting unknown.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "kselftest_harness.h"
#include "dump/dump.h"

#define TASK_A 0x0000000100000001ull
#define TASK_B 0x0000000100000002ull
#define TASK_C 0x0000000200000000ull

static uint64_t f32_bits(float x)
{
	uint32_t u;

	memcpy(&u, &x, sizeof(u));
	return u;
}

static struct dump_rec tensor(uint64_t task, uint32_t arg, enum dump_role role,
			      enum dump_stage stage, uint32_t dtype,
			      unsigned int rank, const uint32_t *shape,
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

static struct dump_rec scalar(uint32_t arg, uint32_t dtype, uint64_t bits)
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
static int build(struct dump_set *s)
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

#define REC(task, func, arg, role, stage, rest) \
	"    {\"task_id\": \"" task "\", \"func_id\": [" func "], " \
	"\"arg_index\": " arg ", \"role\": \"" role "\", \"stage\": \"" \
	stage "\", " rest "}"
#define SCALAR(arg, dtype, value) \
	REC("0x0000000100000001", "1", arg, "input", "before_dispatch", \
	    "\"kind\": \"scalar\", \"dtype\": \"" dtype "\", \"value\": " \
	    value ", \"is_contiguous\": true, \"shape\": [], \"strides\": [], " \
	    "\"start_offset\": 0, \"numel\": 1, \"bin_offset\": 0, " \
	    "\"bin_size\": 0, \"truncated\": false, \"overwritten\": false")

static const char want_json[] =
	"{\n"
	"  \"run_dir\": \"args_dump\",\n"
	"  \"bin_format\": {\n"
	"    \"type\": \"logical_contiguous\",\n"
	"    \"byte_order\": \"little_endian\"\n"
	"  },\n"
	"  \"dump_args_level\": 2,\n"
	"  \"total_args\": 13,\n"
	"  \"before_dispatch\": 10,\n"
	"  \"after_completion\": 3,\n"
	"  \"input_args\": 9,\n"
	"  \"output_args\": 2,\n"
	"  \"inout_args\": 2,\n"
	"  \"truncated_args\": 1,\n"
	"  \"dropped_records\": 2,\n"
	"  \"dropped_overwrite\": 1,\n"
	"  \"bin_file\": \"args.bin\",\n"
	"  \"args\": [\n"
	REC("0x0000000100000001", "1", "0", "input", "before_dispatch",
	    "\"kind\": \"tensor\", \"dtype\": \"float32\", \"is_contiguous\": "
	    "true, \"shape\": [2, 3], \"strides\": [3, 1], \"start_offset\": 0, "
	    "\"numel\": 6, \"bin_offset\": 16, \"bin_size\": 24, \"truncated\": "
	    "false, \"overwritten\": false") ",\n"
	REC("0x0000000100000001", "1", "1", "input", "before_dispatch",
	    "\"kind\": \"tensor\", \"dtype\": \"float32\", \"is_contiguous\": "
	    "false, \"shape\": [2, 2], \"strides\": [4, 2], \"start_offset\": 5, "
	    "\"numel\": 4, \"bin_offset\": 40, \"bin_size\": 16, \"truncated\": "
	    "false, \"overwritten\": false") ",\n"
	SCALAR("3", "float32", "1.5") ",\n"
	SCALAR("4", "float32", "2.0") ",\n"
	SCALAR("5", "int32", "-7") ",\n"
	SCALAR("6", "float32", "null") ",\n"
	SCALAR("7", "float32", "\"$Inf\"") ",\n"
	SCALAR("8", "float32", "\"-$Inf\"") ",\n"
	SCALAR("9", "float32", "1e-07") ",\n"
	REC("0x0000000100000001", "1", "2", "output", "after_completion",
	    "\"kind\": \"tensor\", \"dtype\": \"float32\", \"is_contiguous\": "
	    "true, \"shape\": [2, 3], \"strides\": [3, 1], \"start_offset\": 0, "
	    "\"numel\": 6, \"bin_offset\": 56, \"bin_size\": 24, \"truncated\": "
	    "false, \"overwritten\": false") ",\n"
	REC("0x0000000100000002", "1", "2", "output", "after_completion",
	    "\"kind\": \"tensor\", \"dtype\": \"float32\", \"is_contiguous\": "
	    "true, \"shape\": [8], \"strides\": [1], \"start_offset\": 0, "
	    "\"numel\": 8, \"bin_offset\": 0, \"bin_size\": 16, \"truncated\": "
	    "true, \"overwritten\": false") ",\n"
	REC("0x0000000200000000", "5, -1, 6", "0", "inout", "before_dispatch",
	    "\"kind\": \"tensor\", \"dtype\": \"int32\", \"is_contiguous\": "
	    "true, \"shape\": [4], \"strides\": [1], \"start_offset\": 0, "
	    "\"numel\": 4, \"bin_offset\": 96, \"bin_size\": 16, \"truncated\": "
	    "false, \"overwritten\": false") ",\n"
	REC("0x0000000200000000", "5, -1, 6", "0", "inout", "after_completion",
	    "\"kind\": \"tensor\", \"dtype\": \"int32\", \"is_contiguous\": "
	    "true, \"shape\": [4], \"strides\": [1], \"start_offset\": 0, "
	    "\"numel\": 4, \"bin_offset\": 80, \"bin_size\": 16, \"truncated\": "
	    "false, \"overwritten\": true") "\n"
	"  ],\n"
	"  \"collected\": 13,\n"
	"  \"accounting\": \"complete\"\n"
	"}\n";

/* The file at @path, NUL-terminated, its length in *@len; NULL if none. */
static char *slurp(const char *path, size_t *len)
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

static char *json_of(struct dump_set *s)
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

FIXTURE(dir)
{
	char dir[64], sub[96], json[128], bin[128];
};

FIXTURE_SETUP(dir)
{
	snprintf(self->dir, sizeof(self->dir), "/tmp/pto-dump-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->sub, sizeof(self->sub), "%s/args_dump", self->dir);
	snprintf(self->json, sizeof(self->json), "%s/args_dump.json", self->sub);
	snprintf(self->bin, sizeof(self->bin), "%s/args.bin", self->sub);
}

FIXTURE_TEARDOWN(dir)
{
	unlink(self->json);
	unlink(self->bin);
	rmdir(self->sub);
	rmdir(self->dir);
}

TEST(json_text_exact)
{
	struct dump_set s;
	char *text;

	ASSERT_EQ(0, build(&s));
	text = json_of(&s);
	ASSERT_NE(NULL, text);
	EXPECT_STREQ(want_json, text);
	free(text);
	dump_set_fini(&s);
}

TEST_F(dir, files_exact)
{
	uint8_t want[112];
	struct dump_set s;
	size_t len = 0;
	char *got;

	/* args.bin: the payloads in arrival order, nothing between them. */
	memcpy(want, p_trunc, 16);
	memcpy(want + 16, p_in0, 24);
	memcpy(want + 40, p_in1, 16);
	memcpy(want + 56, p_out, 24);
	memcpy(want + 80, p_io1, 16);
	memcpy(want + 96, p_io0, 16);
	ASSERT_EQ(0, build(&s));
	ASSERT_EQ(0, dump_write(&s, self->dir));
	dump_set_fini(&s);
	got = slurp(self->bin, &len);
	ASSERT_NE(NULL, got);
	ASSERT_EQ(sizeof(want), len);
	EXPECT_EQ(0, memcmp(want, got, len));
	free(got);
	got = slurp(self->json, &len);
	ASSERT_NE(NULL, got);
	EXPECT_STREQ(want_json, got);
	free(got);
}

/* HYBRID with nothing marked: a record per argument, no payload, so no
 * bin_file, and an args.bin left by an earlier run is removed. */
TEST_F(dir, no_payload_no_bin_file)
{
	static const uint32_t shape[1] = { 4 };
	static const uint64_t strides[1] = { 1 };
	struct dump_set s;
	struct dump_rec r;
	size_t len = 0;
	char *got;
	FILE *f;

	ASSERT_EQ(0, mkdir(self->sub, 0777));
	f = fopen(self->bin, "w");
	ASSERT_NE(NULL, f);
	fputs("stale", f);
	fclose(f);
	dump_set_init(&s, DUMP_LEVEL_HYBRID);
	r = tensor(TASK_A, 0, DUMP_ROLE_INPUT, DUMP_BEFORE_DISPATCH,
		   PTO_DTYPE_I32, 1, shape, strides);
	ASSERT_EQ(0, dump_set_add(&s, &r, NULL, 0));
	ASSERT_EQ(0, dump_write(&s, self->dir));
	dump_set_fini(&s);
	EXPECT_EQ(-1, access(self->bin, F_OK));
	got = slurp(self->json, &len);
	ASSERT_NE(NULL, got);
	EXPECT_NE(NULL, strstr(got, "  \"dump_args_level\": 3,\n"));
	EXPECT_NE(NULL, strstr(got, "  \"bin_file\": null,\n"));
	EXPECT_NE(NULL, strstr(got, "\"bin_offset\": 0, \"bin_size\": 0, "));
	free(got);
}

/* A lane that never settled: every record committed before the failure
 * is written, and the accounting says the counts may be short. */
TEST_F(dir, failed_run_writes_accounting_unknown)
{
	struct dump_set s;
	size_t len = 0;
	char *got, *want;

	ASSERT_EQ(0, build(&s));
	s.unknown = true;
	ASSERT_EQ(0, dump_write(&s, self->dir));
	dump_set_fini(&s);
	want = strdup(want_json);
	ASSERT_NE(NULL, want);
	memcpy(strstr(want, "\"complete\""), "\"unknown\"\n}\n", 13);
	got = slurp(self->json, &len);
	ASSERT_NE(NULL, got);
	EXPECT_STREQ(want, got);
	free(got);
	free(want);
	EXPECT_EQ(0, access(self->bin, F_OK));
}

TEST(empty_set)
{
	struct dump_set s;
	char *text;

	dump_set_init(&s, DUMP_LEVEL_PARTIAL);
	text = json_of(&s);
	ASSERT_NE(NULL, text);
	EXPECT_NE(NULL, strstr(text, "  \"total_args\": 0,\n"));
	EXPECT_NE(NULL, strstr(text, "  \"bin_file\": null,\n  \"args\": [],\n"
			       "  \"collected\": 0,\n  \"accounting\": "
			       "\"complete\"\n}\n"));
	free(text);
	dump_set_fini(&s);
}

TEST(layout_helpers)
{
	static const uint32_t shape[3] = { 2, 1, 3 };
	static const uint64_t packed[3] = { 3, 99, 1 }, padded[3] = { 4, 4, 1 };

	EXPECT_TRUE(dump_is_contiguous(3, shape, packed));
	EXPECT_FALSE(dump_is_contiguous(3, shape, padded));
	EXPECT_EQ(6u, dump_numel(3, shape));
	EXPECT_EQ(1u, dump_numel(0, shape));
	EXPECT_STREQ("float32", dump_dtype_name(PTO_DTYPE_F32));
	EXPECT_EQ((uint32_t)PTO_DTYPE_I32, dump_dtype_of("int32"));
	EXPECT_EQ(0u, dump_dtype_of("float16"));
	EXPECT_EQ(DUMP_ROLE_INOUT,
		  dump_name_index(dump_role_name, DUMP_ROLE_NR, "inout"));
	EXPECT_EQ(-1, dump_name_index(dump_stage_name, DUMP_STAGE_NR, "x"));
}

TEST_HARNESS_MAIN
