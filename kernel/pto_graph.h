/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pto - the resident route: graphs uploaded into GM, validated whole
 * (pto_graph.c) and scheduled by the mock cores themselves
 * (pto_mock_graph.c). Documentation/resident.md.
 */
#ifndef _PTO_GRAPH_H_
#define _PTO_GRAPH_H_

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/pto.h>
#include <linux/pto_graph.h>

struct pto_bo;
struct pto_cap_run;
struct pto_core;
struct pto_device;
struct pto_file;
struct pto_lcache;
struct pto_mock_task;

/* Pending dispatch slots per cluster. */
#define PTO_GRAPH_SLOTS 2

/**
 * struct pto_gtask - a validated task, kernel-private.
 * @mask:	its active_mask.
 * @sub:	index of its first subtask in pto_graph.sub (one per active
 *		core, AIC first).
 * @succ_start / @succ_count: its successors in pto_graph.succ.
 * @pending:	predecessors not yet completed (under pto_graph.lock).
 * @status:	first subtask error.
 * @start_ns:	its first subtask's start.
 */
struct pto_gtask {
	u8 mask;
	u32 sub;
	u32 succ_start;
	u32 succ_count;
	u32 pending;
	u32 status;
	u64 start_ns;
};

/**
 * struct pto_gslot - one pending dispatch slot of a cluster.
 * @task:	the task claimed into the slot (valid while @mask != 0).
 * @mask:	its active_mask, 0 for a free slot.
 * @started:	subtask bits a core of the cluster took.
 * @done:	subtask bits that ended.
 * @seq:	its placement's number in the cluster's order (pto_graph.place),
 *		compared wraparound-safe: the oldest placed slot is taken first.
 */
struct pto_gslot {
	u32 task;
	u32 seq;
	u8 mask;
	u8 started;
	u8 done;
};

/**
 * struct pto_graph - a validated graph and its run.
 * @ref:	the file's handle holds one, each attached core one, each
 *		core running one of its subtasks one; the last put drops the
 *		buffers (so they stay held until every core left the graph).
 * @lock:	protects the run state: @ready, every task's @pending and
 *		@status, @slots, the counters, @aborted and @done. Taken by
 *		the cores (a spinlock: never held across a kernel's run).
 * @gbo / @gkaddr: the uploaded graph's buffer (held) and the kernel
 *		address of its first task, where the cores write Out fields.
 * @sub:	validated subtasks, their tensors pinned.
 * @ready:	FIFO of ready task indices, @rhead .. @rtail.
 * @slots:	PTO_GRAPH_SLOTS per cluster of the device (by cluster index).
 * @place:	per cluster, the next placement's @seq.
 * @clusters:	the clusters it runs on.
 * @lc_lines:	mock_lcache_lines at GRAPH_LAUNCH (0: no line cache).
 * @lc:		per core id, that core's line cache (pto_mock_lcache.h),
 *		NULL for every core while @lc_lines is 0.
 * @cap:	the run's args capture (pto_graph_capture.c), or NULL: set
 *		before any core is attached, freed with the graph.
 * @cap_img / @cap_tasks: the kernel's validated copy of the upload and
 *		its tasks, which the supervisors read (NULL without @cap).
 * @cap_lanes:	the lanes @cap serves with; @cap_stopped: its supervisors
 *		were stopped (by the graph's one end).
 */
struct pto_graph {
	struct kref ref;
	struct pto_device *pdev;
	struct pto_bo *gbo;
	void *gkaddr;
	u32 ntasks;
	u32 nsub;
	u32 nedges;
	struct pto_gtask *tasks;
	u32 *succ;
	struct pto_mock_task *sub;

	spinlock_t lock;	/* protects the run state (see above) */
	u32 *ready;
	u32 rhead;
	u32 rtail;
	struct pto_gslot (*slots)[PTO_GRAPH_SLOTS];
	u32 *place;
	u32 inflight;
	u32 completed;
	u64 subtasks;
	u64 errors;
	u32 err_task;
	u32 err_status;
	bool aborted;
	bool done;
	u64 start_ns;
	u64 end_ns;
	u64 clusters;
	unsigned int lc_lines;
	struct pto_lcache **lc;
	struct pto_cap_run *cap;
	void *cap_img;
	const struct pto_graph_task *cap_tasks;
	u32 cap_lanes;
	bool cap_stopped;
	struct list_head cap_node;	/* in pdev->cap_runs, under cap_lock */
	wait_queue_head_t wq;
};

/*
 * What a core took: one subtask of a task in its cluster's slot.
 * @mask: the task's participants, final at the claim (a single-AIV task
 *	  names its taker), which a task-boundary barrier waits for.
 * @placed: the claim moved ready tasks into slots (peers to kick).
 */
struct pto_gclaim {
	u32 task;
	u32 slot;
	u32 sub;
	u8 bit;
	u8 mask;
	bool placed;
};

/* pto_graph.c: upload, validation, the ioctls, the file's graphs. */
void pto_graph_put(struct pto_graph *g);
int pto_graph_alloc_lc(struct pto_graph *g, unsigned int lines);
int pto_ioctl_graph_launch(struct pto_file *pf, void *data);
int pto_ioctl_graph_wait(struct pto_file *pf, void *data);
void pto_file_release_graphs(struct pto_file *pf);

/* pto_mock_graph.c: the on-core scheduler. */
void pto_graph_start(struct pto_graph *g, u64 now);
void pto_graph_kick(struct pto_graph *g, struct pto_core *self);
void pto_graph_detach(struct pto_core *core, struct pto_graph *g);
bool pto_core_graph_step(struct pto_core *core);
void pto_core_graph_leave(struct pto_core *core);
bool pto_core_graph_pending(struct pto_core *core);

#if IS_ENABLED(CONFIG_PTO_KUNIT_TEST)
struct pto_graph *pto_graph_build(struct pto_file *pf, const void *img,
				  u64 size, struct pto_graph_launch *args);
bool pto_graph_claim(struct pto_graph *g, unsigned int core_id,
		     struct pto_gclaim *cl);
bool pto_graph_finish(struct pto_graph *g, unsigned int core_id,
		      const struct pto_gclaim *cl, u32 err, u64 start_ns,
		      u64 end_ns, bool *pushed);
bool pto_graph_core_leave_locked(struct pto_graph *g, unsigned int core_id);
bool pto_graph_has_work(struct pto_graph *g, unsigned int core_id);
bool pto_graph_kick_wants(struct pto_graph *g, unsigned int core_id,
			  unsigned int *budget);
#endif

#endif /* _PTO_GRAPH_H_ */
