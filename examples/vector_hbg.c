// SPDX-License-Identifier: MIT
/*
 * The vector graph on the resident route (host_build_graph): a = 2, b = 3
 * (float32, 128 x 128); c = a + b (AIC), d = c + 1 (AIV0), e = c + 2
 * (AIV1), f = d * e (AIC), built on the host and scheduled by the cores.
 * Every element of f must be 42.
 */
#include "example_hbg.h"

#define N (128 * 128)

EX_MAIN(vector_hbg)
{
	struct ex_buf a, b, c, d, e, f;
	struct pto_dev *dev;
	uint32_t t[4];
	float *fa, *fb, *ff;
	int ret, i, bad = 0;
	pto_hbg *g = NULL;

	ret = pto_dev_open(opts->dev, &dev);
	ex_check(ret == 0, "vector_hbg: open the device");
	if (ret)
		return ex_failed;
	ex_buf_alloc(dev, N * 4, &a);
	ex_buf_alloc(dev, N * 4, &b);
	ex_buf_alloc(dev, N * 4, &c);
	ex_buf_alloc(dev, N * 4, &d);
	ex_buf_alloc(dev, N * 4, &e);
	ex_buf_alloc(dev, N * 4, &f);
	fa = a.map;
	fb = b.map;
	ff = f.map;
	for (i = 0; i < N; i++) {
		fa[i] = 2;
		fb[i] = 3;
	}
	ret = pto_hbg_create(dev, &g);
	if (!ret)
		ret = ex_hbg_op(g, PTO_GRAPH_AIC, PTO_FUNC_ADD, &a, &b, 0, &c, N,
				&t[0]);
	if (!ret)
		ret = ex_hbg_op(g, PTO_GRAPH_AIV0, PTO_FUNC_ADD_SCALAR, &c, NULL,
				1, &d, N, &t[1]);
	if (!ret)
		ret = ex_hbg_op(g, PTO_GRAPH_AIV1, PTO_FUNC_ADD_SCALAR, &c, NULL,
				2, &e, N, &t[2]);
	if (!ret)
		ret = ex_hbg_op(g, PTO_GRAPH_AIC, PTO_FUNC_MUL, &d, &e, 0, &f, N,
				&t[3]);
	if (!ret)
		ret = pto_hbg_add_edge(g, t[0], t[1]);
	if (!ret)
		ret = pto_hbg_add_edge(g, t[0], t[2]);
	if (!ret)
		ret = pto_hbg_add_edge(g, t[1], t[3]);
	if (!ret)
		ret = pto_hbg_add_edge(g, t[2], t[3]);
	ex_check(ret == 0, "vector_hbg: build the graph");
	if (!ret)
		ret = ex_hbg_run(g, opts, "vector_hbg", 4);
	ex_check(ret == 0, "vector_hbg: 4 tasks run on the cores");
	for (i = 0; i < N; i++)
		bad += ff[i] != 42.0f;
	printf("# f[0] = %g, f[%d] = %g\n", ff[0], N - 1, ff[N - 1]);
	ex_check(bad == 0, "vector_hbg: every element of f = 42");
	pto_hbg_destroy(g);
	pto_bo_free(a.bo);
	pto_bo_free(b.bo);
	pto_bo_free(c.bo);
	pto_bo_free(d.bo);
	pto_bo_free(e.bo);
	pto_bo_free(f.bo);
	pto_dev_close(dev);
	return ex_failed;
}
