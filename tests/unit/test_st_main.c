// SPDX-License-Identifier: GPL-2.0
/*
 * The selftests' main() (tests/selftests/st_main.h, through
 * pto_selftest.h) runs the tests its options select, on the host: the
 * tests of fixture "filter" run this program again with options and check
 * its TAP output (plan, names, order, exit status). The other tests are
 * what those runs select from: two plain TESTs, a fixture with two
 * variants and one without, a test name two fixtures share.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "kselftest_harness.h"
#include "../selftests/pto_selftest.h"

/*
 * Set in the runs a check starts: their "filter" tests pass at once (a
 * harness that ignored the options would otherwise start them again).
 */
#define CHILD "PTO_ST_MAIN_CHILD"
#define NOT_IN_CHILD() do { if (getenv(CHILD)) return; } while (0)

TEST(alpha)
{
	EXPECT_EQ(0, 0);
}

TEST(beta)
{
	EXPECT_EQ(0, 0);
}

FIXTURE(fx) {
	int set_up;
};

FIXTURE_VARIANT(fx) {
	int n;
};

FIXTURE_VARIANT_ADD(fx, one) {
	.n = 1,
};

FIXTURE_VARIANT_ADD(fx, two) {
	.n = 2,
};

FIXTURE_SETUP(fx)
{
	self->set_up = 1;
}

FIXTURE_TEARDOWN(fx)
{
}

/* A selected test still gets its fixture's setup and its variant. */
TEST_F(fx, gamma)
{
	EXPECT_EQ(1, self->set_up);
	EXPECT_TRUE(variant->n == 1 || variant->n == 2);
}

TEST_F(fx, delta)
{
	EXPECT_EQ(1, self->set_up);
	EXPECT_TRUE(variant->n == 1 || variant->n == 2);
}

FIXTURE(plain) {
	int set_up;
};

FIXTURE_SETUP(plain)
{
	self->set_up = 1;
}

FIXTURE_TEARDOWN(plain)
{
}

TEST_F(plain, alpha)
{
	EXPECT_EQ(1, self->set_up);
}

/* The checks: a run of this program with options, and its output. */

FIXTURE(filter) {
	char out[16384];
	int status;		/* exit status, -1 if it did not exit */
};

FIXTURE_SETUP(filter)
{
}

FIXTURE_TEARDOWN(filter)
{
}

