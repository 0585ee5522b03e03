// SPDX-License-Identifier: GPL-2.0
/*
 * Worker retirement (Documentation/retirement.md) through the kernel's
 * one helper: the retire ioctl and its status, validation, the reset,
 * the emergency path (debugfs fatal), busy and dozing cores, 32 launches
 * on the same gates, ptoctl gates, and the missing edge: with
 * mock_old_protocol a late CLOSE lands on the next launch's window; with
 * the gate it never does. Parts need root (debugfs, parameters).
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "kselftest_harness.h"
#include "pto_selftest.h"
#include "pto_core_util.h"

#define DBG PTO_DBG0
#define PARAMS PTO_PARAMS

static unsigned int fast_path(unsigned int core)
{
	char buf[256];
	unsigned int fp = 0;

	if (st_dbg_line(DBG "windows", core, buf, sizeof(buf)) ||
	    sscanf(buf, "%*u 0x%x", &fp) != 1)
		return 0;
	return fp;
}

/*
 * Open pto0, take cluster 0 and launch its cores (their mask in @cores):
 * the opening of most tests here. Fails the test on any error.
 */
static void launch_cluster0(struct __test_metadata *_metadata,
			    struct pto_dev **d, uint64_t *cores,
			    struct core_launch **l)
{
	ASSERT_EQ(0, pto_dev_open(0, d));
	st_cluster_cores(0, cores);
	ASSERT_EQ(0, core_cluster_acquire(*d, 1));
	ASSERT_EQ(0, core_launch_cores(*d, cores, l));
}

TEST(retire_ioctl_and_status)
{
	uint64_t cores[PTO_CORE_MASK_WORDS];
	struct pto_retire_status st[3], st2;
	struct pto_core_retire r;
	struct core_launch *l;
	struct pto_dev *d;
	unsigned int i;

	launch_cluster0(_metadata, &d, cores, &l);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, core_retire_status(d, i, &st[i]));
		EXPECT_EQ(PTO_RETIRE_BIT_READY, st[i].bits);
		/* READY is published; the thread may not have moved yet. */
		EXPECT_TRUE(st[i].state == PTO_CORE_READY ||
			    st[i].state == PTO_CORE_HANDSHAKE);
	}
	ASSERT_EQ(0, pto_noop_all(l));
	ASSERT_EQ(0, core_retire(d, cores, &r));
	EXPECT_EQ(3, r.retired);
	EXPECT_EQ(0, r.quarantined[0] | r.quarantined[1]);
	EXPECT_LT(0, r.elapsed_ns);
	printf("# retire ioctl, 3 cores: set %llu us\n",
	       (unsigned long long)r.elapsed_ns / 1000);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, core_retire_status(d, i, &st2));
		EXPECT_EQ(PTO_CORE_UNLAUNCHED, st2.state);
		EXPECT_EQ(PTO_RETIRE_BIT_READY | PTO_RETIRE_BIT_REQUESTED,
			  st2.bits);
		EXPECT_EQ(st[i].gen, st2.gen);
		EXPECT_EQ(PTO_COND_EXITED, st2.nonce & PTO_COND_STATE_MASK);
		EXPECT_NE(PTO_COND_EXITED, st2.nonce);
		EXPECT_EQ(st2.nonce, st2.response);
		EXPECT_EQ(PTO_RETIRE_ACKED | PTO_RETIRE_CLOSED |
			  PTO_RETIRE_RELEASED, st2.result);
		EXPECT_EQ(PTO_RETIRE_BY_IOCTL, st2.reason);
		EXPECT_LT(0, st2.core_ns);
		EXPECT_LE(st2.core_ns, st2.set_ns);
		EXPECT_EQ(r.elapsed_ns, st2.set_ns);
		EXPECT_EQ(st[i].retirements + 1, st2.retirements);
		printf("# core %u: response after %llu us\n", i,
		       (unsigned long long)st2.core_ns / 1000);
	}
	/* The latch: a second retire finds nothing of its own to write. */
	ASSERT_EQ(0, core_retire(d, cores, &r));
	EXPECT_EQ(0, r.retired);
	ASSERT_EQ(0, core_retire_status(d, 0, &st2));
	EXPECT_EQ(st[0].retirements + 1, st2.retirements);
	core_launch_free(l);
	/* The clusters stay owned: the cores launch again and run. */
	ASSERT_EQ(0, core_launch_cores(d, cores, &l));
	ASSERT_EQ(0, core_retire_status(d, 0, &st2));
	EXPECT_EQ(st[0].gen + 1, st2.gen);
	EXPECT_EQ(PTO_RETIRE_BIT_READY, st2.bits);
	EXPECT_EQ(0, pto_noop_all(l));
	ASSERT_EQ(0, core_cluster_release(d, 1));
	ASSERT_EQ(0, core_retire_status(d, 0, &st2));
	EXPECT_EQ(PTO_RETIRE_BY_RELEASE, st2.reason);
	core_launch_free(l);
	pto_dev_close(d);
}

