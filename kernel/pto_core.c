// SPDX-License-Identifier: GPL-2.0-only
/*
 * pto - cores and clusters: cluster ownership (acquire, release), the
 * launch handshake, the doorbell, per-core stats, and the cores' init /
 * fini. The core's side of each step is the mock's (pto_mock.c); the
 * protocol is in Documentation/mock-cores.md.
 */
#include <linux/bitmap.h>
#include <linux/delay.h>
#include <linux/eventfd.h>
#include <linux/file.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <kunit/visibility.h>
#include "pto_core.h"
#include "pto_retire.h"
#include "pto_window.h"
#include "pto_bo.h"
#include "pto_file.h"
#include "pto_trace.h"

/* Bounded wait of the launcher for the handshake reports. */
#define PTO_HANDSHAKE_TIMEOUT (5 * HZ)

#define PTO_CTRL_MEM_ORDER 2
#define PTO_GATES_OFFSET (PAGE_SIZE << (PTO_CTRL_MEM_ORDER - 1))

/* Parse a core bitmap: -EINVAL if a bit is beyond the device's cores. */
int pto_core_mask(struct pto_device *pdev, const __u64 *words,
		  unsigned long *mask)
{
	unsigned int i;

	bitmap_zero(mask, PTO_MAX_CORES);
	for (i = 0; i < PTO_CORE_MASK_WORDS * 64; i++) {
		if (!(words[i / 64] & BIT_ULL(i % 64)))
			continue;
		if (i >= pdev->cores)
			return -EINVAL;
		__set_bit(i, mask);
	}
	return bitmap_empty(mask, PTO_MAX_CORES) ? -EINVAL : 0;
}

static int pto_cluster_mask(struct pto_device *pdev, u64 clusters)
{
	if (!clusters)
		return -EINVAL;
	if (pdev->clusters < 64 && clusters >> pdev->clusters)
		return -EINVAL;
	return 0;
}

/* Validate acquire / release arguments, then take core_lock (killable). */
static int pto_cluster_args_lock(struct pto_file *pf,
				 const struct pto_cluster_acquire *args)
{
	struct pto_device *pdev = pf->pdev;
	int ret;

	if (args->flags & ~PTO_CLUSTER_FLAGS_VALID)
		return -EINVAL;
	ret = pto_cluster_mask(pdev, args->clusters);
	if (ret)
		return ret;
	/* Killable, as every ioctl's (struct pto_device, @core_lock). */
	if (mutex_lock_killable(&pdev->core_lock))
		return -EINTR;
	return 0;
}

int pto_ioctl_cluster_acquire(struct pto_file *pf, void *data)
{
	struct pto_cluster_acquire *args = data;
	struct pto_device *pdev = pf->pdev;
	unsigned int c;
	int ret;

	ret = pto_cluster_args_lock(pf, args);
	if (ret)
		return ret;
	/* A cluster still being released is not free yet, even to its owner. */
	if (args->clusters & pdev->cluster_releasing) {
		mutex_unlock(&pdev->core_lock);
		return -EBUSY;
	}
	for (c = 0; c < pdev->clusters; c++) {
		if (!(args->clusters & BIT_ULL(c)))
			continue;
		if (pdev->cluster_owner[c] && pdev->cluster_owner[c] != pf) {
			mutex_unlock(&pdev->core_lock);
			return -EBUSY;
		}
	}
	/* cluster_owner[] is written under core_lock and win_lock. */
	if (down_write_killable(&pdev->win_lock)) {
		mutex_unlock(&pdev->core_lock);
		return -EINTR;
	}
	for (c = 0; c < pdev->clusters; c++) {
		if (!(args->clusters & BIT_ULL(c)))
			continue;
		if (!pdev->cluster_owner[c])
			pto_cluster_clear_windows(pdev, c);
		pdev->cluster_owner[c] = pf;
	}
	up_write(&pdev->win_lock);
	mutex_unlock(&pdev->core_lock);
	return 0;
}

