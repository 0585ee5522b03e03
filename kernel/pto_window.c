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
 * Remove the user mappings of @core's window. Core i's window is page i
 * of the file (PTO_WINDOW_OFFSET(i, window_size) with window_size =
 * PAGE_SIZE), whatever the page size. Every open of the device node
 * shares one address space (the inode's: @pf->mapping), so this removes
 * every file's mappings of that page, not only @pf's. That is harmless:
 * each fault re-checks ownership under win_lock, so a zapped PTE of the
 * core's current owner (if the cluster changed hands meanwhile) comes
 * back at its next touch, and any other file's touch gets SIGBUS, with
 * or without the zap.
 */
void pto_window_zap(struct pto_file *pf, struct pto_core *core)
{
	if (pf->mapping)
		unmap_mapping_range(pf->mapping,
				    (loff_t)core->id << PAGE_SHIFT, PAGE_SIZE,
				    1);
}

/*
 * A cluster changes hands: clear its cores' user window pages. A launch
 * resets only the four registers it uses; the rest of the page is the
 * previous owner's to write, and the next owner may map an owned core's
 * window before it launches anything, so without this the page would be
 * a channel from one file to the next. A free cluster's cores are
 * unlaunched and their kthreads do not touch the page; a quarantined core
 * cannot be mapped (-EIO) and is cleared when a reset recovers it,
 * before it can be mapped (pto_retire_unquarantine). The cluster has no
 * owner.
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
 * A window page is inserted at fault time, and only while the faulting
 * file still owns the core's cluster. The check and the PTE insert run
 * under win_lock (read); the release path clears the owner and zaps under
 * win_lock (write) (pto_clusters_release_locked()): an insert either
 * precedes the zap (and is removed by it) or sees the new owner (and
 * fails). Returning the page to the core MM instead would install the PTE
 * after the lock is dropped, racing the zap. A spinlock (launch_lock)
 * cannot cover the insert: vmf_insert_pfn() may allocate a page table.
 * The fault never takes core_lock, so it never waits behind a launch's
 * handshake or a release's retirement deadline. After a release any touch
 * of the stale mapping gets SIGBUS.
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
	down_read(&pdev->win_lock);
	if (!pto_core_owned_by(&pdev->core[i], pf))
		ret = -EPERM;
	else if (test_bit(PTO_CORE_F_QUARANTINE, &pdev->core[i].flags))
		ret = -EIO;
	up_read(&pdev->win_lock);
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
