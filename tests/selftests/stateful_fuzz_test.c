// SPDX-License-Identifier: GPL-2.0
/*
 * The bounded slice of the stateful fuzzer that every VM tier runs:
 * pto-fuzz (tests/fuzz/) with a few thousand operations (a tenth on the
 * debug kernel, st_scaled()) and a time bound below the harness's
 * timeout. Its output is relayed as TAP comments; it must end "OK" having
 * launched cores, checked own tasks, had tasks outside the file refused,
 * bound lanes, collected captures, run own graphs and had bad ones
 * refused (a run that did none of it tested nothing). PTO_FUZZ_SEED
 * reproduces a run (the seed is printed).
 */
#include <stdio.h>
#include "kselftest_harness.h"
#include "pto_selftest.h"

#define SLICE_OPS 4000
#define SLICE_SECS "40"

FIXTURE(fuzz) {
	int unused;
};

FIXTURE_SETUP(fuzz)
{
}

FIXTURE_TEARDOWN(fuzz)
{
}

TEST_F_TIMEOUT(fuzz, bounded_slice, 90)
{
	unsigned long long launched = 0, tasks = 0, denied = 0;
	unsigned long long lanes = 0, captures = 0, capdenied = 0, graphs = 0,
			   grefused = 0;
	char ops[32], line[1024];
	int pipefd[2], status, ok = 0;
	FILE *out;
	pid_t pid;

	snprintf(ops, sizeof(ops), "%lu", st_scaled(SLICE_OPS));
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		dup2(pipefd[1], 1);
		dup2(pipefd[1], 2);
		close(pipefd[0]);
		execlp("pto-fuzz", "pto-fuzz", "--ops", ops, "--secs",
		       SLICE_SECS, (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	out = fdopen(pipefd[0], "r");
	ASSERT_NE(NULL, out);
	while (fgets(line, sizeof(line), out)) {
		ksft_print_msg("%s", line);
		if (!strcmp(line, "pto-fuzz: OK\n"))
			ok = 1;
		sscanf(line, "pto-fuzz: %llu cores launched, %llu own tasks checked, %llu tasks outside",
		       &launched, &tasks, &denied);
		sscanf(line, "pto-fuzz: %llu lanes bound, %llu captures, %llu captures outside the buffer refused, %llu graphs run, %llu graphs refused",
		       &lanes, &captures, &capdenied, &graphs, &grefused);
	}
	fclose(out);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(1, ok);
	EXPECT_LT(0, launched);
	EXPECT_LT(0, tasks);
	EXPECT_LT(0, denied);
	EXPECT_LT(0, lanes);
	EXPECT_LT(0, captures);
	EXPECT_LT(0, graphs);
	EXPECT_LT(0, grefused);
}

TEST_HARNESS_MAIN
