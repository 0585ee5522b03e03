// SPDX-License-Identifier: GPL-2.0
/*
 * pto-fuzz's operations on buffers and clusters (those on cores are in
 * fuzz_cores.c), one table entry each (fz_ops[], fuzz_table.c). Each picks
 * plausible arguments from the actor's model, sometimes with one defect,
 * predicts the result from the model and the ABI, makes the call through
 * fz_ioctl() / fz_mmap() (which hold the errno to the documented set) and
 * updates the model. A new operation (lanes, captures, graph launches) is
 * one function and one line of the table.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include "fuzz_actor.h"

uint64_t fz_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int fz_core_owned(const struct fz_actor *a, unsigned int i)
{
	return !!(a->clusters & (1ull << (i / PTO_CORES_PER_CLUSTER)));
}

/* A random core of the actor's that is (@launched) or is not launched. */
int fz_pick_core(struct fz_actor *a, int launched)
{
	unsigned int n = 0, i, pick[PTO_MAX_CORES];

	for (i = 0; i < a->info.cores; i++)
		if (fz_core_owned(a, i) && fz_bit(a->launched, i) == launched)
			pick[n++] = i;
	return n ? (int)pick[fz_below(a, n)] : -1;
}

/* A cluster the actor does not own, or -1. */
int fz_foreign_cluster(struct fz_actor *a)
{
	unsigned int c = (unsigned int)fz_below(a, a->info.clusters), k;

	for (k = 0; k < a->info.clusters; k++, c = (c + 1) % a->info.clusters)
		if (!(a->clusters & (1ull << c)))
			return (int)c;
	return -1;
}

static uint64_t fz_all_clusters(const struct fz_actor *a)
{
	return a->info.clusters >= 64 ? ~0ull : (1ull << a->info.clusters) - 1;
}

/* ---- buffers ---------------------------------------------------------- */

struct fz_bo *fz_pick_bo(struct fz_actor *a, int role, int live, int mapped)
{
	int n = 0, i, pick[FZ_MAX_BOS];

	for (i = 0; i < a->nbo; i++)
		if ((role < 0 || a->bo[i].role == role) &&
		    (live < 0 || a->bo[i].live == live) &&
		    (mapped < 0 || !!a->bo[i].map == mapped))
			pick[n++] = i;
	return n ? &a->bo[pick[fz_below(a, (uint64_t)n)]] : NULL;
}

static uint64_t fz_bo_size(struct fz_actor *a)
{
	switch (fz_below(a, 8)) {
	case 0:
		return 1 + fz_below(a, 4096);
	case 1:
		return 4096ull << fz_below(a, 8);	/* up to 512 KiB */
	default:
		return 4096 * (1 + fz_below(a, 16));
	}
}

int op_alloc(struct fz_actor *a)
{
	struct pto_bo_alloc al = { .size = 4096 };

	switch (fz_below(a, 10)) {
	case 0:
		al.size = 0;
		break;
	case 1:
		al.flags = 1ull << fz_below(a, 64);
		break;
	case 2:
		al.pad = 1 + (uint32_t)fz_below(a, 0xffff);
		break;
	case 3:
		al.size = a->info.gm_size - PTO_GM_RESERVED + 1 +
			  fz_below(a, 1ull << 40);
		break;
	default:
		if (a->nbo < FZ_MAX_BOS - 4)
			fz_bo_new(a, fz_bo_size(a), FZ_ROLE_PATTERN);
		return 0;
	}
	fz_ioctl(a, "BO_ALLOC (invalid)", PTO_IOCTL_BO_ALLOC, &al, -EINVAL,
		 fz_err_alloc);
	return 0;
}

int op_free(struct fz_actor *a)
{
	struct pto_bo_free fr = { 0 };
	struct fz_bo *b;
	int k = (int)fz_below(a, 10);

	if (k == 0) {
		/* A handle the file never had (handles are cyclic). */
		fr.handle = 0x70000 + (uint32_t)fz_below(a, 0x1000);
		fz_ioctl(a, "BO_FREE (no such handle)", PTO_IOCTL_BO_FREE,
			 &fr, -ENOENT, fz_err_handle);
		return 0;
	}
	/* Sometimes the work or payload buffer: cores may still use it. */
	b = fz_pick_bo(a, k == 1 ? -1 : FZ_ROLE_PATTERN, -1, -1);
	if (!b)
		return 0;
	fr.handle = b->handle;
	if (k == 2) {
		fr.pad = 1;
		fz_ioctl(a, "BO_FREE (pad)", PTO_IOCTL_BO_FREE, &fr, -EINVAL,
			 fz_err_handle);
		return 0;
	}
	if (fz_ioctl(a, "BO_FREE", PTO_IOCTL_BO_FREE, &fr,
		     b->live ? 0 : -ENOENT, fz_err_handle) || !b->live)
		return 0;
	b->live = 0;
	if (a->work == b - a->bo)
		a->work = -1;	/* stays mapped: the actor cannot reuse it */
	if (a->pay == b - a->bo)
		a->pay = -1;
	if (!b->map && !b->held)
		fz_bo_forget(a, b);
	return 0;
}

