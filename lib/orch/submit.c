// SPDX-License-Identifier: MIT
/*
 * Submit. Every variant goes through submit_impl, in this order:
 *   slot claim -> run-slot registration -> scope registration -> charge
 *   -> task data -> TensorMap lookups -> journal -> TensorMap inserts ->
 *   wiring -> publication
 * A failed registration releases the slot here; any later failure
 * leaves it BUILDING (or FAILED) and the run's, for its cancellation.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "orch/submit.h"

/* The first construction error is the run's: its code, and its message
 * (the one orch_error just wrote). */
static int construction_failed(struct pto_orch *o, struct pto_run *r, int err)
{
	if (!r->construction_err) {
		r->construction_err = err;
		memcpy(r->construction_msg, o->errmsg, sizeof(r->construction_msg));
	}
	return err;
}

/* building_run()'s refusals, out of line. */
static __attribute__((noinline, cold)) int
not_building(struct pto_orch *o, struct pto_run **rp)
{
	*rp = NULL;
	/*
	 * A child forked inside an orchestration function: the run and its
	 * locks are copies of the parent's (a lock another thread held at
	 * the fork stays held), so nothing is touched, no message either
	 * (orch.h, fork()).
	 */
	if (orch_forked(o))
		return -ECHILD;
	if (!o->building)
		return orch_error(o, -EINVAL,
				  "submit outside an orchestration function");
	/* Not failed yet: the abort (building_run()), the run's error. */
	if (!o->building->construction_err &&
	    atomic_load_explicit(&o->aborted, memory_order_relaxed)) {
		orch_error(o, -ECANCELED,
			   "orchestrator aborted (pto_orch_abort): submit to run %llu refused",
			   (unsigned long long)o->building->id);
		return construction_failed(o, o->building, -ECANCELED);
	}
	/* Only the fork flag sent it here: a child's own orchestrator. */
	if (!o->building->construction_err) {
		*rp = o->building;
		return 0;
	}
	return orch_error(o, -ECANCELED,
			  "run %llu already failed to build; submit refused",
			  (unsigned long long)o->building->id);
}

/*
 * The run being built, or -EINVAL outside an orchestration function,
 * -ECANCELED once the run is doomed or the orchestrator aborted, -ECHILD
 * in a forked child. Inline with the refusals out of line: every submit
 * asks (a relaxed load for the abort, a flag load for the fork).
 */
static inline __attribute__((always_inline)) int
building_run(struct pto_orch *o, struct pto_run **rp)
{
	struct pto_run *r = o->building;

	if (__builtin_expect(r && !r->construction_err && !orch_forked_child &&
			     !atomic_load_explicit(&o->aborted,
						   memory_order_relaxed), 1)) {
		*rp = r;
		return 0;
	}
	return not_building(o, rp);
}

/*
 * Prefetch what the next submits write: slot +3's hot lines, slot +2's
 * arrays that grew to the heap, slot +1's argument tensors, within the
 * chunk. A recycled slot was last touched by a worker and is cold or in
 * its cache: ask for the lines in exclusive state (orch_prefetchw).
 */
static inline __attribute__((always_inline)) void
prefetch_ahead_as(const struct orch_slot_store *st, const struct orch_slot *s0,
		  bool have)
{
	const struct orch_slot *s1 = s0 + 1, *s2 = s0 + 2;
	const char *s3 = (const char *)(s0 + 3);
	uint32_t i, n;

	if (s0 + 3 < st->end) {
#pragma GCC unroll 16
		for (i = 0; i < offsetof(struct orch_slot, inl_tensors); i += 64)
			orch_prefetchw_as(s3 + i, have);
	}
	if (s2 < st->end) {
		if (s2->members != &s2->inl_member)
			orch_prefetchw_as(s2->members, have);
		if (s2->out_keys != s2->inl_keys)
			orch_prefetchw_as(s2->out_keys, have);
	}
	if (s1 < st->end && s1->cap_members) {
		const struct orch_member *m = &s1->members[0];

		n = m->nt * (uint32_t)sizeof(*m->t);
		for (i = 0; i < n && i < 1024; i += 64)
			orch_prefetchw_as((const char *)m->t + i, have);
	}
}

