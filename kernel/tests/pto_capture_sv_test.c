// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: the lane supervisor's service step (pto_capture_sv.c) against a
 * real producer over a lane image of its own, the cores simulated by the
 * rendezvous steps (pto_capture_slot.c) in the order each case names.
 * Every result is compared as values: records, bytes, the lane's
 * accounting, acknowledgement statuses and observation ticks.
 */
#include <kunit/test.h>
#include <linux/string.h>
#include "pto_capture_sv_fixture.h"


static int sv_init(struct kunit *test)
{
	sv_ctx_init(test);
	return 0;
}

static void sv_exit(struct kunit *test)
{
	sv_ctx_fini(test);
}

/*
 * A MIX task: BEFORE yields a, b and the scalar, AFTER the output, one
 * record set whose every record carries the three func_ids. No
 * participant sees the seal before every input was committed.
 */
static void sv_mix_one_record_set(struct kunit *test)
{
	struct sv_ctx *ctx = test->priv;
	static const u32 args[] = { 0, 1, 3, 2 };
	u32 pub, i, j, core;
	int steps;

	sv_task(ctx, 0, PTO_GRAPH_MASK_MIX, 1);
	sv_tensor(ctx, 0, PTO_ARG_A, PTO_GRAPH_ROLE_IN, 64, 0);
	sv_tensor(ctx, 0, PTO_ARG_B, PTO_GRAPH_ROLE_IN, 64, 100);
	sv_tensor(ctx, 0, PTO_ARG_OUT, PTO_GRAPH_ROLE_OUT, 64, 1000);
	sv_start(test, PTO_DUMP_FULL, 0x1);
	sv_join(test, 0, PTO_GRAPH_MASK_MIX, 0);
	pub = sv_arrive(test, 0, PTO_GRAPH_MASK_MIX, PTO_CS_BEFORE);

	for (steps = 0; steps < SV_MAX_STEPS; steps++) {
		sv_step(test);
		for (core = 0; core < PTO_CORES_PER_CLUSTER; core++)
			if (core != pub)
				KUNIT_EXPECT_EQ(test, sv_poll(test, core, NULL),
						ctx->p->count < 3 ? PTO_CS_WAIT :
						PTO_CS_SEALED);
		if (sv_poll(test, pub, NULL) == PTO_CS_SEALED)
			break;
	}
	/* One chunk or record per step: a, b, then the scalar and the seal. */
	KUNIT_EXPECT_EQ(test, steps, 2);
	KUNIT_EXPECT_EQ(test, ctx->p->count, 3U);
	sv_release(test, 0, PTO_GRAPH_MASK_MIX, PTO_CS_BEFORE);
	pub = sv_arrive(test, 0, PTO_GRAPH_MASK_MIX, PTO_CS_AFTER);
	sv_until_sealed(test, &pub, 1);
	sv_release(test, 0, PTO_GRAPH_MASK_MIX, PTO_CS_AFTER);

	KUNIT_ASSERT_EQ(test, ctx->p->count, 4U);
	for (i = 0; i < 4; i++) {
		const struct pto_dump_record *r = sv_rec(ctx, i);

		KUNIT_EXPECT_EQ(test, r->task_id, 0ULL);
		KUNIT_EXPECT_EQ(test, r->run_id, SV_RUN_ID);
		KUNIT_EXPECT_EQ(test, r->arg_index, args[i]);
		KUNIT_EXPECT_EQ(test, r->stage, i < 3 ? PTO_DUMP_BEFORE_DISPATCH :
				PTO_DUMP_AFTER_COMPLETION);
		for (j = 0; j < PTO_DUMP_MAX_FUNCS; j++)
			KUNIT_EXPECT_EQ(test, r->func_id[j], 4 + j);
	}
	sv_expect_bytes(test, 0, 0, 64);
	sv_expect_bytes(test, 1, 100, 64);
	KUNIT_EXPECT_EQ(test, sv_rec(ctx, 2)->kind, (u32)PTO_DUMP_KIND_SCALAR);
	KUNIT_EXPECT_EQ(test, sv_rec(ctx, 2)->data, 77ULL);
	KUNIT_EXPECT_EQ(test, sv_rec(ctx, 3)->role, (u32)PTO_DUMP_ROLE_OUTPUT);
	sv_expect_bytes(test, 3, 1000, 64);
	KUNIT_EXPECT_EQ(test, ctx->p->st->acct.collected, 4ULL);
	KUNIT_EXPECT_EQ(test, ctx->p->st->acct.dropped, 0ULL);
	KUNIT_EXPECT_EQ(test, ctx->sv->stats.sealed, 2ULL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&ctx->run->area.slots[0].claim),
			(s64)PTO_CS_CLAIM(PTO_CS_SETTLED, 1));
}

