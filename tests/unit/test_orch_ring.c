// SPDX-License-Identifier: MIT
/*
 * Heap-ring and slot-store internals (Documentation/orchestrator.md,
 * "Slot storage", "Heap rings and back-pressure"): bump allocation, 1024
 * alignment, FIFO reclamation with out-of-order releases, wrap-around,
 * full-vs-empty, per-ring independence, no slot limit, chunk recycling,
 * the timeout counted from the last progress. Drives orch_ring_claim /
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
	struct orch_slot *s = NULL;

	EXPECT_EQ(0, orch_ring_claim(o, r, bytes, &s));
	if (s && bytes) {
		EXPECT_EQ(want_off, s->heap_off);
	} else if (s) {
		EXPECT_EQ(0u, s->heap_charged);
	}
	return s;
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
	struct orch_slot *a = ra(_metadata, self->o, 1, 400 * K, 0);
	struct orch_slot *b = ra(_metadata, self->o, 1, 400 * K, 400 * K);
	struct orch_slot *x;

	/* 300K fits neither at the end nor before the tail (0). */
	EXPECT_EQ(-ETIMEDOUT, orch_ring_claim(self->o, 1, 300 * K, &x));
	EXPECT_NE(NULL, strstr(pto_orch_error(self->o), "HeapRing exhausted"));
	orch_ring_release(self->o, b);	/* not the head: nothing moves */
	EXPECT_EQ(800 * K, orch_ring_used(self->o, 1));
	EXPECT_EQ(1u, orch_ring_live(self->o, 1));	/* b is released */
	EXPECT_EQ(0u, b->heap_charged);	/* marked, waiting for a */
	orch_ring_release(self->o, a);	/* head: both go */
	EXPECT_EQ(0u, orch_ring_used(self->o, 1));
	EXPECT_EQ(0u, orch_ring_live(self->o, 1));
	/* Empty: the next allocation restarts at offset 0. */
	a = ra(_metadata, self->o, 1, 600 * K, 0);
	orch_ring_release(self->o, a);
}

TEST_F(ring, wrap_around_and_full)
{
	struct orch_slot *a = ra(_metadata, self->o, 0, 400 * K, 0);
	struct orch_slot *b = ra(_metadata, self->o, 0, 400 * K, 400 * K);
	struct orch_slot *c, *d, *e, *x;

	orch_ring_release(self->o, a);		/* tail = 400K */
	EXPECT_EQ(400 * K, orch_ring_used(self->o, 0));
	/* 300K does not fit in [800K, 1024K): wraps to 0, charged the
	 * skipped end too. */
	c = ra(_metadata, self->o, 0, 300 * K, 0);
	EXPECT_EQ(400 * K + 224 * K + 300 * K, orch_ring_used(self->o, 0));
	d = ra(_metadata, self->o, 0, 100 * K, 300 * K);
	EXPECT_EQ(1024 * K, orch_ring_used(self->o, 0));	/* top == tail: full */
	EXPECT_EQ(-ETIMEDOUT, orch_ring_claim(self->o, 0, 1, &x));
	orch_ring_release(self->o, b);		/* tail = 800K */
	EXPECT_EQ(624 * K, orch_ring_used(self->o, 0));
	e = ra(_metadata, self->o, 0, 1, 400 * K);
	orch_ring_release(self->o, c);
	orch_ring_release(self->o, d);
	orch_ring_release(self->o, e);
	EXPECT_EQ(0u, orch_ring_used(self->o, 0));
}

/* task_window is a sizing hint: a ring holds as many live slots as the
 * work needs, each at a stable address, and other rings are unaffected. */
