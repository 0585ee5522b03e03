/* SPDX-License-Identifier: MIT */
/*
 * The orchestrator object and the inline helpers that reach into it.
 * Internal symbols of lib/orch/ carry the orch_ prefix.
 */
#ifndef PTO_ORCH_ORCH_H
#define PTO_ORCH_ORCH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <pto/orch.h>
#include "orch/backend.h"
#include "orch/failpoint.h"
#include "orch/lock.h"
#include "orch/ready.h"
#include "orch/ring.h"
#include "orch/run.h"
#include "orch/scope.h"
#include "orch/slot.h"
#include "orch/slot_store.h"
#include "orch/tensormap.h"
#include "trace/trace.h"

struct pto_orch {
	struct pto_orch_config cfg;
	/* The run trace (cfg.trace_bytes), and the orch thread's buffer,
	 * made trace_self around each orchestration function. NULL: off. */
	struct trace *trace;
	struct trace_buf *trace_orch;
	/* Runs started while set are recorded (pto_orch_trace_enable);
	 * written by the orch thread, read by the scheduler threads for
	 * their phases (relaxed: a phase record is not ordered with it). */
	_Atomic bool trace_enabled;
	const struct orch_backend_ops *ops;
	void *be;		/* backend private */
	/* Device tag of the heap rings' GM (orch_heap.dev): submit refuses a
	 * GM tensor tagged with another device. 0: no device (in-process). */
	uint32_t gm_dev;
	/*
	 * Bit s: a tensor of space s is refused at submit unless the task's
	 * kernel is in @tensorless_kernels (the backend's
	 * kernels_need_heap_space: every space but the heap's). 0: any
	 * space is taken (in-process).
	 */
	uint32_t kernel_bad_spaces;
	uint64_t tensorless_kernels;
	/* The backend's host_callbacks: every task needs pto_callable.fn. */
	bool host_callbacks;

	struct orch_slot_store store;
	struct orch_ring rings[PTO_MAX_RING_DEPTH];
	struct orch_tensormap tm;
	struct orch_scope scope;
	_Atomic uint64_t next_task_id;

	/* Workers and ready queues (ready.c), under sched_mu. Own cache
	 * line: idle workers poll rq_gen while the orch thread locks. */
	struct orch_lock sched_mu __attribute__((aligned(64)));
	struct orch_worker *workers;
	uint32_t nworkers;
	uint32_t kind_workers[ORCH_KIND_NR];	/* workers of each kind (fixed) */
	struct orch_rq kind_rq[ORCH_KIND_NR];
	struct orch_rq group_rq;
	/* Bumped after every enqueue, so idle workers can spin on one word
	 * instead of the lock. */
	_Atomic uint64_t rq_gen __attribute__((aligned(64)));
	char rq_gen_pad[56];
	/* Entries a pop could take (ready.c, orch_ready_any_kind): linked in
	 * the FIFO of kind k (rq_queued_kind[k]); linked in an exact or the
	 * group FIFO, or assigned (rq_queued_other). Written under sched_mu,
	 * read without it. Their own line: every pop writes one, and idle
	 * in-process workers spin on rq_gen's. */
	_Atomic uint32_t rq_queued_kind[ORCH_KIND_NR] __attribute__((aligned(64)));
	_Atomic uint32_t rq_queued_other;
	char rq_queued_pad[64 - (ORCH_KIND_NR + 1) * sizeof(uint32_t)];
	/* One bit per worker kind: a worker of the kind is idle (spinning a
	 * while, or parking). Set by workers, cleared by the flush or steal
	 * that routes work of the kind, read by the orch thread at every
	 * deferred publication (ready.c, orch_ready_defer). Its own line
	 * with the list's head and cursor, all written rarely, so the orch
	 * thread's per-publication read stays a cache hit. */
	_Atomic uint32_t rq_hungry __attribute__((aligned(64)));
	/* The pending list (orch_ready_defer): head and cursor. pend_first
	 * is stored by the orch thread, read by stealers under sched_mu;
	 * pend_taken is written under sched_mu (read without it by
	 * orch_ready_any_kind, a hint). */
	struct orch_slot *_Atomic pend_first;
	struct orch_slot *_Atomic pend_taken;
	char pend_pad[40];
	/* Orch thread only: the list's tail, the task id its first entry
	 * was claimed with, and the batch size (1: no deferral; set by the
	 * threaded in-process and the device backends). */
	struct orch_slot *pend_tail;
	uint64_t pend_tid0;
	uint32_t ready_batch;
#ifdef PTO_TEST_HOOKS
	/* Sleeps that paid the barrier (ready_park.c, before_sleep). */
	_Atomic uint64_t heavy_sleeps;
#endif

	/* Runs (run.c), under runs_mu. */
	pthread_mutex_t runs_mu;
	pthread_cond_t runs_cv;
	struct pto_run *runs;	/* live (not yet released by the runtime) */
	uint32_t runs_in_flight;/* leases held */
	uint32_t runs_alive;	/* allocated, not yet freed (destroy, tests) */
	pid_t owner_pid;	/* the creator: a forked child's copy is inert */
	bool closing, closed;
	/* A close is stopping the backend (orch.c): another close waits. */
	bool stopping;
	/*
	 * pto_orch_abort() was called: the run being built takes no further
	 * submit (building_run()). Stored by the aborting thread, loaded
	 * (relaxed) by the orch thread at each submit: it only has to be
	 * seen eventually, and a submit that misses it still fails its task
	 * when an aborted scheduler thread pops it.
	 */
	atomic_bool aborted;
	struct pto_run *building;	/* orch thread only */

