// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: the args-capture rendezvous (pto_capture_slot.c) under explicit
 * schedules: three cores of one cluster (a 1C2V task) and a supervisor,
 * each step called in the order a case names, every result compared as
 * the words the slot and the lines hold.
 */
#include <kunit/test.h>
#include <linux/pto_dump.h>
#include <linux/pto_graph.h>
#include "../pto_capture_slot.h"

#define CT_EPOCH 0x0000000100000005ULL	/* high bits matter: never truncated */
#define CT_TASK 0x0000000200000007ULL
#define CT_MASK PTO_GRAPH_MASK_MIX
#define CT_CORES 3

struct ct_ctx {
	struct pto_capture_area a;
	struct pto_capture_part p[CT_CORES];
	u32 seq[CT_CORES];	/* each core's own phase_seq counter */
	u64 last_tick[CT_CORES];	/* the supervisor's, per request line */
	struct pto_capture_view v[CT_CORES];
};

static int ct_init(struct kunit *test)
{
	struct ct_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, c);
	KUNIT_ASSERT_EQ(test, pto_cs_area_alloc(&c->a, 1, 2), 0);
	test->priv = c;
	return 0;
}

static void ct_exit(struct kunit *test)
{
	struct ct_ctx *c = test->priv;

	pto_cs_area_free(&c->a);
}

/* Core @i of the cluster as a participant of task @task in slot 0. */
static void ct_part(struct kunit *test, int i, u64 task)
{
	struct ct_ctx *c = test->priv;

	KUNIT_ASSERT_EQ(test, pto_cs_part_init(&c->p[i], &c->a, 0, CT_EPOCH,
					       task, i, 1u << i, CT_MASK,
					       &c->seq[i]), 0);
}

static u64 ct_claim_word(struct ct_ctx *c)
{
	return atomic64_read(&c->a.slots[0].claim);
}

/* All eight words of slot 0. */
static void ct_snap(struct ct_ctx *c, u64 w[8])
{
	memcpy(w, &c->a.slots[0], 64);
}

/* Core @i claims (initializing if it wins) or joins, until READY. */
static void ct_enter(struct kunit *test, int i)
{
	struct ct_ctx *c = test->priv;
	enum pto_cs_step r = pto_cs_claim(&c->p[i]);

	if (r == PTO_CS_CLAIMED) {
		pto_cs_initialize(&c->p[i]);
		pto_cs_ready(&c->p[i]);
		r = pto_cs_claim(&c->p[i]);
	}
	KUNIT_ASSERT_EQ(test, r, PTO_CS_JOINED);
}

/* The supervisor answers core @core's newest request with @status. */
static void ct_serve(struct kunit *test, int core, u32 status, u64 cursor)
{
	struct ct_ctx *c = test->priv;

	KUNIT_ASSERT_TRUE(test, pto_cs_accept(&c->a, core, c->last_tick[core],
					      &c->v[core]));
	c->last_tick[core] = c->v[core].tick;
	pto_cs_ack(&c->a.acks[core], &c->v[core], status,
		   c->v[core].req.arg_index, cursor);
}

/* Phase @ph with arrivals in @order, the last publishing; sealed. */
static void ct_phase(struct kunit *test, u32 ph, const int order[CT_CORES])
{
	struct ct_ctx *c = test->priv;
	int k;

	for (k = 0; k < CT_CORES; k++)
		KUNIT_EXPECT_EQ(test, pto_cs_arrive(&c->p[order[k]], ph),
				k == CT_CORES - 1 ? PTO_CS_PUBLISHER : PTO_CS_PEER);
	pto_cs_request(&c->p[order[2]], 0, 0);
	ct_serve(test, order[2], PTO_CS_ST_SEALED, 0);
	for (k = 0; k < CT_CORES; k++)
		KUNIT_EXPECT_EQ(test, pto_cs_poll(&c->p[k], NULL), PTO_CS_SEALED);
}

/*
 * Claim race: every core observed FREE|0 before any compare-exchange;
 * exactly one wins, the others' stale observations fail, and a core that
 * observes CLAIMING or READY (even as a stale word) never claims.
 */
