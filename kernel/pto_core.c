// SPDX-License-Identifier: GPL-2.0-only
/*
 * pto - mock cores: one kernel thread per core, register windows, cluster
 * ownership, the launch handshake, dispatch, park / doorbell and
 * completion wake-ups. Protocol and orderings: Documentation/mock-cores.md.
 *
 * Core state machine (pto_core.state, written only by the core thread):
 *
 *   UNLAUNCHED --F_LAUNCH--> HANDSHAKE --READY--> READY <--> RUNNING
 *        ^                        |                   |
 *        |                        +----CTRL=EXIT------+--> EXITING
 *        |                                                    |
 *        +------ GATED <--- teardown gate released (after CLOSE) +
 *
 *   EXITING is "nonce echoed, no more window writes, waiting on the
 *   teardown gate"; GATED is "gate observed, final drain, returning".
 *   A core that misses retirement's deadline, or is left for recovery,
 *   is flagged F_QUARANTINE (reported as QUARANTINED). Retirement itself
 *   (election, passes, quarantine) is in pto_retire.c.
 *   EXIT and its nonce travel in the kernel-only page (CTRL, NONCE): the
 *   user page is the owner's, and its DATA_MAIN_BASE cannot carry them.
 */
#include <linux/bitmap.h>
#include <linux/delay.h>
#include <linux/eventfd.h>
#include <linux/file.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/random.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <kunit/visibility.h>
#include "pto_drv.h"

static unsigned int spin_us = 200;
module_param(spin_us, uint, 0644);
MODULE_PARM_DESC(spin_us,
		 "how long an idle core with a spin slot busy-polls DATA_MAIN_BASE, in us (default 200)");

/*
 * The mock's cores are kthreads sharing the host's CPUs with the program
 * that feeds them: a dozen idle cores busy-polling at once would take the
 * CPUs from the scheduler threads and the orchestrator. Every idle core
 * busy-polls for spin_grace_us (a task that follows at once needs no
 * doorbell); only max_spinners cores (of every device: the CPUs are
 * shared) go on polling up to spin_us, the others park after the grace.
 * max_spinners 0 (default): half the online CPUs, at least one.
 */
static unsigned int spin_grace_us = 5;
module_param(spin_grace_us, uint, 0644);
MODULE_PARM_DESC(spin_grace_us,
		 "how long every idle core busy-polls before it needs a spin slot, in us (default 5)");

static unsigned int max_spinners;
module_param(max_spinners, uint, 0644);
MODULE_PARM_DESC(max_spinners,
		 "how many idle cores may busy-poll at once (default 0: half the CPUs, at least 1)");

static atomic_t pto_spinners = ATOMIC_INIT(0);

static bool pto_spin_get(void)
{
	unsigned int max = READ_ONCE(max_spinners);

	if (!max)
		max = max(num_online_cpus() / 2, 1U);
	if (atomic_inc_return(&pto_spinners) <= max)
		return true;
	atomic_dec(&pto_spinners);
	return false;
}

static void pto_spin_put(void)
{
	atomic_dec(&pto_spinners);
}

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
EXPORT_SYMBOL_IF_KUNIT(pto_ureg_read);

u32 pto_kreg_read(struct pto_core *core, unsigned int off)
{
	return READ_ONCE(*pto_kreg(core, off));
}

/* A lifecycle transition: someone may wait for it on core_wq. */
void pto_core_set_state(struct pto_core *core, int state)
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
VISIBLE_IF_KUNIT bool pto_core_poll(struct pto_core *core, u32 *dispatch)
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
EXPORT_SYMBOL_IF_KUNIT(pto_core_poll);

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
VISIBLE_IF_KUNIT void pto_core_park_publish(struct pto_core *core)
{
	clear_bit(PTO_CORE_F_DOORBELL, &core->flags);
	/*
	 * clear_bit() returns no value and so orders nothing. The owner
	 * rings (set_bit) only after it read PARKED == 1: the clear must be
	 * visible before that store, or on a weakly ordered CPU a ring that
	 * saw this park's PARKED could come first in the flag's coherence
	 * order and be erased by it (a lost wake-up). A full barrier on x86,
	 * where the locked RMW already is one.
	 */
	smp_mb__after_atomic();
	WRITE_ONCE(*pto_ureg(core, PTO_REG_PARKED), 1);
	/* Dekker: PARKED store before the DATA_MAIN_BASE re-check. */
	smp_mb();
}
EXPORT_SYMBOL_IF_KUNIT(pto_core_park_publish);

VISIBLE_IF_KUNIT bool pto_core_park_recheck(struct pto_core *core)
{
	u32 dispatch;

	if (pto_core_poll(core, &dispatch) || pto_core_stopping(core)) {
		WRITE_ONCE(*pto_ureg(core, PTO_REG_PARKED), 0);
		return true;
	}
	return false;
}
EXPORT_SYMBOL_IF_KUNIT(pto_core_park_recheck);

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
VISIBLE_IF_KUNIT void pto_core_fin(struct pto_core *core, u32 cond)
{
	pto_core_write_cond(core, cond);
	/* Dekker: COND store before the WAKE_REQ load. */
	smp_mb();
}
EXPORT_SYMBOL_IF_KUNIT(pto_core_fin);

/*
 * Serve an armed completion wake-up: consume WAKE_REQ and wake @notify,
 * or @pf's poll() waiters. The one delivery, used by the core after a FIN
 * (pto_core_wake_check(), the launch's fields) and by retirement after the
 * EXIT echo (pto_retire_pass_close(), the claimed references). Fully
 * ordered xchg: a request the owner re-armed after the caller's read is
 * either consumed here (and this wake-up, which comes after the clear,
 * serves it) or left for the next one; never lost.
 *
 * With neither @notify nor @pf there is nobody to wake: a reset that
 * recovers a core its launch quarantined before publishing it (no
 * references were ever claimed) finds the WAKE_REQ an owner armed before
 * that launch. Nothing is served nor counted then (CORE_STATS' wakeups
 * count deliveries), and recovery clears the page anyway.
 */