/*
 * Four clusters publish at once: one scan stamps all four, all are
 * sealed at both phases, no slot is left READY and nothing stays queued.
 */
static void sv_scan_serves_all(struct kunit *test)
{
	struct sv_ctx *ctx = test->priv;
	u32 pubs[SV_CLUSTERS], cl, i, seen = 0;
	int ph;

	for (cl = 0; cl < SV_CLUSTERS; cl++) {
		sv_task(ctx, cl, PTO_GRAPH_MASK_MIX, 0);
		sv_tensor(ctx, cl, PTO_ARG_A, PTO_GRAPH_ROLE_IN, 32, cl * 64);
		sv_tensor(ctx, cl, PTO_ARG_OUT, PTO_GRAPH_ROLE_OUT, 32,
			  4096 + cl * 64);
	}
	sv_start(test, PTO_DUMP_FULL, 0xf);
	KUNIT_ASSERT_EQ(test, ctx->sv->ncores, (u32)SV_CORES);
	for (cl = 0; cl < SV_CLUSTERS; cl++)
		sv_join(test, cl, PTO_GRAPH_MASK_MIX, cl);
	for (ph = PTO_CS_BEFORE; ph <= PTO_CS_AFTER; ph++) {
		for (cl = 0; cl < SV_CLUSTERS; cl++)
			pubs[cl] = sv_arrive(test, cl, PTO_GRAPH_MASK_MIX, ph);
		if (ph == PTO_CS_BEFORE) {
			sv_step(test);
			KUNIT_EXPECT_EQ(test, ctx->sv->observe, 4ULL);
			/* The first observed was served and sealed at once. */
			for (cl = 0; cl < SV_CLUSTERS; cl++) {
				struct pto_sv_core *c = &ctx->sv->cores[pubs[cl]];

				seen |= BIT(c->terminal ? 1 : c->obs_tick);
			}
			KUNIT_EXPECT_EQ(test, seen, 0x1eU);	/* 1..4 */
			KUNIT_EXPECT_EQ(test, ctx->sv->stats.sealed, 1ULL);
		}
		sv_until_sealed(test, pubs, SV_CLUSTERS);
		for (cl = 0; cl < SV_CLUSTERS; cl++)
			sv_release(test, cl, PTO_GRAPH_MASK_MIX, ph);
	}
	for (i = 0; i < ctx->run->area.nslots; i++)
		KUNIT_EXPECT_NE(test, PTO_CS_STATE(atomic64_read(
				&ctx->run->area.slots[i].claim)),
				(u64)PTO_CS_READY);
	for (cl = 0; cl < SV_CLUSTERS; cl++)
		KUNIT_EXPECT_EQ(test, atomic64_read(&ctx->run->area.slots[
				pto_cap_slot_index(cl, 0)].claim),
				(s64)PTO_CS_CLAIM(PTO_CS_SETTLED, 1));
	for (i = 0; i < ctx->sv->ncores; i++) {
		KUNIT_EXPECT_EQ(test, ctx->sv->cores[i].obs_tick, 0ULL);
		KUNIT_EXPECT_EQ(test, ctx->sv->cores[i].answered,
				ctx->sv->cores[i].v.tick);
	}
	KUNIT_EXPECT_FALSE(test, sv_step(test));
	KUNIT_EXPECT_EQ(test, ctx->sv->stats.sealed, 8ULL);
	KUNIT_EXPECT_EQ(test, ctx->p->st->acct.collected, 8ULL);
	for (i = 0; i < 8; i++)
		seen |= BIT(8 + sv_rec(ctx, i)->task_id * 2 +
			    sv_rec(ctx, i)->stage);
	KUNIT_EXPECT_EQ(test, seen >> 8, 0xffU);	/* each task, each stage */
}


