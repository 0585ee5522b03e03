// SPDX-License-Identifier: MIT
/*
 * The device backend of the orchestrator: scheduler threads that own
 * partitions of a device's clusters, dispatch READY tasks to their cores
 * through the register windows and hand completions back to the
 * orchestrator (seed 001's scheduler role, ARCHITECTURE.md's AICPU role).
 *
 * One loop iteration of a thread is three steps, each a function, so a
 * later capture step (args dump at task boundaries) slots in between:
 *   sched_reap()      COND FIN -> orch_member_done() (completion, release,
 *                     READY routing are the orchestrator's own)
 *   sched_dispatch()  idle core -> orch_ready_pop() -> payload -> id
 *   sched_sleep()     nothing moved for spin_us: poll() the thread's
 *                     eventfd, which kicks and its own cores' completion
 *                     wake-ups (PTO_LAUNCH_FLAG_EVENTFD) both write
 * Steady state makes no system call: doorbells only for parked cores,
 * poll() only when nothing moved for the spin budget.
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
#include "orch/orch_internal.h"

#define SCHED_DEFAULT_HEAP (16ULL << 20)
#define SCHED_DEFAULT_SPIN_US 50
#define SCHED_DEFAULT_WAKE_DELAY_US 20

/*
 * Awake cores per thread beyond which parked ones are woken only slowly:
 * on the mock, whose cores are kthreads on the same CPUs, the thread's
 * share of the CPUs left beside the orchestration thread and the
 * scheduler threads, at least one (cores the CPUs cannot run at once add
 * no throughput, only wake-ups and time slices shared with the threads
 * that feed them); on a device, every core. Beyond it a parked core is
 * still woken every SCHED_CAPPED_WAKE_MULT x wake_delay_us, so work that
 * no awake core may take (another kind, an exact target) waits, but
 * never starves.
 *
 * Measured in the 2-vCPU test VM (Documentation/scheduler.md): a second
 * awake core there parks between tasks (the mock lets half the CPUs'
 * worth of idle cores poll) and every task placed on it costs a
 * doorbell; with one awake core fan-out went from 65-95k to 185-245k
 * tasks/s and independent from 140-270k to 230-320k.
 */
#define SCHED_CAPPED_WAKE_MULT 50
#define SCHED_CLOCK_STRIDE 16	/* see sched_dispatch() */
#define SCHED_CONSUME_STEPS 64	/* see sched_thread_main() */
#define SCHED_HUNGRY_STEPS 8	/* see sched_thread_main() */
#define SCHED_ABORT_RETRY_MS 10	/* see sched_thread_main() */

static unsigned int sched_max_awake(const struct pto_dev_info *info,
				    long cpus, unsigned int nthreads)
{
	long n;

	if (!(info->caps & PTO_CAP_MOCK) || cpus < 1 || !nthreads)
		return PTO_MAX_CORES;
	n = (cpus - 1 - (long)nthreads) / (long)nthreads;
	return n > 0 ? (unsigned int)n : 1;
}

/*
 * One thread per lane, but no more than the CPUs left beside the
 * orchestration thread: a scheduler thread spins while it has work, and
 * spinning threads that outnumber the CPUs take them from the thread that
 * submits (and, on the mock, from the cores' kthreads).
 */
