// SPDX-License-Identifier: MIT
/*
 * ptoctl trace: read a run trace written by the library's trace writer
 * (lib/trace/trace_json.c, Documentation/tracing.md) and print its
 * summary or draw its swimlane as SVG.
 *
 *   ptoctl trace summary FILE.json
 *   ptoctl trace svg FILE.json > run.svg
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ptoctl_trace.h"

/* ---- summary -------------------------------------------------------- */

struct tr_stat {
	uint64_t n, mean, p50, p99;
};

struct tr_func {
	const char *name;
	uint64_t func;
	uint64_t count;
	struct tr_stat exec, d2s, e2c;	/* execution; dispatch to start;
					 * end to completion seen */
};

struct tr_summary {
	struct tr_func *f;
	size_t nf;
	uint64_t tasks, wall, cp, cp_tasks, dropped;
	uint64_t *cp_path;		/* task ids, first to last */
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Mean (floor) and nearest-rank percentiles of @v[0..n), sorted here. */
static void tr_stat(uint64_t *v, size_t n, struct tr_stat *s)
{
	uint64_t sum = 0;
	size_t i;

	memset(s, 0, sizeof(*s));
	if (!n)
		return;
	qsort(v, n, sizeof(*v), cmp_u64);
	for (i = 0; i < n; i++)
		sum += v[i];
	s->n = n;
	s->mean = sum / n;
	s->p50 = v[(n * 50 + 99) / 100 - 1];
	s->p99 = v[(n * 99 + 99) / 100 - 1];
}

#define TR_HAS(t, s) ((t)->have & (1u << (s)))

static int cmp_task_key(const void *a, const void *b)
{
	const struct tr_task *x = *(struct tr_task *const *)a;
	const struct tr_task *y = *(struct tr_task *const *)b;

	if (x->run != y->run)
		return x->run < y->run ? -1 : 1;
	return x->task < y->task ? -1 : x->task > y->task;
}

static int cmp_task_start(const void *a, const void *b)
{
	const struct tr_task *x = *(struct tr_task *const *)a;
	const struct tr_task *y = *(struct tr_task *const *)b;

	return x->ts[TR_STARTED] < y->ts[TR_STARTED] ? -1 :
	       x->ts[TR_STARTED] > y->ts[TR_STARTED];
}

/* The longest chain of executions along the edges: tasks in start order
 * (a producer ends before its consumer starts), cp = own time + the
 * longest producer's. */
static int tr_critical(const struct tr_trace *tr, struct tr_summary *s)
{
	struct tr_task **byk = malloc((tr->n + 1) * sizeof(*byk));
	struct tr_task **bys = malloc((tr->n + 1) * sizeof(*bys));
	uint64_t *cp = calloc(tr->n + 1, sizeof(*cp));
	size_t *prev = calloc(tr->n + 1, sizeof(*prev));
	size_t i, j, best = 0, k;
	int ret = -ENOMEM;

	if (!byk || !bys || !cp || !prev)
		goto out;
	for (i = 0; i < tr->n; i++)
		byk[i] = bys[i] = &tr->t[i];
	qsort(byk, tr->n, sizeof(*byk), cmp_task_key);
	qsort(bys, tr->n, sizeof(*bys), cmp_task_start);
	for (i = 0; i < tr->n; i++) {
		struct tr_task *t = bys[i];

		cp[t - tr->t] = t->ts[TR_ENDED] - t->ts[TR_STARTED];
		prev[t - tr->t] = SIZE_MAX;
		for (j = 0; j < t->ndeps; j++) {
			struct tr_task key = { .run = t->run, .task = t->deps[j] };
			struct tr_task *kp = &key, **hit;
			uint64_t c;

			hit = bsearch(&kp, byk, tr->n, sizeof(*byk), cmp_task_key);
			if (!hit)
				continue;
			c = cp[*hit - tr->t] + t->ts[TR_ENDED] - t->ts[TR_STARTED];
			if (c > cp[t - tr->t]) {
				cp[t - tr->t] = c;
				prev[t - tr->t] = (size_t)(*hit - tr->t);
			}
		}
	}
	for (i = 1; i < tr->n; i++)
		if (cp[i] > cp[best])
			best = i;
	s->cp = tr->n ? cp[best] : 0;
	for (k = best, s->cp_tasks = 0; tr->n && k != SIZE_MAX; k = prev[k])
		s->cp_tasks++;
	s->cp_path = calloc(s->cp_tasks + 1, sizeof(*s->cp_path));
	if (!s->cp_path)
		goto out;
	for (k = best, j = s->cp_tasks; j; k = prev[k])
		s->cp_path[--j] = tr->t[k].task;
	ret = 0;
out:
	free(byk);
	free(bys);
	free(cp);
	free(prev);
	return ret;
}

static void tr_summary_free(struct tr_summary *s)
{
	free(s->f);
	free(s->cp_path);
	memset(s, 0, sizeof(*s));
}

static int tr_summarize(const struct tr_trace *tr, struct tr_summary *s)
{
	uint64_t *ex = malloc((tr->n + 1) * 3 * sizeof(*ex));
	uint64_t *d2 = ex + tr->n + 1, *e2 = d2 + tr->n + 1;
	uint64_t first = UINT64_MAX, last = 0;
	size_t i, j;
	int ret;

	memset(s, 0, sizeof(*s));
	s->f = calloc(tr->n + 1, sizeof(*s->f));
	if (!ex || !s->f) {
		free(ex);
		free(s->f);
		return -ENOMEM;
	}
	s->tasks = tr->n;
	s->dropped = tr->dropped;
	for (i = 0; i < tr->n; i++) {
		const struct tr_task *t = &tr->t[i];

		for (j = 0; j < s->nf; j++)
			if (s->f[j].func == t->func && !strcmp(s->f[j].name, t->name))
				break;
		if (j == s->nf)
			s->f[s->nf++] = (struct tr_func){ .name = t->name,
							  .func = t->func };
		for (j = 0; j < TR_NSTAMP; j++) {
			if (!TR_HAS(t, j))
				continue;
			if (t->ts[j] < first)
				first = t->ts[j];
			if (t->ts[j] > last)
				last = t->ts[j];
		}
	}
	s->wall = tr->n ? last - first : 0;
	for (j = 0; j < s->nf; j++) {
		struct tr_func *f = &s->f[j];
		size_t ne = 0, nd = 0, nc = 0;

		for (i = 0; i < tr->n; i++) {
			const struct tr_task *t = &tr->t[i];

			if (t->func != f->func || strcmp(t->name, f->name))
				continue;
			f->count++;
			ex[ne++] = t->ts[TR_ENDED] - t->ts[TR_STARTED];
			if (TR_HAS(t, TR_DISPATCHED) &&
			    t->ts[TR_STARTED] >= t->ts[TR_DISPATCHED])
				d2[nd++] = t->ts[TR_STARTED] - t->ts[TR_DISPATCHED];
			if (TR_HAS(t, TR_COMPLETED) &&
			    t->ts[TR_COMPLETED] >= t->ts[TR_ENDED])
				e2[nc++] = t->ts[TR_COMPLETED] - t->ts[TR_ENDED];
		}
		tr_stat(ex, ne, &f->exec);
		tr_stat(d2, nd, &f->d2s);
		tr_stat(e2, nc, &f->e2c);
	}
	free(ex);
	ret = tr_critical(tr, s);
	if (ret)
		tr_summary_free(s);
	return ret;
}

/* @ns as microseconds, exact, in @b. */
static const char *us(char b[32], uint64_t ns)
{
	snprintf(b, 32, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
	return b;
}

static void put_stat(FILE *f, const struct tr_stat *st, bool p50)
{
	char b[32];

	if (!st->n) {
		fprintf(f, p50 ? " %10s %10s %10s" : " %10s %10s", "-", "-", "-");
		return;
	}
	fprintf(f, " %10s", us(b, st->mean));
	if (p50)
		fprintf(f, " %10s", us(b, st->p50));
	fprintf(f, " %10s", us(b, st->p99));
}

static void tr_print_summary(FILE *f, const struct tr_summary *s)
{
	char b[32];
	size_t i;

	fprintf(f, "%" PRIu64 " tasks, %zu functions, %" PRIu64
		" records dropped; times in us\n", s->tasks, s->nf, s->dropped);
	fprintf(f, "%-16s %6s %10s %10s %10s %10s %10s %10s %10s\n", "function",
		"count", "exec mean", "p50", "p99", "d->s mean", "p99",
		"e->c mean", "p99");
	for (i = 0; i < s->nf; i++) {
		const struct tr_func *fn = &s->f[i];

		fprintf(f, "%-16s %6" PRIu64, fn->name, fn->count);
		put_stat(f, &fn->exec, true);
		put_stat(f, &fn->d2s, false);
		put_stat(f, &fn->e2c, false);
		fputc('\n', f);
	}
	fprintf(f, "d->s: dispatched to started; e->c: ended to completion "
		"seen\n");
	fprintf(f, "critical path %s us", us(b, s->cp));
	fprintf(f, " of %s us wall", us(b, s->wall));
	if (s->wall)
		fprintf(f, " (%.1f%%)", 100.0 * (double)s->cp / (double)s->wall);
	fprintf(f, ", %" PRIu64 " tasks:", s->cp_tasks);
	for (i = 0; i < s->cp_tasks && i < 16; i++)
		fprintf(f, "%s%" PRIu64, i ? " -> " : " ", s->cp_path[i]);
	fprintf(f, "%s\n", s->cp_tasks > 16 ? " ..." : "");
}

/* ---- swimlane SVG ---------------------------------------------------- */

/* Function colours, by the functions' names in order. */
static const char *const tr_palette[] = {
	"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
	"#b07aa1", "#ff9da7", "#9c755f", "#1f77b4", "#d62728", "#8c564b",
};
#define TR_NPALETTE (sizeof(tr_palette) / sizeof(tr_palette[0]))

#define SVG_W 1200
#define SVG_LEFT 90
#define SVG_RIGHT 20
#define SVG_TOP 30
#define SVG_ROW_H 24		/* a row: a 20 px lane and a 4 px gap */
#define SVG_LANE_H 20
#define SVG_BAR_H 16

struct svg_row {
	int64_t pid, tid;
	const char *name;
	char fallback[32];
};

/* AIC_n rows, then AIV_n, then the rest (host workers), n in order. */
static int svg_row_rank(const struct svg_row *r, long *n)
{
	const char *u = strchr(r->name, '_');

	*n = u ? strtol(u + 1, NULL, 10) : 0;
	if (!strncmp(r->name, "AIC_", 4))
		return 0;
	if (!strncmp(r->name, "AIV_", 4))
		return 1;
	return 2;
}

static int cmp_row(const void *a, const void *b)
{
	const struct svg_row *x = a, *y = b;
	long nx, ny;
	int rx, ry;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	rx = svg_row_rank(x, &nx);
	ry = svg_row_rank(y, &ny);
	if (rx != ry)
		return rx - ry;
	if (nx != ny)
		return nx < ny ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void svg_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '&')
			fputs("&amp;", f);
		else if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '"')
			fputs("&quot;", f);
		else
			fputc(*s, f);
	}
}

