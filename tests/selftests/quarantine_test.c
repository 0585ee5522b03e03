// SPDX-License-Identifier: GPL-2.0
/*
 * Retirement's deadline and quarantine (debugfs inject_stall): a silent core
 * is left unreleased, logged, refused for launch and mmap while its peers
 * retire and stay usable; the debugfs reset recovers it. Other files' faults,
 * mmap and CORE_STATS do not wait for a release waiting out the deadline, a
 * waiter behind core_lock still dies of SIGKILL, and unload frees what the
 * core holds. Needs root.
 */
#include <fcntl.h>
#include <stdio.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <pto/orch.h>
#include <pto/sched.h>
#include "kselftest_harness.h"
#include "pto_selftest.h"
#include "pto_core_util.h"

#define DBG PTO_DBG0
#define PARAM PTO_PARAMS "retire_timeout_ms"

/*
 * Core @core's state as the CORE_STATS ioctl reports it (a PTO_CORE_*),
 * or -1. Not st_core_state(): that one reads the debugfs cores file.
 */
static int core_state_ioctl(struct pto_dev *d, unsigned int core)
{
	struct pto_core_stats st;

	return core_stats(d, core, &st) ? -1 : (int)st.state;
}

TEST(stalled_core_is_quarantined_and_reset)
{
	uint64_t cores[PTO_CORE_MASK_WORDS] = { 0 };
	uint64_t peers[PTO_CORE_MASK_WORDS] = { 0 };
	char num[16], *log;
	struct pto_dev_info info;
	struct pto_core_launch cl = { 0 };
	struct core_launch *l;
	struct pto_bo *bo;
	struct pto_dev *d;
	unsigned int c, victim, i;
	uint64_t t0, ms;
	void *m;

	if (access(DBG "inject_stall", W_OK) || access(PARAM, W_OK))
		SKIP(return, "needs root, debugfs and pto's parameters");
	ASSERT_EQ(0, pto_dev_open(0, &d));
	pto_dev_info(d, &info);
	c = info.clusters - 1;
	victim = PTO_CORES_PER_CLUSTER * c + 1;
	st_cluster_cores(c, cores);
	memcpy(peers, cores, sizeof(peers));
	peers[victim / 64] &= ~(1ull << (victim % 64));
	ASSERT_EQ(0, st_param_set("retire_timeout_ms", "300"));

	ASSERT_EQ(0, core_cluster_acquire(d, 1ull << c));
	ASSERT_EQ(0, core_launch_cores(d, cores, &l));
	ASSERT_EQ(0, pto_noop_all(l));
	ASSERT_EQ(0, st_inject_stall(0, victim));
	t0 = pto_now_ns();
	ASSERT_EQ(0, core_cluster_release(d, 1ull << c));
	ms = (pto_now_ns() - t0) / 1000000;
	printf("# release with one silent core took %llu ms (deadline 300)\n",
	       (unsigned long long)ms);
	fflush(stdout);
	EXPECT_LE(250, ms);
	EXPECT_GT(10000, ms);
	core_launch_free(l);
	for (i = PTO_CORES_PER_CLUSTER * c;
	     i < PTO_CORES_PER_CLUSTER * (c + 1); i++) {
		EXPECT_EQ(i == victim ? PTO_CORE_QUARANTINED :
			  PTO_CORE_UNLAUNCHED, core_state_ioctl(d, i));
	}

	/* The kernel log names it. */
	log = calloc(1, 1 << 20);
	ASSERT_NE(NULL, log);
	ASSERT_LT(0, klogctl(3, log, (1 << 20) - 1));
	snprintf(num, sizeof(num), "core %u not", victim);
	EXPECT_NE(NULL, strstr(log, num));
	free(log);

	/* Refused for launch and mmap; its peers work. */
	ASSERT_EQ(0, core_cluster_acquire(d, 1ull << c));
	ASSERT_EQ(0, core_launch_cores(d, peers, &l));
	ASSERT_EQ(0, pto_noop_all(l));
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
	ASSERT_EQ(0, core_cluster_release(d, 1ull << c));
	core_launch_free(l);

	/* The reset recovers it: the whole cluster launches and runs. */
	ASSERT_EQ(0, st_write_file(DBG "reset", "1"));
	EXPECT_EQ(PTO_CORE_UNLAUNCHED, core_state_ioctl(d, victim));
	ASSERT_EQ(0, core_cluster_acquire(d, 1ull << c));
	ASSERT_EQ(0, core_launch_cores(d, cores, &l));
	EXPECT_EQ(0, pto_noop_all(l));
	ASSERT_EQ(0, core_cluster_release(d, 1ull << c));
	core_launch_free(l);
	pto_dev_close(d);
}

