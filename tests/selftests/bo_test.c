// SPDX-License-Identifier: GPL-2.0
/*
 * GET_INFO and GM buffer object ioctls, mmap, and their error paths.
 * Runs in the VM with pto.ko loaded (default parameters or any others).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "kselftest_harness.h"
#include "pto_selftest.h"
#include "st_cgroup.h"

/* GM's reserved low range: never allocated (Documentation/abi.md). */
#define GM_RESERVED PTO_GM_RESERVED

FIXTURE(dev) {
	int fd;
	struct pto_info info;
};

FIXTURE_SETUP(dev)
{
	self->fd = open(PTO_DEV0, O_RDWR);
	ASSERT_LE(0, self->fd);
	memset(&self->info, 0, sizeof(self->info));
	ASSERT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_GET_INFO, &self->info));
}

FIXTURE_TEARDOWN(dev)
{
	close(self->fd);
}

TEST_F(dev, info_topology)
{
	uint32_t types[PTO_MAX_CORES + 4];
	struct pto_info info = {
		.core_types = (uintptr_t)types,
		.core_types_count = PTO_MAX_CORES + 4,
	};
	uint32_t i;

	memset(types, 0xff, sizeof(types));
	ASSERT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_GET_INFO, &info));
	EXPECT_EQ(PTO_ABI_MAJOR, info.abi_major);
	EXPECT_EQ(0, info.device);
	ASSERT_LE(1, info.clusters);
	ASSERT_GE(PTO_MAX_CLUSTERS, info.clusters);
	EXPECT_EQ(info.clusters * 3, info.cores);
	EXPECT_LE(1, info.lanes);
	EXPECT_GE(5, info.lanes);
	EXPECT_NE(0, info.gm_size);
	EXPECT_EQ(0, info.gm_align % 1024);
	EXPECT_NE(0, info.caps & PTO_CAP_MOCK);
	for (i = 0; i < info.cores; i++)
		EXPECT_EQ(i % 3 ? PTO_CORE_AIV : PTO_CORE_AIC, types[i]);
	/* Nothing past the core count is written. */
	EXPECT_EQ(0xffffffffu, types[info.cores]);
}

TEST_F(dev, info_partial_array)
{
	uint32_t types[2] = { 0, 0 };
	struct pto_info info = {
		.core_types = (uintptr_t)types,
		.core_types_count = 1,
	};

	ASSERT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_GET_INFO, &info));
	EXPECT_EQ(PTO_CORE_AIC, types[0]);
	EXPECT_EQ(0, types[1]);	/* only core_types_count entries written */
}

TEST_F(dev, info_bad_pointer_and_pad)
{
	struct pto_info info = { .core_types_count = 3 };

	EXPECT_EQ(-EFAULT, pto_sioctl(self->fd, PTO_IOCTL_GET_INFO, &info));
	info.core_types = 8;
	EXPECT_EQ(-EFAULT, pto_sioctl(self->fd, PTO_IOCTL_GET_INFO, &info));
	memset(&info, 0, sizeof(info));
	info.pad = 1;
	EXPECT_EQ(-EINVAL, pto_sioctl(self->fd, PTO_IOCTL_GET_INFO, &info));
}

TEST_F(dev, struct_size_compat)
{
	struct {
		struct pto_info info;
		uint64_t extra[2];
	} big;
	unsigned long cmd;

	/* A newer, larger struct with zero tail works. */
	memset(&big, 0, sizeof(big));
	cmd = PTO_IOWR_SIZED(PTO_IOCTL_GET_INFO, sizeof(big));
	ASSERT_EQ(0, pto_sioctl(self->fd, cmd, &big));
	EXPECT_EQ(PTO_ABI_MAJOR, big.info.abi_major);
	EXPECT_EQ(0, big.extra[0]);
	/* ... and is rejected when the unknown tail is not zero. */
	memset(&big, 0, sizeof(big));
	big.extra[1] = 1;
	EXPECT_EQ(-E2BIG, pto_sioctl(self->fd, cmd, &big));
	/* A struct shorter than the first version is -EINVAL. */
	cmd = PTO_IOWR_SIZED(PTO_IOCTL_GET_INFO, 8);
	EXPECT_EQ(-EINVAL, pto_sioctl(self->fd, cmd, &big));
}

