// SPDX-License-Identifier: MIT
/*
 * The resident route's library side: a graph built on the host, packed
 * into the driver's image (<linux/pto_graph.h>), uploaded into a GM buffer
 * and run on clusters whose cores this call launches and retires. No
 * library thread touches a task: the cores schedule the graph.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pto/graph.h>
#include <linux/pto_dump.h>
#include "core.h"
#include "graph/hbg.h"
#include "ioctl.h"

int pto_hbg_create(struct pto_dev *dev, pto_hbg **out)
{
	pto_hbg *g;

	if (!dev || !out)
		return -EINVAL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->dev = dev;
	*out = g;
	return 0;
}

void pto_hbg_destroy(pto_hbg *g)
{
	if (!g)
		return;
	free(g->tasks);
	free(g->edges);
	free(g->dump_dir);
	free(g);
}

/* Grow *@p (of *@cap elements of @size bytes) to hold @n; 0 or -ENOMEM. */
static int hbg_grow(void **p, uint32_t *cap, uint32_t n, size_t size)
{
	uint32_t c = *cap ? *cap : 16;
	void *q;

	if (n <= *cap)
		return 0;
	while (c < n)
		c *= 2;
	q = realloc(*p, (size_t)c * size);
	if (!q)
		return -ENOMEM;
	memset((char *)q + (size_t)*cap * size, 0, (size_t)(c - *cap) * size);
	*p = q;
	*cap = c;
	return 0;
}

int pto_hbg_add_task(pto_hbg *g, uint32_t active_mask,
		     const uint32_t func_id[3], uint32_t *task)
{
	struct pto_graph_task *t;
	int ret;

	if (!g || !func_id || g->ntasks >= PTO_GRAPH_MAX_TASKS)
		return -EINVAL;
	ret = hbg_grow((void **)&g->tasks, &g->cap, g->ntasks + 1,
		       sizeof(*g->tasks));
	if (ret)
		return ret;
	t = &g->tasks[g->ntasks];
	t->active_mask = active_mask;
	memcpy(t->func_id, func_id, sizeof(t->func_id));
	if (task)
		*task = g->ntasks;
	g->ntasks++;
	return 0;
}

int pto_hbg_set_tensor(pto_hbg *g, uint32_t task, unsigned int slot,
		       const struct pto_tensor_desc *t, uint32_t role,
		       uint32_t flags)
{
	struct pto_graph_tensor *a;

	if (!g || !t || task >= g->ntasks || slot >= PTO_PAYLOAD_TENSORS)
		return -EINVAL;
	a = &g->tasks[task].t[slot];
	a->t = *t;
	a->role = role;
	a->flags = flags;
	return 0;
}

int pto_hbg_set_scalar(pto_hbg *g, uint32_t task, unsigned int i,
		       uint64_t value)
{
	if (!g || task >= g->ntasks || i >= 2)
		return -EINVAL;
	g->tasks[task].scalar[i] = value;
	return 0;
}

/* Stored as given: the driver checks the range against the task's mask. */
int pto_hbg_set_block(pto_hbg *g, uint32_t task, uint32_t base, uint32_t num)
{
	if (!g || task >= g->ntasks)
		return -EINVAL;
	g->tasks[task].block_base = base;
	g->tasks[task].block_num = num;
	return 0;
}

int pto_hbg_add_edge(pto_hbg *g, uint32_t from, uint32_t to)
{
	int ret;

	if (!g || from >= g->ntasks || to >= g->ntasks || from == to ||
	    g->nedges >= PTO_GRAPH_MAX_EDGES)
		return -EINVAL;
	ret = hbg_grow((void **)&g->edges, &g->ecap, g->nedges + 1,
		       sizeof(*g->edges));
	if (ret)
		return ret;
	g->edges[g->nedges].from = from;
	g->edges[g->nedges].to = to;
	g->nedges++;
	return 0;
}

static uint64_t hbg_image_size(const pto_hbg *g)
{
	uint64_t n = sizeof(struct pto_graph_hdr) +
		     (uint64_t)g->ntasks * sizeof(struct pto_graph_task) +
		     (uint64_t)g->nedges * sizeof(uint32_t);

	return (n + 7) & ~7ULL;
}

/* The image: successors grouped by task (a counting sort of the edges). */
static void hbg_pack(pto_hbg *g, void *img)
{
	struct pto_graph_hdr *h = img;
	struct pto_graph_task *t = (struct pto_graph_task *)(h + 1);
	uint32_t *e = (uint32_t *)(t + g->ntasks), i, at = 0;

	memset(h, 0, sizeof(*h));
	h->magic = PTO_GRAPH_MAGIC;
	h->version = PTO_GRAPH_VERSION;
	h->task_count = g->ntasks;
	h->edge_count = g->nedges;
	h->size = hbg_image_size(g);
	h->task_size = sizeof(struct pto_graph_task);
	for (i = 0; i < g->ntasks; i++) {
		g->tasks[i].fanin = 0;
		g->tasks[i].succ_count = 0;
	}
	for (i = 0; i < g->nedges; i++) {
		g->tasks[g->edges[i].from].succ_count++;
		g->tasks[g->edges[i].to].fanin++;
	}
	for (i = 0; i < g->ntasks; i++) {
		g->tasks[i].succ_start = at;
		at += g->tasks[i].succ_count;
		g->tasks[i].succ_count = 0;
	}
	for (i = 0; i < g->nedges; i++) {
		struct pto_graph_task *f = &g->tasks[g->edges[i].from];

		e[f->succ_start + f->succ_count++] = g->edges[i].to;
	}
	memcpy(t, g->tasks, (size_t)g->ntasks * sizeof(*t));
}