struct release_arg {
	struct pto_dev *dev;
	uint64_t clusters;
	int ret;
};

static void *release_thread(void *p)
{
	struct release_arg *a = p;

	a->ret = core_cluster_release(a->dev, a->clusters);
	return NULL;
}

/*
 * Stall core 0 (cluster 0, launched by @a), release cluster 0 on thread
 * @t (@ra), and return once the release claimed the core (REQUESTED, read
 * through @seen): from then on it waits out the driver's deadline.
 */
static void release_stalled_cluster0(struct __test_metadata *_metadata,
				     struct pto_dev *a, struct pto_dev *seen,
				     struct release_arg *ra, pthread_t *t)
{
	struct pto_retire_status rst;
	int ret;

	ASSERT_EQ(0, st_inject_stall(0, 0));
	ra->dev = a;
	ra->clusters = 1;
	ASSERT_EQ(0, pthread_create(t, NULL, release_thread, ra));
	st_wait_until((ret = core_retire_status(seen, 0, &rst)) ||
		      (rst.bits & PTO_RETIRE_BIT_REQUESTED));
	ASSERT_EQ(0, ret);
	ASSERT_NE(0, rst.bits & PTO_RETIRE_BIT_REQUESTED);
}

/*
 * The end of release_stalled_cluster0(): join the release, then the
 * silent core is quarantined (read through @seen), and @a's reset
 * recovers it.
 */
static void end_stalled_release(struct __test_metadata *_metadata,
				struct pto_dev *a, struct pto_dev *seen,
				struct release_arg *ra, pthread_t t,
				struct core_launch *la, const uint64_t *ca)
{
	struct pto_core_reset rs;

	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(0, ra->ret);
	core_launch_free(la);
	EXPECT_EQ(PTO_CORE_QUARANTINED, core_state_ioctl(seen, 0));
	ASSERT_EQ(0, core_reset(a, ca, &rs));
	EXPECT_EQ(1, rs.recovered);
	EXPECT_EQ(PTO_CORE_UNLAUNCHED, core_state_ioctl(seen, 0));
}

/*
 * File a's release waits out a silent core's retirement deadline (10 s);
 * meanwhile file b's window faults, mmap and CORE_STATS complete (none of
 * them waits for another file's retirement). The order is checked, not a
 * time: b starts once the release claimed the silent core (REQUESTED), and
 * when b is done the core must not be quarantined yet (the release
 * quarantines it at the deadline).
 */
TEST(window_faults_not_behind_a_release)
{
	uint64_t ca[PTO_CORE_MASK_WORDS] = { 1 }, cb[PTO_CORE_MASK_WORDS];
	struct pto_payload noop = { .func_id = PTO_FUNC_NOOP };
	struct release_arg ra = { 0 };
	struct pto_dev_info info;
	struct pto_core_stats st;
	struct core_launch *la, *lb;
	struct pto_dev *a, *b;
	volatile uint32_t *w;
	pthread_t t;
	uint64_t t0, ms;
	void *m;

	if (access(DBG "inject_stall", W_OK) || access(PARAM, W_OK))
		SKIP(return, "needs root, debugfs and pto's parameters");
	ASSERT_EQ(0, pto_dev_open(0, &a));
	pto_dev_info(a, &info);
	if (info.clusters < 2) {
		pto_dev_close(a);
		SKIP(return, "needs two clusters");
	}
	ASSERT_EQ(0, pto_dev_open(0, &b));
	ASSERT_EQ(0, st_param_set("retire_timeout_ms", "10000"));
	ASSERT_EQ(0, core_cluster_acquire(a, 1));
	ASSERT_EQ(0, core_launch_cores(a, ca, &la));
	ASSERT_EQ(0, core_cluster_acquire(b, 2));
	memset(cb, 0, sizeof(cb));
	cb[0] = 1ull << 3;
	ASSERT_EQ(0, core_launch_cores(b, cb, &lb));
	/* The release is in its deadline wait once it claimed the core. */
	release_stalled_cluster0(_metadata, a, b, &ra, &t);
	t0 = pto_now_ns();
	m = mmap(NULL, info.window_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 pto_dev_fd(b), PTO_WINDOW_OFFSET(3, info.window_size));
	ASSERT_NE(MAP_FAILED, m);
	w = m;
	EXPECT_EQ(0, w[PTO_REG_COND / 4]);	/* a fault */
	EXPECT_EQ(PTO_TASK_OK, pto_run1(lb, &lb->core[0], &noop));
	EXPECT_EQ(0, core_stats(b, 3, &st));
	EXPECT_EQ(PTO_COND_FIN | 1, w[PTO_REG_COND / 4]);
	ms = (pto_now_ns() - t0) / 1000000;
	printf("# b's mmap, fault, task and stats took %llu ms during a's release\n",
	       (unsigned long long)ms);
	fflush(stdout);
	/* Done before the release's deadline passed. */
	EXPECT_NE(PTO_CORE_QUARANTINED, core_state_ioctl(b, 0))
		TH_LOG("b's calls ended after a's release quarantined core 0 (%llu ms)",
		       (unsigned long long)ms);
	munmap(m, info.window_size);
	end_stalled_release(_metadata, a, b, &ra, t, la, ca);
	ASSERT_EQ(0, core_cluster_release(b, 2));
	core_launch_free(lb);
	pto_dev_close(a);
	pto_dev_close(b);
}

