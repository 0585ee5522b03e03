// SPDX-License-Identifier: MIT
/* The device backend's ops table and its creation: partitions, threads,
 * heap rings (pto_orch_create_device). */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include "device.h"
#include "sched/sched.h"
#include "orch/backend.h"
#include "trace/trace.h"

static unsigned int sched_max_awake(const struct pto_dev_info *info,
				    long cpus, unsigned int nthreads)
{
	long n;

	if (!(info->caps & PTO_CAP_MOCK) || cpus < 1 || !nthreads)
		return PTO_MAX_CORES;
	n = (cpus - 1 - (long)nthreads) / (long)nthreads;
	return n > 0 ? (unsigned int)n : 1;
}

/*
 * One thread per lane, but no more than the CPUs left beside the
 * orchestration thread: a scheduler thread spins while it has work, and
 * spinning threads that outnumber the CPUs take them from the thread that
 * submits (and, on the mock, from the cores' kthreads).
 */
static uint32_t sched_default_threads(const struct pto_dev_info *info,
				      long cpus)
{
	uint32_t n = info->lanes;

	if (cpus > 1 && (uint32_t)(cpus - 1) < n)
		n = (uint32_t)(cpus - 1);
	return n ? n : 1;
}

/* ---- backend ops ---------------------------------------------------- */

static int sched_heap_map(void *p, int ring, uint64_t size,
			  struct orch_heap *out)
{
	struct sched_backend *be = p;
	struct pto_bo *bo;
	void *base;
	int ret;

	ret = pto_bo_alloc(be->dev, size, 0, &bo);
	if (ret)
		return ret;
	ret = pto_bo_map(bo, &base);
	if (ret) {
		pto_bo_free(bo);
		return ret;
	}
	be->heap_bo[ring] = bo;
	memset(out, 0, sizeof(*out));
	out->base = base;
	out->size = size;
	out->space = PTO_SPACE_GM;
	/* A GM tensor's key is (GM, buffer base address, offset). */
	out->obj = pto_bo_dev_addr(bo);
	out->obj_off = 0;
	out->dev = pto_bo_dev_tag(bo);
	return 0;
}

static void sched_heap_unmap(void *p, int ring, struct orch_heap *h)
{
	struct sched_backend *be = p;

	pto_bo_free(be->heap_bo[ring]);
	be->heap_bo[ring] = NULL;
}

/* "pto0-sched1": what top, perf and a debugger show for the thread. */
static void sched_name_thread(struct sched_thread *t)
{
	char name[16];

	snprintf(name, sizeof(name), "pto%u-sched%u",
		 t->be->dev_index % 100, t->index % 100);
	pthread_setname_np(t->tid, name);
}

static int sched_start(void *p, struct pto_orch *o)
{
	struct sched_backend *be = p;
	unsigned int i;
	int ret;

	be->orch = o;
	/* A core: one task running and one pending payload. */
	for (i = 0; i < be->nworkers; i++)
		if (be->workers[i].kind == PTO_WORKER_AIC ||
		    be->workers[i].kind == PTO_WORKER_AIV)
			orch_set_worker_capacity(o, (int32_t)i, 2);
	/* The trace's names: the built-in kernels, and the core rows AIC_n /
	 * AIV_n (worker kinds are core types). */
	for (i = 0; orch_trace(o) && i < PTO_FUNC_COUNT; i++)
		if (core_func_name(i))
			trace_func_name(orch_trace(o), i, core_func_name(i));
	for (i = 0; orch_trace(o) && i < be->nthreads; i++) {
		const struct sched_thread *t = &be->threads[i];
		unsigned int k;

		for (k = 0; k < t->ncores; k++)
			trace_core_type(orch_trace(o),
					(uint16_t)t->cores[k].rc->index,
					t->cores[k].kind);
	}
	for (i = 0; i < be->nthreads; i++) {
		ret = pthread_create(&be->threads[i].tid, NULL,
				     sched_thread_main, &be->threads[i]);
		if (ret) {
			ret = -ret;
			goto err;
		}
		atomic_store_explicit(&be->threads[i].started, 1,
				      memory_order_relaxed);
		sched_name_thread(&be->threads[i]);
	}
	ret = sched_sub_start(be);
	if (!ret)
		return 0;
err:
	atomic_store(&be->stop, 1);
	while (i--) {
		uint64_t one = 1;

		if (write(be->threads[i].evfd, &one, sizeof(one)) < 0) {
			/* the thread also polls stop */
		}
		pthread_join(be->threads[i].tid, NULL);
		atomic_store_explicit(&be->threads[i].started, 0,
				      memory_order_relaxed);
	}
	return ret;
}

