// SPDX-License-Identifier: MIT
/*
 * READY routing and dispatch claims (seed 001 §2 step 6, §3).
 *
 * Queues: one exact FIFO per worker (targeted next-level singles), one FIFO
 * per worker kind ("any worker of kind K", and the shared SUB FIFO), and
 * one group FIFO. They are intrusive doubly linked lists through the slot
 * (a slot is in at most one queue), so enqueue never allocates and
 * cancellation can unlink a READY slot in O(1).
 *
 * sched_mu guards the queues, the workers' load / assigned state and the
 * READY -> RUNNING and (cancellation's) READY -> FAILED claims, which
 * therefore cannot race each other. Lock order: sched_mu before any
 * fanout_mu; nothing takes sched_mu while holding a fanout_mu.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include "orch/orch_internal.h"

/*
 * Set if a registered barrier call ever fails (a seccomp policy that
 * refuses the command): from then on orch_ready_defer routes every READY
 * slot at once, so batching no longer depends on the asymmetric fence.
 */
static _Atomic bool membarrier_broken;

/*
 * Bump the ready generation. Every writer holds sched_mu, so a load and a
 * store-release make the same increment as the RMW without a locked
 * instruction (which, on the submit path, waits for every store before
 * it to drain). Release: an idle worker that acquire-loads the new value
 * and then takes sched_mu finds the queue change made before the bump.
 */
static void bump_gen(struct pto_orch *o)
{
	uint64_t g = atomic_load_explicit(&o->rq_gen, memory_order_relaxed);

	atomic_store_explicit(&o->rq_gen, g + 1, memory_order_release);
}

/*
 * The queued counts: what a pop could take - slots linked in a FIFO plus
 * group members assigned and not yet popped - per kind FIFO, and the rest
 * (exact FIFOs, the group FIFO, assigned members) together, so a worker
 * can ask whether work of its kind is there (orch_ready_any_kind). Every
 * writer holds sched_mu (a load and a store, no locked instruction); the
 * readers do not.
 */
static void queued_add(_Atomic uint32_t *c, int d)
{
	uint32_t n = atomic_load_explicit(c, memory_order_relaxed);

	atomic_store_explicit(c, n + (uint32_t)d, memory_order_relaxed);
}

/* The count @s, linked in @q, is in. */
static _Atomic uint32_t *queued_of(struct pto_orch *o, const struct orch_rq *q,
				   const struct orch_slot *s)
{
	return q == &o->kind_rq[s->wkind] ? &o->rq_queued_kind[s->wkind] :
					     &o->rq_queued_other;
}

static void rq_push(struct pto_orch *o, struct orch_rq *q, struct orch_slot *s)
{
	queued_add(queued_of(o, q, s), 1);
	s->rq = q;
	s->rq_next = NULL;
	s->rq_prev = q->tail;
	if (q->tail)
		q->tail->rq_next = s;
	else
		q->head = s;
	q->tail = s;
}

void orch_rq_unlink(struct pto_orch *o, struct orch_slot *s)
{
	struct orch_rq *q = s->rq;

	if (!q)
		return;
	queued_add(queued_of(o, q, s), -1);
	if (s->rq_prev)
		s->rq_prev->rq_next = s->rq_next;
	else
		q->head = s->rq_next;
	if (s->rq_next)
		s->rq_next->rq_prev = s->rq_prev;
	else
		q->tail = s->rq_prev;
	s->rq = NULL;
	s->rq_next = s->rq_prev = NULL;
}

/* orch_rq_unlink() of the head of @q (@s; its rq_prev is NULL), inline:
 * every pop takes one. */
static inline void rq_unlink_head(struct pto_orch *o, struct orch_rq *q,
				  struct orch_slot *s)
{
	queued_add(queued_of(o, q, s), -1);
	q->head = s->rq_next;
	if (s->rq_next)
		s->rq_next->rq_prev = NULL;
	else
		q->tail = NULL;
	s->rq = NULL;
	s->rq_next = NULL;
}

int orch_worker_index(struct pto_orch *o, int32_t id)
{
	uint32_t i;

	for (i = 0; i < o->nworkers; i++)
		if (o->workers[i].id == id)
			return (int)i;
	return -1;
}

/* Nothing in flight: what the group rule needs of every target. */
static bool worker_idle(const struct orch_worker *w)
{
	return !w->inflight && !w->has_assigned;
}

/* Room for one more single (capacity > 1: a pending slot). */
static bool worker_has_room(const struct orch_worker *w)
{
	return w->inflight < w->cap && !w->has_assigned;
}

void orch_set_worker_capacity(struct pto_orch *o, int32_t widx, uint32_t cap)
{
	orch_lock(&o->sched_mu);
	o->workers[widx].cap = cap ? cap : 1;
	orch_unlock(&o->sched_mu);
}

