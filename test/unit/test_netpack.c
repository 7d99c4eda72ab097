/*
 * skynet.netpack: frames split at every byte (the 2-byte header
 * too), many frames per read, empty and 65535-byte payloads, per-fd partial
 * state dropped on close and error, arrival order through the "more"
 * queue, pack limits, and 10 MB of garbage without unbounded memory. The
 * module is included directly because unit tests link only the core.
 * Messages are built here the way skynet_socket.c builds them.
 */
#include "../../lualib-src/lua-netpack.c"

#include "tt.h"
#include "tt_lua.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* A PTYPE_SOCKET payload: type, id, ud, an owned copy of data (DATA) or inline text. */
static void *
socket_msg(int type, int id, int ud, const void *data, size_t data_sz, const char *text,
           size_t *msg_sz) {
	size_t extra = text ? strlen(text) : 0;
	struct skynet_socket_message *sm = skynet_malloc(sizeof(*sm) + extra);
	sm->type = type;
	sm->id = id;
	sm->ud = ud;
	sm->buffer = NULL;
	if (data != NULL) {
		sm->buffer = skynet_malloc(data_sz);
		memcpy(sm->buffer, data, data_sz);
		sm->ud = (int)data_sz;
	}
	if (extra)
		memcpy(sm + 1, text, extra);
	*msg_sz = sizeof(*sm) + extra;
	return sm;
}

/*
 * Lua side: data(q, fd, bytes) feeds one DATA message through filter and
 * returns filter's results (the socket message itself is freed here, as
 * the framework would after dispatch); event(q, type, id, ud, text) feeds
 * the others.
 */
static int
ldata(lua_State *L) {
	lua_Integer fd = luaL_checkinteger(L, 2);
	size_t len = 0;
	const char *bytes = luaL_checklstring(L, 3, &len);
	size_t sz = 0;
	void *msg = socket_msg(SKYNET_SOCKET_TYPE_DATA, (int)fd, 0, bytes, len, NULL, &sz);
	lua_settop(L, 1);
	lua_pushcfunction(L, lfilter);
	lua_insert(L, 1);
	lua_pushlightuserdata(L, msg);
	lua_pushinteger(L, (lua_Integer)sz);
	lua_call(L, 3, LUA_MULTRET);
	skynet_free(msg);
	return lua_gettop(L);
}

static int
levent(lua_State *L) {
	int type = (int)luaL_checkinteger(L, 2);
	int id = (int)luaL_checkinteger(L, 3);
	int ud = (int)luaL_optinteger(L, 4, 0);
	const char *text = luaL_optstring(L, 5, NULL);
	size_t sz = 0;
	void *msg = socket_msg(type, id, ud, NULL, 0, text, &sz);
	lua_settop(L, 1);
	lua_pushcfunction(L, lfilter);
	lua_insert(L, 1);
	lua_pushlightuserdata(L, msg);
	lua_pushinteger(L, (lua_Integer)sz);
	lua_call(L, 3, LUA_MULTRET);
	skynet_free(msg);
	return lua_gettop(L);
}

static const char PRELUDE[] =
    "netpack = ...\n"
    "function frame(s) return string.pack('>s2', s) end\n"
    "function take(ptr, sz) return netpack.tostring(ptr, sz) end\n"
    // Feeds chunks for fd, collecting every complete frame (data or more).
    "function feed(q, fd, chunks, out)\n"
    "  out = out or {}\n"
    "  for _, c in ipairs(chunks) do\n"
    "    local kind, a, b, c2\n"
    "    q, kind, a, b, c2 = data(q, fd, c)\n"
    "    if kind == 'data' then out[#out+1] = {a, take(b, c2)}\n"
    "    elseif kind == 'more' then\n"
    "      for f, p, n in netpack.pop, q do out[#out+1] = {f, take(p, n)} end\n"
    "    else assert(kind == nil, kind) end\n"
    "  end\n"
    "  return q, out\n"
    "end\n";

static lua_State *
new_state(void) {
	lua_State *L = luaL_newstate();
	luaL_openlibs(L);
	lua_pushcfunction(L, ldata);
	lua_setglobal(L, "data");
	lua_pushcfunction(L, levent);
	lua_setglobal(L, "event");
	static const struct {
		const char *name;
		int type;
	} types[] = {
	    {"CONNECT", SKYNET_SOCKET_TYPE_CONNECT}, {"CLOSE", SKYNET_SOCKET_TYPE_CLOSE},
	    {"ACCEPT", SKYNET_SOCKET_TYPE_ACCEPT},   {"ERROR", SKYNET_SOCKET_TYPE_ERROR},
	    {"WARNING", SKYNET_SOCKET_TYPE_WARNING},
	};
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		lua_pushinteger(L, types[i].type);
		lua_setglobal(L, types[i].name);
	}
	if (luaL_loadstring(L, PRELUDE) != LUA_OK)
		abort();
	luaL_requiref(L, "skynet.netpack", luaopen_skynet_netpack, 0);
	if (lua_pcall(L, 1, 0, 0) != LUA_OK)
		abort();
	return L;
}

