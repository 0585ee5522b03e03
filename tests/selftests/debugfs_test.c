// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs /sys/kernel/debug/pto/pto0/{info,bos} show what the driver holds;
 * and through them, what libpto's device layer (pto/pto.h) leaves there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <time.h>
#include <pto/pto.h>
#include "kselftest_harness.h"
#include "pto_selftest.h"

#define DBG "/sys/kernel/debug/pto/pto0/"

static int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n, off = 0;

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf + off, len - 1 - off)) > 0)
		off += n;
	close(fd);
	buf[off] = 0;
	return 0;
}

/* The bos line of the buffer at @addr: its size and reference count. */
static int find_bo(const char *text, uint64_t addr, uint64_t *size,
		   unsigned int *refs)
{
	const char *line = text;

	while (line && *line) {
		unsigned long long a, s;
		unsigned int owner, handle, r;

		if (sscanf(line, "%u %u 0x%llx %llu %u", &owner, &handle, &a,
			   &s, &r) == 5 && a == addr) {
			*size = s;
			*refs = r;
			return 1;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return 0;
}

TEST(info_matches_get_info)
{
	static char text[4096];
	struct pto_info info = { 0 };
	char want[64];
	int fd = open(PTO_DEV0, O_RDWR);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pto_sioctl(fd, PTO_IOCTL_GET_INFO, &info));
	ASSERT_EQ(0, read_file(DBG "info", text, sizeof(text)));
	snprintf(want, sizeof(want), "clusters: %u\n", info.clusters);
	EXPECT_NE(NULL, strstr(text, want));
	snprintf(want, sizeof(want), "gm_size:  %llu\n",
		 (unsigned long long)info.gm_size);
	EXPECT_NE(NULL, strstr(text, want));
	close(fd);
}

TEST(bos_tracks_handle_and_mappings)
{
	static char text[1 << 16];
	struct pto_bo_alloc a;
	struct pto_bo_free f = { 0 };
	unsigned int refs = 0;
	uint64_t size = 0;
	void *p;
	int fd = open(PTO_DEV0, O_RDWR);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, st_bo_alloc(fd, 3 * 4096, &a));
	ASSERT_EQ(0, read_file(DBG "bos", text, sizeof(text)));
	ASSERT_TRUE(find_bo(text, a.dev_addr, &size, &refs));
	EXPECT_EQ(3 * 4096, size);
	EXPECT_EQ(1, refs);		/* the handle */

	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, a.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, read_file(DBG "bos", text, sizeof(text)));
	ASSERT_TRUE(find_bo(text, a.dev_addr, &size, &refs));
	EXPECT_EQ(2, refs);		/* handle + mapping */

	f.handle = a.handle;
	ASSERT_EQ(0, pto_sioctl(fd, PTO_IOCTL_BO_FREE, &f));
	ASSERT_EQ(0, read_file(DBG "bos", text, sizeof(text)));
	ASSERT_TRUE(find_bo(text, a.dev_addr, &size, &refs));
	EXPECT_EQ(1, refs);		/* only the mapping keeps it */

	munmap(p, 4096);
	ASSERT_EQ(0, read_file(DBG "bos", text, sizeof(text)));
	EXPECT_FALSE(find_bo(text, a.dev_addr, &size, &refs));
	close(fd);
}

struct churn {
	int fd;
	volatile int stop;
	unsigned long cycles;
	int err;
};

