// SPDX-License-Identifier: MIT
/*
 * Randomized stress under ThreadSanitizer: random DAGs (tags, explicit deps,
 * nested scopes, groups, injected failures, SPMD), two runs pipelined on the
 * in-process backend. Checked per run: every edge was respected, a task ran
 * once or (poisoned) never, the run's status matches, everything is given
 * back. PTO_STRESS_SEED=N reproduces a run (printed); PTO_STRESS_SECONDS
 * bounds it (default 3, at most 20).
 */
#include <stdio.h>
#include <stdlib.h>
#include "kselftest_harness.h"
#include "orch_test.h"

#define MAXT 64
#define NBUF 6
#define MAXDEP 8

enum { MUST_RUN, MAYBE, MUST_NOT };

struct rec {
	_Atomic int runs[4];
	_Atomic uint64_t start[4], end[4];
	int nmembers;
	int inject;		/* member 0 fails */
	int outer;		/* submitted in the outer scope */
	int expect;
	int failed_model;	/* MUST_RUN and injected: ran and failed */
	int ndep;
	int dep[MAXT * 2];
};

struct run_ctx {
	uint64_t rng;
	int n;
	struct rec rec[MAXT];
	char buf[NBUF][64];
	struct pto_task h[MAXT];
};

static _Atomic uint64_t SEQ;

static uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

static int k_task(struct pto_task_ctx *c)
{
	struct rec *r = c->user;
	uint32_t m = c->member;
	int spin = (int)(c->task_id % 7) * 200, i;

	atomic_store(&r->start[m], atomic_fetch_add(&SEQ, 1) + 1);
	atomic_fetch_add(&r->runs[m], 1);
	for (i = 0; i < spin; i++)
		__asm__ volatile("" ::: "memory");
	atomic_store(&r->end[m], atomic_fetch_add(&SEQ, 1) + 1);
	if (r->inject && m == 0) {
		snprintf(c->errmsg, c->errmsg_len, "injected failure");
		return -EIO;
	}
	return 0;
}

static void add_edge(struct rec *c, int p)
{
	int i;

	for (i = 0; i < c->ndep; i++)
		if (c->dep[i] == p)
			return;
	c->dep[c->ndep++] = p;
}

