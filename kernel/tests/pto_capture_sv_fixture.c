// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: the supervisor suite's fixture. The lane is bound and busy, as
 * a run holds it; its producer copies through a hook that counts the
 * bytes of each service step.
 */
#include <linux/err.h>
#include <linux/maple_tree.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include "pto_capture_sv_fixture.h"
#include "pto_test_file.h"

static void sv_copy_fn(void *priv, u64 off, const u8 *src, size_t n)
{
	struct sv_ctx *ctx = priv;

	ctx->step_bytes += n;
	memcpy(ctx->p->arena + off, src, n);
}

static bool sv_task_fn(void *priv, u64 task_id, struct pto_sv_task *out)
{
	struct sv_ctx *ctx = priv;

	if (task_id >= SV_TASKS)
		return false;
	*out = ctx->tk[task_id];
	out->t = &ctx->t[task_id];
	return true;
}

void sv_ctx_init(struct kunit *test)
{
	struct sv_ctx *ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, ctx);
	test->priv = ctx;
	ctx->src = kunit_kmalloc_array(test, SV_ELEMS, 4, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx->src);
	for (i = 0; i < SV_ELEMS; i++)
		ctx->src[i] = 0x20000000u + i;
	ctx->pdev.lanes = 1;
	ctx->pdev.clusters = SV_CLUSTERS;
	ctx->pdev.cores = SV_CORES;
	KUNIT_ASSERT_EQ(test, pto_lanes_init(&ctx->pdev), 0);
	pto_test_file_init(test, &ctx->pdev, &ctx->pf, NULL, NULL, 0, 0);
	ctx->lane = &ctx->pdev.lane[0];
	ctx->p = kvzalloc(sizeof(*ctx->p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx->p);
	ctx->mem = vzalloc(PTO_DUMP_ARENA_OFFSET + SV_ARENA);
	KUNIT_ASSERT_NOT_NULL(test, ctx->mem);
	/* Bound, and busy for the run: only the supervisor produces. */
	ctx->lane->prod = ctx->p;
	ctx->lane->owner = &ctx->pf;
	ctx->lane->state = PTO_LANE_BOUND;
	ctx->lane->busy = true;
	atomic64_set(&ctx->epochs, 0x00000003fffffff0LL);
}

void sv_ctx_fini(struct kunit *test)
{
	struct sv_ctx *ctx = test->priv;

	pto_cap_run_destroy(ctx->run);
	ctx->run = NULL;
	ctx->lane->busy = false;
	pto_lanes_fini(&ctx->pdev);	/* frees the producer */
	vfree(ctx->mem);
	mtree_destroy(&ctx->pf.ranges);
}
/* The producer at @level, and the run over @clusters with one lane. */
void sv_start(struct kunit *test, u32 level, u64 clusters)
{
	struct sv_ctx *ctx = test->priv;
	struct pto_cap_run_args a = {
		.clusters = SV_CLUSTERS, .graph_clusters = clusters,
		.nlanes = 1, .lanes = { ctx->lane }, .level = { level },
		.epochs = &ctx->epochs, .run_id = SV_RUN_ID,
		.ntasks = SV_TASKS,
		.src = { .task = sv_task_fn, .priv = ctx },
	};

	pto_producer_init(ctx->p, ctx->mem, SV_ARENA, level);
	ctx->p->copy = sv_copy_fn;
	ctx->p->copy_priv = ctx;
	ctx->run = pto_cap_run_create(&a);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ctx->run));
	ctx->sv = ctx->run->sv[0];
	KUNIT_ASSERT_EQ(test, ctx->run->run_epoch, 0x00000003fffffff1ULL);
}

/* Task @task on @mask; func_id 4, 5, 6 for the AIC and the AIVs. */
void sv_task(struct sv_ctx *ctx, u32 task, u32 mask, u32 nscalars)
{
	struct pto_graph_task *t = &ctx->t[task];
	u32 j;

	t->active_mask = mask;
	for (j = 0; j < PTO_CORES_PER_CLUSTER; j++)
		t->func_id[j] = mask & BIT(j) ? 4 + j : 0;
	t->scalar[0] = 77 + task;
	ctx->tk[task].nscalars = nscalars;
}

