// SPDX-License-Identifier: MIT
/*
 * 128 x 128 float32 tiles on the device, matmul and add alternating over a
 * batch of 50: C_i = A_i x B_i on an AIC core, D_i = C_i + E_i on an AIV
 * core (C_i is an auto-allocated intermediate). Every D_i is checked
 * against a CPU reference (within 1e-6 relative; the values are small
 * integers, so the sums are exact in float32).
 */
#include <errno.h>
#include <math.h>
#include "example_hbg.h"

#define T 128
#define BATCH 50
#define TILE_BYTES ((uint64_t)T * T * 4)

struct mm_args {
	struct ex_buf *a, *b, *e, *d;
};

static const struct pto_callable k_mm = { .kernel_id = PTO_FUNC_MATMUL };
static const struct pto_callable k_add = { .kernel_id = PTO_FUNC_ADD };

static struct pto_tensor tile(const struct ex_buf *b, int i)
{
	return pto_tensor_gm_2d(b->bo, b->map, (uint64_t)i * TILE_BYTES, T, T,
				PTO_DTYPE_F32);
}

static int mm_dag(pto_orch *o, void *arg)
{
	struct mm_args *ma = arg;
	struct pto_task_args args;
	struct pto_task h;
	int i, ret = 0;

	pto_args_init(&args);
	for (i = 0; !ret && i < BATCH; i++) {
		struct pto_tensor a = tile(ma->a, i), b = tile(ma->b, i);
		struct pto_tensor e = tile(ma->e, i), d = tile(ma->d, i);
		struct pto_tensor c = pto_tensor_gm_auto(TILE_BYTES, PTO_DTYPE_F32);

		c.rank = 2;
		c.shape[0] = T;
		c.shape[1] = T;
		ret = pto_scope_begin(o);
		if (ret)
			break;
		pto_args_reset(&args);
		pto_args_add_tensor(&args, &a, PTO_INPUT);
		pto_args_add_tensor(&args, &b, PTO_INPUT);
		pto_args_add_tensor(&args, &c, PTO_OUTPUT);
		ret = pto_submit_next_level(o, &k_mm, &args, NULL,
					    pto_on_kind(PTO_WORKER_AIC), &h);
		if (!ret) {
			c = args.tensors[2].t;	/* the allocated address */
			pto_args_reset(&args);
			pto_args_add_tensor(&args, &c, PTO_INPUT);
			pto_args_add_tensor(&args, &e, PTO_INPUT);
			pto_args_add_tensor(&args, &d, PTO_OUTPUT_EXISTING);
			ret = pto_submit_next_level(o, &k_add, &args, NULL,
						    pto_on_kind(PTO_WORKER_AIV), &h);
		}
		if (pto_scope_end(o) && !ret)
			ret = -EINVAL;
	}
	pto_args_fini(&args);
	return ret;
}

static float val_a(int i, int r, int c) { return (float)((i + r * 3 + c) % 5 - 2); }
static float val_b(int i, int r, int c) { return (float)((i * 7 + r + c * 2) % 3 - 1); }
static float val_e(int i, int r, int c) { return (float)((i + r + c) % 7); }

/* Tile @i of @b for a graph: 128 x 128 float32, row-major. */
static struct pto_tensor_desc gtile(const struct ex_buf *b, int i)
{
	struct pto_tensor_desc t = ex_hbg_tensor(b, T, PTO_DTYPE_F32);

	t.addr += (uint64_t)i * TILE_BYTES;
	t.rank = 2;
	t.shape[1] = T;
	t.strides[0] = T;
	t.strides[1] = 1;
	return t;
}

/* One graph task: out = x OP y on the core @mask names. */
static int gtask(pto_hbg *g, uint32_t mask, uint32_t func,
		 struct pto_tensor_desc x, struct pto_tensor_desc y,
		 struct pto_tensor_desc out, uint32_t *t)
{
	uint32_t fid[3] = { 0, 0, 0 };
	int ret;

	fid[__builtin_ctz(mask)] = func;
	ret = pto_hbg_add_task(g, mask, fid, t);
	ret = ret ?: pto_hbg_set_tensor(g, *t, PTO_ARG_A, &x,
					PTO_GRAPH_ROLE_IN, 0);
	ret = ret ?: pto_hbg_set_tensor(g, *t, PTO_ARG_B, &y,
					PTO_GRAPH_ROLE_IN, 0);
	return ret ?: pto_hbg_set_tensor(g, *t, PTO_ARG_OUT, &out,
					 PTO_GRAPH_ROLE_OUT, 0);
}

