// SPDX-License-Identifier: GPL-2.0
/*
 * Host callbacks in device DAGs: a device orchestrator's SUB workers run
 * C callbacks from the SUB queue in the same DAG as the cores' tasks,
 * dependencies inferred both ways through GM tensors
 * (Documentation/orchestrator.md, "SUB workers on a device").
 */
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <pto/orch.h>
#include <pto/pto.h>
#include <pto/sched.h>
#include "kselftest_harness.h"
#include "pto_selftest.h"

#define N 256			/* elements of each tensor */
#define CB_DELAY_US 30000	/* a callback's head start over its peers */

static const struct pto_callable k_fill = { .kernel_id = PTO_FUNC_FILL };
static const struct pto_callable k_adds = { .kernel_id = PTO_FUNC_ADD_SCALAR };
static const struct pto_callable k_spin = { .kernel_id = PTO_FUNC_SPIN_NS };

/* "ptoD-subI" threads of this process. */
static int sub_threads_alive(unsigned int dev)
{
	char prefix[16], path[300], comm[32];
	struct dirent *de;
	DIR *d = opendir("/proc/self/task");
	int n = 0;

	if (!d)
		return -1;
	snprintf(prefix, sizeof(prefix), "pto%u-sub", dev);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 de->d_name);
		if (!st_read_line(path, comm, sizeof(comm)) &&
		    !strncmp(comm, prefix, strlen(prefix)))
			n++;
	}
	closedir(d);
	return n;
}

FIXTURE(sub) {
	struct pto_dev *dev;
	struct pto_dev_info info;
	pto_orch *o;
	struct pto_bo *bo;
	int32_t *map;
};

FIXTURE_SETUP(sub)
{
	struct pto_sched_config sc = { .threads = 1, .sub_threads = 2 };

	ASSERT_EQ(0, pto_dev_open(0, &self->dev));
	ASSERT_EQ(0, pto_dev_info(self->dev, &self->info));
	ASSERT_EQ(0, pto_bo_alloc(self->dev, 1 << 16, 0, &self->bo));
	ASSERT_EQ(0, pto_bo_map(self->bo, (void **)&self->map));
	ASSERT_EQ(0, pto_orch_create_device(self->dev, NULL, &sc, &self->o));
	EXPECT_EQ(2, sub_threads_alive(self->info.index));
}

FIXTURE_TEARDOWN(sub)
{
	EXPECT_EQ(0, pto_orch_close(self->o, 10000));
	EXPECT_EQ(0, pto_orch_destroy(self->o));
	EXPECT_EQ(0, sub_threads_alive(self->info.index));
	pto_bo_free(self->bo);
	pto_dev_close(self->dev);
}

/* i32 tensor of N elements at element offset @at of the fixture buffer. */
static struct pto_tensor gm(struct _test_data_sub *self, uint32_t at)
{
	return pto_tensor_gm(self->bo, self->map, at * 4ULL, N * 4ULL,
			     PTO_DTYPE_I32);
}

/* What a callback saw and did, for the test to compare. */
struct cb_state {
	_Atomic int calls;
	_Atomic int bad;		/* elements not as expected */
	_Atomic int32_t worker_id;
	_Atomic int running;		/* group members inside at once */
	_Atomic int max_running;
	int32_t expect;			/* every input element */
	int32_t add;			/* output = input + add */
	int err;			/* returned (with a message) if set */
};

static int32_t *tensor_ptr(const struct pto_task_ctx *ctx, uint32_t i)
{
	return (int32_t *)(uintptr_t)ctx->tensors[i].t.data;
}

/* tensors[0] INPUT: check every element is st->expect; tensors[1]
 * OUTPUT: input + st->add. */
static int check_and_transform(struct pto_task_ctx *ctx)
{
	struct cb_state *st = ctx->user;
	const int32_t *in = tensor_ptr(ctx, 0);
	int32_t *out = tensor_ptr(ctx, 1);
	int i, bad = 0;

	atomic_fetch_add(&st->calls, 1);
	atomic_store(&st->worker_id, ctx->worker_id);
	for (i = 0; i < N; i++) {
		bad += in[i] != st->expect;
		out[i] = in[i] + st->add;
	}
	atomic_fetch_add(&st->bad, bad);
	if (st->err) {
		snprintf(ctx->errmsg, ctx->errmsg_len,
			 "intermediate rejected by the host");
		return st->err;
	}
	return 0;
}

