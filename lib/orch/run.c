// SPDX-License-Identifier: MIT
/*
 * Runs: the pipeline, the acceptance and completion fences, the handles.
 * `active` and `unlaunched` start at 1 (the submission's bias, dropped when it
 * closes), so the thread taking one to zero does it once, and never while
 * slots can be added. refs counts the handle and the in-flight reference the
 * last consumption drops. begin_run's lease is released when the run is done
 * (Documentation/orchestrator.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "orch/orch_internal.h"

/*
 * The orchestrator whose orchestration function runs on this thread (set
 * by pto_run_start around the call). A run wait or poll from inside the
 * function flushes the pending READY slots first (orch_ready_flush): the
 * function may be waiting for them.
 */
static _Thread_local struct pto_orch *tl_building;

/* True on the thread running one of @o's orchestration functions. */
bool orch_building_here(const struct pto_orch *o)
{
	return tl_building == o;
}

/*
 * The orchestrator whose worker this thread is (set once by a worker
 * thread that runs host callbacks - an in-process worker, a device's SUB
 * worker - before its first). A host callback runs on it: a close,
 * destroy, submit or run wait of that orchestrator from there would wait
 * for the callback's own run (or join its own thread), and is refused
 * with -EDEADLK. The device's scheduler threads run no user code.
 */
static _Thread_local struct pto_orch *tl_worker;

void orch_worker_thread_enter(struct pto_orch *o)
{
	tl_worker = o;
}

/* True on a worker thread of @o (inside one of its host callbacks). */
bool orch_worker_here(const struct pto_orch *o)
{
	return tl_worker == o;
}

static void flush_if_building(struct pto_orch *o)
{
	if (tl_building == o)
		orch_ready_flush(o);
}

/* Drop a reference (caller holds runs_mu); true: the caller frees @r. */
bool orch_run_unref_locked(struct pto_run *r)
{
	if (--r->refs)
		return false;
	r->o->runs_alive--;
	return true;
}

/*
 * Run ids are unique in the process, not per orchestrator: a task handle
 * carries (run id, task id, slot), and with per-orchestrator counters a
 * handle from another orchestrator's run passed the "another run" check
 * and named an unrelated task here. A counter, not configuration: it
 * holds no state a caller could observe but the ids.
 */
static _Atomic uint64_t orch_last_run_id;

void orch_run_record_error(struct pto_run *r, int err, const char *msg)
{
	struct pto_orch *o = r->o;

	pthread_mutex_lock(&o->runs_mu);
	if (!r->status) {
		r->status = err ? err : -EIO;
		snprintf(r->message, sizeof(r->message), "%s", msg ? msg : "");
	}
	pthread_mutex_unlock(&o->runs_mu);
}

static void run_finish(struct pto_run *r)
{
	struct pto_orch *o = r->o;
	struct pto_run **pp;
	bool free_it;

	/* Before done: a waiter finds what the backend ends with the run
	 * (its args dump's files) complete. */
	if (o->ops->run_end)
		o->ops->run_end(o->be, r->id);
	pthread_mutex_lock(&o->runs_mu);
	r->done = true;
	r->accepted = true;
	if (r->lease_held) {
		r->lease_held = false;
		o->runs_in_flight--;
	}
	for (pp = &o->runs; *pp; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			break;
		}
	free_it = orch_run_unref_locked(r);
	pthread_cond_broadcast(&o->runs_cv);
	pthread_mutex_unlock(&o->runs_mu);
	if (free_it)
		free(r);
}

/* Drop @n active counts; the thread that reaches zero finishes the run. */
static void run_drop_active(struct pto_run *r, int64_t n)
{
	if (atomic_fetch_sub_explicit(&r->active, n, memory_order_acq_rel) == n)
		run_finish(r);
}

void orch_run_task_consumed(struct pto_run *r)
{
	run_drop_active(r, 1);
}

void orch_run_tasks_consumed(struct pto_run *r, int64_t n)
{
	run_drop_active(r, n);
}

