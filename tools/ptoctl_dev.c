// SPDX-License-Identifier: MIT
/* ptoctl info, cores and gates: a device's topology and its cores' state,
 * counters and retirement, read through the library. */
#include <errno.h>
#include <stdio.h>
#include <pto/pto.h>
#include "core.h"
#include "ptoctl.h"

int ptoctl_info(int argc, char **argv)
{
	struct pto_dev_info info;
	struct pto_dev *dev;
	unsigned int c;
	int ret;

	ret = ptoctl_open_device(argc, argv, &dev, &info);
	if (ret)
		return ret;
	printf("device:      pto%u (abi %u.%u%s)\n", info.index, info.abi_major,
	       info.abi_minor, info.caps & 1 ? ", mock" : "");
	printf("clusters:    %u (1 AIC + 2 AIV each)\n", info.clusters);
	printf("cores:       %u\n", info.cores);
	printf("gm:          %llu MiB (buffer alignment %u)\n",
	       (unsigned long long)(info.gm_size >> 20), info.gm_align);
	printf("window:      %u bytes per core\n", info.window_size);
	printf("lanes:       %u\n", info.lanes);
	for (c = 0; c < info.clusters; c++) {
		unsigned int i, base = c * 3;

		printf("cluster %-3u", c);
		for (i = base; i < base + 3 && i < info.cores; i++)
			printf(" core %-3u %s", i,
			       info.core_type[i] == PTO_CORE_AIC ? "AIC" :
			       info.core_type[i] == PTO_CORE_AIV ? "AIV" :
									"???");
		printf("\n");
	}
	pto_dev_close(dev);
	return 0;
}

static const char *const state_names[] = {
	"unlaunched", "handshake", "ready", "running", "exiting", "gated",
	"quarantined",
};

/*
 * Open the device of @argv, print @header and then @row for each core;
 * stop at the first failing row and, if @cmd, report it under that name.
 */
static int per_core_table(int argc, char **argv, const char *cmd,
			  const char *header,
			  int (*row)(struct pto_dev *dev,
				     const struct pto_dev_info *info,
				     unsigned int core))
{
	struct pto_dev_info info;
	struct pto_dev *dev;
	unsigned int i;
	int ret;

	ret = ptoctl_open_device(argc, argv, &dev, &info);
	if (ret)
		return ret;
	printf("%s\n", header);
	for (i = 0; i < info.cores && !ret; i++)
		ret = row(dev, &info, i);
	if (ret && cmd)
		fprintf(stderr, "ptoctl %s: %s\n", cmd, pto_strerror(ret));
	pto_dev_close(dev);
	return ret;
}

/* The first columns of a per-core row: index, type, state. */
static void core_row_head(const struct pto_dev_info *info, unsigned int i,
			  uint32_t state)
{
	printf("%-4u %-4s %-12s ", i,
	       info->core_type[i] == PTO_CORE_AIC ? "AIC" : "AIV",
	       state < 7 ? state_names[state] : "?");
}

static int cores_row(struct pto_dev *dev, const struct pto_dev_info *info,
		     unsigned int i)
{
	struct pto_core_stats st;
	int ret = core_stats(dev, i, &st);

	if (ret)
		return ret;
	core_row_head(info, i, st.state);
	printf("%-7u %-10llu %-10llu %-10llu %-10llu %-10llu %-10llu 0x%08x\n",
	       st.owner,
	       (unsigned long long)st.tasks,
	       (unsigned long long)st.errors,
	       (unsigned long long)st.parks,
	       (unsigned long long)st.dozes,
	       (unsigned long long)st.doorbells,
	       (unsigned long long)st.wakeups, st.last_cond);
	return 0;
}

int ptoctl_cores(int argc, char **argv)
{
	return per_core_table(argc, argv, NULL,
			      "core type state        owner   tasks      errors     parks      dozes      doorbells  wakeups    cond",
			      cores_row);
}

static const char *const retire_by[] = {
	"-", "ioctl", "release", "launch", "fatal", "unload", "reset",
};

static int gates_row(struct pto_dev *dev, const struct pto_dev_info *info,
		     unsigned int i)
{
	struct pto_retire_status st;
	int ret = core_retire_status(dev, i, &st);

	if (ret)
		return ret;
	core_row_head(info, i, st.state);
	printf("%-10u %-5u %-9u 0x%08x 0x%08x %-6u %-8u %-11u %-7s %-10llu %-10llu %-10llu %llu\n",
	       st.gen,
	       !!(st.bits & PTO_RETIRE_BIT_READY),
	       !!(st.bits & PTO_RETIRE_BIT_REQUESTED), st.nonce,
	       st.response, !!(st.result & PTO_RETIRE_CLOSED),
	       !!(st.result & PTO_RETIRE_RELEASED),
	       st.state == PTO_CORE_QUARANTINED,
	       st.reason < 7 ? retire_by[st.reason] : "?",
	       (unsigned long long)st.core_ns / 1000,
	       (unsigned long long)st.set_ns / 1000,
	       (unsigned long long)st.retirements,
	       (unsigned long long)st.quarantines);
	return 0;
}

/*
 * Retirement per core, from the status ioctl (no root needed): the same
 * fields as debugfs "retirement" (Documentation/retirement.md).
 */
int ptoctl_gates(int argc, char **argv)
{
	return per_core_table(argc, argv, "gates",
			      "core type state        gen        ready requested nonce      response   closed released quarantined by      core_us    set_us     retired    quarantines",
			      gates_row);
}
