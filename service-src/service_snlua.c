/*
 * snlua: the C service that hosts one Lua 5.4 VM per service.
 *
 * Memory. Each service gets its own lua_State whose allocator (state_alloc)
 * counts the bytes the VM holds. A limit (registry field "memlimit", read
 * once after the loader returns) makes a growing allocation that would pass
 * it fail, so Lua raises "not enough memory" and only that call fails. A
 * warning is logged when usage passes 32 MB and again at every doubling.
 * Exiting must never need memory the service cannot get: skynet.exit first
 * calls registry "snlua.exit_reserve", which lets the heap grow up to
 * SNLUA_EXIT_RESERVE bytes past the limit for the rest of the service's life
 * (bounded: a runaway __close handler still meets a limit). skynet.memlimit
 * also loads the exit code before the limit applies, so exit never loads a
 * module. Only entering exit itself (a CallInfo or a few stack slots for
 * the call, which Lua normally keeps from earlier calls) is not covered.
 *
 * Start-up. init sends the service its own parameter as the first message
 * (PTYPE_TEXT, DONTCOPY) through a one-shot callback. That callback builds
 * the VM (libraries, registry "skynet_context" and the "snlua.*" C functions
 * named under "memory" and "signals", skynet.profile and
 * skynet.codecache in package.preload, accounting coroutine.resume/wrap,
 * generational GC, the LUA_* globals from env) and runs the loader script.
 * Any failure is logged, "ERROR" goes to .launcher and the service exits;
 * with no .launcher yet (the bootstrap failed) the node stops with status 1.
 *
 * Code cache. Each Lua file is compiled once per process: the first load
 * dumps the chunk (with debug info, so tracebacks keep file and line) into a
 * process-wide table keyed by path; later loads undump that bytecode. The
 * table is guarded by CACHE.lock; entries are refcounted under that lock so
 * clear() can drop them while another state is still undumping one.
 *
 * Signals. snlua_signal runs on a foreign thread, which must never touch a
 * lua_State another thread is running (lua_sethook walks the call chain). So
 * it only ORs a TRAP_* bit into trap (atomic) and, when a worker runs the
 * service right now, interrupts that worker with TRAP_SIGNAL (pthread_kill).
 * runner holds that worker's pthread_t, 0 between messages: lua-skynet.c
 * calls dispatch_enter/dispatch_leave (registry "snlua.enter"/"snlua.leave")
 * around every message and launch_cb does the same for the first. The
 * handler runs on the interrupted worker itself: if the thread-local CURRENT
 * (the instance this worker runs) has pending bits, it installs trap_hook on
 * active, the coroutine this worker runs for it (the same thread, at an
 * arbitrary point: the use Lua's own interpreter makes of lua_sethook from
 * a signal handler). trap_hook takes the bits with an exchange, removes
 * itself and serves them: signal 0 raises "signal 0" (this breaks an endless
 * loop), signal 1 logs the memory in use. A hook that finds no bits (they
 * were served on another coroutine) just removes itself. A signal that lands
 * on a worker running another service (the service moved on) or no Lua at all
 * finds no bits or no instance and does nothing; the bits then wait for the
 * resume path, which loads trap once per resume (no lock) and installs the
 * hook on the coroutine it resumes, so a request to an idle service is served
 * at its next resume. Either the worker's store of runner comes first in the
 * seq-cst order and the signaller interrupts it, or the signaller's OR comes
 * first and the worker's next resume sees the bit. No hook stays installed
 * while nothing is pending, so the VM runs at full speed (any count hook
 * makes it trace every instruction).
 * The main thread (skynet.lua's dispatcher) is only hooked after
 * TRAP_MAIN_COUNT instructions: it runs framework code, where the hook
 * would only defer (below), and the next resume serves the bits anyway; a
 * loop on the main thread (in an unpack function, say) still breaks.
 * dispatch_leave drops such a hook.
 * Framework code is never broken midway: its bookkeeping (a reply after the
 * session is taken but before the send, a coroutine parked in the pool but
 * not yet yielded) would be left half done, and a caller could wait forever.
 * skynet.lua marks its chunk, and those of its lazy parts as they load,
 * through registry "snlua.framework" (up to TRAP_FRAMEWORK_MAX chunks per
 * state; the function is anchored in the registry, so its source string,
 * compared by address, stays valid). When the hook fires in a function of a
 * marked chunk (lua_getinfo "S" on the current frame, paid only while bits
 * are pending) it keeps the bits and fires again at the next instruction, so
 * the break lands at the first instruction of service code, even one in
 * another coroutine or a later message. trap_deferred counts those
 * instructions (the running thread alone touches it; reset when bits are
 * served): after TRAP_DEFER_MAX the hook serves the bits wherever it is, so a
 * loop in framework code still breaks (about 50 ms of hooked instructions
 * later).
 * TRAP_SIGNAL is installed once per process with SA_RESTART; the workers
 * never block it. The caller of snlua_signal holds a reference to the
 * context, so the node (and every worker) outlives the pthread_kill.
 * Trade-off: ThreadSanitizer delivers a signal only when the thread enters
 * an intercepted libc call or an atomic operation, so under TSan a pure Lua
 * loop (liblua is not instrumented) is never interrupted; the tests break a
 * loop that calls into C there, and the pure loop only in other builds.
 *
 * Profiling. profile.start(co) attaches a record to a coroutine; the
 * accounting resume then adds the time the coroutine runs (inclusive of the
 * coroutines it resumes) to the record, and profile.stop returns seconds.
 * The clock is CLOCK_MONOTONIC, which is read through the vDSO without a
 * system call; it measures elapsed time while the coroutine runs, so time the
 * worker thread spends preempted is counted as well (an approximation of CPU
 * time that is exact on an idle core). A record is found through the thread's
 * extra space (LUA_EXTRASPACE), so a resume of an unprofiled coroutine costs
 * one pointer read; the record itself is anchored in a weak-keyed registry
 * table, so it lives exactly as long as its coroutine. The main thread keeps
 * its extra space NULL (new threads copy it); its record lives in the table.
 */

