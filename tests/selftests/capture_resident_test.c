// SPDX-License-Identifier: GPL-2.0-only
/*
 * Args capture on the resident route, end to end: host-built graphs run
 * by the cores with pto_hbg_dump_args(), their dump files read back and
 * compared record by record. The rows run with the cores' emulated line
 * caches on (mock_lcache_lines, put back after each), so an output not
 * written back before its AFTER request shows as stale bytes.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <pto/graph.h>
#include <pto/pto.h>
#include "kselftest_harness.h"
#include <linux/pto_dump.h>
#include <linux/pto_graph.h>
#include "pto_core_util.h"
#include "pto_selftest.h"
#include "../../tools/ptoctl_json.c"
#include "../../tools/ptoctl_dump_read.c"

#define HN 4096
#define B DUMP_BEFORE_DISPATCH
#define A DUMP_AFTER_COMPLETION
#define LCACHE "/sys/module/pto/parameters/mock_lcache_lines"

/* A device, one GM buffer of @n floats mapped, a graph, the line cache. */
struct rig {
	struct pto_dev *dev;
	struct pto_bo *bo;
	float *map;
	pto_hbg *g;
	char lcache[16];
};

static void rig_param(const char *path, const char *v)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(v, f);
		fclose(f);
	}
}

static void rig_open(struct __test_metadata *_metadata, struct rig *r,
		     size_t n)
{
	FILE *f = fopen(LCACHE, "r");
	void *map;

	memset(r, 0, sizeof(*r));
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(r->lcache, sizeof(r->lcache), f));
	fclose(f);
	rig_param(LCACHE, "16");
	ASSERT_EQ(0, pto_dev_open(0, &r->dev));
	ASSERT_EQ(0, pto_bo_alloc(r->dev, n * 4, 0, &r->bo));
	ASSERT_EQ(0, pto_bo_map(r->bo, &map));
	r->map = map;
	memset(r->map, 0, n * 4);
	ASSERT_EQ(0, pto_hbg_create(r->dev, &r->g));
}

static void rig_close(struct rig *r)
{
	pto_hbg_destroy(r->g);
	pto_bo_free(r->bo);
	pto_dev_close(r->dev);
	rig_param(LCACHE, r->lcache);
}

/* @n floats of the buffer from element @off. */
static struct pto_tensor_desc vec(const struct rig *r, size_t off, uint32_t n)
{
	struct pto_tensor_desc t;

	memset(&t, 0, sizeof(t));
	t.addr = pto_bo_dev_addr(r->bo) + off * 4;
	t.dtype = PTO_DTYPE_F32;
	t.rank = 1;
	t.shape[0] = n;
	t.strides[0] = 1;
	return t;
}

/*
 * A task on the cores of @mask running @func on the AIV0 (or the first
 * core of @mask), out = x + y or x + s: the tensors at element offsets
 * @x, @y (SIZE_MAX: none), @out; @flags on every tensor.
 */
static uint32_t op_n(struct __test_metadata *_metadata, struct rig *r,
		     uint32_t mask, uint32_t func, size_t x, size_t y, float s,
		     size_t out, uint32_t flags, uint32_t n)
{
	uint32_t fid[3] = { 0, 0, 0 }, task, u;
	struct pto_tensor_desc t;

	fid[mask & PTO_GRAPH_AIV0 ? 1 : __builtin_ctz(mask)] = func;
	EXPECT_EQ(0, pto_hbg_add_task(r->g, mask, fid, &task));
	t = vec(r, x, n);
	EXPECT_EQ(0, pto_hbg_set_tensor(r->g, task, PTO_ARG_A, &t,
					PTO_GRAPH_ROLE_IN, flags));
	if (y != SIZE_MAX) {
		t = vec(r, y, n);
		EXPECT_EQ(0, pto_hbg_set_tensor(r->g, task, PTO_ARG_B, &t,
						PTO_GRAPH_ROLE_IN, flags));
	} else {
		memcpy(&u, &s, 4);
		EXPECT_EQ(0, pto_hbg_set_scalar(r->g, task, 0, u));
	}
	t = vec(r, out, n);
	EXPECT_EQ(0, pto_hbg_set_tensor(r->g, task, PTO_ARG_OUT, &t,
					PTO_GRAPH_ROLE_OUT, flags));
	return task;
}