/*
 * The A/B schedule: A holds the reservation mid-copy; B is answered
 * WouldBlock, nothing accounted and no buffer published; A's abandon
 * leaves head and count as they were, and B then opens at them.
 */
static void sv_reservation_ab(struct kunit *test)
{
	struct sv_ctx *ctx = test->priv;
	struct pto_dump_lane close = { .lane = 0 };
	struct pto_dump_state during;
	struct pto_capture_ack e;
	u32 a, b, count0;
	u64 head0;
	int i;

	sv_task(ctx, 0, PTO_GRAPH_AIC, 0);
	sv_tensor(ctx, 0, PTO_ARG_A, PTO_GRAPH_ROLE_IN, SZ_128K / 4, 0);
	sv_task(ctx, 1, PTO_GRAPH_AIC, 0);
	sv_tensor(ctx, 1, PTO_ARG_A, PTO_GRAPH_ROLE_IN, 256, 512);
	sv_start(test, PTO_DUMP_FULL, 0x3);
	sv_fill(test, 1024);	/* something committed before A */
	head0 = ctx->p->head;
	count0 = ctx->p->count;

	a = sv_solo(test, 0, 0, PTO_CS_BEFORE);
	KUNIT_EXPECT_TRUE(test, sv_step(test));
	KUNIT_EXPECT_EQ(test, pto_cs_poll(&ctx->part[a], &e), PTO_CS_PROGRESS);
	KUNIT_EXPECT_EQ(test, e.status, (u32)PTO_CS_ST_INPROGRESS);
	KUNIT_EXPECT_EQ(test, e.arg_cursor, (u64)PTO_SV_CHUNK);
	KUNIT_EXPECT_TRUE(test, ctx->p->open);
	memcpy(&during, ctx->p->st, sizeof(during));

	b = sv_solo(test, 1, 1, PTO_CS_BEFORE);
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_TRUE(test, sv_step(test));
		KUNIT_EXPECT_EQ(test, sv_poll(test, b, &e), PTO_CS_PROGRESS);
		KUNIT_EXPECT_EQ(test, e.status, (u32)PTO_CS_ST_WOULDBLOCK);
		KUNIT_EXPECT_EQ(test, memcmp(&during, ctx->p->st,
					     sizeof(during)), 0);
		KUNIT_EXPECT_EQ(test, ctx->p->res.arg.rec.task_id, 0ULL);
		KUNIT_EXPECT_EQ(test, ctx->p->res.written, (u64)PTO_SV_CHUNK);
	}
	KUNIT_EXPECT_EQ(test, ctx->sv->stats.wouldblock, 3ULL);
	KUNIT_EXPECT_EQ(test, ctx->p->count + ctx->p->open, count0 + 1);

	/* A's watchdog: the step abandons, answers Aborted, then serves B. */
	KUNIT_EXPECT_EQ(test, pto_cs_expire(&ctx->part[a], false),
			PTO_CS_TIMEOUT);
	KUNIT_EXPECT_TRUE(test, sv_step(test));
	KUNIT_EXPECT_EQ(test, pto_cs_poll(&ctx->part[a], NULL), PTO_CS_ABORTED);
	KUNIT_EXPECT_EQ(test, ctx->p->st->acct.dropped, 1ULL);
	KUNIT_EXPECT_EQ(test, ctx->p->abandoned, 1ULL);
	KUNIT_EXPECT_EQ(test, ctx->p->st->acct.ready_tail, 0ULL);
	KUNIT_EXPECT_EQ(test, sv_poll(test, b, NULL), PTO_CS_SEALED);
	KUNIT_EXPECT_EQ(test, ctx->p->count, count0 + 1);
	KUNIT_EXPECT_EQ(test, sv_rec(ctx, count0)->task_id, 1ULL);
	KUNIT_EXPECT_EQ(test, sv_rec(ctx, count0)->data, head0);
	KUNIT_EXPECT_EQ(test, ctx->p->head, head0 + 1024);
	KUNIT_EXPECT_EQ(test, ctx->p->st->acct.collected, 2ULL);
	sv_expect_balanced(test);

	/* The binding saw an abort: its terminal never closes cleanly. */
	KUNIT_EXPECT_TRUE(test, ctx->lane->cap_aborted);
	ctx->lane->busy = false;
	KUNIT_EXPECT_EQ(test, pto_ioctl_dump_close(&ctx->pf, &close), -EIO);
	ctx->lane->busy = true;
}