/* Build one random DAG; the model edges go into rec[].dep. */
static int build(pto_orch *o, void *arg)
{
	struct run_ctx *x = arg;
	int writer[NBUF], depth = 1, i, err = 0;
	struct pto_task_args a[2];

	for (i = 0; i < NBUF; i++)
		writer[i] = -1;
	pto_args_init(&a[0]);
	pto_args_init(&a[1]);
	for (i = 0; i < x->n && !err; i++) {
		struct rec *r = &x->rec[i];
		struct pto_task_args *mp[2] = { &a[0], &a[1] };
		struct pto_callable c = { .fn = k_task, .user = r };
		int kind = (int)(rnd(&x->rng) % 7), m, j, nt, nargs;

		memset(r, 0, sizeof(*r));
		r->nmembers = (kind == 4 || kind == 5) ? 2 : 1;
		if (kind == 6)	/* SPMD: 1..4 blocks sharing one args */
			r->nmembers = 1 + (int)(rnd(&x->rng) % 4);
		nargs = kind == 6 ? 1 : r->nmembers;
		r->inject = rnd(&x->rng) % 60 == 0;
		r->outer = depth == 1;
		/* scopes */
		if (depth < 5 && rnd(&x->rng) % 8 == 0) {
			err = pto_scope_begin(o);
			depth++;
		} else if (depth > 1 && rnd(&x->rng) % 6 == 0) {
			err = pto_scope_end(o);
			depth--;
		}
		r->outer = depth == 1;
		for (m = 0; m < nargs; m++) {
			pto_args_reset(&a[m]);
			nt = (int)(rnd(&x->rng) % 4);
			for (j = 0; j < nt; j++) {
				int b = (int)(rnd(&x->rng) % NBUF);
				enum pto_tag tag = (enum pto_tag)(rnd(&x->rng) % PTO_TAG_NR);
				struct pto_tensor t = pto_tensor_host(x->buf[b], 64);

				pto_args_add_tensor(&a[m], &t, tag);
			}
			nt = i ? (int)(rnd(&x->rng) % 3) : 0;
			for (j = 0; j < nt; j++) {
				int p = (int)(rnd(&x->rng) % (uint64_t)i);

				if (rnd(&x->rng) & 1)
					pto_args_add_dep(&a[m], x->h[p]);
				else
					pto_args_add_dep_wait(&a[m], x->h[p]);
				add_edge(r, p);
			}
		}
		/* The model TensorMap: explicit deps first, then every
		 * lookup (member / tensor order), then every insert, as
		 * infer_deps: an INPUT named after an output of the same
		 * key still reads the previous writer. OUTPUT tensors have
		 * data set, so none is auto-allocated. */
		for (m = 0; m < nargs; m++)
			for (j = 0; j < (int)a[m].ntensors; j++) {
				int b = (int)(((char *)(uintptr_t)a[m].tensors[j].t.data -
					       x->buf[0]) / 64);
				int tag = a[m].tensors[j].tag;

				if ((tag == PTO_INPUT || tag == PTO_INOUT) &&
				    writer[b] >= 0)
					add_edge(r, writer[b]);
			}
		for (m = 0; m < nargs; m++)
			for (j = 0; j < (int)a[m].ntensors; j++) {
				int b = (int)(((char *)(uintptr_t)a[m].tensors[j].t.data -
					       x->buf[0]) / 64);
				int tag = a[m].tensors[j].tag;

				if (tag == PTO_OUTPUT || tag == PTO_INOUT ||
				    tag == PTO_OUTPUT_EXISTING)
					writer[b] = i;
			}
		switch (kind) {
		case 0:
			err = pto_submit_next_level(o, &c, &a[0], NULL,
						    pto_on_worker((int32_t)(rnd(&x->rng) % 3)),
						    &x->h[i]);
			break;
		case 1:
			err = pto_submit_next_level(o, &c, &a[0], NULL,
						    pto_on_kind(PTO_WORKER_AIV), &x->h[i]);
			break;
		case 2:
		case 3:
			err = pto_submit_sub(o, &c, &a[0], &x->h[i]);
			break;
		case 4: {
			int32_t w0 = (int32_t)(rnd(&x->rng) % 3);
			int32_t ids[2] = { w0, (w0 + 1 + (int32_t)(rnd(&x->rng) % 2)) % 3 };

			err = pto_submit_next_level_group(o, &c, mp, 2, NULL, ids,
							  &x->h[i]);
			break;
		}
		case 5:
			err = pto_submit_sub_group(o, &c, mp, 2, &x->h[i]);
			break;
		default:
			err = pto_submit_spmd(o, &c, &a[0], NULL, PTO_WORKER_AIV,
					      (uint32_t)r->nmembers, &x->h[i]);
			break;
		}
	}
	while (!err && depth-- > 1)
		err = pto_scope_end(o);
	pto_args_fini(&a[0]);
	pto_args_fini(&a[1]);
	return err;
}

/* Returns a description of the first violation, or NULL. */
static const char *check(struct run_ctx *x, int status, char *why, size_t len)
{
	int i, j, m, any_failed = 0;

	for (i = 0; i < x->n; i++) {
		struct rec *r = &x->rec[i];
		int ran = atomic_load(&r->runs[0]) > 0;

		r->expect = MUST_RUN;
		for (j = 0; j < r->ndep; j++) {
			struct rec *p = &x->rec[r->dep[j]];
			int bad = p->expect != MUST_RUN || p->failed_model;

			if (bad && p->outer && p->expect != MAYBE)
				r->expect = MUST_NOT;
			else if (bad && r->expect == MUST_RUN)
				r->expect = MAYBE;
		}
		r->failed_model = r->expect == MUST_RUN && r->inject;
		for (m = 0; m < r->nmembers; m++) {
			int n = atomic_load(&r->runs[m]);

			if (n > 1)
				return snprintf(why, len, "task %d member %d ran %d times",
						i, m, n), why;
			if (r->expect == MUST_RUN && n != 1)
				return snprintf(why, len, "task %d member %d never ran", i,
						m), why;
			if (r->expect == MUST_NOT && n)
				return snprintf(why, len, "poisoned task %d ran", i), why;
		}
		if (ran && r->inject)
			any_failed = 1;
		if (!ran)
			continue;
		for (j = 0; j < r->ndep; j++) {
			struct rec *p = &x->rec[r->dep[j]];

			for (m = 0; m < p->nmembers; m++) {
				uint64_t pe = atomic_load(&p->end[m]);
				int mm;

				if (!atomic_load(&p->runs[m]))
					continue;
				for (mm = 0; mm < r->nmembers; mm++)
					if (atomic_load(&r->runs[mm]) &&
					    pe >= atomic_load(&r->start[mm]))
						return snprintf(why, len,
							"task %d started before its producer %d ended",
							i, r->dep[j]), why;
			}
		}
	}
	if (!!status != any_failed)
		return snprintf(why, len, "run status %d, a task failed: %d", status,
				any_failed), why;
	return NULL;
}

