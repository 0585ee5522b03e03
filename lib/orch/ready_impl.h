/* SPDX-License-Identifier: MIT */
/* What the ready-queue files (ready.c, ready_defer.c, ready_park.c) share. */
#ifndef PTO_ORCH_READY_IMPL_H
#define PTO_ORCH_READY_IMPL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "orch/orch_internal.h"

/*
 * Set if a registered barrier call ever fails (a seccomp policy that
 * refuses the command): from then on orch_ready_defer routes every READY
 * slot at once, so batching no longer depends on the asymmetric fence.
 */
extern _Atomic bool orch_membarrier_broken;

/*
 * Bump the ready generation. Every writer holds sched_mu, so a load and a
 * store-release make the same increment as the RMW without a locked
 * instruction (which, on the submit path, waits for every store before
 * it to drain). Release: an idle worker that acquire-loads the new value
 * and then takes sched_mu finds the queue change made before the bump.
 */
static inline void orch_bump_gen(struct pto_orch *o)
{
	uint64_t g = atomic_load_explicit(&o->rq_gen, memory_order_relaxed);

	atomic_store_explicit(&o->rq_gen, g + 1, memory_order_release);
}

/*
 * Are workers of @kind served by a thread that serves many (a device's
 * scheduler thread: kick_wakes_server), not by a thread of their own (the
 * in-process workers, and a device's SUB workers: own_thread_kinds)?
 */
static inline bool orch_kind_served(const struct pto_orch *o, uint32_t kind)
{
	return o->ops->kick_wakes_server &&
	       !(o->ops->own_thread_kinds >> kind & 1);
}

/*
 * The first pending slot not yet taken. Under sched_mu, exact; without it
 * (orch_ready_any_kind) a hint: the cursor's slot may have been dropped by a
 * flush and reissued meanwhile, and its link then names anything - a
 * slot is stable in memory, so the read itself is safe.
 */
static inline struct orch_slot *orch_pend_after_cursor(struct pto_orch *o)
{
	struct orch_slot *t = atomic_load_explicit(&o->pend_taken,
						   memory_order_relaxed);

	return t ? atomic_load_explicit(&t->pend_next, memory_order_acquire) :
		   atomic_load_explicit(&o->pend_first, memory_order_acquire);
}

/* Caller holds sched_mu: ready.c's routing of one slot (route_locked),
 * kick pass (kick_kind) and pop (pop_locked), for the other files. */
bool orch_route_locked(struct pto_orch *o, struct orch_slot *s, uint32_t *want);
bool orch_kick_kind(struct pto_orch *o, uint32_t kind, uint32_t want);
int orch_ready_pop_locked(struct pto_orch *o, int32_t widx,
			  struct orch_dispatch *d, bool steal);
/* ready_defer.c: a worker with empty queues takes the pending list. */
bool orch_steal_pending_locked(struct pto_orch *o);

#endif
