/* SPDX-License-Identifier: GPL-2.0-only */
/* pto - host recovery of quarantined cores (pto_reset.c). */
#ifndef _PTO_RESET_H_
#define _PTO_RESET_H_

struct pto_device;
struct pto_file;

int pto_ioctl_core_reset(struct pto_file *pf, void *data);
int pto_cores_reset_debugfs(struct pto_device *pdev);

#if IS_ENABLED(CONFIG_PTO_KUNIT_TEST)
int pto_cores_reset_quarantined(struct pto_device *pdev,
				struct pto_file *pf, const unsigned long *mask,
				unsigned int *remaining);
#endif

#endif /* _PTO_RESET_H_ */