/*
 * A is blocked on the arena, B would fit: across WouldBlocks each keeps
 * its observation tick and B never overtakes A; once the host acks, A
 * opens first and B follows.
 */
static void sv_wouldblock_keeps_tick(struct kunit *test)
{
	struct sv_ctx *ctx = test->priv;
	struct pto_sv_core *ca, *cb;
	u32 a, b, pubs[2];
	u64 tick;
	int i;

	sv_task(ctx, 0, PTO_GRAPH_AIC, 0);
	sv_tensor(ctx, 0, PTO_ARG_A, PTO_GRAPH_ROLE_IN, SV_ELEMS, 0);
	sv_task(ctx, 1, PTO_GRAPH_AIC, 0);
	sv_tensor(ctx, 1, PTO_ARG_A, PTO_GRAPH_ROLE_IN, 256, 64);
	sv_start(test, PTO_DUMP_FULL, 0x3);
	sv_fill(test, SV_ELEMS);
	sv_fill(test, SZ_64K / 4);	/* 192 KiB left: A does not fit */

	a = sv_solo(test, 0, 0, PTO_CS_BEFORE);
	sv_step(test);
	b = sv_solo(test, 1, 1, PTO_CS_BEFORE);
	ca = &ctx->sv->cores[a];
	cb = &ctx->sv->cores[b];
	tick = ca->v.tick;
	for (i = 0; i < 4; i++) {
		sv_step(test);
		KUNIT_EXPECT_EQ(test, sv_poll(test, a, NULL), PTO_CS_PROGRESS);
		KUNIT_EXPECT_EQ(test, sv_poll(test, b, NULL), PTO_CS_PROGRESS);
		KUNIT_EXPECT_EQ(test, ca->obs_tick, 1ULL);
		KUNIT_EXPECT_EQ(test, cb->obs_tick, 2ULL);
		KUNIT_EXPECT_EQ(test, ctx->sv->observe, 2ULL);
		KUNIT_EXPECT_FALSE(test, ctx->p->open);
		KUNIT_EXPECT_EQ(test, ctx->p->st->acct.total, 2ULL);
	}
	KUNIT_EXPECT_GT(test, ca->v.tick, tick);	/* republished */
	KUNIT_EXPECT_EQ(test, ctx->sv->stats.committed, 0ULL);

	/* The host takes the two fillers: A first, then B. */
	KUNIT_ASSERT_EQ(test, pto_producer_ack(ctx->p, 2, 0), 0);
	sv_step(test);
	KUNIT_EXPECT_TRUE(test, ctx->p->open);
	KUNIT_EXPECT_EQ(test, ctx->p->res.arg.rec.task_id, 0ULL);
	KUNIT_EXPECT_EQ(test, ca->obs_tick, 1ULL);
	pubs[0] = a;
	pubs[1] = b;
	sv_poll(test, a, NULL);
	sv_poll(test, b, NULL);
	sv_until_sealed(test, pubs, 2);
	KUNIT_EXPECT_EQ(test, ctx->p->st->acct.collected, 4ULL);
	KUNIT_EXPECT_EQ(test, ctx->p->st->acct.dropped, 0ULL);
	KUNIT_EXPECT_EQ(test, sv_rec(ctx, ctx->p->count - 2)->task_id, 0ULL);
	KUNIT_EXPECT_EQ(test, sv_rec(ctx, ctx->p->count - 1)->task_id, 1ULL);
}

/*
 * A strided argument (innermost stride 2) and one at the clamp, served
 * a chunk per step; a request published between chunks is stamped at
 * the next step; the stop (or the run's failure) set mid-argument is
 * seen at the next step: no chunk in flight, the reservation abandoned,
 * every queued phase answered Aborted.
 */