TEST(random_dags)
{
	static const struct pto_worker_desc w[] = {
		OT_WORKER(0, PTO_WORKER_AIV), OT_WORKER(1, PTO_WORKER_AIV),
		OT_WORKER(2, PTO_WORKER_AIC),
		OT_WORKER(3, PTO_WORKER_SUB), OT_WORKER(4, PTO_WORKER_SUB),
	};
	struct pto_orch_config cfg = { .heap_ring_size = 1 << 20, .task_window = 160,
				       .timeout_ms = 20000, .workers = w,
				       .nworkers = 5 };
	const char *env = getenv("PTO_STRESS_SEED");
	const char *secs = getenv("PTO_STRESS_SECONDS");
	uint64_t seed = env ? strtoull(env, NULL, 0) : ot_now_ns();
	uint64_t budget = (secs ? strtoull(secs, NULL, 0) : 3) * 1000000000ULL;
	uint64_t t0 = ot_now_ns(), rng = seed | 1;
	struct run_ctx *x = calloc(2, sizeof(*x));
	pto_run *r[2] = { NULL, NULL };
	int iter = 0, k, nstat[2] = { 0, 0 };
	char why[160];
	pto_orch *o;

	/* The harness kills a test after 30 s: stay well inside it. */
	if (budget > 20000000000ULL)
		budget = 20000000000ULL;
	fprintf(stderr, "# seed %llu (PTO_STRESS_SEED to reproduce)\n",
		(unsigned long long)seed);
	fflush(stderr);
	ASSERT_NE(NULL, x);
	ASSERT_EQ(0, pto_orch_create_inproc(&cfg, &o));
	for (;;) {
		bool more = ot_now_ns() - t0 < budget;

		k = iter & 1;
		if (r[k]) {
			int st = pto_run_wait(r[k], 30000);

			if (st == -ETIMEDOUT)
				TH_LOG("seed %llu: run did not terminate",
				       (unsigned long long)seed);
			ASSERT_NE(-ETIMEDOUT, st);
			if (check(&x[k], st, why, sizeof(why)))
				TH_LOG("seed %llu iteration %d: %s",
				       (unsigned long long)seed, iter, why);
			ASSERT_EQ(NULL, check(&x[k], st, why, sizeof(why)));
			nstat[!!st]++;
			pto_run_release(r[k]);
			r[k] = NULL;
		}
		if (!more && !r[!k])
			break;
		if (!more) {
			iter++;
			continue;
		}
		x[k].rng = rnd(&rng);
		x[k].n = 8 + (int)(rnd(&rng) % (MAXT - 8));
		ASSERT_EQ(0, pto_run_start(o, build, &x[k], &r[k]));
		iter++;
	}
	if (!ot_empty(o))
		TH_LOG("seed %llu: resources not returned", (unsigned long long)seed);
	ASSERT_TRUE(ot_empty(o));
	fprintf(stderr, "# %d runs (%d ok, %d with failures) in %.1f s\n", iter,
		nstat[0], nstat[1], (double)(ot_now_ns() - t0) / 1e9);
	ASSERT_EQ(0, pto_orch_close(o, 5000));
	ASSERT_EQ(0, pto_orch_destroy(o));
	free(x);
}

TEST_HARNESS_MAIN
