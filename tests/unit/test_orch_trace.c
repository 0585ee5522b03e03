// SPDX-License-Identifier: MIT
/*
 * The run trace of a real orchestrator (pto_orch_config.trace_bytes,
 * pto_orch_trace_write): a diamond and an independent task on the
 * in-process workers, read back with ptoctl trace's reader. Every task
 * once, every stamp in its life's order, each task's fan-in exactly the
 * producers its tensors name; off, nothing; a small buffer drops and
 * counts, and the run still completes; runs left out by
 * pto_orch_trace_enable() leave no record.
 */
#include <stdio.h>
#include <unistd.h>
#include "kselftest_harness.h"
#include <pto/orch.h>
#include "../../tools/ptoctl_json.c"
#include "../../tools/ptoctl_trace_read.c"

#define NT 5			/* A; B, C read A; D reads B, C; E alone */

struct diamond {
	int buf[4];
	struct pto_task h[NT];
};

static int cb(struct pto_task_ctx *c)
{
	(void)c;
	return 0;
}

static const struct pto_callable CB = { .fn = cb, .kernel_id = 7 };

static int sub(pto_orch *o, struct pto_task *h, int *in0, int *in1, int *out)
{
	struct pto_tensor t[3];
	struct pto_task_args a;
	int ret;

	pto_args_init(&a);
	if (in0) {
		t[0] = pto_tensor_host(in0, sizeof(int));
		pto_args_add_tensor(&a, &t[0], PTO_INPUT);
	}
	if (in1) {
		t[1] = pto_tensor_host(in1, sizeof(int));
		pto_args_add_tensor(&a, &t[1], PTO_INPUT);
	}
	t[2] = pto_tensor_host(out, sizeof(int));
	pto_args_add_tensor(&a, &t[2], PTO_OUTPUT_EXISTING);
	ret = pto_submit_sub(o, &CB, &a, h);
	pto_args_fini(&a);
	return ret;
}

static int diamond_fn(pto_orch *o, void *arg)
{
	struct diamond *d = arg;
	static int e_out;
	int ret;

	ret = sub(o, &d->h[0], NULL, NULL, &d->buf[0]);
	if (!ret)
		ret = sub(o, &d->h[1], &d->buf[0], NULL, &d->buf[1]);
	if (!ret)
		ret = sub(o, &d->h[2], &d->buf[0], NULL, &d->buf[2]);
	if (!ret)
		ret = sub(o, &d->h[3], &d->buf[1], &d->buf[2], &d->buf[3]);
	if (!ret)
		ret = sub(o, &d->h[4], NULL, NULL, &e_out);
	return ret;
}

static char path[64];

/* Runs the diamond on an orchestrator tracing @bytes per thread; its
 * trace (when @bytes) in @tr. */
static int run_traced(uint64_t bytes, struct diamond *d, struct tr_trace *tr,
		      int *write_ret)
{
	struct pto_orch_config cfg = { .nworkers = 0, .trace_bytes = bytes };
	pto_orch *o;
	int ret;

	snprintf(path, sizeof(path), "/tmp/pto-orch-trace-%d.json", getpid());
	ret = pto_orch_create_inproc(&cfg, &o);
	if (ret)
		return ret;
	ret = pto_orch_run(o, diamond_fn, d);
	*write_ret = pto_orch_trace_write(o, path);
	if (!ret)
		ret = pto_orch_close(o, 10000);
	if (!ret)
		ret = pto_orch_destroy(o);
	if (!ret && !*write_ret)
		ret = tr_load(path, tr);
	unlink(path);
	return ret;
}

static const struct tr_task *find(const struct tr_trace *tr,
				  const struct pto_task *h, int *count)
{
	const struct tr_task *hit = NULL;
	size_t i;

	*count = 0;
	for (i = 0; i < tr->n; i++)
		if (tr->t[i].run == h->run_id && tr->t[i].task == h->task_id) {
			hit = &tr->t[i];
			(*count)++;
		}
	return hit;
}

