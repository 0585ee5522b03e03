// SPDX-License-Identifier: GPL-2.0
/*
 * A device kernel's arguments on the scheduler route: a kernel finds its
 * tensors by position, whatever their tags. Tags order tasks at submit;
 * a task ordered only by explicit dependencies, its tensors all tagged
 * NO_DEP, still reads its inputs and writes its output.
 */
#include <stdio.h>
#include <pto/orch.h>
#include <pto/pto.h>
#include <pto/sched.h>
#include "kselftest_harness.h"
#include "pto_selftest.h"

#define N 64

static const struct pto_callable k_adds = {
	.kernel_id = PTO_FUNC_ADD_SCALAR };
static const struct pto_callable k_copy = { .kernel_id = PTO_FUNC_COPY };
static const struct pto_callable k_add = { .kernel_id = PTO_FUNC_ADD };

FIXTURE(args) {
	struct pto_dev *dev;
	pto_orch *o;
	struct pto_bo *bo;
	int32_t *map;
	struct pto_task h[3];
};

FIXTURE_SETUP(args)
{
	struct pto_sched_config sc = { .threads = 1 };

	ASSERT_EQ(0, pto_dev_open(0, &self->dev));
	ASSERT_EQ(0, pto_bo_alloc(self->dev, 1 << 16, 0, &self->bo));
	ASSERT_EQ(0, pto_bo_map(self->bo, (void **)&self->map));
	ASSERT_EQ(0, pto_orch_create_device(self->dev, NULL, &sc, &self->o));
}

FIXTURE_TEARDOWN(args)
{
	EXPECT_EQ(0, pto_orch_close(self->o, 10000));
	EXPECT_EQ(0, pto_orch_destroy(self->o));
	pto_bo_free(self->bo);
	pto_dev_close(self->dev);
}

/* i32 tensor @k of the fixture buffer: N elements at element k * N. */
static struct pto_tensor tk(struct _test_data_args *self, uint32_t k)
{
	return pto_tensor_gm(self->bo, self->map, k * N * 4ULL, N * 4ULL,
			     PTO_DTYPE_I32);
}

/*
 * y = x + 5 (y tagged OUTPUT_EXISTING); then z = copy(y) and w = y + z
 * with every tensor tagged NO_DEP, each after the task before it through
 * an explicit dependency.
 */
static int nodep_dag(pto_orch *o, void *arg)
{
	struct _test_data_args *self = arg;
	struct pto_tensor x = tk(self, 0), y = tk(self, 1), z = tk(self, 2);
	struct pto_tensor w = tk(self, 3);
	struct pto_task_args a;
	int ret;

	pto_args_init(&a);
	pto_args_add_scalar(&a, 5);
	pto_args_add_tensor(&a, &x, PTO_INPUT);
	pto_args_add_tensor(&a, &y, PTO_OUTPUT_EXISTING);
	ret = pto_submit_next_level(o, &k_adds, &a, NULL,
				    pto_on_kind(PTO_WORKER_AIV), &self->h[0]);
	pto_args_reset(&a);
	pto_args_add_tensor(&a, &y, PTO_NO_DEP);
	pto_args_add_tensor(&a, &z, PTO_NO_DEP);
	pto_args_add_dep(&a, self->h[0]);
	if (!ret)
		ret = pto_submit_next_level(o, &k_copy, &a, NULL,
					    pto_on_kind(PTO_WORKER_AIV),
					    &self->h[1]);
	pto_args_reset(&a);
	pto_args_add_tensor(&a, &y, PTO_NO_DEP);
	pto_args_add_tensor(&a, &z, PTO_NO_DEP);
	pto_args_add_tensor(&a, &w, PTO_NO_DEP);
	pto_args_add_dep(&a, self->h[1]);
	if (!ret)
		ret = pto_submit_next_level(o, &k_add, &a, NULL,
					    pto_on_kind(PTO_WORKER_AIC),
					    &self->h[2]);
	pto_args_fini(&a);
	return ret;
}

TEST_F(args, nodep_output_with_an_explicit_dependency_is_written)
{
	int32_t *x = self->map, *y = x + N, *z = x + 2 * N, *w = x + 3 * N;
	int i, ret;

	for (i = 0; i < N; i++) {
		x[i] = 3 * i + 1;
		y[i] = z[i] = w[i] = -1;
	}
	ret = pto_orch_run(self->o, nodep_dag, self);
	ASSERT_EQ(0, ret) TH_LOG("%s", pto_orch_error(self->o));
	for (i = 0; i < N; i++) {
		EXPECT_EQ(3 * i + 6, y[i]) TH_LOG("y[%d]", i);
		EXPECT_EQ(3 * i + 6, z[i]) TH_LOG("z[%d]", i);
		EXPECT_EQ(6 * i + 12, w[i]) TH_LOG("w[%d]", i);
	}
	for (i = 0; i < N; i++)
		EXPECT_EQ(3 * i + 1, x[i]) TH_LOG("x[%d]", i);
}

/*
 * The tags of a copy's two tensors, every pair: the same input read and
 * the same output written, the output's tag INPUT included (position,
 * not tag, names the output).
 */
static int tag_pair_dag(pto_orch *o, void *arg)
{
	struct _test_data_args *self = arg;
	struct pto_tensor x = tk(self, 0);
	struct pto_task_args a;
	unsigned int p;
	int ret = 0;

	pto_args_init(&a);
	for (p = 0; p < PTO_TAG_NR * PTO_TAG_NR && !ret; p++) {
		struct pto_tensor out = tk(self, 1 + p);

		pto_args_reset(&a);
		pto_args_add_tensor(&a, &x, (enum pto_tag)(p % PTO_TAG_NR));
		pto_args_add_tensor(&a, &out, (enum pto_tag)(p / PTO_TAG_NR));
		ret = pto_submit_next_level(o, &k_copy, &a, NULL,
					    pto_on_kind(PTO_WORKER_AIV), NULL);
	}
	pto_args_fini(&a);
	return ret;
}

TEST_F(args, copy_reads_and_writes_by_position_under_every_tag_pair)
{
	int32_t *x = self->map;
	unsigned int p;
	int i;

	for (i = 0; i < N; i++)
		x[i] = 1000 - 7 * i;
	for (i = N; i < (int)(1 + PTO_TAG_NR * PTO_TAG_NR) * N; i++)
		x[i] = -1;
	ASSERT_EQ(0, pto_orch_run(self->o, tag_pair_dag, self))
		TH_LOG("%s", pto_orch_error(self->o));
	for (p = 0; p < PTO_TAG_NR * PTO_TAG_NR; p++)
		for (i = 0; i < N; i++)
			EXPECT_EQ(1000 - 7 * i, x[(1 + p) * N + i])
				TH_LOG("tags %u/%u, element %d",
				       p % PTO_TAG_NR, p / PTO_TAG_NR, i);
}

TEST_HARNESS_MAIN
