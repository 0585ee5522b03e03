/* SPDX-License-Identifier: GPL-2.0-only */
/* KUnit: a file with buffer objects, without a device node. */
#ifndef _PTO_TEST_FILE_H_
#define _PTO_TEST_FILE_H_

#include <kunit/test.h>
#include <linux/types.h>

struct pto_bo;
struct pto_device;
struct pto_file;

/* @pf of @pdev with @n published buffers of @size bytes at @addr[i]. */
void pto_test_file_init(struct kunit *test, struct pto_device *pdev,
			struct pto_file *pf, struct pto_bo *bo,
			const u64 *addr, unsigned int n, u64 size);

#endif /* _PTO_TEST_FILE_H_ */
