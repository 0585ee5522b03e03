/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * pto - user-space ABI of the PTO-style NPU driver (pto.ko).
 *
 * Conventions (see Documentation/abi.md):
 *  - only __u32 / __u64 fields; every struct is a multiple of 8 bytes;
 *  - every padding / reserved field is In and must be zero (else -EINVAL);
 *  - every flags field has a mask of valid bits (unknown bits: -EINVAL);
 *  - pointers travel as __u64, arrays as count + pointer;
 *  - the driver accepts a shorter (older) struct and zero-extends it, and a
 *    longer (newer) one only if the extra bytes are zero (else -E2BIG);
 *  - a call that waits takes an absolute CLOCK_MONOTONIC timeout in ns;
 *  - a command that changes state needs a file open for writing (else
 *    -EBADF): an O_RDONLY file only observes (GET_INFO, BO_INFO,
 *    CORE_STATS, RETIRE_STATUS, poll, read).
 */
#ifndef _UAPI_LINUX_PTO_H
#define _UAPI_LINUX_PTO_H

#include <linux/ioctl.h>
#include <linux/types.h>

/*
 * The major changes on an incompatible change (libpto refuses another
 * major: -EPROTO), the minor on a compatible addition.
 */
#define PTO_ABI_MAJOR 2
#define PTO_ABI_MINOR 5

/* Topology: a cluster is one AIC core followed by two AIV cores. */
#define PTO_CORES_PER_CLUSTER 3
#define PTO_MAX_CLUSTERS 36
#define PTO_MAX_CORES (PTO_MAX_CLUSTERS * PTO_CORES_PER_CLUSTER)
#define PTO_MAX_LANES 5

/* Core types reported by PTO_IOCTL_GET_INFO. */
#define PTO_CORE_AIC 1
#define PTO_CORE_AIV 2

/* Capability flags (struct pto_info.caps). */
#define PTO_CAP_MOCK (1ULL << 0)	/* the device is the mock backend */
#define PTO_CAP_GM_MMAP (1ULL << 1)	/* GM buffer objects can be mmapped */
#define PTO_CAP_CORES (1ULL << 2)	/* mock cores: launch, windows, kernels */
#define PTO_CAP_DUMP (1ULL << 3)	/* dump lanes (<linux/pto_dump.h>) */

/*
 * GM device addresses below this (64 KiB) are never handed out: 0 is
 * never a valid one. A buffer is at most pto_info.gm_size minus this.
 */
#define PTO_GM_RESERVED 0x10000ULL

/**
 * struct pto_info - PTO_IOCTL_GET_INFO: describe the device.
 * @abi_major:	Out: PTO_ABI_MAJOR of the driver.
 * @abi_minor:	Out: PTO_ABI_MINOR of the driver.
 * @device:	Out: device index N of /dev/ptoN.
 * @clusters:	Out: number of clusters.
 * @cores:	Out: number of cores (clusters * PTO_CORES_PER_CLUSTER).
 * @lanes:	Out: number of dump lanes.
 * @gm_size:	Out: bytes of global memory (GM), the reserved low
 *		PTO_GM_RESERVED bytes included: a buffer is at most
 *		@gm_size - PTO_GM_RESERVED.
 * @gm_align:	Out: alignment of GM buffer objects' device addresses.
 * @window_size: Out: bytes of a core's user register window (one page of
 *		the driver's page size); core i's window is mapped at
 *		PTO_WINDOW_OFFSET(i, @window_size).
 * @caps:	Out: PTO_CAP_* flags.
 * @core_types: In: user pointer to an array of __u32 (may be 0).
 * @core_types_count: In: entries at @core_types; the driver writes
 *		min(@core_types_count, @cores) PTO_CORE_* values, core i at [i].
 * @pad:	In: must be zero.
 */
struct pto_info {
	__u32 abi_major;
	__u32 abi_minor;
	__u32 device;
	__u32 clusters;
	__u32 cores;
	__u32 lanes;
	__u64 gm_size;
	__u32 gm_align;
	__u32 window_size;
	__u64 caps;
	__u64 core_types;
	__u32 core_types_count;
	__u32 pad;
};