/* Struct sizes: too short -EINVAL, longer with non-zero tail -E2BIG. */
static void check_sizes(struct __test_metadata *_metadata, int fd)
{
	struct pto_core_retire r = { .cores = { 7 } };
	struct pto_retire_status s = { 0 };
	struct pto_core_reset z = { 0 };
	char big[sizeof(struct pto_core_retire) + 8] = { 0 };
	unsigned long shr = PTO_IOWR_SIZED(PTO_IOCTL_CORE_RETIRE,
					   sizeof(r) - 8);
	unsigned long lng = PTO_IOWR_SIZED(PTO_IOCTL_CORE_RETIRE, sizeof(big));
	unsigned long sst = PTO_IOWR_SIZED(PTO_IOCTL_RETIRE_STATUS,
					   sizeof(s) - 8);
	unsigned long srs = PTO_IOWR_SIZED(PTO_IOCTL_CORE_RESET,
					   sizeof(z) - 8);

	memcpy(big, &r, sizeof(r));
	EXPECT_EQ(-EINVAL, pto_sioctl(fd, shr, &r));
	big[sizeof(r)] = 1;
	EXPECT_EQ(-E2BIG, pto_sioctl(fd, lng, big));
	big[sizeof(r)] = 0;
	EXPECT_EQ(0, pto_sioctl(fd, lng, big));
	EXPECT_EQ(-EINVAL, pto_sioctl(fd, sst, &s));
	EXPECT_EQ(-EINVAL, pto_sioctl(fd, srs, &z));
}

TEST(retire_ioctls_validate)
{
	struct pto_core_retire r = { 0 };
	struct pto_retire_status s = { 0 };
	struct pto_core_reset z = { 0 };
	struct pto_dev_info info;
	struct pto_dev *d, *d2;
	int fd;

	ASSERT_EQ(0, pto_dev_open(0, &d));
	fd = pto_dev_fd(d);
	pto_dev_info(d, &info);
	ASSERT_EQ(0, core_cluster_acquire(d, 1));
	EXPECT_EQ(-EINVAL, pto_sioctl(fd, PTO_IOCTL_CORE_RETIRE, &r));
	r.cores[0] = 1;
	r.flags = 1;
	EXPECT_EQ(-EINVAL, pto_sioctl(fd, PTO_IOCTL_CORE_RETIRE, &r));
	r.flags = 0;
	r.pad = 1;
	EXPECT_EQ(-EINVAL, pto_sioctl(fd, PTO_IOCTL_CORE_RETIRE, &r));
	r.pad = 0;
	r.cores[1] = 1ull << 63;
	EXPECT_EQ(-EINVAL, pto_sioctl(fd, PTO_IOCTL_CORE_RETIRE, &r));
	r.cores[1] = 0;
	if (info.clusters > 1) {
		r.cores[0] = 1ull << 3;	/* cluster 1: not ours */
		EXPECT_EQ(-EPERM, pto_sioctl(fd, PTO_IOCTL_CORE_RETIRE, &r));
	}
	r.cores[0] = 7;			/* not launched: nothing to do */
	EXPECT_EQ(0, pto_sioctl(fd, PTO_IOCTL_CORE_RETIRE, &r));
	EXPECT_EQ(0, r.retired);

	check_sizes(_metadata, fd);
	s.core = info.cores;
	EXPECT_EQ(-EINVAL, pto_sioctl(fd, PTO_IOCTL_RETIRE_STATUS, &s));
	s.core = 0;
	s.flags = 1;
	EXPECT_EQ(-EINVAL, pto_sioctl(fd, PTO_IOCTL_RETIRE_STATUS, &s));
	s.flags = 0;
	s.pad = 1;
	EXPECT_EQ(-EINVAL, pto_sioctl(fd, PTO_IOCTL_RETIRE_STATUS, &s));
	s.pad = 0;
	EXPECT_EQ(0, pto_sioctl(fd, PTO_IOCTL_RETIRE_STATUS, &s));

	if (geteuid() == 0) {
		z.flags = 1;
		EXPECT_EQ(-EINVAL, pto_sioctl(fd, PTO_IOCTL_CORE_RESET, &z));
		z.flags = 0;
		/* Another file's core: never touched. */
		if (info.clusters > 1) {
			ASSERT_EQ(0, pto_dev_open(0, &d2));
			ASSERT_EQ(0, core_cluster_acquire(d2, 2));
			z.cores[0] = 1ull << 3;
			EXPECT_EQ(-EBUSY, pto_sioctl(fd, PTO_IOCTL_CORE_RESET,
						     &z));
			pto_dev_close(d2);
		}
		z.cores[0] = 1ull << 1;
		/* Not quarantined: skipped. */
		EXPECT_EQ(0, pto_sioctl(fd, PTO_IOCTL_CORE_RESET, &z));
		EXPECT_EQ(0, z.recovered);
		/* Unprivileged: refused. */
		pid_t pid = fork();

		ASSERT_LE(0, pid);
		if (!pid) {
			struct pto_core_reset zz = { 0 };

			if (setuid(65534))
				_exit(2);
			_exit(pto_sioctl(fd, PTO_IOCTL_CORE_RESET, &zz) ==
			      -EPERM ? 0 : 1);
		}
		int status;

		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFEXITED(status));
		EXPECT_EQ(0, WEXITSTATUS(status));
	}
	pto_dev_close(d);
}

