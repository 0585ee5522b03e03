// SPDX-License-Identifier: MIT
/*
 * The unit tier's leak scan itself (leak_check.c): a test process's leak
 * must fail it (exit status 23), or every unit test could lose its scan
 * without a sound - say, if the harness's parent became multi-threaded.
 * A child forked from a multi-threaded process is not scanned (it could
 * hang on a sanitizer lock held at the fork), and says so by exiting 0.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "kselftest_harness.h"

/* Out of line: the pointer dies with the frame, below the stack's top. */
static __attribute__((noinline)) void leak(void)
{
	volatile char *p = malloc(64);

	p[0] = 1;
}

/* Fork a child that leaks 64 bytes and _exit(0)s; its exit status. */
static int leaking_child_status(void)
{
	int st = -1;
	pid_t pid = fork();

	if (!pid) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0)
			dup2(fd, 2);	/* LSan's report: not in the tier's log */
		leak();
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(a_leak_fails_the_process)
{
	EXPECT_EQ(23, leaking_child_status());
}

static void *wait_for_close(void *arg)
{
	char c;

	return (void *)(long)read(*(int *)arg, &c, 1);
}

TEST(a_child_of_a_threaded_process_is_not_scanned)
{
	int fds[2];
	pthread_t th;

	ASSERT_EQ(0, pipe(fds));
	ASSERT_EQ(0, pthread_create(&th, NULL, wait_for_close, &fds[0]));
	EXPECT_EQ(0, leaking_child_status());
	close(fds[1]);
	pthread_join(th, NULL);
	close(fds[0]);
}

TEST_HARNESS_MAIN
