/*
 * snlua's signal trap: breaks a service's endless loop (signal 0) and logs
 * its memory (signal 1) on the thread that runs the service.
 *
 * Signals. snlua_trap_post runs on a foreign thread, which must never touch
 * a lua_State another thread is running (lua_sethook walks the call chain).
 * So it only ORs a TRAP_* bit into pending (atomic) and, when that raised
 * pending from none and a worker runs the service right now, interrupts
 * that worker with TRAP_SIGNAL (pthread_kill). A post that finds bits
 * pending only merges into them: whoever armed or will arm the hook for
 * those serves it too. So a worker gets at most one interrupt per serve,
 * however fast signals come: TRAP_SIGNAL is a real-time signal, which
 * queues (one handler run each, all run before the thread resumes), and
 * one interrupt per post let a fast poster keep a worker in its handler
 * with no request answered. runner holds that worker's pthread_t, 0
 * between messages: lua-skynet.c calls snlua_trap_enter/snlua_trap_leave
 * (registry "snlua.enter"/"snlua.leave") around every message and launch_cb
 * does the same for the first. The handler runs on the interrupted worker
 * itself: if the thread-local CURRENT (the instance this worker runs) has
 * pending bits, it installs trap_hook on active, the coroutine this worker
 * runs for it (the same thread, at an arbitrary point: the use Lua's own
 * interpreter makes of lua_sethook from a signal handler). trap_hook takes
 * the bits with an exchange, removes itself and serves them: signal 0
 * raises "signal 0" (this breaks an endless loop), signal 1 logs the memory
 * in use. A hook that finds no bits (they were served on another coroutine)
 * just removes itself. A signal that lands on a worker running another
 * service (the service moved on) or no Lua at all finds no bits or no
 * instance and does nothing; the bits then wait for the resume path, which
 * loads pending once per resume (no lock) and installs the hook on the
 * coroutine it resumes, and snlua_trap_enter arms the main thread (after
 * TRAP_MAIN_COUNT) when a message starts, so a request to an idle service
 * is served at its next message. Since later posts send no interrupt, no
 * path drops the hook while bits are pending except snlua_trap_leave (the
 * next message arms again): a hook that finds no bits re-checks after
 * removing itself, in case the handler armed it meanwhile. Either the
 * worker's store of runner comes first in the seq-cst order and the
 * signaller interrupts it, or the signaller's OR comes first and the
 * worker's next message or resume sees the bit. No hook stays installed
 * while nothing is pending, so the VM runs at full speed (any count hook
 * makes it trace every instruction).
 * The main thread (skynet.lua's dispatcher) is only hooked after
 * TRAP_MAIN_COUNT instructions: it runs framework code, where the hook
 * would only defer (below), and the next resume serves the bits anyway; a
 * loop on the main thread (in an unpack function, say) still breaks.
 * snlua_trap_leave drops such a hook.
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
 * another coroutine or a later message. deferred counts those instructions
 * (the running thread alone touches it; reset when bits are served): after
 * TRAP_DEFER_MAX the hook serves the bits wherever it is, so a loop in
 * framework code still breaks (about 50 ms of hooked instructions later).
 * TRAP_SIGNAL is installed once per process with SA_RESTART; the workers
 * never block it. The caller of snlua_signal (which posts) holds a reference
 * to the context, so the node (and every worker) outlives the pthread_kill.
 * Trade-off: ThreadSanitizer delivers a signal only when the thread enters
 * an intercepted libc call or an atomic operation, so under TSan a pure Lua
 * loop (liblua is not instrumented) is never interrupted; the tests break a
 * loop that calls into C there, and the pure loop only in other builds.
 *
 * Samples. The profiler (sampler.c, skynet-src/skynet_profiler.c) shares
 * this hook: its signal handler (snlua_trap_sample, on the worker, like
 * trap_signal) ORs TRAP_SAMPLE into pending and arms the hook on active
 * with count 1 and LUA_MASKRET as well, so the sample lands at the next
 * instruction or at the return of the C function running now (then the
 * walk shows that C function). The hook takes the bit with an AND and
 * records the stack before it looks at the other bits; the resume path
 * arms the coroutine it resumes while a sample is due. snlua_trap_leave
 * takes a bit still pending at the end of the message and records it as
 * time outside Lua. A post that finds only TRAP_SAMPLE pending still
 * interrupts (the sample does not serve the other bits when the message
 * ends first).
 *
 * Data: struct snlua_trap in each instance (pending, runner, active and
 * interrupts, the count of pthread_kill sent, registry "snlua.interrupts",
 * are atomics; deferred and the framework list belong to the running
 * thread),
 * plus the thread-local CURRENT and the process-wide TRAP_SIGNAL_READY.
 * CURRENT and active also tell the crash tombstone (tombstone.c, through
 * snlua_trap_running) which state the crashing thread was running.
 * Locking: none; the orderings are the ones named above. Units: counts of
 * Lua VM instructions (TRAP_MAIN_COUNT, TRAP_DEFER_MAX).
 */
