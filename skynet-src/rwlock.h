#ifndef SKYNET_RWLOCK_H
#define SKYNET_RWLOCK_H

/*
 * Public header (the set is listed at the top of skynet.h).
 *
 * Reader-writer lock over pthread_rwlock (writer-preferring where glibc
 * offers it, so a stream of lookups cannot starve handle registration).
 * Failure to lock is a broken invariant and aborts.
 */

#include <pthread.h>
#include <stdlib.h>

struct rwlock {
	pthread_rwlock_t lock;
};

static inline void
rwlock_init(struct rwlock *lock) {
	pthread_rwlockattr_t attr;
	pthread_rwlockattr_init(&attr);
#ifdef PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
#endif
	if (pthread_rwlock_init(&lock->lock, &attr) != 0)
		abort();
	pthread_rwlockattr_destroy(&attr);
}

static inline void
rwlock_rlock(struct rwlock *lock) {
	if (pthread_rwlock_rdlock(&lock->lock) != 0)
		abort();
}

static inline void
rwlock_wlock(struct rwlock *lock) {
	if (pthread_rwlock_wrlock(&lock->lock) != 0)
		abort();
}

static inline void
rwlock_runlock(struct rwlock *lock) {
	if (pthread_rwlock_unlock(&lock->lock) != 0)
		abort();
}

static inline void
rwlock_wunlock(struct rwlock *lock) {
	if (pthread_rwlock_unlock(&lock->lock) != 0)
		abort();
}

static inline void
rwlock_destroy(struct rwlock *lock) {
	pthread_rwlock_destroy(&lock->lock);
}

#endif
