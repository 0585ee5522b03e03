/* SPDX-License-Identifier: MIT */
/*
 * No fixed task window (Documentation/orchestrator.md, "Slot storage"):
 * SCALE_N independent tasks, and SCALE_N chained INOUT tasks, in one
 * orchestration function with no scope but the outer one, on the
 * in-process orchestrator with its default configuration. Included by
 * test_orch_scale.c (sanitizers, a smaller N) and perf_orch_scale.c
 * (-O2, N = 1,000,000, plus the memory figures: SCALE_RSS).
 */
#ifndef ORCH_SCALE_H
#define ORCH_SCALE_H

#include <stdatomic.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "kselftest_harness.h"
#include <pto/orch.h>

static uint64_t sc_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A TAP comment, flushed: each test runs in a child that ends with
 * _exit(), which would drop buffered output. */
#define sc_note(...) do { printf("# " __VA_ARGS__); fflush(stdout); } while (0)

static _Atomic uint64_t sc_ran;

static int sc_count(struct pto_task_ctx *c)
{
	(void)c;
	atomic_fetch_add_explicit(&sc_ran, 1, memory_order_relaxed);
	return 0;
}

/* Not atomic: only the chain's edges keep two increments apart. */
static int sc_inc(struct pto_task_ctx *c)
{
	(*(uint64_t *)(uintptr_t)c->tensors[0].t.data)++;
	return 0;
}

/* A fixture for its timeout alone: at full size a test takes seconds
 * on a loaded host (each new slot's memory is faulted in). */
FIXTURE(scale) {};
FIXTURE_SETUP(scale) {}
FIXTURE_TEARDOWN(scale) {}

static const struct pto_callable SC_COUNT = { .fn = sc_count };
static const struct pto_callable SC_INC = { .fn = sc_inc };

struct sc_job {
	uint64_t n;
	uint64_t *cell;			/* chained: the INOUT tensor */
	void (*probe)(void *);		/* called with every task live */
	void *probe_arg;
	int err;
	uint64_t failed_at;
};

static int sc_independent(pto_orch *o, void *arg)
{
	struct sc_job *j = arg;
	struct pto_task_args a;
	uint64_t i;

	pto_args_init(&a);
	for (i = 0; i < j->n; i++) {
		j->err = pto_submit_sub(o, &SC_COUNT, &a, NULL);
		if (j->err) {
			j->failed_at = i;
			break;
		}
	}
	pto_args_fini(&a);
	if (!j->err && j->probe)
		j->probe(j->probe_arg);
	return j->err;
}

static int sc_chained(pto_orch *o, void *arg)
{
	struct sc_job *j = arg;
	struct pto_tensor t = pto_tensor_host(j->cell, sizeof(*j->cell));
	struct pto_task_args a;
	uint64_t i;

	pto_args_init(&a);
	for (i = 0; i < j->n; i++) {
		pto_args_reset(&a);
		pto_args_add_tensor(&a, &t, PTO_INOUT);
		j->err = pto_submit_sub(o, &SC_INC, &a, NULL);
		if (j->err) {
			j->failed_at = i;
			break;
		}
	}
	pto_args_fini(&a);
	return j->err;
}

TEST_F_TIMEOUT(scale, independent_tasks_in_the_outer_scope_complete, 400)
{
	struct sc_job j = { .n = SCALE_N };
	uint64_t t0 = sc_now_ns();
	pto_orch *o;
	int ret;

	atomic_store(&sc_ran, 0);
	ASSERT_EQ(0, pto_orch_create_inproc(NULL, &o));
	ret = pto_orch_run(o, sc_independent, &j);
	EXPECT_EQ(0, ret) TH_LOG("task %llu: %s", (unsigned long long)j.failed_at,
				 pto_orch_error(o));
	EXPECT_EQ((uint64_t)SCALE_N, atomic_load(&sc_ran));
	EXPECT_EQ(0, pto_orch_close(o, 10000));
	EXPECT_EQ(0, pto_orch_destroy(o));
	sc_note("%u independent tasks: %.1f ms\n", (unsigned)SCALE_N,
		       (double)(sc_now_ns() - t0) / 1e6);
}

