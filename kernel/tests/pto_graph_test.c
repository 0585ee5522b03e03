// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: the resident route's graph checks. pto_graph: a good graph
 * accepted, every bad row refused naming its first bad task and field
 * with no reference held, a seeded fuzz checked against a reference and
 * run to its end by the on-core steps.
 */
#include <kunit/test.h>
#include <linux/prandom.h>
#include <linux/random.h>
#include <linux/slab.h>
#include "../pto_mock.h"
#include "pto_graph_fixture.h"

/* ---- bad graphs -------------------------------------------------------- */

struct gcase {
	const char *name;
	void (*mutate)(struct tg *g);
	void (*hdr)(struct pto_graph_hdr *h);
	u64 cut;	/* bytes left off the upload */
	u32 task;
	u32 field;
};

static void h_magic(struct pto_graph_hdr *h)
{
	h->magic ^= 1;
}

static void h_version(struct pto_graph_hdr *h)
{
	h->version = PTO_GRAPH_VERSION - 1;	/* the 288-byte tasks */
}

static void h_flags(struct pto_graph_hdr *h)
{
	h->reserved[1] = 1;
}

static void h_count0(struct pto_graph_hdr *h)
{
	h->task_count = 0;
}

static void h_size(struct pto_graph_hdr *h)
{
	h->size += 8;
}

static void h_tsize(struct pto_graph_hdr *h)
{
	h->task_size -= 8;
}

static void m_tflags(struct tg *g)
{
	g->t[2].flags = 2;
}

static void m_mask_cross(struct tg *g)
{
	g->t[1].active_mask = 1u << 3;
}

static void m_mask_1c1v(struct tg *g)
{
	g->t[2].active_mask = 5;
}

static void m_mask0(struct tg *g)
{
	g->t[0].active_mask = 0;
}

static void m_func(struct tg *g)
{
	g->t[1].func_id[1] = PTO_FUNC_COUNT;
}

static void m_func_off(struct tg *g)
{
	g->t[0].func_id[2] = PTO_FUNC_ADD;
}

static void m_succ(struct tg *g)
{
	g->t[3].succ_start = 4;
	g->t[3].succ_count = 1;
}

static void m_edge_self(struct tg *g)
{
	g->e[2] = 1;
}

static void m_edge_range(struct tg *g)
{
	g->e[3] = 9;
}

static void m_fanin(struct tg *g)
{
	g->t[3].fanin = 1;
}

static void m_role(struct tg *g)
{
	g->t[1].t[PTO_ARG_OUT].role = PTO_GRAPH_ROLE_IN;
}

static void m_role_unused(struct tg *g)
{
	g->t[0].t[PTO_ARG_B].role = PTO_GRAPH_ROLE_IN;
}

static void m_role_bad(struct tg *g)
{
	g->t[1].t[PTO_ARG_A].role = 4;
}

static void m_aflags(struct tg *g)
{
	g->t[2].t[PTO_ARG_A].flags = 2;
}

static void m_foreign(struct tg *g)
{
	g->t[2].t[PTO_ARG_OUT].t.addr = FOREIGN;
}

static void m_dtype(struct tg *g)
{
	g->t[1].t[PTO_ARG_A].t.dtype = 9;
}

static void m_scalar(struct tg *g)
{
	g->t[3].scalar[0] = 1;
}


/* In bounds at [0], past the buffer's end at its last strided element. */
static void m_stride(struct tg *g)
{
	g->t[1].t[PTO_ARG_A].t.strides[0] = 128;
	g->t[1].t[PTO_ARG_OUT].t.strides[0] = 128;
}

/* 1 -> 2 -> 1 with the fan-ins kept equal to the edges. */
static void m_cycle(struct tg *g)
{
	g->e[2] = 2;		/* task 1's successor: 2 instead of 3 */
	g->e[3] = 1;		/* task 2's successor: 1 instead of 3 */
	g->t[3].fanin = 0;
	g->t[1].fanin = 2;
	g->t[2].fanin = 2;
}

