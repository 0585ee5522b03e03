// SPDX-License-Identifier: MIT
/*
 * The device backend: scheduler threads own partitions of a device's clusters,
 * dispatch READY tasks to their cores through the register windows and hand
 * completions back. A loop step: sched_reap() (COND -> orch_member_done()),
 * sched_dispatch() (idle core -> orch_ready_pop() -> payload -> id),
 * sched_sleep() (poll the eventfd). Steady state makes no system call.
 * Documentation/scheduler.md.
 */
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
#include "trace/trace.h"

static const char *task_err_name(uint32_t st)
{
	static const char *const names[] = {
		"ok", "unknown kernel", "bad dtype", "bad shape or strides",
		"address outside the owner's GM", "device fault",
		"core stopped", "bad payload", "args capture timed out",
		"args capture's claimer lost",
	};

	return st < sizeof(names) / sizeof(names[0]) ? names[st] : "unknown";
}

/* An id went out to core @c: it is busy, and awake or being rung. */
static void sched_core_sent(struct sched_core *c)
{
	unsigned int k = (unsigned int)(c - c->t->cores);

	mask_set(&c->t->busy, k);
	mask_clear(&c->t->parked, k);
}

/*
 * Publish the id of core @c's next payload (written already) for @d: the
 * slot of its parity remembers the dispatch, the core is busy, and a
 * parked core gets its bit in @ring (one doorbell ioctl per step).
 */
void sched_post(struct sched_core *c, const struct orch_dispatch *d,
		int mix, uint64_t *ring)
{
	bool traced = trace_on(trace_self) && orch_dispatch_traced(d);
	uint64_t ts = 0, tsc = 0;
	int need_ring;
	uint32_t id;

	/* Before the id's release: the core's start is after it. */
	if (traced)
		ts = trace_clock_stamp(trace_self, true, &tsc);
	id = core_rc_dispatch(c->rc, &need_ring);
	c->slot[id & 1] = (struct sched_slot){ .d = *d, .mix = mix };
	if (traced)
		trace_task_clock(trace_self, TRACE_DISPATCHED, true, ts, tsc,
				 orch_dispatch_run_id(d), d->task_id,
				 c->rc->payload[id & 1]->func_id,
				 (uint16_t)c->rc->index);
	sched_core_sent(c);
	if (need_ring)
		sched_ring_bit(ring, c->rc->index);
}

/*
 * Send @d to core @c (its payload written from the dispatch view). A task
 * whose arguments do not translate completes at once with the error.
 */
static void sched_send(struct sched_backend *be, struct sched_core *c,
		       const struct orch_dispatch *d, uint64_t *ring)
{
	struct orch_dispatch_view v;
	char msg[128];
	int ret;

	orch_dispatch_view(d, &v);
	/* Inputs before the payload (and so the id) goes out. */
	sched_dump_maybe(c->t, d, PTO_DUMP_BEFORE_DISPATCH, false);
	ret = sched_build_payload(&v, core_rc_next_payload(c->rc),
				  &c->payload_dirty[core_rc_next_parity(c->rc)],
				  msg, sizeof(msg));
	if (ret)
		orch_member_done(be->orch, d, ret, msg);
	else
		sched_post(c, d, 0, ring);
}

/*
 * Count a task that ended on core @c with device @status; its error: 0,
 * -EIO for a device error, -ECANCELED for a task stopped by this
 * thread's own abort (sched_abort_cores()), with @msg saying which.
 */
int sched_task_end(struct sched_thread *t, const struct sched_core *c,
		   uint32_t status, char *msg, size_t len)
{
	/* This thread is the counters' only writer: no locked add per task
	 * (readers load them, relaxed). */
	atomic_store_explicit(&t->tasks,
			      atomic_load_explicit(&t->tasks,
						   memory_order_relaxed) + 1,
			      memory_order_relaxed);
	if (status == PTO_TASK_OK)
		return 0;
	atomic_store_explicit(&t->errors,
			      atomic_load_explicit(&t->errors,
						   memory_order_relaxed) + 1,
			      memory_order_relaxed);
	if (status == PTO_TASK_ESTOP && t->aborted) {
		snprintf(msg, len, SCHED_ABORT_MSG ": task stopped on core %u",
			 c->rc->index);
		return -ECANCELED;
	}
	snprintf(msg, len, "device error %u (%s) on core %u", status,
		 task_err_name(status), c->rc->index);
	return -EIO;
}

