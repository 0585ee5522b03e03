// SPDX-License-Identifier: GPL-2.0
/*
 * The device scheduler (pto/sched.h) against the mock device: device
 * errors, group placement rules, statistics. The examples cover the DAG
 * shapes; these cover the rules.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include <pto/orch.h>
#include <pto/pto.h>
#include <pto/sched.h>
#include "core.h"
#include "orch/orch_internal.h"
#include "kselftest_harness.h"
#include "pto_selftest.h"
#include "pto_core_util.h"
#include "../unit/fake_ioctl.h"

/* CORE_RETIRE fails with ENOMEM until this time (pto_now_ns(); 0: never),
 * counted in retire_enomem (abort_retries_a_failed_retirement). */
static _Atomic uint64_t retire_fail_until;
static _Atomic int retire_enomem;

static int fail_retire_ioctl(int fd, unsigned long req, void *arg)
{
	if (req == PTO_IOCTL_CORE_RETIRE &&
	    pto_now_ns() < atomic_load(&retire_fail_until)) {
		atomic_fetch_add(&retire_enomem, 1);
		errno = ENOMEM;
		return -1;
	}
	return fake_ioctl_real(fd, req, arg);
}

FAKE_IOCTL(fail_retire_ioctl)

static const struct pto_callable k_fill = { .kernel_id = PTO_FUNC_FILL };
static const struct pto_callable k_fault = { .kernel_id = PTO_FUNC_FAULT };
static const struct pto_callable k_copy = { .kernel_id = PTO_FUNC_COPY };
static const struct pto_callable k_add = { .kernel_id = PTO_FUNC_ADD };
static const struct pto_callable k_noop = { .kernel_id = PTO_FUNC_NOOP };
static const struct pto_callable k_spin = { .kernel_id = PTO_FUNC_SPIN_NS };
static const struct pto_callable k_hang = { .kernel_id = PTO_FUNC_HANG };

/* A fill of @t with @v at @at, after @dep if any; its handle in @out. */
static int submit_fill(pto_orch *o, const struct pto_tensor *t, uint64_t v,
		       struct pto_target at, const struct pto_task *dep,
		       struct pto_task *out)
{
	struct pto_task_args a;
	int ret;

	pto_args_init(&a);
	pto_args_add_scalar(&a, v);
	pto_args_add_tensor(&a, t, PTO_OUTPUT_EXISTING);
	if (dep)
		pto_args_add_dep(&a, *dep);
	ret = pto_submit_next_level(o, &k_fill, &a, NULL, at, out);
	pto_args_fini(&a);
	return ret;
}

FIXTURE(sched) {
	struct pto_dev *dev;
	struct pto_dev_info info;
	pto_orch *o;
	struct pto_bo *bo;
	int32_t *map;
};

FIXTURE_SETUP(sched)
{
	struct pto_sched_config sc = { 0 };

	ASSERT_EQ(0, pto_dev_open(0, &self->dev));
	pto_dev_info(self->dev, &self->info);
	ASSERT_EQ(0, pto_bo_alloc(self->dev, 1 << 16, 0, &self->bo));
	ASSERT_EQ(0, pto_bo_map(self->bo, (void **)&self->map));
	/* One thread per lane (the default caps them at CPUs - 1): the
	 * partition tests need several. */
	sc.threads = self->info.lanes;
	ASSERT_EQ(0, pto_orch_create_device(self->dev, NULL, &sc, &self->o));
}

FIXTURE_TEARDOWN(sched)
{
	struct pto_sched_stats st;
	unsigned int c;

	EXPECT_EQ(0, pto_orch_close(self->o, 10000));
	/* Every scheduler thread retired its own cores as it left its loop. */
	ASSERT_EQ(0, pto_orch_sched_stats(self->o, &st));
	EXPECT_EQ(self->info.cores, st.retired);
	EXPECT_EQ(0, st.quarantined);
	EXPECT_LT(0, st.retire_ns);
	for (c = 0; c < self->info.cores; c++) {
		struct pto_retire_status rs;

		ASSERT_EQ(0, core_retire_status(self->dev, c, &rs));
		EXPECT_EQ(PTO_RETIRE_BY_IOCTL, rs.reason) TH_LOG("core %u", c);
		EXPECT_EQ(PTO_RETIRE_ACKED | PTO_RETIRE_CLOSED |
			  PTO_RETIRE_RELEASED, rs.result) TH_LOG("core %u", c);
	}
	EXPECT_EQ(0, pto_orch_destroy(self->o));
	pto_bo_free(self->bo);
	pto_dev_close(self->dev);
}

/* i32 tensor of @n elements at element offset @at of the fixture buffer. */
static struct pto_tensor ti(struct _test_data_sched *self, uint32_t at,
			    uint32_t n)
{
	return pto_tensor_gm(self->bo, self->map, at * 4ULL, n * 4ULL,
			     PTO_DTYPE_I32);
}

struct ctx {
	struct _test_data_sched *self;
	int kind;
	int32_t ids[3];
	uint32_t n;
	struct pto_task h;
};

/* fault -> copy (consumer) ; and an independent fill that must still run */
static int fault_dag(pto_orch *o, void *arg)
{
	struct ctx *c = arg;
	struct pto_tensor a = ti(c->self, 0, 16), b = ti(c->self, 64, 16);
	struct pto_tensor z = ti(c->self, 128, 16);
	struct pto_task_args args;
	struct pto_task h;
	int ret;

	pto_args_init(&args);
	pto_args_add_tensor(&args, &a, PTO_NO_DEP);
	ret = pto_submit_next_level(o, &k_fault, &args, NULL,
				    pto_on_kind(PTO_WORKER_AIV), &h);
	pto_args_reset(&args);
	pto_args_add_tensor(&args, &a, PTO_INPUT);
	pto_args_add_tensor(&args, &b, PTO_OUTPUT_EXISTING);
	pto_args_add_dep(&args, h);
	if (!ret)
		ret = pto_submit_next_level(o, &k_copy, &args, NULL,
					    pto_on_kind(PTO_WORKER_AIV), &h);
	pto_args_reset(&args);
	pto_args_add_scalar(&args, 5);
	pto_args_add_tensor(&args, &z, PTO_OUTPUT_EXISTING);
	if (!ret)
		ret = pto_submit_next_level(o, &k_fill, &args, NULL,
					    pto_on_kind(PTO_WORKER_AIV), &h);
	pto_args_fini(&args);
	return ret;
}

static int fill_dag(pto_orch *o, void *arg)
{
	struct ctx *c = arg;
	struct pto_tensor t = ti(c->self, 256, 16);

	return submit_fill(o, &t, 9, pto_on_kind(PTO_WORKER_AIC), NULL, &c->h);
}

TEST_F(sched, device_error_fails_task_and_poisons_consumer)
{
	struct ctx c = { .self = self };
	struct pto_sched_stats st;
	pto_run *r;
	int i;

	for (i = 0; i < 16; i++)
		self->map[64 + i] = -1;
	ASSERT_EQ(0, pto_run_start(self->o, fault_dag, &c, &r));
	EXPECT_EQ(-EIO, pto_run_wait(r, 20000));
	EXPECT_NE(NULL, strstr(pto_run_error(r), "device fault"))
		TH_LOG("%s", pto_run_error(r));
	EXPECT_NE(NULL, strstr(pto_run_error(r), "on core"));
	/* Repeated waits replay the same result. */
	EXPECT_EQ(-EIO, pto_run_wait(r, 0));
	pto_run_release(r);
	/* The consumer never ran; the independent task did. */
	for (i = 0; i < 16; i++) {
		EXPECT_EQ(-1, self->map[64 + i]);
		EXPECT_EQ(5, self->map[128 + i]);
	}
	ASSERT_EQ(0, pto_orch_sched_stats(self->o, &st));
	EXPECT_EQ(1, st.errors);
	EXPECT_EQ(2, st.tasks);		/* fault + fill reached a core */
	/* The device is fine for the next run. */
	EXPECT_EQ(0, pto_orch_run(self->o, fill_dag, &c));
	for (i = 0; i < 16; i++)
		EXPECT_EQ(9, self->map[256 + i]);
	ASSERT_EQ(0, pto_orch_sched_stats(self->o, &st));
	EXPECT_EQ(3, st.tasks);
}

#define HOST_KEY_SPIN_MS 300

/*
 * A host buffer's tensor h and the fixture's GM tensor t. c->kind 0: add
 * h + t into t (add addresses h). Otherwise h orders kernels that use no
 * tensor address: a spin_ns of HOST_KEY_SPIN_MS writes it, a noop reads
 * it, and a fill of t follows the noop (through t, only an ordering key
 * to noop too). So the fill's output can appear only once the spin is
 * over, if h orders the spin before the noop.
 */
static int host_tensor_dag(pto_orch *o, void *arg)
{
	static int32_t host[16];
	struct pto_tensor h = pto_tensor_host(host, sizeof(host));
	struct ctx *c = arg;
	struct pto_tensor t = ti(c->self, 0, 16);
	struct pto_task_args args;
	int ret;

	pto_args_init(&args);
	if (!c->kind) {
		pto_args_add_tensor(&args, &h, PTO_INPUT);
		pto_args_add_tensor(&args, &t, PTO_INPUT);
		pto_args_add_tensor(&args, &t, PTO_OUTPUT_EXISTING);
		ret = pto_submit_next_level(o, &k_add, &args, NULL,
					    pto_on_kind(PTO_WORKER_AIV), &c->h);
	} else {
		pto_args_add_scalar(&args, HOST_KEY_SPIN_MS * 1000000ull);
		pto_args_add_tensor(&args, &h, PTO_OUTPUT_EXISTING);
		ret = pto_submit_next_level(o, &k_spin, &args, NULL,
					    pto_on_kind(PTO_WORKER_AIC), NULL);
		pto_args_reset(&args);
		pto_args_add_tensor(&args, &h, PTO_INPUT);
		pto_args_add_tensor(&args, &t, PTO_OUTPUT_EXISTING);
		if (!ret)
			ret = pto_submit_next_level(o, &k_noop, &args, NULL,
						    pto_on_kind(PTO_WORKER_AIV), NULL);
		pto_args_reset(&args);
		pto_args_add_scalar(&args, 3);
		pto_args_add_tensor(&args, &t, PTO_INOUT);	/* after the noop */
		if (!ret)
			ret = pto_submit_next_level(o, &k_fill, &args, NULL,
						    pto_on_kind(PTO_WORKER_AIV), NULL);
	}
	pto_args_fini(&args);
	return ret;
}

/*
 * Host memory given to a kernel that addresses its tensors (add) is refused at
 * submit, with -EINVAL and a reason: nothing reaches a core and the GM
 * output keeps its contents.
 */
TEST_F(sched, host_memory_is_refused_at_submit)
{
	struct ctx c = { .self = self };
	struct pto_sched_stats st;
	pto_run *r;
	int i;

	for (i = 0; i < 16; i++)
		self->map[i] = -1;
	EXPECT_EQ(-EINVAL, pto_run_start(self->o, host_tensor_dag, &c, &r));
	EXPECT_STREQ("member 0 tensor 0 is a HOST tensor, and kernel 1 addresses its tensors in GM only (a kernel that uses no tensor address may take any tensor as an ordering key)",
		     pto_orch_error(self->o));
	EXPECT_EQ(-EINVAL, pto_run_wait(r, 20000));
	pto_run_release(r);
	ASSERT_EQ(0, pto_orch_sched_stats(self->o, &st));
	EXPECT_EQ(0, st.tasks);
	for (i = 0; i < 16; i++)
		EXPECT_EQ(-1, self->map[i]);
}

/*
 * ... and kernels that use no tensor address still take host tensors as
 * ordering keys, and run in their order: the fill's output appears no
 * sooner than the spin's time after the submit.
 */
TEST_F(sched, host_keys_of_tensorless_kernels_are_accepted)
{
	struct ctx c = { .self = self, .kind = 1 };
	struct pto_sched_stats st;
	struct timespec t0, t;
	long ms;
	pto_run *r;
	int i;

	for (i = 0; i < 16; i++)
		self->map[i] = -1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(0, pto_run_start(self->o, host_tensor_dag, &c, &r))
		TH_LOG("%s", pto_orch_error(self->o));
	do {
		clock_gettime(CLOCK_MONOTONIC, &t);
		ms = (t.tv_sec - t0.tv_sec) * 1000 +
		     (t.tv_nsec - t0.tv_nsec) / 1000000;
	} while (__atomic_load_n(&self->map[0], __ATOMIC_ACQUIRE) != 3 &&
		 ms < 10000);
	printf("# the fill's output appeared %ld ms after the submit (spin %d ms)\n",
	       ms, HOST_KEY_SPIN_MS);
	fflush(stdout);
	/*
	 * Unordered, the fill would appear within a few ms. The slack is
	 * for the guest's clocks: the core's ktime and this thread's
	 * CLOCK_MONOTONIC are read on different vCPUs.
	 */
	EXPECT_LE(HOST_KEY_SPIN_MS - (long)(ST_CLOCK_SLACK_NS / 1000000), ms);
	EXPECT_EQ(0, pto_run_wait(r, 20000)) TH_LOG("%s", pto_run_error(r));
	pto_run_release(r);
	ASSERT_EQ(0, pto_orch_sched_stats(self->o, &st));
	EXPECT_EQ(3, st.tasks);
	EXPECT_EQ(0, st.errors);
	for (i = 0; i < 16; i++)
		EXPECT_EQ(3, self->map[i]);
}

