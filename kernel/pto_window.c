// SPDX-License-Identifier: GPL-2.0-only
/*
 * pto - a core's register window, mapped into the file that owns the
 * core's cluster: mmap, the fault that inserts the page, and the zap when
 * the cluster changes hands (Documentation/mock-cores.md).
 */
#include <linux/mm.h>
#include "pto_core.h"
#include "pto_window.h"

/*
 * Remove the user mappings of @core's window (page i of the file). Every
 * open shares the inode's address space, so this zaps every file's mapping
 * of the page; harmless, as each fault re-checks ownership under win_lock.
 */
void pto_window_zap(struct pto_file *pf, struct pto_core *core)
{
	if (pf->mapping)
		unmap_mapping_range(pf->mapping,
				    (loff_t)core->id << PAGE_SHIFT, PAGE_SIZE,
				    1);
}

/*
 * A cluster changes hands: clear its cores' window pages, which the next
 * owner may map before launching, so they are no channel between files.
 * A free cluster's cores do not touch the page; a quarantined core cannot
 * be mapped and is cleared when a reset recovers it.
 */
void pto_cluster_clear_windows(struct pto_device *pdev, unsigned int c)
{
	unsigned int i;

	lockdep_assert_held(&pdev->core_lock);
	lockdep_assert_held_write(&pdev->win_lock);

	for (i = c * PTO_CORES_PER_CLUSTER;
	     i < (c + 1) * PTO_CORES_PER_CLUSTER; i++)
		if (!test_bit(PTO_CORE_F_QUARANTINE, &pdev->core[i].flags))
			clear_page(pdev->core[i].uregs);
}

/*
 * A window page is inserted at fault time, only while the faulting file
 * owns the core's cluster. Check and insert run under win_lock (read); the
 * release clears the owner and zaps under win_lock (write), so an insert
 * either precedes the zap or sees the new owner (SIGBUS). vmf_insert_pfn()
 * may allocate, so launch_lock cannot cover it; core_lock is never taken.
 */
static vm_fault_t pto_window_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct pto_core *core = vma->vm_private_data;
	struct pto_file *pf = vma->vm_file->private_data;
	struct pto_device *pdev = core->pdev;
	vm_fault_t ret = VM_FAULT_SIGBUS;

	down_read(&pdev->win_lock);
	if (pto_core_owned_by(core, pf) &&
	    !test_bit(PTO_CORE_F_QUARANTINE, &core->flags))
		ret = vmf_insert_pfn(vma, vmf->address,
				     page_to_pfn(core->upage));
	up_read(&pdev->win_lock);
	return ret;
}

static const struct vm_operations_struct pto_window_vm_ops = {
	.fault = pto_window_fault,
};

int pto_window_mmap(struct pto_file *pf, struct vm_area_struct *vma)
{
	struct pto_device *pdev = pf->pdev;
	unsigned long i = vma->vm_pgoff;
	int ret = 0;

	/* One window: window_size (PAGE_SIZE) bytes at page i. */
	if (vma->vm_end - vma->vm_start != PAGE_SIZE || i >= pdev->cores)
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	/* VM_MAYSHARE: as in pto_bo_mmap(), a read-only MAP_SHARED too. */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	/*
	 * Owned is enough, launched or not (Documentation/mock-cores.md):
	 * a launch resets the user registers before it opens the window
	 * and publishes READY. win_lock, not core_lock: see the fault.
	 */
	if (down_read_killable(&pdev->win_lock))
		return -EINTR;
	if (!pto_core_owned_by(&pdev->core[i], pf))
		ret = -EPERM;
	else if (test_bit(PTO_CORE_F_QUARANTINE, &pdev->core[i].flags))
		ret = -EIO;
	up_read(&pdev->win_lock);
	if (!ret && pto_should_fail(PTO_FAIL_WINDOW_MAP))
		ret = -ENOMEM;
	if (ret)
		return ret;
	/*
	 * PFNMAP: the page has no struct-page mapping in the process, so
	 * get_user_pages() (vmsplice, O_DIRECT) cannot pin it past the zap
	 * and reach the next owner's window. Not inherited by fork.
	 */
	vma->vm_flags &= ~VM_MAYEXEC;
	vma->vm_flags |= VM_PFNMAP | VM_IO | VM_DONTCOPY | VM_DONTEXPAND |
			 VM_DONTDUMP;
	vma->vm_private_data = &pdev->core[i];
	vma->vm_ops = &pto_window_vm_ops;
	return 0;
}
