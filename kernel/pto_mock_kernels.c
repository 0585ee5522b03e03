// SPDX-License-Identifier: GPL-2.0-only
/*
 * pto - one task on a mock core, in steps: fetch the payload, validate it,
 * run the built-in kernel, drop the references (pto_mock.c sequences them).
 * Validation is the only gate between a user-written payload and kernel
 * memory: each tensor lies inside one buffer of the launching file, pinned
 * until the task completes, so a concurrent BO_FREE never pulls its pages.
 */
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/maple_tree.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <kunit/visibility.h>
#include "pto_core.h"
#include "pto_bo.h"
#include "pto_mock.h"
#include "pto_mock_kernels.h"
#include "pto_mock_lcache.h"

/* Elements per tensor, and per FPU section / stop check. */
#define PTO_MAX_ELEMS (1u << 24)
#define PTO_CHUNK 4096u

/* Upper bound of spin_ns / hang, so every task ends (module parameter). */
static unsigned int max_spin_ms = 2000;
module_param(max_spin_ms, uint, 0644);
MODULE_PARM_DESC(max_spin_ms,
		 "longest spin_ns / hang task in ms (default 2000); longer is EINVAL");

/* Which tensor slots a kernel uses: bit PTO_ARG_* set. */
static const u8 pto_func_args[PTO_FUNC_COUNT] = {
	[PTO_FUNC_NOOP] = 0,
	[PTO_FUNC_ADD] = 7,
	[PTO_FUNC_SUB] = 7,
	[PTO_FUNC_MUL] = 7,
	[PTO_FUNC_ADD_SCALAR] = 5,
	[PTO_FUNC_MUL_SCALAR] = 5,
	[PTO_FUNC_COPY] = 5,
	[PTO_FUNC_FILL] = 4,
	[PTO_FUNC_REDUCE_SUM] = 5,
	[PTO_FUNC_MATMUL] = 7,
	[PTO_FUNC_SPIN_NS] = 0,
	[PTO_FUNC_FAULT] = 0,
	[PTO_FUNC_HANG] = 0,
	[PTO_FUNC_BLOCK_ID] = 4,
};

/*
 * Which scalars a kernel reads: 0 none, 32 the low 32 bits of scalar[0]
 * (a dtype's bit pattern), 64 all of scalar[0]. scalar[1] is never read.
 * An In field a kernel does not read must be zero, like any reserved one.
 */
static const u8 pto_func_scalar_bits[PTO_FUNC_COUNT] = {
	[PTO_FUNC_ADD_SCALAR] = 32,
	[PTO_FUNC_MUL_SCALAR] = 32,
	[PTO_FUNC_FILL] = 32,
	[PTO_FUNC_SPIN_NS] = 64,
	[PTO_FUNC_HANG] = 64,
	[PTO_FUNC_BLOCK_ID] = 64,
};

static bool pto_task_scalars_ok(const struct pto_mock_task *t)
{
	u8 bits = pto_func_scalar_bits[t->p.func_id];

	if (t->p.scalar[1])
		return false;
	if (bits == 0)
		return !t->p.scalar[0];
	return bits == 64 || !(t->p.scalar[0] >> 32);
}

/* Does @func_id read a scalar (scalar[0])? */
bool pto_func_scalars(u32 func_id)
{
	return func_id < PTO_FUNC_COUNT && pto_func_scalar_bits[func_id];
}

/* The tensor slots (bit PTO_ARG_*) @func_id reads or writes. */
u8 pto_func_tensors(u32 func_id)
{
	return func_id < PTO_FUNC_COUNT ? pto_func_args[func_id] : 0;
}
EXPORT_SYMBOL_IF_KUNIT(pto_func_tensors);

/*
 * Keep of @p's arguments only what its kernel reads (unused tensor slots
 * and scalars zeroed): a graph task's subtasks share one argument list.
 */
void pto_payload_select(struct pto_payload *p)
{
	u8 bits = p->func_id < PTO_FUNC_COUNT ?
		  pto_func_scalar_bits[p->func_id] : 64;
	u8 used = pto_func_tensors(p->func_id);
	unsigned int i;

	if (p->func_id >= PTO_FUNC_COUNT)
		return;
	for (i = 0; i < PTO_PAYLOAD_TENSORS; i++)
		if (!(used & BIT(i)))
			memset(&p->t[i], 0, sizeof(p->t[i]));
	if (!bits)
		p->scalar[0] = 0;
}