/* Run this program with the NULL-terminated @args; stdout and stderr. */
static void run(FIXTURE_DATA(filter) *self, const char *const *args)
{
	const char *argv[16] = { "test_st_main" };
	size_t off = 0, i;
	ssize_t n;
	int p[2], st;
	pid_t c;

	for (i = 0; args[i] && i < 14; i++)
		argv[i + 1] = args[i];
	self->out[0] = 0;
	self->status = -1;
	if (pipe(p))
		return;
	fflush(NULL);
	c = fork();
	if (c < 0)
		return;
	if (!c) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		close(p[0]);
		close(p[1]);
		setenv(CHILD, "1", 1);
		execv("/proc/self/exe", (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	while (off < sizeof(self->out) - 1 &&
	       (n = read(p[0], self->out + off, sizeof(self->out) - 1 - off)) > 0)
		off += (size_t)n;
	self->out[off] = 0;
	close(p[0]);
	if (waitpid(c, &st, 0) == c && WIFEXITED(st))
		self->status = WEXITSTATUS(st);
}

/*
 * The TAP plan ("1..N" → N, -1 without one) and the names of the "ok"
 * results in order, space-separated, in @names; a "not ok" result is
 * added as "!name".
 */
static int tap(const char *out, char *names, size_t len)
{
	const char *l = out;
	int plan = -1;

	names[0] = 0;
	while (*l) {
		const char *e = strchrnul(l, '\n');
		const char *name = NULL;
		int neg = 0;

		if (!strncmp(l, "1..", 3))
			plan = atoi(l + 3);
		else if (!strncmp(l, "ok ", 3))
			name = l + 3;
		else if (!strncmp(l, "not ok ", 7))
			name = l + 7, neg = 1;
		if (name) {
			name = strchr(name, ' ');
			if (name && name < e)
				snprintf(names + strlen(names), len - strlen(names),
					 "%s%s%.*s", names[0] ? " " : "",
					 neg ? "!" : "", (int)(e - name - 1),
					 name + 1);
		}
		l = *e ? e + 1 : e;
	}
	return plan;
}

/* Run with @args; the run exits 0 with plan @n and results @names. */
#define EXPECT_RUN(n, names, ...) do { \
	static const char *const args_[] = { __VA_ARGS__, NULL }; \
	char got_[1024]; \
	run(self, args_); \
	EXPECT_EQ(n, tap(self->out, got_, sizeof(got_))) \
		TH_LOG("output:\n%s", self->out); \
	EXPECT_STREQ(names, got_) TH_LOG("output:\n%s", self->out); \
	EXPECT_EQ(0, self->status) TH_LOG("output:\n%s", self->out); \
} while (0)

/* What developers run: one test by its name. */
TEST_F(filter, one_test)
{
	NOT_IN_CHILD();
	EXPECT_RUN(1, "global.beta", "-t", "beta");
	EXPECT_NE(NULL, strstr(self->out, "Starting 1 tests from 1 test cases."));
	/* A name two fixtures have: both, in the program's order. */
	EXPECT_RUN(2, "global.alpha plain.alpha", "-t", "alpha");
	EXPECT_RUN(2, "fx.one.delta fx.two.delta", "-t", "delta");
}

TEST_F(filter, full_name)
{
	NOT_IN_CHILD();
	EXPECT_RUN(1, "fx.two.delta", "-r", "fx.two.delta");
	EXPECT_RUN(1, "plain.alpha", "-r", "plain.alpha");
	/* Not a product of variants and tests: each pair as named. */
	EXPECT_RUN(2, "fx.one.gamma fx.two.delta",
		   "-r", "fx.two.delta", "-r", "fx.one.gamma");
	EXPECT_NE(NULL, strstr(self->out, "Starting 2 tests from 2 test cases."));
}

TEST_F(filter, fixture_and_variant)
{
	NOT_IN_CHILD();
	EXPECT_RUN(4, "fx.one.gamma fx.one.delta fx.two.gamma fx.two.delta",
		   "-f", "fx");
	EXPECT_RUN(2, "fx.two.gamma fx.two.delta", "-v", "two");
	EXPECT_RUN(3, "global.alpha global.beta plain.alpha",
		   "-f", "global", "-f", "plain");
}

/* The first option that names a test decides. */
TEST_F(filter, first_match)
{
	NOT_IN_CHILD();
	EXPECT_RUN(2, "fx.one.gamma fx.two.gamma", "-T", "delta", "-f", "fx");
	EXPECT_RUN(4, "fx.one.gamma fx.one.delta fx.two.gamma fx.two.delta",
		   "-f", "fx", "-T", "delta");
	EXPECT_RUN(3, "fx.one.delta fx.two.gamma fx.two.delta",
		   "-r", "fx.one.delta", "-V", "one", "-f", "fx",
		   "-v", "one");
	EXPECT_RUN(2, "fx.one.delta fx.two.delta",
		   "-r", "fx.one.delta", "-V", "one", "-t", "delta");
}

/* Only exclusions: everything else runs. */
TEST_F(filter, exclude)
{
	NOT_IN_CHILD();
	EXPECT_RUN(1, "global.beta", "-F", "filter", "-T", "alpha",
		   "-F", "fx");
	EXPECT_RUN(4, "global.alpha global.beta fx.one.gamma plain.alpha",
		   "-F", "filter", "-V", "two", "-T", "delta");
}

TEST_F(filter, list)
{
	static const char *const all[] = { "-l", NULL };
	static const char *const fx[] = { "-l", "-f", "fx", NULL };
	static const char first[] = "global.alpha\nglobal.beta\n"
		"fx.one.gamma\nfx.one.delta\nfx.two.gamma\nfx.two.delta\n"
		"plain.alpha\nfilter.one_test\n";
	char names[256];

	NOT_IN_CHILD();

	run(self, all);
	EXPECT_EQ(4, self->status);	/* KSFT_SKIP, as the upstream harness */
	EXPECT_EQ(-1, tap(self->out, names, sizeof(names)));
	EXPECT_EQ(0, strncmp(self->out, first, strlen(first)))
		TH_LOG("output:\n%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "\nfilter.list\n"));
	EXPECT_NE(NULL, strstr(self->out, "\nfilter.no_option\n"));
	run(self, fx);
	EXPECT_EQ(4, self->status);
	EXPECT_STREQ("fx.one.gamma\nfx.one.delta\nfx.two.gamma\nfx.two.delta\n",
		     self->out);
}

TEST_F(filter, bad_options)
{
	static const char *const unknown[] = { "-x", NULL };
	static const char *const no_arg[] = { "-t", NULL };
	static const char *const none[] = { "-t", "no_such_test", NULL };
	char names[256];

	NOT_IN_CHILD();

	run(self, unknown);
	EXPECT_EQ(1, self->status);	/* KSFT_FAIL, as the upstream harness */
	EXPECT_NE(NULL, strstr(self->out, "usage: test_st_main "))
		TH_LOG("output:\n%s", self->out);
	EXPECT_EQ(-1, tap(self->out, names, sizeof(names)));
	run(self, no_arg);
	EXPECT_EQ(1, self->status);
	EXPECT_NE(NULL, strstr(self->out, "usage: test_st_main "));
	EXPECT_EQ(-1, tap(self->out, names, sizeof(names)));
	/* A misspelt name runs nothing and says so, rather than passing. */
	run(self, none);
	EXPECT_EQ(1, self->status);
	EXPECT_NE(NULL, strstr(self->out, "no test matches"))
		TH_LOG("output:\n%s", self->out);
	EXPECT_EQ(-1, tap(self->out, names, sizeof(names)));
}

/* No option: the harness's own run of every test (the checks pass at once). */
TEST_F(filter, no_option)
{
	static const char *const noargs[] = { NULL };
	char names[1024];

	NOT_IN_CHILD();

	run(self, noargs);
	EXPECT_EQ(0, self->status);
	EXPECT_EQ(15, tap(self->out, names, sizeof(names)));
	EXPECT_NE(NULL, strstr(self->out, "Starting 15 tests from 5 test cases."));
	EXPECT_STREQ("global.alpha global.beta fx.one.gamma fx.one.delta "
		     "fx.two.gamma fx.two.delta plain.alpha "
		     "filter.one_test filter.full_name "
		     "filter.fixture_and_variant filter.first_match "
		     "filter.exclude filter.list filter.bad_options "
		     "filter.no_option", names);
}

TEST_HARNESS_MAIN
