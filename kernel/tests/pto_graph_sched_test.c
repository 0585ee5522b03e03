// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: the resident route's on-core steps without threads.
 * pto_graph_sched: pending slots, MIX, successors, completion, a leaving
 * core, a single-AIV task on either AIV, oldest-first claims, and which
 * parked cores a kick wakes.
 */
#include <kunit/test.h>
#include <linux/slab.h>
#include "../pto_mock.h"
#include "pto_graph_fixture.h"

/* Run one claimed subtask's kernel on the test core; publish its end. */
static bool run_sub(struct kunit *test, struct pto_graph *g, u32 core_id,
		    const struct pto_gclaim *cl, bool *pushed)
{
	struct graph_ctx *ctx = test->priv;
	u32 err = pto_task_run(&ctx->core, &g->sub[cl->sub], NULL);

	KUNIT_EXPECT_EQ(test, err, PTO_TASK_OK);
	return pto_graph_finish(g, core_id, cl, err, 1, 2, pushed);
}

static void graph_sched_diamond(struct kunit *test)
{
	struct graph_ctx *ctx = test->priv;
	struct pto_graph_launch args;
	struct pto_gclaim cl, c1, c2;
	struct pto_graph *g;
	bool pushed;
	struct tg *tg;
	u32 *out = ctx->bo[1].vaddr;
	int i;

	tg = kunit_kzalloc(test, sizeof(*tg), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, tg);
	pto_gt_diamond(tg);
	g = pto_gt_build(test, tg, 0, NULL, &args);
	KUNIT_ASSERT_FALSE(test, IS_ERR(g));
	g->clusters = BIT_ULL(1);	/* cores 3 (AIC), 4, 5 (AIVs) */
	pto_graph_start(g, 0);

	/* Cluster 0 is not the graph's: its cores take nothing. */
	KUNIT_EXPECT_FALSE(test, pto_graph_claim(g, 0, &cl));
	/* Only task 0 (AIC) is ready: an AIV claims it for its AIC. */
	KUNIT_EXPECT_TRUE(test, pto_graph_has_work(g, 4));
	KUNIT_EXPECT_FALSE(test, pto_graph_claim(g, 4, &cl));
	KUNIT_EXPECT_TRUE(test, cl.placed);	/* its AIC is to be kicked */
	KUNIT_EXPECT_EQ(test, g->slots[1][0].task, 0U);
	KUNIT_EXPECT_EQ(test, g->slots[1][0].mask, (u8)PTO_GRAPH_AIC);
	KUNIT_EXPECT_FALSE(test, pto_graph_has_work(g, 4));
	KUNIT_ASSERT_TRUE(test, pto_graph_claim(g, 3, &cl));
	KUNIT_EXPECT_EQ(test, cl.task, 0U);
	KUNIT_EXPECT_FALSE(test, cl.placed);
	KUNIT_EXPECT_FALSE(test, pto_graph_claim(g, 3, &c1));
	KUNIT_EXPECT_FALSE(test, c1.placed);
	KUNIT_EXPECT_FALSE(test, run_sub(test, g, 3, &cl, &pushed));
	KUNIT_EXPECT_TRUE(test, pushed);
	/* Tasks 1 and 2 fill both pending slots, one for each AIV. */
	KUNIT_ASSERT_TRUE(test, pto_graph_claim(g, 4, &c1));
	KUNIT_EXPECT_EQ(test, c1.task, 1U);
	KUNIT_EXPECT_EQ(test, g->inflight, 1U);
	KUNIT_EXPECT_TRUE(test, pto_graph_has_work(g, 5));
	KUNIT_ASSERT_TRUE(test, pto_graph_claim(g, 5, &c2));
	KUNIT_EXPECT_EQ(test, c2.task, 2U);
	KUNIT_EXPECT_EQ(test, c2.slot, 1U);
	KUNIT_EXPECT_EQ(test, g->inflight, 2U);
	KUNIT_EXPECT_FALSE(test, run_sub(test, g, 4, &c1, &pushed));
	KUNIT_EXPECT_FALSE(test, pushed);	/* task 3 still waits for 2 */
	KUNIT_EXPECT_FALSE(test, pto_graph_claim(g, 3, &cl));
	KUNIT_EXPECT_FALSE(test, run_sub(test, g, 5, &c2, &pushed));
	KUNIT_EXPECT_TRUE(test, pushed);
	/* The MIX task: one slot, one subtask per core, ends at the third. */
	KUNIT_ASSERT_TRUE(test, pto_graph_claim(g, 5, &c2));
	KUNIT_EXPECT_EQ(test, c2.task, 3U);
	KUNIT_EXPECT_EQ(test, c2.sub, g->tasks[3].sub + 2);
	KUNIT_ASSERT_TRUE(test, pto_graph_claim(g, 3, &cl));
	KUNIT_ASSERT_TRUE(test, pto_graph_claim(g, 4, &c1));
	KUNIT_EXPECT_FALSE(test, pto_graph_claim(g, 4, &c1));
	KUNIT_EXPECT_FALSE(test, run_sub(test, g, 5, &c2, &pushed));
	KUNIT_EXPECT_FALSE(test, run_sub(test, g, 3, &cl, &pushed));
	KUNIT_EXPECT_FALSE(test, g->done);
	KUNIT_EXPECT_TRUE(test, run_sub(test, g, 4, &c1, &pushed));
	KUNIT_EXPECT_TRUE(test, g->done);
	KUNIT_EXPECT_EQ(test, g->completed, 4U);
	KUNIT_EXPECT_EQ(test, g->subtasks, 6ULL);
	KUNIT_EXPECT_EQ(test, g->err_task, PTO_GRAPH_TASK_NONE);
	for (i = 0; i < 16; i++)
		KUNIT_EXPECT_EQ(test, out[i], 12U);
	pto_graph_put(g);
	pto_gt_expect_no_refs(test);
}

