// SPDX-License-Identifier: MIT
/*
 * The run-trace recorder (lib/trace/), its JSON writer and ptoctl trace's
 * reader, summary and swimlane (tools/ptoctl_trace*.c, included here):
 * a DAG recorded from several threads, written and read back; a full
 * buffer; a hand-made trace's summary figures; the SVG rendered to PNG.
 */
#include <pthread.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "kselftest_harness.h"
#include <linux/pto.h>
#include "trace/trace_priv.h"
#include "../../tools/ptoctl_json.c"
#include "../../tools/ptoctl_trace_read.c"
#include "../../tools/ptoctl_trace.c"

/* ---- a synthetic DAG recorded through the API ------------------------- */

#define DAG_RUNS 2
#define DAG_N 40		/* tasks per run */
#define DAG_SCHED 2		/* scheduler threads, two cores each */
#define DAG_NCORES 6		/* cores 4, 5: typed, never used */
#define FUNC_ADD 1
#define FUNC_MUL 2
#define FUNC_CB 3

struct dag {
	struct trace *t;
	int done[DAG_RUNS][DAG_N];	/* atomic: 0 todo, 1 claimed, 2 done */
	uint64_t id_base[DAG_RUNS];
};

/* Task i of a run: fed by i - 1 and i - 2; every fifth a host callback,
 * the others "add" (even) or "mul" (odd) on the device. */
static bool dag_host(int i)
{
	return i % 5 == 4;
}

static int dag_ndeps(int i, int *dep)
{
	int n = 0;

	if (i >= 1)
		dep[n++] = i - 1;
	if (i >= 2)
		dep[n++] = i - 2;
	return n;
}

static void spin_ns(uint64_t ns)
{
	uint64_t end = trace_now() + ns;

	while (trace_now() < end)
		;
}

static void dag_wait_deps(struct dag *d, int r, int i)
{
	int dep[2], k, n = dag_ndeps(i, dep);

	for (k = 0; k < n; k++)
		while (__atomic_load_n(&d->done[r][dep[k]], __ATOMIC_ACQUIRE) != 2)
			sched_yield();
}

struct worker {
	struct dag *d;
	enum trace_role role;
	uint32_t index;
	int ret;
};

static void *dag_worker(void *arg)
{
	struct worker *w = arg;
	struct dag *d = w->d;
	struct trace_buf *b;
	int r, i;

	w->ret = trace_buf_get(d->t, w->role, w->index, &b);
	if (w->ret)
		return NULL;
	for (r = 0; r < DAG_RUNS; r++) {
		for (i = 0; i < DAG_N; i++) {
			bool host = w->role == TRACE_ROLE_HOST;
			uint64_t id = d->id_base[r] + (uint64_t)i;
			uint16_t core = (uint16_t)(2 * w->index +
						   ((i / DAG_SCHED) & 1));
			uint32_t func = (i & 1) ? FUNC_MUL : FUNC_ADD;
			int want = 0;

			/* device task i: scheduler i % DAG_SCHED, so each
			 * uses both its cores whatever the timing */
			if (dag_host(i) != host ||
			    (!host && i % DAG_SCHED != (int)w->index) ||
			    !__atomic_compare_exchange_n(&d->done[r][i], &want, 1,
							 false, __ATOMIC_ACQ_REL,
							 __ATOMIC_RELAXED))
				continue;
			dag_wait_deps(d, r, i);
			if (host) {
				trace_task(b, TRACE_READY, r, id, FUNC_CB,
					   TRACE_NO_CORE);
				trace_task(b, TRACE_DISPATCHED, r, id, FUNC_CB,
					   TRACE_NO_CORE);
				trace_cb(b, true, r, id, FUNC_CB);
				spin_ns(30000);
				trace_cb(b, false, r, id, FUNC_CB);
				trace_task(b, TRACE_COMPLETED, r, id, FUNC_CB,
					   TRACE_NO_CORE);
			} else {
				uint64_t st, en;

				trace_task(b, TRACE_READY, r, id, func, core);
				trace_phase(b, TRACE_PHASE_DISPATCH, true);
				trace_task(b, TRACE_DISPATCHED, r, id, func, core);
				trace_phase(b, TRACE_PHASE_DISPATCH, false);
				st = trace_now();	/* the core's stamps */
				spin_ns(20000);
				en = trace_now();
				trace_phase(b, TRACE_PHASE_REAP, true);
				trace_task_at(b, TRACE_STARTED, st, r, id, func, core);
				trace_task_at(b, TRACE_ENDED, en, r, id, func, core);
				trace_task(b, TRACE_COMPLETED, r, id, func, core);
				trace_phase(b, TRACE_PHASE_REAP, false);
			}
			__atomic_store_n(&d->done[r][i], 2, __ATOMIC_RELEASE);
		}
	}
	return NULL;
}

