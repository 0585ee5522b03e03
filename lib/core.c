// SPDX-License-Identifier: MIT
/*
 * libpto raw device layer: see core.h (internal) and
 * Documentation/mock-cores.md for the protocol and its orderings.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "core.h"
#include "ioctl.h"

int core_cluster_acquire(struct pto_dev *dev, uint64_t clusters)
{
	struct pto_cluster_acquire a = { .clusters = clusters };

	return ioc_call(pto_dev_fd(dev), PTO_IOCTL_CLUSTER_ACQUIRE, &a);
}

int core_cluster_release(struct pto_dev *dev, uint64_t clusters)
{
	struct pto_cluster_acquire a = { .clusters = clusters };

	return ioc_call(pto_dev_fd(dev), PTO_IOCTL_CLUSTER_RELEASE, &a);
}

int core_stats(struct pto_dev *dev, unsigned int core,
	       struct pto_core_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->core = core;
	return ioc_call(pto_dev_fd(dev), PTO_IOCTL_CORE_STATS, out);
}

int core_retire(struct pto_dev *dev, const uint64_t *cores,
		struct pto_core_retire *out)
{
	memset(out, 0, sizeof(*out));
	memcpy(out->cores, cores, sizeof(out->cores));
	return ioc_call(pto_dev_fd(dev), PTO_IOCTL_CORE_RETIRE, out);
}

int core_retire_status(struct pto_dev *dev, unsigned int core,
		       struct pto_retire_status *out)
{
	memset(out, 0, sizeof(*out));
	out->core = core;
	return ioc_call(pto_dev_fd(dev), PTO_IOCTL_RETIRE_STATUS, out);
}

int core_reset(struct pto_dev *dev, const uint64_t *cores,
	       struct pto_core_reset *out)
{
	memset(out, 0, sizeof(*out));
	if (cores)
		memcpy(out->cores, cores, sizeof(out->cores));
	return ioc_call(pto_dev_fd(dev), PTO_IOCTL_CORE_RESET, out);
}

void core_launch_free(struct core_launch *l)
{
	unsigned int k;

	if (!l)
		return;
	for (k = 0; k < l->ncores; k++)
		if (l->core[k].win)
			munmap((void *)l->core[k].win, l->win_size);
	pto_bo_free(l->payload_bo);
	free(l);
}

int core_launch_cores(struct pto_dev *dev, const uint64_t *cores,
		      struct core_launch **out)
{
	return core_launch_cores_notify(dev, cores, -1, out);
}

int core_launch_cores_notify(struct pto_dev *dev, const uint64_t *cores,
			     int evfd, struct core_launch **out)
{
	struct pto_core_launch args = { 0 };
	struct pto_dev_info info;
	struct core_launch *l;
	unsigned int i, k, n = 0;
	char *base = NULL;	/* set by pto_bo_map; LTO cannot see that */
	int ret;

	*out = NULL;
	for (i = 0; i < PTO_CORE_MASK_WORDS * 64; i++)
		n += !!(cores[i / 64] & (1ULL << (i % 64)));
	if (!n)
		return -EINVAL;
	/*
	 * A window is window_size bytes (the driver's page size) at
	 * PTO_WINDOW_OFFSET(i, window_size): nothing here assumes 4 KiB.
	 */
	ret = pto_dev_info(dev, &info);
	if (ret)
		return ret;
	if (info.window_size < PTO_REG_WAKE_REQ + sizeof(uint32_t))
		return -EPROTO;
	l = calloc(1, sizeof(*l) + n * sizeof(l->core[0]));
	if (!l)
		return -ENOMEM;
	l->dev = dev;
	l->win_size = info.window_size;
	l->ncores = n;
	l->evfd = evfd;
	ret = pto_bo_alloc(dev, (uint64_t)n * 2 * PTO_PAYLOAD_SIZE, 0,
			   &l->payload_bo);
	if (ret)
		goto err;
	ret = pto_bo_map(l->payload_bo, (void **)&base);
	if (ret)
		goto err;

	memcpy(args.cores, cores, sizeof(args.cores));
	args.payload_addr = pto_bo_dev_addr(l->payload_bo);
	if (evfd >= 0) {
		args.flags = PTO_LAUNCH_FLAG_EVENTFD;
		args.eventfd = evfd;
	}
	ret = ioc_call(pto_dev_fd(dev), PTO_IOCTL_CORE_LAUNCH, &args);
	if (ret)
		goto err;

	k = 0;
	for (i = 0; i < PTO_CORE_MASK_WORDS * 64; i++) {
		struct core_rc *c = &l->core[k];
		void *w;

		if (!(cores[i / 64] & (1ULL << (i % 64))))
			continue;
		c->index = i;
		c->next_id = 1;
		c->payload[0] = (void *)(base + (size_t)k * 2 * PTO_PAYLOAD_SIZE);
		c->payload[1] = (void *)(base + ((size_t)k * 2 + 1) *
					 PTO_PAYLOAD_SIZE);
		w = mmap(NULL, l->win_size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 pto_dev_fd(dev),
			 (off_t)PTO_WINDOW_OFFSET(i, l->win_size));
		if (w == MAP_FAILED) {
			ret = -errno;
			goto err;
		}
		c->win = w;
		k++;
	}
	*out = l;
	return 0;
