/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pto - the device, the open file and the lock order. Each area's own
 * header declares what the other areas may call.
 */

/*
 * Object lifetimes (leaf first on teardown): pto_device, module init ..
 * exit (fops.owner pins the module while a file is open); pto_file, open
 * .. last kref put (the fd holds one); pto_bo, ALLOC .. last kref put
 * (its handle, every mmap, a launched core's payload and each tensor of
 * its running task hold one, so FREE never pulls pages from a kernel);
 * pto_core, the device's lifetime (launch / stop change only its state).
 */

/*
 * Lock order: mmap_lock -> pto_device.core_lock -> pto_device.win_lock ->
 * pto_file.lock -> the range tree's lock (pto_file.ranges, a spinlock)
 * -> pto_device.bos_lock; pto_core.launch_lock (spinlock) is innermost.
 * A core thread takes only the range tree's lock (pto_bo_lookup()) and
 * the graph locks below; a window fault only win_lock, for reading.
 * Nothing frees under a lock a core thread takes, and no user memory is
 * touched under core_lock or win_lock.
 */

/*
 * Retirement takes neither core_lock nor win_lock; only the privileged
 * reset waits for it under core_lock (and takes win_lock to unquarantine
 * a core).
 */

/*
 * The resident route's spinlocks (pto_mock_graph.c): pto_core.graph_lock
 * -> pto_graph.lock, under core_lock at most (a graph's launch).
 */

/*
 * A dump lane's lock: mmap_lock -> pto_lane.lock -> pto_device.bos_lock
 * (a buffer's last put); no other driver lock nests with it.
 */
#ifndef _PTO_DRV_H_
#define _PTO_DRV_H_

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/maple_tree.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/xarray.h>
#include <linux/pto.h>
#include "pto_gm.h"
#include "pto_retire.h"

#define PTO_NAME "pto"
#define PTO_MAX_DEVICES 8
#define PTO_MAX_GM_MB 4096

struct dentry;
struct address_space;
struct pto_core;
struct pto_lane;

/**
 * struct pto_device - one mock NPU, /dev/ptoN.
 * @bos_lock: protects @bos (every live buffer object, for debugfs; a
 *	buffer joins it complete, its handle set: pto_bo_publish()).
 * @core_lock: protects cluster ownership changes, @cluster_releasing and
 *	every core's launch fields while launching (owner, payload,
 *	F_LAUNCH); serializes acquire, release, launch, the retire ioctl's
 *	ownership check and claim, and the reset. Held for short work only
 *	by every unprivileged path: the launch handshake's bounded wait for
 *	the core threads, never a retirement's wait (release, close and a
 *	failed launch claim under it and retire after dropping it), never
 *	user memory access, never taken by a window fault. Only the reset
 *	(CAP_SYS_ADMIN, debugfs) retires under it. Ioctls take it
 *	killable; release, unload and debugfs wait.
 * @cluster_releasing: clusters whose release dropped core_lock to retire
 *	their cores: still owned, but acquire and launch refuse them
 *	(-EBUSY) until the release clears the owner.
 * @win_lock: protects @cluster_owner for readers that must not wait behind
 *	core_lock: written with both core_lock and win_lock (write) held,
 *	read with either. Window faults and mmap,
 *	CORE_STATS and debugfs take only win_lock (read), so they never wait
 *	behind a launch or a retirement. Release clears an owner and zaps the
 *	window mappings under win_lock (write): a fault either completed its
 *	PTE before (and the zap removes it) or sees the new owner.
 * @core_wq: launchers and stoppers wait here for core state changes.
 * @workers / @gates: device control memory, two separate arrays of
 *	64-byte lines in one zeroed page-aligned block (@ctrl_mem).
 * @rsink / @rsink_priv: KUnit's recording sink for retirement's window
 *	and gate writes (NULL outside tests).
 * @retire_ms: KUnit's retirement deadline override (0: the parameter).
 * @lane: the dump lanes, @lanes of them (pto_lane.h; each has its lock).
 * @cap_epochs: the last resident run epoch handed out (args capture).
 * @cap_lock: protects @cap_runs and @cap_last; taken only by a capture's
 *	start and stop and by debugfs `capture`, never under another lock.
 * @cap_runs: graphs whose capture runs (pto_graph.cap_node).
 * @cap_last: the summary of the last capture stopped.
 * @cap_faults: the capture's fault injection (mock only).
 */
