/* SPDX-License-Identifier: MIT */
/*
 * The orchestrator's short-hold lock and CPU hints (lib/orch/ only). Lock
 * order: sched_mu -> slot.fanout_mu -> tm.mu -> ring.mu -> runs_mu (innermost;
 * also the atfork handler's order). Nobody holds two fanout_mu: cross-slot
 * actions run after dropping the current slot's lock.
 */
#ifndef PTO_ORCH_LOCK_H
#define PTO_ORCH_LOCK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

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

#endif
