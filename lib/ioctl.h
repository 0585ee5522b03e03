/* SPDX-License-Identifier: MIT */
/* Internal: the one ioctl helper every libpto call goes through. */
#ifndef PTO_LIB_IOCTL_H
#define PTO_LIB_IOCTL_H

/* ioctl() restarted on EINTR / EAGAIN; returns 0 or -errno. */
int pto_ioctl(int fd, unsigned long request, void *arg);

#endif
