// SPDX-License-Identifier: MIT
/*
 * libpto against drivers it must not trust blindly, without a device (ioctl()
 * below answers GET_INFO on /dev/null and counts the rest): an ABI major
 * mismatch is -EPROTO, any minor is accepted; a driver without cores is
 * refused before anything is taken; -EAGAIN is not retried; a forked child's
 * creates are -ECHILD with no ioctl; reserved words, a task_window above
 * PTO_MAX_TASK_WINDOW and too many clusters are refused before any ioctl.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/pto.h>
#include <pto/pto.h>
#include <pto/sched.h>
#include "fake_ioctl.h"
#include "kselftest_harness.h"

static uint32_t fake_major = PTO_ABI_MAJOR;
static uint32_t fake_minor;
static uint64_t fake_caps;
static int other_ioctls;
static int info_eagain;		/* GET_INFO calls left to refuse, EAGAIN */
static int info_calls;

/* The fake ioctl() (FAKE_IOCTL): pto's GET_INFO answers with fake_major,
 * fake_minor and fake_caps; every other pto ioctl is counted and refused. */
static int fake_caps_ioctl(int fd, unsigned long req, void *arg)
{
	if (_IOC_TYPE(req) != _IOC_TYPE(PTO_IOCTL_GET_INFO))
		return fake_ioctl_real(fd, req, arg);
	if (req == PTO_IOCTL_GET_INFO) {
		struct pto_info *i = arg;

		info_calls++;
		if (info_eagain > 0) {
			info_eagain--;
			errno = EAGAIN;
			return -1;
		}

		i->abi_major = fake_major;
		i->abi_minor = fake_minor;
		i->clusters = 1;
		i->cores = PTO_CORES_PER_CLUSTER;
		i->window_size = (uint32_t)sysconf(_SC_PAGESIZE);
		i->caps = fake_caps;
		return 0;
	}
	other_ioctls++;
	errno = ENOTTY;
	return -1;
}

FAKE_IOCTL(fake_caps_ioctl)

/* Create on a fake driver of ABI PTO_ABI_MAJOR.@minor with @caps; the
 * result. */
static int create_on(uint32_t minor, uint64_t caps, int *ioctls)
{
	struct pto_dev *dev;
	pto_orch *o = (pto_orch *)1;
	int ret;

	fake_minor = minor;
	fake_caps = caps;
	ret = pto_dev_open_path("/dev/null", &dev);
	if (ret)
		return 1000 + ret;	/* not the create's doing */
	other_ioctls = 0;
	ret = pto_orch_create_device(dev, NULL, NULL, &o);
	*ioctls = other_ioctls;
	if (o)
		ret = 2000;		/* *out must be NULL on failure */
	pto_dev_close(dev);
	return ret;
}

TEST(driver_without_cores_is_eopnotsupp)
{
	int ioctls;

	EXPECT_EQ(-EOPNOTSUPP, create_on(PTO_ABI_MINOR, PTO_CAP_MOCK, &ioctls));
	EXPECT_EQ(0, ioctls);
}

/*
 * A driver of another major - the one before, the one after, 0 - is
 * -EPROTO after its one GET_INFO, with *out NULL, no other ioctl and the
 * fd closed (the next open() gets the same number back).
 */
TEST(driver_of_another_major_is_eproto)
{
	const uint32_t majors[] = { PTO_ABI_MAJOR - 1, PTO_ABI_MAJOR + 1, 0 };
	struct pto_dev *dev;
	unsigned int i;
	int fd;

	fake_minor = PTO_ABI_MINOR;
	fake_caps = PTO_CAP_MOCK | PTO_CAP_CORES;
	for (i = 0; i < ARRAY_SIZE(majors); i++) {
		fd = open("/dev/null", O_RDONLY);
		ASSERT_LE(0, fd);
		close(fd);
		fake_major = majors[i];
		info_calls = 0;
		other_ioctls = 0;
		dev = (struct pto_dev *)1;
		EXPECT_EQ(-EPROTO, pto_dev_open_path("/dev/null", &dev))
			TH_LOG("driver ABI %u.%u", majors[i], PTO_ABI_MINOR);
		EXPECT_EQ(NULL, dev);
		EXPECT_EQ(1, info_calls);
		EXPECT_EQ(0, other_ioctls);
		EXPECT_EQ(fd, open("/dev/null", O_RDONLY));
		close(fd);
	}
	fake_major = PTO_ABI_MAJOR;
}

/* The control: a driver that has what the backend needs passes the check
 * and fails only at its first real ioctl (refused here), whatever its
 * minor (a newer one adds only what this libpto does not use). */
