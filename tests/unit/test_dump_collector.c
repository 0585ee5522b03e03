// SPDX-License-Identifier: MIT
/*
 * The host collector (lib/dump/lane.c, collector.c) against a lane image
 * in memory with a fake producer (dump_lane_fake.h): records as the
 * file's JSON text, a payload across the arena's end, the absolute acks,
 * an overwritten payload, a malformed record, a corrupt ready entry;
 * the thread draining a seeded producer held back by the acks, complete
 * after a close, unknown after an abort or when a committed record was
 * never published.
 */
#include <stdlib.h>
#include <time.h>
#include "kselftest_harness.h"
#include "dump/collector.h"
#include "dump_fixture.h"
#include "dump_lane_fake.h"

FIXTURE(lane)
{
	struct img m;
	struct dump_set s;
	struct dump_lane_pos pos;
};

FIXTURE_SETUP(lane)
{
	ASSERT_EQ(0, img_make(&self->m));
	dump_set_init(&self->s, DUMP_LEVEL_FULL);
	memset(&self->pos, 0, sizeof(self->pos));
}

FIXTURE_TEARDOWN(lane)
{
	dump_set_fini(&self->s);
	free(self->m.base);
}

/* Two buffers: a MIX task's input with an unknown middle subtask, a
 * scalar of a task without any function id, an output whose payload
 * wraps the arena's end; the file's records, exactly. */
TEST_F(lane, records_and_payloads_exact)
{
	static const float in[4] = { 1, 2, 3, 4 }, out[6] = { 5, 6, 7, 8, 9, 10 };
	struct dump_lane_img v = view(&self->m);
	struct pto_dump_record r[2];
	struct pto_dump_ack ack = { 0 };
	uint8_t want[40];
	char *text;

	ASSERT_EQ(0, dump_lane_check(&v));
	r[0] = tensor1(&self->m, 0x10, 0, PTO_DUMP_ROLE_INPUT,
		       PTO_DUMP_BEFORE_DISPATCH, in, 4);
	r[0].func_id[0] = 5;
	r[0].func_id[2] = 6;
	r[1] = rec(0x10, 3, PTO_DUMP_ROLE_INPUT, PTO_DUMP_BEFORE_DISPATCH);
	r[1].kind = PTO_DUMP_KIND_SCALAR;
	r[1].dtype = PTO_DTYPE_I32;
	r[1].func_id[0] = PTO_DUMP_FUNC_NONE;
	r[1].data = 0xfffffffeu;	/* -2 */
	publish(&self->m, r, 2);
	ASSERT_EQ(1, dump_lane_drain(&v, &self->pos, &self->s, &ack));
	EXPECT_EQ(1u, ack.completed_payloads);
	EXPECT_EQ(1u, ack.returned_buffers);
	/* Acknowledged, its bytes are the producer's again: the output's 24
	 * bytes start 8 before the arena's end, two laps on. */
	st(&self->m)->arena_write_pos = 3 * ARENA - 8;
	r[0] = tensor1(&self->m, 0x10, 2, PTO_DUMP_ROLE_OUTPUT,
		       PTO_DUMP_AFTER_COMPLETION, out, 6);
	r[0].flags |= PTO_DUMP_REC_TRUNCATED;
	publish(&self->m, r, 1);
	ASSERT_EQ(1, dump_lane_drain(&v, &self->pos, &self->s, &ack));
	EXPECT_EQ(2u, ack.completed_payloads);
	EXPECT_EQ(2u, ack.returned_buffers);
	EXPECT_EQ(3u, self->pos.records);
	EXPECT_EQ(0u, self->pos.bad);
	memcpy(want, in, 16);
	memcpy(want + 16, out, 24);
	ASSERT_EQ(sizeof(want), self->s.bin_len);
	EXPECT_EQ(0, memcmp(want, self->s.bin, sizeof(want)));
	text = json_of(&self->s);
	ASSERT_NE(NULL, text);
	EXPECT_NE(NULL, strstr(text,
		"    {\"task_id\": \"0x0000000000000010\", \"func_id\": [5, -1, 6], "
		"\"arg_index\": 0, \"role\": \"input\", \"stage\": "
		"\"before_dispatch\", \"kind\": \"tensor\", \"dtype\": \"float32\", "
		"\"is_contiguous\": true, \"shape\": [4], \"strides\": [1], "
		"\"start_offset\": 0, \"numel\": 4, \"bin_offset\": 0, "
		"\"bin_size\": 16, \"truncated\": false, \"overwritten\": false},\n"
		"    {\"task_id\": \"0x0000000000000010\", \"func_id\": [-1], "
		"\"arg_index\": 3, \"role\": \"input\", \"stage\": "
		"\"before_dispatch\", \"kind\": \"scalar\", \"dtype\": \"int32\", "
		"\"value\": -2, \"is_contiguous\": true, \"shape\": [], "
		"\"strides\": [], \"start_offset\": 0, \"numel\": 1, "
		"\"bin_offset\": 0, \"bin_size\": 0, \"truncated\": false, "
		"\"overwritten\": false},\n"
		"    {\"task_id\": \"0x0000000000000010\", \"func_id\": [1], "
		"\"arg_index\": 2, \"role\": \"output\", \"stage\": "
		"\"after_completion\", \"kind\": \"tensor\", \"dtype\": "
		"\"float32\", \"is_contiguous\": true, \"shape\": [6], "
		"\"strides\": [1], \"start_offset\": 0, \"numel\": 6, "
		"\"bin_offset\": 16, \"bin_size\": 24, \"truncated\": true, "
		"\"overwritten\": false}\n  ],\n")) {
		TH_LOG("%s", text);
	}
	free(text);
	/* Nothing new: nothing drained, the same absolute counts. */
	ASSERT_EQ(0, dump_lane_drain(&v, &self->pos, &self->s, &ack));
	EXPECT_EQ(2u, ack.completed_payloads);
	EXPECT_EQ(2u, ack.returned_buffers);
}

