// SPDX-License-Identifier: GPL-2.0-only
/*
 * An application of installed libpto, built outside the tree with only
 * `pkg-config --cflags --libs libpto` (tests/install-check): opens
 * /dev/pto0 and runs a two-task orchestration, c = a + b then d = c + b
 * (the second task depends on the first through c), and checks d.
 * Prints "consumer: ok" and exits 0 when every value is right.
 */
#include <errno.h>
#include <stdio.h>
#include <linux/pto.h>
#include <pto/orch.h>
#include <pto/pto.h>
#include <pto/sched.h>

#define N 1024
#define SZ (N * sizeof(float))

static const struct pto_callable add = { .kernel_id = PTO_FUNC_ADD };

struct bufs {
	struct pto_bo *bo;
	float *map;
	int32_t aiv;	/* worker id of the device's first AIV core */
};

static struct pto_tensor t(struct bufs *b, int i)
{
	return pto_tensor_gm(b->bo, b->map, i * SZ, SZ, PTO_DTYPE_F32);
}

/* out = x + y on AIV core @aiv. */
static int add_task(pto_orch *o, int32_t aiv, struct pto_tensor x,
		    struct pto_tensor y, struct pto_tensor out)
{
	struct pto_task_args args;
	struct pto_task h;
	int ret;

	/* pto_args_add_tensor() returns the tensor's index or -errno. */
	pto_args_init(&args);
	ret = pto_args_add_tensor(&args, &x, PTO_INPUT);
	if (ret >= 0)
		ret = pto_args_add_tensor(&args, &y, PTO_INPUT);
	if (ret >= 0)
		ret = pto_args_add_tensor(&args, &out, PTO_OUTPUT_EXISTING);
	if (ret >= 0)
		ret = pto_submit_next_level(o, &add, &args, NULL,
					    pto_on_worker(aiv), &h);
	pto_args_fini(&args);
	return ret;
}

static int dag(pto_orch *o, void *arg)
{
	struct bufs *b = arg;
	int ret;

	ret = add_task(o, b->aiv, t(b, 0), t(b, 1), t(b, 2));
	return ret ? ret : add_task(o, b->aiv, t(b, 2), t(b, 1), t(b, 3));
}

int main(void)
{
	struct pto_dev_info info;
	struct pto_dev *dev;
	struct bufs b;
	pto_orch *o;
	int i, ret, bad = 0;

	ret = pto_dev_open(0, &dev);
	if (ret) {
		fprintf(stderr, "consumer: /dev/pto0: %s\n", pto_strerror(ret));
		return 1;
	}
	ret = pto_dev_info(dev, &info);
	for (b.aiv = 0; !ret && b.aiv < (int32_t)info.cores; b.aiv++)
		if (info.core_type[b.aiv] == PTO_CORE_AIV)
			break;
	if (!ret && b.aiv == (int32_t)info.cores)
		ret = -ENODEV;
	if (!ret)
		ret = pto_bo_alloc(dev, 4 * SZ, 0, &b.bo);
	if (!ret)
		ret = pto_bo_map(b.bo, (void **)&b.map);
	if (!ret)
		ret = pto_orch_create_device(dev, NULL, NULL, &o);
	if (ret) {
		fprintf(stderr, "consumer: setup: %s\n", pto_strerror(ret));
		pto_dev_close(dev);
		return 1;
	}
	for (i = 0; i < N; i++) {
		b.map[i] = i;
		b.map[N + i] = 2;
		b.map[3 * N + i] = -1;
	}
	ret = pto_orch_run(o, dag, &b);
	if (ret)
		fprintf(stderr, "consumer: run: %s\n", pto_strerror(ret));
	for (i = 0; !ret && i < N; i++)
		if (b.map[3 * N + i] != i + 4)
			bad++;
	if (pto_orch_close(o, 10000))
		return 1;
	pto_orch_destroy(o);
	pto_dev_close(dev);
	if (ret || bad) {
		fprintf(stderr, "consumer: %d of %d values wrong\n", bad, N);
		return 1;
	}
	printf("consumer: ok (ABI %u.%u, %u cores)\n", info.abi_major,
	       info.abi_minor, info.cores);
	return 0;
}
