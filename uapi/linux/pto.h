/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * pto - user-space ABI of the PTO-style NPU driver (pto.ko).
 *
 * Conventions (see Documentation/abi.rst):
 *  - only __u32 / __u64 fields; every struct is a multiple of 8 bytes;
 *  - every padding / reserved field is In and must be zero (else -EINVAL);
 *  - every flags field has a mask of valid bits (unknown bits: -EINVAL);
 *  - pointers travel as __u64, arrays as count + pointer;
 *  - the driver accepts a shorter (older) struct and zero-extends it, and a
 *    longer (newer) one only if the extra bytes are zero (else -E2BIG);
 *  - a call that waits takes an absolute CLOCK_MONOTONIC timeout in ns.
 */
#ifndef _UAPI_LINUX_PTO_H
#define _UAPI_LINUX_PTO_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define PTO_ABI_MAJOR 1
#define PTO_ABI_MINOR 0

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

/**
 * struct pto_info - PTO_IOCTL_GET_INFO: describe the device.
 * @abi_major:	Out: PTO_ABI_MAJOR of the driver.
 * @abi_minor:	Out: PTO_ABI_MINOR of the driver.
 * @device:	Out: device index N of /dev/ptoN.
 * @clusters:	Out: number of clusters.
 * @cores:	Out: number of cores (clusters * PTO_CORES_PER_CLUSTER).
 * @lanes:	Out: number of dump lanes.
 * @gm_size:	Out: bytes of global memory (GM).
 * @gm_align:	Out: alignment of GM buffer objects' device addresses.
 * @window_size: Out: bytes of a core's user register window page.
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
 * Errors: -EINVAL (bad size, flags or padding), -ENOMEM (GM exhausted).
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

#define PTO_IOCTL_BASE 'P'
#define PTO_IOCTL_GET_INFO _IOWR(PTO_IOCTL_BASE, 0x00, struct pto_info)
#define PTO_IOCTL_BO_ALLOC _IOWR(PTO_IOCTL_BASE, 0x01, struct pto_bo_alloc)
#define PTO_IOCTL_BO_FREE _IOWR(PTO_IOCTL_BASE, 0x02, struct pto_bo_free)
#define PTO_IOCTL_BO_INFO _IOWR(PTO_IOCTL_BASE, 0x03, struct pto_bo_info)

#endif /* _UAPI_LINUX_PTO_H */
