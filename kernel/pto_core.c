// SPDX-License-Identifier: GPL-2.0-only
/*
 * pto - mock cores: one kernel thread per core, register windows, cluster
 * ownership, the launch handshake, dispatch, park / doorbell and
 * completion wake-ups. Protocol and orderings: Documentation/mock-cores.md.
 *
 * Core state machine (pto_core.state, written only by the core thread):
 *
 *   UNLAUNCHED --F_LAUNCH--> HANDSHAKE --F_READY--> READY <--> RUNNING
 *        ^                        |                   |
 *        |                        +----CTRL=EXIT------+--> EXITING
 *        +------- teardown gate released (after CLOSE) ----------+
 *
 *   EXITING is "nonce echoed, no more window writes, waiting on the
 *   teardown gate". A core that misses retirement's deadline is flagged
 *   F_QUARANTINE (reported as QUARANTINED). GATED is reserved for issue 6.
 *   EXIT and its nonce travel in the kernel-only page (CTRL, NONCE): the
 *   user page is the owner's, and its DATA_MAIN_BASE cannot carry them.
 */
#include <linux/bitmap.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include "pto_drv.h"

static unsigned int spin_us = 5;
module_param(spin_us, uint, 0644);
MODULE_PARM_DESC(spin_us,
		 "how long an idle core busy-polls DATA_MAIN_BASE, in us (default 5)");

static unsigned int doze_us = 50;
module_param(doze_us, uint, 0644);
MODULE_PARM_DESC(doze_us,
		 "after spinning, an idle core sleeps this long between polls, in us (default 50)");

static unsigned int doze_max_us;
module_param(doze_max_us, uint, 0644);
MODULE_PARM_DESC(doze_max_us,
		 "how long an idle core dozes before it parks, in us (default 0: park right after spinning)");

/* Bounded wait of the launcher for the handshake reports. */
#define PTO_HANDSHAKE_TIMEOUT (5 * HZ)

/* Retirement's shared deadline; longer than any task needs to stop. */
static unsigned int retire_timeout_ms = 30000;
module_param(retire_timeout_ms, uint, 0644);
MODULE_PARM_DESC(retire_timeout_ms,
		 "deadline for stopped cores to answer EXIT, in ms (default 30000)");

#define PTO_CTRL_MEM_ORDER 2
#define PTO_GATES_OFFSET (PAGE_SIZE << (PTO_CTRL_MEM_ORDER - 1))

static inline u32 *pto_ureg(struct pto_core *core, unsigned int off)
{
	return core->uregs + off;
}

static inline u32 *pto_kreg(struct pto_core *core, unsigned int off)
{
	return core->kregs + off;
}

u32 pto_ureg_read(struct pto_core *core, unsigned int off)
{
	return READ_ONCE(*pto_ureg(core, off));
}

u32 pto_kreg_read(struct pto_core *core, unsigned int off)
{
	return READ_ONCE(*pto_kreg(core, off));
}

/* A lifecycle transition: someone may wait for it on core_wq. */
static void pto_core_set_state(struct pto_core *core, int state)
{
	WRITE_ONCE(core->state, state);
	wake_up_all(&core->pdev->core_wq);
}

/* ---- the core side: step functions ------------------------------------ */

/*
 * Is there a new dispatch? A closed window ignores DATA_MAIN_BASE. The
 * acquire load pairs with the owner's release store of DATA_MAIN_BASE
 * (after it wrote the payload), so the payload read that follows sees it.
 */
bool pto_core_poll(struct pto_core *core, u32 *dispatch)
{
	u32 v;

	if (pto_kreg_read(core, PTO_KREG_FAST_PATH_ENABLE) !=
	    PTO_FAST_PATH_OPEN)
		return false;
	/* Acquire: pairs with the owner's release store of the id. */
	v = smp_load_acquire(pto_ureg(core, PTO_REG_DATA_MAIN_BASE));
	if (v == PTO_DISPATCH_IDLE || v == core->last_id)
		return false;
	*dispatch = v;
	return true;
}

/*
 * Park, first half: publish PARKED, then re-check DATA_MAIN_BASE. Returns
 * true if work arrived (the caller must not sleep).
 *
 * Dekker ordering (no lost wake-up):
 *
 *	core				owner
 *	PARKED = 1			DATA_MAIN_BASE = id
 *	smp_mb()			full fence (smp_mb / seq_cst)
 *	read DATA_MAIN_BASE		read PARKED
 *
 * Both sides store, fence, then load the other's word. With a full fence
 * on each side at least one of the loads sees the other's store: either
 * the core sees the id (and does not sleep) or the owner sees PARKED == 1
 * and rings the doorbell, which sets F_DOORBELL before wake_up(), so the
 * core's wait_event() condition sees it whether it is already asleep or
 * not yet. Both may see each other: then the doorbell is spurious and
 * costs one extra loop. F_DOORBELL is cleared before PARKED is published:
 * a ring that precedes this PARKED store belongs to an earlier park.
 */
void pto_core_park_publish(struct pto_core *core)
{
	clear_bit(PTO_CORE_F_DOORBELL, &core->flags);
	WRITE_ONCE(*pto_ureg(core, PTO_REG_PARKED), 1);
	/* Dekker: PARKED store before the DATA_MAIN_BASE re-check. */
	smp_mb();
}

