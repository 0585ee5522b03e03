// SPDX-License-Identifier: GPL-2.0-only
/*
 * pto - per-open file context and the ioctl dispatch table.
 *
 * The ioctl table follows iommufd: each command records its struct's
 * minimum size (offsetofend of the last field of its first version), the
 * user's size comes from the command number, and copy_struct_from_user()
 * zero-extends an older struct and rejects a newer one whose extra bytes
 * are not zero (-E2BIG). Commands are matched by number, so every size
 * of one command reaches the same handler.
 */
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/pto_dump.h>
#include "pto_drv.h"
#include "pto_file.h"
#include "pto_bo.h"
#include "pto_core.h"
#include "pto_lane.h"
#include "pto_graph.h"
#include "pto_graph_capture.h"
#include "pto_reset.h"
#include "pto_retire.h"
#include "pto_window.h"

static int pto_open(struct inode *inode, struct file *file)
{
	/* NULL until module init has succeeded (pto_device_lookup()). */
	struct pto_device *pdev = pto_device_lookup(iminor(inode));
	struct pto_file *pf;

	if (!pdev)
		return -ENXIO;
	/*
	 * Charged to the opener's memory cgroup, as everything a user can make the
	 * driver allocate in any number (buffers, handles, retirement contexts).
	 * A range's maple nodes are not (GFP_NOWAIT, unaccounted cache) but are
	 * bounded by the GM size over the page size.
	 */
	pf = kzalloc(sizeof(*pf), GFP_KERNEL_ACCOUNT);
	if (!pf)
		return -ENOMEM;
	kref_init(&pf->ref);
	pf->pdev = pdev;
	pf->tgid = get_task_pid(current, PIDTYPE_TGID);
	/* Buffers are charged to the opener's mm (pto_bo_charge()). */
	pf->mm = current->mm;
	if (pf->mm)
		mmgrab(pf->mm);
	mutex_init(&pf->lock);
	xa_init_flags(&pf->bos, XA_FLAGS_ALLOC1 | XA_FLAGS_ACCOUNT);
	mt_init(&pf->ranges);
	xa_init_flags(&pf->graphs, XA_FLAGS_ALLOC1 | XA_FLAGS_ACCOUNT);
	/*
	 * The window zaps use the mapping after close: a core quarantined
	 * under this file keeps a reference to it (r_pf) until a reset or
	 * unload. Pin the inode the mapping belongs to for as long as pf
	 * lives (a device node can be unlinked and its inode evicted).
	 */
	pf->mapping = file->f_mapping;
	ihold(pf->mapping->host);
	init_waitqueue_head(&pf->poll_wq);
	atomic64_set(&pf->wakeups, 0);
	file->private_data = pf;
	return 0;
}

static void pto_file_free(struct kref *ref)
{
	struct pto_file *pf = container_of(ref, struct pto_file, ref);

	pto_file_destroy_bos(pf);
	iput(pf->mapping->host);
	if (pf->mm)
		mmdrop(pf->mm);
	put_pid(pf->tgid);
	mutex_destroy(&pf->lock);
	kfree(pf);
}

void pto_file_put(struct pto_file *pf)
{
	kref_put(&pf->ref, pto_file_free);
}

/*
 * Leaf first: lanes (retained when unsettled, with their references on
 * buffer objects), cores (they pin buffer objects and the context), buffer
 * objects, then the context itself.
 */
static int pto_release(struct inode *inode, struct file *file)
{
	struct pto_file *pf = file->private_data;

	pto_file_stop_captures(pf);
	pto_file_release_lanes(pf);
	pto_file_release_cores(pf);
	pto_file_release_graphs(pf);
	pto_file_release_bos(pf);
	pto_file_put(pf);
	return 0;
}

/* What the driver relies on in the uapi's values (GET_INFO, COND, masks). */
static_assert(PTO_CORE_AIC == 1 && PTO_CORE_AIV == 2);
static_assert(PTO_CORES_PER_CLUSTER == 3);	/* one AIC, then two AIV */
static_assert(PTO_CORE_MASK_WORDS * 64 >= PTO_MAX_CORES);
static_assert(PTO_ID_MAX == PTO_COND_ID_MASK);
static_assert(!(PTO_COND_ID_MASK & (PTO_COND_ERR_MASK | PTO_COND_STATE_MASK)));
static_assert(!(PTO_COND_ERR_MASK & PTO_COND_STATE_MASK));
static_assert((PTO_COND_ERR_MASK >> PTO_COND_ERR_SHIFT) >= PTO_TASK_EINVAL);
static_assert(PTO_ARG_OUT < PTO_PAYLOAD_TENSORS);
static_assert(PTO_CORE_QUARANTINED == 6 && PTO_CORE_UNLAUNCHED == 0);

