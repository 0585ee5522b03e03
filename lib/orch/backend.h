/* SPDX-License-Identifier: MIT */
/*
 * The worker-backend interface: what the orchestrator needs from whatever runs
 * tasks, and the steps a backend (in-process threads, the device scheduler)
 * drives the DAG through; the whole of lib/orch/ that lib/sched/ uses. A
 * backend never touches slot state itself: 1. orch_ready_pop() claims a task
 * for an idle worker, 2. orch_dispatch_view() gives its arguments, 3. the
 * backend runs it, 4. orch_member_done() (or its _pop / _keep variants)
 * completes it. The slot stays valid from 1 until 4 returns. Threads
 * that run host callbacks are host workers (host_worker.h).
 */
#ifndef PTO_ORCH_BACKEND_H
#define PTO_ORCH_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <pto/orch.h>
#include "orch/host_worker.h"
#include "orch/once.h"

struct pto_orch;
struct orch_slot;

/* A heap ring's memory, provided by the backend. Auto-allocated OUTPUTs
 * and alloc() slabs are carved from it; their tensors get
 * data = base + off and the heap's space, and, for a non-HOST space,
 * obj / offset / dev = obj, obj_off + off, dev, so their dependency keys
 * are (space, obj, offset) (the device tag is not in a key); obj / offset
 * / dev are 0 for a HOST heap (submit.c, heap_tensor). */
struct orch_heap {
	void *base;
	uint64_t size;
	uint32_t space;		/* enum pto_space */
	uint32_t dev;		/* device tag (pto_tensor.dev) of obj; 0: none */
	uint64_t obj;		/* buffer object id (non-HOST) */
	uint64_t obj_off;	/* offset of base inside obj */
};

/* One unit of dispatch: a member of a slot on a worker. */
struct orch_dispatch {
	struct orch_slot *slot;
	uint64_t task_id;
	uint32_t member;
	int32_t widx;		/* worker index (orch->workers[widx]) */
};

/*
 * What a task keeps of its struct pto_call_config: the fields, not the
 * reserved words (zero, checked at submit), which would only widen the
 * slot's hot part. A field added to the public struct is added here.
 */
struct orch_call_cfg {
	uint32_t flags;
};

struct orch_dispatch_view {
	const struct pto_callable *callable;
	const struct orch_call_cfg *cfg;
	const struct pto_arg_tensor *tensors;
	const uint64_t *scalars;
	const uint8_t *scalar_dump;
	uint32_t ntensors, nscalars;
	uint32_t member, nmembers;
	bool shared;		/* SPMD: every member has member 0's args */
	uint64_t task_id;
	uint64_t run_id;
	bool traced;		/* its run is recorded (trace_self_if()) */
};

