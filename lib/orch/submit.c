// SPDX-License-Identifier: MIT
/*
 * Submit (seed 001 §2-§4, §8). Every variant - next-level single, group,
 * sub, sub group - goes through submit_impl, in §8's ownership order:
 *
 *   slot claim -> run-slot registration -> scope registration -> charge
 *   -> (task data) -> TensorMap lookups -> cleanup journal -> TensorMap
 *   inserts -> dependency wiring -> publication
 *
 * Failure rules ("a failure here leaves ..."):
 *  - claim fails: nothing was taken.
 *  - registration fails: the slot is not the run's, so nobody else can
 *    find it: it is marked CONSUMED and returned to the ring right here.
 *  - anything later: the slot stays BUILDING (or FAILED with
 *    failure_propagation_pending if a producer claimed it meanwhile), is
 *    owned by the run, and the run's cancellation reclaims it. The scope
 *    reference is registered before it is charged, every output key is in
 *    the journal before it is in the TensorMap, and every retained
 *    producer is recorded in the slot as its reference is taken, so
 *    cancellation releases exactly what was taken.
 *
 * Orch thread only. The steady state allocates nothing: slot, member and
 * edge arrays keep their capacity across slot reuse, and no system call
 * is made except when the ring alloc has to wait.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "orch/orch_internal.h"

struct submit_req {
	uint8_t kind;			/* ORCH_NEXT_LEVEL / ORCH_SUB */
	bool is_group;			/* all-or-nothing next-level group */
	bool shared;			/* SPMD: every member has args[0] */
	uint32_t n;
	uint32_t wkind;
	const struct pto_callable *c;
	const struct pto_call_config *cfg;
	struct pto_task_args *const *args;
	const int32_t *widx;		/* per member, or NULL: any of wkind */
};

/* What validate() learns on its walk over the tensors, for later steps
 * to skip walks that would find nothing. */
struct submit_scan {
	uint64_t heap_bytes;	/* auto-allocated OUTPUTs, aligned */
	uint32_t nlookup;	/* INPUT / INOUT tensors */
	uint32_t ninsert;	/* OUTPUT / INOUT / OUTPUT_EXISTING tensors */
};

static uint64_t align_up(uint64_t v)
{
	return (v + PTO_HEAP_ALIGN - 1) & ~(uint64_t)(PTO_HEAP_ALIGN - 1);
}

