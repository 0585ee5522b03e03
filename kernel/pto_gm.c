// SPDX-License-Identifier: GPL-2.0-only
/*
 * pto - global memory (GM) address space, a genalloc pool of device
 * addresses only: each buffer brings its own pages, so an idle device costs
 * no memory however large gm_mb is. The granule is 1024 bytes; the range
 * below PTO_GM_RESERVED is never in the pool, so 0 (genalloc's failure) is
 * never a valid device address.
 */
#include <linux/errno.h>
#include <linux/genalloc.h>
#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/numa.h>
#include <linux/pto.h>
#include <kunit/visibility.h>
#include "pto_gm.h"

int pto_gm_init(struct pto_gm *gm, u64 size)
{
	int ret;

	if (size <= PTO_GM_RESERVED)
		return -EINVAL;
	gm->pool = gen_pool_create(PTO_GM_MIN_ORDER, NUMA_NO_NODE);
	if (!gm->pool)
		return -ENOMEM;
	ret = gen_pool_add(gm->pool, PTO_GM_RESERVED, size - PTO_GM_RESERVED,
			   NUMA_NO_NODE);
	if (ret) {
		gen_pool_destroy(gm->pool);
		gm->pool = NULL;
		return ret;
	}
	gm->size = size;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(pto_gm_init);

/* Every allocation must have been freed (gen_pool_destroy BUGs otherwise). */
void pto_gm_fini(struct pto_gm *gm)
{
	if (gm->pool)
		gen_pool_destroy(gm->pool);
	gm->pool = NULL;
}
EXPORT_SYMBOL_IF_KUNIT(pto_gm_fini);

u64 pto_gm_alloc(struct pto_gm *gm, u64 size, u64 align)
{
	struct genpool_data_align data;

	if (!size || size > gm->size || !is_power_of_2(align) ||
	    align > gm->size)
		return 0;
	data.align = max_t(u64, align, 1ULL << PTO_GM_MIN_ORDER);
	return gen_pool_alloc_algo(gm->pool, size, gen_pool_first_fit_align,
				   &data);
}
EXPORT_SYMBOL_IF_KUNIT(pto_gm_alloc);

void pto_gm_free(struct pto_gm *gm, u64 addr, u64 size)
{
	gen_pool_free(gm->pool, addr, size);
}
EXPORT_SYMBOL_IF_KUNIT(pto_gm_free);

u64 pto_gm_avail(struct pto_gm *gm)
{
	return gen_pool_avail(gm->pool);
}
EXPORT_SYMBOL_IF_KUNIT(pto_gm_avail);
