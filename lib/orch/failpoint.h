/* SPDX-License-Identifier: MIT */
/*
 * Allocation-failure injection and trace points, for the tests. The hook
 * is compiled in only with PTO_TEST_HOOKS (the sanitizer builds and the
 * selftests' archive); elsewhere orch_may_fail() is a constant 0.
 */
#ifndef PTO_ORCH_FAILPOINT_H
#define PTO_ORCH_FAILPOINT_H

#include "orch/slot.h"

/* Fail points: a nonzero hook return fails the allocation there. */
#define ORCH_FP_RUN_REGISTER	0	/* run-slot registration */
#define ORCH_FP_SCOPE_REGISTER	1	/* scope frame append */
#define ORCH_FP_ARGS		2	/* copying args into the slot */
#define ORCH_FP_GROUP_PREP	3	/* member vectors */
#define ORCH_FP_JOURNAL		4	/* cleanup journal append */
#define ORCH_FP_TENSORMAP	5	/* TensorMap node / rehash */
#define ORCH_FP_DEPS		6	/* producer collection */
#define ORCH_FP_WIRE		7	/* fanout / fanin edge vectors */
#define ORCH_FP_CANCEL_SNAPSHOT	8	/* cancellation snapshot */
#define ORCH_FP_RUN_ALLOC	9	/* run state */
#define ORCH_FP_NR		10
/* Trace points: the hook is told, its return value is ignored. */
#define ORCH_TP_BEFORE_PUBLISH	100	/* wiring done, not yet published */
#define ORCH_TP_CANCEL_SETTLE	101	/* debts cleared, releases start */
/* Back-pressure: about to sleep in ring_wait(), ring.mu held (the hook
 * must take no lock): a wake-up from here on ends the sleep. */
#define ORCH_TP_RING_WAIT	102
/* pto_orch_close(): the backend's stop is called (no lock held). */
#define ORCH_TP_BACKEND_STOP	103

#ifdef PTO_TEST_HOOKS
/* Returns nonzero to fail the allocation at @fp. */
typedef int (*orch_fail_hook_fn)(void *ctx, struct pto_orch *o, int fp,
				 struct orch_slot *s);
#endif

#endif
