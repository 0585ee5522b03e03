// SPDX-License-Identifier: MIT
/*
 * Failure atomicity of construction: fail every fallible step of
 * submit and alloc in turn (the k-th allocation at each fail point), and
 * show that the run's fence resolves and cancellation reclaims every
 * slot, heap byte and TensorMap entry. ASan/LSan check nothing leaks.
 * Then: a failed cancellation snapshot, retried.
 */
#include <pthread.h>
#include <semaphore.h>
#include "kselftest_harness.h"
#include "orch_test.h"

struct inj {
	int fp;		/* fail point to fail, -1: none */
	int k;		/* fail its k-th call (1-based) */
	int calls[ORCH_FP_NR];
	int fired;
	int settle_seen;
	int alloc_after_settle;
	int snapshot_failures;	/* CANCEL_SNAPSHOT failures to inject */
};

static int hook(void *ctx, struct pto_orch *o, int fp, struct orch_slot *s)
{
	struct inj *in = ctx;

	(void)o;
	(void)s;
	if (fp == ORCH_TP_CANCEL_SETTLE) {
		in->settle_seen = 1;
		return 0;
	}
	if (fp >= ORCH_FP_NR)
		return 0;
	if (in->settle_seen)
		in->alloc_after_settle++;
	if (fp == ORCH_FP_CANCEL_SNAPSHOT && in->snapshot_failures > 0) {
		in->snapshot_failures--;
		return 1;
	}
	if (++in->calls[fp] == in->k && fp == in->fp) {
		in->fired = 1;
		return 1;
	}
	return 0;
}

static int k_noop(struct pto_task_ctx *c)
{
	(void)c;
	return 0;
}

static const struct pto_callable NOOP = { .fn = k_noop };

struct dag {
	char buf[4][64];
	char msg[ORCH_MSG_LEN];	/* pto_orch_error() right after a failed call */
};

static int add_t(struct pto_task_args *a, void *p, enum pto_tag tag)
{
	struct pto_tensor t = pto_tensor_host(p, 64);

	return pto_args_add_tensor(a, &t, tag) < 0 ? -ENOMEM : 0;
}

/* A DAG touching every submit path: alloc, auto OUTPUT, INOUT, explicit
 * deps (both kinds, many), groups, sub groups, nested scopes. */
static int build(pto_orch *o, void *arg)
{
	struct dag *d = arg;
	struct pto_task_args a, m0, m1, *mp[2] = { &m0, &m1 };
	struct pto_task h[8];
	struct pto_tensor x, out = { .nbytes = 100 };
	int err, i;

	pto_args_init(&a);
	pto_args_init(&m0);
	pto_args_init(&m1);
	err = pto_alloc(o, 2000, &x, &h[0]);
	if (err)
		goto out;
	pto_args_add_tensor(&a, &x, PTO_INOUT);
	pto_args_add_tensor(&a, &out, PTO_OUTPUT);
	add_t(&a, d->buf[0], PTO_OUTPUT_EXISTING);
	err = pto_submit_next_level(o, &NOOP, &a, NULL, pto_on_worker(0), &h[1]);
	if (err)
		goto out;
	out = a.tensors[1].t;	/* the auto-allocated address */
	pto_args_reset(&a);
	pto_args_add_tensor(&a, &out, PTO_INPUT);
	pto_args_add_dep(&a, h[1]);
	pto_args_add_dep_wait(&a, h[0]);
	add_t(&a, d->buf[1], PTO_OUTPUT_EXISTING);
	err = pto_submit_sub(o, &NOOP, &a, &h[2]);
	if (err)
		goto out;
	err = pto_scope_begin(o);
	if (err)
		goto out;
	add_t(&m0, d->buf[1], PTO_INPUT);
	add_t(&m0, d->buf[2], PTO_OUTPUT_EXISTING);
	add_t(&m1, d->buf[0], PTO_INPUT);
	pto_args_add_dep(&m1, h[2]);
	err = pto_submit_next_level_group(o, &NOOP, mp, 2, NULL,
					  (int32_t[]){ 0, 1 }, &h[3]);
	if (err)
		goto out;
	err = pto_scope_begin(o);
	if (err)
		goto out;
	err = pto_submit_sub_group(o, &NOOP, mp, 2, &h[4]);
	if (err)
		goto out;
	err = pto_scope_end(o);
	if (err)
		goto out;
	pto_args_reset(&a);
	add_t(&a, d->buf[2], PTO_INOUT);
	for (i = 0; i < 5; i++)
		pto_args_add_dep(&a, h[i]);
	for (i = 0; i < 40; i++)	/* many duplicates, no cap */
		pto_args_add_dep_wait(&a, h[i % 5]);
	err = pto_submit_next_level(o, &NOOP, &a, NULL, pto_on_kind(PTO_WORKER_SUB),
				    &h[5]);
	if (err)
		goto out;
	err = pto_scope_end(o);
out:
	/* Read here: once the function returns, pto_run_start() writes its
	 * own message over an empty one. */
	if (err)
		snprintf(d->msg, sizeof(d->msg), "%s", pto_orch_error(o));
	pto_args_fini(&a);
	pto_args_fini(&m0);
	pto_args_fini(&m1);
	return err;
}

