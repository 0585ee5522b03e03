// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: retirement, with the production helper and the core's
 * production step functions (pto_core_exit_ack, pto_core_may_return), on
 * the fixture's cores without threads (pto_retire_fixture.h).
 */
#include <kunit/test.h>
#include <linux/prandom.h>
#include <linux/slab.h>
#include "../pto_bo.h"
#include "../pto_reset.h"
#include "pto_retire_fixture.h"

/*
 * With CLOSE withheld no AIC or AIV worker may return; with the handoff
 * (close, drain, gate) every one does. The old protocol (mock switch)
 * returns right after the echo: this check fails on it.
 */
static void retire_close_withheld(struct kunit *test)
{
	struct rt *rt = test->priv;
	struct pto_retire_ctx ctx;
	bool old = mock_old_protocol;
	unsigned int i;

	for (i = 0; i < 3; i++)
		pto_rt_launch(test, rt, i);
	KUNIT_EXPECT_EQ(test, rt->core[0].type, (u32)PTO_CORE_AIC);
	KUNIT_EXPECT_EQ(test, rt->core[1].type, (u32)PTO_CORE_AIV);
	pto_retire_init(&ctx, &rt->pdev, PTO_RR_IOCTL);
	KUNIT_ASSERT_EQ(test, pto_retire_claim(&ctx, pto_rt_ids, 3), 0);
	pto_retire_pass_request(&ctx);
	KUNIT_EXPECT_TRUE(test, pto_retire_pass_poll(&ctx));
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_EQ(test, READ_ONCE(rt->core[i].state),
				PTO_CORE_EXITING);
		KUNIT_EXPECT_FALSE(test, pto_core_may_return(&rt->core[i]));
	}
	/* The old protocol would let them go now. */
	mock_old_protocol = true;
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_TRUE(test, pto_core_may_return(&rt->core[i]));
	mock_old_protocol = old;

	pto_retire_pass_close(&ctx);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_FALSE(test, pto_core_may_return(&rt->core[i]));
	pto_retire_pass_release(&ctx);
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_TRUE(test, pto_core_may_return(&rt->core[i]));
		KUNIT_EXPECT_EQ(test, rt->core[i].r_result,
				(u32)(PTO_RETIRE_ACKED | PTO_RETIRE_CLOSED |
				      PTO_RETIRE_RELEASED));
	}
}

/* 32 launches reuse the same gates; no release ever releases the next. */
static void retire_gate_reuse_32(struct kunit *test)
{
	struct rt *rt = test->priv;
	struct pto_retire_ctx ctx;
	u32 prev[3] = { 0 };
	unsigned int r, i;

	for (r = 0; r < 32; r++) {
		for (i = 0; i < 3; i++) {
			pto_rt_launch(test, rt, i);
			KUNIT_EXPECT_EQ(test, rt->core[i].gen, r + 1);
			KUNIT_EXPECT_EQ(test, rt->pdev.gates[i].gate,
					(u32)PTO_GATE_ARMED);
			KUNIT_EXPECT_FALSE(test,
					   pto_core_may_return(&rt->core[i]));
		}
		pto_retire_init(&ctx, &rt->pdev, PTO_RR_IOCTL);
		KUNIT_ASSERT_EQ(test, pto_retire_claim(&ctx, pto_rt_ids, 3), 0);
		pto_retire_run(&ctx);
		for (i = 0; i < 3; i++) {
			struct pto_core *core = &rt->core[i];

			KUNIT_EXPECT_TRUE(test, pto_core_may_return(core));
			KUNIT_EXPECT_EQ(test, core->resp, core->nonce);
			KUNIT_EXPECT_NE(test, core->nonce, prev[i]);
			KUNIT_EXPECT_NE(test, core->nonce, (u32)PTO_COND_EXITED);
			prev[i] = core->nonce;
			pto_rt_return(rt, i);
		}
	}
	KUNIT_EXPECT_EQ(test, pto_rt_count(rt, PTO_RW_GATE, -1), 32U * 3);
}