static void tensor_key(const struct pto_run *r, const struct pto_tensor *t,
		       struct orch_key *k)
{
	k->run_id = r->id;
	if (t->space == PTO_SPACE_HOST) {
		k->space = PTO_SPACE_HOST;
		k->obj = 0;
		k->off = t->data;
	} else {
		/*
		 * Not the device tag: on a device orchestrator every GM
		 * tensor validate() lets through is this device's, and
		 * in-process a tagged and an untagged (0) view of one
		 * buffer must stay one key. Two devices' buffers at one
		 * address then share a key in-process: extra ordering,
		 * never a lost dependency.
		 */
		k->space = t->space;
		k->obj = t->obj;
		k->off = t->offset;
	}
}

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
 * The run being built, or an error: -EINVAL outside an orchestration
 * function (a usage error, as pto_scope_begin() there), -ECANCELED once
 * the run is doomed by an earlier error or the orchestrator was aborted
 * (orch.h; the abort is the run's construction error then), -ECHILD in a
 * forked child. Inline, the refusals out of line: every submit asks (one
 * relaxed load for the abort: pto_orch_abort() may run on any thread;
 * one load of a flag for the fork where none happened).
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

static const char *space_name(uint32_t space)
{
	return space == PTO_SPACE_HOST ? "HOST" : "GM";
}

/* Out of line: validate()'s loop keeps one bit test per tensor. */
static __attribute__((noinline, cold)) int
bad_space(struct pto_orch *o, const struct pto_callable *c, uint32_t m,
	  uint32_t j, const struct pto_arg_tensor *t)
{
	return orch_error(o, -EINVAL,
			  "member %u tensor %u is a %s tensor, and kernel %llu addresses its tensors in %s only (a kernel that uses no tensor address may take any tensor as an ordering key)",
			  m, j, space_name(t->t.space),
			  (unsigned long long)c->kernel_id,
			  space_name(o->rings[0].heap.space));
}

/* Out of line, like bad_space: validate()'s check stays one compare. */
static __attribute__((noinline, cold)) int
bad_output_size(struct pto_orch *o, uint32_t m, uint32_t j, uint64_t nbytes)
{
	if (!nbytes)
		return orch_error(o, -EINVAL,
				  "member %u tensor %u: auto-allocated OUTPUT needs a size",
				  m, j);
	return orch_error(o, -E2BIG,
			  "member %u tensor %u: auto-allocated OUTPUT of %llu bytes is too large (at most 2^48)",
			  m, j, (unsigned long long)nbytes);
}

/*
 * An orchestrator on a device (o->gm_dev set) refuses another device's
 * GM: its address would name this device's GM at the same offset (device
 * addresses repeat), and the task would touch the wrong memory. Untagged
 * (0, see pto_tensor.dev) passes, and so does any tag in-process (gm_dev
 * 0). Out of line, called only for a tagged tensor whose tag is not the
 * orchestrator's, so that untagged tensors and the device's own cost
 * validate()'s loop a compare or two: written there as one condition of
 * all the terms, or as nested ifs, with or without __builtin_expect, GCC
 * 12 evaluated three of them with setcc and and-ed them for every
 * tensor (ifcombine).
 */
static __attribute__((noinline)) int
other_device(struct pto_orch *o, uint32_t m, uint32_t j,
	     const struct pto_arg_tensor *t)
{
	/* t->t.dev != 0: validate() passes untagged tensors itself. */
	if (!o->gm_dev || t->t.space != PTO_SPACE_GM)
		return 0;
	return orch_error(o, -EXDEV,
			  "member %u tensor %u is GM of device %u, this orchestrator runs on device %u",
			  m, j, t->t.dev - 1, o->gm_dev - 1);
}

/*
 * A dep's retain and reserved bytes, read as one word: 0 or 1 when the
 * dep is valid (retain is its low byte on x86-64, the only architecture
 * pto builds for), so a valid dep costs one load and one compare.
 */
_Static_assert(offsetof(struct pto_dep, reserved) ==
	       offsetof(struct pto_dep, retain) + 1 &&
	       sizeof(struct pto_dep) == offsetof(struct pto_dep, retain) + 8,
	       "pto_dep: retain and reserved[] are its last 8 bytes");
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "dep_tail() takes retain as the word's low byte");

static inline uint64_t dep_tail(const struct pto_dep *d)
{
	uint64_t w;

	memcpy(&w, (const unsigned char *)d + offsetof(struct pto_dep, retain),
	       sizeof(w));
	return w;
}

/* Member @m's dep @j has a retain other than 0 / 1 or a reserved byte
 * set (dep_tail() > 1): say which (pto/orch.h). */
static __attribute__((noinline, cold)) int
bad_dep(struct pto_orch *o, uint32_t m, uint32_t j, const struct pto_dep *d)
{
	uint32_t i;

	if (d->retain > 1)
		return orch_error(o, -EINVAL,
				  "member %u dep %u: retain %u is neither 0 nor 1",
				  m, j, d->retain);
	for (i = 0; i < sizeof(d->reserved); i++)
		if (d->reserved[i])
			break;
	return orch_error(o, -EINVAL,
			  "member %u dep %u: reserved[%u] is not zero", m, j, i);
}

/*
 * An argument tensor's tag, dump mark and pad bytes, read as one word: a
 * valid one has a tag below PTO_TAG_NR in the low byte and zero above the
 * dump mark (pto_args_add_tensor() writes them so), one load per tensor.
 */