/* The cores of @clusters (a bitmap of clusters), as a core mask. */
static void pto_clusters_core_mask(struct pto_device *pdev, u64 clusters,
				   unsigned long *mask)
{
	unsigned int c;

	bitmap_zero(mask, PTO_MAX_CORES);
	for (c = 0; c < pdev->clusters; c++)
		if (clusters & BIT_ULL(c))
			bitmap_set(mask, c * PTO_CORES_PER_CLUSTER,
				   PTO_CORES_PER_CLUSTER);
}

/*
 * Release @clusters (owned by @pf, checked under core_lock, held): stop
 * their cores as one set, zap the windows, free the clusters. No other
 * file's call may wait behind this retirement (up to 30 s), so: mark
 * the clusters releasing (acquire and launch refuse them) and claim the
 * retirement under core_lock, as the retire ioctl does, so the requests
 * land on the generation just checked; retire without it; then take it
 * again (every holder's work is short) to clear the owners. Drops
 * core_lock before it returns.
 */
static void pto_clusters_release_unlock(struct pto_file *pf, u64 clusters)
{
	struct pto_device *pdev = pf->pdev;
	struct pto_retire_ctx ctx;
	DECLARE_BITMAP(mask, PTO_MAX_CORES);
	unsigned int c, i;

	lockdep_assert_held(&pdev->core_lock);

	pdev->cluster_releasing |= clusters;
	pto_clusters_core_mask(pdev, clusters, mask);
	pto_retire_init(&ctx, pdev, PTO_RR_RELEASE);
	pto_retire_claim_mask(&ctx, mask);
	mutex_unlock(&pdev->core_lock);

	pto_retire_run(&ctx);
	pto_retire_finish(&ctx);

	/*
	 * Not killable: the clusters must end free. The ownership change
	 * and the zap, under win_lock (write), after the retirement's wait:
	 * a window fault holds win_lock (read) across its ownership check
	 * and its PTE insert, so it either completed before down_write()
	 * returned (and the zap below removes its PTE) or runs after
	 * up_write() and sees the cluster free (SIGBUS). No fault can
	 * install a PTE after the zap for the next owner's core.
	 */
	mutex_lock(&pdev->core_lock);
	down_write(&pdev->win_lock);
	for (c = 0; c < pdev->clusters; c++)
		if (clusters & BIT_ULL(c))
			pdev->cluster_owner[c] = NULL;
	for_each_set_bit(i, mask, PTO_MAX_CORES)
		pto_window_zap(pf, &pdev->core[i]);
	up_write(&pdev->win_lock);
	pdev->cluster_releasing &= ~clusters;
	mutex_unlock(&pdev->core_lock);
}

/* The clusters @pf owns, as a bitmap. */
static u64 pto_file_clusters(struct pto_file *pf)
{
	struct pto_device *pdev = pf->pdev;
	u64 clusters = 0;
	unsigned int c;

	lockdep_assert(lockdep_is_held(&pdev->core_lock) ||
		       lockdep_is_held(&pdev->win_lock));

	for (c = 0; c < pdev->clusters; c++)
		if (pdev->cluster_owner[c] == pf)
			clusters |= BIT_ULL(c);
	return clusters;
}

int pto_ioctl_cluster_release(struct pto_file *pf, void *data)
{
	struct pto_cluster_acquire *args = data;
	int ret = pto_cluster_args_lock(pf, args);

	if (ret)
		return ret;
	if (args->clusters & ~pto_file_clusters(pf))
		ret = -EPERM;
	else if (args->clusters & pf->pdev->cluster_releasing)
		ret = -EBUSY;	/* another thread of this file releases one */
	if (ret) {
		mutex_unlock(&pf->pdev->core_lock);
		return ret;
	}
	pto_clusters_release_unlock(pf, args->clusters);
	return 0;
}

/*
 * File release: stop every core the file launched, as one set, and release
 * its clusters. A file that owns no cluster returns without core_lock: a
 * killed process whose ioctl gave up waiting for it must not wait again in
 * its exit's close. The win_lock (read) check is stable: at release no
 * ioctl of @pf runs, and only @pf's own acquire makes it an owner. None
 * of its clusters is releasing either: a release ioctl returns only once
 * its clusters are free.
 */
void pto_file_release_cores(struct pto_file *pf)
{
	struct pto_device *pdev = pf->pdev;
	u64 clusters;

	down_read(&pdev->win_lock);
	clusters = pto_file_clusters(pf);
	up_read(&pdev->win_lock);
	if (!clusters)
		return;
	mutex_lock(&pdev->core_lock);
	pto_clusters_release_unlock(pf, pto_file_clusters(pf));
}

