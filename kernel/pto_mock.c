// SPDX-License-Identifier: GPL-2.0-only
/*
 * pto - the mock silicon: one kernel thread per core, its handshake,
 * dispatch, park / doorbell and completion wake-ups, and the mock's fault
 * injection. Protocol, orderings and the core's state machine
 * (pto_core.state, written only by the core thread):
 * Documentation/mock-cores.md. Retirement (election, passes, quarantine)
 * is in pto_retire.c. EXIT and its nonce travel in the kernel-only page
 * (CTRL, NONCE): the user page is the owner's to forge.
 */
#include <linux/eventfd.h>
#include <linux/fault-inject.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/timekeeping.h>
#include <kunit/visibility.h>
#include "pto_core.h"
#include "pto_graph.h"
#include "pto_mock.h"
#include "pto_trace.h"

#if IS_ENABLED(CONFIG_PTO_MOCK_FAULTS)
bool mock_old_protocol;
EXPORT_SYMBOL_IF_KUNIT(mock_old_protocol);
module_param(mock_old_protocol, bool, 0644);
MODULE_PARM_DESC(mock_old_protocol,
		 "mock only, for the regression test: a core returns right after echoing EXIT, without waiting for its teardown gate (the broken old protocol)");

/* At most 10 s: retirement sleeps it uninterruptibly. */
#define PTO_CLOSE_DELAY_MAX_MS 10000

static int close_delay_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, PTO_CLOSE_DELAY_MAX_MS);
}

static const struct kernel_param_ops close_delay_ops = {
	.set = close_delay_set,
	.get = param_get_uint,
};

static unsigned int mock_close_delay_ms;
module_param_cb(mock_close_delay_ms, &close_delay_ops, &mock_close_delay_ms,
		0644);
MODULE_PARM_DESC(mock_close_delay_ms,
		 "mock only: delay between the responses and the CLOSE pass, in ms (default 0, at most 10000), to make the old protocol's race reachable on purpose");

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
 * Idle cores share the host's CPUs with the program feeding them: each
 * busy-polls for spin_grace_us, only max_spinners cores (of every device)
 * go on up to spin_us, the others park. max_spinners 0: half the online
 * CPUs, at least one.
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

/* A doze ends at a doorbell or EXIT; the bound keeps a stray one short. */
#define PTO_DOZE_MAX_US 120000000

static int doze_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, PTO_DOZE_MAX_US);
}

static const struct kernel_param_ops doze_ops = {
	.set = doze_set,
	.get = param_get_uint,
};

static unsigned int doze_us = 50;
module_param_cb(doze_us, &doze_ops, &doze_us, 0644);
MODULE_PARM_DESC(doze_us,
		 "after spinning, an idle core sleeps this long between polls, in us (default 50, at most 120000000)");

static unsigned int doze_max_us;
module_param_cb(doze_max_us, &doze_ops, &doze_max_us, 0644);
MODULE_PARM_DESC(doze_max_us,
		 "how long an idle core dozes before it parks, in us (default 0: park right after spinning; at most 120000000)");

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
 * Park, first half: publish PARKED, then re-check DATA_MAIN_BASE; true if
 * work arrived (do not sleep). Dekker: core PARKED = 1; smp_mb(); read
 * DATA_MAIN_BASE, paired with the owner's DATA_MAIN_BASE = id; full fence;
 * read PARKED. One side sees the other: the core the id, or the owner
 * PARKED and it rings (F_DOORBELL set before wake_up(), so wait_event()
 * sees it). F_DOORBELL is cleared first: an earlier ring was an earlier park's.
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

	if (pto_core_poll(core, &dispatch) || pto_core_stopping(core) ||
	    pto_core_graph_pending(core)) {
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
 * Complete a task: status, FIN into COND, then the wake-up. Dekker with
 * WAKE_REQ: core COND = FIN | id; smp_mb(); read WAKE_REQ, paired with the
 * owner's WAKE_REQ = 1; full fence; read COND. Either the owner sees FIN
 * and does not sleep, or the core sees the request and wakes the poll()
 * waiters. One-shot: the core clears WAKE_REQ, the owner re-arms it.
 */
VISIBLE_IF_KUNIT void pto_core_fin(struct pto_core *core, u32 cond)
{
	pto_core_write_cond(core, cond);
	/* Dekker: COND store before the WAKE_REQ load. */
	smp_mb();
}
EXPORT_SYMBOL_IF_KUNIT(pto_core_fin);

/*
 * Serve an armed completion wake-up: consume WAKE_REQ and wake @notify, or
 * @pf's poll() waiters (after a FIN, and after retirement's EXIT echo).
 * Fully ordered xchg: a request re-armed after the caller's read is
 * either consumed here (and this wake-up serves it) or left for the next.
 * Neither @notify nor @pf: a launch quarantined before publishing; nothing
 * is served nor counted (recovery clears the page).
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
	/* The scheduler route's kernels see memory directly: no line cache. */
	if (!err)
		err = pto_task_run(core, t, NULL);
	pto_task_complete(core, t, err);
}
EXPORT_SYMBOL_IF_KUNIT(pto_core_do_task);

