// SPDX-License-Identifier: MIT
/* pto-bench: the noop workloads and the orchestrator they run on. */
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <linux/pto.h>
#include "bench.h"
#include "orch/orch.h"

struct pto_dev *g_dev;
uint32_t g_clusters;
uint32_t g_threads;
uint32_t g_spin_us;
uint32_t g_wake_delay_us;
uint64_t g_trace_bytes;

const char *const shape_name[NSHAPE] = {
	"chain", "independent", "fanout", "wavefront",
};

uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int noop(struct pto_task_ctx *c)
{
	(void)c;
	return 0;
}

static const struct pto_callable NOOP = { .fn = noop };
static const struct pto_callable DEV_NOOP = { .kernel_id = PTO_FUNC_NOOP };

/* A noop task: a SUB callback in-process, a noop kernel on any AIV core
 * of the device (one kind, so a dependent task can run on the core its
 * producer just left, which is still spinning). */
static int submit_noop(pto_orch *o, struct pto_task_args *a, long i,
		       struct pto_task *out)
{
	if (!g_dev)
		return pto_submit_sub(o, &NOOP, a, out);
	(void)i;
	return pto_submit_next_level(o, &DEV_NOOP, a, NULL,
				     pto_on_kind(PTO_WORKER_AIV), out);
}

/* Fake, never dereferenced addresses: keys only. */
static struct pto_tensor key(uint64_t i)
{
	struct pto_tensor t = { .data = 0x100000000ULL + i * 64, .nbytes = 64,
				.space = PTO_SPACE_HOST };

	return t;
}

static int batch_scope(pto_orch *o, long i)
{
	int err = 0;

	if (i % BATCH)
		return 0;
	if (i)
		err = pto_scope_end(o);
	return err ?: pto_scope_begin(o);
}

int orch_fn(pto_orch *o, void *arg)
{
	struct job *j = arg;
	struct pto_task_args a;
	struct pto_task kids[FAN];
	uint64_t t0 = now_ns(), c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	long i, w = 1;
	int err = 0, k;

	pto_args_init(&a);
	if (j->shape == WAVE)
		while ((w + 1) * (w + 1) <= j->n)
			w++;
	for (i = 0; i < j->n && !err; i++) {
		struct pto_tensor t;

		err = batch_scope(o, i);
		if (err)
			break;
		pto_args_reset(&a);
		switch (j->shape) {
		case CHAIN:
			t = key(0);
			pto_args_add_tensor(&a, &t, PTO_INOUT);
			break;
		case INDEP:	/* no data, like the StarPU peer's */
			break;
		case SUBMIT4:
			t = key((uint64_t)i + 16);
			pto_args_add_tensor(&a, &t, PTO_OUTPUT_EXISTING);
			for (k = 1; k <= 3; k++) {
				t = key((uint64_t)k);
				pto_args_add_tensor(&a, &t, PTO_INPUT);
			}
			break;
		case FANOUT: {
			long pos = i % (FAN + 2), blk = i / (FAN + 2);

			if (pos == 0) {	/* root: after the previous join */
				t = key((uint64_t)blk * 2);
				pto_args_add_tensor(&a, &t, PTO_INPUT);
				t = key((uint64_t)blk * 2 + 1);
				pto_args_add_tensor(&a, &t, PTO_OUTPUT_EXISTING);
			} else if (pos <= FAN) {
				t = key((uint64_t)blk * 2 + 1);
				pto_args_add_tensor(&a, &t, PTO_INPUT);
			} else {
				for (k = 0; k < FAN; k++)
					pto_args_add_dep_wait(&a, kids[k]);
				t = key((uint64_t)blk * 2 + 2);
				pto_args_add_tensor(&a, &t, PTO_OUTPUT_EXISTING);
			}
			err = submit_noop(o, &a, i,
					  pos >= 1 && pos <= FAN ? &kids[pos - 1] : NULL);
			continue;
		}
		case WAVE: {
			long r = i / w, c = i % w;

			if (r >= w)
				break;	/* n not a square: extra tasks are plain */
			if (r) {
				t = key((uint64_t)((r - 1) * w + c));
				pto_args_add_tensor(&a, &t, PTO_INPUT);
			}
			if (c) {
				t = key((uint64_t)(r * w + c - 1));
				pto_args_add_tensor(&a, &t, PTO_INPUT);
			}
			t = key((uint64_t)(r * w + c));
			pto_args_add_tensor(&a, &t, PTO_OUTPUT_EXISTING);
			break;
		}
		default:
			break;
		}
		err = submit_noop(o, &a, i, NULL);
	}
	if (!err && j->n)
		err = pto_scope_end(o);
	pto_args_fini(&a);
	j->t_submit_ns = now_ns() - t0;
	j->t_submit_cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	return err;
}


