// SPDX-License-Identifier: GPL-2.0-only
/*
 * pto - a resident run's capture state and the lane supervisor's service
 * step (Documentation/capture.md, "The lane supervisor").
 *
 * Only the supervisor calls the lane's producer while the run holds the
 * lane (lane->busy), so the producer's one reservation is this lane's
 * alone. A step copies at most one chunk, between the producer's steps
 * that take lane->lock; it writes acknowledgement lines and its own state,
 * never a slot word.
 */
#include <linux/bitops.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/pto_dump.h>
#include <linux/pto_graph.h>
#include <kunit/visibility.h>
#include "pto_capture_sv.h"
#include "pto_lane.h"
#include "pto_producer.h"

#define PTO_SV_ELEM_SIZE 4	/* PTO_DTYPE_F32 and _I32 */
#define PTO_SV_SCALARS 2

static void pto_sv_free(struct pto_cap_sv *sv)
{
	if (sv)
		kfree(sv->cores);
	kfree(sv);
}

void pto_cap_run_destroy(struct pto_cap_run *run)
{
	u32 i;

	if (!run)
		return;
	for (i = 0; i < PTO_MAX_LANES; i++)
		pto_sv_free(run->sv[i]);
	kfree(run->seq);
	pto_cs_area_free(&run->area);
	kfree(run);
}
EXPORT_SYMBOL_IF_KUNIT(pto_cap_run_destroy);

static bool pto_cap_args_ok(const struct pto_cap_run_args *a)
{
	u32 i;

	if (!a->clusters || a->clusters > PTO_MAX_CLUSTERS || !a->nlanes ||
	    a->nlanes > PTO_MAX_LANES || !a->graph_clusters ||
	    a->graph_clusters >> a->clusters || !a->epochs || !a->ntasks ||
	    !a->src.task)
		return false;
	for (i = 0; i < a->nlanes; i++)
		if (!a->lanes[i] || a->level[i] == PTO_DUMP_OFF ||
		    a->level[i] > PTO_DUMP_LEVEL_MAX)
			return false;
	return true;
}

/*
 * The run's capture state: the area, the cores' phase_seq counters and one
 * supervisor per named lane, each serving the cores of the clusters
 * assigned to it (the k-th cluster of the graph: lane k % nlanes).
 */
struct pto_cap_run *pto_cap_run_create(const struct pto_cap_run_args *a)
{
	struct pto_cap_run *run;
	u32 c, k = 0, l, n;

	if (!pto_cap_args_ok(a))
		return ERR_PTR(-EINVAL);
	run = kzalloc(sizeof(*run), GFP_KERNEL_ACCOUNT);
	if (!run)
		return ERR_PTR(-ENOMEM);
	if (pto_cs_area_alloc(&run->area, a->clusters, PTO_GRAPH_SLOTS))
		goto err;
	run->seq = kcalloc(run->area.ncores, sizeof(*run->seq),
			   GFP_KERNEL_ACCOUNT);
	if (!run->seq)
		goto err;
	run->clusters = a->clusters;
	run->nlanes = a->nlanes;
	run->ntasks = a->ntasks;
	run->run_id = a->run_id;
	run->src = a->src;
	memset(run->lane_of, U8_MAX, sizeof(run->lane_of));
	for (c = 0; c < a->clusters; c++)
		if (a->graph_clusters & BIT_ULL(c))
			run->lane_of[c] = k++ % a->nlanes;
	for (l = 0; l < a->nlanes; l++) {
		struct pto_cap_sv *sv = kzalloc(sizeof(*sv), GFP_KERNEL_ACCOUNT);

		if (!sv)
			goto err;
		run->sv[l] = sv;
		sv->run = run;
		sv->lane = a->lanes[l];
		sv->lane_index = l;
		sv->level = a->level[l];
		sv->open_core = PTO_SV_NO_CORE;
		init_waitqueue_head(&sv->wq);
		sv->cores = kcalloc(PTO_CORES_PER_CLUSTER * DIV_ROUND_UP(k, a->nlanes),
				    sizeof(*sv->cores), GFP_KERNEL_ACCOUNT);
		if (!sv->cores)
			goto err;
		for (c = 0; c < a->clusters; c++) {
			if (run->lane_of[c] != l)
				continue;
			for (n = 0; n < PTO_CORES_PER_CLUSTER; n++)
				sv->cores[sv->ncores++].core =
					c * PTO_CORES_PER_CLUSTER + n;
		}
	}
	/* Full 64 bits, never truncated: no earlier run's line matches. */
	run->run_epoch = atomic64_inc_return(a->epochs);
	return run;
err:
	pto_cap_run_destroy(run);
	return ERR_PTR(-ENOMEM);
}
EXPORT_SYMBOL_IF_KUNIT(pto_cap_run_create);

