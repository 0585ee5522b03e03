// SPDX-License-Identifier: GPL-2.0-only
/*
 * pto - a core's walk through one task-boundary barrier.
 *
 * BEFORE: claim or join the (cluster, pending slot)'s rendezvous, arrive,
 * and leave only once the phase is sealed, so no participant executes
 * before the task's inputs are in the lane. AFTER (outputs written back
 * by the caller first): arrive, leave on the seal; the core completing
 * released[AFTER] stores SETTLED, and only then may completion be
 * published. Every wait is bounded by the budgets of pto_cs_expire().
 */
#include <linux/kernel.h>
#include <linux/pto.h>
#include <kunit/visibility.h>
#include "pto_capture_core.h"

void pto_cap_core_begin(struct pto_cap_core *cc, u32 phase, u64 now)
{
	cc->phase = phase;
	cc->at = phase == PTO_CS_BEFORE ? PTO_CAPC_CLAIM : PTO_CAPC_ARRIVE;
	cc->t0 = now;
	cc->expired = false;
	cc->prog_index = 0;
	cc->prog_cursor = 0;
	cc->kick = 0;
	cc->status = PTO_TASK_OK;
}
EXPORT_SYMBOL_IF_KUNIT(pto_cap_core_begin);

static void pto_cap_fault(struct pto_cap_core *cc, u32 step)
{
	if (cc->fault)
		cc->fault(cc->fault_priv, step);
}

static enum pto_capp pto_cap_fatal(struct pto_cap_core *cc, u32 status)
{
	cc->status = status;
	cc->at = PTO_CAPC_DONE;
	return PTO_CAPP_FATAL;
}

/*
 * A budget runs from the phase's start or from the last progress of its
 * answer: the acknowledgement line's (argument, cursor) moved. A plain
 * read, a hint only; what is accepted is decided by pto_cs_poll(). A
 * WouldBlock answer echoes the request's position, so back-pressure that
 * never clears does not count as progress and the budget expires.
 */
static void pto_cap_note_progress(struct pto_cap_core *cc, u64 now)
{
	const struct pto_capture_ack *ack;
	u64 cursor;
	u32 index;

	if (!cc->part.pub)
		return;
	ack = &cc->part.area->acks[PTO_CS_PUB_CORE(cc->part.pub)];
	index = READ_ONCE(ack->arg_index);
	cursor = READ_ONCE(ack->arg_cursor);
	if (index == cc->prog_index && cursor == cc->prog_cursor)
		return;
	cc->prog_index = index;
	cc->prog_cursor = cursor;
	cc->t0 = now;
}

/* Blocked: spend the budgets. */
static enum pto_capp pto_cap_wait(struct pto_cap_core *cc, u64 now)
{
	pto_cap_note_progress(cc, now);
	if (now - cc->t0 >= cc->lost_ns) {
		/* No answer at all, or no publisher: leave, nothing written. */
		pto_cs_expire(&cc->part, true);
		return pto_cap_fatal(cc, PTO_TASK_ECAPTURE_TIMEOUT);
	}
	/*
	 * Sealed and waiting for the peers' departures (the AFTER
	 * publisher): nothing is left to abort, only the second budget.
	 */
	if (cc->expired || cc->at == PTO_CAPC_RELEASE ||
	    now - cc->t0 < cc->budget_ns)
		return PTO_CAPP_WAIT;
	cc->expired = true;
	switch (pto_cs_expire(&cc->part, false)) {
	case PTO_CS_INIT_LOST:
		return pto_cap_fatal(cc, PTO_TASK_ECAPTURE_INIT_LOST);
	case PTO_CS_TIMEOUT:
		/* aborted is raised (or was): keep polling for the answer. */
		cc->kick |= PTO_CAPK_SV;
		return PTO_CAPP_WAIT;
	default:
		return pto_cap_fatal(cc, PTO_TASK_ECAPTURE_TIMEOUT);
	}
}

static enum pto_capp pto_cap_claim(struct pto_cap_core *cc, u64 now)
{
	switch (pto_cs_claim(&cc->part)) {
	case PTO_CS_CLAIMED:
		pto_cap_fault(cc, PTO_CAPF_CLAIMED);
		pto_cs_initialize(&cc->part);
		pto_cs_ready(&cc->part);
		cc->kick |= PTO_CAPK_PEERS;
		fallthrough;
	case PTO_CS_JOINED:
		cc->at = PTO_CAPC_ARRIVE;
		return PTO_CAPP_PASSED;	/* moved: the caller loops */
	case PTO_CS_WAIT:
		return pto_cap_wait(cc, now);
	default:
		return pto_cap_fatal(cc, PTO_TASK_ECAPTURE_TIMEOUT);
	}
}

