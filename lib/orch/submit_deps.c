// SPDX-License-Identifier: MIT
/* Submit's dependency inference: producers from explicit deps and the
 * TensorMap, and the edges that wire a new slot to them. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "orch/submit.h"

/* Collect a producer, deduplicated (retention wins). A TensorMap entry
 * whose slot now holds another task is already consumed: satisfied.
 * task_id is written by this thread only, so reading it needs no lock.
 * Inlined: called for every producer reference. */
static inline __attribute__((always_inline)) int
add_producer(struct pto_orch *o, struct orch_slot *self, struct orch_slot *p,
	     uint64_t ptid, bool retain)
{
	int err;

	if (p == self || p->task_id != ptid)
		return 0;
	if (p->dedup_mark == self->task_id) {
		o->deps[p->dedup_idx].retain |= retain;
		return 0;
	}
	err = orch_grow(o, ORCH_FP_DEPS, self, (void **)&o->deps, &o->cap_deps,
			o->ndeps + 1, sizeof(*o->deps));
	if (err)
		return orch_error(o, err, "out of memory collecting dependencies");
	p->dedup_mark = self->task_id;
	p->dedup_idx = o->ndeps;
	o->deps[o->ndeps].s = p;
	o->deps[o->ndeps].tid = ptid;
	o->deps[o->ndeps].retain = retain;
	o->ndeps++;
	return 0;
}

/* Explicit deps, then the tag walk: every lookup collects producers,
 * then every output key is journaled before it is published. A walk
 * that validate() found nothing for (@sc's counts) is skipped. */
int orch_submit_infer_deps(struct pto_orch *o, struct pto_run *r,
			   struct orch_slot *s, const struct submit_req *q,
			   const struct submit_scan *sc)
{
	uint32_t m, j, nm = q->shared ? 1 : s->nmembers;	/* = q->n */
	bool locked = false;
	int err;

	o->ndeps = 0;
	for (m = 0; m < nm; m++) {
		const struct pto_task_args *a = q->args[m];

		for (j = 0; j < a->ndeps; j++) {
			const struct pto_dep *d = &a->deps[j];

			/* validate() checked the handle names a task of
			 * this run; no slot: its chunk was recycled, so the
			 * task is consumed and the dependency satisfied. */
			struct orch_slot *p = orch_store_lookup(&o->store,
								d->h.task_id);

			if (!p)
				continue;
			err = add_producer(o, s, p, d->h.task_id, d->retain);
			if (err)
				return err;
		}
	}
	/*
	 * One TensorMap hold for the walk (erase sees this task's mappings
	 * all or nothing), taken at the first keyed tensor. Every lookup
	 * comes before any insert of this task, or an INPUT of the same key
	 * as an OUTPUT (dst == src, or across members) would find this
	 * task's own mapping and lose the edge on the previous writer.
	 */
	err = 0;
	for (m = 0; m < nm && sc->nlookup && !err; m++) {
		struct orch_member *mb = &s->members[m];

		for (j = 0; j < mb->nt && !err; j++) {
			uint8_t tag = mb->t[j].tag;
			struct orch_slotref p;
			struct orch_key k;

			if (tag != PTO_INPUT && tag != PTO_INOUT)
				continue;
			if (!locked) {
				orch_tm_lock(o);
				locked = true;
			}
			orch_tensor_key(r, &mb->t[j].t, &k);
			p = orch_tm_lookup_locked(o, &k);
			if (p.s)
				err = add_producer(o, s, p.s, p.tid, true);
		}
	}
	/* Then the outputs, in the same hold; an INOUT's key is hashed again
	 * (carrying the hash over cost about as much as hashing). */
	for (m = 0; m < nm && sc->ninsert && !err; m++) {
		struct orch_member *mb = &s->members[m];

		for (j = 0; j < mb->nt && !err; j++) {
			uint8_t tag = mb->t[j].tag;
			struct orch_key k;

			if (tag == PTO_NO_DEP || tag == PTO_INPUT)
				continue;
			if (!locked) {
				orch_tm_lock(o);
				locked = true;
			}
			orch_tensor_key(r, &mb->t[j].t, &k);
			/* Journal first: a mapping is never visible unless
			 * on_consumed / cancellation knows to erase it. */
			err = orch_grow_inl(o, ORCH_FP_JOURNAL, s,
					    (void **)&s->out_keys, &s->cap_keys,
					    s->nkeys + 1, sizeof(*s->out_keys),
					    s->inl_keys);
			if (err) {
				orch_error(o, err, "out of memory (cleanup journal)");
				break;
			}
			s->out_keys[s->nkeys++] = k;
			err = orch_tm_insert_locked(o, &k,
						    (struct orch_slotref){ s, s->task_id });
			if (err)
				orch_error(o, err, "out of memory (TensorMap)");
		}
	}
	if (locked)
		orch_tm_unlock(o);
	return err;
}