static void ct_claim_race(struct kunit *test)
{
	struct ct_ctx *c = test->priv;
	u64 seen[CT_CORES], w[8], w2[8];
	int i, claimed = 0;

	for (i = 0; i < CT_CORES; i++) {
		ct_part(test, i, CT_TASK);
		seen[i] = ct_claim_word(c);
	}
	for (i = 0; i < CT_CORES; i++)
		claimed += pto_cs_claim_from(&c->p[i], seen[i]) == PTO_CS_CLAIMED;
	KUNIT_EXPECT_EQ(test, claimed, 1);
	KUNIT_EXPECT_EQ(test, ct_claim_word(c), PTO_CS_CLAIM(PTO_CS_CLAIMING, 1));
	/* In CLAIMING: the losers learn the occupancy and touch nothing. */
	atomic64_set(&c->a.slots[0].arrived[0], 0x55);	/* the claimer's to clear */
	ct_snap(c, w);
	KUNIT_EXPECT_EQ(test, pto_cs_claim(&c->p[1]), PTO_CS_WAIT);
	KUNIT_EXPECT_EQ(test, pto_cs_claim_from(&c->p[2],
			PTO_CS_CLAIM(PTO_CS_CLAIMING, 1)), PTO_CS_WAIT);
	KUNIT_EXPECT_EQ(test, pto_cs_arrive(&c->p[2], PTO_CS_BEFORE), PTO_CS_FOREIGN);
	ct_snap(c, w2);
	KUNIT_EXPECT_EQ(test, memcmp(w, w2, 64), 0);
	KUNIT_EXPECT_EQ(test, c->p[1].occ, 1ULL);
	pto_cs_initialize(&c->p[0]);
	pto_cs_ready(&c->p[0]);
	/* In READY, with a bit set: a stale READY observation claims nothing. */
	KUNIT_EXPECT_EQ(test, pto_cs_claim(&c->p[0]), PTO_CS_JOINED);
	KUNIT_EXPECT_EQ(test, pto_cs_arrive(&c->p[0], PTO_CS_BEFORE), PTO_CS_PEER);
	ct_snap(c, w);
	KUNIT_EXPECT_EQ(test, pto_cs_claim_from(&c->p[1],
			PTO_CS_CLAIM(PTO_CS_READY, 1)), PTO_CS_JOINED);
	KUNIT_EXPECT_EQ(test, pto_cs_claim(&c->p[2]), PTO_CS_JOINED);
	ct_snap(c, w2);
	KUNIT_EXPECT_EQ(test, memcmp(w, w2, 64), 0);
	KUNIT_EXPECT_EQ(test, w2[1], 1ULL);	/* arrived[BEFORE]: core 0 only */
	KUNIT_EXPECT_EQ(test, w2[0], PTO_CS_CLAIM(PTO_CS_READY, 1));
}

/* No lost bit: a previous occupancy's words are cleared before any bit. */
static void ct_no_lost_bit(struct kunit *test)
{
	static const int order[CT_CORES] = { 2, 0, 1 };
	struct ct_ctx *c = test->priv;
	struct pto_capture_slot *s = &c->a.slots[0];
	u64 w[8];
	int i;

	/* Occupancy 4 settled, its masks and publisher words still there. */
	atomic64_set(&s->claim, PTO_CS_CLAIM(PTO_CS_SETTLED, 4));
	for (i = 1; i < 8; i++)
		atomic64_set((atomic64_t *)s + i, 0x7);
	atomic64_set(&s->aborted, 0);
	for (i = 0; i < CT_CORES; i++)
		ct_part(test, i, CT_TASK);
	KUNIT_EXPECT_EQ(test, pto_cs_claim(&c->p[1]), PTO_CS_CLAIMED);
	pto_cs_initialize(&c->p[1]);
	ct_snap(c, w);
	KUNIT_EXPECT_EQ(test, w[0], PTO_CS_CLAIM(PTO_CS_CLAIMING, 5));
	for (i = 1; i < 8; i++)
		KUNIT_EXPECT_EQ(test, w[i], 0ULL);
	pto_cs_ready(&c->p[1]);
	for (i = 0; i < CT_CORES; i++)
		ct_enter(test, i);
	KUNIT_EXPECT_EQ(test, pto_cs_arrive(&c->p[order[0]], 0), PTO_CS_PEER);
	KUNIT_EXPECT_EQ(test, atomic64_read(&s->arrived[0]), 4LL);
	KUNIT_EXPECT_EQ(test, pto_cs_arrive(&c->p[order[1]], 0), PTO_CS_PEER);
	KUNIT_EXPECT_EQ(test, atomic64_read(&s->arrived[0]), 5LL);
	KUNIT_EXPECT_EQ(test, pto_cs_arrive(&c->p[order[2]], 0), PTO_CS_PUBLISHER);
	KUNIT_EXPECT_EQ(test, atomic64_read(&s->arrived[0]), 7LL);
	/* A second arrival of one core is a protocol fault, not a bit. */
	KUNIT_EXPECT_EQ(test, pto_cs_arrive(&c->p[0], 0), PTO_CS_FOREIGN);
}

