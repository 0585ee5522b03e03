/* SPDX-License-Identifier: MIT */
/*
 * A host-built graph as the library keeps it (graph.c), shared with its
 * run-trace writer (graph_trace.c) and its args dump (graph_dump.c) only.
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
	uint32_t dump_level;
	char *dump_dir;
	uint64_t runs;
};

/* One run's args dump (graph_dump.c): its lanes, bound for the run. */
struct dump_device;
struct hbg_dump {
	struct dump_device *d;
	uint32_t lanes;
	uint64_t run_id;
};

int hbg_dump_begin(pto_hbg *g, uint64_t clusters, struct hbg_dump *hd);
int hbg_dump_end(pto_hbg *g, struct hbg_dump *hd, int run_ret);

#endif /* PTO_GRAPH_HBG_H */
