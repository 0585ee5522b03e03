/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * KUnit: the supervisor suite's fixture (pto_capture_sv_fixture.c): one
 * lane with a real producer over a small lane image, a run over up to
 * four clusters, and the cores' rendezvous steps as helpers.
 */
#ifndef _PTO_CAPTURE_SV_FIXTURE_H_
#define _PTO_CAPTURE_SV_FIXTURE_H_

#include <kunit/test.h>
#include <linux/sizes.h>
#include <linux/pto_dump.h>
#include <linux/pto_graph.h>
#include "../pto_capture_sv.h"
#include "../pto_drv.h"
#include "../pto_lane.h"
#include "../pto_producer.h"

#define SV_ARENA SZ_512K	/* clamp: 256 KiB, four chunks */
#define SV_CLUSTERS 4
#define SV_CORES (SV_CLUSTERS * PTO_CORES_PER_CLUSTER)
#define SV_TASKS 8
#define SV_ELEMS (SZ_256K / 4)	/* i32 elements of the source */
#define SV_RUN_ID 0x1234000000000042ULL
#define SV_MAX_STEPS 64

struct sv_ctx {
	struct pto_device pdev;
	struct pto_file pf;
	struct pto_lane *lane;
	struct pto_producer *p;
	void *mem;
	atomic64_t epochs;
	struct pto_cap_run *run;
	struct pto_cap_sv *sv;
	struct pto_graph_task t[SV_TASKS];
	struct pto_sv_task tk[SV_TASKS];
	u32 *src;
	struct pto_capture_part part[SV_CORES];
	u64 step_bytes;
};

void sv_ctx_init(struct kunit *test);
void sv_ctx_fini(struct kunit *test);
void sv_start(struct kunit *test, u32 level, u64 clusters);
void sv_task(struct sv_ctx *ctx, u32 task, u32 mask, u32 nscalars);
void sv_tensor2(struct sv_ctx *ctx, u32 task, u32 slot, u32 role,
		u32 flags, u32 rows, u32 cols, u64 rs, u64 cs, u32 off);
void sv_tensor(struct sv_ctx *ctx, u32 task, u32 slot, u32 role,
	       u32 n, u32 off);
void sv_join(struct kunit *test, u32 cl, u32 mask, u64 task);
u32 sv_arrive(struct kunit *test, u32 cl, u32 mask, u32 ph);
enum pto_cs_step sv_poll(struct kunit *test, u32 core,
			 struct pto_capture_ack *echo);
bool sv_step(struct kunit *test);
int sv_until_sealed(struct kunit *test, const u32 *pubs, int n);
void sv_release(struct kunit *test, u32 cl, u32 mask, u32 ph);
const struct pto_dump_record *sv_rec(struct sv_ctx *ctx, u32 i);
void sv_expect_bytes(struct kunit *test, u32 i, u32 off, u32 n);
void sv_fill(struct kunit *test, u32 n);
void sv_expect_balanced(struct kunit *test);
u32 sv_solo(struct kunit *test, u32 cl, u64 task, u32 ph);

#endif /* _PTO_CAPTURE_SV_FIXTURE_H_ */
