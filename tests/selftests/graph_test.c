// SPDX-License-Identifier: GPL-2.0
/*
 * The resident route through the raw ABI and libpto's graph calls: a
 * graph computes its values on the cores; every bad-graph row is refused
 * with -EINVAL naming its task and field before any core runs a task; a
 * process killed mid-graph leaves the device to the next one at once.
 */
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <linux/pto_dump.h>
#include <pto/graph.h>
#include <pto/pto.h>
#include "kselftest_harness.h"
#include "pto_core_util.h"
#include "pto_selftest.h"

#define N 4096

/* A 1-D int32 tensor of @n elements at @addr. */
static struct pto_tensor_desc vec(uint64_t addr, uint32_t n)
{
	struct pto_tensor_desc t;

	memset(&t, 0, sizeof(t));
	t.addr = addr;
	t.dtype = PTO_DTYPE_I32;
	t.rank = 1;
	t.shape[0] = n;
	t.strides[0] = 1;
	return t;
}

/* f = (x + 1) * (x + 2) on 4 tasks, x = a + b, into @bo (int32). */
static int diamond(pto_hbg *g, uint64_t base, uint32_t n)
{
	static const uint32_t add[3] = { PTO_FUNC_ADD };
	static const uint32_t adds0[3] = { 0, PTO_FUNC_ADD_SCALAR };
	static const uint32_t adds1[3] = { 0, 0, PTO_FUNC_ADD_SCALAR };
	static const uint32_t mul[3] = { PTO_FUNC_MUL };
	struct pto_tensor_desc a = vec(base, n), b = vec(base + 4 * n, n);
	struct pto_tensor_desc c = vec(base + 8 * n, n);
	struct pto_tensor_desc d = vec(base + 12 * n, n);
	struct pto_tensor_desc e = vec(base + 16 * n, n);
	struct pto_tensor_desc f = vec(base + 20 * n, n);
	uint32_t t0, t1, t2, t3;
	int ret = 0;

	ret |= pto_hbg_add_task(g, PTO_GRAPH_AIC, add, &t0);
	ret |= pto_hbg_set_tensor(g, t0, PTO_ARG_A, &a, PTO_GRAPH_ROLE_IN, 0);
	ret |= pto_hbg_set_tensor(g, t0, PTO_ARG_B, &b, PTO_GRAPH_ROLE_IN, 0);
	ret |= pto_hbg_set_tensor(g, t0, PTO_ARG_OUT, &c, PTO_GRAPH_ROLE_OUT, 0);
	ret |= pto_hbg_add_task(g, PTO_GRAPH_AIV0, adds0, &t1);
	ret |= pto_hbg_set_tensor(g, t1, PTO_ARG_A, &c, PTO_GRAPH_ROLE_IN, 0);
	ret |= pto_hbg_set_tensor(g, t1, PTO_ARG_OUT, &d, PTO_GRAPH_ROLE_OUT, 0);
	ret |= pto_hbg_set_scalar(g, t1, 0, 1);
	ret |= pto_hbg_add_task(g, PTO_GRAPH_AIV1, adds1, &t2);
	ret |= pto_hbg_set_tensor(g, t2, PTO_ARG_A, &c, PTO_GRAPH_ROLE_IN, 0);
	ret |= pto_hbg_set_tensor(g, t2, PTO_ARG_OUT, &e, PTO_GRAPH_ROLE_OUT, 0);
	ret |= pto_hbg_set_scalar(g, t2, 0, 2);
	ret |= pto_hbg_add_task(g, PTO_GRAPH_AIC, mul, &t3);
	ret |= pto_hbg_set_tensor(g, t3, PTO_ARG_A, &d, PTO_GRAPH_ROLE_IN, 0);
	ret |= pto_hbg_set_tensor(g, t3, PTO_ARG_B, &e, PTO_GRAPH_ROLE_IN, 0);
	ret |= pto_hbg_set_tensor(g, t3, PTO_ARG_OUT, &f, PTO_GRAPH_ROLE_OUT, 0);
	ret |= pto_hbg_add_edge(g, t0, t1);
	ret |= pto_hbg_add_edge(g, t0, t2);
	ret |= pto_hbg_add_edge(g, t1, t3);
	ret |= pto_hbg_add_edge(g, t2, t3);
	return ret ? -EINVAL : 0;
}

/* Run the diamond on @dev (every cluster) and check f value by value. */
static void run_diamond(struct __test_metadata *_metadata,
			struct pto_dev *dev)
{
	struct pto_hbg_stats st;
	struct pto_bo *bo;
	int32_t *v;
	pto_hbg *g;
	void *map;
	int i;

