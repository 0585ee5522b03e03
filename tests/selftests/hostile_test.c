// SPDX-License-Identifier: GPL-2.0
/*
 * What a hostile or careless user can do to the device, and must not be
 * able to: take a core out of service for others by starving a thread
 * that holds a lock the core needs, make another file's calls wait behind
 * its retirements, or pin memory past its limits.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <pto/pto.h>
#include "kselftest_harness.h"
#include "pto_selftest.h"
#include "pto_core_util.h"

/* The buffer the starved thread frees: big enough to take long. */
#define BIG_MB 128u
/* A COPY on an idle core takes milliseconds; the bound is generous. */
#define COPY_BOUND_NS 3000000000ull

struct idle_free {
	int fd;
	uint32_t handle;
	volatile int started;
	int ret;
};

/* BO_FREE from a SCHED_IDLE thread: it runs only when nothing else does. */
static void *idle_free_fn(void *arg)
{
	struct sched_param sp = { 0 };
	struct idle_free *f = arg;
	struct pto_bo_free bf = { .handle = f->handle };

	f->ret = pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
	if (f->ret)
		return NULL;
	f->started = 1;
	f->ret = pto_sioctl(f->fd, PTO_IOCTL_BO_FREE, &bf);
	return NULL;
}

static pid_t spawn_hog(void)
{
	pid_t pid = fork();

	if (!pid)
		for (;;)
			__asm__ volatile("" ::: "memory");
	return pid;
}

/*
 * A core's task runs while a starved thread of the same file frees a big
 * buffer: the core must not wait for the free (it takes no lock the free
 * holds), the task completes at once, and the core serves the next user.
 */
TEST(starved_free_does_not_stall_core)
{
	uint64_t cores[PTO_CORE_MASK_WORDS] = { 0x7 }, str[1] = { 1 };
	struct pto_payload p = { .func_id = PTO_FUNC_COPY };
	uint32_t shape[1] = { 1024 };
	struct idle_free f = { 0 };
	struct pto_bo *src, *dst;
	struct pto_bo_alloc big;
	struct core_launch *l;
	struct pto_dev *d, *d2;
	struct pto_dev_info info;
	pid_t hogs[8];
	int nhogs, i;
	uint64_t t0, t;
	pthread_t th;

	ASSERT_EQ(0, pto_dev_open(0, &d));
	pto_dev_info(d, &info);
	if (info.gm_size < 2ull * BIG_MB << 20)
		SKIP(return, "GM smaller than %u MiB", 2 * BIG_MB);
	ASSERT_EQ(0, core_cluster_acquire(d, 1));
	ASSERT_EQ(0, core_launch_cores(d, cores, &l));
	ASSERT_EQ(0, pto_bo_alloc(d, 4096, 0, &src));
	ASSERT_EQ(0, pto_bo_alloc(d, 4096, 0, &dst));
	pto_tensor_set(&p.t[PTO_ARG_A], pto_bo_dev_addr(src), PTO_DTYPE_I32,
		       1, shape, str);
	pto_tensor_set(&p.t[PTO_ARG_OUT], pto_bo_dev_addr(dst), PTO_DTYPE_I32,
		       1, shape, str);
	ASSERT_EQ(0, st_bo_alloc(pto_dev_fd(d), (uint64_t)BIG_MB << 20, &big));

	nhogs = get_nprocs();
	if (nhogs > 8)
		nhogs = 8;
	for (i = 0; i < nhogs; i++) {
		hogs[i] = spawn_hog();
		ASSERT_LT(0, hogs[i]);
	}
	f.fd = pto_dev_fd(d);
	f.handle = big.handle;
	ASSERT_EQ(0, pthread_create(&th, NULL, idle_free_fn, &f));
	while (!f.started && !f.ret)
		sched_yield();
	usleep(100000);	/* the starved thread is inside BO_FREE, or near */
	t0 = pto_now_ns();
	EXPECT_EQ(PTO_TASK_OK, pto_run1(l, &l->core[0], &p));
	t = pto_now_ns() - t0;
	for (i = 0; i < nhogs; i++) {
		kill(hogs[i], SIGKILL);
		waitpid(hogs[i], NULL, 0);
	}
	pthread_join(th, NULL);
	EXPECT_EQ(0, f.ret);
	EXPECT_GT(COPY_BOUND_NS, t) TH_LOG("COPY took %llu ms",
					   (unsigned long long)t / 1000000);

	ASSERT_EQ(0, core_cluster_release(d, 1));
	core_launch_free(l);
	pto_bo_free(src);
	pto_bo_free(dst);
	pto_dev_close(d);

	/* The next user launches the same cores and runs on them. */
	ASSERT_EQ(0, pto_dev_open(0, &d2));
	ASSERT_EQ(0, core_cluster_acquire(d2, 1));
	ASSERT_EQ(0, core_launch_cores(d2, cores, &l));
	EXPECT_EQ(0, pto_noop_all(l));
	ASSERT_EQ(0, core_cluster_release(d2, 1));
	core_launch_free(l);
	pto_dev_close(d2);
}