static void
one_frame_is_data(int *failed) {
	lua_State *L = new_state();
	TT_CHECK(tt_lua_run(L,
	                    "local q, kind, fd, p, n = data(nil, 5, frame('hello'))\n"
	                    "return type(q) == 'userdata' and kind == 'data' and fd == 5 and n == 5\n"
	                    "  and take(p, n) == 'hello' and netpack.pop(q) == nil"));
	lua_close(L);
}

static void
frames_split_at_every_byte(int *failed) {
	lua_State *L = new_state();
	TT_CHECK(tt_lua_run(L, "local wire = frame('abc') .. frame('') .. frame(string.rep('x', 300))\n"
	                       "for cut = 1, #wire - 1 do\n"
	                       "  local q, out = feed(nil, 9, {wire:sub(1, cut), wire:sub(cut + 1)})\n"
	                       "  if #out ~= 3 or out[1][2] ~= 'abc' or out[2][2] ~= ''\n"
	                       "    or out[3][2] ~= string.rep('x', 300) then return false end\n"
	                       "end\n"
	                       "local chunks = {}\n"
	                       "for i = 1, #wire do chunks[i] = wire:sub(i, i) end\n"
	                       "local q, out = feed(nil, 9, chunks)\n"
	                       "return #out == 3 and out[3][2] == string.rep('x', 300)"));
	lua_close(L);
}

static void
many_frames_in_one_read_come_as_more(int *failed) {
	lua_State *L = new_state();
	TT_CHECK(tt_lua_run(L, "local t = {}\n"
	                       "for i = 1, 100 do t[i] = frame(tostring(i)) end\n"
	                       "local q, kind = data(nil, 3, table.concat(t))\n"
	                       "if kind ~= 'more' then return false end\n"
	                       "local i = 0\n"
	                       "for fd, p, n in netpack.pop, q do\n"
	                       "  i = i + 1\n"
	                       "  if fd ~= 3 or take(p, n) ~= tostring(i) then return false end\n"
	                       "end\n"
	                       "return i == 100"));
	lua_close(L);
}

static void
order_kept_while_frames_are_queued(int *failed) {
	lua_State *L = new_state();
	// Two frames queued and not popped yet; the next single frame queues behind them.
	TT_CHECK(tt_lua_run(L, "local q, kind = data(nil, 1, frame('a') .. frame('b'))\n"
	                       "assert(kind == 'more')\n"
	                       "local q2, kind2 = data(q, 1, frame('c'))\n"
	                       "if q2 ~= q or kind2 ~= 'more' then return false end\n"
	                       "local got = {}\n"
	                       "for fd, p, n in netpack.pop, q do got[#got+1] = take(p, n) end\n"
	                       "return table.concat(got) == 'abc'"));
	lua_close(L);
}

static void
largest_and_empty_payloads(int *failed) {
	lua_State *L = new_state();
	TT_CHECK(tt_lua_run(L, "local big = string.rep('z', 65535)\n"
	                       "local w = frame(big) .. frame('')\n"
	                       "local q, out = feed(nil, 2, {w:sub(1, 40000), w:sub(40001)})\n"
	                       "return #out == 2 and out[1][2] == big and out[2][2] == ''"));
	TT_CHECK(tt_lua_run(L, "local p, n = netpack.pack(string.rep('y', 65535))\n"
	                       "local s = netpack.tostring(p, n)\n"
	                       "return n == 65537 and s:byte(1) == 0xff and s:byte(2) == 0xff"));
	TT_CHECK(tt_lua_run(
	    L, "local ok, err = pcall(netpack.pack, string.rep('y', 65536))\n"
	       "return not ok and err:find('Invalid size (too long) of data', 1, true) ~= nil"));
	TT_CHECK(tt_lua_run(L, "local p, n = netpack.pack('')\n"
	                       "return n == 2 and netpack.tostring(p, n) == '\\0\\0'"));
	lua_close(L);
}