/*
 * The batch as one graph (--route resident): C_i (a buffer of its own)
 * by the AIC, D_i by an AIV after it.
 */
static int mm_resident(struct pto_dev *dev, const struct ex_opts *opts,
		       struct mm_args *ma)
{
	struct ex_buf cbuf;
	uint32_t mm, add;
	pto_hbg *g = NULL;
	int i, ret;

	ex_buf_alloc(dev, BATCH * TILE_BYTES, &cbuf);
	ret = pto_hbg_create(dev, &g);
	for (i = 0; !ret && i < BATCH; i++) {
		ret = gtask(g, PTO_GRAPH_AIC, PTO_FUNC_MATMUL, gtile(ma->a, i),
			    gtile(ma->b, i), gtile(&cbuf, i), &mm);
		ret = ret ?: gtask(g, PTO_GRAPH_AIV0 << (i % 2), PTO_FUNC_ADD,
				   gtile(&cbuf, i), gtile(ma->e, i),
				   gtile(ma->d, i), &add);
		ret = ret ?: pto_hbg_add_edge(g, mm, add);
	}
	ret = ret ?: ex_hbg_run(g, opts, "matmul_add", 2 * BATCH);
	pto_hbg_destroy(g);
	pto_bo_free(cbuf.bo);
	return ret;
}

EX_MAIN(matmul_add)
{
	struct ex_buf a, b, e, d;
	struct mm_args ma = { &a, &b, &e, &d };
	struct pto_dev *dev;
	pto_orch *o;
	double worst = 0;
	int ret, i, r, c, k, bad = 0;
	float *ref;

	if (opts->resident) {
		if (pto_dev_open(opts->dev, &dev))
			ex_die("matmul_add: open the device", -ENODEV);
	} else {
		ex_open(opts, NULL, &dev, &o);
	}
	ex_buf_alloc(dev, BATCH * TILE_BYTES, &a);
	ex_buf_alloc(dev, BATCH * TILE_BYTES, &b);
	ex_buf_alloc(dev, BATCH * TILE_BYTES, &e);
	ex_buf_alloc(dev, BATCH * TILE_BYTES, &d);
	for (i = 0; i < BATCH; i++)
		for (r = 0; r < T; r++)
			for (c = 0; c < T; c++) {
				size_t at = ((size_t)i * T + r) * T + c;

				((float *)a.map)[at] = val_a(i, r, c);
				((float *)b.map)[at] = val_b(i, r, c);
				((float *)e.map)[at] = val_e(i, r, c);
			}
	if (opts->resident)
		ret = mm_resident(dev, opts, &ma);
	else
		ret = ex_run(o, mm_dag, &ma, 2 * BATCH);
	ex_check(ret == 0, "matmul_add: run completes");

	ref = malloc(sizeof(float) * T * T);
	for (i = 0; ref && i < BATCH; i++) {
		const float *A = (float *)a.map + (size_t)i * T * T;
		const float *B = (float *)b.map + (size_t)i * T * T;
		const float *E = (float *)e.map + (size_t)i * T * T;
		const float *D = (float *)d.map + (size_t)i * T * T;

		for (r = 0; r < T; r++)
			for (c = 0; c < T; c++) {
				float s = 0;

				for (k = 0; k < T; k++)
					s += A[r * T + k] * B[k * T + c];
				ref[r * T + c] = s + E[r * T + c];
			}
		for (k = 0; k < T * T; k++) {
			double err = fabs((double)D[k] - ref[k]) /
				     fmax(1.0, fabs(ref[k]));

			if (err > worst)
				worst = err;
			bad += err > 1e-6;
		}
	}
	printf("# worst relative error %g over %d tiles\n", worst, BATCH);
	ex_check(ref && bad == 0, "matmul_add: every D_i = A_i x B_i + E_i (CPU reference)");
	free(ref);
	if (opts->resident || !ex_close(o, "matmul_add")) {
		pto_bo_free(a.bo);
		pto_bo_free(b.bo);
		pto_bo_free(e.bo);
		pto_bo_free(d.bo);
		pto_dev_close(dev);
	}
	return ex_failed;
}