TEST(current_driver_with_cores_gets_past_the_check)
{
	int ioctls, ret;

	ret = create_on(PTO_ABI_MINOR + 1, PTO_CAP_MOCK | PTO_CAP_CORES,
			&ioctls);
	EXPECT_NE(-EOPNOTSUPP, ret);
	EXPECT_GT(0, ret);
	EXPECT_LT(0, ioctls);
	ret = create_on(PTO_ABI_MINOR, PTO_CAP_MOCK | PTO_CAP_CORES, &ioctls);
	EXPECT_NE(-EOPNOTSUPP, ret);
	EXPECT_LT(0, ioctls);
}

/* A driver that answers "try again": one call, and the caller decides. A
 * retry loop would make 1001 calls here (and spin for as long as a real
 * driver kept saying it). */
TEST(eagain_is_returned_not_retried)
{
	struct pto_dev *dev = (struct pto_dev *)1;

	fake_minor = PTO_ABI_MINOR;
	fake_caps = PTO_CAP_MOCK | PTO_CAP_CORES;
	info_eagain = 1000;
	info_calls = 0;
	EXPECT_EQ(-EAGAIN, pto_dev_open_path("/dev/null", &dev));
	EXPECT_EQ(NULL, dev);
	EXPECT_EQ(1, info_calls);
	info_eagain = 0;
}

/* The child's verdict as its exit status: 0, or the step that failed. */
static int child_creates_nothing(struct pto_dev *dev)
{
	struct pto_bo *bo = (struct pto_bo *)1;
	pto_orch *o = (pto_orch *)1;

	other_ioctls = 0;
	if (pto_bo_alloc(dev, 4096, 0, &bo) != -ECHILD || bo)
		return 1;
	if (pto_orch_create_device(dev, NULL, NULL, &o) != -ECHILD || o)
		return 2;
	if (other_ioctls)
		return 3;
	pto_dev_close(dev);	/* the child's fd and memory, no ioctl */
	return other_ioctls ? 4 : 0;
}

TEST(forked_child_creates_nothing_in_the_parents_file)
{
	struct pto_dev *dev;
	int status;
	pid_t pid;

	fake_minor = PTO_ABI_MINOR;
	fake_caps = PTO_CAP_MOCK | PTO_CAP_CORES;
	ASSERT_EQ(0, pto_dev_open_path("/dev/null", &dev));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(child_creates_nothing(dev));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	pto_dev_close(dev);
}

/* Create on a current fake driver with @ocfg and @scfg; the result, and
 * the pto ioctls it made besides GET_INFO. */
static int create_with(const struct pto_orch_config *ocfg,
		       const struct pto_sched_config *scfg, int *ioctls)
{
	struct pto_dev *dev;
	pto_orch *o = (pto_orch *)1;
	int ret;

	fake_minor = PTO_ABI_MINOR;
	fake_caps = PTO_CAP_MOCK | PTO_CAP_CORES;
	ret = pto_dev_open_path("/dev/null", &dev);
	if (ret)
		return 1000 + ret;
	other_ioctls = 0;
	ret = pto_orch_create_device(dev, ocfg, scfg, &o);
	*ioctls = other_ioctls;
	if (o)
		ret = 2000;
	pto_dev_close(dev);
	return ret;
}

/*
 * A non-zero reserved word of either config - each word, each bit
 * position - is -EINVAL before anything is taken: no cluster or core
 * ioctl, and not even the once-per-process fork hygiene of a create
 * (this test's process never created an orchestrator). The same configs
 * with every word zero get past the check to the first real ioctl. The
 * workers of @ocfg are not read on a device: garbage there is no error.
 */
TEST(reserved_config_words_are_refused_before_any_ioctl)
{
	struct pto_worker_desc w = { .id = 0, .kind = PTO_WORKER_SUB };
	struct pto_orch_config oc = { .task_window = 64 };
	struct pto_sched_config sc = { .clusters = 1 };
	int ioctls, ret;
	unsigned int i;

	unsetenv("OMP_NUM_THREADS");
	for (i = 0; i < ARRAY_SIZE(oc.reserved); i++) {
		oc.reserved[i] = 1ULL << (i * 5 % 64);
		EXPECT_EQ(-EINVAL, create_with(&oc, &sc, &ioctls))
			TH_LOG("pto_orch_config.reserved[%u]", i);
		EXPECT_EQ(0, ioctls);
		oc.reserved[i] = 0;
	}
	for (i = 0; i < ARRAY_SIZE(sc.reserved); i++) {
		sc.reserved[i] = 1ULL << (63 - i * 7);
		EXPECT_EQ(-EINVAL, create_with(&oc, &sc, &ioctls))
			TH_LOG("pto_sched_config.reserved[%u]", i);
		EXPECT_EQ(0, ioctls);
		EXPECT_EQ(-EINVAL, create_with(NULL, &sc, &ioctls));
		EXPECT_EQ(0, ioctls);
		sc.reserved[i] = 0;
	}
	EXPECT_EQ(NULL, getenv("OMP_NUM_THREADS"));
	/* The control: all zero, past the check (refused at a fake ioctl). */
	ret = create_with(&oc, &sc, &ioctls);
	EXPECT_NE(-EINVAL, ret);
	EXPECT_GT(0, ret);
	EXPECT_LT(0, ioctls);
	/* Workers are not read on a device. */
	memset(w.reserved, 0xa5, sizeof(w.reserved));
	oc.workers = &w;
	oc.nworkers = 1;
	ret = create_with(&oc, &sc, &ioctls);
	EXPECT_NE(-EINVAL, ret);
	EXPECT_LT(0, ioctls);
}