static bool pto_handshake_done(struct pto_device *pdev,
			       const unsigned long *mask)
{
	unsigned int i;

	for_each_set_bit(i, mask, PTO_MAX_CORES)
		/* Acquire: pairs with the core's release of done. */
		if (!smp_load_acquire(&pdev->workers[i].done))
			return false;
	return true;
}

/*
 * Clear a handshake line before a launch, word by word: debugfs handshake
 * reads it locklessly (READ_ONCE), and the core writes it only after it
 * sees F_LAUNCH (behind the launcher's smp_wmb()).
 */
static void pto_worker_line_clear(struct pto_worker_line *w)
{
	WRITE_ONCE(w->phys_id, 0);
	WRITE_ONCE(w->core_type, 0);
	WRITE_ONCE(w->done, 0);
	WRITE_ONCE(w->gen, 0);
	WRITE_ONCE(w->payload[0], 0);
	WRITE_ONCE(w->payload[1], 0);
}

static bool pto_is_eventfd(struct file *file)
{
	struct eventfd_ctx *ctx = eventfd_ctx_fileget(file);

	if (IS_ERR(ctx))
		return false;
	eventfd_ctx_put(ctx);
	return true;
}

/* One CORE_LAUNCH call's state across its steps. */
struct pto_launch {
	struct pto_file *pf;
	const struct pto_core_launch *args;
	DECLARE_BITMAP(mask, PTO_MAX_CORES);
	struct file *notify;		/* the eventfd's file, or NULL */
	struct pto_retire_ctx *ctx;	/* retires what the launch published */
	struct pto_bo *bo;		/* the payload area's, held */
	unsigned int published;
	bool pending;			/* a request arrived before READY */
};

/* Validate the arguments and take what the launch needs before core_lock. */
static int pto_launch_prepare(struct pto_launch *l)
{
	const struct pto_core_launch *args = l->args;
	int ret;

	if (args->flags & ~PTO_LAUNCH_FLAGS_VALID || args->pad ||
	    (!(args->flags & PTO_LAUNCH_FLAG_EVENTFD) && args->eventfd))
		return -EINVAL;
	ret = pto_core_mask(l->pf->pdev, args->cores, l->mask);
	if (ret)
		return ret;
	if (!args->payload_addr || args->payload_addr % PTO_PAYLOAD_SIZE)
		return -EINVAL;
	/* ~550 bytes: off the stack (the debug kernel's FRAME_WARN is 1024). */
	l->ctx = kmalloc(sizeof(*l->ctx), GFP_KERNEL_ACCOUNT);
	if (!l->ctx)
		return -ENOMEM;
	if (args->flags & PTO_LAUNCH_FLAG_EVENTFD) {
		/*
		 * One file for every core (a racing close or dup2 cannot give
		 * cores different contexts); each core takes its own context
		 * reference, dropped by its retirement.
		 */
		l->notify = fget(args->eventfd);
		if (!l->notify || !pto_is_eventfd(l->notify))
			return -EBADF;
	}
	return 0;
}

/*
 * Every core owned by the caller, not quarantined and idle (the previous
 * generation returned through its gate), and the payload area inside one
 * of the caller's buffer objects, which the launch holds.
 */
static int pto_launch_check(struct pto_launch *l)
{
	struct pto_device *pdev = l->pf->pdev;
	struct pto_file *pf = l->pf;
	u64 addr = l->args->payload_addr;
	u64 need = (u64)bitmap_weight(l->mask, PTO_MAX_CORES) * 2 *
		   PTO_PAYLOAD_SIZE;
	struct pto_bo *bo;
	unsigned int i;

	lockdep_assert_held(&pdev->core_lock);
	for_each_set_bit(i, l->mask, PTO_MAX_CORES) {
		struct pto_core *core = &pdev->core[i];

		if (!pto_core_owned_by(core, pf))
			return -EPERM;
		if (pdev->cluster_releasing &
		    BIT_ULL(i / PTO_CORES_PER_CLUSTER))
			return -EBUSY;
		if (test_bit(PTO_CORE_F_QUARANTINE, &core->flags))
			return -EIO;
		if (test_bit(PTO_CORE_F_LAUNCH, &core->flags) ||
		    READ_ONCE(core->state) != PTO_CORE_UNLAUNCHED)
			return -EBUSY;
	}
	bo = pto_bo_lookup(pf, addr, need);
	/* A device address, not a user pointer: -EINVAL, not -EFAULT. */
	if (!bo)
		return -EINVAL;
	l->bo = bo;
	return 0;
}