/* Every request before any EXIT; every close before any gate. */
static void retire_group_order(struct kunit *test)
{
	struct rt *rt = test->priv;
	struct pto_retire_ctx ctx;
	unsigned int i;

	for (i = 0; i < NCORES; i++)
		pto_rt_launch(test, rt, i);
	pto_retire_init(&ctx, &rt->pdev, PTO_RR_RELEASE);
	KUNIT_ASSERT_EQ(test, pto_retire_claim(&ctx, pto_rt_ids, NCORES), 0);
	pto_retire_run(&ctx);
	KUNIT_EXPECT_EQ(test, pto_rt_count(rt, PTO_RW_NONCE, -1), NCORES);
	KUNIT_EXPECT_EQ(test, pto_rt_count(rt, PTO_RW_EXIT, -1), NCORES);
	KUNIT_EXPECT_EQ(test, pto_rt_count(rt, PTO_RW_CLOSE, -1), NCORES);
	KUNIT_EXPECT_EQ(test, pto_rt_count(rt, PTO_RW_GATE, -1), NCORES);
	KUNIT_EXPECT_LT(test, pto_rt_last(rt, PTO_RW_NONCE),
			pto_rt_first(rt, PTO_RW_EXIT, -1));
	KUNIT_EXPECT_LT(test, pto_rt_last(rt, PTO_RW_CLOSE),
			pto_rt_first(rt, PTO_RW_READBACK, -1));
	KUNIT_EXPECT_LT(test, pto_rt_last(rt, PTO_RW_READBACK),
			pto_rt_first(rt, PTO_RW_DRAIN, -1));
	KUNIT_EXPECT_LT(test, pto_rt_last(rt, PTO_RW_DRAIN),
			pto_rt_first(rt, PTO_RW_GATE, -1));
	for (i = 0; i < NCORES; i++) {
		/* Each core: IDLE before CLOSE, and its window read closed. */
		KUNIT_EXPECT_LT(test, pto_rt_first(rt, PTO_RW_IDLE, i),
				pto_rt_first(rt, PTO_RW_CLOSE, i));
		KUNIT_EXPECT_EQ(test,
				rt->ev[pto_rt_first(rt, PTO_RW_READBACK, i)].val,
				(u32)PTO_FAST_PATH_CLOSE);
	}
}

/* One silent core: its peers retire, it stays unclosed and quarantined. */
static void retire_partial_timeout(struct kunit *test)
{
	struct rt *rt = test->priv;
	struct pto_retire_ctx ctx;
	unsigned int i;

	pto_rt_retire_one_silent(test, rt, 0, 4, &ctx);
	KUNIT_EXPECT_GE(test, ctx.elapsed, 50ULL * NSEC_PER_MSEC);
	KUNIT_EXPECT_LT(test, ctx.elapsed, 2000ULL * NSEC_PER_MSEC);
	KUNIT_EXPECT_EQ(test, bitmap_weight(ctx.acked, PTO_MAX_CORES), 5U);
	KUNIT_EXPECT_TRUE(test, test_bit(4, ctx.left));
	KUNIT_EXPECT_TRUE(test, test_bit(PTO_CORE_F_QUARANTINE,
					 &rt->core[4].flags));
	KUNIT_EXPECT_EQ(test, rt->core[4].r_result,
			(u32)PTO_RETIRE_QUARANTINED);
	/* Requested, but never closed nor released. */
	KUNIT_EXPECT_EQ(test, pto_rt_count(rt, PTO_RW_EXIT, 4), 1U);
	KUNIT_EXPECT_EQ(test, pto_rt_count(rt, PTO_RW_IDLE, 4), 0U);
	KUNIT_EXPECT_EQ(test, pto_rt_count(rt, PTO_RW_CLOSE, 4), 0U);
	KUNIT_EXPECT_EQ(test, pto_rt_count(rt, PTO_RW_GATE, 4), 0U);
	KUNIT_EXPECT_EQ(test, rt->pdev.gates[4].gate, (u32)PTO_GATE_ARMED);
	KUNIT_EXPECT_EQ(test, *(u32 *)(rt->core[4].kregs +
				       PTO_KREG_FAST_PATH_ENABLE),
			(u32)PTO_FAST_PATH_OPEN);
	for (i = 0; i < NCORES; i++)
		if (i != 4)
			KUNIT_EXPECT_TRUE(test,
					  pto_core_may_return(&rt->core[i]));
	/* The claim stays consumed: a later request cannot close it. */
	pto_retire_init(&ctx, &rt->pdev, PTO_RR_RELEASE);
	KUNIT_ASSERT_EQ(test, pto_retire_claim(&ctx, &pto_rt_ids[4], 1), 0);
	KUNIT_EXPECT_TRUE(test, bitmap_empty(ctx.set, PTO_MAX_CORES));
	KUNIT_EXPECT_TRUE(test, test_bit(4, ctx.others));
	/* Recovery (reset) takes it over once it answers. */
	pto_retire_init(&ctx, &rt->pdev, PTO_RR_RESET);
	ctx.recovery = true;
	__set_bit(4, ctx.set);
	__set_bit(4, rt->responsive);
	pto_retire_run(&ctx);
	KUNIT_EXPECT_TRUE(test, pto_core_may_return(&rt->core[4]));
	KUNIT_EXPECT_FALSE(test, test_bit(PTO_CORE_F_QUARANTINE,
					  &rt->core[4].flags));
}

