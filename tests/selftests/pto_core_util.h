/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the core selftests: payload builders, a blocking "run one
 * task" on a launched core, and CPU references of the built-in kernels
 * (same semantics as kernel/pto_mock_fp.c: one float op per element,
 * double accumulation for reduce_sum and matmul).
 */
#ifndef PTO_CORE_UTIL_H
#define PTO_CORE_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core.h"

static inline uint64_t pto_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/*
 * Seeded randomness of the core tests: xorshift32 (every bit usable; an
 * LCG's low bits have short periods). st_seed_init() takes PTO_SEED or the
 * clock and prints the seed so a failure can be reproduced.
 */
static unsigned int st_seed;

static inline uint32_t st_rnd(void)
{
	static uint32_t x;

	if (!x)
		x = st_seed ? st_seed : 1;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return x;
}

static inline void st_seed_init(void)
{
	const char *s = getenv("PTO_SEED");

	st_seed = s ? (unsigned int)strtoul(s, NULL, 0) :
		      (unsigned int)pto_now_ns();
	printf("# seed %u (PTO_SEED=%u reproduces)\n", st_seed, st_seed);
	fflush(stdout);
}

static inline void pto_tensor_set(struct pto_tensor_desc *t, uint64_t addr,
				  uint32_t dtype, uint32_t rank,
				  const uint32_t *shape,
				  const uint64_t *strides)
{
	uint32_t i;

	memset(t, 0, sizeof(*t));
	t->addr = addr;
	t->dtype = dtype;
	t->rank = rank;
	for (i = 0; i < rank; i++) {
		t->shape[i] = shape[i];
		t->strides[i] = strides[i];
	}
}

/* Contiguous row-major strides. */
static inline void pto_strides_rm(uint32_t rank, const uint32_t *shape,
				  uint64_t *strides)
{
	uint64_t s = 1;
	int i;

	for (i = (int)rank - 1; i >= 0; i--) {
		strides[i] = s;
		s *= shape[i];
	}
}

/*
 * Dispatch @p on core @c of @l and wait for it (spin on COND, sleep in
 * poll() after a while). Returns the task status, or -errno.
 */
static inline int pto_run1(struct core_launch *l, struct core_rc *c,
			   const struct pto_payload *p)
{
	struct core_done done[2];
	uint64_t mask[PTO_CORE_MASK_WORDS] = { 0 };
	uint64_t t0 = pto_now_ns();
	uint32_t id;
	int ring, n, ret, i;

	while (c->ninflight) {
		n = core_rc_reap(c, done);
		if (!n && pto_now_ns() - t0 > 10000000000ull)
			return -ETIMEDOUT;
	}
	memcpy(core_rc_next_payload(c), p, sizeof(*p));
	id = core_rc_dispatch(c, &ring);
	if (ring) {
		mask[c->index / 64] |= 1ull << (c->index % 64);
		ret = core_doorbell(l, mask);
		if (ret)
			return ret;
	}
	for (;;) {
		n = core_rc_reap(c, done);
		for (i = 0; i < n; i++)
			if (done[i].id == id)
				return (int)done[i].status;
		if (pto_now_ns() - t0 > 20000000000ull)
			return -ETIMEDOUT;
		if (pto_now_ns() - t0 > 200000) {
			ret = core_launch_wait(l, 1000);
			if (ret && ret != -ETIMEDOUT)
				return ret;
		}
	}
}

/* How long st_wait_until() polls before it gives up. */
#define ST_WAIT_NS 10000000000ull

/*
 * Evaluate @cond every millisecond until it holds, for at most
 * ST_WAIT_NS (10 s): a bounded wait for something the cores' or the
 * kernel's threads do once they get a CPU. Its value: @cond's last one
 * (nonzero: it held). On timeout it says so on the test's output; the
 * caller checks what it waited for. @cond may have side effects (it is
 * evaluated once per poll): a read that fails can end the wait too.
 */
#define st_wait_until(cond) ({						\
	uint64_t __st_t0 = pto_now_ns();				\
	int __st_ok;							\
									\
	while (!(__st_ok = !!(cond)) &&					\
	       pto_now_ns() - __st_t0 < ST_WAIT_NS)			\
		usleep(1000);						\
	if (!__st_ok)							\
		ksft_print_msg("%s:%d: not within 10 s: %s\n",		\
			       __FILE__, __LINE__, #cond);		\
	__st_ok;							\
})

/*
 * Wait until core @c took task @id: COND shows the id with a state (ACK
 * or FIN). @t0: the time before the dispatch; fails the test 10 s after
 * it. Needs kselftest_harness.h (included before this header).
 */
static inline void st_wait_taken(struct __test_metadata *_metadata,
				 struct core_rc *c, uint32_t id, uint64_t t0)
{
	uint32_t cond;

	do {
		cond = core_win_read(c, PTO_REG_COND);
		ASSERT_GT(10000000000ull, pto_now_ns() - t0);
	} while ((cond & PTO_COND_ID_MASK) != id ||
		 !(cond & PTO_COND_STATE_MASK));
}

/* One NOOP task on every core of @l. 0, or -1 if one did not end OK. */
static inline int pto_noop_all(struct core_launch *l)
{
	struct pto_payload noop = { .func_id = PTO_FUNC_NOOP };
	unsigned int k;

	for (k = 0; k < l->ncores; k++)
		if (pto_run1(l, &l->core[k], &noop) != PTO_TASK_OK)
			return -1;
	return 0;
}

static inline float pto_bits_f(uint32_t b)
{
	float f;

	memcpy(&f, &b, 4);
	return f;
}

static inline uint32_t pto_f_bits(float f)
{
	uint32_t b;

	memcpy(&b, &f, 4);
	return b;
}

#endif