/*
 * Clear the previous launch's reports, arm every core's election bits,
 * request and gate, then launch and wait for the handshake reports.
 * -ETIMEDOUT if a report is missing (pto_launch_publish() sorts them out).
 */
static int pto_launch_handshake(struct pto_launch *l)
{
	struct pto_device *pdev = l->pf->pdev;
	unsigned int i;

	for_each_set_bit(i, l->mask, PTO_MAX_CORES) {
		pto_worker_line_clear(&pdev->workers[i]);
		pto_retire_arm(&pdev->core[i]);
		/* A core failing to start: the launch's bad-report path. */
		if (pto_should_fail(PTO_FAIL_CORE_START))
			set_bit(PTO_CORE_F_BADID, &pdev->core[i].flags);
	}
	/*
	 * Cleared reports, reset bits and armed gates precede F_LAUNCH (the
	 * core's smp_rmb() after seeing it pairs with this), so a stale
	 * report or release value can never reach this launch.
	 */
	smp_wmb();
	for_each_set_bit(i, l->mask, PTO_MAX_CORES) {
		struct pto_core *core = &pdev->core[i];

		atomic64_inc(&core->launches);
		set_bit(PTO_CORE_F_LAUNCH, &core->flags);
		wake_up_all(&core->wq);
	}
	if (!wait_event_timeout(pdev->core_wq,
				pto_handshake_done(pdev, l->mask),
				PTO_HANDSHAKE_TIMEOUT))
		return -ETIMEDOUT;
	return 0;
}

/* Why @core's handshake report is unusable, or NULL. */
static const char *pto_launch_report_bad(struct pto_core *core,
					 struct pto_worker_line *w)
{
	/* Acquire: pairs with the core's release of done. */
	if (!smp_load_acquire(&w->done))
		return "incomplete handshake";
	if (READ_ONCE(w->phys_id) != core->id ||
	    READ_ONCE(w->core_type) != core->type)
		return "invalid physical id";
	return NULL;
}

/* Ownership and payload init, then the open window, then READY. */
static void pto_launch_publish_core(struct pto_launch *l,
				    struct pto_core *core, u64 addr)
{
	struct pto_worker_line *w = &l->pf->pdev->workers[core->id];
	struct pto_bo *bo = l->bo;

	kref_get(&l->pf->ref);
	kref_get(&bo->ref);
	/* WRITE_ONCE: the doorbell reads it locklessly. */
	WRITE_ONCE(core->owner, l->pf);
	core->payload_bo = bo;
	core->payload_addr = addr;
	core->payload_kaddr = bo->vaddr + (addr - bo->dev_addr);
	core->notify = l->notify ? eventfd_ctx_fileget(l->notify) : NULL;
	core->last_id = PTO_DISPATCH_IDLE;
	/* WRITE_ONCE: debugfs handshake reads the line locklessly. */
	WRITE_ONCE(w->payload[0], addr);
	WRITE_ONCE(w->payload[1], addr + PTO_PAYLOAD_SIZE);
	WRITE_ONCE(*pto_ureg(core, PTO_REG_COND), 0);
	WRITE_ONCE(*pto_ureg(core, PTO_REG_PARKED), 0);
	WRITE_ONCE(*pto_ureg(core, PTO_REG_WAKE_REQ), 0);
	WRITE_ONCE(*pto_ureg(core, PTO_REG_DATA_MAIN_BASE), PTO_DISPATCH_IDLE);
	WRITE_ONCE(*pto_kreg(core, PTO_KREG_FAST_PATH_ENABLE),
		   PTO_FAST_PATH_OPEN);
	/* READ_ONCE elsewhere (CORE_STATS, debugfs, the nonce). */
	WRITE_ONCE(core->last_cond, 0);
	l->published++;
	/* Fully ordered: everything above precedes READY. */
	if (pto_retire_publish(core)) {
		/* A request was pending: this publisher owns it. */
		pto_retire_take(l->ctx, core);
		l->pending = true;
	}
}