/* The lane's binding saw an abort: its close fails, release quarantines. */
static void pto_sv_mark_aborted(struct pto_cap_sv *sv)
{
	mutex_lock(&sv->lane->lock);
	sv->lane->cap_aborted = true;
	mutex_unlock(&sv->lane->lock);
}

static void pto_sv_abandon(struct pto_cap_sv *sv)
{
	if (sv->open_core == PTO_SV_NO_CORE)
		return;
	/* Copies are synchronous in a step: no chunk is in flight here. */
	mutex_lock(&sv->lane->lock);
	pto_producer_abandon(sv->lane->prod);
	mutex_unlock(&sv->lane->lock);
	sv->open_core = PTO_SV_NO_CORE;
	sv->stats.abandoned++;
}

static void pto_sv_answer(struct pto_cap_sv *sv, struct pto_sv_core *c,
			  u32 status, u64 cursor)
{
	/* The mock's fault: the answer is computed, never written. */
	if (!sv->drop_acks ||
	    !atomic_add_unless(sv->drop_acks, -1, 0))
		pto_cs_ack(&sv->run->area.acks[c->core], &c->v, status,
			   c->next_arg, cursor);
	c->answered = c->v.tick;
	if (status == PTO_CS_ST_SEALED || status == PTO_CS_ST_ABORTED) {
		c->terminal = true;
		c->obs_tick = 0;
	}
	if (status == PTO_CS_ST_SEALED)
		sv->stats.sealed++;
	else if (status == PTO_CS_ST_ABORTED)
		sv->stats.aborted++;
	else if (status == PTO_CS_ST_WOULDBLOCK)
		sv->stats.wouldblock++;
}

/* Abort @c's phase: its reservation abandoned, Aborted with its identity. */
static void pto_sv_abort(struct pto_cap_sv *sv, u32 i)
{
	struct pto_sv_core *c = &sv->cores[i];

	if (sv->open_core == i)
		pto_sv_abandon(sv);
	pto_sv_answer(sv, c, PTO_CS_ST_ABORTED, 0);
}

static bool pto_sv_queued(const struct pto_sv_core *c)
{
	return c->obs_tick && !c->terminal;
}

void pto_sv_settle(struct pto_cap_sv *sv)
{
	bool aborted = sv->open_core != PTO_SV_NO_CORE;
	u32 i;

	pto_sv_abandon(sv);
	for (i = 0; i < sv->ncores; i++) {
		if (!pto_sv_queued(&sv->cores[i]))
			continue;
		pto_sv_abort(sv, i);
		aborted = true;
	}
	if (aborted)
		pto_sv_mark_aborted(sv);
	sv->settled = true;
}
EXPORT_SYMBOL_IF_KUNIT(pto_sv_settle);

/* Full identity: this run, a task of the graph, a slot of the cluster. */
static bool pto_sv_identity_ok(struct pto_cap_sv *sv,
			       const struct pto_sv_core *c,
			       const struct pto_capture_view *v)
{
	struct pto_cap_run *run = sv->run;
	struct pto_sv_task tk;

	return v->req.run_epoch == run->run_epoch &&
	       v->req.task_id < run->ntasks &&
	       v->req.slot / PTO_GRAPH_SLOTS ==
	       c->core / PTO_CORES_PER_CLUSTER &&
	       run->src.task(run->src.priv, v->req.task_id, &tk);
}

/*
 * One look at @c's request line. A new phase (another task or phase_seq)
 * is stamped with the lane's next observation tick; a republication of the
 * queued one updates the view and keeps its tick.
 */
static bool pto_sv_scan(struct pto_cap_sv *sv, u32 i)
{
	struct pto_sv_core *c = &sv->cores[i];
	struct pto_capture_view v = {};
	bool ok = pto_cs_accept(&sv->run->area, c->core, c->last_tick, &v);

	if (!v.tick)
		return false;	/* nothing new */
	c->last_tick = v.tick;
	if (!ok || !pto_sv_identity_ok(sv, c, &v)) {
		sv->stats.bad++;
		return true;
	}
	if (c->v.tick && v.req.task_id == c->v.req.task_id &&
	    v.req.phase_seq == c->v.req.phase_seq &&
	    v.req.run_epoch == c->v.req.run_epoch) {
		/* An answered phase is not reopened by a stray republish. */
		if (!c->terminal)
			c->v = v;
		return true;
	}
	/* A new phase: the last one cannot keep a reservation. */
	if (sv->open_core == i)
		pto_sv_abandon(sv);
	c->v = v;
	c->obs_tick = ++sv->observe;
	c->answered = 0;
	c->next_arg = 0;
	c->terminal = false;
	return true;
}