static bool group_targets(const struct orch_slot *g, int32_t widx)
{
	uint32_t i;

	for (i = 0; i < g->nmembers; i++)
		if (g->members[i].widx == widx)
			return true;
	return false;
}

/* Kick the idle targets of the group at the head, so the last idle one to
 * look claims it. Caller holds sched_mu. */
static void kick_group_head(struct pto_orch *o)
{
	struct orch_slot *g = o->group_rq.head;
	uint32_t i;

	if (!g)
		return;
	for (i = 0; i < g->nmembers; i++) {
		int32_t t = g->members[i].widx;

		if (worker_idle(&o->workers[t]))
			o->ops->kick(o->be, t, o->workers[t].kind);
	}
}

/*
 * Set on a worker's thread while orch_member_done_pop runs the completion
 * of its task: that worker pops right after, under the same sched_mu pass
 * that marks it idle, so the first consumer the completion makes READY
 * for its kind needs no kick - a kick would wake (a system call, when
 * parked) another worker only to race this one for the task. This is what
 * keeps a chain on one worker with the other parked. Only a hint about
 * wake-ups: the task is queued as usual, and whoever pops first runs it.
 * The credit is decided at routing but spent by the pop after the whole
 * completion, and a later routing (an exact consumer of the same
 * completion, a group that became head) can make that pop take other
 * work: @saved remembers the kick, and orch_member_done_pop pays it back
 * if its pop did not take the kind FIFO's head.
 */
static _Thread_local struct {
	struct pto_orch *o;
	int32_t widx;
	bool credit;
	bool saved;	/* a kick was skipped on the credit */
} self_pop;

/* Caller holds sched_mu. Will worker self_pop.widx's next pop reach the
 * kind FIFO of @s? Not if its exact FIFO or a group is ahead of it. */
static bool take_self_credit(struct pto_orch *o, const struct orch_slot *s)
{
	struct orch_worker *w;

	if (!self_pop.credit || self_pop.o != o)
		return false;
	w = &o->workers[self_pop.widx];
	if (w->kind != s->wkind || w->exact.head || w->has_assigned ||
	    (o->group_rq.head && group_targets(o->group_rq.head, self_pop.widx)))
		return false;
	self_pop.credit = false;
	self_pop.saved = true;
	return true;
}

/* Wake idle workers of @kind with room, up to @want of them, skipping
 * ones the head group reserves (they would find nothing). Returns
 * whether such a worker was left un-kicked: once @want are kicked, the
 * scan stops at the next such worker rather than going through the rest
 * (a device has 16 workers and routes once or twice per task in the
 * chain and wavefront shapes: the rest of the scan was ~300 instructions
 * per call there, most of the routing). Only when @want is at least the
 * number of such workers does it go through every worker. Caller holds
 * sched_mu and has linked the work. */
static bool kick_kind(struct pto_orch *o, uint32_t kind, uint32_t want)
{
	/* The kick is a wake-up that touches no queue: the head is stable
	 * under our sched_mu across the calls. */
	const struct orch_slot *g = o->group_rq.head;
	uint32_t i;

	for (i = 0; i < o->nworkers; i++) {
		struct orch_worker *w = &o->workers[i];

		if (w->kind != kind || !worker_has_room(w))
			continue;
		if (g && group_targets(g, (int32_t)i))
			continue;
		if (!want)
			return true;
		o->ops->kick(o->be, (int32_t)i, w->kind);
		want--;
	}
	return false;
}

/*
 * Link READY slot @s into its FIFO (caller holds sched_mu). Exact and
 * group work is kicked here; kind-FIFO work adds the members it wants
 * woken to want[kind], for the caller to kick once the whole batch is
 * linked. The state check closes the window in which cancellation
 * claimed the slot READY -> FAILED before it got linked: such a slot is
 * cancellation's, not ours to queue. Returns whether it was linked.
 */
static inline __attribute__((always_inline)) bool
route_locked(struct pto_orch *o, struct orch_slot *s, uint32_t *want)
{
	if (atomic_load_explicit(&s->state, memory_order_acquire) != ORCH_READY)
		return false;
	/*
	 * Linked already: a stale routing of a slot that was cancelled,
	 * consumed and reissued READY while a completion held it in its
	 * batch (orch_on_task_complete), and that the new incarnation's own
	 * routing linked first. Pushing it twice would corrupt the FIFO.
	 * (Routed first by the stale one, the new incarnation's own routing
	 * finds it linked, or popped and no longer READY.)
	 */
	if (s->rq)
		return false;
	if (s->is_group) {
		bool head = o->group_rq.head == NULL;

		rq_push(o, &o->group_rq, s);
		if (head)
			kick_group_head(o);
	} else if (s->members[0].widx >= 0) {
		int32_t t = s->members[0].widx;

		rq_push(o, &o->workers[t].exact, s);
		if (worker_has_room(&o->workers[t]))
			o->ops->kick(o->be, t, o->workers[t].kind);
	} else {
		rq_push(o, &o->kind_rq[s->wkind], s);
		want[s->wkind] += s->nmembers;
	}
	return true;
}

