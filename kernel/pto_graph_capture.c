// SPDX-License-Identifier: GPL-2.0-only
/*
 * pto - a resident run's args capture: the lanes it names, its capture
 * state and one supervisor thread per lane (Documentation/capture.md).
 * The lanes are made busy and the supervisors started before any core is
 * attached, so no request goes unserved; the stop comes before the cores
 * detach and before the file's lanes are released, each supervisor
 * settling first, and only then is run->dead set for waiting cores.
 */
#include <linux/bitops.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/pto_dump.h>
#include <linux/pto_graph.h>
#include "pto_capture_sv.h"
#include "pto_core.h"
#include "pto_drv.h"
#include "pto_graph.h"
#include "pto_graph_capture.h"
#include "pto_lane.h"
#include "pto_mock_kernels.h"
#include "pto_producer.h"

static unsigned int capture_budget_ms = 2000;
module_param(capture_budget_ms, uint, 0644);
MODULE_PARM_DESC(capture_budget_ms,
		 "resident-route args capture: a waiting core aborts the phase after this long without progress, in ms (default 2000)");

static unsigned int capture_lost_ms = 8000;
module_param(capture_lost_ms, uint, 0644);
MODULE_PARM_DESC(capture_lost_ms,
		 "resident-route args capture: a core with no answer at all leaves the run after this long, in ms (default 8000)");

u64 pto_capture_budget_ns(void)
{
	return (u64)max(READ_ONCE(capture_budget_ms), 1u) * NSEC_PER_MSEC;
}

u64 pto_capture_lost_ns(void)
{
	return max_t(u64, (u64)READ_ONCE(capture_lost_ms) * NSEC_PER_MSEC,
		     pto_capture_budget_ns() * 2);
}

/*
 * The supervisor's view of task @task_id: the kernel's validated copy of
 * the uploaded task (the caller cannot rewrite it) and its tensors'
 * kernel addresses, pinned by the graph's subtasks.
 */
static bool pto_graph_cap_task(void *priv, u64 task_id, struct pto_sv_task *out)
{
	struct pto_graph *g = priv;
	const struct pto_graph_task *t;
	const struct pto_gtask *gt;
	u32 j, k, n;

	if (task_id >= g->ntasks)
		return false;
	t = &g->cap_tasks[task_id];
	gt = &g->tasks[task_id];
	memset(out, 0, sizeof(*out));
	out->t = t;
	n = hweight8(gt->mask);
	for (j = 0; j < n; j++) {
		const struct pto_mock_task *st = &g->sub[gt->sub + j];

		for (k = 0; k < PTO_PAYLOAD_TENSORS; k++)
			if (!out->src[k] && st->ptr[k])
				out->src[k] = st->ptr[k];
		if (pto_func_scalars(st->p.func_id))
			out->nscalars = 1;
	}
	return true;
}

/* One lane's service loop; a step that did work wakes the lane's cores. */
static int pto_graph_sv_thread(void *data)
{
	struct pto_cap_sv *sv = data;
	struct pto_device *pdev = sv->lane->pdev;
	u32 i;

	while (!kthread_should_stop()) {
		if (pto_sv_step(sv)) {
			for (i = 0; i < sv->ncores; i++) {
				struct pto_core *core =
					&pdev->core[sv->cores[i].core];

				set_bit(PTO_CORE_F_CAPKICK, &core->flags);
				wake_up(&core->wq);
			}
			cond_resched();
			continue;
		}
		/*
		 * A core's kick (pto_cap_kick) sets sv->kick before its
		 * wake_up; a lost one costs the timeout, not progress.
		 */
		wait_event_interruptible_timeout(sv->wq,
						 atomic_xchg(&sv->kick, 0) ||
						 kthread_should_stop(),
						 msecs_to_jiffies(1));
	}
	return 0;
}

/* Give the named lanes back (not busy, no run) under each lane's lock. */
static void pto_graph_cap_lanes_put(struct pto_device *pdev, u32 mask)
{
	u32 l;

	for (l = 0; l < pdev->lanes; l++) {
		if (!(mask & BIT(l)))
			continue;
		mutex_lock(&pdev->lane[l].lock);
		pdev->lane[l].busy = false;
		mutex_unlock(&pdev->lane[l].lock);
	}
}

/*
 * Take the lanes @mask names for the run: each bound by @pf above OFF and
 * idle. On success every one is busy and @a names them with their levels.
 */
static int pto_graph_cap_lanes_get(struct pto_file *pf, u32 mask,
				   struct pto_cap_run_args *a)
{
	struct pto_device *pdev = pf->pdev;
	u32 l, taken = 0;
	int ret = 0;

