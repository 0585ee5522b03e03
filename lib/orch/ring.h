/* SPDX-License-Identifier: MIT */
/* The task rings: slot windows and heap rings with back-pressure (ring.c). */
#ifndef PTO_ORCH_RING_H
#define PTO_ORCH_RING_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include "orch/slot.h"

struct orch_ring {
	/* Orch thread's side (alloc), read-mostly for the others. */
	struct orch_heap heap;
	uint32_t window;
	struct orch_slot *slots;	/* window entries, stable in memory */
	uint64_t top;			/* heap bump cursor (orch thread) */
	/* Live slots are [last_alive, seq_next). seq_next is stored by the
	 * orch thread only (release: a releaser that sees it sees the new
	 * slot's ring fields); alive_seen is the orch thread's last
	 * acquire-load of last_alive, so a zero-byte alloc with room in the
	 * window takes no lock and reads no line the releasers write. */
	_Atomic uint64_t seq_next;
	uint64_t alive_seen;
	/* Orch thread only: &slots[seq_next % window], advanced with a wrap
	 * test, so handing out a slot (and finding the ones after it to
	 * prefetch) divides by nothing. */
	struct orch_slot *next_slot;
	struct orch_slot *slots_end;	/* slots + window (set at init only) */
	_Atomic bool shutdown;

	/* Releasers' side, under mu. */
	pthread_mutex_t mu __attribute__((aligned(64)));
	pthread_cond_t cv;
	uint64_t tail, used;		/* heap FIFO tail, bytes charged */
	_Atomic uint64_t last_alive;	/* stored under mu, release */
	/* &slots[last_alive % window], under mu: the release walk's cursor
	 * (ring_release_locked), so it divides by nothing. */
	struct orch_slot *alive_slot;
	/* Back-pressure hysteresis (ring.c): a release wakes the waiting
	 * orch thread only once live slots are down to wake_live; the wait
	 * looks again every recheck_ms regardless (tests may raise it). */
	uint64_t wake_live;
	int64_t recheck_ms;
};

struct orch_alloc_result {
	struct orch_slot *slot;
	uint64_t heap_off;
	void *heap_ptr;
};

/* Now (CLOCK_MONOTONIC) plus @ms: a pthread_cond_timedwait deadline. */
void orch_deadline_in(struct timespec *ts, int64_t ms);

int orch_ring_init(struct pto_orch *o, int r, uint32_t window);
void orch_ring_fini(struct pto_orch *o, int r);
int orch_ring_alloc(struct pto_orch *o, int r, uint64_t bytes,
		    struct orch_alloc_result *res);
void orch_ring_release(struct pto_orch *o, struct orch_slot *s);
/* Release @n slots (any rings) with one ring.mu round trip per ring. */
void orch_ring_release_many(struct pto_orch *o, struct orch_slot *const *v,
			    uint32_t n);
void orch_ring_wake_all(struct pto_orch *o);
void orch_ring_shutdown(struct pto_orch *o);
#ifdef PTO_TEST_HOOKS
/* For the tests: live slots, heap bytes charged. */
uint64_t orch_ring_live(struct pto_orch *o, int r);
uint64_t orch_ring_used(struct pto_orch *o, int r);
#endif
struct orch_slot *orch_slot_at(struct pto_orch *o, uint32_t idx);

#endif
