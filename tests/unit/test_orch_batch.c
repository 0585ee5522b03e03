// SPDX-License-Identifier: MIT
/*
 * The orch thread's batched READY routing (ready.c, orch_ready_defer):
 * a deferred READY slot is routed before the orch thread blocks, a
 * parking worker takes what is pending, a group or exact single keeps
 * publication order, and a READY task never waits for an orchestration
 * function that blocks in its own code.
 */
#include <pthread.h>
#include "kselftest_harness.h"
#include "orch_test.h"

static int noop(struct pto_task_ctx *c)
{
	(void)c;
	return 0;
}

static const struct pto_callable NOOP = { .fn = noop };

/* ---- back-pressure with a batch pending (manual backend) ------------- */

#define BP_TASKS 24
#define BP_SLAB 1024

struct bp {
	pto_orch *o;
	_Atomic int stop;
	_Atomic int go;			/* the popper starts */
	int order[BP_TASKS];		/* dispatch position of task i, 1-based */
	int ran;
};

/* A worker that never parks and never steals: it only pops what was
 * routed (orch_ready_pop), like a device scheduler thread. Its empty pops
 * set the hunger bit, which cannot help while the orch thread is blocked
 * on the ring: only the flush before that wait does. */
static void *bp_popper(void *arg)
{
	struct bp *b = arg;

	while (!atomic_load(&b->go))
		usleep(100);
	while (!atomic_load(&b->stop)) {
		struct orch_dispatch_view v;
		struct orch_dispatch d;

		if (!orch_ready_pop(b->o, 0, &d)) {
			usleep(50);
			continue;
		}
		orch_dispatch_view(&d, &v);
		if (v.nscalars == 1 && v.scalars[0] < BP_TASKS)
			b->order[v.scalars[0]] = ++b->ran;
		orch_member_done(b->o, &d, 0, NULL);
	}
	return NULL;
}

static int bp_fn(pto_orch *o, void *arg)
{
	struct bp *b = arg;
	struct pto_task_args a;
	int i, err = 0;

	pto_args_init(&a);
	for (i = 0; i < BP_TASKS && !err; i++) {
		struct pto_tensor out = { .nbytes = BP_SLAB };

		/* The first tasks are deferred (batch 16) before any pop:
		 * nobody is hungry yet. The fifth fills the 4-slab heap. */
		if (i == 2)
			atomic_store(&b->go, 1);
		err = pto_scope_begin(o);
		pto_args_reset(&a);
		pto_args_add_tensor(&a, &out, PTO_OUTPUT);
		pto_args_add_scalar(&a, (uint64_t)i);
		err = err ?: pto_submit_sub(o, &NOOP, &a, NULL);
		err = err ?: pto_scope_end(o);
	}
	pto_args_fini(&a);
	return err;
}

TEST(backpressure_with_batch_pending_does_not_deadlock)
{
	static const struct pto_worker_desc w[] = { OT_WORKER(0, PTO_WORKER_SUB) };
	struct pto_orch_config cfg = { .heap_ring_size = 4 * BP_SLAB,
				       .task_window = 64, .timeout_ms = 3000,
				       .workers = w, .nworkers = 1 };
	struct bp b = { 0 };
	pthread_t th;
	pto_run *r;
	int i;

	ASSERT_EQ(0, orch_create_manual(&cfg, &b.o));
	orch_set_ready_batch(b.o, ORCH_READY_BATCH);
	ASSERT_EQ(0, pthread_create(&th, NULL, bp_popper, &b));
	EXPECT_EQ(0, pto_run_start(b.o, bp_fn, &b, &r));
	EXPECT_EQ(0, pto_run_wait(r, 5000));
	atomic_store(&b.stop, 1);
	pthread_join(th, NULL);
	/* Every task ran once, in submission order (one FIFO, one worker). */
	EXPECT_EQ(BP_TASKS, b.ran);
	for (i = 0; i < BP_TASKS; i++)
		EXPECT_EQ(i + 1, b.order[i]);
	pto_run_release(r);
	EXPECT_TRUE(ot_empty(b.o));
	EXPECT_EQ(0, pto_orch_close(b.o, 1000));
	EXPECT_EQ(0, pto_orch_destroy(b.o));
}

