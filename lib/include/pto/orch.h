/* SPDX-License-Identifier: MIT */
/*
 * pto/orch.h - the orchestrator: build a DAG of tasks with submit calls,
 * let the runtime infer dependencies from tensor tags, run it on workers.
 * The model, errors, NULL, thread safety and fork(): libpto(7); each
 * call's contract: its man page, e.g. pto_run_start(3).
 */
#ifndef PTO_ORCH_H
#define PTO_ORCH_H

#include <stddef.h>
#include <stdint.h>
#include <linux/pto.h>
#include <pto/common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pto_orch pto_orch;
typedef struct pto_run pto_run;

/* ---- tensors and tags --------------------------------------------------- */

enum pto_tag {
	PTO_INPUT = 0,		/* lookup: RAW edge on the current producer */
	PTO_OUTPUT,		/* insert; data == 0 means "allocate for me" */
	PTO_INOUT,		/* lookup + insert (RAW + WAW) */
	PTO_OUTPUT_EXISTING,	/* insert only; never auto-allocated */
	PTO_NO_DEP,		/* neither */
	PTO_TAG_NR,
};

/*
 * Address spaces of a tensor's dependency key. A HOST tensor's key is its
 * address. Any other space keys on (space, obj, offset): a device GM tensor
 * names its buffer object and the offset inside it, so two views of one GM
 * byte collide whatever host address maps them.
 */
enum pto_space {
	PTO_SPACE_HOST = 0,
	PTO_SPACE_GM = 1,
	PTO_SPACE_NR,
};

struct pto_tensor {
	uint64_t data;		/* host-visible address; 0 + OUTPUT: auto-alloc */
	uint64_t nbytes;	/* size; used by auto-allocation */
	uint64_t obj;		/* buffer object id (non-HOST spaces) */
	uint64_t offset;	/* offset in obj (non-HOST spaces) */
	uint32_t space;		/* enum pto_space */
	uint32_t dtype;		/* opaque to the orchestrator */
	/*
	 * Layout for device kernels, opaque to the orchestrator: rank 0 is
	 * a 1-D contiguous run of nbytes / element size elements; otherwise
	 * shape[] in elements and strides[] in elements between neighbours
	 * (0: contiguous, row-major). Not part of the dependency key.
	 */
	uint32_t rank;
	uint32_t shape[4];
	/*
	 * Device tag of a GM tensor: the device's index + 1 (pto_bo_dev_tag(),
	 * set by pto_tensor_gm()); 0 is untagged and accepted unchecked. A
	 * device orchestrator refuses another device's tensor (-EXDEV). Not
	 * part of the dependency key: a tagged and an untagged view of one
	 * buffer are one key (pto_tensor_gm(3)).
	 */
	uint32_t dev;
	uint64_t strides[4];
};

/* A HOST tensor of @nbytes at @p. Member by member, not designated
 * initializers: the header is also C++ (before C++20, which has none). */
static inline struct pto_tensor pto_tensor_host(void *p, uint64_t nbytes)
{
	struct pto_tensor t = PTO_ZERO_INIT;

	t.data = (uint64_t)(uintptr_t)p;
	t.nbytes = nbytes;
	t.space = PTO_SPACE_HOST;
	return t;
}

/*
 * One tensor argument as the slot keeps it: tag consumed at submit.
 * pto_args_add_tensor() fills it; one built by hand leaves @pad zero
 * (submit refuses anything else: -EINVAL, nothing claimed).
 */
struct pto_arg_tensor {
	struct pto_tensor t;
	uint8_t tag;		/* enum pto_tag, as submitted */
	uint8_t dump;		/* dump mark (pto_args_set_dump) */
	uint8_t pad[6];		/* 0 */
};

/*
 * A run-scoped task handle. Valid only while building the run that
 * returned it; naming it from another run is a submit-time error.
 * Fields are opaque to callers: @slot is a check word of the run and
 * task id, and a handle submit did not write (a stale or forged one, or
 * its @pad set) is refused when named in a dep (-EINVAL), never taken
 * as a satisfied dependency.
 */
struct pto_task {
	uint64_t run_id;
	uint64_t task_id;
	uint32_t slot;
	uint32_t pad;		/* 0 */
};