static const struct gcase gcases[] = {
	{ "good", NULL, NULL, 0, PTO_GRAPH_TASK_NONE, PTO_GRAPH_FIELD_NONE },
	{ "truncated", NULL, NULL, 8, PTO_GRAPH_TASK_NONE,
	  PTO_GRAPH_FIELD_TRUNCATED },
	{ "truncated_hdr", NULL, NULL, 0x10000, PTO_GRAPH_TASK_NONE,
	  PTO_GRAPH_FIELD_TRUNCATED },
	{ "magic", NULL, h_magic, 0, PTO_GRAPH_TASK_NONE, PTO_GRAPH_FIELD_MAGIC },
	{ "version", NULL, h_version, 0, PTO_GRAPH_TASK_NONE,
	  PTO_GRAPH_FIELD_VERSION },
	{ "hdr_reserved", NULL, h_flags, 0, PTO_GRAPH_TASK_NONE,
	  PTO_GRAPH_FIELD_HDR_FLAGS },
	{ "no_tasks", NULL, h_count0, 0, PTO_GRAPH_TASK_NONE,
	  PTO_GRAPH_FIELD_COUNT },
	{ "size", NULL, h_size, 0, PTO_GRAPH_TASK_NONE, PTO_GRAPH_FIELD_SIZE },
	{ "task_size", NULL, h_tsize, 0, PTO_GRAPH_TASK_NONE,
	  PTO_GRAPH_FIELD_SIZE },
	{ "task_flags", m_tflags, NULL, 0, 2, PTO_GRAPH_FIELD_TASK_FLAGS },
	{ "mask_across_clusters", m_mask_cross, NULL, 0, 1,
	  PTO_GRAPH_FIELD_ACTIVE_MASK },
	{ "mask_1c1v", m_mask_1c1v, NULL, 0, 2, PTO_GRAPH_FIELD_ACTIVE_MASK },
	{ "mask_empty", m_mask0, NULL, 0, 0, PTO_GRAPH_FIELD_ACTIVE_MASK },
	{ "func_unknown", m_func, NULL, 0, 1, PTO_GRAPH_FIELD_FUNC_ID },
	{ "func_inactive_core", m_func_off, NULL, 0, 0,
	  PTO_GRAPH_FIELD_FUNC_ID },
	{ "succ_range", m_succ, NULL, 0, 3, PTO_GRAPH_FIELD_SUCC },
	{ "edge_self", m_edge_self, NULL, 0, 1, PTO_GRAPH_FIELD_EDGE },
	{ "edge_range", m_edge_range, NULL, 0, 2, PTO_GRAPH_FIELD_EDGE },
	{ "fanin", m_fanin, NULL, 0, 3, PTO_GRAPH_FIELD_FANIN },
	{ "cycle", m_cycle, NULL, 0, 1, PTO_GRAPH_FIELD_CYCLE },
	{ "role_out_as_in", m_role, NULL, 0, 1, PTO_GRAPH_FIELD_ROLE },
	{ "role_unused_slot", m_role_unused, NULL, 0, 0, PTO_GRAPH_FIELD_ROLE },
	{ "role_unknown", m_role_bad, NULL, 0, 1, PTO_GRAPH_FIELD_ROLE },
	{ "arg_flags", m_aflags, NULL, 0, 2, PTO_GRAPH_FIELD_ARG_FLAGS },
	{ "addr_foreign", m_foreign, NULL, 0, 2, PTO_GRAPH_FIELD_TENSOR_ADDR },
	{ "addr_strided_extent", m_stride, NULL, 0, 1,
	  PTO_GRAPH_FIELD_TENSOR_ADDR },
	{ "dtype", m_dtype, NULL, 0, 1, PTO_GRAPH_FIELD_TENSOR },
	{ "scalar_unread", m_scalar, NULL, 0, 3, PTO_GRAPH_FIELD_ARGS },
};

static void gcase_desc(const struct gcase *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(gcases, gcases, gcase_desc);

static void graph_check_rows(struct kunit *test)
{
	const struct gcase *c = test->param_value;
	struct pto_graph_launch args;
	struct pto_graph *g;
	struct tg *tg;

	tg = kunit_kzalloc(test, sizeof(*tg), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, tg);
	pto_gt_diamond(tg);
	if (c->mutate)
		c->mutate(tg);
	g = pto_gt_build(test, tg, min_t(u64, c->cut, pto_gt_size(tg)), c->hdr,
			 &args);
	KUNIT_EXPECT_EQ(test, args.bad_task, c->task);
	KUNIT_EXPECT_EQ(test, args.bad_field, c->field);
	if (c->field == PTO_GRAPH_FIELD_NONE) {
		KUNIT_ASSERT_FALSE(test, IS_ERR(g));
		KUNIT_EXPECT_EQ(test, g->nsub, 6);
		/* Pinned while the graph lives: task 3's MUL holds three. */
		KUNIT_EXPECT_GT(test, kref_read(&((struct graph_ctx *)
					      test->priv)->bo[0].ref), 1U);
		pto_graph_put(g);
	} else {
		KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(g), -EINVAL);
	}
	pto_gt_expect_no_refs(test);
}

