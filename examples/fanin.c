// SPDX-License-Identifier: MIT
/*
 * 64 producers x 64 consumers on the device: producer i fills P_i with 42;
 * every consumer depends on every producer explicitly (add_dep) and copies
 * P_j to C_j. Every C_j[0] must be 42.
 */
#include "example.h"

#define NP 64
#define SLOT 256	/* bytes per tensor: 64 int32, its own lines */

struct fanin_args {
	struct ex_buf *p, *c;
};

static const struct pto_callable k_fill = { .kernel_id = PTO_FUNC_FILL };
static const struct pto_callable k_copy = { .kernel_id = PTO_FUNC_COPY };

static int fanin_dag(pto_orch *o, void *arg)
{
	struct fanin_args *fa = arg;
	struct pto_task prod[NP], h;
	struct pto_task_args args;
	int i, j, ret = 0;

	pto_args_init(&args);
	for (i = 0; !ret && i < NP; i++) {
		struct pto_tensor t = pto_tensor_gm(fa->p->bo, fa->p->map,
						    (uint64_t)i * SLOT, SLOT,
						    PTO_DTYPE_I32);

		pto_args_reset(&args);
		pto_args_add_scalar(&args, 42);
		pto_args_add_tensor(&args, &t, PTO_OUTPUT_EXISTING);
		ret = pto_submit_next_level(o, &k_fill, &args, NULL,
					    pto_on_kind(PTO_WORKER_AIV), &prod[i]);
	}
	for (j = 0; !ret && j < NP; j++) {
		struct pto_tensor in = pto_tensor_gm(fa->p->bo, fa->p->map,
						     (uint64_t)j * SLOT, SLOT,
						     PTO_DTYPE_I32);
		struct pto_tensor out = pto_tensor_gm(fa->c->bo, fa->c->map,
						      (uint64_t)j * SLOT, SLOT,
						      PTO_DTYPE_I32);

		pto_args_reset(&args);
		pto_args_add_tensor(&args, &in, PTO_NO_DEP);
		pto_args_add_tensor(&args, &out, PTO_OUTPUT_EXISTING);
		for (i = 0; i < NP; i++)
			pto_args_add_dep(&args, prod[i]);
		ret = pto_submit_next_level(o, &k_copy, &args, NULL,
					    pto_on_kind(j % 3 ? PTO_WORKER_AIV : PTO_WORKER_AIC),
					    &h);
	}
	pto_args_fini(&args);
	return ret;
}

EX_MAIN(fanin)
{
	struct pto_dev *dev;
	struct ex_buf p, c;
	struct fanin_args fa = { &p, &c };
	pto_orch *o;
	int ret, j, bad = 0;

	if (ex_sched_only(opts, "fanin",
			  "its all-to-all dependencies are not written as a graph yet"))
		return 1;
	ex_open(opts, NULL, &dev, &o);
	ex_buf_alloc(dev, NP * SLOT, &p);
	ex_buf_alloc(dev, NP * SLOT, &c);
	ret = ex_run(o, fanin_dag, &fa, 2 * NP);
	ex_check(ret == 0, "fanin: run completes");
	for (j = 0; j < NP; j++)
		bad += ((int32_t *)((char *)c.map + j * SLOT))[0] != 42;
	ex_check(bad == 0, "fanin: every consumer's output slot[0] = 42");
	if (!ex_close(o, "fanin")) {
		pto_bo_free(p.bo);
		pto_bo_free(c.bo);
		pto_dev_close(dev);
	}
	return ex_failed;
}
