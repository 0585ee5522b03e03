/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The retirement suites' fixture: NCORES cores without threads on a
 * device of their own, and a recording sink that sees every window and
 * gate write of retirement in order (pto_retire_fixture.c).
 */
#ifndef _PTO_RETIRE_FIXTURE_H_
#define _PTO_RETIRE_FIXTURE_H_

#include <kunit/test.h>
#include "../pto_core.h"
#include "../pto_retire.h"

#define NCORES 6
#define NEV 1024

struct rev {
	unsigned int core;
	enum pto_rw what;
	u32 val;
};

struct rt {
	struct pto_device pdev;
	struct pto_core core[NCORES];
	unsigned long ctrl;
	struct rev ev[NEV];
	unsigned int nev;
	DECLARE_BITMAP(responsive, PTO_MAX_CORES);
	DECLARE_BITMAP(gate_returns, PTO_MAX_CORES);
	/* Cores whose window reopens on CLOSE: the close does not stick. */
	DECLARE_BITMAP(reopen, PTO_MAX_CORES);
	/* At core @seen_core's gate: unquarantined with the marker kept? */
	int seen_core;
	bool seen_leak;
	/* When core @reset_at_quarantine leaves: a debugfs reset, once. */
	int reset_at_quarantine;
	int reset_ret;
	/*
	 * Core @seen_core at the instant recovery clears F_QUARANTINE (the
	 * note comes right before the clear_bit()): whether the bit is
	 * still set, its page's marker word and whether win_lock is held.
	 */
	bool unq_seen, unq_quarantined, unq_locked;
	u32 unq_marker;
};

extern const u32 pto_rt_ids[NCORES];

int pto_rt_init(struct kunit *test);
void pto_rt_exit(struct kunit *test);
/* The core's side after the gate: what the core thread does. */
void pto_rt_return(struct rt *rt, unsigned int i);
/* The launcher's side up to (not including) READY: arm, handshake. */
void pto_rt_arm(struct rt *rt, unsigned int i);
/* A whole launch: arm, handshake, READY (no request pending). */
void pto_rt_launch(struct kunit *test, struct rt *rt, unsigned int i);
/* The sink's events: first / last index of @what (core -1: any), count. */
int pto_rt_first(struct rt *rt, enum pto_rw what, int core);
int pto_rt_last(struct rt *rt, enum pto_rw what);
unsigned int pto_rt_count(struct rt *rt, enum pto_rw what, int core);
void pto_rt_retire_one_silent(struct kunit *test, struct rt *rt,
			      unsigned int from, unsigned int silent,
			      struct pto_retire_ctx *ctx);
void pto_rt_quarantine_one(struct kunit *test, struct rt *rt,
			   unsigned int silent, struct pto_retire_ctx *ctx);
void pto_rt_expect_recovered(struct kunit *test, struct rt *rt,
			     unsigned int i);

#endif /* _PTO_RETIRE_FIXTURE_H_ */
