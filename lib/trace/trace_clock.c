// SPDX-License-Identifier: MIT
/*
 * The trace's clocks: TSC stamps to CLOCK_MONOTONIC ns, for the writer. A
 * linear fit between the trace's create and its write, clamped to the
 * knots (clock reads with a TSC read beside them, trace_clock_stamp()),
 * which makes the order against the core's stamps exact; why the clamp's
 * bounds never cross is in Documentation/tracing.md, "Clocks".
 */
#include <stdlib.h>
#include "trace/trace_priv.h"

void trace_clock_pair(uint64_t *tick, uint64_t *ns)
{
#if defined(__x86_64__) || defined(__i386__)
	uint64_t best = UINT64_MAX;
	int i;

	/* The clock read between two TSC reads: the closest of a few. */
	for (i = 0; i < 5; i++) {
		uint64_t a = trace_tsc_ordered(), n = trace_now();
		uint64_t b = trace_tsc_ordered();

		if (b - a < best) {
			best = b - a;
			*tick = a + (b - a) / 2;
			*ns = n;
		}
	}
#else
	*tick = 0;
	*ns = trace_now();
#endif
}

static int cmp_knot(const void *a, const void *b)
{
	const struct trace_knot *x = a, *y = b;

	return x->tsc < y->tsc ? -1 : x->tsc > y->tsc;
}

void trace_conv_init(struct trace_conv *c, uint64_t tick0, uint64_t ns0,
		     uint64_t tick1, uint64_t ns1, struct trace_knot *pre,
		     size_t npre, struct trace_knot *post, size_t npost)
{
	size_t i;

	*c = (struct trace_conv){ tick0, ns0, tick1, ns1, pre, npre, post,
				  npost };
	if (npre)
		qsort(pre, npre, sizeof(*pre), cmp_knot);
	if (npost)
		qsort(post, npost, sizeof(*post), cmp_knot);
	/* pre[i].ns: the least of pre[i..]; post[i].ns: the greatest of
	 * post[..i]. */
	for (i = npre; i-- > 1;)
		if (pre[i].ns < pre[i - 1].ns)
			pre[i - 1].ns = pre[i].ns;
	for (i = 1; i < npost; i++)
		if (post[i].ns < post[i - 1].ns)
			post[i].ns = post[i - 1].ns;
}

void trace_conv_fini(struct trace_conv *c)
{
	free(c->pre);
	free(c->post);
	c->pre = c->post = NULL;
}

uint64_t trace_conv_ns(const struct trace_conv *c, uint64_t ticks)
{
	__int128 dt = (__int128)ticks - (__int128)c->tick0;
	size_t lo, hi;
	uint64_t ns;

	if (c->tick1 == c->tick0)
		ns = c->ns0;
	else
		ns = (uint64_t)((__int128)c->ns0 + dt *
				(__int128)(c->ns1 - c->ns0) /
				(__int128)(c->tick1 - c->tick0));
	/* L: the last POST knot at or below ticks. */
	lo = 0;
	hi = c->npost;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->post[mid].tsc <= ticks)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && ns < c->post[lo - 1].ns)
		ns = c->post[lo - 1].ns;
	/* U: the first PRE knot at or above ticks. */
	lo = 0;
	hi = c->npre;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->pre[mid].tsc < ticks)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < c->npre && ns > c->pre[lo].ns)
		ns = c->pre[lo].ns;
	return ns;
}
