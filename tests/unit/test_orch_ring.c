// SPDX-License-Identifier: MIT
/*
 * Ring internals (Documentation/orchestrator.md, "Scopes and rings"):
 * bump allocation, 1024 alignment, FIFO reclamation with out-of-order
 * releases, wrap-around, full-vs-empty, per-ring independence, window
 * exhaustion. Drives orch_ring_alloc /
 * orch_ring_release directly on a thread-less orchestrator.
 */
#include <pthread.h>
#include "kselftest_harness.h"
#include "orch_test.h"

#define K 1024ULL

FIXTURE(ring)
{
	pto_orch *o;
};

FIXTURE_SETUP(ring)
{
	struct pto_orch_config cfg = { .heap_ring_size = 1024 * K, .task_window = 8,
				       .timeout_ms = 50 };

	ASSERT_EQ(0, orch_create_manual(&cfg, &self->o));
}

FIXTURE_TEARDOWN(ring)
{
	EXPECT_EQ(0, pto_orch_close(self->o, 100));
	EXPECT_EQ(0, pto_orch_destroy(self->o));
}

static struct orch_slot *ra(struct __test_metadata *_metadata, pto_orch *o,
			    int r, uint64_t bytes, uint64_t want_off)
{
	struct orch_alloc_result res;

	EXPECT_EQ(0, orch_ring_alloc(o, r, bytes, &res));
	if (bytes) {
		EXPECT_EQ(want_off, res.heap_off);
		EXPECT_EQ((char *)o->rings[r].heap.base + want_off, res.heap_ptr);
	} else {
		EXPECT_EQ(NULL, res.heap_ptr);
	}
	return res.slot;
}

TEST_F(ring, alignment_and_bump)
{
	struct orch_slot *a = ra(_metadata, self->o, 3, 1, 0);
	struct orch_slot *b = ra(_metadata, self->o, 3, 1025, 1 * K);
	struct orch_slot *c = ra(_metadata, self->o, 3, 0, 0);
	struct orch_slot *d = ra(_metadata, self->o, 3, 1024, 3 * K);

	EXPECT_EQ(4 * K, orch_ring_used(self->o, 3));
	EXPECT_EQ(4u, orch_ring_live(self->o, 3));
	EXPECT_EQ(0u, orch_ring_live(self->o, 2));	/* rings are separate */
	orch_ring_release(self->o, a);
	orch_ring_release(self->o, b);
	orch_ring_release(self->o, c);
	orch_ring_release(self->o, d);
	EXPECT_EQ(0u, orch_ring_used(self->o, 3));
}

TEST_F(ring, fifo_reclaim_waits_for_the_head)
{
	struct orch_alloc_result res;
	struct orch_slot *a = ra(_metadata, self->o, 1, 400 * K, 0);
	struct orch_slot *b = ra(_metadata, self->o, 1, 400 * K, 400 * K);

	/* 300K fits neither at the end nor before the tail (0). */
	EXPECT_EQ(-ETIMEDOUT, orch_ring_alloc(self->o, 1, 300 * K, &res));
	EXPECT_NE(NULL, strstr(pto_orch_error(self->o), "HeapRing exhausted"));
	orch_ring_release(self->o, b);	/* not the head: nothing moves */
	EXPECT_EQ(800 * K, orch_ring_used(self->o, 1));
	EXPECT_EQ(2u, orch_ring_live(self->o, 1));
	EXPECT_TRUE(b->ring_released);	/* marked, waiting for a */
	orch_ring_release(self->o, a);	/* head: both go */
	EXPECT_EQ(0u, orch_ring_used(self->o, 1));
	EXPECT_EQ(0u, orch_ring_live(self->o, 1));
	/* Empty: the next allocation restarts at offset 0. */
	a = ra(_metadata, self->o, 1, 600 * K, 0);
	orch_ring_release(self->o, a);
}

TEST_F(ring, wrap_around_and_full)
{
	struct orch_alloc_result res;
	struct orch_slot *a = ra(_metadata, self->o, 0, 400 * K, 0);
	struct orch_slot *b = ra(_metadata, self->o, 0, 400 * K, 400 * K);
	struct orch_slot *c, *d, *e;

	orch_ring_release(self->o, a);		/* tail = 400K */
	EXPECT_EQ(400 * K, orch_ring_used(self->o, 0));
	/* 300K does not fit in [800K, 1024K): wraps to 0, charged the
	 * skipped end too. */
	c = ra(_metadata, self->o, 0, 300 * K, 0);
	EXPECT_EQ(400 * K + 224 * K + 300 * K, orch_ring_used(self->o, 0));
	d = ra(_metadata, self->o, 0, 100 * K, 300 * K);
	EXPECT_EQ(1024 * K, orch_ring_used(self->o, 0));	/* top == tail: full */
	EXPECT_EQ(-ETIMEDOUT, orch_ring_alloc(self->o, 0, 1, &res));
	orch_ring_release(self->o, b);		/* tail = 800K */
	EXPECT_EQ(624 * K, orch_ring_used(self->o, 0));
	e = ra(_metadata, self->o, 0, 1, 400 * K);
	orch_ring_release(self->o, c);
	orch_ring_release(self->o, d);
	orch_ring_release(self->o, e);
	EXPECT_EQ(0u, orch_ring_used(self->o, 0));
}

