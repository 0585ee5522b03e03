/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by pto's selftests (kselftest harness, run in the VM). */
#ifndef PTO_SELFTEST_H
#define PTO_SELFTEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/pto.h>

#define PTO_DEV0 "/dev/pto0"

/* ioctl returning 0 or -errno, so ASSERT_EQ(-EINVAL, ...) reads well. */
static inline int pto_sioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) ? -errno : 0;
}

/* Same command number with another struct size (old / new user space). */
#define PTO_IOWR_SIZED(cmd, size) \
	_IOC(_IOC_READ | _IOC_WRITE, _IOC_TYPE(cmd), _IOC_NR(cmd), (size))

static inline int st_bo_alloc(int fd, uint64_t size, struct pto_bo_alloc *out)
{
	memset(out, 0, sizeof(*out));
	out->size = size;
	return pto_sioctl(fd, PTO_IOCTL_BO_ALLOC, out);
}

#endif
