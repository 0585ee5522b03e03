// SPDX-License-Identifier: MIT
/*
 * Runs on the in-process backend: handles, fences, errors, the pipeline
 * depth, close() with a drain budget.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include "kselftest_harness.h"
#include <pto/sched.h>
#include "orch_test.h"

/* A gate tasks can wait on, opened by the test. */
struct gate {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int open;
	_Atomic int ran;
	_Atomic int started;
};

static struct gate G = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
			 0, 0, 0 };

static void gate_set(int open)
{
	pthread_mutex_lock(&G.mu);
	G.open = open;
	pthread_cond_broadcast(&G.cv);
	pthread_mutex_unlock(&G.mu);
}

static int k_gated(struct pto_task_ctx *c)
{
	atomic_fetch_add(&G.started, 1);
	pthread_mutex_lock(&G.mu);
	while (!G.open)
		pthread_cond_wait(&G.cv, &G.mu);
	pthread_mutex_unlock(&G.mu);
	atomic_fetch_add(&G.ran, 1);
	return 0;
}

static int k_count(struct pto_task_ctx *c)
{
	atomic_fetch_add(&G.ran, 1);
	return 0;
}

static int k_fail(struct pto_task_ctx *c)
{
	snprintf(c->errmsg, c->errmsg_len, "kernel says no");
	return -EIO;
}

static int k_write(struct pto_task_ctx *c)
{
	*(int *)(uintptr_t)c->tensors[0].t.data = (int)c->scalars[0];
	return 0;
}

static pto_orch *mk(struct __test_metadata *_metadata, uint32_t depth)
{
	struct pto_orch_config cfg = { .heap_ring_size = 1 << 20, .task_window = 64,
				       .run_depth = depth };
	pto_orch *o;

	atomic_store(&G.ran, 0);
	gate_set(0);
	EXPECT_EQ(0, pto_orch_create_inproc(&cfg, &o));
	return o;
}

