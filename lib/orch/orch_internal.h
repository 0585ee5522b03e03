/* SPDX-License-Identifier: MIT */
/*
 * Orchestrator internals shared by lib/orch/ (.c files) (and the unit tests).
 *
 * Lock order (coarse to fine), also documented by the atfork handler:
 *   sched_mu -> slot.fanout_mu -> tm.mu -> ring.mu -> runs_mu
 * runs_mu is innermost: no other lock is taken while it is held, and it is
 * taken under others (a run's last launch opens its acceptance fence from
 * claim_running, under sched_mu; a consumption may finish a run).
 * Nobody holds two fanout_mu at once: every cross-slot action (release a
 * consumer, release a producer reference) is done after dropping the
 * current slot's lock.
 */
#ifndef PTO_ORCH_INTERNAL_H
#define PTO_ORCH_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>
#include <pto/orch.h>
#include "orch/backend.h"

#define ORCH_MSG_LEN 192

/* Arrays indexed by enum pto_worker_kind: index 0 (no kind) stays empty. */
#define ORCH_KIND_FIRST PTO_WORKER_AIC
#define ORCH_KIND_NR (PTO_WORKER_SUB + 1)

static inline bool orch_kind_valid(uint32_t kind)
{
	return kind >= ORCH_KIND_FIRST && kind < ORCH_KIND_NR;
}

/*
 * The short-hold locks (slot fanout_mu, TensorMap mu, sched_mu): held for
 * a few dozen instructions by the orch thread and the workers, and taken
 * several times per task, so the uncontended path is one CAS to lock and
 * one exchange to unlock, inlined. Drepper's futex mutex ("Futexes Are
 * Tricky", mutex 3): v is 0 free, 1 locked, 2 locked and maybe waited on.
 * Contended, it spins briefly (the holder is usually running on the other
 * CPU) and then sleeps on the futex, like an adaptive pthread mutex.
 * Locks that pair with a condition variable stay pthread mutexes.
 */
struct orch_lock {
	_Atomic uint32_t v;
};

void orch_lock_slow(struct orch_lock *l);
void orch_unlock_wake(struct orch_lock *l);

/* A spin-wait hint for the CPU (x86 PAUSE), nothing elsewhere. */
static inline void orch_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/*
 * Prefetch a line the caller is about to write. x86 PREFETCHW fetches it
 * in exclusive state (a plain prefetch leaves it shared, and the store
 * then needs a second round trip to the other core's cache); it is used
 * only when CPUID reports it (orch_cpu_init), since the build targets
 * baseline x86-64, whose compiler turns a write prefetch into PREFETCHT0.
 */
extern bool orch_have_prefetchw;
void orch_cpu_init(void);

/* With @have the caller's copy of orch_have_prefetchw: a caller that
 * prefetches many lines tests it once and inlines both versions. */
static inline __attribute__((always_inline)) void
orch_prefetchw_as(const void *p, bool have)
{
#if defined(__x86_64__) || defined(__i386__)
	if (have) {
		__asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
		return;
	}
#else
	(void)have;
#endif
	__builtin_prefetch(p, 1, 3);
}

static inline void orch_prefetchw(const void *p)
{
	orch_prefetchw_as(p, __builtin_expect(orch_have_prefetchw, 1));
}

static inline void orch_lock_init(struct orch_lock *l)
{
	atomic_init(&l->v, 0);
}

static inline void orch_lock(struct orch_lock *l)
{
	uint32_t z = 0;

	/* Acquire: the critical section reads after the previous holder's
	 * release in orch_unlock. */
	if (__builtin_expect(atomic_compare_exchange_strong_explicit(&l->v, &z, 1,
			memory_order_acquire, memory_order_relaxed), 1))
		return;
	orch_lock_slow(l);
}

static inline void orch_unlock(struct orch_lock *l)
{
	/* Release; a 2 means a waiter may sleep on the futex: wake one. */
	if (__builtin_expect(atomic_exchange_explicit(&l->v, 0,
			memory_order_release) == 2, 0))
		orch_unlock_wake(l);
}

enum orch_state {
	ORCH_FREE = 0,
	ORCH_BUILDING,
	ORCH_PENDING,
	ORCH_READY,
	ORCH_RUNNING,
	ORCH_COMPLETED,
	ORCH_FAILED,
	ORCH_CONSUMED,
};

enum orch_slot_kind {
	ORCH_NEXT_LEVEL = 0,
	ORCH_SUB,
	ORCH_ALLOC,
};

/* A (run, tensor) identity. HOST keys use obj = 0, off = address. */
struct orch_key {
	uint64_t run_id;
	uint64_t space;
	uint64_t obj;
	uint64_t off;
};

/* A slot reference that survives slot reuse: tid is checked under the
 * slot's fanout_mu before acting on it. */
