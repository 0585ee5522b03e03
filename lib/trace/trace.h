/* SPDX-License-Identifier: MIT */
/*
 * The run-trace recorder: per-thread bounded buffers of fixed-size records
 * (CLOCK_MONOTONIC ns) and their Chrome trace-event JSON writer
 * (Documentation/tracing.md). A thread records only into its own buffer
 * (trace_buf_get()); NULL means off, one branch per record. The record path
 * never locks or blocks: a full buffer drops and counts.
 */
#ifndef PTO_TRACE_H
#define PTO_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

/* What a record says. The task kinds are a task's life, in order. */
enum trace_kind {
	TRACE_SUBMITTED = 1,	/* orchestrator: the task entered the DAG */
	TRACE_READY,		/* its last producer completed */
	TRACE_DISPATCHED,	/* payload and DATA_MAIN_BASE written */
	TRACE_STARTED,		/* the core began it (the core's own stamp) */
	TRACE_ENDED,		/* the core finished it (the core's own stamp) */
	TRACE_COMPLETED,	/* its completion observed by the scheduler */
	TRACE_CONSUMED,		/* its slot released to the ring */
	TRACE_EDGE,		/* fan-in: aux's output feeds task */
	TRACE_PHASE_BEGIN,	/* scheduler thread phase aux begins */
	TRACE_PHASE_END,
	TRACE_CB_BEGIN,		/* host callback of task, on its worker */
	TRACE_CB_END,
	TRACE_KIND_NR
};

/* Scheduler thread phases (TRACE_PHASE_* aux). */
enum trace_phase {
	TRACE_PHASE_REAP,
	TRACE_PHASE_DISPATCH,
	TRACE_PHASE_SLEEP,
	TRACE_PHASE_NR
};

/* Who owns a buffer: one process per role in the written file. */
enum trace_role {
	TRACE_ROLE_ORCH,	/* the orchestrator's (user's) thread */
	TRACE_ROLE_SCHED,	/* a scheduler thread, index = its number */
	TRACE_ROLE_HOST,	/* a host worker running callbacks */
	TRACE_ROLE_NR
};

#define TRACE_NO_CORE 0xffffu

/* What a record's ts is (trace_rec.clk). */
enum trace_clk {
	TRACE_CLK_NS,		/* CLOCK_MONOTONIC ns */
	TRACE_CLK_TICKS,	/* trace_stamp() TSC ticks */
	/* CLOCK_MONOTONIC ns, and aux the TSC read just before that clock
	 * read (TRACE_CLK_PRE) or just after it (TRACE_CLK_POST): a knot
	 * that the writer's conversion of TSC stamps meets exactly
	 * (trace_clock_stamp()) */
	TRACE_CLK_PRE,
	TRACE_CLK_POST,
};

/* One record, 40 bytes. */
struct trace_rec {
	uint64_t ts;		/* CLOCK_MONOTONIC ns */
	uint64_t run;		/* run id */
	uint64_t task;		/* task id; an edge's consumer */
	uint64_t aux;		/* an edge's producer; a phase; for a task
				 * kind, 0 or a second kind + 1 of the same
				 * task at the same stamp (trace_task2), or
				 * a knot's TSC (TRACE_CLK_PRE / _POST) */
	uint32_t func;		/* function id (the file takes it from
				 * SUBMITTED, DISPATCHED, STARTED, ENDED
				 * and CB_*, the others' is ignored) */
	uint16_t core;		/* device core, TRACE_NO_CORE if none */
	uint8_t kind;		/* enum trace_kind */
	uint8_t clk;		/* enum trace_clk: what ts is */
};

struct trace;

/*
 * The calling thread's buffer, NULL when it records nothing: set by a
 * library thread before its loop (trace_self_enter) and by pto_run_start
 * around an orchestration function, so the orchestrator's shared paths
 * (ready, consumed) record into whichever thread runs them. Initial-exec:
 * one %fs-relative load per record call.
 */
extern _Thread_local struct trace_buf *trace_self
	__attribute__((tls_model("initial-exec")));

/* A thread's buffer. Only its owner writes rec[] and n (release store,
 * paired with the acquire load in the writer) and dropped. */
struct trace_buf {
	struct trace_buf *next;	/* the trace's list; set before the push */
	uint32_t role;		/* enum trace_role */
	uint32_t index;		/* scheduler / worker number */
	uint32_t cap;		/* records that fit */
	uint32_t n;		/* records written */
	uint8_t ticks;		/* trace_stamp() reads the TSC */
	uint64_t dropped;	/* records lost to a full buffer */
	struct trace_rec rec[];
};

