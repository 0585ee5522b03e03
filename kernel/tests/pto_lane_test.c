// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: the resumable dump-lane producer (pto_producer.c) on a lane's
 * memory of its own: the one open reservation, abandon, publication,
 * chunked and strided copies through a recording copy, acknowledgements.
 * And the lanes' binding (pto_lane.c) across a file's release: a lane
 * quarantined only for its unclosed terminal goes to the next binder, one
 * whose producer may still run does not.
 */
#include <kunit/test.h>
#include <linux/maple_tree.h>
#include <linux/sizes.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include "../pto_bo.h"
#include "../pto_drv.h"
#include "../pto_lane.h"
#include "../pto_producer.h"
#include "pto_test_file.h"

#define LT_ARENA SZ_64K
#define LT_SRC_ELEMS 32768	/* i32 elements of the source buffer */
#define LT_MAX_COPIES 40000

struct lt_copy {
	u64 off;
	const u8 *src;
	size_t n;
};

struct lt_ctx {
	struct pto_producer *p;
	void *mem;
	u32 *src;
	bool record;
	unsigned int ncopies;
	struct lt_copy *copies;
	unsigned int waits;
	int wait_ret;
};

/* The recording harness: every arena write, then the write itself. */
static void lt_copy_fn(void *priv, u64 off, const u8 *src, size_t n)
{
	struct lt_ctx *ctx = priv;

	if (ctx->record && ctx->ncopies < LT_MAX_COPIES)
		ctx->copies[ctx->ncopies++] = (struct lt_copy){ off, src, n };
	memcpy(ctx->p->arena + off, src, n);
}

/* The fixture's producer bound afresh at @level over its memory. */
static void lt_bind(struct lt_ctx *ctx, u32 level)
{
	pto_producer_init(ctx->p, ctx->mem, LT_ARENA, level);
	ctx->p->copy = lt_copy_fn;
	ctx->p->copy_priv = ctx;
}

static int lt_init(struct kunit *test)
{
	struct lt_ctx *ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, ctx);
	test->priv = ctx;
	ctx->p = kunit_kzalloc(test, sizeof(*ctx->p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx->p);
	ctx->mem = vzalloc(PTO_DUMP_ARENA_OFFSET + LT_ARENA);
	KUNIT_ASSERT_NOT_NULL(test, ctx->mem);
	ctx->src = kunit_kmalloc_array(test, LT_SRC_ELEMS, 4, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx->src);
	ctx->copies = kunit_kmalloc_array(test, LT_MAX_COPIES,
					  sizeof(*ctx->copies), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx->copies);
	for (i = 0; i < LT_SRC_ELEMS; i++)
		ctx->src[i] = 0x10000000u + i;
	lt_bind(ctx, PTO_DUMP_FULL);
	return 0;
}

static void lt_exit(struct kunit *test)
{
	struct lt_ctx *ctx = test->priv;

	vfree(ctx->mem);
}

/* An i32 tensor of the source buffer: rank-1 contiguous of @n elements. */
static struct pto_dump_arg lt_tensor(struct lt_ctx *ctx, u64 task, u32 n)
{
	struct pto_dump_arg a = {
		.rec = {
			.task_id = task,
			.kind = PTO_DUMP_KIND_TENSOR,
			.dtype = PTO_DTYPE_I32,
			.rank = 1,
			.shape = { n },
			.strides = { 1 },
		},
		.src = (const u8 *)ctx->src,
		.esize = 4,
		.payload = true,
	};
	return a;
}

/*
 * A rank-2 view [@rows][@cols] of strides [@rs, @cs] from element @start
 * of the source buffer, and in @want (@rows * @cols elements, the test's)
 * its gather computed here.
 */
static struct pto_dump_arg lt_view2(struct kunit *test, u64 task, u32 rows,
				    u32 cols, u64 rs, u64 cs, u64 start,
				    u32 **want)
{
	struct lt_ctx *ctx = test->priv;
	struct pto_dump_arg a = lt_tensor(ctx, task, 0);
	u32 i, j, n = 0;

	a.rec.rank = 2;
	a.rec.shape[0] = rows;
	a.rec.shape[1] = cols;
	a.rec.strides[0] = rs;
	a.rec.strides[1] = cs;
	a.rec.start_offset = start;
	*want = kunit_kmalloc_array(test, rows * cols, 4, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, *want);
	for (i = 0; i < rows; i++)
		for (j = 0; j < cols; j++)
			(*want)[n++] = ctx->src[start + i * rs + j * cs];
	return a;
}

