// SPDX-License-Identifier: GPL-2.0
/*
 * pto-fuzz's operations on cores: launch, tasks (in the file's own GM and
 * outside it), doorbells, retirement and the status ioctls, one table
 * entry each (fz_ops[], fuzz_table.c).
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "fuzz_actor.h"

#define FZ_TASK_BOUND_NS 20000000000ull	/* a lost task: hang guard */
#define FZ_WORK_SIZE 65536

static struct fz_bo *fz_payload_bo(struct fz_actor *a)
{
	uint64_t need = (uint64_t)a->info.cores * 2 * PTO_PAYLOAD_SIZE;

	if (a->pay < 0 && a->nbo < FZ_MAX_BOS - 1 &&
	    fz_bo_new(a, need, FZ_ROLE_PAYLOAD))
		a->pay = a->nbo - 1;
	return a->pay < 0 || !a->bo[a->pay].map ? NULL : &a->bo[a->pay];
}

static struct fz_bo *fz_work_bo(struct fz_actor *a)
{
	if (a->work < 0 && a->nbo < FZ_MAX_BOS - 1 &&
	    fz_bo_new(a, FZ_WORK_SIZE, FZ_ROLE_WORK))
		a->work = a->nbo - 1;
	return a->work < 0 || !a->bo[a->work].map ? NULL : &a->bo[a->work];
}

/* A foreign buffer's address none of the actor's buffers covers, or 0. */
static uint64_t fz_foreign_addr(struct fz_actor *a, uint64_t len)
{
	const struct fz_cmd *c = a->cmd;
	const struct fz_range *r;
	uint64_t addr;

	if (!c->nforeign)
		return 0;
	r = &c->foreign[fz_below(a, c->nforeign)];
	addr = r->addr + (fz_below(a, r->size) & ~3ull);
	return fz_bo_at(a, addr, len) ? 0 : addr;
}

int op_launch(struct fz_actor *a)
{
	struct pto_core_launch l = { 0 };
	int lo = fz_pick_core(a, 0), hi, c, expect = 0, efd = -1;
	struct fz_bo *pb = fz_payload_bo(a);
	uint64_t addr;
	unsigned int i;

	if (lo < 0 || !pb)
		return 0;
	/* Contiguous cores: core i's payload buffers are at + i * 512. */
	for (hi = lo; (unsigned int)hi + 1 < a->info.cores &&
	     fz_core_owned(a, (unsigned int)hi + 1) &&
	     !fz_bit(a->launched, (unsigned int)hi + 1) && fz_below(a, 2);
	     hi++)
		;
	for (i = (unsigned int)lo; i <= (unsigned int)hi; i++)
		fz_set(l.cores, i);
	l.payload_addr = pb->addr + (uint64_t)lo * 2 * PTO_PAYLOAD_SIZE;
	switch (fz_below(a, 16)) {
	case 0:
		l.payload_addr += 4 * (1 + fz_below(a, 63));
		expect = -EINVAL;
		break;
	case 1:
		addr = fz_foreign_addr(a, 2 * PTO_PAYLOAD_SIZE) &
		       ~(uint64_t)(PTO_PAYLOAD_SIZE - 1);
		/* A foreign range the model saw may be the actor's now. */
		if (fz_bo_at(a, addr, PTO_PAYLOAD_SIZE))
			return 0;
		l.payload_addr = addr;
		expect = -EINVAL;
		break;
	case 2:
		l.payload_addr = pb->addr + pb->size - PTO_PAYLOAD_SIZE;
		expect = -EINVAL;
		break;
	case 3:
		c = fz_foreign_cluster(a);
		if (c < 0)
			return 0;
		fz_set(l.cores, (unsigned int)c * PTO_CORES_PER_CLUSTER +
				(unsigned int)fz_below(a, 3));
		expect = -EPERM;
		break;
	case 4:
		c = fz_pick_core(a, 1);
		if (c < 0)
			return 0;
		fz_set(l.cores, (unsigned int)c);
		expect = -EBUSY;
		break;
	case 5:
		l.flags = 1ull << (1 + fz_below(a, 63));
		expect = -EINVAL;
		break;
	case 6:
		l.eventfd = (uint32_t)a->fd;
		expect = -EINVAL;
		break;
	case 7:
		l.flags = PTO_LAUNCH_FLAG_EVENTFD;	/* not an eventfd */
		l.eventfd = (uint32_t)a->fd;
		expect = -EBADF;
		break;
	case 8:
		efd = eventfd(0, EFD_CLOEXEC);
		l.flags = PTO_LAUNCH_FLAG_EVENTFD;
		l.eventfd = (uint32_t)efd;
		break;
	}
	if (fz_ioctl(a, "CORE_LAUNCH", PTO_IOCTL_CORE_LAUNCH, &l, expect,
		     fz_err_launch) || expect) {
		if (efd >= 0)
			close(efd);
		return 0;
	}
	/* The cores hold the eventfd, not its number. */
	if (efd >= 0)
		close(efd);
	for (i = (unsigned int)lo; i <= (unsigned int)hi; i++) {
		a->rep->ev[FZ_EV_LAUNCHED]++;
		fz_set(a->launched, i);
		a->next_id[i] = 1;
		a->slot[i] = (char *)pb->map + (uint64_t)i * 2 * PTO_PAYLOAD_SIZE;
		a->evcore[i] = efd >= 0;
		if (fz_map_window(a, i))
			return 0;
		if (a->win[i][PTO_REG_DATA_MAIN_BASE / 4] ||
		    a->win[i][PTO_REG_COND / 4])
			fz_bad(a, "core %u launched with DATA_MAIN_BASE 0x%x COND 0x%x",
			       i, a->win[i][PTO_REG_DATA_MAIN_BASE / 4],
			       a->win[i][PTO_REG_COND / 4]);
	}
	return 0;
}

