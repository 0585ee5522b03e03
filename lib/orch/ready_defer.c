// SPDX-License-Identifier: MIT
/* Deferred publication: the orch thread's READY slots routed in batches. */
#include <stdatomic.h>
#include "orch/ready_impl.h"

/*
 * Deferred publication (ready_batch > 1): the orch thread appends a READY
 * single for "any worker of a kind" to a lock-free pending list, and
 * orch_ready_flush routes the list in one sched_mu hold (groups and exact
 * singles at once, after it, keeping order). Stealers take it under sched_mu
 * before they park or sleep, so a deferred slot never waits for the orch
 * thread. Flushed ready_batch claims after its first entry, at once for a
 * hungry kind, and before the orch thread can block.
 */

/* Route the list from the cursor on. Caller holds sched_mu. Acquire on
 * each link: pairs with orch_ready_defer's release, so the slot's fields
 * (state, members, wkind) written before its append are visible. */
static bool route_pending_locked(struct pto_orch *o, uint32_t *want)
{
	struct orch_slot *s;
	bool any = false;

	s = orch_pend_after_cursor(o);
	for (; s; s = atomic_load_explicit(&s->pend_next, memory_order_acquire)) {
		any |= orch_route_locked(o, s, want);
		atomic_store_explicit(&o->pend_taken, s, memory_order_relaxed);
	}
	return any;
}

/*
 * Kick for what was routed; clear the hunger of the kinds that got work and
 * have no idle worker left un-kicked (a parked worker never reads the list).
 * Caller holds sched_mu. Relaxed: the bits are a hint except on the parking
 * path, ordered by orch_heavy_barrier.
 */
static void kick_routed_locked(struct pto_orch *o, const uint32_t *want)
{
	uint32_t k, fed = 0;

	/*
	 * A server (kick_wakes_server: a device scheduler thread) kicked for
	 * one worker looks at the whole kind queue, and it steals the
	 * pending list at its pops and before it sleeps (orch_ready_steal):
	 * any routing of the kind feeds it. Its idle cores are not idle
	 * workers waiting for a kick of their own (a device's SUB workers
	 * are: orch_kind_served).
	 */
	for (k = ORCH_KIND_FIRST; k < ORCH_KIND_NR; k++)
		if (want[k] && (!orch_kick_kind(o, k, want[k]) ||
				orch_kind_served(o, k)))
			fed |= 1u << k;
	if (atomic_load_explicit(&o->rq_hungry, memory_order_relaxed) & fed)
		atomic_fetch_and_explicit(&o->rq_hungry, ~fed, memory_order_relaxed);
}

/* A worker with empty queues takes what the orch thread left pending.
 * Caller holds sched_mu. */
bool orch_steal_pending_locked(struct pto_orch *o)
{
	uint32_t want[ORCH_KIND_NR] = { 0 };

	if (!atomic_load_explicit(&o->pend_first, memory_order_acquire) ||
	    !route_pending_locked(o, want))
		return false;
	kick_routed_locked(o, want);
	orch_bump_gen(o);
	return true;
}

void orch_ready_flush(struct pto_orch *o)
{
	uint32_t want[ORCH_KIND_NR] = { 0 };

	if (!o->pend_tail)
		return;
	orch_lock(&o->sched_mu);
	if (route_pending_locked(o, want)) {
		kick_routed_locked(o, want);
		/* Release: as in orch_enqueue_ready, once for the batch. */
		orch_bump_gen(o);
	}
	/* Reset under sched_mu: no stealer walks the list meanwhile. */
	atomic_store_explicit(&o->pend_first, NULL, memory_order_relaxed);
	atomic_store_explicit(&o->pend_taken, NULL, memory_order_relaxed);
	orch_unlock(&o->sched_mu);
	o->pend_tail = NULL;
}

/* Batch size for the orch thread's publications: 1 routes each at once.
 * Capped at the task_window sizing hint. Set before the
 * first run (create). */
void orch_set_ready_batch(struct pto_orch *o, uint32_t n)
{
	if (n > o->cfg.task_window)
		n = o->cfg.task_window;
	o->ready_batch = n ? n : 1;
}

/* At every slot claim, before the ring alloc (orch thread). */
void orch_ready_check(struct pto_orch *o, uint64_t next_tid)
{
	if (o->pend_tail && next_tid - o->pend_tid0 >= o->ready_batch)
		orch_ready_flush(o);
}

/* Publication's enqueue on the orch thread. */
void orch_ready_defer(struct pto_orch *o, struct orch_slot *s)
{
	uint32_t bit = 1u << s->wkind;

	if (o->ready_batch <= 1 || s->is_group || s->members[0].widx >= 0) {
		orch_ready_flush(o);	/* keep publication order */
		orch_enqueue_ready(o, s);
		return;
	}
	atomic_store_explicit(&s->pend_next, NULL, memory_order_relaxed);
	if (!o->pend_tail)
		o->pend_tid0 = s->task_id;
	/*
	 * Append (release: pairs with the stealer's acquire of the link), then
	 * load the hunger bits. A parking worker sets its bit, then loads the
	 * list: store-buffering, so both sides need a full fence. Ours is a
	 * compiler barrier paired with the worker's membarrier(2)
	 * (orch_heavy_barrier); a light sleep skips it and is bounded by
	 * ORCH_LIGHT_SLEEP_NS instead.
	 */
	if (o->pend_tail)
		atomic_store_explicit(&o->pend_tail->pend_next, s,
				      memory_order_release);
	else
		atomic_store_explicit(&o->pend_first, s, memory_order_release);
	o->pend_tail = s;
	atomic_signal_fence(memory_order_seq_cst);	/* the light side */
	if ((atomic_load_explicit(&o->rq_hungry, memory_order_relaxed) & bit) ||
	    atomic_load_explicit(&orch_membarrier_broken, memory_order_relaxed))
		orch_ready_flush(o);
}