/* Records the DAG (orchestrator, DAG_SCHED schedulers, one host worker)
 * and writes it to @path. */
static int dag_record(const char *path, struct dag *d)
{
	struct worker w[DAG_SCHED + 1];
	pthread_t th[DAG_SCHED + 1];
	struct trace_buf *ob;
	int r, i, k, ret;
	FILE *f;

	memset(d, 0, sizeof(*d));
	ret = trace_create(1 << 20, DAG_NCORES, &d->t);
	if (ret)
		return ret;
	for (k = 0; k < DAG_NCORES; k++)
		trace_core_type(d->t, (uint16_t)k,
				k % 3 == 0 ? PTO_CORE_AIC : PTO_CORE_AIV);
	trace_func_name(d->t, FUNC_ADD, "add");
	trace_func_name(d->t, FUNC_MUL, "mul");
	trace_func_name(d->t, FUNC_CB, "host \"cb\"");
	ret = trace_buf_get(d->t, TRACE_ROLE_ORCH, 0, &ob);
	if (ret)
		return ret;
	for (r = 0; r < DAG_RUNS; r++) {
		d->id_base[r] = 1000 * (uint64_t)(r + 1);
		for (i = 0; i < DAG_N; i++) {
			int dep[2], n = dag_ndeps(i, dep);

			trace_task(ob, TRACE_SUBMITTED, r, d->id_base[r] + i,
				   dag_host(i) ? FUNC_CB : (i & 1) ? FUNC_MUL :
				   FUNC_ADD, TRACE_NO_CORE);
			for (k = 0; k < n; k++)
				trace_edge(ob, r, d->id_base[r] + dep[k],
					   d->id_base[r] + i);
		}
	}
	for (k = 0; k <= DAG_SCHED; k++) {
		w[k] = (struct worker){ d, k < DAG_SCHED ? TRACE_ROLE_SCHED :
					TRACE_ROLE_HOST, k < DAG_SCHED ? k : 0, 0 };
		pthread_create(&th[k], NULL, dag_worker, &w[k]);
	}
	for (k = 0; k <= DAG_SCHED; k++) {
		pthread_join(th[k], NULL);
		if (w[k].ret)
			return w[k].ret;
	}
	for (r = 0; r < DAG_RUNS; r++)
		for (i = 0; i < DAG_N; i++)
			trace_task(ob, TRACE_CONSUMED, r, d->id_base[r] + i,
				   0, TRACE_NO_CORE);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	ret = trace_write_json(d->t, f);
	if (fclose(f) && !ret)
		ret = -EIO;
	return ret;
}

static const struct tr_task *find(const struct tr_trace *tr, uint64_t run,
				  uint64_t task, int *count)
{
	const struct tr_task *hit = NULL;
	size_t i;

	*count = 0;
	for (i = 0; i < tr->n; i++)
		if (tr->t[i].run == run && tr->t[i].task == task) {
			hit = &tr->t[i];
			(*count)++;
		}
	return hit;
}

static char dag_path[64];

FIXTURE(dag) {
	struct dag d;
	struct tr_trace tr;
};