/* Launch every core of owned cluster @c not launched yet: 0 or -1. */
int fz_launch_cluster(struct fz_actor *a, unsigned int c)
{
	struct fz_bo *pb = fz_payload_bo(a);
	unsigned int i;

	if (!pb)
		return -1;
	for (i = c * PTO_CORES_PER_CLUSTER;
	     i < (c + 1) * PTO_CORES_PER_CLUSTER; i++) {
		struct pto_core_launch l = { 0 };

		if (fz_bit(a->launched, i))
			continue;
		fz_set(l.cores, i);
		l.payload_addr = pb->addr + (uint64_t)i * 2 * PTO_PAYLOAD_SIZE;
		if (fz_ioctl(a, "CORE_LAUNCH", PTO_IOCTL_CORE_LAUNCH, &l, 0,
			     fz_err_launch))
			return -1;
		a->rep->ev[FZ_EV_LAUNCHED]++;
		fz_set(a->launched, i);
		a->next_id[i] = 1;
		a->slot[i] = (char *)pb->map + (uint64_t)i * 2 * PTO_PAYLOAD_SIZE;
		a->evcore[i] = 0;
		if (fz_map_window(a, i))
			return -1;
	}
	return 0;
}

/* Dispatch, doorbell if parked, then spin / poll() for the FIN. */
static int fz_task_run(struct fz_actor *a, unsigned int i,
		       const struct pto_payload *p, int racing)
{
	volatile uint32_t *w = a->win[i];
	struct pto_doorbell db = { 0 };
	uint32_t id = a->next_id[i], cond;
	struct pto_payload *slot;
	uint64_t t0 = fz_now();
	int armed = 0;

	if (!w)
		return -2;
	a->next_id[i] = id % PTO_ID_MAX + 1;
	slot = (struct pto_payload *)(a->slot[i] + (id & 1) * PTO_PAYLOAD_SIZE);
	memcpy(slot, p, sizeof(*p));
	/* Payload before the id (the core's acquire load of DATA_MAIN_BASE). */
	__atomic_store_n(&w[PTO_REG_DATA_MAIN_BASE / 4], id, __ATOMIC_RELEASE);
	/* Pairs with the core's barrier between PARKED and its last look. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (w[PTO_REG_PARKED / 4]) {
		fz_set(db.cores, i);
		fz_ioctl(a, "DOORBELL", PTO_IOCTL_DOORBELL, &db,
			 racing ? FZ_ANY : 0, fz_err_doorbell);
	}
	for (;;) {
		cond = __atomic_load_n(&w[PTO_REG_COND / 4], __ATOMIC_ACQUIRE);
		if ((cond & PTO_COND_STATE_MASK) == PTO_COND_FIN &&
		    (cond & PTO_COND_ID_MASK) == id)
			break;
		if ((cond & PTO_COND_STATE_MASK) == PTO_COND_EXITED) {
			if (racing)
				return -2;
			fz_bad(a, "core %u exited (COND 0x%x) under task %u", i,
			       cond, id);
			return -1;
		}
		if (fz_now() - t0 > FZ_TASK_BOUND_NS) {
			fz_bad(a, "core %u: task %u not done in 20 s (COND 0x%x)",
			       i, id, cond);
			return -1;
		}
		if (fz_now() - t0 < 1000000 || a->evcore[i]) {
			sched_yield();
		} else if (!armed) {
			w[PTO_REG_WAKE_REQ / 4] = 1;
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
			armed = 1;
		} else {
			struct pollfd pfd = { .fd = a->fd, .events = POLLIN };
			uint64_t n;

			/* A failed read: another thread took them. */
			if (poll(&pfd, 1, 50) == 1 && (pfd.revents & POLLIN))
				n = (uint64_t)read(a->fd, &n, sizeof(n));
			armed = 0;
		}
	}
	if (slot->done_id != id || slot->status != PTO_COND_ERR(cond)) {
		fz_bad(a, "core %u task %u: COND 0x%x, payload done_id %u status %u",
		       i, id, cond, slot->done_id, slot->status);
		return -1;
	}
	return (int)PTO_COND_ERR(cond);
}

