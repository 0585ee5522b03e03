// SPDX-License-Identifier: GPL-2.0
/*
 * The pto tracepoints (tracefs events/pto/, kernel/pto_trace.h): enabled
 * around a run of the vector example, the trace buffer holds every task's
 * start and end in order, parks and wake-ups paired, and every released
 * core's retirement writes in the protocol's order. And the library's run
 * trace of the same example (ptoctl run --trace), read back, summarised
 * and drawn, and of its graph on the resident route; the runs a device orchestrator's trace leaves out; and a
 * dump lane's reservations and commits, in order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <pto/orch.h>
#include <pto/pto.h>
#include <pto/sched.h>
#include "kselftest_harness.h"
#include <linux/pto_dump.h>
#include "pto_selftest.h"
#include "../../tools/ptoctl_json.c"
#include "../../tools/ptoctl_trace_read.c"

#define TRACEFS "/sys/kernel/tracing/"
#define NCORES PTO_MAX_CORES
#define MAX_EV 4096

enum ev_kind { EV_START, EV_END, EV_PARK, EV_WAKE, EV_BELL, EV_RETIRE };

struct ev {
	enum ev_kind kind;
	unsigned int core, id, val;
	char step[16];
};

static struct ev evs[MAX_EV];
static char text[1 << 20];

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -EIO;
}

/* tracefs, mounted if the image's /init did not. 0 or -errno. */
static int tracefs_ready(void)
{
	if (access(TRACEFS "events", F_OK) == 0)
		return 0;
	if (mount("tracefs", TRACEFS, "tracefs", 0, NULL) && errno != EBUSY)
		return -errno;
	return access(TRACEFS "events", F_OK) ? -errno : 0;
}

static ssize_t read_trace(void)
{
	int fd = open(TRACEFS "trace", O_RDONLY);
	ssize_t n, off = 0;

	if (fd < 0)
		return -errno;
	while (off < (ssize_t)sizeof(text) - 1 &&
	       (n = read(fd, text + off, sizeof(text) - 1 - off)) > 0)
		off += n;
	close(fd);
	text[off] = 0;
	return off;
}

/* The pto events of the trace, in its (timestamp) order. */
static int parse(void)
{
	char *line = text, *next;
	int n = 0;

	for (; line && *line && n < MAX_EV; line = next) {
		struct ev *e = &evs[n];
		unsigned int dev;
		char *p;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (line[0] == '#' || !(p = strstr(line, ": pto_")))
			continue;
		p += 2;
		if (sscanf(p, "pto_task_start: dev=%u core=%u id=%u", &dev,
			   &e->core, &e->id) == 3)
			e->kind = EV_START;
		else if (sscanf(p, "pto_task_end: dev=%u core=%u id=%u status=%u",
				&dev, &e->core, &e->id, &e->val) == 4)
			e->kind = EV_END;
		else if (sscanf(p, "pto_core_park: dev=%u core=%u", &dev,
				&e->core) == 2)
			e->kind = EV_PARK;
		else if (sscanf(p, "pto_core_wake: dev=%u core=%u", &dev,
				&e->core) == 2)
			e->kind = EV_WAKE;
		else if (sscanf(p, "pto_doorbell: dev=%u core=%u", &dev,
				&e->core) == 2)
			e->kind = EV_BELL;
		else if (sscanf(p, "pto_retire: dev=%u core=%u step=%15s", &dev,
				&e->core, e->step) == 3)
			e->kind = EV_RETIRE;
		else
			continue;
		if (dev != 0 || e->core >= NCORES)
			return -1;
		n++;
	}
	return n;
}

static int set_tracing(int on)
{
	if (write_str(TRACEFS "tracing_on", on ? "1" : "0"))
		return -1;
	return write_str(TRACEFS "events/pto/enable", on ? "1" : "0");
}