struct orch_slotref {
	struct orch_slot *s;
	uint64_t tid;
};

/* Per-member argument storage, capacity kept across slot reuse so a
 * steady-state submit does not allocate. */
struct orch_member {
	struct pto_arg_tensor *t;
	uint64_t *s;
	uint8_t *sdump;
	uint32_t nt, cap_t;
	uint32_t ns, cap_s;
	int32_t widx;		/* exact worker index, or -1: any of slot kind */
	int32_t ran_on;		/* worker index that ran it, -1 if never */
	_Atomic int mstate;	/* enum orch_mstate */
	int err;
};

enum orch_mstate {
	ORCH_M_PENDING = 0,
	ORCH_M_RUNNING,
	ORCH_M_DONE,
	ORCH_M_FAILED,
	ORCH_M_CANCELLED,	/* never started: cancellation / poisoning */
};

struct orch_rq;

/* Inline capacities of a slot's arrays (see struct orch_slot). */
#define ORCH_INL_EDGES 2
#define ORCH_INL_KEYS 2
#define ORCH_INL_TENSORS 4

struct orch_slot {
	/*
	 * fanout_mu guards the pair (fanin_count, fanin_released), the pair
	 * (fanout_total, fanout_released), the consumer list, the failure
	 * claim and message, and every state transition but READY ->
	 * RUNNING. That one is made under sched_mu alone (claim_running()
	 * in ready.c), and READY -> FAILED (cancellation) under both: while
	 * a slot is READY, every writer of its state and of @unlaunched
	 * holds sched_mu, which orders the two claims. And a publication
	 * with no live producer moves BUILDING -> READY without it: no
	 * thread but the orch thread can act on the slot then, and every
	 * other access (a stale reference to the previous occupant) backs
	 * off without a write, checking task_id or run under fanout_mu
	 * (publish() in submit.c).
	 */
	struct orch_lock fanout_mu;
	_Atomic int state;

	/* Identity, written by the orch thread at claim. */
	uint64_t task_id;
	uint64_t run_id;
	struct pto_run *run;
	uint32_t idx;		/* global index: ring * window + pos */
	uint8_t ring;
	uint8_t kind;		/* enum orch_slot_kind */
	bool ring_released;	/* under ring.mu */
	uint64_t heap_off, heap_charged, heap_end;

	int32_t fanin_count;	/* published with BUILDING -> * */
	int32_t fanin_released;
	int32_t fanout_total;	/* lifetime references: scope + retainers */
	int32_t fanout_released;/* incl. the self release */
	bool failure_propagation_pending;	/* FAILED claimed in BUILDING */
	bool cancel_debt;	/* claimed by cancellation, not settled */
	bool unlaunched;	/* counted in run->unlaunched */
	int failure_err;

	/* Consumers to notify at terminal time. Appended only while this
	 * slot is not terminal (under fanout_mu), so once terminal it is
	 * frozen and the completer walks it without the lock. */
	struct orch_slotref *consumers;
	uint32_t nconsumers, cap_consumers;
	/* Producers this slot retains (one reference each). Written by the
	 * orch thread while BUILDING, read by whoever finishes this slot. */
	struct orch_slot **producers;
	uint32_t nproducers, cap_producers;
	/* Cleanup journal: every key this slot published to the TensorMap. */
	struct orch_key *out_keys;
	uint32_t nkeys, cap_keys;

	/* Task data. */
	struct pto_callable callable;
	struct orch_call_cfg cfg;
	uint32_t wkind;		/* for "any of kind" placement */
	bool is_group;		/* next-level group: all-or-nothing */
	uint32_t nmembers;
	struct orch_member *members;
	uint32_t cap_members;
	_Atomic uint32_t members_left;
	_Atomic int first_err;	/* aggregated member error */
	_Atomic int member_msg_claimed;

	/* Ready-queue links, under sched_mu. */
	struct orch_slot *rq_next, *rq_prev;
	struct orch_rq *rq;
	uint32_t next_member;	/* SUB group: next member to hand out */

	/* Failure-propagation worklist link (owned by the claimant). */
	struct orch_slot *poison_next;
	/* The orch thread's pending-READY list link (orch_ready_defer):
	 * stored by the orch thread, read under sched_mu by stealers. */
	struct orch_slot *_Atomic pend_next;

	/* Submit scratch (orch thread only): dedup stamp. */
	uint64_t dedup_mark;
	uint32_t dedup_idx;

