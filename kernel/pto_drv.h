/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pto - internal definitions shared by the driver's files.
 *
 * Object lifetimes (leaf first on teardown):
 *   pto_device  module init .. module exit (exit runs only when no file is
 *               open, fops.owner pins the module)
 *   pto_file    open .. last kref put (the fd holds one reference)
 *   pto_bo      ALLOC .. last kref put (the file's handle holds one, every
 *               mmap holds one, so a mapping outlives FREE and close)
 */
#ifndef _PTO_DRV_H_
#define _PTO_DRV_H_

#include <linux/cdev.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/maple_tree.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/xarray.h>
#include <linux/pto.h>

#define PTO_NAME "pto"
#define PTO_MAX_DEVICES 8
#define PTO_MAX_GM_MB 4096

/* GM device addresses below this are never handed out: 0 is never valid. */
#define PTO_GM_RESERVED 0x10000ULL
/* Minimum allocation granule and alignment of the GM pool (2^10 = 1024). */
#define PTO_GM_MIN_ORDER 10

/* mmap offset space: buffer object N is at N << PTO_MMAP_BO_SHIFT. */
#define PTO_MMAP_BO_SHIFT 32

struct gen_pool;
struct dentry;

/**
 * struct pto_gm - a device's global memory address space.
 * @pool: genalloc pool over [PTO_GM_RESERVED, size); it serializes its own
 *        bitmap updates, so callers need no lock.
 * @size: bytes of GM including the reserved low range.
 */
struct pto_gm {
	struct gen_pool *pool;
	u64 size;
};

int pto_gm_init(struct pto_gm *gm, u64 size);
void pto_gm_fini(struct pto_gm *gm);
/* Returns a device address aligned to @align (>= 1024, power of 2) or 0. */
u64 pto_gm_alloc(struct pto_gm *gm, u64 size, u64 align);
void pto_gm_free(struct pto_gm *gm, u64 addr, u64 size);
u64 pto_gm_avail(struct pto_gm *gm);

/**
 * struct pto_device - one mock NPU, /dev/ptoN.
 * @bos_lock: protects @bos (every live buffer object, for debugfs).
 */
struct pto_device {
	unsigned int index;
	unsigned int clusters;
	unsigned int cores;
	unsigned int lanes;
	struct pto_gm gm;
	struct cdev cdev;
	struct device *dev;
	struct dentry *debugfs;

	spinlock_t bos_lock;
	struct list_head bos;
};

/**
 * struct pto_file - per-open context.
 * @lock: protects @bos and @ranges together, so a handle and its address
 *        range are visible or invisible as one.
 * @bos: handle -> struct pto_bo (the handle owns one bo reference).
 * @ranges: GM device address range -> struct pto_bo, the set of addresses
 *        this file may touch through the device (mock validation).
 */
struct pto_file {
	struct kref ref;
	struct pto_device *pdev;
	pid_t pid;

	struct mutex lock;
	struct xarray bos;
	struct maple_tree ranges;
};

/**
 * struct pto_bo - a GM buffer object.
 * @vaddr: kernel mapping of the backing pages (vmalloc_user, zeroed).
 * @node: entry in pto_device.bos.
 */
struct pto_bo {
	struct kref ref;
	struct pto_device *pdev;
	u64 dev_addr;
	u64 size;
	u64 flags;
	void *vaddr;
	u32 handle;
	pid_t owner;
	struct list_head node;
};

extern const struct file_operations pto_fops;

/* pto_file.c */
void pto_file_put(struct pto_file *pf);

/* pto_bo.c */
int pto_ioctl_bo_alloc(struct pto_file *pf, void *data);
int pto_ioctl_bo_free(struct pto_file *pf, void *data);
int pto_ioctl_bo_info(struct pto_file *pf, void *data);
void pto_bo_put(struct pto_bo *bo);
void pto_file_release_bos(struct pto_file *pf);
int pto_bo_mmap(struct pto_file *pf, struct vm_area_struct *vma);

/* pto_debugfs.c: failures are ignored, the driver works without it. */
void pto_debugfs_init(void);
void pto_debugfs_fini(void);
void pto_debugfs_add_device(struct pto_device *pdev);
void pto_debugfs_remove_device(struct pto_device *pdev);

#endif /* _PTO_DRV_H_ */