/* ---- the seeded fuzz --------------------------------------------------- */

static u32 rnd(struct rnd_state *r, u32 n)
{
	return prandom_u32_state(r) % n;
}

static const u32 fz_masks[] = { 1, 2, 4, 6, 7 };
static const u32 fz_funcs[] = { PTO_FUNC_NOOP, PTO_FUNC_FILL,
				PTO_FUNC_ADD_SCALAR, PTO_FUNC_COPY };

static void fz_tensor(struct rnd_state *r, struct pto_graph_tensor *a,
		      u32 role)
{
	pto_gt_ten(a, role, (rnd(r, 2) ? BO_B : BO_A) + 4 * rnd(r, 512),
	    1 + rnd(r, 64));
}

/* A random DAG (edges only forward), every task in bounds. */
static void fz_graph(struct rnd_state *r, struct tg *g)
{
	u32 i, j;

	memset(g, 0, sizeof(*g));
	g->n = 1 + rnd(r, MAXT);
	for (i = 0; i < g->n; i++) {
		struct pto_graph_task *t = &g->t[i];
		u32 f = fz_funcs[rnd(r, ARRAY_SIZE(fz_funcs))];

		t->active_mask = fz_masks[rnd(r, ARRAY_SIZE(fz_masks))];
		t->func_id[__ffs(t->active_mask)] = f;
		if (f == PTO_FUNC_FILL || f == PTO_FUNC_ADD_SCALAR)
			t->scalar[0] = rnd(r, 100);
		if (f != PTO_FUNC_NOOP)
			fz_tensor(r, &t->t[PTO_ARG_OUT], PTO_GRAPH_ROLE_OUT);
		if (f == PTO_FUNC_ADD_SCALAR || f == PTO_FUNC_COPY) {
			fz_tensor(r, &t->t[PTO_ARG_A], PTO_GRAPH_ROLE_IN);
			t->t[PTO_ARG_A].t.shape[0] =
				t->t[PTO_ARG_OUT].t.shape[0];
		}
		for (j = i + 1; j < g->n && g->ne < MAXE; j++)
			if (!rnd(r, 6))
				pto_gt_edge(g, i, j);
	}
	pto_gt_seal(g);
}

/* One random change of a field the checks cover; 0 or the bytes cut. */
static u64 fz_mutate(struct rnd_state *r, struct tg *g)
{
	struct pto_graph_task *t = &g->t[rnd(r, g->n)];
	struct pto_graph_tensor *a = &t->t[rnd(r, PTO_PAYLOAD_TENSORS)];

	switch (rnd(r, 10)) {
	case 0:
		t->active_mask = rnd(r, 9);
		break;
	case 1:
		t->func_id[rnd(r, 3)] = rnd(r, PTO_FUNC_COUNT + 2);
		break;
	case 2:
		t->fanin += rnd(r, 2) ? 1 : -1;
		break;
	case 3:
		if (g->ne)
			g->e[rnd(r, g->ne)] = rnd(r, g->n + 1);
		break;
	case 4:
		a->t.addr += rnd(r, 2) ? BO_SIZE - 4 : FOREIGN;
		break;
	case 5:
		a->t.shape[0] = 1 + rnd(r, 2048);
		break;
	case 6:
		a->t.strides[0] = rnd(r, 9);
		break;
	case 7:
		a->role = rnd(r, 5);
		break;
	case 8:
		t->succ_count++;
		break;
	case 9:
		return 1 + rnd(r, 64);
	}
	return 0;
}

/* The reference: is every used tensor's extent inside one buffer? */
static bool ref_tensor_ok(const struct pto_tensor_desc *tn)
{
	u64 bytes = 4, end, base;

	if (tn->rank != 1 || !tn->shape[0])
		return false;
	bytes += (u64)(tn->shape[0] - 1) * tn->strides[0] * 4;
	end = tn->addr + bytes;
	base = tn->addr >= BO_B ? BO_B : BO_A;
	return tn->addr >= BO_A && end <= base + BO_SIZE;
}