TEST_F(dev, unknown_ioctls)
{
	struct pto_info info = { 0 };

	EXPECT_EQ(-ENOTTY, pto_sioctl(self->fd, _IOWR(PTO_IOCTL_BASE, 0x7f, struct pto_info), &info));
	/* The last number of pto's block is not a command yet. */
	EXPECT_EQ(-ENOTTY, pto_sioctl(self->fd, _IOWR(PTO_IOCTL_BASE, 0x3f, struct pto_info), &info));
	EXPECT_EQ(-ENOTTY, pto_sioctl(self->fd, _IOWR('Q', 0x00, struct pto_info), &info));
	/* GET_INFO's number under another type ('P' is other drivers'). */
	EXPECT_EQ(-ENOTTY, pto_sioctl(self->fd, _IOWR('P', 0x00, struct pto_info), &info));
	EXPECT_EQ(-ENOTTY, pto_sioctl(self->fd, _IOR(PTO_IOCTL_BASE, 0x00, struct pto_info), &info));
	EXPECT_EQ(-ENOTTY, pto_sioctl(self->fd, _IOW(PTO_IOCTL_BASE, 0x01, struct pto_bo_alloc), &info));
}

TEST_F(dev, freed_handles_are_not_reused_at_once)
{
	struct pto_bo_alloc a, b;
	struct pto_bo_free f = { 0 };
	void *p;

	ASSERT_EQ(0, st_bo_alloc(self->fd, 4096, &a));
	f.handle = a.handle;
	ASSERT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_BO_FREE, &f));
	ASSERT_EQ(0, st_bo_alloc(self->fd, 4096, &b));
	EXPECT_NE(a.handle, b.handle);
	EXPECT_NE(a.mmap_offset, b.mmap_offset);
	/* The stale offset maps nothing. */
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd, a.mmap_offset);
	EXPECT_EQ(MAP_FAILED, p);
}

TEST_F(dev, alloc_info_free)
{
	struct pto_bo_alloc a;
	struct pto_bo_info bi = { 0 };
	struct pto_bo_free f = { 0 };

	ASSERT_EQ(0, st_bo_alloc(self->fd, 8192, &a));
	EXPECT_NE(0, a.handle);
	EXPECT_NE(0, a.dev_addr);
	EXPECT_EQ(8192, a.size);
	EXPECT_EQ(0, a.dev_addr % self->info.gm_align);
	bi.handle = a.handle;
	ASSERT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_BO_INFO, &bi));
	EXPECT_EQ(a.size, bi.size);
	EXPECT_EQ(a.dev_addr, bi.dev_addr);
	EXPECT_EQ(a.mmap_offset, bi.mmap_offset);
	f.handle = a.handle;
	ASSERT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_BO_FREE, &f));
	/* The freed handle is gone for every ioctl. */
	EXPECT_EQ(-ENOENT, pto_sioctl(self->fd, PTO_IOCTL_BO_FREE, &f));
	EXPECT_EQ(-ENOENT, pto_sioctl(self->fd, PTO_IOCTL_BO_INFO, &bi));
}

/*
 * A struct the driver cannot write back (here: a read-only page) never
 * leaves a committed effect behind an -EFAULT. BO_ALLOC never publishes
 * the buffer whose handle the caller cannot learn; commands without Out fields
 * (BO_FREE, CLUSTER_ACQUIRE / _RELEASE) never write the struct, so they
 * succeed. Documentation/abi.md, Conventions.
 */
TEST_F(dev, out_copy_failure_leaves_no_side_effect)
{
	struct pto_core_stats st = { 0 };
	struct pto_bo_info bi = { 0 };
	struct pto_cluster_acquire *ca;
	struct pto_bo_alloc *a, b;
	struct pto_bo_free *f;
	char *ro;

	ro = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	a = (void *)ro;
	ca = (void *)(ro + 256);
	f = (void *)(ro + 512);
	a->size = 4096;
	ca->clusters = 1;
	ASSERT_EQ(0, st_bo_alloc(self->fd, 4096, &b));
	f->handle = b.handle;
	ASSERT_EQ(0, mprotect(ro, 4096, PROT_READ));

	EXPECT_EQ(-EFAULT, pto_sioctl(self->fd, PTO_IOCTL_BO_ALLOC, a));
	/* The handle it would have had (the next after b's) names nothing. */
	bi.handle = b.handle + 1;
	EXPECT_EQ(-ENOENT, pto_sioctl(self->fd, PTO_IOCTL_BO_INFO, &bi));

	EXPECT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_BO_FREE, f));
	bi.handle = b.handle;
	EXPECT_EQ(-ENOENT, pto_sioctl(self->fd, PTO_IOCTL_BO_INFO, &bi));

	EXPECT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_CLUSTER_ACQUIRE, ca));
	ASSERT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_CORE_STATS, &st));
	EXPECT_EQ(getpid(), (pid_t)st.owner);
	EXPECT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_CLUSTER_RELEASE, ca));
	ASSERT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_CORE_STATS, &st));
	EXPECT_EQ(0, st.owner);
	munmap(ro, 4096);
}

