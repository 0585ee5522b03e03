// SPDX-License-Identifier: MIT
/*
 * pto-bench's command line: -w takes 1 to 64 workers (its worker table's
 * size) and refuses anything else with exit 2 and one line naming the
 * value, before it runs anything. Runs the built tools/pto-bench.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "kselftest_harness.h"

/* tools/pto-bench from the tree's root (make's directory), or beside the
 * test's build directory. */
static const char *bench_path(void)
{
	static char path[PATH_MAX + 32];
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	if (!access("tools/pto-bench", X_OK))
		return "tools/pto-bench";
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return "tools/pto-bench";
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	snprintf(path, sizeof(path), "%s/../../tools/pto-bench", exe);
	return path;
}

/* Run pto-bench with @arg after -w; its exit status, its stderr in @err. */
static int bench_w(const char *arg, char *err, size_t len)
{
	int fd[2], status;
	ssize_t n, got = 0;
	pid_t pid;

	if (pipe(fd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		int null = open("/dev/null", O_WRONLY);

		dup2(fd[1], 2);
		dup2(null, 1);
		close(fd[0]);
		execl(bench_path(), "pto-bench", "-w", arg, "--no-peer",
		      "--shape", "chain", "-n", "10", "-m", "10", "--reps", "1",
		      (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	while (got < (ssize_t)len - 1 &&
	       (n = read(fd[0], err + got, len - 1 - (size_t)got)) > 0)
		got += n;
	err[got] = '\0';
	close(fd[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

TEST(w_above_the_table_is_refused)
{
	char err[512];

	ASSERT_EQ(0, access(bench_path(), X_OK)) {
		TH_LOG("%s not built (make tools)", bench_path());
	}
	EXPECT_EQ(2, bench_w("65", err, sizeof(err)));
	EXPECT_STREQ("pto-bench: bad -w '65' (1 to 64 workers)\n", err);
}

TEST(w_not_a_count_is_refused)
{
	static const char *const bad[] = { "0", "-1", "x", "2x", "", "4294967361" };
	char err[512], want[128];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(want, sizeof(want),
			 "pto-bench: bad -w '%s' (1 to 64 workers)\n", bad[i]);
		EXPECT_EQ(2, bench_w(bad[i], err, sizeof(err))) {
			TH_LOG("-w '%s'", bad[i]);
		}
		EXPECT_STREQ(want, err);
	}
}

/* The largest count the table holds runs: one chain of 2^10 tasks. */
TEST(w_64_runs)
{
	char err[512];

	EXPECT_EQ(0, bench_w("64", err, sizeof(err)));
	EXPECT_STREQ("", err);
}

TEST_HARNESS_MAIN