/* A core that leaves mid-graph: the graph fails, the in-flight drain. */
static void graph_sched_leave(struct kunit *test)
{
	struct pto_graph_launch args;
	struct pto_gclaim cl, c1;
	struct pto_graph *g;
	bool pushed, done;
	struct tg *tg;

	tg = kunit_kzalloc(test, sizeof(*tg), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, tg);
	pto_gt_diamond(tg);
	g = pto_gt_build(test, tg, 0, NULL, &args);
	KUNIT_ASSERT_FALSE(test, IS_ERR(g));
	g->clusters = BIT_ULL(0);
	KUNIT_ASSERT_TRUE(test, pto_graph_claim(g, 0, &cl));
	KUNIT_EXPECT_FALSE(test, run_sub(test, g, 0, &cl, &pushed));
	/* The AIC claims tasks 1 and 2 into the slots for its AIVs. */
	KUNIT_EXPECT_FALSE(test, pto_graph_claim(g, 0, &c1));
	KUNIT_EXPECT_EQ(test, g->inflight, 2U);
	KUNIT_ASSERT_TRUE(test, pto_graph_claim(g, 1, &c1));
	/* Core 1 runs task 1; core 2 (task 2 waits for it) retires. */
	spin_lock(&g->lock);
	done = pto_graph_core_leave_locked(g, 2);
	spin_unlock(&g->lock);
	KUNIT_EXPECT_FALSE(test, done);
	KUNIT_EXPECT_TRUE(test, g->aborted);
	KUNIT_EXPECT_EQ(test, g->err_status, (u32)PTO_TASK_ESTOP);
	KUNIT_EXPECT_EQ(test, g->tasks[2].status, (u32)PTO_TASK_ESTOP);
	KUNIT_EXPECT_FALSE(test, pto_graph_has_work(g, 0));
	KUNIT_EXPECT_TRUE(test, run_sub(test, g, 1, &c1, &pushed));
	KUNIT_EXPECT_FALSE(test, pushed);
	KUNIT_EXPECT_TRUE(test, g->done);
	KUNIT_EXPECT_EQ(test, g->completed, 3U);
	KUNIT_EXPECT_EQ(test, g->inflight, 0U);
	pto_graph_put(g);
	pto_gt_expect_no_refs(test);
}

/*
 * Single-AIV tasks run on whichever AIV of the cluster is free: two
 * independent AIV0 tasks run at once on both AIVs, and an AIV1 task
 * waiting in a slot is taken by AIV0 while AIV1 is busy.
 */