/* A group: member i fills 16 elements at 512 + 16 i with 100 + i. */
static int group_dag(pto_orch *o, void *arg)
{
	struct ctx *c = arg;
	struct pto_task_args a[3], *ap[3];
	struct pto_tensor t[3];
	uint32_t i;
	int ret;

	for (i = 0; i < c->n; i++) {
		t[i] = ti(c->self, 512 + 16 * i, 16);
		pto_args_init(&a[i]);
		pto_args_add_scalar(&a[i], 100 + i);
		pto_args_add_tensor(&a[i], &t[i], PTO_OUTPUT_EXISTING);
		ap[i] = &a[i];
	}
	ret = pto_submit_next_level_group(o, &k_fill, ap, c->n, NULL, c->ids,
					  &c->h);
	for (i = 0; i < c->n; i++)
		pto_args_fini(&a[i]);
	return ret;
}

TEST_F(sched, group_inside_one_partition_runs)
{
	struct ctx c = { .self = self, .ids = { 0, 1, 2 }, .n = 3 };
	uint32_t i, j;

	ASSERT_EQ(0, pto_orch_run(self->o, group_dag, &c));
	for (i = 0; i < 3; i++)
		for (j = 0; j < 16; j++)
			EXPECT_EQ(100 + (int)i, self->map[512 + 16 * i + j]);
}

TEST_F(sched, group_across_partitions_is_refused)
{
	struct ctx c = { .self = self, .n = 2 };
	pto_run *r = NULL;
	int ret;

	if (self->info.clusters < 2)
		SKIP(return, "one cluster: one scheduler thread");
	/* Cluster 0 and the last cluster belong to different threads. */
	c.ids[0] = 0;
	c.ids[1] = (int32_t)(self->info.clusters - 1) * 3;
	ret = pto_run_start(self->o, group_dag, &c, &r);
	EXPECT_EQ(-EINVAL, ret);
	EXPECT_NE(NULL, strstr(pto_orch_error(self->o), "one partition"))
		TH_LOG("%s", pto_orch_error(self->o));
	if (r) {
		EXPECT_EQ(-EINVAL, pto_run_wait(r, 20000));
		pto_run_release(r);
	}
	/* Nothing was written. */
	EXPECT_EQ(0, self->map[512]);
}

/*
 * A task only a parked core can take, arriving when nothing is in flight,
 * is dispatched, also after MIX tasks emptied the parked set (AIC here:
 * the AIV core that ran the first task stays awake): a step that skips
 * the parked pass must keep the loop stepping, or the thread sleeps with
 * the task READY.
 */

static int aiv_then_mix_dag(pto_orch *o, void *arg)
{
	uint32_t i, nclusters = *(uint32_t *)arg;
	struct pto_task_args a;
	struct pto_task h, m;
	int ret;

	pto_args_init(&a);
	ret = pto_submit_next_level(o, &k_noop, &a, NULL,
				    pto_on_kind(PTO_WORKER_AIV), &h);
	for (i = 0; i < nclusters && !ret; i++) {
		pto_args_reset(&a);
		pto_args_add_scalar(&a, 2000000);	/* 2 ms */
		pto_args_add_dep(&a, h);
		ret = pto_submit_next_level(o, &k_spin, &a, NULL,
					    pto_on_worker(PTO_SCHED_MIX_ID(i)),
					    &m);
	}
	pto_args_fini(&a);
	return ret;
}

static int aic_dag(pto_orch *o, void *arg)
{
	struct pto_task_args a;
	struct pto_task h;
	int ret;

	(void)arg;
	pto_args_init(&a);
	ret = pto_submit_next_level(o, &k_noop, &a, NULL,
				    pto_on_kind(PTO_WORKER_AIC), &h);
	pto_args_fini(&a);
	return ret;
}

TEST(parked_only_task_after_mix)
{
	/* A long wake delay keeps the parked pass put off for a while. */
	struct pto_sched_config sc = { .threads = 1, .wake_delay_us = 100000 };
	const struct timespec settle = { 0, 150 * 1000000L };
	struct pto_dev_info info;
	struct pto_dev *dev;
	pto_orch *o;
	int it;

	ASSERT_EQ(0, pto_dev_open(0, &dev));
	pto_dev_info(dev, &info);
	sc.clusters = info.clusters < 2 ? info.clusters : 2;
	ASSERT_EQ(0, pto_orch_create_device(dev, NULL, &sc, &o));
	nanosleep(&settle, NULL);	/* every core parks */
	for (it = 0; it < 4; it++) {
		pto_run *r;

		ASSERT_EQ(0, pto_run_start(o, aiv_then_mix_dag, &sc.clusters, &r));
		ASSERT_EQ(0, pto_run_wait(r, 20000));
		pto_run_release(r);
		nanosleep(&settle, NULL);
		ASSERT_EQ(0, pto_run_start(o, aic_dag, NULL, &r));
		EXPECT_EQ(0, pto_run_wait(r, 2000))
			TH_LOG("iteration %d: the AIC task was not dispatched", it);
		/* Unstick it for the teardown if it hung: a kick per submit. */
		for (int n = 0; n < 20 && pto_run_wait(r, 0) == -ETIMEDOUT; n++) {
			pto_run *k;

			ASSERT_EQ(0, pto_run_start(o, aic_dag, NULL, &k));
			pto_run_release(k);
			nanosleep(&settle, NULL);
		}
		pto_run_release(r);
		nanosleep(&settle, NULL);
	}
	EXPECT_EQ(0, pto_orch_close(o, 10000));
	EXPECT_EQ(0, pto_orch_destroy(o));
	pto_dev_close(dev);
}

/*
 * A MIX task whose payload cannot be built (three scalars: submit leaves
 * that to the payload) fails, and the
 * MIX tasks queued behind it on the cluster still run: the failure looks
 * for the next MIX task itself, since the orchestrator kicks when work is
 * routed, not when a worker comes free.
 */
static int bad_then_good_mix_dag(pto_orch *o, void *arg)
{
	struct pto_task_args a;
	int i, ret = 0;

	(void)arg;
	pto_args_init(&a);
	for (i = 0; i < 4 && !ret; i++) {
		const struct pto_callable *k = i < 2 ? &k_add : &k_noop;

		pto_args_reset(&a);
		if (k == &k_add) {
			pto_args_add_scalar(&a, 1);
			pto_args_add_scalar(&a, 2);
			pto_args_add_scalar(&a, 3);
		}
		ret = pto_submit_next_level(o, k, &a, NULL,
					    pto_on_worker(PTO_SCHED_MIX_ID(0)),
					    NULL);
	}
	pto_args_fini(&a);
	return ret;
}

TEST(failed_mix_payload_does_not_stall_the_cluster)
{
	struct pto_sched_config sc = { .threads = 1, .clusters = 1 };
	struct pto_sched_stats st0, st;
	struct pto_dev *dev;
	pto_orch *o;
	int it;

	ASSERT_EQ(0, pto_dev_open(0, &dev));
	ASSERT_EQ(0, pto_orch_create_device(dev, NULL, &sc, &o));
	for (it = 0; it < 3; it++) {
		pto_run *r;

		ASSERT_EQ(0, pto_orch_sched_stats(o, &st0));
		ASSERT_EQ(0, pto_run_start(o, bad_then_good_mix_dag, NULL, &r));
		EXPECT_EQ(-E2BIG, pto_run_wait(r, 10000))
			TH_LOG("iteration %d: the queued MIX tasks never ran", it);
		EXPECT_NE(NULL, strstr(pto_run_error(r), "at most 2"))
			TH_LOG("%s", pto_run_error(r));
		pto_run_release(r);
		/* The two good MIX tasks ran, each on the cluster's 3 cores. */
		ASSERT_EQ(0, pto_orch_sched_stats(o, &st));
		EXPECT_EQ(6, st.tasks - st0.tasks);
	}
	EXPECT_EQ(0, pto_orch_close(o, 10000));
	EXPECT_EQ(0, pto_orch_destroy(o));
	pto_dev_close(dev);
}

/*
 * Two orchestrators on one device handle: the second finds the clusters
 * taken (-EBUSY) and leaves the first's cores alone. The kernel's
 * ownership is per file, so the library itself must refuse the second;
 * its teardown would otherwise retire the first's cores under it.
 */
/* One noop task on kind *@arg (NULL: AIV). */
static int one_noop_dag(pto_orch *o, void *arg)
{
	struct pto_task_args a;
	int ret;

	pto_args_init(&a);
	ret = pto_submit_next_level(o, &k_noop, &a, NULL,
				    pto_on_kind(arg ? *(uint32_t *)arg :
						PTO_WORKER_AIV), NULL);
	pto_args_fini(&a);
	return ret;
}

