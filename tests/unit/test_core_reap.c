// SPDX-License-Identifier: MIT
/*
 * The raw core layer's completion rules (lib/core.c), without a device:
 * a core's window is a page of memory the test writes COND into.
 * core_rc_reap() collects what COND ends; core_launch_arm() must agree with
 * it on whether there is anything to collect (it decides whether the
 * scheduler thread may sleep: a "no" where reap would find something is a
 * lost completion, a "yes" where it finds nothing a busy loop).
 */
#include <stdlib.h>
#include <string.h>
#include <linux/pto.h>
#include "core.h"
#include "kselftest_harness.h"

#define A 5u
#define B 6u
#define NONE 0xFFFFFFFFu	/* done[] slot not filled */

struct fake {
	struct core_launch *l;
	struct core_rc *c;
	uint32_t *win;
	struct pto_payload *payload;	/* [2], by id parity */
};

static void fake_init(struct fake *f)
{
	f->l = calloc(1, sizeof(*f->l) + sizeof(f->l->core[0]));
	f->win = aligned_alloc(4096, 4096);
	f->payload = aligned_alloc(64, 2 * PTO_PAYLOAD_SIZE);
	memset(f->win, 0, 4096);
	memset(f->payload, 0, 2 * PTO_PAYLOAD_SIZE);
	f->l->ncores = 1;
	f->l->evfd = -1;
	f->c = &f->l->core[0];
	f->c->win = f->win;
	f->c->payload[0] = (void *)f->payload;
	f->c->payload[1] = (void *)((char *)f->payload + PTO_PAYLOAD_SIZE);
}

static void fake_free(struct fake *f)
{
	free(f->l);
	free(f->win);
	free(f->payload);
}

/* @n ids in flight, oldest @first, the next one after it (wrapping). */
static void fake_inflight(struct fake *f, unsigned int n, uint32_t first)
{
	uint32_t second = first + 1 > PTO_ID_MAX ? 2 : first + 1;

	f->c->ninflight = n;
	f->c->inflight[0] = n > 0 ? first : 0;
	f->c->inflight[1] = n > 1 ? second : 0;
	f->c->next_id = n > 1 ? (second + 1 > PTO_ID_MAX ? 2 : second + 1) :
		       second;
}

static void fake_cond(struct fake *f, uint32_t cond)
{
	f->win[PTO_REG_COND / 4] = cond;
}

/* The implied completion's status, in its payload buffer. */
static void fake_status(struct fake *f, uint32_t id, uint32_t status)
{
	f->c->payload[id & 1]->status = status;
}

/* What the core left in @id's payload: its done_id (@id when it
 * completed, 0 when it never did) and a status. */
static void fake_ended(struct fake *f, uint32_t id, bool completed,
		       uint32_t status)
{
	f->c->payload[id & 1]->done_id = completed ? id : 0;
	fake_status(f, id, status);
}

/* Reap into @done (unused slots NONE); returns the count. */
static int reap(struct fake *f, struct core_done done[2])
{
	done[0].id = done[1].id = NONE;
	done[0].status = done[1].status = NONE;
	return core_rc_reap(f->c, done);
}

TEST(ack_of_the_only_id_ends_nothing)
{
	struct fake f;
	struct core_done d[2];

	fake_init(&f);
	fake_inflight(&f, 1, A);
	fake_cond(&f, PTO_COND_ACK | A);
	EXPECT_EQ(0, core_launch_arm(f.l));
	EXPECT_EQ(0, reap(&f, d));
	EXPECT_EQ(1, f.c->ninflight);
	fake_free(&f);
}

TEST(fin_ends_the_oldest_with_its_error_bits)
{
	struct fake f;
	struct core_done d[2];

	fake_init(&f);
	fake_inflight(&f, 1, A);
	fake_status(&f, A, 99);	/* FIN's status is COND's, not the payload's */
	fake_cond(&f, PTO_COND_FIN | PTO_TASK_EADDR << PTO_COND_ERR_SHIFT | A);
	EXPECT_EQ(1, core_launch_arm(f.l));
	ASSERT_EQ(1, reap(&f, d));
	EXPECT_EQ(A, d[0].id);
	EXPECT_EQ(PTO_TASK_EADDR, d[0].status);
	EXPECT_EQ(0, f.c->ninflight);
	EXPECT_EQ(0, reap(&f, d));	/* nothing twice */
	fake_free(&f);
}

