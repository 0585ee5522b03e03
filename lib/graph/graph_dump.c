// SPDX-License-Identifier: MIT
/*
 * Args dump of a resident run: the library binds the lanes for the run
 * and names them in GRAPH_LAUNCH; the cores meet at each task's
 * boundaries and the lanes' supervisors in the driver capture the
 * arguments (Documentation/capture.md). The records are collected and
 * written as on the scheduler route (Documentation/dump-files.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <pto/graph.h>
#include <linux/pto_dump.h>
#include "core.h"
#include "dump/collector.h"
#include "graph/hbg.h"

int pto_hbg_dump_args(pto_hbg *g, uint32_t level, const char *dir)
{
	char *copy = NULL;
	int ret;

	if (!g)
		return -EINVAL;
	ret = dump_request_check(g->dev, level, dir, &copy);
	if (ret)
		return ret;
	free(g->dump_dir);
	g->dump_dir = copy;
	g->dump_level = level;
	return 0;
}

/* One lane per cluster of the run if that many are free, fewer if not. */
int hbg_dump_begin(pto_hbg *g, uint64_t clusters, struct hbg_dump *hd)
{
	struct pto_dev_info info;
	uint32_t want, first = 0, n = 0;
	int ret;

	memset(hd, 0, sizeof(*hd));
	if (g->dump_level == PTO_DUMP_OFF)
		return 0;
	ret = pto_dev_info(g->dev, &info);
	if (ret)
		return ret;
	want = (uint32_t)__builtin_popcountll(clusters);
	if (want > info.lanes)
		want = info.lanes;
	ret = dump_device_start_any(pto_dev_fd(g->dev), g->dump_level,
				    info.lanes, want, &first, &n, &hd->d);
	if (ret)
		return ret;
	hd->lanes = ((1u << n) - 1) << first;
	hd->run_id = ++g->runs;
	return 0;
}

/*
 * After the graph ended (its wait returned, or its cores retired): the
 * terminals are closed only after a run that succeeded, so a failed one's
 * accounting reads unknown. The files are written either way. The run's
 * error first, else the dump's.
 */
int hbg_dump_end(pto_hbg *g, struct hbg_dump *hd, int run_ret)
{
	int ret;

	if (!hd->d)
		return run_ret;
	ret = dump_device_finish(hd->d, !run_ret, g->dump_dir);
	hd->d = NULL;
	return run_ret ? run_ret : ret;
}