/*
 * A task_window whose slot indexes would wrap 32 bits
 * (pto_orch_create_device(3)) is -EINVAL before any ioctl on a device too; the
 * largest one gets past the check to the first (refused) ioctl.
 */
TEST(task_window_beyond_the_max_is_refused_before_any_ioctl)
{
	struct pto_orch_config oc = { .task_window = PTO_MAX_TASK_WINDOW + 1 };
	int ioctls, ret;

	EXPECT_EQ(-EINVAL, create_with(&oc, NULL, &ioctls));
	EXPECT_EQ(0, ioctls);
	oc.task_window = 0xffffffffu;
	EXPECT_EQ(-EINVAL, create_with(&oc, NULL, &ioctls));
	EXPECT_EQ(0, ioctls);
	oc.task_window = PTO_MAX_TASK_WINDOW;
	ret = create_with(&oc, NULL, &ioctls);
	EXPECT_NE(-EINVAL, ret);
	EXPECT_GT(0, ret);
	EXPECT_LT(0, ioctls);
}

/*
 * More clusters than the device has (pto_orch_create_device(3)) is -EINVAL
 * before any ioctl; all of them (1 here, or 0: all) gets past the check.
 */
TEST(clusters_beyond_the_device_are_refused_before_any_ioctl)
{
	struct pto_sched_config sc = { .clusters = 2 };
	int ioctls, ret;

	EXPECT_EQ(-EINVAL, create_with(NULL, &sc, &ioctls));
	EXPECT_EQ(0, ioctls);
	sc.clusters = 65;
	EXPECT_EQ(-EINVAL, create_with(NULL, &sc, &ioctls));
	EXPECT_EQ(0, ioctls);
	sc.clusters = 1;
	ret = create_with(NULL, &sc, &ioctls);
	EXPECT_NE(-EINVAL, ret);
	EXPECT_GT(0, ret);
	EXPECT_LT(0, ioctls);
}

/* pto_dev_info() writes the caller's struct whole: a struct filled with
 * garbage comes back with the driver's values, core_type[] past the
 * cores and every reserved word zero. */
TEST(dev_info_is_written_whole)
{
	struct pto_dev_info info;
	struct pto_dev *dev;
	unsigned int i;

	fake_minor = PTO_ABI_MINOR;
	fake_caps = PTO_CAP_MOCK | PTO_CAP_CORES;
	ASSERT_EQ(0, pto_dev_open_path("/dev/null", &dev));
	memset(&info, 0xa5, sizeof(info));
	ASSERT_EQ(0, pto_dev_info(dev, &info));
	EXPECT_EQ(PTO_ABI_MAJOR, info.abi_major);
	EXPECT_EQ(PTO_ABI_MINOR, info.abi_minor);
	EXPECT_EQ(1u, info.clusters);
	EXPECT_EQ(PTO_CORES_PER_CLUSTER, info.cores);
	EXPECT_EQ(PTO_CAP_MOCK | PTO_CAP_CORES, info.caps);
	EXPECT_EQ((uint32_t)sysconf(_SC_PAGESIZE), info.window_size);
	/* Braces: EXPECT_*() TH_LOG() is two statements. */
	for (i = info.cores; i < PTO_DEV_MAX_CORES; i++) {
		EXPECT_EQ(0, info.core_type[i]) TH_LOG("core_type[%u]", i);
	}
	EXPECT_EQ(0u, info.reserved0);
	for (i = 0; i < ARRAY_SIZE(info.reserved); i++) {
		EXPECT_EQ(0u, info.reserved[i]) TH_LOG("reserved[%u]", i);
	}
	pto_dev_close(dev);
}

TEST_HARNESS_MAIN
