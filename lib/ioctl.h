/* SPDX-License-Identifier: MIT */
/* Internal: the one ioctl helper every libpto call goes through. Internal
 * symbols of ioctl.c carry the ioc_ prefix. */
#ifndef PTO_LIB_IOCTL_H
#define PTO_LIB_IOCTL_H

/*
 * ioctl() restarted on EINTR only; returns 0 or -errno. An EAGAIN goes to
 * the caller (ioctl.c says why), as every other error does.
 */
int ioc_call(int fd, unsigned long request, void *arg);

#endif
