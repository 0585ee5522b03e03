// SPDX-License-Identifier: GPL-2.0
/*
 * A process killed with SIGKILL in the middle of a device run leaves the
 * device usable: the kernel's release path stops the cores it had launched
 * and frees its clusters, and the next process's run succeeds at once on
 * the same cores.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <pto/orch.h>
#include <pto/pto.h>
#include <pto/sched.h>
#include "kselftest_harness.h"
#include "pto_selftest.h"

#define SPIN_TASKS 4000

static const struct pto_callable k_spin = { .kernel_id = PTO_FUNC_SPIN_NS };
static const struct pto_callable k_fill = { .kernel_id = PTO_FUNC_FILL };

static int spin_dag(pto_orch *o, void *arg)
{
	struct pto_task_args args;
	struct pto_task h;
	int i, ret = 0;

	pto_args_init(&args);
	for (i = 0; !ret && i < SPIN_TASKS; i++) {
		pto_args_reset(&args);
		pto_args_add_scalar(&args, 200000);	/* 200 us each */
		ret = pto_submit_next_level(o, &k_spin, &args, NULL,
					    pto_on_kind(i % 3 ? PTO_WORKER_AIV : PTO_WORKER_AIC),
					    &h);
	}
	pto_args_fini(&args);
	return ret;
}

struct fill_args {
	struct pto_bo *bo;
	void *map;
};

static int fill_dag(pto_orch *o, void *arg)
{
	struct fill_args *fa = arg;
	struct pto_tensor t = pto_tensor_gm(fa->bo, fa->map, 0, 4096,
					    PTO_DTYPE_I32);
	struct pto_task_args args;
	struct pto_task h;
	int ret;

	pto_args_init(&args);
	pto_args_add_scalar(&args, 7);
	pto_args_add_tensor(&args, &t, PTO_OUTPUT_EXISTING);
	ret = pto_submit_next_level(o, &k_fill, &args, NULL,
				    pto_on_kind(PTO_WORKER_AIV), &h);
	pto_args_fini(&args);
	return ret;
}

/*
 * The child: runs on every cluster until it is killed (one run of fixed
 * length could end before the kill on a machine with more CPUs).
 */
static void child_run(int ready_fd)
{
	struct pto_dev *dev;
	pto_orch *o;
	char c = 1;

	if (pto_dev_open(0, &dev) || pto_orch_create_device(dev, NULL, NULL, &o))
		_exit(2);
	if (write(ready_fd, &c, 1) != 1)
		_exit(3);
	while (!pto_orch_run(o, spin_dag, NULL))
		;
	_exit(4);	/* a run failed: the parent checks it was killed */
}

TEST(sigkill_mid_run_leaves_device_usable)
{
	struct pto_dev *dev;
	struct fill_args fa;
	pto_orch *o;
	int i, round;
	int32_t *v;

	for (round = 0; round < 3; round++) {
		/* 200 ms: the run is going when the signal comes. */
		ASSERT_EQ(0, st_kill_mid_run(child_run, 200000))
			TH_LOG("round %d: child not killed mid-run", round);

		/* At once: the same clusters, a run that checks its bytes. */
		ASSERT_EQ(0, pto_dev_open(0, &dev));
		ASSERT_EQ(0, pto_bo_alloc(dev, 4096, 0, &fa.bo));
		ASSERT_EQ(0, pto_bo_map(fa.bo, &fa.map));
		ASSERT_EQ(0, pto_orch_create_device(dev, NULL, NULL, &o));
		ASSERT_EQ(0, pto_orch_run(o, fill_dag, &fa));
		v = fa.map;
		for (i = 0; i < 1024; i++)
			ASSERT_EQ(7, v[i]);
		ASSERT_EQ(0, pto_orch_close(o, 10000));
		ASSERT_EQ(0, pto_orch_destroy(o));
		pto_bo_free(fa.bo);
		pto_dev_close(dev);
	}
}

TEST_HARNESS_MAIN
