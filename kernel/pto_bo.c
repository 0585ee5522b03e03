// SPDX-License-Identifier: GPL-2.0-only
/*
 * pto - GM buffer objects: ALLOC / FREE / INFO ioctls and mmap.
 *
 * A buffer owns a GM address range and zeroed pages (nothing of a previous
 * owner is visible), charged to the opener's memory cgroup and locked_vm.
 * Sizes are whole pages and buffers page-aligned in GM: a page is the unit
 * of mmap, so two files' buffers never share one.
 */
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/pid.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include "pto_drv.h"
#include "pto_bo.h"
#include "pto_file.h"

static void pto_bo_release(struct kref *ref)
{
	struct pto_bo *bo = container_of(ref, struct pto_bo, ref);
	struct pto_device *pdev = bo->pdev;

	spin_lock(&pdev->bos_lock);
	list_del(&bo->node);
	spin_unlock(&pdev->bos_lock);
	pto_gm_free(&pdev->gm, bo->dev_addr, bo->size);
	vfree(bo->vaddr);
	kfree(bo);
}

void pto_bo_put(struct pto_bo *bo)
{
	kref_put(&bo->ref, pto_bo_release);
}

static u64 pto_bo_mmap_offset(const struct pto_bo *bo)
{
	return (u64)bo->handle << PTO_MMAP_BO_SHIFT;
}

/*
 * GM buffers are pinned kernel memory the OOM killer does not see: charge
 * them to the opener's locked_vm against RLIMIT_MEMLOCK, as VFIO does
 * (CAP_IPC_LOCK bypasses the limit, as in account_locked_vm()). Charged at
 * BO_ALLOC, returned when the handle goes (BO_FREE, close), outside
 * pf->lock: account_locked_vm() takes mmap_lock, which orders before it.
 */
static int pto_bo_charge(struct pto_file *pf, u64 size)
{
	return account_locked_vm(pf->mm, size >> PAGE_SHIFT, true);
}

static void pto_bo_uncharge(struct pto_file *pf, u64 size)
{
	account_locked_vm(pf->mm, size >> PAGE_SHIFT, false);
}

/* Drop the handle's reference and its charge (not under pf->lock). */
static void pto_bo_drop(struct pto_file *pf, struct pto_bo *bo)
{
	pto_bo_uncharge(pf, bo->size);
	pto_bo_put(bo);
}

/*
 * Make @bo reachable through its handle, its range and debugfs. Every
 * field debugfs prints is written before the list_add_tail(); the walker
 * takes bos_lock after our spin_unlock() (release / acquire). @published
 * is written under the range tree's lock, which pto_bo_lookup() holds.
 */
static void pto_bo_publish(struct pto_file *pf, struct pto_bo *bo)
{
	struct pto_device *pdev = pf->pdev;

	lockdep_assert_held(&pf->lock);
	xa_store(&pf->bos, bo->handle, bo, 0);
	mtree_lock(&pf->ranges);
	bo->published = true;
	mtree_unlock(&pf->ranges);
	spin_lock(&pdev->bos_lock);
	list_add_tail(&bo->node, &pdev->bos);
	spin_unlock(&pdev->bos_lock);
}

/*
 * The published buffer of @pf that holds [@addr, @addr + @len), with a
 * reference, or NULL. Takes only the range tree's spinlock, never
 * pf->lock: a core thread validating a task must not wait behind an ioctl.
 * A range in the tree holds the handle's reference (it is erased before
 * that is dropped), so kref_get() under the tree's lock is safe.
 */
struct pto_bo *pto_bo_lookup(struct pto_file *pf, u64 addr, u64 len)
{
	struct pto_bo *bo;

	mtree_lock(&pf->ranges);
	bo = mtree_load(&pf->ranges, addr);
	if (bo && (!bo->published ||
		   len > bo->size - (addr - bo->dev_addr)))
		bo = NULL;
	if (bo)
		kref_get(&bo->ref);
	mtree_unlock(&pf->ranges);
	return bo;
}