TEST(diamond_every_task_once_in_order_with_its_fanin)
{
	/* Producers of each task, by index into h[]. */
	static const int fanin[NT][2] = { { -1, -1 }, { 0, -1 }, { 0, -1 },
					  { 1, 2 }, { -1, -1 } };
	struct diamond d = { 0 };
	struct tr_trace tr = { 0 };
	int i, s, count, wret;

	ASSERT_EQ(0, run_traced(1 << 16, &d, &tr, &wret));
	ASSERT_EQ(0, wret);
	EXPECT_EQ(0u, tr.dropped);
	EXPECT_EQ((size_t)NT, tr.n);
	for (i = 0; i < NT; i++) {
		const struct tr_task *t = find(&tr, &d.h[i], &count);
		size_t want = 0, j;
		int k;

		ASSERT_EQ(1, count) TH_LOG("task %d", i);
		EXPECT_EQ((1u << TR_NSTAMP) - 1, t->have) TH_LOG("task %d", i);
		for (s = 1; s < TR_NSTAMP; s++)
			EXPECT_LE(t->ts[s - 1], t->ts[s])
				TH_LOG("task %d stamp %d", i, s);
		EXPECT_EQ(TR_PID_HOST, t->pid);
		EXPECT_EQ(7u, t->func);
		for (k = 0; k < 2; k++) {
			if (fanin[i][k] < 0)
				continue;
			want++;
			for (j = 0; j < t->ndeps; j++)
				if (t->deps[j] == d.h[fanin[i][k]].task_id)
					break;
			EXPECT_LT(j, t->ndeps) TH_LOG("task %d dep %d", i, k);
		}
		EXPECT_EQ(want, t->ndeps) TH_LOG("task %d", i);
	}
	tr_free(&tr);
}

TEST(off_writes_nothing)
{
	struct diamond d = { 0 };
	struct tr_trace tr = { 0 };
	int wret;

	ASSERT_EQ(0, run_traced(0, &d, &tr, &wret));
	EXPECT_EQ(-ENODATA, wret);
	EXPECT_EQ(0, access(path, F_OK) == 0);
}

/* Room for a few records per thread: the rest are dropped and counted,
 * the run completes, and the file says so. */
TEST(small_buffer_drops_and_counts)
{
	struct diamond d = { 0 };
	struct tr_trace tr = { 0 };
	int wret;

	ASSERT_EQ(0, run_traced(256, &d, &tr, &wret));
	ASSERT_EQ(0, wret);
	EXPECT_LT(0u, tr.dropped);
	EXPECT_EQ(1, d.h[3].task_id > 0);
	tr_free(&tr);
}

/* Tracing turned off for the second of three runs: the file holds the
 * first and third whole, and nothing of the second. */
TEST(enable_picks_the_runs)
{
	struct pto_orch_config cfg = { .trace_bytes = 1 << 16 };
	struct tr_trace tr = { 0 };
	struct diamond d[3];
	int i, k, count;
	pto_orch *o;

	memset(d, 0, sizeof(d));
	snprintf(path, sizeof(path), "/tmp/pto-orch-trace-%d.json", getpid());
	ASSERT_EQ(0, pto_orch_create_inproc(&cfg, &o));
	EXPECT_EQ(-EINVAL, pto_orch_trace_enable(o, 2));
	EXPECT_EQ(-EINVAL, pto_orch_trace_enable(NULL, 1));
	for (k = 0; k < 3; k++) {
		ASSERT_EQ(0, pto_orch_trace_enable(o, k != 1));
		ASSERT_EQ(0, pto_orch_run(o, diamond_fn, &d[k]));
	}
	ASSERT_EQ(0, pto_orch_trace_write(o, path));
	ASSERT_EQ(0, pto_orch_close(o, 10000));
	ASSERT_EQ(0, pto_orch_destroy(o));
	ASSERT_EQ(0, tr_load(path, &tr));
	unlink(path);
	EXPECT_EQ((size_t)(2 * NT), tr.n);
	for (k = 0; k < 3; k++)
		for (i = 0; i < NT; i++) {
			const struct tr_task *t = find(&tr, &d[k].h[i], &count);

			EXPECT_EQ(k != 1, count) TH_LOG("run %d task %d", k, i);
			if (t)
				EXPECT_EQ((1u << TR_NSTAMP) - 1, t->have)
					TH_LOG("run %d task %d", k, i);
		}
	tr_free(&tr);
}

TEST(enable_without_a_trace_is_enodata)
{
	pto_orch *o;

	ASSERT_EQ(0, pto_orch_create_inproc(NULL, &o));
	EXPECT_EQ(-ENODATA, pto_orch_trace_enable(o, 1));
	ASSERT_EQ(0, pto_orch_close(o, 10000));
	ASSERT_EQ(0, pto_orch_destroy(o));
}

TEST_HARNESS_MAIN
