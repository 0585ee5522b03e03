/* SPDX-License-Identifier: MIT */
/*
 * libpto raw device layer (INTERNAL: not installed, not exported from
 * libpto.so): own clusters, launch cores, map their register windows,
 * write payloads, publish dispatch ids, ring doorbells, reap completions.
 *
 * Internal on purpose: it is the substrate of the scheduler (lib/sched),
 * which is the public way to run work; its shape follows the kernel ABI
 * (uapi/linux/pto.h) and changes with it. ptoctl and the selftests link
 * libpto statically and include it as "core.h".
 *
 * Protocol per core (Documentation/mock-cores.md): at most two tasks in
 * flight, a running and a pending one. A new id may be written to
 * DATA_MAIN_BASE only when nothing is in flight or the core has taken
 * (ACKed) the last id written. ids alternate in parity, so the pending
 * task's payload buffer is never the running one's. A completion is seen
 * as FIN | id in COND, or implied by the ACK of the next id; then its
 * status is read from its payload buffer.
 *
 * Not thread-safe per core: one thread drives a core at a time.
 */
#ifndef PTO_LIB_CORE_H
#define PTO_LIB_CORE_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/pto.h>
#include <pto/pto.h>

struct pto_rc {
	unsigned int index;		/* device core index */
	volatile uint32_t *win;		/* the core's user window page */
	struct pto_payload *payload[2];	/* by id parity */
	uint32_t next_id;
	uint32_t inflight[2];		/* oldest first, 0 = empty */
	unsigned int ninflight;
};

struct pto_launch {
	struct pto_dev *dev;
	struct pto_bo *payload_bo;
	unsigned int ncores;
	uint64_t doorbells;		/* doorbell ioctls rung */
	uint64_t waits;			/* poll() sleeps */
	int evfd;			/* completion wake-ups; -1: the device fd */
	size_t win_size;		/* bytes of each window mapping */
	struct pto_rc core[];
};

struct pto_done {
	uint32_t id;
	uint32_t status;		/* PTO_TASK_* */
};

int pto_cluster_acquire(struct pto_dev *dev, uint64_t clusters);
int pto_cluster_release(struct pto_dev *dev, uint64_t clusters);

/*
 * Clusters an orchestrator on this device handle has taken. The kernel's
 * ownership is per open file, so two orchestrators sharing one pto_dev
 * would both "own" a cluster, and one's release would retire the other's
 * cores under it. The claim keeps them apart: -EBUSY if any of @clusters
 * is claimed on @dev already. Thread safety: any thread.
 */
int pto_dev_claim_clusters(struct pto_dev *dev, uint64_t clusters);
/* Is this a process other than the one that opened @dev (a fork)? */
bool pto_dev_forked(const struct pto_dev *dev);
void pto_dev_unclaim_clusters(struct pto_dev *dev, uint64_t clusters);

/*
 * Launch the cores in @cores (bitmap, PTO_CORE_MASK_WORDS words), owned by
 * the caller's clusters: allocates their payload buffers, launches and maps
 * each window. core[k] of the result is the k-th core in ascending order.
 */
int pto_launch_cores(struct pto_dev *dev, const uint64_t *cores,
		     struct pto_launch **out);
/*
 * The same, with the cores' completion wake-ups delivered to @evfd (an
 * eventfd the caller owns and keeps open while the launch lives) instead
 * of the device fd's poll(): PTO_LAUNCH_FLAG_EVENTFD.
 */
int pto_launch_cores_notify(struct pto_dev *dev, const uint64_t *cores,
			    int evfd, struct pto_launch **out);
/* Unmap and free (the cores stay launched until their clusters are released). */
void pto_launch_free(struct pto_launch *l);

/*
 * The core's payload buffer for its next id; fill it (done_id 0: after an
 * EXITED echo pto_rc_reap() takes done_id == id for a completed task),
 * then pto_rc_dispatch().
 */
