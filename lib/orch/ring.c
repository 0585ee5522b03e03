// SPDX-License-Identifier: MIT
/*
 * Ring (seed 001 §5): per scope-depth ring, one slot window and one heap
 * region, both reclaimed in FIFO order.
 *
 * Slot window: the ring's slots form a circular array of `window` entries
 * addressed by a 64-bit sequence number (seq % window). Live slots are
 * [last_alive, seq_next); release marks a slot and advances last_alive over
 * every released slot at the head, reclaiming heap bytes as it goes. The
 * slot array is allocated once, so a slot pointer is stable for the
 * orchestrator's lifetime (the seed's deque, without growth: the window is
 * a configuration value and the "task window full" back-pressure is what
 * the seed's L2 window gives). Task ids are a separate 64-bit monotonic
 * counter shared by all rings: at 10^9 tasks/s it wraps after 584 years, so
 * no compaction step exists; the sequence numbers are likewise 64-bit.
 *
 * Heap: a bump cursor `top` and a FIFO `tail` over [0, size). `used` counts
 * bytes charged to live slots (an allocation that wraps is also charged the
 * skipped end), which tells "full" from "empty" when top == tail. When the
 * ring is empty it restarts at 0.
 *
 * Locking: ring.mu guards everything here. alloc is the only place the orch
 * thread blocks (seed §9 invariant 4); release is called by whoever consumes
 * a slot and broadcasts only when it made progress.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "orch/orch_internal.h"

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

int orch_ring_init(struct pto_orch *o, int r, uint32_t window)
{
	struct orch_ring *ring = &o->rings[r];
	pthread_condattr_t ca;
	uint32_t i;

	memset(ring, 0, sizeof(*ring));
	ring->window = window;
	ring->slots = calloc(window, sizeof(*ring->slots));
	if (!ring->slots)
		return -ENOMEM;
	for (i = 0; i < window; i++) {
		orch_mutex_init(&ring->slots[i].fanout_mu);
		ring->slots[i].idx = (uint32_t)r * window + i;
		ring->slots[i].ring = (uint8_t)r;
		ring->slots[i].ring_released = true;
	}
	orch_mutex_init(&ring->mu);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ring->cv, &ca);
	pthread_condattr_destroy(&ca);
	return 0;
}

void orch_ring_fini(struct pto_orch *o, int r)
{
	struct orch_ring *ring = &o->rings[r];
	uint32_t i;

	if (!ring->slots)
		return;
	for (i = 0; i < ring->window; i++) {
		orch_slot_free_storage(&ring->slots[i]);
		pthread_mutex_destroy(&ring->slots[i].fanout_mu);
	}
	free(ring->slots);
	ring->slots = NULL;
	pthread_mutex_destroy(&ring->mu);
	pthread_cond_destroy(&ring->cv);
}

struct orch_slot *orch_slot_at(struct pto_orch *o, uint32_t idx)
{
	uint32_t w = o->rings[0].window;
	uint32_t r = idx / w;

	if (r >= PTO_MAX_RING_DEPTH)
		return NULL;
	return &o->rings[r].slots[idx % w];
}

/* Reserve @bytes (already aligned, > 0); returns the offset or -1. */
static int64_t heap_reserve(struct orch_ring *ring, uint64_t bytes,
			    uint64_t *charged)
{
	uint64_t size = ring->heap.size;

	if (ring->used == 0)
		ring->top = ring->tail = 0;	/* empty: restart at 0 */
	if (ring->used == 0 || ring->top > ring->tail) {
		/* Used region is [tail, top): room at the end, then at 0. */
		if (ring->top + bytes <= size) {
			*charged = bytes;
			return (int64_t)ring->top;
		}
		if (bytes <= ring->tail) {
			*charged = (size - ring->top) + bytes;
			return 0;
		}
		return -1;
	}
	/* Wrapped: used is [tail, size) + [0, top); room is [top, tail). */
	if (ring->top + bytes <= ring->tail) {
		*charged = bytes;
		return (int64_t)ring->top;
	}
	return -1;
}

int orch_ring_alloc(struct pto_orch *o, int r, uint64_t bytes,
		    struct orch_alloc_result *res)
{
	struct orch_ring *ring = &o->rings[r];
	struct timespec deadline;
	bool have_deadline = false;
	struct orch_slot *s;
	uint64_t charged = 0;
	int64_t off = 0;
	int err = 0;

	bytes = align_up(bytes, PTO_HEAP_ALIGN);
	if (bytes > ring->heap.size)
		return orch_error(o, -E2BIG,
				  "HeapRing exhausted, increase heap_ring_size "
				  "(request of %llu bytes > ring size %llu)",
				  (unsigned long long)bytes,
				  (unsigned long long)ring->heap.size);