	/*
	 * Inline first storage of the arrays above (members, member 0's
	 * tensors, consumers, producers, journal), set up by orch_ring_init
	 * (orch_slot_init_storage): a typical task's first use of a slot
	 * neither mallocs nor faults in heap pages, since the slot array is
	 * written (and so faulted in) when the ring is created. A larger
	 * need moves the array to the heap (orch_grow_inl) and it stays
	 * there, like any grown array.
	 */
	struct orch_slotref inl_consumers[ORCH_INL_EDGES];
	struct orch_slot *inl_producers[ORCH_INL_EDGES];
	struct orch_key inl_keys[ORCH_INL_KEYS];
	struct orch_member inl_member;
	struct pto_arg_tensor inl_tensors[ORCH_INL_TENSORS];

	/*
	 * Cold: only read after a failure, and written by whoever records
	 * it (the failure claim's winner, a failing completion, the first
	 * failing member), so slot reset leaves them alone. Last, so the
	 * fields every submit and dispatch touch share fewer cache lines.
	 */
	char failure_message[ORCH_MSG_LEN];	/* valid when FAILED */
	char member_message[ORCH_MSG_LEN];	/* valid when first_err != 0 */
};

/* ---- ring.c ------------------------------------------------------------- */

struct orch_ring {
	/* Orch thread's side (alloc), read-mostly for the others. */
	struct orch_heap heap;
	uint32_t window;
	struct orch_slot *slots;	/* window entries, stable in memory */
	uint64_t top;			/* heap bump cursor (orch thread) */
	/* Live slots are [last_alive, seq_next). seq_next is stored by the
	 * orch thread only (release: a releaser that sees it sees the new
	 * slot's ring fields); alive_seen is the orch thread's last
	 * acquire-load of last_alive, so a zero-byte alloc with room in the
	 * window takes no lock and reads no line the releasers write. */
	_Atomic uint64_t seq_next;
	uint64_t alive_seen;
	/* Orch thread only: &slots[seq_next % window], advanced with a wrap
	 * test, so handing out a slot (and finding the ones after it to
	 * prefetch) divides by nothing. */
	struct orch_slot *next_slot;
	struct orch_slot *slots_end;	/* slots + window (set at init only) */
	_Atomic bool shutdown;

	/* Releasers' side, under mu. */
	pthread_mutex_t mu __attribute__((aligned(64)));
	pthread_cond_t cv;
	uint64_t tail, used;		/* heap FIFO tail, bytes charged */
	_Atomic uint64_t last_alive;	/* stored under mu, release */
	/* &slots[last_alive % window], under mu: the release walk's cursor
	 * (ring_release_locked), so it divides by nothing. */
	struct orch_slot *alive_slot;
	/* Back-pressure hysteresis (ring.c): a release wakes the waiting
	 * orch thread only once live slots are down to wake_live; the wait
	 * looks again every recheck_ms regardless (tests may raise it). */
	uint64_t wake_live;
	int64_t recheck_ms;
};

struct orch_alloc_result {
	struct orch_slot *slot;
	uint64_t heap_off;
	void *heap_ptr;
};

/* Now (CLOCK_MONOTONIC) plus @ms: a pthread_cond_timedwait deadline. */
void orch_deadline_in(struct timespec *ts, int64_t ms);

int orch_ring_init(struct pto_orch *o, int r, uint32_t window);
void orch_ring_fini(struct pto_orch *o, int r);
int orch_ring_alloc(struct pto_orch *o, int r, uint64_t bytes,
		    struct orch_alloc_result *res);
void orch_ring_release(struct pto_orch *o, struct orch_slot *s);
/* Release @n slots (any rings) with one ring.mu round trip per ring. */
void orch_ring_release_many(struct pto_orch *o, struct orch_slot *const *v,
			    uint32_t n);
void orch_ring_wake_all(struct pto_orch *o);
void orch_ring_shutdown(struct pto_orch *o);
uint64_t orch_ring_live(struct pto_orch *o, int r);	/* live slots */
uint64_t orch_ring_used(struct pto_orch *o, int r);	/* heap bytes */
struct orch_slot *orch_slot_at(struct pto_orch *o, uint32_t idx);

/* ---- tensormap.c -------------------------------------------------------- */

struct orch_tm_node {
	struct orch_key key;
	struct orch_slotref val;
	struct orch_tm_node *next;
};

struct orch_tensormap {
	struct orch_lock mu;
	struct orch_tm_node **buckets;
	uint32_t nbuckets;	/* power of two */
	uint32_t count;
	struct orch_tm_node *free;	/* recycled nodes */
	struct orch_tm_node *slab;	/* the first nodes, one allocation */
	uint32_t nslab;
};

int orch_tm_init(struct pto_orch *o);
void orch_tm_fini(struct pto_orch *o);
struct orch_slotref orch_tm_lookup(struct pto_orch *o,
				   const struct orch_key *k);
int orch_tm_insert(struct pto_orch *o, const struct orch_key *k,
		   struct orch_slotref v);