#include "skynet.h"
#include "atomic.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SNLUA_WARN_BYTES   (32 * 1024 * 1024)
#define SNLUA_MB           (1024.0 * 1024.0)
#define SNLUA_WARN_BUF     256
#define SNLUA_EXIT_RESERVE (256 * 1024)
#define TRAP_BREAK         1 // signal 0: raise "signal 0"
#define TRAP_MEMORY        2 // signal 1: log memory usage
#define TRAP_SIGNAL        (SIGRTMIN + 3)
#define TRAP_MAIN_COUNT    1000000 // instructions before a trap is served on the main thread
#define TRAP_DEFER_MAX     1000000 // framework instructions a break may wait out
#define TRAP_FRAMEWORK_MAX 16      // chunks marked as framework code per state
#define CACHE_MIN_SLOTS    64
#define CACHE_MODE_ON      0 // use and fill the cache
#define CACHE_MODE_EXIST   1 // use cached chunks, do not add new ones
#define CACHE_MODE_OFF     2 // always read the file

_Static_assert(LUA_EXTRASPACE >= sizeof(void *), "snlua keeps a pointer in the extra space");
_Static_assert(sizeof(pthread_t) <= sizeof(ATOM_ULONG), "runner holds a pthread_t");

/*
 * Small-object pool, one per Lua state (only the thread running the service
 * touches it). Objects of up to POOL_MAX bytes are carved from 4 KB chunks
 * in 16-byte size classes, with no per-object header; a freed object goes
 * on its class's free list and is reused by the next object of that class.
 * All classes carve from one shared chunk, so at most one chunk is partly
 * used. Lua always passes the exact old size, which names the class. This
 * saves glibc's per-object header and locking: a Lua state is mostly small
 * objects (strings, tables, closures), so services start faster and hold
 * less memory. Chunks go back only when the state closes. Under
 * AddressSanitizer the pool is off, so every object stays visible to it.
 */
#define POOL_GRAIN   16
#define POOL_MAX     128
#define POOL_CLASSES (POOL_MAX / POOL_GRAIN)
#define POOL_CHUNK   4096

#if defined(__SANITIZE_ADDRESS__)
#define POOL_ENABLED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define POOL_ENABLED 0
#endif
#endif
#ifndef POOL_ENABLED
#define POOL_ENABLED 1
#endif

struct pool_chunk {
	struct pool_chunk *next;
	char pad[POOL_GRAIN - sizeof(struct pool_chunk *)]; // keeps objects 16-byte aligned
};

struct small_pool {
	void *free[POOL_CLASSES]; // per class: freed objects, linked through their first word
	char *bump;               // the unused tail of the newest chunk
	char *bump_end;
	struct pool_chunk *chunks; // owned
};

struct snlua {
	lua_State *L;               // owned
	struct skynet_context *ctx; // borrowed: the context outlives its instance
	size_t mem_bytes;           // only the service's thread touches these four
	size_t mem_warn_bytes;
	size_t mem_limit_bytes;   // 0: no limit
	size_t mem_reserve_bytes; // allowed past the limit once exit has begun
	ATOM_INT trap;            // TRAP_* bits not yet served (see "signals")
	ATOM_ULONG runner;        // pthread_t of the worker running the service, 0: none
	ATOM_POINTER active;      // lua_State running now (main between resumes)
	int trap_deferred;        // framework instructions a pending trap has waited out
	int framework_n;
	const char *framework[TRAP_FRAMEWORK_MAX]; // source strings of the framework's chunks
	struct small_pool pool;                    // the state's small objects (see "memory")
	bool warn_off;                             // Lua warnings ("@off"/"@on")
	size_t warn_len;
	char warn_buf[SNLUA_WARN_BUF]; // a warning being assembled from pieces
};

/* The accounting record of one profiled coroutine; a full userdata. */
struct co_profile {
	uint64_t total_ns;
	uint64_t run_start_ns; // 0 while the coroutine does not run
};

struct cache_entry {
	struct cache_entry *next; // owned: bucket chain
	int refs;                 // under CACHE.lock: 1 for the table, 1 per reader
	uint32_t hash;
	size_t code_bytes;
	char *path; // owned
	char *code; // owned: lua_dump output
};

struct code_cache {
	pthread_mutex_t lock;       // covers every field below and the entries
	struct cache_entry **slots; // owned; slot_count buckets
	size_t slot_count;          // power of two, 0 before the first insert
	size_t entry_count;
};

struct dump_buf {
	char *data; // owned
	size_t len;
	size_t cap;
};

static struct code_cache CACHE = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Registry keys: their addresses are unique per process. */
static const char PROFILE_TABLE_KEY = 0;
static const char CACHE_MODE_KEY = 0;

static void
mutex_lock(pthread_mutex_t *m) {
	if (pthread_mutex_lock(m) != 0)
		abort();
}

static void
mutex_unlock(pthread_mutex_t *m) {
	if (pthread_mutex_unlock(m) != 0)
		abort();
}

static uint64_t
mono_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct snlua *
state_snlua(lua_State *L) {
	void *ud = NULL;
	(void)lua_getallocf(L, &ud);
	return ud;
}

/* ---- memory ---------------------------------------------------------- */

static inline int
pool_class(size_t sz) {
	return (int)((sz + POOL_GRAIN - 1) / POOL_GRAIN) - 1;
}

static void *
pool_alloc(struct small_pool *p, size_t sz) {
	int c = pool_class(sz);
	void *obj = p->free[c];
	if (obj != NULL) {
		p->free[c] = *(void **)obj;
		return obj;
	}
	size_t bytes = (size_t)(c + 1) * POOL_GRAIN;
	if ((size_t)(p->bump_end - p->bump) < bytes) {
		struct pool_chunk *chunk = skynet_malloc(POOL_CHUNK);
		chunk->next = p->chunks;
		p->chunks = chunk;
		p->bump = (char *)(chunk + 1);
		p->bump_end = (char *)chunk + POOL_CHUNK;
	}
	obj = p->bump;
	p->bump += bytes;
	return obj;
}

static void
pool_free(struct small_pool *p, void *obj, size_t sz) {
	int c = pool_class(sz);
	*(void **)obj = p->free[c];
	p->free[c] = obj;
}

static void
pool_destroy(struct small_pool *p) {
	struct pool_chunk *chunk = p->chunks;
	while (chunk) {
		struct pool_chunk *next = chunk->next;
		skynet_free(chunk);
		chunk = next;
	}
	memset(p, 0, sizeof(*p));
}

static inline bool
is_small(size_t sz) {
	return POOL_ENABLED && sz <= POOL_MAX;
}

