/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pto - internal definitions shared by the driver's files.
 *
 * Object lifetimes (leaf first on teardown):
 *   pto_device  module init .. module exit (exit runs only when no file is
 *               open, fops.owner pins the module)
 *   pto_file    open .. last kref put (the fd holds one reference)
 *   pto_bo      ALLOC .. last kref put (the file's handle holds one, every
 *               mmap holds one, so a mapping outlives FREE and close; a
 *               launched core holds one on its payload buffer and one per
 *               tensor of the task it runs, so FREE never pulls pages out
 *               from under a kernel)
 *   pto_core    device create .. device destroy (the thread exists for the
 *               device's lifetime; launch / stop only change its state)
 *
 * Lock order: mmap_lock -> pto_device.core_lock -> pto_device.win_lock ->
 * pto_file.lock -> pto_device.bos_lock; pto_core.launch_lock (spinlock) is
 * innermost and takes nothing. A window fault (under mmap_lock) takes only
 * win_lock, for reading: it never waits behind core_lock, which launch and
 * release hold across their bounded waits for the core threads. No user
 * memory is touched with core_lock or win_lock held. Retirement
 * (pto_retire.c) takes neither, but recovery (the reset, which holds
 * core_lock) takes win_lock to unquarantine a core.
 */
#ifndef _PTO_DRV_H_
#define _PTO_DRV_H_

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/maple_tree.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/xarray.h>
#include <linux/pto.h>

#define PTO_NAME "pto"
#define PTO_MAX_DEVICES 8
#define PTO_MAX_GM_MB 4096

/* PTO_GM_RESERVED (uapi): the low GM never handed out. */
/* Minimum allocation granule and alignment of the GM pool (2^10 = 1024). */
#define PTO_GM_MIN_ORDER 10

/* mmap offset space: buffer object N is at N << PTO_MMAP_BO_SHIFT. */
#define PTO_MMAP_BO_SHIFT 32

struct gen_pool;
struct dentry;
struct page;
struct task_struct;
struct address_space;
struct pto_file;

/**
 * struct pto_gm - a device's global memory address space.
 * @pool: genalloc pool over [PTO_GM_RESERVED, size); it serializes its own
 *        bitmap updates, so callers need no lock.
 * @size: bytes of GM including the reserved low range.
 */
struct pto_gm {
	struct gen_pool *pool;
	u64 size;
};

int pto_gm_init(struct pto_gm *gm, u64 size);
void pto_gm_fini(struct pto_gm *gm);
/* Returns a device address aligned to @align (>= 1024, power of 2) or 0. */
u64 pto_gm_alloc(struct pto_gm *gm, u64 size, u64 align);
void pto_gm_free(struct pto_gm *gm, u64 addr, u64 size);
u64 pto_gm_avail(struct pto_gm *gm);


/*
 * Kernel-only window page of a core (never mapped to user space): the
 * reference platform's FAST_PATH_ENABLE and the mock's control word.
 */
#define PTO_KREG_FAST_PATH_ENABLE 0x18
#define PTO_FAST_PATH_OPEN 0xE
#define PTO_FAST_PATH_CLOSE 0xF
#define PTO_KREG_CTRL 0x20
#define PTO_CTRL_RUN 0
/* EXIT: stop, echo the nonce in COND, wait for the teardown gate. */
#define PTO_CTRL_EXIT 1
/* The retirement request's nonce (PTO_COND_EXITED | n), set before EXIT. */
#define PTO_KREG_NONCE 0x24

/* Teardown gate values (struct pto_gate_line.gate). */
#define PTO_GATE_ARMED 0
#define PTO_GATE_RELEASE 1

/**
 * struct pto_worker_line - workers[i]: core i's handshake line in device
 * control memory. The core writes @phys_id, @core_type, @gen and then
 * @done (release); the launcher clears the line before a launch and writes
 * @payload. Nothing else shares the line.
 */
struct pto_worker_line {
	u32 phys_id;
	u32 core_type;
	u32 done;
	u32 gen;
	u64 payload[2];
	u8 rsvd[32];
} __aligned(64);

/**
 * struct pto_gate_line - teardown_gates[i]: core i's return gate, a 4-byte
 * cell alone in its 64-byte line (seed 003: never in a line the core
 * writes). Only the kernel's teardown writes @gate; the core only reads it.
 */
struct pto_gate_line {
	u32 gate;
	u32 rsvd[15];
} __aligned(64);

/* Bits of pto_core.flags. */
enum {
	PTO_CORE_F_LAUNCH,	/* launched; cleared by the core on return */
	PTO_CORE_F_DOORBELL,	/* a doorbell rang since the core parked */
	PTO_CORE_F_QUARANTINE,	/* missed retirement: not launched, mapped */
	PTO_CORE_F_STALL,	/* mock fault injection: ignore EXIT */
	PTO_CORE_F_BADID,	/* mock fault injection: bad handshake id */
};

/*
 * pto_core.rbits: the seed's two retirement ownership bits, reset by the
 * launch leader before the handshake (pto_retire_arm()). Set only with
 * atomic_fetch_or() (fully ordered); whichever operation adds the second
 * bit owns the core's retirement (Documentation/retirement.md).
 */
#define PTO_RB_READY 0x1	/* ownership + payload init published */
#define PTO_RB_REQUESTED 0x2	/* retirement requested */

/* Why a retirement ran (pto_core.r_reason, struct pto_retire_status). */
enum pto_retire_reason {
	PTO_RR_NONE = PTO_RETIRE_BY_NONE,
	PTO_RR_IOCTL = PTO_RETIRE_BY_IOCTL,
	PTO_RR_RELEASE = PTO_RETIRE_BY_RELEASE,
	PTO_RR_LAUNCH = PTO_RETIRE_BY_LAUNCH,
	PTO_RR_FATAL = PTO_RETIRE_BY_FATAL,
	PTO_RR_UNLOAD = PTO_RETIRE_BY_UNLOAD,
	PTO_RR_RESET = PTO_RETIRE_BY_RESET,
};

/* Window / gate writes of retirement, as the recording sink sees them. */
enum pto_rw {
	PTO_RW_NONCE,		/* request published (kernel-only NONCE) */
	PTO_RW_EXIT,		/* CTRL = EXIT */
	PTO_RW_IDLE,		/* DATA_MAIN_BASE = IDLE */
	PTO_RW_CLOSE,		/* FAST_PATH_ENABLE = CLOSE */
	PTO_RW_READBACK,	/* FAST_PATH_ENABLE read back */
	PTO_RW_DRAIN,		/* full barrier after the read-backs */
	PTO_RW_GATE,		/* teardown gate = RELEASE */
	PTO_RW_QUARANTINE,	/* F_QUARANTINE set: a reset may adopt it */
	PTO_RW_UNQUARANTINE,	/* recovery clears F_QUARANTINE next (win_lock) */
};

/**
 * struct pto_retire_ctx - one call of the retirement helper over one set.
 * @set:	cores this call owns (won the READY / REQUESTED election).
 * @acked:	cores of @set whose current response (the nonce) arrived.
 * @others:	cores another owner (or a pending publisher) retires: this
 *		call never writes to them, it only waits for their end.
 * @left:	cores quarantined by this call (no response, or left for
 *		recovery by the post-claim checks).
 * @recovery:	reset: the set's claims were consumed by an earlier owner.
 * @t0 / @elapsed: ktime of pass 1, and the set's time up to the gates.
 * @gen:	per core, the generation this call claimed or waits for: the
 *		end of that generation is what pto_retire_finish() waits for
 *		(a relaunch after the gate is a new generation, not a wait).
 */
struct pto_retire_ctx {
	struct pto_device *pdev;
	enum pto_retire_reason reason;
	bool recovery;
	DECLARE_BITMAP(set, PTO_MAX_CORES);
	DECLARE_BITMAP(acked, PTO_MAX_CORES);
	DECLARE_BITMAP(others, PTO_MAX_CORES);
	DECLARE_BITMAP(left, PTO_MAX_CORES);
	u64 t0;
	u64 elapsed;
	u32 gen[PTO_MAX_CORES];
};

/**
 * struct pto_task - the task a core runs, core-private (a copy of the
 * payload, so the owner rewriting GM cannot change it under the kernel).
 * @bo / @ptr: per tensor, the buffer object (a held reference) and the
 *        kernel address of element 0, filled in by validation.
 */
struct pto_task {
	u32 dispatch;
	u32 id;
	struct pto_payload p;
	struct pto_bo *bo[PTO_PAYLOAD_TENSORS];
	void *ptr[PTO_PAYLOAD_TENSORS];
};

/**
 * struct pto_core - one mock core (AIC or AIV) and its thread.
 * @wq:		the core thread sleeps here (launch, READY, doorbell, stop,
 *		gate); every waker sets its condition before wake_up().
 * @uregs:	the user window page (DATA_MAIN_BASE, COND, PARKED, WAKE_REQ),
 *		mapped into the owner; every word in it is untrusted.
 * @kregs:	the kernel-only page (FAST_PATH_ENABLE, CTRL).
 * @state:	PTO_CORE_*, written only by the core thread (WRITE_ONCE),
 *		read anywhere (READ_ONCE); waiters sleep on pdev->core_wq.
 * @flags:	PTO_CORE_F_* atomic bits.
 * @owner, @payload_bo, @payload_kaddr, @payload_addr, @notify: the launch
 *		(@notify: the launcher's eventfd for completion wake-ups, or
 *		NULL for the owner's poll()); written
 *		by the launcher under pdev->core_lock before READY is
 *		published, and cleared by the retirement owner (elected, the
 *		only writer) after the core echoed its nonce, under
 *		@launch_lock; the core reads them only between READY and its
 *		echo, where they are stable (plain reads). @owner is also read
 *		locklessly (READ_ONCE) by the doorbell's racy check, so every
 *		write of it is a WRITE_ONCE.
 * @last_cond:	the core's last COND value (its mirror): written by the core
 *		(release) and by the launcher before READY (WRITE_ONCE), read
 *		anywhere with READ_ONCE (CORE_STATS, debugfs, the nonce).
 * @nonce:	the retirement request (written by the retirement owner);
 *		the core echoes it in COND, in @last_cond and in @resp, the
 *		kernel-private response word retirement reads (the user
 *		page's COND is the owner's to forge; @resp is never reset,
 *		so a late poll still sees the echo).
 * @rbits:	PTO_RB_* ownership bits of the current generation.
 * @launch_lock: orders the launcher's @gen bump against a retirement
 *		owner clearing the launch fields of the generation it claimed.
 * @r_*:	the last retirement's record (debugfs, status ioctl), written
 *		by its owner before the gate; @r_pf / @r_bo / @r_gen are the
 *		claimed generation's launch references, held by the owner
 *		(and @r_notify).
 * @last_id:	the last dispatch value the core took (core thread only).
 * @task:	the running task (core thread only).
 */
struct pto_core {
	struct pto_device *pdev;
	unsigned int id;
	u32 type;
	struct task_struct *thread;
	wait_queue_head_t wq;
	struct page *upage;
	void *uregs;
	void *kregs;
	int state;
	unsigned long flags;
	u32 gen;

	struct pto_file *owner;
	struct pto_bo *payload_bo;
	void *payload_kaddr;
	u64 payload_addr;
	struct eventfd_ctx *notify;

	u32 nonce;
	u32 resp;
	u32 last_id;
	u32 last_cond;
	struct pto_task task;

	atomic_t rbits;
	spinlock_t launch_lock;
	struct pto_file *r_pf;
	struct pto_bo *r_bo;
	struct eventfd_ctx *r_notify;
	u32 r_gen;
	u32 r_result;
	u32 r_reason;
	u32 r_response;
	u64 r_core_ns;
	u64 r_set_ns;
	atomic64_t retirements;
	atomic64_t quarantines;

	atomic64_t tasks;
	atomic64_t errors;
	atomic64_t parks;
	atomic64_t dozes;
	atomic64_t doorbells;
	atomic64_t wakeups;
	atomic64_t launches;
};

/**
 * struct pto_device - one mock NPU, /dev/ptoN.
 * @bos_lock: protects @bos (every live buffer object, for debugfs; a
 *	buffer joins it complete, its handle set: pto_ioctl_bo_alloc()).
 * @core_lock: serializes acquire, release, launch, the retire ioctl's
 *	ownership check and the reset; protects every core's launch fields
 *	while launching (owner, payload, F_LAUNCH). Held across the bounded
 *	waits for the core threads (handshake 5 s, retirement deadline),
 *	never across user memory access, never taken by a window fault.
 *	The ioctls take it with mutex_lock_killable() (-EINTR, seen only by
 *	a task being killed), so a process waiting behind another file's
 *	deadline can still be killed; release, unload and debugfs wait.
 * @win_lock: protects @cluster_owner: written with both core_lock and
 *	win_lock (write) held, read with either. Window faults and mmap,
 *	CORE_STATS and debugfs take only win_lock (read), so they never wait
 *	behind a launch or a retirement. Release clears an owner and zaps the
 *	window mappings under win_lock (write): a fault either completed its
 *	PTE before (and the zap removes it) or sees the new owner.
 * @core_wq: launchers and stoppers wait here for core state changes.
 * @workers / @gates: device control memory, two separate arrays of
 *	64-byte lines in one zeroed page-aligned block (@ctrl_mem).
 * @rsink / @rsink_priv: KUnit's recording sink for retirement's window
 *	and gate writes (NULL outside tests).
 * @retire_ms: KUnit's retirement deadline override (0: the parameter).
 */
struct pto_device {
	unsigned int index;
	unsigned int clusters;
	unsigned int cores;
	unsigned int lanes;
	struct pto_gm gm;
	struct device *dev;
	struct dentry *debugfs;

	spinlock_t bos_lock;
	struct list_head bos;

	struct mutex core_lock;
	struct rw_semaphore win_lock;
	wait_queue_head_t core_wq;
	struct pto_file *cluster_owner[PTO_MAX_CLUSTERS];
	struct pto_core *core;
	void *ctrl_mem;
	struct pto_worker_line *workers;
	struct pto_gate_line *gates;
	void (*rsink)(void *priv, struct pto_core *core, enum pto_rw what,
		      u32 val);
	void *rsink_priv;
	unsigned int retire_ms;
};

/**
 * struct pto_file - per-open context.
 * @lock: protects @bos and @ranges together, so a handle and its address
 *        range are visible or invisible as one, and @next_handle.
 * @tgid: the opener's tgid as a struct pid, so CORE_STATS can report it in
 *        the asker's pid namespace (pid_vnr()); debugfs shows pid_nr().
 * @bos: handle -> struct pto_bo (the handle owns one bo reference).
 * @ranges: GM device address range -> struct pto_bo, the set of addresses
 *        this file may touch through the device (mock validation).
 * @mapping: the file's address space (window mappings are zapped in it);
 *        its inode is pinned for pf's life (a core quarantined under this
 *        file zaps in it after the close).
 * @poll_wq / @wakeups: completion wake-ups delivered by the file's cores;
 *        poll() is readable while @wakeups is non-zero, read() drains it.
 */
struct pto_file {
	struct kref ref;
	struct pto_device *pdev;
	struct pid *tgid;	/* the opener's thread group (a reference) */

	struct mutex lock;
	struct xarray bos;
	u32 next_handle;	/* cyclic: a freed handle is not reused soon */
	struct maple_tree ranges;

	struct address_space *mapping;
	wait_queue_head_t poll_wq;
	atomic64_t wakeups;
};

/**
 * struct pto_bo - a GM buffer object.
 * @vaddr: kernel mapping of the backing pages: __vmalloc(__GFP_ZERO), not
 *	vmalloc_user(), so the area has no VM_USERMAP and
 *	remap_vmalloc_range() would refuse it; mmap inserts the pages in
 *	batches (pto_bo_insert_pages()).
 * @node: entry in pto_device.bos.
 */
struct pto_bo {
	struct kref ref;
	struct pto_device *pdev;
	u64 dev_addr;
	u64 size;
	u64 flags;
	void *vaddr;
	u32 handle;
	pid_t owner;
	struct list_head node;
};

extern const struct file_operations pto_fops;

/* pto_drv.c */
struct pto_device *pto_device_lookup(unsigned int minor);

/* pto_file.c */
void pto_file_put(struct pto_file *pf);

/* pto_bo.c */
int pto_ioctl_bo_alloc(struct pto_file *pf, void *data);
void pto_ioctl_bo_alloc_undo(struct pto_file *pf, void *data);
int pto_ioctl_bo_free(struct pto_file *pf, void *data);
int pto_ioctl_bo_info(struct pto_file *pf, void *data);
void pto_bo_put(struct pto_bo *bo);
void pto_file_release_bos(struct pto_file *pf);
void pto_file_destroy_bos(struct pto_file *pf);
int pto_bo_mmap(struct pto_file *pf, struct vm_area_struct *vma);

/* pto_core.c */
int pto_cores_init(struct pto_device *pdev);
void pto_cores_fini(struct pto_device *pdev);
void pto_file_release_cores(struct pto_file *pf);
int pto_ioctl_cluster_acquire(struct pto_file *pf, void *data);
int pto_ioctl_cluster_release(struct pto_file *pf, void *data);
int pto_ioctl_core_launch(struct pto_file *pf, void *data);
int pto_ioctl_doorbell(struct pto_file *pf, void *data);
int pto_ioctl_core_stats(struct pto_file *pf, void *data);
int pto_window_mmap(struct pto_file *pf, struct vm_area_struct *vma);
int pto_core_inject_stall(struct pto_device *pdev, unsigned int core);
int pto_core_inject_badid(struct pto_device *pdev, unsigned int core);
int pto_cores_reset_debugfs(struct pto_device *pdev);
int pto_ioctl_core_retire(struct pto_file *pf, void *data);
int pto_ioctl_retire_status(struct pto_file *pf, void *data);
int pto_ioctl_core_reset(struct pto_file *pf, void *data);
void pto_device_fatal(struct pto_device *pdev);
void pto_core_set_state(struct pto_core *core, int state);
void pto_window_zap(struct pto_file *pf, struct pto_core *core);
u32 pto_ureg_read(struct pto_core *core, unsigned int off);
u32 pto_kreg_read(struct pto_core *core, unsigned int off);
/* Step functions of the core loop, separable for KUnit. */
bool pto_core_park_prepare(struct pto_core *core);
void pto_core_park_finish(struct pto_core *core);
bool pto_core_wake_serve(struct pto_core *core, struct eventfd_ctx *notify,
			 struct pto_file *pf);
void pto_core_exit_ack(struct pto_core *core);
bool pto_core_may_return(struct pto_core *core);

/*
 * pto_retire.c: seed 003's retirement, the one implementation used by the
 * retire ioctl, cluster and file release, a failed launch, a fatal device
 * error, module unload and the reset. Never takes core_lock (callers may
 * hold it). Steps separable for KUnit: a claim (ids or a mask), then
 * pto_retire_run() and pto_retire_finish().
 */
extern bool mock_old_protocol;
void pto_retire_arm(struct pto_core *core);
bool pto_retire_publish(struct pto_core *core);
void pto_retire_init(struct pto_retire_ctx *ctx, struct pto_device *pdev,
		     enum pto_retire_reason reason);
void pto_retire_claim_mask(struct pto_retire_ctx *ctx,
			   const unsigned long *mask);
void pto_retire_take(struct pto_retire_ctx *ctx, struct pto_core *core);
void pto_retire_adopt(struct pto_retire_ctx *ctx, struct pto_core *core);
void pto_retire_leave_unpublished(struct pto_retire_ctx *ctx,
				  struct pto_core *core, const char *why);
void pto_retire_put_refs(struct pto_core *core);
void pto_retire_pass_close(struct pto_retire_ctx *ctx);
void pto_retire_run(struct pto_retire_ctx *ctx);
void pto_retire_finish(struct pto_retire_ctx *ctx);
void pto_retire_quarantined(const struct pto_retire_ctx *ctx,
			    unsigned long *mask);

/* pto_exec.c: one task's steps (fetch, validate, run, complete). */
u32 pto_task_fetch(struct pto_core *core, struct pto_task *t, u32 dispatch);
u32 pto_task_validate(struct pto_file *pf, struct pto_task *t);
u32 pto_task_run(struct pto_core *core, struct pto_task *t);
void pto_task_put(struct pto_task *t);
bool pto_core_stopping(struct pto_core *core);

/*
 * pto_kern_fp.c: float32 rows, the only code compiled with SSE. Its
 * functions are noinline and contain no kernel_fpu_begin() / _end(): the
 * wrappers below, compiled without SSE, bracket each call, so the compiler
 * cannot move a float instruction of the SSE file outside the FPU section
 * (the amdgpu DC_FP_START pattern). Callers hand in one chunk (PTO_CHUNK
 * elements or one matmul row) per call, so preemption is never off for
 * long. Not built for UML (KUnit), where float32 tasks complete with
 * PTO_TASK_EDTYPE.
 */
enum pto_fp_op {
	PTO_FP_ADD, PTO_FP_SUB, PTO_FP_MUL, PTO_FP_ADDS, PTO_FP_MULS,
	PTO_FP_COPY, PTO_FP_FILL,
};
#ifndef CONFIG_UML
#include <asm/fpu/api.h>
#define PTO_HAVE_FP 1
void __pto_fp32_row(enum pto_fp_op op, u32 *o, s64 so, const u32 *a, s64 sa,
		    const u32 *b, s64 sb, u32 scalar, u32 n);
void __pto_fp32_sum_row(const u32 *a, s64 sa, u32 n, u64 *acc);
u32 __pto_fp32_from_acc(u64 acc);
void __pto_fp32_matmul_row(u32 *o, s64 so, const u32 *a, s64 sa,
			   const u32 *b, s64 sbk, s64 sbn, u32 k, u32 n);

static inline void pto_fp32_row(enum pto_fp_op op, u32 *o, s64 so,
				const u32 *a, s64 sa, const u32 *b, s64 sb,
				u32 scalar, u32 n)
{
	kernel_fpu_begin();
	__pto_fp32_row(op, o, so, a, sa, b, sb, scalar, n);
	kernel_fpu_end();
}

static inline void pto_fp32_sum_row(const u32 *a, s64 sa, u32 n, u64 *acc)
{
	kernel_fpu_begin();
	__pto_fp32_sum_row(a, sa, n, acc);
	kernel_fpu_end();
}

static inline u32 pto_fp32_from_acc(u64 acc)
{
	u32 r;

	kernel_fpu_begin();
	r = __pto_fp32_from_acc(acc);
	kernel_fpu_end();
	return r;
}

static inline void pto_fp32_matmul_row(u32 *o, s64 so, const u32 *a, s64 sa,
				       const u32 *b, s64 sbk, s64 sbn, u32 k,
				       u32 n)
{
	kernel_fpu_begin();
	__pto_fp32_matmul_row(o, so, a, sa, b, sbk, sbn, k, n);
	kernel_fpu_end();
}
#else
/* Never called: validation refuses float32 tasks without FP (UML). */
#define PTO_HAVE_FP 0
static inline void pto_fp32_row(enum pto_fp_op op, u32 *o, s64 so,
				const u32 *a, s64 sa, const u32 *b, s64 sb,
				u32 scalar, u32 n) { }
static inline void pto_fp32_sum_row(const u32 *a, s64 sa, u32 n, u64 *acc)
{ }
static inline u32 pto_fp32_from_acc(u64 acc) { return 0; }
static inline void pto_fp32_matmul_row(u32 *o, s64 so, const u32 *a, s64 sa,
				       const u32 *b, s64 sbk, s64 sbn, u32 k,
				       u32 n) { }
#endif

/* pto_debugfs.c: failures are ignored, the driver works without it. */
void pto_debugfs_init(void);
void pto_debugfs_fini(void);
void pto_debugfs_add_device(struct pto_device *pdev);
void pto_debugfs_remove_device(struct pto_device *pdev);

/*
 * Reached only by the KUnit suites (kernel/tests/, module pto_kunit):
 * static otherwise (VISIBLE_IF_KUNIT, EXPORT_SYMBOL_IF_KUNIT).
 */
#if IS_ENABLED(CONFIG_PTO_KUNIT_TEST)
int pto_cores_reset_quarantined(struct pto_device *pdev,
				struct pto_file *pf, const unsigned long *mask,
				unsigned int *remaining);
bool pto_core_poll(struct pto_core *core, u32 *dispatch);
void pto_core_park_publish(struct pto_core *core);
bool pto_core_park_recheck(struct pto_core *core);
void pto_core_fin(struct pto_core *core, u32 cond);
bool pto_core_wake_check(struct pto_core *core);
void pto_core_do_task(struct pto_core *core, u32 dispatch);
int pto_core_test_init(struct pto_core *core, struct pto_device *pdev,
		       unsigned int id);
void pto_core_test_fini(struct pto_core *core);
void pto_retire_arm_prepare(struct pto_core *core);
void pto_retire_arm_commit(struct pto_core *core);
bool pto_retire_request(struct pto_core *core);
int pto_retire_claim(struct pto_retire_ctx *ctx, const u32 *ids,
		     unsigned int n);
void pto_retire_pass_request(struct pto_retire_ctx *ctx);
bool pto_retire_pass_poll(struct pto_retire_ctx *ctx);
void pto_retire_pass_wait(struct pto_retire_ctx *ctx);
void pto_retire_pass_release(struct pto_retire_ctx *ctx);
#endif

#endif /* _PTO_DRV_H_ */