static void graph_sched_either_aiv(struct kunit *test)
{
	struct pto_graph_launch args;
	struct pto_gclaim c0, c1;
	struct pto_graph *g;
	bool pushed;
	struct tg *tg;
	u32 i;

	tg = kunit_kzalloc(test, sizeof(*tg), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, tg);
	tg->n = 4;
	for (i = 0; i < tg->n; i++)
		tg->t[i].active_mask = i < 2 ? PTO_GRAPH_AIV0 : PTO_GRAPH_AIV1;
	pto_gt_seal(tg);
	g = pto_gt_build(test, tg, 0, NULL, &args);
	KUNIT_ASSERT_FALSE(test, IS_ERR(g));
	g->clusters = BIT_ULL(1);	/* cores 3 (AIC), 4, 5 (AIVs) */
	KUNIT_ASSERT_TRUE(test, pto_graph_claim(g, 4, &c0));
	KUNIT_EXPECT_EQ(test, c0.task, 0U);
	/* AIV1 takes the second AIV0 task: both run at once. */
	KUNIT_EXPECT_TRUE(test, pto_graph_has_work(g, 5));
	KUNIT_ASSERT_TRUE(test, pto_graph_claim(g, 5, &c1));
	KUNIT_EXPECT_EQ(test, c1.task, 1U);
	KUNIT_EXPECT_EQ(test, c1.bit, (u8)PTO_GRAPH_AIV1);
	KUNIT_EXPECT_EQ(test, c1.sub, g->tasks[1].sub);
	KUNIT_EXPECT_EQ(test, g->inflight, 2U);
	KUNIT_EXPECT_EQ(test, g->slots[1][1].mask, (u8)PTO_GRAPH_AIV1);
	/* The AIC takes neither; a busy AIV's slot is not taken twice. */
	KUNIT_EXPECT_FALSE(test, pto_graph_has_work(g, 3));
	KUNIT_EXPECT_FALSE(test, run_sub(test, g, 4, &c0, &pushed));
	/* AIV0 is free: it claims task 2 (an AIV1 task) and runs it. */
	KUNIT_ASSERT_TRUE(test, pto_graph_claim(g, 4, &c0));
	KUNIT_EXPECT_EQ(test, c0.task, 2U);
	KUNIT_EXPECT_EQ(test, c0.bit, (u8)PTO_GRAPH_AIV0);
	KUNIT_EXPECT_EQ(test, g->slots[1][0].mask, (u8)PTO_GRAPH_AIV0);
	KUNIT_EXPECT_FALSE(test, run_sub(test, g, 5, &c1, &pushed));
	KUNIT_EXPECT_FALSE(test, run_sub(test, g, 4, &c0, &pushed));
	KUNIT_ASSERT_TRUE(test, pto_graph_claim(g, 5, &c1));
	KUNIT_EXPECT_EQ(test, c1.task, 3U);
	KUNIT_EXPECT_TRUE(test, run_sub(test, g, 5, &c1, &pushed));
	KUNIT_EXPECT_TRUE(test, g->done);
	KUNIT_EXPECT_EQ(test, g->completed, 4U);
	pto_graph_put(g);
	pto_gt_expect_no_refs(test);
}

/*
 * A core takes the oldest placed slot that wants it, not the lowest:
 * AIV0 X claims Q (both AIVs) into slot 1 while slot 0 runs P; slot 0
 * frees and R (both AIVs) is placed there; AIV1 Y then takes Q, the
 * older, so a barrier of Q never waits for a core inside R.
 */
static void graph_claim_oldest_first(struct kunit *test)
{
	const u8 xy = PTO_GRAPH_AIV0 | PTO_GRAPH_AIV1;
	struct pto_graph_launch args;
	struct pto_gclaim p, x, y;
	struct pto_graph *g;
	bool pushed;
	struct tg *tg;

	tg = kunit_kzalloc(test, sizeof(*tg), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, tg);
	tg->n = 4;	/* P, Q, R, S: roots, ready in this order */
	tg->t[0].active_mask = PTO_GRAPH_AIC;
	tg->t[1].active_mask = xy;
	tg->t[2].active_mask = xy;
	tg->t[3].active_mask = PTO_GRAPH_AIV0;
	pto_gt_seal(tg);
	g = pto_gt_build(test, tg, 0, NULL, &args);
	KUNIT_ASSERT_FALSE(test, IS_ERR(g));
	g->clusters = BIT_ULL(1);	/* cores 3 (AIC), 4, 5 (AIVs) */
	KUNIT_ASSERT_TRUE(test, pto_graph_claim(g, 3, &p));
	KUNIT_EXPECT_EQ(test, p.slot, 0U);
	KUNIT_EXPECT_EQ(test, p.mask, (u8)PTO_GRAPH_AIC);
	/* X claims Q into slot 1: slot 0 is busy. */
	KUNIT_ASSERT_TRUE(test, pto_graph_claim(g, 4, &x));
	KUNIT_EXPECT_EQ(test, x.task, 1U);
	KUNIT_EXPECT_EQ(test, x.slot, 1U);
	KUNIT_EXPECT_EQ(test, x.mask, xy);
	/* Slot 0 frees; the AIC places R there for X and Y. */
	KUNIT_EXPECT_FALSE(test, run_sub(test, g, 3, &p, &pushed));
	KUNIT_EXPECT_FALSE(test, pto_graph_claim(g, 3, &p));
	KUNIT_EXPECT_TRUE(test, p.placed);
	KUNIT_EXPECT_EQ(test, g->slots[1][0].task, 2U);
	/* Y: both slots want it; it takes Q, the older, from slot 1. */
	KUNIT_ASSERT_TRUE(test, pto_graph_claim(g, 5, &y));
	KUNIT_EXPECT_EQ(test, y.task, 1U);
	KUNIT_EXPECT_EQ(test, y.slot, 1U);
	KUNIT_EXPECT_EQ(test, y.mask, xy);
	KUNIT_EXPECT_FALSE(test, run_sub(test, g, 4, &x, &pushed));
	KUNIT_EXPECT_FALSE(test, run_sub(test, g, 5, &y, &pushed));
	/* Then both take R, in slot 0, before S is placed. */
	KUNIT_ASSERT_TRUE(test, pto_graph_claim(g, 5, &y));
	KUNIT_EXPECT_EQ(test, y.task, 2U);
	KUNIT_EXPECT_EQ(test, y.slot, 0U);
	KUNIT_ASSERT_TRUE(test, pto_graph_claim(g, 4, &x));
	KUNIT_EXPECT_EQ(test, x.task, 2U);
	KUNIT_EXPECT_EQ(test, x.mask, xy);
	KUNIT_EXPECT_FALSE(test, run_sub(test, g, 5, &y, &pushed));
	KUNIT_EXPECT_FALSE(test, run_sub(test, g, 4, &x, &pushed));
	/* S names AIV0, AIV1 takes it: its participant mask is AIV1. */
	KUNIT_ASSERT_TRUE(test, pto_graph_claim(g, 5, &y));
	KUNIT_EXPECT_EQ(test, y.task, 3U);
	KUNIT_EXPECT_EQ(test, y.mask, (u8)PTO_GRAPH_AIV1);
	KUNIT_EXPECT_TRUE(test, run_sub(test, g, 5, &y, &pushed));
	KUNIT_EXPECT_EQ(test, g->completed, 4U);
	pto_graph_put(g);
	pto_gt_expect_no_refs(test);
}

