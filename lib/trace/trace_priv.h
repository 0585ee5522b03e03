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
};

#endif /* PTO_TRACE_PRIV_H */
