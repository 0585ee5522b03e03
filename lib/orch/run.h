/* SPDX-License-Identifier: MIT */
/* Runs: a run's counters, its fence and its end (run.c, cancel.c). */
#ifndef PTO_ORCH_RUN_H
#define PTO_ORCH_RUN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "orch/slot.h"

struct pto_run {
	struct pto_orch *o;
	uint64_t id;
	/*
	 * The counters every worker updates, on a line of their own (the orch
	 * thread reads @id for every tensor). @active: registered, not
	 * consumed slots; @unlaunched: registered slots still
	 * BUILDING/PENDING/READY.
	 */
	_Atomic int64_t active __attribute__((aligned(64)));
	_Atomic int64_t unlaunched;
	char pad_counters[64 - 2 * sizeof(int64_t)];
	/* Under runs_mu: */
	int refs;		/* user handle + in-flight */
	bool closed, done, accepted, lease_held;
	bool traced;		/* recorded: tracing on at its start (orch thread) */
	int status;
	char message[ORCH_MSG_LEN];
	struct pto_run *next;	/* live list */
	bool cancel_pending;	/* cancellation must be retried (close) */
	bool settling;		/* a close or abort settles it (orch.c) */
	/* Its task ids, [first_tid, end_tid): set by the orch thread at
	 * begin and at submission close (end_tid 0 until then). */
	uint64_t first_tid, end_tid;
	/* Orch thread only: */
	int construction_err;
	/* Its message: later calls overwrite o->errmsg (a refused submit
	 * says why it was refused); pto_run_start puts this back. */
	char construction_msg[ORCH_MSG_LEN];
	/* Counts added to active / unlaunched ahead of registration, spent
	 * one per slot: the orch thread touches those shared counters once
	 * per ORCH_RUN_CREDIT slots instead of twice per submit. Unspent
	 * credit is dropped with the bias when submission closes, so it is
	 * the bias's extension (nothing can reach zero while it is held). */
	uint32_t credit_active, credit_unlaunched;
};

#define ORCH_RUN_CREDIT 64

void orch_run_record_error(struct pto_run *r, int err, const char *msg);
bool orch_run_unref_locked(struct pto_run *r);
bool orch_building_here(const struct pto_orch *o);
bool orch_worker_here(const struct pto_orch *o);
/* Set by the atfork child handler (orch.c), with the child's pid: a
 * process that never forked after creating an orchestrator reads false
 * and skips orch_forked()'s pid test. */
extern bool orch_forked_child;
extern pid_t orch_child_pid;
void orch_run_task_consumed(struct pto_run *r);
void orch_run_tasks_consumed(struct pto_run *r, int64_t n);
void orch_run_task_launched(struct pto_run *r);
/*
 * Orch thread, at slot registration: one active (and, if @launch, one
 * unlaunched) count, from the run's credit. Inline: every submit runs it.
 * Relaxed adds: the counters only need to be
 * positive until submission closes, which the bias and the unspent
 * credit guarantee; each slot's own decrement comes later than its
 * registration on every path (it needs the slot, published after this).
 */
static inline void orch_run_register_slot(struct pto_run *r, bool launch)
{
	if (!r->credit_active) {
		atomic_fetch_add_explicit(&r->active, ORCH_RUN_CREDIT,
					  memory_order_relaxed);
		r->credit_active = ORCH_RUN_CREDIT;
	}
	r->credit_active--;
	if (!launch)
		return;
	if (!r->credit_unlaunched) {
		atomic_fetch_add_explicit(&r->unlaunched, ORCH_RUN_CREDIT,
					  memory_order_relaxed);
		r->credit_unlaunched = ORCH_RUN_CREDIT;
	}
	r->credit_unlaunched--;
}

int orch_begin_run(struct pto_orch *o, struct pto_run **out);
void orch_close_run_submission(struct pto_orch *o, struct pto_run *r);
/* Cancel a run whose submission failed: returns 0, or -ENOMEM when the
 * snapshot phase failed (debts kept; call again). Any thread, beside the
 * orch thread and another run's cancellation (pto_orch_close() says why);
 * sets no message. */
int orch_cancel_unstarted_run(struct pto_orch *o, struct pto_run *r);
int orch_fail_run_submission(struct pto_orch *o, struct pto_run *r, int err);

#endif