/*
 * @again: a pending kick makes this one unnecessary, for work found by a pop
 * under sched_mu (the thread pops after consuming the kick, and the kicker
 * holds sched_mu until the work is linked). Not for MIX kicks: mix_wanted is
 * read outside sched_mu and needs the fence below.
 */
static void wake_thread(struct sched_thread *t, bool again)
{
	uint64_t one = 1;

	/*
	 * A kick from the thread itself: it is awake (@sleeping is 0 whenever
	 * it runs orchestrator code) and sees this store by program order, so
	 * no fence, no eventfd write, and a plain flag instead of @kicked.
	 */
	if (t == sched_self) {
		t->self_kicked = true;
		return;
	}
	if (again && atomic_load_explicit(&t->kicked, memory_order_relaxed))
		return;
	/* Dekker with sched_sleep(): see there. */
	atomic_store_explicit(&t->kicked, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&t->sleeping, memory_order_relaxed) &&
	    write(t->evfd, &one, sizeof(one)) < 0) {
		/* cannot overflow: the thread drains it on every wake */
	}
}

static void sched_kick(void *p, int32_t widx, uint32_t kind)
{
	struct sched_backend *be = p;
	unsigned int i;

	if (widx >= 0 && (unsigned int)widx < be->nworkers) {
		struct sched_worker *w = &be->wmap[widx];

		if (w->sub) {
			sched_sub_kick(w->sub);
			return;
		}
		if (w->cl)
			sched_want_mix(w->cl);
		wake_thread(w->t, !w->cl);
		return;
	}
	if (kind == PTO_WORKER_SUB) {
		for (i = 0; i < be->nsubs; i++)
			sched_sub_kick(&be->subs[i]);
		return;
	}
	for (i = 0; i < be->nthreads; i++)
		wake_thread(&be->threads[i], true);
}

/*
 * A group's members must all belong to one scheduler thread. SUB workers
 * belong to none: their groups are pto_submit_sub_group()'s, whose
 * members start as SUB workers free up.
 */
static int sched_check_group(void *p, const int32_t *widx, uint32_t n,
			     char *msg, size_t len)
{
	struct sched_backend *be = p;
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (be->wmap[widx[i]].sub) {
			snprintf(msg, len,
				 "group member %u targets SUB worker %d: a device runs all-or-nothing groups on the cores of one scheduler thread (SUB tasks: pto_submit_sub_group)",
				 i, be->workers[widx[i]].id);
			return -EINVAL;
		}
	}
	for (i = 1; i < n; i++) {
		if (be->wmap[widx[i]].t != be->wmap[widx[0]].t) {
			snprintf(msg, len,
				 "group spans scheduler threads %u and %u: its targets must lie in one partition",
				 be->wmap[widx[0]].t->index,
				 be->wmap[widx[i]].t->index);
			return -EINVAL;
		}
	}
	return 0;
}

