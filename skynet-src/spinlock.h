#ifndef SKYNET_SPINLOCK_H
#define SKYNET_SPINLOCK_H

/*
 * Internal: skynet-src/ (and its tests) only, never service-src/ or lualib-src/.
 *
 * Test-and-test-and-set spinlock for O(1) critical sections only: never call
 * a callback, skynet_send, skynet_error, Lua or a blocking syscall while
 * holding one. A waiter that has spun a few microseconds yields its core
 * between looks (SPINLOCK_SPINS_BEFORE_YIELD): with more busy threads than
 * cores (two workers, the timer and the socket thread on a 2-core machine)
 * the holder may be preempted, and a waiter spinning through its time slice
 * keeps it off the core. Under ThreadSanitizer (which cannot see through the
 * spin) it is a pthread mutex, so races are still reported.
 */

#include "atomic.h"

#if defined(__SANITIZE_THREAD__) || defined(SKYNET_TSAN)
#define SPIN_USE_MUTEX 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SPIN_USE_MUTEX 1
#endif
#endif

#ifdef SPIN_USE_MUTEX

#include <pthread.h>
#include <stdlib.h>

struct spinlock {
	pthread_mutex_t lock;
};

static inline void
spinlock_init(struct spinlock *lock) {
	if (pthread_mutex_init(&lock->lock, NULL) != 0)
		abort();
}

static inline void
spinlock_lock(struct spinlock *lock) {
	if (pthread_mutex_lock(&lock->lock) != 0)
		abort();
}

static inline bool
spinlock_trylock(struct spinlock *lock) {
	return pthread_mutex_trylock(&lock->lock) == 0;
}

static inline void
spinlock_unlock(struct spinlock *lock) {
	if (pthread_mutex_unlock(&lock->lock) != 0)
		abort();
}

static inline void
spinlock_destroy(struct spinlock *lock) {
	pthread_mutex_destroy(&lock->lock);
}

#else

#include <sched.h>

/*
 * A waiter spins this many pauses (a few microseconds), then yields the core
 * between looks: on a machine with more runnable threads than cores the
 * holder may have been preempted, and spinning on would only delay it.
 */
#define SPINLOCK_SPINS_BEFORE_YIELD 128

struct spinlock {
	ATOM_INT lock;
};

static inline void
spinlock_init(struct spinlock *lock) {
	ATOM_INIT(&lock->lock, 0);
}

static inline void
spin_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static inline void
spinlock_lock(struct spinlock *lock) {
	for (;;) {
		/* acquire: pairs with the release store in spinlock_unlock */
		if (__atomic_exchange_n(&lock->lock, 1, __ATOMIC_ACQUIRE) == 0)
			return;
		for (int spins = 0; ATOM_LOAD_RELAXED(&lock->lock); spins++) {
			if (spins < SPINLOCK_SPINS_BEFORE_YIELD)
				spin_pause();
			else
				sched_yield(); // the holder may be off its core: let it run
		}
	}
}

static inline bool
spinlock_trylock(struct spinlock *lock) {
	return ATOM_LOAD_RELAXED(&lock->lock) == 0 &&
	       __atomic_exchange_n(&lock->lock, 1, __ATOMIC_ACQUIRE) == 0;
}

static inline void
spinlock_unlock(struct spinlock *lock) {
	ATOM_STORE_RELEASE(&lock->lock, 0); // pairs with the acquire exchange in spinlock_lock
}

static inline void
spinlock_destroy(struct spinlock *lock) {
	(void)lock;
}

#endif

#define SPIN_INIT(q)    spinlock_init(&(q)->lock)
#define SPIN_LOCK(q)    spinlock_lock(&(q)->lock)
#define SPIN_UNLOCK(q)  spinlock_unlock(&(q)->lock)
#define SPIN_DESTROY(q) spinlock_destroy(&(q)->lock)

#endif
