// SPDX-License-Identifier: MIT
/*
 * The task state machine: failure claim, poisoning, reference release
 * with the fanout-release threshold, consumption, and the terminal
 * transition of a slot that ran. Every transition is made under the
 * slot's fanout_mu with the counters it depends on, so a wiring thread
 * sees the state before or after, never half; cross-slot work happens
 * after dropping the lock (one fanout_mu at a time).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "orch/orch_internal.h"

/* Point the slot's arrays at their inline storage (ring init). */
void orch_slot_init_storage(struct orch_slot *s)
{
	s->consumers = s->inl_consumers;
	s->cap_consumers = ORCH_INL_EDGES;
	s->producers = s->inl_producers;
	s->cap_producers = ORCH_INL_EDGES;
	s->out_keys = s->inl_keys;
	s->cap_keys = ORCH_INL_KEYS;
	s->members = &s->inl_member;
	s->cap_members = 1;
	s->inl_member.t = s->inl_tensors;
	s->inl_member.cap_t = ORCH_INL_TENSORS;
}

static void free_unless(void *p, const void *inl)
{
	if (p != inl)
		free(p);
}

void orch_slot_free_storage(struct orch_slot *s)
{
	uint32_t i;

	for (i = 0; i < s->cap_members; i++) {
		free_unless(s->members[i].t, s->inl_tensors);
		free(s->members[i].s);
		free(s->members[i].sdump);
	}
	free_unless(s->members, &s->inl_member);
	free_unless(s->consumers, s->inl_consumers);
	free_unless(s->producers, s->inl_producers);
	free_unless(s->out_keys, s->inl_keys);
	s->members = NULL;
	s->consumers = NULL;
	s->producers = NULL;
	s->out_keys = NULL;
	s->cap_members = s->cap_consumers = s->cap_producers = s->cap_keys = 0;
}

/* Caller holds s->fanout_mu and s is leaving BUILDING/PENDING/READY. */
static void leave_unlaunched_locked(struct orch_slot *s, bool *launched)
{
	*launched = s->unlaunched;
	s->unlaunched = false;
}

/*
 * The failure claim. Only the winner writes failure_message, so a slot's
 * reason is the one of the path that failed it. A claim from BUILDING stops
 * there (failure_propagation_pending): the submitting thread, or
 * cancellation if the submit never finished, propagates once wiring is
 * done. A plain store could move a CONSUMED slot back to FAILED and
 * release its references a second time; the state check prevents that.
 */
int orch_claim_task_failure(struct pto_orch *o, struct orch_slot *s,
			    uint64_t tid, int err, const char *msg, bool ready_ok)
{
	struct pto_run *run = NULL;
	bool launched = false;
	int st;

	orch_lock(&s->fanout_mu);
	st = atomic_load_explicit(&s->state, memory_order_relaxed);
	if (s->task_id != tid ||
	    !(st == ORCH_BUILDING || st == ORCH_PENDING ||
	      (ready_ok && st == ORCH_READY))) {
		orch_unlock(&s->fanout_mu);
		return -1;
	}
	atomic_store_explicit(&s->state, ORCH_FAILED, memory_order_release);
	s->failure_err = err;
	snprintf(s->failure_message, sizeof(s->failure_message), "%s",
		 msg ? msg : "");
	if (st == ORCH_BUILDING)
		s->failure_propagation_pending = true;
	leave_unlaunched_locked(s, &launched);
	run = s->run;
	orch_unlock(&s->fanout_mu);
	if (launched)
		orch_run_task_launched(run);
	return st;
}

/* COMPLETED/FAILED -> CONSUMED happened under fanout_mu (release_ref);
 * now erase the journal's TensorMap entries, free the slot and heap, and
 * count the run down. Nothing may touch @s after ring release. Out of
 * line: the batched path of consumed() saves no registers for it. */
static __attribute__((noinline)) void on_consumed(struct pto_orch *o,
						  struct orch_slot *s)
{
	struct pto_run *run = s->run;

	orch_tm_erase_task_outputs(o, s);
	orch_ring_release(o, s);
	orch_run_task_consumed(run);
}

/*
 * Drop one lifetime reference (scope end, a retaining consumer finishing,
 * or the slot's own self release). The threshold is released >= total + 1
 * (the +1 is the self release) and a terminal state. The CONSUMED store is
 * made under the same lock that wiring takes, so a consumer cannot attach
 * a retention to a slot that is being consumed; a second thread reaching
 * the threshold sees CONSUMED and does nothing (idempotent).
 */