/* A claimer descheduled in CLAIMING: the waiters end the run, writing nothing. */
static void ct_stalled_claimer(struct kunit *test)
{
	struct ct_ctx *c = test->priv;
	u64 w[8], w2[8];
	int i;

	for (i = 0; i < CT_CORES; i++)
		ct_part(test, i, CT_TASK);
	KUNIT_EXPECT_EQ(test, pto_cs_claim(&c->p[0]), PTO_CS_CLAIMED);
	/* core 0 stalls here: no initialization, no READY */
	KUNIT_EXPECT_EQ(test, pto_cs_claim(&c->p[1]), PTO_CS_WAIT);
	KUNIT_EXPECT_EQ(test, pto_cs_claim(&c->p[2]), PTO_CS_WAIT);
	ct_snap(c, w);
	KUNIT_EXPECT_EQ(test, pto_cs_expire(&c->p[1], false), PTO_CS_INIT_LOST);
	KUNIT_EXPECT_EQ(test, pto_cs_expire(&c->p[2], false), PTO_CS_INIT_LOST);
	KUNIT_EXPECT_EQ(test, pto_cs_expire(&c->p[2], true), PTO_CS_LOST);
	ct_snap(c, w2);
	KUNIT_EXPECT_EQ(test, memcmp(w, w2, 64), 0);
	KUNIT_EXPECT_EQ(test, w2[0], PTO_CS_CLAIM(PTO_CS_CLAIMING, 1));
	KUNIT_EXPECT_EQ(test, w2[7], 0ULL);	/* aborted: not raised */
	for (i = 0; i < CT_CORES; i++)
		KUNIT_EXPECT_EQ(test, READ_ONCE(c->a.reqs[i].request_tick), 0ULL);
}

/*
 * Split publishers: BEFORE's last arriver is core 1, AFTER's core 2. Both
 * allocate phase_seq 1 from their own counters; AFTER's peers poll core
 * 2's line and ignore core 1's seal of BEFORE.
 */