/* Out of range and duplicate ids: rejected before any bit is set. */
static void retire_invalid_ids(struct kunit *test)
{
	struct rt *rt = test->priv;
	struct pto_retire_ctx ctx;
	u32 dup[3] = { 1, 2, 1 };
	u32 range[2] = { 0, NCORES };

	pto_rt_launch(test, rt, 0);
	pto_rt_launch(test, rt, 1);
	pto_retire_init(&ctx, &rt->pdev, PTO_RR_IOCTL);
	KUNIT_EXPECT_EQ(test, pto_retire_claim(&ctx, dup, 3), -EINVAL);
	KUNIT_EXPECT_EQ(test, pto_retire_claim(&ctx, range, 2), -EINVAL);
	KUNIT_EXPECT_EQ(test, atomic_read(&rt->core[0].rbits), PTO_RB_READY);
	KUNIT_EXPECT_EQ(test, atomic_read(&rt->core[1].rbits), PTO_RB_READY);
	KUNIT_EXPECT_TRUE(test, bitmap_empty(ctx.set, PTO_MAX_CORES));
	KUNIT_EXPECT_EQ(test, rt->nev, 0U);
}

/*
 * Zero register address, invalid physical id, incomplete handshake: the
 * checks run after the claim (REQUESTED recorded) and leave the core for
 * recovery, never closed blindly; its peers retire.
 */
static void retire_invalid_targets(struct kunit *test)
{
	struct rt *rt = test->priv;
	struct pto_retire_ctx ctx;
	void *kregs;
	unsigned int i;

	for (i = 0; i < 4; i++)
		pto_rt_launch(test, rt, i);
	rt->pdev.workers[1].phys_id = 77;
	WRITE_ONCE(rt->pdev.workers[2].done, 0);
	kregs = rt->core[3].kregs;
	rt->core[3].kregs = NULL;
	pto_retire_init(&ctx, &rt->pdev, PTO_RR_IOCTL);
	KUNIT_ASSERT_EQ(test, pto_retire_claim(&ctx, pto_rt_ids, 4), 0);
	rt->core[3].kregs = kregs;
	for (i = 1; i < 4; i++) {
		KUNIT_EXPECT_TRUE(test, test_bit(i, ctx.left));
		KUNIT_EXPECT_FALSE(test, test_bit(i, ctx.set));
		KUNIT_EXPECT_EQ(test, atomic_read(&rt->core[i].rbits),
				PTO_RB_READY | PTO_RB_REQUESTED);
		KUNIT_EXPECT_TRUE(test, test_bit(PTO_CORE_F_QUARANTINE,
						 &rt->core[i].flags));
	}
	pto_retire_run(&ctx);
	KUNIT_EXPECT_EQ(test, pto_rt_count(rt, PTO_RW_GATE, 0), 1U);
	for (i = 1; i < 4; i++)
		KUNIT_EXPECT_EQ(test, pto_rt_count(rt, PTO_RW_NONCE, i) +
				pto_rt_count(rt, PTO_RW_CLOSE, i) +
				pto_rt_count(rt, PTO_RW_GATE, i), 0U);
}

/*
 * A request before READY stays pending (paused after the windows opened,
 * before execution state is published) and the publisher services it; a
 * duplicate never elects a second owner. On an initialization failure the
 * publisher publishes the windows it opened, which then retire; the core
 * whose init failed keeps its request pending and is never written.
 */
static void retire_pending_until_publish(struct kunit *test)
{
	struct rt *rt = test->priv;
	struct pto_retire_ctx em, pub;
	unsigned int i;

	for (i = 0; i < 3; i++)
		pto_rt_arm(rt, i);	/* windows open, READY not published */
	pto_retire_init(&em, &rt->pdev, PTO_RR_FATAL);
	KUNIT_ASSERT_EQ(test, pto_retire_claim(&em, pto_rt_ids, 3), 0);
	KUNIT_EXPECT_TRUE(test, bitmap_empty(em.set, PTO_MAX_CORES));
	KUNIT_EXPECT_EQ(test, bitmap_weight(em.others, PTO_MAX_CORES), 3U);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, atomic_read(&rt->core[i].rbits),
				PTO_RB_REQUESTED);
	/* A duplicate request changes nothing. */
	KUNIT_EXPECT_FALSE(test, pto_retire_request(&rt->core[0]));
	pto_retire_run(&em);
	KUNIT_EXPECT_EQ(test, rt->nev, 0U);

	/* Cores 0 and 1 initialized; core 2's init failed. */
	pto_retire_init(&pub, &rt->pdev, PTO_RR_LAUNCH);
	for (i = 0; i < 2; i++) {
		KUNIT_EXPECT_TRUE(test, pto_retire_publish(&rt->core[i]));
		pto_retire_take(&pub, &rt->core[i]);
	}
	KUNIT_EXPECT_FALSE(test, pto_retire_request(&rt->core[0]));
	pto_retire_run(&pub);
	for (i = 0; i < 2; i++) {
		KUNIT_EXPECT_TRUE(test, pto_core_may_return(&rt->core[i]));
		KUNIT_EXPECT_EQ(test, pto_rt_count(rt, PTO_RW_GATE, i), 1U);
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&rt->core[2].rbits),
			PTO_RB_REQUESTED);
	KUNIT_EXPECT_EQ(test, pto_rt_count(rt, PTO_RW_NONCE, 2), 0U);
	KUNIT_EXPECT_FALSE(test, pto_core_may_return(&rt->core[2]));
}

