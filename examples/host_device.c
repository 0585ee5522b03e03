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
#include "example.h"

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

/*
 * The host step, on a SUB worker: tensors[0] is m (INPUT), tensors[1]
 * the auto-allocated t (OUTPUT); both are GM, read and written through
 * their mappings. A wrong m fails the task, and with it the run.
 */
static int check_and_reverse(struct pto_task_ctx *ctx)
{
	struct hd_args *ha = ctx->user;
	const float *m = (const float *)(uintptr_t)ctx->tensors[0].t.data;
	float *t = (float *)(uintptr_t)ctx->tensors[1].t.data;
	unsigned long ok = 0;
	int i;

	atomic_fetch_add(&ha->calls, 1);
	for (i = 0; i < N; i++) {
		if (m[i] != 2.0f * i + 1) {
			snprintf(ctx->errmsg, ctx->errmsg_len,
				 "m[%d] = %g, expected %g", i, m[i],
				 2.0f * i + 1);
			return -EBADMSG;
		}
		ok++;
	}
	for (i = 0; i < N; i++)
		t[i] = m[N - 1 - i];
	atomic_fetch_add(&ha->checked, ok);
	return 0;
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

EX_MAIN(host_device)
{
	struct ex_buf x, f;
	struct hd_args ha = { &x, &f, 0, 0 };
	struct pto_dev *dev;
	pto_orch *o;
	float *fx, *ff;
	int ret, i, bad = 0;

	if (ex_sched_only(opts, "host_device",
			  "a host step reads the device's results between two device phases: one graph cannot hold it"))
		return 1;
	ex_open(opts, NULL, &dev, &o);
	ex_buf_alloc(dev, TILES * N * 4, &x);
	ex_buf_alloc(dev, TILES * N * 4, &f);
	fx = x.map;
	ff = f.map;
	for (i = 0; i < TILES * N; i++) {
		fx[i] = (float)(i % N);
		ff[i] = -1;
	}
	ret = ex_run(o, hd_dag, &ha, TILES * 4);
	ex_check(ret == 0, "host_device: run completes");
	printf("# host callbacks: %lu, elements checked: %lu\n",
	       (unsigned long)ha.calls, (unsigned long)ha.checked);
	ex_check(ha.calls == TILES && ha.checked == (unsigned long)TILES * N,
		 "host_device: the callback saw every intermediate as the device computed it");
	for (i = 0; i < TILES * N; i++)
		bad += ff[i] != (float)(2 * N - 1 - i % N);
	printf("# f[0] = %g, f[%d] = %g\n", ff[0], N - 1, ff[N - 1]);
	ex_check(bad == 0, "host_device: every f[i] = 2N - 1 - i");
	if (!ex_close(o, "host_device")) {
		pto_bo_free(x.bo);
		pto_bo_free(f.bo);
		pto_dev_close(dev);
	}
	return ex_failed;
}