static void ct_split_publishers(struct kunit *test)
{
	static const int before[CT_CORES] = { 0, 2, 1 };
	static const int after[CT_CORES] = { 1, 0, 2 };
	struct ct_ctx *c = test->priv;
	struct pto_capture_slot *s = &c->a.slots[0];
	int i;

	for (i = 0; i < CT_CORES; i++) {
		ct_part(test, i, CT_TASK);
		ct_enter(test, i);
	}
	ct_phase(test, PTO_CS_BEFORE, before);
	KUNIT_EXPECT_EQ(test, atomic64_read(&s->publisher[0]), (s64)PTO_CS_PUB(1, 1));
	for (i = 0; i < CT_CORES; i++)
		KUNIT_EXPECT_EQ(test, pto_cs_release(&c->p[i]), PTO_CS_RELEASED);
	KUNIT_EXPECT_EQ(test, atomic64_read(&s->released[0]), 7LL);
	KUNIT_EXPECT_EQ(test, pto_cs_arrive(&c->p[after[0]], 1), PTO_CS_PEER);
	KUNIT_EXPECT_EQ(test, pto_cs_arrive(&c->p[after[1]], 1), PTO_CS_PEER);
	/* No AFTER publisher yet: core 1's sealed line is no answer. */
	KUNIT_EXPECT_EQ(test, pto_cs_poll(&c->p[0], NULL), PTO_CS_WAIT);
	KUNIT_EXPECT_EQ(test, pto_cs_follow(&c->p[1]), PTO_CS_WAIT);
	KUNIT_EXPECT_EQ(test, c->p[0].pub, 0ULL);
	KUNIT_EXPECT_EQ(test, pto_cs_arrive(&c->p[after[2]], 1), PTO_CS_PUBLISHER);
	pto_cs_request(&c->p[2], 0, 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&s->publisher[1]), (s64)PTO_CS_PUB(2, 1));
	KUNIT_EXPECT_EQ(test, pto_cs_follow(&c->p[0]), PTO_CS_FOLLOWING);
	KUNIT_EXPECT_EQ(test, c->p[0].pub, PTO_CS_PUB(2, 1));
	/* The same phase_seq sealed in core 1's line: not this phase's. */
	KUNIT_EXPECT_EQ(test, READ_ONCE(c->a.acks[1].phase_seq), 1ULL);
	KUNIT_EXPECT_EQ(test, pto_cs_poll(&c->p[0], NULL), PTO_CS_WAIT);
	KUNIT_EXPECT_EQ(test, pto_cs_poll(&c->p[1], NULL), PTO_CS_WAIT);
	ct_serve(test, 2, PTO_CS_ST_SEALED, 0);
	for (i = 0; i < CT_CORES; i++)
		KUNIT_EXPECT_EQ(test, pto_cs_poll(&c->p[i], NULL), PTO_CS_SEALED);
}

/*
 * Departure proof: SETTLED is stored by the last release only, a very late
 * seal holds it back, the publisher's line is not reused meanwhile, and
 * no next claim precedes it (even on a stale observation).
 */
static void ct_departure(struct kunit *test)
{
	static const int order[CT_CORES] = { 1, 2, 0 };
	struct ct_ctx *c = test->priv;
	struct pto_capture_part next;
	int i;

	for (i = 0; i < CT_CORES; i++) {
		ct_part(test, i, CT_TASK);
		ct_enter(test, i);
	}
	ct_phase(test, PTO_CS_BEFORE, order);
	for (i = 0; i < CT_CORES; i++)
		pto_cs_release(&c->p[i]);
	for (i = 0; i < CT_CORES; i++)
		KUNIT_EXPECT_EQ(test, pto_cs_arrive(&c->p[order[i]], 1),
				i == 2 ? PTO_CS_PUBLISHER : PTO_CS_PEER);
	pto_cs_request(&c->p[0], 0, 0);
	ct_serve(test, 0, PTO_CS_ST_SEALED, 0);
	/* Core 2 is descheduled: it has not read its seal yet. */
	KUNIT_EXPECT_EQ(test, pto_cs_poll(&c->p[1], NULL), PTO_CS_SEALED);
	KUNIT_EXPECT_EQ(test, pto_cs_release(&c->p[1]), PTO_CS_RELEASED);
	KUNIT_EXPECT_EQ(test, pto_cs_poll(&c->p[0], NULL), PTO_CS_SEALED);
	KUNIT_EXPECT_EQ(test, pto_cs_release(&c->p[0]), PTO_CS_WAIT);
	KUNIT_EXPECT_EQ(test, pto_cs_release(&c->p[0]), PTO_CS_WAIT);
	KUNIT_EXPECT_EQ(test, ct_claim_word(c), PTO_CS_CLAIM(PTO_CS_READY, 1));
	KUNIT_EXPECT_EQ(test, atomic64_read(&c->a.slots[0].released[1]), 3LL);
	/* The next task's core, on the word it saw before this task and now. */
	KUNIT_ASSERT_EQ(test, pto_cs_part_init(&next, &c->a, 0, CT_EPOCH,
					       CT_TASK + 1, 1, 2, CT_MASK,
					       &c->seq[1]), 0);
	KUNIT_EXPECT_EQ(test, pto_cs_claim_from(&next, PTO_CS_CLAIM(PTO_CS_FREE, 0)),
			PTO_CS_WAIT);
	KUNIT_EXPECT_NE(test, pto_cs_claim_from(&next, ct_claim_word(c)),
			PTO_CS_CLAIMED);
	KUNIT_EXPECT_EQ(test, ct_claim_word(c), PTO_CS_CLAIM(PTO_CS_READY, 1));
	/* The late seal arrives; its release is the last. */
	KUNIT_EXPECT_EQ(test, pto_cs_poll(&c->p[2], NULL), PTO_CS_SEALED);
	KUNIT_EXPECT_EQ(test, pto_cs_release(&c->p[2]), PTO_CS_COMPLETE);
	KUNIT_EXPECT_EQ(test, ct_claim_word(c), PTO_CS_CLAIM(PTO_CS_SETTLED, 1));
	/* The next occupancy claims and zeroes; the publisher still departs. */
	KUNIT_ASSERT_EQ(test, pto_cs_part_init(&next, &c->a, 0, CT_EPOCH,
					       CT_TASK + 1, 1, 2, CT_MASK,
					       &c->seq[1]), 0);
	KUNIT_EXPECT_EQ(test, pto_cs_claim(&next), PTO_CS_CLAIMED);
	KUNIT_EXPECT_EQ(test, ct_claim_word(c), PTO_CS_CLAIM(PTO_CS_CLAIMING, 2));
	pto_cs_initialize(&next);
	KUNIT_EXPECT_EQ(test, pto_cs_release(&c->p[0]), PTO_CS_RELEASED);
}