/*
 * Reserve the handle and the address range, write the reply, then
 * publish: until pto_bo_publish() the buffer is invisible to every lookup
 * (a reserved handle loads as NULL, the range is not yet @published, the
 * device's list does not hold it), so a reply that cannot be written is
 * aborted with nothing ever seen (iommufd's finalize / abort).
 */
int pto_ioctl_bo_alloc(struct pto_ucmd *ucmd)
{
	struct pto_bo_alloc *args = ucmd->cmd;
	struct pto_file *pf = ucmd->pf;
	struct pto_device *pdev = pf->pdev;
	struct pto_bo *bo;
	u64 size;
	u32 handle;
	int ret;

	if (args->flags & ~PTO_BO_FLAGS_VALID || args->pad)
		return -EINVAL;
	/*
	 * GM's low PTO_GM_RESERVED bytes are never allocated: a size beyond
	 * the rest could never be had, even on an idle device (-EINVAL, not
	 * -ENOMEM). The rest is page-aligned, so the rounded size fits too.
	 */
	if (!args->size || args->size > pdev->gm.size - PTO_GM_RESERVED)
		return -EINVAL;
	size = PAGE_ALIGN(args->size);
	ret = pto_bo_charge(pf, size);
	if (ret)
		return ret;

	/* Charged, as everything this call allocates (pto_open()). */
	bo = kzalloc(sizeof(*bo), GFP_KERNEL_ACCOUNT);
	if (!bo) {
		pto_bo_uncharge(pf, size);
		return -ENOMEM;
	}
	kref_init(&bo->ref);
	bo->pdev = pdev;
	bo->size = size;
	bo->flags = args->flags;
	bo->owner = pid_nr(pf->tgid);
	INIT_LIST_HEAD(&bo->node);

	bo->dev_addr = pto_gm_alloc(&pdev->gm, size, PAGE_SIZE);
	if (!bo->dev_addr) {
		kfree(bo);
		pto_bo_uncharge(pf, size);
		return -ENOMEM;
	}
	/* Zeroed, charged, and quiet on failure (-ENOMEM, not a warning). */
	bo->vaddr = __vmalloc(size, GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN |
			      __GFP_ACCOUNT | __GFP_RETRY_MAYFAIL);
	if (!bo->vaddr) {
		pto_gm_free(&pdev->gm, bo->dev_addr, size);
		kfree(bo);
		pto_bo_uncharge(pf, size);
		return -ENOMEM;
	}
	/* From here on pto_bo_drop() is the whole unwind. */
	mutex_lock(&pf->lock);
	/*
	 * Cyclic handles: a stale handle (or mmap offset) names nothing
	 * rather than the next buffer until the space wraps. A full space
	 * (2^19 - 1 live handles) is -EBUSY. NULL reserves the index.
	 */
	ret = xa_alloc_cyclic(&pf->bos, &handle, NULL,
			      XA_LIMIT(1, (1U << (63 - PTO_MMAP_BO_SHIFT -
						  PAGE_SHIFT)) - 1),
			      &pf->next_handle, GFP_KERNEL_ACCOUNT);
	if (ret < 0)
		goto err_unlock;
	bo->handle = handle;
	/*
	 * The range's maple nodes are not charged: mtree_store_range()
	 * allocates them GFP_NOWAIT from an unaccounted cache and uses our
	 * flags only on its retry. Their number is bounded by the GM size
	 * over the page size.
	 */
	ret = mtree_store_range(&pf->ranges, bo->dev_addr,
				bo->dev_addr + size - 1, bo,
				GFP_KERNEL_ACCOUNT);
	if (ret) {
		xa_erase(&pf->bos, handle);
		goto err_unlock;
	}
	mutex_unlock(&pf->lock);

	args->size = size;
	args->handle = handle;
	args->dev_addr = bo->dev_addr;
	args->mmap_offset = pto_bo_mmap_offset(bo);
	ret = pto_ucmd_respond(ucmd);

	mutex_lock(&pf->lock);
	if (ret) {
		mtree_erase(&pf->ranges, bo->dev_addr);
		xa_erase(&pf->bos, handle);
		goto err_unlock;
	}
	pto_bo_publish(pf, bo);
	mutex_unlock(&pf->lock);
	return 0;

err_unlock:
	mutex_unlock(&pf->lock);
	pto_bo_drop(pf, bo);
	return ret;
}

