// SPDX-License-Identifier: GPL-2.0
/*
 * A test's changes to pto.ko's parameters are undone however the test ends
 * (st_param_set(), st_module_unload()): two tests change parameters and reload
 * pto.ko, the third finds every parameter as it was; the fourth reruns them
 * ending by ASSERT, SIGKILL or timeout (PTO_PARAM_RESTORE_DEMO) and
 * everything_is_back must still pass. Needs root, /lib/modules/pto.ko and no
 * other open file of pto.
 */
#include <stdbool.h>
#include "kselftest_harness.h"
#include "pto_selftest.h"
#include "st_demo.h"

#define DEMO "PTO_PARAM_RESTORE_DEMO"

/* Every parameter as this program found it ("k=v k=v"). */
static char orig[1024];

static void __attribute__((constructor)) snapshot(void)
{
	if (st_module_params(orig, sizeof(orig)))
		orig[0] = 0;
}

TEST(params_changed)
{
	char buf[64];

	if (!orig[0] || access(PTO_PARAMS "retire_timeout_ms", W_OK))
		SKIP(return, "needs root and pto's parameters");
	ASSERT_EQ(0, st_param_set("retire_timeout_ms", "1234"));
	ASSERT_EQ(0, st_param_set("mock_old_protocol", "Y"));
	/* A second change keeps the first old value. */
	ASSERT_EQ(0, st_param_set("retire_timeout_ms", "4321"));
	ASSERT_EQ(0, st_read_line(PTO_PARAMS "retire_timeout_ms", buf,
				  sizeof(buf)));
	EXPECT_STREQ("4321", buf);
	st_demo_end(_metadata, DEMO);
}

TEST(module_unloaded)
{
	if (!orig[0] || access(PTO_KO, R_OK))
		SKIP(return, "needs root and " PTO_KO);
	ASSERT_EQ(0, st_module_unload()) TH_LOG("pto busy: is a file open?");
	EXPECT_FALSE(st_module_loaded());
	/* Loaded with other parameters: the restore replaces it. */
	ASSERT_EQ(0, st_module_load("clusters=3 lanes=1"));
	st_demo_end(_metadata, DEMO);
}

/*
 * The harness's timeout itself: in the "timeout" demonstration the test
 * changes a parameter, reloads pto.ko with other ones, holds /dev/pto0
 * open and sleeps past its 2 s limit. The harness SIGKILLs it and, its
 * waitpid() interrupted by the alarm, never reaps it: the restore must
 * wait for the dying test before it can unload pto.ko (st_reap_test(),
 * st_module_unload_now()). A no-op otherwise.
 */
FIXTURE(slow) {};
FIXTURE_SETUP(slow) {}
FIXTURE_TEARDOWN(slow) {}

TEST_F_TIMEOUT(slow, times_out, 2)
{
	const char *how = getenv(DEMO);
	int fd;

	if (!how || strcmp(how, "timeout") || !orig[0])
		return;
	ASSERT_EQ(0, st_param_set("retire_timeout_ms", "2345"));
	/* Reloaded with other parameters, and held open while it dies:
	 * the parent's unload must wait for it. */
	ASSERT_EQ(0, st_module_unload());
	ASSERT_EQ(0, st_module_load("clusters=2 lanes=1"));
	fd = open(PTO_DEV0, O_RDWR);
	ASSERT_LE(0, fd);
	sleep(20);
	close(fd);
}

TEST(everything_is_back)
{
	char now[sizeof(orig)];

	if (!orig[0])
		SKIP(return, "needs pto.ko loaded");
	ASSERT_EQ(0, st_module_params(now, sizeof(now)));
	EXPECT_STREQ(orig, now);
	EXPECT_EQ(0, access(PTO_DEV0, F_OK));
}

TEST(failed_tests_restore_too)
{
	static const char *const hows[] = { "assert", "kill", "timeout" };
	static char out[1 << 16];
	char now[sizeof(orig)];
	unsigned int i;

	if (getenv(DEMO))
		return;		/* the demonstration run's own copy */
	if (!orig[0] || access(PTO_KO, R_OK))
		SKIP(return, "needs root, pto's parameters and " PTO_KO);
	for (i = 0; i < 3; i++) {
		bool to = !strcmp(hows[i], "timeout");
		int ret = st_run_demo(DEMO, hows[i], out, sizeof(out));

		printf("# " DEMO "=%s: exit status %d\n", hows[i], ret);
		fflush(stdout);
		/* 1 for the failures on purpose; a failed restore would
		 * exit 1 too, and says so on its own lines. */
		EXPECT_EQ(1, ret);
		EXPECT_EQ(NULL, strstr(out, "# pto_selftest: "));
		/* "timeout" ends only slow.times_out; the others pass. */
		EXPECT_EQ(to, st_tap_result(out, "global.params_changed"));
		EXPECT_EQ(to, st_tap_result(out, "global.module_unloaded"));
		EXPECT_EQ(!to, st_tap_result(out, "slow.times_out"));
		EXPECT_EQ(1, st_tap_result(out, "global.everything_is_back"));
		if (!_metadata->passed) {
			st_print_commented(out);
			fflush(stdout);
		}
		ASSERT_EQ(0, st_module_params(now, sizeof(now)));
		EXPECT_STREQ(orig, now);
	}
}

TEST_HARNESS_MAIN