/**
 * struct pto_cap_summary - how a resident run's capture ended (debugfs).
 * @run_epoch / @run_id: the run; @lanes: the lanes it named.
 * @claiming / @ready: slots left in CLAIMING / READY at the stop.
 * @unanswered: phases queued without a terminal answer at the stop.
 * @sealed / @aborted / @chunks / @wouldblock / @refused: its
 *	supervisors' counters, summed.
 */
struct pto_cap_summary {
	u64 run_epoch;
	u64 run_id;
	u32 lanes;
	u32 claiming;
	u32 ready;
	u32 unanswered;
	u64 sealed;
	u64 aborted;
	u64 chunks;
	u64 wouldblock;
	u64 refused;
};

/**
 * struct pto_cap_faults - the mock's args-capture faults (debugfs
 * cap_stall, cap_ack_drop), each one-shot or counted, never set in a
 * build without CONFIG_PTO_MOCK_FAULTS.
 * @stall_step: PTO_CAPF_* at which the next core to reach it sleeps
 *	@stall_ms; 0: none. Taken by the core that fires it (cmpxchg).
 * @drop_acks: answers the supervisors compute but never write.
 */
struct pto_cap_faults {
	atomic_t stall_step;
	unsigned int stall_ms;
	atomic_t drop_acks;
};

struct pto_device {
	unsigned int index;
	unsigned int clusters;
	unsigned int cores;
	unsigned int lanes;
	struct pto_gm gm;
	struct device *dev;
	struct dentry *debugfs;

	spinlock_t bos_lock;		/* protects @bos */
	struct list_head bos;

	struct mutex core_lock;		/* protects ownership, launch fields */
	struct rw_semaphore win_lock;	/* protects @cluster_owner (readers) */
	wait_queue_head_t core_wq;
	struct pto_file *cluster_owner[PTO_MAX_CLUSTERS];
	u64 cluster_releasing;		/* under core_lock */
	struct pto_core *core;
	void *ctrl_mem;
	struct pto_worker_line *workers;
	struct pto_gate_line *gates;
	void (*rsink)(void *priv, struct pto_core *core, enum pto_rw what,
		      u32 val);
	void *rsink_priv;
	unsigned int retire_ms;
	struct pto_lane *lane;
	atomic64_t cap_epochs;
	struct mutex cap_lock;		/* protects @cap_runs, @cap_last */
	struct list_head cap_runs;
	struct pto_cap_summary cap_last;
	struct pto_cap_faults cap_faults;
};

/**
 * struct pto_file - per-open context.
 * @lock: serializes @bos, @ranges (a handle and its range change as one)
 *        and @next_handle; held for bounded work only (no free, no copy).
 * @tgid: the opener's tgid (CORE_STATS reports it with pid_vnr()).
 * @ranges: GM range -> struct pto_bo, what the file's tasks may touch;
 *        read under its own spinlock (pto_bo_lookup()).
 * @graphs: handle -> struct pto_graph, the file's resident-route graphs
 *        (each entry holds a reference; the xarray's own lock).
 * @mapping: the address space window zaps use; its inode pinned for pf's
 *        life. @poll_wq / @wakeups: completion wake-ups (poll(), read()).
 */
struct pto_file {
	struct kref ref;
	struct pto_device *pdev;
	struct pid *tgid;	/* the opener's thread group (a reference) */
	struct mm_struct *mm;	/* charged for buffers (mmgrab()), or NULL */

	struct mutex lock;	/* protects @bos, @ranges, @next_handle */
	struct xarray bos;
	u32 next_handle;	/* cyclic: a freed handle is not reused soon */
	struct maple_tree ranges;
	struct xarray graphs;

	struct address_space *mapping;
	wait_queue_head_t poll_wq;
	atomic64_t wakeups;
};

/* pto_drv.c */
struct pto_device *pto_device_lookup(unsigned int minor);

#endif /* _PTO_DRV_H_ */
