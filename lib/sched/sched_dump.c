// SPDX-License-Identifier: MIT
/*
 * The args dump on the scheduler's route (Documentation/dump-files.md,
 * "Capture on the scheduler's route"): armed by pto_orch_dump_args(),
 * lanes bound at a run's begin, each scheduler thread capturing the tasks
 * it dispatches into its own lane, inputs before their payload is written
 * and outputs before their completion is handed back; the run's end,
 * whatever its outcome, writes the files.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sched/sched.h"
#include "device.h"
#include "dump/collector.h"
#include "ioctl.h"

/* The blocking capture's bound on back-pressure: giving up drops the
 * record (one refused record), the task goes on. */
#define SCHED_DUMP_TIMEOUT_NS (2ULL * 1000000000ULL)

void sched_dump_init(struct sched_backend *be)
{
	unsigned int i;

	pthread_mutex_init(&be->dump.mu, NULL);
	pthread_cond_init(&be->dump.cv, NULL);
	for (i = 0; i < SCHED_DUMP_MAX_LANES; i++)
		pthread_mutex_init(&be->dump.lane_mu[i], NULL);
}

void sched_dump_fini(struct sched_backend *be)
{
	struct sched_dump *dump = &be->dump;
	unsigned int i;

	/* Every run ended before the destroy: a collector left means a run
	 * never did; its lanes are given up, their accounting unknown. */
	if (dump->d)
		dump_device_finish(dump->d, false, dump->run_dir);
	free(dump->run_dir);
	free(dump->dir);
	for (i = 0; i < SCHED_DUMP_MAX_LANES; i++)
		pthread_mutex_destroy(&dump->lane_mu[i]);
	pthread_cond_destroy(&dump->cv);
	pthread_mutex_destroy(&dump->mu);
}

PTO_API int pto_orch_dump_args(pto_orch *o, uint32_t level, const char *dir)
{
	struct sched_backend *be = sched_backend_of(o);
	char *copy = NULL;
	int ret;

	if (!be)
		return -EINVAL;
	ret = dump_request_check(be->dev, level, dir, &copy);
	if (ret)
		return ret;
	pthread_mutex_lock(&be->dump.mu);
	free(be->dump.dir);
	be->dump.dir = copy;
	be->dump.level = level;
	pthread_mutex_unlock(&be->dump.mu);
	return 0;
}

int sched_dump_run_begin(void *p, uint64_t run_id, char *msg, size_t len)
{
	struct sched_backend *be = p;
	struct sched_dump *dump = &be->dump;
	struct pto_dev_info info;
	struct dump_device *d = NULL;
	uint32_t n = 0, want, first = 0;
	char *dir;
	int ret;

	pthread_mutex_lock(&dump->mu);
	while (dump->level != PTO_DUMP_OFF && dump->busy)
		pthread_cond_wait(&dump->cv, &dump->mu);
	if (dump->level == PTO_DUMP_OFF) {
		pthread_mutex_unlock(&dump->mu);
		return 0;
	}
	ret = pto_dev_info(be->dev, &info);
	want = be->nthreads < info.lanes ? be->nthreads : info.lanes;
	if (want > SCHED_DUMP_MAX_LANES)
		want = SCHED_DUMP_MAX_LANES;
	dir = ret ? NULL : strdup(dump->dir);
	if (!ret && !dir)
		ret = -ENOMEM;
	if (!ret)
		ret = dump_device_start_any(pto_dev_fd(be->dev), dump->level,
					    info.lanes, want, &first, &n, &d);
	if (ret) {
		pthread_mutex_unlock(&dump->mu);
		free(dir);
		snprintf(msg, len, "args dump: binding a dump lane at level %u: %s",
			 dump->level, pto_strerror(ret));
		return ret;
	}
	dump->busy = true;
	dump->d = d;
	dump->run_dir = dir;
	dump->run_level = dump->level;
	dump->first_lane = first;
	dump->nlanes = n;
	/* Release: the fields above are what a capture of this run reads
	 * after its acquire load of @run (sched_dump_task). */
	atomic_store_explicit(&dump->run, run_id, memory_order_release);
	pthread_mutex_unlock(&dump->mu);
	return 0;
}

