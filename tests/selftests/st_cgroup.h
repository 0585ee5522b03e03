/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A memory cgroup of a test's own: cgroup2 mounted on /sys/fs/cgroup if
 * nothing is there, the memory controller enabled for the root's children,
 * the calling process moved into /sys/fs/cgroup/NAME and back.
 */
#ifndef PTO_ST_CGROUP_H
#define PTO_ST_CGROUP_H

#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include "pto_selftest.h"

#define ST_CG "/sys/fs/cgroup/"

struct st_cg {
	char dir[128];		/* ST_CG NAME/ */
	char own[256];		/* the cgroup the process came from */
	int mounted;
};

/*
 * This process's cgroup v2 path ("/" or "/a/b", from the "0::" line of
 * /proc/self/cgroup) in @buf. The line is there once cgroup2 was ever
 * mounted (before, every process is in the root). 0 or -1.
 */
static inline int st_cg_own(char *buf, size_t n)
{
	char line[256];
	FILE *f = fopen("/proc/self/cgroup", "r");
	int ret = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(buf, n, "%s", line + 3);
			ret = 0;
			break;
		}
	fclose(f);
	return ret;
}

/*
 * Enter ST_CG @name with the memory controller. 0; a reason to skip (a
 * cgroup v1 hierarchy, no memory controller) in *@skip and 1; or -1.
 */
static inline int st_cg_enter(struct st_cg *cg, const char *name,
			      const char **skip)
{
	struct statfs sfs;
	char pid[32], ctl[256], procs[sizeof(cg->dir) + 16];

	memset(cg, 0, sizeof(*cg));
	if (statfs(ST_CG, &sfs))
		return -1;
	if (sfs.f_type == SYSFS_MAGIC) {
		/* Nothing mounted there: cgroup2, for this test only. */
		if (mount("none", ST_CG, "cgroup2", 0, NULL))
			return -1;
		cg->mounted = 1;
	} else if (sfs.f_type != CGROUP2_SUPER_MAGIC) {
		*skip = "a cgroup v1 hierarchy on " ST_CG;
		return 1;
	}
	if (st_read_line(ST_CG "cgroup.controllers", ctl, sizeof(ctl)) ||
	    !strstr(ctl, "memory")) {
		if (cg->mounted)
			umount(ST_CG);
		*skip = "no memory controller in cgroup2";
		return 1;
	}
	snprintf(cg->dir, sizeof(cg->dir), ST_CG "%s/", name);
	snprintf(procs, sizeof(procs), "%scgroup.procs", cg->dir);
	snprintf(pid, sizeof(pid), "%d", getpid());
	if (st_cg_own(cg->own, sizeof(cg->own)) ||
	    st_write_file(ST_CG "cgroup.subtree_control", "+memory") ||
	    (mkdir(cg->dir, 0755) && errno != EEXIST) ||
	    st_write_file(procs, pid))
		return -1;
	return 0;
}

/* Write @val to the cgroup's control file @file. */
static inline int st_cg_write(const struct st_cg *cg, const char *file,
			      const char *val)
{
	char path[sizeof(cg->dir) + 64];

	snprintf(path, sizeof(path), "%s%s", cg->dir, file);
	return st_write_file(path, val);
}

/* The value of @file (one number, memory.current) or -1. */
static inline long long st_cg_value(const struct st_cg *cg, const char *file)
{
	char path[sizeof(cg->dir) + 64], line[64];

	snprintf(path, sizeof(path), "%s%s", cg->dir, file);
	if (st_read_line(path, line, sizeof(line)))
		return -1;
	return strtoll(line, NULL, 10);
}

/* Bytes of @key in the cgroup's memory.stat ("slab", "vmalloc") or -1. */
static inline long long st_cg_stat(const struct st_cg *cg, const char *key)
{
	char path[sizeof(cg->dir) + 16], line[128], fmt[48];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%smemory.stat", cg->dir);
	snprintf(fmt, sizeof(fmt), "%s %%lld", key);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, fmt, &v) == 1)
			break;
	fclose(f);
	return v;
}

/* Back where the process came from; the cgroup removed. 0 or -1. */
static inline int st_cg_leave(struct st_cg *cg)
{
	char back[sizeof(ST_CG) + sizeof(cg->own) + 16], pid[32];
	int ret = 0;

	snprintf(pid, sizeof(pid), "%d", getpid());
	/* own is "/" or "/a/b". */
	if (!strcmp(cg->own, "/"))
		snprintf(back, sizeof(back), ST_CG "cgroup.procs");
	else
		snprintf(back, sizeof(back), ST_CG "%s/cgroup.procs",
			 cg->own + 1);
	if (st_write_file(back, pid) || rmdir(cg->dir))
		ret = -1;
	if (cg->mounted && umount(ST_CG))
		ret = -1;
	return ret;
}

#endif /* PTO_ST_CGROUP_H */