/*
 * One explicit dependency: an element of pto_task_args.deps, filled by
 * pto_args_add_dep() / pto_args_add_dep_wait(). A program that builds one
 * by hand sets @retain to 0 or 1 and @reserved to zero: anything else is
 * refused at submit (-EINVAL, pto_orch_error() naming the dep and the
 * field, nothing claimed).
 */
struct pto_dep {
	struct pto_task h;
	uint8_t retain;		/* add_dep = 1, add_dep_wait = 0 */
	uint8_t reserved[7];	/* 0 */
};

/*
 * Task arguments, built by the caller and copied into the slot by submit
 * (the caller keeps ownership and may reuse it). No fixed caps.
 * Thread safety: an args object belongs to one thread at a time.
 */
struct pto_task_args {
	struct pto_arg_tensor *tensors;
	uint64_t *scalars;
	uint8_t *scalar_dump;
	struct pto_dep *deps;
	uint32_t ntensors, cap_tensors;
	uint32_t nscalars, cap_scalars;
	uint32_t ndeps, cap_deps;
};

PTO_API void pto_args_init(struct pto_task_args *a);
/* Forget the contents, keep the capacity. */
PTO_API void pto_args_reset(struct pto_task_args *a);
PTO_API void pto_args_fini(struct pto_task_args *a);
/* Returns the tensor's index, or -ENOMEM / -EINVAL (bad tag or space). */
PTO_API int pto_args_add_tensor(struct pto_task_args *a,
				const struct pto_tensor *t, enum pto_tag tag);
PTO_API int pto_args_add_scalar(struct pto_task_args *a, uint64_t v);
/* add_dep: edge + retention; add_dep_wait: ordering only. Any order
 * relative to tensors; duplicates collapse at submit (retain wins). */
PTO_API int pto_args_add_dep(struct pto_task_args *a, struct pto_task h);
PTO_API int pto_args_add_dep_wait(struct pto_task_args *a, struct pto_task h);
/* Mark tensor (is_scalar = 0) or scalar @idx for the args dump
 * (pto_orch_dump_args); -EINVAL for an index not added yet. */
PTO_API int pto_args_set_dump(struct pto_task_args *a, int is_scalar,
			      uint32_t idx, uint8_t mark);

/* ---- callables and placement ------------------------------------------ */

struct pto_task_ctx {
	const struct pto_arg_tensor *tensors;	/* data filled for auto-alloc */
	const uint64_t *scalars;
	uint32_t ntensors, nscalars;
	uint32_t member, nmembers;	/* group member index / group size */
	int32_t worker_id;		/* stable id of the executing worker */
	uint32_t pad;
	uint64_t task_id;
	void *user;			/* pto_callable.user */
	char *errmsg;			/* a failing task may write a reason */
	size_t errmsg_len;
};

/* Returns 0 or a negative errno; a failure fails the task (and poisons
 * its consumers), with ctx->errmsg as the reason. */
typedef int (*pto_kernel_fn)(struct pto_task_ctx *ctx);

/*
 * What a task runs. An orchestrator whose workers run host callbacks -
 * the in-process one, every worker whatever its kind - calls @fn:
 * submitting a callable whose @fn is NULL to it is -EINVAL with a
 * pto_orch_error() message, whatever the submit, and nothing is claimed.
 * A device orchestrator's AIC / AIV / MIX workers run kernel @kernel_id
 * instead and never call @fn, which may then be NULL; its SUB workers
 * call @fn (a SUB task without one is -EINVAL).
 */
struct pto_callable {
	pto_kernel_fn fn;	/* host callback (in-process, SUB workers) */
	void *user;
	uint64_t kernel_id;	/* device kernel identity (device backend) */
};

/*
 * Per-call configuration; NULL for the defaults. Zero-initialise it: @flags
 * within PTO_CALL_FLAGS_VALID, @reserved0 and @reserved zero, else -EINVAL
 * (pto_submit_next_level(3)). Layout: tests/abi-layout.c.
 */
struct pto_call_config {
	uint32_t reserved0;	/* 0 */
	uint32_t flags;		/* PTO_CALL_FLAGS_VALID */
	uint64_t reserved[3];	/* 0 */
};

#define PTO_CALL_FLAGS_VALID 0u

/* A worker's kind; 0 names no kind. AIC and AIV are the core types. */
enum pto_worker_kind {
	PTO_WORKER_AIC = PTO_CORE_AIC,	/* 1 */
	PTO_WORKER_AIV = PTO_CORE_AIV,	/* 2 */
	PTO_WORKER_MIX = 3,	/* a cluster: 1 AIC + 2 AIV started together */
	PTO_WORKER_SUB = 4,	/* host thread running C callbacks */
};