/*
 * Abort: the first waiter's budget raises aborted with its site; nobody
 * leaves on the flag; the supervisor's Aborted with the full identity
 * lets every participant leave; the occupancy is never settled.
 */
static void ct_abort(struct kunit *test)
{
	struct ct_ctx *c = test->priv;
	struct pto_capture_slot *s = &c->a.slots[0];
	struct pto_capture_view v;
	u64 want = PTO_CS_ABORT_WORD(PTO_CS_ABORT_SITE(PTO_CS_BEFORE, 1));
	int i;

	for (i = 0; i < CT_CORES; i++) {
		ct_part(test, i, CT_TASK);
		ct_enter(test, i);
		pto_cs_arrive(&c->p[i], PTO_CS_BEFORE);
	}
	pto_cs_request(&c->p[2], 0, 0);
	ct_serve(test, 2, PTO_CS_ST_INPROGRESS, 4096);
	KUNIT_EXPECT_FALSE(test, pto_cs_slot_aborted(&c->a, 0));
	KUNIT_EXPECT_EQ(test, pto_cs_expire(&c->p[1], false), PTO_CS_TIMEOUT);
	KUNIT_EXPECT_EQ(test, atomic64_read(&s->aborted), (s64)want);
	KUNIT_EXPECT_EQ(test, pto_cs_expire(&c->p[0], false), PTO_CS_TIMEOUT);
	KUNIT_EXPECT_EQ(test, atomic64_read(&s->aborted), (s64)want);
	for (i = 0; i < 2; i++)
		KUNIT_EXPECT_EQ(test, pto_cs_poll(&c->p[i], NULL), PTO_CS_WAIT);
	KUNIT_EXPECT_TRUE(test, pto_cs_slot_aborted(&c->a, 0));
	/* An Aborted for another epoch (low 32 bits equal) is no answer. */
	v = c->v[2];
	v.req.run_epoch = CT_EPOCH & 0xffffffff;
	pto_cs_ack(&c->a.acks[2], &v, PTO_CS_ST_ABORTED, 0, 0);
	for (i = 0; i < CT_CORES; i++)
		KUNIT_EXPECT_EQ(test, pto_cs_poll(&c->p[i], NULL), PTO_CS_WAIT);
	pto_cs_ack(&c->a.acks[2], &c->v[2], PTO_CS_ST_ABORTED, 0, 4096);
	for (i = 0; i < CT_CORES; i++)
		KUNIT_EXPECT_EQ(test, pto_cs_poll(&c->p[i], NULL), PTO_CS_ABORTED);
	KUNIT_EXPECT_EQ(test, ct_claim_word(c), PTO_CS_CLAIM(PTO_CS_READY, 1));
	KUNIT_EXPECT_EQ(test, atomic64_read(&s->released[0]), 0LL);
	KUNIT_EXPECT_NE(test, pto_cs_claim(&c->p[0]), PTO_CS_CLAIMED);
}

