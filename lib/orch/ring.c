// SPDX-License-Identifier: MIT
/*
 * Ring: per scope-depth ring, one slot window and one heap region, both
 * reclaimed in FIFO order.
 *
 * Slot window: the ring's slots form a circular array of `window` entries
 * addressed by a 64-bit sequence number (seq % window). Live slots are
 * [last_alive, seq_next); release marks a slot and advances last_alive over
 * every released slot at the head, reclaiming heap bytes as it goes. The
 * slot array is allocated once, so a slot pointer is stable for the
 * orchestrator's lifetime (the window is a configuration value, and a full
 * window is back-pressure on the orch thread). Task ids are a 64-bit monotonic
 * counter shared by all rings: at 10^9 tasks/s it wraps after 584 years, so
 * no compaction step exists; the sequence numbers are likewise 64-bit.
 *
 * Heap: a bump cursor `top` and a FIFO `tail` over [0, size). `used` counts
 * bytes charged to live slots (an allocation that wraps is also charged the
 * skipped end), which tells "full" from "empty" when top == tail. When the
 * ring is empty it restarts at 0.
 *
 * Locking: ring.mu guards the heap FIFO (tail, used), last_alive's
 * advance and the back-pressure wait. alloc is the only place the orch
 * thread blocks; release is called by whoever
 * consumes a slot and broadcasts only when it made progress. A zero-byte
 * alloc (no heap: the common task) with room in the window takes no lock:
 * see alloc_fast().
 *
 * Back-pressure hysteresis: a full window is waited out in batches, not
 * slot by slot, so the orch thread and the releasers do not ping-pong (a
 * futex wake, a context switch and a futex wait per task). A window
 * waiter asks to be woken only when RING_WAKE_FRACTION of the window is
 * free (wake_live). That batch may never come: slots of a scope
 * the orch thread still has open are released only by its scope_end, so
 * the wait is also bounded by RING_RECHECK_MS, after which the waiter
 * takes whatever is free. A heap waiter (a size, not a count) is woken by
 * every release.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "orch/orch_internal.h"

#define RING_WAKE_FRACTION 8		/* wake at window / 8 free */
#define RING_RECHECK_MS 1

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
	atomic_init(&ring->seq_next, 0);
	atomic_init(&ring->last_alive, 0);
	atomic_init(&ring->shutdown, false);
	ring->window = window;
	ring->wake_live = UINT64_MAX;
	ring->recheck_ms = RING_RECHECK_MS;
	ring->slots = calloc(window, sizeof(*ring->slots));
	if (!ring->slots)
		return -ENOMEM;
	ring->next_slot = ring->slots;	/* seq_next 0 */
	ring->alive_slot = ring->slots;	/* last_alive 0 */
	ring->slots_end = ring->slots + window;
	for (i = 0; i < window; i++) {
		orch_lock_init(&ring->slots[i].fanout_mu);
		ring->slots[i].idx = (uint32_t)r * window + i;
		ring->slots[i].ring = (uint8_t)r;
		ring->slots[i].ring_released = true;
		orch_slot_init_storage(&ring->slots[i]);
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
	for (i = 0; i < ring->window; i++)
		orch_slot_free_storage(&ring->slots[i]);
	free(ring->slots);
	ring->slots = NULL;
	pthread_mutex_destroy(&ring->mu);
	pthread_cond_destroy(&ring->cv);
}

/*
 * The slot of global index @idx (ring * window + position). Subtracts
 * instead of dividing: a submit resolves every explicit dependency
 * through this, the rings are few and most tasks are on ring 0, and a
 * 32-bit division by a run-time window is tens of cycles.
 */
struct orch_slot *orch_slot_at(struct pto_orch *o, uint32_t idx)
{
	uint32_t w = o->rings[0].window;
	int r;