/*
 * Publish every core whose handshake report is complete and correct. A
 * core whose init failed is never published: it is left for recovery
 * (quarantined), never closed blindly. @ret is the handshake's result;
 * returns the launch's.
 */
static int pto_launch_publish(struct pto_launch *l, int ret)
{
	struct pto_device *pdev = l->pf->pdev;
	unsigned int i, k = 0;

	pto_retire_init(l->ctx, pdev, PTO_RR_LAUNCH);
	for_each_set_bit(i, l->mask, PTO_MAX_CORES) {
		struct pto_core *core = &pdev->core[i];
		u64 addr = l->args->payload_addr +
			   (u64)k++ * 2 * PTO_PAYLOAD_SIZE;
		const char *why = pto_launch_report_bad(core,
							&pdev->workers[i]);

		if (why) {
			pto_retire_leave_unpublished(l->ctx, core, why);
			if (!ret)
				ret = -EIO;
			continue;
		}
		pto_launch_publish_core(l, core, addr);
	}
	if (l->pending && !ret)
		ret = -EIO;	/* retired during the launch (fatal error) */
	return ret;
}

/*
 * A failed launch retires every window it opened (nothing half-open): the
 * pending requests it took, and its other published cores, which it
 * requests now (under core_lock) and wins. The retirement itself runs
 * after core_lock is dropped (pto_ioctl_core_launch()), as the retire
 * ioctl's: its cores stay F_LAUNCH, so no launch reuses them meanwhile.
 */
static void pto_launch_unwind_claim(struct pto_launch *l)
{
	struct pto_device *pdev = l->pf->pdev;
	DECLARE_BITMAP(rest, PTO_MAX_CORES);
	unsigned int i;

	bitmap_zero(rest, PTO_MAX_CORES);
	for_each_set_bit(i, l->mask, PTO_MAX_CORES)
		if (!test_bit(PTO_CORE_F_QUARANTINE, &pdev->core[i].flags) &&
		    !test_bit(i, l->ctx->set) && !test_bit(i, l->ctx->left))
			__set_bit(i, rest);
	pto_retire_claim_mask(l->ctx, rest);
}

/*
 * Launch: one serial publisher per call (core_lock held up to the claim
 * of a failed launch's cores; the handshake's wait is bounded). On any
 * failure, or if a request arrived before READY (a fatal error during the
 * launch), the publisher retires its whole published set before it
 * returns. Documentation/mock-cores.md describes the handshake.
 */
int pto_ioctl_core_launch(struct pto_file *pf, void *data)
{
	struct pto_launch l = { .pf = pf, .args = data };
	struct pto_device *pdev = pf->pdev;
	int ret;

	ret = pto_launch_prepare(&l);
	if (ret)
		goto out;
	if (mutex_lock_killable(&pdev->core_lock)) {
		ret = -EINTR;
		goto out;
	}
	ret = pto_launch_check(&l);
	if (ret)
		goto out_unlock;
	ret = pto_launch_handshake(&l);
	ret = pto_launch_publish(&l, ret);
	pto_bo_put(l.bo);
	if (ret && l.published) {
		pto_launch_unwind_claim(&l);
		mutex_unlock(&pdev->core_lock);
		pto_retire_run(l.ctx);
		pto_retire_finish(l.ctx);
		goto out;
	}
out_unlock:
	mutex_unlock(&pdev->core_lock);
out:
	if (l.notify)
		fput(l.notify);	/* each core holds its own context ref */
	kfree(l.ctx);
	return ret;
}

