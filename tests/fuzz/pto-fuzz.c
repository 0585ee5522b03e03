// SPDX-License-Identifier: GPL-2.0
/*
 * pto-fuzz: stateful fuzzing of /dev/pto0 (Documentation/testing.md, "The
 * stateful fuzzer"). The conductor runs 2-3 actor processes (fuzz_actor.c),
 * sends each step's operation to one actor or to two at once, kills one
 * with SIGKILL now and then and starts another, and every few steps
 * checks the device against the actors' models: debugfs bos, info and
 * cores, CORE_STATS and RETIRE_STATUS. A violation prints the seed and
 * the step and exits 1. Root only (debugfs).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "fuzz_actor.h"

#define FZ_REPLY_MS 120000	/* an actor silent this long: hung */
#define FZ_SETTLE_NS 5000000000ull	/* a release still running */

struct fz_proc {
	pid_t pid;
	int to, from;		/* command and reply pipes */
	struct fz_reply model;	/* its last reply */
};

static struct fz_conductor {
	uint64_t seed, rng, step, ops, calls, max_ops;
	unsigned int nprocs, check_every;
	uint64_t deadline_ns, t0;
	int obs;		/* O_RDONLY observer file */
	struct pto_info info;
	uint64_t gm_base;	/* gm_size - gm_free - live sizes at the start */
	uint64_t quarantines;	/* RETIRE_STATUS sum at the start */
	uint64_t per_op[32], kills, ev[FZ_EV_COUNT];
	struct fz_proc p[FZ_MAX_ACTORS];
	char why[512];
} fz;

static uint64_t fz_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Every actor and its children (each actor is its own process group). */
static void fz_kill_all(void)
{
	unsigned int i;

	for (i = 0; i < FZ_MAX_ACTORS; i++)
		if (fz.p[i].pid > 0) {
			kill(-fz.p[i].pid, SIGKILL);
			kill(fz.p[i].pid, SIGKILL);
		}
}

static void fz_fail(const char *who, const char *what)
{
	printf("pto-fuzz: VIOLATION seed %llu step %llu (%.1f s): %s: %s\n",
	       (unsigned long long)fz.seed, (unsigned long long)fz.step,
	       (double)(fz_clock() - fz.t0) / 1e9, who, what);
	printf("pto-fuzz: reproduce with: pto-fuzz --seed %llu --ops %llu --procs %u\n",
	       (unsigned long long)fz.seed, (unsigned long long)fz.max_ops,
	       fz.nprocs);
	fflush(stdout);
	fz_kill_all();
	_exit(1);
}

static void fz_get_reply(struct fz_proc *p, const char *op)
{
	struct pollfd pfd = { .fd = p->from, .events = POLLIN };
	unsigned int i;
	char who[96];

	snprintf(who, sizeof(who), "actor %d, %s", (int)p->pid, op);
	if (poll(&pfd, 1, FZ_REPLY_MS) != 1)
		fz_fail(who, "no reply in 120 s (hung in the driver?)");
	if (fz_read_reply(p->from, &p->model)) {
		int st = 0;
		char msg[64];

		waitpid(p->pid, &st, 0);
		snprintf(msg, sizeof(msg), "died (wait status 0x%x)", st);
		p->pid = 0;
		fz_fail(who, msg);
	}
	fz.calls += p->model.calls;
	for (i = 0; i < FZ_EV_COUNT; i++)
		fz.ev[i] += p->model.ev[i];
	if (p->model.bad)
		fz_fail(who, p->model.msg);
}

static void fz_spawn(struct fz_proc *p)
{
	int to[2], from[2];
	uint64_t seed = fz_rnd(&fz.rng);

	if (pipe(to) || pipe(from))
		fz_fail("conductor", "pipe");
	p->pid = fork();
	if (p->pid < 0)
		fz_fail("conductor", "fork");
	if (!p->pid) {
		unsigned int i;

		for (i = 0; i < FZ_MAX_ACTORS; i++) {
			if (fz.p[i].pid > 0 && &fz.p[i] != p) {
				close(fz.p[i].to);
				close(fz.p[i].from);
			}
		}
		close(fz.obs);
		close(to[1]);
		close(from[0]);
		fz_actor_main(to[0], from[1], seed);
	}
	close(to[0]);
	close(from[1]);
	p->to = to[1];
	p->from = from[0];
	fz_get_reply(p, "start");
}

