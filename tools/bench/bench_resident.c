// SPDX-License-Identifier: MIT
/* pto-bench --route resident: the noop shapes as host-built graphs. */
#include <stdio.h>
#include <string.h>
#include <linux/pto.h>
#include <pto/graph.h>
#include "bench.h"

/*
 * A run's profile from its tasks' stamps: per core, the time
 * between its first start and last end not spent running is its gaps
 * (claim, finish and kicks under the graph's lock).
 */
static void profile(const pto_hbg *g, long n, uint64_t elapsed,
		    struct resident_profile *p)
{
	uint64_t first[PTO_MAX_CORES], last[PTO_MAX_CORES];
	uint64_t busy[PTO_MAX_CORES], cnt[PTO_MAX_CORES];
	uint64_t s, e, lo = UINT64_MAX, hi = 0, run = 0, gap = 0, gaps = 0;
	uint32_t c, i;

	memset(p, 0, sizeof(*p));
	memset(cnt, 0, sizeof(cnt));
	for (i = 0; i < (uint32_t)n; i++) {
		if (pto_hbg_task_times(g, i, &s, &e, &c) ||
		    c >= PTO_MAX_CORES || e < s)
			continue;
		if (!cnt[c]++) {
			first[c] = s;
			last[c] = e;
			busy[c] = 0;
		}
		first[c] = s < first[c] ? s : first[c];
		last[c] = e > last[c] ? e : last[c];
		busy[c] += e - s;
		run += e - s;
		lo = s < lo ? s : lo;
		hi = e > hi ? e : hi;
	}
	for (c = 0; c < PTO_MAX_CORES; c++) {
		if (!cnt[c])
			continue;
		p->cores++;
		gap += last[c] - first[c] - busy[c];
		gaps += cnt[c] - 1;
	}
	if (!p->cores)
		return;
	p->span_us = (double)(hi - lo) / 1e3;
	p->launch_us = elapsed > hi - lo ? (double)(elapsed - (hi - lo)) / 1e3 : 0;
	p->run_ns = (double)run / (double)n;
	p->gap_ns = gaps ? (double)gap / (double)gaps : 0;
}

/*
 * --route resident: the same noop shape as one host-built graph, best of
 * @reps; the time is the driver's, GRAPH_LAUNCH (its validation
 * included) to the graph's end. 0 tasks/s for a shape with no graph form.
 * Each noop is a single-AIV task that either AIV of a cluster takes, the
 * scheduler route's placement of the same noop (pto_on_kind(AIV)).
 */
double resident_tps(enum shape s, long n, int reps,
		    struct resident_profile *prof)
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
		if (!ret && st.elapsed_ns < best) {
			best = st.elapsed_ns;
			profile(g, n, best, prof);
		}
	}
	pto_hbg_destroy(g);
	if (ret)
		fprintf(stderr, "pto-bench: resident %s: %s\n", shape_name[s],
			pto_strerror(ret));
	return ret || !best ? 0 : (double)n * 1e9 / (double)best;
}