	pthread_mutex_lock(&ring->mu);
	for (;;) {
		bool slot_ok, heap_ok = true;

		if (ring->shutdown) {
			err = -ESHUTDOWN;
			break;
		}
		slot_ok = ring->seq_next - ring->last_alive < ring->window;
		if (slot_ok && bytes) {
			off = heap_reserve(ring, bytes, &charged);
			heap_ok = off >= 0;
		}
		if (slot_ok && heap_ok)
			break;
		/* Back-pressure: wait for a release on this ring only. The
		 * deadline is taken lazily so the uncontended path makes no
		 * clock call. */
		if (!have_deadline) {
			clock_gettime(CLOCK_MONOTONIC, &deadline);
			deadline.tv_sec += o->cfg.timeout_ms / 1000;
			deadline.tv_nsec += (long)(o->cfg.timeout_ms % 1000) * 1000000L;
			if (deadline.tv_nsec >= 1000000000L) {
				deadline.tv_sec++;
				deadline.tv_nsec -= 1000000000L;
			}
			have_deadline = true;
		}
		if (pthread_cond_timedwait(&ring->cv, &ring->mu, &deadline) ==
		    ETIMEDOUT) {
			/* One last look: a release may have raced the timeout. */
			slot_ok = ring->seq_next - ring->last_alive < ring->window;
			if (slot_ok && bytes) {
				off = heap_reserve(ring, bytes, &charged);
				heap_ok = off >= 0;
			}
			if (slot_ok && heap_ok && !ring->shutdown)
				break;
			err = slot_ok ? -ENOSPC : -EAGAIN;
			break;
		}
	}
	if (err) {
		pthread_mutex_unlock(&ring->mu);
		if (err == -ESHUTDOWN)
			return orch_error(o, err, "orchestrator is shutting down");
		if (err == -ENOSPC)
			return orch_error(o, -ETIMEDOUT,
					  "HeapRing exhausted, increase heap_ring_size "
					  "(ring %d, %llu bytes wanted, %llu of %llu in use)",
					  r, (unsigned long long)bytes,
					  (unsigned long long)ring->used,
					  (unsigned long long)ring->heap.size);
		return orch_error(o, -ETIMEDOUT,
				  "task window full (ring %d, %u slots)", r,
				  ring->window);
	}
	s = &ring->slots[ring->seq_next % ring->window];
	s->ring_released = false;
	s->heap_charged = charged;
	if (bytes) {
		s->heap_off = (uint64_t)off;
		s->heap_end = (uint64_t)off + bytes;
		ring->top = s->heap_end;
		ring->used += charged;
	} else {
		s->heap_off = s->heap_end = ring->top;
	}
	ring->seq_next++;
	pthread_mutex_unlock(&ring->mu);

	res->slot = s;
	res->heap_off = s->heap_off;
	res->heap_ptr = bytes ? (char *)ring->heap.base + s->heap_off : NULL;
	return 0;
}

/*
 * Return a CONSUMED slot (or an unowned BUILDING claim) to its ring. The
 * slot goes FREE when last_alive passes it, under ring.mu: alloc only ever
 * hands out the slot at seq_next, which is behind last_alive + window, so a
 * slot is never reissued before its FIFO turn.
 */
void orch_ring_release(struct pto_orch *o, struct orch_slot *s)
{
	struct orch_ring *ring = &o->rings[s->ring];
	bool progress = false;

	pthread_mutex_lock(&ring->mu);
	s->ring_released = true;
	while (ring->last_alive < ring->seq_next) {
		struct orch_slot *h = &ring->slots[ring->last_alive % ring->window];

		if (!h->ring_released)
			break;
		if (h->heap_charged) {
			ring->used -= h->heap_charged;
			ring->tail = h->heap_end;
			h->heap_charged = 0;
		}
		atomic_store_explicit(&h->state, ORCH_FREE, memory_order_relaxed);
		ring->last_alive++;
		progress = true;
	}
	/* Broadcast only when something was reclaimed; with no waiter glibc's
	 * broadcast is a load and no system call. */
	if (progress)
		pthread_cond_broadcast(&ring->cv);
	pthread_mutex_unlock(&ring->mu);
}

void orch_ring_shutdown(struct pto_orch *o)
{
	int r;

	for (r = 0; r < PTO_MAX_RING_DEPTH; r++) {
		struct orch_ring *ring = &o->rings[r];

		if (!ring->slots)
			continue;
		pthread_mutex_lock(&ring->mu);
		ring->shutdown = true;
		pthread_cond_broadcast(&ring->cv);
		pthread_mutex_unlock(&ring->mu);
	}
}

uint64_t orch_ring_live(struct pto_orch *o, int r)
{
	struct orch_ring *ring = &o->rings[r];
	uint64_t n;

	pthread_mutex_lock(&ring->mu);
	n = ring->seq_next - ring->last_alive;
	pthread_mutex_unlock(&ring->mu);
	return n;
}

uint64_t orch_ring_used(struct pto_orch *o, int r)
{
	struct orch_ring *ring = &o->rings[r];
	uint64_t n;

	pthread_mutex_lock(&ring->mu);
	n = ring->used;
	pthread_mutex_unlock(&ring->mu);
	return n;
}