err:
	core_launch_free(l);
	return ret;
}

struct pto_payload *core_rc_next_payload(struct core_rc *c)
{
	return c->payload[core_rc_next_parity(c)];
}

int core_rc_can_dispatch(const struct core_rc *c)
{
	uint32_t cond, last;

	if (c->ninflight == 0)
		return 1;
	if (c->ninflight == 2)
		return 0;
	/* One in flight: the core must have taken it (ACK or FIN). */
	last = c->inflight[0];
	cond = core_win_read(c, PTO_REG_COND);
	return (cond & PTO_COND_ID_MASK) == last &&
	       (cond & PTO_COND_STATE_MASK) != 0;
}

uint32_t core_rc_dispatch(struct core_rc *c, int *ring)
{
	uint32_t id = c->next_id;

	c->next_id = id + 1 > PTO_ID_MAX ? 2 : id + 1;
	c->inflight[c->ninflight++] = id;
	/* Release: the payload precedes the id. */
	__atomic_store_n(&c->win[PTO_REG_DATA_MAIN_BASE / 4], id,
			 __ATOMIC_RELEASE);
	/* Dekker with the core's PARKED store (mock-cores.md). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	*ring = __atomic_load_n(&c->win[PTO_REG_PARKED / 4],
				__ATOMIC_RELAXED) != 0;
	return id;
}

/*
 * The completion rules, the one copy: which ids in flight on @c does COND
 * value @cond end? Each caller loads COND with the ordering it needs.
 * PTO_RC_STOPPED: EXITED echoed over the last ACK/FIN (an emergency
 * retirement): every id ends as stopped, except one whose payload buffer says
 * the core completed it. PTO_RC_IMPLIED: the core took the second id, so the
 * oldest is done (status in its payload buffer). PTO_RC_FIN: the oldest is
 * done, status in COND. Documentation/mock-cores.md.
 */
#define PTO_RC_IMPLIED	1u
#define PTO_RC_FIN	2u
#define PTO_RC_STOPPED	4u

static inline __attribute__((always_inline)) unsigned int
core_rc_ends(const struct core_rc *c, uint32_t cond)
{
	uint32_t id = cond & PTO_COND_ID_MASK;
	uint32_t st = cond & PTO_COND_STATE_MASK;
	unsigned int implied;

	if (st == PTO_COND_EXITED)
		return PTO_RC_STOPPED;
	implied = c->ninflight == 2 && id == c->inflight[1];
	return implied * PTO_RC_IMPLIED |
	       (st == PTO_COND_FIN && (implied || id == c->inflight[0])) *
	       PTO_RC_FIN;
}

static void core_rc_pop(struct core_rc *c, struct core_done *d, uint32_t status)
{
	d->id = c->inflight[0];
	d->status = status;
	c->inflight[0] = c->inflight[1];
	c->inflight[1] = 0;
	c->ninflight--;
}

int core_rc_abandon(struct core_rc *c, struct core_done *done)
{
	int n = 0;

	while (c->ninflight) {
		struct pto_payload *p = c->payload[c->inflight[0] & 1];
		uint32_t status = PTO_TASK_ESTOP;

		/* Ordered after the core's writes by the caller (core.h). */
		if (__atomic_load_n(&p->done_id, __ATOMIC_RELAXED) ==
		    c->inflight[0])
			status = __atomic_load_n(&p->status, __ATOMIC_RELAXED);
		core_rc_pop(c, &done[n++], status);
	}
	return n;
}

int core_rc_reap(struct core_rc *c, struct core_done *done)
{
	uint32_t cond;
	unsigned int ends;
	int n = 0;

	if (!c->ninflight)
		return 0;
	/*
	 * Acquire: pairs with the core's release store of COND (ACK, FIN or
	 * the EXITED echo): a completed task's outputs, and the payload
	 * status an implied completion reads below, precede it.
	 */
	cond = core_win_read(c, PTO_REG_COND);
	ends = core_rc_ends(c, cond);
	/*
	 * The core writes status, then done_id, then FIN, then the echo
	 * (both releases); the acquire of COND above orders the abandon's
	 * loads after all of them.
	 */
	if (ends & PTO_RC_STOPPED)
		return core_rc_abandon(c, done);
	if (ends & PTO_RC_IMPLIED) {
		struct pto_payload *p = c->payload[c->inflight[0] & 1];
		uint32_t status = __atomic_load_n(&p->status, __ATOMIC_ACQUIRE);

		core_rc_pop(c, &done[n++], status);
	}
	if (ends & PTO_RC_FIN)
		core_rc_pop(c, &done[n++], PTO_COND_ERR(cond));
	return n;
}

/* Would core_rc_reap() find something now? */
static int core_rc_progress(const struct core_rc *c)
{
	if (!c->ninflight)
		return 0;
	/*
	 * Behind core_launch_arm()'s fence: the owner's side of the Dekker
	 * with the core's COND store, fence, WAKE_REQ load (mock-cores.md).
	 * A FIN this load misses, the core's wake-up check serves.
	 */
	return core_rc_ends(c, core_win_read(c, PTO_REG_COND)) != 0;
}

int core_doorbell(struct core_launch *l, const uint64_t *cores)
{
	struct pto_doorbell d = { 0 };

	memcpy(d.cores, cores, sizeof(d.cores));
	/* pto_orch_sched_stats() reads it on any thread (atomic load): a
	 * plain ++ would be a data race. Relaxed: a count, ordering nothing;
	 * the ioctl beside it costs far more than the locked add. */
	__atomic_fetch_add(&l->doorbells, 1, __ATOMIC_RELAXED);
	return ioc_call(pto_dev_fd(l->dev), PTO_IOCTL_DOORBELL, &d);
}

int core_launch_arm(struct core_launch *l)
{
	unsigned int k;
	int busy = 0;

	for (k = 0; k < l->ncores; k++) {
		struct core_rc *c = &l->core[k];

		if (!c->ninflight)
			continue;
		busy = 1;
		__atomic_store_n(&c->win[PTO_REG_WAKE_REQ / 4], 1,
				 __ATOMIC_RELAXED);
	}
	if (!busy)
		return -1;
	/* Dekker with the core's COND store (mock-cores.md). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (k = 0; k < l->ncores; k++)
		if (core_rc_progress(&l->core[k]))
			return 1;
	return 0;
}

int core_launch_wait(struct core_launch *l, int timeout_ms)
{
	struct pollfd pfd = {
		.fd = l->evfd >= 0 ? l->evfd : pto_dev_fd(l->dev),
		.events = POLLIN,
	};
	uint64_t drained;
	int ret;

	if (core_launch_arm(l))
		return 0;
	l->waits++;
	do {
		ret = poll(&pfd, 1, timeout_ms);
	} while (ret < 0 && errno == EINTR);
	if (ret < 0)
		return -errno;
	if (ret == 0)
		return -ETIMEDOUT;
	if (read(pfd.fd, &drained, sizeof(drained)) < 0 && errno != EAGAIN)
		return -errno;
	return 0;
}