/* Valid flags for struct pto_bo_alloc.flags (none are defined yet). */
#define PTO_BO_FLAGS_VALID 0ULL

/**
 * struct pto_bo_alloc - PTO_IOCTL_BO_ALLOC: allocate a GM buffer object.
 * @size:	In: bytes, non-zero, at most the GM size; rounded up to the
 *		page size. Out: the rounded size.
 * @flags:	In: must be a subset of PTO_BO_FLAGS_VALID.
 * @handle:	Out: per-file handle, never 0.
 * @pad:	In: must be zero.
 * @dev_addr:	Out: GM device address (offset into GM; never 0), aligned
 *		to struct pto_info.gm_align.
 * @mmap_offset: Out: offset to pass to mmap() on the same fd.
 *
 * Errors: -EINVAL (bad size, flags or padding), -ENOMEM (GM exhausted),
 * -EBUSY (the file's handle space is full: 2^19 - 1 live handles, which
 * only a GM larger than 2 GiB of 4 KiB buffers can reach; free one).
 */
struct pto_bo_alloc {
	__u64 size;
	__u64 flags;
	__u32 handle;
	__u32 pad;
	__u64 dev_addr;
	__u64 mmap_offset;
};

/**
 * struct pto_bo_free - PTO_IOCTL_BO_FREE: drop the file's handle.
 * @handle:	In: a handle of this file.
 * @pad:	In: must be zero.
 *
 * Mappings of the buffer stay valid until unmapped; the GM range is
 * returned when the last mapping goes. Errors: -ENOENT (no such handle).
 */
struct pto_bo_free {
	__u32 handle;
	__u32 pad;
};

/**
 * struct pto_bo_info - PTO_IOCTL_BO_INFO: describe a buffer object.
 * @handle:	In: a handle of this file.
 * @pad:	In: must be zero.
 * @size:	Out: bytes.
 * @dev_addr:	Out: GM device address.
 * @mmap_offset: Out: offset to pass to mmap().
 * @flags:	Out: the flags given at allocation.
 */
struct pto_bo_info {
	__u32 handle;
	__u32 pad;
	__u64 size;
	__u64 dev_addr;
	__u64 mmap_offset;
	__u64 flags;
};

/*
 * ---- Cores (see Documentation/mock-cores.md) ------------------------------
 *
 * Core i belongs to cluster i / PTO_CORES_PER_CLUSTER; the first core of a
 * cluster is its AIC, the other two are AIVs. A file acquires whole clusters
 * (PTO_IOCTL_CLUSTER_ACQUIRE), launches the persistent worker loop on some of
 * their cores (PTO_IOCTL_CORE_LAUNCH) and maps each launched core's user
 * register window with mmap() at offset PTO_WINDOW_OFFSET(i, window_size),
 * length window_size (struct pto_info.window_size), MAP_SHARED. Core sets travel as a bitmap of
 * PTO_CORE_MASK_WORDS __u64 words: core i is bit i % 64 of word i / 64.
 */
#define PTO_CORE_MASK_WORDS 2

/*
 * mmap offset of core @i's user window: @i times struct pto_info.window_size
 * (the driver's page size), whatever the page size. Map window_size
 * bytes there.
 */
#define PTO_WINDOW_OFFSET(i, window_size) \
	((__u64)(i) * (__u64)(window_size))
/*
 * The fixed form, for 4096-byte pages only (x86-64, where window_size is
 * 4096 and both forms give the same offset). New code uses
 * PTO_WINDOW_OFFSET() with the reported window_size.
 */
#define PTO_WINDOW_MMAP_OFFSET(i) PTO_WINDOW_OFFSET(i, 4096)