FIXTURE_SETUP(dag)
{
	snprintf(dag_path, sizeof(dag_path), "/tmp/pto-trace-%d.json", getpid());
	ASSERT_EQ(0, dag_record(dag_path, &self->d));
	ASSERT_EQ(0, tr_load(dag_path, &self->tr));
}

FIXTURE_TEARDOWN(dag)
{
	tr_free(&self->tr);
	trace_destroy(self->d.t);
	unlink(dag_path);
}

/* Every task once, all seven stamps in order, on the right row. */
TEST_F(dag, every_task_once_ordered)
{
	uint64_t records, dropped;
	int r, i, s, count;

	trace_counts(self->d.t, &records, &dropped);
	EXPECT_EQ(0, dropped);
	EXPECT_EQ(0, self->tr.dropped);
	ASSERT_EQ(DAG_RUNS * DAG_N, self->tr.n);
	for (r = 0; r < DAG_RUNS; r++) {
		for (i = 0; i < DAG_N; i++) {
			const struct tr_task *t = find(&self->tr, r,
						       self->d.id_base[r] + i,
						       &count);

			ASSERT_EQ(1, count);
			ASSERT_EQ((1u << TR_NSTAMP) - 1, t->have);
			for (s = 1; s < TR_NSTAMP; s++)
				ASSERT_LE(t->ts[s - 1], t->ts[s]) {
					TH_LOG("task %d stamp %d", i, s);
				}
			if (dag_host(i)) {
				EXPECT_EQ(TR_PID_HOST, t->pid);
				EXPECT_EQ(FUNC_CB, t->func);
				EXPECT_STREQ("host \"cb\"", t->name);
			} else {
				EXPECT_EQ(TR_PID_DEVICE, t->pid);
				EXPECT_GE(t->tid, 1);
				EXPECT_LE(t->tid, 2 * DAG_SCHED);
				EXPECT_STREQ((i & 1) ? "mul" : "add", t->name);
			}
		}
	}
}

/* Each task's fan-in in args, and one flow per edge between the rows and
 * at the start stamps of its producer and consumer. */
TEST_F(dag, edges_and_flows)
{
	size_t nedges = 0, i, j;
	int r, k, count;

	for (r = 0; r < DAG_RUNS; r++) {
		for (i = 0; i < DAG_N; i++) {
			const struct tr_task *t = find(&self->tr, r,
						       self->d.id_base[r] + i,
						       &count);
			int dep[2], n = dag_ndeps((int)i, dep);

			ASSERT_EQ((size_t)n, t->ndeps);
			for (k = 0; k < n; k++) {
				bool seen = false;

				for (j = 0; j < t->ndeps; j++)
					seen |= t->deps[j] ==
						self->d.id_base[r] + dep[k];
				EXPECT_TRUE(seen);
			}
			nedges += (size_t)n;
		}
	}
	ASSERT_EQ(2 * nedges, self->tr.nflow);
	for (i = 0; i < self->tr.nflow; i++) {
		const struct tr_flow *s = &self->tr.flow[i], *f = NULL;
		const struct tr_task *p = NULL, *c = NULL;

		if (!s->start)
			continue;
		for (j = 0; j < self->tr.nflow; j++)
			if (!self->tr.flow[j].start &&
			    self->tr.flow[j].id == s->id) {
				ASSERT_EQ(NULL, f);	/* one finish per id */
				f = &self->tr.flow[j];
			}
		ASSERT_NE(NULL, f);
		for (j = 0; j < self->tr.n; j++) {
			const struct tr_task *t = &self->tr.t[j];

			if (t->pid == s->pid && t->tid == s->tid &&
			    t->ts[TR_STARTED] == s->ts)
				p = t;
			if (t->pid == f->pid && t->tid == f->tid &&
			    t->ts[TR_STARTED] == f->ts)
				c = t;
		}
		ASSERT_NE(NULL, p);
		ASSERT_NE(NULL, c);
		EXPECT_EQ(p->run, c->run);
		EXPECT_TRUE(c->task == p->task + 1 || c->task == p->task + 2);
	}
}

