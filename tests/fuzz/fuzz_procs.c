// SPDX-License-Identifier: GPL-2.0
/*
 * pto-fuzz's operations on processes and threads: a forked child using
 * the inherited file (and killed -9 in the middle of it), close and
 * reopen, and two threads of one file racing a task against its core's
 * retirement or release, or each other's calls.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "fuzz_actor.h"

#define FZ_CHILD_ALLOCS 32
/* Handles after the file's last one that a killed child may have left. */
#define FZ_CHILD_PROBE (FZ_CHILD_ALLOCS + 8)

struct fz_child_log {
	uint32_t handle[FZ_CHILD_ALLOCS];	/* each, once BO_ALLOC returned */
	uint32_t n;
	int bad;
	char msg[240];
};

/* The child: read the inherited mappings, allocate through the file. */
static void fz_child(struct fz_actor *a, struct fz_child_log *log,
		     unsigned int allocs)
{
	unsigned int k;
	int i;

	for (i = 0; i < a->nbo; i++)
		fz_verify(a, &a->bo[i]);
	for (k = 0; k < allocs && !a->rep->bad; k++) {
		struct pto_bo_alloc al = { .size = 4096 };
		struct pto_bo_free fr = { 0 };

		if (fz_ioctl(a, "child BO_ALLOC", PTO_IOCTL_BO_ALLOC, &al, 0,
			     fz_err_alloc))
			break;
		log->handle[k] = al.handle;
		__atomic_store_n(&log->n, k + 1, __ATOMIC_RELEASE);
		fr.handle = al.handle;
		fz_ioctl(a, "child BO_FREE", PTO_IOCTL_BO_FREE, &fr, 0,
			 fz_err_handle);
	}
	if (a->rep->bad) {
		memcpy(log->msg, a->rep->msg, sizeof(log->msg));
		log->bad = 1;
	}
	_exit(0);
}

