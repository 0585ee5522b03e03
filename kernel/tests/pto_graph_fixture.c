// SPDX-License-Identifier: GPL-2.0-only
/*
 * The graph suites' fixture (pto_graph_fixture.h): the device, file and
 * core of each case, and the test's graphs written task by task.
 */
#include <linux/maple_tree.h>
#include <linux/slab.h>
#include "../pto_mock.h"
#include "pto_graph_fixture.h"
#include "pto_test_file.h"

int pto_gt_init(struct kunit *test)
{
	static const u64 addrs[] = { BO_A, BO_B };
	struct graph_ctx *ctx;
	int ret;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	ctx->pdev.clusters = 2;
	ctx->pdev.cores = 2 * PTO_CORES_PER_CLUSTER;
	pto_test_file_init(test, &ctx->pdev, &ctx->pf, ctx->bo, addrs, 2,
			   BO_SIZE);
	ret = pto_core_test_init(&ctx->core, &ctx->pdev, 0);
	KUNIT_ASSERT_EQ(test, ret, 0);
	test->priv = ctx;
	return 0;
}

void pto_gt_exit(struct kunit *test)
{
	struct graph_ctx *ctx = test->priv;

	pto_core_test_fini(&ctx->core);
	mtree_destroy(&ctx->pf.ranges);
}

/* A 1-D int32 tensor of @n elements at @addr. */
void pto_gt_ten(struct pto_graph_tensor *a, u32 role, u64 addr, u32 n)
{
	memset(a, 0, sizeof(*a));
	a->role = role;
	a->t.addr = addr;
	a->t.dtype = PTO_DTYPE_I32;
	a->t.rank = 1;
	a->t.shape[0] = n;
	a->t.strides[0] = 1;
}

void pto_gt_edge(struct tg *g, u32 from, u32 to)
{
	g->e[g->ne++] = to;
	g->t[from].succ_count++;
	g->t[to].fanin++;
}

/* Successor ranges from the edges, which pto_gt_edge() appends in order. */
void pto_gt_seal(struct tg *g)
{
	u32 i, at = 0;

	for (i = 0; i < g->n; i++) {
		g->t[i].succ_start = at;
		at += g->t[i].succ_count;
	}
}

/*
 * The diamond f = (x + 1) * (x + 2), x = 2: task 0 (AIC) fills A[0:16]
 * with 2, tasks 1 (AIV0) and 2 (AIV1) add 1 and 2 into A[16:32] and
 * A[32:48], task 3 (MIX: the AIC multiplies, the AIVs run noop) writes
 * B[0:16] = 12.
 */
void pto_gt_diamond(struct tg *g)
{
	memset(g, 0, sizeof(*g));
	g->n = 4;
	g->t[0].active_mask = PTO_GRAPH_AIC;
	g->t[0].func_id[0] = PTO_FUNC_FILL;
	g->t[0].scalar[0] = 2;
	pto_gt_ten(&g->t[0].t[PTO_ARG_OUT], PTO_GRAPH_ROLE_OUT, BO_A, 16);
	g->t[1].active_mask = PTO_GRAPH_AIV0;
	g->t[1].func_id[1] = PTO_FUNC_ADD_SCALAR;
	g->t[1].scalar[0] = 1;
	pto_gt_ten(&g->t[1].t[PTO_ARG_A], PTO_GRAPH_ROLE_IN, BO_A, 16);
	pto_gt_ten(&g->t[1].t[PTO_ARG_OUT], PTO_GRAPH_ROLE_OUT, BO_A + 64, 16);
	g->t[2] = g->t[1];
	g->t[2].active_mask = PTO_GRAPH_AIV1;
	g->t[2].func_id[1] = 0;
	g->t[2].func_id[2] = PTO_FUNC_ADD_SCALAR;
	g->t[2].scalar[0] = 2;
	g->t[2].t[PTO_ARG_OUT].t.addr = BO_A + 128;
	g->t[3].active_mask = PTO_GRAPH_MASK_MIX;
	g->t[3].func_id[0] = PTO_FUNC_MUL;
	pto_gt_ten(&g->t[3].t[PTO_ARG_A], PTO_GRAPH_ROLE_IN, BO_A + 64, 16);
	pto_gt_ten(&g->t[3].t[PTO_ARG_B], PTO_GRAPH_ROLE_IN, BO_A + 128, 16);
	pto_gt_ten(&g->t[3].t[PTO_ARG_OUT], PTO_GRAPH_ROLE_OUT, BO_B, 16);
	pto_gt_edge(g, 0, 1);
	pto_gt_edge(g, 0, 2);
	pto_gt_edge(g, 1, 3);
	pto_gt_edge(g, 2, 3);
	pto_gt_seal(g);
}

size_t pto_gt_size(const struct tg *g)
{
	return round_up(sizeof(struct pto_graph_hdr) +
			g->n * sizeof(struct pto_graph_task) +
			g->ne * sizeof(u32), 8);
}

static void *tg_pack(struct kunit *test, const struct tg *g)
{
	struct pto_graph_hdr *h;
	void *img;

	img = kunit_kzalloc(test, pto_gt_size(g), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, img);
	h = img;
	h->magic = PTO_GRAPH_MAGIC;
	h->version = PTO_GRAPH_VERSION;
	h->task_count = g->n;
	h->edge_count = g->ne;
	h->size = pto_gt_size(g);
	h->task_size = sizeof(struct pto_graph_task);
	memcpy(h + 1, g->t, g->n * sizeof(g->t[0]));
	memcpy((void *)(h + 1) + g->n * sizeof(g->t[0]), g->e,
	       g->ne * sizeof(u32));
	return img;
}

struct pto_graph *pto_gt_build(struct kunit *test, struct tg *g, u64 cut,
			       void (*hdr)(struct pto_graph_hdr *),
			       struct pto_graph_launch *args)
{
	struct graph_ctx *ctx = test->priv;
	void *img = tg_pack(test, g);

	if (hdr)
		hdr(img);
	memset(args, 0, sizeof(*args));
	return pto_graph_build(&ctx->pf, img, pto_gt_size(g) - cut, args);
}

void pto_gt_expect_no_refs(struct kunit *test)
{
	struct graph_ctx *ctx = test->priv;

	KUNIT_EXPECT_EQ(test, kref_read(&ctx->bo[0].ref), 1);
	KUNIT_EXPECT_EQ(test, kref_read(&ctx->bo[1].ref), 1);
}
