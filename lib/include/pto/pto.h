/* SPDX-License-Identifier: MIT */
/*
 * pto/pto.h - libpto's device layer: open /dev/ptoN, query it, and manage
 * GM buffer objects.
 *
 * Every call returns 0 (or a non-negative value) on success and a negative
 * errno on failure; pto_strerror() turns either into text.
 *
 * NULL: the two calls that free an object, pto_dev_close() and
 * pto_bo_free(), accept a NULL one and do nothing (as free() does;
 * pto_bo_free(NULL) returns 0). Every other call takes no NULL device,
 * buffer or result pointer: it is not checked, and crashes (pto_bo_map()
 * and pto_dev_info() included).
 *
 * Thread safety: a struct pto_dev may be used from several threads at once
 * for pto_dev_info(), pto_bo_alloc() and pto_bo_*() on distinct buffers;
 * on one buffer, pto_bo_map() and the getters (pto_bo_size() ...) may run
 * concurrently with each other (every pto_bo_map() returns the same
 * address). pto_dev_close() must not race any other call on the same
 * device, and a struct pto_bo must not be freed while another thread uses
 * it.
 *
 * fork(): a child shares the parent's open device file, so the handles it
 * inherits name the parent's device objects and the child may not use
 * them. It may only clean up: in a process other than the one that opened
 * the device, pto_bo_free() unmaps and frees the child's copy of the
 * buffer and pto_dev_close() closes the child's fd and frees the child's
 * copy of the device, without any ioctl; the parent's buffers stay. (The
 * child's pto_dev_close() leaves buffers it did not free mapped until it
 * exits or execs.) What would create something in the parent's file -
 * pto_bo_alloc(), a first pto_bo_map() of a buffer, and
 * pto_orch_create_device() - returns -ECHILD there and does nothing.
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

/*
 * Open /dev/pto<index> and check the driver's ABI major version against
 * the one libpto was built for (-EPROTO on mismatch).
 */
PTO_API int pto_dev_open(unsigned int index, struct pto_dev **out);
/* Same as pto_dev_open() for an explicit device node path. */
PTO_API int pto_dev_open_path(const char *path, struct pto_dev **out);
/*
 * Unmap and free (as pto_bo_free() does) every buffer of @dev not yet
 * freed, then close the fd. The driver frees each buffer's memory at once,
 * except a buffer a forked child still has mapped (inherited mappings):
 * that one stays allocated, and readable in the child, until the child
 * unmaps it, exits or execs. A child's inherited fd alone then keeps
 * nothing of @dev allocated (an orchestrator's clusters and cores are
 * released by its destroy, which comes first). Every struct pto_bo of @dev and every mapping of its buffers
 * is invalid afterwards (a later pto_bo_free() on one is a
 * use-after-free); an orchestrator on @dev must be destroyed first.
 * NULL: does nothing.
 */
PTO_API void pto_dev_close(struct pto_dev *dev);
/* The device's fd, for poll() and for ioctls libpto does not wrap. */
PTO_API int pto_dev_fd(const struct pto_dev *dev);
PTO_API int pto_dev_info(struct pto_dev *dev, struct pto_dev_info *info);

/* Allocate @size bytes of GM (rounded up to pages); zero-filled. */
PTO_API int pto_bo_alloc(struct pto_dev *dev, uint64_t size, uint64_t flags,
			 struct pto_bo **out);
/* Unmap (if mapped), drop the handle and free @bo. NULL: returns 0. */
PTO_API int pto_bo_free(struct pto_bo *bo);
/*
 * Map the whole buffer read-write, once: every later call - also one made
 * concurrently from another thread - returns the same address, and
 * pto_bo_free() (or pto_dev_close()) unmaps it. @bo and @addr must not be
 * NULL.
 */
PTO_API int pto_bo_map(struct pto_bo *bo, void **addr);
PTO_API uint64_t pto_bo_size(const struct pto_bo *bo);
PTO_API uint64_t pto_bo_dev_addr(const struct pto_bo *bo);
/*
 * The device tag of @bo's GM tensors (struct pto_tensor.dev in
 * pto/orch.h): its device's index + 1, never 0. Device addresses repeat
 * from device to device; the tag tells them apart.
 */
PTO_API uint32_t pto_bo_dev_tag(const struct pto_bo *bo);
PTO_API uint32_t pto_bo_handle(const struct pto_bo *bo);

/* Text for a negative errno returned by any libpto call. */
PTO_API const char *pto_strerror(int err);

#ifdef __cplusplus
}
#endif
#endif /* PTO_PTO_H */