static uint32_t op(struct __test_metadata *_metadata, struct rig *r,
		   uint32_t mask, uint32_t func, size_t x, size_t y, float s,
		   size_t out, uint32_t flags)
{
	return op_n(_metadata, r, mask, func, x, y, s, out, flags, HN);
}

/* Every element of record @rec's payload (@n floats) is @v. */
static int payload_n(const struct dd_dump *d, const struct dump_rec *rec,
		     float v, size_t n)
{
	const float *p = (const float *)(d->set.bin + rec->bin_offset);
	size_t i;

	if (!rec || rec->bin_size != n * 4 ||
	    rec->bin_offset + rec->bin_size > d->set.bin_len)
		return 0;
	for (i = 0; i < n; i++)
		if (p[i] != v)
			return 0;
	return 1;
}

static int payload_is(const struct dd_dump *d, const struct dump_rec *rec,
		      float v)
{
	return payload_n(d, rec, v, HN);
}

static const struct dump_rec *find(const struct dd_dump *d, uint64_t task,
				   uint8_t stage, uint32_t arg)
{
	size_t i;

	for (i = 0; i < d->set.n; i++)
		if (d->set.rec[i].task_id == task &&
		    d->set.rec[i].stage == stage &&
		    d->set.rec[i].arg_index == arg)
			return &d->set.rec[i];
	return NULL;
}

/* Run the rig's graph at @level into @dir, its files loaded into @d. */
static void run_dump(struct __test_metadata *_metadata, struct rig *r,
		     uint32_t level, const char *dir, struct dd_dump *d)
{
	struct pto_hbg_stats st;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ASSERT_EQ(0, system(cmd));
	ASSERT_EQ(0, pto_hbg_dump_args(r->g, level, dir));
	ASSERT_EQ(0, pto_hbg_run(r->g, 0, 20000, &st))
		TH_LOG("failed task %u status %u", st.err_task, st.err_status);
	ASSERT_EQ(0, dd_load(dir, d));
	EXPECT_STREQ("complete", jstr(&d->root, "accounting"));
}

/*
 * One buffer handed from task to task (x = a + b; x = x + b; x = a + b):
 * the dump shows each task's view of it at its own boundaries, in the
 * execution order the cores' own stamps show.
 */
TEST(exact_handoff_in_trace_order)
{
	const size_t a = 0, b = HN, x = 2 * HN;
	struct dd_dump d = { 0 };
	uint64_t s[3], e[3];
	uint32_t t[3];
	struct rig r;
	size_t i;
	int k;

	rig_open(_metadata, &r, 3 * HN);
	for (i = 0; i < HN; i++) {
		r.map[a + i] = 2;
		r.map[b + i] = 3;
	}
	t[0] = op(_metadata, &r, PTO_GRAPH_AIV0, PTO_FUNC_ADD, a, b, 0, x, 0);
	t[1] = op(_metadata, &r, PTO_GRAPH_AIV1, PTO_FUNC_ADD, x, b, 0, x, 0);
	t[2] = op(_metadata, &r, PTO_GRAPH_AIC, PTO_FUNC_ADD, a, b, 0, x, 0);
	ASSERT_EQ(0, pto_hbg_add_edge(r.g, t[0], t[1]));
	ASSERT_EQ(0, pto_hbg_add_edge(r.g, t[1], t[2]));
	run_dump(_metadata, &r, PTO_DUMP_FULL, "/tmp/cap_handoff", &d);
	EXPECT_EQ(5.0f, r.map[x]);
	for (k = 0; k < 3; k++)
		ASSERT_EQ(0, pto_hbg_task_times(r.g, t[k], &s[k], &e[k], NULL));
	EXPECT_LE(e[0], s[1]);
	EXPECT_LE(e[1], s[2]);
	ASSERT_EQ(9u, d.set.n);
	{
		const struct dump_rec *o1 = find(&d, t[0], A, PTO_ARG_OUT);
		const struct dump_rec *i2 = find(&d, t[1], B, PTO_ARG_A);
		const struct dump_rec *o2 = find(&d, t[1], A, PTO_ARG_OUT);
		const struct dump_rec *o3 = find(&d, t[2], A, PTO_ARG_OUT);

		ASSERT_NE(NULL, o1);
		ASSERT_NE(NULL, i2);
		ASSERT_NE(NULL, o2);
		ASSERT_NE(NULL, o3);
		EXPECT_TRUE(payload_is(&d, o1, 5));	/* a + b */
		EXPECT_TRUE(payload_is(&d, i2, 5));	/* a + b */
		EXPECT_TRUE(payload_is(&d, o2, 8));	/* a + 2b */
		EXPECT_TRUE(payload_is(&d, o3, 5));
	}
	dd_free(&d);
	rig_close(&r);
}