/* Tensor @slot of @task: [@rows][@cols] of strides [@rs, 1 or @cs]. */
void sv_tensor2(struct sv_ctx *ctx, u32 task, u32 slot, u32 role,
		u32 flags, u32 rows, u32 cols, u64 rs, u64 cs, u32 off)
{
	struct pto_graph_tensor *g = &ctx->t[task].t[slot];

	g->role = role;
	g->flags = flags;
	g->t.dtype = PTO_DTYPE_I32;
	g->t.rank = rows ? 2 : 1;
	g->t.shape[0] = rows ? rows : cols;
	g->t.strides[0] = rows ? rs : cs;
	g->t.shape[1] = rows ? cols : 0;
	g->t.strides[1] = rows ? cs : 0;
	ctx->tk[task].src[slot] = (const u8 *)(ctx->src + off);
}

void sv_tensor(struct sv_ctx *ctx, u32 task, u32 slot, u32 role,
	       u32 n, u32 off)
{
	sv_tensor2(ctx, task, slot, role, 0, 0, n, 0, 1, off);
}

/* Every core of @mask in cluster @cl joins @task in pending slot 0. */
void sv_join(struct kunit *test, u32 cl, u32 mask, u64 task)
{
	struct sv_ctx *ctx = test->priv;
	u32 j;

	for (j = 0; j < PTO_CORES_PER_CLUSTER; j++) {
		u32 core = cl * PTO_CORES_PER_CLUSTER + j;
		struct pto_capture_part *p = &ctx->part[core];
		enum pto_cs_step r;

		if (!(mask & BIT(j)))
			continue;
		KUNIT_ASSERT_EQ(test, pto_cs_part_init(p, &ctx->run->area,
				pto_cap_slot_index(cl, 0), ctx->run->run_epoch,
				task, core, BIT(j), mask,
				&ctx->run->seq[core]), 0);
		r = pto_cs_claim(p);
		if (r == PTO_CS_CLAIMED) {
			pto_cs_initialize(p);
			pto_cs_ready(p);
			r = pto_cs_claim(p);
		}
		KUNIT_ASSERT_EQ(test, r, PTO_CS_JOINED);
	}
}

/* The cores of @mask arrive at @ph; the last publishes. Its core. */
u32 sv_arrive(struct kunit *test, u32 cl, u32 mask, u32 ph)
{
	struct sv_ctx *ctx = test->priv;
	u32 j, pub = U32_MAX;

	for (j = 0; j < PTO_CORES_PER_CLUSTER; j++) {
		u32 core = cl * PTO_CORES_PER_CLUSTER + j;

		if (!(mask & BIT(j)))
			continue;
		if (pto_cs_arrive(&ctx->part[core], ph) == PTO_CS_PUBLISHER) {
			pub = core;
			pto_cs_request(&ctx->part[core], 0, 0);
		}
	}
	KUNIT_ASSERT_NE(test, pub, U32_MAX);
	return pub;
}

/* Core @core polls; a publisher answered with progress republishes. */
enum pto_cs_step sv_poll(struct kunit *test, u32 core,
			 struct pto_capture_ack *echo)
{
	struct sv_ctx *ctx = test->priv;
	struct pto_capture_ack e = {};
	enum pto_cs_step r = pto_cs_poll(&ctx->part[core], &e);

	if (r == PTO_CS_PROGRESS)
		pto_cs_request(&ctx->part[core], e.arg_index, e.arg_cursor);
	if (echo)
		*echo = e;
	return r;
}

/* One service step; no step copies more than one chunk. */
bool sv_step(struct kunit *test)
{
	struct sv_ctx *ctx = test->priv;
	bool work;

	ctx->step_bytes = 0;
	work = pto_sv_step(ctx->sv);
	KUNIT_EXPECT_LE(test, ctx->step_bytes, (u64)PTO_SV_CHUNK);
	return work;
}