	for (l = 0; l < pdev->lanes && !ret; l++) {
		struct pto_lane *lane = &pdev->lane[l];

		if (!(mask & BIT(l)))
			continue;
		mutex_lock(&lane->lock);
		if (lane->owner != pf || lane->state != PTO_LANE_BOUND ||
		    !lane->prod || lane->prod->level == PTO_DUMP_OFF)
			ret = -EINVAL;
		else if (lane->busy)
			ret = -EBUSY;
		if (!ret) {
			lane->busy = true;
			taken |= BIT(l);
			a->lanes[a->nlanes] = lane;
			a->level[a->nlanes++] = lane->prod->level;
		}
		mutex_unlock(&lane->lock);
	}
	if (ret)
		pto_graph_cap_lanes_put(pdev, taken);
	return ret;
}

/*
 * GRAPH_LAUNCH, after validation and before any core is attached: with
 * @args->dump_lanes, the run's capture state, the lanes made busy and
 * their supervisors running. Takes the kernel's copy of the image (*@img,
 * NULL afterwards) for the supervisors to read the validated tasks.
 */
int pto_graph_capture_start(struct pto_file *pf, struct pto_graph *g,
			    const struct pto_graph_launch *args, void **img)
{
	struct pto_device *pdev = pf->pdev;
	struct pto_cap_run_args a = {
		.clusters = pdev->clusters,
		.graph_clusters = args->clusters,
		.epochs = &pdev->cap_epochs,
		.run_id = args->run_id,
		.ntasks = g->ntasks,
		.src = { .task = pto_graph_cap_task, .priv = g },
	};
	struct pto_cap_run *run;
	u32 l;
	int ret;

	if (!args->dump_lanes)
		return 0;
	if (args->dump_lanes >> pdev->lanes)
		return -EINVAL;
	ret = pto_graph_cap_lanes_get(pf, args->dump_lanes, &a);
	if (ret)
		return ret;
	run = pto_cap_run_create(&a);
	if (IS_ERR(run)) {
		pto_graph_cap_lanes_put(pdev, args->dump_lanes);
		return PTR_ERR(run);
	}
	g->cap = run;
	INIT_LIST_HEAD(&g->cap_node);
	if (IS_ENABLED(CONFIG_PTO_MOCK_FAULTS))
		for (l = 0; l < run->nlanes; l++)
			run->sv[l]->drop_acks = &pdev->cap_faults.drop_acks;
	g->cap_lanes = args->dump_lanes;
	g->cap_img = *img;
	g->cap_tasks = *img + sizeof(struct pto_graph_hdr);
	*img = NULL;
	for (l = 0; l < run->nlanes; l++) {
		struct pto_cap_sv *sv = run->sv[l];
		struct task_struct *t;

		t = kthread_run(pto_graph_sv_thread, sv, "pto%u/sv%u",
				pdev->index, sv->lane->index);
		if (IS_ERR(t)) {
			pto_graph_capture_stop(g);
			return PTR_ERR(t);
		}
		sv->thread = t;
	}
	mutex_lock(&pdev->cap_lock);
	list_add_tail(&g->cap_node, &pdev->cap_runs);
	mutex_unlock(&pdev->cap_lock);
	return 0;
}

/* What the stop leaves for debugfs: slots and phases left unfinished. */
static void pto_graph_cap_summarize(struct pto_graph *g,
				    struct pto_cap_summary *s)
{
	struct pto_cap_run *run = g->cap;
	u32 i, l;

	memset(s, 0, sizeof(*s));
	s->run_epoch = run->run_epoch;
	s->run_id = run->run_id;
	s->lanes = g->cap_lanes;
	for (i = 0; i < run->area.nslots; i++) {
		u64 st = PTO_CS_STATE(atomic64_read(&run->area.slots[i].claim));

		s->claiming += st == PTO_CS_CLAIMING;
		s->ready += st == PTO_CS_READY;
	}
	for (l = 0; l < run->nlanes; l++) {
		const struct pto_cap_sv *sv = run->sv[l];

		for (i = 0; i < sv->ncores; i++)
			s->unanswered += sv->cores[i].obs_tick &&
					 !sv->cores[i].terminal;
		s->sealed += sv->stats.sealed;
		s->aborted += sv->stats.aborted;
		s->chunks += sv->stats.chunks;
		s->wouldblock += sv->stats.wouldblock;
		s->refused += sv->stats.refused;
	}
}

/*
 * Stop the run's supervisors (each settles first), then release the
 * cores still waiting in a barrier and give the lanes back. Called once
 * per graph (GRAPH_WAIT's end or the file's release); the capture state
 * itself is freed with the graph, after the last core left it.
 */