/* Eight tasks add 1 to one buffer in turn: each record shows that task's
 * own bytes (k before, k + 1 after), never a later writer's. */
TEST(chained_each_task_own_bytes)
{
	struct dd_dump d = { 0 };
	uint32_t t[8];
	struct rig r;
	int k;

	rig_open(_metadata, &r, HN);
	for (k = 0; k < 8; k++) {
		t[k] = op(_metadata, &r, k & 1 ? PTO_GRAPH_AIV1 : PTO_GRAPH_AIV0,
			  PTO_FUNC_ADD_SCALAR, 0, SIZE_MAX, 1, 0, 0);
		if (k)
			ASSERT_EQ(0, pto_hbg_add_edge(r.g, t[k - 1], t[k]));
	}
	run_dump(_metadata, &r, PTO_DUMP_FULL, "/tmp/cap_chain", &d);
	EXPECT_EQ(8.0f, r.map[0]);
	/* the input and the scalar before, the output after */
	ASSERT_EQ(24u, d.set.n);
	for (k = 0; k < 8; k++) {
		const struct dump_rec *in = find(&d, t[k], B, PTO_ARG_A);
		const struct dump_rec *out = find(&d, t[k], A, PTO_ARG_OUT);

		ASSERT_NE(NULL, in);
		ASSERT_NE(NULL, out);
		EXPECT_TRUE(payload_is(&d, in, (float)k)) TH_LOG("task %d", k);
		EXPECT_TRUE(payload_is(&d, out, (float)(k + 1)))
			TH_LOG("task %d", k);
	}
	dd_free(&d);
	rig_close(&r);
}

/* A rig with a = 2, b = 3 and one MIX task out = a + b (the AIV0's). */
static uint32_t mix_add(struct __test_metadata *_metadata, struct rig *r)
{
	size_t i;

	rig_open(_metadata, r, 3 * HN);
	for (i = 0; i < HN; i++) {
		r->map[i] = 2;
		r->map[HN + i] = 3;
	}
	return op(_metadata, r, PTO_GRAPH_MASK_MIX, PTO_FUNC_ADD, 0, HN, 0,
		  2 * HN, 0);
}

/* A MIX task's three subtasks meet once: one record set carrying every
 * func_id, its inputs taken before any subtask ran. */
TEST(mix_task_one_record_set)
{
	struct dd_dump d = { 0 };
	const struct dump_rec *rec;
	struct rig r;
	uint32_t t;
	size_t i;

	t = mix_add(_metadata, &r);
	run_dump(_metadata, &r, PTO_DUMP_FULL, "/tmp/cap_mix", &d);
	ASSERT_EQ(3u, d.set.n);
	for (i = 0; i < d.set.n; i++) {
		rec = &d.set.rec[i];
		EXPECT_EQ(t, rec->task_id);
		EXPECT_EQ(3u, rec->nfunc) TH_LOG("record %zu", i);
		EXPECT_EQ(PTO_FUNC_NOOP, rec->func_id[0]);
		EXPECT_EQ(PTO_FUNC_ADD, rec->func_id[1]);
		EXPECT_EQ(PTO_FUNC_NOOP, rec->func_id[2]);
	}
	rec = find(&d, t, B, PTO_ARG_A);
	ASSERT_NE(NULL, rec);
	EXPECT_TRUE(payload_is(&d, rec, 2));
	rec = find(&d, t, A, PTO_ARG_OUT);
	ASSERT_NE(NULL, rec);
	EXPECT_TRUE(payload_is(&d, rec, 5));
	dd_free(&d);
	rig_close(&r);
}