/* Steps until each publisher in @pubs polls SEALED; the steps taken. */
int sv_until_sealed(struct kunit *test, const u32 *pubs, int n)
{
	bool sealed[SV_CLUSTERS] = {};
	int steps, k, left = n;

	for (steps = 1; steps <= SV_MAX_STEPS && left; steps++) {
		sv_step(test);
		for (k = 0; k < n; k++) {
			if (sealed[k])
				continue;
			if (sv_poll(test, pubs[k], NULL) == PTO_CS_SEALED) {
				sealed[k] = true;
				left--;
			}
		}
	}
	KUNIT_EXPECT_EQ(test, left, 0);
	return steps - 1;
}

/* Every core of @mask leaves @ph; for AFTER one of them stores SETTLED. */
void sv_release(struct kunit *test, u32 cl, u32 mask, u32 ph)
{
	struct sv_ctx *ctx = test->priv;
	int pass, complete = 0;
	u32 j;

	for (pass = 0; pass < 2; pass++)
		for (j = 0; j < PTO_CORES_PER_CLUSTER; j++) {
			u32 core = cl * PTO_CORES_PER_CLUSTER + j;
			enum pto_cs_step r;

			if (!(mask & BIT(j)))
				continue;
			if (pass == 0)
				KUNIT_EXPECT_EQ(test, pto_cs_poll(&ctx->part[core],
							NULL), PTO_CS_SEALED);
			r = pto_cs_release(&ctx->part[core]);
			complete += r == PTO_CS_COMPLETE;
		}
	KUNIT_EXPECT_EQ(test, complete, ph == PTO_CS_AFTER ? 1 : 0);
}

const struct pto_dump_record *sv_rec(struct sv_ctx *ctx, u32 i)
{
	return &ctx->p->meta[ctx->p->cur * PTO_DUMP_RECORDS + i];
}

/* Record @i's payload holds @n elements of the source from @off. */
void sv_expect_bytes(struct kunit *test, u32 i, u32 off, u32 n)
{
	struct sv_ctx *ctx = test->priv;
	const struct pto_dump_record *r = sv_rec(ctx, i);

	KUNIT_EXPECT_EQ(test, r->payload_size, n * 4);
	KUNIT_EXPECT_EQ(test, memcmp(ctx->p->arena + r->data % SV_ARENA,
				     ctx->src + off, n * 4), 0);
}

/* A committed payload of @n elements straight through the producer. */
void sv_fill(struct kunit *test, u32 n)
{
	struct sv_ctx *ctx = test->priv;
	struct pto_dump_arg a = {
		.rec = { .task_id = 99, .kind = PTO_DUMP_KIND_TENSOR,
			 .dtype = PTO_DTYPE_I32, .rank = 1, .shape = { n },
			 .strides = { 1 } },
		.src = (const u8 *)ctx->src, .esize = 4, .payload = true,
	};
	enum pto_begin_why why;

	KUNIT_ASSERT_EQ(test, pto_producer_try_begin(ctx->p, &a, &why),
			PTO_BEGIN_ACCEPTED);
	while (pto_producer_copy_chunk(ctx->p, SZ_64K))
		;
	pto_producer_commit(ctx->p);
}

void sv_expect_balanced(struct kunit *test)
{
	struct sv_ctx *ctx = test->priv;
	const struct pto_dump_acct *a = &ctx->p->st->acct;

	KUNIT_EXPECT_EQ(test, a->total, a->collected + a->dropped);
}

/* A single-core (AIC) task of cluster @cl: its one core publishes. */
u32 sv_solo(struct kunit *test, u32 cl, u64 task, u32 ph)
{
	if (ph == PTO_CS_BEFORE)
		sv_join(test, cl, PTO_GRAPH_AIC, task);
	return sv_arrive(test, cl, PTO_GRAPH_AIC, ph);
}