/* ---- the protocol, step by step (manual backend, test = orch thread) -- */

static const struct pto_worker_desc W2[] = {
	OT_WORKER(0, PTO_WORKER_SUB), OT_WORKER(1, PTO_WORKER_SUB), OT_WORKER(2, PTO_WORKER_AIV),
};

/* The step-by-step tests' orchestrator: a 64-slot window, W2's workers. */
static const struct pto_orch_config MANUAL_CFG = {
	.heap_ring_size = 1 << 20, .task_window = 64, .timeout_ms = 500,
	.workers = W2, .nworkers = 3,
};

/* A manual orchestrator (@create: plain or server) batching by 8, with a
 * run begun: the test thread is its orch thread. */
static pto_run *begin_manual(struct __test_metadata *_metadata,
			     int (*create)(const struct pto_orch_config *,
					   struct pto_orch **),
			     pto_orch **o)
{
	pto_run *r = NULL;

	EXPECT_EQ(0, create(&MANUAL_CFG, o));
	orch_set_ready_batch(*o, 8);
	EXPECT_EQ(0, orch_begin_run(*o, &r));
	return r;
}

static struct pto_task sub(struct __test_metadata *_metadata, pto_orch *o,
			   uint64_t tag)
{
	struct pto_task_args a;
	struct pto_task h = { 0 };

	pto_args_init(&a);
	pto_args_add_scalar(&a, tag);
	EXPECT_EQ(0, pto_submit_sub(o, &NOOP, &a, &h));
	pto_args_fini(&a);
	return h;
}

static uint64_t tag_of(const struct orch_dispatch *d)
{
	struct orch_dispatch_view v;

	orch_dispatch_view(d, &v);
	return v.nscalars ? v.scalars[0] : ~0ULL;
}

/* Worker @widx pops the task tagged @tag and completes it. */
static void pop_done(struct __test_metadata *_metadata, pto_orch *o,
		     int32_t widx, uint64_t tag)
{
	struct orch_dispatch d;
	int got = orch_ready_pop(o, widx, &d);

	EXPECT_EQ(1, got) TH_LOG("worker %d: nothing for tag %llu", widx,
				 (unsigned long long)tag);
	if (!got)
		return;
	EXPECT_EQ(tag, tag_of(&d));
	orch_member_done(o, &d, 0, NULL);
}

/* Close run @r's submission, run the @left tasks still queued, and check
 * that the run succeeded and the manual orchestrator is empty. */