/*
 * A busy core is never quarantined: every built-in kernel stops on EXIT,
 * so even a deadline shorter than the task leaves it healthy. The retire
 * waits for the core to have taken the spin (not for a fixed time: the
 * core's thread may get a CPU late), and the spin is stopped if it still
 * runs: it cannot have started before it was sent, so it runs until at
 * least 1.5 s after that. Only a test thread that lost its CPU for all
 * of that may see it done instead (READY, then OK).
 */
TEST(busy_core_retires_in_time)
{
	uint64_t cores[PTO_CORE_MASK_WORDS];
	struct pto_payload spin = { .func_id = PTO_FUNC_SPIN_NS };
	struct pto_retire_status st;
	struct pto_core_retire r;
	struct core_launch *l;
	struct pto_dev *d;
	uint64_t t_sent, t;
	uint32_t id, status;
	int ring;

	if (access(PARAMS "retire_timeout_ms", W_OK))
		SKIP(return, "needs root and pto's parameters");
	ASSERT_EQ(0, st_param_set("retire_timeout_ms", "500"));
	launch_cluster0(_metadata, &d, cores, &l);
	spin.scalar[0] = 1500000000ull;	/* 1.5 s > the 0.5 s deadline */
	memcpy(core_rc_next_payload(&l->core[0]), &spin, sizeof(spin));
	t_sent = pto_now_ns();
	id = core_rc_dispatch(&l->core[0], &ring);
	if (ring)
		ASSERT_EQ(0, core_doorbell(l, cores));
	st_wait_taken(_metadata, &l->core[0], id, t_sent);
	ASSERT_EQ(0, core_retire_status(d, 0, &st));
	t = pto_now_ns();
	if (t - t_sent < spin.scalar[0]) {
		EXPECT_EQ(PTO_CORE_RUNNING, st.state);
	} else {
		EXPECT_TRUE(st.state == PTO_CORE_RUNNING ||
			    st.state == PTO_CORE_READY);
	}
	ASSERT_EQ(0, core_retire(d, cores, &r));
	t = pto_now_ns();
	EXPECT_EQ(3, r.retired);
	EXPECT_EQ(0, r.quarantined[0]);
	EXPECT_GT(500000000ull, r.elapsed_ns);
	printf("# retiring a busy core took %llu us\n",
	       (unsigned long long)r.elapsed_ns / 1000);
	/* The task ended with ESTOP before the echo. */
	status = l->core[0].payload[id & 1]->status;
	if (t - t_sent < spin.scalar[0]) {
		EXPECT_EQ(PTO_TASK_ESTOP, status);
	} else {
		TH_LOG("preempted: the retire returned %.1f ms after the 1.5 s spin was sent",
		       (t - t_sent) / 1e6);
		EXPECT_TRUE(status == PTO_TASK_ESTOP || status == PTO_TASK_OK);
	}
	EXPECT_EQ(id, l->core[0].payload[id & 1]->done_id);
	ASSERT_EQ(0, core_cluster_release(d, 1));
	core_launch_free(l);
	pto_dev_close(d);
}

/*
 * A dozing core answers EXIT at once. With doze_us at 60 s (and
 * doze_max_us beyond it), every idle core of cluster 0 goes into a 60 s
 * doze after its spin; once each has counted a doze (counted before the
 * sleep starts), CORE_RETIRE must retire all three within its 10 s
 * deadline: a doze that no wake-up ended would miss it and quarantine
 * the cores.
 */
TEST(dozing_core_retires_at_once)
{
	uint64_t cores[PTO_CORE_MASK_WORDS];
	struct pto_core_stats st;
	struct pto_core_retire r;
	struct core_launch *l;
	struct pto_dev *d;
	unsigned int i;

	if (access(PARAMS "doze_us", W_OK))
		SKIP(return, "needs root and pto's parameters");
	ASSERT_EQ(0, st_param_set("retire_timeout_ms", "10000"));
	ASSERT_EQ(0, st_param_set("doze_us", "60000000"));
	ASSERT_EQ(0, st_param_set("doze_max_us", "120000000"));
	launch_cluster0(_metadata, &d, cores, &l);
	for (i = 0; i < 3; i++)
		ASSERT_TRUE(st_wait_until(!core_stats(d, i, &st) &&
					  st.dozes > 0));
	ASSERT_EQ(0, core_retire(d, cores, &r));
	EXPECT_EQ(3, r.retired);
	EXPECT_EQ(0, r.quarantined[0]);
	printf("# retiring three dozing cores took %llu us\n",
	       (unsigned long long)r.elapsed_ns / 1000);
	ASSERT_EQ(0, core_cluster_release(d, 1));
	core_launch_free(l);
	pto_dev_close(d);
}