/* debugfs "info": gm_free of device 0, or -1. */
static long long dbg_gm_free(void)
{
	char path[64], line[128];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), PTO_DBG_FMT, 0, "info");
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "gm_free: %lld", &v) == 1)
			break;
	fclose(f);
	return v;
}

struct alloc_watch {
	int fd;
	uint32_t first;
	volatile int stop;
	int seen;
};

/* Looks for a buffer BO_ALLOC created but could not report. */
static void *alloc_watch_fn(void *arg)
{
	struct alloc_watch *w = arg;
	struct pto_bo_info bi;
	uint32_t h;

	while (!w->stop) {
		for (h = w->first; h < w->first + 64; h++) {
			memset(&bi, 0, sizeof(bi));
			bi.handle = h;
			if (!pto_sioctl(w->fd, PTO_IOCTL_BO_INFO, &bi))
				w->seen++;
		}
	}
	return NULL;
}

/*
 * BO_ALLOC publishes its buffer only after the reply is written: an
 * unwritable reply leaves no handle (not even for a moment, to another
 * thread of the file), no GM in use and the next handle still fresh.
 */
TEST_F(dev, alloc_efault_publishes_nothing)
{
	struct alloc_watch w = { .fd = self->fd };
	struct pto_bo_alloc *ro, b, c;
	long long gm_free;
	pthread_t th;
	int i;

	ro = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	ro->size = 4096;
	ASSERT_EQ(0, mprotect(ro, 4096, PROT_READ));
	ASSERT_EQ(0, st_bo_alloc(self->fd, 4096, &b));
	gm_free = dbg_gm_free();
	ASSERT_LE(0, gm_free);
	w.first = b.handle + 1;
	ASSERT_EQ(0, pthread_create(&th, NULL, alloc_watch_fn, &w));
	for (i = 0; i < 32; i++)
		EXPECT_EQ(-EFAULT, pto_sioctl(self->fd, PTO_IOCTL_BO_ALLOC, ro));
	w.stop = 1;
	pthread_join(th, NULL);
	EXPECT_EQ(0, w.seen);
	EXPECT_EQ(gm_free, dbg_gm_free());
	/* A later buffer gets a live handle and b is untouched. */
	ASSERT_EQ(0, st_bo_alloc(self->fd, 4096, &c));
	EXPECT_LT(b.handle, c.handle);
	EXPECT_NE(b.dev_addr, c.dev_addr);
	EXPECT_EQ(gm_free - 4096, dbg_gm_free());
	munmap(ro, 4096);
}

TEST_F(dev, alloc_sizes)
{
	struct pto_bo_alloc a;
	long page = sysconf(_SC_PAGESIZE);

	EXPECT_EQ(-EINVAL, st_bo_alloc(self->fd, 0, &a));
	EXPECT_EQ(-EINVAL, st_bo_alloc(self->fd, ~0ULL, &a));
	EXPECT_EQ(-EINVAL, st_bo_alloc(self->fd, self->info.gm_size + 1, &a));
	/* Unaligned sizes round up to whole pages. */
	ASSERT_EQ(0, st_bo_alloc(self->fd, 1, &a));
	EXPECT_EQ((uint64_t)page, a.size);
	ASSERT_EQ(0, st_bo_alloc(self->fd, page + 1, &a));
	EXPECT_EQ((uint64_t)page * 2, a.size);
	/*
	 * The whole GM can never be had: the low 64 KiB are reserved. A size
	 * beyond the rest is refused as invalid, on an idle device too, not
	 * as a shortage (-ENOMEM) that freeing could cure.
	 */
	EXPECT_EQ(-EINVAL, st_bo_alloc(self->fd, self->info.gm_size, &a));
	EXPECT_EQ(-EINVAL, st_bo_alloc(self->fd,
				       self->info.gm_size - GM_RESERVED + 1, &a));
}

