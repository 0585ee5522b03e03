// SPDX-License-Identifier: MIT
/*
 * The collector on a device (lib/dump/collector_dev.c) with the driver
 * faked: ioctl() answers the lane commands (tests/unit/fake_ioctl.h) and
 * the "device" is a memfd whose pages are the lanes' images, which the
 * library maps read-only while fake producers (dump_lane_fake.h) publish
 * through a writable mapping. Two lanes bound, drained, acknowledged
 * through PTO_IOCTL_DUMP_ACK, closed, written, unbound; a failed bind
 * unwinds the lanes already bound.
 */
#include <sys/mman.h>
#include "kselftest_harness.h"
#include "fake_ioctl.h"
#include "dump_fixture.h"
#include "dump_lane_fake.h"
#include "../../tools/ptoctl_json.c"
#include "../../tools/ptoctl_dump_read.c"

#define NLANES 2
#define LANE_BYTES ((size_t)PTO_DUMP_ARENA_OFFSET + ARENA)

static struct {
	int fd;				/* the memfd standing for /dev/pto0 */
	struct fake f[NLANES];
	bool bound[NLANES];
	int busy_lane;			/* BIND of this lane: -EBUSY */
	int unbinds, closes;
} dev = { .fd = -1, .busy_lane = -1 };

static int fail(int err)
{
	errno = err;
	return -1;
}

static int handler(int fd, unsigned long req, void *arg)
{
	uint32_t lane = *(uint32_t *)arg;	/* every command's first field */
	int ret;

	if (fd != dev.fd)
		return fake_ioctl_real(fd, req, arg);
	if (lane >= NLANES)
		return fail(EINVAL);
	switch (req) {
	case PTO_IOCTL_DUMP_BIND: {
		struct pto_dump_bind *b = arg;

		if (dev.bound[lane] || (int)lane == dev.busy_lane)
			return fail(EBUSY);
		if (b->level != PTO_DUMP_FULL || b->flags)
			return fail(EINVAL);
		dev.bound[lane] = true;
		b->mmap_offset = lane * LANE_BYTES;
		b->mmap_size = LANE_BYTES;
		b->arena_size = ARENA;
		return 0;
	}
	case PTO_IOCTL_DUMP_ACK:
		if (!dev.bound[lane])
			return fail(EPERM);
		ret = fake_ack(&dev.f[lane], arg);
		return ret ? fail(-ret) : 0;
	case PTO_IOCTL_DUMP_CLOSE:
		__atomic_add_fetch(&dev.closes, 1, __ATOMIC_RELAXED);
		return fake_close(&dev.f[lane], lane);
	case PTO_IOCTL_DUMP_UNBIND:
		if (!dev.bound[lane])
			return fail(EPERM);
		dev.bound[lane] = false;
		dev.unbinds++;
		return 0;
	}
	return fail(ENOTTY);
}

FAKE_IOCTL(handler)

FIXTURE(device)
{
	struct dump_dir d;
	uint8_t *rw;			/* the producers' view of the memfd */
};

FIXTURE_SETUP(device)
{
	int i;

	ASSERT_EQ(0, dump_dir_make(&self->d));
	dev.fd = memfd_create("pto-lanes", 0);
	ASSERT_LE(0, dev.fd);
	ASSERT_EQ(0, ftruncate(dev.fd, NLANES * LANE_BYTES));
	self->rw = mmap(NULL, NLANES * LANE_BYTES, PROT_READ | PROT_WRITE,
			MAP_SHARED, dev.fd, 0);
	ASSERT_NE(MAP_FAILED, self->rw);
	for (i = 0; i < NLANES; i++) {
		memset(&dev.f[i], 0, sizeof(dev.f[i]));
		img_init(&dev.f[i].m, self->rw + i * LANE_BYTES);
		dev.f[i].seed = 100 + (unsigned int)i;
		dev.f[i].task0 = (uint64_t)i << 32;
		dev.bound[i] = false;
	}
	dev.busy_lane = -1;
	dev.unbinds = dev.closes = 0;
}

