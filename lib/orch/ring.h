/* SPDX-License-Identifier: MIT */
/* The heap rings: FIFO-reclaimed heap regions with back-pressure and the
 * deadlock diagnosis (ring.c). Slots live in the slot store. */
#ifndef PTO_ORCH_RING_H
#define PTO_ORCH_RING_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include "orch/slot.h"

/* One heap allocation in FIFO order: the slot that holds it and its end. */
struct orch_heap_ent {
	struct orch_slot *s;
	uint64_t tid;
	uint64_t end, charged;
	bool released;
};

struct orch_ring {
	struct orch_heap heap;
	_Atomic bool shutdown;
	/* Slots claimed on this ring (orch thread) and released (anyone):
	 * their difference is the live count, for the tests. */
	_Atomic uint64_t taken;
	_Atomic uint64_t released __attribute__((aligned(64)));

	/* Under mu: the heap cursor, FIFO tail and bytes charged, and the
	 * allocation FIFO [fifo_head, fifo_tail) (fifo_mask + 1 entries). */
	pthread_mutex_t mu __attribute__((aligned(64)));
	pthread_cond_t cv;
	uint64_t top, tail, used;
	struct orch_heap_ent *fifo;
	uint64_t fifo_mask, fifo_head, fifo_tail;
	uint64_t progress;		/* bumped at every reclaim */
	bool waiting;			/* the orch thread sleeps on cv */
};

/* Now (CLOCK_MONOTONIC) plus @ms: a pthread_cond_timedwait deadline. */
void orch_deadline_in(struct timespec *ts, int64_t ms);

int orch_ring_init(struct pto_orch *o, int r);
void orch_ring_fini(struct pto_orch *o, int r);
/* Charge @bytes (> 0) of ring @r to slot @s, which will hold task @tid:
 * waits while the ring is full and its head can still be freed. */
int orch_ring_alloc_heap(struct pto_orch *o, int r, struct orch_slot *s,
			 uint64_t tid, uint64_t bytes);
/* Return a CONSUMED slot (or an unowned BUILDING claim): its heap bytes
 * in FIFO order, then the slot to the store. Nothing may touch @s after. */
void orch_ring_release(struct pto_orch *o, struct orch_slot *s);
void orch_ring_release_many(struct pto_orch *o, struct orch_slot *const *v,
			    uint32_t n);
void orch_ring_wake_all(struct pto_orch *o);
void orch_ring_shutdown(struct pto_orch *o);
#ifdef PTO_TEST_HOOKS
/* For the tests: a slot claimed without a run (CONSUMED, ready for
 * orch_ring_release), live slots, heap bytes charged. */
int orch_ring_claim(struct pto_orch *o, int r, uint64_t bytes,
		    struct orch_slot **out);
uint64_t orch_ring_live(struct pto_orch *o, int r);
uint64_t orch_ring_used(struct pto_orch *o, int r);
#endif

#endif