/* A trace: @buf_bytes of records per thread, @ncores device cores.
 * Returns 0 or -errno. */
int trace_create(size_t buf_bytes, uint32_t ncores, struct trace **out);
void trace_destroy(struct trace *t);

/* The calling thread's buffer for @role / @index (a new one, linked into
 * @t without a lock). Call before the thread's loop, not per record. */
int trace_buf_get(struct trace *t, enum trace_role role, uint32_t index,
		  struct trace_buf **out);

/* Take a buffer for @role / @index and make it this thread's
 * (trace_self); with @t NULL, or on failure, the thread records nothing. */
void trace_self_enter(struct trace *t, enum trace_role role, uint32_t index);

/* Setup-time names for the file: a function id's name; a core's type
 * (PTO_CORE_AIC / PTO_CORE_AIV: its row is AIC_n / AIV_n). */
int trace_func_name(struct trace *t, uint32_t func, const char *name);
int trace_core_type(struct trace *t, uint16_t core, uint32_t type);

/* The Chrome trace-event JSON of everything recorded when it starts;
 * threads may go on recording meanwhile (a scheduler thread's phases
 * after the run's wait). 0 or -errno. */
int trace_write_json(struct trace *t, FILE *f);

/* Records written and dropped over all buffers. */
void trace_counts(struct trace *t, uint64_t *records, uint64_t *dropped);