/* realloc for the state: small objects from the pool, the rest from skynet_malloc. */
static void *
pool_realloc(struct small_pool *p, void *ptr, size_t old_bytes, size_t nsize) {
	if (nsize == 0) {
		if (ptr == NULL)
			return NULL;
		if (is_small(old_bytes))
			pool_free(p, ptr, old_bytes);
		else
			skynet_free(ptr);
		return NULL;
	}
	if (ptr == NULL)
		return is_small(nsize) ? pool_alloc(p, nsize) : skynet_malloc(nsize);
	if (!is_small(old_bytes) && !is_small(nsize))
		return skynet_realloc(ptr, nsize);
	if (is_small(old_bytes) && is_small(nsize) && pool_class(old_bytes) == pool_class(nsize))
		return ptr;
	void *q = is_small(nsize) ? pool_alloc(p, nsize) : skynet_malloc(nsize);
	memcpy(q, ptr, old_bytes < nsize ? old_bytes : nsize);
	if (is_small(old_bytes))
		pool_free(p, ptr, old_bytes);
	else
		skynet_free(ptr);
	return q;
}

static void *
state_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
	struct snlua *l = ud;
	size_t old_bytes = ptr ? osize : 0; // for a new object osize is its type tag
	if (nsize == 0) {
		pool_realloc(&l->pool, ptr, old_bytes, 0);
		l->mem_bytes -= old_bytes;
		return NULL;
	}
	if (nsize > old_bytes && l->mem_limit_bytes != 0 &&
	    l->mem_bytes + (nsize - old_bytes) > l->mem_limit_bytes + l->mem_reserve_bytes)
		return NULL; // Lua collects and retries, then raises "not enough memory"
	void *p = pool_realloc(&l->pool, ptr, old_bytes, nsize);
	l->mem_bytes += nsize - old_bytes; // unsigned wrap-around also covers shrinking
	if (l->mem_bytes > l->mem_warn_bytes) {
		while (l->mem_warn_bytes < l->mem_bytes)
			l->mem_warn_bytes *= 2;
		skynet_error(l->ctx, "warn: snlua: memory usage size_mb=%.2f", l->mem_bytes / SNLUA_MB);
	}
	return p;
}

static int
state_panic(lua_State *L) {
	const char *msg = lua_tostring(L, -1);
	fprintf(stderr, "fatal: snlua: unprotected lua error err=%s\n", msg ? msg : "?");
	return 0; // Lua aborts
}

/* Lua warnings (warn() and errors in __gc) go to the log, one line each. */
static void
state_warn(void *ud, const char *msg, int tocont) {
	struct snlua *l = ud;
	if (l->warn_len == 0 && !tocont && msg[0] == '@') {
		if (strcmp(msg, "@off") == 0)
			l->warn_off = true;
		else if (strcmp(msg, "@on") == 0)
			l->warn_off = false;
		return;
	}
	size_t len = strlen(msg);
	size_t room = SNLUA_WARN_BUF - 1 - l->warn_len;
	if (len > room)
		len = room;
	memcpy(l->warn_buf + l->warn_len, msg, len);
	l->warn_len += len;
	if (tocont)
		return;
	l->warn_buf[l->warn_len] = '\0';
	l->warn_len = 0;
	if (!l->warn_off)
		skynet_error(l->ctx, "warn: lua: %s", l->warn_buf);
}

/* ---- signals ----------------------------------------------------------- */

/*
 * The instance this worker runs now (NULL between messages), for the signal
 * handler. Initial-exec TLS: reading it in a handler never allocates.
 */
static __thread ATOM_POINTER CURRENT __attribute__((tls_model("initial-exec")));
static ATOM_INT TRAP_SIGNAL_READY; // TRAP_SIGNAL's handler is installed
static pthread_once_t TRAP_SIGNAL_ONCE = PTHREAD_ONCE_INIT;

/* Whether the function the hook fired in belongs to a marked framework chunk. */
static bool
in_framework(struct snlua *l, lua_State *L, lua_Debug *ar) {
	if (l->framework_n == 0 || !lua_getinfo(L, "S", ar))
		return false;
	for (int i = 0; i < l->framework_n; i++) {
		if (ar->source == l->framework[i])
			return true;
	}
	return false;
}

static void
trap_hook(lua_State *L, lua_Debug *ar) {
	struct snlua *l = state_snlua(L);
	if (ATOM_LOAD(&l->trap) == 0) {
		lua_sethook(L, NULL, 0, 0); // stale: the bits were served elsewhere
		return;
	}
	if (l->trap_deferred < TRAP_DEFER_MAX && in_framework(l, L, ar)) {
		/* Wait for the next instruction outside the framework. */
		l->trap_deferred++;
		if (lua_gethookcount(L) != 1)
			lua_sethook(L, trap_hook, LUA_MASKCOUNT, 1);
		return;
	}
	l->trap_deferred = 0;
	lua_sethook(L, NULL, 0, 0);
	int trap = ATOM_XCHG(&l->trap, 0);
	if (trap & TRAP_MEMORY)
		skynet_error(l->ctx, "info: snlua: memory usage size_kb=%.3f", l->mem_bytes / 1024.0);
	if (trap & TRAP_BREAK) {
		luaL_where(L, 0);
		lua_pushliteral(L, "signal 0");
		lua_concat(L, 2);
		lua_error(L);
	}
}

/* Serve pending bits on co, which this thread runs for l (see "signals"). */
static void
arm_trap(struct snlua *l, lua_State *co) {
	lua_sethook(co, trap_hook, LUA_MASKCOUNT, co == l->L ? TRAP_MAIN_COUNT : 1);
}

/* Runs on whichever thread the signal lands on; async-signal-safe. */
static void
trap_signal(int sig) {
	int saved_errno = errno;
	/* Relaxed: CURRENT and active are written by this very thread. */
	struct snlua *l = ATOM_LOAD_RELAXED(&CURRENT);
	if (l != NULL && ATOM_LOAD(&l->trap) != 0)
		arm_trap(l, ATOM_LOAD_RELAXED(&l->active));
	errno = saved_errno;
}

static void
install_trap_signal(void) {
	struct sigaction old;
	if (sigaction(TRAP_SIGNAL, NULL, &old) != 0 || old.sa_handler != SIG_DFL) {
		skynet_error(NULL, "warn: snlua: signal %d is taken, a running loop cannot be broken",
		             TRAP_SIGNAL);
		return;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = trap_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(TRAP_SIGNAL, &sa, NULL) != 0) {
		skynet_error(NULL, "warn: snlua: sigaction failed, a running loop cannot be broken");
		return;
	}
	ATOM_STORE(&TRAP_SIGNAL_READY, 1);
}

/* Make co the running thread; serve pending bits on it. */
static inline void
set_active(struct snlua *l, lua_State *co) {
	ATOM_STORE_RELAXED(&l->active, co); // read by trap_signal on this thread only
	if (ATOM_LOAD(&l->trap) != 0)       // pairs with the OR in snlua_signal
		arm_trap(l, co);
}

