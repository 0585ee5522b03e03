/* SPDX-License-Identifier: MIT */
/*
 * Host workers: threads running host callbacks from the ready queues,
 * the in-process backend's workers and a device's SUB workers alike. A
 * backend embeds one per worker, shares one pool, starts
 * orch_host_worker_main() on each and calls orch_host_worker_kick().
 */

/*
 * Parking: the worker stores @parked, then looks for work under sched_mu
 * (orch_ready_pop_parking); a kicker queues under sched_mu, then loads
 * @parked and only then takes @mu to set @kicked. The second critical
 * section sees the first's write: no lost wake-up. Lock order: sched_mu
 * before @mu; nothing takes sched_mu under @mu.
 */
#ifndef PTO_ORCH_HOST_WORKER_H
#define PTO_ORCH_HOST_WORKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct pto_orch;

/* What a backend's host workers share. */
struct orch_host_pool {
	struct pto_orch *o;
	atomic_int *stop;	/* the backend's: the loop ends once set */
	atomic_int *abort;	/* NULL, or set: tasks fail unrun */
	const char *abort_msg;	/* their message */
	/* Idle workers allowed to spin at once: one. On a small machine the
	 * orch thread needs a CPU more than a second spinner does. */
	atomic_int spinners;
	int spin;		/* pauses an idle period spins at most */
	int hungry;		/* pauses after which the worker says it is
				 * hungry (orch_ready_hungry); 0: never */
};

struct orch_host_worker {
	struct orch_host_pool *pool;
	int32_t widx;		/* its orchestrator worker index */
	uint32_t trace_index;	/* its row in the run trace */
	atomic_int parked;
	pthread_mutex_t mu;	/* protects @kicked */
	pthread_cond_t cv;
	bool kicked;
} __attribute__((aligned(64)));

int orch_host_worker_init(struct orch_host_worker *w,
			  struct orch_host_pool *pool, int32_t widx,
			  uint32_t trace_index);
void orch_host_worker_fini(struct orch_host_worker *w);
/* The thread's loop (a pthread start routine, @arg the worker); returns
 * once the pool's stop is set and the worker woken. */
void *orch_host_worker_main(void *arg);
/* kick(), with sched_mu held: only a parked worker is signalled (one not
 * parked finds the work at its next look). */
void orch_host_worker_kick(struct orch_host_worker *w);
/* Wake it, parked or not (stop, abort). */
void orch_host_worker_wake(struct orch_host_worker *w);

#endif /* PTO_ORCH_HOST_WORKER_H */