/* The counters come back to zero; the phases and row names are there. */
TEST_F(dag, counters_phases_rows)
{
	const struct jv *evs = jget(&self->tr.root, "traceEvents");
	uint64_t last_ready = 99, last_inflight = 99, v;
	int phases = 0, aic = 0, aiv = 0, sched = 0;
	size_t i;

	ASSERT_NE(NULL, evs);
	for (i = 0; i < evs->n; i++) {
		const struct jv *e = &evs->kid[i];
		const char *ph = jstr(e, "ph"), *name = jstr(e, "name");
		const char *arg = jstr(jget(e, "args"), "name");

		if (!strcmp(ph, "C")) {
			ASSERT_EQ(0, jkey_u64(jget(e, "args"), "tasks", &v));
			if (!strcmp(name, "READY queue"))
				last_ready = v;
			else
				last_inflight = v;
		} else if (!strcmp(ph, "X") && !strcmp(jstr(e, "cat"), "phase")) {
			phases++;
		} else if (!strcmp(ph, "M") && arg &&
			   !strcmp(name, "thread_name")) {
			aic += !strncmp(arg, "AIC_", 4);
			aiv += !strncmp(arg, "AIV_", 4);
		} else if (!strcmp(ph, "M") && arg &&
			   !strcmp(name, "process_name")) {
			sched += !strncmp(arg, "scheduler ", 10);
		}
	}
	EXPECT_EQ(0, last_ready);
	EXPECT_EQ(0, last_inflight);
	/* a dispatch and a reap phase per device task */
	EXPECT_EQ(2 * DAG_RUNS * (DAG_N - DAG_N / 5), phases);
	EXPECT_EQ(2, aic);	/* cores 0, 3 */
	EXPECT_EQ(4, aiv);	/* cores 1, 2, 4, 5 */
	EXPECT_EQ(DAG_SCHED, sched);
}

/* ---- the recorder's bounds --------------------------------------------- */

/* A full buffer drops and counts, and the file says how many. */
TEST(full_buffer_drops_and_counts)
{
	char path[64];
	struct trace_buf *b;
	struct tr_trace tr;
	uint64_t records, dropped;
	struct trace *t;
	FILE *f;
	int i;

	ASSERT_EQ(0, trace_create(sizeof(struct trace_buf) +
				  10 * sizeof(struct trace_rec), 2, &t));
	ASSERT_EQ(0, trace_buf_get(t, TRACE_ROLE_SCHED, 0, &b));
	ASSERT_EQ(10, b->cap);
	for (i = 0; i < 25; i++) {
		trace_task_at(b, TRACE_STARTED, 100 + 10 * i, 0, i, 1, 0);
		trace_task_at(b, TRACE_ENDED, 105 + 10 * i, 0, i, 1, 0);
	}
	trace_counts(t, &records, &dropped);
	EXPECT_EQ(10, records);
	EXPECT_EQ(40, dropped);
	EXPECT_EQ(100 + 10 * 4, b->rec[8].ts);	/* the first kept */
	snprintf(path, sizeof(path), "/tmp/pto-trace-full-%d.json", getpid());
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, trace_write_json(t, f));
	fclose(f);
	ASSERT_EQ(0, tr_load(path, &tr));
	EXPECT_EQ(40, tr.dropped);
	EXPECT_EQ(5, tr.n);
	tr_free(&tr);
	unlink(path);
	trace_destroy(t);
	/* No room for a record: refused. */
	EXPECT_EQ(-EINVAL, trace_create(sizeof(struct trace_buf), 1, &t));
}

struct reg_arg {
	struct trace *t;
	uint32_t index;
	int ret;
};

static void *reg_thread(void *arg)
{
	struct reg_arg *a = arg;
	struct trace_buf *b;
	int i;

	a->ret = trace_buf_get(a->t, TRACE_ROLE_HOST, a->index, &b);
	for (i = 0; !a->ret && i < 100; i++)
		trace_cb(b, !(i & 1), 0, a->index * 100 + i / 2, 1);
	return NULL;
}