static void sched_destroy(void *p)
{
	struct sched_backend *be = p;
	unsigned int i;

	/* Joined by the stop, or never started (a failed create). */
	if (be->subs) {
		atomic_store(&be->stop, 1);
		sched_sub_wake_all(be);
		sched_sub_join(be, NULL);
		sched_sub_free(be);
	}
	for (i = 0; i < be->nthreads; i++) {
		struct sched_thread *t = &be->threads[i];

		/*
		 * The cores were retired when the thread left its loop (or, if
		 * it never ran, the release retires them); releasing the
		 * clusters frees them for other files.
		 */
		if (t->clusters)
			core_cluster_release(be->dev, t->clusters);
		core_launch_free(t->launch);
		free(t->cores);
		free(t->cl);
		if (t->evfd >= 0)
			close(t->evfd);
	}
	/*
	 * Released above: another orchestrator on the handle may take them.
	 * Only a backend that claimed them gets here (create frees one that
	 * did not itself).
	 */
	dev_unclaim_clusters(be->dev, be->clusters);
	sched_dump_fini(be);
	free(be->threads);
	free(be);
}

static const struct orch_backend_ops sched_ops = {
	.name = "device",
	.kick_wakes_server = true,
	.own_thread_kinds = 1u << PTO_WORKER_SUB,
	.callback_kinds = 1u << PTO_WORKER_SUB,
	.heap_map = sched_heap_map,
	.heap_unmap = sched_heap_unmap,
	.start = sched_start,
	.stop = sched_stop,
	.abort = sched_abort,
	.kick = sched_kick,
	.check_group = sched_check_group,
	.run_begin = sched_dump_run_begin,
	.run_end = sched_dump_run_end,
	.task_members_done = sched_dump_members_done,
	.kernels_need_heap_space = true,
	.tensorless_kernels = SCHED_TENSORLESS_KERNELS,
	.destroy = sched_destroy,
};

/* ---- creation ------------------------------------------------------- */

static void add_worker(struct sched_backend *be, int32_t id, uint32_t kind,
		       struct sched_thread *t, struct sched_cluster *cl)
{
	be->workers[be->nworkers] = (struct pto_worker_desc){ .id = id,
							      .kind = kind };
	be->wmap[be->nworkers] = (struct sched_worker){ t, cl, NULL };
	be->nworkers++;
	t->kinds |= 1u << kind;
}

/* The SUB workers, after every core and cluster: ids PTO_SCHED_SUB_ID(i). */
static int add_sub_workers(struct sched_backend *be, unsigned int n)
{
	unsigned int i;
	int ret = sched_sub_init(be, n);

	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		be->subs[i].hw.widx = (int32_t)be->nworkers;
		be->workers[be->nworkers] = (struct pto_worker_desc){
			.id = PTO_SCHED_SUB_ID(i), .kind = PTO_WORKER_SUB };
		be->wmap[be->nworkers] = (struct sched_worker){
			.sub = &be->subs[i] };
		be->nworkers++;
	}
	return 0;
}

/*
 * Launch thread @t's cores and bind them to worker indices: each core is a
 * worker (id = core index), each cluster a MIX worker.
 */