bool pto_core_wake_serve(struct pto_core *core, struct eventfd_ctx *notify,
			 struct pto_file *pf)
{
	if (!notify && !pf)
		return false;
	if (!xchg(pto_ureg(core, PTO_REG_WAKE_REQ), 0))
		return false;
	atomic64_inc(&core->wakeups);
	if (notify)
		eventfd_signal(notify, 1);
	else
		pto_file_wake(pf);
	return true;
}

VISIBLE_IF_KUNIT bool pto_core_wake_check(struct pto_core *core)
{
	/* A plain read first: most FINs find no request armed. */
	if (!pto_ureg_read(core, PTO_REG_WAKE_REQ))
		return false;
	/* The launch's fields are stable between READY and the echo. */
	return pto_core_wake_serve(core, core->notify, core->owner);
}
EXPORT_SYMBOL_IF_KUNIT(pto_core_wake_check);

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
VISIBLE_IF_KUNIT void pto_core_do_task(struct pto_core *core, u32 dispatch)
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
EXPORT_SYMBOL_IF_KUNIT(pto_core_do_task);

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
	bool spinning = false;
	u32 dispatch;

	while (!pto_core_stopping(core)) {
		if (pto_core_poll(core, &dispatch)) {
			if (spinning)
				pto_spin_put();
			spinning = false;
			/* Informational (debugfs): nobody waits for these. */
			WRITE_ONCE(core->state, PTO_CORE_RUNNING);
			pto_core_do_task(core, dispatch);
			WRITE_ONCE(core->state, PTO_CORE_READY);
			idle_start = 0;
			cond_resched();
			continue;
		}
		now = ktime_get_ns();
		if (!idle_start) {
			idle_start = now;
			spinning = pto_spin_get();
		}
		idle = now - idle_start;
		if (idle < (u64)READ_ONCE(spin_us) * NSEC_PER_USEC &&
		    (spinning ||
		     idle < (u64)READ_ONCE(spin_grace_us) * NSEC_PER_USEC)) {
			if (need_resched())
				cond_resched();
			else
				cpu_relax();
			continue;
		}
		if (spinning) {
			pto_spin_put();
			spinning = false;
		}
		if (idle < (u64)READ_ONCE(doze_max_us) * NSEC_PER_USEC) {
			u64 ns = (u64)max(READ_ONCE(doze_us), 1U) * NSEC_PER_USEC;

			atomic64_inc(&core->dozes);
			/*
			 * A retirement's EXIT (pass 1 wakes core->wq) and
			 * kthread_stop() end the doze at once; usleep_range()
			 * would sleep all of doze_us whatever woke it, and a
			 * long one outlasted the retirement deadline (the core
			 * was quarantined) or held up rmmod.
			 */
			wait_event_interruptible_hrtimeout(core->wq,
							   pto_core_stopping(core),
							   ns_to_ktime(ns));
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
	if (spinning)
		pto_spin_put();
}

/*
 * EXIT, the core's side: echo the request's nonce in COND, in the mirror
 * and in the kernel's response word. Release: every preceding write of
 * this core (task outputs, payload status, FIN) precedes the echo. It is
 * this launch's last window write.
 */
void pto_core_exit_ack(struct pto_core *core)
{
	u32 nonce;

	/* Pairs with the retirer's smp_wmb() between NONCE and EXIT. */
	smp_rmb();
	nonce = pto_kreg_read(core, PTO_KREG_NONCE);
	pto_core_write_cond(core, nonce);
	/* Release: the COND echo precedes the response word. */
	smp_store_release(&core->resp, nonce);
	pto_core_set_state(core, PTO_CORE_EXITING);
}
EXPORT_SYMBOL_IF_KUNIT(pto_core_exit_ack);

/*
 * May the core return? Only after its teardown gate was released, which
 * retirement does after CLOSE and the drain. The old protocol (mock-only
 * switch, for the regression test) returns on EXIT alone.
 */
bool pto_core_may_return(struct pto_core *core)
{
	if (READ_ONCE(mock_old_protocol))
		return true;
	/* Acquire: pairs with the retirer's release store of the gate. */
	return smp_load_acquire(&core->pdev->gates[core->id].gate) ==
	       PTO_GATE_RELEASE;
}
EXPORT_SYMBOL_IF_KUNIT(pto_core_may_return);

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
		/* Mock fault injection: report a wrong physical id once. */
		WRITE_ONCE(w->phys_id, core->id +
			   (test_and_clear_bit(PTO_CORE_F_BADID, &core->flags) ?
			    PTO_MAX_CORES : 0));
		WRITE_ONCE(w->core_type, core->type);
		WRITE_ONCE(w->gen, core->gen);
		/* Release: the report precedes done (launcher acquires). */
		smp_store_release(&w->done, 1);
		wake_up_all(&core->pdev->core_wq);
		wait_event_interruptible(core->wq,
					 (atomic_read(&core->rbits) &
					  PTO_RB_READY) ||
					 pto_core_stopping(core));
		/*
		 * Pairs with the publisher's fully ordered fetch_or of READY:
		 * ownership and payload fields are visible.
		 */
		smp_rmb();
		if ((atomic_read(&core->rbits) & PTO_RB_READY) &&
		    !pto_core_stopping(core)) {
			pto_core_set_state(core, PTO_CORE_READY);
			pto_core_serve(core);
		}

		/* Mock fault injection: a core that never answers EXIT. */
		wait_event_interruptible(core->wq,
					 !test_bit(PTO_CORE_F_STALL,
						   &core->flags) ||
					 kthread_should_stop());
		pto_core_exit_ack(core);
		/*
		 * The gate wait is unbounded on purpose (seed 003): a bounded
		 * one would return while the kernel may still write the
		 * window. Retirement always releases it or quarantines the
		 * core; only unload (kthread_stop) ends it otherwise.
		 */
		wait_event_interruptible(core->wq, pto_core_may_return(core) ||
					 kthread_should_stop());
		if (!READ_ONCE(mock_old_protocol))
			pto_core_set_state(core, PTO_CORE_GATED);
		/* The final drain: nothing of this launch is left in flight. */
		smp_mb();
		/*
		 * UNLAUNCHED before the bit, the bit with release: a
		 * retirement that returns on the clear bit (pto_retire_done,
		 * acquire) has seen the state too, so a CORE_LAUNCH right
		 * after it finds the core idle instead of -EBUSY.
		 */
		WRITE_ONCE(core->state, PTO_CORE_UNLAUNCHED);
		clear_bit_unlock(PTO_CORE_F_LAUNCH, &core->flags);
		wake_up_all(&core->pdev->core_wq);
	}
	return 0;
}