/* After CB_DELAY_US, tensors[0] (OUTPUT) = st->expect. */
static int slow_fill(struct pto_task_ctx *ctx)
{
	struct cb_state *st = ctx->user;
	int32_t *out = tensor_ptr(ctx, 0);
	int i;

	usleep(CB_DELAY_US);
	for (i = 0; i < N; i++)
		out[i] = st->expect;
	atomic_fetch_add(&st->calls, 1);
	atomic_store(&st->worker_id, ctx->worker_id);
	return 0;
}

static int submit1(pto_orch *o, const struct pto_callable *k, uint64_t scalar,
		   bool has_scalar, const struct pto_tensor *in,
		   const struct pto_tensor *out, enum pto_tag out_tag,
		   struct pto_target at)
{
	struct pto_task_args a;
	int ret;

	pto_args_init(&a);
	if (has_scalar)
		pto_args_add_scalar(&a, scalar);
	if (in)
		pto_args_add_tensor(&a, in, PTO_INPUT);
	ret = pto_args_add_tensor(&a, out, out_tag);
	if (ret >= 0)
		ret = pto_submit_next_level(o, k, &a, NULL, at, NULL);
	pto_args_fini(&a);
	return ret < 0 ? ret : 0;
}

struct dag {
	struct _test_data_sub *self;
	struct cb_state *st;
	struct pto_callable cb;
};

/*
 * Device -> host -> device: a spin orders a fill of x after it (x's only
 * writer is the fill, so a callback that ran early would see zeros); the
 * callback reads x through its mapping, checks it and writes y = x + add;
 * a device task reads y and writes z = y + 1000.
 */
static int device_host_device_dag(pto_orch *o, void *arg)
{
	struct dag *g = arg;
	struct pto_tensor x = gm(g->self, 0), y = gm(g->self, N);
	struct pto_tensor z = gm(g->self, 2 * N);
	struct pto_task_args a;
	int ret;

	ret = submit1(o, &k_spin, 40000000ull, true, NULL, &x,
		      PTO_OUTPUT_EXISTING, pto_on_kind(PTO_WORKER_AIC));
	if (!ret)
		ret = submit1(o, &k_fill, 7, true, NULL, &x, PTO_INOUT,
			      pto_on_kind(PTO_WORKER_AIV));
	if (ret)
		return ret;
	pto_args_init(&a);
	pto_args_add_tensor(&a, &x, PTO_INPUT);
	pto_args_add_tensor(&a, &y, PTO_OUTPUT_EXISTING);
	ret = pto_submit_sub(o, &g->cb, &a, NULL);
	pto_args_fini(&a);
	if (!ret)
		ret = submit1(o, &k_adds, 1000, true, &y, &z,
			      PTO_OUTPUT_EXISTING, pto_on_kind(PTO_WORKER_AIV));
	return ret;
}

TEST_F(sub, callback_reads_a_device_tasks_output)
{
	struct cb_state st = { .expect = 7, .add = 5, .worker_id = -1 };
	struct dag g = { self, &st, { .fn = check_and_transform, .user = &st } };
	int i, bad_y = 0, bad_z = 0;

	ASSERT_EQ(0, pto_orch_run(self->o, device_host_device_dag, &g));
	EXPECT_EQ(1, st.calls);
	EXPECT_EQ(0, st.bad) TH_LOG("the callback saw x before the fill");
	EXPECT_TRUE(st.worker_id == PTO_SCHED_SUB_ID(0) ||
		    st.worker_id == PTO_SCHED_SUB_ID(1))
		TH_LOG("worker %d", st.worker_id);
	for (i = 0; i < N; i++) {
		bad_y += self->map[N + i] != 12;
		bad_z += self->map[2 * N + i] != 1012;
	}
	EXPECT_EQ(0, bad_y) TH_LOG("y[0] = %d", self->map[N]);
	EXPECT_EQ(0, bad_z) TH_LOG("z[0] = %d", self->map[2 * N]);
}

/*
 * Host -> device: a slow callback writes x (existing GM) and a second one
 * an auto-allocated GM OUTPUT; device tasks read each (INPUT), so they
 * must wait for the callbacks: z = x + 1, w = auto + 2.
 */
struct h2d {
	struct _test_data_sub *self;
	struct cb_state *st;
};

