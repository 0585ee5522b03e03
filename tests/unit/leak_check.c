// SPDX-License-Identifier: MIT
/*
 * LeakSanitizer for the unit tests. The kselftest harness ends each
 * test's child process with _exit(), which skips the leak scan ASan runs
 * at exit: a leak in a test went unreported. The test programs built
 * under ASan are linked with -Wl,--wrap=_exit, so every _exit() in them
 * (the harness's included) runs the scan first; a leak makes a
 * successful exit status 23, which the harness reports as a failed test,
 * with LSan's report above it.
 *
 * Except in a child forked from a process with more than one thread (a
 * test's own fork while its orchestrator's threads live): the scan takes
 * the sanitizer allocator's locks, and one may have been held by another
 * thread at the fork, forever in the child (seen: 11 of 25 runs of a test
 * hung there). Such a child's heap is a copy of its parent's, whose own
 * exit is scanned. The harness forks each test from a single thread, so
 * every test process is still scanned.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sanitizer/lsan_interface.h>

void __real__exit(int status) __attribute__((noreturn));
void __wrap__exit(int status) __attribute__((noreturn));

static int threads_at_fork;	/* set in the parent before each fork */
static int no_scan;		/* in a child forked from several threads */

/* Threads of this process, from /proc/self/status; 0 if unknown (then
 * scanned, as before). No allocation: it runs at every fork. */
static int count_threads(void)
{
	static char buf[4096];
	const char *p;
	ssize_t n;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strstr(buf, "\nThreads:");
	return p ? atoi(p + 9) : 0;
}

static void before_fork(void)
{
	threads_at_fork = count_threads();
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
