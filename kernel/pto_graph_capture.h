/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pto - args capture on the resident route, wired into a graph's run
 * (Documentation/capture.md): the run's capture state and its lane
 * supervisor threads (pto_graph_capture.c), and a core's barriers around
 * each captured subtask (pto_mock_capture.c).
 */
#ifndef _PTO_GRAPH_CAPTURE_H_
#define _PTO_GRAPH_CAPTURE_H_

#include <linux/types.h>
#include "pto_capture_core.h"

struct pto_core;
struct pto_device;
struct seq_file;
struct pto_file;
struct pto_gclaim;
struct pto_graph;
struct pto_graph_launch;
struct pto_lcache;

/* pto_graph_capture.c */
int pto_graph_capture_start(struct pto_file *pf, struct pto_graph *g,
			    const struct pto_graph_launch *args, void **img);
void pto_graph_capture_stop(struct pto_graph *g);
void pto_file_stop_captures(struct pto_file *pf);
void pto_capture_debugfs_show(struct seq_file *m, struct pto_device *pdev);
u64 pto_capture_budget_ns(void);
u64 pto_capture_lost_ns(void);

/*
 * pto_mock_capture.c, called by the core thread with no spinlock held.
 * BEFORE: 0 to run the subtask (*@on: it is captured, AFTER follows), or
 * the status it ends with, unrun. AFTER: 0, or the status it ends with.
 */
u32 pto_core_cap_before(struct pto_core *core, struct pto_graph *g,
			const struct pto_gclaim *cl, struct pto_cap_core *cc,
			bool *on);
u32 pto_core_cap_after(struct pto_core *core, struct pto_graph *g,
		       struct pto_cap_core *cc, struct pto_lcache *lc);

#endif /* _PTO_GRAPH_CAPTURE_H_ */
