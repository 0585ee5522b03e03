// SPDX-License-Identifier: GPL-2.0
/*
 * pto-fuzz's operations on dump lanes (<linux/pto_dump.h>): bind, capture
 * of own, unknown, straddling and strided extents, ack, close, unbind and
 * status, one table entry each (fz_ops[], fuzz_table.c). Lanes are shared
 * by the actors: a lane another actor binds is only ever -EBUSY here, and
 * the conductor checks the lanes' owners against the models (debugfs).
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/pto_dump.h>
#include "fuzz_actor.h"

static const int fz_err_lane[] = { EINVAL, EPERM, ENOENT, EFAULT, EBUSY, EPIPE,
			    ETIMEDOUT, EINTR, ENOMEM, EOPNOTSUPP, 0 };

static unsigned int fz_nlanes(const struct fz_actor *a)
{
	return a->info.lanes < FZ_MAX_LANES ? a->info.lanes : FZ_MAX_LANES;
}

/* A lane the actor binds (@bound) or not, or -1. */
static int fz_pick_lane(struct fz_actor *a, int bound)
{
	unsigned int n = 0, i, pick[FZ_MAX_LANES];

	for (i = 0; i < fz_nlanes(a); i++)
		if (!!(a->lanes & (1u << i)) == bound)
			pick[n++] = i;
	return n ? (int)pick[fz_below(a, n)] : -1;
}

/* The producer stopped: the buffers lane @l read are let go. */
static void fz_lane_let_go(struct fz_actor *a, unsigned int l)
{
	int i;

	for (i = a->nbo - 1; i >= 0; i--) {
		struct fz_bo *b = &a->bo[i];

		b->held &= ~(1u << l);
		if (!b->live && !b->map && !b->held)
			fz_bo_forget(a, b);
	}
}

static int fz_status(struct fz_actor *a, unsigned int l,
		     struct pto_dump_status *s)
{
	memset(s, 0, sizeof(*s));
	s->lane = l;
	return fz_ioctl(a, "DUMP_STATUS", PTO_IOCTL_DUMP_STATUS, s, 0,
			fz_err_lane);
}

/* DUMP_STATUS of lane @l against the model. */
static int fz_lane_check(struct fz_actor *a, unsigned int l)
{
	struct pto_dump_status s;
	int mine = !!(a->lanes & (1u << l));

	if (fz_status(a, l, &s))
		return -1;
	if (s.pad || s.pad1)
		fz_bad(a, "lane %u: DUMP_STATUS padding %u %u", l, s.pad,
		       s.pad1);
	if (mine && ((int)s.owner != a->pid || s.level != a->lane_level[l] ||
		     s.state != ((a->lane_closed & (1u << l)) ?
				 PTO_LANE_CLOSED : PTO_LANE_BOUND)))
		fz_bad(a, "lane %u: owner %u level %u state %u, the model binds it (pid %d level %u closed %d)",
		       l, s.owner, s.level, s.state, (int)a->pid,
		       a->lane_level[l], !!(a->lane_closed & (1u << l)));
	if (!mine && (int)s.owner == a->pid && s.state != PTO_LANE_QUARANTINED)
		fz_bad(a, "lane %u: owned by this actor (state %u), not in its model",
		       l, s.state);
	if (s.acct.total != s.acct.collected + s.acct.dropped ||
	    s.acct.completed_payloads > s.acct.published_payloads ||
	    s.acct.ready_head > s.acct.ready_tail)
		fz_bad(a, "lane %u: accounting total %llu collected %llu dropped %llu completed %llu published %llu",
		       l, (unsigned long long)s.acct.total,
		       (unsigned long long)s.acct.collected,
		       (unsigned long long)s.acct.dropped,
		       (unsigned long long)s.acct.completed_payloads,
		       (unsigned long long)s.acct.published_payloads);
	return 0;
}