/*
 * Serve dispatches until stopped. An idle core escalates:
 *  1. spin: busy-poll for spin_us, yielding whenever the scheduler asks;
 *  2. doze (off by default): sleep doze_us between polls for up to
 *     doze_max_us, PARKED staying 0 (fewer doorbells, more latency);
 *  3. park: publish PARKED and sleep until a doorbell.
 */
static void pto_core_serve(struct pto_core *core)
{
	u64 idle_start = 0, now, idle;
	bool spinning = false;
	u32 dispatch;

	while (!pto_core_stopping(core)) {
		/* A resident-route graph first, then the owner's dispatch. */
		bool worked = pto_core_graph_step(core);

		if (!worked && pto_core_poll(core, &dispatch)) {
			/* Informational (debugfs): nobody waits for these. */
			WRITE_ONCE(core->state, PTO_CORE_RUNNING);
			pto_core_do_task(core, dispatch);
			WRITE_ONCE(core->state, PTO_CORE_READY);
			worked = true;
		}
		if (worked) {
			if (spinning)
				pto_spin_put();
			spinning = false;
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
			 * A retirement's EXIT, kthread_stop() and a doorbell
			 * (all wake core->wq) end the doze at once. The ring
			 * is consumed here: a park clears F_DOORBELL anyway
			 * before it publishes PARKED (pto_core_park_publish()).
			 */
			wait_event_interruptible_hrtimeout(core->wq,
				test_bit(PTO_CORE_F_DOORBELL, &core->flags) ||
				pto_core_stopping(core), ns_to_ktime(ns));
			clear_bit(PTO_CORE_F_DOORBELL, &core->flags);
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
	/* Stopping: leave the graph before the EXIT echo (its retirement). */
	pto_core_graph_leave(core);
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
 * debugfs reset, after the recovery: drop the unfired injections of every
 * core no file owns. Such a core is idle or quarantined and no launch can
 * start on it under core_lock. Both flags go on an idle core; on a
 * quarantined one only F_BADID (it is read only at a handshake), its
 * F_STALL being the reset's own, kept until the next reset.
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

#if IS_ENABLED(CONFIG_FAULT_INJECTION)
/*
 * Checked in the caller's context (the launch, the mmap), so the
 * attributes' task-filter selects the process under test.
 */
static DECLARE_FAULT_ATTR(pto_fail_core_start);
static DECLARE_FAULT_ATTR(pto_fail_window_map);

static struct fault_attr *const pto_fail_attr[PTO_FAIL_COUNT] = {
	[PTO_FAIL_CORE_START] = &pto_fail_core_start,
	[PTO_FAIL_WINDOW_MAP] = &pto_fail_window_map,
};

static const char *const pto_fail_name[PTO_FAIL_COUNT] = {
	[PTO_FAIL_CORE_START] = "fail_core_start",
	[PTO_FAIL_WINDOW_MAP] = "fail_window_map",
};

bool pto_should_fail(enum pto_fail which)
{
	return should_fail(pto_fail_attr[which], 1);
}

/* Removed with @root (debugfs_remove_recursive()). */
void pto_fail_debugfs_init(struct dentry *root)
{
	unsigned int i;

	for (i = 0; i < PTO_FAIL_COUNT; i++)
		fault_create_debugfs_attr(pto_fail_name[i], root,
					  pto_fail_attr[i]);
}
#endif
#endif
