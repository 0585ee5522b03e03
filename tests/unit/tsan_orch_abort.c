// SPDX-License-Identifier: MIT
/*
 * pto_orch_close() and pto_orch_abort() on several threads at once, under
 * ThreadSanitizer, with the real device scheduler thread on a fake driver:
 * ioctl() below answers pto's ioctls on a memfd, so the windows and buffers
 * are real shared memory. Its cores never take a task, so a dispatched task
 * stays in flight until the abort retires the core. And the device's
 * SUB workers running chains of host callbacks on it.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/pto.h>
#include <pto/pto.h>
#include <pto/sched.h>
#include "fake_ioctl.h"
#include "kselftest_harness.h"
#include "orch_test.h"

#define FAKE_CORES 3			/* one cluster: AIC, AIV, AIV */
#define FAKE_WINDOW 4096
#define FAKE_BO_BASE (1ULL << 20)	/* past the windows */
#define FAKE_SIZE (64ULL << 20)		/* sparse */

/*
 * The fake driver's state. Atomics, relaxed: the fake must order nothing
 * between the threads that call it, or it would hide races between them
 * from ThreadSanitizer.
 */
struct fake_dev {
	int mfd;
	_Atomic uint64_t bo_next;
	_Atomic uint32_t handles;
	_Atomic int launches;
	_Atomic int launch_evfd;	/* launches with an eventfd */
	_Atomic int retired[FAKE_CORES];
	_Atomic int retires;		/* CORE_RETIRE calls */
	_Atomic int unexpected;		/* an ioctl the fake does not know */
};

static struct fake_dev fk;

static int fake_pto_ioctl(int fd, unsigned long req, void *arg)
{
	int i;

	if (_IOC_TYPE(req) != PTO_IOCTL_BASE)
		return fake_ioctl_real(fd, req, arg);
	switch (req) {
	case PTO_IOCTL_GET_INFO: {
		struct pto_info *in = arg;
		uint32_t *types = (uint32_t *)(uintptr_t)in->core_types;

		in->abi_major = PTO_ABI_MAJOR;
		in->abi_minor = PTO_ABI_MINOR;
		in->device = 0;
		in->clusters = 1;
		in->cores = FAKE_CORES;
		in->lanes = 1;
		in->gm_size = FAKE_SIZE - FAKE_BO_BASE;
		in->gm_align = FAKE_WINDOW;
		in->window_size = FAKE_WINDOW;
		in->caps = PTO_CAP_CORES;
		for (i = 0; i < FAKE_CORES && (uint32_t)i < in->core_types_count;
		     i++)
			types[i] = i % 3 ? PTO_CORE_AIV : PTO_CORE_AIC;
		return 0;
	}
	case PTO_IOCTL_BO_ALLOC: {
		struct pto_bo_alloc *a = arg;
		uint64_t size = (a->size + FAKE_WINDOW - 1) &
				~(uint64_t)(FAKE_WINDOW - 1);
		uint64_t off = atomic_fetch_add_explicit(&fk.bo_next, size,
							 memory_order_relaxed);

		if (!size || off + size > FAKE_SIZE) {
			errno = ENOMEM;
			return -1;
		}
		a->size = size;
		a->handle = atomic_fetch_add_explicit(&fk.handles, 1,
						      memory_order_relaxed) + 1;
		a->dev_addr = off;
		a->mmap_offset = off;
		return 0;
	}
	case PTO_IOCTL_BO_FREE:
	case PTO_IOCTL_CLUSTER_ACQUIRE:
	case PTO_IOCTL_CLUSTER_RELEASE:
	case PTO_IOCTL_DOORBELL:	/* the cores take nothing anyway */
		return 0;
	case PTO_IOCTL_CORE_LAUNCH: {
		struct pto_core_launch *l = arg;

		atomic_fetch_add_explicit(&fk.launches, 1, memory_order_relaxed);
		if (l->flags & PTO_LAUNCH_FLAG_EVENTFD)
			atomic_fetch_add_explicit(&fk.launch_evfd, 1,
						  memory_order_relaxed);
		return 0;
	}
	case PTO_IOCTL_CORE_RETIRE: {
		struct pto_core_retire *r = arg;

		atomic_fetch_add_explicit(&fk.retires, 1, memory_order_relaxed);
		r->retired = 0;
		for (i = 0; i < FAKE_CORES; i++) {
			if (!(r->cores[0] & (1ULL << i)))
				continue;
			atomic_fetch_add_explicit(&fk.retired[i], 1,
						  memory_order_relaxed);
			r->retired++;
		}
		memset(r->quarantined, 0, sizeof(r->quarantined));
		r->elapsed_ns = 1;
		return 0;
	}
	}
	atomic_fetch_add_explicit(&fk.unexpected, 1, memory_order_relaxed);
	errno = ENOTTY;
	return -1;
}