static int fz_bind(struct fz_actor *a, int l, int defects)
{
	struct pto_dump_bind b = { 0 };
	int expect = FZ_ANY;
	void *m;

	b.lane = (uint32_t)l;
	/* Mostly levels that collect something. */
	b.level = fz_below(a, 2) ? PTO_DUMP_FULL :
		  (uint32_t)fz_below(a, PTO_DUMP_LEVEL_MAX + 1);
	switch (defects ? fz_below(a, 10) : 9) {
	case 0:
		b.lane = a->info.lanes + (uint32_t)fz_below(a, 64);
		expect = -EINVAL;
		break;
	case 1:
		b.level = PTO_DUMP_LEVEL_MAX + 1 + (uint32_t)fz_below(a, 1000);
		expect = -EINVAL;
		break;
	case 2:
		b.flags = 1ull << fz_below(a, 64);
		expect = -EINVAL;
		break;
	default:
		/* Another actor's, or quarantined with a producer: -EBUSY. */
		if (a->lanes & (1u << l))
			expect = -EBUSY;
	}
	if (fz_ioctl(a, "DUMP_BIND", PTO_IOCTL_DUMP_BIND, &b, expect,
		     fz_err_lane)) {
		if (expect == FZ_ANY)
			fz_lane_check(a, (unsigned int)l);
		return 0;
	}
	if (expect != FZ_ANY)
		return 0;
	a->rep->ev[FZ_EV_LANE_BOUND]++;
	a->lanes |= 1u << l;
	a->lane_closed &= ~(1u << l);
	a->lane_level[l] = b.level;
	if (b.mmap_offset != PTO_DUMP_MMAP_OFFSET(l) || !b.arena_size ||
	    b.mmap_size != PTO_DUMP_ARENA_OFFSET + b.arena_size)
		fz_bad(a, "DUMP_BIND lane %d: offset 0x%llx size %llu arena %llu",
		       l, (unsigned long long)b.mmap_offset,
		       (unsigned long long)b.mmap_size,
		       (unsigned long long)b.arena_size);
	if (fz_below(a, 4) == 0) {
		const struct pto_dump_state *st;

		/* Read-only: a writable mapping is refused. */
		m = mmap(NULL, b.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 a->fd, (off_t)b.mmap_offset);
		if (m != MAP_FAILED) {
			fz_bad(a, "lane %d mapped writable", l);
			munmap(m, b.mmap_size);
		}
		m = fz_mmap(a, "lane map", b.mmap_size, PROT_READ, MAP_SHARED,
			    b.mmap_offset, 0);
		st = m;
		if (st && (st->magic != PTO_DUMP_MAGIC ||
			   st->level != b.level ||
			   st->state != PTO_LANE_BOUND ||
			   st->acct.total || st->arena_size != b.arena_size))
			fz_bad(a, "lane %d: fresh state block magic 0x%x level %u state %u total %llu",
			       l, st->magic, st->level, st->state,
			       (unsigned long long)st->acct.total);
		if (m)
			munmap(m, b.mmap_size);
	}
	return fz_lane_check(a, (unsigned int)l);
}

int op_bind(struct fz_actor *a)
{
	if (!fz_nlanes(a))
		return 0;
	return fz_bind(a, (int)fz_below(a, fz_nlanes(a)), 1);
}

/* Would the kernel find the view inside @size bytes? (pto_lane.c) */
static int fz_inside(const struct pto_dump_capture *c, uint64_t size)
{
	uint64_t last = c->start_offset, t, end;
	uint32_t d;

	for (d = 0; d < c->rank; d++)
		if (__builtin_mul_overflow((uint64_t)c->shape[d] - 1,
					   c->strides[d], &t) ||
		    __builtin_add_overflow(last, t, &last))
			return 0;
	if (__builtin_add_overflow(last, 1ull, &last) ||
	    __builtin_mul_overflow(last, 4ull, &end) ||
	    __builtin_add_overflow(end, c->bo_offset, &end))
		return 0;
	return end <= size;
}

