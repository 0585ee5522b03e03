/* SPDX-License-Identifier: GPL-2.0-only */
/* pto - buffer objects: GM allocations and their mappings (pto_bo.c). */
#ifndef _PTO_BO_H_
#define _PTO_BO_H_

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/types.h>

/* mmap offset space: buffer object N is at N << PTO_MMAP_BO_SHIFT. */
#define PTO_MMAP_BO_SHIFT 32

struct pto_device;
struct pto_file;
struct vm_area_struct;

/**
 * struct pto_bo - a GM buffer object.
 * @vaddr: kernel mapping of the backing pages: __vmalloc(__GFP_ZERO), not
 *	vmalloc_user(), so the area has no VM_USERMAP and
 *	remap_vmalloc_range() would refuse it; mmap inserts the pages in
 *	batches (pto_bo_insert_pages()).
 * @node: entry in pto_device.bos.
 * @published: set once BO_ALLOC's reply is written (under the file's
 *	range tree lock); pto_bo_lookup() ignores an unpublished range.
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
	bool published;
	struct list_head node;
};

struct pto_ucmd;

int pto_ioctl_bo_alloc(struct pto_ucmd *ucmd);
int pto_ioctl_bo_free(struct pto_file *pf, void *data);
int pto_ioctl_bo_info(struct pto_file *pf, void *data);
void pto_bo_put(struct pto_bo *bo);
struct pto_bo *pto_bo_lookup(struct pto_file *pf, u64 addr, u64 len);
struct pto_bo *pto_bo_get_handle(struct pto_file *pf, u32 handle);
void pto_file_release_bos(struct pto_file *pf);
void pto_file_destroy_bos(struct pto_file *pf);
int pto_bo_mmap(struct pto_file *pf, struct vm_area_struct *vma);

#endif /* _PTO_BO_H_ */