TEST(ack_of_the_next_id_implies_the_oldest_from_its_payload)
{
	struct fake f;
	struct core_done d[2];

	fake_init(&f);
	fake_inflight(&f, 2, A);
	fake_status(&f, A, PTO_TASK_EFAULT);
	fake_cond(&f, PTO_COND_ACK | B);
	EXPECT_EQ(1, core_launch_arm(f.l));
	ASSERT_EQ(1, reap(&f, d));
	EXPECT_EQ(A, d[0].id);
	EXPECT_EQ(PTO_TASK_EFAULT, d[0].status);
	ASSERT_EQ(1, f.c->ninflight);
	EXPECT_EQ(B, f.c->inflight[0]);
	EXPECT_EQ(0, core_launch_arm(f.l));	/* B only taken */
	fake_free(&f);
}

TEST(fin_of_the_next_id_ends_both)
{
	struct fake f;
	struct core_done d[2];

	fake_init(&f);
	fake_inflight(&f, 2, PTO_ID_MAX);	/* across the wrap: B is 2 */
	fake_status(&f, PTO_ID_MAX, PTO_TASK_OK);
	fake_cond(&f, PTO_COND_FIN | PTO_TASK_ESHAPE << PTO_COND_ERR_SHIFT | 2);
	EXPECT_EQ(1, core_launch_arm(f.l));
	ASSERT_EQ(2, reap(&f, d));
	EXPECT_EQ(PTO_ID_MAX, d[0].id);
	EXPECT_EQ(PTO_TASK_OK, d[0].status);
	EXPECT_EQ(2, d[1].id);
	EXPECT_EQ(PTO_TASK_ESHAPE, d[1].status);
	EXPECT_EQ(0, f.c->ninflight);
	fake_free(&f);
}

/* The emergency retirement's echo, whatever its nonce says. */
TEST(exited_echo_stops_every_id_in_flight)
{
	static const uint32_t nonces[] = { 1, A, B, 0x123456, PTO_ID_MAX };
	unsigned int i, n;

	for (n = 1; n <= 2; n++)
		for (i = 0; i < sizeof(nonces) / sizeof(nonces[0]); i++) {
			struct fake f;
			struct core_done d[2];

			fake_init(&f);
			fake_inflight(&f, n, A);
			fake_cond(&f, PTO_COND_EXITED | nonces[i]);
			EXPECT_EQ(1, core_launch_arm(f.l));
			ASSERT_EQ((int)n, reap(&f, d));
			EXPECT_EQ(A, d[0].id);
			EXPECT_EQ(PTO_TASK_ESTOP, d[0].status);
			if (n == 2) {
				EXPECT_EQ(B, d[1].id);
				EXPECT_EQ(PTO_TASK_ESTOP, d[1].status);
			}
			EXPECT_EQ(0, f.c->ninflight);
			fake_free(&f);
		}
}

/*
 * A task the core completed before the echo (its FIN overwritten by the
 * EXITED echo before the owner read it) has done_id == id and its status
 * in its payload buffer: it completed, it did not stop.
 */
TEST(exited_echo_keeps_a_completed_task)
{
	struct fake f;
	struct core_done d[2];

	fake_init(&f);
	fake_inflight(&f, 2, A);
	fake_ended(&f, A, true, PTO_TASK_OK);
	fake_ended(&f, B, false, PTO_TASK_EADDR);	/* stale: B never completed */
	fake_cond(&f, PTO_COND_EXITED | 0x123);
	ASSERT_EQ(2, reap(&f, d));
	EXPECT_EQ(A, d[0].id);
	EXPECT_EQ(PTO_TASK_OK, d[0].status);
	EXPECT_EQ(B, d[1].id);
	EXPECT_EQ(PTO_TASK_ESTOP, d[1].status);
	fake_free(&f);

	/* Both completed: both keep their status. */
	fake_init(&f);
	fake_inflight(&f, 2, A);
	fake_ended(&f, A, true, PTO_TASK_OK);
	fake_ended(&f, B, true, PTO_TASK_EADDR);
	fake_cond(&f, PTO_COND_EXITED | 0x123);
	ASSERT_EQ(2, reap(&f, d));
	EXPECT_EQ(PTO_TASK_OK, d[0].status);
	EXPECT_EQ(PTO_TASK_EADDR, d[1].status);
	fake_free(&f);
}

