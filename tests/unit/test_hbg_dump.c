// SPDX-License-Identifier: MIT
/*
 * pto_hbg_set_dump_args() without a device (ioctl() below answers GET_INFO
 * on /dev/null and counts the rest): OFF is accepted, every other level is
 * -EOPNOTSUPP before any ioctl and with nothing on stderr, its reason is
 * pto_strerror()'s, and a level out of range or a NULL graph is -EINVAL.
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

/* GET_INFO answers a one-cluster mock with cores; the rest are counted. */
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
		i->caps = PTO_CAP_MOCK | PTO_CAP_CORES;
		return 0;
	}
	other_ioctls++;
	errno = ENOTTY;
	return -1;
}

FAKE_IOCTL(fake_hbg_ioctl)

TEST(dump_levels_on_the_resident_route)
{
	const uint32_t refused[] = { PTO_DUMP_PARTIAL, PTO_DUMP_FULL,
				     PTO_DUMP_HYBRID };
	struct pto_dev *dev;
	pto_hbg *g;
	FILE *err;
	unsigned int i;
	int saved;

	ASSERT_EQ(0, pto_dev_open_path("/dev/null", &dev));
	ASSERT_EQ(0, pto_hbg_create(dev, &g));
	err = tmpfile();
	ASSERT_NE(NULL, err);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	ASSERT_LE(0, dup2(fileno(err), STDERR_FILENO));
	other_ioctls = 0;
	EXPECT_EQ(0, pto_hbg_set_dump_args(g, PTO_DUMP_OFF));
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		EXPECT_EQ(-EOPNOTSUPP, pto_hbg_set_dump_args(g, refused[i]))
			TH_LOG("level %u", refused[i]);
	EXPECT_EQ(-EINVAL, pto_hbg_set_dump_args(g, PTO_DUMP_LEVEL_MAX + 1));
	EXPECT_EQ(-EINVAL, pto_hbg_set_dump_args(NULL, PTO_DUMP_FULL));
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	EXPECT_EQ(0, lseek(fileno(err), 0, SEEK_END));	/* nothing printed */
	EXPECT_EQ(0, other_ioctls);
	EXPECT_NE(NULL, strstr(pto_strerror(-EOPNOTSUPP), "resident route"));
	fclose(err);
	pto_hbg_destroy(g);
	pto_dev_close(dev);
}

TEST_HARNESS_MAIN