/*
 * A doorbell ends a doze: with doze_us at 60 s a dozing core would take
 * its next task a minute late if only the doze's end looked for work.
 */
TEST(doorbell_ends_a_doze)
{
	uint64_t cores[PTO_CORE_MASK_WORDS] = { 0x7 };
	uint64_t mask[PTO_CORE_MASK_WORDS] = { 1 };
	struct pto_payload p = { .func_id = PTO_FUNC_NOOP };
	struct core_rc *c;
	struct pto_core_stats st;
	struct core_launch *l;
	struct core_done done[2];
	struct pto_dev *d;
	uint64_t t0;
	uint32_t id;
	int ring, n = 0, i;

	if (access(PTO_PARAMS "doze_us", W_OK))
		SKIP(return, "needs root and pto's parameters");
	ASSERT_EQ(0, st_param_set("doze_us", "60000000"));
	ASSERT_EQ(0, st_param_set("doze_max_us", "120000000"));
	ASSERT_EQ(0, pto_dev_open(0, &d));
	ASSERT_EQ(0, core_cluster_acquire(d, 1));
	ASSERT_EQ(0, core_launch_cores(d, cores, &l));
	c = &l->core[0];
	ASSERT_TRUE(st_wait_until(!core_stats(d, 0, &st) && st.dozes > 0));
	memcpy(core_rc_next_payload(c), &p, sizeof(p));
	t0 = pto_now_ns();
	id = core_rc_dispatch(c, &ring);
	(void)ring;	/* a dozing core is not PARKED: ring it anyway */
	ASSERT_EQ(0, core_doorbell(l, mask));
	while (!n && pto_now_ns() - t0 < COPY_BOUND_NS)
		n = core_rc_reap(c, done);
	EXPECT_EQ(1, n);
	for (i = 0; i < n; i++)
		EXPECT_EQ(id, done[i].id);
	ASSERT_EQ(0, core_cluster_release(d, 1));
	core_launch_free(l);
	pto_dev_close(d);
}

/*
 * A file that does not own a core's cluster reads neither its last COND
 * nor its retirement nonce, unless it has CAP_SYS_ADMIN: state, owner
 * and counters stay visible. Exit status of the child: 0 or the check.
 */
static int peek_child(int fd, int unpriv, pid_t owner)
{
	struct pto_retire_status rs = { .core = 0 };
	struct pto_core_stats st = { .core = 0 };

	if (unpriv && (setresgid(65534, 65534, 65534) ||
		       setresuid(65534, 65534, 65534)))
		return 1;
	if (pto_sioctl(fd, PTO_IOCTL_CORE_STATS, &st))
		return 2;
	if ((pid_t)st.owner != owner || st.state != PTO_CORE_READY ||
	    !st.tasks)
		return 3;
	if (pto_sioctl(fd, PTO_IOCTL_RETIRE_STATUS, &rs))
		return 4;
	if (unpriv)
		return st.last_cond || rs.nonce || rs.response ? 5 : 0;
	return st.last_cond ? 0 : 6;	/* no retirement yet: nonce may be 0 */
}