static int orch_one_noop(pto_orch *o, void *arg)
{
	static const struct pto_callable noop = { .kernel_id = PTO_FUNC_NOOP };
	struct pto_task_args a;
	int err;

	pto_args_init(&a);
	err = pto_submit_next_level(o, &noop, &a, NULL, pto_on_kind(PTO_WORKER_AIV),
				    NULL);
	pto_args_fini(&a);
	return err;
}

/*
 * pto_orch_close()'s budget covers stopping too: a scheduler thread
 * retiring a silent core waits for the driver's deadline (10 s here), but
 * a close with a 300 ms budget returns -ETIMEDOUT before the deadline (the stop gets at least 1 s:
 * ORCH_STOP_MIN_MS), every run done, new ones refused, the core not yet
 * quarantined - an order, not a time (Documentation/testing.md, "Tests
 * and time"); a retry that outlasts the deadline succeeds, with the core
 * quarantined in the statistics and its peers retired.
 */
TEST(orch_close_budget_bounds_a_silent_cores_retirement)
{
	struct pto_sched_config sc = { .clusters = 1 };
	unsigned int victim = 1;	/* cluster 0's first AIV */
	struct pto_sched_stats st;
	struct pto_dev *d;
	uint64_t t0, ms;
	pto_orch *o;
	int err;

	if (access(DBG "inject_stall", W_OK) || access(PARAM, W_OK))
		SKIP(return, "needs root, debugfs and pto's parameters");
	ASSERT_EQ(0, st_param_set("retire_timeout_ms", "10000"));
	ASSERT_EQ(0, pto_dev_open(0, &d));
	ASSERT_EQ(0, pto_orch_create_device(d, NULL, &sc, &o));
	ASSERT_EQ(0, pto_orch_run(o, orch_one_noop, NULL));
	ASSERT_EQ(0, st_inject_stall(0, victim));

	t0 = pto_now_ns();
	err = pto_orch_close(o, 300);
	ms = (pto_now_ns() - t0) / 1000000;
	printf("# close(300) with one silent core took %llu ms (deadline 10000)\n",
	       (unsigned long long)ms);
	fflush(stdout);
	ASSERT_EQ(-ETIMEDOUT, err);	/* 0: closed, the rest does not apply */
	/* Returned before the driver's deadline: the core still retiring. */
	EXPECT_NE(PTO_CORE_QUARANTINED, core_state_ioctl(d, victim));
	EXPECT_EQ(-ESHUTDOWN, pto_orch_run(o, orch_one_noop, NULL));
	EXPECT_EQ(-EBUSY, pto_orch_destroy(o));

	ASSERT_EQ(0, pto_orch_close(o, 60000));
	ms = (pto_now_ns() - t0) / 1000000;
	EXPECT_LE(9900, ms);	/* the retry waited for the deadline */
	ASSERT_EQ(0, pto_orch_sched_stats(o, &st));
	EXPECT_EQ(1, st.quarantined);
	EXPECT_EQ(PTO_CORES_PER_CLUSTER - 1, st.retired);
	EXPECT_EQ(PTO_CORE_QUARANTINED, core_state_ioctl(d, victim));
	EXPECT_EQ(0, pto_orch_destroy(o));
	pto_dev_close(d);
}

