// SPDX-License-Identifier: GPL-2.0-only
/*
 * pto - the args-capture rendezvous of the resident route, as steps.
 *
 * A core's step never waits: it reads or writes a bounded number of words
 * and says what happened (enum pto_cs_step); the caller loops, and its
 * budgets call pto_cs_expire(). Slot words are touched only by single
 * 64-bit atomics (atomic64_*); request and acknowledgement lines each have
 * one writer and end in a release store the reader loads with acquire.
 * The transition table is Documentation/capture.md's.
 */
#include <linux/bitops.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/pto_dump.h>
#include <linux/pto_graph.h>
#include <linux/slab.h>
#include <kunit/visibility.h>
#include "pto_capture_slot.h"

bool pto_cs_task_marked(const struct pto_graph_task *t, u32 level)
{
	unsigned int i;

	if (level == PTO_DUMP_OFF)
		return false;
	if (level != PTO_DUMP_PARTIAL)
		return true;
	/* From the task's metadata only, so every participant decides alike. */
	if (t->flags & PTO_GRAPH_TASK_DUMP_SCALARS)
		return true;
	for (i = 0; i < PTO_PAYLOAD_TENSORS; i++)
		if (t->t[i].flags & PTO_GRAPH_ARG_DUMP)
			return true;
	return false;
}
EXPORT_SYMBOL_IF_KUNIT(pto_cs_task_marked);

