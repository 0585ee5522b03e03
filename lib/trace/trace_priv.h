/* SPDX-License-Identifier: MIT */
/* The trace object, shared by the recorder (trace.c) and its writer
 * (trace_json.c) only. */
#ifndef PTO_TRACE_PRIV_H
#define PTO_TRACE_PRIV_H

#include <pthread.h>
#include "trace/trace.h"

struct trace_func {
	uint32_t id;
	char *name;
};

struct trace {
	size_t buf_bytes;
	struct trace_buf *bufs;		/* pushed by CAS, never unlinked */
	uint32_t ncores;
	uint8_t *core_type;		/* [ncores], 0: not named */
	pthread_mutex_t names_lock;	/* protects funcs, nfuncs */
	struct trace_func *funcs;
	uint32_t nfuncs;
	bool ticks;			/* buffers stamp with the TSC */
	uint64_t tick0, ns0;		/* a (TSC, CLOCK_MONOTONIC) pair at create */
};

/* CLOCK_MONOTONIC ns of a TSC reading, by the pairs (tick0, ns0) and
 * (@tick1, @ns1) (trace_json.c). */
uint64_t trace_ticks_ns(const struct trace *t, uint64_t ticks, uint64_t tick1,
			uint64_t ns1);
/* A (TSC, CLOCK_MONOTONIC) pair read together (trace.c). */
void trace_clock_pair(uint64_t *tick, uint64_t *ns);

#endif /* PTO_TRACE_PRIV_H */
