// SPDX-License-Identifier: MIT
/*
 * Draining one dump lane's read-only mapping (Documentation/dump.md):
 * buffers in ready-queue order, their records in order, each payload
 * copied out of the circular arena. The kernel never rewrites a
 * published buffer before it is returned, nor a payload's bytes before
 * it is acknowledged, so what is copied is stable; the counts to
 * acknowledge are handed back to the caller.
 */
#include <errno.h>
#include <string.h>
#include "dump/lane.h"

/* The lane's numbering of the enums is the file's. */
_Static_assert(PTO_DUMP_ROLE_INPUT == DUMP_ROLE_INPUT &&
	       PTO_DUMP_ROLE_OUTPUT == DUMP_ROLE_OUTPUT &&
	       PTO_DUMP_ROLE_INOUT == DUMP_ROLE_INOUT, "roles");
_Static_assert(PTO_DUMP_BEFORE_DISPATCH == DUMP_BEFORE_DISPATCH &&
	       PTO_DUMP_AFTER_COMPLETION == DUMP_AFTER_COMPLETION, "stages");
_Static_assert(PTO_DUMP_KIND_TENSOR == DUMP_KIND_TENSOR &&
	       PTO_DUMP_KIND_SCALAR == DUMP_KIND_SCALAR, "kinds");
_Static_assert(PTO_DUMP_MAX_FUNCS == DUMP_MAX_FUNCS &&
	       PTO_DUMP_MAX_RANK == DUMP_MAX_RANK, "sizes");
_Static_assert(PTO_DUMP_FULL == DUMP_LEVEL_FULL &&
	       PTO_DUMP_HYBRID == DUMP_LEVEL_HYBRID, "levels");

static const struct pto_dump_state *state(const struct dump_lane_img *img)
{
	return (const struct pto_dump_state *)img->base;
}

/* Fields the kernel set at bind and does not change while it is bound. */
#define LD(p) __atomic_load_n(&(p), __ATOMIC_RELAXED)

int dump_lane_check(const struct dump_lane_img *img)
{
	const struct pto_dump_state *st = state(img);
	uint64_t meta_end;

	if (!img->base || img->size < PTO_DUMP_STATE_SIZE)
		return -EPROTO;
	meta_end = LD(st->meta_offset) +
		   (uint64_t)PTO_DUMP_META_BUFFERS * PTO_DUMP_BUFFER_SIZE;
	if (LD(st->magic) != PTO_DUMP_MAGIC || LD(st->version) != 1 ||
	    LD(st->meta_buffers) != PTO_DUMP_META_BUFFERS ||
	    LD(st->records_per_buffer) != PTO_DUMP_RECORDS ||
	    LD(st->record_size) != PTO_DUMP_RECORD_SIZE ||
	    LD(st->meta_offset) < PTO_DUMP_STATE_SIZE ||
	    meta_end > LD(st->arena_offset) || !LD(st->arena_size) ||
	    LD(st->arena_offset) > img->size ||
	    LD(st->arena_size) > img->size - LD(st->arena_offset))
		return -EPROTO;
	return 0;
}

bool dump_rec_from_lane(const struct pto_dump_record *r, struct dump_rec *out)
{
	unsigned int i, n = 0;

	if (r->role >= DUMP_ROLE_NR || r->stage >= DUMP_STAGE_NR ||
	    r->kind >= DUMP_KIND_NR || r->rank > DUMP_MAX_RANK ||
	    (r->kind == PTO_DUMP_KIND_SCALAR && (r->rank || r->payload_size)))
		return false;
	memset(out, 0, sizeof(*out));
	out->task_id = r->task_id;
	/* The subtasks are the ids up to the last one set; an unset one
	 * below it is a subtask whose function is not known. */
	for (i = 0; i < PTO_DUMP_MAX_FUNCS; i++)
		if (r->func_id[i] != PTO_DUMP_FUNC_NONE)
			n = i + 1;
	out->nfunc = n ? n : 1;
	for (i = 0; i < out->nfunc; i++)
		out->func_id[i] = r->func_id[i] <= INT32_MAX ?
				  (int32_t)r->func_id[i] : DUMP_FUNC_UNKNOWN;
	out->arg_index = r->arg_index;
	out->role = (uint8_t)r->role;
	out->stage = (uint8_t)r->stage;
	out->kind = (uint8_t)r->kind;
	out->dtype = r->dtype;
	out->rank = (uint8_t)r->rank;
	for (i = 0; i < r->rank; i++) {
		out->shape[i] = r->shape[i];
		out->strides[i] = r->strides[i];
	}
	out->start_offset = r->start_offset;
	if (r->kind == PTO_DUMP_KIND_SCALAR) {
		out->value = r->data;
		out->contiguous = true;
	} else {
		out->contiguous = r->flags & PTO_DUMP_REC_CONTIGUOUS;
		out->truncated = r->flags & PTO_DUMP_REC_TRUNCATED;
	}
	return true;
}