TEST_F_TIMEOUT(scale, chained_inout_tasks_complete_in_order, 400)
{
	uint64_t cell = 0, t0 = sc_now_ns();
	struct sc_job j = { .n = SCALE_N, .cell = &cell };
	pto_orch *o;
	int ret;

	ASSERT_EQ(0, pto_orch_create_inproc(NULL, &o));
	ret = pto_orch_run(o, sc_chained, &j);
	EXPECT_EQ(0, ret) TH_LOG("task %llu: %s", (unsigned long long)j.failed_at,
				 pto_orch_error(o));
	EXPECT_EQ((uint64_t)SCALE_N, cell);
	EXPECT_EQ(0, pto_orch_close(o, 10000));
	EXPECT_EQ(0, pto_orch_destroy(o));
	sc_note("%u chained INOUT tasks: %.1f ms\n", (unsigned)SCALE_N,
		       (double)(sc_now_ns() - t0) / 1e6);
}

#ifdef SCALE_RSS
/*
 * Resident set size in bytes (/proc/self/statm, second field), after
 * malloc_trim(): the pages libc keeps of what was freed are not the
 * orchestrator's (memory still allocated stays resident either way).
 */
static uint64_t sc_rss(void)
{
	unsigned long size = 0, res = 0;
	FILE *f;

	malloc_trim(0);
	f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fscanf(f, "%lu %lu", &size, &res) != 2)
			res = 0;
		fclose(f);
	}
	return (uint64_t)res * (uint64_t)sysconf(_SC_PAGESIZE);
}

static void sc_probe_rss(void *arg)
{
	*(uint64_t *)arg = sc_rss();
}

/*
 * Memory per live slot: the RSS the run has grown by with all SCALE_N
 * tasks live (the outer scope holds every one until the function
 * returns), over SCALE_N; documented in Documentation/orchestrator.md.
 * After destroy the RSS is back within 10% of what it was before the
 * create. A first create/run/destroy warms up what the process keeps
 * whatever the orchestrator does (thread stacks, libc's arenas).
 */
TEST_F_TIMEOUT(scale, memory_per_live_slot_and_rss_after_destroy, 400)
{
	struct sc_job warm = { .n = 1000 };
	uint64_t before, live = 0, after;
	struct sc_job j = { .n = SCALE_N, .probe = sc_probe_rss,
			    .probe_arg = &live };
	pto_orch *o;

	ASSERT_EQ(0, pto_orch_create_inproc(NULL, &o));
	ASSERT_EQ(0, pto_orch_run(o, sc_independent, &warm));
	EXPECT_EQ(0, pto_orch_close(o, 10000));
	EXPECT_EQ(0, pto_orch_destroy(o));

	before = sc_rss();
	ASSERT_NE(0u, before);
	ASSERT_EQ(0, pto_orch_create_inproc(NULL, &o));
	EXPECT_EQ(0, pto_orch_run(o, sc_independent, &j));
	EXPECT_EQ(0, pto_orch_close(o, 10000));
	EXPECT_EQ(0, pto_orch_destroy(o));
	after = sc_rss();
	ASSERT_GT(live, before);
	sc_note("RSS: %llu KiB before, %llu KiB with %u live slots (%.0f bytes per slot), %llu KiB after destroy\n",
		       (unsigned long long)before >> 10,
		       (unsigned long long)live >> 10, (unsigned)SCALE_N,
		       (double)(live - before) / SCALE_N,
		       (unsigned long long)after >> 10);
	/* A slot is about 1.2 KiB (struct orch_slot) and its share of the
	 * scope frame; twice that would be a regression. */
	EXPECT_LT((live - before) / SCALE_N, 2600u);
	EXPECT_LE(after, before + before / 10);
}
#endif

#endif
