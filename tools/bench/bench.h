/* SPDX-License-Identifier: MIT */
/*
 * pto-bench's parts: the noop workloads and the orchestrator they run on
 * (bench_orch.c), the resident route's graphs (bench_resident.c) and the
 * trace and submit costs (bench_cost.c). tools/pto-bench.c has the table
 * and the command line.
 */
#ifndef PTO_BENCH_H
#define PTO_BENCH_H

#include <stdint.h>
#include <time.h>
#include <pto/orch.h>
#include <pto/pto.h>
#include <pto/sched.h>

/* --device: run on this device's cores instead of in-process workers. */
extern struct pto_dev *g_dev;
extern uint32_t g_clusters;
extern uint32_t g_threads;
extern uint32_t g_spin_us;
extern uint32_t g_wake_delay_us;
extern uint64_t g_trace_bytes;	/* run trace per thread (make()); 0: off */

#define BATCH 512
#define FAN 16
/* -w's limit: make()'s worker table. */
#define MAX_WORKERS 64

enum shape { CHAIN, INDEP, FANOUT, WAVE, NSHAPE, SUBMIT4 = NSHAPE };
extern const char *const shape_name[NSHAPE];

struct job {
	enum shape shape;
	long n;
	uint64_t t_submit_ns;	/* time spent in the orchestration fn */
	uint64_t t_submit_cpu_ns;	/* its thread's CPU time in there */
};

uint64_t clock_ns(clockid_t id);
uint64_t now_ns(void);
int cmp_double(const void *a, const void *b);

/* The orchestration function of every shape; @arg is a struct job. */
int orch_fn(pto_orch *o, void *arg);
pto_orch *make(uint32_t workers, uint32_t window);
void finish(pto_orch *o);
int run_once(pto_orch *o, struct job *j, uint64_t *t);
int run_pto(pto_orch *o, struct job *warm, struct job *j, uint64_t *t,
	    struct pto_sched_stats *st);

/* Where the best resident run's time went (its cores' own stamps). */
struct resident_profile {
	double launch_us;	/* GRAPH_LAUNCH to the first task's start */
	double span_us;		/* the first task's start to the last's end */
	double run_ns;		/* a task's mean run */
	double gap_ns;		/* mean gap between a core's consecutive tasks */
	unsigned int cores;	/* cores that ran a task */
};

double resident_tps(enum shape s, long n, int reps,
		    struct resident_profile *prof);
int trace_cost(uint32_t workers, uint32_t window, int reps);
int bench_trace_counts(pto_orch *o, uint64_t *records, uint64_t *dropped);
void submit_cost(uint32_t workers, int reps);
/* --dump: @n captures of 64 KiB against as many memcpy, best of @reps. */
int dump_cost(long n, int reps);

#endif