FIXTURE_TEARDOWN(device)
{
	munmap(self->rw, NLANES * LANE_BYTES);
	close(dev.fd);
	dev.fd = -1;
	dump_dir_remove(&self->d);
}

/* Lane @lane's records of @d, in the file's order, carry its producer's
 * stream 0, 1, 2, ... */
static uint64_t lane_stream(struct __test_metadata *_metadata,
			    const struct dd_dump *d, uint32_t lane)
{
	uint64_t k = 0;
	size_t i, j;

	for (i = 0; i < d->set.n; i++) {
		const struct dump_rec *r = &d->set.rec[i];
		const float *v = (const float *)(d->set.bin + r->bin_offset);

		if (r->task_id >> 32 != lane)
			continue;
		for (j = 0; j < r->bin_size / 4; j++, k++)
			EXPECT_EQ((float)k, v[j]) TH_LOG("lane %u", lane);
	}
	return k;
}

TEST_F(device, two_lanes_drained_closed_written_unbound)
{
	struct dump_device *dd;
	pthread_t p[NLANES];
	struct dd_dump r;
	uint64_t records = 0;
	int i;

	ASSERT_EQ(0, dump_device_start(dev.fd, DUMP_LEVEL_FULL, 0, NLANES, &dd));
	EXPECT_TRUE(dev.bound[0] && dev.bound[1]);
	for (i = 0; i < NLANES; i++)
		pthread_create(&p[i], NULL, producer, &dev.f[i]);
	for (i = 0; i < NLANES; i++)
		pthread_join(p[i], NULL);
	ASSERT_EQ(0, dump_device_finish(dd, true, self->d.dir));
	EXPECT_EQ(NLANES, dev.closes);
	EXPECT_EQ(NLANES, dev.unbinds);
	ASSERT_EQ(0, dd_load(self->d.dir, &r));
	EXPECT_FALSE(r.set.unknown);
	for (i = 0; i < NLANES; i++) {
		struct pto_dump_state *s = st(&dev.f[i].m);

		EXPECT_EQ(0, dev.f[i].bad_acks);
		EXPECT_EQ((uint64_t)NBUF, dev.f[i].acked_buffers);
		EXPECT_EQ(s->acct.published_payloads, dev.f[i].acked_payloads);
		/* Every record carries a payload; each is its stream's next. */
		EXPECT_EQ(s->acct.published_payloads, s->acct.collected);
		lane_stream(_metadata, &r, (uint32_t)i);
		records += s->acct.collected;
	}
	EXPECT_EQ(records, r.set.n);
	dd_free(&r);
}

/* An aborted run: the terminals are not closed, the files say unknown. */
TEST_F(device, aborted_run_written_unknown)
{
	struct dump_device *dd;
	pthread_t p;
	struct dd_dump r;

	ASSERT_EQ(0, dump_device_start(dev.fd, DUMP_LEVEL_FULL, 0, 1, &dd));
	pthread_create(&p, NULL, producer, &dev.f[0]);
	pthread_join(p, NULL);
	ASSERT_EQ(0, dump_device_finish(dd, false, self->d.dir));
	EXPECT_EQ(0, dev.closes);
	EXPECT_EQ(1, dev.unbinds);
	ASSERT_EQ(0, dd_load(self->d.dir, &r));
	EXPECT_TRUE(r.set.unknown);
	EXPECT_EQ(st(&dev.f[0].m)->acct.collected, r.set.n);
	lane_stream(_metadata, &r, 0);
	dd_free(&r);
}

TEST_F(device, failed_bind_unwinds)
{
	struct dump_device *dd = NULL;

	dev.busy_lane = 1;
	EXPECT_EQ(-EBUSY, dump_device_start(dev.fd, DUMP_LEVEL_FULL, 0,
					    NLANES, &dd));
	EXPECT_FALSE(dev.bound[0]);
	EXPECT_EQ(1, dev.unbinds);
	EXPECT_EQ(-EINVAL, dump_device_start(dev.fd, DUMP_LEVEL_OFF, 0, 1, &dd));
	EXPECT_EQ(NULL, dd);
}

TEST_HARNESS_MAIN
