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
#include "dump_fixture.h"

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
	"  \"total_args\": 15,\n"
	"  \"before_dispatch\": 12,\n"
	"  \"after_completion\": 3,\n"
	"  \"input_args\": 11,\n"
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
	SCALAR("10", "float32", "0.1") ",\n"
	SCALAR("11", "float32", "16777215.0") ",\n"
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
	"  \"collected\": 15,\n"
	"  \"accounting\": \"complete\"\n"
	"}\n";

FIXTURE(dir)
{
	struct dump_dir d;
};

FIXTURE_SETUP(dir)
{
	ASSERT_EQ(0, dump_dir_make(&self->d));
}

FIXTURE_TEARDOWN(dir)
{
	dump_dir_remove(&self->d);
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
	ASSERT_EQ(0, dump_write(&s, self->d.dir));
	dump_set_fini(&s);
	got = slurp(self->d.bin, &len);
	ASSERT_NE(NULL, got);
	ASSERT_EQ(sizeof(want), len);
	EXPECT_EQ(0, memcmp(want, got, len));
	free(got);
	got = slurp(self->d.json, &len);
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

	ASSERT_EQ(0, mkdir(self->d.sub, 0777));
	f = fopen(self->d.bin, "w");
	ASSERT_NE(NULL, f);
	fputs("stale", f);
	fclose(f);
	dump_set_init(&s, DUMP_LEVEL_HYBRID);
	r = tensor(TASK_A, 0, DUMP_ROLE_INPUT, DUMP_BEFORE_DISPATCH,
		   PTO_DTYPE_I32, 1, shape, strides);
	ASSERT_EQ(0, dump_set_add(&s, &r, NULL, 0));
	ASSERT_EQ(0, dump_write(&s, self->d.dir));
	dump_set_fini(&s);
	EXPECT_EQ(-1, access(self->d.bin, F_OK));
	got = slurp(self->d.json, &len);
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
	ASSERT_EQ(0, dump_write(&s, self->d.dir));
	dump_set_fini(&s);
	want = strdup(want_json);
	ASSERT_NE(NULL, want);
	memcpy(strstr(want, "\"complete\""), "\"unknown\"\n}\n", 13);
	got = slurp(self->d.json, &len);
	ASSERT_NE(NULL, got);
	EXPECT_STREQ(want, got);
	free(got);
	free(want);
	EXPECT_EQ(0, access(self->d.bin, F_OK));
}

/* A DIR that does not exist yet is made (its parent must exist). */
TEST_F(dir, makes_the_dump_dir)
{
	char fresh[128], json[160];
	struct dump_set s;

	snprintf(fresh, sizeof(fresh), "%s/run1", self->d.dir);
	snprintf(json, sizeof(json), "%s/args_dump/args_dump.json", fresh);
	dump_set_init(&s, DUMP_LEVEL_FULL);
	ASSERT_EQ(0, dump_write(&s, fresh));
	EXPECT_EQ(0, access(json, F_OK));
	dump_set_fini(&s);
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
