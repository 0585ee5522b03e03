/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pto - the resident route's args-capture rendezvous (pto_capture_slot.c,
 * Documentation/capture.md): one slot of eight 64-bit words per (cluster,
 * pending slot), a request line and an acknowledgement line per core, and
 * the protocol as step functions that never wait, so tests drive them
 * under any schedule and the cores' and supervisors' threads loop on them.
 */
#ifndef _PTO_CAPTURE_SLOT_H_
#define _PTO_CAPTURE_SLOT_H_

#include <linux/atomic.h>
#include <linux/build_bug.h>
#include <linux/types.h>

struct pto_graph_task;

/* claim = state << PTO_CS_STATE_SHIFT | occupancy */
#define PTO_CS_STATE_SHIFT 62
#define PTO_CS_OCC_MASK ((1ULL << PTO_CS_STATE_SHIFT) - 1)
#define PTO_CS_FREE 0ULL
#define PTO_CS_CLAIMING 1ULL
#define PTO_CS_READY 2ULL
#define PTO_CS_SETTLED 3ULL
#define PTO_CS_CLAIM(state, occ) (((u64)(state) << PTO_CS_STATE_SHIFT) | \
				   ((occ) & PTO_CS_OCC_MASK))
#define PTO_CS_STATE(w) ((w) >> PTO_CS_STATE_SHIFT)
#define PTO_CS_OCC(w) ((w) & PTO_CS_OCC_MASK)

/* The two phases: around the task's execution. */
#define PTO_CS_BEFORE 0
#define PTO_CS_AFTER 1
#define PTO_CS_PHASES 2

/* publisher word: (core + 1) << 32 | phase_seq; zero: no request yet. */
#define PTO_CS_PUB(core, seq) ((((u64)(core) + 1) << 32) | (u32)(seq))
#define PTO_CS_PUB_CORE(w) ((u32)((w) >> 32) - 1)
#define PTO_CS_PUB_SEQ(w) ((u32)(w))

/* aborted word: 0, or 1 | site << 8, site = phase | (core + 1) << 8. */
#define PTO_CS_ABORT_SITE(phase, core) ((u64)(phase) | (((u64)(core) + 1) << 8))
#define PTO_CS_ABORT_WORD(site) (1ULL | ((u64)(site) << 8))

/**
 * struct pto_capture_slot - the rendezvous of one (cluster, pending slot).
 * @claim: state << 62 | occupancy (PTO_CS_CLAIM).
 * @arrived: per phase, the participants' bits, each set by its own core.
 * @released: per phase, the participants that left it.
 * @publisher: per phase, PTO_CS_PUB of its last arriver; zero until then.
 * @aborted: 0, or PTO_CS_ABORT_WORD of the first waiter that timed out.
 *
 * Only single 64-bit atomics touch these words; the supervisor never
 * writes one.
 */
struct pto_capture_slot {
	atomic64_t claim;
	atomic64_t arrived[PTO_CS_PHASES];
	atomic64_t released[PTO_CS_PHASES];
	atomic64_t publisher[PTO_CS_PHASES];
	atomic64_t aborted;
};
static_assert(sizeof(struct pto_capture_slot) == 64);

/**
 * struct pto_capture_req - a core's request line; only that core writes it.
 * @run_epoch / @task_id: the task's full identity.
 * @slot: index of the slot the request is for.
 * @phase: PTO_CS_BEFORE / _AFTER.
 * @phase_seq: the phase's identity, allocated once by its last arriver.
 * @arg_index / @arg_cursor: the argument and byte the service resumes at.
 * @request_tick: advanced for every (re)publication; stored last.
 */
struct pto_capture_req {
	u64 run_epoch;
	u64 task_id;
	u32 slot;
	u32 phase;
	u32 phase_seq;
	u32 arg_index;
	u64 arg_cursor;
	u64 reserved[2];
	u64 request_tick;
};
static_assert(sizeof(struct pto_capture_req) == 64);

/* struct pto_capture_ack.status */
enum pto_cs_status {
	PTO_CS_ST_NONE,
	PTO_CS_ST_INPROGRESS,	/* a chunk copied; arg_index / cursor echoed */
	PTO_CS_ST_WOULDBLOCK,	/* nothing reserved, nothing accounted */
	PTO_CS_ST_SEALED,	/* terminal: every argument committed */
	PTO_CS_ST_ABORTED,	/* terminal: the phase was aborted */
};

/**
 * struct pto_capture_ack - a core's acknowledgement line; only the lane's
 *	supervisor writes it, the publishing core and its peers read it.
 * @status: enum pto_cs_status.
 * @arg_index / @arg_cursor / @request_tick: echoed progress (publisher only).
 * @run_epoch / @task_id / @phase_seq: the identity answered; stored last,
 *	@phase_seq last of all.
 */
struct pto_capture_ack {
	u32 status;
	u32 arg_index;
	u64 arg_cursor;
	u64 request_tick;
	u64 reserved[2];
	u64 run_epoch;
	u64 task_id;
	u64 phase_seq;
};
static_assert(sizeof(struct pto_capture_ack) == 64);