/* No acknowledgement at all, or no publisher: the second budget, nothing written. */
static void ct_abort_unanswered(struct kunit *test)
{
	struct ct_ctx *c = test->priv;
	u64 w[8], w2[8];
	int i;

	for (i = 0; i < CT_CORES; i++) {
		ct_part(test, i, CT_TASK);
		ct_enter(test, i);
	}
	/* core 2 never arrives: the phase never gets a publisher */
	pto_cs_arrive(&c->p[0], PTO_CS_BEFORE);
	pto_cs_arrive(&c->p[1], PTO_CS_BEFORE);
	KUNIT_EXPECT_EQ(test, pto_cs_poll(&c->p[0], NULL), PTO_CS_WAIT);
	KUNIT_EXPECT_EQ(test, pto_cs_expire(&c->p[0], false), PTO_CS_TIMEOUT);
	ct_snap(c, w);
	KUNIT_EXPECT_EQ(test, w[7], PTO_CS_ABORT_WORD(PTO_CS_ABORT_SITE(0, 0)));
	KUNIT_EXPECT_EQ(test, pto_cs_poll(&c->p[0], NULL), PTO_CS_WAIT);
	KUNIT_EXPECT_EQ(test, pto_cs_expire(&c->p[0], true), PTO_CS_LOST);
	KUNIT_EXPECT_EQ(test, pto_cs_expire(&c->p[1], true), PTO_CS_LOST);
	ct_snap(c, w2);
	KUNIT_EXPECT_EQ(test, memcmp(w, w2, 64), 0);
	KUNIT_EXPECT_EQ(test, w2[5], 0ULL);	/* publisher[BEFORE] */
}

/* An abort raised before the last release of AFTER: never SETTLED. */
static void ct_abort_no_settle(struct kunit *test)
{
	static const int order[CT_CORES] = { 0, 1, 2 };
	struct ct_ctx *c = test->priv;
	int i;

	for (i = 0; i < CT_CORES; i++) {
		ct_part(test, i, CT_TASK);
		ct_enter(test, i);
	}
	ct_phase(test, PTO_CS_BEFORE, order);
	for (i = 0; i < CT_CORES; i++)
		pto_cs_release(&c->p[i]);
	for (i = 0; i < CT_CORES; i++)
		pto_cs_arrive(&c->p[i], PTO_CS_AFTER);
	pto_cs_request(&c->p[2], 0, 0);
	KUNIT_EXPECT_EQ(test, pto_cs_expire(&c->p[0], false), PTO_CS_TIMEOUT);
	/* The seal had already been written when the abort was raised. */
	ct_serve(test, 2, PTO_CS_ST_SEALED, 0);
	for (i = 0; i < CT_CORES; i++)
		KUNIT_EXPECT_EQ(test, pto_cs_poll(&c->p[i], NULL), PTO_CS_SEALED);
	KUNIT_EXPECT_EQ(test, pto_cs_release(&c->p[0]), PTO_CS_RELEASED);
	KUNIT_EXPECT_EQ(test, pto_cs_release(&c->p[2]), PTO_CS_WAIT);
	KUNIT_EXPECT_EQ(test, pto_cs_release(&c->p[1]), PTO_CS_ABORTED);
	KUNIT_EXPECT_EQ(test, ct_claim_word(c), PTO_CS_CLAIM(PTO_CS_READY, 1));
}

/*
 * Identity: a seal is accepted only for the phase's full (run_epoch,
 * task_id, phase_seq); another occupancy in the claim is fatal before the
 * line is read.
 */