static int host_to_device_dag(pto_orch *o, void *arg)
{
	struct h2d *h = arg;
	struct pto_callable cb = { .fn = slow_fill, .user = h->st };
	struct pto_tensor x = gm(h->self, 0), z = gm(h->self, N);
	struct pto_tensor w = gm(h->self, 2 * N);
	struct pto_tensor t = pto_tensor_gm_auto(N * 4, PTO_DTYPE_I32);
	struct pto_task_args a;
	int ret;

	pto_args_init(&a);
	pto_args_add_tensor(&a, &x, PTO_OUTPUT_EXISTING);
	ret = pto_submit_sub(o, &cb, &a, NULL);
	pto_args_reset(&a);
	t.dtype = PTO_DTYPE_I32;
	pto_args_add_tensor(&a, &t, PTO_OUTPUT);
	if (!ret)
		ret = pto_submit_sub(o, &cb, &a, NULL);
	/* The auto-allocated OUTPUT's GM address, handed back by submit. */
	if (!ret)
		t = a.tensors[0].t;
	pto_args_fini(&a);
	if (!ret)
		ret = submit1(o, &k_adds, 1, true, &x, &z, PTO_OUTPUT_EXISTING,
			      pto_on_kind(PTO_WORKER_AIV));
	if (!ret)
		ret = submit1(o, &k_adds, 2, true, &t, &w, PTO_OUTPUT_EXISTING,
			      pto_on_kind(PTO_WORKER_AIV));
	return ret;
}

TEST_F(sub, device_task_consumes_a_callbacks_output)
{
	struct cb_state st = { .expect = 40 };
	struct h2d h = { self, &st };
	int i, bad_z = 0, bad_w = 0;

	ASSERT_EQ(0, pto_orch_run(self->o, host_to_device_dag, &h));
	EXPECT_EQ(2, st.calls);
	for (i = 0; i < N; i++) {
		bad_z += self->map[N + i] != 41;
		bad_w += self->map[2 * N + i] != 42;
	}
	EXPECT_EQ(0, bad_z) TH_LOG("z[0] = %d: read before the callback",
				   self->map[N]);
	EXPECT_EQ(0, bad_w) TH_LOG("w[0] = %d", self->map[2 * N]);
}

/*
 * A group of four SUB members on the two SUB workers: members 0 and 1
 * start together (each waits, bounded, until two are inside); each
 * writes its index into its own quarter of x; a device task consumes
 * the whole of x only once every member has finished.
 */
#define GROUP_N 4

static int sub_member(struct pto_task_ctx *ctx)
{
	struct cb_state *st = ctx->user;
	int32_t *out = tensor_ptr(ctx, 0);
	int i, in = atomic_fetch_add(&st->running, 1) + 1, m;

	m = atomic_load(&st->max_running);
	while (in > m && !atomic_compare_exchange_weak(&st->max_running, &m, in))
		;
	for (i = 0; i < 500 && atomic_load(&st->max_running) < 2; i++)
		usleep(1000);
	usleep(CB_DELAY_US / 3);
	for (i = 0; i < N / GROUP_N; i++)
		out[i] = (int32_t)ctx->member + 1;
	if (ctx->nmembers != GROUP_N)
		atomic_fetch_add(&st->bad, 1);
	atomic_fetch_add(&st->calls, 1);
	atomic_fetch_sub(&st->running, 1);
	return 0;
}

static int group_dag(pto_orch *o, void *arg)
{
	struct dag *g = arg;
	struct pto_task_args a[GROUP_N], *ap[GROUP_N];
	struct pto_tensor x = gm(g->self, 0), z = gm(g->self, N);
	struct pto_tensor q[GROUP_N];
	int i, ret;

	for (i = 0; i < GROUP_N; i++) {
		q[i] = pto_tensor_gm(g->self->bo, g->self->map,
				     i * (N / GROUP_N) * 4ULL, N / GROUP_N * 4,
				     PTO_DTYPE_I32);
		pto_args_init(&a[i]);
		pto_args_add_tensor(&a[i], &q[i], PTO_OUTPUT_EXISTING);
		ap[i] = &a[i];
	}
	ret = pto_submit_sub_group(o, &g->cb, ap, GROUP_N, NULL);
	for (i = 0; i < GROUP_N; i++)
		pto_args_fini(&a[i]);
	/* x's key (offset 0) names the group's node, which completes
	 * when its last member does. */
	if (!ret)
		ret = submit1(o, &k_adds, 100, true, &x, &z,
			      PTO_OUTPUT_EXISTING, pto_on_kind(PTO_WORKER_AIV));
	return ret;
}