static struct pto_dump_arg lt_scalar(u64 task, u64 value)
{
	struct pto_dump_arg a = {
		.rec = {
			.task_id = task,
			.kind = PTO_DUMP_KIND_SCALAR,
			.dtype = PTO_DTYPE_I32,
			.data = value,
		},
	};
	return a;
}

static void lt_begin_ok(struct kunit *test, struct pto_producer *p,
			const struct pto_dump_arg *a)
{
	enum pto_begin_why why;

	KUNIT_ASSERT_EQ(test, PTO_BEGIN_ACCEPTED,
			pto_producer_try_begin(p, a, &why));
}

/* try_begin, copy whole, commit. */
static void lt_capture(struct kunit *test, struct pto_producer *p,
		       const struct pto_dump_arg *a)
{
	lt_begin_ok(test, p, a);
	while (pto_producer_copy_chunk(p, SZ_4K))
		;
	pto_producer_commit(p);
}

static void lt_expect_balanced(struct kunit *test, struct pto_producer *p)
{
	KUNIT_EXPECT_EQ(test, p->st->acct.total, p->st->acct.collected + p->st->acct.dropped);
}

/*
 * A holds the reservation mid-copy; B's request, and one the arena cannot
 * hold beside A, are WouldBlock with nothing accounted, A's reservation
 * and the state block unchanged, nothing publishes while A is open (close
 * is refused), and A's abandon restores the write position
 * and count exactly. B then opens at the same record and position; its
 * earlier WouldBlocks added no refused record.
 */
static void lane_reservation_ab(struct kunit *test)
{
	struct lt_ctx *ctx = test->priv;
	struct pto_producer *p = ctx->p;
	struct pto_dump_arg a = lt_tensor(ctx, 1, 8192);
	struct pto_dump_arg b = lt_tensor(ctx, 2, 1024);
	struct pto_dump_arg big = lt_tensor(ctx, 5, LT_ARENA / 2 / 4);
	struct pto_dump_state before, during;
	enum pto_begin_why why;
	u64 head0;
	u32 count0;
	int i;

	lt_capture(test, p, &b);	/* something committed before A */
	head0 = p->head;
	count0 = p->count;
	memcpy(&before, p->st, sizeof(before));

	lt_begin_ok(test, p, &a);
	KUNIT_EXPECT_EQ(test, p->res.index, count0);
	KUNIT_EXPECT_EQ(test, pto_producer_copy_chunk(p, 1000), 1000ULL);
	memcpy(&during, p->st, sizeof(during));
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_EQ(test, PTO_BEGIN_WOULDBLOCK,
				pto_producer_try_begin(p, &b, &why));
		KUNIT_EXPECT_EQ(test, why, PTO_WHY_OPEN);
		/* Nor one the arena has no room for: nothing publishes. */
		KUNIT_EXPECT_EQ(test, PTO_BEGIN_WOULDBLOCK,
				pto_producer_try_begin(p, &big, &why));
		KUNIT_EXPECT_EQ(test, why, PTO_WHY_OPEN);
	}
	KUNIT_EXPECT_EQ(test, p->res.arg.rec.task_id, 1ULL);
	KUNIT_EXPECT_EQ(test, p->res.written, 1000ULL);
	KUNIT_EXPECT_EQ(test, -EBUSY, pto_producer_close(p));
	KUNIT_EXPECT_EQ(test, 0, memcmp(&during, p->st, sizeof(during)));
	KUNIT_EXPECT_EQ(test, 0, memcmp(&before, p->st, sizeof(before)));
	KUNIT_EXPECT_EQ(test, p->count + p->open, count0 + 1);	/* reserved */

	pto_producer_abandon(p);
	KUNIT_EXPECT_FALSE(test, p->open);
	KUNIT_EXPECT_EQ(test, p->head, head0);
	KUNIT_EXPECT_EQ(test, p->count, count0);
	KUNIT_EXPECT_EQ(test, p->st->arena_write_pos, before.arena_write_pos);
	KUNIT_EXPECT_EQ(test, p->st->acct.dropped, before.acct.dropped + 1);
	KUNIT_EXPECT_EQ(test, p->st->acct.collected, before.acct.collected);
	KUNIT_EXPECT_EQ(test, p->st->acct.ready_tail, before.acct.ready_tail);

	lt_begin_ok(test, p, &b);
	KUNIT_EXPECT_EQ(test, p->res.index, count0);
	KUNIT_EXPECT_EQ(test, p->res.pos, head0);
	while (pto_producer_copy_chunk(p, 512))
		;
	pto_producer_commit(p);
	KUNIT_EXPECT_EQ(test, p->count, count0 + 1);
	KUNIT_EXPECT_EQ(test, p->st->acct.dropped, 1ULL);
	KUNIT_EXPECT_EQ(test, p->st->acct.collected, 2ULL);
	lt_expect_balanced(test, p);
}