/* The largest buffer, gm_size - 64 KiB, fits an idle device exactly. */
TEST_F(dev, alloc_largest)
{
	uint64_t want = self->info.gm_size - GM_RESERVED;
	struct pto_bo_alloc a, b;
	struct pto_bo_free f = { 0 };
	struct sysinfo si;

	ASSERT_EQ(0, sysinfo(&si));
	if (want > (uint64_t)si.freeram * si.mem_unit / 2)
		SKIP(return, "GM (%llu MiB) over half the free RAM: memory, not GM, runs out first",
		     (unsigned long long)(self->info.gm_size >> 20));
	ASSERT_EQ(0, st_bo_alloc(self->fd, want, &a));
	EXPECT_EQ(want, a.size);
	EXPECT_EQ(GM_RESERVED, a.dev_addr);
	/* Nothing is left: the next page is a shortage, not invalid. */
	EXPECT_EQ(-ENOMEM, st_bo_alloc(self->fd, 4096, &b));
	f.handle = a.handle;
	ASSERT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_BO_FREE, &f));
	EXPECT_EQ(0, st_bo_alloc(self->fd, 4096, &b));
}

TEST_F(dev, alloc_flags_and_pad)
{
	struct pto_bo_alloc a = { .size = 4096, .flags = 1 };
	struct pto_bo_free f = { .handle = 1, .pad = 1 };
	struct pto_bo_info bi = { .handle = 1, .pad = 1 };

	EXPECT_EQ(-EINVAL, pto_sioctl(self->fd, PTO_IOCTL_BO_ALLOC, &a));
	a.flags = 1ULL << 63;
	EXPECT_EQ(-EINVAL, pto_sioctl(self->fd, PTO_IOCTL_BO_ALLOC, &a));
	a.flags = 0;
	a.pad = 1;
	EXPECT_EQ(-EINVAL, pto_sioctl(self->fd, PTO_IOCTL_BO_ALLOC, &a));
	ASSERT_EQ(0, st_bo_alloc(self->fd, 4096, &a));
	f.handle = bi.handle = a.handle;
	EXPECT_EQ(-EINVAL, pto_sioctl(self->fd, PTO_IOCTL_BO_FREE, &f));
	EXPECT_EQ(-EINVAL, pto_sioctl(self->fd, PTO_IOCTL_BO_INFO, &bi));
	/* The rejected FREE did not free it. */
	bi.pad = 0;
	EXPECT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_BO_INFO, &bi));
}

TEST_F(dev, exhaustion_and_reuse)
{
	struct pto_bo_alloc a, b;
	struct pto_bo_free f = { 0 };
	uint64_t chunk = self->info.gm_size / 4;
	struct sysinfo si;

	ASSERT_EQ(0, sysinfo(&si));
	if (self->info.gm_size / 2 > (uint64_t)si.totalram * si.mem_unit)
		SKIP(return, "GM larger than RAM: memory, not GM, runs out first");

	/* Three quarters fit (the reserved low range eats into the fourth). */
	ASSERT_EQ(0, st_bo_alloc(self->fd, chunk, &a));
	ASSERT_EQ(0, st_bo_alloc(self->fd, chunk, &b));
	ASSERT_EQ(0, st_bo_alloc(self->fd, chunk, &b));
	EXPECT_EQ(-ENOMEM, st_bo_alloc(self->fd, chunk, &b));
	f.handle = a.handle;
	ASSERT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_BO_FREE, &f));
	ASSERT_EQ(0, st_bo_alloc(self->fd, chunk, &b));
	EXPECT_EQ(a.dev_addr, b.dev_addr);
}

TEST_F(dev, foreign_handle)
{
	struct pto_bo_alloc a;
	struct pto_bo_info bi = { 0 };
	struct pto_bo_free f = { 0 };
	int other = open(PTO_DEV0, O_RDWR);
	void *p;

	ASSERT_LE(0, other);
	ASSERT_EQ(0, st_bo_alloc(other, 4096, &a));
	/* Handles are per file: this fd has no such handle. */
	bi.handle = f.handle = a.handle;
	EXPECT_EQ(-ENOENT, pto_sioctl(self->fd, PTO_IOCTL_BO_INFO, &bi));
	EXPECT_EQ(-ENOENT, pto_sioctl(self->fd, PTO_IOCTL_BO_FREE, &f));
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd, a.mmap_offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	/* The owner still has it. */
	EXPECT_EQ(0, pto_sioctl(other, PTO_IOCTL_BO_INFO, &bi));
	close(other);
}