/*
 * Normal and emergency requests race on every core, in seeded random
 * orders: exactly one owner per core, each core requested, closed and
 * released exactly once, and a late normal finalization writes nothing.
 */
static void retire_normal_emergency_race(struct kunit *test)
{
	struct rt *rt = test->priv;
	struct pto_retire_ctx *n, *e, *late;
	struct rnd_state rnd;
	unsigned int round, i;

	n = kunit_kzalloc(test, sizeof(*n), GFP_KERNEL);
	e = kunit_kzalloc(test, sizeof(*e), GFP_KERNEL);
	late = kunit_kzalloc(test, sizeof(*late), GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, n && e && late);
	prandom_seed_state(&rnd, 3);
	for (round = 0; round < 50; round++) {
		DECLARE_BITMAP(both, PTO_MAX_CORES);
		unsigned int base = rt->nev = 0;

		for (i = 0; i < NCORES; i++)
			pto_rt_launch(test, rt, i);
		pto_retire_init(n, &rt->pdev, PTO_RR_IOCTL);
		pto_retire_init(e, &rt->pdev, PTO_RR_FATAL);
		/* Interleave the two claims core by core, random order. */
		for (i = 0; i < NCORES; i++) {
			bool first_n = prandom_u32_state(&rnd) & 1;

			KUNIT_ASSERT_EQ(test, pto_retire_claim(first_n ? n : e,
							       &pto_rt_ids[i], 1),
					0);
			KUNIT_ASSERT_EQ(test, pto_retire_claim(first_n ? e : n,
							       &pto_rt_ids[i], 1),
					0);
			KUNIT_EXPECT_NE(test, test_bit(i, n->set),
					test_bit(i, e->set));
			KUNIT_EXPECT_EQ(test, test_bit(i, n->set),
					test_bit(i, e->others));
		}
		bitmap_and(both, n->set, e->set, PTO_MAX_CORES);
		KUNIT_EXPECT_TRUE(test, bitmap_empty(both, PTO_MAX_CORES));
		if (prandom_u32_state(&rnd) & 1) {
			pto_retire_run(e);
			pto_retire_run(n);
		} else {
			pto_retire_run(n);
			pto_retire_run(e);
		}
		for (i = 0; i < NCORES; i++) {
			KUNIT_EXPECT_EQ(test, pto_rt_count(rt, PTO_RW_NONCE, i), 1U);
			KUNIT_EXPECT_EQ(test, pto_rt_count(rt, PTO_RW_CLOSE, i), 1U);
			KUNIT_EXPECT_EQ(test, pto_rt_count(rt, PTO_RW_GATE, i), 1U);
			KUNIT_EXPECT_TRUE(test,
					  pto_core_may_return(&rt->core[i]));
		}
		/* The latch: a late normal finalization writes nothing. */
		base = rt->nev;
		pto_retire_init(late, &rt->pdev, PTO_RR_IOCTL);
		KUNIT_ASSERT_EQ(test, pto_retire_claim(late, pto_rt_ids, NCORES),
				0);
		pto_retire_run(late);
		KUNIT_EXPECT_EQ(test, rt->nev, base);
		KUNIT_EXPECT_TRUE(test, bitmap_empty(late->set, PTO_MAX_CORES));
		for (i = 0; i < NCORES; i++)
			pto_rt_return(rt, i);
	}
}

/* The leader's arm resets the generation: bits, request, gate, control. */
static void retire_generation_reset(struct kunit *test)
{
	struct rt *rt = test->priv;
	struct pto_core *core = &rt->core[1];
	struct pto_retire_ctx ctx;

	pto_rt_launch(test, rt, 1);
	pto_retire_init(&ctx, &rt->pdev, PTO_RR_IOCTL);
	KUNIT_ASSERT_EQ(test, pto_retire_claim(&ctx, &pto_rt_ids[1], 1), 0);
	pto_retire_run(&ctx);
	KUNIT_EXPECT_EQ(test, atomic_read(&core->rbits),
			PTO_RB_READY | PTO_RB_REQUESTED);
	KUNIT_EXPECT_EQ(test, rt->pdev.gates[1].gate, (u32)PTO_GATE_RELEASE);
	KUNIT_EXPECT_EQ(test, *(u32 *)(core->kregs + PTO_KREG_CTRL),
			(u32)PTO_CTRL_EXIT);
	pto_rt_return(rt, 1);
	pto_retire_arm(core);
	KUNIT_EXPECT_EQ(test, core->gen, 2U);
	KUNIT_EXPECT_EQ(test, atomic_read(&core->rbits), 0);
	KUNIT_EXPECT_EQ(test, rt->pdev.gates[1].gate, (u32)PTO_GATE_ARMED);
	KUNIT_EXPECT_EQ(test, *(u32 *)(core->kregs + PTO_KREG_CTRL),
			(u32)PTO_CTRL_RUN);
	KUNIT_EXPECT_EQ(test, *(u32 *)(core->kregs + PTO_KREG_NONCE), 0U);
	KUNIT_EXPECT_FALSE(test, pto_core_may_return(core));
	/* A request of the new generation before READY is pending again. */
	KUNIT_EXPECT_FALSE(test, pto_retire_request(core));
	KUNIT_EXPECT_TRUE(test, pto_retire_publish(core));
}