/*
 * Record 255 of 256 abandoned: the buffer publishes with 255 records and
 * the next record opens at 0 of another buffer.
 */
static void lane_abandon_last_record(struct kunit *test)
{
	struct lt_ctx *ctx = test->priv;
	struct pto_producer *p = ctx->p;
	struct pto_dump_arg s, t = lt_tensor(ctx, 9, 256);
	u32 first, i;

	for (i = 0; i < PTO_DUMP_RECORDS - 1; i++) {
		s = lt_scalar(i, i * 3);
		lt_capture(test, p, &s);
	}
	first = p->cur;
	KUNIT_ASSERT_EQ(test, p->count, (u32)PTO_DUMP_RECORDS - 1);
	KUNIT_EXPECT_EQ(test, p->st->acct.ready_tail, 0ULL);

	lt_begin_ok(test, p, &t);
	KUNIT_EXPECT_EQ(test, p->res.index, (u32)PTO_DUMP_RECORDS - 1);
	pto_producer_copy_chunk(p, 100);
	KUNIT_EXPECT_EQ(test, p->st->acct.ready_tail, 0ULL);	/* not while open */
	pto_producer_abandon(p);

	KUNIT_EXPECT_EQ(test, p->st->acct.ready_tail, 1ULL);
	KUNIT_EXPECT_EQ(test, p->st->ready[0], first);
	KUNIT_EXPECT_EQ(test, p->st->ready_records[0],
			(u32)PTO_DUMP_RECORDS - 1);
	KUNIT_EXPECT_EQ(test, p->meta[first * PTO_DUMP_RECORDS + 254].data,
			254ULL * 3);
	KUNIT_EXPECT_EQ(test, p->head, 0ULL);

	s = lt_scalar(1000, 7);
	lt_begin_ok(test, p, &s);
	KUNIT_EXPECT_EQ(test, p->res.index, 0U);
	KUNIT_EXPECT_NE(test, p->res.buf, first);
	pto_producer_commit(p);
	KUNIT_EXPECT_EQ(test, p->st->acct.dropped, 1ULL);
	lt_expect_balanced(test, p);
}

/*
 * Copy @a in chunks of @max through the recording harness: no chunk
 * exceeds @max, each resumes where the last stopped (the arena offsets are
 * consecutive), and the arena ends up holding @want.
 */
static void lt_chunked(struct kunit *test, const struct pto_dump_arg *a,
		       u64 max, const u32 *want, u64 bytes, size_t max_run)
{
	struct lt_ctx *ctx = test->priv;
	struct pto_producer *p = ctx->p;
	u64 got, next = p->head % p->arena_size, total = 0;
	unsigned int i, chunks = 0;

	lt_begin_ok(test, p, a);
	KUNIT_ASSERT_EQ(test, p->res.copy_bytes, bytes);
	ctx->record = true;
	for (;;) {
		unsigned int from = ctx->ncopies;

		got = pto_producer_copy_chunk(p, max);
		if (!got)
			break;
		chunks++;
		KUNIT_EXPECT_LE(test, got, max);
		for (i = from; i < ctx->ncopies; i++) {
			KUNIT_EXPECT_EQ(test, ctx->copies[i].off, next);
			KUNIT_EXPECT_LE(test, ctx->copies[i].n, max_run);
			next = (ctx->copies[i].off + ctx->copies[i].n) %
			       p->arena_size;
			total += ctx->copies[i].n;
		}
		KUNIT_EXPECT_EQ(test, total, p->res.written);
	}
	ctx->record = false;
	KUNIT_EXPECT_EQ(test, total, bytes);
	KUNIT_EXPECT_EQ(test, (u64)chunks, DIV_ROUND_UP(bytes, max));
	KUNIT_EXPECT_EQ(test, 0, memcmp(p->arena + p->res.pos % p->arena_size,
					want, bytes));
	pto_producer_commit(p);
}