/* A window the file lost (a release on another thread) is SIGBUS. */
int fz_task(struct fz_actor *a, unsigned int i, const struct pto_payload *p,
	    int racing)
{
	sigjmp_buf jb;
	int ret;

	fz_sigbus_install();
	if (sigsetjmp(jb, 1)) {
		fz_jmp = NULL;
		if (racing)
			return -2;
		fz_bad(a, "core %u: SIGBUS from its window", i);
		return -1;
	}
	fz_jmp = &jb;
	ret = fz_task_run(a, i, p, racing);
	fz_jmp = NULL;
	return ret;
}

static void fz_vec(struct pto_tensor_desc *t, uint64_t addr, uint32_t n)
{
	memset(t, 0, sizeof(*t));
	t->addr = addr;
	t->dtype = PTO_DTYPE_I32;
	t->rank = 1;
	t->shape[0] = n;
	t->strides[0] = 1;
}

/* Where a wild task points: never inside one of the actor's buffers. */
static uint64_t fz_wild_addr(struct fz_actor *a, uint64_t len)
{
	const struct fz_bo *b;
	uint64_t addr;

	switch (fz_below(a, 5)) {
	case 0:
		addr = fz_foreign_addr(a, len);
		break;
	case 1:
		/* Straddles a buffer's end: 1 to len / 4 - 1 elements inside. */
		b = fz_pick_bo(a, -1, -1, -1);
		if (!b || len < 8)
			return 0;
		addr = b->addr + b->size - 4 * (1 + fz_below(a, len / 4 - 1));
		break;
	case 2:
		addr = 4 + (fz_below(a, PTO_GM_RESERVED) & ~3ull);
		break;
	case 3:
		addr = a->info.gm_size + (fz_below(a, 1ull << 40) & ~3ull);
		break;
	default:
		addr = fz_below(a, a->info.gm_size) & ~3ull;
		break;
	}
	return addr && !fz_bo_at(a, addr, len) ? addr : 0;
}