/*
 * A lockless (fatal) request landing inside a launch's arm, at each of the
 * three positions around its two steps: its REQUESTED is either pending
 * on the new generation (the publisher services it) or it waits for the
 * old generation, which has ended. Never erased and waited on at once:
 * with the generation moved before the bits were reset, a request between
 * the steps read the new generation, lost its bit to the reset, and its
 * pto_retire_finish() waited until the owner retired the core.
 */
static void retire_claim_during_arm(struct kunit *test)
{
	struct rt *rt = test->priv;
	struct pto_core *core = &rt->core[0];
	struct pto_worker_line *w = &rt->pdev.workers[0];
	struct pto_retire_ctx ctx, em;
	unsigned int pos;

	for (pos = 0; pos < 3; pos++) {
		bool pending;

		/* A whole round first: rbits = READY | REQUESTED. */
		pto_rt_launch(test, rt, 0);
		pto_retire_init(&ctx, &rt->pdev, PTO_RR_IOCTL);
		KUNIT_ASSERT_EQ(test, pto_retire_claim(&ctx, pto_rt_ids, 1), 0);
		pto_retire_run(&ctx);
		pto_rt_return(rt, 0);
		KUNIT_ASSERT_EQ(test, atomic_read(&core->rbits),
				PTO_RB_READY | PTO_RB_REQUESTED);

		/* The next launch's arm, a fatal's claim at @pos. */
		memset(w, 0, sizeof(*w));
		pto_retire_init(&em, &rt->pdev, PTO_RR_FATAL);
		if (pos == 0)
			KUNIT_ASSERT_EQ(test, pto_retire_claim(&em, pto_rt_ids, 1),
					0);
		pto_retire_arm_prepare(core);
		if (pos == 1)
			KUNIT_ASSERT_EQ(test, pto_retire_claim(&em, pto_rt_ids, 1),
					0);
		pto_retire_arm_commit(core);
		if (pos == 2)
			KUNIT_ASSERT_EQ(test, pto_retire_claim(&em, pto_rt_ids, 1),
					0);
		KUNIT_EXPECT_TRUE(test, bitmap_empty(em.set, PTO_MAX_CORES));
		KUNIT_EXPECT_TRUE(test, test_bit(0, em.others));

		/* The handshake, then READY. */
		set_bit(PTO_CORE_F_LAUNCH, &core->flags);
		WRITE_ONCE(core->state, PTO_CORE_HANDSHAKE);
		w->phys_id = 0;
		w->core_type = core->type;
		/* Release: the report precedes done, as in pto_rt_arm(). */
		smp_store_release(&w->done, 1);
		*(u32 *)(core->kregs + PTO_KREG_FAST_PATH_ENABLE) =
			PTO_FAST_PATH_OPEN;
		pending = pto_retire_publish(core);
		kunit_info(test, "claim at %u: pending %d, gen %u, waits on %u",
			   pos, pending, core->gen, em.gen[0]);
		KUNIT_EXPECT_TRUE(test, pending || core->gen != em.gen[0]);
		/* A request on the new generation is the publisher's. */
		KUNIT_EXPECT_EQ(test, pending, pos != 0);
		if (pending) {
			/* Service it, as the launcher does. */
			pto_retire_init(&ctx, &rt->pdev, PTO_RR_LAUNCH);
			pto_retire_take(&ctx, core);
			pto_retire_run(&ctx);
			KUNIT_EXPECT_TRUE(test, pto_core_may_return(core));
		} else {
			WRITE_ONCE(core->state, PTO_CORE_READY);
			pto_retire_init(&ctx, &rt->pdev, PTO_RR_IOCTL);
			KUNIT_ASSERT_EQ(test, pto_retire_claim(&ctx, pto_rt_ids, 1),
					0);
			pto_retire_run(&ctx);
		}
		pto_rt_return(rt, 0);
	}
}

/*
 * The EXIT echo serves an armed completion wake-up: the owner dispatched
 * an id the core never took, armed WAKE_REQ and found nothing in COND, so
 * it sleeps; an emergency retirement echoes EXITED. Retirement wakes it
 * before it drops the launch's references (a stand-in file: its kref,
 * its wait queue and wake-up count are all the path touches).
 */