/* A producer that passed a payload's first byte by a whole arena before
 * the copy ended: the record is kept, flagged overwritten. */
TEST_F(lane, overwritten_payload_flagged)
{
	static const float v4[4] = { 1, 2, 3, 4 };
	struct dump_lane_img v = view(&self->m);
	struct pto_dump_record r[2];
	struct pto_dump_ack ack;

	r[0] = tensor1(&self->m, 1, 0, PTO_DUMP_ROLE_OUTPUT,
		       PTO_DUMP_AFTER_COMPLETION, v4, 4);
	r[1] = tensor1(&self->m, 2, 0, PTO_DUMP_ROLE_OUTPUT,
		       PTO_DUMP_AFTER_COMPLETION, v4, 4);
	st(&self->m)->arena_write_pos = r[1].data + ARENA;
	publish(&self->m, r, 2);
	ASSERT_EQ(1, dump_lane_drain(&v, &self->pos, &self->s, &ack));
	ASSERT_EQ(2u, self->s.n);
	EXPECT_TRUE(self->s.rec[0].overwritten);
	EXPECT_FALSE(self->s.rec[1].overwritten);
}

/* A malformed record is skipped and counted, its payload still numbered
 * (the acknowledgement counts payloads in record order). */
TEST_F(lane, malformed_record_skipped)
{
	static const float v2[2] = { 1, 2 };
	struct dump_lane_img v = view(&self->m);
	struct pto_dump_record r[2];
	struct pto_dump_ack ack;

	r[0] = tensor1(&self->m, 1, 0, PTO_DUMP_ROLE_INPUT,
		       PTO_DUMP_BEFORE_DISPATCH, v2, 2);
	r[0].role = 7;
	r[1] = tensor1(&self->m, 1, 1, PTO_DUMP_ROLE_INPUT,
		       PTO_DUMP_BEFORE_DISPATCH, v2, 2);
	publish(&self->m, r, 2);
	ASSERT_EQ(1, dump_lane_drain(&v, &self->pos, &self->s, &ack));
	EXPECT_EQ(1u, self->pos.bad);
	EXPECT_EQ(1u, self->pos.records);
	EXPECT_EQ(2u, ack.completed_payloads);
	ASSERT_EQ(1u, self->s.n);
	EXPECT_EQ(1u, self->s.rec[0].arg_index);
}

TEST_F(lane, corrupt_state_refused)
{
	struct dump_lane_img v = view(&self->m);
	struct pto_dump_record r = rec(1, 0, 0, 0);
	struct pto_dump_ack ack;

	publish(&self->m, &r, 1);
	st(&self->m)->ready[0] = PTO_DUMP_META_BUFFERS;
	EXPECT_EQ(-EPROTO, dump_lane_drain(&v, &self->pos, &self->s, &ack));
	st(&self->m)->ready[0] = 0;
	st(&self->m)->acct.ready_tail = 1 + PTO_DUMP_META_BUFFERS;
	EXPECT_EQ(-EPROTO, dump_lane_drain(&v, &self->pos, &self->s, &ack));
	st(&self->m)->magic = 0;
	EXPECT_EQ(-EPROTO, dump_lane_check(&v));
	st(&self->m)->magic = PTO_DUMP_MAGIC;
	st(&self->m)->arena_size = self->m.size;
	EXPECT_EQ(-EPROTO, dump_lane_check(&v));
}

/* Seeded (printed; set PTO_SEED to repeat one). */
TEST(thread_drains_under_back_pressure)
{
	const char *env = getenv("PTO_SEED");
	struct fake f = { .seed = env ? (unsigned int)strtoul(env, NULL, 0) :
				  (unsigned int)time(NULL) };
	struct dump_set s;

	ASSERT_EQ(0, img_make(&f.m));
	TH_LOG("seed %u", f.seed);
	ASSERT_EQ(0, run_collector(&f, true, &s));
	EXPECT_EQ(0, f.bad_acks);
	EXPECT_EQ(1, f.closed);
	EXPECT_FALSE(s.unknown);
	EXPECT_EQ(st(&f.m)->acct.collected, s.n);
	EXPECT_EQ((uint64_t)NBUF, f.acked_buffers);
	EXPECT_EQ(st(&f.m)->acct.published_payloads, f.acked_payloads);
	check_stream(_metadata, &s);
	dump_set_fini(&s);
	free(f.m.base);
}

/* An aborted run: no close, the lane still producing; every published
 * record is there, the accounting unknown. */
TEST(aborted_run_unknown)
{
	struct fake f = { .seed = 7 };
	struct dump_set s;

	ASSERT_EQ(0, img_make(&f.m));
	ASSERT_EQ(0, run_collector(&f, false, &s));
	EXPECT_EQ(0, f.closed);
	EXPECT_TRUE(s.unknown);
	EXPECT_EQ(st(&f.m)->acct.collected, s.n);
	check_stream(_metadata, &s);
	dump_set_fini(&s);
	free(f.m.base);
}

/* A lane that counts a committed record the consumer never saw: the
 * counts do not add up, so the accounting is unknown. */
TEST(unpublished_record_unknown)
{
	struct fake f = { .seed = 11, .hide_one = true };
	struct dump_set s;

	ASSERT_EQ(0, img_make(&f.m));
	st(&f.m)->acct.dropped = 3;
	ASSERT_EQ(0, run_collector(&f, true, &s));
	EXPECT_TRUE(s.unknown);
	EXPECT_EQ(3u, s.dropped);
	dump_set_fini(&s);
	free(f.m.base);
}

TEST_HARNESS_MAIN