#include "trap.h"
#include "instance.h"
#include "sampler.h"

#include "skynet.h"

#include <lauxlib.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define TRAP_BREAK         1 // signal 0: raise "signal 0"
#define TRAP_MEMORY        2 // signal 1: log memory usage
#define TRAP_SAMPLE        4 // the profiler asks for a stack sample (sampler.c)
#define TRAP_SIGNAL        (SIGRTMIN + 3)
#define TRAP_MAIN_COUNT    1000000 // instructions before a trap is served on the main thread
#define TRAP_DEFER_MAX     1000000 // framework instructions a break may wait out
#define TRAP_FRAMEWORK_MAX SNLUA_TRAP_FRAMEWORK_MAX

_Static_assert(sizeof(pthread_t) <= sizeof(ATOM_ULONG), "runner holds a pthread_t");

/*
 * The instance this worker runs now (NULL between messages), for the signal
 * handler. Initial-exec TLS: reading it in a handler never allocates.
 */
static __thread ATOM_POINTER CURRENT __attribute__((tls_model("initial-exec")));
static ATOM_INT TRAP_SIGNAL_READY; // TRAP_SIGNAL's handler is installed
static pthread_once_t TRAP_SIGNAL_ONCE = PTHREAD_ONCE_INIT;

/* Whether the function the hook fired in belongs to a marked framework chunk. */
static bool
in_framework(struct snlua_trap *t, lua_State *L, lua_Debug *ar) {
	if (t->framework_n == 0 || !lua_getinfo(L, "S", ar))
		return false;
	for (int i = 0; i < t->framework_n; i++) {
		if (ar->source == t->framework[i])
			return true;
	}
	return false;
}

static void trap_hook(lua_State *L, lua_Debug *ar);

/* Hook L again (count 1) for the bits pending now, if any; the thread running L only. */
static void
rearm_if_pending(struct snlua *l, lua_State *L) {
	int bits = ATOM_LOAD(&l->trap.pending);
	if (bits & TRAP_SAMPLE)
		lua_sethook(L, trap_hook, LUA_MASKCOUNT | LUA_MASKRET, 1);
	else if (bits != 0)
		lua_sethook(L, trap_hook, LUA_MASKCOUNT, 1);
}

