// SPDX-License-Identifier: MIT
/*
 * The in-process backend: one thread per worker running host callbacks, the
 * device scheduler's loop in miniature (orch_ready_pop -> orch_dispatch_view
 * -> run -> orch_member_done). Heap rings are shared anonymous mappings.
 * Parking: the worker stores parked = 1, then looks for work under sched_mu; a
 * kicker queues under sched_mu, then loads parked. The second critical section
 * sees the first's write: no lost wake-up.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include "orch/orch_internal.h"

#define INPROC_SPIN 500	/* ~10 us of pause: long enough to catch a
			 * chain's next task, short enough not to starve the
			 * orch thread on a 2-CPU machine */
#define INPROC_HUNGRY 100	/* ~2 us idle: ask the orch thread to flush
				 * its deferred READY slots (ready.c) */

struct inproc_worker {
	pthread_t th;
	struct inproc *be;
	int32_t widx;
	_Atomic int parked;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool kicked;		/* under mu */
	bool started;
} __attribute__((aligned(64)));

struct inproc {
	struct pto_orch *o;
	struct inproc_worker *w;
	uint32_t n;
	_Atomic int stop;
	/* Idle workers allowed to spin at once: one. On a small machine the
	 * orch thread needs a CPU more than a second spinner does. */
	_Atomic int spinners;
	bool manual;
	_Atomic uint64_t kicks;	/* manual backend: kicks seen (tests) */
};

static int inproc_heap_map(void *bep, int ring, uint64_t size,
			   struct orch_heap *out)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	(void)bep;
	(void)ring;
	if (p == MAP_FAILED)
		return -errno;
	memset(out, 0, sizeof(*out));
	out->base = p;
	out->size = size;
	out->space = PTO_SPACE_HOST;
	return 0;
}

static void inproc_heap_unmap(void *bep, int ring, struct orch_heap *h)
{
	(void)bep;
	(void)ring;
	munmap(h->base, h->size);
	h->base = NULL;
}

/* Run @d; then complete it and claim this worker's next task in one
 * step. Returns 1 with *d replaced by the next task, 0 when idle. */
static int run_one(struct pto_orch *o, struct orch_dispatch *d)
{
	struct orch_dispatch_view v;
	struct pto_task_ctx ctx;
	char msg[ORCH_MSG_LEN];
	int32_t id;
	uint32_t kind;
	int err = 0;

	orch_dispatch_view(d, &v);
	orch_worker_info(o, d->widx, &id, &kind);
	msg[0] = '\0';
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
	trace_task2(trace_self_if(v.traced), TRACE_DISPATCHED,
		    TRACE_CB_BEGIN, v.run_id, v.task_id,
		    (uint32_t)v.callable->kernel_id, TRACE_NO_CORE);
	/* Never NULL: submit refuses it (backend.h, host_callbacks). */
	err = v.callable->fn(&ctx);
	if (err > 0)
		err = -err;
	trace_task2(trace_self_if(v.traced), TRACE_CB_END, TRACE_COMPLETED,
		    v.run_id, v.task_id, (uint32_t)v.callable->kernel_id,
		    TRACE_NO_CORE);
	return orch_member_done_pop(o, d, err, msg, d);
}

/*
 * Sleep until kicked (or stopped); a light sleep (!@heavy) also ends at
 * ORCH_LIGHT_SLEEP_NS. Returns false when it ended by that timeout.
 */
static bool park(struct inproc_worker *w, bool heavy)
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
 * Idle: spin on the ready generation at most INPROC_SPIN pauses per idle
 * period (a generation that moved for someone else must not keep a CPU busy),
 * say hungry after INPROC_HUNGRY (orch_ready_hungry: deferred READY work of
 * our kind is routed at once), then park through orch_ready_pop_parking, which
 * takes what the orch thread holds deferred.
 */
