/*
 * skynet.stm at the C level: the reference counts of the box and of each
 * version through new/copy/newcopy/read/update/collect, and threads that
 * each own a Lua state reading one box while another thread publishes and
 * then collects the writer (run under `make test-tsan`, where TT_STRESS
 * asks for more rounds). The module is included directly because unit
 * tests link only the core.
 */
#include "../../lualib-src/lua-stm.c"

#include "tt.h"
#include "tt_lua.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#define READERS 3

static ATOM_INT STARTED; // reader threads ready to read
static ATOM_INT DONE;    // readers that reached the last version
static ATOM_INT CLOSED;  // 1 once the writer's state is closed

/* tostr(msg, sz): the bytes of a version as a string. */
static int
ltostr(lua_State *L) {
	const char *p = lua_touserdata(L, 1);
	lua_Integer sz = luaL_checkinteger(L, 2);
	lua_pushlstring(L, p, (size_t)sz);
	return 1;
}

static int
lmark_done(lua_State *L) {
	ATOM_FINC(&DONE);
	return 0;
}

static int
lis_closed(lua_State *L) {
	int closed = ATOM_LOAD(&CLOSED);
	if (!closed)
		sched_yield();
	lua_pushboolean(L, closed);
	return 1;
}

static lua_State *
new_state(void) {
	lua_State *L = luaL_newstate();
	luaL_openlibs(L);
	luaL_requiref(L, "stm", luaopen_skynet_stm, 1);
	lua_pop(L, 1);
	lua_pushcfunction(L, ltostr);
	lua_setglobal(L, "tostr");
	lua_pushcfunction(L, lmark_done);
	lua_setglobal(L, "mark_done");
	lua_pushcfunction(L, lis_closed);
	lua_setglobal(L, "is_closed");
	return L;
}

/* The box behind the writer in global `name`. */
static struct stm_object *
box_of(lua_State *L, const char *name) {
	lua_getglobal(L, name);
	struct stm_writer *w = luaL_checkudata(L, -1, STM_WRITER);
	lua_pop(L, 1);
	return w->obj;
}

static struct stm_reader *
reader_of(lua_State *L, const char *name) {
	lua_getglobal(L, name);
	struct stm_reader *r = luaL_checkudata(L, -1, STM_READER);
	lua_pop(L, 1);
	return r;
}

static void
stm_reference_counts(int *failed) {
	lua_State *L = new_state();
	TT_CHECK(tt_lua_run(L, "w = stm.new('v1') return true"));
	struct stm_object *obj = box_of(L, "w");
	TT_CHECK(ATOM_LOAD(&obj->ref) == 1);
	struct stm_copy *v1 = ATOM_LOAD(&obj->copy);
	TT_CHECK(v1->ref == 1 && v1->sz == 2 && memcmp(v1->msg, "v1", 2) == 0);
	TT_CHECK(tt_lua_run(L, "p = stm.copy(w) return true"));
	TT_CHECK(ATOM_LOAD(&obj->ref) == 2); // writer + pointer
	TT_CHECK(tt_lua_run(L, "r = stm.newcopy(p) return true"));
	TT_CHECK(ATOM_LOAD(&obj->ref) == 2); // the pointer's reference moved to r
	struct stm_reader *r = reader_of(L, "r");
	TT_CHECK(r->lastcopy == NULL);
	TT_CHECK(tt_lua_run(L, "return r(tostr) == true"));
	TT_CHECK(r->lastcopy == v1 && v1->ref == 2); // box + reader
	TT_CHECK(tt_lua_run(L, "w('v2') return true"));
	TT_CHECK(v1->ref == 1); // the reader keeps v1 alive
	struct stm_copy *v2 = ATOM_LOAD(&obj->copy);
	TT_CHECK(v2 != v1 && v2->ref == 1);
	TT_CHECK(tt_lua_run(L, "local ok, s = r(tostr) return ok and s == 'v2'"));
	TT_CHECK(r->lastcopy == v2 && v2->ref == 2); // v1 was freed here
	TT_CHECK(tt_lua_run(L, "w = nil collectgarbage() return true"));
	TT_CHECK(ATOM_LOAD(&obj->copy) == NULL);
	TT_CHECK(ATOM_LOAD(&obj->ref) == 1 && v2->ref == 1); // only the reader's
	TT_CHECK(tt_lua_run(L, "return r(tostr) == false"));
	TT_CHECK(r->lastcopy == v2);
	lua_close(L); // frees v2 and the box (ASan checks)
}

static void
stm_errors_leave_counts(int *failed) {
	lua_State *L = new_state();
	TT_CHECK(tt_lua_run(L, "w = stm.new('x') return true"));
	struct stm_object *obj = box_of(L, "w");
	TT_CHECK(tt_lua_run(L, "return not pcall(stm.copy, {}) and not pcall(w, {})"));
	TT_CHECK(tt_lua_run(L, "return not pcall(stm.newcopy, 'x')"));
	TT_CHECK(ATOM_LOAD(&obj->ref) == 1);
	TT_CHECK(tt_lua_run(L, "r = stm.newcopy(stm.copy(w)) return not pcall(r, 1)"));
	TT_CHECK(reader_of(L, "r")->lastcopy == NULL);
	lua_close(L);
}

