// SPDX-License-Identifier: MIT
/*
 * A host callback in a device DAG, for each of TILES float32 tiles x of
 * N elements (x[i] = i): on the device m = x * 2 + 1; on the host a SUB
 * task checks every element of m and reverses it, t[i] = m[N - 1 - i]
 * (a step no device kernel does); on the device again f = t + x. Every
 * f[i] must be 2N - 1 - i. The dependencies are the GM tensors' own: the
 * callback waits for m, the last add for t; while the host works on one
 * tile the cores compute the next.
 */
#include <stdatomic.h>
#include "example_hbg.h"

#define N 1024
#define TILES 8

struct hd_args {
	struct ex_buf *x, *f;
	_Atomic unsigned long checked;	/* elements the callback found right */
	_Atomic unsigned long calls;
};

static const struct pto_callable k_muls = { .kernel_id = PTO_FUNC_MUL_SCALAR };
static const struct pto_callable k_adds = { .kernel_id = PTO_FUNC_ADD_SCALAR };
static const struct pto_callable k_add = { .kernel_id = PTO_FUNC_ADD };

static uint64_t f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

/* The host step on one tile, on either route: check every element of m,
 * then t[i] = m[N - 1 - i]. */
static int check_reverse_tile(struct hd_args *ha, const float *m, float *t,
			      char *errmsg, size_t len)
{
	unsigned long ok = 0;
	int i;

	atomic_fetch_add(&ha->calls, 1);
	for (i = 0; i < N; i++) {
		if (m[i] != 2.0f * i + 1) {
			snprintf(errmsg, len, "m[%d] = %g, expected %g", i,
				 m[i], 2.0f * i + 1);
			return -EBADMSG;
		}
		ok++;
	}
	for (i = 0; i < N; i++)
		t[i] = m[N - 1 - i];
	atomic_fetch_add(&ha->checked, ok);
	return 0;
}

/*
 * The host step, on a SUB worker: tensors[0] is m (INPUT), tensors[1]
 * the auto-allocated t (OUTPUT); both are GM, read and written through
 * their mappings. A wrong m fails the task, and with it the run.
 */
static int check_and_reverse(struct pto_task_ctx *ctx)
{
	return check_reverse_tile(ctx->user,
				  (const float *)(uintptr_t)ctx->tensors[0].t.data,
				  (float *)(uintptr_t)ctx->tensors[1].t.data,
				  ctx->errmsg, ctx->errmsg_len);
}

/* out = in OP scalar (@y NULL) or in + y, on an AIV core; an
 * auto-allocated @out gets its GM address back. */
static int dev_op(pto_orch *o, const struct pto_callable *k,
		  const struct pto_tensor *in, const struct pto_tensor *y,
		  const float *scalar, struct pto_tensor *out, enum pto_tag tag)
{
	struct pto_task_args args;
	int ret;

	pto_args_init(&args);
	pto_args_add_tensor(&args, in, PTO_INPUT);
	if (y)
		pto_args_add_tensor(&args, y, PTO_INPUT);
	if (scalar)
		pto_args_add_scalar(&args, f32_bits(*scalar));
	ret = pto_args_add_tensor(&args, out, tag);
	if (ret >= 0)
		ret = pto_submit_next_level(o, k, &args, NULL,
					    pto_on_kind(PTO_WORKER_AIV), NULL);
	if (ret >= 0)
		*out = args.tensors[args.ntensors - 1].t;
	pto_args_fini(&args);
	return ret < 0 ? ret : 0;
}

static int host_step(pto_orch *o, struct hd_args *ha,
		     const struct pto_tensor *m, struct pto_tensor *t)
{
	const struct pto_callable cb = { .fn = check_and_reverse, .user = ha };
	struct pto_task_args args;
	int ret;

	pto_args_init(&args);
	pto_args_add_tensor(&args, m, PTO_INPUT);
	ret = pto_args_add_tensor(&args, t, PTO_OUTPUT);
	if (ret >= 0)
		ret = pto_submit_sub(o, &cb, &args, NULL);
	if (ret >= 0)
		*t = args.tensors[1].t;
	pto_args_fini(&args);
	return ret < 0 ? ret : 0;
}

static int hd_dag(pto_orch *o, void *arg)
{
	struct hd_args *ha = arg;
	float two = 2, one = 1;
	int k, ret = 0;

	for (k = 0; !ret && k < TILES; k++) {
		struct pto_tensor x = ex_f32(ha->x, (uint64_t)k * N * 4, N);
		struct pto_tensor f = ex_f32(ha->f, (uint64_t)k * N * 4, N);
		struct pto_tensor c = pto_tensor_gm_auto(N * 4, PTO_DTYPE_F32);
		struct pto_tensor m = c, t = c;

		/* The tile's intermediates go back to the ring after it. */
		ret = pto_scope_begin(o);
		if (ret)
			return ret;
		ret = dev_op(o, &k_muls, &x, NULL, &two, &c, PTO_OUTPUT);
		if (!ret)
			ret = dev_op(o, &k_adds, &c, NULL, &one, &m, PTO_OUTPUT);
		if (!ret)
			ret = host_step(o, ha, &m, &t);
		if (!ret)
			ret = dev_op(o, &k_add, &t, &x, NULL, &f,
				     PTO_OUTPUT_EXISTING);
		pto_scope_end(o);
	}
	return ret;
}

/* Tile @k of @b: N float32 at byte k * N * 4. */
static struct pto_tensor_desc tile(const struct ex_buf *b, int k)
{
	struct pto_tensor_desc t = ex_hbg_vec(b, N);

	t.addr += (uint64_t)k * N * 4;
	return t;
}

