// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: the emulated per-core line cache (pto_mock_lcache.c). A peer's
 * store is a WRITE_ONCE or an atomic on the memory under the cache; the
 * cases show what a core sees and what it writes back, and that the
 * kernels' ordinary loads and stores go through it only when given one.
 */
#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/slab.h>
#include "../pto_mock.h"
#include "../pto_mock_kernels.h"
#include "../pto_mock_lcache.h"
#include "pto_graph_fixture.h"

#define WPL (PTO_LC_LINE / 4)	/* u32 words per line */
#define LINES 4			/* lines i and i + LINES conflict */

static struct pto_lcache *lc_new(struct kunit *test, unsigned int lines)
{
	struct pto_lcache *lc = pto_lc_alloc(lines);

	KUNIT_ASSERT_NOT_NULL(test, lc);
	return lc;
}

/* A page: its lines are 64-byte aligned, and none is another's. */
static u32 *lc_mem(struct kunit *test)
{
	u32 *m = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, m);
	return m;
}

static void lc_expect_stats(struct kunit *test, struct pto_lcache *lc,
			    u64 hits, u64 misses, u64 writebacks)
{
	struct pto_lc_stats s;

	pto_lc_read_stats(lc, &s);
	KUNIT_EXPECT_EQ(test, s.hits, hits);
	KUNIT_EXPECT_EQ(test, s.misses, misses);
	KUNIT_EXPECT_EQ(test, s.writebacks, writebacks);
}

/* A hit returns the filled bytes however memory changed since. */
static void lc_stale_until_invalidate(struct kunit *test)
{
	struct pto_lcache *lc = lc_new(test, LINES);
	u32 *m = lc_mem(test);

	WRITE_ONCE(m[3], 1);
	KUNIT_EXPECT_EQ(test, pto_lc_ld32(lc, &m[3]), 1U);
	WRITE_ONCE(m[3], 2);		/* a peer's store */
	KUNIT_EXPECT_EQ(test, pto_lc_ld32(lc, &m[3]), 1U);
	pto_lc_flush_all(lc);		/* cleaning keeps the line */
	KUNIT_EXPECT_EQ(test, pto_lc_ld32(lc, &m[3]), 1U);
	pto_lc_inval_all(lc);
	KUNIT_EXPECT_EQ(test, pto_lc_ld32(lc, &m[3]), 2U);
	lc_expect_stats(test, lc, 2, 2, 0);
	pto_lc_free(lc);
}

/*
 * The hazard the cache exists to expose: a core's dirty line is written
 * back whole at a conflict eviction, so a word a peer changed by an
 * atomic under it (here the line's second u64) goes back to the value
 * the core filled. Control words are never accessed through the cache.
 */
static void lc_evict_writes_whole_line(struct kunit *test)
{
	struct pto_lcache *lc = lc_new(test, LINES);
	u32 *m = lc_mem(test);
	atomic64_t *word = (atomic64_t *)&m[2];

	atomic64_set(word, 5);
	pto_lc_st32(lc, &m[0], 7);	/* fills the line, word = 5 in it */
	atomic64_inc(word);		/* the peer: 6 in memory */
	KUNIT_EXPECT_EQ(test, READ_ONCE(m[0]), 0U);
	KUNIT_EXPECT_EQ(test, pto_lc_ld32(lc, &m[LINES * WPL]), 0U);
	KUNIT_EXPECT_EQ(test, READ_ONCE(m[0]), 7U);
	KUNIT_EXPECT_EQ(test, atomic64_read(word), 5LL);	/* lost */
	lc_expect_stats(test, lc, 0, 2, 1);
	pto_lc_free(lc);
}