static inline __attribute__((always_inline)) void
prefetch_ahead(const struct orch_slot_store *st, const struct orch_slot *s0)
{
	if (__builtin_expect(orch_have_prefetchw, 1))
		prefetch_ahead_as(st, s0, true);
	else
		prefetch_ahead_as(st, s0, false);
}

/* Slot claim + run-slot registration (the ownership boundary). Only a
 * heap charge can wait; the slot itself comes from the store. */
static int claim_slot(struct pto_orch *o, struct pto_run *r, uint8_t kind,
		      uint64_t bytes, struct orch_slot **sp, bool count)
{
	int ri = orch_ring_for_depth(o->scope.depth);
	struct orch_ring *ring = &o->rings[ri];
	uint64_t tid = o->store.next_tid;
	struct orch_slot *s;
	int err;

	/* The pending READY list is flushed within ready_batch claims of
	 * its first entry. */
	orch_ready_check(o, tid);
	s = orch_store_peek(&o->store);
	if (__builtin_expect(!s, 0))
		return orch_error(o, -ENOMEM, "out of memory (slot storage)");
	s->heap_charged = 0;
	s->heap_off = 0;
	if (bytes) {
		err = orch_ring_alloc_heap(o, ri, s, tid, bytes);
		if (err)
			return err;
	}
	prefetch_ahead(&o->store, s);
	orch_store_advance(&o->store);
	/* The orch thread is the only writer of next_task_id (validate()
	 * reads it): a store, no locked RMW. Likewise the ring's count. */
	atomic_store_explicit(&o->next_task_id, tid + 1, memory_order_relaxed);
	atomic_store_explicit(&ring->taken,
			      atomic_load_explicit(&ring->taken, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	/* Identity under the lock: a stale reference to this slot's
	 * previous occupant reads task_id under it to tell it is stale. */
	orch_lock(&s->fanout_mu);
	orch_slot_reset(s);
	s->task_id = tid;
	s->run = r;
	s->run_id = r->id;
	s->traced = r->traced;
	s->kind = kind;
	s->ring = (uint8_t)ri;
	atomic_store_explicit(&s->state, ORCH_BUILDING, memory_order_relaxed);
	orch_unlock(&s->fanout_mu);

	if (orch_may_fail(o, ORCH_FP_RUN_REGISTER, s)) {
		/* Not the run's: nobody can find it, release it directly. */
		orch_lock(&s->fanout_mu);
		atomic_store_explicit(&s->state, ORCH_CONSUMED, memory_order_relaxed);
		orch_unlock(&s->fanout_mu);
		orch_ring_release(o, s);
		return orch_error(o, -ENOMEM, "run-slot registration failed");
	}
	orch_run_register_slot(r, count);
	s->unlaunched = count;
	*sp = s;
	return 0;
}

/* Scope registration, then the charge (never the other way round). */
static int scope_and_charge(struct pto_orch *o, struct orch_slot *s)
{
	int err = orch_scope_register(o, s);

	if (err)
		return err;
	s->fanout_total = 1;
	return 0;
}

static int copy_member(struct pto_orch *o, struct orch_slot *s,
		       struct orch_member *m, const struct pto_task_args *a)
{
	int err;

	err = orch_grow_inl(o, ORCH_FP_ARGS, s, (void **)&m->t, &m->cap_t,
			    a->ntensors, sizeof(*m->t), s->inl_tensors);
	if (!err && a->nscalars > m->cap_s) {
		/* s and sdump share cap_s: orch_grow's policy is a function
		 * of (cap, need), so growing a copy of cap_s first gives the
		 * dump marks at least the capacity the scalars then get. */
		uint32_t cap = m->cap_s;

		err = orch_grow(o, ORCH_FP_ARGS, s, (void **)&m->sdump, &cap,
				a->nscalars, 1);
		if (!err)
			err = orch_grow(o, ORCH_FP_ARGS, s, (void **)&m->s,
					&m->cap_s, a->nscalars, sizeof(*m->s));
	}
	if (err)
		return orch_error(o, err, "out of memory copying task arguments");
	/* One tensor (most tasks that have any): a struct copy, inlined;
	 * the call to memcpy cost twice its instructions. */
	if (a->ntensors == 1)
		m->t[0] = a->tensors[0];
	else if (a->ntensors)
		memcpy(m->t, a->tensors, a->ntensors * sizeof(*m->t));
	if (a->nscalars) {
		memcpy(m->s, a->scalars, a->nscalars * sizeof(*m->s));
		memcpy(m->sdump, a->scalar_dump, a->nscalars);
	}
	m->nt = a->ntensors;
	m->ns = a->nscalars;
	m->ran_on = -1;
	m->err = 0;
	atomic_store_explicit(&m->mstate, ORCH_M_PENDING, memory_order_relaxed);
	return 0;
}

/*
 * Point @t at @off bytes into @heap, in the heap's space: a HOST heap (the
 * in-process one) makes it a HOST tensor keyed by its address, any other
 * names the heap's object, offset and device (backend.h, struct
 * orch_heap). Whatever @t said of its space before is overwritten, so
 * that every carved buffer is a key of its own (a GM-declared OUTPUT on
 * a HOST heap would otherwise share the key (GM, 0, 0, 0) with all).
 */
static void heap_tensor(const struct orch_heap *heap, uint64_t off,
			struct pto_tensor *t)
{
	t->data = (uint64_t)(uintptr_t)heap->base + off;
	t->space = heap->space;
	t->obj = 0;
	t->offset = 0;
	t->dev = 0;
	if (heap->space != PTO_SPACE_HOST) {
		t->obj = heap->obj;
		t->offset = heap->obj_off + off;
		t->dev = heap->dev;
	}
}

/* Task data, group member vectors and OUTPUT carving, while BUILDING:
 * dispatch never allocates after claiming READY -> RUNNING. @bytes is
 * validate()'s total of the auto-allocated OUTPUTs. */
static int prepare_members(struct pto_orch *o, struct orch_slot *s,
			   const struct submit_req *q,
			   uint64_t bytes)
{
	struct orch_heap *heap = &o->rings[s->ring].heap;
	uint64_t cursor = s->heap_off;
	uint32_t m, j;
	int err;

	/* New members come zeroed from orch_grow: their arg arrays start
	 * empty and keep their capacity from then on. */
	err = orch_grow_inl(o, q->n > 1 ? ORCH_FP_GROUP_PREP : ORCH_FP_ARGS, s,
			    (void **)&s->members, &s->cap_members, q->n,
			    sizeof(*s->members), &s->inl_member);
	if (err)
		return orch_error(o, err, "out of memory preparing members");
	s->callable = *q->c;
	s->cfg.flags = q->cfg ? q->cfg->flags : 0;
	s->wkind = q->wkind;
	s->is_group = q->is_group;
	s->shared = q->shared;
	for (m = 0; m < q->n; m++) {
		struct orch_member *mb = &s->members[m];

		err = copy_member(o, s, mb, q->args[m]);
		if (err)
			return err;
		mb->widx = q->widx ? q->widx[m] : -1;
		s->nmembers = m + 1;
		if (q->shared && m) {
			/* SPMD blocks share member 0's (carved) tensors;
			 * without any, both arrays may be NULL. */
			if (mb->nt)
				memcpy(mb->t, s->members[0].t,
				       mb->nt * sizeof(*mb->t));
			continue;
		}
		/* validate() counted every auto-allocated OUTPUT in @bytes,
		 * each at least PTO_HEAP_ALIGN: none to carve, no walk. */
		if (!bytes)
			continue;
		for (j = 0; j < mb->nt; j++) {
			struct pto_arg_tensor *t = &mb->t[j];

			if (t->tag != PTO_OUTPUT || t->t.data)
				continue;
			heap_tensor(heap, cursor, &t->t);
			cursor += orch_align_up(t->t.nbytes);
			/* Hand the address back so later tasks can name it. */
			q->args[m]->tensors[j].t = t->t;
		}
	}
	atomic_store_explicit(&s->members_left, q->n, memory_order_relaxed);
	return 0;
}
/*
 * Publication: fanin_count and BUILDING -> PENDING/READY under one lock.
 * A producer that completed first bumped fanin_released and is counted
 * here; one that completes later reads the published count. If a
 * producer's failure claimed the slot meanwhile, the claim stopped at
 * FAILED and this thread, done wiring, propagates it. A READY here is
 * stamped with @ts, the task's SUBMITTED stamp (when @tb records it).
 */
static void publish(struct pto_orch *o, struct orch_slot *s, int32_t live,
		    struct trace_buf *tb, uint64_t ts)
{
	bool ready = false, propagate = false;

	/*
	 * No live producer: wire() put @s on no consumer list, so no other
	 * thread can act on it and the lock would order nothing (stale
	 * references back off on task_id under fanout_mu). Release: the
	 * scheduler that claims @s acquires its state and so sees the task
	 * data, as the unlock's release orders it on the locked path.
	 */
	if (!live && atomic_load_explicit(&s->state, memory_order_relaxed) ==
		     ORCH_BUILDING) {
		/* fanin_count: 0 since the claim (orch_slot_reset). */
		if (trace_on(tb))
			trace_put_as(tb, ts, tb->ticks, TRACE_READY, s->run_id,
				     s->task_id, 0, 0, TRACE_NO_CORE);
		atomic_store_explicit(&s->state, ORCH_READY, memory_order_release);
		orch_ready_defer(o, s);
		return;
	}
	orch_lock(&s->fanout_mu);
	if (atomic_load_explicit(&s->state, memory_order_relaxed) == ORCH_BUILDING) {
		s->fanin_count = live;
		ready = s->fanin_released >= live;
		if (ready && trace_on(tb))
			trace_put_as(tb, ts, tb->ticks, TRACE_READY, s->run_id,
				     s->task_id, 0, 0, TRACE_NO_CORE);
		atomic_store_explicit(&s->state, ready ? ORCH_READY : ORCH_PENDING,
				      memory_order_release);
	} else {
		s->failure_propagation_pending = false;
		propagate = true;
	}
	orch_unlock(&s->fanout_mu);
	if (propagate)
		orch_propagate_failure(o, s);
	else if (ready)
		orch_ready_defer(o, s);
}

static int submit_impl(struct pto_orch *o, const struct submit_req *q,
		       struct pto_task *out)
{
	struct submit_scan sc = { 0 };
	struct orch_slot *s = NULL;	/* claim_slot sets it; LTO cannot see that */
	struct trace_buf *tb;
	struct pto_run *r;
	uint64_t ts = 0;
	int32_t live = 0;
	int err;

	err = building_run(o, &r);
	if (err)
		return err;
	err = orch_submit_validate(o, r, q, &sc);
	if (err)
		goto fail_early;
	err = claim_slot(o, r, q->kind, sc.heap_bytes, &s, true);
	if (err)
		goto fail_early;
	err = scope_and_charge(o, s);
	if (!err)
		err = prepare_members(o, s, q, sc.heap_bytes);
	if (!err)
		err = orch_submit_infer_deps(o, r, s, q, &sc);
	if (!err)
		err = orch_submit_wire(o, s, &live);
	if (err)
		goto fail_owned;
	orch_may_fail(o, ORCH_TP_BEFORE_PUBLISH, s);
	tb = trace_self_if(s->traced);
	if (trace_on(tb))
		ts = orch_trace_submit(o, s, (uint32_t)q->c->kernel_id);
	publish(o, s, live, tb, ts);
	if (out) {
		out->run_id = r->id;
		out->task_id = s->task_id;
		out->slot = orch_handle_check(r->id, s->task_id);
		out->pad = 0;
	}
	return 0;

fail_owned:
	/* BUILDING (or FAILED, propagation pending) and the run's: its
	 * cancellation reclaims it. */
fail_early:
	return construction_failed(o, r, err);
}

static int resolve_target(struct pto_orch *o, struct pto_target t,
			  int32_t *widx, uint32_t *kind)
{
	if (t.worker_id >= 0) {
		int w = orch_worker_index(o, t.worker_id);

		if (w < 0)
			return orch_error(o, -EINVAL, "no worker with id %d",
					  t.worker_id);
		*widx = w;
		*kind = o->workers[w].kind;
		return 0;
	}
	if (!orch_kind_valid(t.kind))
		return orch_error(o, -EINVAL, "bad worker kind %u", t.kind);
	if (!o->kind_workers[t.kind])
		return orch_error(o, -EINVAL, "no worker of kind %u", t.kind);
	*widx = -1;
	*kind = t.kind;
	return 0;
}

static int fail_now(struct pto_orch *o, int err)
{
	if (o->building && err)
		construction_failed(o, o->building, err);
	return err;
}

PTO_API int pto_submit_next_level(pto_orch *o, const struct pto_callable *c,
				  struct pto_task_args *args,
				  const struct pto_call_config *cfg,
				  struct pto_target target, struct pto_task *out)
{
	struct submit_req q = { .kind = ORCH_NEXT_LEVEL, .n = 1, .c = c,
				.cfg = cfg, .args = &args };
	int32_t widx = -1;	/* resolve_target sets it; LTO cannot see that */
	int err;

	if (orch_forked(o))	/* before the argument checks */
		return -ECHILD;
	err = resolve_target(o, target, &widx, &q.wkind);
	if (err)
		return fail_now(o, err);
	q.widx = widx >= 0 ? &widx : NULL;
	return submit_impl(o, &q, out);
}

/* Unique, existing targets, checked before any dependency inference. */
PTO_API int pto_submit_next_level_group(pto_orch *o,
					const struct pto_callable *c,
					struct pto_task_args *const *args,
					uint32_t n, const struct pto_call_config *cfg,
					const int32_t *worker_ids,
					struct pto_task *out)
{
	struct submit_req q = { .kind = ORCH_NEXT_LEVEL, .is_group = true, .n = n,
				.c = c, .cfg = cfg, .args = args };
	int32_t small[16], *widx = small;
	uint32_t i, j;
	int err = 0;

	if (orch_forked(o))	/* before the argument checks */
		return -ECHILD;
	if (!n || !worker_ids || n > o->nworkers)
		return fail_now(o, orch_error(o, -EINVAL,
			"a group needs 1..%u unique target workers", o->nworkers));
	if (n > 16) {
		widx = malloc(n * sizeof(*widx));
		if (!widx)
			return fail_now(o, orch_error(o, -ENOMEM, "out of memory"));
	}
	for (i = 0; i < n && !err; i++) {
		widx[i] = orch_worker_index(o, worker_ids[i]);
		if (widx[i] < 0)
			err = orch_error(o, -EINVAL, "group member %u: no worker %d", i,
					 worker_ids[i]);
		for (j = 0; j < i && !err; j++)
			if (widx[j] == widx[i])
				err = orch_error(o, -EINVAL,
						 "group targets worker %d twice",
						 worker_ids[i]);
	}
	if (!err && o->ops->check_group) {
		char msg[160];

		err = o->ops->check_group(o->be, widx, n, msg, sizeof(msg));
		if (err)
			err = orch_error(o, err, "%s", msg);
	}
	q.widx = widx;
	if (!err)
		err = submit_impl(o, &q, out);
	else
		fail_now(o, err);
	if (widx != small)
		free(widx);
	return err;
}

/* SPMD: @nblocks members with the same args on any workers of @kind,
 * each started as a worker frees up (not all-or-nothing). */
PTO_API int pto_submit_spmd(pto_orch *o, const struct pto_callable *c,
			    struct pto_task_args *args,
			    const struct pto_call_config *cfg,
			    enum pto_worker_kind kind, uint32_t nblocks,
			    struct pto_task *out)
{
	struct submit_req q = { .kind = ORCH_NEXT_LEVEL, .shared = true,
				.n = nblocks, .c = c, .cfg = cfg };
	struct pto_task_args *small[16], **list = small;
	int32_t widx;
	uint32_t i;
	int err;

	if (orch_forked(o))	/* before the argument checks */
		return -ECHILD;
	if (!nblocks || !args)
		return fail_now(o, orch_error(o, -EINVAL, "SPMD needs blocks and args"));
	err = resolve_target(o, pto_on_kind(kind), &widx, &q.wkind);
	if (err)
		return fail_now(o, err);
	if (nblocks > 16) {
		list = malloc(nblocks * sizeof(*list));
		if (!list)
			return fail_now(o, orch_error(o, -ENOMEM, "out of memory"));
	}
	for (i = 0; i < nblocks; i++)
		list[i] = args;
	q.args = list;
	err = submit_impl(o, &q, out);
	if (list != small)
		free(list);
	return err;
}

PTO_API int pto_submit_sub(pto_orch *o, const struct pto_callable *c,
			   struct pto_task_args *args, struct pto_task *out)
{
	return pto_submit_sub_group(o, c, &args, 1, out);
}

PTO_API int pto_submit_sub_group(pto_orch *o, const struct pto_callable *c,
				 struct pto_task_args *const *args, uint32_t n,
				 struct pto_task *out)
{
	struct submit_req q = { .kind = ORCH_SUB, .n = n, .c = c, .args = args,
				.wkind = PTO_WORKER_SUB };
	int32_t widx;
	uint32_t kind;
	int err;

	if (orch_forked(o))	/* before the argument checks */
		return -ECHILD;
	err = resolve_target(o, pto_on_kind(PTO_WORKER_SUB), &widx, &kind);
	if (err)
		return fail_now(o, err);
	return submit_impl(o, &q, out);
}

/*
 * alloc: a synthetic slot, COMPLETED from birth, owning a heap slab.
 * Same ownership order; everything fallible happens while BUILDING, and the
 * self-release stand-in is published last, with the COMPLETED state.
 */
PTO_API int pto_alloc(pto_orch *o, uint64_t nbytes, struct pto_tensor *out,
		      struct pto_task *handle)
{
	struct orch_slot *s = NULL;	/* claim_slot sets it; LTO cannot see that */
	struct orch_heap *heap;
	struct pto_tensor t;
	struct pto_run *r;
	struct orch_key k;
	int err;

	err = building_run(o, &r);
	if (err)
		return err;
	if (!out)
		return fail_now(o, orch_error(o, -EINVAL,
					      "pto_alloc: NULL tensor out-pointer"));
	if (!nbytes)
		return fail_now(o, orch_error(o, -EINVAL, "alloc of 0 bytes"));
	err = claim_slot(o, r, ORCH_ALLOC, nbytes, &s, false);
	if (err)
		return fail_now(o, err);
	heap = &o->rings[s->ring].heap;
	err = scope_and_charge(o, s);
	if (err)
		return fail_now(o, err);

	memset(&t, 0, sizeof(t));
	t.nbytes = nbytes;
	heap_tensor(heap, s->heap_off, &t);
	orch_tensor_key(r, &t, &k);
	err = orch_grow_inl(o, ORCH_FP_JOURNAL, s, (void **)&s->out_keys,
			    &s->cap_keys, 1, sizeof(*s->out_keys), s->inl_keys);
	if (err)
		return fail_now(o, orch_error(o, err, "out of memory (journal)"));
	s->out_keys[s->nkeys++] = k;
	err = orch_tm_insert(o, &k, (struct orch_slotref){ s, s->task_id });
	if (err)
		return fail_now(o, orch_error(o, err, "out of memory (TensorMap)"));

	orch_lock(&s->fanout_mu);
	s->fanout_released = 1;	/* stands in for the self release */
	atomic_store_explicit(&s->state, ORCH_COMPLETED, memory_order_release);
	orch_unlock(&s->fanout_mu);
	*out = t;
	if (handle) {
		handle->run_id = r->id;
		handle->task_id = s->task_id;
		handle->slot = orch_handle_check(r->id, s->task_id);
		handle->pad = 0;
	}
	return 0;
}

PTO_API int pto_scope_begin(pto_orch *o)
{
	if (orch_forked(o))	/* as building_run() */
		return -ECHILD;
	if (!o->building)
		return orch_error(o, -EINVAL, "scope outside an orchestration function");
	return fail_now(o, orch_scope_begin(o));
}

PTO_API int pto_scope_end(pto_orch *o)
{
	if (orch_forked(o))
		return -ECHILD;
	if (!o->building || o->scope.depth <= 1)
		return fail_now(o, orch_error(o, -EINVAL,
					      "scope_end without a matching scope_begin"));
	orch_scope_end(o);
	return 0;
}