struct orch_backend_ops {
	const char *name;
	/* Map heap ring @ring of @size bytes. Called at create, before any
	 * worker thread starts (and so before any fork a backend does). */
	int (*heap_map)(void *be, int ring, uint64_t size, struct orch_heap *out);
	void (*heap_unmap)(void *be, int ring, struct orch_heap *h);
	/*
	 * Start / stop the threads. stop joins, once every run drained, by
	 * close's @deadline (CLOCK_MONOTONIC): -ETIMEDOUT leaves the rest told
	 * to stop, and close's retry joins them; 0 when all were joined. Never
	 * called twice at once, but abort() may run beside it.
	 */
	int (*start)(void *be, struct pto_orch *o);
	int (*stop)(void *be, const struct timespec *deadline);
	/*
	 * Optional (NULL: pto_orch_abort() is -EOPNOTSUPP): end every task now
	 * without waiting. Called with the orchestrator closing, on any
	 * thread, concurrently with itself and with stop(), also after stop
	 * returned (then harmless). Does not block; afterwards every member in
	 * flight ends soon and every later pop ends at once with an error, so
	 * every run drains, failed.
	 */
	void (*abort)(void *be);
	/* Work may be available for worker @widx (exact FIFO, a group
	 * member assigned to it), or for any worker of @kind (widx = -1).
	 * Called with sched_mu held: must not call back into the
	 * orchestrator nor block; should make no system call unless the
	 * worker is parked. */
	void (*kick)(void *be, int32_t widx, uint32_t kind);
	/* kick() wakes a thread that serves many workers and looks at every
	 * queue its workers may take from (the device's scheduler threads),
	 * not one worker: any routing of a kind feeds it (ready.c). */
	bool kick_wakes_server;
	/* With kick_wakes_server: the kinds (bit per kind) whose workers
	 * are threads of their own all the same, each woken by its own
	 * kick and parked as the in-process ones (the device's SUB workers). */
	uint32_t own_thread_kinds;
	/* Optional: may a group run on worker indices @widx[0..n)? (A device
	 * backend keeps a group inside one scheduler thread's partition.)
	 * 0, or -errno with a reason in @msg. Called at submit, before any
	 * dependency inference; must not call back into the orchestrator. */
	int (*check_group)(void *be, const int32_t *widx, uint32_t n,
			   char *msg, size_t len);
	/*
	 * The workers run kernels (pto_callable.kernel_id) that can address
	 * tensors in the heap rings' space only (a device's GM). Submit then
	 * refuses a tensor of another space (-EINVAL) unless the task's
	 * kernel is one of @tensorless_kernels: a kernel that reads no
	 * tensor, whose tensors only order tasks (orch_kernel_tensorless).
	 * Auto-allocated OUTPUTs are carved from the heap, so never refused.
	 * Read once, at create.
	 */
	bool kernels_need_heap_space;
	uint64_t tensorless_kernels;	/* bit k: kernel id k (< 64) */
	/*
	 * Every worker runs the task's host callback (pto_callable.fn), as
	 * the in-process threads do: submit refuses a callable without one
	 * (-EINVAL), whatever the worker kind and the submit. Otherwise only
	 * tasks for workers of @callback_kinds need one. Read once, at
	 * create.
	 */
	bool host_callbacks;
	/* Kinds (bit per kind) whose workers run host callbacks on a
	 * backend without host_callbacks (the device's SUB workers; its
	 * AIC / AIV / MIX ones run kernel_id): a task for one needs fn, and
	 * may take tensors of any space (kernels_need_heap_space is the
	 * kernels'). */
	uint32_t callback_kinds;
	/*
	 * Optional: run @run_id begins (pto_run_start, on the orch thread,
	 * before its orchestration function, so before any of its tasks is
	 * dispatched) and ends (the thread that finishes it, before its
	 * waiters see it done; no lock of the orchestrator held). A begin's
	 * error fails the run as a construction error with @msg. The
	 * device's args dump (lib/sched/sched_dump.c).
	 */
	int (*run_begin)(void *be, uint64_t run_id, char *msg, size_t len);
	void (*run_end)(void *be, uint64_t run_id);
	/*
	 * Optional: the last member of a task with several (SPMD blocks, a
	 * group) finished, on that member's thread, before any successor is
	 * released: the args dump's one AFTER_COMPLETION capture per task.
	 * @err: the task's (its first failing member's) error.
	 */
	void (*task_members_done)(void *be, const struct orch_dispatch *d,
				  int err);
	/* Free the backend (after stop / heap_unmap). */
	void (*destroy)(void *be);
};

/* Does kernel @id use no tensor address, by the backend's mask @tensorless
 * (orch_backend_ops.tensorless_kernels)? Ids of 64 and up never do. */
static inline bool orch_kernel_tensorless(uint64_t tensorless, uint64_t id)
{
	return id < 64 && (tensorless >> id & 1);
}

/* Are the @size bytes of words at @w all zero (a public struct's
 * reserved space: orch_reserved_zero(x->reserved, sizeof(x->reserved)))? */
static inline bool orch_reserved_zero(const uint64_t *w, size_t size)
{
	size_t i;

	for (i = 0; i < size / sizeof(*w); i++)
		if (w[i])
			return false;
	return true;
}

