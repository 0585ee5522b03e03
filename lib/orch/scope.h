/* SPDX-License-Identifier: MIT */
/* Scopes: the frames of slot references a scope end releases (scope.c). */
#ifndef PTO_ORCH_SCOPE_H
#define PTO_ORCH_SCOPE_H

#include <stdint.h>
#include <pto/orch.h>
#include "orch/slot.h"

struct orch_scope_frame {
	struct orch_slotref *refs;
	uint32_t n, cap;
};

struct orch_scope {
	struct orch_scope_frame frames[PTO_MAX_SCOPE_DEPTH + 1];
	uint32_t depth;		/* 1-based; 0 = no open scope */
};

int orch_scope_begin(struct pto_orch *o);
/* Pops the frame and releases one reference per registered slot. */
void orch_scope_end(struct pto_orch *o);
int orch_scope_register_slow(struct pto_orch *o, struct orch_slot *s);
/* orch_scope_register(): inline, after struct pto_orch. */
void orch_scope_fini(struct pto_orch *o);
static inline int orch_ring_for_depth(uint32_t depth)
{
	uint32_t cur = depth ? depth - 1 : 0;	/* 0-based current depth */

	return cur < PTO_MAX_RING_DEPTH - 1 ? (int)cur : PTO_MAX_RING_DEPTH - 1;
}

#endif