/* The core's own start / end stamps of task @id (its payload buffer,
 * written before its FIN, which core_rc_reap acquired), and COMPLETED,
 * read after that acquire. */
static void sched_trace_done(const struct sched_core *c, uint32_t id,
			     const struct orch_dispatch *d)
{
	const struct pto_payload *p = c->rc->payload[id & 1];
	uint64_t run = orch_dispatch_run_id(d), tsc;
	uint64_t ts = trace_clock_stamp(trace_self, false, &tsc);
	uint16_t core = (uint16_t)c->rc->index;

	if (p->start_ns && p->end_ns >= p->start_ns) {
		trace_task_at(trace_self, TRACE_STARTED, p->start_ns, run,
			      d->task_id, p->func_id, core);
		trace_task_at(trace_self, TRACE_ENDED, p->end_ns, run,
			      d->task_id, p->func_id, core);
	}
	trace_task_clock(trace_self, TRACE_COMPLETED, false, ts, tsc, run,
			 d->task_id, 0, core);
}

/*
 * Step 1: hand every completion of the thread's cores to the orchestrator.
 * The completing core asks for its own next task in the same call
 * (orch_member_done_pop): it is still spinning, so it needs no doorbell.
 */
static int sched_reap(struct sched_thread *t, uint64_t *ring)
{
	struct sched_backend *be = t->be;
	struct core_done done[2];
	unsigned int k;
	int moved = 0;

	for_each_core_in(k, &t->busy) {
		struct sched_core *c = &t->cores[k];
		int i, n = core_rc_reap(c->rc, done);
		uint32_t kept = 0;

		for (i = 0; i < n; i++) {
			struct sched_slot *s = &c->slot[done[i].id & 1];
			struct orch_dispatch next;
			char msg[128];
			int err = 0, got;

			moved++;
			if (trace_on(trace_self) &&
			    orch_dispatch_traced(&s->d))
				sched_trace_done(c, done[i].id, &s->d);
			err = sched_task_end(t, c, done[i].status, msg,
					     sizeof(msg));
			/* Outputs before a successor can be released. */
			if (!s->mix)
				sched_dump_maybe(t, &s->d,
						 PTO_DUMP_AFTER_COMPLETION,
						 false);
			if (s->mix) {
				sched_mix_done(be, c->cl, err, msg);
				continue;
			}
			/*
			 * Both of the core's tasks done (the older one
			 * implied by the next's ACK): the older one's worker
			 * stays loaded, and the next completion makes the
			 * core's worker idle for both in its one sched_mu
			 * hold (orch_member_done_keep; about half of the
			 * independent shape's completions come in pairs).
			 */
			if (i + 1 < n && !c->slot[done[i + 1].id & 1].mix) {
				orch_member_done_keep(be->orch, &s->d, err,
						      err ? msg : NULL);
				kept++;
				continue;
			}
			/*
			 * Not the core's last completion (its next is a MIX
			 * member's), a core that parked already (its next
			 * task would cost a doorbell: leave the work to
			 * sched_dispatch()'s placement), or a cluster that
			 * wants its cores for a MIX task: no pop for this
			 * core.
			 */
			if (i + 1 < n || !core_rc_can_dispatch(c->rc) ||
			    core_rc_parked(c->rc) ||
			    atomic_load_explicit(&c->cl->mix_wanted,
						 memory_order_relaxed)) {
				orch_member_done_kept(be->orch, &s->d, err,
						      err ? msg : NULL, kept);
			} else {
				got = orch_member_done_pop_kept(be->orch, &s->d,
								err,
								err ? msg : NULL,
								&next, kept);
				if (got)
					sched_send(be, c, &next, ring);
			}
			kept = 0;
		}
		if (!c->rc->ninflight)
			mask_clear(&t->busy, k);
	}
	return moved;
}

/*
 * Placement passes of sched_dispatch(): a parked core costs a doorbell and a
 * wake-up, so work goes to idle awake cores, then running cores' pending
 * slots, and parked cores get what is left, one per wake_delay_us.
 */
enum { PASS_IDLE, PASS_PENDING, PASS_PARKED, PASS_NR };

/*
 * Step 2: a cluster whose cores are idle starts a waiting MIX task; then each
 * core with a free slot pops, pass by pass (idle awake, busy, idle parked). A
 * cluster with MIX work wanted takes no single-core work. A parked pass put
 * off is remembered in @backlog_since.
 */
