// SPDX-License-Identifier: GPL-2.0-only
/*
 * pto - the mock's on-core scheduler (the resident route). The cores of
 * a graph's clusters schedule it among themselves: a core takes a
 * subtask of the oldest task waiting for it in its cluster's
 * PTO_GRAPH_SLOTS pending slots, or claims the next ready task into a free slot; it runs
 * the subtask's built-in kernel and publishes its end, and the subtask
 * that completes a task releases its successors. No host thread touches
 * a task. The steps (claim, finish, leave) take the graph and the core
 * id only, so KUnit drives them without threads.
 */
#include <linux/bitops.h>
#include <linux/sched.h>
#include <linux/timekeeping.h>
#include <kunit/visibility.h>
#include "pto_core.h"
#include "pto_capture_sv.h"
#include "pto_graph.h"
#include "pto_graph_capture.h"
#include "pto_mock.h"
#include "pto_mock_lcache.h"
#include "pto_trace.h"

void pto_graph_start(struct pto_graph *g, u64 now)
{
	g->start_ns = now;
}
EXPORT_SYMBOL_IF_KUNIT(pto_graph_start);

static struct pto_gslot *pto_graph_cluster(struct pto_graph *g,
					   unsigned int core_id)
{
	unsigned int c = core_id / PTO_CORES_PER_CLUSTER;

	if (c >= 64 || !(g->clusters & BIT_ULL(c)))
		return NULL;
	return g->slots[c];
}

/*
 * A single-AIV task runs on either AIV of its cluster: its slot's mask
 * names one AIV until a core takes the subtask, and the other AIV may
 * take it while it is unstarted (the scheduler route's pto_on_kind()
 * placement). Does the core of @bit have a subtask waiting in @sl?
 * Under pto_graph.lock, or lockless with READ_ONCE for the park
 * re-check (pto_graph_has_work()).
 */
static bool pto_gslot_wants(u8 mask, u8 started, u8 bit)
{
	const u8 aivs = PTO_GRAPH_AIV0 | PTO_GRAPH_AIV1;

	if (mask & bit & ~started)
		return true;
	return !started && (bit & aivs) && (mask == PTO_GRAPH_AIV0 ||
					    mask == PTO_GRAPH_AIV1);
}

/*
 * The oldest placed slot of @slots that wants @bit, or PTO_GRAPH_SLOTS.
 * A (s32) difference of the stamps: slots that want one core hold tasks
 * placed while that core ran one subtask, never 2^31 placements apart.
 */
static unsigned int pto_graph_oldest(const struct pto_gslot *slots, u8 bit)
{
	unsigned int s, best = PTO_GRAPH_SLOTS;

	for (s = 0; s < PTO_GRAPH_SLOTS; s++) {
		if (!pto_gslot_wants(slots[s].mask, slots[s].started, bit))
			continue;
		if (best == PTO_GRAPH_SLOTS ||
		    (s32)(slots[s].seq - slots[best].seq) < 0)
			best = s;
	}
	return best;
}

/*
 * Take a subtask for @core_id: the one waiting in the oldest placed slot
 * of its cluster, else claim ready tasks into the free slots until one is
 * its own (a claimed task of other cores waits in its slot for them).
 * After a failure no new task is claimed; those in the slots drain.
 */
VISIBLE_IF_KUNIT bool pto_graph_claim(struct pto_graph *g,
				      unsigned int core_id,
				      struct pto_gclaim *cl)
{
	struct pto_gslot *slots = pto_graph_cluster(g, core_id);
	u32 *place = &g->place[core_id / PTO_CORES_PER_CLUSTER];
	u8 bit = BIT(core_id % PTO_CORES_PER_CLUSTER);
	struct pto_gslot *sl;
	unsigned int s;