_Static_assert(offsetof(struct pto_arg_tensor, dump) ==
	       offsetof(struct pto_arg_tensor, tag) + 1 &&
	       offsetof(struct pto_arg_tensor, pad) ==
	       offsetof(struct pto_arg_tensor, tag) + 2 &&
	       sizeof(struct pto_arg_tensor) ==
	       offsetof(struct pto_arg_tensor, tag) + 8,
	       "pto_arg_tensor: tag, dump and pad[] are its last 8 bytes");

static inline uint64_t arg_tail(const struct pto_arg_tensor *t)
{
	uint64_t w;

	memcpy(&w, &t->tag, sizeof(w));
	return w;
}

/* Member @m's tensor @j has a bad tag or space, or a pad byte set. */
static __attribute__((noinline, cold)) int
bad_arg(struct pto_orch *o, uint32_t m, uint32_t j,
	const struct pto_arg_tensor *t)
{
	uint32_t i;

	if (t->tag >= PTO_TAG_NR || t->t.space >= PTO_SPACE_NR)
		return orch_error(o, -EINVAL, "bad tag or space");
	for (i = 0; i < sizeof(t->pad); i++)
		if (t->pad[i])
			break;
	return orch_error(o, -EINVAL, "member %u tensor %u: pad[%u] is not zero",
			  m, j, i);
}

/* Member @m's dep @j names a handle whose pad is set: not one submit
 * wrote (it writes 0), or one built by hand. */
static __attribute__((noinline, cold)) int
bad_handle(struct pto_orch *o, uint32_t m, uint32_t j)
{
	return orch_error(o, -EINVAL,
			  "member %u dep %u: task handle pad is not zero", m, j);
}

/* Flags and reserved words of a caller's call config (pto/orch.h). */
static int check_call_config(struct pto_orch *o,
			     const struct pto_call_config *cfg)
{
	uint32_t i;

	if (cfg->reserved0)
		return orch_error(o, -EINVAL, "call config: reserved0 is not zero");
	if (cfg->flags & ~PTO_CALL_FLAGS_VALID)
		return orch_error(o, -EINVAL, "call config: unknown flags 0x%x",
				  cfg->flags & ~PTO_CALL_FLAGS_VALID);
	for (i = 0; i < sizeof(cfg->reserved) / sizeof(cfg->reserved[0]); i++)
		if (cfg->reserved[i])
			return orch_error(o, -EINVAL,
					  "call config: reserved[%u] is not zero",
					  i);
	return 0;
}

/*
 * Pure validation, before anything is claimed. Per tensor, the checks
 * that pass are a few compares: the kernel's exemption from the space
 * rule and the device tag are the same for every tensor, so they are
 * looked up once, and an untagged tensor (dev 0: a HOST ordering key,
 * most tensors on a device) needs no call to other_device(). The walk
 * also counts the TensorMap lookups and inserts infer_deps() will make.
 */