static int sched_thread_launch(struct sched_backend *be, struct sched_thread *t,
			       const struct pto_dev_info *info)
{
	uint64_t mask[PTO_CORE_MASK_WORDS] = { 0 };
	unsigned int c, k, core;
	uint32_t kind;
	int ret;

	for (c = 0; c < info->clusters; c++) {
		if (!(t->clusters & (1ULL << c)))
			continue;
		t->nclusters++;
		for (core = c * 3; core < c * 3 + 3; core++)
			mask[core / 64] |= 1ULL << (core % 64);
	}
	ret = core_launch_cores_notify(be->dev, mask, t->evfd, &t->launch);
	if (ret)
		return ret;
	t->ncores = t->launch->ncores;
	t->cores = calloc(t->ncores, sizeof(*t->cores));
	t->cl = calloc(t->nclusters, sizeof(*t->cl));
	if (!t->cores || !t->cl)
		return -ENOMEM;
	/* core[k] is the k-th core in ascending order: 3 per cluster. */
	for (k = 0; k < t->ncores; k++) {
		struct core_rc *rc = &t->launch->core[k];
		struct sched_cluster *cl = &t->cl[k / 3];

		cl->index = rc->index / 3;
		cl->core[k % 3] = &t->cores[k];
		t->cores[k].rc = rc;
		t->cores[k].cl = cl;
		t->cores[k].t = t;
		t->cores[k].payload_dirty[0] = SCHED_PAYLOAD_DIRTY_ALL;
		t->cores[k].payload_dirty[1] = SCHED_PAYLOAD_DIRTY_ALL;
		mask_set(&t->all, k);
		kind = info->core_type[rc->index] == PTO_CORE_AIC ?
		       PTO_WORKER_AIC : PTO_WORKER_AIV;
		t->cores[k].widx = (int32_t)be->nworkers;
		t->cores[k].kind = kind;
		add_worker(be, (int32_t)rc->index, kind, t, NULL);
	}
	for (k = 0; k < t->nclusters; k++) {
		t->cl[k].mix_widx = (int32_t)be->nworkers;
		add_worker(be, PTO_SCHED_MIX_ID(t->cl[k].index), PTO_WORKER_MIX, t,
			   &t->cl[k]);
	}
	return 0;
}

/*
 * What this backend needs of the driver, checked before anything is
 * taken: cores to launch (PTO_CAP_CORES). Every minor of the major that
 * pto_dev_open() accepted has the launch eventfd and the retirement
 * ioctls the scheduler threads use; without this check a core-less
 * driver failed at the launch with a bare -EINVAL.
 */
static int sched_device_supported(const struct pto_dev_info *info)
{
	if (!(info->caps & PTO_CAP_CORES))
		return -EOPNOTSUPP;
	return 0;
}