void orch_tm_lock(struct pto_orch *o);
void orch_tm_unlock(struct pto_orch *o);
/*
 * One multiply and a fold: this runs for every tensor of every submit.
 * The fold (h ^ h >> 32) puts the product's well-mixed high half into the
 * low bits the bucket mask keeps; addresses are aligned, so the low bits
 * of the product alone would leave most buckets empty. run_id and space
 * need only separate otherwise equal keys, so they are shifted into bits
 * an address or offset does not reach in practice.
 */
static inline uint64_t orch_tm_hash(const struct orch_key *k)
{
	uint64_t h = k->off ^ (k->obj * 0x9e3779b97f4a7c15ULL) ^
		     (k->run_id << 48) ^ (k->space << 44);

	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 32);
}

static inline bool orch_tm_key_eq(const struct orch_key *a, const struct orch_key *b)
{
	return a->off == b->off && a->obj == b->obj && a->run_id == b->run_id &&
	       a->space == b->space;
}

/* orch_tm_lookup_locked(): inline, after struct pto_orch. */
int orch_tm_insert_locked(struct pto_orch *o, const struct orch_key *k,
			  struct orch_slotref v);
void orch_tm_erase_task_outputs(struct pto_orch *o, struct orch_slot *s);
void orch_tm_erase_task_outputs_locked(struct pto_orch *o, struct orch_slot *s);
uint32_t orch_tm_count(struct pto_orch *o);

/* ---- scope.c ------------------------------------------------------------ */

struct orch_scope_frame {
	struct orch_slotref *refs;
	uint32_t n, cap;
};

struct orch_scope {
	struct orch_scope_frame frames[PTO_MAX_SCOPE_DEPTH + 1];
	uint32_t depth;		/* 1-based; 0 = no open scope */
};

int orch_scope_begin(struct pto_orch *o);
/* Pops the frame and releases one reference per registered slot. */
void orch_scope_end(struct pto_orch *o);
int orch_scope_register_slow(struct pto_orch *o, struct orch_slot *s);
/* orch_scope_register(): inline, after struct pto_orch. */
void orch_scope_fini(struct pto_orch *o);
static inline int orch_ring_for_depth(uint32_t depth)
{
	uint32_t cur = depth ? depth - 1 : 0;	/* 0-based current depth */

	return cur < PTO_MAX_RING_DEPTH - 1 ? (int)cur : PTO_MAX_RING_DEPTH - 1;
}

/* ---- runs (run.c) ------------------------------------------------------- */

struct pto_run {
	struct pto_orch *o;
	uint64_t id;
	/*
	 * The counters every worker updates (a task launched, a task
	 * consumed) on a line of their own: the orch thread reads @id for
	 * every tensor it submits (its TensorMap key), and sharing a line
	 * with them made each of those reads a miss to the worker's cache
	 * (perf: ~15% of submit_impl on the wavefront shape).
	 *
	 * @active: registered, not yet consumed slots. The run is terminal
	 * when submission is closed and this reaches zero (decided under
	 * runs_mu, see run.c).
	 * @unlaunched: registered slots that have not left
	 * BUILDING/PENDING/READY.
	 */
	_Atomic int64_t active __attribute__((aligned(64)));
	_Atomic int64_t unlaunched;
	char pad_counters[64 - 2 * sizeof(int64_t)];
	/* Under runs_mu: */
	int refs;		/* user handle + in-flight */
	bool closed, done, accepted, lease_held;
	int status;
	char message[ORCH_MSG_LEN];
	struct pto_run *next;	/* live list */
	bool cancel_pending;	/* cancellation must be retried (close) */
	bool settling;		/* a close or abort settles it (orch.c) */
	/* Orch thread only: */
	int construction_err;
	/* Its message: later calls overwrite o->errmsg (a refused submit
	 * says why it was refused); pto_run_start puts this back. */
	char construction_msg[ORCH_MSG_LEN];
	/* Counts added to active / unlaunched ahead of registration, spent
	 * one per slot: the orch thread touches those shared counters once
	 * per ORCH_RUN_CREDIT slots instead of twice per submit. Unspent
	 * credit is dropped with the bias when submission closes, so it is
	 * the bias's extension (nothing can reach zero while it is held). */
	uint32_t credit_active, credit_unlaunched;
};

#define ORCH_RUN_CREDIT 64

void orch_run_record_error(struct pto_run *r, int err, const char *msg);
bool orch_run_unref_locked(struct pto_run *r);
bool orch_building_here(const struct pto_orch *o);
void orch_worker_thread_enter(struct pto_orch *o);
bool orch_worker_here(const struct pto_orch *o);
/* Set by the atfork child handler (orch.c), with the child's pid: a
 * process that never forked after creating an orchestrator reads false
 * and skips orch_forked()'s pid test. */
