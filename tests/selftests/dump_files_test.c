// SPDX-License-Identifier: GPL-2.0
/*
 * The args dump on the scheduler's route, end to end on the device: the
 * vector example at each level (the expected records listed and compared
 * with the files), the exact handoff of one buffer between three tasks
 * in the order the run's trace shows, a chain larger than the lane's
 * arena, a failed run's files, and a run with the dump off making no
 * capture request. Runs in the VM as root.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <pto/orch.h>
#include <pto/pto.h>
#include <pto/sched.h>
#include "kselftest_harness.h"
#include <linux/pto_dump.h>
#include "pto_selftest.h"
#include "../../tools/ptoctl_json.c"
#include "../../tools/ptoctl_dump_read.c"
#include "../../tools/ptoctl_trace_read.c"

#define VN (128 * 128)

/* One expected record: its identity, and a tensor's value in every
 * element (or a scalar's), NAN for no payload expected. */
struct want {
	uint64_t task;
	uint8_t stage, role, kind;
	uint32_t arg;
	uint32_t func;
	float value;
	bool payload;
};

#define B DUMP_BEFORE_DISPATCH
#define A DUMP_AFTER_COMPLETION
#define IN DUMP_ROLE_INPUT
#define OUT DUMP_ROLE_OUTPUT
#define T DUMP_KIND_TENSOR
#define S DUMP_KIND_SCALAR

/* The vector example: c = a + b (c marked); d = c + 1; e = c + 2;
 * g = d * e; f = g + c, with a = 2, b = 3. In file order. */
static const struct want vector_full[] = {
	{ 1, B, IN, T, 0, PTO_FUNC_ADD, 2, true },
	{ 1, B, IN, T, 1, PTO_FUNC_ADD, 3, true },
	{ 1, A, OUT, T, 2, PTO_FUNC_ADD, 5, true },
	{ 2, B, IN, T, 0, PTO_FUNC_ADD_SCALAR, 5, true },
	{ 2, B, IN, S, 2, PTO_FUNC_ADD_SCALAR, 1, false },
	{ 2, A, OUT, T, 1, PTO_FUNC_ADD_SCALAR, 6, true },
	{ 3, B, IN, T, 0, PTO_FUNC_ADD_SCALAR, 5, true },
	{ 3, B, IN, S, 2, PTO_FUNC_ADD_SCALAR, 2, false },
	{ 3, A, OUT, T, 1, PTO_FUNC_ADD_SCALAR, 7, true },
	{ 4, B, IN, T, 0, PTO_FUNC_MUL, 6, true },
	{ 4, B, IN, T, 1, PTO_FUNC_MUL, 7, true },
	{ 4, A, OUT, T, 2, PTO_FUNC_MUL, 42, true },
	{ 5, B, IN, T, 0, PTO_FUNC_ADD, 42, true },
	{ 5, B, IN, T, 1, PTO_FUNC_ADD, 5, true },
	{ 5, A, OUT, T, 2, PTO_FUNC_ADD, 47, true },
};
#define VFULL (sizeof(vector_full) / sizeof(vector_full[0]))

static float f32_of(uint64_t bits)
{
	uint32_t u = (uint32_t)bits;
	float f;

	memcpy(&f, &u, 4);
	return f;
}

/* Every element of record @r's payload equals @v (an all-zero payload
 * fails unless @v is 0). */
static int payload_is(const struct dd_dump *d, const struct dump_rec *r,
		      uint64_t numel, float v)
{
	const float *p = (const float *)(d->set.bin + r->bin_offset);
	uint64_t i;

	if (r->bin_size != numel * 4 || r->bin_offset + r->bin_size >
	    d->set.bin_len)
		return 0;
	for (i = 0; i < numel; i++)
		if (p[i] != v)
			return 0;
	return 1;
}