/* Payload bytes at arena position @at, gathered across the arena's end. */
static void copy_payload(const struct dump_lane_img *img, uint64_t at,
			 uint8_t *dst, size_t len)
{
	const struct pto_dump_state *st = state(img);
	const uint8_t *arena = img->base + LD(st->arena_offset);
	uint64_t size = LD(st->arena_size), off = at % size;
	size_t first = len < size - off ? len : (size_t)(size - off);

	memcpy(dst, arena + off, first);
	memcpy(dst + first, arena, len - first);
}

/* One published record into @s; false if it is malformed or there was
 * no memory for it (both make the accounting unknown). */
static bool take(const struct dump_lane_img *img,
		 const struct pto_dump_record *r, struct dump_set *s)
{
	const struct pto_dump_state *st = state(img);
	struct dump_rec d, *added;
	uint64_t size = LD(st->arena_size), w;
	uint8_t *dst;

	if (!dump_rec_from_lane(r, &d) || r->payload_size > size ||
	    dump_set_append(s, &d, r->payload_size, &added, &dst))
		return false;
	if (!r->payload_size)
		return true;
	copy_payload(img, r->data, dst, r->payload_size);
	/*
	 * Acknowledged back-pressure keeps the producer behind every payload
	 * not yet acknowledged, so this never fires on a working lane: it
	 * reports one whose committed position had passed the payload's
	 * first byte by a whole arena when the copy ended. The fence orders
	 * the copy's loads before the position's load.
	 */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	w = __atomic_load_n(&st->arena_write_pos, __ATOMIC_RELAXED);
	if (w > r->data + size)
		added->overwritten = true;
	return true;
}

int dump_lane_drain(const struct dump_lane_img *img, struct dump_lane_pos *pos,
		    struct dump_set *s, struct pto_dump_ack *ack)
{
	const struct pto_dump_state *st = state(img);
	uint64_t tail, n;
	int drained = 0;

	/* Acquire: pairs with the kernel's release store of ready_tail after
	 * it wrote the entry and the buffer's records. */
	tail = __atomic_load_n(&st->acct.ready_tail, __ATOMIC_ACQUIRE);
	if (tail < pos->buffers || tail - pos->buffers > PTO_DUMP_META_BUFFERS)
		return -EPROTO;
	for (n = pos->buffers; n < tail; n++) {
		uint32_t b = LD(st->ready[n % PTO_DUMP_META_BUFFERS]);
		uint32_t cnt = LD(st->ready_records[n % PTO_DUMP_META_BUFFERS]);
		const struct pto_dump_record *recs;
		uint32_t i;

		if (b >= PTO_DUMP_META_BUFFERS || cnt > PTO_DUMP_RECORDS)
			return -EPROTO;
		recs = (const struct pto_dump_record *)(img->base +
			LD(st->meta_offset) + (uint64_t)b * PTO_DUMP_BUFFER_SIZE);
		for (i = 0; i < cnt; i++) {
			struct pto_dump_record r;

			memcpy(&r, &recs[i], sizeof(r));
			/* Payloads are numbered in record order, each counted
			 * whether or not its record could be kept. */
			if (r.payload_size)
				pos->payloads++;
			if (take(img, &r, s))
				pos->records++;
			else
				pos->bad++;
		}
		pos->buffers = n + 1;
		drained++;
	}
	ack->flags = 0;
	ack->completed_payloads = pos->payloads;
	ack->returned_buffers = pos->buffers;
	return drained;
}
