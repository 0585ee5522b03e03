// SPDX-License-Identifier: MIT
/* pto-bench: the run trace's cost (--trace) and the cost of a submit. */
#include <stdio.h>
#include <stdlib.h>
#include "bench.h"
#include "trace/trace.h"

/* With --trace: room for every record of a 2^14-task run and its warm-up. */
#define TRACE_BENCH_BYTES (16ull << 20)

/* One ordered TSC read (a recorded stamp's clock), best of 5, ns. */
static double stamp_ns(void)
{
	double best = 1e18;
	volatile uint64_t sink = 0;
	int rep, i;

	for (rep = 0; rep < 5; rep++) {
		uint64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), t1;

		for (i = 0; i < 1 << 20; i++)
			sink += trace_tsc_ordered();
		t1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		if ((double)(t1 - t0) / (1 << 20) < best)
			best = (double)(t1 - t0) / (1 << 20);
	}
	(void)sink;
	return best;
}

/*
 * --trace: fanout with the run trace off and on, side by side (tasks/s,
 * wall, best of the runs), then the records a task leaves and what one
 * stamp's clock read costs on this machine: the recording's floor.
 */
int trace_cost(uint32_t workers, uint32_t window, int reps)
{
	double stamp = stamp_ns();
	int lg, rep, on;

	for (lg = 12; lg <= 14; lg += 2) {
		struct job j = { .shape = FANOUT, .n = 1L << lg };
		struct job warm = { .shape = FANOUT,
				    .n = j.n / 4 > window ? j.n / 4 : window };
		uint64_t best[2] = { UINT64_MAX, UINT64_MAX }, recs = 0, d;
		double tps[2];

		for (rep = 0; rep < 2 * reps; rep++) {
			for (on = 0; on < 2; on++) {
				struct pto_sched_stats st;
				uint64_t t;
				pto_orch *o;

				g_trace_bytes = on ? TRACE_BENCH_BYTES : 0;
				o = make(workers, window);
				if (run_pto(o, &warm, &j, &t, &st))
					return 1;
				if (on)
					bench_trace_counts(o, &recs, &d);
				finish(o);
				if (t < best[on])
					best[on] = t;
			}
		}
		g_trace_bytes = 0;
		tps[0] = (double)j.n * 1e9 / (double)best[0];
		tps[1] = (double)j.n * 1e9 / (double)best[1];
		printf("%-12s n=%-8ld trace off %10.0f tasks/s  on %10.0f tasks/s"
		       "  cost %5.1f%%\n", "fanout", j.n, tps[0], tps[1],
		       100.0 * (tps[0] - tps[1]) / tps[0]);
		printf("%-12s n=%-8ld %.1f records per task, one stamp %.1f ns\n",
		       "", j.n, (double)recs / (double)(warm.n + j.n), stamp);
		fflush(stdout);
	}
	return 0;
}

void submit_cost(uint32_t workers, int reps)
{
	const long n = 1 << 14;
	struct job j = { .shape = SUBMIT4, .n = n };
	pto_orch *o = make(workers, (uint32_t)n * 2);
	int rep, nrep = reps * 6;
	double *wall = calloc((size_t)nrep, sizeof(*wall));	/* ns/submit */
	uint64_t best_cpu = UINT64_MAX;
	pto_run *r;

	/*
	 * The window holds them all, so this measures submit, not
	 * back-pressure: wall and submitting-thread CPU time per submit (the
	 * workers share the CPUs meanwhile). Best of 6 x --reps short runs,
	 * with the median; the first two runs are warm-up (a slot's first use
	 * allocates its storage).
	 */
	if (!wall) {
		fprintf(stderr, "pto-bench: out of memory\n");
		exit(1);
	}
	for (rep = -2; rep < nrep; rep++) {
		if (pto_run_start(o, orch_fn, &j, &r)) {
			fprintf(stderr, "pto-bench: submit run failed: %s\n",
				pto_orch_error(o));
			exit(1);
		}
		if (pto_run_wait(r, -1)) {
			fprintf(stderr, "pto-bench: submit run failed: %s\n",
				pto_run_error(r));
			exit(1);
		}
		pto_run_release(r);
		if (rep < 0)
			continue;
		wall[rep] = (double)j.t_submit_ns / (double)n;
		if (j.t_submit_cpu_ns < best_cpu)
			best_cpu = j.t_submit_cpu_ns;
	}
	qsort(wall, (size_t)nrep, sizeof(*wall), cmp_double);
	printf("%-12s n=%-8ld pto %8.1f ns/submit (4 tensor args; best of %d, "
	       "median %.1f), %.1f ns of the submitting thread's CPU time\n",
	       "submit", n, wall[0], nrep, wall[nrep / 2],
	       (double)best_cpu / (double)n);
	free(wall);
	finish(o);
}