static int validate(struct pto_orch *o, struct pto_run *r,
		    const struct submit_req *q, struct submit_scan *sc)
{
	uint64_t bytes = 0, next = atomic_load(&o->next_task_id);
	uint32_t m, j, nt, total = PTO_MAX_RING_DEPTH * o->rings[0].window;
	uint32_t nargs = q->shared ? 1 : q->n;	/* distinct args objects */
	uint32_t bad_spaces, gm_dev = o->gm_dev, nlookup = 0, ninsert = 0;
	const struct pto_arg_tensor *ts;

	if (!q->c || q->n == 0 || !q->args)
		return orch_error(o, -EINVAL, "missing callable or arguments");
	if (q->cfg) {
		int err = check_call_config(o, q->cfg);

		if (err)
			return err;
	}
	/* A backend that runs host callbacks would run nothing (orch.h). */
	if (!q->c->fn && o->host_callbacks)
		return orch_error(o, -EINVAL,
				  "callable without fn: this orchestrator's workers run host callbacks");
	/* A HOST tensor given to a device kernel that reads it would fail
	 * only at dispatch; a kernel that uses no address takes any. */
	bad_spaces = o->kernel_bad_spaces;
	if (bad_spaces &&
	    orch_kernel_tensorless(o->tensorless_kernels, q->c->kernel_id))
		bad_spaces = 0;
	for (m = 0; m < nargs; m++) {
		const struct pto_task_args *a = q->args[m];

		if (!a)
			return orch_error(o, -EINVAL, "member %u has no args", m);
		for (j = 0; j < a->ndeps; j++) {
			const struct pto_dep *d = &a->deps[j];
			const struct pto_task *h = &d->h;

			if (h->run_id != r->id)
				return orch_error(o, -EINVAL,
						  "task handle from another run "
						  "(run %llu, building run %llu)",
						  (unsigned long long)h->run_id,
						  (unsigned long long)r->id);
			if (h->task_id == 0 || h->task_id >= next ||
			    h->slot >= total)
				return orch_error(o, -EINVAL,
						  "task handle names no submitted task");
			if (h->pad)
				return bad_handle(o, m, j);
			/* Built by hand (the fields are public): a retain
			 * of 2 would be taken as 1, and a later libpto may
			 * give the reserved bytes a meaning. */
			if (dep_tail(d) > 1)
				return bad_dep(o, m, j, d);
		}
		/* Locals: other_device() is a call the loop survives, and
		 * *a would be reloaded after it at every step. */
		ts = a->tensors;
		nt = a->ntensors;
		for (j = 0; j < nt; j++) {
			const struct pto_arg_tensor *t = &ts[j];
			uint64_t tail = arg_tail(t);
			uint8_t tag = (uint8_t)tail;

			/* The pad bytes too: the fields are public, and a
			 * later libpto may give them a meaning. */
			if (tag >= PTO_TAG_NR || t->t.space >= PTO_SPACE_NR ||
			    tail >> 16)
				return bad_arg(o, m, j, t);
			nlookup += tag == PTO_INPUT || tag == PTO_INOUT;
			ninsert += tag != PTO_INPUT && tag != PTO_NO_DEP;
			/* Not auto-allocated (that one is carved from the
			 * heap: on a device, its GM, whatever it names). */
			if (tag != PTO_OUTPUT || t->t.data) {
				/* Tagged, and not with ours: on a device,
				 * another device's (untagged ones pass). */
				if (t->t.dev && t->t.dev != gm_dev) {
					int err = other_device(o, m, j, t);

					if (err)
						return err;
				}
				if (bad_spaces >> t->t.space & 1)
					return bad_space(o, q->c, m, j, t);
				continue;
			}
			if (!t->t.nbytes || t->t.nbytes > (1ULL << 48))
				return bad_output_size(o, m, j, t->t.nbytes);
			/* Each term is below 2^49; the sum may still wrap. */
			if (__builtin_add_overflow(bytes, align_up(t->t.nbytes),
						   &bytes))
				return orch_error(o, -E2BIG,
						  "auto-allocated OUTPUTs: total size overflows");
		}
	}
	sc->heap_bytes = bytes;
	sc->nlookup = nlookup;
	sc->ninsert = ninsert;
	return 0;
}