TEST_F(ring, window_is_a_hint_not_a_limit)
{
	enum { N = 5000 };
	struct orch_slot **s = calloc(N, sizeof(*s));
	int i;

	ASSERT_NE(NULL, s);
	for (i = 0; i < N; i++)
		s[i] = ra(_metadata, self->o, 2, 0, 0);
	EXPECT_EQ((uint64_t)N, orch_ring_live(self->o, 2));
	EXPECT_EQ(0u, orch_ring_live(self->o, 1));
	orch_ring_release(self->o, ra(_metadata, self->o, 1, 0, 0));
	for (i = 0; i < N; i++) {
		EXPECT_EQ(s[i], orch_store_lookup(&self->o->store, s[i]->task_id));
		if (i)
			ASSERT_EQ(s[i - 1]->task_id + 1, s[i]->task_id);
	}
	for (i = 0; i < N; i++)
		orch_ring_release(self->o, s[i]);
	EXPECT_EQ(0u, orch_ring_live(self->o, 2));
	free(s);
}

/*
 * Slots come in task-id order from chunks; a chunk whose slots are all
 * FREE is recycled for later ids, so a steady stream maps no new chunk,
 * and out-of-order releases free a chunk only with its last slot.
 */
TEST_F(ring, chunks_are_recycled_once_every_slot_is_free)
{
	enum { N = 3 * ORCH_CHUNK_SLOTS };
	struct orch_slot *s[N];
	uint64_t mapped, round;
	int i;

	for (i = 0; i < N; i++)
		s[i] = ra(_metadata, self->o, 0, 0, 0);
	mapped = orch_store_mapped(&self->o->store);
	EXPECT_GE(mapped, 3u);
	/* Newest first, every chunk but the first: none recycled until
	 * its last slot goes. */
	for (i = N - 1; i > 0; i--)
		orch_ring_release(self->o, s[i]);
	EXPECT_LT(orch_store_in_service(&self->o->store), mapped);
	EXPECT_NE(NULL, orch_store_lookup(&self->o->store, 5));
	orch_ring_release(self->o, s[0]);
	EXPECT_EQ(0u, orch_ring_live(self->o, 0));
	/* A chunk fully FREE leaves the directory: its ids name no slot. */
	EXPECT_EQ(NULL, orch_store_lookup(&self->o->store, 5));
	for (round = 0; round < 20; round++)
		for (i = 0; i < (int)ORCH_CHUNK_SLOTS; i++)
			orch_ring_release(self->o, ra(_metadata, self->o, 0, 0, 0));
	EXPECT_EQ(mapped, orch_store_mapped(&self->o->store));
	EXPECT_EQ(NULL, orch_store_lookup(&self->o->store, 5));
	/* The directory spans only chunks in service. */
	EXPECT_GE(self->o->store.dir_lo, self->o->store.dir_hi - 1);
}

/*
 * "At once": well before the back-pressure timeout, raised to 10 s here
 * so that the bound is not one a preempted thread could pass (the
 * fixture's 50 ms are shorter than a loaded host's scheduling delays).
 */
TEST_F(ring, oversized_request_fails_at_once)
{
	struct orch_slot *x;
	uint64_t t0;

	self->o->cfg.timeout_ms = 10000;
	t0 = ot_now_ns();
	EXPECT_EQ(-E2BIG, orch_ring_claim(self->o, 0, 2048 * K, &x));
	EXPECT_LT(ot_now_ns() - t0, 5000 * 1000000ULL);	/* no wait */
	EXPECT_NE(NULL, strstr(pto_orch_error(self->o), "increase heap_ring_size"));
	/* Sizes whose alignment would wrap to 0 are as oversized. */
	EXPECT_EQ(-E2BIG, orch_ring_claim(self->o, 0, UINT64_MAX, &x));
	EXPECT_EQ(-E2BIG, orch_ring_claim(self->o, 0, UINT64_MAX - 1000, &x));
	EXPECT_EQ(0u, orch_ring_live(self->o, 0));
}

/*
 * Heap back-pressure from another thread: the waiter asks for more than
 * is free; the releases come once it waits (ring->waiting). The first
 * test's release frees the head and wakes it; in the second, three
 * releases, each short of the request, come 0.8 s apart with a 2 s
 * timeout: 2.4 s from the first wait, but never 2 s without progress.
 */
