/* SPDX-License-Identifier: MIT */
/*
 * Unit tests that fake the driver define their own ioctl(), linked ahead
 * of libc's (the library's calls go through lib/ioctl.c to ioctl()).
 * FAKE_IOCTL(handler) defines that ioctl() and hands its pointer argument
 * to the test's handler:
 *	static int handler(int fd, unsigned long req, void *arg);
 * which answers what it fakes and passes the rest to the kernel with
 * fake_ioctl_real().
 */
#ifndef PTO_FAKE_IOCTL_H
#define PTO_FAKE_IOCTL_H

#include <stdarg.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

static inline int fake_ioctl_real(int fd, unsigned long req, void *arg)
{
	return (int)syscall(SYS_ioctl, fd, req, arg);
}

#define FAKE_IOCTL(handler)					\
	int ioctl(int fd, unsigned long req, ...)		\
	{							\
		va_list ap;					\
		void *arg;					\
								\
		va_start(ap, req);				\
		arg = va_arg(ap, void *);			\
		va_end(ap);					\
		return handler(fd, req, arg);			\
	}

#endif
