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

/* A clock read with a TSC read beside it (trace_clock_stamp()). */
struct trace_knot {
	uint64_t tsc, ns;
};

/* TSC stamps to CLOCK_MONOTONIC ns (trace_clock.c): the fit through
 * (tick0, ns0) and (tick1, ns1), clamped to the knots. */
struct trace_conv {
	uint64_t tick0, ns0, tick1, ns1;
	struct trace_knot *pre;		/* TRACE_CLK_PRE, by TSC */
	size_t npre;
	struct trace_knot *post;	/* TRACE_CLK_POST, by TSC */
	size_t npost;
};

/* Takes @pre and @post (malloc'ed, freed by trace_conv_fini). */
void trace_conv_init(struct trace_conv *c, uint64_t tick0, uint64_t ns0,
		     uint64_t tick1, uint64_t ns1, struct trace_knot *pre,
		     size_t npre, struct trace_knot *post, size_t npost);
uint64_t trace_conv_ns(const struct trace_conv *c, uint64_t ticks);
void trace_conv_fini(struct trace_conv *c);
/* A (TSC, CLOCK_MONOTONIC) pair read together. */
void trace_clock_pair(uint64_t *tick, uint64_t *ns);

#endif /* PTO_TRACE_PRIV_H */