u32 pto_task_fetch(struct pto_core *core, struct pto_mock_task *t,
		   u32 dispatch)
{
	const struct pto_payload *src;
	unsigned int i;

	memset(t, 0, sizeof(*t));
	t->dispatch = dispatch;
	t->id = dispatch & PTO_COND_ID_MASK;
	if (dispatch & ~PTO_COND_ID_MASK)
		return PTO_TASK_EINVAL;
	src = core->payload_kaddr + (t->id & 1) * PTO_PAYLOAD_SIZE;
	memcpy(&t->p, src, sizeof(t->p));
	if (t->p.flags)
		return PTO_TASK_EINVAL;
	for (i = 0; i < ARRAY_SIZE(t->p.reserved); i++)
		if (t->p.reserved[i])
			return PTO_TASK_EINVAL;
	if (t->p.block_idx >= max(t->p.block_num, 1U))
		return PTO_TASK_EINVAL;
	return PTO_TASK_OK;
}
EXPORT_SYMBOL_IF_KUNIT(pto_task_fetch);

/* Number of elements, or 0 if the shape is malformed. */
static u32 pto_tensor_elems(const struct pto_tensor_desc *tn)
{
	u64 n = 1;
	u32 i;

	if (tn->rank < 1 || tn->rank > PTO_TENSOR_MAX_RANK)
		return 0;
	for (i = 0; i < PTO_TENSOR_MAX_RANK; i++) {
		if (i >= tn->rank) {
			if (tn->shape[i] || tn->strides[i])
				return 0;
			continue;
		}
		if (!tn->shape[i] || tn->shape[i] > PTO_MAX_ELEMS)
			return 0;
		n *= tn->shape[i];
		if (n > PTO_MAX_ELEMS)
			return 0;
	}
	return n;
}

static bool pto_tensor_is_zero(const struct pto_tensor_desc *tn)
{
	return !memchr_inv(tn, 0, sizeof(*tn));
}

/*
 * Check one tensor's dtype, shape and extent and pin the buffer object
 * that holds it (pto_bo_lookup(): the range tree's spinlock only, so the
 * core thread never waits behind an ioctl holding pf->lock).
 */
static u32 pto_tensor_resolve(struct pto_file *pf, struct pto_mock_task *t,
			      unsigned int slot)
{
	const struct pto_tensor_desc *tn = &t->p.t[slot];
	u64 last = 0, term, bytes, end;
	struct pto_bo *bo;
	u32 i;

	if (tn->dtype != PTO_DTYPE_F32 && tn->dtype != PTO_DTYPE_I32)
		return PTO_TASK_EDTYPE;
	if (!pto_tensor_elems(tn))
		return PTO_TASK_ESHAPE;
	for (i = 0; i < tn->rank; i++) {
		if (check_mul_overflow((u64)(tn->shape[i] - 1), tn->strides[i],
				       &term) ||
		    check_add_overflow(last, term, &last))
			return PTO_TASK_EADDR;
	}
	if (check_add_overflow(last, 1ULL, &bytes) ||
	    check_mul_overflow(bytes, 4ULL, &bytes) ||
	    check_add_overflow(tn->addr, bytes, &end))
		return PTO_TASK_EADDR;
	if (!tn->addr || tn->addr & 3)
		return PTO_TASK_EADDR;

	bo = pto_bo_lookup(pf, tn->addr, end - tn->addr);
	if (!bo)
		return PTO_TASK_EADDR;
	t->bo[slot] = bo;
	t->ptr[slot] = bo->vaddr + (tn->addr - bo->dev_addr);
	return PTO_TASK_OK;
}

static bool pto_same_shape(const struct pto_tensor_desc *x,
			   const struct pto_tensor_desc *y)
{
	return x->rank == y->rank &&
	       !memcmp(x->shape, y->shape, sizeof(x->shape));
}