static void run_drop_unlaunched(struct pto_run *r, int64_t n)
{
	struct pto_orch *o = r->o;

	if (atomic_fetch_sub_explicit(&r->unlaunched, n, memory_order_acq_rel) != n)
		return;
	pthread_mutex_lock(&o->runs_mu);
	r->accepted = true;
	pthread_cond_broadcast(&o->runs_cv);
	pthread_mutex_unlock(&o->runs_mu);
}

void orch_run_task_launched(struct pto_run *r)
{
	run_drop_unlaunched(r, 1);
}

int orch_begin_run(struct pto_orch *o, struct pto_run **out)
{
	struct pto_run *r;

	orch_ready_flush(o);	/* may block below */
	pthread_mutex_lock(&o->runs_mu);
	while (!o->closing && o->runs_in_flight >= o->cfg.run_depth)
		pthread_cond_wait(&o->runs_cv, &o->runs_mu);
	if (o->closing) {
		pthread_mutex_unlock(&o->runs_mu);
		return orch_error(o, -ESHUTDOWN, "orchestrator is closed");
	}
	/* Aligned: the counters' line is shared with nothing else. */
	r = orch_may_fail(o, ORCH_FP_RUN_ALLOC, NULL) ? NULL :
	    aligned_alloc(64, sizeof(*r));
	if (!r) {
		pthread_mutex_unlock(&o->runs_mu);
		return orch_error(o, -ENOMEM, "out of memory (run state)");
	}
	memset(r, 0, sizeof(*r));
	r->o = o;
	r->traced = o->trace && atomic_load_explicit(&o->trace_enabled,
						     memory_order_relaxed);
	r->id = atomic_fetch_add_explicit(&orch_last_run_id, 1,
					  memory_order_relaxed) + 1;
	o->runs_alive++;
	r->refs = 2;		/* caller's handle + in flight */
	r->lease_held = true;
	atomic_init(&r->active, 1);	/* submission bias */
	atomic_init(&r->unlaunched, 1);
	o->runs_in_flight++;
	r->next = o->runs;
	o->runs = r;
	pthread_mutex_unlock(&o->runs_mu);

	r->first_tid = o->store.next_tid;
	o->building = r;
	o->errmsg[0] = '\0';
	/* The outer scope: depth 1, ring 0. The stack is empty here (every
	 * close ends all scopes), so this cannot fail. */
	(void)orch_scope_begin(o);
	*out = r;
	return 0;
}

/* Close every open scope (the outer one last), then the submission. */
void orch_close_run_submission(struct pto_orch *o, struct pto_run *r)
{
	/* Before anything else: the function returned (or failed), and
	 * cancellation must find no slot on the pending list. */
	orch_ready_flush(o);
	while (o->scope.depth)
		orch_scope_end(o);
	r->end_tid = o->store.next_tid;
	o->building = NULL;
	/* Drop the biases and the unspent credit. */
	run_drop_unlaunched(r, 1 + (int64_t)r->credit_unlaunched);
	r->credit_unlaunched = 0;
	/* Last: may finish (and so free) the run. */
	run_drop_active(r, 1 + (int64_t)r->credit_active);
}

/*
 * Graph construction failed with @err: record it, close the submission,
 * and cancel every unstarted slot. Cancellation is retried a few times if
 * its snapshot phase fails; any debt left is settled by close().
 */
int orch_fail_run_submission(struct pto_orch *o, struct pto_run *r, int err)
{
	int tries, cerr = 0;

	orch_run_record_error(r, err, o->errmsg[0] ? o->errmsg :
				       "orchestration function failed");
	/* Keep the run alive across cancellation: the close below may be
	 * what lets the last slot be consumed. */
	pthread_mutex_lock(&o->runs_mu);
	r->refs++;
	pthread_mutex_unlock(&o->runs_mu);
	orch_close_run_submission(o, r);
	for (tries = 0; tries < 3; tries++) {
		cerr = orch_cancel_unstarted_run(o, r);
		if (!cerr)
			break;
	}
	/* Still failing: the debts stay recorded; pto_orch_close() retries
	 * (the run stays live, so close() finds it). */
	if (cerr)
		orch_error(o, cerr, "out of memory cancelling run %llu",
			   (unsigned long long)r->id);
	pthread_mutex_lock(&o->runs_mu);
	r->cancel_pending = cerr != 0;
	pthread_mutex_unlock(&o->runs_mu);
	pto_run_release(r);
	return cerr;
}

