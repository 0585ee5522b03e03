/* SPDX-License-Identifier: GPL-2.0-only */
/* pto - global memory: the device address allocator (pto_gm.c). */
#ifndef _PTO_GM_H_
#define _PTO_GM_H_

#include <linux/types.h>
#include <linux/pto.h>

/* PTO_GM_RESERVED (uapi): the low GM never handed out. */
/* Minimum allocation granule and alignment of the GM pool (2^10 = 1024). */
#define PTO_GM_MIN_ORDER 10

struct gen_pool;

/**
 * struct pto_gm - a device's global memory address space.
 * @pool: genalloc pool over [PTO_GM_RESERVED, size); it serializes its own
 *        bitmap updates, so callers need no lock.
 * @size: bytes of GM including the reserved low range.
 */
struct pto_gm {
	struct gen_pool *pool;
	u64 size;
};

int pto_gm_init(struct pto_gm *gm, u64 size);
void pto_gm_fini(struct pto_gm *gm);
/* Returns a device address aligned to @align (>= 1024, power of 2) or 0. */
u64 pto_gm_alloc(struct pto_gm *gm, u64 size, u64 align);
void pto_gm_free(struct pto_gm *gm, u64 addr, u64 size);
u64 pto_gm_avail(struct pto_gm *gm);

#endif /* _PTO_GM_H_ */