bool pto_core_park_recheck(struct pto_core *core)
{
	u32 dispatch;

	if (pto_core_poll(core, &dispatch) || pto_core_stopping(core)) {
		WRITE_ONCE(*pto_ureg(core, PTO_REG_PARKED), 0);
		return true;
	}
	return false;
}

bool pto_core_park_prepare(struct pto_core *core)
{
	pto_core_park_publish(core);
	return pto_core_park_recheck(core);
}

void pto_core_park_finish(struct pto_core *core)
{
	WRITE_ONCE(*pto_ureg(core, PTO_REG_PARKED), 0);
}

static void pto_core_write_cond(struct pto_core *core, u32 cond)
{
	/*
	 * Release, both: the task's outputs and payload status (or, for the
	 * EXIT echo, every earlier write) precede COND and its kernel mirror.
	 */
	smp_store_release(&core->last_cond, cond);
	/* Release: the same writes precede the user-visible COND. */
	smp_store_release(pto_ureg(core, PTO_REG_COND), cond);
}

static void pto_file_wake(struct pto_file *pf)
{
	atomic64_inc(&pf->wakeups);
	wake_up_interruptible(&pf->poll_wq);
}

/*
 * Complete a task: status into the payload buffer, FIN into COND, then
 * the completion wake-up. Dekker again, with WAKE_REQ:
 *
 *	core				owner
 *	COND = FIN | id			WAKE_REQ = 1
 *	smp_mb()			full fence
 *	read WAKE_REQ			read COND, poll() if not done
 *
 * Either the owner sees FIN and does not sleep, or the core sees the
 * request and wakes the file's poll() waiters. A wake-up is one-shot: the
 * core clears WAKE_REQ, the owner re-arms it after every wake.
 */
void pto_core_fin(struct pto_core *core, u32 cond)
{
	pto_core_write_cond(core, cond);
	/* Dekker: COND store before the WAKE_REQ load. */
	smp_mb();
}

bool pto_core_wake_check(struct pto_core *core)
{
	/*
	 * Fully ordered xchg: a request the owner re-armed after the read is
	 * either consumed here (and this wake-up, which comes after the
	 * clear, serves it) or left for the next FIN; never lost.
	 */
	if (!pto_ureg_read(core, PTO_REG_WAKE_REQ) ||
	    !xchg(pto_ureg(core, PTO_REG_WAKE_REQ), 0))
		return false;
	atomic64_inc(&core->wakeups);
	pto_file_wake(core->owner);
	return true;
}

static void pto_task_complete(struct pto_core *core, struct pto_task *t,
			      u32 err)
{
	struct pto_payload *gp = core->payload_kaddr +
				 (t->id & 1) * PTO_PAYLOAD_SIZE;

	pto_task_put(t);
	WRITE_ONCE(gp->status, err);
	WRITE_ONCE(gp->done_id, t->id);
	atomic64_inc(&core->tasks);
	if (err)
		atomic64_inc(&core->errors);
	pto_core_fin(core, PTO_COND_FIN | err << PTO_COND_ERR_SHIFT | t->id);
	pto_core_wake_check(core);
}

/*
 * One task, as separate steps: fetch (copy the payload), ACK, validate
 * against the owner's buffer objects, run, complete (FIN). Args capture
 * (seed 000) hooks in after validate (before run) and after run.
 */
void pto_core_do_task(struct pto_core *core, u32 dispatch)
{
	struct pto_task *t = &core->task;
	u32 err;

	core->last_id = dispatch;
	err = pto_task_fetch(core, t, dispatch);
	pto_core_write_cond(core, PTO_COND_ACK | t->id);
	if (!err)
		err = pto_task_validate(core->owner, t);
	if (!err)
		err = pto_task_run(core, t);
	pto_task_complete(core, t, err);
}

/*
 * Serve dispatches until stopped. An idle core escalates:
 *  1. spin: busy-poll for spin_us (wall time; the core yields at once
 *     whenever the scheduler wants the CPU, cond_resched()), so spinning
 *     is bounded and never starves the owner when cores outnumber CPUs;
 *  2. doze (off by default, doze_max_us = 0): sleep doze_us between polls
 *     for up to doze_max_us; PARKED stays 0, so the owner needs no
 *     doorbell. Interrupt moderation for oversubscribed hosts: fewer
 *     doorbells and parks for up to doze_us more latency;
 *  3. park: publish PARKED and sleep until a doorbell (no CPU at all).
 */
