// SPDX-License-Identifier: MIT
/* Stop and abort: retiring a thread's cores, ending the tasks in flight
 * on them, and telling the threads to leave. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include "sched/sched.h"
#include "orch/backend.h"

/*
 * A thread leaving its dispatch loop retires the cores it owns, through
 * the kernel's one retirement protocol (CLOSE before return,
 * Documentation/mock-cores.md):
 * no completion latch, no other thread involved. A core that does not
 * answer within the kernel's deadline stays quarantined; the count is in
 * the statistics. A thread that never started leaves its cores to the
 * kernel's release of the file.
 */
int sched_retire(struct sched_thread *t)
{
	uint64_t mask[PTO_CORE_MASK_WORDS] = { 0 };
	struct pto_core_retire r;
	unsigned int k;
	int ret;

	for (k = 0; k < t->ncores; k++)
		sched_ring_bit(mask, t->cores[k].rc->index);
	ret = core_retire(t->be->dev, mask, &r);
	if (ret)
		return ret;
	atomic_store(&t->retired, r.retired);
	atomic_store(&t->retire_ns, r.elapsed_ns);
	atomic_store(&t->quarantined,
		     (uint64_t)(__builtin_popcountll(r.quarantined[0]) +
				__builtin_popcountll(r.quarantined[1])));
	return 0;
}

/*
 * pto_orch_abort() on the thread: retire its cores now, through the kernel's
 * retirement (the running task stops with PTO_TASK_ESTOP, a silent core is
 * quarantined), then end every id in flight once with core_rc_abandon() (the
 * ioctl's return orders the payload loads). Completed tasks keep their status,
 * stopped ones get -ECANCELED. False if the retirement failed (nothing
 * retired; retried SCHED_ABORT_RETRY_MS later).
 */
bool sched_abort_cores(struct sched_thread *t)
{
	struct sched_backend *be = t->be;
	struct core_done done[2];
	unsigned int k;

	/*
	 * Consumptions held back would hold up other runs for the
	 * retirement's duration (up to the driver's deadline).
	 */
	orch_consume_flush(be->orch, &t->consume);
	t->consume_steps = 0;
	if (sched_retire(t))
		return false;
	t->aborted = true;
	for_each_core_in(k, &t->busy) {
		struct sched_core *c = &t->cores[k];
		int i, n = core_rc_abandon(c->rc, done);

		for (i = 0; i < n; i++) {
			struct sched_slot *s = &c->slot[done[i].id & 1];
			char msg[128];
			int err = sched_task_end(t, c, done[i].status, msg,
						 sizeof(msg));

			if (s->mix)
				sched_mix_done(be, c->cl, err, msg);
			else
				orch_member_done(be->orch, &s->d, err,
						 err ? msg : NULL);
		}
		mask_clear(&t->busy, k);
	}
	return true;
}

/*
 * A step of an aborted thread: every task its workers may take is popped and
 * failed without touching a core (popping keeps the orchestrator's routing and
 * group rules). Returns the tasks failed.
 */
int sched_abort_step(struct sched_thread *t)
{
	struct sched_backend *be = t->be;
	struct orch_dispatch d;
	unsigned int k;
	int moved = 0;

	for (k = 0; k < t->ncores + t->nclusters; k++) {
		int32_t widx = k < t->ncores ? t->cores[k].widx :
			       t->cl[k - t->ncores].mix_widx;

		while (orch_ready_pop(be->orch, widx, &d)) {
			orch_member_done(be->orch, &d, -ECANCELED,
					 SCHED_ABORT_MSG ": task not started");
			moved++;
		}
	}
	return moved;
}

/*
 * Set @flag (stop, abort), then wake every started thread through its
 * eventfd, unconditionally: a thread that loads @flag 0 has the write
 * still to see (its poll() returns at once) or drained it after the
 * store, and looks at @flag again at its next step either way.
 */
static void sched_tell_all(struct sched_backend *be, atomic_int *flag)
{
	unsigned int i;
	uint64_t one = 1;

	atomic_store_explicit(flag, 1, memory_order_release);
	/* Under each one's mu, after the store: a SUB worker about to
	 * sleep sees @flag (stop) or the kick (abort: it pops again). */
	sched_sub_wake_all(be);
	for (i = 0; i < be->nthreads; i++) {
		struct sched_thread *t = &be->threads[i];

		if (atomic_load_explicit(&t->started, memory_order_relaxed) &&
		    write(t->evfd, &one, sizeof(one)) < 0) {
			/* eventfd writes of 1 cannot fail short of overflow */
		}
	}
}

/*
 * Every thread is told first, then joined: they retire their sets in
 * parallel (sched_retire()), so a core that does not answer holds the
 * stop for one retirement deadline, not one per thread. A thread still
 * retiring at @deadline is left to go on (it is joined by the next call):
 * the kernel quarantines its silent core at its own deadline, and the
 * statistics count it once the thread returned.
 */
int sched_stop(void *p, const struct timespec *deadline)
{
	struct sched_backend *be = p;
	unsigned int i;
	int err = 0;

	sched_tell_all(be, &be->stop);
	for (i = 0; i < be->nthreads; i++) {
		struct sched_thread *t = &be->threads[i];

		if (!atomic_load_explicit(&t->started, memory_order_relaxed))
			continue;
		if (deadline && pthread_clockjoin_np(t->tid, NULL,
						     CLOCK_MONOTONIC,
						     deadline) == ETIMEDOUT) {
			err = -ETIMEDOUT;
			continue;	/* the others may be done */
		}
		if (!deadline)
			pthread_join(t->tid, NULL);
		atomic_store_explicit(&t->started, 0, memory_order_relaxed);
	}
	/* Idle after the drain: they leave at once. */
	if (sched_sub_join(be, deadline))
		err = -ETIMEDOUT;
	return err;
}

/*
 * pto_orch_abort(): each thread retires its own cores at its next step
 * (sched_abort_cores) - the retirement stays with the thread that owns
 * the cores' in-flight state, as at stop. The eventfd write wakes a
 * sleeping thread; as in sched_stop(), unconditionally (once per call).
 * A SUB worker fails each task it pops from then on unrun (sched_sub.c);
 * a callback already running is not interrupted: its task ends when it
 * returns, with the callback's own result.
 */
void sched_abort(void *p)
{
	sched_tell_all(p, &((struct sched_backend *)p)->abort);
}