/* ---- the kernel side: ownership, launch, stop ------------------------- */

/* Caller holds core_lock or win_lock (cluster_owner[] is written under both). */
static bool pto_core_owned_by(struct pto_core *core, struct pto_file *pf)
{
	return core->pdev->cluster_owner[core->id / PTO_CORES_PER_CLUSTER] ==
	       pf;
}

/*
 * Remove the user mappings of @core's window. Core i's window is page i
 * of the file (PTO_WINDOW_OFFSET(i, window_size) with window_size =
 * PAGE_SIZE), whatever the page size. Every open of the device node
 * shares one address space (the inode's: @pf->mapping), so this removes
 * every file's mappings of that page, not only @pf's. That is harmless:
 * each fault re-checks ownership under win_lock, so a zapped PTE of the
 * core's current owner (if the cluster changed hands meanwhile) comes
 * back at its next touch, and any other file's touch gets SIGBUS, with
 * or without the zap.
 */
void pto_window_zap(struct pto_file *pf, struct pto_core *core)
{
	if (pf->mapping)
		unmap_mapping_range(pf->mapping,
				    (loff_t)core->id << PAGE_SHIFT, PAGE_SIZE,
				    1);
}

/*
 * Retire @mask's cores through the one helper. The paths that must not
 * fail (release, fatal error, unload) call it: it allocates nothing (the
 * context is on this stack) and claims from the mask instead of an id
 * array.
 */
static void pto_cores_retire(struct pto_device *pdev,
			     const unsigned long *mask,
			     enum pto_retire_reason reason)
{
	struct pto_retire_ctx ctx;

	pto_retire_init(&ctx, pdev, reason);
	pto_retire_claim_mask(&ctx, mask);
	pto_retire_run(&ctx);
	pto_retire_finish(&ctx);
}

/*
 * Mock fault injection (debugfs): @core will not answer its next EXIT, so
 * retirement quarantines it. Cleared by pto_cores_reset_quarantined(), or
 * before it fires by pto_cores_inject_clear().
 */
int pto_core_inject_stall(struct pto_device *pdev, unsigned int core)
{
	if (core >= pdev->cores)
		return -EINVAL;
	set_bit(PTO_CORE_F_STALL, &pdev->core[core].flags);
	return 0;
}

/*
 * Mock fault injection (debugfs): @core reports a wrong physical id in its
 * next handshake, so that launch's initialization fails for it.
 */
int pto_core_inject_badid(struct pto_device *pdev, unsigned int core)
{
	if (core >= pdev->cores)
		return -EINVAL;
	set_bit(PTO_CORE_F_BADID, &pdev->core[core].flags);
	return 0;
}

/*
 * Mock fault injection (debugfs reset, after the recovery): drop the
 * injections not yet fired of every core whose cluster no file owns. Such
 * a core is idle or quarantined (a release retires a cluster's cores
 * before it frees the cluster, under core_lock), and no launch can start
 * on it while core_lock is held and no file owns its cluster. An idle
 * core's kthread waits for a launch and reads neither flag until then. A
 * quarantined core's kthread reads F_BADID only at the handshake of a
 * launch, which needs the core recovered first (recovery runs no
 * handshake); the launch that quarantined it already consumed its bad id.
 * So both flags go on an idle core, F_BADID on a quarantined one. Its
 * F_STALL stays: the reset cleared it on every quarantined core it took,
 * and one quarantined since (between the two calls) is still held by it,
 * waiting for the next reset. A stall armed on an idle core would
 * otherwise quarantine it at its next owner's retirement, a bad id fail
 * the first launch after the core's recovery.
 */
static void pto_cores_inject_clear(struct pto_device *pdev)
{
	unsigned int i;

	mutex_lock(&pdev->core_lock);
	for (i = 0; i < pdev->cores; i++) {
		struct pto_core *core = &pdev->core[i];

		if (pdev->cluster_owner[i / PTO_CORES_PER_CLUSTER])
			continue;
		clear_bit(PTO_CORE_F_BADID, &core->flags);
		if (!test_bit(PTO_CORE_F_QUARANTINE, &core->flags))
			clear_bit(PTO_CORE_F_STALL, &core->flags);
	}
	mutex_unlock(&pdev->core_lock);
}

/*
 * Host recovery of quarantined cores (the reset ioctl, CAP_SYS_ADMIN, and
 * the debugfs reset): only quarantined cores, and never one whose cluster
 * a file other than @pf owns (@pf NULL: no file may own it). Their claims
 * were consumed by the retirement that quarantined them, so the reset
 * takes them over as recovery and runs the same passes: a core that now
 * answers is closed, released, unquarantined and returns; one that still
 * does not stays quarantined. @mask NULL: every eligible core. Returns
 * the number recovered, or -EBUSY if @mask names another file's core.
 */
