// SPDX-License-Identifier: MIT
/*
 * The reference runtime's vector DAG on the device: a = 2, b = 3 (float32,
 * 128 x 128); c = a + b; in a scope d = c + 1, e = c + 2, g = d * e,
 * f = g + c. Every element of f must be 47. c is marked for the args dump
 * (PARTIAL and HYBRID capture its bytes alone).
 */
#include "example_hbg.h"

#define N (128 * 128)

struct vec_args {
	struct ex_buf *a, *b, *f;
};

static const struct pto_callable k_add = { .kernel_id = PTO_FUNC_ADD };
static const struct pto_callable k_mul = { .kernel_id = PTO_FUNC_MUL };
static const struct pto_callable k_adds = { .kernel_id = PTO_FUNC_ADD_SCALAR };

static uint64_t f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

/* out = x OP y (tensors) or x OP scalar; returns the output tensor,
 * marked for the args dump when @mark. */
static int submit2(pto_orch *o, const struct pto_callable *k,
		   const struct pto_tensor *x, const struct pto_tensor *y,
		   const float *scalar, struct pto_tensor *out, int mark)
{
	struct pto_task_args args;
	struct pto_task h;
	int ret;

	pto_args_init(&args);
	pto_args_add_tensor(&args, x, PTO_INPUT);
	if (y)
		pto_args_add_tensor(&args, y, PTO_INPUT);
	if (scalar)
		pto_args_add_scalar(&args, f32_bits(*scalar));
	ret = pto_args_add_tensor(&args, out, PTO_OUTPUT);
	if (ret >= 0 && mark)
		ret = pto_args_set_dump(&args, 0, args.ntensors - 1, 1);
	if (ret >= 0)
		ret = pto_submit_next_level(o, k, &args, NULL,
					    pto_on_kind(PTO_WORKER_AIV), &h);
	/* Submit hands an auto-allocated OUTPUT's address back in @args. */
	if (ret >= 0)
		*out = args.tensors[args.ntensors - 1].t;
	pto_args_fini(&args);
	return ret < 0 ? ret : 0;
}

static int vector_dag(pto_orch *o, void *p)
{
	struct vec_args *va = p;
	struct pto_tensor a = ex_f32(va->a, 0, N), b = ex_f32(va->b, 0, N);
	struct pto_tensor f = ex_f32(va->f, 0, N);
	struct pto_tensor c = pto_tensor_gm_auto(N * 4, PTO_DTYPE_F32);
	struct pto_tensor d = c, e = c, g = c;
	float one = 1, two = 2;
	int ret;

	ret = submit2(o, &k_add, &a, &b, NULL, &c, 1);
	if (ret)
		return ret;
	ret = pto_scope_begin(o);
	if (ret)
		return ret;
	ret = submit2(o, &k_adds, &c, NULL, &one, &d, 0);
	if (!ret)
		ret = submit2(o, &k_adds, &c, NULL, &two, &e, 0);
	if (!ret)
		ret = submit2(o, &k_mul, &d, &e, NULL, &g, 0);
	if (!ret)
		ret = submit2(o, &k_add, &g, &c, NULL, &f, 0);
	pto_scope_end(o);
	return ret;
}

/*
 * The same DAG as one host-built graph (--route resident): c on the AIC,
 * d and e on the two AIVs, g on the AIC, f on the first AIV.
 */
static int vector_resident(const struct ex_opts *opts)
{
	struct ex_buf buf[7];	/* a b c d e g f */
	struct pto_dev *dev;
	pto_hbg *g = NULL;
	uint32_t t[5];
	int ret, i, bad = 0;
	float *ff;

	ret = pto_dev_open(opts->dev, &dev);
	if (ret)
		ex_die("vector: open the device", ret);
	ex_hbg_bufs(dev, buf, 7, N);
	ff = buf[6].map;
	ret = pto_hbg_create(dev, &g);
	if (!ret)
		ret = ex_hbg_op(g, PTO_GRAPH_AIC, PTO_FUNC_ADD, &buf[0], &buf[1],
				0, &buf[2], N, &t[0]);
	if (!ret)
		ret = ex_hbg_op(g, PTO_GRAPH_AIV0, PTO_FUNC_ADD_SCALAR, &buf[2],
				NULL, 1, &buf[3], N, &t[1]);
	if (!ret)
		ret = ex_hbg_op(g, PTO_GRAPH_AIV1, PTO_FUNC_ADD_SCALAR, &buf[2],
				NULL, 2, &buf[4], N, &t[2]);
	if (!ret)
		ret = ex_hbg_op(g, PTO_GRAPH_AIC, PTO_FUNC_MUL, &buf[3], &buf[4],
				0, &buf[5], N, &t[3]);
	if (!ret)
		ret = ex_hbg_op(g, PTO_GRAPH_AIV0, PTO_FUNC_ADD, &buf[5], &buf[2],
				0, &buf[6], N, &t[4]);
	/* c -> d, e, f; d, e -> g; g -> f. */
	ret = ret ?: pto_hbg_add_edge(g, t[0], t[1]);
	ret = ret ?: pto_hbg_add_edge(g, t[0], t[2]);
	ret = ret ?: pto_hbg_add_edge(g, t[0], t[4]);
	ret = ret ?: pto_hbg_add_edge(g, t[1], t[3]);
	ret = ret ?: pto_hbg_add_edge(g, t[2], t[3]);
	ret = ret ?: pto_hbg_add_edge(g, t[3], t[4]);
	ret = ret ?: ex_hbg_run(g, opts, "vector", 5);
	ex_check(ret == 0, "vector: the graph runs on the cores");
	for (i = 0; i < N; i++)
		bad += ff[i] != 47.0f;
	printf("# f[0] = %g, f[%d] = %g\n", ff[0], N - 1, ff[N - 1]);
	ex_check(bad == 0, "vector: every element of f = 47");
	pto_hbg_destroy(g);
	for (i = 0; i < 7; i++)
		pto_bo_free(buf[i].bo);
	pto_dev_close(dev);
	return ex_failed;
}

EX_MAIN(vector)
{
	struct ex_buf a, b, f;
	struct vec_args va = { &a, &b, &f };
	struct pto_dev *dev;
	pto_orch *o;
	float *fa, *fb, *ff;
	int ret, i, bad = 0;

	if (opts->resident)
		return vector_resident(opts);
	ex_open(opts, NULL, &dev, &o);
	ex_buf_alloc(dev, N * 4, &a);
	ex_buf_alloc(dev, N * 4, &b);
	ex_buf_alloc(dev, N * 4, &f);
	fa = a.map;
	fb = b.map;
	ff = f.map;
	for (i = 0; i < N; i++) {
		fa[i] = 2;
		fb[i] = 3;
	}
	ret = ex_run(o, vector_dag, &va, 5);
	ex_check(ret == 0, "vector: run completes");
	for (i = 0; i < N; i++)
		bad += ff[i] != 47.0f;
	printf("# f[0] = %g, f[%d] = %g\n", ff[0], N - 1, ff[N - 1]);
	ex_check(bad == 0, "vector: every element of f = 47");
	/* A failed close leaves the scheduler threads on the device and its
	 * buffers: free nothing then. */
	if (!ex_close(o, "vector")) {
		pto_bo_free(a.bo);
		pto_bo_free(b.bo);
		pto_bo_free(f.bo);
		pto_dev_close(dev);
	}
	return ex_failed;
}
