// SPDX-License-Identifier: MIT
/*
 * pto-bench --dump: the capture ioctl's throughput on a dump lane bound at
 * FULL, 64 KiB tensors, with the library's collector draining and
 * acknowledging as it does in a run, beside a plain memcpy of the same
 * bytes into a buffer of the arena's size.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/pto_dump.h>
#include "bench.h"
#include "dump/collector.h"

#define DUMP_TENSOR (64u << 10)
#define DUMP_ELEMS (DUMP_TENSOR / 4)

static int capture(int fd, uint32_t handle, uint64_t task)
{
	struct pto_dump_capture c = {
		.handle = handle, .task_id = task, .kind = PTO_DUMP_KIND_TENSOR,
		.role = PTO_DUMP_ROLE_INPUT, .stage = PTO_DUMP_BEFORE_DISPATCH,
		.dtype = PTO_DTYPE_F32, .rank = 1, .shape = { DUMP_ELEMS },
		.strides = { 1 }, .timeout_ns = clock_ns(CLOCK_MONOTONIC) +
						 10000000000ull,
	};

	c.func_id[0] = c.func_id[1] = c.func_id[2] = PTO_DUMP_FUNC_NONE;
	if (ioctl(fd, PTO_IOCTL_DUMP_CAPTURE, &c))
		return -errno;
	return c.result == PTO_DUMP_RES_COLLECTED ? 0 : -EIO;
}

/*
 * @n captures of @handle on lane 0 while the collector drains: ns in *@t,
 * the lane's arena size in *@arena.
 */
static int dump_once(int fd, uint32_t handle, long n, const char *dir,
		     uint64_t *t, size_t *arena)
{
	struct pto_dump_status s = { .lane = 0 };
	struct dump_device *d;
	uint64_t t0;
	long i;
	int ret;

	ret = dump_device_start(fd, DUMP_LEVEL_FULL, 0, 1, &d);
	if (ret)
		return ret;
	ret = ioctl(fd, PTO_IOCTL_DUMP_STATUS, &s) ? -errno : 0;
	*arena = s.arena_size;
	t0 = now_ns();
	for (i = 0; i < n && !ret; i++)
		ret = capture(fd, handle, (uint64_t)i);
	*t = now_ns() - t0;
	i = dump_device_finish(d, true, dir);
	return ret ? ret : (int)i;
}

/* @n copies of @src's 64 KiB into @dst (@dst_size, circular): ns. */
static uint64_t memcpy_once(uint8_t *dst, size_t dst_size, const void *src,
			    long n)
{
	uint64_t t0 = now_ns();
	size_t off = 0;
	long i;

	for (i = 0; i < n; i++) {
		memcpy(dst + off, src, DUMP_TENSOR);
		off = (off + DUMP_TENSOR) % dst_size;
	}
	/* The copies are the result: keep the compiler from dropping them. */
	__asm__ volatile("" : : "r"(dst) : "memory");
	return now_ns() - t0;
}

int dump_cost(long n, int reps)
{
	char dir[] = "/tmp/pto-bench-dumpXXXXXX", cmd[64];
	uint64_t best[2] = { UINT64_MAX, UINT64_MAX }, t;
	uint8_t *dst = NULL;
	struct pto_bo *bo;
	size_t arena;
	float *src;
	int fd, rep, ret;
	long i;

	if (!g_dev) {
		fprintf(stderr, "pto-bench: --dump needs --device\n");
		return 2;
	}
	fd = pto_dev_fd(g_dev);
	ret = pto_bo_alloc(g_dev, DUMP_TENSOR, 0, &bo);
	if (!ret)
		ret = pto_bo_map(bo, (void **)&src);
	if (ret || !mkdtemp(dir)) {
		fprintf(stderr, "pto-bench: --dump setup: %s\n",
			ret ? pto_strerror(ret) : strerror(errno));
		return 1;
	}
	for (i = 0; i < (long)DUMP_ELEMS; i++)
		src[i] = (float)i;
	for (rep = 0; rep < reps; rep++) {
		ret = dump_once(fd, pto_bo_handle(bo), n, dir, &t, &arena);
		if (ret) {
			fprintf(stderr, "pto-bench: --dump capture: %s\n",
				pto_strerror(ret));
			break;
		}
		if (t < best[0])
			best[0] = t;
		if (!dst) {
			dst = malloc(arena);
			if (!dst) {
				ret = -ENOMEM;
				break;
			}
			memset(dst, 1, arena);
		}
		t = memcpy_once(dst, arena, src, n);
		if (t < best[1])
			best[1] = t;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "pto-bench: could not remove %s\n", dir);
	pto_bo_free(bo);
	free(dst);
	if (ret)
		return 1;
	printf("dump capture %u KiB x %ld, lane at FULL, collector draining: "
	       "%8.1f MB/s  memcpy %8.1f MB/s  ratio %.2f (best of %d)\n",
	       DUMP_TENSOR >> 10, n,
	       (double)n * DUMP_TENSOR * 1e3 / (double)best[0],
	       (double)n * DUMP_TENSOR * 1e3 / (double)best[1],
	       (double)best[1] / (double)best[0], reps);
	return 0;
}