static int pto_ioctl_get_info(struct pto_file *pf, void *data)
{
	struct pto_info *args = data;
	struct pto_device *pdev = pf->pdev;
	u32 __user *types = u64_to_user_ptr(args->core_types);
	u32 i, n;

	/* Out fields are overwritten, not checked: a struct can be reused. */
	if (args->pad)
		return -EINVAL;
	if (args->core_types_count && !args->core_types)
		return -EFAULT;

	n = min_t(u32, args->core_types_count, pdev->cores);
	for (i = 0; i < n; i++) {
		u32 type = i % PTO_CORES_PER_CLUSTER ? PTO_CORE_AIV :
						       PTO_CORE_AIC;

		if (put_user(type, &types[i]))
			return -EFAULT;
	}
	args->abi_major = PTO_ABI_MAJOR;
	args->abi_minor = PTO_ABI_MINOR;
	args->device = pdev->index;
	args->clusters = pdev->clusters;
	args->cores = pdev->cores;
	args->lanes = pdev->lanes;
	args->gm_size = pdev->gm.size;
	args->gm_align = PAGE_SIZE;
	args->window_size = PAGE_SIZE;
	args->caps = PTO_CAP_MOCK | PTO_CAP_GM_MMAP | PTO_CAP_CORES |
		     PTO_CAP_DUMP;
	return 0;
}

/*
 * How the dispatch treats a command's struct (Documentation/abi.md):
 * PTO_IOC_OUT	Out fields: copied back after the handler.
 * PTO_IOC_PROBE	an effect that cannot be undone and a report the caller
 *		needs (CORE_RETIRE, CORE_RESET): the caller's bytes are
 *		written back first, so an unwritable struct fails first.
 * PTO_IOC_WRITE	changes state: a read-only file gets -EBADF.
 * PTO_IOC_OUT_ERR	Out fields copied back on an error too (bad graphs).
 * A create (BO_ALLOC) writes its reply itself, then publishes its object.
 */
#define PTO_IOC_OUT	BIT(0)
#define PTO_IOC_PROBE	BIT(1)
#define PTO_IOC_WRITE	BIT(2)
#define PTO_IOC_OUT_ERR	BIT(3)

struct pto_ioctl_desc {
	unsigned int nr;
	unsigned int min_size;
	unsigned int size;
	unsigned int flags;
	int (*fn)(struct pto_file *pf, void *data);
	int (*create)(struct pto_ucmd *ucmd);
};

#define PTO_IOCTL_DESC(_cmd, _fn, _create, _struct, _last, _flags)	\
	[_IOC_NR(_cmd)] = {						\
		.nr = _IOC_NR(_cmd),					\
		.min_size = offsetofend(_struct, _last),		\
		.size = sizeof(_struct),				\
		.flags = _flags,					\
		.fn = _fn,						\
		.create = _create,					\
	}

#define PTO_IOCTL(_cmd, _fn, _struct, _last, _flags)			\
	PTO_IOCTL_DESC(_cmd, _fn, NULL, _struct, _last, _flags)

#define PTO_IOCTL_CREATE(_cmd, _create, _struct, _last, _flags)	\
	PTO_IOCTL_DESC(_cmd, NULL, _create, _struct, _last, _flags)

