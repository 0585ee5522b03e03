/* SPDX-License-Identifier: MIT */
/*
 * The host collector (collector.c): one thread per device drains its
 * dump lanes (lane.c) while the run goes on and acknowledges promptly;
 * at the run's end it closes the lanes' terminals, drains what is left
 * and hands the records, with the run's accounting, to the writer.
 * Internal to the library.
 */
#ifndef PTO_DUMP_COLLECTOR_H
#define PTO_DUMP_COLLECTOR_H

#include <stdbool.h>
#include <stdint.h>
#include "dump/lane.h"

/* The lane's commands, PTO_IOCTL_DUMP_ACK and _CLOSE on a device; a
 * test's fake otherwise. Each returns 0 or -errno. */
struct dump_lane_ops {
	int (*ack)(void *ctx, const struct pto_dump_ack *ack);
	int (*close)(void *ctx, uint32_t lane);
	void *ctx;
};

/* One lane to drain: its index and its mapping. */
struct dump_collector_lane {
	uint32_t lane;
	struct dump_lane_img img;
};

struct dump_collector;

/* Checks each lane's mapping and starts the thread, which drains every
 * @poll_us microseconds while nothing is published. 0 or -errno. */
int dump_collector_start(const struct dump_collector_lane *lanes, uint32_t n,
			 uint32_t level, const struct dump_lane_ops *ops,
			 uint32_t poll_us, struct dump_collector **out);

/*
 * Ends the collection: joins the thread, closes each lane's terminal
 * when @close (a run that ended), drains what is left and moves the
 * records into @out (dump_set_fini() it). The accounting is unknown
 * unless every lane closed and its committed records are the ones
 * drained, none malformed or lost, every ack taken. Frees @c. 0, or the
 * first error an ack or close returned (the records are moved anyway).
 */
int dump_collector_finish(struct dump_collector *c, bool close,
			  struct dump_set *out);

/* The device's collector: binds @nlanes lanes from @first of @fd at
 * @level, maps them read-only and starts (collector_dev.c). */
struct dump_device;
int dump_device_start(int fd, uint32_t level, uint32_t first, uint32_t nlanes,
		      struct dump_device **out);
/*
 * An args-dump request of either route: @level in range, a directory for
 * any level but OFF, a device with dump lanes. 0 with *@copy a copy of
 * @dir (NULL for OFF), or -EINVAL / -EOPNOTSUPP / -ENOMEM.
 */
struct pto_dev;
int dump_request_check(struct pto_dev *dev, uint32_t level, const char *dir,
		       char **copy);
/*
 * @want consecutive lanes of the device's @lanes if that many are free;
 * lanes other files hold (-EBUSY) are stepped over and fewer are taken.
 * 0 with *@first and *@n the lanes bound, or -errno.
 */
int dump_device_start_any(int fd, uint32_t level, uint32_t lanes,
			  uint32_t want, uint32_t *first, uint32_t *n,
			  struct dump_device **out);
/* Finishes (dump_collector_finish), writes DIR/args_dump/ (dump_write),
 * unmaps and unbinds the lanes, frees @d. 0 or the first -errno. */
int dump_device_finish(struct dump_device *d, bool close, const char *dir);

#endif /* PTO_DUMP_COLLECTOR_H */
