/* SPDX-License-Identifier: MIT */
/*
 * The examples' resident-route helpers (pto/graph.h): one-core tasks on
 * whole float32 vectors, and a run that reports a refusal or a failure.
 */
#ifndef PTO_EXAMPLE_HBG_H
#define PTO_EXAMPLE_HBG_H

#include <pto/graph.h>
#include "example.h"

static inline struct pto_tensor_desc ex_hbg_tensor(const struct ex_buf *b,
						   uint32_t n, uint32_t dtype)
{
	struct pto_tensor_desc t;

	memset(&t, 0, sizeof(t));
	t.addr = pto_bo_dev_addr(b->bo);
	t.dtype = dtype;
	t.rank = 1;
	t.shape[0] = n;
	t.strides[0] = 1;
	return t;
}

static inline struct pto_tensor_desc ex_hbg_vec(const struct ex_buf *b,
						uint32_t n)
{
	return ex_hbg_tensor(b, n, PTO_DTYPE_F32);
}

/* A task on the core @mask names: out = x OP y, or x OP s (y NULL). */
static inline int ex_hbg_op(pto_hbg *g, uint32_t mask, uint32_t func,
			    const struct ex_buf *x, const struct ex_buf *y,
			    float s, const struct ex_buf *out, uint32_t n,
			    uint32_t *task)
{
	uint32_t fid[3] = { 0, 0, 0 };
	struct pto_tensor_desc t;
	uint32_t u;
	int ret;

	fid[__builtin_ctz(mask)] = func;
	ret = pto_hbg_add_task(g, mask, fid, task);
	t = ex_hbg_vec(x, n);
	if (!ret)
		ret = pto_hbg_set_tensor(g, *task, PTO_ARG_A, &t,
					 PTO_GRAPH_ROLE_IN, 0);
	if (!ret && y) {
		t = ex_hbg_vec(y, n);
		ret = pto_hbg_set_tensor(g, *task, PTO_ARG_B, &t,
					 PTO_GRAPH_ROLE_IN, 0);
	} else if (!ret) {
		memcpy(&u, &s, 4);
		ret = pto_hbg_set_scalar(g, *task, 0, u);
	}
	t = ex_hbg_vec(out, n);
	if (!ret)
		ret = pto_hbg_set_tensor(g, *task, PTO_ARG_OUT, &t,
					 PTO_GRAPH_ROLE_OUT, 0);
	return ret;
}

/* @nbuf vectors of @n float32, the first all 2 (a), the second all 3 (b). */
static inline void ex_hbg_bufs(struct pto_dev *dev, struct ex_buf *buf,
			       int nbuf, uint32_t n)
{
	uint32_t i;
	int k;

	for (k = 0; k < nbuf; k++)
		ex_buf_alloc(dev, (uint64_t)n * 4, &buf[k]);
	for (i = 0; i < n; i++) {
		((float *)buf[0].map)[i] = 2;
		((float *)buf[1].map)[i] = 3;
	}
}

/*
 * Run @g on --clusters (0: all) within 60 s (a slow kernel's line-cached
 * run with capture takes more than 10), its stats in @st; --dump-args
 * captures its tasks' arguments into --dump-dir; --trace writes the
 * run's core-side stamps, the last graph's when there are several.
 */
static inline int ex_hbg_launch(pto_hbg *g, const struct ex_opts *opts,
				struct pto_hbg_stats *st)
{
	uint64_t clusters = 0;
	int ret;

	if (opts->clusters)
		clusters = opts->clusters >= 64 ? ~0ULL :
			   (1ULL << opts->clusters) - 1;
	ret = pto_hbg_dump_args(g, opts->dump_level, opts->dump_dir);
	if (ret)
		ex_die("args dump", ret);
	ret = pto_hbg_run(g, clusters, 60000, st);
	if (!ret && opts->trace) {
		ret = pto_hbg_trace_write(g, opts->trace);
		ex_check(ret == 0, "run trace written");
		if (!ret)
			printf("# run trace: %s (ptoctl trace summary %s)\n",
			       opts->trace, opts->trace);
	}
	return ret;
}

/* ex_hbg_launch(), then checks it ran @tasks subtasks. */
static inline int ex_hbg_run(pto_hbg *g, const struct ex_opts *opts,
			     const char *name, uint64_t tasks)
{
	struct pto_hbg_stats st;
	int ret = ex_hbg_launch(g, opts, &st);

	if (ret)
		printf("# %s: %s (bad task %u field %u, failed task %u status %u)\n",
		       name, pto_strerror(ret), st.bad_task, st.bad_field,
		       st.err_task, st.err_status);
	else
		printf("# %s: %llu subtasks on the cores in %llu us\n", name,
		       (unsigned long long)st.tasks,
		       (unsigned long long)st.elapsed_ns / 1000);
	return ret ? ret : st.tasks == tasks ? 0 : -EIO;
}

#endif