/*
 * User window page (byte offsets, all registers __u32). The reference
 * platform's offsets are kept for DATA_MAIN_BASE and COND.
 *  DATA_MAIN_BASE  written by the owner: a dispatch id (1..PTO_ID_MAX) or
 *                  PTO_DISPATCH_IDLE; the core runs a task when the value
 *                  differs from the last id it took.
 *  COND            written by the core: PTO_COND_ACK | id when it took the
 *                  task, PTO_COND_FIN | error << PTO_COND_ERR_SHIFT | id
 *                  when it finished.
 *  PARKED          (mock) written by the core: 1 while it sleeps and needs
 *                  a doorbell (PTO_IOCTL_DOORBELL) to see new work.
 *  WAKE_REQ        (mock) written by the owner: 1 asks the core to wake the
 *                  file's poll() waiters at its next FIN; the core clears it.
 */
#define PTO_REG_DATA_MAIN_BASE 0xA0
#define PTO_REG_COND 0x4C8
#define PTO_REG_PARKED 0x500
#define PTO_REG_WAKE_REQ 0x504

#define PTO_DISPATCH_IDLE 0u
#define PTO_ID_MAX 0x00FFFFFFu
#define PTO_COND_ID_MASK 0x00FFFFFFu
#define PTO_COND_ERR_SHIFT 24
#define PTO_COND_ERR_MASK (0x3Fu << PTO_COND_ERR_SHIFT)
#define PTO_COND_STATE_MASK (3u << 30)
#define PTO_COND_ACK (1u << 30)
#define PTO_COND_FIN (2u << 30)
/* Retirement: the core echoes the kernel's nonce as PTO_COND_EXITED | n. */
#define PTO_COND_EXITED (3u << 30)
#define PTO_COND_ERR(c) (((c) & PTO_COND_ERR_MASK) >> PTO_COND_ERR_SHIFT)

/* Task error codes, in COND (FIN) and in struct pto_payload.status. */
#define PTO_TASK_OK 0
#define PTO_TASK_EFUNC 1	/* unknown func_id */
#define PTO_TASK_EDTYPE 2	/* bad or mismatched dtype */
#define PTO_TASK_ESHAPE 3	/* bad rank, shape, stride or mismatch */
#define PTO_TASK_EADDR 4	/* address or extent outside the owner's GM */
#define PTO_TASK_EFAULT 5	/* the fault kernel ran (device fault) */
#define PTO_TASK_ESTOP 6	/* the core was stopped while running it */
#define PTO_TASK_EINVAL 7	/* bad payload: flags, reserved fields, id */
#define PTO_TASK_ECAPTURE_TIMEOUT 8	/* args capture not served in time */
#define PTO_TASK_ECAPTURE_INIT_LOST 9	/* args capture's claimer lost */

/* Built-in kernels (struct pto_payload.func_id). */
#define PTO_FUNC_NOOP 0
#define PTO_FUNC_ADD 1		/* out = a + b */
#define PTO_FUNC_SUB 2		/* out = a - b */
#define PTO_FUNC_MUL 3		/* out = a * b */
#define PTO_FUNC_ADD_SCALAR 4	/* out = a + scalar[0] */
#define PTO_FUNC_MUL_SCALAR 5	/* out = a * scalar[0] */
#define PTO_FUNC_COPY 6		/* out = a */
#define PTO_FUNC_FILL 7		/* out = scalar[0] */
#define PTO_FUNC_REDUCE_SUM 8	/* out (one element) = sum of a */
#define PTO_FUNC_MATMUL 9	/* out[M][N] = a[M][K] * b[K][N], <= 128 */
#define PTO_FUNC_SPIN_NS 10	/* busy for scalar[0] ns (capped) */
#define PTO_FUNC_FAULT 11	/* completes with PTO_TASK_EFAULT */
#define PTO_FUNC_HANG 12	/* busy until stopped or scalar[0] ns (capped) */
#define PTO_FUNC_BLOCK_ID 13	/* out[block_idx * scalar[0]] = block_idx (i32) */
#define PTO_FUNC_COUNT 14

#define PTO_DTYPE_F32 1
#define PTO_DTYPE_I32 2