PTO_API int pto_run_start(pto_orch *o, pto_orch_fn fn, void *arg, pto_run **out)
{
	struct pto_orch *prev;
	struct trace_buf *prev_trace;
	struct pto_run *r = NULL;
	int ret;

	*out = NULL;
	/*
	 * Before any lock (orch_forked()): a child has no worker or
	 * scheduler thread to run a task or return a lease. No message
	 * either: o->errmsg belongs to the orch thread, and a worker's
	 * callback runs beside it.
	 */
	if (orch_forked(o))
		return -ECHILD;
	/* The callback's own run holds a lease and a worker: the new run
	 * could wait for both, and it would break the serialized
	 * contract with the orch thread. */
	if (orch_worker_here(o))
		return -EDEADLK;
	if (!fn)
		return orch_error(o, -EINVAL, "no orchestration function");
	/* From inside this orchestrator's own orchestration function: the
	 * begin would wait for the lease the outer run holds, or the nested
	 * close would end the outer run's scopes. */
	if (o->building)
		return orch_error(o, -EDEADLK,
				  "pto_run_start from inside an orchestration "
				  "function of the same orchestrator");
	ret = orch_begin_run(o, &r);
	if (ret)
		return ret;
	prev = tl_building;
	tl_building = o;
	prev_trace = trace_self;
	trace_self = o->trace_orch;
	ret = 0;
	if (o->ops->run_begin) {
		char msg[ORCH_MSG_LEN];

		ret = o->ops->run_begin(o->be, r->id, msg, sizeof(msg));
		if (ret)
			orch_error(o, ret, "%s", msg);
	}
	if (!ret)
		ret = fn(o, arg);
	tl_building = prev;
	if (ret > 0)	/* errors are negative errno values (libpto(7)) */
		ret = orch_error(o, -EINVAL,
				 "orchestration function returned %d (not 0 or "
				 "a negative errno)", ret);
	/* The first construction error is the run's, whatever came after
	 * it (refused submits, the function's return): a swallowed one
	 * too. */
	if (r->construction_err) {
		ret = r->construction_err;
		memcpy(o->errmsg, r->construction_msg, sizeof(o->errmsg));
	}
	if (!ret && o->scope.depth != 1)
		ret = orch_error(o, -EINVAL,
				 "%u scope(s) left open by the orchestration function",
				 o->scope.depth - 1);
	if (ret) {
		if (!o->errmsg[0])
			orch_error(o, ret, "orchestration function returned %d", ret);
		orch_fail_run_submission(o, r, ret);
	} else {
		orch_close_run_submission(o, r);
	}
	/* After the outer scope's end, whose releases record CONSUMED. */
	trace_self = prev_trace;
	*out = r;
	return ret;
}

PTO_API int pto_orch_run(pto_orch *o, pto_orch_fn fn, void *arg)
{
	pto_run *r = NULL;
	int ret = pto_run_start(o, fn, arg, &r);
	bool pending;
	int st;

	if (!r)
		return ret;
	/*
	 * A construction error whose cancellation could not settle its
	 * debts (its snapshot allocation kept failing) leaves a run that
	 * only pto_orch_close() can finish: waiting for it here would hang.
	 */
	pthread_mutex_lock(&o->runs_mu);
	pending = ret && r->cancel_pending;
	pthread_mutex_unlock(&o->runs_mu);
	st = pending ? ret : pto_run_wait(r, -1);
	pto_run_release(r);
	return ret ? ret : st;
}