static void pto_core_serve(struct pto_core *core)
{
	u64 idle_start = 0, now, idle;
	u32 dispatch;

	while (!pto_core_stopping(core)) {
		if (pto_core_poll(core, &dispatch)) {
			/* Informational (debugfs): nobody waits for these. */
			WRITE_ONCE(core->state, PTO_CORE_RUNNING);
			pto_core_do_task(core, dispatch);
			WRITE_ONCE(core->state, PTO_CORE_READY);
			idle_start = 0;
			cond_resched();
			continue;
		}
		now = ktime_get_ns();
		if (!idle_start)
			idle_start = now;
		idle = now - idle_start;
		if (idle < (u64)READ_ONCE(spin_us) * NSEC_PER_USEC) {
			if (need_resched())
				cond_resched();
			else
				cpu_relax();
			continue;
		}
		if (idle < (u64)READ_ONCE(doze_max_us) * NSEC_PER_USEC) {
			unsigned long us = max(READ_ONCE(doze_us), 1U);

			atomic64_inc(&core->dozes);
			usleep_range_state(us, 2 * us, TASK_INTERRUPTIBLE);
			continue;
		}
		idle_start = 0;
		if (pto_core_park_prepare(core))
			continue;
		atomic64_inc(&core->parks);
		wait_event_interruptible(core->wq,
					 test_bit(PTO_CORE_F_DOORBELL,
						  &core->flags) ||
					 pto_core_stopping(core));
		pto_core_park_finish(core);
	}
}

static bool pto_core_may_leave_gate(struct pto_core *core)
{
	/* Acquire: pairs with the stopper's release store of the gate. */
	return smp_load_acquire(&core->pdev->gates[core->id].gate) ==
	       PTO_GATE_RELEASE || kthread_should_stop();
}

static int pto_core_thread(void *arg)
{
	struct pto_core *core = arg;
	struct pto_worker_line *w = &core->pdev->workers[core->id];

	while (!kthread_should_stop()) {
		wait_event_interruptible(core->wq,
					 test_bit(PTO_CORE_F_LAUNCH,
						  &core->flags) ||
					 kthread_should_stop());
		if (kthread_should_stop())
			break;
		/* Pairs with the launcher's barrier before F_LAUNCH. */
		smp_rmb();

		/* Handshake: report identity, then wait for READY. */
		pto_core_set_state(core, PTO_CORE_HANDSHAKE);
		WRITE_ONCE(w->phys_id, core->id);
		WRITE_ONCE(w->core_type, core->type);
		WRITE_ONCE(w->gen, core->gen);
		/* Release: the report precedes done (launcher acquires). */
		smp_store_release(&w->done, 1);
		wake_up_all(&core->pdev->core_wq);
		wait_event_interruptible(core->wq,
					 test_bit(PTO_CORE_F_READY,
						  &core->flags) ||
					 pto_core_stopping(core));
		/*
		 * Pairs with the launcher's fully ordered test_and_set_bit()
		 * of F_READY: ownership and payload fields are visible.
		 */
		smp_rmb();
		if (test_bit(PTO_CORE_F_READY, &core->flags) &&
		    !pto_core_stopping(core)) {
			pto_core_set_state(core, PTO_CORE_READY);
			pto_core_serve(core);
		}

		/*
		 * EXIT: echo the request's nonce in COND (release: after
		 * every preceding write of this core), and in the kernel's
		 * mirror. That is this launch's last window write. Then wait,
		 * unbounded and sleeping, for the teardown gate, which the
		 * kernel releases only after it closed the window.
		 */
		/* Mock fault injection: a core that never answers EXIT. */
		wait_event_interruptible(core->wq,
					 !test_bit(PTO_CORE_F_STALL,
						   &core->flags) ||
					 kthread_should_stop());
		smp_rmb();	/* pairs with the wmb between NONCE and CTRL */
		pto_core_write_cond(core, pto_kreg_read(core, PTO_KREG_NONCE));
		pto_core_set_state(core, PTO_CORE_EXITING);
		wait_event_interruptible(core->wq,
					 pto_core_may_leave_gate(core));
		clear_bit(PTO_CORE_F_LAUNCH, &core->flags);
		pto_core_set_state(core, PTO_CORE_UNLAUNCHED);
	}
	return 0;
}

/* ---- the kernel side: ownership, launch, stop ------------------------- */

static bool pto_core_owned_by(struct pto_core *core, struct pto_file *pf)
{
	return core->pdev->cluster_owner[core->id / PTO_CORES_PER_CLUSTER] ==
	       pf;
}

/* Remove every user mapping of @core's window from @pf's address space. */
static void pto_window_zap(struct pto_file *pf, struct pto_core *core)
{
	if (pf->mapping)
		unmap_mapping_range(pf->mapping,
				    PTO_WINDOW_MMAP_OFFSET(core->id), PAGE_SIZE,
				    1);
}

static void pto_core_drop_launch(struct pto_core *core)
{
	if (core->payload_bo)
		pto_bo_put(core->payload_bo);
	core->payload_bo = NULL;
	core->payload_kaddr = NULL;
	core->payload_addr = 0;
	if (core->owner)
		pto_file_put(core->owner);
	core->owner = NULL;
}

/* A nonce for @core's retirement: never 0, never the COND it last wrote. */
static u32 pto_core_nonce(struct pto_core *core)
{
	u32 n;

	do {
		n = PTO_COND_EXITED | (get_random_u32() & PTO_COND_ID_MASK);
	} while (n == PTO_COND_EXITED || n == READ_ONCE(core->last_cond));
	return n;
}

/* The current response: the kernel mirror of COND, not the user page. */
static bool pto_core_responded(struct pto_core *core)
{
	/* Acquire: pairs with the echo's release in pto_core_write_cond(). */
	return smp_load_acquire(&core->last_cond) == core->nonce &&
	       READ_ONCE(core->state) == PTO_CORE_EXITING;
}