/* 32 launches reuse the same gates; each release frees only its own. */
TEST(gates_reused_32_launches)
{
	uint64_t cores[PTO_CORE_MASK_WORDS];
	struct pto_retire_status st, st0;
	struct pto_core_retire r;
	struct core_launch *l;
	struct pto_dev *d;
	unsigned int n, i;
	char buf[256], word[32];

	ASSERT_EQ(0, pto_dev_open(0, &d));
	st_cluster_cores(0, cores);
	ASSERT_EQ(0, core_cluster_acquire(d, 1));
	ASSERT_EQ(0, core_retire_status(d, 1, &st0));
	for (n = 0; n < 32; n++) {
		ASSERT_EQ(0, core_launch_cores(d, cores, &l));
		for (i = 0; i < 3; i++) {
			if (!access(DBG "gates", R_OK)) {
				ASSERT_EQ(0, st_dbg_line(DBG "gates", i, buf,
						      sizeof(buf)));
				ASSERT_EQ(1, sscanf(buf, "%*u %31s", word));
				EXPECT_STREQ("armed", word);
			}
		}
		ASSERT_EQ(0, pto_noop_all(l));
		ASSERT_EQ(0, core_retire(d, cores, &r));
		ASSERT_EQ(3, r.retired);
		core_launch_free(l);
	}
	ASSERT_EQ(0, core_retire_status(d, 1, &st));
	EXPECT_EQ(st0.gen + 32, st.gen);
	EXPECT_EQ(st0.retirements + 32, st.retirements);
	EXPECT_EQ(st0.quarantines, st.quarantines);
	ASSERT_EQ(0, core_cluster_release(d, 1));
	pto_dev_close(d);
}

/*
 * A silent core through the ioctl: its peers retire, it is quarantined
 * (status, debugfs), and its owner's privileged reset recovers it.
 */
TEST(partial_timeout_and_reset_ioctl)
{
	uint64_t cores[PTO_CORE_MASK_WORDS];
	struct pto_retire_status st;
	struct pto_core_retire r;
	struct pto_core_reset z;
	struct core_launch *l;
	struct pto_dev *d;
	char buf[256];
	unsigned int q;

	if (access(DBG "inject_stall", W_OK) ||
	    access(PARAMS "retire_timeout_ms", W_OK))
		SKIP(return, "needs root, debugfs and pto's parameters");
	ASSERT_EQ(0, st_param_set("retire_timeout_ms", "300"));
	launch_cluster0(_metadata, &d, cores, &l);
	ASSERT_EQ(0, st_inject_stall(0, 2));
	ASSERT_EQ(0, core_retire(d, cores, &r));
	EXPECT_EQ(2, r.retired);
	EXPECT_EQ(1ull << 2, r.quarantined[0]);
	EXPECT_LE(300000000ull, r.elapsed_ns);
	ASSERT_EQ(0, core_retire_status(d, 2, &st));
	EXPECT_EQ(PTO_CORE_QUARANTINED, st.state);
	EXPECT_EQ(PTO_RETIRE_QUARANTINED, st.result);
	EXPECT_NE(st.nonce, st.response);
	ASSERT_EQ(0, st_dbg_line(DBG "retirement", 2, buf, sizeof(buf)));
	ASSERT_EQ(1, sscanf(buf, "%*u %*u %*u %*u %*s %*s %*u %*u %u", &q));
	EXPECT_EQ(1, q);
	core_launch_free(l);
	ASSERT_EQ(0, core_reset(d, NULL, &z));
	EXPECT_EQ(1, z.recovered);
	EXPECT_EQ(0, z.remaining);
	ASSERT_EQ(0, core_retire_status(d, 2, &st));
	EXPECT_EQ(PTO_CORE_UNLAUNCHED, st.state);
	EXPECT_EQ(PTO_RETIRE_BY_RESET, st.reason);
	EXPECT_EQ(st.nonce, st.response);
	ASSERT_EQ(0, core_launch_cores(d, cores, &l));
	EXPECT_EQ(0, pto_noop_all(l));
	ASSERT_EQ(0, core_cluster_release(d, 1));
	core_launch_free(l);
	pto_dev_close(d);
}