static uint64_t hbg_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Every cluster of the device when @clusters is 0. */
static int hbg_clusters(struct pto_dev *dev, uint64_t *clusters)
{
	struct pto_dev_info info;
	int ret;

	if (*clusters)
		return 0;
	ret = pto_dev_info(dev, &info);
	if (ret)
		return ret;
	*clusters = info.clusters >= 64 ? ~0ULL : (1ULL << info.clusters) - 1;
	return 0;
}

/* Launch, wait; the Out fields of the tasks come back into @g. */
static int hbg_launch_wait(pto_hbg *g, struct pto_bo *bo, void *img,
			   uint64_t clusters, const struct hbg_dump *hd,
			   int timeout_ms, struct pto_hbg_stats *st,
			   uint32_t *late)
{
	int fd = pto_dev_fd(g->dev);
	struct pto_graph_launch la;
	struct pto_graph_wait w;
	int ret;

	memset(&la, 0, sizeof(la));
	la.graph_addr = pto_bo_dev_addr(bo);
	la.graph_size = hbg_image_size(g);
	la.clusters = clusters;
	la.dump_lanes = hd->lanes;
	la.run_id = hd->run_id;
	ret = ioc_call(fd, PTO_IOCTL_GRAPH_LAUNCH, &la);
	st->bad_task = la.bad_task;
	st->bad_field = la.bad_field;
	if (ret)
		return ret;
	memset(&w, 0, sizeof(w));
	w.handle = la.handle;
	w.timeout_ns = hbg_now_ns() + (uint64_t)timeout_ms * 1000000ULL;
	ret = ioc_call(fd, PTO_IOCTL_GRAPH_WAIT, &w);
	if (ret)
		*late = la.handle;
	if (ret)
		return ret;
	st->tasks = w.tasks;
	st->errors = w.errors;
	st->elapsed_ns = w.elapsed_ns;
	st->completed = w.completed;
	st->err_task = w.err_task;
	st->err_status = w.err_status;
	memcpy(g->tasks, (struct pto_graph_task *)((struct pto_graph_hdr *)img + 1),
	       (size_t)g->ntasks * sizeof(*g->tasks));
	return w.err_task == PTO_GRAPH_TASK_NONE && !w.err_status ? 0 : -EIO;
}

int pto_hbg_run(pto_hbg *g, uint64_t clusters, int timeout_ms,
		struct pto_hbg_stats *st)
{
	uint64_t cores[PTO_CORE_MASK_WORDS] = { 0 };
	struct pto_core_retire r;
	struct core_launch *l = NULL;
	struct pto_hbg_stats dummy;
	struct pto_bo *bo = NULL;
	struct hbg_dump hd = { 0 };
	struct pto_graph_wait w;
	uint32_t late = 0;
	unsigned int c, i;
	void *img;
	int ret, ret2;

	if (!st)
		st = &dummy;
	memset(st, 0, sizeof(*st));
	st->err_task = PTO_GRAPH_TASK_NONE;
	st->bad_task = PTO_GRAPH_TASK_NONE;
	if (!g || !g->ntasks || timeout_ms < 0)
		return -EINVAL;
	ret = hbg_clusters(g->dev, &clusters);
	if (ret)
		return ret;
	ret = pto_bo_alloc(g->dev, hbg_image_size(g), 0, &bo);
	if (!ret)
		ret = pto_bo_map(bo, &img);
	if (ret)
		goto out_bo;
	hbg_pack(g, img);
	ret = hbg_dump_begin(g, clusters, &hd);
	if (ret)
		goto out_bo;
	ret = core_cluster_acquire(g->dev, clusters);
	if (ret)
		goto out_bo;
	for (c = 0; c < 64; c++)
		if (clusters & (1ULL << c))
			for (i = 0; i < PTO_CORES_PER_CLUSTER; i++) {
				unsigned int k = c * PTO_CORES_PER_CLUSTER + i;

				cores[k / 64] |= 1ULL << (k % 64);
			}
	ret = core_launch_cores(g->dev, cores, &l);
	if (!ret)
		ret = hbg_launch_wait(g, bo, img, clusters, &hd, timeout_ms,
				      st, &late);
	/* The one retirement path: the graph's cores leave it there. */
	ret2 = core_retire(g->dev, cores, &r);
	/* A graph that outlived its wait ended at the retirement: free it. */
	if (late) {
		memset(&w, 0, sizeof(w));
		w.handle = late;
		ioc_call(pto_dev_fd(g->dev), PTO_IOCTL_GRAPH_WAIT, &w);
	}
	if (!ret && ret2)
		ret = ret2;
	if (!ret && (r.quarantined[0] | r.quarantined[1]))
		ret = -EIO;
	core_launch_free(l);
	core_cluster_release(g->dev, clusters);
out_bo:
	/* The graph has ended here: its lanes are the collector's again. */
	ret = hbg_dump_end(g, &hd, ret);
	pto_bo_free(bo);
	return ret;
}

int pto_hbg_task_times(const pto_hbg *g, uint32_t task, uint64_t *start_ns,
		       uint64_t *end_ns, uint32_t *core)
{
	if (!g || task >= g->ntasks)
		return -EINVAL;
	if (start_ns)
		*start_ns = g->tasks[task].start_ns;
	if (end_ns)
		*end_ns = g->tasks[task].end_ns;
	if (core)
		*core = g->tasks[task].core;
	return 0;
}
