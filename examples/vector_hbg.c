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
	struct ex_buf buf[6];	/* a b c d e f */
	struct pto_dev *dev;
	pto_hbg *g = NULL;
	uint32_t t[4];
	int ret, i, bad = 0;
	float *ff;

	ret = pto_dev_open(opts->dev, &dev);
	ex_check(ret == 0, "vector_hbg: open the device");
	if (ret)
		return ex_failed;
	ex_hbg_bufs(dev, buf, 6, N);
	ff = buf[5].map;
	ret = pto_hbg_create(dev, &g);
	ret = ret ?: ex_hbg_op(g, PTO_GRAPH_AIC, PTO_FUNC_ADD, &buf[0], &buf[1],
			       0, &buf[2], N, &t[0]);
	ret = ret ?: ex_hbg_op(g, PTO_GRAPH_AIV0, PTO_FUNC_ADD_SCALAR, &buf[2],
			       NULL, 1, &buf[3], N, &t[1]);
	ret = ret ?: ex_hbg_op(g, PTO_GRAPH_AIV1, PTO_FUNC_ADD_SCALAR, &buf[2],
			       NULL, 2, &buf[4], N, &t[2]);
	ret = ret ?: ex_hbg_op(g, PTO_GRAPH_AIC, PTO_FUNC_MUL, &buf[3], &buf[4],
			       0, &buf[5], N, &t[3]);
	/* c -> d, e; d, e -> f. */
	ret = ret ?: pto_hbg_add_edge(g, t[0], t[1]);
	ret = ret ?: pto_hbg_add_edge(g, t[0], t[2]);
	ret = ret ?: pto_hbg_add_edge(g, t[1], t[3]);
	ret = ret ?: pto_hbg_add_edge(g, t[2], t[3]);
	ex_check(ret == 0, "vector_hbg: build the graph");
	ret = ret ?: ex_hbg_run(g, opts, "vector_hbg", 4);
	ex_check(ret == 0, "vector_hbg: 4 tasks run on the cores");
	for (i = 0; i < N; i++)
		bad += ff[i] != 42.0f;
	printf("# f[0] = %g, f[%d] = %g\n", ff[0], N - 1, ff[N - 1]);
	ex_check(bad == 0, "vector_hbg: every element of f = 42");
	pto_hbg_destroy(g);
	for (i = 0; i < 6; i++)
		pto_bo_free(buf[i].bo);
	pto_dev_close(dev);
	return ex_failed;
}