TEST_F(dev, mmap_read_write)
{
	struct pto_bo_alloc a;
	uint8_t *p, *q;
	size_t i;

	ASSERT_EQ(0, st_bo_alloc(self->fd, 3 * 4096, &a));
	p = mmap(NULL, a.size, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 a.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	for (i = 0; i < a.size; i++)
		ASSERT_EQ(0, p[i]);	/* zero-filled */
	for (i = 0; i < a.size; i++)
		p[i] = (uint8_t)(i * 7);
	/* A second mapping of the last page sees the same bytes. */
	q = mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd,
		 a.mmap_offset + 2 * 4096);
	ASSERT_NE(MAP_FAILED, q);
	for (i = 0; i < 4096; i++)
		ASSERT_EQ((uint8_t)((i + 2 * 4096) * 7), q[i]);
	munmap(q, 4096);
	munmap(p, a.size);
}

/* The 32-bit marker test pages carry: the page's index and a salt. */
static uint32_t page_mark(size_t i)
{
	return 0x5a000000u ^ (uint32_t)(i * 2654435761u);
}

/*
 * A buffer of many insertion batches (mmap maps it 32 pages at a time),
 * every page checked through mappings that start on and off a batch
 * boundary, in a forked child, after a move (mremap) and after a split
 * (munmap of a middle page). Page-count or reference mistakes would show
 * as wrong bytes here or as "Bad page" warnings (which fail the VM run).
 */
TEST_F(dev, mmap_many_pages_every_page)
{
	const size_t pages = 3 * 32 + 5, off = 7;
	struct pto_bo_alloc a;
	struct pto_bo_free f = { 0 };
	size_t page = 4096, i, bad;
	uint8_t *p, *q, *m;
	int status;
	pid_t pid;

	ASSERT_EQ(0, st_bo_alloc(self->fd, pages * page, &a));
	ASSERT_EQ(pages * page, a.size);
	p = mmap(NULL, a.size, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 a.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	for (i = 0; i < pages; i++) {
		ASSERT_EQ(0, p[i * page]);
		ASSERT_EQ(0, p[i * page + page - 1]);
		*(uint32_t *)(p + i * page) = page_mark(i);
		*(uint32_t *)(p + i * page + page - 4) = ~page_mark(i);
	}
	/* From page 7 on: the batches cross the buffer's at other pages. */
	q = mmap(NULL, a.size - off * page, PROT_READ, MAP_SHARED, self->fd,
		 a.mmap_offset + off * page);
	ASSERT_NE(MAP_FAILED, q);
	for (i = off; i < pages; i++) {
		ASSERT_EQ(page_mark(i), *(uint32_t *)(q + (i - off) * page))
			TH_LOG("page %zu", i);
		ASSERT_EQ(~page_mark(i),
			  *(uint32_t *)(q + (i - off) * page + page - 4));
	}

	/* A child sees every page and writes through its copy. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		for (i = bad = 0; i < pages; i++)
			bad += *(uint32_t *)(p + i * page) != page_mark(i);
		p[page + 8] = 0xc5;
		_exit(bad ? 1 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_EQ(0xc5, p[page + 8]);

	/* Moved (onto a reserved range): the same pages at the new address. */
	m = mmap(NULL, a.size - off * page, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, m);
	ASSERT_EQ(m, mremap(q, a.size - off * page, a.size - off * page,
			    MREMAP_MAYMOVE | MREMAP_FIXED, m));
	q = m;
	for (i = off; i < pages; i++)
		ASSERT_EQ(page_mark(i), *(uint32_t *)(q + (i - off) * page));

	/* Split: a hole in the middle, both halves keep their pages. */
	ASSERT_EQ(0, munmap(p + 40 * page, page));
	f.handle = a.handle;
	ASSERT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_BO_FREE, &f));
	for (i = 0; i < pages; i++) {
		if (i == 40)
			continue;
		ASSERT_EQ(page_mark(i), *(uint32_t *)(p + i * page))
			TH_LOG("page %zu after the split", i);
	}
	EXPECT_EQ(page_mark(40), *(uint32_t *)(q + (40 - off) * page));
	munmap(p, 40 * page);
	munmap(p + 41 * page, a.size - 41 * page);
	munmap(q, a.size - off * page);
}