	for (r = 0; r < PTO_MAX_RING_DEPTH; r++, idx -= w)
		if (idx < w)
			return &o->rings[r].slots[idx];
	return NULL;
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

/* Live slots. Exact for the orch thread under mu; anyone else gets a
 * snapshot. */
static uint64_t live_slots(struct orch_ring *ring)
{
	return atomic_load_explicit(&ring->seq_next, memory_order_relaxed) -
	       atomic_load_explicit(&ring->last_alive, memory_order_acquire);
}

/* The slot after @s in the window (orch thread: ring->next_slot's walk). */
static struct orch_slot *ring_after(const struct orch_ring *ring,
				    const struct orch_slot *s)
{
	/* The cast: @s points into ring->slots, which is not const. */
	return s + 1 == ring->slots_end ? ring->slots : (struct orch_slot *)(s + 1);
}

/*
 * Prefetch what the next submits will write. Slots are handed out in
 * sequence over the whole window, so with workers that lag the next slot
 * was last touched a window ago and is cold, or warm in a worker's cache:
 * ask for the lines in exclusive state where the CPU can (orch_prefetchw).
 * Three stages, each reading only lines the previous submit prefetched:
 * slot seq+3's hot lines, slot seq+2's arrays that grew to the heap, slot
 * seq+1's argument tensors. The pointers read here are written only by
 * the orch thread; a stale one only makes a useless prefetch.
 * @have is orch_have_prefetchw, tested once by the caller.
 */
static inline __attribute__((always_inline)) void
prefetch_ahead_as(const struct orch_ring *ring, const struct orch_slot *s0,
		  bool have)
{
	const struct orch_slot *s1 = ring_after(ring, s0);
	const struct orch_slot *s2 = ring_after(ring, s1);
	const char *s3 = (const char *)ring_after(ring, s2);
	uint32_t i, n;

#pragma GCC unroll 16
	for (i = 0; i < offsetof(struct orch_slot, inl_tensors); i += 64)
		orch_prefetchw_as(s3 + i, have);
	if (s2->members != &s2->inl_member)
		orch_prefetchw_as(s2->members, have);
	if (s2->out_keys != s2->inl_keys)
		orch_prefetchw_as(s2->out_keys, have);
	if (s1->cap_members) {
		const struct orch_member *m = &s1->members[0];

		n = m->nt * (uint32_t)sizeof(*m->t);
		for (i = 0; i < n && i < 1024; i += 64)
			orch_prefetchw_as((const char *)m->t + i, have);
	}
}

static inline __attribute__((always_inline)) void
prefetch_ahead(const struct orch_ring *ring, const struct orch_slot *s0)
{
	if (__builtin_expect(orch_have_prefetchw, 1))
		prefetch_ahead_as(ring, s0, true);
	else
		prefetch_ahead_as(ring, s0, false);
}

/* Hand out the slot at seq_next (orch thread; heap fields already set).
 * Inlined: as a call, the fast path's caller also tested its result. */
static inline __attribute__((always_inline)) struct orch_slot *
take_slot(struct orch_ring *ring)
{
	uint64_t seq = atomic_load_explicit(&ring->seq_next, memory_order_relaxed);
	struct orch_slot *s = ring->next_slot;

	prefetch_ahead(ring, s);

	s->ring_released = false;
	ring->next_slot = ring_after(ring, s);
	/*
	 * Release: a releaser that loads seq_next (acquire) and so walks
	 * over this slot sees ring_released == false and its heap fields,
	 * never the previous occupant's. The previous occupant's own
	 * release walk is done: last_alive is past it (see callers).
	 */
	atomic_store_explicit(&ring->seq_next, seq + 1, memory_order_release);
	return s;
}

/*
 * Zero-byte alloc without the lock: only the orch thread allocates, so
 * seq_next and top are its own; only last_alive comes from releasers.
 * alive_seen <= last_alive (it only grows), so a window check that passes
 * on alive_seen passes on the real value. The acquire load that produced
 * alive_seen read a last_alive stored (release, under mu) after the
 * releaser's last touch of every slot below it - including this slot's
 * previous occupant, seq - window < alive_seen - so our writes to the
 * slot from here on cannot race that releaser. The reload happens only
 * when the cached value says the window is full, so the steady state
 * reads no line the releasers write.
 */
static struct orch_slot *alloc_fast(struct orch_ring *ring)
{
	uint64_t seq = atomic_load_explicit(&ring->seq_next, memory_order_relaxed);
	struct orch_slot *s;

