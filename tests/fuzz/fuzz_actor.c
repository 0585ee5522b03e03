// SPDX-License-Identifier: GPL-2.0
/*
 * pto-fuzz's actor: one open file of the device, the model of what it
 * owns, and the calls and checks every operation shares. The operations
 * themselves are in fuzz_ops.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include "fuzz_actor.h"

void fz_bad(struct fz_actor *a, const char *fmt, ...)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	va_list ap;

	pthread_mutex_lock(&lock);	/* the race operation's two threads */
	if (!a->rep->bad) {	/* the first violation is the one to report */
		a->rep->bad = 1;
		va_start(ap, fmt);
		vsnprintf(a->rep->msg, sizeof(a->rep->msg), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&lock);
}

/* Is -@err one of the errnos the ABI documents for this call (@allowed)? */
static int fz_allowed(int err, const int *allowed)
{
	for (; *allowed; allowed++)
		if (*allowed == err)
			return 1;
	return 0;
}

const int fz_err_alloc[] = { EINVAL, ENOMEM, EBUSY, 0 };
const int fz_err_handle[] = { EINVAL, ENOENT, 0 };
const int fz_err_cluster[] = { EINVAL, EBUSY, EPERM, 0 };
const int fz_err_launch[] = { EPERM, EBUSY, EINVAL, EBADF, EIO, ETIMEDOUT,
			      ENOMEM, 0 };
const int fz_err_doorbell[] = { EINVAL, EPERM, 0 };
const int fz_err_retire[] = { EINVAL, EPERM, ENOMEM, 0 };
const int fz_err_status[] = { EINVAL, 0 };
const int fz_err_mmap[] = { EINVAL, EPERM, EIO, 0 };

int fz_ioctl(struct fz_actor *a, const char *what, unsigned long req,
	     void *arg, int expect, const int *allowed)
{
	int ret;

	__atomic_fetch_add(&a->rep->calls, 1, __ATOMIC_RELAXED);
	ret = ioctl(a->fd, req, arg) ? -errno : 0;
	if (ret && !fz_allowed(-ret, allowed))
		fz_bad(a, "%s: errno %d is not one the ABI documents", what,
		       -ret);
	else if (expect != FZ_ANY && ret != expect)
		fz_bad(a, "%s: returned %d, the model expects %d", what, ret,
		       expect);
	return ret;
}

void *fz_mmap(struct fz_actor *a, const char *what, size_t len, int prot,
	      int flags, uint64_t off, int expect)
{
	void *p;
	int ret;

	__atomic_fetch_add(&a->rep->calls, 1, __ATOMIC_RELAXED);
	p = mmap(NULL, len, prot, flags, a->fd, (off_t)off);
	ret = p == MAP_FAILED ? -errno : 0;
	if (ret && !fz_allowed(-ret, fz_err_mmap))
		fz_bad(a, "%s: mmap errno %d is not one the ABI documents",
		       what, -ret);
	else if (expect != FZ_ANY && ret != expect)
		fz_bad(a, "%s: mmap returned %d, the model expects %d", what,
		       ret, expect);
	if (!ret && expect)
		munmap(p, len);
	return ret ? NULL : p;
}

/* The word a buffer of this actor holds at word @i (fz_bo.pattern). */
static uint64_t fz_word(const struct fz_bo *b, uint64_t i)
{
	uint64_t s = b->pattern ^ (i * 0x9E3779B97F4A7C15ull);

	return fz_rnd(&s);
}

void fz_fill(struct fz_bo *b)
{
	uint64_t *w = b->map, i;

	for (i = 0; i < b->size / 8; i++)
		w[i] = fz_word(b, i);
}