static int orch_one_aic_noop(pto_orch *o, void *arg)
{
	static const struct pto_callable noop = { .kernel_id = PTO_FUNC_NOOP };
	struct pto_task_args a;
	int err;

	(void)arg;
	pto_args_init(&a);
	err = pto_submit_next_level(o, &noop, &a, NULL, pto_on_kind(PTO_WORKER_AIC),
				    NULL);
	pto_args_fini(&a);
	return err;
}

/*
 * A 120 s hang on the AIC core (max_spin_ms raised), a consumer, and AIC
 * noops queued behind it.
 */
static int orch_hang_and_queue(pto_orch *o, void *arg)
{
	static const struct pto_callable hang = { .kernel_id = PTO_FUNC_HANG };
	static const struct pto_callable noop = { .kernel_id = PTO_FUNC_NOOP };
	struct pto_task_args a;
	struct pto_task h;
	int i, err;

	(void)arg;
	pto_args_init(&a);
	pto_args_add_scalar(&a, 120000000000ULL);
	err = pto_submit_next_level(o, &hang, &a, NULL, pto_on_kind(PTO_WORKER_AIC),
				    &h);
	pto_args_reset(&a);
	if (!err) {
		pto_args_add_dep(&a, h);
		err = pto_submit_next_level(o, &noop, &a, NULL,
					    pto_on_kind(PTO_WORKER_AIV), NULL);
	}
	pto_args_reset(&a);
	for (i = 0; i < 8 && !err; i++)
		err = pto_submit_next_level(o, &noop, &a, NULL,
					    pto_on_kind(PTO_WORKER_AIC), NULL);
	pto_args_fini(&a);
	return err;
}

/*
 * pto_orch_abort() when the hung core ignores its retirement too: the thread's
 * retirement quarantines it at the deadline and the abort returns after (an
 * order, not a time). Its task and the queued ones fail with the abort's
 * error; close and destroy succeed, the stats count it, and the reset recovers
 * it for the next orchestrator.
 */
TEST(abort_with_a_silent_hung_core)
{
	struct pto_sched_config sc = { .threads = 1, .clusters = 1 };
	struct pto_sched_stats st;
	struct pto_dev *d;
	pto_orch *o;
	pto_run *r;

	if (access(DBG "inject_stall", W_OK) || access(PARAM, W_OK))
		SKIP(return, "needs root, debugfs and pto's parameters");
	ASSERT_EQ(0, st_param_set("retire_timeout_ms", "1000"));
	ASSERT_EQ(0, st_param_set("max_spin_ms", "600000"));
	ASSERT_EQ(0, pto_dev_open(0, &d));
	ASSERT_EQ(0, pto_orch_create_device(d, NULL, &sc, &o));
	ASSERT_EQ(0, pto_run_start(o, orch_hang_and_queue, NULL, &r));
	ASSERT_EQ(0, st_inject_stall(0, 0));
	EXPECT_EQ(-ETIMEDOUT, pto_orch_close(o, 300));
	EXPECT_EQ(0, pto_run_done(r));

	EXPECT_EQ(0, pto_orch_abort(o, 60000));
	EXPECT_EQ(PTO_CORE_QUARANTINED, core_state_ioctl(d, 0));
	EXPECT_EQ(-ECANCELED, pto_run_wait(r, 0));
	EXPECT_NE(NULL, strstr(pto_run_error(r),
			       "orchestrator aborted (pto_orch_abort)"))
		TH_LOG("%s", pto_run_error(r));
	pto_run_release(r);
	EXPECT_EQ(0, pto_orch_close(o, 10000));
	ASSERT_EQ(0, pto_orch_sched_stats(o, &st));
	EXPECT_EQ(1, st.quarantined);
	EXPECT_EQ(PTO_CORES_PER_CLUSTER - 1, st.retired);
	EXPECT_EQ(0, pto_orch_destroy(o));

	/* The reset recovers it; the next orchestrator runs on it. */
	ASSERT_EQ(0, st_write_file(DBG "reset", "1"));
	EXPECT_EQ(PTO_CORE_UNLAUNCHED, core_state_ioctl(d, 0));
	ASSERT_EQ(0, pto_orch_create_device(d, NULL, &sc, &o));
	EXPECT_EQ(0, pto_orch_run(o, orch_one_aic_noop, NULL));
	EXPECT_EQ(0, pto_orch_close(o, 10000));
	EXPECT_EQ(0, pto_orch_destroy(o));
	pto_dev_close(d);
}

