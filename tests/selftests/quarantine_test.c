// SPDX-License-Identifier: GPL-2.0
/*
 * Retirement's deadline and quarantine, with the mock's fault injection
 * (debugfs inject_stall): a core that never answers EXIT is left unclosed
 * and unreleased, named in the kernel log, refused for launch and mmap,
 * while its peers retire within the deadline and stay usable; the debugfs
 * reset recovers it. Needs root (debugfs, module parameters).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include "kselftest_harness.h"
#include "pto_selftest.h"
#include "pto_core_util.h"

#define DBG PTO_DBG0
#define PARAM "/sys/module/pto/parameters/retire_timeout_ms"

static int core_state(struct pto_dev *d, unsigned int core)
{
	struct pto_core_stats st;

	return pto_core_stats(d, core, &st) ? -1 : (int)st.state;
}

static int noop_all(struct pto_launch *l)
{
	struct pto_payload noop = { .func_id = PTO_FUNC_NOOP };
	unsigned int k;

	for (k = 0; k < l->ncores; k++)
		if (pto_run1(l, &l->core[k], &noop) != PTO_TASK_OK)
			return -1;
	return 0;
}

TEST(stalled_core_is_quarantined_and_reset)
{
	uint64_t cores[PTO_CORE_MASK_WORDS] = { 0 };
	uint64_t peers[PTO_CORE_MASK_WORDS] = { 0 };
	char old[32], num[16], *log;
	struct pto_dev_info info;
	struct pto_core_launch cl = { 0 };
	struct pto_launch *l;
	struct pto_bo *bo;
	struct pto_dev *d;
	unsigned int c, victim, i;
	uint64_t t0, ms;
	void *m;

	if (access(DBG "inject_stall", W_OK) || st_read_line(PARAM, old, sizeof(old)))
		SKIP(return, "needs root, debugfs and pto's parameters");
	ASSERT_EQ(0, pto_dev_open(0, &d));
	pto_dev_info(d, &info);
	c = info.clusters - 1;
	victim = 3 * c + 1;
	for (i = 3 * c; i < 3 * c + 3; i++) {
		cores[i / 64] |= 1ull << (i % 64);
		if (i != victim)
			peers[i / 64] |= 1ull << (i % 64);
	}
	ASSERT_EQ(0, st_write_file(PARAM, "300"));

	ASSERT_EQ(0, pto_cluster_acquire(d, 1ull << c));
	ASSERT_EQ(0, pto_launch_cores(d, cores, &l));
	ASSERT_EQ(0, noop_all(l));
	snprintf(num, sizeof(num), "%u", victim);
	ASSERT_EQ(0, st_write_file(DBG "inject_stall", num));
	t0 = pto_now_ns();
	ASSERT_EQ(0, pto_cluster_release(d, 1ull << c));
	ms = (pto_now_ns() - t0) / 1000000;
	printf("# release with one silent core took %llu ms (deadline 300)\n",
	       (unsigned long long)ms);
	fflush(stdout);
	EXPECT_LE(250, ms);
	EXPECT_GT(10000, ms);
	pto_launch_free(l);
	for (i = 3 * c; i < 3 * c + 3; i++) {
		EXPECT_EQ(i == victim ? PTO_CORE_QUARANTINED :
					PTO_CORE_UNLAUNCHED, core_state(d, i));
	}

	/* The kernel log names it. */
	log = calloc(1, 1 << 20);
	ASSERT_NE(NULL, log);
	ASSERT_LT(0, klogctl(3, log, (1 << 20) - 1));
	snprintf(num, sizeof(num), "core %u not", victim);
	EXPECT_NE(NULL, strstr(log, num));
	free(log);

	/* Refused for launch and mmap; its peers work. */
	ASSERT_EQ(0, pto_cluster_acquire(d, 1ull << c));
	ASSERT_EQ(0, pto_launch_cores(d, peers, &l));
	ASSERT_EQ(0, noop_all(l));
	ASSERT_EQ(0, pto_bo_alloc(d, 4096, 0, &bo));
	cl.payload_addr = pto_bo_dev_addr(bo);
	memset(cl.cores, 0, sizeof(cl.cores));
	cl.cores[victim / 64] = 1ull << (victim % 64);
	EXPECT_EQ(-EIO, pto_sioctl(pto_dev_fd(d), PTO_IOCTL_CORE_LAUNCH, &cl));
	pto_bo_free(bo);
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, pto_dev_fd(d),
		 PTO_WINDOW_MMAP_OFFSET(victim));
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EIO, errno);
	ASSERT_EQ(0, pto_cluster_release(d, 1ull << c));
	pto_launch_free(l);

	/* The reset recovers it: the whole cluster launches and runs. */
	ASSERT_EQ(0, st_write_file(DBG "reset", "1"));
	EXPECT_EQ(PTO_CORE_UNLAUNCHED, core_state(d, victim));
	ASSERT_EQ(0, pto_cluster_acquire(d, 1ull << c));
	ASSERT_EQ(0, pto_launch_cores(d, cores, &l));
	EXPECT_EQ(0, noop_all(l));
	ASSERT_EQ(0, pto_cluster_release(d, 1ull << c));
	pto_launch_free(l);
	st_write_file(PARAM, old);
	pto_dev_close(d);
}

TEST_HARNESS_MAIN
