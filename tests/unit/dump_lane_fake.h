/* SPDX-License-Identifier: MIT */
/*
 * A dump lane image in memory, laid out as <linux/pto_dump.h> maps it,
 * and a fake producer that publishes into it as the kernel does and
 * waits on the collector's acknowledgements (test_dump_collector.c,
 * tsan_dump_collector.c). Not kernel/pto_producer.c itself: that file's
 * tracepoints and plain (not WRITE_ONCE) stores into the mapped state
 * block would need user-space branches in the kernel source first.
 */
#ifndef PTO_TEST_DUMP_LANE_FAKE_H
#define PTO_TEST_DUMP_LANE_FAKE_H

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include "dump/collector.h"

#define ARENA 4096u

struct img {
	uint8_t *base;
	size_t size;
	uint32_t next;			/* metadata buffer to publish next */
};

static inline struct pto_dump_state *st(struct img *m)
{
	return (struct pto_dump_state *)m->base;
}

/* A bound lane's state block over @base (zeroed, PTO_DUMP_ARENA_OFFSET +
 * ARENA bytes). */
static inline void img_init(struct img *m, uint8_t *base)
{
	struct pto_dump_state *s;

	m->base = base;
	m->size = PTO_DUMP_ARENA_OFFSET + ARENA;
	m->next = 0;
	s = st(m);
	s->magic = PTO_DUMP_MAGIC;
	s->version = 1;
	s->level = PTO_DUMP_FULL;
	s->state = PTO_LANE_BOUND;
	s->meta_buffers = PTO_DUMP_META_BUFFERS;
	s->records_per_buffer = PTO_DUMP_RECORDS;
	s->record_size = PTO_DUMP_RECORD_SIZE;
	s->meta_offset = PTO_DUMP_META_OFFSET;
	s->arena_offset = PTO_DUMP_ARENA_OFFSET;
	s->arena_size = ARENA;
}

static inline int img_make(struct img *m)
{
	uint8_t *base = calloc(1, PTO_DUMP_ARENA_OFFSET + ARENA);

	if (!base)
		return -1;
	img_init(m, base);
	return 0;
}

static inline struct dump_lane_img view(struct img *m)
{
	return (struct dump_lane_img){ m->base, m->size };
}

/* A payload at the producer's position (wrapping); returns the position. */
static inline uint64_t put_payload(struct img *m, const void *p,
				   uint32_t len)
{
	uint8_t *arena = m->base + PTO_DUMP_ARENA_OFFSET;
	uint64_t pos = st(m)->arena_write_pos;
	uint32_t i;

	for (i = 0; i < len; i++)
		arena[(pos + i) % ARENA] = ((const uint8_t *)p)[i];
	__atomic_store_n(&st(m)->arena_write_pos, pos + len, __ATOMIC_RELEASE);
	return pos;
}

/* Publishes @n records as the next buffer, as the kernel does: records,
 * then the ready entry, then ready_tail with release. */
static inline void publish(struct img *m, const struct pto_dump_record *r,
			   uint32_t n)
{
	struct pto_dump_state *s = st(m);
	struct pto_dump_acct *a = &s->acct;
	uint64_t tail = a->ready_tail;
	uint32_t b = m->next++ % PTO_DUMP_META_BUFFERS, i, pay = 0;

	memcpy(m->base + PTO_DUMP_META_OFFSET + b * PTO_DUMP_BUFFER_SIZE, r,
	       n * sizeof(*r));
	for (i = 0; i < n; i++)
		pay += r[i].payload_size != 0;
	s->ready[tail % PTO_DUMP_META_BUFFERS] = b;
	s->ready_records[tail % PTO_DUMP_META_BUFFERS] = n;
	__atomic_store_n(&a->collected, a->collected + n, __ATOMIC_RELAXED);
	__atomic_store_n(&a->total, a->total + n, __ATOMIC_RELAXED);
	__atomic_store_n(&a->published_payloads, a->published_payloads + pay,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&a->ready_tail, tail + 1, __ATOMIC_RELEASE);
}

static inline struct pto_dump_record rec(uint64_t task, uint32_t arg,
					 uint32_t role, uint32_t stage)
{
	struct pto_dump_record r = { .task_id = task, .arg_index = arg,
				     .role = role, .stage = stage,
				     .kind = PTO_DUMP_KIND_TENSOR,
				     .dtype = PTO_DTYPE_F32 };

	r.func_id[0] = PTO_FUNC_ADD;
	r.func_id[1] = r.func_id[2] = PTO_DUMP_FUNC_NONE;
	return r;
}