/* pto_lc_flush() cleans and drops the lines of its range, no others. */
static void lc_flush_range_only(struct kunit *test)
{
	struct pto_lcache *lc = lc_new(test, LINES);
	u32 *m = lc_mem(test);
	unsigned int i;

	for (i = 0; i < LINES; i++)
		pto_lc_st32(lc, &m[i * WPL], 10 + i);
	pto_lc_flush(lc, &m[WPL], PTO_LC_LINE);
	KUNIT_EXPECT_EQ(test, READ_ONCE(m[0]), 0U);
	KUNIT_EXPECT_EQ(test, READ_ONCE(m[WPL]), 11U);
	KUNIT_EXPECT_EQ(test, READ_ONCE(m[2 * WPL]), 0U);
	/* Dropped: a peer's store to line 1 is seen. */
	WRITE_ONCE(m[WPL + 1], 99);
	KUNIT_EXPECT_EQ(test, pto_lc_ld32(lc, &m[WPL + 1]), 99U);
	/* Two bytes either side of a line boundary: lines 2 and 3. */
	pto_lc_flush(lc, (u8 *)&m[3 * WPL] - 2, 4);
	KUNIT_EXPECT_EQ(test, READ_ONCE(m[2 * WPL]), 12U);
	KUNIT_EXPECT_EQ(test, READ_ONCE(m[3 * WPL]), 13U);
	KUNIT_EXPECT_EQ(test, READ_ONCE(m[0]), 0U);
	/* A range longer than the cache: every line of it, line 0 too. */
	pto_lc_flush(lc, m, PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, READ_ONCE(m[0]), 10U);
	lc_expect_stats(test, lc, 0, LINES + 1, LINES);
	pto_lc_free(lc);
}

/* Without a cache every access is memory's, at once. */
static void lc_off_is_direct(struct kunit *test)
{
	u32 *m = lc_mem(test), buf[3] = { 1, 2, 3 };
	struct pto_graph g = {};

	pto_lc_st32(NULL, &m[0], 4);
	KUNIT_EXPECT_EQ(test, READ_ONCE(m[0]), 4U);
	WRITE_ONCE(m[0], 5);
	KUNIT_EXPECT_EQ(test, pto_lc_ld32(NULL, &m[0]), 5U);
	pto_lc_st64(NULL, (u64 *)&m[2], 6);
	KUNIT_EXPECT_EQ(test, pto_lc_ld64(NULL, (u64 *)&m[2]), 6ULL);
	pto_lc_scatter32(NULL, &m[8], 2, buf, 3);
	KUNIT_EXPECT_EQ(test, READ_ONCE(m[12]), 3U);
	pto_lc_gather32(NULL, buf, &m[8], 2, 3);
	KUNIT_EXPECT_EQ(test, buf[1], 2U);
	pto_lc_flush(NULL, m, 64);
	pto_lc_flush_all(NULL);
	pto_lc_inval_all(NULL);
	pto_lc_free(NULL);
	/* Off (0) and the parameter's refusals allocate nothing. */
	KUNIT_EXPECT_NULL(test, pto_lc_alloc(0));
	KUNIT_EXPECT_NULL(test, pto_lc_alloc(3));
	KUNIT_EXPECT_NULL(test, pto_lc_alloc(2 * PTO_LC_MAX_LINES));
	KUNIT_EXPECT_EQ(test, pto_graph_alloc_lc(&g, 0), 0);
	KUNIT_EXPECT_NULL(test, g.lc);
	KUNIT_EXPECT_EQ(test, g.lc_lines, 0U);
}

/* Hits, misses (loads and stores alike) and write-backs. */
static void lc_counters(struct kunit *test)
{
	struct pto_lcache *lc = lc_new(test, 1);
	u32 *m = lc_mem(test);

	pto_lc_ld32(lc, &m[0]);			/* miss */
	pto_lc_st32(lc, &m[1], 1);		/* hit, dirty */
	pto_lc_st64(lc, (u64 *)&m[2], 2);	/* hit */
	pto_lc_ld32(lc, &m[WPL]);		/* miss, write-back */
	pto_lc_ld32(lc, &m[WPL + 1]);		/* hit */
	pto_lc_inval_all(lc);			/* clean: nothing */
	lc_expect_stats(test, lc, 3, 2, 1);
	KUNIT_EXPECT_EQ(test, READ_ONCE(m[1]), 1U);
	KUNIT_EXPECT_EQ(test, READ_ONCE(*(u64 *)&m[2]), 2ULL);
	pto_lc_free(lc);
}