static void done(struct __test_metadata *_metadata, pto_orch *o)
{
	EXPECT_TRUE(ot_empty(o));
	EXPECT_EQ(0, pto_orch_close(o, 2000));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

static int one_sub(pto_orch *o, pto_kernel_fn fn, void *buf, int val,
		   enum pto_tag tag, struct pto_task *h)
{
	struct pto_callable c = { .fn = fn };
	struct pto_task_args a;
	int err;

	pto_args_init(&a);
	if (buf) {
		struct pto_tensor t = pto_tensor_host(buf, sizeof(int));

		pto_args_add_tensor(&a, &t, tag);
	}
	pto_args_add_scalar(&a, (uint64_t)val);
	err = pto_submit_sub(o, &c, &a, h);
	pto_args_fini(&a);
	return err;
}

static int orch_gated(pto_orch *o, void *arg)
{
	return one_sub(o, k_gated, NULL, 0, PTO_NO_DEP, NULL);
}

TEST(wait_timeout_then_result)
{
	pto_orch *o = mk(_metadata, 2);
	pto_run *r;

	ASSERT_EQ(0, pto_run_start(o, orch_gated, NULL, &r));
	EXPECT_EQ(-ETIMEDOUT, pto_run_wait(r, 20));
	EXPECT_EQ(0, pto_run_done(r));
	EXPECT_EQ(-EBUSY, pto_run_result(r));
	EXPECT_EQ(-ETIMEDOUT, pto_run_wait(r, 0));
	gate_set(1);
	EXPECT_EQ(0, pto_run_wait(r, -1));
	EXPECT_EQ(1, atomic_load(&G.ran));	/* the timeout cancelled nothing */
	EXPECT_EQ(0, pto_run_wait(r, 0));	/* replays */
	EXPECT_EQ(0, pto_run_result(r));
	EXPECT_STREQ("", pto_run_error(r));
	pto_run_release(r);
	done(_metadata, o);
}

struct stash {
	struct pto_task h;
	int x;
};

static int orch_stash(pto_orch *o, void *arg)
{
	struct stash *s = arg;

	return one_sub(o, k_write, &s->x, 5, PTO_OUTPUT_EXISTING, &s->h);
}

static int orch_use_stale(pto_orch *o, void *arg)
{
	struct stash *s = arg;
	struct pto_callable c = { .fn = k_count };
	struct pto_task_args a;
	int err;

	pto_args_init(&a);
	pto_args_add_dep(&a, s->h);
	err = pto_submit_sub(o, &c, &a, NULL);
	pto_args_fini(&a);
	return err;
}

TEST(stale_handle_from_earlier_run_rejected)
{
	pto_orch *o = mk(_metadata, 2);
	struct stash s = { .x = 0 };
	pto_run *r;

	ASSERT_EQ(0, pto_orch_run(o, orch_stash, &s));
	EXPECT_EQ(5, s.x);
	EXPECT_EQ(-EINVAL, pto_run_start(o, orch_use_stale, &s, &r));
	EXPECT_NE(NULL, strstr(pto_orch_error(o), "another run"));
	ASSERT_NE(NULL, r);
	EXPECT_EQ(-EINVAL, pto_run_wait(r, 1000));
	EXPECT_NE(NULL, strstr(pto_run_error(r), "another run"));
	pto_run_release(r);
	EXPECT_EQ(0, atomic_load(&G.ran));
	done(_metadata, o);
}

/* A task of this run first, so the foreign handle's task id is in range. */
static int orch_use_foreign(pto_orch *o, void *arg)
{
	int err = one_sub(o, k_count, NULL, 0, PTO_NO_DEP, NULL);

	return err ?: orch_use_stale(o, arg);
}

/*
 * Run ids are unique in the process: a handle from another orchestrator's
 * run (same run and task numbers, as both start counting at 1) is refused,
 * not wired to an unrelated task of this one.
 */
TEST(handle_from_another_orchestrator_rejected)
{
	pto_orch *b = mk(_metadata, 2), *a = mk(_metadata, 2);
	struct stash s = { .x = 0 };
	pto_run *r;

	ASSERT_EQ(0, pto_orch_run(b, orch_stash, &s));
	EXPECT_EQ(-EINVAL, pto_run_start(a, orch_use_foreign, &s, &r));
	EXPECT_NE(NULL, strstr(pto_orch_error(a), "another run"));
	ASSERT_NE(NULL, r);
	EXPECT_EQ(-EINVAL, pto_run_wait(r, 1000));
	pto_run_release(r);
	done(_metadata, a);
	done(_metadata, b);
}

/* pto_run_start on the same orchestrator from inside its orchestration
 * function is refused; the outer run goes on unharmed. */
static int orch_nested(pto_orch *o, void *arg)
{
	pto_run *inner = NULL;

	*(int *)arg = pto_run_start(o, orch_gated, NULL, &inner);
	if (inner)
		return -EFAULT;	/* must stay NULL */
	return one_sub(o, k_count, NULL, 0, PTO_NO_DEP, NULL);
}

TEST(nested_submit_on_the_same_orchestrator_refused)
{
	pto_orch *o = mk(_metadata, 2);
	int err = 0;

	EXPECT_EQ(0, pto_orch_run(o, orch_nested, &err));
	EXPECT_EQ(-EDEADLK, err);
	EXPECT_EQ(1, atomic_load(&G.ran));
	done(_metadata, o);
}

static int orch_positive(pto_orch *o, void *arg)
{
	return 1;
}

static int orch_fail_chain(pto_orch *o, void *arg)
{
	int *buf = arg;
	int err;

	err = one_sub(o, k_fail, &buf[0], 0, PTO_OUTPUT_EXISTING, NULL);
	err = err ?: one_sub(o, k_write, &buf[0], 7, PTO_INOUT, NULL);
	err = err ?: one_sub(o, k_write, &buf[0], 8, PTO_INOUT, NULL);
	err = err ?: one_sub(o, k_write, &buf[1], 9, PTO_OUTPUT_EXISTING, NULL);
	return err;
}

TEST(failed_producer_poisons_dependent)
{
	pto_orch *o = mk(_metadata, 2);
	int buf[2] = { 0, 0 };
	pto_run *r;

	ASSERT_EQ(0, pto_run_start(o, orch_fail_chain, buf, &r));
	EXPECT_EQ(-EIO, pto_run_wait(r, 5000));
	EXPECT_NE(NULL, strstr(pto_run_error(r), "kernel says no"));
	EXPECT_EQ(0, buf[0]);	/* dependents never ran */
	EXPECT_EQ(9, buf[1]);	/* the independent task did */
	pto_run_release(r);
	/* The orchestrator is usable for the next run. */
	ASSERT_EQ(0, pto_orch_run(o, orch_stash, &(struct stash){ .x = 0 }));
	done(_metadata, o);
}

TEST(pipeline_depth_blocks_begin_run)
{
	pto_orch *o = mk(_metadata, 2);
	pto_run *r[3];

	ASSERT_EQ(0, pto_run_start(o, orch_gated, NULL, &r[0]));
	ASSERT_EQ(0, pto_run_start(o, orch_gated, NULL, &r[1]));
	pthread_mutex_lock(&o->runs_mu);
	EXPECT_EQ(2u, o->runs_in_flight);
	pthread_mutex_unlock(&o->runs_mu);
	gate_set(1);
	ASSERT_EQ(0, pto_run_start(o, orch_gated, NULL, &r[2]));
	EXPECT_EQ(0, pto_run_wait(r[0], -1));
	EXPECT_EQ(0, pto_run_wait(r[1], -1));
	EXPECT_EQ(0, pto_run_wait(r[2], -1));
	EXPECT_LT(pto_run_id(r[0]), pto_run_id(r[1]));
	pto_run_release(r[0]);
	pto_run_release(r[1]);
	pto_run_release(r[2]);
	done(_metadata, o);
}

static void *open_later(void *arg)
{
	ot_sleep_ms(40);
	gate_set(1);
	return NULL;
}

TEST(begin_run_blocks_when_depth_spent)
{
	pto_orch *o = mk(_metadata, 1);
	pto_run *r[2];
	pthread_t th;
	uint64_t t0;

	ASSERT_EQ(0, pto_run_start(o, orch_gated, NULL, &r[0]));
	EXPECT_EQ(0, pto_run_done(r[0]));	/* its task waits on the gate */
	t0 = ot_now_ns();
	pthread_create(&th, NULL, open_later, NULL);
	ASSERT_EQ(0, pto_run_start(o, orch_gated, NULL, &r[1]));	/* blocks */
	EXPECT_GE(ot_now_ns() - t0, 30 * 1000000ULL);
	EXPECT_EQ(1, pto_run_done(r[0]));
	pthread_join(th, NULL);
	EXPECT_EQ(0, pto_run_wait(r[1], -1));
	pto_run_release(r[0]);
	pto_run_release(r[1]);
	done(_metadata, o);
}

TEST(close_drains_within_budget_and_is_retryable)
{
	pto_orch *o = mk(_metadata, 2);
	pto_run *r, *r2;

	ASSERT_EQ(0, pto_run_start(o, orch_gated, NULL, &r));
	EXPECT_EQ(-ETIMEDOUT, pto_orch_close(o, 20));
	EXPECT_EQ(-EBUSY, pto_orch_destroy(o));
	/* Closing: new submissions are rejected. */
	EXPECT_EQ(-ESHUTDOWN, pto_run_start(o, orch_gated, NULL, &r2));
	EXPECT_EQ(NULL, r2);
	gate_set(1);
	EXPECT_EQ(0, pto_orch_close(o, 2000));
	EXPECT_EQ(0, pto_run_wait(r, 0));
	pto_run_release(r);
	EXPECT_TRUE(ot_empty(o));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

/*
 * Two closes at once, as a watchdog's close beside the program's own:
 * only one stops the backend (its stop joins threads; two joins of one
 * thread are undefined). The backend's stop waits here until the second
 * close has returned: that close waits for the first's stop, within its
 * budget (at least 1 s), and times out - it never calls stop itself; a
 * retry finds the orchestrator closed (a second stop would be counted).
 */
static struct {
	_Atomic int in_stop, max_in_stop, stops, second_done;
} SS;

static int ss_heap_map(void *be, int ring, uint64_t size, struct orch_heap *h)
{
	(void)be;
	(void)ring;
	memset(h, 0, sizeof(*h));
	h->base = aligned_alloc(PTO_HEAP_ALIGN, size);
	h->size = size;
	return h->base ? 0 : -ENOMEM;
}

static void ss_heap_unmap(void *be, int ring, struct orch_heap *h)
{
	(void)be;
	(void)ring;
	free(h->base);
}

static int ss_start(void *be, struct pto_orch *o) { (void)be; (void)o; return 0; }
static void ss_kick(void *be, int32_t w, uint32_t k) { (void)be; (void)w; (void)k; }
static void ss_destroy(void *be) { (void)be; }

static int ss_stop(void *be, const struct timespec *d)
{
	int n = atomic_fetch_add(&SS.in_stop, 1) + 1;
	uint64_t t0 = ot_now_ns();

	(void)be;
	(void)d;
	atomic_fetch_add(&SS.stops, 1);
	if (n > atomic_load(&SS.max_in_stop))
		atomic_store(&SS.max_in_stop, n);
	/* The first: until the second close returned, or joined us here. */
	while (n == 1 && !atomic_load(&SS.second_done) &&
	       atomic_load(&SS.in_stop) < 2 && ot_now_ns() - t0 < 10000000000ULL)
		usleep(1000);
	atomic_fetch_sub(&SS.in_stop, 1);
	return 0;
}

static const struct orch_backend_ops ss_ops = {
	.name = "slow-stop", .heap_map = ss_heap_map,
	.heap_unmap = ss_heap_unmap, .start = ss_start, .stop = ss_stop,
	.kick = ss_kick, .destroy = ss_destroy,
};

static void *ss_close(void *arg)
{
	pto_orch *o = arg;

	return (void *)(intptr_t)pto_orch_close(o, 5000);
}

TEST(two_concurrent_closes_stop_the_backend_once)
{
	struct pto_orch_config cfg = { .heap_ring_size = 1 << 16,
				       .task_window = 8 };
	uint64_t t0 = ot_now_ns();
	pto_orch *o;
	pthread_t th;
	void *ret;

	ASSERT_EQ(0, orch_create(&cfg, &ss_ops, NULL, &o));
	ASSERT_EQ(0, pthread_create(&th, NULL, ss_close, o));
	while (!atomic_load(&SS.in_stop) && ot_now_ns() - t0 < 10000000000ULL)
		usleep(1000);
	ASSERT_EQ(1, atomic_load(&SS.in_stop));
	EXPECT_EQ(-ETIMEDOUT, pto_orch_close(o, 0));
	atomic_store(&SS.second_done, 1);
	pthread_join(th, &ret);
	EXPECT_EQ(0, (int)(intptr_t)ret);
	EXPECT_EQ(1, atomic_load(&SS.max_in_stop));
	EXPECT_EQ(1, atomic_load(&SS.stops));
	EXPECT_EQ(0, pto_orch_close(o, 0));	/* closed: no second stop */
	EXPECT_EQ(1, atomic_load(&SS.stops));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

/*
 * pto_orch_abort() on the in-process backend: a host callback cannot be
 * interrupted, so -EOPNOTSUPP at once, and nothing changed - not left
 * closing (a new run is taken), the running callback's run completes.
 */
TEST(abort_on_the_inproc_backend_is_eopnotsupp_and_changes_nothing)
{
	pto_orch *o = mk(_metadata, 2);
	struct stash st = { .x = 0 };
	pto_run *r;

	ASSERT_EQ(0, pto_run_start(o, orch_gated, NULL, &r));
	EXPECT_EQ(-EOPNOTSUPP, pto_orch_abort(o, 20));
	EXPECT_EQ(0, pto_run_done(r));
	gate_set(1);
	EXPECT_EQ(0, pto_run_wait(r, 10000));
	pto_run_release(r);
	EXPECT_EQ(0, pto_orch_run(o, orch_stash, &st));
	EXPECT_EQ(5, st.x);
	done(_metadata, o);
}

/*
 * A run handle still held keeps the orchestrator: destroy is -EBUSY and
 * frees nothing (releasing the handle later would reach into freed
 * memory), and succeeds once the handle is released.
 */
TEST(destroy_with_an_outstanding_run_handle_is_ebusy)
{
	pto_orch *o = mk(_metadata, 2);
	pto_run *r;

	gate_set(1);
	ASSERT_EQ(0, pto_run_start(o, orch_gated, NULL, &r));
	ASSERT_EQ(0, pto_run_wait(r, -1));
	ASSERT_EQ(0, pto_orch_close(o, 2000));
	EXPECT_EQ(1u, orch_runs_alive(o));
	EXPECT_EQ(-EBUSY, pto_orch_destroy(o));
	/* Nothing was freed: the handle still answers. */
	EXPECT_EQ(1, pto_run_done(r));
	EXPECT_EQ(0, pto_run_result(r));
	EXPECT_STREQ("", pto_run_error(r));
	EXPECT_EQ(1, atomic_load(&G.ran));
	pto_run_release(r);
	EXPECT_EQ(0u, orch_runs_alive(o));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

struct close_inside {
	int err;
	uint64_t ns;
};

static int orch_close_inside(pto_orch *o, void *arg)
{
	struct close_inside *ci = arg;
	uint64_t t0 = ot_now_ns();

	ci->err = pto_orch_close(o, 500);
	ci->ns = ot_now_ns() - t0;
	return one_sub(o, k_count, NULL, 0, PTO_NO_DEP, NULL);
}

/*
 * Close from inside the orchestration function cannot drain the run being
 * built: -EDEADLK at once (as pto_run_start there), not -ETIMEDOUT after the
 * whole budget; the orchestrator is left open, so this run's later submit
 * and the next run go through.
 */
TEST(close_from_the_orchestration_function_is_edeadlk)
{
	struct close_inside ci = { 0, 0 };
	pto_orch *o = mk(_metadata, 2);
	struct stash st = { .x = 0 };

	EXPECT_EQ(0, pto_orch_run(o, orch_close_inside, &ci));
	EXPECT_EQ(-EDEADLK, ci.err);
	EXPECT_GT(100 * 1000000ULL, ci.ns);
	EXPECT_EQ(1, atomic_load(&G.ran));
	EXPECT_EQ(0, pto_orch_run(o, orch_stash, &st));
	EXPECT_EQ(5, st.x);
	done(_metadata, o);
}

static int orch_open_scope(pto_orch *o, void *arg)
{
	int err = pto_scope_begin(o);

	return err ?: one_sub(o, k_count, NULL, 0, PTO_NO_DEP, NULL);
}

/* @fn fails the run's construction with @err and a message with @msg;
 * the run's wait reports @err. */
static void construction_fails(struct __test_metadata *_metadata,
			       pto_orch_fn fn, int err, const char *msg)
{
	pto_orch *o = mk(_metadata, 2);
	pto_run *r;

	EXPECT_EQ(err, pto_run_start(o, fn, NULL, &r));
	EXPECT_NE(NULL, strstr(pto_orch_error(o), msg));
	EXPECT_EQ(err, pto_run_wait(r, 2000));
	pto_run_release(r);
	done(_metadata, o);
}

TEST(scope_left_open_is_an_error)
{
	construction_fails(_metadata, orch_open_scope, -EINVAL, "left open");
}

/* Errors are negative errno values: a positive return is -EINVAL. */
TEST(positive_return_of_the_orchestration_function_is_einval)
{
	construction_fails(_metadata, orch_positive, -EINVAL, "returned 1");
}

static int orch_user_error(pto_orch *o, void *arg)
{
	int err = one_sub(o, k_gated, NULL, 0, PTO_NO_DEP, NULL);

	return err ?: -ENOENT;	/* the orchestration function fails */
}

TEST(orchestration_error_is_synchronous_and_cancels)
{
	pto_orch *o = mk(_metadata, 2);
	pto_run *r;

	gate_set(1);
	EXPECT_EQ(-ENOENT, pto_run_start(o, orch_user_error, NULL, &r));
	EXPECT_EQ(-ENOENT, pto_run_wait(r, 2000));
	pto_run_release(r);
	done(_metadata, o);
}

/*
 * The first construction error is the run's: its code and message survive
 * what the function does next - a submit refused because the run already
 * failed (0), another failing call with a message of its own (1), or
 * returning the refusal's code (2). pto_run_start returns the first code,
 * pto_orch_error() and the run's wait describe it.
 */
static int orch_error_then_more(pto_orch *o, void *arg)
{
	int mode = (int)(intptr_t)arg, err;
	struct pto_callable c = { .fn = k_count };
	struct pto_task_args a;

	pto_args_init(&a);
	pto_submit_next_level(o, &c, &a, NULL, pto_on_worker(42), NULL);
	if (mode == 1)
		err = pto_submit_next_level(o, &c, &a, NULL, pto_on_worker(43), NULL);
	else
		err = pto_submit_sub(o, &c, &a, NULL);
	pto_args_fini(&a);
	return mode ? err : 0;
}

TEST(first_construction_error_is_kept)
{
	int mode;

	for (mode = 0; mode < 3; mode++) {
		pto_orch *o = mk(_metadata, 2);
		pto_run *r;

		EXPECT_EQ(-EINVAL, pto_run_start(o, orch_error_then_more,
						 (void *)(intptr_t)mode, &r));
		EXPECT_NE(NULL, strstr(pto_orch_error(o), "no worker with id 42"))
			TH_LOG("mode %d: \"%s\"", mode, pto_orch_error(o));
		EXPECT_EQ(-EINVAL, pto_run_wait(r, 2000));
		EXPECT_NE(NULL, strstr(pto_run_error(r), "no worker with id 42"))
			TH_LOG("mode %d: run \"%s\"", mode, pto_run_error(r));
		pto_run_release(r);
		done(_metadata, o);
	}
}

/*
 * Submit and alloc outside an orchestration function are usage errors:
 * -EINVAL, as scope_begin there (-ECANCELED means a doomed run, orch.h),
 * with a message, and nothing is queued or run.
 */
TEST(submit_outside_run_rejected)
{
	pto_orch *o = mk(_metadata, 2);
	struct pto_tensor t = { .nbytes = 1 };
	struct pto_task h = { .run_id = 77 };
	struct pto_task_args a;

	pto_args_init(&a);
	EXPECT_EQ(-EINVAL, pto_submit_sub(o, &(struct pto_callable){ .fn = k_count },
					  &a, &h));
	EXPECT_NE(NULL, strstr(pto_orch_error(o), "outside"));
	EXPECT_EQ(77, h.run_id);	/* no handle written */
	o->errmsg[0] = 0;
	EXPECT_EQ(-EINVAL, pto_alloc(o, 1024, &t, NULL));
	EXPECT_NE(NULL, strstr(pto_orch_error(o), "outside"));
	EXPECT_EQ(1, t.nbytes);		/* *out untouched */
	EXPECT_EQ(-EINVAL, pto_scope_begin(o));
	pto_args_fini(&a);
	gate_set(1);
	ot_sleep_ms(20);
	EXPECT_EQ(0, atomic_load(&G.ran));
	done(_metadata, o);
}

/* A failed create leaves *out NULL (as pto_orch_create_device does), so
 * cleanup code that tests it frees nothing stale. */
TEST(failed_create_clears_out)
{
	static const struct pto_worker_desc w[2] = {
		OT_WORKER(3, PTO_WORKER_SUB), OT_WORKER(3, PTO_WORKER_SUB),
	};
	struct pto_orch_config cfg = { .heap_ring_size = 1 << 20, .task_window = 64,
				       .nworkers = 2, .workers = w };
	pto_orch *o = (pto_orch *)&cfg;	/* stale garbage */

	EXPECT_EQ(-EINVAL, pto_orch_create_inproc(&cfg, &o));
	EXPECT_EQ(NULL, o);
	cfg.workers = NULL;	/* nworkers without workers */
	o = (pto_orch *)&cfg;
	EXPECT_EQ(-EINVAL, pto_orch_create_inproc(&cfg, &o));
	EXPECT_EQ(NULL, o);
}

/*
 * The config's and the workers' reserved words must be zero
 * (pto_orch_create_inproc(3)): a later libpto gives them a meaning. Any word
 * set - each word of each, in turn - is -EINVAL before anything is set up:
 * *out NULL, not even the once-per-process fork hygiene of a create (this
 * test's process never created an orchestrator). The same config with every
 * word zero creates and runs.
 */
TEST(reserved_config_words_are_refused_before_anything)
{
	struct pto_worker_desc w[2] = {
		OT_WORKER(0, PTO_WORKER_SUB), OT_WORKER(5, PTO_WORKER_SUB),
	};
	struct pto_orch_config cfg = { .heap_ring_size = 1 << 20, .task_window = 64,
				       .nworkers = 2, .workers = w };
	struct stash s = { 0 };
	unsigned int i, j;
	pto_orch *o;

	unsetenv("OMP_NUM_THREADS");
	for (i = 0; i < ARRAY_SIZE(cfg.reserved); i++) {
		cfg.reserved[i] = 1ULL << (i * 5 % 64);
		o = (pto_orch *)&cfg;
		EXPECT_EQ(-EINVAL, pto_orch_create_inproc(&cfg, &o))
			TH_LOG("pto_orch_config.reserved[%u]", i);
		EXPECT_EQ(NULL, o);
		cfg.reserved[i] = 0;
	}
	for (j = 0; j < 2; j++)
		for (i = 0; i < ARRAY_SIZE(w[j].reserved); i++) {
			w[j].reserved[i] = 1ULL << (63 - i);
			o = (pto_orch *)&cfg;
			EXPECT_EQ(-EINVAL, pto_orch_create_inproc(&cfg, &o))
				TH_LOG("workers[%u].reserved[%u]", j, i);
			EXPECT_EQ(NULL, o);
			w[j].reserved[i] = 0;
		}
	EXPECT_EQ(NULL, getenv("OMP_NUM_THREADS"));
	/* The control: zero words create (and run the hygiene). */
	ASSERT_EQ(0, pto_orch_create_inproc(&cfg, &o));
	EXPECT_STREQ("1", getenv("OMP_NUM_THREADS"));
	EXPECT_EQ(0, pto_orch_run(o, orch_stash, &s));
	EXPECT_EQ(5, s.x);
	EXPECT_EQ(0, pto_orch_close(o, 2000));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

/* One submit of a counting task with a call config, by call: 0 next
 * level, 1 group, 2 SPMD (two blocks). */
struct cfg_case {
	struct pto_call_config cfg;
	int call;
	int ret;
	struct pto_task h;
	uint64_t live;		/* slots live right after the submit */
	char msg[160];
};

static int orch_with_cfg(pto_orch *o, void *arg)
{
	static const struct pto_callable k = { .fn = k_count };
	struct cfg_case *c = arg;
	struct pto_task_args a, *ap = &a;
	int32_t w0 = 0;

	pto_args_init(&a);
	if (c->call == 0)
		c->ret = pto_submit_next_level(o, &k, &a, &c->cfg,
					       pto_on_worker(0), &c->h);
	else if (c->call == 1)
		c->ret = pto_submit_next_level_group(o, &k, &ap, 1, &c->cfg,
						     &w0, &c->h);
	else
		c->ret = pto_submit_spmd(o, &k, &a, &c->cfg, PTO_WORKER_SUB, 2,
					 &c->h);
	c->live = ot_live_slots(o);
	snprintf(c->msg, sizeof(c->msg), "%s", pto_orch_error(o));
	pto_args_fini(&a);
	return c->ret;
}

/*
 * A call config's flags outside PTO_CALL_FLAGS_VALID and its reserved
 * words (reserved0, reserved[]) must be zero (pto_submit_next_level(3)):
 * each call that takes one refuses any of them with -EINVAL and a
 * message naming it, and creates no task (no slot is live, none runs, the
 * handle is not written). The same config, zero, submits and runs.
 */
TEST(call_config_flags_and_reserved_words_are_refused)
{
	pto_orch *o = mk(_metadata, 2);
	struct cfg_case c;
	unsigned int i;
	int call;

	for (call = 0; call < 3; call++) {
		for (i = 0; i <= ARRAY_SIZE(c.cfg.reserved) + 1; i++) {
			char want[64];

			memset(&c, 0, sizeof(c));
			memset(&c.h, 0xa5, sizeof(c.h));
			c.call = call;
			if (i < ARRAY_SIZE(c.cfg.reserved)) {
				c.cfg.reserved[i] = 1ULL << (63 - i);
				snprintf(want, sizeof(want),
					 "call config: reserved[%u] is not zero", i);
			} else if (i == ARRAY_SIZE(c.cfg.reserved)) {
				c.cfg.reserved0 = 4;
				snprintf(want, sizeof(want),
					 "call config: reserved0 is not zero");
			} else {
				c.cfg.flags = 0x80000001u;
				snprintf(want, sizeof(want),
					 "call config: unknown flags 0x80000001");
			}
			EXPECT_EQ(-EINVAL, pto_orch_run(o, orch_with_cfg, &c))
				TH_LOG("call %d, case %u", call, i);
			EXPECT_EQ(-EINVAL, c.ret);
			EXPECT_STREQ(want, c.msg);
			EXPECT_EQ(0u, c.live);
			EXPECT_EQ(0xa5a5a5a5a5a5a5a5ULL, c.h.task_id);
			EXPECT_EQ(0xa5a5a5a5u, c.h.slot);
		}
	}
	EXPECT_EQ(0, atomic_load(&G.ran));
	for (call = 0; call < 3; call++) {
		memset(&c, 0, sizeof(c));
		c.call = call;
		EXPECT_EQ(0, pto_orch_run(o, orch_with_cfg, &c));
		EXPECT_EQ(1u, c.live);
		EXPECT_STREQ("", c.msg);
		EXPECT_NE(0u, c.h.task_id);
	}
	EXPECT_EQ(1 + 1 + 2, atomic_load(&G.ran));
	done(_metadata, o);
}

/* pto_orch_sched_stats() on an orchestrator that is not on a device is
 * -EINVAL, and still writes the caller's struct whole: all zero. */
TEST(sched_stats_off_a_device_is_einval_and_all_zero)
{
	pto_orch *o = mk(_metadata, 2);
	struct pto_sched_stats st;
	const unsigned char *p = (const unsigned char *)&st;
	size_t i;

	memset(&st, 0xa5, sizeof(st));
	EXPECT_EQ(-EINVAL, pto_orch_sched_stats(o, &st));
	for (i = 0; i < sizeof(st); i++) {
		EXPECT_EQ(0, p[i]) TH_LOG("byte %zu", i);	/* two statements */
	}
	done(_metadata, o);
}

/*
 * A forked child that cleans up its inherited copy (an atexit handler, a
 * destructor) must neither hang (the workers' condition variables were
 * copied with waiters registered: destroying them hung) nor touch the
 * parent's orchestrator: close and destroy are -ECHILD there, and the
 * parent's orchestrator runs on.
 */
TEST(fork_child_close_and_destroy_are_echild)
{
	int i, st;

	for (i = 0; i < 5; i++) {
		pto_orch *o = mk(_metadata, 2);
		struct stash s = { .x = 0 };
		pid_t pid;

		gate_set(1);
		ASSERT_EQ(0, pto_orch_run(o, orch_stash, &s));
		ot_sleep_ms(200);	/* the workers park on their cv */
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			int bad = 0;

			alarm(5);
			/* Both, as a cleanup would; a bit per unexpected
			 * result. */
			bad |= (pto_orch_close(o, 100) != -ECHILD) << 0;
			bad |= (pto_orch_destroy(o) != -ECHILD) << 1;
			bad |= (pto_orch_abort(o, 100) != -ECHILD) << 2;
			_exit(bad);
		}
		ASSERT_EQ(pid, waitpid(pid, &st, 0));
		ASSERT_TRUE(WIFEXITED(st)) TH_LOG("child hung in cleanup (signal %d)",
						  WIFSIGNALED(st) ? WTERMSIG(st) : 0);
		EXPECT_EQ(0, WEXITSTATUS(st));
		/* The parent's orchestrator is whole. */
		s.x = 0;
		EXPECT_EQ(0, pto_orch_run(o, orch_stash, &s));
		EXPECT_EQ(5, s.x);
		done(_metadata, o);
	}
}

/* Holds o->runs_mu until told to let go: a parent thread inside
 * run_finish() at the fork. */
struct mu_holder {
	pthread_mutex_t *mu;
	_Atomic int held, release;
};

static void *hold_mu(void *arg)
{
	struct mu_holder *h = arg;

	pthread_mutex_lock(h->mu);
	atomic_store(&h->held, 1);
	while (!atomic_load(&h->release))
		ot_sleep_ms(1);
	pthread_mutex_unlock(h->mu);
	return NULL;
}

/*
 * In a forked child, the run calls must neither hang nor take a lock: with
 * runs_mu held by a parent thread at the fork (in the child nobody ever
 * unlocks it) and a lease nobody returns (run_depth 1, a gated run in
 * flight), pto_run_release() is a no-op and submit, run and the waits are
 * -ECHILD at once. The parent's run and orchestrator are untouched.
 */
TEST(fork_child_run_calls_are_echild)
{
	struct mu_holder h = { .held = 0, .release = 0 };
	pto_orch *o = mk(_metadata, 1);
	struct stash s = { .x = 0 };
	pthread_t th;
	pto_run *r;
	pid_t pid;
	int st;

	ASSERT_EQ(0, pto_run_start(o, orch_gated, NULL, &r));
	h.mu = &o->runs_mu;
	ASSERT_EQ(0, pthread_create(&th, NULL, hold_mu, &h));
	while (!atomic_load(&h.held))
		ot_sleep_ms(1);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		pto_run *r2 = (pto_run *)1;
		int bad = 0;

		alarm(2);
		pto_run_release(r);
		bad |= (pto_run_start(o, orch_gated, NULL, &r2) != -ECHILD) << 0;
		bad |= (r2 != NULL) << 1;
		bad |= (pto_orch_run(o, orch_gated, NULL) != -ECHILD) << 2;
		bad |= (pto_run_wait(r, -1) != -ECHILD) << 3;
		bad |= (pto_run_wait_accepted(r, -1) != -ECHILD) << 4;
		bad |= (pto_run_done(r) != -ECHILD) << 5;
		bad |= (pto_run_result(r) != -ECHILD) << 6;
		bad |= (pto_run_accepted(r) != -ECHILD) << 7;
		/* exit statuses have 8 bits: a mismatch reuses bit 0 */
		bad |= !!strcmp(pto_run_error(r),
				"run state unavailable in a forked child");
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	atomic_store(&h.release, 1);
	pthread_join(th, NULL);
	ASSERT_TRUE(WIFEXITED(st)) TH_LOG("child hung (signal %d)",
					  WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	EXPECT_EQ(0, WEXITSTATUS(st)) TH_LOG("unexpected results, bits %#x",
					     WEXITSTATUS(st));
	/* The parent's run was neither released nor finished by the child. */
	EXPECT_EQ(0, pto_run_done(r));
	gate_set(1);
	EXPECT_EQ(0, pto_run_wait(r, -1));
	EXPECT_EQ(1, atomic_load(&G.ran));
	pto_run_release(r);
	EXPECT_EQ(0, pto_orch_run(o, orch_stash, &s));
	EXPECT_EQ(5, s.x);
	done(_metadata, o);
}

/*
 * A child forked inside an orchestration function holds a copy of the run
 * being built and of its locks: its submits, pto_alloc() and scopes are
 * -ECHILD at once and touch nothing (a lock held at the fork - here the
 * TensorMap's, which a submit with a tensor takes - would hang the
 * child). The parent's run is
 * built and runs as if no fork happened.
 */
struct fork_in_fn {
	struct stash s;
	int status;
};

static int orch_forks(pto_orch *o, void *arg)
{
	struct fork_in_fn *f = arg;
	struct pto_callable c = { .fn = k_count };
	struct pto_tensor t = { .nbytes = 64 }, got;
	struct pto_task_args a;
	char msg[ORCH_MSG_LEN];
	pid_t pid;

	pto_args_init(&a);
	pto_args_add_tensor(&a, &t, PTO_INPUT);
	snprintf(msg, sizeof(msg), "%s", pto_orch_error(o));
	orch_lock(&o->tm.mu);	/* as another thread could hold it */
	pid = fork();
	if (!pid) {
		int bad = 0;

		alarm(2);
		bad |= (pto_submit_sub(o, &c, &a, NULL) != -ECHILD) << 0;
		bad |= (pto_alloc(o, 64, &got, NULL) != -ECHILD) << 1;
		bad |= (pto_scope_begin(o) != -ECHILD) << 2;
		bad |= (pto_scope_end(o) != -ECHILD) << 3;
		/* Wrong arguments too: the fork is found first. */
		bad |= (pto_submit_next_level(o, &c, &a, NULL, pto_on_worker(99),
					      NULL) != -ECHILD) << 5;
		bad |= (pto_submit_next_level_group(o, &c, NULL, 0, NULL, NULL,
						    NULL) != -ECHILD) << 6;
		bad |= (pto_submit_spmd(o, &c, NULL, NULL, PTO_WORKER_AIV, 0,
					NULL) != -ECHILD) << 7;
		/* Nothing written, not even the copy's message. */
		bad |= (o->building->construction_err != 0 ||
			strcmp(pto_orch_error(o), msg)) << 4;
		_exit(bad);
	}
	orch_unlock(&o->tm.mu);
	pto_args_fini(&a);
	if (pid < 0)
		return -errno;
	waitpid(pid, &f->status, 0);
	return orch_stash(o, &f->s);
}

TEST(fork_child_submits_are_echild)
{
	pto_orch *o = mk(_metadata, 1);
	struct fork_in_fn f = { .s.x = 0, .status = -1 };
	uint64_t next = atomic_load(&o->next_task_id);

	gate_set(1);
	ASSERT_EQ(0, pto_orch_run(o, orch_forks, &f));
	ASSERT_TRUE(WIFEXITED(f.status)) TH_LOG("child hung (signal %d)",
						WIFSIGNALED(f.status) ?
						WTERMSIG(f.status) : 0);
	EXPECT_EQ(0, WEXITSTATUS(f.status)) TH_LOG("unexpected results, bits %#x",
						   WEXITSTATUS(f.status));
	/* The parent's run: its one task, nothing of the child's. */
	EXPECT_EQ(5, f.s.x);
	EXPECT_EQ(next + 1, atomic_load(&o->next_task_id));
	done(_metadata, o);
}

/* What a host callback's calls into its own orchestrator returned. */
static struct {
	pto_orch *o;
	pto_run *_Atomic self;	/* the callback's own run, once known */
	pto_run *prev;		/* a run of the same orchestrator, done */
	int close_err, destroy_err, wait_err, wait_forever_err, accepted_err;
	int abort_err;
	int prev_err, prev_accepted_err;
	int submit_err, run_err;
	_Atomic int nested_ran;
	pto_run *nested;
	uint64_t close_ns;
} CB;

static int orch_cb_nested(pto_orch *o, void *arg)
{
	atomic_fetch_add(&CB.nested_ran, 1);
	return 0;
}

static int k_calls_own_orch(struct pto_task_ctx *c)
{
	uint64_t t0 = ot_now_ns(), until = t0 + 2000 * 1000000ULL;
	pto_run *self;

	CB.close_err = pto_orch_close(CB.o, 50);
	CB.close_ns = ot_now_ns() - t0;
	CB.abort_err = pto_orch_abort(CB.o, 50);
	CB.destroy_err = pto_orch_destroy(CB.o);
	CB.submit_err = pto_run_start(CB.o, orch_cb_nested, NULL, &CB.nested);
	CB.run_err = pto_orch_run(CB.o, orch_cb_nested, NULL);
	while (!(self = atomic_load(&CB.self)) && ot_now_ns() < until)
		ot_sleep_ms(1);
	if (!self)
		return -EPROTO;
	/* Bounded first: without the guard it times out, never hangs. */
	CB.wait_err = pto_run_wait(self, 100);
	/* Its own run is accepted (its one task runs, its function
	 * returned): that wait does not block, so it returns. */
	CB.accepted_err = pto_run_wait_accepted(self, 100);
	/* A run that is over: its status, as from any thread. */
	CB.prev_err = pto_run_wait(CB.prev, -1);
	CB.prev_accepted_err = pto_run_wait_accepted(CB.prev, -1);
	if (CB.wait_err == -EDEADLK)
		CB.wait_forever_err = pto_run_wait(self, -1);
	atomic_fetch_add(&G.ran, 1);
	return 0;
}

static int orch_calls_own_orch(pto_orch *o, void *arg)
{
	return one_sub(o, k_calls_own_orch, NULL, 0, PTO_NO_DEP, NULL);
}

static int orch_fails(pto_orch *o, void *arg)
{
	return -EIO;
}

/*
 * A host callback runs on a worker of its orchestrator: close, destroy,
 * submit, run and a wait on its own run's end would wait for that run (or
 * join the callback's own thread). -EDEADLK at once, nothing changed: the
 * orchestrator is not left closing, no nested run began, and the next run
 * goes through. A wait that would not block (its own run's acceptance,
 * a run that is over) returns what it returns anywhere.
 */
TEST(calls_from_a_host_callback_are_edeadlk)
{
	pto_orch *o = mk(_metadata, 2);
	struct stash s = { .x = 0 };
	pto_run *r;

	memset(&CB, 0, sizeof(CB));
	CB.o = o;
	CB.wait_forever_err = 1;
	CB.prev_err = CB.prev_accepted_err = 1;
	/* A finished run whose status is not 0: the callback must see it. */
	ASSERT_EQ(-EIO, pto_run_start(o, orch_fails, NULL, &CB.prev));
	ASSERT_EQ(-EIO, pto_run_wait(CB.prev, 10000));
	ASSERT_EQ(0, pto_run_start(o, orch_calls_own_orch, NULL, &r));
	atomic_store(&CB.self, r);
	EXPECT_EQ(0, pto_run_wait(r, 10000));
	pto_run_release(r);
	EXPECT_EQ(1, atomic_load(&G.ran));
	EXPECT_EQ(-EDEADLK, CB.close_err);
	EXPECT_GT(40 * 1000000ULL, CB.close_ns);
	EXPECT_EQ(-EDEADLK, CB.destroy_err);
	EXPECT_EQ(-EDEADLK, CB.abort_err);
	EXPECT_EQ(-EDEADLK, CB.submit_err);
	EXPECT_EQ(-EDEADLK, CB.run_err);
	EXPECT_EQ(0, atomic_load(&CB.nested_ran));
	EXPECT_EQ(NULL, CB.nested);
	if (CB.nested) {	/* unguarded: it ran a run on the worker */
		pto_run_wait(CB.nested, 2000);
		pto_run_release(CB.nested);
	}
	EXPECT_EQ(-EDEADLK, CB.wait_err);
	EXPECT_EQ(0, CB.accepted_err);
	EXPECT_EQ(-EDEADLK, CB.wait_forever_err);
	EXPECT_EQ(-EIO, CB.prev_err);
	EXPECT_EQ(0, CB.prev_accepted_err);
	pto_run_release(CB.prev);
	/* Not left closing: the next run works. */
	EXPECT_EQ(0, pto_orch_run(o, orch_stash, &s));
	EXPECT_EQ(5, s.x);
	done(_metadata, o);
}

TEST(fork_hygiene_defaults_do_not_overwrite)
{
	pto_orch *o;

	setenv("OPENBLAS_NUM_THREADS", "3", 1);
	unsetenv("BLIS_NUM_THREADS");
	o = mk(_metadata, 2);
	/* Once per process: the first create in this (forked) test process
	 * sets the defaults, leaving user values alone. */
	EXPECT_STREQ("3", getenv("OPENBLAS_NUM_THREADS"));
	EXPECT_STREQ("1", getenv("BLIS_NUM_THREADS"));
	done(_metadata, o);
}

/*
 * A blocked head group reserves its targets; when its run is cancelled the
 * reservation must end with a kick, or a task queued meanwhile for a
 * reserved (parked) worker would wait for an unrelated event.
 */
static _Atomic int gate_b, t_ran;

static int k_gate_b(struct pto_task_ctx *c)
{
	while (!atomic_load(&gate_b))
		usleep(100);
	return 0;
}

static int k_mark(struct pto_task_ctx *c)
{
	atomic_store(&t_ran, 1);
	return 0;
}

struct resv {
	struct pto_task b;
};

static int orch_run0(pto_orch *o, void *arg)
{
	struct resv *rv = arg;
	struct pto_callable ca = { .fn = k_gated }, cb = { .fn = k_gate_b },
			    ct = { .fn = k_mark };
	struct pto_task_args a;
	int err;

	pto_args_init(&a);
	err = pto_submit_next_level(o, &ca, &a, NULL, pto_on_worker(0), NULL);
	err = err ?: pto_submit_next_level(o, &cb, &a, NULL, pto_on_worker(2), &rv->b);
	pto_args_add_dep(&a, rv->b);
	err = err ?: pto_submit_next_level(o, &ct, &a, NULL, pto_on_worker(1), NULL);
	pto_args_fini(&a);
	return err;
}

static int orch_run1(pto_orch *o, void *arg)
{
	struct pto_task_args m0, m1, *mp[2] = { &m0, &m1 };
	int err;

	pto_args_init(&m0);
	pto_args_init(&m1);
	/* Head group on workers 0 (busy with the gated task) and 1. */
	err = pto_submit_next_level_group(o, &(struct pto_callable){ .fn = k_count },
					  mp, 2, NULL, (int32_t[]){ 0, 1 }, NULL);
	pto_args_fini(&m0);
	pto_args_fini(&m1);
	if (err)
		return err;
	/* run 0's T becomes READY for worker 1, which is reserved. */
	atomic_store(&gate_b, 1);
	ot_sleep_ms(50);
	if (atomic_load(&t_ran))
		return -EALREADY;	/* the reservation did not hold */
	return -ECANCELED;	/* fail the run: the group is cancelled */
}

TEST(cancelled_head_group_releases_reservation)
{
	static const struct pto_worker_desc w[] = {
		OT_WORKER(0, PTO_WORKER_AIV), OT_WORKER(1, PTO_WORKER_AIV),
		OT_WORKER(2, PTO_WORKER_AIV),
	};
	struct pto_orch_config cfg = { .heap_ring_size = 1 << 20, .task_window = 64,
				       .workers = w, .nworkers = 3 };
	struct resv rv;
	pto_run *r0, *r1;
	pto_orch *o;
	int i;

	gate_set(0);
	ASSERT_EQ(0, pto_orch_create_inproc(&cfg, &o));
	ASSERT_EQ(0, pto_run_start(o, orch_run0, &rv, &r0));
	/* Worker 0 must be busy (A running) before the group arrives, or the
	 * group, which has priority over singles for its targets, goes first. */
	for (i = 0; i < 1000 && !atomic_load(&G.started); i++)
		ot_sleep_ms(1);
	ASSERT_EQ(1, atomic_load(&G.started));
	EXPECT_EQ(-ECANCELED, pto_run_start(o, orch_run1, NULL, &r1));
	for (i = 0; i < 1000 && !atomic_load(&t_ran); i++)
		ot_sleep_ms(1);
	EXPECT_EQ(1, atomic_load(&t_ran));	/* while A is still gated */
	EXPECT_EQ(0, pto_run_done(r0));
	gate_set(1);
	EXPECT_EQ(0, pto_run_wait(r0, 5000));
	EXPECT_EQ(-ECANCELED, pto_run_wait(r1, 5000));
	EXPECT_EQ(0, atomic_load(&G.ran) > 1);	/* the group never ran */
	pto_run_release(r0);
	pto_run_release(r1);
	done(_metadata, o);
}

/*
 * Every in-process worker runs the task's host callback: a callable
 * without one (fn NULL) is refused at submit, -EINVAL with one message
 * naming the backend's rule, whatever the kind and the submit variant
 * (it must not run as a task that does nothing and succeeds). Nothing is
 * claimed: no task id, no slot, no heap byte, and the run fails with the
 * same error.
 */
static int orch_null_fn(pto_orch *o, void *arg)
{
	static const struct pto_callable none = { .user = &G };
	struct pto_tensor t = { .nbytes = 4096 };
	struct pto_task_args a, *ap[2] = { &a, &a };
	int which = *(int *)arg, err;

	pto_args_init(&a);
	/* An auto-allocated OUTPUT: a claim would carve heap for it. */
	pto_args_add_tensor(&a, &t, PTO_OUTPUT);
	switch (which) {
	case 0:
		err = pto_submit_next_level(o, &none, &a, NULL,
					    pto_on_kind(PTO_WORKER_AIV), NULL);
		break;
	case 1:
		err = pto_submit_next_level(o, &none, &a, NULL,
					    pto_on_worker(1), NULL);
		break;
	case 2:
		err = pto_submit_next_level_group(o, &none, ap, 2, NULL,
						  (int32_t[]){ 0, 1 }, NULL);
		break;
	case 3:
		err = pto_submit_spmd(o, &none, &a, NULL, PTO_WORKER_AIV, 2, NULL);
		break;
	default:
		err = pto_submit_sub(o, &none, &a, NULL);
		break;
	}
	pto_args_fini(&a);
	return err;
}

/*
 * A run whose orchestration function @fn (told *@which) makes a refused
 * call: the submit is -EINVAL with @msg, nothing is claimed (task ids,
 * slots, heap), and the run fails with the same message.
 */
static void expect_refused_run(struct __test_metadata *_metadata,
			       pto_orch *o, int (*fn)(pto_orch *, void *),
			       int *which, const char *msg)
{
	uint64_t next = atomic_load(&o->next_task_id);
	pto_run *r;

	EXPECT_EQ(-EINVAL, pto_run_start(o, fn, which, &r))
		TH_LOG("variant %d", *which);
	EXPECT_STREQ(msg, pto_orch_error(o)) TH_LOG("variant %d", *which);
	EXPECT_EQ(next, atomic_load(&o->next_task_id));
	EXPECT_EQ(0, ot_live_slots(o));
	EXPECT_EQ(0, ot_heap_used(o));
	EXPECT_EQ(-EINVAL, pto_run_wait(r, 2000));
	EXPECT_STREQ(msg, pto_run_error(r)) TH_LOG("variant %d: run", *which);
	pto_run_release(r);
}

#define NO_FN "callable without fn: this orchestrator's workers run host callbacks"

TEST(null_host_callback_refused_at_submit)
{
	static const struct pto_worker_desc w[] = {
		OT_WORKER(0, PTO_WORKER_AIV), OT_WORKER(1, PTO_WORKER_AIV),
		OT_WORKER(2, PTO_WORKER_SUB),
	};
	struct pto_orch_config cfg = { .heap_ring_size = 1 << 20, .task_window = 64,
				       .workers = w, .nworkers = 3 };
	pto_orch *o;
	int which;

	ASSERT_EQ(0, pto_orch_create_inproc(&cfg, &o));
	for (which = 0; which < 5; which++)
		expect_refused_run(_metadata, o, orch_null_fn, &which, NO_FN);
	EXPECT_TRUE(ot_empty(o));
	EXPECT_EQ(0, pto_orch_close(o, 2000));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

/*
 * pto_alloc()'s two refusals say which argument is wrong (a NULL tensor
 * out-pointer is not "alloc of 0 bytes"). Nothing is
 * claimed, and the run fails with the same message.
 */
static int orch_bad_alloc(pto_orch *o, void *arg)
{
	struct pto_tensor t;

	if (*(int *)arg)
		return pto_alloc(o, 4096, NULL, NULL);
	return pto_alloc(o, 0, &t, NULL);
}

TEST(alloc_refusals_name_the_argument)
{
	static const char *const msg[2] = {
		"alloc of 0 bytes", "pto_alloc: NULL tensor out-pointer",
	};
	static const struct pto_worker_desc w[] = { OT_WORKER(0, PTO_WORKER_SUB) };
	struct pto_orch_config cfg = { .heap_ring_size = 1 << 20, .task_window = 64,
				       .workers = w, .nworkers = 1 };
	pto_orch *o;
	int which;

	ASSERT_EQ(0, pto_orch_create_inproc(&cfg, &o));
	for (which = 0; which < 2; which++)
		expect_refused_run(_metadata, o, orch_bad_alloc, &which,
				   msg[which]);
	EXPECT_TRUE(ot_empty(o));
	EXPECT_EQ(0, pto_orch_close(o, 2000));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

TEST_HARNESS_MAIN
