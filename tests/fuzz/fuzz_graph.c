// SPDX-License-Identifier: GPL-2.0
/*
 * pto-fuzz's graph launches (<linux/pto_graph.h>): a small random tree of
 * FILL / ADD_SCALAR tasks over a fresh buffer of the actor, on a cluster
 * whose cores it launched, waited for and its bytes checked; or the same
 * graph with one defect (a foreign or straddling tensor, a cycle, a wrong
 * fan-in, a bad header, a block range past its SPMD task, a foreign graph
 * address, a cluster not its own), which must be refused with the field
 * the ABI names.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/pto_graph.h>
#include "fuzz_actor.h"

#define FZ_G_TASKS 6
#define FZ_G_ELEMS 64
#define FZ_G_SIZE 16384
#define FZ_G_DATA 8192		/* tensors from here in the buffer */

static const int fz_err_graph[] = { EINVAL, EPERM, EBUSY, ENOMEM, ENOENT,
			     ETIMEDOUT, EINTR, EOPNOTSUPP, 0 };

struct fz_graph {
	struct pto_graph_hdr h;
	struct pto_graph_task t[FZ_G_TASKS];
	uint32_t edge[FZ_G_TASKS + 2];
};

/* A cluster of the actor's with every core launched, or -1. */
static int fz_graph_cluster(struct fz_actor *a)
{
	unsigned int c, k, n = 0, pick[64];

	for (c = 0; c < a->info.clusters && c < 64; c++) {
		if (!(a->clusters & (1ull << c)))
			continue;
		for (k = 0; k < PTO_CORES_PER_CLUSTER; k++)
			if (!fz_bit(a->launched, c * PTO_CORES_PER_CLUSTER + k))
				break;
		if (k == PTO_CORES_PER_CLUSTER)
			pick[n++] = c;
	}
	return n ? (int)pick[fz_below(a, n)] : -1;
}

static struct pto_tensor_desc fz_vec(uint64_t addr)
{
	struct pto_tensor_desc t = { .addr = addr, .dtype = PTO_DTYPE_I32,
				     .rank = 1 };

	t.shape[0] = FZ_G_ELEMS;
	t.strides[0] = 1;
	return t;
}

/* Task k's out vector in the buffer at @base. */
static uint64_t fz_out(uint64_t base, unsigned int k)
{
	return base + FZ_G_DATA + (uint64_t)k * FZ_G_ELEMS * 4;
}

/*
 * A tree: task 0 fills its vector, task k adds a scalar to its parent's
 * (an edge parent -> k); @want[k] is the value its vector ends with.
 */
static unsigned int fz_graph_build(struct fz_actor *a, struct fz_graph *g,
				   uint64_t base, unsigned int n,
				   int32_t *want)
{
	unsigned int parent[FZ_G_TASKS], k, p, e = 0;

	memset(g, 0, sizeof(*g));
	for (k = 0; k < n; k++) {
		struct pto_graph_task *t = &g->t[k];
		unsigned int slot = (unsigned int)fz_below(a, 3);
		uint32_t s = 1 + (uint32_t)fz_below(a, 1000);

		t->active_mask = 1u << slot;
		t->scalar[0] = s;
		t->t[PTO_ARG_OUT].t = fz_vec(fz_out(base, k));
		t->t[PTO_ARG_OUT].role = PTO_GRAPH_ROLE_OUT;
		if (!k) {
			t->func_id[slot] = PTO_FUNC_FILL;
			want[k] = (int32_t)s;
			continue;
		}
		parent[k] = (unsigned int)fz_below(a, k);
		t->func_id[slot] = PTO_FUNC_ADD_SCALAR;
		t->t[PTO_ARG_A].t = fz_vec(fz_out(base, parent[k]));
		t->t[PTO_ARG_A].role = PTO_GRAPH_ROLE_IN;
		t->fanin = 1;
		want[k] = want[parent[k]] + (int32_t)s;
	}
	/* Each task's successors are contiguous in the edge array. */
	for (p = 0; p < n; p++) {
		g->t[p].succ_start = e;
		for (k = p + 1; k < n; k++)
			if (parent[k] == p)
				g->edge[e++] = k;
		g->t[p].succ_count = e - g->t[p].succ_start;
	}
	return e;
}

static void fz_graph_hdr(struct fz_graph *g, unsigned int n, unsigned int e)
{
	g->h.magic = PTO_GRAPH_MAGIC;
	g->h.version = PTO_GRAPH_VERSION;
	g->h.task_count = n;
	g->h.edge_count = e;
	g->h.task_size = sizeof(struct pto_graph_task);
	g->h.size = (sizeof(g->h) + n * sizeof(struct pto_graph_task) +
		     e * 4 + 7) & ~7ull;
}

/* Upload @g's header, tasks and edges contiguously at @dst. */
static void fz_graph_upload(const struct fz_graph *g, char *dst)
{
	size_t tb = g->h.task_count * sizeof(struct pto_graph_task);

	memcpy(dst, &g->h, sizeof(g->h));
	memcpy(dst + sizeof(g->h), g->t, tb);
	memcpy(dst + sizeof(g->h) + tb, g->edge, g->h.edge_count * 4);
}