/* Fatal device error: emergency retirement; later finalization is a no-op. */
TEST(fatal_error_emergency_latch)
{
	uint64_t cores[PTO_CORE_MASK_WORDS];
	struct pto_retire_status st, st0;
	struct pto_core_retire r;
	struct pto_dev_info info;
	struct core_launch *l;
	struct pto_dev *d;
	unsigned int i, c;

	if (access(DBG "fatal", W_OK))
		SKIP(return, "needs root and debugfs");
	ASSERT_EQ(0, pto_dev_open(0, &d));
	pto_dev_info(d, &info);
	c = info.clusters - 1;
	st_cluster_cores(c, cores);
	ASSERT_EQ(0, core_cluster_acquire(d, 1ull << c));
	ASSERT_EQ(0, core_launch_cores(d, cores, &l));
	ASSERT_EQ(0, pto_noop_all(l));
	ASSERT_EQ(0, core_retire_status(d, 3 * c, &st0));
	ASSERT_EQ(0, st_write_file(DBG "fatal", "1"));
	for (i = 3 * c; i < 3 * c + 3; i++) {
		ASSERT_EQ(0, core_retire_status(d, i, &st));
		EXPECT_EQ(PTO_RETIRE_BY_FATAL, st.reason);
		EXPECT_EQ(PTO_RETIRE_ACKED | PTO_RETIRE_CLOSED |
			  PTO_RETIRE_RELEASED, st.result);
		EXPECT_EQ(PTO_CORE_UNLAUNCHED, st.state);
		EXPECT_EQ(0xf, fast_path(i));
	}
	/* The owner's normal finalization afterwards writes nothing. */
	ASSERT_EQ(0, core_retire(d, cores, &r));
	EXPECT_EQ(0, r.retired);
	ASSERT_EQ(0, core_retire_status(d, 3 * c, &st));
	EXPECT_EQ(PTO_RETIRE_BY_FATAL, st.reason);
	EXPECT_EQ(st0.retirements + 1, st.retirements);
	core_launch_free(l);
	ASSERT_EQ(0, core_launch_cores(d, cores, &l));
	EXPECT_EQ(0, pto_noop_all(l));
	ASSERT_EQ(0, core_cluster_release(d, 1ull << c));
	core_launch_free(l);
	pto_dev_close(d);
}

/*
 * CORE_RETIRE's effect cannot be undone and its report is needed: a
 * struct the driver could not write the report into is refused with
 * -EFAULT before any core is touched (abi.md, Conventions).
 */
TEST(retire_unwritable_report_refused_first)
{
	uint64_t cores[PTO_CORE_MASK_WORDS];
	struct pto_retire_status st;
	struct pto_core_retire *ro, r;
	struct core_launch *l;
	struct pto_dev *d;
	unsigned int i;

	launch_cluster0(_metadata, &d, cores, &l);
	ro = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	memset(ro, 0, sizeof(*ro));
	memcpy(ro->cores, cores, sizeof(ro->cores));
	ASSERT_EQ(0, mprotect(ro, 4096, PROT_READ));
	EXPECT_EQ(-1, ioctl(pto_dev_fd(d), PTO_IOCTL_CORE_RETIRE, ro));
	EXPECT_EQ(EFAULT, errno);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, core_retire_status(d, i, &st));
		EXPECT_EQ(PTO_RETIRE_BIT_READY, st.bits);	/* not requested */
	}
	EXPECT_EQ(0, pto_noop_all(l));	/* still serving */
	ASSERT_EQ(0, core_retire(d, cores, &r));
	EXPECT_EQ(3, r.retired);
	munmap(ro, 4096);
	ASSERT_EQ(0, core_cluster_release(d, 1));
	core_launch_free(l);
	pto_dev_close(d);
}

/*
 * The EXIT echo serves an armed completion wake-up. The owner dispatched
 * an id the parked core has not taken (no doorbell rung), armed WAKE_REQ
 * and found nothing in COND: a scheduler thread would now sleep in
 * poll(-1). An emergency retirement echoes EXITED instead of a FIN; the
 * owner must be woken, or its heavy sleep never reaps the stopped id.
 */