/* Caches for the graph's cores only, freed with the graph. */
static void lc_graph_alloc(struct kunit *test)
{
	struct graph_ctx *ctx = test->priv;
	struct pto_graph_launch args;
	struct pto_graph *g;
	struct tg *tg = kunit_kzalloc(test, sizeof(*tg), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, tg);
	pto_gt_diamond(tg);
	g = pto_gt_build(test, tg, 0, NULL, &args);
	KUNIT_ASSERT_FALSE(test, IS_ERR(g));
	g->clusters = BIT_ULL(1);
	KUNIT_ASSERT_EQ(test, pto_graph_alloc_lc(g, 16), 0);
	KUNIT_EXPECT_EQ(test, g->lc_lines, 16U);
	for (i = 0; i < ctx->pdev.cores; i++)
		KUNIT_EXPECT_EQ_MSG(test, !!g->lc[i],
				    i / PTO_CORES_PER_CLUSTER == 1,
				    "core %u", i);
	KUNIT_EXPECT_EQ(test, g->lc[PTO_CORES_PER_CLUSTER]->lines, 16U);
	pto_graph_put(g);
	pto_gt_expect_no_refs(test);
}

/*
 * The diamond's first two subtasks through two cores' caches: outputs
 * reach memory at the flush, and the second core sees the first's only
 * after it, the order pto_core_graph_step() keeps.
 */
static void lc_kernel_staged(struct kunit *test)
{
	struct graph_ctx *ctx = test->priv;
	struct pto_lcache *c0 = lc_new(test, 16), *c1 = lc_new(test, 16);
	struct pto_graph_launch args;
	u32 *a = ctx->bo[0].vaddr;
	struct pto_graph *g;
	struct tg *tg = kunit_kzalloc(test, sizeof(*tg), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, tg);
	pto_gt_diamond(tg);
	g = pto_gt_build(test, tg, 0, NULL, &args);
	KUNIT_ASSERT_FALSE(test, IS_ERR(g));
	memset(a, 0, BO_SIZE);
	/* FILL A[0:16] = 2 on c0; ADD_SCALAR A[16:32] = A[0:16] + 1 on c1. */
	KUNIT_ASSERT_EQ(test, pto_task_run(&ctx->core, &g->sub[0], c0),
			(u32)PTO_TASK_OK);
	KUNIT_EXPECT_EQ(test, READ_ONCE(a[0]), 0U);
	KUNIT_ASSERT_EQ(test, pto_task_run(&ctx->core, &g->sub[1], c1),
			(u32)PTO_TASK_OK);
	pto_lc_flush_all(c1);
	KUNIT_EXPECT_EQ(test, READ_ONCE(a[16]), 1U);	/* saw A = 0 */
	pto_lc_flush_all(c0);
	pto_lc_inval_all(c1);
	KUNIT_ASSERT_EQ(test, pto_task_run(&ctx->core, &g->sub[1], c1),
			(u32)PTO_TASK_OK);
	pto_lc_flush_all(c1);
	for (i = 0; i < 16; i++) {
		KUNIT_EXPECT_EQ(test, READ_ONCE(a[i]), 2U);
		KUNIT_EXPECT_EQ(test, READ_ONCE(a[16 + i]), 3U);
	}
	pto_lc_free(c0);
	pto_lc_free(c1);
	pto_graph_put(g);
}

/* A test task on plain memory: @func over i32 tensors the case fills. */
static void lc_ten(struct pto_mock_task *t, unsigned int slot, u32 *p,
		   u32 rows, u32 cols, u64 s0, u64 s1)
{
	struct pto_tensor_desc *d = &t->p.t[slot];

	d->dtype = PTO_DTYPE_I32;
	d->rank = rows ? 2 : 1;
	d->shape[0] = rows ? rows : cols;
	d->shape[1] = rows ? cols : 0;
	d->strides[0] = rows ? s0 : s1;
	d->strides[1] = rows ? s1 : 0;
	t->ptr[slot] = p;
}