/* Buffers registered from many threads at once: none lost. */
TEST(register_from_threads)
{
	struct reg_arg a[8];
	pthread_t th[8];
	uint64_t records, dropped;
	struct trace_buf *b;
	struct trace *t;
	int i, n = 0;

	ASSERT_EQ(0, trace_create(64 << 10, 0, &t));
	for (i = 0; i < 8; i++) {
		a[i] = (struct reg_arg){ t, (uint32_t)i, 0 };
		pthread_create(&th[i], NULL, reg_thread, &a[i]);
	}
	for (i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		EXPECT_EQ(0, a[i].ret);
	}
	for (b = t->bufs; b; b = b->next)
		n++;
	EXPECT_EQ(8, n);
	trace_counts(t, &records, &dropped);
	EXPECT_EQ(800, records);
	EXPECT_EQ(0, dropped);
	trace_destroy(t);
}

/* ---- the summary of a hand-made trace ------------------------------------ */

#define HX(name, tid, run, task, func, sub, rdy, dis, st, en, co, cons, deps) \
	"{\"ph\":\"X\",\"cat\":\"task\",\"name\":\"" name "\",\"pid\":2," \
	"\"tid\":" #tid ",\"ts\":0,\"dur\":0,\"args\":{\"run\":" #run \
	",\"task\":" #task ",\"func\":" #func ",\"core\":0,\"submitted\":" \
	#sub ",\"ready\":" #rdy ",\"dispatched\":" #dis ",\"started\":" #st \
	",\"ended\":" #en ",\"completed\":" #co ",\"consumed\":" #cons \
	",\"deps\":[" deps "]}},\n"

static const char hand_trace[] =
	"{\"traceEvents\":[\n"
	HX("a", 1, 7, 1, 1, 0, 0, 100, 1100, 3100, 3300, 3400, "")
	HX("a", 2, 7, 2, 1, 0, 3300, 3400, 3600, 4600, 5000, 5100, "1")
	HX("a", 1, 7, 3, 1, 0, 3300, 3500, 3900, 9900, 10000, 10100, "1")
	HX("b", 2, 7, 4, 2, 0, 10000, 10100, 10200, 10700, 10800, 11000, "2,3")
	"{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":2,\"tid\":1,"
	"\"args\":{\"name\":\"AIC_0\"}}\n"
	"],\"displayTimeUnit\":\"ns\",\"otherData\":{\"format\":\"pto-trace\","
	"\"version\":1,\"dropped\":3}}\n";

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fputs(text, f);
	return fclose(f) ? -EIO : 0;
}

TEST(summary_exact)
{
	struct tr_summary s;
	struct tr_trace tr;
	char path[64], *out = NULL;
	size_t len = 0;
	FILE *mem;

	snprintf(path, sizeof(path), "/tmp/pto-trace-hand-%d.json", getpid());
	ASSERT_EQ(0, write_file(path, hand_trace));
	ASSERT_EQ(0, tr_load(path, &tr));
	unlink(path);
	ASSERT_EQ(0, tr_summarize(&tr, &s));
	ASSERT_EQ(2, s.nf);
	EXPECT_STREQ("a", s.f[0].name);
	EXPECT_EQ(3, s.f[0].count);
	EXPECT_EQ(3000, s.f[0].exec.mean);	/* 1000, 2000, 6000 */
	EXPECT_EQ(2000, s.f[0].exec.p50);
	EXPECT_EQ(6000, s.f[0].exec.p99);
	EXPECT_EQ(533, s.f[0].d2s.mean);	/* 200, 400, 1000 */
	EXPECT_EQ(400, s.f[0].d2s.p50);
	EXPECT_EQ(1000, s.f[0].d2s.p99);
	EXPECT_EQ(233, s.f[0].e2c.mean);	/* 100, 200, 400 */
	EXPECT_EQ(400, s.f[0].e2c.p99);
	EXPECT_STREQ("b", s.f[1].name);
	EXPECT_EQ(1, s.f[1].count);
	EXPECT_EQ(500, s.f[1].exec.mean);
	EXPECT_EQ(500, s.f[1].exec.p99);
	EXPECT_EQ(100, s.f[1].d2s.mean);
	EXPECT_EQ(100, s.f[1].e2c.p99);
	EXPECT_EQ(11000, s.wall);
	EXPECT_EQ(8500, s.cp);			/* 1 -> 3 -> 4 */
	ASSERT_EQ(3, s.cp_tasks);
	EXPECT_EQ(1, s.cp_path[0]);
	EXPECT_EQ(3, s.cp_path[1]);
	EXPECT_EQ(4, s.cp_path[2]);
	EXPECT_EQ(3, s.dropped);

	mem = open_memstream(&out, &len);
	ASSERT_NE(NULL, mem);
	tr_print_summary(mem, &s);
	fclose(mem);
	EXPECT_NE(NULL, strstr(out, "4 tasks, 2 functions, 3 records dropped"));
	EXPECT_NE(NULL, strstr(out, "a                     3      3.000      "
			       "2.000      6.000      0.533      1.000      "
			       "0.233      0.400\n")) {
		TH_LOG("%s", out);
	}
	EXPECT_NE(NULL, strstr(out, "critical path 8.500 us of 11.000 us wall "
			       "(77.3%), 3 tasks: 1 -> 3 -> 4\n")) {
		TH_LOG("%s", out);
	}
	free(out);
	tr_summary_free(&s);
	tr_free(&tr);
}