TEST(tracepoints_follow_a_vector_run)
{
	/* Retirement's writes of one core, in the order retirement makes them. */
	static const char *const order[] = { "nonce", "exit", "idle", "close",
					     "readback", "drain", "gate" };
	unsigned int next_step[NCORES] = { 0 }, retired = 0, starts = 0;
	int parked[NCORES] = { 0 }, running[NCORES];
	unsigned int i, c;
	int n;

	ASSERT_EQ(0, tracefs_ready());
	ASSERT_EQ(0, access(TRACEFS "events/pto/pto_task_start", F_OK));
	ASSERT_EQ(0, write_str(TRACEFS "buffer_size_kb", "1024"));
	ASSERT_EQ(0, write_str(TRACEFS "trace", ""));
	ASSERT_EQ(0, set_tracing(1));
	EXPECT_EQ(0, system("ptoctl run vector >/dev/null 2>&1"));
	ASSERT_EQ(0, set_tracing(0));
	ASSERT_LT(0, read_trace());
	n = parse();
	ASSERT_LT(0, n);

	for (c = 0; c < NCORES; c++)
		running[c] = -1;
	for (i = 0; i < (unsigned int)n; i++) {
		const struct ev *e = &evs[i];

		switch (e->kind) {
		case EV_START:
			/* One task at a time per core. */
			EXPECT_EQ(-1, running[e->core]);
			running[e->core] = (int)e->id;
			starts++;
			break;
		case EV_END:
			EXPECT_EQ((int)e->id, running[e->core]);
			EXPECT_EQ(0u, e->val);
			running[e->core] = -1;
			break;
		case EV_PARK:
			EXPECT_EQ(0, parked[e->core]);
			EXPECT_EQ(-1, running[e->core]);
			parked[e->core] = 1;
			break;
		case EV_WAKE:
			EXPECT_EQ(1, parked[e->core]);
			parked[e->core] = 0;
			break;
		case EV_BELL:
			break;
		case EV_RETIRE:
			/* Steps in order; a core retires once in this run. */
			c = e->core;
			ASSERT_GT(sizeof(order) / sizeof(order[0]),
				  next_step[c]);
			EXPECT_STREQ(order[next_step[c]], e->step);
			if (++next_step[c] == sizeof(order) / sizeof(order[0]))
				retired++;
			break;
		}
	}
	/* The vector DAG: five tasks, each run once, all finished. */
	EXPECT_EQ(5u, starts);
	for (c = 0; c < NCORES; c++) {
		EXPECT_EQ(-1, running[c]);
		EXPECT_TRUE(next_step[c] == 0 ||
			    next_step[c] == sizeof(order) / sizeof(order[0]));
	}
	/* ptoctl released its cores: at least the ones that ran a task. */
	EXPECT_LE(1u, retired);
	TH_LOG("%d pto events, %u tasks, %u cores retired", n, starts,
	       retired);
}

/* Disabled, the events record nothing. */
TEST(tracepoints_off_record_nothing)
{
	ASSERT_EQ(0, tracefs_ready());
	ASSERT_EQ(0, write_str(TRACEFS "events/pto/enable", "0"));
	ASSERT_EQ(0, write_str(TRACEFS "trace", ""));
	ASSERT_EQ(0, write_str(TRACEFS "tracing_on", "1"));
	EXPECT_EQ(0, system("ptoctl run vector >/dev/null 2>&1"));
	ASSERT_EQ(0, write_str(TRACEFS "tracing_on", "0"));
	ASSERT_LE(0, read_trace());
	EXPECT_EQ(0, parse());
}

/* ptoctl run vector --trace: the five tasks, each on a core with every
 * stamp of its life in order (started / ended are the core's own), the
 * summary's table and the swimlane's rows. */