static bool pto_cores_responded(struct pto_device *pdev,
				const unsigned long *set)
{
	unsigned int i;

	for_each_set_bit(i, set, PTO_MAX_CORES)
		if (!pto_core_responded(&pdev->core[i]))
			return false;
	return true;
}

/*
 * Stop the launched cores of @mask and return them to UNLAUNCHED, in seed
 * 003's passes over the whole set (caller holds core_lock):
 *  1. publish every core's request (a fresh nonce, kernel-only word)
 *     before EXIT (kernel-only CTRL) reaches any core of the set;
 *  2. wait for every current response (the echoed nonce) against one
 *     shared deadline; a core that misses it is quarantined: left unclosed
 *     and unreleased with every reference it holds, named in the log and
 *     never launched or mapped again;
 *  3. IDLE and CLOSE every acknowledged window, zap its user mappings,
 *     read the windows back and drain (smp_mb) before any gate;
 *  4. drop the launch's references and release each acknowledged core's
 *     teardown gate; the core observes it and only then returns.
 *
 * SIMPLE VERSION of issue 6's retirement: used by cluster release, file
 * release and a failed launch. Issue 6 adds the READY / REQUESTED
 * ownership election, the emergency latch, the status ioctl, the reset
 * and the mock-only switch for the old protocol on top of these passes.
 */
static void pto_cores_stop(struct pto_device *pdev, const unsigned long *mask)
{
	DECLARE_BITMAP(set, PTO_MAX_CORES);
	unsigned int i;

	bitmap_zero(set, PTO_MAX_CORES);
	for_each_set_bit(i, mask, PTO_MAX_CORES)
		if (test_bit(PTO_CORE_F_LAUNCH, &pdev->core[i].flags) &&
		    !test_bit(PTO_CORE_F_QUARANTINE, &pdev->core[i].flags))
			__set_bit(i, set);
	if (bitmap_empty(set, PTO_MAX_CORES))
		return;

	/* 1. Every request before any EXIT. */
	for_each_set_bit(i, set, PTO_MAX_CORES) {
		struct pto_core *core = &pdev->core[i];

		core->nonce = pto_core_nonce(core);
		WRITE_ONCE(*pto_kreg(core, PTO_KREG_NONCE), core->nonce);
	}
	smp_wmb();	/* nonces before EXIT; pairs with the core's rmb */
	for_each_set_bit(i, set, PTO_MAX_CORES)
		WRITE_ONCE(*pto_kreg(&pdev->core[i], PTO_KREG_CTRL),
			   PTO_CTRL_EXIT);
	smp_mb();	/* EXIT before the wake-ups' condition checks */
	for_each_set_bit(i, set, PTO_MAX_CORES)
		wake_up_all(&pdev->core[i].wq);

	/* 2. Current responses, one shared deadline. */
	wait_event_timeout(pdev->core_wq, pto_cores_responded(pdev, set),
			   msecs_to_jiffies(max(READ_ONCE(retire_timeout_ms),
						1U)));
	for_each_set_bit(i, set, PTO_MAX_CORES) {
		struct pto_core *core = &pdev->core[i];

		if (pto_core_responded(core))
			continue;
		set_bit(PTO_CORE_F_QUARANTINE, &core->flags);
		__clear_bit(i, set);
		pr_err("pto%u: retirement: core %u not released\n",
		       pdev->index, i);
	}

	/* 3. IDLE + CLOSE, zap, read back, drain: all before any gate. */
	for_each_set_bit(i, set, PTO_MAX_CORES) {
		struct pto_core *core = &pdev->core[i];

		WRITE_ONCE(*pto_ureg(core, PTO_REG_DATA_MAIN_BASE),
			   PTO_DISPATCH_IDLE);
		WRITE_ONCE(*pto_kreg(core, PTO_KREG_FAST_PATH_ENABLE),
			   PTO_FAST_PATH_CLOSE);
		if (core->owner)
			pto_window_zap(core->owner, core);
	}
	for_each_set_bit(i, set, PTO_MAX_CORES)
		if (pto_kreg_read(&pdev->core[i], PTO_KREG_FAST_PATH_ENABLE) !=
		    PTO_FAST_PATH_CLOSE)
			pr_err("pto%u: core %u window read back open\n",
			       pdev->index, i);
	smp_mb();	/* drain the closes and read-backs before the gates */

	/* 4. Drop the launch, release the gates, let the cores return. */
	for_each_set_bit(i, set, PTO_MAX_CORES) {
		struct pto_core *core = &pdev->core[i];

		clear_bit(PTO_CORE_F_READY, &core->flags);
		pto_core_drop_launch(core);
		/* Release: everything above precedes the gate. */
		smp_store_release(&pdev->gates[i].gate, PTO_GATE_RELEASE);
		wake_up_all(&core->wq);
	}
	for_each_set_bit(i, set, PTO_MAX_CORES) {
		struct pto_core *core = &pdev->core[i];

		wait_event(pdev->core_wq,
			   READ_ONCE(core->state) == PTO_CORE_UNLAUNCHED);
		WRITE_ONCE(*pto_kreg(core, PTO_KREG_CTRL), PTO_CTRL_RUN);
	}
}

/*
 * Mock fault injection (debugfs): @core will not answer its next EXIT, so
 * retirement quarantines it. Cleared by pto_cores_reset_quarantined().
 */
