// SPDX-License-Identifier: MIT
/*
 * libpto device layer: open, GET_INFO, GM buffer objects.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/pto.h>
#include <pto/pto.h>
#include "core.h"
#include "device.h"
#include "ioctl.h"

struct pto_dev {
	int fd;
	pid_t pid;			/* the opener (fork: see pto_bo_free()) */
	struct pto_dev_info info;
	_Atomic uint64_t claimed;	/* dev_claim_clusters() */
	/*
	 * Every live buffer of this device, for pto_dev_close(): a mapping
	 * holds a reference on the device file, so closing the fd releases
	 * nothing in the driver (no buffer, cluster or core of the file)
	 * while any buffer is still mapped.
	 */
	pthread_mutex_t bos_mu;
	struct pto_bo *bos;
};

struct pto_bo {
	struct pto_dev *dev;
	struct pto_bo *prev, *next;	/* dev->bos, under dev->bos_mu */
	uint32_t handle;
	uint64_t size;
	uint64_t dev_addr;
	uint64_t mmap_offset;
	/* Published once by pto_bo_map() (a CAS), then never changes. */
	void *_Atomic map;
};

/* A buffer's user-space side: its mapping (if any), then its struct. */
static void bo_unmap_free(struct pto_bo *bo)
{
	void *map = atomic_load_explicit(&bo->map, memory_order_relaxed);

	if (map)
		munmap(map, bo->size);
	free(bo);
}

static int query_info(int fd, struct pto_dev_info *out)
{
	uint32_t types[PTO_DEV_MAX_CORES];
	struct pto_info info = {
		.core_types = (uintptr_t)types,
		.core_types_count = PTO_DEV_MAX_CORES,
	};
	uint32_t i;
	int ret;

	ret = ioc_call(fd, PTO_IOCTL_GET_INFO, &info);
	if (ret)
		return ret;
	memset(out, 0, sizeof(*out));
	out->abi_major = info.abi_major;
	out->abi_minor = info.abi_minor;
	out->index = info.device;
	out->clusters = info.clusters;
	out->cores = info.cores;
	out->lanes = info.lanes;
	out->gm_size = info.gm_size;
	out->gm_align = info.gm_align;
	out->window_size = info.window_size;
	out->caps = info.caps;
	for (i = 0; i < info.cores && i < PTO_DEV_MAX_CORES; i++)
		out->core_type[i] = (uint8_t)types[i];
	return 0;
}

int pto_dev_open_path(const char *path, struct pto_dev **out)
{
	struct pto_dev *dev;
	int ret;

	*out = NULL;
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	/*
	 * Non-blocking: several scheduler threads poll() the fd and drain its
	 * completion counter with read(); one may drain what woke another,
	 * whose read() must then return EAGAIN rather than block.
	 */
	dev->fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (dev->fd < 0) {
		ret = -errno;
		free(dev);
		return ret;
	}
	ret = query_info(dev->fd, &dev->info);
	if (!ret && dev->info.abi_major != PTO_ABI_MAJOR)
		ret = -EPROTO;
	if (ret) {
		close(dev->fd);
		free(dev);
		return ret;
	}
	dev->pid = getpid();
	pthread_mutex_init(&dev->bos_mu, NULL);
	*out = dev;
	return 0;
}

int pto_dev_open(unsigned int index, struct pto_dev **out)
{
	char path[32];

	snprintf(path, sizeof(path), "/dev/pto%u", index);
	return pto_dev_open_path(path, out);
}

void pto_dev_close(struct pto_dev *dev)
{
	struct pto_bo *bo, *next;

	if (!dev)
		return;
	/* A forked child: its fd and memory only (see pto_bo_free()). */
	if (dev_forked(dev)) {
		close(dev->fd);
		free(dev);
		return;
	}
	pthread_mutex_lock(&dev->bos_mu);
	bo = dev->bos;
	dev->bos = NULL;
	pthread_mutex_unlock(&dev->bos_mu);
	/*
	 * Unmap and free what the caller left, each with its own BO_FREE:
	 * closing the fd releases the file's buffers only on the file's last
	 * reference, and a forked child's inherited fd (or any mapping of the
	 * file) keeps it open until the child exits. A buffer a child still
	 * maps stays allocated until that mapping goes (its vma holds a
	 * reference on the buffer: the child never sees freed pages); every
	 * other one is freed here.
	 */
	for (; bo; bo = next) {
		struct pto_bo_free args = { .handle = bo->handle };

		next = bo->next;
		bo_unmap_free(bo);
		ioc_call(dev->fd, PTO_IOCTL_BO_FREE, &args);
	}
	close(dev->fd);
	pthread_mutex_destroy(&dev->bos_mu);
	free(dev);
}

int pto_dev_fd(const struct pto_dev *dev)
{
	return dev->fd;
}

bool dev_forked(const struct pto_dev *dev)
{
	return getpid() != dev->pid;
}

int dev_claim_clusters(struct pto_dev *dev, uint64_t clusters)
{
	uint64_t old = atomic_load_explicit(&dev->claimed, memory_order_relaxed);

	do {
		if (old & clusters)
			return -EBUSY;
	} while (!atomic_compare_exchange_weak_explicit(&dev->claimed, &old,
							old | clusters,
							memory_order_relaxed,
							memory_order_relaxed));
	return 0;
}