/* Slot claim + run-slot registration (the ownership boundary). */
static int claim_slot(struct pto_orch *o, struct pto_run *r, uint8_t kind,
		      uint64_t bytes, struct orch_alloc_result *ar, bool count)
{
	struct orch_slot *s;
	uint64_t tid;
	int err;

	/* The pending READY list is flushed within ready_batch claims of its
	 * first entry, before this claim may reissue one of its slots. */
	orch_ready_check(o, atomic_load_explicit(&o->next_task_id,
						 memory_order_relaxed));
	err = orch_ring_alloc(o, orch_ring_for_depth(o->scope.depth), bytes, ar);
	if (err)
		return err;
	s = ar->slot;
	/* The orch thread is the only writer of next_task_id (and its only
	 * reader, validate()): a load and a store, no locked RMW. */
	tid = atomic_load_explicit(&o->next_task_id, memory_order_relaxed);
	atomic_store_explicit(&o->next_task_id, tid + 1, memory_order_relaxed);
	/* Identity is written under the lock: a stale reference to this
	 * slot's previous occupant (a consumer list entry) reads task_id
	 * under it to tell it is stale. */
	orch_lock(&s->fanout_mu);
	orch_slot_reset(s);
	s->task_id = tid;
	s->run = r;
	s->run_id = r->id;
	s->kind = kind;
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
 * that every carved buffer is a key of its own: a GM-declared OUTPUT on
 * a HOST heap used to keep (GM, 0, 0, 0), one key for all of them.
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
			   const struct orch_alloc_result *ar, uint64_t bytes)
{
	struct orch_heap *heap = &o->rings[s->ring].heap;
	uint64_t cursor = ar->heap_off;
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
			cursor += align_up(t->t.nbytes);
			/* Hand the address back so later tasks can name it. */
			q->args[m]->tensors[j].t = t->t;
		}
	}
	atomic_store_explicit(&s->members_left, q->n, memory_order_relaxed);
	return 0;
}

/* Collect a producer, deduplicated (retention wins). A reference whose
 * slot now holds another task is already consumed: satisfied. task_id is
 * written by this thread only, so reading it here needs no lock.
 * Inlined: called for every producer reference, and as a call its
 * register saves and restores were a third of its instructions. */
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
static int infer_deps(struct pto_orch *o, struct pto_run *r,
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

			err = add_producer(o, s, orch_slot_at(o, d->h.slot),
					   d->h.task_id, d->retain);
			if (err)
				return err;
		}
	}
	/*
	 * One TensorMap hold for the whole walk (erase, on a consuming
	 * thread, sees this task's mappings all or nothing), taken at the
	 * first tensor that has a key: a task without one (ordering only,
	 * or NO_DEP tensors only) takes no lock.
	 *
	 * Every lookup before any insert of this task: an INPUT named after
	 * an OUTPUT of the same key (k(dst, src) with dst == src, or one
	 * group member writing what another reads) would otherwise find
	 * this task's own mapping, and the edge on the previous writer it
	 * replaced would be lost. A failure here has journaled and
	 * published nothing.
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
			tensor_key(r, &mb->t[j].t, &k);
			p = orch_tm_lookup_locked(o, &k);
			if (p.s)
				err = add_producer(o, s, p.s, p.tid, true);
		}
	}
	/*
	 * Then the outputs, in the same hold. An INOUT's key is hashed again
	 * here (orch_tm_insert_locked), after its lookup above hashed it:
	 * carrying the lookup's hash over would take a store, a count and a
	 * tag test on the lookup side and a tag test, a count and a load
	 * here, about the hash's own dozen instructions for an INOUT, and
	 * two more for every INPUT and OUTPUT, which do not need it. The
	 * lookups stay all before the inserts either way.
	 */
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
			tensor_key(r, &mb->t[j].t, &k);
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
static int wire(struct pto_orch *o, struct orch_slot *s, int32_t *live_out)
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
		 * An ordering-only edge (add_dep_wait) on a producer that has
		 * completed, or is gone, attaches nothing and counts no live
		 * fanin: the outcome the locked path below reaches, without
		 * the lock (a join's waits name producers the workers are
		 * completing; their locks were a third of its submit time).
		 * Acquire pairs with the release stores of COMPLETED and
		 * CONSUMED. COMPLETED only moves on to CONSUMED and FREE, never
		 * to FAILED, so the answer cannot go stale; task_id is written
		 * by this thread alone (the orch thread reissues slots), so the
		 * check names the same task as under the lock.
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

