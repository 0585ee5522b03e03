// SPDX-License-Identifier: MIT
/*
 * Slot storage: task id t lives in chunk t >> ORCH_CHUNK_SHIFT at
 * t & ORCH_CHUNK_MASK, found through a directory by chunk number. A chunk
 * whose every slot went FREE leaves the directory for the freed list and
 * is reused, locks and grown arrays kept; chunks are unmapped only by
 * orch_store_fini(). store.mu is a leaf lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "orch/orch_internal.h"

int orch_store_init(struct orch_slot_store *st, uint32_t hint)
{
	uint64_t n = 16;

	memset(st, 0, sizeof(*st));
	/* The sizing hint (task_window): directory entries for that many
	 * live slots per ring before the first growth, up to 64 Ki. */
	while (n < (uint64_t)hint * PTO_MAX_RING_DEPTH / ORCH_CHUNK_SLOTS &&
	       n < 65536)
		n *= 2;
	st->dir = calloc(n, sizeof(*st->dir));
	if (!st->dir)
		return -ENOMEM;
	st->dir_mask = n - 1;
	st->next_tid = 1;	/* 0 names no task */
	st->dir_lo = 0;
	st->dir_hi = 0;
	orch_mutex_init(&st->mu);
	return orch_store_next_chunk(st);
}

void orch_store_fini(struct orch_slot_store *st)
{
	struct orch_chunk *c, *next;
	uint32_t i;

	for (c = st->all; c; c = next) {
		next = c->next_all;
		for (i = 0; i < ORCH_CHUNK_SLOTS; i++)
			orch_slot_free_storage(&c->slots[i]);
		munmap(c, c->map_len);
	}
	st->all = NULL;
	free(st->dir);
	st->dir = NULL;
	if (st->dir_mask)
		pthread_mutex_destroy(&st->mu);
	st->dir_mask = 0;
}

/* mmap, not malloc: a chunk is a few hundred KiB, and destroy must give
 * its pages back to the system (malloc may keep them). */
static struct orch_chunk *chunk_map(void)
{
	size_t len = sizeof(struct orch_chunk) +
		     ORCH_CHUNK_SLOTS * sizeof(struct orch_slot);
	struct orch_chunk *c;
	uint32_t i;

	c = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		 -1, 0);
	if (c == MAP_FAILED)
		return NULL;
	c->map_len = len;
	for (i = 0; i < ORCH_CHUNK_SLOTS; i++) {
		orch_lock_init(&c->slots[i].fanout_mu);
		orch_slot_init_storage(&c->slots[i]);
	}
	return c;
}

/* Make room for chunk number @c in the directory (orch thread, under mu). */
static int dir_fit(struct orch_slot_store *st, uint64_t c)
{
	uint64_t cap = st->dir_mask + 1, ncap = cap, i;
	_Atomic(struct orch_chunk *) *d;

	while (st->dir_lo < c && !st->dir[st->dir_lo & st->dir_mask])
		st->dir_lo++;
	if (c - st->dir_lo < cap)
		return 0;
	while (c - st->dir_lo >= ncap)
		ncap *= 2;
	d = calloc(ncap, sizeof(*d));
	if (!d)
		return -ENOMEM;
	for (i = st->dir_lo; i < c; i++)
		d[i & (ncap - 1)] = st->dir[i & st->dir_mask];
	free(st->dir);
	st->dir = d;
	st->dir_mask = ncap - 1;
	return 0;
}

/*
 * Put a chunk in service for the chunk number of next_tid (orch thread,
 * once per ORCH_CHUNK_SLOTS claims): a freed one if any, else a new one.
 * The mutex's acquire orders the freers' last touch of its slots (their
 * nfree add, acq_rel) before this thread's reuse.
 */