TEST_F(dev, mmap_errors)
{
	struct pto_bo_alloc a;
	void *p;

	ASSERT_EQ(0, st_bo_alloc(self->fd, 2 * 4096, &a));
	/* Past the end. */
	p = mmap(NULL, 3 * 4096, PROT_READ, MAP_SHARED, self->fd, a.mmap_offset);
	EXPECT_EQ(MAP_FAILED, p);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd,
		 a.mmap_offset + 2 * 4096);
	EXPECT_EQ(MAP_FAILED, p);
	/* An offset no buffer has. */
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd,
		 a.mmap_offset + (1ULL << 32) * 100);
	EXPECT_EQ(MAP_FAILED, p);
	/* Executable or private mappings are refused. */
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, self->fd,
		 a.mmap_offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EPERM, errno);
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, self->fd, a.mmap_offset);
	EXPECT_EQ(MAP_FAILED, p);
	/* A good mapping cannot be made executable later. */
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd, a.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(-1, mprotect(p, 4096, PROT_READ | PROT_EXEC));
	munmap(p, 4096);
}

/*
 * A buffer mapping survives MADV_DONTNEED: the zapped PTE is faulted back
 * in to the same (live) page, not SIGBUS. The debug kernel (tinyconfig)
 * has no madvise(2): skipped there.
 */
TEST_F(dev, mmap_survives_madv_dontneed)
{
	struct pto_bo_alloc a;
	struct pto_bo_free f = { 0 };
	volatile uint32_t *p, *q;

	ASSERT_EQ(0, st_bo_alloc(self->fd, 3 * 4096, &a));
	p = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 a.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	/* The buffer's second page alone: the fault's page offset. */
	q = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 a.mmap_offset + 4096);
	ASSERT_NE(MAP_FAILED, q);
	p[0] = 0x1234;
	p[1024 + 5] = 0x5678;
	p[2048 + 7] = 0x9abc;
	if (madvise((void *)p, 3 * 4096, MADV_DONTNEED) && errno == ENOSYS) {
		munmap((void *)q, 4096);
		munmap((void *)p, 3 * 4096);
		SKIP(return, "no madvise(2) in this kernel");
	}
	ASSERT_EQ(0, madvise((void *)q, 4096, MADV_DONTNEED));
	EXPECT_EQ(0x5678, q[5]);
	/* A read, a write, and a page touched only after the BO_FREE. */
	EXPECT_EQ(0x1234, p[0]);
	p[1024 + 6] = 0x4321;
	EXPECT_EQ(0x4321, q[6]);
	f.handle = a.handle;
	ASSERT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_BO_FREE, &f));
	EXPECT_EQ(0x9abc, p[2048 + 7]);
	EXPECT_EQ(0x5678, p[1024 + 5]);
	munmap((void *)q, 4096);
	munmap((void *)p, 3 * 4096);
}

TEST(mapping_outlives_free_and_close)
{
	struct pto_bo_alloc a;
	struct pto_bo_free f = { 0 };
	uint32_t *p;
	int fd = open(PTO_DEV0, O_RDWR);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, st_bo_alloc(fd, 4096, &a));
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 a.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	p[0] = 0x1234;
	f.handle = a.handle;
	ASSERT_EQ(0, pto_sioctl(fd, PTO_IOCTL_BO_FREE, &f));
	close(fd);
	/* The pages stay until munmap. */
	EXPECT_EQ(0x1234, p[0]);
	p[1] = 5;
	EXPECT_EQ(5, p[1]);
	munmap(p, 4096);
}

/*
 * close() with a live buffer mapping releases nothing: the mapping holds
 * the file, whose release (clusters, cores, every buffer) runs at the
 * last munmap. Documentation/abi.md, Conventions.
 */
TEST(close_with_live_mapping_keeps_file)
{
	struct pto_cluster_acquire ca = { .clusters = 1 };
	struct pto_core_stats st = { 0 };
	struct pto_bo_alloc a;
	int fd, fd2;
	void *p;

	fd = open(PTO_DEV0, O_RDWR);
	ASSERT_LE(0, fd);
	fd2 = open(PTO_DEV0, O_RDWR);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, pto_sioctl(fd, PTO_IOCTL_CLUSTER_ACQUIRE, &ca));
	ASSERT_EQ(0, st_bo_alloc(fd, 4096, &a));
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 a.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	close(fd);
	EXPECT_EQ(-EBUSY, pto_sioctl(fd2, PTO_IOCTL_CLUSTER_ACQUIRE, &ca));
	ASSERT_EQ(0, pto_sioctl(fd2, PTO_IOCTL_CORE_STATS, &st));
	EXPECT_EQ(getpid(), (pid_t)st.owner);
	munmap(p, 4096);	/* the last reference: the release runs */
	EXPECT_EQ(0, pto_sioctl(fd2, PTO_IOCTL_CLUSTER_ACQUIRE, &ca));
	close(fd2);
}

