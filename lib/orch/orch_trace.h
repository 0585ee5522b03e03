/* SPDX-License-Identifier: MIT */
/* The orchestrator's run trace (orch_trace.c); records go to trace_self. */
#ifndef PTO_ORCH_TRACE_H
#define PTO_ORCH_TRACE_H

#include <stdint.h>
#include "trace/trace.h"

struct pto_orch;
struct orch_slot;

/* At create (cfg.trace_bytes) and at the orchestrator's free. */
int orch_trace_init(struct pto_orch *o);
void orch_trace_fini(struct pto_orch *o);
/* SUBMITTED and the task's fan-in edges (o->deps), on the orch thread;
 * returns their stamp. */
uint64_t orch_trace_submit(struct pto_orch *o, const struct orch_slot *s,
			   uint32_t func);

#endif /* PTO_ORCH_TRACE_H */