/*
 * Publication: fanin_count and BUILDING -> PENDING/READY under one lock.
 * A producer that completed first bumped fanin_released and is counted
 * here; one that completes later reads the published count. If a
 * producer's failure claimed the slot meanwhile, the claim stopped at
 * FAILED and this thread, done wiring, propagates it.
 */
static void publish(struct pto_orch *o, struct orch_slot *s, int32_t live)
{
	bool ready = false, propagate = false;

	/*
	 * No live producer (an independent task, or one whose producers
	 * have all completed): wire() appended @s to no consumer list (it
	 * appends one entry per live fanin), so no thread but this one can
	 * act on @s - no release can count a fanin, no failure claim can
	 * poison it - and the lock would order nothing. Every other access
	 * to a BUILDING slot backs off without a write: a stale reference
	 * to the previous occupant (consumer list, cancellation of another
	 * run) checks task_id or run under fanout_mu, and the claim wrote
	 * both under that lock. The state is BUILDING unless this thread's
	 * own wiring found a FAILED producer (then the locked path below
	 * propagates). Release: the scheduler that routes and claims @s
	 * acquires its state, and so sees the task data written before,
	 * as the unlock's release ordered it on the locked path. Two
	 * locked instructions per such task fewer.
	 */
	if (!live && atomic_load_explicit(&s->state, memory_order_relaxed) ==
		     ORCH_BUILDING) {
		/* fanin_count: 0 since the claim (orch_slot_reset). */
		atomic_store_explicit(&s->state, ORCH_READY, memory_order_release);
		orch_ready_defer(o, s);
		return;
	}
	orch_lock(&s->fanout_mu);
	if (atomic_load_explicit(&s->state, memory_order_relaxed) == ORCH_BUILDING) {
		s->fanin_count = live;
		ready = s->fanin_released >= live;
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
	struct orch_alloc_result ar = { 0 };	/* claim_slot fills it; LTO cannot see that */
	struct submit_scan sc = { 0 };
	struct orch_slot *s;
	struct pto_run *r;
	int32_t live = 0;
	int err;

	err = building_run(o, &r);
	if (err)
		return err;
	err = validate(o, r, q, &sc);
	if (err)
		goto fail_early;
	err = claim_slot(o, r, q->kind, sc.heap_bytes, &ar, true);
	if (err)
		goto fail_early;
	s = ar.slot;
	err = scope_and_charge(o, s);
	if (!err)
		err = prepare_members(o, s, q, &ar, sc.heap_bytes);
	if (!err)
		err = infer_deps(o, r, s, q, &sc);
	if (!err)
		err = wire(o, s, &live);
	if (err)
		goto fail_owned;
	orch_may_fail(o, ORCH_TP_BEFORE_PUBLISH, s);
	publish(o, s, live);
	if (out) {
		out->run_id = r->id;
		out->task_id = s->task_id;
		out->slot = s->idx;
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
 * alloc (§8b): a synthetic slot, COMPLETED from birth, owning a heap slab.
 * Same ownership order; everything fallible happens while BUILDING, and the
 * self-release stand-in is published last, with the COMPLETED state.
 */
PTO_API int pto_alloc(pto_orch *o, uint64_t nbytes, struct pto_tensor *out,
		      struct pto_task *handle)
{
	struct orch_alloc_result ar = { 0 };	/* claim_slot fills it; LTO cannot see that */
	struct orch_heap *heap;
	struct pto_tensor t;
	struct orch_slot *s;
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
	err = claim_slot(o, r, ORCH_ALLOC, nbytes, &ar, false);
	if (err)
		return fail_now(o, err);
	s = ar.slot;
	heap = &o->rings[s->ring].heap;
	err = scope_and_charge(o, s);
	if (err)
		return fail_now(o, err);

	memset(&t, 0, sizeof(t));
	t.nbytes = nbytes;
	heap_tensor(heap, ar.heap_off, &t);
	tensor_key(r, &t, &k);
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
		handle->slot = s->idx;
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
