/* SPDX-License-Identifier: MIT */
/* Internal: the device backend's state, shared by its files. Internal
 * symbols of lib/sched/ carry the sched_ prefix. */
#ifndef PTO_LIB_SCHED_H
#define PTO_LIB_SCHED_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <pto/sched.h>
#include <linux/pto_dump.h>
#include "core.h"
#include "orch/backend.h"

/* The most dump lanes a device has (the lanes parameter's bound). */
#define SCHED_DUMP_MAX_LANES 5

#define SCHED_MAX_WORKERS (PTO_DEV_MAX_CORES + PTO_DEV_MAX_CORES / 3 + \
			   PTO_SCHED_MAX_SUB_THREADS)

/*
 * One in-flight task on a core, found again by its dispatch id's parity
 * (the raw layer, lib/core.c, tracks which ids are in flight).
 */
struct sched_slot {
	struct orch_dispatch d;
	int mix;		/* one of a MIX task's three: see the cluster */
};

struct sched_core {
	struct core_rc *rc;
	int32_t widx;			/* orchestrator worker index */
	uint32_t kind;			/* its worker's kind */
	struct sched_cluster *cl;
	struct sched_thread *t;		/* its index in t->cores is its mask bit */
	struct sched_slot slot[2];	/* by id parity */
	/*
	 * By payload buffer (id parity): the tensor slots (1 << PTO_ARG_*)
	 * that may hold an earlier task's descriptor. Only this thread writes
	 * the buffers' inputs (the core writes status and done_id), so
	 * sched_build_payload() clears just these instead of the whole
	 * buffer. All set at launch: the buffers' content is not known.
	 */
	uint8_t payload_dirty[2];
};

#define SCHED_PAYLOAD_DIRTY_ALL ((1u << PTO_PAYLOAD_TENSORS) - 1)

/* A set of a thread's cores, by their index in sched_thread.cores. */
struct sched_mask {
	uint64_t w[PTO_CORE_MASK_WORDS];
};

/*
 * A cluster of a thread's partition and its MIX worker: the three cores
 * run one MIX task together, started together, completed when all three
 * FIN. While a MIX task runs, or is wanted (its worker was kicked), the
 * cores take no single-core work, so the MIX task is not starved.
 */
struct sched_cluster {
	unsigned int index;
	int32_t mix_widx;
	struct sched_core *core[3];
	int mix_running;
	unsigned int mix_left;		/* FINs still expected */
	int mix_err;
	char mix_msg[128];
	struct orch_dispatch mix_d;
	atomic_int mix_wanted;		/* set by kick(), cleared before a pop */
};

/*
 * A scheduler thread; all but the atomics are its own. @sleeping: 1 around
 * poll(); kick() writes @evfd only then (Dekker pair with @kicked,
 * sched_sleep()). @kicked: set by kick(), cleared before a look for work.
 * @self_kicked: a kick the thread makes itself.
 */
