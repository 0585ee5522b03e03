/* SPDX-License-Identifier: MIT */
/*
 * pto/sched.h - run an orchestrator's DAGs on a pto device: its workers
 * are the device's cores, its tensors GM tensors. The contract, device
 * tasks included: pto_orch_create_device(3); the scheduler:
 * Documentation/scheduler.md.
 */
#ifndef PTO_SCHED_H
#define PTO_SCHED_H

#include <stdint.h>
#include <pto/common.h>
#include <pto/orch.h>
#include <pto/pto.h>
#include <linux/pto_dump.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A GM tensor: @nbytes at @offset of buffer @bo, mapped at @map, keyed
 * on (GM, buffer, offset) and tagged with @bo's device. */
static inline struct pto_tensor pto_tensor_gm(struct pto_bo *bo, void *map,
					      uint64_t offset, uint64_t nbytes,
					      uint32_t dtype)
{
	struct pto_tensor t = PTO_ZERO_INIT;

	t.data = (uint64_t)(uintptr_t)map + offset;
	t.nbytes = nbytes;
	t.obj = pto_bo_dev_addr(bo);
	t.offset = offset;
	t.space = PTO_SPACE_GM;
	t.dtype = dtype;
	t.dev = pto_bo_dev_tag(bo);
	return t;
}

/* A row-major @rows x @cols 4-byte-element tile at @offset of @bo. */
static inline struct pto_tensor pto_tensor_gm_2d(struct pto_bo *bo, void *map,
						 uint64_t offset, uint32_t rows,
						 uint32_t cols, uint32_t dtype)
{
	struct pto_tensor t = pto_tensor_gm(bo, map, offset,
					    (uint64_t)rows * cols * 4, dtype);

	t.rank = 2;
	t.shape[0] = rows;
	t.shape[1] = cols;
	return t;
}

/* An OUTPUT the orchestrator allocates in GM, from the scope's ring. */
static inline struct pto_tensor pto_tensor_gm_auto(uint64_t nbytes,
						   uint32_t dtype)
{
	struct pto_tensor t = PTO_ZERO_INIT;	/* C++ too: pto_tensor_host() */

	t.nbytes = nbytes;
	t.space = PTO_SPACE_GM;
	t.dtype = dtype;
	return t;
}

/* Stable worker id of cluster @c's MIX worker (cores are ids 0..cores-1). */
#define PTO_SCHED_MIX_ID(c) (0x10000 + (int32_t)(c))
/* Stable worker id of SUB worker @i, a host thread running callbacks. */
#define PTO_SCHED_SUB_ID(i) (0x20000 + (int32_t)(i))
/* The most SUB workers pto_sched_config.sub_threads may ask for. */
#define PTO_SCHED_MAX_SUB_THREADS 64

/*
 * Scheduler configuration; the pointer may be NULL (all defaults), and
 * every field's zero is its default. Zero-initialise the struct (a
 * designated initialiser or = PTO_ZERO_INIT does): @reserved must be
 * zero, else pto_orch_create_device() is -EINVAL before it takes
 * anything. A field added later takes reserved space and its zero keeps
 * today's behaviour. Layout checked by the abi tier (tests/abi-layout.c).
 */
struct pto_sched_config {
	/* scheduler threads; 0: the device's lanes, at most CPUs - 1 */
	uint32_t threads;
	/* clusters to use, from 0; 0: all; more than the device has
	 * (or 64): -EINVAL */
	uint32_t clusters;
	uint32_t spin_us;	/* spin before sleeping; 0: 50 */
	/*
	 * Parked cores are woken (doorbell) for READY work at most one per
	 * wake_delay_us; 0: 20. See Documentation/scheduler.md, "Placement".
	 */
	uint32_t wake_delay_us;
	/*
	 * SUB workers: host threads that run the DAG's host callbacks
	 * (pto_submit_sub() and the like) beside the device's cores; 0: 1;
	 * more than PTO_SCHED_MAX_SUB_THREADS: -EINVAL. See
	 * Documentation/orchestrator.md, "SUB workers on a device".
	 */
	uint32_t sub_threads;
	uint32_t reserved0;	/* 0 */
	uint64_t reserved[5];	/* 0 */
};

/*
 * Written whole by pto_orch_sched_stats(), whatever the caller's struct
 * held: @reserved comes back zero. A counter added later takes reserved
 * space; a program built now never reads it, and one built later reads 0
 * from a libpto that does not count it yet.
 */
struct pto_sched_stats {
	/* Ids a core ended (a MIX task: one per core); after
	 * pto_orch_abort(), also those it ended in flight. */
	uint64_t tasks;
	/* Of which with a device error, or stopped by pto_orch_abort()
	 * (tasks the abort failed before any core took them: in neither). */
	uint64_t errors;
	uint64_t doorbells;	/* doorbell ioctls (cores were parked) */
	uint64_t sleeps;	/* poll() sleeps of scheduler threads */
	/* Set once the scheduler threads left their loops (a successful
	 * pto_orch_close(); one that timed out waiting for a silent core's
	 * retirement may count only the threads that returned). */
	uint64_t retired;	/* cores retired (CLOSE before return) */
	uint64_t quarantined;	/* cores that never answered: quarantined */
	uint64_t retire_ns;	/* slowest thread's retirement of its set */
	uint64_t captures;	/* args dump capture requests */
	uint64_t reserved[8];	/* 0 */
};

/* Create an orchestrator whose workers are @dev's cores (@dev must
 * outlive it); @ocfg and @scfg may be NULL. */
PTO_API int pto_orch_create_device(struct pto_dev *dev,
				   const struct pto_orch_config *ocfg,
				   const struct pto_sched_config *scfg,
				   pto_orch **out);

/* Args dump at @level (PTO_DUMP_*) of the runs started next, their files
 * in @dir/args_dump/; PTO_DUMP_OFF turns it off. Orch thread. */
PTO_API int pto_orch_dump_args(pto_orch *o, uint32_t level, const char *dir);

/* Counters summed over the scheduler threads; -EINVAL (all zero) on an
 * orchestrator that is not on a device. */
PTO_API int pto_orch_sched_stats(pto_orch *o, struct pto_sched_stats *st);

#ifdef __cplusplus
}
#endif
#endif
