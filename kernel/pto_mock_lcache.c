// SPDX-License-Identifier: GPL-2.0-only
/*
 * pto - the emulated per-core write-back line cache (pto_mock_lcache.h).
 * Lines move between memory and a cache 8 bytes at a time with
 * READ_ONCE / WRITE_ONCE: a peer core may store to the same line at
 * once, and a line's write-back landing over such a store is the hazard
 * the cache exists to expose, not a data race of the emulation.
 */
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <kunit/visibility.h>
#include "pto_mock_lcache.h"

#if IS_ENABLED(CONFIG_PTO_MOCK_FAULTS)
/* A test-only parameter, as the mock's faults: a DKMS build has none. */
static int lcache_lines_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n;
	int ret;

	ret = kstrtouint(val, 0, &n);
	if (ret)
		return ret;
	if (n && (!is_power_of_2(n) || n > PTO_LC_MAX_LINES))
		return -EINVAL;
	WRITE_ONCE(*(unsigned int *)kp->arg, n);
	return 0;
}

static const struct kernel_param_ops lcache_lines_ops = {
	.set = lcache_lines_set,
	.get = param_get_uint,
};

static unsigned int mock_lcache_lines;
module_param_cb(mock_lcache_lines, &lcache_lines_ops, &mock_lcache_lines,
		0644);
MODULE_PARM_DESC(mock_lcache_lines,
		 "lines of 64 B in each core's emulated write-back cache on the resident route (default 0: off; a power of two, at most 1024), read at GRAPH_LAUNCH");

unsigned int pto_lc_lines_param(void)
{
	return READ_ONCE(mock_lcache_lines);
}
#else
unsigned int pto_lc_lines_param(void)
{
	return 0;
}
#endif

struct pto_lcache *pto_lc_alloc(unsigned int lines)
{
	struct pto_lcache *lc;

	if (!lines || !is_power_of_2(lines) || lines > PTO_LC_MAX_LINES)
		return NULL;
	lc = kvzalloc(struct_size(lc, line, lines), GFP_KERNEL_ACCOUNT);
	if (!lc)
		return NULL;
	lc->stage = kvcalloc(3 * PTO_LC_STAGE, sizeof(u32),
			     GFP_KERNEL_ACCOUNT);
	if (!lc->stage) {
		kvfree(lc);
		return NULL;
	}
	lc->lines = lines;
	return lc;
}
EXPORT_SYMBOL_IF_KUNIT(pto_lc_alloc);

void pto_lc_free(struct pto_lcache *lc)
{
	if (!lc)
		return;
	kvfree(lc->stage);
	kvfree(lc);
}
EXPORT_SYMBOL_IF_KUNIT(pto_lc_free);

static u64 *pto_lc_mem(unsigned long tag)
{
	return (u64 *)(tag << PTO_LC_LINE_SHIFT);
}

/* The whole line goes back, bytes never stored to included. */
static void pto_lc_writeback(struct pto_lcache *lc, struct pto_lc_line *l)
{
	const u64 *src = (const u64 *)l->data;
	u64 *dst = pto_lc_mem(l->tag);
	unsigned int i;

	for (i = 0; i < PTO_LC_LINE / 8; i++)
		WRITE_ONCE(dst[i], src[i]);
	l->dirty = false;
	WRITE_ONCE(lc->stats.writebacks, lc->stats.writebacks + 1);
}

/* The line holding @kva, filled on a miss (evicting the index's line). */
static struct pto_lc_line *pto_lc_get(struct pto_lcache *lc, unsigned long kva)
{
	unsigned long tag = kva >> PTO_LC_LINE_SHIFT;
	struct pto_lc_line *l = &lc->line[tag & (lc->lines - 1)];
	const u64 *src;
	u64 *dst;
	unsigned int i;

	if (l->valid && l->tag == tag) {
		WRITE_ONCE(lc->stats.hits, lc->stats.hits + 1);
		return l;
	}
	WRITE_ONCE(lc->stats.misses, lc->stats.misses + 1);
	if (l->valid && l->dirty)
		pto_lc_writeback(lc, l);
	src = pto_lc_mem(tag);
	dst = (u64 *)l->data;
	for (i = 0; i < PTO_LC_LINE / 8; i++)
		dst[i] = READ_ONCE(src[i]);
	l->tag = tag;
	l->valid = true;
	l->dirty = false;
	return l;
}

static unsigned int pto_lc_off(const void *p)
{
	return (unsigned long)p & (PTO_LC_LINE - 1);
}

u32 pto_lc_ld32(struct pto_lcache *lc, const u32 *p)
{
	struct pto_lc_line *l;

	if (!lc)
		return READ_ONCE(*p);
	l = pto_lc_get(lc, (unsigned long)p);
	return *(u32 *)(l->data + pto_lc_off(p));
}
EXPORT_SYMBOL_IF_KUNIT(pto_lc_ld32);

