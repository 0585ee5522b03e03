// SPDX-License-Identifier: MIT
/*
 * Translate an orchestrator task (its dispatch view) into a device payload.
 * Kept apart from the dispatch loop so a later capture step (args dump)
 * sees the same translation the core receives. A kernel finds its tensors
 * by position: inputs in order, then the output. Tags order tasks at
 * submit and never reach the core (an output tagged NO_DEP is written).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "sched/sched.h"

int sched_tensor_desc(const struct pto_arg_tensor *a,
		      struct pto_tensor_desc *t, char *msg, size_t len)
{
	const uint32_t esize = 4;	/* PTO_DTYPE_F32 and PTO_DTYPE_I32 */
	uint64_t stride = 1;
	int d;

	/* Submit refused it already (kernels_need_heap_space): a backstop. */
	if (a->t.space != PTO_SPACE_GM) {
		snprintf(msg, len, "tensor is not in device GM (space %u)",
			 a->t.space);
		return -EINVAL;
	}
	memset(t, 0, sizeof(*t));
	t->addr = a->t.obj + a->t.offset;
	t->dtype = a->t.dtype;
	if (!a->t.rank) {
		if (a->t.nbytes % esize || a->t.nbytes / esize > UINT32_MAX) {
			snprintf(msg, len, "tensor of %llu bytes is not a whole number of elements",
				 (unsigned long long)a->t.nbytes);
			return -EINVAL;
		}
		t->rank = 1;
		t->shape[0] = (uint32_t)(a->t.nbytes / esize);
		t->strides[0] = 1;
		return 0;
	}
	if (a->t.rank > PTO_TENSOR_MAX_RANK) {
		snprintf(msg, len, "tensor rank %u > %d", a->t.rank,
			 PTO_TENSOR_MAX_RANK);
		return -EINVAL;
	}
	/* Zero strides mean contiguous row-major; the core checks extents. */
	t->rank = a->t.rank;
	for (d = (int)a->t.rank - 1; d >= 0; d--) {
		t->shape[d] = a->t.shape[d];
		t->strides[d] = a->t.strides[d] ? a->t.strides[d] : stride;
		stride = t->strides[d] * (a->t.shape[d] ? a->t.shape[d] : 1);
	}
	return 0;
}

/* Zero the tensor slots in @mask (bits 1 << PTO_ARG_*). */
static void clear_slots(struct pto_payload *p, unsigned int mask)
{
	for (; mask; mask &= mask - 1)
		memset(&p->t[__builtin_ctz(mask)], 0, sizeof(p->t[0]));
}

int sched_build_payload(const struct orch_dispatch_view *v,
			struct pto_payload *p, uint8_t *dirty,
			char *msg, size_t len)
{
	unsigned int used = 0;
	uint32_t i, nin;
	int ret;

	/* A wider id would be truncated into another kernel's (or NOOP). */
	if (v->callable->kernel_id > UINT32_MAX) {
		snprintf(msg, len, "kernel id %llu is not a device kernel",
			 (unsigned long long)v->callable->kernel_id);
		return -EINVAL;
	}
	if (v->nscalars > 2) {
		snprintf(msg, len, "%u scalars: a device kernel takes at most 2",
			 v->nscalars);
		return -E2BIG;
	}
	/*
	 * The core wants every field it is not given zero (flags, reserved,
	 * unused tensor slots and dimensions). Rather than clearing all 256
	 * bytes per task (slow under TCG), every field outside the tensor
	 * slots is stored below, and a tensor slot is cleared only if an
	 * earlier task left a descriptor in it (@dirty). The core writes
	 * status, done_id and its start / end stamps, stored here too.
	 */
	p->func_id = (uint32_t)v->callable->kernel_id;
	p->flags = 0;
	p->status = 0;
	p->done_id = 0;
	p->start_ns = 0;
	p->end_ns = 0;
	p->scalar[0] = v->nscalars > 0 ? v->scalars[0] : 0;
	p->scalar[1] = v->nscalars > 1 ? v->scalars[1] : 0;
	/* An SPMD block, MIX block or group member is told which one it is. */
	p->block_idx = v->nmembers > 1 ? v->member : 0;
	p->block_num = v->nmembers > 1 ? v->nmembers : 0;
	memset(p->reserved, 0, sizeof(p->reserved));
	/* Their tensors only order tasks: none reach the core. */
	if (orch_kernel_tensorless(SCHED_TENSORLESS_KERNELS, p->func_id)) {
		clear_slots(p, *dirty);
		*dirty = 0;
		return 0;
	}
	/* After that: ordering-only tensors are not limited. */
	if (v->ntensors > PTO_PAYLOAD_TENSORS) {
		snprintf(msg, len, "%u tensors: a device kernel takes at most %d",
			 v->ntensors, PTO_PAYLOAD_TENSORS);
		return -E2BIG;
	}
	/*
	 * By position, whatever the tags: the last tensor is the output, the
	 * ones before it fill a and b in order. sched_tensor_desc() clears the
	 * slots it writes; marked before, as a failure may leave one half
	 * written.
	 */
	nin = v->ntensors ? v->ntensors - 1 : 0;
	used = ((1u << nin) - 1) | (v->ntensors ? 1u << PTO_ARG_OUT : 0);
	clear_slots(p, *dirty & ~used);
	*dirty = (uint8_t)used;
	for (i = 0; i < v->ntensors; i++) {
		int s = i + 1 == v->ntensors ? PTO_ARG_OUT : (int)i;

		ret = sched_tensor_desc(&v->tensors[i], &p->t[s], msg, len);
		if (ret)
			return ret;
	}
	return 0;
}