struct sched_thread {
	struct sched_backend *be;
	unsigned int index;
	pthread_t tid;
	/*
	 * 1 from pthread_create() until joined; read by sched_tell_all() on a
	 * close's or an abort's thread, so atomic. Relaxed: @evfd stays open
	 * until destroy, so waking a joined thread is harmless. sched_stop()
	 * calls never overlap (close serializes them).
	 */
	atomic_int started;
	uint64_t clusters;		/* bitmap of owned clusters */
	struct core_launch *launch;
	unsigned int ncores;
	struct sched_core *cores;
	unsigned int nclusters;
	struct sched_cluster *cl;
	int evfd;
	/*
	 * Core sets, so a loop pass visits the cores it concerns, not every
	 * core of the partition (scanning them all at every step would be
	 * most of the thread's time per task):
	 * @all every core; @busy those with a task in flight (set by
	 * dispatch, cleared by the reap that empties them); @parked idle
	 * cores seen parked - a parked core wakes only by this thread's
	 * doorbell, so the bit holds until the thread dispatches to it.
	 */
	struct sched_mask all, busy, parked;
	uint64_t wake_delay_ns;		/* see sched_dispatch() */
	uint64_t backlog_since;		/* 0: no parked pass pending */
	unsigned int clock_skip;	/* steps before the next clock read */
	uint64_t last_wake_ns;		/* last core woken for work */
	unsigned int max_awake;		/* see sched_max_awake() */
	uint32_t kinds;			/* bit per worker kind it serves */
	/*
	 * MIX bookkeeping, so a dispatch with no MIX work skips the cluster
	 * scan: @mix_running clusters running a MIX task (thread only);
	 * @mix_any set (release) after a cluster's mix_wanted by whoever
	 * sets that, taken (exchange, acquire) by the thread before its
	 * scan, and set again by it while a wanted task could not start.
	 */
	unsigned int mix_running;
	atomic_int mix_any;
	bool heavy_sleep;	/* next sleep is heavy (ready.c: before_sleep) */
	atomic_int sleeping;
	atomic_int kicked;
	bool self_kicked;
	/* Consumptions deferred by this thread's completions (loop only),
	 * and the steps since the first of them went in. */
	struct orch_consume_batch consume;
	unsigned int consume_steps;
	/*
	 * The thread retired its cores for pto_orch_abort() (loop only):
	 * nothing is in flight on them, nothing goes to them any more, and
	 * each task it pops fails at once (sched_abort_step()).
	 */
	bool aborted;

	atomic_uint_fast64_t tasks;
	atomic_uint_fast64_t errors;
	atomic_uint_fast64_t sleeps;
	atomic_uint_fast64_t retired;		/* at loop exit */
	atomic_uint_fast64_t quarantined;
	atomic_uint_fast64_t retire_ns;
	atomic_uint_fast64_t captures;	/* args dump capture ioctls */
};

/* A SUB worker: a host thread of its own that runs the host callbacks of
 * SUB tasks (sched_sub.c), a host worker (orch/host_worker.h: its
 * parking and lock order). */
struct sched_sub {
	struct orch_host_worker hw;
	pthread_t tid;
	bool started;		/* created, not yet joined (start/stop only) */
};

/* What an orchestrator worker index is to the backend. */
struct sched_worker {
	struct sched_thread *t;		/* NULL for a SUB worker */
	struct sched_cluster *cl;	/* MIX workers only */
	struct sched_sub *sub;		/* SUB workers only */
};

/*
 * The args dump (sched_dump.c): armed by pto_orch_dump_args() for the runs
 * started next, one dumped run at a time. @mu protects the rest but @run;
 * @cv: @busy went false.
 */
struct dump_device;
struct sched_dump {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint32_t level;			/* armed: PTO_DUMP_*, OFF for none */
	char *dir;			/* armed */
	bool busy;			/* a dumped run is in flight */
	/* The dumped run's, latched at its begin: */
	struct dump_device *d;
	char *run_dir;
	uint32_t run_level;
	uint32_t first_lane, nlanes;	/* lanes bound: first_lane.. */
	pthread_mutex_t lane_mu[SCHED_DUMP_MAX_LANES];	/* one producer */
	/*
	 * The dumped run's id, 0 for none: stored (release) at its begin
	 * before its orchestration function submits a task, so any thread
	 * that pops one of its tasks (through sched_mu) sees it; cleared at
	 * its end, when none of its captures is in flight.
	 */
	_Atomic uint64_t run;
};

struct sched_backend {
	struct pto_dev *dev;
	unsigned int dev_index;		/* N of /dev/ptoN: thread names */
	struct pto_orch *orch;
	struct pto_sched_config cfg;
	uint64_t clusters;		/* every claimed and acquired cluster */
	unsigned int nthreads;
	struct sched_thread *threads;
	unsigned int nsubs;
	struct sched_sub *subs;
	struct orch_host_pool sub_pool;	/* what the SUB workers share */
	unsigned int nworkers;
	struct pto_worker_desc workers[SCHED_MAX_WORKERS];
	struct sched_worker wmap[SCHED_MAX_WORKERS];
	struct pto_bo *heap_bo[PTO_MAX_RING_DEPTH];
	atomic_int stop;
	atomic_int abort;	/* pto_orch_abort() was called (sched_abort) */
	struct sched_dump dump;
};

