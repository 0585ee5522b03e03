// SPDX-License-Identifier: GPL-2.0-only
/*
 * pto - retirement: the one implementation that ends a launch (retire
 * ioctl, release, failed launch, fatal error, unload, reset). Each core's
 * retirement has one owner per generation, elected by pto_core.rbits, the
 * only writer of its window, gate and launch fields until the gate opens.
 * Never takes core_lock; recovery takes win_lock to unquarantine.
 * Documentation/retirement.md.
 */
#include <linux/bitmap.h>
#include <linux/delay.h>
#include <linux/eventfd.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/timekeeping.h>
#include <kunit/visibility.h>
#include <linux/slab.h>
#include "pto_core.h"
#include "pto_retire.h"
#include "pto_window.h"
#include "pto_bo.h"
#include "pto_file.h"
#include "pto_netlink.h"
#include "pto_trace.h"

/*
 * At most 60 s: the retirement waits are uninterruptible (a released
 * core must be gone before its owner's memory is), and a wait past the
 * hung-task detector's 120 s would be reported as a hung task.
 */
#define PTO_RETIRE_TIMEOUT_MAX_MS 60000

static int retire_timeout_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, PTO_RETIRE_TIMEOUT_MAX_MS);
}

static const struct kernel_param_ops retire_timeout_ops = {
	.set = retire_timeout_set,
	.get = param_get_uint,
};

static unsigned int retire_timeout_ms = 30000;
module_param_cb(retire_timeout_ms, &retire_timeout_ops, &retire_timeout_ms,
		0644);
MODULE_PARM_DESC(retire_timeout_ms,
		 "retirement's shared deadline for the echoed nonce, in ms (default 30000, at most 60000; every built-in kernel stops on EXIT well before it)");

/* Every window / gate write of retirement goes through here (KUnit sink). */
static void pto_retire_note(struct pto_core *core, enum pto_rw what, u32 val)
{
	struct pto_device *pdev = core->pdev;

	trace_pto_retire(core, what, val);
	if (unlikely(pdev->rsink))
		pdev->rsink(pdev->rsink_priv, core, what, val);
}

/* ---- election ---------------------------------------------------------- */

/*
 * Launch leader, before the handshake (previous generation complete), in
 * two steps (pto_retire_arm() runs both). Step 1: reset the election
 * bits, the request and the gate of the new generation; the caller's
 * smp_wmb() before F_LAUNCH orders them ahead of the handshake, so no
 * request or release value of the previous generation reaches this one.
 */
VISIBLE_IF_KUNIT void pto_retire_arm_prepare(struct pto_core *core)
{
	struct pto_device *pdev = core->pdev;

	atomic_set(&core->rbits, 0);
	WRITE_ONCE(pdev->gates[core->id].gate, PTO_GATE_ARMED);
	WRITE_ONCE(*pto_kreg(core, PTO_KREG_NONCE), 0);
	WRITE_ONCE(*pto_kreg(core, PTO_KREG_CTRL), PTO_CTRL_RUN);
}
EXPORT_SYMBOL_IF_KUNIT(pto_retire_arm_prepare);

/*
 * Step 2: only then move the generation. A requester (no lock: the fatal
 * path overlaps a launch) reads gen, then fetch_or()s REQUESTED (fully
 * ordered). smp_wmb() here orders step 1's rbits = 0 before the new gen,
 * pairing with that fetch_or: a requester that read the new gen lands its
 * REQUESTED after the reset, pending for the publisher; one that read the
 * old gen waits only for that ended generation. None is erased and waited on.
 */
VISIBLE_IF_KUNIT void pto_retire_arm_commit(struct pto_core *core)
{
	/* The reset (step 1) before the new generation number. */
	smp_wmb();
	spin_lock(&core->launch_lock);
	/* WRITE_ONCE: read locklessly (claim, pto_retire_done, status). */
	WRITE_ONCE(core->gen, core->gen + 1);
	spin_unlock(&core->launch_lock);
}
EXPORT_SYMBOL_IF_KUNIT(pto_retire_arm_commit);

void pto_retire_arm(struct pto_core *core)
{
	pto_retire_arm_prepare(core);
	pto_retire_arm_commit(core);
}
EXPORT_SYMBOL_IF_KUNIT(pto_retire_arm);