extern bool orch_forked_child;
extern pid_t orch_child_pid;
void orch_run_task_consumed(struct pto_run *r);
void orch_run_tasks_consumed(struct pto_run *r, int64_t n);
void orch_run_task_launched(struct pto_run *r);
/*
 * Orch thread, at slot registration: one active (and, if @launch, one
 * unlaunched) count, from the run's credit. Inline: every submit runs it.
 * Relaxed adds, as before the credit: the counters only need to be
 * positive until submission closes, which the bias and the unspent
 * credit guarantee; each slot's own decrement comes later than its
 * registration on every path (it needs the slot, published after this).
 */
static inline void orch_run_register_slot(struct pto_run *r, bool launch)
{
	if (!r->credit_active) {
		atomic_fetch_add_explicit(&r->active, ORCH_RUN_CREDIT,
					  memory_order_relaxed);
		r->credit_active = ORCH_RUN_CREDIT;
	}
	r->credit_active--;
	if (!launch)
		return;
	if (!r->credit_unlaunched) {
		atomic_fetch_add_explicit(&r->unlaunched, ORCH_RUN_CREDIT,
					  memory_order_relaxed);
		r->credit_unlaunched = ORCH_RUN_CREDIT;
	}
	r->credit_unlaunched--;
}

int orch_begin_run(struct pto_orch *o, struct pto_run **out);
void orch_close_run_submission(struct pto_orch *o, struct pto_run *r);
/* Cancel a run whose submission failed: returns 0, or -ENOMEM when the
 * snapshot phase failed (debts kept; call again). Any thread, beside the
 * orch thread and another run's cancellation (pto_orch_close() says why);
 * sets no message. */
int orch_cancel_unstarted_run(struct pto_orch *o, struct pto_run *r);
int orch_fail_run_submission(struct pto_orch *o, struct pto_run *r, int err);

/* ---- slot.c: the state machine ---------------------------------------- */

/* Failure claim: BUILDING/PENDING (and READY when the caller holds
 * sched_mu and has unlinked it) -> FAILED under fanout_mu. Returns the
 * state it won from, or -1 if it lost. Winner alone writes the message. */
int orch_claim_task_failure(struct pto_orch *o, struct orch_slot *s,
			    uint64_t tid, int err, const char *msg, bool ready_ok);
/* Poison consumers, release producers and self, for a FAILED slot that
 * did not run (claimant or publication loser). */
void orch_propagate_failure(struct pto_orch *o, struct orch_slot *s);
/* Drop one lifetime reference; consumes at the threshold. */
void orch_release_ref(struct pto_orch *o, struct orch_slot *s);
/*
 * Slots that reached CONSUMED, whose cleanup (TensorMap erase, ring
 * release, run count) is done together by orch_consume_flush: one
 * TensorMap and one ring lock round trip and one run-counter update per
 * batch instead of per slot. For the orch thread's scope_end, which can
 * consume hundreds of slots in a row.
 */
#define ORCH_CONSUME_BATCH 64
/* Consumers a completion routes per sched_mu hold (orch_on_task_complete). */
#define ORCH_ROUTE_BATCH 16
struct orch_consume_batch {
	uint32_t n;
	struct orch_slot *v[ORCH_CONSUME_BATCH];
};
void orch_release_ref_batched(struct pto_orch *o, struct orch_slot *s,
			      struct orch_consume_batch *b);
void orch_consume_flush(struct pto_orch *o, struct orch_consume_batch *b);
/*
 * The calling thread's consume batch, or NULL: while a backend thread has
 * one set, the consumptions its completions cause (orch_release_ref) are
 * deferred into it, as scope_end's are (orch_release_ref_batched), and
 * the thread flushes it. The device scheduler threads set theirs for
 * their whole loop (lib/sched/sched.c: when they flush, and why that
 * keeps back-pressure and run waits live).
 */
void orch_set_consume_batch(struct orch_consume_batch *b);
/* Aggregate terminal transition of a slot that ran. */
void orch_on_task_complete(struct pto_orch *o, struct orch_slot *s, int err,
			   const char *msg);
/* The counters and links a new occupant starts from (slot claim, under
 * fanout_mu). Inline: every submit runs it, and as a call it was a
 * tenth of the claim's instructions. */
static inline void orch_slot_reset(struct orch_slot *s)
{
	s->fanin_count = 0;
	s->fanin_released = 0;
	s->fanout_total = 0;
	s->fanout_released = 0;
	s->failure_propagation_pending = false;
	s->cancel_debt = false;
	s->unlaunched = false;
	s->failure_err = 0;
	s->nconsumers = 0;
	s->nproducers = 0;
	s->nkeys = 0;
	s->nmembers = 0;
	s->is_group = false;
	s->next_member = 0;
	s->rq = NULL;
	s->rq_next = s->rq_prev = NULL;
	s->poison_next = NULL;
	atomic_store_explicit(&s->members_left, 0, memory_order_relaxed);
	atomic_store_explicit(&s->first_err, 0, memory_order_relaxed);
	atomic_store_explicit(&s->member_msg_claimed, 0, memory_order_relaxed);
	/* failure_message / member_message: see struct orch_slot. */
}
void orch_slot_init_storage(struct orch_slot *s);
void orch_slot_free_storage(struct orch_slot *s);
void orch_set_launched(struct orch_slot *s);