int op_info(struct fz_actor *a)
{
	struct fz_bo *b = fz_pick_bo(a, -1, -1, -1);
	struct pto_bo_info in = { 0 };

	if (!b)
		return 0;
	in.handle = b->handle;
	if (fz_below(a, 8) == 0) {
		in.pad = 1;
		fz_ioctl(a, "BO_INFO (pad)", PTO_IOCTL_BO_INFO, &in, -EINVAL,
			 fz_err_handle);
		return 0;
	}
	if (fz_ioctl(a, "BO_INFO", PTO_IOCTL_BO_INFO, &in,
		     b->live ? 0 : -ENOENT, fz_err_handle) || !b->live)
		return 0;
	if (in.size != b->size || in.dev_addr != b->addr ||
	    in.mmap_offset != b->mmap_off || in.flags)
		fz_bad(a, "BO_INFO of handle %u: size %llu at 0x%llx, model %llu at 0x%llx",
		       b->handle, (unsigned long long)in.size,
		       (unsigned long long)in.dev_addr,
		       (unsigned long long)b->size,
		       (unsigned long long)b->addr);
	return 0;
}

int op_map(struct fz_actor *a)
{
	struct fz_bo *b = fz_pick_bo(a, FZ_ROLE_PATTERN, -1, -1);
	const int rw = PROT_READ | PROT_WRITE;
	int c;

	if (!b)
		return 0;
	switch (fz_below(a, 8)) {
	case 0:
		fz_mmap(a, "map past the end", 4096, rw, MAP_SHARED,
			b->mmap_off + b->size, -EINVAL);
		return 0;
	case 1:
		fz_mmap(a, "map longer than the buffer", b->size + 4096, rw,
			MAP_SHARED, b->mmap_off, -EINVAL);
		return 0;
	case 2:
		fz_mmap(a, "MAP_PRIVATE", 4096, rw, MAP_PRIVATE, b->mmap_off,
			-EINVAL);
		return 0;
	case 3:
		fz_mmap(a, "PROT_EXEC", 4096, rw | PROT_EXEC, MAP_SHARED,
			b->mmap_off, -EPERM);
		return 0;
	case 4:
		c = fz_foreign_cluster(a);
		if (c >= 0)
			fz_mmap(a, "another file's window", a->info.window_size,
				rw, MAP_SHARED,
				PTO_WINDOW_OFFSET(c * PTO_CORES_PER_CLUSTER +
						  fz_below(a, 3),
						  a->info.window_size),
				-EPERM);
		return 0;
	}
	if (b->map)
		return fz_verify(a, b);
	b->map = fz_mmap(a, "map", b->size, rw, MAP_SHARED, b->mmap_off,
			 b->live ? 0 : -EINVAL);
	/* A buffer mapped again shows what it held: nobody wrote it. */
	return fz_verify(a, b);
}

int op_unmap(struct fz_actor *a)
{
	struct fz_bo *b = fz_pick_bo(a, FZ_ROLE_PATTERN, -1, 1);

	return b ? fz_bo_unmap(a, b) : 0;
}

int op_verify(struct fz_actor *a)
{
	int i;

	for (i = 0; i < a->nbo; i++)
		if (fz_verify(a, &a->bo[i]))
			return -1;
	return 0;
}

/* ---- clusters ----------------------------------------------------------- */

/* Map core @i's window now (it is owned); 0 or -1. */
int fz_map_window(struct fz_actor *a, unsigned int i)
{
	if (a->win[i])
		return 0;
	a->win[i] = fz_mmap(a, "window", a->info.window_size,
			    PROT_READ | PROT_WRITE, MAP_SHARED,
			    PTO_WINDOW_OFFSET(i, a->info.window_size), 0);
	return a->win[i] ? 0 : -1;
}

