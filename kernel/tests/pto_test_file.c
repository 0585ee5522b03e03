// SPDX-License-Identifier: GPL-2.0-only
/* KUnit: a file with buffer objects, without a device node. */
#include <linux/maple_tree.h>
#include <linux/slab.h>
#include "../pto_bo.h"
#include "../pto_drv.h"
#include "pto_test_file.h"

void pto_test_file_init(struct kunit *test, struct pto_device *pdev,
			struct pto_file *pf, struct pto_bo *bo,
			const u64 *addr, unsigned int n, u64 size)
{
	unsigned int i;
	int ret;

	mutex_init(&pf->lock);
	mt_init(&pf->ranges);
	init_waitqueue_head(&pf->poll_wq);
	pf->pdev = pdev;
	kref_init(&pf->ref);
	for (i = 0; i < n; i++) {
		kref_init(&bo[i].ref);
		bo[i].dev_addr = addr[i];
		bo[i].size = size;
		bo[i].published = true;
		bo[i].vaddr = kunit_kzalloc(test, size, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, bo[i].vaddr);
		ret = mtree_store_range(&pf->ranges, addr[i],
					addr[i] + size - 1, &bo[i], GFP_KERNEL);
		KUNIT_ASSERT_EQ(test, ret, 0);
	}
}
