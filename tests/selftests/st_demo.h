/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The restore tests' demonstration runs (param_restore_test,
 * inject_restore_test): the program runs itself again with an environment
 * variable that makes its changing tests end by a failed ASSERT or a
 * SIGKILL, and checks from that run's TAP output that they failed and the
 * test after them still found pto as the program started. Include after
 * kselftest_harness.h.
 */
#ifndef PTO_ST_DEMO_H
#define PTO_ST_DEMO_H

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * How a test ends in the demonstration run (@env is "assert" or "kill");
 * nothing happens otherwise (unset, or another value such as "timeout",
 * which a test handles itself).
 */
static void st_demo_end(struct __test_metadata *_metadata, const char *env)
{
	const char *how = getenv(env);

	if (!how || (strcmp(how, "assert") && strcmp(how, "kill")))
		return;
	if (!strcmp(how, "kill"))
		kill(0, SIGKILL);
	ASSERT_EQ(0, 1) TH_LOG("deliberate failure (%s=%s)", env, how);
}

/* The TAP result of test @name in @out: 1 ok, 0 not ok, -1 missing. */
static int st_tap_result(const char *out, const char *name)
{
	const char *p;

	for (p = out; (p = strstr(p, name)); p++) {
		const char *b = p;
		size_t n = strlen(name);

		if (p[n] != '\n' || p == out || p[-1] != ' ')
			continue;
		while (b > out && b[-1] != '\n')
			b--;
		if (!strncmp(b, "ok ", 3))
			return 1;
		if (!strncmp(b, "not ok ", 7))
			return 0;
	}
	return -1;
}

/* Run this program with @env=@how; its output in @out. Exit status. */
static int st_run_demo(const char *env, const char *how, char *out,
		       size_t len)
{
	size_t off = 0;
	ssize_t n;
	int p[2], status;
	pid_t c;

	if (pipe(p))
		return -1;
	c = fork();
	if (c < 0)
		return -1;
	if (!c) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		close(p[0]);
		close(p[1]);
		setenv(env, how, 1);
		execl("/proc/self/exe", program_invocation_short_name,
		      (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	while (off < len - 1 && (n = read(p[0], out + off, len - 1 - off)) > 0)
		off += (size_t)n;
	out[off] = 0;
	close(p[0]);
	if (waitpid(c, &status, 0) != c)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* @text with every line a TAP comment: its own "ok" lines count nowhere. */
static void st_print_commented(const char *text)
{
	const char *nl;

	printf("# the demonstration run's output:\n");
	for (; *text; text = nl + 1) {
		nl = strchrnul(text, '\n');
		printf("# | %.*s\n", (int)(nl - text), text);
		if (!*nl)
			break;
	}
}

#endif
