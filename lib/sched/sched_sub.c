// SPDX-License-Identifier: MIT
/*
 * SUB workers on a device: host threads that run the host callbacks of
 * the DAG's SUB tasks beside the device's cores. They take their work
 * from the orchestrator's one SUB queue through the backend interface,
 * as the in-process workers do: orch_ready_pop -> orch_dispatch_view ->
 * callback -> orch_member_done_pop. Documentation/orchestrator.md, "SUB
 * workers on a device".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sched/sched.h"
#include "orch/backend.h"
#include "trace/trace.h"

/* Pauses an idle worker spins on the ready generation before it parks:
 * a chain of callbacks goes on without a wake-up, and on a small machine
 * the scheduler threads keep their CPUs. */
#define SCHED_SUB_SPIN 500
#define SCHED_SUB_MSG_LEN 192

/* Run @d's callback, or after pto_orch_abort() fail it unrun; then
 * complete it and claim the worker's next task: 1 with *d replaced, 0
 * when there is none. */
static int sub_run(struct sched_sub *w, struct orch_dispatch *d)
{
	struct pto_orch *o = w->be->orch;
	struct orch_dispatch_view v;
	struct pto_task_ctx ctx;
	char msg[SCHED_SUB_MSG_LEN];
	uint32_t kind;
	int32_t id;
	int err;

	orch_dispatch_view(d, &v);
	orch_worker_info(o, d->widx, &id, &kind);
	msg[0] = '\0';
	if (atomic_load_explicit(&w->be->abort, memory_order_acquire)) {
		snprintf(msg, sizeof(msg), SCHED_ABORT_MSG ": task not started");
		err = -ECANCELED;
	} else {
		memset(&ctx, 0, sizeof(ctx));
		ctx.tensors = v.tensors;
		ctx.scalars = v.scalars;
		ctx.ntensors = v.ntensors;
		ctx.nscalars = v.nscalars;
		ctx.member = v.member;
		ctx.nmembers = v.nmembers;
		ctx.worker_id = id;
		ctx.task_id = v.task_id;
		ctx.user = v.callable->user;
		ctx.errmsg = msg;
		ctx.errmsg_len = sizeof(msg);
		/*
		 * GM a device task wrote, read through its mapping: the core
		 * stores FIN in COND with release after its GM writes, the
		 * scheduler thread's acquire load of COND (core_rc_reap)
		 * pairs with it, and its completion routed this task under
		 * sched_mu, which our pop took (or the orch thread did, after
		 * acquiring the producer's COMPLETED state).
		 * fn is never NULL: submit refuses a SUB task without one.
		 */
		trace_task2(trace_self_if(v.traced), TRACE_DISPATCHED,
			    TRACE_CB_BEGIN,
			    v.run_id, v.task_id,
			    (uint32_t)v.callable->kernel_id, TRACE_NO_CORE);
		err = v.callable->fn(&ctx);
		if (err > 0)
			err = -err;
		trace_task2(trace_self_if(v.traced), TRACE_CB_END,
			    TRACE_COMPLETED,
			    v.run_id, v.task_id,
			    (uint32_t)v.callable->kernel_id, TRACE_NO_CORE);
	}
	/*
	 * The callback's GM stores, for a device task that consumes them:
	 * the completion below makes the consumer READY under sched_mu, the
	 * scheduler thread pops it under sched_mu, writes its payload and
	 * stores its id in DATA_MAIN_BASE with release (core_rc_dispatch),
	 * which the core's acquire load pairs with before it reads GM.
	 */
	return orch_member_done_pop(o, d, err, err ? msg : NULL, d);
}

/* Sleep until kicked or stopped; a light sleep (!@heavy) also ends after
 * ORCH_LIGHT_SLEEP_NS. Returns false when it ended by that timeout. */
static bool sub_park(struct sched_sub *w, bool heavy)
{
	struct timespec ts;
	bool kicked;
	int err = 0;

	if (!heavy) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += ORCH_LIGHT_SLEEP_NS;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
	}
	pthread_mutex_lock(&w->mu);
	while (!w->kicked && !atomic_load(&w->be->stop) && err != ETIMEDOUT)
		err = heavy ? pthread_cond_wait(&w->cv, &w->mu) :
			      pthread_cond_timedwait(&w->cv, &w->mu, &ts);
	kicked = w->kicked || err != ETIMEDOUT;
	w->kicked = false;
	pthread_mutex_unlock(&w->mu);
	return kicked;
}

/*
 * Idle: spin on the generation for at most SCHED_SUB_SPIN pauses per idle
 * period (one idle worker at a time), then park: store parked, pop once
 * more through orch_ready_pop_parking (it marks SUB hungry and takes the
 * orch thread's deferred slots), sleep light, and heavy only after a
 * light sleep that timed out (ready_park.c, before_sleep).
 */