static bool release_ref_locked(struct orch_slot *s)
{
	int st;

	s->fanout_released++;
	st = atomic_load_explicit(&s->state, memory_order_relaxed);
	if (s->fanout_released >= s->fanout_total + 1 &&
	    (st == ORCH_COMPLETED || st == ORCH_FAILED)) {
		trace_task(trace_self_if(s->traced), TRACE_CONSUMED,
			   s->run_id, s->task_id, 0, TRACE_NO_CORE);
		atomic_store_explicit(&s->state, ORCH_CONSUMED, memory_order_release);
		return true;
	}
	return false;
}

/* See orch_set_consume_batch(). Per thread: each backend thread owns its
 * batch, and no other thread reaches it. */
static _Thread_local struct orch_consume_batch *consume_batch;

void orch_set_consume_batch(struct orch_consume_batch *b)
{
	consume_batch = b;
}

static inline void batch_consumed(struct pto_orch *o, struct orch_slot *s,
				  struct orch_consume_batch *b)
{
	b->v[b->n++] = s;
	if (__builtin_expect(b->n == ORCH_CONSUME_BATCH, 0))
		orch_consume_flush(o, b);
}

/* @s went CONSUMED under its lock (release_ref_locked): clean it up now,
 * or in the calling thread's batch. Inline into the releases: with the
 * immediate cleanup out of line, the batched path is a few stores (a
 * scheduler thread consumes every task through here). */
static inline __attribute__((always_inline)) void
consumed(struct pto_orch *o, struct orch_slot *s)
{
	if (consume_batch)
		batch_consumed(o, s, consume_batch);
	else
		on_consumed(o, s);
}

void orch_release_ref(struct pto_orch *o, struct orch_slot *s)
{
	bool consume;

	orch_lock(&s->fanout_mu);
	consume = release_ref_locked(s);
	orch_unlock(&s->fanout_mu);
	if (consume)
		consumed(o, s);
}

/*
 * orch_release_ref, the cleanup deferred to orch_consume_flush. Safe: a
 * CONSUMED slot is reached only by stale references (task_id / state
 * checked under fanout_mu) and its TensorMap entries (satisfied in
 * wire()); its chunk is reused only after the flush's erase and ring
 * release, and its run's active count holds the run until then.
 */
void orch_release_ref_batched(struct pto_orch *o, struct orch_slot *s,
			      struct orch_consume_batch *b)
{
	bool consume;

	orch_lock(&s->fanout_mu);
	consume = release_ref_locked(s);
	orch_unlock(&s->fanout_mu);
	if (consume)
		batch_consumed(o, s, b);
}

/* on_consumed for a batch, in order: erase all, release all, count the
 * runs down (consecutive slots of one run in one atomic step). */
void orch_consume_flush(struct pto_orch *o, struct orch_consume_batch *b)
{
	struct pto_run *runs[ORCH_CONSUME_BATCH];
	uint32_t i, n = b->n;
	int64_t cnt = 0;
	struct pto_run *cur = NULL;

	if (!n)
		return;
	orch_lock(&o->tm.mu);
	for (i = 0; i < n; i++)
		orch_tm_erase_task_outputs_locked(o, b->v[i]);
	orch_unlock(&o->tm.mu);
	/* Nothing may touch a slot after its ring release: read the runs
	 * first. */
	for (i = 0; i < n; i++)
		runs[i] = b->v[i]->run;
	orch_ring_release_many(o, b->v, n);
	b->n = 0;
	for (i = 0; i < n; i++) {
		if (runs[i] != cur) {
			if (cur)
				orch_run_tasks_consumed(cur, cnt);
			cur = runs[i];
			cnt = 0;
		}
		cnt++;
	}
	orch_run_tasks_consumed(cur, cnt);
}

/*
 * A producer of @c completed: true when that made @c READY. The pair
 * (count, released) and the state change are one decision under c's
 * lock. While c is BUILDING its count is not published: only the release
 * is recorded and publication decides. The caller routes a READY @c
 * outside the lock (enqueue takes sched_mu); one path per slot gets
 * there: this one or publication.
 */
static bool release_fanin_ready(struct orch_slotref c)
{
	bool ready = false;

	orch_lock(&c.s->fanout_mu);
	if (c.s->task_id != c.tid) {
		orch_unlock(&c.s->fanout_mu);
		return false;
	}
	c.s->fanin_released++;
	if (atomic_load_explicit(&c.s->state, memory_order_relaxed) == ORCH_PENDING &&
	    c.s->fanin_released >= c.s->fanin_count) {
		trace_task(trace_self_if(c.s->traced), TRACE_READY,
			   c.s->run_id, c.tid, 0, TRACE_NO_CORE);
		atomic_store_explicit(&c.s->state, ORCH_READY, memory_order_release);
		ready = true;
	}
	orch_unlock(&c.s->fanout_mu);
	return ready;
}

