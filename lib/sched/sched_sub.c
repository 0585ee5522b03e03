// SPDX-License-Identifier: MIT
/*
 * SUB workers on a device: host threads that run the host callbacks of
 * the DAG's SUB tasks beside the device's cores, host workers as the
 * in-process backend's are (orch/host_worker.h); after pto_orch_abort()
 * they fail each task they pop unrun. Documentation/orchestrator.md, "SUB
 * workers on a device".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sched/sched.h"

/* Pauses an idle worker spins on the ready generation before it parks:
 * a chain of callbacks goes on without a wake-up, and on a small machine
 * the scheduler threads keep their CPUs. */
#define SCHED_SUB_SPIN 500

/* kick() for SUB worker @w, with sched_mu held (backend.h). */
void sched_sub_kick(struct sched_sub *w)
{
	orch_host_worker_kick(&w->hw);
}

/* Wake every SUB worker, parked or not (stop, abort). */
void sched_sub_wake_all(struct sched_backend *be)
{
	unsigned int i;

	for (i = 0; i < be->nsubs; i++)
		orch_host_worker_wake(&be->subs[i].hw);
}

/* At create: @n workers, not started; their worker indices are set by
 * the caller (sched_create.c). */
int sched_sub_init(struct sched_backend *be, unsigned int n)
{
	unsigned int i;
	int ret;

	be->sub_pool = (struct orch_host_pool){
		.stop = &be->stop, .abort = &be->abort,
		.abort_msg = SCHED_ABORT_MSG, .spin = SCHED_SUB_SPIN };
	be->subs = aligned_alloc(64, sizeof(*be->subs) * n);
	if (!be->subs)
		return -ENOMEM;
	memset(be->subs, 0, sizeof(*be->subs) * n);
	for (i = 0; i < n; i++) {
		ret = orch_host_worker_init(&be->subs[i].hw, &be->sub_pool, -1, i);
		if (ret) {
			while (i--)
				orch_host_worker_fini(&be->subs[i].hw);
			free(be->subs);
			be->subs = NULL;
			return ret;
		}
	}
	be->nsubs = n;
	return 0;
}

/* Start every SUB worker ("pto0-sub1" in top and a debugger); on a
 * failure the ones started are stopped and joined again. */
int sched_sub_start(struct sched_backend *be)
{
	unsigned int i;

	be->sub_pool.o = be->orch;
	for (i = 0; i < be->nsubs; i++) {
		struct sched_sub *w = &be->subs[i];
		char name[16];
		int ret = pthread_create(&w->tid, NULL, orch_host_worker_main,
					 &w->hw);

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

	for (i = 0; i < be->nsubs; i++)
		orch_host_worker_fini(&be->subs[i].hw);
	free(be->subs);
	be->subs = NULL;
	be->nsubs = 0;
}