static uint32_t sched_default_threads(const struct pto_dev_info *info,
				      long cpus)
{
	uint32_t n = info->lanes;

	if (cpus > 1 && (uint32_t)(cpus - 1) < n)
		n = (uint32_t)(cpus - 1);
	return n ? n : 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static const char *task_err_name(uint32_t st)
{
	static const char *const names[] = {
		"ok", "unknown kernel", "bad dtype", "bad shape or strides",
		"address outside the owner's GM", "device fault",
		"core stopped", "bad payload",
	};

	return st < sizeof(names) / sizeof(names[0]) ? names[st] : "unknown";
}

static void ring_bit(uint64_t *ring, unsigned int core)
{
	ring[core / 64] |= 1ULL << (core % 64);
}

static void mask_set(struct sched_mask *m, unsigned int k)
{
	m->w[k / 64] |= 1ULL << (k % 64);
}

static void mask_clear(struct sched_mask *m, unsigned int k)
{
	m->w[k / 64] &= ~(1ULL << (k % 64));
}

/* No core in @m. */
#define SCHED_MASK_END (PTO_CORE_MASK_WORDS * 64U)

static bool mask_empty(const struct sched_mask *m)
{
	unsigned int wi;

	for (wi = 0; wi < PTO_CORE_MASK_WORDS; wi++)
		if (m->w[wi])
			return false;
	return true;
}

/*
 * Do @a and @b hold at least @n cores between them? Counts only up to @n
 * (the awake cap: 1 in the 2-vCPU test VM): a popcount of every word was
 * a libgcc call per dispatch step (the baseline x86-64 the library is
 * built for has no POPCNT), ~30 instructions per task in fan-out.
 */
static bool mask_at_least(const struct sched_mask *a,
			  const struct sched_mask *b, unsigned int n)
{
	unsigned int wi;

	for (wi = 0; wi < PTO_CORE_MASK_WORDS && n; wi++) {
		uint64_t x = a->w[wi] | b->w[wi];

		for (; x && n; n--)
			x &= x - 1;
	}
	return !n;
}

/* Take the lowest core out of @m; SCHED_MASK_END if none. */
static unsigned int mask_take(struct sched_mask *m)
{
	unsigned int wi;

	for (wi = 0; wi < PTO_CORE_MASK_WORDS; wi++)
		if (m->w[wi]) {
			unsigned int k = (unsigned int)__builtin_ctzll(m->w[wi]);

			m->w[wi] &= m->w[wi] - 1;
			return wi * 64 + k;
		}
	return SCHED_MASK_END;
}

/*
 * Every core of @m at the start, lowest first: the loop walks a copy, so
 * the body may change @m itself (a dispatch sets busy, a reap clears it);
 * a core it adds is not visited in this walk. Taking the lowest bit of a
 * copy is about half the instructions of searching the mask from @k on
 * each time (a fifth of a scheduler step's were the mask walks).
 */
#define for_each_core_in(k, m)						\
	for (struct sched_mask _walk = *(m);				\
	     ((k) = mask_take(&_walk)) != SCHED_MASK_END;)

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
static void sched_post(struct sched_core *c, const struct orch_dispatch *d,
		       int mix, uint64_t *ring)
{
	int need_ring;
	uint32_t id = pto_rc_dispatch(c->rc, &need_ring);

	c->slot[id & 1] = (struct sched_slot){ .d = *d, .mix = mix };
	sched_core_sent(c);
	if (need_ring)
		ring_bit(ring, c->rc->index);
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
	ret = sched_build_payload(&v, pto_rc_next_payload(c->rc),
				  &c->payload_dirty[pto_rc_next_parity(c->rc)],
				  msg, sizeof(msg));
	if (ret)
		orch_member_done(be->orch, d, ret, msg);
	else
		sched_post(c, d, 0, ring);
}

/*
 * Cluster @cl's MIX worker may have work: its flag, then the thread's
 * mix_any (release, after the flag: see sched_dispatch()). By the kick
 * and by a MIX completion, which looks for the next MIX task at once.
 */
static void sched_want_mix(struct sched_cluster *cl)
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
static void sched_mix_done(struct sched_backend *be, struct sched_cluster *cl,
			   int err, const char *msg)
{
	if (err && !cl->mix_err) {
		cl->mix_err = err;
		snprintf(cl->mix_msg, sizeof(cl->mix_msg), "%s", msg);
	}
	if (--cl->mix_left)
		return;
	sched_mix_end(be, cl, cl->mix_err, cl->mix_msg);
}

/*
 * Start a MIX task on cluster @cl if its three cores are idle. The wanted
 * flag is cleared before the pop: a kick that comes after the pop sets it
 * again (the orchestrator enqueues under its lock before it kicks).
 */
static int sched_try_mix(struct sched_backend *be, struct sched_cluster *cl,
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
		struct pto_payload *p = pto_rc_next_payload(c->rc);
		uint8_t *dirty = &c->payload_dirty[pto_rc_next_parity(c->rc)];
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

/* The start of an aborted task's pto_run_error() (pto/orch.h). */
#define SCHED_ABORT_MSG "orchestrator aborted (pto_orch_abort)"

/*
 * Count a task that ended on core @c with device @status; its error: 0,
 * -EIO for a device error, -ECANCELED for a task stopped by this
 * thread's own abort (sched_abort_cores()), with @msg saying which.
 */
static int sched_task_end(struct sched_thread *t, const struct sched_core *c,
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

/*
 * Step 1: hand every completion of the thread's cores to the orchestrator.
 * The completing core asks for its own next task in the same call
 * (orch_member_done_pop): it is still spinning, so it needs no doorbell.
 */
static int sched_reap(struct sched_thread *t, uint64_t *ring)
{
	struct sched_backend *be = t->be;
	struct pto_done done[2];
	unsigned int k;
	int moved = 0;

	for_each_core_in(k, &t->busy) {
		struct sched_core *c = &t->cores[k];
		int i, n = pto_rc_reap(c->rc, done);
		uint32_t kept = 0;

		for (i = 0; i < n; i++) {
			struct sched_slot *s = &c->slot[done[i].id & 1];
			struct orch_dispatch next;
			char msg[128];
			int err = 0, got;

			moved++;
			err = sched_task_end(t, c, done[i].status, msg,
					     sizeof(msg));
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
			if (i + 1 < n || !pto_rc_can_dispatch(c->rc) ||
			    pto_rc_parked(c->rc) ||
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
 * Placement passes of sched_dispatch(). A parked core costs a doorbell
 * ioctl and a wake-up before it runs anything; in the mock that is a
 * kthread woken on a shared CPU (in a TCG guest, often a halted vCPU),
 * slower than an awake core running several short tasks. So work goes to
 * awake cores first: idle ones, then the pending slot of running ones.
 * Parked cores get what is left, one core per wake_delay_us: the first
 * at once, the next only if work is still left for a parked core
 * wake_delay_us later, when the cores woken so far (they now spin and
 * take work in the first two passes) did not absorb it. A stream of
 * short tasks stays on a few hot cores; long tasks wait at most
 * wake_delay_us per core woken before them.
 */
enum { PASS_IDLE, PASS_PENDING, PASS_PARKED, PASS_NR };

/*
 * Step 2: a cluster whose cores are idle starts a waiting MIX task; then
 * every core with a free slot gets the next task it may run, pass by pass
 * (each core is its own worker: a failed pop says nothing of the others).
 * The passes are core sets: idle awake cores, busy cores (running, or
 * rung and waking: their pending slot costs no further wake-up), idle
 * parked cores. Cores of a cluster with a MIX task running or wanted take
 * no single-core work, so the MIX task is not starved.
 * When the parked pass is put off, @backlog_since remembers it: the loop
 * calls this step again, without sleeping, until the pass has run.
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
	 * see struct sched_thread): without it, the scan was a tenth of the
	 * thread's instructions per task. The exchange before the scan: a
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
		if (pto_rc_parked(t->cores[k].rc))
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
			 * SCHED_CLOCK_STRIDE steps: a backlog behind the cap
			 * puts it off for a millisecond, and a clock read at
			 * every step was a third of the thread's time in the
			 * TCG test VM (each is an emulated TSC read there). A
			 * wake comes at most that many steps late. Only while
			 * the pass is put off (@backlog_since keeps the loop
			 * stepping): a skip left over from an earlier backlog
			 * would make a lone task for a parked core a step that
			 * moves nothing, and the thread would sleep on it
			 * (sched_test parked_only_task_after_mix).
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
			now = now_ns();
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
			 * Running + pending slot: the worker has capacity two,
			 * and a second id may go out once the core took the
			 * first (ACK). With nothing queued that the core's
			 * worker could take no pop is tried: each would take
			 * the orchestrator's sched_mu to find nothing (the
			 * chain, where a completing core pops its successor
			 * itself, made ~11 such pops per task; an AIC core
			 * while only AIV work is queued, a third of a pop per
			 * fan-out task). The answer is kept per kind between
			 * pops (@asked, @avail: the chain asked for each of
			 * its idle cores, ~8 times per task). The caller
			 * loaded the generation before this step, and looks
			 * again when it moves (orch_ready_any_kind).
			 */
			if (!pto_rc_can_dispatch(c->rc))
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
				t->last_wake_ns = now_ns();
				t->backlog_since = t->last_wake_ns;
				break;
			}
		}
	}
	return moved;
}

/*
 * Step 3: sleep until a completion or a kick.
 *
 * Lost-kick freedom (Dekker): this thread stores sleeping = 1, then (full
 * fence) reads kicked; kick() stores kicked = 1, then (full fence) reads
 * sleeping. One of the two sees the other's store: either we see kicked
 * and do not sleep, or kick() sees sleeping and writes the eventfd, which
 * makes poll() return. The orchestrator enqueues under its sched_mu before
 * it kicks, so a thread that saw kicked and pops again finds the entry.
 *
 * Lost-completion freedom: pto_launch_arm() stores WAKE_REQ on the cores
 * with work in flight, fences and re-reads COND; the core stores COND,
 * fences and reads WAKE_REQ (Documentation/mock-cores.md).
 */
static void sched_sleep(struct sched_thread *t)
{
	struct sched_backend *be = t->be;
	struct pollfd pfd = { .fd = t->evfd, .events = POLLIN };
	uint64_t v;
	int n;

	/*
	 * READY tasks the orch thread holds back in its batch (ready.c,
	 * orch_ready_defer) are taken before sleeping: routing them kicks
	 * this thread (or the one owning their target), and the caller's
	 * next step dispatches them. Awake and moving, the thread takes them
	 * at a pop for a core whose queues are empty (an idle one does not
	 * pop: deferred appends bump no generation), and the orch thread
	 * routes its batch at once after a thread was idle for
	 * SCHED_HUNGRY_STEPS steps, or when ORCH_READY_BATCH submits filled
	 * it (the rules: orch_ready_steal).
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
	 * The thread's cores were launched with this eventfd
	 * (PTO_LAUNCH_FLAG_EVENTFD): their completion wake-ups and kick()
	 * both write it, and no other thread reads it, so a heavy sleep
	 * needs no timeout; a light one (its steal skipped the barrier) is
	 * bounded, and only one that timed out makes the next sleep heavy
	 * (ready.c, before_sleep) - after the loop's spin_us of idling, so
	 * a slot a light steal missed waits at most ORCH_LIGHT_SLEEP_NS plus
	 * spin_us here. Draining it below, after the poll, loses
	 * nothing: the caller reaps every core and re-reads @kicked
	 * afterwards.
	 */
	if (pto_launch_arm(t->launch) > 0)
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

/*
 * A thread leaving its dispatch loop retires the cores it owns, through
 * the kernel's one retirement protocol (CLOSE before return, seed 003):
 * no completion latch, no other thread involved. A core that does not
 * answer within the kernel's deadline stays quarantined; the count is in
 * the statistics. A thread that never started leaves its cores to the
 * kernel's release of the file.
 */
static int sched_retire(struct sched_thread *t)
{
	uint64_t mask[PTO_CORE_MASK_WORDS] = { 0 };
	struct pto_core_retire r;
	unsigned int k;
	int ret;

	for (k = 0; k < t->ncores; k++)
		ring_bit(mask, t->cores[k].rc->index);
	ret = pto_core_retire(t->be->dev, mask, &r);
	if (ret)
		return ret;
	atomic_store(&t->retired, r.retired);
	atomic_store(&t->retire_ns, r.elapsed_ns);
	atomic_store(&t->quarantined,
		     (uint64_t)(__builtin_popcountll(r.quarantined[0]) +
				__builtin_popcountll(r.quarantined[1])));
	return 0;
}

/*
 * pto_orch_abort(), on the thread: retire its own cores now, through the
 * kernel's one retirement protocol - the same call as at the end of the
 * loop, which then is not made again (a second request would find the
 * cores unlaunched). The running task of each core stops at the EXIT
 * (PTO_TASK_ESTOP within one chunk, whatever its length), a core that
 * does not answer is quarantined at the driver's deadline; the ioctl
 * returns when every core either returned through its gate or was
 * quarantined.
 *
 * Then every id in flight ends, here, once (pto_rc_abandon(), the
 * EXITED echo's rules): the ioctl's return orders the payload loads after
 * the cores' last writes (core.h). A task a core completed before the
 * EXIT ends with its own status; a stopped one with -ECANCELED. Each goes
 * through the orchestrator's completion as any other (a MIX member to
 * its cluster's count), so its consumers are poisoned and its run fails.
 *
 * Returns false if the retirement failed (-ENOMEM: the kernel claims no
 * core before its allocations; -EINTR never reaches here, pto_ioctl()
 * restarts it): nothing was retired, and the loop dispatches nothing and
 * asks again SCHED_ABORT_RETRY_MS later (sched_thread_main()).
 */
static bool sched_abort_cores(struct sched_thread *t)
{
	struct sched_backend *be = t->be;
	struct pto_done done[2];
	unsigned int k;

	/*
	 * Consumptions held back would hold up other runs for the
	 * retirement's duration (up to the driver's deadline).
	 */
	orch_consume_flush(be->orch, &t->consume);
	t->consume_steps = 0;
	if (sched_retire(t))
		return false;
	t->aborted = true;
	for_each_core_in(k, &t->busy) {
		struct sched_core *c = &t->cores[k];
		int i, n = pto_rc_abandon(c->rc, done);

		for (i = 0; i < n; i++) {
			struct sched_slot *s = &c->slot[done[i].id & 1];
			char msg[128];
			int err = sched_task_end(t, c, done[i].status, msg,
						 sizeof(msg));

			if (s->mix)
				sched_mix_done(be, c->cl, err, msg);
			else
				orch_member_done(be->orch, &s->d, err,
						 err ? msg : NULL);
		}
		mask_clear(&t->busy, k);
	}
	return true;
}

/*
 * A step of an aborted thread: every task its workers may take (a core's
 * exact and kind FIFOs, group members, its clusters' MIX tasks) is popped
 * and failed at once, without touching a core. Popping, not cancelling:
 * the orchestrator's routing and group rules stay its own, and a task
 * submitted after the abort (a run still being built) ends the same way.
 * Every worker is idle again right after its pop, so a group's targets
 * are always free; a pop that assigns a group's other members kicks this
 * thread (self_kicked), and the loop steps again while anything moved.
 * Returns the tasks failed.
 */
static int sched_abort_step(struct sched_thread *t)
{
	struct sched_backend *be = t->be;
	struct orch_dispatch d;
	unsigned int k;
	int moved = 0;

	for (k = 0; k < t->ncores + t->nclusters; k++) {
		int32_t widx = k < t->ncores ? t->cores[k].widx :
			       t->cl[k - t->ncores].mix_widx;

		while (orch_ready_pop(be->orch, widx, &d)) {
			orch_member_done(be->orch, &d, -ECANCELED,
					 SCHED_ABORT_MSG ": task not started");
			moved++;
		}
	}
	return moved;
}

/* The scheduler thread this thread is, NULL on any other (wake_thread). */
static _Thread_local struct sched_thread *sched_self;

static void *sched_thread_main(void *arg)
{
	struct sched_thread *t = arg;
	struct sched_backend *be = t->be;
	uint64_t spin_ns = (uint64_t)be->cfg.spin_us * 1000, idle_since = 0;
	uint64_t ring[PTO_CORE_MASK_WORDS], gen, gen_empty = ~0ULL;
	unsigned int idle_steps = 0;

	/*
	 * Consumptions this thread's completions cause (a task's self
	 * release, a producer's last retention) go to its batch and are
	 * flushed 64 at a time, with one TensorMap lock, one ring lock per
	 * ring and one run count-down, instead of all three per task (in
	 * the TCG VM: fan-out +15-25%, independent +15%; scheduler.md).
	 * Deferring a consumption is safe (orch_release_ref_batched). It
	 * stays live: the batch is flushed when it is full, before the
	 * thread idles (a step that moved nothing with no parked pass
	 * pending: it then spins or sleeps), when the thread leaves its
	 * loop, and at the latest SCHED_CONSUME_STEPS steps after the first
	 * consumption went in, so a thread that stays busy without filling
	 * its batch (its tasks mostly consumed by another thread's
	 * completions, or steps waiting on its cores) holds none for longer
	 * than that: a run's wait and the orch thread's back-pressure wait
	 * see every consumption within that many steps of the thread that
	 * made it. (Flushing at every step that moved nothing would flush
	 * per task: a core's task spans several steps.)
	 */
	t->consume.n = 0;
	t->consume_steps = 0;
	orch_set_consume_batch(&t->consume);
	sched_self = t;
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
			 * eventfd alone (pto_launch_arm() finds no core to
			 * arm), which kicks and stop write.
			 */
			if (!moved && !t->self_kicked)
				sched_sleep(t);
			continue;
		}
		gen = orch_ready_gen(be->orch);
		memset(ring, 0, sizeof(ring));
		moved = sched_reap(t, ring);
		/*
		 * Ask the orchestrator (its lock) only when something may have
		 * changed since the last pass found nothing: new READY work
		 * (the generation), a kick (a group head became startable,
		 * MIX work), or a completion here (a slot or core came free).
		 */
		if (moved || kicked || gen != gen_empty || t->backlog_since) {
			int got = sched_dispatch(t, ring);

			gen_empty = got ? ~0ULL : gen;
			moved += got;
		}
		/* One doorbell ioctl for every parked core that got work. */
		if (ring[0] | ring[1])
			pto_ring(t->launch, ring);
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
			idle_since = now_ns();
			continue;
		}
		if (now_ns() - idle_since < spin_ns) {
			cpu_relax();
			continue;
		}
		sched_sleep(t);
		idle_since = 0;
	}
	orch_consume_flush(be->orch, &t->consume);
	orch_set_consume_batch(NULL);
	sched_self = NULL;
	/* An aborted thread retired its cores already (sched_abort_cores). */
	if (!t->aborted)
		sched_retire(t);
	return NULL;
}

/* ---- backend ops ---------------------------------------------------- */

static int sched_heap_map(void *p, int ring, uint64_t size,
			  struct orch_heap *out)
{
	struct sched_backend *be = p;
	struct pto_bo *bo;
	void *base;
	int ret;

	ret = pto_bo_alloc(be->dev, size, 0, &bo);
	if (ret)
		return ret;
	ret = pto_bo_map(bo, &base);
	if (ret) {
		pto_bo_free(bo);
		return ret;
	}
	be->heap_bo[ring] = bo;
	memset(out, 0, sizeof(*out));
	out->base = base;
	out->size = size;
	out->space = PTO_SPACE_GM;
	/* A GM tensor's key is (GM, buffer base address, offset). */
	out->obj = pto_bo_dev_addr(bo);
	out->obj_off = 0;
	out->dev = pto_bo_dev_tag(bo);
	return 0;
}

static void sched_heap_unmap(void *p, int ring, struct orch_heap *h)
{
	struct sched_backend *be = p;

	pto_bo_free(be->heap_bo[ring]);
	be->heap_bo[ring] = NULL;
}

/* "pto0-sched1": what top, perf and a debugger show for the thread. */
static void sched_name_thread(struct sched_thread *t)
{
	char name[16];

	snprintf(name, sizeof(name), "pto%u-sched%u",
		 t->be->dev_index % 100, t->index % 100);
	pthread_setname_np(t->tid, name);
}

static int sched_start(void *p, struct pto_orch *o)
{
	struct sched_backend *be = p;
	unsigned int i;
	int ret;

	be->orch = o;
	for (i = 0; i < be->nworkers; i++)
		if (be->workers[i].kind != PTO_WORKER_MIX)
			orch_set_worker_capacity(o, (int32_t)i, 2);
	for (i = 0; i < be->nthreads; i++) {
		ret = pthread_create(&be->threads[i].tid, NULL,
				     sched_thread_main, &be->threads[i]);
		if (ret) {
			atomic_store(&be->stop, 1);
			while (i--) {
				uint64_t one = 1;

				if (write(be->threads[i].evfd, &one,
					  sizeof(one)) < 0) {
					/* the thread also polls stop */
				}
				pthread_join(be->threads[i].tid, NULL);
				atomic_store_explicit(&be->threads[i].started,
						      0, memory_order_relaxed);
			}
			return -ret;
		}
		atomic_store_explicit(&be->threads[i].started, 1,
				      memory_order_relaxed);
		sched_name_thread(&be->threads[i]);
	}
	return 0;
}

/*
 * Set @flag (stop, abort), then wake every started thread through its
 * eventfd, unconditionally: a thread that loads @flag 0 has the write
 * still to see (its poll() returns at once) or drained it after the
 * store, and looks at @flag again at its next step either way.
 */
static void sched_tell_all(struct sched_backend *be, atomic_int *flag)
{
	unsigned int i;
	uint64_t one = 1;

	atomic_store_explicit(flag, 1, memory_order_release);
	for (i = 0; i < be->nthreads; i++) {
		struct sched_thread *t = &be->threads[i];

		if (atomic_load_explicit(&t->started, memory_order_relaxed) &&
		    write(t->evfd, &one, sizeof(one)) < 0) {
			/* eventfd writes of 1 cannot fail short of overflow */
		}
	}
}

/*
 * Every thread is told first, then joined: they retire their sets in
 * parallel (sched_retire()), so a core that does not answer holds the
 * stop for one retirement deadline, not one per thread. A thread still
 * retiring at @deadline is left to go on (it is joined by the next call):
 * the kernel quarantines its silent core at its own deadline, and the
 * statistics count it once the thread returned.
 */
static int sched_stop(void *p, const struct timespec *deadline)
{
	struct sched_backend *be = p;
	unsigned int i;
	int err = 0;

	sched_tell_all(be, &be->stop);
	for (i = 0; i < be->nthreads; i++) {
		struct sched_thread *t = &be->threads[i];

		if (!atomic_load_explicit(&t->started, memory_order_relaxed))
			continue;
		if (deadline && pthread_clockjoin_np(t->tid, NULL,
						     CLOCK_MONOTONIC,
						     deadline) == ETIMEDOUT) {
			err = -ETIMEDOUT;
			continue;	/* the others may be done */
		}
		if (!deadline)
			pthread_join(t->tid, NULL);
		atomic_store_explicit(&t->started, 0, memory_order_relaxed);
	}
	return err;
}

/*
 * pto_orch_abort(): each thread retires its own cores at its next step
 * (sched_abort_cores) - the retirement stays with the thread that owns
 * the cores' in-flight state, as at stop. The eventfd write wakes a
 * sleeping thread; as in sched_stop(), unconditionally (once per call).
 */
static void sched_abort(void *p)
{
	sched_tell_all(p, &((struct sched_backend *)p)->abort);
}

/*
 * @again: a kick still pending makes this one unnecessary. Only for work
 * the thread finds by popping under sched_mu (a routing pass kicks a
 * thread once per idle core of the kind): reading 1 means the thread's
 * exchange that consumes it comes later in kicked's modification order,
 * and after that exchange the thread pops under sched_mu, which the
 * kicker holds until the work is linked; and the kick that stored the 1
 * did the Dekker below, so the thread either sees it before sleeping or
 * was sent the eventfd write. Not for a MIX kick: the thread reads
 * mix_wanted outside sched_mu, and only the fence below orders that
 * store before the thread's next look (review of b7a1dbb).
 */
static void wake_thread(struct sched_thread *t, bool again)
{
	uint64_t one = 1;

	/*
	 * The thread kicks itself (the routing of its own completions, a
	 * steal at its pop or before it sleeps: on one thread, most kicks):
	 * it is awake, and @sleeping is 0 whenever it runs orchestrator code
	 * (sched_sleep() stores 1 after orch_ready_steal() and 0 again
	 * before it returns). Its own later look at @self_kicked in
	 * sched_sleep() and at the next step sees this store by program
	 * order, and so does its next look at mix_wanted / mix_any stored
	 * before a MIX kick: no fence, no eventfd write (the fence costs
	 * about as much as a locked instruction in the TCG guest), and not
	 * @kicked, whose consumption is an exchange: a plain flag of the
	 * thread's own (the exchange after a self kick was 0.4-0.5 per task
	 * in the chain and the wavefront, in the VM's callgrind counts).
	 */
	if (t == sched_self) {
		t->self_kicked = true;
		return;
	}
	if (again && atomic_load_explicit(&t->kicked, memory_order_relaxed))
		return;
	/* Dekker with sched_sleep(): see there. */
	atomic_store_explicit(&t->kicked, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&t->sleeping, memory_order_relaxed) &&
	    write(t->evfd, &one, sizeof(one)) < 0) {
		/* cannot overflow: the thread drains it on every wake */
	}
}