#define PTO_TENSOR_MAX_RANK 4
#define PTO_MATMUL_MAX 128

/**
 * struct pto_tensor_desc - a strided tensor in GM.
 * @addr:	GM device address of element [0,...,0]; 4-byte aligned.
 * @dtype:	PTO_DTYPE_*.
 * @rank:	number of dimensions, 1..PTO_TENSOR_MAX_RANK.
 * @shape:	elements per dimension, each >= 1; unused entries zero.
 * @strides:	elements between neighbours per dimension; unused zero.
 *
 * Every element the kernel touches must lie inside one buffer object of
 * the file that launched the core.
 */
struct pto_tensor_desc {
	__u64 addr;
	__u32 dtype;
	__u32 rank;
	__u32 shape[PTO_TENSOR_MAX_RANK];
	__u64 strides[PTO_TENSOR_MAX_RANK];
};

/* Tensor slots of a payload. */
#define PTO_ARG_A 0
#define PTO_ARG_B 1
#define PTO_ARG_OUT 2
#define PTO_PAYLOAD_TENSORS 3

/**
 * struct pto_payload - one task, written by the owner into the core's
 * payload buffer for the task id's parity before it writes the id into
 * DATA_MAIN_BASE. The core copies it when it takes the task.
 * @func_id:	In: PTO_FUNC_*.
 * @flags:	In: must be zero.
 * @status:	Out: PTO_TASK_* of the last task run from this buffer, written
 *		before FIN (a completion implied by the next ACK reads it here).
 * @done_id:	Out: the id of that task.
 * @scalar:	In: scalars; an f32 scalar is the IEEE bit pattern in the low
 *		32 bits, an i32 the low 32 bits. spin_ns / hang: ns in [0].
 * @t:		In: tensors a, b, out (PTO_ARG_*); unused slots zero.
 * @block_idx:	In: this block's index in an SPMD / MIX task, < @block_num;
 *		0 for a plain task.
 * @block_num:	In: blocks of the task; 0 or 1 for a plain task.
 * @start_ns:	Out: CLOCK_MONOTONIC ns at which the core took the task
 *		(its ACK), written with @end_ns before FIN.
 * @end_ns:	Out: CLOCK_MONOTONIC ns at which the core finished it.
 * @reserved:	In: must be zero.
 */
struct pto_payload {
	__u32 func_id;
	__u32 flags;
	__u32 status;
	__u32 done_id;
	__u64 scalar[2];
	struct pto_tensor_desc t[PTO_PAYLOAD_TENSORS];
	__u32 block_idx;
	__u32 block_num;
	__u64 start_ns;
	__u64 end_ns;
	__u64 reserved[1];
};

/* Bytes of one payload buffer; a core has two (id parity 0 and 1). */
#define PTO_PAYLOAD_SIZE 256

/**
 * struct pto_cluster_acquire - PTO_IOCTL_CLUSTER_ACQUIRE / _RELEASE.
 * @clusters:	In: bitmap of clusters (bit c = cluster c), non-zero, within
 *		the device's cluster count.
 * @flags:	In: a subset of PTO_CLUSTER_FLAGS_VALID (none defined yet).
 *
 * Acquire is all or nothing: -EBUSY if another file owns any of them;
 * clusters the caller already owns are kept. Release stops every launched
 * core of the clusters, removes every user mapping of their windows and
 * frees them; -EPERM if the caller does not own one of them.
 */
struct pto_cluster_acquire {
	__u64 clusters;
	__u64 flags;
};

/* Valid flags for struct pto_cluster_acquire.flags (none defined yet). */
#define PTO_CLUSTER_FLAGS_VALID 0ULL