/*
 * Called by lua-skynet.c (registry "snlua.enter") right before a message
 * runs on the main thread L, directly as a C function: it uses no stack slot.
 */
static int
dispatch_enter(lua_State *L) {
	struct snlua *l = state_snlua(L);
	ATOM_STORE_RELAXED(&CURRENT, l);                    // read by trap_signal on this thread only
	ATOM_STORE(&l->runner, (ATOM_ULONG)pthread_self()); // pairs with the load in snlua_signal
	return 0;
}

/* Registry "snlua.leave": right after the message; drops a deferred main-thread hook. */
static int
dispatch_leave(lua_State *L) {
	struct snlua *l = state_snlua(L);
	ATOM_STORE(&l->runner, 0);
	ATOM_STORE_RELAXED(&CURRENT, NULL);
	if (lua_gethook(l->L) == trap_hook)
		lua_sethook(l->L, NULL, 0, 0); // the bits wait for the next resume
	return 0;
}

/*
 * Registry "snlua.framework": framework([f]) marks the chunk the Lua function
 * f (default: the caller) was compiled from as framework code, which a break
 * waits out (see "signals"). Returns true, or false for a C function (it has
 * no chunk). The function is anchored in the registry, so the source string
 * the hook compares by address lives as long as the state.
 */
static int
mark_framework(lua_State *L) {
	struct snlua *l = state_snlua(L);
	lua_Debug ar;
	if (lua_isnoneornil(L, 1)) {
		if (!lua_getstack(L, 1, &ar))
			return luaL_error(L, "snlua.framework: no caller");
		lua_getinfo(L, "Sf", &ar); // pushes the caller
	} else {
		luaL_checktype(L, 1, LUA_TFUNCTION);
		lua_pushvalue(L, 1);
		lua_getinfo(L, ">S", &ar); // pops the copy
		lua_pushvalue(L, 1);
	}
	if (strcmp(ar.what, "C") == 0) {
		lua_pushboolean(L, 0);
		return 1;
	}
	/* A stripped chunk reports a constant "=?" that every stripped chunk shares. */
	if (strcmp(ar.source, "=?") == 0)
		return luaL_error(L, "snlua.framework: the chunk has no source name (stripped)");
	for (int i = 0; i < l->framework_n; i++) {
		if (l->framework[i] == ar.source) {
			lua_pushboolean(L, 1);
			return 1;
		}
	}
	if (l->framework_n == TRAP_FRAMEWORK_MAX)
		return luaL_error(L, "snlua.framework: more than %d chunks", TRAP_FRAMEWORK_MAX);
	luaL_ref(L, LUA_REGISTRYINDEX); // pops the function, keeps its chunk alive
	l->framework[l->framework_n++] = ar.source;
	lua_pushboolean(L, 1);
	return 1;
}

/* ---- skynet.profile and the accounting coroutine functions ------------ */

static struct co_profile *
profile_of(lua_State *co) {
	return *(struct co_profile **)lua_getextraspace(co);
}

static void
set_profile_of(lua_State *co, struct co_profile *p) {
	*(struct co_profile **)lua_getextraspace(co) = p;
}

static bool
is_main_thread(lua_State *L, lua_State *co) {
	return co == state_snlua(L)->L;
}

/* Resume co with narg values from L's top; returns result count or -1 (error on L's top). */
static int
resume_accounted(lua_State *L, lua_State *co, int narg) {
	if (!lua_checkstack(co, narg)) {
		lua_pushliteral(L, "too many arguments to resume");
		return -1;
	}
	lua_xmove(L, co, narg);
	struct snlua *l = state_snlua(L);
	struct co_profile *p = profile_of(co);
	if (p != NULL)
		p->run_start_ns = mono_ns();
	set_active(l, co);
	int nres = 0;
	int status = lua_resume(co, L, narg, &nres);
	set_active(l, L);
	p = profile_of(co); // co may have started or stopped its own profile
	if (p != NULL && p->run_start_ns != 0) {
		p->total_ns += mono_ns() - p->run_start_ns;
		p->run_start_ns = 0;
	}
	if (status != LUA_OK && status != LUA_YIELD) {
		lua_xmove(co, L, 1);
		return -1;
	}
	if (!lua_checkstack(L, nres + 1)) {
		lua_pop(co, nres);
		lua_pushliteral(L, "too many results to resume");
		return -1;
	}
	lua_xmove(co, L, nres);
	return nres;
}

static int
co_resume(lua_State *L) {
	lua_State *co = lua_tothread(L, 1);
	luaL_argexpected(L, co != NULL, 1, "coroutine");
	int n = resume_accounted(L, co, lua_gettop(L) - 1);
	if (n < 0) {
		lua_pushboolean(L, 0);
		lua_insert(L, -2);
		return 2;
	}
	lua_pushboolean(L, 1);
	lua_insert(L, -(n + 1));
	return n + 1;
}

static int
close_thread(lua_State *co, lua_State *from) {
#if LUA_VERSION_RELEASE_NUM >= 50406
	return lua_closethread(co, from);
#else
	(void)from;
	return lua_resetthread(co);
#endif
}

static int
co_wrap_call(lua_State *L) {
	lua_State *co = lua_tothread(L, lua_upvalueindex(1));
	int n = resume_accounted(L, co, lua_gettop(L));
	if (n >= 0)
		return n;
	int status = lua_status(co);
	if (status != LUA_OK && status != LUA_YIELD) { // the coroutine died: run its tbc variables
		status = close_thread(co, L);
		lua_xmove(co, L, 1);
	}
	if (status != LUA_ERRMEM && lua_type(L, -1) == LUA_TSTRING) {
		luaL_where(L, 1);
		lua_insert(L, -2);
		lua_concat(L, 2);
	}
	return lua_error(L);
}

static int
co_wrap(lua_State *L) {
	luaL_checktype(L, 1, LUA_TFUNCTION);
	lua_State *co = lua_newthread(L);
	lua_pushvalue(L, 1);
	lua_xmove(L, co, 1);
	lua_pushcclosure(L, co_wrap_call, 1);
	return 1;
}

/* The coroutine argument 1 names (default: the running one); pushes it as the table key. */
static lua_State *
push_profile_target(lua_State *L) {
	if (lua_isnoneornil(L, 1)) {
		lua_pushthread(L);
		return L;
	}
	lua_State *co = lua_tothread(L, 1);
	luaL_argexpected(L, co != NULL, 1, "coroutine");
	lua_pushvalue(L, 1);
	return co;
}