/*
 * core_rc_abandon(): after the owner's own retirement (pto_orch_abort), or
 * for a quarantined core, whatever COND says (an ACK that was never
 * followed by the echo, here): every id in flight ends once, by the echo's
 * rules - completed ones (done_id == id) with their status, the others
 * stopped - and a second call, or a reap, ends nothing more.
 */
TEST(abandon_ends_every_id_once_whatever_cond_says)
{
	struct fake f;
	struct core_done d[2];

	fake_init(&f);
	fake_inflight(&f, 2, A);
	fake_ended(&f, A, true, PTO_TASK_EADDR);
	fake_ended(&f, B, false, PTO_TASK_OK);	/* stale: B never completed */
	fake_cond(&f, PTO_COND_ACK | B);
	d[0].id = d[1].id = NONE;
	ASSERT_EQ(2, core_rc_abandon(f.c, d));
	EXPECT_EQ(A, d[0].id);
	EXPECT_EQ(PTO_TASK_EADDR, d[0].status);
	EXPECT_EQ(B, d[1].id);
	EXPECT_EQ(PTO_TASK_ESTOP, d[1].status);
	EXPECT_EQ(0, f.c->ninflight);
	EXPECT_EQ(0, core_rc_abandon(f.c, d));
	EXPECT_EQ(0, reap(&f, d));
	EXPECT_EQ(-1, core_launch_arm(f.l));	/* nothing left to wait for */
	fake_free(&f);

	/* One in flight, a FIN in COND that the abandon does not read. */
	fake_init(&f);
	fake_inflight(&f, 1, A);
	fake_cond(&f, PTO_COND_FIN | A);
	ASSERT_EQ(1, core_rc_abandon(f.c, d));
	EXPECT_EQ(A, d[0].id);
	EXPECT_EQ(PTO_TASK_ESTOP, d[0].status);
	EXPECT_EQ(0, reap(&f, d));
	fake_free(&f);
}

TEST(nothing_in_flight_reaps_nothing_and_arms_nothing)
{
	struct fake f;
	struct core_done d[2];

	fake_init(&f);
	fake_inflight(&f, 0, A);
	fake_cond(&f, PTO_COND_EXITED | 7);
	EXPECT_EQ(-1, core_launch_arm(f.l));
	EXPECT_EQ(0, reap(&f, d));
	fake_free(&f);
}

/*
 * Every COND the core can show against every in-flight state: arm says
 * "progress" exactly when reap collects something, and collects only ids
 * in flight, oldest first.
 */
TEST(arm_and_reap_agree_on_every_cond)
{
	static const uint32_t firsts[] = { 1, A, PTO_ID_MAX - 1, PTO_ID_MAX };
	static const uint32_t states[] = {
		0, PTO_COND_ACK, PTO_COND_FIN,
		PTO_COND_FIN | PTO_TASK_EFAULT << PTO_COND_ERR_SHIFT,
		PTO_COND_EXITED,
	};
	unsigned int fi, si, n, k, cases = 0;

	for (fi = 0; fi < sizeof(firsts) / sizeof(firsts[0]); fi++)
		for (n = 0; n <= 2; n++)
			for (si = 0; si < sizeof(states) / sizeof(states[0]);
			     si++) {
				uint32_t ids[] = { 0, 1, 2, 3, firsts[fi] - 1,
						   firsts[fi], firsts[fi] + 1,
						   firsts[fi] + 2, PTO_ID_MAX };

				for (k = 0; k < sizeof(ids) / sizeof(ids[0]);
				     k++) {
					uint32_t cond = states[si] |
						(ids[k] & PTO_COND_ID_MASK);
					uint32_t if0, if1;
					struct core_done d[2];
					struct fake f;
					int arm, got;

					fake_init(&f);
					fake_inflight(&f, n, firsts[fi]);
					fake_status(&f, firsts[fi], 0);
					fake_cond(&f, cond);
					if0 = f.c->inflight[0];
					if1 = f.c->inflight[1];
					arm = core_launch_arm(f.l);
					got = reap(&f, d);
					cases++;
					if (!n) {
						EXPECT_EQ(-1, arm);
						EXPECT_EQ(0, got);
					} else {
						EXPECT_EQ(got > 0, arm) {
							TH_LOG("cond %#x, %u in flight from %u: arm %d, reap %d",
							       cond, n, firsts[fi], arm, got);
						}
					}
					EXPECT_EQ(n - got, f.c->ninflight);
					if (got > 0)
						EXPECT_EQ(if0, d[0].id);
					if (got > 1)
						EXPECT_EQ(if1, d[1].id);
					fake_free(&f);
				}
			}
	EXPECT_EQ(4 * 3 * 5 * 9, cases);
}