TEST(ptoctl_run_trace_summary_and_svg)
{
	static const char *const json = "/tmp/trace_test.json";
	struct tr_trace tr = { 0 };
	int names[3] = { 0 };
	char cmd[256];
	size_t i;
	int s;
	FILE *f;

	unlink(json);
	snprintf(cmd, sizeof(cmd), "ptoctl run vector --trace %s >/dev/null 2>&1",
		 json);
	ASSERT_EQ(0, system(cmd));
	ASSERT_EQ(0, tr_load(json, &tr));
	EXPECT_EQ(0u, tr.dropped);
	ASSERT_EQ(5u, tr.n);
	/* c = a + b; d = c + 1; e = c + 2; g = d * e; f = g + c */
	for (i = 0; i < tr.n; i++) {
		names[0] += !strcmp(tr.t[i].name, "add");
		names[1] += !strcmp(tr.t[i].name, "add_scalar");
		names[2] += !strcmp(tr.t[i].name, "mul");
	}
	EXPECT_EQ(2, names[0]);
	EXPECT_EQ(2, names[1]);
	EXPECT_EQ(1, names[2]);
	for (i = 0; i < tr.n; i++) {
		const struct tr_task *t = &tr.t[i];

		EXPECT_EQ((1u << TR_NSTAMP) - 1, t->have) TH_LOG("task %zu", i);
		/* Exact, the core's stamps too (tracing.md, "Clocks"). */
		for (s = 1; s < TR_NSTAMP; s++) {
			EXPECT_LE(t->ts[s - 1], t->ts[s])
				TH_LOG("task %zu stamp %d", i, s);
		}
		EXPECT_EQ(TR_PID_DEVICE, t->pid);
	}
	tr_free(&tr);

	snprintf(cmd, sizeof(cmd), "ptoctl trace summary %s 2>&1", json);
	f = popen(cmd, "r");
	ASSERT_NE(NULL, f);
	{
		char line[256];
		int add_rows = 0;
		unsigned int n;

		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "add %u", &n) == 1 && n == 2)
				add_rows++;
		EXPECT_EQ(0, pclose(f));
		EXPECT_EQ(1, add_rows);
	}
	snprintf(cmd, sizeof(cmd), "ptoctl trace svg %s > /tmp/trace_test.svg",
		 json);
	EXPECT_EQ(0, system(cmd));
	{
		static char svg[1 << 16];
		int fd = open("/tmp/trace_test.svg", O_RDONLY);
		ssize_t n;

		ASSERT_LE(0, fd);
		n = read(fd, svg, sizeof(svg) - 1);
		close(fd);
		ASSERT_LT(0, n);
		svg[n] = 0;
		EXPECT_NE(NULL, strstr(svg, "<svg"));
		EXPECT_NE(NULL, strstr(svg, "AIV_"));
	}
	unlink(json);
}

/* The row a task ran on: its thread_name, or "" when it has none. */
static const char *tr_row_name(const struct tr_trace *tr,
			       const struct tr_task *t)
{
	size_t i;

	for (i = 0; i < tr->nrow; i++)
		if (tr->row[i].pid == t->pid && tr->row[i].tid == t->tid)
			return tr->row[i].name;
	return "";
}

/* ptoctl run vector_hbg --route resident --trace: the cores' own start /
 * end stamps, each of the four tasks once on the row of the core the
 * graph put it on (c, f on the AIC; d, e on the AIVs), its edges as deps
 * and flows; the summary and the swimlane read it. */
TEST(ptoctl_run_resident_trace)
{
	static const char *const json = "/tmp/trace_test_hbg.json";
	static const char *const core[4] = { "AIC_", "AIV_", "AIV_", "AIC_" };
	struct tr_trace tr = { 0 };
	int seen[4] = { 0 };
	char cmd[256];
	size_t i, j;

	unlink(json);
	snprintf(cmd, sizeof(cmd),
		 "ptoctl run vector_hbg --route resident --trace %s >/dev/null 2>&1",
		 json);
	ASSERT_EQ(0, system(cmd));
	ASSERT_EQ(0, tr_load(json, &tr));
	EXPECT_EQ(0u, tr.dropped);
	ASSERT_EQ(4u, tr.n);
	for (i = 0; i < tr.n; i++) {
		const struct tr_task *t = &tr.t[i];
		const char *row = tr_row_name(&tr, t);
		uint64_t dsum = 0;

		ASSERT_GT(4u, t->task);
		seen[t->task]++;
		EXPECT_LE(t->ts[TR_STARTED], t->ts[TR_ENDED]) TH_LOG("task %zu", i);
		/* Only the cores' stamps: no library thread saw the task. */
		EXPECT_EQ((1u << TR_STARTED) | (1u << TR_ENDED), t->have);
		EXPECT_EQ(TR_PID_DEVICE, t->pid);
		EXPECT_EQ(0, strncmp(row, core[t->task], 4))
			TH_LOG("task %llu on row '%s'",
			       (unsigned long long)t->task, row);
		for (j = 0; j < t->ndeps; j++)
			dsum += 1u << t->deps[j];
		/* c -> d, e; d, e -> f. */
		EXPECT_EQ(t->task == 0 ? 0u : t->task == 3 ? 6u : 1u, dsum)
			TH_LOG("task %llu deps", (unsigned long long)t->task);
		EXPECT_EQ(t->task == 0 ? 0u : t->task == 3 ? 2u : 1u, t->ndeps);
	}
	for (i = 0; i < 4; i++)
		EXPECT_EQ(1, seen[i]) TH_LOG("task %zu", i);
	/* A start and a finish per edge, the finish not before its start. */
	EXPECT_EQ(8u, tr.nflow);
	for (i = 0; i < tr.nflow; i++)
		for (j = 0; j < tr.nflow; j++)
			if (tr.flow[i].start && !tr.flow[j].start &&
			    tr.flow[i].id == tr.flow[j].id)
				EXPECT_LE(tr.flow[i].ts, tr.flow[j].ts);
	tr_free(&tr);
	snprintf(cmd, sizeof(cmd), "ptoctl trace summary %s >/dev/null 2>&1",
		 json);
	EXPECT_EQ(0, system(cmd));
	snprintf(cmd, sizeof(cmd),
		 "ptoctl trace svg %s | grep -q AIC_ && ptoctl trace svg %s | grep -q AIV_",
		 json, json);
	EXPECT_EQ(0, system(cmd));
	unlink(json);
}

