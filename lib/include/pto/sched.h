/* SPDX-License-Identifier: MIT */
/*
 * pto/sched.h - run an orchestrator's DAGs on a pto device.
 *
 * pto_orch_create_device() acquires clusters of an open device, launches
 * their cores, and creates an orchestrator (pto/orch.h) whose next-level
 * workers are those cores: worker id = core index, kind PTO_WORKER_AIC
 * or PTO_WORKER_AIV, plus one PTO_WORKER_MIX worker per cluster (id
 * PTO_SCHED_MIX_ID) whose tasks run on the cluster's three cores together. Scheduler threads (one per dump lane by default), each owning
 * a partition of the clusters, dispatch READY tasks to their idle cores and
 * hand completions back to the orchestrator. See Documentation/scheduler.md.
 *
 * A device task's callable names a built-in kernel (kernel_id = PTO_FUNC_*
 * of linux/pto.h); its tensors are GM tensors (pto_tensor_gm()), a HOST
 * one is -EINVAL at submit, except for kernels that use no tensor address
 * (noop, spin_ns, fault, hang: their tensors only order tasks). Tensors
 * map onto the kernel's a / b / out slots in order, except that the last
 * written tensor (OUTPUT, INOUT, OUTPUT_EXISTING) is `out`.
 *
 * Checked at dispatch, not at submit (the submit succeeds; the task then
 * fails, its consumers are poisoned and the run's wait returns the error
 * with pto_run_error() naming it): more than two scalars (-E2BIG); for
 * kernels that use tensor addresses, more than three tensors or more than
 * two inputs (-E2BIG), a tensor whose nbytes is not a whole number of
 * 4-byte elements or whose rank exceeds PTO_TENSOR_MAX_RANK (-EINVAL);
 * a kernel_id above UINT32_MAX (-EINVAL).
 */
#ifndef PTO_SCHED_H
#define PTO_SCHED_H

#include <stdint.h>
#include <pto/common.h>
#include <pto/orch.h>
#include <pto/pto.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A GM tensor: @nbytes at @offset of buffer @bo, which the caller mapped at
 * @map (pto_bo_map). Its dependency key is (GM, buffer address, offset),
 * so every view of the same bytes collides. @dtype is PTO_DTYPE_* (linux/pto.h).
 * It is tagged with @bo's device (pto_tensor.dev): an orchestrator on
 * another device refuses it at submit (-EXDEV).
 */
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

/* An OUTPUT the orchestrator allocates in GM (from the scope's ring); it
 * gets the orchestrator's device tag. The tensor written back into the
 * args is the heap's: on the in-process orchestrator a HOST one. */
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
	uint64_t reserved[6];	/* 0 */
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
	uint64_t reserved[9];	/* 0 */
};

/*
 * Create an orchestrator on @dev (which must outlive it). @ocfg may be
 * NULL; its workers are ignored (the cores are the workers) and its
 * heap_ring_size defaults to 16 MiB of GM per ring.
 * The first orchestrator created in a process performs the fork hygiene
 * of pto_orch_create_inproc(): it sets OMP_NUM_THREADS,
 * OPENBLAS_NUM_THREADS, MKL_NUM_THREADS and BLIS_NUM_THREADS to 1 unless
 * already set (setenv with overwrite = 0).
 * Thread safety: any thread, but the first create in a process calls
 * setenv(), which must not run concurrently with getenv(), setenv() or
 * anything else reading the environment in another thread (pto/orch.h).
 * @dev may be shared, but partitions start at cluster 0: while one
 * orchestrator holds its clusters, another on the same device - through
 * this handle or another - is -EBUSY.
 * -EINVAL, before anything is taken, for a non-zero reserved word in
 * @ocfg or @scfg (@ocfg's workers are not read), an @ocfg task_window
 * above PTO_MAX_TASK_WINDOW or an @scfg clusters above the device's
 * (pto_dev_info()) or above 64; there is no orchestrator to hold a
 * message, the errno alone says it.
 * -EOPNOTSUPP, before anything is taken, when the driver has no cores to
 * launch (PTO_CAP_CORES) or is older than ABI 1.3 (pto_dev_open() checks
 * the major only); -ECHILD in a forked child of the device's opener
 * (pto/pto.h).
 */
PTO_API int pto_orch_create_device(struct pto_dev *dev,
				   const struct pto_orch_config *ocfg,
				   const struct pto_sched_config *scfg,
				   pto_orch **out);

/* Counters summed over the scheduler threads; -EINVAL (all zero) on an
 * orchestrator that is not on a device. @o and @st must not be NULL
 * (pto/orch.h, "NULL"). Thread safety: any thread. */
PTO_API int pto_orch_sched_stats(pto_orch *o, struct pto_sched_stats *st);

#ifdef __cplusplus
}
#endif
#endif
