// SPDX-License-Identifier: MIT
/*
 * The run trace's clocks (lib/trace/trace_clock.c): TSC stamps converted
 * to CLOCK_MONOTONIC ns keep their order against the clock's own reads
 * (a core's started / ended) exactly, however far the TSC drifts from
 * the linear fit. A simulated drifting clock, seeded; and a trace written
 * through the recorder with its create pair falsified, read back with
 * ptoctl trace's reader.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "kselftest_harness.h"
#include "trace/trace_priv.h"
#include "../../tools/ptoctl_json.c"
#include "../../tools/ptoctl_trace_read.c"

/* ---- a simulated clock that drifts from the fit ------------------------ */

#define TICK0 1000000ull
#define NS0 5000000000ull
#define SPAN_TICKS 2000000000ull	/* two ticks a ns, over 1 s */
#define DRIFT_NS 500.0			/* the clock's swing about the fit */
#define DRIFT_PERIOD 2000000.0	/* ticks; divides SPAN_TICKS */
#define NTASK 4000

/* The clock at TSC @x: the fit plus a swing of DRIFT_NS either way, zero
 * at both ends of the fit (as the create and write pairs are). Rises
 * with x: the swing's slope is far below the fit's. */
static uint64_t sim_clock(uint64_t x)
{
	double d = (double)(x - TICK0);

	return NS0 + (uint64_t)floor(d / 2 + DRIFT_NS *
				     sin(2 * M_PI * d / DRIFT_PERIOD));
}

enum { S_READY, S_DISPATCHED, S_STARTED, S_ENDED, S_COMPLETED, S_CONSUMED,
       S_N };

/*
 * Task lives one after another, each event a random 1-400 ticks after
 * the last: READY (TSC), DISPATCHED (a PRE knot: TSC, then the clock),
 * the core's started and ended (the clock), COMPLETED (a POST knot: the
 * clock, then TSC), CONSUMED (TSC). Converted, each life's stamps must be
 * in order, and the TSC stamps in their TSC order.
 */
TEST(drifting_tsc_orders_exactly)
{
	const char *env = getenv("PTO_SEED");
	unsigned int seed = env ? (unsigned int)strtoul(env, NULL, 0) :
			    (unsigned int)time(NULL);
	struct trace_knot *pre = calloc(NTASK, sizeof(*pre));
	struct trace_knot *post = calloc(NTASK, sizeof(*post));
	uint64_t (*ts)[S_N] = calloc(NTASK, sizeof(*ts));
	uint64_t (*tsc)[2] = calloc(NTASK, sizeof(*tsc));
	uint64_t x = TICK0, prev = 0;
	struct trace_conv c;
	int i, s, bad = 0, unordered = 0, fit_bad = 0;

	ASSERT_TRUE(pre && post && ts && tsc);
	TH_LOG("seed %u", seed);
	srand(seed);
#define STEP() (x += 1 + (uint64_t)(rand() % 400))
	for (i = 0; i < NTASK; i++) {
		tsc[i][0] = STEP();			/* READY */
		pre[i].tsc = STEP();
		pre[i].ns = ts[i][S_DISPATCHED] = sim_clock(x + 1);
		STEP();
		ts[i][S_STARTED] = sim_clock(STEP());
		ts[i][S_ENDED] = sim_clock(STEP());
		post[i].ns = ts[i][S_COMPLETED] = sim_clock(STEP());
		post[i].tsc = x + 1;
		STEP();
		tsc[i][1] = STEP();			/* CONSUMED */
	}
#undef STEP
	ASSERT_LT(x, TICK0 + SPAN_TICKS);
	trace_conv_init(&c, TICK0, NS0, TICK0 + SPAN_TICKS,
			NS0 + SPAN_TICKS / 2, pre, NTASK, post, NTASK);
	for (i = 0; i < NTASK; i++) {
		uint64_t fit_r = NS0 + (tsc[i][0] - TICK0) / 2;

		ts[i][S_READY] = trace_conv_ns(&c, tsc[i][0]);
		ts[i][S_CONSUMED] = trace_conv_ns(&c, tsc[i][1]);
		for (s = 1; s < S_N; s++)
			if (ts[i][s - 1] > ts[i][s]) {
				if (!bad)
					TH_LOG("task %d stamp %d: %llu > %llu",
					       i, s,
					       (unsigned long long)ts[i][s - 1],
					       (unsigned long long)ts[i][s]);
				bad++;
			}
		for (s = 0; s < 2; s++) {
			uint64_t v = ts[i][s ? S_CONSUMED : S_READY];

			unordered += v < prev;
			prev = v;
		}
		/* The plain fit alone breaks the order here: the test
		 * drifts enough to tell. */
		fit_bad += fit_r > ts[i][S_DISPATCHED];
	}
	trace_conv_fini(&c);
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, unordered);
	EXPECT_LT(NTASK / 10, fit_bad);
	free(ts);
	free(tsc);
}