FAKE_IOCTL(fake_pto_ioctl)

/* Open the fake device: a fresh memfd, and the fake's counters zeroed. */
static int fake_open(struct pto_dev **dev)
{
	char path[64];
	int ret;

	memset(&fk, 0, sizeof(fk));
	atomic_store(&fk.bo_next, FAKE_BO_BASE);
	fk.mfd = memfd_create("pto-fake", MFD_CLOEXEC);
	if (fk.mfd < 0)
		return -errno;
	if (ftruncate(fk.mfd, (off_t)FAKE_SIZE)) {
		ret = -errno;
		close(fk.mfd);
		return ret;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fk.mfd);
	ret = pto_dev_open_path(path, dev);
	if (ret)
		close(fk.mfd);
	return ret;
}

/* Core @i's DATA_MAIN_BASE, read through the file: no access TSan sees,
 * so it orders nothing. Nonzero once a task was dispatched to it. */
static uint32_t fake_dispatched(int i)
{
	uint32_t v = 0;

	if (pread(fk.mfd, &v, sizeof(v),
		  (off_t)(PTO_WINDOW_OFFSET(i, FAKE_WINDOW) +
			  PTO_REG_DATA_MAIN_BASE)) != sizeof(v))
		return 0;
	return v;
}

/*
 * The stop joins the scheduler thread with pthread_clockjoin_np()
 * (sched_stop(): a CLOCK_MONOTONIC deadline), which GCC 12's libtsan does
 * not intercept: the join is invisible to it, and everything the thread
 * did is reported racing destroy's frees, and the thread as leaked. Here
 * the call is the same join through pthread_timedjoin_np(), which it
 * intercepts, its deadline moved to CLOCK_REALTIME (linked ahead of
 * libc's, as the fake ioctl()).
 */
int pthread_clockjoin_np(pthread_t th, void **ret, clockid_t clk,
			 const struct timespec *deadline)
{
	struct timespec now, rt;
	int64_t left;

	if (!deadline)
		return pthread_join(th, ret);
	clock_gettime(clk, &now);
	left = (int64_t)(deadline->tv_sec - now.tv_sec) * 1000000000LL +
	       (deadline->tv_nsec - now.tv_nsec);
	if (left < 0)
		left = 0;
	clock_gettime(CLOCK_REALTIME, &rt);
	left += rt.tv_nsec;
	rt.tv_sec += left / 1000000000LL;
	rt.tv_nsec = left % 1000000000LL;
	return pthread_timedjoin_np(th, ret, &rt);
}

static const struct pto_callable k_hang = { .kernel_id = PTO_FUNC_HANG };
static const struct pto_callable k_noop = { .kernel_id = PTO_FUNC_NOOP };

static int submit_on(pto_orch *o, const struct pto_callable *k,
		     uint32_t kind, const struct pto_task *dep,
		     struct pto_task *h)
{
	struct pto_task_args a;
	int ret;

	pto_args_init(&a);
	pto_args_add_scalar(&a, 1);
	if (dep)
		pto_args_add_dep(&a, *dep);
	ret = pto_submit_next_level(o, k, &a, NULL, pto_on_kind(kind), h);
	pto_args_fini(&a);
	return ret;
}

/* Run 1: a hang on the AIC core (it never finishes), an AIV task after it. */
static int hang_dag(pto_orch *o, void *arg)
{
	struct pto_task h;
	int ret;

	(void)arg;
	ret = submit_on(o, &k_hang, PTO_WORKER_AIC, NULL, &h);
	return ret ? ret : submit_on(o, &k_noop, PTO_WORKER_AIV, &h, NULL);
}

