/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * pto - the resident route's ABI: a host-built task graph uploaded into a
 * GM buffer of the caller and scheduled among the mock cores themselves
 * (Documentation/resident.md). The conventions of <linux/pto.h> apply.
 */
#ifndef _UAPI_LINUX_PTO_GRAPH_H_
#define _UAPI_LINUX_PTO_GRAPH_H_

#include <linux/ioctl.h>
#include <linux/types.h>
#include <linux/pto.h>

#define PTO_GRAPH_MAGIC 0x48475450u	/* "PTGH", little-endian */
#define PTO_GRAPH_VERSION 2
#define PTO_GRAPH_MAX_TASKS 16384
#define PTO_GRAPH_MAX_EDGES 262144
/* The most blocks of one SPMD task (struct pto_graph_task.block_num). */
#define PTO_GRAPH_MAX_BLOCKS 32768

/*
 * A task's active_mask: its subtasks, by core of one cluster. Valid masks:
 * one AIC, one or two AIV, or MIX 1C2V (PTO_GRAPH_MASK_MIX).
 */
#define PTO_GRAPH_AIC (1u << 0)
#define PTO_GRAPH_AIV0 (1u << 1)
#define PTO_GRAPH_AIV1 (1u << 2)
#define PTO_GRAPH_MASK_MIX (PTO_GRAPH_AIC | PTO_GRAPH_AIV0 | PTO_GRAPH_AIV1)

/* struct pto_graph_tensor.role: how the task uses the tensor. */
#define PTO_GRAPH_ROLE_NONE 0	/* slot unused: the whole entry zero */
#define PTO_GRAPH_ROLE_IN 1
#define PTO_GRAPH_ROLE_OUT 2
#define PTO_GRAPH_ROLE_INOUT 3

/* struct pto_graph_tensor.flags / pto_graph_task.flags: dump marks. */
#define PTO_GRAPH_ARG_DUMP (1u << 0)
#define PTO_GRAPH_ARG_FLAGS_VALID PTO_GRAPH_ARG_DUMP
#define PTO_GRAPH_TASK_DUMP_SCALARS (1u << 0)
#define PTO_GRAPH_TASK_FLAGS_VALID PTO_GRAPH_TASK_DUMP_SCALARS

/**
 * struct pto_graph_tensor - one tensor argument of a task.
 * @t:		In: the tensor, by GM address (struct pto_tensor_desc); its
 *		whole strided extent must lie in one buffer of the caller.
 * @role:	In: PTO_GRAPH_ROLE_*; a kernel's a / b slots are IN or INOUT,
 *		its out slot OUT or INOUT; an unused slot NONE and all zero.
 * @flags:	In: a subset of PTO_GRAPH_ARG_FLAGS_VALID.
 */
struct pto_graph_tensor {
	struct pto_tensor_desc t;
	__u32 role;
	__u32 flags;
};

/**
 * struct pto_graph_task - one task of the graph.
 * @func_id:	In: PTO_FUNC_* per subtask: [0] the AIC's, [1] / [2] the
 *		AIVs'; zero for a core outside @active_mask.
 * @active_mask: In: PTO_GRAPH_AIC / _AIV0 / _AIV1 bits, one cluster's.
 * @fanin:	In: the number of edges ending at this task.
 * @succ_start: In: index of its first successor in the edge array.
 * @succ_count: In: its successors, edge[@succ_start .. + @succ_count).
 * @flags:	In: a subset of PTO_GRAPH_TASK_FLAGS_VALID.
 * @block_base: In: the first block this task runs of an SPMD task of
 *		@block_num blocks; 0 when @block_num is 0.
 * @block_num:	In: 0 (a task of its own), or the SPMD task's blocks,
 *		at most PTO_GRAPH_MAX_BLOCKS; @block_base plus the blocks
 *		this task runs must not exceed it.
 * @scalar:	In: the kernels' scalars (struct pto_payload.scalar).
 * @t:		In: tensors a, b, out (PTO_ARG_*), shared by the subtasks.
 * @status:	Out: PTO_TASK_* (the first subtask error), written by the
 *		cores when the task completes.
 * @core:	Out: the core that ended the task's last subtask.
 * @start_ns:	Out: CLOCK_MONOTONIC ns at which its first subtask started.
 * @end_ns:	Out: when its last subtask ended.
 *
 * With @block_num 0 each subtask runs with block_idx its rank among the
 * active cores and block_num their count. Otherwise the task is part of
 * an SPMD task, as the scheduler route's blocks: each active core of a
 * single-core or AIV-pair task is one block, block_idx @block_base plus
 * its rank; a MIX task is one MIX block, its three subtasks block_idx
 * @block_base; every subtask gets block_num @block_num.
 */