void sched_dump_run_end(void *p, uint64_t run_id)
{
	struct sched_backend *be = p;
	struct sched_dump *dump = &be->dump;
	struct dump_device *d;
	char *dir;

	/*
	 * Acquire: pairs with the begin's release. Every capture of the run
	 * returned before its task's completion was handed back, which
	 * happened before the run's end: none is in flight on the lanes.
	 */
	if (atomic_load_explicit(&dump->run, memory_order_acquire) != run_id)
		return;
	atomic_store_explicit(&dump->run, 0, memory_order_relaxed);
	pthread_mutex_lock(&dump->mu);
	d = dump->d;
	dir = dump->run_dir;
	dump->d = NULL;
	dump->run_dir = NULL;
	pthread_mutex_unlock(&dump->mu);
	/*
	 * After pto_orch_abort() a core may have been stopped mid-task: the
	 * terminals are not closed, so the accounting says unknown. The
	 * files are written either way; their errors are the files'
	 * (the run's outcome is its tasks').
	 */
	dump_device_finish(d, !atomic_load(&be->abort), dir);
	free(dir);
	pthread_mutex_lock(&dump->mu);
	dump->busy = false;
	pthread_cond_broadcast(&dump->cv);
	pthread_mutex_unlock(&dump->mu);
}

/* A tensor's role by its tag (an INOUT is captured at both stages). */
static uint32_t tag_role(uint8_t tag)
{
	switch (tag) {
	case PTO_OUTPUT:
	case PTO_OUTPUT_EXISTING:
		return PTO_DUMP_ROLE_OUTPUT;
	case PTO_INOUT:
		return PTO_DUMP_ROLE_INOUT;
	default:
		return PTO_DUMP_ROLE_INPUT;
	}
}

static bool role_at(uint32_t role, unsigned int stage)
{
	if (role == PTO_DUMP_ROLE_INOUT)
		return true;
	return stage == PTO_DUMP_BEFORE_DISPATCH ? role == PTO_DUMP_ROLE_INPUT :
						   role == PTO_DUMP_ROLE_OUTPUT;
}