	ASSERT_EQ(0, pto_bo_alloc(dev, 24 * N, 0, &bo));
	ASSERT_EQ(0, pto_bo_map(bo, &map));
	v = map;
	for (i = 0; i < N; i++) {
		v[i] = 2 + i % 7;
		v[N + i] = 3;
	}
	ASSERT_EQ(0, pto_hbg_create(dev, &g));
	ASSERT_EQ(0, diamond(g, pto_bo_dev_addr(bo), N));
	ASSERT_EQ(0, pto_hbg_run(g, 0, 10000, &st))
		TH_LOG("bad task %u field %u, err task %u status %u",
		       st.bad_task, st.bad_field, st.err_task, st.err_status);
	EXPECT_EQ(4, st.completed);
	EXPECT_EQ(4, st.tasks);
	EXPECT_EQ(0, st.errors);
	for (i = 0; i < N; i++) {
		int32_t x = 2 + i % 7 + 3;

		ASSERT_EQ((x + 1) * (x + 2), v[5 * N + i]) TH_LOG("f[%d]", i);
	}
	for (i = 0; i < 4; i++) {
		uint64_t s, e;
		uint32_t core;

		ASSERT_EQ(0, pto_hbg_task_times(g, i, &s, &e, &core));
		EXPECT_NE(0, s);
		EXPECT_LE(s, e);
	}
	pto_hbg_destroy(g);
	pto_bo_free(bo);
}

TEST(graph_diamond_values)
{
	struct pto_dev *dev;

	ASSERT_EQ(0, pto_dev_open(0, &dev));
	run_diamond(_metadata, dev);
	pto_dev_close(dev);
}

/*
 * The diamond through each core's emulated write-back line cache: with 16
 * lines most of a tensor's lines are evicted mid-task, and the last ones
 * reach memory only at the flush before each subtask's completion, which
 * the successors' cores and this process read after.
 */
TEST(graph_diamond_values_line_cache)
{
	struct pto_dev *dev;

	if (access(PTO_PARAMS "mock_lcache_lines", W_OK))
		SKIP(return, "needs root and pto's mock_lcache_lines");
	ASSERT_EQ(0, st_param_set("mock_lcache_lines", "16"));
	ASSERT_EQ(0, pto_dev_open(0, &dev));
	run_diamond(_metadata, dev);
	pto_dev_close(dev);
}

/* mock_lcache_lines: 0 (off) or a power of two up to 1024, else EINVAL. */
TEST(graph_line_cache_lines_checked)
{
	static const char *const bad[] = { "3", "2048", "1025", "-1", "x" };
	static const char *const good[] = { "1", "1024", "0" };
	char buf[16];
	unsigned int i;

	if (access(PTO_PARAMS "mock_lcache_lines", W_OK))
		SKIP(return, "needs root and pto's mock_lcache_lines");
	ASSERT_EQ(0, st_param_set("mock_lcache_lines", "16"));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		EXPECT_EQ(-1, st_param_set("mock_lcache_lines", bad[i]))
			TH_LOG("%s", bad[i]);
		EXPECT_EQ(EINVAL, errno) TH_LOG("%s", bad[i]);
	}
	ASSERT_EQ(0, st_read_line(PTO_PARAMS "mock_lcache_lines", buf,
				  sizeof(buf)));
	EXPECT_STREQ("16", buf);
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		EXPECT_EQ(0, st_param_set("mock_lcache_lines", good[i]))
			TH_LOG("%s", good[i]);
}

/* ---- bad graphs through the raw ioctl --------------------------------- */

struct raw {
	struct pto_graph_hdr h;
	struct pto_graph_task t[2];
	uint32_t e[2];
};

/* Two noop tasks, 0 -> 1, on the AIC and the first AIV. */
static void raw_good(struct raw *r)
{
	memset(r, 0, sizeof(*r));
	r->h.magic = PTO_GRAPH_MAGIC;
	r->h.version = PTO_GRAPH_VERSION;
	r->h.task_count = 2;
	r->h.edge_count = 1;
	r->h.size = sizeof(r->h) + 2 * sizeof(r->t[0]) + 8;
	r->h.task_size = sizeof(r->t[0]);
	r->t[0].active_mask = PTO_GRAPH_AIC;
	r->t[0].succ_count = 1;
	r->t[1].active_mask = PTO_GRAPH_AIV0;
	r->t[1].succ_start = 1;
	r->t[1].fanin = 1;
	r->e[0] = 1;
}

