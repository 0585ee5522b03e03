// SPDX-License-Identifier: MIT
/*
 * The trace writer: Chrome trace-event JSON, the format Perfetto and
 * chrome://tracing load (Documentation/tracing.md). Records from every
 * buffer are joined per task; each task execution becomes one complete
 * event on its core's (or host worker's) row with all its stamps in
 * args, each dependency edge a flow, each scheduler phase a complete
 * event on its thread, and the READY depth and the tasks in flight two
 * counter tracks. ts / dur are microseconds from the earliest record,
 * printed to the nanosecond; args stamps are nanoseconds from it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <linux/pto.h>
#include "trace/trace_priv.h"

/* Process ids of the roles (a pid of 0 means "none" to some viewers). */
#define PID_ORCH 1
#define PID_DEVICE 2
#define PID_HOST 3
#define PID_SCHED0 16

struct ent {
	struct trace_rec r;
	uint32_t role, index;
};

struct wtask {
	uint64_t run, task;
	uint64_t ts[TRACE_CONSUMED + 1];
	uint32_t have;			/* bit per enum trace_kind */
	uint32_t func;
	uint16_t core;
	int32_t sched;			/* dispatching thread, -1: none */
	int32_t worker;			/* host worker, -1: none */
	size_t e0, ne;			/* its fan-in edges in edges[] */
};

struct delta {
	uint64_t ts;
	int ready, inflight;
};

static int cmp_ent(const void *a, const void *b)
{
	const struct trace_rec *x = &((const struct ent *)a)->r;
	const struct trace_rec *y = &((const struct ent *)b)->r;

	if (x->run != y->run)
		return x->run < y->run ? -1 : 1;
	if (x->task != y->task)
		return x->task < y->task ? -1 : 1;
	if (x->aux != y->aux)
		return x->aux < y->aux ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (int)x->kind - (int)y->kind;
}

