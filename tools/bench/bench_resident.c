// SPDX-License-Identifier: MIT
/* pto-bench --route resident: the noop shapes as host-built graphs. */
#include <stdio.h>
#include <linux/pto.h>
#include <pto/graph.h>
#include "bench.h"

/*
 * --route resident: the same noop shape as one host-built graph, best of
 * @reps; the time is the driver's, GRAPH_LAUNCH (its validation
 * included) to the graph's end. 0 tasks/s for a shape with no graph form.
 * Each noop is a single-AIV task that either AIV of a cluster takes, the
 * scheduler route's placement of the same noop (pto_on_kind(AIV)).
 */
double resident_tps(enum shape s, long n, int reps)
{
	static const uint32_t none[3];
	uint64_t clusters = 0, best = UINT64_MAX;
	struct pto_hbg_stats st;
	uint32_t t, root = 0, join = 0;
	long i, pos;
	pto_hbg *g;
	int ret;

	if ((s != INDEP && s != FANOUT) || n > PTO_GRAPH_MAX_TASKS ||
	    pto_hbg_create(g_dev, &g))
		return 0;
	if (g_clusters)
		clusters = (1ULL << g_clusters) - 1;
	for (i = 0, ret = 0; !ret && i < n; i++) {
		ret = pto_hbg_add_task(g, PTO_GRAPH_AIV0, none, &t);
		if (ret || s != FANOUT)
			continue;
		pos = i % (FAN + 2);
		if (pos == 0) {
			if (i)
				ret = pto_hbg_add_edge(g, join, t);
			root = t;
		} else if (pos <= FAN) {
			ret = pto_hbg_add_edge(g, root, t);
		} else {
			for (join = t; !ret && pos > 1; pos--)
				ret = pto_hbg_add_edge(g, t - (uint32_t)pos + 1, t);
		}
	}
	while (!ret && reps-- > 0) {
		ret = pto_hbg_run(g, clusters, 60000, &st);
		if (!ret && st.elapsed_ns < best)
			best = st.elapsed_ns;
	}
	pto_hbg_destroy(g);
	if (ret)
		fprintf(stderr, "pto-bench: resident %s: %s\n", shape_name[s],
			pto_strerror(ret));
	return ret || !best ? 0 : (double)n * 1e9 / (double)best;
}