FIXTURE(graph_raw) {
	int fd;
	struct pto_dev *dev;
	struct core_launch *l;
	struct pto_bo *bo;
	struct raw *img;
	uint64_t cores[PTO_CORE_MASK_WORDS];
};

FIXTURE_SETUP(graph_raw)
{
	void *map;

	memset(self->cores, 0, sizeof(self->cores));
	ASSERT_EQ(0, pto_dev_open(0, &self->dev));
	self->fd = pto_dev_fd(self->dev);
	ASSERT_EQ(0, pto_bo_alloc(self->dev, 4096, 0, &self->bo));
	ASSERT_EQ(0, pto_bo_map(self->bo, &map));
	self->img = map;
	ASSERT_EQ(0, core_cluster_acquire(self->dev, 1));
	st_cluster_add(0, self->cores);
	ASSERT_EQ(0, core_launch_cores(self->dev, self->cores, &self->l));
}

FIXTURE_TEARDOWN(graph_raw)
{
	core_launch_free(self->l);
	core_cluster_release(self->dev, 1);
	pto_bo_free(self->bo);
	pto_dev_close(self->dev);
}

static uint64_t cluster_tasks(struct pto_dev *dev)
{
	struct pto_core_stats s;
	uint64_t n = 0;
	unsigned int i;

	for (i = 0; i < PTO_CORES_PER_CLUSTER; i++) {
		memset(&s, 0, sizeof(s));
		s.core = i;
		if (!ioctl(pto_dev_fd(dev), PTO_IOCTL_CORE_STATS, &s))
			n += s.tasks;
	}
	return n;
}

/* Launch @r; returns the ioctl's result, *@la its reply. */
static int raw_launch(FIXTURE_DATA(graph_raw) *self, uint64_t size,
		      struct pto_graph_launch *la)
{
	memset(la, 0, sizeof(*la));
	la->graph_addr = pto_bo_dev_addr(self->bo);
	la->graph_size = size;
	la->clusters = 1;
	return pto_sioctl(self->fd, PTO_IOCTL_GRAPH_LAUNCH, la);
}

static void expect_refused(struct __test_metadata *_metadata,
			   FIXTURE_DATA(graph_raw) *self, uint64_t size,
			   uint32_t task, uint32_t field)
{
	uint64_t before = cluster_tasks(self->dev);
	struct pto_graph_launch la;

	EXPECT_EQ(-EINVAL, raw_launch(self, size, &la));
	EXPECT_EQ(task, la.bad_task);
	EXPECT_EQ(field, la.bad_field);
	usleep(20000);
	EXPECT_EQ(before, cluster_tasks(self->dev));
}

TEST_F(graph_raw, good_runs)
{
	struct pto_graph_launch la;
	struct pto_graph_wait w;

	raw_good(self->img);
	ASSERT_EQ(0, raw_launch(self, sizeof(struct raw), &la));
	memset(&w, 0, sizeof(w));
	w.handle = la.handle;
	w.timeout_ns = pto_now_ns() + 10000000000ull;
	ASSERT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_GRAPH_WAIT, &w));
	EXPECT_EQ(2, w.completed);
	EXPECT_EQ(PTO_GRAPH_TASK_NONE, w.err_task);
	EXPECT_NE(0, self->img->t[1].end_ns);
	/* A single-AIV task runs on either AIV of the cluster. */
	EXPECT_TRUE(self->img->t[1].core == 1 || self->img->t[1].core == 2);
	EXPECT_EQ(-ENOENT, pto_sioctl(self->fd, PTO_IOCTL_GRAPH_WAIT, &w));
}

/* UINT64_MAX is a deadline past KTIME_MAX: it waits, it does not time out. */
TEST_F(graph_raw, wait_without_deadline)
{
	struct pto_graph_launch la;
	struct pto_graph_wait w;

	raw_good(self->img);
	/* Still running when the wait starts: task 0 spins 200 ms. */
	self->img->t[0].func_id[0] = PTO_FUNC_SPIN_NS;
	self->img->t[0].scalar[0] = 200000000;
	ASSERT_EQ(0, raw_launch(self, sizeof(struct raw), &la));
	memset(&w, 0, sizeof(w));
	w.handle = la.handle;
	w.timeout_ns = UINT64_MAX;
	ASSERT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_GRAPH_WAIT, &w));
	EXPECT_EQ(2, w.completed);
	EXPECT_EQ(PTO_GRAPH_TASK_NONE, w.err_task);
}