/* Shape and dtype rules of each kernel, before any address is looked up. */
static u32 pto_task_check_shapes(const struct pto_mock_task *t)
{
	const struct pto_tensor_desc *a = &t->p.t[PTO_ARG_A];
	const struct pto_tensor_desc *b = &t->p.t[PTO_ARG_B];
	const struct pto_tensor_desc *o = &t->p.t[PTO_ARG_OUT];
	u32 f = t->p.func_id;

	switch (f) {
	case PTO_FUNC_ADD:
	case PTO_FUNC_SUB:
	case PTO_FUNC_MUL:
		if (a->dtype != o->dtype || b->dtype != o->dtype)
			return PTO_TASK_EDTYPE;
		if (!pto_same_shape(a, o) || !pto_same_shape(b, o))
			return PTO_TASK_ESHAPE;
		break;
	case PTO_FUNC_ADD_SCALAR:
	case PTO_FUNC_MUL_SCALAR:
	case PTO_FUNC_COPY:
		if (a->dtype != o->dtype)
			return PTO_TASK_EDTYPE;
		if (!pto_same_shape(a, o))
			return PTO_TASK_ESHAPE;
		break;
	case PTO_FUNC_REDUCE_SUM:
		if (a->dtype != o->dtype)
			return PTO_TASK_EDTYPE;
		if (pto_tensor_elems(o) != 1)
			return PTO_TASK_ESHAPE;
		break;
	case PTO_FUNC_MATMUL:
		if (a->dtype != o->dtype || b->dtype != o->dtype)
			return PTO_TASK_EDTYPE;
		if (a->rank != 2 || b->rank != 2 || o->rank != 2 ||
		    a->shape[0] > PTO_MATMUL_MAX ||
		    a->shape[1] > PTO_MATMUL_MAX ||
		    b->shape[1] > PTO_MATMUL_MAX ||
		    a->shape[1] != b->shape[0] ||
		    o->shape[0] != a->shape[0] || o->shape[1] != b->shape[1])
			return PTO_TASK_ESHAPE;
		break;
	case PTO_FUNC_SPIN_NS:
	case PTO_FUNC_HANG:
		if (t->p.scalar[0] > (u64)READ_ONCE(max_spin_ms) * NSEC_PER_MSEC)
			return PTO_TASK_EINVAL;
		break;
	case PTO_FUNC_BLOCK_ID:
		/* One i32 element, block_idx * stride into a 1-D tensor. */
		if (o->dtype != PTO_DTYPE_I32)
			return PTO_TASK_EDTYPE;
		if (o->rank != 1 || t->p.scalar[0] > U32_MAX ||
		    (u64)t->p.block_idx * max_t(u64, t->p.scalar[0], 1) >=
		    o->shape[0])
			return PTO_TASK_ESHAPE;
		break;
	}
	return PTO_TASK_OK;
}

void pto_task_put(struct pto_mock_task *t)
{
	unsigned int i;

	for (i = 0; i < PTO_PAYLOAD_TENSORS; i++) {
		if (t->bo[i])
			pto_bo_put(t->bo[i]);
		t->bo[i] = NULL;
		t->ptr[i] = NULL;
	}
}
EXPORT_SYMBOL_IF_KUNIT(pto_task_put);

/*
 * Validate @t against @pf's buffer objects. On PTO_TASK_OK every used
 * tensor is pinned; on an error nothing is (pto_task_put() is idempotent).
 */