/*
 * Attach @s to each producer under the producer's fanout_mu and count the
 * live ones. A COMPLETED producer is no live fanin and gets no
 * notification edge (its consumer list is frozen); a retaining edge still
 * takes a lifetime reference on it. A FAILED producer poisons @s (claim
 * from BUILDING; publication propagates). A CONSUMED producer is gone.
 */
int orch_submit_wire(struct pto_orch *o, struct orch_slot *s, int32_t *live_out)
{
	int32_t live = 0;
	uint32_t i;
	int err;

	err = orch_grow_inl(o, ORCH_FP_WIRE, s, (void **)&s->producers,
			    &s->cap_producers, o->ndeps, sizeof(*s->producers),
			    s->inl_producers);
	if (err)
		return orch_error(o, err, "out of memory (fanin edges)");
	for (i = 0; i < o->ndeps; i++) {
		struct orch_slot *p = o->deps[i].s;
		bool retain = o->deps[i].retain;
		char msg[ORCH_MSG_LEN];
		int st, perr;

		/*
		 * An ordering-only edge on a completed or gone producer
		 * attaches nothing: decided without the lock. Acquire pairs
		 * with the release stores of COMPLETED and CONSUMED; COMPLETED
		 * never goes back to FAILED, and task_id is this thread's.
		 */
		if (!retain) {
			st = atomic_load_explicit(&p->state, memory_order_acquire);
			if (p->task_id != o->deps[i].tid || st == ORCH_COMPLETED ||
			    st == ORCH_CONSUMED || st == ORCH_FREE)
				continue;
		}
		orch_lock(&p->fanout_mu);
		st = atomic_load_explicit(&p->state, memory_order_relaxed);
		/* CONSUMED, or already reclaimed by its ring (FREE): gone. */
		if (p->task_id != o->deps[i].tid || st == ORCH_CONSUMED ||
		    st == ORCH_FREE) {
			orch_unlock(&p->fanout_mu);
			continue;
		}
		if (st == ORCH_FAILED) {
			snprintf(msg, sizeof(msg), "producer task %llu failed: %.120s",
				 (unsigned long long)p->task_id, p->failure_message);
			perr = p->failure_err ? p->failure_err : -ECANCELED;
			orch_unlock(&p->fanout_mu);
			orch_claim_task_failure(o, s, s->task_id, perr, msg, false);
			break;	/* poisoned: the rest of the wiring is moot */
		}
		if (st != ORCH_COMPLETED) {
			if (p->nconsumers == p->cap_consumers &&
			    orch_grow_inl(o, ORCH_FP_WIRE, s,
					  (void **)&p->consumers,
					  &p->cap_consumers, p->nconsumers + 1,
					  sizeof(*p->consumers),
					  p->inl_consumers)) {
				orch_unlock(&p->fanout_mu);
				return orch_error(o, -ENOMEM, "out of memory (fanout edges)");
			}
			p->consumers[p->nconsumers].s = s;
			p->consumers[p->nconsumers].tid = s->task_id;
			p->nconsumers++;
			live++;
		}
		if (retain) {
			p->fanout_total++;
			s->producers[s->nproducers++] = p;
		}
		orch_unlock(&p->fanout_mu);
	}
	*live_out = live;
	return 0;
}