/* What a step tells its caller. */
enum pto_cs_step {
	PTO_CS_WAIT,		/* nothing changed: call the same step again */
	PTO_CS_CLAIMED,	/* this core claims: initialize, then ready */
	PTO_CS_JOINED,		/* the slot is READY for this occupancy */
	PTO_CS_PUBLISHER,	/* last arriver: publish the request */
	PTO_CS_PEER,		/* arrived: follow the publisher */
	PTO_CS_FOLLOWING,	/* the phase's publisher is known */
	PTO_CS_PROGRESS,	/* publisher: answered, republish (ack echoed) */
	PTO_CS_SEALED,		/* the phase is sealed: release */
	PTO_CS_RELEASED,	/* left the phase */
	PTO_CS_COMPLETE,	/* left AFTER last: SETTLED stored, complete */
	PTO_CS_ABORTED,	/* Aborted acknowledged: the run's fatal path */
	PTO_CS_TIMEOUT,	/* budget: aborted raised, keep polling */
	PTO_CS_INIT_LOST,	/* budget in CLAIMING: fatal, nothing written */
	PTO_CS_LOST,		/* second budget: fatal, nothing written */
	PTO_CS_FOREIGN,	/* another occupancy in the claim: fatal */
};

struct pto_capture_area;

/**
 * struct pto_capture_part - one participating core's view of one task.
 * @area: the run's control lines; @slot: the task's slot, @slot_index.
 * @run_epoch / @task_id: the task's identity.
 * @core: the core's index (its request and acknowledgement lines).
 * @bit: its bit in @mask, the task's active_mask.
 * @seq: the core's own phase_seq counter.
 * @occ: the occupancy it joined (0: none yet).
 * @phase: the phase it is in.
 * @pub: the phase's publisher word as observed (0: none yet).
 * @publisher: this core published the phase's request.
 * @released: this core set its bit in the phase's released mask.
 * @timed_out: the first budget expired (aborted raised or found raised).
 */
struct pto_capture_part {
	struct pto_capture_area *area;
	struct pto_capture_slot *slot;
	u32 slot_index;
	u64 run_epoch;
	u64 task_id;
	u32 core;
	u32 bit;
	u32 mask;
	u32 *seq;
	u64 occ;
	u32 phase;
	u64 pub;
	bool publisher;
	bool released;
	bool timed_out;
};

/**
 * struct pto_capture_view - a request as the supervisor accepted it.
 * @core: whose request line; @tick: its request_tick.
 */
struct pto_capture_view {
	u32 core;
	u64 tick;
	struct pto_capture_req req;
};

/* The selection: does this task capture anything at @level at all? */
bool pto_cs_task_marked(const struct pto_graph_task *t, u32 level);

/* Participant steps (each a bounded number of single-word accesses). */
int pto_cs_part_init(struct pto_capture_part *p, struct pto_capture_area *a,
		      u32 slot_index, u64 run_epoch, u64 task_id, u32 core,
		      u32 bit, u32 mask, u32 *seq);
enum pto_cs_step pto_cs_claim(struct pto_capture_part *p);
enum pto_cs_step pto_cs_claim_from(struct pto_capture_part *p, u64 w);
void pto_cs_initialize(struct pto_capture_part *p);
void pto_cs_ready(struct pto_capture_part *p);
enum pto_cs_step pto_cs_arrive(struct pto_capture_part *p, u32 phase);
void pto_cs_request(struct pto_capture_part *p, u32 arg_index, u64 cursor);
enum pto_cs_step pto_cs_follow(struct pto_capture_part *p);
enum pto_cs_step pto_cs_poll(struct pto_capture_part *p,
			       struct pto_capture_ack *echo);
enum pto_cs_step pto_cs_release(struct pto_capture_part *p);
enum pto_cs_step pto_cs_expire(struct pto_capture_part *p, bool second);

/* Supervisor steps: request and acknowledgement lines only. */
bool pto_cs_accept(struct pto_capture_area *a, u32 core, u64 last_tick,
		    struct pto_capture_view *v);
bool pto_cs_slot_aborted(struct pto_capture_area *a, u32 slot_index);
void pto_cs_ack(struct pto_capture_ack *ack, const struct pto_capture_view *v,
		 u32 status, u32 arg_index, u64 cursor);

/**
 * struct pto_capture_area - a run's control lines, allocated only when the
 *	bind enables args dump; zeroed (FREE, occupancy 0) at run init.
 */
struct pto_capture_area {
	u32 nslots;
	u32 ncores;
	struct pto_capture_slot *slots;
	struct pto_capture_req *reqs;
	struct pto_capture_ack *acks;
};

int pto_cs_area_alloc(struct pto_capture_area *a, u32 clusters, u32 pending);
void pto_cs_area_free(struct pto_capture_area *a);

#endif /* _PTO_CAPTURE_SLOT_H_ */
