/* SPDX-License-Identifier: MIT */
/*
 * libpto's raw device layer (internal: not installed, not exported): own
 * clusters, launch cores, map their windows, write payloads, publish dispatch
 * ids, ring doorbells, reap completions. It is the device scheduler's
 * substrate and follows the kernel ABI; ptoctl and the selftests link it
 * statically. The per-core protocol (two ids in flight, alternating parity) is
 * in Documentation/mock-cores.md. Not thread-safe per core: one thread drives
 * a core at a time.
 */
#ifndef PTO_LIB_CORE_H
#define PTO_LIB_CORE_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/pto.h>
#include <pto/pto.h>

struct core_rc {
	unsigned int index;		/* device core index */
	volatile uint32_t *win;		/* the core's user window page */
	struct pto_payload *payload[2];	/* by id parity */
	uint32_t next_id;
	uint32_t inflight[2];		/* oldest first, 0 = empty */
	unsigned int ninflight;
};

struct core_launch {
	struct pto_dev *dev;
	struct pto_bo *payload_bo;
	unsigned int ncores;
	uint64_t doorbells;		/* doorbell ioctls rung */
	uint64_t waits;			/* poll() sleeps */
	int evfd;			/* completion wake-ups; -1: the device fd */
	size_t win_size;		/* bytes of each window mapping */
	struct core_rc core[];
};

struct core_done {
	uint32_t id;
	uint32_t status;		/* PTO_TASK_* */
};

int core_cluster_acquire(struct pto_dev *dev, uint64_t clusters);
int core_cluster_release(struct pto_dev *dev, uint64_t clusters);

/*
 * Launch the cores in @cores (bitmap, PTO_CORE_MASK_WORDS words), owned by
 * the caller's clusters: allocates their payload buffers, launches and maps
 * each window. core[k] of the result is the k-th core in ascending order.
 */
int core_launch_cores(struct pto_dev *dev, const uint64_t *cores,
		      struct core_launch **out);
/*
 * The same, with the cores' completion wake-ups delivered to @evfd (an
 * eventfd the caller owns and keeps open while the launch lives) instead
 * of the device fd's poll(): PTO_LAUNCH_FLAG_EVENTFD.
 */
int core_launch_cores_notify(struct pto_dev *dev, const uint64_t *cores,
			     int evfd, struct core_launch **out);
/* Unmap and free (the cores stay launched until their clusters are released). */
void core_launch_free(struct core_launch *l);

/*
 * The core's payload buffer for its next id; fill it (done_id 0: after an
 * EXITED echo core_rc_reap() takes done_id == id for a completed task),
 * then core_rc_dispatch().
 */
struct pto_payload *core_rc_next_payload(struct core_rc *c);
/* Which of the two (payload[] index) that is. */
static inline unsigned int core_rc_next_parity(const struct core_rc *c)
{
	return c->next_id & 1;
}
/* May a new task be dispatched now (running + pending slots)? */
int core_rc_can_dispatch(const struct core_rc *c);
/*
 * Publish the next id (payload already written). Returns the id; sets
 * *ring if the core is parked and needs a doorbell (rung by the caller,
 * possibly for several cores at once with core_doorbell()).
 */
uint32_t core_rc_dispatch(struct core_rc *c, int *ring);
/* Collect completions (0..2) into @done; returns their number. */
int core_rc_reap(struct core_rc *c, struct core_done *done);
/*
 * End every id in flight on @c (into @done, oldest first) for a core that will
 * run none of them: it echoed EXITED, or its owner's core_retire() returned.
 * Each ends as PTO_TASK_ESTOP unless its payload buffer holds done_id == id
 * (then with the status there). The caller orders these loads after the core's
 * last writes (the EXITED acquire, or the retirement's return); an id leaves
 * @c->inflight here, once.
 */
int core_rc_abandon(struct core_rc *c, struct core_done *done);

int core_doorbell(struct core_launch *l, const uint64_t *cores);
/*
 * Sleep until a core with work in flight completes something or
 * @timeout_ms passes (-1: no limit): arms WAKE_REQ on those cores,
 * re-checks COND, then poll()s the fd (the launch's eventfd, if it has
 * one, else the device fd). Returns 0, or -ETIMEDOUT.
 */
int core_launch_wait(struct core_launch *l, int timeout_ms);
/*
 * The first half of core_launch_wait(), for callers that poll() more than
 * the device fd: arm WAKE_REQ on cores with work in flight and re-check.
 * Returns -1 (nothing in flight), 1 (a completion is already visible: do
 * not sleep) or 0 (armed: a FIN will make the fd readable, or signal the
 * launch's eventfd).
 */
int core_launch_arm(struct core_launch *l);

int core_stats(struct pto_dev *dev, unsigned int core,
	       struct pto_core_stats *out);

/*
 * Retire @cores (bitmap; the kernel's retirement protocol): what a
 * scheduler thread calls as it leaves its dispatch loop, on every exit
 * path. The clusters stay owned; @out reports the retired count, the
 * quarantined cores and the set's time. Returns 0 or -errno.
 */
int core_retire(struct pto_dev *dev, const uint64_t *cores,
		struct pto_core_retire *out);
/* One core's retirement state (bits, nonce, response, result, times). */
int core_retire_status(struct pto_dev *dev, unsigned int core,
		       struct pto_retire_status *out);
/* Host recovery of quarantined cores (CAP_SYS_ADMIN); @cores NULL: all. */
int core_reset(struct pto_dev *dev, const uint64_t *cores,
	       struct pto_core_reset *out);

static inline uint32_t core_win_read(const struct core_rc *c, unsigned int off)
{
	return __atomic_load_n(&c->win[off / 4], __ATOMIC_ACQUIRE);
}

/*
 * Has the core published PARKED (a dispatch to it would need a doorbell)?
 * A hint for placement only: core_rc_dispatch() decides the doorbell.
 */
static inline int core_rc_parked(const struct core_rc *c)
{
	return __atomic_load_n(&c->win[PTO_REG_PARKED / 4],
			       __ATOMIC_RELAXED) != 0;
}

/* A built-in kernel's name (PTO_FUNC_*), NULL for another id. */
const char *core_func_name(uint32_t func);

#endif