/* No knots: the fit itself, exact at its two pairs. */
TEST(fit_without_knots)
{
	struct trace_conv c;

	trace_conv_init(&c, 100, 1000, 300, 2000, NULL, 0, NULL, 0);
	EXPECT_EQ(1000u, trace_conv_ns(&c, 100));
	EXPECT_EQ(1500u, trace_conv_ns(&c, 200));
	EXPECT_EQ(2000u, trace_conv_ns(&c, 300));
	EXPECT_EQ(2500u, trace_conv_ns(&c, 400));
	trace_conv_fini(&c);
}

/* ---- through the recorder and the writer ------------------------------- */

#define NREC 20
#define SKEW_NS 50000	/* the create pair's clock moved this far */

/*
 * One task life after another on one thread, as a scheduler thread
 * records them, with the create pair's clock moved by @skew ns (the fit
 * then places every TSC stamp up to that far off): every task's stamps
 * come back in order.
 */
static void skewed_trace(struct __test_metadata *_metadata, int64_t skew)
{
	char path[] = "/tmp/test_trace_clock_XXXXXX";
	struct trace_buf *b;
	struct tr_trace tr;
	struct trace *t;
	int fd, s, bad = 0;
	size_t i;
	FILE *f;

	ASSERT_EQ(0, trace_create(1 << 20, 4, &t));
	/* The TSC path, whatever cpuinfo says (x86 has a TSC). */
	t->ticks = true;
	trace_clock_pair(&t->tick0, &t->ns0);
	t->ns0 += (uint64_t)skew;
	ASSERT_EQ(0, trace_buf_get(t, TRACE_ROLE_SCHED, 0, &b));
	for (i = 0; i < NREC; i++) {
		uint64_t ns, tsc, st;

		trace_task(b, TRACE_SUBMITTED, 1, i, 1, TRACE_NO_CORE);
		trace_task(b, TRACE_READY, 1, i, 0, TRACE_NO_CORE);
		ns = trace_clock_stamp(b, true, &tsc);
		trace_task_clock(b, TRACE_DISPATCHED, true, ns, tsc, 1, i, 1, 0);
		st = trace_now();	/* the core's stamps */
		trace_task_at(b, TRACE_STARTED, st, 1, i, 1, 0);
		trace_task_at(b, TRACE_ENDED, trace_now(), 1, i, 1, 0);
		ns = trace_clock_stamp(b, false, &tsc);
		trace_task_clock(b, TRACE_COMPLETED, false, ns, tsc, 1, i, 0, 0);
		trace_task(b, TRACE_CONSUMED, 1, i, 0, TRACE_NO_CORE);
	}
	fd = mkstemp(path);
	ASSERT_LE(0, fd);
	f = fdopen(fd, "w");
	ASSERT_NE(NULL, f);
	EXPECT_EQ(0, trace_write_json(t, f));
	fclose(f);
	trace_destroy(t);
	ASSERT_EQ(0, tr_load(path, &tr));
	unlink(path);
	ASSERT_EQ((size_t)NREC, tr.n);
	for (i = 0; i < tr.n; i++) {
		EXPECT_EQ((1u << TR_NSTAMP) - 1, tr.t[i].have);
		for (s = 1; s < TR_NSTAMP; s++) {
			if (tr.t[i].ts[s - 1] > tr.t[i].ts[s] && !bad)
				TH_LOG("skew %lld task %zu stamp %d: %llu > %llu",
				       (long long)skew, i, s,
				       (unsigned long long)tr.t[i].ts[s - 1],
				       (unsigned long long)tr.t[i].ts[s]);
			bad += tr.t[i].ts[s - 1] > tr.t[i].ts[s];
		}
	}
	EXPECT_EQ(0, bad);
	tr_free(&tr);
}

TEST(fit_late_orders_ready_before_dispatch)
{
	skewed_trace(_metadata, SKEW_NS);
}

TEST(fit_early_orders_consumed_after_completion)
{
	skewed_trace(_metadata, -SKEW_NS);
}

TEST_HARNESS_MAIN