/*
 * The public creates' first check, before anything is set up: -EINVAL if a
 * reserved word of @cfg (NULL: none) is not zero or its task_window is above
 * PTO_MAX_TASK_WINDOW, or, with @workers, if the worker set is bad: workers
 * NULL with nworkers set, or a worker with a reserved word set, a negative id,
 * an unknown kind or another worker's id (pto_orch_create_inproc(3)).
 */
int orch_config_check(const struct pto_orch_config *cfg, bool workers);

/* Create an orchestrator on an arbitrary backend (the in-process one is
 * pto_orch_create_inproc). Takes ownership of @be (ops->destroy). */
int orch_create(const struct pto_orch_config *cfg,
		const struct orch_backend_ops *ops, void *be,
		struct pto_orch **out);
/* The backend private pointer of @o if @o runs on @ops, else NULL. */
void *orch_backend_of(struct pto_orch *o, const struct orch_backend_ops *ops);

/*
 * Step 1: claim the next task idle worker @widx may run: its assigned group
 * member, the group FIFO's head if every target is idle (a head naming @widx
 * that cannot start reserves it), its exact FIFO, its kind's FIFO. Counts
 * against the worker's capacity (orch_set_worker_capacity). 1 with *d filled,
 * 0 when nothing. Any thread; one thread pops per worker.
 */
int orch_ready_pop(struct pto_orch *o, int32_t widx, struct orch_dispatch *d);
/*
 * Could a pop for a worker of @kind succeed (work of that kind, or exact,
 * group or assigned work of any worker; for a server, anything pending)?
 * A hint without the lock: false only if nothing was routed before the
 * last generation bump the caller acquire-loaded (orch_ready_gen) - so a
 * caller that skips its pops on false and looks again at the next
 * generation misses nothing. Thread safety: any thread.
 */
bool orch_ready_any_kind(struct pto_orch *o, uint32_t kind);
/* Members worker @widx may hold at once (default 1). Thread safety: any
 * thread; meant for backend start(). */
void orch_set_worker_capacity(struct pto_orch *o, int32_t widx, uint32_t cap);
void orch_dispatch_view(const struct orch_dispatch *d,
			struct orch_dispatch_view *v);
/* Member @m's view of @d's task (orch_dispatch_view of another member). */
void orch_dispatch_member_view(const struct orch_dispatch *d, uint32_t m,
			       struct orch_dispatch_view *v);
/*
 * The gate of @d's task for work done once before any of its members
 * runs (once.h), between steps 1 and 3 of any member. Thread safety:
 * any thread.
 */
struct orch_once *orch_dispatch_once(const struct orch_dispatch *d);
/* Step 4: see above. @msg may be NULL. Thread safety: any thread. */
void orch_member_done(struct pto_orch *o, const struct orch_dispatch *d,
		      int err, const char *msg);
/* Step 4 and the worker's next step 1 in one: returns like
 * orch_ready_pop for d->widx. Thread safety: any thread. */
int orch_member_done_pop(struct pto_orch *o, const struct orch_dispatch *d,
			 int err, const char *msg, struct orch_dispatch *next);
/*
 * Step 4 for a member whose worker the caller completes another member of
 * next, on the same thread (a device core's two tasks found done in one
 * reap): the outcome and the slot's completion, but the worker stays
 * loaded. That next call must be one of the two below with @kept = the
 * number of orch_member_done_keep calls for the worker since its last
 * step 4; it makes the worker idle for all of them in one sched_mu hold.
 */
void orch_member_done_keep(struct pto_orch *o, const struct orch_dispatch *d,
			   int err, const char *msg);
void orch_member_done_kept(struct pto_orch *o, const struct orch_dispatch *d,
			   int err, const char *msg, uint32_t kept);
int orch_member_done_pop_kept(struct pto_orch *o, const struct orch_dispatch *d,
			      int err, const char *msg,
			      struct orch_dispatch *next, uint32_t kept);
/* orch_ready_pop for a worker of its own thread about to park: marks its
 * kind hungry, takes the pending list (@heavy: ready_park.c). */
int orch_ready_pop_parking(struct pto_orch *o, int32_t widx,
			   struct orch_dispatch *d, bool heavy);
