// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: host recovery (the reset) of quarantined cores, on the
 * retirement suites' fixture (pto_retire_fixture.h).
 */
#include <kunit/test.h>
#include "../pto_reset.h"
#include "pto_retire_fixture.h"

/*
 * The debugfs reset drops the bad id armed on a quarantined core it does
 * not recover (it would fail the launch after a later recovery), and
 * every fault armed on an idle core, of clusters no file owns only.
 * Core 4 stays silent through the reset; core 5 (its cluster's) is idle;
 * core 0's cluster is owned (by a stand-in: only the pointer is read).
 */
static void reset_drops_badid_of_unrecovered_core(struct kunit *test)
{
	struct rt *rt = test->priv;
	struct pto_retire_ctx ctx;

	pto_rt_quarantine_one(test, rt, 4, &ctx);
	KUNIT_ASSERT_TRUE(test, test_bit(PTO_CORE_F_QUARANTINE,
					 &rt->core[4].flags));
	set_bit(PTO_CORE_F_BADID, &rt->core[4].flags);
	set_bit(PTO_CORE_F_STALL, &rt->core[5].flags);
	set_bit(PTO_CORE_F_BADID, &rt->core[5].flags);
	set_bit(PTO_CORE_F_BADID, &rt->core[0].flags);
	rt->pdev.cluster_owner[0] = (struct pto_file *)rt;

	KUNIT_ASSERT_EQ(test, pto_cores_reset_debugfs(&rt->pdev), 0);
	rt->pdev.cluster_owner[0] = NULL;
	KUNIT_EXPECT_TRUE(test, test_bit(PTO_CORE_F_QUARANTINE,
					 &rt->core[4].flags));
	KUNIT_EXPECT_FALSE(test, test_bit(PTO_CORE_F_BADID,
					  &rt->core[4].flags));
	KUNIT_EXPECT_FALSE(test, test_bit(PTO_CORE_F_STALL,
					  &rt->core[5].flags));
	KUNIT_EXPECT_FALSE(test, test_bit(PTO_CORE_F_BADID,
					  &rt->core[5].flags));
	KUNIT_EXPECT_TRUE(test, test_bit(PTO_CORE_F_BADID,
					 &rt->core[0].flags));
}

/*
 * Only a delivered wake-up is counted. A core quarantined by its launch's
 * init (never published: no owner, no eventfd, no references) whose
 * owner had armed WAKE_REQ in the window before the launch has nobody to
 * wake when a reset recovers it: CORE_STATS' wake-up count stays 0.
 */
static void reset_of_unpublished_core_counts_no_wakeup(struct kunit *test)
{
	struct rt *rt = test->priv;
	struct pto_core *core = &rt->core[4];

	pto_rt_arm(rt, 4);
	/* The launch's init failed: quarantined, READY never published. */
	set_bit(PTO_CORE_F_QUARANTINE, &core->flags);
	WRITE_ONCE(*(u32 *)(core->uregs + PTO_REG_WAKE_REQ), 1);
	__set_bit(4, rt->gate_returns);
	KUNIT_EXPECT_EQ(test, pto_cores_reset_debugfs(&rt->pdev), 0);
	pto_rt_expect_recovered(test, rt, 4);
	KUNIT_EXPECT_EQ(test, atomic64_read(&core->wakeups), 0LL);
}

/*
 * A refused reset (-EBUSY: the mask names a core of another file's
 * cluster) has no effect at all, not even on the quarantined cores of
 * the mask it would have recovered: their stall stays armed and their
 * last record unchanged. Core 1 is quarantined (cluster 0, no owner);
 * core 3's cluster is owned by a stand-in (only the pointer is read).
 */
static void reset_refused_has_no_side_effect(struct kunit *test)
{
	struct rt *rt = test->priv;
	struct pto_retire_ctx ctx;
	DECLARE_BITMAP(mask, PTO_MAX_CORES);
	unsigned int i;

	pto_rt_retire_one_silent(test, rt, 0, 1, &ctx);
	KUNIT_ASSERT_TRUE(test, test_bit(PTO_CORE_F_QUARANTINE,
					 &rt->core[1].flags));
	for (i = 0; i < NCORES; i++)
		if (i != 1)
			pto_rt_return(rt, i);
	set_bit(PTO_CORE_F_STALL, &rt->core[1].flags);
	/* Core 1 (quarantined) comes before core 3 (another file's). */
	rt->pdev.cluster_owner[1] = (struct pto_file *)rt;
	bitmap_zero(mask, PTO_MAX_CORES);
	__set_bit(1, mask);
	__set_bit(3, mask);
	rt->nev = 0;
	KUNIT_EXPECT_EQ(test, pto_cores_reset_quarantined(&rt->pdev, NULL,
							  mask, NULL),
			-EBUSY);
	rt->pdev.cluster_owner[1] = NULL;
	KUNIT_EXPECT_TRUE(test, test_bit(PTO_CORE_F_STALL,
					 &rt->core[1].flags));
	KUNIT_EXPECT_TRUE(test, test_bit(PTO_CORE_F_QUARANTINE,
					 &rt->core[1].flags));
	KUNIT_EXPECT_EQ(test, rt->core[1].r_reason, (u32)PTO_RR_IOCTL);
	KUNIT_EXPECT_EQ(test, rt->core[1].r_result,
			(u32)PTO_RETIRE_QUARANTINED);
	KUNIT_EXPECT_EQ(test, rt->nev, 0U);
}

