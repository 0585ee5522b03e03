// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: a core's walk through the capture barriers (pto_capture_core.c)
 * under explicit schedules: three cores of one cluster (a MIX task) each
 * advanced in the order a case names, a supervisor played by the case
 * (pto_cs_accept / pto_cs_ack), and a clock the case sets.
 */
#include <kunit/test.h>
#include <linux/pto.h>
#include <linux/pto_graph.h>
#include "../pto_capture_core.h"

#define CC_EPOCH 0x0000000300000009ULL
#define CC_TASK 0x0000000400000002ULL
#define CC_CORES 3
#define CC_BUDGET 1000ULL
#define CC_LOST 4000ULL
#define CC_BACKOFF 100ULL

struct cc_ctx {
	struct pto_capture_area a;
	struct pto_cap_core c[CC_CORES];
	u32 seq[CC_CORES];
	u64 last_tick[CC_CORES];
	struct pto_capture_view v;
};

/* Every core a participant of @task in slot 0, as each task starts. */
static void cc_task(struct kunit *test, struct cc_ctx *x, u64 task)
{
	int i;

	for (i = 0; i < CC_CORES; i++) {
		struct pto_cap_core *cc = &x->c[i];

		KUNIT_ASSERT_EQ(test, pto_cs_part_init(&cc->part, &x->a, 0,
						       CC_EPOCH, task, i,
						       1u << i,
						       PTO_GRAPH_MASK_MIX,
						       &x->seq[i]), 0);
		cc->budget_ns = CC_BUDGET;
		cc->lost_ns = CC_LOST;
		cc->backoff_ns = CC_BACKOFF;
	}
}

static int cc_init(struct kunit *test)
{
	struct cc_ctx *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, x);
	KUNIT_ASSERT_EQ(test, pto_cs_area_alloc(&x->a, 1, 2), 0);
	test->priv = x;
	cc_task(test, x, CC_TASK);
	return 0;
}

static void cc_exit(struct kunit *test)
{
	struct cc_ctx *x = test->priv;

	pto_cs_area_free(&x->a);
}

static u64 cc_claim(struct cc_ctx *x)
{
	return atomic64_read(&x->a.slots[0].claim);
}

/* The supervisor: accept core @core's newest request, answer @status. */
static void cc_serve(struct kunit *test, int core, u32 status, u32 index,
		     u64 cursor)
{
	struct cc_ctx *x = test->priv;

	KUNIT_ASSERT_TRUE(test, pto_cs_accept(&x->a, core, x->last_tick[core],
					      &x->v));
	x->last_tick[core] = x->v.tick;
	pto_cs_ack(&x->a.acks[core], &x->v, status, index, cursor);
}

/* The core whose request line is newest: the phase's publisher. */
static int cc_publisher(struct cc_ctx *x)
{
	int i;

	for (i = 0; i < CC_CORES; i++)
		if (x->c[i].part.publisher)
			return i;
	return -1;
}

static void cc_begin_all(struct cc_ctx *x, u32 phase, u64 now)
{
	int i;

	for (i = 0; i < CC_CORES; i++)
		pto_cap_core_begin(&x->c[i], phase, now);
}

/*
 * Criterion 1 at the core: for every arrival order no participant passes
 * BEFORE until the supervisor sealed the phase, a progress answer makes
 * the publisher republish (same phase_seq, new tick) and nobody pass; the
 * AFTER phase then settles the slot once, by the core completing the mask.
 */
