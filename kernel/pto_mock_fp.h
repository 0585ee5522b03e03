/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef _PTO_MOCK_FP_H_
#define _PTO_MOCK_FP_H_

#include <linux/types.h>

/*
 * pto_mock_fp.c: float32 rows, the only code compiled with SSE. Its noinline
 * functions are bracketed by the wrappers below, compiled without SSE, so no
 * float instruction can move outside kernel_fpu_begin() / _end() (amdgpu's
 * DC_FP_START pattern). One chunk per call keeps preemption off briefly.
 * Not built for UML: float32 tasks complete with PTO_TASK_EDTYPE there.
 */
enum pto_fp_op {
	PTO_FP_ADD, PTO_FP_SUB, PTO_FP_MUL, PTO_FP_ADDS, PTO_FP_MULS,
	PTO_FP_COPY, PTO_FP_FILL,
};
#ifndef CONFIG_UML
#include <asm/fpu/api.h>
#define PTO_HAVE_FP 1
void __pto_fp32_row(enum pto_fp_op op, u32 *o, s64 so, const u32 *a, s64 sa,
		    const u32 *b, s64 sb, u32 scalar, u32 n);
void __pto_fp32_sum_row(const u32 *a, s64 sa, u32 n, u64 *acc);
u32 __pto_fp32_from_acc(u64 acc);
void __pto_fp32_matmul_row(u32 *o, s64 so, const u32 *a, s64 sa,
			   const u32 *b, s64 sbk, s64 sbn, u32 k, u32 n);

static inline void pto_fp32_row(enum pto_fp_op op, u32 *o, s64 so,
				const u32 *a, s64 sa, const u32 *b, s64 sb,
				u32 scalar, u32 n)
{
	kernel_fpu_begin();
	__pto_fp32_row(op, o, so, a, sa, b, sb, scalar, n);
	kernel_fpu_end();
}

static inline void pto_fp32_sum_row(const u32 *a, s64 sa, u32 n, u64 *acc)
{
	kernel_fpu_begin();
	__pto_fp32_sum_row(a, sa, n, acc);
	kernel_fpu_end();
}

static inline u32 pto_fp32_from_acc(u64 acc)
{
	u32 r;

	kernel_fpu_begin();
	r = __pto_fp32_from_acc(acc);
	kernel_fpu_end();
	return r;
}

static inline void pto_fp32_matmul_row(u32 *o, s64 so, const u32 *a, s64 sa,
				       const u32 *b, s64 sbk, s64 sbn, u32 k,
				       u32 n)
{
	kernel_fpu_begin();
	__pto_fp32_matmul_row(o, so, a, sa, b, sbk, sbn, k, n);
	kernel_fpu_end();
}
#else
/* Never called: validation refuses float32 tasks without FP (UML). */
#define PTO_HAVE_FP 0
static inline void pto_fp32_row(enum pto_fp_op op, u32 *o, s64 so,
				const u32 *a, s64 sa, const u32 *b, s64 sb,
				u32 scalar, u32 n) { }
static inline void pto_fp32_sum_row(const u32 *a, s64 sa, u32 n, u64 *acc)
{ }
static inline u32 pto_fp32_from_acc(u64 acc) { return 0; }
static inline void pto_fp32_matmul_row(u32 *o, s64 so, const u32 *a, s64 sa,
				       const u32 *b, s64 sbk, s64 sbn, u32 k,
				       u32 n) { }
#endif

#endif /* _PTO_MOCK_FP_H_ */
