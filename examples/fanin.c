// SPDX-License-Identifier: MIT
/*
 * 64 producers x 64 consumers on the device: producer i fills P_i with 42;
 * every consumer depends on every producer explicitly (add_dep) and copies
 * P_j to C_j. Every C_j[0] must be 42.
 */
#include "example_hbg.h"

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

/* Slot @i of @b: 64 int32 at byte i * SLOT. */
static struct pto_tensor_desc slot(const struct ex_buf *b, int i)
{
	struct pto_tensor_desc t = ex_hbg_tensor(b, SLOT / 4, PTO_DTYPE_I32);

	t.addr += (uint64_t)i * SLOT;
	return t;
}

/*
 * The same as one graph (--route resident): the producers on the AIVs,
 * the consumers round the cluster's cores, 64 x 64 edges.
 */
static int fanin_resident(struct pto_dev *dev, const struct ex_opts *opts,
			  struct ex_buf *p, struct ex_buf *c)
{
	uint32_t fid[3], prod[NP], t;
	struct pto_tensor_desc td;
	pto_hbg *g = NULL;
	int i, j, ret;

	ret = pto_hbg_create(dev, &g);
	for (i = 0; !ret && i < NP; i++) {
		memset(fid, 0, sizeof(fid));
		fid[1 + i % 2] = PTO_FUNC_FILL;
		td = slot(p, i);
		ret = pto_hbg_add_task(g, PTO_GRAPH_AIV0 << (i % 2), fid,
				       &prod[i]);
		ret = ret ?: pto_hbg_set_scalar(g, prod[i], 0, 42);
		ret = ret ?: pto_hbg_set_tensor(g, prod[i], PTO_ARG_OUT, &td,
						PTO_GRAPH_ROLE_OUT, 0);
	}
	for (j = 0; !ret && j < NP; j++) {
		memset(fid, 0, sizeof(fid));
		fid[j % 3] = PTO_FUNC_COPY;
		ret = pto_hbg_add_task(g, 1u << (j % 3), fid, &t);
		td = slot(p, j);
		ret = ret ?: pto_hbg_set_tensor(g, t, PTO_ARG_A, &td,
						PTO_GRAPH_ROLE_IN, 0);
		td = slot(c, j);
		ret = ret ?: pto_hbg_set_tensor(g, t, PTO_ARG_OUT, &td,
						PTO_GRAPH_ROLE_OUT, 0);
		for (i = 0; !ret && i < NP; i++)
			ret = pto_hbg_add_edge(g, prod[i], t);
	}
	ret = ret ?: ex_hbg_run(g, opts, "fanin", 2 * NP);
	pto_hbg_destroy(g);
	return ret;
}

EX_MAIN(fanin)
{
	struct pto_dev *dev;
	struct ex_buf p, c;
	struct fanin_args fa = { &p, &c };
	pto_orch *o;
	int ret, j, bad = 0;

	if (opts->resident) {
		if (pto_dev_open(opts->dev, &dev))
			ex_die("fanin: open the device", -ENODEV);
	} else {
		ex_open(opts, NULL, &dev, &o);
	}
	ex_buf_alloc(dev, NP * SLOT, &p);
	ex_buf_alloc(dev, NP * SLOT, &c);
	if (opts->resident)
		ret = fanin_resident(dev, opts, &p, &c);
	else
		ret = ex_run(o, fanin_dag, &fa, 2 * NP);
	ex_check(ret == 0, "fanin: run completes");
	for (j = 0; j < NP; j++)
		bad += ((int32_t *)((char *)c.map + j * SLOT))[0] != 42;
	ex_check(bad == 0, "fanin: every consumer's output slot[0] = 42");
	if (opts->resident) {
		pto_bo_free(p.bo);
		pto_bo_free(c.bo);
		pto_dev_close(dev);
	} else if (!ex_close(o, "fanin")) {
		pto_bo_free(p.bo);
		pto_bo_free(c.bo);
		pto_dev_close(dev);
	}
	return ex_failed;
}