/* Independent MIX and single-core tasks on every cluster at once: every
 * task's record set, none missing, none doubled. */
TEST(all_clusters_at_once)
{
	const uint32_t masks[] = { PTO_GRAPH_MASK_MIX, PTO_GRAPH_AIV0,
				   PTO_GRAPH_AIV1, PTO_GRAPH_AIC };
	struct dd_dump d = { 0 };
	uint32_t t[32];
	struct rig r;
	size_t i;
	int k;

	rig_open(_metadata, &r, 33 * HN);
	for (i = 0; i < HN; i++)
		r.map[i] = 1;
	for (k = 0; k < 32; k++)
		t[k] = op(_metadata, &r, masks[k % 4], PTO_FUNC_ADD_SCALAR, 0,
			  SIZE_MAX, (float)k, (size_t)(k + 1) * HN, 0);
	run_dump(_metadata, &r, PTO_DUMP_FULL, "/tmp/cap_all", &d);
	ASSERT_EQ(32u * 3, d.set.n);
	for (k = 0; k < 32; k++) {
		const struct dump_rec *out = find(&d, t[k], A, PTO_ARG_OUT);

		ASSERT_NE(NULL, out) TH_LOG("task %d", k);
		EXPECT_TRUE(payload_is(&d, out, 1.0f + (float)k))
			TH_LOG("task %d", k);
		EXPECT_EQ(1.0f + (float)k, r.map[(size_t)(k + 1) * HN]);
	}
	dd_free(&d);
	rig_close(&r);
}

/* PARTIAL: only the marked task's arguments are recorded; the unmarked
 * task runs without meeting (nothing of it in the files). */
TEST(partial_unmarked_skips_barriers)
{
	struct dd_dump d = { 0 };
	uint32_t t0, t1;
	struct rig r;
	size_t i;

	rig_open(_metadata, &r, 3 * HN);
	for (i = 0; i < HN; i++)
		r.map[i] = 4;
	t0 = op(_metadata, &r, PTO_GRAPH_AIV0, PTO_FUNC_ADD_SCALAR, 0,
		SIZE_MAX, 1, HN, PTO_GRAPH_ARG_DUMP);
	t1 = op(_metadata, &r, PTO_GRAPH_AIV1, PTO_FUNC_ADD_SCALAR, 0,
		SIZE_MAX, 2, 2 * HN, 0);
	run_dump(_metadata, &r, PTO_DUMP_PARTIAL, "/tmp/cap_partial", &d);
	EXPECT_EQ(5.0f, r.map[HN]);
	EXPECT_EQ(6.0f, r.map[2 * HN]);
	ASSERT_EQ(2u, d.set.n);
	for (i = 0; i < d.set.n; i++)
		EXPECT_EQ(t0, d.set.rec[i].task_id);
	EXPECT_EQ(NULL, find(&d, t1, B, PTO_ARG_A));
	ASSERT_NE(NULL, find(&d, t0, A, PTO_ARG_OUT));
	EXPECT_TRUE(payload_is(&d, find(&d, t0, A, PTO_ARG_OUT), 5));
	dd_free(&d);
	rig_close(&r);
}

#define PARAMS "/sys/module/pto/parameters/"
#define DBG "/sys/kernel/debug/pto/pto0/"

/* Short budgets for the failure rows; put back by faults_off(). */
static void faults_on(const char *stall, const char *drop)
{
	rig_param(PARAMS "capture_budget_ms", "300");
	rig_param(PARAMS "capture_lost_ms", "1000");
	rig_param(DBG "cap_stall", stall);
	rig_param(DBG "cap_ack_drop", drop);
}

