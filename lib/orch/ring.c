// SPDX-License-Identifier: MIT
/*
 * Heap rings: one per scope depth, a bump cursor `top` and a FIFO `tail`
 * over [0, size), reclaimed in allocation order through a FIFO of
 * entries (one per slot that holds heap bytes). `used` counts the bytes
 * charged to live slots, which tells full from empty when top == tail.
 * Only the heap rings back-pressure: slots come from the slot store.
 * Documentation/orchestrator.md, "Heap rings and back-pressure".
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "orch/orch_internal.h"

#define RING_FIFO_MIN 64

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

int orch_ring_init(struct pto_orch *o, int r)
{
	struct orch_ring *ring = &o->rings[r];
	pthread_condattr_t ca;

	memset(ring, 0, sizeof(*ring));
	atomic_init(&ring->shutdown, false);
	atomic_init(&ring->taken, 0);
	atomic_init(&ring->released, 0);
	ring->fifo = calloc(RING_FIFO_MIN, sizeof(*ring->fifo));
	if (!ring->fifo)
		return -ENOMEM;
	ring->fifo_mask = RING_FIFO_MIN - 1;
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

	if (!ring->fifo)
		return;
	free(ring->fifo);
	ring->fifo = NULL;
	pthread_mutex_destroy(&ring->mu);
	pthread_cond_destroy(&ring->cv);
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

/* Room for one more FIFO entry (under mu): doubles, keeping the order. */
static int fifo_reserve(struct orch_ring *ring)
{
	uint64_t n = ring->fifo_tail - ring->fifo_head, cap = ring->fifo_mask + 1;
	struct orch_heap_ent *f;
	uint64_t i;

	if (n < cap)
		return 0;
	f = malloc(2 * cap * sizeof(*f));
	if (!f)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		f[i] = ring->fifo[(ring->fifo_head + i) & ring->fifo_mask];
	free(ring->fifo);
	ring->fifo = f;
	ring->fifo_mask = 2 * cap - 1;
	ring->fifo_head = 0;
	ring->fifo_tail = n;
	return 0;
}

/*
 * The deadlock test (under mu, orch thread): the FIFO's head is freed
 * only when its slot is consumed, and a slot whose scope reference is
 * still held waits for a scope end that only this thread, blocked here,
 * can make. Then the tail never moves and the request never fits.
 * Returns the depth of that scope, or 0 (ordinary back-pressure).
 */
static uint32_t head_pinned_by_open_scope(const struct orch_ring *ring)
{
	const struct orch_heap_ent *e;

	if (ring->fifo_head == ring->fifo_tail)
		return 0;
	e = &ring->fifo[ring->fifo_head & ring->fifo_mask];
	if (e->released || e->s->task_id != e->tid)
		return 0;
	return e->s->scope_depth;
}