static void *worker_main(void *arg)
{
	struct inproc_worker *w = arg;
	struct inproc *be = w->be;
	struct pto_orch *o = be->o;
	struct orch_dispatch d;
	int budget = INPROC_SPIN;
	bool heavy = false;

	/* Its callbacks' calls into @o that would wait on themselves are
	 * -EDEADLK (run.c). */
	orch_worker_thread_enter(o);
	trace_self_enter(orch_trace(o), TRACE_ROLE_HOST, (uint32_t)w->widx);
	while (!atomic_load_explicit(&be->stop, memory_order_acquire)) {
		uint64_t g = orch_ready_gen(o);

		if (orch_ready_pop(o, w->widx, &d)) {
			heavy = false;	/* busy again: the next idle starts light */
			while (run_one(o, &d))
				;
			budget = INPROC_SPIN;
			continue;
		}
		if (budget > 0) {
			if (atomic_fetch_add_explicit(&be->spinners, 1,
						      memory_order_relaxed) == 0)
				while (budget > 0 && orch_ready_gen(o) == g) {
					orch_cpu_relax();
					if (--budget == INPROC_SPIN - INPROC_HUNGRY)
						orch_ready_hungry(o, w->widx);
				}
			else
				budget = 0;	/* someone else spins: park */
			atomic_fetch_sub_explicit(&be->spinners, 1, memory_order_relaxed);
			if (budget > 0)
				continue;	/* the generation moved: look */
		}
		budget = INPROC_SPIN;
		atomic_store(&w->parked, 1);	/* seq_cst: the parking protocol above */
		/* Also takes the orch thread's deferred READY slots. */
		if (orch_ready_pop_parking(o, w->widx, &d, heavy)) {
			atomic_store(&w->parked, 0);
			heavy = false;
			while (run_one(o, &d))
				;
			continue;
		}
		/* Light, then (after a light sleep that timed out) heavy:
		 * ready.c, before_sleep. The light one skips the spin after
		 * it: a millisecond passed without a kick. */
		heavy = !park(w, heavy);
		if (heavy)
			budget = 0;
		atomic_store(&w->parked, 0);
	}
	return NULL;
}