static void *alloc_free_loop(void *arg)
{
	struct churn *c = arg;
	struct pto_bo_alloc a;
	struct pto_bo_free f = { 0 };

	while (!c->stop) {
		c->err = st_bo_alloc(c->fd, 4096, &a);
		if (c->err)
			break;
		f.handle = a.handle;
		c->err = pto_sioctl(c->fd, PTO_IOCTL_BO_FREE, &f);
		if (c->err)
			break;
		__atomic_store_n(&c->cycles, c->cycles + 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/*
 * Every buffer on the device's list has its handle: a reader of "bos"
 * racing BO_ALLOC never sees handle 0 (the handle was written only after
 * the buffer was on the list). One thread allocates and frees a page
 * while this one, once the churn has run a cycle, re-reads the file.
 */
TEST(bos_never_shows_handle_zero)
{
	static char text[1 << 16];
	struct churn c = { .fd = open(PTO_DEV0, O_RDWR) };
	unsigned int reads, zero = 0;
	time_t t0;
	pthread_t th;

	ASSERT_LE(0, c.fd);
	ASSERT_EQ(0, pthread_create(&th, NULL, alloc_free_loop, &c));
	/* The reads overlap the churn: wait (bounded) for its first cycle. */
	t0 = time(NULL);
	while (!__atomic_load_n(&c.cycles, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(&c.err, __ATOMIC_RELAXED))
		ASSERT_GT(t0 + 10, time(NULL))
			TH_LOG("the churn thread never completed a cycle");
	ASSERT_EQ(0, __atomic_load_n(&c.err, __ATOMIC_RELAXED));
	for (reads = 0; reads < st_scaled(20000) && !zero; reads++) {
		const char *line;

		ASSERT_EQ(0, read_file(DBG "bos", text, sizeof(text)));
		for (line = strchr(text, '\n'); line && line[1];
		     line = strchr(line + 1, '\n')) {
			int owner;
			unsigned int handle;

			if (sscanf(line + 1, "%d %u", &owner, &handle) == 2 &&
			    owner == getpid() && !handle)
				zero++;
		}
	}
	c.stop = 1;
	pthread_join(th, NULL);
	EXPECT_EQ(0, c.err);
	EXPECT_EQ(0, zero) TH_LOG("read %u: a buffer with handle 0 (%lu cycles)",
				  reads, c.cycles);
	EXPECT_LT(0, c.cycles);
	close(c.fd);
}

TEST(release_frees_everything)
{
	static char text[1 << 16];
	struct pto_bo_alloc a[4];
	unsigned int refs, i;
	uint64_t size;
	int fd = open(PTO_DEV0, O_RDWR);

	ASSERT_LE(0, fd);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, st_bo_alloc(fd, 4096, &a[i]));
	close(fd);
	ASSERT_EQ(0, read_file(DBG "bos", text, sizeof(text)));
	for (i = 0; i < 4; i++)
		EXPECT_FALSE(find_bo(text, a[i].dev_addr, &size, &refs));
}

/*
 * pto.h: pto_dev_close() frees the buffers still allocated. A mapping holds
 * the device file, so closing the fd alone released nothing, mapped or not.
 */
TEST(libpto_dev_close_frees_every_buffer)
{
	static char text[1 << 16];
	struct pto_bo *mapped, *unmapped;
	unsigned int refs = 0;
	uint64_t size = 0, am, au;
	struct pto_dev *dev;
	uint32_t *p = NULL;

	ASSERT_EQ(0, pto_dev_open(0, &dev));
	ASSERT_EQ(0, pto_bo_alloc(dev, 8192, 0, &mapped));
	ASSERT_EQ(0, pto_bo_alloc(dev, 4096, 0, &unmapped));
	ASSERT_EQ(0, pto_bo_map(mapped, (void **)&p));
	p[0] = 0x5a5a;
	am = pto_bo_dev_addr(mapped);
	au = pto_bo_dev_addr(unmapped);
	ASSERT_EQ(0, read_file(DBG "bos", text, sizeof(text)));
	ASSERT_TRUE(find_bo(text, am, &size, &refs));
	EXPECT_EQ(8192, size);
	EXPECT_EQ(2, refs);		/* handle + mapping */
	ASSERT_TRUE(find_bo(text, au, &size, &refs));
	EXPECT_EQ(1, refs);

	pto_dev_close(dev);
	ASSERT_EQ(0, read_file(DBG "bos", text, sizeof(text)));
	EXPECT_FALSE(find_bo(text, am, &size, &refs)) TH_LOG("mapped: refs %u", refs);
	EXPECT_FALSE(find_bo(text, au, &size, &refs)) TH_LOG("unmapped: refs %u", refs);
}

/*
 * A forked child shares the parent's device file: its cleanup of inherited
 * handles (pto_bo_free, pto_dev_close) must not drop the parent's buffer
 * handle (BO_FREE on the shared file did: the parent's own free was then
 * -ENOENT).
 */
TEST(libpto_fork_child_cleanup_leaves_the_parents_buffer)
{
	static char text[1 << 16];
	unsigned int refs = 0;
	uint64_t size = 0, addr;
	struct pto_dev *dev;
	struct pto_bo *bo;
	uint32_t *p = NULL;
	pid_t pid;
	int st;

	ASSERT_EQ(0, pto_dev_open(0, &dev));
	ASSERT_EQ(0, pto_bo_alloc(dev, 4096, 0, &bo));
	ASSERT_EQ(0, pto_bo_map(bo, (void **)&p));
	p[0] = 0x1234;
	addr = pto_bo_dev_addr(bo);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int ret = pto_bo_free(bo);

		pto_dev_close(dev);
		_exit(ret ? 1 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	ASSERT_EQ(0, read_file(DBG "bos", text, sizeof(text)));
	ASSERT_TRUE(find_bo(text, addr, &size, &refs));
	EXPECT_EQ(2, refs);		/* still the parent's handle + mapping */
	EXPECT_EQ(0x1234, p[0]);
	EXPECT_EQ(0, pto_bo_free(bo));
	ASSERT_EQ(0, read_file(DBG "bos", text, sizeof(text)));
	EXPECT_FALSE(find_bo(text, addr, &size, &refs));
	pto_dev_close(dev);
}

/*
 * pto.h: pto_dev_close() frees the buffers still allocated even while a
 * forked child holds the file (its inherited fd and mappings): closing the
 * fd alone released them only when the child exited, so a reopen's
 * allocation of the same large size was -ENOMEM. A buffer the child still
 * maps stays, readable in the child, until the child exits: its mapping
 * holds a reference, never freed pages.
 */
TEST(libpto_dev_close_frees_buffers_a_forked_child_holds_the_file_of)
{
	static char text[1 << 16];
	struct pto_bo *big, *mapped;
	struct pto_dev_info info;
	uint64_t size = 0, ab, am, big_size;
	unsigned int refs = 0;
	struct pto_dev *dev;
	struct sysinfo si;
	uint32_t *p = NULL;
	int go[2], st;
	pid_t pid;
	char c = 0;

	ASSERT_EQ(0, pto_dev_open(0, &dev));
	ASSERT_EQ(0, pto_dev_info(dev, &info));
	/* Two of these never fit in GM at once. */
	big_size = info.gm_size / 2 + info.gm_align;
	ASSERT_EQ(0, sysinfo(&si));
	if (big_size > (uint64_t)si.freeram * si.mem_unit / 2) {
		pto_dev_close(dev);
		SKIP(return, "half the GM (of %llu MiB) over half the free RAM: memory, not GM, runs out first",
		     (unsigned long long)(info.gm_size >> 20));
	}
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pto_bo_alloc(dev, big_size, 0, &big));
	ASSERT_EQ(0, pto_bo_alloc(dev, 4096, 0, &mapped));
	ASSERT_EQ(0, pto_bo_map(mapped, (void **)&p));
	p[0] = 0xc0de;
	ab = pto_bo_dev_addr(big);
	am = pto_bo_dev_addr(mapped);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(go[1]);
		alarm(20);
		/* Holds the fd and the mapping until the parent says go. */
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		_exit(p[0] == 0xc0de ? 0 : 1);
	}
	close(go[0]);
	pto_dev_close(dev);
	ASSERT_EQ(0, read_file(DBG "bos", text, sizeof(text)));
	EXPECT_FALSE(find_bo(text, ab, &size, &refs)) TH_LOG("big: refs %u", refs);
	ASSERT_TRUE(find_bo(text, am, &size, &refs));
	EXPECT_EQ(1, refs);		/* the child's mapping, no handle */
	/* The reopen's allocation of the same size fits. */
	ASSERT_EQ(0, pto_dev_open(0, &dev));
	EXPECT_EQ(0, pto_bo_alloc(dev, big_size, 0, &big));
	if (big)
		EXPECT_EQ(0, pto_bo_free(big));
	pto_dev_close(dev);
	ASSERT_EQ(1, write(go[1], &c, 1));
	close(go[1]);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));	/* it read its mapping to the end */
	ASSERT_EQ(0, read_file(DBG "bos", text, sizeof(text)));
	EXPECT_FALSE(find_bo(text, am, &size, &refs)) TH_LOG("refs %u", refs);
}

