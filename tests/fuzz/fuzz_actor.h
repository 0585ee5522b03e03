/* SPDX-License-Identifier: GPL-2.0 */
/* pto-fuzz's actor: its model and the helpers its operations share. */
#ifndef PTO_FUZZ_ACTOR_H
#define PTO_FUZZ_ACTOR_H

#include <setjmp.h>
#include <stddef.h>
#include "fuzz.h"

/* An expectation that only checks the documented errno set. */
#define FZ_ANY 1

/* What a buffer is for (struct fz_bo.role). */
#define FZ_ROLE_PATTERN 0	/* holds fz_word()s: nothing may change it */
#define FZ_ROLE_WORK 1		/* the actor's own tasks write it */
#define FZ_ROLE_PAYLOAD 2	/* core i's payload buffers at + i * 512 */

struct fz_bo {
	uint32_t handle;
	int live;		/* handle not freed */
	int role;
	uint64_t addr;
	uint64_t size;
	uint64_t mmap_off;
	uint64_t pattern;	/* seed of its fz_word()s */
	void *map;		/* the actor's mapping of it, or NULL */
	uint32_t held;		/* lanes holding it until their producer stops */
};

struct fz_actor {
	int fd;
	pid_t pid;
	uint64_t rng;
	struct pto_info info;
	struct fz_bo bo[FZ_MAX_BOS];
	int nbo;
	int work;		/* index in bo[] of the work buffer, or -1 */
	int pay;		/* of the payload buffer, or -1 */
	uint64_t clusters;
	uint32_t lanes;		/* lanes bound */
	uint32_t lane_closed;	/* of which closed (DUMP_CLOSE) */
	uint32_t lane_level[FZ_MAX_LANES];
	__u64 launched[PTO_CORE_MASK_WORDS];
	volatile uint32_t *win[PTO_MAX_CORES];
	uint32_t next_id[PTO_MAX_CORES];
	char *slot[PTO_MAX_CORES];	/* core i's payload buffers (parity 0) */
	int evcore[PTO_MAX_CORES];	/* its wake-ups go to an eventfd */
	uint32_t max_handle;	/* highest handle the file has given out */
	const struct fz_cmd *cmd;
	struct fz_reply *rep;
};

extern const int fz_err_alloc[], fz_err_handle[], fz_err_cluster[],
	fz_err_launch[], fz_err_doorbell[], fz_err_retire[], fz_err_status[],
	fz_err_mmap[];

void fz_bad(struct fz_actor *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * One call, checked: its errno must be in @allowed (0-terminated), and
 * the result equal to @expect (0 or -errno) unless @expect is FZ_ANY.
 */
int fz_ioctl(struct fz_actor *a, const char *what, unsigned long req,
	     void *arg, int expect, const int *allowed);
/* mmap of the actor's file, checked the same way; a mapping or NULL. */
void *fz_mmap(struct fz_actor *a, const char *what, size_t len, int prot,
	      int flags, uint64_t off, int expect);

struct fz_bo *fz_bo_new(struct fz_actor *a, uint64_t size, int role);
void fz_bo_forget(struct fz_actor *a, struct fz_bo *b);
int fz_bo_unmap(struct fz_actor *a, struct fz_bo *b);
const struct fz_bo *fz_bo_at(const struct fz_actor *a, uint64_t addr,
			     uint64_t len);
void fz_fill(struct fz_bo *b);
int fz_verify(struct fz_actor *a, const struct fz_bo *b);
void fz_unmap_window(struct fz_actor *a, unsigned int core);
int fz_reopen(struct fz_actor *a);

uint64_t fz_now(void);
struct fz_bo *fz_pick_bo(struct fz_actor *a, int role, int live, int mapped);
int fz_map_window(struct fz_actor *a, unsigned int i);
/* SIGBUS of this thread jumps here while set (fz_sigbus_install()). */
extern __thread sigjmp_buf *fz_jmp;
void fz_sigbus_install(void);
/* Read a window's word: 0 and *@v, or -1 for SIGBUS. */
int fz_win_read(volatile uint32_t *w, unsigned int off, uint32_t *v);
int fz_core_owned(const struct fz_actor *a, unsigned int i);
int fz_pick_core(struct fz_actor *a, int launched);
int fz_foreign_cluster(struct fz_actor *a);
void fz_clusters_gone(struct fz_actor *a, uint64_t clusters);
/*
 * Run @p on launched core @i until its FIN: its PTO_TASK_*, -1 (a
 * violation, reported) or, @racing, -2 (the core exited or its window
 * went: a retirement or release on another thread).
 */
int fz_task(struct fz_actor *a, unsigned int i, const struct pto_payload *p,
	    int racing);

/* The operations (fz_ops[], fuzz_table.c). */
int op_alloc(struct fz_actor *a);
int op_free(struct fz_actor *a);
int op_info(struct fz_actor *a);
int op_map(struct fz_actor *a);
int op_unmap(struct fz_actor *a);
int op_verify(struct fz_actor *a);
int op_acquire(struct fz_actor *a);
int op_release(struct fz_actor *a);
int op_launch(struct fz_actor *a);
int op_task(struct fz_actor *a);
int op_doorbell(struct fz_actor *a);
int op_retire(struct fz_actor *a);
int op_stats(struct fz_actor *a);
int op_fork(struct fz_actor *a);
int op_reopen(struct fz_actor *a);
int op_race(struct fz_actor *a);
int fz_launch_cluster(struct fz_actor *a, unsigned int c);
int op_bind(struct fz_actor *a);
int op_capture(struct fz_actor *a);
int op_ack(struct fz_actor *a);
int op_dclose(struct fz_actor *a);
int op_unbind(struct fz_actor *a);
int fz_lanes_dumping(const struct fz_actor *a);
void fz_lanes_close_dumping(struct fz_actor *a);
int op_dstatus(struct fz_actor *a);
int op_graph(struct fz_actor *a);

int fz_write_full(int fd, const void *buf, size_t len);
int fz_read_cmd(int fd, struct fz_cmd *c);
int fz_read_reply(int fd, struct fz_reply *r);

static inline int fz_bit(const __u64 *mask, unsigned int i)
{
	return !!(mask[i / 64] & (1ull << (i % 64)));
}

static inline void fz_set(__u64 *mask, unsigned int i)
{
	mask[i / 64] |= 1ull << (i % 64);
}

static inline void fz_clear(__u64 *mask, unsigned int i)
{
	mask[i / 64] &= ~(1ull << (i % 64));
}

static inline unsigned int fz_popcount(const __u64 *m)
{
	return (unsigned int)(__builtin_popcountll(m[0]) +
			      __builtin_popcountll(m[1]));
}

static inline uint64_t fz_below(struct fz_actor *a, uint64_t n)
{
	return n ? fz_rnd(&a->rng) % n : 0;
}

#endif