int pto_core_inject_stall(struct pto_device *pdev, unsigned int core)
{
	if (core >= pdev->cores)
		return -EINVAL;
	set_bit(PTO_CORE_F_STALL, &pdev->core[core].flags);
	return 0;
}

/*
 * Recover quarantined cores (debugfs reset, root only): let a stalled core
 * answer its pending EXIT; a core that now answers within the deadline is
 * closed and released exactly as retirement would have done, and becomes
 * free again. Its windows were zapped when its cluster was released, and
 * the window fault refuses a quarantined core, so no mapping reaches it.
 * Returns the number of cores recovered.
 */
int pto_cores_reset_quarantined(struct pto_device *pdev)
{
	DECLARE_BITMAP(set, PTO_MAX_CORES);
	unsigned int i;
	int n = 0;

	mutex_lock(&pdev->core_lock);
	bitmap_zero(set, PTO_MAX_CORES);
	for (i = 0; i < pdev->cores; i++) {
		struct pto_core *core = &pdev->core[i];

		if (!test_bit(PTO_CORE_F_QUARANTINE, &core->flags))
			continue;
		__set_bit(i, set);
		clear_bit(PTO_CORE_F_STALL, &core->flags);
		wake_up_all(&core->wq);
	}
	wait_event_timeout(pdev->core_wq, pto_cores_responded(pdev, set),
			   msecs_to_jiffies(max(READ_ONCE(retire_timeout_ms),
						1U)));
	for_each_set_bit(i, set, PTO_MAX_CORES) {
		struct pto_core *core = &pdev->core[i];

		if (!pto_core_responded(core))
			continue;
		WRITE_ONCE(*pto_ureg(core, PTO_REG_DATA_MAIN_BASE),
			   PTO_DISPATCH_IDLE);
		WRITE_ONCE(*pto_kreg(core, PTO_KREG_FAST_PATH_ENABLE),
			   PTO_FAST_PATH_CLOSE);
		smp_mb();	/* the close before the gate */
		clear_bit(PTO_CORE_F_READY, &core->flags);
		pto_core_drop_launch(core);
		/* Release: the close and the drops precede the gate. */
		smp_store_release(&pdev->gates[i].gate, PTO_GATE_RELEASE);
		wake_up_all(&core->wq);
		wait_event(pdev->core_wq,
			   READ_ONCE(core->state) == PTO_CORE_UNLAUNCHED);
		WRITE_ONCE(*pto_kreg(core, PTO_KREG_CTRL), PTO_CTRL_RUN);
		clear_bit(PTO_CORE_F_QUARANTINE, &core->flags);
		pr_info("pto%u: reset: core %u recovered\n", pdev->index, i);
		n++;
	}
	mutex_unlock(&pdev->core_lock);
	return n;
}

/* Parse a core bitmap: -EINVAL if a bit is beyond the device's cores. */
static int pto_core_mask(struct pto_device *pdev, const __u64 *words,
			 unsigned long *mask)
{
	unsigned int i;

	bitmap_zero(mask, PTO_MAX_CORES);
	for (i = 0; i < PTO_CORE_MASK_WORDS * 64; i++) {
		if (!(words[i / 64] & BIT_ULL(i % 64)))
			continue;
		if (i >= pdev->cores)
			return -EINVAL;
		__set_bit(i, mask);
	}
	return bitmap_empty(mask, PTO_MAX_CORES) ? -EINVAL : 0;
}

static int pto_cluster_mask(struct pto_device *pdev, u64 clusters)
{
	if (!clusters)
		return -EINVAL;
	if (pdev->clusters < 64 && clusters >> pdev->clusters)
		return -EINVAL;
	return 0;
}

int pto_ioctl_cluster_acquire(struct pto_file *pf, void *data)
{
	struct pto_cluster_acquire *args = data;
	struct pto_device *pdev = pf->pdev;
	unsigned int c;
	int ret;

	if (args->flags)
		return -EINVAL;
	ret = pto_cluster_mask(pdev, args->clusters);
	if (ret)
		return ret;
	mutex_lock(&pdev->core_lock);
	for (c = 0; c < pdev->clusters; c++) {
		if (!(args->clusters & BIT_ULL(c)))
			continue;
		if (pdev->cluster_owner[c] && pdev->cluster_owner[c] != pf) {
			mutex_unlock(&pdev->core_lock);
			return -EBUSY;
		}
	}
	for (c = 0; c < pdev->clusters; c++)
		if (args->clusters & BIT_ULL(c))
			pdev->cluster_owner[c] = pf;
	mutex_unlock(&pdev->core_lock);
	return 0;
}

/*
 * Stop the launched cores of @clusters (bitmap, all owned by @pf) as one
 * set, zap every window mapping and free the clusters. Caller holds
 * core_lock.
 */