TEST(exited_echo_wakes_armed_owner)
{
	uint64_t cores[PTO_CORE_MASK_WORDS] = { 1 };
	struct pto_core_stats cs;
	struct core_done done[2];
	struct core_launch *l;
	struct pto_dev *d;
	struct core_rc *c;
	struct pollfd pfd;
	uint64_t parks;
	int evfd, ring, n, ret;

	if (access(DBG "fatal", W_OK))
		SKIP(return, "needs root and debugfs");
	ASSERT_EQ(0, pto_dev_open(0, &d));
	ASSERT_EQ(0, core_cluster_acquire(d, 1));
	evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, evfd);
	ASSERT_EQ(0, core_stats(d, 0, &cs));
	parks = cs.parks;
	ASSERT_EQ(0, core_launch_cores_notify(d, cores, evfd, &l));
	c = &l->core[0];
	/*
	 * The idle core parks after spin_us (200 us by default). Parked, not
	 * only PARKED: the core publishes PARKED before its last look at
	 * DATA_MAIN_BASE, and a core that lost its CPU between the two would
	 * still take the id below. It counts the park after that look, and
	 * then sleeps until a doorbell.
	 */
	st_wait_until((ret = core_stats(d, 0, &cs)) || cs.parks > parks);
	ASSERT_EQ(0, ret);
	ASSERT_LT(parks, cs.parks);
	ASSERT_TRUE(core_rc_parked(c));
	memset(core_rc_next_payload(c), 0, sizeof(struct pto_payload));
	core_rc_dispatch(c, &ring);
	ASSERT_EQ(1, ring);	/* not rung: the id stays untaken */
	usleep(50000);
	ASSERT_EQ(0u, core_win_read(c, PTO_REG_COND) & PTO_COND_STATE_MASK);
	ASSERT_EQ(0, core_launch_arm(l));	/* armed, nothing to reap */
	st_drain_fd(evfd);
	ASSERT_EQ(0, st_write_file(DBG "fatal", "1"));
	EXPECT_EQ(PTO_COND_EXITED,
		  core_win_read(c, PTO_REG_COND) & PTO_COND_STATE_MASK);
	pfd.fd = evfd;
	pfd.events = POLLIN;
	n = poll(&pfd, 1, 1000);
	TH_LOG("poll after the EXITED echo: %d (1: woken, 0: no wake-up)", n);
	EXPECT_EQ(1, n);
	n = core_rc_reap(c, done);
	ASSERT_EQ(1, n);
	EXPECT_EQ(PTO_TASK_ESTOP, done[0].status);
	ASSERT_EQ(0, core_cluster_release(d, 1));
	core_launch_free(l);
	close(evfd);
	pto_dev_close(d);
}

/*
 * A fatal error while the same file launches and retires in a loop: a
 * request that lands before READY is published stays pending and the
 * launcher services it (the launch fails with -EIO, never half-open);
 * nothing is ever quarantined, and the cores end up launchable.
 */
struct fl {
	struct pto_dev *d;
	uint64_t cores[PTO_CORE_MASK_WORDS];
	volatile int stop;
	int launches, eio, other;
};

static void *fl_loop(void *arg)
{
	struct fl *f = arg;
	struct pto_core_launch cl = { 0 };
	struct pto_core_retire r;
	struct pto_bo *bo;
	int ret;

	if (pto_bo_alloc(f->d, 4096, 0, &bo)) {
		f->other++;
		return NULL;
	}
	memcpy(cl.cores, f->cores, sizeof(cl.cores));
	cl.payload_addr = pto_bo_dev_addr(bo);
	while (!__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE)) {
		ret = pto_sioctl(pto_dev_fd(f->d), PTO_IOCTL_CORE_LAUNCH, &cl);
		if (!ret)
			__atomic_fetch_add(&f->launches, 1, __ATOMIC_RELAXED);
		else if (ret == -EIO)
			f->eio++;
		else if (ret != -EBUSY)
			f->other++;
		if (core_retire(f->d, f->cores, &r))
			f->other++;
	}
	pto_bo_free(bo);
	return NULL;
}

TEST(fatal_error_during_launches)
{
	struct pto_retire_status st0[3], st;
	struct core_launch *l;
	struct fl f = { 0 };
	pthread_t t;
	unsigned int i;

	if (access(DBG "fatal", W_OK))
		SKIP(return, "needs root and debugfs");
	ASSERT_EQ(0, pto_dev_open(0, &f.d));
	st_cluster_cores(0, f.cores);
	ASSERT_EQ(0, core_cluster_acquire(f.d, 1));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, core_retire_status(f.d, i, &st0[i]));
	ASSERT_EQ(0, pthread_create(&t, NULL, fl_loop, &f));
	for (i = 0; i < 20; i++) {
		usleep(3000 + 1000 * (i % 5));	/* fixed, varied phases */
		ASSERT_EQ(0, st_write_file(DBG "fatal", "1"));
	}
	/*
	 * The loop launches too, not only fails: a launch slower than the
	 * 3 to 7 ms between fatal errors (a debug kernel under TCG, a loaded
	 * host, the loop's thread without a CPU) may have been hit by every
	 * one of them, but the first after them completes (bounded wait).
	 */
	st_wait_until(__atomic_load_n(&f.launches, __ATOMIC_RELAXED));
	__atomic_store_n(&f.stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	printf("# %d launches, %d failed with EIO (fatal during the launch)\n",
	       f.launches, f.eio);
	EXPECT_EQ(0, f.other);
	EXPECT_LT(0, f.launches);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, core_retire_status(f.d, i, &st));
		EXPECT_EQ(st0[i].quarantines, st.quarantines);
		EXPECT_EQ(PTO_CORE_UNLAUNCHED, st.state);
	}
	ASSERT_EQ(0, core_launch_cores(f.d, f.cores, &l));
	EXPECT_EQ(0, pto_noop_all(l));
	ASSERT_EQ(0, core_cluster_release(f.d, 1));
	core_launch_free(l);
	pto_dev_close(f.d);
}

/*
 * Initialization failure: a core reports a wrong physical id. The launch
 * fails with -EIO; the windows it opened (the other cores) are published
 * and retired by the launcher; the failed core is left for recovery
 * (quarantined, never closed blindly) until the reset recovers it. Its
 * record is the failed launch's alone: no time or nonce of the retirement
 * before it (core 1 is launched and retired once first).
 */