static void sv_bounded_run(struct kunit *test, bool stop)
{
	struct sv_ctx *ctx = test->priv;
	const struct pto_dump_record *r;
	struct pto_capture_ack e;
	u32 pub, pub1, i, j, n = 0, *want;
	u64 head1;

	sv_task(ctx, 0, PTO_GRAPH_MASK_MIX, 0);
	sv_tensor2(ctx, 0, PTO_ARG_A, PTO_GRAPH_ROLE_IN, 0, 128, 256, 512, 2,
		   0);
	sv_tensor(ctx, 0, PTO_ARG_B, PTO_GRAPH_ROLE_IN, SV_ELEMS, 0);
	sv_tensor(ctx, 0, PTO_ARG_OUT, PTO_GRAPH_ROLE_OUT, 16, 0);
	sv_task(ctx, 1, PTO_GRAPH_AIC, 0);
	sv_tensor(ctx, 1, PTO_ARG_A, PTO_GRAPH_ROLE_IN, 16, 0);
	sv_start(test, PTO_DUMP_FULL, 0x3);
	sv_join(test, 0, PTO_GRAPH_MASK_MIX, 0);
	pub = sv_arrive(test, 0, PTO_GRAPH_MASK_MIX, PTO_CS_BEFORE);
	sv_step(test);
	KUNIT_EXPECT_EQ(test, ctx->step_bytes, (u64)PTO_SV_CHUNK);
	pub1 = sv_solo(test, 1, 1, PTO_CS_BEFORE);	/* between chunks */
	sv_poll(test, pub, NULL);
	sv_step(test);
	KUNIT_EXPECT_EQ(test, ctx->sv->cores[pub1].obs_tick, 2ULL);
	KUNIT_EXPECT_EQ(test, sv_poll(test, pub1, &e), PTO_CS_PROGRESS);
	KUNIT_EXPECT_EQ(test, e.status, (u32)PTO_CS_ST_WOULDBLOCK);
	KUNIT_EXPECT_EQ(test, sv_poll(test, pub, &e), PTO_CS_PROGRESS);
	KUNIT_EXPECT_EQ(test, e.arg_index, (u32)PTO_ARG_B);
	KUNIT_EXPECT_EQ(test, ctx->p->count, 1U);

	want = kunit_kmalloc_array(test, 128 * 256, 4, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, want);
	for (i = 0; i < 128; i++)
		for (j = 0; j < 256; j++)
			want[n++] = ctx->src[i * 512 + j * 2];
	r = sv_rec(ctx, 0);
	KUNIT_EXPECT_EQ(test, r->payload_size, (u32)SZ_128K);
	KUNIT_EXPECT_EQ(test, memcmp(ctx->p->arena + r->data, want, SZ_128K),
			0);
	head1 = ctx->p->head;

	/* Two chunks of the clamped argument, then the stop. */
	for (i = 0; i < 2; i++) {
		sv_step(test);
		KUNIT_EXPECT_EQ(test, ctx->step_bytes, (u64)PTO_SV_CHUNK);
		sv_poll(test, pub, NULL);
		sv_poll(test, pub1, NULL);
	}
	KUNIT_EXPECT_EQ(test, ctx->p->res.written, 2ULL * PTO_SV_CHUNK);
	if (stop)
		WRITE_ONCE(ctx->sv->stop, true);
	else
		pto_cap_run_fail(ctx->run);
	KUNIT_EXPECT_TRUE(test, sv_step(test));
	KUNIT_EXPECT_EQ(test, ctx->step_bytes, 0ULL);
	KUNIT_EXPECT_FALSE(test, ctx->p->open);
	KUNIT_EXPECT_EQ(test, ctx->p->head, head1);
	KUNIT_EXPECT_EQ(test, ctx->p->st->acct.collected, 1ULL);
	KUNIT_EXPECT_EQ(test, ctx->p->st->acct.dropped, 1ULL);
	for (i = 0; i < PTO_CORES_PER_CLUSTER; i++)
		KUNIT_EXPECT_EQ(test, pto_cs_poll(&ctx->part[i], NULL),
				PTO_CS_ABORTED);
	KUNIT_EXPECT_EQ(test, pto_cs_poll(&ctx->part[pub1], NULL),
			PTO_CS_ABORTED);
	KUNIT_EXPECT_EQ(test, ctx->sv->stats.bytes, 4ULL * PTO_SV_CHUNK);
	KUNIT_EXPECT_EQ(test, ctx->sv->stats.aborted, 2ULL);
	KUNIT_EXPECT_TRUE(test, ctx->sv->settled);
	KUNIT_EXPECT_TRUE(test, ctx->lane->cap_aborted);
	KUNIT_EXPECT_FALSE(test, sv_step(test));
	sv_expect_balanced(test);
}

