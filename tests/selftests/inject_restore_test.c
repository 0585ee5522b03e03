// SPDX-License-Identifier: GPL-2.0
/*
 * A test's mock fault injections are undone however the test ends
 * (st_inject_stall(), st_inject_badid()). The first four tests each leave an
 * armed or fired stall or bad id; device_is_clean then finds every core clean
 * and usable. failed_tests_restore_too reruns them ending by a failed ASSERT
 * or SIGKILL (PTO_INJECT_RESTORE_DEMO) and the check must still pass;
 * owned_cluster_fails_the_check: a fault in a cluster a file owns fails it.
 * Needs root, debugfs and no other open file of pto.
 */
#include "kselftest_harness.h"
#include "pto_selftest.h"
#include "pto_core_util.h"
#include "st_demo.h"

#define DEMO "PTO_INJECT_RESTORE_DEMO"

/*
 * Test @k's cluster of pto0 (one each while there are enough, so that
 * without the restore each leftover shows apart in device_is_clean) and
 * its three cores in @cores.
 */
static unsigned int victim_cluster(struct pto_dev *d, unsigned int k,
				   uint64_t *cores)
{
	struct pto_dev_info info;
	unsigned int c;

	pto_dev_info(d, &info);
	c = info.clusters - 1 - k % info.clusters;
	st_cluster_cores(c, cores);
	return c;
}

static int cannot_inject(void)
{
	return access(PTO_DBG0 "inject_stall", W_OK) ||
	       access(PTO_PARAMS "retire_timeout_ms", W_OK);
}

/* The faults set on core @core of pto0 (debugfs "cores": "-", "stall"...) */
static const char *injected(unsigned int core)
{
	static char inject[32];
	char state[32];

	if (st_core_row(0, core, state, sizeof(state), NULL, inject,
			sizeof(inject)))
		return "unknown";
	return inject;
}

/* The state of core @core of pto0 ("unlaunched", ...) */
static const char *state_of(unsigned int core)
{
	static char state[32];

	if (st_core_state(0, core, state, sizeof(state)))
		return "unknown";
	return state;
}

static int is_quarantined(unsigned int core)
{
	return !strcmp("quarantined", state_of(core));
}

/*
 * Fault @fault ("stall", "badid") armed on core @off of test @k's
 * cluster, which is idle: it never fires in this test.
 */
static void arm_idle(struct __test_metadata *_metadata, unsigned int k,
		     const char *fault, unsigned int off)
{
	uint64_t cores[PTO_CORE_MASK_WORDS];
	struct pto_dev *d;
	unsigned int c;

	ASSERT_EQ(0, pto_dev_open(0, &d));
	c = victim_cluster(d, k, cores);
	pto_dev_close(d);
	ASSERT_EQ(0, st_inject(0, fault, 3 * c + off));
	EXPECT_STREQ(fault, injected(3 * c + off));
	st_demo_end(_metadata, DEMO);
}

TEST(stall_armed)
{
	if (cannot_inject())
		SKIP(return, "needs root, debugfs and pto's parameters");
	arm_idle(_metadata, 0, "stall", 0);
}

/* A stall that fired: the release quarantines the core. */
TEST(stall_quarantined)
{
	uint64_t cores[PTO_CORE_MASK_WORDS];
	struct core_launch *l;
	struct pto_dev *d;
	unsigned int c;

	if (cannot_inject())
		SKIP(return, "needs root, debugfs and pto's parameters");
	ASSERT_EQ(0, st_param_set("retire_timeout_ms", "200"));
	ASSERT_EQ(0, pto_dev_open(0, &d));
	c = victim_cluster(d, 1, cores);
	ASSERT_EQ(0, core_cluster_acquire(d, 1ull << c));
	ASSERT_EQ(0, core_launch_cores(d, cores, &l));
	ASSERT_EQ(0, pto_noop_all(l));
	ASSERT_EQ(0, st_inject_stall(0, 3 * c + 1));
	EXPECT_STREQ("stall", injected(3 * c + 1));
	ASSERT_EQ(0, core_cluster_release(d, 1ull << c));
	core_launch_free(l);
	EXPECT_TRUE(is_quarantined(3 * c + 1));
	st_demo_end(_metadata, DEMO);
	pto_dev_close(d);
}

