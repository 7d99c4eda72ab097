/*
 * INTERNAL to skynet.kernel (the .c files of lualib-src/kernel): nothing outside this
 * folder includes it. The record of a state's kernel, the slots of its user
 * values, and the functions the parts call in one another.
 *
 * The parts, one file each (each opens with the state it owns and the state
 * it only reads):
 *   state.c      access to the user values (no state of its own)
 *   session.c    sessions; send, call, ret, genid, self, address
 *   proto.c      the protocol table; register_protocol, dispatch, built-ins
 *   coroutine.c  the coroutine pool, resume, a coroutine's end; fork
 *   dispatch.c   dispatch_message: a message to a coroutine
 *   run.c        after a resume: the wakeup, error and fork queues
 *   timer.c      timeout, sleep, wait, wakeup; the pending sessions (skynet.task)
 *   start.c      start, init_service
 *   kill.c       killthread, the kernel's part of exit, the failures of the last will
 *   trace.c      the spans of traced coroutines, the trace payload, skynet.error
 *   lazy.c       the skynet table and skynet.private, filled on first use
 *   init.c       luaopen_skynet_kernel, the last will
 * docs/internals.md tells the message path and a coroutine's states.
 */
#ifndef SKYNET_KERNEL_H
#define SKYNET_KERNEL_H

#include "skynet.h"

#include <lauxlib.h>
#include <lua.h>

#include <stdbool.h>
#include <stdint.h>

#define KERNEL_SESSION_MAX    0x7fffffff
#define KERNEL_TIMER_REBUILD  1024 // pending timeouts before the table is ever rebuilt
#define KERNEL_PRECISE_MAX_US 1000000000000000LL // timeout_us cap (about 31 years)
#define KERNEL_SESSION_TABLES 3  // UV_WAITING, UV_TIMERS, UV_WATCHING: keyed by session
#define KERNEL_SESSION_SMALL  64 // entries below which a session table is left as Lua made it

/* The host's accounting resume: same contract as lua_resume plus moving values.
 * resume(L, co, narg) moves narg values from L to co, resumes co and moves its
 * results to L; returns their count, or -1 with the error object on L. */
struct kernel_resume {
	int (*resume)(lua_State *L, lua_State *co, int narg);
};

/* The user values of the kernel userdata; UV_WAITING..UV_FQ_ARGS are the state
 * tables (made on first use, see kernel_tab), the rest single values. */
enum kernel_uv {
	UV_WAITING = 1,
	UV_TIMERS,
	UV_WATCHING,
	UV_REQ_SESSION,
	UV_REQ_SOURCE,
	UV_SLEEP_SESSION,
	UV_UNRESPONSE,
	UV_FIRED,
	UV_TRACE_SOURCE,
	UV_TIMEOUT_TB,
	UV_POOL,
	UV_PROTO,
	UV_WQ,
	UV_WQ_TOKEN,
	UV_WOKEN,
	UV_EQ,
	UV_FQ,
	UV_FQ_ARGS,
	UV_S,
	UV_SKYNET,
	UV_REQUIRE, // the skynet.require module
	UV_RUNNING,
	UV_ERRORS,
	UV_UNKNOWN_REQUEST,
	UV_UNKNOWN_RESPONSE,
	UV_FRAMEWORK,   // snlua's framework marker, or nil
	UV_GRANTED,     // snlua's granted, or nil
	UV_INIT_THREAD, // the start coroutine while it runs (S.init_thread())
	UV_REPLIES,     // error replies of this dispatch, sent after its errors are logged
	UV_COUNT = UV_REPLIES,
};

