/* SPDX-License-Identifier: MIT */
/*
 * pto/graph.h - the resident route (host_build_graph): build a task graph
 * on the host, upload it, and let the device's cores schedule it among
 * themselves. Each call's contract: pto_hbg_create(3); the format and the
 * kernel's checks: Documentation/resident.md.
 */
#ifndef PTO_GRAPH_H
#define PTO_GRAPH_H

#include <stdint.h>
#include <linux/pto.h>
#include <linux/pto_graph.h>
#include <pto/common.h>
#include <pto/pto.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pto_hbg pto_hbg;

/*
 * struct pto_hbg_stats - one run of a graph (pto_hbg_run()). Written
 * whole; @reserved comes back zero. Layout checked by tests/abi-layout.c.
 */
struct pto_hbg_stats {
	uint64_t tasks;		/* subtasks the cores ended */
	uint64_t errors;	/* of which with a device error */
	uint64_t elapsed_ns;	/* launch to the graph's end */
	uint32_t completed;	/* tasks completed */
	uint32_t err_task;	/* first failed task, or PTO_GRAPH_TASK_NONE */
	uint32_t err_status;	/* its PTO_TASK_* */
	uint32_t bad_task;	/* a refused graph's first bad task */
	uint32_t bad_field;	/* and field (enum pto_graph_field) */
	uint32_t reserved0;	/* 0 */
	uint64_t reserved[4];	/* 0 */
};

PTO_API int pto_hbg_create(struct pto_dev *dev, pto_hbg **out);
PTO_API void pto_hbg_destroy(pto_hbg *g);
PTO_API int pto_hbg_add_task(pto_hbg *g, uint32_t active_mask,
			     const uint32_t func_id[3], uint32_t *task);
PTO_API int pto_hbg_set_tensor(pto_hbg *g, uint32_t task, unsigned int slot,
			       const struct pto_tensor_desc *t, uint32_t role,
			       uint32_t flags);
PTO_API int pto_hbg_set_scalar(pto_hbg *g, uint32_t task, unsigned int i,
			       uint64_t value);
/* Task @task runs blocks from @base of an SPMD task of @num blocks. */
PTO_API int pto_hbg_set_block(pto_hbg *g, uint32_t task, uint32_t base,
			      uint32_t num);
PTO_API int pto_hbg_add_edge(pto_hbg *g, uint32_t from, uint32_t to);
PTO_API int pto_hbg_run(pto_hbg *g, uint64_t clusters, int timeout_ms,
			struct pto_hbg_stats *st);
PTO_API int pto_hbg_task_times(const pto_hbg *g, uint32_t task,
			       uint64_t *start_ns, uint64_t *end_ns,
			       uint32_t *core);
/* The last run's stamps as a run trace (Documentation/tracing.md). */
PTO_API int pto_hbg_trace_write(const pto_hbg *g, const char *path);
/* Args dump of the graph's runs at a PTO_DUMP_* level into
 * @dir/args_dump/, captured at the tasks' boundaries on the cores. */
PTO_API int pto_hbg_dump_args(pto_hbg *g, uint32_t level, const char *dir);

#ifdef __cplusplus
}
#endif
#endif /* PTO_GRAPH_H */
