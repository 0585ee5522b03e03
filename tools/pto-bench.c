// SPDX-License-Identifier: MIT
/*
 * pto-bench: the orchestrator on the in-process backend (or, with --device,
 * the device scheduler on /dev/ptoN), beside StarPU 1.3
 * (tools/bench/pto-bench-starpu) on the same noop shapes: chain, independent,
 * fanout, wavefront, 2^10 .. 2^MAXLOG2 tasks in scopes of 512 through a
 * smaller task window, and "submit" (ns per submit). Each figure is the best
 * of --reps runs after a warm-up, the two sides interleaved; "paired median"
 * compares each rep with the peer run after it. `pto-bench --help` lists the
 * options; --trace compares fanout with the run trace off and on.
 */
#include <errno.h>
#include <getopt.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/pto.h>
#include <pto/graph.h>
#include <pto/orch.h>
#include <pto/pto.h>
#include <pto/sched.h>

extern char **environ;

/* --device: run on this device's cores instead of in-process workers. */
static struct pto_dev *g_dev;
static uint32_t g_clusters;
static uint32_t g_threads;
static uint32_t g_spin_us;
static uint32_t g_wake_delay_us;
static uint64_t g_trace_bytes;	/* run trace per thread (make()); 0: off */

/* With --trace: room for every record of a 2^14-task run and its warm-up. */
#define TRACE_BENCH_BYTES (16ull << 20)

#define BATCH 512
#define FAN 16

enum shape { CHAIN, INDEP, FANOUT, WAVE, NSHAPE, SUBMIT4 = NSHAPE };
static const char *const shape_name[NSHAPE] = {
	"chain", "independent", "fanout", "wavefront",
};

struct job {
	enum shape shape;
	long n;
	uint64_t t_submit_ns;	/* time spent in the orchestration fn */
	uint64_t t_submit_cpu_ns;	/* its thread's CPU time in there */
};

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/*
 * The machine's own speed, printed before and after the workloads so a
 * reader can tell a slow phase of the machine from a slow runtime: the
 * time of a fixed loop of dependent adds (best of 3), and the share of
 * CPU time the hypervisor took from this machine meanwhile (the "steal"
 * field of /proc/stat; a TCG guest has no steal clock and shows 0). On
 * the 2-CPU cloud hosts the loop's time varies by half from one minute to
 * the next, and the figures of both runtimes with it.
 */
static double loop_ms(void)
{
	volatile uint64_t x = 0;
	double best = 1e30;
	int rep;

	for (rep = 0; rep < 3; rep++) {
		uint64_t t0 = now_ns(), i;
		double ms;

		for (i = 0; i < (1U << 22); i++)
			x += i;
		ms = (double)(now_ns() - t0) / 1e6;
		if (ms < best)
			best = ms;
	}
	return best;
}

/* Total and steal ticks of /proc/stat's "cpu" line; 0 if unreadable. */
static void cpu_ticks(uint64_t *total, uint64_t *steal)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int i;

	*total = *steal = 0;
	if (!f)
		return;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 8) {
		for (i = 0; i < 8; i++)
			*total += v[i];
		*steal = v[7];
	}
	fclose(f);
}

static int noop(struct pto_task_ctx *c)
{
	(void)c;
	return 0;
}

static const struct pto_callable NOOP = { .fn = noop };
static const struct pto_callable DEV_NOOP = { .kernel_id = PTO_FUNC_NOOP };

/* A noop task: a SUB callback in-process, a noop kernel on any AIV core
 * of the device (one kind, so a dependent task can run on the core its
 * producer just left, which is still spinning). */
static int submit_noop(pto_orch *o, struct pto_task_args *a, long i,
		       struct pto_task *out)
{
	if (!g_dev)
		return pto_submit_sub(o, &NOOP, a, out);
	(void)i;
	return pto_submit_next_level(o, &DEV_NOOP, a, NULL,
				     pto_on_kind(PTO_WORKER_AIV), out);
}

