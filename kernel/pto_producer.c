// SPDX-License-Identifier: GPL-2.0-only
/*
 * pto - the resumable dump-lane producer.
 *
 * One open reservation per lane makes the two cursors coincide: the open
 * record is always the one at the buffer's count, and its arena bytes are
 * the last taken. So commit never publishes an unwritten record, abandon
 * rolls the write position back without leaking arena, and a buffer is
 * published only while no reservation is open.
 */

/*
 * The counters the consumer sees move only when a record is committed or
 * refused: a WouldBlock is not a record, so total == collected + dropped
 * survives any number of retries.
 */
#include <linux/bug.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/overflow.h>
#include <linux/string.h>
#include <kunit/visibility.h>
#include "pto_producer.h"
#include "pto_trace.h"

void pto_producer_init(struct pto_producer *p, void *mem, u64 arena_size,
		       u32 level)
{
	struct pto_dump_state *st = mem;
	u32 i;

	memset(p, 0, offsetof(struct pto_producer, pay_end));
	p->st = st;
	p->meta = (struct pto_dump_record *)((u8 *)mem + PTO_DUMP_META_OFFSET);
	p->arena = (u8 *)mem + PTO_DUMP_ARENA_OFFSET;
	p->arena_size = arena_size;
	p->level = level;
	p->cur = PTO_PRODUCER_NO_BUF;
	for (i = 0; i < PTO_DUMP_META_BUFFERS; i++)
		p->free[i] = i;
	p->free_tail = PTO_DUMP_META_BUFFERS;

	memset(st, 0, sizeof(*st));
	st->magic = PTO_DUMP_MAGIC;
	st->version = 1;
	st->level = level;
	st->state = PTO_LANE_BOUND;
	st->meta_buffers = PTO_DUMP_META_BUFFERS;
	st->records_per_buffer = PTO_DUMP_RECORDS;
	st->record_size = PTO_DUMP_RECORD_SIZE;
	st->meta_offset = PTO_DUMP_META_OFFSET;
	st->arena_offset = PTO_DUMP_ARENA_OFFSET;
	st->arena_size = arena_size;
	st->free_count = PTO_DUMP_META_BUFFERS;
}
EXPORT_SYMBOL_IF_KUNIT(pto_producer_init);

/* The largest payload: half the arena, whole elements. */
u64 pto_producer_clamp(const struct pto_producer *p)
{
	return p->arena_size / 2;
}
EXPORT_SYMBOL_IF_KUNIT(pto_producer_clamp);

/* Elements of @rec's view, or 0 on a bad rank, shape or overflow. */
static u64 pto_arg_numel(const struct pto_dump_record *rec)
{
	u64 n = 1;
	u32 d;

	if (rec->rank < 1 || rec->rank > PTO_DUMP_MAX_RANK)
		return 0;
	for (d = 0; d < rec->rank; d++)
		if (!rec->shape[d] || check_mul_overflow(n, (u64)rec->shape[d], &n))
			return 0;
	return n;
}

/* A record whose payload is @bytes long: one slot of the payload ring. */
static bool pto_arena_fits(const struct pto_producer *p, u64 bytes)
{
	if (!bytes)
		return true;
	if (p->committed - p->st->acct.completed_payloads >=
	    PTO_PRODUCER_MAX_PAYLOADS)
		return false;
	return p->arena_size - (p->head - p->tail) >= bytes;
}

static void pto_account_dropped(struct pto_producer *p)
{
	p->st->acct.dropped++;
	p->st->acct.total++;
}

static void pto_account_refused(struct pto_producer *p)
{
	p->refused++;
	pto_account_dropped(p);
}

/* A permanent refusal outside try_begin (the caller's own checks). */
void pto_producer_refuse(struct pto_producer *p)
{
	pto_account_refused(p);
}
EXPORT_SYMBOL_IF_KUNIT(pto_producer_refuse);

/*
 * Publish the buffer being filled, if it holds records. Never while a
 * reservation is open: its record is at count and unwritten.
 */