static inline struct pto_dump_record tensor1(struct img *m, uint64_t task,
					     uint32_t arg, uint32_t role,
					     uint32_t stage, const float *v,
					     uint32_t n)
{
	struct pto_dump_record r = rec(task, arg, role, stage);

	r.rank = 1;
	r.shape[0] = n;
	r.strides[0] = 1;
	r.flags = PTO_DUMP_REC_CONTIGUOUS | PTO_DUMP_REC_PAYLOAD;
	r.payload_size = n * 4;
	r.data = put_payload(m, v, n * 4);
	return r;
}

#define NBUF 40			/* buffers the producer publishes */

struct fake {
	struct img m;
	unsigned int seed;
	uint64_t task0;			/* the producer's first task id */
	uint64_t acked_buffers;		/* atomic: the last ack's counts */
	uint64_t acked_payloads;
	int bad_acks;			/* atomic: below the last or beyond */
	int closed;			/* atomic */
	bool hide_one;			/* commit a record it never publishes */
};

static inline int fake_ack(void *ctx, const struct pto_dump_ack *a)
{
	struct fake *f = ctx;
	struct pto_dump_state *s = st(&f->m);

	/* As the kernel: absolute, never back, never beyond publication. */
	if (a->returned_buffers < f->acked_buffers ||
	    a->returned_buffers > __atomic_load_n(&s->acct.ready_tail,
						  __ATOMIC_ACQUIRE) ||
	    a->completed_payloads < f->acked_payloads ||
	    a->completed_payloads >
	    __atomic_load_n(&s->acct.published_payloads, __ATOMIC_RELAXED)) {
		__atomic_add_fetch(&f->bad_acks, 1, __ATOMIC_RELAXED);
		return -EINVAL;
	}
	__atomic_store_n(&f->acked_payloads, a->completed_payloads,
			 __ATOMIC_RELEASE);
	__atomic_store_n(&f->acked_buffers, a->returned_buffers,
			 __ATOMIC_RELEASE);
	return 0;
}

static inline int fake_close(void *ctx, uint32_t lane)
{
	struct fake *f = ctx;

	if (f->hide_one)
		st(&f->m)->acct.collected++;
	__atomic_store_n(&st(&f->m)->state, PTO_LANE_CLOSED, __ATOMIC_RELEASE);
	__atomic_store_n(&f->closed, 1, __ATOMIC_RELAXED);
	return 0;
}

/* Buffers of 1..4 records of 1..64 floats each (at most 1 KiB), value =
 * its position in the stream. At most three buffers are unacknowledged
 * when the next one's payloads are written, so they never reach bytes
 * the consumer has not acknowledged (the kernel's back-pressure). */
static inline void *producer(void *arg)
{
	struct fake *f = arg;
	unsigned int seed = f->seed;
	uint64_t k = 0;
	int b;

	for (b = 0; b < NBUF; b++) {
		struct pto_dump_record r[4];
		uint32_t n = 1 + rand_r(&seed) % 4, i;
		float v[64];

		while (st(&f->m)->acct.ready_tail -
		       __atomic_load_n(&f->acked_buffers, __ATOMIC_ACQUIRE) >= 3)
			sched_yield();
		for (i = 0; i < n; i++) {
			uint32_t len = 1 + rand_r(&seed) % 64, j;

			for (j = 0; j < len; j++)
				v[j] = (float)k++;
			r[i] = tensor1(&f->m, f->task0 + (uint64_t)b, i,
				       PTO_DUMP_ROLE_OUTPUT,
				       PTO_DUMP_AFTER_COMPLETION, v, len);
		}
		publish(&f->m, r, n);
	}
	return NULL;
}

static inline int run_collector(struct fake *f, bool close,
				struct dump_set *out)
{
	const struct dump_lane_ops ops = { fake_ack, fake_close, f };
	struct dump_collector_lane l = { 0, view(&f->m) };
	struct dump_collector *c;
	pthread_t p;
	int ret;

	ret = dump_collector_start(&l, 1, DUMP_LEVEL_FULL, &ops, 50, &c);
	if (ret)
		return ret;
	pthread_create(&p, NULL, producer, f);
	pthread_join(p, NULL);
	return dump_collector_finish(c, close, out);
}

/* Every payload copied exactly once, in stream order. */
static inline void check_stream(struct __test_metadata *_metadata,
				const struct dump_set *s)
{
	const float *v = (const float *)s->bin;
	size_t i;

	ASSERT_EQ(0u, s->bin_len % 4);
	for (i = 0; i < s->bin_len / 4; i++)
		ASSERT_EQ((float)i, v[i]) TH_LOG("element %zu", i);
}

#endif /* PTO_TEST_DUMP_LANE_FAKE_H */