TEST(badid_armed)
{
	if (cannot_inject())
		SKIP(return, "needs root, debugfs and pto's parameters");
	arm_idle(_metadata, 2, "badid", 2);
}

/* A bad id that fired: the launch fails and quarantines the core. */
TEST(badid_quarantined)
{
	uint64_t cores[PTO_CORE_MASK_WORDS];
	struct core_launch *l = NULL;
	struct pto_dev *d;
	unsigned int c;

	if (cannot_inject())
		SKIP(return, "needs root, debugfs and pto's parameters");
	ASSERT_EQ(0, pto_dev_open(0, &d));
	c = victim_cluster(d, 3, cores);
	ASSERT_EQ(0, core_cluster_acquire(d, 1ull << c));
	ASSERT_EQ(0, st_inject_badid(0, 3 * c));
	EXPECT_STREQ("badid", injected(3 * c));
	EXPECT_EQ(-EIO, core_launch_cores(d, cores, &l));
	EXPECT_TRUE(is_quarantined(3 * c));
	EXPECT_STREQ("-", injected(3 * c));	/* fired: consumed */
	st_demo_end(_metadata, DEMO);
	if (l)
		core_launch_free(l);
	pto_dev_close(d);
}

/*
 * Each of @c's cores is unlaunched (not quarantined) with no fault set,
 * and no file owns @c.
 */
static void expect_unlaunched(struct __test_metadata *_metadata,
			      unsigned int c)
{
	char state[32], inject[32];
	unsigned int i;
	int owner;

	for (i = PTO_CORES_PER_CLUSTER * c;
	     i < PTO_CORES_PER_CLUSTER * (c + 1); i++) {
		ASSERT_EQ(0, st_core_row(0, i, state, sizeof(state), &owner,
					 inject, sizeof(inject)));
		EXPECT_STREQ("unlaunched", state) TH_LOG("core %u", i);
		EXPECT_STREQ("-", inject) TH_LOG("core %u", i);
		EXPECT_EQ(0, owner) TH_LOG("core %u", i);
	}
}

/*
 * Every core of pto0 is unlaunched and, cluster by cluster, launches, runs
 * a task and retires without a quarantine: no fault is left, fired or
 * armed. The deadline is 2 s, so a stall still armed fails the
 * retirement, not the harness's timeout.
 */
TEST(device_is_clean)
{
	uint64_t cores[PTO_CORE_MASK_WORDS];
	struct pto_core_retire r;
	struct pto_dev_info info;
	struct core_launch *l;
	struct pto_dev *d;
	unsigned int c, i;
	int ret;

	if (cannot_inject())
		SKIP(return, "needs root, debugfs and pto's parameters");
	ASSERT_EQ(0, st_param_set("retire_timeout_ms", "2000"));
	ASSERT_EQ(0, pto_dev_open(0, &d));
	pto_dev_info(d, &info);
	for (c = 0; c < info.clusters; c++) {
		expect_unlaunched(_metadata, c);
		st_cluster_cores(c, cores);
		ASSERT_EQ(0, core_cluster_acquire(d, 1ull << c));
		ret = core_launch_cores(d, cores, &l);
		EXPECT_EQ(0, ret) TH_LOG("cluster %u does not launch", c);
		if (!ret) {
			EXPECT_EQ(0, pto_noop_all(l));
			ASSERT_EQ(0, core_retire(d, cores, &r));
			EXPECT_EQ(3, r.retired) TH_LOG("cluster %u", c);
			for (i = 0; i < PTO_CORE_MASK_WORDS; i++) {
				EXPECT_EQ(0, r.quarantined[i])
					TH_LOG("cluster %u", c);
			}
			core_launch_free(l);
		}
		ASSERT_EQ(0, core_cluster_release(d, 1ull << c));
		expect_unlaunched(_metadata, c);
	}
	pto_dev_close(d);
}

