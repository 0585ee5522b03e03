/* SPDX-License-Identifier: MIT */
/*
 * pto/orch.h - the orchestrator: build a DAG of tasks with submit calls,
 * let the runtime infer dependencies from tensor tags, run it on workers.
 *
 * Model (seed 001): an orchestrator owns a set of workers (stable id + kind),
 * four heap rings, a TensorMap and a scope stack. A *run* is one invocation
 * of a user orchestration function; inside it, submit calls add tasks.
 * Dependencies come from tensor tags (RAW / WAW through the TensorMap) and
 * from explicit handles (add_dep retains the producer, add_dep_wait only
 * orders). Runs are pipelined: pto_run_start() returns a run handle before the
 * work finishes; wait on it, or use pto_orch_run() for the blocking form.
 *
 * Errors: every call returns 0 / a non-negative value or a negative errno.
 * Where the seed wants a message, pto_orch_error() (graph construction, on
 * the orchestration thread) or pto_run_error() (execution) holds it.
 *
 * NULL: pto_orch_destroy() (returns 0) and pto_run_release() accept a
 * NULL object and do nothing, as free() does. No other call accepts a
 * NULL orchestrator, run handle, args object (the pto_args_*() calls) or
 * result pointer (the creates' and pto_run_start()'s @out): none is
 * checked, and a NULL one crashes - pto_orch_close(), pto_orch_error(),
 * pto_run_wait() and pto_orch_sched_stats() included. The other pointers
 * are checked: a NULL config is all defaults (creates, submits), a NULL
 * struct pto_task out-pointer wants no handle (submits, pto_alloc()), and
 * a submit's NULL callable, args or worker_ids, pto_run_start()'s NULL @fn
 * and pto_alloc()'s NULL @out are -EINVAL with a pto_orch_error()
 * message.
 *
 * Thread safety, in one place (each call repeats it):
 *  - "orch thread": the thread running the orchestration function of the
 *    run being built. Submit, alloc, scope and args calls on a given
 *    orchestrator are single-threaded by contract (seed §9 invariant 1).
 *  - pto_run_start() / pto_orch_run(): serialized per orchestrator by the
 *    caller (one run is built at a time); concurrent callers are not
 *    supported.
 *  - pto_run_*(): any thread, concurrently with everything - except
 *    pto_run_release(), which ends the handle: it may not run while
 *    another call on the same handle is in flight (below).
 *  - pto_orch_close(), pto_orch_abort(): any thread, concurrently with
 *    each other and with themselves (a watchdog thread aborting while
 *    the program's own close keeps timing out, two aborts, two closes;
 *    inside one of the orchestrator's own orchestration functions:
 *    -EDEADLK); pto_orch_destroy(): once, after a close succeeded and
 *    every close and abort call on any thread has returned.
 *  - Host callbacks (struct pto_task_ctx) run on the orchestrator's worker
 *    threads. From there, on the same orchestrator, pto_orch_close(),
 *    pto_orch_abort(), pto_orch_destroy(), pto_run_start() and
 *    pto_orch_run() return -EDEADLK at once and change nothing, and so
 *    do pto_run_wait() and pto_run_wait_accepted() on one of its runs
 *    that has not reached what they wait for: each would wait for the
 *    callback's own run (or a run queued behind it), or join the thread
 *    it runs on. A wait on a run
 *    already done (accepted) returns as anywhere; the other pto_run_*()
 *    calls (polls) and another orchestrator's calls are allowed.
 *
 * fork(): a child may not use an orchestrator created by its parent (its
 * worker and scheduler threads are not in the child, a lock may be a copy
 * of one such a thread held at the fork, and a device orchestrator's
 * objects are the parent's, through the shared file). In a process other
 * than the creator, these calls return -ECHILD and do nothing at all (no
 * ioctl, no join, no lock): pto_orch_close(), pto_orch_abort(),
 * pto_orch_destroy(), pto_run_start(), pto_orch_run(), pto_run_wait(),
 * pto_run_wait_accepted(), pto_run_done(), pto_run_accepted() and
 * pto_run_result(), and the calls an orchestration function makes (the
 * submits, pto_alloc(), pto_scope_begin(), pto_scope_end()) in a child
 * forked inside one (the run being built is a copy, a lock held at the
 * fork stays held in it; a submit's check costs one load of a flag where
 * no fork happened); pto_run_release() is a no-op and pto_run_error()
 * returns a fixed message. The child's copy is released when it exits or
 * execs, the parent's orchestrator and runs are untouched. Device
 * handles: pto/pto.h.
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
	 * Device tag of a GM tensor: which device's GM @obj and @offset
	 * address (device addresses repeat from one /dev/ptoN to the next).
	 * The device's index + 1 (pto_bo_dev_tag(); pto_tensor_gm() sets
	 * it). An orchestrator on a device refuses, at submit, a GM tensor
	 * tagged with another device (-EXDEV); the in-process one takes any.
	 * 0: untagged, accepted unchecked, so a program built when this
	 * field was padding (or a hand-built tensor) runs as before.
	 * Auto-allocated OUTPUTs and pto_alloc() get the orchestrator's own
	 * device. Not part of the dependency key: a tagged and an untagged
	 * view of one buffer are one key (on the in-process orchestrator,
	 * two devices' buffers at one device address are too: extra
	 * ordering, never a lost one).
	 */
	uint32_t dev;
	uint64_t strides[4];
};

