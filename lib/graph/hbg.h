/* SPDX-License-Identifier: MIT */
/*
 * A host-built graph as the library keeps it (graph.c), shared with its
 * run-trace writer (graph_trace.c) only.
 */
#ifndef PTO_GRAPH_HBG_H
#define PTO_GRAPH_HBG_H

#include <stdint.h>
#include <pto/graph.h>

struct hbg_edge {
	uint32_t from;
	uint32_t to;
};

/* @tasks hold the Out fields of the last pto_hbg_run() (its stamps). */
struct pto_hbg {
	struct pto_dev *dev;
	struct pto_graph_task *tasks;
	uint32_t ntasks;
	uint32_t cap;
	struct hbg_edge *edges;
	uint32_t nedges;
	uint32_t ecap;
};

#endif /* PTO_GRAPH_HBG_H */