/* Push the weak-keyed table co -> record. */
static void
push_profile_table(lua_State *L) {
	if (lua_rawgetp(L, LUA_REGISTRYINDEX, &PROFILE_TABLE_KEY) == LUA_TTABLE)
		return;
	lua_pop(L, 1);
	lua_createtable(L, 0, 4);
	lua_createtable(L, 0, 1);
	lua_pushliteral(L, "k");
	lua_setfield(L, -2, "__mode");
	lua_setmetatable(L, -2);
	lua_pushvalue(L, -1);
	lua_rawsetp(L, LUA_REGISTRYINDEX, &PROFILE_TABLE_KEY);
}

/* Is co on the current call chain (running, or resuming the running one)? */
static bool
is_on_call_chain(lua_State *L, lua_State *co) {
	lua_Debug ar;
	return co == L || (lua_status(co) == LUA_OK && lua_getstack(co, 0, &ar) != 0);
}

/* profile.start([co]): start accounting the running time of co. */
static int
profile_start(lua_State *L) {
	lua_settop(L, 1);
	push_profile_table(L);
	lua_State *co = push_profile_target(L); // table, co
	lua_pushvalue(L, -1);
	if (lua_rawget(L, -3) != LUA_TNIL)
		return luaL_error(L, "thread %p start profile more than once", (void *)co);
	lua_pop(L, 1);
	struct co_profile *p = lua_newuserdatauv(L, sizeof(*p), 0);
	p->total_ns = 0;
	p->run_start_ns = is_on_call_chain(L, co) ? mono_ns() : 0;
	lua_rawset(L, -3);
	if (!is_main_thread(L, co))
		set_profile_of(co, p);
	return 0;
}

/* profile.stop([co]): seconds co ran since profile.start(co). */
static int
profile_stop(lua_State *L) {
	lua_settop(L, 1);
	push_profile_table(L);
	lua_State *co = push_profile_target(L); // table, co
	lua_pushvalue(L, -1);
	if (lua_rawget(L, -3) != LUA_TUSERDATA)
		return luaL_error(L, "call profile.start() before profile.stop()");
	struct co_profile *p = lua_touserdata(L, -1);
	uint64_t ns = p->total_ns;
	if (p->run_start_ns != 0)
		ns += mono_ns() - p->run_start_ns;
	lua_pop(L, 1);
	lua_pushnil(L);
	lua_rawset(L, -3);
	if (!is_main_thread(L, co))
		set_profile_of(co, NULL);
	lua_pushnumber(L, (lua_Number)ns / 1e9);
	return 1;
}

static int
open_profile(lua_State *L) {
	static const luaL_Reg funcs[] = {
	    {"start", profile_start}, {"stop", profile_stop}, {"resume", co_resume},
	    {"wrap", co_wrap},        {NULL, NULL},
	};
	luaL_newlib(L, funcs);
	return 1;
}

/* ---- code cache -------------------------------------------------------- */

static uint32_t
path_hash(const char *path) {
	uint32_t h = 2166136261u; // FNV-1a
	for (const unsigned char *s = (const unsigned char *)path; *s; s++)
		h = (h ^ *s) * 16777619u;
	return h;
}

/* Caller holds CACHE.lock. */
static struct cache_entry *
cache_find(const char *path, uint32_t hash) {
	if (CACHE.slot_count == 0)
		return NULL;
	struct cache_entry *e = CACHE.slots[hash & (CACHE.slot_count - 1)];
	while (e != NULL && (e->hash != hash || strcmp(e->path, path) != 0))
		e = e->next;
	return e;
}

static void
cache_entry_release(struct cache_entry *e) {
	skynet_free(e->path);
	skynet_free(e->code);
	skynet_free(e);
}

/* Caller holds CACHE.lock. Doubles the bucket array when it is full. */
static void
cache_grow(void) {
	if (CACHE.entry_count < CACHE.slot_count)
		return;
	size_t count = CACHE.slot_count ? CACHE.slot_count * 2 : CACHE_MIN_SLOTS;
	struct cache_entry **slots = skynet_calloc(count, sizeof(*slots));
	for (size_t i = 0; i < CACHE.slot_count; i++) {
		struct cache_entry *e = CACHE.slots[i];
		while (e != NULL) {
			struct cache_entry *next = e->next;
			e->next = slots[e->hash & (count - 1)];
			slots[e->hash & (count - 1)] = e;
			e = next;
		}
	}
	skynet_free(CACHE.slots);
	CACHE.slots = slots;
	CACHE.slot_count = count;
}

/* The entry for path with a reference for the caller, or NULL. */
static struct cache_entry *
cache_grab(const char *path) {
	uint32_t hash = path_hash(path);
	mutex_lock(&CACHE.lock);
	struct cache_entry *e = cache_find(path, hash);
	if (e != NULL)
		e->refs++;
	mutex_unlock(&CACHE.lock);
	return e;
}

static void
cache_drop(struct cache_entry *e) {
	mutex_lock(&CACHE.lock);
	bool last = --e->refs == 0;
	mutex_unlock(&CACHE.lock);
	if (last)
		cache_entry_release(e);
}

/* Takes ownership of code. Keeps an entry that another state added first. */
static void
cache_insert(const char *path, char *code, size_t code_bytes) {
	struct cache_entry *e = skynet_malloc(sizeof(*e));
	e->refs = 1;
	e->hash = path_hash(path);
	e->code_bytes = code_bytes;
	e->path = skynet_strdup(path);
	e->code = code;
	mutex_lock(&CACHE.lock);
	if (cache_find(path, e->hash) != NULL) {
		mutex_unlock(&CACHE.lock);
		cache_entry_release(e);
		return;
	}
	cache_grow();
	struct cache_entry **slot = &CACHE.slots[e->hash & (CACHE.slot_count - 1)];
	e->next = *slot;
	*slot = e;
	CACHE.entry_count++;
	mutex_unlock(&CACHE.lock);
}

/* Drop every entry; states that are undumping one keep it until they finish. */
static void
cache_clear(void) {
	mutex_lock(&CACHE.lock);
	struct cache_entry *dead = NULL;
	for (size_t i = 0; i < CACHE.slot_count; i++) {
		struct cache_entry *e = CACHE.slots[i];
		while (e != NULL) {
			struct cache_entry *next = e->next;
			if (--e->refs == 0) {
				e->next = dead;
				dead = e;
			}
			e = next;
		}
		CACHE.slots[i] = NULL;
	}
	CACHE.entry_count = 0;
	mutex_unlock(&CACHE.lock);
	while (dead != NULL) {
		struct cache_entry *next = dead->next;
		cache_entry_release(dead);
		dead = next;
	}
}

