// SPDX-License-Identifier: GPL-2.0-only
/*
 * pto - a mock core's task-boundary barriers on the resident route: the
 * core thread walks pto_cap_core_advance() and sleeps between steps until
 * a peer or its supervisor kicks it (PTO_CORE_F_CAPKICK) or a short
 * timeout passes, so a lost kick costs latency, never progress.
 */
#include <linux/bitops.h>
#include <linux/hrtimer.h>
#include <linux/delay.h>
#include <linux/kernel.h>
#include <linux/sched.h>
#include <linux/timekeeping.h>
#include <linux/wait.h>
#include <linux/pto_graph.h>
#include "pto_capture_sv.h"
#include "pto_core.h"
#include "pto_graph.h"
#include "pto_graph_capture.h"
#include "pto_mock.h"
#include "pto_mock_lcache.h"

/* The longest sleep between two steps of a barrier. */
#define PTO_CAP_POLL_NS (200 * NSEC_PER_USEC)
/* A publisher answered WouldBlock republishes after this long. */
#define PTO_CAP_BACKOFF_NS (100 * NSEC_PER_USEC)

#if IS_ENABLED(CONFIG_PTO_MOCK_FAULTS)
/* debugfs cap_stall: the first core to reach the step sleeps there. */
static void pto_core_cap_fault(void *priv, u32 step)
{
	struct pto_core *core = priv;
	struct pto_cap_faults *f = &core->pdev->cap_faults;

	if (atomic_read(&f->stall_step) != step ||
	    atomic_cmpxchg(&f->stall_step, step, PTO_CAPF_NONE) != step)
		return;
	msleep(READ_ONCE(f->stall_ms));
}
#endif

/* Wake the other cores of @core's cluster that run in @g. */
static void pto_cap_kick_peers(struct pto_core *core)
{
	struct pto_device *pdev = core->pdev;
	unsigned int first = core->id - core->id % PTO_CORES_PER_CLUSTER, i;

	for (i = first; i < first + PTO_CORES_PER_CLUSTER; i++) {
		struct pto_core *peer = &pdev->core[i];

		if (peer == core)
			continue;
		set_bit(PTO_CORE_F_CAPKICK, &peer->flags);
		wake_up(&peer->wq);
	}
}

/*
 * Walk @cc through @phase. Returns 0 once the phase is left, else the
 * task status of the fatal path: the walk's, or PTO_TASK_ESTOP when the
 * core is stopped or the run's supervisors are gone (run->dead), where
 * it leaves with nothing written.
 */
static u32 pto_core_cap_phase(struct pto_core *core, struct pto_cap_run *run,
			      struct pto_cap_core *cc, u32 phase)
{
	u32 cluster = core->id / PTO_CORES_PER_CLUSTER;
	enum pto_capp r;

	might_sleep();
	pto_cap_core_begin(cc, phase, ktime_get_ns());
	for (;;) {
		r = pto_cap_core_advance(cc, ktime_get_ns());
		if (cc->kick & PTO_CAPK_SV)
			pto_cap_kick(run, cluster);
		if (cc->kick & PTO_CAPK_PEERS)
			pto_cap_kick_peers(core);
		if (r == PTO_CAPP_PASSED)
			return 0;
		if (r == PTO_CAPP_FATAL)
			return cc->status;
		/*
		 * Acquire: pairs with the release in pto_graph_capture_stop()
		 * stored after every supervisor returned.
		 */
		if (smp_load_acquire(&run->dead) || pto_core_stopping(core))
			return PTO_TASK_ESTOP;
		/*
		 * The run failed and this phase has no request: nothing is
		 * copied for it, so leaving writes nothing and waits for no
		 * budget. With a request the supervisor answers Aborted.
		 */
		if (READ_ONCE(run->fatal) && !cc->part.pub)
			return PTO_TASK_ESTOP;
		wait_event_interruptible_hrtimeout(core->wq,
			test_and_clear_bit(PTO_CORE_F_CAPKICK, &core->flags) ||
			pto_core_stopping(core), ns_to_ktime(PTO_CAP_POLL_NS));
	}
}

u32 pto_core_cap_before(struct pto_core *core, struct pto_graph *g,
			const struct pto_gclaim *cl, struct pto_cap_core *cc,
			bool *on)
{
	struct pto_cap_run *run = g->cap;
	u32 cluster = core->id / PTO_CORES_PER_CLUSTER;
	struct pto_cap_sv *sv;

	*on = false;
	if (!run)
		return 0;
	/* After the run's fatal path no further task is taken. */
	if (READ_ONCE(run->fatal))
		return PTO_TASK_ESTOP;
	sv = pto_cap_sv_of(run, cluster);
	/* From the task's metadata only, so every participant decides alike. */
	if (!sv || !pto_cs_task_marked(&g->cap_tasks[cl->task], sv->level))
		return 0;
	if (pto_cs_part_init(&cc->part, &run->area,
			     pto_cap_slot_index(cluster, cl->slot),
			     run->run_epoch, cl->task, core->id, cl->bit,
			     cl->mask, &run->seq[core->id]))
		return PTO_TASK_ECAPTURE_TIMEOUT;
	cc->budget_ns = pto_capture_budget_ns();
	cc->lost_ns = pto_capture_lost_ns();
	cc->backoff_ns = PTO_CAP_BACKOFF_NS;
	cc->settled = false;
	cc->fault = NULL;
#if IS_ENABLED(CONFIG_PTO_MOCK_FAULTS)
	cc->fault = pto_core_cap_fault;
	cc->fault_priv = core;
#endif
	*on = true;
	return pto_core_cap_phase(core, run, cc, PTO_CS_BEFORE);
}

u32 pto_core_cap_after(struct pto_core *core, struct pto_graph *g,
		       struct pto_cap_core *cc, struct pto_lcache *lc)
{
	/*
	 * The outputs go back to memory before this core's AFTER arrival:
	 * the supervisor copies them from memory once the request is out,
	 * and the arrival's fully ordered fetch_or and the request's release
	 * (pto_capture_slot.c) order these write-backs before both.
	 */
	pto_lc_flush_all(lc);
	return pto_core_cap_phase(core, g->cap, cc, PTO_CS_AFTER);
}
