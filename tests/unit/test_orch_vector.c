// SPDX-License-Identifier: MIT
/*
 * The reference runtime's 5-task vector DAG on the in-process backend:
 * c = a + b; in a scope d = c + 1, e = c + 2, g = d * e; f = g + c.
 * With a = 2, b = 3 every element of f is 47.
 */
#include "kselftest_harness.h"
#include "orch_test.h"

#define N (128 * 128)
#define NB (N * sizeof(float))

static int k_add(struct pto_task_ctx *c)
{
	const float *x = (const float *)(uintptr_t)c->tensors[0].t.data;
	const float *y = (const float *)(uintptr_t)c->tensors[1].t.data;
	float *z = (float *)(uintptr_t)c->tensors[2].t.data;
	int i;

	for (i = 0; i < N; i++)
		z[i] = x[i] + y[i];
	return 0;
}

static int k_mul(struct pto_task_ctx *c)
{
	const float *x = (const float *)(uintptr_t)c->tensors[0].t.data;
	const float *y = (const float *)(uintptr_t)c->tensors[1].t.data;
	float *z = (float *)(uintptr_t)c->tensors[2].t.data;
	int i;

	for (i = 0; i < N; i++)
		z[i] = x[i] * y[i];
	return 0;
}

static int k_adds(struct pto_task_ctx *c)
{
	const float *x = (const float *)(uintptr_t)c->tensors[0].t.data;
	float *z = (float *)(uintptr_t)c->tensors[1].t.data;
	float s;
	int i;

	memcpy(&s, &c->scalars[0], sizeof(s));
	for (i = 0; i < N; i++)
		z[i] = x[i] + s;
	return 0;
}

struct vec {
	float *a, *b, *f;
	int use_sub;
};

static uint64_t fbits(float v)
{
	uint64_t u = 0;

	memcpy(&u, &v, sizeof(v));
	return u;
}

/* x (op) y -> out; out may be an auto-allocated OUTPUT (data == 0). */
static int op3(pto_orch *o, struct vec *v, pto_kernel_fn fn,
	       struct pto_tensor *x, struct pto_tensor *y, struct pto_tensor *out,
	       int32_t worker)
{
	struct pto_callable c = { .fn = fn };
	struct pto_task_args a;
	int err;

	pto_args_init(&a);
	pto_args_add_tensor(&a, x, PTO_INPUT);
	pto_args_add_tensor(&a, y, PTO_INPUT);
	pto_args_add_tensor(&a, out, PTO_OUTPUT);
	if (v->use_sub)
		err = pto_submit_sub(o, &c, &a, NULL);
	else
		err = pto_submit_next_level(o, &c, &a, NULL,
					    worker >= 0 ? pto_on_worker(worker) :
							  pto_on_kind(PTO_WORKER_AIV),
					    NULL);
	*out = a.tensors[2].t;	/* auto-allocated address handed back */
	pto_args_fini(&a);
	return err;
}

static int op_adds(pto_orch *o, struct vec *v, struct pto_tensor *x, float s,
		   struct pto_tensor *out)
{
	struct pto_callable c = { .fn = k_adds };
	struct pto_task_args a;
	int err;

	pto_args_init(&a);
	pto_args_add_tensor(&a, x, PTO_INPUT);
	pto_args_add_tensor(&a, out, PTO_OUTPUT);
	pto_args_add_scalar(&a, fbits(s));
	pto_args_set_dump(&a, 1, 0, 1);
	if (v->use_sub)
		err = pto_submit_sub(o, &c, &a, NULL);
	else
		err = pto_submit_next_level(o, &c, &a, NULL, pto_on_kind(PTO_WORKER_AIV),
					    NULL);
	*out = a.tensors[1].t;
	pto_args_fini(&a);
	return err;
}

