// SPDX-License-Identifier: GPL-2.0
/*
 * Fault injection (debug kernel: CONFIG_FAULT_INJECTION, FAILSLAB,
 * FAIL_PAGE_ALLOC; the driver's own pto/fail_* attributes): every ioctl
 * and mmap path runs with injected failures, only in this process
 * (task-filter, make-it-fail around each call), every Nth call, then at
 * random, seeded. Each call returns 0 or an errno, a success is a whole
 * object, nothing is left behind (GM and the buffer list back to empty),
 * and the device runs a normal launch afterwards. The runner's kmemleak
 * scan after rmmod checks the unwinding freed everything.
 */
#include <sys/eventfd.h>
#include <pto/pto.h>
#include "kselftest_harness.h"
#include "pto_selftest.h"
#include "pto_core_util.h"

#define FI_DBG "/sys/kernel/debug/"
#define FI_MAX_N 40	/* every Nth for N = 1..FI_MAX_N */

/* The kernel's fault attributes and the driver's own. */
static const char *const fi_attrs[] = {
	"failslab", "fail_page_alloc", "pto/fail_core_start",
	"pto/fail_window_map",
};

static int fi_self = -1;	/* /proc/thread-self/make-it-fail, kept open */

static int fi_write(const char *attr, const char *file, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), FI_DBG "%s/%s", attr, file);
	return st_write_file(path, val);
}

/* Every attribute present (a debug kernel, pto.ko with mock faults)? */
static int fi_present(void)
{
	char path[128];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fi_attrs); i++) {
		snprintf(path, sizeof(path), FI_DBG "%s/probability",
			 fi_attrs[i]);
		if (access(path, W_OK))
			return 0;
	}
	return !access("/proc/thread-self/make-it-fail", W_OK);
}

/*
 * Arm @attr for tasks with make-it-fail only: every @interval-th call
 * (probability 100) or @prob percent of the calls (interval 1).
 */
static int fi_arm(const char *attr, unsigned int interval, unsigned int prob)
{
	char v[16];
	int ret = 0;

	ret |= fi_write(attr, "task-filter", "Y");
	ret |= fi_write(attr, "verbose", "0");
	ret |= fi_write(attr, "space", "0");
	ret |= fi_write(attr, "times", "-1");
	snprintf(v, sizeof(v), "%u", interval);
	ret |= fi_write(attr, "interval", v);
	snprintf(v, sizeof(v), "%u", prob);
	ret |= fi_write(attr, "probability", v);
	if (strncmp(attr, "pto/", 4))	/* the kernel's: GFP_KERNEL too */
		ret |= fi_write(attr, "ignore-gfp-wait", "N");
	if (!strcmp(attr, "fail_page_alloc")) {
		ret |= fi_write(attr, "ignore-gfp-highmem", "N");
		ret |= fi_write(attr, "min-order", "0");	/* default 1 */
	}
	return ret;
}

static void fi_disarm_all(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fi_attrs); i++) {
		fi_write(fi_attrs[i], "probability", "0");
		fi_write(fi_attrs[i], "interval", "1");
	}
}

static void fi_on(void)
{
	if (pwrite(fi_self, "1", 1, 0) != 1)
		abort();
}

static void fi_off(void)
{
	if (pwrite(fi_self, "0", 1, 0) != 1)
		abort();
}

/* One call with failures injected: its result, 0 or -errno. */
#define FI(call) ({ int __r; fi_on(); __r = (call) ? -errno : 0; fi_off(); __r; })