/* Other JSON, or no JSON, is refused with a message, not misread. */
TEST(refuses_other_input)
{
	static const char *const bad[] = {
		"{\"traceEvents\":[]}",			/* another tool's */
		"{\"traceEvents\":[],\"otherData\":{\"format\":\"pto-trace\","
		"\"version\":2}}",
		"[{\"ph\":\"X\"}]",
		"{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"task\"}],"
		"\"otherData\":{\"format\":\"pto-trace\",\"version\":1}}",
		"{\"traceEvents\":[",			/* cut short */
		"not json",
	};
	struct tr_trace tr;
	char path[64];
	size_t i;

	snprintf(path, sizeof(path), "/tmp/pto-trace-bad-%d.json", getpid());
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ASSERT_EQ(0, write_file(path, bad[i]));
		EXPECT_EQ(-EINVAL, tr_load(path, &tr)) {
			TH_LOG("input %zu accepted", i);
		}
	}
	unlink(path);
	EXPECT_EQ(-ENOENT, tr_load("/nonexistent/trace.json", &tr));
}

/* ---- the swimlane -------------------------------------------------------- */

struct png {
	uint32_t w, h, bpp;
	unsigned char *px;	/* h rows of w * bpp bytes */
};

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static int paeth(int a, int b, int c)
{
	int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);

	return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* An 8-bit RGB or RGBA, non-interlaced PNG: enough for rsvg-convert's. */