static pto_orch *mk(struct __test_metadata *_metadata, struct inj *in)
{
	struct pto_orch_config cfg = { .heap_ring_size = 1 << 20, .task_window = 32,
				       .timeout_ms = 2000 };
	pto_orch *o;

	ASSERT_EQ(0, pto_orch_create_inproc(&cfg, &o));
	orch_set_fail_hook(o, hook, in);
	return o;
}

TEST(every_fail_point_is_reclaimed)
{
	int fp, k, total = 0, failed = 0;

	for (fp = 0; fp < ORCH_FP_CANCEL_SNAPSHOT; fp++) {
		for (k = 1;; k++) {
			struct inj in = { .fp = fp, .k = k };
			struct dag d = { .msg = "" };
			pto_orch *o = mk(_metadata, &in);
			pto_run *r = NULL;
			int ret, st;

			ret = pto_run_start(o, build, &d, &r);
			ASSERT_NE(NULL, r);
			st = pto_run_wait(r, 5000);
			ASSERT_NE(-ETIMEDOUT, st);	/* the fence resolves */
			if (in.fired && ret) {
				failed++;
				EXPECT_EQ(ret, st);
				EXPECT_NE(0, ret);
				/* Every failing call sets a message (pto_orch_error(3)). */
				EXPECT_STRNE("", d.msg)
					TH_LOG("fp %d k %d: no message", fp, k);
			} else {
				EXPECT_EQ(0, ret);
				EXPECT_EQ(0, st);
			}
			pto_run_release(r);
			if (!ot_empty(o))
				TH_LOG("fp %d k %d: %llu slots, %llu heap, %u map entries",
				       fp, k, (unsigned long long)ot_live_slots(o),
				       (unsigned long long)ot_heap_used(o),
				       orch_tm_count(o));
			ASSERT_TRUE(ot_empty(o));
			ASSERT_EQ(0, pto_orch_close(o, 2000));
			ASSERT_EQ(0, pto_orch_destroy(o));
			total++;
			if (!in.fired)
				break;	/* past the last call at this point */
		}
		/* Every allocation point is reached by the DAG (inline slot
		 * storage must not hide one: build() has tasks larger than
		 * the inline capacities). */
		EXPECT_GT(k, 1) TH_LOG("fail point %d never reached", fp);
	}
	TH_LOG("%d runs, %d failed by injection", total, failed);
	EXPECT_EQ(total - ORCH_FP_CANCEL_SNAPSHOT, failed);
	EXPECT_GT(total, ORCH_FP_CANCEL_SNAPSHOT * 2);
}

/*
 * infer_deps looks every INPUT up before it journals or publishes any
 * output of the task (an INPUT named after an output of the same key
 * must find the previous writer). The third task below names Y as an
 * output before X as an input; its collection of X's producer is the
 * first growth of the dependency array (the writers look nothing up),
 * and must find nothing journaled yet. Failed there, the task has
 * journaled and published nothing, and cancellation reclaims the rest.
 */
struct order {
	int deps_calls;
	uint32_t nkeys_at_deps;
};

static int order_hook(void *ctx, struct pto_orch *o, int fp,
		      struct orch_slot *s)
{
	struct order *ord = ctx;

	(void)o;
	if (fp != ORCH_FP_DEPS || !s)
		return 0;
	ord->deps_calls++;
	ord->nkeys_at_deps = s->nkeys;
	return 1;
}