/* Claim every consumer of failed slot @s; push those won from PENDING on
 * the worklist (a claim from BUILDING is propagated by its submitter). */
static void poison_consumers(struct pto_orch *o, struct orch_slot *s,
			     struct orch_slot **work)
{
	char msg[ORCH_MSG_LEN];
	uint32_t i;

	snprintf(msg, sizeof(msg), "producer task %llu failed: %.120s",
		 (unsigned long long)s->task_id, s->failure_message);
	/* The consumer list is frozen: s is terminal, and nothing appends to
	 * a terminal slot's list (see wiring in submit.c). */
	for (i = 0; i < s->nconsumers; i++) {
		struct orch_slotref c = s->consumers[i];

		if (orch_claim_task_failure(o, c.s, c.tid,
					    s->failure_err ? s->failure_err : -ECANCELED,
					    msg, false) == ORCH_PENDING) {
			c.s->poison_next = *work;
			*work = c.s;
		}
	}
}

static void mark_members_cancelled(struct orch_slot *s)
{
	uint32_t i;

	for (i = 0; i < s->nmembers; i++) {
		int exp = ORCH_M_PENDING;

		atomic_compare_exchange_strong(&s->members[i].mstate, &exp,
					       ORCH_M_CANCELLED);
	}
}

static void release_producers(struct pto_orch *o, struct orch_slot *s)
{
	uint32_t i, n = s->nproducers;

	for (i = 0; i < n; i++)
		orch_release_ref(o, s->producers[i]);
}

/*
 * Propagate the failure of @s, a FAILED slot that never ran and whose
 * propagation this thread owns. Iterative (an intrusive worklist), since a
 * failure can run down a chain of any length; allocates nothing.
 */
void orch_propagate_failure(struct pto_orch *o, struct orch_slot *s)
{
	struct orch_slot *work = s;

	s->poison_next = NULL;
	while (work) {
		struct orch_slot *x = work;

		work = x->poison_next;
		x->poison_next = NULL;
		mark_members_cancelled(x);
		poison_consumers(o, x, &work);
		release_producers(o, x);
		orch_release_ref(o, x);	/* self release; may consume x */
	}
}

/*
 * Terminal transition of a slot that ran (after its last member). The
 * state change and the consumer snapshot share the lock: wiring after
 * this point sees COMPLETED / FAILED and acts itself, wiring before it is
 * in the list and gets released or poisoned here.
 */
void orch_on_task_complete(struct pto_orch *o, struct orch_slot *s, int err,
			   const char *msg)
{
	struct orch_slot *work = NULL;
	bool leaf, consume = false;
	uint32_t i;

	orch_lock(&s->fanout_mu);
	if (err) {
		atomic_store_explicit(&s->state, ORCH_FAILED, memory_order_release);
		s->failure_err = err;
		snprintf(s->failure_message, sizeof(s->failure_message),
			 "task %llu failed: %.150s", (unsigned long long)s->task_id,
			 msg && *msg ? msg : strerror(-err));
	} else {
		atomic_store_explicit(&s->state, ORCH_COMPLETED, memory_order_release);
	}
	/*
	 * A task that completed with no consumer (none wired so far, and
	 * wiring from now on sees COMPLETED) and no producer to release has
	 * nothing to do between this and its self release: do that under
	 * this hold, one lock round trip per task fewer (independent
	 * tasks, the leaves of a DAG).
	 */
	leaf = !err && !s->nconsumers && !s->nproducers;
	if (leaf)
		consume = release_ref_locked(s);
	orch_unlock(&s->fanout_mu);
	if (leaf) {
		if (consume)
			consumed(o, s);
		return;
	}

	if (err) {
		orch_run_record_error(s->run, err, s->failure_message);
		poison_consumers(o, s, &work);
		while (work) {
			struct orch_slot *x = work;

			work = x->poison_next;
			x->poison_next = NULL;
			orch_propagate_failure(o, x);
		}
	} else {
		/*
		 * Consumers made READY are routed ORCH_ROUTE_BATCH at a time
		 * (one sched_mu hold and kick pass each: a fan-out root
		 * releases all its children here). Meanwhile a slot is READY
		 * in no queue: only routing moves it (route_locked checks).
		 */
		struct orch_slot *ready[ORCH_ROUTE_BATCH];
		uint32_t n = 0;

		for (i = 0; i < s->nconsumers; i++) {
			if (!release_fanin_ready(s->consumers[i]))
				continue;
			ready[n++] = s->consumers[i].s;
			if (n == ORCH_ROUTE_BATCH) {
				orch_enqueue_ready_many(o, ready, n);
				n = 0;
			}
		}
		if (n)
			orch_enqueue_ready_many(o, ready, n);
	}
	release_producers(o, s);
	orch_release_ref(o, s);	/* self release */
}