static void cap_no_run_before_seal(struct kunit *test)
{
	static const int orders[6][CC_CORES] = {
		{ 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 },
		{ 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 },
	};
	struct cc_ctx *x = test->priv;
	int o, k, pub, settled;
	u64 occ, tick;
	u32 seq;

	for (o = 0; o < 6; o++) {
		const int *ord = orders[o];

		occ = PTO_CS_OCC(cc_claim(x)) + 1;
		cc_task(test, x, CC_TASK + o);
		cc_begin_all(x, PTO_CS_BEFORE, 0);
		for (k = 0; k < CC_CORES; k++)
			KUNIT_EXPECT_EQ(test, pto_cap_core_advance(&x->c[ord[k]], 1),
					PTO_CAPP_WAIT);
		KUNIT_EXPECT_EQ(test, cc_claim(x), PTO_CS_CLAIM(PTO_CS_READY, occ));
		pub = cc_publisher(x);
		KUNIT_EXPECT_EQ(test, pub, ord[CC_CORES - 1]);
		KUNIT_ASSERT_GE(test, pub, 0);
		KUNIT_EXPECT_TRUE(test, x->c[pub].kick & PTO_CAPK_SV);
		seq = x->a.reqs[pub].phase_seq;
		tick = x->a.reqs[pub].request_tick;
		cc_serve(test, pub, PTO_CS_ST_INPROGRESS, 1, 64);
		for (k = 0; k < CC_CORES; k++)
			KUNIT_EXPECT_EQ(test, pto_cap_core_advance(&x->c[ord[k]], 2),
					PTO_CAPP_WAIT);
		KUNIT_EXPECT_EQ(test, x->a.reqs[pub].request_tick, tick + 1);
		KUNIT_EXPECT_EQ(test, x->a.reqs[pub].phase_seq, seq);
		KUNIT_EXPECT_EQ(test, x->a.reqs[pub].arg_index, 1u);
		KUNIT_EXPECT_EQ(test, x->a.reqs[pub].arg_cursor, 64ULL);
		cc_serve(test, pub, PTO_CS_ST_SEALED, 2, 0);
		for (k = 0; k < CC_CORES; k++)
			KUNIT_EXPECT_EQ(test, pto_cap_core_advance(&x->c[ord[k]], 3),
					PTO_CAPP_PASSED);

		cc_begin_all(x, PTO_CS_AFTER, 4);
		for (k = 0; k < CC_CORES; k++)
			KUNIT_EXPECT_EQ(test, pto_cap_core_advance(&x->c[ord[k]], 5),
					PTO_CAPP_WAIT);
		pub = cc_publisher(x);
		KUNIT_ASSERT_GE(test, pub, 0);
		KUNIT_EXPECT_NE(test, x->a.reqs[pub].phase_seq, 0u);
		cc_serve(test, pub, PTO_CS_ST_SEALED, 1, 0);
		settled = 0;
		for (k = 0; k < CC_CORES; k++)
			x->c[k].settled = false;
		/* The publisher last here, so no one waits on the mask. */
		for (k = 0; k < CC_CORES; k++) {
			int i = ord[k];

			KUNIT_EXPECT_EQ(test, pto_cap_core_advance(&x->c[i], 6),
					PTO_CAPP_PASSED);
			settled += x->c[i].settled;
		}
		KUNIT_EXPECT_EQ(test, settled, 1);
		KUNIT_EXPECT_EQ(test, cc_claim(x),
				PTO_CS_CLAIM(PTO_CS_SETTLED, occ));
	}
}

/*
 * Criterion 5: the AFTER publisher leaves, and SETTLED is stored, only
 * once the late peer released; completion is its to publish.
 */