static void
partial_state_is_per_fd_and_dropped_on_close(int *failed) {
	lua_State *L = new_state();
	TT_CHECK(
	    tt_lua_run(L, "local q = data(nil, 1, '\\0\\5he')\n"     // fd 1: 2 of 5 bytes
	                  "q = data(q, 2, '\\0')\n"                  // fd 2: half a header
	                  "local _, kind, fd = event(q, CLOSE, 1)\n" // fd 1 closes: its partial goes
	                  "if kind ~= 'close' or fd ~= 1 then return false end\n"
	                  "local _, out = feed(q, 1, {frame('new')})\n"
	                  "if #out ~= 1 or out[1][2] ~= 'new' then return false end\n"
	                  "_, out = feed(q, 2, {'\\3abc'})\n" // fd 2 finishes its own frame
	                  "if #out ~= 1 or out[1][1] ~= 2 or out[1][2] ~= 'abc' then return false end\n"
	                  "q = data(q, 3, '\\0\\9xy')\n"
	                  "local _, k2, fd2, text = event(q, ERROR, 3, 0, 'reset')\n"
	                  "if k2 ~= 'error' or fd2 ~= 3 or text ~= 'reset' then return false end\n"
	                  "_, out = feed(q, 3, {frame('z')})\n"
	                  "return #out == 1 and out[1][2] == 'z'"));
	lua_close(L);
}

static void
other_events(int *failed) {
	lua_State *L = new_state();
	TT_CHECK(tt_lua_run(L,
	                    "local q, k, fd, addr = event(nil, ACCEPT, 1, 42, '127.0.0.1:5000')\n"
	                    "if q ~= nil or k ~= 'open' or fd ~= 42 or addr ~= '127.0.0.1:5000' then\n"
	                    "  return false end\n"
	                    "local _, k2, id, ip, port = event(nil, CONNECT, 1, 8000, '0.0.0.0')\n"
	                    "if k2 ~= 'init' or id ~= 1 or ip ~= '0.0.0.0' or port ~= 8000 then\n"
	                    "  return false end\n"
	                    "local _, k3, fd3, kb = event(nil, WARNING, 7, 2048)\n"
	                    "if k3 ~= 'warning' or fd3 ~= 7 or kb ~= 2048 then return false end\n"
	                    "local q4, k4 = event(nil, CLOSE, 7)\n"
	                    "return k4 == 'close' and netpack.pop(q4) == nil"));
	lua_close(L);
}

static void
clear_frees_everything(int *failed) {
	lua_State *L = new_state();
	TT_CHECK(tt_lua_run(L, "local q = data(nil, 1, frame('a') .. frame('b') .. '\\0\\9par')\n"
	                       "q = data(q, 2, '\\1')\n"
	                       "netpack.clear(q)\n"
	                       "if netpack.pop(q) ~= nil then return false end\n"
	                       "local _, out = feed(q, 1, {frame('after')})\n" // fd 1's partial is gone
	                       "return #out == 1 and out[1][2] == 'after'"));
	lua_close(L);
}

static void
garbage_keeps_memory_bounded(int *failed) {
	lua_State *L = new_state();
	// 10 MB of pseudo-random bytes in 4 KB reads on one fd: frames come out,
	// at most one partial frame (< 64 KB) is held, and the Lua heap stays small.
	TT_CHECK(tt_lua_run(
	    L, "local x = 12345\n"
	       "local function rnd() x = (x * 1103515245 + 12345) % 2147483648; return x end\n"
	       "local q, frames, bytes = nil, 0, 0\n"
	       "for i = 1, 2560 do\n"
	       "  local t = {}\n"
	       "  for j = 1, 1024 do t[j] = string.pack('<I4', rnd()) end\n"
	       "  local out\n"
	       "  q, out = feed(q, 77, {table.concat(t)})\n"
	       "  frames = frames + #out\n"
	       "  for _, f in ipairs(out) do bytes = bytes + #f[2] end\n"
	       "  if i % 256 == 0 then collectgarbage() end\n"
	       "end\n"
	       "collectgarbage()\n"
	       "return frames > 0 and collectgarbage('count') < 4096"));
	lua_close(L);
}

int
main(void) {
	TT_RUN(one_frame_is_data);
	TT_RUN(frames_split_at_every_byte);
	TT_RUN(many_frames_in_one_read_come_as_more);
	TT_RUN(order_kept_while_frames_are_queued);
	TT_RUN(largest_and_empty_payloads);
	TT_RUN(partial_state_is_per_fd_and_dropped_on_close);
	TT_RUN(other_events);
	TT_RUN(clear_frees_everything);
	TT_RUN(garbage_keeps_memory_bounded);
	return tt_summary();
}