/*
 * Route READY slots @v[0..n) to their FIFOs under one sched_mu hold, with
 * one kick pass per kind and one generation bump (a completion that
 * makes a fan-out's consumers READY routes them together). Each slot is
 * routed by exactly one thread (publication or its last fanin release),
 * outside any fanout_mu.
 */
void orch_enqueue_ready_many(struct pto_orch *o, struct orch_slot *const *v,
			     uint32_t n)
{
	uint32_t i, k, want[ORCH_KIND_NR] = { 0 };
	bool any = false;

	orch_lock(&o->sched_mu);
	for (i = 0; i < n; i++) {
		if (!route_locked(o, v[i], want))
			continue;
		any = true;
		if (want[v[i]->wkind] && take_self_credit(o, v[i]))
			want[v[i]->wkind]--;
	}
	for (k = ORCH_KIND_FIRST; k < ORCH_KIND_NR; k++)
		if (want[k])
			kick_kind(o, k, want[k]);
	/* Release: an idle worker that sees the new generation and then takes
	 * sched_mu finds the entries. */
	if (any)
		bump_gen(o);
	orch_unlock(&o->sched_mu);
}

void orch_enqueue_ready(struct pto_orch *o, struct orch_slot *s)
{
	orch_enqueue_ready_many(o, &s, 1);
}

/*
 * The orch thread's publications, batched. On the threaded in-process
 * and device backends (ready_batch > 1) a READY single for "any worker
 * of a kind" is
 * not routed at publication: orch_ready_defer appends it to the pending
 * list, and orch_ready_flush routes the list under one sched_mu hold,
 * with one generation bump and one kick pass per kind. Per submit that
 * saves the sched_mu round trip and the rq_gen store, two lines a
 * running worker holds. Groups and exact-target singles are routed at
 * once, after the list (publication order is kept), since a group
 * reserves its targets from the moment it is published.
 *
 * The list is a chain through pend_next: appended by the orch thread
 * without a lock, consumed under sched_mu from the cursor pend_taken by
 * the orch thread's flush and by stealers (steal_pending): a worker about
 * to park with its queues empty (orch_ready_pop_parking), and a server
 * thread at any pop that finds its worker's queues empty or before it
 * sleeps (orch_ready_steal), and reset only by the flush. So a deferred
 * slot never waits for the orch thread to come back: whatever the
 * orchestration function does next (block in its own code included), an
 * idle worker takes the slot at the latest before it parks, or is kicked by the hunger flush below: a kind stays hungry
 * while any idle worker of it was left un-kicked (kick_routed_locked),
 * and a worker that pops with work left behind kicks one more, so a
 * parked worker is not left idle while a slot waits behind a busy one
 * (test_orch_batch: parked_worker_takes_second_task_at_once). The
 * device's scheduler threads serve many workers each and follow the
 * rules of orch_ready_steal instead.
 *
 * When the list is flushed:
 *  - ready_batch publications after its first entry was claimed
 *    (orch_ready_check, at every slot claim; ready_batch <= window, so
 *    a listed slot, even one a worker took and finished, cannot be
 *    reclaimed and reissued before the reset that drops it);
 *  - at once when a deferred slot's kind is hungry: a worker of the kind
 *    has been idle for a while (orch_ready_hungry: the in-process worker
 *    calls it ~2 us into its idle spin) or is parking, and no flush has
 *    routed work of the kind since; parked workers steal nothing. Not on
 *    every empty pop: while the workers outpace the orch thread, they
 *    would be empty after every task, and the list would be flushed at
 *    every publication (measured: 300 ns/submit then, 225 with the
 *    spin-delayed mark, 395 unbatched);
 *  - before the orch thread can block or leave the orchestration
 *    function: the ring's back-pressure wait (ring.c), begin_run, the
 *    end of submission (run.c, before scope ends and cancellation), and
 *    run waits and polls made from inside the orchestration function.
 * A listed slot is READY and in no queue: nothing but routing moves it
 * (pop needs it queued, poisoning needs it PENDING, cancellation comes
 * after the end-of-submission flush, and route_locked checks the state
 * anyway), so it cannot be consumed while not yet routed.
 */