int pto_cs_part_init(struct pto_capture_part *p, struct pto_capture_area *a,
		      u32 slot_index, u64 run_epoch, u64 task_id, u32 core,
		      u32 bit, u32 mask, u32 *seq)
{
	if (slot_index >= a->nslots || core >= a->ncores || !mask ||
	    hweight32(bit) != 1 || !(bit & mask))
		return -EINVAL;
	*p = (struct pto_capture_part){
		.area = a, .slot = &a->slots[slot_index],
		.slot_index = slot_index, .run_epoch = run_epoch,
		.task_id = task_id, .core = core, .bit = bit, .mask = mask,
		.seq = seq,
	};
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(pto_cs_part_init);

/* The claim word as this participant must find it while inside: READY|occ. */
static bool pto_cs_still_ready(struct pto_capture_part *p)
{
	/*
	 * Acquire: pairs with the claimer's release of READY (pto_cs_ready),
	 * so the words it zeroed are seen zeroed; any other value (another
	 * occupancy, or a state this core cannot see while inside) is fatal.
	 */
	return atomic64_read_acquire(&p->slot->claim) ==
	       PTO_CS_CLAIM(PTO_CS_READY, p->occ);
}

/*
 * Claim, or learn the occupancy to join. Only FREE or SETTLED (of an
 * occupancy this core did not join) are source states; CLAIMING and READY
 * never are, so a late core cannot re-enter and re-clear the words.
 */
enum pto_cs_step pto_cs_claim(struct pto_capture_part *p)
{
	/*
	 * Acquire: pairs with the release of READY (pto_cs_ready) and of
	 * SETTLED (pto_cs_release): a core that sees SETTLED|m sees every
	 * departure of occupancy m before it claims m + 1.
	 */
	return pto_cs_claim_from(p, atomic64_read_acquire(&p->slot->claim));
}
EXPORT_SYMBOL_IF_KUNIT(pto_cs_claim);

/* The claim on an observed word @w (tests replay a stale observation). */
enum pto_cs_step pto_cs_claim_from(struct pto_capture_part *p, u64 w)
{
	struct pto_capture_slot *s = p->slot;
	u64 st = PTO_CS_STATE(w), occ = PTO_CS_OCC(w);

	if (st == PTO_CS_CLAIMING || st == PTO_CS_READY) {
		if (p->occ && occ != p->occ)
			return PTO_CS_FOREIGN;
		p->occ = occ;
		return st == PTO_CS_READY ? PTO_CS_JOINED : PTO_CS_WAIT;
	}
	/* FREE or SETTLED: a core that joined never sees its own leave it. */
	if (p->occ || occ == PTO_CS_OCC_MASK)
		return PTO_CS_FOREIGN;
	/*
	 * Expected value: the full observed word, never a rebuilt one; fully
	 * ordered, so the departures the acquire above saw stay before it.
	 * Exactly one core moves the word out of this source state.
	 */
	if (atomic64_cmpxchg(&s->claim, w,
			     PTO_CS_CLAIM(PTO_CS_CLAIMING, occ + 1)) != w)
		return PTO_CS_WAIT;
	p->occ = occ + 1;
	return PTO_CS_CLAIMED;
}
EXPORT_SYMBOL_IF_KUNIT(pto_cs_claim_from);

/* The claimer, sole writer inside CLAIMING: every other word to zero. */
void pto_cs_initialize(struct pto_capture_part *p)
{
	struct pto_capture_slot *s = p->slot;
	int ph;

	/*
	 * Relaxed: no core touches these words before it saw READY|occ, and
	 * the release in pto_cs_ready() orders all of them before READY.
	 */
	for (ph = 0; ph < PTO_CS_PHASES; ph++) {
		atomic64_set(&s->arrived[ph], 0);
		atomic64_set(&s->released[ph], 0);
		atomic64_set(&s->publisher[ph], 0);
	}
	atomic64_set(&s->aborted, 0);
}
EXPORT_SYMBOL_IF_KUNIT(pto_cs_initialize);

void pto_cs_ready(struct pto_capture_part *p)
{
	/*
	 * Release: pairs with the acquire of claim in pto_cs_claim() and
	 * pto_cs_still_ready(): initialization is complete before any
	 * participant can set a bit.
	 */
	atomic64_set_release(&p->slot->claim,
			     PTO_CS_CLAIM(PTO_CS_READY, p->occ));
}
EXPORT_SYMBOL_IF_KUNIT(pto_cs_ready);

enum pto_cs_step pto_cs_arrive(struct pto_capture_part *p, u32 phase)
{
	u64 old;

	if (phase >= PTO_CS_PHASES || !pto_cs_still_ready(p))
		return PTO_CS_FOREIGN;
	p->phase = phase;
	p->pub = 0;
	p->publisher = false;
	p->released = false;
	p->timed_out = false;
	/*
	 * Fully ordered RMW, one writer per bit: the last arriver's result
	 * holds every peer's bit, and for AFTER this core's output writes
	 * are ordered before its arrival (and before the request below).
	 */
	old = atomic64_fetch_or(p->bit, &p->slot->arrived[phase]);
	if ((old & p->bit) || ((old | p->bit) & ~(u64)p->mask))
		return PTO_CS_FOREIGN;
	if ((old | p->bit) != p->mask)
		return PTO_CS_PEER;
	p->publisher = true;
	return PTO_CS_PUBLISHER;
}
EXPORT_SYMBOL_IF_KUNIT(pto_cs_arrive);

/*
 * The publisher's request: the first call allocates the phase's one
 * phase_seq and then publishes the publisher word; every later call
 * (progress, WouldBlock) changes the argument, cursor and request_tick
 * only.
 */
void pto_cs_request(struct pto_capture_part *p, u32 arg_index, u64 cursor)
{
	struct pto_capture_req *r = &p->area->reqs[p->core];
	/* This core's own line, no other writer: a plain read of its tick. */
	u64 tick = READ_ONCE(r->request_tick) + 1;
	u32 seq;

	if (p->pub) {
		seq = PTO_CS_PUB_SEQ(p->pub);
	} else {
		seq = ++*p->seq;
		if (!seq)	/* zero is "no request" in the publisher word */
			seq = ++*p->seq;
	}
	WRITE_ONCE(r->run_epoch, p->run_epoch);
	WRITE_ONCE(r->task_id, p->task_id);
	WRITE_ONCE(r->slot, p->slot_index);
	WRITE_ONCE(r->phase, p->phase);
	WRITE_ONCE(r->phase_seq, seq);
	WRITE_ONCE(r->arg_index, arg_index);
	WRITE_ONCE(r->arg_cursor, cursor);
	/*
	 * Release: pairs with the supervisor's acquire in pto_cs_accept();
	 * the fields above (and the task's output writes) come first.
	 */
	smp_store_release(&r->request_tick, tick);
	if (p->pub)
		return;
	p->pub = PTO_CS_PUB(p->core, seq);
	/*
	 * Release: pairs with the peers' acquire in pto_cs_follow(); a
	 * non-zero publisher word means the request it names exists.
	 */
	atomic64_set_release(&p->slot->publisher[p->phase], p->pub);
}
EXPORT_SYMBOL_IF_KUNIT(pto_cs_request);

/* A peer: learn whose acknowledgement line to poll, for which phase_seq. */
enum pto_cs_step pto_cs_follow(struct pto_capture_part *p)
{
	u64 w;

	if (p->pub)
		return PTO_CS_FOLLOWING;
	if (!pto_cs_still_ready(p))
		return PTO_CS_FOREIGN;
	/* Acquire: pairs with the release in pto_cs_request(). */
	w = atomic64_read_acquire(&p->slot->publisher[p->phase]);
	if (!w)
		return PTO_CS_WAIT;
	if (PTO_CS_PUB_CORE(w) >= p->area->ncores)
		return PTO_CS_FOREIGN;
	p->pub = w;
	return PTO_CS_FOLLOWING;
}
EXPORT_SYMBOL_IF_KUNIT(pto_cs_follow);

/*
 * Poll the acknowledgement the publisher word names. Every participant
 * accepts only its phase's full identity (run_epoch, task_id, phase_seq)
 * with a terminal status; the publisher also takes progress answers, and
 * only those echoing the request_tick it last published (copied to @echo).
 */
enum pto_cs_step pto_cs_poll(struct pto_capture_part *p,
			       struct pto_capture_ack *echo)
{
	struct pto_capture_ack *ack;
	u32 st;

	if (!p->pub) {
		enum pto_cs_step r = pto_cs_follow(p);

		if (r != PTO_CS_FOLLOWING)
			return r;
	}
	if (!pto_cs_still_ready(p))
		return PTO_CS_FOREIGN;
	ack = &p->area->acks[PTO_CS_PUB_CORE(p->pub)];
	/*
	 * Acquire: pairs with the release of phase_seq in pto_cs_ack(); the
	 * status and identity stored before it are at least that answer's.
	 */
	if (smp_load_acquire(&ack->phase_seq) != PTO_CS_PUB_SEQ(p->pub) ||
	    READ_ONCE(ack->run_epoch) != p->run_epoch ||
	    READ_ONCE(ack->task_id) != p->task_id)
		return PTO_CS_WAIT;
	st = READ_ONCE(ack->status);
	if (st == PTO_CS_ST_ABORTED)
		return PTO_CS_ABORTED;
	if (!p->publisher)
		return st == PTO_CS_ST_SEALED ? PTO_CS_SEALED : PTO_CS_WAIT;
	/*
	 * Acquire: pairs with the release of request_tick in pto_cs_ack(),
	 * so status, argument and cursor are that answer's; nothing rewrites
	 * them before this core publishes again (an Aborted aside).
	 */
	if (smp_load_acquire(&ack->request_tick) !=
	    READ_ONCE(p->area->reqs[p->core].request_tick))
		return PTO_CS_WAIT;
	st = READ_ONCE(ack->status);
	if (st == PTO_CS_ST_SEALED)
		return PTO_CS_SEALED;
	if (st == PTO_CS_ST_ABORTED)
		return PTO_CS_ABORTED;
	if (st != PTO_CS_ST_INPROGRESS && st != PTO_CS_ST_WOULDBLOCK)
		return PTO_CS_WAIT;
	if (echo) {
		echo->status = st;
		echo->arg_index = READ_ONCE(ack->arg_index);
		echo->arg_cursor = READ_ONCE(ack->arg_cursor);
	}
	return PTO_CS_PROGRESS;
}
EXPORT_SYMBOL_IF_KUNIT(pto_cs_poll);

/*
 * Leave a sealed phase. The participant that completes released[AFTER]
 * stores SETTLED: only then may the task's completion be published. The
 * publisher of AFTER, when not that participant, waits (PTO_CS_WAIT, call
 * again) until the mask closed: its acknowledgement line holds the seal
 * the peers still read, and a seal is reused only after its readers left.
 */
enum pto_cs_step pto_cs_release(struct pto_capture_part *p)
{
	struct pto_capture_slot *s = p->slot;
	atomic64_t *rel = &s->released[p->phase];
	u64 old;

	if (p->released) {
		/* Acquire: pairs with the peers' fully ordered fetch_or. */
		if ((u64)atomic64_read_acquire(rel) == p->mask)
			return PTO_CS_RELEASED;
		/*
		 * The mask may already be the next occupancy's (zeroed by its
		 * claimer): a claim past READY|occ was SETTLED first, which is
		 * stored only after the mask closed.
		 */
		return pto_cs_still_ready(p) ? PTO_CS_WAIT : PTO_CS_RELEASED;
	}
	/*
	 * Fully ordered RMW: this core's reads of the seal come before its
	 * bit, so the bit proves it no longer reads the line.
	 */
	old = atomic64_fetch_or(p->bit, rel);
	p->released = true;
	if ((old | p->bit) != p->mask)
		return p->phase == PTO_CS_AFTER && p->publisher ?
		       PTO_CS_WAIT : PTO_CS_RELEASED;
	if (p->phase == PTO_CS_BEFORE)
		return PTO_CS_RELEASED;
	/*
	 * After the fetch_or, which is fully ordered: an abort raised by any
	 * participant before its own release is seen here; an aborted
	 * occupancy is never settled (and never re-claimed in this run).
	 */
	if (atomic64_read(&s->aborted))
		return PTO_CS_ABORTED;
	/*
	 * Release: pairs with the next claimer's acquire in pto_cs_claim();
	 * every departure (the fetch_ors above) precedes SETTLED.
	 */
	atomic64_set_release(&s->claim, PTO_CS_CLAIM(PTO_CS_SETTLED, p->occ));
	return PTO_CS_COMPLETE;
}
EXPORT_SYMBOL_IF_KUNIT(pto_cs_release);

/*
 * A budget expired. In CLAIMING nothing is writable: INIT_LOST. In READY
 * the first such waiter raises aborted and every waiter keeps polling for
 * the Aborted acknowledgement (TIMEOUT). The second, longer budget leaves
 * with nothing written (LOST).
 */
enum pto_cs_step pto_cs_expire(struct pto_capture_part *p, bool second)
{
	struct pto_capture_slot *s = p->slot;
	u64 w, seen;

	if (second)
		return PTO_CS_LOST;
	/* Acquire: as in pto_cs_still_ready(). */
	w = atomic64_read_acquire(&s->claim);
	if (!p->occ || w == PTO_CS_CLAIM(PTO_CS_CLAIMING, p->occ))
		return PTO_CS_INIT_LOST;
	if (w != PTO_CS_CLAIM(PTO_CS_READY, p->occ))
		return PTO_CS_FOREIGN;
	p->timed_out = true;
	/* Acquire: pairs with another waiter's (fully ordered) cmpxchg. */
	seen = atomic64_read_acquire(&s->aborted);
	/*
	 * Expected value: the full observed word (zero). The atomic is the
	 * publication; the supervisor and the releaser read it.
	 */
	if (!seen)
		atomic64_cmpxchg(&s->aborted, seen,
				 PTO_CS_ABORT_WORD(PTO_CS_ABORT_SITE(p->phase,
								       p->core)));
	return PTO_CS_TIMEOUT;
}
EXPORT_SYMBOL_IF_KUNIT(pto_cs_expire);

/*
 * The supervisor: a request of @core newer than @last_tick, copied into
 * @v. Malformed requests (phase, slot, zero phase_seq) are not accepted.
 */
bool pto_cs_accept(struct pto_capture_area *a, u32 core, u64 last_tick,
		    struct pto_capture_view *v)
{
	const struct pto_capture_req *r = &a->reqs[core];
	/*
	 * Acquire: pairs with the release in pto_cs_request(); the fields
	 * are that request's, and the publisher does not rewrite them before
	 * this request is answered.
	 */
	u64 tick = smp_load_acquire(&r->request_tick);

	if (!tick || tick == last_tick)
		return false;
	v->core = core;
	v->tick = tick;
	v->req.run_epoch = READ_ONCE(r->run_epoch);
	v->req.task_id = READ_ONCE(r->task_id);
	v->req.slot = READ_ONCE(r->slot);
	v->req.phase = READ_ONCE(r->phase);
	v->req.phase_seq = READ_ONCE(r->phase_seq);
	v->req.arg_index = READ_ONCE(r->arg_index);
	v->req.arg_cursor = READ_ONCE(r->arg_cursor);
	v->req.request_tick = tick;
	return v->req.phase < PTO_CS_PHASES && v->req.slot < a->nslots &&
	       v->req.phase_seq;
}
EXPORT_SYMBOL_IF_KUNIT(pto_cs_accept);

bool pto_cs_slot_aborted(struct pto_capture_area *a, u32 slot_index)
{
	/*
	 * Acquire: pairs with the waiter's cmpxchg in pto_cs_expire(). A
	 * read only: the supervisor never writes a slot word.
	 */
	return atomic64_read_acquire(&a->slots[slot_index].aborted) != 0;
}
EXPORT_SYMBOL_IF_KUNIT(pto_cs_slot_aborted);

/* The supervisor answers @v in the publisher's acknowledgement line. */
void pto_cs_ack(struct pto_capture_ack *ack, const struct pto_capture_view *v,
		 u32 status, u32 arg_index, u64 cursor)
{
	WRITE_ONCE(ack->status, status);
	WRITE_ONCE(ack->arg_index, arg_index);
	WRITE_ONCE(ack->arg_cursor, cursor);
	/* Release: pairs with the publisher's acquire in pto_cs_poll(). */
	smp_store_release(&ack->request_tick, v->tick);
	WRITE_ONCE(ack->run_epoch, v->req.run_epoch);
	WRITE_ONCE(ack->task_id, v->req.task_id);
	/*
	 * Release, the identity last: pairs with every participant's acquire
	 * in pto_cs_poll(); status and identity come first.
	 */
	smp_store_release(&ack->phase_seq, v->req.phase_seq);
}
EXPORT_SYMBOL_IF_KUNIT(pto_cs_ack);

int pto_cs_area_alloc(struct pto_capture_area *a, u32 clusters, u32 pending)
{
	a->nslots = clusters * pending;
	a->ncores = clusters * PTO_CORES_PER_CLUSTER;
	/* Zeroed: every claim FREE with occupancy 0, no line written. */
	a->slots = kvcalloc(a->nslots, sizeof(*a->slots), GFP_KERNEL);
	a->reqs = kvcalloc(a->ncores, sizeof(*a->reqs), GFP_KERNEL);
	a->acks = kvcalloc(a->ncores, sizeof(*a->acks), GFP_KERNEL);
	if (!a->nslots || !a->slots || !a->reqs || !a->acks) {
		pto_cs_area_free(a);
		return -ENOMEM;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(pto_cs_area_alloc);

void pto_cs_area_free(struct pto_capture_area *a)
{
	kvfree(a->slots);
	kvfree(a->reqs);
	kvfree(a->acks);
	*a = (struct pto_capture_area){};
}
EXPORT_SYMBOL_IF_KUNIT(pto_cs_area_free);
