// SPDX-License-Identifier: MIT
/*
 * Cancellation of an unstarted run, on the orch thread once its submission
 * failed: it owns the run's BUILDING slots and FAILED ones still marked
 * failure_propagation_pending. Three phases: claim (-> FAILED, recording the
 * debt), snapshot (may allocate; -ENOMEM keeps every debt, so a retry finds
 * the same slots), settle (clear the debts, then the releases that must not
 * repeat, without allocating).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "orch/orch_internal.h"

static void claim_ready(struct pto_orch *o, struct pto_run *r,
			struct orch_slot *s, const char *msg)
{
	bool launched = false;

	/* READY -> FAILED races READY -> RUNNING: both under sched_mu. */
	orch_lock(&o->sched_mu);
	orch_lock(&s->fanout_mu);
	if (s->run == r &&
	    atomic_load_explicit(&s->state, memory_order_relaxed) == ORCH_READY) {
		orch_rq_remove_cancelled(o, s);
		atomic_store_explicit(&s->state, ORCH_FAILED, memory_order_release);
		s->failure_err = -ECANCELED;
		snprintf(s->failure_message, sizeof(s->failure_message), "%s", msg);
		s->cancel_debt = true;
		launched = s->unlaunched;
		s->unlaunched = false;
	}
	orch_unlock(&s->fanout_mu);
	orch_unlock(&o->sched_mu);
	if (launched)
		orch_run_task_launched(r);
}

static void claim_one(struct pto_orch *o, struct pto_run *r,
		      struct orch_slot *s, const char *msg)
{
	bool launched = false, ready = false;
	int st;

	orch_lock(&s->fanout_mu);
	st = atomic_load_explicit(&s->state, memory_order_relaxed);
	if (s->run != r || st == ORCH_FREE || st == ORCH_CONSUMED) {
		/* not ours */
	} else if (st == ORCH_BUILDING || st == ORCH_PENDING) {
		atomic_store_explicit(&s->state, ORCH_FAILED, memory_order_release);
		s->failure_err = -ECANCELED;
		snprintf(s->failure_message, sizeof(s->failure_message), "%s", msg);
		s->cancel_debt = true;	/* debt right after the win */
		launched = s->unlaunched;
		s->unlaunched = false;
	} else if (st == ORCH_FAILED && s->failure_propagation_pending) {
		/* A submit claimed from BUILDING that never published. */
		s->failure_propagation_pending = false;
		s->cancel_debt = true;
	} else if (st == ORCH_READY) {
		ready = true;
	}
	orch_unlock(&s->fanout_mu);
	if (launched)
		orch_run_task_launched(r);
	if (ready)
		claim_ready(o, r, s, msg);
}

static bool owned(struct orch_slot *s, struct pto_run *r)
{
	bool own;

	orch_lock(&s->fanout_mu);
	own = s->run == r && s->cancel_debt;
	orch_unlock(&s->fanout_mu);
	return own;
}

struct cancel_walk {
	struct pto_orch *o;
	struct pto_run *r;
	const char *msg;
	struct orch_slot **list;
	uint32_t n, cap;
};

static void claim_cb(struct orch_slot *s, void *ctx)
{
	struct cancel_walk *w = ctx;

	claim_one(w->o, w->r, s, w->msg);
}

static void count_cb(struct orch_slot *s, void *ctx)
{
	struct cancel_walk *w = ctx;

	w->n += owned(s, w->r);
}

static void list_cb(struct orch_slot *s, void *ctx)
{
	struct cancel_walk *w = ctx;
	uint32_t m;

	if (w->n == w->cap || !owned(s, w->r))
		return;
	for (m = 0; m < s->nmembers; m++) {
		int exp = ORCH_M_PENDING;

		atomic_compare_exchange_strong(&s->members[m].mstate, &exp,
					       ORCH_M_CANCELLED);
	}
	w->list[w->n++] = s;
}

/* The run's slots are its task ids, [first_tid, end_tid): submission is
 * closed, so no new slot of @r can appear, and a slot owned by a debt
 * is not consumed, so its chunk stays in service. */
int orch_cancel_unstarted_run(struct pto_orch *o, struct pto_run *r)
{
	struct cancel_walk w = { .o = o, .r = r };
	char msg[ORCH_MSG_LEN];
	uint32_t i, n;

	snprintf(msg, sizeof(msg), "run %llu cancelled: graph construction failed",
		 (unsigned long long)r->id);
	w.msg = msg;
	/* Phase 1. */
	orch_store_for_range(&o->store, r->first_tid, r->end_tid, claim_cb, &w);

	/* Phase 2. */
	orch_store_for_range(&o->store, r->first_tid, r->end_tid, count_cb, &w);
	n = w.n;
	if (!n)
		return 0;
	w.list = orch_may_fail(o, ORCH_FP_CANCEL_SNAPSHOT, NULL) ? NULL :
		malloc(n * sizeof(*w.list));
	/*
	 * No message (orch_error): o->errmsg is the orch thread's, and a
	 * cancellation also runs on close()'s thread, beside whatever the
	 * orch thread does. Its orch-thread caller writes it.
	 */
	if (!w.list)
		return -ENOMEM;
	w.n = 0;
	w.cap = n;
	orch_store_for_range(&o->store, r->first_tid, r->end_tid, list_cb, &w);

	/* Phase 3: nothing below allocates. */
	orch_may_fail(o, ORCH_TP_CANCEL_SETTLE, NULL);
	for (i = 0; i < w.n; i++) {
		orch_lock(&w.list[i]->fanout_mu);
		w.list[i]->cancel_debt = false;
		orch_unlock(&w.list[i]->fanout_mu);
	}
	for (i = 0; i < w.n; i++)
		orch_propagate_failure(o, w.list[i]);
	free(w.list);
	return 0;
}