static void pto_clusters_release_locked(struct pto_file *pf, u64 clusters)
{
	struct pto_device *pdev = pf->pdev;
	DECLARE_BITMAP(mask, PTO_MAX_CORES);
	unsigned int c, i;

	bitmap_zero(mask, PTO_MAX_CORES);
	for (c = 0; c < pdev->clusters; c++)
		if (clusters & BIT_ULL(c))
			bitmap_set(mask, c * PTO_CORES_PER_CLUSTER,
				   PTO_CORES_PER_CLUSTER);
	pto_cores_stop(pdev, mask);
	for_each_set_bit(i, mask, PTO_MAX_CORES)
		pto_window_zap(pf, &pdev->core[i]);
	for (c = 0; c < pdev->clusters; c++)
		if (clusters & BIT_ULL(c))
			pdev->cluster_owner[c] = NULL;
}

int pto_ioctl_cluster_release(struct pto_file *pf, void *data)
{
	struct pto_cluster_acquire *args = data;
	struct pto_device *pdev = pf->pdev;
	unsigned int c;
	int ret;

	if (args->flags)
		return -EINVAL;
	ret = pto_cluster_mask(pdev, args->clusters);
	if (ret)
		return ret;
	mutex_lock(&pdev->core_lock);
	for (c = 0; c < pdev->clusters; c++) {
		if ((args->clusters & BIT_ULL(c)) &&
		    pdev->cluster_owner[c] != pf) {
			mutex_unlock(&pdev->core_lock);
			return -EPERM;
		}
	}
	pto_clusters_release_locked(pf, args->clusters);
	mutex_unlock(&pdev->core_lock);
	return 0;
}

/*
 * File release (a closed fd, a killed process): stop every core the file
 * launched, as one set, and release its clusters.
 */
void pto_file_release_cores(struct pto_file *pf)
{
	struct pto_device *pdev = pf->pdev;
	u64 clusters = 0;
	unsigned int c;

	mutex_lock(&pdev->core_lock);
	for (c = 0; c < pdev->clusters; c++)
		if (pdev->cluster_owner[c] == pf)
			clusters |= BIT_ULL(c);
	if (clusters)
		pto_clusters_release_locked(pf, clusters);
	mutex_unlock(&pdev->core_lock);
}

static bool pto_handshake_done(struct pto_device *pdev,
			       const unsigned long *mask)
{
	unsigned int i;

	for_each_set_bit(i, mask, PTO_MAX_CORES)
		/* Acquire: pairs with the core's release of done. */
		if (!smp_load_acquire(&pdev->workers[i].done))
			return false;
	return true;
}

int pto_ioctl_core_launch(struct pto_file *pf, void *data)
{
	struct pto_core_launch *args = data;
	struct pto_device *pdev = pf->pdev;
	DECLARE_BITMAP(mask, PTO_MAX_CORES);
	struct pto_bo *bo;
	unsigned int i, n, k;
	u64 need;
	int ret;

	if (args->flags)
		return -EINVAL;
	ret = pto_core_mask(pdev, args->cores, mask);
	if (ret)
		return ret;
	n = bitmap_weight(mask, PTO_MAX_CORES);
	need = (u64)n * 2 * PTO_PAYLOAD_SIZE;
	if (!args->payload_addr || args->payload_addr % PTO_PAYLOAD_SIZE)
		return -EINVAL;

	mutex_lock(&pdev->core_lock);
	for_each_set_bit(i, mask, PTO_MAX_CORES) {
		struct pto_core *core = &pdev->core[i];

		if (!pto_core_owned_by(core, pf)) {
			ret = -EPERM;
			goto out_unlock;
		}
		if (test_bit(PTO_CORE_F_QUARANTINE, &core->flags)) {
			ret = -EIO;
			goto out_unlock;
		}
		if (test_bit(PTO_CORE_F_LAUNCH, &core->flags)) {
			ret = -EBUSY;
			goto out_unlock;
		}
	}

	/* The payload area: inside one of the caller's buffer objects. */
	mutex_lock(&pf->lock);
	bo = mtree_load(&pf->ranges, args->payload_addr);
	if (!bo || args->payload_addr + need > bo->dev_addr + bo->size) {
		mutex_unlock(&pf->lock);
		ret = -EFAULT;
		goto out_unlock;
	}
	for (i = 0; i < n; i++)
		kref_get(&bo->ref);
	mutex_unlock(&pf->lock);

	/*
	 * Clear the previous launch's reports and arm the gates, with a
	 * barrier, before any window opens: a stale report or release value
	 * can never reach this launch (seed 003).
	 */
	for_each_set_bit(i, mask, PTO_MAX_CORES) {
		memset(&pdev->workers[i], 0, sizeof(pdev->workers[i]));
		WRITE_ONCE(pdev->gates[i].gate, PTO_GATE_ARMED);
	}
	/* Cleared reports and armed gates precede any window opening. */
	smp_wmb();
	for_each_set_bit(i, mask, PTO_MAX_CORES) {
		struct pto_core *core = &pdev->core[i];

		core->gen++;
		atomic64_inc(&core->launches);
		/* The generation precedes F_LAUNCH (the core reads it). */
		smp_mb__before_atomic();
		set_bit(PTO_CORE_F_LAUNCH, &core->flags);
		wake_up_all(&core->wq);
	}
	if (!wait_event_timeout(pdev->core_wq, pto_handshake_done(pdev, mask),
				PTO_HANDSHAKE_TIMEOUT))
		ret = -ETIMEDOUT;

	k = 0;
	for_each_set_bit(i, mask, PTO_MAX_CORES) {
		struct pto_core *core = &pdev->core[i];
		struct pto_worker_line *w = &pdev->workers[i];
		u64 addr = args->payload_addr + (u64)k * 2 * PTO_PAYLOAD_SIZE;

		/* Ownership and payload init, then the window, then READY. */
		kref_get(&pf->ref);
		core->owner = pf;
		core->payload_bo = bo;
		core->payload_addr = addr;
		core->payload_kaddr = bo->vaddr + (addr - bo->dev_addr);
		core->last_id = PTO_DISPATCH_IDLE;
		k++;
		if (ret || READ_ONCE(w->phys_id) != i ||
		    READ_ONCE(w->core_type) != core->type)
			continue;
		w->payload[0] = addr;
		w->payload[1] = addr + PTO_PAYLOAD_SIZE;
		WRITE_ONCE(*pto_ureg(core, PTO_REG_COND), 0);
		WRITE_ONCE(*pto_ureg(core, PTO_REG_PARKED), 0);
		WRITE_ONCE(*pto_ureg(core, PTO_REG_WAKE_REQ), 0);
		WRITE_ONCE(*pto_ureg(core, PTO_REG_DATA_MAIN_BASE),
			   PTO_DISPATCH_IDLE);
		WRITE_ONCE(*pto_kreg(core, PTO_KREG_FAST_PATH_ENABLE),
			   PTO_FAST_PATH_OPEN);
		core->last_cond = 0;
		/* Fully ordered: everything above precedes READY. */
		test_and_set_bit(PTO_CORE_F_READY, &core->flags);
		wake_up_all(&core->wq);
	}
	if (!ret) {
		for_each_set_bit(i, mask, PTO_MAX_CORES)
			if (!test_bit(PTO_CORE_F_READY, &pdev->core[i].flags))
				ret = -EIO;
	}
	/* A failed launch stops every core it started (nothing half-open). */
	if (ret)
		pto_cores_stop(pdev, mask);
out_unlock:
	mutex_unlock(&pdev->core_lock);
	return ret;
}

