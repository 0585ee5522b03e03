// SPDX-License-Identifier: MIT
/*
 * pto_orch_create_inproc() refuses a config it cannot run before it sets
 * anything up (pto/orch.h): a bad worker set. "Anything" is observable from the test:
 * the once-per-process fork hygiene sets OMP_NUM_THREADS (each test runs
 * in its own forked process, in which no orchestrator was created yet),
 * and the threaded backend registers the process for membarrier(2)
 * PRIVATE_EXPEDITED, which is -EPERM until it is registered.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/membarrier.h>
#include "kselftest_harness.h"
#include "orch_test.h"

static const char *const pool_vars[] = {
	"OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
	"BLIS_NUM_THREADS",
};

static void unset_pool_vars(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(pool_vars); i++)
		unsetenv(pool_vars[i]);
}

/* Has the hygiene run, or a backend registered for membarrier? */
static bool anything_set_up(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(pool_vars); i++)
		if (getenv(pool_vars[i]))
			return true;
	/* -EPERM until registered (when membarrier exists at all). */
	return syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
}

static bool membarrier_expedited(void)
{
	long q = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);

	return q > 0 && (q & MEMBARRIER_CMD_PRIVATE_EXPEDITED);
}

/*
 * Duplicate ids, a negative id, an unknown kind, nworkers without a
 * workers array: each is -EINVAL with *out NULL, and nothing was set up -
 * no pool variable set, no membarrier registration. The same set made
 * valid creates (and then both happened: the check sees them).
 */
TEST(bad_worker_sets_are_refused_before_anything)
{
	static const struct {
		struct pto_worker_desc w[3];
		uint32_t n;
		const char *what;
	} bad[] = {
		{ { OT_WORKER(0, PTO_WK_SUB), OT_WORKER(1, PTO_WK_SUB),
		    OT_WORKER(0, PTO_WK_AIV) }, 3, "duplicate id 0" },
		{ { OT_WORKER(4, PTO_WK_SUB), OT_WORKER(4, PTO_WK_SUB) }, 2,
		  "duplicate id 4, same kind" },
		{ { OT_WORKER(0, PTO_WK_SUB), OT_WORKER(-1, PTO_WK_SUB) }, 2,
		  "id -1" },
		{ { OT_WORKER(0, PTO_WK_SUB), OT_WORKER(1, PTO_WK_NR) }, 2,
		  "kind PTO_WK_NR" },
		{ { OT_WORKER(0, 0xffffffffu) }, 1, "kind 0xffffffff" },
	};
	struct pto_worker_desc ok[2] = {
		OT_WORKER(0, PTO_WK_SUB), OT_WORKER(7, PTO_WK_SUB),
	};
	struct pto_orch_config cfg = { .heap_ring_size = 1 << 20, .task_window = 64 };
	unsigned int i;
	pto_orch *o;

	unset_pool_vars();
	ASSERT_FALSE(anything_set_up());
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		cfg.workers = bad[i].w;
		cfg.nworkers = bad[i].n;
		o = (pto_orch *)&cfg;
		EXPECT_EQ(-EINVAL, pto_orch_create_inproc(&cfg, &o))
			TH_LOG("%s", bad[i].what);
		EXPECT_EQ(NULL, o) TH_LOG("%s", bad[i].what);
		EXPECT_FALSE(anything_set_up()) TH_LOG("%s", bad[i].what);
	}
	cfg.workers = NULL;
	cfg.nworkers = 2;
	o = (pto_orch *)&cfg;
	EXPECT_EQ(-EINVAL, pto_orch_create_inproc(&cfg, &o));
	EXPECT_EQ(NULL, o);
	EXPECT_EQ(NULL, getenv("OMP_NUM_THREADS"));
	EXPECT_FALSE(anything_set_up());
	/* The control: a valid set creates, and the hygiene shows. */
	cfg.workers = ok;
	ASSERT_EQ(0, pto_orch_create_inproc(&cfg, &o));
	EXPECT_STREQ("1", getenv("OMP_NUM_THREADS"));
	if (membarrier_expedited()) {
		EXPECT_EQ(0, syscall(__NR_membarrier,
				     MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0));
	}
	EXPECT_EQ(0, pto_orch_close(o, 2000));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

TEST_HARNESS_MAIN