static void fz_reap(struct fz_proc *p)
{
	close(p->to);
	close(p->from);
	waitpid(p->pid, NULL, 0);
	p->pid = 0;
}

/* The command for @p: the operation, and what the other actors own. */
static void fz_make_cmd(struct fz_cmd *c, const struct fz_proc *p,
			unsigned int op, uint32_t flags)
{
	unsigned int i, k;

	memset(c, 0, sizeof(*c));
	c->op = op;
	c->flags = flags;
	c->seed = fz_rnd(&fz.rng);
	for (i = 0; i < fz.nprocs; i++) {
		const struct fz_reply *m = &fz.p[i].model;

		if (&fz.p[i] == p)
			continue;
		c->others_clusters |= m->clusters;
		for (k = 0; k < m->nbos && c->nforeign < FZ_MAX_FOREIGN; k++) {
			c->foreign[c->nforeign].addr = m->bo[k].addr;
			c->foreign[c->nforeign].size = m->bo[k].size;
			c->nforeign++;
		}
	}
}

static unsigned int fz_pick_op(void)
{
	unsigned int total = 0, i, r;

	for (i = 0; i < fz_nops; i++)
		total += fz_ops[i].weight;
	r = (unsigned int)(fz_rnd(&fz.rng) % total);
	for (i = 0; i < fz_nops; i++) {
		if (r < fz_ops[i].weight)
			return i;
		r -= fz_ops[i].weight;
	}
	return 0;
}

static void fz_send(struct fz_proc *p, unsigned int op, uint32_t flags)
{
	struct fz_cmd c;

	fz_make_cmd(&c, p, op, flags);
	if (fz_write_full(p->to, &c, sizeof(c)))
		fz_fail("conductor", "an actor's pipe closed");
	if (op == fz_op_verify)
		return;
	fz.ops++;
	if (op < 32)
		fz.per_op[op]++;
}

/* ---- the checks ---------------------------------------------------------- */

static int fz_bad_state(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static int fz_bad_state(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(fz.why, sizeof(fz.why), fmt, ap);
	va_end(ap);
	return -1;
}

static struct fz_proc *fz_by_pid(int pid)
{
	unsigned int i;

	for (i = 0; i < fz.nprocs; i++)
		if (fz.p[i].pid == pid)
			return &fz.p[i];
	return NULL;
}

/* debugfs bos and info against the models: -1 with fz.why. */
static int fz_check_bos(void)
{
	uint64_t listed = 0, gm_size = 0, gm_free = 0;
	unsigned int i, k, seen[FZ_MAX_ACTORS] = { 0 }, want;
	char line[256];
	FILE *f = fopen(FZ_DBG "bos", "r");

	if (!f)
		return fz_bad_state("cannot read " FZ_DBG "bos");
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return fz_bad_state("bos: no header");
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long long addr, size;
		unsigned int handle, refs;
		struct fz_proc *p;
		int owner, found = 0;

		if (sscanf(line, "%d %u %llx %llu %u", &owner, &handle, &addr,
			   &size, &refs) != 5)
			continue;
		listed += size;
		p = fz_by_pid(owner);
		if (!p) {
			fclose(f);
			return fz_bad_state("buffer 0x%llx (handle %u) owned by %d, no live actor",
					    addr, handle, owner);
		}
		for (k = 0; k < p->model.nbos; k++) {
			const struct fz_bo_rep *b = &p->model.bo[k];

			if (b->handle == handle && b->addr == addr &&
			    b->size == size && b->flags)
				found = 1;
		}
		if (!found) {
			fclose(f);
			return fz_bad_state("buffer 0x%llx (handle %u, %llu bytes) of actor %d not in its model",
					    addr, handle, size, owner);
		}
		seen[p - fz.p]++;
	}
	fclose(f);
	for (i = 0; i < fz.nprocs; i++) {
		for (want = 0, k = 0; k < fz.p[i].model.nbos; k++)
			want += !!fz.p[i].model.bo[k].flags;
		if (seen[i] != want)
			return fz_bad_state("actor %d: %u buffers listed, its model has %u",
					    (int)fz.p[i].pid, seen[i], want);
	}
	f = fopen(FZ_DBG "info", "r");
	if (!f)
		return fz_bad_state("cannot read " FZ_DBG "info");
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "gm_size: %llu", (unsigned long long *)&gm_size);
		sscanf(line, "gm_free: %llu", (unsigned long long *)&gm_free);
	}
	fclose(f);
	if (gm_size - gm_free - fz.gm_base != listed)
		return fz_bad_state("GM in use %llu, live buffers %llu",
				    (unsigned long long)(gm_size - gm_free -
							 fz.gm_base),
				    (unsigned long long)listed);
	return 0;
}

