// SPDX-License-Identifier: MIT
/*
 * Orchestrator object: create (rings from the backend, workers), close
 * (reject, drain within a budget, retryable), destroy; error messages;
 * fork hygiene.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <linux/futex.h>
#include <sys/syscall.h>
#include "orch/orch_internal.h"

int orch_error(struct pto_orch *o, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(o->errmsg, sizeof(o->errmsg), fmt, ap);
	va_end(ap);
	return err;
}

void orch_deadline_in(struct timespec *ts, int64_t ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

PTO_API const char *pto_orch_error(const pto_orch *o)
{
	return o->errmsg;
}

/* Contended orch_lock (orch_internal.h): spin while the holder runs,
 * then sleep. Any acquisition here stores 2, so an unlock that might
 * leave a sleeper behind always wakes one (a spurious 2 costs one extra
 * wake, never a lost one). */
#define ORCH_LOCK_SPIN 100

void orch_lock_slow(struct orch_lock *l)
{
	uint32_t c;
	int i;

	for (i = 0; i < ORCH_LOCK_SPIN; i++) {
		orch_cpu_relax();
		c = atomic_load_explicit(&l->v, memory_order_relaxed);
		if (c == 0 && atomic_compare_exchange_weak_explicit(&l->v, &c, 1,
				memory_order_acquire, memory_order_relaxed))
			return;
	}
	/* Acquire when it returns 0: we own the lock (as 2). */
	while (atomic_exchange_explicit(&l->v, 2, memory_order_acquire) != 0)
		syscall(SYS_futex, &l->v, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
}

void orch_unlock_wake(struct orch_lock *l)
{
	syscall(SYS_futex, &l->v, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/*
 * The locks that pair with a condition variable (ring mu) are adaptive
 * pthread mutexes: a collision costs a short spin before a futex call.
 */
void orch_mutex_init(pthread_mutex_t *mu)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
	pthread_mutex_init(mu, &a);
	pthread_mutexattr_destroy(&a);
}

/*
 * Grow *arr to at least @need elements of @elem bytes; new elements are
 * zeroed. The new capacity depends only on (cap, need), which submit.c
 * relies on for arrays sharing one capacity.
 */
int orch_grow_slow(struct pto_orch *o, int fp, struct orch_slot *s, void **arr,
		   uint32_t *cap, uint32_t need, size_t elem)
{
	uint32_t nc;
	void *p;

	if (need <= *cap)
		return 0;
	if (orch_may_fail(o, fp, s))
		return -ENOMEM;
	nc = *cap ? *cap * 2 : 4;
	if (nc < need)
		nc = need;
	p = realloc(*arr, (size_t)nc * elem);
	if (!p)
		return -ENOMEM;
	memset((char *)p + (size_t)*cap * elem, 0, (size_t)(nc - *cap) * elem);
	*arr = p;
	*cap = nc;
	return 0;
}

int orch_grow_inl_slow(struct pto_orch *o, int fp, struct orch_slot *s,
		       void **arr, uint32_t *cap, uint32_t need, size_t elem,
		       const void *inl)
{
	uint32_t nc;
	void *p;

	if (*arr != inl)
		return orch_grow_slow(o, fp, s, arr, cap, need, elem);
	if (need <= *cap)
		return 0;
	if (orch_may_fail(o, fp, s))
		return -ENOMEM;
	nc = *cap * 2;
	if (nc < need)
		nc = need;
	p = malloc((size_t)nc * elem);
	if (!p)
		return -ENOMEM;
	memcpy(p, inl, (size_t)*cap * elem);
	memset((char *)p + (size_t)*cap * elem, 0, (size_t)(nc - *cap) * elem);
	*arr = p;
	*cap = nc;
	return 0;
}

/*
 * The atfork landing pad. No orchestrator lock is held across a fork point
 * today; when one must be, the handlers take them in this order, coarse to
 * fine: sched_mu -> slot fanout_mu -> TensorMap mu -> ring mu -> runs_mu
 * (the same order the code nests them in; orch_internal.h).
 */
static void atfork_prepare(void) {}
static void atfork_parent(void) {}
/* Set in every child forked after the first orchestrator was created
 * (the handlers are registered then), inherited by its own children: lets
 * orch_forked() skip getpid() in the process that created them, and the
 * submit path test one flag (orch_internal.h). */
bool orch_forked_child;
pid_t orch_child_pid;	/* getpid() of this child, read at its fork */

static void atfork_child(void)
{
	orch_child_pid = getpid();
	orch_forked_child = true;
}

static pthread_once_t hygiene_once = PTHREAD_ONCE_INIT;

bool orch_have_prefetchw;

/* CPUID 0x80000001 ECX bit 8: PREFETCHW (AMD "3DNowPrefetch", Intel
 * since Broadwell). Set once, before any orchestrator exists. */
void orch_cpu_init(void)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned int a, b, c, d;

	if (__get_cpuid(0x80000001, &a, &b, &c, &d))
		orch_have_prefetchw = (c >> 8) & 1;
#endif
}

static void fork_hygiene(void)
{
	orch_cpu_init();
	/* Keep transitively linked thread pools from starting threads a
	 * fork would then inherit. overwrite = 0: user values win. */
	setenv("OMP_NUM_THREADS", "1", 0);
	setenv("OPENBLAS_NUM_THREADS", "1", 0);
	setenv("MKL_NUM_THREADS", "1", 0);
	setenv("BLIS_NUM_THREADS", "1", 0);
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* Once per process, from orchestrator creation (never a constructor). */
void orch_fork_hygiene_once(void)
{
	pthread_once(&hygiene_once, fork_hygiene);
}

static int setup_workers(struct pto_orch *o, const struct pto_orch_config *cfg)
{
	static const struct pto_worker_desc dflt[2] = {
		{ .id = 0, .kind = PTO_WORKER_SUB }, { .id = 1, .kind = PTO_WORKER_SUB },
	};
	const struct pto_worker_desc *w = cfg->nworkers ? cfg->workers : dflt;
	uint32_t n = cfg->nworkers ? cfg->nworkers : 2, i, j;

	if (!w)
		return -EINVAL;
	o->workers = calloc(n, sizeof(*o->workers));
	if (!o->workers)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (w[i].id < 0 || !orch_kind_valid(w[i].kind))
			return orch_error(o, -EINVAL, "bad worker %u", i);
		for (j = 0; j < i; j++)
			if (w[j].id == w[i].id)
				return orch_error(o, -EINVAL, "duplicate worker id %d",
						  w[i].id);
		o->workers[i].id = w[i].id;
		o->workers[i].kind = w[i].kind;
		o->workers[i].cap = 1;
		o->kind_workers[w[i].kind]++;
	}
	o->nworkers = n;
	o->cfg.workers = NULL;	/* copied; do not keep the caller's pointer */
	o->cfg.nworkers = n;
	return 0;
}

static void orch_free(struct pto_orch *o)
{
	int r;

	for (r = 0; r < PTO_MAX_RING_DEPTH; r++) {
		if (o->rings[r].heap.base)
			o->ops->heap_unmap(o->be, r, &o->rings[r].heap);
		orch_ring_fini(o, r);
	}
	orch_tm_fini(o);
	orch_scope_fini(o);
	if (o->ops && o->ops->destroy)
		o->ops->destroy(o->be);
	free(o->deps);
	free(o->workers);
	pthread_mutex_destroy(&o->runs_mu);
	pthread_cond_destroy(&o->runs_cv);
	free(o);
}

int orch_config_check(const struct pto_orch_config *cfg, bool workers)
{
	const struct pto_worker_desc *w;
	uint32_t i, j;

	if (!cfg)
		return 0;
	if (!orch_reserved_zero(cfg->reserved, sizeof(cfg->reserved)))
		return -EINVAL;
	/* A slot's index, ring * window + position, is 32 bits (as are
	 * validate()'s bound and a task handle's slot): it must not wrap. */
	if (cfg->task_window > PTO_MAX_TASK_WINDOW)
		return -EINVAL;
	/* nworkers 0: the default workers, cfg->workers is not read. */
	if (!workers || !cfg->nworkers)
		return 0;
	/*
	 * What setup_workers() would refuse, refused here, before the fork
	 * hygiene and the backend's setup (membarrier registration) run:
	 * orch_create() finds out only after them.
	 */
	w = cfg->workers;
	if (!w)
		return -EINVAL;
	for (i = 0; i < cfg->nworkers; i++) {
		if (!orch_reserved_zero(w[i].reserved, sizeof(w[i].reserved)) ||
		    w[i].id < 0 || !orch_kind_valid(w[i].kind))
			return -EINVAL;
		for (j = 0; j < i; j++)
			if (w[j].id == w[i].id)
				return -EINVAL;
	}
	return 0;
}

void *orch_backend_of(struct pto_orch *o, const struct orch_backend_ops *ops)
{
	return o->ops == ops ? o->be : NULL;
}

int orch_create(const struct pto_orch_config *cfg,
		const struct orch_backend_ops *ops, void *be,
		struct pto_orch **out)
{
	struct pto_orch_config c = { 0 };
	pthread_condattr_t ca;
	struct pto_orch *o;
	int r, err;

	if (cfg)
		c = *cfg;
	if (!c.heap_ring_size)
		c.heap_ring_size = 1ULL << 30;
	if (!c.task_window)
		c.task_window = 4096;
	if (!c.timeout_ms)
		c.timeout_ms = 10000;
	if (!c.run_depth)
		c.run_depth = 2;

	orch_fork_hygiene_once();
	o = calloc(1, sizeof(*o));
	if (!o) {
		ops->destroy(be);
		return -ENOMEM;
	}
	o->cfg = c;
	o->owner_pid = getpid();
	o->ops = ops;
	o->be = be;
	atomic_init(&o->next_task_id, 1);	/* 0 names no task */
	o->ready_batch = 1;	/* threaded backends raise it */
	orch_lock_init(&o->sched_mu);
	pthread_mutex_init(&o->runs_mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&o->runs_cv, &ca);
	pthread_condattr_destroy(&ca);

	err = setup_workers(o, &c);
	if (!err)
		err = orch_tm_init(o);
	for (r = 0; r < PTO_MAX_RING_DEPTH && !err; r++) {
		err = orch_ring_init(o, r, c.task_window);
		if (!err)
			err = ops->heap_map(be, r, c.heap_ring_size, &o->rings[r].heap);
	}
	/* Every ring is in the same device's GM. */
	o->gm_dev = o->rings[0].heap.dev;
	if (ops->kernels_need_heap_space)
		o->kernel_bad_spaces = ((1u << PTO_SPACE_NR) - 1) &
				       ~(1u << o->rings[0].heap.space);
	o->tensorless_kernels = ops->tensorless_kernels;
	o->host_callbacks = ops->host_callbacks;
	if (!err)
		err = ops->start(be, o);
	if (err) {
		orch_free(o);
		return err;
	}
	*out = o;
	return 0;
}

/*
 * Close's and abort's first step, runs_mu held (dropped and retaken
 * inside).
 */
static void orch_settle_pending_locked(struct pto_orch *o)
{
	/*
	 * Settle cancellations whose snapshot kept failing. Close and abort
	 * run on any thread, so this may overlap the orch thread's builds and
	 * cancellations; they share only the slots of their own runs (a run's
	 * tasks depend only on its own), the locked structures and no unlocked
	 * state. A settler claims the run (settling) before dropping runs_mu,
	 * so a run is never settled twice; cancel_pending stays set until a
	 * settle succeeds. Documentation/orchestrator.md.
	 */
	struct pto_run *r;
	int err;

	r = o->runs;
	while (r) {
		struct pto_run *next;

		if (!r->cancel_pending || r->settling) {
			r = r->next;
			continue;
		}
		r->settling = true;
		r->refs++;
		pthread_mutex_unlock(&o->runs_mu);
		err = orch_cancel_unstarted_run(o, r);
		pthread_mutex_lock(&o->runs_mu);
		r->settling = false;
		if (!err)
			r->cancel_pending = false;
		/*
		 * Every pending run, not one per call: a pending run finishes
		 * only through a settle. A failed one stays listed, so go on
		 * after it; a settled one may have left the list, so rescan
		 * from the head. That ends: each rescan follows a settle, and
		 * at most run_depth runs are pending.
		 */
		next = err ? r->next : o->runs;
		err = 0;
		/*
		 * A cancellation that settled the debts may have consumed the
		 * run's last slot: the run finished, dropped its in-flight
		 * reference and left the list, and if the caller released its
		 * handle already, ours is the last.
		 */
		if (orch_run_unref_locked(r))
			free(r);
		r = next;
	}
}

/*
 * Close's and abort's refusals, before any lock. In a forked child nothing can
 * be done safely (no threads, copied locks, the parent's device). From inside
 * an orchestration function the drain would wait for the run being built; from
 * a host callback, for the callback's own run (and would join its own thread).
 */
static int teardown_refused(const struct pto_orch *o)
{
	if (orch_forked(o))
		return -ECHILD;
	if (orch_building_here(o) || orch_worker_here(o))
		return -EDEADLK;
	return 0;
}

/* Settle pending cancellations, then closing: begin_run now fails, and
 * runs blocked in it wake. runs_mu held. */
static void begin_closing_locked(struct pto_orch *o)
{
	orch_settle_pending_locked(o);
	o->closing = true;
	pthread_cond_broadcast(&o->runs_cv);
}

/* Wait until every run has left o->runs, or @ts: 0 or -ETIMEDOUT.
 * runs_mu held. */
static int wait_runs_gone_locked(struct pto_orch *o, const struct timespec *ts)
{
	while (o->runs)
		if (pthread_cond_timedwait(&o->runs_cv, &o->runs_mu, ts) ==
		    ETIMEDOUT)
			return o->runs ? -ETIMEDOUT : 0;
	return 0;
}

/* The least time close gives the workers' stop after the drain. */
#define ORCH_STOP_MIN_MS 1000

/*
 * Wait until no other close is stopping the backend, or @ts: 0 (then
 * o->closed says whether that one succeeded) or -ETIMEDOUT. runs_mu
 * held. The backend's stop joins threads, and two joins of one thread
 * are undefined: a close that finds another one stopping waits for it,
 * and takes over only if that one timed out (its stop has nothing to
 * undo, and a retry joins what is left: backend.h).
 */
static int wait_stopper_locked(struct pto_orch *o, const struct timespec *ts)
{
	while (o->stopping && !o->closed)
		if (pthread_cond_timedwait(&o->runs_cv, &o->runs_mu, ts) ==
		    ETIMEDOUT)
			return o->stopping && !o->closed ? -ETIMEDOUT : 0;
	return 0;
}

PTO_API int pto_orch_close(pto_orch *o, uint32_t budget_ms)
{
	struct timespec ts, floor;
	int err;

	err = teardown_refused(o);
	if (err)
		return err;
	pthread_mutex_lock(&o->runs_mu);
	if (o->closed) {
		pthread_mutex_unlock(&o->runs_mu);
		return 0;
	}
	begin_closing_locked(o);
	orch_deadline_in(&ts, budget_ms);
	err = wait_runs_gone_locked(o, &ts);
	/*
	 * No message: o->errmsg is the orch thread's (pto_orch_error), and
	 * close runs on any thread, beside a build or its "orchestrator is
	 * closed" failure. -ETIMEDOUT says it all.
	 */
	if (err) {
		pthread_mutex_unlock(&o->runs_mu);
		return err;
	}
	/*
	 * Within the same budget, but never less than ORCH_STOP_MIN_MS from
	 * now: a device core that does not answer its retirement holds its
	 * scheduler thread up to the driver's retire_timeout_ms, while cores
	 * that answer take a moment too (the threads wake, leave their
	 * loops and retire in parallel), so an idle orchestrator closed with
	 * a budget of 0 still closes. Past that, -ETIMEDOUT with every run
	 * done and nothing to undo: a retry joins what is left.
	 */
	orch_deadline_in(&floor, ORCH_STOP_MIN_MS);
	if (floor.tv_sec > ts.tv_sec ||
	    (floor.tv_sec == ts.tv_sec && floor.tv_nsec > ts.tv_nsec))
		ts = floor;
	err = wait_stopper_locked(o, &ts);
	if (err || o->closed) {
		pthread_mutex_unlock(&o->runs_mu);
		return err;
	}
	o->stopping = true;
	pthread_mutex_unlock(&o->runs_mu);
	orch_may_fail(o, ORCH_TP_BACKEND_STOP, NULL);
	err = o->ops->stop(o->be, &ts);
	if (!err)
		orch_ring_shutdown(o);
	pthread_mutex_lock(&o->runs_mu);
	o->stopping = false;
	o->closed = !err;
	pthread_cond_broadcast(&o->runs_cv);
	pthread_mutex_unlock(&o->runs_mu);
	return err;
}

PTO_API int pto_orch_abort(pto_orch *o, uint32_t budget_ms)
{
	struct timespec ts;
	int err;

	err = teardown_refused(o);
	if (err)
		return err;
	if (!o->ops->abort)
		return -EOPNOTSUPP;
	orch_deadline_in(&ts, budget_ms);
	pthread_mutex_lock(&o->runs_mu);
	if (o->closed) {
		pthread_mutex_unlock(&o->runs_mu);
		return 0;
	}
	/*
	 * What close does first: a run whose cancellation is pending can
	 * only finish through its settle, and no task failure settles it.
	 * Then closing, before the backend is told: a run that begins after
	 * this fails in begin_run, so every run the abort has to end exists
	 * already. A run being built takes no further submit (aborted:
	 * building_run() refuses it, -ECANCELED, and the build fails as at
	 * any construction error); what it submitted fails as the backend
	 * takes it, below.
	 */
	begin_closing_locked(o);
	atomic_store_explicit(&o->aborted, true, memory_order_relaxed);
	pthread_mutex_unlock(&o->runs_mu);
	/*
	 * A submit waiting on back-pressure fails too (not under runs_mu,
	 * which comes after ring.mu).
	 */
	orch_ring_wake_all(o);
	/*
	 * From here every task in flight on the backend's workers ends as
	 * stopped and every task it takes later fails without running, each
	 * through the orchestrator's own completion (orch_member_done()):
	 * consumers are poisoned, runs fail and leave o->runs. Idempotent: a
	 * retry, or another thread's abort, only waits longer; a close on
	 * another thread drains the runs as they fail, and may stop the
	 * backend before this returns (its abort then finds no thread to
	 * tell: backend.h).
	 */
	o->ops->abort(o->be);
	pthread_mutex_lock(&o->runs_mu);
	err = wait_runs_gone_locked(o, &ts);
	pthread_mutex_unlock(&o->runs_mu);
	return err;
}

PTO_API int pto_orch_destroy(pto_orch *o)
{
	if (!o)
		return 0;
	if (orch_forked(o))	/* as in pto_orch_close() */
		return -ECHILD;
	if (orch_worker_here(o))	/* as in pto_orch_close() */
		return -EDEADLK;
	/* A handle still held would reach into @o when released. */
	if (!o->closed || orch_runs_alive(o))
		return -EBUSY;
	orch_free(o);
	return 0;
}
