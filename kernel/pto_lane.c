// SPDX-License-Identifier: GPL-2.0-only
/*
 * pto - dump lanes: binding, capture, acknowledgement, the read-only
 * mapping, close, quarantine and reset (Documentation/dump.md).
 *
 * A device has `lanes` lanes (1..PTO_MAX_LANES): one per scheduler thread
 * of a process, bounded by the reference platform's five scheduler
 * threads because each bound lane holds an arena of kernel memory. The
 * kernel is the only producer: a capture runs the producer's steps
 * (pto_producer.c) in the calling thread, copying unlocked between them.
 */

/* Lock order: see pto_drv.h; pto_file.lock is never taken under ours. */
#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <linux/pto_dump.h>
#include <kunit/visibility.h>
#include "pto_drv.h"
#include "pto_bo.h"
#include "pto_lane.h"
#include "pto_netlink.h"
#include "pto_producer.h"

static unsigned int dump_arena_mb = 16;
module_param(dump_arena_mb, uint, 0444);
MODULE_PARM_DESC(dump_arena_mb,
		 "payload arena of each bound dump lane in MiB (1..1024, default 16)");

/* Bytes one capture copies between reschedule points. */
#define PTO_LANE_CHUNK (64 * 1024)
#define PTO_LANE_MMAP_BASE 0x80000UL	/* PTO_DUMP_MMAP_OFFSET(0) >> 32 */
#define PTO_LANE_ELEM_SIZE 4		/* PTO_DTYPE_F32 and _I32 */

static_assert(sizeof(struct pto_dump_record) == PTO_DUMP_RECORD_SIZE);
static_assert(sizeof(struct pto_dump_state) <= PTO_DUMP_STATE_SIZE);
static_assert(PTO_DUMP_MMAP_OFFSET(0) == (u64)PTO_LANE_MMAP_BASE << 32);

static u64 pto_lane_arena_size(void)
{
	return (u64)dump_arena_mb << 20;
}

