// SPDX-License-Identifier: MIT
/*
 * pto_bo_map() without a device (GET_INFO, BO_ALLOC / BO_FREE faked on
 * /dev/null, mmap() counted): two threads mapping one buffer at once get one
 * address and one mapping stays; a mapped buffer is mapped once, and
 * pto_bo_free() / pto_dev_close() unmap it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/pto.h>
#include <pto/pto.h>
#include "fake_ioctl.h"
#include "kselftest_harness.h"

#define FAKE_HANDLE 7
#define FAKE_DEV_ADDR 0x100000ULL
#define FAKE_OFFSET 0x10000ULL

static int dev_fd = -1;			/* the fd mmap() fakes */
static _Atomic int maps, unmaps;	/* of dev_fd's mappings */
static _Atomic int frees;		/* BO_FREE ioctls */
static _Atomic int arrived;		/* mmap() callers, for the rendezvous */
static int rendezvous;			/* hold a caller until this many came */
static void *_Atomic fake[8];		/* dev_fd's live mappings */

/* The fake ioctl() (FAKE_IOCTL): pto's GET_INFO, BO_ALLOC and BO_FREE. */
static int fake_map_ioctl(int fd, unsigned long req, void *arg)
{
	if (req == PTO_IOCTL_GET_INFO) {
		struct pto_info *i = arg;

		i->abi_major = PTO_ABI_MAJOR;
		i->abi_minor = PTO_ABI_MINOR;
		i->clusters = 1;
		i->cores = PTO_CORES_PER_CLUSTER;
		i->gm_size = 1 << 20;
		i->gm_align = 4096;
		i->window_size = (uint32_t)sysconf(_SC_PAGESIZE);
		i->caps = PTO_CAP_MOCK;
		return 0;
	}
	if (req == PTO_IOCTL_BO_ALLOC) {
		struct pto_bo_alloc *a = arg;

		a->size = (a->size + 4095) & ~4095ULL;
		a->handle = FAKE_HANDLE;
		a->dev_addr = FAKE_DEV_ADDR;
		a->mmap_offset = FAKE_OFFSET;
		return 0;
	}
	if (req == PTO_IOCTL_BO_FREE) {
		frees++;
		return ((struct pto_bo_free *)arg)->handle == FAKE_HANDLE ? 0 :
			(errno = EINVAL, -1);
	}
	return fake_ioctl_real(fd, req, arg);
}

FAKE_IOCTL(fake_map_ioctl)

/* Wait up to 2 s for @n callers of mmap() on dev_fd: a fix that
 * serialised the callers (a lock) would never bring the second. */
static void wait_arrivals(int n)
{
	int i;

	for (i = 0; i < 2000 && atomic_load(&arrived) < n; i++)
		usleep(1000);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p;
	int i;

	if (fd != dev_fd || fd < 0)
		return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	if (off != (off_t)FAKE_OFFSET || !(flags & MAP_SHARED)) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	arrived++;
	if (rendezvous)
		wait_arrivals(rendezvous);
	p = (void *)syscall(SYS_mmap, addr, len, prot,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return p;
	for (i = 0; i < 8; i++) {
		void *none = NULL;

		if (atomic_compare_exchange_strong(&fake[i], &none, p))
			break;
	}
	maps++;
	return p;
}

int munmap(void *addr, size_t len)
{
	int i;

	for (i = 0; i < 8; i++) {
		void *p = addr;

		if (atomic_compare_exchange_strong(&fake[i], &p, NULL)) {
			unmaps++;
			break;
		}
	}
	return (int)syscall(SYS_munmap, addr, len);
}

static struct pto_dev *open_fake(struct __test_metadata *_metadata)
{
	struct pto_dev *dev;

	ASSERT_EQ(0, pto_dev_open_path("/dev/null", &dev));
	dev_fd = pto_dev_fd(dev);
	return dev;
}

struct mapper {
	struct pto_bo *bo;
	pthread_barrier_t *start;
	void *addr;
	int ret;
};

static void *map_thread(void *arg)
{
	struct mapper *m = arg;

	pthread_barrier_wait(m->start);
	m->ret = pto_bo_map(m->bo, &m->addr);
	return NULL;
}

/*
 * Two threads map one unmapped buffer at once; mmap() holds the first
 * until the second has arrived too, so both found the buffer unmapped.
 * Both get the same address, which later calls return, and exactly one
 * mapping is left (the loser's was unmapped); pto_bo_free() unmaps it.
 */
TEST(concurrent_first_maps_share_one_mapping)
{
	struct mapper m[2];
	pthread_barrier_t start;
	pthread_t th[2];
	struct pto_dev *dev = open_fake(_metadata);
	struct pto_bo *bo;
	void *again;
	int i;

	ASSERT_EQ(0, pto_bo_alloc(dev, 8192, 0, &bo));
	ASSERT_EQ(8192u, pto_bo_size(bo));
	pthread_barrier_init(&start, NULL, 2);
	rendezvous = 2;
	for (i = 0; i < 2; i++) {
		m[i] = (struct mapper){ .bo = bo, .start = &start, .ret = 1 };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, map_thread, &m[i]));
	}
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	rendezvous = 0;
	pthread_barrier_destroy(&start);
	EXPECT_EQ(0, m[0].ret);
	EXPECT_EQ(0, m[1].ret);
	/* Both came to mmap(): the interleaving under test happened. */
	EXPECT_EQ(2, atomic_load(&arrived));
	EXPECT_NE(NULL, m[0].addr);
	EXPECT_EQ(m[0].addr, m[1].addr);
	EXPECT_EQ(1, atomic_load(&maps) - atomic_load(&unmaps));
	ASSERT_EQ(0, pto_bo_map(bo, &again));
	EXPECT_EQ(m[0].addr, again);
	EXPECT_EQ(2, atomic_load(&maps));	/* no third mmap() */
	/* A mapping that is still there: written through one caller's
	 * address, read through a later call's. */
	((uint32_t *)m[0].addr)[1000] = 0x5a5a1234;
	EXPECT_EQ(0x5a5a1234u, ((uint32_t *)again)[1000]);
	EXPECT_EQ(0, pto_bo_free(bo));
	EXPECT_EQ(0, atomic_load(&maps) - atomic_load(&unmaps));
	EXPECT_EQ(1, atomic_load(&frees));
	pto_dev_close(dev);
}

/* One caller: one mmap(), none on later calls; pto_dev_close() unmaps
 * and frees (BO_FREE) a buffer the caller did not free. */
TEST(map_once_and_close_unmaps)
{
	struct pto_dev *dev = open_fake(_metadata);
	struct pto_bo *bo;
	void *a, *b;

	ASSERT_EQ(0, pto_bo_alloc(dev, 4096, 0, &bo));
	ASSERT_EQ(0, pto_bo_map(bo, &a));
	ASSERT_EQ(0, pto_bo_map(bo, &b));
	EXPECT_EQ(a, b);
	EXPECT_EQ(1, atomic_load(&maps));
	EXPECT_EQ(0, atomic_load(&unmaps));
	pto_dev_close(dev);
	EXPECT_EQ(1, atomic_load(&unmaps));
	EXPECT_EQ(1, atomic_load(&frees));	/* not left to the fd's close */
}

TEST_HARNESS_MAIN