static u32 pto_sv_role(u32 graph_role)
{
	switch (graph_role) {
	case PTO_GRAPH_ROLE_OUT:
		return PTO_DUMP_ROLE_OUTPUT;
	case PTO_GRAPH_ROLE_INOUT:
		return PTO_DUMP_ROLE_INOUT;
	default:
		return PTO_DUMP_ROLE_INPUT;
	}
}

/* A scalar is read as the type of the task's input tensors. */
static u32 pto_sv_scalar_dtype(const struct pto_graph_task *t)
{
	u32 k;

	for (k = 0; k < PTO_PAYLOAD_TENSORS; k++)
		if ((t->t[k].role == PTO_GRAPH_ROLE_IN ||
		     t->t[k].role == PTO_GRAPH_ROLE_INOUT) &&
		    t->t[k].t.dtype == PTO_DTYPE_F32)
			return PTO_DTYPE_F32;
	return PTO_DTYPE_I32;
}

/*
 * Argument @n of @tk at @phase, if the level selects it: tensor slots
 * first (numbered by slot), then scalars; BEFORE takes IN / INOUT tensors
 * and scalars, AFTER OUT / INOUT tensors. PARTIAL only marked, HYBRID
 * every record but payloads only for marked, FULL everything.
 */
static bool pto_sv_arg(const struct pto_cap_sv *sv,
		       const struct pto_capture_view *v,
		       const struct pto_sv_task *tk, u32 n,
		       struct pto_dump_arg *arg)
{
	const struct pto_graph_task *t = tk->t;
	struct pto_dump_record *rec = &arg->rec;
	bool before = v->req.phase == PTO_CS_BEFORE, marked;
	u32 j, role = PTO_GRAPH_ROLE_IN;

	if (n < PTO_PAYLOAD_TENSORS) {
		role = t->t[n].role;
		if (role == PTO_GRAPH_ROLE_NONE || !tk->src[n] ||
		    (role == PTO_GRAPH_ROLE_IN && !before) ||
		    (role == PTO_GRAPH_ROLE_OUT && before))
			return false;
		marked = t->t[n].flags & PTO_GRAPH_ARG_DUMP;
	} else {
		if (!before || n - PTO_PAYLOAD_TENSORS >= tk->nscalars)
			return false;
		marked = t->flags & PTO_GRAPH_TASK_DUMP_SCALARS;
	}
	if (sv->level == PTO_DUMP_PARTIAL && !marked)
		return false;

	memset(arg, 0, sizeof(*arg));
	rec->task_id = v->req.task_id;
	rec->run_id = sv->run->run_id;
	for (j = 0; j < PTO_DUMP_MAX_FUNCS; j++)
		rec->func_id[j] = t->active_mask & BIT(j) ? t->func_id[j] :
				  PTO_DUMP_FUNC_NONE;
	rec->arg_index = n;
	rec->role = pto_sv_role(role);
	rec->stage = before ? PTO_DUMP_BEFORE_DISPATCH :
			      PTO_DUMP_AFTER_COMPLETION;
	arg->esize = PTO_SV_ELEM_SIZE;
	if (n >= PTO_PAYLOAD_TENSORS) {
		rec->kind = PTO_DUMP_KIND_SCALAR;
		rec->dtype = pto_sv_scalar_dtype(t);
		rec->data = t->scalar[n - PTO_PAYLOAD_TENSORS];
		return true;
	}
	rec->kind = PTO_DUMP_KIND_TENSOR;
	rec->dtype = t->t[n].t.dtype;
	rec->rank = t->t[n].t.rank;
	for (j = 0; j < PTO_DUMP_MAX_RANK && j < rec->rank; j++) {
		rec->shape[j] = t->t[n].t.shape[j];
		rec->strides[j] = t->t[n].t.strides[j];
	}
	if (rec->rank == 1 && rec->strides[0] == 1)
		rec->flags |= PTO_DUMP_REC_CONTIGUOUS;
	arg->src = tk->src[n];
	arg->payload = sv->level == PTO_DUMP_FULL || marked;
	return true;
}

/* The first selected argument from @n on, or false: the phase is done. */
static bool pto_sv_next(const struct pto_cap_sv *sv,
			const struct pto_capture_view *v,
			const struct pto_sv_task *tk, u32 *n,
			struct pto_dump_arg *arg)
{
	for (; *n < PTO_PAYLOAD_TENSORS + PTO_SV_SCALARS; (*n)++)
		if (pto_sv_arg(sv, v, tk, *n, arg))
			return true;
	return false;
}

/*
 * One chunk of the open reservation (unlocked: nothing else touches it
 * before commit), committed once copied. Returns the cursor to echo.
 */