static void sched_kick(void *p, int32_t widx, uint32_t kind)
{
	struct sched_backend *be = p;
	unsigned int i;

	if (widx >= 0 && (unsigned int)widx < be->nworkers) {
		struct sched_worker *w = &be->wmap[widx];

		if (w->cl)
			sched_want_mix(w->cl);
		wake_thread(w->t, !w->cl);
		return;
	}
	for (i = 0; i < be->nthreads; i++)
		wake_thread(&be->threads[i], true);
}

/* A group's members must all belong to one scheduler thread. */
static int sched_check_group(void *p, const int32_t *widx, uint32_t n,
			     char *msg, size_t len)
{
	struct sched_backend *be = p;
	uint32_t i;

	for (i = 1; i < n; i++) {
		if (be->wmap[widx[i]].t != be->wmap[widx[0]].t) {
			snprintf(msg, len,
				 "group spans scheduler threads %u and %u: its targets must lie in one partition",
				 be->wmap[widx[0]].t->index,
				 be->wmap[widx[i]].t->index);
			return -EINVAL;
		}
	}
	return 0;
}

static void sched_destroy(void *p)
{
	struct sched_backend *be = p;
	unsigned int i;

	for (i = 0; i < be->nthreads; i++) {
		struct sched_thread *t = &be->threads[i];

		/*
		 * The cores were retired when the thread left its loop (or, if
		 * it never ran, the release retires them); releasing the
		 * clusters frees them for other files.
		 */
		if (t->clusters)
			pto_cluster_release(be->dev, t->clusters);
		pto_launch_free(t->launch);
		free(t->cores);
		free(t->cl);
		if (t->evfd >= 0)
			close(t->evfd);
	}
	/*
	 * Released above: another orchestrator on the handle may take them.
	 * Only a backend that claimed them gets here (create frees one that
	 * did not itself).
	 */
	pto_dev_unclaim_clusters(be->dev, be->clusters);
	free(be->threads);
	free(be);
}