struct pto_payload *pto_rc_next_payload(struct pto_rc *c);
/* Which of the two (payload[] index) that is. */
static inline unsigned int pto_rc_next_parity(const struct pto_rc *c)
{
	return c->next_id & 1;
}
/* May a new task be dispatched now (running + pending slots)? */
int pto_rc_can_dispatch(const struct pto_rc *c);
/*
 * Publish the next id (payload already written). Returns the id; sets
 * *ring if the core is parked and needs a doorbell (rung by the caller,
 * possibly for several cores at once with pto_ring()).
 */
uint32_t pto_rc_dispatch(struct pto_rc *c, int *ring);
/* Collect completions (0..2) into @done; returns their number. */
int pto_rc_reap(struct pto_rc *c, struct pto_done *done);
/*
 * End every id in flight on @c (0..2, into @done, oldest first), for a
 * core that will run none of them any more: one that echoed EXITED
 * (pto_rc_reap's stopped case), or one whose owner's retirement
 * (pto_core_retire) returned. Each ends as PTO_TASK_ESTOP, except an id
 * whose payload buffer holds done_id == id: the core completed it, and it
 * ends with the status there. The caller orders these loads after the
 * core's last writes: the acquire of the EXITED echo in COND, or the
 * retirement's return (the kernel acquired the core's response, which
 * the core stores with release after every write of its launch). A
 * quarantined core never answered: nothing orders its writes, and an id
 * it did complete may end as stopped - never twice: an id leaves
 * @c->inflight here, once. Not thread-safe per core (above).
 */
int pto_rc_abandon(struct pto_rc *c, struct pto_done *done);

int pto_ring(struct pto_launch *l, const uint64_t *cores);
/*
 * Sleep until a core with work in flight completes something or
 * @timeout_ms passes (-1: no limit): arms WAKE_REQ on those cores,
 * re-checks COND, then poll()s the fd (the launch's eventfd, if it has
 * one, else the device fd). Returns 0, or -ETIMEDOUT.
 */
int pto_launch_wait(struct pto_launch *l, int timeout_ms);
/*
 * The first half of pto_launch_wait(), for callers that poll() more than
 * the device fd: arm WAKE_REQ on cores with work in flight and re-check.
 * Returns -1 (nothing in flight), 1 (a completion is already visible: do
 * not sleep) or 0 (armed: a FIN will make the fd readable, or signal the
 * launch's eventfd).
 */
int pto_launch_arm(struct pto_launch *l);

int pto_core_stats(struct pto_dev *dev, unsigned int core,
		   struct pto_core_stats *out);

/*
 * Retire @cores (bitmap; seed 003's protocol, in the kernel): what a
 * scheduler thread calls as it leaves its dispatch loop, on every exit
 * path. The clusters stay owned; @out reports the retired count, the
 * quarantined cores and the set's time. Returns 0 or -errno.
 */
int pto_core_retire(struct pto_dev *dev, const uint64_t *cores,
		    struct pto_core_retire *out);
/* One core's retirement state (bits, nonce, response, result, times). */
int pto_retire_status(struct pto_dev *dev, unsigned int core,
		      struct pto_retire_status *out);
/* Host recovery of quarantined cores (CAP_SYS_ADMIN); @cores NULL: all. */
int pto_core_reset(struct pto_dev *dev, const uint64_t *cores,
		   struct pto_core_reset *out);

static inline uint32_t pto_win_read(const struct pto_rc *c, unsigned int off)
{
	return __atomic_load_n(&c->win[off / 4], __ATOMIC_ACQUIRE);
}

/*
 * Has the core published PARKED (a dispatch to it would need a doorbell)?
 * A hint for placement only: pto_rc_dispatch() decides the doorbell.
 */
static inline int pto_rc_parked(const struct pto_rc *c)
{
	return __atomic_load_n(&c->win[PTO_REG_PARKED / 4],
			       __ATOMIC_RELAXED) != 0;
}

#endif
