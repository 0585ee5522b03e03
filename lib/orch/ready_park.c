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

	for (k = 0; k < PTO_WK_NR; k++)
		if (kinds & (1u << k))
			mark_hungry(o, k);
}

/*
 * The other side of orch_ready_defer's check, for a thread about to
 * sleep that serves workers of @kinds: the bits, then (@heavy) the
 * barrier; the caller then reads the list (steals) under sched_mu.
 *
 * Light and heavy sleeps. The barrier is what makes an indefinite sleep
 * safe against an append still in the orch thread's store buffer, and
 * it is dear: membarrier(2) interrupts every CPU running a thread of
 * the process - the orch thread's above all - and an IPI into a guest
 * costs its receiver microseconds (a large share of the submitting
 * thread's time while workers that outpace it park after every burst). So a thread's first sleep
 * of an idle period is light: the bits and the steal without the
 * barrier, and a sleep bounded by ORCH_LIGHT_SLEEP_NS. Only a light
 * sleep that ends by its timeout (no kick, no completion came) is
 * followed by a heavy one: the full protocol, then a sleep without
 * bound. Liveness: the only thing a light sleep can miss is an append
 * the barrier would have shown (or whose hunger check missed our bit),
 * and that waits at most ORCH_LIGHT_SLEEP_NS, until the heavy pass
 * takes it. A thread woken by a kick starts light again, so a busy
 * run's parks cost no barrier at all, and an idle worker pays one, a
 * millisecond into its idleness.
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
 * pending READY slots (orch_steal_pending_locked); @heavy: see before_sleep. Only
 * here for one-thread-per-worker backends: a worker that stole on every
 * empty pop would take each deferred slot as it is appended, and the
 * batching would save nothing while workers are ahead of the orch thread
 * A server thread (the
 * device's) does steal on an empty pop (orch_ready_pop,
 * orch_member_done_pop): see orch_ready_steal.
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
 * Server backends (kick_wakes_server: the device's scheduler threads,
 * each serving many workers). A server takes the pending list in two
 * ways:
 *  - opportunistically, at every pop that finds its worker's queues
 *    empty (pop_locked's steal, no barrier): an awake server with a core
 *    free takes deferred work even while it never idles (a busy thread
 *    running a chain of completions would otherwise leave a deferred
 *    task of another kind for as long as it stays busy). It moves the
 *    routing from the orch thread to the server, which is idle then;
 *    deferred appends bump no generation, so an idle server does not
 *    pop for them: its hunger mark does that (sched.c);
 *  - here, before it sleeps: the other side of orch_ready_defer's check,
 *    for every kind the thread serves (bits, barrier if @heavy - see
 *    before_sleep - and the list), then the
 *    whole list is routed, whichever worker it is for; the kicks wake
 *    this thread or the one owning a target, so it does not sleep on
 *    them.
 * Liveness while the orch thread never comes back (a long computation in
 * the orchestration function): every server thread calls this before it
 * sleeps, and it routes the whole list, whatever its kinds; a deferred
 * slot was appended either before that thread's barrier (its steal takes
 * it) or after it (the append sees the bit and flushes, which kicks).
 * With the orch thread away the routed work is finite, so a thread that
 * is awake goes idle and comes here eventually. Latency, not liveness,
 * is what the pop-time steal is for; its bound is one task: a core with
 * a free pending slot takes a stolen task behind its running one, and
 * the routing's kick goes to the first worker of the kind with room
 * (kick_kind), which may be that core rather than an idle one of a
 * sleeping thread.
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
