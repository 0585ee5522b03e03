/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pto - retirement (pto_retire.c): the one implementation that ends a
 * launch, the retire / retire-status ioctls and the device fatal path.
 * Documentation/retirement.md describes the protocol.
 */
#ifndef _PTO_RETIRE_H_
#define _PTO_RETIRE_H_

#include <linux/bitmap.h>
#include <linux/types.h>
#include <linux/pto.h>

struct pto_core;
struct pto_device;
struct pto_file;

/*
 * pto_core.rbits: the two retirement ownership bits, reset by the
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
 * @set: cores this call owns (won the election). @acked: those whose nonce
 *	arrived. @others: cores another owner retires (waited for only).
 * @left: cores this call quarantined. @recovery: a reset's call.
 * @t0 / @elapsed: ktime of pass 1, and the time up to the gates.
 * @gen: per core, the generation claimed or waited for (a relaunch after
 *	the gate is a new generation, not a wait).
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

/*
 * A retirement: pto_retire_init(), a claim (a mask; the launcher takes
 * its pending requests with pto_retire_take()), pto_retire_run(), then
 * pto_retire_finish(). Never takes core_lock (callers may hold it).
 */
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
void pto_cores_retire(struct pto_device *pdev, const unsigned long *mask,
		      enum pto_retire_reason reason);
void pto_device_fatal(struct pto_device *pdev);
int pto_ioctl_core_retire(struct pto_file *pf, void *data);
int pto_ioctl_retire_status(struct pto_file *pf, void *data);

#if IS_ENABLED(CONFIG_PTO_KUNIT_TEST)
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

#endif /* _PTO_RETIRE_H_ */