/*
 * An argument at the clamp (arena_size / 2, whole) and one beyond it
 * (clamped, truncated), copied in chunks of 1000 bytes: not a multiple of
 * the element size, so chunks end inside elements and resume there.
 */
static void lane_chunks_at_clamp(struct kunit *test)
{
	struct lt_ctx *ctx = test->priv;
	struct pto_producer *p = ctx->p;
	struct pto_dump_arg at = lt_tensor(ctx, 1, LT_ARENA / 2 / 4);
	struct pto_dump_arg over = lt_tensor(ctx, 2, LT_ARENA / 4);
	struct pto_dump_record *rec;

	KUNIT_ASSERT_EQ(test, pto_producer_clamp(p), (u64)LT_ARENA / 2);
	lt_chunked(test, &at, 1000, ctx->src, LT_ARENA / 2, 1000);
	rec = &p->meta[p->cur * PTO_DUMP_RECORDS];
	KUNIT_EXPECT_EQ(test, rec->payload_size, (u32)LT_ARENA / 2);
	KUNIT_EXPECT_FALSE(test, rec->flags & PTO_DUMP_REC_TRUNCATED);
	KUNIT_EXPECT_EQ(test, p->st->acct.truncated, 0ULL);

	/* The arena is half used: the consumer frees it first. */
	pto_producer_publish(p);
	KUNIT_ASSERT_EQ(test, 0, pto_producer_ack(p, 1, 1));
	lt_chunked(test, &over, 1000, ctx->src, LT_ARENA / 2, 1000);
	rec = &p->meta[p->cur * PTO_DUMP_RECORDS];
	KUNIT_EXPECT_TRUE(test, rec->flags & PTO_DUMP_REC_TRUNCATED);
	KUNIT_EXPECT_EQ(test, rec->payload_size, (u32)LT_ARENA / 2);
	KUNIT_EXPECT_EQ(test, p->st->acct.truncated, 1ULL);
	lt_expect_balanced(test, p);
}

/*
 * A strided view with a non-unit innermost stride ([24][40] of strides
 * [131, 3] from element 5), gathered element by element in chunks of 26
 * bytes, against the gather computed here.
 */
static void lane_chunks_strided(struct kunit *test)
{
	u32 *want;
	struct pto_dump_arg a = lt_view2(test, 3, 24, 40, 131, 3, 5, &want);

	lt_chunked(test, &a, 26, want, 24 * 40 * 4, 4);
}

/*
 * Unit innermost stride with a row gap: runs are whole rows (or what the
 * chunk leaves of one), never crossing into the gap.
 */
static void lane_chunks_rows(struct kunit *test)
{
	u32 *want;
	struct pto_dump_arg a = lt_view2(test, 4, 10, 50, 64, 1, 0, &want);

	lt_chunked(test, &a, 300, want, 2000, 200);
}

/*
 * An acknowledgement beyond what was published, or going backwards, is
 * -EINVAL and changes nothing; a good one frees buffers and arena, and a
 * payload then wraps at the arena's end intact.
 */