static void lc_run_both(struct kunit *test, struct pto_mock_task *t,
			u32 *out, u32 n)
{
	struct graph_ctx *ctx = test->priv;
	struct pto_lcache *lc = lc_new(test, 8);
	u32 *want = kunit_kcalloc(test, n, sizeof(u32), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, want);
	KUNIT_ASSERT_EQ(test, pto_task_run(&ctx->core, t, NULL),
			(u32)PTO_TASK_OK);
	memcpy(want, out, n * sizeof(u32));
	memset(out, 0, n * sizeof(u32));
	KUNIT_ASSERT_EQ(test, pto_task_run(&ctx->core, t, lc),
			(u32)PTO_TASK_OK);
	pto_lc_flush_all(lc);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ_MSG(test, out[i], want[i], "element %u", i);
	pto_lc_free(lc);
}

/*
 * Staged in chunks through a small cache, each kernel computes what it
 * computes on memory: strided elementwise rows longer than the staging,
 * reduce_sum, a matmul whose B is staged in column blocks.
 */
static void lc_kernels_match_direct(struct kunit *test)
{
	const u32 k = PTO_MATMUL_MAX, cols = 3 * PTO_LC_STAGE / 2;
	u32 *a = kunit_kcalloc(test, 2 * cols, sizeof(u32), GFP_KERNEL);
	u32 *b = kunit_kcalloc(test, k * 20, sizeof(u32), GFP_KERNEL);
	u32 *o = kunit_kcalloc(test, 2 * cols, sizeof(u32), GFP_KERNEL);
	struct pto_mock_task t;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_ASSERT_NOT_NULL(test, o);
	for (i = 0; i < 2 * cols; i++)
		a[i] = i * 7 + 1;
	for (i = 0; i < k * 20; i++)
		b[i] = i % 13;

	memset(&t, 0, sizeof(t));
	t.p.func_id = PTO_FUNC_ADD;
	lc_ten(&t, PTO_ARG_A, a, 0, cols, 0, 2);
	lc_ten(&t, PTO_ARG_B, a + 1, 0, cols, 0, 2);
	lc_ten(&t, PTO_ARG_OUT, o, 0, cols, 0, 1);
	lc_run_both(test, &t, o, cols);

	memset(&t, 0, sizeof(t));
	t.p.func_id = PTO_FUNC_REDUCE_SUM;
	lc_ten(&t, PTO_ARG_A, a, 2, cols, cols, 1);
	lc_ten(&t, PTO_ARG_OUT, o, 0, 1, 0, 1);
	lc_run_both(test, &t, o, 1);

	memset(&t, 0, sizeof(t));
	t.p.func_id = PTO_FUNC_MATMUL;
	lc_ten(&t, PTO_ARG_A, a, 3, k, k, 1);
	lc_ten(&t, PTO_ARG_B, b, k, 20, 20, 1);
	lc_ten(&t, PTO_ARG_OUT, o, 3, 20, 20, 1);
	lc_run_both(test, &t, o, 3 * 20);
}

static struct kunit_case pto_lcache_cases[] = {
	KUNIT_CASE(lc_stale_until_invalidate),
	KUNIT_CASE(lc_evict_writes_whole_line),
	KUNIT_CASE(lc_flush_range_only),
	KUNIT_CASE(lc_off_is_direct),
	KUNIT_CASE(lc_counters),
	KUNIT_CASE(lc_graph_alloc),
	KUNIT_CASE(lc_kernel_staged),
	KUNIT_CASE(lc_kernels_match_direct),
	{}
};

static struct kunit_suite pto_lcache_suite = {
	.name = "pto_lcache",
	.init = pto_gt_init,
	.exit = pto_gt_exit,
	.test_cases = pto_lcache_cases,
};
kunit_test_suite(pto_lcache_suite);
