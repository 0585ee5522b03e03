// SPDX-License-Identifier: MIT
/*
 * Dependency-only tasks on the device. A producer writes X[0] = 42; a chain
 * of 100 noop tasks, each depending on the one before (add_dep); a consumer
 * that depends on the last one copies X to Y: Y[0] = 42. Then the same with
 * 1 producer -> 18 independent dummies -> 1 consumer.
 */
#include "example_hbg.h"

#define CHAIN 100
#define FAN 18

struct chain_args {
	struct ex_buf *x, *y;
	int fan;		/* 0: chain of CHAIN, 1: fan of FAN */
};

static const struct pto_callable k_fill = { .kernel_id = PTO_FUNC_FILL };
static const struct pto_callable k_noop = { .kernel_id = PTO_FUNC_NOOP };
static const struct pto_callable k_copy = { .kernel_id = PTO_FUNC_COPY };

static int chain_dag(pto_orch *o, void *p)
{
	struct chain_args *ca = p;
	struct pto_tensor x = pto_tensor_gm(ca->x->bo, ca->x->map, 0, 64, PTO_DTYPE_I32);
	struct pto_tensor y = pto_tensor_gm(ca->y->bo, ca->y->map, 0, 64, PTO_DTYPE_I32);
	struct pto_task prod, prev, dummies[FAN], last;
	struct pto_task_args args;
	int i, ret, n = ca->fan ? FAN : CHAIN;

	pto_args_init(&args);
	pto_args_add_scalar(&args, 42);
	pto_args_add_tensor(&args, &x, PTO_OUTPUT_EXISTING);
	ret = pto_submit_next_level(o, &k_fill, &args, NULL,
				    pto_on_kind(PTO_WORKER_AIV), &prod);
	prev = prod;
	for (i = 0; !ret && i < n; i++) {
		pto_args_reset(&args);
		pto_args_add_dep(&args, ca->fan ? prod : prev);
		ret = pto_submit_next_level(o, &k_noop, &args, NULL,
					    pto_on_kind(i % 3 ? PTO_WORKER_AIV : PTO_WORKER_AIC),
					    &last);
		if (ca->fan)
			dummies[i] = last;
		prev = last;
	}
	if (!ret) {
		pto_args_reset(&args);
		/* NO_DEP: X gives the consumer no edge to the producer, so
		 * only the add_dep chain orders the copy after the fill. */
		pto_args_add_tensor(&args, &x, PTO_NO_DEP);
		pto_args_add_tensor(&args, &y, PTO_OUTPUT_EXISTING);
		if (ca->fan)
			for (i = 0; i < FAN; i++)
				pto_args_add_dep(&args, dummies[i]);
		else
			pto_args_add_dep(&args, prev);
		ret = pto_submit_next_level(o, &k_copy, &args, NULL,
					    pto_on_kind(PTO_WORKER_AIV), &last);
	}
	pto_args_fini(&args);
	return ret;
}

static void run_one(pto_orch *o, struct ex_buf *x, struct ex_buf *y, int fan)
{
	struct chain_args ca = { x, y, fan };
	int32_t *xv = x->map, *yv = y->map;
	char what[96];
	int ret;

	memset(x->map, 0, x->size);
	memset(y->map, 0, y->size);
	ret = ex_run(o, chain_dag, &ca, (fan ? FAN : CHAIN) + 2);
	snprintf(what, sizeof(what), "chain_dummy %s: run completes",
		 fan ? "1 -> 18 -> 1" : "chain of 100");
	ex_check(ret == 0, what);
	printf("# X[0] = %d, Y[0] = %d\n", xv[0], yv[0]);
	snprintf(what, sizeof(what), "chain_dummy %s: Y[0] = 42",
		 fan ? "1 -> 18 -> 1" : "chain of 100");
	ex_check(yv[0] == 42 && xv[0] == 42, what);
}

