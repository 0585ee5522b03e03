/* SPDX-License-Identifier: MIT */
/* A task slot and its state machine (slot.c). */
#ifndef PTO_ORCH_SLOT_H
#define PTO_ORCH_SLOT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <pto/orch.h>
#include "orch/backend.h"
#include "orch/lock.h"
#include "orch/once.h"

#define ORCH_MSG_LEN 192

struct pto_run;

enum orch_state {
	ORCH_FREE = 0,
	ORCH_BUILDING,
	ORCH_PENDING,
	ORCH_READY,
	ORCH_RUNNING,
	ORCH_COMPLETED,
	ORCH_FAILED,
	ORCH_CONSUMED,
};

enum orch_slot_kind {
	ORCH_NEXT_LEVEL = 0,
	ORCH_SUB,
	ORCH_ALLOC,
};

/* A (run, tensor) identity. HOST keys use obj = 0, off = address. */
struct orch_key {
	uint64_t run_id;
	uint64_t space;
	uint64_t obj;
	uint64_t off;
};

/* A slot reference that survives slot reuse: tid is checked under the
 * slot's fanout_mu before acting on it. */
struct orch_slotref {
	struct orch_slot *s;
	uint64_t tid;
};

/* Per-member argument storage, capacity kept across slot reuse so a
 * steady-state submit does not allocate. */
struct orch_member {
	struct pto_arg_tensor *t;
	uint64_t *s;
	uint8_t *sdump;
	uint32_t nt, cap_t;
	uint32_t ns, cap_s;
	int32_t widx;		/* exact worker index, or -1: any of slot kind */
	int32_t ran_on;		/* worker index that ran it, -1 if never */
	_Atomic int mstate;	/* enum orch_mstate */
	int err;
};

enum orch_mstate {
	ORCH_M_PENDING = 0,
	ORCH_M_RUNNING,
	ORCH_M_DONE,
	ORCH_M_FAILED,
	ORCH_M_CANCELLED,	/* never started: cancellation / poisoning */
};

struct orch_rq;

/* Inline capacities of a slot's arrays (see struct orch_slot). */
#define ORCH_INL_EDGES 2
#define ORCH_INL_KEYS 2
#define ORCH_INL_TENSORS 4

struct orch_slot {
	/*
	 * fanout_mu guards the fanin and fanout pairs, the consumer list,
	 * the failure claim and message, and every state transition but
	 * READY -> RUNNING (sched_mu alone, claim_running()) and READY ->
	 * FAILED (both). A publication with no live producer moves
	 * BUILDING -> READY without it: see publish() in submit.c.
	 */
	struct orch_lock fanout_mu;
	_Atomic int state;

	/* Identity, written by the orch thread at claim. */
	uint64_t task_id;
	uint64_t run_id;
	struct pto_run *run;
	uint8_t ring;
	uint8_t kind;		/* enum orch_slot_kind */
	/* Depth of the open scope holding this slot's scope reference, 0
	 * once released (orch thread only: the deadlock test, ring.c). */
	uint8_t scope_depth;
	bool traced;		/* its run is recorded (pto_run.traced) */
	uint64_t heap_off, heap_charged;	/* heap_charged: under ring.mu */
	uint64_t hseq;		/* its ring's FIFO entry, when charged */

	int32_t fanin_count;	/* published with BUILDING -> * */
	int32_t fanin_released;
	int32_t fanout_total;	/* lifetime references: scope + retainers */
	int32_t fanout_released;/* incl. the self release */
	bool failure_propagation_pending;	/* FAILED claimed in BUILDING */
	bool cancel_debt;	/* claimed by cancellation, not settled */
	bool unlaunched;	/* counted in run->unlaunched */
	int failure_err;

	/* Consumers to notify at terminal time. Appended only while this
	 * slot is not terminal (under fanout_mu), so once terminal it is
	 * frozen and the completer walks it without the lock. */
	struct orch_slotref *consumers;
	uint32_t nconsumers, cap_consumers;
	/* Producers this slot retains (one reference each). Written by the
	 * orch thread while BUILDING, read by whoever finishes this slot. */
	struct orch_slot **producers;
	uint32_t nproducers, cap_producers;
	/* Cleanup journal: every key this slot published to the TensorMap. */
	struct orch_key *out_keys;
	uint32_t nkeys, cap_keys;