/* The task rows, one per core (or host worker) that ran a task, sorted. */
static size_t svg_rows(const struct tr_trace *tr, struct svg_row *rows)
{
	size_t i, j, n = 0;

	for (i = 0; i < tr->n; i++) {
		const struct tr_task *t = &tr->t[i];

		for (j = 0; j < n; j++)
			if (rows[j].pid == t->pid && rows[j].tid == t->tid)
				break;
		if (j < n)
			continue;
		rows[n] = (struct svg_row){ t->pid, t->tid, NULL, "" };
		for (j = 0; j < tr->nrow; j++)
			if (tr->row[j].pid == t->pid && tr->row[j].tid == t->tid)
				rows[n].name = tr->row[j].name;
		if (!rows[n].name) {
			snprintf(rows[n].fallback, sizeof(rows[n].fallback),
				 "%s_%" PRId64, t->pid == TR_PID_HOST ?
				 "worker" : "core", t->tid - 1);
			rows[n].name = rows[n].fallback;
		}
		n++;
	}
	qsort(rows, n, sizeof(*rows), cmp_row);
	return n;
}

/* A tick step of 1, 2 or 5 times a power of ten, about @span / 8, and the
 * unit its labels are in. */
static uint64_t svg_step(uint64_t span, uint64_t *div, const char **unit)
{
	uint64_t raw = span / 8 ? span / 8 : 1, p = 1, step;

	while (p <= raw / 10)
		p *= 10;
	step = raw <= p ? p : raw <= 2 * p ? 2 * p : raw <= 5 * p ? 5 * p : 10 * p;
	if (step < 1000) {
		*div = 1;
		*unit = "ns";
	} else if (step < 1000000) {
		*div = 1000;
		*unit = "\xc2\xb5s";
	} else if (step < 1000000000) {
		*div = 1000000;
		*unit = "ms";
	} else {
		*div = 1000000000;
		*unit = "s";
	}
	return step;
}

