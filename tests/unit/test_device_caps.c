// SPDX-License-Identifier: MIT
/*
 * libpto against drivers it must not trust blindly, without a device:
 * ioctl() below answers GET_INFO on /dev/null as the driver under test
 * would, and counts every other pto ioctl (a refusal that took anything
 * shows).
 *  - pto_orch_create_device() refuses, before it takes anything, a
 *    driver it cannot run on: one without cores to launch, or older than
 *    ABI 1.3 (the per-launch eventfd every scheduler thread launches
 *    with).
 *  - An ioctl's -EAGAIN reaches the caller at once; it is not retried
 *    in a loop.
 *  - A forked child creates nothing in the parent's file: pto_bo_alloc(),
 *    a first pto_bo_map() and pto_orch_create_device() are -ECHILD there,
 *    with no ioctl.
 */
#include <errno.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/pto.h>
#include <pto/pto.h>
#include <pto/sched.h>
#include "kselftest_harness.h"

static uint32_t fake_minor;
static uint64_t fake_caps;
static int other_ioctls;
static int info_eagain;		/* GET_INFO calls left to refuse, EAGAIN */
static int info_calls;

/* Linked ahead of libc's: pto's GET_INFO answers with fake_minor and
 * fake_caps; every other pto ioctl is counted and refused. */
int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (_IOC_TYPE(req) != _IOC_TYPE(PTO_IOCTL_GET_INFO))
		return (int)syscall(SYS_ioctl, fd, req, arg);
	if (req == PTO_IOCTL_GET_INFO) {
		struct pto_info *i = arg;

		info_calls++;
		if (info_eagain > 0) {
			info_eagain--;
			errno = EAGAIN;
			return -1;
		}

		i->abi_major = PTO_ABI_MAJOR;
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

/* Create on a fake driver of ABI 1.@minor with @caps; the result. */
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

TEST(driver_before_abi_1_3_is_eopnotsupp)
{
	int ioctls;

	EXPECT_EQ(-EOPNOTSUPP, create_on(2, PTO_CAP_MOCK | PTO_CAP_CORES,
					 &ioctls));
	EXPECT_EQ(0, ioctls);
}

/* The control: a driver that has what the backend needs passes the check
 * and fails only at its first real ioctl (refused here). */
TEST(current_driver_with_cores_gets_past_the_check)
{
	int ioctls, ret;

	ret = create_on(3, PTO_CAP_MOCK | PTO_CAP_CORES, &ioctls);
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

TEST_HARNESS_MAIN
