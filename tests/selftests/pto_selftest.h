/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by pto's selftests (kselftest harness, run in the VM). */
#ifndef PTO_SELFTEST_H
#define PTO_SELFTEST_H

#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/pto.h>

#define PTO_DEV0 "/dev/pto0"
#define PTO_DBG0 "/sys/kernel/debug/pto/pto0/"
#define PTO_PARAMS "/sys/module/pto/parameters/"

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

/* Write @val to a sysfs / debugfs file. 0 or -1. */
static inline int st_write_file(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(val, f);
	return fclose(f);
}

/* The first line of a file, without its newline. 0 or -1. */
static inline int st_read_line(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "r");

	if (!f || !fgets(buf, (int)n, f)) {
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* Line @core of a debugfs table (after its header line). 0 or -1. */
static inline int st_dbg_line(const char *file, unsigned int core, char *buf,
			      size_t n)
{
	FILE *f = fopen(file, "r");
	unsigned int i;
	int ret = -1;

	if (!f)
		return -1;
	for (i = 0; i <= core + 1; i++)
		if (!fgets(buf, (int)n, f))
			goto out;
	ret = 0;
out:
	fclose(f);
	return ret;
}

#endif