/* Bind lane 0 of @fd at @level: DUMP_BIND's result. */
static int graph_bind(int fd, uint32_t level)
{
	struct pto_dump_bind b = { .lane = 0, .level = level };

	return pto_sioctl(fd, PTO_IOCTL_DUMP_BIND, &b);
}

static void graph_unbind(int fd)
{
	struct pto_dump_lane l = { .lane = 0 };

	pto_sioctl(fd, PTO_IOCTL_DUMP_UNBIND, &l);
}

/* No capture on this route: a lane bound above OFF refuses the launch. */
TEST_F(graph_raw, dump_bound_then_launch_refused)
{
	struct pto_graph_launch la;
	struct pto_graph_wait w;

	raw_good(self->img);
	ASSERT_EQ(0, graph_bind(self->fd, PTO_DUMP_FULL));
	EXPECT_EQ(-EOPNOTSUPP, raw_launch(self, sizeof(struct raw), &la));
	graph_unbind(self->fd);
	/* OFF captures nothing: the graph runs. */
	ASSERT_EQ(0, graph_bind(self->fd, PTO_DUMP_OFF));
	ASSERT_EQ(0, raw_launch(self, sizeof(struct raw), &la));
	memset(&w, 0, sizeof(w));
	w.handle = la.handle;
	w.timeout_ns = pto_now_ns() + 10000000000ull;
	EXPECT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_GRAPH_WAIT, &w));
	graph_unbind(self->fd);
}

/* The other order: a bind above OFF while the graph runs is refused. */
TEST_F(graph_raw, launch_then_dump_bind_refused)
{
	struct pto_graph_launch la;
	struct pto_graph_wait w;

	raw_good(self->img);
	self->img->t[0].func_id[0] = PTO_FUNC_SPIN_NS;
	self->img->t[0].scalar[0] = 200000000;
	ASSERT_EQ(0, raw_launch(self, sizeof(struct raw), &la));
	EXPECT_EQ(-EOPNOTSUPP, graph_bind(self->fd, PTO_DUMP_PARTIAL));
	memset(&w, 0, sizeof(w));
	w.handle = la.handle;
	w.timeout_ns = pto_now_ns() + 10000000000ull;
	EXPECT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_GRAPH_WAIT, &w));
	/* Waited: the file runs no graph, the bind goes through. */
	EXPECT_EQ(0, graph_bind(self->fd, PTO_DUMP_FULL));
	graph_unbind(self->fd);
}

TEST_F(graph_raw, bad_cycle)
{
	raw_good(self->img);
	self->img->h.edge_count = 2;
	self->img->t[1].succ_count = 1;
	self->img->t[0].fanin = 1;
	self->img->e[1] = 0;
	expect_refused(_metadata, self, sizeof(struct raw), 0,
		       PTO_GRAPH_FIELD_CYCLE);
}

TEST_F(graph_raw, bad_fanin)
{
	raw_good(self->img);
	self->img->t[1].fanin = 2;
	expect_refused(_metadata, self, sizeof(struct raw), 1,
		       PTO_GRAPH_FIELD_FANIN);
}

TEST_F(graph_raw, bad_truncated_upload)
{
	raw_good(self->img);
	expect_refused(_metadata, self, sizeof(struct raw) - 8,
		       PTO_GRAPH_TASK_NONE, PTO_GRAPH_FIELD_TRUNCATED);
}

TEST_F(graph_raw, bad_func_id)
{
	raw_good(self->img);
	self->img->t[1].func_id[1] = PTO_FUNC_COUNT;
	expect_refused(_metadata, self, sizeof(struct raw), 1,
		       PTO_GRAPH_FIELD_FUNC_ID);
}

TEST_F(graph_raw, bad_mask_across_clusters)
{
	raw_good(self->img);
	self->img->t[0].active_mask = 1u << 3;
	expect_refused(_metadata, self, sizeof(struct raw), 0,
		       PTO_GRAPH_FIELD_ACTIVE_MASK);
}

/* Block 2 of an SPMD task of two blocks. */
TEST_F(graph_raw, bad_block_range)
{
	raw_good(self->img);
	self->img->t[1].block_base = 2;
	self->img->t[1].block_num = 2;
	expect_refused(_metadata, self, sizeof(struct raw), 1,
		       PTO_GRAPH_FIELD_BLOCK);
}

