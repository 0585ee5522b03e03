// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: mock cores without their threads.
 *  - pto_payload: payload validation against a file's buffer objects
 *    (table-driven), and the references it takes;
 *  - pto_core_steps: one task driven step by step (poll, do_task);
 *  - pto_core_order: the park / doorbell and FIN / wake-up orderings under
 *    every interleaving of the two sides' steps, and a broken variant
 *    (no re-check after PARKED) to show the checker catches a lost wake-up.
 */
#include <kunit/test.h>
#include <linux/maple_tree.h>
#include <linux/slab.h>
#include "../pto_core.h"
#include "../pto_bo.h"
#include "../pto_mock.h"
#include "pto_test_file.h"

#define BO_A 0x100000ULL	/* two adjacent buffers of the file */
#define BO_B 0x101000ULL
#define FOREIGN 0x200000ULL	/* not the file's */
#define BO_SIZE 4096ULL

struct core_test_ctx {
	struct pto_device pdev;
	struct pto_file pf;
	struct pto_bo bo[2];
	struct pto_core core;
};

static int core_test_init(struct kunit *test)
{
	static const u64 addrs[] = { BO_A, BO_B };
	struct core_test_ctx *ctx;
	int ret;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	pto_test_file_init(test, &ctx->pdev, &ctx->pf, ctx->bo, addrs, 2,
			   BO_SIZE);
	ret = pto_core_test_init(&ctx->core, &ctx->pdev, 1);
	KUNIT_ASSERT_EQ(test, ret, 0);
	/* Launched by hand: owner, payload buffers at the start of bo B. */
	ctx->core.owner = &ctx->pf;
	ctx->core.payload_bo = &ctx->bo[1];
	ctx->core.payload_addr = BO_B;
	ctx->core.payload_kaddr = ctx->bo[1].vaddr;
	*(u32 *)(ctx->core.kregs + PTO_KREG_FAST_PATH_ENABLE) =
		PTO_FAST_PATH_OPEN;
	test->priv = ctx;
	return 0;
}

static void core_test_exit(struct kunit *test)
{
	struct core_test_ctx *ctx = test->priv;

	pto_core_test_fini(&ctx->core);
	mtree_destroy(&ctx->pf.ranges);
}

static void tensor(struct pto_tensor_desc *t, u64 addr, u32 dtype, u32 rank,
		   u32 d0, u32 d1)
{
	memset(t, 0, sizeof(*t));
	t->addr = addr;
	t->dtype = dtype;
	t->rank = rank;
	t->shape[0] = d0;
	t->strides[0] = rank == 2 ? d1 : 1;
	if (rank == 2) {
		t->shape[1] = d1;
		t->strides[1] = 1;
	}
}

/* ---- payload validation ------------------------------------------------ */

struct vcase {
	const char *name;
	void (*mutate)(struct pto_payload *p);
	u32 want;
};

/* A valid int32 add of 4x4 tensors, all in bo A. */
static void good_add(struct pto_payload *p)
{
	memset(p, 0, sizeof(*p));
	p->func_id = PTO_FUNC_ADD;
	tensor(&p->t[PTO_ARG_A], BO_A, PTO_DTYPE_I32, 2, 4, 4);
	tensor(&p->t[PTO_ARG_B], BO_A + 64, PTO_DTYPE_I32, 2, 4, 4);
	tensor(&p->t[PTO_ARG_OUT], BO_A + 128, PTO_DTYPE_I32, 2, 4, 4);
}

static void m_none(struct pto_payload *p)
{
}

static void m_func(struct pto_payload *p)
{
	p->func_id = PTO_FUNC_COUNT;
}

static void m_dtype(struct pto_payload *p)
{
	p->t[PTO_ARG_A].dtype = 3;
}

static void m_dtype_mix(struct pto_payload *p)
{
	p->t[PTO_ARG_B].dtype = PTO_DTYPE_F32;
}

static void m_rank0(struct pto_payload *p)
{
	p->t[PTO_ARG_A].rank = 0;
}

static void m_rank5(struct pto_payload *p)
{
	p->t[PTO_ARG_OUT].rank = 5;
}

static void m_shape0(struct pto_payload *p)
{
	p->t[PTO_ARG_B].shape[1] = 0;
}