/* One noop run on @o expecting @want, then close and destroy it. */
static void noop_run_then_destroy(struct __test_metadata *_metadata,
				  pto_orch *o, int want)
{
	EXPECT_EQ(want, pto_orch_run(o, one_noop_dag, NULL));
	EXPECT_EQ(0, pto_orch_close(o, 10000));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

TEST(second_orchestrator_on_a_shared_handle_is_refused)
{
	struct pto_sched_config sc = { .threads = 1, .clusters = 1 };
	struct pto_dev *dev;
	pto_orch *a, *b = NULL;

	ASSERT_EQ(0, pto_dev_open(0, &dev));
	ASSERT_EQ(0, pto_orch_create_device(dev, NULL, &sc, &a));
	EXPECT_EQ(-EBUSY, pto_orch_create_device(dev, NULL, &sc, &b));
	EXPECT_EQ(NULL, b);
	/* The first one's cores are still its own. */
	noop_run_then_destroy(_metadata, a, 0);
	/* Free again: the next one gets them. */
	ASSERT_EQ(0, pto_orch_create_device(dev, NULL, &sc, &b));
	noop_run_then_destroy(_metadata, b, 0);
	pto_dev_close(dev);
}

/*
 * The public structs' reserved words on a device (pto/pto.h, pto/orch.h,
 * pto/sched.h). A config with one set is -EINVAL and takes nothing: the
 * same handle then creates on every cluster, which a cluster left claimed
 * or acquired would refuse. A call config with one set is refused at
 * submit and no task runs. Info and stats come back whole over a struct
 * filled with garbage: reserved words zero.
 */
static int reserved_cfg_dag(pto_orch *o, void *arg)
{
	struct pto_call_config cfg = PTO_ZERO_INIT;
	struct pto_task_args a;
	char *msg = arg;
	int ret;

	cfg.reserved[2] = 1;
	pto_args_init(&a);
	ret = pto_submit_next_level(o, &k_noop, &a, &cfg,
				    pto_on_kind(PTO_WORKER_AIV), NULL);
	snprintf(msg, 128, "%s", pto_orch_error(o));
	pto_args_fini(&a);
	return ret;
}

TEST(reserved_words_on_a_device)
{
	struct pto_orch_config oc = { .task_window = 64 };
	struct pto_sched_config sc = { .threads = 1 };
	struct pto_sched_stats st;
	struct pto_dev_info info;
	struct pto_dev *dev;
	pto_orch *o = (pto_orch *)1;
	char msg[128] = "";
	unsigned int i;

	ASSERT_EQ(0, pto_dev_open(0, &dev));
	memset(&info, 0xa5, sizeof(info));
	ASSERT_EQ(0, pto_dev_info(dev, &info));
	ASSERT_LT(0, info.cores);
	EXPECT_EQ(PTO_ABI_MAJOR, info.abi_major);
	/* Braces: EXPECT_*() TH_LOG() is two statements. */
	for (i = info.cores; i < PTO_DEV_MAX_CORES; i++) {
		EXPECT_EQ(0, info.core_type[i]) TH_LOG("core_type[%u]", i);
	}
	EXPECT_EQ(0, info.reserved0);
	for (i = 0; i < ARRAY_SIZE(info.reserved); i++) {
		EXPECT_EQ(0, info.reserved[i]) TH_LOG("info.reserved[%u]", i);
	}

	sc.reserved[4] = 1;
	EXPECT_EQ(-EINVAL, pto_orch_create_device(dev, &oc, &sc, &o));
	EXPECT_EQ(NULL, o);
	sc.reserved[4] = 0;
	oc.reserved[10] = 1ULL << 63;
	EXPECT_EQ(-EINVAL, pto_orch_create_device(dev, &oc, &sc, &o));
	EXPECT_EQ(NULL, o);
	oc.reserved[10] = 0;
	/* Every cluster (sc.clusters 0): none was left taken. */
	ASSERT_EQ(0, pto_orch_create_device(dev, &oc, &sc, &o));

	EXPECT_EQ(-EINVAL, pto_orch_run(o, reserved_cfg_dag, msg));
	EXPECT_STREQ("call config: reserved[2] is not zero", msg);
	EXPECT_EQ(0, pto_orch_run(o, one_noop_dag, NULL));
	memset(&st, 0xa5, sizeof(st));
	ASSERT_EQ(0, pto_orch_sched_stats(o, &st));
	EXPECT_EQ(1, st.tasks);		/* the noop; the refused task never ran */
	EXPECT_EQ(0, st.errors);
	for (i = 0; i < ARRAY_SIZE(st.reserved); i++) {
		EXPECT_EQ(0, st.reserved[i]) TH_LOG("stats.reserved[%u]", i);
	}
	EXPECT_EQ(0, pto_orch_close(o, 10000));
	EXPECT_EQ(0, pto_orch_destroy(o));
	pto_dev_close(dev);
}

/*
 * Every device of the module (devices=N) runs its own DAG on its own
 * cores and GM, at the same time as the others, each writing only its
 * own buffer. (Device addresses repeat from one device to the next: a
 * tensor of one device's buffer submitted on another would name that
 * device's GM at the same address; its device tag has it refused, see
 * another_devices_buffer_is_refused_at_submit.)
 */
struct devrun {
	struct pto_dev *dev;
	struct pto_bo *bo;
	int32_t *map;
	pto_orch *o;
	struct pto_tensor t;	/* fill target */
	uint64_t v;
};

static int fill_one_dag(pto_orch *o, void *arg)
{
	struct devrun *d = arg;

	return submit_fill(o, &d->t, d->v, pto_on_kind(PTO_WORKER_AIV),
			   NULL, NULL);
}

/*
 * A forked child that cleans up its inherited orchestrator and device
 * (an atexit handler, a destructor) must leave the parent's alone: close
 * and destroy are -ECHILD there (a destroy through the shared file would
 * release the parent's clusters and free its heap and payload buffers).
 */
TEST(fork_child_cleanup_leaves_the_parents_orchestrator)
{
	struct pto_sched_config sc = { .clusters = 1 };
	struct devrun d = { .v = 7 };
	pid_t pid;
	int st;

	ASSERT_EQ(0, pto_dev_open(0, &d.dev));
	ASSERT_EQ(0, pto_bo_alloc(d.dev, 4096, 0, &d.bo));
	ASSERT_EQ(0, pto_bo_map(d.bo, (void **)&d.map));
	d.t = pto_tensor_gm(d.bo, d.map, 0, 64 * 4, PTO_DTYPE_I32);
	ASSERT_EQ(0, pto_orch_create_device(d.dev, NULL, &sc, &d.o));
	ASSERT_EQ(0, pto_orch_run(d.o, fill_one_dag, &d));
	EXPECT_EQ(7, d.map[63]);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int bad = 0;

		alarm(10);
		/* All of it, as a cleanup would; a bit per unexpected result. */
		bad |= (pto_orch_close(d.o, 200) != -ECHILD) << 0;
		bad |= (pto_orch_destroy(d.o) != -ECHILD) << 1;
		bad |= (pto_bo_free(d.bo) != 0) << 2;
		pto_dev_close(d.dev);
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st)) TH_LOG("child: signal %d",
					  WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	EXPECT_EQ(0, WEXITSTATUS(st));
	/* The parent's cores, heap and buffer are still its own. */
	d.v = 9;
	EXPECT_EQ(0, pto_orch_run(d.o, fill_one_dag, &d));
	EXPECT_EQ(9, d.map[0]);
	EXPECT_EQ(9, d.map[63]);
	EXPECT_EQ(0, pto_orch_close(d.o, 10000));
	EXPECT_EQ(0, pto_orch_destroy(d.o));
	EXPECT_EQ(0, pto_bo_free(d.bo));
	pto_dev_close(d.dev);
}

TEST(every_device_runs_its_own_dag)
{
	struct devrun d[8];
	pto_run *r[8];
	unsigned int n, k, i;

	for (n = 0; n < 8; n++) {
		if (pto_dev_open(n, &d[n].dev)) {
			ASSERT_LT(0, n);	/* device 0 exists */
			break;
		}
		ASSERT_EQ(0, pto_bo_alloc(d[n].dev, 4096, 0, &d[n].bo));
		ASSERT_EQ(0, pto_bo_map(d[n].bo, (void **)&d[n].map));
		memset(d[n].map, 0, 4096);
		ASSERT_EQ(0, pto_orch_create_device(d[n].dev, NULL, NULL, &d[n].o));
		d[n].t = pto_tensor_gm(d[n].bo, d[n].map, 0, 4096, PTO_DTYPE_I32);
		d[n].v = 100 + n;
	}
	/* All devices at once. */
	for (k = 0; k < n; k++)
		ASSERT_EQ(0, pto_run_start(d[k].o, fill_one_dag, &d[k], &r[k]));
	for (k = 0; k < n; k++) {
		EXPECT_EQ(0, pto_run_wait(r[k], 20000)) TH_LOG("device %u", k);
		pto_run_release(r[k]);
		for (i = 0; i < 1024; i++) {
			ASSERT_EQ((int32_t)(100 + k), d[k].map[i]) TH_LOG("device %u", k);
		}
	}
	for (k = 0; k < n; k++) {
		EXPECT_EQ(0, pto_orch_close(d[k].o, 10000));
		EXPECT_EQ(0, pto_orch_destroy(d[k].o));
		pto_bo_free(d[k].bo);
		pto_dev_close(d[k].dev);
	}
	printf("# %u device(s)\n", n);
}

/* Index of the first of @n bytes at @p that is not @v; @n if none. */
static size_t first_byte_not(const void *p, uint8_t v, size_t n)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n && b[i] == v; i++)
		;
	return i;
}

/*
 * Device 0's buffer submitted on device 1's orchestrator: both are the
 * first buffers of their devices, at the same device address, so the
 * tensor would name device 1's buffer (the kernel's per-file check passes:
 * it is the file's own). Its device tag has the submit refused, at once,
 * with -EXDEV and both devices named; nothing runs, neither buffer
 * changes. A buffer of device 1 then runs there as usual.
 */
TEST(another_devices_buffer_is_refused_at_submit)
{
	struct devrun d[2];
	pto_run *r;
	unsigned int k, i;

	ASSERT_EQ(0, pto_dev_open(0, &d[0].dev));
	if (pto_dev_open(1, &d[1].dev)) {
		pto_dev_close(d[0].dev);
		SKIP(return, "needs two devices (devices=2)");
	}
	for (k = 0; k < 2; k++) {
		ASSERT_EQ(0, pto_bo_alloc(d[k].dev, 4096, 0, &d[k].bo));
		ASSERT_EQ(0, pto_bo_map(d[k].bo, (void **)&d[k].map));
		memset(d[k].map, 0x5a + k, 4096);
		d[k].t = pto_tensor_gm(d[k].bo, d[k].map, 0, 4096, PTO_DTYPE_I32);
		EXPECT_EQ(k + 1, d[k].t.dev);	/* device index + 1 */
	}
	/* The trap: the same address on both devices. */
	ASSERT_EQ(pto_bo_dev_addr(d[0].bo), pto_bo_dev_addr(d[1].bo));
	ASSERT_EQ(0, pto_orch_create_device(d[1].dev, NULL, NULL, &d[1].o));

	d[0].v = 7;
	EXPECT_EQ(-EXDEV, pto_run_start(d[1].o, fill_one_dag, &d[0], &r));
	EXPECT_STREQ("member 0 tensor 0 is GM of device 0, this orchestrator runs on device 1",
		     pto_orch_error(d[1].o));
	EXPECT_EQ(-EXDEV, pto_run_wait(r, 20000));
	pto_run_release(r);
	for (k = 0; k < 2; k++) {
		EXPECT_EQ(4096, first_byte_not(d[k].map, 0x5a + k, 4096))
			TH_LOG("device %u's buffer was written", k);
	}

	/* Device 1's own buffer, same address, same orchestrator: runs. */
	d[1].v = 8;
	ASSERT_EQ(0, pto_orch_run(d[1].o, fill_one_dag, &d[1]));
	for (i = 0; i < 1024 && d[1].map[i] == 8; i++)
		;
	EXPECT_EQ(1024, i) TH_LOG("element %u of device 1's buffer", i);
	EXPECT_EQ(4096, first_byte_not(d[0].map, 0x5a, 4096));

	EXPECT_EQ(0, pto_orch_close(d[1].o, 10000));
	EXPECT_EQ(0, pto_orch_destroy(d[1].o));
	for (k = 0; k < 2; k++) {
		pto_bo_free(d[k].bo);
		pto_dev_close(d[k].dev);
	}
}

/*
 * A fatal device error (mock: debugfs "fatal") retires every core under
 * the orchestrator: the task running and the tasks queued fail with the
 * core's "core stopped" status instead of waiting forever, later runs
 * fail at once, and close and destroy work; a new orchestrator then runs.
 * The retirement's EXITED echo overwrites the last ACK or FIN, so the
 * scheduler must end the ids in flight on it (Documentation/scheduler.md).
 */
static int spin_and_queue_dag(pto_orch *o, void *arg)
{
	struct pto_task_args a;
	int i, ret;

	(void)arg;
	pto_args_init(&a);
	pto_args_add_scalar(&a, 2000000000);	/* 2 s */
	ret = pto_submit_next_level(o, &k_spin, &a, NULL,
				    pto_on_kind(PTO_WORKER_AIV), NULL);
	pto_args_reset(&a);
	for (i = 0; i < 20 && !ret; i++)
		ret = pto_submit_next_level(o, &k_noop, &a, NULL,
					    pto_on_kind(i % 3 ? PTO_WORKER_AIV :
							PTO_WORKER_AIC), NULL);
	pto_args_fini(&a);
	return ret;
}

TEST(fatal_device_error_fails_the_run)
{
	struct pto_sched_config sc = { .threads = 1, .clusters = 1 };
	struct pto_dev *dev;
	pto_orch *o;
	pto_run *r;
	int ret;

	if (access(PTO_DBG0 "fatal", W_OK))
		SKIP(return, "needs root and debugfs");
	ASSERT_EQ(0, pto_dev_open(0, &dev));
	ASSERT_EQ(0, pto_orch_create_device(dev, NULL, &sc, &o));
	ASSERT_EQ(0, pto_run_start(o, spin_and_queue_dag, NULL, &r));
	usleep(200000);		/* the spin runs, the rest is queued */
	ASSERT_EQ(0, st_write_file(PTO_DBG0 "fatal", "1"));
	ret = pto_run_wait(r, 10000);
	EXPECT_NE(-ETIMEDOUT, ret);
	EXPECT_EQ(-EIO, ret);
	EXPECT_NE(NULL, strstr(pto_run_error(r), "core stopped"))
		TH_LOG("%s", pto_run_error(r));
	pto_run_release(r);
	/* Nothing runs on stopped cores: a later run fails at once. */
	noop_run_then_destroy(_metadata, o, -EIO);
	pto_dev_close(dev);
	/* The device itself is usable again. */
	ASSERT_EQ(0, pto_dev_open(0, &dev));
	ASSERT_EQ(0, pto_orch_create_device(dev, NULL, &sc, &o));
	noop_run_then_destroy(_metadata, o, 0);
	pto_dev_close(dev);
}

/*
 * pto_orch_abort() of a run that cannot finish (a 120 s hang: close is
 * -ETIMEDOUT, destroy -EBUSY): the hung task stops, its consumer is poisoned,
 * the pending and queued tasks of both runs fail without running and both runs
 * end -ECANCELED with the abort's message. Close and destroy then succeed, one
 * retirement is counted, and the device runs new work.
 */
struct hang_ctx {
	struct pto_bo *bo;
	int32_t *map;
	int first;		/* run 1: the hang and its consumer */
};

/* i32 tensor of 16 elements at element @at of @c's buffer. */
static struct pto_tensor hang_t(struct hang_ctx *c, uint32_t at)
{
	return pto_tensor_gm(c->bo, c->map, at * 4ULL, 64, PTO_DTYPE_I32);
}

static int fill_on(pto_orch *o, struct hang_ctx *c, uint32_t at, int32_t v,
		   uint32_t kind, const struct pto_task *dep)
{
	struct pto_tensor t = hang_t(c, at);

	return submit_fill(o, &t, (uint64_t)v, pto_on_kind(kind), dep, NULL);
}

/*
 * The hang tests' start: a kernel runs up to 600 s (max_spin_ms; the
 * harness restores it), device 0 open as *@dev, @c's buffer mapped and
 * filled with 0x5a.
 */