/* A graph task out = a OP s (@b NULL) or a + b on tile @k, on an AIV. */
static int hbg_tile_op(pto_hbg *g, uint32_t func, const struct ex_buf *a,
		       const struct ex_buf *b, float s,
		       const struct ex_buf *out, int k, uint32_t *task)
{
	uint32_t fid[3] = { 0, 0, 0 }, mask = PTO_GRAPH_AIV0 << (k % 2);
	struct pto_tensor_desc td;
	int ret;

	fid[1 + k % 2] = func;
	ret = pto_hbg_add_task(g, mask, fid, task);
	td = tile(a, k);
	ret = ret ?: pto_hbg_set_tensor(g, *task, PTO_ARG_A, &td,
					PTO_GRAPH_ROLE_IN, 0);
	if (b) {
		td = tile(b, k);
		ret = ret ?: pto_hbg_set_tensor(g, *task, PTO_ARG_B, &td,
						PTO_GRAPH_ROLE_IN, 0);
	} else {
		ret = ret ?: pto_hbg_set_scalar(g, *task, 0, f32_bits(s));
	}
	td = tile(out, k);
	return ret ?: pto_hbg_set_tensor(g, *task, PTO_ARG_OUT, &td,
					 PTO_GRAPH_ROLE_OUT, 0);
}

/*
 * The same computation on the resident route (--route resident): one
 * graph m = x * 2 + 1 for every tile, the host step on every tile, a
 * second graph f = t + x. A graph holds no host task, so the host step
 * lies between two graph runs: it waits for the first graph's last tile
 * and the cores idle while it works, no overlap of the two. @c, @m and
 * @t are TILES * N float32 each.
 */
static int hd_resident(struct pto_dev *dev, const struct ex_opts *opts,
		       struct hd_args *ha, struct ex_buf *c, struct ex_buf *m,
		       struct ex_buf *t)
{
	uint32_t a, b;
	char why[128];
	pto_hbg *g = NULL;
	int k, ret;

	ret = pto_hbg_create(dev, &g);
	for (k = 0; !ret && k < TILES; k++) {
		ret = hbg_tile_op(g, PTO_FUNC_MUL_SCALAR, ha->x, NULL, 2, c, k,
				  &a);
		ret = ret ?: hbg_tile_op(g, PTO_FUNC_ADD_SCALAR, c, NULL, 1, m,
					 k, &b);
		ret = ret ?: pto_hbg_add_edge(g, a, b);
	}
	ret = ret ?: ex_hbg_run(g, opts, "host_device: m = x * 2 + 1",
				2 * TILES);
	pto_hbg_destroy(g);
	for (k = 0; !ret && k < TILES; k++) {
		ret = check_reverse_tile(ha, (float *)m->map + k * N,
					 (float *)t->map + k * N, why,
					 sizeof(why));
		if (ret)
			printf("# host step, tile %d: %s\n", k, why);
	}
	if (ret)
		return ret;
	g = NULL;
	ret = pto_hbg_create(dev, &g);
	for (k = 0; !ret && k < TILES; k++)
		ret = hbg_tile_op(g, PTO_FUNC_ADD, t, ha->x, 0, ha->f, k, &a);
	ret = ret ?: ex_hbg_run(g, opts, "host_device: f = t + x", TILES);
	pto_hbg_destroy(g);
	return ret;
}

EX_MAIN(host_device)
{
	struct ex_buf x, f, cmt[3];	/* cmt: the graphs' c, m and t */
	struct hd_args ha = { &x, &f, 0, 0 };
	struct pto_dev *dev;
	pto_orch *o = NULL;
	float *fx, *ff;
	int ret, i, bad = 0;

	if (opts->resident) {
		ret = pto_dev_open(opts->dev, &dev);
		if (ret)
			ex_die("host_device: open the device", ret);
	} else {
		ex_open(opts, NULL, &dev, &o);
	}
	ex_buf_alloc(dev, TILES * N * 4, &x);
	ex_buf_alloc(dev, TILES * N * 4, &f);
	fx = x.map;
	ff = f.map;
	for (i = 0; i < TILES * N; i++) {
		fx[i] = (float)(i % N);
		ff[i] = -1;
	}
	if (opts->resident) {
		for (i = 0; i < 3; i++)
			ex_buf_alloc(dev, TILES * N * 4, &cmt[i]);
		ret = hd_resident(dev, opts, &ha, &cmt[0], &cmt[1], &cmt[2]);
	} else {
		ret = ex_run(o, hd_dag, &ha, TILES * 4);
	}
	ex_check(ret == 0, "host_device: run completes");
	printf("# host callbacks: %lu, elements checked: %lu\n",
	       (unsigned long)ha.calls, (unsigned long)ha.checked);
	ex_check(ha.calls == TILES && ha.checked == (unsigned long)TILES * N,
		 "host_device: the callback saw every intermediate as the device computed it");
	for (i = 0; i < TILES * N; i++)
		bad += ff[i] != (float)(2 * N - 1 - i % N);
	printf("# f[0] = %g, f[%d] = %g\n", ff[0], N - 1, ff[N - 1]);
	ex_check(bad == 0, "host_device: every f[i] = 2N - 1 - i");
	if (opts->resident) {
		for (i = 0; i < 3; i++)
			pto_bo_free(cmt[i].bo);
		pto_bo_free(x.bo);
		pto_bo_free(f.bo);
		pto_dev_close(dev);
	} else if (!ex_close(o, "host_device")) {
		pto_bo_free(x.bo);
		pto_bo_free(f.bo);
		pto_dev_close(dev);
	}
	return ex_failed;
}