static enum pto_capp pto_cap_arrive(struct pto_cap_core *cc)
{
	pto_cap_fault(cc, cc->phase == PTO_CS_BEFORE ? PTO_CAPF_ARRIVE_BEFORE :
						      PTO_CAPF_ARRIVE_AFTER);
	switch (pto_cs_arrive(&cc->part, cc->phase)) {
	case PTO_CS_PUBLISHER:
		pto_cs_request(&cc->part, 0, 0);
		cc->kick |= PTO_CAPK_SV | PTO_CAPK_PEERS;
		fallthrough;
	case PTO_CS_PEER:
		cc->at = PTO_CAPC_POLL;
		return PTO_CAPP_PASSED;
	default:
		return pto_cap_fatal(cc, PTO_TASK_ECAPTURE_TIMEOUT);
	}
}

static enum pto_capp pto_cap_poll(struct pto_cap_core *cc, u64 now)
{
	switch (pto_cs_poll(&cc->part, &cc->echo)) {
	case PTO_CS_WAIT:
		return pto_cap_wait(cc, now);
	case PTO_CS_PROGRESS:
		if (cc->echo.status == PTO_CS_ST_WOULDBLOCK) {
			/* Back off: the lane is busy or the arena is full. */
			cc->resume_ns = now + cc->backoff_ns;
			cc->at = PTO_CAPC_BACKOFF;
			return PTO_CAPP_PASSED;
		}
		pto_cs_request(&cc->part, cc->echo.arg_index,
			       cc->echo.arg_cursor);
		cc->kick |= PTO_CAPK_SV;
		return PTO_CAPP_PASSED;
	case PTO_CS_SEALED:
		cc->at = PTO_CAPC_RELEASE;
		return PTO_CAPP_PASSED;
	case PTO_CS_ABORTED:
		/* The supervisor answered the abort: leave, run nothing. */
		return pto_cap_fatal(cc, PTO_TASK_ECAPTURE_TIMEOUT);
	default:
		return pto_cap_fatal(cc, PTO_TASK_ECAPTURE_TIMEOUT);
	}
}

static enum pto_capp pto_cap_backoff(struct pto_cap_core *cc, u64 now)
{
	if ((s64)(now - cc->resume_ns) < 0)
		return pto_cap_wait(cc, now);
	pto_cs_request(&cc->part, cc->echo.arg_index, cc->echo.arg_cursor);
	cc->kick |= PTO_CAPK_SV;
	cc->at = PTO_CAPC_POLL;
	return PTO_CAPP_PASSED;
}

static enum pto_capp pto_cap_release(struct pto_cap_core *cc, u64 now)
{
	if (cc->phase == PTO_CS_AFTER && !cc->part.released)
		pto_cap_fault(cc, PTO_CAPF_RELEASE_AFTER);
	switch (pto_cs_release(&cc->part)) {
	case PTO_CS_COMPLETE:
		cc->settled = true;
		fallthrough;
	case PTO_CS_RELEASED:
		/* A waiting AFTER publisher looks at the mask again. */
		cc->kick |= PTO_CAPK_PEERS;
		cc->at = PTO_CAPC_DONE;
		return PTO_CAPP_PASSED;
	case PTO_CS_WAIT:
		/* The AFTER publisher: its seal is read until the mask closes. */
		cc->kick |= PTO_CAPK_PEERS;
		return pto_cap_wait(cc, now);
	default:
		/* An aborted occupancy is never settled. */
		return pto_cap_fatal(cc, PTO_TASK_ECAPTURE_TIMEOUT);
	}
}

/*
 * Advance @cc as far as it goes without waiting: PTO_CAPP_WAIT when
 * blocked (the caller sleeps until kicked or a short timeout, then calls
 * again), PTO_CAPP_PASSED once the phase is left, PTO_CAPP_FATAL with
 * @status. @kick says whom to wake. The loop is bounded: every step
 * moves @at forward but PROGRESS, which blocks at the next poll.
 */
enum pto_capp pto_cap_core_advance(struct pto_cap_core *cc, u64 now)
{
	enum pto_capp r;

	cc->kick = 0;
	for (;;) {
		switch (cc->at) {
		case PTO_CAPC_CLAIM:
			r = pto_cap_claim(cc, now);
			break;
		case PTO_CAPC_ARRIVE:
			r = pto_cap_arrive(cc);
			break;
		case PTO_CAPC_POLL:
			r = pto_cap_poll(cc, now);
			break;
		case PTO_CAPC_BACKOFF:
			r = pto_cap_backoff(cc, now);
			break;
		case PTO_CAPC_RELEASE:
			r = pto_cap_release(cc, now);
			break;
		default:
			return cc->status ? PTO_CAPP_FATAL : PTO_CAPP_PASSED;
		}
		if (r != PTO_CAPP_PASSED)
			return r;
	}
}
EXPORT_SYMBOL_IF_KUNIT(pto_cap_core_advance);
