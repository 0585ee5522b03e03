/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * pto - dump lanes: per-task argument capture (Documentation/dump.md).
 *
 * A lane is bound by one file at a time, at a level latched at bind. The
 * kernel is its only producer: PTO_IOCTL_DUMP_CAPTURE copies one argument
 * (a tensor of the caller's buffer objects, or a scalar) into the lane's
 * payload arena and commits a 128-byte record into a metadata buffer. The
 * consumer maps the lane read-only at PTO_DUMP_MMAP_OFFSET(lane), drains
 * the ready queue, copies payloads out and gives them back with
 * PTO_IOCTL_DUMP_ACK. The conventions of <linux/pto.h> hold here: __u32 /
 * __u64 fields, explicit padding that must be zero, flags masks.
 */
#ifndef _UAPI_LINUX_PTO_DUMP_H
#define _UAPI_LINUX_PTO_DUMP_H

#include <linux/ioctl.h>
#include <linux/types.h>
#include <linux/pto.h>

/* Levels, latched at bind (the reference runtime's numbers). */
#define PTO_DUMP_OFF 0		/* nothing is captured */
#define PTO_DUMP_PARTIAL 1	/* marked arguments only */
#define PTO_DUMP_FULL 2		/* every argument, payloads for tensors */
#define PTO_DUMP_HYBRID 3	/* every record, marked payloads only */
#define PTO_DUMP_LEVEL_MAX PTO_DUMP_HYBRID

/* The metadata pool: 8 buffers x 256 records x 128 bytes = 256 KiB. */
#define PTO_DUMP_META_BUFFERS 8
#define PTO_DUMP_RECORDS 256
#define PTO_DUMP_RECORD_SIZE 128
#define PTO_DUMP_BUFFER_SIZE (PTO_DUMP_RECORDS * PTO_DUMP_RECORD_SIZE)

/*
 * mmap of lane @l: PROT_READ, MAP_SHARED, struct pto_dump_bind.mmap_size
 * bytes at PTO_DUMP_MMAP_OFFSET(l) (beyond every buffer object's offset).
 * The mapping is, from offset 0: the state block (PTO_DUMP_STATE_SIZE),
 * the metadata buffers (buffer b at PTO_DUMP_META_OFFSET +
 * b * PTO_DUMP_BUFFER_SIZE), then the circular payload arena
 * (PTO_DUMP_ARENA_OFFSET, arena_size bytes). PROT_WRITE is -EACCES.
 */
#define PTO_DUMP_MMAP_OFFSET(l) ((0x80000ULL + (__u64)(l)) << 32)
#define PTO_DUMP_STATE_SIZE 4096
#define PTO_DUMP_META_OFFSET PTO_DUMP_STATE_SIZE
#define PTO_DUMP_ARENA_OFFSET \
	(PTO_DUMP_META_OFFSET + PTO_DUMP_META_BUFFERS * PTO_DUMP_BUFFER_SIZE)

#define PTO_DUMP_MAGIC 0x50544f44u	/* "PTOD" */

/* Lane states (struct pto_dump_state.state, struct pto_dump_status). */
#define PTO_LANE_FREE 0		/* unbound */
#define PTO_LANE_BOUND 1	/* producing */
#define PTO_LANE_CLOSED 2	/* terminal closed: accounting complete */
/*
 * Retained until PTO_IOCTL_DUMP_RESET; one quarantined only for
 * PTO_LANE_Q_UNCLOSED is taken over by the next PTO_IOCTL_DUMP_BIND.
 */
#define PTO_LANE_QUARANTINED 3

/* Why a lane was quarantined (bits of struct pto_dump_status.quarantine). */
#define PTO_LANE_Q_PRODUCING (1u << 0)	/* its producer had not stopped */
#define PTO_LANE_Q_RESERVED (1u << 1)	/* a reservation was open */
#define PTO_LANE_Q_UNCLOSED (1u << 2)	/* its terminal never closed */

/* struct pto_dump_record.role / pto_dump_capture.role. */
#define PTO_DUMP_ROLE_INPUT 0
#define PTO_DUMP_ROLE_OUTPUT 1
#define PTO_DUMP_ROLE_INOUT 2

/* .stage */
#define PTO_DUMP_BEFORE_DISPATCH 0
#define PTO_DUMP_AFTER_COMPLETION 1

/* .kind */
#define PTO_DUMP_KIND_TENSOR 0
#define PTO_DUMP_KIND_SCALAR 1

/* struct pto_dump_record.flags */
#define PTO_DUMP_REC_TRUNCATED (1u << 0)  /* payload is a prefix */
#define PTO_DUMP_REC_CONTIGUOUS (1u << 1) /* row-major, no gaps */
#define PTO_DUMP_REC_PAYLOAD (1u << 2)	  /* has payload bytes */

/* Unused entries of func_id. */
#define PTO_DUMP_FUNC_NONE 0xFFFFFFFFu
#define PTO_DUMP_MAX_FUNCS 3
#define PTO_DUMP_MAX_RANK 4

/**
 * struct pto_dump_record - one committed argument, 128 bytes, in a
 * metadata buffer. Written by the kernel only; read after the buffer is
 * on the ready queue.
 * @task_id / @run_id: as the capture request gave them.
 * @func_id:	one id per subtask, PTO_DUMP_FUNC_NONE where unused.
 * @arg_index:	the argument's index (a scalar's: tensor count + index).
 * @role, @stage, @kind, @dtype: PTO_DUMP_ROLE_*, _*_DISPATCH/COMPLETION,
 *		PTO_DUMP_KIND_*, PTO_DTYPE_* of <linux/pto.h>.
 * @rank, @shape, @strides, @start_offset: the tensor's view in elements
 *		(strides per dimension; @start_offset from the buffer's
 *		first element); zero for a scalar.
 * @flags:	PTO_DUMP_REC_*.
 * @data:	a scalar's value; a tensor's payload position in the arena:
 *		its bytes are at arena[(@data + i) % arena_size], i below
 *		@payload_size (a payload wraps at the arena's end).
 * @payload_size: bytes of the logically contiguous payload, 0 for none.
 * @pad:	zero.
 */
struct pto_dump_record {
	__u64 task_id;
	__u64 run_id;
	__u32 func_id[PTO_DUMP_MAX_FUNCS];
	__u32 arg_index;
	__u32 role;
	__u32 stage;
	__u32 kind;
	__u32 dtype;
	__u32 rank;
	__u32 flags;
	__u32 shape[PTO_DUMP_MAX_RANK];
	__u64 strides[PTO_DUMP_MAX_RANK];
	__u64 start_offset;
	__u64 data;
	__u32 payload_size;
	__u32 pad;
};

/**
 * struct pto_dump_acct - a lane's accounting, in its state block and in
 * PTO_IOCTL_DUMP_STATUS.
 * @published_payloads: payloads in published buffers, in record order.
 * @completed_payloads: payloads the consumer acknowledged.
 * @total / @collected / @dropped / @truncated: records the producer was
 *	asked for, committed, refused (each once) and committed truncated;
 *	@total == @collected + @dropped whenever no capture is in flight.
 * @ready_tail / @ready_head: buffers published, and returned by the
 *	consumer (PTO_IOCTL_DUMP_ACK).
 */
struct pto_dump_acct {
	__u64 published_payloads;
	__u64 completed_payloads;
	__u64 total;
	__u64 collected;
	__u64 dropped;
	__u64 truncated;
	__u64 ready_tail;
	__u64 ready_head;
};

/**
 * struct pto_dump_state - the lane's state block at mmap offset 0. The
 * kernel writes it; the consumer reads. A buffer is published by writing
 * its index and record count at ready[n % 8] / ready_records[n % 8] and
 * then @acct.ready_tail = n + 1 (a release store: load it with acquire
 * before reading the entry and its records). Positions are
 * monotonic byte counts; an arena offset is a position % @arena_size.
 * @magic / @version: PTO_DUMP_MAGIC, 1.
 * @level / @state: PTO_DUMP_* latched at bind, PTO_LANE_*.
 * @arena_write_pos: the position after the last committed payload.
 * @acct: the accounting.
 * @free_count: buffers on the free queue.
 * @quarantine: PTO_LANE_Q_* once quarantined.
 */
struct pto_dump_state {
	__u32 magic;
	__u32 version;
	__u32 level;
	__u32 state;
	__u32 meta_buffers;
	__u32 records_per_buffer;
	__u32 record_size;
	__u32 quarantine;
	__u64 meta_offset;
	__u64 arena_offset;
	__u64 arena_size;
	__u64 arena_write_pos;
	struct pto_dump_acct acct;
	__u32 ready[PTO_DUMP_META_BUFFERS];
	__u32 ready_records[PTO_DUMP_META_BUFFERS];
	__u32 free_count;
	__u32 pad;
};

/* Valid flags for struct pto_dump_bind.flags (none defined yet). */
#define PTO_DUMP_BIND_FLAGS_VALID 0ULL

/**
 * struct pto_dump_bind - PTO_IOCTL_DUMP_BIND: own a lane.
 * @lane:	In: lane index, below struct pto_info.lanes.
 * @level:	In: PTO_DUMP_*, latched until unbind.
 * @flags:	In: a subset of PTO_DUMP_BIND_FLAGS_VALID.
 * @mmap_offset: Out: PTO_DUMP_MMAP_OFFSET(@lane).
 * @mmap_size:	Out: bytes to map (state, buffers, arena).
 * @arena_size:	Out: bytes of the payload arena.
 *
 * A lane quarantined only because its terminal never closed (nothing
 * producing) is taken over: its old counters go and it starts fresh.
 *
 * Errors: -EINVAL (lane, level, flags), -EBUSY (bound by a file, this one
 * included, or quarantined with a producer that may still run),
 * -EOPNOTSUPP (a level above OFF while this file has a resident-route
 * graph launched and not yet waited: that route has no capture), -ENOMEM.
 */
struct pto_dump_bind {
	__u32 lane;
	__u32 level;
	__u64 flags;
	__u64 mmap_offset;
	__u64 mmap_size;
	__u64 arena_size;
};

/* struct pto_dump_capture.flags */
#define PTO_DUMP_CAP_MARKED (1ULL << 0)	/* the argument carries a dump mark */
#define PTO_DUMP_CAP_FLAGS_VALID PTO_DUMP_CAP_MARKED

/* struct pto_dump_capture.result */
#define PTO_DUMP_RES_SKIPPED 0		/* not selected at this level */
#define PTO_DUMP_RES_COLLECTED 1	/* committed */
#define PTO_DUMP_RES_REFUSED 2		/* one refused record accounted */

/**
 * struct pto_dump_capture - PTO_IOCTL_DUMP_CAPTURE: the blocking producer,
 * one argument.
 * @lane:	In: a lane this file bound.
 * @handle:	In (tensor): the caller's buffer object holding it; 0 for a
 *		scalar.
 * @flags:	In: PTO_DUMP_CAP_*.
 * @run_id / @task_id / @func_id / @arg_index / @role / @stage / @kind /
 * @dtype / @rank / @shape / @strides / @start_offset: In, copied into the
 *		record (struct pto_dump_record); unused func ids
 *		PTO_DUMP_FUNC_NONE, unused shape / strides entries zero.
 * @bo_offset:	In (tensor): byte offset in the buffer of its element 0;
 *		element i of the view is at @bo_offset + (@start_offset +
 *		sum(idx[d] * @strides[d])) * element size, and the whole
 *		strided extent must lie inside the buffer.
 * @value:	In (scalar): the value's bits.
 * @timeout_ns:	In: absolute CLOCK_MONOTONIC deadline for back-pressure
 *		(arena or metadata space, waiting for the consumer).
 * @result:	Out: PTO_DUMP_RES_*.
 * @pad:	In: zero.
 *
 * Errors: -EINVAL (a field), -EPERM (not this file's lane), -ENOENT (no
 * such handle), -EFAULT (extent outside the buffer: refused, accounted),
 * -EBUSY (another capture is in flight on the lane), -EPIPE (terminal
 * closed), -ETIMEDOUT / -EINTR (gave up waiting: one refused record).
 */
struct pto_dump_capture {
	__u32 lane;
	__u32 handle;
	__u64 flags;
	__u64 run_id;
	__u64 task_id;
	__u32 func_id[PTO_DUMP_MAX_FUNCS];
	__u32 arg_index;
	__u32 role;
	__u32 stage;
	__u32 kind;
	__u32 dtype;
	__u32 rank;
	__u32 shape[PTO_DUMP_MAX_RANK];
	__u32 pad0;
	__u64 strides[PTO_DUMP_MAX_RANK];
	__u64 start_offset;
	__u64 bo_offset;
	__u64 value;
	__u64 timeout_ns;
	__u32 result;
	__u32 pad;
};

/* Valid flags for struct pto_dump_ack.flags (none defined yet). */
#define PTO_DUMP_ACK_FLAGS_VALID 0U

/**
 * struct pto_dump_ack - PTO_IOCTL_DUMP_ACK: the consumer's progress, as
 * absolute counts (repeating an ack changes nothing).
 * @lane:	In: a lane this file bound.
 * @flags:	In: a subset of PTO_DUMP_ACK_FLAGS_VALID.
 * @completed_payloads: In: payloads copied out, in record order: from
 *		acct.completed_payloads up to acct.published_payloads.
 * @returned_buffers: In: ready-queue entries consumed, from
 *		acct.ready_head up to acct.ready_tail; they return to the
 *		free queue in order.
 *
 * A value below the current one or beyond what was published is -EINVAL
 * and changes nothing.
 */
struct pto_dump_ack {
	__u32 lane;
	__u32 flags;
	__u64 completed_payloads;
	__u64 returned_buffers;
};

/* Valid flags for struct pto_dump_lane.flags (none defined yet). */
#define PTO_DUMP_LANE_FLAGS_VALID 0U

/**
 * struct pto_dump_lane - PTO_IOCTL_DUMP_CLOSE / PTO_IOCTL_DUMP_UNBIND.
 * @lane:	In: a lane this file bound.
 * @flags:	In: a subset of PTO_DUMP_LANE_FLAGS_VALID.
 *
 * CLOSE stops the producer, publishes the last partial buffer and closes
 * the terminal (the accounting is then complete); the consumer keeps
 * draining. UNBIND closes the terminal if still open and gives the lane
 * up. Both are -EBUSY while a capture is in flight, and -EIO once a
 * resident run's capture on this binding was aborted (records are
 * missing: the terminal never closes, the accounting stays unknown).
 */
struct pto_dump_lane {
	__u32 lane;
	__u32 flags;
};

/* Valid flags for struct pto_dump_status.flags (none defined yet). */
#define PTO_DUMP_STATUS_FLAGS_VALID 0U

/**
 * struct pto_dump_status - PTO_IOCTL_DUMP_STATUS: one lane (any file).
 * @lane / @flags: In; @flags a subset of PTO_DUMP_STATUS_FLAGS_VALID.
 * @state / @level / @quarantine: Out: PTO_LANE_*, PTO_DUMP_*, PTO_LANE_Q_*.
 * @owner:	Out: tgid of the binding file's opener (caller's pid
 *		namespace), 0 if none.
 * @open:	Out: 1 while a reservation is open.
 * @pad:	Out: 0.
 * @count / @reserved: Out: records committed into buffers, and that plus
 *		@open (reserved == count + open).
 * @arena_write_pos: Out: the write position, the open reservation's
 *		bytes included (the state block's excludes them).
 * @acct:	Out: the accounting (struct pto_dump_acct).
 * @open_bytes / @open_written: Out: the open reservation's payload bytes
 *		and the bytes copied so far.
 * @refused / @abandoned: Out (ABI 2.4): the two kinds of dropped record,
 *		refused (each once) and abandoned reservations; @acct.dropped
 *		is their sum.
 * @open_task_id / @open_arg_index: Out (ABI 2.4): the open reservation's
 *		task and argument, 0 without one.
 * @pad1:	Out: 0.
 *
 * A caller built against ABI 2.3 passes the struct without the 2.4
 * fields (144 bytes) and gets the fields it has.
 */
struct pto_dump_status {
	__u32 lane;
	__u32 flags;
	__u32 state;
	__u32 level;
	__u32 quarantine;
	__u32 owner;
	__u32 open;
	__u32 pad;
	__u64 count;
	__u64 reserved;
	__u64 arena_size;
	__u64 arena_write_pos;
	struct pto_dump_acct acct;
	__u64 open_bytes;
	__u64 open_written;
	__u64 refused;
	__u64 abandoned;
	__u64 open_task_id;
	__u32 open_arg_index;
	__u32 pad1;
};

/* Valid flags for struct pto_dump_reset.flags (none defined yet). */
#define PTO_DUMP_RESET_FLAGS_VALID 0U

/**
 * struct pto_dump_reset - PTO_IOCTL_DUMP_RESET (CAP_SYS_ADMIN): free
 * quarantined lanes.
 * @lanes:	In: bitmap of lanes; 0 means every quarantined lane.
 * @flags:	In: a subset of PTO_DUMP_RESET_FLAGS_VALID.
 * @recovered:	Out: lanes freed.
 * @remaining:	Out: quarantined lanes of @lanes whose producer still runs.
 */
struct pto_dump_reset {
	__u32 lanes;
	__u32 flags;
	__u32 recovered;
	__u32 remaining;
};

/* Commands 0x10-0x1F of PTO_IOCTL_BASE. */
#define PTO_IOCTL_DUMP_BIND _IOWR(PTO_IOCTL_BASE, 0x10, struct pto_dump_bind)
#define PTO_IOCTL_DUMP_CAPTURE _IOWR(PTO_IOCTL_BASE, 0x11, struct pto_dump_capture)
#define PTO_IOCTL_DUMP_ACK _IOWR(PTO_IOCTL_BASE, 0x12, struct pto_dump_ack)
#define PTO_IOCTL_DUMP_CLOSE _IOWR(PTO_IOCTL_BASE, 0x13, struct pto_dump_lane)
#define PTO_IOCTL_DUMP_UNBIND _IOWR(PTO_IOCTL_BASE, 0x14, struct pto_dump_lane)
#define PTO_IOCTL_DUMP_STATUS _IOWR(PTO_IOCTL_BASE, 0x15, struct pto_dump_status)
#define PTO_IOCTL_DUMP_RESET _IOWR(PTO_IOCTL_BASE, 0x16, struct pto_dump_reset)

#endif /* _UAPI_LINUX_PTO_DUMP_H */