/* gm_free from debugfs info, or 0. */
static unsigned long long fi_gm_free(void)
{
	char line[128];
	unsigned long long v = 0;
	FILE *f = fopen(PTO_DBG0 "info", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "gm_free: %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* Buffers in debugfs bos (lines after the header), or -1. */
static int fi_bos(void)
{
	char line[256];
	int n = -1;
	FILE *f = fopen(PTO_DBG0 "bos", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	return n;
}

/* What a round saw: calls made, failed, and the first unexpected result. */
struct fi_round {
	unsigned int calls, failed;
	const char *bad;	/* the call that broke a rule, or NULL */
	int bad_ret;
};

/* @ret must be 0 or one of the errnos @ok (a 0-terminated list). */
static int fi_check(struct fi_round *r, const char *what, int ret,
		    const int *ok)
{
	r->calls++;
	if (!ret)
		return 0;
	r->failed++;
	for (; *ok; ok++)
		if (ret == -*ok)
			return ret;
	if (!r->bad) {
		r->bad = what;
		r->bad_ret = ret;
	}
	return ret;
}

static const int fi_enomem[] = { ENOMEM, 0 };
static const int fi_launch_err[] = { ENOMEM, EIO, 0 };
#define FI_CALL(r, what, call, ok) fi_check(r, what, FI(call), ok)

/* A created buffer is whole: BO_INFO knows it, with its size. */
static int fi_bo_whole(int fd, const struct pto_bo_alloc *a)
{
	struct pto_bo_info bi = { .handle = a->handle };

	return !pto_sioctl(fd, PTO_IOCTL_BO_INFO, &bi) && bi.size == a->size &&
	       bi.dev_addr == a->dev_addr;
}

/* A mapping made is usable: each page written and read back. */
static int fi_map_whole(volatile uint8_t *m, size_t len)
{
	size_t i;

	for (i = 0; i < len; i += 4096)
		m[i] = (uint8_t)(i >> 12) | 1;
	for (i = 0; i < len; i += 4096)
		if (m[i] != ((uint8_t)(i >> 12) | 1))
			return 0;
	return 1;
}

/* The launched part of a round: doorbell, stats, retire. */
static void fi_round_cores(struct fi_round *r, int fd, const uint64_t *cores)
{
	struct pto_doorbell db = { 0 };
	struct pto_core_stats st = { .core = 0 };
	struct pto_retire_status rs = { .core = 0 };
	struct pto_core_retire rt = { 0 };

	memcpy(db.cores, cores, sizeof(db.cores));
	memcpy(rt.cores, cores, sizeof(rt.cores));
	FI_CALL(r, "DOORBELL", ioctl(fd, PTO_IOCTL_DOORBELL, &db), fi_enomem);
	FI_CALL(r, "CORE_STATS", ioctl(fd, PTO_IOCTL_CORE_STATS, &st),
		fi_enomem);
	FI_CALL(r, "RETIRE_STATUS", ioctl(fd, PTO_IOCTL_RETIRE_STATUS, &rs),
		fi_enomem);
	FI_CALL(r, "CORE_RETIRE", ioctl(fd, PTO_IOCTL_CORE_RETIRE, &rt),
		fi_enomem);
}

/*
 * Every ioctl and mmap path once, each call with failures injected (the
 * checks between them with failures off). @size: the data buffer's.
 */
static void fi_round(struct fi_round *r, uint64_t size)
{
	uint64_t cores[PTO_CORE_MASK_WORDS] = { 0x7 };
	struct pto_cluster_acquire ca = { .clusters = 1 };
	struct pto_info info = { 0 };
	struct pto_bo_alloc data, pay;
	struct pto_core_launch cl = { 0 };
	struct pto_bo_free bf = { 0 };
	void *m = MAP_FAILED, *w = MAP_FAILED;
	int fd, efd, have_data, have_pay, owned, ret;

	fi_on();
	fd = open(PTO_DEV0, O_RDWR);
	ret = fd < 0 ? -errno : 0;
	fi_off();
	if (fi_check(r, "open", ret, fi_enomem))
		return;
	FI_CALL(r, "GET_INFO", ioctl(fd, PTO_IOCTL_GET_INFO, &info),
		fi_enomem);
	memset(&data, 0, sizeof(data));
	data.size = size;
	have_data = !FI_CALL(r, "BO_ALLOC", ioctl(fd, PTO_IOCTL_BO_ALLOC,
						  &data), fi_enomem);
	if (have_data && !fi_bo_whole(fd, &data) && !r->bad)
		r->bad = "BO_ALLOC: a handle without its buffer";
	memset(&pay, 0, sizeof(pay));
	pay.size = 4096;
	have_pay = !FI_CALL(r, "BO_ALLOC payload",
			    ioctl(fd, PTO_IOCTL_BO_ALLOC, &pay), fi_enomem);
	if (have_data) {
		fi_on();
		m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			 data.mmap_offset);
		ret = m == MAP_FAILED ? -errno : 0;
		fi_off();
		fi_check(r, "mmap bo", ret, fi_enomem);
		if (m != MAP_FAILED && !fi_map_whole(m, size) && !r->bad)
			r->bad = "mmap bo: a mapping that does not read back";
	}
	owned = !FI_CALL(r, "CLUSTER_ACQUIRE",
			 ioctl(fd, PTO_IOCTL_CLUSTER_ACQUIRE, &ca), fi_enomem);
	if (owned) {
		fi_on();
		w = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			 PTO_WINDOW_MMAP_OFFSET(0));
		ret = w == MAP_FAILED ? -errno : 0;
		fi_off();
		fi_check(r, "mmap window", ret, fi_enomem);
		if (w != MAP_FAILED)
			(void)*(volatile uint32_t *)w;	/* faults it in */
	}
	if (owned && have_pay) {
		efd = eventfd(0, EFD_CLOEXEC);
		memcpy(cl.cores, cores, sizeof(cl.cores));
		cl.payload_addr = pay.dev_addr;
		cl.flags = efd >= 0 ? PTO_LAUNCH_FLAG_EVENTFD : 0;
		cl.eventfd = efd >= 0 ? (uint32_t)efd : 0;
		if (!FI_CALL(r, "CORE_LAUNCH",
			     ioctl(fd, PTO_IOCTL_CORE_LAUNCH, &cl),
			     fi_launch_err))
			fi_round_cores(r, fd, cores);
		if (efd >= 0)
			close(efd);
	}
	if (owned)
		FI_CALL(r, "CLUSTER_RELEASE",
			ioctl(fd, PTO_IOCTL_CLUSTER_RELEASE, &ca), fi_enomem);
	if (have_data) {
		bf.handle = data.handle;
		FI_CALL(r, "BO_FREE", ioctl(fd, PTO_IOCTL_BO_FREE, &bf),
			fi_enomem);
	}
	if (m != MAP_FAILED)
		munmap(m, size);
	if (w != MAP_FAILED)
		munmap(w, 4096);
	fi_on();
	close(fd);	/* the payload buffer goes with the file */
	fi_off();
}

/*
 * After a round, failures off: nothing left (GM, buffers), quarantined
 * cores recovered by the debugfs reset, and a normal launch runs.
 */
static int fi_device_usable(unsigned long long gm_free)
{
	uint64_t cores[PTO_CORE_MASK_WORDS] = { 0x7 };
	struct core_launch *l;
	struct pto_dev *d;
	int ret;

	if (st_write_file(PTO_DBG0 "reset", "1"))
		return 1;
	if (fi_gm_free() != gm_free)
		return 2;
	if (fi_bos() != 0)
		return 3;
	if (pto_dev_open(0, &d))
		return 4;
	ret = core_cluster_acquire(d, 1) ? 5 :
	      core_launch_cores(d, cores, &l) ? 6 : 0;
	if (ret == 6)
		core_cluster_release(d, 1);
	if (!ret) {
		ret = pto_noop_all(l) ? 7 : 0;
		if (core_cluster_release(d, 1) && !ret)
			ret = 8;
		core_launch_free(l);
	}
	pto_dev_close(d);
	return ret;
}

/* Size of a round's data buffer: 1..16 pages, or 1 MiB, seeded. */
static uint64_t fi_size(void)
{
	uint32_t x = st_rnd();

	return x % 5 ? 4096ull * (1 + x % 16) : 1ull << 20;
}

FIXTURE(fi) {
	unsigned long long gm_free;
};

FIXTURE_SETUP(fi)
{
	if (!fi_present())
		SKIP(return, "no fault-injection files (not the debug kernel)");
	fi_self = open("/proc/thread-self/make-it-fail", O_WRONLY);
	ASSERT_LE(0, fi_self);
	st_seed_init();
	self->gm_free = fi_gm_free();
	ASSERT_NE(0, self->gm_free);
	ASSERT_EQ(0, fi_bos());
}

FIXTURE_TEARDOWN(fi)
{
	fi_disarm_all();
	if (fi_self >= 0)
		close(fi_self);
}

/*
 * Rounds with @attr armed: interval n for n = @n_lo..@n_hi (probability
 * 100), or probability @prob (interval 1), @rounds each.
 */
static void fi_sweep(struct __test_metadata *_metadata,
		     FIXTURE_DATA(fi) *self, const char *attr,
		     unsigned int n_lo, unsigned int n_hi, unsigned int prob,
		     unsigned int rounds)
{
	unsigned int n, k, calls = 0, failed = 0;
	struct fi_round r;
	int ret;

	/* The harness runs the body after a setup's SKIP: skip here too. */
	if (!fi_present())
		SKIP(return, "no fault-injection files (not the debug kernel)");
	for (n = n_lo; n <= n_hi; n++) {
		for (k = 0; k < rounds; k++) {
			ASSERT_EQ(0, fi_arm(attr, n, prob ? prob : 100));
			memset(&r, 0, sizeof(r));
			fi_round(&r, fi_size());
			fi_disarm_all();
			calls += r.calls;
			failed += r.failed;
			EXPECT_EQ(NULL, r.bad)
				TH_LOG("%s interval %u: %s returned %d", attr,
				       n, r.bad, r.bad_ret);
			ret = fi_device_usable(self->gm_free);
			EXPECT_EQ(0, ret)
				TH_LOG("%s interval %u: device check %d", attr,
				       n, ret);
			if (r.bad || ret)
				goto out;
		}
	}
out:
	TH_LOG("%s: %u calls, %u failed by injection", attr, calls, failed);
	/* The sweep must have made calls fail, or it tested nothing. */
	EXPECT_LT(0, failed);
}

/* Every Nth slab allocation of the process fails, N = 1..FI_MAX_N. */
TEST_F_TIMEOUT(fi, failslab_every_nth, 600)
{
	fi_sweep(_metadata, self, "failslab", 1, FI_MAX_N, 0, 1);
}

/* Every Nth page allocation of the process fails. */
TEST_F_TIMEOUT(fi, fail_page_alloc_every_nth, 600)
{
	fi_sweep(_metadata, self, "fail_page_alloc", 1, FI_MAX_N, 0, 1);
}

/* Random slab failures (10 %), seeded sizes. */
TEST_F_TIMEOUT(fi, failslab_probability, 600)
{
	fi_sweep(_metadata, self, "failslab", 1, 1, 10, st_scaled(100));
}

/* Random page allocation failures (10 %). */
TEST_F_TIMEOUT(fi, fail_page_alloc_probability, 600)
{
	fi_sweep(_metadata, self, "fail_page_alloc", 1, 1, 10,
		 st_scaled(100));
}

/* A mock core failing to start: the launch's -EIO, then the reset. */
TEST_F_TIMEOUT(fi, fail_core_start, 300)
{
	fi_sweep(_metadata, self, "pto/fail_core_start", 1, 3, 0, 1);
}

/* A window mmap failing. */
TEST_F_TIMEOUT(fi, fail_window_map, 300)
{
	fi_sweep(_metadata, self, "pto/fail_window_map", 1, 1, 0, 1);
}

TEST_HARNESS_MAIN