static int
dump_writer(lua_State *L, const void *p, size_t sz, void *ud) {
	struct dump_buf *b = ud;
	if (b->len + sz > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + sz)
			cap *= 2;
		b->data = skynet_realloc(b->data, cap);
		b->cap = cap;
	}
	memcpy(b->data + b->len, p, sz);
	b->len += sz;
	return 0;
}

static const char *
entry_reader(lua_State *L, void *ud, size_t *size) {
	struct cache_entry **pe = ud;
	if (*pe == NULL) {
		*size = 0;
		return NULL;
	}
	*size = (*pe)->code_bytes;
	const char *code = (*pe)->code;
	*pe = NULL;
	return code;
}

static int
cache_mode(lua_State *L) {
	int mode = CACHE_MODE_ON;
	if (lua_rawgetp(L, LUA_REGISTRYINDEX, &CACHE_MODE_KEY) == LUA_TNUMBER)
		mode = (int)lua_tointeger(L, -1);
	lua_pop(L, 1);
	return mode;
}

/*
 * Slim bytecode. Loading a chunk with full debug information costs about
 * four times as much as without, and nearly all of that is the local and
 * upvalue names (one interned string each). For files whose path contains
 * one of the fragments in env `codecache_strip` (default "lualib/": the
 * framework's own libraries) the cached dump keeps line numbers but drops
 * those names, so every later service loads them about 4x faster and holds
 * less memory; tracebacks keep file:line, and only error messages about
 * the framework's own locals lose the variable name. The rewrite walks the
 * Lua 5.4 dump format (ldump.c); any surprise leaves the dump unchanged.
 */
struct slim {
	const unsigned char *p;
	const unsigned char *end;
	struct dump_buf *out;
	size_t int_bytes;
	size_t num_bytes;
	bool bad;
};

static void
slim_copy(struct slim *s, size_t n) {
	if (s->bad || (size_t)(s->end - s->p) < n) {
		s->bad = true;
		return;
	}
	dump_writer(NULL, s->p, n, s->out);
	s->p += n;
}

/* A dumpSize varint (7 bits a byte, the last byte has 0x80); copied when copy. */
static size_t
slim_size(struct slim *s, bool copy) {
	const unsigned char *start = s->p;
	size_t x = 0;
	for (;;) {
		if (s->bad || s->p >= s->end || x > (SIZE_MAX >> 7)) {
			s->bad = true;
			return 0;
		}
		unsigned char b = *s->p++;
		x = (x << 7) | (b & 0x7f);
		if (b & 0x80)
			break;
	}
	if (copy)
		dump_writer(NULL, start, s->p - start, s->out);
	return x;
}

static void
slim_string(struct slim *s, bool copy) {
	size_t n = slim_size(s, copy);
	if (n == 0)
		return; // NULL string
	if (copy) {
		slim_copy(s, n - 1);
	} else if ((size_t)(s->end - s->p) < n - 1) {
		s->bad = true;
	} else {
		s->p += n - 1;
	}
}

static void
slim_function(struct slim *s, int depth) {
	if (depth > 200) {
		s->bad = true;
		return;
	}
	slim_string(s, true); // source
	slim_size(s, true);   // linedefined
	slim_size(s, true);   // lastlinedefined
	slim_copy(s, 3);      // numparams, is_vararg, maxstacksize
	size_t n = slim_size(s, true);
	slim_copy(s, n * 4); // code
	n = slim_size(s, true);
	for (size_t i = 0; i < n && !s->bad; i++) {
		unsigned char tag = s->p < s->end ? *s->p : 0xff;
		slim_copy(s, 1);
		if (tag == 3) // integer
			slim_copy(s, s->int_bytes);
		else if (tag == 19) // float
			slim_copy(s, s->num_bytes);
		else if (tag == 4 || tag == 20) // short or long string
			slim_string(s, true);
		else if (tag != 0 && tag != 1 && tag != 17) // nil, false, true
			s->bad = true;
	}
	n = slim_size(s, true);
	slim_copy(s, n * 3); // upvalue descriptions
	n = slim_size(s, true);
	for (size_t i = 0; i < n && !s->bad; i++)
		slim_function(s, depth + 1);
	n = slim_size(s, true);
	slim_copy(s, n); // lineinfo
	n = slim_size(s, true);
	for (size_t i = 0; i < n && !s->bad; i++) {
		slim_size(s, true); // pc
		slim_size(s, true); // line
	}
	static const unsigned char none = 0x80; // a dumpSize of 0
	n = slim_size(s, false);
	for (size_t i = 0; i < n && !s->bad; i++) {
		slim_string(s, false); // local name
		slim_size(s, false);   // startpc
		slim_size(s, false);   // endpc
	}
	dump_writer(NULL, &none, 1, s->out);
	n = slim_size(s, false);
	for (size_t i = 0; i < n && !s->bad; i++)
		slim_string(s, false); // upvalue name
	dump_writer(NULL, &none, 1, s->out);
}

/* Rewrite dump into out without local and upvalue names. False: use dump as is. */
static bool
slim_dump(const struct dump_buf *dump, struct dump_buf *out) {
	// Header: signature 4, version, format, LUAC_DATA 6, three sizes, LUAC_INT, LUAC_NUM.
	if (dump->len < 15)
		return false;
	const unsigned char *d = (const unsigned char *)dump->data;
	struct slim s = {
	    .p = d,
	    .end = d + dump->len,
	    .out = out,
	    .int_bytes = d[13],
	    .num_bytes = d[14],
	    .bad = false,
	};
	slim_copy(&s, 15 + s.int_bytes + s.num_bytes);
	slim_copy(&s, 1); // upvalue count of the main closure
	slim_function(&s, 0);
	return !s.bad && s.p == s.end;
}

/* True when env codecache_strip names a fragment of path. */
static bool
want_slim(lua_State *L, const char *path) {
	lua_getfield(L, LUA_REGISTRYINDEX, "skynet_context");
	struct skynet_context *ctx = lua_touserdata(L, -1);
	lua_pop(L, 1);
	const char *list = ctx ? skynet_command(ctx, "GETENV", "codecache_strip") : NULL;
	if (list == NULL)
		list = "lualib/";
	while (*list) {
		size_t len = strcspn(list, ";");
		if (len > 0 && len < 256) {
			char frag[256];
			memcpy(frag, list, len);
			frag[len] = '\0';
			if (strstr(path, frag))
				return true;
		}
		list += len;
		if (*list == ';')
			list++;
	}
	return false;
}

