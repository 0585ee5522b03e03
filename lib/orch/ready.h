/* SPDX-License-Identifier: MIT */
/* Ready queues, workers, deferred publication and parking (ready*.c). */
#ifndef PTO_ORCH_READY_H
#define PTO_ORCH_READY_H

#include <stdbool.h>
#include <stdint.h>
#include "orch/backend.h"
#include "orch/slot.h"

/* Arrays indexed by enum pto_worker_kind: index 0 (no kind) stays empty. */
#define ORCH_KIND_FIRST PTO_WORKER_AIC
#define ORCH_KIND_NR (PTO_WORKER_SUB + 1)

/* The kinds index those arrays and the backends' bit-per-kind masks
 * (orch_ready_hungry_kinds()); the device scheduler names a core's kind
 * by its uapi core type. */
_Static_assert(PTO_WORKER_AIC == PTO_CORE_AIC && PTO_WORKER_AIV == PTO_CORE_AIV,
	       "AIC and AIV workers are named by the uapi's core types");
_Static_assert(PTO_WORKER_AIC == 1 && PTO_WORKER_AIV == 2 &&
	       PTO_WORKER_MIX == 3 && PTO_WORKER_SUB == 4,
	       "worker kinds are 1..4, SUB the last");
_Static_assert(ORCH_KIND_NR == PTO_WORKER_SUB + 1 && ORCH_KIND_NR <= 32,
	       "ORCH_KIND_NR covers every kind and fits a uint32_t mask");

static inline bool orch_kind_valid(uint32_t kind)
{
	return kind >= ORCH_KIND_FIRST && kind < ORCH_KIND_NR;
}

struct orch_rq {
	struct orch_slot *head, *tail;
};

struct orch_worker {
	int32_t id;
	uint32_t kind;
	/* Under sched_mu. A worker takes up to cap members at once (a
	 * device core: one running + one pending payload); groups need it
	 * fully idle (inflight == 0). */
	uint32_t inflight, cap;
	bool has_assigned;	/* a group member was assigned to it */
	struct orch_dispatch assigned;
	struct orch_rq exact;	/* tasks targeted at this worker */
};

void orch_enqueue_ready(struct pto_orch *o, struct orch_slot *s);
void orch_enqueue_ready_many(struct pto_orch *o, struct orch_slot *const *v,
			     uint32_t n);
/* Orch thread: publication's batched enqueue, and its flush (ready.c). */
void orch_ready_defer(struct pto_orch *o, struct orch_slot *s);
void orch_ready_flush(struct pto_orch *o);
void orch_ready_check(struct pto_orch *o, uint64_t next_tid);
void orch_ready_hungry(struct pto_orch *o, int32_t widx);
void orch_heavy_barrier(void);
/* Unlink a READY slot (caller holds sched_mu). */
void orch_rq_unlink(struct pto_orch *o, struct orch_slot *s);
void orch_rq_remove_cancelled(struct pto_orch *o, struct orch_slot *s);
int orch_worker_index(struct pto_orch *o, int32_t id);

#endif
