/* SPDX-License-Identifier: GPL-2.0-only */
/* pto - the device file: open, release, the ioctl table (pto_file.c). */
#ifndef _PTO_FILE_H_
#define _PTO_FILE_H_

#include <linux/fs.h>

struct pto_file;

/**
 * struct pto_ucmd - one ioctl call, for a handler that writes its own reply.
 * @cmd: the kernel copy of the struct (the command's current size).
 * @ubuffer / @user_size: the caller's struct and its size.
 */
struct pto_ucmd {
	struct pto_file *pf;
	void __user *ubuffer;
	unsigned int user_size;
	unsigned int size;
	void *cmd;
};

extern const struct file_operations pto_fops;

void pto_file_put(struct pto_file *pf);
int pto_ucmd_respond(struct pto_ucmd *ucmd);

#endif /* _PTO_FILE_H_ */
