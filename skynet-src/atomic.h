#ifndef SKYNET_ATOMIC_H
#define SKYNET_ATOMIC_H

/*
 * Public header (the set is listed at the top of skynet.h).
 *
 * The only place that names compiler atomics. Everything is sequentially
 * consistent unless the macro name says otherwise (ATOM_LOAD_RELAXED ...);
 * callers of a relaxed or acquire/release form name the paired operation in
 * a comment.
 *
 * An ATOM_* type is an ordinary integer: these macros apply to any field that
 * other threads touch without a lock.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ATOM_INT     int
#define ATOM_UINT    unsigned int
#define ATOM_SIZET   size_t
#define ATOM_ULONG   unsigned long
#define ATOM_U32     uint32_t
#define ATOM_U64     uint64_t
#define ATOM_POINTER void *

#define ATOM_INIT(p, v)          __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define ATOM_LOAD(p)             __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define ATOM_STORE(p, v)         __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)
#define ATOM_LOAD_RELAXED(p)     __atomic_load_n((p), __ATOMIC_RELAXED)
#define ATOM_STORE_RELAXED(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define ATOM_LOAD_ACQUIRE(p)     __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define ATOM_STORE_RELEASE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define ATOM_XCHG(p, v)          __atomic_exchange_n((p), (v), __ATOMIC_SEQ_CST)
/* Returns true when *p held oval and now holds nval. */
#define ATOM_CAS(p, oval, nval)                                                                    \
	({                                                                                             \
		__typeof__(*(p)) atom_cas_expect = (oval);                                                 \
		__atomic_compare_exchange_n((p), &atom_cas_expect, (nval), false, __ATOMIC_SEQ_CST,        \
		                            __ATOMIC_SEQ_CST);                                             \
	})
/* These return the value the object held before the operation. */
#define ATOM_FINC(p)    __atomic_fetch_add((p), 1, __ATOMIC_SEQ_CST)
#define ATOM_FDEC(p)    __atomic_fetch_sub((p), 1, __ATOMIC_SEQ_CST)
#define ATOM_FADD(p, n) __atomic_fetch_add((p), (n), __ATOMIC_SEQ_CST)
#define ATOM_FSUB(p, n) __atomic_fetch_sub((p), (n), __ATOMIC_SEQ_CST)
#define ATOM_FAND(p, n) __atomic_fetch_and((p), (n), __ATOMIC_SEQ_CST)
#define ATOM_FOR(p, n)  __atomic_fetch_or((p), (n), __ATOMIC_SEQ_CST)
/* Relaxed counter bump: statistics only, read by nobody who needs ordering. */
#define ATOM_FADD_RELAXED(p, n) __atomic_fetch_add((p), (n), __ATOMIC_RELAXED)
#if defined(__SANITIZE_THREAD__) || defined(SKYNET_TSAN)
/*
 * ThreadSanitizer does not model fences (gcc warns): use a seq-cst
 * read-modify-write on a shared word, which it does model and which orders
 * like a full fence with respect to the other seq-cst operations.
 */
static ATOM_INT ATOM_FENCE_WORD __attribute__((unused));
#define ATOM_FENCE() ((void)__atomic_fetch_add(&ATOM_FENCE_WORD, 0, __ATOMIC_SEQ_CST))
#else
#define ATOM_FENCE() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#endif

#endif
