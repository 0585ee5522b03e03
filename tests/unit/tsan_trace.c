// SPDX-License-Identifier: MIT
/*
 * The run-trace recorder under ThreadSanitizer (a race it reports fails
 * the test): threads register buffers and record, some into full
 * buffers, while another thread names functions and writes the trace,
 * as a writer called during a run would (lib/trace/trace.h).
 */
#include <pthread.h>
#include <stdio.h>
#include <linux/pto.h>
#include "kselftest_harness.h"
#include "trace/trace.h"

#define RECORDERS 4
#define PER_THREAD 2000

struct rec_arg {
	struct trace *t;
	uint32_t index;
	int ret;
};

static void *recorder(void *arg)
{
	struct rec_arg *a = arg;
	struct trace_buf *b;
	uint64_t i;

	a->ret = trace_buf_get(a->t, TRACE_ROLE_SCHED, a->index, &b);
	for (i = 0; !a->ret && i < PER_THREAD; i++) {
		trace_task(b, TRACE_DISPATCHED, 0, a->index * PER_THREAD + i, 1,
			   (uint16_t)a->index);
		trace_phase(b, TRACE_PHASE_REAP, true);
		trace_task_at(b, TRACE_STARTED, trace_now(), 0,
			      a->index * PER_THREAD + i, 1, (uint16_t)a->index);
		trace_task_at(b, TRACE_ENDED, trace_now(), 0,
			      a->index * PER_THREAD + i, 1, (uint16_t)a->index);
		trace_phase(b, TRACE_PHASE_REAP, false);
		if (i)
			trace_edge(b, 0, a->index * PER_THREAD + i - 1,
				   a->index * PER_THREAD + i);
	}
	return NULL;
}

TEST(record_while_writing)
{
	struct rec_arg a[RECORDERS];
	pthread_t th[RECORDERS];
	uint64_t records, dropped, total;
	struct trace *t;
	FILE *null;
	int i, k;

	/* 4000 records a thread fit; the other 8000 are dropped. */
	ASSERT_EQ(0, trace_create(sizeof(struct trace_buf) +
				  4000 * sizeof(struct trace_rec),
				  RECORDERS, &t));
	null = fopen("/dev/null", "w");
	ASSERT_NE(NULL, null);
	for (i = 0; i < RECORDERS; i++) {
		a[i] = (struct rec_arg){ t, (uint32_t)i, 0 };
		pthread_create(&th[i], NULL, recorder, &a[i]);
	}
	for (k = 0; k < 20; k++) {
		char name[16];

		snprintf(name, sizeof(name), "f%d", k);
		EXPECT_EQ(0, trace_func_name(t, 1, name));
		EXPECT_EQ(0, trace_write_json(t, null));
		trace_counts(t, &records, &dropped);
	}
	for (i = 0; i < RECORDERS; i++) {
		pthread_join(th[i], NULL);
		EXPECT_EQ(0, a[i].ret);
	}
	trace_counts(t, &records, &dropped);
	total = (uint64_t)RECORDERS * (6 * PER_THREAD - 1);
	EXPECT_EQ(RECORDERS * 4000, records);
	EXPECT_EQ(total - records, dropped);
	EXPECT_EQ(0, trace_write_json(t, null));
	fclose(null);
	trace_destroy(t);
}

/* A recorder filling its buffer with phases as fast as it can, as a
 * scheduler thread still running after the run's wait does. */
static void *phase_recorder(void *arg)
{
	struct rec_arg *a = arg;
	struct trace_buf *b;

	a->ret = trace_buf_get(a->t, TRACE_ROLE_SCHED, a->index, &b);
	while (!a->ret && __atomic_load_n(&b->n, __ATOMIC_RELAXED) < b->cap)
		trace_phase(b, TRACE_PHASE_REAP, true);
	return NULL;
}

/* Writes while every buffer grows: each write copies the counts it sized
 * its array for (an overrun is ASan's to report, asan_trace). */
TEST(write_while_buffers_grow)
{
	enum { CAP = 200000, GROWERS = 2 };
	struct rec_arg a[GROWERS];
	pthread_t th[GROWERS];
	uint64_t records, dropped;
	struct trace *t;
	int i, writes = 0;
	FILE *null;

	ASSERT_EQ(0, trace_create(sizeof(struct trace_buf) +
				  CAP * sizeof(struct trace_rec), GROWERS, &t));
	null = fopen("/dev/null", "w");
	ASSERT_NE(NULL, null);
	for (i = 0; i < GROWERS; i++) {
		a[i] = (struct rec_arg){ t, (uint32_t)i, 0 };
		pthread_create(&th[i], NULL, phase_recorder, &a[i]);
	}
	do {
		ASSERT_EQ(0, trace_write_json(t, null));
		writes++;
		trace_counts(t, &records, &dropped);
	} while (records < (uint64_t)GROWERS * CAP);
	for (i = 0; i < GROWERS; i++) {
		pthread_join(th[i], NULL);
		EXPECT_EQ(0, a[i].ret);
	}
	TH_LOG("%d writes while %d buffers filled", writes, GROWERS);
	EXPECT_EQ(0u, dropped);
	fclose(null);
	trace_destroy(t);
}

TEST_HARNESS_MAIN
