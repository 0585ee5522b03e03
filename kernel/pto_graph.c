// SPDX-License-Identifier: GPL-2.0-only
/*
 * pto - the resident route's graphs: upload, whole-graph validation and
 * the launch / wait ioctls. The graph is copied out of the caller's GM
 * buffer once and only the copy is validated and used, so rewriting the
 * buffer afterwards changes nothing the cores run. No core sees a graph
 * before every check below passed (Documentation/resident.md).
 */
#include <linux/bitops.h>
#include <linux/device.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <kunit/visibility.h>
#include "pto_bo.h"
#include "pto_core.h"
#include "pto_graph.h"
#include "pto_graph_capture.h"
#include "pto_capture_sv.h"
#include "pto_lane.h"
#include "pto_mock.h"
#include "pto_mock_lcache.h"
#include "pto_producer.h"

/* The largest image the checks accept (a bigger hdr.size is refused). */
#define PTO_GRAPH_MAX_BYTES						\
	(sizeof(struct pto_graph_hdr) +					\
	 (u64)PTO_GRAPH_MAX_TASKS * sizeof(struct pto_graph_task) +	\
	 (u64)PTO_GRAPH_MAX_EDGES * sizeof(u32))

static const char *const pto_graph_field_names[PTO_GRAPH_FIELD_COUNT_] = {
	[PTO_GRAPH_FIELD_NONE] = "none",
	[PTO_GRAPH_FIELD_ADDR] = "graph_addr",
	[PTO_GRAPH_FIELD_TRUNCATED] = "truncated upload",
	[PTO_GRAPH_FIELD_MAGIC] = "magic",
	[PTO_GRAPH_FIELD_VERSION] = "version",
	[PTO_GRAPH_FIELD_COUNT] = "task_count / edge_count",
	[PTO_GRAPH_FIELD_SIZE] = "size / task_size",
	[PTO_GRAPH_FIELD_HDR_FLAGS] = "header flags",
	[PTO_GRAPH_FIELD_TASK_FLAGS] = "flags",
	[PTO_GRAPH_FIELD_ACTIVE_MASK] = "active_mask",
	[PTO_GRAPH_FIELD_FUNC_ID] = "func_id",
	[PTO_GRAPH_FIELD_SUCC] = "succ_start / succ_count",
	[PTO_GRAPH_FIELD_EDGE] = "successor",
	[PTO_GRAPH_FIELD_FANIN] = "fanin",
	[PTO_GRAPH_FIELD_CYCLE] = "cycle",
	[PTO_GRAPH_FIELD_ROLE] = "tensor role",
	[PTO_GRAPH_FIELD_ARG_FLAGS] = "tensor flags",
	[PTO_GRAPH_FIELD_ARGS] = "arguments",
	[PTO_GRAPH_FIELD_TENSOR] = "tensor dtype / shape",
	[PTO_GRAPH_FIELD_TENSOR_ADDR] = "tensor address",
	[PTO_GRAPH_FIELD_BLOCK] = "block_base / block_num",
};

/* Record the first fault: the ioctl returns it, the log names it. */
static int pto_graph_bad(struct pto_file *pf, struct pto_graph_launch *args,
			 u32 task, u32 field)
{
	args->bad_task = task;
	args->bad_field = field;
	if (pf->pdev->dev)
		dev_dbg_ratelimited(pf->pdev->dev,
				    "graph refused: task %d, %s\n",
				    task == PTO_GRAPH_TASK_NONE ? -1 : (int)task,
				    pto_graph_field_names[field]);
	return -EINVAL;
}

static void pto_graph_release(struct kref *ref)
{
	struct pto_graph *g = container_of(ref, struct pto_graph, ref);
	u32 i;

	for (i = 0; i < g->nsub; i++)
		pto_task_put(&g->sub[i]);
	if (g->gbo)
		pto_bo_put(g->gbo);
	kvfree(g->sub);
	kvfree(g->tasks);
	kvfree(g->succ);
	kvfree(g->ready);
	kfree(g->slots);
	kfree(g->place);
	if (g->lc)
		for (i = 0; i < g->pdev->cores; i++)
			pto_lc_free(g->lc[i]);
	kfree(g->lc);
	pto_cap_run_destroy(g->cap);
	kvfree(g->cap_img);
	kfree(g);
}