/**
 * struct pto_core_launch - PTO_IOCTL_CORE_LAUNCH: start the persistent
 * worker loop on cores of clusters the caller owns.
 * @cores:	In: core bitmap; every core must be owned and not launched.
 * @payload_addr: In: GM device address inside one of the caller's buffer
 *		objects, PTO_PAYLOAD_SIZE aligned, with room for
 *		2 * PTO_PAYLOAD_SIZE bytes per launched core: the k-th launched
 *		core (ascending index) uses the two buffers at
 *		@payload_addr + (2k + parity) * PTO_PAYLOAD_SIZE.
 * @flags:	In: a subset of PTO_LAUNCH_FLAGS_VALID.
 * @eventfd:	In (PTO_LAUNCH_FLAG_EVENTFD): an eventfd that receives these
 *		cores' completion wake-ups (WAKE_REQ) instead of the file's
 *		poll()/read(); each wake-up adds 1. Without the flag it must
 *		be 0. (A 32-byte struct, without @eventfd and @pad, is
 *		accepted.)
 * @pad:	In: must be zero.
 *
 * The eventfd lets every thread that launched its own cores sleep on its
 * own wake-ups: with the file's poll(), one thread's read() can drain
 * another's. The driver holds a reference to the eventfd for as long as
 * each core stays launched (until its retirement), not to the fd number.
 *
 * On return every launched core is READY: its window is open, DATA_MAIN_BASE
 * reads PTO_DISPATCH_IDLE and COND reads 0. Errors: -EPERM (a core not
 * owned), -EBUSY (already launched, or its previous generation has not
 * returned through its gate), -EINVAL (flags, padding, or a payload area
 * that is misaligned or not inside one of the caller's buffers with room
 * for every core), -EBADF (@eventfd is not an eventfd), -EIO (a quarantined
 * core, or a launch that failed and left a core for recovery), -ETIMEDOUT
 * (a core did not report in the handshake).
 */
struct pto_core_launch {
	__u64 cores[PTO_CORE_MASK_WORDS];
	__u64 payload_addr;
	__u64 flags;
	__u32 eventfd;
	__u32 pad;
};

#define PTO_LAUNCH_FLAG_EVENTFD (1ULL << 0)
#define PTO_LAUNCH_FLAGS_VALID PTO_LAUNCH_FLAG_EVENTFD

/**
 * struct pto_doorbell - PTO_IOCTL_DOORBELL: wake parked cores.
 * @cores:	In: core bitmap, each launched by the caller.
 * @flags:	In: a subset of PTO_DOORBELL_FLAGS_VALID (none defined yet).
 *
 * Ring only after reading PARKED == 1 following the DATA_MAIN_BASE store
 * (with a full barrier between the two).
 */
struct pto_doorbell {
	__u64 cores[PTO_CORE_MASK_WORDS];
	__u64 flags;
};

/* Valid flags for struct pto_doorbell.flags (none defined yet). */
#define PTO_DOORBELL_FLAGS_VALID 0ULL

/* Core states (struct pto_core_stats.state). */
#define PTO_CORE_UNLAUNCHED 0
#define PTO_CORE_HANDSHAKE 1
#define PTO_CORE_READY 2
#define PTO_CORE_RUNNING 3
#define PTO_CORE_EXITING 4	/* nonce echoed, waiting for its teardown gate */
#define PTO_CORE_GATED 5	/* gate released (after CLOSE), returning */
#define PTO_CORE_QUARANTINED 6	/* missed retirement or left for recovery */

/**
 * struct pto_core_stats - PTO_IOCTL_CORE_STATS: one core's counters.
 * @core:	In: core index.
 * @state:	Out: PTO_CORE_*.
 * @owner:	Out: tgid of the owning file's opener in the caller's pid
 *		namespace; 0 if free or not visible there.
 * @last_cond:	Out: the last value the core wrote to COND.
 * @tasks:	Out: tasks completed since module load.
 * @errors:	Out: tasks completed with an error (device errors).
 * @parks:	Out: times the core parked (published PARKED and slept until
 *		a doorbell).
 * @dozes:	Out: short timed sleeps of an idle core (no doorbell needed).
 * @doorbells:	Out: doorbell rings addressed to the core.
 * @wakeups:	Out: completion wake-ups the core delivered.
 * @launches:	Out: launches of the core.
 */
