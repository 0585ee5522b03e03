// SPDX-License-Identifier: MIT
/*
 * Under the sanitizers, on the threaded in-process orchestrator: the
 * scale tests at a smaller size (orch_scale.h; perf_orch_scale runs them
 * at 1,000,000), the deadlock diagnosis against ordinary back-pressure
 * on random shapes, and the run in every TensorMap key.
 */
#define SCALE_N 50000u
#include <pthread.h>
#include "orch_scale.h"

/* ---- the deadlock diagnosis ------------------------------------------ */

static int sc_touch(struct pto_task_ctx *c)
{
	uint32_t i;

	for (i = 0; i < c->ntensors; i++)
		if (c->tensors[i].tag == PTO_OUTPUT)
			memset((void *)(uintptr_t)c->tensors[i].t.data, 0x5a, 64);
	if (c->nscalars && c->scalars[0])
		usleep((useconds_t)c->scalars[0]);
	return 0;
}

static const struct pto_callable SC_TOUCH = { .fn = sc_touch };

struct shape {
	unsigned seed;
	uint32_t ring_kib;
	int err;
	char msg[256];
};

/*
 * One scope of random tasks: auto-allocated OUTPUTs of 1..6 KiB, INPUTs
 * on earlier outputs of the same scope, pto_alloc slabs, a nested scope
 * now and then, each scope's heap at most half the ring (so the run can
 * always complete: what a scope holds fits, and what ended scopes hold
 * is freed as their tasks run).
 */
static int random_scope(pto_orch *o, struct shape *sh, unsigned *rs, int depth)
{
	struct pto_tensor outs[16];
	uint64_t budget = (uint64_t)sh->ring_kib * 1024 / 2, used = 0;
	struct pto_task_args a;
	int k = 1 + rand_r(rs) % 12, i, n = 0, err = 0;

	pto_args_init(&a);
	err = pto_scope_begin(o);
	for (i = 0; i < k && !err; i++) {
		uint64_t bytes = (1 + rand_r(rs) % 6) * 1024;
		struct pto_tensor t = { .nbytes = bytes };

		if (used + bytes > budget)
			break;
		used += bytes;
		if (rand_r(rs) % 5 == 0) {
			err = pto_alloc(o, bytes, &outs[n], NULL);
			n += !err;
			continue;
		}
		pto_args_reset(&a);
		pto_args_add_tensor(&a, &t, PTO_OUTPUT);
		if (n && rand_r(rs) % 2)
			pto_args_add_tensor(&a, &outs[rand_r(rs) % n], PTO_INPUT);
		pto_args_add_scalar(&a, (uint64_t)(rand_r(rs) % 200));
		err = pto_submit_sub(o, &SC_TOUCH, &a, NULL);
		if (!err && n < 16)
			outs[n++] = a.tensors[0].t;
	}
	if (!err && depth < 3 && rand_r(rs) % 4 == 0)
		err = random_scope(o, sh, rs, depth + 1);
	if (!err)
		err = pto_scope_end(o);
	pto_args_fini(&a);
	return err;
}

static int random_run(pto_orch *o, void *arg)
{
	struct shape *sh = arg;
	unsigned rs = sh->seed;
	int s, nscopes = 20 + rand_r(&rs) % 20, err = 0;

	for (s = 0; s < nscopes && !err; s++)
		err = random_scope(o, sh, &rs, 2);
	if (err)
		snprintf(sh->msg, sizeof(sh->msg), "%s", pto_orch_error(o));
	sh->err = err;
	return err;
}

/*
 * Runs that would complete never see -EDEADLK: 16 seeds (printed; set
 * PTO_SEED to replay one), heap rings of 32 KiB so that back-pressure
 * is frequent, a timeout far above any wait.
 */