static void hang_setup(struct __test_metadata *_metadata,
		       struct pto_dev **dev, struct hang_ctx *c,
		       struct pto_dev_info *info)
{
	ASSERT_EQ(0, st_param_set("max_spin_ms", "600000"));
	ASSERT_EQ(0, pto_dev_open(0, dev));
	if (info)	/* the topology, for tests that pick cores */
		pto_dev_info(*dev, info);
	ASSERT_EQ(0, pto_bo_alloc(*dev, 4096, 0, &c->bo));
	ASSERT_EQ(0, pto_bo_map(c->bo, (void **)&c->map));
	memset(c->map, 0x5a, 4096);
}

/* A task that hangs 120 s (past every budget here) on @kind, as @h. */
static int submit_hang(pto_orch *o, uint32_t kind, struct pto_task *h)
{
	struct pto_task_args a;
	int ret;

	pto_args_init(&a);
	pto_args_add_scalar(&a, 120000000000ULL);	/* 120 s */
	ret = pto_submit_next_level(o, &k_hang, &a, NULL, pto_on_kind(kind),
				    h);
	pto_args_fini(&a);
	return ret;
}

/*
 * Run 1: hang on the AIC core, a fill depending on it (element 0), an
 * independent AIV fill that runs (element 16), and AIC fills queued
 * behind the hang (elements 32, 48, ...). Run 2: more AIC fills.
 */
static int hang_dag(pto_orch *o, void *arg)
{
	struct hang_ctx *c = arg;
	struct pto_task_args a;
	struct pto_task h;
	int i, ret = 0;

	if (c->first) {
		ret = submit_hang(o, PTO_WORKER_AIC, &h);
		if (!ret)
			ret = fill_on(o, c, 0, 5, PTO_WORKER_AIV, &h);
		if (!ret)
			ret = fill_on(o, c, 16, 8, PTO_WORKER_AIV, NULL);
	}
	for (i = 0; i < 8 && !ret; i++)
		ret = fill_on(o, c, (c->first ? 32 : 256) + 16 * i, 6,
			      PTO_WORKER_AIC, NULL);
	if (!c->first && !ret) {
		pto_args_init(&a);
		ret = pto_submit_next_level(o, &k_noop, &a, NULL,
					    pto_on_kind(PTO_WORKER_MIX), NULL);
		pto_args_fini(&a);
	}
	return ret;
}

/* A MIX hang (all three cores of the cluster) and a consumer of it. */
static int mix_hang_dag(pto_orch *o, void *arg)
{
	struct hang_ctx *c = arg;
	struct pto_task h;
	int ret = submit_hang(o, PTO_WORKER_MIX, &h);

	return ret ? ret : fill_on(o, c, 0, 5, PTO_WORKER_AIV, &h);
}

/*
 * A device orchestrator on @dev (one thread, one cluster) running
 * mix_hang_dag(): the hang outlasts close's budget (-ETIMEDOUT).
 */
static void start_hung_mix(struct __test_metadata *_metadata,
			   struct pto_dev *dev, struct hang_ctx *c,
			   pto_orch **o, pto_run **r)
{
	struct pto_sched_config sc = { .threads = 1, .clusters = 1 };

	ASSERT_EQ(0, pto_orch_create_device(dev, NULL, &sc, o));
	ASSERT_EQ(0, pto_run_start(*o, mix_hang_dag, c, r));
	EXPECT_EQ(-ETIMEDOUT, pto_orch_close(*o, 300));
}

/*
 * A MIX task in flight at the abort: its three cores' ids all end, and
 * the task ends once (the cluster's count), failed; its consumer never
 * runs; the cluster then runs a MIX task of a new orchestrator.
 */
TEST(abort_ends_a_hung_mix_task_once)
{
	struct pto_sched_config sc = { .threads = 1, .clusters = 1 };
	uint32_t mix = PTO_WORKER_MIX;
	struct hang_ctx c = { 0 };
	struct pto_sched_stats st;
	struct pto_dev *dev;
	pto_orch *o;
	pto_run *r;

	if (access(PTO_PARAMS "max_spin_ms", W_OK))
		SKIP(return, "needs root and pto's parameters");
	hang_setup(_metadata, &dev, &c, NULL);
	start_hung_mix(_metadata, dev, &c, &o, &r);
	EXPECT_EQ(0, pto_orch_abort(o, 20000));
	EXPECT_EQ(-ECANCELED, pto_run_wait(r, 0));
	EXPECT_NE(NULL, strstr(pto_run_error(r),
			       "orchestrator aborted (pto_orch_abort)"))
		TH_LOG("%s", pto_run_error(r));
	pto_run_release(r);
	EXPECT_EQ(0x5a5a5a5a, c.map[0]);
	EXPECT_EQ(0, pto_orch_close(o, 10000));
	ASSERT_EQ(0, pto_orch_sched_stats(o, &st));
	EXPECT_EQ(3, st.retired);
	EXPECT_EQ(0, pto_orch_destroy(o));

	ASSERT_EQ(0, pto_orch_create_device(dev, NULL, &sc, &o));
	EXPECT_EQ(0, pto_orch_run(o, one_noop_dag, &mix));
	EXPECT_EQ(0, pto_orch_close(o, 10000));
	EXPECT_EQ(0, pto_orch_destroy(o));
	pto_bo_free(c.bo);
	pto_dev_close(dev);
}

/*
 * An abort whose retirements fail (-ENOMEM: the kernel claimed no core)
 * asks again until one succeeds, and one call ends the hung run: between
 * tries the thread must not arm a completion sleep on the hung core,
 * which nothing would end.
 */
TEST(abort_retries_a_failed_retirement)
{
	struct hang_ctx c = { 0 };
	struct pto_dev *dev;
	pto_orch *o;
	pto_run *r;

	if (access(PTO_PARAMS "max_spin_ms", W_OK))
		SKIP(return, "needs root and pto's parameters");
	hang_setup(_metadata, &dev, &c, NULL);
	start_hung_mix(_metadata, dev, &c, &o, &r);
	/* Failures for 300 ms, outlasting the thread's spin and its light
	 * sleep: an unbounded completion sleep would never end. */
	atomic_store(&retire_fail_until, pto_now_ns() + 300 * 1000000ULL);
	EXPECT_EQ(0, pto_orch_abort(o, 20000));	/* within the harness's 30 s */
	atomic_store(&retire_fail_until, 0);
	EXPECT_LT(1, atomic_load(&retire_enomem));	/* it did ask again */
	EXPECT_EQ(-ECANCELED, pto_run_wait(r, 0));
	pto_run_release(r);
	EXPECT_EQ(0x5a5a5a5a, c.map[0]);	/* the consumer never ran */
	EXPECT_EQ(0, pto_orch_close(o, 10000));
	EXPECT_EQ(0, pto_orch_destroy(o));
	pto_bo_free(c.bo);
	pto_dev_close(dev);
}

static int fill_one_aic_dag(pto_orch *o, void *arg)
{
	return fill_on(o, arg, 512, 9, PTO_WORKER_AIC, NULL);
}

/*
 * The end of an abort or hang test: the device works for the next
 * orchestrator at once (after an optional MIX noop run, @mix: an AIC fill
 * of 9 at element 512), then the test's orchestrator, buffer and device
 * go.
 */
static void next_orch_runs_then_end(struct __test_metadata *_metadata,
				    struct pto_dev *dev, struct hang_ctx *c,
				    const struct pto_orch_config *oc,
				    const struct pto_sched_config *sc,
				    uint32_t *mix)
{
	pto_orch *o;

	ASSERT_EQ(0, pto_orch_create_device(dev, oc, sc, &o));
	if (mix)
		EXPECT_EQ(0, pto_orch_run(o, one_noop_dag, mix));
	EXPECT_EQ(0, pto_orch_run(o, fill_one_aic_dag, c));
	EXPECT_EQ(9, c->map[512]);
	EXPECT_EQ(0, pto_orch_close(o, 10000));
	EXPECT_EQ(0, pto_orch_destroy(o));
	pto_bo_free(c->bo);
	pto_dev_close(dev);
}


TEST(abort_ends_a_hung_run)
{
	struct pto_sched_config sc = { .threads = 1, .clusters = 1 };
	struct hang_ctx c = { 0 };
	struct pto_sched_stats st;
	struct pto_dev *dev;
	pto_run *r1, *r2;
	pto_orch *o;
	unsigned int i;
	int ret;

	if (access(PTO_PARAMS "max_spin_ms", W_OK))
		SKIP(return, "needs root and pto's parameters");
	hang_setup(_metadata, &dev, &c, NULL);
	ASSERT_EQ(0, pto_orch_create_device(dev, NULL, &sc, &o));

	c.first = 1;
	ASSERT_EQ(0, pto_run_start(o, hang_dag, &c, &r1));
	/* The independent AIV fill ran: the cores work, the hang hangs. */
	for (i = 0; i < 2000 && __atomic_load_n(&c.map[16], __ATOMIC_ACQUIRE) != 8;
	     i++)
		usleep(10000);
	ASSERT_EQ(8, c.map[16]);
	/* After it: run 2's MIX task, wanted, keeps the AIV cores idle. */
	c.first = 0;
	ASSERT_EQ(0, pto_run_start(o, hang_dag, &c, &r2));
	EXPECT_EQ(-ETIMEDOUT, pto_orch_close(o, 300));
	EXPECT_EQ(-ETIMEDOUT, pto_orch_close(o, 300));
	EXPECT_EQ(0, pto_run_done(r1));
	EXPECT_EQ(0, pto_run_done(r2));
	EXPECT_EQ(-EBUSY, pto_orch_destroy(o));
	/* Closing already: nothing new is taken. */
	EXPECT_EQ(-ESHUTDOWN, pto_orch_run(o, fill_one_aic_dag, &c));

	EXPECT_EQ(0, pto_orch_abort(o, 20000));
	EXPECT_EQ(1, pto_run_done(r1));
	EXPECT_EQ(1, pto_run_done(r2));
	EXPECT_EQ(-ECANCELED, pto_run_wait(r1, 0));
	EXPECT_EQ(-ECANCELED, pto_run_wait(r2, 0));
	EXPECT_NE(NULL, strstr(pto_run_error(r1),
			       "orchestrator aborted (pto_orch_abort)"))
		TH_LOG("%s", pto_run_error(r1));
	EXPECT_NE(NULL, strstr(pto_run_error(r2),
			       "orchestrator aborted (pto_orch_abort)"))
		TH_LOG("%s", pto_run_error(r2));
	pto_run_release(r1);
	pto_run_release(r2);
	/* The consumer and the queued fills never ran; the AIV fill did. */
	EXPECT_EQ(0x5a5a5a5a, c.map[0]);
	EXPECT_EQ(8, c.map[16]);
	for (i = 0; i < 8; i++) {
		EXPECT_EQ(0x5a5a5a5a, c.map[32 + 16 * i]) TH_LOG("fill %u", i);
		EXPECT_EQ(0x5a5a5a5a, c.map[256 + 16 * i]) TH_LOG("fill %u", i);
	}
	/* Again: nothing left to end. */
	EXPECT_EQ(0, pto_orch_abort(o, 0));

	ret = pto_orch_close(o, 10000);
	EXPECT_EQ(0, ret);
	ASSERT_EQ(0, pto_orch_sched_stats(o, &st));
	EXPECT_EQ(3, st.retired);	/* once, by the abort */
	EXPECT_EQ(0, st.quarantined);
	for (i = 0; i < 3; i++) {
		struct pto_retire_status rs;

		ASSERT_EQ(0, core_retire_status(dev, i, &rs));
		EXPECT_EQ(PTO_RETIRE_BY_IOCTL, rs.reason) TH_LOG("core %u", i);
		EXPECT_EQ(PTO_RETIRE_ACKED | PTO_RETIRE_CLOSED |
			  PTO_RETIRE_RELEASED, rs.result) TH_LOG("core %u", i);
	}
	EXPECT_EQ(0, pto_orch_destroy(o));

	/* The device works for the next orchestrator at once. */
	next_orch_runs_then_end(_metadata, dev, &c, NULL, &sc, NULL);
}

/*
 * Abort beside other teardown calls, and beyond one thread and one core
 * per task. The helpers: the AIC core of cluster @cl (worker id = core
 * index on a device orchestrator), and whether core @core is running a
 * task (its COND shows ACK: a hang that took the core, not one queued).
 */
/* Clusters of /dev/pto0 (0 if it does not open): the tests that need
 * two skip on a clusters=1 boot, before hang_setup() changes anything. */
static uint32_t dev0_clusters(void)
{
	struct pto_dev_info info = { 0 };
	struct pto_dev *dev;

	if (pto_dev_open(0, &dev))
		return 0;
	pto_dev_info(dev, &info);
	pto_dev_close(dev);
	return info.clusters;
}

static int32_t aic_of(const struct pto_dev_info *info, unsigned int cl)
{
	unsigned int i;

	for (i = cl * 3; i < cl * 3 + 3; i++)
		if (info->core_type[i] == PTO_CORE_AIC)
			return (int32_t)i;
	return -1;
}