int op_fork(struct fz_actor *a)
{
	struct fz_child_log *log;
	int killed = (int)fz_below(a, 2), status;
	uint32_t base = a->max_handle, h, k;
	pid_t pid;

	log = mmap(NULL, sizeof(*log), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (log == MAP_FAILED)
		return 0;
	memset(log, 0, sizeof(*log));
	pid = fork();
	if (pid < 0) {
		munmap(log, sizeof(*log));
		return 0;
	}
	if (!pid)
		fz_child(a, log, killed ? FZ_CHILD_ALLOCS : 2);
	if (killed) {
		usleep((useconds_t)fz_below(a, 3000));
		kill(pid, SIGKILL);
	}
	if (waitpid(pid, &status, 0) != pid ||
	    (!killed && (!WIFEXITED(status) || WEXITSTATUS(status))))
		fz_bad(a, "forked child: status 0x%x", status);
	if (log->bad)
		fz_bad(a, "forked child: %s", log->msg);
	for (k = 0; k < __atomic_load_n(&log->n, __ATOMIC_ACQUIRE); k++)
		if (log->handle[k] > a->max_handle)
			a->max_handle = log->handle[k];
	/*
	 * What a child killed between its BO_ALLOC and its BO_FREE left is
	 * the file's: find it among the next handles (they are cyclic) and
	 * free it. A child that ran to the end left nothing.
	 */
	for (h = base + 1; h <= base + FZ_CHILD_PROBE; h++) {
		struct pto_bo_info in = { .handle = h };
		struct pto_bo_free fr = { .handle = h };

		if (fz_ioctl(a, "BO_INFO (child's)", PTO_IOCTL_BO_INFO, &in,
			     killed ? FZ_ANY : -ENOENT, fz_err_handle))
			continue;
		if (h > a->max_handle)
			a->max_handle = h;
		a->rep->ev[FZ_EV_CHILD_LEFT]++;
		fz_ioctl(a, "BO_FREE (child's)", PTO_IOCTL_BO_FREE, &fr, 0,
			 fz_err_handle);
	}
	munmap(log, sizeof(*log));
	return 0;
}

int op_reopen(struct fz_actor *a)
{
	return fz_reopen(a);
}

struct fz_racer {
	struct fz_actor *a;
	unsigned int core;
	int status;
};

static void *fz_race_task(void *arg)
{
	struct fz_racer *r = arg;
	struct pto_payload p = { .func_id = PTO_FUNC_SPIN_NS };

	p.scalar[0] = 100000 + (r->core * 7919ull) % 1000000;
	r->status = fz_task(r->a, r->core, &p, 1);
	return NULL;
}

/* A task on core @c, and its retirement or its cluster's release. */
static int fz_race_stop(struct fz_actor *a, unsigned int c)
{
	struct fz_racer r = { .a = a, .core = c };
	int release = (int)fz_below(a, 2);
	pthread_t t;

	if (pthread_create(&t, NULL, fz_race_task, &r))
		return 0;
	usleep((useconds_t)fz_below(a, 1000));
	if (release) {
		struct pto_cluster_acquire rel = {
			.clusters = 1ull << (c / PTO_CORES_PER_CLUSTER),
		};

		fz_ioctl(a, "CLUSTER_RELEASE (racing a task)",
			 PTO_IOCTL_CLUSTER_RELEASE, &rel, 0, fz_err_cluster);
	} else {
		struct pto_core_retire ret = { 0 };

		fz_set(ret.cores, c);
		if (!fz_ioctl(a, "CORE_RETIRE (racing a task)",
			      PTO_IOCTL_CORE_RETIRE, &ret, 0, fz_err_retire) &&
		    (ret.retired != 1 || fz_popcount(ret.quarantined)))
			fz_bad(a, "CORE_RETIRE of busy core %u: %u retired, %u quarantined",
			       c, ret.retired, fz_popcount(ret.quarantined));
	}
	pthread_join(t, NULL);
	if (r.status != -2 && r.status != -1 && r.status != PTO_TASK_OK &&
	    r.status != PTO_TASK_ESTOP)
		fz_bad(a, "a spin on core %u its %s stopped: status %d", c,
		       release ? "release" : "retirement", r.status);
	a->rep->ev[FZ_EV_RACED] += r.status == -2 || r.status == PTO_TASK_ESTOP;
	if (release)
		fz_clusters_gone(a, 1ull << (c / PTO_CORES_PER_CLUSTER));
	else
		fz_clear(a->launched, c);
	return 0;
}

struct fz_churn {
	struct fz_actor *a;
	uint64_t cluster;
	uint32_t max_handle;
};

/* Allocate, look up and free; take and give back one cluster. */
static void *fz_churn(void *arg)
{
	struct fz_churn *ch = arg;
	int k;

	for (k = 0; k < 4; k++) {
		struct pto_bo_alloc al = { .size = 4096 };
		struct pto_cluster_acquire ac = { .clusters = ch->cluster };
		struct pto_bo_info in = { 0 };
		struct pto_bo_free fr = { 0 };

		if (!fz_ioctl(ch->a, "BO_ALLOC (racing)", PTO_IOCTL_BO_ALLOC,
			      &al, 0, fz_err_alloc)) {
			if (al.handle > ch->max_handle)
				ch->max_handle = al.handle;
			in.handle = fr.handle = al.handle;
			fz_ioctl(ch->a, "BO_INFO (racing)", PTO_IOCTL_BO_INFO,
				 &in, 0, fz_err_handle);
			fz_ioctl(ch->a, "BO_FREE (racing)", PTO_IOCTL_BO_FREE,
				 &fr, 0, fz_err_handle);
		}
		if (!fz_ioctl(ch->a, "CLUSTER_ACQUIRE (racing)",
			      PTO_IOCTL_CLUSTER_ACQUIRE, &ac, FZ_ANY,
			      fz_err_cluster))
			fz_ioctl(ch->a, "CLUSTER_RELEASE (racing)",
				 PTO_IOCTL_CLUSTER_RELEASE, &ac, FZ_ANY,
				 fz_err_cluster);
	}
	return NULL;
}

/* Two threads churning one cluster nobody owns; then ask who owns it. */
static int fz_race_churn(struct fz_actor *a)
{
	struct fz_churn ch[2];
	struct pto_core_stats s = { 0 };
	pthread_t t[2];
	int c = fz_foreign_cluster(a), i, n = 0;

	if (c < 0 || (a->cmd->others_clusters & (1ull << c)))
		return 0;
	for (i = 0; i < 2; i++) {
		ch[i].a = a;
		ch[i].cluster = 1ull << c;
		ch[i].max_handle = 0;
		if (!pthread_create(&t[i], NULL, fz_churn, &ch[i]))
			n++;
		else
			break;
	}
	for (i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		if (ch[i].max_handle > a->max_handle)
			a->max_handle = ch[i].max_handle;
	}
	s.core = (uint32_t)c * PTO_CORES_PER_CLUSTER;
	if (!fz_ioctl(a, "CORE_STATS", PTO_IOCTL_CORE_STATS, &s, 0,
		      fz_err_status) && (pid_t)s.owner == a->pid)
		a->clusters |= 1ull << c;
	return 0;
}

int op_race(struct fz_actor *a)
{
	int c = fz_pick_core(a, 1);

	if (c >= 0 && fz_below(a, 3))
		return fz_race_stop(a, (unsigned int)c);
	return fz_race_churn(a);
}