/*
 * The first pending slot not yet taken. Under sched_mu, exact; without it
 * (orch_ready_any_kind) a hint: the cursor's slot may have been dropped by a
 * flush and reissued meanwhile, and its link then names anything - a
 * slot is stable in memory, so the read itself is safe.
 */
static struct orch_slot *pend_after_cursor(struct pto_orch *o)
{
	struct orch_slot *t = atomic_load_explicit(&o->pend_taken,
						   memory_order_relaxed);

	return t ? atomic_load_explicit(&t->pend_next, memory_order_acquire) :
		   atomic_load_explicit(&o->pend_first, memory_order_acquire);
}

/* Route the list from the cursor on. Caller holds sched_mu. Acquire on
 * each link: pairs with orch_ready_defer's release, so the slot's fields
 * (state, members, wkind) written before its append are visible. */
static bool route_pending_locked(struct pto_orch *o, uint32_t *want)
{
	struct orch_slot *s;
	bool any = false;

	s = pend_after_cursor(o);
	for (; s; s = atomic_load_explicit(&s->pend_next, memory_order_acquire)) {
		any |= route_locked(o, s, want);
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
	 * workers waiting for a kick of their own.
	 */
	for (k = ORCH_KIND_FIRST; k < ORCH_KIND_NR; k++)
		if (want[k] && (!kick_kind(o, k, want[k]) ||
				o->ops->kick_wakes_server))
			fed |= 1u << k;
	if (atomic_load_explicit(&o->rq_hungry, memory_order_relaxed) & fed)
		atomic_fetch_and_explicit(&o->rq_hungry, ~fed, memory_order_relaxed);
}

/* A worker with empty queues takes what the orch thread left pending.
 * Caller holds sched_mu. */
static bool steal_pending(struct pto_orch *o)
{
	uint32_t want[ORCH_KIND_NR] = { 0 };

	if (!atomic_load_explicit(&o->pend_first, memory_order_acquire) ||
	    !route_pending_locked(o, want))
		return false;
	kick_routed_locked(o, want);
	bump_gen(o);
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
		bump_gen(o);
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
	 * here, once per submit, costs ~70 ns on the 2-CPU host (a locked
	 * instruction waits for the submit's pending stores to drain), so
	 * the fence is asymmetric: only a compiler barrier here, and the
	 * parking worker's membarrier(2) (orch_heavy_barrier) makes this
	 * thread execute a full barrier: either before our load (which then
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
	    atomic_load_explicit(&membarrier_broken, memory_order_relaxed))
		orch_ready_flush(o);
}

/*
 * Cancellation removes a READY slot (caller holds sched_mu). If it was the
 * head group, its targets were reserved and may be parked with work in
 * their own FIFOs, and the next group is now the head: kick both sets.
 */
void orch_rq_remove_cancelled(struct pto_orch *o, struct orch_slot *s)
{
	bool was_head = s->rq == &o->group_rq && o->group_rq.head == s;
	uint32_t i;

	orch_rq_unlink(o, s);
	if (!was_head)
		return;
	for (i = 0; i < s->nmembers; i++) {
		int32_t t = s->members[i].widx;

		if (worker_has_room(&o->workers[t]))
			o->ops->kick(o->be, t, o->workers[t].kind);
	}
	kick_group_head(o);
	bump_gen(o);
}

/*
 * READY -> RUNNING, under sched_mu (the caller's) alone. Cannot fail: the
 * slot is linked in a ready queue, so it is READY, and the only other
 * way out of READY (cancellation, claim_ready in cancel.c) unlinks it
 * under sched_mu too. No fanout_mu either (two locked instructions per
 * dispatch fewer): while the slot is READY, every writer of its state
 * and every reader or writer of its unlaunched flag holds sched_mu -
 * cancellation's claim_ready, and this. The other paths that take the
 * state out of a non-terminal one under fanout_mu do not act on a READY
 * slot: failure claims take BUILDING or PENDING only (poisoning, a
 * submit wiring onto a failed producer; a READY slot's producers have
 * all completed), and PENDING -> READY happened before the slot was
 * linked. Wiring a consumer onto this slot under its fanout_mu may see
 * READY or RUNNING: both are "not terminal" there. So the load and the
 * store are one step, and a later fanout_mu holder (the completion)
 * runs after this on the same thread or after a sched_mu hold that
 * follows it. Release: as every other state store (a lockless reader,
 * submit.c's ordering-only edge, acquires the state).
 */
static inline __attribute__((always_inline)) void
claim_running(struct orch_slot *s)
{
	if (atomic_load_explicit(&s->state, memory_order_relaxed) == ORCH_READY)
		atomic_store_explicit(&s->state, ORCH_RUNNING,
				      memory_order_release);
	/* The slot is RUNNING: nothing can consume it before it completes,
	 * so the run (whose fence counts it) is alive too. */
	if (s->unlaunched) {
		s->unlaunched = false;
		orch_run_task_launched(s->run);
	}
}

static void fill(struct orch_dispatch *d, struct orch_slot *s, uint32_t m,
		 int32_t widx)
{
	d->slot = s;
	d->task_id = s->task_id;
	d->member = m;
	d->widx = widx;
	atomic_store_explicit(&s->members[m].mstate, ORCH_M_RUNNING,
			      memory_order_relaxed);
	s->members[m].ran_on = widx;
}

/* A worker of @kind is idle and may park: orch_ready_defer flushes kind
 * work at once from now on. */
static void mark_hungry(struct pto_orch *o, uint32_t kind)
{
	uint32_t bit = 1u << kind;

	/* Relaxed: ordering against the list is orch_heavy_barrier's job
	 * (orch_ready_pop_parking); elsewhere the bit is a hint. */
	if (!(atomic_load_explicit(&o->rq_hungry, memory_order_relaxed) & bit))
		atomic_fetch_or_explicit(&o->rq_hungry, bit, memory_order_relaxed);
}

/*
 * Asymmetric fence: membarrier(2) PRIVATE_EXPEDITED runs a full memory
 * barrier on every CPU running a thread of this process before it
 * returns (a descheduled thread passed one when it was switched out).
 * It needs the process registered: done at every threaded in-process
 * create (cheap, idempotent, and a forked child's own mm registers when
 * it creates one); without it that orchestrator does not batch.
 * membarrier_ok only ever goes from false to true.
 */
static _Atomic bool membarrier_ok;

bool orch_heavy_barrier_init(void)
{
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
		    0, 0))
		return false;
	atomic_store_explicit(&membarrier_ok, true, memory_order_relaxed);
	return true;
}