/* debugfs cores, CORE_STATS and RETIRE_STATUS against the models. */
static int fz_check_cores(void)
{
	uint64_t quarantines = 0;
	char line[256], state[32];
	unsigned int i;
	FILE *f = fopen(FZ_DBG "cores", "r");

	if (!f || !fgets(line, sizeof(line), f)) {
		if (f)
			fclose(f);
		return fz_bad_state("cannot read " FZ_DBG "cores");
	}
	for (i = 0; i < fz.info.cores; i++) {
		struct pto_core_stats s = { .core = i };
		struct pto_retire_status rs = { .core = i };
		unsigned int c = i / PTO_CORES_PER_CLUSTER, n;
		struct fz_proc *p = NULL;
		int owner, launched;

		if (!fgets(line, sizeof(line), f) ||
		    sscanf(line, "%*u %*s %31s %d", state, &owner) != 2) {
			fclose(f);
			return fz_bad_state("cores: line %u unreadable", i);
		}
		for (n = 0; n < fz.nprocs; n++)
			if (fz.p[n].model.clusters & (1ull << c)) {
				if (p) {
					fclose(f);
					return fz_bad_state("cluster %u in the models of two actors",
							    c);
				}
				p = &fz.p[n];
			}
		if (owner != (p ? p->pid : 0)) {
			fclose(f);
			return fz_bad_state("core %u: owner %d, model %d", i,
					    owner, p ? (int)p->pid : 0);
		}
		launched = p && fz_bit(p->model.launched, i);
		if (launched ? strcmp(state, "ready") && strcmp(state, "running")
			     : strcmp(state, "unlaunched")) {
			fclose(f);
			return fz_bad_state("core %u: %s, model %s", i, state,
					    launched ? "launched" : "unlaunched");
		}
		if (ioctl(fz.obs, PTO_IOCTL_CORE_STATS, &s) ||
		    ioctl(fz.obs, PTO_IOCTL_RETIRE_STATUS, &rs)) {
			fclose(f);
			return fz_bad_state("core %u: status ioctls: %s", i,
					    strerror(errno));
		}
		if ((int)s.owner != owner || s.state != rs.state) {
			fclose(f);
			return fz_bad_state("core %u: CORE_STATS owner %u state %u, RETIRE_STATUS state %u, debugfs %d %s",
					    i, s.owner, s.state, rs.state,
					    owner, state);
		}
		quarantines += rs.quarantines;
	}
	fclose(f);
	if (quarantines != fz.quarantines)
		return fz_bad_state("%llu quarantines (%llu at the start)",
				    (unsigned long long)quarantines,
				    (unsigned long long)fz.quarantines);
	return 0;
}

/*
 * debugfs lanes against the models: a lane bound or closed belongs to a
 * live actor that binds it; a dead file's lane is free or quarantined
 * only for its unclosed terminal (the next bind takes it over).
 */
