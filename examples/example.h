/* SPDX-License-Identifier: MIT */
/*
 * Shared scaffolding of the examples: open a device, create an orchestrator
 * on it, run and time a DAG, report in TAP so the VM suite counts each
 * example's checks.
 *
 * Each example defines `int ex_NAME(const struct ex_opts *)` with
 * EX_MAIN(NAME): built alone it is a program (`NAME [-d N] [--clusters M]
 * [--trace FILE] [--route R] [--dump-args LEVEL] [--dump-dir DIR]`);
 * built with -DEX_NO_MAIN it is linked into `ptoctl run NAME`.
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
#include "examples.h"

static int ex_test_no;
static int ex_failed;
/* --trace FILE: ex_close() writes the orchestrator's run trace there. */
static const char *ex_trace_path;
/* --dump-args: the directory the runs' args dump files go to; NULL off. */
static const char *ex_dump_dir;

/* Bytes of run trace per recording thread with --trace (40 a record). */
#define EX_TRACE_BYTES (1u << 20)

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

/* Open the device and create an orchestrator on it (dies on failure). */
static inline void ex_open(const struct ex_opts *opts,
			   const struct pto_orch_config *ocfg,
			   struct pto_dev **dev, pto_orch **o)
{
	struct pto_sched_config sc = { .clusters = opts->clusters };
	struct pto_orch_config oc = PTO_ZERO_INIT;
	char what[64];
	int ret;

	snprintf(what, sizeof(what), "open /dev/pto%u", opts->dev);
	ret = pto_dev_open(opts->dev, dev);
	if (ret == -ENOENT)
		printf("# no /dev/pto%u: pto.ko not loaded, or loaded with fewer devices (its devices= parameter, default 1)\n",
		       opts->dev);
	if (ret)
		ex_die(what, ret);
	if (!o)
		return;
	/* The library's -EINVAL alone would not say which number is wrong. */
	if (opts->clusters) {
		struct pto_dev_info info;

		ret = pto_dev_info(*dev, &info);
		if (ret)
			ex_die("device info", ret);
		if (opts->clusters > info.clusters) {
			printf("not ok %d --clusters %u: /dev/pto%u has %u clusters\n",
			       ++ex_test_no, opts->clusters, opts->dev,
			       info.clusters);
			exit(1);
		}
	}
	if (opts->trace) {
		if (ocfg)
			oc = *ocfg;
		oc.trace_bytes = EX_TRACE_BYTES;
		ocfg = &oc;
		ex_trace_path = opts->trace;
	}
	ret = pto_orch_create_device(*dev, ocfg, &sc, o);
	if (ret)
		ex_die("orchestrator on the device", ret);
	if (opts->dump_level) {
		ret = pto_orch_dump_args(*o, opts->dump_level, opts->dump_dir);
		if (ret)
			ex_die("args dump", ret);
		ex_dump_dir = opts->dump_dir;
	}
}

/*
 * Submit @fn as a run, wait for it, and print the timings: submit (the
 * orchestration function, on this thread), run (until the last task
 * completed), tasks/s over both, doorbell ioctls and scheduler sleeps.
 */
static inline int ex_run(pto_orch *o, pto_orch_fn fn, void *arg,
			 unsigned long tasks)
{
	struct pto_sched_stats s0, s1;
	double t0, t1, t2;
	pto_run *r;
	int ret;

	char why[256] = "";

	pto_orch_sched_stats(o, &s0);
	t0 = ex_now();
	ret = pto_run_start(o, fn, arg, &r);
	t1 = ex_now();
	/* A construction error's reason is the orchestrator's (this thread
	 * built the run); an execution error's is the run's: which core,
	 * which device error. */
	if (ret)
		snprintf(why, sizeof(why), "%s", pto_orch_error(o));
	if (r) {
		int wret = pto_run_wait(r, -1);

		if (!ret && wret) {
			ret = wret;
			snprintf(why, sizeof(why), "%s", pto_run_error(r));
		}
		pto_run_release(r);
	}
	t2 = ex_now();
	pto_orch_sched_stats(o, &s1);
	printf("# %lu tasks: submit %.3f ms, run %.3f ms, %.0f tasks/s, "
	       "%llu doorbells, %llu sleeps\n", tasks, (t1 - t0) * 1e3,
	       (t2 - t0) * 1e3, tasks / (t2 - t0),
	       (unsigned long long)(s1.doorbells - s0.doorbells),
	       (unsigned long long)(s1.sleeps - s0.sleeps));
	if (ret)
		printf("# %s: %s\n", pto_strerror(ret), why);
	return ret;
}

/*
 * Close and destroy @o, a TAP check each; returns close's result. A close
 * that timed out leaves the scheduler threads running on the device and
 * its buffers: the caller then must not free them (nor the device).
 */
static inline int ex_close(pto_orch *o, const char *name)
{
	char what[96];
	int ret;

	if (ex_trace_path) {
		ret = pto_orch_trace_write(o, ex_trace_path);
		snprintf(what, sizeof(what), "%s: run trace written", name);
		ex_check(ret == 0, what);
		if (ret)
			printf("# %s: %s\n", ex_trace_path, pto_strerror(ret));
		else
			printf("# run trace: %s (ptoctl trace summary %s)\n",
			       ex_trace_path, ex_trace_path);
	}
	if (ex_dump_dir)
		printf("# args dump: %s/args_dump (ptoctl dump %s)\n",
		       ex_dump_dir, ex_dump_dir);
	ret = pto_orch_close(o, 10000);

	snprintf(what, sizeof(what), "%s: orchestrator drains and closes", name);
	ex_check(ret == 0, what);
	if (ret) {
		printf("# close: %s\n", pto_strerror(ret));
		return ret;
	}
	snprintf(what, sizeof(what), "%s: orchestrator destroyed", name);
	ex_check(pto_orch_destroy(o) == 0, what);
	return 0;
}

#ifdef EX_NO_MAIN
#define EX_MAIN(name) int ex_##name(const struct ex_opts *opts)
#else
#define EX_MAIN(name)							\
	int main(int argc, char **argv)					\
	{								\
		struct ex_opts opts;					\
									\
		if (ex_parse(argc, argv, #name, 0, &opts))		\
			return 2;					\
		return ex_##name(&opts);				\
	}								\
	int ex_##name(const struct ex_opts *opts)
#endif

#endif