/* Fake, never dereferenced addresses: keys only. */
static struct pto_tensor key(uint64_t i)
{
	struct pto_tensor t = { .data = 0x100000000ULL + i * 64, .nbytes = 64,
				.space = PTO_SPACE_HOST };

	return t;
}

static int batch_scope(pto_orch *o, long i)
{
	int err = 0;

	if (i % BATCH)
		return 0;
	if (i)
		err = pto_scope_end(o);
	return err ?: pto_scope_begin(o);
}

static int orch_fn(pto_orch *o, void *arg)
{
	struct job *j = arg;
	struct pto_task_args a;
	struct pto_task kids[FAN];
	uint64_t t0 = now_ns(), c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	long i, w = 1;
	int err = 0, k;

	pto_args_init(&a);
	if (j->shape == WAVE)
		while ((w + 1) * (w + 1) <= j->n)
			w++;
	for (i = 0; i < j->n && !err; i++) {
		struct pto_tensor t;

		err = batch_scope(o, i);
		if (err)
			break;
		pto_args_reset(&a);
		switch (j->shape) {
		case CHAIN:
			t = key(0);
			pto_args_add_tensor(&a, &t, PTO_INOUT);
			break;
		case INDEP:	/* no data, like the StarPU peer's */
			break;
		case SUBMIT4:
			t = key((uint64_t)i + 16);
			pto_args_add_tensor(&a, &t, PTO_OUTPUT_EXISTING);
			for (k = 1; k <= 3; k++) {
				t = key((uint64_t)k);
				pto_args_add_tensor(&a, &t, PTO_INPUT);
			}
			break;
		case FANOUT: {
			long pos = i % (FAN + 2), blk = i / (FAN + 2);

			if (pos == 0) {	/* root: after the previous join */
				t = key((uint64_t)blk * 2);
				pto_args_add_tensor(&a, &t, PTO_INPUT);
				t = key((uint64_t)blk * 2 + 1);
				pto_args_add_tensor(&a, &t, PTO_OUTPUT_EXISTING);
			} else if (pos <= FAN) {
				t = key((uint64_t)blk * 2 + 1);
				pto_args_add_tensor(&a, &t, PTO_INPUT);
			} else {
				for (k = 0; k < FAN; k++)
					pto_args_add_dep_wait(&a, kids[k]);
				t = key((uint64_t)blk * 2 + 2);
				pto_args_add_tensor(&a, &t, PTO_OUTPUT_EXISTING);
			}
			err = submit_noop(o, &a, i,
					  pos >= 1 && pos <= FAN ? &kids[pos - 1] : NULL);
			continue;
		}
		case WAVE: {
			long r = i / w, c = i % w;

			if (r >= w)
				break;	/* n not a square: extra tasks are plain */
			if (r) {
				t = key((uint64_t)((r - 1) * w + c));
				pto_args_add_tensor(&a, &t, PTO_INPUT);
			}
			if (c) {
				t = key((uint64_t)(r * w + c - 1));
				pto_args_add_tensor(&a, &t, PTO_INPUT);
			}
			t = key((uint64_t)(r * w + c));
			pto_args_add_tensor(&a, &t, PTO_OUTPUT_EXISTING);
			break;
		}
		default:
			break;
		}
		err = submit_noop(o, &a, i, NULL);
	}
	if (!err && j->n)
		err = pto_scope_end(o);
	pto_args_fini(&a);
	j->t_submit_ns = now_ns() - t0;
	j->t_submit_cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	return err;
}

/* -w's limit: make()'s worker table. */
#define MAX_WORKERS 64