TEST_F(sub, group_of_sub_tasks_on_a_device)
{
	struct cb_state st = { 0 };
	struct dag g = { self, &st, { .fn = sub_member, .user = &st } };
	int i, bad_x = 0, bad_z = 0;

	ASSERT_EQ(0, pto_orch_run(self->o, group_dag, &g));
	EXPECT_EQ(GROUP_N, st.calls);
	EXPECT_EQ(0, st.bad);
	EXPECT_EQ(2, st.max_running) TH_LOG("the two SUB workers ran apart");
	for (i = 0; i < N; i++) {
		int32_t v = i / (N / GROUP_N) + 1;

		bad_x += self->map[i] != v;
		bad_z += self->map[N + i] != v + 100;
	}
	EXPECT_EQ(0, bad_x) TH_LOG("x[0] = %d", self->map[0]);
	EXPECT_EQ(0, bad_z) TH_LOG("z[0] = %d, z[%d] = %d: before the group ended",
				   self->map[N], N - 1, self->map[2 * N - 1]);
}

/*
 * A callback that fails fails its run with its own error and message;
 * the device task that consumes its output never runs (z keeps its
 * sentinel), and the orchestrator runs the next DAG as usual.
 */
TEST_F(sub, callback_error_fails_the_run)
{
	struct cb_state st = { .expect = 7, .add = 5, .err = -EPROTO };
	struct dag g = { self, &st, { .fn = check_and_transform, .user = &st } };
	pto_run *r;
	int i, bad = 0;

	for (i = 0; i < N; i++)
		self->map[2 * N + i] = -1;
	ASSERT_EQ(0, pto_run_start(self->o, device_host_device_dag, &g, &r));
	EXPECT_EQ(-EPROTO, pto_run_wait(r, 20000));
	EXPECT_NE(NULL, strstr(pto_run_error(r), "intermediate rejected by the host"))
		TH_LOG("%s", pto_run_error(r));
	pto_run_release(r);
	EXPECT_EQ(1, st.calls);
	for (i = 0; i < N; i++)
		bad += self->map[2 * N + i] != -1;
	EXPECT_EQ(0, bad) TH_LOG("z[0] = %d: the consumer ran", self->map[2 * N]);

	st.err = 0;
	ASSERT_EQ(0, pto_orch_run(self->o, device_host_device_dag, &g));
	EXPECT_EQ(2, st.calls);
	for (i = 0; i < N; i++)
		bad += self->map[2 * N + i] != 1012;
	EXPECT_EQ(0, bad) TH_LOG("z[0] = %d", self->map[2 * N]);
}