pto_orch *make(uint32_t workers, uint32_t window)
{
	struct pto_worker_desc w[MAX_WORKERS] = { 0 };	/* reserved words zero */
	struct pto_orch_config cfg = { .heap_ring_size = 1 << 20,
				       .task_window = window, .workers = w,
				       .nworkers = workers,
				       .trace_bytes = g_trace_bytes };
	pto_orch *o;
	uint32_t i;

	for (i = 0; i < workers && i < MAX_WORKERS; i++) {
		w[i].id = (int32_t)i;
		w[i].kind = PTO_WORKER_SUB;
	}
	if (g_dev) {
		struct pto_sched_config sc = { .clusters = g_clusters,
					       .threads = g_threads,
					       .spin_us = g_spin_us,
					       .wake_delay_us = g_wake_delay_us };
		int ret;

		cfg.workers = NULL;
		cfg.nworkers = 0;
		ret = pto_orch_create_device(g_dev, &cfg, &sc, &o);
		if (ret) {
			fprintf(stderr, "pto-bench: device orchestrator: %s\n",
				pto_strerror(ret));
			exit(1);
		}
		return o;
	}
	if (pto_orch_create_inproc(&cfg, &o)) {
		fprintf(stderr, "pto-bench: cannot create orchestrator\n");
		exit(1);
	}
	return o;
}

/* The run trace's records so far and those dropped: 0, or -ENOENT with
 * tracing off. */
int bench_trace_counts(pto_orch *o, uint64_t *records, uint64_t *dropped)
{
	if (!o->trace)
		return -ENOENT;
	trace_counts(o->trace, records, dropped);
	return 0;
}

/*
 * Close (retried: a device core that does not answer its retirement
 * holds the stop up to the driver's retire_timeout_ms, 30 s by default)
 * and destroy, or exit: the next orchestrator on the device, and the
 * device's close, must not run beside this one's scheduler threads.
 */
void finish(pto_orch *o)
{
	int err, tries;

	for (tries = 0; tries < 6; tries++) {
		err = pto_orch_close(o, 10000);
		if (err != -ETIMEDOUT)
			break;
	}
	if (!err)
		err = pto_orch_destroy(o);
	if (err) {
		fprintf(stderr, "pto-bench: closing an orchestrator: %s\n",
			pto_strerror(err));
		exit(1);
	}
}

/* Submit @j on @o and wait for it; the time of both in @t. */
int run_once(pto_orch *o, struct job *j, uint64_t *t)
{
	uint64_t t0 = now_ns();
	const char *why;
	pto_run *r;
	int err;

	err = pto_run_start(o, orch_fn, j, &r);
	/* A construction error's text is the orchestrator's, an execution
	 * error's the run's (pto_run_error(3)). */
	why = err ? pto_orch_error(o) : "";
	if (!err) {
		err = pto_run_wait(r, -1);
		why = err ? pto_run_error(r) : "";
	}
	*t = now_ns() - t0;
	if (err)
		fprintf(stderr, "pto-bench: %s failed: %d %s\n",
			shape_name[j->shape], err, why);
	/* Set also after a construction error, and it must be released:
	 * pto_orch_destroy() refuses while a handle is held. */
	if (r)
		pto_run_release(r);
	return err;
}

/*
 * One timed run of @j on @o, after an untimed run of @warm on it (at
 * least once round the task window): the timed run's time and scheduler
 * stats. A fresh orchestrator pays one-time costs on each slot's first
 * use (its storage's first touch: 20 MB at the default window, in page
 * faults, ~0.3 ms per 1024 slots, which decided the ratio at 2^10);
 * after the peer's process, or any idle gap, the CPUs also come back
 * cold. The StarPU peer warms its instance too (a quarter-size run).
 */
int run_pto(pto_orch *o, struct job *warm, struct job *j, uint64_t *t,
		   struct pto_sched_stats *st)
{
	struct pto_sched_stats st0 = { 0 };
	uint64_t tw;
	int err;

	err = run_once(o, warm, &tw);
	if (!err && g_dev)
		pto_orch_sched_stats(o, &st0);
	if (!err)
		err = run_once(o, j, t);
	if (!err && g_dev) {
		pto_orch_sched_stats(o, st);
		st->doorbells -= st0.doorbells;
		st->sleeps -= st0.sleeps;
		st->tasks -= st0.tasks;
	}
	return err;
}