static u64 pto_sv_copy(struct pto_cap_sv *sv, struct pto_sv_core *c)
{
	struct pto_producer *p = sv->lane->prod;
	u64 n = pto_producer_copy_chunk(p, PTO_SV_CHUNK);

	sv->stats.chunks++;
	sv->stats.bytes += n;
	if (!pto_producer_copied(p))
		return p->res.written;
	mutex_lock(&sv->lane->lock);
	pto_producer_commit(p);
	mutex_unlock(&sv->lane->lock);
	sv->open_core = PTO_SV_NO_CORE;
	sv->stats.committed++;
	c->next_arg++;
	return 0;
}

/*
 * Serve @c's request by one chunk: continue its open reservation, or
 * open one for its next selected argument (a refused one is accounted
 * once and skipped); then answer InProgress, or Sealed when no selected
 * argument is left, or WouldBlock with nothing accounted.
 */
static void pto_sv_serve(struct pto_cap_sv *sv, u32 i)
{
	struct pto_sv_core *c = &sv->cores[i];
	struct pto_producer *p = sv->lane->prod;
	struct pto_cap_run *run = sv->run;
	enum pto_begin_why why;
	struct pto_dump_arg arg;
	struct pto_sv_task tk;
	enum pto_begin got;
	u64 cursor;

	if (!run->src.task(run->src.priv, c->v.req.task_id, &tk)) {
		pto_sv_abort(sv, i);
		pto_sv_mark_aborted(sv);
		return;
	}
	if (sv->open_core == i) {
		cursor = pto_sv_copy(sv, c);
		goto answer;
	}
	for (;;) {
		if (!pto_sv_next(sv, &c->v, &tk, &c->next_arg, &arg)) {
			pto_sv_answer(sv, c, PTO_CS_ST_SEALED, 0);
			return;
		}
		mutex_lock(&sv->lane->lock);
		got = pto_producer_try_begin(p, &arg, &why);
		mutex_unlock(&sv->lane->lock);
		if (got == PTO_BEGIN_ACCEPTED)
			break;
		if (got == PTO_BEGIN_WOULDBLOCK) {
			pto_sv_answer(sv, c, PTO_CS_ST_WOULDBLOCK, 0);
			return;
		}
		sv->stats.refused++;
		c->next_arg++;
	}
	sv->open_core = i;
	cursor = pto_sv_copy(sv, c);
answer:
	if (sv->open_core == PTO_SV_NO_CORE &&
	    !pto_sv_next(sv, &c->v, &tk, &c->next_arg, &arg))
		pto_sv_answer(sv, c, PTO_CS_ST_SEALED, 0);
	else
		pto_sv_answer(sv, c, PTO_CS_ST_INPROGRESS, cursor);
}

/*
 * Whose turn: the open reservation's owner (it keeps advancing, never
 * yields), else the queued phase observed first. Either is served only
 * once it republished (its newest tick unanswered).
 */
static u32 pto_sv_pick(const struct pto_cap_sv *sv)
{
	u32 i, head = PTO_SV_NO_CORE;

	if (sv->open_core != PTO_SV_NO_CORE)
		head = sv->open_core;
	else
		for (i = 0; i < sv->ncores; i++)
			if (pto_sv_queued(&sv->cores[i]) &&
			    (head == PTO_SV_NO_CORE ||
			     sv->cores[i].obs_tick < sv->cores[head].obs_tick))
				head = i;
	if (head == PTO_SV_NO_CORE ||
	    sv->cores[head].answered == sv->cores[head].v.tick)
		return PTO_SV_NO_CORE;
	return head;
}

bool pto_sv_step(struct pto_cap_sv *sv)
{
	struct pto_cap_run *run = sv->run;
	bool work = false;
	u32 i, turn;

	sv->stats.steps++;
	for (i = 0; i < sv->ncores; i++)
		work |= pto_sv_scan(sv, i);
	if (READ_ONCE(sv->stop) || READ_ONCE(run->fatal)) {
		for (i = 0; i < sv->ncores && !work; i++)
			work = pto_sv_queued(&sv->cores[i]);
		pto_sv_settle(sv);
		return work;
	}
	for (i = 0; i < sv->ncores; i++) {
		if (pto_sv_queued(&sv->cores[i]) &&
		    pto_cs_slot_aborted(&run->area, sv->cores[i].v.req.slot)) {
			pto_sv_abort(sv, i);
			pto_sv_mark_aborted(sv);
			work = true;
		}
	}
	turn = pto_sv_pick(sv);
	if (turn != PTO_SV_NO_CORE) {
		pto_sv_serve(sv, turn);
		work = true;
	}
	/* Not its turn, or the reservation is another's: nothing accounted. */
	for (i = 0; i < sv->ncores; i++) {
		struct pto_sv_core *c = &sv->cores[i];

		if (i == turn || !pto_sv_queued(c) || c->answered == c->v.tick)
			continue;
		pto_sv_answer(sv, c, PTO_CS_ST_WOULDBLOCK, 0);
		work = true;
	}
	return work;
}
EXPORT_SYMBOL_IF_KUNIT(pto_sv_step);