/*
 * The line caches of @g's cores (mock_lcache_lines, read once at the
 * launch so a run never sees the parameter change under it). Nothing is
 * allocated for 0; the graph's release frees them.
 */
int pto_graph_alloc_lc(struct pto_graph *g, unsigned int lines)
{
	unsigned int i;

	if (!lines)
		return 0;
	g->lc = kcalloc(g->pdev->cores, sizeof(*g->lc), GFP_KERNEL_ACCOUNT);
	if (!g->lc)
		return -ENOMEM;
	for (i = 0; i < g->pdev->cores; i++) {
		if (!(g->clusters & BIT_ULL(i / PTO_CORES_PER_CLUSTER)))
			continue;
		g->lc[i] = pto_lc_alloc(lines);
		if (!g->lc[i])
			return -ENOMEM;
	}
	g->lc_lines = lines;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(pto_graph_alloc_lc);

void pto_graph_put(struct pto_graph *g)
{
	kref_put(&g->ref, pto_graph_release);
}
EXPORT_SYMBOL_IF_KUNIT(pto_graph_put);

static bool pto_graph_mask_ok(u32 mask)
{
	switch (mask) {
	case PTO_GRAPH_AIC:
	case PTO_GRAPH_AIV0:
	case PTO_GRAPH_AIV1:
	case PTO_GRAPH_AIV0 | PTO_GRAPH_AIV1:
	case PTO_GRAPH_MASK_MIX:
		return true;
	}
	return false;
}

/*
 * The blocks a task runs of its SPMD task: one per active core, but a
 * MIX task is one MIX block (its three cores share the index, as on the
 * scheduler route). Zero block fields: a task of its own.
 */
static u32 pto_graph_task_blocks(const struct pto_graph_task *t)
{
	return t->active_mask == PTO_GRAPH_MASK_MIX ? 1 :
	       hweight8(t->active_mask);
}

static bool pto_graph_blocks_ok(const struct pto_graph_task *t)
{
	if (!t->block_num)
		return !t->block_base;
	return t->block_num <= PTO_GRAPH_MAX_BLOCKS &&
	       (u64)t->block_base + pto_graph_task_blocks(t) <= t->block_num;
}

static u32 pto_graph_task_err_field(u32 err)
{
	switch (err) {
	case PTO_TASK_EFUNC:
		return PTO_GRAPH_FIELD_FUNC_ID;
	case PTO_TASK_EDTYPE:
	case PTO_TASK_ESHAPE:
		return PTO_GRAPH_FIELD_TENSOR;
	case PTO_TASK_EADDR:
		return PTO_GRAPH_FIELD_TENSOR_ADDR;
	}
	return PTO_GRAPH_FIELD_ARGS;
}

/* The tensors' roles and flags against the slots the subtasks use. */
static u32 pto_graph_check_roles(const struct pto_graph_task *t, u8 used)
{
	unsigned int k;

	for (k = 0; k < PTO_PAYLOAD_TENSORS; k++) {
		const struct pto_graph_tensor *a = &t->t[k];
		u32 want = k == PTO_ARG_OUT ? PTO_GRAPH_ROLE_OUT :
					      PTO_GRAPH_ROLE_IN;

		if (a->flags & ~PTO_GRAPH_ARG_FLAGS_VALID)
			return PTO_GRAPH_FIELD_ARG_FLAGS;
		if (!(used & BIT(k))) {
			if (a->role != PTO_GRAPH_ROLE_NONE)
				return PTO_GRAPH_FIELD_ROLE;
			if (a->flags || memchr_inv(&a->t, 0, sizeof(a->t)))
				return PTO_GRAPH_FIELD_ARGS;
			continue;
		}
		if (a->role != want && a->role != PTO_GRAPH_ROLE_INOUT)
			return PTO_GRAPH_FIELD_ROLE;
	}
	return PTO_GRAPH_FIELD_NONE;
}

/*
 * One task's own fields, then its subtasks' arguments against @pf's
 * buffers (pto_task_validate(): the full strided extent inside one
 * buffer, which stays pinned until the graph is freed).
 */
static u32 pto_graph_check_task(struct pto_graph *g, struct pto_file *pf,
				const struct pto_graph_task *t, u32 i,
				const u32 *edges)
{
	struct pto_gtask *gt = &g->tasks[i];
	u8 used = 0, rank = 0;
	u64 scalars = 0;
	unsigned int j;
	u32 field, e;

	if (t->flags & ~PTO_GRAPH_TASK_FLAGS_VALID)
		return PTO_GRAPH_FIELD_TASK_FLAGS;
	if (!pto_graph_mask_ok(t->active_mask))
		return PTO_GRAPH_FIELD_ACTIVE_MASK;
	for (j = 0; j < PTO_CORES_PER_CLUSTER; j++) {
		bool on = t->active_mask & BIT(j);

		if ((!on && t->func_id[j]) ||
		    (on && t->func_id[j] >= PTO_FUNC_COUNT))
			return PTO_GRAPH_FIELD_FUNC_ID;
		if (on)
			used |= pto_func_tensors(t->func_id[j]);
	}
	if (!pto_graph_blocks_ok(t))
		return PTO_GRAPH_FIELD_BLOCK;
	if ((u64)t->succ_start + t->succ_count > g->nedges)
		return PTO_GRAPH_FIELD_SUCC;
	for (e = 0; e < t->succ_count; e++) {
		u32 s = edges[t->succ_start + e];

		if (s >= g->ntasks || s == i)
			return PTO_GRAPH_FIELD_EDGE;
	}
	field = pto_graph_check_roles(t, used);
	if (field)
		return field;

	gt->mask = t->active_mask;
	gt->sub = g->nsub;
	gt->succ_start = t->succ_start;
	gt->succ_count = t->succ_count;
	gt->pending = t->fanin;
	for (j = 0; j < PTO_CORES_PER_CLUSTER; j++) {
		struct pto_mock_task *st = &g->sub[g->nsub];
		u32 err;

		if (!(t->active_mask & BIT(j)))
			continue;
		memset(st, 0, sizeof(*st));
		st->id = i;
		st->p.func_id = t->func_id[j];
		memcpy(st->p.scalar, t->scalar, sizeof(st->p.scalar));
		for (e = 0; e < PTO_PAYLOAD_TENSORS; e++)
			st->p.t[e] = t->t[e].t;
		if (!t->block_num) {
			st->p.block_idx = rank;
			st->p.block_num = hweight8(t->active_mask);
		} else {
			st->p.block_idx = t->block_base +
				(t->active_mask == PTO_GRAPH_MASK_MIX ? 0 : rank);
			st->p.block_num = t->block_num;
		}
		rank++;
		pto_payload_select(&st->p);
		scalars |= st->p.scalar[0];
		err = pto_task_validate(pf, st);
		if (err)
			return pto_graph_task_err_field(err);
		g->nsub++;
	}
	/* A scalar no subtask reads must be zero, like any unused field. */
	if (t->scalar[1] || (t->scalar[0] && !scalars))
		return PTO_GRAPH_FIELD_ARGS;
	return PTO_GRAPH_FIELD_NONE;
}

static int pto_graph_check_hdr(struct pto_file *pf,
			       const struct pto_graph_hdr *h, u64 size,
			       struct pto_graph_launch *args)
{
	u32 none = PTO_GRAPH_TASK_NONE;
	u64 want;

	if (size < sizeof(*h))
		return pto_graph_bad(pf, args, none, PTO_GRAPH_FIELD_TRUNCATED);
	if (h->magic != PTO_GRAPH_MAGIC)
		return pto_graph_bad(pf, args, none, PTO_GRAPH_FIELD_MAGIC);
	if (h->version != PTO_GRAPH_VERSION)
		return pto_graph_bad(pf, args, none, PTO_GRAPH_FIELD_VERSION);
	if (h->flags || h->reserved[0] || h->reserved[1])
		return pto_graph_bad(pf, args, none, PTO_GRAPH_FIELD_HDR_FLAGS);
	if (!h->task_count || h->task_count > PTO_GRAPH_MAX_TASKS ||
	    h->edge_count > PTO_GRAPH_MAX_EDGES)
		return pto_graph_bad(pf, args, none, PTO_GRAPH_FIELD_COUNT);
	want = round_up(sizeof(*h) +
			(u64)h->task_count * sizeof(struct pto_graph_task) +
			(u64)h->edge_count * sizeof(u32), 8);
	if (h->task_size != sizeof(struct pto_graph_task) || h->size != want)
		return pto_graph_bad(pf, args, none, PTO_GRAPH_FIELD_SIZE);
	if (size < h->size)
		return pto_graph_bad(pf, args, none, PTO_GRAPH_FIELD_TRUNCATED);
	return 0;
}

/* Fan-in counts equal to the edges, then acyclic (Kahn's order). */
static int pto_graph_check_edges(struct pto_graph *g, struct pto_file *pf,
				 const struct pto_graph_task *tasks,
				 struct pto_graph_launch *args)
{
	u32 *in, i, e, head = 0, tail = 0;
	int ret = 0;

	in = kvcalloc(g->ntasks, sizeof(*in), GFP_KERNEL_ACCOUNT);
	if (!in)
		return -ENOMEM;
	for (i = 0; i < g->ntasks; i++)
		for (e = 0; e < g->tasks[i].succ_count; e++)
			in[g->succ[g->tasks[i].succ_start + e]]++;
	for (i = 0; i < g->ntasks; i++) {
		if (in[i] != tasks[i].fanin) {
			ret = pto_graph_bad(pf, args, i, PTO_GRAPH_FIELD_FANIN);
			goto out;
		}
		if (!in[i])
			g->ready[tail++] = i;
	}
	/* @ready doubles as Kahn's queue; the roots stay at its front. */
	g->rtail = tail;
	while (head < tail) {
		struct pto_gtask *gt = &g->tasks[g->ready[head++]];

		for (e = 0; e < gt->succ_count; e++)
			if (!--in[g->succ[gt->succ_start + e]])
				g->ready[tail++] = g->succ[gt->succ_start + e];
	}
	if (tail < g->ntasks) {
		for (i = 0; in[i] == 0; i++)
			;
		ret = pto_graph_bad(pf, args, i, PTO_GRAPH_FIELD_CYCLE);
	}
out:
	kvfree(in);
	return ret;
}

/*
 * Validate the image @img (@size bytes, a kernel copy of the upload) and
 * build its graph, the caller's tensors pinned; on a bad graph -EINVAL
 * with args->bad_task / bad_field naming the first fault. The checks
 * run in passes: the header, each task in index order (its fields, then
 * its arguments), the fan-in counts, acyclicity.
 */
VISIBLE_IF_KUNIT
struct pto_graph *pto_graph_build(struct pto_file *pf, const void *img,
				  u64 size, struct pto_graph_launch *args)
{
	const struct pto_graph_hdr *h = img;
	const struct pto_graph_task *tasks = img + sizeof(*h);
	struct pto_device *pdev = pf->pdev;
	struct pto_graph *g;
	const u32 *edges;
	u32 i, nsub = 0;
	int ret;

	args->bad_task = PTO_GRAPH_TASK_NONE;
	args->bad_field = PTO_GRAPH_FIELD_NONE;
	ret = pto_graph_check_hdr(pf, h, size, args);
	if (ret)
		return ERR_PTR(ret);
	edges = (const u32 *)(tasks + h->task_count);

	g = kzalloc(sizeof(*g), GFP_KERNEL_ACCOUNT);
	if (!g)
		return ERR_PTR(-ENOMEM);
	kref_init(&g->ref);
	spin_lock_init(&g->lock);
	init_waitqueue_head(&g->wq);
	g->pdev = pdev;
	g->ntasks = h->task_count;
	g->nedges = h->edge_count;
	g->err_task = PTO_GRAPH_TASK_NONE;
	/* Sizing only: a bad mask is reported in task order below. */
	for (i = 0; i < g->ntasks; i++)
		nsub += hweight8(tasks[i].active_mask & PTO_GRAPH_MASK_MIX);
	g->tasks = kvcalloc(g->ntasks, sizeof(*g->tasks), GFP_KERNEL_ACCOUNT);
	g->sub = kvcalloc(max(nsub, 1U), sizeof(*g->sub), GFP_KERNEL_ACCOUNT);
	g->succ = kvcalloc(max(g->nedges, 1U), sizeof(u32), GFP_KERNEL_ACCOUNT);
	g->ready = kvcalloc(g->ntasks, sizeof(u32), GFP_KERNEL_ACCOUNT);
	g->slots = kcalloc(max(pdev->clusters, 1U), sizeof(*g->slots),
			   GFP_KERNEL_ACCOUNT);
	g->place = kcalloc(max(pdev->clusters, 1U), sizeof(*g->place),
			   GFP_KERNEL_ACCOUNT);
	if (!g->tasks || !g->sub || !g->succ || !g->ready || !g->slots ||
	    !g->place) {
		ret = -ENOMEM;
		goto fail;
	}
	memcpy(g->succ, edges, g->nedges * sizeof(u32));
	for (i = 0; i < g->ntasks; i++) {
		u32 field = pto_graph_check_task(g, pf, &tasks[i], i, g->succ);

		if (field) {
			ret = pto_graph_bad(pf, args, i, field);
			goto fail;
		}
	}
	ret = pto_graph_check_edges(g, pf, tasks, args);
	if (ret)
		goto fail;
	return g;
fail:
	pto_graph_put(g);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_IF_KUNIT(pto_graph_build);

/*
 * The resident route has no task-boundary capture, so a graph is refused
 * (-EOPNOTSUPP) while @pf holds a lane bound above OFF. Called after the
 * graph is in @pf->graphs: pto_ioctl_dump_bind() tests that under the
 * lane's lock, so of a racing bind and launch one sees the other.
 */
static int pto_graph_check_dump(struct pto_file *pf, u32 named)
{
	struct pto_device *pdev = pf->pdev;
	unsigned int i;

	for (i = 0; pdev->lane && i < pdev->lanes; i++) {
		struct pto_lane *lane = &pdev->lane[i];
		u32 level = PTO_DUMP_OFF;

		mutex_lock(&lane->lock);
		if (lane->owner == pf && lane->state == PTO_LANE_BOUND &&
		    lane->prod)
			level = lane->prod->level;
		mutex_unlock(&lane->lock);
		if (level == PTO_DUMP_OFF || (named & BIT(i)))
			continue;
		if (pdev->dev)
			dev_info_ratelimited(pdev->dev,
					     "graph refused: lane %u binds args dump level %u and the launch's dump_lanes does not name it\n",
					     i, level);
		return -EOPNOTSUPP;
	}
	return 0;
}

/* Copy the upload out of its buffer: only as much as the header claims. */
static void *pto_graph_copy(struct pto_bo *bo, u64 addr, u64 *size)
{
	const void *src = bo->vaddr + (addr - bo->dev_addr);
	u64 n = *size, claimed;
	void *img;

	if (n >= sizeof(struct pto_graph_hdr)) {
		claimed = READ_ONCE(((const struct pto_graph_hdr *)src)->size);
		n = min3(n, max_t(u64, claimed, sizeof(struct pto_graph_hdr)),
			 (u64)PTO_GRAPH_MAX_BYTES);
	}
	img = kvmalloc(max_t(u64, n, 1), GFP_KERNEL_ACCOUNT);
	if (img)
		memcpy(img, src, n);
	*size = n;
	return img;
}

/*
 * Attach @g to every core of its clusters, under core_lock: each must be
 * launched by @pf, running, and in no graph. A core that started
 * retiring in between (CTRL written before its serve loop ends, then its
 * leave under graph_lock) is seen after the attach: the lock handoff
 * orders its CTRL read before our re-check, so it is detached here.
 */
static int pto_graph_attach(struct pto_file *pf, struct pto_graph *g,
			    u64 t0)
{
	struct pto_device *pdev = pf->pdev;
	unsigned int c, i;

	lockdep_assert_held(&pdev->core_lock);
	for (c = 0; c < pdev->clusters; c++)
		if ((g->clusters & BIT_ULL(c)) && pdev->cluster_owner[c] != pf)
			return -EPERM;
	/* As a core launch: a cluster being released is not the caller's. */
	if (g->clusters & pdev->cluster_releasing)
		return -EBUSY;
	for (i = 0; i < pdev->cores; i++) {
		struct pto_core *core = &pdev->core[i];

		if (!(g->clusters & BIT_ULL(i / PTO_CORES_PER_CLUSTER)))
			continue;
		/*
		 * Launched and published READY (the core thread may not
		 * have written its own state yet), not retiring.
		 */
		if (core->owner != pf ||
		    !test_bit(PTO_CORE_F_LAUNCH, &core->flags) ||
		    !(atomic_read(&core->rbits) & PTO_RB_READY) ||
		    pto_kreg_read(core, PTO_KREG_CTRL) != PTO_CTRL_RUN ||
		    READ_ONCE(core->graph))
			return -EBUSY;
	}
	pto_graph_start(g, t0);
	for (i = 0; i < pdev->cores; i++) {
		struct pto_core *core = &pdev->core[i];

		if (!(g->clusters & BIT_ULL(i / PTO_CORES_PER_CLUSTER)))
			continue;
		kref_get(&g->ref);
		spin_lock(&core->graph_lock);
		WRITE_ONCE(core->graph, g);
		spin_unlock(&core->graph_lock);
		/* CTRL alone: kthread_should_stop() is the core thread's. */
		if (pto_kreg_read(core, PTO_KREG_CTRL) != PTO_CTRL_RUN)
			pto_graph_detach(core, g);
	}
	pto_graph_kick(g, NULL);
	return 0;
}

int pto_ioctl_graph_launch(struct pto_file *pf, void *data)
{
	struct pto_graph_launch *args = data;
	struct pto_device *pdev = pf->pdev;
	struct pto_graph *g;
	u64 size = args->graph_size, t0 = ktime_get_ns();
	struct pto_bo *gbo;
	void *img;
	u32 handle;
	int ret;

	args->handle = 0;
	args->bad_task = PTO_GRAPH_TASK_NONE;
	args->bad_field = PTO_GRAPH_FIELD_NONE;
	if (args->flags & ~PTO_GRAPH_LAUNCH_FLAGS_VALID || args->pad ||
	    args->pad2 || !args->clusters ||
	    args->clusters >> pdev->clusters ||
	    (u64)args->dump_lanes >> pdev->lanes)
		return -EINVAL;
	if (!size || args->graph_addr & 7)
		return pto_graph_bad(pf, args, PTO_GRAPH_TASK_NONE,
				     PTO_GRAPH_FIELD_ADDR);
	gbo = pto_bo_lookup(pf, args->graph_addr, size);
	if (!gbo)
		return pto_graph_bad(pf, args, PTO_GRAPH_TASK_NONE,
				     PTO_GRAPH_FIELD_ADDR);
	img = pto_graph_copy(gbo, args->graph_addr, &size);
	if (!img) {
		pto_bo_put(gbo);
		return -ENOMEM;
	}
	g = pto_graph_build(pf, img, size, args);
	if (IS_ERR(g)) {
		kvfree(img);
		pto_bo_put(gbo);
		return PTR_ERR(g);
	}
	g->gbo = gbo;
	g->gkaddr = gbo->vaddr + (args->graph_addr - gbo->dev_addr) +
		    sizeof(struct pto_graph_hdr);
	g->clusters = args->clusters;
	ret = pto_graph_alloc_lc(g, pto_lc_lines_param());
	if (ret)
		goto put;

	ret = xa_alloc(&pf->graphs, &handle, g, xa_limit_32b,
		       GFP_KERNEL_ACCOUNT);
	if (ret)
		goto put;
	ret = pto_graph_check_dump(pf, args->dump_lanes);
	if (ret)
		goto erase;
	/* Capture state and supervisors before any core sees the graph. */
	ret = pto_graph_capture_start(pf, g, args, &img);
	if (ret)
		goto erase;
	ret = mutex_lock_killable(&pdev->core_lock);
	if (ret)
		goto erase;
	ret = pto_graph_attach(pf, g, t0);
	mutex_unlock(&pdev->core_lock);
	if (ret)
		goto erase;
	kvfree(img);
	args->handle = handle;
	return 0;
erase:
	pto_graph_capture_stop(g);
	xa_erase(&pf->graphs, handle);
put:
	kvfree(img);
	pto_graph_put(g);
	return ret;
}

/* Detach every core still in @g and drop the handle's reference. */
static void pto_graph_end(struct pto_graph *g)
{
	struct pto_device *pdev = g->pdev;
	unsigned int i;

	pto_graph_capture_stop(g);
	for (i = 0; i < pdev->cores; i++)
		if (g->clusters & BIT_ULL(i / PTO_CORES_PER_CLUSTER))
			pto_graph_detach(&pdev->core[i], g);
	pto_graph_put(g);
}

int pto_ioctl_graph_wait(struct pto_file *pf, void *data)
{
	struct pto_graph_wait *args = data;
	struct pto_graph *g;
	u64 now;
	s64 left;
	int ret = 0;

	if (args->flags & ~PTO_GRAPH_WAIT_FLAGS_VALID || args->pad)
		return -EINVAL;
	xa_lock(&pf->graphs);
	g = xa_load(&pf->graphs, args->handle);
	if (g)
		kref_get(&g->ref);
	xa_unlock(&pf->graphs);
	if (!g)
		return -ENOENT;

	/* A deadline past KTIME_MAX (UINT64_MAX: no limit) waits unbounded. */
	now = ktime_get_ns();
	left = args->timeout_ns > now ?
	       min_t(u64, args->timeout_ns - now, KTIME_MAX) : 0;
	if (!READ_ONCE(g->done) && left > 0)
		ret = wait_event_interruptible_hrtimeout(g->wq,
							 READ_ONCE(g->done),
							 ns_to_ktime(left));
	/* Acquire: pairs with the lock the finishing core released. */
	spin_lock(&g->lock);
	if (g->done) {
		args->tasks = g->subtasks;
		args->errors = g->errors;
		args->completed = g->completed;
		args->err_task = g->err_task;
		args->err_status = g->err_status;
		args->elapsed_ns = g->end_ns - g->start_ns;
		ret = 0;
	} else if (!ret || ret == -ETIME) {
		ret = -ETIMEDOUT;
	} else {
		ret = -EINTR;
	}
	spin_unlock(&g->lock);
	if (!ret && xa_cmpxchg(&pf->graphs, args->handle, g, NULL, 0) == g)
		pto_graph_end(g);
	pto_graph_put(g);
	return ret;
}

/* File release, after its cores retired (so each already left). */
void pto_file_release_graphs(struct pto_file *pf)
{
	struct pto_graph *g;
	unsigned long id;

	xa_for_each(&pf->graphs, id, g) {
		xa_erase(&pf->graphs, id);
		pto_graph_end(g);
	}
	xa_destroy(&pf->graphs);
}