/* The dump in @dir equals @w[0..n-1] record by record, in order. */
static void expect_records(struct __test_metadata *_metadata,
			   const struct dd_dump *d, const struct want *w,
			   size_t n, uint64_t numel)
{
	size_t i;

	ASSERT_EQ(n, d->set.n);
	for (i = 0; i < n; i++) {
		const struct dump_rec *r = &d->set.rec[i];

		EXPECT_EQ(w[i].task, r->task_id) TH_LOG("record %zu", i);
		EXPECT_EQ(w[i].stage, r->stage) TH_LOG("record %zu", i);
		EXPECT_EQ(w[i].role, r->role) TH_LOG("record %zu", i);
		EXPECT_EQ(w[i].kind, r->kind) TH_LOG("record %zu", i);
		EXPECT_EQ(w[i].arg, r->arg_index) TH_LOG("record %zu", i);
		EXPECT_EQ(1u, r->nfunc) TH_LOG("record %zu", i);
		EXPECT_EQ((int32_t)w[i].func, r->func_id[0])
			TH_LOG("record %zu", i);
		EXPECT_EQ(PTO_DTYPE_F32, r->dtype) TH_LOG("record %zu", i);
		EXPECT_FALSE(r->truncated) TH_LOG("record %zu", i);
		EXPECT_FALSE(r->overwritten) TH_LOG("record %zu", i);
		if (w[i].kind == S) {
			EXPECT_EQ(w[i].value, f32_of(r->value))
				TH_LOG("record %zu", i);
			EXPECT_EQ(0u, r->bin_size) TH_LOG("record %zu", i);
			continue;
		}
		EXPECT_EQ(1u, r->rank) TH_LOG("record %zu", i);
		EXPECT_EQ(numel, r->shape[0]) TH_LOG("record %zu", i);
		if (w[i].payload) {
			EXPECT_TRUE(payload_is(d, r, numel, w[i].value))
				TH_LOG("record %zu: not %g in every element",
				       i, w[i].value);
		} else {
			EXPECT_EQ(0u, r->bin_size) TH_LOG("record %zu", i);
		}
	}
}

/* `ptoctl run vector` at @level into @dir, its files loaded into @d. */
static void run_vector(struct __test_metadata *_metadata, const char *level,
		       const char *dir, struct dd_dump *d)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf %s && ptoctl run vector --dump-args %s --dump-dir %s >/dev/null 2>&1",
		 dir, level, dir);
	ASSERT_EQ(0, system(cmd)) TH_LOG("%s", cmd);
	ASSERT_EQ(0, dd_load(dir, d));
}

/* The manifest's key @key, a number. */
static uint64_t manifest_u64(const struct dd_dump *d, const char *key)
{
	uint64_t v = UINT64_MAX;

	jkey_u64(&d->root, key, &v);
	return v;
}

TEST(vector_full_every_argument)
{
	struct dd_dump d = { 0 };

	run_vector(_metadata, "full", "/tmp/dump_full", &d);
	EXPECT_EQ(2u, d.set.level);
	EXPECT_FALSE(d.set.unknown);
	expect_records(_metadata, &d, vector_full, VFULL, VN);
	EXPECT_EQ(VFULL, manifest_u64(&d, "total_args"));
	EXPECT_EQ(10u, manifest_u64(&d, "before_dispatch"));
	EXPECT_EQ(5u, manifest_u64(&d, "after_completion"));
	EXPECT_EQ(0u, manifest_u64(&d, "dropped_records"));
	EXPECT_STREQ("args.bin", jstr(&d.root, "bin_file"));
	EXPECT_STREQ("complete", jstr(&d.root, "accounting"));
	dd_free(&d);
}

TEST(vector_partial_the_marked_argument_alone)
{
	struct dd_dump d = { 0 };

	run_vector(_metadata, "1", "/tmp/dump_partial", &d);
	EXPECT_EQ(1u, d.set.level);
	expect_records(_metadata, &d, &vector_full[2], 1, VN);
	EXPECT_EQ(1u, manifest_u64(&d, "total_args"));
	EXPECT_STREQ("args.bin", jstr(&d.root, "bin_file"));
	EXPECT_STREQ("complete", jstr(&d.root, "accounting"));
	dd_free(&d);
}

TEST(vector_hybrid_metadata_for_all_payload_for_the_marked)
{
	struct want w[VFULL];
	struct dd_dump d = { 0 };
	size_t i;

	memcpy(w, vector_full, sizeof(w));
	for (i = 0; i < VFULL; i++)
		w[i].payload = w[i].task == 1 && w[i].arg == 2;
	run_vector(_metadata, "hybrid", "/tmp/dump_hybrid", &d);
	EXPECT_EQ(3u, d.set.level);
	expect_records(_metadata, &d, w, VFULL, VN);
	EXPECT_EQ(VFULL, manifest_u64(&d, "total_args"));
	EXPECT_EQ(65536u, d.set.bin_len);
	EXPECT_STREQ("complete", jstr(&d.root, "accounting"));
	dd_free(&d);
}

/* A device orchestrator on /dev/pto0 with @threads scheduler threads,
 * traced when @trace; one GM buffer of @bytes mapped. */
struct rig {
	struct pto_dev *dev;
	struct pto_bo *bo;
	float *map;
	pto_orch *o;
};