/* Cache the dump of the chunk on top of L, slimmed when configured and sound. */
static void
cache_chunk(lua_State *L, const char *path) {
	struct dump_buf b = {NULL, 0, 0};
	if (lua_dump(L, dump_writer, &b, 0) != 0 || b.len == 0) {
		skynet_free(b.data);
		return;
	}
	if (want_slim(L, path)) {
		struct dump_buf slim = {NULL, 0, 0};
		bool ok = slim_dump(&b, &slim);
		if (ok) {
			// Prove it loads before trusting it.
			struct cache_entry probe = {.code = slim.data, .code_bytes = slim.len};
			struct cache_entry *reading = &probe;
			ok = lua_load(L, entry_reader, &reading, path, "b") == LUA_OK;
			lua_pop(L, 1);
		}
		if (ok) {
			skynet_free(b.data);
			b = slim;
		} else {
			skynet_free(slim.data);
		}
	}
	cache_insert(path, b.data, b.len);
}

/*
 * luaL_loadfilex through the process-wide cache: pushes the chunk (or the
 * error message) and returns the load status. A caller that refuses binary
 * chunks (mode without 'b') bypasses the cache.
 */
static int
codecache_load(lua_State *L, const char *path, const char *mode) {
	int cmode = cache_mode(L);
	if (cmode == CACHE_MODE_OFF || (mode != NULL && strchr(mode, 'b') == NULL))
		return luaL_loadfilex(L, path, mode);
	struct cache_entry *e = cache_grab(path);
	if (e != NULL) {
		struct cache_entry *reading = e;
		lua_pushfstring(L, "@%s", path);
		int status = lua_load(L, entry_reader, &reading, lua_tostring(L, -1), "b");
		lua_remove(L, -2);
		cache_drop(e);
		return status;
	}
	int status = luaL_loadfilex(L, path, mode);
	if (status != LUA_OK || cmode == CACHE_MODE_EXIST)
		return status;
	cache_chunk(L, path);
	return LUA_OK;
}

/* codecache.loadfile(path [, mode [, env]]): like loadfile, through the cache. */
static int
cache_loadfile(lua_State *L) {
	const char *path = luaL_checkstring(L, 1);
	const char *mode = luaL_optstring(L, 2, NULL);
	bool has_env = !lua_isnone(L, 3);
	if (codecache_load(L, path, mode) != LUA_OK) {
		luaL_pushfail(L);
		lua_insert(L, -2);
		return 2;
	}
	if (has_env) {
		lua_pushvalue(L, 3);
		if (lua_setupvalue(L, -2, 1) == NULL)
			lua_pop(L, 1);
	}
	return 1;
}

static int
cache_clear_lua(lua_State *L) {
	cache_clear();
	return 0;
}

/* codecache.mode([m]): the previous mode; m is "ON", "EXIST" or "OFF" (this state only). */
static int
cache_mode_lua(lua_State *L) {
	static const char *const names[] = {"ON", "EXIST", "OFF", NULL};
	lua_pushstring(L, names[cache_mode(L)]);
	if (!lua_isnoneornil(L, 1)) {
		int mode = luaL_checkoption(L, 1, NULL, names);
		lua_pushinteger(L, mode);
		lua_rawsetp(L, LUA_REGISTRYINDEX, &CACHE_MODE_KEY);
	}
	return 1;
}

static int
open_codecache(lua_State *L) {
	static const luaL_Reg funcs[] = {
	    {"loadfile", cache_loadfile},
	    {"clear", cache_clear_lua},
	    {"mode", cache_mode_lua},
	    {NULL, NULL},
	};
	luaL_newlib(L, funcs);
	return 1;
}

/* package.searchers[2] replacement: finds name along package.path, loads through the cache. */
static int
search_lua_cached(lua_State *L) {
	const char *name = luaL_checkstring(L, 1);
	lua_getfield(L, lua_upvalueindex(1), "searchpath");
	lua_pushvalue(L, 1);
	lua_getfield(L, lua_upvalueindex(1), "path");
	if (!lua_isstring(L, -1))
		return luaL_error(L, "'package.path' must be a string");
	lua_call(L, 2, 2);
	if (lua_isnil(L, -2))
		return 1; // the "no file ..." list
	lua_pop(L, 1);
	const char *path = lua_tostring(L, -1);
	if (codecache_load(L, path, NULL) != LUA_OK)
		return luaL_error(L, "error loading module '%s' from file '%s':\n\t%s", name, path,
		                  lua_tostring(L, -1));
	lua_insert(L, -2); // loader, path
	return 2;
}

/* ---- start-up ---------------------------------------------------------- */

/* Registry "snlua.exit_reserve"(): the service is exiting (see "memory"). */
static int
exit_reserve(lua_State *L) {
	state_snlua(L)->mem_reserve_bytes = SNLUA_EXIT_RESERVE;
	return 0;
}

static void
preload(lua_State *L, const char *name, lua_CFunction open) {
	luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
	lua_pushcfunction(L, open);
	lua_setfield(L, -2, name);
	lua_pop(L, 1);
}

static void
install_coroutine(lua_State *L) {
	lua_getglobal(L, "coroutine");
	lua_pushcfunction(L, co_resume);
	lua_setfield(L, -2, "resume");
	lua_pushcfunction(L, co_wrap);
	lua_setfield(L, -2, "wrap");
	lua_pop(L, 1);
}

static void
install_searcher(lua_State *L) {
	lua_getglobal(L, "package");
	lua_getfield(L, -1, "searchers");
	lua_pushvalue(L, -2);
	lua_pushcclosure(L, search_lua_cached, 1);
	lua_rawseti(L, -2, 2);
	lua_pop(L, 2);
}

/* Global name = env key, or def (NULL: leave the global unset). */
static void
set_env_global(lua_State *L, struct snlua *l, const char *name, const char *key, const char *def) {
	const char *value = skynet_command(l->ctx, "GETENV", key);
	if (value == NULL)
		value = def;
	if (value == NULL)
		return;
	lua_pushstring(L, value);
	lua_setglobal(L, name);
}

static int
traceback(lua_State *L) {
	const char *msg = lua_tostring(L, 1);
	if (msg == NULL && !lua_isnoneornil(L, 1))
		msg = luaL_tolstring(L, 1, NULL);
	luaL_traceback(L, L, msg, 1);
	return 1;
}