/* Wait under runs_mu until *flag or the deadline. */
static int wait_flag(struct pto_orch *o, const bool *flag, int64_t timeout_ms)
{
	struct timespec ts;

	if (timeout_ms >= 0)
		orch_deadline_in(&ts, timeout_ms);
	while (!*flag) {
		if (timeout_ms < 0) {
			pthread_cond_wait(&o->runs_cv, &o->runs_mu);
		} else if (pthread_cond_timedwait(&o->runs_cv, &o->runs_mu, &ts) ==
			   ETIMEDOUT) {
			return *flag ? 0 : -ETIMEDOUT;
		}
	}
	return 0;
}

PTO_API int pto_run_done(pto_run *r)
{
	int d;

	if (orch_forked(r->o))
		return -ECHILD;
	flush_if_building(r->o);
	pthread_mutex_lock(&r->o->runs_mu);
	d = r->done;
	pthread_mutex_unlock(&r->o->runs_mu);
	return d;
}

PTO_API int pto_run_accepted(pto_run *r)
{
	int d;

	if (orch_forked(r->o))
		return -ECHILD;
	flush_if_building(r->o);
	pthread_mutex_lock(&r->o->runs_mu);
	d = r->accepted;
	pthread_mutex_unlock(&r->o->runs_mu);
	return d;
}

/*
 * Both waits. In a forked child: -ECHILD before runs_mu (which a parent
 * thread may have held at the fork, run_finish() takes it). From a worker
 * of the run's orchestrator: a wait that would block is -EDEADLK (the
 * callback's own run, or a run behind it, cannot finish while the
 * callback waits); one whose @flag is already set returns at once, as it
 * would anywhere (a callback may poll, or wait on a run that is over).
 */
static int wait_run_flag(pto_run *r, const bool *flag, int64_t timeout_ms,
			 bool status)
{
	struct pto_orch *o = r->o;
	int err;

	if (orch_forked(o))
		return -ECHILD;
	flush_if_building(o);
	pthread_mutex_lock(&o->runs_mu);
	if (orch_worker_here(o) && !*flag)
		err = -EDEADLK;
	else
		err = wait_flag(o, flag, timeout_ms);
	if (!err && status)
		err = r->status;
	pthread_mutex_unlock(&o->runs_mu);
	return err;
}

PTO_API int pto_run_wait_accepted(pto_run *r, int64_t timeout_ms)
{
	return wait_run_flag(r, &r->accepted, timeout_ms, false);
}

PTO_API int pto_run_wait(pto_run *r, int64_t timeout_ms)
{
	return wait_run_flag(r, &r->done, timeout_ms, true);
}

PTO_API int pto_run_result(pto_run *r)
{
	int st;

	if (orch_forked(r->o))
		return -ECHILD;
	flush_if_building(r->o);
	pthread_mutex_lock(&r->o->runs_mu);
	st = r->done ? r->status : -EBUSY;
	pthread_mutex_unlock(&r->o->runs_mu);
	return st;
}

PTO_API const char *pto_run_error(pto_run *r)
{
	const char *m;

	if (orch_forked(r->o))
		return "run state unavailable in a forked child";
	pthread_mutex_lock(&r->o->runs_mu);
	m = r->message;
	pthread_mutex_unlock(&r->o->runs_mu);
	return m;
}

PTO_API uint64_t pto_run_id(const pto_run *r)
{
	return r->id;
}

PTO_API void pto_run_release(pto_run *r)
{
	struct pto_orch *o;
	bool free_it;

	if (!r)
		return;
	o = r->o;
	/* The child's copy is released when it exits (pto_run_release(3)). */
	if (orch_forked(o))
		return;
	pthread_mutex_lock(&o->runs_mu);
	free_it = orch_run_unref_locked(r);
	pthread_mutex_unlock(&o->runs_mu);
	if (free_it)
		free(r);
}

uint32_t orch_runs_alive(struct pto_orch *o)
{
	uint32_t n;

	pthread_mutex_lock(&o->runs_mu);
	n = o->runs_alive;
	pthread_mutex_unlock(&o->runs_mu);
	return n;
}
