/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pto - an emulated per-core write-back line cache (pto_mock_lcache.c).
 * A real core sees GM through a cache its peers and the host do not
 * share; the mock's kernel threads see memory coherently. On the
 * resident route a core's ordinary GM loads and stores go through one of
 * these (module parameter mock_lcache_lines), so a missing flush or a
 * line written back over a peer's word makes a test fail.
 * Atomics and READ_ONCE / WRITE_ONCE on control words never go through
 * it: they are the device-direct path.
 */
#ifndef _PTO_MOCK_LCACHE_H_
#define _PTO_MOCK_LCACHE_H_

#include <linux/types.h>

#define PTO_LC_LINE_SHIFT 6
#define PTO_LC_LINE (1u << PTO_LC_LINE_SHIFT)
#define PTO_LC_MAX_LINES 1024u
/* Words per operand of a kernel's core-local staging (pto_lc_stage()). */
#define PTO_LC_STAGE 1024u

/**
 * struct pto_lc_line - one line of the cache.
 * @tag:	kva >> PTO_LC_LINE_SHIFT of the 64 B it holds (while @valid).
 * @valid:	@data holds that line (possibly stale against memory).
 * @dirty:	@data was stored to since the fill; written back whole.
 * @data:	the line's bytes.
 */
struct pto_lc_line {
	unsigned long tag;
	bool valid;
	bool dirty;
	u8 data[PTO_LC_LINE] __aligned(8);
};

/**
 * struct pto_lc_stats - counters (debugfs, tests).
 * @hits / @misses: loads and stores that found / filled their line.
 * @writebacks: dirty lines written to memory (eviction or flush).
 */
struct pto_lc_stats {
	u64 hits;
	u64 misses;
	u64 writebacks;
};

/**
 * struct pto_lcache - one core's cache: direct-mapped, indexed by
 * (kva >> PTO_LC_LINE_SHIFT) & (@lines - 1). Used by its core's thread
 * only (no lock); @stats are read elsewhere with READ_ONCE.
 * @lines:	a power of two, 1 .. PTO_LC_MAX_LINES.
 * @stage:	3 * PTO_LC_STAGE words of core-local memory: a kernel
 *		gathers its inputs there, computes, scatters the outputs.
 */
struct pto_lcache {
	unsigned int lines;
	struct pto_lc_stats stats;
	u32 *stage;
	struct pto_lc_line line[];
};

/* The module parameter (0 = off); snapshotted at GRAPH_LAUNCH. */
unsigned int pto_lc_lines_param(void);

/* NULL on -ENOMEM or an invalid @lines; pto_lc_free(NULL) is a no-op. */
struct pto_lcache *pto_lc_alloc(unsigned int lines);
void pto_lc_free(struct pto_lcache *lc);

/*
 * Ordinary loads / stores of naturally aligned words. A load that hits
 * returns the cached bytes however memory changed since the fill; a
 * store allocates the line (filling it) and marks it dirty. A conflict
 * eviction of a dirty line writes back all 64 bytes. A NULL @lc is
 * direct memory (READ_ONCE / WRITE_ONCE), the uncached route.
 */
u32 pto_lc_ld32(struct pto_lcache *lc, const u32 *p);
void pto_lc_st32(struct pto_lcache *lc, u32 *p, u32 v);
u64 pto_lc_ld64(struct pto_lcache *lc, const u64 *p);
void pto_lc_st64(struct pto_lcache *lc, u64 *p, u64 v);

/* Strided runs of words for the kernels (stride in elements). */
void pto_lc_gather32(struct pto_lcache *lc, u32 *dst, const u32 *src,
		     s64 stride, u32 n);
void pto_lc_scatter32(struct pto_lcache *lc, u32 *dst, s64 stride,
		      const u32 *src, u32 n);

/* Clean and invalidate the cached lines overlapping [kva, kva + len). */
void pto_lc_flush(struct pto_lcache *lc, const void *kva, size_t len);
/* Write back every dirty line; the lines stay valid (clean). */
void pto_lc_flush_all(struct pto_lcache *lc);
/* Write back every dirty line, then drop every line. */
void pto_lc_inval_all(struct pto_lcache *lc);

/* Staging operand @i (0 .. 2) of PTO_LC_STAGE words. */
static inline u32 *pto_lc_stage(struct pto_lcache *lc, unsigned int i)
{
	return lc->stage + i * PTO_LC_STAGE;
}

void pto_lc_read_stats(const struct pto_lcache *lc, struct pto_lc_stats *s);

#endif /* _PTO_MOCK_LCACHE_H_ */