static void faults_off(void)
{
	rig_param(DBG "cap_stall", "none 0");
	rig_param(DBG "cap_ack_drop", "0");
	rig_param(PARAMS "capture_budget_ms", "2000");
	rig_param(PARAMS "capture_lost_ms", "8000");
}

/* A run whose capture fails: @err_status, no task completed, the dump's
 * accounting unknown and nothing of the task's sealed phase recorded. */
static void run_failing(struct __test_metadata *_metadata, struct rig *r,
			const char *dir, uint32_t err_status, size_t records)
{
	struct pto_hbg_stats st;
	struct dd_dump d = { 0 };
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ASSERT_EQ(0, system(cmd));
	ASSERT_EQ(0, pto_hbg_dump_args(r->g, PTO_DUMP_FULL, dir));
	EXPECT_EQ(-EIO, pto_hbg_run(r->g, 0, 20000, &st));
	faults_off();
	EXPECT_EQ(err_status, st.err_status);
	ASSERT_EQ(0, dd_load(dir, &d));
	EXPECT_STREQ("unknown", jstr(&d.root, "accounting"));
	EXPECT_EQ(records, d.set.n);
	dd_free(&d);
}

/* After a failed capture: a new file binds the lanes (adopted or free)
 * and a capture completes. */
static void capture_works(struct __test_metadata *_metadata)
{
	struct dd_dump d = { 0 };
	struct rig r;

	rig_open(_metadata, &r, 2 * HN);
	op(_metadata, &r, PTO_GRAPH_AIV0, PTO_FUNC_ADD_SCALAR, 0, SIZE_MAX, 1,
	   HN, 0);
	run_dump(_metadata, &r, PTO_DUMP_FULL, "/tmp/cap_after", &d);
	EXPECT_EQ(3u, d.set.n);
	dd_free(&d);
	rig_close(&r);
}

/*
 * Criterion 3: the claimer of a MIX task's rendezvous stalls in
 * CLAIMING; its peers' budgets end the run with INIT_LOST, nothing is
 * sealed and nothing of the task is recorded.
 */
TEST(claimer_stalled_in_claiming_ends_run)
{
	struct rig r;

	rig_open(_metadata, &r, 3 * HN);
	op(_metadata, &r, PTO_GRAPH_MASK_MIX, PTO_FUNC_ADD, 0, HN, 0, 2 * HN, 0);
	faults_on("claimed 1500", "0");
	run_failing(_metadata, &r, "/tmp/cap_initlost",
		    PTO_TASK_ECAPTURE_INIT_LOST, 0);
	EXPECT_EQ(0.0f, r.map[2 * HN]);	/* the task never ran */
	rig_close(&r);
	capture_works(_metadata);
}

/*
 * Criterion 10: the supervisor's answers are never written. The first
 * budget raises the abort, its answer is lost too, and the second budget
 * ends the run (ECAPTURE_TIMEOUT) with the task unrun; the lane's
 * terminal does not close, so the accounting reads unknown.
 */
