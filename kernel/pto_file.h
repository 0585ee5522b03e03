/* SPDX-License-Identifier: GPL-2.0-only */
/* pto - the device file: open, release, the ioctl table (pto_file.c). */
#ifndef _PTO_FILE_H_
#define _PTO_FILE_H_

#include <linux/fs.h>

struct pto_file;

extern const struct file_operations pto_fops;

void pto_file_put(struct pto_file *pf);

#endif /* _PTO_FILE_H_ */