static int sched_dispatch(struct sched_thread *t, uint64_t *ring)
{
	struct sched_backend *be = t->be;
	struct sched_mask blocked, idle, unknown, pass_set[PASS_NR];
	unsigned int k, wi;
	uint32_t asked = 0, avail = 0;	/* bit per kind, see below */
	int moved = 0, pass;

	memset(&blocked, 0, sizeof(blocked));
	/*
	 * The cluster scan only with MIX work running or wanted (mix_any,
	 * see struct sched_thread), so other work does not pay for it. The
	 * exchange before the scan: a
	 * kick that sets a cluster's mix_wanted after it sets mix_any again,
	 * and one before it is seen by the scan (acquire on the exchange,
	 * release on the kicker's mix_any store after its mix_wanted store).
	 */
	if (t->mix_running ||
	    (atomic_load_explicit(&t->mix_any, memory_order_relaxed) &&
	     atomic_exchange_explicit(&t->mix_any, 0, memory_order_acquire))) {
		bool wanted = false;

		for (k = 0; k < t->nclusters; k++) {
			struct sched_cluster *cl = &t->cl[k];
			bool want;

			if (!cl->mix_running &&
			    atomic_load_explicit(&cl->mix_wanted,
						 memory_order_relaxed))
				moved += sched_try_mix(be, cl, ring);
			want = atomic_load_explicit(&cl->mix_wanted,
						    memory_order_relaxed);
			wanted |= want;
			if (cl->mix_running || want)
				for (wi = 0; wi < 3; wi++)
					mask_set(&blocked, 3 * k + wi);
		}
		/* A wanted task that could not start: look again next time. */
		if (wanted)
			atomic_store_explicit(&t->mix_any, 1, memory_order_relaxed);
	}
	for (wi = 0; wi < PTO_CORE_MASK_WORDS; wi++) {
		idle.w[wi] = t->all.w[wi] & ~t->busy.w[wi] & ~blocked.w[wi];
		unknown.w[wi] = idle.w[wi] & ~t->parked.w[wi];
	}
	/* An idle core not known to be parked may have parked since. */
	for_each_core_in(k, &unknown)
		if (core_rc_parked(t->cores[k].rc))
			mask_set(&t->parked, k);
	for (wi = 0; wi < PTO_CORE_MASK_WORDS; wi++) {
		pass_set[PASS_IDLE].w[wi] = idle.w[wi] & ~t->parked.w[wi];
		pass_set[PASS_PENDING].w[wi] = t->busy.w[wi] & ~blocked.w[wi];
		pass_set[PASS_PARKED].w[wi] = idle.w[wi] & t->parked.w[wi];
	}
	for (pass = 0; pass < PASS_NR; pass++) {
		if (pass == PASS_PARKED) {
			uint64_t now, delay = t->wake_delay_ns;

			if (mask_empty(&pass_set[pass])) {
				t->backlog_since = 0;
				t->clock_skip = 0;
				break;
			}
			/*
			 * While the pass is put off, read the clock once per
			 * SCHED_CLOCK_STRIDE steps (a clock read is dear under
			 * emulation), and only then: a left-over skip would
			 * turn a lone task for a parked core into a step that
			 * moves nothing.
			 */
			if (t->backlog_since && t->clock_skip) {
				t->clock_skip--;
				break;
			}
			/*
			 * One parked core per wake_delay_us (see above); with
			 * max_awake cores awake already, one per
			 * SCHED_CAPPED_WAKE_MULT x wake_delay_us.
			 */
			now = sched_now_ns();
			if (mask_at_least(&pass_set[PASS_IDLE],
					  &pass_set[PASS_PENDING], t->max_awake))
				delay *= SCHED_CAPPED_WAKE_MULT;
			if (now - t->last_wake_ns < delay) {
				if (!t->backlog_since)
					t->backlog_since = now;
				t->clock_skip = SCHED_CLOCK_STRIDE - 1;
				break;
			}
			t->backlog_since = 0;
		}
		for_each_core_in(k, &pass_set[pass]) {
			struct sched_core *c = &t->cores[k];
			uint32_t bit = 1u << c->kind;
			struct orch_dispatch d;

			/*
			 * Running + pending slot: a second id may go out once
			 * the core ACKed the first. No pop unless something
			 * this core's worker could take is queued (a pop takes
			 * sched_mu); the answer is kept per kind between pops
			 * (@asked, @avail) until the generation moves.
			 */
			if (!core_rc_can_dispatch(c->rc))
				continue;
			if (!(asked & bit)) {
				asked |= bit;
				if (orch_ready_any_kind(be->orch, c->kind))
					avail |= bit;
			}
			if (!(avail & bit))
				continue;
			/* A pop may take its kind's last task, or route the
			 * pending list: ask again after it. */
			asked = avail = 0;
			if (!orch_ready_pop(be->orch, c->widx, &d))
				continue;
			moved++;
			sched_send(be, c, &d, ring);
			/*
			 * One parked core per wake_delay_us: a backlog that
			 * persists wakes more, a burst that the awake (or just
			 * woken) cores absorb wakes few. Come back for more.
			 */
			if (pass == PASS_PARKED) {
				t->last_wake_ns = sched_now_ns();
				t->backlog_since = t->last_wake_ns;
				break;
			}
		}
	}
	return moved;
}

