/* SPDX-License-Identifier: MIT */
/*
 * Helpers for the orchestrator unit tests (header-only, so nothing is
 * linked into other components' tests).
 */
#ifndef PTO_TESTS_ORCH_TEST_H
#define PTO_TESTS_ORCH_TEST_H

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <pto/orch.h>
#include "orch/orch_internal.h"

/* A worker descriptor, its reserved words zero (designated: -Wextra
 * warns of a positional initializer that leaves fields out). */
#define OT_WORKER(i, k) { .id = (i), .kind = (k) }

static inline uint64_t ot_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline void ot_sleep_ms(unsigned ms)
{
	usleep(ms * 1000);
}

/* Slots live in any ring. */
static inline uint64_t ot_live_slots(struct pto_orch *o)
{
	uint64_t n = 0;
	int r;

	for (r = 0; r < PTO_MAX_RING_DEPTH; r++)
		n += orch_ring_live(o, r);
	return n;
}

static inline uint64_t ot_heap_used(struct pto_orch *o)
{
	uint64_t n = 0;
	int r;

	for (r = 0; r < PTO_MAX_RING_DEPTH; r++)
		n += orch_ring_used(o, r);
	return n;
}

/* The slot of handle @h, or NULL once its chunk is recycled. */
static inline struct orch_slot *ot_slot(struct pto_orch *o, struct pto_task h)
{
	return orch_store_lookup(&o->store, h.task_id);
}

static inline int ot_state(struct pto_orch *o, struct pto_task h)
{
	struct orch_slot *s = ot_slot(o, h);
	int st;

	if (!s)
		return ORCH_CONSUMED;	/* consumed, its chunk recycled */
	orch_lock(&s->fanout_mu);
	st = s->task_id == h.task_id ? atomic_load(&s->state) : ORCH_CONSUMED;
	if (st == ORCH_FREE)
		st = ORCH_CONSUMED;	/* consumed, and reclaimed by its ring */
	orch_unlock(&s->fanout_mu);
	return st;
}

/* Everything returned to empty: no slot, no heap byte, no map entry. */
static inline int ot_empty(struct pto_orch *o)
{
	return ot_live_slots(o) == 0 && ot_heap_used(o) == 0 && orch_tm_count(o) == 0;
}

/* Manual backend: pop for @widx and complete with @err. Returns 1 if a
 * member was run. */
static inline int ot_run_one(struct pto_orch *o, int32_t widx, int err,
			     struct orch_dispatch *out)
{
	struct orch_dispatch d;

	if (!orch_ready_pop(o, widx, &d))
		return 0;
	if (out)
		*out = d;
	orch_member_done(o, &d, err, err ? "injected" : NULL);
	return 1;
}

/* Manual backend: drain every worker until nothing is runnable. */
static inline int ot_drain(struct pto_orch *o)
{
	int n = 0, progress = 1;
	uint32_t w;

	while (progress) {
		progress = 0;
		for (w = 0; w < orch_nworkers(o); w++)
			while (ot_run_one(o, (int32_t)w, 0, NULL)) {
				n++;
				progress = 1;
			}
	}
	return n;
}

#endif