static const struct pto_ioctl_desc pto_ioctls[] = {
	PTO_IOCTL(PTO_IOCTL_GET_INFO, pto_ioctl_get_info, struct pto_info, pad,
		  PTO_IOC_OUT),
	PTO_IOCTL_CREATE(PTO_IOCTL_BO_ALLOC, pto_ioctl_bo_alloc,
			 struct pto_bo_alloc, mmap_offset, PTO_IOC_WRITE),
	PTO_IOCTL(PTO_IOCTL_BO_FREE, pto_ioctl_bo_free, struct pto_bo_free, pad,
		  PTO_IOC_WRITE),
	PTO_IOCTL(PTO_IOCTL_BO_INFO, pto_ioctl_bo_info, struct pto_bo_info,
		  flags, PTO_IOC_OUT),
	PTO_IOCTL(PTO_IOCTL_CLUSTER_ACQUIRE, pto_ioctl_cluster_acquire,
		  struct pto_cluster_acquire, flags, PTO_IOC_WRITE),
	PTO_IOCTL(PTO_IOCTL_CLUSTER_RELEASE, pto_ioctl_cluster_release,
		  struct pto_cluster_acquire, flags, PTO_IOC_WRITE),
	PTO_IOCTL(PTO_IOCTL_CORE_LAUNCH, pto_ioctl_core_launch,
		  struct pto_core_launch, flags, PTO_IOC_WRITE),
	PTO_IOCTL(PTO_IOCTL_DOORBELL, pto_ioctl_doorbell, struct pto_doorbell,
		  flags, PTO_IOC_WRITE),
	PTO_IOCTL(PTO_IOCTL_CORE_STATS, pto_ioctl_core_stats,
		  struct pto_core_stats, launches, PTO_IOC_OUT),
	PTO_IOCTL(PTO_IOCTL_CORE_RETIRE, pto_ioctl_core_retire,
		  struct pto_core_retire, elapsed_ns,
		  PTO_IOC_OUT | PTO_IOC_PROBE | PTO_IOC_WRITE),
	PTO_IOCTL(PTO_IOCTL_RETIRE_STATUS, pto_ioctl_retire_status,
		  struct pto_retire_status, quarantines, PTO_IOC_OUT),
	PTO_IOCTL(PTO_IOCTL_CORE_RESET, pto_ioctl_core_reset,
		  struct pto_core_reset, remaining,
		  PTO_IOC_OUT | PTO_IOC_PROBE | PTO_IOC_WRITE),
	PTO_IOCTL(PTO_IOCTL_DUMP_BIND, pto_ioctl_dump_bind,
		  struct pto_dump_bind, arena_size, PTO_IOC_OUT | PTO_IOC_WRITE),
	PTO_IOCTL(PTO_IOCTL_DUMP_CAPTURE, pto_ioctl_dump_capture,
		  struct pto_dump_capture, pad, PTO_IOC_OUT | PTO_IOC_WRITE),
	PTO_IOCTL(PTO_IOCTL_DUMP_ACK, pto_ioctl_dump_ack, struct pto_dump_ack,
		  returned_buffers, PTO_IOC_WRITE),
	PTO_IOCTL(PTO_IOCTL_DUMP_CLOSE, pto_ioctl_dump_close,
		  struct pto_dump_lane, flags, PTO_IOC_WRITE),
	PTO_IOCTL(PTO_IOCTL_DUMP_UNBIND, pto_ioctl_dump_unbind,
		  struct pto_dump_lane, flags, PTO_IOC_WRITE),
	PTO_IOCTL(PTO_IOCTL_DUMP_STATUS, pto_ioctl_dump_status,
		  struct pto_dump_status, open_written, PTO_IOC_OUT),
	PTO_IOCTL(PTO_IOCTL_DUMP_RESET, pto_ioctl_dump_reset,
		  struct pto_dump_reset, remaining,
		  PTO_IOC_OUT | PTO_IOC_WRITE),
	PTO_IOCTL(PTO_IOCTL_GRAPH_LAUNCH, pto_ioctl_graph_launch,
		  struct pto_graph_launch, pad,
		  PTO_IOC_OUT | PTO_IOC_OUT_ERR | PTO_IOC_WRITE),
	PTO_IOCTL(PTO_IOCTL_GRAPH_WAIT, pto_ioctl_graph_wait,
		  struct pto_graph_wait, elapsed_ns, PTO_IOC_OUT | PTO_IOC_WRITE),
};

/* Large enough for any command's struct (the table uses sizeof). */
union pto_ioctl_buf {
	struct pto_info info;
	struct pto_bo_alloc bo_alloc;
	struct pto_bo_free bo_free;
	struct pto_bo_info bo_info;
	struct pto_cluster_acquire cluster;
	struct pto_core_launch launch;
	struct pto_doorbell doorbell;
	struct pto_core_stats stats;
	struct pto_core_retire retire;
	struct pto_retire_status retire_status;
	struct pto_core_reset reset;
	struct pto_dump_bind dump_bind;
	struct pto_dump_capture dump_capture;
	struct pto_dump_ack dump_ack;
	struct pto_dump_lane dump_lane;
	struct pto_dump_status dump_status;
	struct pto_dump_reset dump_reset;
	struct pto_graph_launch graph_launch;
	struct pto_graph_wait graph_wait;
};