int fz_verify(struct fz_actor *a, const struct fz_bo *b)
{
	const uint64_t *w = b->map;
	uint64_t i;

	if (!b->map || b->role != FZ_ROLE_PATTERN)
		return 0;
	for (i = 0; i < b->size / 8; i++) {
		if (w[i] != fz_word(b, i)) {
			fz_bad(a, "buffer 0x%llx (handle %u) changed at +0x%llx: 0x%016llx, was 0x%016llx",
			       (unsigned long long)b->addr, b->handle,
			       (unsigned long long)(i * 8),
			       (unsigned long long)w[i],
			       (unsigned long long)fz_word(b, i));
			return -1;
		}
	}
	return 0;
}

struct fz_bo *fz_bo_new(struct fz_actor *a, uint64_t size, int role)
{
	struct pto_bo_alloc al = { .size = size };
	struct fz_bo *b;

	if (a->nbo == FZ_MAX_BOS)
		return NULL;
	if (fz_ioctl(a, "BO_ALLOC", PTO_IOCTL_BO_ALLOC, &al, FZ_ANY,
		     fz_err_alloc))
		return NULL;
	b = &a->bo[a->nbo++];
	memset(b, 0, sizeof(*b));
	b->handle = al.handle;
	if (al.handle > a->max_handle)
		a->max_handle = al.handle;
	b->addr = al.dev_addr;
	b->size = al.size;
	b->mmap_off = al.mmap_offset;
	b->live = 1;
	b->role = role;
	b->pattern = fz_rnd(&a->rng);
	if (al.size < size || al.size % 4096 || al.dev_addr < PTO_GM_RESERVED ||
	    al.dev_addr % a->info.gm_align)
		fz_bad(a, "BO_ALLOC of %llu: size %llu at 0x%llx",
		       (unsigned long long)size, (unsigned long long)al.size,
		       (unsigned long long)al.dev_addr);
	b->map = fz_mmap(a, "map new buffer", b->size, PROT_READ | PROT_WRITE,
			 MAP_SHARED, b->mmap_off, 0);
	if (b->map && role == FZ_ROLE_PATTERN)
		fz_fill(b);
	return b;
}

/* Forget buffer @b (unmapped and freed). */
void fz_bo_forget(struct fz_actor *a, struct fz_bo *b)
{
	int i = (int)(b - a->bo);

	if (a->work == i)
		a->work = -1;
	if (a->pay == i)
		a->pay = -1;
	if (a->work == a->nbo - 1)
		a->work = i;
	if (a->pay == a->nbo - 1)
		a->pay = i;
	*b = a->bo[--a->nbo];
}

int fz_bo_unmap(struct fz_actor *a, struct fz_bo *b)
{
	int ret = fz_verify(a, b);

	munmap(b->map, b->size);
	b->map = NULL;
	if (!b->live && !b->held)
		fz_bo_forget(a, b);
	return ret;
}

/* The actor's buffer (of @role) with @addr..+@len inside, or NULL. */
const struct fz_bo *fz_bo_at(const struct fz_actor *a, uint64_t addr,
			     uint64_t len)
{
	int i;

	for (i = 0; i < a->nbo; i++) {
		const struct fz_bo *b = &a->bo[i];

		if (b->live && addr >= b->addr && len <= b->size &&
		    addr - b->addr <= b->size - len)
			return b;
	}
	return NULL;
}

void fz_unmap_window(struct fz_actor *a, unsigned int core)
{
	if (a->win[core])
		munmap((void *)a->win[core], a->info.window_size);
	a->win[core] = NULL;
}

/* Close the file and open a new one: the model starts empty. */
int fz_reopen(struct fz_actor *a)
{
	unsigned int i;

	if (a->fd >= 0) {
		while (a->nbo) {
			struct fz_bo *b = &a->bo[a->nbo - 1];

			if (b->map)
				fz_verify(a, b);
			if (b->map)
				munmap(b->map, b->size);
			a->nbo--;
		}
		for (i = 0; i < PTO_MAX_CORES; i++)
			fz_unmap_window(a, i);
		close(a->fd);
	}
	memset(a->launched, 0, sizeof(a->launched));
	a->clusters = 0;
	a->lanes = a->lane_closed = 0;
	a->max_handle = 0;
	a->work = a->pay = -1;
	a->fd = open(FZ_DEV, O_RDWR);
	if (a->fd < 0) {
		fz_bad(a, "open %s: %s", FZ_DEV, strerror(errno));
		return -1;
	}
	memset(&a->info, 0, sizeof(a->info));
	return fz_ioctl(a, "GET_INFO", PTO_IOCTL_GET_INFO, &a->info, 0,
			fz_err_status);
}