static int fz_check_lanes(void)
{
	unsigned int i, lane, seen[FZ_MAX_ACTORS] = { 0 };
	char line[512], level[32], state[32], *q;
	FILE *f = fopen(FZ_DBG "lanes", "r");
	struct fz_proc *p;
	int owner, live;

	if (!f)
		return fz_bad_state("cannot read " FZ_DBG "lanes");
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return fz_bad_state("lanes: no header");
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%u %d %31s %31s", &lane, &owner, level,
			   state) != 4)
			continue;
		live = !strcmp(state, "bound") || !strcmp(state, "closed");
		p = fz_by_pid(owner);
		q = strrchr(line, ' ');
		if (live && (!p || lane >= FZ_MAX_LANES ||
			     !(p->model.lanes & (1u << lane)))) {
			fclose(f);
			return fz_bad_state("lane %u %s by %d, not an actor's that binds it",
					    lane, state, owner);
		}
		if (!strcmp(state, "quarantined") && q &&
		    strcmp(q, " unclosed\n")) {
			fclose(f);
			return fz_bad_state("lane %u quarantined as%s", lane, q);
		}
		if (live)
			seen[p - fz.p] |= 1u << lane;
	}
	fclose(f);
	for (i = 0; i < fz.nprocs; i++)
		if (seen[i] != fz.p[i].model.lanes)
			return fz_bad_state("actor %d: lanes 0x%x bound, its model has 0x%x",
					    (int)fz.p[i].pid, seen[i],
					    fz.p[i].model.lanes);
	return 0;
}

/*
 * Every actor verifies its buffers, then the device must match the models,
 * allowing a few seconds for what runs after an exit (a killed actor's
 * orphaned children still exiting).
 */
static void fz_check(void)
{
	uint64_t t0 = fz_clock();
	unsigned int i;

	for (i = 0; i < fz.nprocs; i++)
		fz_send(&fz.p[i], fz_op_verify, 0);
	for (i = 0; i < fz.nprocs; i++)
		fz_get_reply(&fz.p[i], "verify");
	while (fz_check_bos() || fz_check_cores() || fz_check_lanes()) {
		if (fz_clock() - t0 > FZ_SETTLE_NS)
			fz_fail("check", fz.why);
		usleep(20000);
	}
}

/* ---- the run ------------------------------------------------------------- */

/*
 * Does debugfs still show something of @pid's? A killed actor's file
 * lives on while a child of it that inherited a mapping is still exiting.
 */
static int fz_left_by(int pid)
{
	const char *files[] = { FZ_DBG "bos", FZ_DBG "cores", FZ_DBG "lanes" };
	char line[512], state[32];
	unsigned int i;
	int owner, left = 0;

	for (i = 0; i < 3; i++) {
		FILE *f = fopen(files[i], "r");

		while (f && fgets(line, sizeof(line), f)) {
			if (i == 2 &&
			    sscanf(line, "%*u %d %*s %31s", &owner, state) == 2 &&
			    owner == pid && (!strcmp(state, "bound") ||
					     !strcmp(state, "closed")))
				left = 1;
			if (i < 2 &&
			    sscanf(line, i ? "%*u %*s %*s %d" : "%d", &owner) == 1 &&
			    owner == pid)
				left = 1;
		}
		if (f)
			fclose(f);
	}
	return left;
}

static void fz_kill_one(void)
{
	struct fz_proc *p = &fz.p[fz_rnd(&fz.rng) % fz.nprocs];
	uint64_t t0;
	pid_t pid;

	/* In the middle of something, or idle. */
	fz_send(p, fz_pick_op(), 0);
	usleep((useconds_t)(fz_rnd(&fz.rng) % 4000));
	kill(-p->pid, SIGKILL);
	kill(p->pid, SIGKILL);
	pid = p->pid;
	fz_reap(p);
	fz.kills++;
	/* Gone before the others' next calls, which the models predict. */
	t0 = fz_clock();
	while (fz_left_by(pid)) {
		if (fz_clock() - t0 > FZ_SETTLE_NS)
			fz_fail("kill -9", "the killed actor's objects stay");
		usleep(5000);
	}
	memset(&p->model, 0, sizeof(p->model));
	fz_spawn(p);
}