void pto_graph_capture_stop(struct pto_graph *g)
{
	struct pto_cap_run *run = g->cap;
	struct pto_device *pdev = g->pdev;
	u32 l, i;

	if (!run || g->cap_stopped)
		return;
	g->cap_stopped = true;
	for (l = 0; l < run->nlanes; l++) {
		struct pto_cap_sv *sv = run->sv[l];

		if (!sv->thread)
			continue;
		WRITE_ONCE(sv->stop, true);
		kthread_stop(sv->thread);
		sv->thread = NULL;
		/* After the thread: its last step may have left work. */
		pto_sv_settle(sv);
	}
	/*
	 * Release: pairs with the cores' acquire in their barrier wait. No
	 * supervisor copies any more, so a core leaving on it cannot let a
	 * successor overwrite bytes in flight.
	 */
	smp_store_release(&run->dead, 1);
	for (i = 0; i < pdev->cores; i++) {
		struct pto_core *core = &pdev->core[i];

		if (!(g->clusters & BIT_ULL(i / PTO_CORES_PER_CLUSTER)))
			continue;
		set_bit(PTO_CORE_F_CAPKICK, &core->flags);
		wake_up(&core->wq);
	}
	mutex_lock(&pdev->cap_lock);
	list_del_init(&g->cap_node);
	pto_graph_cap_summarize(g, &pdev->cap_last);
	mutex_unlock(&pdev->cap_lock);
	pto_graph_cap_lanes_put(pdev, g->cap_lanes);
}

static void pto_cap_summary_show(struct seq_file *m,
				 const struct pto_cap_summary *s)
{
	seq_printf(m, "epoch %llu run_id %llu lanes 0x%x\n", s->run_epoch,
		   s->run_id, s->lanes);
	seq_printf(m, "sealed %llu aborted %llu chunks %llu wouldblock %llu refused %llu\n",
		   s->sealed, s->aborted, s->chunks, s->wouldblock, s->refused);
	seq_printf(m, "left claiming %u ready %u unanswered %u\n",
		   s->claiming, s->ready, s->unanswered);
}

/*
 * debugfs `capture`: each running capture (its slots not FREE, its
 * supervisors' queues) and the last one's end. Racy reads of live words,
 * consistent enough to diagnose; the run cannot be freed while listed.
 */
void pto_capture_debugfs_show(struct seq_file *m, struct pto_device *pdev)
{
	struct pto_cap_summary s;
	struct pto_graph *g;
	u32 i, l;

	mutex_lock(&pdev->cap_lock);
	list_for_each_entry(g, &pdev->cap_runs, cap_node) {
		struct pto_cap_run *run = g->cap;

		seq_puts(m, "run: ");
		pto_graph_cap_summarize(g, &s);
		pto_cap_summary_show(m, &s);
		for (i = 0; i < run->area.nslots; i++) {
			struct pto_capture_slot *sl = &run->area.slots[i];
			u64 w = atomic64_read(&sl->claim);

			if (PTO_CS_STATE(w) == PTO_CS_FREE)
				continue;
			seq_printf(m, "  slot %u: state %llu occ %llu arrived %llx/%llx released %llx/%llx aborted %llx\n",
				   i, PTO_CS_STATE(w), PTO_CS_OCC(w),
				   atomic64_read(&sl->arrived[0]),
				   atomic64_read(&sl->arrived[1]),
				   atomic64_read(&sl->released[0]),
				   atomic64_read(&sl->released[1]),
				   atomic64_read(&sl->aborted));
		}
		for (l = 0; l < run->nlanes; l++) {
			const struct pto_cap_sv *sv = run->sv[l];

			seq_printf(m, "  lane %u: cores %u open %d\n",
				   sv->lane->index, sv->ncores,
				   sv->open_core == PTO_SV_NO_CORE ? -1 :
				   (int)sv->cores[sv->open_core].core);
			for (i = 0; i < sv->ncores; i++)
				if (sv->cores[i].obs_tick &&
				    !sv->cores[i].terminal)
					seq_printf(m, "    queued core %u obs %llu tick %llu\n",
						   sv->cores[i].core,
						   sv->cores[i].obs_tick,
						   sv->cores[i].v.tick);
		}
	}
	seq_puts(m, "last: ");
	pto_cap_summary_show(m, &pdev->cap_last);
	mutex_unlock(&pdev->cap_lock);
}

/* File release, first: no supervisor may use a lane the release frees. */
void pto_file_stop_captures(struct pto_file *pf)
{
	struct pto_graph *g;
	unsigned long id;

	xa_for_each(&pf->graphs, id, g)
		pto_graph_capture_stop(g);
}
