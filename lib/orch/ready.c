// SPDX-License-Identifier: MIT
/*
 * READY routing and dispatch claims. Queues: an exact FIFO per worker, a FIFO
 * per kind, one group FIFO; intrusive lists through the slot, so enqueue never
 * allocates and cancellation unlinks in O(1). sched_mu guards the queues, the
 * workers' state and the READY -> RUNNING and READY -> FAILED claims; it is
 * taken before any fanout_mu.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "orch/ready_impl.h"

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
 * Set on a worker while orch_member_done_pop runs its task's completion: that
 * worker pops right after, so the first consumer made READY for its kind needs
 * no kick (which would wake another worker to race it). This keeps a chain on
 * one worker. A later routing can make that pop take other work: @saved
 * remembers the kick, and the pop pays it back.
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
 * (on a device with many workers most of the routing would be that
 * scan). Only when @want is at least the
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

bool orch_route_locked(struct pto_orch *o, struct orch_slot *s, uint32_t *want)
{
	return route_locked(o, s, want);
}

bool orch_kick_kind(struct pto_orch *o, uint32_t kind, uint32_t want)
{
	return kick_kind(o, kind, want);
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
		orch_bump_gen(o);
	orch_unlock(&o->sched_mu);
}

void orch_enqueue_ready(struct pto_orch *o, struct orch_slot *s)
{
	orch_enqueue_ready_many(o, &s, 1);
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
	orch_bump_gen(o);
}

/*
 * READY -> RUNNING under sched_mu alone; cannot fail: a linked slot is READY,
 * and cancellation, the only other way out of READY, unlinks under sched_mu
 * too. No fanout_mu: every writer of a READY slot's state holds sched_mu
 * (failure claims take BUILDING or PENDING only). Release, as every state
 * store: lockless readers acquire the state.
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
		orch_bump_gen(o);
		return 1;
	}

	q = &w->exact;
	if (!q->head) {
		q = &o->kind_rq[w->kind];
		if (!q->head) {
			if (!steal)
				return 0;
			orch_steal_pending_locked(o);
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
	 * now. Workers of a thread of their own only: a device scheduler
	 * thread pops for all its cores on every pass anyway.
	 */
	if (o->ready_batch > 1 && !orch_kind_served(o, w->kind) &&
	    q == &o->kind_rq[w->kind] && q->head)
		kick_kind(o, w->kind, 1);
	return 1;
}

int orch_ready_pop_locked(struct pto_orch *o, int32_t widx,
			  struct orch_dispatch *d, bool steal)
{
	return pop_locked(o, widx, d, steal);
}

/*
 * Could a pop for a worker of @kind find anything: work in its kind's
 * FIFO, or what counts for every worker (exact FIFOs, the group FIFO,
 * assigned members, and for a server the pending list its pops steal)?
 * A hint without sched_mu, so a device thread need not take the lock for
 * every idle core. Never stale in the way that matters: every routing
 * counts its slots before its generation bump (release), so a caller that
 * acquire-loaded the generation first sees at least what was routed
 * before that bump, and looks again at the next generation.
 */
bool orch_ready_any_kind(struct pto_orch *o, uint32_t kind)
{
	return atomic_load_explicit(&o->rq_queued_kind[kind],
				    memory_order_relaxed) ||
	       atomic_load_explicit(&o->rq_queued_other, memory_order_relaxed) ||
	       (o->ops->kick_wakes_server && orch_pend_after_cursor(o));
}

int orch_ready_pop(struct pto_orch *o, int32_t widx, struct orch_dispatch *d)
{
	int n;

	orch_lock(&o->sched_mu);
	n = pop_locked(o, widx, d, orch_kind_served(o, o->workers[widx].kind));
	orch_unlock(&o->sched_mu);
	return n;
}

void orch_dispatch_member_view(const struct orch_dispatch *d, uint32_t m,
			       struct orch_dispatch_view *v)
{
	const struct orch_slot *s = d->slot;
	const struct orch_member *mb = &s->members[m];

	v->callable = &s->callable;
	v->cfg = &s->cfg;
	v->tensors = mb->t;
	v->scalars = mb->s;
	v->scalar_dump = mb->sdump;
	v->ntensors = mb->nt;
	v->nscalars = mb->ns;
	v->member = m;
	v->nmembers = s->nmembers;
	v->shared = s->shared;
	v->task_id = s->task_id;
	v->run_id = s->run_id;
	v->traced = s->traced;
}

void orch_dispatch_view(const struct orch_dispatch *d,
			struct orch_dispatch_view *v)
{
	orch_dispatch_member_view(d, d->member, v);
}

struct orch_once *orch_dispatch_once(const struct orch_dispatch *d)
{
	return &d->slot->prologue;
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

/* A task of several members: the backend's hook after its last one. */
static inline void members_done_hook(struct pto_orch *o,
				     const struct orch_slot *s,
				     const struct orch_dispatch *d)
{
	if (s->nmembers > 1 && o->ops->task_members_done)
		o->ops->task_members_done(o->be, d,
					  atomic_load(&s->first_err));
}

/* The member's outcome; the member that takes members_left to zero (a
 * lone member at once) runs the slot's completion. */
static void member_finish(struct pto_orch *o, const struct orch_dispatch *d,
			  int err, const char *msg)
{
	struct orch_slot *s = d->slot;

	if (member_outcome(s, d, err, msg)) {
		members_done_hook(o, s, d);
		orch_on_task_complete(o, s, atomic_load(&s->first_err),
				      s->member_message);
	}
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
 * Step 4 without the worker going idle, when the caller completes another
 * member on it next (a core whose two tasks one reap found done): that
 * orch_member_done_kept / _pop_kept call idles the worker for both in one
 * sched_mu hold. Meanwhile the worker stays loaded: no kick, no group start.
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
		members_done_hook(o, s, d);
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
	n = pop_locked(o, widx, next, orch_kind_served(o, kind));
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