/*
 * One worker of an in-process orchestrator (pto_orch_config.workers).
 * Zero-initialise it: @reserved must be zero, else the create is -EINVAL.
 * A field added later takes reserved space; its zero is its default
 * (today's behaviour).
 */
struct pto_worker_desc {
	int32_t id;		/* stable id, unique, >= 0 */
	uint32_t kind;		/* enum pto_worker_kind */
	uint64_t reserved[3];	/* 0 */
};

/* Placement of a next-level task: an exact stable worker id, or any
 * worker of a kind (worker_id = -1). */
struct pto_target {
	int32_t worker_id;
	uint32_t kind;
};

static inline struct pto_target pto_on_worker(int32_t id)
{
	struct pto_target t = { id, 0 };	/* kind 0: none, the id decides */
	return t;
}

static inline struct pto_target pto_on_kind(enum pto_worker_kind k)
{
	struct pto_target t = { -1, (uint32_t)k };
	return t;
}

/* ---- orchestrator ------------------------------------------------------ */

#define PTO_MAX_RING_DEPTH 4
/* The largest pto_orch_config.task_window hint (2^30 - 1); a larger one
 * is refused at create. */
#define PTO_MAX_TASK_WINDOW (0xffffffffu / PTO_MAX_RING_DEPTH)
#define PTO_MAX_SCOPE_DEPTH 64	/* user scopes on top of the outer scope */
#define PTO_HEAP_ALIGN 1024

/*
 * Orchestrator configuration; the pointer may be NULL (all defaults), and
 * every field's zero is its default. Zero-initialise the struct (a
 * designated initialiser or = PTO_ZERO_INIT does): @reserved must be
 * zero, else the create is -EINVAL before anything is set up. A field
 * added later takes reserved space and its zero keeps today's behaviour,
 * so a program built now runs unchanged against a later libpto.so.1.
 * Layout checked by the abi tier (tests/abi-layout.c).
 */
struct pto_orch_config {
	uint64_t heap_ring_size;	/* bytes per ring; 0: 1 GiB (lazy) */
	uint32_t task_window;		/* sizing hint, not a limit: live
					 * slots expected per ring; 0: 4096;
					 * at most PTO_MAX_TASK_WINDOW */
	uint32_t timeout_ms;		/* heap back-pressure timeout, from
					 * the last progress; 0: 10 s */
	uint32_t run_depth;		/* pipelined runs; 0: 2 */
	uint32_t nworkers;		/* 0: 2 workers, ids 0,1, kind SUB */
	const struct pto_worker_desc *workers;
	uint64_t trace_bytes;		/* run trace per recording thread,
					 * in bytes; 0: off */
	uint64_t reserved[11];		/* 0 */
};

/* Create an orchestrator on the in-process backend (a thread per worker,
 * running host callbacks); @cfg may be NULL. The first create in a
 * process setenv()s thread-pool variables: see the man page. */
PTO_API int pto_orch_create_inproc(const struct pto_orch_config *cfg,
				   pto_orch **out);

/* Refuse new runs, drain every run and stop the workers within
 * @budget_ms (-ETIMEDOUT: retry). Any thread, also beside an abort. */
PTO_API int pto_orch_close(pto_orch *o, uint32_t budget_ms);

/* Fail every run in flight (a device's cores stop their tasks) and wait
 * up to @budget_ms for them to end; -EOPNOTSUPP in-process. */
PTO_API int pto_orch_abort(pto_orch *o, uint32_t budget_ms);

/* Free everything: after a successful pto_orch_close() and every run
 * handle released, else -EBUSY. NULL: returns 0. */
PTO_API int pto_orch_destroy(pto_orch *o);

/* Write the run trace recorded so far (Chrome trace-event JSON) to
 * @path; when no run is in flight. -ENODATA if tracing is off. */
PTO_API int pto_orch_trace_write(pto_orch *o, const char *path);

/* Record the runs started from now on (@on 1, as at create with
 * trace_bytes) or not (0); -ENODATA without trace_bytes. Orch thread. */
PTO_API int pto_orch_trace_enable(pto_orch *o, int on);

/* The last graph-construction error message of @o ("" when none); orch
 * thread. */
PTO_API const char *pto_orch_error(const pto_orch *o);

