// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: the GM address-space allocator (pto_gm.c over genalloc).
 */
#include <kunit/test.h>
#include <linux/sizes.h>
#include "../pto_drv.h"

#define GM_TEST_SIZE (PTO_GM_RESERVED + SZ_1M)
#define GM_TEST_MAX_ALLOCS 2048

struct gm_test_ctx {
	struct pto_gm gm;
	unsigned int n;
	u64 addr[GM_TEST_MAX_ALLOCS];
	u64 size[GM_TEST_MAX_ALLOCS];
};

/* Allocate and remember, so the suite's exit frees whatever a test left. */
static u64 gm_alloc(struct kunit *test, u64 size, u64 align)
{
	struct gm_test_ctx *ctx = test->priv;
	u64 addr = pto_gm_alloc(&ctx->gm, size, align);

	if (addr) {
		KUNIT_ASSERT_LT(test, ctx->n, GM_TEST_MAX_ALLOCS);
		ctx->addr[ctx->n] = addr;
		ctx->size[ctx->n] = size;
		ctx->n++;
	}
	return addr;
}

static void gm_free(struct kunit *test, u64 addr)
{
	struct gm_test_ctx *ctx = test->priv;
	unsigned int i;

	for (i = 0; i < ctx->n; i++) {
		if (ctx->addr[i] == addr) {
			pto_gm_free(&ctx->gm, addr, ctx->size[i]);
			ctx->addr[i] = ctx->addr[--ctx->n];
			ctx->size[i] = ctx->size[ctx->n];
			return;
		}
	}
	KUNIT_FAIL(test, "freeing unknown address %llx", addr);
}

static int gm_test_init(struct kunit *test)
{
	struct gm_test_ctx *ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ctx);
	KUNIT_ASSERT_EQ(test, 0, pto_gm_init(&ctx->gm, GM_TEST_SIZE));
	test->priv = ctx;
	return 0;
}

static void gm_test_exit(struct kunit *test)
{
	struct gm_test_ctx *ctx = test->priv;

	while (ctx->n) {
		ctx->n--;
		pto_gm_free(&ctx->gm, ctx->addr[ctx->n], ctx->size[ctx->n]);
	}
	pto_gm_fini(&ctx->gm);
}

static void gm_init_rejects_tiny(struct kunit *test)
{
	struct pto_gm gm = { };

	KUNIT_EXPECT_EQ(test, -EINVAL, pto_gm_init(&gm, PTO_GM_RESERVED));
	KUNIT_EXPECT_EQ(test, -EINVAL, pto_gm_init(&gm, 0));
	KUNIT_EXPECT_NULL(test, gm.pool);
}

static void gm_never_returns_reserved_range(struct kunit *test)
{
	u64 a = gm_alloc(test, 1, 1024);

	KUNIT_EXPECT_NE(test, 0ULL, a);
	KUNIT_EXPECT_GE(test, a, PTO_GM_RESERVED);
	KUNIT_EXPECT_LT(test, a, (u64)GM_TEST_SIZE);
}

static void gm_minimum_granule_is_1024(struct kunit *test)
{
	u64 a = gm_alloc(test, 1, 1);
	u64 b = gm_alloc(test, 1, 1);

	KUNIT_ASSERT_NE(test, 0ULL, a);
	KUNIT_ASSERT_NE(test, 0ULL, b);
	KUNIT_EXPECT_EQ(test, 0ULL, a % 1024);
	KUNIT_EXPECT_EQ(test, 0ULL, b % 1024);
	/* One byte still takes a whole 1024-byte granule. */
	KUNIT_EXPECT_EQ(test, 1024ULL, b > a ? b - a : a - b);
}

static const u64 gm_aligns[] = { 1024, 4096, 8192, 65536, SZ_256K };

static void gm_align_desc(const u64 *align, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "align %llu", *align);
}
KUNIT_ARRAY_PARAM(gm_align, gm_aligns, gm_align_desc);

static void gm_alignment_honoured(struct kunit *test)
{
	const u64 *align = test->param_value;
	unsigned int i;

	/* Misalign the cursor first, then check several in a row. */
	KUNIT_ASSERT_NE(test, 0ULL, gm_alloc(test, 1024, 1024));
	for (i = 0; i < 3; i++) {
		u64 a = gm_alloc(test, 3000, *align);

		KUNIT_ASSERT_NE(test, 0ULL, a);
		KUNIT_EXPECT_EQ(test, 0ULL, a % *align);
	}
}

static void gm_bad_requests(struct kunit *test)
{
	struct gm_test_ctx *ctx = test->priv;

	KUNIT_EXPECT_EQ(test, 0ULL, pto_gm_alloc(&ctx->gm, 0, 1024));
	KUNIT_EXPECT_EQ(test, 0ULL, pto_gm_alloc(&ctx->gm, GM_TEST_SIZE + 1, 1024));
	KUNIT_EXPECT_EQ(test, 0ULL, pto_gm_alloc(&ctx->gm, 1024, 3000));
	KUNIT_EXPECT_EQ(test, 0ULL, pto_gm_alloc(&ctx->gm, 1024, 0));
	KUNIT_EXPECT_EQ(test, (u64)SZ_1M, pto_gm_avail(&ctx->gm));
}