/*
 * A kick wakes each core a slot names, but one core only for the ready
 * queue; a core with neither, or of another cluster, is left parked.
 */
static void graph_kick_wants(struct kunit *test)
{
	struct pto_graph_launch args;
	struct pto_gclaim cl;
	struct pto_graph *g;
	unsigned int budget = 1;
	struct tg *tg;
	u32 i;

	tg = kunit_kzalloc(test, sizeof(*tg), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, tg);
	tg->n = 4;
	tg->t[0].active_mask = PTO_GRAPH_AIC;
	for (i = 1; i < tg->n; i++)
		tg->t[i].active_mask = PTO_GRAPH_AIV0;
	pto_gt_seal(tg);
	g = pto_gt_build(test, tg, 0, NULL, &args);
	KUNIT_ASSERT_FALSE(test, IS_ERR(g));
	g->clusters = BIT_ULL(1);	/* cores 3 (AIC), 4, 5 (AIVs) */
	KUNIT_EXPECT_FALSE(test, pto_graph_kick_wants(g, 0, &budget));
	KUNIT_EXPECT_EQ(test, budget, 1U);
	KUNIT_EXPECT_TRUE(test, pto_graph_kick_wants(g, 4, &budget));
	KUNIT_EXPECT_EQ(test, budget, 0U);
	KUNIT_EXPECT_FALSE(test, pto_graph_kick_wants(g, 5, &budget));
	KUNIT_EXPECT_FALSE(test, pto_graph_kick_wants(g, 3, &budget));
	/* AIV0 claims task 0 for its AIC and task 1 for itself. */
	KUNIT_ASSERT_TRUE(test, pto_graph_claim(g, 4, &cl));
	KUNIT_EXPECT_TRUE(test, cl.placed);
	KUNIT_EXPECT_EQ(test, cl.task, 1U);
	/* The AIC has a slot's subtask: woken with no budget left. */
	KUNIT_EXPECT_TRUE(test, pto_graph_kick_wants(g, 3, &budget));
	/* Tasks still queued but both slots taken: AIV1 stays parked. */
	budget = 1;
	KUNIT_EXPECT_FALSE(test, pto_graph_kick_wants(g, 5, &budget));
	KUNIT_EXPECT_EQ(test, budget, 1U);
	pto_graph_put(g);
	pto_gt_expect_no_refs(test);
}

static struct kunit_case pto_graph_sched_cases[] = {
	KUNIT_CASE(graph_sched_diamond),
	KUNIT_CASE(graph_sched_leave),
	KUNIT_CASE(graph_sched_either_aiv),
	KUNIT_CASE(graph_claim_oldest_first),
	KUNIT_CASE(graph_kick_wants),
	{}
};

static struct kunit_suite pto_graph_sched_suite = {
	.name = "pto_graph_sched",
	.init = pto_gt_init,
	.exit = pto_gt_exit,
	.test_cases = pto_graph_sched_cases,
};

kunit_test_suite(pto_graph_sched_suite);