/*
 * Publish READY (the launcher, after ownership and payload init and the
 * window opening). Fully ordered fetch_or: the init writes precede READY
 * for whoever observes it (the core thread, a requester). Returns true if
 * a request was already pending: the publisher now owns that retirement
 * and must service it (pto_retire_take()).
 */
bool pto_retire_publish(struct pto_core *core)
{
	int old = atomic_fetch_or(PTO_RB_READY, &core->rbits);

	wake_up_all(&core->wq);
	return (old & PTO_RB_REQUESTED) && !(old & PTO_RB_READY);
}
EXPORT_SYMBOL_IF_KUNIT(pto_retire_publish);

/*
 * Record a retirement request. Fully ordered fetch_or: if it adds the
 * second bit (READY was set, REQUESTED was not) the caller owns the
 * retirement and acquires everything the publisher initialized. Recorded
 * even without published state: the publisher then services it.
 */
VISIBLE_IF_KUNIT bool pto_retire_request(struct pto_core *core)
{
	int old = atomic_fetch_or(PTO_RB_REQUESTED, &core->rbits);

	return (old & PTO_RB_READY) && !(old & PTO_RB_REQUESTED);
}
EXPORT_SYMBOL_IF_KUNIT(pto_retire_request);

/* ---- the helper --------------------------------------------------------- */

void pto_retire_init(struct pto_retire_ctx *ctx, struct pto_device *pdev,
		     enum pto_retire_reason reason)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->pdev = pdev;
	ctx->reason = reason;
}
EXPORT_SYMBOL_IF_KUNIT(pto_retire_init);

static void pto_retire_leave(struct pto_retire_ctx *ctx,
			     struct pto_core *core, const char *why)
{
	/* ACKED stays: a core whose close did not stick did answer. */
	WRITE_ONCE(core->r_result, (core->r_result & PTO_RETIRE_ACKED) |
				   PTO_RETIRE_QUARANTINED);
	/*
	 * The set's time up to here: recorded now, while this call owns the
	 * core. After pass 4 a reset may have taken it over (recovery), and
	 * this call must not write to it then.
	 */
	WRITE_ONCE(core->r_set_ns, ctx->t0 ? ktime_get_ns() - ctx->t0 : 0);
	/*
	 * The record before the bit: a reset (under core_lock, which this call may
	 * not hold) that sees F_QUARANTINE adopts the core and writes r_result = 0
	 * after its test_bit() (control dependency); this smp_mb__before_atomic()
	 * orders our r_result = QUARANTINED before the set_bit() it reads, so the
	 * recovery's record is never overwritten by this one.
	 */
	smp_mb__before_atomic();
	set_bit(PTO_CORE_F_QUARANTINE, &core->flags);
	pto_retire_note(core, PTO_RW_QUARANTINE, 0);
	trace_pto_quarantine(core, why);
	atomic64_inc(&core->quarantines);
	__clear_bit(core->id, ctx->set);
	__set_bit(core->id, ctx->left);
	pr_err("pto%u: retirement: core %u not released (%s)\n",
	       ctx->pdev->index, core->id, why);
	pto_nl_core_quarantine(ctx->pdev, core->id, ctx->reason, why);
	wake_up_all(&ctx->pdev->core_wq);
}

/*
 * @core joins @ctx's set with a new record (reason, result and times of
 * this retirement alone), after pto_retire_take() claimed the launch's
 * references, or alone in recovery, which keeps the references the
 * retirement that quarantined the core claimed. WRITE_ONCE:
 * RETIRE_STATUS and debugfs read the record locklessly.
 */
void pto_retire_adopt(struct pto_retire_ctx *ctx, struct pto_core *core)
{
	ctx->gen[core->id] = READ_ONCE(core->gen);
	WRITE_ONCE(core->r_reason, ctx->reason);
	WRITE_ONCE(core->r_result, 0);
	WRITE_ONCE(core->r_core_ns, 0);
	WRITE_ONCE(core->r_set_ns, 0);
	__set_bit(core->id, ctx->set);
}