static bool core_running(struct pto_dev *dev, int32_t core)
{
	struct pto_core_stats cs;

	return !core_stats(dev, (unsigned int)core, &cs) &&
	       (cs.last_cond & PTO_COND_STATE_MASK) == PTO_COND_ACK;
}

/* The AIV cores of @info running a task. */
static unsigned int running_aiv(struct pto_dev *dev,
				const struct pto_dev_info *info)
{
	unsigned int i, n = 0;

	for (i = 0; i < info->cores; i++)
		n += info->core_type[i] == PTO_CORE_AIV &&
		     core_running(dev, (int32_t)i);
	return n;
}

/* The abort's message for a task stopped on @core, in @r's error. */
static bool stopped_on(pto_run *r, int32_t core)
{
	char want[96];

	snprintf(want, sizeof(want),
		 "orchestrator aborted (pto_orch_abort): task stopped on core %d",
		 core);
	return strstr(pto_run_error(r), want) != NULL;
}

/*
 * After an abort and a close: @cores retired once each, none
 * quarantined, @ok tasks ended well on a core, then destroy.
 */
static void aborted_closed(struct __test_metadata *_metadata, pto_orch *o,
			   struct pto_dev *dev, unsigned int cores,
			   uint64_t ok)
{
	struct pto_sched_stats st;
	unsigned int i;

	EXPECT_EQ(0, pto_orch_abort(o, 0));	/* closed: nothing to do */
	ASSERT_EQ(0, pto_orch_sched_stats(o, &st));
	/*
	 * Stored, not added, by each thread's one retirement: a second
	 * one would find the cores unlaunched and count none.
	 */
	EXPECT_EQ(cores, st.retired);
	EXPECT_EQ(0, st.quarantined);
	EXPECT_EQ(ok, st.tasks - st.errors);
	for (i = 0; i < cores; i++) {
		struct pto_retire_status rs;

		ASSERT_EQ(0, core_retire_status(dev, i, &rs));
		EXPECT_EQ(PTO_RETIRE_BY_IOCTL, rs.reason) TH_LOG("core %u", i);
		EXPECT_EQ(PTO_RETIRE_ACKED | PTO_RETIRE_CLOSED |
			  PTO_RETIRE_RELEASED, rs.result) TH_LOG("core %u", i);
	}
	EXPECT_EQ(0, pto_orch_destroy(o));
}

/*
 * A watchdog: one thread closes with a short budget, again and again
 * (-ETIMEDOUT: a task hangs), while another aborts. The abort ends the
 * run; the close then drains, stops and returns 0 on its own thread; the
 * retirement is the abort's, once (the races of two settles, two stops
 * and the started flag are unit tests).
 */
struct closer {
	pto_orch *o;
	atomic_int timeouts;
	int ret;
};

/* Close with 200 ms budgets until it ends otherwise than -ETIMEDOUT (at
 * most 200 times); counts the timeouts in @timeouts if given. */
static int close_retrying(pto_orch *o, atomic_int *timeouts)
{
	int i, ret = -ETIMEDOUT;

	for (i = 0; i < 200 && ret == -ETIMEDOUT; i++) {
		ret = pto_orch_close(o, 200);
		if (ret == -ETIMEDOUT && timeouts)
			atomic_fetch_add(timeouts, 1);
	}
	return ret;
}

static void *close_until_done(void *arg)
{
	struct closer *c = arg;

	c->ret = close_retrying(c->o, &c->timeouts);
	return NULL;
}

TEST(abort_beside_a_close_that_keeps_timing_out)
{
	struct pto_sched_config sc = { .threads = 1, .clusters = 1 };
	struct closer cl = { 0 };
	struct hang_ctx c = { 0 };
	struct pto_dev_info info;
	struct pto_dev *dev;
	pthread_t th;
	pto_orch *o;
	pto_run *r;
	int32_t aic;
	unsigned int i;

	if (access(PTO_PARAMS "max_spin_ms", W_OK))
		SKIP(return, "needs root and pto's parameters");
	hang_setup(_metadata, &dev, &c, &info);
	aic = aic_of(&info, 0);
	ASSERT_EQ(0, pto_orch_create_device(dev, NULL, &sc, &o));
	c.first = 1;
	ASSERT_EQ(0, pto_run_start(o, hang_dag, &c, &r));
	/* The independent AIV fill ran, the hang holds the AIC core. */
	EXPECT_TRUE(st_wait_until(__atomic_load_n(&c.map[16],
						  __ATOMIC_ACQUIRE) == 8 &&
				  core_running(dev, aic)));
	cl.o = o;
	ASSERT_EQ(0, pthread_create(&th, NULL, close_until_done, &cl));
	EXPECT_TRUE(st_wait_until(atomic_load(&cl.timeouts) >= 1));
	EXPECT_EQ(0, pto_orch_abort(o, 20000));
	pthread_join(th, NULL);
	EXPECT_EQ(0, cl.ret);	/* the close's own retry closed it */
	EXPECT_LE(1, atomic_load(&cl.timeouts));

	EXPECT_EQ(-ECANCELED, pto_run_wait(r, 0));
	EXPECT_TRUE(stopped_on(r, aic)) TH_LOG("%s", pto_run_error(r));
	pto_run_release(r);
	EXPECT_EQ(0x5a5a5a5a, c.map[0]);	/* the consumer never ran */
	EXPECT_EQ(8, c.map[16]);
	for (i = 0; i < 8; i++)
		EXPECT_EQ(0x5a5a5a5a, c.map[32 + 16 * i]) TH_LOG("fill %u", i);
	EXPECT_EQ(0, pto_orch_close(o, 0));	/* closed already */
	aborted_closed(_metadata, o, dev, 3, 1);	/* the AIV fill */

	next_orch_runs_then_end(_metadata, dev, &c, NULL, &sc, NULL);
}

/*
 * Two threads abort at once: both return 0, the hung MIX task ends once
 * (three stopped ids, one failure of the run, the consumer never runs),
 * the cores are retired once.
 */
struct aborter {
	pto_orch *o;
	atomic_int *go;
	int ret;
};

static void *abort_on_go(void *arg)
{
	struct aborter *a = arg;

	while (!atomic_load(a->go))
		;	/* both start together */
	a->ret = pto_orch_abort(a->o, 20000);
	return NULL;
}

TEST(two_concurrent_aborts_end_the_work_once)
{
	struct pto_sched_config sc = { .threads = 1, .clusters = 1 };
	struct aborter ab[2];
	struct hang_ctx c = { 0 };
	struct pto_sched_stats st;
	uint32_t mix = PTO_WORKER_MIX;
	atomic_int go = 0;
	struct pto_dev *dev;
	pthread_t th[2];
	pto_orch *o;
	pto_run *r;
	int i;

	if (access(PTO_PARAMS "max_spin_ms", W_OK))
		SKIP(return, "needs root and pto's parameters");
	hang_setup(_metadata, &dev, &c, NULL);
	start_hung_mix(_metadata, dev, &c, &o, &r);
	EXPECT_TRUE(st_wait_until(core_running(dev, 0) &&
				  core_running(dev, 1) &&
				  core_running(dev, 2)));
	for (i = 0; i < 2; i++) {
		ab[i] = (struct aborter){ .o = o, .go = &go };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, abort_on_go, &ab[i]));
	}
	atomic_store(&go, 1);
	for (i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		EXPECT_EQ(0, ab[i].ret) TH_LOG("abort %d", i);
	}
	EXPECT_EQ(-ECANCELED, pto_run_wait(r, 0));
	EXPECT_NE(NULL, strstr(pto_run_error(r),
			       "orchestrator aborted (pto_orch_abort): task stopped on core"))
		TH_LOG("%s", pto_run_error(r));
	pto_run_release(r);
	EXPECT_EQ(0x5a5a5a5a, c.map[0]);
	ASSERT_EQ(0, pto_orch_sched_stats(o, &st));
	EXPECT_EQ(3, st.tasks);		/* the MIX task's three ids */
	EXPECT_EQ(3, st.errors);
	EXPECT_EQ(0, pto_orch_close(o, 10000));
	aborted_closed(_metadata, o, dev, 3, 0);

	ASSERT_EQ(0, pto_orch_create_device(dev, NULL, &sc, &o));
	EXPECT_EQ(0, pto_orch_run(o, one_noop_dag, &mix));
	EXPECT_EQ(0, pto_orch_close(o, 10000));
	EXPECT_EQ(0, pto_orch_destroy(o));
	pto_bo_free(c.bo);
	pto_dev_close(dev);
}

/*
 * The watchdog again, the close and the abort started together, with a
 * second run whose construction failed and whose cancellation could not
 * be settled (its snapshot fails three times: the fail hook), so both
 * calls find it pending. The first to snapshot waits in the hook until
 * the other has moved past its own settle (closing is set) or has begun
 * a second cancellation of the run (the hook fails a second snapshot,
 * so one would be counted, not settled twice). One settles it, the hung
 * run is aborted, and the close succeeds.
 */
struct settle_race {
	pto_orch *o;
	atomic_int snapshots;
};

static int settle_race_hook(void *ctx, struct pto_orch *o, int fp,
			    struct orch_slot *s)
{
	struct settle_race *sr = ctx;
	struct timespec until;
	int n;