static void
trap_hook(lua_State *L, lua_Debug *ar) {
	struct snlua *l = snlua_of(L);
	struct snlua_trap *t = &l->trap;
	if ((ATOM_LOAD(&t->pending) & TRAP_SAMPLE) &&
	    (ATOM_FAND(&t->pending, ~TRAP_SAMPLE) & TRAP_SAMPLE))
		snlua_sampler_take(l, L);
	if (ar->event != LUA_HOOKCOUNT || ATOM_LOAD(&t->pending) == 0) {
		/* Stale (the bits were served elsewhere), or a sample taken at a return. */
		lua_sethook(L, NULL, 0, 0);
		/* A signal that armed the hook while it was being removed is kept. */
		rearm_if_pending(l, L);
		return;
	}
	if (t->deferred < TRAP_DEFER_MAX && in_framework(t, L, ar)) {
		/* Wait for the next instruction outside the framework. */
		t->deferred++;
		if (lua_gethookcount(L) != 1)
			lua_sethook(L, trap_hook, LUA_MASKCOUNT, 1);
		return;
	}
	t->deferred = 0;
	lua_sethook(L, NULL, 0, 0);
	int trap = ATOM_FAND(&t->pending, TRAP_SAMPLE); // take every bit but a sample's
	rearm_if_pending(l, L); // a sample asked for meanwhile: the next instruction takes it
	if (trap & TRAP_MEMORY)
		skynet_error(l->ctx, "info: snlua: memory usage size_kb=%.3f", l->mem.bytes / 1024.0);
	if (trap & TRAP_BREAK) {
		luaL_where(L, 0);
		lua_pushliteral(L, "signal 0");
		lua_concat(L, 2);
		lua_error(L);
	}
}

/* Serve pending bits on co, which this thread runs for l (see the top of this file). */
static void
arm_trap(struct snlua *l, lua_State *co) {
	if (ATOM_LOAD(&l->trap.pending) & TRAP_SAMPLE) // a sample: at once, or at a C return
		lua_sethook(co, trap_hook, LUA_MASKCOUNT | LUA_MASKRET, 1);
	else
		lua_sethook(co, trap_hook, LUA_MASKCOUNT, co == l->L ? TRAP_MAIN_COUNT : 1);
}