/*
 * A reset that recovers a quarantined core starts a new record: the
 * result is the recovery's alone (ACKED | CLOSED | RELEASED), not the
 * quarantining retirement's QUARANTINED with those bits ORed in.
 */
static void reset_record_is_the_recovery(struct kunit *test)
{
	struct rt *rt = test->priv;
	struct pto_retire_ctx ctx;

	pto_rt_quarantine_one(test, rt, 4, &ctx);
	KUNIT_ASSERT_EQ(test, rt->core[4].r_result,
			(u32)PTO_RETIRE_QUARANTINED);
	__set_bit(4, rt->responsive);
	__set_bit(4, rt->gate_returns);
	KUNIT_EXPECT_EQ(test, pto_cores_reset_debugfs(&rt->pdev), 0);
	pto_rt_expect_recovered(test, rt, 4);
}

/*
 * A reset that adopts a core the moment a retirement quarantines it (the
 * retirement runs without core_lock: CORE_RETIRE's passes, the fatal
 * path) keeps its own record: the leaving call wrote QUARANTINED before
 * it set the bit the reset acts on, not over the recovery's record.
 */
static void reset_during_leave_keeps_the_recovery_record(struct kunit *test)
{
	struct rt *rt = test->priv;
	struct pto_retire_ctx ctx;

	rt->reset_at_quarantine = 4;
	pto_rt_quarantine_one(test, rt, 4, &ctx);
	KUNIT_EXPECT_EQ(test, rt->reset_at_quarantine, -1);
	KUNIT_EXPECT_EQ(test, rt->reset_ret, 0);
	pto_rt_expect_recovered(test, rt, 4);
}

/*
 * A recovering reset clears the page the previous owner left in the
 * quarantined core's window before the core can be mapped again: by the
 * time its gate is released (and F_QUARANTINE is clear, so the cluster's
 * new owner can map and fault the window), the previous file's data is
 * gone. It used to be cleared only after the core returned.
 */
static void reset_clears_page_before_unquarantine(struct kunit *test)
{
	struct rt *rt = test->priv;
	struct pto_core *core = &rt->core[4];
	struct pto_retire_ctx ctx;

	pto_rt_quarantine_one(test, rt, 4, &ctx);
	KUNIT_ASSERT_TRUE(test, test_bit(PTO_CORE_F_QUARANTINE, &core->flags));
	/* What the file it was quarantined under wrote into its page. */
	*(u32 *)(core->uregs + 0x800) = 0x5ec2e7a1;
	__set_bit(4, rt->responsive);
	__set_bit(4, rt->gate_returns);
	rt->seen_core = 4;
	KUNIT_EXPECT_EQ(test, pto_cores_reset_debugfs(&rt->pdev), 0);
	KUNIT_EXPECT_FALSE(test, rt->seen_leak);
	KUNIT_EXPECT_FALSE(test, test_bit(PTO_CORE_F_QUARANTINE, &core->flags));
	KUNIT_EXPECT_EQ(test, *(u32 *)(core->uregs + 0x800), 0U);
	/*
	 * The moment the bit is cleared (the note right before it): the bit
	 * still set, the page already clear, win_lock held (mmap and faults
	 * test the bit under it). With the page cleared after the bit, the
	 * note sees the bit clear and the marker.
	 */
	KUNIT_EXPECT_TRUE(test, rt->unq_seen);
	KUNIT_EXPECT_TRUE(test, rt->unq_quarantined);
	KUNIT_EXPECT_EQ(test, rt->unq_marker, 0U);
	KUNIT_EXPECT_TRUE(test, rt->unq_locked);
}

static struct kunit_case pto_reset_cases[] = {
	KUNIT_CASE(reset_drops_badid_of_unrecovered_core),
	KUNIT_CASE(reset_of_unpublished_core_counts_no_wakeup),
	KUNIT_CASE(reset_refused_has_no_side_effect),
	KUNIT_CASE(reset_record_is_the_recovery),
	KUNIT_CASE(reset_during_leave_keeps_the_recovery_record),
	KUNIT_CASE(reset_clears_page_before_unquarantine),
	{}
};

static struct kunit_suite pto_reset_suite = {
	.name = "pto_reset",
	.init = pto_rt_init,
	.exit = pto_rt_exit,
	.test_cases = pto_reset_cases,
};

kunit_test_suite(pto_reset_suite);
