// SPDX-License-Identifier: MIT
#include <errno.h>
#include <sys/ioctl.h>
#include "ioctl.h"

int ioc_call(int fd, unsigned long request, void *arg)
{
	int ret;

	/*
	 * EINTR only. An -EAGAIN (none of pto's ioctls returns one today;
	 * the fd is O_NONBLOCK for its read()) goes to the caller: retrying
	 * it here would spin a CPU for as long as the condition lasts.
	 */
	do {
		ret = ioctl(fd, request, arg);
	} while (ret == -1 && errno == EINTR);
	return ret == -1 ? -errno : 0;
}
