/*
 * skynet.socketdriver's message and buffer helpers: unpack of
 * every event type, the read buffer (push/pop/readline/readall/clear/size
 * across chunk boundaries), header, str2p, udp_address and address
 * parsing errors. The network functions need a running node and are
 * covered by the Lua tests. The module is included directly because unit
 * tests link only the core.
 */
#include "../../lualib-src/lua-socket.c"

#include "tt.h"
#include "tt_lua.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <stdio.h>
#include <string.h>

/*
 * msg(type, id, ud[, data_or_text[, udp_from]]) -> ptr, sz: a PTYPE_SOCKET
 * payload built the way skynet_socket.c builds it.
 */
static int
lmsg(lua_State *L) {
	int type = (int)luaL_checkinteger(L, 1);
	size_t len = 0;
	const char *s = luaL_optlstring(L, 4, "", &len);
	bool owns = type == SKYNET_SOCKET_TYPE_DATA || type == SKYNET_SOCKET_TYPE_UDP;
	const char *extra = owns ? luaL_optstring(L, 5, "") : s;
	size_t extra_len = owns ? strlen(extra) : len;
	if (owns && type == SKYNET_SOCKET_TYPE_UDP)
		extra_len = lua_rawlen(L, 5);
	struct skynet_socket_message *sm = skynet_malloc(sizeof(*sm) + extra_len);
	sm->type = type;
	sm->id = (int)luaL_checkinteger(L, 2);
	sm->ud = (int)luaL_checkinteger(L, 3);
	sm->buffer = NULL;
	if (owns) {
		sm->buffer = skynet_malloc(len);
		memcpy(sm->buffer, s, len);
		sm->ud = (int)len;
	}
	memcpy(sm + 1, extra, extra_len);
	lua_pushlightuserdata(L, sm);
	lua_pushinteger(L, (lua_Integer)(sizeof(*sm) + extra_len));
	return 2;
}

static lua_State *
new_state(void) {
	lua_State *L = luaL_newstate();
	luaL_openlibs(L);
	static char fake_ctx; // never used: the cases call no network function
	lua_pushlightuserdata(L, &fake_ctx);
	lua_setfield(L, LUA_REGISTRYINDEX, "skynet_context");
	luaL_requiref(L, "skynet.socketdriver", luaopen_skynet_socketdriver, 0);
	lua_setglobal(L, "driver");
	lua_pushcfunction(L, lmsg);
	lua_setglobal(L, "msg");
	// DATA buffers and their release come from the driver itself (str2p, drop).
	tt_lua_run(L, "buf = driver.str2p; free = function(p) driver.drop(p) end");
	return L;
}

static void
unpack_every_event(int *failed) {
	lua_State *L = new_state();
	TT_CHECK(tt_lua_run(L, "local m, sz = msg(1, 3, 0, 'payload')\n"
	                       "local t, id, ud, p = driver.unpack(m, sz)\n"
	                       "local ok = t == 1 and id == 3 and ud == 7 and type(p) == 'userdata'\n"
	                       "driver.drop(p, ud); free(m)\n"
	                       "return ok"));
	TT_CHECK(tt_lua_run(L, "local m, sz = msg(2, 4, 8000, '0.0.0.0')\n"
	                       "local t, id, ud, s = driver.unpack(m, sz); free(m)\n"
	                       "return t == 2 and id == 4 and ud == 8000 and s == '0.0.0.0'"));
	TT_CHECK(tt_lua_run(L, "local m, sz = msg(3, 4, 0)\n"
	                       "local t, id, ud, s = driver.unpack(m, sz); free(m)\n"
	                       "return t == 3 and id == 4 and s == nil"));
	TT_CHECK(tt_lua_run(L, "local m, sz = msg(4, 1, 9, '127.0.0.1:4000')\n"
	                       "local t, id, ud, s = driver.unpack(m, sz); free(m)\n"
	                       "return t == 4 and id == 1 and ud == 9 and s == '127.0.0.1:4000'"));
	TT_CHECK(tt_lua_run(L, "local m, sz = msg(5, 2, 0, 'Connection refused')\n"
	                       "local t, id, ud, s = driver.unpack(m, sz); free(m)\n"
	                       "return t == 5 and s == 'Connection refused'"));
	TT_CHECK(tt_lua_run(L, "local m, sz = msg(7, 2, 1024)\n"
	                       "local t, id, ud = driver.unpack(m, sz); free(m)\n"
	                       "return t == 7 and ud == 1024"));
	// UDP: the sender address follows; udp_address decodes it.
	TT_CHECK(tt_lua_run(L, "local from = string.char(4, 0x1f, 0x90, 127, 0, 0, 1)\n"
	                       "local m, sz = msg(6, 5, 0, 'dgram', from)\n"
	                       "local t, id, ud, p, f = driver.unpack(m, sz)\n"
	                       "local ok = t == 6 and ud == 5 and f == from\n"
	                       "driver.drop(p, ud); free(m)\n"
	                       "local ip, port = driver.udp_address(f)\n"
	                       "return ok and ip == '127.0.0.1' and port == 8080"));
	TT_CHECK(tt_lua_run(L, "local a = string.char(6, 0, 53) .. string.rep('\\0', 15) .. '\\1'\n"
	                       "local ip, port = driver.udp_address(a)\n"
	                       "return ip == '::1' and port == 53 and\n"
	                       "  not pcall(driver.udp_address, 'junk')"));
	lua_close(L);
}

static void
helpers(int *failed) {
	lua_State *L = new_state();
	TT_CHECK(
	    tt_lua_run(L, "return driver.header('\\1') == 1 and driver.header('\\1\\2') == 258\n"
	                  "  and driver.header('\\255\\255\\255\\255') == 0xffffffff\n"
	                  "  and not pcall(driver.header, '') and not pcall(driver.header, '12345')"));
	TT_CHECK(tt_lua_run(L, "local p, n = driver.str2p('copy')\n"
	                       "local ok = type(p) == 'userdata' and n == 4\n"
	                       "driver.drop(p, n)\n"
	                       "return ok"));
	// Malformed addresses raise before anything is sent.
	TT_CHECK(tt_lua_run(L, "return not pcall(driver.connect, 'no-port')\n"
	                       "  and not pcall(driver.connect, '127.0.0.1:99999')\n"
	                       "  and not pcall(driver.connect, '[::1:80')\n"
	                       "  and not pcall(driver.listen, '127.0.0.1', -1)"));
	lua_close(L);
}

int
main(void) {
	TT_RUN(unpack_every_event);
	TT_RUN(helpers);
	return tt_summary();
}