/* Unpublish: the caller drops the handle's reference after pf->lock. */
static void pto_bo_unpublish(struct pto_file *pf, struct pto_bo *bo)
{
	lockdep_assert_held(&pf->lock);
	xa_erase(&pf->bos, bo->handle);
	mtree_erase(&pf->ranges, bo->dev_addr);
}

int pto_ioctl_bo_free(struct pto_file *pf, void *data)
{
	struct pto_bo_free *args = data;
	struct pto_bo *bo;

	if (args->pad)
		return -EINVAL;
	mutex_lock(&pf->lock);
	bo = xa_load(&pf->bos, args->handle);
	if (bo)
		pto_bo_unpublish(pf, bo);
	mutex_unlock(&pf->lock);
	if (!bo)
		return -ENOENT;
	/* The vfree() of a big buffer is slow: never under pf->lock. */
	pto_bo_drop(pf, bo);
	return 0;
}

/* The file's buffer @handle with a reference of the caller's, or NULL. */
struct pto_bo *pto_bo_get_handle(struct pto_file *pf, u32 handle)
{
	struct pto_bo *bo;

	mutex_lock(&pf->lock);
	bo = xa_load(&pf->bos, handle);
	if (bo)
		kref_get(&bo->ref);
	mutex_unlock(&pf->lock);
	return bo;
}

int pto_ioctl_bo_info(struct pto_file *pf, void *data)
{
	struct pto_bo_info *args = data;
	struct pto_bo *bo;

	if (args->pad)
		return -EINVAL;
	mutex_lock(&pf->lock);
	bo = xa_load(&pf->bos, args->handle);
	if (bo) {
		args->size = bo->size;
		args->dev_addr = bo->dev_addr;
		args->mmap_offset = pto_bo_mmap_offset(bo);
		args->flags = bo->flags;
	}
	mutex_unlock(&pf->lock);
	return bo ? 0 : -ENOENT;
}

/*
 * Drop every handle, one at a time, each reference after pf->lock (as
 * BO_FREE). The emptied xarray and maple tree are destroyed with the
 * context, on its last reference (pto_file_destroy_bos).
 */
void pto_file_release_bos(struct pto_file *pf)
{
	unsigned long handle = 0;
	struct pto_bo *bo;

	for (;;) {
		mutex_lock(&pf->lock);
		bo = xa_find(&pf->bos, &handle, ULONG_MAX, XA_PRESENT);
		if (bo)
			pto_bo_unpublish(pf, bo);
		mutex_unlock(&pf->lock);
		if (!bo)
			break;
		pto_bo_drop(pf, bo);
		cond_resched();
	}
}

void pto_file_destroy_bos(struct pto_file *pf)
{
	xa_destroy(&pf->bos);
	mtree_destroy(&pf->ranges);
}

static void pto_bo_vm_open(struct vm_area_struct *vma)
{
	struct pto_bo *bo = vma->vm_private_data;

	kref_get(&bo->ref);
}

static void pto_bo_vm_close(struct vm_area_struct *vma)
{
	pto_bo_put(vma->vm_private_data);
}

/*
 * Serves an access after a PTE was zapped while the mapping lives (mmap
 * inserted every page; MADV_DONTNEED removes them). The page goes back with
 * a reference (vmf->page), as ALSA's snd_pcm_mmap_data_fault() does, so the
 * PTE is accounted as vm_insert_pages()' was. Not vmf_insert_mixed(): its
 * special PTE (x86) would be refused by GUP, unlike the one mmap inserted.
 */