/* A device run of two chained AIV tasks (fill, then add a scalar). */
struct pair_run {
	struct pto_tensor x, y;
	struct pto_task h[2];
};

static int pair_fn(pto_orch *o, void *arg)
{
	static const struct pto_callable fill = { .kernel_id = PTO_FUNC_FILL };
	static const struct pto_callable adds = {
		.kernel_id = PTO_FUNC_ADD_SCALAR };
	struct pair_run *p = arg;
	struct pto_task_args a;
	int ret;

	pto_args_init(&a);
	pto_args_add_scalar(&a, 5);
	pto_args_add_tensor(&a, &p->x, PTO_OUTPUT_EXISTING);
	ret = pto_submit_next_level(o, &fill, &a, NULL,
				    pto_on_kind(PTO_WORKER_AIV), &p->h[0]);
	pto_args_fini(&a);
	if (ret)
		return ret;
	pto_args_init(&a);
	pto_args_add_scalar(&a, 1);
	pto_args_add_tensor(&a, &p->x, PTO_INPUT);
	pto_args_add_tensor(&a, &p->y, PTO_OUTPUT_EXISTING);
	ret = pto_submit_next_level(o, &adds, &a, NULL,
				    pto_on_kind(PTO_WORKER_AIV), &p->h[1]);
	pto_args_fini(&a);
	return ret;
}

/* pto_orch_trace_enable() on a device orchestrator: the second of three
 * runs is left out; the first and third are there with the cores' own
 * stamps (the scheduler thread's records ask each task). */
TEST(enable_picks_device_runs)
{
	static const char *const json = "/tmp/trace_enable.json";
	struct pto_orch_config oc = { .trace_bytes = 1 << 20 };
	struct pto_sched_config sc = { .threads = 1 };
	struct tr_trace tr = { 0 };
	struct pair_run p[3];
	struct pto_dev *dev;
	struct pto_bo *bo;
	void *map;
	pto_orch *o;
	size_t i;
	int k, j;

	memset(p, 0, sizeof(p));
	ASSERT_EQ(0, pto_dev_open(0, &dev));
	ASSERT_EQ(0, pto_bo_alloc(dev, 1 << 16, 0, &bo));
	ASSERT_EQ(0, pto_bo_map(bo, &map));
	ASSERT_EQ(0, pto_orch_create_device(dev, &oc, &sc, &o));
	for (k = 0; k < 3; k++) {
		p[k].x = pto_tensor_gm(bo, map, 0, 1024, PTO_DTYPE_I32);
		p[k].y = pto_tensor_gm(bo, map, 4096, 1024, PTO_DTYPE_I32);
		ASSERT_EQ(0, pto_orch_trace_enable(o, k != 1));
		ASSERT_EQ(0, pto_orch_run(o, pair_fn, &p[k]));
		EXPECT_EQ(6, ((int32_t *)map)[1024]);
	}
	unlink(json);
	ASSERT_EQ(0, pto_orch_trace_write(o, json));
	EXPECT_EQ(0, pto_orch_close(o, 10000));
	EXPECT_EQ(0, pto_orch_destroy(o));
	pto_bo_free(bo);
	pto_dev_close(dev);
	ASSERT_EQ(0, tr_load(json, &tr));
	EXPECT_EQ(4u, tr.n);
	for (k = 0; k < 3; k++)
		for (j = 0; j < 2; j++) {
			int count = 0;

			for (i = 0; i < tr.n; i++) {
				const struct tr_task *t = &tr.t[i];

				if (t->run != p[k].h[j].run_id ||
				    t->task != p[k].h[j].task_id)
					continue;
				count++;
				EXPECT_EQ((1u << TR_NSTAMP) - 1, t->have)
					TH_LOG("run %d task %d", k, j);
				EXPECT_EQ(TR_PID_DEVICE, t->pid);
			}
			EXPECT_EQ(k != 1, count) TH_LOG("run %d task %d", k, j);
		}
	tr_free(&tr);
}

