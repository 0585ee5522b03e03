/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pto - a resident run's capture state and the lane supervisors' service
 * step (pto_capture_sv.c, Documentation/capture.md): pure functions that
 * never wait except on a lane's lock, so tests drive them step by step
 * and the supervisor threads loop on them.
 */
#ifndef _PTO_CAPTURE_SV_H_
#define _PTO_CAPTURE_SV_H_

#include <linux/atomic.h>
#include <linux/sched.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/pto.h>
#include "pto_capture_slot.h"
#include "pto_graph.h"

struct pto_graph_task;
struct pto_lane;
struct task_struct;

/* Bytes one service step copies at most. */
#define PTO_SV_CHUNK (64 * 1024)
#define PTO_SV_NO_CORE U32_MAX

/**
 * struct pto_sv_task - what the supervisor reads of one validated task.
 * @t: the validated task (func_id, active_mask, flags, scalars, tensors
 *	with role and dump flags); never memory the caller can rewrite.
 * @src: per tensor slot, the kernel address of the view's element 0,
 *	pinned for the run (NULL for an unused slot).
 * @nscalars: scalars the task's kernels read (0..2), numbered after the
 *	tensor slots.
 */
struct pto_sv_task {
	const struct pto_graph_task *t;
	const u8 *src[PTO_PAYLOAD_TENSORS];
	u32 nscalars;
};

/**
 * struct pto_sv_source - where task metadata and tensor bytes come from
 *	(the graph, or a test's tables).
 * @task: fill @out for task @task_id (< ntasks); false if there is none.
 *	Called from the service step, no lock held; must not sleep long.
 */
struct pto_sv_source {
	bool (*task)(void *priv, u64 task_id, struct pto_sv_task *out);
	void *priv;
};

/**
 * struct pto_sv_core - the supervisor's state for one core of its lane.
 * @core: the core's index (its request and acknowledgement lines).
 * @last_tick: the request_tick last accepted or ignored.
 * @obs_tick: observation order of the queued phase; 0: not queued.
 * @answered: the request_tick last answered.
 * @next_arg: the argument number the phase resumes at.
 * @terminal: the queued phase was answered Sealed or Aborted.
 * @v: the request as accepted.
 */
struct pto_sv_core {
	u32 core;
	u64 last_tick;
	u64 obs_tick;
	u64 answered;
	u32 next_arg;
	bool terminal;
	struct pto_capture_view v;
};

/* Counters of one supervisor (debugfs, the run's end). */
struct pto_sv_stats {
	u64 steps;
	u64 chunks;
	u64 bytes;
	u64 committed;
	u64 refused;
	u64 abandoned;
	u64 wouldblock;
	u64 sealed;
	u64 aborted;
	u64 bad;
};

struct pto_cap_run;

/**
 * struct pto_cap_sv - the supervisor of one named lane for one run.
 * @run / @lane / @lane_index: its run, the lane it produces into, and the
 *	lane's place among the run's named lanes.
 * @level: the lane's PTO_DUMP_* level, fixed for the run.
 * @ncores / @cores: the cores of the clusters this lane serves.
 * @observe: the lane's observation counter (obs_tick).
 * @open_core: index into @cores of the open reservation's owner, or
 *	PTO_SV_NO_CORE.
 * @stop: set before the thread is stopped; the next step settles.
 * @settled: pto_sv_settle() ran.
 * @kick / @wq / @thread: the thread's wake-up (pto_graph_capture.c).
 * @drop_acks: the mock's fault counter of answers not written, or NULL.
 */
struct pto_cap_sv {
	struct pto_cap_run *run;
	struct pto_lane *lane;
	u32 lane_index;
	u32 level;
	u32 ncores;
	u64 observe;
	u32 open_core;
	bool stop;
	bool settled;
	atomic_t kick;
	atomic_t *drop_acks;
	wait_queue_head_t wq;
	struct task_struct *thread;
	struct pto_sv_stats stats;
	struct pto_sv_core *cores;
};

/**
 * struct pto_cap_run - a resident run's capture state (NULL: dump off).
 * @area: the slots (clusters x PTO_GRAPH_SLOTS) and the request and
 *	acknowledgement lines (one per core of the device).
 * @seq: per core, its phase_seq counter, owned by that core's thread.
 * @run_epoch: full 64-bit, from the device's counter; never truncated.
 * @run_id: the caller's, stamped in every record.
 * @ntasks: tasks of the graph (the identity check).
 * @clusters: the device's clusters; @lane_of[c]: the index into @sv of
 *	the lane serving cluster c (U8_MAX: not in the graph).
 * @nlanes / @sv: the named lanes' supervisors.
 * @fatal: the run failed; every supervisor settles at its next step.
 * @dead: every supervisor returned (set by the stop path, for the cores).
 */
struct pto_cap_run {
	struct pto_capture_area area;
	u32 *seq;
	u64 run_epoch;
	u64 run_id;
	u32 ntasks;
	u32 clusters;
	u8 lane_of[PTO_MAX_CLUSTERS];
	u32 nlanes;
	struct pto_cap_sv *sv[PTO_MAX_LANES];
	struct pto_sv_source src;
	bool fatal;
	int dead;
};

/**
 * struct pto_cap_run_args - what pto_cap_run_create() needs.
 * @clusters: the device's clusters (PTO_MAX_CLUSTERS at most).
 * @graph_clusters: bitmap of the clusters the graph runs on; the k-th of
 *	them is served by lane k % @nlanes.
 * @nlanes / @lanes / @level: the named lanes, bound, made busy by the
 *	caller, and their levels (above PTO_DUMP_OFF).
 * @epochs: the device's epoch counter (atomic64_inc_return).
 * @run_id / @ntasks / @src: as in struct pto_cap_run.
 */
struct pto_cap_run_args {
	u32 clusters;
	u64 graph_clusters;
	u32 nlanes;
	struct pto_lane *lanes[PTO_MAX_LANES];
	u32 level[PTO_MAX_LANES];
	atomic64_t *epochs;
	u64 run_id;
	u32 ntasks;
	struct pto_sv_source src;
};

struct pto_cap_run *pto_cap_run_create(const struct pto_cap_run_args *a);
void pto_cap_run_destroy(struct pto_cap_run *run);

/* The slot index of (cluster, pending slot) in the run's area. */
static inline u32 pto_cap_slot_index(u32 cluster, u32 pending)
{
	return cluster * PTO_GRAPH_SLOTS + pending;
}

/* The supervisor serving @cluster, or NULL (not one of the graph's). */
static inline struct pto_cap_sv *pto_cap_sv_of(struct pto_cap_run *run,
					       u32 cluster)
{
	if (cluster >= run->clusters || run->lane_of[cluster] >= run->nlanes)
		return NULL;
	return run->sv[run->lane_of[cluster]];
}

/* A core published a request: wake the cluster's supervisor. */
static inline void pto_cap_kick(struct pto_cap_run *run, u32 cluster)
{
	struct pto_cap_sv *sv = pto_cap_sv_of(run, cluster);

	if (sv) {
		atomic_set(&sv->kick, 1);
		wake_up(&sv->wq);
	}
}

/* The run failed: every supervisor settles at its next step. */
static inline void pto_cap_run_fail(struct pto_cap_run *run)
{
	WRITE_ONCE(run->fatal, true);
}

/* One service step; true if it did work (accepted, answered, copied). */
bool pto_sv_step(struct pto_cap_sv *sv);
/* Abandon an open reservation; Aborted to every accepted open request. */
void pto_sv_settle(struct pto_cap_sv *sv);

#endif /* _PTO_CAPTURE_SV_H_ */