static void sv_bounded_service(struct kunit *test)
{
	sv_bounded_run(test, false);
	sv_ctx_fini(test);
	sv_ctx_init(test);
	sv_bounded_run(test, true);
}

#define SV_A_ELEMS (SZ_64K / 4 + SZ_32K / 4)	/* 96 KiB: two chunks */

/*
 * The worked walk's task: a (INOUT, two chunks), b (IN), out (OUT, at the
 * clamp). BEFORE is sealed; AFTER's publisher is left at the point where
 * a is committed and out is next. The AFTER publisher's core.
 */
static u32 sv_walk_to_out(struct kunit *test)
{
	struct sv_ctx *ctx = test->priv;
	struct pto_capture_ack e;
	u32 pub;

	sv_task(ctx, 0, PTO_GRAPH_MASK_MIX, 0);
	sv_tensor(ctx, 0, PTO_ARG_A, PTO_GRAPH_ROLE_INOUT, SV_A_ELEMS, 0);
	sv_tensor(ctx, 0, PTO_ARG_B, PTO_GRAPH_ROLE_IN, 16, 0);
	sv_tensor(ctx, 0, PTO_ARG_OUT, PTO_GRAPH_ROLE_OUT, SV_ELEMS, 0);
	sv_join(test, 0, PTO_GRAPH_MASK_MIX, 0);
	pub = sv_arrive(test, 0, PTO_GRAPH_MASK_MIX, PTO_CS_BEFORE);
	sv_until_sealed(test, &pub, 1);
	sv_release(test, 0, PTO_GRAPH_MASK_MIX, PTO_CS_BEFORE);

	pub = sv_arrive(test, 0, PTO_GRAPH_MASK_MIX, PTO_CS_AFTER);
	sv_step(test);
	KUNIT_EXPECT_EQ(test, sv_poll(test, pub, &e), PTO_CS_PROGRESS);
	KUNIT_EXPECT_EQ(test, e.arg_index, (u32)PTO_ARG_A);
	KUNIT_EXPECT_EQ(test, e.arg_cursor, (u64)PTO_SV_CHUNK);
	sv_step(test);
	KUNIT_EXPECT_EQ(test, sv_poll(test, pub, &e), PTO_CS_PROGRESS);
	KUNIT_EXPECT_EQ(test, e.status, (u32)PTO_CS_ST_INPROGRESS);
	KUNIT_EXPECT_EQ(test, e.arg_index, (u32)PTO_ARG_OUT);
	KUNIT_EXPECT_EQ(test, e.arg_cursor, 0ULL);
	return pub;
}

/* Every participant leaves on Aborted carrying the phase's identity. */
static void sv_expect_aborted(struct kunit *test, u32 pub)
{
	struct sv_ctx *ctx = test->priv;
	const struct pto_capture_ack *ack = &ctx->run->area.acks[pub];
	u32 i;

	for (i = 0; i < PTO_CORES_PER_CLUSTER; i++)
		KUNIT_EXPECT_EQ(test, pto_cs_poll(&ctx->part[i], NULL),
				PTO_CS_ABORTED);
	KUNIT_EXPECT_EQ(test, ack->run_epoch, ctx->run->run_epoch);
	KUNIT_EXPECT_EQ(test, ack->task_id, 0ULL);
	KUNIT_EXPECT_EQ(test, ack->phase_seq,
			(u64)PTO_CS_PUB_SEQ(ctx->part[pub].pub));
	/* Not settled, never re-claimed in the run. */
	KUNIT_EXPECT_EQ(test, atomic64_read(&ctx->run->area.slots[0].claim),
			(s64)PTO_CS_CLAIM(PTO_CS_READY, 1));
	KUNIT_EXPECT_TRUE(test, ctx->lane->cap_aborted);
}