/*
 * A launch's initialization failed for @core (no handshake report, or a
 * wrong identity): never published, nothing claimed. The launcher leaves
 * it for recovery as a retirement would (its own record, F_QUARANTINE,
 * the wake-up of core_wq that a pending requester waits on), in @ctx's
 * left set, so the launch's retirement of what it published skips it.
 */
void pto_retire_leave_unpublished(struct pto_retire_ctx *ctx,
				  struct pto_core *core, const char *why)
{
	pto_retire_adopt(ctx, core);
	/*
	 * No request of this launch: no nonce, not the last retirement's
	 * (it equals the last response and would read as acknowledged).
	 * Recovery takes the pending nonce from KREG_NONCE.
	 */
	WRITE_ONCE(core->nonce, 0);
	pto_retire_leave(ctx, core, why);
}

/*
 * The owner of @core's retirement (elected by pto_retire_request() or
 * pto_retire_publish()) adds it to the set. The identity checks run here,
 * after the claim, so an unpublished address never turns a request into a
 * discarded one: a core with a zero register address, a wrong physical id
 * or an incomplete handshake is left for recovery, never closed blindly.
 */
void pto_retire_take(struct pto_retire_ctx *ctx, struct pto_core *core)
{
	struct pto_worker_line *w = &ctx->pdev->workers[core->id];
	u32 done;

	core->r_pf = core->owner;
	core->r_bo = core->payload_bo;
	core->r_notify = core->notify;
	core->r_gen = core->gen;
	pto_retire_adopt(ctx, core);
	/* Acquire: pairs with the core's release of its report's done. */
	done = smp_load_acquire(&w->done);
	if (!core->kregs)
		pto_retire_leave(ctx, core, "zero register address");
	else if (!done)
		pto_retire_leave(ctx, core, "incomplete handshake");
	else if (READ_ONCE(w->phys_id) != core->id)
		pto_retire_leave(ctx, core, "invalid physical id");
}
EXPORT_SYMBOL_IF_KUNIT(pto_retire_take);

/*
 * Request @core's retirement: if this call wins it, the core joins @set,
 * otherwise (pending on a publisher, or owned by another retirement)
 * @others.
 */
static void pto_retire_claim_core(struct pto_retire_ctx *ctx,
				  struct pto_core *core)
{
	/*
	 * The generation before the request: the fully ordered fetch_or
	 * keeps the read ahead of it, so a launch arming after this read is
	 * seen as a new generation, not waited on; a launch whose new
	 * generation this read saw has already reset the bits, so the
	 * request stays pending on it (pto_retire_arm_commit()).
	 */
	ctx->gen[core->id] = READ_ONCE(core->gen);
	if (pto_retire_request(core))
		pto_retire_take(ctx, core);
	else
		__set_bit(core->id, ctx->others);
}

#if IS_ENABLED(CONFIG_PTO_KUNIT_TEST)
/*
 * Claim @ids (indices into the device's cores): -EINVAL for an index out
 * of range or a duplicate, before any bit is set. Each core then gets a
 * REQUESTED (pto_retire_claim_core()). KUnit only: the driver claims masks.
 */
