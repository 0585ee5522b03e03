// SPDX-License-Identifier: MIT
/* MIX workers: a cluster's AIC and two AIV cores taken together for one
 * MIX task, by the thread that owns the cluster. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include "sched/sched.h"
#include "orch/backend.h"

/*
 * Cluster @cl's MIX worker may have work: its flag, then the thread's
 * mix_any (release, after the flag: see sched_dispatch()). By the kick
 * and by a MIX completion, which looks for the next MIX task at once.
 */
void sched_want_mix(struct sched_cluster *cl)
{
	atomic_store_explicit(&cl->mix_wanted, 1, memory_order_relaxed);
	atomic_store_explicit(&cl->core[0]->t->mix_any, 1, memory_order_release);
}

/*
 * Cluster @cl's MIX task (cl->mix_d) has ended, completed or failed to
 * start: hand it to the orchestrator. The orchestrator kicks idle workers
 * when work is enqueued, not a worker that just finished: look for the
 * next MIX task at once (as orch_member_done_pop() does for a core).
 */
static void sched_mix_end(struct sched_backend *be, struct sched_cluster *cl,
			  int err, const char *msg)
{
	cl->mix_running = 0;
	cl->core[0]->t->mix_running--;
	orch_member_done(be->orch, &cl->mix_d, err, err ? msg : NULL);
	sched_want_mix(cl);
}

/* A core of a MIX task finished; the last of the three completes it. */
void sched_mix_done(struct sched_backend *be, struct sched_cluster *cl,
		    int err, const char *msg)
{
	if (err && !cl->mix_err) {
		cl->mix_err = err;
		snprintf(cl->mix_msg, sizeof(cl->mix_msg), "%s", msg);
	}
	if (--cl->mix_left)
		return;
	sched_dump_maybe(cl->core[0]->t, &cl->mix_d,
			 PTO_DUMP_AFTER_COMPLETION, true);
	sched_mix_end(be, cl, cl->mix_err, cl->mix_msg);
}

/*
 * Start a MIX task on cluster @cl if its three cores are idle. The wanted
 * flag is cleared before the pop: a kick that comes after the pop sets it
 * again (the orchestrator enqueues under its lock before it kicks).
 */
int sched_try_mix(struct sched_backend *be, struct sched_cluster *cl,
		  uint64_t *ring)
{
	struct orch_dispatch d;
	struct pto_payload *first;
	uint8_t first_dirty = SCHED_PAYLOAD_DIRTY_ALL;
	unsigned int i;

	for (i = 0; i < 3; i++)
		if (cl->core[i]->rc->ninflight)
			return 0;
	atomic_store_explicit(&cl->mix_wanted, 0, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
	if (!orch_ready_pop(be->orch, cl->mix_widx, &d))
		return 0;
	cl->mix_d = d;
	/* Inputs before any of the three payloads is written. */
	sched_dump_maybe(cl->core[0]->t, &d, PTO_DUMP_BEFORE_DISPATCH, true);
	cl->mix_err = 0;
	cl->mix_left = 3;
	cl->mix_running = 1;
	cl->core[0]->t->mix_running++;
	/*
	 * The same payload to all three, every buffer filled before the
	 * first id goes out: once posted, a core may run its block and write
	 * status and done_id into its buffer, and a copy made after that
	 * would carry them into a buffer whose block has not run (the reap
	 * of an EXITED echo takes done_id == id for a completion). All ids
	 * go out before any doorbell.
	 */
	first = NULL;
	for (i = 0; i < 3; i++) {
		struct sched_core *c = cl->core[i];
		struct orch_dispatch_view v;
		struct pto_payload *p = core_rc_next_payload(c->rc);
		uint8_t *dirty = &c->payload_dirty[core_rc_next_parity(c->rc)];
		int ret;

		if (!first) {
			orch_dispatch_view(&d, &v);
			ret = sched_build_payload(&v, p, dirty, cl->mix_msg,
						  sizeof(cl->mix_msg));
			if (ret) {
				sched_mix_end(be, cl, ret, cl->mix_msg);
				return 1;
			}
			first = p;
			first_dirty = *dirty;
		} else {
			*p = *first;	/* whole: its tensor slots too */
			*dirty = first_dirty;
		}
	}
	for (i = 0; i < 3; i++)
		sched_post(cl->core[i], &d, 1, ring);
	return 1;
}