VISIBLE_IF_KUNIT int pto_cores_reset_quarantined(struct pto_device *pdev,
				struct pto_file *pf, const unsigned long *mask,
				unsigned int *remaining)
{
	struct pto_retire_ctx *ctx;
	unsigned int i, n = 0, left = 0;

	ctx = kmalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return -ENOMEM;
	pto_retire_init(ctx, pdev, PTO_RR_RESET);
	ctx->recovery = true;
	/*
	 * The ioctl's wait for core_lock (another reset, a release or a
	 * launch may hold it for a whole deadline) ends on a fatal signal;
	 * debugfs (@pf NULL) waits.
	 */
	if (pf) {
		if (mutex_lock_killable(&pdev->core_lock)) {
			kfree(ctx);
			return -EINTR;
		}
	} else {
		mutex_lock(&pdev->core_lock);
	}
	/*
	 * Validate the whole mask before touching any core: a refused reset
	 * (-EBUSY) has no effect at all.
	 */
	for (i = 0; mask && i < pdev->cores; i++) {
		struct pto_file *owner =
			pdev->cluster_owner[i / PTO_CORES_PER_CLUSTER];

		if (test_bit(i, mask) && owner && owner != pf) {
			mutex_unlock(&pdev->core_lock);
			kfree(ctx);
			return -EBUSY;
		}
	}
	for (i = 0; i < pdev->cores; i++) {
		struct pto_core *core = &pdev->core[i];
		struct pto_file *owner =
			pdev->cluster_owner[i / PTO_CORES_PER_CLUSTER];

		if ((mask && !test_bit(i, mask)) || (owner && owner != pf) ||
		    !test_bit(PTO_CORE_F_QUARANTINE, &core->flags))
			continue;
		pto_retire_adopt(ctx, core);
		clear_bit(PTO_CORE_F_STALL, &core->flags);
		wake_up_all(&core->wq);
	}
	/*
	 * A recovered core's window page, which kept what the owner it was
	 * quarantined under left in it (see pto_cluster_clear_windows), is
	 * cleared before the core is unquarantined and can be mapped again
	 * (pto_retire_unquarantine(), pass 4).
	 */
	pto_retire_run(ctx);
	pto_retire_finish(ctx);
	for_each_set_bit(i, ctx->acked, PTO_MAX_CORES) {
		pr_info("pto%u: reset: core %u recovered\n", pdev->index, i);
		n++;
	}
	left = bitmap_weight(ctx->left, PTO_MAX_CORES);
	mutex_unlock(&pdev->core_lock);
	kfree(ctx);
	if (remaining)
		*remaining = left;
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(pto_cores_reset_quarantined);

/*
 * The debugfs reset: recover the quarantined cores of clusters no file
 * owns that now answer, then drop those clusters' injections not yet
 * fired (pto_cores_inject_clear). 0 or -errno.
 */
int pto_cores_reset_debugfs(struct pto_device *pdev)
{
	int ret = pto_cores_reset_quarantined(pdev, NULL, NULL, NULL);

	if (ret < 0)
		return ret;
	pto_cores_inject_clear(pdev);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(pto_cores_reset_debugfs);

/*
 * Fatal device error (mock: debugfs "fatal"): emergency retirement of
 * every core, through the same helper and without core_lock, so it also
 * overlaps a launch in progress: a core whose READY is not yet published
 * keeps the request pending and its publisher services it. Cores already
 * retiring elsewhere are never written twice (the ownership latch).
 */
void pto_device_fatal(struct pto_device *pdev)
{
	DECLARE_BITMAP(mask, PTO_MAX_CORES);

	pr_err("pto%u: fatal device error: emergency retirement\n",
	       pdev->index);
	bitmap_zero(mask, PTO_MAX_CORES);
	bitmap_set(mask, 0, pdev->cores);
	pto_cores_retire(pdev, mask, PTO_RR_FATAL);
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

/*
 * A cluster changes hands: clear its cores' user window pages. A launch
 * resets only the four registers it uses; the rest of the page is the
 * previous owner's to write, and the next owner may map an owned core's
 * window before it launches anything, so without this the page would be
 * a channel from one file to the next. A free cluster's cores are
 * unlaunched and their kthreads do not touch the page; a quarantined core
 * cannot be mapped (-EIO) and is cleared when a reset recovers it,
 * before it can be mapped (pto_retire_unquarantine). Caller holds
 * core_lock and win_lock (write), and the cluster has no owner.
 */
static void pto_cluster_clear_windows(struct pto_device *pdev, unsigned int c)
{
	unsigned int i;

	for (i = c * PTO_CORES_PER_CLUSTER;
	     i < (c + 1) * PTO_CORES_PER_CLUSTER; i++)
		if (!test_bit(PTO_CORE_F_QUARANTINE, &pdev->core[i].flags))
			clear_page(pdev->core[i].uregs);
}

int pto_ioctl_cluster_acquire(struct pto_file *pf, void *data)
{
	struct pto_cluster_acquire *args = data;
	struct pto_device *pdev = pf->pdev;
	unsigned int c;
	int ret;

	if (args->flags & ~PTO_CLUSTER_FLAGS_VALID)
		return -EINVAL;
	ret = pto_cluster_mask(pdev, args->clusters);
	if (ret)
		return ret;
	/* Killable, as every ioctl's (struct pto_device, @core_lock). */
	if (mutex_lock_killable(&pdev->core_lock))
		return -EINTR;
	for (c = 0; c < pdev->clusters; c++) {
		if (!(args->clusters & BIT_ULL(c)))
			continue;
		if (pdev->cluster_owner[c] && pdev->cluster_owner[c] != pf) {
			mutex_unlock(&pdev->core_lock);
			return -EBUSY;
		}
	}
	/* cluster_owner[] is written under core_lock and win_lock. */
	down_write(&pdev->win_lock);
	for (c = 0; c < pdev->clusters; c++) {
		if (!(args->clusters & BIT_ULL(c)))
			continue;
		if (!pdev->cluster_owner[c])
			pto_cluster_clear_windows(pdev, c);
		pdev->cluster_owner[c] = pf;
	}
	up_write(&pdev->win_lock);
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
	pto_cores_retire(pdev, mask, PTO_RR_RELEASE);
	/*
	 * The ownership change and the zap, under win_lock (write), after
	 * the retirement's wait (which holds only core_lock): a window fault
	 * holds win_lock (read) across its ownership check and its PTE
	 * insert, so it either completed before down_write() returned (and
	 * the zap below removes its PTE) or runs after up_write() and sees
	 * the cluster free (SIGBUS). No fault can install a PTE after the
	 * zap for the next owner's core, and none waits for the retirement.
	 */
	down_write(&pdev->win_lock);
	for (c = 0; c < pdev->clusters; c++)
		if (clusters & BIT_ULL(c))
			pdev->cluster_owner[c] = NULL;
	for_each_set_bit(i, mask, PTO_MAX_CORES)
		pto_window_zap(pf, &pdev->core[i]);
	up_write(&pdev->win_lock);
}

int pto_ioctl_cluster_release(struct pto_file *pf, void *data)
{
	struct pto_cluster_acquire *args = data;
	struct pto_device *pdev = pf->pdev;
	unsigned int c;
	int ret;

	if (args->flags & ~PTO_CLUSTER_FLAGS_VALID)
		return -EINVAL;
	ret = pto_cluster_mask(pdev, args->clusters);
	if (ret)
		return ret;
	if (mutex_lock_killable(&pdev->core_lock))
		return -EINTR;
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

/* The clusters @pf owns, as a bitmap. Caller holds core_lock or win_lock. */
static u64 pto_file_clusters(struct pto_file *pf)
{
	struct pto_device *pdev = pf->pdev;
	u64 clusters = 0;
	unsigned int c;

	for (c = 0; c < pdev->clusters; c++)
		if (pdev->cluster_owner[c] == pf)
			clusters |= BIT_ULL(c);
	return clusters;
}

/*
 * File release (a closed fd, a killed process): stop every core the file
 * launched, as one set, and release its clusters. A file that owns no
 * cluster returns without core_lock: a killed process whose ioctl gave
 * up waiting for it (-EINTR) must not wait for it again in its exit's
 * close, for as long as another file's retirement holds it. The check
 * under win_lock (read) is stable: at release no ioctl of @pf runs, and
 * only @pf's own acquire makes it an owner.
 */
void pto_file_release_cores(struct pto_file *pf)
{
	struct pto_device *pdev = pf->pdev;
	u64 clusters;

	down_read(&pdev->win_lock);
	clusters = pto_file_clusters(pf);
	up_read(&pdev->win_lock);
	if (!clusters)
		return;
	mutex_lock(&pdev->core_lock);
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


/*
 * Clear a handshake line before a launch, word by word: debugfs handshake
 * reads it locklessly (READ_ONCE), and the core writes it only after it
 * sees F_LAUNCH (behind the launcher's smp_wmb()).
 */
static void pto_worker_line_clear(struct pto_worker_line *w)
{
	WRITE_ONCE(w->phys_id, 0);
	WRITE_ONCE(w->core_type, 0);
	WRITE_ONCE(w->done, 0);
	WRITE_ONCE(w->gen, 0);
	WRITE_ONCE(w->payload[0], 0);
	WRITE_ONCE(w->payload[1], 0);
}

/*
 * Launch: one serial publisher per call (core_lock held throughout). The
 * set it publishes for retirement is its initialized set: every core whose
 * handshake report is complete and correct gets its ownership and payload
 * init, its open window, then READY. A core whose init failed (no report,
 * wrong identity) is never published: it is left for recovery
 * (quarantined), never closed blindly. On any failure, or if a request
 * arrived before READY (a fatal error during the launch), the publisher
 * retires its whole published set through the one helper before it
 * returns, servicing the pending requests on success and on failure.
 */
static bool pto_is_eventfd(struct file *file)
{
	struct eventfd_ctx *ctx = eventfd_ctx_fileget(file);

	if (IS_ERR(ctx))
		return false;
	eventfd_ctx_put(ctx);
	return true;
}

int pto_ioctl_core_launch(struct pto_file *pf, void *data)
{
	struct pto_core_launch *args = data;
	struct pto_device *pdev = pf->pdev;
	DECLARE_BITMAP(mask, PTO_MAX_CORES);
	struct file *notify = NULL;
	struct pto_retire_ctx *ctx;
	struct pto_bo *bo;
	const char *why;
	unsigned int i, n, k, published = 0;
	bool pending = false;
	u64 need;
	int ret;

	if (args->flags & ~PTO_LAUNCH_FLAGS_VALID || args->pad ||
	    (!(args->flags & PTO_LAUNCH_FLAG_EVENTFD) && args->eventfd))
		return -EINVAL;
	ret = pto_core_mask(pdev, args->cores, mask);
	if (ret)
		return ret;
	n = bitmap_weight(mask, PTO_MAX_CORES);
	need = (u64)n * 2 * PTO_PAYLOAD_SIZE;
	if (!args->payload_addr || args->payload_addr % PTO_PAYLOAD_SIZE)
		return -EINVAL;
	/* ~550 bytes: off the stack (the debug kernel's FRAME_WARN is 1024). */
	ctx = kmalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return -ENOMEM;
	if (args->flags & PTO_LAUNCH_FLAG_EVENTFD) {
		/*
		 * One file for every core (a racing close or dup2 cannot give
		 * cores different contexts); each core takes its own context
		 * reference below, dropped by its retirement.
		 */
		notify = fget(args->eventfd);
		if (!notify || !pto_is_eventfd(notify)) {
			if (notify)
				fput(notify);
			kfree(ctx);
			return -EBADF;
		}
	}

	if (mutex_lock_killable(&pdev->core_lock)) {
		ret = -EINTR;
		goto out_free;
	}
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
		/*
		 * Re-arming needs the previous generation complete: the core
		 * returned through its gate (F_LAUNCH is cleared by the core
		 * itself, after the gate) and is idle.
		 */
		if (test_bit(PTO_CORE_F_LAUNCH, &core->flags) ||
		    READ_ONCE(core->state) != PTO_CORE_UNLAUNCHED) {
			ret = -EBUSY;
			goto out_unlock;
		}
	}

	/* The payload area: inside one of the caller's buffer objects. */
	mutex_lock(&pf->lock);
	bo = mtree_load(&pf->ranges, args->payload_addr);
	if (!bo || args->payload_addr + need > bo->dev_addr + bo->size) {
		/* A device address, not a user pointer: -EINVAL, not -EFAULT. */
		mutex_unlock(&pf->lock);
		ret = -EINVAL;
		goto out_unlock;
	}
	kref_get(&bo->ref);	/* held across the launch, dropped below */
	mutex_unlock(&pf->lock);

	/*
	 * The leader clears the previous launch's reports and resets every
	 * core's election bits, request and gate before any handshake and
	 * before any window opens (seed 003).
	 */
	for_each_set_bit(i, mask, PTO_MAX_CORES) {
		pto_worker_line_clear(&pdev->workers[i]);
		pto_retire_arm(&pdev->core[i]);
	}
	/*
	 * Cleared reports, reset bits and armed gates precede F_LAUNCH (the
	 * core's smp_rmb() after seeing it pairs with this), so a stale
	 * report or release value can never reach this launch.
	 */
	smp_wmb();
	for_each_set_bit(i, mask, PTO_MAX_CORES) {
		struct pto_core *core = &pdev->core[i];

		atomic64_inc(&core->launches);
		set_bit(PTO_CORE_F_LAUNCH, &core->flags);
		wake_up_all(&core->wq);
	}
	if (!wait_event_timeout(pdev->core_wq, pto_handshake_done(pdev, mask),
				PTO_HANDSHAKE_TIMEOUT))
		ret = -ETIMEDOUT;

	k = 0;
	pto_retire_init(ctx, pdev, PTO_RR_LAUNCH);
	for_each_set_bit(i, mask, PTO_MAX_CORES) {
		struct pto_core *core = &pdev->core[i];
		struct pto_worker_line *w = &pdev->workers[i];
		u64 addr = args->payload_addr + (u64)k * 2 * PTO_PAYLOAD_SIZE;

		k++;
		/* Acquire: pairs with the core's release of done. */
		if (!smp_load_acquire(&w->done))
			why = "incomplete handshake";
		else if (READ_ONCE(w->phys_id) != i ||
			 READ_ONCE(w->core_type) != core->type)
			why = "invalid physical id";
		else
			why = NULL;
		if (why) {
			/* Init failed: left for recovery, never published. */
			pto_retire_leave_unpublished(ctx, core, why);
			if (!ret)
				ret = -EIO;
			continue;
		}
		/* Ownership and payload init, then the window, then READY. */
		kref_get(&pf->ref);
		kref_get(&bo->ref);
		/* WRITE_ONCE: the doorbell reads it locklessly. */
		WRITE_ONCE(core->owner, pf);
		core->payload_bo = bo;
		core->payload_addr = addr;
		core->payload_kaddr = bo->vaddr + (addr - bo->dev_addr);
		core->notify = notify ? eventfd_ctx_fileget(notify) : NULL;
		core->last_id = PTO_DISPATCH_IDLE;
		/* WRITE_ONCE: debugfs handshake reads the line locklessly. */
		WRITE_ONCE(w->payload[0], addr);
		WRITE_ONCE(w->payload[1], addr + PTO_PAYLOAD_SIZE);
		WRITE_ONCE(*pto_ureg(core, PTO_REG_COND), 0);
		WRITE_ONCE(*pto_ureg(core, PTO_REG_PARKED), 0);
		WRITE_ONCE(*pto_ureg(core, PTO_REG_WAKE_REQ), 0);
		WRITE_ONCE(*pto_ureg(core, PTO_REG_DATA_MAIN_BASE),
			   PTO_DISPATCH_IDLE);
		WRITE_ONCE(*pto_kreg(core, PTO_KREG_FAST_PATH_ENABLE),
			   PTO_FAST_PATH_OPEN);
		/* READ_ONCE elsewhere (CORE_STATS, debugfs, the nonce). */
		WRITE_ONCE(core->last_cond, 0);
		published++;
		/* Fully ordered: everything above precedes READY. */
		if (pto_retire_publish(core)) {
			/* A request was pending: this publisher owns it. */
			pto_retire_take(ctx, core);
			pending = true;
		}
	}
	pto_bo_put(bo);
	if (pending && !ret)
		ret = -EIO;	/* retired during the launch (fatal error) */
	if (ret && published) {
		/*
		 * A failed launch retires every window it opened (nothing
		 * half-open): the pending requests it took above, and its
		 * other published cores, which it requests now and wins.
		 */
		DECLARE_BITMAP(rest, PTO_MAX_CORES);

		bitmap_zero(rest, PTO_MAX_CORES);
		for_each_set_bit(i, mask, PTO_MAX_CORES)
			if (!test_bit(PTO_CORE_F_QUARANTINE,
				      &pdev->core[i].flags) &&
			    !test_bit(i, ctx->set) && !test_bit(i, ctx->left))
				__set_bit(i, rest);
		pto_retire_claim_mask(ctx, rest);
		pto_retire_run(ctx);
		pto_retire_finish(ctx);
	}
out_unlock:
	mutex_unlock(&pdev->core_lock);
out_free:
	if (notify)
		fput(notify);	/* each core holds its own context ref */
	kfree(ctx);
	return ret;
}

int pto_ioctl_doorbell(struct pto_file *pf, void *data)
{
	struct pto_doorbell *args = data;
	struct pto_device *pdev = pf->pdev;
	DECLARE_BITMAP(mask, PTO_MAX_CORES);
	unsigned int i;
	int ret;

	if (args->flags & ~PTO_DOORBELL_FLAGS_VALID)
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
	/*
	 * win_lock (read), not core_lock: never waits behind a launch or a
	 * release. The owner file stays alive while it owns the cluster
	 * (release clears it under win_lock before the file is freed). Its
	 * tgid is reported as the caller sees it: 0 if the owner is not in
	 * the caller's pid namespace (or one below it).
	 */
	down_read(&pdev->win_lock);
	owner = pdev->cluster_owner[args->core / PTO_CORES_PER_CLUSTER];
	args->owner = owner ? pid_vnr(owner->tgid) : 0;
	up_read(&pdev->win_lock);
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

/*
 * A scheduler thread leaving its dispatch loop retires the cores it owns.
 * The ownership check and the claim run under core_lock; the passes run
 * without it (they never need it), so they may overlap a launch or a
 * release on other cores, and the election keeps every core to one owner.
 */
int pto_ioctl_core_retire(struct pto_file *pf, void *data)
{
	struct pto_core_retire *args = data;
	struct pto_device *pdev = pf->pdev;
	DECLARE_BITMAP(mask, PTO_MAX_CORES);
	struct pto_retire_ctx *ctx;
	unsigned int i;
	int ret;

	if (args->flags & ~PTO_RETIRE_FLAGS_VALID || args->pad)
		return -EINVAL;
	ret = pto_core_mask(pdev, args->cores, mask);
	if (ret)
		return ret;
	/* Off the stack, as in pto_ioctl_core_launch(). */
	ctx = kmalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return -ENOMEM;
	if (mutex_lock_killable(&pdev->core_lock)) {
		ret = -EINTR;
		goto out;
	}
	for_each_set_bit(i, mask, PTO_MAX_CORES) {
		if (!pto_core_owned_by(&pdev->core[i], pf)) {
			mutex_unlock(&pdev->core_lock);
			ret = -EPERM;
			goto out;
		}
	}
	/*
	 * Claim before dropping core_lock: a release of these clusters by
	 * another thread of this file, another file's acquire and its
	 * launch all take core_lock, so the requests land on the generation
	 * whose ownership was just checked, never on the next owner's. The
	 * claim does not sleep; the passes run without the lock.
	 */
	pto_retire_init(ctx, pdev, PTO_RR_IOCTL);
	pto_retire_claim_mask(ctx, mask);
	mutex_unlock(&pdev->core_lock);
	pto_retire_run(ctx);
	pto_retire_finish(ctx);
	pto_retire_quarantined(ctx, mask);
	memset(args->quarantined, 0, sizeof(args->quarantined));
	for_each_set_bit(i, mask, PTO_MAX_CORES)
		args->quarantined[i / 64] |= BIT_ULL(i % 64);
	args->retired = bitmap_weight(ctx->acked, PTO_MAX_CORES);
	args->elapsed_ns = ctx->elapsed;
out:
	kfree(ctx);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(pto_ioctl_core_retire);

int pto_ioctl_retire_status(struct pto_file *pf, void *data)
{
	struct pto_retire_status *args = data;
	struct pto_device *pdev = pf->pdev;
	struct pto_core *core;
	int bits;

	if (args->flags & ~PTO_RETIRE_STATUS_FLAGS_VALID || args->pad ||
	    args->core >= pdev->cores)
		return -EINVAL;
	core = &pdev->core[args->core];
	/*
	 * A racy snapshot without core_lock (a reset or a launch may hold
	 * it for a whole deadline): each word is read once.
	 */
	args->state = test_bit(PTO_CORE_F_QUARANTINE, &core->flags) ?
		      PTO_CORE_QUARANTINED : READ_ONCE(core->state);
	bits = atomic_read(&core->rbits);
	args->bits = (bits & PTO_RB_READY ? PTO_RETIRE_BIT_READY : 0) |
		     (bits & PTO_RB_REQUESTED ? PTO_RETIRE_BIT_REQUESTED : 0);
	args->gen = READ_ONCE(core->gen);
	args->nonce = READ_ONCE(core->nonce);
	args->response = READ_ONCE(core->resp);
	args->result = READ_ONCE(core->r_result);
	args->reason = READ_ONCE(core->r_reason);
	args->core_ns = READ_ONCE(core->r_core_ns);
	args->set_ns = READ_ONCE(core->r_set_ns);
	args->retirements = atomic64_read(&core->retirements);
	args->quarantines = atomic64_read(&core->quarantines);
	return 0;
}

/* Host recovery, privileged: see pto_cores_reset_quarantined(). */
int pto_ioctl_core_reset(struct pto_file *pf, void *data)
{
	struct pto_core_reset *args = data;
	struct pto_device *pdev = pf->pdev;
	DECLARE_BITMAP(mask, PTO_MAX_CORES);
	unsigned int remaining = 0;
	bool all = true;
	unsigned int w;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (args->flags & ~PTO_RESET_FLAGS_VALID)
		return -EINVAL;
	for (w = 0; w < PTO_CORE_MASK_WORDS; w++)
		if (args->cores[w])
			all = false;
	if (!all) {
		ret = pto_core_mask(pdev, args->cores, mask);
		if (ret)
			return ret;
	}
	ret = pto_cores_reset_quarantined(pdev, pf, all ? NULL : mask,
					  &remaining);
	if (ret < 0)
		return ret;
	args->recovered = ret;
	args->remaining = remaining;
	return 0;
}

/* ---- window mmap ------------------------------------------------------- */

/*
 * A window page is inserted at fault time, and only while the faulting
 * file still owns the core's cluster. The check and the PTE insert run
 * under win_lock (read); the release path clears the owner and zaps under
 * win_lock (write) (pto_clusters_release_locked()): an insert either
 * precedes the zap (and is removed by it) or sees the new owner (and
 * fails). Returning the page to the core MM instead would install the PTE
 * after the lock is dropped, racing the zap. A spinlock (launch_lock)
 * cannot cover the insert: vmf_insert_pfn() may allocate a page table.
 * The fault never takes core_lock, so it never waits behind a launch's
 * handshake or a release's retirement deadline. After a release any touch
 * of the stale mapping gets SIGBUS.
 */
static vm_fault_t pto_window_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct pto_core *core = vma->vm_private_data;
	struct pto_file *pf = vma->vm_file->private_data;
	struct pto_device *pdev = core->pdev;
	vm_fault_t ret = VM_FAULT_SIGBUS;

	down_read(&pdev->win_lock);
	if (pto_core_owned_by(core, pf) &&
	    !test_bit(PTO_CORE_F_QUARANTINE, &core->flags))
		ret = vmf_insert_pfn(vma, vmf->address,
				     page_to_pfn(core->upage));
	up_read(&pdev->win_lock);
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

	/* One window: window_size (PAGE_SIZE) bytes at page i. */
	if (vma->vm_end - vma->vm_start != PAGE_SIZE || i >= pdev->cores)
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	/* VM_MAYSHARE: as in pto_bo_mmap(), a read-only MAP_SHARED too. */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	/*
	 * Owned is enough, launched or not (Documentation/mock-cores.md):
	 * a launch resets the user registers before it opens the window
	 * and publishes READY. win_lock, not core_lock: see the fault.
	 */
	down_read(&pdev->win_lock);
	if (!pto_core_owned_by(&pdev->core[i], pf))
		ret = -EPERM;
	else if (test_bit(PTO_CORE_F_QUARANTINE, &pdev->core[i].flags))
		ret = -EIO;
	up_read(&pdev->win_lock);
	if (ret)
		return ret;
	/*
	 * PFNMAP: the page has no struct-page mapping in the process, so
	 * get_user_pages() (vmsplice, O_DIRECT) cannot pin it past the zap
	 * and reach the next owner's window. Not inherited by fork.
	 */
	vma->vm_flags &= ~VM_MAYEXEC;
	vma->vm_flags |= VM_PFNMAP | VM_IO | VM_DONTCOPY | VM_DONTEXPAND |
			 VM_DONTDUMP;
	vma->vm_private_data = &pdev->core[i];
	vma->vm_ops = &pto_window_vm_ops;
	return 0;
}

/* ---- setup ------------------------------------------------------------- */

/* A core with its window pages but no thread (also used by KUnit). */
VISIBLE_IF_KUNIT int pto_core_test_init(struct pto_core *core,
					struct pto_device *pdev,
					unsigned int id)
{
	memset(core, 0, sizeof(*core));
	core->pdev = pdev;
	core->id = id;
	core->type = id % PTO_CORES_PER_CLUSTER ? PTO_CORE_AIV : PTO_CORE_AIC;
	init_waitqueue_head(&core->wq);
	spin_lock_init(&core->launch_lock);
	atomic_set(&core->rbits, 0);
	atomic64_set(&core->retirements, 0);
	atomic64_set(&core->quarantines, 0);
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
EXPORT_SYMBOL_IF_KUNIT(pto_core_test_init);

VISIBLE_IF_KUNIT void pto_core_test_fini(struct pto_core *core)
{
	free_page((unsigned long)core->kregs);
	__free_page(core->upage);
}
EXPORT_SYMBOL_IF_KUNIT(pto_core_test_fini);

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
	init_rwsem(&pdev->win_lock);
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
 * Module unload: no file is open (fops.owner pins the module while one
 * is), so every core is UNLAUNCHED, except a quarantined one. Unload still
 * runs the one retirement helper over every core (emergency; it finds
 * nothing to claim unless a launch was left behind), then kthread_stop()
 * ends the threads: every wait of a core, the gate's included, also waits
 * for it. A quarantined core's references are dropped here.
 */
void pto_cores_fini(struct pto_device *pdev)
{
	DECLARE_BITMAP(mask, PTO_MAX_CORES);
	unsigned int i;

	if (!pdev->core)
		return;
	bitmap_zero(mask, PTO_MAX_CORES);
	bitmap_set(mask, 0, pdev->cores);
	pto_cores_retire(pdev, mask, PTO_RR_UNLOAD);
	for (i = 0; i < pdev->cores; i++) {
		struct pto_core *core = &pdev->core[i];

		kthread_stop(core->thread);
		/* A quarantined core kept its references: its thread is gone. */
		pto_task_put(&core->task);
		pto_retire_put_refs(core);
		WRITE_ONCE(core->owner, NULL);
		core->payload_bo = NULL;
		core->notify = NULL;
		pto_core_test_fini(core);
	}
	kfree(pdev->core);
	pdev->core = NULL;
	free_pages((unsigned long)pdev->ctrl_mem, PTO_CTRL_MEM_ORDER);
	pdev->ctrl_mem = NULL;
	mutex_destroy(&pdev->core_lock);
}