/* The reference's verdict on what a core may run: in bounds, a DAG. */
static bool ref_valid(const struct tg *g)
{
	u32 in[MAXT] = {}, left[MAXT], order = 0, i, e, k, j;
	bool progress = true;

	for (i = 0; i < g->n; i++) {
		const struct pto_graph_task *t = &g->t[i];

		for (j = 0; j < PTO_CORES_PER_CLUSTER; j++) {
			u8 used;

			if (!(t->active_mask & BIT(j)))
				continue;
			if (t->func_id[j] >= PTO_FUNC_COUNT)
				return false;
			used = pto_func_tensors(t->func_id[j]);
			for (k = 0; k < PTO_PAYLOAD_TENSORS; k++)
				if ((used & BIT(k)) &&
				    !ref_tensor_ok(&t->t[k].t))
					return false;
		}
		if (t->succ_start + t->succ_count > g->ne)
			return false;
		for (e = 0; e < t->succ_count; e++) {
			if (g->e[t->succ_start + e] >= g->n)
				return false;
			in[g->e[t->succ_start + e]]++;
		}
	}
	for (i = 0; i < g->n; i++) {
		if (in[i] != g->t[i].fanin)
			return false;
		left[i] = in[i] + 1;	/* +1: not yet visited */
	}
	while (progress) {
		progress = false;
		for (i = 0; i < g->n; i++) {
			if (left[i] != 1)
				continue;
			left[i] = 0;
			order++;
			progress = true;
			for (e = 0; e < g->t[i].succ_count; e++)
				left[g->e[g->t[i].succ_start + e]]--;
		}
	}
	return order == g->n;
}

/*
 * The reference's outcome of a subtask: the fault-injection kernels end
 * with a device error by design (a valid graph may fail on a core);
 * every other kernel of the fuzz succeeds on in-bounds arguments.
 */
static u32 ref_status(const struct pto_graph_task *t, u8 bit)
{
	u32 j = __ffs(bit);

	/* A single-AIV task runs its named AIV's kernel on either AIV. */
	if (!(t->active_mask & bit))
		j = __ffs(t->active_mask);
	switch (t->func_id[j]) {
	case PTO_FUNC_FAULT:
	case PTO_FUNC_HANG:
		return PTO_TASK_EFAULT;
	}
	return PTO_TASK_OK;
}

/*
 * Run an accepted graph to its end with the steps, cores in a random
 * order, up to two subtasks in flight per cluster: none is claimed
 * before its predecessors completed, each subtask ends as the reference
 * says; every task completes once, or after the first failure the
 * graph names it, claims nothing new and the tasks in flight drain.
 */
static void fz_run(struct kunit *test, struct rnd_state *r,
		   const struct tg *tg, struct pto_graph *g)
{
	struct graph_ctx *ctx = test->priv;
	u32 steps = 0, i, e, c, err, want, claimed = 0;
	u32 first_err = PTO_GRAPH_TASK_NONE;
	struct pto_gclaim fly[6];
	bool busy[6] = {}, pushed;
	bool *completed, *seen;

	completed = kunit_kzalloc(test, MAXT, GFP_KERNEL);
	seen = kunit_kzalloc(test, MAXT, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, completed);
	KUNIT_ASSERT_NOT_NULL(test, seen);
	g->clusters = BIT_ULL(0) | BIT_ULL(1);
	while (!g->done && steps++ < 100000) {
		c = rnd(r, 6);
		if (!busy[c]) {
			if (!pto_graph_claim(g, c, &fly[c]))
				continue;
			busy[c] = true;
			if (!seen[fly[c].task]) {
				seen[fly[c].task] = true;
				claimed++;
			}
			/* After a failure only the slots' tasks run. */
			if (first_err != PTO_GRAPH_TASK_NONE && fly[c].placed)
				KUNIT_FAIL(test, "task %u claimed after a failure",
					   fly[c].task);
			for (i = 0; i < tg->n; i++)
				for (e = 0; e < tg->t[i].succ_count; e++)
					if (tg->e[tg->t[i].succ_start + e] ==
					    fly[c].task && !completed[i])
						KUNIT_FAIL(test, "task %u before %u",
							   fly[c].task, i);
			continue;
		}
		busy[c] = false;
		err = pto_task_run(&ctx->core, &g->sub[fly[c].sub], NULL);
		want = ref_status(&tg->t[fly[c].task], fly[c].bit);
		KUNIT_EXPECT_EQ_MSG(test, err, want, "task %u on core %u",
				    fly[c].task, c);
		if (err && first_err == PTO_GRAPH_TASK_NONE)
			first_err = fly[c].task;
		pto_graph_finish(g, c, &fly[c], err, 1, 2, &pushed);
		if (!g->slots[c / 3][fly[c].slot].mask ||
		    g->slots[c / 3][fly[c].slot].task != fly[c].task)
			completed[fly[c].task] = true;
	}
	KUNIT_EXPECT_TRUE(test, g->done);
	KUNIT_EXPECT_EQ(test, g->err_task, first_err);
	if (first_err == PTO_GRAPH_TASK_NONE) {
		KUNIT_EXPECT_EQ(test, g->completed, tg->n);
	} else {
		KUNIT_EXPECT_EQ(test, g->err_status, (u32)PTO_TASK_EFAULT);
		KUNIT_EXPECT_EQ(test, g->completed, claimed);
		KUNIT_EXPECT_EQ(test, g->inflight, 0U);
	}
}