/* ---- runs ------------------------------------------------------------- */

/* An orchestration function: submits the DAG; returns 0 or -errno. */
typedef int (*pto_orch_fn)(pto_orch *o, void *arg);

/* Start a run: call @fn to build its DAG and return its handle, maybe
 * before the work finishes; a construction error is returned with *out
 * still set. Serialized per orchestrator by the caller. */
PTO_API int pto_run_start(pto_orch *o, pto_orch_fn fn, void *arg,
			  pto_run **out);

/* pto_run_start() + pto_run_wait(no timeout) + pto_run_release(): the
 * construction error or the run's status. */
PTO_API int pto_orch_run(pto_orch *o, pto_orch_fn fn, void *arg);

/* Run calls: any thread, but pto_run_release() with no other call on
 * the handle in flight or to follow. */
PTO_API int pto_run_done(pto_run *r);	/* 1 when terminal */
/* 1 once every task of the run was dispatched (or failed without running). */
PTO_API int pto_run_accepted(pto_run *r);
PTO_API int pto_run_wait_accepted(pto_run *r, int64_t timeout_ms);
/* Wait for the completion fence; timeout_ms < 0: forever. Returns the
 * run's terminal status (0 or -errno) or -ETIMEDOUT; a timed-out wait does
 * not cancel the run and repeated waits replay the same status. */
PTO_API int pto_run_wait(pto_run *r, int64_t timeout_ms);
/* Terminal status (0 / -errno), -EBUSY if not done yet. */
PTO_API int pto_run_result(pto_run *r);
/* First error message of the run, "" if none. Stable once done; valid
 * until pto_run_release(). */
PTO_API const char *pto_run_error(pto_run *r);
PTO_API uint64_t pto_run_id(const pto_run *r);
/* Drop the caller's reference; the run finishes on its own. Not
 * concurrently with another call on @r (above); NULL: does nothing. */
PTO_API void pto_run_release(pto_run *r);

/* ---- inside an orchestration function (orch thread only) -------------- */

/*
 * Every call below: on the orch thread of the run being built, 0 or a
 * negative errno with pto_orch_error() set; after an error the run is
 * doomed. @cfg and *out may be NULL.
 */

/* A task on worker pto_on_worker(id), or any worker pto_on_kind(K). */
PTO_API int pto_submit_next_level(pto_orch *o, const struct pto_callable *c,
				  struct pto_task_args *args,
				  const struct pto_call_config *cfg,
				  struct pto_target target, struct pto_task *out);
/* One DAG node of @n members, member i on worker_ids[i] (unique, existing),
 * started all-or-nothing when every target is idle. */
PTO_API int pto_submit_next_level_group(pto_orch *o,
					const struct pto_callable *c,
					struct pto_task_args *const *args,
					uint32_t n, const struct pto_call_config *cfg,
					const int32_t *worker_ids,
					struct pto_task *out);
/* SPMD: @nblocks blocks of one task, all with @args (ctx->member is the
 * block index), on any workers of @kind, started as workers free up. */
PTO_API int pto_submit_spmd(pto_orch *o, const struct pto_callable *c,
			    struct pto_task_args *args,
			    const struct pto_call_config *cfg,
			    enum pto_worker_kind kind, uint32_t nblocks,
			    struct pto_task *out);
/* Host callback on any SUB worker (shared SUB FIFO). */
PTO_API int pto_submit_sub(pto_orch *o, const struct pto_callable *c,
			   struct pto_task_args *args, struct pto_task *out);
/* @n members on SUB workers; members start as SUB workers free up, the
 * node completes when every member has finished. */
PTO_API int pto_submit_sub_group(pto_orch *o, const struct pto_callable *c,
				 struct pto_task_args *const *args, uint32_t n,
				 struct pto_task *out);
/* A runtime-owned buffer of @nbytes (1024-aligned) from the current
 * scope's heap ring, with a completed task's @handle. */
PTO_API int pto_alloc(pto_orch *o, uint64_t nbytes, struct pto_tensor *out,
		      struct pto_task *handle);
/* Nested scopes: at most PTO_MAX_SCOPE_DEPTH on top of the outer scope.
 * scope_end never blocks. */
PTO_API int pto_scope_begin(pto_orch *o);
PTO_API int pto_scope_end(pto_orch *o);

#ifdef __cplusplus
}
#endif
#endif