void pto_producer_publish(struct pto_producer *p)
{
	struct pto_dump_state *st = p->st;
	u64 n = st->acct.ready_tail;

	if (WARN_ON_ONCE(p->open) || p->cur == PTO_PRODUCER_NO_BUF)
		return;
	if (!p->count) {
		/* Nothing in it: it stays the buffer being filled. */
		return;
	}
	st->ready[n % PTO_DUMP_META_BUFFERS] = p->cur;
	st->ready_records[n % PTO_DUMP_META_BUFFERS] = p->count;
	st->acct.published_payloads += p->cur_payloads;
	/*
	 * Release: the records, the entry and published_payloads are visible
	 * before the new tail; pairs with the consumer's load-acquire of
	 * ready_tail (Documentation/dump.md).
	 */
	smp_store_release(&st->acct.ready_tail, n + 1);
	p->cur = PTO_PRODUCER_NO_BUF;
	p->count = 0;
	p->cur_payloads = 0;
}
EXPORT_SYMBOL_IF_KUNIT(pto_producer_publish);

/* A buffer to fill: the current one, or the free queue's next. */
static bool pto_take_buffer(struct pto_producer *p)
{
	if (p->cur != PTO_PRODUCER_NO_BUF)
		return true;
	if (p->free_head == p->free_tail)
		return false;
	p->cur = p->free[p->free_head % PTO_DUMP_META_BUFFERS];
	p->free_head++;
	p->st->free_count = p->free_tail - p->free_head;
	p->count = 0;
	p->cur_payloads = 0;
	return true;
}

/*
 * Accepted, WouldBlock or Refused, without waiting. A WouldBlock changes
 * no counter: at most it publishes the buffer being filled, so that the
 * consumer can free the payloads the arena is waiting for.
 */
enum pto_begin pto_producer_try_begin(struct pto_producer *p,
				      const struct pto_dump_arg *arg,
				      enum pto_begin_why *why)
{
	struct pto_reservation *r = &p->res;
	u64 numel = 0, bytes = 0;

	*why = PTO_WHY_NONE;
	if (p->open) {
		*why = PTO_WHY_OPEN;
		return PTO_BEGIN_WOULDBLOCK;
	}
	if (p->level == PTO_DUMP_OFF)
		*why = PTO_WHY_OFF;
	else if (p->stopped)
		*why = PTO_WHY_STOPPED;
	else if (arg->rec.kind == PTO_DUMP_KIND_TENSOR) {
		numel = pto_arg_numel(&arg->rec);
		if (!numel || !arg->esize ||
		    check_mul_overflow(numel, (u64)arg->esize, &bytes))
			*why = PTO_WHY_INVALID;
	}
	if (*why != PTO_WHY_NONE) {
		pto_account_refused(p);
		return PTO_BEGIN_REFUSED;
	}
	if (!pto_take_buffer(p)) {
		*why = PTO_WHY_NO_BUFFER;
		return PTO_BEGIN_WOULDBLOCK;
	}

	memset(r, 0, sizeof(*r));
	r->arg = *arg;
	if (arg->rec.kind == PTO_DUMP_KIND_TENSOR && arg->payload) {
		u64 clamp = pto_producer_clamp(p);

		clamp -= clamp % arg->esize;
		r->copy_bytes = min(bytes, clamp);
		r->truncated = bytes > clamp;
	}
	if (!pto_arena_fits(p, r->copy_bytes)) {
		if (p->cur_payloads)
			pto_producer_publish(p);
		*why = PTO_WHY_ARENA;
		return PTO_BEGIN_WOULDBLOCK;
	}
	r->buf = p->cur;
	r->index = p->count;
	r->pos = p->head;
	r->pre_pos = p->head;
	p->head += r->copy_bytes;
	p->open = true;
	trace_pto_lane_reserve(p, r);
	return PTO_BEGIN_ACCEPTED;
}
EXPORT_SYMBOL_IF_KUNIT(pto_producer_try_begin);

