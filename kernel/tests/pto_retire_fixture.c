// SPDX-License-Identifier: GPL-2.0-only
/*
 * The retirement suites' fixture (pto_retire_fixture.h): the "core" side
 * is played by the sink (a responsive core answers its EXIT at once) or by
 * the test between steps, which is how the interleavings are forced.
 */
#include <linux/slab.h>
#include "../pto_reset.h"
#include "pto_retire_fixture.h"

/* The core's side after the gate: what pto_core_thread() does. */
void pto_rt_return(struct rt *rt, unsigned int i)
{
	clear_bit(PTO_CORE_F_LAUNCH, &rt->core[i].flags);
	WRITE_ONCE(rt->core[i].state, PTO_CORE_UNLAUNCHED);
}

static void rt_sink(void *priv, struct pto_core *core, enum pto_rw what,
		    u32 val)
{
	struct rt *rt = priv;

	if (rt->nev < NEV)
		rt->ev[rt->nev++] = (struct rev){ core->id, what, val };
	/* A responsive core answers its EXIT right away. */
	if (what == PTO_RW_EXIT && test_bit(core->id, rt->responsive))
		pto_core_exit_ack(core);
	/* A window that reads back open after its CLOSE. */
	if (what == PTO_RW_CLOSE && test_bit(core->id, rt->reopen))
		WRITE_ONCE(*(u32 *)(core->kregs + PTO_KREG_FAST_PATH_ENABLE),
			   PTO_FAST_PATH_OPEN);
	/* Core @seen_core back in service with the last file's page? */
	if (what == PTO_RW_GATE && (int)core->id == rt->seen_core &&
	    !test_bit(PTO_CORE_F_QUARANTINE, &core->flags) &&
	    *(u32 *)(core->uregs + 0x800) == 0x5ec2e7a1)
		rt->seen_leak = true;
	/*
	 * A reset that adopts the core as soon as it is quarantined, in
	 * the middle of the leaving call, and recovers it (it answers).
	 */
	if (what == PTO_RW_QUARANTINE &&
	    (int)core->id == rt->reset_at_quarantine) {
		rt->reset_at_quarantine = -1;
		__set_bit(core->id, rt->responsive);
		__set_bit(core->id, rt->gate_returns);
		rt->reset_ret = pto_cores_reset_debugfs(&rt->pdev);
	}
	if (what == PTO_RW_UNQUARANTINE && (int)core->id == rt->seen_core) {
		rt->unq_seen = true;
		rt->unq_quarantined = test_bit(PTO_CORE_F_QUARANTINE,
					       &core->flags);
		rt->unq_marker = *(u32 *)(core->uregs + 0x800);
		rt->unq_locked = rwsem_is_locked(&rt->pdev.win_lock);
	}
	/* A core that returns as soon as its gate is released. */
	if (what == PTO_RW_GATE && test_bit(core->id, rt->gate_returns))
		pto_rt_return(rt, core->id);
}

int pto_rt_init(struct kunit *test)
{
	struct rt *rt;
	unsigned int i;
	int ret;

	rt = kunit_kzalloc(test, sizeof(*rt), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rt);
	rt->ctrl = get_zeroed_page(GFP_KERNEL);
	KUNIT_ASSERT_NE(test, rt->ctrl, 0UL);
	rt->pdev.workers = (void *)rt->ctrl;
	rt->pdev.gates = (void *)(rt->ctrl + PAGE_SIZE / 2);
	rt->pdev.cores = NCORES;
	rt->pdev.clusters = NCORES / PTO_CORES_PER_CLUSTER;
	rt->pdev.core = rt->core;
	rt->pdev.rsink = rt_sink;
	rt->pdev.rsink_priv = rt;
	rt->pdev.retire_ms = 2000;
	init_waitqueue_head(&rt->pdev.core_wq);
	mutex_init(&rt->pdev.core_lock);
	init_rwsem(&rt->pdev.win_lock);
	for (i = 0; i < NCORES; i++) {
		ret = pto_core_test_init(&rt->core[i], &rt->pdev, i);
		KUNIT_ASSERT_EQ(test, ret, 0);
	}
	bitmap_set(rt->responsive, 0, NCORES);
	rt->seen_core = -1;
	rt->reset_at_quarantine = -1;
	test->priv = rt;
	return 0;
}