struct pto_core_stats {
	__u32 core;
	__u32 state;
	__u32 owner;
	__u32 last_cond;
	__u64 tasks;
	__u64 errors;
	__u64 parks;
	__u64 dozes;
	__u64 doorbells;
	__u64 wakeups;
	__u64 launches;
};

/* Who ran a core's last retirement (struct pto_retire_status.reason). */
#define PTO_RETIRE_BY_NONE 0
#define PTO_RETIRE_BY_IOCTL 1	/* PTO_IOCTL_CORE_RETIRE */
#define PTO_RETIRE_BY_RELEASE 2	/* cluster release or file release */
#define PTO_RETIRE_BY_LAUNCH 3	/* a failed launch unwinding */
#define PTO_RETIRE_BY_FATAL 4	/* emergency: fatal device error */
#define PTO_RETIRE_BY_UNLOAD 5	/* emergency: module unload */
#define PTO_RETIRE_BY_RESET 6	/* recovery: PTO_IOCTL_CORE_RESET, debugfs */

/* Outcome bits of a core's last retirement (struct pto_retire_status). */
#define PTO_RETIRE_ACKED (1u << 0)	/* the nonce was echoed in time */
#define PTO_RETIRE_CLOSED (1u << 1)	/* IDLE + CLOSE written, read back */
#define PTO_RETIRE_RELEASED (1u << 2)	/* teardown gate released */
/* missed the deadline, or left for recovery */
#define PTO_RETIRE_QUARANTINED (1u << 3)

/* struct pto_retire_status.bits: the core's ownership election bits. */
#define PTO_RETIRE_BIT_READY (1u << 0)
#define PTO_RETIRE_BIT_REQUESTED (1u << 1)

/**
 * struct pto_core_retire - PTO_IOCTL_CORE_RETIRE: a scheduler thread
 * leaving its dispatch loop retires the cores it owns (Documentation/retirement.md).
 * @cores:	In: core bitmap, every core in a cluster the caller owns.
 *		Cores not launched are skipped; cores another path is
 *		already retiring are waited for, never written twice.
 * @flags:	In: a subset of PTO_RETIRE_FLAGS_VALID (none defined yet).
 * @quarantined: Out: cores of @cores quarantined when the call returns:
 *		those that missed this call's deadline, and those it waited
 *		for while another path (a fatal error) retired them (left
 *		unclosed, unreleased, refused for launch and mmap until a
 *		reset).
 * @retired:	Out: cores this call closed and released.
 * @pad:	In: must be zero.
 * @elapsed_ns:	Out: the set's retirement time, first request to the gates.
 *
 * The clusters stay owned: the cores can be launched again.
 */
struct pto_core_retire {
	__u64 cores[PTO_CORE_MASK_WORDS];
	__u64 flags;
	__u64 quarantined[PTO_CORE_MASK_WORDS];
	__u32 retired;
	__u32 pad;
	__u64 elapsed_ns;
};

/* Valid flags for struct pto_core_retire.flags (none defined yet). */
#define PTO_RETIRE_FLAGS_VALID 0ULL

/**
 * struct pto_retire_status - PTO_IOCTL_RETIRE_STATUS: one core's
 * retirement state (any file may ask).
 * @core:	In: core index.
 * @flags:	In: a subset of PTO_RETIRE_STATUS_FLAGS_VALID (none yet).
 * @state:	Out: PTO_CORE_*.
 * @bits:	Out: PTO_RETIRE_BIT_* of the current generation.
 * @gen:	Out: launch generation.
 * @nonce:	Out: the last request's nonce (PTO_COND_EXITED | n).
 * @response:	Out: the core's last response (its echoed nonce).
 * @result:	Out: PTO_RETIRE_ACKED | _CLOSED | _RELEASED | _QUARANTINED of
 *		the last retirement.
 * @reason:	Out: PTO_RETIRE_BY_* of the last retirement.
 * @pad:	In: must be zero.
 * @core_ns:	Out: request to this core's response, last retirement.
 * @set_ns:	Out: the whole set's time (first request to the gates); for
 *		a core the retirement quarantined, first request to the
 *		quarantine (0 if left by the checks before any request).
 * @retirements: Out: retirements of this core since module load.
 * @quarantines: Out: times it was quarantined since module load.
 */