/*
 * The fuzz's seeds: fixed ones, so every run checks the same graphs
 * (3265681301 has valid graphs whose fault-injection kernels fail on a
 * core), and one random seed per run, printed (graph fuzz seed N) so a
 * failure can be replayed by adding it here.
 */
static u32 fz_seeds[] = { 20261202u, 3265681301u, 0 };

static const void *fz_seed_gen(const void *prev, char *desc)
{
	const u32 *p = prev ? (const u32 *)prev + 1 : fz_seeds;

	if (p >= fz_seeds + ARRAY_SIZE(fz_seeds))
		return NULL;
	if (p == &fz_seeds[ARRAY_SIZE(fz_seeds) - 1]) {
		fz_seeds[ARRAY_SIZE(fz_seeds) - 1] = get_random_u32() | 1;
		snprintf(desc, KUNIT_PARAM_DESC_SIZE, "random seed %u", *p);
	} else {
		snprintf(desc, KUNIT_PARAM_DESC_SIZE, "seed %u", *p);
	}
	return p;
}

static void graph_fuzz(struct kunit *test)
{
	u32 seed = *(const u32 *)test->param_value;
	u32 iter, accepted = 0, refused = 0;
	struct pto_graph_launch args;
	struct rnd_state r;
	struct tg *tg;

	tg = kunit_kzalloc(test, sizeof(*tg), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, tg);
	kunit_info(test, "graph fuzz seed %u\n", seed);
	prandom_seed_state(&r, seed);
	for (iter = 0; iter < 300; iter++) {
		struct pto_graph *g;
		u64 cut = 0;
		u32 m, n;

		fz_graph(&r, tg);
		n = rnd(&r, 3);
		for (m = 0; m < n; m++)
			cut |= fz_mutate(&r, tg);
		g = pto_gt_build(test, tg, min_t(u64, cut, pto_gt_size(tg)), NULL,
				 &args);
		if (IS_ERR(g)) {
			refused++;
			KUNIT_EXPECT_EQ(test, PTR_ERR(g), -EINVAL);
			KUNIT_EXPECT_NE(test, args.bad_field,
					(u32)PTO_GRAPH_FIELD_NONE);
			pto_gt_expect_no_refs(test);
			continue;
		}
		accepted++;
		if (cut || !ref_valid(tg))
			KUNIT_FAIL(test, "seed %u iter %u: an invalid graph was accepted",
				   seed, iter);
		else
			fz_run(test, &r, tg, g);
		pto_graph_put(g);
		pto_gt_expect_no_refs(test);
	}
	kunit_info(test, "seed %u: accepted %u refused %u\n", seed, accepted,
		   refused);
	KUNIT_EXPECT_GT(test, accepted, 30U);
	KUNIT_EXPECT_GT(test, refused, 30U);
}

static struct kunit_case pto_graph_cases[] = {
	KUNIT_CASE_PARAM(graph_check_rows, gcases_gen_params),
	KUNIT_CASE_PARAM(graph_fuzz, fz_seed_gen),
	{}
};

static struct kunit_suite pto_graph_suite = {
	.name = "pto_graph",
	.init = pto_gt_init,
	.exit = pto_gt_exit,
	.test_cases = pto_graph_cases,
};

kunit_test_suite(pto_graph_suite);