/* Run 2: a task queued behind the hang (the AIC core never takes it). */
static int queued_dag(pto_orch *o, void *arg)
{
	(void)arg;
	return submit_on(o, &k_noop, PTO_WORKER_AIC, NULL, NULL);
}

/* The backend's stops (ORCH_TP_BACKEND_STOP), by any close. */
static _Atomic int stops;

static int stop_hook(void *ctx, struct pto_orch *o, int fp,
		     struct orch_slot *s)
{
	(void)ctx;
	(void)o;
	(void)s;
	if (fp == ORCH_TP_BACKEND_STOP)
		atomic_fetch_add_explicit(&stops, 1, memory_order_relaxed);
	return 0;
}

struct teardown {
	pto_orch *o;
	_Atomic int *go;
	bool close;
	int ret;
	int tries;
};

/*
 * A close retries while it times out (the runs end only when the abort
 * reaches the scheduler thread): at most 100 tries of 100 ms.
 */
static void *teardown_thread(void *arg)
{
	struct teardown *t = arg;

	while (!atomic_load_explicit(t->go, memory_order_relaxed))
		sched_yield();	/* with the others */
	if (!t->close) {
		t->ret = pto_orch_abort(t->o, 10000);
		return NULL;
	}
	do
		t->ret = pto_orch_close(t->o, 100);
	while (t->ret == -ETIMEDOUT && ++t->tries < 100);
	return NULL;
}

FIXTURE(abort) {
	struct pto_dev *dev;
	pto_orch *o;
	pto_run *r[2];
};

FIXTURE_VARIANT(abort) {
	int closes, aborts;
};

FIXTURE_VARIANT_ADD(abort, close_and_abort) { .closes = 1, .aborts = 1 };
FIXTURE_VARIANT_ADD(abort, two_aborts) { .closes = 0, .aborts = 2 };
FIXTURE_VARIANT_ADD(abort, two_closes_two_aborts) { .closes = 2, .aborts = 2 };

FIXTURE_SETUP(abort)
{
	struct pto_sched_config sc = { .threads = 1, .clusters = 1 };
	struct pto_orch_config oc = { .heap_ring_size = 1 << 20,
				      .timeout_ms = 10000 };
	int i;

	ASSERT_EQ(0, fake_open(&self->dev));
	ASSERT_EQ(0, pto_orch_create_device(self->dev, &oc, &sc, &self->o));
	EXPECT_EQ(1, atomic_load(&fk.launches));
	EXPECT_EQ(1, atomic_load(&fk.launch_evfd));
	/* Before the first submit: every reader comes after it. */
	atomic_store(&stops, 0);
	orch_set_fail_hook(self->o, stop_hook, NULL);
	ASSERT_EQ(0, pto_run_start(self->o, hang_dag, NULL, &self->r[0]));
	ASSERT_EQ(0, pto_run_start(self->o, queued_dag, NULL, &self->r[1]));
	/*
	 * The hang on the AIC core. Polled through the file, not waited for
	 * on anything the scheduler thread signals: that would order its
	 * work so far before the teardown threads' and hide a race between
	 * them.
	 */
	for (i = 0; i < 10000 && !fake_dispatched(0); i++)
		usleep(1000);
	ASSERT_NE(0, fake_dispatched(0));
}

FIXTURE_TEARDOWN(abort)
{
}