	if (atomic_load_explicit(&ring->shutdown, memory_order_relaxed))
		return NULL;
	if (seq - ring->alive_seen >= ring->window) {
		ring->alive_seen = atomic_load_explicit(&ring->last_alive,
							memory_order_acquire);
		if (seq - ring->alive_seen >= ring->window)
			return NULL;	/* full: the locked path waits */
	}
	s = ring->next_slot;	/* seq's */
	s->heap_charged = 0;
	s->heap_off = s->heap_end = ring->top;
	return take_slot(ring);
}

static bool ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec ||
	       (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/*
 * One back-pressure sleep under ring->mu (see the hysteresis note at the
 * top). Returns ETIMEDOUT only at @deadline; a wake-up, or the recheck
 * bound of a window wait, returns 0 and the caller looks again.
 */
static int ring_wait(struct orch_ring *ring, const struct timespec *deadline,
		     bool window_full)
{
	struct timespec until = *deadline;
	uint64_t batch = ring->window / RING_WAKE_FRACTION;
	int ret;

	if (window_full && batch > 1) {
		orch_deadline_in(&until, ring->recheck_ms);
		if (!ts_before(&until, deadline))
			until = *deadline;
		ring->wake_live = ring->window - batch;
	}
	ret = pthread_cond_timedwait(&ring->cv, &ring->mu, &until);
	ring->wake_live = UINT64_MAX;
	if (ret == ETIMEDOUT && ts_before(&until, deadline))
		return 0;	/* the recheck bound, not the deadline */
	return ret;
}

/* orch_ring_alloc() past its fast path: heap bytes, or a full window. */
static __attribute__((noinline)) int
ring_alloc_locked_path(struct pto_orch *o, int r, uint64_t bytes,
		       struct orch_alloc_result *res)
{
	struct orch_ring *ring = &o->rings[r];
	struct timespec deadline;
	bool have_deadline = false;
	struct orch_slot *s;
	uint64_t charged = 0;
	int64_t off = 0;
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
		bool slot_ok, heap_ok = true;

		if (atomic_load_explicit(&ring->shutdown, memory_order_relaxed)) {
			err = -ESHUTDOWN;
			break;
		}
		/*
		 * pto_orch_abort(): the build takes no further task, and
		 * the slots it waits for may be its own run's, which the
		 * outer scope holds until the function returns - the wait
		 * would only end at timeout_ms. Stored before the abort's
		 * orch_ring_wake_all() takes this mutex: seen here, under
		 * it, before any sleep, or the broadcast ends the sleep.
		 */
		if (atomic_load_explicit(&o->aborted, memory_order_relaxed)) {
			err = -ECANCELED;
			break;
		}
		slot_ok = live_slots(ring) < ring->window;
		if (slot_ok && bytes) {
			off = heap_reserve(ring, bytes, &charged);
			heap_ok = off >= 0;
		}
		if (slot_ok && heap_ok)
			break;
		/*
		 * About to block: route the orch thread's pending READY slots
		 * first (orch_ready_flush), or the releases we wait for could
		 * be theirs. Not under ring.mu (sched_mu comes first in the
		 * lock order): drop it, flush, and look again.
		 */
		if (o->pend_tail) {
			pthread_mutex_unlock(&ring->mu);
			orch_ready_flush(o);
			pthread_mutex_lock(&ring->mu);
			continue;
		}
		/* Back-pressure: wait for a release on this ring only. The
		 * deadline is taken lazily so the uncontended path makes no
		 * clock call. */
		if (!have_deadline) {
			orch_deadline_in(&deadline, o->cfg.timeout_ms);
			have_deadline = true;
		}
		orch_may_fail(o, ORCH_TP_RING_WAIT, NULL);
		if (ring_wait(ring, &deadline, !slot_ok) == ETIMEDOUT) {
			/* One last look: a release may have raced the timeout. */
			slot_ok = live_slots(ring) < ring->window;
			if (slot_ok && bytes) {
				off = heap_reserve(ring, bytes, &charged);
				heap_ok = off >= 0;
			}
			if (slot_ok && heap_ok &&
			    !atomic_load_explicit(&ring->shutdown, memory_order_relaxed))
				break;
			err = slot_ok ? -ENOSPC : -EAGAIN;
			break;
		}
	}
	if (err) {
		/* Releasers update used under mu: read it before dropping mu. */
		uint64_t used = ring->used;

		pthread_mutex_unlock(&ring->mu);
		if (err == -ESHUTDOWN)
			return orch_error(o, err, "orchestrator is shutting down");
		if (err == -ECANCELED)
			return orch_error(o, err,
					  "orchestrator aborted (pto_orch_abort): submit refused while it waited for ring %d",
					  r);
		if (err == -ENOSPC)
			return orch_error(o, -ETIMEDOUT,
					  "HeapRing exhausted, increase heap_ring_size "
					  "(ring %d, %llu bytes wanted, %llu of %llu in use)",
					  r, (unsigned long long)bytes,
					  (unsigned long long)used,
					  (unsigned long long)ring->heap.size);
		return orch_error(o, -ETIMEDOUT,
				  "task window full (ring %d, %u slots)", r,
				  ring->window);
	}
	/* Under mu, and live_slots() read last_alive past this slot's
	 * previous occupant (acquire), as in alloc_fast(). */
	s = ring->next_slot;	/* seq_next's */
	s->heap_charged = charged;
	if (bytes) {
		s->heap_off = (uint64_t)off;
		s->heap_end = (uint64_t)off + bytes;
		ring->top = s->heap_end;
		ring->used += charged;
	} else {
		s->heap_off = s->heap_end = ring->top;
	}
	take_slot(ring);
	pthread_mutex_unlock(&ring->mu);

	res->slot = s;
	res->heap_off = s->heap_off;
	res->heap_ptr = bytes ? (char *)ring->heap.base + s->heap_off : NULL;
	return 0;
}

/*
 * The fast path apart from the rest (out of line): with the locked path
 * in the same function, every zero-byte alloc would pay its prologue and
 * the call would not be inlined into the submit.
 */
int orch_ring_alloc(struct pto_orch *o, int r, uint64_t bytes,
		    struct orch_alloc_result *res)
{
	struct orch_slot *s;