struct pto_retire_status {
	__u32 core;
	__u32 flags;
	__u32 state;
	__u32 bits;
	__u32 gen;
	__u32 nonce;
	__u32 response;
	__u32 result;
	__u32 reason;
	__u32 pad;
	__u64 core_ns;
	__u64 set_ns;
	__u64 retirements;
	__u64 quarantines;
};

/* Valid flags for struct pto_retire_status.flags (none defined yet). */
#define PTO_RETIRE_STATUS_FLAGS_VALID 0U

/**
 * struct pto_core_reset - PTO_IOCTL_CORE_RESET (CAP_SYS_ADMIN): host
 * recovery of quarantined cores.
 * @cores:	In: core bitmap; all zero means every quarantined core the
 *		caller may touch. Naming a core whose cluster another file
 *		owns is -EBUSY; cores not quarantined are skipped.
 * @flags:	In: a subset of PTO_RESET_FLAGS_VALID (none defined yet).
 * @recovered:	Out: cores that answered, were closed, released and freed.
 * @remaining:	Out: quarantined cores still unresponsive.
 */
struct pto_core_reset {
	__u64 cores[PTO_CORE_MASK_WORDS];
	__u64 flags;
	__u32 recovered;
	__u32 remaining;
};

/* Valid flags for struct pto_core_reset.flags (none defined yet). */
#define PTO_RESET_FLAGS_VALID 0ULL

/*
 * Type 'x' is free: Documentation/userspace-api/ioctl/ioctl-number.rst
 * (Linux 6.1) lists no driver under it and no driver in that tree uses it
 * ('P' is shared by soundcard, usblp, pci_endpoint_test and xen/privcmd).
 * pto keeps 0x00-0x3F for its commands; new ones take the next numbers.
 * 0x10-0x1F are the dump lanes' (<linux/pto_dump.h>), 0x20-0x2F the
 * resident route's (<linux/pto_graph.h>).
 */
#define PTO_IOCTL_BASE 'x'
#define PTO_IOCTL_GET_INFO _IOWR(PTO_IOCTL_BASE, 0x00, struct pto_info)
#define PTO_IOCTL_BO_ALLOC _IOWR(PTO_IOCTL_BASE, 0x01, struct pto_bo_alloc)
#define PTO_IOCTL_BO_FREE _IOWR(PTO_IOCTL_BASE, 0x02, struct pto_bo_free)
#define PTO_IOCTL_BO_INFO _IOWR(PTO_IOCTL_BASE, 0x03, struct pto_bo_info)
#define PTO_IOCTL_CLUSTER_ACQUIRE \
	_IOWR(PTO_IOCTL_BASE, 0x04, struct pto_cluster_acquire)
#define PTO_IOCTL_CLUSTER_RELEASE \
	_IOWR(PTO_IOCTL_BASE, 0x05, struct pto_cluster_acquire)
#define PTO_IOCTL_CORE_LAUNCH _IOWR(PTO_IOCTL_BASE, 0x06, struct pto_core_launch)
#define PTO_IOCTL_DOORBELL _IOWR(PTO_IOCTL_BASE, 0x07, struct pto_doorbell)
#define PTO_IOCTL_CORE_STATS _IOWR(PTO_IOCTL_BASE, 0x08, struct pto_core_stats)
#define PTO_IOCTL_CORE_RETIRE \
	_IOWR(PTO_IOCTL_BASE, 0x09, struct pto_core_retire)
#define PTO_IOCTL_RETIRE_STATUS \
	_IOWR(PTO_IOCTL_BASE, 0x0A, struct pto_retire_status)
#define PTO_IOCTL_CORE_RESET _IOWR(PTO_IOCTL_BASE, 0x0B, struct pto_core_reset)

#endif /* _UAPI_LINUX_PTO_H */