static int vector_dag(pto_orch *o, void *arg)
{
	struct vec *v = arg;
	struct pto_tensor a = pto_tensor_host(v->a, NB);
	struct pto_tensor b = pto_tensor_host(v->b, NB);
	struct pto_tensor f = pto_tensor_host(v->f, NB);
	struct pto_tensor c = { .nbytes = NB }, d = { .nbytes = NB },
			  e = { .nbytes = NB }, g = { .nbytes = NB };
	int err;

	err = op3(o, v, k_add, &a, &b, &c, 0);
	if (err)
		return err;
	if (!c.data)
		return -EFAULT;	/* the auto-allocated address came back */
	err = pto_scope_begin(o);
	err = err ?: op_adds(o, v, &c, 1.0f, &d);
	err = err ?: op_adds(o, v, &c, 2.0f, &e);
	err = err ?: op3(o, v, k_mul, &d, &e, &g, 1);
	err = err ?: op3(o, v, k_add, &g, &c, &f, -1);
	if (err)
		return err;
	return pto_scope_end(o);
}

static void run_vector(struct __test_metadata *_metadata, int use_sub)
{
	static const struct pto_worker_desc w[] = {
		OT_WORKER(0, PTO_WORKER_AIV), OT_WORKER(1, PTO_WORKER_AIV),
		OT_WORKER(7, PTO_WORKER_SUB),
	};
	struct pto_orch_config cfg = { .heap_ring_size = 1 << 22, .task_window = 16,
				       .workers = w, .nworkers = 3 };
	struct vec v = { .use_sub = use_sub };
	pto_orch *o;
	int i, bad = 0;

	v.a = malloc(NB);
	v.b = malloc(NB);
	v.f = malloc(NB);
	for (i = 0; i < N; i++) {
		v.a[i] = 2.0f;
		v.b[i] = 3.0f;
		v.f[i] = 0.0f;
	}
	ASSERT_EQ(0, pto_orch_create_inproc(&cfg, &o));
	ASSERT_EQ(0, pto_orch_run(o, vector_dag, &v));
	for (i = 0; i < N; i++)
		bad += v.f[i] != 47.0f;
	EXPECT_EQ(0, bad);
	EXPECT_EQ(47.0f, v.f[0]);
	EXPECT_EQ(47.0f, v.f[N - 1]);
	/* Everything came back: slots, heap bytes, TensorMap entries. */
	EXPECT_TRUE(ot_empty(o));
	ASSERT_EQ(0, pto_orch_close(o, 1000));
	ASSERT_EQ(0, pto_orch_destroy(o));
	free(v.a);
	free(v.b);
	free(v.f);
}

TEST(vector_f47_next_level)
{
	run_vector(_metadata, 0);
}

TEST(vector_f47_sub)
{
	run_vector(_metadata, 1);
}

/* Run it 50 times pipelined (depth 2) on one orchestrator. */
TEST(vector_f47_pipelined)
{
	struct pto_orch_config cfg = { .heap_ring_size = 1 << 22, .task_window = 16 };
	struct vec v[2] = { { 0 }, { 0 } };
	pto_run *r[2] = { NULL, NULL };
	pto_orch *o;
	int it, i, k;

	for (k = 0; k < 2; k++) {
		v[k].use_sub = 1;
		v[k].a = malloc(NB);
		v[k].b = malloc(NB);
		v[k].f = malloc(NB);
		for (i = 0; i < N; i++) {
			v[k].a[i] = 2.0f;
			v[k].b[i] = 3.0f;
		}
	}
	ASSERT_EQ(0, pto_orch_create_inproc(&cfg, &o));
	for (it = 0; it < 50; it++) {
		k = it & 1;
		if (r[k]) {
			ASSERT_EQ(0, pto_run_wait(r[k], -1));
			for (i = 0; i < N; i++) {
				ASSERT_EQ(47.0f, v[k].f[i]) TH_LOG("run %d, f[%u]", it, i);
			}
			pto_run_release(r[k]);
		}
		memset(v[k].f, 0, NB);
		ASSERT_EQ(0, pto_run_start(o, vector_dag, &v[k], &r[k]));
	}
	for (k = 0; k < 2; k++) {
		ASSERT_EQ(0, pto_run_wait(r[k], -1));
		for (i = 0; i < N; i++) {
			ASSERT_EQ(47.0f, v[k].f[i]) TH_LOG("last runs, f[%u]", i);
		}
		pto_run_release(r[k]);
		free(v[k].a);
		free(v[k].b);
		free(v[k].f);
	}
	EXPECT_TRUE(ot_empty(o));
	ASSERT_EQ(0, pto_orch_close(o, 1000));
	ASSERT_EQ(0, pto_orch_destroy(o));
}

TEST_HARNESS_MAIN
