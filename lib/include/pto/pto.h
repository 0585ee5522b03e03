/* SPDX-License-Identifier: MIT */
/*
 * pto/pto.h - libpto's device layer: open /dev/ptoN, query it, and manage
 * GM buffer objects. Each call's contract (errors, NULL, threads, fork):
 * its man page, e.g. pto_dev_open(3); the overview: libpto(7).
 */
#ifndef PTO_PTO_H
#define PTO_PTO_H

#include <stddef.h>
#include <stdint.h>
#include <linux/pto.h>
#include <pto/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pto_dev;
struct pto_bo;

#define PTO_DEV_MAX_CORES 108

/*
 * struct pto_dev_info - what a device is (from the driver's GET_INFO).
 * Written whole by pto_dev_info(), whatever the caller's struct held:
 * core_type[] past @cores and @reserved0 / @reserved come back zero. A
 * field added later takes reserved space; a program built now never
 * reads it, and one built later reads 0 (unknown) from a libpto that
 * does not fill it yet. Layout checked by the abi tier
 * (tests/abi-layout.c).
 */
struct pto_dev_info {
	uint32_t abi_major;
	uint32_t abi_minor;
	uint32_t index;
	uint32_t clusters;
	uint32_t cores;
	uint32_t lanes;
	uint64_t gm_size;
	uint32_t gm_align;
	uint32_t window_size;
	uint64_t caps;
	uint8_t core_type[PTO_DEV_MAX_CORES];	/* PTO_CORE_AIC / _AIV */
	uint32_t reserved0;			/* 0 */
	uint64_t reserved[8];			/* 0 */
};

/* Open /dev/pto<index>, checking the driver's ABI major (-EPROTO). */
PTO_API int pto_dev_open(unsigned int index, struct pto_dev **out);
/* Same as pto_dev_open() for an explicit device node path. */
PTO_API int pto_dev_open_path(const char *path, struct pto_dev **out);
/* Free every buffer of @dev not yet freed and close it; an orchestrator
 * on @dev must be destroyed first. NULL: does nothing. */
PTO_API void pto_dev_close(struct pto_dev *dev);
/* The device's fd, for poll() and for ioctls libpto does not wrap. */
PTO_API int pto_dev_fd(const struct pto_dev *dev);
PTO_API int pto_dev_info(struct pto_dev *dev, struct pto_dev_info *info);

/* Allocate @size bytes of GM (rounded up to pages), zero-filled. */
PTO_API int pto_bo_alloc(struct pto_dev *dev, uint64_t size, uint64_t flags,
			 struct pto_bo **out);
/* Unmap (if mapped), drop the handle and free @bo. NULL: returns 0. */
PTO_API int pto_bo_free(struct pto_bo *bo);
/* Map the whole buffer read-write, once: every call returns the same
 * address, and pto_bo_free() unmaps it. */
PTO_API int pto_bo_map(struct pto_bo *bo, void **addr);
PTO_API uint64_t pto_bo_size(const struct pto_bo *bo);
PTO_API uint64_t pto_bo_dev_addr(const struct pto_bo *bo);
/* The device tag of @bo's GM tensors (pto_tensor.dev): index + 1. */
PTO_API uint32_t pto_bo_dev_tag(const struct pto_bo *bo);
PTO_API uint32_t pto_bo_handle(const struct pto_bo *bo);

/* Text for a negative errno returned by any libpto call. */
PTO_API const char *pto_strerror(int err);

#ifdef __cplusplus
}
#endif
#endif /* PTO_PTO_H */