static void ct_identity(struct kunit *test)
{
	static const int order[CT_CORES] = { 0, 1, 2 };
	struct ct_ctx *c = test->priv;
	struct pto_capture_view v;
	int i;

	for (i = 0; i < CT_CORES; i++) {
		ct_part(test, i, CT_TASK);
		ct_enter(test, i);
	}
	ct_phase(test, PTO_CS_BEFORE, order);	/* core 2 seq 1, sealed */
	for (i = 0; i < CT_CORES; i++)
		pto_cs_release(&c->p[i]);
	for (i = 0; i < CT_CORES; i++)
		pto_cs_arrive(&c->p[i], PTO_CS_AFTER);
	pto_cs_request(&c->p[2], 0, 0);		/* seq 2 */
	KUNIT_EXPECT_EQ(test, c->p[2].pub, PTO_CS_PUB(2, 2));
	/* The line still holds BEFORE's seal (seq 1): another phase. */
	KUNIT_EXPECT_EQ(test, READ_ONCE(c->a.acks[2].status), (u32)PTO_CS_ST_SEALED);
	KUNIT_EXPECT_EQ(test, pto_cs_poll(&c->p[0], NULL), PTO_CS_WAIT);
	KUNIT_EXPECT_TRUE(test, pto_cs_accept(&c->a, 2, c->last_tick[2], &v));
	KUNIT_EXPECT_EQ(test, v.req.phase, (u32)PTO_CS_AFTER);
	KUNIT_EXPECT_EQ(test, v.req.phase_seq, 2U);
	KUNIT_EXPECT_EQ(test, v.req.run_epoch, CT_EPOCH);
	KUNIT_EXPECT_EQ(test, v.req.task_id, CT_TASK);
	/* Another epoch, another task, each differing above bit 31 only. */
	v.req.run_epoch ^= 1ULL << 40;
	pto_cs_ack(&c->a.acks[2], &v, PTO_CS_ST_SEALED, 0, 0);
	KUNIT_EXPECT_EQ(test, pto_cs_poll(&c->p[0], NULL), PTO_CS_WAIT);
	v.req.run_epoch ^= 1ULL << 40;
	v.req.task_id ^= 1ULL << 33;
	pto_cs_ack(&c->a.acks[2], &v, PTO_CS_ST_SEALED, 0, 0);
	KUNIT_EXPECT_EQ(test, pto_cs_poll(&c->p[1], NULL), PTO_CS_WAIT);
	v.req.task_id ^= 1ULL << 33;
	/* A non-terminal answer is nothing to a peer. */
	pto_cs_ack(&c->a.acks[2], &v, PTO_CS_ST_WOULDBLOCK, 0, 0);
	KUNIT_EXPECT_EQ(test, pto_cs_poll(&c->p[1], NULL), PTO_CS_WAIT);
	/* The claim names another occupancy: fatal, the seal is not read. */
	pto_cs_ack(&c->a.acks[2], &v, PTO_CS_ST_SEALED, 0, 0);
	atomic64_set(&c->a.slots[0].claim, PTO_CS_CLAIM(PTO_CS_READY, 2));
	KUNIT_EXPECT_EQ(test, pto_cs_poll(&c->p[0], NULL), PTO_CS_FOREIGN);
	KUNIT_EXPECT_EQ(test, pto_cs_claim(&c->p[0]), PTO_CS_FOREIGN);
	atomic64_set(&c->a.slots[0].claim, PTO_CS_CLAIM(PTO_CS_READY, 1));
	KUNIT_EXPECT_EQ(test, pto_cs_poll(&c->p[0], NULL), PTO_CS_SEALED);
}

/*
 * Progress: the publisher republishes with the same phase_seq and a new
 * request_tick, takes only answers to its newest tick; phase_seq is
 * allocated once.
 */