static pto_orch *make(uint32_t workers, uint32_t window)
{
	struct pto_worker_desc w[MAX_WORKERS] = { 0 };	/* reserved words zero */
	struct pto_orch_config cfg = { .heap_ring_size = 1 << 20,
				       .task_window = window, .workers = w,
				       .nworkers = workers,
				       .trace_bytes = g_trace_bytes };
	pto_orch *o;
	uint32_t i;

	for (i = 0; i < workers && i < MAX_WORKERS; i++) {
		w[i].id = (int32_t)i;
		w[i].kind = PTO_WORKER_SUB;
	}
	if (g_dev) {
		struct pto_sched_config sc = { .clusters = g_clusters,
					       .threads = g_threads,
					       .spin_us = g_spin_us,
					       .wake_delay_us = g_wake_delay_us };
		int ret;

		cfg.workers = NULL;
		cfg.nworkers = 0;
		ret = pto_orch_create_device(g_dev, &cfg, &sc, &o);
		if (ret) {
			fprintf(stderr, "pto-bench: device orchestrator: %s\n",
				pto_strerror(ret));
			exit(1);
		}
		return o;
	}
	if (pto_orch_create_inproc(&cfg, &o)) {
		fprintf(stderr, "pto-bench: cannot create orchestrator\n");
		exit(1);
	}
	return o;
}

/*
 * Close (retried: a device core that does not answer its retirement
 * holds the stop up to the driver's retire_timeout_ms, 30 s by default)
 * and destroy, or exit: the next orchestrator on the device, and the
 * device's close, must not run beside this one's scheduler threads.
 */
static void finish(pto_orch *o)
{
	int err, tries;

	for (tries = 0; tries < 6; tries++) {
		err = pto_orch_close(o, 10000);
		if (err != -ETIMEDOUT)
			break;
	}
	if (!err)
		err = pto_orch_destroy(o);
	if (err) {
		fprintf(stderr, "pto-bench: closing an orchestrator: %s\n",
			pto_strerror(err));
		exit(1);
	}
}

/*
 * --route resident: the same noop shape as one host-built graph, best of
 * @reps; the time is the driver's, GRAPH_LAUNCH (its validation
 * included) to the graph's end. 0 tasks/s for a shape with no graph form.
 */