/* Protected body of the first message: build the VM and run the loader. */
static int
start_lua(lua_State *L) {
	struct snlua *l = lua_touserdata(L, 1);
	const char *args = lua_tostring(L, 2);
	luaL_openlibs(L);
	lua_pushlightuserdata(L, l->ctx);
	lua_setfield(L, LUA_REGISTRYINDEX, "skynet_context");
	lua_pushcfunction(L, dispatch_enter);
	lua_setfield(L, LUA_REGISTRYINDEX, "snlua.enter");
	lua_pushcfunction(L, dispatch_leave);
	lua_setfield(L, LUA_REGISTRYINDEX, "snlua.leave");
	lua_pushcfunction(L, mark_framework);
	lua_setfield(L, LUA_REGISTRYINDEX, "snlua.framework");
	lua_pushcfunction(L, exit_reserve);
	lua_setfield(L, LUA_REGISTRYINDEX, "snlua.exit_reserve");
	preload(L, "skynet.profile", open_profile);
	preload(L, "skynet.codecache", open_codecache);
	install_coroutine(L);
	install_searcher(L);
	set_env_global(L, l, "LUA_PATH", "lua_path", "./lualib/?.lua;./lualib/?/init.lua");
	set_env_global(L, l, "LUA_CPATH", "lua_cpath", "./luaclib/?.so");
	set_env_global(L, l, "LUA_SERVICE", "luaservice", "./service/?.lua");
	set_env_global(L, l, "LUA_PRELOAD", "preload", NULL);
	const char *loader = skynet_command(l->ctx, "GETENV", "lualoader");
	lua_pushstring(L, loader ? loader : "./lualib/loader.lua");
	loader = lua_tostring(L, -1);
	lua_pushcfunction(L, traceback);
	if (codecache_load(L, loader, NULL) != LUA_OK)
		return luaL_error(L, "can't load loader path=%s err=%s", loader, lua_tostring(L, -1));
	lua_pushstring(L, args);
	if (lua_pcall(L, 1, 0, -3) != LUA_OK)
		return luaL_error(L, "loader failed args=%s err=%s", args, lua_tostring(L, -1));
	if (lua_getfield(L, LUA_REGISTRYINDEX, "memlimit") == LUA_TNUMBER) {
		lua_Number limit = lua_tonumber(L, -1);
		if (limit >= 1) {
			l->mem_limit_bytes = (size_t)limit;
			skynet_error(l->ctx, "info: snlua: memory limit size_mb=%.2f", limit / SNLUA_MB);
		}
	}
	return 0;
}

static int
launch_cb(struct skynet_context *ctx, void *ud, int type, int session, uint32_t source,
          const void *msg, size_t sz) {
	struct snlua *l = ud;
	lua_State *L = l->L;
	skynet_callback(ctx, NULL, NULL); // one shot: the loader may install the Lua callback
	lua_gc(L, LUA_GCSTOP);
	lua_pushcfunction(L, start_lua);
	lua_pushlightuserdata(L, l);
	lua_pushlstring(L, msg, sz);
	dispatch_enter(L);
	int status = lua_pcall(L, 2, 0, 0);
	dispatch_leave(L);
	if (status != LUA_OK) {
		const char *err = lua_tostring(L, -1);
		skynet_error(ctx, "error: snlua: %s", err ? err : "(no message)");
	}
	lua_settop(L, 0);
	lua_gc(L, LUA_GCRESTART);
	if (status != LUA_OK) {
		if (skynet_command(ctx, "QUERY", ".launcher") == NULL) {
			// Started before the launcher: the bootstrap, or the launcher itself.
			skynet_error(ctx, "error: snlua: the node cannot start without this service; "
			                  "stopping with exit status 1");
			skynet_command(ctx, "ABORT", "1");
			return 0;
		}
		skynet_sendname(ctx, 0, ".launcher", PTYPE_TEXT, 0, "ERROR", 5);
		skynet_command(ctx, "EXIT", NULL);
	}
	return 0;
}

/* ---- module interface -------------------------------------------------- */

struct snlua *
snlua_create(void) {
	struct snlua *l = skynet_calloc(1, sizeof(*l));
	l->mem_warn_bytes = SNLUA_WARN_BYTES;
	if (pthread_once(&TRAP_SIGNAL_ONCE, install_trap_signal) != 0)
		abort();
	l->L = lua_newstate(state_alloc, l);
	lua_gc(l->L, LUA_GCGEN, 0, 0); // switching runs a full cycle: do it while the heap is empty
	set_profile_of(l->L, NULL);    // new threads copy the main thread's extra space
	lua_atpanic(l->L, state_panic);
	lua_setwarnf(l->L, state_warn, l);
	ATOM_INIT(&l->active, l->L);
	return l;
}

int
snlua_init(struct snlua *l, struct skynet_context *ctx, const char *args) {
	l->ctx = ctx;
	const char *self = skynet_command(ctx, "REG", NULL);
	if (self == NULL || self[0] != ':')
		return SKYNET_EINVAL;
	uint32_t handle = (uint32_t)strtoul(self + 1, NULL, 16);
	size_t sz = args ? strlen(args) : 0;
	char *msg = skynet_malloc(sz + 1);
	memcpy(msg, args ? args : "", sz + 1);
	skynet_callback(ctx, l, launch_cb);
	/* The queue is not scheduled before init returns, so this is the first message. */
	int r = skynet_send(ctx, 0, handle, PTYPE_TEXT | PTYPE_TAG_DONTCOPY, 0, msg, sz);
	return r < 0 ? r : 0;
}

void
snlua_release(struct snlua *l) {
	if (l == NULL)
		return;
	lua_close(l->L);
	pool_destroy(&l->pool); // after lua_close: it frees into the pool
	skynet_free(l);
}

void
snlua_signal(struct snlua *l, int signal) {
	int bit = signal == 0 ? TRAP_BREAK : signal == 1 ? TRAP_MEMORY : 0;
	if (bit == 0) {
		skynet_error(l->ctx, "warn: snlua: unknown signal signal=%d", signal);
		return;
	}
	ATOM_FOR(&l->trap, bit);
	ATOM_ULONG runner = ATOM_LOAD(&l->runner); // pairs with the store in dispatch_enter
	if (runner == 0 || !ATOM_LOAD(&TRAP_SIGNAL_READY))
		return; // served at the next resume
	int err = pthread_kill((pthread_t)runner, TRAP_SIGNAL);
	if (err != 0)
		skynet_error(l->ctx, "warn: snlua: pthread_kill failed err=%d", err);
}
