// SPDX-License-Identifier: MIT
/* Submit's validation: every check made before anything is claimed. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "orch/submit.h"

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
 * A device orchestrator (o->gm_dev set) refuses another device's GM: its
 * address would name this device's GM at that offset. Untagged passes,
 * and any tag in-process. Out of line, called only for a foreign tag,
 * so validate()'s loop pays a compare or two per tensor (GCC 12 combined
 * the conditions into setcc chains for every tensor otherwise).
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

/* Out of line: a handle submit did not write, or one of another
 * orchestrator's. Never taken as a satisfied dependency. */
static __attribute__((noinline, cold)) int
stale_handle(struct pto_orch *o, uint32_t m, uint32_t j, const struct pto_task *h)
{
	return orch_error(o, -EINVAL,
			  "member %u dep %u: stale or forged task handle (task %llu, check word 0x%x): "
			  "not a task this run submitted",
			  m, j, (unsigned long long)h->task_id, h->slot);
}

/*
 * Pure validation, before anything is claimed. Per tensor, the checks
 * that pass are a few compares: the kernel's exemption from the space
 * rule and the device tag are the same for every tensor, so they are
 * looked up once, and an untagged tensor (dev 0: a HOST ordering key,
 * most tensors on a device) needs no call to other_device(). The walk
 * also counts the TensorMap lookups and inserts infer_deps() will make.
 */
int orch_submit_validate(struct pto_orch *o, struct pto_run *r,
			 const struct submit_req *q, struct submit_scan *sc)
{
	uint64_t bytes = 0, next = atomic_load(&o->next_task_id);
	uint32_t m, j, nt;
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
	/* A worker that runs host callbacks would run nothing (orch.h). */
	if (!q->c->fn && o->host_callbacks)
		return orch_error(o, -EINVAL,
				  "callable without fn: this orchestrator's workers run host callbacks");
	if (!q->c->fn && (o->ops->callback_kinds >> q->wkind & 1))
		return orch_error(o, -EINVAL,
				  "callable without fn: SUB workers run host callbacks");
	/* A HOST tensor given to a device kernel that reads it would fail
	 * only at dispatch; a kernel that uses no address takes any, and
	 * so does a host callback (backend.h, callback_kinds). */
	bad_spaces = o->kernel_bad_spaces;
	if (bad_spaces && ((o->ops->callback_kinds >> q->wkind & 1) ||
			   orch_kernel_tensorless(o->tensorless_kernels,
						  q->c->kernel_id)))
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
			if (h->task_id < r->first_tid || h->task_id >= next ||
			    h->slot != orch_handle_check(h->run_id, h->task_id))
				return stale_handle(o, m, j, h);
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
			if (__builtin_add_overflow(bytes, orch_align_up(t->t.nbytes),
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
