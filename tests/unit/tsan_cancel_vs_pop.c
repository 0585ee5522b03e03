// SPDX-License-Identifier: MIT
/*
 * Cancellation of a failed run's READY slots races the workers' pops:
 * claim_ready (cancel.c) and claim_running (ready.c) both act on a READY
 * slot's state, its ready-queue links and its unlaunched flag, and
 * claim_running does so under sched_mu alone. Under
 * TSan, any access to those outside sched_mu is a reported race.
 */
#include <stdio.h>
#include <stdlib.h>
#include "kselftest_harness.h"
#include "orch_test.h"

static int k_spin(struct pto_task_ctx *c)
{
	int i;

	(void)c;
	for (i = 0; i < 2000; i++)
		__asm__ volatile("" ::: "memory");
	return 0;
}

static int build_then_fail(pto_orch *o, void *arg)
{
	static const struct pto_callable k = { .fn = k_spin };
	int n = (int)(intptr_t)arg, i, err = 0;
	struct pto_task_args a;

	pto_args_init(&a);
	for (i = 0; i < n && !err; i++)
		err = pto_submit_sub(o, &k, &a, NULL);
	pto_args_fini(&a);
	/* READY slots still queued when the function fails: cancelled
	 * while the workers pop them. */
	return err ?: -ENOTRECOVERABLE;
}

TEST(cancellation_races_dispatch)
{
	struct pto_worker_desc w[4] = {
		OT_WORKER(0, PTO_WORKER_SUB), OT_WORKER(1, PTO_WORKER_SUB),
		OT_WORKER(2, PTO_WORKER_SUB), OT_WORKER(3, PTO_WORKER_SUB),
	};
	struct pto_orch_config cfg = { .heap_ring_size = 1 << 20, .task_window = 256,
				       .timeout_ms = 5000, .nworkers = 4, .workers = w };
	pto_orch *o;
	int i;

	ASSERT_EQ(0, pto_orch_create_inproc(&cfg, &o));
	for (i = 0; i < 200; i++) {
		pto_run *r = NULL;

		EXPECT_EQ(-ENOTRECOVERABLE,
			  pto_run_start(o, build_then_fail, (void *)(intptr_t)(8 + i % 64), &r));
		if (r) {
			EXPECT_EQ(-ENOTRECOVERABLE, pto_run_wait(r, 5000));
			pto_run_release(r);
		}
	}
	EXPECT_EQ(0, pto_orch_close(o, 5000));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

TEST_HARNESS_MAIN