/*
 * A core number written to inject_stall / inject_badid is parsed whole: a
 * write longer than any spelling of one (32 bytes) is -EINVAL and arms
 * nothing, even when its first 34 bytes, all that kstrtouint_from_user()
 * reads, are a number (before the bound, "core 1" followed by junk armed
 * core 1); a 32-byte spelling is still taken.
 */
TEST(inject_write_is_parsed_whole)
{
	/* 33 zeros and a 1 (octal: core 1), then junk. */
	static const char longer[] = "0000000000000000000000000000000001junk";
	/* 0x, 29 zeros and a 1 (core 1). */
	static const char longest[] = "0x000000000000000000000000000001";
	char state[32], inject[32];

	ASSERT_EQ(38, strlen(longer));
	ASSERT_EQ(32, strlen(longest));
	ASSERT_EQ(0, st_core_row(0, 1, state, sizeof(state), NULL, inject,
				 sizeof(inject)));
	ASSERT_STREQ("-", inject) TH_LOG("core 1 has a fault set already");

	EXPECT_EQ(-1, st_inject_text(0, "badid", 1, longer));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, st_core_row(0, 1, state, sizeof(state), NULL, inject,
				 sizeof(inject)));
	EXPECT_STREQ("-", inject);

	EXPECT_EQ(0, st_inject_text(0, "badid", 1, longest));
	ASSERT_EQ(0, st_core_row(0, 1, state, sizeof(state), NULL, inject,
				 sizeof(inject)));
	EXPECT_STREQ("badid", inject);
}

TEST_HARNESS_MAIN