static const char *svg_colour(const char *name, const char **fn, size_t nf)
{
	const char **hit = bsearch(&name, fn, nf, sizeof(*fn), cmp_str);

	return tr_palette[(size_t)(hit - fn) % TR_NPALETTE];
}

static int tr_svg(FILE *f, const struct tr_trace *tr)
{
	struct svg_row *rows = calloc(tr->n + 1, sizeof(*rows));
	const char **fn = calloc(tr->n + 1, sizeof(*fn));
	uint64_t t0 = UINT64_MAX, t1 = 0, span, step, div, v;
	double plot = SVG_W - SVG_LEFT - SVG_RIGHT, scale;
	size_t i, j, nrow, nf = 0;
	int axis_y, h;
	const char *unit;

	if (!rows || !fn) {
		free(rows);
		free(fn);
		return -ENOMEM;
	}
	nrow = svg_rows(tr, rows);
	for (i = 0; i < tr->n; i++) {
		const struct tr_task *t = &tr->t[i];

		if (t->ts[TR_STARTED] < t0)
			t0 = t->ts[TR_STARTED];
		if (t->ts[TR_ENDED] > t1)
			t1 = t->ts[TR_ENDED];
		for (j = 0; j < nf && strcmp(fn[j], t->name); j++)
			;
		if (j == nf)
			fn[nf++] = t->name;
	}
	qsort(fn, nf, sizeof(*fn), cmp_str);
	if (!tr->n)
		t0 = t1 = 0;
	span = t1 > t0 ? t1 - t0 : 1;
	scale = plot / (double)span;
	step = svg_step(span, &div, &unit);
	axis_y = SVG_TOP + (int)nrow * SVG_ROW_H + 4;
	h = axis_y + 40 + (int)((nf + 3) / 4) * 18 + 10;

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" "
		"font-size=\"11\">\n<rect width=\"%d\" height=\"%d\" "
		"fill=\"#ffffff\"/>\n", SVG_W, h, SVG_W, h, SVG_W, h);
	fprintf(f, "<text x=\"%d\" y=\"18\" font-size=\"13\">%zu tasks on %zu "
		"rows over %.3f %s; %" PRIu64 " records dropped</text>\n",
		SVG_LEFT, tr->n, nrow, (double)span / (double)div, unit,
		tr->dropped);
	for (i = 0; i < nrow; i++) {
		int y = SVG_TOP + (int)i * SVG_ROW_H;

		fprintf(f, "<rect class=\"lane\" x=\"%d\" y=\"%d\" width=\"%.0f\" "
			"height=\"%d\" fill=\"#eeeeee\"/>\n<text class=\"label\" "
			"x=\"%d\" y=\"%d\" text-anchor=\"end\">", SVG_LEFT, y, plot,
			SVG_LANE_H, SVG_LEFT - 6, y + 14);
		svg_text(f, rows[i].name);
		fprintf(f, "</text>\n");
	}
	for (i = 0; i < tr->n; i++) {
		const struct tr_task *t = &tr->t[i];
		uint64_t d = t->ts[TR_ENDED] - t->ts[TR_STARTED];
		struct svg_row key = { .pid = t->pid, .tid = t->tid };
		double w = (double)d * scale;

		for (j = 0; j < nrow; j++)
			if (rows[j].pid == key.pid && rows[j].tid == key.tid)
				break;
		fprintf(f, "<rect class=\"task\" x=\"%.2f\" y=\"%d\" width=\"%.2f\" "
			"height=\"%d\" fill=\"%s\"><title>", SVG_LEFT +
			(double)(t->ts[TR_STARTED] - t0) * scale, SVG_TOP +
			(int)j * SVG_ROW_H + (SVG_LANE_H - SVG_BAR_H) / 2,
			w < 0.5 ? 0.5 : w, SVG_BAR_H,
			svg_colour(t->name, fn, nf));
		svg_text(f, t->name);
		fprintf(f, ": run %" PRIu64 " task %" PRIu64 ", %" PRIu64
			".%03" PRIu64 " \xc2\xb5s</title></rect>\n", t->run,
			t->task, d / 1000, d % 1000);
	}
	fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%.0f\" y2=\"%d\" "
		"stroke=\"#000000\"/>\n", SVG_LEFT, axis_y, SVG_LEFT + plot, axis_y);
	for (v = 0; v <= span; v += step) {
		double x = SVG_LEFT + (double)v * scale;

		fprintf(f, "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\" "
			"stroke=\"#000000\"/><text class=\"tick\" x=\"%.2f\" "
			"y=\"%d\" text-anchor=\"middle\">%g</text>\n", x, axis_y,
			x, axis_y + 5, x, axis_y + 17, (double)v / (double)div);
	}
	fprintf(f, "<text x=\"%.0f\" y=\"%d\" text-anchor=\"middle\">time (%s) "
		"from the first task's start</text>\n", SVG_LEFT + plot / 2,
		axis_y + 32, unit);
	for (i = 0; i < nf; i++) {
		int x = SVG_LEFT + (int)(i % 4) * 260;
		int y = axis_y + 44 + (int)(i / 4) * 18;

		fprintf(f, "<rect class=\"key\" x=\"%d\" y=\"%d\" width=\"12\" "
			"height=\"12\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">", x, y,
			tr_palette[i % TR_NPALETTE], x + 18, y + 10);
		svg_text(f, fn[i]);
		fprintf(f, "</text>\n");
	}
	fprintf(f, "</svg>\n");
	free(rows);
	free(fn);
	return ferror(f) ? -EIO : 0;
}

int ptoctl_trace(int argc, char **argv)
{
	struct tr_summary s;
	struct tr_trace tr;
	int ret;

	if (argc != 3 || (strcmp(argv[1], "summary") && strcmp(argv[1], "svg"))) {
		fprintf(stderr, "usage: ptoctl %s\n", PTOCTL_TRACE_USAGE);
		return -EINVAL;
	}
	ret = tr_load(argv[2], &tr);
	if (ret)
		return ret;
	if (!strcmp(argv[1], "svg")) {
		ret = tr_svg(stdout, &tr);
	} else {
		ret = tr_summarize(&tr, &s);
		if (!ret) {
			tr_print_summary(stdout, &s);
			tr_summary_free(&s);
		}
	}
	if (!ret && fflush(stdout))
		ret = -EIO;
	if (ret)
		fprintf(stderr, "ptoctl trace %s: %s\n", argv[1], strerror(-ret));
	tr_free(&tr);
	return ret;
}
