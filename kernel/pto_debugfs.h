/* SPDX-License-Identifier: GPL-2.0-only */
/* pto - debugfs (pto_debugfs.c): failures are ignored. */
#ifndef _PTO_DEBUGFS_H_
#define _PTO_DEBUGFS_H_

struct pto_device;

void pto_debugfs_init(void);
void pto_debugfs_fini(void);
void pto_debugfs_add_device(struct pto_device *pdev);
void pto_debugfs_remove_device(struct pto_device *pdev);

#endif /* _PTO_DEBUGFS_H_ */