/*
 * The parent's check (st_restore_injected) on a record of its own: a
 * fault armed on an idle core of a cluster this test owns survives the
 * reset and reads "unlaunched"; the check must fail on it, and pass on
 * the same cluster released. The program's own record has the cores too,
 * so the parent drops the faults after this test. Not in the
 * demonstration run, whose output must hold no failed restore.
 */
TEST(owned_cluster_fails_the_check)
{
	uint64_t cores[PTO_CORE_MASK_WORDS];
	struct st_restore own = { 0 };
	struct pto_dev *d;
	unsigned int c, i;

	if (getenv(DEMO))
		return;
	if (cannot_inject())
		SKIP(return, "needs root, debugfs and pto's parameters");
	ASSERT_EQ(0, pto_dev_open(0, &d));
	c = victim_cluster(d, 0, cores);
	ASSERT_EQ(0, core_cluster_acquire(d, 1ull << c));
	ASSERT_EQ(0, st_inject_stall(0, 3 * c));
	ASSERT_EQ(0, st_inject_badid(0, 3 * c + 1));
	own.ninject = 2;
	own.inject[0].core = 3 * c;
	own.inject[1].core = 3 * c + 1;
	printf("# the check's two failure lines below are expected:\n");
	fflush(stdout);
	st_restore_injected(&own);
	EXPECT_EQ(1, own.failed);
	/* What the check saw before it read the faults and the owner. */
	EXPECT_FALSE(strcmp("unlaunched", state_of(3 * c)) ||
		     strcmp("unlaunched", state_of(3 * c + 1)));
	/* Released, the reset drops both: the check passes. */
	ASSERT_EQ(0, core_cluster_release(d, 1ull << c));
	own = (struct st_restore){ .ninject = 3 };
	for (i = 0; i < 3; i++)
		own.inject[i].core = 3 * c + i;
	st_restore_injected(&own);
	EXPECT_EQ(0, own.failed);
	expect_unlaunched(_metadata, c);
	pto_dev_close(d);
}

TEST(failed_tests_restore_too)
{
	static const char *const hows[] = { "assert", "kill" };
	static const char *const injecting[] = {
		"global.stall_armed", "global.stall_quarantined",
		"global.badid_armed", "global.badid_quarantined",
	};
	static char out[1 << 16];
	char state[32], inject[32];
	unsigned int i, k;

	if (getenv(DEMO))
		return;		/* the demonstration run's own copy */
	if (cannot_inject())
		SKIP(return, "needs root, debugfs and pto's parameters");
	for (i = 0; i < 2; i++) {
		int ret = st_run_demo(DEMO, hows[i], out, sizeof(out));

		printf("# " DEMO "=%s: exit status %d\n", hows[i], ret);
		fflush(stdout);
		EXPECT_EQ(1, ret);
		for (k = 0; k < ARRAY_SIZE(injecting); k++) {
			const char *name = injecting[k];

			EXPECT_EQ(0, st_tap_result(out, name)) TH_LOG("%s", name);
		}
		EXPECT_EQ(1, st_tap_result(out, "global.device_is_clean"));
		/*
		 * Its exit status is 1 whether or not a restore failed (its
		 * tests fail on purpose): the parent's report of a failed
		 * restore (st_restore_all() in pto_selftest.h) tells.
		 */
		EXPECT_EQ(NULL, strstr(out, "# pto_selftest: "));
		if (!_metadata->passed) {
			st_print_commented(out);
			fflush(stdout);
		}
		/* And pto0 is clean after the demonstration run. */
		for (k = 0; !st_core_row(0, k, state, sizeof(state), NULL,
					 inject, sizeof(inject)); k++) {
			EXPECT_STREQ("unlaunched", state) TH_LOG("core %u", k);
			EXPECT_STREQ("-", inject) TH_LOG("core %u", k);
		}
		EXPECT_LT(0, k);
	}
}

TEST_HARNESS_MAIN