/* Member by member, not designated initializers: the header is also C++
 * (before C++20, which has none). */
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
	uint8_t dump;		/* dump mark: stored, not read yet
				 * (pto_args_set_dump) */
	uint8_t pad[6];		/* 0 */
};

/*
 * A run-scoped task handle. Valid only while building the run that
 * returned it; naming it from another run is a submit-time error.
 * Fields are opaque to callers: a handle submit did not write (its @pad,
 * which submit writes 0, set) is refused when named in a dep.
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
/*
 * Mark tensor (is_scalar = 0) or scalar (is_scalar = 1) @idx for dump;
 * -EINVAL for an index not added yet. The marks are stored, copied into
 * the task's slot by submit and shown to the backend in its dispatch
 * view, but nothing reads them yet: the args dump that would capture the
 * marked arguments (seed 000) is future work, so a mark changes nothing
 * today.
 */
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
 * The workers of a device orchestrator (AIC / AIV / MIX; it has no SUB
 * workers) run kernel @kernel_id instead and never call @fn, which may
 * then be NULL.
 */
struct pto_callable {
	pto_kernel_fn fn;	/* host callback (in-process orchestrator) */
	void *user;
	uint64_t kernel_id;	/* device kernel identity (device backend) */
};

/*
 * Per-call configuration; the pointer may be NULL (all defaults).
 * Zero-initialise it (a designated initialiser or = PTO_ZERO_INIT does):
 * @flags must be a subset of PTO_CALL_FLAGS_VALID (none defined yet) and
 * @reserved0 and @reserved must be zero, else the submit is -EINVAL with
 * pto_orch_error() naming the word. A field added later takes reserved
 * space, and its zero means what this library does today (its default),
 * so a program built now keeps its behaviour. Layout checked by the abi
 * tier (tests/abi-layout.c). (@reserved0 was a block_dim no backend
 * read: an SPMD task's width is pto_submit_spmd()'s @nblocks.)
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
/*
 * The largest pto_orch_config.task_window: a slot's index (ring * window
 * + position, and a struct pto_task's slot) is 32 bits, and must not wrap
 * over the PTO_MAX_RING_DEPTH rings. 2^30 - 1.
 */
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
	uint32_t task_window;		/* slots per ring; 0: 4096; at most
					 * PTO_MAX_TASK_WINDOW */
	uint32_t timeout_ms;		/* back-pressure timeout; 0: 10 s */
	uint32_t run_depth;		/* pipelined runs; 0: 2 */
	uint32_t nworkers;		/* 0: 2 workers, ids 0,1, kind SUB */
	const struct pto_worker_desc *workers;
	uint64_t reserved[12];		/* 0 */
};

/*
 * Create an orchestrator on the in-process backend: one thread per worker
 * running the callables' host callbacks; heap rings are
 * mmap(MAP_SHARED | MAP_ANONYMOUS) regions taken here, before any fork.
 * The first orchestrator created in a process (this call or
 * pto_orch_create_device()) also performs the once-per-process fork
 * hygiene: setenv(name, "1", 0) of OMP_NUM_THREADS, OPENBLAS_NUM_THREADS,
 * MKL_NUM_THREADS and BLIS_NUM_THREADS (a value already set is kept), so
 * that thread pools of libraries initialised later start single-threaded
 * and a fork inherits no pool threads; and a pthread_atfork()
 * registration.
 * On failure *out is NULL; there is no orchestrator to hold a message, the
 * errno alone says what failed. -EINVAL, refused before anything is set
 * up (fork hygiene included, and no thread or membarrier registration):
 * a non-zero reserved word in @cfg or in a worker; a task_window above
 * PTO_MAX_TASK_WINDOW; a bad worker set (nworkers without workers, an id
 * below 0, a kind not in enum pto_worker_kind, an id given twice).
 * Thread safety: any thread, but the first create in a process calls
 * setenv(), which must not run concurrently with getenv(), setenv(),
 * putenv() or anything else reading the environment (localtime(), locale
 * code) in another thread: make the first create before starting such
 * threads (setting all four variables first leaves glibc's environment
 * untouched).
 */
