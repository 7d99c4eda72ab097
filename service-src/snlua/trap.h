/*
 * snlua's signal trap: signal 0 breaks a service's endless loop, signal 1
 * logs its memory, both served on the thread that runs the service. See
 * trap.c for the design.
 */
#ifndef SKYNET_SNLUA_TRAP_H
#define SKYNET_SNLUA_TRAP_H

#include "atomic.h"

#include <lua.h>

#pragma GCC visibility push(hidden)

#define SNLUA_TRAP_FRAMEWORK_MAX 16 // chunks marked as framework code per state

struct snlua;

/*
 * The trap state of one service, embedded in struct snlua; only trap.c
 * touches the fields. pending, runner and active are read by other threads
 * (or a signal handler); the rest belongs to the thread running the service.
 */
struct snlua_trap {
	ATOM_INT pending;      // TRAP_* bits not yet served
	ATOM_ULONG runner;     // pthread_t of the worker running the service, 0: none
	ATOM_POINTER active;   // lua_State running now (main between resumes)
	ATOM_ULONG interrupts; // TRAP_SIGNALs sent to workers for this service
	int deferred;          // framework instructions a pending trap has waited out
	int framework_n;
	const char *framework[SNLUA_TRAP_FRAMEWORK_MAX]; // source strings of the framework's chunks
};

/*
 * Set up l's trap once l->L exists, and install the process's signal
 * handler the first time (a taken signal is logged: loops then cannot be
 * broken while they run). Thread-safe.
 */
void snlua_trap_init(struct snlua *l);

/*
 * Make co the coroutine the service runs now (the resume path calls it
 * around every resume, with the resumer afterwards) and serve pending bits
 * on it. The thread running the service only.
 */
void snlua_trap_set_active(struct snlua *l, lua_State *co);

/*
 * Registry "snlua.enter" and "snlua.leave": lua-skynet.c calls them right
 * before and after each message runs on the main thread, as C functions that
 * use no stack slot. They tell snlua_trap_post which worker to interrupt.
 */
int snlua_trap_enter(lua_State *L);
int snlua_trap_leave(lua_State *L);

/*
 * Registry "snlua.framework"([f]): marks the chunk of the Lua function f
 * (default: the caller) as framework code, which a break waits out. Returns
 * true, or false for a C function. Raises an error for a stripped chunk or
 * when SNLUA_TRAP_FRAMEWORK_MAX chunks are marked.
 */
int snlua_trap_mark_framework(lua_State *L);

/*
 * Registry "snlua.interrupts"(): how many times a worker was interrupted
 * (sent the trap's signal) for this service, an integer. For tests.
 */
int snlua_trap_interrupts(lua_State *L);

/*
 * The instance this thread runs now and the coroutine it runs for it
 * (*active), or NULL between messages and on a thread that runs no snlua
 * service. Two thread-local and relaxed loads: async-signal-safe, for the
 * crash tombstone's stack writer (tombstone.c) on the crashing thread.
 */
struct snlua *snlua_trap_running(lua_State **active);

/*
 * The sampler snlua registers with the profiler (skynet_profiler_set_sampler):
 * inside the profiler's signal handler, marks a stack sample due on the
 * service this worker runs, if the profile wants it, and hooks the coroutine
 * it runs; the hook takes the sample (sampler.c). Async-signal-safe.
 */
void snlua_trap_sample(void);

/*
 * Ask l to serve signal (0: break the running code, 1: log the memory in
 * use; any other value is logged and ignored). Any thread; the caller holds
 * a reference to l's context. Returns at once: the service serves it.
 */
void snlua_trap_post(struct snlua *l, int signal);

#pragma GCC visibility pop

#endif