static void retire_echo_serves_wake_req(struct kunit *test)
{
	struct rt *rt = test->priv;
	struct pto_core *core = &rt->core[0];
	struct pto_retire_ctx ctx;
	struct pto_file *pf;

	pf = kunit_kzalloc(test, sizeof(*pf), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pf);
	kref_init(&pf->ref);
	kref_get(&pf->ref);	/* the launch's reference */
	init_waitqueue_head(&pf->poll_wq);
	atomic64_set(&pf->wakeups, 0);

	pto_rt_arm(rt, 0);
	core->owner = pf;
	KUNIT_EXPECT_FALSE(test, pto_retire_publish(core));
	WRITE_ONCE(core->state, PTO_CORE_READY);
	/* Dispatched, never taken; the owner armed its wake-up. */
	WRITE_ONCE(*(u32 *)(core->uregs + PTO_REG_DATA_MAIN_BASE), 1);
	WRITE_ONCE(*(u32 *)(core->uregs + PTO_REG_WAKE_REQ), 1);

	pto_retire_init(&ctx, &rt->pdev, PTO_RR_FATAL);
	KUNIT_ASSERT_EQ(test, pto_retire_claim(&ctx, pto_rt_ids, 1), 0);
	pto_retire_run(&ctx);
	KUNIT_EXPECT_EQ(test, *(u32 *)(core->uregs + PTO_REG_COND) &
			PTO_COND_STATE_MASK, (u32)PTO_COND_EXITED);
	KUNIT_EXPECT_EQ(test, atomic64_read(&pf->wakeups), 1LL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&core->wakeups), 1LL);
	KUNIT_EXPECT_EQ(test, *(u32 *)(core->uregs + PTO_REG_WAKE_REQ), 0U);
	/* Dropped after the wake-up: only the stand-in's own is left. */
	KUNIT_EXPECT_EQ(test, kref_read(&pf->ref), 1U);
	KUNIT_EXPECT_TRUE(test, pto_core_may_return(core));
	pto_rt_return(rt, 0);
}

/*
 * CORE_RETIRE's quarantined report: a core this call only waited for
 * (another owner held its claim) and that ended quarantined is reported,
 * as are the cores the call left itself.
 */
static void retire_report_quarantined_others(struct kunit *test)
{
	struct rt *rt = test->priv;
	struct pto_retire_ctx first, ctx;
	DECLARE_BITMAP(q, PTO_MAX_CORES);

	pto_rt_retire_one_silent(test, rt, 3, 4, &first);
	/* Another call over cores 3 to 5: 3 and 5 released, 4 left. */
	pto_retire_init(&ctx, &rt->pdev, PTO_RR_IOCTL);
	KUNIT_ASSERT_EQ(test, pto_retire_claim(&ctx, &pto_rt_ids[3], 3), 0);
	KUNIT_EXPECT_TRUE(test, bitmap_empty(ctx.set, PTO_MAX_CORES));
	KUNIT_EXPECT_EQ(test, bitmap_weight(ctx.others, PTO_MAX_CORES), 3U);
	pto_rt_return(rt, 3);
	pto_rt_return(rt, 5);
	pto_retire_run(&ctx);
	pto_retire_finish(&ctx);
	pto_retire_quarantined(&ctx, q);
	KUNIT_EXPECT_EQ(test, bitmap_weight(q, PTO_MAX_CORES), 1U);
	KUNIT_EXPECT_TRUE(test, test_bit(4, q));
	/* The quarantining call reports it too. */
	pto_retire_quarantined(&first, q);
	KUNIT_EXPECT_EQ(test, bitmap_weight(q, PTO_MAX_CORES), 1U);
	KUNIT_EXPECT_TRUE(test, test_bit(4, q));
}

/*
 * The same report through CORE_RETIRE's entry (pto_ioctl_core_retire(),
 * on a stand-in file that owns cluster 1): the first call over cores 3
 * to 5 retires 3 and 5 and leaves 4 (no response); a second call over
 * the same cores finds every claim consumed, waits for nothing left and
 * reports 4 again, with nothing retired by it. Each reply's mask names
 * core 4 alone, in the first word.
 */
static void retire_ioctl_reports_quarantined(struct kunit *test)
{
	struct rt *rt = test->priv;
	struct pto_core_retire args = { .cores = { 0x38 } };
	struct pto_file *pf;
	unsigned int i;

	pf = kunit_kzalloc(test, sizeof(*pf), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pf);
	pf->pdev = &rt->pdev;
	rt->pdev.cluster_owner[1] = pf;
	rt->pdev.retire_ms = 50;
	__clear_bit(4, rt->responsive);
	for (i = 3; i < NCORES; i++) {
		pto_rt_launch(test, rt, i);
		if (i != 4)
			__set_bit(i, rt->gate_returns);
	}

	KUNIT_ASSERT_EQ(test, pto_ioctl_core_retire(pf, &args), 0);
	KUNIT_EXPECT_EQ(test, args.retired, 2U);
	KUNIT_EXPECT_EQ(test, args.quarantined[0], (u64)BIT_ULL(4));
	KUNIT_EXPECT_EQ(test, args.quarantined[1], 0ULL);
	KUNIT_EXPECT_GE(test, args.elapsed_ns, 50ULL * NSEC_PER_MSEC);

	/* Stale reply words must not survive: the ioctl rewrites them. */
	memset(&args, 0xff, sizeof(args));
	memset(args.cores, 0, sizeof(args.cores));
	args.cores[0] = 0x38;
	args.flags = 0;
	args.pad = 0;
	KUNIT_ASSERT_EQ(test, pto_ioctl_core_retire(pf, &args), 0);
	KUNIT_EXPECT_EQ(test, args.retired, 0U);
	KUNIT_EXPECT_EQ(test, args.quarantined[0], (u64)BIT_ULL(4));
	KUNIT_EXPECT_EQ(test, args.quarantined[1], 0ULL);
	KUNIT_EXPECT_EQ(test, args.elapsed_ns, 0ULL);
	rt->pdev.cluster_owner[1] = NULL;
}