int op_capture(struct fz_actor *a)
{
	struct pto_dump_capture c = { 0 };
	struct fz_bo *b = fz_pick_bo(a, -1, 1, -1);
	int l = fz_pick_lane(a, 1), expect, marked, d, ret;
	uint64_t span;

	if (l < 0 && fz_below(a, 3)) {
		/* Mostly captures that reach a lane: bind a free one first. */
		l = fz_pick_lane(a, 0);
		if (l >= 0)
			fz_bind(a, l, 0);
		l = fz_pick_lane(a, 1);
	}
	if (l < 0 || fz_below(a, 12) == 0) {
		/* Not this file's lane. */
		l = fz_pick_lane(a, 0);
		if (l < 0)
			return 0;
		c.lane = (uint32_t)l;
		c.kind = PTO_DUMP_KIND_SCALAR;
		c.dtype = PTO_DTYPE_I32;
		c.value = 1;
		fz_ioctl(a, "DUMP_CAPTURE (not owned)", PTO_IOCTL_DUMP_CAPTURE,
			 &c, -EPERM, fz_err_lane);
		return 0;
	}
	c.lane = (uint32_t)l;
	c.task_id = fz_rnd(&a->rng);
	c.run_id = fz_below(a, 4);
	c.arg_index = (uint32_t)fz_below(a, 3);
	c.role = (uint32_t)fz_below(a, 3);
	c.stage = (uint32_t)fz_below(a, 2);
	c.dtype = fz_below(a, 2) ? PTO_DTYPE_I32 : PTO_DTYPE_F32;
	for (d = 0; d < PTO_DUMP_MAX_FUNCS; d++)
		c.func_id[d] = d ? PTO_DUMP_FUNC_NONE : (uint32_t)fz_below(a, 14);
	marked = (int)fz_below(a, 2);
	c.flags = marked ? PTO_DUMP_CAP_MARKED : 0;
	c.timeout_ns = fz_now() + 2000000;	/* back-pressure: give up */
	if (!b || fz_below(a, 8) == 0) {
		c.kind = PTO_DUMP_KIND_SCALAR;
		c.value = fz_rnd(&a->rng);
		b = NULL;
	} else {
		c.handle = b->handle;
		c.rank = 1 + (uint32_t)fz_below(a, 2);
		for (d = 0; d < (int)c.rank; d++) {
			c.shape[d] = 1 + (uint32_t)fz_below(a, 64);
			c.strides[d] = d == (int)c.rank - 1 ? 1 :
				       c.shape[d + 1] + fz_below(a, 8);
		}
		span = b->size / 4;
		switch (fz_below(a, 8)) {
		case 0:		/* straddles the buffer's end */
			c.bo_offset = (b->size - 4 * fz_below(a, 16)) & ~3ull;
			break;
		case 1:		/* strided far out, or into the next buffer */
			c.strides[0] = span / c.shape[0] + fz_below(a, span);
			break;
		case 2:		/* an overflowing stride */
			c.strides[0] = ~0ull / 2 + fz_below(a, 1000);
			c.shape[0] |= 2;
			break;
		default:
			c.bo_offset = 4 * fz_below(a, span / 2);
			c.start_offset = fz_below(a, 16);
		}
	}
	switch (fz_below(a, 24)) {
	case 0:
		c.pad = 1;
		break;
	case 1:
		c.flags |= 2ull << fz_below(a, 63);
		break;
	case 2:
		c.dtype = 3 + (uint32_t)fz_below(a, 100);
		break;
	case 3:
		if (b)
			c.rank = PTO_DUMP_MAX_RANK + 1;
		else
			c.rank = 1;
		break;
	case 4:
		if (b) {
			/* A handle the file never had (handles are cyclic). */
			c.handle = 0x70000 + (uint32_t)fz_below(a, 0x1000);
			fz_ioctl(a, "DUMP_CAPTURE (no such handle)",
				       PTO_IOCTL_DUMP_CAPTURE, &c, -ENOENT,
				       fz_err_lane);
			return 0;
		}
		goto valid;
	default:
		goto valid;
	}
	fz_ioctl(a, "DUMP_CAPTURE (invalid)", PTO_IOCTL_DUMP_CAPTURE, &c,
		 -EINVAL, fz_err_lane);
	return 0;
valid:
	if (a->lane_closed & (1u << l))
		expect = -EPIPE;
	else if (a->lane_level[l] == PTO_DUMP_PARTIAL && !marked)
		expect = 0;
	else if (b && !fz_inside(&c, b->size))
		expect = -EFAULT;
	else
		expect = FZ_ANY;	/* 0, or -ETIMEDOUT under back-pressure */
	ret = fz_ioctl(a, "DUMP_CAPTURE", PTO_IOCTL_DUMP_CAPTURE, &c, expect,
		       fz_err_lane);
	if (expect == FZ_ANY && ret && ret != -ETIMEDOUT)
		fz_bad(a, "DUMP_CAPTURE lane %d: %d, the model expects 0 or -ETIMEDOUT",
		       l, ret);
	if (expect == FZ_ANY && b)
		b->held |= 1u << l;	/* until the producer stops */
	if (!ret && (c.result > PTO_DUMP_RES_REFUSED ||
		     (expect == 0 && c.result != PTO_DUMP_RES_SKIPPED)))
		fz_bad(a, "DUMP_CAPTURE lane %d: result %u", l, c.result);
	if (ret == -EFAULT)
		a->rep->ev[FZ_EV_CAPTURE_DENIED]++;
	if (!ret && c.result == PTO_DUMP_RES_COLLECTED)
		a->rep->ev[FZ_EV_CAPTURED]++;
	return 0;
}