/* One per state: a full userdata anchored in the registry under KERNEL_KEY. */
struct kernel {
	struct skynet_context *ctx;       // borrowed: the service's, outlives the state
	const struct kernel_resume *host; // borrowed from snlua; NULL: plain lua_resume
	lua_State *running;               // the coroutine resumed last (anchored in UV_RUNNING)
	uint32_t self;                    // 0 until skynet.self asked
	int last_session;
	int timer_n, timer_peak;    // pending timeouts, most since the last rebuild
	int traced_n;               // coroutines with a trace record (trace.c keeps the count)
	int trace_pending;          // UV_TRACE_SOURCE entries: payloads announced, not yet taken
	struct kernel_trace *trace; // owned: the traced coroutines (trace.c), or NULL
	const struct skynet_trace *trace_in;    // the trailer of the message dispatched now, or NULL
	int wq_h, wq_t, eq_h, eq_t, fq_h, fq_t; // heads and tails of the wakeup, error, fork queues
	/* Per session table (UV_WAITING + i): entries set since it was last made
	 * roomy, and how many it may take before (kernel_sessions_tidy). */
	int sess_set[KERNEL_SESSION_TABLES], sess_room[KERNEL_SESSION_TABLES];
	/* Bit-fields, one int for these eight, so that the record stays small (the
	 * memory of an idle service). fired_n counts fired timeouts blocked, each
	 * with a coroutine (a KiB at least): 24 bits are far more than a heap holds. */
	signed int fired_n : 25;
	bool wrapped : 1;
	bool tracing : 1; // a protocol may force tracing (skynet.traceproto, skynet.trace)
	bool trace_timeouts : 1;
	bool unpacking : 1;   // a request is being unpacked (an error then fails it)
	bool exited : 1;      // skynet.exit ran (S.exit_state): the last will has nothing to do
	bool trace_read : 1;  // trace_lines was read (trace.c)
	bool trace_quiet : 1; // trace_lines = false: no per-hop <TRACE> lines
};

/* The parts call one another directly: their names stay inside skynet.so
 * (no PLT, no interposition); only luaopen_skynet_kernel is exported. */
#pragma GCC visibility push(hidden)

/* The registry key of the kernel userdata (its address; defined in init.c). */
extern const char KERNEL_KEY;

/* ---- state.c: access to the user values (the hot ones inline) ---- */

/* Push the kernel userdata; returns its record. Raises outside a kernel state. */
static inline struct kernel *
kernel_push(lua_State *L) {
	if (lua_rawgetp(L, LUA_REGISTRYINDEX, &KERNEL_KEY) != LUA_TUSERDATA)
		luaL_error(L, "skynet.kernel: not built in this state");
	return lua_touserdata(L, -1);
}

/* Push user value v of the kernel at index K; returns its type. */
static inline int
kernel_uv(lua_State *L, int K, int v) {
	return lua_getiuservalue(L, K, v);
}

/* Push state table v (UV_WAITING..UV_FQ_ARGS), made on first use. */
void kernel_tab(lua_State *L, int K, int v);
/* Push state table v when it exists (true); nothing otherwise. */
static inline bool
kernel_tab_if(lua_State *L, int K, int v) {
	if (kernel_uv(L, K, v) == LUA_TTABLE)
		return true;
	lua_pop(L, 1);
	return false;
}
/* t[key] of state table v: pushes the value (nil when t is not made), returns its type. */
static inline int
kernel_geti(lua_State *L, int K, int v, lua_Integer key) {
	if (!kernel_tab_if(L, K, v)) {
		lua_pushnil(L);
		return LUA_TNIL;
	}
	int t = lua_rawgeti(L, -1, key);
	lua_remove(L, -2);
	return t;
}
/* t[key] = the value on top (popped); nil into an unmade table makes nothing. */
void kernel_seti(lua_State *L, int K, int v, lua_Integer key);
/* The same with the key at stack index key. */
static inline int
kernel_get(lua_State *L, int K, int v, int key) {
	key = lua_absindex(L, key);
	if (!kernel_tab_if(L, K, v)) {
		lua_pushnil(L);
		return LUA_TNIL;
	}
	lua_pushvalue(L, key);
	int t = lua_rawget(L, -2);
	lua_remove(L, -2);
	return t;
}
void kernel_set(lua_State *L, int K, int v, int key);

/* The coroutine at idx becomes the running one (k->running, UV_RUNNING). */
static inline void
kernel_set_running(lua_State *L, int K, struct kernel *k, int idx) {
	k->running = lua_tothread(L, idx);
	lua_pushvalue(L, idx);
	lua_setiuservalue(L, K, UV_RUNNING);
}
/* Push the running coroutine (nil before the first resume). */
static inline void
kernel_push_running(lua_State *L, int K) {
	kernel_uv(L, K, UV_RUNNING);
}
/* Append the string on top (popped) to the errors of this dispatch. */
void kernel_push_error(lua_State *L, int K);
/* Queue an error reply carrying reason (copied) to the call (source, session):
 * dispatch_message sends it once it has logged this dispatch's errors, so a
 * caller that logs the failure in turn logs it after its cause. */