/* Another file's buffer: a valid GM address, not the caller's. */
TEST_F(graph_raw, bad_addr_other_file)
{
	struct pto_tensor_desc t;
	struct pto_dev *other;
	struct pto_bo *obo;

	ASSERT_EQ(0, pto_dev_open(0, &other));
	ASSERT_EQ(0, pto_bo_alloc(other, 4096, 0, &obo));
	raw_good(self->img);
	self->img->t[1].func_id[1] = PTO_FUNC_FILL;
	self->img->t[1].scalar[0] = 1;
	t = vec(pto_bo_dev_addr(obo), 16);
	self->img->t[1].t[PTO_ARG_OUT].t = t;
	self->img->t[1].t[PTO_ARG_OUT].role = PTO_GRAPH_ROLE_OUT;
	expect_refused(_metadata, self, sizeof(struct raw), 1,
		       PTO_GRAPH_FIELD_TENSOR_ADDR);
	pto_bo_free(obo);
	pto_dev_close(other);
}

/* ---- SIGKILL mid-graph --------------------------------------------- */

#define SPIN_TASKS 4000

/* The child: a long graph of 2 ms spins on every cluster, forever. */
static void child_run(int ready_fd)
{
	static const uint32_t spin[3][3] = {
		{ PTO_FUNC_SPIN_NS }, { 0, PTO_FUNC_SPIN_NS },
		{ 0, 0, PTO_FUNC_SPIN_NS },
	};
	struct pto_dev *dev;
	pto_hbg *g;
	char c = 1;
	uint32_t i, t;

	if (pto_dev_open(0, &dev) || pto_hbg_create(dev, &g))
		_exit(2);
	for (i = 0; i < SPIN_TASKS; i++)
		if (pto_hbg_add_task(g, 1u << (i % 3), spin[i % 3], &t) ||
		    pto_hbg_set_scalar(g, t, 0, 2000000))
			_exit(3);
	if (write(ready_fd, &c, 1) != 1)
		_exit(4);
	while (!pto_hbg_run(g, 0, 60000, NULL))
		;
	_exit(5);
}

TEST(graph_sigkill_mid_graph_next_runs_at_once)
{
	struct pto_dev *dev;
	int round;

	for (round = 0; round < 3; round++) {
		/* 300 ms: the graph is running when the signal comes. */
		ASSERT_EQ(0, st_kill_mid_run(child_run, 300000))
			TH_LOG("round %d: the child was not killed mid-graph",
			       round);
		/* At once: the same clusters, a graph that checks values. */
		ASSERT_EQ(0, pto_dev_open(0, &dev));
		run_diamond(_metadata, dev);
		pto_dev_close(dev);
	}
}

/* ---- a core that does not answer ------------------------------------- */

static uint32_t core_state(struct pto_dev *dev, unsigned int core)
{
	struct pto_core_stats s;

	memset(&s, 0, sizeof(s));
	s.core = core;
	if (ioctl(pto_dev_fd(dev), PTO_IOCTL_CORE_STATS, &s))
		return UINT32_MAX;
	return s.state;
}

/*
 * The graph completes; its retirement quarantines the silent AIV (the
 * run says -EIO); the reset recovers it and the next graph runs.
 */
TEST(graph_silent_core_is_quarantined)
{
	static const uint32_t none[3];
	struct pto_dev_info info;
	struct pto_hbg_stats st;
	struct pto_dev *dev;
	unsigned int c, victim;
	uint32_t i, t;
	pto_hbg *g;

	ASSERT_EQ(0, st_param_set("retire_timeout_ms", "300"));
	ASSERT_EQ(0, pto_dev_open(0, &dev));
	ASSERT_EQ(0, pto_dev_info(dev, &info));
	c = info.clusters - 1;
	victim = PTO_CORES_PER_CLUSTER * c + 1;
	ASSERT_EQ(0, pto_hbg_create(dev, &g));
	for (i = 0; i < 30; i++)
		ASSERT_EQ(0, pto_hbg_add_task(g, 1u << (i % 3), none, &t));
	ASSERT_EQ(0, st_inject_stall(0, victim));
	EXPECT_EQ(-EIO, pto_hbg_run(g, 1ull << c, 10000, &st));
	EXPECT_EQ(30, st.completed);
	EXPECT_EQ(PTO_GRAPH_TASK_NONE, st.err_task);
	EXPECT_EQ(PTO_CORE_QUARANTINED, core_state(dev, victim));
	EXPECT_EQ(PTO_CORE_UNLAUNCHED, core_state(dev, victim - 1));
	pto_hbg_destroy(g);

	ASSERT_EQ(0, st_write_file(PTO_DBG0 "reset", "1"));
	EXPECT_EQ(PTO_CORE_UNLAUNCHED, core_state(dev, victim));
	run_diamond(_metadata, dev);
	pto_dev_close(dev);
}

TEST_HARNESS_MAIN