static void fz_step(void)
{
	uint64_t r = fz_rnd(&fz.rng) % 100;
	struct fz_proc *a = &fz.p[fz_rnd(&fz.rng) % fz.nprocs], *b;
	unsigned int opa = fz_pick_op(), opb;

	if (r < 2) {
		fz_kill_one();
		return;
	}
	if (r < 20) {
		b = &fz.p[(a - fz.p + 1 + fz_rnd(&fz.rng) % (fz.nprocs - 1)) %
			  fz.nprocs];
		opb = fz_pick_op();
		fz_send(a, opa, FZ_CMD_CONTENDED);
		fz_send(b, opb, FZ_CMD_CONTENDED);
		fz_get_reply(a, fz_ops[opa].name);
		fz_get_reply(b, fz_ops[opb].name);
		return;
	}
	fz_send(a, opa, 0);
	fz_get_reply(a, fz_ops[opa].name);
}

/* The device before the run: what is in use already is not ours. */
static void fz_baseline(void)
{
	char line[256];
	uint64_t gm_size = 0, gm_free = 0, listed = 0;
	unsigned long long size;
	unsigned int i;
	FILE *f;

	f = fopen(FZ_DBG "bos", "r");
	if (!f) {
		printf("pto-fuzz: cannot read %sbos (root, debugfs?)\n", FZ_DBG);
		exit(2);
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%*d %*u %*x %llu", &size) == 1)
			listed += size;
	fclose(f);
	f = fopen(FZ_DBG "info", "r");
	while (f && fgets(line, sizeof(line), f)) {
		sscanf(line, "gm_size: %llu", (unsigned long long *)&gm_size);
		sscanf(line, "gm_free: %llu", (unsigned long long *)&gm_free);
	}
	if (f)
		fclose(f);
	fz.gm_base = gm_size - gm_free - listed;
	for (i = 0; i < fz.info.cores; i++) {
		struct pto_retire_status rs = { .core = i };

		if (!ioctl(fz.obs, PTO_IOCTL_RETIRE_STATUS, &rs))
			fz.quarantines += rs.quarantines;
	}
}

static void fz_usage(void)
{
	printf("usage: pto-fuzz [--seed N] [--ops N] [--secs N] [--procs 2|3] [--check-every N]\n"
	       "  stateful fuzzing of " FZ_DEV " (root); PTO_FUZZ_SEED also sets the seed\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "ops", required_argument, NULL, 'n' },
		{ "secs", required_argument, NULL, 't' },
		{ "procs", required_argument, NULL, 'p' },
		{ "check-every", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *env = getenv("PTO_FUZZ_SEED");
	uint64_t secs = 60, last;
	unsigned int i;
	int o;

	fz.seed = env ? strtoull(env, NULL, 0) : fz_clock() ^ (uint64_t)getpid();
	fz.max_ops = 3000;
	fz.nprocs = 3;
	fz.check_every = 8;
	while ((o = getopt_long(argc, argv, "s:n:t:p:k:h", opts, NULL)) != -1) {
		switch (o) {
		case 's':
			fz.seed = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			fz.max_ops = strtoull(optarg, NULL, 0);
			break;
		case 't':
			secs = strtoull(optarg, NULL, 0);
			break;
		case 'p':
			fz.nprocs = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'k':
			fz.check_every = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		default:
			fz_usage();
			return o == 'h' ? 0 : 2;
		}
	}
	if (optind != argc || fz.nprocs < 2 || fz.nprocs > FZ_MAX_ACTORS ||
	    !fz.check_every || !fz.max_ops) {
		fz_usage();
		return 2;
	}
	printf("pto-fuzz: seed %llu (--seed %llu reproduces), up to %llu operations in %llu s, %u processes\n",
	       (unsigned long long)fz.seed, (unsigned long long)fz.seed,
	       (unsigned long long)fz.max_ops, (unsigned long long)secs,
	       fz.nprocs);
	fflush(stdout);
	fz.rng = fz.seed;
	fz.obs = open(FZ_DEV, O_RDONLY | O_CLOEXEC);
	if (fz.obs < 0 || ioctl(fz.obs, PTO_IOCTL_GET_INFO, &fz.info)) {
		printf("pto-fuzz: cannot open %s: %s\n", FZ_DEV, strerror(errno));
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	fz_baseline();
	fz.t0 = fz_clock();
	fz.deadline_ns = fz.t0 + secs * 1000000000ull;
	last = fz.t0;
	for (i = 0; i < fz.nprocs; i++)
		fz_spawn(&fz.p[i]);
	fz_check();
	while (fz.ops < fz.max_ops && fz_clock() < fz.deadline_ns) {
		fz.step++;
		fz_step();
		if (fz.step % fz.check_every == 0)
			fz_check();
		/* A long run shows it is alive, once a minute. */
		if (fz_clock() - last > 60000000000ull) {
			last = fz_clock();
			printf("pto-fuzz: %llu operations in %.0f s\n",
			       (unsigned long long)fz.ops,
			       (double)(last - fz.t0) / 1e9);
			fflush(stdout);
		}
	}
	fz_check();
	for (i = 0; i < fz.nprocs; i++) {
		fz_reap(&fz.p[i]);
		memset(&fz.p[i].model, 0, sizeof(fz.p[i].model));
	}
	/* Everything the actors had is gone with their files. */
	{
		uint64_t t0 = fz_clock();

		while (fz_check_bos() || fz_check_cores() || fz_check_lanes()) {
			if (fz_clock() - t0 > FZ_SETTLE_NS)
				fz_fail("after the last exit", fz.why);
			usleep(20000);
		}
	}
	printf("pto-fuzz: seed %llu: %llu operations (%llu calls, %llu kills) in %.1f s:",
	       (unsigned long long)fz.seed, (unsigned long long)fz.ops,
	       (unsigned long long)fz.calls, (unsigned long long)fz.kills,
	       (double)(fz_clock() - fz.t0) / 1e9);
	for (i = 0; i < fz_nops && i < 32; i++)
		printf(" %s %llu", fz_ops[i].name,
		       (unsigned long long)fz.per_op[i]);
	printf("\npto-fuzz: %llu cores launched, %llu own tasks checked, %llu tasks outside the file refused, %llu cores retired, %llu stale windows SIGBUSed, %llu tasks raced by a stop, %llu buffers of killed children found\n",
	       (unsigned long long)fz.ev[FZ_EV_LAUNCHED],
	       (unsigned long long)fz.ev[FZ_EV_TASK_OK],
	       (unsigned long long)fz.ev[FZ_EV_TASK_DENIED],
	       (unsigned long long)fz.ev[FZ_EV_RETIRED],
	       (unsigned long long)fz.ev[FZ_EV_STALE_WINDOW],
	       (unsigned long long)fz.ev[FZ_EV_RACED],
	       (unsigned long long)fz.ev[FZ_EV_CHILD_LEFT]);
	printf("pto-fuzz: %llu lanes bound, %llu captures, %llu captures outside the buffer refused, %llu graphs run, %llu graphs refused\n",
	       (unsigned long long)fz.ev[FZ_EV_LANE_BOUND],
	       (unsigned long long)fz.ev[FZ_EV_CAPTURED],
	       (unsigned long long)fz.ev[FZ_EV_CAPTURE_DENIED],
	       (unsigned long long)fz.ev[FZ_EV_GRAPH_RUN],
	       (unsigned long long)fz.ev[FZ_EV_GRAPH_REFUSED]);
	printf("pto-fuzz: OK\n");
	return 0;
}
