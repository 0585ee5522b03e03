/* SPDX-License-Identifier: MIT */
/*
 * Slot storage (slot_store.c): slots in chunks of ORCH_CHUNK_SLOTS,
 * addressed by task id, grown on demand and recycled once every slot of
 * a chunk is FREE. A chunk is never unmapped before the orchestrator is
 * destroyed, so a stale slot pointer still names a slot (whose task_id
 * tells it is stale). Documentation/orchestrator.md, "Slot storage".
 */
#ifndef PTO_ORCH_SLOT_STORE_H
#define PTO_ORCH_SLOT_STORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "orch/slot.h"

#define ORCH_CHUNK_SHIFT 8
#define ORCH_CHUNK_SLOTS (1u << ORCH_CHUNK_SHIFT)
#define ORCH_CHUNK_MASK ((uint64_t)ORCH_CHUNK_SLOTS - 1)

struct orch_chunk {
	uint64_t base;			/* first task id (orch thread) */
	_Atomic uint32_t nfree;		/* slots gone FREE since base was set */
	struct orch_chunk *next_free;	/* store.freed link, under store.mu */
	struct orch_chunk *next_all;	/* every mapped chunk (destroy) */
	size_t map_len;
	struct orch_slot slots[] __attribute__((aligned(64)));
};

struct orch_slot_store {
	/* Orch thread only: the chunk of the next task id and its cursor. */
	struct orch_slot *next, *end;
	uint64_t next_tid;
	/* dir[c & dir_mask] is chunk number c for c in [dir_lo, dir_hi],
	 * or NULL once all its slots are FREE. Entries are written under
	 * mu; the array is replaced by the orch thread alone (under mu), so
	 * it reads entries without mu, anyone else under it. */
	_Atomic(struct orch_chunk *) *dir;
	uint64_t dir_mask, dir_lo, dir_hi;
	pthread_mutex_t mu;
	struct orch_chunk *freed;	/* fully FREE chunks, under mu */
	struct orch_chunk *all;		/* under mu */
	uint64_t mapped;		/* chunks mapped, under mu */
};

int orch_store_init(struct orch_slot_store *st, uint32_t hint);
void orch_store_fini(struct orch_slot_store *st);
/* Slow path of orch_store_take(): put the next chunk in service. */
int orch_store_next_chunk(struct orch_slot_store *st);

/* The slot for task id st->next_tid (orch thread; NULL: out of memory).
 * orch_store_advance() then hands it out. O(1): a cursor in a chunk. */
static inline struct orch_slot *orch_store_peek(struct orch_slot_store *st)
{
	if (__builtin_expect(st->next == st->end, 0) &&
	    orch_store_next_chunk(st))
		return NULL;
	return st->next;
}

static inline void orch_store_advance(struct orch_slot_store *st)
{
	st->next_tid++;
	st->next++;
}

/*
 * The slot that holds or held @tid (orch thread), or NULL when its chunk
 * was recycled: every slot in it went FREE, so that task is consumed.
 * A chunk number and a mask: no search.
 */
static inline struct orch_slot *orch_store_lookup(const struct orch_slot_store *st,
						  uint64_t tid)
{
	uint64_t c = tid >> ORCH_CHUNK_SHIFT;
	struct orch_chunk *ch;

	if (c < st->dir_lo || c > st->dir_hi)
		return NULL;
	/* Relaxed: a chunk cleared meanwhile is on the freed list, and only
	 * this thread takes it from there. */
	ch = atomic_load_explicit(&st->dir[c & st->dir_mask], memory_order_relaxed);
	if (!ch || ch->base != c << ORCH_CHUNK_SHIFT)
		return NULL;
	return &ch->slots[tid & ORCH_CHUNK_MASK];
}

/* @n slots of one chunk went FREE (whoever consumed them). */
void orch_store_freed(struct orch_slot_store *st, struct orch_slot *s,
		      uint32_t n);
/* Call @fn on every slot with a task id in [lo, hi) still in a chunk.
 * Any thread: the directory is read under mu. */
void orch_store_for_range(struct orch_slot_store *st, uint64_t lo,
			  uint64_t hi, void (*fn)(struct orch_slot *, void *),
			  void *ctx);
#ifdef PTO_TEST_HOOKS
/* For the tests: chunks mapped, and chunks in service. */
uint64_t orch_store_mapped(struct orch_slot_store *st);
uint64_t orch_store_in_service(struct orch_slot_store *st);
#endif

#endif
