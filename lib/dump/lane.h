/* SPDX-License-Identifier: MIT */
/*
 * The consumer's side of one dump lane (Documentation/dump.md): the
 * read-only mapping's state block, metadata buffers and payload arena,
 * drained into a dump set (lane.c). Pure functions over the mapping's
 * bytes, so a test drives them with a lane image in memory; the thread
 * and the ioctls are collector.c's.
 */
#ifndef PTO_DUMP_LANE_H
#define PTO_DUMP_LANE_H

#include <stddef.h>
#include <stdint.h>
#include <linux/pto_dump.h>
#include "dump/dump.h"

/* A lane's mapping, as PTO_IOCTL_DUMP_BIND sized it. */
struct dump_lane_img {
	const uint8_t *base;
	size_t size;
};

/* What the consumer has taken from a lane: absolute counts, as the
 * acknowledgement sends them. */
struct dump_lane_pos {
	uint64_t buffers;		/* ready entries consumed */
	uint64_t payloads;		/* payloads copied out */
	uint64_t records;		/* records drained */
	uint64_t bad;			/* malformed records skipped */
};

/* The state block's layout against the mapping's size: 0, or -EPROTO
 * (wrong magic, version or geometry). */
int dump_lane_check(const struct dump_lane_img *img);

/*
 * Every buffer published since @pos into @s: each record converted, each
 * payload copied out of the arena (gathered across its end), flagged
 * overwritten if the producer's position passed it before the copy
 * ended. @pos advances; *@ack is the acknowledgement to send next (its
 * lane field is the caller's). Returns the buffers drained (0: none
 * published), -EPROTO for a ready entry out of range, -ENOMEM.
 */
int dump_lane_drain(const struct dump_lane_img *img, struct dump_lane_pos *pos,
		    struct dump_set *s, struct pto_dump_ack *ack);

/* @r of a lane as the file's record; false if malformed. */
bool dump_rec_from_lane(const struct pto_dump_record *r, struct dump_rec *out);

#endif /* PTO_DUMP_LANE_H */