PTO_API int pto_orch_create_inproc(const struct pto_orch_config *cfg,
				   pto_orch **out);

/*
 * Reject new submissions, settle any cancellation left pending by a failed
 * run, then drain every accepted run and stop the workers, all within
 * @budget_ms (on a device orchestrator, stopping includes each scheduler
 * thread's retirement of its cores: pto/sched.h). Returns 0 when drained
 * and stopped, or -ETIMEDOUT: close() may be retried, but the
 * orchestrator stays closing: new submissions are still refused
 * (-ESHUTDOWN). A drain that timed out tore nothing down (runs go on).
 * The stop is given what is left of the budget but at least 1 s (so an
 * idle orchestrator closes with a budget of 0: retiring cores that
 * answer takes a moment); a stop that timed out had every run done, and
 * a device core was still not answering its retirement (the driver
 * quarantines it at its own deadline, the retire_timeout_ms module
 * parameter, 30 s by default; a retry that outlasts it succeeds and
 * pto_orch_sched_stats() counts the core as quarantined). From inside one
 * of this
 * orchestrator's orchestration functions it is -EDEADLK at once (the run
 * being built cannot drain) and changes nothing; from a host callback of
 * this orchestrator, the same (see the top). Sets no message
 * (pto_orch_error() belongs to the orch thread, and close may run on
 * another). In a forked child: -ECHILD, nothing done (see the top).
 * @o must not be NULL.
 * Thread safety: any thread, concurrently with itself and with
 * pto_orch_abort(): each settles, drains and waits within its own
 * budget; one stops the workers at a time (another close that gets
 * there meanwhile waits for that stop within its budget: 0 once it
 * succeeded, -ETIMEDOUT if it is still going; it takes the stop over if
 * that one timed out), and a close that returns 0 leaves every other
 * call returning 0.
 */
PTO_API int pto_orch_close(pto_orch *o, uint32_t budget_ms);

/*
 * Give up on the work in flight, for an orchestrator that cannot be
 * closed because a task does not finish (a hung device kernel: close
 * keeps returning -ETIMEDOUT). Makes the orchestrator closing, as close
 * does (new submissions: -ESHUTDOWN), then ends every run, failed:
 *  - on a device orchestrator, each scheduler thread retires its own
 *    cores at once, through the driver's retirement (the same one it
 *    makes at close, which it then skips): a running task stops within
 *    a chunk of its kernel, a core that does not answer is quarantined
 *    at the driver's retire_timeout_ms (30 s by default; the abort
 *    waits for it: pto_orch_sched_stats() counts it). A task a core
 *    completed before the stop ends with its own status; a stopped one
 *    fails, and every task not started yet (unstarted tasks, a run still
 *    being built) fails without running, both with -ECANCELED and a
 *    pto_run_error() starting "orchestrator aborted (pto_orch_abort)"
 *    (a quarantined core's tasks: its own status is not to be trusted,
 *    they end as stopped). Consumers of a
 *    failed task are poisoned as after any task failure, so each run's
 *    wait returns -ECANCELED (or an earlier error of the run). The
 *    cores stay the orchestrator's until destroy releases them; the
 *    device and its other users are not affected. A run still being
 *    built (its orchestration function running on another thread)
 *    takes no further task: its next submit or pto_alloc() returns
 *    -ECANCELED at once, with "orchestrator aborted (pto_orch_abort):
 *    submit to run N refused" in pto_orch_error(), and that is the
 *    run's construction error (pto_run_start() returns it, its unstarted
 *    tasks are cancelled); a submit waiting on back-pressure at the
 *    abort returns the same way ("... submit refused while it waited
 *    for ring R"). What it submitted before fails as above, and so does
 *    the task of a submit already past those checks.
 *  - on the in-process backend: -EOPNOTSUPP at once, nothing done (a
 *    host callback cannot be interrupted).
 * Waits up to @budget_ms for every run to end: 0 once they have (a
 * pto_orch_close() then succeeds, with its own budget for the stop), or
 * -ETIMEDOUT (a core's retirement still waiting for the driver's
 * deadline, or a run still being built: its orchestration function has
 * not returned; the abort goes on: call it, or close, again). 0 at once on
 * a closed orchestrator. -EDEADLK from inside one of this orchestrator's
 * orchestration functions or host callbacks, -ECHILD in a forked child:
 * nothing done (see the top). Sets no message. @o must not be NULL.
 * Thread safety: any thread, concurrently with itself and with
 * pto_orch_close() - e.g. a watchdog thread that aborts while another
 * thread's close keeps returning -ETIMEDOUT: that close then returns 0
 * once the runs have ended and the workers stopped. Every run ends
 * once, whichever call's drain sees it, and a task is ended by its
 * scheduler thread only, so two aborts end nothing twice: the second
 * only waits. A close may stop the workers (and return 0) before an
 * abort on another thread returns; destroy only after both returned.
 */