static void *sub_main(void *arg)
{
	struct sched_sub *w = arg;
	struct sched_backend *be = w->be;
	struct pto_orch *o = be->orch;
	int budget = SCHED_SUB_SPIN;
	struct orch_dispatch d;
	bool heavy = false;

	/* Its callbacks' waits on @o would wait on themselves (run.c). */
	orch_worker_thread_enter(o);
	trace_self_enter(orch_trace(o), TRACE_ROLE_HOST,
			 (uint32_t)(w - be->subs));
	while (!atomic_load_explicit(&be->stop, memory_order_acquire)) {
		uint64_t g = orch_ready_gen(o);

		if (orch_ready_pop(o, w->widx, &d)) {
			heavy = false;
			while (sub_run(w, &d))
				;
			budget = SCHED_SUB_SPIN;
			continue;
		}
		if (budget > 0) {
			if (atomic_fetch_add_explicit(&be->sub_spinners, 1,
						      memory_order_relaxed) == 0)
				while (budget > 0 && orch_ready_gen(o) == g) {
					sched_cpu_relax();
					budget--;
				}
			else
				budget = 0;	/* another one spins: park */
			atomic_fetch_sub_explicit(&be->sub_spinners, 1,
						  memory_order_relaxed);
			if (budget > 0)
				continue;	/* the generation moved: look */
		}
		budget = SCHED_SUB_SPIN;
		atomic_store(&w->parked, 1);	/* seq_cst: struct sched_sub */
		if (orch_ready_pop_parking(o, w->widx, &d, heavy)) {
			atomic_store(&w->parked, 0);
			heavy = false;
			while (sub_run(w, &d))
				;
			continue;
		}
		/* After a light sleep that timed out, no spin: a millisecond
		 * passed without a kick. */
		heavy = !sub_park(w, heavy);
		if (heavy)
			budget = 0;
		atomic_store(&w->parked, 0);
	}
	return NULL;
}

/* kick() for SUB worker @w; with sched_mu held (backend.h): a worker
 * not parked finds the work at its next look, so only a parked one is
 * signalled. */
void sched_sub_kick(struct sched_sub *w)
{
	if (!atomic_load(&w->parked))
		return;
	pthread_mutex_lock(&w->mu);
	w->kicked = true;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

/* Wake every SUB worker, parked or not (stop, abort). */
void sched_sub_wake_all(struct sched_backend *be)
{
	unsigned int i;

	for (i = 0; i < be->nsubs; i++) {
		struct sched_sub *w = &be->subs[i];

		pthread_mutex_lock(&w->mu);
		w->kicked = true;
		pthread_cond_signal(&w->cv);
		pthread_mutex_unlock(&w->mu);
	}
}

/* At create: @n workers, not started; their worker indices are set by
 * the caller (sched_create.c). */
int sched_sub_init(struct sched_backend *be, unsigned int n)
{
	pthread_condattr_t ca;
	unsigned int i;

	be->subs = aligned_alloc(64, sizeof(*be->subs) * n);
	if (!be->subs)
		return -ENOMEM;
	memset(be->subs, 0, sizeof(*be->subs) * n);
	pthread_condattr_init(&ca);
	/* sub_park()'s light sleep measures CLOCK_MONOTONIC. */
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	for (i = 0; i < n; i++) {
		be->subs[i].be = be;
		pthread_mutex_init(&be->subs[i].mu, NULL);
		pthread_cond_init(&be->subs[i].cv, &ca);
	}
	pthread_condattr_destroy(&ca);
	be->nsubs = n;
	return 0;
}

/* Start every SUB worker ("pto0-sub1" in top and a debugger); on a
 * failure the ones started are stopped and joined again. */
int sched_sub_start(struct sched_backend *be)
{
	unsigned int i;

	for (i = 0; i < be->nsubs; i++) {
		struct sched_sub *w = &be->subs[i];
		char name[16];
		int ret = pthread_create(&w->tid, NULL, sub_main, w);

		if (ret) {
			atomic_store(&be->stop, 1);
			sched_sub_wake_all(be);
			sched_sub_join(be, NULL);
			return -ret;
		}
		w->started = true;
		snprintf(name, sizeof(name), "pto%u-sub%u", be->dev_index % 100,
			 i % 100);
		pthread_setname_np(w->tid, name);
	}
	return 0;
}

/*
 * Join the SUB workers (stop set and every worker woken: the caller's).
 * With @deadline, -ETIMEDOUT if one is still in a callback then (an
 * abort's runs end only when their callbacks return): the next call
 * joins it. NULL: unbounded.
 */
int sched_sub_join(struct sched_backend *be, const struct timespec *deadline)
{
	unsigned int i;
	int err = 0;

	for (i = 0; i < be->nsubs; i++) {
		struct sched_sub *w = &be->subs[i];

		if (!w->started)
			continue;
		if (deadline && pthread_clockjoin_np(w->tid, NULL,
						     CLOCK_MONOTONIC,
						     deadline) == ETIMEDOUT) {
			err = -ETIMEDOUT;
			continue;
		}
		if (!deadline)
			pthread_join(w->tid, NULL);
		w->started = false;
	}
	return err;
}

/* At destroy, after the last join. */
void sched_sub_free(struct sched_backend *be)
{
	unsigned int i;

	for (i = 0; i < be->nsubs; i++) {
		pthread_mutex_destroy(&be->subs[i].mu);
		pthread_cond_destroy(&be->subs[i].cv);
	}
	free(be->subs);
	be->subs = NULL;
	be->nsubs = 0;
}