/*
 * An idle device orchestrator closes with a budget of 0: its scheduler
 * threads retire cores that answer, which takes a moment, and the stop is
 * given at least ORCH_STOP_MIN_MS (1 s) whatever the budget. Without that
 * floor the join's deadline had passed before the threads could leave
 * their loops: -ETIMEDOUT, and a caller that closes "if idle" leaked it.
 */
TEST(idle_orch_closes_with_a_budget_of_0)
{
	struct pto_sched_config sc = { .clusters = 1 };
	struct pto_sched_stats st;
	struct pto_dev *d;
	pto_orch *o;

	ASSERT_EQ(0, pto_dev_open(0, &d));
	ASSERT_EQ(0, pto_orch_create_device(d, NULL, &sc, &o));
	ASSERT_EQ(0, pto_orch_run(o, orch_one_noop, NULL));
	EXPECT_EQ(0, pto_orch_close(o, 0));
	ASSERT_EQ(0, pto_orch_sched_stats(o, &st));
	EXPECT_EQ(PTO_CORES_PER_CLUSTER, st.retired);
	EXPECT_EQ(0, st.quarantined);
	EXPECT_EQ(0, pto_orch_destroy(o));
	pto_dev_close(d);
}

/* The state letter of /proc/@pid/stat (R, S, D, ...), or 0. */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (st_read_line(path, buf, sizeof(buf)))
		return 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/* Whether @pid is inside system call @nr (/proc/@pid/syscall). */
static bool proc_in_syscall(pid_t pid, long nr)
{
	char path[64], buf[256];

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	return !st_read_line(path, buf, sizeof(buf)) && atol(buf) == nr &&
	       buf[0] != '-';
}

struct reset_arg {
	struct pto_dev *dev;
	const uint64_t *cores;
	struct pto_core_reset rs;
	int ret;
};

static void *reset_thread(void *p)
{
	struct reset_arg *a = p;

	a->ret = core_reset(a->dev, a->cores, &a->rs);
	return NULL;
}

/*
 * The one holder of core_lock that waits for a core is the (privileged)
 * reset: with mock_close_delay_ms at 8 s its retirement sleeps under
 * core_lock. A child blocked in CLUSTER_ACQUIRE behind it gets SIGKILL
 * and must be reaped before the reset ends (the ioctls take core_lock
 * killable, and closing a file that owns nothing does not take it).
 */
TEST(core_lock_waiter_dies_of_sigkill)
{
	uint64_t ca[PTO_CORE_MASK_WORDS] = { 1 };
	struct pto_cluster_acquire acq = { .clusters = 1 };
	struct reset_arg ra = { .cores = ca };
	struct pto_retire_status rst;
	struct core_launch *la;
	struct pto_dev *a;
	int go[2], ready[2], status, fd, ret;
	pthread_t t;
	pid_t pid;
	char c = 0;

	if (access(DBG "inject_stall", W_OK) || access(PARAM, W_OK))
		SKIP(return, "needs root, debugfs and pto's parameters");
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(ready));
	/* Forked before the reset thread exists: the child is one thread. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(go[1]);	/* a parent gone before "go" is EOF */
		close(ready[0]);
		fd = open(PTO_DEV0, O_RDWR);
		if (fd < 0 || read(go[0], &c, 1) != 1 ||
		    write(ready[1], &c, 1) != 1)
			_exit(2);
		/* Blocks behind the reset; would take the cluster once
		 * the reset ended, if not killed. */
		ioctl(fd, PTO_IOCTL_CLUSTER_ACQUIRE, &acq);
		_exit(0);
	}
	ASSERT_EQ(0, pto_dev_open(0, &a));
	/* Core 0 quarantined by a's release (a short deadline)... */
	ASSERT_EQ(0, st_param_set("retire_timeout_ms", "200"));
	ASSERT_EQ(0, core_cluster_acquire(a, 1));
	ASSERT_EQ(0, core_launch_cores(a, ca, &la));
	ASSERT_EQ(0, st_inject_stall(0, 0));
	ASSERT_EQ(0, core_cluster_release(a, 1));
	core_launch_free(la);
	ASSERT_EQ(PTO_CORE_QUARANTINED, core_state_ioctl(a, 0));
	/* ...then recovered by a reset that sleeps under core_lock. */
	ASSERT_EQ(0, st_param_set("mock_close_delay_ms", "8000"));
	ra.dev = a;
	ASSERT_EQ(0, pthread_create(&t, NULL, reset_thread, &ra));
	/* Acknowledged: the reset is in its close delay, core_lock held. */
	st_wait_until((ret = core_retire_status(a, 0, &rst)) ||
		      (rst.reason == PTO_RETIRE_BY_RESET &&
		       (rst.result & PTO_RETIRE_ACKED)));
	ASSERT_EQ(0, ret);
	ASSERT_EQ(PTO_RETIRE_BY_RESET, rst.reason);
	ASSERT_EQ(1, write(go[1], &c, 1));
	ASSERT_EQ(1, read(ready[0], &c, 1));
	/* Asleep in the ioctl (not before it): D, killable or not. */
	EXPECT_TRUE(st_wait_until(proc_state(pid) == 'D' &&
				  proc_in_syscall(pid, SYS_ioctl)));
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		TH_LOG("child status %#x", status);
	/* Reaped while the reset still sleeps. */
	EXPECT_EQ(PTO_CORE_QUARANTINED, core_state_ioctl(a, 0))
		TH_LOG("the killed child died only after the reset ended");
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(0, ra.ret);
	EXPECT_EQ(1, ra.rs.recovered);
	EXPECT_EQ(PTO_CORE_UNLAUNCHED, core_state_ioctl(a, 0));
	pto_dev_close(a);
	close(go[0]);
	close(go[1]);
	close(ready[0]);
	close(ready[1]);
}