static void lane_ack_validation(struct kunit *test)
{
	struct lt_ctx *ctx = test->priv;
	struct pto_producer *p = ctx->p;
	struct pto_dump_arg a = lt_tensor(ctx, 1, 3000);	/* 12000 B */
	struct pto_dump_state snap;
	struct pto_dump_record *rec;
	u32 i;

	for (i = 0; i < 3; i++)
		lt_capture(test, p, &a);
	KUNIT_EXPECT_EQ(test, p->st->acct.published_payloads, 0ULL);
	memcpy(&snap, p->st, sizeof(snap));
	KUNIT_EXPECT_EQ(test, -EINVAL, pto_producer_ack(p, 1, 0));
	KUNIT_EXPECT_EQ(test, -EINVAL, pto_producer_ack(p, 0, 1));
	KUNIT_EXPECT_EQ(test, 0, memcmp(&snap, p->st, sizeof(snap)));

	pto_producer_publish(p);
	KUNIT_EXPECT_EQ(test, p->st->acct.published_payloads, 3ULL);
	KUNIT_EXPECT_EQ(test, p->st->acct.ready_tail, 1ULL);
	memcpy(&snap, p->st, sizeof(snap));
	KUNIT_EXPECT_EQ(test, -EINVAL, pto_producer_ack(p, 4, 1));
	KUNIT_EXPECT_EQ(test, -EINVAL, pto_producer_ack(p, 3, 2));
	KUNIT_EXPECT_EQ(test, 0, memcmp(&snap, p->st, sizeof(snap)));
	KUNIT_EXPECT_EQ(test, 0, pto_producer_ack(p, 2, 0));
	KUNIT_EXPECT_EQ(test, p->tail, 24000ULL);
	KUNIT_EXPECT_EQ(test, -EINVAL, pto_producer_ack(p, 1, 0));
	KUNIT_EXPECT_EQ(test, 0, pto_producer_ack(p, 3, 1));
	KUNIT_EXPECT_EQ(test, 0, pto_producer_ack(p, 3, 1));	/* repeated */
	KUNIT_EXPECT_EQ(test, p->st->free_count, (u32)PTO_DUMP_META_BUFFERS);

	/* 36000 + 12000 + 12000 = 60000 bytes; the sixth wraps at 64 KiB. */
	for (i = 0; i < 3; i++)
		lt_capture(test, p, &a);
	rec = &p->meta[p->cur * PTO_DUMP_RECORDS + 2];
	KUNIT_EXPECT_EQ(test, rec->data, 60000ULL);
	KUNIT_EXPECT_EQ(test, 0, memcmp(p->arena + 60000, ctx->src,
					LT_ARENA - 60000));
	KUNIT_EXPECT_EQ(test, 0, memcmp(p->arena,
					(u8 *)ctx->src + LT_ARENA - 60000,
					12000 - (LT_ARENA - 60000)));
	lt_expect_balanced(test, p);
}

/*
 * The arena full: WouldBlock with nothing accounted (the waiting buffer is
 * published so the consumer can free it), then accepted once acknowledged;
 * total == collected + dropped throughout.
 */
static void lane_arena_backpressure(struct kunit *test)
{
	struct lt_ctx *ctx = test->priv;
	struct pto_producer *p = ctx->p;
	struct pto_dump_arg a = lt_tensor(ctx, 1, 6000);	/* 24000 B */
	enum pto_begin_why why;
	u64 total;
	int i;

	lt_capture(test, p, &a);
	lt_capture(test, p, &a);
	total = p->st->acct.total;
	for (i = 0; i < 5; i++) {
		KUNIT_EXPECT_EQ(test, PTO_BEGIN_WOULDBLOCK,
				pto_producer_try_begin(p, &a, &why));
		KUNIT_EXPECT_EQ(test, why, PTO_WHY_ARENA);
	}
	KUNIT_EXPECT_EQ(test, p->st->acct.total, total);
	KUNIT_EXPECT_EQ(test, p->st->acct.dropped, 0ULL);
	KUNIT_EXPECT_EQ(test, p->st->acct.ready_tail, 1ULL);
	KUNIT_EXPECT_EQ(test, p->st->acct.published_payloads, 2ULL);
	KUNIT_ASSERT_EQ(test, 0, pto_producer_ack(p, 1, 1));
	lt_capture(test, p, &a);
	KUNIT_EXPECT_EQ(test, p->st->acct.collected, 3ULL);
	KUNIT_EXPECT_EQ(test, p->st->acct.dropped, 0ULL);
	lt_expect_balanced(test, p);
}