TEST_F(ring, window_full_then_release)
{
	struct orch_slot *s[8];
	struct orch_alloc_result res;
	int i;

	for (i = 0; i < 8; i++)
		s[i] = ra(_metadata, self->o, 2, 0, 0);
	EXPECT_EQ(-ETIMEDOUT, orch_ring_alloc(self->o, 2, 0, &res));
	EXPECT_NE(NULL, strstr(pto_orch_error(self->o), "task window full"));
	/* Other rings are unaffected by ring 2's pressure. */
	orch_ring_release(self->o, ra(_metadata, self->o, 1, 0, 0));
	orch_ring_release(self->o, s[0]);
	/* The freed position is reused: same slot, stable address. */
	EXPECT_EQ(s[0], ra(_metadata, self->o, 2, 0, 0));
	for (i = 0; i < 8; i++)
		orch_ring_release(self->o, s[i]);
	EXPECT_EQ(0u, orch_ring_live(self->o, 2));
}

/*
 * Zero-byte allocs take a lock-free path that trusts a cached copy of
 * last_alive. It must hand out exactly the slot at seq_next, in FIFO
 * order across wraps, never a live one: a release that is not at the
 * head must not make room, and heap allocs interleaved on the locked
 * path must share the same sequence.
 */
TEST_F(ring, zero_byte_allocs_follow_fifo_across_wraps)
{
	struct orch_ring *ring = &self->o->rings[1];
	struct orch_slot *live[8];
	struct orch_alloc_result res;
	uint64_t seq = 0;
	int round, i;

	for (round = 0; round < 5; round++) {
		for (i = 0; i < 8; i++, seq++) {
			uint64_t bytes = (i % 3 == 1) ? K : 0;

			ASSERT_EQ(0, orch_ring_alloc(self->o, 1, bytes, &res));
			live[i] = res.slot;
			EXPECT_EQ(&ring->slots[seq % 8], res.slot);
			EXPECT_FALSE(res.slot->ring_released);
			if (!bytes)	/* records the cursor, charges nothing */
				EXPECT_EQ(0u, res.slot->heap_charged);
		}
		EXPECT_EQ(8u, orch_ring_live(self->o, 1));
		/* Full. Releasing a non-head slot makes no room. */
		EXPECT_EQ(-ETIMEDOUT, orch_ring_alloc(self->o, 1, 0, &res));
		orch_ring_release(self->o, live[3]);
		EXPECT_EQ(-ETIMEDOUT, orch_ring_alloc(self->o, 1, 0, &res));
		EXPECT_EQ(8u, orch_ring_live(self->o, 1));
		/* The head goes: exactly its position comes back. */
		orch_ring_release(self->o, live[0]);
		EXPECT_EQ(7u, orch_ring_live(self->o, 1));
		ASSERT_EQ(0, orch_ring_alloc(self->o, 1, 0, &res));
		EXPECT_EQ(&ring->slots[seq % 8], res.slot);
		EXPECT_EQ(live[0], res.slot);
		seq++;
		EXPECT_EQ(-ETIMEDOUT, orch_ring_alloc(self->o, 1, 0, &res));
		/* Drain: newest first, the head (live[1]) last. */
		orch_ring_release(self->o, res.slot);
		for (i = 7; i >= 2; i--)
			if (i != 3)
				orch_ring_release(self->o, live[i]);
		EXPECT_EQ(8u, orch_ring_live(self->o, 1));
		orch_ring_release(self->o, live[1]);
		EXPECT_EQ(0u, orch_ring_live(self->o, 1));
		EXPECT_EQ(0u, orch_ring_used(self->o, 1));
	}
}

/*
 * "At once": well before the back-pressure timeout, raised to 10 s here
 * so that the bound is not one a preempted thread could pass (the
 * fixture's 50 ms are shorter than a loaded host's scheduling delays).
 */
TEST_F(ring, oversized_request_fails_at_once)
{
	struct orch_alloc_result res;
	uint64_t t0;

	self->o->cfg.timeout_ms = 10000;
	t0 = ot_now_ns();
	EXPECT_EQ(-E2BIG, orch_ring_alloc(self->o, 0, 2048 * K, &res));
	EXPECT_LT(ot_now_ns() - t0, 5000 * 1000000ULL);	/* no wait */
	EXPECT_NE(NULL, strstr(pto_orch_error(self->o), "increase heap_ring_size"));
	/* Sizes whose alignment would wrap to 0 are as oversized. */
	EXPECT_EQ(-E2BIG, orch_ring_alloc(self->o, 0, UINT64_MAX, &res));
	EXPECT_EQ(-E2BIG, orch_ring_alloc(self->o, 0, UINT64_MAX - 1000, &res));
	EXPECT_EQ(0u, orch_ring_live(self->o, 0));
}