static void pto_arena_write(struct pto_producer *p, u64 pos, const u8 *src,
			    size_t n)
{
	u64 off = pos % p->arena_size;
	size_t first = min_t(u64, n, p->arena_size - off);

	if (p->copy) {
		p->copy(p->copy_priv, off, src, first);
		if (n > first)
			p->copy(p->copy_priv, 0, src + first, n - first);
		return;
	}
	memcpy(p->arena + off, src, first);
	if (n > first)
		memcpy(p->arena, src + first, n - first);
}

/*
 * Source address of byte @w of the view's logical (row-major) bytes, and
 * how many bytes from there are contiguous in the source: the rest of the
 * innermost row when its stride is 1, else the rest of the element.
 */
static const u8 *pto_gather_at(const struct pto_dump_arg *arg, u64 w,
			       u64 *run)
{
	const struct pto_dump_record *rec = &arg->rec;
	u64 e = w / arg->esize, b = w % arg->esize, off = rec->start_offset;
	u32 inner = rec->rank - 1, d = rec->rank;
	u64 idx_inner = 0;

	while (d--) {
		u64 idx = e % rec->shape[d];

		e /= rec->shape[d];
		off += idx * rec->strides[d];
		if (d == inner)
			idx_inner = idx;
	}
	if (rec->strides[inner] == 1)
		*run = (rec->shape[inner] - idx_inner) * arg->esize - b;
	else
		*run = arg->esize - b;
	return arg->src + off * arg->esize + b;
}

/*
 * Copy at most @max_bytes more of the open reservation's payload, resuming
 * from its cursor. Returns the bytes copied (0 once complete).
 */
u64 pto_producer_copy_chunk(struct pto_producer *p, u64 max_bytes)
{
	struct pto_reservation *r = &p->res;
	u64 done = 0;

	if (WARN_ON_ONCE(!p->open))
		return 0;
	while (done < max_bytes && r->written < r->copy_bytes) {
		u64 run, n;
		const u8 *src = pto_gather_at(&r->arg, r->written, &run);

		n = min3(run, max_bytes - done, r->copy_bytes - r->written);
		pto_arena_write(p, r->pos + r->written, src, n);
		r->written += n;
		done += n;
	}
	return done;
}
EXPORT_SYMBOL_IF_KUNIT(pto_producer_copy_chunk);

bool pto_producer_copied(const struct pto_producer *p)
{
	return p->open && p->res.written == p->res.copy_bytes;
}
EXPORT_SYMBOL_IF_KUNIT(pto_producer_copied);

/* Closing the buffer's last slot, committed or not, publishes it. */
static void pto_close_slot(struct pto_producer *p, u32 index)
{
	p->open = false;
	if (index == PTO_DUMP_RECORDS - 1)
		pto_producer_publish(p);
}

void pto_producer_commit(struct pto_producer *p)
{
	struct pto_reservation *r = &p->res;
	struct pto_dump_state *st = p->st;
	struct pto_dump_record *rec;

	if (WARN_ON_ONCE(!p->open || r->written != r->copy_bytes))
		return;
	rec = &p->meta[r->buf * PTO_DUMP_RECORDS + r->index];
	*rec = r->arg.rec;
	rec->flags &= ~(PTO_DUMP_REC_TRUNCATED | PTO_DUMP_REC_PAYLOAD);
	rec->pad = 0;
	if (r->arg.rec.kind == PTO_DUMP_KIND_TENSOR) {
		rec->data = r->pos;
		rec->payload_size = r->copy_bytes;
		if (r->copy_bytes)
			rec->flags |= PTO_DUMP_REC_PAYLOAD;
		if (r->truncated)
			rec->flags |= PTO_DUMP_REC_TRUNCATED;
	} else {
		rec->payload_size = 0;
	}
	if (r->copy_bytes) {
		p->pay_end[p->committed % PTO_PRODUCER_MAX_PAYLOADS] =
			r->pos + r->copy_bytes;
		p->committed++;
		p->cur_payloads++;
	}
	p->count++;
	st->acct.collected++;
	st->acct.total++;
	if (r->truncated)
		st->acct.truncated++;
	/*
	 * WRITE_ONCE: the consumer loads the position locklessly after
	 * copying a payload (an acquire fence orders its copy first) to
	 * report one overwritten; no ordering of ours is claimed, the
	 * payload's visibility is ready_tail's release at publish.
	 */
	WRITE_ONCE(st->arena_write_pos, p->head);
	trace_pto_lane_commit(p, r);
	pto_close_slot(p, r->index);
}
EXPORT_SYMBOL_IF_KUNIT(pto_producer_commit);