void orch_heavy_barrier(void)
{
	if (atomic_load_explicit(&membarrier_ok, memory_order_relaxed) &&
	    !syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0))
		return;
	if (atomic_load_explicit(&membarrier_ok, memory_order_relaxed))
		atomic_store_explicit(&membarrier_broken, true,
				      memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);	/* no batching */
}

/* orch_ready_pop with sched_mu held. Inlined into its callers: a call
 * per dispatch, with six register saves. */
static inline __attribute__((always_inline)) int
pop_locked(struct pto_orch *o, int32_t widx, struct orch_dispatch *d,
	   bool steal)
{
	struct orch_worker *w = &o->workers[widx];
	struct orch_slot *g, *s;
	struct orch_rq *q;
	uint32_t i;

	if (w->has_assigned) {
		*d = w->assigned;
		w->has_assigned = false;
		queued_add(&o->rq_queued_other, -1);
		return 1;
	}
	if (w->inflight >= w->cap)
		return 0;

	g = o->group_rq.head;
	if (g && group_targets(g, widx)) {
		/* All-or-nothing: start only when every target (this worker
		 * included) is idle. A blocked head reserves its targets, even
		 * ones with spare capacity; groups behind it are not looked at
		 * (no scan past the head). */
		for (i = 0; i < g->nmembers; i++)
			if (!worker_idle(&o->workers[g->members[i].widx]))
				return 0;
		rq_unlink_head(o, &o->group_rq, g);	/* g->rq: group_rq */
		claim_running(g);
		for (i = 0; i < g->nmembers; i++) {
			int32_t t = g->members[i].widx;
			struct orch_worker *tw = &o->workers[t];

			tw->inflight++;
			if (t == widx) {
				fill(d, g, i, t);
			} else {
				fill(&tw->assigned, g, i, t);
				tw->has_assigned = true;
				queued_add(&o->rq_queued_other, 1);
				o->ops->kick(o->be, t, tw->kind);
			}
		}
		kick_group_head(o);
		bump_gen(o);
		return 1;
	}

	q = &w->exact;
	if (!q->head) {
		q = &o->kind_rq[w->kind];
		if (!q->head) {
			if (!steal)
				return 0;
			steal_pending(o);
			q = w->exact.head ? &w->exact : &o->kind_rq[w->kind];
			if (!q->head)
				return 0;
		}
	}
	s = q->head;
	if (s->nmembers > 1) {
		/* SUB group: hand out members one by one; the slot leaves the
		 * queue with its last member. */
		i = s->next_member++;
		if (i == 0)
			claim_running(s);
		if (s->next_member == s->nmembers)
			rq_unlink_head(o, q, s);
	} else {
		i = 0;
		rq_unlink_head(o, q, s);
		claim_running(s);
	}
	w->inflight++;
	fill(d, s, i, widx);
	/*
	 * Wake one more: a kick goes to the first idle worker with room,
	 * which may be one already kicked that has not popped yet, so with
	 * work left behind this pop another idle worker of the kind is woken
	 * now. Batching backends of one thread per worker only: a device
	 * scheduler thread pops for all its cores on every pass anyway.
	 */
	if (o->ready_batch > 1 && !o->ops->kick_wakes_server &&
	    q == &o->kind_rq[w->kind] && q->head)
		kick_kind(o, w->kind, 1);
	return 1;
}