/* ---- ready.c ------------------------------------------------------------ */

struct orch_rq {
	struct orch_slot *head, *tail;
};

struct orch_worker {
	int32_t id;
	uint32_t kind;
	/* Under sched_mu. A worker takes up to cap members at once (a
	 * device core: one running + one pending payload); groups need it
	 * fully idle (inflight == 0). */
	uint32_t inflight, cap;
	bool has_assigned;	/* a group member was assigned to it */
	struct orch_dispatch assigned;
	struct orch_rq exact;	/* tasks targeted at this worker */
};

void orch_enqueue_ready(struct pto_orch *o, struct orch_slot *s);
void orch_enqueue_ready_many(struct pto_orch *o, struct orch_slot *const *v,
			     uint32_t n);
/* Orch thread: publication's batched enqueue, and its flush (ready.c). */
#define ORCH_READY_BATCH 16
void orch_ready_defer(struct pto_orch *o, struct orch_slot *s);
void orch_ready_flush(struct pto_orch *o);
void orch_ready_check(struct pto_orch *o, uint64_t next_tid);
void orch_set_ready_batch(struct pto_orch *o, uint32_t n);
bool orch_heavy_barrier_init(void);
void orch_ready_hungry(struct pto_orch *o, int32_t widx);
void orch_ready_hungry_kinds(struct pto_orch *o, uint32_t kinds);
void orch_heavy_barrier(void);
/*
 * Sleeping with work possibly deferred (ready.c, before_sleep): a light
 * sleep (@heavy false) must end within ORCH_LIGHT_SLEEP_NS; only after
 * one that timed out may the thread go heavy and sleep without bound.
 */
#define ORCH_LIGHT_SLEEP_NS 1000000ULL
/* A scheduler thread serving workers of @kinds (bit per kind) is about
 * to sleep: take the pending list. Returns whether it routed work. */
bool orch_ready_steal(struct pto_orch *o, uint32_t kinds, bool heavy);
/* orch_ready_pop that also takes the pending list (a parking worker). */
int orch_ready_pop_parking(struct pto_orch *o, int32_t widx,
			   struct orch_dispatch *d, bool heavy);
/* Unlink a READY slot (caller holds sched_mu). */
void orch_rq_unlink(struct pto_orch *o, struct orch_slot *s);
void orch_rq_remove_cancelled(struct pto_orch *o, struct orch_slot *s);
int orch_worker_index(struct pto_orch *o, int32_t id);

/* ---- fail points (allocation-failure injection) ------------------------ */

enum orch_fp {
	ORCH_FP_RUN_REGISTER = 0,	/* run-slot registration */
	ORCH_FP_SCOPE_REGISTER,		/* scope frame append */
	ORCH_FP_ARGS,			/* copying args into the slot */
	ORCH_FP_GROUP_PREP,		/* member vectors */
	ORCH_FP_JOURNAL,		/* cleanup journal append */
	ORCH_FP_TENSORMAP,		/* TensorMap node / rehash */
	ORCH_FP_DEPS,			/* producer collection */
	ORCH_FP_WIRE,			/* fanout / fanin edge vectors */
	ORCH_FP_CANCEL_SNAPSHOT,	/* cancellation snapshot */
	ORCH_FP_RUN_ALLOC,		/* run state */
	ORCH_FP_NR,
	/* Trace points: the hook is told, its return value is ignored. */
	ORCH_TP_BEFORE_PUBLISH = 100,	/* wiring done, not yet published */
	ORCH_TP_CANCEL_SETTLE,		/* debts cleared, releases start */
	/* Back-pressure: about to sleep in ring_wait(), ring.mu held (the
	 * hook must take no lock): a wake-up from here on ends the sleep. */
	ORCH_TP_RING_WAIT,
	/* pto_orch_close(): the backend's stop is called (no lock held). */
	ORCH_TP_BACKEND_STOP,
};

/* Returns nonzero to fail the allocation at @fp. */
typedef int (*orch_fail_hook_fn)(void *ctx, struct pto_orch *o, int fp,
				 struct orch_slot *s);

static inline int orch_may_fail(struct pto_orch *o, int fp,
				struct orch_slot *s);

/* ---- the orchestrator --------------------------------------------------- */