/*
 * Back-pressure hysteresis (ring.c): a waiter on a full window is woken
 * when an eighth of it is free, not by each release; and a batch that
 * never comes (slots pinned by the waiter's own open scope) costs it the
 * recheck bound, never the timeout.
 */
struct waiter {
	pto_orch *o;
	int ret;
	_Atomic int done;
	uint64_t t_done;
};

static void *wait_for_slot(void *arg)
{
	struct waiter *w = arg;
	struct orch_alloc_result res;

	w->ret = orch_ring_alloc(w->o, 1, 0, &res);
	w->t_done = ot_now_ns();
	atomic_store(&w->done, 1);
	if (!w->ret)
		orch_ring_release(w->o, res.slot);
	return NULL;
}

static pto_orch *full_window(struct __test_metadata *_metadata,
			     struct orch_slot **s, uint32_t window)
{
	struct pto_orch_config cfg = { .heap_ring_size = 64 * K,
				       .task_window = window,
				       .timeout_ms = 5000 };
	struct orch_alloc_result res;
	pto_orch *o;
	uint32_t i;

	EXPECT_EQ(0, orch_create_manual(&cfg, &o));
	for (i = 0; i < window; i++) {
		EXPECT_EQ(0, orch_ring_alloc(o, 1, 0, &res));
		s[i] = res.slot;
	}
	return o;
}

/* Release the window's slots @s[from..n) and check the ring is empty. */
static void drain_window(struct __test_metadata *_metadata, pto_orch *o,
			 struct orch_slot **s, uint32_t from, uint32_t n)
{
	while (from < n)
		orch_ring_release(o, s[from++]);
	EXPECT_EQ(0u, orch_ring_live(o, 1));
	EXPECT_EQ(0, pto_orch_close(o, 100));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

/* Wait (bounded) until @o's ring 1 has a waiter for a batch of slots. */
static void wait_for_waiter(struct __test_metadata *_metadata, pto_orch *o)
{
	struct orch_ring *ring = &o->rings[1];
	uint64_t t0 = ot_now_ns(), live;

	do {
		pthread_mutex_lock(&ring->mu);
		live = ring->wake_live;
		pthread_mutex_unlock(&ring->mu);
		if (live != UINT64_MAX)
			return;
		ot_sleep_ms(1);
	} while (ot_now_ns() - t0 < 10000 * 1000000ULL);
	ASSERT_NE(UINT64_MAX, live) TH_LOG("the waiter never waited");
}

/*
 * The waiter's own bounds, its recheck and the timeout, are 20 and 30 s
 * (either would end its wait, and it would find the 7 free slots), out
 * of the test's reach however late its threads get a CPU; the releases
 * start once the waiter waits (it would take a free slot without
 * waiting).
 */
TEST(window_waiter_is_woken_per_batch)
{
	struct orch_slot *s[64];
	pto_orch *o = full_window(_metadata, s, 64);
	struct waiter w = { .o = o };
	pthread_t th;
	uint64_t t0;
	int i;

	/* No recheck within the test: only a release may wake the waiter. */
	o->rings[1].recheck_ms = 20000;
	o->cfg.timeout_ms = 30000;
	pthread_create(&th, NULL, wait_for_slot, &w);
	wait_for_waiter(_metadata, o);
	for (i = 0; i < 7; i++)
		orch_ring_release(o, s[i]);
	/* 7 of 64 free: below the batch of 8, the waiter sleeps on. */
	ot_sleep_ms(50);
	EXPECT_EQ(0, atomic_load(&w.done));
	/* The eighth wakes it, long before its recheck would. */
	t0 = ot_now_ns();
	orch_ring_release(o, s[7]);
	pthread_join(th, NULL);
	EXPECT_EQ(0, w.ret);
	EXPECT_LT(w.t_done - t0, 10000 * 1000000ULL);
	drain_window(_metadata, o, s, 8, 64);
}

/*
 * One slot comes free and no more will (the rest stand for slots of the
 * waiter's open scope): the waiter's recheck takes it, though the release
 * leaves it below the batch that would wake it. Its timeout, 30 s, is out
 * of the test's reach however late its threads get a CPU, and the bound
 * of 10 s is far above the recheck; the release comes once the waiter
 * waits (it would take a free slot without waiting).
 */
TEST(window_waiter_takes_a_lone_free_slot)
{
	struct orch_slot *s[64];
	pto_orch *o = full_window(_metadata, s, 64);
	struct waiter w = { .o = o };
	uint64_t t0;
	pthread_t th;

	o->cfg.timeout_ms = 30000;
	pthread_create(&th, NULL, wait_for_slot, &w);
	wait_for_waiter(_metadata, o);
	t0 = ot_now_ns();
	orch_ring_release(o, s[0]);
	pthread_join(th, NULL);
	EXPECT_EQ(0, w.ret);
	EXPECT_LT(w.t_done - t0, 10000 * 1000000ULL);
	drain_window(_metadata, o, s, 1, 64);
}

TEST_HARNESS_MAIN
