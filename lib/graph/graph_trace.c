// SPDX-License-Identifier: MIT
/*
 * The resident route's run trace: the core-side start / end stamps the
 * cores wrote back into the graph (struct pto_graph_task's Out fields)
 * as the trace writer's records (lib/trace), one complete event per task
 * on the row of the core that ended it (AIC_n / AIV_n) and one flow per
 * edge. No library thread saw the tasks, so the file has no submitted,
 * ready, dispatched or completed stamps and no scheduler phases.
 */
#include <errno.h>
#include <stdio.h>
#include <pto/graph.h>
#include "core.h"
#include "graph/hbg.h"
#include "trace/trace.h"

/* The task's kernel: the AIC's for a MIX task, else its one core's. */
static uint32_t hbg_task_func(const struct pto_graph_task *t)
{
	unsigned int j;

	for (j = 0; j < PTO_CORES_PER_CLUSTER; j++)
		if (t->active_mask & (1u << j))
			return t->func_id[j];
	return PTO_FUNC_NOOP;
}

/* Ran, by its stamps: started, ended, on a core the trace can name. */
static int hbg_ran(const struct pto_graph_task *t)
{
	return t->start_ns && t->end_ns >= t->start_ns &&
	       t->core < PTO_MAX_CORES;
}

/* Every task that ran, and every edge between two of them, into @b. */
static void hbg_trace_records(const pto_hbg *g, struct trace *t,
			      struct trace_buf *b)
{
	uint32_t i;

	for (i = 0; i < g->ntasks; i++) {
		const struct pto_graph_task *k = &g->tasks[i];
		uint32_t func = hbg_task_func(k);

		if (!hbg_ran(k))
			continue;
		/* Core c of a cluster: c % 3 == 0 its AIC, else an AIV. */
		trace_core_type(t, (uint16_t)k->core,
				k->core % PTO_CORES_PER_CLUSTER ? PTO_CORE_AIV :
								  PTO_CORE_AIC);
		trace_put(b, k->start_ns, TRACE_STARTED, 0, i, 0, func,
			  (uint16_t)k->core);
		trace_put(b, k->end_ns, TRACE_ENDED, 0, i, 0, func,
			  (uint16_t)k->core);
	}
	for (i = 0; i < g->nedges; i++) {
		const struct hbg_edge *e = &g->edges[i];

		if (hbg_ran(&g->tasks[e->from]) && hbg_ran(&g->tasks[e->to]))
			trace_put(b, g->tasks[e->to].start_ns, TRACE_EDGE, 0,
				  e->to, e->from, 0, TRACE_NO_CORE);
	}
}

int pto_hbg_trace_write(const pto_hbg *g, const char *path)
{
	size_t bytes;
	struct trace_buf *b;
	struct trace *t;
	uint32_t i, ran = 0;
	FILE *f;
	int err;

	if (!g || !path)
		return -EINVAL;
	for (i = 0; i < g->ntasks; i++)
		ran += hbg_ran(&g->tasks[i]);
	if (!ran)
		return -ENODATA;
	bytes = sizeof(*b) + ((size_t)2 * g->ntasks + g->nedges + 1) *
		sizeof(struct trace_rec);
	err = trace_create(bytes, PTO_MAX_CORES, &t);
	if (err)
		return err;
	err = trace_buf_get(t, TRACE_ROLE_ORCH, 0, &b);
	for (i = 0; !err && i < PTO_FUNC_COUNT; i++)
		if (core_func_name(i))
			err = trace_func_name(t, i, core_func_name(i));
	if (err)
		goto out;
	hbg_trace_records(g, t, b);
	f = fopen(path, "w");
	if (!f) {
		err = -errno;
		goto out;
	}
	err = trace_write_json(t, f);
	if (fclose(f) && !err)
		err = -errno;
out:
	trace_destroy(t);
	return err;
}