static void cap_late_departure(struct kunit *test)
{
	struct cc_ctx *x = test->priv;
	int pub, i;

	cc_begin_all(x, PTO_CS_BEFORE, 0);
	for (i = 0; i < CC_CORES; i++)
		pto_cap_core_advance(&x->c[i], 0);
	cc_serve(test, cc_publisher(x), PTO_CS_ST_SEALED, 0, 0);
	for (i = 0; i < CC_CORES; i++)
		KUNIT_ASSERT_EQ(test, pto_cap_core_advance(&x->c[i], 1),
				PTO_CAPP_PASSED);
	cc_begin_all(x, PTO_CS_AFTER, 2);
	for (i = 0; i < CC_CORES; i++)
		pto_cap_core_advance(&x->c[i], 2);
	pub = cc_publisher(x);
	KUNIT_ASSERT_EQ(test, pub, 2);
	cc_serve(test, pub, PTO_CS_ST_SEALED, 0, 0);
	/* The publisher released, its seal still read: it waits. */
	KUNIT_EXPECT_EQ(test, pto_cap_core_advance(&x->c[2], 3), PTO_CAPP_WAIT);
	KUNIT_EXPECT_EQ(test, pto_cap_core_advance(&x->c[0], 3), PTO_CAPP_PASSED);
	KUNIT_EXPECT_EQ(test, pto_cap_core_advance(&x->c[2], 500), PTO_CAPP_WAIT);
	KUNIT_EXPECT_EQ(test, cc_claim(x), PTO_CS_CLAIM(PTO_CS_READY, 1));
	KUNIT_EXPECT_FALSE(test, x->c[0].settled || x->c[2].settled);
	/* Past the first budget: a seal being left is not aborted. */
	KUNIT_EXPECT_EQ(test, pto_cap_core_advance(&x->c[2], 2 + CC_BUDGET * 2),
			PTO_CAPP_WAIT);
	KUNIT_EXPECT_EQ(test, atomic64_read(&x->a.slots[0].aborted), 0LL);
	/* Core 1 departs very late: it completes the mask and settles. */
	KUNIT_EXPECT_EQ(test, pto_cap_core_advance(&x->c[1], CC_BUDGET * 3),
			PTO_CAPP_PASSED);
	KUNIT_EXPECT_TRUE(test, x->c[1].settled);
	KUNIT_EXPECT_EQ(test, cc_claim(x), PTO_CS_CLAIM(PTO_CS_SETTLED, 1));
	KUNIT_EXPECT_EQ(test, pto_cap_core_advance(&x->c[2], CC_BUDGET * 3),
			PTO_CAPP_PASSED);
	KUNIT_EXPECT_FALSE(test, x->c[2].settled);
}

/*
 * WouldBlock: the publisher republishes only after its back-off, the same
 * argument and cursor, the same phase_seq.
 */
static void cap_wouldblock_backoff(struct kunit *test)
{
	struct cc_ctx *x = test->priv;
	u64 tick;
	int i;

	cc_begin_all(x, PTO_CS_BEFORE, 0);
	for (i = 0; i < CC_CORES; i++)
		pto_cap_core_advance(&x->c[i], 10);
	cc_serve(test, 2, PTO_CS_ST_INPROGRESS, 3, 4096);
	pto_cap_core_advance(&x->c[2], 10);
	tick = x->a.reqs[2].request_tick;
	cc_serve(test, 2, PTO_CS_ST_WOULDBLOCK, 3, 4096);
	KUNIT_EXPECT_EQ(test, pto_cap_core_advance(&x->c[2], 20), PTO_CAPP_WAIT);
	KUNIT_EXPECT_EQ(test, x->c[2].at, (u32)PTO_CAPC_BACKOFF);
	KUNIT_EXPECT_EQ(test, pto_cap_core_advance(&x->c[2], 20 + CC_BACKOFF - 1),
			PTO_CAPP_WAIT);
	KUNIT_EXPECT_EQ(test, x->a.reqs[2].request_tick, tick);
	KUNIT_EXPECT_EQ(test, pto_cap_core_advance(&x->c[2], 20 + CC_BACKOFF),
			PTO_CAPP_WAIT);
	KUNIT_EXPECT_TRUE(test, x->c[2].kick & PTO_CAPK_SV);
	KUNIT_EXPECT_EQ(test, x->a.reqs[2].request_tick, tick + 1);
	KUNIT_EXPECT_EQ(test, x->a.reqs[2].arg_index, 3u);
	KUNIT_EXPECT_EQ(test, x->a.reqs[2].arg_cursor, 4096ULL);
	KUNIT_EXPECT_EQ(test, x->a.reqs[2].phase_seq, 1u);
}