/*
 * Kernels that use no tensor address (noop, spin_ns, fault, hang): their
 * tensors only order tasks (the keys may be HOST addresses), so none reach
 * the core (payload.c) and submit takes tensors of any space for them
 * (orch_backend_ops.tensorless_kernels); every other kernel's tensors
 * must be GM. Test with orch_kernel_tensorless().
 */
#define SCHED_TENSORLESS_KERNELS					\
	(1ULL << PTO_FUNC_NOOP | 1ULL << PTO_FUNC_SPIN_NS |		\
	 1ULL << PTO_FUNC_FAULT | 1ULL << PTO_FUNC_HANG)

/*
 * payload.c: fill @p from the dispatch view; 0 or -errno + @msg. @dirty:
 * the tensor slots of @p that may be non-zero (SCHED_PAYLOAD_DIRTY_ALL for
 * a buffer of unknown content); updated for the next build into @p.
 */
int sched_build_payload(const struct orch_dispatch_view *v,
			struct pto_payload *p, uint8_t *dirty,
			char *msg, size_t len);

/* payload.c: @a's device descriptor (rank 0 as 1-D, zero strides as
 * row-major); 0 or -EINVAL + @msg. */
int sched_tensor_desc(const struct pto_arg_tensor *a,
		      struct pto_tensor_desc *t, char *msg, size_t len);

#define SCHED_DEFAULT_HEAP (16ULL << 20)
#define SCHED_DEFAULT_SPIN_US 50
#define SCHED_DEFAULT_WAKE_DELAY_US 20
#define SCHED_DEFAULT_SUB_THREADS 1

/*
 * Beyond the awake cap (sched_max_awake: on the mock, the thread's share
 * of the CPUs; on a device, every core) a parked core is still woken
 * every SCHED_CAPPED_WAKE_MULT x wake_delay_us, so work no awake core may
 * take (another kind, an exact target) waits but never starves.
 */
#define SCHED_CAPPED_WAKE_MULT 50
#define SCHED_CLOCK_STRIDE 16	/* see sched_dispatch() */
#define SCHED_CONSUME_STEPS 64	/* see sched_thread_main() */
#define SCHED_HUNGRY_STEPS 8	/* see sched_thread_main() */
#define SCHED_ABORT_RETRY_MS 10	/* see sched_thread_main() */

static inline uint64_t sched_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline void sched_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static inline void sched_ring_bit(uint64_t *ring, unsigned int core)
{
	ring[core / 64] |= 1ULL << (core % 64);
}

static inline void mask_set(struct sched_mask *m, unsigned int k)
{
	m->w[k / 64] |= 1ULL << (k % 64);
}

static inline void mask_clear(struct sched_mask *m, unsigned int k)
{
	m->w[k / 64] &= ~(1ULL << (k % 64));
}

/* No core in @m. */
#define SCHED_MASK_END (PTO_CORE_MASK_WORDS * 64U)

static inline bool mask_empty(const struct sched_mask *m)
{
	unsigned int wi;

	for (wi = 0; wi < PTO_CORE_MASK_WORDS; wi++)
		if (m->w[wi])
			return false;
	return true;
}

/*
 * Do @a and @b hold at least @n cores between them? Counts only up to @n
 * (the awake cap, often 1): a popcount is a libgcc call on the baseline
 * x86-64 the library is built for (no POPCNT).
 */
static inline bool mask_at_least(const struct sched_mask *a,
				 const struct sched_mask *b, unsigned int n)
{
	unsigned int wi;

	for (wi = 0; wi < PTO_CORE_MASK_WORDS && n; wi++) {
		uint64_t x = a->w[wi] | b->w[wi];

		for (; x && n; n--)
			x &= x - 1;
	}
	return !n;
}