static int run_peek_child(int fd, int unpriv)
{
	pid_t owner = getpid(), pid = fork();
	int status;

	if (!pid)
		_exit(peek_child(fd, unpriv, owner));
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

TEST(other_files_cond_and_nonce_hidden)
{
	uint64_t cores[PTO_CORE_MASK_WORDS] = { 0x7 };
	struct pto_payload p = { .func_id = PTO_FUNC_NOOP };
	struct core_launch *l;
	struct pto_dev *d;
	int fd;

	ASSERT_EQ(0, pto_dev_open(0, &d));
	ASSERT_EQ(0, core_cluster_acquire(d, 1));
	ASSERT_EQ(0, core_launch_cores(d, cores, &l));
	ASSERT_EQ(PTO_TASK_OK, pto_run1(l, &l->core[0], &p));
	fd = open(PTO_DEV0, O_RDONLY);	/* another file, read-only */
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, run_peek_child(fd, 1));
	EXPECT_EQ(0, run_peek_child(fd, 0));	/* CAP_SYS_ADMIN sees all */
	close(fd);
	ASSERT_EQ(0, core_cluster_release(d, 1));
	core_launch_free(l);
	pto_dev_close(d);
}

/*
 * core_lock starvation: SCHED_IDLE threads of another process loop on
 * acquire / launch / release of their own clusters, each retirement slowed
 * by mock_close_delay_ms. A victim's release + acquire of its own cluster
 * and its close must not wait behind those retirements: core_lock is held
 * for short work only, so the victim's worst case stays far under one
 * close delay (with the retirements under core_lock it is at least one).
 */
#define STARVE_DELAY_MS 1000u
#define STARVE_BOUND_NS 250000000ull	/* a quarter of the delay */
#define STARVE_THREADS 4
#define STARVE_ROUNDS 8

/* The starvers' counts (shared with the test): launches, failed ones. */
static volatile uint64_t *starve_count;

static void *starve_fn(void *arg)
{
	struct sched_param sp = { 0 };
	unsigned int k = (unsigned int)(uintptr_t)arg, c;
	uint64_t cores[PTO_CORE_MASK_WORDS];
	struct core_launch *l;
	struct pto_dev *d;

	if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp) ||
	    pto_dev_open(0, &d))
		_exit(3);
	c = 1 + k % 3;	/* clusters 1..3: cluster 0 is the victim's */
	memset(cores, 0, sizeof(cores));
	st_cluster_cores(c, cores);
	for (;;) {
		if (core_cluster_acquire(d, 1ull << c))
			continue;	/* -EBUSY: another thread holds it */
		if (!core_launch_cores(d, cores, &l)) {
			__atomic_add_fetch(&starve_count[0], 1,
					   __ATOMIC_RELAXED);
			core_cluster_release(d, 1ull << c);
			core_launch_free(l);
		} else {
			__atomic_add_fetch(&starve_count[1], 1,
					   __ATOMIC_RELAXED);
			core_cluster_release(d, 1ull << c);
		}
	}
	return NULL;
}

static pid_t spawn_starvers(void)
{
	pthread_t th;
	pid_t pid = fork();
	unsigned int k;

	if (pid)
		return pid;
	for (k = 0; k < STARVE_THREADS; k++)
		if (pthread_create(&th, NULL, starve_fn, (void *)(uintptr_t)k))
			_exit(2);
	for (;;)
		pause();
}

TEST(release_acquire_not_behind_retirements)
{
	struct pto_retire_status rs;
	uint64_t rel = 0, cls = 0, t0, t;
	struct pto_dev *d;
	char ms[16];
	unsigned int i;
	pid_t pid;
	int ret;

	if (access(PTO_PARAMS "mock_close_delay_ms", W_OK))
		SKIP(return, "needs root and pto's parameters");
	ASSERT_EQ(0, pto_dev_open(0, &d));
	if (core_cluster_acquire(d, 0xf))
		SKIP(return, "needs 4 free clusters");
	ASSERT_EQ(0, core_cluster_release(d, 0xf));
	starve_count = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, starve_count);
	snprintf(ms, sizeof(ms), "%u", STARVE_DELAY_MS);
	ASSERT_EQ(0, st_param_set("mock_close_delay_ms", ms));
	pid = spawn_starvers();
	ASSERT_LT(0, pid);
	/* Under way: a starver's retirement passed its close delay. */
	st_wait_until((ret = core_retire_status(d, 3, &rs)) ||
		      rs.retirements > 0);
	ASSERT_EQ(0, ret);
	ASSERT_LT(0, rs.retirements) TH_LOG("no starver retired a core");
	/*
	 * Each timed call after a pause, so the starvers (which run only
	 * while the victim sleeps) are back inside their loop; the untimed
	 * open and acquire of each round absorb a wait as well.
	 */
	for (i = 0; i < STARVE_ROUNDS; i++) {
		struct pto_dev *v;

		ASSERT_EQ(0, pto_dev_open(0, &v));
		ASSERT_EQ(0, core_cluster_acquire(v, 1));
		usleep(100000);
		t0 = pto_now_ns();
		ASSERT_EQ(0, core_cluster_release(v, 1));
		ASSERT_EQ(0, core_cluster_acquire(v, 1));
		t = pto_now_ns() - t0;
		rel = t > rel ? t : rel;
		usleep(100000);
		t0 = pto_now_ns();
		pto_dev_close(v);	/* owns cluster 0: its close releases it */
		t = pto_now_ns() - t0;
		cls = t > cls ? t : cls;
		if (rel >= STARVE_BOUND_NS || cls >= STARVE_BOUND_NS)
			break;	/* failed: do not wait out more rounds */
	}
	ASSERT_LT(1, starve_count[0]) TH_LOG("starvers idle");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	TH_LOG("worst release + acquire %llu us, close %llu us",
	       (unsigned long long)rel / 1000,
	       (unsigned long long)cls / 1000);
	EXPECT_GT(STARVE_BOUND_NS, rel);
	EXPECT_GT(STARVE_BOUND_NS, cls);
	pto_dev_close(d);
}