/*
 * Criterion 3: a claimer descheduled in CLAIMING ends the run at each
 * waiter's budget, with nothing written.
 */
static void cap_init_lost(struct kunit *test)
{
	struct cc_ctx *x = test->priv;
	u64 w[8], w2[8];

	KUNIT_ASSERT_EQ(test, pto_cs_claim(&x->c[0].part), PTO_CS_CLAIMED);
	pto_cap_core_begin(&x->c[1], PTO_CS_BEFORE, 100);
	KUNIT_EXPECT_EQ(test, pto_cap_core_advance(&x->c[1], 100), PTO_CAPP_WAIT);
	memcpy(w, &x->a.slots[0], 64);
	KUNIT_EXPECT_EQ(test, pto_cap_core_advance(&x->c[1], 100 + CC_BUDGET - 1),
			PTO_CAPP_WAIT);
	KUNIT_EXPECT_EQ(test, pto_cap_core_advance(&x->c[1], 100 + CC_BUDGET),
			PTO_CAPP_FATAL);
	KUNIT_EXPECT_EQ(test, x->c[1].status, (u32)PTO_TASK_ECAPTURE_INIT_LOST);
	memcpy(w2, &x->a.slots[0], 64);
	KUNIT_EXPECT_EQ(test, memcmp(w, w2, 64), 0);
	KUNIT_EXPECT_EQ(test, w2[0], PTO_CS_CLAIM(PTO_CS_CLAIMING, 1));
	KUNIT_EXPECT_EQ(test, x->a.reqs[1].request_tick, 0ULL);
}

/*
 * Criterion 10 at the core: the first budget raises aborted and keeps
 * polling; the supervisor's Aborted answer releases every participant into
 * the fatal path; no release bit, no SETTLED.
 */
static void cap_timeout_then_aborted(struct kunit *test)
{
	struct cc_ctx *x = test->priv;
	struct pto_capture_slot *s = &x->a.slots[0];
	int i;

	cc_begin_all(x, PTO_CS_BEFORE, 0);
	for (i = 0; i < CC_CORES; i++)
		pto_cap_core_advance(&x->c[i], 0);
	KUNIT_EXPECT_EQ(test, pto_cap_core_advance(&x->c[0], CC_BUDGET),
			PTO_CAPP_WAIT);
	KUNIT_EXPECT_TRUE(test, x->c[0].kick & PTO_CAPK_SV);
	KUNIT_EXPECT_EQ(test, (u64)atomic64_read(&s->aborted),
			PTO_CS_ABORT_WORD(PTO_CS_ABORT_SITE(PTO_CS_BEFORE, 0)));
	/* A second waiter's budget does not overwrite the site. */
	KUNIT_EXPECT_EQ(test, pto_cap_core_advance(&x->c[1], CC_BUDGET + 1),
			PTO_CAPP_WAIT);
	KUNIT_EXPECT_EQ(test, (u64)atomic64_read(&s->aborted),
			PTO_CS_ABORT_WORD(PTO_CS_ABORT_SITE(PTO_CS_BEFORE, 0)));
	KUNIT_EXPECT_TRUE(test, pto_cs_slot_aborted(&x->a, 0));
	cc_serve(test, 2, PTO_CS_ST_ABORTED, 0, 0);
	for (i = 0; i < CC_CORES; i++) {
		KUNIT_EXPECT_EQ(test, pto_cap_core_advance(&x->c[i], CC_BUDGET + 2),
				PTO_CAPP_FATAL);
		KUNIT_EXPECT_EQ(test, x->c[i].status,
				(u32)PTO_TASK_ECAPTURE_TIMEOUT);
	}
	KUNIT_EXPECT_EQ(test, atomic64_read(&s->released[PTO_CS_BEFORE]), 0LL);
	KUNIT_EXPECT_EQ(test, (u64)atomic64_read(&s->claim),
			PTO_CS_CLAIM(PTO_CS_READY, 1));
}