	/* Submit scratch (orch thread). */
	struct orch_dep_scratch {
		struct orch_slot *s;
		uint64_t tid;
		bool retain;
	} *deps;
	uint32_t ndeps, cap_deps;

	char errmsg[ORCH_MSG_LEN];	/* last construction error */

#ifdef PTO_TEST_HOOKS
	/* Set with orch_set_fail_hook(), possibly while the backend's
	 * threads run. */
	_Atomic(orch_fail_hook_fn) fail_hook;
	void *fail_ctx;
#endif
};

#ifdef PTO_TEST_HOOKS
static inline int orch_may_fail(struct pto_orch *o, int fp,
				struct orch_slot *s)
{
	/* Acquire: pairs with orch_set_fail_hook()'s release, so the hook
	 * is called with its own ctx (a plain load on x86). */
	orch_fail_hook_fn h = atomic_load_explicit(&o->fail_hook,
						   memory_order_acquire);

	if (__builtin_expect(h == NULL, 1))
		return 0;
	return h(o->fail_ctx, o, fp, s);
}
#else
/* No hook: never fails, and leaves no trace in the library. */
#define orch_may_fail(o, fp, s) ({ (void)(o); (void)(fp); (void)(s); 0; })
#endif

/*
 * Is this a process other than the orchestrator's creator (a fork)? Then
 * no call may touch a lock of @o: it may be a copy of one a worker or
 * scheduler thread of the parent held at the fork (pto_orch_close(3)).
 * Inline, a plain load where no fork happened: the run polls and every
 * submit ask, and glibc's getpid() is a system call, asked once per fork
 * instead. A child's own orchestrators have its pid.
 */
static inline bool orch_forked(const struct pto_orch *o)
{
	return __builtin_expect(orch_forked_child, 0) &&
	       orch_child_pid != o->owner_pid;
}

#ifdef PTO_TEST_HOOKS
/*
 * Install (or, with NULL, remove) a test's fail hook. Its ctx is stored
 * first and the hook published with release: a thread that sees the new
 * hook sees its ctx. Removing it leaves ctx for a call already past the
 * load; a test keeps ctx alive until its threads are quiet.
 */
static inline void orch_set_fail_hook(struct pto_orch *o, orch_fail_hook_fn h,
				      void *ctx)
{
	if (h)
		o->fail_ctx = ctx;
	atomic_store_explicit(&o->fail_hook, h, memory_order_release);
}
#endif

/*
 * Register @s in the innermost frame. Idempotent per slot per level: a
 * second registration of the same slot at the same level is a no-op (the
 * slot is always the newest entry when that could happen). Fallible: the
 * frame may grow; the caller charges the reference only after success.
 * Inline, and a frame with room is all it looks at: every submit runs it
 * (as a call, a good part of a submit's cost).
 */
static inline int orch_scope_register(struct pto_orch *o, struct orch_slot *s)
{
	struct orch_scope_frame *f;

	if (__builtin_expect(!o->scope.depth, 0))
		return orch_scope_register_slow(o, s);
	f = &o->scope.frames[o->scope.depth - 1];
	if (f->n && f->refs[f->n - 1].s == s && f->refs[f->n - 1].tid == s->task_id)
		return 0;
	if (__builtin_expect(f->n == f->cap, 0))
		return orch_scope_register_slow(o, s);
	f->refs[f->n].s = s;
	f->refs[f->n].tid = s->task_id;
	f->n++;
	s->scope_depth = (uint8_t)o->scope.depth;
	return 0;
}

/* Caller holds tm.mu. Inline: the submit path looks up every INPUT and
 * INOUT tensor, and the call would cost more than the lookup. */
static inline struct orch_slotref
orch_tm_lookup_locked(struct pto_orch *o, const struct orch_key *k)
{
	struct orch_tensormap *tm = &o->tm;
	uint64_t h = orch_tm_hash(k);
	struct orch_slotref v = { NULL, 0 };
	struct orch_tm_node *n;

	for (n = tm->buckets[h & (tm->nbuckets - 1)]; n; n = n->next)
		if (orch_tm_key_eq(&n->key, k)) {
			v = n->val;
			break;
		}
	return v;
}

/* Record a construction error message on the orchestrator. */
int orch_error(struct pto_orch *o, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Grow an array to hold @need elements (consults the fail hook). The
 * check that there is room already is inline: it is what every submit
 * hits, several times. */
int orch_grow_slow(struct pto_orch *o, int fp, struct orch_slot *s, void **arr,
		   uint32_t *cap, uint32_t need, size_t elem);
static inline int orch_grow(struct pto_orch *o, int fp, struct orch_slot *s,
			    void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
	if (__builtin_expect(need <= *cap, 1))
		return 0;
	return orch_grow_slow(o, fp, s, arr, cap, need, elem);
}
/* orch_grow for an array whose first storage may be @inl (inline in a
 * slot): that one is copied to the heap, never realloc'd or freed. */
int orch_grow_inl_slow(struct pto_orch *o, int fp, struct orch_slot *s,
		       void **arr, uint32_t *cap, uint32_t need, size_t elem,
		       const void *inl);
static inline int orch_grow_inl(struct pto_orch *o, int fp, struct orch_slot *s,
				void **arr, uint32_t *cap, uint32_t need,
				size_t elem, const void *inl)
{
	if (__builtin_expect(need <= *cap, 1))
		return 0;
	return orch_grow_inl_slow(o, fp, s, arr, cap, need, elem, inl);
}
void orch_fork_hygiene_once(void);
void orch_mutex_init(pthread_mutex_t *mu);

#endif