struct reader_arg {
	struct stm_object *box; // a copy pointer's reference, taken over by the thread
	int last_version;
	int wait_done; // 1: report reaching last_version, then wait for the close
	int ok;
};

static const char *READ_LOOP =
    "local r, last, wait_done = ...\n"
    "local seen = -1\n"
    "local function check(s)\n"
    "  local n, pad = s:match('^(%d+):(.*)$')\n"
    "  n = tonumber(n)\n"
    "  if n <= seen then error('version went back: ' .. n .. ' after ' .. seen) end\n"
    "  if pad ~= string.rep(string.char(97 + n % 26), n % 97) then error('torn ' .. n) end\n"
    "  seen = n\n"
    "end\n"
    "if wait_done then\n"
    "  while seen < last do\n"
    "    local ok, s = r(tostr)\n"
    "    if ok then check(s) end\n"
    "  end\n"
    "  mark_done()\n"
    "  while not is_closed() do end\n"
    "  return r(tostr) == false and r(tostr) == false\n"
    "end\n"
    "while true do\n"
    "  local closed = is_closed()\n"
    "  local ok, s = r(tostr)\n"
    "  if ok then check(s) elseif closed then return seen <= last end\n"
    "end\n";

static void *
reader_thread(void *ud) {
	struct reader_arg *a = ud;
	lua_State *L = new_state();
	if (luaL_loadstring(L, READ_LOOP) != LUA_OK)
		abort();
	lua_getglobal(L, "stm");
	lua_getfield(L, -1, "newcopy");
	lua_remove(L, -2);
	lua_pushlightuserdata(L, a->box);
	lua_call(L, 1, 1);
	ATOM_FINC(&STARTED);
	lua_pushinteger(L, a->last_version);
	lua_pushboolean(L, a->wait_done);
	if (lua_pcall(L, 3, 1, 0) != LUA_OK) {
		fprintf(stderr, "reader: %s\n", lua_tostring(L, -1));
		a->ok = 0;
	} else {
		a->ok = lua_toboolean(L, -1);
	}
	lua_close(L);
	return NULL;
}

/* Publishes 1..n as "<i>:<pad>" through the writer in global w. */
static void
publish(lua_State *L, int n) {
	lua_getglobal(L, "w");
	for (int i = 1; i <= n; i++) {
		char pad[128];
		int len = i % 97;
		memset(pad, 'a' + i % 26, (size_t)len);
		lua_pushvalue(L, -1);
		lua_pushfstring(L, "%d:", i);
		lua_pushlstring(L, pad, (size_t)len);
		lua_concat(L, 2);
		lua_call(L, 1, 0);
	}
	lua_pop(L, 1);
}

/*
 * READERS threads read while this thread publishes. wait_done: the writer
 * waits until every reader saw the last version before it is collected;
 * else it is collected at once, in the middle of their reads.
 */
static int
run_round(int versions, int wait_done) {
	ATOM_STORE(&STARTED, 0);
	ATOM_STORE(&DONE, 0);
	ATOM_STORE(&CLOSED, 0);
	lua_State *W = new_state();
	if (!tt_lua_run(W, "w = stm.new('0:') return true"))
		return 0;
	struct reader_arg args[READERS + 1];
	pthread_t th[READERS];
	for (int i = 0; i <= READERS; i++) {
		if (!tt_lua_run(W, "p = stm.copy(w) return true"))
			return 0;
		lua_getglobal(W, "p");
		args[i].box = lua_touserdata(W, -1);
		lua_pop(W, 1);
		args[i].last_version = versions;
		args[i].wait_done = wait_done;
		args[i].ok = 0;
	}
	for (int i = 0; i < READERS; i++) {
		if (pthread_create(&th[i], NULL, reader_thread, &args[i]) != 0)
			abort();
	}
	while (ATOM_LOAD(&STARTED) < READERS)
		sched_yield();
	publish(W, versions);
	if (wait_done) {
		while (ATOM_LOAD(&DONE) < READERS)
			sched_yield();
	}
	lua_close(W); // collects the writer
	ATOM_STORE(&CLOSED, 1);
	int ok = 1;
	for (int i = 0; i < READERS; i++) {
		pthread_join(th[i], NULL);
		ok = ok && args[i].ok;
	}
	/* A pointer turned into a reader only now: the writer is gone already. */
	args[READERS].wait_done = 0;
	reader_thread(&args[READERS]);
	return ok && args[READERS].ok;
}

static void
stm_threads_read_while_writing(int *failed) {
	int versions = tt_stress() ? 20000 : 4000;
	TT_CHECK(run_round(versions, 1));
}

static void
stm_writer_collected_during_reads(int *failed) {
	int rounds = tt_stress() ? 20 : 5;
	for (int i = 0; i < rounds; i++)
		TT_CHECK(run_round(500 + i * 100, 0));
}

int
main(void) {
	TT_RUN(stm_reference_counts);
	TT_RUN(stm_errors_leave_counts);
	TT_RUN(stm_threads_read_while_writing);
	TT_RUN(stm_writer_collected_during_reads);
	return tt_summary();
}
