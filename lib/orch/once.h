/* SPDX-License-Identifier: MIT */
/*
 * A gate for work done once per task before any of its members runs,
 * by whichever member's thread reaches it first (the args dump's
 * BEFORE_DISPATCH capture of an SPMD or group task, whose members other
 * scheduler threads may dispatch at the same time). Step functions, so
 * tests can force each interleaving; orch_once_wait() is the one loop.
 */
#ifndef PTO_ORCH_ONCE_H
#define PTO_ORCH_ONCE_H

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

enum orch_once_state {
	ORCH_ONCE_OPEN = 0,	/* nobody reached it yet */
	ORCH_ONCE_BUSY,		/* one caller is doing the work */
	ORCH_ONCE_CLOSED,	/* the work is done */
};

struct orch_once {
	_Atomic uint32_t state;
};

/* What orch_once_step() tells its caller to do. */
enum orch_once_step {
	ORCH_ONCE_RUN,		/* do the work, then orch_once_finish() */
	ORCH_ONCE_WAIT,		/* another caller does it: orch_once_wait() */
	ORCH_ONCE_DONE,		/* done: go on */
};

/* A new task's gate. Its publication (the slot's, through sched_mu)
 * orders this store before any member's step. */
static inline void orch_once_reset(struct orch_once *g)
{
	atomic_store_explicit(&g->state, ORCH_ONCE_OPEN, memory_order_relaxed);
}

static inline enum orch_once_step orch_once_step(struct orch_once *g)
{
	uint32_t s = ORCH_ONCE_OPEN;

	/*
	 * Acquire on every outcome that returns DONE: pairs with
	 * orch_once_finish()'s release, so what the work did happens
	 * before whatever the caller does next (a member's payload).
	 */
	if (atomic_load_explicit(&g->state, memory_order_acquire) ==
	    ORCH_ONCE_CLOSED)
		return ORCH_ONCE_DONE;
	if (atomic_compare_exchange_strong_explicit(&g->state, &s,
						    ORCH_ONCE_BUSY,
						    memory_order_acquire,
						    memory_order_acquire))
		return ORCH_ONCE_RUN;
	return s == ORCH_ONCE_CLOSED ? ORCH_ONCE_DONE : ORCH_ONCE_WAIT;
}

/* The RUN caller's work is done. Release: pairs with the acquire loads
 * of orch_once_step() and orch_once_wait(). */
static inline void orch_once_finish(struct orch_once *g)
{
	atomic_store_explicit(&g->state, ORCH_ONCE_CLOSED,
			      memory_order_release);
}

/*
 * Until the RUN caller finished. The work must end by itself (each
 * capture is bounded by its own timeout), so this waits for nothing
 * else. Yields for a while, then sleeps 20 us at a time: on few CPUs
 * the RUN caller may be the thread this one is keeping off one.
 */
static inline void orch_once_wait(struct orch_once *g)
{
	static const struct timespec nap = { 0, 20000 };
	unsigned int spins = 0;

	/* Acquire: pairs with orch_once_finish(). */
	while (atomic_load_explicit(&g->state, memory_order_acquire) !=
	       ORCH_ONCE_CLOSED) {
		if (spins < 64) {
			spins++;
			sched_yield();
		} else {
			nanosleep(&nap, NULL);
		}
	}
}

#endif