/* Take the lowest core out of @m; SCHED_MASK_END if none. */
static inline unsigned int mask_take(struct sched_mask *m)
{
	unsigned int wi;

	for (wi = 0; wi < PTO_CORE_MASK_WORDS; wi++)
		if (m->w[wi]) {
			unsigned int k = (unsigned int)__builtin_ctzll(m->w[wi]);

			m->w[wi] &= m->w[wi] - 1;
			return wi * 64 + k;
		}
	return SCHED_MASK_END;
}

/*
 * Every core of @m at the start, lowest first: the loop walks a copy, so
 * the body may change @m itself (a dispatch sets busy, a reap clears it);
 * a core it adds is not visited in this walk. Taking the lowest bit of a
 * copy is cheaper than searching the mask from @k on each time.
 */
#define for_each_core_in(k, m)						\
	for (struct sched_mask _walk = *(m);				\
	     ((k) = mask_take(&_walk)) != SCHED_MASK_END;)

/* The start of an aborted task's pto_run_error() (pto_run_error(3)). */
#define SCHED_ABORT_MSG "orchestrator aborted (pto_orch_abort)"

/* sched.c: the loop. */
extern _Thread_local struct sched_thread *sched_self;
void sched_post(struct sched_core *c, const struct orch_dispatch *d,
		int mix, uint64_t *ring);
int sched_task_end(struct sched_thread *t, const struct sched_core *c,
		   uint32_t status, char *msg, size_t len);
void *sched_thread_main(void *arg);
/* sched_mix.c */
void sched_want_mix(struct sched_cluster *cl);
void sched_mix_done(struct sched_backend *be, struct sched_cluster *cl,
		    int err, const char *msg);
int sched_try_mix(struct sched_backend *be, struct sched_cluster *cl,
		  uint64_t *ring);
/* sched_sub.c */
int sched_sub_init(struct sched_backend *be, unsigned int n);
int sched_sub_start(struct sched_backend *be);
void sched_sub_kick(struct sched_sub *w);
void sched_sub_wake_all(struct sched_backend *be);
int sched_sub_join(struct sched_backend *be, const struct timespec *deadline);
void sched_sub_free(struct sched_backend *be);
/* sched_create.c: @o's backend, NULL if @o is not on a device. */
struct sched_backend *sched_backend_of(pto_orch *o);
/* sched_dump.c: the args dump on this route (Documentation/dump.md). */
void sched_dump_init(struct sched_backend *be);
void sched_dump_fini(struct sched_backend *be);
int sched_dump_run_begin(void *p, uint64_t run_id, char *msg, size_t len);
void sched_dump_run_end(void *p, uint64_t run_id);
void sched_dump_task(struct sched_thread *t, const struct orch_dispatch *d,
		     unsigned int stage, bool mix);
/* orch_backend_ops.task_members_done: an SPMD or group task's outputs. */
void sched_dump_members_done(void *p, const struct orch_dispatch *d, int err);
/*
 * Capture task @d's arguments of @stage (PTO_DUMP_BEFORE_DISPATCH: before
 * its payload is written; _AFTER_COMPLETION: before its completion is
 * handed back) if a dumped run is in flight. Dump off: one relaxed load
 * and a branch.
 */
static inline void sched_dump_maybe(struct sched_thread *t,
				    const struct orch_dispatch *d,
				    unsigned int stage, bool mix)
{
	if (__builtin_expect(atomic_load_explicit(&t->be->dump.run,
						  memory_order_relaxed) != 0, 0))
		sched_dump_task(t, d, stage, mix);
}
/* sched_stop.c */
int sched_retire(struct sched_thread *t);
bool sched_abort_cores(struct sched_thread *t);
int sched_abort_step(struct sched_thread *t);
int sched_stop(void *p, const struct timespec *deadline);
void sched_abort(void *p);

#endif