/*
 * A retirement writes nothing to a core it left after leaving it: a reset
 * may take the core over before the retirement's pass 4 (the owner's
 * reset ioctl while its own CORE_RETIRE is still closing the others).
 * The left core's set time is recorded when it is left, so pass 4 of the
 * first call does not overwrite the recovery's record.
 */
static void retire_left_core_untouched_after_leave(struct kunit *test)
{
	struct rt *rt = test->priv;
	struct pto_retire_ctx *ctx;
	struct pto_core *core = &rt->core[4];
	u64 set_ns;
	unsigned int i;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	rt->pdev.retire_ms = 50;
	__clear_bit(4, rt->responsive);
	for (i = 3; i < NCORES; i++)
		pto_rt_launch(test, rt, i);
	pto_retire_init(ctx, &rt->pdev, PTO_RR_IOCTL);
	KUNIT_ASSERT_EQ(test, pto_retire_claim(ctx, &pto_rt_ids[3], 3), 0);
	pto_retire_pass_request(ctx);
	pto_retire_pass_wait(ctx);
	KUNIT_ASSERT_TRUE(test, test_bit(4, ctx->left));
	KUNIT_EXPECT_GE(test, core->r_set_ns, 50ULL * NSEC_PER_MSEC);
	pto_retire_pass_close(ctx);

	/* The reset recovers core 4 between the first call's passes. */
	__set_bit(4, rt->responsive);
	__set_bit(4, rt->gate_returns);
	KUNIT_ASSERT_EQ(test, pto_cores_reset_debugfs(&rt->pdev), 0);
	KUNIT_ASSERT_EQ(test, core->r_reason, (u32)PTO_RR_RESET);
	set_ns = core->r_set_ns;

	pto_retire_pass_release(ctx);
	KUNIT_EXPECT_EQ(test, core->r_set_ns, set_ns);
	KUNIT_EXPECT_EQ(test, core->r_reason, (u32)PTO_RR_RESET);
	for (i = 3; i < NCORES; i++)
		if (i != 4)
			KUNIT_EXPECT_TRUE(test,
					  pto_core_may_return(&rt->core[i]));
}

/*
 * A window that reads back open after CLOSE (the sink reopens core 4's):
 * the core acknowledged but is not released through its gate. It is
 * quarantined as a silent core is, reported by RETIRE_STATUS and by the
 * call, and never returns, though it would return at its gate; its peers
 * retire. A reset leaves it quarantined while the close does not stick
 * and recovers it once it does.
 */