static int cmp_delta(const void *a, const void *b)
{
	const struct delta *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static void put_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* @ns nanoseconds after t0 as microseconds, exact. */
static void put_us(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
}

static void put_func(FILE *f, struct trace *t, uint32_t func)
{
	char buf[32];
	uint32_t i;

	for (i = 0; i < t->nfuncs; i++) {
		if (t->funcs[i].id == func) {
			put_str(f, t->funcs[i].name);
			return;
		}
	}
	snprintf(buf, sizeof(buf), "func_%" PRIu32, func);
	put_str(f, buf);
}

static void meta(FILE *f, const char *what, int pid, int tid,
		 const char *name, long sort)
{
	fprintf(f, "{\"ph\":\"M\",\"name\":\"%s_name\",\"pid\":%d,\"tid\":%d,"
		"\"args\":{\"name\":", what, pid, tid);
	put_str(f, name);
	fprintf(f, "}},\n{\"ph\":\"M\",\"name\":\"%s_sort_index\",\"pid\":%d,"
		"\"tid\":%d,\"args\":{\"sort_index\":%ld}},\n", what, pid, tid,
		sort);
}

/* Rows of the device process, AIC_n then AIV_n, n counted per type. */
static void core_rows(FILE *f, struct trace *t, const uint8_t *used)
{
	uint32_t c, n[3] = { 0, 0, 0 };
	char name[32];

	for (c = 0; c < t->ncores; c++) {
		uint8_t type = t->core_type[c];

		if (type == PTO_CORE_AIC || type == PTO_CORE_AIV)
			snprintf(name, sizeof(name), "%s_%" PRIu32,
				 type == PTO_CORE_AIC ? "AIC" : "AIV", n[type]++);
		else
			snprintf(name, sizeof(name), "core_%" PRIu32, c);
		if (used[c] || type)
			meta(f, "thread", PID_DEVICE, (int)c + 1, name,
			     (long)type * 65536 + c);
	}
}

static const char *const phase_names[TRACE_PHASE_NR] = {
	[TRACE_PHASE_REAP] = "reap",
	[TRACE_PHASE_DISPATCH] = "dispatch",
	[TRACE_PHASE_SLEEP] = "sleep",
};

static const char *const stamp_names[TRACE_CONSUMED + 1] = {
	[TRACE_SUBMITTED] = "submitted", [TRACE_READY] = "ready",
	[TRACE_DISPATCHED] = "dispatched", [TRACE_STARTED] = "started",
	[TRACE_ENDED] = "ended", [TRACE_COMPLETED] = "completed",
	[TRACE_CONSUMED] = "consumed",
};

#define HAVE(k) (1u << (k))
#define RAN (HAVE(TRACE_STARTED) | HAVE(TRACE_ENDED))

/* Joins @e[0..n) (sorted) into tasks; edges stay in @e, indexed. */
static size_t join_tasks(struct ent *e, size_t n, struct wtask *tk)
{
	size_t i, nt = 0;

	for (i = 0; i < n; i++) {
		const struct trace_rec *r = &e[i].r;
		struct wtask *w;
		unsigned int k = r->kind;

		if (k == TRACE_EDGE || k == TRACE_PHASE_BEGIN ||
		    k == TRACE_PHASE_END || k >= TRACE_KIND_NR)
			continue;
		w = nt ? &tk[nt - 1] : NULL;
		if (!w || w->run != r->run || w->task != r->task) {
			w = &tk[nt++];
			memset(w, 0, sizeof(*w));
			w->run = r->run;
			w->task = r->task;
			w->core = TRACE_NO_CORE;
			w->sched = -1;
			w->worker = -1;
		}
		/* The function as the submit and the executing side say. */
		if (k != TRACE_READY && k != TRACE_COMPLETED &&
		    k != TRACE_CONSUMED)
			w->func = r->func;
		if (k == TRACE_CB_BEGIN || k == TRACE_CB_END) {
			k = k == TRACE_CB_BEGIN ? TRACE_STARTED : TRACE_ENDED;
			w->worker = (int32_t)e[i].index;
		}
		if (r->core != TRACE_NO_CORE)
			w->core = r->core;
		if (k == TRACE_DISPATCHED && e[i].role == TRACE_ROLE_SCHED)
			w->sched = (int32_t)e[i].index;
		w->ts[k] = r->ts;
		w->have |= HAVE(k);
	}
	return nt;
}

static struct wtask *find_task(struct wtask *tk, size_t nt, uint64_t run,
			       uint64_t task)
{
	size_t lo = 0, hi = nt;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		struct wtask *w = &tk[mid];

		if (w->run == run && w->task == task)
			return w;
		if (w->run < run || (w->run == run && w->task < task))
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void task_row(const struct wtask *w, int *pid, int *tid)
{
	if (w->worker >= 0) {
		*pid = PID_HOST;
		*tid = w->worker + 1;
	} else {
		*pid = PID_DEVICE;
		*tid = w->core + 1;
	}
}

static void task_event(FILE *f, struct trace *t, const struct wtask *w,
		       const struct ent *edges, uint64_t t0)
{
	int pid, tid, k;
	size_t i;

	task_row(w, &pid, &tid);
	fprintf(f, "{\"ph\":\"X\",\"cat\":\"task\",\"name\":");
	put_func(f, t, w->func);
	fprintf(f, ",\"pid\":%d,\"tid\":%d,\"ts\":", pid, tid);
	put_us(f, w->ts[TRACE_STARTED] - t0);
	fprintf(f, ",\"dur\":");
	put_us(f, w->ts[TRACE_ENDED] - w->ts[TRACE_STARTED]);
	fprintf(f, ",\"args\":{\"run\":%" PRIu64 ",\"task\":%" PRIu64
		",\"func\":%" PRIu32, w->run, w->task, w->func);
	if (w->worker >= 0)
		fprintf(f, ",\"worker\":%" PRId32, w->worker);
	else
		fprintf(f, ",\"core\":%u", w->core);
	if (w->sched >= 0)
		fprintf(f, ",\"sched\":%" PRId32, w->sched);
	for (k = TRACE_SUBMITTED; k <= TRACE_CONSUMED; k++)
		if (w->have & HAVE(k))
			fprintf(f, ",\"%s\":%" PRIu64, stamp_names[k],
				w->ts[k] - t0);
	fprintf(f, ",\"deps\":[");
	for (i = 0; i < w->ne; i++)
		fprintf(f, "%s%" PRIu64, i ? "," : "", edges[w->e0 + i].r.aux);
	fprintf(f, "]}},\n");
}

/* A flow from @p's execution to @c's: "s" inside p's slice, "f" bound to
 * the slice enclosing c's start ("bp":"e"). */
static void flow_event(FILE *f, const struct wtask *p, const struct wtask *c,
		       uint64_t id, uint64_t t0)
{
	int pid, tid;

	task_row(p, &pid, &tid);
	fprintf(f, "{\"ph\":\"s\",\"cat\":\"dep\",\"name\":\"dep\",\"id\":%"
		PRIu64 ",\"pid\":%d,\"tid\":%d,\"ts\":", id, pid, tid);
	put_us(f, p->ts[TRACE_STARTED] - t0);
	task_row(c, &pid, &tid);
	fprintf(f, "},\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"dep\",\"name\":"
		"\"dep\",\"id\":%" PRIu64 ",\"pid\":%d,\"tid\":%d,\"ts\":", id,
		pid, tid);
	put_us(f, c->ts[TRACE_STARTED] - t0);
	fprintf(f, "},\n");
}

/* The scheduler threads' phases, begin paired with the next end. */
static void phase_events(FILE *f, const struct ent *e, size_t n, uint64_t t0)
{
	uint64_t open[TRACE_PHASE_NR];
	uint32_t have = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct trace_rec *r = &e[i].r;
		unsigned int ph = (unsigned int)r->aux;

		if ((r->kind != TRACE_PHASE_BEGIN &&
		     r->kind != TRACE_PHASE_END) || e[i].role != TRACE_ROLE_SCHED)
			continue;
		if (ph >= TRACE_PHASE_NR)
			continue;
		if (i && (e[i - 1].role != e[i].role ||
			  e[i - 1].index != e[i].index))
			have = 0;	/* the next buffer */
		if (r->kind == TRACE_PHASE_BEGIN) {
			open[ph] = r->ts;
			have |= 1u << ph;
			continue;
		}
		if (!(have & (1u << ph)))
			continue;
		have &= ~(1u << ph);
		fprintf(f, "{\"ph\":\"X\",\"cat\":\"phase\",\"name\":\"%s\","
			"\"pid\":%" PRIu32 ",\"tid\":1,\"ts\":", phase_names[ph],
			PID_SCHED0 + e[i].index);
		put_us(f, open[ph] - t0);
		fprintf(f, ",\"dur\":");
		put_us(f, r->ts - open[ph]);
		fprintf(f, "},\n");
	}
}

static int counter_events(FILE *f, const struct wtask *tk, size_t nt,
			  uint64_t t0)
{
	struct delta *d = malloc((3 * nt + 1) * sizeof(*d));
	int ready = 0, inflight = 0;
	size_t i, n = 0;

	if (!d)
		return -ENOMEM;
	for (i = 0; i < nt; i++) {
		if (tk[i].have & HAVE(TRACE_READY))
			d[n++] = (struct delta){ tk[i].ts[TRACE_READY], 1, 0 };
		if (tk[i].have & HAVE(TRACE_DISPATCHED))
			d[n++] = (struct delta){ tk[i].ts[TRACE_DISPATCHED],
						 -1, 1 };
		if (tk[i].have & HAVE(TRACE_COMPLETED))
			d[n++] = (struct delta){ tk[i].ts[TRACE_COMPLETED],
						 0, -1 };
	}
	qsort(d, n, sizeof(*d), cmp_delta);
	for (i = 0; i < n; i++) {
		ready += d[i].ready;
		inflight += d[i].inflight;
		if (i + 1 < n && d[i + 1].ts == d[i].ts)
			continue;	/* one sample per instant */
		fprintf(f, "{\"ph\":\"C\",\"name\":\"READY queue\",\"pid\":%d,"
			"\"tid\":1,\"ts\":", PID_ORCH);
		put_us(f, d[i].ts - t0);
		fprintf(f, ",\"args\":{\"tasks\":%d}},\n{\"ph\":\"C\",\"name\":"
			"\"in flight\",\"pid\":%d,\"tid\":1,\"ts\":", ready,
			PID_ORCH);
		put_us(f, d[i].ts - t0);
		fprintf(f, ",\"args\":{\"tasks\":%d}},\n", inflight);
	}
	free(d);
	return 0;
}

static bool is_task_kind(unsigned int k)
{
	return k && k < TRACE_KIND_NR && k != TRACE_EDGE &&
	       k != TRACE_PHASE_BEGIN && k != TRACE_PHASE_END;
}

/* The knots among @e[0..n) (aux: their TSC, then cleared), and the
 * conversion of the TSC stamps they make. */
static int conv_build(struct trace *t, struct ent *e, size_t n,
		      struct trace_conv *c)
{
	struct trace_knot *pre = malloc((n ? n : 1) * sizeof(*pre));
	struct trace_knot *post = malloc((n ? n : 1) * sizeof(*post));
	uint64_t tick1 = 0, ns1 = 0;
	size_t i, npre = 0, npost = 0;

	if (!pre || !post) {
		free(pre);
		free(post);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		struct trace_rec *r = &e[i].r;

		if (r->clk == TRACE_CLK_PRE)
			pre[npre++] = (struct trace_knot){ r->aux, r->ts };
		else if (r->clk == TRACE_CLK_POST)
			post[npost++] = (struct trace_knot){ r->aux, r->ts };
		else
			continue;
		r->aux = 0;
		r->clk = TRACE_CLK_NS;
	}
	if (t->ticks)
		trace_clock_pair(&tick1, &ns1);
	trace_conv_init(c, t->tick0, t->ns0, tick1, ns1, pre, npre, post,
			npost);
	return 0;
}

/*
 * Every record of every buffer (a paired one as its two events), and
 * the roles' rows; stamps in ns. The
 * run may still be recording (a scheduler thread's phases): each
 * buffer's count is read once, so what is copied is the snapshot the
 * array was sized for. Buffers are pushed at the list's head, so the
 * list below @head does not change.
 */
static struct ent *gather(struct trace *t, size_t *np, uint64_t *dropped,
			  uint32_t *max_sched, uint32_t *max_host)
{
	struct trace_buf *b, *head = __atomic_load_n(&t->bufs, __ATOMIC_ACQUIRE);
	size_t n = 0, nb = 0, i, k;
	struct trace_conv conv;
	struct ent *e = NULL;
	uint32_t *cnt;

	*dropped = 0;
	for (b = head; b; b = b->next)
		nb++;
	cnt = malloc((nb ? nb : 1) * sizeof(*cnt));
	if (!cnt)
		return NULL;
	for (b = head, k = 0; b; b = b->next, k++) {
		/* Acquire: pairs with trace_put()'s release of n. */
		cnt[k] = __atomic_load_n(&b->n, __ATOMIC_ACQUIRE);
		n += cnt[k];
	}
	/* Twice: a paired record (trace_task2) is two events. */
	e = malloc((n ? 2 * n : 1) * sizeof(*e));
	if (!e)
		goto out;
	n = 0;
	for (b = head, k = 0; b; b = b->next, k++) {
		*dropped += __atomic_load_n(&b->dropped, __ATOMIC_RELAXED);
		if (b->role == TRACE_ROLE_SCHED && b->index + 1 > *max_sched)
			*max_sched = b->index + 1;
		if (b->role == TRACE_ROLE_HOST && b->index + 1 > *max_host)
			*max_host = b->index + 1;
		for (i = 0; i < cnt[k]; i++) {
			struct ent *x = &e[n++];

			*x = (struct ent){ b->rec[i], b->role, b->index };
			if (x->r.clk <= TRACE_CLK_TICKS &&
			    is_task_kind(x->r.kind) && x->r.aux) {
				unsigned int k2 = (unsigned int)(x->r.aux - 1);

				x->r.aux = 0;
				if (is_task_kind(k2)) {
					e[n] = *x;
					e[n++].r.kind = (uint8_t)k2;
				}
			}
		}
	}
	if (conv_build(t, e, n, &conv)) {
		free(e);
		e = NULL;
		goto out;
	}
	for (i = 0; i < n; i++)
		if (e[i].r.clk == TRACE_CLK_TICKS)
			e[i].r.ts = trace_conv_ns(&conv, e[i].r.ts);
	trace_conv_fini(&conv);
	*np = n;
out:
	free(cnt);
	return e;
}

static int write_events(FILE *f, struct trace *t, struct ent *e, size_t n,
			uint64_t dropped, uint32_t nsched, uint32_t nhost)
{
	struct wtask *tk = malloc((n ? n : 1) * sizeof(*tk));
	uint8_t *used = calloc(t->ncores ? t->ncores : 1, 1);
	uint64_t t0 = UINT64_MAX, flow = 0;
	size_t i, nt, nran = 0, j = 0;
	char name[32];
	int ret = -ENOMEM;

	if (!tk || !used)
		goto out;
	for (i = 0; i < n; i++)
		if (e[i].r.ts < t0)
			t0 = e[i].r.ts;
	if (!n)
		t0 = 0;
	/* Phases keep their buffer's order (each buffer is in time order);
	 * the rest is sorted by (run, task). */
	phase_events(f, e, n, t0);
	qsort(e, n, sizeof(*e), cmp_ent);
	nt = join_tasks(e, n, tk);
	for (i = 0; i < nt; i++) {
		struct wtask *w = &tk[i];

		while (j < n && (e[j].r.kind != TRACE_EDGE || e[j].r.run < w->run ||
				 (e[j].r.run == w->run && e[j].r.task < w->task)))
			j++;
		w->e0 = j;
		while (j < n && e[j].r.kind == TRACE_EDGE &&
		       e[j].r.run == w->run && e[j].r.task == w->task) {
			if (j == w->e0 || e[j].r.aux != e[j - 1].r.aux)
				e[w->e0 + w->ne++] = e[j];	/* dedup */
			j++;
		}
		if (w->core != TRACE_NO_CORE && w->core < t->ncores &&
		    w->worker < 0)
			used[w->core] = 1;
	}
	meta(f, "process", PID_ORCH, 1, "orchestrator", 0);
	meta(f, "thread", PID_ORCH, 1, "orchestrator", 0);
	meta(f, "process", PID_DEVICE, 1, "device cores", 1);
	core_rows(f, t, used);
	if (nhost)
		meta(f, "process", PID_HOST, 1, "host workers", 2);
	for (i = 0; i < nhost; i++) {
		snprintf(name, sizeof(name), "worker_%zu", i);
		meta(f, "thread", PID_HOST, (int)i + 1, name, (long)i);
	}
	for (i = 0; i < nsched; i++) {
		snprintf(name, sizeof(name), "scheduler %zu", i);
		meta(f, "process", PID_SCHED0 + (int)i, 1, name, 3 + (long)i);
		meta(f, "thread", PID_SCHED0 + (int)i, 1, "phases", 0);
	}
	for (i = 0; i < nt; i++) {
		struct wtask *w = &tk[i];
		size_t k;

		if ((w->have & RAN) != RAN ||
		    (w->worker < 0 && w->core == TRACE_NO_CORE))
			continue;
		nran++;
		task_event(f, t, w, e, t0);
		for (k = 0; k < w->ne; k++) {
			struct wtask *p = find_task(tk, nt, w->run,
						    e[w->e0 + k].r.aux);

			if (p && (p->have & RAN) == RAN &&
			    (p->worker >= 0 || p->core != TRACE_NO_CORE))
				flow_event(f, p, w, ++flow, t0);
		}
	}
	ret = counter_events(f, tk, nt, t0);
	if (ret)
		goto out;
	fprintf(f, "{\"ph\":\"M\",\"name\":\"trace_end\",\"pid\":%d,\"tid\":1,"
		"\"args\":{}}\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{"
		"\"format\":\"pto-trace\",\"version\":1,\"clock\":"
		"\"CLOCK_MONOTONIC\",\"t0_ns\":%" PRIu64 ",\"records\":%zu,"
		"\"dropped\":%" PRIu64 ",\"tasks\":%zu,\"incomplete\":%zu}\n}\n",
		PID_ORCH, t0, n, dropped, nran, nt - nran);
	ret = ferror(f) ? -EIO : 0;
out:
	free(tk);
	free(used);
	return ret;
}

int trace_write_json(struct trace *t, FILE *f)
{
	uint32_t nsched = 0, nhost = 0;
	uint64_t dropped;
	struct ent *e;
	size_t n;
	int ret;

	e = gather(t, &n, &dropped, &nsched, &nhost);
	if (!e)
		return -ENOMEM;
	pthread_mutex_lock(&t->names_lock);
	fprintf(f, "{\"traceEvents\":[\n");
	ret = write_events(f, t, e, n, dropped, nsched, nhost);
	pthread_mutex_unlock(&t->names_lock);
	free(e);
	if (!ret && fflush(f))
		ret = -EIO;
	return ret;
}
