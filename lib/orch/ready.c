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
#include "orch/orch_internal.h"

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

static void rq_push(struct orch_rq *q, struct orch_slot *s)
{
	s->rq = q;
	s->rq_next = NULL;
	s->rq_prev = q->tail;
	if (q->tail)
		q->tail->rq_next = s;
	else
		q->head = s;
	q->tail = s;
}

void orch_rq_unlink(struct orch_slot *s)
{
	struct orch_rq *q = s->rq;

	if (!q)
		return;
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
 */
static _Thread_local struct {
	struct pto_orch *o;
	int32_t widx;
	bool credit;
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
	return true;
}

/*
 * Route a READY slot to its FIFO. Called by exactly one thread per slot
 * (publication or the last fanin release), outside any fanout_mu. The
 * state check under sched_mu closes the window in which cancellation
 * claimed the slot READY -> FAILED before it got linked: such a slot is
 * cancellation's, not ours to queue.
 */
void orch_enqueue_ready(struct pto_orch *o, struct orch_slot *s)
{
	uint32_t i, want = s->nmembers;

	orch_lock(&o->sched_mu);
	if (atomic_load_explicit(&s->state, memory_order_acquire) != ORCH_READY) {
		orch_unlock(&o->sched_mu);
		return;
	}
	if (s->is_group) {
		bool head = o->group_rq.head == NULL;

		rq_push(&o->group_rq, s);
		if (head)
			kick_group_head(o);
	} else if (s->members[0].widx >= 0) {
		int32_t t = s->members[0].widx;

		rq_push(&o->workers[t].exact, s);
		if (worker_has_room(&o->workers[t]))
			o->ops->kick(o->be, t, o->workers[t].kind);
	} else {
		rq_push(&o->kind_rq[s->wkind], s);
		if (take_self_credit(o, s))
			want--;
		/* Wake idle workers of the kind (one per member), skipping ones
		 * the head group reserves: they would find nothing. */
		for (i = 0; i < o->nworkers && want; i++) {
			struct orch_worker *w = &o->workers[i];

			if (w->kind != s->wkind || !worker_has_room(w))
				continue;
			if (o->group_rq.head &&
			    group_targets(o->group_rq.head, (int32_t)i))
				continue;
			o->ops->kick(o->be, (int32_t)i, w->kind);
			if (--want == 0)
				break;
		}
	}
	/* Release: an idle worker that sees the new generation and then takes
	 * sched_mu finds the entry. */
	bump_gen(o);
	orch_unlock(&o->sched_mu);
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

	orch_rq_unlink(s);
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

/* READY -> RUNNING. Cannot fail under sched_mu: the only other way out of
 * READY (cancellation) unlinks under sched_mu too. */
static void claim_running(struct orch_slot *s)
{
	struct pto_run *run;
	int exp = ORCH_READY;
	bool launched;

	orch_lock(&s->fanout_mu);
	atomic_compare_exchange_strong(&s->state, &exp, ORCH_RUNNING);
	launched = s->unlaunched;
	s->unlaunched = false;
	run = s->run;
	orch_unlock(&s->fanout_mu);
	/* The slot is RUNNING: nothing can consume it before it completes,
	 * so the run (whose fence counts it) is alive too. */
	if (launched)
		orch_run_task_launched(run);
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

/* orch_ready_pop with sched_mu held. */
static int pop_locked(struct pto_orch *o, int32_t widx, struct orch_dispatch *d)
{
	struct orch_worker *w = &o->workers[widx];
	struct orch_slot *g, *s;
	struct orch_rq *q;
	uint32_t i;

	if (w->has_assigned) {
		*d = w->assigned;
		w->has_assigned = false;
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
		orch_rq_unlink(g);
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
		if (!q->head)
			return 0;
	}
	s = q->head;
	if (s->nmembers > 1) {
		/* SUB group: hand out members one by one; the slot leaves the
		 * queue with its last member. */
		i = s->next_member++;
		if (i == 0)
			claim_running(s);
		if (s->next_member == s->nmembers)
			orch_rq_unlink(s);
	} else {
		i = 0;
		orch_rq_unlink(s);
		claim_running(s);
	}
	w->inflight++;
	fill(d, s, i, widx);
	return 1;
}

int orch_ready_pop(struct pto_orch *o, int32_t widx, struct orch_dispatch *d)
{
	int n;

	orch_lock(&o->sched_mu);
	n = pop_locked(o, widx, d);
	orch_unlock(&o->sched_mu);
	return n;
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

/* Record a member's outcome; true when it was the slot's last member. */
static bool member_outcome(struct orch_slot *s, const struct orch_dispatch *d,
			   int err, const char *msg)
{
	struct orch_member *m = &s->members[d->member];
	int zero = 0;

	m->err = err;
	atomic_store_explicit(&m->mstate, err ? ORCH_M_FAILED : ORCH_M_DONE,
			      memory_order_relaxed);
	if (err && atomic_compare_exchange_strong(&s->first_err, &zero, err) &&
	    !atomic_exchange(&s->member_msg_claimed, 1))
		snprintf(s->member_message, sizeof(s->member_message), "%s",
			 msg ? msg : "");
	/* acq_rel: the last member sees every peer's outcome and message. */
	return atomic_fetch_sub_explicit(&s->members_left, 1,
					 memory_order_acq_rel) == 1;
}

/*
 * A member finished on its worker. The worker goes idle first (so its own
 * next pop may start the head group), then the outcome is recorded; the
 * member that takes members_left to zero runs the slot's completion, so
 * consumers are released or poisoned once, after every member - running
 * peers of a failed one included - has finished.
 */
void orch_member_done(struct pto_orch *o, const struct orch_dispatch *d,
		      int err, const char *msg)
{
	struct orch_slot *s = d->slot;

	orch_lock(&o->sched_mu);
	o->workers[d->widx].inflight--;
	orch_unlock(&o->sched_mu);
	if (member_outcome(s, d, err, msg))
		orch_on_task_complete(o, s, atomic_load(&s->first_err),
				      s->member_message);
}

/*
 * orch_member_done + orch_ready_pop for the same worker, with one sched_mu
 * round trip. The worker stays loaded while the completion runs: consumers
 * it releases are not kicked to it (it pops right after) and a group that
 * names it waits the few instructions until that pop, which is the one
 * that then starts it.
 */
int orch_member_done_pop(struct pto_orch *o, const struct orch_dispatch *d,
			 int err, const char *msg, struct orch_dispatch *next)
{
	struct orch_slot *s = d->slot;
	int32_t widx = d->widx;
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
	o->workers[widx].inflight--;
	n = pop_locked(o, widx, next);
	orch_unlock(&o->sched_mu);
	return n;
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
