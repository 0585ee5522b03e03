/* SPDX-License-Identifier: MIT */
/*
 * Shared scaffolding of the examples: open a device, create an orchestrator
 * on it, report in TAP so the VM suite counts each example's checks.
 */
#ifndef PTO_EXAMPLE_H
#define PTO_EXAMPLE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/pto.h>
#include <pto/orch.h>
#include <pto/pto.h>
#include <pto/sched.h>

static int ex_test_no;
static int ex_failed;

static inline void ex_check(int ok, const char *what)
{
	printf("%sok %d %s\n", ok ? "" : "not ", ++ex_test_no, what);
	if (!ok)
		ex_failed = 1;
}

static inline double ex_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline void ex_die(const char *what, int err)
{
	printf("not ok %d %s: %s\n", ++ex_test_no, what, pto_strerror(err));
	exit(1);
}

/* A mapped GM buffer. */
struct ex_buf {
	struct pto_bo *bo;
	void *map;
	uint64_t size;
};

static inline void ex_buf_alloc(struct pto_dev *dev, uint64_t size,
				struct ex_buf *b)
{
	int ret = pto_bo_alloc(dev, size, 0, &b->bo);

	if (!ret)
		ret = pto_bo_map(b->bo, &b->map);
	if (ret)
		ex_die("GM buffer", ret);
	b->size = size;
}

static inline struct pto_tensor ex_f32(const struct ex_buf *b, uint64_t off,
				       uint64_t n)
{
	return pto_tensor_gm(b->bo, b->map, off, n * 4, PTO_DTYPE_F32);
}

static inline void ex_print_stats(pto_orch *o, unsigned long tasks,
				  double seconds)
{
	struct pto_sched_stats st;

	pto_orch_sched_stats(o, &st);
	printf("# %lu tasks in %.3f ms: %.0f tasks/s, %llu doorbells, %llu sleeps\n",
	       tasks, seconds * 1e3, tasks / seconds,
	       (unsigned long long)st.doorbells, (unsigned long long)st.sleeps);
}

#endif
