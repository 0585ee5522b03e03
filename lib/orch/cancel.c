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

int orch_cancel_unstarted_run(struct pto_orch *o, struct pto_run *r)
{
	uint32_t w = o->rings[0].window, i, n = 0, k;
	struct orch_slot **list;
	char msg[ORCH_MSG_LEN];
	int ri;

	snprintf(msg, sizeof(msg), "run %llu cancelled: graph construction failed",
		 (unsigned long long)r->id);
	/* Phase 1. Submission is closed: no new slot of @r can appear. */
	for (ri = 0; ri < PTO_MAX_RING_DEPTH; ri++)
		for (i = 0; i < w; i++)
			claim_one(o, r, &o->rings[ri].slots[i], msg);

	/* Phase 2. */
	for (ri = 0; ri < PTO_MAX_RING_DEPTH; ri++)
		for (i = 0; i < w; i++)
			n += owned(&o->rings[ri].slots[i], r);
	if (!n)
		return 0;
	list = orch_may_fail(o, ORCH_FP_CANCEL_SNAPSHOT, NULL) ? NULL :
		malloc(n * sizeof(*list));
	/*
	 * No message (orch_error): o->errmsg is the orch thread's, and a
	 * cancellation also runs on close()'s thread, beside whatever the
	 * orch thread does. Its orch-thread caller writes it.
	 */
	if (!list)
		return -ENOMEM;
	k = 0;
	for (ri = 0; ri < PTO_MAX_RING_DEPTH; ri++)
		for (i = 0; i < w && k < n; i++) {
			struct orch_slot *s = &o->rings[ri].slots[i];
			uint32_t m;

			if (!owned(s, r))
				continue;
			for (m = 0; m < s->nmembers; m++) {
				int exp = ORCH_M_PENDING;

				atomic_compare_exchange_strong(&s->members[m].mstate,
							       &exp, ORCH_M_CANCELLED);
			}
			list[k++] = s;
		}

	/* Phase 3: nothing below allocates. */
	orch_may_fail(o, ORCH_TP_CANCEL_SETTLE, NULL);
	for (i = 0; i < k; i++) {
		orch_lock(&list[i]->fanout_mu);
		list[i]->cancel_debt = false;
		orch_unlock(&list[i]->fanout_mu);
	}
	for (i = 0; i < k; i++)
		orch_propagate_failure(o, list[i]);
	free(list);
	return 0;
}