	(void)s;
	if (fp != ORCH_FP_CANCEL_SNAPSHOT)
		return 0;
	n = atomic_fetch_add(&sr->snapshots, 1) + 1;
	if (n <= 3)	/* the submitter's three tries: left pending */
		return 1;
	pthread_mutex_lock(&o->runs_mu);
	if (n > 4) {	/* a second settler: wake the first, fail */
		pthread_cond_broadcast(&o->runs_cv);
		pthread_mutex_unlock(&o->runs_mu);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += 10;
	while (!o->closing && atomic_load(&sr->snapshots) < 5)
		if (pthread_cond_timedwait(&o->runs_cv, &o->runs_mu, &until))
			break;
	pthread_mutex_unlock(&o->runs_mu);
	return 0;
}

/*
 * Run 2: a fill queued behind run 1's hang, a consumer of it, then the
 * function fails: its cancellation finds both unstarted.
 */
static int fills_then_fail_dag(pto_orch *o, void *arg)
{
	struct pto_task h;
	struct hang_ctx *c = arg;
	struct pto_tensor t = hang_t(c, 64);
	struct pto_task_args a;
	int ret;

	pto_args_init(&a);
	pto_args_add_scalar(&a, 3);
	pto_args_add_tensor(&a, &t, PTO_OUTPUT_EXISTING);
	ret = pto_submit_next_level(o, &k_fill, &a, NULL,
				    pto_on_kind(PTO_WORKER_AIC), &h);
	pto_args_fini(&a);
	if (!ret)
		ret = fill_on(o, c, 80, 4, PTO_WORKER_AIV, &h);
	return ret ? ret : -ENOTRECOVERABLE;
}

static void *close_on_go(void *arg)
{
	struct aborter *a = arg;

	while (!atomic_load(a->go))
		;	/* with the abort */
	a->ret = close_retrying(a->o, NULL);
	return NULL;
}

TEST(abort_and_close_settle_a_pending_cancellation_once)
{
	struct pto_sched_config sc = { .threads = 1, .clusters = 1 };
	struct settle_race sr = { 0 };
	struct hang_ctx c = { 0 };
	struct pto_dev_info info;
	struct aborter ab[2];
	struct pto_dev *dev;
	atomic_int go = 0;
	pthread_t th[2];
	pto_run *r1, *r2;
	pto_orch *o;
	int32_t aic;
	int i;

	if (access(PTO_PARAMS "max_spin_ms", W_OK))
		SKIP(return, "needs root and pto's parameters");
	hang_setup(_metadata, &dev, &c, &info);
	aic = aic_of(&info, 0);
	ASSERT_EQ(0, pto_orch_create_device(dev, NULL, &sc, &o));
	ASSERT_EQ(0, pto_run_start(o, mix_hang_dag, &c, &r1));	/* MIX */
	EXPECT_TRUE(st_wait_until(core_running(dev, aic)));
	sr.o = o;
	orch_set_fail_hook(o, settle_race_hook, &sr);
	EXPECT_EQ(-ENOTRECOVERABLE, pto_run_start(o, fills_then_fail_dag, &c,
						  &r2));
	ASSERT_NE(NULL, r2);
	EXPECT_EQ(3, atomic_load(&sr.snapshots));	/* left pending */

	ab[0] = (struct aborter){ .o = o, .go = &go };
	ab[1] = ab[0];
	ASSERT_EQ(0, pthread_create(&th[0], NULL, close_on_go, &ab[0]));
	ASSERT_EQ(0, pthread_create(&th[1], NULL, abort_on_go, &ab[1]));
	atomic_store(&go, 1);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	EXPECT_EQ(0, ab[0].ret);	/* the close */
	EXPECT_EQ(0, ab[1].ret);	/* the abort */
	EXPECT_EQ(4, atomic_load(&sr.snapshots));	/* one settle */
	orch_set_fail_hook(o, NULL, NULL);

	EXPECT_EQ(-ECANCELED, pto_run_wait(r1, 0));
	EXPECT_NE(NULL, strstr(pto_run_error(r1),
			       "orchestrator aborted (pto_orch_abort): task stopped on core"))
		TH_LOG("%s", pto_run_error(r1));
	EXPECT_EQ(-ENOTRECOVERABLE, pto_run_wait(r2, 0));
	pto_run_release(r1);
	pto_run_release(r2);
	EXPECT_EQ(0x5a5a5a5a, c.map[0]);	/* run 1's consumer */
	EXPECT_EQ(0x5a5a5a5a, c.map[64]);	/* run 2's cancelled fills */
	EXPECT_EQ(0x5a5a5a5a, c.map[80]);
	aborted_closed(_metadata, o, dev, 3, 0);

	next_orch_runs_then_end(_metadata, dev, &c, NULL, &sc, NULL);
}

/*
 * Two scheduler threads, a hang in each one's partition (the AIC core of
 * cluster 0 and of cluster 1), each in its own run with a consumer and a
 * fill queued behind it on the same core. Each thread retires its own
 * cores and stops its own hang: each run's error names its core, the
 * six cores are retired once, nothing ran but the hangs.
 */
struct two_hangs {
	struct hang_ctx *c;
	int32_t core;
	uint32_t at;
};

static int hang_on_core_dag(pto_orch *o, void *arg)
{
	struct two_hangs *t = arg;
	struct pto_tensor out = hang_t(t->c, t->at);
	struct pto_task_args a;
	struct pto_task h;
	int ret;

	pto_args_init(&a);
	pto_args_add_scalar(&a, 120000000000ULL);	/* 120 s */
	ret = pto_submit_next_level(o, &k_hang, &a, NULL,
				    pto_on_worker(t->core), &h);
	pto_args_reset(&a);
	pto_args_add_scalar(&a, 5);
	pto_args_add_tensor(&a, &out, PTO_OUTPUT_EXISTING);
	pto_args_add_dep(&a, h);
	if (!ret)	/* the consumer, on the same core */
		ret = pto_submit_next_level(o, &k_fill, &a, NULL,
					    pto_on_worker(t->core), NULL);
	/*
	 * Queued behind the hang on its core (its partition only: a kind
	 * fill could fail, not started, on the other thread first).
	 */
	out = hang_t(t->c, t->at + 16);
	pto_args_reset(&a);
	pto_args_add_scalar(&a, 6);
	pto_args_add_tensor(&a, &out, PTO_OUTPUT_EXISTING);
	if (!ret)
		ret = pto_submit_next_level(o, &k_fill, &a, NULL,
					    pto_on_worker(t->core), NULL);
	pto_args_fini(&a);
	return ret;
}

static int fill_on_core_dag(pto_orch *o, void *arg)
{
	struct two_hangs *t = arg;
	struct pto_tensor out = hang_t(t->c, t->at);

	return submit_fill(o, &out, 9, pto_on_worker(t->core), NULL, NULL);
}

TEST(abort_with_hangs_on_two_scheduler_threads)
{
	struct pto_sched_config sc = { .threads = 2, .clusters = 2 };
	struct hang_ctx c = { 0 };
	struct pto_dev_info info;
	struct two_hangs t[2];
	struct pto_dev *dev;
	pto_run *r[2];
	pto_orch *o;
	int i;

	if (access(PTO_PARAMS "max_spin_ms", W_OK))
		SKIP(return, "needs root and pto's parameters");
	if (dev0_clusters() < 2)
		SKIP(return, "needs two clusters (one boots with clusters=1)");
	hang_setup(_metadata, &dev, &c, &info);
	ASSERT_LE(2, info.clusters);
	ASSERT_EQ(0, pto_orch_create_device(dev, NULL, &sc, &o));
	for (i = 0; i < 2; i++) {
		t[i] = (struct two_hangs){ .c = &c, .core = aic_of(&info, i),
					   .at = 64 * i };
		ASSERT_EQ(0, pto_run_start(o, hang_on_core_dag, &t[i], &r[i]));
	}
	EXPECT_TRUE(st_wait_until(core_running(dev, t[0].core) &&
				  core_running(dev, t[1].core)));
	EXPECT_EQ(-ETIMEDOUT, pto_orch_close(o, 300));
	EXPECT_EQ(0, pto_orch_abort(o, 20000));
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(-ECANCELED, pto_run_wait(r[i], 0));
		EXPECT_TRUE(stopped_on(r[i], t[i].core))
			TH_LOG("run %d: %s", i, pto_run_error(r[i]));
		pto_run_release(r[i]);
		EXPECT_EQ(0x5a5a5a5a, c.map[64 * i]) TH_LOG("consumer %d", i);
		EXPECT_EQ(0x5a5a5a5a, c.map[64 * i + 16]) TH_LOG("fill %d", i);
	}
	EXPECT_EQ(0, pto_orch_close(o, 10000));
	aborted_closed(_metadata, o, dev, 6, 0);

	/* Both partitions run the next orchestrator's work. */
	ASSERT_EQ(0, pto_orch_create_device(dev, NULL, &sc, &o));
	for (i = 0; i < 2; i++) {
		t[i].at = 512 + 16 * i;
		EXPECT_EQ(0, pto_orch_run(o, fill_on_core_dag, &t[i]));
		EXPECT_EQ(9, c.map[512 + 16 * i]) TH_LOG("core %d", t[i].core);
	}
	EXPECT_EQ(0, pto_orch_close(o, 10000));
	EXPECT_EQ(0, pto_orch_destroy(o));
	pto_bo_free(c.bo);
	pto_dev_close(dev);
}

/*
 * Tasks of several cores hung at the abort: an SPMD task of six blocks
 * on the four AIV cores of two clusters (running on several, some in a
 * core's pending slot or queued), and
 * a group whose two members hang on the two AIC cores; a consumer each.
 * Each node ends once, failed (its run's wait, the consumers never run),
 * every core retired once, and the clusters run a new orchestrator's
 * MIX task.
 */
static int spmd_hang_dag(pto_orch *o, void *arg)
{
	struct hang_ctx *c = arg;
	struct pto_task_args a;
	struct pto_task h;
	int ret;

	pto_args_init(&a);
	pto_args_add_scalar(&a, 120000000000ULL);	/* 120 s */
	ret = pto_submit_spmd(o, &k_hang, &a, NULL, PTO_WORKER_AIV, 6, &h);
	pto_args_fini(&a);
	return ret ? ret : fill_on(o, c, 0, 5, PTO_WORKER_AIC, &h);
}

struct group_hang {
	struct hang_ctx *c;
	int32_t ids[2];
};

static int group_hang_dag(pto_orch *o, void *arg)
{
	struct group_hang *g = arg;
	struct pto_task_args a[2], *ap[2] = { &a[0], &a[1] };
	struct pto_task h;
	int i, ret;

	for (i = 0; i < 2; i++) {
		pto_args_init(&a[i]);
		pto_args_add_scalar(&a[i], 120000000000ULL);
	}
	ret = pto_submit_next_level_group(o, &k_hang, ap, 2, NULL, g->ids, &h);
	for (i = 0; i < 2; i++)
		pto_args_fini(&a[i]);
	return ret ? ret : fill_on(o, g->c, 16, 5, PTO_WORKER_AIV, &h);
}

TEST(abort_ends_hung_spmd_blocks_and_a_group_once)
{
	struct pto_sched_config sc = { .threads = 1, .clusters = 2 };
	struct hang_ctx c = { 0 };
	struct pto_dev_info info;
	struct group_hang g;
	uint32_t mix = PTO_WORKER_MIX;
	struct pto_dev *dev;
	pto_run *rs, *rg;
	pto_orch *o;

	if (access(PTO_PARAMS "max_spin_ms", W_OK))
		SKIP(return, "needs root and pto's parameters");
	if (dev0_clusters() < 2)
		SKIP(return, "needs two clusters (one boots with clusters=1)");
	hang_setup(_metadata, &dev, &c, &info);
	ASSERT_LE(2, info.clusters);
	ASSERT_EQ(0, pto_orch_create_device(dev, NULL, &sc, &o));
	g = (struct group_hang){ .c = &c,
				 .ids = { aic_of(&info, 0), aic_of(&info, 1) } };
	ASSERT_EQ(0, pto_run_start(o, spmd_hang_dag, &c, &rs));
	ASSERT_EQ(0, pto_run_start(o, group_hang_dag, &g, &rg));
	/*
	 * Both members hang, and blocks on at least two AIV cores (the
	 * placement fills an awake core's pending slot before it wakes a
	 * parked one: six blocks may take three cores, two each).
	 */
	EXPECT_TRUE(st_wait_until(core_running(dev, g.ids[0]) &&
				  core_running(dev, g.ids[1]) &&
				  running_aiv(dev, &info) >= 2));
	EXPECT_EQ(-ETIMEDOUT, pto_orch_close(o, 300));
	EXPECT_EQ(0, pto_orch_abort(o, 20000));
	EXPECT_EQ(-ECANCELED, pto_run_wait(rs, 0));
	EXPECT_EQ(-ECANCELED, pto_run_wait(rg, 0));
	EXPECT_NE(NULL, strstr(pto_run_error(rs),
			       "orchestrator aborted (pto_orch_abort)"))
		TH_LOG("%s", pto_run_error(rs));
	EXPECT_TRUE(stopped_on(rg, g.ids[0]) || stopped_on(rg, g.ids[1]))
		TH_LOG("%s", pto_run_error(rg));
	pto_run_release(rs);
	pto_run_release(rg);
	EXPECT_EQ(0x5a5a5a5a, c.map[0]);	/* the consumers never ran */
	EXPECT_EQ(0x5a5a5a5a, c.map[16]);
	EXPECT_EQ(0, pto_orch_close(o, 10000));
	aborted_closed(_metadata, o, dev, 6, 0);

	next_orch_runs_then_end(_metadata, dev, &c, NULL, &sc, &mix);
}

/*
 * An abort while the orchestration function is still submitting (on
 * another thread): the function's tasks so far end as any others (the
 * hang stops, its consumer never runs, an independent fill ran before);
 * the abort cannot end the run being built (-ETIMEDOUT: the function has
 * not returned); the function's next submit and alloc fail at once
 * (-ECANCELED, the first saying the orchestrator was aborted) instead of
 * queueing tasks only to fail them; the run fails, the function's error
 * is pto_run_start()'s, and a second abort returns 0.
 */
struct build_ctx {
	struct hang_ctx *c;
	atomic_int submitted, aborted;
	int submit_ret, alloc_ret;
	char submit_msg[160], alloc_msg[160];
	int submit;
	pto_run *r;
	pto_orch *o;
};

static int abort_mid_build_dag(pto_orch *o, void *arg)
{
	struct build_ctx *b = arg;
	struct pto_tensor t;
	struct pto_task h;
	int ret;

	ret = submit_hang(o, PTO_WORKER_AIC, &h);
	if (!ret)
		ret = fill_on(o, b->c, 0, 5, PTO_WORKER_AIV, &h);
	if (!ret)
		ret = fill_on(o, b->c, 32, 7, PTO_WORKER_AIV, NULL);
	if (ret)
		return ret;
	atomic_store(&b->submitted, 1);
	st_wait_until(atomic_load(&b->aborted));
	b->submit_ret = fill_on(o, b->c, 16, 8, PTO_WORKER_AIV, NULL);
	snprintf(b->submit_msg, sizeof(b->submit_msg), "%s",
		 pto_orch_error(o));
	b->alloc_ret = pto_alloc(o, 1024, &t, NULL);
	snprintf(b->alloc_msg, sizeof(b->alloc_msg), "%s", pto_orch_error(o));
	return b->submit_ret;
}

static void *build_thread(void *arg)
{
	struct build_ctx *b = arg;

	b->submit = pto_run_start(b->o, abort_mid_build_dag, b, &b->r);
	return NULL;
}