int op_ack(struct fz_actor *a)
{
	struct pto_dump_ack k = { 0 };
	struct pto_dump_status s;
	int l = fz_pick_lane(a, 1), expect = 0;

	if (l < 0 || fz_status(a, (unsigned int)l, &s))
		return 0;
	k.lane = (uint32_t)l;
	k.completed_payloads = s.acct.completed_payloads +
		fz_below(a, s.acct.published_payloads -
			    s.acct.completed_payloads + 1);
	k.returned_buffers = s.acct.ready_head +
		fz_below(a, s.acct.ready_tail - s.acct.ready_head + 1);
	switch (fz_below(a, 6)) {
	case 0:		/* more than was published */
		k.completed_payloads = s.acct.published_payloads + 1 +
				       fz_below(a, 1000);
		expect = -EINVAL;
		break;
	case 1:
		k.returned_buffers = s.acct.ready_tail + 1 + fz_below(a, 8);
		expect = -EINVAL;
		break;
	case 2:
		if (!s.acct.completed_payloads)
			break;
		k.completed_payloads = s.acct.completed_payloads - 1;
		expect = -EINVAL;
		break;
	case 3:
		k.flags = 1u << fz_below(a, 32);
		expect = -EINVAL;
		break;
	}
	if (fz_ioctl(a, "DUMP_ACK", PTO_IOCTL_DUMP_ACK, &k, expect,
		     fz_err_lane) || expect)
		return fz_lane_check(a, (unsigned int)l);
	if (fz_status(a, (unsigned int)l, &s))
		return 0;
	if (s.acct.completed_payloads != k.completed_payloads ||
	    s.acct.ready_head != k.returned_buffers)
		fz_bad(a, "lane %d: acked %llu / %llu, status %llu / %llu", l,
		       (unsigned long long)k.completed_payloads,
		       (unsigned long long)k.returned_buffers,
		       (unsigned long long)s.acct.completed_payloads,
		       (unsigned long long)s.acct.ready_head);
	return 0;
}

static int fz_lane_end(struct fz_actor *a, unsigned long req,
		       const char *what, int unbind)
{
	struct pto_dump_lane d = { 0 };
	int l = fz_pick_lane(a, 1), expect = 0;

	if (l < 0 || fz_below(a, 10) == 0) {
		l = fz_pick_lane(a, 0);
		if (l < 0)
			return 0;
		d.lane = (uint32_t)l;
		fz_ioctl(a, what, req, &d, -EPERM, fz_err_lane);
		return 0;
	}
	d.lane = (uint32_t)l;
	if (fz_below(a, 8) == 0) {
		d.flags = 1u << fz_below(a, 32);
		expect = -EINVAL;
	} else if (!unbind && (a->lane_closed & (1u << l))) {
		expect = FZ_ANY;	/* closing twice */
	}
	if (fz_ioctl(a, what, req, &d, expect, fz_err_lane) || expect)
		return 0;
	fz_lane_let_go(a, (unsigned int)l);
	if (unbind)
		a->lanes &= ~(1u << l);
	else
		a->lane_closed |= 1u << l;
	return fz_lane_check(a, (unsigned int)l);
}

int op_dclose(struct fz_actor *a)
{
	return fz_lane_end(a, PTO_IOCTL_DUMP_CLOSE, "DUMP_CLOSE", 0);
}

int op_unbind(struct fz_actor *a)
{
	return fz_lane_end(a, PTO_IOCTL_DUMP_UNBIND, "DUMP_UNBIND", 1);
}

int op_dstatus(struct fz_actor *a)
{
	struct pto_dump_status s = { 0 };

	if (!fz_nlanes(a))
		return 0;
	switch (fz_below(a, 6)) {
	case 0:
		s.lane = a->info.lanes + (uint32_t)fz_below(a, 1u << 31);
		fz_ioctl(a, "DUMP_STATUS (no such lane)", PTO_IOCTL_DUMP_STATUS,
			 &s, -EINVAL, fz_err_lane);
		return 0;
	case 1:
		s.flags = 1u << fz_below(a, 32);
		fz_ioctl(a, "DUMP_STATUS (flags)", PTO_IOCTL_DUMP_STATUS, &s,
			 -EINVAL, fz_err_lane);
		return 0;
	}
	return fz_lane_check(a, (unsigned int)fz_below(a, fz_nlanes(a)));
}

/*
 * The resident route has no args capture: a graph launch is refused
 * while the file holds a lane bound (not closed) above OFF.
 */
static int fz_lane_dumping(const struct fz_actor *a, unsigned int l)
{
	return (a->lanes & ~a->lane_closed) & (1u << l) &&
	       a->lane_level[l] != PTO_DUMP_OFF;
}

int fz_lanes_dumping(const struct fz_actor *a)
{
	unsigned int l;

	for (l = 0; l < fz_nlanes(a); l++)
		if (fz_lane_dumping(a, l))
			return 1;
	return 0;
}

/* Close each such lane, so that a graph may run. */
void fz_lanes_close_dumping(struct fz_actor *a)
{
	unsigned int l;

	for (l = 0; l < fz_nlanes(a); l++) {
		struct pto_dump_lane d = { .lane = l };

		if (!fz_lane_dumping(a, l))
			continue;
		if (fz_ioctl(a, "DUMP_CLOSE (graph)", PTO_IOCTL_DUMP_CLOSE, &d,
			     0, fz_err_lane))
			continue;
		fz_lane_let_go(a, l);
		a->lane_closed |= 1u << l;
	}
}