/*
 * Could a pop for a worker of @kind find anything: work in its kind's
 * FIFO, or what counts for every worker (exact FIFOs, the group FIFO,
 * assigned members, and for a server the pending list its pops steal)?
 * A hint read without sched_mu. A device thread asks it before it pops
 * for an idle core (once per kind per dispatch step, and again after a
 * pop): otherwise it took the lock once per idle core to learn that
 * nothing was queued (the device's chain: a completing core pops its
 * successor itself, and every other idle core's pop found nothing, ~11
 * lock round trips per task), and its AIC cores' pops found nothing while
 * only AIV work was queued (a third of a pop per fan-out task). It is
 * never stale in the way that matters: every routing links its slots and
 * counts them before its generation bump (release), so a caller that
 * acquire-loaded the generation before asking sees at least the entries
 * routed before that bump; one it misses bumps the generation after its
 * load, and the caller looks again when it sees the new generation.
 */
bool orch_ready_any_kind(struct pto_orch *o, uint32_t kind)
{
	return atomic_load_explicit(&o->rq_queued_kind[kind],
				    memory_order_relaxed) ||
	       atomic_load_explicit(&o->rq_queued_other, memory_order_relaxed) ||
	       (o->ops->kick_wakes_server && pend_after_cursor(o));
}

int orch_ready_pop(struct pto_orch *o, int32_t widx, struct orch_dispatch *d)
{
	int n;

	orch_lock(&o->sched_mu);
	n = pop_locked(o, widx, d, o->ops->kick_wakes_server);
	orch_unlock(&o->sched_mu);
	return n;
}

/* Worker @widx has been idle for a while (in-process backend's spin). */
void orch_ready_hungry(struct pto_orch *o, int32_t widx)
{
	mark_hungry(o, o->workers[widx].kind);
}

/* A scheduler thread serving workers of @kinds has been idle a while. */
void orch_ready_hungry_kinds(struct pto_orch *o, uint32_t kinds)
{
	uint32_t k;

	for (k = ORCH_KIND_FIRST; k < ORCH_KIND_NR; k++)
		if (kinds & (1u << k))
			mark_hungry(o, k);
}

/*
 * The other side of orch_ready_defer's check, for a thread about to
 * sleep that serves workers of @kinds: the bits, then (@heavy) the
 * barrier; the caller then reads the list (steals) under sched_mu.
 *
 * Light and heavy sleeps. The barrier is what makes an indefinite sleep
 * safe against an append still in the orch thread's store buffer, and
 * it is dear: membarrier(2) interrupts every CPU running a thread of
 * the process - the orch thread's above all - and an IPI into a guest
 * costs its receiver microseconds (measured: 12% of the submitting
 * thread's time on the 2-CPU host, 1 per ~90 submits, while workers
 * that outpace it park after every burst). So a thread's first sleep
 * of an idle period is light: the bits and the steal without the
 * barrier, and a sleep bounded by ORCH_LIGHT_SLEEP_NS. Only a light
 * sleep that ends by its timeout (no kick, no completion came) is
 * followed by a heavy one: the full protocol, then a sleep without
 * bound. Liveness: the only thing a light sleep can miss is an append
 * the barrier would have shown (or whose hunger check missed our bit),
 * and that waits at most ORCH_LIGHT_SLEEP_NS, until the heavy pass
 * takes it. A thread woken by a kick starts light again, so a busy
 * run's parks cost no barrier at all, and an idle worker pays one, a
 * millisecond into its idleness.
 */
static void before_sleep(struct pto_orch *o, uint32_t kinds, bool heavy)
{
	orch_ready_hungry_kinds(o, kinds);
	if (!heavy)
		return;
	atomic_fetch_add_explicit(&o->heavy_sleeps, 1, memory_order_relaxed);
	orch_heavy_barrier();
}

uint64_t orch_heavy_sleeps(struct pto_orch *o)
{
	return atomic_load_explicit(&o->heavy_sleeps, memory_order_relaxed);
}