static inline uint64_t trace_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The TSC read after every earlier instruction has completed (the
 * kernel's rdtsc_ordered()): a plain RDTSC may run ahead of an earlier
 * load, such as the one that observed a core's FIN or a task's state, and
 * so be earlier than the event that load ordered it after. */
static inline uint64_t trace_tsc_ordered(void)
{
#if defined(__x86_64__) || defined(__i386__)
	_mm_lfence();
	return __rdtsc();
#else
	return 0;
#endif
}

/*
 * A record's stamp: the TSC where it ticks at a constant rate on every
 * CPU (the trace checked constant_tsc and nonstop_tsc at create), read in
 * a few ns where a clock_gettime() costs tens; the writer converts ticks
 * to CLOCK_MONOTONIC ns (trace_clock.c). Elsewhere, CLOCK_MONOTONIC ns.
 */
static inline uint64_t trace_stamp(const struct trace_buf *b)
{
#if defined(__x86_64__) || defined(__i386__)
	if (b->ticks)
		return trace_tsc_ordered();
#endif
	(void)b;
	return trace_now();
}

/*
 * A stamp a core's own stamp orders against (DISPATCHED before the id is
 * published, COMPLETED after the FIN was seen): CLOCK_MONOTONIC itself,
 * with a TSC read in *@tsc before it (@pre) or after it, making the
 * record a knot the writer clamps TSC stamps to (trace_clock.c).
 * Returns the ns.
 */
static inline uint64_t trace_clock_stamp(const struct trace_buf *b, bool pre,
					 uint64_t *tsc)
{
	uint64_t ns;

	*tsc = 0;
	if (!b->ticks)
		return trace_now();
	/* The vDSO reads the TSC ordered as well: after a PRE read, and
	 * before a POST read's LFENCE. */
	if (pre)
		*tsc = trace_tsc_ordered();
	ns = trace_now();
	if (!pre)
		*tsc = trace_tsc_ordered();
	return ns;
}

/* Tracing is on for this thread: the only test when it is off. */
static inline bool trace_on(const struct trace_buf *b)
{
	return __builtin_expect(b != NULL, 0);
}

static inline void trace_put_as(struct trace_buf *b, uint64_t ts,
				uint8_t clk, enum trace_kind kind, uint64_t run,
				uint64_t task, uint64_t aux, uint32_t func,
				uint16_t core)
{
	uint32_t n = b->n;
	struct trace_rec *r;

	if (n == b->cap) {
		__atomic_store_n(&b->dropped, b->dropped + 1, __ATOMIC_RELAXED);
		return;
	}
	r = &b->rec[n];
	r->ts = ts;
	r->run = run;
	r->task = task;
	r->aux = aux;
	r->func = func;
	r->core = core;
	r->kind = (uint8_t)kind;
	r->clk = clk;
	/* Publishes the record: pairs with trace_write_json()'s acquire. */
	__atomic_store_n(&b->n, n + 1, __ATOMIC_RELEASE);
}

/* A record stamped @ts in CLOCK_MONOTONIC ns. */
static inline void trace_put(struct trace_buf *b, uint64_t ts,
			     enum trace_kind kind, uint64_t run,
			     uint64_t task, uint64_t aux, uint32_t func,
			     uint16_t core)
{
	trace_put_as(b, ts, TRACE_CLK_NS, kind, run, task, aux, func, core);
}

/* A record stamped now. */
static inline void trace_put_now(struct trace_buf *b, enum trace_kind kind,
				 uint64_t run, uint64_t task, uint64_t aux,
				 uint32_t func, uint16_t core)
{
	trace_put_as(b, trace_stamp(b), b->ticks, kind, run, task, aux, func,
		     core);
}

/* A task event stamped now. */
static inline void trace_task(struct trace_buf *b, enum trace_kind kind,
			      uint64_t run, uint64_t task, uint32_t func,
			      uint16_t core)
{
	if (trace_on(b))
		trace_put_now(b, kind, run, task, 0, func, core);
}

/* Two events of one task at one instant: one record, one stamp (the
 * writer makes two of it). */
static inline void trace_task2(struct trace_buf *b, enum trace_kind k1,
			       enum trace_kind k2, uint64_t run, uint64_t task,
			       uint32_t func, uint16_t core)
{
	if (trace_on(b))
		trace_put_as(b, trace_stamp(b), b->ticks, k1, run, task,
			     (uint64_t)k2 + 1, func, core);
}

/* A task event stamped by trace_clock_stamp(@pre) with @ns and @tsc. */
static inline void trace_task_clock(struct trace_buf *b, enum trace_kind kind,
				    bool pre, uint64_t ns, uint64_t tsc,
				    uint64_t run, uint64_t task, uint32_t func,
				    uint16_t core)
{
	if (trace_on(b))
		trace_put_as(b, ns, !b->ticks ? TRACE_CLK_NS :
				    pre ? TRACE_CLK_PRE : TRACE_CLK_POST,
			     kind, run, task, tsc, func, core);
}

/* A task event with a stamp taken elsewhere (the core's start / end). */
static inline void trace_task_at(struct trace_buf *b, enum trace_kind kind,
				 uint64_t ts, uint64_t run, uint64_t task,
				 uint32_t func, uint16_t core)
{
	if (trace_on(b))
		trace_put(b, ts, kind, run, task, 0, func, core);
}

/*
 * The buffer a task's record goes to: this thread's, when it records and
 * the task's run is recorded (@traced). Tracing off (no buffer) costs the
 * one predictable branch of trace_on().
 */
static inline struct trace_buf *trace_self_if(bool traced)
{
	struct trace_buf *b = trace_self;

	return trace_on(b) && traced ? b : NULL;
}

/* A dependency edge: @producer's output feeds @consumer. */
static inline void trace_edge(struct trace_buf *b, uint64_t run,
			      uint64_t producer, uint64_t consumer)
{
	if (trace_on(b))
		trace_put_now(b, TRACE_EDGE, run, consumer, producer, 0,
			      TRACE_NO_CORE);
}

/* A scheduler thread entering (@begin) or leaving phase @ph. */
static inline void trace_phase(struct trace_buf *b, enum trace_phase ph,
			       bool begin)
{
	if (trace_on(b))
		trace_put_now(b, begin ? TRACE_PHASE_BEGIN : TRACE_PHASE_END,
			      0, 0, ph, 0, TRACE_NO_CORE);
}

/* A phase that began at @ts (trace_stamp()) and ends now: recorded once
 * known to be worth it, so idle loop steps leave no records. */
static inline void trace_phase_since(struct trace_buf *b, enum trace_phase ph,
				     uint64_t ts)
{
	if (trace_on(b)) {
		trace_put_as(b, ts, b->ticks, TRACE_PHASE_BEGIN, 0, 0, ph, 0,
			     TRACE_NO_CORE);
		trace_put_now(b, TRACE_PHASE_END, 0, 0, ph, 0, TRACE_NO_CORE);
	}
}

/* A host callback of @task starting (@begin) or ending on this worker. */
static inline void trace_cb(struct trace_buf *b, bool begin, uint64_t run,
			    uint64_t task, uint32_t func)
{
	if (trace_on(b))
		trace_put_now(b, begin ? TRACE_CB_BEGIN : TRACE_CB_END, run,
			      task, 0, func, TRACE_NO_CORE);
}

#endif /* PTO_TRACE_H */