TEST(init_failure_retires_opened_windows)
{
	uint64_t cores[PTO_CORE_MASK_WORDS];
	struct pto_core_launch cl = { 0 };
	struct pto_retire_status st;
	struct pto_core_retire r;
	struct pto_core_reset z;
	struct core_launch *l;
	struct pto_bo *bo;
	struct pto_dev *d;
	char buf[256], word[32];
	unsigned int i;

	if (access(DBG "inject_badid", W_OK))
		SKIP(return, "needs root and debugfs");
	ASSERT_EQ(0, pto_dev_open(0, &d));
	st_cluster_cores(0, cores);
	ASSERT_EQ(0, core_cluster_acquire(d, 1));
	/* A previous retirement: core 1's record gets its times. */
	ASSERT_EQ(0, core_launch_cores(d, cores, &l));
	ASSERT_EQ(0, pto_noop_all(l));
	ASSERT_EQ(0, core_retire(d, cores, &r));
	core_launch_free(l);
	ASSERT_EQ(0, core_retire_status(d, 1, &st));
	ASSERT_LT(0, st.core_ns);
	ASSERT_LT(0, st.set_ns);
	/* Acknowledged: the response is that retirement's nonce. */
	ASSERT_NE(0, st.nonce);
	ASSERT_EQ(st.nonce, st.response);
	ASSERT_EQ(0, pto_bo_alloc(d, 4096, 0, &bo));
	memcpy(cl.cores, cores, sizeof(cl.cores));
	cl.payload_addr = pto_bo_dev_addr(bo);
	ASSERT_EQ(0, st_inject_badid(0, 1));
	EXPECT_EQ(-EIO, pto_sioctl(pto_dev_fd(d), PTO_IOCTL_CORE_LAUNCH, &cl));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, core_retire_status(d, i, &st));
		EXPECT_EQ(PTO_RETIRE_BY_LAUNCH, st.reason);
		if (i == 1) {
			EXPECT_EQ(PTO_CORE_QUARANTINED, st.state);
			EXPECT_EQ(PTO_RETIRE_QUARANTINED, st.result);
			EXPECT_EQ(0, st.bits);	/* never published */
			/* Never requested: no time, none of the last one. */
			EXPECT_EQ(0, st.core_ns);
			EXPECT_EQ(0, st.set_ns);
			/* No request, so no nonce: not acknowledged. */
			EXPECT_EQ(0, st.nonce);
			EXPECT_NE(st.nonce, st.response);
			/* Never released: its gate stays armed. */
			ASSERT_EQ(0, st_dbg_line(DBG "gates", i, buf, sizeof(buf)));
			ASSERT_EQ(1, sscanf(buf, "%*u %31s", word));
			EXPECT_STREQ("armed", word);
			continue;
		}
		EXPECT_EQ(PTO_CORE_UNLAUNCHED, st.state);
		EXPECT_EQ(PTO_RETIRE_BIT_READY | PTO_RETIRE_BIT_REQUESTED,
			  st.bits);
		EXPECT_EQ(PTO_RETIRE_ACKED | PTO_RETIRE_CLOSED |
			  PTO_RETIRE_RELEASED, st.result);
		EXPECT_EQ(0xf, fast_path(i));
	}
	ASSERT_EQ(0, core_reset(d, NULL, &z));
	EXPECT_EQ(1, z.recovered);
	EXPECT_EQ(0, z.remaining);
	ASSERT_EQ(0, core_retire_status(d, 1, &st));
	EXPECT_EQ(PTO_CORE_UNLAUNCHED, st.state);
	pto_bo_free(bo);
	ASSERT_EQ(0, core_launch_cores(d, cores, &l));
	EXPECT_EQ(0, pto_noop_all(l));
	ASSERT_EQ(0, core_cluster_release(d, 1));
	core_launch_free(l);
	pto_dev_close(d);
}

/* ptoctl gates renders the status of every core as a table. */
TEST(ptoctl_gates_table)
{
	uint64_t cores[PTO_CORE_MASK_WORDS];
	struct pto_retire_status st;
	struct pto_core_retire r;
	struct core_launch *l;
	struct pto_dev *d;
	char line[512], state[32], by[32];
	unsigned int core, gen, ready, req, closed, released, quar, rows = 0;
	unsigned int nonce, resp;
	FILE *f;

	launch_cluster0(_metadata, &d, cores, &l);
	ASSERT_EQ(0, core_retire(d, cores, &r));
	ASSERT_EQ(0, core_retire_status(d, 1, &st));
	f = popen("ptoctl gates -d 0 2>/dev/null", "r");
	ASSERT_NE(NULL, f);
	if (!fgets(line, sizeof(line), f)) {
		pclose(f);
		SKIP(return, "ptoctl not on PATH");
	}
	EXPECT_EQ(0, strncmp(line, "core type state", 15));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%u %*s %31s %u %u %u 0x%x 0x%x %u %u %u %31s",
			   &core, state, &gen, &ready, &req, &nonce, &resp,
			   &closed, &released, &quar, by) != 11)
			continue;
		rows++;
		if (core != 1)
			continue;
		EXPECT_STREQ("unlaunched", state);
		EXPECT_EQ(st.gen, gen);
		EXPECT_EQ(1, ready);
		EXPECT_EQ(1, req);
		EXPECT_EQ(st.nonce, nonce);
		EXPECT_EQ(st.nonce, resp);
		EXPECT_EQ(1, closed);
		EXPECT_EQ(1, released);
		EXPECT_EQ(0, quar);
		EXPECT_STREQ("ioctl", by);
	}
	pclose(f);
	EXPECT_LE(3, rows);
	core_launch_free(l);
	ASSERT_EQ(0, core_cluster_release(d, 1));
	pto_dev_close(d);
}