/* Runs on whichever thread the signal lands on; async-signal-safe. */
static void
trap_signal(int sig) {
	int saved_errno = errno;
	/* Relaxed: CURRENT and active are written by this very thread. */
	struct snlua *l = ATOM_LOAD_RELAXED(&CURRENT);
	if (l != NULL && ATOM_LOAD(&l->trap.pending) != 0)
		arm_trap(l, ATOM_LOAD_RELAXED(&l->trap.active));
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

void
snlua_trap_init(struct snlua *l) {
	if (pthread_once(&TRAP_SIGNAL_ONCE, install_trap_signal) != 0)
		abort();
	ATOM_INIT(&l->trap.active, l->L);
	ATOM_INIT(&l->trap.interrupts, 0);
}

struct snlua *
snlua_trap_running(lua_State **active) {
	struct snlua *l = ATOM_LOAD_RELAXED(&CURRENT); // stored by this very thread
	if (l != NULL)
		*active = ATOM_LOAD_RELAXED(&l->trap.active); // likewise: the thread running l
	return l;
}

/* Registry "snlua.interrupts": how many times a worker was interrupted for this service. */
int
snlua_trap_interrupts(lua_State *L) {
	lua_pushinteger(L, (lua_Integer)ATOM_LOAD(&snlua_of(L)->trap.interrupts));
	return 1;
}

/* Make co the running thread; serve pending bits on it. */
void
snlua_trap_set_active(struct snlua *l, lua_State *co) {
	ATOM_STORE_RELAXED(&l->trap.active, co); // read by trap_signal on this thread only
	if (ATOM_LOAD(&l->trap.pending) != 0)    // pairs with the OR in snlua_trap_post
		arm_trap(l, co);
}

/*
 * Called by lua-skynet.c (registry "snlua.enter") right
 * before a message runs on the main thread L, directly as a C function: it
 * uses no stack slot.
 */
int
snlua_trap_enter(lua_State *L) {
	struct snlua *l = snlua_of(L);
	ATOM_STORE_RELAXED(&CURRENT, l); // read by trap_signal on this thread only
	ATOM_STORE(&l->trap.runner,
	           (ATOM_ULONG)pthread_self()); // pairs with the load in snlua_trap_post
	if (ATOM_LOAD(&l->trap.pending) != 0)
		arm_trap(l, l->L); // bits posted while idle: no interrupt comes for them
	return 0;
}

/* Registry "snlua.leave": right after the message; drops a deferred main-thread hook. */
int
snlua_trap_leave(lua_State *L) {
	struct snlua *l = snlua_of(L);
	ATOM_STORE(&l->trap.runner, 0);
	ATOM_STORE_RELAXED(&CURRENT, NULL); // from here on the profiler's signal asks nothing of l
	if ((ATOM_LOAD(&l->trap.pending) & TRAP_SAMPLE) &&
	    (ATOM_FAND(&l->trap.pending, ~TRAP_SAMPLE) & TRAP_SAMPLE))
		snlua_sampler_outside(l); // asked for after the last Lua instruction of the message
	if (lua_gethook(l->L) == trap_hook)
		lua_sethook(l->L, NULL, 0, 0); // the bits wait for the next resume
	return 0;
}

/*
 * Registry "snlua.framework": framework([f]) marks the chunk the Lua function
 * f (default: the caller) was compiled from as framework code, which a break
 * waits out (see the top of this file). Returns true, or false for a C function (it has
 * no chunk). The function is anchored in the registry, so the source string
 * the hook compares by address lives as long as the state.
 */
int
snlua_trap_mark_framework(lua_State *L) {
	struct snlua_trap *t = &snlua_of(L)->trap;
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
	for (int i = 0; i < t->framework_n; i++) {
		if (t->framework[i] == ar.source) {
			lua_pushboolean(L, 1);
			return 1;
		}
	}
	if (t->framework_n == TRAP_FRAMEWORK_MAX)
		return luaL_error(L, "snlua.framework: more than %d chunks", TRAP_FRAMEWORK_MAX);
	luaL_ref(L, LUA_REGISTRYINDEX); // pops the function, keeps its chunk alive
	t->framework[t->framework_n++] = ar.source;
	lua_pushboolean(L, 1);
	return 1;
}

/*
 * The profiler's sampler (skynet_profiler_set_sampler), called inside its
 * signal handler on a worker: if this worker runs a Lua service the
 * profile wants, mark a sample due and hook the coroutine it runs now.
 */
void
snlua_trap_sample(void) {
	/* Relaxed: CURRENT and active are written by this very thread. */
	struct snlua *l = ATOM_LOAD_RELAXED(&CURRENT);
	if (l == NULL)
		return;
	uint32_t ticket = skynet_profiler_wants(l->sampler.handle);
	if (ticket == 0)
		return;
	ATOM_STORE_RELAXED(&l->sampler.ticket, ticket); // read on this thread by the sample
	ATOM_FOR(&l->trap.pending, TRAP_SAMPLE);
	arm_trap(l, ATOM_LOAD_RELAXED(&l->trap.active));
}

void
snlua_trap_post(struct snlua *l, int signal) {
	int bit = signal == 0 ? TRAP_BREAK : signal == 1 ? TRAP_MEMORY : 0;
	if (bit == 0) {
		skynet_error(l->ctx, "warn: snlua: unknown signal signal=%d", signal);
		return;
	}
	if ((ATOM_FOR(&l->trap.pending, bit) & ~TRAP_SAMPLE) != 0)
		return; // merged into bits already pending: those are interrupted or armed already
	ATOM_ULONG runner = ATOM_LOAD(&l->trap.runner); // pairs with the store in snlua_trap_enter
	if (runner == 0 || !ATOM_LOAD(&TRAP_SIGNAL_READY))
		return; // served at the next message or resume
	ATOM_FINC(&l->trap.interrupts);
	int err = pthread_kill((pthread_t)runner, TRAP_SIGNAL);
	if (err != 0)
		skynet_error(l->ctx, "warn: snlua: pthread_kill failed err=%d", err);
}