static int fz_graph_wait(struct fz_actor *a, uint32_t handle, unsigned int n)
{
	struct pto_graph_wait w = { .handle = handle };
	int ret;

	w.timeout_ns = fz_now() + 20000000000ull;
	ret = fz_ioctl(a, "GRAPH_WAIT", PTO_IOCTL_GRAPH_WAIT, &w, 0,
		       fz_err_graph);
	if (ret)
		return -1;
	if (w.completed != n || w.err_task != PTO_GRAPH_TASK_NONE ||
	    w.errors || w.tasks != n) {
		fz_bad(a, "graph of %u tasks: completed %u, %llu subtasks, %llu errors, err_task %u status %u",
		       n, w.completed, (unsigned long long)w.tasks,
		       (unsigned long long)w.errors, w.err_task, w.err_status);
		return -1;
	}
	/* The handle went with the wait. */
	return fz_ioctl(a, "GRAPH_WAIT (ended)", PTO_IOCTL_GRAPH_WAIT, &w,
			-ENOENT, fz_err_graph) == -ENOENT ? 0 : -1;
}

static int fz_graph_check(struct fz_actor *a, const struct fz_bo *b,
			  unsigned int n, const int32_t *want)
{
	unsigned int k, i;

	for (k = 0; k < n; k++) {
		const int32_t *v = (const int32_t *)((char *)b->map +
						     fz_out(0, k));

		for (i = 0; i < FZ_G_ELEMS; i++)
			if (v[i] != want[k]) {
				fz_bad(a, "graph task %u: out[%u] = %d, want %d",
				       k, i, v[i], want[k]);
				return -1;
			}
	}
	return 0;
}

/* One defect in @g (valid, @n tasks): the field it must be refused for. */
static uint32_t fz_graph_defect(struct fz_actor *a, struct fz_graph *g,
				unsigned int n, const struct fz_bo *b,
				uint32_t *bad_task)
{
	unsigned int k = (unsigned int)fz_below(a, n);
	uint64_t addr;

	*bad_task = k;
	switch (fz_below(a, 8)) {
	case 0:
		addr = a->cmd->nforeign ?
		       a->cmd->foreign[fz_below(a, a->cmd->nforeign)].addr : 0;
		if (!addr || fz_bo_at(a, addr, FZ_G_ELEMS * 4))
			addr = b->addr + b->size;	/* unlikely the actor's */
		if (fz_bo_at(a, addr, FZ_G_ELEMS * 4))
			return PTO_GRAPH_FIELD_NONE;
		g->t[k].t[PTO_ARG_OUT].t.addr = addr;
		return PTO_GRAPH_FIELD_TENSOR_ADDR;
	case 1:		/* straddles the buffer's end */
		g->t[k].t[PTO_ARG_OUT].t.addr = b->addr + b->size -
						4 * (1 + fz_below(a, 63));
		return PTO_GRAPH_FIELD_TENSOR_ADDR;
	case 2:
		g->t[k].fanin++;
		*bad_task = PTO_GRAPH_TASK_NONE;
		return PTO_GRAPH_FIELD_FANIN;
	case 3:
		g->h.magic ^= 1u << fz_below(a, 32);
		*bad_task = PTO_GRAPH_TASK_NONE;
		return PTO_GRAPH_FIELD_MAGIC;
	case 4:
		g->t[k].func_id[(fz_below(a, 3))] = PTO_FUNC_COUNT +
			(uint32_t)fz_below(a, 100);
		return PTO_GRAPH_FIELD_FUNC_ID;
	case 5:
		g->t[k].active_mask = PTO_GRAPH_AIV0 | PTO_GRAPH_AIC;
		return PTO_GRAPH_FIELD_ACTIVE_MASK;
	case 6:		/* a one-core task's block at or past block_num */
		g->t[k].block_num = 1 + (uint32_t)fz_below(a, 64);
		g->t[k].block_base = g->t[k].block_num +
				     (uint32_t)fz_below(a, 4);
		return PTO_GRAPH_FIELD_BLOCK;
	default:
		g->t[k].t[PTO_ARG_OUT].role = PTO_GRAPH_ROLE_IN;
		return PTO_GRAPH_FIELD_ROLE;
	}
}

/* Two tasks, each the other's successor: fan-ins right, a cycle. */
static void fz_graph_cycle(struct fz_graph *g, uint64_t base)
{
	unsigned int k;

	memset(g, 0, sizeof(*g));
	for (k = 0; k < 2; k++) {
		g->t[k].active_mask = PTO_GRAPH_AIV0;
		g->t[k].func_id[1] = PTO_FUNC_FILL;
		g->t[k].scalar[0] = 7;
		g->t[k].t[PTO_ARG_OUT].t = fz_vec(fz_out(base, k));
		g->t[k].t[PTO_ARG_OUT].role = PTO_GRAPH_ROLE_OUT;
		g->t[k].fanin = 1;
		g->t[k].succ_start = k;
		g->t[k].succ_count = 1;
		g->edge[k] = 1 - k;
	}
	fz_graph_hdr(g, 2, 2);
}