static void rig_open(struct __test_metadata *_metadata, struct rig *g,
		     uint64_t bytes, bool trace, uint32_t threads)
{
	struct pto_orch_config oc = { .trace_bytes = trace ? 1 << 20 : 0 };
	struct pto_sched_config sc = { .threads = threads };
	void *map;

	ASSERT_EQ(0, pto_dev_open(0, &g->dev));
	ASSERT_EQ(0, pto_bo_alloc(g->dev, bytes, 0, &g->bo));
	ASSERT_EQ(0, pto_bo_map(g->bo, &map));
	g->map = map;
	ASSERT_EQ(0, pto_orch_create_device(g->dev, &oc, &sc, &g->o));
}

static void rig_close(struct __test_metadata *_metadata, struct rig *g)
{
	EXPECT_EQ(0, pto_orch_close(g->o, 10000));
	EXPECT_EQ(0, pto_orch_destroy(g->o));
	pto_bo_free(g->bo);
	pto_dev_close(g->dev);
}

/* out = x + y, or x + scalar when !y, on an AIV, after @dep if not
 * NULL (a write after a read is not inferred from the tags); its handle
 * in *h. */
static int op(pto_orch *o, uint32_t func, const struct pto_tensor *x,
	      const struct pto_tensor *y, float s, const struct pto_tensor *out,
	      const struct pto_task *dep, struct pto_task *h)
{
	const struct pto_callable k = { .kernel_id = func };
	struct pto_task_args a;
	uint32_t bits;
	int ret;

	memcpy(&bits, &s, 4);
	pto_args_init(&a);
	pto_args_add_tensor(&a, x, PTO_INPUT);
	if (y)
		pto_args_add_tensor(&a, y, PTO_INPUT);
	else
		pto_args_add_scalar(&a, bits);
	ret = pto_args_add_tensor(&a, out, PTO_OUTPUT_EXISTING);
	if (ret >= 0 && dep)
		ret = pto_args_add_dep_wait(&a, *dep);
	if (ret >= 0)
		ret = pto_submit_next_level(o, &k, &a, NULL,
					    pto_on_kind(PTO_WORKER_AIV), h);
	pto_args_fini(&a);
	return ret < 0 ? ret : 0;
}

/* Buffer layout of the handoff: a, b, x of HN floats each. */
#define HN 4096
struct handoff {
	struct pto_tensor a, b, x;
	struct pto_task h[3];
};

