/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pto - the resumable dump-lane producer (pto_producer.c): pure steps over
 * one lane's memory, no threads and no waiting, so tests drive any
 * interleaving. The blocking form is built on them with a wait callback.
 */
#ifndef _PTO_PRODUCER_H_
#define _PTO_PRODUCER_H_

#include <linux/types.h>
#include <linux/pto_dump.h>

/* Payloads committed and not yet acknowledged, at most (one per record). */
#define PTO_PRODUCER_MAX_PAYLOADS (PTO_DUMP_META_BUFFERS * PTO_DUMP_RECORDS)
#define PTO_PRODUCER_NO_BUF U32_MAX

enum pto_begin {
	PTO_BEGIN_ACCEPTED,
	PTO_BEGIN_WOULDBLOCK,	/* nothing reserved, nothing accounted */
	PTO_BEGIN_REFUSED,	/* one refused record accounted */
};

/* Why try_begin refused (permanent) or would block (transient). */
enum pto_begin_why {
	PTO_WHY_NONE,
	PTO_WHY_OFF,		/* level OFF */
	PTO_WHY_STOPPED,	/* producer stopped, terminal closed */
	PTO_WHY_INVALID,	/* a field of the argument */
	PTO_WHY_OPEN,		/* the lane's reservation is open */
	PTO_WHY_NO_BUFFER,	/* no free metadata buffer */
	PTO_WHY_ARENA,		/* arena bytes or payload slots not freed yet */
};

/**
 * struct pto_dump_arg - one argument to capture.
 * @rec: identity and view (task, func ids, index, role, stage, kind, dtype,
 *	rank, shape, strides, start offset; a scalar's value in @rec.data).
 * @src: kernel address of the buffer's element 0 (a tensor), the view's
 *	elements being at @src + (start_offset + sum idx * stride) * @esize.
 * @esize: bytes per element.
 * @payload: copy the tensor's bytes (else a record only).
 */
struct pto_dump_arg {
	struct pto_dump_record rec;
	const u8 *src;
	u32 esize;
	bool payload;
};

/**
 * struct pto_reservation - the lane's one open reservation.
 * @buf / @index: metadata buffer and record (always the buffer's count).
 * @pos / @pre_pos: payload position, and the write position before the
 *	reservation (the same: the open reservation's bytes are the last
 *	taken), to which abandon rolls back.
 * @copy_bytes: payload bytes reserved (clamped); @written: copied so far,
 *	the gather's cursor (element @written / esize, byte within it).
 */
struct pto_reservation {
	u32 buf;
	u32 index;
	u64 pos;
	u64 pre_pos;
	u64 copy_bytes;
	u64 written;
	bool truncated;
	struct pto_dump_arg arg;
};

/**
 * struct pto_producer - one lane's producer state. The caller serializes
 * try_begin, commit, abandon, publish, ack and close (pto_lane.lock);
 * copy_chunk touches only the reservation and its own arena bytes, which
 * nothing else reads or writes until commit, so it runs unlocked.
 * @st / @meta / @arena: the lane's shared memory (state block, buffers,
 *	arena); the consumer reads them.
 * @cur / @count: the buffer being filled and its records (the open
 *	record, if any, is at @count: reserved == @count + @open).
 * @cur_payloads: payloads committed into @cur, not yet published.
 * @head: write position, the open reservation included; @tail: position
 *	up to which payloads were acknowledged.
 * @committed: payloads committed since bind; @pay_end[i % MAX]: the end
 *	position of payload i, for the tail when it is acknowledged.
 * @free / @free_head / @free_tail: the free queue of buffer indices.
 * @dev / @lane: the lane's device and index, for the tracepoints.
 * @refused / @abandoned: the two kinds of dropped record (debugfs).
 * @copy / @copy_priv: KUnit's recording copy (NULL: memcpy).
 */
struct pto_producer {
	struct pto_dump_state *st;
	struct pto_dump_record *meta;
	u8 *arena;
	u64 arena_size;
	u32 level;
	u32 dev;
	u32 lane;
	bool open;
	bool stopped;
	u32 cur;
	u32 count;
	u32 cur_payloads;
	u64 head;
	u64 tail;
	u64 committed;
	u64 refused;
	u64 abandoned;
	u32 free[PTO_DUMP_META_BUFFERS];
	u64 free_head;
	u64 free_tail;
	struct pto_reservation res;
	void (*copy)(void *priv, u64 arena_off, const u8 *src, size_t n);
	void *copy_priv;
	u64 pay_end[PTO_PRODUCER_MAX_PAYLOADS];
};

void pto_producer_init(struct pto_producer *p, void *mem, u64 arena_size,
		       u32 level);
enum pto_begin pto_producer_try_begin(struct pto_producer *p,
				      const struct pto_dump_arg *arg,
				      enum pto_begin_why *why);
u64 pto_producer_copy_chunk(struct pto_producer *p, u64 max_bytes);
bool pto_producer_copied(const struct pto_producer *p);
void pto_producer_commit(struct pto_producer *p);
void pto_producer_abandon(struct pto_producer *p);
void pto_producer_refuse(struct pto_producer *p);
void pto_producer_publish(struct pto_producer *p);
int pto_producer_ack(struct pto_producer *p, u64 completed, u64 returned);
int pto_producer_close(struct pto_producer *p);
u64 pto_producer_clamp(const struct pto_producer *p);

/*
 * The blocking form: try_begin, waiting through @wait while it would
 * block; copy in chunks of @max_bytes (@wait is not called between them:
 * the caller's @chunk_done may reschedule); commit. @wait returns 0 to
 * retry or a negative errno to give up, which drops the record (one
 * refused record) and is returned. @lock / @unlock bracket the steps that
 * need the lane's lock.
 */
struct pto_producer_wait {
	int (*wait)(void *priv, enum pto_begin_why why);
	void (*lock)(void *priv);
	void (*unlock)(void *priv);
	void (*chunk_done)(void *priv);
	void *priv;
	u64 max_bytes;
};

int pto_producer_record(struct pto_producer *p, const struct pto_dump_arg *arg,
			const struct pto_producer_wait *w);

#endif /* _PTO_PRODUCER_H_ */