static bool ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec ||
	       (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static int alloc_failed(struct pto_orch *o, int r, int err, uint64_t bytes,
			uint64_t used, uint32_t depth)
{
	struct orch_ring *ring = &o->rings[r];

	switch (err) {
	case -ESHUTDOWN:
		return orch_error(o, err, "orchestrator is shutting down");
	case -ECANCELED:
		return orch_error(o, err,
				  "orchestrator aborted (pto_orch_abort): submit refused while it waited for ring %d",
				  r);
	case -EDEADLK:
		return orch_error(o, err,
				  "deadlock: heap ring %d is full and its oldest allocation is held by the open scope at depth %u "
				  "(%llu bytes held, %llu asked, ring size %llu): end that scope first or increase heap_ring_size",
				  r, depth, (unsigned long long)used,
				  (unsigned long long)bytes,
				  (unsigned long long)ring->heap.size);
	case -ENOMEM:
		return orch_error(o, err, "out of memory (heap ring FIFO)");
	default:
		return orch_error(o, -ETIMEDOUT,
				  "HeapRing exhausted, increase heap_ring_size "
				  "(ring %d, %llu bytes wanted, %llu of %llu in use, no progress for %u ms)",
				  r, (unsigned long long)bytes,
				  (unsigned long long)used,
				  (unsigned long long)ring->heap.size,
				  o->cfg.timeout_ms);
	}
}

/*
 * Reserve heap bytes, or wait for releases on this ring. The timeout
 * counts from the last reclaim (ring->progress), so a slow but moving
 * pipeline never times out; a ring whose head is held by a scope this
 * thread has open fails at once with -EDEADLK.
 */
int orch_ring_alloc_heap(struct pto_orch *o, int r, struct orch_slot *s,
			 uint64_t tid, uint64_t bytes)
{
	struct orch_ring *ring = &o->rings[r];
	struct timespec deadline;
	uint64_t charged = 0, seen = 0, used;
	bool have_deadline = false;
	uint32_t depth = 0;
	struct orch_heap_ent *e;
	int64_t off = -1;
	int err = 0;

	/* Compared before the alignment as well: within 1023 of 2^64 a
	 * size would wrap to 0 and take no heap at all. */
	if (bytes <= ring->heap.size)
		bytes = align_up(bytes, PTO_HEAP_ALIGN);
	if (bytes > ring->heap.size)
		return orch_error(o, -E2BIG,
				  "HeapRing exhausted, increase heap_ring_size "
				  "(request of %llu bytes > ring size %llu)",
				  (unsigned long long)bytes,
				  (unsigned long long)ring->heap.size);

	pthread_mutex_lock(&ring->mu);
	for (;;) {
		if (atomic_load_explicit(&ring->shutdown, memory_order_relaxed)) {
			err = -ESHUTDOWN;
			break;
		}
		/* pto_orch_abort(): stored before its orch_ring_wake_all()
		 * takes this mutex, so seen here before any sleep. */
		if (atomic_load_explicit(&o->aborted, memory_order_relaxed)) {
			err = -ECANCELED;
			break;
		}
		off = heap_reserve(ring, bytes, &charged);
		if (off >= 0)
			break;
		/* Route the orch thread's pending READY slots first: the
		 * releases we would wait for could be theirs. sched_mu comes
		 * before ring.mu: drop it, flush, look again. */
		if (o->pend_tail) {
			pthread_mutex_unlock(&ring->mu);
			orch_ready_flush(o);
			pthread_mutex_lock(&ring->mu);
			continue;
		}
		depth = head_pinned_by_open_scope(ring);
		if (depth) {
			err = -EDEADLK;
			break;
		}
		if (!have_deadline || ring->progress != seen) {
			orch_deadline_in(&deadline, o->cfg.timeout_ms);
			seen = ring->progress;
			have_deadline = true;
		}
		orch_may_fail(o, ORCH_TP_RING_WAIT, NULL);
		ring->waiting = true;
		err = pthread_cond_timedwait(&ring->cv, &ring->mu, &deadline);
		ring->waiting = false;
		if (err == ETIMEDOUT && ring->progress == seen) {
			struct timespec now;

			clock_gettime(CLOCK_MONOTONIC, &now);
			if (!ts_before(&now, &deadline)) {
				/* One last look: a release may have raced it. */
				off = heap_reserve(ring, bytes, &charged);
				err = off >= 0 ? 0 : -ETIMEDOUT;
				break;
			}
		}
		err = 0;
	}
	if (!err)
		err = fifo_reserve(ring);
	if (err) {
		/* Releasers update used under mu: read it before dropping mu. */
		used = ring->used;
		pthread_mutex_unlock(&ring->mu);
		return alloc_failed(o, r, err, bytes, used, depth);
	}
	e = &ring->fifo[ring->fifo_tail & ring->fifo_mask];
	e->s = s;
	e->tid = tid;
	e->end = (uint64_t)off + bytes;
	e->charged = charged;
	e->released = false;
	s->hseq = ring->fifo_tail++;
	s->heap_off = (uint64_t)off;
	s->heap_charged = charged;
	ring->top = e->end;
	ring->used += charged;
	pthread_mutex_unlock(&ring->mu);
	return 0;
}

/* Mark @s's FIFO entry released and reclaim the released head (under mu). */
static void heap_release_locked(struct orch_ring *ring, struct orch_slot *s)
{
	bool progress = false;

	ring->fifo[s->hseq & ring->fifo_mask].released = true;
	s->heap_charged = 0;
	while (ring->fifo_head < ring->fifo_tail) {
		struct orch_heap_ent *e = &ring->fifo[ring->fifo_head & ring->fifo_mask];

		if (!e->released)
			break;
		ring->used -= e->charged;
		ring->tail = e->end;
		ring->fifo_head++;
		progress = true;
	}
	if (progress) {
		ring->progress++;
		if (ring->waiting)
			pthread_cond_broadcast(&ring->cv);
	}
}

/*
 * The slot goes FREE and back to the store. Relaxed: FREE is read under
 * fanout_mu or as a hint (wire()); the store's nfree count (acq_rel)
 * orders this thread's last touch of the slot before its reuse.
 */
static void slot_free(struct orch_slot *s)
{
	atomic_store_explicit(&s->state, ORCH_FREE, memory_order_relaxed);
}

void orch_ring_release(struct pto_orch *o, struct orch_slot *s)
{
	struct orch_ring *ring = &o->rings[s->ring];

	if (s->heap_charged) {
		pthread_mutex_lock(&ring->mu);
		heap_release_locked(ring, s);
		pthread_mutex_unlock(&ring->mu);
	}
	slot_free(s);
	atomic_fetch_add_explicit(&ring->released, 1, memory_order_relaxed);
	orch_store_freed(&o->store, s, 1);
}

/* Release @n slots: one ring.mu hold per run of heap slots of one ring,
 * one count per ring and one store update per run of one chunk. */
void orch_ring_release_many(struct pto_orch *o, struct orch_slot *const *v,
			    uint32_t n)
{
	uint64_t per_ring[PTO_MAX_RING_DEPTH] = { 0 };
	struct orch_ring *held = NULL;
	uint32_t i, j;
	int r;

	for (i = 0; i < n; i++) {
		struct orch_slot *s = v[i];
		struct orch_ring *ring = &o->rings[s->ring];

		per_ring[s->ring]++;
		if (!s->heap_charged)
			continue;
		if (held != ring) {
			if (held)
				pthread_mutex_unlock(&held->mu);
			held = ring;
			pthread_mutex_lock(&held->mu);
		}
		heap_release_locked(ring, s);
	}
	if (held)
		pthread_mutex_unlock(&held->mu);
	for (r = 0; r < PTO_MAX_RING_DEPTH; r++)
		if (per_ring[r])
			atomic_fetch_add_explicit(&o->rings[r].released,
						  per_ring[r], memory_order_relaxed);
	/* The chunk of a slot is named by its task id: read the ids of a
	 * run of one chunk before the first of them is handed back. */
	for (i = 0; i < n; i = j) {
		uint64_t c = v[i]->task_id >> ORCH_CHUNK_SHIFT;

		for (j = i; j < n && v[j]->task_id >> ORCH_CHUNK_SHIFT == c; j++)
			slot_free(v[j]);
		orch_store_freed(&o->store, v[i], j - i);
	}
}

/* Broadcast every ring's waiters under its lock, storing @shutdown first
 * when it is set (a waiter checks both flags under ring.mu). */
static void wake_every_ring(struct pto_orch *o, bool shutdown)
{
	int r;

	for (r = 0; r < PTO_MAX_RING_DEPTH; r++) {
		struct orch_ring *ring = &o->rings[r];

		if (!ring->fifo)
			continue;
		pthread_mutex_lock(&ring->mu);
		if (shutdown)
			atomic_store_explicit(&ring->shutdown, true,
					      memory_order_relaxed);
		pthread_cond_broadcast(&ring->cv);
		pthread_mutex_unlock(&ring->mu);
	}
}

void orch_ring_shutdown(struct pto_orch *o)
{
	wake_every_ring(o, true);
}

/* pto_orch_abort(), after it stored o->aborted: end every back-pressure
 * wait. The caller holds no lock (runs_mu comes after ring.mu). */
void orch_ring_wake_all(struct pto_orch *o)
{
	wake_every_ring(o, false);
}

#ifdef PTO_TEST_HOOKS
/* claim_slot()'s store and ring steps alone, for the ring tests. */
int orch_ring_claim(struct pto_orch *o, int r, uint64_t bytes,
		    struct orch_slot **out)
{
	uint64_t tid = o->store.next_tid;
	struct orch_slot *s = orch_store_peek(&o->store);
	int err;

	if (!s)
		return -ENOMEM;
	s->heap_charged = 0;
	s->heap_off = 0;
	if (bytes) {
		err = orch_ring_alloc_heap(o, r, s, tid, bytes);
		if (err)
			return err;
	}
	orch_store_advance(&o->store);
	atomic_store(&o->next_task_id, tid + 1);
	atomic_fetch_add(&o->rings[r].taken, 1);
	orch_lock(&s->fanout_mu);
	orch_slot_reset(s);
	s->task_id = tid;
	s->ring = (uint8_t)r;
	atomic_store(&s->state, ORCH_CONSUMED);
	orch_unlock(&s->fanout_mu);
	*out = s;
	return 0;
}

uint64_t orch_ring_live(struct pto_orch *o, int r)
{
	struct orch_ring *ring = &o->rings[r];

	/* released first: a snapshot never shows more releases than takes. */
	uint64_t rel = atomic_load_explicit(&ring->released, memory_order_acquire);

	return atomic_load_explicit(&ring->taken, memory_order_acquire) - rel;
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
#endif
