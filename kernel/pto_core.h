/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pto - cores and clusters (pto_core.c): a core's state, cluster
 * ownership, launch, doorbell, stats, and the cores' init / fini.
 */
#ifndef _PTO_CORE_H_
#define _PTO_CORE_H_

#include <linux/atomic.h>
#include <linux/lockdep.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include "pto_drv.h"
#include "pto_mock.h"

struct page;
struct pto_graph;
struct task_struct;

/* Bits of pto_core.flags. */
enum {
	PTO_CORE_F_LAUNCH,	/* launched; cleared by the core on return */
	PTO_CORE_F_DOORBELL,	/* a doorbell rang since the core parked */
	PTO_CORE_F_QUARANTINE,	/* missed retirement: not launched, mapped */
	PTO_CORE_F_STALL,	/* mock fault injection: ignore EXIT */
	PTO_CORE_F_BADID,	/* mock fault injection: bad handshake id */
	PTO_CORE_F_CAPKICK,	/* an args-capture barrier may have moved */
};

/**
 * struct pto_core - one mock core (AIC or AIV) and its thread.
 * @wq:		the core thread sleeps here (launch, READY, doorbell, stop,
 *		gate); every waker sets its condition before wake_up().
 * @uregs:	the user window page (DATA_MAIN_BASE, COND, PARKED, WAKE_REQ),
 *		mapped into the owner; every word in it is untrusted.
 * @kregs:	the kernel-only page (FAST_PATH_ENABLE, CTRL).
 * @state:	PTO_CORE_*, written only by the core thread (WRITE_ONCE),
 *		read anywhere (READ_ONCE); waiters sleep on pdev->core_wq.
 * @flags:	PTO_CORE_F_* atomic bits.
 * @owner, @payload_bo, @payload_kaddr, @payload_addr, @notify: the launch
 *		(@notify: the launcher's eventfd for completion wake-ups, or
 *		NULL for the owner's poll()); written
 *		by the launcher under pdev->core_lock before READY is
 *		published, and cleared by the retirement owner (elected, the
 *		only writer) after the core echoed its nonce, under
 *		@launch_lock; the core reads them only between READY and its
 *		echo, where they are stable (plain reads). @owner is also read
 *		locklessly (READ_ONCE) by the doorbell's racy check, so every
 *		write of it is a WRITE_ONCE.
 * @last_cond:	the core's last COND value (its mirror): written by the core
 *		(release) and by the launcher before READY (WRITE_ONCE), read
 *		anywhere with READ_ONCE (CORE_STATS, debugfs, the nonce).
 * @nonce:	the retirement request (written by the retirement owner);
 *		the core echoes it in COND, in @last_cond and in @resp, the
 *		kernel-private response word retirement reads (the user
 *		page's COND is the owner's to forge; @resp is never reset,
 *		so a late poll still sees the echo).
 * @rbits:	PTO_RB_* ownership bits of the current generation.
 * @launch_lock: orders the launcher's @gen bump against a retirement
 *		owner clearing the launch fields of the generation it claimed.
 * @r_*:	the last retirement's record (debugfs, status ioctl), written
 *		by its owner before the gate; @r_pf / @r_bo / @r_gen are the
 *		claimed generation's launch references, held by the owner
 *		(and @r_notify).
 * @graph:	the resident-route graph the core schedules, or NULL;
 *		written under @graph_lock (attach, detach, the core's own
 *		leave), read under it by the core before it takes a graph
 *		reference (pto_mock_graph.c); READ_ONCE for a lockless hint.
 * @last_id:	the last dispatch value the core took (core thread only).
 * @task:	the running task (core thread only).
 */
struct pto_core {
	struct pto_device *pdev;
	unsigned int id;
	u32 type;
	struct task_struct *thread;
	wait_queue_head_t wq;
	struct page *upage;
	void *uregs;
	void *kregs;
	int state;
	unsigned long flags;
	u32 gen;

	struct pto_file *owner;
	struct pto_bo *payload_bo;
	void *payload_kaddr;
	u64 payload_addr;
	struct eventfd_ctx *notify;

	struct pto_graph *graph;
	spinlock_t graph_lock;	/* protects @graph */

	u32 nonce;
	u32 resp;
	u32 last_id;
	u32 last_cond;
	struct pto_mock_task task;

	atomic_t rbits;
	spinlock_t launch_lock;	/* protects @gen against the owner's clear */
	struct pto_file *r_pf;
	struct pto_bo *r_bo;
	struct eventfd_ctx *r_notify;
	u32 r_gen;
	u32 r_result;
	u32 r_reason;
	u32 r_response;
	u64 r_core_ns;
	u64 r_set_ns;
	atomic64_t retirements;
	atomic64_t quarantines;

	atomic64_t tasks;
	atomic64_t errors;
	atomic64_t parks;
	atomic64_t dozes;
	atomic64_t doorbells;
	atomic64_t wakeups;
	atomic64_t launches;
};

static inline u32 *pto_ureg(struct pto_core *core, unsigned int off)
{
	return core->uregs + off;
}

static inline u32 *pto_kreg(struct pto_core *core, unsigned int off)
{
	return core->kregs + off;
}

static inline u32 pto_ureg_read(struct pto_core *core, unsigned int off)
{
	return READ_ONCE(*pto_ureg(core, off));
}

static inline u32 pto_kreg_read(struct pto_core *core, unsigned int off)
{
	return READ_ONCE(*pto_kreg(core, off));
}

/* Does @pf own @core's cluster? cluster_owner[] is written under both. */
static inline bool pto_core_owned_by(struct pto_core *core,
				     struct pto_file *pf)
{
	lockdep_assert(lockdep_is_held(&core->pdev->core_lock) ||
		       lockdep_is_held(&core->pdev->win_lock));
	return core->pdev->cluster_owner[core->id / PTO_CORES_PER_CLUSTER] ==
	       pf;
}

int pto_cores_init(struct pto_device *pdev);
void pto_cores_fini(struct pto_device *pdev);
void pto_file_release_cores(struct pto_file *pf);
int pto_core_mask(struct pto_device *pdev, const __u64 *words,
		  unsigned long *mask);
int pto_ioctl_cluster_acquire(struct pto_file *pf, void *data);
int pto_ioctl_cluster_release(struct pto_file *pf, void *data);
int pto_ioctl_core_launch(struct pto_file *pf, void *data);
int pto_ioctl_doorbell(struct pto_file *pf, void *data);
int pto_ioctl_core_stats(struct pto_file *pf, void *data);
bool pto_core_hidden(struct pto_file *pf, struct pto_file *owner);

#if IS_ENABLED(CONFIG_PTO_KUNIT_TEST)
int pto_core_test_init(struct pto_core *core, struct pto_device *pdev,
		       unsigned int id);
void pto_core_test_fini(struct pto_core *core);
#endif

#endif /* _PTO_CORE_H_ */
