// SPDX-License-Identifier: MIT
/*
 * A heap ring too small for its scope, on the device. Five tasks in one
 * scope each get an auto-allocated 16 KiB OUTPUT; nothing can be
 * reclaimed before the scope ends. A 64 KiB ring holds only four: the
 * fifth submit fails at once with -EDEADLK (the ring's head is held by
 * the scope the function has open) instead of hanging. An 80 KiB ring is
 * just large enough: the same DAG completes.
 */
#include "example_hbg.h"

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

/*
 * The five fill tasks as one graph whose outputs the caller lays out in
 * one GM buffer of @bytes, task i's at i * OUT_BYTES, every int32 -1
 * before. Returns pto_hbg_run()'s result, its stats in @st.
 */
static int ring_graph(struct pto_dev *dev, const struct ex_opts *opts,
		      uint64_t bytes, struct ex_buf *b,
		      struct pto_hbg_stats *st, double *seconds)
{
	uint32_t fid[3] = { 0, PTO_FUNC_FILL, 0 }, t;
	struct pto_tensor_desc td;
	pto_hbg *g = NULL;
	double t0;
	int i, ret;

	ex_buf_alloc(dev, bytes, b);
	memset(b->map, 0xff, bytes);
	ret = pto_hbg_create(dev, &g);
	for (i = 0; !ret && i < NTASKS; i++) {
		td = ex_hbg_tensor(b, OUT_BYTES / 4, PTO_DTYPE_I32);
		td.addr += (uint64_t)i * OUT_BYTES;
		ret = pto_hbg_add_task(g, PTO_GRAPH_AIV0, fid, &t);
		ret = ret ?: pto_hbg_set_scalar(g, t, 0, (uint64_t)i);
		ret = ret ?: pto_hbg_set_tensor(g, t, PTO_ARG_OUT, &td,
						PTO_GRAPH_ROLE_OUT, 0);
	}
	if (ret)
		ex_die("small_ring: build the graph", ret);
	t0 = ex_now();
	ret = ex_hbg_launch(g, opts, st);
	*seconds = ex_now() - t0;
	pto_hbg_destroy(g);
	return ret;
}

/* Outputs 0..@n - 1 of @b hold their fill value, the rest still -1. */
static int ring_filled(const struct ex_buf *b, int n)
{
	int i, j, bad = 0;

	for (i = 0; i < (int)(b->size / OUT_BYTES); i++)
		for (j = 0; j < OUT_BYTES / 4; j++)
			bad += ((int32_t *)b->map)[i * OUT_BYTES / 4 + j] !=
			       (i < n ? i : -1);
	return bad == 0;
}

/*
 * The same on the resident route (--route resident). A graph has no heap
 * ring: the caller places every output, so the space too small is its
 * buffer. In 64 KiB the fifth output lies past its end, in no buffer of
 * the caller (the run's others, the graph image and the cores' payloads,
 * are smaller than an output up to 10 clusters), and the kernel refuses
 * the graph before any core runs a task, naming the first bad task and
 * field; the fix, the size the outputs need, is this example's to say.
 * In 80 KiB the same graph completes.
 */
static int small_ring_resident(const struct ex_opts *opts)
{
	struct pto_hbg_stats st;
	struct pto_dev *dev;
	struct ex_buf b;
	double s;
	int ret;

	ret = pto_dev_open(opts->dev, &dev);
	if (ret)
		ex_die("small_ring: open the device", ret);
	ret = ring_graph(dev, opts, 4 * OUT_BYTES, &b, &st, &s);
	printf("# 64 KiB buffer: %s after %.0f ms: task %d, field %u%s; the outputs need %d KiB\n",
	       pto_strerror(ret), s * 1e3, (int)st.bad_task, st.bad_field,
	       st.bad_field == PTO_GRAPH_FIELD_TENSOR_ADDR ?
	       " (tensor address)" : "", NTASKS * OUT_BYTES / 1024);
	ex_check(ret == -EINVAL, "small_ring: a too small buffer refuses the graph");
	ex_check(st.bad_task == NTASKS - 1 &&
		 st.bad_field == PTO_GRAPH_FIELD_TENSOR_ADDR,
		 "small_ring: the refusal names task 4 and its tensor address");
	ex_check(st.tasks == 0 && ring_filled(&b, 0),
		 "small_ring: no core ran a task of the refused graph");
	ex_check(s < 5.0, "small_ring: the refusal comes at once, not a hang");
	pto_bo_free(b.bo);

	ret = ring_graph(dev, opts, 5 * OUT_BYTES, &b, &st, &s);
	printf("# 80 KiB buffer: %s, %llu subtasks on the cores\n",
	       pto_strerror(ret), (unsigned long long)st.tasks);
	ex_check(ret == 0 && st.tasks == NTASKS,
		 "small_ring: a just large enough buffer completes");
	ex_check(ring_filled(&b, NTASKS),
		 "small_ring: every output holds its fill value");
	pto_bo_free(b.bo);
	pto_dev_close(dev);
	return ex_failed;
}

EX_MAIN(small_ring)
{
	char msg[256];
	double s;
	int ret;

	if (opts->resident)
		return small_ring_resident(opts);
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