static const struct orch_backend_ops sched_ops = {
	.name = "device",
	.kick_wakes_server = true,
	.heap_map = sched_heap_map,
	.heap_unmap = sched_heap_unmap,
	.start = sched_start,
	.stop = sched_stop,
	.abort = sched_abort,
	.kick = sched_kick,
	.check_group = sched_check_group,
	.kernels_need_heap_space = true,
	.tensorless_kernels = SCHED_TENSORLESS_KERNELS,
	.destroy = sched_destroy,
};

/* ---- creation ------------------------------------------------------- */

static void add_worker(struct sched_backend *be, int32_t id, uint32_t kind,
		       struct sched_thread *t, struct sched_cluster *cl)
{
	be->workers[be->nworkers] = (struct pto_worker_desc){ .id = id,
							      .kind = kind };
	be->wmap[be->nworkers] = (struct sched_worker){ t, cl };
	be->nworkers++;
	t->kinds |= 1u << kind;
}

/*
 * Launch thread @t's cores and bind them to worker indices: each core is a
 * worker (id = core index), each cluster a MIX worker.
 */
static int sched_thread_launch(struct sched_backend *be, struct sched_thread *t,
			       const struct pto_dev_info *info)
{
	uint64_t mask[PTO_CORE_MASK_WORDS] = { 0 };
	unsigned int c, k, core;
	uint32_t kind;
	int ret;

	for (c = 0; c < info->clusters; c++) {
		if (!(t->clusters & (1ULL << c)))
			continue;
		t->nclusters++;
		for (core = c * 3; core < c * 3 + 3; core++)
			mask[core / 64] |= 1ULL << (core % 64);
	}
	ret = pto_launch_cores_notify(be->dev, mask, t->evfd, &t->launch);
	if (ret)
		return ret;
	t->ncores = t->launch->ncores;
	t->cores = calloc(t->ncores, sizeof(*t->cores));
	t->cl = calloc(t->nclusters, sizeof(*t->cl));
	if (!t->cores || !t->cl)
		return -ENOMEM;
	/* core[k] is the k-th core in ascending order: 3 per cluster. */
	for (k = 0; k < t->ncores; k++) {
		struct pto_rc *rc = &t->launch->core[k];
		struct sched_cluster *cl = &t->cl[k / 3];

		cl->index = rc->index / 3;
		cl->core[k % 3] = &t->cores[k];
		t->cores[k].rc = rc;
		t->cores[k].cl = cl;
		t->cores[k].t = t;
		t->cores[k].payload_dirty[0] = SCHED_PAYLOAD_DIRTY_ALL;
		t->cores[k].payload_dirty[1] = SCHED_PAYLOAD_DIRTY_ALL;
		mask_set(&t->all, k);
		kind = info->core_type[rc->index] == PTO_CORE_AIC ?
		       PTO_WORKER_AIC : PTO_WORKER_AIV;
		t->cores[k].widx = (int32_t)be->nworkers;
		t->cores[k].kind = kind;
		add_worker(be, (int32_t)rc->index, kind, t, NULL);
	}
	for (k = 0; k < t->nclusters; k++) {
		t->cl[k].mix_widx = (int32_t)be->nworkers;
		add_worker(be, PTO_SCHED_MIX_ID(t->cl[k].index), PTO_WORKER_MIX, t,
			   &t->cl[k]);
	}
	return 0;
}