/*
 * The same shapes as one graph each (--route resident): the fill on the
 * first AIV, the noops round the cluster's cores, the copy on the first
 * AIV after the last noop (or all of them).
 */
static void run_resident(const struct ex_opts *opts, struct pto_dev *dev,
			 struct ex_buf *x, struct ex_buf *y, int fan)
{
	static const uint32_t fill[3] = { 0, PTO_FUNC_FILL };
	static const uint32_t copy[3] = { 0, PTO_FUNC_COPY };
	static const uint32_t noop[3];
	struct pto_tensor_desc tx = ex_hbg_tensor(x, 64, PTO_DTYPE_I32);
	struct pto_tensor_desc ty = ex_hbg_tensor(y, 64, PTO_DTYPE_I32);
	uint32_t prod, prev, t, last;
	int i, ret, n = fan ? FAN : CHAIN;
	pto_hbg *g = NULL;
	char what[96];

	memset(x->map, 0, x->size);
	memset(y->map, 0, y->size);
	ret = pto_hbg_create(dev, &g);
	ret = ret ?: pto_hbg_add_task(g, PTO_GRAPH_AIV0, fill, &prod);
	ret = ret ?: pto_hbg_set_scalar(g, prod, 0, 42);
	ret = ret ?: pto_hbg_set_tensor(g, prod, PTO_ARG_OUT, &tx,
					PTO_GRAPH_ROLE_OUT, 0);
	ret = ret ?: pto_hbg_add_task(g, PTO_GRAPH_AIV0, copy, &last);
	ret = ret ?: pto_hbg_set_tensor(g, last, PTO_ARG_A, &tx,
					PTO_GRAPH_ROLE_IN, 0);
	ret = ret ?: pto_hbg_set_tensor(g, last, PTO_ARG_OUT, &ty,
					PTO_GRAPH_ROLE_OUT, 0);
	prev = prod;
	for (i = 0; !ret && i < n; i++) {
		ret = pto_hbg_add_task(g, 1u << (i % 3), noop, &t);
		ret = ret ?: pto_hbg_add_edge(g, fan ? prod : prev, t);
		if (fan)
			ret = ret ?: pto_hbg_add_edge(g, t, last);
		prev = t;
	}
	if (!fan)
		ret = ret ?: pto_hbg_add_edge(g, prev, last);
	ret = ret ?: ex_hbg_run(g, opts, "chain_dummy", (uint64_t)n + 2);
	snprintf(what, sizeof(what), "chain_dummy %s: the graph runs",
		 fan ? "1 -> 18 -> 1" : "chain of 100");
	ex_check(ret == 0, what);
	snprintf(what, sizeof(what), "chain_dummy %s: Y[0] = 42 (X[0] = %d)",
		 fan ? "1 -> 18 -> 1" : "chain of 100", ((int32_t *)x->map)[0]);
	ex_check(((int32_t *)y->map)[0] == 42, what);
	pto_hbg_destroy(g);
}

EX_MAIN(chain_dummy)
{
	struct pto_dev *dev;
	struct ex_buf x, y;
	pto_orch *o;

	if (opts->resident) {
		if (pto_dev_open(opts->dev, &dev))
			ex_die("chain_dummy: open the device", -ENODEV);
		ex_buf_alloc(dev, 4096, &x);
		ex_buf_alloc(dev, 4096, &y);
		run_resident(opts, dev, &x, &y, 0);
		run_resident(opts, dev, &x, &y, 1);
		pto_bo_free(x.bo);
		pto_bo_free(y.bo);
		pto_dev_close(dev);
		return ex_failed;
	}
	ex_open(opts, NULL, &dev, &o);
	ex_buf_alloc(dev, 4096, &x);
	ex_buf_alloc(dev, 4096, &y);
	run_one(o, &x, &y, 0);
	run_one(o, &x, &y, 1);
	if (!ex_close(o, "chain_dummy")) {
		pto_bo_free(x.bo);
		pto_bo_free(y.bo);
		pto_dev_close(dev);
	}
	return ex_failed;
}
