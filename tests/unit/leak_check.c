// SPDX-License-Identifier: MIT
/*
 * LeakSanitizer for the unit tests: the harness ends each test with _exit(),
 * which skips ASan's leak scan, so test programs link with -Wl,--wrap=_exit
 * and scan first (a leak: exit status 23). Not in a child forked from a
 * multi-threaded process: the scan takes allocator locks another thread may
 * have held at the fork. Its heap is its parent's copy, scanned at the
 * parent's exit.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sanitizer/lsan_interface.h>

void __real__exit(int status) __attribute__((noreturn));
void __wrap__exit(int status) __attribute__((noreturn));

static int threads_at_fork;	/* set in the parent before each fork */
static int no_scan;		/* in a child forked from several threads */

/* include/linux/sched.h: the task is in do_exit(). */
#define PF_EXITING 0x4

/* Whether a failed open or read of a task's stat says the task is gone
 * (ENOENT once unlisted, ESRCH once reaped); any other error (EMFILE
 * near the fd limit) counts it as live: a wrongly scanned child can hang
 * (above), a wrongly unscanned one only loses coverage. */
static int task_gone(void)
{
	return errno == ENOENT || errno == ESRCH;
}

/* Whether the task of /proc/self/task/@tid/stat (@dir: /proc/self/task)
 * may run user code again: 0 if it is gone or exiting. */
static int task_is_live(int dir, const char *tid)
{
	char buf[512];
	char path[64], *p;
	unsigned long flags;
	ssize_t n;
	int fd, i, gone;

	if (snprintf(path, sizeof(path), "%s/stat", tid) >= (int)sizeof(path))
		return 1;	/* not a tid */
	fd = openat(dir, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return !task_gone();	/* unlisted since the directory was read? */
	n = read(fd, buf, sizeof(buf) - 1);
	gone = n < 0 && task_gone();	/* before close() sets errno */
	close(fd);
	if (n <= 0)
		return !gone;
	buf[n] = 0;
	/* After "pid (comm)" (comm may hold ')' or blanks): state ppid
	 * pgrp session tty_nr tpgid flags, see proc(5). */
	p = strrchr(buf, ')');
	if (!p)
		return 1;
	for (i = 0; i < 7 && p; i++)
		p = strchr(p + 1, ' ');
	if (!p)
		return 1;
	flags = strtoul(p + 1, NULL, 10);
	return !(flags & PF_EXITING);
}

/*
 * Threads that may still run user code (and hold a sanitizer lock at the
 * fork); 0 if unknown. Not /proc/self/status's Threads, which counts a joined
 * thread a moment longer: one past exit_signals() (PF_EXITING) is not counted.
 * No allocation (getdents64): it runs at every fork.
 */
static int live_threads(void)
{
	char ents[4096] __attribute__((aligned(8)));	/* struct dirent64 */
	struct dirent64 *d;
	ssize_t len, off;
	int dir, n = 0;

	dir = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return 0;
	while ((len = getdents64(dir, ents, sizeof(ents))) > 0) {
		for (off = 0; off < len; off += d->d_reclen) {
			d = (struct dirent64 *)(ents + off);
			if (d->d_name[0] != '.')
				n += task_is_live(dir, d->d_name);
		}
	}
	close(dir);
	return len < 0 ? 0 : n;
}

static void before_fork(void)
{
	threads_at_fork = live_threads();
}

static void in_child(void)
{
	no_scan = threads_at_fork > 1;
}

__attribute__((constructor)) static void leak_check_init(void)
{
	pthread_atfork(before_fork, NULL, in_child);
}

void __wrap__exit(int status)
{
	if (!no_scan && __lsan_do_recoverable_leak_check() && status == 0)
		status = 23;
	__real__exit(status);
}