/* Permanent refusals: one refused record each, nothing reserved. */
static void lane_refusals(struct kunit *test)
{
	struct lt_ctx *ctx = test->priv;
	struct pto_producer *p = ctx->p;
	struct pto_dump_arg a = lt_tensor(ctx, 1, 16);
	enum pto_begin_why why;

	a.rec.shape[1] = 4;	/* rank 1: ignored */
	a.rec.rank = 0;
	KUNIT_EXPECT_EQ(test, PTO_BEGIN_REFUSED,
			pto_producer_try_begin(p, &a, &why));
	KUNIT_EXPECT_EQ(test, why, PTO_WHY_INVALID);
	KUNIT_EXPECT_FALSE(test, p->open);
	KUNIT_EXPECT_EQ(test, p->st->acct.dropped, 1ULL);

	lt_bind(ctx, PTO_DUMP_OFF);
	a.rec.rank = 1;
	KUNIT_EXPECT_EQ(test, PTO_BEGIN_REFUSED,
			pto_producer_try_begin(p, &a, &why));
	KUNIT_EXPECT_EQ(test, why, PTO_WHY_OFF);
	KUNIT_EXPECT_EQ(test, p->st->acct.dropped, 1ULL);
	KUNIT_EXPECT_EQ(test, p->head, 0ULL);

	lt_bind(ctx, PTO_DUMP_FULL);
	KUNIT_EXPECT_EQ(test, 0, pto_producer_close(p));
	KUNIT_EXPECT_EQ(test, PTO_BEGIN_REFUSED,
			pto_producer_try_begin(p, &a, &why));
	KUNIT_EXPECT_EQ(test, why, PTO_WHY_STOPPED);
	KUNIT_EXPECT_EQ(test, p->st->state, (u32)PTO_LANE_CLOSED);
	lt_expect_balanced(test, p);
}

static void lt_lock(void *priv)
{
}

/* The consumer catches up on the first wait, or the caller gives up. */
static int lt_wait(void *priv, enum pto_begin_why why)
{
	struct lt_ctx *ctx = priv;
	struct pto_dump_state *st = ctx->p->st;

	ctx->waits++;
	if (ctx->wait_ret)
		return ctx->wait_ret;
	return pto_producer_ack(ctx->p, st->acct.published_payloads,
				st->acct.ready_tail);
}

/*
 * The blocking form over the steps: a wait that lets the consumer catch
 * up ends in a commit, no refused record; giving up drops one record and
 * leaves nothing reserved.
 */
static void lane_blocking_form(struct kunit *test)
{
	struct lt_ctx *ctx = test->priv;
	struct pto_producer *p = ctx->p;
	struct pto_dump_arg a = lt_tensor(ctx, 1, 6000);
	struct pto_producer_wait w = {
		.wait = lt_wait, .lock = lt_lock, .unlock = lt_lock,
		.priv = ctx, .max_bytes = 4096,
	};
	u64 head;

	KUNIT_EXPECT_EQ(test, PTO_DUMP_RES_COLLECTED,
			pto_producer_record(p, &a, &w));
	KUNIT_EXPECT_EQ(test, PTO_DUMP_RES_COLLECTED,
			pto_producer_record(p, &a, &w));
	KUNIT_EXPECT_EQ(test, ctx->waits, 0U);
	KUNIT_EXPECT_EQ(test, PTO_DUMP_RES_COLLECTED,
			pto_producer_record(p, &a, &w));
	KUNIT_EXPECT_EQ(test, ctx->waits, 1U);
	KUNIT_EXPECT_EQ(test, p->st->acct.dropped, 0ULL);

	lt_capture(test, p, &a);	/* the arena is full again */
	head = p->head;
	ctx->wait_ret = -ETIMEDOUT;
	KUNIT_EXPECT_EQ(test, -ETIMEDOUT, pto_producer_record(p, &a, &w));
	KUNIT_EXPECT_FALSE(test, p->open);
	KUNIT_EXPECT_EQ(test, p->head, head);
	KUNIT_EXPECT_EQ(test, p->st->acct.dropped, 1ULL);
	KUNIT_EXPECT_EQ(test, p->st->acct.collected, 4ULL);
	lt_expect_balanced(test, p);
}

