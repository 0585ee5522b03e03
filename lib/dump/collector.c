// SPDX-License-Identifier: MIT
/*
 * The host collector: a thread that drains every lane of a device as
 * buffers are published and acknowledges each pass at once, so the
 * producer's back-pressure waits on the consumer only as long as a copy
 * takes. The set it fills is the thread's until the join, then the
 * finishing caller's: the join is the only synchronization it needs.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "dump/collector.h"

struct lane_state {
	struct dump_collector_lane l;
	struct dump_lane_pos pos;
	bool broken;			/* its mapping made no sense: not read again */
};

struct dump_collector {
	struct lane_state *lanes;
	uint32_t n;
	uint32_t poll_us;
	struct dump_lane_ops ops;
	struct dump_set set;
	bool unknown;
	int err;			/* the first failed ack or close */
	bool stop;			/* atomic: set by finish */
	pthread_t thread;
};

static void fail(struct dump_collector *c, int err)
{
	c->unknown = true;
	if (!c->err)
		c->err = err;
}

/* One pass over every lane: drain what is published, acknowledge it.
 * Returns the buffers drained. */
static unsigned int step(struct dump_collector *c)
{
	unsigned int total = 0;
	uint32_t i;

	for (i = 0; i < c->n; i++) {
		struct lane_state *ls = &c->lanes[i];
		struct pto_dump_ack ack = { .lane = ls->l.lane };
		int ret;

		if (ls->broken)
			continue;
		ret = dump_lane_drain(&ls->l.img, &ls->pos, &c->set, &ack);
		if (ret < 0) {
			ls->broken = true;
			fail(c, ret);
			continue;
		}
		if (!ret)
			continue;
		total += (unsigned int)ret;
		ret = c->ops.ack(c->ops.ctx, &ack);
		if (ret)
			fail(c, ret);
	}
	return total;
}

static void *run(void *arg)
{
	struct dump_collector *c = arg;
	struct timespec ts = { .tv_sec = c->poll_us / 1000000,
			       .tv_nsec = (long)(c->poll_us % 1000000) * 1000 };

	/* Acquire: pairs with finish's release store of stop. */
	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE))
		if (!step(c))
			nanosleep(&ts, NULL);
	return NULL;
}

int dump_collector_start(const struct dump_collector_lane *lanes, uint32_t n,
			 uint32_t level, const struct dump_lane_ops *ops,
			 uint32_t poll_us, struct dump_collector **out)
{
	struct dump_collector *c;
	uint32_t i;
	int ret;

	if (!n || level == DUMP_LEVEL_OFF || level >= DUMP_LEVEL_NR)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (dump_lane_check(&lanes[i].img))
			return -EPROTO;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->lanes = calloc(n, sizeof(*c->lanes));
	if (!c->lanes) {
		free(c);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		c->lanes[i].l = lanes[i];
	c->n = n;
	c->poll_us = poll_us ? poll_us : 1;
	c->ops = *ops;
	dump_set_init(&c->set, level);
	ret = -pthread_create(&c->thread, NULL, run, c);
	if (ret) {
		free(c->lanes);
		free(c);
		return ret;
	}
	*out = c;
	return 0;
}

/* The run's accounting from each lane's own counts, read after the last
 * drain: complete only if every lane's terminal closed and every record
 * it committed was drained. */
static void account(struct dump_collector *c)
{
	uint32_t i;

	for (i = 0; i < c->n; i++) {
		const struct lane_state *ls = &c->lanes[i];
		const struct pto_dump_state *st =
			(const struct pto_dump_state *)ls->l.img.base;

		/* Acquire: the counts below are the ones the kernel had when
		 * it closed the terminal. */
		if (__atomic_load_n(&st->state, __ATOMIC_ACQUIRE) !=
		    PTO_LANE_CLOSED || ls->broken || ls->pos.bad ||
		    __atomic_load_n(&st->acct.collected, __ATOMIC_RELAXED) !=
		    ls->pos.records)
			c->unknown = true;
		c->set.dropped += __atomic_load_n(&st->acct.dropped,
						  __ATOMIC_RELAXED);
	}
}

int dump_collector_finish(struct dump_collector *c, bool close,
			  struct dump_set *out)
{
	uint32_t i;
	int ret;

	/* Release: the thread's next load of stop ends its loop. */
	__atomic_store_n(&c->stop, true, __ATOMIC_RELEASE);
	pthread_join(c->thread, NULL);
	for (i = 0; close && i < c->n; i++) {
		ret = c->ops.close(c->ops.ctx, c->lanes[i].l.lane);
		if (ret)
			fail(c, ret);
	}
	/* A closed lane publishes its last buffers as earlier ones return. */
	while (step(c))
		;
	account(c);
	*out = c->set;
	out->unknown = out->unknown || c->unknown;
	ret = c->err;
	free(c->lanes);
	free(c);
	return ret;
}