int pto_ioctl_doorbell(struct pto_file *pf, void *data)
{
	struct pto_doorbell *args = data;
	struct pto_device *pdev = pf->pdev;
	DECLARE_BITMAP(mask, PTO_MAX_CORES);
	unsigned int i;
	int ret;

	if (args->flags)
		return -EINVAL;
	ret = pto_core_mask(pdev, args->cores, mask);
	if (ret)
		return ret;
	/* A racy owner check is enough: a stray ring only wakes a core. */
	for_each_set_bit(i, mask, PTO_MAX_CORES)
		if (READ_ONCE(pdev->core[i].owner) != pf)
			return -EPERM;
	for_each_set_bit(i, mask, PTO_MAX_CORES) {
		struct pto_core *core = &pdev->core[i];

		atomic64_inc(&core->doorbells);
		set_bit(PTO_CORE_F_DOORBELL, &core->flags);
		wake_up(&core->wq);
	}
	return 0;
}

int pto_ioctl_core_stats(struct pto_file *pf, void *data)
{
	struct pto_core_stats *args = data;
	struct pto_device *pdev = pf->pdev;
	struct pto_core *core;
	struct pto_file *owner;

	if (args->core >= pdev->cores)
		return -EINVAL;
	core = &pdev->core[args->core];
	mutex_lock(&pdev->core_lock);
	owner = pdev->cluster_owner[args->core / PTO_CORES_PER_CLUSTER];
	args->owner = owner ? owner->pid : 0;
	mutex_unlock(&pdev->core_lock);
	args->state = test_bit(PTO_CORE_F_QUARANTINE, &core->flags) ?
		      PTO_CORE_QUARANTINED : READ_ONCE(core->state);
	args->last_cond = READ_ONCE(core->last_cond);
	args->tasks = atomic64_read(&core->tasks);
	args->errors = atomic64_read(&core->errors);
	args->parks = atomic64_read(&core->parks);
	args->dozes = atomic64_read(&core->dozes);
	args->doorbells = atomic64_read(&core->doorbells);
	args->wakeups = atomic64_read(&core->wakeups);
	args->launches = atomic64_read(&core->launches);
	return 0;
}

/* ---- window mmap ------------------------------------------------------- */

/*
 * A window page is inserted at fault time, and only while the faulting
 * file still owns the core's cluster: after a release the zap removes the
 * page and any later touch of the stale mapping gets SIGBUS.
 */
static vm_fault_t pto_window_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct pto_core *core = vma->vm_private_data;
	struct pto_file *pf = vma->vm_file->private_data;
	vm_fault_t ret = VM_FAULT_SIGBUS;

	mutex_lock(&core->pdev->core_lock);
	if (pto_core_owned_by(core, pf) &&
	    !test_bit(PTO_CORE_F_QUARANTINE, &core->flags)) {
		get_page(core->upage);
		vmf->page = core->upage;
		ret = 0;
	}
	mutex_unlock(&core->pdev->core_lock);
	return ret;
}

static const struct vm_operations_struct pto_window_vm_ops = {
	.fault = pto_window_fault,
};