static int png_read(const char *path, struct png *img)
{
	unsigned char *file = NULL, *idat = NULL, *raw = NULL;
	size_t len = 0, nidat = 0, i, stride;
	uLongf rawlen;
	struct stat st;
	uint32_t y, x;
	int ret = -EINVAL;
	FILE *f;

	memset(img, 0, sizeof(*img));
	if (stat(path, &st) || !(f = fopen(path, "rb")))
		return -errno;
	file = malloc((size_t)st.st_size);
	idat = malloc((size_t)st.st_size);
	if (file && idat)
		len = fread(file, 1, (size_t)st.st_size, f);
	fclose(f);
	if (len < 8 || memcmp(file, "\x89PNG\r\n\x1a\n", 8))
		goto out;
	for (i = 8; i + 12 <= len;) {
		uint32_t n = be32(file + i);
		const unsigned char *type = file + i + 4, *data = file + i + 8;

		if (i + 12 + n > len)
			goto out;
		if (!memcmp(type, "IHDR", 4)) {
			img->w = be32(data);
			img->h = be32(data + 4);
			if (data[8] != 8 || (data[9] != 2 && data[9] != 6) ||
			    data[12])
				goto out;
			img->bpp = data[9] == 6 ? 4 : 3;
		} else if (!memcmp(type, "IDAT", 4)) {
			memcpy(idat + nidat, data, n);
			nidat += n;
		}
		i += 12 + n;
	}
	if (!img->w || !img->h)
		goto out;
	stride = (size_t)img->w * img->bpp;
	rawlen = (uLongf)((stride + 1) * img->h);
	raw = malloc(rawlen);
	img->px = malloc(stride * img->h);
	if (!raw || !img->px ||
	    uncompress(raw, &rawlen, idat, (uLong)nidat) != Z_OK ||
	    rawlen != (stride + 1) * img->h)
		goto out;
	for (y = 0; y < img->h; y++) {
		unsigned char *in = raw + y * (stride + 1) + 1;
		unsigned char *row = img->px + y * stride;
		unsigned char *up = y ? row - stride : NULL;
		unsigned char ft = in[-1];

		for (x = 0; x < stride; x++) {
			int a = x >= img->bpp ? row[x - img->bpp] : 0;
			int b = up ? up[x] : 0;
			int c = up && x >= img->bpp ? up[x - img->bpp] : 0;
			int p = ft == 0 ? 0 : ft == 1 ? a : ft == 2 ? b :
				ft == 3 ? (a + b) / 2 : paeth(a, b, c);

			row[x] = (unsigned char)(in[x] + p);
		}
	}
	ret = 0;
out:
	free(file);
	free(idat);
	free(raw);
	if (ret) {
		free(img->px);
		img->px = NULL;
	}
	return ret;
}

static bool px_is(const struct png *img, uint32_t x, uint32_t y,
		  const char *hex)
{
	const unsigned char *p = img->px + ((size_t)y * img->w + x) * img->bpp;
	unsigned int r, g, b;

	sscanf(hex, "#%02x%02x%02x", &r, &g, &b);
	return p[0] == r && p[1] == g && p[2] == b;
}

static size_t count_str(const char *hay, const char *needle)
{
	size_t n = 0;

	for (; (hay = strstr(hay, needle)); hay++)
		n++;
	return n;
}

/* A trace with stamps of its own (the run above is timed by a loaded
 * machine): 4 cores, 3 device tasks each with 10 us gaps between them,
 * and 2 host callbacks. Written to @path. */
static int det_record(const char *path)
{
	struct trace_buf *sb, *hb;
	struct trace *t;
	int j, k, ret;
	FILE *f;

	ret = trace_create(64 << 10, 4, &t);
	if (ret)
		return ret;
	for (k = 0; k < 4; k++)
		trace_core_type(t, (uint16_t)k,
				k % 3 == 0 ? PTO_CORE_AIC : PTO_CORE_AIV);
	trace_func_name(t, FUNC_ADD, "add");
	trace_func_name(t, FUNC_MUL, "mul");
	trace_func_name(t, FUNC_CB, "host \"cb\"");
	if (trace_buf_get(t, TRACE_ROLE_SCHED, 0, &sb) ||
	    trace_buf_get(t, TRACE_ROLE_HOST, 0, &hb)) {
		trace_destroy(t);
		return -ENOMEM;
	}
	for (j = 0; j < 12; j++) {
		uint64_t st = 1000 + (uint64_t)(j / 4) * 30000 +
			      (uint64_t)(j % 4) * 2000;
		uint32_t func = (j & 1) ? FUNC_MUL : FUNC_ADD;
		uint16_t core = (uint16_t)(j % 4);

		trace_task_at(sb, TRACE_DISPATCHED, st - 500, 0, j, func, core);
		trace_task_at(sb, TRACE_STARTED, st, 0, j, func, core);
		trace_task_at(sb, TRACE_ENDED, st + 20000, 0, j, func, core);
	}
	for (j = 12; j < 14; j++) {
		uint64_t st = 5000 + (uint64_t)(j - 12) * 50000;

		trace_put(hb, st, TRACE_CB_BEGIN, 0, j, 0, FUNC_CB, TRACE_NO_CORE);
		trace_put(hb, st + 25000, TRACE_CB_END, 0, j, 0, FUNC_CB,
			  TRACE_NO_CORE);
	}
	f = fopen(path, "w");
	ret = f ? trace_write_json(t, f) : -errno;
	if (f && fclose(f) && !ret)
		ret = -EIO;
	trace_destroy(t);
	return ret;
}

