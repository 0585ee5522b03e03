/* SPDX-License-Identifier: MIT */
/* Allocation-failure injection and trace points, for the tests. */
#ifndef PTO_ORCH_FAILPOINT_H
#define PTO_ORCH_FAILPOINT_H

#include "orch/slot.h"

enum orch_fp {
	ORCH_FP_RUN_REGISTER = 0,	/* run-slot registration */
	ORCH_FP_SCOPE_REGISTER,		/* scope frame append */
	ORCH_FP_ARGS,			/* copying args into the slot */
	ORCH_FP_GROUP_PREP,		/* member vectors */
	ORCH_FP_JOURNAL,		/* cleanup journal append */
	ORCH_FP_TENSORMAP,		/* TensorMap node / rehash */
	ORCH_FP_DEPS,			/* producer collection */
	ORCH_FP_WIRE,			/* fanout / fanin edge vectors */
	ORCH_FP_CANCEL_SNAPSHOT,	/* cancellation snapshot */
	ORCH_FP_RUN_ALLOC,		/* run state */
	ORCH_FP_NR,
	/* Trace points: the hook is told, its return value is ignored. */
	ORCH_TP_BEFORE_PUBLISH = 100,	/* wiring done, not yet published */
	ORCH_TP_CANCEL_SETTLE,		/* debts cleared, releases start */
	/* Back-pressure: about to sleep in ring_wait(), ring.mu held (the
	 * hook must take no lock): a wake-up from here on ends the sleep. */
	ORCH_TP_RING_WAIT,
	/* pto_orch_close(): the backend's stop is called (no lock held). */
	ORCH_TP_BACKEND_STOP,
};

/* Returns nonzero to fail the allocation at @fp. */
typedef int (*orch_fail_hook_fn)(void *ctx, struct pto_orch *o, int fp,
				 struct orch_slot *s);

#endif