static double resident_tps(enum shape s, long n, int reps)
{
	static const uint32_t none[3];
	uint64_t clusters = 0, best = UINT64_MAX;
	struct pto_hbg_stats st;
	uint32_t t, root = 0, join = 0;
	long i, pos;
	pto_hbg *g;
	int ret;

	if ((s != INDEP && s != FANOUT) || n > PTO_GRAPH_MAX_TASKS ||
	    pto_hbg_create(g_dev, &g))
		return 0;
	if (g_clusters)
		clusters = (1ULL << g_clusters) - 1;
	for (i = 0, ret = 0; !ret && i < n; i++) {
		ret = pto_hbg_add_task(g, 1u << (i % 3), none, &t);
		if (ret || s != FANOUT)
			continue;
		pos = i % (FAN + 2);
		if (pos == 0) {
			if (i)
				ret = pto_hbg_add_edge(g, join, t);
			root = t;
		} else if (pos <= FAN) {
			ret = pto_hbg_add_edge(g, root, t);
		} else {
			for (join = t; !ret && pos > 1; pos--)
				ret = pto_hbg_add_edge(g, t - (uint32_t)pos + 1, t);
		}
	}
	while (!ret && reps-- > 0) {
		ret = pto_hbg_run(g, clusters, 60000, &st);
		if (!ret && st.elapsed_ns < best)
			best = st.elapsed_ns;
	}
	pto_hbg_destroy(g);
	if (ret)
		fprintf(stderr, "pto-bench: resident %s: %s\n", shape_name[s],
			pto_strerror(ret));
	return ret || !best ? 0 : (double)n * 1e9 / (double)best;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Tasks/s of the StarPU peer on @shape, -1 if unavailable. */
static double peer(const char *path, enum shape s, long n, uint32_t workers)
{
	char ns[32], ws[32], line[256];
	char *argv[] = { (char *)path, (char *)shape_name[s], ns, ws, NULL };
	posix_spawn_file_actions_t fa;
	int pfd[2], status;
	double tps = -1;
	FILE *f;
	pid_t pid;

	if (!path || access(path, X_OK))
		return -1;
	snprintf(ns, sizeof(ns), "%ld", n);
	snprintf(ws, sizeof(ws), "%u", workers);
	if (pipe(pfd))
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	posix_spawn_file_actions_addclose(&fa, pfd[0]);
	if (posix_spawn(&pid, path, &fa, NULL, argv, environ)) {
		posix_spawn_file_actions_destroy(&fa);
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[1]);
	f = fdopen(pfd[0], "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "tasks_per_s %lf", &tps) == 1)
			break;
	if (f)
		fclose(f);
	waitpid(pid, &status, 0);
	return tps;
}

/* Submit @j on @o and wait for it; the time of both in @t. */
static int run_once(pto_orch *o, struct job *j, uint64_t *t)
{
	uint64_t t0 = now_ns();
	const char *why;
	pto_run *r;
	int err;

	err = pto_run_start(o, orch_fn, j, &r);
	/* A construction error's text is the orchestrator's, an execution
	 * error's the run's (pto_run_error(3)). */
	why = err ? pto_orch_error(o) : "";
	if (!err) {
		err = pto_run_wait(r, -1);
		why = err ? pto_run_error(r) : "";
	}
	*t = now_ns() - t0;
	if (err)
		fprintf(stderr, "pto-bench: %s failed: %d %s\n",
			shape_name[j->shape], err, why);
	/* Set also after a construction error, and it must be released:
	 * pto_orch_destroy() refuses while a handle is held. */
	if (r)
		pto_run_release(r);
	return err;
}

/*
 * One timed run of @j on @o, after an untimed run of @warm on it (at
 * least once round the task window): the timed run's time and scheduler
 * stats. A fresh orchestrator pays one-time costs on each slot's first
 * use (its storage's first touch: 20 MB at the default window, in page
 * faults, ~0.3 ms per 1024 slots, which decided the ratio at 2^10);
 * after the peer's process, or any idle gap, the CPUs also come back
 * cold. The StarPU peer warms its instance too (a quarter-size run).
 */
static int run_pto(pto_orch *o, struct job *warm, struct job *j, uint64_t *t,
		   struct pto_sched_stats *st)
{
	struct pto_sched_stats st0 = { 0 };
	uint64_t tw;
	int err;

	err = run_once(o, warm, &tw);
	if (!err && g_dev)
		pto_orch_sched_stats(o, &st0);
	if (!err)
		err = run_once(o, j, t);
	if (!err && g_dev) {
		pto_orch_sched_stats(o, st);
		st->doorbells -= st0.doorbells;
		st->sleeps -= st0.sleeps;
		st->tasks -= st0.tasks;
	}
	return err;
}

/* --trace: fanout with the run trace off and on, side by side. */
static int trace_cost(uint32_t workers, uint32_t window, int reps)
{
	int lg, rep, on;

	for (lg = 12; lg <= 14; lg += 2) {
		struct job j = { .shape = FANOUT, .n = 1L << lg };
		struct job warm = { .shape = FANOUT,
				    .n = j.n / 4 > window ? j.n / 4 : window };
		uint64_t best[2] = { UINT64_MAX, UINT64_MAX };
		double tps[2];

		for (rep = 0; rep < 2 * reps; rep++) {
			for (on = 0; on < 2; on++) {
				struct pto_sched_stats st;
				uint64_t t;
				pto_orch *o;

				g_trace_bytes = on ? TRACE_BENCH_BYTES : 0;
				o = make(workers, window);
				if (run_pto(o, &warm, &j, &t, &st))
					return 1;
				finish(o);
				if (t < best[on])
					best[on] = t;
			}
		}
		g_trace_bytes = 0;
		tps[0] = (double)j.n * 1e9 / (double)best[0];
		tps[1] = (double)j.n * 1e9 / (double)best[1];
		printf("%-12s n=%-8ld trace off %10.0f tasks/s  on %10.0f tasks/s"
		       "  cost %5.1f%%\n", "fanout", j.n, tps[0], tps[1],
		       100.0 * (tps[0] - tps[1]) / tps[0]);
		fflush(stdout);
	}
	return 0;
}

static void submit_cost(uint32_t workers, int reps)
{
	const long n = 1 << 14;
	struct job j = { .shape = SUBMIT4, .n = n };
	pto_orch *o = make(workers, (uint32_t)n * 2);
	int rep, nrep = reps * 6;
	double *wall = calloc((size_t)nrep, sizeof(*wall));	/* ns/submit */
	uint64_t best_cpu = UINT64_MAX;
	pto_run *r;

	/*
	 * The window holds them all, so this measures submit, not
	 * back-pressure: wall and submitting-thread CPU time per submit (the
	 * workers share the CPUs meanwhile). Best of 6 x --reps short runs,
	 * with the median; the first two runs are warm-up (a slot's first use
	 * allocates its storage).
	 */
	if (!wall) {
		fprintf(stderr, "pto-bench: out of memory\n");
		exit(1);
	}
	for (rep = -2; rep < nrep; rep++) {
		if (pto_run_start(o, orch_fn, &j, &r)) {
			fprintf(stderr, "pto-bench: submit run failed: %s\n",
				pto_orch_error(o));
			exit(1);
		}
		if (pto_run_wait(r, -1)) {
			fprintf(stderr, "pto-bench: submit run failed: %s\n",
				pto_run_error(r));
			exit(1);
		}
		pto_run_release(r);
		if (rep < 0)
			continue;
		wall[rep] = (double)j.t_submit_ns / (double)n;
		if (j.t_submit_cpu_ns < best_cpu)
			best_cpu = j.t_submit_cpu_ns;
	}
	qsort(wall, (size_t)nrep, sizeof(*wall), cmp_double);
	printf("%-12s n=%-8ld pto %8.1f ns/submit (4 tensor args; best of %d, "
	       "median %.1f), %.1f ns of the submitting thread's CPU time\n",
	       "submit", n, wall[0], nrep, wall[nrep / 2],
	       (double)best_cpu / (double)n);
	free(wall);
	finish(o);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "peer", required_argument, NULL, 'p' },
		{ "no-peer", no_argument, NULL, 'P' },
		{ "workers", required_argument, NULL, 'w' },
		{ "max-log2", required_argument, NULL, 'm' },
		{ "window", required_argument, NULL, 'W' },
		{ "peer-max-log2", required_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ "device", no_argument, NULL, 'D' },
		{ "dev", required_argument, NULL, 'd' },
		{ "clusters", required_argument, NULL, 'c' },
		{ "sched-threads", required_argument, NULL, 't' },
		{ "shape", required_argument, NULL, 'S' },
		{ "min-log2", required_argument, NULL, 'n' },
		{ "sched-spin-us", required_argument, NULL, 's' },
		{ "wake-delay-us", required_argument, NULL, 'L' },
		{ "reps", required_argument, NULL, 'r' },
		{ "trace", no_argument, NULL, 'T' },
		{ "route", required_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned int dev_index = 0;
	const char *only_shape = NULL;
	int device = 0, ret, minlog = 10, trace = 0, resident = 0;
	char self_dir[4096], peer_default[4200];
	const char *peer_path = NULL;
	uint32_t workers = 2, window = 4096;
	int maxlog = 20, peer_max = 16, opt, s, lg, use_peer = 1, reps = 5;
	uint64_t ticks0, steal0, ticks1, steal1;
	ssize_t len;

	while ((opt = getopt_long(argc, argv, "p:Pw:m:M:W:hDd:c:t:s:S:n:L:r:TR:", lo, NULL)) != -1) {
		switch (opt) {
		case 'T':
			trace = 1;
			break;
		case 'R':
			if (strcmp(optarg, "resident") && strcmp(optarg, "sched")) {
				fprintf(stderr, "pto-bench: bad --route '%s' (sched or resident)\n",
					optarg);
				return 2;
			}
			resident = !strcmp(optarg, "resident");
			break;
		case 'D':
			device = 1;
			break;
		case 'd':
			dev_index = (unsigned int)atoi(optarg);
			break;
		case 'c':
			g_clusters = (uint32_t)atoi(optarg);
			break;
		case 't':
			g_threads = (uint32_t)atoi(optarg);
			break;
		case 'S':
			only_shape = optarg;
			break;
		case 'n':
			minlog = atoi(optarg);
			break;
		case 's':
			g_spin_us = (uint32_t)atoi(optarg);
			break;
		case 'L':
			g_wake_delay_us = (uint32_t)atoi(optarg);
			break;
		case 'p':
			peer_path = optarg;
			break;
		case 'P':
			use_peer = 0;
			break;
		case 'w': {
			char *end;
			unsigned long v;

			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-' ||
			    v < 1 || v > MAX_WORKERS) {
				fprintf(stderr, "pto-bench: bad -w '%s' (1 to %d workers)\n",
					optarg, MAX_WORKERS);
				return 2;
			}
			workers = (uint32_t)v;
			break;
		}
		case 'm':
			maxlog = atoi(optarg);
			break;
		case 'W':
			window = (uint32_t)atoi(optarg);
			break;
		case 'r':
			reps = atoi(optarg) > 0 ? atoi(optarg) : 1;
			break;
		case 'M':
			peer_max = atoi(optarg);
			break;
		default:
			printf("usage: pto-bench [--device [-d N] [--clusters M] "
			       "[--sched-threads T] [--sched-spin-us US] "
			       "[--wake-delay-us US]] "
			       "[--shape NAME] [--min-log2 N] "
			       "[-w WORKERS] [-m MAXLOG2] [-W WINDOW] "
			       "[-M PEER_MAXLOG2] [--reps N] "
			       "[--peer PATH | --no-peer] [--trace] [--route R]\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	if (!peer_path) {
		len = readlink("/proc/self/exe", self_dir, sizeof(self_dir) - 1);
		if (len > 0) {
			self_dir[len] = '\0';
			*strrchr(self_dir, '/') = '\0';
			snprintf(peer_default, sizeof(peer_default),
				 "%s/bench/pto-bench-starpu", self_dir);
			peer_path = peer_default;
		}
	}
	if (!use_peer)
		peer_path = NULL;
	if (peer_path && access(peer_path, X_OK)) {
		printf("# StarPU peer %s not built (make tools/bench/pto-bench-starpu): pto only\n",
		       peer_path);
		peer_path = NULL;
	}
	cpu_ticks(&ticks0, &steal0);
	printf("# machine at the start: fixed loop %.1f ms (best of 3)\n",
	       loop_ms());
	if (device) {
		struct pto_dev_info info;

		ret = pto_dev_open(dev_index, &g_dev);
		if (ret) {
			fprintf(stderr, "pto-bench: /dev/pto%u: %s\n", dev_index,
				pto_strerror(ret));
			return 1;
		}
		pto_dev_info(g_dev, &info);
		printf("# pto-bench: device pto%u, %u of %u clusters (%u cores), "
		       "window %u slots/ring, scopes of %d, noop kernels",
		       dev_index, g_clusters ? g_clusters : info.clusters,
		       info.clusters,
		       (g_clusters ? g_clusters : info.clusters) * 3, window,
		       BATCH);
		if (peer_path)
			printf("; StarPU on %u CPU workers", workers);
		printf("\n");
	} else {
		printf("# pto-bench: in-process backend, %u workers, window %u slots/ring, "
		       "scopes of %d, noop tasks\n", workers, window, BATCH);
		if (!trace)
			submit_cost(workers, reps);
	}
	if (trace) {
		ret = trace_cost(workers, window, reps);
		pto_dev_close(g_dev);
		return ret;
	}
	for (s = 0; s < NSHAPE; s++) {
		if (only_shape && strcmp(only_shape, shape_name[s]))
			continue;
		for (lg = minlog; lg <= maxlog; lg += 2) {
			struct job j = { .shape = (enum shape)s, .n = 1L << lg };
			uint64_t best = UINT64_MAX, best_sub = 0;
			struct pto_sched_stats st = { 0 }, best_st = { 0 };
			double tps, ptps = -1, pair[64];
			int rep, nrep, npair = 0;
			pto_orch *o;

			/*
			 * Best of --reps (5; 10 below 2^14), with the peer's
			 * runs interleaved: both sides see the same
			 * disturbances of a noisy machine. On both sides the
			 * timed run follows an untimed one in the same
			 * runtime instance (see run_pto()). pto's reps share
			 * one orchestrator per shape and size, as a runtime
			 * keeps its orchestrator (and its threads or launched
			 * cores) for its lifetime.
			 */
			o = make(workers, window);
			/*
			 * Twice the reps below 2^14 tasks, on both sides: a
			 * run of 2^10 lasts a few milliseconds and falls
			 * inside one phase of the machine's drift, so five
			 * can all land in a slow phase on one side and a
			 * fast one on the other.
			 */
			nrep = j.n < (1L << 14) ? 2 * reps : reps;
			for (rep = 0; rep < nrep; rep++) {
				/*
				 * The warm-up goes once round the window at
				 * least: every slot the timed run takes has
				 * been used once (its storage touched).
				 */
				struct job warm = { .shape = j.shape,
						    .n = j.n / 4 > window ?
							 j.n / 4 : window };
				uint64_t t;
				double p;

				if (run_pto(o, &warm, &j, &t, &st))
					return 1;
				if (t < best) {
					best = t;
					best_sub = j.t_submit_ns;
					best_st = st;
				}
				if (lg > peer_max)
					continue;
				p = peer(peer_path, (enum shape)s, j.n, workers);
				if (p > ptps)
					ptps = p;
				/* This rep's pair: the two runs are adjacent in
				 * time, so they share the machine's phase. */
				if (p > 0 && npair < 64)
					pair[npair++] = (double)j.n * 1e9 / (double)t / p;
			}
			finish(o);
			j.t_submit_ns = best_sub;
			tps = (double)j.n * 1e9 / (double)best;
			/*
			 * Besides best against best: the median of the reps'
			 * own ratios, each rep's pto run against the peer run
			 * right after it. On a machine whose speed drifts (the
			 * TCG VM's varies by a third within a boot) a pair
			 * shares the drift; the best-of figures may come from
			 * different phases.
			 */
			qsort(pair, (size_t)npair, sizeof(pair[0]), cmp_double);
			if (ptps > 0 && npair)
				printf("%-12s n=%-8ld pto %10.0f tasks/s (submit %6.1f ns/task)"
				       "  starpu %9.0f tasks/s  ratio %6.1fx"
				       "  paired median %.1fx (%.1f-%.1f)\n",
				       shape_name[s], j.n, tps,
				       (double)j.t_submit_ns / (double)j.n, ptps,
				       tps / ptps, npair % 2 ? pair[npair / 2] :
				       (pair[npair / 2 - 1] + pair[npair / 2]) / 2,
				       pair[0], pair[npair - 1]);
			else
				printf("%-12s n=%-8ld pto %10.0f tasks/s (submit %6.1f ns/task)\n",
				       shape_name[s], j.n, tps,
				       (double)j.t_submit_ns / (double)j.n);
			if (g_dev)
				printf("%-12s n=%-8ld     doorbells %.3f/task, sleeps %.3f/task\n",
				       "", j.n, (double)best_st.doorbells / (double)j.n,
				       (double)best_st.sleeps / (double)j.n);
			if (g_dev && resident) {
				double rtps = resident_tps((enum shape)s, j.n,
							   reps);

				if (rtps > 0)
					printf("%-12s n=%-8ld     resident %10.0f tasks/s, sched %10.0f: ratio %.2fx\n",
					       "", j.n, rtps, tps, rtps / tps);
			}
			fflush(stdout);
		}
	}
	cpu_ticks(&ticks1, &steal1);
	printf("# machine at the end: fixed loop %.1f ms; hypervisor steal "
	       "%.1f%% of CPU time during the run\n", loop_ms(),
	       ticks1 > ticks0 ? 100.0 * (double)(steal1 - steal0) /
				 (double)(ticks1 - ticks0) : 0.0);
	pto_dev_close(g_dev);
	return 0;
}