void kernel_defer_error_reply(lua_State *L, int K, lua_Integer source, lua_Integer session,
                              const char *reason);

bool kernel_is_string(lua_State *L, int idx, const char *s);
bool kernel_is_zero(lua_State *L, int idx);
/* Raise msg located at level (as error(msg, level) from Lua code would). */
int kernel_error_at(lua_State *L, int level, const char *msg);
/* Push ":%08x" of a number, tostring of anything else (skynet.address); returns it. */
const char *kernel_push_address(lua_State *L, int idx);
/* skynet.core.trace(tag at index tag, text). */
void kernel_trace(lua_State *L, int tag, const char *text);
/* Push require(name). */
void kernel_require(lua_State *L, const char *name);

/* ---- session.c ---- */

/* Send the payload at msg (msg, sz at msg, msg + 1) to the address at dest;
 * session < 0 asks the core for one. Returns the core's result. Raises on a bad
 * address, after freeing the payload. */
int kernel_send_msg(lua_State *L, struct kernel *k, int dest, int type, int session, int msg);
/* The same from source (0: self; skynet.redirect). */
int kernel_send_from(lua_State *L, struct kernel *k, int dest, uint32_t source, int type,
                     int session, int msg);
/* kernel_send_from for a call, send, rawsend or redirect: from a traced
 * coroutine the message carries its trace (trace.c). cap: the bytes the
 * payload's allocation holds when skynet.pack made it just now (0: unknown). */
int kernel_send_traced(lua_State *L, struct kernel *k, int dest, uint32_t source, int type,
                       int session, int msg, size_t cap);
/* An empty error message to source for session (never raises). */
void kernel_send_error(struct kernel *k, lua_Integer source, lua_Integer session);
/* An error message to source for session carrying the text reason (its first
 * line, at most KERNEL_REASON_MAX bytes), which the caller's kernel keeps as the
 * reason of its failed call (never raises; skynet ignores the payload). */
void kernel_send_reason(struct kernel *k, lua_Integer source, lua_Integer session,
                        const char *reason);
/* A new session from the core, skipping those in use once the counter wrapped. */
int kernel_new_session(lua_State *L, int K, struct kernel *k);
/* Note session as allocated (detects the wrap). */
void kernel_track(struct kernel *k, int session);
/* After a wrap: skip the sessions still in use before the next allocation. */
void kernel_session_guard(lua_State *L, int K, struct kernel *k);
/* The service's handle (asked of the core once; 0 when it has none). */
uint32_t kernel_self(struct kernel *k);

int kernel_lsend(lua_State *L);
int kernel_lcall(lua_State *L);
int kernel_lret(lua_State *L);
int kernel_lretpack(lua_State *L);
int kernel_lgenid(lua_State *L);
int kernel_lself(lua_State *L);
int kernel_laddress(lua_State *L);
int kernel_lyield_call(lua_State *L);   // S.yield_call
int kernel_lnew_call(lua_State *L);     // S.new_call
int kernel_lcall_handler(lua_State *L); // S.call_handler
int kernel_ldrop_handler(lua_State *L); // S.drop_handler
int kernel_lrequest(lua_State *L);      // S.request
int kernel_lowe(lua_State *L);          // S.owe
int kernel_lowes(lua_State *L);         // S.owes

/* ---- dispatch.c: failure reasons ----
 * The text a PTYPE_ERROR carries is the reason of the failed call: kept under
 * the session until the call's coroutine is resumed, then under that
 * coroutine (its last failed call) until its next failed call. One table in
 * the registry with weak keys, made on first use; only the kernel touches it. */

#define KERNEL_REASON_MAX 1000

/* reasons[key at key] = the value on top (popped). */
void kernel_reason_set(lua_State *L, int key);
/* Push reasons[key at key]; returns its type. */
int kernel_reason_get(lua_State *L, int key);
int kernel_lreason(lua_State *L); // S.reason

