/* SPDX-License-Identifier: GPL-2.0-only */
/* pto - a core's register window: mmap, fault, zap (pto_window.c). */
#ifndef _PTO_WINDOW_H_
#define _PTO_WINDOW_H_

struct pto_core;
struct pto_device;
struct pto_file;
struct vm_area_struct;

int pto_window_mmap(struct pto_file *pf, struct vm_area_struct *vma);
void pto_window_zap(struct pto_file *pf, struct pto_core *core);
void pto_cluster_clear_windows(struct pto_device *pdev, unsigned int c);

#endif /* _PTO_WINDOW_H_ */
