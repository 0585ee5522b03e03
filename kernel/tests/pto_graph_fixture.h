/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The graph suites' fixture (pto_graph_fixture.c): a file with two
 * buffers and one core without a thread, and a graph as the test writes
 * it (struct tg), packed into an image and built by pto_graph_build().
 */
#ifndef _PTO_GRAPH_FIXTURE_H_
#define _PTO_GRAPH_FIXTURE_H_

#include <kunit/test.h>
#include "../pto_bo.h"
#include "../pto_core.h"
#include "../pto_graph.h"

#define BO_A 0x100000ULL	/* two buffers of the file */
#define BO_B 0x102000ULL
#define FOREIGN 0x200000ULL	/* not the file's */
#define BO_SIZE 4096ULL
#define MAXT 48
#define MAXE 192

struct graph_ctx {
	struct pto_device pdev;
	struct pto_file pf;
	struct pto_bo bo[2];
	struct pto_core core;
};

/* A graph as the test writes it, packed into an image by pto_gt_build(). */
struct tg {
	u32 n;
	u32 ne;
	struct pto_graph_task t[MAXT];
	u32 e[MAXE];
};

/* The suites' init / exit: test->priv is a struct graph_ctx. */
int pto_gt_init(struct kunit *test);
void pto_gt_exit(struct kunit *test);
/* A 1-D int32 tensor of @n elements at @addr. */
void pto_gt_ten(struct pto_graph_tensor *a, u32 role, u64 addr, u32 n);
/* An edge @from -> @to; add them task by task, then pto_gt_seal(). */
void pto_gt_edge(struct tg *g, u32 from, u32 to);
void pto_gt_seal(struct tg *g);
/* The diamond f = (x + 1) * (x + 2), x = 2, into B[0:16]. */
void pto_gt_diamond(struct tg *g);
size_t pto_gt_size(const struct tg *g);
/* Pack @g, let @hdr change the header, build it less @cut bytes. */
struct pto_graph *pto_gt_build(struct kunit *test, struct tg *g, u64 cut,
			       void (*hdr)(struct pto_graph_hdr *),
			       struct pto_graph_launch *args);
/* No buffer is pinned: the graph was refused or is freed. */
void pto_gt_expect_no_refs(struct kunit *test);

#endif /* _PTO_GRAPH_FIXTURE_H_ */