/* One row per core (and host worker) that ran a task, each row's bars in
 * its function's colour in the rendered picture, gaps between them. */
TEST(svg_rows_render)
{
	char json_path[64], svg_path[64], png_path[64], cmd[200], *svg = NULL;
	const char *want[] = { "AIC_0", "AIC_1", "AIV_0", "AIV_1", "worker_0" };
	bool seen[3] = { false, false, false };
	struct tr_trace tr;
	size_t len = 0, i;
	struct png img;
	uint32_t x, y;
	FILE *f;

	snprintf(json_path, sizeof(json_path), "/tmp/pto-trace-det-%d.json",
		 getpid());
	snprintf(svg_path, sizeof(svg_path), "/tmp/pto-trace-%d.svg", getpid());
	snprintf(png_path, sizeof(png_path), "/tmp/pto-trace-%d.png", getpid());
	ASSERT_EQ(0, det_record(json_path));
	ASSERT_EQ(0, tr_load(json_path, &tr));
	unlink(json_path);
	f = open_memstream(&svg, &len);
	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, tr_svg(f, &tr));
	fclose(f);
	tr_free(&tr);
	EXPECT_EQ(5, count_str(svg, "class=\"lane\""));
	EXPECT_EQ(14, count_str(svg, "class=\"task\""));
	for (i = 0; i < 5; i++) {
		char label[64];

		snprintf(label, sizeof(label), "text-anchor=\"end\">%s</text>",
			 want[i]);
		EXPECT_NE(NULL, strstr(svg, label)) {
			TH_LOG("no row %s", want[i]);
		}
	}
	/* 1 .. 87 us, so 86 us from the first start: ticks every 20 us */
	EXPECT_NE(NULL, strstr(svg, "time (\xc2\xb5s) from the first task"));
	EXPECT_NE(NULL, strstr(svg, "middle\">80</text>"));
	ASSERT_EQ(0, write_file(svg_path, svg));
	free(svg);
	snprintf(cmd, sizeof(cmd), "rsvg-convert -o %s %s", png_path, svg_path);
	ASSERT_EQ(0, system(cmd)) {
		TH_LOG("rsvg-convert (librsvg2-bin) failed");
	}
	ASSERT_EQ(0, png_read(png_path, &img));
	unlink(svg_path);
	unlink(png_path);
	EXPECT_EQ(SVG_W, img.w);
	/* Colours by function name: "add", "host \"cb\"", "mul". */
	for (i = 0; i < 5; i++) {
		int bars = 0, gaps = 0;
		bool in_bar = false, ended = false;

		y = SVG_TOP + (uint32_t)i * SVG_ROW_H + SVG_LANE_H / 2;
		ASSERT_LT(y, img.h);
		for (x = SVG_LEFT; x < SVG_W - SVG_RIGHT; x++) {
			bool bar = false;
			int k;

			for (k = 0; k < 3; k++)
				if (px_is(&img, x, y, tr_palette[k])) {
					seen[k] = true;
					bar = true;
				}
			if (bar && !in_bar)
				bars++;
			if (!bar && in_bar)
				ended = true;
			if (ended && px_is(&img, x, y, "#eeeeee")) {
				gaps++;		/* the lane after a bar */
				ended = false;
			}
			if (bar)
				ended = false;
			in_bar = bar;
		}
		/* 3 bars a core, 2 for the worker, lane between them */
		EXPECT_EQ(i < 4 ? 3 : 2, bars) {
			TH_LOG("row %zu (%s)", i, want[i]);
		}
		EXPECT_GE(gaps, i < 4 ? 2 : 1);
	}
	EXPECT_TRUE(seen[0] && seen[1] && seen[2]);
	free(img.px);
}

TEST_HARNESS_MAIN