	/* Task data. */
	struct pto_callable callable;
	struct orch_call_cfg cfg;
	uint32_t wkind;		/* for "any of kind" placement */
	bool is_group;		/* next-level group: all-or-nothing */
	bool shared;		/* SPMD: every member has member 0's args */
	uint32_t nmembers;
	struct orch_member *members;
	uint32_t cap_members;
	_Atomic uint32_t members_left;
	_Atomic int first_err;	/* aggregated member error */
	_Atomic int member_msg_claimed;
	/* Once per task before any member runs (orch_dispatch_once). */
	struct orch_once prologue;

	/* Ready-queue links, under sched_mu. */
	struct orch_slot *rq_next, *rq_prev;
	struct orch_rq *rq;
	uint32_t next_member;	/* SUB group: next member to hand out */

	/* Failure-propagation worklist link (owned by the claimant). */
	struct orch_slot *poison_next;
	/* The orch thread's pending-READY list link (orch_ready_defer):
	 * stored by the orch thread, read under sched_mu by stealers. */
	struct orch_slot *_Atomic pend_next;

	/* Submit scratch (orch thread only): dedup stamp. */
	uint64_t dedup_mark;
	uint32_t dedup_idx;

	/*
	 * Inline first storage of the arrays above (members, member 0's
	 * tensors, consumers, producers, journal), set up when the slot's
	 * chunk is mapped: a typical task neither mallocs nor frees. A larger
	 * need moves an array to the heap (orch_grow_inl), where it stays.
	 */
	struct orch_slotref inl_consumers[ORCH_INL_EDGES];
	struct orch_slot *inl_producers[ORCH_INL_EDGES];
	struct orch_key inl_keys[ORCH_INL_KEYS];
	struct orch_member inl_member;
	struct pto_arg_tensor inl_tensors[ORCH_INL_TENSORS];

	/*
	 * Cold: only read after a failure, and written by whoever records
	 * it (the failure claim's winner, a failing completion, the first
	 * failing member), so slot reset leaves them alone. Last, so the
	 * fields every submit and dispatch touch share fewer cache lines.
	 */
	char failure_message[ORCH_MSG_LEN];	/* valid when FAILED */
	char member_message[ORCH_MSG_LEN];	/* valid when first_err != 0 */
};

/* Failure claim: BUILDING/PENDING (and READY when the caller holds
 * sched_mu and has unlinked it) -> FAILED under fanout_mu. Returns the
 * state it won from, or -1 if it lost. Winner alone writes the message. */
int orch_claim_task_failure(struct pto_orch *o, struct orch_slot *s,
			    uint64_t tid, int err, const char *msg, bool ready_ok);
/* Poison consumers, release producers and self, for a FAILED slot that
 * did not run (claimant or publication loser). */
void orch_propagate_failure(struct pto_orch *o, struct orch_slot *s);
/* Drop one lifetime reference; consumes at the threshold. */
void orch_release_ref(struct pto_orch *o, struct orch_slot *s);
/* Consumers a completion routes per sched_mu hold (orch_on_task_complete). */
#define ORCH_ROUTE_BATCH 16
void orch_release_ref_batched(struct pto_orch *o, struct orch_slot *s,
			      struct orch_consume_batch *b);
/* Aggregate terminal transition of a slot that ran. */
void orch_on_task_complete(struct pto_orch *o, struct orch_slot *s, int err,
			   const char *msg);
/* The counters and links a new occupant starts from (slot claim, under
 * fanout_mu). Inline: every submit runs it. */
static inline void orch_slot_reset(struct orch_slot *s)
{
	s->fanin_count = 0;
	s->fanin_released = 0;
	s->fanout_total = 0;
	s->fanout_released = 0;
	s->failure_propagation_pending = false;
	s->cancel_debt = false;
	s->unlaunched = false;
	s->failure_err = 0;
	s->nconsumers = 0;
	s->nproducers = 0;
	s->nkeys = 0;
	s->nmembers = 0;
	s->is_group = false;
	s->shared = false;
	orch_once_reset(&s->prologue);
	s->next_member = 0;
	s->rq = NULL;
	s->rq_next = s->rq_prev = NULL;
	s->poison_next = NULL;
	s->scope_depth = 0;
	atomic_store_explicit(&s->members_left, 0, memory_order_relaxed);
	atomic_store_explicit(&s->first_err, 0, memory_order_relaxed);
	atomic_store_explicit(&s->member_msg_claimed, 0, memory_order_relaxed);
	/* failure_message / member_message: see struct orch_slot. */
}
void orch_slot_init_storage(struct orch_slot *s);
void orch_slot_free_storage(struct orch_slot *s);
void orch_set_launched(struct orch_slot *s);

#endif