/*
 * Module unload with a core left quarantined under a closed file: the
 * core still holds its launch's references (the file's context, its
 * payload buffer, the launch's eventfd) and its thread waits for the
 * stall to be lifted. Unload must stop the thread and drop them all: the
 * buffer's GM range back to the pool (gen_pool_destroy() BUGs on one
 * left), the context and the eventfd context freed (kmemleak on the debug
 * kernel, whose run scans after every rmmod). Before the unload, debugfs
 * shows the buffer alive with the core's reference alone.
 */
TEST(unload_drops_a_quarantined_cores_references)
{
	struct pto_cluster_acquire ca = { .clusters = 1 };
	uint64_t cores[PTO_CORE_MASK_WORDS];
	struct pto_core_launch cl = { 0 };
	struct pto_bo_alloc pb;
	char state[32], line[256];
	unsigned long long addr;
	unsigned int refs = 0;
	int fd, efd;
	FILE *f;

	if (access(DBG "inject_stall", W_OK) || access(PARAM, W_OK))
		SKIP(return, "needs root, debugfs and pto's parameters");
	ASSERT_EQ(0, st_param_set("retire_timeout_ms", "300"));
	fd = open(PTO_DEV0, O_RDWR);
	ASSERT_LE(0, fd);
	efd = eventfd(0, 0);
	ASSERT_LE(0, efd);
	ASSERT_EQ(0, pto_sioctl(fd, PTO_IOCTL_CLUSTER_ACQUIRE, &ca));
	ASSERT_EQ(0, st_bo_alloc(fd, 4096, &pb));
	st_cluster_cores(0, cores);
	memcpy(cl.cores, cores, sizeof(cl.cores));
	cl.payload_addr = pb.dev_addr;
	cl.flags = PTO_LAUNCH_FLAG_EVENTFD;
	cl.eventfd = efd;
	ASSERT_EQ(0, pto_sioctl(fd, PTO_IOCTL_CORE_LAUNCH, &cl));
	ASSERT_EQ(0, st_inject_stall(0, 0));
	close(fd);	/* its release leaves core 0 quarantined */
	ASSERT_EQ(0, st_core_state(0, 0, state, sizeof(state)));
	ASSERT_STREQ("quarantined", state);
	f = fopen(DBG "bos", "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%*d %*u 0x%llx %*u %u", &addr, &refs) == 2 &&
		    addr == pb.dev_addr)
			break;
	fclose(f);
	EXPECT_EQ(pb.dev_addr, addr);
	EXPECT_EQ(1, refs);

	ASSERT_EQ(0, st_module_unload()) TH_LOG("pto busy: is a file open?");
	ASSERT_EQ(0, st_module_reload()) TH_LOG("reload with '%s'", st_saved->args);
	ASSERT_EQ(0, st_core_state(0, 0, state, sizeof(state)));
	EXPECT_STREQ("unlaunched", state);
	close(efd);
}

TEST_HARNESS_MAIN
