// SPDX-License-Identifier: GPL-2.0-only
/*
 * pto - a dump lane's memory: the state block, the metadata buffers and
 * the payload arena of one binding, in one zeroed vmalloc area charged to
 * the binder's memory cgroup, and its read-only mapping into the consumer
 * (Documentation/dump.md).
 */
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include "pto_lane.h"

/*
 * Charged (__GFP_ACCOUNT) to the memory cgroup of the task that binds;
 * zeroed, since every byte is mapped into user space. A charge beyond the
 * cgroup's limit fails the bind with -ENOMEM instead of waking the OOM
 * killer (__GFP_RETRY_MAYFAIL), and without a warning: it is the binder's
 * request, not the kernel's need.
 */
#define PTO_LANE_MEM_GFP \
	(GFP_KERNEL_ACCOUNT | __GFP_ZERO | __GFP_RETRY_MAYFAIL | __GFP_NOWARN)

/*
 * @size bytes (whole pages) for one binding, or NULL. Not vmalloc_user():
 * 6.1 has no charged form of it that a module can call, so the mapping
 * inserts the pages itself (pto_lane_mem_map()).
 */
struct pto_lane_mem *pto_lane_mem_alloc(size_t size)
{
	struct pto_lane_mem *mem;

	if (WARN_ON_ONCE(!PAGE_ALIGNED(size)))
		return NULL;
	mem = kzalloc(sizeof(*mem), GFP_KERNEL_ACCOUNT);
	if (!mem)
		return NULL;
	mem->vaddr = __vmalloc(size, PTO_LANE_MEM_GFP);
	if (!mem->vaddr) {
		kfree(mem);
		return NULL;
	}
	mem->size = size;
	kref_init(&mem->ref);
	return mem;
}

static void pto_lane_mem_release(struct kref *ref)
{
	struct pto_lane_mem *mem = container_of(ref, struct pto_lane_mem, ref);

	vfree(mem->vaddr);
	kfree(mem);
}

void pto_lane_mem_put(struct pto_lane_mem *mem)
{
	kref_put(&mem->ref, pto_lane_mem_release);
}

static void pto_lane_vm_open(struct vm_area_struct *vma)
{
	struct pto_lane_mem *mem = vma->vm_private_data;

	kref_get(&mem->ref);
}

static void pto_lane_vm_close(struct vm_area_struct *vma)
{
	pto_lane_mem_put(vma->vm_private_data);
}

static const struct vm_operations_struct pto_lane_vm_ops = {
	.open = pto_lane_vm_open,
	.close = pto_lane_vm_close,
};

/*
 * Map @mem from page @pgoff into @vma (whose flags the caller checked), as
 * remap_vmalloc_range() would: every page inserted now, the area neither
 * grown by mremap nor dumped. On success the mapping takes over the
 * caller's reference on @mem, dropped when its last piece is unmapped.
 */
int pto_lane_mem_map(struct vm_area_struct *vma, struct pto_lane_mem *mem,
		     unsigned long pgoff)
{
	unsigned long len = vma->vm_end - vma->vm_start, off, i;
	int ret;

	if (check_shl_overflow(pgoff, PAGE_SHIFT, &off) || off > mem->size ||
	    len > mem->size - off)
		return -EINVAL;
	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP;
	for (i = 0; i < len; i += PAGE_SIZE) {
		ret = vm_insert_page(vma, vma->vm_start + i,
				     vmalloc_to_page(mem->vaddr + off + i));
		if (ret)
			return ret;	/* mmap unmaps what was inserted */
	}
	vma->vm_private_data = mem;
	vma->vm_ops = &pto_lane_vm_ops;
	return 0;
}