/* ---- lanes across a file's release (pto_lane.c) ---- */

#define LB_ADDR 0x100000ULL	/* the first file's one buffer, handle 1 */

struct lb_ctx {
	struct pto_device pdev;
	struct pto_file pf[2];
	struct pto_bo bo;
};

/* Two files of a device of two lanes; the first has a buffer. */
static struct lb_ctx *lb_init(struct kunit *test)
{
	struct lb_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	u64 addr = LB_ADDR;

	KUNIT_ASSERT_NOT_NULL(test, c);
	c->pdev.lanes = 2;
	KUNIT_ASSERT_EQ(test, pto_lanes_init(&c->pdev), 0);
	pto_test_file_init(test, &c->pdev, &c->pf[0], &c->bo, &addr, 1, SZ_4K);
	pto_test_file_init(test, &c->pdev, &c->pf[1], NULL, NULL, 0, 0);
	xa_init(&c->pf[0].bos);
	xa_init(&c->pf[1].bos);
	KUNIT_ASSERT_EQ(test, xa_err(xa_store(&c->pf[0].bos, 1, &c->bo,
					      GFP_KERNEL)), 0);
	return c;
}

static void lb_fini(struct lb_ctx *c)
{
	pto_lanes_fini(&c->pdev);
	xa_destroy(&c->pf[0].bos);
	xa_destroy(&c->pf[1].bos);
	mtree_destroy(&c->pf[0].ranges);
	mtree_destroy(&c->pf[1].ranges);
}

static int lb_bind(struct pto_file *pf, u32 lane)
{
	struct pto_dump_bind b = { .lane = lane, .level = PTO_DUMP_FULL };

	return pto_ioctl_dump_bind(pf, &b);
}

/* The first file binds @lane and captures its whole buffer once. */
static void lb_bind_capture(struct kunit *test, struct lb_ctx *c, u32 lane)
{
	struct pto_dump_capture cap = {
		.lane = lane, .handle = 1, .kind = PTO_DUMP_KIND_TENSOR,
		.dtype = PTO_DTYPE_I32, .rank = 1, .shape = { SZ_4K / 4 },
		.strides = { 1 }, .timeout_ns = U64_MAX,
	};

	KUNIT_ASSERT_EQ(test, lb_bind(&c->pf[0], lane), 0);
	KUNIT_ASSERT_EQ(test, pto_ioctl_dump_capture(&c->pf[0], &cap), 0);
	KUNIT_ASSERT_EQ(test, cap.result, (u32)PTO_DUMP_RES_COLLECTED);
}

static void lb_status(struct kunit *test, struct lb_ctx *c, u32 lane,
		      struct pto_dump_status *s)
{
	memset(s, 0, sizeof(*s));
	s->lane = lane;
	KUNIT_ASSERT_EQ(test, pto_ioctl_dump_status(&c->pf[1], s), 0);
}

/*
 * Released without closing: quarantined UNCLOSED with the old counters,
 * the buffer's reference already let go; the next file's bind takes the
 * lane over and starts it fresh.
 */
static void lane_takeover_unclosed(struct kunit *test)
{
	struct lb_ctx *c = lb_init(test);
	struct pto_dump_status s;

	lb_bind_capture(test, c, 0);
	KUNIT_EXPECT_EQ(test, kref_read(&c->bo.ref), 2U);	/* the hold */
	pto_file_release_lanes(&c->pf[0]);

	lb_status(test, c, 0, &s);
	KUNIT_EXPECT_EQ(test, s.state, (u32)PTO_LANE_QUARANTINED);
	KUNIT_EXPECT_EQ(test, s.quarantine, (u32)PTO_LANE_Q_UNCLOSED);
	KUNIT_EXPECT_EQ(test, s.acct.collected, 1ULL);
	KUNIT_EXPECT_EQ(test, kref_read(&c->bo.ref), 1U);
	KUNIT_EXPECT_TRUE(test, xa_empty(&c->pdev.lane[0].held));

	KUNIT_EXPECT_EQ(test, lb_bind(&c->pf[1], 0), 0);
	lb_status(test, c, 0, &s);
	KUNIT_EXPECT_EQ(test, s.state, (u32)PTO_LANE_BOUND);
	KUNIT_EXPECT_EQ(test, s.quarantine, 0U);
	KUNIT_EXPECT_EQ(test, s.acct.collected, 0ULL);
	KUNIT_EXPECT_EQ(test, s.acct.total, 0ULL);
	KUNIT_EXPECT_EQ(test, s.arena_write_pos, 0ULL);
	KUNIT_EXPECT_PTR_EQ(test, c->pdev.lane[0].owner, &c->pf[1]);
	/* Taken over once: the lane is the new file's, bound. */
	KUNIT_EXPECT_EQ(test, lb_bind(&c->pf[0], 0), -EBUSY);
	lb_fini(c);
}

