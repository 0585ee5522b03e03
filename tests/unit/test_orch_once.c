// SPDX-License-Identifier: MIT
/*
 * The once-per-task gate (lib/orch/once.h), its steps forced into each
 * interleaving of two members: the first to step runs the work, a
 * member stepping meanwhile waits, one stepping after the finish goes
 * on, and a reset gate opens again for the slot's next task.
 */
#include <pthread.h>
#include "kselftest_harness.h"
#include "orch/once.h"

TEST(first_step_runs_the_rest_go_on)
{
	struct orch_once g;

	orch_once_reset(&g);
	ASSERT_EQ(ORCH_ONCE_RUN, orch_once_step(&g));
	EXPECT_EQ(ORCH_ONCE_BUSY, atomic_load(&g.state));
	orch_once_finish(&g);
	EXPECT_EQ(ORCH_ONCE_DONE, orch_once_step(&g));
	EXPECT_EQ(ORCH_ONCE_DONE, orch_once_step(&g));
	EXPECT_EQ(ORCH_ONCE_CLOSED, atomic_load(&g.state));
}

TEST(a_step_during_the_work_waits)
{
	struct orch_once g;

	orch_once_reset(&g);
	ASSERT_EQ(ORCH_ONCE_RUN, orch_once_step(&g));
	/* Any number of members stepping mid-work: none runs it again. */
	EXPECT_EQ(ORCH_ONCE_WAIT, orch_once_step(&g));
	EXPECT_EQ(ORCH_ONCE_WAIT, orch_once_step(&g));
	EXPECT_EQ(ORCH_ONCE_BUSY, atomic_load(&g.state));
	orch_once_finish(&g);
	EXPECT_EQ(ORCH_ONCE_DONE, orch_once_step(&g));
}

TEST(reset_opens_it_for_the_next_task)
{
	struct orch_once g;

	orch_once_reset(&g);
	ASSERT_EQ(ORCH_ONCE_RUN, orch_once_step(&g));
	orch_once_finish(&g);
	orch_once_reset(&g);
	EXPECT_EQ(ORCH_ONCE_RUN, orch_once_step(&g));
}

struct waiter {
	struct orch_once *g;
	_Atomic int returned;
};

static void *wait_main(void *p)
{
	struct waiter *w = p;

	orch_once_wait(w->g);
	atomic_store(&w->returned, 1);
	return NULL;
}

/* orch_once_wait() returns only after the finish, not before. */
TEST(wait_returns_after_the_finish)
{
	struct orch_once g;
	struct waiter w = { &g, 0 };
	struct timespec ms = { 0, 1000000 };
	pthread_t tid;
	int i;

	orch_once_reset(&g);
	ASSERT_EQ(ORCH_ONCE_RUN, orch_once_step(&g));
	ASSERT_EQ(0, pthread_create(&tid, NULL, wait_main, &w));
	for (i = 0; i < 20; i++)
		nanosleep(&ms, NULL);
	EXPECT_EQ(0, atomic_load(&w.returned));
	orch_once_finish(&g);
	pthread_join(tid, NULL);
	EXPECT_EQ(1, atomic_load(&w.returned));
}

TEST_HARNESS_MAIN