TEST(deadlock_diagnosis_never_fires_on_a_run_that_completes)
{
	struct pto_orch_config cfg = { .heap_ring_size = 32 * 1024,
				       .timeout_ms = 30000 };
	const char *env = getenv("PTO_SEED");
	unsigned base = env ? (unsigned)strtoul(env, NULL, 0) : (unsigned)time(NULL);
	pto_orch *o;
	int i;

	ASSERT_EQ(0, pto_orch_create_inproc(&cfg, &o));
	for (i = 0; i < (env ? 1 : 16); i++) {
		struct shape sh = { .seed = base + (unsigned)i, .ring_kib = 32 };
		int ret;

		sc_note("seed %u\n", sh.seed);
		ret = pto_orch_run(o, random_run, &sh);
		EXPECT_EQ(0, ret) TH_LOG("seed %u: %d %s", sh.seed, sh.err, sh.msg);
		EXPECT_NE(-EDEADLK, sh.err);
	}
	EXPECT_EQ(0, pto_orch_close(o, 10000));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

static int fill_outer_scope(pto_orch *o, void *arg)
{
	struct pto_tensor t;
	int err;

	(void)arg;
	err = pto_alloc(o, 40 * 1024, &t, NULL);
	if (!err)
		err = pto_alloc(o, 40 * 1024, &t, NULL);
	return err;
}

/* The public view: the run fails with -EDEADLK at once (timeout 20 s),
 * and its error says which ring and scope. */
TEST(own_open_scope_holding_the_heap_fails_the_run_at_once)
{
	struct pto_orch_config cfg = { .heap_ring_size = 64 * 1024,
				       .timeout_ms = 20000 };
	uint64_t t0;
	pto_orch *o;
	pto_run *r;

	ASSERT_EQ(0, pto_orch_create_inproc(&cfg, &o));
	t0 = sc_now_ns();
	EXPECT_EQ(-EDEADLK, pto_run_start(o, fill_outer_scope, NULL, &r));
	EXPECT_EQ(-EDEADLK, pto_run_wait(r, -1));
	EXPECT_LT(sc_now_ns() - t0, 10000 * 1000000ULL);
	EXPECT_NE(NULL, strstr(pto_run_error(r),
			       "deadlock: heap ring 0 is full and its oldest allocation is held by the open scope at depth 1 "
			       "(40960 bytes held, 40960 asked"))
		TH_LOG("%s", pto_run_error(r));
	pto_run_release(r);
	EXPECT_EQ(0, pto_orch_close(o, 10000));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

/* ---- the run in the TensorMap key ------------------------------------- */

static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static int gate_open;
static _Atomic int writer_started, reader_ran;

static int slow_writer(struct pto_task_ctx *c)
{
	atomic_store(&writer_started, 1);
	pthread_mutex_lock(&gate_mu);
	while (!gate_open)
		pthread_cond_wait(&gate_cv, &gate_mu);
	pthread_mutex_unlock(&gate_mu);
	*(int *)(uintptr_t)c->tensors[0].t.data = 1;
	return 0;
}

static int reader(struct pto_task_ctx *c)
{
	(void)c;
	atomic_store(&reader_ran, 1);
	return 0;
}

static const struct pto_callable SLOW_WRITER = { .fn = slow_writer };
static const struct pto_callable READER = { .fn = reader };
static int shared_buf;

static int submit_one(pto_orch *o, void *arg)
{
	struct pto_tensor t = pto_tensor_host(&shared_buf, sizeof(shared_buf));
	struct pto_task_args a;
	int err;

	pto_args_init(&a);
	if (arg == &SLOW_WRITER)
		pto_args_add_tensor(&a, &t, PTO_OUTPUT_EXISTING);
	else
		pto_args_add_tensor(&a, &t, PTO_INPUT);
	err = pto_submit_sub(o, arg, &a, NULL);
	pto_args_fini(&a);
	return err;
}

/*
 * Two pipelined runs use one buffer: run 1 writes it (slowly: the
 * writer waits for the gate), run 2 reads it. A TensorMap key without
 * the run would make run 2's reader wait for run 1's writer; with it,
 * run 2 completes while the writer still waits.
 */
TEST(pipelined_runs_sharing_a_buffer_get_no_edges)
{
	pto_run *r1, *r2;
	pto_orch *o;
	int i;

	ASSERT_EQ(0, pto_orch_create_inproc(NULL, &o));
	ASSERT_EQ(0, pto_run_start(o, submit_one, (void *)&SLOW_WRITER, &r1));
	for (i = 0; i < 10000 && !atomic_load(&writer_started); i++)
		usleep(1000);
	ASSERT_EQ(1, atomic_load(&writer_started));
	ASSERT_EQ(0, pto_run_start(o, submit_one, (void *)&READER, &r2));
	EXPECT_EQ(0, pto_run_wait(r2, 10000));
	EXPECT_EQ(1, atomic_load(&reader_ran));
	EXPECT_EQ(0, pto_run_done(r1));	/* the writer still waits */
	pthread_mutex_lock(&gate_mu);
	gate_open = 1;
	pthread_cond_broadcast(&gate_cv);
	pthread_mutex_unlock(&gate_mu);
	EXPECT_EQ(0, pto_run_wait(r1, -1));
	EXPECT_EQ(1, shared_buf);
	pto_run_release(r1);
	pto_run_release(r2);
	EXPECT_EQ(0, pto_orch_close(o, 10000));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

TEST_HARNESS_MAIN