int op_task(struct fz_actor *a)
{
	int c = fz_pick_core(a, 1), st, want;
	struct fz_bo *wk = fz_work_bo(a);
	struct pto_payload p = { 0 };
	const struct fz_bo *src;
	uint32_t n, off, val, k, *out, before;
	uint64_t wild;

	/* No core to run on: get one, so that most steps reach a core. */
	if (c < 0)
		return a->clusters ? op_launch(a) : op_acquire(a);
	if (!wk)
		return 0;
	n = 1 + (uint32_t)fz_below(a, 256);
	off = (uint32_t)fz_below(a, FZ_WORK_SIZE / 4 - n - 1);
	out = (uint32_t *)wk->map + off;
	val = (uint32_t)fz_rnd(&a->rng);
	before = out[n];
	switch (fz_below(a, 6)) {
	case 0:	/* writes outside the file's memory */
		wild = fz_wild_addr(a, (uint64_t)n * 4);
		if (!wild)
			return 0;
		p.func_id = PTO_FUNC_FILL;
		p.scalar[0] = val;
		fz_vec(&p.t[PTO_ARG_OUT], wild, n);
		st = fz_task(a, (unsigned int)c, &p, 0);
		if (st >= 0 && st != PTO_TASK_EADDR)
			fz_bad(a, "FILL of %u at 0x%llx (not the file's): status %d",
			       n, (unsigned long long)wild, st);
		a->rep->ev[FZ_EV_TASK_DENIED] += st == PTO_TASK_EADDR;
		return 0;
	case 1:	/* reads outside it */
		wild = fz_wild_addr(a, (uint64_t)n * 4);
		if (!wild)
			return 0;
		p.func_id = PTO_FUNC_COPY;
		fz_vec(&p.t[PTO_ARG_A], wild, n);
		fz_vec(&p.t[PTO_ARG_OUT], wk->addr + off * 4ull, n);
		out[0] = val;
		st = fz_task(a, (unsigned int)c, &p, 0);
		if (st >= 0 && (st != PTO_TASK_EADDR || out[0] != val))
			fz_bad(a, "COPY from 0x%llx (not the file's): status %d, out 0x%x",
			       (unsigned long long)wild, st, out[0]);
		a->rep->ev[FZ_EV_TASK_DENIED] += st == PTO_TASK_EADDR;
		return 0;
	case 2:	/* strides that wrap or point below the buffer */
		p.func_id = PTO_FUNC_FILL;
		fz_vec(&p.t[PTO_ARG_OUT], wk->addr + off * 4ull, 1);
		p.t[PTO_ARG_OUT].rank = 2;
		p.t[PTO_ARG_OUT].shape[0] = 2 + (uint32_t)fz_below(a, 4);
		p.t[PTO_ARG_OUT].shape[1] = 1;
		p.t[PTO_ARG_OUT].strides[0] = fz_below(a, 2) ?
			-(uint64_t)(1 + fz_below(a, 1ull << 20)) :
			(1ull << 62) + fz_below(a, 1ull << 62);
		st = fz_task(a, (unsigned int)c, &p, 0);
		if (st >= 0 && st != PTO_TASK_EADDR && st != PTO_TASK_ESHAPE)
			fz_bad(a, "FILL with stride 0x%llx: status %d",
			       (unsigned long long)p.t[PTO_ARG_OUT].strides[0],
			       st);
		a->rep->ev[FZ_EV_TASK_DENIED] += st > 0;
		return 0;
	case 3:	/* a copy of one of the file's own buffers */
		src = fz_pick_bo(a, FZ_ROLE_PATTERN, 1, 1);
		if (!src || src->size < (uint64_t)n * 4)
			return 0;
		p.func_id = PTO_FUNC_COPY;
		fz_vec(&p.t[PTO_ARG_A], src->addr, n);
		fz_vec(&p.t[PTO_ARG_OUT], wk->addr + off * 4ull, n);
		st = fz_task(a, (unsigned int)c, &p, 0);
		if (st >= 0 && (st != PTO_TASK_OK ||
				memcmp(out, src->map, (size_t)n * 4)))
			fz_bad(a, "COPY of %u from own 0x%llx: status %d or data differs",
			       n, (unsigned long long)src->addr, st);
		a->rep->ev[FZ_EV_TASK_OK] += st == PTO_TASK_OK;
		return 0;
	}
	p.func_id = PTO_FUNC_FILL;
	p.scalar[0] = val;
	fz_vec(&p.t[PTO_ARG_OUT], wk->addr + off * 4ull, n);
	st = fz_task(a, (unsigned int)c, &p, 0);
	want = PTO_TASK_OK;
	if (st < 0)
		return 0;
	if (st != want)
		fz_bad(a, "FILL of %u in own 0x%llx: status %d", n,
		       (unsigned long long)(wk->addr + off * 4ull), st);
	for (k = 0; k < n && st == want; k++)
		if (out[k] != val) {
			fz_bad(a, "FILL: element %u is 0x%x, not 0x%x", k,
			       out[k], val);
			break;
		}
	if (out[n] != before)
		fz_bad(a, "FILL of %u wrote past its end", n);
	a->rep->ev[FZ_EV_TASK_OK] += st == want;
	return 0;
}