TEST_F_TIMEOUT(abort, close_and_abort_at_once, 60)
{
	struct teardown t[4];
	pthread_t th[4];
	_Atomic int go = 0;
	int n = variant->closes + variant->aborts, i;

	for (i = 0; i < n; i++) {
		t[i] = (struct teardown){ .o = self->o, .go = &go,
					  .close = i < variant->closes };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, teardown_thread,
					    &t[i]));
	}
	atomic_store_explicit(&go, 1, memory_order_relaxed);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, pthread_join(th[i], NULL));
		EXPECT_EQ(0, t[i].ret) TH_LOG("%s %d", t[i].close ? "close" : "abort", i);
	}
	/* The one close that stopped the backend, or this one. */
	EXPECT_EQ(0, pto_orch_close(self->o, 10000));
	EXPECT_EQ(0, pto_orch_close(self->o, 0));	/* closed already */
	EXPECT_EQ(0, pto_orch_abort(self->o, 0));
	EXPECT_EQ(1, atomic_load(&stops));
	orch_set_fail_hook(self->o, NULL, NULL);

	/* Run 1's hang stopped on its core, run 2's task never started. */
	EXPECT_EQ(-ECANCELED, pto_run_wait(self->r[0], 0));
	EXPECT_NE(NULL, strstr(pto_run_error(self->r[0]),
			       "orchestrator aborted (pto_orch_abort): task stopped on core 0"))
		TH_LOG("%s", pto_run_error(self->r[0]));
	EXPECT_EQ(-ECANCELED, pto_run_wait(self->r[1], 0));
	EXPECT_NE(NULL, strstr(pto_run_error(self->r[1]),
			       "orchestrator aborted (pto_orch_abort): task not started"))
		TH_LOG("%s", pto_run_error(self->r[1]));
	pto_run_release(self->r[0]);
	pto_run_release(self->r[1]);
	EXPECT_TRUE(ot_empty(self->o));

	/* Each core retired once, by the abort, whatever the number of
	 * aborts: the stop found them retired. */
	EXPECT_EQ(1, atomic_load(&fk.retires));
	for (i = 0; i < FAKE_CORES; i++)
		EXPECT_EQ(1, atomic_load(&fk.retired[i])) TH_LOG("core %d", i);
	EXPECT_EQ(0, atomic_load(&fk.unexpected));
	EXPECT_EQ(-ESHUTDOWN, pto_orch_run(self->o, queued_dag, NULL));
	EXPECT_EQ(0, pto_orch_destroy(self->o));
	pto_dev_close(self->dev);
	close(fk.mfd);
}

/* SUB workers on the device orchestrator: chains of host callbacks, each
 * a plain read-modify-write of its chain's counter, ordered only by the
 * INOUT dependency between consecutive tasks (a race is TSan's report). */
#define SUB_CHAINS 4
#define SUB_LINKS 200

static int bump(struct pto_task_ctx *c)
{
	int *v = (int *)(uintptr_t)c->tensors[0].t.data;

	(*v)++;
	return 0;
}

static const struct pto_callable k_bump = { .fn = bump };

static int chains_dag(pto_orch *o, void *arg)
{
	int *count = arg, i, k, ret = 0;
	struct pto_task_args a;

	pto_args_init(&a);
	for (i = 0; i < SUB_LINKS && !ret; i++)
		for (k = 0; k < SUB_CHAINS && !ret; k++) {
			struct pto_tensor t = pto_tensor_host(&count[k],
							      sizeof(int));

			pto_args_reset(&a);
			pto_args_add_tensor(&a, &t, PTO_INOUT);
			ret = pto_submit_sub(o, &k_bump, &a, NULL);
		}
	pto_args_fini(&a);
	return ret;
}

TEST(sub_workers_on_a_device)
{
	struct pto_sched_config sc = { .threads = 1, .clusters = 1,
				       .sub_threads = 2 };
	struct pto_orch_config oc = { .heap_ring_size = 1 << 20 };
	int count[SUB_CHAINS] = { 0 }, k;
	struct pto_dev *dev;
	pto_orch *o;

	ASSERT_EQ(0, fake_open(&dev));
	ASSERT_EQ(0, pto_orch_create_device(dev, &oc, &sc, &o));
	ASSERT_EQ(0, pto_orch_run(o, chains_dag, count));
	for (k = 0; k < SUB_CHAINS; k++)
		EXPECT_EQ(SUB_LINKS, count[k]) TH_LOG("chain %d", k);
	EXPECT_EQ(0, pto_orch_close(o, 10000));
	EXPECT_EQ(0, pto_orch_destroy(o));
	EXPECT_EQ(0, atomic_load(&fk.unexpected));
	pto_dev_close(dev);
	close(fk.mfd);
}

TEST_HARNESS_MAIN