struct pto_graph_task {
	__u32 func_id[PTO_CORES_PER_CLUSTER];
	__u32 active_mask;
	__u32 fanin;
	__u32 succ_start;
	__u32 succ_count;
	__u32 flags;
	__u32 block_base;
	__u32 block_num;
	__u64 scalar[2];
	struct pto_graph_tensor t[PTO_PAYLOAD_TENSORS];
	__u32 status;
	__u32 core;
	__u64 start_ns;
	__u64 end_ns;
};

/**
 * struct pto_graph_hdr - the start of an uploaded graph.
 * @magic:	In: PTO_GRAPH_MAGIC.
 * @version:	In: PTO_GRAPH_VERSION.
 * @task_count:	In: tasks, 1..PTO_GRAPH_MAX_TASKS.
 * @edge_count:	In: edges (successor entries), 0..PTO_GRAPH_MAX_EDGES.
 * @size:	In: bytes of the whole graph: the header, @task_count tasks
 *		of @task_size bytes, then @edge_count __u32 task indices,
 *		rounded up to 8.
 * @task_size:	In: sizeof(struct pto_graph_task).
 * @flags:	In: must be zero.
 * @reserved:	In: must be zero.
 */
struct pto_graph_hdr {
	__u32 magic;
	__u32 version;
	__u32 task_count;
	__u32 edge_count;
	__u64 size;
	__u32 task_size;
	__u32 flags;
	__u64 reserved[2];
};

/* The field struct pto_graph_launch.bad_field names. */
enum pto_graph_field {
	PTO_GRAPH_FIELD_NONE = 0,
	PTO_GRAPH_FIELD_ADDR,		/* graph_addr / graph_size */
	PTO_GRAPH_FIELD_TRUNCATED,	/* upload shorter than hdr.size */
	PTO_GRAPH_FIELD_MAGIC,
	PTO_GRAPH_FIELD_VERSION,
	PTO_GRAPH_FIELD_COUNT,		/* task_count / edge_count */
	PTO_GRAPH_FIELD_SIZE,		/* hdr.size / task_size */
	PTO_GRAPH_FIELD_HDR_FLAGS,	/* hdr.flags / reserved */
	PTO_GRAPH_FIELD_TASK_FLAGS,
	PTO_GRAPH_FIELD_ACTIVE_MASK,
	PTO_GRAPH_FIELD_FUNC_ID,
	PTO_GRAPH_FIELD_SUCC,		/* succ_start / succ_count */
	PTO_GRAPH_FIELD_EDGE,		/* a successor out of range or self */
	PTO_GRAPH_FIELD_FANIN,
	PTO_GRAPH_FIELD_CYCLE,
	PTO_GRAPH_FIELD_ROLE,
	PTO_GRAPH_FIELD_ARG_FLAGS,
	PTO_GRAPH_FIELD_ARGS,		/* scalars, unused slots, out fields */
	PTO_GRAPH_FIELD_TENSOR,		/* dtype, rank, shape */
	PTO_GRAPH_FIELD_TENSOR_ADDR,	/* extent outside the caller's GM */
	PTO_GRAPH_FIELD_BLOCK,		/* block_base / block_num */
	PTO_GRAPH_FIELD_COUNT_
};

/* bad_task of a fault in the header or the launch arguments. */
#define PTO_GRAPH_TASK_NONE 0xFFFFFFFFu

