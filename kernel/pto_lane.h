/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pto - dump lanes (pto_lane.c): binding, the capture ioctl over the
 * producer (pto_producer.h), the read-only mapping, quarantine and reset.
 */
#ifndef _PTO_LANE_H_
#define _PTO_LANE_H_

#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/xarray.h>

struct pto_device;
struct pto_file;
struct pto_producer;
struct pto_ucmd;
struct seq_file;
struct vm_area_struct;
struct pid;

/*
 * A lane's memory (pto_lane_mem.c): state block, metadata buffers and
 * arena in one vmalloc area, charged to the binder's memory cgroup. Each
 * binding gets its own; the lane and each of
 * its mappings hold a reference, so a mapping left after unbind keeps its
 * own binding's bytes and never sees the next binder's.
 */
struct pto_lane_mem {
	struct kref ref;
	void *vaddr;
	size_t size;
};

/**
 * struct pto_lane - one dump lane of a device.
 * @lock: protects every field below and the producer's steps (try_begin,
 *	commit, abandon, publish, ack, close); never held across a copy or
 *	a wait (a capture copies its own reservation unlocked).
 * @owner / @owner_pid: the binding file (not a reference: its release
 *	unbinds or quarantines the lane first) and its opener's tgid (a
 *	reference, kept while quarantined for debugfs and the status).
 * @busy: a capture is in flight: the producer has not stopped.
 * @held: buffer objects a capture read, one reference each (by handle:
 *	one file's), dropped only when the producer stopped.
 * @acks: bumped by each acknowledgement; a waiting capture wakes on @wq.
 * @cap_aborted: a resident run's capture on this binding was aborted: its
 *	close fails (-EIO), so release quarantines it as unclosed and the
 *	host's accounting reads unknown.
 */
struct pto_lane {
	struct pto_device *pdev;
	unsigned int index;
	struct mutex lock;		/* protects the lane and its producer */
	struct pto_file *owner;
	struct pid *owner_pid;
	u32 state;
	u32 quarantine;
	bool busy;
	struct pto_lane_mem *mem;
	struct pto_producer *prod;
	struct xarray held;
	wait_queue_head_t wq;
	u64 acks;
	bool cap_aborted;
};

struct pto_lane_mem *pto_lane_mem_alloc(size_t size);
void pto_lane_mem_put(struct pto_lane_mem *mem);
int pto_lane_mem_map(struct vm_area_struct *vma, struct pto_lane_mem *mem,
		     unsigned long pgoff);

int pto_lanes_init(struct pto_device *pdev);
void pto_lanes_fini(struct pto_device *pdev);
void pto_file_release_lanes(struct pto_file *pf);
int pto_lane_mmap(struct pto_file *pf, struct vm_area_struct *vma);
void pto_lanes_debugfs_show(struct seq_file *m, struct pto_device *pdev);

int pto_ioctl_dump_bind(struct pto_file *pf, void *data);
int pto_ioctl_dump_capture(struct pto_file *pf, void *data);
int pto_ioctl_dump_ack(struct pto_file *pf, void *data);
int pto_ioctl_dump_close(struct pto_file *pf, void *data);
int pto_ioctl_dump_unbind(struct pto_file *pf, void *data);
int pto_ioctl_dump_status(struct pto_file *pf, void *data);
int pto_ioctl_dump_reset(struct pto_file *pf, void *data);

#endif /* _PTO_LANE_H_ */