static void ct_progress(struct kunit *test)
{
	struct ct_ctx *c = test->priv;
	struct pto_capture_view stale;
	struct pto_capture_ack echo = {};
	int i;

	for (i = 0; i < CT_CORES; i++) {
		ct_part(test, i, CT_TASK);
		ct_enter(test, i);
		pto_cs_arrive(&c->p[i], PTO_CS_BEFORE);
	}
	pto_cs_request(&c->p[2], 0, 0);
	ct_serve(test, 2, PTO_CS_ST_INPROGRESS, 65536);
	stale = c->v[2];
	KUNIT_EXPECT_EQ(test, pto_cs_poll(&c->p[2], &echo), PTO_CS_PROGRESS);
	KUNIT_EXPECT_EQ(test, echo.arg_cursor, 65536ULL);
	KUNIT_EXPECT_EQ(test, pto_cs_poll(&c->p[0], NULL), PTO_CS_WAIT);
	pto_cs_request(&c->p[2], 0, echo.arg_cursor);
	pto_cs_request(&c->p[2], 1, 0);	/* a WouldBlock retry of arg 1 */
	KUNIT_EXPECT_EQ(test, c->seq[2], 1U);
	KUNIT_EXPECT_EQ(test, READ_ONCE(c->a.reqs[2].phase_seq), 1U);
	KUNIT_EXPECT_EQ(test, READ_ONCE(c->a.reqs[2].request_tick), 3ULL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&c->a.slots[0].publisher[0]),
			(s64)PTO_CS_PUB(2, 1));
	/* An answer to an older tick: not the publisher's. */
	pto_cs_ack(&c->a.acks[2], &stale, PTO_CS_ST_INPROGRESS, 0, 1);
	KUNIT_EXPECT_EQ(test, pto_cs_poll(&c->p[2], &echo), PTO_CS_WAIT);
	ct_serve(test, 2, PTO_CS_ST_WOULDBLOCK, 0);
	KUNIT_EXPECT_EQ(test, c->v[2].req.arg_index, 1U);
	KUNIT_EXPECT_EQ(test, pto_cs_poll(&c->p[2], &echo), PTO_CS_PROGRESS);
	KUNIT_EXPECT_EQ(test, echo.status, (u32)PTO_CS_ST_WOULDBLOCK);
	KUNIT_EXPECT_EQ(test, pto_cs_poll(&c->p[1], NULL), PTO_CS_WAIT);
	/* No new request: the supervisor accepts nothing twice. */
	KUNIT_EXPECT_FALSE(test, pto_cs_accept(&c->a, 2, c->last_tick[2], &stale));
}

/* Under PARTIAL an unmarked task skips both barriers; the metadata decides. */
static void ct_marked(struct kunit *test)
{
	struct pto_graph_task t = {};

	KUNIT_EXPECT_FALSE(test, pto_cs_task_marked(&t, PTO_DUMP_OFF));
	KUNIT_EXPECT_FALSE(test, pto_cs_task_marked(&t, PTO_DUMP_PARTIAL));
	KUNIT_EXPECT_TRUE(test, pto_cs_task_marked(&t, PTO_DUMP_FULL));
	KUNIT_EXPECT_TRUE(test, pto_cs_task_marked(&t, PTO_DUMP_HYBRID));
	t.t[2].flags = PTO_GRAPH_ARG_DUMP;
	KUNIT_EXPECT_TRUE(test, pto_cs_task_marked(&t, PTO_DUMP_PARTIAL));
	KUNIT_EXPECT_FALSE(test, pto_cs_task_marked(&t, PTO_DUMP_OFF));
	t.t[2].flags = 0;
	t.flags = PTO_GRAPH_TASK_DUMP_SCALARS;
	KUNIT_EXPECT_TRUE(test, pto_cs_task_marked(&t, PTO_DUMP_PARTIAL));
}

static struct kunit_case pto_capture_slot_cases[] = {
	KUNIT_CASE(ct_claim_race),
	KUNIT_CASE(ct_no_lost_bit),
	KUNIT_CASE(ct_stalled_claimer),
	KUNIT_CASE(ct_split_publishers),
	KUNIT_CASE(ct_departure),
	KUNIT_CASE(ct_abort),
	KUNIT_CASE(ct_abort_unanswered),
	KUNIT_CASE(ct_abort_no_settle),
	KUNIT_CASE(ct_identity),
	KUNIT_CASE(ct_progress),
	KUNIT_CASE(ct_marked),
	{}
};

static struct kunit_suite pto_capture_slot_suite = {
	.name = "pto_capture_slot",
	.init = ct_init,
	.exit = ct_exit,
	.test_cases = pto_capture_slot_cases,
};
kunit_test_suite(pto_capture_slot_suite);