TEST(freed_memory_is_not_seen_by_next_owner)
{
	struct pto_bo_alloc a, b;
	uint8_t *p;
	int fd1 = open(PTO_DEV0, O_RDWR), fd2;
	size_t i;

	ASSERT_LE(0, fd1);
	ASSERT_EQ(0, st_bo_alloc(fd1, 4096, &a));
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd1,
		 a.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	memset(p, 0xab, 4096);
	munmap(p, 4096);
	close(fd1);
	fd2 = open(PTO_DEV0, O_RDWR);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, st_bo_alloc(fd2, 4096, &b));
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd2, b.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	for (i = 0; i < 4096; i++)
		ASSERT_EQ(0, p[i]);
	munmap(p, 4096);
	close(fd2);
}

TEST_F(dev, larger_than_memory_is_enomem)
{
	struct pto_bo_alloc a;
	struct sysinfo si;
	uint64_t ram, want;

	ASSERT_EQ(0, sysinfo(&si));
	ram = (uint64_t)si.totalram * si.mem_unit;
	if (self->info.gm_size <= ram + (64 << 20))
		SKIP(return, "GM (%llu MiB) fits in RAM (%llu MiB): load with gm_mb > RAM",
		     (unsigned long long)(self->info.gm_size >> 20),
		     (unsigned long long)(ram >> 20));
	/* Fits in GM, not in the machine: -ENOMEM, and no kernel warning
	 * (the VM runner fails the boot on any). */
	want = ram + (32 << 20);
	EXPECT_EQ(-ENOMEM, st_bo_alloc(self->fd, want, &a));
	/* The device is fine afterwards. */
	EXPECT_EQ(0, st_bo_alloc(self->fd, 4096, &a));
}

/*
 * What a user makes the driver allocate is charged to its memory cgroup: a
 * buffer object's pages, struct and handle nodes (the maple tree's nodes come
 * from an unaccounted cache, bounded by the GM size). Measured on the struct
 * alone: in a cgroup of its own, the process's slab grows by at least 64 bytes
 * per buffer. cgroup2 is mounted only if nothing is there.
 */
TEST(bo_objects_charged_to_memcg)
{
	enum { N = 1024 };
	static struct pto_bo_alloc a[N];
	long long before, after;
	const char *skip = NULL;
	struct st_cg cg;
	int fd, i, ret;

	ret = st_cg_enter(&cg, "pto_bo_test", &skip);
	if (ret == 1)
		SKIP(return, "%s", skip);
	ASSERT_EQ(0, ret);

	fd = open(PTO_DEV0, O_RDWR);
	ASSERT_LE(0, fd);
	before = st_cg_stat(&cg, "slab");
	ASSERT_LE(0, before);
	for (i = 0; i < N; i++)
		ASSERT_EQ(0, st_bo_alloc(fd, 4096, &a[i]));
	after = st_cg_stat(&cg, "slab");
	EXPECT_LE(before + N * 64LL, after)
		TH_LOG("slab %lld -> %lld bytes for %d buffers", before, after, N);
	close(fd);
	EXPECT_EQ(0, st_cg_leave(&cg));
}

struct race_ctx {
	int fd;
	volatile int stop;
	volatile uint32_t last;
};

/* Handles are cyclic, so the next one is last + 1: free it as it appears. */
static void *free_next_handles(void *p)
{
	struct race_ctx *rc = p;

	while (!rc->stop) {
		struct pto_bo_free f = { .handle = rc->last + 1 + (rand() & 1) };

		pto_sioctl(rc->fd, PTO_IOCTL_BO_FREE, &f);
	}
	return NULL;
}

/*
 * BO_FREE of a handle racing its BO_ALLOC (handles are predictable): the
 * allocation must be complete before the handle is visible, and the reply
 * must not read a buffer another thread already freed. Meant for the
 * KASAN / lockdep kernel; on any kernel the device list stays consistent.
 */
