// SPDX-License-Identifier: GPL-2.0
/*
 * Randomized ioctl / mmap smoke test: random command numbers, sizes and
 * struct bytes for a bounded count, on fresh and busy files. The kernel log
 * check of the VM runner is the real assertion (no WARN/BUG/oops/leak); this
 * program checks that every call returns a sane errno and that the device
 * still works afterwards. The seed is printed; PTO_FUZZ_SEED reproduces it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <linux/pto_dump.h>
#include "kselftest_harness.h"
#include "pto_selftest.h"

#define FUZZ_ITERS 20000
/* Every number of pto's block (uapi/linux/pto.h, PTO_IOCTL_BASE). */
#define FUZZ_MAX_NR 0x40

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64*: tiny, seedable, good enough to shake an ABI. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

/* Mostly small values and zeros, so validation passes often enough to
 * reach deeper code; sometimes anything at all.
 */
static uint64_t rnd_field(void)
{
	switch (rnd() % 6) {
	case 0:
	case 1:
		return 0;
	case 2:
		return rnd() % 16;
	case 3:
		return 4096ULL << (rnd() % 12);
	case 4:
		return 1ULL << (rnd() % 64);
	default:
		return rnd();
	}
}

static int errno_is_sane(int e)
{
	switch (e) {
	case EINVAL: case ENOTTY: case E2BIG: case EFAULT: case ENOENT:
	case ENOMEM: case EBUSY: case EPERM: case ENOSPC: case EAGAIN:
	case ETIMEDOUT: case EOVERFLOW: case ERANGE: case ENODEV: case EIO:
	case EINTR: case EALREADY: case EACCES: case ESRCH: case EBADF:
	case ENOSYS: case EOPNOTSUPP: case EEXIST: case ECANCELED:
		return 1;
	default:
		return 0;
	}
}

/*
 * The fuzz's files are closed: a lane one of them bound (an all-zero bind
 * is valid) is free again or quarantined, never still bound; after the
 * reset every lane binds. So the suite's next program finds them free.
 */
static void lanes_recover(struct __test_metadata *_metadata, int fd)
{
	struct pto_dump_reset rs = { 0 };
	struct pto_info info = { 0 };
	struct pto_dump_status st;
	struct pto_dump_bind b;
	struct pto_dump_lane l;
	uint32_t i;

	ASSERT_EQ(0, pto_sioctl(fd, PTO_IOCTL_GET_INFO, &info));
	for (i = 0; i < info.lanes; i++) {
		memset(&st, 0, sizeof(st));
		st.lane = i;
		ASSERT_EQ(0, pto_sioctl(fd, PTO_IOCTL_DUMP_STATUS, &st));
		if (st.state != PTO_LANE_FREE)
			TH_LOG("lane %u: state %u after the fuzz", i, st.state);
		EXPECT_TRUE(st.state == PTO_LANE_FREE ||
			    st.state == PTO_LANE_QUARANTINED);
	}
	ASSERT_EQ(0, pto_sioctl(fd, PTO_IOCTL_DUMP_RESET, &rs));
	EXPECT_EQ(0, rs.remaining);
	for (i = 0; i < info.lanes; i++) {
		memset(&b, 0, sizeof(b));
		b.lane = i;
		b.level = PTO_DUMP_FULL;
		EXPECT_EQ(0, pto_sioctl(fd, PTO_IOCTL_DUMP_BIND, &b));
		memset(&l, 0, sizeof(l));
		l.lane = i;
		EXPECT_EQ(0, pto_sioctl(fd, PTO_IOCTL_DUMP_UNBIND, &l));
	}
}

TEST(random_ioctls)
{
	struct pto_bo_alloc alloc;
	uint64_t buf[64];
	unsigned long seed;
	const char *env = getenv("PTO_FUZZ_SEED");
	int fd = -1, i, insane = 0;

	seed = env ? strtoul(env, NULL, 0) : (unsigned long)time(NULL);
	rng_state = seed | 1;
	TH_LOG("seed %lu (PTO_FUZZ_SEED=%lu reproduces)", seed, seed);

	for (i = 0; i < FUZZ_ITERS; i++) {
		unsigned int nr = rnd() % FUZZ_MAX_NR;
		unsigned int size = (rnd() % 3) ? (rnd() % 16) * 8 : rnd() % 300;
		unsigned int dir = (rnd() % 8) ? (_IOC_READ | _IOC_WRITE) : rnd() % 4;
		unsigned long cmd;
		size_t j;
		int ret;

		if (fd < 0 || rnd() % 512 == 0) {
			if (fd >= 0)
				close(fd);
			fd = open(PTO_DEV0, O_RDWR);
			ASSERT_LE(0, fd);
		}
		if (size > sizeof(buf))
			size = sizeof(buf);
		for (j = 0; j < sizeof(buf) / sizeof(buf[0]); j++)
			buf[j] = rnd_field();
		cmd = _IOC(dir, (rnd() % 16) ? PTO_IOCTL_BASE : rnd() % 256, nr,
			   size);
		ret = ioctl(fd, cmd, buf);
		if (ret < 0 && !errno_is_sane(errno)) {
			TH_LOG("seed %lu iter %d cmd %#lx: errno %d", seed, i,
			       cmd, errno);
			insane++;
		}
		if (rnd() % 64 == 0) {
			/* Unmap all of it: a page left mapped keeps the file
			 * alive past close(), and with it any lane it bound.
			 */
			size_t len = 4096 << (rnd() % 4);
			void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
				       MAP_SHARED, fd,
				       (off_t)(rnd_field() & ~4095ULL));

			if (p != MAP_FAILED)
				munmap(p, len);
		}
	}
	close(fd);
	EXPECT_EQ(0, insane);

	/* The device still works. */
	fd = open(PTO_DEV0, O_RDWR);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, st_bo_alloc(fd, 4096, &alloc));
	EXPECT_EQ(4096, alloc.size);
	lanes_recover(_metadata, fd);
	close(fd);
}

TEST_HARNESS_MAIN