TEST(abort_during_a_build_refuses_its_further_submits)
{
	struct pto_sched_config sc = { .threads = 1, .clusters = 1 };
	struct hang_ctx c = { 0 };
	struct build_ctx b = { .c = &c };
	struct pto_dev_info info;
	struct pto_dev *dev;
	pthread_t th;
	pto_orch *o;

	if (access(PTO_PARAMS "max_spin_ms", W_OK))
		SKIP(return, "needs root and pto's parameters");
	hang_setup(_metadata, &dev, &c, &info);
	ASSERT_EQ(0, pto_orch_create_device(dev, NULL, &sc, &o));
	b.o = o;
	ASSERT_EQ(0, pthread_create(&th, NULL, build_thread, &b));
	EXPECT_TRUE(st_wait_until(atomic_load(&b.submitted) &&
				  core_running(dev, aic_of(&info, 0)) &&
				  __atomic_load_n(&c.map[32],
						  __ATOMIC_ACQUIRE) == 7));
	/* The run being built cannot end before its function returns. */
	EXPECT_EQ(-ETIMEDOUT, pto_orch_abort(o, 300));
	atomic_store(&b.aborted, 1);
	pthread_join(th, NULL);

	EXPECT_EQ(-ECANCELED, b.submit_ret);
	EXPECT_NE(NULL, strstr(b.submit_msg,
			       "orchestrator aborted (pto_orch_abort): submit to run"))
		TH_LOG("%s", b.submit_msg);
	EXPECT_EQ(-ECANCELED, b.alloc_ret);
	EXPECT_NE(NULL, strstr(b.alloc_msg, "already failed to build"))
		TH_LOG("%s", b.alloc_msg);
	EXPECT_EQ(-ECANCELED, b.submit);	/* the function's error */
	ASSERT_NE(NULL, b.r);
	EXPECT_EQ(-ECANCELED, pto_run_wait(b.r, 20000));
	EXPECT_NE(NULL, strstr(pto_run_error(b.r),
			       "orchestrator aborted (pto_orch_abort)"))
		TH_LOG("%s", pto_run_error(b.r));
	pto_run_release(b.r);
	EXPECT_EQ(0x5a5a5a5a, c.map[0]);	/* the consumer never ran */
	EXPECT_EQ(0x5a5a5a5a, c.map[16]);	/* refused */
	EXPECT_EQ(7, c.map[32]);		/* ran before the abort */
	EXPECT_EQ(0, pto_orch_abort(o, 20000));	/* nothing left */
	EXPECT_EQ(-ESHUTDOWN, pto_orch_run(o, fill_one_aic_dag, &c));
	EXPECT_EQ(0, pto_orch_close(o, 10000));
	aborted_closed(_metadata, o, dev, 3, 1);	/* the fill of 7 */

	next_orch_runs_then_end(_metadata, dev, &c, NULL, &sc, NULL);
}

/*
 * An abort while the build waits on back-pressure (a 4-slot window held by the
 * run being built): the waiting submit returns -ECANCELED at once, saying why,
 * and the run fails. The abort comes at the submit's sleep
 * (ORCH_TP_RING_WAIT), since an earlier one would be refused at submit.
 */
struct pressure_ctx {
	struct hang_ctx *c;
	atomic_int attempts;
	atomic_int waits;	/* ORCH_TP_RING_WAIT reached */
	int ret;
	char msg[160];
};

/* Under ring.mu: count, take no lock. */
static int pressure_hook(void *ctx, struct pto_orch *o, int fp,
			 struct orch_slot *s)
{
	struct pressure_ctx *p = ctx;

	(void)o;
	(void)s;
	if (fp == ORCH_TP_RING_WAIT)
		atomic_fetch_add(&p->waits, 1);
	return 0;
}

/*
 * Heap back-pressure (the only kind: slots grow with the work). Each
 * fill waits for the hang and holds 256 KiB of ring 1 (an auto-allocated
 * OUTPUT) in a scope that ends, so its heap comes back when it runs: the
 * fourth waits on the 800 KiB ring, as back-pressure, not a deadlock.
 */
static int pressure_dag(pto_orch *o, void *arg)
{
	struct pressure_ctx *p = arg;
	struct pto_task_args a;
	struct pto_task h;
	int i, ret;

	pto_args_init(&a);
	ret = submit_hang(o, PTO_WORKER_AIC, &h);
	for (i = 0; i < 16 && !ret; i++) {
		struct pto_tensor t = hang_t(p->c, 64 + 16 * i);
		struct pto_tensor big = pto_tensor_gm_auto(256 * 1024, PTO_DTYPE_I32);

		atomic_store(&p->attempts, i + 1);
		ret = pto_scope_begin(o);
		pto_args_reset(&a);
		pto_args_add_scalar(&a, 4);
		pto_args_add_tensor(&a, &t, PTO_OUTPUT_EXISTING);
		pto_args_add_tensor(&a, &big, PTO_OUTPUT);
		pto_args_add_dep(&a, h);
		if (!ret)
			ret = pto_submit_next_level(o, &k_fill, &a, NULL,
						    pto_on_kind(PTO_WORKER_AIV), NULL);
		if (!ret)
			ret = pto_scope_end(o);
	}
	pto_args_fini(&a);
	p->ret = ret;
	snprintf(p->msg, sizeof(p->msg), "%s", pto_orch_error(o));
	return ret;
}

struct pressure_build {
	pto_orch *o;
	struct pressure_ctx *p;
	pto_run *r;
	int ret;
};

static void *pressure_thread(void *arg)
{
	struct pressure_build *b = arg;

	b->ret = pto_run_start(b->o, pressure_dag, b->p, &b->r);
	return NULL;
}

TEST(abort_ends_a_submit_waiting_on_back_pressure)
{
	struct pto_orch_config oc = { .heap_ring_size = 800 * 1024,
				      .timeout_ms = 20000 };
	struct pto_sched_config sc = { .threads = 1, .clusters = 1 };
	struct hang_ctx c = { 0 };
	struct pressure_ctx p = { .c = &c };
	struct pressure_build b = { .p = &p };
	struct pto_dev_info info;
	struct pto_dev *dev;
	pthread_t th;
	pto_orch *o;
	int i;

	if (access(PTO_PARAMS "max_spin_ms", W_OK))
		SKIP(return, "needs root and pto's parameters");
	hang_setup(_metadata, &dev, &c, &info);
	ASSERT_EQ(0, pto_orch_create_device(dev, &oc, &sc, &o));
	b.o = o;
	orch_set_fail_hook(o, pressure_hook, &p);
	ASSERT_EQ(0, pthread_create(&th, NULL, pressure_thread, &b));
	/*
	 * The hang runs, and the fourth fill sleeps on the full heap ring:
	 * the hook ran under ring.mu, so the abort's wake-up, which takes
	 * it, comes when the submit sleeps.
	 */
	EXPECT_TRUE(st_wait_until(core_running(dev, aic_of(&info, 0)) &&
				  atomic_load(&p.waits) >= 1));
	EXPECT_EQ(4, atomic_load(&p.attempts));	/* three fit, one waits */
	EXPECT_EQ(0, pto_orch_abort(o, 15000));
	pthread_join(th, NULL);
	orch_set_fail_hook(o, NULL, NULL);
	EXPECT_EQ(4, atomic_load(&p.attempts));	/* three fit, one waited */
	EXPECT_EQ(-ECANCELED, p.ret);
	EXPECT_NE(NULL, strstr(p.msg,
			       "orchestrator aborted (pto_orch_abort): submit refused while it waited for ring 1"))
		TH_LOG("%s", p.msg);
	EXPECT_EQ(-ECANCELED, b.ret);
	ASSERT_NE(NULL, b.r);
	EXPECT_EQ(-ECANCELED, pto_run_wait(b.r, 0));
	pto_run_release(b.r);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(0x5a5a5a5a, c.map[64 + 16 * i]) TH_LOG("fill %d", i);
	EXPECT_EQ(0, pto_orch_close(o, 10000));
	aborted_closed(_metadata, o, dev, 3, 0);

	next_orch_runs_then_end(_metadata, dev, &c, &oc, &sc, NULL);
}

/*
 * The orch thread holds READY tasks back in a batch (ready.c); a
 * scheduler thread takes them before it sleeps (sched_sleep ->
 * orch_ready_steal). Two fills, then the orchestration function waits in
 * its own code, calling nothing of pto, for both outputs: the first task
 * is routed at once (the idle threads marked their kinds hungry), the
 * second stays in the batch, and only the steal of a thread going idle
 * can run it while the function does not return.
 */
struct blocked_ctx {
	struct _test_data_sched *self;
	int seen;		/* both outputs seen inside the function */
};

static int fills_then_block(pto_orch *o, void *arg)
{
	struct blocked_ctx *c = arg;
	volatile int32_t *out = c->self->map;
	struct pto_task_args a;
	struct timespec t0, t;
	struct pto_task h;
	int ret = 0, i;

	out[512] = 0;
	out[528] = 0;
	pto_args_init(&a);
	for (i = 0; i < 2 && !ret; i++) {
		struct pto_tensor d = ti(c->self, 512 + 16 * i, 16);

		pto_args_reset(&a);
		pto_args_add_scalar(&a, 77 + i);
		pto_args_add_tensor(&a, &d, PTO_OUTPUT_EXISTING);
		ret = pto_submit_next_level(o, &k_fill, &a, NULL,
					    pto_on_kind(PTO_WORKER_AIV), &h);
	}
	pto_args_fini(&a);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		if (out[512] == 77 && out[528] == 78) {
			c->seen = 1;
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 5);
	return ret;
}

TEST_F(sched, batched_ready_task_runs_while_orchestration_blocks)
{
	const struct timespec settle = { 0, 100 * 1000000L };
	int it;

	for (it = 0; it < 3; it++) {
		struct blocked_ctx c = { .self = self };
		pto_run *r;

		nanosleep(&settle, NULL);	/* the threads sleep */
		ASSERT_EQ(0, pto_run_start(self->o, fills_then_block, &c, &r));
		ASSERT_EQ(0, pto_run_wait(r, 20000));
		pto_run_release(r);
		EXPECT_EQ(1, c.seen)
			TH_LOG("iteration %d: a fill waited for the function to return (%d %d)",
			       it, self->map[512], self->map[528]);
	}
}

/*
 * The scheduler's counters (pto_orch_sched_stats) are each thread's own,
 * summed over the threads. On every core of every partition one task, the
 * last core of each cluster a device fault: tasks and errors count each
 * core's task once, whichever thread ran it. The cores parked while the
 * orchestrator stood idle, so each needed a doorbell for its task, one
 * ioctl each (the parked pass wakes one core per step); and each thread,
 * woken for its cores' work, slept again once idle.
 */
static int every_core_dag(pto_orch *o, void *arg)
{
	const struct pto_dev_info *info = arg;
	struct pto_task_args a;
	unsigned int c;
	int ret = 0;

	pto_args_init(&a);
	for (c = 0; c < info->cores && !ret; c++)
		ret = pto_submit_next_level(o, c % 3 == 2 ? &k_fault : &k_noop,
					    &a, NULL, pto_on_worker((int32_t)c),
					    NULL);
	pto_args_fini(&a);
	return ret;
}

TEST_F(sched, stats_count_every_threads_tasks_errors_doorbells_and_sleeps)
{
	const struct timespec settle = { 0, 150 * 1000000L };
	uint64_t bells[PTO_MAX_CORES];
	struct pto_sched_stats st0, st;
	struct pto_core_stats cs;
	unsigned int c, nthreads;

	nthreads = self->info.lanes < self->info.clusters ?
		   self->info.lanes : self->info.clusters;
	nanosleep(&settle, NULL);	/* every core parks, every thread sleeps */
	for (c = 0; c < self->info.cores; c++) {
		ASSERT_EQ(0, core_stats(self->dev, c, &cs));
		bells[c] = cs.doorbells;
	}
	ASSERT_EQ(0, pto_orch_sched_stats(self->o, &st0));
	EXPECT_EQ(-EIO, pto_orch_run(self->o, every_core_dag, &self->info));
	nanosleep(&settle, NULL);	/* every thread idles and sleeps */
	ASSERT_EQ(0, pto_orch_sched_stats(self->o, &st));
	EXPECT_EQ(self->info.cores, st.tasks - st0.tasks);
	EXPECT_EQ(self->info.clusters, st.errors - st0.errors);
	EXPECT_EQ(self->info.cores, st.doorbells - st0.doorbells);
	EXPECT_LE(nthreads, st.sleeps - st0.sleeps);
	/* The doorbells went to the parked cores that got work, once each. */
	for (c = 0; c < self->info.cores; c++) {
		ASSERT_EQ(0, core_stats(self->dev, c, &cs));
		EXPECT_EQ(1, cs.doorbells - bells[c]) TH_LOG("core %u", c);
	}
}

/*
 * The pending slot: once a core ACKed its task, its next id goes out while
 * the task still runs. Read in the core's window (debugfs "windows"):
 * DATA_MAIN_BASE holds the second id while COND still ACKs the first.
 * Without the slot the second id waits for the first's FIN.
 */
static int spin_on_core1_dag(pto_orch *o, void *arg)
{
	struct pto_task_args a;
	int ret;

	pto_args_init(&a);
	pto_args_add_scalar(&a, *(uint64_t *)arg);
	ret = pto_submit_next_level(o, &k_spin, &a, NULL, pto_on_worker(1),
				    NULL);
	pto_args_fini(&a);
	return ret;
}

/* Core @core's DATA_MAIN_BASE and COND (debugfs "windows"). 0 or -1. */
static int window_regs(unsigned int core, uint32_t *dmb, uint32_t *cond)
{
	char line[256];

	if (st_dbg_line(PTO_DBG0 "windows", core, line, sizeof(line)) ||
	    sscanf(line, "%*u %*x %*x %x %x", dmb, cond) != 2)
		return -1;
	return 0;
}