/* ---- proto.c ---- */

/* Push proto[typename at idx], or raise "unknown protocol" at the caller's caller. */
int kernel_get_proto(lua_State *L, int K, int idx);
/* Register lua, response, error, debug; skynet.core at index core. */
void kernel_register_builtins(lua_State *L, int core);

int kernel_lregister_protocol(lua_State *L);
int kernel_ldispatch(lua_State *L);
int kernel_lprotocol(lua_State *L);  // S.protocol
int kernel_lprotocols(lua_State *L); // S.protocols

/* ---- coroutine.c ---- */

/* Push a framework coroutine: from the pool when one is parked there. */
lua_State *kernel_co_get(lua_State *L, int K);
/* Resume co with narg values from L's top. Leaves one value on L: the first
 * value co yielded (nil when none) and returns true, or its error object and
 * returns false. */
bool kernel_resume(struct kernel *k, lua_State *L, lua_State *co, int narg);
/* The coroutine at idx died with the error at err: log, fail its request, close it. */
void kernel_co_error(lua_State *L, int K, struct kernel *k, int idx, int err);
/* The coroutine at idx dies: an error to the source of the call it serves
 * (carrying reason when not NULL), its request forgotten. */
void kernel_co_fail_request(lua_State *L, int K, struct kernel *k, int idx, const char *reason);
/* True when msg ends with "call failed" (skynet.call's error). */
bool kernel_is_call_failed(const char *msg);
/* When msg is a failed call's error and the coroutine at idx kept a reason
 * for it: push that reason, forget it there and return it; else push nothing
 * and return NULL. */
const char *kernel_co_cause(lua_State *L, int idx, const char *msg);
/* Bookkeeping when the coroutine at idx stops for good: fired timeout, trace
 * tag, span (failed: it died of an error or was killed). */
void kernel_co_finished(lua_State *L, int K, struct kernel *k, int idx, bool failed);
int kernel_close_thread(lua_State *co, lua_State *from);
/* Push a new trace tag: a new trace id, 32 hex digits. */
void kernel_push_new_tag(lua_State *L, struct kernel *k);

int kernel_lfork(lua_State *L);
int kernel_ltag(lua_State *L);     // S.tag
int kernel_lset_tag(lua_State *L); // S.set_tag
int kernel_lnew_tag(lua_State *L); // S.new_tag
int kernel_lparked(lua_State *L);  // S.parked

/* ---- run.c ---- */

/* Stack: ..., co (thread or nil), r (what resuming co gave: a command, or the
 * error when ok is false); both are popped. Handles r, then resumes, one per
 * step, the woken coroutines and those whose calls failed, until both queues
 * are empty (or a coroutine quits). K: the kernel's index. */
void kernel_run(lua_State *L, int K, bool ok);
/* kernel_run with no coroutine to handle first. */
void kernel_run_queues(lua_State *L, int K);
/* Resume the forked coroutines queued during this dispatch. */
void kernel_run_forks(lua_State *L, int K, struct kernel *k);
lua_CFunction kernel_coroutine_frame(void); // the body of a pooled coroutine

/* ---- dispatch.c ---- */

int kernel_ldispatch_message(lua_State *L);
lua_CFunction kernel_dispatch_frame(void); // the C function a message runs in
int kernel_lerror_dispatch(lua_State *L);  // S.error_dispatch, the "error" protocol
int kernel_lunknown_message(lua_State *L);

/* ---- timer.c ---- */

/* Arm a timer of ti (value at idx) cs; returns the session. */
int kernel_arm_timer(lua_State *L, int K, struct kernel *k, int idx);
/* Give back the memory of the timers table once most of a big batch is gone. */
void kernel_timers_shrink(lua_State *L, int K, struct kernel *k);
/* Remake a session table that will soon have no free slot (see state.c). */
void kernel_sessions_tidy(lua_State *L, int K, struct kernel *k);
/* Session table v, on top of the stack (left there), replaced by a copy with
 * room for twice its n entries; its counters start again. */
void kernel_session_remake(lua_State *L, int K, struct kernel *k, int v, int n);
/* A continuation returning the values above ctx (a stack level). */
int kernel_results_k(lua_State *L, int status, lua_KContext ctx);