/**
 * struct pto_graph_launch - PTO_IOCTL_GRAPH_LAUNCH: validate a graph and
 * start it on clusters whose cores the caller launched.
 * @graph_addr:	In: GM address of the graph, 8-aligned, in one buffer of
 *		the caller; the buffer is held until the graph's cores left
 *		it, and the cores write the tasks' Out fields there.
 * @graph_size:	In: bytes uploaded at @graph_addr.
 * @clusters:	In: bitmap of clusters the caller owns, every core of them
 *		launched by it (PTO_IOCTL_CORE_LAUNCH) and running no graph.
 * @flags:	In: a subset of PTO_GRAPH_LAUNCH_FLAGS_VALID (none yet).
 * @handle:	Out: the graph, for PTO_IOCTL_GRAPH_WAIT; never 0.
 * @bad_task:	Out, also on -EINVAL: the first bad task, or
 *		PTO_GRAPH_TASK_NONE.
 * @bad_field:	Out, also on -EINVAL: enum pto_graph_field.
 * @pad:	In: must be zero.
 * @run_id:	In: stamped in every args-dump record of the run.
 * @dump_lanes:	In: bitmap of dump lanes the caller bound above
 *		PTO_DUMP_OFF that capture the tasks' arguments at their
 *		boundaries (Documentation/capture.md); 0: no capture, and no
 *		capture storage. Each of the graph's clusters is served by
 *		one of them for the whole run.
 * @pad2:	In: must be zero.
 *
 * The whole graph is validated before any core sees it. Errors: -EINVAL
 * (a bad graph: @bad_task / @bad_field say where; bad flags, padding or
 * clusters; a lane in @dump_lanes not bound by the caller above
 * PTO_DUMP_OFF), -EPERM (a cluster not owned), -EBUSY (a core not
 * launched by the caller, or already running a graph; a lane in
 * @dump_lanes serving another run), -EOPNOTSUPP (the caller holds a
 * lane bound above PTO_DUMP_OFF that @dump_lanes does not name),
 * -ENOMEM.
 */
struct pto_graph_launch {
	__u64 graph_addr;
	__u64 graph_size;
	__u64 clusters;
	__u64 flags;
	__u32 handle;
	__u32 bad_task;
	__u32 bad_field;
	__u32 pad;
	__u64 run_id;
	__u32 dump_lanes;
	__u32 pad2;
};

#define PTO_GRAPH_LAUNCH_FLAGS_VALID 0ULL

/**
 * struct pto_graph_wait - PTO_IOCTL_GRAPH_WAIT: wait for a graph to end.
 * @handle:	In: from PTO_IOCTL_GRAPH_LAUNCH.
 * @flags:	In: a subset of PTO_GRAPH_WAIT_FLAGS_VALID (none yet).
 * @timeout_ns:	In: absolute CLOCK_MONOTONIC deadline; 0 does not wait.
 * @tasks:	Out: subtasks the cores ended (a MIX task counts three).
 * @errors:	Out: of which ended with an error.
 * @completed:	Out: tasks completed.
 * @err_task:	Out: the first task that failed, or PTO_GRAPH_TASK_NONE.
 * @err_status:	Out: its PTO_TASK_* (PTO_TASK_ESTOP: a core retired).
 * @pad:	In: must be zero.
 * @elapsed_ns:	Out: the launch ioctl's entry (validation included) to
 *		the graph's end.
 *
 * Returns 0 once the graph ended (all tasks completed, or a failure
 * drained the tasks in flight) and frees the handle; -ETIMEDOUT before
 * (the handle stays), -EINTR on a signal, -ENOENT for no such handle.
 * A graph whose task failed returns 0 with @err_task set.
 */
struct pto_graph_wait {
	__u32 handle;
	__u32 flags;
	__u64 timeout_ns;
	__u64 tasks;
	__u64 errors;
	__u32 completed;
	__u32 err_task;
	__u32 err_status;
	__u32 pad;
	__u64 elapsed_ns;
};

#define PTO_GRAPH_WAIT_FLAGS_VALID 0U

#define PTO_IOCTL_GRAPH_LAUNCH \
	_IOWR(PTO_IOCTL_BASE, 0x20, struct pto_graph_launch)
#define PTO_IOCTL_GRAPH_WAIT _IOWR(PTO_IOCTL_BASE, 0x21, struct pto_graph_wait)

#endif /* _UAPI_LINUX_PTO_GRAPH_H_ */
