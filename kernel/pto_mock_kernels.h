/* SPDX-License-Identifier: GPL-2.0-only */
/* pto - the mock's built-in kernels and a task's steps (pto_mock_kernels.c). */
#ifndef _PTO_MOCK_KERNELS_H_
#define _PTO_MOCK_KERNELS_H_

#include <linux/types.h>

struct pto_core;
struct pto_file;
struct pto_lcache;
struct pto_mock_task;
struct pto_payload;

/* pto_mock_kernels.c: one task's steps (fetch, validate, run, complete). */
u32 pto_task_fetch(struct pto_core *core, struct pto_mock_task *t,
		   u32 dispatch);
u32 pto_task_validate(struct pto_file *pf, struct pto_mock_task *t);
u32 pto_task_run(struct pto_core *core, struct pto_mock_task *t,
		 struct pto_lcache *lc);
void pto_task_put(struct pto_mock_task *t);
u8 pto_func_tensors(u32 func_id);
bool pto_func_scalars(u32 func_id);
void pto_payload_select(struct pto_payload *p);

#endif /* _PTO_MOCK_KERNELS_H_ */