/*
 * The worked walk: AFTER's first argument committed in two chunks, the
 * clamped one opened and one chunk copied, then the publisher's watchdog:
 * the reservation is abandoned (one refused record), argument 0 stays.
 */
static void sv_abort_open_reservation(struct kunit *test)
{
	struct sv_ctx *ctx = test->priv;
	struct pto_dump_acct before;
	u32 pub, count;
	u64 head;

	sv_start(test, PTO_DUMP_FULL, 0x1);
	pub = sv_walk_to_out(test);
	head = ctx->p->head;
	count = ctx->p->count;
	before = ctx->p->st->acct;
	KUNIT_EXPECT_EQ(test, before.collected, 3ULL);	/* a, b; a after */

	sv_step(test);
	KUNIT_EXPECT_TRUE(test, ctx->p->open);
	KUNIT_EXPECT_EQ(test, ctx->p->res.written, (u64)PTO_SV_CHUNK);
	KUNIT_EXPECT_EQ(test, pto_cs_expire(&ctx->part[pub], false),
			PTO_CS_TIMEOUT);
	KUNIT_EXPECT_EQ(test, pto_cs_poll(&ctx->part[(pub + 1) % 3], NULL),
			PTO_CS_WAIT);
	KUNIT_EXPECT_TRUE(test, sv_step(test));
	KUNIT_EXPECT_EQ(test, ctx->step_bytes, 0ULL);
	sv_expect_aborted(test, pub);

	KUNIT_EXPECT_FALSE(test, ctx->p->open);
	KUNIT_EXPECT_EQ(test, ctx->p->head, head);
	KUNIT_EXPECT_EQ(test, ctx->p->count, count);
	KUNIT_EXPECT_EQ(test, ctx->p->st->acct.collected, before.collected);
	KUNIT_EXPECT_EQ(test, ctx->p->st->acct.dropped, before.dropped + 1);
	KUNIT_EXPECT_EQ(test, ctx->p->abandoned, 1ULL);
	KUNIT_EXPECT_EQ(test, ctx->sv->stats.abandoned, 1ULL);
	sv_expect_bytes(test, count - 1, 0, SV_A_ELEMS);	/* a, after */
	KUNIT_EXPECT_EQ(test, sv_rec(ctx, count - 1)->stage,
			(u32)PTO_DUMP_AFTER_COMPLETION);
	KUNIT_EXPECT_EQ(test, sv_rec(ctx, count - 1)->role,
			(u32)PTO_DUMP_ROLE_INOUT);
	sv_expect_balanced(test);
}

/*
 * The same walk with the arena too full for the clamped argument: it
 * never opened, so the abort abandons nothing and charges no refusal.
 */
static void sv_abort_no_reservation(struct kunit *test)
{
	struct sv_ctx *ctx = test->priv;
	struct pto_dump_acct before;
	struct pto_capture_ack e;
	u32 pub;
	u64 head;

	sv_start(test, PTO_DUMP_FULL, 0x1);
	sv_fill(test, SZ_128K / 4);
	pub = sv_walk_to_out(test);
	sv_step(test);
	KUNIT_EXPECT_EQ(test, sv_poll(test, pub, &e), PTO_CS_PROGRESS);
	KUNIT_EXPECT_EQ(test, e.status, (u32)PTO_CS_ST_WOULDBLOCK);
	KUNIT_EXPECT_FALSE(test, ctx->p->open);
	head = ctx->p->head;
	before = ctx->p->st->acct;
	KUNIT_EXPECT_EQ(test, before.collected, 4ULL);

	KUNIT_EXPECT_EQ(test, pto_cs_expire(&ctx->part[pub], false),
			PTO_CS_TIMEOUT);
	KUNIT_EXPECT_TRUE(test, sv_step(test));
	sv_expect_aborted(test, pub);
	KUNIT_EXPECT_EQ(test, ctx->p->head, head);
	KUNIT_EXPECT_EQ(test, memcmp(&before, &ctx->p->st->acct,
				     sizeof(before)), 0);
	KUNIT_EXPECT_EQ(test, ctx->p->st->acct.dropped, 0ULL);
	KUNIT_EXPECT_EQ(test, ctx->p->abandoned, 0ULL);
	KUNIT_EXPECT_EQ(test, ctx->p->refused, 0ULL);
	KUNIT_EXPECT_EQ(test, ctx->sv->stats.abandoned, 0ULL);
	sv_expect_balanced(test);
}