struct pto_orch {
	struct pto_orch_config cfg;
	const struct orch_backend_ops *ops;
	void *be;		/* backend private */
	/* Device tag of the heap rings' GM (orch_heap.dev): submit refuses a
	 * GM tensor tagged with another device. 0: no device (in-process). */
	uint32_t gm_dev;
	/*
	 * Bit s: a tensor of space s is refused at submit unless the task's
	 * kernel is in @tensorless_kernels (the backend's
	 * kernels_need_heap_space: every space but the heap's). 0: any
	 * space is taken (in-process).
	 */
	uint32_t kernel_bad_spaces;
	uint64_t tensorless_kernels;
	/* The backend's host_callbacks: every task needs pto_callable.fn. */
	bool host_callbacks;

	struct orch_ring rings[PTO_MAX_RING_DEPTH];
	struct orch_tensormap tm;
	struct orch_scope scope;
	_Atomic uint64_t next_task_id;

	/* Workers and ready queues (ready.c), under sched_mu. Own cache
	 * line: idle workers poll rq_gen while the orch thread locks. */
	struct orch_lock sched_mu __attribute__((aligned(64)));
	struct orch_worker *workers;
	uint32_t nworkers;
	uint32_t kind_workers[ORCH_KIND_NR];	/* workers of each kind (fixed) */
	struct orch_rq kind_rq[ORCH_KIND_NR];
	struct orch_rq group_rq;
	/* Bumped after every enqueue, so idle workers can spin on one word
	 * instead of the lock. */
	_Atomic uint64_t rq_gen __attribute__((aligned(64)));
	char rq_gen_pad[56];
	/* Entries a pop could take (ready.c, orch_ready_any_kind): linked in
	 * the FIFO of kind k (rq_queued_kind[k]); linked in an exact or the
	 * group FIFO, or assigned (rq_queued_other). Written under sched_mu,
	 * read without it. Their own line: every pop writes one, and idle
	 * in-process workers spin on rq_gen's. */
	_Atomic uint32_t rq_queued_kind[ORCH_KIND_NR] __attribute__((aligned(64)));
	_Atomic uint32_t rq_queued_other;
	char rq_queued_pad[64 - (ORCH_KIND_NR + 1) * sizeof(uint32_t)];
	/* One bit per worker kind: a worker of the kind is idle (spinning a
	 * while, or parking). Set by workers, cleared by the flush or steal
	 * that routes work of the kind, read by the orch thread at every
	 * deferred publication (ready.c, orch_ready_defer). Its own line
	 * with the list's head and cursor, all written rarely, so the orch
	 * thread's per-publication read stays a cache hit. */
	_Atomic uint32_t rq_hungry __attribute__((aligned(64)));
	/* The pending list (orch_ready_defer): head and cursor. pend_first
	 * is stored by the orch thread, read by stealers under sched_mu;
	 * pend_taken is written under sched_mu (read without it by
	 * orch_ready_any_kind, a hint). */
	struct orch_slot *_Atomic pend_first;
	struct orch_slot *_Atomic pend_taken;
	char pend_pad[40];
	/* Orch thread only: the list's tail, the task id its first entry
	 * was claimed with, and the batch size (1: no deferral; set by the
	 * threaded in-process and the device backends, at most the window). */
	struct orch_slot *pend_tail;
	uint64_t pend_tid0;
	uint32_t ready_batch;
	/* Sleeps that paid the barrier (ready.c, before_sleep); statistic. */
	_Atomic uint64_t heavy_sleeps;

	/* Runs (run.c), under runs_mu. */
	pthread_mutex_t runs_mu;
	pthread_cond_t runs_cv;
	struct pto_run *runs;	/* live (not yet released by the runtime) */
	uint32_t runs_in_flight;/* leases held */
	uint32_t runs_alive;	/* allocated, not yet freed (destroy, tests) */
	pid_t owner_pid;	/* the creator: a forked child's copy is inert */
	bool closing, closed;
	/* A close is stopping the backend (orch.c): another close waits. */
	bool stopping;
	/*
	 * pto_orch_abort() was called: the run being built takes no further
	 * submit (building_run()). Stored by the aborting thread, loaded
	 * (relaxed) by the orch thread at each submit: it only has to be
	 * seen eventually, and a submit that misses it still fails its task
	 * when an aborted scheduler thread pops it.
	 */
	atomic_bool aborted;
	struct pto_run *building;	/* orch thread only */

	/* Submit scratch (orch thread). */
	struct orch_dep_scratch {
		struct orch_slot *s;
		uint64_t tid;
		bool retain;
	} *deps;
	uint32_t ndeps, cap_deps;

	char errmsg[ORCH_MSG_LEN];	/* last construction error */

	/* Tests only: set with orch_set_fail_hook(), possibly while the
	 * backend's threads run. */
	_Atomic(orch_fail_hook_fn) fail_hook;
	void *fail_ctx;
};