int pto_retire_claim(struct pto_retire_ctx *ctx, const u32 *ids,
		     unsigned int n)
{
	struct pto_device *pdev = ctx->pdev;
	DECLARE_BITMAP(seen, PTO_MAX_CORES);
	unsigned int k;

	bitmap_zero(seen, PTO_MAX_CORES);
	for (k = 0; k < n; k++) {
		if (ids[k] >= pdev->cores || test_bit(ids[k], seen))
			return -EINVAL;
		__set_bit(ids[k], seen);
	}
	for (k = 0; k < n; k++)
		pto_retire_claim_core(ctx, &pdev->core[ids[k]]);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(pto_retire_claim);
#endif

/*
 * Claim the cores of @mask, a bitmap (in range and distinct by nature:
 * bits at or beyond the device's core count are ignored), in ascending
 * order as pto_retire_claim() would, without an id array.
 */
void pto_retire_claim_mask(struct pto_retire_ctx *ctx,
			   const unsigned long *mask)
{
	unsigned int i;

	for_each_set_bit(i, mask, ctx->pdev->cores)
		pto_retire_claim_core(ctx, &ctx->pdev->core[i]);
}

/* A nonce for @core: never plain EXITED, never its last response. */
static u32 pto_retire_nonce(struct pto_core *core)
{
	u32 n;

	do {
		n = PTO_COND_EXITED | (get_random_u32() & PTO_COND_ID_MASK);
	} while (n == PTO_COND_EXITED || n == READ_ONCE(core->resp) ||
		 n == READ_ONCE(core->last_cond));
	return n;
}

/* Pass 1: every core's request is published before EXIT reaches any. */
VISIBLE_IF_KUNIT void pto_retire_pass_request(struct pto_retire_ctx *ctx)
{
	struct pto_device *pdev = ctx->pdev;
	unsigned int i;

	ctx->t0 = ktime_get_ns();
	for_each_set_bit(i, ctx->set, PTO_MAX_CORES) {
		struct pto_core *core = &pdev->core[i];
		u32 pending = READ_ONCE(*pto_kreg(core, PTO_KREG_NONCE));

		/*
		 * Recovery answers the request the core may still be about
		 * to echo (its claim was consumed): same nonce. Otherwise,
		 * and for a core never requested this generation, a new one.
		 */
		/* WRITE_ONCE: RETIRE_STATUS, debugfs read it locklessly. */
		if (ctx->recovery && pending)
			WRITE_ONCE(core->nonce, pending);
		else
			WRITE_ONCE(core->nonce, pto_retire_nonce(core));
		WRITE_ONCE(*pto_kreg(core, PTO_KREG_NONCE), core->nonce);
		pto_retire_note(core, PTO_RW_NONCE, core->nonce);
	}
	/*
	 * Every NONCE before any EXIT (pairs with the core's smp_rmb()
	 * between seeing EXIT and reading NONCE): a core that sees EXIT
	 * reads this round's nonce, never a stale one.
	 */
	smp_wmb();
	for_each_set_bit(i, ctx->set, PTO_MAX_CORES) {
		struct pto_core *core = &pdev->core[i];

		WRITE_ONCE(*pto_kreg(core, PTO_KREG_CTRL), PTO_CTRL_EXIT);
		pto_retire_note(core, PTO_RW_EXIT, PTO_CTRL_EXIT);
	}
	/* EXIT before the wake-ups' condition checks (wait_event). */
	smp_mb();
	for_each_set_bit(i, ctx->set, PTO_MAX_CORES)
		wake_up_all(&pdev->core[i].wq);
}
EXPORT_SYMBOL_IF_KUNIT(pto_retire_pass_request);

/* The current response: the echoed nonce, never a fixed EXITED value. */
static bool pto_retire_responded(struct pto_core *core)
{
	/* Acquire: pairs with the echo's release in pto_core_exit_ack(). */
	return smp_load_acquire(&core->resp) == core->nonce;
}

/* Pass 2, one look: record new responses; true when all have answered. */
VISIBLE_IF_KUNIT bool pto_retire_pass_poll(struct pto_retire_ctx *ctx)
{
	struct pto_device *pdev = ctx->pdev;
	bool all = true;
	unsigned int i;

	for_each_set_bit(i, ctx->set, PTO_MAX_CORES) {
		struct pto_core *core = &pdev->core[i];

		if (test_bit(i, ctx->acked))
			continue;
		if (!pto_retire_responded(core)) {
			all = false;
			continue;
		}
		__set_bit(i, ctx->acked);
		/* The record, read locklessly (RETIRE_STATUS, debugfs). */
		WRITE_ONCE(core->r_response, core->nonce);
		WRITE_ONCE(core->r_core_ns, ktime_get_ns() - ctx->t0);
		WRITE_ONCE(core->r_result, core->r_result | PTO_RETIRE_ACKED);
	}
	return all;
}
EXPORT_SYMBOL_IF_KUNIT(pto_retire_pass_poll);

static unsigned int pto_retire_deadline_ms(struct pto_device *pdev)
{
	return max(pdev->retire_ms ?: READ_ONCE(retire_timeout_ms), 1U);
}

/*
 * Pass 2: poll every target against one shared deadline. A core that
 * misses it is quarantined, unclosed, with every reference it holds, until
 * a reset or unload; its claim stays consumed (no close without an ACK).
 */
VISIBLE_IF_KUNIT void pto_retire_pass_wait(struct pto_retire_ctx *ctx)
{
	struct pto_device *pdev = ctx->pdev;
	u64 end = ctx->t0 + (u64)pto_retire_deadline_ms(pdev) * NSEC_PER_MSEC;
	unsigned int i;

	while (!pto_retire_pass_poll(ctx)) {
		u64 now = ktime_get_ns();

		if (now >= end)
			break;
		wait_event_timeout(pdev->core_wq, pto_retire_pass_poll(ctx),
				   nsecs_to_jiffies(end - now) + 1);
	}
	for_each_set_bit(i, ctx->set, PTO_MAX_CORES)
		if (!test_bit(i, ctx->acked)) {
			pto_nl_retire_timeout(pdev, i, ctx->reason,
					      pto_retire_deadline_ms(pdev));
			pto_retire_leave(ctx, &pdev->core[i], "no response");
		}
}
EXPORT_SYMBOL_IF_KUNIT(pto_retire_pass_wait);

/*
 * Pass 3: IDLE + CLOSE every acknowledged window, zap the owner's user
 * mappings, read every window back, then drain: all before any gate. A
 * window that reads back open is not released: its core leaves the
 * acknowledged set and is quarantined as a silent one is.
 */
void pto_retire_pass_close(struct pto_retire_ctx *ctx)
{
	struct pto_device *pdev = ctx->pdev;
	unsigned int i, ms = pto_mock_close_delay_ms();

	if (ms && !bitmap_empty(ctx->acked, PTO_MAX_CORES))
		msleep(ms);	/* mock only: widen the old protocol's race */
	for_each_set_bit(i, ctx->acked, PTO_MAX_CORES) {
		struct pto_core *core = &pdev->core[i];

		WRITE_ONCE(*(u32 *)(core->uregs + PTO_REG_DATA_MAIN_BASE),
			   PTO_DISPATCH_IDLE);
		pto_retire_note(core, PTO_RW_IDLE, PTO_DISPATCH_IDLE);
		WRITE_ONCE(*pto_kreg(core, PTO_KREG_FAST_PATH_ENABLE),
			   PTO_FAST_PATH_CLOSE);
		pto_retire_note(core, PTO_RW_CLOSE, PTO_FAST_PATH_CLOSE);
		if (core->r_pf)
			pto_window_zap(core->r_pf, core);
		/*
		 * The echo ends the launch's work as a FIN ends a task:
		 * serve an armed wake-up (here, so the echo stays the
		 * core's last window write). Dekker as at FIN: the echo's
		 * COND store precedes the core's release of resp, which
		 * pass 2 acquired (A-cumulative); this xchg(WAKE_REQ, 0)
		 * is fully ordered, pairing with the owner's WAKE_REQ = 1;
		 * full fence; read COND: it sees the echo, or is woken.
		 */
		pto_core_wake_serve(core, core->r_notify, core->r_pf);
	}
	for_each_set_bit(i, ctx->acked, PTO_MAX_CORES) {
		struct pto_core *core = &pdev->core[i];
		u32 v = READ_ONCE(*pto_kreg(core, PTO_KREG_FAST_PATH_ENABLE));

		pto_retire_note(core, PTO_RW_READBACK, v);
		if (v == PTO_FAST_PATH_CLOSE) {
			WRITE_ONCE(core->r_result,
				   core->r_result | PTO_RETIRE_CLOSED);
			continue;
		}
		/* Nothing of this call touches the core after this. */
		__clear_bit(i, ctx->acked);
		pto_retire_leave(ctx, core, "window read back open");
	}
	/*
	 * Drain: the closes and their read-backs complete before any gate
	 * store below becomes visible (the gate stores are releases too,
	 * but a release alone does not order posted MMIO; this fence is
	 * the mock's stand-in for the device's completion barrier).
	 */
	smp_mb();
	for_each_set_bit(i, ctx->acked, PTO_MAX_CORES)
		pto_retire_note(&pdev->core[i], PTO_RW_DRAIN, 0);
}
EXPORT_SYMBOL_IF_KUNIT(pto_retire_pass_close);

/*
 * Put the launch references a retirement claimed (r_bo, r_pf, r_notify):
 * by the retirement owner, or at unload for a core left quarantined.
 */
void pto_retire_put_refs(struct pto_core *core)
{
	if (core->r_bo)
		pto_bo_put(core->r_bo);
	if (core->r_pf)
		pto_file_put(core->r_pf);
	if (core->r_notify)
		eventfd_ctx_put(core->r_notify);
	core->r_bo = NULL;
	core->r_pf = NULL;
	core->r_notify = NULL;
}

/* Drop the claimed generation's launch references (owner only). */
static void pto_retire_drop(struct pto_core *core)
{
	bool same;

	spin_lock(&core->launch_lock);
	same = core->gen == core->r_gen;
	if (same) {
		/* WRITE_ONCE: the doorbell reads it locklessly. */
		WRITE_ONCE(core->owner, NULL);
		core->payload_bo = NULL;
		core->payload_kaddr = NULL;
		core->payload_addr = 0;
		core->notify = NULL;
	}
	spin_unlock(&core->launch_lock);
	/*
	 * Only the old protocol (mock switch) lets a new launch re-arm the
	 * core before this point; the references dropped are still the
	 * claimed generation's, so the counts stay balanced either way.
	 */
	pto_retire_put_refs(core);
}

/*
 * Recovery, pass 4: the user page still holds what the file the core was
 * quarantined under left there. Clear it under win_lock (write) before
 * F_QUARANTINE: mmap and faults check the bit under win_lock (read), so
 * no mapping sees the bit clear before the page is. The core writes
 * nothing after its echo.
 */
static void pto_retire_unquarantine(struct pto_core *core)
{
	struct pto_device *pdev = core->pdev;

	down_write(&pdev->win_lock);
	clear_page(core->uregs);
	/* The sink sees the page as the bit is cleared, right after this. */
	pto_retire_note(core, PTO_RW_UNQUARANTINE, 0);
	clear_bit(PTO_CORE_F_QUARANTINE, &core->flags);
	up_write(&pdev->win_lock);
}

/*
 * Pass 4: record, drop the launch's references, then store the release
 * value into each acknowledged core's gate. The core observes it and only
 * then returns; nothing of this call touches the core afterwards.
 */
VISIBLE_IF_KUNIT void pto_retire_pass_release(struct pto_retire_ctx *ctx)
{
	struct pto_device *pdev = ctx->pdev;
	unsigned int i;

	ctx->elapsed = ktime_get_ns() - ctx->t0;
	/* The left cores recorded theirs when they were left. */
	for_each_set_bit(i, ctx->set, PTO_MAX_CORES)
		WRITE_ONCE(pdev->core[i].r_set_ns, ctx->elapsed);
	for_each_set_bit(i, ctx->acked, PTO_MAX_CORES) {
		struct pto_core *core = &pdev->core[i];

		pto_retire_drop(core);
		WRITE_ONCE(core->r_result, core->r_result | PTO_RETIRE_RELEASED);
		atomic64_inc(&core->retirements);
		if (ctx->recovery)
			pto_retire_unquarantine(core);
		/*
		 * Release: the close, the drain and every write above
		 * precede the gate (pairs with pto_core_may_return()).
		 */
		smp_store_release(&pdev->gates[i].gate, PTO_GATE_RELEASE);
		pto_retire_note(core, PTO_RW_GATE, PTO_GATE_RELEASE);
		wake_up_all(&core->wq);
	}
}
EXPORT_SYMBOL_IF_KUNIT(pto_retire_pass_release);

/* Passes 1 to 4 over the claimed set; no wait for the cores' return. */
void pto_retire_run(struct pto_retire_ctx *ctx)
{
	if (bitmap_empty(ctx->set, PTO_MAX_CORES)) {
		ctx->t0 = ktime_get_ns();
		return;
	}
	pto_retire_pass_request(ctx);
	pto_retire_pass_wait(ctx);
	pto_retire_pass_close(ctx);
	pto_retire_pass_release(ctx);
}
EXPORT_SYMBOL_IF_KUNIT(pto_retire_run);

/* Generation @gen of @core has ended: returned, quarantined or re-armed. */
static bool pto_retire_done(struct pto_core *core, u32 gen)
{
	/* Acquire: pairs with the core's clear_bit_unlock after its state. */
	return !test_bit_acquire(PTO_CORE_F_LAUNCH, &core->flags) ||
	       test_bit(PTO_CORE_F_QUARANTINE, &core->flags) ||
	       READ_ONCE(core->gen) != gen;
}

static bool pto_retire_all_done(struct pto_retire_ctx *ctx,
				const unsigned long *mask)
{
	unsigned int i;

	for_each_set_bit(i, mask, PTO_MAX_CORES)
		if (!pto_retire_done(&ctx->pdev->core[i], ctx->gen[i]))
			return false;
	return true;
}

/*
 * Wait until the released cores have returned and the cores another
 * owner retires are done (returned or quarantined). Both are bounded: a
 * released core returns at once, another owner has its own deadline, and
 * a pending request's publisher services it before its launch returns.
 */
void pto_retire_finish(struct pto_retire_ctx *ctx)
{
	struct pto_device *pdev = ctx->pdev;

	wait_event(pdev->core_wq, pto_retire_all_done(ctx, ctx->acked) &&
		   pto_retire_all_done(ctx, ctx->others));
}
EXPORT_SYMBOL_IF_KUNIT(pto_retire_finish);

/*
 * After pto_retire_finish(): into @mask, the cores of this call that
 * ended quarantined, those it left and those another owner retired.
 */
void pto_retire_quarantined(const struct pto_retire_ctx *ctx,
			    unsigned long *mask)
{
	unsigned int i;

	bitmap_copy(mask, ctx->left, PTO_MAX_CORES);
	for_each_set_bit(i, ctx->others, PTO_MAX_CORES)
		if (test_bit(PTO_CORE_F_QUARANTINE, &ctx->pdev->core[i].flags))
			__set_bit(i, mask);
}
EXPORT_SYMBOL_IF_KUNIT(pto_retire_quarantined);

/* ---- entry points ------------------------------------------------------ */

/*
 * Retire @mask's cores through the one helper, for the paths that must
 * not fail (release, fatal error, unload): it allocates nothing.
 */
void pto_cores_retire(struct pto_device *pdev, const unsigned long *mask,
		      enum pto_retire_reason reason)
{
	struct pto_retire_ctx ctx;

	pto_retire_init(&ctx, pdev, reason);
	pto_retire_claim_mask(&ctx, mask);
	pto_retire_run(&ctx);
	pto_retire_finish(&ctx);
}

/*
 * Fatal device error (mock: debugfs "fatal"): emergency retirement of
 * every core without core_lock, so it may overlap a launch: a request
 * before READY stays pending for the publisher, and a core retiring
 * elsewhere is never written twice (the election).
 */
void pto_device_fatal(struct pto_device *pdev)
{
	DECLARE_BITMAP(mask, PTO_MAX_CORES);

	pr_err("pto%u: fatal device error: emergency retirement\n",
	       pdev->index);
	pto_nl_device_error(pdev, PTO_EVENT_ERR_FATAL);
	bitmap_zero(mask, PTO_MAX_CORES);
	bitmap_set(mask, 0, pdev->cores);
	pto_cores_retire(pdev, mask, PTO_RR_FATAL);
}

/*
 * A scheduler thread leaving its dispatch loop retires the cores it owns.
 * The ownership check and the claim run under core_lock; the passes run
 * without it, so they may overlap a launch or release on other cores.
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
	bool hidden;
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
	if (down_read_killable(&pdev->win_lock))
		return -EINTR;
	hidden = pto_core_hidden(pf, pdev->cluster_owner[args->core /
							 PTO_CORES_PER_CLUSTER]);
	args->nonce = hidden ? 0 : READ_ONCE(core->nonce);
	args->response = hidden ? 0 : READ_ONCE(core->resp);
	up_read(&pdev->win_lock);
	args->result = READ_ONCE(core->r_result);
	args->reason = READ_ONCE(core->r_reason);
	args->core_ns = READ_ONCE(core->r_core_ns);
	args->set_ns = READ_ONCE(core->r_set_ns);
	args->retirements = atomic64_read(&core->retirements);
	args->quarantines = atomic64_read(&core->quarantines);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(pto_ioctl_retire_status);