static void fz_report(struct fz_actor *a)
{
	struct fz_reply *r = a->rep;
	int i;

	r->clusters = a->clusters;
	r->lanes = a->lanes;
	memcpy(r->launched, a->launched, sizeof(r->launched));
	r->nbos = 0;
	for (i = 0; i < a->nbo; i++) {
		const struct fz_bo *b = &a->bo[i];

		r->bo[r->nbos].handle = b->handle;
		r->bo[r->nbos].addr = b->addr;
		r->bo[r->nbos].size = b->size;
		r->bo[r->nbos].flags = (b->live ? FZ_BO_LIVE : 0) |
				       (b->map ? FZ_BO_MAPPED : 0) |
				       (b->held ? FZ_BO_HELD : 0);
		r->nbos++;
	}
}

/* A window the file no longer owns is SIGBUS: caught, per thread. */
__thread sigjmp_buf *fz_jmp;

static void fz_sigbus(int sig)
{
	(void)sig;
	if (fz_jmp)
		siglongjmp(*fz_jmp, 1);
	_exit(3);
}

void fz_sigbus_install(void)
{
	static int done;
	struct sigaction sa;

	if (done)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fz_sigbus;
	sigaction(SIGBUS, &sa, NULL);
	done = 1;
}

/* Read a word of a window: 0 and *@v, or -1 for SIGBUS. */
int fz_win_read(volatile uint32_t *w, unsigned int off, uint32_t *v)
{
	sigjmp_buf jb;

	fz_sigbus_install();
	if (sigsetjmp(jb, 1)) {
		fz_jmp = NULL;
		return -1;
	}
	fz_jmp = &jb;
	*v = __atomic_load_n(&w[off / 4], __ATOMIC_ACQUIRE);
	fz_jmp = NULL;
	return 0;
}

/* All of @len bytes, or -1 (EOF, a closed pipe). */
static int fz_full(int fd, void *buf, size_t len, int wr)
{
	char *p = buf;

	while (len) {
		ssize_t n = wr ? write(fd, p, len) : read(fd, p, len);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int fz_write_full(int fd, const void *buf, size_t len)
{
	return fz_full(fd, (void *)buf, len, 1);
}

int fz_read_cmd(int fd, struct fz_cmd *c)
{
	return fz_full(fd, c, sizeof(*c), 0);
}

int fz_read_reply(int fd, struct fz_reply *r)
{
	return fz_full(fd, r, sizeof(*r), 0);
}

void fz_actor_main(int in, int out, uint64_t seed)
{
	static struct fz_actor a;
	static struct fz_reply rep;
	struct fz_cmd cmd;

	/* Its own process group: the conductor's kill -9 takes its children. */
	setpgid(0, 0);
	memset(&a, 0, sizeof(a));
	a.fd = -1;
	a.pid = getpid();
	a.rng = seed;
	a.rep = &rep;
	a.cmd = &cmd;
	memset(&rep, 0, sizeof(rep));
	fz_reopen(&a);
	fz_report(&a);
	if (fz_write_full(out, &rep, sizeof(rep)))
		_exit(2);
	while (!fz_read_cmd(in, &cmd)) {
		memset(&rep, 0, sizeof(rep) - sizeof(rep.bo));
		a.rng = cmd.seed;
		if (cmd.op < fz_nops && !rep.bad)
			fz_ops[cmd.op].fn(&a);
		fz_report(&a);
		if (fz_write_full(out, &rep, sizeof(rep)))
			break;
	}
	_exit(0);
}