int op_graph(struct fz_actor *a)
{
	struct pto_graph_launch l = { 0 };
	static struct fz_graph g;
	int32_t want[FZ_G_TASKS];
	unsigned int n = 1 + (unsigned int)fz_below(a, FZ_G_TASKS), e;
	uint32_t field = PTO_GRAPH_FIELD_NONE, bad_task = PTO_GRAPH_TASK_NONE;
	int c = fz_graph_cluster(a), expect = 0, ret, r, f;
	struct fz_bo *b;

	if (a->nbo >= FZ_MAX_BOS - 2)
		return 0;
	/*
	 * A lane bound above OFF is closed half the time, so that graphs
	 * run; first, as a close may forget buffers (moving a->bo[]).
	 */
	if (fz_lanes_dumping(a) && fz_below(a, 2))
		fz_lanes_close_dumping(a);
	b = fz_bo_new(a, FZ_G_SIZE, FZ_ROLE_WORK);
	if (!b || !b->map)
		return 0;
	e = fz_graph_build(a, &g, b->addr, n, want);
	fz_graph_hdr(&g, n, e);
	l.graph_addr = b->addr;
	l.clusters = c >= 0 ? 1ull << c : 1;
	r = (int)fz_below(a, 16);
	if (c < 0 && !a->clusters && fz_below(a, 2)) {
		struct pto_cluster_acquire ac = { 0 };
		int fc = fz_foreign_cluster(a);

		/* Another actor may hold it, or take it meanwhile. */
		ac.clusters = fc >= 0 ? 1ull << fc : 0;
		if (fc >= 0 && !(a->cmd->others_clusters & ac.clusters) &&
		    !fz_ioctl(a, "CLUSTER_ACQUIRE (graph)",
			      PTO_IOCTL_CLUSTER_ACQUIRE, &ac, FZ_ANY,
			      fz_err_cluster))
			a->clusters |= ac.clusters;
	}
	if (c < 0 && a->clusters && fz_below(a, 4)) {
		/* Mostly valid graphs: ready a cluster of the actor's. */
		c = __builtin_ctzll(a->clusters);
		if (fz_launch_cluster(a, (unsigned int)c))
			goto out;
		l.clusters = 1ull << c;
	}
	if (c < 0 && r >= 6) {
		/* No cluster of its own ready: one it does not own, or not launched. */
		f = fz_foreign_cluster(a);
		if (f >= 0 && fz_below(a, 2)) {
			l.clusters = 1ull << f;
			expect = -EPERM;
		} else if (a->clusters) {
			l.clusters = a->clusters & -a->clusters;
			expect = -EBUSY;
		} else {
			r = 0;
		}
	}
	switch (r) {
	case 0: case 1: case 2:
		field = fz_graph_defect(a, &g, n, b, &bad_task);
		expect = field ? -EINVAL : expect;
		break;
	case 3:
		fz_graph_cycle(&g, b->addr);
		field = PTO_GRAPH_FIELD_CYCLE;
		expect = -EINVAL;
		break;
	case 4:
		/* A graph address outside the caller's buffers. */
		l.graph_addr = b->addr + b->size + 8 * fz_below(a, 512);
		if (fz_bo_at(a, l.graph_addr, 8))
			goto out;
		field = PTO_GRAPH_FIELD_ADDR;
		expect = -EINVAL;
		break;
	case 5:
		l.pad = 1 + (uint32_t)fz_below(a, 100);
		expect = -EINVAL;
		break;
	}
	if (c < 0 && !expect)
		goto out;	/* no cluster to run it on */
	/* A lane still bound above OFF: the launch is refused. */
	if (fz_lanes_dumping(a) &&
	    (!expect || expect == -EPERM || expect == -EBUSY))
		expect = -EOPNOTSUPP;
	fz_graph_upload(&g, b->map);
	l.graph_size = g.h.size;
	ret = fz_ioctl(a, "GRAPH_LAUNCH", PTO_IOCTL_GRAPH_LAUNCH, &l, expect,
		       fz_err_graph);
	if (ret) {
		if (field && ret == -EINVAL &&
		    (l.bad_field != field ||
		     (bad_task != PTO_GRAPH_TASK_NONE && l.bad_task != bad_task)))
			fz_bad(a, "GRAPH_LAUNCH: refused for field %u task %u, the model expects %u task %u",
			       l.bad_field, l.bad_task, field, bad_task);
		if (ret == expect)
			a->rep->ev[FZ_EV_GRAPH_REFUSED]++;
		goto out;
	}
	if (!l.handle)
		fz_bad(a, "GRAPH_LAUNCH: handle 0");
	if (!fz_graph_wait(a, l.handle, n) && !fz_graph_check(a, b, n, want))
		a->rep->ev[FZ_EV_GRAPH_RUN]++;
out:
	{
		struct pto_bo_free fr = { .handle = b->handle };

		if (!fz_ioctl(a, "BO_FREE (graph)", PTO_IOCTL_BO_FREE, &fr, 0,
			      fz_err_handle)) {
			munmap(b->map, b->size);
			fz_bo_forget(a, b);
		}
	}
	return 0;
}