static inline int orch_may_fail(struct pto_orch *o, int fp,
				struct orch_slot *s)
{
	/* Acquire: pairs with orch_set_fail_hook()'s release, so the hook
	 * is called with its own ctx (a plain load on x86). */
	orch_fail_hook_fn h = atomic_load_explicit(&o->fail_hook,
						   memory_order_acquire);

	if (__builtin_expect(h == NULL, 1))
		return 0;
	return h(o->fail_ctx, o, fp, s);
}

/*
 * Is this a process other than the orchestrator's creator (a fork)? Then
 * no call may touch a lock of @o: it may be a copy of one a worker or
 * scheduler thread of the parent held at the fork (orch.h, fork()).
 * Inline, a plain load where no fork happened: the run polls and every
 * submit ask, and glibc's getpid() is a system call, asked once per fork
 * instead. A child's own orchestrators have its pid.
 */
static inline bool orch_forked(const struct pto_orch *o)
{
	return __builtin_expect(orch_forked_child, 0) &&
	       orch_child_pid != o->owner_pid;
}

/*
 * Install (or, with NULL, remove) a test's fail hook. Its ctx is stored
 * first and the hook published with release: a thread that sees the new
 * hook sees its ctx. Removing it leaves ctx for a call already past the
 * load; a test keeps ctx alive until its threads are quiet.
 */
static inline void orch_set_fail_hook(struct pto_orch *o, orch_fail_hook_fn h,
				      void *ctx)
{
	if (h)
		o->fail_ctx = ctx;
	atomic_store_explicit(&o->fail_hook, h, memory_order_release);
}

/*
 * Register @s in the innermost frame. Idempotent per slot per level: a
 * second registration of the same slot at the same level is a no-op (the
 * slot is always the newest entry when that could happen). Fallible: the
 * frame may grow; the caller charges the reference only after success.
 * Inline, and a frame with room is all it looks at: every submit runs it
 * (as a call, 33 instructions per submit in the VM's fan-out).
 */
static inline int orch_scope_register(struct pto_orch *o, struct orch_slot *s)
{
	struct orch_scope_frame *f;

	if (__builtin_expect(!o->scope.depth, 0))
		return orch_scope_register_slow(o, s);
	f = &o->scope.frames[o->scope.depth - 1];
	if (f->n && f->refs[f->n - 1].s == s && f->refs[f->n - 1].tid == s->task_id)
		return 0;
	if (__builtin_expect(f->n == f->cap, 0))
		return orch_scope_register_slow(o, s);
	f->refs[f->n].s = s;
	f->refs[f->n].tid = s->task_id;
	f->n++;
	return 0;
}

/* Caller holds tm.mu. Inline: the submit path looks up every INPUT and
 * INOUT tensor, and as a call a lookup was a third more instructions. */
static inline struct orch_slotref
orch_tm_lookup_locked(struct pto_orch *o, const struct orch_key *k)
{
	struct orch_tensormap *tm = &o->tm;
	uint64_t h = orch_tm_hash(k);
	struct orch_slotref v = { NULL, 0 };
	struct orch_tm_node *n;

	for (n = tm->buckets[h & (tm->nbuckets - 1)]; n; n = n->next)
		if (orch_tm_key_eq(&n->key, k)) {
			v = n->val;
			break;
		}
	return v;
}

/* Record a construction error message on the orchestrator. */
int orch_error(struct pto_orch *o, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Grow an array to hold @need elements (consults the fail hook). The
 * check that there is room already is inline: it is what every submit
 * hits, several times. */
int orch_grow_slow(struct pto_orch *o, int fp, struct orch_slot *s, void **arr,
		   uint32_t *cap, uint32_t need, size_t elem);
static inline int orch_grow(struct pto_orch *o, int fp, struct orch_slot *s,
			    void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
	if (__builtin_expect(need <= *cap, 1))
		return 0;
	return orch_grow_slow(o, fp, s, arr, cap, need, elem);
}
/* orch_grow for an array whose first storage may be @inl (inline in a
 * slot): that one is copied to the heap, never realloc'd or freed. */
int orch_grow_inl_slow(struct pto_orch *o, int fp, struct orch_slot *s,
		       void **arr, uint32_t *cap, uint32_t need, size_t elem,
		       const void *inl);
static inline int orch_grow_inl(struct pto_orch *o, int fp, struct orch_slot *s,
				void **arr, uint32_t *cap, uint32_t need,
				size_t elem, const void *inl)
{
	if (__builtin_expect(need <= *cap, 1))
		return 0;
	return orch_grow_inl_slow(o, fp, s, arr, cap, need, elem, inl);
}
void orch_fork_hygiene_once(void);
void orch_mutex_init(pthread_mutex_t *mu);

#endif