/*
 * Arena pressure that clears: the WouldBlocks before the host's ack add
 * no record of any kind; the task completes with every record collected.
 */
static void sv_wouldblock_clears_no_refusal(struct kunit *test)
{
	struct sv_ctx *ctx = test->priv;
	struct pto_dump_acct before;
	struct pto_capture_ack e;
	u32 pub;
	int i;

	sv_task(ctx, 0, PTO_GRAPH_AIC, 0);
	sv_tensor(ctx, 0, PTO_ARG_A, PTO_GRAPH_ROLE_IN, SZ_128K / 4, 0);
	sv_tensor(ctx, 0, PTO_ARG_OUT, PTO_GRAPH_ROLE_OUT, 64, 0);
	sv_start(test, PTO_DUMP_FULL, 0x1);
	sv_fill(test, SV_ELEMS);
	sv_fill(test, SZ_128K / 4 + SZ_64K / 4);	/* 64 KiB left */
	pub = sv_solo(test, 0, 0, PTO_CS_BEFORE);
	sv_step(test);
	before = ctx->p->st->acct;
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_EQ(test, sv_poll(test, pub, &e), PTO_CS_PROGRESS);
		KUNIT_EXPECT_EQ(test, e.status, (u32)PTO_CS_ST_WOULDBLOCK);
		sv_step(test);
		KUNIT_EXPECT_EQ(test, memcmp(&before, &ctx->p->st->acct,
					     sizeof(before)), 0);
	}
	KUNIT_EXPECT_EQ(test, ctx->sv->stats.wouldblock, 4ULL);
	KUNIT_ASSERT_EQ(test, pto_producer_ack(ctx->p, 2, 0), 0);
	sv_until_sealed(test, &pub, 1);
	sv_release(test, 0, PTO_GRAPH_AIC, PTO_CS_BEFORE);
	pub = sv_solo(test, 0, 0, PTO_CS_AFTER);
	sv_until_sealed(test, &pub, 1);
	sv_release(test, 0, PTO_GRAPH_AIC, PTO_CS_AFTER);

	KUNIT_EXPECT_EQ(test, ctx->p->st->acct.total, 4ULL);
	KUNIT_EXPECT_EQ(test, ctx->p->st->acct.collected, 4ULL);
	KUNIT_EXPECT_EQ(test, ctx->p->st->acct.dropped, 0ULL);
	KUNIT_EXPECT_EQ(test, ctx->p->refused, 0ULL);
	KUNIT_EXPECT_EQ(test, ctx->sv->stats.refused, 0ULL);
	KUNIT_EXPECT_FALSE(test, ctx->lane->cap_aborted);
	sv_expect_balanced(test);
}

static struct kunit_case pto_capture_sv_cases[] = {
	KUNIT_CASE(sv_mix_one_record_set),
	KUNIT_CASE(sv_scan_serves_all),
	KUNIT_CASE(sv_reservation_ab),
	KUNIT_CASE(sv_wouldblock_keeps_tick),
	KUNIT_CASE(sv_bounded_service),
	KUNIT_CASE(sv_abort_open_reservation),
	KUNIT_CASE(sv_abort_no_reservation),
	KUNIT_CASE(sv_wouldblock_clears_no_refusal),
	{}
};

static struct kunit_suite pto_capture_sv_suite = {
	.name = "pto_capture_sv",
	.init = sv_init,
	.exit = sv_exit,
	.test_cases = pto_capture_sv_cases,
};
kunit_test_suite(pto_capture_sv_suite);