TEST(answers_dropped_second_budget)
{
	struct rig r;

	rig_open(_metadata, &r, 2 * HN);
	op(_metadata, &r, PTO_GRAPH_AIV0, PTO_FUNC_ADD_SCALAR, 0, SIZE_MAX, 1,
	   HN, 0);
	faults_on("none 0", "1000000");
	/*
	 * The inputs were committed, in a metadata buffer the lane
	 * publishes only when full or at its close, which never comes.
	 */
	run_failing(_metadata, &r, "/tmp/cap_lost",
		    PTO_TASK_ECAPTURE_TIMEOUT, 0);
	EXPECT_EQ(0.0f, r.map[HN]);	/* BEFORE never sealed: unrun */
	rig_close(&r);
	capture_works(_metadata);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * Criterion 1: the first core of a MIX task to reach BEFORE stalls
 * there 500 ms before arriving; no subtask starts before the phase is
 * sealed, so the task's first start is at least that late, and its
 * inputs are recorded as they were before it ran.
 */
TEST(no_subtask_runs_before_seal)
{
	struct dd_dump d = { 0 };
	uint64_t t0, start, end;
	struct rig r;
	uint32_t t;

	t = mix_add(_metadata, &r);
	rig_param(DBG "cap_stall", "arrive_before 500");
	t0 = now_ns();
	run_dump(_metadata, &r, PTO_DUMP_FULL, "/tmp/cap_seal", &d);
	rig_param(DBG "cap_stall", "none 0");
	ASSERT_EQ(0, pto_hbg_task_times(r.g, t, &start, &end, NULL));
	EXPECT_GE(start, t0 + 500000000ULL);
	ASSERT_EQ(3u, d.set.n);
	EXPECT_TRUE(payload_is(&d, find(&d, t, B, PTO_ARG_A), 2));
	EXPECT_EQ(5.0f, r.map[2 * HN]);
	dd_free(&d);
	rig_close(&r);
}

#define CN 40
#define CE (128 * 1024)	/* elements of a half: 512 KiB */

/*
 * Criterion 8: a chain of 40 tasks ping-ponging between two 512 KiB
 * halves pushes 40 MiB of payload through the lanes' arenas: the run
 * completes and its dump is either complete (every record with its own
 * bytes, nothing dropped: waiting for room is not a refusal) or says
 * unknown; never a record with another task's bytes.
 */
TEST(arena_pressure_complete_or_unknown)
{
	struct pto_hbg_stats st;
	struct dd_dump d = { 0 };
	uint32_t t[CN];
	struct rig r;
	size_t i;
	int k, ret;

	ASSERT_EQ(0, system("rm -rf /tmp/cap_chain"));
	rig_open(_metadata, &r, 2 * CE);
	for (k = 0; k < CN; k++) {
		t[k] = op_n(_metadata, &r, k & 1 ? PTO_GRAPH_AIV1 :
			    PTO_GRAPH_AIV0, PTO_FUNC_ADD_SCALAR,
			    (size_t)(k & 1) * CE, SIZE_MAX, 1,
			    (size_t)!(k & 1) * CE, 0, CE);
		if (k)
			ASSERT_EQ(0, pto_hbg_add_edge(r.g, t[k - 1], t[k]));
	}
	ASSERT_EQ(0, pto_hbg_dump_args(r.g, PTO_DUMP_FULL, "/tmp/cap_chain"));
	/*
	 * Waiting for the host to drain the arena is no progress of a
	 * phase: a slow kernel (the debug one) must not time it out.
	 */
	rig_param(PARAMS "capture_budget_ms", "30000");
	rig_param(PARAMS "capture_lost_ms", "60000");
	ret = pto_hbg_run(r.g, 0, 120000, &st);
	rig_param(PARAMS "capture_budget_ms", "2000");
	rig_param(PARAMS "capture_lost_ms", "8000");
	ASSERT_EQ(0, ret) TH_LOG("failed task %u status %u", st.err_task,
				 st.err_status);
	EXPECT_EQ((float)CN, r.map[(CN & 1) * CE]);
	ASSERT_EQ(0, dd_load("/tmp/cap_chain", &d));
	if (!strcmp(jstr(&d.root, "accounting"), "unknown")) {
		TH_LOG("accounting unknown: %zu records", d.set.n);
	} else {
		EXPECT_STREQ("complete", jstr(&d.root, "accounting"));
		ASSERT_EQ(3u * CN, d.set.n);
		for (i = 0; i < d.set.n; i++) {
			const struct dump_rec *rec = &d.set.rec[i];

			if (rec->kind == DUMP_KIND_SCALAR)
				continue;
			/* task k reads k and writes k + 1 */
			EXPECT_TRUE(payload_n(&d, rec, (float)rec->task_id +
					      (rec->stage == A), CE))
				TH_LOG("record %zu", i);
		}
	}
	dd_free(&d);
	rig_close(&r);
}

/* Criterion 11: a run without args dump allocates no capture state and
 * meets nowhere: debugfs capture's last run is unchanged by it. */
TEST(off_makes_no_rendezvous)
{
	char before[512] = "", after[512] = "";
	struct pto_hbg_stats st;
	struct rig r;
	FILE *f;

	rig_open(_metadata, &r, 2 * HN);
	op(_metadata, &r, PTO_GRAPH_MASK_MIX, PTO_FUNC_ADD_SCALAR, 0,
	   SIZE_MAX, 1, HN, 0);
	f = fopen(DBG "capture", "r");
	ASSERT_NE(NULL, f);
	fread(before, 1, sizeof(before) - 1, f);
	fclose(f);
	ASSERT_EQ(0, pto_hbg_dump_args(r.g, PTO_DUMP_OFF, NULL));
	ASSERT_EQ(0, pto_hbg_run(r.g, 0, 20000, &st));
	EXPECT_EQ(1.0f, r.map[HN]);
	f = fopen(DBG "capture", "r");
	ASSERT_NE(NULL, f);
	fread(after, 1, sizeof(after) - 1, f);
	fclose(f);
	EXPECT_STREQ(before, after);
	EXPECT_EQ(NULL, strstr(after, "run:"));
	rig_close(&r);
}

/* Criterion 10: a process killed while its cores wait in a barrier; no
 * splat or leak (the runner reads the log), the next file's capture runs. */
TEST(sigkill_mid_barrier)
{
	pid_t pid;
	int status;

	faults_on("none 0", "1000000");
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct pto_hbg_stats st;
		struct rig r;

		rig_open(_metadata, &r, 2 * HN);
		op(_metadata, &r, PTO_GRAPH_AIV0, PTO_FUNC_ADD_SCALAR, 0,
		   SIZE_MAX, 1, HN, 0);
		pto_hbg_dump_args(r.g, PTO_DUMP_FULL, "/tmp/cap_killed");
		pto_hbg_run(r.g, 0, 20000, &st);
		_exit(0);
	}
	usleep(500 * 1000);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	faults_off();
	capture_works(_metadata);
}