static vm_fault_t pto_bo_vm_fault(struct vm_fault *vmf)
{
	struct pto_bo *bo = vmf->vma->vm_private_data;
	unsigned long pgoff = vmf->pgoff &
			      ((1UL << (PTO_MMAP_BO_SHIFT - PAGE_SHIFT)) - 1);
	struct page *page;

	if (pgoff >= bo->size >> PAGE_SHIFT)
		return VM_FAULT_SIGBUS;
	page = vmalloc_to_page((char *)bo->vaddr + (pgoff << PAGE_SHIFT));
	get_page(page);
	vmf->page = page;
	return 0;
}

static const struct vm_operations_struct pto_bo_vm_ops = {
	.open = pto_bo_vm_open,
	.close = pto_bo_vm_close,
	.fault = pto_bo_vm_fault,
};

/* Pages per vm_insert_pages() call: 256 bytes of stack. */
#define PTO_BO_INSERT_BATCH 32

/*
 * Map @vma's range, starting at page @pgoff of @bo, in batches: a buffer
 * may be gigabytes, and mmap holds mmap_lock (write) throughout, so the
 * loop yields between batches. vm_insert_pages() accounts each page as
 * vm_insert_page() does (a reference, file rmap, the mm's file counter),
 * which the fault handler matches. On an error the pages already
 * inserted stay until the failed mmap's vma is unmapped.
 */
static int pto_bo_insert_pages(struct vm_area_struct *vma, struct pto_bo *bo,
			       unsigned long pgoff)
{
	struct page *pages[PTO_BO_INSERT_BATCH];
	unsigned long addr = vma->vm_start, batch, left, i;
	char *kaddr = (char *)bo->vaddr + (pgoff << PAGE_SHIFT);
	int ret;

	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP;
	while (addr < vma->vm_end) {
		batch = min_t(unsigned long, PTO_BO_INSERT_BATCH,
			      (vma->vm_end - addr) >> PAGE_SHIFT);
		for (i = 0; i < batch; i++)
			pages[i] = vmalloc_to_page(kaddr + (i << PAGE_SHIFT));
		/* In: pages to map; out: pages not mapped (0 unless ret). */
		left = batch;
		ret = vm_insert_pages(vma, addr, pages, &left);
		/*
		 * It reports a failed PUD/PMD allocation as -EFAULT; the
		 * range is inside @vma, so that is all -EFAULT can mean.
		 */
		if (ret == -EFAULT)
			return -ENOMEM;
		if (ret)
			return ret;
		addr += batch << PAGE_SHIFT;
		kaddr += batch << PAGE_SHIFT;
		/* A killed mapper stops: mmap_region() unmaps what is in. */
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
	}
	return 0;
}

int pto_bo_mmap(struct pto_file *pf, struct vm_area_struct *vma)
{
	unsigned long handle = vma->vm_pgoff >> (PTO_MMAP_BO_SHIFT - PAGE_SHIFT);
	unsigned long pgoff = vma->vm_pgoff &
			      ((1UL << (PTO_MMAP_BO_SHIFT - PAGE_SHIFT)) - 1);
	unsigned long len = vma->vm_end - vma->vm_start;
	struct pto_bo *bo;
	int ret;

	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	/*
	 * VM_MAYSHARE, not VM_SHARED: MAP_SHARED of a read-only file has no
	 * VM_SHARED (nor VM_MAYWRITE, so it can never become writable); it is
	 * refused for what it maps, not as a MAP_PRIVATE.
	 */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;

	mutex_lock(&pf->lock);
	bo = xa_load(&pf->bos, handle);
	if (bo)
		kref_get(&bo->ref);
	mutex_unlock(&pf->lock);
	if (!bo)
		return -EINVAL;

	if ((u64)pgoff << PAGE_SHIFT >= bo->size ||
	    len > bo->size - ((u64)pgoff << PAGE_SHIFT)) {
		ret = -EINVAL;
		goto err_put;
	}
	ret = pto_bo_insert_pages(vma, bo, pgoff);
	if (ret)
		goto err_put;
	vma->vm_flags &= ~VM_MAYEXEC;
	vma->vm_private_data = bo;
	vma->vm_ops = &pto_bo_vm_ops;
	return 0;

err_put:
	pto_bo_put(bo);
	return ret;
}
