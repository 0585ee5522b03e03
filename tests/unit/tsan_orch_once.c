// SPDX-License-Identifier: MIT
/*
 * The once-per-task gate (lib/orch/once.h) under TSan, as the args dump
 * uses it: NTHREADS member threads reach one task's gate together; the
 * one told RUN writes the task's "capture" with plain stores, and every
 * thread then reads it as its member's payload would go out. A missing
 * acquire / release pair is a reported race; the work running other
 * than once, or a member reading it unfinished, fails the counts.
 * Seeded: each task's start skew comes from the printed seed.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "kselftest_harness.h"
#include "orch/once.h"

#define NTHREADS 4
#define NTASKS 2000
#define WORDS 16

struct task {
	struct orch_once g;
	uint64_t capture[WORDS];	/* plain: ordered by the gate alone */
	_Atomic int runs;
	_Atomic int bad;
};

static struct task tasks[NTASKS];
static pthread_barrier_t start;
static unsigned int seed;

static void *member_main(void *p)
{
	unsigned int me = (unsigned int)(uintptr_t)p, r, i, skew;
	unsigned int rs = seed + me;

	pthread_barrier_wait(&start);
	for (r = 0; r < NTASKS; r++) {
		struct task *t = &tasks[r];

		for (skew = rand_r(&rs) % 64; skew; skew--)
			__asm__ volatile("" ::: "memory");
		switch (orch_once_step(&t->g)) {
		case ORCH_ONCE_RUN:
			for (i = 0; i < WORDS; i++)
				t->capture[i] = r * WORDS + i + 1;
			atomic_fetch_add(&t->runs, 1);
			orch_once_finish(&t->g);
			break;
		case ORCH_ONCE_WAIT:
			orch_once_wait(&t->g);
			break;
		case ORCH_ONCE_DONE:
			break;
		}
		/* The member's payload goes out: the capture is whole. */
		for (i = 0; i < WORDS; i++)
			if (t->capture[i] != r * WORDS + i + 1)
				atomic_fetch_add(&t->bad, 1);
	}
	return NULL;
}

TEST(members_race_to_one_gate)
{
	pthread_t tid[NTHREADS];
	unsigned int i;
	int runs = 0, bad = 0;

	seed = getenv("PTO_STRESS_SEED") ? (unsigned int)atoi(getenv("PTO_STRESS_SEED")) :
	       (unsigned int)time(NULL);
	printf("# seed %u (PTO_STRESS_SEED=%u to repeat)\n", seed, seed);
	for (i = 0; i < NTASKS; i++)
		orch_once_reset(&tasks[i].g);
	ASSERT_EQ(0, pthread_barrier_init(&start, NULL, NTHREADS));
	for (i = 0; i < NTHREADS; i++)
		ASSERT_EQ(0, pthread_create(&tid[i], NULL, member_main,
					    (void *)(uintptr_t)i));
	for (i = 0; i < NTHREADS; i++)
		pthread_join(tid[i], NULL);
	pthread_barrier_destroy(&start);
	for (i = 0; i < NTASKS; i++) {
		runs += atomic_load(&tasks[i].runs) == 1;
		bad += atomic_load(&tasks[i].bad);
	}
	EXPECT_EQ(NTASKS, runs);
	EXPECT_EQ(0, bad);
}

TEST_HARNESS_MAIN
