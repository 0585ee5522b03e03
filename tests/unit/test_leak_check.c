// SPDX-License-Identifier: MIT
/*
 * The unit tier's leak scan itself (leak_check.c): a test process's leak
 * must fail it (exit status 23), or every unit test could lose its scan
 * without a sound - say, if the harness's parent became multi-threaded.
 * A child forked from a multi-threaded process is not scanned (it could
 * hang on a sanitizer lock held at the fork), and says so by exiting 0;
 * a thread that has begun to exit does not count.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
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

/* Once this process's leader is a zombie, fork the leaking child and end
 * the process with its status (no scan here: the leader is gone). */
static void *fork_beside_a_zombie(void *arg)
{
	char path[64], buf[512], *p;
	int i, fd, st = 99;	/* 99: the leader never became a zombie */
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", getpid());
	for (i = 0; i < 10000; i++) {	/* 10 s */
		fd = open(path, O_RDONLY);
		n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		if (fd >= 0)
			close(fd);
		buf[n > 0 ? n : 0] = 0;
		p = strrchr(buf, ')');
		if (p && p[1] == ' ' && p[2] == 'Z') {
			st = leaking_child_status();
			break;
		}
		usleep(1000);
	}
	syscall(SYS_exit_group, st);
	return NULL;
}

/*
 * A thread that has begun to exit is not counted: one joined just before
 * a fork could still be in /proc/self/status's Threads:, and the child
 * went unscanned. Pinned with the thread that stays listed, exiting, for
 * as long as the test wants: a leader that exits before the process's
 * other thread (a zombie until that one ends; Threads: counts it).
 */
TEST(a_thread_that_has_exited_does_not_count)
{
	pthread_t th;
	int st = -1;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid) {
		if (pthread_create(&th, NULL, fork_beside_a_zombie, NULL))
			syscall(SYS_exit_group, 98);
		syscall(SYS_exit, 0);	/* this thread alone */
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st)) TH_LOG("status 0x%x", st);
	EXPECT_EQ(23, WEXITSTATUS(st));
}

TEST_HARNESS_MAIN