int pto_ioctl_doorbell(struct pto_file *pf, void *data)
{
	struct pto_doorbell *args = data;
	struct pto_device *pdev = pf->pdev;
	DECLARE_BITMAP(mask, PTO_MAX_CORES);
	unsigned int i;
	int ret;

	if (args->flags & ~PTO_DOORBELL_FLAGS_VALID)
		return -EINVAL;
	ret = pto_core_mask(pdev, args->cores, mask);
	if (ret)
		return ret;
	/* A racy owner check is enough: a stray ring only wakes a core. */
	for_each_set_bit(i, mask, PTO_MAX_CORES)
		if (READ_ONCE(pdev->core[i].owner) != pf)
			return -EPERM;
	for_each_set_bit(i, mask, PTO_MAX_CORES) {
		struct pto_core *core = &pdev->core[i];

		atomic64_inc(&core->doorbells);
		trace_pto_doorbell(core);
		set_bit(PTO_CORE_F_DOORBELL, &core->flags);
		wake_up(&core->wq);
	}
	return 0;
}

/*
 * What another file's cores run is that file's business: its last COND
 * and its retirement nonce read as 0 to a file that does not own the
 * cluster, unless the caller has CAP_SYS_ADMIN (as DRM shows only a
 * caller's own objects). State and counters stay visible to all.
 */
bool pto_core_hidden(struct pto_file *pf, struct pto_file *owner)
{
	return owner && owner != pf && !capable(CAP_SYS_ADMIN);
}

int pto_ioctl_core_stats(struct pto_file *pf, void *data)
{
	struct pto_core_stats *args = data;
	struct pto_device *pdev = pf->pdev;
	struct pto_core *core;
	struct pto_file *owner;

	if (args->core >= pdev->cores)
		return -EINVAL;
	core = &pdev->core[args->core];
	/*
	 * win_lock (read), not core_lock: never waits behind a launch or a
	 * release. The owner file stays alive while it owns the cluster
	 * (release clears it under win_lock before the file is freed). Its
	 * tgid is reported as the caller sees it: 0 if the owner is not in
	 * the caller's pid namespace (or one below it).
	 */
	if (down_read_killable(&pdev->win_lock))
		return -EINTR;
	owner = pdev->cluster_owner[args->core / PTO_CORES_PER_CLUSTER];
	args->owner = owner ? pid_vnr(owner->tgid) : 0;
	/* Another file's COND is its own (pto_core_hidden()). */
	args->last_cond = pto_core_hidden(pf, owner) ? 0 :
			  READ_ONCE(core->last_cond);
	up_read(&pdev->win_lock);
	args->state = test_bit(PTO_CORE_F_QUARANTINE, &core->flags) ?
		      PTO_CORE_QUARANTINED : READ_ONCE(core->state);
	args->tasks = atomic64_read(&core->tasks);
	args->errors = atomic64_read(&core->errors);
	args->parks = atomic64_read(&core->parks);
	args->dozes = atomic64_read(&core->dozes);
	args->doorbells = atomic64_read(&core->doorbells);
	args->wakeups = atomic64_read(&core->wakeups);
	args->launches = atomic64_read(&core->launches);
	return 0;
}

/* ---- window mmap ------------------------------------------------------- */

/* ---- setup ------------------------------------------------------------- */

/* A core with its window pages but no thread (also used by KUnit). */
VISIBLE_IF_KUNIT int pto_core_test_init(struct pto_core *core,
					struct pto_device *pdev,
					unsigned int id)
{
	memset(core, 0, sizeof(*core));
	core->pdev = pdev;
	core->id = id;
	core->type = id % PTO_CORES_PER_CLUSTER ? PTO_CORE_AIV : PTO_CORE_AIC;
	init_waitqueue_head(&core->wq);
	spin_lock_init(&core->launch_lock);
	spin_lock_init(&core->graph_lock);
	atomic_set(&core->rbits, 0);
	atomic64_set(&core->retirements, 0);
	atomic64_set(&core->quarantines, 0);
	core->upage = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!core->upage)
		return -ENOMEM;
	core->uregs = page_address(core->upage);
	core->kregs = (void *)get_zeroed_page(GFP_KERNEL);
	if (!core->kregs) {
		__free_page(core->upage);
		return -ENOMEM;
	}
	*pto_kreg(core, PTO_KREG_FAST_PATH_ENABLE) = PTO_FAST_PATH_CLOSE;
	atomic64_set(&core->tasks, 0);
	atomic64_set(&core->errors, 0);
	atomic64_set(&core->parks, 0);
	atomic64_set(&core->dozes, 0);
	atomic64_set(&core->doorbells, 0);
	atomic64_set(&core->wakeups, 0);
	atomic64_set(&core->launches, 0);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(pto_core_test_init);

