// SPDX-License-Identifier: MIT
/* Deferred publication: the orch thread's READY slots routed in batches. */
#include <stdatomic.h>
#include "orch/ready_impl.h"

/*
 * On the threaded in-process and device backends (ready_batch > 1) a
 * READY single for "any worker of a kind" is not routed at publication:
 * orch_ready_defer appends it to the pending list and orch_ready_flush
 * routes the list in one sched_mu hold, one generation bump and one kick
 * pass per kind. Groups and exact-target singles are routed at once,
 * after the list, so publication order is kept.
 *
 * The list is a chain through pend_next: appended by the orch thread
 * without a lock, consumed under sched_mu from the cursor pend_taken by
 * the flush and by stealers (orch_steal_pending_locked: a worker about
 * to park, orch_ready_pop_parking; a server thread at an empty pop or
 * before it sleeps, orch_ready_steal), reset only by the flush. So a
 * deferred slot never waits for the orch thread to come back: an idle
 * worker takes it before it parks, or the hunger flush kicks one.
 *
 * The list is flushed ready_batch claims after its first entry
 * (orch_ready_check; ready_batch <= window, so a listed slot cannot be
 * reissued before the reset that drops it), at once when a deferred
 * slot's kind is hungry (orch_ready_hungry), and before the orch thread
 * can block or leave the orchestration function (ring back-pressure,
 * begin_run, end of submission, run waits). A listed slot is READY and
 * in no queue, so nothing but routing moves it.
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
 * Kick for what was routed; clear the hunger of the kinds that got work
 * and have no idle worker left un-kicked. A kind with a parked worker
 * still idle stays hungry, so its next READY task is flushed at once
 * instead of waiting on the list behind busy workers (a parked worker
 * never looks at the list). Liveness after the clear: every idle worker
 * of the kind was kicked, takes work or passes through
 * orch_ready_pop_parking (bit, barrier if heavy, steal) before it sleeps
 * (a light sleep is bounded: before_sleep). Caller
 * holds sched_mu. Relaxed: the bits are a hint everywhere except on the
 * parking path, whose ordering comes from orch_heavy_barrier.
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
 * Capped at the window (see the reuse argument above). Set before the
 * first run (create). */
void orch_set_ready_batch(struct pto_orch *o, uint32_t n)
{
	if (n > o->rings[0].window)
		n = o->rings[0].window;
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
	 * Append (release: a stealer that loads the link, acquire, sees the
	 * slot's fields written before it), then load the hunger bits. A
	 * worker about to park sets its kind's bit, then loads the list
	 * (orch_ready_pop_parking). That is the store-buffering pattern:
	 * it needs a full fence on both sides, or the worker could miss
	 * this append and we its bit, and it would park with the slot
	 * unrouted while this thread goes on to block elsewhere. A fence
	 * here, once per submit, is dear (a locked instruction waits for the
	 * submit's pending stores to drain), so the fence is asymmetric:
	 * only a compiler barrier here, and the parking worker's
	 * membarrier(2) (orch_heavy_barrier) makes this thread execute a
	 * full barrier: either before our load (which then
	 * sees the bit: we flush, and the flush kicks the parked worker) or
	 * after it, which drains our append before the worker reads the list
	 * (it steals the slot). A worker's first sleep of an idle period
	 * skips the barrier and is bounded (before_sleep): a miss then costs
	 * latency up to ORCH_LIGHT_SLEEP_NS, never a lost slot. A bit is
	 * cleared only by a flush or steal that routed work of the kind and
	 * kicked its idle workers (kick_routed_locked).
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