int pto_orch_create_device(struct pto_dev *dev,
			   const struct pto_orch_config *ocfg,
			   const struct pto_sched_config *scfg,
			   pto_orch **out)
{
	struct pto_orch_config oc = { 0 };
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct pto_dev_info info;
	struct sched_backend *be;
	unsigned int i, nclusters;
	bool batch;
	int ret;

	*out = NULL;
	/* Cores and clusters of the parent's file: not the child's to take. */
	if (dev_forked(dev))
		return -ECHILD;
	/* Reserved words (pto_orch_create_device(3)) before anything is
	 * taken; the cores are the workers, @ocfg's are not read. */
	ret = orch_config_check(ocfg, false);
	if (!ret && scfg && (scfg->reserved0 ||
			     !orch_reserved_zero(scfg->reserved,
						 sizeof(scfg->reserved))))
		ret = -EINVAL;
	if (!ret && scfg && scfg->sub_threads > PTO_SCHED_MAX_SUB_THREADS)
		ret = -EINVAL;
	if (ret)
		return ret;
	pto_dev_info(dev, &info);
	ret = sched_device_supported(&info);
	if (ret)
		return ret;
	be = calloc(1, sizeof(*be));
	if (!be)
		return -ENOMEM;
	be->dev = dev;
	be->dev_index = info.index;
	sched_dump_init(be);
	if (scfg)
		be->cfg = *scfg;
	nclusters = be->cfg.clusters ? be->cfg.clusters : info.clusters;
	if (nclusters > info.clusters || nclusters > 64) {
		free(be);
		return -EINVAL;
	}
	if (!be->cfg.threads)
		be->cfg.threads = sched_default_threads(&info, cpus);
	if (!be->cfg.spin_us)
		be->cfg.spin_us = SCHED_DEFAULT_SPIN_US;
	if (!be->cfg.wake_delay_us)
		be->cfg.wake_delay_us = SCHED_DEFAULT_WAKE_DELAY_US;
	if (!be->cfg.sub_threads)
		be->cfg.sub_threads = SCHED_DEFAULT_SUB_THREADS;
	be->nthreads = be->cfg.threads < nclusters ? be->cfg.threads : nclusters;
	be->clusters = nclusters == 64 ? ~0ULL : (1ULL << nclusters) - 1;

	be->threads = calloc(be->nthreads, sizeof(*be->threads));
	if (!be->threads) {
		free(be);
		return -ENOMEM;
	}
	for (i = 0; i < be->nthreads; i++) {
		be->threads[i].wake_delay_ns =
			(uint64_t)be->cfg.wake_delay_us * 1000;
		be->threads[i].max_awake = sched_max_awake(&info, cpus,
							   be->nthreads);
		be->threads[i].evfd = -1;
		be->threads[i].be = be;
		be->threads[i].index = i;
	}

	/* Another orchestrator on this handle may hold them (core.h). */
	ret = dev_claim_clusters(dev, be->clusters);
	if (!ret) {
		ret = core_cluster_acquire(dev, be->clusters);
		if (ret)
			dev_unclaim_clusters(dev, be->clusters);
	}
	if (ret) {
		free(be->threads);
		free(be);
		return ret;
	}
	/* Contiguous partitions: cluster c belongs to thread c * T / C. */
	for (i = 0; i < nclusters; i++)
		be->threads[i * be->nthreads / nclusters].clusters |= 1ULL << i;
	for (i = 0; i < be->nthreads; i++) {
		struct sched_thread *t = &be->threads[i];

		t->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (t->evfd < 0) {
			ret = -errno;
			goto err;
		}
		/* Per-thread launches: each thread launches its own clusters. */
		ret = sched_thread_launch(be, t, &info);
		if (ret)
			goto err;
	}
	ret = add_sub_workers(be, be->cfg.sub_threads);
	if (ret)
		goto err;

	if (ocfg)
		oc = *ocfg;
	if (!oc.heap_ring_size)
		oc.heap_ring_size = SCHED_DEFAULT_HEAP;
	oc.nworkers = be->nworkers;
	oc.workers = be->workers;
	/* Before any scheduler thread exists: they use the barrier. */
	batch = orch_heavy_barrier_init();
	/* orch_create owns @be from here, also on failure (ops->destroy). */
	ret = orch_create(&oc, &sched_ops, be, out);
	/*
	 * Batch the orch thread's READY publications (ready.c): one sched_mu
	 * hold, one generation bump and one kick pass per ORCH_READY_BATCH
	 * submits instead of per submit. The scheduler threads take the
	 * batch before they sleep (sched_sleep). Only with membarrier(2):
	 * see orch_ready_defer.
	 */
	if (!ret && batch)
		orch_set_ready_batch(*out, ORCH_READY_BATCH);
	return ret;

err:
	sched_destroy(be);
	return ret;
}

struct sched_backend *sched_backend_of(pto_orch *o)
{
	return orch_backend_of(o, &sched_ops);
}

int pto_orch_sched_stats(pto_orch *o, struct pto_sched_stats *st)
{
	struct sched_backend *be = orch_backend_of(o, &sched_ops);
	unsigned int i;

	/* Whole, reserved words too, also on error (pto_orch_create_device(3)). */
	memset(st, 0, sizeof(*st));
	if (!be)
		return -EINVAL;
	for (i = 0; i < be->nthreads; i++) {
		struct sched_thread *t = &be->threads[i];

		st->tasks += atomic_load(&t->tasks);
		st->errors += atomic_load(&t->errors);
		st->sleeps += atomic_load(&t->sleeps);
		st->retired += atomic_load(&t->retired);
		st->quarantined += atomic_load(&t->quarantined);
		st->captures += atomic_load(&t->captures);
		if (atomic_load(&t->retire_ns) > st->retire_ns)
			st->retire_ns = atomic_load(&t->retire_ns);
		st->doorbells += t->launch ? __atomic_load_n(&t->launch->doorbells,
							     __ATOMIC_RELAXED) : 0;
	}
	return 0;
}