int orch_store_next_chunk(struct orch_slot_store *st)
{
	uint64_t c = st->next_tid >> ORCH_CHUNK_SHIFT;
	struct orch_chunk *ch;

	pthread_mutex_lock(&st->mu);
	ch = st->freed;
	if (ch) {
		st->freed = ch->next_free;
	} else {
		ch = chunk_map();
		if (!ch) {
			pthread_mutex_unlock(&st->mu);
			return -ENOMEM;
		}
		ch->next_all = st->all;
		st->all = ch;
		st->mapped++;
	}
	if (dir_fit(st, c)) {
		ch->next_free = st->freed;
		st->freed = ch;
		pthread_mutex_unlock(&st->mu);
		return -ENOMEM;
	}
	ch->base = c << ORCH_CHUNK_SHIFT;
	/* The ids below next_tid in this chunk are never issued from it. */
	atomic_store_explicit(&ch->nfree, (uint32_t)(st->next_tid & ORCH_CHUNK_MASK),
			      memory_order_relaxed);
	st->dir[c & st->dir_mask] = ch;
	st->dir_hi = c;
	pthread_mutex_unlock(&st->mu);
	st->next = &ch->slots[st->next_tid & ORCH_CHUNK_MASK];
	st->end = &ch->slots[ORCH_CHUNK_SLOTS];
	return 0;
}

static struct orch_chunk *chunk_of(struct orch_slot *s)
{
	struct orch_slot *first = s - (s->task_id & ORCH_CHUNK_MASK);

	return (struct orch_chunk *)((char *)first -
				     offsetof(struct orch_chunk, slots));
}

void orch_store_freed(struct orch_slot_store *st, struct orch_slot *s,
		      uint32_t n)
{
	struct orch_chunk *ch = chunk_of(s);
	uint64_t c;

	/* acq_rel: the thread that completes the count sees every other
	 * freer's writes, and hands them on to the reuser through mu. */
	if (atomic_fetch_add_explicit(&ch->nfree, n, memory_order_acq_rel) + n !=
	    ORCH_CHUNK_SLOTS)
		return;
	pthread_mutex_lock(&st->mu);
	c = ch->base >> ORCH_CHUNK_SHIFT;
	/* Out of the directory now, so that dir_lo passes it whatever
	 * order chunks are reused in (the freed list is LIFO: warm first). */
	if (c >= st->dir_lo && c <= st->dir_hi && st->dir[c & st->dir_mask] == ch)
		st->dir[c & st->dir_mask] = NULL;
	ch->next_free = st->freed;
	st->freed = ch;
	pthread_mutex_unlock(&st->mu);
}

void orch_store_for_range(struct orch_slot_store *st, uint64_t lo,
			  uint64_t hi, void (*fn)(struct orch_slot *, void *),
			  void *ctx)
{
	uint64_t c, t;

	for (c = lo >> ORCH_CHUNK_SHIFT; lo < hi && c <= (hi - 1) >> ORCH_CHUNK_SHIFT; c++) {
		struct orch_chunk *ch = NULL;

		pthread_mutex_lock(&st->mu);
		if (c >= st->dir_lo && c <= st->dir_hi) {
			ch = st->dir[c & st->dir_mask];
			if (ch && ch->base != c << ORCH_CHUNK_SHIFT)
				ch = NULL;
		}
		pthread_mutex_unlock(&st->mu);
		if (!ch)
			continue;
		/* Chunks are never unmapped: a chunk recycled meanwhile
		 * holds other tasks, which @fn tells apart (slot's run). */
		for (t = c << ORCH_CHUNK_SHIFT; t < (c + 1) << ORCH_CHUNK_SHIFT; t++)
			if (t >= lo && t < hi)
				fn(&ch->slots[t & ORCH_CHUNK_MASK], ctx);
	}
}

#ifdef PTO_TEST_HOOKS
uint64_t orch_store_mapped(struct orch_slot_store *st)
{
	uint64_t n;

	pthread_mutex_lock(&st->mu);
	n = st->mapped;
	pthread_mutex_unlock(&st->mu);
	return n;
}

uint64_t orch_store_in_service(struct orch_slot_store *st)
{
	struct orch_chunk *c;
	uint64_t n;

	pthread_mutex_lock(&st->mu);
	n = st->mapped;
	for (c = st->freed; c; c = c->next_free)
		n--;
	pthread_mutex_unlock(&st->mu);
	return n;
}
#endif