/*
 * orch_ready_pop for a worker about to park (in-process backend, after
 * storing parked): with its queues empty it also takes the orch thread's
 * pending READY slots (steal_pending); @heavy: see before_sleep. Only
 * here for one-thread-per-worker backends: a worker that stole on every
 * empty pop would take each deferred slot as it is appended, and the
 * batching would save nothing while workers are ahead of the orch thread
 * (measured: ~50 ns per submit on the 2-CPU host). A server thread (the
 * device's) does steal on an empty pop (orch_ready_pop,
 * orch_member_done_pop): see orch_ready_steal.
 */
int orch_ready_pop_parking(struct pto_orch *o, int32_t widx,
			   struct orch_dispatch *d, bool heavy)
{
	int n;

	before_sleep(o, 1u << o->workers[widx].kind, heavy);
	orch_lock(&o->sched_mu);
	n = pop_locked(o, widx, d, true);
	orch_unlock(&o->sched_mu);
	return n;
}

/*
 * Server backends (kick_wakes_server: the device's scheduler threads,
 * each serving many workers). A server takes the pending list in two
 * ways:
 *  - opportunistically, at every pop that finds its worker's queues
 *    empty (pop_locked's steal, no barrier): an awake server with a core
 *    free takes deferred work even while it never idles (a busy thread
 *    running a chain of completions would otherwise leave a deferred
 *    task of another kind for as long as it stays busy). It moves the
 *    routing from the orch thread to the server, which is idle then;
 *    deferred appends bump no generation, so an idle server does not
 *    pop for them: its hunger mark does that (sched.c);
 *  - here, before it sleeps: the other side of orch_ready_defer's check,
 *    for every kind the thread serves (bits, barrier if @heavy - see
 *    before_sleep - and the list), then the
 *    whole list is routed, whichever worker it is for; the kicks wake
 *    this thread or the one owning a target, so it does not sleep on
 *    them.
 * Liveness while the orch thread never comes back (a long computation in
 * the orchestration function): every server thread calls this before it
 * sleeps, and it routes the whole list, whatever its kinds; a deferred
 * slot was appended either before that thread's barrier (its steal takes
 * it) or after it (the append sees the bit and flushes, which kicks).
 * With the orch thread away the routed work is finite, so a thread that
 * is awake goes idle and comes here eventually. Latency, not liveness,
 * is what the pop-time steal is for; its bound is one task: a core with
 * a free pending slot takes a stolen task behind its running one, and
 * the routing's kick goes to the first worker of the kind with room
 * (kick_kind), which may be that core rather than an idle one of a
 * sleeping thread.
 */
bool orch_ready_steal(struct pto_orch *o, uint32_t kinds, bool heavy)
{
	bool any;

	before_sleep(o, kinds, heavy);
	if (!atomic_load_explicit(&o->pend_first, memory_order_acquire))
		return false;	/* steal_pending's check, without the lock */
	orch_lock(&o->sched_mu);
	any = steal_pending(o);
	orch_unlock(&o->sched_mu);
	return any;
}

void orch_dispatch_view(const struct orch_dispatch *d,
			struct orch_dispatch_view *v)
{
	const struct orch_slot *s = d->slot;
	const struct orch_member *m = &s->members[d->member];

	v->callable = &s->callable;
	v->cfg = &s->cfg;
	v->tensors = m->t;
	v->scalars = m->s;
	v->scalar_dump = m->sdump;
	v->ntensors = m->nt;
	v->nscalars = m->ns;
	v->member = d->member;
	v->nmembers = s->nmembers;
	v->task_id = s->task_id;
	v->run_id = s->run_id;
}

/* member_outcome()'s failure: the first failing member's error and
 * message are the slot's. Out of line: a success passes it by. */
static __attribute__((noinline, cold)) void
member_failed(struct orch_slot *s, int err, const char *msg)
{
	int zero = 0;

	if (atomic_compare_exchange_strong(&s->first_err, &zero, err) &&
	    !atomic_exchange(&s->member_msg_claimed, 1))
		snprintf(s->member_message, sizeof(s->member_message), "%s",
			 msg ? msg : "");
}

/* Record a member's outcome; true when it was the slot's last member.
 * Inline: every completion records one. */
static inline __attribute__((always_inline)) bool
member_outcome(struct orch_slot *s, const struct orch_dispatch *d, int err,
	       const char *msg)
{
	struct orch_member *m = &s->members[d->member];

	m->err = err;
	atomic_store_explicit(&m->mstate, err ? ORCH_M_FAILED : ORCH_M_DONE,
			      memory_order_relaxed);
	if (__builtin_expect(err, 0))
		member_failed(s, err, msg);
	/* A lone member is its slot's last: no peer to count or to see (and
	 * no locked instruction per task for the common case). */
	if (s->nmembers == 1)
		return true;
	/* acq_rel: the last member sees every peer's outcome and message. */
	return atomic_fetch_sub_explicit(&s->members_left, 1,
					 memory_order_acq_rel) == 1;
}