int pto_window_mmap(struct pto_file *pf, struct vm_area_struct *vma)
{
	struct pto_device *pdev = pf->pdev;
	unsigned long i = vma->vm_pgoff;
	int ret = 0;

	if (vma->vm_end - vma->vm_start != PAGE_SIZE || i >= pdev->cores)
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	mutex_lock(&pdev->core_lock);
	if (!pto_core_owned_by(&pdev->core[i], pf))
		ret = -EPERM;
	else if (test_bit(PTO_CORE_F_QUARANTINE, &pdev->core[i].flags))
		ret = -EIO;
	mutex_unlock(&pdev->core_lock);
	if (ret)
		return ret;
	vma->vm_flags &= ~VM_MAYEXEC;
	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP;
	vma->vm_private_data = &pdev->core[i];
	vma->vm_ops = &pto_window_vm_ops;
	return 0;
}

/* ---- setup ------------------------------------------------------------- */

/* A core with its window pages but no thread (also used by KUnit). */
int pto_core_test_init(struct pto_core *core, struct pto_device *pdev,
		       unsigned int id)
{
	memset(core, 0, sizeof(*core));
	core->pdev = pdev;
	core->id = id;
	core->type = id % PTO_CORES_PER_CLUSTER ? PTO_CORE_AIV : PTO_CORE_AIC;
	init_waitqueue_head(&core->wq);
	core->upage = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!core->upage)
		return -ENOMEM;
	core->uregs = page_address(core->upage);
	core->kregs = (void *)get_zeroed_page(GFP_KERNEL);
	if (!core->kregs) {
		__free_page(core->upage);
		return -ENOMEM;
	}
	*pto_kreg(core, PTO_KREG_FAST_PATH_ENABLE) = PTO_FAST_PATH_CLOSE;
	atomic64_set(&core->tasks, 0);
	atomic64_set(&core->errors, 0);
	atomic64_set(&core->parks, 0);
	atomic64_set(&core->dozes, 0);
	atomic64_set(&core->doorbells, 0);
	atomic64_set(&core->wakeups, 0);
	atomic64_set(&core->launches, 0);
	return 0;
}

void pto_core_test_fini(struct pto_core *core)
{
	free_page((unsigned long)core->kregs);
	__free_page(core->upage);
}

int pto_cores_init(struct pto_device *pdev)
{
	unsigned int i;
	int ret;

	BUILD_BUG_ON(sizeof(struct pto_worker_line) != 64);
	BUILD_BUG_ON(sizeof(struct pto_gate_line) != 64);
	BUILD_BUG_ON(PTO_MAX_CORES * 64 > PTO_GATES_OFFSET);
	BUILD_BUG_ON(sizeof(struct pto_payload) != PTO_PAYLOAD_SIZE);
	BUILD_BUG_ON(PTO_REG_WAKE_REQ + 4 > PAGE_SIZE);

	mutex_init(&pdev->core_lock);
	init_waitqueue_head(&pdev->core_wq);
	pdev->ctrl_mem = (void *)__get_free_pages(GFP_KERNEL | __GFP_ZERO,
						   PTO_CTRL_MEM_ORDER);
	if (!pdev->ctrl_mem)
		return -ENOMEM;
	pdev->workers = pdev->ctrl_mem;
	pdev->gates = pdev->ctrl_mem + PTO_GATES_OFFSET;
	pdev->core = kcalloc(pdev->cores, sizeof(*pdev->core), GFP_KERNEL);
	if (!pdev->core) {
		ret = -ENOMEM;
		goto err_ctrl;
	}
	for (i = 0; i < pdev->cores; i++) {
		struct pto_core *core = &pdev->core[i];
		struct task_struct *t;

		ret = pto_core_test_init(core, pdev, i);
		if (ret)
			goto err_cores;
		t = kthread_create(pto_core_thread, core, "pto%u/c%u",
				   pdev->index, i);
		if (IS_ERR(t)) {
			ret = PTR_ERR(t);
			pto_core_test_fini(core);
			goto err_cores;
		}
		core->thread = t;
		wake_up_process(t);
	}
	return 0;

err_cores:
	while (i--) {
		kthread_stop(pdev->core[i].thread);
		pto_core_test_fini(&pdev->core[i]);
	}
	kfree(pdev->core);
	pdev->core = NULL;
err_ctrl:
	free_pages((unsigned long)pdev->ctrl_mem, PTO_CTRL_MEM_ORDER);
	pdev->ctrl_mem = NULL;
	mutex_destroy(&pdev->core_lock);
	return ret;
}

/*
 * Module unload: no file is open, so every core is UNLAUNCHED, except a
 * quarantined one, whose thread kthread_stop() ends (every wait of a core
 * also waits for it) and whose references are dropped here.
 */
void pto_cores_fini(struct pto_device *pdev)
{
	unsigned int i;

	if (!pdev->core)
		return;
	for (i = 0; i < pdev->cores; i++) {
		struct pto_core *core = &pdev->core[i];

		kthread_stop(core->thread);
		/* A quarantined core kept its references: its thread is gone. */
		pto_task_put(&core->task);
		pto_core_drop_launch(core);
		pto_core_test_fini(core);
	}
	kfree(pdev->core);
	pdev->core = NULL;
	free_pages((unsigned long)pdev->ctrl_mem, PTO_CTRL_MEM_ORDER);
	pdev->ctrl_mem = NULL;
	mutex_destroy(&pdev->core_lock);
}