int op_doorbell(struct fz_actor *a)
{
	struct pto_doorbell db = { 0 };
	int c = fz_pick_core(a, 1), expect = 0, other;

	switch (fz_below(a, 6)) {
	case 0:
		other = fz_pick_core(a, 0);
		if (other < 0) {
			int fc = fz_foreign_cluster(a);

			if (fc < 0)
				return 0;
			other = fc * PTO_CORES_PER_CLUSTER;
		}
		fz_set(db.cores, (unsigned int)other);
		expect = -EPERM;
		break;
	case 1:
		db.flags = 1ull << fz_below(a, 64);
		expect = -EINVAL;
		break;
	case 2:
		if (a->info.cores < 128)
			fz_set(db.cores, a->info.cores +
				(unsigned int)fz_below(a, 128 - a->info.cores));
		expect = -EINVAL;
		break;
	}
	if (c >= 0)
		fz_set(db.cores, (unsigned int)c);
	else if (!expect)
		expect = fz_popcount(db.cores) ? -EPERM : -EINVAL;
	if (!fz_popcount(db.cores))
		expect = -EINVAL;
	fz_ioctl(a, "DOORBELL", PTO_IOCTL_DOORBELL, &db, expect,
		 fz_err_doorbell);
	return 0;
}

int op_retire(struct fz_actor *a)
{
	struct pto_core_retire r = { 0 };
	unsigned int i, want = 0;
	int expect = 0, fc;

	for (i = 0; i < a->info.cores; i++)
		if (fz_core_owned(a, i) && fz_below(a, 2))
			fz_set(r.cores, i);
	switch (fz_below(a, 8)) {
	case 0:
		fc = fz_foreign_cluster(a);
		if (fc < 0)
			return 0;
		fz_set(r.cores, (unsigned int)fc * PTO_CORES_PER_CLUSTER);
		expect = -EPERM;
		break;
	case 1:
		r.flags = 1;
		expect = -EINVAL;
		break;
	case 2:
		r.pad = 1;
		expect = -EINVAL;
		break;
	}
	if (!fz_popcount(r.cores))
		expect = -EINVAL;
	for (i = 0; i < a->info.cores; i++)
		want += fz_bit(r.cores, i) && fz_bit(a->launched, i);
	if (fz_ioctl(a, "CORE_RETIRE", PTO_IOCTL_CORE_RETIRE, &r, expect,
		     fz_err_retire) || expect)
		return 0;
	if (r.retired != want || fz_popcount(r.quarantined))
		fz_bad(a, "CORE_RETIRE: %u retired (model %u), %u quarantined",
		       r.retired, want, fz_popcount(r.quarantined));
	a->rep->ev[FZ_EV_RETIRED] += r.retired;
	for (i = 0; i < a->info.cores; i++)
		if (fz_bit(r.cores, i))
			fz_clear(a->launched, i);
	return 0;
}

/* CORE_STATS and RETIRE_STATUS of one core, against the model. */
int op_stats(struct fz_actor *a)
{
	unsigned int i = (unsigned int)fz_below(a, a->info.cores);
	struct pto_core_stats s = { .core = i };
	struct pto_retire_status rs = { .core = i };

	if (fz_below(a, 10) == 0) {
		s.core = a->info.cores + (uint32_t)fz_below(a, 1000);
		fz_ioctl(a, "CORE_STATS (no such core)", PTO_IOCTL_CORE_STATS,
			 &s, -EINVAL, fz_err_status);
		return 0;
	}
	if (fz_ioctl(a, "CORE_STATS", PTO_IOCTL_CORE_STATS, &s, 0,
		     fz_err_status) ||
	    fz_ioctl(a, "RETIRE_STATUS", PTO_IOCTL_RETIRE_STATUS, &rs, 0,
		     fz_err_status))
		return 0;
	if (s.state == PTO_CORE_QUARANTINED || rs.state == PTO_CORE_QUARANTINED)
		fz_bad(a, "core %u is quarantined", i);
	if (!fz_core_owned(a, i))
		return 0;
	if ((pid_t)s.owner != a->pid)
		fz_bad(a, "core %u of the actor's cluster: owner %u", i,
		       s.owner);
	/*
	 * A launch returns once READY is published; the core's thread
	 * writes its own state after it wakes, so HANDSHAKE may still
	 * show for a while (longest on PREEMPT_RT).
	 */
	else if (fz_bit(a->launched, i) ? s.state != PTO_CORE_READY &&
		 s.state != PTO_CORE_RUNNING &&
		 s.state != PTO_CORE_HANDSHAKE :
		 s.state != PTO_CORE_UNLAUNCHED)
		fz_bad(a, "core %u: state %u, model %s", i, s.state,
		       fz_bit(a->launched, i) ? "launched" : "unlaunched");
	return 0;
}