void pto_rt_exit(struct kunit *test)
{
	struct rt *rt = test->priv;
	unsigned int i;

	for (i = 0; i < NCORES; i++)
		pto_core_test_fini(&rt->core[i]);
	free_page(rt->ctrl);
}

/* The launcher's side up to (not including) READY: arm, handshake. */
void pto_rt_arm(struct rt *rt, unsigned int i)
{
	struct pto_core *core = &rt->core[i];
	struct pto_worker_line *w = &rt->pdev.workers[i];

	memset(w, 0, sizeof(*w));
	pto_retire_arm(core);
	set_bit(PTO_CORE_F_LAUNCH, &core->flags);
	WRITE_ONCE(core->state, PTO_CORE_HANDSHAKE);
	w->phys_id = i;
	w->core_type = core->type;
	/* Release: the report precedes done, as the core thread does. */
	smp_store_release(&w->done, 1);
	*(u32 *)(core->kregs + PTO_KREG_FAST_PATH_ENABLE) = PTO_FAST_PATH_OPEN;
}

/* A whole launch: arm, handshake, READY (no request pending). */
void pto_rt_launch(struct kunit *test, struct rt *rt, unsigned int i)
{
	pto_rt_arm(rt, i);
	KUNIT_EXPECT_FALSE(test, pto_retire_publish(&rt->core[i]));
	WRITE_ONCE(rt->core[i].state, PTO_CORE_READY);
}

int pto_rt_first(struct rt *rt, enum pto_rw what, int core)
{
	unsigned int k;

	for (k = 0; k < rt->nev; k++)
		if (rt->ev[k].what == what && (core < 0 || rt->ev[k].core == core))
			return k;
	return -1;
}

int pto_rt_last(struct rt *rt, enum pto_rw what)
{
	int k;

	for (k = rt->nev - 1; k >= 0; k--)
		if (rt->ev[k].what == what)
			return k;
	return -1;
}

unsigned int pto_rt_count(struct rt *rt, enum pto_rw what, int core)
{
	unsigned int k, n = 0;

	for (k = 0; k < rt->nev; k++)
		if (rt->ev[k].what == what && (core < 0 || rt->ev[k].core == core))
			n++;
	return n;
}

const u32 pto_rt_ids[NCORES] = { 0, 1, 2, 3, 4, 5 };

/*
 * Launch cores @from and up, core @silent never answering, and retire
 * them with a 50 ms deadline (the ioctl's passes 1 to 4).
 */
void pto_rt_retire_one_silent(struct kunit *test, struct rt *rt,
			      unsigned int from, unsigned int silent,
			      struct pto_retire_ctx *ctx)
{
	unsigned int i;

	rt->pdev.retire_ms = 50;
	__clear_bit(silent, rt->responsive);
	for (i = from; i < NCORES; i++)
		pto_rt_launch(test, rt, i);
	pto_retire_init(ctx, &rt->pdev, PTO_RR_IOCTL);
	KUNIT_ASSERT_EQ(test, pto_retire_claim(ctx, &pto_rt_ids[from],
					       NCORES - from), 0);
	pto_retire_run(ctx);
}

/* As pto_rt_retire_one_silent() from core 3, and its peers return. */
void pto_rt_quarantine_one(struct kunit *test, struct rt *rt,
			   unsigned int silent, struct pto_retire_ctx *ctx)
{
	unsigned int i;

	pto_rt_retire_one_silent(test, rt, 3, silent, ctx);
	for (i = 3; i < NCORES; i++)
		if (i != silent)
			pto_rt_return(rt, i);
}

/* Core @i was recovered by a reset: back in service, a record of its own. */
void pto_rt_expect_recovered(struct kunit *test, struct rt *rt,
			     unsigned int i)
{
	KUNIT_EXPECT_FALSE(test, test_bit(PTO_CORE_F_QUARANTINE,
					  &rt->core[i].flags));
	KUNIT_EXPECT_EQ(test, rt->core[i].r_reason, (u32)PTO_RR_RESET);
	KUNIT_EXPECT_EQ(test, rt->core[i].r_result,
			(u32)(PTO_RETIRE_ACKED | PTO_RETIRE_CLOSED |
			      PTO_RETIRE_RELEASED));
}
