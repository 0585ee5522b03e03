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
 * Lock order: pto_device.core_lock -> pto_file.lock -> pto_device.bos_lock.
 * No user memory is touched with core_lock held (a window fault takes it).
 */
#ifndef _PTO_DRV_H_
#define _PTO_DRV_H_

#include <linux/cdev.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/maple_tree.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/xarray.h>
#include <linux/pto.h>

#define PTO_NAME "pto"
#define PTO_MAX_DEVICES 8
#define PTO_MAX_GM_MB 4096

/* GM device addresses below this are never handed out: 0 is never valid. */
#define PTO_GM_RESERVED 0x10000ULL
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
	PTO_CORE_F_LAUNCH,	/* launcher asked the idle thread to handshake */
	PTO_CORE_F_READY,	/* ownership + payload init done (issue 6 bit) */
	PTO_CORE_F_REQUESTED,	/* retirement requested (reserved, issue 6) */
	PTO_CORE_F_DOORBELL,	/* a doorbell rang since the core parked */
	PTO_CORE_F_QUARANTINE,	/* missed retirement: not launched, mapped */
	PTO_CORE_F_STALL,	/* mock fault injection: ignore EXIT */
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
 * @owner, @payload_bo, @payload_kaddr, @payload_addr: the launch; written
 *		by the launcher under pdev->core_lock before READY is set, and
 *		by the stopper after the core acknowledged the stop; the core
 *		reads them only between READY and its stop acknowledgement.
 * @nonce:	the pending retirement request (core_lock); the core echoes
 *		it in COND and in @last_cond, the kernel-private mirror that
 *		retirement reads (the user page's COND is the owner's to forge).
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

	u32 nonce;
	u32 last_id;
	u32 last_cond;
	struct pto_task task;

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
 * @bos_lock: protects @bos (every live buffer object, for debugfs).
 * @core_lock: protects @cluster_owner and every core's launch fields
 *	(owner, payload, F_LAUNCH / F_READY transitions); serializes
 *	acquire, release, launch and stop. Held across the bounded waits
 *	for the core threads, never across user memory access.
 * @core_wq: launchers and stoppers wait here for core state changes.
 * @workers / @gates: device control memory, two separate arrays of
 *	64-byte lines in one zeroed page-aligned block (@ctrl_mem).
 */
struct pto_device {
	unsigned int index;
	unsigned int clusters;
	unsigned int cores;
	unsigned int lanes;
	struct pto_gm gm;
	struct cdev cdev;
	struct device *dev;
	struct dentry *debugfs;

	spinlock_t bos_lock;
	struct list_head bos;

	struct mutex core_lock;
	wait_queue_head_t core_wq;
	struct pto_file *cluster_owner[PTO_MAX_CLUSTERS];
	struct pto_core *core;
	void *ctrl_mem;
	struct pto_worker_line *workers;
	struct pto_gate_line *gates;
};

/**
 * struct pto_file - per-open context.
 * @lock: protects @bos and @ranges together, so a handle and its address
 *        range are visible or invisible as one.
 * @bos: handle -> struct pto_bo (the handle owns one bo reference).
 * @ranges: GM device address range -> struct pto_bo, the set of addresses
 *        this file may touch through the device (mock validation).
 * @mapping: the file's address space (window mappings are zapped in it).
 * @poll_wq / @wakeups: completion wake-ups delivered by the file's cores;
 *        poll() is readable while @wakeups is non-zero, read() drains it.
 */
struct pto_file {
	struct kref ref;
	struct pto_device *pdev;
	pid_t pid;

	struct mutex lock;
	struct xarray bos;
	struct maple_tree ranges;

	struct address_space *mapping;
	wait_queue_head_t poll_wq;
	atomic64_t wakeups;
};

/**
 * struct pto_bo - a GM buffer object.
 * @vaddr: kernel mapping of the backing pages (vmalloc_user, zeroed).
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

/* pto_file.c */
void pto_file_put(struct pto_file *pf);

/* pto_bo.c */
int pto_ioctl_bo_alloc(struct pto_file *pf, void *data);
int pto_ioctl_bo_free(struct pto_file *pf, void *data);
int pto_ioctl_bo_info(struct pto_file *pf, void *data);
void pto_bo_put(struct pto_bo *bo);
void pto_file_release_bos(struct pto_file *pf);
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
int pto_cores_reset_quarantined(struct pto_device *pdev);
u32 pto_ureg_read(struct pto_core *core, unsigned int off);
u32 pto_kreg_read(struct pto_core *core, unsigned int off);
/* Step functions of the core loop, separable for KUnit. */
bool pto_core_poll(struct pto_core *core, u32 *dispatch);
void pto_core_park_publish(struct pto_core *core);
bool pto_core_park_recheck(struct pto_core *core);
bool pto_core_park_prepare(struct pto_core *core);
void pto_core_park_finish(struct pto_core *core);
void pto_core_fin(struct pto_core *core, u32 cond);
bool pto_core_wake_check(struct pto_core *core);
void pto_core_do_task(struct pto_core *core, u32 dispatch);
int pto_core_test_init(struct pto_core *core, struct pto_device *pdev,
		       unsigned int id);
void pto_core_test_fini(struct pto_core *core);

/* pto_exec.c: one task's steps (fetch, validate, run, complete). */
u32 pto_task_fetch(struct pto_core *core, struct pto_task *t, u32 dispatch);
u32 pto_task_validate(struct pto_file *pf, struct pto_task *t);
u32 pto_task_run(struct pto_core *core, struct pto_task *t);
void pto_task_put(struct pto_task *t);
bool pto_core_stopping(struct pto_core *core);

/*
 * pto_kern_fp.c: float32 rows, compiled with SSE and run between
 * kernel_fpu_begin() / kernel_fpu_end(). Not built for UML (KUnit), where
 * float32 tasks complete with PTO_TASK_EDTYPE.
 */
enum pto_fp_op {
	PTO_FP_ADD, PTO_FP_SUB, PTO_FP_MUL, PTO_FP_ADDS, PTO_FP_MULS,
	PTO_FP_COPY, PTO_FP_FILL,
};
#ifndef CONFIG_UML
#define PTO_HAVE_FP 1
void pto_fp32_row(enum pto_fp_op op, u32 *o, s64 so, const u32 *a, s64 sa,
		  const u32 *b, s64 sb, u32 scalar, u32 n);
void pto_fp32_sum_row(const u32 *a, s64 sa, u32 n, u64 *acc);
u32 pto_fp32_from_acc(u64 acc);
void pto_fp32_matmul_row(u32 *o, s64 so, const u32 *a, s64 sa, const u32 *b,
			 s64 sbk, s64 sbn, u32 k, u32 n);
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

#endif /* _PTO_DRV_H_ */
