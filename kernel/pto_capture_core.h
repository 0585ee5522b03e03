/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pto - one core's walk through a task-boundary barrier of the resident
 * route's args capture (pto_capture_core.c, Documentation/capture.md).
 * The walk is a step function over the rendezvous steps of
 * pto_capture_slot.h: it never sleeps, so KUnit drives several cores and
 * a supervisor under explicit schedules, and the core thread loops on it.
 */
#ifndef _PTO_CAPTURE_CORE_H_
#define _PTO_CAPTURE_CORE_H_

#include <linux/types.h>
#include "pto_capture_slot.h"

/* What pto_cap_core_advance() tells the core. */
enum pto_capp {
	PTO_CAPP_WAIT,		/* blocked: wait for a kick, then advance */
	PTO_CAPP_PASSED,	/* left the phase: run (BEFORE) or finish */
	PTO_CAPP_FATAL,		/* the run's fatal path: @status says why */
};

/* Where the walk is (struct pto_cap_core.at). */
enum pto_capc_at {
	PTO_CAPC_CLAIM,		/* BEFORE only: claim or join the slot */
	PTO_CAPC_ARRIVE,	/* set this core's bit in arrived[phase] */
	PTO_CAPC_POLL,		/* wait for the phase's acknowledgement */
	PTO_CAPC_BACKOFF,	/* publisher: WouldBlock, republish later */
	PTO_CAPC_RELEASE,	/* sealed: set the released bit, maybe settle */
	PTO_CAPC_DONE,
};

/* Named steps a fault hook sees (struct pto_cap_core.fault). */
enum pto_capf {
	PTO_CAPF_NONE,
	PTO_CAPF_CLAIMED,	/* won the claim, before initializing */
	PTO_CAPF_ARRIVE_BEFORE,	/* about to arrive at BEFORE */
	PTO_CAPF_ARRIVE_AFTER,	/* about to arrive at AFTER */
	PTO_CAPF_RELEASE_AFTER,	/* sealed, about to leave AFTER */
	PTO_CAPF_COUNT,
};

/* Whom the caller wakes after an advance (struct pto_cap_core.kick). */
#define PTO_CAPK_PEERS 0x1	/* READY, a request, a release or SETTLED */
#define PTO_CAPK_SV 0x2	/* a request, or an abort raised */

/**
 * struct pto_cap_core - a core inside one task's barriers.
 * @part: its rendezvous state (pto_cs_part_init()).
 * @at: enum pto_capc_at; @phase: PTO_CS_BEFORE / _AFTER.
 * @budget_ns / @lost_ns: the first and second budgets, counted from the
 *	phase's start or its last observed progress.
 * @t0: that start; @resume_ns: the end of a WouldBlock back-off.
 * @backoff_ns: how long a publisher waits before republishing.
 * @prog_index / @prog_cursor: the last observed progress of the phase's
 *	answer (a liveness hint: a copy that advances is not timed out).
 * @echo: the publisher's last progress answer.
 * @expired: the first budget was spent in this phase.
 * @settled: this core stored SETTLED (it completes the task).
 * @status: on PTO_CAPP_FATAL, PTO_TASK_ECAPTURE_*.
 * @kick: PTO_CAPK_* set by the last advance, for the caller to act on.
 * @fault / @fault_priv: the mock's fault injection at the named steps
 *	(enum pto_capf), or NULL; it may sleep (a stalled core).
 */
struct pto_cap_core {
	struct pto_capture_part part;
	u32 at;
	u32 phase;
	u64 budget_ns;
	u64 lost_ns;
	u64 backoff_ns;
	u64 t0;
	u64 resume_ns;
	u32 prog_index;
	u64 prog_cursor;
	struct pto_capture_ack echo;
	bool expired;
	bool settled;
	u32 status;
	u32 kick;
	void (*fault)(void *priv, u32 step);
	void *fault_priv;
};

void pto_cap_core_begin(struct pto_cap_core *cc, u32 phase, u64 now);
enum pto_capp pto_cap_core_advance(struct pto_cap_core *cc, u64 now);

#endif /* _PTO_CAPTURE_CORE_H_ */