static void m_mismatch(struct pto_payload *p)
{
	p->t[PTO_ARG_B].shape[0] = 3;
}

static void m_beyond_rank(struct pto_payload *p)
{
	p->t[PTO_ARG_A].strides[3] = 1;
}

static void m_addr0(struct pto_payload *p)
{
	p->t[PTO_ARG_A].addr = 0;
}

static void m_unaligned(struct pto_payload *p)
{
	p->t[PTO_ARG_A].addr += 1;
}

static void m_past_end(struct pto_payload *p)
{
	p->t[PTO_ARG_OUT].addr = BO_A + BO_SIZE - 32;
}
/* Crossing from bo A into the adjacent bo B: both are the file's, still no. */
static void m_straddle(struct pto_payload *p)
{
	p->t[PTO_ARG_OUT].addr = BO_B - 16;
}

static void m_foreign(struct pto_payload *p)
{
	p->t[PTO_ARG_B].addr = FOREIGN;
}

static void m_stride_overflow(struct pto_payload *p)
{
	p->t[PTO_ARG_A].strides[0] = U64_MAX / 2;
}

static void m_addr_overflow(struct pto_payload *p)
{
	p->t[PTO_ARG_A].addr = U64_MAX - 3;
}

static void m_flags(struct pto_payload *p)
{
	p->flags = 1;
}

static void m_unused_slot(struct pto_payload *p)
{
	p->func_id = PTO_FUNC_COPY;	/* B is unused by copy */
}

static void m_spin_long(struct pto_payload *p)
{
	memset(p, 0, sizeof(*p));
	p->func_id = PTO_FUNC_SPIN_NS;
	p->scalar[0] = 3600ULL * NSEC_PER_SEC;
}

static void m_matmul_big(struct pto_payload *p)
{
	p->func_id = PTO_FUNC_MATMUL;
	tensor(&p->t[PTO_ARG_A], BO_A, PTO_DTYPE_I32, 2, 1, 129);
	tensor(&p->t[PTO_ARG_B], BO_A, PTO_DTYPE_I32, 2, 129, 1);
	tensor(&p->t[PTO_ARG_OUT], BO_A, PTO_DTYPE_I32, 2, 1, 1);
}

static void m_matmul_k(struct pto_payload *p)
{
	p->func_id = PTO_FUNC_MATMUL;
	tensor(&p->t[PTO_ARG_B], BO_A + 64, PTO_DTYPE_I32, 2, 3, 4);
}

static void m_matmul_ok(struct pto_payload *p)
{
	p->func_id = PTO_FUNC_MATMUL;
}

static void m_reduce_out(struct pto_payload *p)
{
	p->func_id = PTO_FUNC_REDUCE_SUM;
	memset(&p->t[PTO_ARG_B], 0, sizeof(p->t[PTO_ARG_B]));
}

static void m_reduce_ok(struct pto_payload *p)
{
	m_reduce_out(p);
	tensor(&p->t[PTO_ARG_OUT], BO_A + 256, PTO_DTYPE_I32, 1, 1, 0);
}

static void m_fault(struct pto_payload *p)
{
	memset(p, 0, sizeof(*p));
	p->func_id = PTO_FUNC_FAULT;
}

static const struct vcase vcases[] = {
	{ "valid add", m_none, PTO_TASK_OK },
	{ "unknown func", m_func, PTO_TASK_EFUNC },
	{ "bad dtype", m_dtype, PTO_TASK_EDTYPE },
	{ "mixed dtypes", m_dtype_mix, PTO_TASK_EDTYPE },
	{ "rank 0", m_rank0, PTO_TASK_ESHAPE },
	{ "rank 5", m_rank5, PTO_TASK_ESHAPE },
	{ "zero dim", m_shape0, PTO_TASK_ESHAPE },
	{ "shape mismatch", m_mismatch, PTO_TASK_ESHAPE },
	{ "stride beyond rank", m_beyond_rank, PTO_TASK_ESHAPE },
	{ "address 0", m_addr0, PTO_TASK_EADDR },
	{ "unaligned", m_unaligned, PTO_TASK_EADDR },
	{ "past the buffer", m_past_end, PTO_TASK_EADDR },
	{ "straddles two buffers", m_straddle, PTO_TASK_EADDR },
	{ "foreign address", m_foreign, PTO_TASK_EADDR },
	{ "stride overflow", m_stride_overflow, PTO_TASK_EADDR },
	{ "address overflow", m_addr_overflow, PTO_TASK_EADDR },
	{ "flags (fetch checks them)", m_flags, PTO_TASK_OK },
	{ "unused slot set", m_unused_slot, PTO_TASK_EINVAL },
	{ "spin too long", m_spin_long, PTO_TASK_EINVAL },
	{ "matmul > 128", m_matmul_big, PTO_TASK_ESHAPE },
	{ "matmul k mismatch", m_matmul_k, PTO_TASK_ESHAPE },
	{ "matmul 4x4", m_matmul_ok, PTO_TASK_OK },
	{ "reduce out not 1 element", m_reduce_out, PTO_TASK_ESHAPE },
	{ "reduce ok", m_reduce_ok, PTO_TASK_OK },
	{ "fault kernel validates", m_fault, PTO_TASK_OK },
};

