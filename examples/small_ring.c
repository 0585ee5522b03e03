// SPDX-License-Identifier: MIT
/*
 * A heap ring too small for its scope, on the device. Five tasks in one
 * scope each get an auto-allocated 16 KiB OUTPUT; nothing can be
 * reclaimed before the scope ends. A 64 KiB ring holds only four: the
 * fifth submit fails at once with -EDEADLK (the ring's head is held by
 * the scope the function has open) instead of hanging. An 80 KiB ring is
 * just large enough: the same DAG completes.
 */
#include "example.h"

#define NTASKS 5
#define OUT_BYTES (16 * 1024)

static const struct pto_callable k_fill = { .kernel_id = PTO_FUNC_FILL };

static int ring_dag(pto_orch *o, void *arg)
{
	struct pto_task_args args;
	struct pto_task h;
	int i, ret = 0;

	pto_args_init(&args);
	for (i = 0; !ret && i < NTASKS; i++) {
		struct pto_tensor t = pto_tensor_gm_auto(OUT_BYTES, PTO_DTYPE_I32);

		pto_args_reset(&args);
		pto_args_add_scalar(&args, (uint64_t)i);
		pto_args_add_tensor(&args, &t, PTO_OUTPUT);
		ret = pto_submit_next_level(o, &k_fill, &args, NULL,
					    pto_on_kind(PTO_WORKER_AIV), &h);
	}
	pto_args_fini(&args);
	return ret;
}

static int run_with_ring(const struct ex_opts *opts, uint64_t ring, char *msg,
			 size_t len, double *seconds)
{
	struct pto_orch_config cfg = { .heap_ring_size = ring, .timeout_ms = 300 };
	struct pto_dev *dev;
	pto_orch *o;
	double t0;
	int ret;

	ex_open(opts, &cfg, &dev, &o);
	t0 = ex_now();
	ret = pto_orch_run(o, ring_dag, NULL);
	*seconds = ex_now() - t0;
	snprintf(msg, len, "%s", pto_orch_error(o));
	if (!ex_close(o, "small_ring"))
		pto_dev_close(dev);
	return ret;
}

EX_MAIN(small_ring)
{
	char msg[256];
	double s;
	int ret;

	if (ex_sched_only(opts, "small_ring",
			  "it tests the orchestrator's heap-ring back-pressure, which a graph does not use"))
		return 1;
	ret = run_with_ring(opts, 4 * OUT_BYTES, msg, sizeof(msg), &s);
	printf("# 64 KiB ring: %s (%s) after %.0f ms\n", pto_strerror(ret), msg,
	       s * 1e3);
	ex_check(ret < 0, "small_ring: a too small ring fails the run");
	ex_check(strstr(msg, "heap ring 0") != NULL &&
		 strstr(msg, "increase heap_ring_size") != NULL,
		 "small_ring: the error names the ring and the fix");
	ex_check(s < 5.0, "small_ring: the failure comes after the timeout, not a hang");

	ret = run_with_ring(opts, 5 * OUT_BYTES, msg, sizeof(msg), &s);
	printf("# 80 KiB ring: %s %s\n", pto_strerror(ret), msg);
	ex_check(ret == 0, "small_ring: a just large enough ring completes");
	return ex_failed;
}