void dev_unclaim_clusters(struct pto_dev *dev, uint64_t clusters)
{
	atomic_fetch_and_explicit(&dev->claimed, ~clusters, memory_order_relaxed);
}

/* The whole struct: query_info() zeroed what the driver did not fill
 * (reserved words, core_type[] past the cores), pto/pto.h. */
int pto_dev_info(struct pto_dev *dev, struct pto_dev_info *info)
{
	*info = dev->info;
	return 0;
}

int pto_bo_alloc(struct pto_dev *dev, uint64_t size, uint64_t flags,
		 struct pto_bo **out)
{
	struct pto_bo_alloc args = { .size = size, .flags = flags };
	struct pto_bo_free fargs = { 0 };
	struct pto_bo *bo;
	int ret;

	*out = NULL;
	/* A forked child's buffer would be the parent's file's (pto_bo_alloc(3)),
	 * and its list entry a write into the child's stale copy. */
	if (dev_forked(dev))
		return -ECHILD;
	bo = calloc(1, sizeof(*bo));
	if (!bo)
		return -ENOMEM;
	ret = ioc_call(dev->fd, PTO_IOCTL_BO_ALLOC, &args);
	if (ret) {
		free(bo);
		return ret;
	}
	bo->dev = dev;
	bo->handle = args.handle;
	bo->size = args.size;
	bo->dev_addr = args.dev_addr;
	bo->mmap_offset = args.mmap_offset;
	if (!bo->handle || !bo->dev_addr) {
		fargs.handle = args.handle;
		ioc_call(dev->fd, PTO_IOCTL_BO_FREE, &fargs);
		free(bo);
		return -EPROTO;
	}
	pthread_mutex_lock(&dev->bos_mu);
	bo->next = dev->bos;
	if (bo->next)
		bo->next->prev = bo;
	dev->bos = bo;
	pthread_mutex_unlock(&dev->bos_mu);
	*out = bo;
	return 0;
}

/*
 * Threads may map one buffer at once (pto_bo_map(3)): each that finds no
 * mapping makes one, and the first to publish it wins. A loser unmaps its
 * own and returns the winner's, so every caller gets the one address and
 * no mapping leaks.
 */
int pto_bo_map(struct pto_bo *bo, void **addr)
{
	void *p, *cur;

	cur = atomic_load_explicit(&bo->map, memory_order_acquire);
	if (!cur) {
		/* A new mapping would hold the parent's file (pto_bo_map(3)). */
		if (dev_forked(bo->dev))
			return -ECHILD;
		p = mmap(NULL, bo->size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 bo->dev->fd, (off_t)bo->mmap_offset);
		if (p == MAP_FAILED)
			return -errno;
		if (atomic_compare_exchange_strong_explicit(&bo->map, &cur, p,
							    memory_order_acq_rel,
							    memory_order_acquire))
			cur = p;
		else
			munmap(p, bo->size);	/* cur: the winner's */
	}
	*addr = cur;
	return 0;
}

int pto_bo_free(struct pto_bo *bo)
{
	struct pto_bo_free args;
	int fd;

	if (!bo)
		return 0;
	/*
	 * A forked child shares the parent's open file: BO_FREE there would
	 * drop the parent's handle. Release only the child's mapping and
	 * memory. Nor may the child take bos_mu: another of the parent's
	 * threads may have held it at the fork, and it stays held in the
	 * child. So the child's copy of the list is left stale, and the
	 * child's pto_dev_close() does not walk it.
	 */
	if (dev_forked(bo->dev)) {
		bo_unmap_free(bo);
		return 0;
	}
	pthread_mutex_lock(&bo->dev->bos_mu);
	if (bo->prev)
		bo->prev->next = bo->next;
	else
		bo->dev->bos = bo->next;
	if (bo->next)
		bo->next->prev = bo->prev;
	pthread_mutex_unlock(&bo->dev->bos_mu);
	args = (struct pto_bo_free){ .handle = bo->handle };
	fd = bo->dev->fd;
	/* Unmapped before BO_FREE, as ever: the ioctl needs only the handle. */
	bo_unmap_free(bo);
	return ioc_call(fd, PTO_IOCTL_BO_FREE, &args);
}

uint64_t pto_bo_size(const struct pto_bo *bo)
{
	return bo->size;
}

uint64_t pto_bo_dev_addr(const struct pto_bo *bo)
{
	return bo->dev_addr;
}

uint32_t pto_bo_dev_tag(const struct pto_bo *bo)
{
	return bo->dev->info.index + 1;
}

uint32_t pto_bo_handle(const struct pto_bo *bo)
{
	return bo->handle;
}

int dev_bo_find(struct pto_dev *dev, uint64_t dev_addr, uint32_t *handle)
{
	struct pto_bo *bo;
	int ret = -ENOENT;

	pthread_mutex_lock(&dev->bos_mu);
	for (bo = dev->bos; bo; bo = bo->next)
		if (bo->dev_addr == dev_addr) {
			*handle = bo->handle;
			ret = 0;
			break;
		}
	pthread_mutex_unlock(&dev->bos_mu);
	return ret;
}