/*
 * A FIN the core wrote for the id before the one in flight (the core has
 * not taken the new id yet) ends nothing: the new task has not run.
 */
TEST(fin_of_the_previous_id_ends_nothing)
{
	struct fake f;
	struct core_done d[2];

	fake_init(&f);
	fake_inflight(&f, 1, A);
	fake_cond(&f, PTO_COND_FIN | (A - 1));
	EXPECT_EQ(0, core_launch_arm(f.l));
	EXPECT_EQ(0, reap(&f, d));
	EXPECT_EQ(1, f.c->ninflight);
	EXPECT_EQ(A, f.c->inflight[0]);
	fake_free(&f);
}

/*
 * The pending slot: a second id may go out once the core took the first
 * (ACK or FIN of it), not before (DATA_MAIN_BASE holds one id: a second
 * written over an untaken first loses it), and never a third.
 */
TEST(second_id_goes_out_once_the_core_took_the_first)
{
	struct fake f;

	fake_init(&f);
	fake_inflight(&f, 0, A);
	EXPECT_EQ(1, core_rc_can_dispatch(f.c));
	fake_inflight(&f, 1, A);
	fake_cond(&f, PTO_COND_FIN | (A - 1));
	EXPECT_EQ(0, core_rc_can_dispatch(f.c));
	fake_cond(&f, PTO_COND_ACK | A);
	EXPECT_EQ(1, core_rc_can_dispatch(f.c));
	fake_cond(&f, PTO_COND_FIN | A);
	EXPECT_EQ(1, core_rc_can_dispatch(f.c));
	fake_inflight(&f, 2, A);
	fake_cond(&f, PTO_COND_ACK | B);
	EXPECT_EQ(0, core_rc_can_dispatch(f.c));
	fake_free(&f);
}

/*
 * Dispatch publishes the id in DATA_MAIN_BASE and asks for a doorbell
 * exactly when the core shows PARKED. Consecutive ids alternate parity,
 * across the wrap too: the parity picks the payload buffer, and two ids
 * of one parity in flight would share one.
 */
TEST(dispatch_alternates_parity_and_rings_only_a_parked_core)
{
	static const uint32_t want[] = { PTO_ID_MAX - 1, PTO_ID_MAX, 2, 3 };
	struct fake f;
	unsigned int i;
	int ring;

	fake_init(&f);
	fake_inflight(&f, 0, PTO_ID_MAX - 2);	/* next: PTO_ID_MAX - 1 */
	for (i = 0; i < 4; i++) {
		f.win[PTO_REG_PARKED / 4] = i & 1;
		EXPECT_EQ(want[i], core_rc_dispatch(f.c, &ring));
		EXPECT_EQ(want[i], f.win[PTO_REG_DATA_MAIN_BASE / 4]);
		EXPECT_EQ((int)(i & 1), ring) TH_LOG("id %u", want[i]);
		EXPECT_EQ(want[i], f.c->inflight[0]);
		f.c->ninflight = 0;	/* reaped */
	}
	fake_free(&f);
}

TEST_HARNESS_MAIN
