// SPDX-License-Identifier: MIT
/*
 * pto_orch_create_inproc() refuses a config it cannot run before it sets
 * anything up (pto_orch_create_inproc(3)): a bad worker set, a task_window
 * whose slot indexes would wrap 32 bits. "Anything" is observable from the
 * test: the once-per-process fork hygiene sets OMP_NUM_THREADS (each test runs
 * in its own forked process, in which no orchestrator was created yet), and
 * the threaded backend registers the process for membarrier(2)
 * PRIVATE_EXPEDITED, which is -EPERM until it is registered.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/membarrier.h>
#include "kselftest_harness.h"
#include "orch_test.h"

/*
 * An allocation ASan cannot map returns NULL here (pto's -ENOMEM), as it
 * would from libc, instead of ending the program: the task_window test
 * below limits the data mappings.
 */
#ifdef __SANITIZE_ADDRESS__
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}
#endif

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
 * Duplicate ids, a negative id, an unknown kind or kind 0 (no kind),
 * nworkers without a workers array: each is -EINVAL with *out NULL, and
 * nothing was set up - no pool variable set, no membarrier registration.
 * The same set made valid creates (and then both happened: the check sees
 * them).
 */
TEST(bad_worker_sets_are_refused_before_anything)
{
	static const struct {
		struct pto_worker_desc w[3];
		uint32_t n;
		const char *what;
	} bad[] = {
		{ { OT_WORKER(0, PTO_WORKER_SUB), OT_WORKER(1, PTO_WORKER_SUB),
		    OT_WORKER(0, PTO_WORKER_AIV) }, 3, "duplicate id 0" },
		{ { OT_WORKER(4, PTO_WORKER_SUB), OT_WORKER(4, PTO_WORKER_SUB) }, 2,
		  "duplicate id 4, same kind" },
		{ { OT_WORKER(0, PTO_WORKER_SUB), OT_WORKER(-1, PTO_WORKER_SUB) }, 2,
		  "id -1" },
		{ { OT_WORKER(0, PTO_WORKER_SUB), OT_WORKER(1, PTO_WORKER_SUB + 1) },
		  2, "kind PTO_WORKER_SUB + 1" },
		{ { OT_WORKER(0, PTO_WORKER_SUB), OT_WORKER(1, 0) }, 2,
		  "kind 0 (names no kind)" },
		{ { OT_WORKER(0, 0xffffffffu) }, 1, "kind 0xffffffff" },
	};
	struct pto_worker_desc ok[2] = {
		OT_WORKER(0, PTO_WORKER_SUB), OT_WORKER(7, PTO_WORKER_SUB),
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

/*
 * A task placed on a kind: kind 0 (what pto_on_worker() leaves in the
 * target, naming no kind), a kind past PTO_WORKER_SUB, and a kind with no
 * worker are each -EINVAL with a message naming the kind, and nothing
 * runs.
 */
static atomic_int kind_ran;

static int k_ran(struct pto_task_ctx *c)
{
	(void)c;
	atomic_fetch_add(&kind_ran, 1);
	return 0;
}

static int submit_on_kind(pto_orch *o, void *arg)
{
	struct pto_callable c = { .fn = k_ran };
	struct pto_task_args a;
	int err;

	pto_args_init(&a);
	err = pto_submit_next_level(o, &c, &a, NULL,
				    pto_on_kind(*(enum pto_worker_kind *)arg),
				    NULL);
	pto_args_fini(&a);
	return err;
}

TEST(target_of_no_or_unknown_kind_is_refused)
{
	static const struct {
		enum pto_worker_kind kind;
		const char *msg;
	} bad[] = {
		{ (enum pto_worker_kind)0, "bad worker kind 0" },
		{ (enum pto_worker_kind)(PTO_WORKER_SUB + 1), "bad worker kind 5" },
		{ PTO_WORKER_AIV, "no worker of kind 2" },
	};
	struct pto_orch_config cfg = { .heap_ring_size = 1 << 20, .task_window = 64 };
	enum pto_worker_kind k;
	unsigned int i;
	pto_orch *o;
	pto_run *r;

	ASSERT_EQ(0, pto_orch_create_inproc(&cfg, &o));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		k = bad[i].kind;
		EXPECT_EQ(-EINVAL, pto_run_start(o, submit_on_kind, &k, &r))
			TH_LOG("kind %u", (unsigned int)k);
		EXPECT_NE(NULL, strstr(pto_orch_error(o), bad[i].msg))
			TH_LOG("kind %u: \"%s\"", (unsigned int)k,
			       pto_orch_error(o));
		EXPECT_EQ(-EINVAL, pto_run_wait(r, 2000));
		pto_run_release(r);
	}
	/* The control: the default workers' kind runs. */
	k = PTO_WORKER_SUB;
	EXPECT_EQ(0, pto_orch_run(o, submit_on_kind, &k));
	EXPECT_EQ(1, atomic_load(&kind_ran));
	EXPECT_EQ(0, pto_orch_close(o, 2000));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

/*
 * A slot's index is ring * window + position in 32 bits, over
 * PTO_MAX_RING_DEPTH rings: a task_window above PTO_MAX_TASK_WINDOW
 * (2^30 - 1) would wrap it (and submit's bound on handles, which is 0 at
 * 2^30). Such a window is -EINVAL before anything is set up. The largest
 * one passes that check and fails only where it allocates (-ENOMEM: data
 * mappings are limited to nothing while the test creates, so no window
 * takes memory, whether refused or not; ASan prints a warning for the
 * allocation it then refuses).
 */
TEST(task_window_that_would_wrap_is_refused)
{
	static const uint32_t bad[] = {
		PTO_MAX_TASK_WINDOW + 1u, 1u << 31, 0xffffffffu,
	};
	struct pto_orch_config cfg = { .heap_ring_size = 1 << 20 };
	struct rlimit old, none;
	unsigned int i;
	pto_orch *o;
	int ret;

	ASSERT_EQ(0x3fffffffu, PTO_MAX_TASK_WINDOW);
	unset_pool_vars();
	ASSERT_FALSE(anything_set_up());
	ASSERT_EQ(0, getrlimit(RLIMIT_DATA, &old));
	none = old;
	none.rlim_cur = 0;
	ASSERT_EQ(0, setrlimit(RLIMIT_DATA, &none));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		cfg.task_window = bad[i];
		o = (pto_orch *)&cfg;
		ret = pto_orch_create_inproc(&cfg, &o);
		EXPECT_EQ(-EINVAL, ret) TH_LOG("task_window %u", bad[i]);
		EXPECT_EQ(NULL, o);
		EXPECT_FALSE(anything_set_up()) TH_LOG("task_window %u", bad[i]);
	}
	cfg.task_window = PTO_MAX_TASK_WINDOW;
	o = (pto_orch *)&cfg;
	ret = pto_orch_create_inproc(&cfg, &o);
	setrlimit(RLIMIT_DATA, &old);
	EXPECT_EQ(-ENOMEM, ret);
	EXPECT_EQ(NULL, o);
}

/* The calls that free an object accept NULL, as free() does (pto_orch_destroy(3),
 * pto_run_release(3); pto_dev_close and pto_bo_free: test_device.c). */
TEST(destroy_and_release_accept_null)
{
	EXPECT_EQ(0, pto_orch_destroy(NULL));
	pto_run_release(NULL);
}

TEST_HARNESS_MAIN
