// SPDX-License-Identifier: MIT
/*
 * The orchestrator's run trace: created with the orchestrator when its
 * config asks for one (trace_bytes), written on request. The records
 * themselves are made where the events happen (trace.h's inline calls on
 * trace_self); Documentation/tracing.md lists who records what.
 */
#include <errno.h>
#include <stdio.h>
#include <linux/pto.h>
#include "orch/orch_internal.h"

int orch_trace_init(struct pto_orch *o)
{
	int err;

	if (!o->cfg.trace_bytes)
		return 0;
	err = trace_create(o->cfg.trace_bytes, PTO_MAX_CORES, &o->trace);
	if (err)
		return err;
	err = trace_buf_get(o->trace, TRACE_ROLE_ORCH, 0, &o->trace_orch);
	if (err) {
		trace_destroy(o->trace);
		o->trace = NULL;
		return err;
	}
	atomic_store_explicit(&o->trace_enabled, true, memory_order_relaxed);
	return 0;
}

void orch_trace_fini(struct pto_orch *o)
{
	trace_destroy(o->trace);
	o->trace = NULL;
	o->trace_orch = NULL;
}

struct trace *orch_trace(struct pto_orch *o)
{
	return o->trace;
}

uint64_t orch_dispatch_run_id(const struct orch_dispatch *d)
{
	return d->slot->run_id;
}

bool orch_dispatch_traced(const struct orch_dispatch *d)
{
	return d->slot->traced;
}

bool orch_trace_enabled(struct pto_orch *o)
{
	return atomic_load_explicit(&o->trace_enabled, memory_order_relaxed);
}

/* A submitted task and its fan-in edges, on the orch thread: one stamp
 * for all (an edge's time is not shown, only its ends); returned for a
 * READY at publication. */
uint64_t orch_trace_submit(struct pto_orch *o, const struct orch_slot *s,
			   uint32_t func)
{
	struct trace_buf *b = trace_self;
	uint64_t ts = trace_stamp(b);
	uint32_t i;

	trace_put_as(b, ts, b->ticks, TRACE_SUBMITTED, s->run_id, s->task_id,
		     0, func, TRACE_NO_CORE);
	for (i = 0; i < o->ndeps; i++)
		trace_put_as(b, ts, b->ticks, TRACE_EDGE, s->run_id,
			     s->task_id, o->deps[i].tid, 0, TRACE_NO_CORE);
	return ts;
}

PTO_API int pto_orch_trace_enable(pto_orch *o, int on)
{
	if (!o || (on != 0 && on != 1))
		return -EINVAL;
	if (!o->trace)
		return -ENODATA;
	atomic_store_explicit(&o->trace_enabled, on, memory_order_relaxed);
	return 0;
}

PTO_API int pto_orch_trace_write(pto_orch *o, const char *path)
{
	FILE *f;
	int err;

	if (!o || !path)
		return -EINVAL;
	if (!o->trace)
		return -ENODATA;
	f = fopen(path, "w");
	if (!f)
		return -errno;
	err = trace_write_json(o->trace, f);
	if (fclose(f) && !err)
		err = -errno;
	return err;
}