/* ---- the regression test of the missing edge (CLOSE -> return) -------- */

struct race {
	struct pto_dev *d;
	uint64_t cores[PTO_CORE_MASK_WORDS];
	volatile int done;
	int ret;
};

static void *retirer(void *arg)
{
	struct race *rc = arg;
	struct pto_core_retire r;

	rc->ret = core_retire(rc->d, rc->cores, &r);
	__atomic_store_n(&rc->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Round after round: one thread retires the cores while another launches
 * them again as soon as the kernel lets it. Returns the number of rounds
 * in which the new launch's window was found closed: a late CLOSE of the
 * previous round landed on it. -1 on a setup error.
 */
static int late_close_rounds(struct __test_metadata *_metadata, int rounds)
{
	struct pto_core_launch cl = { 0 };
	struct pto_core_retire r;
	struct race rc = { 0 };
	struct pto_bo *bo;
	pthread_t t;
	int n, late = 0;
	unsigned int i;

	if (pto_dev_open(0, &rc.d))
		return -1;
	st_cluster_cores(0, rc.cores);
	if (core_cluster_acquire(rc.d, 1) ||
	    pto_bo_alloc(rc.d, 4096, 0, &bo))
		return -1;
	memcpy(cl.cores, rc.cores, sizeof(cl.cores));
	cl.payload_addr = pto_bo_dev_addr(bo);
	if (pto_sioctl(pto_dev_fd(rc.d), PTO_IOCTL_CORE_LAUNCH, &cl))
		return -1;
	for (n = 0; n < rounds; n++) {
		uint64_t t0 = pto_now_ns();
		int ret, closed = 0;

		rc.done = 0;
		pthread_create(&t, NULL, retirer, &rc);
		do {
			ret = pto_sioctl(pto_dev_fd(rc.d),
					 PTO_IOCTL_CORE_LAUNCH, &cl);
			if (ret == -EBUSY)
				usleep(200);
		} while (ret == -EBUSY && pto_now_ns() - t0 < 5000000000ull);
		pthread_join(t, NULL);
		EXPECT_EQ(0, ret);
		EXPECT_EQ(0, rc.ret);
		for (i = 0; i < 3; i++)
			if (fast_path(i) == 0xf)
				closed = 1;
		late += closed;
	}
	core_retire(rc.d, rc.cores, &r);
	pto_bo_free(bo);
	core_cluster_release(rc.d, 1);
	pto_dev_close(rc.d);
	return late;
}

static int old_protocol_params(const char *old_proto, const char *delay)
{
	return st_param_set("mock_old_protocol", old_proto) ||
	       st_param_set("mock_close_delay_ms", delay);
}

/* With the gate (the new protocol): a late CLOSE never lands. */
TEST(gate_keeps_late_close_off_the_next_launch)
{
	int late;

	if (access(DBG "windows", R_OK) ||
	    access(PARAMS "mock_close_delay_ms", W_OK))
		SKIP(return, "needs root, debugfs and pto's parameters");
	ASSERT_EQ(0, old_protocol_params("0", "100"));
	late = late_close_rounds(_metadata, 5);
	printf("# new protocol: %d of 5 next launches hit by a late CLOSE\n",
	       late);
	EXPECT_EQ(0, late);
}

/*
 * With the mock's old protocol (return on EXIT, no gate), the next launch
 * starts while the previous round's CLOSE is still pending, and the CLOSE
 * lands on the new window: the test above fails on that protocol.
 */
TEST(old_protocol_lets_late_close_land)
{
	int late;

	if (access(DBG "windows", R_OK) ||
	    access(PARAMS "mock_old_protocol", W_OK))
		SKIP(return, "needs root, debugfs and pto's parameters");
	ASSERT_EQ(0, old_protocol_params("1", "100"));
	late = late_close_rounds(_metadata, 5);
	printf("# old protocol: %d of 5 next launches hit by a late CLOSE\n",
	       late);
	EXPECT_LT(0, late);
}

TEST_HARNESS_MAIN