static void end_manual(struct __test_metadata *_metadata, pto_orch *o,
		       pto_run *r, int left)
{
	orch_close_run_submission(o, r);
	EXPECT_EQ(left, ot_drain(o));
	EXPECT_EQ(1, pto_run_done(r));
	EXPECT_EQ(0, pto_run_result(r));
	pto_run_release(r);
	EXPECT_TRUE(ot_empty(o));
	EXPECT_EQ(0, pto_orch_close(o, 100));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

TEST(deferred_until_flush_or_parking_pop)
{
	struct orch_dispatch d;
	pto_orch *o;
	pto_run *r;
	uint64_t gen, kicks;
	int i;

	r = begin_manual(_metadata, orch_create_manual, &o);
	ASSERT_NE(NULL, r);
	gen = orch_ready_gen(o);
	kicks = orch_manual_kicks(o);

	/* Deferred: READY, not queued, no generation change, no kick. */
	sub(_metadata, o, 10);
	sub(_metadata, o, 11);
	EXPECT_EQ(gen, orch_ready_gen(o));
	EXPECT_EQ(kicks, orch_manual_kicks(o));
	EXPECT_EQ(0, orch_ready_pop(o, 0, &d));	/* not routed */

	/* A parking worker takes the list, in order. */
	ASSERT_EQ(1, orch_ready_pop_parking(o, 0, &d, true));
	EXPECT_EQ(10u, tag_of(&d));
	EXPECT_NE(gen, orch_ready_gen(o));
	orch_member_done(o, &d, 0, NULL);
	pop_done(_metadata, o, 1, 11);

	/* SUB was fed by that steal: the next one is deferred again... */
	gen = orch_ready_gen(o);
	sub(_metadata, o, 12);
	EXPECT_EQ(gen, orch_ready_gen(o));
	/* ...until a worker of its kind reports hunger: then the next
	 * publication of the kind flushes at once. An AIV worker's hunger
	 * does not flush SUB work. */
	EXPECT_EQ(0, orch_ready_pop(o, 0, &d));
	orch_ready_hungry(o, 2);
	sub(_metadata, o, 13);
	EXPECT_EQ(gen, orch_ready_gen(o));
	orch_ready_hungry(o, 0);
	sub(_metadata, o, 14);
	EXPECT_NE(gen, orch_ready_gen(o));
	pop_done(_metadata, o, 0, 12);
	pop_done(_metadata, o, 1, 13);
	pop_done(_metadata, o, 1, 14);

	/* The batch limit: ready_batch claims after the first entry since
	 * the list was last reset (a steal does not reset it; the flush
	 * that routed 12..14 did). */
	gen = orch_ready_gen(o);
	for (i = 20; i < 28; i++)
		sub(_metadata, o, i);
	EXPECT_EQ(gen, orch_ready_gen(o));
	sub(_metadata, o, 28);	/* its claim flushes 20..27 */
	EXPECT_NE(gen, orch_ready_gen(o));
	pop_done(_metadata, o, 0, 20);

	/* The end of submission routes the rest (28 included). */
	end_manual(_metadata, o, r, 8);
}

/*
 * The rules for a server backend (the device's scheduler threads, each
 * serving many workers; ready.c, orch_ready_steal): a routing of a kind
 * feeds it whatever idle workers of the kind it left un-kicked, a pop
 * that finds its worker's queues empty takes the pending list (so a
 * deferred task does not wait behind a thread that stays busy and never
 * reaches its pre-sleep steal), and the pre-sleep steal takes it too.
 */
TEST(server_steals_at_pops_and_before_sleep)
{
	struct orch_dispatch d, next;
	pto_orch *o;
	pto_run *r;
	uint64_t gen;

	r = begin_manual(_metadata, orch_create_manual_server, &o);
	ASSERT_NE(NULL, r);

	/* A thread going to sleep with nothing pending: its kinds turn
	 * hungry, and the next SUB publication is routed at once. */
	EXPECT_FALSE(orch_ready_steal(o, 1u << PTO_WORKER_SUB, true));
	gen = orch_ready_gen(o);
	sub(_metadata, o, 10);
	EXPECT_NE(gen, orch_ready_gen(o));
	/* That routing fed SUB although worker 1 was left un-kicked (a
	 * one-thread-per-worker backend stays hungry): 11 is deferred. */
	gen = orch_ready_gen(o);
	sub(_metadata, o, 11);
	EXPECT_EQ(gen, orch_ready_gen(o));

	/* Worker 0 pops 10 (queued); worker 1's queues are empty: its pop
	 * takes the list and runs 11. */
	pop_done(_metadata, o, 0, 10);
	ASSERT_EQ(1, orch_ready_pop(o, 1, &d));
	EXPECT_EQ(11u, tag_of(&d));

	/* The completing worker's own next pop steals as well. */
	sub(_metadata, o, 12);
	ASSERT_EQ(1, orch_member_done_pop(o, &d, 0, NULL, &next));
	EXPECT_EQ(12u, tag_of(&next));
	orch_member_done(o, &next, 0, NULL);

	/* Before sleeping, a thread takes what is pending. */
	gen = orch_ready_gen(o);
	sub(_metadata, o, 13);
	EXPECT_EQ(gen, orch_ready_gen(o));
	EXPECT_TRUE(orch_ready_steal(o, 1u << PTO_WORKER_SUB, true));
	EXPECT_NE(gen, orch_ready_gen(o));
	pop_done(_metadata, o, 0, 13);

	end_manual(_metadata, o, r, 0);
}

/* Submit a two-member group (no arguments) on workers 0 and 1. */
static int group01(pto_orch *o)
{
	struct pto_task_args m0, m1, *mp[2] = { &m0, &m1 };
	int err;

	pto_args_init(&m0);
	pto_args_init(&m1);
	err = pto_submit_next_level_group(o, &NOOP, mp, 2, NULL,
					  (int32_t[]){ 0, 1 }, NULL);
	pto_args_fini(&m0);
	pto_args_fini(&m1);
	return err;
}

/* Could a pop succeed for a worker of any kind? (Asked of every kind.) */
static bool ready_any(struct pto_orch *o)
{
	uint32_t k;

	for (k = ORCH_KIND_FIRST; k < ORCH_KIND_NR; k++)
		if (orch_ready_any_kind(o, k))
			return true;
	return false;
}

/*
 * orch_ready_any_kind, the lock-free "could a pop succeed?" a device
 * scheduler thread asks before each pop, asked for every kind: it counts
 * what is queued (routed, not deferred), the members a group start
 * assigns, and for a server the deferred list its pops would steal; pops
 * take it back to nothing.
 */
TEST(ready_any_counts_queued_and_assigned_work)
{
	struct orch_dispatch d, d1;
	pto_orch *o;
	pto_run *r;

	r = begin_manual(_metadata, orch_create_manual, &o);
	ASSERT_NE(NULL, r);
	EXPECT_FALSE(ready_any(o));
	sub(_metadata, o, 1);
	EXPECT_FALSE(ready_any(o));	/* deferred: not queued */
	sub(_metadata, o, 2);
	orch_ready_flush(o);
	EXPECT_TRUE(ready_any(o));
	pop_done(_metadata, o, 0, 1);
	EXPECT_TRUE(ready_any(o));
	pop_done(_metadata, o, 0, 2);
	EXPECT_FALSE(ready_any(o));

	/* A group: queued, then its start assigns worker 1's member. */
	ASSERT_EQ(0, group01(o));
	EXPECT_TRUE(ready_any(o));
	ASSERT_EQ(1, orch_ready_pop(o, 0, &d));
	EXPECT_TRUE(ready_any(o));		/* member 1, assigned */
	ASSERT_EQ(1, orch_ready_pop(o, 1, &d1));
	EXPECT_FALSE(ready_any(o));
	orch_member_done(o, &d, 0, NULL);
	orch_member_done(o, &d1, 0, NULL);
	end_manual(_metadata, o, r, 0);

	/* A server's pops steal the deferred list: it counts for them. */
	r = begin_manual(_metadata, orch_create_manual_server, &o);
	ASSERT_NE(NULL, r);
	EXPECT_FALSE(ready_any(o));
	sub(_metadata, o, 3);
	EXPECT_TRUE(ready_any(o));
	pop_done(_metadata, o, 0, 3);
	EXPECT_FALSE(ready_any(o));
	end_manual(_metadata, o, r, 0);
}

/*
 * orch_ready_any_kind, the same question for a worker of one kind (W2:
 * workers 0 and 1 are SUB, 2 is AIV): work in its kind's FIFO, or work
 * counted for every worker - exact singles, groups and their assigned
 * members, a server's deferred list. A device thread asks it before it
 * pops for an idle core, so its AIC cores do not pop (a sched_mu round
 * trip each) while only AIV work is queued.
 */
TEST(ready_any_kind_asks_for_one_kind)
{
	struct orch_dispatch d, d1;
	struct pto_task_args a;
	pto_orch *o;
	pto_run *r;

	r = begin_manual(_metadata, orch_create_manual, &o);
	ASSERT_NE(NULL, r);
	EXPECT_FALSE(orch_ready_any_kind(o, PTO_WORKER_SUB));
	EXPECT_FALSE(orch_ready_any_kind(o, PTO_WORKER_AIV));
	/* SUB work: for SUB workers, not for AIV ones. */
	sub(_metadata, o, 1);
	orch_ready_flush(o);
	EXPECT_TRUE(orch_ready_any_kind(o, PTO_WORKER_SUB));
	EXPECT_FALSE(orch_ready_any_kind(o, PTO_WORKER_AIV));
	EXPECT_TRUE(ready_any(o));
	EXPECT_EQ(0, orch_ready_pop(o, 2, &d));	/* what AIV would have found */
	pop_done(_metadata, o, 0, 1);
	EXPECT_FALSE(orch_ready_any_kind(o, PTO_WORKER_SUB));
	EXPECT_FALSE(ready_any(o));

	/* An exact single (on the AIV worker) counts for every kind. */
	pto_args_init(&a);
	pto_args_add_scalar(&a, 2);
	ASSERT_EQ(0, pto_submit_next_level(o, &NOOP, &a, NULL, pto_on_worker(2),
					   NULL));
	pto_args_fini(&a);
	EXPECT_TRUE(orch_ready_any_kind(o, PTO_WORKER_AIV));
	EXPECT_TRUE(orch_ready_any_kind(o, PTO_WORKER_SUB));
	pop_done(_metadata, o, 2, 2);
	EXPECT_FALSE(orch_ready_any_kind(o, PTO_WORKER_SUB));
	EXPECT_FALSE(orch_ready_any_kind(o, PTO_WORKER_AIV));

	/* A group, then the member its start assigns: every kind. */
	ASSERT_EQ(0, group01(o));
	EXPECT_TRUE(orch_ready_any_kind(o, PTO_WORKER_AIV));
	ASSERT_EQ(1, orch_ready_pop(o, 0, &d));
	EXPECT_TRUE(orch_ready_any_kind(o, PTO_WORKER_AIV));	/* member 1 */
	ASSERT_EQ(1, orch_ready_pop(o, 1, &d1));
	EXPECT_FALSE(orch_ready_any_kind(o, PTO_WORKER_SUB));
	EXPECT_FALSE(orch_ready_any_kind(o, PTO_WORKER_AIV));
	orch_member_done(o, &d, 0, NULL);
	orch_member_done(o, &d1, 0, NULL);
	end_manual(_metadata, o, r, 0);

	/* A server's pops steal the deferred list, whatever its kinds. */
	r = begin_manual(_metadata, orch_create_manual_server, &o);
	ASSERT_NE(NULL, r);
	sub(_metadata, o, 3);
	EXPECT_TRUE(orch_ready_any_kind(o, PTO_WORKER_AIV));
	pop_done(_metadata, o, 0, 3);
	EXPECT_FALSE(orch_ready_any_kind(o, PTO_WORKER_AIV));
	end_manual(_metadata, o, r, 0);
}

/* A group (or exact single) is routed at publication, after the deferred
 * singles published before it: its reservation starts when it is
 * published, and the orch thread's publication order is kept. */
TEST(group_publication_flushes_first)
{
	struct orch_dispatch d, d1;
	pto_orch *o;
	pto_run *r;
	uint64_t gen;

	r = begin_manual(_metadata, orch_create_manual, &o);
	ASSERT_NE(NULL, r);
	gen = orch_ready_gen(o);
	sub(_metadata, o, 1);
	EXPECT_EQ(gen, orch_ready_gen(o));
	ASSERT_EQ(0, group01(o));
	/* Both routed: the single is in the SUB FIFO, the group heads the
	 * group FIFO and, its targets idle, starts on worker 0's pop. */
	EXPECT_NE(gen, orch_ready_gen(o));
	ASSERT_EQ(1, orch_ready_pop(o, 0, &d));
	EXPECT_EQ(2u, d.slot->nmembers);
	ASSERT_EQ(1, orch_ready_pop(o, 1, &d1));	/* its other member */
	orch_member_done(o, &d, 0, NULL);
	orch_member_done(o, &d1, 0, NULL);
	pop_done(_metadata, o, 0, 1);
	end_manual(_metadata, o, r, 0);
}

/* ---- threaded: the orchestration function blocks in its own code ------ */

#define UB_TASKS 3

static _Atomic int ub_ran;

static int ub_task(struct pto_task_ctx *c)
{
	(void)c;
	atomic_fetch_add(&ub_ran, 1);
	return 0;
}

/* Submits READY tasks, then waits for them in its own code (no library
 * call that could flush): they must run anyway. */
static int ub_fn(pto_orch *o, void *arg)
{
	struct pto_callable c = { .fn = ub_task };
	struct pto_task_args a;
	int i, err = 0, *seen = arg;

	pto_args_init(&a);
	for (i = 0; i < UB_TASKS && !err; i++)
		err = pto_submit_sub(o, &c, &a, NULL);
	pto_args_fini(&a);
	for (i = 0; i < 5000 && atomic_load(&ub_ran) < UB_TASKS; i++)
		usleep(1000);
	*seen = atomic_load(&ub_ran);
	return err;
}

TEST(ready_task_runs_while_orch_fn_blocks)
{
	struct pto_orch_config cfg = { .heap_ring_size = 1 << 20, .task_window = 64,
				       .timeout_ms = 2000 };
	pto_orch *o;
	int k;

	ASSERT_EQ(0, pto_orch_create_inproc(&cfg, &o));
	for (k = 0; k < 20; k++) {
		int seen = 0;

		atomic_store(&ub_ran, 0);
		/* Let the workers go idle (spin out, park) first, sometimes. */
		if (k & 1)
			usleep(2000);
		ASSERT_EQ(0, pto_orch_run(o, ub_fn, &seen));
		EXPECT_EQ(UB_TASKS, seen) TH_LOG("iteration %d", k);
	}
	EXPECT_EQ(0, pto_orch_close(o, 1000));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

/*
 * Two SUB workers, both parked, batching on: task 0's flush kicks one;
 * task 1, submitted while the other is still parked, must start on it at
 * once (the hunger bit stays set while an idle worker of the kind is left
 * un-kicked), not wait on the pending list behind task 0. "At once" is an
 * order, not a time: task 1 starts while task 0 still runs and the
 * orchestration function still blocks in its own code.
 */
static uint64_t par_t0, par_ret;
static _Atomic uint64_t par_start[2], par_end[2];

static int slow_task(struct pto_task_ctx *c)
{
	par_start[c->scalars[0]] = ot_now_ns() - par_t0;
	usleep(300 * 1000);
	par_end[c->scalars[0]] = ot_now_ns() - par_t0;
	return 0;
}

static int two_slow(pto_orch *o, void *arg)
{
	struct pto_callable c = { .fn = slow_task };
	struct pto_task_args a;
	int i, err = 0;

	(void)arg;
	par_t0 = ot_now_ns();
	for (i = 0; i < 2 && !err; i++) {
		pto_args_init(&a);
		pto_args_add_scalar(&a, (uint64_t)i);
		err = pto_submit_sub(o, &c, &a, NULL);
		pto_args_fini(&a);
		usleep(2000);	/* host work between submits */
	}
	usleep(400 * 1000);	/* host work in the orchestration function */
	par_ret = ot_now_ns() - par_t0;
	return err;
}

static const struct pto_worker_desc TWO_SUB[] = {
	OT_WORKER(0, PTO_WORKER_SUB), OT_WORKER(1, PTO_WORKER_SUB),
};

TEST(parked_worker_takes_second_task_at_once)
{
	struct pto_orch_config cfg = { .heap_ring_size = 1 << 20,
				       .task_window = 64, .timeout_ms = 5000,
				       .workers = TWO_SUB, .nworkers = 2 };
	pto_orch *o;

	ASSERT_EQ(0, pto_orch_create_inproc(&cfg, &o));
	usleep(20000);	/* both workers park */
	ASSERT_EQ(0, pto_orch_run(o, two_slow, NULL));
	TH_LOG("ready_batch %u: task 0 at %.1f-%.1f ms, task 1 at %.1f ms, the function returned at %.1f ms",
	       o->ready_batch, par_start[0] / 1e6, par_end[0] / 1e6,
	       par_start[1] / 1e6, par_ret / 1e6);
	EXPECT_LT(par_start[1], par_end[0]);
	EXPECT_LT(par_start[1], par_ret);
	EXPECT_EQ(0, pto_orch_close(o, 1000));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

/*
 * Light and heavy sleeps (ready.c, before_sleep): a worker parking
 * between the bursts of a busy run pays no membarrier(2), and one left
 * idle pays it once, a millisecond into its idleness. Fifty bursts with
 * gaps in which the workers park; a gap of the orchestration function
 * longer than a millisecond (a loaded host) may cost both workers a heavy
 * sleep, and those gaps are counted and allowed for.
 */
#define LH_BURSTS 50

static int lh_long_gaps;
static uint64_t lh_last_burst, lh_heavy_last;

static int lh_fn(pto_orch *o, void *arg)
{
	struct pto_task_args a;
	uint64_t t_burst = 0;
	int i, k, err = 0;

	(void)arg;
	lh_long_gaps = 0;
	pto_args_init(&a);
	for (k = 0; k < LH_BURSTS && !err; k++) {
		uint64_t t = ot_now_ns();

		if (k == LH_BURSTS - 1)
			lh_heavy_last = orch_heavy_sleeps(o);
		err = pto_scope_begin(o);	/* the window holds 64 */
		for (i = 0; i < 8 && !err; i++) {
			err = pto_submit_sub(o, &NOOP, &a, NULL);
			if (!i && k)
				lh_long_gaps += ot_now_ns() - t_burst >=
						ORCH_LIGHT_SLEEP_NS;
		}
		t_burst = t;
		err = err ?: pto_scope_end(o);
		usleep(50);
	}
	lh_last_burst = t_burst;
	pto_args_fini(&a);
	return err;
}

/* Wait (bounded) until @o counted more than @n heavy sleeps; the count. */
static uint64_t heavy_after(pto_orch *o, uint64_t n)
{
	uint64_t t0 = ot_now_ns(), h;

	while ((h = orch_heavy_sleeps(o)) <= n &&
	       ot_now_ns() - t0 < 10000 * 1000000ULL)
		usleep(1000);
	return h;
}

TEST(busy_parks_are_light_an_idle_worker_goes_heavy)
{
	struct pto_orch_config cfg = { .heap_ring_size = 1 << 20,
				       .task_window = 64, .timeout_ms = 5000,
				       .workers = TWO_SUB, .nworkers = 2 };
	uint64_t h0, h1, h2, h_idle;
	bool tail;
	pto_orch *o;

	ASSERT_EQ(0, pto_orch_create_inproc(&cfg, &o));
	/* Both workers idle past the light sleep (not a fixed time: their
	 * threads may get a CPU late). */
	h0 = heavy_after(o, 1);
	EXPECT_LE(2u, h0);
	ASSERT_EQ(0, pto_orch_run(o, lh_fn, NULL));
	h1 = orch_heavy_sleeps(o);
	/* The last burst to this count: one more gap. */
	tail = ot_now_ns() - lh_last_burst >= ORCH_LIGHT_SLEEP_NS;
	lh_long_gaps += tail;
	/*
	 * The worker that ran the last burst's tasks goes heavy a
	 * millisecond after it parked, after that burst began: after h1
	 * was read, unless that gap was long; then counted since the burst.
	 */
	h_idle = tail ? lh_heavy_last : h1;
	h2 = heavy_after(o, h_idle);
	TH_LOG("heavy sleeps: %llu at idle start, %llu in %d bursts (%d gaps of 1 ms or more), %llu after idling (counted from %s)",
	       (unsigned long long)h0, (unsigned long long)(h1 - h0), LH_BURSTS,
	       lh_long_gaps, (unsigned long long)(h2 - h_idle),
	       tail ? "the last burst" : "the run's end");
	EXPECT_LT(h1 - h0, LH_BURSTS / 2 + 2 * lh_long_gaps);
	EXPECT_LE(1u, h2 - h_idle);
	EXPECT_EQ(0, pto_orch_close(o, 1000));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

TEST_HARNESS_MAIN