static void retire_close_not_sticking_quarantines(struct kunit *test)
{
	struct rt *rt = test->priv;
	struct pto_core *core = &rt->core[4];
	struct pto_retire_status st = { .core = 4 };
	struct pto_retire_ctx ctx;
	DECLARE_BITMAP(q, PTO_MAX_CORES);
	struct pto_file *pf;
	unsigned int i, left = 0;
	int k;

	pf = kunit_kzalloc(test, sizeof(*pf), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pf);
	pf->pdev = &rt->pdev;
	__set_bit(4, rt->reopen);
	for (i = 3; i < NCORES; i++) {
		pto_rt_launch(test, rt, i);
		__set_bit(i, rt->gate_returns);
	}
	pto_retire_init(&ctx, &rt->pdev, PTO_RR_IOCTL);
	KUNIT_ASSERT_EQ(test, pto_retire_claim(&ctx, &pto_rt_ids[3], 3), 0);
	pto_retire_run(&ctx);
	pto_retire_finish(&ctx);

	k = pto_rt_first(rt, PTO_RW_READBACK, 4);
	KUNIT_ASSERT_GE(test, k, 0);
	KUNIT_EXPECT_EQ(test, rt->ev[k].val, (u32)PTO_FAST_PATH_OPEN);
	KUNIT_EXPECT_FALSE(test, test_bit(4, ctx.acked));
	KUNIT_EXPECT_TRUE(test, test_bit(4, ctx.left));
	KUNIT_EXPECT_TRUE(test, test_bit(PTO_CORE_F_QUARANTINE, &core->flags));
	KUNIT_EXPECT_EQ(test, core->r_result,
			(u32)(PTO_RETIRE_ACKED | PTO_RETIRE_QUARANTINED));
	KUNIT_EXPECT_EQ(test, pto_rt_count(rt, PTO_RW_QUARANTINE, 4), 1U);
	KUNIT_EXPECT_EQ(test, pto_rt_count(rt, PTO_RW_DRAIN, 4), 0U);
	KUNIT_EXPECT_EQ(test, pto_rt_count(rt, PTO_RW_GATE, 4), 0U);
	KUNIT_EXPECT_EQ(test, rt->pdev.gates[4].gate, (u32)PTO_GATE_ARMED);
	KUNIT_EXPECT_FALSE(test, pto_core_may_return(core));
	KUNIT_EXPECT_TRUE(test, test_bit(PTO_CORE_F_LAUNCH, &core->flags));
	KUNIT_EXPECT_EQ(test, atomic64_read(&core->retirements), 0LL);
	pto_retire_quarantined(&ctx, q);
	KUNIT_EXPECT_EQ(test, bitmap_weight(q, PTO_MAX_CORES), 1U);
	KUNIT_EXPECT_TRUE(test, test_bit(4, q));
	for (i = 3; i < NCORES; i++) {
		if (i == 4)
			continue;
		KUNIT_EXPECT_EQ(test, rt->core[i].r_result,
				(u32)(PTO_RETIRE_ACKED | PTO_RETIRE_CLOSED |
				      PTO_RETIRE_RELEASED));
		KUNIT_EXPECT_FALSE(test, test_bit(PTO_CORE_F_LAUNCH,
						  &rt->core[i].flags));
	}
	KUNIT_ASSERT_EQ(test, pto_ioctl_retire_status(pf, &st), 0);
	KUNIT_EXPECT_EQ(test, st.state, (u32)PTO_CORE_QUARANTINED);
	KUNIT_EXPECT_EQ(test, st.result,
			(u32)(PTO_RETIRE_ACKED | PTO_RETIRE_QUARANTINED));
	KUNIT_EXPECT_EQ(test, st.quarantines, 1ULL);

	/* A later retirement finds the claim consumed: no close, no gate. */
	pto_retire_init(&ctx, &rt->pdev, PTO_RR_RELEASE);
	KUNIT_ASSERT_EQ(test, pto_retire_claim(&ctx, &pto_rt_ids[4], 1), 0);
	KUNIT_EXPECT_TRUE(test, bitmap_empty(ctx.set, PTO_MAX_CORES));
	pto_retire_run(&ctx);
	pto_retire_finish(&ctx);
	/* A reset while the close still does not stick recovers nothing. */
	KUNIT_EXPECT_EQ(test, pto_cores_reset_quarantined(&rt->pdev, NULL,
							  NULL, &left), 0);
	KUNIT_EXPECT_EQ(test, left, 1U);
	KUNIT_EXPECT_TRUE(test, test_bit(PTO_CORE_F_QUARANTINE, &core->flags));
	KUNIT_EXPECT_EQ(test, pto_rt_count(rt, PTO_RW_GATE, 4), 0U);
	KUNIT_EXPECT_TRUE(test, test_bit(PTO_CORE_F_LAUNCH, &core->flags));
	/* Once it sticks, a reset recovers it and it returns. */
	__clear_bit(4, rt->reopen);
	KUNIT_EXPECT_EQ(test, pto_cores_reset_quarantined(&rt->pdev, NULL,
							  NULL, &left), 1);
	KUNIT_EXPECT_EQ(test, left, 0U);
	pto_rt_expect_recovered(test, rt, 4);
	KUNIT_EXPECT_EQ(test, pto_rt_count(rt, PTO_RW_GATE, 4), 1U);
	KUNIT_EXPECT_FALSE(test, test_bit(PTO_CORE_F_LAUNCH, &core->flags));
}

static struct kunit_case pto_retire_cases[] = {
	KUNIT_CASE(retire_close_withheld),
	KUNIT_CASE(retire_gate_reuse_32),
	KUNIT_CASE(retire_group_order),
	KUNIT_CASE(retire_partial_timeout),
	KUNIT_CASE(retire_invalid_ids),
	KUNIT_CASE(retire_invalid_targets),
	KUNIT_CASE(retire_pending_until_publish),
	KUNIT_CASE(retire_normal_emergency_race),
	KUNIT_CASE(retire_generation_reset),
	KUNIT_CASE(retire_claim_during_arm),
	KUNIT_CASE(retire_echo_serves_wake_req),
	KUNIT_CASE(retire_report_quarantined_others),
	KUNIT_CASE(retire_ioctl_reports_quarantined),
	KUNIT_CASE(retire_left_core_untouched_after_leave),
	KUNIT_CASE(retire_close_not_sticking_quarantines),
	{}
};

static struct kunit_suite pto_retire_suite = {
	.name = "pto_retire",
	.init = pto_rt_init,
	.exit = pto_rt_exit,
	.test_cases = pto_retire_cases,
};

kunit_test_suite(pto_retire_suite);
