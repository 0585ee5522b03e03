// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: a graph task's block range (block_base / block_num), which makes
 * it part of an SPMD task. pto_graph_block: the subtasks get block_idx
 * base + rank (a MIX task's three the base) and block_num the SPMD
 * task's blocks, and their kernels write each block's own line; every
 * bad range is refused naming its task and PTO_GRAPH_FIELD_BLOCK.
 */
#include <kunit/test.h>
#include <linux/maple_tree.h>
#include <linux/slab.h>
#include "../pto_bo.h"
#include "../pto_core.h"
#include "../pto_graph.h"
#include "../pto_mock.h"
#include "pto_test_file.h"

#define BO_A 0x100000ULL
#define BO_SIZE 4096ULL
#define NBLK 5		/* blocks of the SPMD task */
#define LINE 16		/* i32 per block: its own 64-byte line */
#define NT 5		/* the SPMD task's four graph tasks and a plain one */

struct blk_ctx {
	struct pto_device pdev;
	struct pto_file pf;
	struct pto_bo bo;
	struct pto_core core;
	struct pto_graph_task t[NT];
};

static int blk_init(struct kunit *test)
{
	static const u64 addr = BO_A;
	struct blk_ctx *ctx;
	int ret;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	ctx->pdev.clusters = 2;
	ctx->pdev.cores = 2 * PTO_CORES_PER_CLUSTER;
	pto_test_file_init(test, &ctx->pdev, &ctx->pf, &ctx->bo, &addr, 1,
			   BO_SIZE);
	ret = pto_core_test_init(&ctx->core, &ctx->pdev, 0);
	KUNIT_ASSERT_EQ(test, ret, 0);
	test->priv = ctx;
	return 0;
}

static void blk_exit(struct kunit *test)
{
	struct blk_ctx *ctx = test->priv;

	pto_core_test_fini(&ctx->core);
	mtree_destroy(&ctx->pf.ranges);
}

/* A task of @mask running the block_id kernel on every active core. */
static void blk_task(struct pto_graph_task *t, u32 mask, u32 base, u32 num)
{
	struct pto_tensor_desc *o = &t->t[PTO_ARG_OUT].t;
	unsigned int j;

	memset(t, 0, sizeof(*t));
	t->active_mask = mask;
	for (j = 0; j < PTO_CORES_PER_CLUSTER; j++)
		if (mask & BIT(j))
			t->func_id[j] = PTO_FUNC_BLOCK_ID;
	t->block_base = base;
	t->block_num = num;
	t->scalar[0] = LINE;
	t->t[PTO_ARG_OUT].role = PTO_GRAPH_ROLE_OUT;
	o->addr = BO_A;
	o->dtype = PTO_DTYPE_I32;
	o->rank = 1;
	o->shape[0] = NBLK * LINE;
	o->strides[0] = 1;
}

/*
 * SPMD blocks 0..4: an AIV pair (0, 1), one AIV (2), a MIX block (3),
 * the AIC (4); then a plain MIX noop task, block fields zero.
 */
static void blk_graph(struct blk_ctx *ctx)
{
	struct pto_graph_task *p = &ctx->t[4];

	blk_task(&ctx->t[0], PTO_GRAPH_AIV0 | PTO_GRAPH_AIV1, 0, NBLK);
	blk_task(&ctx->t[1], PTO_GRAPH_AIV1, 2, NBLK);
	blk_task(&ctx->t[2], PTO_GRAPH_MASK_MIX, 3, NBLK);
	blk_task(&ctx->t[3], PTO_GRAPH_AIC, 4, NBLK);
	memset(p, 0, sizeof(*p));
	p->active_mask = PTO_GRAPH_MASK_MIX;
}

static struct pto_graph *blk_build(struct kunit *test, u32 version,
				   struct pto_graph_launch *args)
{
	struct blk_ctx *ctx = test->priv;
	size_t size = sizeof(struct pto_graph_hdr) + sizeof(ctx->t);
	struct pto_graph_hdr *h;

	h = kunit_kzalloc(test, size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, h);
	h->magic = PTO_GRAPH_MAGIC;
	h->version = version;
	h->task_count = NT;
	h->size = size;
	h->task_size = sizeof(struct pto_graph_task);
	memcpy(h + 1, ctx->t, sizeof(ctx->t));
	memset(args, 0, sizeof(*args));
	return pto_graph_build(&ctx->pf, h, size, args);
}

static void graph_block_spmd(struct kunit *test)
{
	static const u32 idx[] = { 0, 1, 2, 3, 3, 3, 4, 0, 1, 2 };
	struct blk_ctx *ctx = test->priv;
	struct pto_graph_launch args;
	s32 *v = ctx->bo.vaddr;
	struct pto_graph *g;
	u32 i, b;

	blk_graph(ctx);
	memset(v, 0xff, BO_SIZE);
	g = blk_build(test, PTO_GRAPH_VERSION, &args);
	KUNIT_ASSERT_FALSE(test, IS_ERR(g));
	KUNIT_EXPECT_EQ(test, args.bad_field, (u32)PTO_GRAPH_FIELD_NONE);
	KUNIT_ASSERT_EQ(test, g->nsub, (u32)ARRAY_SIZE(idx));
	for (i = 0; i < g->nsub; i++) {
		KUNIT_EXPECT_EQ_MSG(test, g->sub[i].p.block_idx, idx[i],
				    "subtask %u", i);
		KUNIT_EXPECT_EQ_MSG(test, g->sub[i].p.block_num,
				    i < 7 ? NBLK : 3U, "subtask %u", i);
		KUNIT_EXPECT_EQ(test, pto_task_run(&ctx->core, &g->sub[i]),
				(u32)PTO_TASK_OK);
	}
	for (b = 0; b < NBLK * LINE; b++)
		KUNIT_EXPECT_EQ_MSG(test, v[b], b % LINE ? -1 : (s32)(b / LINE),
				    "element %u", b);
	pto_graph_put(g);
	KUNIT_EXPECT_EQ(test, kref_read(&ctx->bo.ref), 1);
}

struct bcase {
	const char *name;
	u32 task;
	u32 base;
	u32 num;
	u32 field;
};

static const struct bcase bcases[] = {
	{ "last_block", 1, NBLK - 1, NBLK, PTO_GRAPH_FIELD_NONE },
	{ "base_past_num", 1, NBLK, NBLK, PTO_GRAPH_FIELD_BLOCK },
	{ "pair_past_num", 0, NBLK - 1, NBLK, PTO_GRAPH_FIELD_BLOCK },
	{ "mix_past_num", 2, NBLK, NBLK, PTO_GRAPH_FIELD_BLOCK },
	{ "base_wraps", 3, U32_MAX, NBLK, PTO_GRAPH_FIELD_BLOCK },
	{ "base_without_num", 4, 1, 0, PTO_GRAPH_FIELD_BLOCK },
	{ "num_over_max", 3, 4, PTO_GRAPH_MAX_BLOCKS + 1,
	  PTO_GRAPH_FIELD_BLOCK },
	/* In range, but the block's line is past its tensor. */
	{ "block_past_tensor", 3, 8, 9, PTO_GRAPH_FIELD_TENSOR },
};

static void bcase_desc(const struct bcase *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(bcases, bcases, bcase_desc);

static void graph_block_rows(struct kunit *test)
{
	const struct bcase *c = test->param_value;
	struct blk_ctx *ctx = test->priv;
	struct pto_graph_launch args;
	struct pto_graph *g;

	blk_graph(ctx);
	ctx->t[c->task].block_base = c->base;
	ctx->t[c->task].block_num = c->num;
	g = blk_build(test, PTO_GRAPH_VERSION, &args);
	KUNIT_EXPECT_EQ(test, args.bad_field, c->field);
	if (c->field == PTO_GRAPH_FIELD_NONE) {
		KUNIT_ASSERT_FALSE(test, IS_ERR(g));
		KUNIT_EXPECT_EQ(test, args.bad_task, PTO_GRAPH_TASK_NONE);
		pto_graph_put(g);
	} else {
		KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(g), -EINVAL);
		KUNIT_EXPECT_EQ(test, args.bad_task, c->task);
	}
	KUNIT_EXPECT_EQ(test, kref_read(&ctx->bo.ref), 1);
}

/* A version-1 image (tasks without a block range) is refused whole. */
static void graph_block_old_version(struct kunit *test)
{
	struct blk_ctx *ctx = test->priv;
	struct pto_graph_launch args;

	blk_graph(ctx);
	KUNIT_EXPECT_EQ(test, PTR_ERR(blk_build(test, 1, &args)), -EINVAL);
	KUNIT_EXPECT_EQ(test, args.bad_task, PTO_GRAPH_TASK_NONE);
	KUNIT_EXPECT_EQ(test, args.bad_field, (u32)PTO_GRAPH_FIELD_VERSION);
}

static struct kunit_case pto_graph_block_cases[] = {
	KUNIT_CASE(graph_block_spmd),
	KUNIT_CASE_PARAM(graph_block_rows, bcases_gen_params),
	KUNIT_CASE(graph_block_old_version),
	{}
};

static struct kunit_suite pto_graph_block_suite = {
	.name = "pto_graph_block",
	.init = blk_init,
	.exit = blk_exit,
	.test_cases = pto_graph_block_cases,
};

kunit_test_suite(pto_graph_block_suite);