/* VmLck of this process in KiB, or -1. */
static long vm_locked_kb(void)
{
	char line[128];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmLck: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static int bo_free_handle(int fd, uint32_t handle)
{
	struct pto_bo_free f = { .handle = handle };

	return pto_sioctl(fd, PTO_IOCTL_BO_FREE, &f);
}

/*
 * The memlock checks, in a child: as root with CAP_IPC_LOCK (the limit
 * is bypassed, as for mlock()) or as an unprivileged user (it holds).
 * Exit status: 0, or the number of the failed check.
 */
static int memlock_child(int unpriv)
{
	struct rlimit rl = { 1 << 20, 1 << 20 };	/* 1 MiB */
	struct pto_bo_alloc a, b, c;
	int fd1, fd2;

	fd1 = open(PTO_DEV0, O_RDWR);
	fd2 = open(PTO_DEV0, O_RDWR);
	if (fd1 < 0 || fd2 < 0)
		return 1;
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return 2;
	if (!unpriv)	/* CAP_IPC_LOCK: beyond the limit is fine */
		return st_bo_alloc(fd1, 2 << 20, &a) ? 3 : 0;
	if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
		return 4;
	if (vm_locked_kb() != 0)
		return 5;
	if (st_bo_alloc(fd1, 512 << 10, &a))
		return 6;
	if (st_bo_alloc(fd1, 768 << 10, &b) != -ENOMEM)
		return 7;
	if (st_bo_alloc(fd2, 512 << 10, &b))	/* exactly the limit */
		return 8;
	if (st_bo_alloc(fd2, 4096, &c) != -ENOMEM)
		return 9;
	if (vm_locked_kb() != 1024)
		return 10;
	/* BO_FREE returns the charge... */
	if (bo_free_handle(fd1, a.handle) || vm_locked_kb() != 512)
		return 11;
	if (st_bo_alloc(fd1, 256 << 10, &a) || vm_locked_kb() != 768)
		return 12;
	/* ...and so does the close of the file that holds the buffer. */
	close(fd1);
	if (vm_locked_kb() != 512)
		return 13;
	close(fd2);
	if (vm_locked_kb() != 0)
		return 14;
	return 0;
}

static int run_memlock_child(int unpriv)
{
	int status;
	pid_t pid = fork();

	if (!pid)
		_exit(memlock_child(unpriv));
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * GM buffers are charged to the opener's locked memory: a holder over
 * RLIMIT_MEMLOCK is refused (-ENOMEM), not the OOM killer's bystander,
 * and the charge comes back at BO_FREE and at close.
 */
TEST(gm_charged_to_memlock)
{
	EXPECT_EQ(0, run_memlock_child(1));
}

/* CAP_IPC_LOCK bypasses the limit, as account_locked_vm() has it. */
TEST(gm_memlock_cap_ipc_lock_bypass)
{
	ASSERT_EQ(0, geteuid());
	EXPECT_EQ(0, run_memlock_child(0));
}

TEST_HARNESS_MAIN