/* The member's outcome; the member that takes members_left to zero (a
 * lone member at once) runs the slot's completion. */
static void member_finish(struct pto_orch *o, const struct orch_dispatch *d,
			  int err, const char *msg)
{
	struct orch_slot *s = d->slot;

	if (member_outcome(s, d, err, msg))
		orch_on_task_complete(o, s, atomic_load(&s->first_err),
				      s->member_message);
}

/*
 * A member finished on its worker. The worker goes idle first (so its own
 * next pop may start the head group) - for this member and the @kept
 * earlier ones the caller finished with orch_member_done_keep - then the
 * outcome is recorded; the last member runs the slot's completion, so
 * consumers are released or poisoned once, after every member - running
 * peers of a failed one included - has finished.
 */
void orch_member_done_kept(struct pto_orch *o, const struct orch_dispatch *d,
			   int err, const char *msg, uint32_t kept)
{
	orch_lock(&o->sched_mu);
	o->workers[d->widx].inflight -= 1 + kept;
	orch_unlock(&o->sched_mu);
	member_finish(o, d, err, msg);
}

void orch_member_done(struct pto_orch *o, const struct orch_dispatch *d,
		      int err, const char *msg)
{
	orch_member_done_kept(o, d, err, msg, 0);
}

/*
 * Step 4 without the worker going idle, for a member whose worker the
 * caller completes another member of next (a device core whose two tasks
 * one reap found done): that next call, orch_member_done_kept or
 * orch_member_done_pop_kept, makes the worker idle for both in its one
 * sched_mu hold - a lock round trip per such pair fewer. Meanwhile the
 * worker stays loaded, as it does while orch_member_done_pop runs a
 * completion: routing kicks no consumer to it, and a group naming it
 * waits until that next call, whose pop (or the backend's next pop for
 * the worker) starts it.
 */
void orch_member_done_keep(struct pto_orch *o, const struct orch_dispatch *d,
			   int err, const char *msg)
{
	member_finish(o, d, err, msg);
}

/*
 * orch_member_done + orch_ready_pop for the same worker, with one sched_mu
 * round trip (which also makes it idle for the @kept members before, see
 * orch_member_done_keep). The worker stays loaded while the completion
 * runs: consumers it releases are not kicked to it (it pops right after)
 * and a group that names it waits the few instructions until that pop,
 * which is the one that then starts it.
 */
int orch_member_done_pop_kept(struct pto_orch *o, const struct orch_dispatch *d,
			      int err, const char *msg,
			      struct orch_dispatch *next, uint32_t kept)
{
	struct orch_slot *s = d->slot, *head;
	int32_t widx = d->widx;
	uint32_t kind = o->workers[widx].kind;
	int n;

	if (member_outcome(s, d, err, msg)) {
		self_pop.o = o;
		self_pop.widx = widx;
		self_pop.credit = true;
		orch_on_task_complete(o, s, atomic_load(&s->first_err),
				      s->member_message);
		self_pop.credit = false;
	}
	orch_lock(&o->sched_mu);
	o->workers[widx].inflight -= 1 + kept;
	head = o->kind_rq[kind].head;
	n = pop_locked(o, widx, next, o->ops->kick_wakes_server);
	/*
	 * A kick saved for kind work on the promise of this pop: if the pop
	 * took something else (exact work, a group routed meanwhile) and
	 * the kind FIFO still holds work, make the kick now, in this same
	 * sched_mu hold, so no idle worker of the kind is left parked while
	 * it waits. Not when the pop took the head: that is the work the
	 * credit was for, or work queued ahead of it, whose own routing
	 * kicked as usual.
	 */
	if (self_pop.saved) {
		self_pop.saved = false;
		if (o->kind_rq[kind].head && !(n && next->slot == head))
			kick_kind(o, kind, 1);
	}
	orch_unlock(&o->sched_mu);
	return n;
}

int orch_member_done_pop(struct pto_orch *o, const struct orch_dispatch *d,
			 int err, const char *msg, struct orch_dispatch *next)
{
	return orch_member_done_pop_kept(o, d, err, msg, next, 0);
}

uint64_t orch_ready_gen(struct pto_orch *o)
{
	return atomic_load_explicit(&o->rq_gen, memory_order_acquire);
}

uint32_t orch_nworkers(struct pto_orch *o)
{
	return o->nworkers;
}

void orch_worker_info(struct pto_orch *o, int32_t widx, int32_t *id,
		      uint32_t *kind)
{
	*id = o->workers[widx].id;
	*kind = o->workers[widx].kind;
}