int op_acquire(struct fz_actor *a)
{
	struct pto_cluster_acquire ac = { 0 };
	uint64_t all = fz_all_clusters(a), fresh;
	unsigned int i;
	int expect, ret;

	ac.clusters = 1ull << fz_below(a, a->info.clusters);
	if (fz_below(a, 3) == 0)
		ac.clusters |= 1ull << fz_below(a, a->info.clusters);
	switch (fz_below(a, 12)) {
	case 0:
		ac.clusters = 0;
		break;
	case 1:
		ac.flags = 1ull << fz_below(a, 64);
		break;
	case 2:
		if (a->info.clusters < 64)
			ac.clusters |= 1ull << (a->info.clusters +
						fz_below(a, 64 - a->info.clusters));
		break;
	}
	if (!ac.clusters || ac.flags || (ac.clusters & ~all))
		expect = -EINVAL;
	else if (a->cmd->flags & FZ_CMD_CONTENDED)
		expect = FZ_ANY;
	else
		expect = (ac.clusters & a->cmd->others_clusters) ? -EBUSY : 0;
	ret = fz_ioctl(a, "CLUSTER_ACQUIRE", PTO_IOCTL_CLUSTER_ACQUIRE, &ac,
		       expect, fz_err_cluster);
	if (ret)
		return 0;
	fresh = ac.clusters & ~a->clusters;
	a->clusters |= ac.clusters;
	/* A cluster that changed hands shows nothing of its last owner. */
	for (i = 0; i < a->info.cores; i++) {
		const volatile uint32_t *w;
		uint32_t k;

		if (!(fresh & (1ull << (i / PTO_CORES_PER_CLUSTER))) ||
		    fz_below(a, 2) || fz_map_window(a, i))
			continue;
		w = a->win[i];
		for (k = 0; k < a->info.window_size / 4; k++)
			if (w[k]) {
				fz_bad(a, "core %u: a new owner's window reads 0x%x at 0x%x",
				       i, w[k], k * 4);
				return -1;
			}
	}
	return 0;
}

/* Forget the clusters in @clusters: the cores and windows went with them. */
void fz_clusters_gone(struct fz_actor *a, uint64_t clusters)
{
	unsigned int i;

	for (i = 0; i < a->info.cores; i++) {
		if (!(clusters & (1ull << (i / PTO_CORES_PER_CLUSTER))))
			continue;
		fz_clear(a->launched, i);
		fz_unmap_window(a, i);
	}
	a->clusters &= ~clusters;
}

int op_release(struct fz_actor *a)
{
	struct pto_cluster_acquire rel = { 0 };
	unsigned int i;
	uint32_t v;

	if (!a->clusters || fz_below(a, 6) == 0) {
		int c = fz_foreign_cluster(a);

		if (c < 0)
			return 0;
		rel.clusters = (1ull << c) | a->clusters;
		fz_ioctl(a, "CLUSTER_RELEASE (not owned)",
			 PTO_IOCTL_CLUSTER_RELEASE, &rel, -EPERM,
			 fz_err_cluster);
		return 0;
	}
	rel.clusters = a->clusters & fz_rnd(&a->rng);
	if (!rel.clusters)
		rel.clusters = a->clusters & -a->clusters;
	/* Leave something in the windows for the next owner not to see. */
	for (i = 0; i < a->info.cores; i++)
		if ((rel.clusters & (1ull << (i / PTO_CORES_PER_CLUSTER))) &&
		    a->win[i])
			a->win[i][0x800 / 4 + fz_below(a, 0x200)] =
				(uint32_t)fz_rnd(&a->rng) | 1;
	if (fz_ioctl(a, "CLUSTER_RELEASE", PTO_IOCTL_CLUSTER_RELEASE, &rel, 0,
		     fz_err_cluster))
		return 0;
	/* Every mapping of the released windows is gone: SIGBUS. */
	for (i = 0; i < a->info.cores; i++) {
		if (!(rel.clusters & (1ull << (i / PTO_CORES_PER_CLUSTER))) ||
		    !a->win[i])
			continue;
		if (!fz_win_read(a->win[i], PTO_REG_COND, &v))
			fz_bad(a, "core %u: its window reads 0x%x after the release",
			       i, v);
		a->rep->ev[FZ_EV_STALE_WINDOW]++;
	}
	fz_clusters_gone(a, rel.clusters);
	return 0;
}