static void vcase_desc(const struct vcase *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(vcases, vcases, vcase_desc);

static void payload_validate(struct kunit *test)
{
	const struct vcase *c = test->param_value;
	struct core_test_ctx *ctx = test->priv;
	struct pto_mock_task *t;
	unsigned int i;
	u32 err;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	good_add(&t->p);
	c->mutate(&t->p);
	err = pto_task_validate(&ctx->pf, t);
	KUNIT_EXPECT_EQ(test, err, c->want);
	if (err) {
		/* An error pins nothing. */
		for (i = 0; i < PTO_PAYLOAD_TENSORS; i++)
			KUNIT_EXPECT_NULL(test, t->bo[i]);
		KUNIT_EXPECT_EQ(test, kref_read(&ctx->bo[0].ref), 1);
		return;
	}
	/* Every used tensor pins its buffer (a concurrent FREE keeps it). */
	for (i = 0; i < PTO_PAYLOAD_TENSORS; i++) {
		if (!t->bo[i])
			continue;
		KUNIT_EXPECT_PTR_EQ(test, t->bo[i], &ctx->bo[0]);
		KUNIT_EXPECT_PTR_EQ(test, t->ptr[i],
				    ctx->bo[0].vaddr +
				    (t->p.t[i].addr - BO_A));
	}
	pto_task_put(t);
	KUNIT_EXPECT_EQ(test, kref_read(&ctx->bo[0].ref), 1);
}

/* fetch: flags, reserved words and dispatch bits, and the parity buffer. */
static void payload_fetch(struct kunit *test)
{
	struct core_test_ctx *ctx = test->priv;
	struct pto_payload *buf = ctx->core.payload_kaddr;
	struct pto_mock_task *t;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	good_add(&buf[0]);
	good_add(&buf[1]);
	buf[1].func_id = PTO_FUNC_SUB;
	KUNIT_EXPECT_EQ(test, pto_task_fetch(&ctx->core, t, 2), PTO_TASK_OK);
	KUNIT_EXPECT_EQ(test, t->p.func_id, PTO_FUNC_ADD);
	KUNIT_EXPECT_EQ(test, pto_task_fetch(&ctx->core, t, 3), PTO_TASK_OK);
	KUNIT_EXPECT_EQ(test, t->p.func_id, PTO_FUNC_SUB);
	buf[0].flags = 1;
	KUNIT_EXPECT_EQ(test, pto_task_fetch(&ctx->core, t, 2), PTO_TASK_EINVAL);
	buf[0].flags = 0;
	buf[0].reserved[0] = 5;
	KUNIT_EXPECT_EQ(test, pto_task_fetch(&ctx->core, t, 2), PTO_TASK_EINVAL);
	buf[0].reserved[0] = 0;
	/* The core's Out stamps: whatever the owner left there is ignored. */
	buf[0].start_ns = ~0ULL;
	buf[0].end_ns = 1;
	KUNIT_EXPECT_EQ(test, pto_task_fetch(&ctx->core, t, 2), PTO_TASK_OK);
	buf[0].start_ns = 0;
	buf[0].end_ns = 0;
	KUNIT_EXPECT_EQ(test, pto_task_fetch(&ctx->core, t, 0x01000002),
			PTO_TASK_EINVAL);
	KUNIT_EXPECT_EQ(test, t->id, 2);
}

/* ---- one task, step by step -------------------------------------------- */

static u32 ureg(struct core_test_ctx *ctx, unsigned int off)
{
	return pto_ureg_read(&ctx->core, off);
}

static void set_ureg(struct core_test_ctx *ctx, unsigned int off, u32 v)
{
	*(u32 *)(ctx->core.uregs + off) = v;
}

static void step_task(struct kunit *test)
{
	struct core_test_ctx *ctx = test->priv;
	struct pto_payload *buf = ctx->core.payload_kaddr;
	u32 *mem = ctx->bo[0].vaddr, dispatch, i;

	for (i = 0; i < 16; i++) {
		mem[i] = i;
		mem[16 + i] = 100 * i;
	}
	good_add(&buf[1]);
	/* Nothing dispatched, a closed window, then a dispatch. */
	KUNIT_EXPECT_FALSE(test, pto_core_poll(&ctx->core, &dispatch));
	set_ureg(ctx, PTO_REG_DATA_MAIN_BASE, 1);
	*(u32 *)(ctx->core.kregs + PTO_KREG_FAST_PATH_ENABLE) =
		PTO_FAST_PATH_CLOSE;
	KUNIT_EXPECT_FALSE(test, pto_core_poll(&ctx->core, &dispatch));
	*(u32 *)(ctx->core.kregs + PTO_KREG_FAST_PATH_ENABLE) =
		PTO_FAST_PATH_OPEN;
	KUNIT_ASSERT_TRUE(test, pto_core_poll(&ctx->core, &dispatch));
	KUNIT_EXPECT_EQ(test, dispatch, 1);
	pto_core_do_task(&ctx->core, dispatch);
	KUNIT_EXPECT_EQ(test, ureg(ctx, PTO_REG_COND), PTO_COND_FIN | 1);
	for (i = 0; i < 16; i++)
		KUNIT_EXPECT_EQ(test, mem[32 + i], 101 * i);
	KUNIT_EXPECT_EQ(test, buf[1].status, PTO_TASK_OK);
	KUNIT_EXPECT_EQ(test, buf[1].done_id, 1);
	/* The same id again is not new work. */
	KUNIT_EXPECT_FALSE(test, pto_core_poll(&ctx->core, &dispatch));

	/* A bad payload: FIN with the code, counted, core still usable. */
	buf[0] = buf[1];
	buf[0].t[PTO_ARG_OUT].addr = FOREIGN;
	set_ureg(ctx, PTO_REG_DATA_MAIN_BASE, 2);
	KUNIT_ASSERT_TRUE(test, pto_core_poll(&ctx->core, &dispatch));
	pto_core_do_task(&ctx->core, dispatch);
	KUNIT_EXPECT_EQ(test, ureg(ctx, PTO_REG_COND),
			PTO_COND_FIN | PTO_TASK_EADDR << PTO_COND_ERR_SHIFT | 2);
	KUNIT_EXPECT_EQ(test, buf[0].status, PTO_TASK_EADDR);
	KUNIT_EXPECT_EQ(test, atomic64_read(&ctx->core.errors), 1);
	KUNIT_EXPECT_EQ(test, atomic64_read(&ctx->core.tasks), 2);
	KUNIT_EXPECT_EQ(test, kref_read(&ctx->bo[0].ref), 1);
	set_ureg(ctx, PTO_REG_DATA_MAIN_BASE, 3);
	KUNIT_ASSERT_TRUE(test, pto_core_poll(&ctx->core, &dispatch));
	pto_core_do_task(&ctx->core, dispatch);
	KUNIT_EXPECT_EQ(test, ureg(ctx, PTO_REG_COND), PTO_COND_FIN | 3);
}

/* ---- orderings under forced interleavings ------------------------------- */

/*
 * Two sides of two steps each; an interleaving is a 4-bit word over the
 * positions of the core's steps (exactly two bits set among four slots).
 */
static const u8 interleavings[] = { 0x3, 0x5, 0x6, 0x9, 0xa, 0xc };

static void park_doorbell_interleavings(struct kunit *test, bool recheck)
{
	struct core_test_ctx *ctx = test->priv;
	unsigned int n, step, lost = 0;

	for (n = 0; n < ARRAY_SIZE(interleavings); n++) {
		unsigned int cs = 0, os = 0;
		bool saw_work = false, rang = false;
		u32 id = 10 + 2 * n;

		set_ureg(ctx, PTO_REG_PARKED, 0);
		ctx->core.last_id = id - 2;
		set_ureg(ctx, PTO_REG_DATA_MAIN_BASE, id - 2);
		clear_bit(PTO_CORE_F_DOORBELL, &ctx->core.flags);
		for (step = 0; step < 4; step++) {
			if (interleavings[n] & BIT(step)) {
				/* core: publish PARKED; re-check */
				if (cs++ == 0)
					pto_core_park_publish(&ctx->core);
				else if (recheck)
					saw_work = pto_core_park_recheck(&ctx->core);
			} else {
				/* owner: publish id + fence; read PARKED */
				if (os++ == 0) {
					set_ureg(ctx, PTO_REG_DATA_MAIN_BASE, id);
					/* the owner's Dekker fence */
					smp_mb();
				} else if (ureg(ctx, PTO_REG_PARKED)) {
					set_bit(PTO_CORE_F_DOORBELL,
						&ctx->core.flags);
					rang = true;
				}
			}
		}
		/* The core sleeps iff it saw no work; then it needs a ring. */
		if (!saw_work &&
		    !test_bit(PTO_CORE_F_DOORBELL, &ctx->core.flags))
			lost++;
		if (recheck)
			KUNIT_EXPECT_TRUE_MSG(test, saw_work || rang,
					      "interleaving 0x%x lost a wake-up",
					      interleavings[n]);
	}
	if (recheck)
		KUNIT_EXPECT_EQ(test, lost, 0);
	else	/* e.g. 0xc: the owner read PARKED before it was published */
		KUNIT_EXPECT_GT(test, lost, 0);
}

static void order_park_doorbell(struct kunit *test)
{
	park_doorbell_interleavings(test, true);
}

/* The checker has teeth: without the re-check a wake-up is lost. */
static void order_park_without_recheck_loses(struct kunit *test)
{
	park_doorbell_interleavings(test, false);
}

static void order_fin_wakeup(struct kunit *test)
{
	struct core_test_ctx *ctx = test->priv;
	unsigned int n, step;

	for (n = 0; n < ARRAY_SIZE(interleavings); n++) {
		unsigned int cs = 0, os = 0;
		bool woke = false, owner_saw_fin = false;
		s64 before = atomic64_read(&ctx->pf.wakeups);
		u32 id = 20 + n;

		set_ureg(ctx, PTO_REG_WAKE_REQ, 0);
		set_ureg(ctx, PTO_REG_COND, PTO_COND_ACK | id);
		for (step = 0; step < 4; step++) {
			if (interleavings[n] & BIT(step)) {
				/* core: FIN + fence; check WAKE_REQ */
				if (cs++ == 0)
					pto_core_fin(&ctx->core,
						     PTO_COND_FIN | id);
				else
					woke = pto_core_wake_check(&ctx->core);
			} else {
				/* owner: arm + fence; read COND */
				if (os++ == 0) {
					set_ureg(ctx, PTO_REG_WAKE_REQ, 1);
					/* the owner's Dekker fence */
					smp_mb();
				} else {
					owner_saw_fin =
						ureg(ctx, PTO_REG_COND) ==
						(PTO_COND_FIN | id);
				}
			}
		}
		/* The owner sleeps iff it did not see FIN; then it needs a wake. */
		KUNIT_EXPECT_TRUE_MSG(test, owner_saw_fin || woke,
				      "interleaving 0x%x lost a completion",
				      interleavings[n]);
		KUNIT_EXPECT_EQ(test, atomic64_read(&ctx->pf.wakeups) - before,
				woke ? 1 : 0);
	}
}

static struct kunit_case pto_core_cases[] = {
	KUNIT_CASE_PARAM(payload_validate, vcases_gen_params),
	KUNIT_CASE(payload_fetch),
	KUNIT_CASE(step_task),
	KUNIT_CASE(order_park_doorbell),
	KUNIT_CASE(order_park_without_recheck_loses),
	KUNIT_CASE(order_fin_wakeup),
	{}
};

static struct kunit_suite pto_core_suite = {
	.name = "pto_core",
	.init = core_test_init,
	.exit = core_test_exit,
	.test_cases = pto_core_cases,
};

kunit_test_suite(pto_core_suite);