/* The raw ABI: a capture into a lane nobody drains. */

#define BIG_TASKS 4

/* BIG_TASKS in-place adds in a chain over @n floats at @data. */
struct big {
	struct pto_graph_hdr h;
	struct pto_graph_task t[BIG_TASKS];
	uint32_t e[BIG_TASKS];
};

static void big_graph(struct big *g, uint64_t data, uint32_t n)
{
	struct pto_tensor_desc t;
	int k;

	memset(g, 0, sizeof(*g));
	memset(&t, 0, sizeof(t));
	t.addr = data;
	t.dtype = PTO_DTYPE_F32;
	t.rank = 1;
	t.shape[0] = n;
	t.strides[0] = 1;
	g->h.magic = PTO_GRAPH_MAGIC;
	g->h.version = PTO_GRAPH_VERSION;
	g->h.task_count = BIG_TASKS;
	g->h.edge_count = BIG_TASKS - 1;
	g->h.size = sizeof(g->h) + sizeof(g->t) +
		    ((BIG_TASKS - 1) * 4 + 7) / 8 * 8;
	g->h.task_size = sizeof(g->t[0]);
	for (k = 0; k < BIG_TASKS; k++) {
		g->t[k].active_mask = PTO_GRAPH_AIV0;
		g->t[k].func_id[1] = PTO_FUNC_ADD_SCALAR;
		g->t[k].scalar[0] = 0x3f800000;	/* 1.0f */
		g->t[k].t[PTO_ARG_A].t = t;
		g->t[k].t[PTO_ARG_A].role = PTO_GRAPH_ROLE_IN;
		g->t[k].t[PTO_ARG_OUT].t = t;
		g->t[k].t[PTO_ARG_OUT].role = PTO_GRAPH_ROLE_OUT;
		g->t[k].fanin = k ? 1 : 0;
		g->t[k].succ_start = k;
		g->t[k].succ_count = k < BIG_TASKS - 1 ? 1 : 0;
		if (k < BIG_TASKS - 1)
			g->e[k] = k + 1;
	}
}

/* A device with cluster 0's cores launched, lane 0 bound at FULL. */
struct raw_rig {
	struct pto_dev *dev;
	int fd;
	struct core_launch *l;
	struct pto_bo *img, *data;
	uint64_t cores[PTO_CORE_MASK_WORDS];
	struct pto_dump_bind b;
};