void pto_lc_st32(struct pto_lcache *lc, u32 *p, u32 v)
{
	struct pto_lc_line *l;

	if (!lc) {
		WRITE_ONCE(*p, v);
		return;
	}
	l = pto_lc_get(lc, (unsigned long)p);
	*(u32 *)(l->data + pto_lc_off(p)) = v;
	l->dirty = true;
}
EXPORT_SYMBOL_IF_KUNIT(pto_lc_st32);

u64 pto_lc_ld64(struct pto_lcache *lc, const u64 *p)
{
	struct pto_lc_line *l;

	if (!lc)
		return READ_ONCE(*p);
	l = pto_lc_get(lc, (unsigned long)p);
	return *(u64 *)(l->data + pto_lc_off(p));
}
EXPORT_SYMBOL_IF_KUNIT(pto_lc_ld64);

void pto_lc_st64(struct pto_lcache *lc, u64 *p, u64 v)
{
	struct pto_lc_line *l;

	if (!lc) {
		WRITE_ONCE(*p, v);
		return;
	}
	l = pto_lc_get(lc, (unsigned long)p);
	*(u64 *)(l->data + pto_lc_off(p)) = v;
	l->dirty = true;
}
EXPORT_SYMBOL_IF_KUNIT(pto_lc_st64);

void pto_lc_gather32(struct pto_lcache *lc, u32 *dst, const u32 *src,
		     s64 stride, u32 n)
{
	u32 i;

	if (!lc) {
		for (i = 0; i < n; i++)
			dst[i] = READ_ONCE(src[i * stride]);
		return;
	}
	for (i = 0; i < n; i++)
		dst[i] = pto_lc_ld32(lc, src + i * stride);
}
EXPORT_SYMBOL_IF_KUNIT(pto_lc_gather32);

void pto_lc_scatter32(struct pto_lcache *lc, u32 *dst, s64 stride,
		      const u32 *src, u32 n)
{
	u32 i;

	if (!lc) {
		for (i = 0; i < n; i++)
			WRITE_ONCE(dst[i * stride], src[i]);
		return;
	}
	for (i = 0; i < n; i++)
		pto_lc_st32(lc, dst + i * stride, src[i]);
}
EXPORT_SYMBOL_IF_KUNIT(pto_lc_scatter32);

static void pto_lc_drop(struct pto_lcache *lc, struct pto_lc_line *l)
{
	if (l->valid && l->dirty)
		pto_lc_writeback(lc, l);
	l->valid = false;
}

/*
 * A range longer than the cache is cleaned by walking the cache (each
 * line's tag tested), a shorter one by walking its own lines.
 */
void pto_lc_flush(struct pto_lcache *lc, const void *kva, size_t len)
{
	unsigned long first, last, tag;
	unsigned int i;

	if (!lc || !len)
		return;
	first = (unsigned long)kva >> PTO_LC_LINE_SHIFT;
	last = ((unsigned long)kva + len - 1) >> PTO_LC_LINE_SHIFT;
	if (last - first >= lc->lines) {
		for (i = 0; i < lc->lines; i++) {
			struct pto_lc_line *l = &lc->line[i];

			if (l->valid && l->tag >= first && l->tag <= last)
				pto_lc_drop(lc, l);
		}
		return;
	}
	for (tag = first; tag <= last; tag++) {
		struct pto_lc_line *l = &lc->line[tag & (lc->lines - 1)];

		if (l->valid && l->tag == tag)
			pto_lc_drop(lc, l);
	}
}
EXPORT_SYMBOL_IF_KUNIT(pto_lc_flush);

void pto_lc_flush_all(struct pto_lcache *lc)
{
	unsigned int i;

	if (!lc)
		return;
	for (i = 0; i < lc->lines; i++)
		if (lc->line[i].valid && lc->line[i].dirty)
			pto_lc_writeback(lc, &lc->line[i]);
}
EXPORT_SYMBOL_IF_KUNIT(pto_lc_flush_all);

void pto_lc_inval_all(struct pto_lcache *lc)
{
	unsigned int i;

	if (!lc)
		return;
	for (i = 0; i < lc->lines; i++)
		pto_lc_drop(lc, &lc->line[i]);
}
EXPORT_SYMBOL_IF_KUNIT(pto_lc_inval_all);

void pto_lc_read_stats(const struct pto_lcache *lc, struct pto_lc_stats *s)
{
	s->hits = READ_ONCE(lc->stats.hits);
	s->misses = READ_ONCE(lc->stats.misses);
	s->writebacks = READ_ONCE(lc->stats.writebacks);
}
EXPORT_SYMBOL_IF_KUNIT(pto_lc_read_stats);
