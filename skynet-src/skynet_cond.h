#ifndef SKYNET_COND_H
#define SKYNET_COND_H

/*
 * Public header (on skynet.h's list; system headers only): the pthread
 * mutex + condition variable pair, wrapped so that a failing pthread call
 * aborts (a failure here is a broken invariant, not an error a caller
 * could handle). Embedded by value: _init/_destroy, no allocation. The
 * core's threads use it, and so do threads a Lua C module starts.
 */

#include <pthread.h>
#include <stdlib.h>
#include <errno.h>
#include <time.h>

struct skynet_cond {
	pthread_mutex_t mutex;
	pthread_cond_t cond;
};

static inline void
skynet_cond_init(struct skynet_cond *c) {
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (pthread_mutex_init(&c->mutex, NULL) != 0 || pthread_cond_init(&c->cond, &attr) != 0)
		abort();
	pthread_condattr_destroy(&attr);
}

static inline void
skynet_cond_destroy(struct skynet_cond *c) {
	pthread_mutex_destroy(&c->mutex);
	pthread_cond_destroy(&c->cond);
}

static inline void
skynet_cond_lock(struct skynet_cond *c) {
	if (pthread_mutex_lock(&c->mutex) != 0)
		abort();
}

static inline void
skynet_cond_unlock(struct skynet_cond *c) {
	if (pthread_mutex_unlock(&c->mutex) != 0)
		abort();
}

/* Caller holds the mutex. */
static inline void
skynet_cond_wait(struct skynet_cond *c) {
	if (pthread_cond_wait(&c->cond, &c->mutex) != 0)
		abort();
}

/* Caller holds the mutex; waits at most usec microseconds (monotonic clock). */
static inline void
skynet_cond_timedwait(struct skynet_cond *c, long usec) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += usec / 1000000;
	ts.tv_nsec += (usec % 1000000) * 1000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	int err = pthread_cond_timedwait(&c->cond, &c->mutex, &ts);
	if (err != 0 && err != ETIMEDOUT)
		abort();
}

static inline void
skynet_cond_signal(struct skynet_cond *c) {
	if (pthread_cond_signal(&c->cond) != 0)
		abort();
}

static inline void
skynet_cond_broadcast(struct skynet_cond *c) {
	if (pthread_cond_broadcast(&c->cond) != 0)
		abort();
}

#endif
