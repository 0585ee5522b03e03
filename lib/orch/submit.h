/* SPDX-License-Identifier: MIT */
/* What the submit files (submit.c, submit_check.c, submit_deps.c) share. */
#ifndef PTO_ORCH_SUBMIT_H
#define PTO_ORCH_SUBMIT_H

#include <stdbool.h>
#include <stdint.h>
#include <pto/orch.h>
#include "orch/orch_internal.h"

struct submit_req {
	uint8_t kind;			/* ORCH_NEXT_LEVEL / ORCH_SUB */
	bool is_group;			/* all-or-nothing next-level group */
	bool shared;			/* SPMD: every member has args[0] */
	uint32_t n;
	uint32_t wkind;
	const struct pto_callable *c;
	const struct pto_call_config *cfg;
	struct pto_task_args *const *args;
	const int32_t *widx;		/* per member, or NULL: any of wkind */
};

/* What validate() learns on its walk over the tensors, for later steps
 * to skip walks that would find nothing. */
struct submit_scan {
	uint64_t heap_bytes;	/* auto-allocated OUTPUTs, aligned */
	uint32_t nlookup;	/* INPUT / INOUT tensors */
	uint32_t ninsert;	/* OUTPUT / INOUT / OUTPUT_EXISTING tensors */
};

/*
 * A handle's check word (struct pto_task.slot): a function of its run and
 * task id, so a handle submit did not write (a field changed, one run's
 * task id under another's run id) is refused, not taken as a satisfied
 * dependency (submit_check.c).
 */
static inline uint32_t orch_handle_check(uint64_t run_id, uint64_t tid)
{
	uint64_t h = (tid ^ (run_id << 40) ^ run_id) * 0x9e3779b97f4a7c15ULL;

	return (uint32_t)(h >> 32);
}

static inline uint64_t orch_align_up(uint64_t v)
{
	return (v + PTO_HEAP_ALIGN - 1) & ~(uint64_t)(PTO_HEAP_ALIGN - 1);
}

static inline void orch_tensor_key(const struct pto_run *r, const struct pto_tensor *t,
				   struct orch_key *k)
{
	k->run_id = r->id;
	if (t->space == PTO_SPACE_HOST) {
		k->space = PTO_SPACE_HOST;
		k->obj = 0;
		k->off = t->data;
	} else {
		/*
		 * Not the device tag: on a device orchestrator every GM
		 * tensor validate() lets through is this device's, and
		 * in-process a tagged and an untagged (0) view of one
		 * buffer must stay one key. Two devices' buffers at one
		 * address then share a key in-process: extra ordering,
		 * never a lost dependency.
		 */
		k->space = t->space;
		k->obj = t->obj;
		k->off = t->offset;
	}
}

/* submit_check.c: pure validation, before anything is claimed. */
int orch_submit_validate(struct pto_orch *o, struct pto_run *r,
			 const struct submit_req *q, struct submit_scan *sc);
/* submit_deps.c: producers from explicit deps and the TensorMap, then the
 * edges to them (orch_submit_wire sets *live_out to the live fanins). */
int orch_submit_infer_deps(struct pto_orch *o, struct pto_run *r,
			   struct orch_slot *s, const struct submit_req *q,
			   const struct submit_scan *sc);
int orch_submit_wire(struct pto_orch *o, struct orch_slot *s, int32_t *live_out);

#endif
