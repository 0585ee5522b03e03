// SPDX-License-Identifier: MIT
/*
 * Values read on one thread while another updates them, under ThreadSanitizer:
 * the doorbell counter pto_orch_sched_stats() loads, and the heap ring's use
 * the back-pressure message reports. ioctl() below stands in for the driver,
 * so struct pto_dev and core_doorbell() run unchanged.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <linux/pto.h>
#include <pto/pto.h>
#include "core.h"
#include "fake_ioctl.h"
#include "kselftest_harness.h"
#include "orch_test.h"

/* The fake ioctl() (FAKE_IOCTL): pto's GET_INFO and DOORBELL succeed on any fd
 * (the test's device is /dev/null); every other ioctl goes to the kernel. */
static int fake_null_ioctl(int fd, unsigned long req, void *arg)
{
	if (_IOC_TYPE(req) != _IOC_TYPE(PTO_IOCTL_GET_INFO))
		return fake_ioctl_real(fd, req, arg);
	if (req == PTO_IOCTL_GET_INFO) {
		struct pto_info *i = arg;

		i->abi_major = PTO_ABI_MAJOR;
		i->abi_minor = PTO_ABI_MINOR;
		i->clusters = 1;
		i->cores = 0;
		return 0;
	}
	if (req == PTO_IOCTL_DOORBELL)
		return 0;
	errno = ENOTTY;
	return -1;
}

FAKE_IOCTL(fake_null_ioctl)

#define RINGS 20000

static void *ring_loop(void *arg)
{
	struct core_launch *l = arg;
	uint64_t cores[sizeof(((struct pto_doorbell *)0)->cores) /
		       sizeof(uint64_t)] = { 1 };
	int i;

	for (i = 0; i < RINGS; i++)
		if (core_doorbell(l, cores))
			return (void *)1;
	return NULL;
}

/*
 * The scheduler thread rings while another thread reads the count as
 * pto_orch_sched_stats() does (sched.c: an atomic load, no lock).
 */
TEST(doorbell_count_is_read_while_rung)
{
	struct core_launch *l = calloc(1, sizeof(*l));
	struct pto_dev *dev;
	uint64_t seen, last = 0;
	void *ret;
	pthread_t th;

	ASSERT_NE(NULL, l);
	ASSERT_EQ(0, pto_dev_open_path("/dev/null", &dev));
	l->dev = dev;
	l->evfd = -1;
	ASSERT_EQ(0, pthread_create(&th, NULL, ring_loop, l));
	do {
		seen = __atomic_load_n(&l->doorbells, __ATOMIC_RELAXED);
		EXPECT_LE(last, seen);	/* a count never goes back */
		last = seen;
	} while (seen < RINGS && !usleep(10));
	ASSERT_EQ(0, pthread_join(th, &ret));
	EXPECT_EQ(NULL, ret);
	EXPECT_EQ(RINGS, __atomic_load_n(&l->doorbells, __ATOMIC_RELAXED));
	pto_dev_close(dev);
	free(l);
}

/*
 * The held task ends when the test opens its gate, not after a fixed
 * time that a thread without a CPU could outlast. Relaxed, on purpose:
 * the gate must order nothing between the threads, or it would hide the
 * race this test is for from ThreadSanitizer.
 */
static _Atomic int hold_gate;

static int k_hold(struct pto_task_ctx *c)
{
	(void)c;
	while (!atomic_load_explicit(&hold_gate, memory_order_relaxed))
		usleep(1000);
	return 0;
}

/* One SUB task (@fn) with an auto-allocated OUTPUT of @nbytes. */
static int holder(pto_orch *o, pto_kernel_fn fn, uint64_t nbytes)
{
	struct pto_callable c = { .fn = fn };
	struct pto_tensor t = { .nbytes = nbytes };
	struct pto_task_args a;
	int err;

	pto_args_init(&a);
	pto_args_add_tensor(&a, &t, PTO_OUTPUT);
	err = pto_submit_sub(o, &c, &a, NULL);
	pto_args_fini(&a);
	return err;
}

static int k_noop(struct pto_task_ctx *c)
{
	(void)c;
	return 0;
}

static int orch_hold(pto_orch *o, void *arg)
{
	(void)arg;
	return holder(o, k_hold, 48 << 10);
}

struct pressed {
	int err;
	char msg[256];
};

/*
 * The heap is held by the previous run's task until the gate opens,
 * after this submit's 50 ms back-pressure timeout. Then stay here, taking
 * no lock, while that task ends and its release updates the ring's use:
 * a message formatted from the use read after dropping the ring's lock
 * is a read no lock orders against that write.
 */
static int orch_pressed(pto_orch *o, void *arg)
{
	struct pressed *p = arg;

	p->err = holder(o, k_noop, 32 << 10);
	snprintf(p->msg, sizeof(p->msg), "%s", pto_orch_error(o));
	atomic_store_explicit(&hold_gate, 1, memory_order_relaxed);
	ot_sleep_ms(400);
	return p->err;
}

TEST(heap_pressure_message_is_read_under_the_ring_lock)
{
	struct pto_orch_config cfg = { .heap_ring_size = 64 << 10,
				       .task_window = 16, .timeout_ms = 50 };
	unsigned long long want = 0, used = 0, size = 0;
	struct pressed p = { 0, "" };
	pto_run *r1, *r2;
	pto_orch *o;
	int ring = -1;
	const char *at;

	ASSERT_EQ(0, pto_orch_create_inproc(&cfg, &o));
	atomic_store_explicit(&hold_gate, 0, memory_order_relaxed);
	ASSERT_EQ(0, pto_run_start(o, orch_hold, NULL, &r1));
	EXPECT_EQ(-ETIMEDOUT, pto_run_start(o, orch_pressed, &p, &r2));
	EXPECT_EQ(-ETIMEDOUT, p.err);
	at = strstr(p.msg, "(ring ");
	ASSERT_NE(NULL, at) TH_LOG("message: %s", p.msg);
	ASSERT_EQ(4, sscanf(at, "(ring %d, %llu bytes wanted, %llu of %llu in use)",
			    &ring, &want, &used, &size)) TH_LOG("message: %s", p.msg);
	EXPECT_EQ(0, ring);
	EXPECT_EQ(32 << 10, want);
	EXPECT_EQ(48 << 10, used);	/* as it was at the timeout */
	EXPECT_EQ(64 << 10, size);
	EXPECT_EQ(0, pto_run_wait(r1, -1));
	EXPECT_EQ(-ETIMEDOUT, pto_run_wait(r2, -1));
	pto_run_release(r1);
	pto_run_release(r2);
	EXPECT_TRUE(ot_empty(o));
	EXPECT_EQ(0, pto_orch_close(o, 2000));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

TEST_HARNESS_MAIN