/* No answer at all: the second budget leaves with no further word written. */
static void cap_lost_no_answer(struct kunit *test)
{
	struct cc_ctx *x = test->priv;
	u64 w[8], w2[8];
	int i;

	cc_begin_all(x, PTO_CS_BEFORE, 0);
	for (i = 0; i < CC_CORES; i++)
		pto_cap_core_advance(&x->c[i], 0);
	for (i = 0; i < CC_CORES; i++)
		KUNIT_EXPECT_EQ(test, pto_cap_core_advance(&x->c[i], CC_BUDGET),
				PTO_CAPP_WAIT);
	memcpy(w, &x->a.slots[0], 64);
	for (i = 0; i < CC_CORES; i++) {
		KUNIT_EXPECT_EQ(test, pto_cap_core_advance(&x->c[i], CC_LOST - 1),
				PTO_CAPP_WAIT);
		KUNIT_EXPECT_EQ(test, pto_cap_core_advance(&x->c[i], CC_LOST),
				PTO_CAPP_FATAL);
		KUNIT_EXPECT_EQ(test, x->c[i].status,
				(u32)PTO_TASK_ECAPTURE_TIMEOUT);
	}
	memcpy(w2, &x->a.slots[0], 64);
	KUNIT_EXPECT_EQ(test, memcmp(w, w2, 64), 0);
}

/*
 * A copy that advances is not timed out, for the publisher or its peers;
 * WouldBlock answers are no progress.
 */
static void cap_progress_restarts_budget(struct kunit *test)
{
	struct cc_ctx *x = test->priv;
	struct pto_capture_slot *s = &x->a.slots[0];
	u64 now = 0;
	int i, n;

	cc_begin_all(x, PTO_CS_BEFORE, 0);
	for (i = 0; i < CC_CORES; i++)
		pto_cap_core_advance(&x->c[i], 0);
	for (n = 1; n <= 5; n++) {
		now += CC_BUDGET / 2;
		cc_serve(test, 2, PTO_CS_ST_INPROGRESS, 0, n * 4096);
		for (i = 0; i < CC_CORES; i++)
			KUNIT_EXPECT_EQ(test, pto_cap_core_advance(&x->c[i], now),
					PTO_CAPP_WAIT);
	}
	KUNIT_EXPECT_EQ(test, atomic64_read(&s->aborted), 0LL);
	/* Back-pressure that never clears: the budget runs out. */
	cc_serve(test, 2, PTO_CS_ST_WOULDBLOCK, 0, 5 * 4096);
	for (n = 1; n <= 2; n++) {
		now += CC_BUDGET / 2;
		for (i = 0; i < CC_CORES; i++)
			pto_cap_core_advance(&x->c[i], now);
		if (x->a.reqs[2].request_tick != x->last_tick[2])
			cc_serve(test, 2, PTO_CS_ST_WOULDBLOCK, 0, 5 * 4096);
	}
	KUNIT_EXPECT_NE(test, atomic64_read(&s->aborted), 0LL);
}

static struct kunit_case pto_capture_core_cases[] = {
	KUNIT_CASE(cap_no_run_before_seal),
	KUNIT_CASE(cap_late_departure),
	KUNIT_CASE(cap_wouldblock_backoff),
	KUNIT_CASE(cap_init_lost),
	KUNIT_CASE(cap_timeout_then_aborted),
	KUNIT_CASE(cap_lost_no_answer),
	KUNIT_CASE(cap_progress_restarts_budget),
	{}
};

static struct kunit_suite pto_capture_core_suite = {
	.name = "pto_capture_core",
	.init = cc_init,
	.exit = cc_exit,
	.test_cases = pto_capture_core_cases,
};
kunit_test_suite(pto_capture_core_suite);