PTO_API int pto_orch_abort(pto_orch *o, uint32_t budget_ms);

/* Free everything. Requires a successful pto_orch_close() and every run
 * handle released (pto_run_release()); returns -EBUSY otherwise, freeing
 * nothing: release the handles and call it again. In a forked child:
 * -ECHILD, from a host callback of this orchestrator: -EDEADLK, nothing
 * freed (see the top). NULL: returns 0.
 * Thread safety: once, with no other call in flight (a close or abort
 * on another thread must have returned). */
PTO_API int pto_orch_destroy(pto_orch *o);

/* The last graph-construction error message of this orchestrator ("" when
 * none); @o must not be NULL (a failed create leaves none to ask: its
 * errno is all). Thread safety: orch thread. */
PTO_API const char *pto_orch_error(const pto_orch *o);

/* ---- runs ------------------------------------------------------------- */

/* An orchestration function: submits the DAG; returns 0 or -errno. */
typedef int (*pto_orch_fn)(pto_orch *o, void *arg);

/*
 * Begin a run (blocks while run_depth runs are in flight), open its outer
 * scope, call @fn, close the outer scope and the submission, and return a
 * handle before the work has necessarily finished. @arg is owned by the
 * caller and only used during this call: tasks see copies of their args,
 * and buffers named by tensors must stay valid until the run is done.
 *
 * A graph-construction error (a failing submit, @fn returning an error, a
 * scope left open) is returned synchronously after the run's unstarted
 * tasks are cancelled; *out is still set (its wait() reports the same error
 * once running tasks drained - or the first error, if a task of the run
 * had already failed) and must be released. pto_run_start() on the same
 * orchestrator from inside @fn is -EDEADLK; @fn returns 0 or a negative
 * errno (a positive value is taken as -EINVAL).
 * From a host callback of this orchestrator: -EDEADLK; in a forked child:
 * -ECHILD (see the top). Both leave *out NULL, call nothing and set no
 * message.
 * Thread safety: serialized per orchestrator by the caller.
 */
PTO_API int pto_run_start(pto_orch *o, pto_orch_fn fn, void *arg,
			  pto_run **out);

/* pto_run_start + pto_run_wait(no timeout) + pto_run_release; returns the
 * construction error or the run's status (-EDEADLK, -ECHILD: as
 * pto_run_start). Thread safety: as pto_run_start. */
PTO_API int pto_orch_run(pto_orch *o, pto_orch_fn fn, void *arg);

/*
 * All run calls: any thread, concurrently with each other and with
 * everything else - but for pto_run_release(). A handle carries one
 * reference, the caller's, and pto_run_release() drops it: the handle may
 * be freed before it returns. So no other call on the same handle may be
 * in flight or follow - pto_run_wait() blocked on another thread
 * included, which would then read freed memory: release after every
 * other user of the handle has returned (join or signal them first), and
 * once. @r must not be NULL, except for pto_run_release(). In a forked
 * child the int calls return -ECHILD, pto_run_release() does nothing; a
 * wait that would block, from a host callback of the run's orchestrator,
 * is -EDEADLK (see the top).
 */
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
 * Every call below: Thread safety: the orch thread of the run being built
 * (inside the orchestration function), never concurrently with another
 * call on the same orchestrator. Each returns 0 or a negative errno with
 * pto_orch_error() set; after an error the run is doomed (further submits
 * return -ECANCELED) and is cancelled when the function returns. Called
 * outside an orchestration function, each is -EINVAL. Submit
 * blocks only on ring back-pressure (then -ETIMEDOUT / -ESHUTDOWN).
 * @cfg may be NULL; a non-NULL one with unknown flags or a reserved word
 * set is -EINVAL (struct pto_call_config).
 * *out, when not NULL, receives the run-scoped handle. Auto-allocated
 * OUTPUTs are written back into @args, in the heap's space (in-process:
 * HOST, also when declared GM); name that tensor in later tasks.
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
/*
 * SPMD: @nblocks blocks of one task, all with @args (ctx->member is the
 * block index), on any workers of @kind. Blocks start independently as
 * workers free up (so @nblocks may exceed the worker count); the node
 * completes when every block has. Auto-allocated OUTPUTs are shared.
 */
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
/*
 * A runtime-owned buffer of @nbytes (1024-aligned) from the current
 * scope's heap ring, lifetime-tied to a synthetic COMPLETED slot. *out
 * describes it; a consumer that writes it and needs it kept alive tags it
 * INOUT. Blocks on ring pressure.
 */
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
