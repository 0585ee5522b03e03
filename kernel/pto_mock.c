// SPDX-License-Identifier: GPL-2.0-only
/*
 * pto - the mock silicon: one kernel thread per core, its handshake,
 * dispatch, park / doorbell and completion wake-ups, and the mock's fault
 * injection. Protocol and orderings: Documentation/mock-cores.md.
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
#include <linux/eventfd.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/timekeeping.h>
#include <kunit/visibility.h>
#include "pto_core.h"
#include "pto_mock.h"
#include "pto_trace.h"

#if IS_ENABLED(CONFIG_PTO_MOCK_FAULTS)
bool mock_old_protocol;
EXPORT_SYMBOL_IF_KUNIT(mock_old_protocol);
module_param(mock_old_protocol, bool, 0644);
MODULE_PARM_DESC(mock_old_protocol,
		 "mock only, for the regression test: a core returns right after echoing EXIT, without waiting for its teardown gate (the broken old protocol)");

static unsigned int mock_close_delay_ms;
module_param(mock_close_delay_ms, uint, 0644);
MODULE_PARM_DESC(mock_close_delay_ms,
		 "mock only: delay between the responses and the CLOSE pass, in ms (default 0), to make the old protocol's race reachable on purpose");

unsigned int pto_mock_close_delay_ms(void)
{
	return READ_ONCE(mock_close_delay_ms);
}
#endif

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

bool pto_core_stopping(struct pto_core *core)
{
	return READ_ONCE(*(u32 *)(core->kregs + PTO_KREG_CTRL)) !=
	       PTO_CTRL_RUN || (core->thread && kthread_should_stop());
}

/* A lifecycle transition: someone may wait for it on core_wq. */
void pto_core_set_state(struct pto_core *core, int state)
{
	WRITE_ONCE(core->state, state);
	wake_up_all(&core->pdev->core_wq);
}

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

static bool pto_core_park_prepare(struct pto_core *core)
{
	pto_core_park_publish(core);
	return pto_core_park_recheck(core);
}

static void pto_core_park_finish(struct pto_core *core)
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

static void pto_task_complete(struct pto_core *core,
			      struct pto_mock_task *t, u32 err)
{
	struct pto_payload *gp = core->payload_kaddr +
				 (t->id & 1) * PTO_PAYLOAD_SIZE;

	pto_task_put(t);
	/* The stamps before the status: FIN's release publishes them all. */
	WRITE_ONCE(gp->start_ns, t->start_ns);
	WRITE_ONCE(gp->end_ns, ktime_get_ns());
	trace_pto_task_end(core, t->id, err, t->start_ns, gp->end_ns);
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
 * hooks in after validate (before run) and after run.
 */
VISIBLE_IF_KUNIT void pto_core_do_task(struct pto_core *core, u32 dispatch)
{
	struct pto_mock_task *t = &core->task;
	u32 err;

	core->last_id = dispatch;
	err = pto_task_fetch(core, t, dispatch);
	pto_core_write_cond(core, PTO_COND_ACK | t->id);
	t->start_ns = ktime_get_ns();
	trace_pto_task_start(core, t->id, t->p.func_id);
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
		trace_pto_core_park(core);
		wait_event_interruptible(core->wq,
					 test_bit(PTO_CORE_F_DOORBELL,
						  &core->flags) ||
					 pto_core_stopping(core));
		trace_pto_core_wake(core);
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
VISIBLE_IF_KUNIT void pto_core_exit_ack(struct pto_core *core)
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
VISIBLE_IF_KUNIT bool pto_core_may_return(struct pto_core *core)
{
	if (pto_mock_old_protocol())
		return true;
	/* Acquire: pairs with the retirer's release store of the gate. */
	return smp_load_acquire(&core->pdev->gates[core->id].gate) ==
	       PTO_GATE_RELEASE;
}
EXPORT_SYMBOL_IF_KUNIT(pto_core_may_return);

int pto_core_thread(void *arg)
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
		 * The gate wait is unbounded on purpose: a bounded one would
		 * return while the kernel may still write the window.
		 * Retirement always releases it or quarantines the core; only
		 * unload (kthread_stop) ends it (Documentation/retirement.md).
		 */
		wait_event_interruptible(core->wq, pto_core_may_return(core) ||
					 kthread_should_stop());
		if (!pto_mock_old_protocol())
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

/* ---- mock fault injection ---------------------------------------------- */

#if IS_ENABLED(CONFIG_PTO_MOCK_FAULTS)
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
void pto_cores_inject_clear(struct pto_device *pdev)
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
#endif