TEST(alloc_free_race)
{
	static char text[1 << 16];
	struct race_ctx rc = { .fd = open(PTO_DEV0, O_RDWR) };
	struct pto_bo_alloc a;
	pthread_t th;
	int i, fd;
	ssize_t n;

	ASSERT_LE(0, rc.fd);
	ASSERT_EQ(0, pthread_create(&th, NULL, free_next_handles, &rc));
	for (i = 0; i < (int)st_scaled(20000); i++) {
		int ret = st_bo_alloc(rc.fd, 4096, &a);

		ASSERT_EQ(0, ret);
		ASSERT_NE(0, a.handle);
		ASSERT_EQ(4096, a.size);
		rc.last = a.handle;
	}
	rc.stop = 1;
	pthread_join(th, NULL);
	close(rc.fd);
	/* Nothing of the closed file is left on the device's list. */
	fd = open("/sys/kernel/debug/pto/pto0/bos", O_RDONLY);
	ASSERT_LE(0, fd);
	n = read(fd, text, sizeof(text) - 1);
	ASSERT_LT(0, n);
	text[n] = 0;
	close(fd);
	ASSERT_NE(NULL, strchr(text, '\n'));
	EXPECT_EQ(0, strchr(text, '\n')[1]) TH_LOG("left over: %s", text);
}

/*
 * A file opened read-only observes: GET_INFO, BO_INFO, CORE_STATS and
 * RETIRE_STATUS work; every command that changes state is -EBADF (as
 * write(2) on it), so read access to the node grants no control of the
 * device. A read-only shared mapping is refused for what it maps (the
 * file owns no cluster), not as a MAP_PRIVATE.
 */
TEST(rdonly_fd_observes_only)
{
	struct pto_info info = { 0 };
	struct pto_bo_alloc a = { .size = 4096 };
	struct pto_bo_free f = { .handle = 1 };
	struct pto_bo_info bi = { .handle = 1 };
	struct pto_cluster_acquire ca = { .clusters = 1 };
	struct pto_core_launch cl = { 0 };
	struct pto_doorbell db = { 0 };
	struct pto_core_stats st = { 0 };
	struct pto_core_retire r = { 0 };
	struct pto_retire_status rs = { 0 };
	struct pto_core_reset z = { 0 };
	void *p;
	int fd;

	fd = open(PTO_DEV0, O_RDONLY);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, pto_sioctl(fd, PTO_IOCTL_GET_INFO, &info));
	EXPECT_EQ(0, pto_sioctl(fd, PTO_IOCTL_CORE_STATS, &st));
	EXPECT_EQ(0, pto_sioctl(fd, PTO_IOCTL_RETIRE_STATUS, &rs));
	EXPECT_EQ(-ENOENT, pto_sioctl(fd, PTO_IOCTL_BO_INFO, &bi));
	EXPECT_EQ(-EBADF, pto_sioctl(fd, PTO_IOCTL_BO_ALLOC, &a));
	EXPECT_EQ(-EBADF, pto_sioctl(fd, PTO_IOCTL_BO_FREE, &f));
	EXPECT_EQ(-EBADF, pto_sioctl(fd, PTO_IOCTL_CLUSTER_ACQUIRE, &ca));
	EXPECT_EQ(-EBADF, pto_sioctl(fd, PTO_IOCTL_CLUSTER_RELEASE, &ca));
	cl.cores[0] = 1;
	EXPECT_EQ(-EBADF, pto_sioctl(fd, PTO_IOCTL_CORE_LAUNCH, &cl));
	db.cores[0] = 1;
	EXPECT_EQ(-EBADF, pto_sioctl(fd, PTO_IOCTL_DOORBELL, &db));
	r.cores[0] = 1;
	EXPECT_EQ(-EBADF, pto_sioctl(fd, PTO_IOCTL_CORE_RETIRE, &r));
	EXPECT_EQ(-EBADF, pto_sioctl(fd, PTO_IOCTL_CORE_RESET, &z));
	/* Nothing was acquired. */
	ASSERT_EQ(0, pto_sioctl(fd, PTO_IOCTL_CORE_STATS, &st));
	EXPECT_EQ(0, st.owner);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EPERM, errno);	/* not owned; not "MAP_PRIVATE" */
	close(fd);
}

TEST(rmmod_refused_while_open)
{
	int fd = open(PTO_DEV0, O_RDWR);

	ASSERT_LE(0, fd);
	/* delete_module(O_NONBLOCK) as rmmod does: the open file pins it. */
	EXPECT_EQ(-1, syscall(SYS_delete_module, "pto", O_NONBLOCK));
	EXPECT_TRUE(errno == EWOULDBLOCK || errno == EBUSY);
	EXPECT_EQ(0, access(PTO_DEV0, F_OK));
	close(fd);
}

TEST(device_node_mode)
{
	struct stat st;

	ASSERT_EQ(0, stat(PTO_DEV0, &st));
	EXPECT_EQ(0660, st.st_mode & 0777);
	EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST_HARNESS_MAIN