	cl->placed = false;
	if (!slots)
		return false;
	spin_lock(&g->lock);
	/*
	 * Oldest first, not lowest slot first, so task-boundary barriers
	 * cannot deadlock: a slot only ever wants fewer cores, so each
	 * core's tasks are a subsequence of the cluster's placement order.
	 * A participant a barrier waits for is free to come or runs an
	 * older task; waits run only towards older tasks and end at the
	 * oldest in flight. Lowest first fails once a newer task sits in
	 * a lower slot: X in Q (slot 1) waits for Y, Y took R (slot 0).
	 */
	s = pto_graph_oldest(slots, bit);
	if (s < PTO_GRAPH_SLOTS)
		goto take;
	for (s = 0; s < PTO_GRAPH_SLOTS && !g->aborted; s++) {
		u32 t;

		if (slots[s].mask || g->rhead == g->rtail)
			continue;
		t = g->ready[g->rhead];
		WRITE_ONCE(g->rhead, g->rhead + 1);
		slots[s].task = t;
		slots[s].seq = (*place)++;
		slots[s].started = 0;
		slots[s].done = 0;
		WRITE_ONCE(slots[s].mask, g->tasks[t].mask);
		g->inflight++;
		cl->placed = true;
		/* None older wants @bit: the first placed that does is oldest. */
		if (pto_gslot_wants(slots[s].mask, 0, bit))
			goto take;
	}
	spin_unlock(&g->lock);
	return false;
take:
	sl = &slots[s];
	/* The other AIV takes a single-AIV task: the slot now names it. */
	if (!(sl->mask & bit))
		WRITE_ONCE(sl->mask, bit);
	WRITE_ONCE(sl->started, sl->started | bit);
	cl->task = sl->task;
	cl->slot = s;
	cl->bit = bit;
	cl->mask = sl->mask;
	cl->sub = g->tasks[sl->task].sub + hweight8(sl->mask & (bit - 1));
	spin_unlock(&g->lock);
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(pto_graph_claim);

/* The Out fields of task @i in the caller's graph buffer. */
static void pto_graph_write_out(struct pto_graph *g, u32 i,
				unsigned int core_id, u64 end_ns)
{
	struct pto_graph_task *out;

	if (!g->gkaddr)
		return;
	out = g->gkaddr + (size_t)i * sizeof(*out);
	WRITE_ONCE(out->start_ns, g->tasks[i].start_ns);
	WRITE_ONCE(out->end_ns, end_ns);
	WRITE_ONCE(out->core, core_id);
	WRITE_ONCE(out->status, g->tasks[i].status);
}

/* A task's last subtask ended: release its successors. */
static bool pto_graph_task_done(struct pto_graph *g, u32 i,
				unsigned int core_id, u64 end_ns)
{
	struct pto_gtask *gt = &g->tasks[i];
	bool pushed = false;
	u32 e;

	lockdep_assert_held(&g->lock);
	g->inflight--;
	g->completed++;
	pto_graph_write_out(g, i, core_id, end_ns);
	if (g->aborted)
		return false;
	for (e = 0; e < gt->succ_count; e++) {
		struct pto_gtask *s = &g->tasks[g->succ[gt->succ_start + e]];

		if (--s->pending)
			continue;
		g->ready[g->rtail] = g->succ[gt->succ_start + e];
		WRITE_ONCE(g->rtail, g->rtail + 1);
		pushed = true;
	}
	return pushed;
}

/* Subtask @bit of @sl's task ended; the last one completes the task. */
static bool pto_graph_sub_end(struct pto_graph *g, struct pto_gslot *sl,
			      u8 bit, unsigned int core_id, u64 end_ns)
{
	bool pushed = false;

	sl->done |= bit;
	if (sl->done == sl->mask) {
		pushed = pto_graph_task_done(g, sl->task, core_id, end_ns);
		WRITE_ONCE(sl->mask, 0);
	}
	return pushed;
}

/* Has the graph just ended? Every task completed, or a failure drained. */
static bool pto_graph_check_done(struct pto_graph *g)
{
	lockdep_assert_held(&g->lock);
	if (g->done || (g->completed < g->ntasks &&
			!(g->aborted && !g->inflight)))
		return false;
	g->end_ns = ktime_get_ns();
	WRITE_ONCE(g->done, true);
	return true;
}

static void pto_graph_fail(struct pto_graph *g, u32 task, u32 err)
{
	lockdep_assert_held(&g->lock);
	if (g->err_task == PTO_GRAPH_TASK_NONE && !g->err_status) {
		g->err_task = task;
		g->err_status = err;
	}
	WRITE_ONCE(g->aborted, true);
}

/*
 * Publish the end of a claimed subtask; true if the graph ended (the
 * caller wakes its waiter after the unlock). *@pushed: successors became
 * ready (the caller kicks parked cores).
 */
VISIBLE_IF_KUNIT bool pto_graph_finish(struct pto_graph *g,
				       unsigned int core_id,
				       const struct pto_gclaim *cl, u32 err,
				       u64 start_ns, u64 end_ns, bool *pushed)
{
	struct pto_gslot *sl = &pto_graph_cluster(g, core_id)[cl->slot];
	struct pto_gtask *gt = &g->tasks[cl->task];
	bool done;

	*pushed = false;
	spin_lock(&g->lock);
	g->subtasks++;
	if (err) {
		g->errors++;
		if (!gt->status)
			gt->status = err;
		pto_graph_fail(g, cl->task, err);
	}
	if (!gt->start_ns || start_ns < gt->start_ns)
		gt->start_ns = start_ns;
	*pushed = pto_graph_sub_end(g, sl, cl->bit, core_id, end_ns);
	done = pto_graph_check_done(g);
	spin_unlock(&g->lock);
	return done;
}
EXPORT_SYMBOL_IF_KUNIT(pto_graph_finish);

/*
 * @core_id leaves a graph it has not finished (its retirement): the graph
 * fails (PTO_TASK_ESTOP unless it failed already) and the subtasks left
 * for this core in its cluster's slots end unrun, so the tasks in flight
 * still drain. True if the graph ended.
 */
VISIBLE_IF_KUNIT bool pto_graph_core_leave_locked(struct pto_graph *g,
						  unsigned int core_id)
{
	struct pto_gslot *slots = pto_graph_cluster(g, core_id);
	u8 bit = BIT(core_id % PTO_CORES_PER_CLUSTER);
	unsigned int s;

	lockdep_assert_held(&g->lock);
	if (g->done || !slots)
		return false;
	pto_graph_fail(g, PTO_GRAPH_TASK_NONE, PTO_TASK_ESTOP);
	for (s = 0; s < PTO_GRAPH_SLOTS; s++) {
		struct pto_gslot *sl = &slots[s];

		if (!pto_gslot_wants(sl->mask, sl->started, bit))
			continue;
		if (!(sl->mask & bit))
			sl->mask = bit;
		sl->started |= bit;
		if (!g->tasks[sl->task].status)
			g->tasks[sl->task].status = PTO_TASK_ESTOP;
		pto_graph_sub_end(g, sl, bit, core_id, ktime_get_ns());
	}
	return pto_graph_check_done(g);
}
EXPORT_SYMBOL_IF_KUNIT(pto_graph_core_leave_locked);

/*
 * Lockless parts of the park re-check and the kick: is a subtask of
 * @core_id's waiting in a slot of its cluster (only that core can take
 * it), or a ready task that any core of the cluster may claim into a
 * free slot? Read with READ_ONCE; the callers' smp_mb() order them.
 */
static bool pto_graph_slot_work(struct pto_gslot *slots, u8 bit)
{
	unsigned int s;

	for (s = 0; s < PTO_GRAPH_SLOTS; s++)
		if (pto_gslot_wants(READ_ONCE(slots[s].mask),
				    READ_ONCE(slots[s].started), bit))
			return true;
	return false;
}

static bool pto_graph_queue_work(struct pto_graph *g, struct pto_gslot *slots)
{
	unsigned int s;

	if (READ_ONCE(g->aborted) || READ_ONCE(g->rhead) == READ_ONCE(g->rtail))
		return false;
	for (s = 0; s < PTO_GRAPH_SLOTS; s++)
		if (!READ_ONCE(slots[s].mask))
			return true;
	return false;
}

/*
 * Lockless: is there something for @core_id to take? The park re-check
 * (pto_core_park_recheck()) asks after its smp_mb(), paired with the
 * smp_mb() in pto_graph_kick() after the publisher's unlock.
 */
VISIBLE_IF_KUNIT bool pto_graph_has_work(struct pto_graph *g,
					 unsigned int core_id)
{
	struct pto_gslot *slots = pto_graph_cluster(g, core_id);
	u8 bit = BIT(core_id % PTO_CORES_PER_CLUSTER);

	if (!slots || READ_ONCE(g->done))
		return false;
	return pto_graph_slot_work(slots, bit) ||
	       pto_graph_queue_work(g, slots);
}
EXPORT_SYMBOL_IF_KUNIT(pto_graph_has_work);

/*
 * Should a kick wake parked @core_id? Always for a subtask waiting for it
 * in a slot (nobody else may take it); for ready tasks only while
 * *@budget lasts. The kicker stays awake and claims the queue itself,
 * and a core that claims while tasks stay queued kicks the next one
 * (pto_core_graph_step()), so the queue never waits on a parked core
 * while waking a core per ready task costs a context switch each.
 */
VISIBLE_IF_KUNIT bool pto_graph_kick_wants(struct pto_graph *g,
					   unsigned int core_id,
					   unsigned int *budget)
{
	struct pto_gslot *slots = pto_graph_cluster(g, core_id);

	if (!slots || READ_ONCE(g->done))
		return false;
	if (pto_graph_slot_work(slots, BIT(core_id % PTO_CORES_PER_CLUSTER)))
		return true;
	if (!*budget || !pto_graph_queue_work(g, slots))
		return false;
	(*budget)--;
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(pto_graph_kick_wants);

/* Tasks still wait in the ready queue (lockless, a hint for the kick). */
static bool pto_graph_queued(struct pto_graph *g)
{
	return !READ_ONCE(g->aborted) &&
	       READ_ONCE(g->rhead) != READ_ONCE(g->rtail);
}

/*
 * Wake the graph's parked cores that have work, but @self: each one a
 * slot names, and one more for the ready queue (pto_graph_kick_wants()).
 * Dekker with the park: the publisher's ready push (its unlock) then
 * smp_mb() then PARKED read, against the core's PARKED store, smp_mb(),
 * pto_graph_has_work(). A core skipped for want of budget that is about
 * to park sees the queue in that re-check and stays up.
 */
void pto_graph_kick(struct pto_graph *g, struct pto_core *self)
{
	struct pto_device *pdev = g->pdev;
	unsigned int i, budget = 1;

	/* Dekker: the queue / slot stores before the PARKED loads. */
	smp_mb();
	for (i = 0; i < pdev->cores; i++) {
		struct pto_core *core = &pdev->core[i];

		if (core == self ||
		    !(g->clusters & BIT_ULL(i / PTO_CORES_PER_CLUSTER)) ||
		    !pto_ureg_read(core, PTO_REG_PARKED) ||
		    !pto_graph_kick_wants(g, i, &budget))
			continue;
		set_bit(PTO_CORE_F_DOORBELL, &core->flags);
		wake_up(&core->wq);
	}
}

/* @core, detached from @g, leaves it and drops the attach reference. */
static void pto_graph_left(struct pto_core *core, struct pto_graph *g)
{
	bool done;

	spin_lock(&g->lock);
	done = pto_graph_core_leave_locked(g, core->id);
	spin_unlock(&g->lock);
	if (done)
		wake_up_all(&g->wq);
	pto_graph_put(g);
}

/* Detach @core from @g if it is still in it; the graph fails if unended. */
void pto_graph_detach(struct pto_core *core, struct pto_graph *g)
{
	bool hit;

	spin_lock(&core->graph_lock);
	hit = core->graph == g;
	if (hit)
		WRITE_ONCE(core->graph, NULL);
	spin_unlock(&core->graph_lock);
	if (hit)
		pto_graph_left(core, g);
}

/*
 * The core thread's step: take a subtask of its graph, run it, publish
 * its end. The graph reference taken under graph_lock keeps the graph
 * (and the tensors its subtasks pinned) alive across the run.
 */
bool pto_core_graph_step(struct pto_core *core)
{
	struct pto_mock_task *t = &core->task;
	struct pto_cap_core cc;
	struct pto_lcache *lc;
	struct pto_gclaim cl;
	struct pto_graph *g;
	bool done, pushed, cap;
	u64 start, end;
	u32 err;

	if (!READ_ONCE(core->graph))
		return false;
	spin_lock(&core->graph_lock);
	g = core->graph;
	if (!g) {
		spin_unlock(&core->graph_lock);
		return false;
	}
	if (!pto_graph_claim(g, core->id, &cl)) {
		/* Tasks claimed for its peers only: wake them. */
		if (cl.placed)
			pto_graph_kick(g, core);
		spin_unlock(&core->graph_lock);
		return false;
	}
	kref_get(&g->ref);
	spin_unlock(&core->graph_lock);
	/*
	 * Its peers may have a subtask of a task just claimed; tasks left
	 * in the queue: wake the next core to claim them (the cascade
	 * pto_graph_kick_wants() relies on).
	 */
	if (cl.placed || pto_graph_queued(g))
		pto_graph_kick(g, core);

	memcpy(t, &g->sub[cl.sub], sizeof(*t));
	lc = g->lc ? g->lc[core->id] : NULL;
	WRITE_ONCE(core->state, PTO_CORE_RUNNING);
	/* Args capture: nobody runs before the task's inputs are sealed. */
	err = pto_core_cap_before(core, g, &cl, &cc, &cap);
	start = ktime_get_ns();
	if (!err) {
		/*
		 * The subtask's inputs are its predecessors' outputs, written
		 * back by their cores' flush before their finish: drop every
		 * line cached from an earlier subtask so its loads read them
		 * fresh.
		 */
		pto_lc_inval_all(lc);
		trace_pto_task_start(core, cl.task, t->p.func_id);
		err = pto_task_run(core, t, lc);
		/*
		 * Every participant meets at AFTER, whatever its kernel's
		 * result, as each decided alike to meet at BEFORE.
		 */
		if (cap) {
			u32 cerr = pto_core_cap_after(core, g, &cc, lc);

			err = err ?: cerr;
		}
		/*
		 * Completion is a publication: the successors this finish
		 * releases (and the waiter's host, after GRAPH_WAIT) read the
		 * outputs from memory, so the dirty lines go back first.
		 * Pairs with the invalidate above on the core that runs a
		 * successor.
		 */
		pto_lc_flush_all(lc);
		end = ktime_get_ns();
		trace_pto_task_end(core, cl.task, err, start, end);
	} else {
		end = start;
	}
	/* The capture's fatal path: every supervisor settles. */
	if (g->cap && err)
		pto_cap_run_fail(g->cap);
	WRITE_ONCE(core->state, PTO_CORE_READY);
	/* The copy's references are the graph's: never put them here. */
	memset(t->bo, 0, sizeof(t->bo));
	atomic64_inc(&core->tasks);
	if (err)
		atomic64_inc(&core->errors);
	done = pto_graph_finish(g, core->id, &cl, err, start, end, &pushed);
	if (done)
		wake_up_all(&g->wq);
	if (pushed)
		pto_graph_kick(g, core);
	pto_graph_put(g);
	return true;
}

/* The park re-check's question: work in the core's graph? */
bool pto_core_graph_pending(struct pto_core *core)
{
	struct pto_graph *g;
	bool r;

	if (!READ_ONCE(core->graph))
		return false;
	spin_lock(&core->graph_lock);
	g = core->graph;
	r = g && pto_graph_has_work(g, core->id);
	spin_unlock(&core->graph_lock);
	return r;
}

/* The core leaves its serve loop (retirement): it leaves its graph too. */
void pto_core_graph_leave(struct pto_core *core)
{
	struct pto_graph *g;

	spin_lock(&core->graph_lock);
	g = core->graph;
	WRITE_ONCE(core->graph, NULL);
	spin_unlock(&core->graph_lock);
	if (g)
		pto_graph_left(core, g);
}
