/* SPDX-License-Identifier: MIT */
/* The TensorMap: the newest producer of each tensor (tensormap.c). */
#ifndef PTO_ORCH_TENSORMAP_H
#define PTO_ORCH_TENSORMAP_H

#include <stdbool.h>
#include <stdint.h>
#include "orch/lock.h"
#include "orch/slot.h"

struct orch_tm_node {
	struct orch_key key;
	struct orch_slotref val;
	struct orch_tm_node *next;
};

struct orch_tensormap {
	struct orch_lock mu;
	struct orch_tm_node **buckets;
	uint32_t nbuckets;	/* power of two */
	uint32_t count;
	struct orch_tm_node *free;	/* recycled nodes */
	struct orch_tm_node *slab;	/* the first nodes, one allocation */
	uint32_t nslab;
};

int orch_tm_init(struct pto_orch *o);
void orch_tm_fini(struct pto_orch *o);
int orch_tm_insert(struct pto_orch *o, const struct orch_key *k,
		   struct orch_slotref v);
void orch_tm_lock(struct pto_orch *o);
void orch_tm_unlock(struct pto_orch *o);
/*
 * One multiply and a fold: this runs for every tensor of every submit.
 * The fold (h ^ h >> 32) puts the product's well-mixed high half into the
 * low bits the bucket mask keeps; addresses are aligned, so the low bits
 * of the product alone would leave most buckets empty. run_id and space
 * need only separate otherwise equal keys, so they are shifted into bits
 * an address or offset does not reach in practice.
 */
static inline uint64_t orch_tm_hash(const struct orch_key *k)
{
	uint64_t h = k->off ^ (k->obj * 0x9e3779b97f4a7c15ULL) ^
		     (k->run_id << 48) ^ (k->space << 44);

	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 32);
}

static inline bool orch_tm_key_eq(const struct orch_key *a, const struct orch_key *b)
{
	return a->off == b->off && a->obj == b->obj && a->run_id == b->run_id &&
	       a->space == b->space;
}

/* orch_tm_lookup_locked(): inline, after struct pto_orch. */
int orch_tm_insert_locked(struct pto_orch *o, const struct orch_key *k,
			  struct orch_slotref v);
void orch_tm_erase_task_outputs(struct pto_orch *o, struct orch_slot *s);
void orch_tm_erase_task_outputs_locked(struct pto_orch *o, struct orch_slot *s);
#ifdef PTO_TEST_HOOKS
/* For the tests: a lookup under its own lock, the number of keys. */
struct orch_slotref orch_tm_lookup(struct pto_orch *o,
				   const struct orch_key *k);
uint32_t orch_tm_count(struct pto_orch *o);
#endif

#endif