int kernel_ltimeout(lua_State *L);
int kernel_ltimeout_us(lua_State *L);
int kernel_lsleep(lua_State *L);
int kernel_lwait(lua_State *L);
int kernel_lwakeup(lua_State *L);
int kernel_lpending(lua_State *L);       // S.pending
int kernel_lpending_count(lua_State *L); // S.pending_count
int kernel_lcreation(lua_State *L);      // S.creation

/* ---- start.c ---- */

int kernel_linit_service(lua_State *L);
int kernel_lstart(lua_State *L);
int kernel_linit_thread(lua_State *L); // S.init_thread

/* ---- kill.c ---- */

/* Send an error to the source of each request still being served. */
void kernel_fail_requests(lua_State *L, int K, struct kernel *k);
/* Call each detached response closure with false (an error in one is dropped). */
void kernel_fail_responses(lua_State *L, int K);

int kernel_lkillthread(lua_State *L); // S.killthread
int kernel_lexit_state(lua_State *L); // S.exit_state

/* ---- trace.c ---- */

/* Where a span begins: its tag (tag_len bytes; NULL: the trace id's hex),
 * its trace id (NULL or all zero: the tag's; given when the tag is NULL), the parent span (0: root), the request's source (0:
 * none), the absolute stack index of the request's first argument naming it (0:
 * none), and whether it begins with the dispatch of its request (its start
 * is then the dispatch's clock reading, skynet_dispatch_ns, when there is
 * one). */
struct kernel_span_from {
	const char *tag;
	size_t tag_len;
	const uint8_t *trace;
	uint64_t parent;
	uint32_t source;
	int name;
	bool at_dispatch;
};

/* The service traces: reads config trace_lines the first time. */
void kernel_trace_on(struct kernel *k);
/* The coroutine co begins a span of from's tag, ending the span it had. */
void kernel_span_begin(lua_State *L, struct kernel *k, lua_State *co,
                       const struct kernel_span_from *from);
/* co ends: its span ends, its tag goes (a "<TRACE> end" line unless quiet). */
void kernel_trace_end(lua_State *L, struct kernel *k, lua_State *co, bool failed);
/* The bytes of the trailer co's messages carry (skynet_trace_size); 0 untraced. */
size_t kernel_trace_room(struct kernel *k, const lua_State *co);
/* The trailer the running coroutine's messages carry (skynet_trace_encode),
 * *n bytes, valid until the next call; NULL when it has no tag. */
const void *kernel_trace_trailer(struct kernel *k, size_t *n);
/* After a request's first resume: its pending span, if it is still open,
 * becomes its record (trace.c's "Pending"). */
void kernel_trace_settle(struct kernel *k);
/* Push the tag of co (a string, false, or nil); true when a string. */
bool kernel_push_tag(lua_State *L, struct kernel *k, lua_State *co);
/* co's tag = the value on top (popped): a string, false (tracing off) or nil. */
void kernel_set_tag(lua_State *L, struct kernel *k, lua_State *co);
/* A new coroutine has co's address: drop what a collected one left there. */
void kernel_trace_forget(struct kernel *k, lua_State *co);
/* Free the kernel's trace records (its __gc). */
void kernel_trace_free(struct kernel *k);
/* UV_TRACE_SOURCE[source] = the value on top (popped), counting k->trace_pending. */
void kernel_set_trace_source(lua_State *L, int K, struct kernel *k, int source);
/* Split the trace payload at payload: push its tag, return the parent span (0: none). */
uint64_t kernel_trace_split(lua_State *L, int payload);

int kernel_ltrace_begin(lua_State *L);   // S.trace_begin
int kernel_ltrace_end(lua_State *L);     // S.trace_end
int kernel_ltrace_context(lua_State *L); // S.trace_context
int kernel_lerror(lua_State *L);         // skynet.error (upvalue: skynet.core's error)
int kernel_lredirect(lua_State *L);      // skynet.redirect
int kernel_lrawsend(lua_State *L);       // skynet.rawsend

/* ---- lazy.c ---- */

int kernel_llazy_index(lua_State *L);    // __index of the skynet table
int kernel_lprivate_index(lua_State *L); // __index of skynet.private

#pragma GCC visibility pop

#endif