/* The calling thread runs @o's host callbacks: their waits on @o are
 * -EDEADLK (run.c). Once, before the thread's first callback. */
void orch_worker_thread_enter(struct pto_orch *o);
/* Generation counter bumped by every enqueue: idle workers may spin on it
 * before parking (no lock, no system call). */
uint64_t orch_ready_gen(struct pto_orch *o);
uint32_t orch_nworkers(struct pto_orch *o);
/* The run trace, NULL when off; a backend's threads record into it. */
struct trace *orch_trace(struct pto_orch *o);
/* The run of a dispatched task, and whether it is recorded (for its
 * trace records: trace_self_if(orch_dispatch_traced(d))). */
uint64_t orch_dispatch_run_id(const struct orch_dispatch *d);
bool orch_dispatch_traced(const struct orch_dispatch *d);
/* Runs are being recorded (a scheduler thread's phases). */
bool orch_trace_enabled(struct pto_orch *o);
void orch_worker_info(struct pto_orch *o, int32_t widx, int32_t *id,
		      uint32_t *kind);

/*
 * For a backend whose threads each serve many workers (the device's
 * scheduler threads): batched publication, batched consumption and the
 * parking handshake with the orch thread (ready.c says why it is safe).
 */

/* Publications the orch thread defers before routing them in one
 * sched_mu hold (orch_set_ready_batch; 1: route each at once). */
#define ORCH_READY_BATCH 16
/* Set the batch; before the first run (at create). */
void orch_set_ready_batch(struct pto_orch *o, uint32_t n);
/* Register the process for the asymmetric barrier the deferred
 * publication needs; false: the orchestrator must not batch. */
bool orch_heavy_barrier_init(void);
/* The workers of @kinds (bit per kind) are idle: deferred work of those
 * kinds is routed at once from now on. */
void orch_ready_hungry_kinds(struct pto_orch *o, uint32_t kinds);
/*
 * A thread serving workers of @kinds is about to sleep: take the orch
 * thread's pending publications. Returns whether it routed work. A light
 * sleep (@heavy false) must end within ORCH_LIGHT_SLEEP_NS; only after
 * one that timed out may the thread sleep heavy, without bound.
 */
bool orch_ready_steal(struct pto_orch *o, uint32_t kinds, bool heavy);
#define ORCH_LIGHT_SLEEP_NS 1000000ULL

/*
 * Consumed slots whose cleanup (TensorMap erase, ring release, run
 * count) is done together by orch_consume_flush: one lock round trip of
 * each kind per batch instead of per slot.
 */
#define ORCH_CONSUME_BATCH 64
struct orch_consume_batch {
	uint32_t n;
	struct orch_slot *v[ORCH_CONSUME_BATCH];
};
void orch_consume_flush(struct pto_orch *o, struct orch_consume_batch *b);
/*
 * The calling thread's consume batch, or NULL: while one is set, the
 * consumptions the thread's completions cause are deferred into it and
 * the thread flushes it (lib/sched/sched.c says when, and why that keeps
 * back-pressure and run waits live).
 */
void orch_set_consume_batch(struct orch_consume_batch *b);

#ifdef PTO_TEST_HOOKS
/*
 * The tests' own entry points, built with PTO_TEST_HOOKS only (the
 * sanitizer builds and the selftests' archive). The in-process backend
 * without threads; tests pop and complete by hand
 * through the functions above.
 */
int orch_create_manual(const struct pto_orch_config *cfg,
		       struct pto_orch **out);
/* The same, posing as a backend whose kicks wake a server
 * thread (kick_wakes_server, as the device's scheduler threads). */
int orch_create_manual_server(const struct pto_orch_config *cfg,
			      struct pto_orch **out);
/* Kicks the manual backend has received so far. */
uint64_t orch_manual_kicks(struct pto_orch *o);
/* Heavy sleeps so far (ready.c, before_sleep). */
uint64_t orch_heavy_sleeps(struct pto_orch *o);
#endif
/* Run states allocated and not yet freed (run.c): pto_orch_destroy()
 * refuses while any is left, and tests. */
uint32_t orch_runs_alive(struct pto_orch *o);

#endif