TEST(pending_slot_takes_the_next_id_while_the_core_runs)
{
	struct pto_sched_config sc = { .threads = 1, .clusters = 1 };
	uint64_t long_ns = 600000000, short_ns = 0, t0;
	uint32_t dmb = 0, cond = 0, first;
	struct pto_dev *dev;
	pto_run *r1, *r2;
	pto_orch *o;

	if (access(PTO_DBG0 "windows", R_OK))
		SKIP(return, "needs root and debugfs");
	ASSERT_EQ(0, pto_dev_open(0, &dev));
	ASSERT_EQ(0, pto_orch_create_device(dev, NULL, &sc, &o));
	ASSERT_EQ(0, pto_run_start(o, spin_on_core1_dag, &long_ns, &r1));
	/* The core took the long task: COND ACKs the id in DATA_MAIN_BASE. */
	t0 = pto_now_ns();
	do {
		ASSERT_EQ(0, window_regs(1, &dmb, &cond));
	} while ((cond != (PTO_COND_ACK | dmb) || !dmb) &&
		 pto_now_ns() - t0 < 300000000ULL);
	ASSERT_EQ(PTO_COND_ACK | dmb, cond);
	first = dmb;
	/* A kick: the thread finds the core's pending slot free. */
	ASSERT_EQ(0, pto_run_start(o, spin_on_core1_dag, &short_ns, &r2));
	t0 = pto_now_ns();
	do {
		ASSERT_EQ(0, window_regs(1, &dmb, &cond));
	} while (dmb == first && pto_now_ns() - t0 < 200000000ULL);
	EXPECT_EQ(first + 1, dmb);
	EXPECT_EQ(PTO_COND_ACK | first, cond)
		TH_LOG("the long task (id %u) was no longer running", first);
	EXPECT_EQ(0, pto_run_wait(r1, 10000));
	EXPECT_EQ(0, pto_run_wait(r2, 10000));
	pto_run_release(r1);
	pto_run_release(r2);
	EXPECT_EQ(0, pto_orch_close(o, 10000));
	EXPECT_EQ(0, pto_orch_destroy(o));
	pto_dev_close(dev);
}

/* One task on cluster 0's MIX worker: kernel @k, its scalar @arg. */
static int one_mix_task(pto_orch *o, const struct pto_callable *k,
			uint64_t arg)
{
	struct pto_task_args a;
	int ret;

	pto_args_init(&a);
	pto_args_add_scalar(&a, arg);
	ret = pto_submit_next_level(o, k, &a, NULL,
				    pto_on_worker(PTO_SCHED_MIX_ID(0)), NULL);
	pto_args_fini(&a);
	return ret;
}

/*
 * A MIX task completes when all three cores of its cluster finished it,
 * not at the first two FINs: when its run's wait returns, each core has
 * counted the task (the core counts a task before its FIN). The three
 * spinning cores share the VM's two CPUs, so one often finishes a time
 * slice after the others.
 */
static int mix_spin_dag(pto_orch *o, void *arg)
{
	(void)arg;
	return one_mix_task(o, &k_spin, 5000000);	/* 5 ms */
}

TEST(mix_task_ends_after_all_three_cores_finished_it)
{
	struct pto_sched_config sc = { .threads = 1, .clusters = 1 };
	struct pto_core_stats cs;
	uint64_t before[3];
	struct pto_dev *dev;
	pto_orch *o;
	unsigned int c;
	int it;

	ASSERT_EQ(0, pto_dev_open(0, &dev));
	ASSERT_EQ(0, pto_orch_create_device(dev, NULL, &sc, &o));
	for (it = 0; it < 20; it++) {
		for (c = 0; c < 3; c++) {
			ASSERT_EQ(0, core_stats(dev, c, &cs));
			before[c] = cs.tasks;
		}
		ASSERT_EQ(0, pto_orch_run(o, mix_spin_dag, NULL));
		for (c = 0; c < 3; c++) {
			ASSERT_EQ(0, core_stats(dev, c, &cs));
			EXPECT_EQ(before[c] + 1, cs.tasks)
				TH_LOG("iteration %d: core %u still ran the MIX task",
				       it, c);
		}
	}
	EXPECT_EQ(0, pto_orch_close(o, 10000));
	EXPECT_EQ(0, pto_orch_destroy(o));
	pto_dev_close(dev);
}

/*
 * A MIX task whose cores report a device error fails with it: -EIO and
 * the message naming the error and a core, each core's task counted as an
 * error.
 */
static int mix_fault_dag(pto_orch *o, void *arg)
{
	(void)arg;
	return one_mix_task(o, &k_fault, 0);
}

TEST(mix_task_fails_with_its_cores_device_error)
{
	struct pto_sched_config sc = { .threads = 1, .clusters = 1 };
	struct pto_sched_stats st0, st;
	struct pto_dev *dev;
	pto_orch *o;
	pto_run *r;

	ASSERT_EQ(0, pto_dev_open(0, &dev));
	ASSERT_EQ(0, pto_orch_create_device(dev, NULL, &sc, &o));
	ASSERT_EQ(0, pto_orch_sched_stats(o, &st0));
	ASSERT_EQ(0, pto_run_start(o, mix_fault_dag, NULL, &r));
	EXPECT_EQ(-EIO, pto_run_wait(r, 10000));
	EXPECT_NE(NULL, strstr(pto_run_error(r), "(device fault) on core"))
		TH_LOG("%s", pto_run_error(r));
	pto_run_release(r);
	ASSERT_EQ(0, pto_orch_sched_stats(o, &st));
	EXPECT_EQ(3, st.tasks - st0.tasks);
	EXPECT_EQ(3, st.errors - st0.errors);
	EXPECT_EQ(0, pto_orch_close(o, 10000));
	EXPECT_EQ(0, pto_orch_destroy(o));
	pto_dev_close(dev);
}

/*
 * A MIX task that becomes READY behind a stream of AIV tasks on its one
 * cluster waits only for the work in flight on the AIV cores, not for the
 * queued AIV tasks (Documentation/scheduler.md, "MIX tasks"). Each AIV task
 * writes its region's first element first; the MIX task snapshots them, so at
 * most the four in flight may have started after it became READY.
 */
#define MIXW_BEFORE 100		/* AIV tasks submitted before the MIX task */
#define MIXW_N 200		/* and after it, to MIXW_N */
#define MIXW_REGION 256		/* i32 elements per AIV task's region */
#define MIXW_SIDE 128		/* rows = cols of its overlapping tile */
#define MIXW_IN_FLIGHT 4	/* two AIV cores, running + pending slot */

struct mixw_ctx {
	struct pto_bo *bo;
	int32_t *map;		/* MIXW_N regions, then the snapshot */
	struct pto_target mix_at;
	uint32_t flowing;	/* AIV tasks started before the MIX submit */
	int ready_marks;	/* started when the MIX task was READY, or more */
};

/* AIV tasks in [@from, @to) that have started. */
static int mixw_marks(const int32_t *map, uint32_t from, uint32_t to)
{
	int n = 0;

	for (; from < to; from++)
		n += __atomic_load_n(&map[from * MIXW_REGION],
				     __ATOMIC_RELAXED) == 1;
	return n;
}

static int mixw_aiv(pto_orch *o, struct mixw_ctx *c, uint32_t i)
{
	struct pto_tensor t = pto_tensor_gm(c->bo, c->map,
					    (uint64_t)i * MIXW_REGION * 4,
					    MIXW_REGION * 4, PTO_DTYPE_I32);

	t.rank = 2;
	t.shape[0] = MIXW_SIDE;
	t.shape[1] = MIXW_SIDE;
	t.strides[0] = 1;
	t.strides[1] = 1;
	return submit_fill(o, &t, 1, pto_on_kind(PTO_WORKER_AIV), NULL, NULL);
}

static int mixw_dag(pto_orch *o, void *arg)
{
	struct mixw_ctx *c = arg;
	struct pto_tensor marks = pto_tensor_gm(c->bo, c->map, 0,
						MIXW_N * MIXW_REGION * 4,
						PTO_DTYPE_I32);
	struct pto_tensor snap = pto_tensor_gm(c->bo, c->map,
					       MIXW_N * MIXW_REGION * 4,
					       MIXW_N * 4, PTO_DTYPE_I32);
	struct timespec t0, t;
	struct pto_task_args a;
	uint32_t i;
	int ret = 0;

	for (i = 0; i < MIXW_BEFORE && !ret; i++)
		ret = mixw_aiv(o, c, i);
	/* Let the stream flow first (a slower one only weakens the test). */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (mixw_marks(c->map, 0, MIXW_BEFORE) < (int)c->flowing) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 1)
			break;
		sched_yield();
	}
	marks.rank = 1;
	marks.shape[0] = MIXW_N;
	marks.strides[0] = MIXW_REGION;
	pto_args_init(&a);
	pto_args_add_tensor(&a, &marks, PTO_NO_DEP);
	pto_args_add_tensor(&a, &snap, PTO_OUTPUT_EXISTING);
	if (!ret)
		ret = pto_submit_next_level(o, &k_copy, &a, NULL, c->mix_at,
					    NULL);
	pto_args_fini(&a);
	/*
	 * An exact-worker task is routed (READY for the scheduler) before
	 * its submit returns; a kind one waits in the orchestrator's batch
	 * (Documentation/orchestrator.md, "Batched READY routing") until the next
	 * ready_batch submits at the latest: read the marks after them.
	 */
	if (c->mix_at.worker_id >= 0)
		c->ready_marks = mixw_marks(c->map, 0, MIXW_N);
	for (i = MIXW_BEFORE; i < MIXW_N && !ret; i++)
		ret = mixw_aiv(o, c, i);
	if (c->mix_at.worker_id < 0)
		c->ready_marks = mixw_marks(c->map, 0, MIXW_N);
	return ret;
}

/* @flowing AIV tasks start before the MIX task (at @mix_at) is submitted. */
static void mixw_check(struct __test_metadata *_metadata,
		       struct pto_target mix_at, uint32_t flowing,
		       const char *how)
{
	struct pto_sched_config sc = { .threads = 1, .clusters = 1 };
	struct mixw_ctx c = { .mix_at = mix_at, .flowing = flowing };
	int it, worst = -MIXW_N, worst_before = 0;
	const int32_t *snap;
	struct pto_dev *dev;
	pto_orch *o;

	ASSERT_EQ(0, pto_dev_open(0, &dev));
	ASSERT_EQ(0, pto_bo_alloc(dev, MIXW_N * (MIXW_REGION + 1) * 4, 0,
				  &c.bo));
	ASSERT_EQ(0, pto_bo_map(c.bo, (void **)&c.map));
	snap = c.map + MIXW_N * MIXW_REGION;
	ASSERT_EQ(0, pto_orch_create_device(dev, NULL, &sc, &o));
	for (it = 0; it < 20; it++) {
		int earlier = 0, later = 0;
		uint32_t i;

		memset(c.map, 0, MIXW_N * (MIXW_REGION + 1) * 4);
		ASSERT_EQ(0, pto_orch_run(o, mixw_dag, &c));
		for (i = 0; i < MIXW_N; i++) {
			ASSERT_EQ(1, c.map[i * MIXW_REGION]) TH_LOG("task %u", i);
			/* The MIX task copied a 0 or a 1. */
			ASSERT_EQ(0, snap[i] & ~1) TH_LOG("element %u", i);
			if (i < MIXW_BEFORE)
				earlier += snap[i];
			else
				later += snap[i];
		}
		EXPECT_GE(MIXW_IN_FLIGHT, earlier + later - c.ready_marks)
			TH_LOG("%s, run %d: %d AIV tasks had started when the MIX task was READY, %d of the %d before it and %d of the %d after it when it started",
			       how, it, c.ready_marks, earlier, MIXW_BEFORE,
			       later, MIXW_N - MIXW_BEFORE);
		if (earlier + later - c.ready_marks > worst) {
			worst = earlier + later - c.ready_marks;
			worst_before = earlier;
		}
	}
	TH_LOG("%s: at most %d AIV tasks started between the MIX task's READY and its start (%d of the earlier ones had then)",
	       how, worst, worst_before);
	EXPECT_EQ(0, pto_orch_close(o, 10000));
	EXPECT_EQ(0, pto_orch_destroy(o));
	pto_bo_free(c.bo);
	pto_dev_close(dev);
}

/* Three tests, not one: each stays inside the harness's timeout on a
 * loaded host. */
TEST(mix_task_waits_only_for_the_work_in_flight)
{
	mixw_check(_metadata, pto_on_worker(PTO_SCHED_MIX_ID(0)), 0,
		   "exact, at once");
}

TEST(mix_task_waits_only_for_the_work_in_flight_exact_flowing)
{
	mixw_check(_metadata, pto_on_worker(PTO_SCHED_MIX_ID(0)), 20,
		   "exact, stream flowing");
}

TEST(mix_task_waits_only_for_the_work_in_flight_kind_flowing)
{
	mixw_check(_metadata, pto_on_kind(PTO_WORKER_MIX), 20,
		   "kind, stream flowing");
}

TEST_HARNESS_MAIN