/* Write a create's reply; only then may it publish what it created. */
int pto_ucmd_respond(struct pto_ucmd *ucmd)
{
	if (copy_to_user(ucmd->ubuffer, ucmd->cmd,
			 min(ucmd->user_size, ucmd->size)))
		return -EFAULT;
	return 0;
}

static long pto_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct pto_file *pf = file->private_data;
	void __user *uarg = (void __user *)arg;
	const struct pto_ioctl_desc *desc;
	union pto_ioctl_buf buf;
	unsigned int nr = _IOC_NR(cmd);
	unsigned int usize = _IOC_SIZE(cmd);
	int ret;

	if (_IOC_TYPE(cmd) != PTO_IOCTL_BASE ||
	    _IOC_DIR(cmd) != (_IOC_READ | _IOC_WRITE) ||
	    nr >= ARRAY_SIZE(pto_ioctls) ||
	    !(pto_ioctls[nr].fn || pto_ioctls[nr].create))
		return -ENOTTY;
	desc = &pto_ioctls[nr];
	if (usize < desc->min_size)
		return -EINVAL;
	if ((desc->flags & PTO_IOC_WRITE) && !(file->f_mode & FMODE_WRITE))
		return -EBADF;

	ret = copy_struct_from_user(&buf, desc->size, uarg, usize);
	if (ret)
		return ret;
	/* The caller's own bytes (a longer struct's tail is zero and kept). */
	if ((desc->flags & PTO_IOC_PROBE) &&
	    copy_to_user(uarg, &buf, min(usize, desc->size)))
		return -EFAULT;
	if (desc->create) {
		struct pto_ucmd ucmd = {
			.pf = pf,
			.ubuffer = uarg,
			.user_size = usize,
			.size = desc->size,
			.cmd = &buf,
		};

		return desc->create(&ucmd);
	}
	ret = desc->fn(pf, &buf);
	if (!(desc->flags & PTO_IOC_OUT) ||
	    (ret && !(desc->flags & PTO_IOC_OUT_ERR)))
		return ret;
	if (copy_to_user(uarg, &buf, min(usize, desc->size)))
		return -EFAULT;
	return ret;
}

/*
 * Offsets below 1 << PTO_MMAP_BO_SHIFT are core windows, above are bos,
 * from PTO_DUMP_MMAP_OFFSET(0) (beyond every handle) dump lanes.
 */
static int pto_mmap(struct file *file, struct vm_area_struct *vma)
{
	unsigned long slot = vma->vm_pgoff >> (PTO_MMAP_BO_SHIFT - PAGE_SHIFT);

	if (!slot)
		return pto_window_mmap(file->private_data, vma);
	if (slot >= PTO_DUMP_MMAP_OFFSET(0) >> PTO_MMAP_BO_SHIFT)
		return pto_lane_mmap(file->private_data, vma);
	return pto_bo_mmap(file->private_data, vma);
}

/* Readable while a core delivered a completion wake-up not yet read. */
static __poll_t pto_poll(struct file *file, poll_table *wait)
{
	struct pto_file *pf = file->private_data;

	poll_wait(file, &pf->poll_wq, wait);
	return atomic64_read(&pf->wakeups) ? EPOLLIN | EPOLLRDNORM : 0;
}

/* read(): 8 bytes, the number of wake-ups since the last read (eventfd). */
static ssize_t pto_read(struct file *file, char __user *buf, size_t len,
			loff_t *ppos)
{
	struct pto_file *pf = file->private_data;
	u64 n;
	int ret;

	if (len < sizeof(n))
		return -EINVAL;
	for (;;) {
		n = atomic64_xchg(&pf->wakeups, 0);
		if (n)
			break;
		if (file->f_flags & O_NONBLOCK)
			return -EAGAIN;
		ret = wait_event_interruptible(pf->poll_wq,
					       atomic64_read(&pf->wakeups));
		if (ret)
			return ret;
	}
	if (copy_to_user(buf, &n, sizeof(n)))
		return -EFAULT;
	return sizeof(n);
}

const struct file_operations pto_fops = {
	.owner = THIS_MODULE,
	.open = pto_open,
	.release = pto_release,
	.unlocked_ioctl = pto_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = pto_mmap,
	.poll = pto_poll,
	.read = pto_read,
	.llseek = noop_llseek,
};