/*
 * Step 3: sleep until a completion or a kick. Lost kicks (Dekker): we store
 * sleeping, fence, read kicked; kick() stores kicked, fences, reads sleeping
 * and then writes the eventfd. Lost completions: core_launch_arm() pairs with
 * the core's COND store (Documentation/mock-cores.md).
 */
static void sched_sleep(struct sched_thread *t)
{
	struct sched_backend *be = t->be;
	struct pollfd pfd = { .fd = t->evfd, .events = POLLIN };
	uint64_t v;
	int n;

	/*
	 * Take the READY tasks the orch thread holds deferred before sleeping
	 * (orch_ready_steal): routing them kicks this thread or their
	 * target's.
	 */
	if (orch_ready_steal(be->orch, t->kinds, t->heavy_sleep)) {
		t->heavy_sleep = false;
		return;
	}
	atomic_store_explicit(&t->sleeping, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
	if (t->self_kicked ||
	    atomic_load_explicit(&t->kicked, memory_order_relaxed) ||
	    atomic_load(&be->stop))
		goto out;
	/*
	 * The cores' completion wake-ups and kick() write this eventfd, so a
	 * heavy sleep needs no timeout; a light one (its steal skipped the
	 * barrier) is bounded (before_sleep). Draining after the poll loses
	 * nothing: the caller reaps every core and re-reads @kicked.
	 */
	if (core_launch_arm(t->launch) > 0)
		goto out;
	atomic_fetch_add_explicit(&t->sleeps, 1, memory_order_relaxed);
	do
		n = poll(&pfd, 1, t->heavy_sleep ? -1 :
			 (int)(ORCH_LIGHT_SLEEP_NS / 1000000));
	while (n < 0 && errno == EINTR);
	t->heavy_sleep = n == 0;
out:
	atomic_store_explicit(&t->sleeping, 0, memory_order_relaxed);
	if (read(t->evfd, &v, sizeof(v)) < 0 && errno != EAGAIN) {
		/* EAGAIN: nobody wrote it */
	}
}

/* The scheduler thread this thread is, NULL on any other (wake_thread). */
_Thread_local struct sched_thread *sched_self;

void *sched_thread_main(void *arg)
{
	struct sched_thread *t = arg;
	struct sched_backend *be = t->be;
	uint64_t spin_ns = (uint64_t)be->cfg.spin_us * 1000, idle_since = 0;
	uint64_t ring[PTO_CORE_MASK_WORDS], gen, gen_empty = ~0ULL;
	unsigned int idle_steps = 0;
	struct trace_buf *tb;
	uint64_t ts;

	/*
	 * Consumptions this thread's completions cause go to its batch and
	 * are flushed together (orch_consume_flush; deferring one is safe:
	 * orch_release_ref_batched): when the batch is full, before the
	 * thread idles, when it leaves its loop, and at the latest
	 * SCHED_CONSUME_STEPS steps after the first went in, so run waits and
	 * the orch thread's back-pressure see every consumption soon.
	 */

	t->consume.n = 0;
	t->consume_steps = 0;
	orch_set_consume_batch(&t->consume);
	sched_self = t;
	trace_self_enter(orch_trace(be->orch), TRACE_ROLE_SCHED, t->index);
	while (!atomic_load_explicit(&be->stop, memory_order_acquire)) {
		int moved, kicked;

		/*
		 * Consume kicks before looking: a later kick is seen again.
		 * The exchange only when another thread's kick is there to
		 * consume: a locked instruction per loop step (several per
		 * task) is dear in the TCG guest, and most kicks are the
		 * thread's own (wake_thread()), which it consumes with a plain
		 * load and store. A kick that lands after the load is seen at
		 * the next step, as one that lands after the exchange would be.
		 */
		kicked = t->self_kicked;
		t->self_kicked = false;
		if (atomic_load_explicit(&t->kicked, memory_order_relaxed) &&
		    atomic_exchange_explicit(&t->kicked, 0, memory_order_seq_cst))
			kicked = 1;
		/*
		 * pto_orch_abort(): sched_abort() stores abort, then writes
		 * the eventfd. A thread that loads 0 here either has the
		 * write still to see (its poll() returns at once) or drained
		 * it in sched_sleep() after the store: each is followed by
		 * this load again. After the kicks' consumption above, like
		 * every pop of the step: a kick that lands later is seen at
		 * the next step, in both modes.
		 */
		if (!t->aborted &&
		    atomic_load_explicit(&be->abort, memory_order_acquire) &&
		    !sched_abort_cores(t)) {
			/*
			 * Not retired: no task may start after the abort,
			 * and no completion sleep either (a hung core would
			 * never end it): a bounded pause, then ask again.
			 * The cores' completions wait for the abandon.
			 */
			struct pollfd pfd = { .fd = t->evfd, .events = POLLIN };

			poll(&pfd, 1, SCHED_ABORT_RETRY_MS);
			continue;
		}
		if (t->aborted) {
			moved = sched_abort_step(t);
			/* The runs see their failed tasks consumed now. */
			if (t->consume.n) {
				orch_consume_flush(be->orch, &t->consume);
				t->consume_steps = 0;
			}
			/*
			 * Nothing in flight any more: the sleep polls the
			 * eventfd alone (core_launch_arm() finds no core to
			 * arm), which kicks and stop write.
			 */
			if (!moved && !t->self_kicked)
				sched_sleep(t);
			continue;
		}
		gen = orch_ready_gen(be->orch);
		memset(ring, 0, sizeof(ring));
		/* Phases are recorded while runs are. */
		tb = trace_on(trace_self) && orch_trace_enabled(be->orch) ?
		     trace_self : NULL;
		ts = trace_on(tb) ? trace_stamp(tb) : 0;
		moved = sched_reap(t, ring);
		if (moved)
			trace_phase_since(tb, TRACE_PHASE_REAP, ts);
		/*
		 * Ask the orchestrator (its lock) only when something may have
		 * changed since the last pass found nothing: new READY work
		 * (the generation), a kick (a group head became startable,
		 * MIX work), or a completion here (a slot or core came free).
		 */
		if (moved || kicked || gen != gen_empty || t->backlog_since) {
			int got;

			ts = trace_on(tb) ? trace_stamp(tb) : 0;
			got = sched_dispatch(t, ring);
			if (got)
				trace_phase_since(tb, TRACE_PHASE_DISPATCH, ts);
			gen_empty = got ? ~0ULL : gen;
			moved += got;
		}
		/* One doorbell ioctl for every parked core that got work. */
		if (ring[0] | ring[1])
			core_doorbell(t->launch, ring);
		if (t->consume.n &&
		    (++t->consume_steps >= SCHED_CONSUME_STEPS ||
		     (!moved && !t->backlog_since))) {
			orch_consume_flush(be->orch, &t->consume);
			t->consume_steps = 0;
		}
		/* Busy again: the next idle period starts light (sched_sleep). */
		if (moved)
			t->heavy_sleep = false;
		/* A backlog waits for awake cores or wake_delay_us: no sleep. */
		if (moved || t->backlog_since) {
			idle_since = 0;
			idle_steps = 0;
			continue;
		}
		/*
		 * Idle for a few steps: the orch thread's next READY task of
		 * our kinds is routed at once, not with its batch (ready.c).
		 * Not at the first idle step: while the device outpaces the
		 * orch thread it is idle after every task, and every
		 * publication would be flushed alone.
		 */
		if (++idle_steps == SCHED_HUNGRY_STEPS)
			orch_ready_hungry_kinds(be->orch, t->kinds);
		if (!idle_since) {
			idle_since = sched_now_ns();
			continue;
		}
		if (sched_now_ns() - idle_since < spin_ns) {
			sched_cpu_relax();
			continue;
		}
		ts = trace_on(tb) ? trace_stamp(tb) : 0;
		sched_sleep(t);
		trace_phase_since(tb, TRACE_PHASE_SLEEP, ts);
		idle_since = 0;
	}
	orch_consume_flush(be->orch, &t->consume);
	orch_set_consume_batch(NULL);
	sched_self = NULL;
	trace_self = NULL;
	/* An aborted thread retired its cores already (sched_abort_cores). */
	if (!t->aborted)
		sched_retire(t);
	return NULL;
}