VISIBLE_IF_KUNIT void pto_core_test_fini(struct pto_core *core)
{
	free_page((unsigned long)core->kregs);
	__free_page(core->upage);
}
EXPORT_SYMBOL_IF_KUNIT(pto_core_test_fini);

int pto_cores_init(struct pto_device *pdev)
{
	unsigned int i;
	int ret;

	BUILD_BUG_ON(sizeof(struct pto_worker_line) != 64);
	BUILD_BUG_ON(sizeof(struct pto_gate_line) != 64);
	BUILD_BUG_ON(PTO_MAX_CORES * 64 > PTO_GATES_OFFSET);
	BUILD_BUG_ON(sizeof(struct pto_payload) != PTO_PAYLOAD_SIZE);
	BUILD_BUG_ON(PTO_REG_WAKE_REQ + 4 > PAGE_SIZE);

	mutex_init(&pdev->core_lock);
	init_rwsem(&pdev->win_lock);
	init_waitqueue_head(&pdev->core_wq);
	pdev->ctrl_mem = (void *)__get_free_pages(GFP_KERNEL | __GFP_ZERO,
						   PTO_CTRL_MEM_ORDER);
	if (!pdev->ctrl_mem)
		return -ENOMEM;
	pdev->workers = pdev->ctrl_mem;
	pdev->gates = pdev->ctrl_mem + PTO_GATES_OFFSET;
	pdev->core = kcalloc(pdev->cores, sizeof(*pdev->core), GFP_KERNEL);
	if (!pdev->core) {
		ret = -ENOMEM;
		goto err_ctrl;
	}
	for (i = 0; i < pdev->cores; i++) {
		struct pto_core *core = &pdev->core[i];
		struct task_struct *t;

		ret = pto_core_test_init(core, pdev, i);
		if (ret)
			goto err_cores;
		t = kthread_create(pto_core_thread, core, "pto%u/c%u",
				   pdev->index, i);
		if (IS_ERR(t)) {
			ret = PTR_ERR(t);
			pto_core_test_fini(core);
			goto err_cores;
		}
		core->thread = t;
		wake_up_process(t);
	}
	return 0;

err_cores:
	while (i--) {
		kthread_stop(pdev->core[i].thread);
		pto_core_test_fini(&pdev->core[i]);
	}
	kfree(pdev->core);
	pdev->core = NULL;
err_ctrl:
	free_pages((unsigned long)pdev->ctrl_mem, PTO_CTRL_MEM_ORDER);
	pdev->ctrl_mem = NULL;
	mutex_destroy(&pdev->core_lock);
	return ret;
}

/*
 * Module unload: no file is open (fops.owner pins the module while one
 * is), so every core is UNLAUNCHED, except a quarantined one. Unload still
 * runs the one retirement helper over every core (emergency; it finds
 * nothing to claim unless a launch was left behind), then kthread_stop()
 * ends the threads: every wait of a core, the gate's included, also waits
 * for it. A quarantined core's references are dropped here.
 */
void pto_cores_fini(struct pto_device *pdev)
{
	DECLARE_BITMAP(mask, PTO_MAX_CORES);
	unsigned int i;

	if (!pdev->core)
		return;
	bitmap_zero(mask, PTO_MAX_CORES);
	bitmap_set(mask, 0, pdev->cores);
	pto_cores_retire(pdev, mask, PTO_RR_UNLOAD);
	for (i = 0; i < pdev->cores; i++) {
		struct pto_core *core = &pdev->core[i];

		kthread_stop(core->thread);
		/* A quarantined core kept its references: its thread is gone. */
		pto_task_put(&core->task);
		pto_retire_put_refs(core);
		WRITE_ONCE(core->owner, NULL);
		core->payload_bo = NULL;
		core->notify = NULL;
		pto_core_test_fini(core);
	}
	kfree(pdev->core);
	pdev->core = NULL;
	free_pages((unsigned long)pdev->ctrl_mem, PTO_CTRL_MEM_ORDER);
	pdev->ctrl_mem = NULL;
	mutex_destroy(&pdev->core_lock);
}
