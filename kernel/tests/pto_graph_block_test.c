// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: a graph task's block range (block_base / block_num), which makes
 * it part of an SPMD task. pto_graph_block: the subtasks get block_idx
 * base + rank (a MIX task's three the base) and block_num the SPMD
 * task's blocks, and their kernels write each block's own line; every
 * bad range is refused naming its task and PTO_GRAPH_FIELD_BLOCK.
 */
#include <kunit/test.h>
#include <linux/slab.h>
#include "../pto_mock.h"
#include "pto_graph_fixture.h"

#define NBLK 5		/* blocks of the SPMD task */
#define LINE 16		/* i32 per block: its own 64-byte line */
#define NT 5		/* the SPMD task's four graph tasks and a plain one */

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
static struct tg *blk_graph(struct kunit *test)
{
	struct tg *g = kunit_kzalloc(test, sizeof(*g), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, g);
	g->n = NT;
	blk_task(&g->t[0], PTO_GRAPH_AIV0 | PTO_GRAPH_AIV1, 0, NBLK);
	blk_task(&g->t[1], PTO_GRAPH_AIV1, 2, NBLK);
	blk_task(&g->t[2], PTO_GRAPH_MASK_MIX, 3, NBLK);
	blk_task(&g->t[3], PTO_GRAPH_AIC, 4, NBLK);
	g->t[4].active_mask = PTO_GRAPH_MASK_MIX;
	pto_gt_seal(g);
	return g;
}

static void blk_version_1(struct pto_graph_hdr *h)
{
	h->version = 1;
}

static void graph_block_spmd(struct kunit *test)
{
	static const u32 idx[] = { 0, 1, 2, 3, 3, 3, 4, 0, 1, 2 };
	struct graph_ctx *ctx = test->priv;
	struct pto_graph_launch args;
	s32 *v = ctx->bo[0].vaddr;
	struct pto_graph *g;
	u32 i, b;

	memset(v, 0xff, BO_SIZE);
	g = pto_gt_build(test, blk_graph(test), 0, NULL, &args);
	KUNIT_ASSERT_FALSE(test, IS_ERR(g));
	KUNIT_EXPECT_EQ(test, args.bad_field, (u32)PTO_GRAPH_FIELD_NONE);
	KUNIT_ASSERT_EQ(test, g->nsub, (u32)ARRAY_SIZE(idx));
	for (i = 0; i < g->nsub; i++) {
		KUNIT_EXPECT_EQ_MSG(test, g->sub[i].p.block_idx, idx[i],
				    "subtask %u", i);
		KUNIT_EXPECT_EQ_MSG(test, g->sub[i].p.block_num,
				    i < 7 ? NBLK : 3U, "subtask %u", i);
		KUNIT_EXPECT_EQ(test, pto_task_run(&ctx->core, &g->sub[i], NULL),
				(u32)PTO_TASK_OK);
	}
	for (b = 0; b < NBLK * LINE; b++)
		KUNIT_EXPECT_EQ_MSG(test, v[b], b % LINE ? -1 : (s32)(b / LINE),
				    "element %u", b);
	pto_graph_put(g);
	pto_gt_expect_no_refs(test);
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
	struct tg *tg = blk_graph(test);
	struct pto_graph_launch args;
	struct pto_graph *g;

	tg->t[c->task].block_base = c->base;
	tg->t[c->task].block_num = c->num;
	g = pto_gt_build(test, tg, 0, NULL, &args);
	KUNIT_EXPECT_EQ(test, args.bad_field, c->field);
	if (c->field == PTO_GRAPH_FIELD_NONE) {
		KUNIT_ASSERT_FALSE(test, IS_ERR(g));
		KUNIT_EXPECT_EQ(test, args.bad_task, PTO_GRAPH_TASK_NONE);
		pto_graph_put(g);
	} else {
		KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(g), -EINVAL);
		KUNIT_EXPECT_EQ(test, args.bad_task, c->task);
	}
	pto_gt_expect_no_refs(test);
}

/* A version-1 image (tasks without a block range) is refused whole. */
static void graph_block_old_version(struct kunit *test)
{
	struct pto_graph_launch args;
	struct pto_graph *g;

	g = pto_gt_build(test, blk_graph(test), 0, blk_version_1, &args);
	KUNIT_EXPECT_EQ(test, PTR_ERR(g), -EINVAL);
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
	.init = pto_gt_init,
	.exit = pto_gt_exit,
	.test_cases = pto_graph_block_cases,
};

kunit_test_suite(pto_graph_block_suite);