/*
 * A producer of the kernel's own still running (a capture in flight on
 * lane 0) or with a reservation open (lane 1) at release: quarantined for
 * it, the buffer still held, and no bind takes the lane over.
 */
static void lane_running_stays_quarantined(struct kunit *test)
{
	struct lb_ctx *c = lb_init(test);
	struct pto_lane *l0 = &c->pdev.lane[0], *l1 = &c->pdev.lane[1];
	struct pto_dump_status s;

	lb_bind_capture(test, c, 0);
	KUNIT_ASSERT_EQ(test, lb_bind(&c->pf[0], 1), 0);
	mutex_lock(&l0->lock);
	l0->busy = true;
	mutex_unlock(&l0->lock);
	mutex_lock(&l1->lock);
	l1->prod->open = true;
	mutex_unlock(&l1->lock);
	pto_file_release_lanes(&c->pf[0]);

	lb_status(test, c, 0, &s);
	KUNIT_EXPECT_EQ(test, s.state, (u32)PTO_LANE_QUARANTINED);
	KUNIT_EXPECT_EQ(test, s.quarantine,
			(u32)(PTO_LANE_Q_PRODUCING | PTO_LANE_Q_UNCLOSED));
	lb_status(test, c, 1, &s);
	KUNIT_EXPECT_EQ(test, s.state, (u32)PTO_LANE_QUARANTINED);
	KUNIT_EXPECT_EQ(test, s.quarantine,
			(u32)(PTO_LANE_Q_RESERVED | PTO_LANE_Q_UNCLOSED));
	KUNIT_EXPECT_EQ(test, kref_read(&c->bo.ref), 2U);

	KUNIT_EXPECT_EQ(test, lb_bind(&c->pf[1], 0), -EBUSY);
	KUNIT_EXPECT_EQ(test, lb_bind(&c->pf[1], 1), -EBUSY);
	lb_status(test, c, 0, &s);
	KUNIT_EXPECT_EQ(test, s.state, (u32)PTO_LANE_QUARANTINED);
	KUNIT_EXPECT_EQ(test, s.acct.collected, 1ULL);
	KUNIT_EXPECT_NULL(test, l0->owner);
	KUNIT_EXPECT_NULL(test, l1->owner);

	/* The producer stops: the unload frees both. */
	mutex_lock(&l0->lock);
	l0->busy = false;
	mutex_unlock(&l0->lock);
	mutex_lock(&l1->lock);
	l1->prod->open = false;
	mutex_unlock(&l1->lock);
	lb_fini(c);
	KUNIT_EXPECT_EQ(test, kref_read(&c->bo.ref), 1U);
}

static struct kunit_case pto_lane_cases[] = {
	KUNIT_CASE(lane_reservation_ab),
	KUNIT_CASE(lane_abandon_last_record),
	KUNIT_CASE(lane_chunks_at_clamp),
	KUNIT_CASE(lane_chunks_strided),
	KUNIT_CASE(lane_chunks_rows),
	KUNIT_CASE(lane_ack_validation),
	KUNIT_CASE(lane_arena_backpressure),
	KUNIT_CASE(lane_refusals),
	KUNIT_CASE(lane_blocking_form),
	KUNIT_CASE(lane_takeover_unclosed),
	KUNIT_CASE(lane_running_stays_quarantined),
	{}
};

static struct kunit_suite pto_lane_suite = {
	.name = "pto_lane",
	.init = lt_init,
	.exit = lt_exit,
	.test_cases = pto_lane_cases,
};
kunit_test_suite(pto_lane_suite);