	if (!bytes) {
		s = alloc_fast(&o->rings[r]);
		if (s) {
			res->slot = s;
			res->heap_off = s->heap_off;
			res->heap_ptr = NULL;
			return 0;
		}
	}
	return ring_alloc_locked_path(o, r, bytes, res);
}

/*
 * Return a CONSUMED slot (or an unowned BUILDING claim) to its ring. The
 * slot goes FREE when last_alive passes it, under ring.mu: alloc only ever
 * hands out the slot at seq_next, which is behind last_alive + window, so a
 * slot is never reissued before its FIFO turn.
 */
static void ring_release_locked(struct orch_ring *ring);

void orch_ring_release(struct pto_orch *o, struct orch_slot *s)
{
	struct orch_ring *ring = &o->rings[s->ring];

	pthread_mutex_lock(&ring->mu);
	s->ring_released = true;
	ring_release_locked(ring);
	pthread_mutex_unlock(&ring->mu);
}

void orch_ring_release_many(struct pto_orch *o, struct orch_slot *const *v,
			    uint32_t n)
{
	uint32_t i = 0;

	while (i < n) {
		struct orch_ring *ring = &o->rings[v[i]->ring];
		uint8_t r = v[i]->ring;

		pthread_mutex_lock(&ring->mu);
		for (; i < n && v[i]->ring == r; i++)
			v[i]->ring_released = true;
		ring_release_locked(ring);
		pthread_mutex_unlock(&ring->mu);
	}
}

/* Advance last_alive over released slots; caller holds ring->mu. */
static void ring_release_locked(struct orch_ring *ring)
{
	struct orch_slot *h = ring->alive_slot;	/* last_alive's */
	bool progress = false;
	uint64_t alive, end;

	/* Acquire: pairs with take_slot()'s release; every slot below end
	 * has its ring fields written. */
	end = atomic_load_explicit(&ring->seq_next, memory_order_acquire);
	alive = atomic_load_explicit(&ring->last_alive, memory_order_relaxed);
	while (alive < end) {
		if (!h->ring_released)
			break;
		if (h->heap_charged) {
			ring->used -= h->heap_charged;
			ring->tail = h->heap_end;
			h->heap_charged = 0;
		}
		atomic_store_explicit(&h->state, ORCH_FREE, memory_order_relaxed);
		alive++;
		/* slots_end is written once, at init. */
		if (++h == ring->slots_end)
			h = ring->slots;
		progress = true;
	}
	/* Release: the orch thread's acquire-load of last_alive (alloc_fast,
	 * live_slots) orders its reuse of these slots after this walk. */
	if (progress) {
		ring->alive_slot = h;
		atomic_store_explicit(&ring->last_alive, alive,
				      memory_order_release);
	}
	/*
	 * Broadcast only when something was reclaimed, and to a window
	 * waiter only once live slots are down to its wake_live (the
	 * hysteresis; its wait is bounded, so a batch that never comes costs
	 * it RING_RECHECK_MS, not a hang). wake_live is written under mu by
	 * the waiter before it sleeps, so this read, under mu too, sees the
	 * waiter's current request. With no waiter glibc's broadcast is a
	 * load and no system call.
	 */
	if (progress && end - alive <= ring->wake_live)
		pthread_cond_broadcast(&ring->cv);
}

/* Broadcast every ring's waiters under its lock, storing @shutdown first
 * when it is set (a waiter checks both flags under ring.mu). */
static void wake_every_ring(struct pto_orch *o, bool shutdown)
{
	int r;

	for (r = 0; r < PTO_MAX_RING_DEPTH; r++) {
		struct orch_ring *ring = &o->rings[r];

		if (!ring->slots)
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

/*
 * pto_orch_abort(), after it stored o->aborted: end every back-pressure
 * wait (ring_alloc_locked_path() looks at the flag under ring.mu before
 * it sleeps). The caller holds no lock (runs_mu, innermost, comes after
 * ring.mu: orch_internal.h).
 */
void orch_ring_wake_all(struct pto_orch *o)
{
	wake_every_ring(o, false);
}

#ifdef PTO_TEST_HOOKS
uint64_t orch_ring_live(struct pto_orch *o, int r)
{
	struct orch_ring *ring = &o->rings[r];
	uint64_t n;

	pthread_mutex_lock(&ring->mu);
	n = live_slots(ring);
	pthread_mutex_unlock(&ring->mu);
	return n;
}
#endif

#ifdef PTO_TEST_HOOKS
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