static int raw_open(struct raw_rig *r, int big)
{
	uint32_t n;
	void *map;
	int ret;

	memset(r, 0, sizeof(*r));
	ret = pto_dev_open(0, &r->dev);
	if (ret)
		return ret;
	r->fd = pto_dev_fd(r->dev);
	ret = core_cluster_acquire(r->dev, 1);
	if (ret)
		return ret;
	st_cluster_add(0, r->cores);
	ret = core_launch_cores(r->dev, r->cores, &r->l);
	if (ret)
		return ret;
	r->b.lane = 0;
	r->b.level = PTO_DUMP_FULL;
	ret = pto_sioctl(r->fd, PTO_IOCTL_DUMP_BIND, &r->b);
	if (ret)
		return ret;
	/* Big: each task's before and after a quarter of the arena. */
	n = big ? (uint32_t)(r->b.arena_size / 4 / 4) : HN;
	ret = pto_bo_alloc(r->dev, 4096, 0, &r->img);
	if (!ret)
		ret = pto_bo_alloc(r->dev, (size_t)n * 4, 0, &r->data);
	if (!ret)
		ret = pto_bo_map(r->img, &map);
	if (ret)
		return ret;
	big_graph(map, pto_bo_dev_addr(r->data), n);
	return 0;
}

/* Undo what raw_open() did, however far it got. */
static void raw_close(struct raw_rig *r)
{
	struct pto_dump_lane dl = { .lane = 0 };

	if (!r->dev)
		return;
	if (r->b.mmap_size)
		pto_sioctl(r->fd, PTO_IOCTL_DUMP_UNBIND, &dl);
	if (r->data)
		pto_bo_free(r->data);
	if (r->img)
		pto_bo_free(r->img);
	if (r->l)
		core_launch_free(r->l);
	pto_dev_close(r->dev);
	memset(r, 0, sizeof(*r));
}

/* Launch the rig's graph capturing into lane 0, wait up to 60 s. */
static int raw_run(struct raw_rig *r, struct pto_graph_wait *w)
{
	struct pto_graph_launch la;
	int ret;

	memset(&la, 0, sizeof(la));
	la.graph_addr = pto_bo_dev_addr(r->img);
	la.graph_size = sizeof(struct big);
	la.clusters = 1;
	la.run_id = 7;
	la.dump_lanes = 1;
	ret = pto_sioctl(r->fd, PTO_IOCTL_GRAPH_LAUNCH, &la);
	if (ret)
		return ret;
	memset(w, 0, sizeof(*w));
	w->handle = la.handle;
	w->timeout_ns = pto_now_ns() + 60000000000ull;
	return pto_sioctl(r->fd, PTO_IOCTL_GRAPH_WAIT, w);
}

/*
 * Four tasks' arguments (twice the arena) into a lane nobody acks: the
 * cores wait, the budget runs out, the run fails with the capture
 * timeout and the lane's close says records are missing.
 */
TEST(timeout_fails_run_lane_unsettled)
{
	struct pto_dump_lane dl = { .lane = 0 };
	struct pto_graph_wait w;
	struct raw_rig r;

	if (access(PTO_PARAMS "capture_budget_ms", W_OK))
		SKIP(return, "needs root and pto's capture_budget_ms");
	ASSERT_EQ(0, st_param_set("capture_budget_ms", "200"));
	ASSERT_EQ(0, st_param_set("capture_lost_ms", "1000"));
	ASSERT_EQ(0, raw_open(&r, 1));
	ASSERT_EQ(0, raw_run(&r, &w));
	EXPECT_NE(PTO_GRAPH_TASK_NONE, w.err_task);
	EXPECT_EQ(PTO_TASK_ECAPTURE_TIMEOUT, w.err_status)
		TH_LOG("task %u status %u", w.err_task, w.err_status);
	EXPECT_GT(BIG_TASKS, w.completed);
	EXPECT_EQ(-EIO, pto_sioctl(r.fd, PTO_IOCTL_DUMP_CLOSE, &dl));
	raw_close(&r);
}

TEST_HARNESS_MAIN
