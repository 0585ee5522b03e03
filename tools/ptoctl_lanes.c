// SPDX-License-Identifier: MIT
/*
 * ptoctl lanes: one line per dump lane of /dev/ptoN, read with
 * PTO_IOCTL_DUMP_STATUS, in the columns and format of the device's
 * debugfs `lanes` (Documentation/dump.md). The owner is the binder's
 * process id in the caller's pid namespace (debugfs shows the initial
 * namespace's). A driver older than ABI 2.4 does not report the refused
 * and abandoned counts or the open reservation's task and argument:
 * those columns show '?'.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <linux/pto_dump.h>
#include <pto/pto.h>
#include "ioctl.h"
#include "ptoctl.h"

static const char *const state_names[] = {
	[PTO_LANE_FREE] = "free",
	[PTO_LANE_BOUND] = "bound",
	[PTO_LANE_CLOSED] = "closed",
	[PTO_LANE_QUARANTINED] = "quarantined",
};

static const char *const level_names[] = {
	[PTO_DUMP_OFF] = "off",
	[PTO_DUMP_PARTIAL] = "partial",
	[PTO_DUMP_FULL] = "full",
	[PTO_DUMP_HYBRID] = "hybrid",
};

#define NAME_OF(names, v) \
	((v) < sizeof(names) / sizeof((names)[0]) ? (names)[v] : "?")

static void lane_row(const struct pto_dump_status *s, int full)
{
	uint32_t q = s->quarantine;

	printf("%-4u %-6u %-7s %-11s ", s->lane, s->owner,
	       s->state == PTO_LANE_FREE ? "-" : NAME_OF(level_names, s->level),
	       NAME_OF(state_names, s->state));
	if (s->state == PTO_LANE_FREE) {
		printf("-              -            -         -         -        -         -        -                    ");
	} else {
		printf("%llu/%-12llu %-12llu %-9llu %-9llu ",
		       (unsigned long long)s->reserved,
		       (unsigned long long)s->count,
		       (unsigned long long)s->arena_write_pos,
		       (unsigned long long)s->acct.published_payloads,
		       (unsigned long long)s->acct.completed_payloads);
		if (full)
			printf("%-8llu %-9llu ", (unsigned long long)s->refused,
			       (unsigned long long)s->abandoned);
		else
			printf("%-8s %-9s ", "?", "?");
		printf("%-8llu ", (unsigned long long)s->acct.dropped);
		if (s->open && full)
			printf("task=%llx arg=%u %llu/%llu ",
			       (unsigned long long)s->open_task_id,
			       s->open_arg_index,
			       (unsigned long long)s->open_written,
			       (unsigned long long)s->open_bytes);
		else if (s->open)
			printf("task=? arg=? %llu/%llu ",
			       (unsigned long long)s->open_written,
			       (unsigned long long)s->open_bytes);
		else
			printf("-                    ");
	}
	printf("%s%s%s%s\n", q ? "" : "-",
	       q & PTO_LANE_Q_PRODUCING ? "producing " : "",
	       q & PTO_LANE_Q_RESERVED ? "reserved " : "",
	       q & PTO_LANE_Q_UNCLOSED ? "unclosed" : "");
}

int ptoctl_lanes(int argc, char **argv)
{
	struct pto_dev_info info;
	struct pto_dump_status s;
	struct pto_dev *dev;
	unsigned int i;
	int ret;

	ret = ptoctl_open_device(argc, argv, &dev, &info);
	if (ret)
		return ret;
	printf("lane owner  level   state       reserved/count arena_pos    published completed refused  abandoned dropped  open                 quarantine\n");
	for (i = 0; i < info.lanes; i++) {
		memset(&s, 0, sizeof(s));
		s.lane = i;
		ret = ioc_call(pto_dev_fd(dev), PTO_IOCTL_DUMP_STATUS, &s);
		if (ret) {
			fprintf(stderr, "ptoctl lanes: lane %u: %s\n", i,
				pto_strerror(ret));
			break;
		}
		lane_row(&s, info.abi_minor >= 4);
	}
	pto_dev_close(dev);
	return ret;
}
