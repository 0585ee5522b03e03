// SPDX-License-Identifier: MIT
/*
 * SPMD tasks on the device: one task of block_num blocks of the block_id
 * kernel, each block told its index and writing it into its own 64-byte
 * line. On AIV cores with block_num in {4, 16, 24, 48, 96} (more blocks than
 * cores: blocks are placed as cores free up), and as MIX blocks (each on
 * the three cores of one cluster, started together) with block_num in
 * {2, 8, 12, 24, 48}. Every line must hold its block's index, and nothing
 * else may be written. On the resident route the SPMD task is a graph of
 * one task per block, each carrying its block range.
 */
#include "example_hbg.h"

#define LINE_I32 16	/* one 64-byte line */

static const struct pto_callable k_block = { .kernel_id = PTO_FUNC_BLOCK_ID };

struct spmd_args {
	struct ex_buf *out;
	enum pto_worker_kind kind;
	uint32_t nblocks;
};

static int spmd_dag(pto_orch *o, void *arg)
{
	struct spmd_args *sa = arg;
	struct pto_tensor t = pto_tensor_gm(sa->out->bo, sa->out->map, 0,
					    (uint64_t)sa->nblocks * LINE_I32 * 4,
					    PTO_DTYPE_I32);
	struct pto_task_args args;
	struct pto_task h;
	int ret;

	pto_args_init(&args);
	pto_args_add_scalar(&args, LINE_I32);
	pto_args_add_tensor(&args, &t, PTO_OUTPUT_EXISTING);
	ret = pto_submit_spmd(o, &k_block, &args, NULL, sa->kind, sa->nblocks, &h);
	pto_args_fini(&args);
	return ret;
}

/*
 * The same SPMD task as one graph (--route resident): block b is task b
 * with block range (b, nblocks), on either AIV of a cluster (AIV0: the
 * cores move it) or as a MIX task whose three cores share the index.
 */
static int spmd_resident(struct pto_dev *dev, const struct ex_opts *opts,
			 struct ex_buf *out, enum pto_worker_kind kind,
			 uint32_t nblocks)
{
	int mix = kind == PTO_WORKER_MIX;
	struct pto_tensor_desc td = ex_hbg_tensor(out, nblocks * LINE_I32,
						  PTO_DTYPE_I32);
	uint32_t fid[3] = { 0, PTO_FUNC_BLOCK_ID, 0 }, b, t;
	pto_hbg *g = NULL;
	int ret;

	if (mix)
		fid[0] = fid[2] = PTO_FUNC_BLOCK_ID;
	ret = pto_hbg_create(dev, &g);
	for (b = 0; !ret && b < nblocks; b++) {
		ret = pto_hbg_add_task(g, mix ? PTO_GRAPH_MASK_MIX :
					  PTO_GRAPH_AIV0, fid, &t);
		ret = ret ?: pto_hbg_set_block(g, t, b, nblocks);
		ret = ret ?: pto_hbg_set_scalar(g, t, 0, LINE_I32);
		ret = ret ?: pto_hbg_set_tensor(g, t, PTO_ARG_OUT, &td,
						PTO_GRAPH_ROLE_OUT, 0);
	}
	ret = ret ?: ex_hbg_run(g, opts, "spmd", (mix ? 3 : 1) * nblocks);
	pto_hbg_destroy(g);
	return ret;
}

static void run_one(const struct ex_opts *opts, struct pto_dev *dev,
		    pto_orch *o, struct ex_buf *out, enum pto_worker_kind kind,
		    uint32_t nblocks)
{
	struct spmd_args sa = { out, kind, nblocks };
	int32_t *v = out->map;
	const char *name = kind == PTO_WORKER_MIX ? "MIX" : "AIV";
	uint32_t b, i, bad = 0;
	char what[96];
	int ret;

	memset(out->map, 0xff, out->size);
	if (opts->resident)
		ret = spmd_resident(dev, opts, out, kind, nblocks);
	else
		ret = ex_run(o, spmd_dag, &sa, nblocks);
	snprintf(what, sizeof(what), "spmd %s block_num %u: run completes", name,
		 nblocks);
	ex_check(ret == 0, what);
	for (b = 0; b < nblocks; b++) {
		bad += v[b * LINE_I32] != (int32_t)b;
		for (i = 1; i < LINE_I32; i++)
			bad += v[b * LINE_I32 + i] != -1;
	}
	for (i = nblocks * LINE_I32; i < out->size / 4; i++)
		bad += v[i] != -1;
	snprintf(what, sizeof(what),
		 "spmd %s block_num %u: each block wrote its index in its own line",
		 name, nblocks);
	ex_check(bad == 0, what);
}

EX_MAIN(spmd)
{
	static const uint32_t aiv[] = { 4, 16, 24, 48, 96 };
	static const uint32_t mix[] = { 2, 8, 12, 24, 48 };
	struct pto_dev *dev;
	struct ex_buf out;
	pto_orch *o = NULL;
	unsigned int i;

	if (opts->resident) {
		if (pto_dev_open(opts->dev, &dev))
			ex_die("spmd: open the device", -ENODEV);
	} else {
		ex_open(opts, NULL, &dev, &o);
	}
	ex_buf_alloc(dev, 96 * LINE_I32 * 4, &out);
	for (i = 0; i < sizeof(aiv) / sizeof(aiv[0]); i++)
		run_one(opts, dev, o, &out, PTO_WORKER_AIV, aiv[i]);
	for (i = 0; i < sizeof(mix) / sizeof(mix[0]); i++)
		run_one(opts, dev, o, &out, PTO_WORKER_MIX, mix[i]);
	if (opts->resident || !ex_close(o, "spmd")) {
		pto_bo_free(out.bo);
		pto_dev_close(dev);
	}
	return ex_failed;
}
