// SPDX-License-Identifier: MIT
/*
 * SPMD tasks on the device: one task of block_num blocks of the block_id
 * kernel, each block told its index and writing it into its own 64-byte
 * line. On AIV cores with block_num in {4, 16, 24, 48, 96} (more blocks than
 * cores: blocks are placed as cores free up), and as MIX blocks (each on
 * the three cores of one cluster, started together) with block_num in
 * {2, 8, 12, 24, 48}. Every line must hold its block's index, and nothing
 * else may be written.
 */
#include "example.h"

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

static void run_one(pto_orch *o, struct ex_buf *out, enum pto_worker_kind kind,
		    uint32_t nblocks)
{
	struct spmd_args sa = { out, kind, nblocks };
	int32_t *v = out->map;
	const char *name = kind == PTO_WORKER_MIX ? "MIX" : "AIV";
	uint32_t b, i, bad = 0;
	char what[96];
	int ret;

	memset(out->map, 0xff, out->size);
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
	pto_orch *o;
	unsigned int i;

	if (ex_sched_only(opts, "spmd",
			  "an SPMD task of many blocks has no graph form (a graph task is one cluster's cores)"))
		return 1;
	ex_open(opts, NULL, &dev, &o);
	ex_buf_alloc(dev, 96 * LINE_I32 * 4, &out);
	for (i = 0; i < sizeof(aiv) / sizeof(aiv[0]); i++)
		run_one(o, &out, PTO_WORKER_AIV, aiv[i]);
	for (i = 0; i < sizeof(mix) / sizeof(mix[0]); i++)
		run_one(o, &out, PTO_WORKER_MIX, mix[i]);
	if (!ex_close(o, "spmd")) {
		pto_bo_free(out.bo);
		pto_dev_close(dev);
	}
	return ex_failed;
}