static int build_output_then_input(pto_orch *o, void *arg)
{
	struct dag *d = arg;
	struct pto_task_args a;
	int err;

	pto_args_init(&a);
	add_t(&a, d->buf[0], PTO_OUTPUT_EXISTING);	/* writes X */
	err = pto_submit_sub(o, &NOOP, &a, NULL);
	pto_args_reset(&a);
	add_t(&a, d->buf[1], PTO_OUTPUT_EXISTING);	/* writes Y */
	err = err ?: pto_submit_sub(o, &NOOP, &a, NULL);
	pto_args_reset(&a);
	add_t(&a, d->buf[1], PTO_OUTPUT_EXISTING);	/* Y, then */
	add_t(&a, d->buf[0], PTO_INPUT);		/* X */
	err = err ?: pto_submit_sub(o, &NOOP, &a, NULL);
	pto_args_fini(&a);
	return err;
}

TEST(every_lookup_precedes_the_journal)
{
	struct pto_orch_config cfg = { .heap_ring_size = 1 << 20,
				       .task_window = 32, .timeout_ms = 500 };
	struct order ord = { 0 };
	struct dag d;
	pto_run *r = NULL;
	pto_orch *o;

	ASSERT_EQ(0, orch_create_manual(&cfg, &o));
	orch_set_fail_hook(o, order_hook, &ord);
	EXPECT_EQ(-ENOMEM, pto_run_start(o, build_output_then_input, &d, &r));
	EXPECT_EQ(1, ord.deps_calls);
	EXPECT_EQ(0u, ord.nkeys_at_deps);
	EXPECT_EQ(-ENOMEM, pto_run_wait(r, 0));
	pto_run_release(r);
	EXPECT_TRUE(ot_empty(o));
	EXPECT_EQ(0, pto_orch_close(o, 500));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

static _Atomic int gate_open;

static int k_gate(struct pto_task_ctx *c)
{
	(void)c;
	while (!atomic_load(&gate_open))
		usleep(200);
	return 0;
}

/* The full DAG behind a gated root, then an error: cancellation always
 * finds unstarted tasks, whatever the workers' timing. */
static int build_and_fail(pto_orch *o, void *arg)
{
	struct dag *d = arg;
	struct pto_callable g = { .fn = k_gate };
	struct pto_task_args a;
	int err;

	pto_args_init(&a);
	add_t(&a, d->buf[0], PTO_OUTPUT_EXISTING);
	add_t(&a, d->buf[1], PTO_OUTPUT_EXISTING);
	add_t(&a, d->buf[2], PTO_OUTPUT_EXISTING);
	err = pto_submit_sub(o, &g, &a, NULL);
	pto_args_fini(&a);
	err = err ?: build(o, arg);
	return err ?: -ENOTRECOVERABLE;
}

/* pto_run_start's cancellation retries a failed snapshot; nothing is
 * allocated once the debts are cleared. */
TEST(cancel_snapshot_failure_then_retry)
{
	struct inj in = { .fp = -1, .snapshot_failures = 2 };
	struct dag d;
	pto_orch *o = mk(_metadata, &in);
	pto_run *r;

	atomic_store(&gate_open, 0);
	EXPECT_EQ(-ENOTRECOVERABLE, pto_run_start(o, build_and_fail, &d, &r));
	EXPECT_EQ(0, in.snapshot_failures);	/* two failed, third worked */
	EXPECT_EQ(1, in.settle_seen);
	EXPECT_EQ(0, in.alloc_after_settle);
	atomic_store(&gate_open, 1);
	EXPECT_EQ(-ENOTRECOVERABLE, pto_run_wait(r, 5000));
	pto_run_release(r);
	EXPECT_TRUE(ot_empty(o));
	EXPECT_EQ(0, pto_orch_close(o, 2000));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

/*
 * Every in-line attempt at cancelling a failed run fails: the run stays
 * unresolved with its debts. pending_cancel() builds that state (the
 * gate opened again, the root run), with the run submitted by @run
 * (pto_orch_run, which returns its error) or by pto_run_start (*r set).
 * closed_and_settled() is what close() must leave: the debts settled,
 * no run state left, every slot, heap byte and mapping back.
 */
static pto_orch *pending_cancel(struct __test_metadata *_metadata,
				struct inj *in, struct dag *d, bool run,
				pto_run **r)
{
	pto_orch *o;

	*in = (struct inj){ .fp = -1, .snapshot_failures = 3 };
	o = mk(_metadata, in);
	atomic_store(&gate_open, 0);
	if (run) {
		EXPECT_EQ(-ENOTRECOVERABLE, pto_orch_run(o, build_and_fail, d));
	} else {
		EXPECT_EQ(-ENOTRECOVERABLE, pto_run_start(o, build_and_fail, d, r));
	}
	EXPECT_EQ(0, in->snapshot_failures);
	EXPECT_EQ(0, in->settle_seen);
	atomic_store(&gate_open, 1);
	if (!run) {	/* the root has run by now: only the debts hold it */
		EXPECT_EQ(-ETIMEDOUT, pto_run_wait(*r, 50));
	}
	return o;
}

static void closed_and_settled(struct __test_metadata *_metadata,
			       pto_orch *o, struct inj *in)
{
	EXPECT_EQ(0, pto_orch_close(o, 2000));
	EXPECT_EQ(1, in->settle_seen);
	EXPECT_EQ(0u, orch_runs_alive(o));
	EXPECT_TRUE(ot_empty(o));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

/* close() settles it before draining; the handle then has the result. */
TEST(cancel_left_pending_is_settled_by_close)
{
	struct inj in;
	struct dag d;
	pto_run *r;
	pto_orch *o = pending_cancel(_metadata, &in, &d, false, &r);

	EXPECT_EQ(0, pto_orch_close(o, 2000));
	EXPECT_EQ(1, in.settle_seen);
	EXPECT_EQ(-ENOTRECOVERABLE, pto_run_wait(r, 0));
	pto_run_release(r);
	closed_and_settled(_metadata, o, &in);
}

/*
 * The handle released before close: the settling cancellation finishes
 * the run, and close's reference is the last one (it leaked: the run
 * state was never freed).
 */
TEST(cancel_settled_by_close_frees_a_released_run)
{
	struct inj in;
	struct dag d;
	pto_run *r;
	pto_orch *o = pending_cancel(_metadata, &in, &d, false, &r);

	pto_run_release(r);
	EXPECT_EQ(1u, orch_runs_alive(o));
	closed_and_settled(_metadata, o, &in);
}

/*
 * pto_orch_run returns the construction error instead of waiting for a
 * run only close() can finish, rather than hang.
 */
TEST(orch_run_returns_when_cancellation_is_left_pending)
{
	struct inj in;
	struct dag d;
	pto_orch *o = pending_cancel(_metadata, &in, &d, true, NULL);

	closed_and_settled(_metadata, o, &in);
}

/*
 * Two runs left with a pending cancellation: one close settles both (it
 * settled one per call, then waited out its whole budget for the other
 * run, which only a settle can finish, and returned -ETIMEDOUT). With
 * one more snapshot failure, close goes on past the run whose settle
 * failed, settles the other, and then retries the first.
 */
static int one_then_fail(pto_orch *o, void *arg)
{
	struct pto_task_args a;
	int err;

	(void)arg;
	pto_args_init(&a);
	err = pto_submit_sub(o, &NOOP, &a, NULL);
	pto_args_fini(&a);
	return err ?: -ENOTRECOVERABLE;
}

TEST(close_settles_every_pending_cancellation)
{
	struct pto_orch_config cfg = { .heap_ring_size = 1 << 20,
				       .task_window = 32, .timeout_ms = 500,
				       .run_depth = 2 };
	int extra;

	for (extra = 0; extra < 2; extra++) {
		struct inj in = { .fp = -1, .snapshot_failures = 6 };
		pto_run *r1 = NULL, *r2 = NULL;
		pto_orch *o;

		ASSERT_EQ(0, orch_create_manual(&cfg, &o));
		orch_set_fail_hook(o, hook, &in);
		/* Three attempts each in pto_run_start: both left pending. */
		EXPECT_EQ(-ENOTRECOVERABLE, pto_run_start(o, one_then_fail, NULL, &r1));
		EXPECT_EQ(-ENOTRECOVERABLE, pto_run_start(o, one_then_fail, NULL, &r2));
		EXPECT_EQ(0, in.snapshot_failures);
		EXPECT_EQ(2u, orch_runs_alive(o));
		pto_run_release(r1);
		pto_run_release(r2);
		in.snapshot_failures = extra;
		EXPECT_EQ(0, pto_orch_close(o, 300)) TH_LOG("extra %d", extra);
		EXPECT_EQ(0, in.snapshot_failures);
		EXPECT_EQ(0u, orch_runs_alive(o));
		EXPECT_TRUE(ot_empty(o));
		if (!o->closed)
			EXPECT_EQ(0, pto_orch_close(o, 300));
		EXPECT_EQ(0, pto_orch_destroy(o));
	}
}

/* An out-of-memory scope registration says so (the message was
 * "orchestration function returned -12"). */
static int fail_scope_register(void *ctx, struct pto_orch *o, int fp,
			       struct orch_slot *s)
{
	(void)ctx;
	(void)o;
	(void)s;
	return fp == ORCH_FP_SCOPE_REGISTER;
}

static int many_subs(pto_orch *o, void *arg)
{
	struct pto_task_args a;
	int err, i;

	(void)arg;
	pto_args_init(&a);
	/* Until the outer frame has to grow (at once or past its first
	 * capacity). */
	for (i = 0, err = 0; i < 1000 && !err; i++)
		err = pto_submit_sub(o, &NOOP, &a, NULL);
	pto_args_fini(&a);
	return err;
}

TEST(scope_registration_out_of_memory_has_a_message)
{
	struct pto_orch_config cfg = { .heap_ring_size = 1 << 20,
				       .task_window = 2048, .timeout_ms = 500 };
	pto_run *r = NULL;
	pto_orch *o;

	ASSERT_EQ(0, orch_create_manual(&cfg, &o));
	orch_set_fail_hook(o, fail_scope_register, NULL);
	EXPECT_EQ(-ENOMEM, pto_run_start(o, many_subs, NULL, &r));
	EXPECT_NE(NULL, strstr(pto_orch_error(o), "scope registration"))
		TH_LOG("\"%s\"", pto_orch_error(o));
	EXPECT_EQ(-ENOMEM, pto_run_wait(r, 0));
	pto_run_release(r);
	orch_set_fail_hook(o, NULL, NULL);
	EXPECT_TRUE(ot_empty(o));
	EXPECT_EQ(0, pto_orch_close(o, 500));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

/* The same, step by step on the manual backend: after a failed snapshot
 * every claimed slot is FAILED with its debt recorded and nothing was
 * released; the retry settles them. */
TEST(cancel_snapshot_debts_survive_failure)
{
	struct pto_orch_config cfg = { .heap_ring_size = 1 << 20, .task_window = 32 };
	struct inj in = { .fp = -1, .snapshot_failures = 1 };
	struct pto_task_args a;
	struct pto_task h[3];
	struct orch_dispatch run0;
	struct pto_run *r;
	pto_orch *o;
	char buf[64];
	int i;

	ASSERT_EQ(0, orch_create_manual(&cfg, &o));
	orch_set_fail_hook(o, hook, &in);
	ASSERT_EQ(0, orch_begin_run(o, &r));
	pto_args_init(&a);
	for (i = 0; i < 3; i++) {
		pto_args_reset(&a);
		add_t(&a, buf, PTO_INOUT);	/* a chain */
		ASSERT_EQ(0, pto_submit_sub(o, &NOOP, &a, &h[i]));
	}
	ASSERT_EQ(1, orch_ready_pop(o, 0, &run0));	/* h[0] RUNNING */
	r->construction_err = -EIO;
	orch_run_record_error(r, -EIO, "test");
	orch_close_run_submission(o, r);
	EXPECT_EQ(-ENOMEM, orch_cancel_unstarted_run(o, r));
	EXPECT_EQ(ORCH_RUNNING, ot_state(o, h[0]));
	EXPECT_EQ(ORCH_FAILED, ot_state(o, h[1]));
	EXPECT_EQ(ORCH_FAILED, ot_state(o, h[2]));
	EXPECT_TRUE(orch_slot_at(o, h[1].slot)->cancel_debt);
	EXPECT_TRUE(orch_slot_at(o, h[2].slot)->cancel_debt);
	EXPECT_EQ(3u, ot_live_slots(o));
	EXPECT_EQ(0, in.settle_seen);
	EXPECT_EQ(0, orch_cancel_unstarted_run(o, r));
	EXPECT_EQ(1, in.settle_seen);
	EXPECT_EQ(0, in.alloc_after_settle);
	EXPECT_FALSE(orch_slot_at(o, h[1].slot)->cancel_debt);
	EXPECT_EQ(0, pto_run_done(r));	/* h[0] still running */
	orch_member_done(o, &run0, 0, NULL);
	EXPECT_EQ(-EIO, pto_run_wait(r, 1000));
	EXPECT_EQ(0, ot_drain(o));	/* nothing cancelled is dispatched */
	pto_run_release(r);
	pto_args_fini(&a);
	EXPECT_TRUE(ot_empty(o));
	EXPECT_EQ(0, pto_orch_close(o, 100));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

/*
 * close() settling a pending cancellation on another thread, beside the orch
 * thread's next run: the settle's failing snapshot must not write o->errmsg,
 * the orch thread's. The fail hook makes the overlap exact: close's snapshot
 * waits until the orch thread lets it fail.
 */
enum overlap_at { AT_BUILD, AT_OWN_CANCEL };

struct overlap {
	struct pto_orch *o;
	enum overlap_at at;
	sem_t in_settle, go;
	int close_ret;
	int own_snapshots;	/* snapshots of the orch thread's run */
	char buf[64];
};

static _Thread_local bool tl_closer;

/* Orch thread: let close's snapshot fail, and wait until close is past. */
static void overlap_release_closer(struct overlap *ov)
{
	sem_post(&ov->go);
	pthread_mutex_lock(&ov->o->runs_mu);
	while (!ov->o->closing)
		pthread_cond_wait(&ov->o->runs_cv, &ov->o->runs_mu);
	pthread_mutex_unlock(&ov->o->runs_mu);
}

static int overlap_hook(void *ctx, struct pto_orch *o, int fp,
			struct orch_slot *s)
{
	struct overlap *ov = ctx;

	(void)o;
	(void)s;
	if (fp != ORCH_FP_CANCEL_SNAPSHOT)
		return 0;
	if (tl_closer) {
		sem_post(&ov->in_settle);
		sem_wait(&ov->go);
		return 1;
	}
	if (ov->at == AT_OWN_CANCEL && ov->own_snapshots++ == 0)
		overlap_release_closer(ov);
	return 0;
}

static void *overlap_close(void *arg)
{
	struct overlap *ov = arg;

	tl_closer = true;
	ov->close_ret = pto_orch_close(ov->o, 5000);
	return NULL;
}

/* The second run: a construction error of its own; with AT_OWN_CANCEL
 * also a task behind a gated one, for its cancellation to claim. */
static int overlap_build(pto_orch *o, void *arg)
{
	struct overlap *ov = arg;
	struct pto_callable g = { .fn = k_gate };
	struct pto_task_args a;
	bool own;
	int err;

	pto_args_init(&a);
	if (ov->at == AT_OWN_CANCEL) {
		add_t(&a, ov->buf, PTO_OUTPUT_EXISTING);
		err = pto_submit_sub(o, &g, &a, NULL);
		pto_args_reset(&a);
		add_t(&a, ov->buf, PTO_INPUT);
		err = err ?: pto_submit_sub(o, &NOOP, &a, NULL);
		pto_args_fini(&a);
		return err ?: -ENOTRECOVERABLE;
	}
	err = pto_submit_sub(o, NULL, &a, NULL);	/* no callable */
	pto_args_fini(&a);
	own = err == -EINVAL && strstr(pto_orch_error(o), "missing callable");
	overlap_release_closer(ov);
	return own ? err : -EPROTO;
}

static void close_settles_beside(struct __test_metadata *_metadata,
				 enum overlap_at at)
{
	const char *own = at == AT_BUILD ? "missing callable" :
			  "orchestration function returned";
	struct overlap ov = { .at = at };
	struct inj in;
	struct dag d;
	pto_run *r1, *r2 = NULL;
	pthread_t th;
	pto_orch *o = pending_cancel(_metadata, &in, &d, false, &r1);

	ov.o = o;
	sem_init(&ov.in_settle, 0, 0);
	sem_init(&ov.go, 0, 0);
	orch_set_fail_hook(o, overlap_hook, &ov);
	atomic_store(&gate_open, 0);	/* for the second run's root */
	ASSERT_EQ(0, pthread_create(&th, NULL, overlap_close, &ov));
	sem_wait(&ov.in_settle);	/* close is settling the first run */

	EXPECT_EQ(at == AT_BUILD ? -EINVAL : -ENOTRECOVERABLE,
		  pto_run_start(o, overlap_build, &ov, &r2));
	ASSERT_NE(NULL, r2);
	EXPECT_NE(NULL, strstr(pto_orch_error(o), own))
		TH_LOG("orch error: %s", pto_orch_error(o));
	if (at == AT_BUILD) {
		EXPECT_EQ(-EINVAL, pto_run_wait(r2, 1000));
		EXPECT_NE(NULL, strstr(pto_run_error(r2), own))
			TH_LOG("second run's error: %s", pto_run_error(r2));
	} else {
		EXPECT_EQ(1, ov.own_snapshots);	/* its cancellation ran */
	}

	/* Finish both: the second's root, then the first's settle, which
	 * close tried (and will not retry in this call). */
	atomic_store(&gate_open, 1);
	EXPECT_EQ(0, orch_cancel_unstarted_run(o, r1));
	pthread_join(th, NULL);
	EXPECT_EQ(0, ov.close_ret);
	EXPECT_EQ(-ENOTRECOVERABLE, pto_run_wait(r1, 0));
	EXPECT_EQ(at == AT_BUILD ? -EINVAL : -ENOTRECOVERABLE,
		  pto_run_wait(r2, 0));
	pto_run_release(r1);
	pto_run_release(r2);
	EXPECT_EQ(0u, orch_runs_alive(o));
	EXPECT_TRUE(ot_empty(o));
	EXPECT_EQ(0, pto_orch_destroy(o));
	sem_destroy(&ov.in_settle);
	sem_destroy(&ov.go);
}

TEST(close_settling_beside_a_build_leaves_its_message)
{
	close_settles_beside(_metadata, AT_BUILD);
}

TEST(close_settling_beside_a_failed_runs_cancellation_leaves_its_message)
{
	close_settles_beside(_metadata, AT_OWN_CANCEL);
}

/*
 * Two closes at once (as a close and an abort, or two aborts, which
 * settle through the same step) find one cancellation pending. The first
 * to snapshot waits in the hook until the other has moved past its own
 * settle (closing is set) or has started a second cancellation of the
 * same run (the hook fails a second snapshot, so one would be counted).
 * The second skips the run another settler holds, and its drain waits
 * for that settle: one snapshot, both closes succeed.
 */
struct two_settlers {
	struct pto_orch *o;
	atomic_int snapshots;
	int close_ret[2];
};

static int two_settlers_hook(void *ctx, struct pto_orch *o, int fp,
			     struct orch_slot *s)
{
	struct two_settlers *ts = ctx;
	struct timespec until;

	(void)s;
	if (fp != ORCH_FP_CANCEL_SNAPSHOT)
		return 0;
	pthread_mutex_lock(&o->runs_mu);
	if (atomic_fetch_add(&ts->snapshots, 1)) {
		/* A second settler of the same run: wake the first, fail. */
		pthread_cond_broadcast(&o->runs_cv);
		pthread_mutex_unlock(&o->runs_mu);
		return 1;
	}
	/* Bounded: a hang here would be the bug's, not the test's. */
	orch_deadline_in(&until, 5000);
	while (!o->closing && atomic_load(&ts->snapshots) < 2)
		if (pthread_cond_timedwait(&o->runs_cv, &o->runs_mu, &until))
			break;
	pthread_mutex_unlock(&o->runs_mu);
	return 0;
}

static struct two_settlers *ts_arg;

static void *two_settlers_close(void *arg)
{
	int *ret = arg;

	*ret = pto_orch_close(ts_arg->o, 5000);
	return NULL;
}

TEST(two_concurrent_settlers_cancel_a_pending_run_once)
{
	struct two_settlers ts = { 0 };
	struct inj in;
	struct dag d;
	pto_run *r;
	pthread_t th[2];
	pto_orch *o = pending_cancel(_metadata, &in, &d, false, &r);
	int i;

	ts.o = o;
	ts_arg = &ts;
	orch_set_fail_hook(o, two_settlers_hook, &ts);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, two_settlers_close,
					    &ts.close_ret[i]));
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	EXPECT_EQ(1, atomic_load(&ts.snapshots));
	EXPECT_EQ(0, ts.close_ret[0]);
	EXPECT_EQ(0, ts.close_ret[1]);
	EXPECT_EQ(-ENOTRECOVERABLE, pto_run_wait(r, 0));
	pto_run_release(r);
	EXPECT_EQ(0u, orch_runs_alive(o));
	EXPECT_TRUE(ot_empty(o));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

TEST_HARNESS_MAIN
