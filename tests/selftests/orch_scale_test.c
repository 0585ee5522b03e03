// SPDX-License-Identifier: GPL-2.0
/*
 * No fixed task window on the device orchestrator
 * (Documentation/orchestrator.md, "Slot storage"): 4096 and 100,000
 * independent noop tasks, and 4096 chained INOUT ones, in one
 * orchestration function with no scope but the outer one, default
 * configuration (a task_window hint of 4096: the old window's size).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <pto/orch.h>
#include <pto/pto.h>
#include <pto/sched.h>
#include "kselftest_harness.h"
#include "pto_selftest.h"

static const struct pto_callable k_noop = { .kernel_id = PTO_FUNC_NOOP };

struct job {
	uint32_t n;
	bool chained;
	uint32_t failed_at;
	char msg[192];
};

static int submit_many(pto_orch *o, void *arg)
{
	struct job *j = arg;
	struct pto_task_args a;
	struct pto_tensor t;
	uint32_t i;
	int ret = 0;

	pto_args_init(&a);
	if (j->chained)
		ret = pto_alloc(o, 4096, &t, NULL);
	for (i = 0; i < j->n && !ret; i++) {
		pto_args_reset(&a);
		if (j->chained)
			pto_args_add_tensor(&a, &t, PTO_INOUT);
		ret = pto_submit_next_level(o, &k_noop, &a, NULL,
					    pto_on_kind(PTO_WORKER_AIV), NULL);
		if (ret)
			j->failed_at = i;
	}
	if (ret)
		snprintf(j->msg, sizeof(j->msg), "%s", pto_orch_error(o));
	pto_args_fini(&a);
	return ret;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A fixture for the timeout: 100,000 tasks take a while under TCG. */
FIXTURE(scale) {
	struct pto_dev *dev;
	pto_orch *o;
};

FIXTURE_SETUP(scale)
{
	ASSERT_EQ(0, pto_dev_open(0, &self->dev));
	ASSERT_EQ(0, pto_orch_create_device(self->dev, NULL, NULL, &self->o));
}

FIXTURE_TEARDOWN(scale)
{
	EXPECT_EQ(0, pto_orch_close(self->o, 30000));
	EXPECT_EQ(0, pto_orch_destroy(self->o));
	pto_dev_close(self->dev);
}

static void run_job(struct __test_metadata *_metadata, pto_orch *o,
		    uint32_t n, bool chained)
{
	struct job j = { .n = n, .chained = chained };
	struct pto_sched_stats st;
	uint64_t t0 = now_ms();

	EXPECT_EQ(0, pto_orch_run(o, submit_many, &j))
		TH_LOG("task %u: %s", j.failed_at, j.msg);
	ASSERT_EQ(0, pto_orch_sched_stats(o, &st));
	EXPECT_EQ((int64_t)n, (int64_t)st.tasks);
	EXPECT_EQ(0, (int64_t)st.errors);
	printf("# %u %s tasks on the device: %llu ms\n", n,
	       chained ? "chained INOUT" : "independent",
	       (unsigned long long)(now_ms() - t0));
	fflush(stdout);
}

TEST_F_TIMEOUT(scale, independent_4096_tasks_in_the_outer_scope, 300)
{
	run_job(_metadata, self->o, 4096, false);
}

TEST_F_TIMEOUT(scale, independent_100000_tasks_in_the_outer_scope, 600)
{
	run_job(_metadata, self->o, 100000, false);
}

TEST_F_TIMEOUT(scale, chained_inout_4096_tasks_in_the_outer_scope, 300)
{
	run_job(_metadata, self->o, 4096, true);
}

TEST_HARNESS_MAIN
