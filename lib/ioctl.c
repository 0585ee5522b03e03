// SPDX-License-Identifier: MIT
#include <errno.h>
#include <sys/ioctl.h>
#include "ioctl.h"

int pto_ioctl(int fd, unsigned long request, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, request, arg);
	} while (ret == -1 && (errno == EINTR || errno == EAGAIN));
	return ret == -1 ? -errno : 0;
}