static void gm_exhaustion(struct kunit *test)
{
	struct gm_test_ctx *ctx = test->priv;
	unsigned int n = 0;

	while (gm_alloc(test, SZ_4K, SZ_4K))
		n++;
	KUNIT_EXPECT_EQ(test, (unsigned int)(SZ_1M / SZ_4K), n);
	KUNIT_EXPECT_EQ(test, 0ULL, pto_gm_avail(&ctx->gm));
	KUNIT_EXPECT_EQ(test, 0ULL, pto_gm_alloc(&ctx->gm, 1, 1024));
}

static void gm_free_then_reuse(struct kunit *test)
{
	u64 a = gm_alloc(test, SZ_64K, SZ_4K);
	u64 b = gm_alloc(test, SZ_64K, SZ_4K);
	u64 c;

	KUNIT_ASSERT_NE(test, 0ULL, a);
	KUNIT_ASSERT_NE(test, 0ULL, b);
	gm_free(test, a);
	c = gm_alloc(test, SZ_64K, SZ_4K);
	KUNIT_EXPECT_EQ(test, a, c);
}

static void gm_avail_accounting(struct kunit *test)
{
	struct gm_test_ctx *ctx = test->priv;
	u64 a;

	KUNIT_EXPECT_EQ(test, (u64)SZ_1M, pto_gm_avail(&ctx->gm));
	a = gm_alloc(test, 5000, 1024);		/* rounds to 5 granules */
	KUNIT_ASSERT_NE(test, 0ULL, a);
	KUNIT_EXPECT_EQ(test, (u64)SZ_1M - 5 * 1024, pto_gm_avail(&ctx->gm));
	gm_free(test, a);
	KUNIT_EXPECT_EQ(test, (u64)SZ_1M, pto_gm_avail(&ctx->gm));
}

static void gm_fragmentation(struct kunit *test)
{
	struct gm_test_ctx *ctx = test->priv;
	u64 blk[SZ_1M / SZ_64K];
	unsigned int i, n = ARRAY_SIZE(blk);

	for (i = 0; i < n; i++) {
		blk[i] = gm_alloc(test, SZ_64K, SZ_4K);
		KUNIT_ASSERT_NE(test, 0ULL, blk[i]);
	}
	/* Free every other block: half the pool is free, in 64 KiB holes. */
	for (i = 0; i < n; i += 2)
		gm_free(test, blk[i]);
	KUNIT_EXPECT_EQ(test, (u64)SZ_1M / 2, pto_gm_avail(&ctx->gm));
	KUNIT_EXPECT_EQ(test, 0ULL, pto_gm_alloc(&ctx->gm, SZ_128K, SZ_4K));
	/* A hole still takes a block that fits it. */
	KUNIT_EXPECT_NE(test, 0ULL, gm_alloc(test, SZ_64K, SZ_4K));
	/* Freeing a neighbour coalesces two holes into 128 KiB. */
	gm_free(test, blk[3]);
	KUNIT_EXPECT_EQ(test, blk[2], gm_alloc(test, SZ_128K, SZ_4K));
}

static void gm_whole_pool_in_one(struct kunit *test)
{
	struct gm_test_ctx *ctx = test->priv;
	u64 a = gm_alloc(test, SZ_1M, SZ_4K);

	KUNIT_EXPECT_EQ(test, PTO_GM_RESERVED, a);
	KUNIT_EXPECT_EQ(test, 0ULL, pto_gm_alloc(&ctx->gm, 1, 1024));
	gm_free(test, a);
	KUNIT_EXPECT_EQ(test, (u64)SZ_1M, pto_gm_avail(&ctx->gm));
}

static void gm_distinct_ranges(struct kunit *test)
{
	u64 a[16];
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(a); i++) {
		a[i] = gm_alloc(test, 3 * 1024 + 1, 1024);
		KUNIT_ASSERT_NE(test, 0ULL, a[i]);
	}
	/* No two allocations overlap (each spans 4 granules). */
	for (i = 0; i < ARRAY_SIZE(a); i++)
		for (j = i + 1; j < ARRAY_SIZE(a); j++)
			KUNIT_EXPECT_TRUE(test, a[i] + 4096 <= a[j] ||
						a[j] + 4096 <= a[i]);
}

static struct kunit_case pto_gm_cases[] = {
	KUNIT_CASE(gm_init_rejects_tiny),
	KUNIT_CASE(gm_never_returns_reserved_range),
	KUNIT_CASE(gm_minimum_granule_is_1024),
	KUNIT_CASE_PARAM(gm_alignment_honoured, gm_align_gen_params),
	KUNIT_CASE(gm_bad_requests),
	KUNIT_CASE(gm_exhaustion),
	KUNIT_CASE(gm_free_then_reuse),
	KUNIT_CASE(gm_avail_accounting),
	KUNIT_CASE(gm_fragmentation),
	KUNIT_CASE(gm_whole_pool_in_one),
	KUNIT_CASE(gm_distinct_ranges),
	{}
};

static struct kunit_suite pto_gm_suite = {
	.name = "pto_gm",
	.init = gm_test_init,
	.exit = gm_test_exit,
	.test_cases = pto_gm_cases,
};
kunit_test_suite(pto_gm_suite);

/* The module's information, once for its three files (tests/Kbuild). */
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_DESCRIPTION("KUnit suites of the pto driver");
MODULE_LICENSE("GPL");
