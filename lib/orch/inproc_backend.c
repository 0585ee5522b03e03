// SPDX-License-Identifier: MIT
/*
 * The in-process backend: one host worker thread (host_worker.h) per
 * worker running host callbacks. Heap rings are shared anonymous mappings.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include "orch/host_worker.h"
#include "orch/orch_internal.h"

#define INPROC_SPIN 500	/* ~10 us of pause: long enough to catch a
			 * chain's next task, short enough not to starve the
			 * orch thread on a 2-CPU machine */
#define INPROC_HUNGRY 100	/* ~2 us idle: ask the orch thread to flush
				 * its deferred READY slots (ready.c) */

struct inproc_worker {
	struct orch_host_worker hw;
	pthread_t th;
	bool inited, started;
};

struct inproc {
	struct pto_orch *o;
	struct inproc_worker *w;
	uint32_t n;
	atomic_int stop;
	struct orch_host_pool pool;
	bool manual;
	_Atomic uint64_t kicks;	/* manual backend: kicks seen (tests) */
};

static int inproc_heap_map(void *bep, int ring, uint64_t size,
			   struct orch_heap *out)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	(void)bep;
	(void)ring;
	if (p == MAP_FAILED)
		return -errno;
	memset(out, 0, sizeof(*out));
	out->base = p;
	out->size = size;
	out->space = PTO_SPACE_HOST;
	return 0;
}

static void inproc_heap_unmap(void *bep, int ring, struct orch_heap *h)
{
	(void)bep;
	(void)ring;
	munmap(h->base, h->size);
	h->base = NULL;
}

static void inproc_kick(void *bep, int32_t widx, uint32_t kind)
{
	struct inproc *be = bep;
	struct inproc_worker *w;

	(void)kind;
	if (be->manual) {
		atomic_fetch_add_explicit(&be->kicks, 1, memory_order_relaxed);
		return;
	}
	w = &be->w[widx];
	orch_host_worker_kick(&w->hw);
}

/* Joins unbounded: called after the drain (every run done, so no host
 * callback is in flight) or on a failed create, the workers leave at once. */
static void inproc_stop_all(void *bep)
{
	struct inproc *be = bep;
	uint32_t i;

	atomic_store(&be->stop, 1);
	for (i = 0; i < be->n; i++)
		if (be->w[i].inited)
			orch_host_worker_wake(&be->w[i].hw);
	for (i = 0; i < be->n; i++)
		if (be->w[i].started) {
			pthread_join(be->w[i].th, NULL);
			be->w[i].started = false;
		}
}

static int inproc_stop(void *bep, const struct timespec *deadline)
{
	(void)deadline;
	inproc_stop_all(bep);
	return 0;
}

static int inproc_start(void *bep, struct pto_orch *o)
{
	struct inproc *be = bep;
	uint32_t i;
	int err;

	be->o = o;
	be->n = orch_nworkers(o);
	be->pool = (struct orch_host_pool){
		.o = o, .stop = &be->stop, .spin = INPROC_SPIN,
		.hungry = INPROC_HUNGRY };
	be->w = aligned_alloc(64, sizeof(*be->w) * be->n);
	if (!be->w)
		return -ENOMEM;
	memset(be->w, 0, sizeof(*be->w) * be->n);
	for (i = 0; i < be->n; i++) {
		err = orch_host_worker_init(&be->w[i].hw, &be->pool,
					    (int32_t)i, i);
		if (err)
			return err;	/* destroy() finishes the inited ones */
		be->w[i].inited = true;
	}
	if (be->manual)
		return 0;
	for (i = 0; i < be->n; i++) {
		char name[16];

		err = pthread_create(&be->w[i].th, NULL, orch_host_worker_main,
				     &be->w[i].hw);

		if (err) {
			inproc_stop_all(be);
			return -err;
		}
		be->w[i].started = true;
		/* "pto-worker3": what top, perf and a debugger show. */
		snprintf(name, sizeof(name), "pto-worker%u", i % 10000);
		pthread_setname_np(be->w[i].th, name);
	}
	return 0;
}

static void inproc_destroy(void *bep)
{
	struct inproc *be = bep;
	uint32_t i;

	if (!be)
		return;
	if (be->w) {
		inproc_stop_all(be);
		for (i = 0; i < be->n; i++)
			if (be->w[i].inited)
				orch_host_worker_fini(&be->w[i].hw);
	}
	free(be->w);
	free(be);
}

#define INPROC_OPS					\
	.heap_map = inproc_heap_map,			\
	.heap_unmap = inproc_heap_unmap,		\
	.start = inproc_start,				\
	.stop = inproc_stop,				\
	.kick = inproc_kick,				\
	.host_callbacks = true,				\
	.destroy = inproc_destroy

static const struct orch_backend_ops inproc_ops = {
	.name = "inproc",
	INPROC_OPS,
};

#ifdef PTO_TEST_HOOKS
/* Manual backend posing as a server (tests of the device's batching
 * rules, ready.c: orch_ready_steal). */
static const struct orch_backend_ops manual_server_ops = {
	.name = "manual-server",
	.kick_wakes_server = true,
	INPROC_OPS,
};
#endif

static int create(const struct pto_orch_config *cfg, bool manual,
		  const struct orch_backend_ops *ops, struct pto_orch **out)
{
	struct inproc *be;
	bool batch;
	int err;

	/* As pto_orch_create_device(): a failed create leaves no stale
	 * pointer for the caller's cleanup to free. */
	*out = NULL;
	err = orch_config_check(cfg, true);
	if (err)
		return err;
	be = calloc(1, sizeof(*be));
	if (!be)
		return -ENOMEM;
	be->manual = manual;
	/* Before any worker thread exists: they use the barrier it sets up. */
	batch = !manual && orch_heavy_barrier_init();
	err = orch_create(cfg, ops, be, out);
	/*
	 * Threaded: batch the orch thread's READY publications (ready.c).
	 * Not on the manual backend, whose test thread is the orch thread
	 * and pops by hand (tests of the batching raise it themselves).
	 * At most the task_window hint; only with membarrier(2): see
	 * orch_ready_defer.
	 */
	if (!err && batch)
		orch_set_ready_batch(*out, ORCH_READY_BATCH);
	return err;
}

PTO_API int pto_orch_create_inproc(const struct pto_orch_config *cfg,
				   pto_orch **out)
{
	return create(cfg, false, &inproc_ops, out);
}

#ifdef PTO_TEST_HOOKS
int orch_create_manual(const struct pto_orch_config *cfg, struct pto_orch **out)
{
	return create(cfg, true, &inproc_ops, out);
}

int orch_create_manual_server(const struct pto_orch_config *cfg,
			      struct pto_orch **out)
{
	return create(cfg, true, &manual_server_ops, out);
}

uint64_t orch_manual_kicks(struct pto_orch *o)
{
	struct inproc *be = o->be;

	return atomic_load_explicit(&be->kicks, memory_order_relaxed);
}
#endif