int pto_lanes_init(struct pto_device *pdev)
{
	unsigned int i;

	if (dump_arena_mb < 1 || dump_arena_mb > 1024) {
		pr_err("pto: dump_arena_mb=%u out of range 1..1024\n",
		       dump_arena_mb);
		return -EINVAL;
	}
	pdev->lane = kcalloc(pdev->lanes, sizeof(*pdev->lane), GFP_KERNEL);
	if (!pdev->lane)
		return -ENOMEM;
	for (i = 0; i < pdev->lanes; i++) {
		struct pto_lane *lane = &pdev->lane[i];

		lane->pdev = pdev;
		lane->index = i;
		mutex_init(&lane->lock);
		xa_init(&lane->held);
		init_waitqueue_head(&lane->wq);
		lane->state = PTO_LANE_FREE;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(pto_lanes_init);

/* The producer stopped: the buffers it may have read are let go. */
static void pto_lane_drop_held(struct pto_lane *lane)
{
	struct pto_bo *bo;
	unsigned long key;

	lockdep_assert_held(&lane->lock);
	xa_for_each(&lane->held, key, bo) {
		xa_erase(&lane->held, key);
		pto_bo_put(bo);
	}
}

/* Back to FREE: everything the binding held is released. */
static void pto_lane_unbind_locked(struct pto_lane *lane)
{
	lockdep_assert_held(&lane->lock);
	pto_lane_drop_held(lane);
	if (lane->mem)
		pto_lane_mem_put(lane->mem);
	lane->mem = NULL;
	kvfree(lane->prod);
	lane->prod = NULL;
	put_pid(lane->owner_pid);
	lane->owner_pid = NULL;
	lane->owner = NULL;
	lane->state = PTO_LANE_FREE;
	lane->quarantine = 0;
	lane->cap_aborted = false;
}

/*
 * Whether a quarantined @lane may go to the next binder: quarantined only
 * because its terminal never closed, with no capture in flight and no
 * reservation open, so nothing can touch its arena or the buffers it read
 * (release already let those go). A lane whose producer may still run
 * stays quarantined until the reset.
 */
static bool pto_lane_adoptable(const struct pto_lane *lane)
{
	lockdep_assert_held(&lane->lock);
	return lane->state == PTO_LANE_QUARANTINED &&
	       lane->quarantine == PTO_LANE_Q_UNCLOSED &&
	       !lane->busy && !lane->prod->open;
}

void pto_lanes_fini(struct pto_device *pdev)
{
	unsigned int i;

	if (!pdev->lane)
		return;
	for (i = 0; i < pdev->lanes; i++) {
		struct pto_lane *lane = &pdev->lane[i];

		mutex_lock(&lane->lock);
		pto_lane_unbind_locked(lane);
		mutex_unlock(&lane->lock);
		xa_destroy(&lane->held);
		mutex_destroy(&lane->lock);
	}
	kfree(pdev->lane);
	pdev->lane = NULL;
}
EXPORT_SYMBOL_IF_KUNIT(pto_lanes_fini);

static struct pto_lane *pto_lane_of(struct pto_file *pf, u32 index)
{
	if (index >= pf->pdev->lanes)
		return NULL;
	return &pf->pdev->lane[index];
}

/* The lane @index if @pf bound it, locked; else NULL and *@err. */
static struct pto_lane *pto_lane_lock_owned(struct pto_file *pf, u32 index,
					    int *err)
{
	struct pto_lane *lane = pto_lane_of(pf, index);

	*err = -EINVAL;
	if (!lane)
		return NULL;
	mutex_lock(&lane->lock);
	if (lane->owner != pf) {
		mutex_unlock(&lane->lock);
		*err = -EPERM;
		return NULL;
	}
	return lane;
}

int pto_ioctl_dump_bind(struct pto_file *pf, void *data)
{
	struct pto_dump_bind *args = data;
	struct pto_lane *lane = pto_lane_of(pf, args->lane);
	u64 arena = pto_lane_arena_size();
	struct pto_lane_mem *mem = NULL;
	struct pto_producer *prod;
	int ret = -ENOMEM;

	if (!lane || args->level > PTO_DUMP_LEVEL_MAX ||
	    args->flags & ~PTO_DUMP_BIND_FLAGS_VALID)
		return -EINVAL;
	/*
	 * Charged to the binder's memory cgroup, both; bounded besides by
	 * lanes x dump_arena_mb, which only the administrator chooses.
	 */
	prod = kvzalloc(sizeof(*prod), GFP_KERNEL_ACCOUNT);
	if (!prod)
		goto err_free;
	mem = pto_lane_mem_alloc(PTO_DUMP_ARENA_OFFSET + arena);
	if (!mem)
		goto err_free;

	mutex_lock(&lane->lock);
	/*
	 * No capture on the resident route (pto_graph_check_dump()); tested
	 * before a takeover, so a refused bind changes nothing.
	 */
	if (args->level != PTO_DUMP_OFF && !xa_empty(&pf->graphs)) {
		mutex_unlock(&lane->lock);
		ret = -EOPNOTSUPP;
		goto err_free;
	}
	/* Taken over: the old binding's counters go, the lane starts fresh. */
	if (pto_lane_adoptable(lane))
		pto_lane_unbind_locked(lane);
	if (lane->state != PTO_LANE_FREE) {
		mutex_unlock(&lane->lock);
		ret = -EBUSY;
		goto err_free;
	}
	pto_producer_init(prod, mem->vaddr, arena, args->level);
	prod->dev = lane->pdev->index;
	prod->lane = lane->index;
	lane->prod = prod;
	lane->mem = mem;
	lane->owner = pf;
	lane->owner_pid = get_pid(pf->tgid);
	lane->state = PTO_LANE_BOUND;
	/* Read locklessly by a waiting capture's test (pto_lane_wait()). */
	WRITE_ONCE(lane->acks, 0);
	mutex_unlock(&lane->lock);

	args->mmap_offset = PTO_DUMP_MMAP_OFFSET(args->lane);
	args->mmap_size = mem->size;
	args->arena_size = arena;
	return 0;

err_free:
	if (mem)
		pto_lane_mem_put(mem);
	kvfree(prod);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(pto_ioctl_dump_bind);

/* Every field of a capture request; the level's selection comes later. */
static int pto_capture_check(const struct pto_dump_capture *c)
{
	u32 d;

	if (c->flags & ~PTO_DUMP_CAP_FLAGS_VALID || c->pad0 || c->pad ||
	    c->role > PTO_DUMP_ROLE_INOUT ||
	    c->stage > PTO_DUMP_AFTER_COMPLETION ||
	    c->kind > PTO_DUMP_KIND_SCALAR ||
	    (c->dtype != PTO_DTYPE_F32 && c->dtype != PTO_DTYPE_I32))
		return -EINVAL;
	if (c->kind == PTO_DUMP_KIND_SCALAR) {
		if (c->handle || c->rank || c->start_offset || c->bo_offset)
			return -EINVAL;
		for (d = 0; d < PTO_DUMP_MAX_RANK; d++)
			if (c->shape[d] || c->strides[d])
				return -EINVAL;
		return 0;
	}
	if (!c->handle || c->value || c->rank < 1 ||
	    c->rank > PTO_DUMP_MAX_RANK || c->bo_offset % PTO_LANE_ELEM_SIZE)
		return -EINVAL;
	for (d = 0; d < PTO_DUMP_MAX_RANK; d++) {
		if (d < c->rank ? !c->shape[d] : c->shape[d] || c->strides[d])
			return -EINVAL;
	}
	return 0;
}

/*
 * Whether the view's whole strided extent (its last element's end) lies
 * inside @bo: the producer reads nothing else of the caller's GM.
 */
static bool pto_capture_inside(const struct pto_dump_capture *c,
			       const struct pto_bo *bo)
{
	u64 last = c->start_offset, t, end;
	u32 d;

	for (d = 0; d < c->rank; d++)
		if (check_mul_overflow((u64)c->shape[d] - 1, c->strides[d], &t) ||
		    check_add_overflow(last, t, &last))
			return false;
	if (check_add_overflow(last, 1ULL, &last) ||
	    check_mul_overflow(last, (u64)PTO_LANE_ELEM_SIZE, &end) ||
	    check_add_overflow(end, c->bo_offset, &end))
		return false;
	return end <= bo->size;
}

/*
 * Keep a reference on @bo until the producer stops (close, unbind, reset):
 * the lane's, keyed by its GM page (unique among live buffers). Consumes
 * the caller's reference.
 */
static int pto_lane_hold(struct pto_lane *lane, struct pto_bo *bo)
{
	unsigned long key = bo->dev_addr >> PAGE_SHIFT;
	int ret;

	lockdep_assert_held(&lane->lock);
	if (xa_load(&lane->held, key) == bo) {
		pto_bo_put(bo);
		return 0;
	}
	ret = xa_insert(&lane->held, key, bo, GFP_KERNEL_ACCOUNT);
	if (ret)
		pto_bo_put(bo);
	return ret;
}

struct pto_lane_waiter {
	struct pto_lane *lane;
	ktime_t deadline;
	u64 seen;
};

static void pto_lane_wlock(void *priv)
{
	struct pto_lane_waiter *w = priv;

	mutex_lock(&w->lane->lock);
}

/* The acknowledgements seen when the step ran, for the wait's test. */
static void pto_lane_wunlock(void *priv)
{
	struct pto_lane_waiter *w = priv;

	w->seen = w->lane->acks;
	mutex_unlock(&w->lane->lock);
}

static void pto_lane_chunk_done(void *priv)
{
	cond_resched();
}

/*
 * Would-block: sleep until the consumer acknowledges something, the
 * deadline passes (-ETIMEDOUT) or a signal comes (-EINTR; not restarted:
 * the record is dropped).
 */
static int pto_lane_wait(void *priv, enum pto_begin_why why)
{
	struct pto_lane_waiter *w = priv;
	struct pto_lane *lane = w->lane;
	ktime_t left = ktime_sub(w->deadline, ktime_get());
	long ret;

	if (ktime_to_ns(left) <= 0)
		return -ETIMEDOUT;
	/*
	 * acks changes under lane->lock by WRITE_ONCE (pto_ioctl_dump_ack());
	 * wake_up_all() follows the change and its waitqueue lock orders the
	 * store before this re-test.
	 */
	ret = wait_event_interruptible_hrtimeout(lane->wq,
						 READ_ONCE(lane->acks) != w->seen,
						 left);
	if (ret == -ETIME)
		return -ETIMEDOUT;
	return ret ? -EINTR : 0;
}

static void pto_capture_arg(const struct pto_dump_capture *c,
			    const struct pto_bo *bo, bool payload,
			    struct pto_dump_arg *arg)
{
	struct pto_dump_record *rec = &arg->rec;

	memset(arg, 0, sizeof(*arg));
	rec->task_id = c->task_id;
	rec->run_id = c->run_id;
	memcpy(rec->func_id, c->func_id, sizeof(rec->func_id));
	rec->arg_index = c->arg_index;
	rec->role = c->role;
	rec->stage = c->stage;
	rec->kind = c->kind;
	rec->dtype = c->dtype;
	rec->rank = c->rank;
	memcpy(rec->shape, c->shape, sizeof(rec->shape));
	memcpy(rec->strides, c->strides, sizeof(rec->strides));
	rec->start_offset = c->start_offset;
	arg->esize = PTO_LANE_ELEM_SIZE;
	if (c->kind == PTO_DUMP_KIND_SCALAR) {
		rec->data = c->value;
		return;
	}
	arg->src = (const u8 *)bo->vaddr + c->bo_offset;
	arg->payload = payload;
	if (c->rank == 1 && c->strides[0] == 1)
		rec->flags |= PTO_DUMP_REC_CONTIGUOUS;
}

int pto_ioctl_dump_capture(struct pto_file *pf, void *data)
{
	struct pto_dump_capture *c = data;
	struct pto_lane_waiter wt = {
		.deadline = ns_to_ktime(min_t(u64, c->timeout_ns, KTIME_MAX)),
	};
	struct pto_producer_wait w = {
		.wait = pto_lane_wait, .lock = pto_lane_wlock,
		.unlock = pto_lane_wunlock, .chunk_done = pto_lane_chunk_done,
		.priv = &wt, .max_bytes = PTO_LANE_CHUNK,
	};
	struct pto_dump_arg arg;
	struct pto_lane *lane;
	struct pto_bo *bo = NULL;
	bool marked = c->flags & PTO_DUMP_CAP_MARKED;
	int ret;

	ret = pto_capture_check(c);
	if (ret)
		return ret;
	if (c->kind == PTO_DUMP_KIND_TENSOR) {
		bo = pto_bo_get_handle(pf, c->handle);
		if (!bo)
			return -ENOENT;
	}
	lane = pto_lane_lock_owned(pf, c->lane, &ret);
	if (!lane)
		goto out_put;
	ret = lane->busy ? -EBUSY : lane->state != PTO_LANE_BOUND ? -EPIPE : 0;
	if (ret)
		goto out_unlock;
	if (lane->prod->level == PTO_DUMP_PARTIAL && !marked) {
		c->result = PTO_DUMP_RES_SKIPPED;
		goto out_unlock;
	}
	if (bo && !pto_capture_inside(c, bo)) {
		pto_producer_refuse(lane->prod);
		ret = -EFAULT;
		goto out_unlock;
	}
	if (bo) {
		ret = pto_lane_hold(lane, bo);
		if (ret)
			goto out_unlock_nobo;
	}
	pto_capture_arg(c, bo, lane->prod->level == PTO_DUMP_FULL || marked,
			&arg);
	lane->busy = true;
	wt.lane = lane;
	mutex_unlock(&lane->lock);

	/* The lane's hold keeps @bo (and arg.src) alive until close. */
	ret = pto_producer_record(lane->prod, &arg, &w);

	mutex_lock(&lane->lock);
	lane->busy = false;
	mutex_unlock(&lane->lock);
	if (ret < 0)
		return ret;
	c->result = ret;
	return 0;

out_unlock:
	mutex_unlock(&lane->lock);
out_put:
	if (bo)
		pto_bo_put(bo);
	return ret;
out_unlock_nobo:
	/* pto_lane_hold() consumed the reference. */
	mutex_unlock(&lane->lock);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(pto_ioctl_dump_capture);

int pto_ioctl_dump_ack(struct pto_file *pf, void *data)
{
	struct pto_dump_ack *args = data;
	struct pto_lane *lane;
	int ret;

	if (args->flags & ~PTO_DUMP_ACK_FLAGS_VALID)
		return -EINVAL;
	lane = pto_lane_lock_owned(pf, args->lane, &ret);
	if (!lane)
		return ret;
	ret = pto_producer_ack(lane->prod, args->completed_payloads,
			       args->returned_buffers);
	if (!ret) {
		/* Pairs with pto_lane_wait()'s READ_ONCE, outside the lock. */
		WRITE_ONCE(lane->acks, lane->acks + 1);
		wake_up_all(&lane->wq);
	}
	mutex_unlock(&lane->lock);
	return ret;
}

/* Stop the producer and close the terminal (no capture in flight). */
static int pto_lane_close_locked(struct pto_lane *lane)
{
	int ret;

	lockdep_assert_held(&lane->lock);
	if (lane->busy)
		return -EBUSY;
	if (lane->state == PTO_LANE_CLOSED)
		return 0;
	/* An aborted capture left records missing: never a clean terminal. */
	if (lane->cap_aborted)
		return -EIO;
	ret = pto_producer_close(lane->prod);
	if (ret)
		return ret;
	lane->state = PTO_LANE_CLOSED;
	pto_lane_drop_held(lane);
	return 0;
}

static int pto_lane_cmd(struct pto_file *pf, void *data, bool unbind)
{
	struct pto_dump_lane *args = data;
	struct pto_lane *lane;
	int ret;

	if (args->flags & ~PTO_DUMP_LANE_FLAGS_VALID)
		return -EINVAL;
	lane = pto_lane_lock_owned(pf, args->lane, &ret);
	if (!lane)
		return ret;
	ret = pto_lane_close_locked(lane);
	if (!ret && unbind)
		pto_lane_unbind_locked(lane);
	mutex_unlock(&lane->lock);
	return ret;
}

int pto_ioctl_dump_close(struct pto_file *pf, void *data)
{
	return pto_lane_cmd(pf, data, false);
}
EXPORT_SYMBOL_IF_KUNIT(pto_ioctl_dump_close);

int pto_ioctl_dump_unbind(struct pto_file *pf, void *data)
{
	return pto_lane_cmd(pf, data, true);
}

int pto_ioctl_dump_status(struct pto_file *pf, void *data)
{
	struct pto_dump_status *s = data;
	struct pto_lane *lane = pto_lane_of(pf, s->lane);
	struct pto_producer *p;
	u32 index = s->lane;

	if (!lane || s->flags & ~PTO_DUMP_STATUS_FLAGS_VALID)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	s->lane = index;
	mutex_lock(&lane->lock);
	s->state = lane->state;
	s->quarantine = lane->quarantine;
	s->owner = lane->owner_pid ? pid_vnr(lane->owner_pid) : 0;
	p = lane->prod;
	if (p) {
		const struct pto_dump_state *st = p->st;

		s->level = p->level;
		s->open = p->open;
		s->count = p->count;
		s->reserved = p->count + p->open;
		s->arena_size = p->arena_size;
		s->arena_write_pos = p->head;
		s->acct = st->acct;
		s->refused = p->refused;
		s->abandoned = p->abandoned;
		if (p->open) {
			s->open_bytes = p->res.copy_bytes;
			s->open_written = p->res.written;
			s->open_task_id = p->res.arg.rec.task_id;
			s->open_arg_index = p->res.arg.rec.arg_index;
		}
	}
	mutex_unlock(&lane->lock);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(pto_ioctl_dump_status);

int pto_ioctl_dump_reset(struct pto_file *pf, void *data)
{
	struct pto_dump_reset *args = data;
	struct pto_device *pdev = pf->pdev;
	u32 all = GENMASK(pdev->lanes - 1, 0);
	u32 mask = args->lanes ? args->lanes : all;
	unsigned int i;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (args->lanes & ~all || args->flags & ~PTO_DUMP_RESET_FLAGS_VALID)
		return -EINVAL;
	args->recovered = 0;
	args->remaining = 0;
	for (i = 0; i < pdev->lanes; i++) {
		struct pto_lane *lane = &pdev->lane[i];

		if (!(mask & BIT(i)))
			continue;
		mutex_lock(&lane->lock);
		if (lane->state == PTO_LANE_QUARANTINED) {
			if (lane->busy || lane->prod->open) {
				args->remaining++;
			} else {
				pto_lane_unbind_locked(lane);
				args->recovered++;
			}
		}
		mutex_unlock(&lane->lock);
	}
	return 0;
}

/*
 * Why @lane cannot simply be freed when its file goes: PTO_LANE_Q_* bits.
 * A capture runs inside its ioctl, which holds the file, and opens and
 * ends its reservation there (no path leaves one open past the ioctl), so
 * on this route release always finds the producer stopped and the
 * unclosed terminal is what quarantines: PRODUCING and RESERVED are not
 * reached today and cover a producer of the kernel's own.
 */
static u32 pto_lane_unsettled(const struct pto_lane *lane)
{
	u32 q = 0;

	lockdep_assert_held(&lane->lock);
	if (lane->busy)
		q |= PTO_LANE_Q_PRODUCING;
	if (lane->prod->open)
		q |= PTO_LANE_Q_RESERVED;
	if (lane->state != PTO_LANE_CLOSED)
		q |= PTO_LANE_Q_UNCLOSED;
	return q;
}

void pto_file_release_lanes(struct pto_file *pf)
{
	struct pto_device *pdev = pf->pdev;
	unsigned int i;

	for (i = 0; i < pdev->lanes; i++) {
		struct pto_lane *lane = &pdev->lane[i];
		u32 q = 0;

		mutex_lock(&lane->lock);
		if (lane->owner == pf) {
			q = pto_lane_unsettled(lane);
			if (q) {
				/*
				 * Retained: memory and counters, and the
				 * buffer references while the producer may
				 * still run. Plain stores to the state
				 * block: every mapping holds the file, so
				 * none is left to read it.
				 */
				lane->state = PTO_LANE_QUARANTINED;
				lane->quarantine = q;
				lane->prod->st->state = PTO_LANE_QUARANTINED;
				lane->prod->st->quarantine = q;
				lane->owner = NULL;
				if (pto_lane_adoptable(lane))
					pto_lane_drop_held(lane);
			} else {
				pto_lane_unbind_locked(lane);
			}
		}
		mutex_unlock(&lane->lock);
		if (q)
			pto_nl_lane_quarantine(pdev, U32_MAX, i,
					       PTO_RETIRE_BY_RELEASE,
					       q & PTO_LANE_Q_UNCLOSED ?
					       "terminal never closed" :
					       "producer not stopped");
	}
}
EXPORT_SYMBOL_IF_KUNIT(pto_file_release_lanes);

/* Read-only, shared, only by the binding file. */
int pto_lane_mmap(struct pto_file *pf, struct vm_area_struct *vma)
{
	unsigned long index = (vma->vm_pgoff >> (32 - PAGE_SHIFT)) -
			      PTO_LANE_MMAP_BASE;
	unsigned long pgoff = vma->vm_pgoff &
			      ((1UL << (32 - PAGE_SHIFT)) - 1);
	struct pto_lane *lane;
	struct pto_lane_mem *mem;
	int ret;

	if (vma->vm_flags & VM_WRITE)
		return -EACCES;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	lane = pto_lane_lock_owned(pf, index, &ret);
	if (!lane)
		return ret;
	mem = lane->mem;
	kref_get(&mem->ref);
	mutex_unlock(&lane->lock);

	vma->vm_flags &= ~(VM_MAYWRITE | VM_MAYEXEC);
	ret = pto_lane_mem_map(vma, mem, pgoff);
	if (ret)
		pto_lane_mem_put(mem);
	return ret;
}

static const char *const pto_lane_state_names[] = {
	[PTO_LANE_FREE] = "free",
	[PTO_LANE_BOUND] = "bound",
	[PTO_LANE_CLOSED] = "closed",
	[PTO_LANE_QUARANTINED] = "quarantined",
};

static const char *const pto_level_names[] = {
	[PTO_DUMP_OFF] = "off",
	[PTO_DUMP_PARTIAL] = "partial",
	[PTO_DUMP_FULL] = "full",
	[PTO_DUMP_HYBRID] = "hybrid",
};

/* debugfs `lanes`: one line per lane, taken under its lock. */
void pto_lanes_debugfs_show(struct seq_file *m, struct pto_device *pdev)
{
	unsigned int i;

	seq_puts(m, "lane owner  level   state       reserved/count arena_pos    published completed refused  abandoned dropped  open                 quarantine\n");
	for (i = 0; i < pdev->lanes; i++) {
		struct pto_lane *lane = &pdev->lane[i];
		struct pto_producer *p;

		mutex_lock(&lane->lock);
		p = lane->prod;
		seq_printf(m, "%-4u %-6d %-7s %-11s ", i,
			   lane->owner_pid ? pid_nr(lane->owner_pid) : 0,
			   p ? pto_level_names[p->level] : "-",
			   pto_lane_state_names[lane->state]);
		if (p) {
			seq_printf(m, "%u/%-12u %-12llu %-9llu %-9llu %-8llu %-9llu %-8llu ",
				   p->count + p->open, p->count, p->head,
				   p->st->acct.published_payloads,
				   p->st->acct.completed_payloads, p->refused,
				   p->abandoned, p->st->acct.dropped);
			if (p->open)
				seq_printf(m, "task=%llx arg=%u %llu/%llu ",
					   p->res.arg.rec.task_id,
					   p->res.arg.rec.arg_index,
					   p->res.written, p->res.copy_bytes);
			else
				seq_puts(m, "-                    ");
		} else {
			seq_puts(m, "-              -            -         -         -        -         -        -                    ");
		}
		seq_printf(m, "%s%s%s%s\n", lane->quarantine ? "" : "-",
			   lane->quarantine & PTO_LANE_Q_PRODUCING ?
			   "producing " : "",
			   lane->quarantine & PTO_LANE_Q_RESERVED ?
			   "reserved " : "",
			   lane->quarantine & PTO_LANE_Q_UNCLOSED ?
			   "unclosed" : "");
		mutex_unlock(&lane->lock);
	}
}
