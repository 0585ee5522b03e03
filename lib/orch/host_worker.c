// SPDX-License-Identifier: MIT
/*
 * Host workers (host_worker.h): the loop a host thread runs, pop ->
 * orch_dispatch_view -> callback -> orch_member_done_pop, idling by a
 * bounded spin on the ready generation, then a light and then a heavy
 * park.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "orch/host_worker.h"
#include "orch/orch_internal.h"

int orch_host_worker_init(struct orch_host_worker *w,
			  struct orch_host_pool *pool, int32_t widx,
			  uint32_t trace_index)
{
	pthread_condattr_t ca;
	int err;

	memset(w, 0, sizeof(*w));
	w->pool = pool;
	w->widx = widx;
	w->trace_index = trace_index;
	err = pthread_mutex_init(&w->mu, NULL);
	if (err)
		return -err;
	pthread_condattr_init(&ca);
	/* park()'s light sleep measures CLOCK_MONOTONIC. */
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	err = pthread_cond_init(&w->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (err) {
		pthread_mutex_destroy(&w->mu);
		return -err;
	}
	return 0;
}

void orch_host_worker_fini(struct orch_host_worker *w)
{
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
}

/* Run @d's callback, or after an abort fail it unrun; then complete it
 * and claim this worker's next task in one step: 1 with *d replaced by
 * the next task, 0 when there is none. */
static int run_one(struct orch_host_worker *w, struct orch_dispatch *d)
{
	struct orch_host_pool *p = w->pool;
	struct orch_dispatch_view v;
	struct pto_task_ctx ctx;
	char msg[ORCH_MSG_LEN];
	uint32_t kind;
	int32_t id;
	int err;

	orch_dispatch_view(d, &v);
	orch_worker_info(p->o, d->widx, &id, &kind);
	msg[0] = '\0';
	if (p->abort && atomic_load_explicit(p->abort, memory_order_acquire)) {
		snprintf(msg, sizeof(msg), "%s: task not started", p->abort_msg);
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
		 * On a device, GM a device task wrote is read through its
		 * mapping: the core stores FIN in COND with release after its
		 * GM writes, the scheduler thread's acquire load of COND
		 * (core_rc_reap) pairs with it, and its completion routed
		 * this task under sched_mu, which our pop took (or the orch
		 * thread did, after acquiring the producer's COMPLETED
		 * state). fn is never NULL: submit refuses it.
		 */
		trace_task2(trace_self_if(v.traced), TRACE_DISPATCHED,
			    TRACE_CB_BEGIN, v.run_id, v.task_id,
			    (uint32_t)v.callable->kernel_id, TRACE_NO_CORE);
		err = v.callable->fn(&ctx);
		if (err > 0)
			err = -err;
		trace_task2(trace_self_if(v.traced), TRACE_CB_END,
			    TRACE_COMPLETED, v.run_id, v.task_id,
			    (uint32_t)v.callable->kernel_id, TRACE_NO_CORE);
	}
	/*
	 * The callback's GM stores, for a device task that consumes them:
	 * the completion below makes the consumer READY under sched_mu, the
	 * scheduler thread pops it under sched_mu, writes its payload and
	 * stores its id in DATA_MAIN_BASE with release (core_rc_dispatch),
	 * which the core's acquire load pairs with before it reads GM.
	 */
	return orch_member_done_pop(p->o, d, err, err ? msg : NULL, d);
}

/* Sleep until kicked or stopped; a light sleep (!@heavy) also ends after
 * ORCH_LIGHT_SLEEP_NS. Returns false when it ended by that timeout. */
static bool park(struct orch_host_worker *w, bool heavy)
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
	while (!w->kicked && !atomic_load(w->pool->stop) && err != ETIMEDOUT)
		err = heavy ? pthread_cond_wait(&w->cv, &w->mu) :
			      pthread_cond_timedwait(&w->cv, &w->mu, &ts);
	kicked = w->kicked || err != ETIMEDOUT;
	w->kicked = false;
	pthread_mutex_unlock(&w->mu);
	return kicked;
}

/*
 * Idle: spin on the ready generation for at most pool->spin pauses per
 * idle period (one idle worker at a time: a generation that moved for
 * someone else must not keep a CPU busy), say hungry after pool->hungry
 * (deferred READY work of our kind is routed at once), then park: store
 * parked, pop once more through orch_ready_pop_parking (it takes the orch
 * thread's deferred slots), sleep light, and heavy only after a light
 * sleep that timed out (ready_park.c, before_sleep).
 */
void *orch_host_worker_main(void *arg)
{
	struct orch_host_worker *w = arg;
	struct orch_host_pool *p = w->pool;
	struct pto_orch *o = p->o;
	struct orch_dispatch d;
	int budget = p->spin;
	bool heavy = false;

	/* Its callbacks' calls into @o that would wait on themselves are
	 * -EDEADLK (run.c). */
	orch_worker_thread_enter(o);
	trace_self_enter(orch_trace(o), TRACE_ROLE_HOST, w->trace_index);
	while (!atomic_load_explicit(p->stop, memory_order_acquire)) {
		uint64_t g = orch_ready_gen(o);

		if (orch_ready_pop(o, w->widx, &d)) {
			heavy = false;	/* busy again: the next idle starts light */
			while (run_one(w, &d))
				;
			budget = p->spin;
			continue;
		}
		if (budget > 0) {
			if (atomic_fetch_add_explicit(&p->spinners, 1,
						      memory_order_relaxed) == 0)
				while (budget > 0 && orch_ready_gen(o) == g) {
					orch_cpu_relax();
					if (--budget == p->spin - p->hungry &&
					    p->hungry)
						orch_ready_hungry(o, w->widx);
				}
			else
				budget = 0;	/* someone else spins: park */
			atomic_fetch_sub_explicit(&p->spinners, 1,
						  memory_order_relaxed);
			if (budget > 0)
				continue;	/* the generation moved: look */
		}
		budget = p->spin;
		atomic_store(&w->parked, 1);	/* seq_cst: host_worker.h */
		if (orch_ready_pop_parking(o, w->widx, &d, heavy)) {
			atomic_store(&w->parked, 0);
			heavy = false;
			while (run_one(w, &d))
				;
			continue;
		}
		/* After a light sleep that timed out, no spin: a millisecond
		 * passed without a kick. */
		heavy = !park(w, heavy);
		if (heavy)
			budget = 0;
		atomic_store(&w->parked, 0);
	}
	trace_self = NULL;
	return NULL;
}

void orch_host_worker_kick(struct orch_host_worker *w)
{
	if (!atomic_load(&w->parked))
		return;
	orch_host_worker_wake(w);
}

void orch_host_worker_wake(struct orch_host_worker *w)
{
	pthread_mutex_lock(&w->mu);
	w->kicked = true;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}