struct waiter {
	pto_orch *o;
	uint64_t bytes;
	int ret;
	_Atomic int done;
	uint64_t t_done;
};

static void *wait_for_heap(void *arg)
{
	struct waiter *w = arg;
	struct orch_slot *s = NULL;

	w->ret = orch_ring_claim(w->o, 1, w->bytes, &s);
	w->t_done = ot_now_ns();
	atomic_store(&w->done, 1);
	if (!w->ret)
		orch_ring_release(w->o, s);
	return NULL;
}

/* Four 256 KiB allocations fill ring 1 of a 1 MiB heap. */
static pto_orch *full_heap(struct __test_metadata *_metadata,
			   struct orch_slot **s, uint32_t timeout_ms)
{
	struct pto_orch_config cfg = { .heap_ring_size = 1024 * K,
				       .timeout_ms = timeout_ms };
	pto_orch *o;
	int i;

	EXPECT_EQ(0, orch_create_manual(&cfg, &o));
	for (i = 0; i < 4; i++)
		EXPECT_EQ(0, orch_ring_claim(o, 1, 256 * K, &s[i]));
	return o;
}

static void wait_for_waiter(struct __test_metadata *_metadata, pto_orch *o)
{
	struct orch_ring *ring = &o->rings[1];
	uint64_t t0 = ot_now_ns();
	bool waiting;

	do {
		pthread_mutex_lock(&ring->mu);
		waiting = ring->waiting;
		pthread_mutex_unlock(&ring->mu);
		if (waiting)
			return;
		ot_sleep_ms(1);
	} while (ot_now_ns() - t0 < 10000 * 1000000ULL);
	ASSERT_TRUE(waiting) TH_LOG("the waiter never waited");
}

static void finish(struct __test_metadata *_metadata, pto_orch *o,
		   struct orch_slot **s, int from)
{
	while (from < 4)
		orch_ring_release(o, s[from++]);
	EXPECT_EQ(0u, orch_ring_live(o, 1));
	EXPECT_EQ(0u, orch_ring_used(o, 1));
	EXPECT_EQ(0, pto_orch_close(o, 100));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

TEST(heap_waiter_is_woken_by_a_head_release)
{
	struct orch_slot *s[4];
	pto_orch *o = full_heap(_metadata, s, 30000);
	struct waiter w = { .o = o, .bytes = 200 * K };
	pthread_t th;
	uint64_t t0;

	pthread_create(&th, NULL, wait_for_heap, &w);
	wait_for_waiter(_metadata, o);
	orch_ring_release(o, s[1]);	/* not the head: no room */
	ot_sleep_ms(50);
	EXPECT_EQ(0, atomic_load(&w.done));
	t0 = ot_now_ns();
	orch_ring_release(o, s[0]);	/* the head: 512 KiB back */
	pthread_join(th, NULL);
	EXPECT_EQ(0, w.ret);
	EXPECT_LT(w.t_done - t0, 10000 * 1000000ULL);
	finish(_metadata, o, s, 2);
}

TEST(heap_timeout_counts_from_the_last_progress)
{
	struct orch_slot *s[4];
	pto_orch *o = full_heap(_metadata, s, 2000);
	struct waiter w = { .o = o, .bytes = 768 * K };
	uint64_t t0;
	pthread_t th;
	int i;

	pthread_create(&th, NULL, wait_for_heap, &w);
	wait_for_waiter(_metadata, o);
	t0 = ot_now_ns();
	for (i = 0; i < 3; i++) {
		ot_sleep_ms(800);
		EXPECT_EQ(0, atomic_load(&w.done)) TH_LOG("release %d", i);
		orch_ring_release(o, s[i]);
	}
	pthread_join(th, NULL);
	EXPECT_EQ(0, w.ret) TH_LOG("%s", pto_orch_error(o));
	EXPECT_GT(w.t_done - t0, 2000 * 1000000ULL);	/* past one timeout */
	finish(_metadata, o, s, 3);
}

TEST_HARNESS_MAIN
