// SPDX-License-Identifier: MIT
/*
 * Scope: a stack of frames, each the list of slots holding a
 * scope reference at that level. The run's outer scope is frame 0 (depth
 * 1); users may nest PTO_MAX_SCOPE_DEPTH more. scope_end releases one
 * reference per slot and returns: it never waits (no per-scope wait by
 * design; the run fence is the synchronous completion).
 *
 * Orch thread only. Frames keep their capacity across runs, so a steady
 * state registration is an array store.
 */
#include <errno.h>
#include <stdlib.h>
#include "orch/orch_internal.h"

int orch_scope_begin(struct pto_orch *o)
{
	if (o->scope.depth >= PTO_MAX_SCOPE_DEPTH + 1)
		return orch_error(o, -EOVERFLOW,
				  "scope nesting deeper than %d", PTO_MAX_SCOPE_DEPTH);
	o->scope.frames[o->scope.depth].n = 0;
	o->scope.depth++;
	return 0;
}

void orch_scope_end(struct pto_orch *o)
{
	struct orch_consume_batch b;
	struct orch_scope_frame *f;
	uint32_t i;

	if (!o->scope.depth)
		return;
	f = &o->scope.frames[--o->scope.depth];
	/* A scope reference keeps its slot from reaching CONSUMED, so every
	 * pointer in the frame is still the slot it registered. The slots
	 * this consumes are cleaned up in batches (slot.c), all before we
	 * return. */
	b.n = 0;
	for (i = 0; i < f->n; i++) {
		f->refs[i].s->scope_depth = 0;	/* before the release */
		orch_release_ref_batched(o, f->refs[i].s, &b);
	}
	orch_consume_flush(o, &b);
	f->n = 0;
}

/*
 * orch_scope_register() (orch_internal.h), its only caller, when no scope
 * is open or the frame is full: the inline already found @s not to be
 * the frame's newest entry (its idempotency test), so this only grows
 * the frame and appends.
 */
int orch_scope_register_slow(struct pto_orch *o, struct orch_slot *s)
{
	struct orch_scope_frame *f;
	int err;

	if (!o->scope.depth)
		return orch_error(o, -EINVAL, "no open scope");
	f = &o->scope.frames[o->scope.depth - 1];
	err = orch_grow(o, ORCH_FP_SCOPE_REGISTER, s, (void **)&f->refs, &f->cap,
			f->n + 1, sizeof(*f->refs));
	if (err)
		return orch_error(o, err, "out of memory (scope registration)");
	f->refs[f->n].s = s;
	f->refs[f->n].tid = s->task_id;
	f->n++;
	s->scope_depth = (uint8_t)o->scope.depth;
	return 0;
}

void orch_scope_fini(struct pto_orch *o)
{
	uint32_t i;

	for (i = 0; i <= PTO_MAX_SCOPE_DEPTH; i++) {
		free(o->scope.frames[i].refs);
		o->scope.frames[i].refs = NULL;
		o->scope.frames[i].cap = 0;
	}
}
