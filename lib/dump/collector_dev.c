// SPDX-License-Identifier: MIT
/*
 * The collector on a device: each lane bound at the run's level through
 * PTO_IOCTL_DUMP_BIND and mapped read-only; the collector's
 * acknowledgements and terminal closes are the lane's ioctls; at the end
 * the files are written and the lanes given up.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/pto_dump.h>
#include "core.h"
#include "dump/collector.h"
#include "ioctl.h"

struct dump_device {
	int fd;
	uint32_t n;			/* lanes bound and mapped */
	struct dump_collector_lane *lanes;
	struct dump_collector *c;
};

static int dev_ack(void *ctx, const struct pto_dump_ack *ack)
{
	struct dump_device *d = ctx;
	struct pto_dump_ack a = *ack;

	return ioc_call(d->fd, PTO_IOCTL_DUMP_ACK, &a);
}

static int dev_close(void *ctx, uint32_t lane)
{
	struct dump_device *d = ctx;
	struct pto_dump_lane l = { .lane = lane };

	return ioc_call(d->fd, PTO_IOCTL_DUMP_CLOSE, &l);
}

/* Unmaps and unbinds the lanes bound so far; the first error. A lane
 * whose unbind fails (a capture still in flight) stays bound to the file,
 * whose release quarantines it. */
static int release(struct dump_device *d)
{
	int ret = 0, r;
	uint32_t i;

	for (i = 0; i < d->n; i++) {
		struct pto_dump_lane l = { .lane = d->lanes[i].lane };

		munmap((void *)d->lanes[i].img.base, d->lanes[i].img.size);
		r = ioc_call(d->fd, PTO_IOCTL_DUMP_UNBIND, &l);
		if (r && !ret)
			ret = r;
	}
	free(d->lanes);
	free(d);
	return ret;
}

int dump_device_start(int fd, uint32_t level, uint32_t first, uint32_t nlanes,
		      struct dump_device **out)
{
	static const struct dump_lane_ops ops = { dev_ack, dev_close, NULL };
	struct dump_lane_ops o = ops;
	struct dump_device *d;
	int ret = -ENOMEM;

	if (!nlanes || level == DUMP_LEVEL_OFF || level >= DUMP_LEVEL_NR)
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->fd = fd;
	d->lanes = calloc(nlanes, sizeof(*d->lanes));
	if (!d->lanes)
		goto err;
	while (d->n < nlanes) {
		struct pto_dump_bind b = { .lane = first + d->n, .level = level };
		struct pto_dump_lane l = { .lane = b.lane };
		void *p;

		ret = ioc_call(fd, PTO_IOCTL_DUMP_BIND, &b);
		if (ret)
			goto err;
		p = mmap(NULL, b.mmap_size, PROT_READ, MAP_SHARED, fd,
			 (off_t)b.mmap_offset);
		if (p == MAP_FAILED) {
			ret = -errno;
			ioc_call(fd, PTO_IOCTL_DUMP_UNBIND, &l);
			goto err;
		}
		d->lanes[d->n++] = (struct dump_collector_lane){
			b.lane, { p, b.mmap_size } };
	}
	o.ctx = d;
	ret = dump_collector_start(d->lanes, d->n, level, &o, 1000, &d->c);
	if (ret)
		goto err;
	*out = d;
	return 0;
err:
	release(d);
	return ret;
}

int dump_device_finish(struct dump_device *d, bool close, const char *dir)
{
	struct dump_set s;
	int ret, r;

	ret = dump_collector_finish(d->c, close, &s);
	r = dump_write(&s, dir);
	if (r && !ret)
		ret = r;
	dump_set_fini(&s);
	r = release(d);
	return ret ? ret : r;
}

int dump_device_start_any(int fd, uint32_t level, uint32_t lanes,
			  uint32_t want, uint32_t *first, uint32_t *n,
			  struct dump_device **out)
{
	int ret = -EBUSY;
	uint32_t k, f;

	for (k = want; k; k--)
		for (f = 0; f + k <= lanes; f++) {
			ret = dump_device_start(fd, level, f, k, out);
			if (ret != -EBUSY) {
				*first = f;
				*n = k;
				return ret;
			}
		}
	return ret;
}

int dump_request_check(struct pto_dev *dev, uint32_t level, const char *dir,
		       char **copy)
{
	struct pto_dev_info info;
	int ret;

	*copy = NULL;
	if (level > PTO_DUMP_LEVEL_MAX ||
	    (level != PTO_DUMP_OFF && (!dir || !*dir)))
		return -EINVAL;
	if (level == PTO_DUMP_OFF)
		return 0;
	ret = pto_dev_info(dev, &info);
	if (ret)
		return ret;
	if (!(info.caps & PTO_CAP_DUMP) || !info.lanes)
		return -EOPNOTSUPP;
	*copy = strdup(dir);
	return *copy ? 0 : -ENOMEM;
}
