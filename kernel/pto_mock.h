/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pto - the mock silicon: a core's thread and its step functions
 * (pto_mock.c), the built-in kernels (pto_mock_kernels.c) and their
 * float32 rows (pto_mock_fp.c). Documentation/mock-cores.md describes the
 * protocol the driver speaks with them.
 */
#ifndef _PTO_MOCK_H_
#define _PTO_MOCK_H_

#include <linux/compiler.h>
#include <linux/types.h>
#include <linux/pto.h>

struct dentry;

struct eventfd_ctx;
struct pto_bo;
struct pto_core;
struct pto_device;
struct pto_file;

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
 * cell alone in its 64-byte line (never in a line the core writes). Only the kernel's teardown writes @gate; the core only reads it.
 */
struct pto_gate_line {
	u32 gate;
	u32 rsvd[15];
} __aligned(64);

/**
 * struct pto_mock_task - the task a core runs, core-private (a copy of the
 * payload, so the owner rewriting GM cannot change it under the kernel).
 * @bo / @ptr: per tensor, the buffer object (a held reference) and the
 *        kernel address of element 0, filled in by validation.
 */
struct pto_mock_task {
	u32 dispatch;
	u32 id;
	u64 start_ns;		/* ACK time, written back at completion */
	struct pto_payload p;
	struct pto_bo *bo[PTO_PAYLOAD_TENSORS];
	void *ptr[PTO_PAYLOAD_TENSORS];
};

#if IS_ENABLED(CONFIG_PTO_MOCK_FAULTS)
/* The mock's faults (debugfs inject_*, mock_* parameters). */
extern bool mock_old_protocol;
int pto_core_inject_stall(struct pto_device *pdev, unsigned int core);
int pto_core_inject_badid(struct pto_device *pdev, unsigned int core);
void pto_cores_inject_clear(struct pto_device *pdev);
unsigned int pto_mock_close_delay_ms(void);

static inline bool pto_mock_old_protocol(void)
{
	return READ_ONCE(mock_old_protocol);
}
#else
static inline void pto_cores_inject_clear(struct pto_device *pdev) { }

static inline unsigned int pto_mock_close_delay_ms(void)
{
	return 0;
}

static inline bool pto_mock_old_protocol(void)
{
	return false;
}
#endif

/*
 * The driver's own fault attributes (debugfs pto/fail_*, the kernel's
 * fault-injection attributes) for failures that are not allocations:
 * failslab and fail_page_alloc cover those.
 */
enum pto_fail {
	PTO_FAIL_CORE_START,	/* a launched core reports a wrong identity */
	PTO_FAIL_WINDOW_MAP,	/* a window mmap fails (-ENOMEM) */
	PTO_FAIL_COUNT,
};

#if IS_ENABLED(CONFIG_PTO_MOCK_FAULTS) && IS_ENABLED(CONFIG_FAULT_INJECTION)
bool pto_should_fail(enum pto_fail which);
void pto_fail_debugfs_init(struct dentry *root);
#else
static inline bool pto_should_fail(enum pto_fail which)
{
	return false;
}

static inline void pto_fail_debugfs_init(struct dentry *root) { }
#endif

/* pto_mock.c: the core thread and the steps the driver shares. */
int pto_core_thread(void *arg);
void pto_core_set_state(struct pto_core *core, int state);
bool pto_core_stopping(struct pto_core *core);
bool pto_core_wake_serve(struct pto_core *core, struct eventfd_ctx *notify,
			 struct pto_file *pf);

#if IS_ENABLED(CONFIG_PTO_KUNIT_TEST)
bool pto_core_poll(struct pto_core *core, u32 *dispatch);
void pto_core_park_publish(struct pto_core *core);
bool pto_core_park_recheck(struct pto_core *core);
void pto_core_fin(struct pto_core *core, u32 cond);
bool pto_core_wake_check(struct pto_core *core);
void pto_core_do_task(struct pto_core *core, u32 dispatch);
void pto_core_exit_ack(struct pto_core *core);
bool pto_core_may_return(struct pto_core *core);
#endif

#include "pto_mock_kernels.h"
#include "pto_mock_fp.h"

#endif /* _PTO_MOCK_H_ */