u32 pto_task_validate(struct pto_file *pf, struct pto_mock_task *t)
{
	unsigned int i;
	u8 used;
	u32 err;

	if (t->p.func_id >= PTO_FUNC_COUNT)
		return PTO_TASK_EFUNC;
	if (!pto_task_scalars_ok(t))
		return PTO_TASK_EINVAL;
	used = pto_func_args[t->p.func_id];
	for (i = 0; i < PTO_PAYLOAD_TENSORS; i++) {
		if (used & BIT(i))
			continue;
		if (!pto_tensor_is_zero(&t->p.t[i]))
			return PTO_TASK_EINVAL;
	}
	for (i = 0; i < PTO_PAYLOAD_TENSORS; i++) {
		if (!(used & BIT(i)))
			continue;
		if (t->p.t[i].dtype != PTO_DTYPE_F32 &&
		    t->p.t[i].dtype != PTO_DTYPE_I32)
			return PTO_TASK_EDTYPE;
		if (!pto_tensor_elems(&t->p.t[i]))
			return PTO_TASK_ESHAPE;
	}
	err = pto_task_check_shapes(t);
	if (err)
		return err;
	if (!used)
		return PTO_TASK_OK;
	if (!PTO_HAVE_FP && t->p.t[PTO_ARG_OUT].dtype == PTO_DTYPE_F32)
		return PTO_TASK_EDTYPE;

	for (i = 0; i < PTO_PAYLOAD_TENSORS; i++) {
		if (!(used & BIT(i)))
			continue;
		err = pto_tensor_resolve(pf, t, i);
		if (err)
			break;
	}
	if (err)
		pto_task_put(t);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(pto_task_validate);

/* Between chunks: stay preemptible and stoppable. */
static bool pto_task_yield(struct pto_core *core)
{
	cond_resched();
	return pto_core_stopping(core);
}

static u32 pto_i32_op(u32 f, u32 x, u32 y, u32 s)
{
	switch (f) {
	case PTO_FUNC_ADD:
		return x + y;
	case PTO_FUNC_SUB:
		return x - y;
	case PTO_FUNC_MUL:
		return x * y;
	case PTO_FUNC_ADD_SCALAR:
		return x + s;
	case PTO_FUNC_MUL_SCALAR:
		return x * s;
	case PTO_FUNC_FILL:
		return s;
	default:
		return x;
	}
}

static void pto_row(u32 f, u32 dtype, u32 *o, s64 so, const u32 *a, s64 sa,
		    const u32 *b, s64 sb, u32 s, u32 n)
{
	static const enum pto_fp_op fp_ops[] = {
		[PTO_FUNC_ADD] = PTO_FP_ADD,
		[PTO_FUNC_SUB] = PTO_FP_SUB,
		[PTO_FUNC_MUL] = PTO_FP_MUL,
		[PTO_FUNC_ADD_SCALAR] = PTO_FP_ADDS,
		[PTO_FUNC_MUL_SCALAR] = PTO_FP_MULS,
		[PTO_FUNC_COPY] = PTO_FP_COPY,
		[PTO_FUNC_FILL] = PTO_FP_FILL,
	};

	u32 i;

	if (PTO_HAVE_FP && dtype == PTO_DTYPE_F32) {
		pto_fp32_row(fp_ops[f], o, so, a, sa, b, sb, s, n);
		return;
	}
	for (i = 0; i < n; i++) {
		u32 x = a ? READ_ONCE(a[i * sa]) : 0;
		u32 y = b ? READ_ONCE(b[i * sb]) : 0;

		WRITE_ONCE(o[i * so], pto_i32_op(f, x, y, s));
	}
}

/*
 * pto_row() through @lc: the chunk's inputs gathered into the core's
 * staging, computed there (an FPU section never touches the cache), the
 * output scattered back. Without a cache, pto_row() on memory.
 */
static void pto_row_lc(struct pto_lcache *lc, u32 f, u32 dtype, u32 *o,
		       s64 so, const u32 *a, s64 sa, const u32 *b, s64 sb,
		       u32 s, u32 n)
{
	u32 *la = a ? pto_lc_stage(lc, 0) : NULL;
	u32 *lb = b ? pto_lc_stage(lc, 1) : NULL;
	u32 *lo = pto_lc_stage(lc, 2);

	if (a)
		pto_lc_gather32(lc, la, a, sa, n);
	if (b)
		pto_lc_gather32(lc, lb, b, sb, n);
	pto_row(f, dtype, lo, 1, la, 1, lb, 1, s, n);
	pto_lc_scatter32(lc, o, so, lo, n);
}

/* Elements per chunk: a cached run's chunk fits the staging. */
static u32 pto_chunk(const struct pto_lcache *lc)
{
	return lc ? PTO_LC_STAGE : PTO_CHUNK;
}

/* Shape padded to 4 dimensions (leading 1s), strides likewise. */
static void pto_pad4(const struct pto_tensor_desc *tn, u32 shape[4], s64 str[4])
{
	u32 i, off = PTO_TENSOR_MAX_RANK - tn->rank;

	for (i = 0; i < PTO_TENSOR_MAX_RANK; i++) {
		shape[i] = i < off ? 1 : tn->shape[i - off];
		str[i] = i < off ? 0 : (s64)tn->strides[i - off];
	}
}

/* Offset of row @r (the three outer dimensions, row-major) of a view. */
static s64 pto_row_off(u64 r, const u32 sh[4], const s64 st[4])
{
	u32 i2 = r % sh[2], i1 = (r / sh[2]) % sh[1], i0 = r / sh[2] / sh[1];

	return i0 * st[0] + i1 * st[1] + i2 * st[2];
}

/* Elementwise kernels over the output's shape, one chunk at a time. */
static u32 pto_run_elementwise(struct pto_core *core,
			       struct pto_mock_task *t, struct pto_lcache *lc)
{
	u32 f = t->p.func_id, dtype = t->p.t[PTO_ARG_OUT].dtype;
	bool has_a = f != PTO_FUNC_FILL;
	bool has_b = f == PTO_FUNC_ADD || f == PTO_FUNC_SUB ||
		     f == PTO_FUNC_MUL;
	const u32 *a = t->ptr[PTO_ARG_A], *b = t->ptr[PTO_ARG_B];
	u32 *o = t->ptr[PTO_ARG_OUT];
	s64 so[4], sa[4] = {}, sb[4] = {};
	u32 sh[4], dummy[4], j, n;
	u32 s = (u32)t->p.scalar[0];
	u64 r, rows;

	pto_pad4(&t->p.t[PTO_ARG_OUT], sh, so);
	if (has_a)
		pto_pad4(&t->p.t[PTO_ARG_A], dummy, sa);
	if (has_b)
		pto_pad4(&t->p.t[PTO_ARG_B], dummy, sb);
	rows = (u64)sh[0] * sh[1] * sh[2];

	for (r = 0; r < rows; r++) {
		s64 oo = pto_row_off(r, sh, so);
		s64 oa = pto_row_off(r, sh, sa);
		s64 ob = pto_row_off(r, sh, sb);

		for (j = 0; j < sh[3]; j += n) {
			u32 *oj = o + oo + j * so[3];
			const u32 *aj = has_a ? a + oa + j * sa[3] : NULL;
			const u32 *bj = has_b ? b + ob + j * sb[3] : NULL;

			n = min(sh[3] - j, pto_chunk(lc));
			if (lc)
				pto_row_lc(lc, f, dtype, oj, so[3], aj, sa[3],
					   bj, sb[3], s, n);
			else
				pto_row(f, dtype, oj, so[3], aj, sa[3], bj,
					sb[3], s, n);
			if (pto_task_yield(core))
				return PTO_TASK_ESTOP;
		}
	}
	return PTO_TASK_OK;
}

static u32 pto_run_reduce_sum(struct pto_core *core,
			      struct pto_mock_task *t, struct pto_lcache *lc)
{
	u32 dtype = t->p.t[PTO_ARG_A].dtype;
	const u32 *a = t->ptr[PTO_ARG_A];
	u32 sh[4], j, k, n, isum = 0;
	u64 r, rows, acc = 0;
	s64 sa[4];

	pto_pad4(&t->p.t[PTO_ARG_A], sh, sa);
	rows = (u64)sh[0] * sh[1] * sh[2];
	for (r = 0; r < rows; r++) {
		for (j = 0; j < sh[3]; j += n) {
			const u32 *row = a + pto_row_off(r, sh, sa) + j * sa[3];
			s64 st = sa[3];

			n = min(sh[3] - j, pto_chunk(lc));
			if (lc) {
				pto_lc_gather32(lc, pto_lc_stage(lc, 0), row,
						st, n);
				row = pto_lc_stage(lc, 0);
				st = 1;
			}
			if (PTO_HAVE_FP && dtype == PTO_DTYPE_F32) {
				pto_fp32_sum_row(row, st, n, &acc);
			} else {
				for (k = 0; k < n; k++)
					isum += READ_ONCE(row[k * st]);
			}
			if (pto_task_yield(core))
				return PTO_TASK_ESTOP;
		}
	}
	if (PTO_HAVE_FP && dtype == PTO_DTYPE_F32)
		isum = pto_fp32_from_acc(acc);
	pto_lc_st32(lc, t->ptr[PTO_ARG_OUT], isum);
	return PTO_TASK_OK;
}

/* Columns 0 .. @n - 1 of one output row: o[j] = sum over x of a[x] b[x][j]. */
static void pto_matmul_cols(u32 dtype, u32 *o, s64 so, const u32 *a, s64 sa,
			    const u32 *b, s64 sbk, s64 sbn, u32 k, u32 n)
{
	u32 j, x;

	if (PTO_HAVE_FP && dtype == PTO_DTYPE_F32) {
		pto_fp32_matmul_row(o, so, a, sa, b, sbk, sbn, k, n);
		return;
	}
	for (j = 0; j < n; j++) {
		u32 acc = 0;

		for (x = 0; x < k; x++)
			acc += READ_ONCE(a[x * sa]) *
			       READ_ONCE(b[x * sbk + j * sbn]);
		WRITE_ONCE(o[j * so], acc);
	}
}

/*
 * One output row through @lc: the A row and a block of B's columns
 * (k x c, row-major) gathered into the staging, computed there, the
 * block's outputs scattered.
 */
static void pto_matmul_row_lc(struct pto_lcache *lc, u32 dtype, u32 *o,
			      s64 so, const u32 *a, s64 sa, const u32 *b,
			      s64 sbk, s64 sbn, u32 k, u32 n)
{
	u32 *la = pto_lc_stage(lc, 0), *lb = pto_lc_stage(lc, 1);
	u32 *lo = pto_lc_stage(lc, 2);
	u32 nb = PTO_LC_STAGE / k, j, c, x;

	BUILD_BUG_ON(PTO_LC_STAGE < PTO_MATMUL_MAX);
	pto_lc_gather32(lc, la, a, sa, k);
	for (j = 0; j < n; j += c) {
		c = min(n - j, nb);
		for (x = 0; x < k; x++)
			pto_lc_gather32(lc, lb + x * c, b + x * sbk + j * sbn,
					sbn, c);
		pto_matmul_cols(dtype, lo, 1, la, 1, lb, c, 1, k, c);
		pto_lc_scatter32(lc, o + j * so, so, lo, c);
	}
}

static u32 pto_run_matmul(struct pto_core *core, struct pto_mock_task *t,
			  struct pto_lcache *lc)
{
	const struct pto_tensor_desc *ta = &t->p.t[PTO_ARG_A];
	const struct pto_tensor_desc *tb = &t->p.t[PTO_ARG_B];
	const struct pto_tensor_desc *to = &t->p.t[PTO_ARG_OUT];
	u32 m = ta->shape[0], k = ta->shape[1], n = tb->shape[1], i;
	const u32 *a = t->ptr[PTO_ARG_A], *b = t->ptr[PTO_ARG_B];
	u32 *o = t->ptr[PTO_ARG_OUT];

	for (i = 0; i < m; i++) {
		const u32 *arow = a + i * ta->strides[0];
		u32 *orow = o + i * to->strides[0];

		if (lc)
			pto_matmul_row_lc(lc, to->dtype, orow, to->strides[1],
					  arow, ta->strides[1], b,
					  tb->strides[0], tb->strides[1], k, n);
		else
			pto_matmul_cols(to->dtype, orow, to->strides[1], arow,
					ta->strides[1], b, tb->strides[0],
					tb->strides[1], k, n);
		if (pto_task_yield(core))
			return PTO_TASK_ESTOP;
	}
	return PTO_TASK_OK;
}

/* Busy for @ns (bounded by validation), stoppable, preemptible. */
static u32 pto_run_spin(struct pto_core *core, u64 ns, bool hang)
{
	u64 end = ktime_get_ns() + ns;

	while (ktime_get_ns() < end) {
		if (pto_core_stopping(core))
			return PTO_TASK_ESTOP;
		cond_resched();
		cpu_relax();
	}
	return hang ? PTO_TASK_EFAULT : PTO_TASK_OK;
}

/* An SPMD block reports itself: its index, in its own element. */
static u32 pto_run_block_id(struct pto_mock_task *t, struct pto_lcache *lc)
{
	const struct pto_tensor_desc *o = &t->p.t[PTO_ARG_OUT];
	u64 at = (u64)t->p.block_idx * max_t(u64, t->p.scalar[0], 1);
	u32 *out = t->ptr[PTO_ARG_OUT];

	pto_lc_st32(lc, &out[at * o->strides[0]], t->p.block_idx);
	return PTO_TASK_OK;
}

/*
 * Run @t's kernel on @core. @lc: the core's line cache for the kernel's
 * ordinary GM loads and stores, NULL for direct memory.
 */
u32 pto_task_run(struct pto_core *core, struct pto_mock_task *t,
		 struct pto_lcache *lc)
{
	switch (t->p.func_id) {
	case PTO_FUNC_NOOP:
		return PTO_TASK_OK;
	case PTO_FUNC_ADD:
	case PTO_FUNC_SUB:
	case PTO_FUNC_MUL:
	case PTO_FUNC_ADD_SCALAR:
	case PTO_FUNC_MUL_SCALAR:
	case PTO_FUNC_COPY:
	case PTO_FUNC_FILL:
		return pto_run_elementwise(core, t, lc);
	case PTO_FUNC_REDUCE_SUM:
		return pto_run_reduce_sum(core, t, lc);
	case PTO_FUNC_MATMUL:
		return pto_run_matmul(core, t, lc);
	case PTO_FUNC_SPIN_NS:
		return pto_run_spin(core, t->p.scalar[0], false);
	case PTO_FUNC_HANG:
		return pto_run_spin(core, t->p.scalar[0], true);
	case PTO_FUNC_FAULT:
		return PTO_TASK_EFAULT;
	case PTO_FUNC_BLOCK_ID:
		return pto_run_block_id(t, lc);
	}
	return PTO_TASK_EFUNC;
}
EXPORT_SYMBOL_IF_KUNIT(pto_task_run);
