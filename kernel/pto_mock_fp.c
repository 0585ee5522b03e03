// SPDX-License-Identifier: GPL-2.0-only
/*
 * pto - float32 rows of the built-in kernels, the one file compiled with
 * SSE (Kbuild), called only through pto_mock.h's wrappers between
 * kernel_fpu_begin() and _end(). Values travel as u32 bit patterns. One
 * float32 operation per element; reduce_sum and matmul accumulate in double
 * in order and round once (the selftests' CPU reference matches).
 */
#include <linux/compiler.h>
#include <linux/string.h>
#include "pto_mock_fp.h"

static inline float pto_f(u32 bits)
{
	float f;

	memcpy(&f, &bits, sizeof(f));
	return f;
}

static inline u32 pto_b(float f)
{
	u32 bits;

	memcpy(&bits, &f, sizeof(bits));
	return bits;
}

noinline void __pto_fp32_row(enum pto_fp_op op, u32 *o, s64 so, const u32 *a,
			     s64 sa, const u32 *b, s64 sb, u32 scalar, u32 n)
{
	float s = pto_f(scalar), r;
	u32 i;

	for (i = 0; i < n; i++) {
		float x = a ? pto_f(READ_ONCE(a[i * sa])) : 0.0f;
		float y = b ? pto_f(READ_ONCE(b[i * sb])) : 0.0f;

		switch (op) {
		case PTO_FP_ADD:
			r = x + y;
			break;
		case PTO_FP_SUB:
			r = x - y;
			break;
		case PTO_FP_MUL:
			r = x * y;
			break;
		case PTO_FP_ADDS:
			r = x + s;
			break;
		case PTO_FP_MULS:
			r = x * s;
			break;
		case PTO_FP_FILL:
			r = s;
			break;
		default:
			r = x;
			break;
		}
		WRITE_ONCE(o[i * so], pto_b(r));
	}
}

noinline void __pto_fp32_sum_row(const u32 *a, s64 sa, u32 n, u64 *acc)
{
	double d;
	u32 i;

	memcpy(&d, acc, sizeof(d));
	for (i = 0; i < n; i++)
		d += (double)pto_f(READ_ONCE(a[i * sa]));
	memcpy(acc, &d, sizeof(d));
}

noinline u32 __pto_fp32_from_acc(u64 acc)
{
	double d;
	u32 r;

	memcpy(&d, &acc, sizeof(d));
	r = pto_b((float)d);
	return r;
}

noinline void __pto_fp32_matmul_row(u32 *o, s64 so, const u32 *a, s64 sa,
				    const u32 *b, s64 sbk, s64 sbn, u32 k, u32 n)
{
	u32 j, x;

	for (j = 0; j < n; j++) {
		double d = 0.0;

		for (x = 0; x < k; x++)
			d += (double)pto_f(READ_ONCE(a[x * sa])) *
			     (double)pto_f(READ_ONCE(b[x * sbk + j * sbn]));
		WRITE_ONCE(o[j * so], pto_b((float)d));
	}
}
