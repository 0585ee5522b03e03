/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pto-fuzz: the stateful fuzzer's shared definitions. A conductor process
 * drives 2-3 actor processes over pipes, one command at a time (or two
 * actors at once); each actor owns one open file of the device and keeps
 * a model of what that file owns, which it sends back with every reply.
 * Between steps the conductor checks the models against debugfs and the
 * status ioctls (Documentation/testing.md, "The stateful fuzzer").
 */
#ifndef PTO_FUZZ_H
#define PTO_FUZZ_H

#include <stdint.h>
#include <sys/types.h>
#include <linux/pto.h>

#define FZ_DEV "/dev/pto0"
#define FZ_DBG "/sys/kernel/debug/pto/pto0/"
#define FZ_MAX_BOS 48		/* buffers one actor keeps at once */
#define FZ_MAX_FOREIGN 32	/* other actors' buffers sent with a command */
#define FZ_MAX_ACTORS 3
#define FZ_MAX_LANES 8		/* lanes the model tracks (the module allows 5) */

/* struct fz_bo_rep.flags */
#define FZ_BO_LIVE (1u << 0)	/* the handle is live (not freed) */
#define FZ_BO_MAPPED (1u << 1)	/* the actor maps it (keeps it alive) */
#define FZ_BO_HELD (1u << 2)	/* a lane it was captured into holds it */

/* struct fz_cmd.flags */
#define FZ_CMD_CONTENDED (1u << 0)	/* another actor runs at the same time */

struct fz_range {
	uint64_t addr;
	uint64_t size;
};

/* Conductor to actor: run operation @op with randomness @seed. */
struct fz_cmd {
	uint32_t op;
	uint32_t flags;
	uint64_t seed;
	uint64_t others_clusters;	/* clusters other actors own */
	uint32_t nforeign;
	uint32_t pad;
	struct fz_range foreign[FZ_MAX_FOREIGN];
};

struct fz_bo_rep {
	uint32_t handle;
	uint32_t flags;
	uint64_t addr;
	uint64_t size;
};

/* What the operations achieved (struct fz_reply.ev), summed in the report. */
enum {
	FZ_EV_LAUNCHED,		/* cores launched */
	FZ_EV_TASK_OK,		/* own tasks that ran and checked out */
	FZ_EV_TASK_DENIED,	/* tasks outside the file's memory refused */
	FZ_EV_RETIRED,		/* cores retired by CORE_RETIRE */
	FZ_EV_STALE_WINDOW,	/* released windows that SIGBUSed */
	FZ_EV_RACED,		/* tasks raced by their core's stop */
	FZ_EV_CHILD_LEFT,	/* buffers a killed child left, found */
	FZ_EV_LANE_BOUND,	/* lanes bound */
	FZ_EV_CAPTURED,		/* captures collected */
	FZ_EV_CAPTURE_DENIED,	/* captures outside the buffer refused */
	FZ_EV_GRAPH_RUN,	/* own graphs that ran and checked out */
	FZ_EV_GRAPH_REFUSED,	/* bad or foreign graphs refused */
	FZ_EV_COUNT
};

/* Actor to conductor: the outcome and the actor's model after it. */
struct fz_reply {
	int32_t bad;			/* nonzero: a violation, in @msg */
	uint32_t nbos;
	uint64_t clusters;		/* clusters the file owns */
	uint32_t lanes;			/* lanes the file binds */
	uint32_t pad;
	__u64 launched[PTO_CORE_MASK_WORDS];
	uint64_t calls;			/* ioctl / mmap calls made */
	uint64_t ev[FZ_EV_COUNT];
	char msg[240];
	struct fz_bo_rep bo[FZ_MAX_BOS];
};

/* One operation: the actor runs @fn; @weight is its share of the steps. */
struct fz_actor;
struct fz_op {
	const char *name;
	unsigned int weight;
	int (*fn)(struct fz_actor *a);
};

extern const struct fz_op fz_ops[];
extern const unsigned int fz_nops;
/* Index in fz_ops of "verify" (the conductor's checks run it on all). */
extern const unsigned int fz_op_verify;

/* The actor's loop: read commands from @in, reply on @out, until EOF. */
void fz_actor_main(int in, int out, uint64_t seed);

static inline uint64_t fz_rnd(uint64_t *s)
{
	/* splitmix64: every seed, 0 included, gives a good sequence. */
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

#endif
