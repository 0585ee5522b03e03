// SPDX-License-Identifier: MIT
/*
 * pto_hbg_dump_args() without a device (ioctl() below answers GET_INFO
 * on /dev/null and counts the rest): OFF needs no directory; a level
 * above OFF is accepted on a device with dump lanes and -EOPNOTSUPP on
 * one without; a level out of range, a NULL graph or a missing directory
 * is -EINVAL. No lane is bound before a run and nothing is printed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/pto.h>
#include <linux/pto_dump.h>
#include <pto/pto.h>
#include <pto/graph.h>
#include "fake_ioctl.h"
#include "kselftest_harness.h"

static int other_ioctls;
static uint32_t fake_lanes;

/* GET_INFO answers a one-cluster mock with @fake_lanes; the rest count. */
static int fake_hbg_ioctl(int fd, unsigned long req, void *arg)
{
	if (_IOC_TYPE(req) != _IOC_TYPE(PTO_IOCTL_GET_INFO))
		return fake_ioctl_real(fd, req, arg);
	if (req == PTO_IOCTL_GET_INFO) {
		struct pto_info *i = arg;

		i->abi_major = PTO_ABI_MAJOR;
		i->abi_minor = PTO_ABI_MINOR;
		i->clusters = 1;
		i->cores = PTO_CORES_PER_CLUSTER;
		i->window_size = (uint32_t)sysconf(_SC_PAGESIZE);
		i->caps = PTO_CAP_MOCK | PTO_CAP_CORES |
			  (fake_lanes ? PTO_CAP_DUMP : 0);
		i->lanes = fake_lanes;
		return 0;
	}
	other_ioctls++;
	errno = ENOTTY;
	return -1;
}

FAKE_IOCTL(fake_hbg_ioctl)

TEST(dump_levels_on_the_resident_route)
{
	const uint32_t levels[] = { PTO_DUMP_PARTIAL, PTO_DUMP_FULL,
				    PTO_DUMP_HYBRID };
	struct pto_dev *dev, *bare;
	pto_hbg *g, *gb;
	FILE *err;
	unsigned int i;
	int saved;

	fake_lanes = 2;
	ASSERT_EQ(0, pto_dev_open_path("/dev/null", &dev));
	fake_lanes = 0;
	ASSERT_EQ(0, pto_dev_open_path("/dev/null", &bare));
	ASSERT_EQ(0, pto_hbg_create(dev, &g));
	ASSERT_EQ(0, pto_hbg_create(bare, &gb));
	err = tmpfile();
	ASSERT_NE(NULL, err);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	ASSERT_LE(0, dup2(fileno(err), STDERR_FILENO));
	other_ioctls = 0;
	EXPECT_EQ(0, pto_hbg_dump_args(g, PTO_DUMP_OFF, NULL));
	for (i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		EXPECT_EQ(0, pto_hbg_dump_args(g, levels[i], "/tmp"));
	}
	EXPECT_EQ(-EOPNOTSUPP, pto_hbg_dump_args(gb, PTO_DUMP_FULL, "/tmp"));
	EXPECT_EQ(0, pto_hbg_dump_args(gb, PTO_DUMP_OFF, NULL));
	EXPECT_EQ(-EINVAL, pto_hbg_dump_args(g, PTO_DUMP_FULL, NULL));
	EXPECT_EQ(-EINVAL, pto_hbg_dump_args(g, PTO_DUMP_LEVEL_MAX + 1, "/tmp"));
	EXPECT_EQ(-EINVAL, pto_hbg_dump_args(NULL, PTO_DUMP_FULL, "/tmp"));
	EXPECT_EQ(0, pto_hbg_dump_args(g, PTO_DUMP_OFF, NULL));
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	EXPECT_EQ(0, lseek(fileno(err), 0, SEEK_END));	/* nothing printed */
	EXPECT_EQ(0, other_ioctls);	/* no lane bound before a run */
	fclose(err);
	pto_hbg_destroy(gb);
	pto_hbg_destroy(g);
	pto_dev_close(bare);
	pto_dev_close(dev);
}

TEST_HARNESS_MAIN