static void inproc_kick(void *bep, int32_t widx, uint32_t kind)
{
	struct inproc *be = bep;
	struct inproc_worker *w;

	(void)kind;
	if (be->manual) {
		atomic_fetch_add_explicit(&be->kicks, 1, memory_order_relaxed);
		return;
	}
	w = &be->w[widx];
	if (!atomic_load(&w->parked))
		return;
	pthread_mutex_lock(&w->mu);
	w->kicked = true;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

/* Joins unbounded: called after the drain (every run done, so no host
 * callback is in flight) or on a failed create, the workers leave at once. */
static void inproc_stop_all(void *bep)
{
	struct inproc *be = bep;
	uint32_t i;

	atomic_store(&be->stop, 1);
	for (i = 0; i < be->n; i++) {
		struct inproc_worker *w = &be->w[i];

		pthread_mutex_lock(&w->mu);
		w->kicked = true;
		pthread_cond_signal(&w->cv);
		pthread_mutex_unlock(&w->mu);
	}
	for (i = 0; i < be->n; i++)
		if (be->w[i].started) {
			pthread_join(be->w[i].th, NULL);
			be->w[i].started = false;
		}
}

static int inproc_stop(void *bep, const struct timespec *deadline)
{
	(void)deadline;
	inproc_stop_all(bep);
	return 0;
}

static int inproc_start(void *bep, struct pto_orch *o)
{
	struct inproc *be = bep;
	pthread_condattr_t ca;
	uint32_t i;

	be->o = o;
	be->n = orch_nworkers(o);
	be->w = aligned_alloc(64, sizeof(*be->w) * be->n);
	if (!be->w)
		return -ENOMEM;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	memset(be->w, 0, sizeof(*be->w) * be->n);
	for (i = 0; i < be->n; i++) {
		struct inproc_worker *w = &be->w[i];

		w->be = be;
		w->widx = (int32_t)i;
		pthread_mutex_init(&w->mu, NULL);
		/* park()'s bounded sleep measures CLOCK_MONOTONIC. */
		pthread_cond_init(&w->cv, &ca);
	}
	pthread_condattr_destroy(&ca);
	if (be->manual)
		return 0;
	for (i = 0; i < be->n; i++) {
		char name[16];
		int err = pthread_create(&be->w[i].th, NULL, worker_main, &be->w[i]);

		if (err) {
			inproc_stop_all(be);
			return -err;
		}
		be->w[i].started = true;
		/* "pto-worker3": what top, perf and a debugger show. */
		snprintf(name, sizeof(name), "pto-worker%u", i % 10000);
		pthread_setname_np(be->w[i].th, name);
	}
	return 0;
}

static void inproc_destroy(void *bep)
{
	struct inproc *be = bep;
	uint32_t i;

	if (!be)
		return;
	if (be->w) {
		inproc_stop_all(be);
		for (i = 0; i < be->n; i++) {
			pthread_mutex_destroy(&be->w[i].mu);
			pthread_cond_destroy(&be->w[i].cv);
		}
	}
	free(be->w);
	free(be);
}

#define INPROC_OPS					\
	.heap_map = inproc_heap_map,			\
	.heap_unmap = inproc_heap_unmap,		\
	.start = inproc_start,				\
	.stop = inproc_stop,				\
	.kick = inproc_kick,				\
	.host_callbacks = true,				\
	.destroy = inproc_destroy

static const struct orch_backend_ops inproc_ops = {
	.name = "inproc",
	INPROC_OPS,
};

#ifdef PTO_TEST_HOOKS
/* Manual backend posing as a server (tests of the device's batching
 * rules, ready.c: orch_ready_steal). */
static const struct orch_backend_ops manual_server_ops = {
	.name = "manual-server",
	.kick_wakes_server = true,
	INPROC_OPS,
};
#endif

static int create(const struct pto_orch_config *cfg, bool manual,
		  const struct orch_backend_ops *ops, struct pto_orch **out)
{
	struct inproc *be;
	bool batch;
	int err;

	/* As pto_orch_create_device(): a failed create leaves no stale
	 * pointer for the caller's cleanup to free. */
	*out = NULL;
	err = orch_config_check(cfg, true);
	if (err)
		return err;
	be = calloc(1, sizeof(*be));
	if (!be)
		return -ENOMEM;
	be->manual = manual;
	/* Before any worker thread exists: they use the barrier it sets up. */
	batch = !manual && orch_heavy_barrier_init();
	err = orch_create(cfg, ops, be, out);
	/*
	 * Threaded: batch the orch thread's READY publications (ready.c).
	 * Not on the manual backend, whose test thread is the orch thread
	 * and pops by hand (tests of the batching raise it themselves).
	 * At most the task_window hint; only with membarrier(2): see
	 * orch_ready_defer.
	 */
	if (!err && batch)
		orch_set_ready_batch(*out, ORCH_READY_BATCH);
	return err;
}

PTO_API int pto_orch_create_inproc(const struct pto_orch_config *cfg,
				   pto_orch **out)
{
	return create(cfg, false, &inproc_ops, out);
}

#ifdef PTO_TEST_HOOKS
int orch_create_manual(const struct pto_orch_config *cfg, struct pto_orch **out)
{
	return create(cfg, true, &inproc_ops, out);
}

int orch_create_manual_server(const struct pto_orch_config *cfg,
			      struct pto_orch **out)
{
	return create(cfg, true, &manual_server_ops, out);
}

uint64_t orch_manual_kicks(struct pto_orch *o)
{
	struct inproc *be = o->be;

	return atomic_load_explicit(&be->kicks, memory_order_relaxed);
}
#endif