/* One blocking capture; its outcome is the lane's to account. */
static void capture(struct sched_thread *t, struct pto_dump_capture *c)
{
	c->timeout_ns = sched_now_ns() + SCHED_DUMP_TIMEOUT_NS;
	(void)ioc_call(pto_dev_fd(t->be->dev), PTO_IOCTL_DUMP_CAPTURE, c);
	/* This thread is the counter's only writer. */
	atomic_store_explicit(&t->captures,
			      atomic_load_explicit(&t->captures,
						   memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* Tensor @i of @v as a capture of @c's task; false: not capturable (not
 * in GM, no live buffer, a layout the core would refuse). */
static bool tensor_capture(struct sched_backend *be,
			   const struct orch_dispatch_view *v, uint32_t i,
			   struct pto_dump_capture *c)
{
	const struct pto_arg_tensor *a = &v->tensors[i];
	struct pto_tensor_desc desc;
	char msg[128];
	uint32_t d;

	if (a->t.space != PTO_SPACE_GM ||
	    sched_tensor_desc(a, &desc, msg, sizeof(msg)) ||
	    dev_bo_find(be->dev, a->t.obj, &c->handle))
		return false;
	c->kind = PTO_DUMP_KIND_TENSOR;
	c->dtype = a->t.dtype;
	c->rank = desc.rank;
	for (d = 0; d < desc.rank; d++) {
		c->shape[d] = desc.shape[d];
		c->strides[d] = desc.strides[d];
	}
	c->bo_offset = a->t.offset;
	c->flags = a->dump ? PTO_DUMP_CAP_MARKED : 0;
	return true;
}

/*
 * A member's arguments (@v) of @stage, numbered from @arg0, into @lane
 * (its producer lock held); returns how many arguments the member has.
 */
static uint32_t capture_member(struct sched_thread *t,
			       const struct orch_dispatch_view *v,
			       uint32_t arg0, unsigned int stage, bool mix,
			       uint32_t lane)
{
	struct sched_backend *be = t->be;
	struct sched_dump *dump = &be->dump;
	struct pto_dump_capture base = { 0 };
	uint32_t i, sdtype = PTO_DTYPE_I32;
	uint64_t kid;

	kid = v->callable->kernel_id;
	base.run_id = v->run_id;
	base.task_id = v->task_id;
	base.func_id[0] = kid <= UINT32_MAX - 1 ? (uint32_t)kid :
			  PTO_DUMP_FUNC_NONE;
	base.func_id[1] = mix ? base.func_id[0] : PTO_DUMP_FUNC_NONE;
	base.func_id[2] = base.func_id[1];
	base.stage = stage;
	base.lane = lane;
	for (i = 0; i < v->ntensors; i++) {
		struct pto_dump_capture c = base;

		c.arg_index = arg0 + i;
		c.role = tag_role(v->tensors[i].tag);
		/* Its tensors only order tasks: no bytes of theirs to read. */
		if (orch_kernel_tensorless(SCHED_TENSORLESS_KERNELS, kid) ||
		    !role_at(c.role, stage) ||
		    !tensor_capture(be, v, i, &c))
			continue;
		if (sdtype == PTO_DTYPE_I32 && c.dtype == PTO_DTYPE_F32 &&
		    c.role != PTO_DUMP_ROLE_OUTPUT)
			sdtype = PTO_DTYPE_F32;
		if (dump->run_level == PTO_DUMP_PARTIAL && !c.flags)
			continue;
		capture(t, &c);
	}
	/* Scalars are inputs; a kernel reads them as its tensors' type. */
	for (i = 0; stage == PTO_DUMP_BEFORE_DISPATCH && i < v->nscalars; i++) {
		struct pto_dump_capture c = base;

		c.arg_index = arg0 + v->ntensors + i;
		c.role = PTO_DUMP_ROLE_INPUT;
		c.kind = PTO_DUMP_KIND_SCALAR;
		c.dtype = sdtype;
		c.value = v->scalars[i];
		c.flags = v->scalar_dump && v->scalar_dump[i] ?
			  PTO_DUMP_CAP_MARKED : 0;
		if (dump->run_level == PTO_DUMP_PARTIAL && !c.flags)
			continue;
		capture(t, &c);
	}
	return v->ntensors + v->nscalars;
}

/*
 * The task's arguments of @stage, into @t's lane: an SPMD task's once
 * (its blocks share them), a group's members' one after another, each
 * member's numbered on from the previous one's.
 */
static void capture_task(struct sched_thread *t, const struct orch_dispatch *d,
			 unsigned int stage, bool mix,
			 const struct orch_dispatch_view *v)
{
	struct sched_dump *dump = &t->be->dump;
	uint32_t m, arg0 = 0, n = v->shared ? 1 : v->nmembers;
	uint32_t lane = t->index % dump->nlanes;
	struct orch_dispatch_view mv;

	pthread_mutex_lock(&dump->lane_mu[lane]);
	for (m = 0; m < n; m++) {
		/* @v's arguments are the calling member's, and an SPMD
		 * task's; a group's other members' are looked up. */
		if (!v->shared && m != v->member)
			orch_dispatch_member_view(d, m, &mv);
		arg0 += capture_member(t, v->shared || m == v->member ? v : &mv,
				       arg0, stage, mix, dump->first_lane + lane);
	}
	pthread_mutex_unlock(&dump->lane_mu[lane]);
}

void sched_dump_task(struct sched_thread *t, const struct orch_dispatch *d,
		     unsigned int stage, bool mix)
{
	struct sched_dump *dump = &t->be->dump;
	struct orch_dispatch_view v;
	struct orch_once *g;

	/* Acquire: pairs with the begin's release (d, nlanes, run_level). */
	if (atomic_load_explicit(&dump->run, memory_order_acquire) !=
	    orch_dispatch_run_id(d))
		return;
	orch_dispatch_view(d, &v);
	if (v.nmembers == 1) {
		capture_task(t, d, stage, mix, &v);
		return;
	}
	/* Several members: after the last one, sched_dump_members_done(). */
	if (stage != PTO_DUMP_BEFORE_DISPATCH)
		return;
	/*
	 * Before the first one: whichever member's thread comes first
	 * captures, every other member's waits for it, so no member's
	 * payload goes out before the task's inputs are in the lane.
	 */
	g = orch_dispatch_once(d);
	switch (orch_once_step(g)) {
	case ORCH_ONCE_RUN:
		capture_task(t, d, stage, mix, &v);
		orch_once_finish(g);
		break;
	case ORCH_ONCE_WAIT:
		orch_once_wait(g);
		break;
	case ORCH_ONCE_DONE:
		break;
	}
}

void sched_dump_members_done(void *p, const struct orch_dispatch *d, int err)
{
	struct sched_backend *be = p;
	const struct sched_worker *w = &be->wmap[d->widx];
	struct orch_dispatch_view v;

	/*
	 * A SUB worker's tasks are not the device's; a task the abort
	 * stopped did not end on its cores. Acquire: pairs with the
	 * begin's release.
	 */
	if (!w->t || err == -ECANCELED ||
	    atomic_load_explicit(&be->dump.run, memory_order_acquire) !=
	    orch_dispatch_run_id(d))
		return;
	orch_dispatch_view(d, &v);
	capture_task(w->t, d, PTO_DUMP_AFTER_COMPLETION, w->cl != NULL, &v);
}