static int lane_events(const char *on)
{
	static const char *const ev[] = { "pto_lane_reserve", "pto_lane_commit",
					  "pto_lane_abandon" };
	char path[128];
	unsigned int i;

	for (i = 0; i < sizeof(ev) / sizeof(ev[0]); i++) {
		snprintf(path, sizeof(path), TRACEFS "events/pto/%s/enable",
			 ev[i]);
		if (write_str(path, on))
			return -1;
	}
	return 0;
}

/*
 * A tensor and a scalar captured on lane 2: each reservation's event
 * (record, position, bytes) then its commit's, in that order, no abandon.
 */
TEST(lane_tracepoints_reserve_commit)
{
	static const char *const want[] = {
		"pto_lane_reserve: dev=0 lane=2 task=0x77 arg=0 stage=0 buf=0 index=0 pos=0 bytes=4096",
		"pto_lane_commit: dev=0 lane=2 task=0x77 arg=0 stage=0 buf=0 index=0 pos=0 bytes=4096",
		"pto_lane_reserve: dev=0 lane=2 task=0x77 arg=1 stage=1 buf=0 index=1 pos=4096 bytes=0",
		"pto_lane_commit: dev=0 lane=2 task=0x77 arg=1 stage=1 buf=0 index=1 pos=4096 bytes=0",
	};
	struct pto_bo_alloc bo = { .size = 4096 };
	struct pto_dump_bind b = { .lane = 2, .level = PTO_DUMP_FULL };
	struct pto_dump_capture c = {
		.lane = 2, .task_id = 0x77, .kind = PTO_DUMP_KIND_TENSOR,
		.dtype = PTO_DTYPE_I32, .rank = 1, .shape = { 1024 },
		.strides = { 1 }, .timeout_ns = UINT64_MAX,
	};
	struct pto_dump_lane l = { .lane = 2 };
	const char *at = text, *hit;
	unsigned int i;
	int fd;

	ASSERT_EQ(0, tracefs_ready());
	ASSERT_EQ(0, write_str(TRACEFS "trace", ""));
	ASSERT_EQ(0, write_str(TRACEFS "tracing_on", "1"));
	ASSERT_EQ(0, lane_events("1"));
	fd = open(PTO_DEV0, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pto_sioctl(fd, PTO_IOCTL_BO_ALLOC, &bo));
	ASSERT_EQ(0, pto_sioctl(fd, PTO_IOCTL_DUMP_BIND, &b));
	c.handle = bo.handle;
	ASSERT_EQ(0, pto_sioctl(fd, PTO_IOCTL_DUMP_CAPTURE, &c));
	memset(&c.shape, 0, sizeof(c.shape));
	memset(&c.strides, 0, sizeof(c.strides));
	c.handle = 0;
	c.rank = 0;
	c.kind = PTO_DUMP_KIND_SCALAR;
	c.arg_index = 1;
	c.stage = PTO_DUMP_AFTER_COMPLETION;
	ASSERT_EQ(0, pto_sioctl(fd, PTO_IOCTL_DUMP_CAPTURE, &c));
	ASSERT_EQ(0, pto_sioctl(fd, PTO_IOCTL_DUMP_UNBIND, &l));
	close(fd);
	ASSERT_EQ(0, lane_events("0"));
	ASSERT_EQ(0, write_str(TRACEFS "tracing_on", "0"));
	ASSERT_LT(0, read_trace());

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		hit = strstr(at, want[i]);
		EXPECT_NE(NULL, hit) TH_LOG("missing, or out of order: %s",
					    want[i]);
		if (hit)
			at = hit + 1;
	}
	EXPECT_EQ(NULL, strstr(text, "pto_lane_abandon"));
}

TEST_HARNESS_MAIN
