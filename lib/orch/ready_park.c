// SPDX-License-Identifier: MIT
/* Parking: the idle workers' hunger marks, the asymmetric barrier and the
 * steal of the pending list before a sleep. */
#include <stdatomic.h>
#include <unistd.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include "orch/ready_impl.h"

/* Declared, and its use explained, in ready_impl.h. */
_Atomic bool orch_membarrier_broken;

/* A worker of @kind is idle and may park: orch_ready_defer flushes kind
 * work at once from now on. */
static void mark_hungry(struct pto_orch *o, uint32_t kind)
{
	uint32_t bit = 1u << kind;

	/* Relaxed: ordering against the list is orch_heavy_barrier's job
	 * (orch_ready_pop_parking); elsewhere the bit is a hint. */
	if (!(atomic_load_explicit(&o->rq_hungry, memory_order_relaxed) & bit))
		atomic_fetch_or_explicit(&o->rq_hungry, bit, memory_order_relaxed);
}

/*
 * Asymmetric fence: membarrier(2) PRIVATE_EXPEDITED runs a full memory
 * barrier on every CPU running a thread of this process before it
 * returns (a descheduled thread passed one when it was switched out).
 * It needs the process registered: done at every threaded in-process
 * create (cheap, idempotent, and a forked child's own mm registers when
 * it creates one); without it that orchestrator does not batch.
 * membarrier_ok only ever goes from false to true.
 */
static _Atomic bool membarrier_ok;

bool orch_heavy_barrier_init(void)
{
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
		    0, 0))
		return false;
	atomic_store_explicit(&membarrier_ok, true, memory_order_relaxed);
	return true;
}

void orch_heavy_barrier(void)
{
	if (atomic_load_explicit(&membarrier_ok, memory_order_relaxed) &&
	    !syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0))
		return;
	if (atomic_load_explicit(&membarrier_ok, memory_order_relaxed))
		atomic_store_explicit(&orch_membarrier_broken, true,
				      memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);	/* no batching */
}

/* Worker @widx has been idle for a while (in-process backend's spin). */
void orch_ready_hungry(struct pto_orch *o, int32_t widx)
{
	mark_hungry(o, o->workers[widx].kind);
}

/* A scheduler thread serving workers of @kinds has been idle a while. */
void orch_ready_hungry_kinds(struct pto_orch *o, uint32_t kinds)
{
	uint32_t k;

	for (k = ORCH_KIND_FIRST; k < ORCH_KIND_NR; k++)
		if (kinds & (1u << k))
			mark_hungry(o, k);
}

/*
 * The other side of orch_ready_defer's check, for a thread about to
 * sleep that serves workers of @kinds: the bits, then (@heavy) the
 * barrier; the caller then steals the list under sched_mu. The barrier
 * (membarrier(2), an IPI to the orch thread's CPU) is dear, so a first
 * sleep is light: no barrier, bounded by ORCH_LIGHT_SLEEP_NS. Only one
 * that timed out is followed by a heavy, unbounded one; a light sleep
 * can miss an append only for that long.
 */
static void before_sleep(struct pto_orch *o, uint32_t kinds, bool heavy)
{
	orch_ready_hungry_kinds(o, kinds);
	if (!heavy)
		return;
#ifdef PTO_TEST_HOOKS
	atomic_fetch_add_explicit(&o->heavy_sleeps, 1, memory_order_relaxed);
#endif
	orch_heavy_barrier();
}

#ifdef PTO_TEST_HOOKS
uint64_t orch_heavy_sleeps(struct pto_orch *o)
{
	return atomic_load_explicit(&o->heavy_sleeps, memory_order_relaxed);
}
#endif

/*
 * orch_ready_pop for a worker about to park (in-process backend, after
 * storing parked): with its queues empty it also takes the orch thread's
 * pending READY slots; @heavy: see before_sleep. Only here for
 * one-thread-per-worker backends: a worker that stole on every empty pop
 * would take each deferred slot as it is appended, and the batching would
 * save nothing. Server threads steal at every empty pop (orch_ready_steal).
 */
int orch_ready_pop_parking(struct pto_orch *o, int32_t widx,
			   struct orch_dispatch *d, bool heavy)
{
	int n;

	before_sleep(o, 1u << o->workers[widx].kind, heavy);
	orch_lock(&o->sched_mu);
	n = orch_ready_pop_locked(o, widx, d, true);
	orch_unlock(&o->sched_mu);
	return n;
}

/*
 * Server backends (kick_wakes_server: the device's scheduler threads)
 * take the pending list at every pop that finds their worker's queues
 * empty (no barrier: latency) and here, before they sleep (bits, barrier
 * if @heavy, then the whole list, whichever worker it is for: liveness).
 * A deferred slot was appended either before the sleeper's barrier (its
 * steal takes it) or after it (the append sees the bit and flushes).
 */
bool orch_ready_steal(struct pto_orch *o, uint32_t kinds, bool heavy)
{
	bool any;

	before_sleep(o, kinds, heavy);
	if (!atomic_load_explicit(&o->pend_first, memory_order_acquire))
		return false;	/* orch_steal_pending_locked's check, without the lock */
	orch_lock(&o->sched_mu);
	any = orch_steal_pending_locked(o);
	orch_unlock(&o->sched_mu);
	return any;
}
