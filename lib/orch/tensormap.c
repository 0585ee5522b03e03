// SPDX-License-Identifier: MIT
/*
 * TensorMap: (run id, tensor key) -> current producer slot. A chained
 * hash table (O(1) per tensor on the submit path), nodes recycled through
 * a free list, buckets doubling at load factor 1. mu serializes the orch
 * thread's lookups and inserts against erases from consuming threads.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "orch/orch_internal.h"

/*
 * The node slab holds the task_window hint's worth of live mappings, so
 * the first submits neither malloc nodes nor fault in their pages. The
 * bucket array starts at 1024 and doubles with the live mappings (load
 * factor 1): an array that follows the live set stays cached.
 */
int orch_tm_init(struct pto_orch *o)
{
	struct orch_tensormap *tm = &o->tm;
	uint32_t want = o->cfg.task_window, i;

	memset(tm, 0, sizeof(*tm));
	orch_lock_init(&tm->mu);
	tm->nbuckets = 1024;
	tm->buckets = calloc(tm->nbuckets, sizeof(*tm->buckets));
	if (!tm->buckets)
		return -ENOMEM;
	tm->nslab = 1024;
	while (tm->nslab < want && tm->nslab < (1u << 20))
		tm->nslab *= 2;
	tm->slab = malloc((size_t)tm->nslab * sizeof(*tm->slab));
	if (!tm->slab) {
		tm->nslab = 0;
		return 0;	/* nodes come from malloc one by one */
	}
	for (i = tm->nslab; i-- > 0;) {
		tm->slab[i].next = tm->free;
		tm->free = &tm->slab[i];
	}
	return 0;
}

static void tm_free_node(struct orch_tensormap *tm, struct orch_tm_node *n)
{
	uintptr_t a = (uintptr_t)n, lo = (uintptr_t)tm->slab;

	/* Integers: ordering pointers into different objects is undefined. */
	if (a < lo || a >= lo + tm->nslab * sizeof(*n))
		free(n);
}

void orch_tm_fini(struct pto_orch *o)
{
	struct orch_tensormap *tm = &o->tm;
	struct orch_tm_node *n, *next;
	uint32_t i;

	for (i = 0; tm->buckets && i < tm->nbuckets; i++)
		for (n = tm->buckets[i]; n; n = next) {
			next = n->next;
			tm_free_node(tm, n);
		}
	for (n = tm->free; n; n = next) {
		next = n->next;
		tm_free_node(tm, n);
	}
	free(tm->slab);
	tm->slab = NULL;
	tm->nslab = 0;
	free(tm->buckets);
	tm->buckets = NULL;
}

/*
 * The submit path walks all of a task's tensors under one acquisition
 * (orch_tm_lock + the _locked calls): one lock round trip per task
 * instead of one per tensor, and erase from a consuming thread still
 * sees each task's mappings all-or-nothing.
 */
void orch_tm_lock(struct pto_orch *o)
{
	orch_lock(&o->tm.mu);
}

void orch_tm_unlock(struct pto_orch *o)
{
	orch_unlock(&o->tm.mu);
}

#ifdef PTO_TEST_HOOKS
struct orch_slotref orch_tm_lookup(struct pto_orch *o, const struct orch_key *k)
{
	struct orch_slotref v;

	orch_tm_lock(o);
	v = orch_tm_lookup_locked(o, k);
	orch_tm_unlock(o);
	return v;
}
#endif

/* Double the bucket array; on allocation failure keep the old one (the
 * table still works, only longer chains). */
static void tm_rehash(struct pto_orch *o, struct orch_tensormap *tm)
{
	uint32_t nb = tm->nbuckets * 2, i;
	struct orch_tm_node **b;

	if (orch_may_fail(o, ORCH_FP_TENSORMAP, NULL))
		return;
	b = calloc(nb, sizeof(*b));
	if (!b)
		return;
	for (i = 0; i < tm->nbuckets; i++) {
		struct orch_tm_node *n, *next;

		for (n = tm->buckets[i]; n; n = next) {
			uint32_t h = (uint32_t)(orch_tm_hash(&n->key) & (nb - 1));

			next = n->next;
			n->next = b[h];
			b[h] = n;
		}
	}
	free(tm->buckets);
	tm->buckets = b;
	tm->nbuckets = nb;
}

/* Insert or replace (WAW: the newest writer wins). Caller holds mu. */
int orch_tm_insert_locked(struct pto_orch *o, const struct orch_key *k,
			  struct orch_slotref v)
{
	struct orch_tensormap *tm = &o->tm;
	uint64_t h = orch_tm_hash(k);
	struct orch_tm_node *n;

	for (n = tm->buckets[h & (tm->nbuckets - 1)]; n; n = n->next)
		if (orch_tm_key_eq(&n->key, k)) {
			n->val = v;
			return 0;
		}
	if (orch_may_fail(o, ORCH_FP_TENSORMAP, NULL))
		return -ENOMEM;	/* injected: as if the node's malloc failed */
	if (tm->free) {
		n = tm->free;
		tm->free = n->next;
	} else {
		n = orch_may_fail(o, ORCH_FP_TENSORMAP, NULL) ? NULL :
								  malloc(sizeof(*n));
		if (!n)
			return -ENOMEM;
	}
	if (tm->count + 1 > tm->nbuckets)
		tm_rehash(o, tm);
	n->key = *k;
	n->val = v;
	n->next = tm->buckets[h & (tm->nbuckets - 1)];
	tm->buckets[h & (tm->nbuckets - 1)] = n;
	tm->count++;
	return 0;
}

int orch_tm_insert(struct pto_orch *o, const struct orch_key *k,
		   struct orch_slotref v)
{
	int err;

	orch_tm_lock(o);
	err = orch_tm_insert_locked(o, k, v);
	orch_tm_unlock(o);
	return err;
}

/*
 * Erase every key in @s's cleanup journal that still maps to @s. The owner
 * check (slot and task id) keeps a later writer's entry (WAW) and an older
 * producer's entry whose replacement never got published.
 */
void orch_tm_erase_task_outputs(struct pto_orch *o, struct orch_slot *s)
{
	if (!s->nkeys)
		return;
	orch_lock(&o->tm.mu);
	orch_tm_erase_task_outputs_locked(o, s);
	orch_unlock(&o->tm.mu);
}

/* The same, caller holds mu (a batch of consumed slots, see slot.c). */
void orch_tm_erase_task_outputs_locked(struct pto_orch *o, struct orch_slot *s)
{
	struct orch_tensormap *tm = &o->tm;
	uint32_t i;

	for (i = 0; i < s->nkeys; i++) {
		const struct orch_key *k = &s->out_keys[i];
		struct orch_tm_node **pp =
			&tm->buckets[orch_tm_hash(k) & (tm->nbuckets - 1)];

		for (; *pp; pp = &(*pp)->next) {
			struct orch_tm_node *n = *pp;

			if (!orch_tm_key_eq(&n->key, k))
				continue;
			if (n->val.s == s && n->val.tid == s->task_id) {
				*pp = n->next;
				n->next = tm->free;
				tm->free = n;
				tm->count--;
			}
			break;
		}
	}
	s->nkeys = 0;
}

#ifdef PTO_TEST_HOOKS
uint32_t orch_tm_count(struct pto_orch *o)
{
	uint32_t n;

	orch_lock(&o->tm.mu);
	n = o->tm.count;
	orch_unlock(&o->tm.mu);
	return n;
}
#endif