void pto_producer_abandon(struct pto_producer *p)
{
	struct pto_reservation *r = &p->res;

	if (WARN_ON_ONCE(!p->open))
		return;
	p->head = r->pre_pos;
	p->abandoned++;
	pto_account_dropped(p);
	trace_pto_lane_abandon(p, r);
	pto_close_slot(p, r->index);
}
EXPORT_SYMBOL_IF_KUNIT(pto_producer_abandon);

/*
 * The consumer's acknowledgement, absolute counts. Validated whole before
 * anything changes: below the current value or beyond what was published
 * is -EINVAL.
 */
int pto_producer_ack(struct pto_producer *p, u64 completed, u64 returned)
{
	struct pto_dump_state *st = p->st;

	if (completed < st->acct.completed_payloads ||
	    completed > st->acct.published_payloads ||
	    returned < st->acct.ready_head || returned > st->acct.ready_tail)
		return -EINVAL;
	while (st->acct.ready_head < returned) {
		p->free[p->free_tail % PTO_DUMP_META_BUFFERS] =
			st->ready[st->acct.ready_head % PTO_DUMP_META_BUFFERS];
		p->free_tail++;
		st->acct.ready_head++;
	}
	st->free_count = p->free_tail - p->free_head;
	if (completed > st->acct.completed_payloads) {
		p->tail = p->pay_end[(completed - 1) % PTO_PRODUCER_MAX_PAYLOADS];
		st->acct.completed_payloads = completed;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(pto_producer_ack);

/*
 * Stop the producer and close the terminal: only with no reservation
 * open (-EBUSY), publishing the last buffer.
 */
int pto_producer_close(struct pto_producer *p)
{
	if (p->open)
		return -EBUSY;
	p->stopped = true;
	pto_producer_publish(p);
	/*
	 * Release: the final counters are visible before the closed state;
	 * pairs with the collector's load-acquire of the state before it
	 * reads them (Documentation/dump.md).
	 */
	smp_store_release(&p->st->state, PTO_LANE_CLOSED);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(pto_producer_close);

int pto_producer_record(struct pto_producer *p, const struct pto_dump_arg *arg,
			const struct pto_producer_wait *w)
{
	enum pto_begin_why why;
	enum pto_begin got;
	int ret;

	for (;;) {
		w->lock(w->priv);
		got = pto_producer_try_begin(p, arg, &why);
		w->unlock(w->priv);
		if (got == PTO_BEGIN_ACCEPTED)
			break;
		if (got == PTO_BEGIN_REFUSED)
			return PTO_DUMP_RES_REFUSED;
		ret = w->wait(w->priv, why);
		if (ret) {
			/* Giving up drops the record: refused once. */
			w->lock(w->priv);
			pto_account_refused(p);
			w->unlock(w->priv);
			return ret;
		}
	}
	while (pto_producer_copy_chunk(p, w->max_bytes))
		if (w->chunk_done)
			w->chunk_done(w->priv);
	w->lock(w->priv);
	pto_producer_commit(p);
	w->unlock(w->priv);
	return PTO_DUMP_RES_COLLECTED;
}
EXPORT_SYMBOL_IF_KUNIT(pto_producer_record);