/* x = a + b; x = x + b (reads and writes x); x = a + b again. */
static int handoff_fn(pto_orch *o, void *arg)
{
	struct handoff *p = arg;
	int ret;

	ret = op(o, PTO_FUNC_ADD, &p->a, &p->b, 0, &p->x, NULL, &p->h[0]);
	if (!ret)
		ret = op(o, PTO_FUNC_ADD, &p->x, &p->b, 0, &p->x, NULL,
			 &p->h[1]);
	if (!ret)
		ret = op(o, PTO_FUNC_ADD, &p->a, &p->b, 0, &p->x, &p->h[1],
			 &p->h[2]);
	return ret;
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

/*
 * One buffer handed from task to task: the dump shows each task's view
 * of it at its own boundaries (task 1's output a + b, task 2's input
 * a + b and output a + 2b, task 3's output a + b again), matched on run,
 * task, argument and stage, in the execution order the trace shows.
 */
TEST(exact_handoff_in_trace_order)
{
	static const char *const dir = "/tmp/dump_handoff";
	static const char *const json = "/tmp/dump_handoff.json";
	const struct tr_task *tt[3] = { NULL };
	struct tr_trace tr = { 0 };
	struct dd_dump d = { 0 };
	struct pto_sched_stats st;
	struct handoff p;
	struct rig g;
	size_t i;
	int k;

	ASSERT_EQ(0, system("rm -rf /tmp/dump_handoff"));
	rig_open(_metadata, &g, 3 * HN * 4, true, 1);
	for (i = 0; i < HN; i++) {
		g.map[i] = 2;		/* a */
		g.map[HN + i] = 3;	/* b */
		g.map[2 * HN + i] = 0;	/* x */
	}
	p.a = pto_tensor_gm(g.bo, g.map, 0, HN * 4, PTO_DTYPE_F32);
	p.b = pto_tensor_gm(g.bo, g.map, HN * 4, HN * 4, PTO_DTYPE_F32);
	p.x = pto_tensor_gm(g.bo, g.map, 2 * HN * 4, HN * 4, PTO_DTYPE_F32);
	ASSERT_EQ(0, pto_orch_dump_args(g.o, PTO_DUMP_FULL, dir));
	ASSERT_EQ(0, pto_orch_run(g.o, handoff_fn, &p));
	EXPECT_EQ(5.0f, g.map[2 * HN]);
	ASSERT_EQ(0, pto_orch_sched_stats(g.o, &st));
	/* two inputs before, one output after, per task */
	EXPECT_EQ(9u, st.captures);
	unlink(json);
	ASSERT_EQ(0, pto_orch_trace_write(g.o, json));
	rig_close(_metadata, &g);

	/* The execution order from the trace: each task ended before the
	 * next one was dispatched. */
	ASSERT_EQ(0, tr_load(json, &tr));
	for (i = 0; i < tr.n; i++)
		for (k = 0; k < 3; k++) {
			if (tr.t[i].run == p.h[k].run_id &&
			    tr.t[i].task == p.h[k].task_id)
				tt[k] = &tr.t[i];
		}
	for (k = 0; k < 3; k++)
		ASSERT_NE(NULL, tt[k]) TH_LOG("task %d not in the trace", k);
	EXPECT_LE(tt[0]->ts[TR_ENDED], tt[1]->ts[TR_DISPATCHED]);
	EXPECT_LE(tt[1]->ts[TR_ENDED], tt[2]->ts[TR_DISPATCHED]);

	ASSERT_EQ(0, dd_load(dir, &d));
	EXPECT_STREQ("complete", jstr(&d.root, "accounting"));
	ASSERT_EQ(9u, d.set.n);
	{
		const struct dump_rec *o1 = find(&d, p.h[0].task_id, A, 2);
		const struct dump_rec *i2 = find(&d, p.h[1].task_id, B, 0);
		const struct dump_rec *o2 = find(&d, p.h[1].task_id, A, 2);
		const struct dump_rec *o3 = find(&d, p.h[2].task_id, A, 2);

		ASSERT_NE(NULL, o1);
		ASSERT_NE(NULL, i2);
		ASSERT_NE(NULL, o2);
		ASSERT_NE(NULL, o3);
		EXPECT_TRUE(payload_is(&d, o1, HN, 5));	/* a + b */
		EXPECT_TRUE(payload_is(&d, i2, HN, 5));	/* a + b */
		EXPECT_TRUE(payload_is(&d, o2, HN, 8));	/* a + 2b */
		EXPECT_TRUE(payload_is(&d, o3, HN, 5));
		EXPECT_EQ(o1->start_offset, i2->start_offset);
		EXPECT_EQ(o2->start_offset, o3->start_offset);
	}
	dd_free(&d);
	tr_free(&tr);
}

/* HYBRID with nothing marked: every record, no payload, no bin file. */
TEST(hybrid_nothing_marked_has_no_bin_file)
{
	static const char *const dir = "/tmp/dump_hybrid0";
	struct dd_dump d = { 0 };
	struct handoff p;
	struct rig g;
	size_t i;

	ASSERT_EQ(0, system("rm -rf /tmp/dump_hybrid0"));
	rig_open(_metadata, &g, 3 * HN * 4, false, 1);
	p.a = pto_tensor_gm(g.bo, g.map, 0, HN * 4, PTO_DTYPE_F32);
	p.b = pto_tensor_gm(g.bo, g.map, HN * 4, HN * 4, PTO_DTYPE_F32);
	p.x = pto_tensor_gm(g.bo, g.map, 2 * HN * 4, HN * 4, PTO_DTYPE_F32);
	ASSERT_EQ(0, pto_orch_dump_args(g.o, PTO_DUMP_HYBRID, dir));
	ASSERT_EQ(0, pto_orch_run(g.o, handoff_fn, &p));
	rig_close(_metadata, &g);
	ASSERT_EQ(0, dd_load(dir, &d));
	EXPECT_EQ(9u, d.set.n);
	for (i = 0; i < d.set.n; i++)
		EXPECT_EQ(0u, d.set.rec[i].bin_size) TH_LOG("record %zu", i);
	ASSERT_NE(NULL, jget(&d.root, "bin_file"));
	EXPECT_EQ(J_NULL, jget(&d.root, "bin_file")->type);
	dd_free(&d);
}

/* A chain of CN tasks x = x + 1 over CB-byte halves: FULL captures twice
 * the lane's arena (16 MiB by default) through it. */
#define CN 40
#define CE (128 * 1024)	/* elements of a half: 512 KiB */
static int chain_fn(pto_orch *o, void *arg)
{
	struct pto_tensor *x = arg;
	struct pto_task h;
	int i, ret = 0;

	/* ping-pong between the halves: each task reads one, writes the
	 * other */
	for (i = 0; i < CN && !ret; i++)
		ret = op(o, PTO_FUNC_ADD_SCALAR, &x[i & 1], NULL, 1,
			 &x[!(i & 1)], i ? &h : NULL, &h);
	return ret;
}

TEST(arena_pressure_complete_or_unknown)
{
	static const char *const dir = "/tmp/dump_chain";
	struct pto_tensor x[2];
	struct dd_dump d = { 0 };
	uint64_t total = 0, coll = 0, drop = 0, bytes = 0;
	struct rig g;
	size_t i;

	ASSERT_EQ(0, system("rm -rf /tmp/dump_chain"));
	rig_open(_metadata, &g, 2 * CE * 4, false, 1);
	for (i = 0; i < 2 * CE; i++)
		g.map[i] = 0;
	x[0] = pto_tensor_gm(g.bo, g.map, 0, CE * 4, PTO_DTYPE_F32);
	x[1] = pto_tensor_gm(g.bo, g.map, CE * 4, CE * 4, PTO_DTYPE_F32);
	ASSERT_EQ(0, pto_orch_dump_args(g.o, PTO_DUMP_FULL, dir));
	ASSERT_EQ(0, pto_orch_run(g.o, chain_fn, x));
	EXPECT_EQ((float)CN, g.map[(CN & 1) * CE]);
	rig_close(_metadata, &g);

	ASSERT_EQ(0, dd_load(dir, &d));
	total = manifest_u64(&d, "total_args");
	drop = manifest_u64(&d, "dropped_records");
	coll = manifest_u64(&d, "collected");
	EXPECT_EQ(total, coll + drop);
	if (!strcmp(jstr(&d.root, "accounting"), "unknown")) {
		TH_LOG("accounting unknown: %zu records", d.set.n);
	} else {
		EXPECT_STREQ("complete", jstr(&d.root, "accounting"));
		/* Waiting for room is not a refusal: nothing dropped. */
		EXPECT_EQ(0u, drop);
		ASSERT_EQ(3u * CN, d.set.n);
		for (i = 0; i < d.set.n; i++) {
			const struct dump_rec *r = &d.set.rec[i];
			uint64_t t = r->task_id - d.set.rec[0].task_id;

			bytes += r->bin_size;
			if (r->kind == S)
				continue;
			/* task t reads t and writes t + 1 */
			EXPECT_TRUE(payload_is(&d, r, CE, (float)t +
					       (r->stage == A)))
				TH_LOG("record %zu (task %llu)", i,
				       (unsigned long long)t);
		}
		EXPECT_LT(16ull << 20, bytes);
	}
	dd_free(&d);
}

/* x = a + b, then a kernel that faults (it reads no tensor: nothing of
 * it is captured), then one after it that never runs. */
static int failing_fn(pto_orch *o, void *arg)
{
	struct handoff *p = arg;
	const struct pto_callable fault = { .kernel_id = PTO_FUNC_FAULT };
	struct pto_task_args a;
	int ret;

	ret = op(o, PTO_FUNC_ADD, &p->a, &p->b, 0, &p->x, NULL, &p->h[0]);
	if (ret)
		return ret;
	pto_args_init(&a);
	pto_args_add_tensor(&a, &p->x, PTO_INPUT);
	pto_args_add_tensor(&a, &p->a, PTO_OUTPUT_EXISTING);
	ret = pto_submit_next_level(o, &fault, &a, NULL,
				    pto_on_kind(PTO_WORKER_AIV), &p->h[1]);
	pto_args_fini(&a);
	if (!ret)
		ret = op(o, PTO_FUNC_ADD, &p->a, &p->b, 0, &p->x, &p->h[1],
			 &p->h[2]);
	return ret;
}

/* A run that fails still writes its files: what was committed. */
TEST(failed_run_writes_its_files)
{
	static const char *const dir = "/tmp/dump_failed";
	struct dd_dump d = { 0 };
	struct handoff p;
	struct rig g;
	pto_run *r;
	int ret;

	ASSERT_EQ(0, system("rm -rf /tmp/dump_failed"));
	rig_open(_metadata, &g, 3 * HN * 4, false, 1);
	for (ret = 0; ret < HN; ret++) {
		g.map[ret] = 2;
		g.map[HN + ret] = 3;
	}
	p.a = pto_tensor_gm(g.bo, g.map, 0, HN * 4, PTO_DTYPE_F32);
	p.b = pto_tensor_gm(g.bo, g.map, HN * 4, HN * 4, PTO_DTYPE_F32);
	p.x = pto_tensor_gm(g.bo, g.map, 2 * HN * 4, HN * 4, PTO_DTYPE_F32);
	ASSERT_EQ(0, pto_orch_dump_args(g.o, PTO_DUMP_FULL, dir));
	ASSERT_EQ(0, pto_run_start(g.o, failing_fn, &p, &r));
	EXPECT_NE(0, pto_run_wait(r, -1));
	pto_run_release(r);
	rig_close(_metadata, &g);

	ASSERT_EQ(0, dd_load(dir, &d));
	EXPECT_STREQ("complete", jstr(&d.root, "accounting"));
	{
		const struct dump_rec *i1 = find(&d, p.h[0].task_id, B, 0);
		const struct dump_rec *o1 = find(&d, p.h[0].task_id, A, 2);

		ASSERT_NE(NULL, i1);
		ASSERT_NE(NULL, o1);
		EXPECT_TRUE(payload_is(&d, i1, HN, 2));
		EXPECT_TRUE(payload_is(&d, o1, HN, 5));
		/* the task after the fault never ran */
		EXPECT_EQ(NULL, find(&d, p.h[2].task_id, B, 0));
		EXPECT_EQ(3u, d.set.n);
	}
	dd_free(&d);
}

/*
 * Dump off: no capture request, no lane bound during the run. PARTIAL
 * with nothing marked asks for nothing either: the scheduler filters
 * before the ioctl, not only the kernel after it.
 */
TEST(off_makes_no_capture_request)
{
	struct pto_sched_stats st;
	struct handoff p;
	struct rig g;

	rig_open(_metadata, &g, 3 * HN * 4, false, 1);
	p.a = pto_tensor_gm(g.bo, g.map, 0, HN * 4, PTO_DTYPE_F32);
	p.b = pto_tensor_gm(g.bo, g.map, HN * 4, HN * 4, PTO_DTYPE_F32);
	p.x = pto_tensor_gm(g.bo, g.map, 2 * HN * 4, HN * 4, PTO_DTYPE_F32);
	ASSERT_EQ(0, pto_orch_run(g.o, handoff_fn, &p));
	ASSERT_EQ(0, pto_orch_sched_stats(g.o, &st));
	EXPECT_EQ(0u, st.captures);
	/* on, then off again: the off run adds nothing */
	ASSERT_EQ(0, pto_orch_dump_args(g.o, PTO_DUMP_FULL, "/tmp/dump_off"));
	ASSERT_EQ(0, pto_orch_run(g.o, handoff_fn, &p));
	ASSERT_EQ(0, pto_orch_dump_args(g.o, PTO_DUMP_OFF, NULL));
	ASSERT_EQ(0, pto_orch_run(g.o, handoff_fn, &p));
	ASSERT_EQ(0, pto_orch_sched_stats(g.o, &st));
	EXPECT_EQ(9u, st.captures);
	ASSERT_EQ(0, pto_orch_dump_args(g.o, PTO_DUMP_PARTIAL,
					"/tmp/dump_off"));
	ASSERT_EQ(0, pto_orch_run(g.o, handoff_fn, &p));
	ASSERT_EQ(0, pto_orch_sched_stats(g.o, &st));
	EXPECT_EQ(9u, st.captures);
	EXPECT_EQ(-EINVAL, pto_orch_dump_args(g.o, 4, "/tmp/x"));
	EXPECT_EQ(-EINVAL, pto_orch_dump_args(g.o, PTO_DUMP_FULL, NULL));
	EXPECT_EQ(-EINVAL, pto_orch_dump_args(g.o, PTO_DUMP_FULL, ""));
	rig_close(_metadata, &g);
}

/* SPMD: one 64-byte line of int32 per block, as examples/spmd. */
#define LINE_I32 16
#define AIV_BLOCKS 24
#define MIX_BLOCKS 8

struct spmd {
	struct pto_tensor x, y;
	struct pto_task h[2];
};

static int spmd_task(pto_orch *o, const struct pto_tensor *t,
		     enum pto_worker_kind kind, uint32_t n, struct pto_task *h)
{
	static const struct pto_callable k = { .kernel_id = PTO_FUNC_BLOCK_ID };
	struct pto_task_args a;
	int ret;

	pto_args_init(&a);
	ret = pto_args_add_tensor(&a, t, PTO_INOUT);
	if (ret >= 0)
		ret = pto_args_add_scalar(&a, LINE_I32);
	if (ret >= 0)
		ret = pto_submit_spmd(o, &k, &a, NULL, kind, n, h);
	pto_args_fini(&a);
	return ret < 0 ? ret : 0;
}

static int spmd_fn(pto_orch *o, void *arg)
{
	struct spmd *p = arg;
	int ret = spmd_task(o, &p->x, PTO_WORKER_AIV, AIV_BLOCKS, &p->h[0]);

	return ret ?: spmd_task(o, &p->y, PTO_WORKER_MIX, MIX_BLOCKS, &p->h[1]);
}

/* @r's int32 payload of @n blocks' lines: every line -1 (@after false),
 * or each holding its block's index, then -1 (@after). */
static bool lines_are(const struct dd_dump *d, const struct dump_rec *r,
		      uint32_t n, bool after)
{
	const int32_t *v = (const int32_t *)(d->set.bin + r->bin_offset);
	uint32_t b, i;

	if (r->bin_size != (uint64_t)n * LINE_I32 * 4 ||
	    r->bin_offset + r->bin_size > d->set.bin_len)
		return false;
	for (b = 0; b < n; b++)
		for (i = 0; i < LINE_I32; i++)
			if (v[b * LINE_I32 + i] !=
			    (after && !i ? (int32_t)b : -1))
				return false;
	return true;
}

/* An SPMD task's three records: its tensor before, its scalar, its
 * tensor after; func ids one per subtask (@nfunc: 1 AIV, 3 MIX). */
static void expect_spmd(struct __test_metadata *_metadata,
			const struct dd_dump *d, size_t first, uint64_t task,
			uint32_t n, uint32_t nfunc)
{
	static const uint8_t stage[3] = { B, B, A };
	static const uint8_t role[3] = { DUMP_ROLE_INOUT, IN, DUMP_ROLE_INOUT };
	static const uint32_t arg[3] = { 0, 1, 0 };
	size_t i;
	uint32_t f;

	ASSERT_LE(first + 3, d->set.n);
	for (i = 0; i < 3; i++) {
		const struct dump_rec *r = &d->set.rec[first + i];

		EXPECT_EQ(task, r->task_id) TH_LOG("record %zu", first + i);
		EXPECT_EQ(stage[i], r->stage) TH_LOG("record %zu", first + i);
		EXPECT_EQ(role[i], r->role) TH_LOG("record %zu", first + i);
		EXPECT_EQ(arg[i], r->arg_index) TH_LOG("record %zu", first + i);
		EXPECT_EQ(PTO_DTYPE_I32, r->dtype) TH_LOG("record %zu", first + i);
		EXPECT_EQ(nfunc, r->nfunc) TH_LOG("record %zu", first + i);
		for (f = 0; f < nfunc && f < r->nfunc; f++)
			EXPECT_EQ((int32_t)PTO_FUNC_BLOCK_ID, r->func_id[f]);
		if (i == 1) {
			EXPECT_EQ(S, r->kind);
			EXPECT_EQ((uint64_t)LINE_I32, r->value);
			continue;
		}
		EXPECT_EQ(T, r->kind);
		EXPECT_TRUE(lines_are(d, r, n, i == 2))
			TH_LOG("task %llu %s: lines not as expected",
			       (unsigned long long)task,
			       i ? "after completion" : "before dispatch");
	}
}

/*
 * SPMD tasks on two scheduler threads, more blocks than cores: each is
 * captured once, its INOUT lines before any block wrote (all still -1)
 * and after every block did (each line its block's index).
 */
TEST(spmd_captured_once_around_all_blocks)
{
	static const char *const dir = "/tmp/dump_spmd";
	uint64_t xb = AIV_BLOCKS * LINE_I32 * 4, yb = MIX_BLOCKS * LINE_I32 * 4;
	struct dd_dump d = { 0 };
	struct spmd p;
	struct rig g;

	ASSERT_EQ(0, system("rm -rf /tmp/dump_spmd"));
	rig_open(_metadata, &g, xb + yb, false, 2);
	memset(g.map, 0xff, xb + yb);
	p.x = pto_tensor_gm(g.bo, g.map, 0, xb, PTO_DTYPE_I32);
	p.y = pto_tensor_gm(g.bo, g.map, xb, yb, PTO_DTYPE_I32);
	ASSERT_EQ(0, pto_orch_dump_args(g.o, PTO_DUMP_FULL, dir));
	ASSERT_EQ(0, pto_orch_run(g.o, spmd_fn, &p)) TH_LOG("%s",
							   pto_orch_error(g.o));
	rig_close(_metadata, &g);

	ASSERT_EQ(0, dd_load(dir, &d));
	EXPECT_STREQ("complete", jstr(&d.root, "accounting"));
	ASSERT_EQ(6u, d.set.n);
	EXPECT_EQ(0u, manifest_u64(&d, "dropped_records"));
	expect_spmd(_metadata, &d, 0, p.h[0].task_id, AIV_BLOCKS, 1);
	expect_spmd(_metadata, &d, 3, p.h[1].task_id, MIX_BLOCKS, 3);
	dd_free(&d);
}

/* A group's members: z0 = a + b on one AIV, z1 = b + b on the other. */
#define GN 1024
struct group {
	struct pto_tensor a, b, z0, z1;
	struct pto_task h;
};

static int group_fn(pto_orch *o, void *arg)
{
	static const struct pto_callable k = { .kernel_id = PTO_FUNC_ADD };
	static const int32_t ids[2] = { 1, 2 };	/* cluster 0's AIVs */
	struct group *p = arg;
	struct pto_task_args m[2], *mp[2] = { &m[0], &m[1] };
	int ret;

	pto_args_init(&m[0]);
	pto_args_init(&m[1]);
	ret = pto_args_add_tensor(&m[0], &p->a, PTO_INPUT);
	if (ret >= 0)
		ret = pto_args_add_tensor(&m[0], &p->b, PTO_INPUT);
	if (ret >= 0)
		ret = pto_args_add_tensor(&m[0], &p->z0, PTO_OUTPUT_EXISTING);
	if (ret >= 0)
		ret = pto_args_add_tensor(&m[1], &p->b, PTO_INPUT);
	if (ret >= 0)
		ret = pto_args_add_tensor(&m[1], &p->b, PTO_INPUT);
	if (ret >= 0)
		ret = pto_args_add_tensor(&m[1], &p->z1, PTO_OUTPUT_EXISTING);
	if (ret >= 0)
		ret = pto_submit_next_level_group(o, &k, mp, 2, NULL, ids,
						  &p->h);
	pto_args_fini(&m[0]);
	pto_args_fini(&m[1]);
	return ret < 0 ? ret : 0;
}

/* A group task is captured once: its members' arguments numbered on,
 * member 1's from member 0's count, inputs before, outputs after. */
TEST(group_members_numbered_on)
{
	static const char *const dir = "/tmp/dump_group";
	static const struct want w[] = {
		{ 1, B, IN, T, 0, PTO_FUNC_ADD, 2, true },
		{ 1, B, IN, T, 1, PTO_FUNC_ADD, 3, true },
		{ 1, B, IN, T, 3, PTO_FUNC_ADD, 3, true },
		{ 1, B, IN, T, 4, PTO_FUNC_ADD, 3, true },
		{ 1, A, OUT, T, 2, PTO_FUNC_ADD, 5, true },
		{ 1, A, OUT, T, 5, PTO_FUNC_ADD, 6, true },
	};
	struct dd_dump d = { 0 };
	struct group p;
	struct rig g;
	int i;

	ASSERT_EQ(0, system("rm -rf /tmp/dump_group"));
	rig_open(_metadata, &g, 4 * GN * 4, false, 1);
	for (i = 0; i < 4 * GN; i++)
		g.map[i] = i < GN ? 2 : i < 2 * GN ? 3 : 0;
	p.a = pto_tensor_gm(g.bo, g.map, 0, GN * 4, PTO_DTYPE_F32);
	p.b = pto_tensor_gm(g.bo, g.map, GN * 4, GN * 4, PTO_DTYPE_F32);
	p.z0 = pto_tensor_gm(g.bo, g.map, 2 * GN * 4, GN * 4, PTO_DTYPE_F32);
	p.z1 = pto_tensor_gm(g.bo, g.map, 3 * GN * 4, GN * 4, PTO_DTYPE_F32);
	ASSERT_EQ(0, pto_orch_dump_args(g.o, PTO_DUMP_FULL, dir));
	ASSERT_EQ(0, pto_orch_run(g.o, group_fn, &p)) TH_LOG("%s",
							    pto_orch_error(g.o));
	rig_close(_metadata, &g);

	ASSERT_EQ(0, dd_load(dir, &d));
	EXPECT_EQ(1u, p.h.task_id);
	expect_records(_metadata, &d, w, sizeof(w) / sizeof(w[0]), GN);
	EXPECT_STREQ("complete", jstr(&d.root, "accounting"));
	dd_free(&d);
}

TEST_HARNESS_MAIN