/* One SUB task on worker @arg's id (a struct cb_state's expect). */
static int one_sub_dag(pto_orch *o, void *arg)
{
	struct cb_state *st = arg;
	struct pto_callable cb = { .fn = slow_fill, .user = st };
	static int32_t host[N];
	struct pto_tensor h = pto_tensor_host(host, sizeof(host));
	struct pto_task_args a;
	int ret;

	pto_args_init(&a);
	pto_args_add_tensor(&a, &h, PTO_OUTPUT_EXISTING);
	ret = pto_submit_next_level(o, &cb, &a, NULL,
				    pto_on_worker(PTO_SCHED_SUB_ID(st->add)),
				    NULL);
	pto_args_fini(&a);
	return ret;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * SUB workers that have nothing to do - never had, or parked (heavy)
 * after a task - leave at once: close and destroy take well under the
 * scheduler's own close, and every "pto0-sub" thread is gone after.
 */
TEST(destroy_with_idle_sub_workers)
{
	struct pto_sched_config sc = { .threads = 1, .clusters = 1,
				       .sub_threads = 4 };
	struct cb_state st = { .expect = 3, .add = 2 };
	struct pto_dev_info info;
	struct pto_dev *dev;
	double t0;
	pto_orch *o;
	int round;

	ASSERT_EQ(0, pto_dev_open(0, &dev));
	ASSERT_EQ(0, pto_dev_info(dev, &info));
	for (round = 0; round < 2; round++) {
		ASSERT_EQ(0, pto_orch_create_device(dev, NULL, &sc, &o));
		EXPECT_EQ(4, sub_threads_alive(info.index));
		if (round) {
			ASSERT_EQ(0, pto_orch_run(o, one_sub_dag, &st));
			EXPECT_EQ(PTO_SCHED_SUB_ID(2), st.worker_id);
			EXPECT_EQ(1, st.calls);
		}
		/* Past the light sleep: every SUB worker sleeps heavy. */
		usleep(50000);
		t0 = now_s();
		EXPECT_EQ(0, pto_orch_close(o, 10000));
		EXPECT_EQ(0, pto_orch_destroy(o));
		EXPECT_GT(5.0, now_s() - t0);
		EXPECT_EQ(0, sub_threads_alive(info.index)) TH_LOG("round %d", round);
	}
	pto_dev_close(dev);
}

/*
 * sub_threads: 0 is one SUB worker, PTO_SCHED_MAX_SUB_THREADS is the
 * most (each worker id up to PTO_SCHED_SUB_ID(max - 1) takes a task),
 * one more is -EINVAL before anything is taken, and so is reserved0. A
 * SUB task without fn is refused at submit, and so is a next-level
 * group naming a SUB worker.
 */
static int no_fn_dag(pto_orch *o, void *arg)
{
	static const struct pto_callable nofn = { .kernel_id = PTO_FUNC_NOOP };
	struct pto_task_args a;
	int ret;

	(void)arg;
	pto_args_init(&a);
	ret = pto_submit_sub(o, &nofn, &a, NULL);
	pto_args_fini(&a);
	return ret;
}

static int sub_group_next_level_dag(pto_orch *o, void *arg)
{
	struct pto_callable cb = { .fn = slow_fill, .user = arg };
	struct pto_task_args a, *ap[1] = { &a };
	int32_t id = PTO_SCHED_SUB_ID(0);
	int ret;

	pto_args_init(&a);
	ret = pto_submit_next_level_group(o, &cb, ap, 1, NULL, &id, NULL);
	pto_args_fini(&a);
	return ret;
}

TEST(sub_threads_bounds)
{
	struct pto_sched_config sc = { .threads = 1, .clusters = 1 };
	struct cb_state st = { .expect = 1 };
	struct pto_dev_info info;
	struct pto_dev *dev;
	pto_orch *o = (pto_orch *)1;
	pto_run *r = NULL;

	ASSERT_EQ(0, pto_dev_open(0, &dev));
	ASSERT_EQ(0, pto_dev_info(dev, &info));

	sc.sub_threads = PTO_SCHED_MAX_SUB_THREADS + 1;
	EXPECT_EQ(-EINVAL, pto_orch_create_device(dev, NULL, &sc, &o));
	EXPECT_EQ(NULL, o);
	sc.sub_threads = 0xffffffffu;
	EXPECT_EQ(-EINVAL, pto_orch_create_device(dev, NULL, &sc, &o));
	EXPECT_EQ(NULL, o);
	sc.sub_threads = 1;
	sc.reserved0 = 1;
	EXPECT_EQ(-EINVAL, pto_orch_create_device(dev, NULL, &sc, &o));
	EXPECT_EQ(NULL, o);
	sc.reserved0 = 0;
	EXPECT_EQ(0, sub_threads_alive(info.index));

	/* 0: one SUB worker, id PTO_SCHED_SUB_ID(0); no second one. */
	sc.sub_threads = 0;
	ASSERT_EQ(0, pto_orch_create_device(dev, NULL, &sc, &o));
	EXPECT_EQ(1, sub_threads_alive(info.index));
	st.add = 0;
	EXPECT_EQ(0, pto_orch_run(o, one_sub_dag, &st));
	EXPECT_EQ(PTO_SCHED_SUB_ID(0), st.worker_id);
	st.add = 1;
	EXPECT_EQ(-EINVAL, pto_run_start(o, one_sub_dag, &st, &r));
	EXPECT_NE(NULL, strstr(pto_orch_error(o), "no worker"))
		TH_LOG("%s", pto_orch_error(o));
	if (r)
		pto_run_release(r);
	r = NULL;
	EXPECT_EQ(-EINVAL, pto_run_start(o, no_fn_dag, NULL, &r));
	EXPECT_NE(NULL, strstr(pto_orch_error(o), "SUB workers run host callbacks"))
		TH_LOG("%s", pto_orch_error(o));
	if (r)
		pto_run_release(r);
	r = NULL;
	EXPECT_EQ(-EINVAL, pto_run_start(o, sub_group_next_level_dag, &st, &r));
	EXPECT_NE(NULL, strstr(pto_orch_error(o), "pto_submit_sub_group"))
		TH_LOG("%s", pto_orch_error(o));
	if (r)
		pto_run_release(r);
	EXPECT_EQ(1, st.calls);		/* the refused tasks never ran */
	EXPECT_EQ(0, pto_orch_close(o, 10000));
	EXPECT_EQ(0, pto_orch_destroy(o));

	/* The most: the last worker id takes a task. */
	sc.sub_threads = PTO_SCHED_MAX_SUB_THREADS;
	ASSERT_EQ(0, pto_orch_create_device(dev, NULL, &sc, &o));
	EXPECT_EQ(PTO_SCHED_MAX_SUB_THREADS, sub_threads_alive(info.index));
	st.add = PTO_SCHED_MAX_SUB_THREADS - 1;
	EXPECT_EQ(0, pto_orch_run(o, one_sub_dag, &st));
	EXPECT_EQ(PTO_SCHED_SUB_ID(PTO_SCHED_MAX_SUB_THREADS - 1), st.worker_id);
	EXPECT_EQ(2, st.calls);
	EXPECT_EQ(0, pto_orch_close(o, 10000));
	EXPECT_EQ(0, pto_orch_destroy(o));
	EXPECT_EQ(0, sub_threads_alive(info.index));
	pto_dev_close(dev);
}

/*
 * pto_orch_abort() with one callback running and three SUB tasks queued
 * behind it on the one SUB worker: the running callback is not
 * interrupted (the abort waits for it, and it ends with its own result),
 * the queued ones fail without running, and the run's wait is
 * -ECANCELED. A callback's own waits on its orchestrator are -EDEADLK.
 */
struct abort_ctx {
	pto_orch *o;
	_Atomic int started, release, ran;
	int deadlk;		/* the callback's pto_orch_close() result */
};

static int blocking_cb(struct pto_task_ctx *ctx)
{
	struct abort_ctx *ac = ctx->user;
	int i;

	if (atomic_fetch_add(&ac->started, 1) == 0) {
		ac->deadlk = pto_orch_close(ac->o, 0);
		for (i = 0; i < 20000 && !atomic_load(&ac->release); i++)
			usleep(1000);
	}
	atomic_fetch_add(&ac->ran, 1);
	return 0;
}

static int blocking_dag(pto_orch *o, void *arg)
{
	struct pto_callable cb = { .fn = blocking_cb, .user = arg };
	struct pto_task_args a;
	int i, ret = 0;

	pto_args_init(&a);
	for (i = 0; !ret && i < 4; i++)
		ret = pto_submit_sub(o, &cb, &a, NULL);
	pto_args_fini(&a);
	return ret;
}

static void *release_later(void *arg)
{
	struct abort_ctx *ac = arg;

	usleep(200000);
	atomic_store(&ac->release, 1);
	return NULL;
}

TEST(abort_fails_queued_sub_tasks_and_waits_for_a_running_one)
{
	struct pto_sched_config sc = { .threads = 1, .clusters = 1 };
	struct abort_ctx ac = { 0 };
	struct pto_dev *dev;
	pthread_t th;
	pto_run *r;
	int i;

	ASSERT_EQ(0, pto_dev_open(0, &dev));
	ASSERT_EQ(0, pto_orch_create_device(dev, NULL, &sc, &ac.o));
	ASSERT_EQ(0, pto_run_start(ac.o, blocking_dag, &ac, &r));
	for (i = 0; i < 10000 && !atomic_load(&ac.started); i++)
		usleep(1000);
	ASSERT_EQ(1, atomic_load(&ac.started));
	ASSERT_EQ(0, pthread_create(&th, NULL, release_later, &ac));
	EXPECT_EQ(0, pto_orch_abort(ac.o, 20000));
	EXPECT_EQ(1, atomic_load(&ac.release)) TH_LOG("the abort did not wait");
	pthread_join(th, NULL);
	EXPECT_EQ(-ECANCELED, pto_run_wait(r, 20000));
	EXPECT_NE(NULL, strstr(pto_run_error(r), "orchestrator aborted"))
		TH_LOG("%s", pto_run_error(r));
	pto_run_release(r);
	EXPECT_EQ(1, atomic_load(&ac.ran));
	EXPECT_EQ(1, atomic_load(&ac.started));
	EXPECT_EQ(-EDEADLK, ac.deadlk);
	EXPECT_EQ(0, pto_orch_close(ac.o, 10000));
	EXPECT_EQ(0, pto_orch_destroy(ac.o));
	pto_dev_close(dev);
}

TEST_HARNESS_MAIN