/*
 * What this backend needs of the driver, checked before anything is
 * taken: cores to launch (PTO_CAP_CORES) and ABI minor 3, whose per-launch
 * eventfd (PTO_LAUNCH_FLAG_EVENTFD) every scheduler thread launches with
 * (minor 2 brought the retirement ioctls it ends with). pto_dev_open()
 * checked the major only, so that an older driver still serves buffer
 * objects; without this, an older or core-less one failed at the launch
 * with a bare -EINVAL or -E2BIG.
 */
static int sched_device_supported(const struct pto_dev_info *info)
{
	if (!(info->caps & PTO_CAP_CORES) || info->abi_minor < 3)
		return -EOPNOTSUPP;
	return 0;
}

int pto_orch_create_device(struct pto_dev *dev,
			   const struct pto_orch_config *ocfg,
			   const struct pto_sched_config *scfg,
			   pto_orch **out)
{
	struct pto_orch_config oc = { 0 };
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct pto_dev_info info;
	struct sched_backend *be;
	unsigned int i, nclusters;
	bool batch;
	int ret;

	*out = NULL;
	/* Cores and clusters of the parent's file: not the child's to take. */
	if (pto_dev_forked(dev))
		return -ECHILD;
	/* Reserved words (pto/sched.h), before anything is taken; the
	 * cores are the workers, @ocfg's are not read. */
	ret = orch_config_check(ocfg, false);
	if (!ret && scfg && !orch_reserved_zero(scfg->reserved,
						sizeof(scfg->reserved)))
		ret = -EINVAL;
	if (ret)
		return ret;
	pto_dev_info(dev, &info);
	ret = sched_device_supported(&info);
	if (ret)
		return ret;
	be = calloc(1, sizeof(*be));
	if (!be)
		return -ENOMEM;
	be->dev = dev;
	be->dev_index = info.index;
	if (scfg)
		be->cfg = *scfg;
	nclusters = be->cfg.clusters ? be->cfg.clusters : info.clusters;
	if (nclusters > info.clusters || nclusters > 64) {
		free(be);
		return -EINVAL;
	}
	if (!be->cfg.threads)
		be->cfg.threads = sched_default_threads(&info, cpus);
	if (!be->cfg.spin_us)
		be->cfg.spin_us = SCHED_DEFAULT_SPIN_US;
	if (!be->cfg.wake_delay_us)
		be->cfg.wake_delay_us = SCHED_DEFAULT_WAKE_DELAY_US;
	be->nthreads = be->cfg.threads < nclusters ? be->cfg.threads : nclusters;
	be->clusters = nclusters == 64 ? ~0ULL : (1ULL << nclusters) - 1;

	be->threads = calloc(be->nthreads, sizeof(*be->threads));
	if (!be->threads) {
		free(be);
		return -ENOMEM;
	}
	for (i = 0; i < be->nthreads; i++) {
		be->threads[i].wake_delay_ns =
			(uint64_t)be->cfg.wake_delay_us * 1000;
		be->threads[i].max_awake = sched_max_awake(&info, cpus,
							   be->nthreads);
		be->threads[i].evfd = -1;
		be->threads[i].be = be;
		be->threads[i].index = i;
	}

	/* Another orchestrator on this handle may hold them (core.h). */
	ret = pto_dev_claim_clusters(dev, be->clusters);
	if (!ret) {
		ret = pto_cluster_acquire(dev, be->clusters);
		if (ret)
			pto_dev_unclaim_clusters(dev, be->clusters);
	}
	if (ret) {
		free(be->threads);
		free(be);
		return ret;
	}
	/* Contiguous partitions: cluster c belongs to thread c * T / C. */
	for (i = 0; i < nclusters; i++)
		be->threads[i * be->nthreads / nclusters].clusters |= 1ULL << i;
	for (i = 0; i < be->nthreads; i++) {
		struct sched_thread *t = &be->threads[i];

		t->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (t->evfd < 0) {
			ret = -errno;
			goto err;
		}
		/* Per-thread launches: each thread launches its own clusters. */
		ret = sched_thread_launch(be, t, &info);
		if (ret)
			goto err;
	}

	if (ocfg)
		oc = *ocfg;
	if (!oc.heap_ring_size)
		oc.heap_ring_size = SCHED_DEFAULT_HEAP;
	oc.nworkers = be->nworkers;
	oc.workers = be->workers;
	/* Before any scheduler thread exists: they use the barrier. */
	batch = orch_heavy_barrier_init();
	/* orch_create owns @be from here, also on failure (ops->destroy). */
	ret = orch_create(&oc, &sched_ops, be, out);
	/*
	 * Batch the orch thread's READY publications (ready.c): one sched_mu
	 * hold, one generation bump and one kick pass per ORCH_READY_BATCH
	 * submits instead of per submit. The scheduler threads take the
	 * batch before they sleep (sched_sleep). Only with membarrier(2):
	 * see orch_ready_defer.
	 */
	if (!ret && batch)
		orch_set_ready_batch(*out, ORCH_READY_BATCH);
	return ret;

err:
	sched_destroy(be);
	return ret;
}

int pto_orch_sched_stats(pto_orch *o, struct pto_sched_stats *st)
{
	struct sched_backend *be = o->ops == &sched_ops ? o->be : NULL;
	unsigned int i;

	/* Whole, reserved words too, also on error (pto/sched.h). */
	memset(st, 0, sizeof(*st));
	if (!be)
		return -EINVAL;
	for (i = 0; i < be->nthreads; i++) {
		struct sched_thread *t = &be->threads[i];

		st->tasks += atomic_load(&t->tasks);
		st->errors += atomic_load(&t->errors);
		st->sleeps += atomic_load(&t->sleeps);
		st->retired += atomic_load(&t->retired);
		st->quarantined += atomic_load(&t->quarantined);
		if (atomic_load(&t->retire_ns) > st->retire_ns)
			st->retire_ns = atomic_load(&t->retire_ns);
		st->doorbells += t->launch ? __atomic_load_n(&t->launch->doorbells,
							     __ATOMIC_RELAXED) : 0;
	}
	return 0;
}
