/*
 * skynet.socketdriver: the C driver under skynet.socket, gateserver and
 * friends. It wraps skynet_socket.h for the calling service
 * (the light userdata "skynet_context" in the registry). Received bytes
 * are buffered in Lua, by skynet.socket.
 *
 * Addresses: host, port as two arguments, or one string "host:port" /
 * "[v6addr]:port" when port is nil. Ids are integers (see skynet_socket.h:
 * a closed id is never reused for a newer socket soon).
 *
 * Payloads (send, lsend, udp_send): a string (copied), a table of strings
 * (concatenated), a light userdata plus an integer size (donated: the
 * socket server frees it on every path), or a full userdata with an
 * optional size (default: its length; copied).
 *
 * Network (events arrive later as PTYPE_SOCKET messages, see unpack):
 *   connect(host, port) -> id | nil, err     CONNECT (peer ip) or ERROR follows.
 *   listen(host, port[, backlog]) or listen("host:port", nil[, backlog]) -> id
 *       CONNECT (ud = port, bound ip) follows.
 *       A bind or listen failure raises "cannot listen on host:port: <reason>"
 *       (no position: the cause is outside the code), e.g. "cannot listen on
 *       127.0.0.1:8888: address already in use (is another node running?)".
 *   start(id)      Start/resume reading or accepting; take ownership. CONNECT
 *                  "start" / "transfer", or ERROR "invalid socket", follows.
 *   pause(id)      Stop reading until the next start. No event.
 *   close(id)      Close once queued output is sent. CLOSE follows.
 *   shutdown(id)   Close now, dropping queued output. CLOSE follows.
 *   nodelay(id)    TCP_NODELAY.
 *   consumer(id, handle)  Flow control: handle (an integer; 0 or nil = the
 *                  owner) consumes id's data, so id stops being read while
 *                  handle's mailbox is at its high-water mark (see
 *                  skynet_socket_consumer). A gate forwarding id to an
 *                  agent names the agent.
 *   flow_hold(n) -> count  Flow control: the calling service holds n more
 *                  requests (negative: fewer) outside its mailbox (parked
 *                  coroutines); they weigh like waiting messages. Returns
 *                  the count (never below 0).
 *   send(id, payload) -> boolean    false: id is not an open socket.
 *   lsend(id, payload) -> boolean   Low priority: after the normal queue.
 *   bind(fd) -> id                  Wrap an OS fd (0 = stdin). CONNECT "binding".
 *   udp([host[, port]]) -> id       Raises "udp init failed" on failure.
 *   udp_listen(host, port) -> id    A bound UDP socket (same errors).
 *   udp_dial(host, port) -> id      A connected UDP socket (same errors).
 *   udp_connect(id, host, port)     Default destination; raises "udp connect failed".
 *   udp_send(id, from, payload) -> boolean   from: an address string as
 *                                   unpack returns it for a UDP event.
 *   udp_address(from) -> ip, port   Decode such an address (raises on junk).
 *   info() -> { {id=, type="LISTEN"|"TCP"|"UDP"|"BIND", address=owner handle,
 *                read=, write=, rtime=, wtime=, wbuffer=, reading=, writing=,
 *                closing=, flow_paused=, flow_pauses=, consumer= (only when
 *                one was named), peer="ip:port" | sock="ip:port" (listen,
 *                udp: the bound address)}, ... }
 *       reading: the owner wants input; flow_paused: not read because the
 *       consumer (or owner) is behind; flow_pauses: how often that happened.
 *       rtime/wtime: skynet.now() of the last read/write (0: never).
 *   resolve(host) -> { ip, ... }    getaddrinfo in the caller (blocks this
 *                                   worker on DNS); raises the resolver error.
 *
 * Messages:
 *   unpack(msg, sz) -> event, id, ud, data[, from]
 *       1 DATA    data = light userdata of ud bytes, owned by the caller
 *                 (push it into a buffer, or drop it).
 *       2 CONNECT data = string: peer ip, bound ip (ud = port) or a word.
 *       3 CLOSE   data = nil.
 *       4 ACCEPT  id = listener, ud = new id, data = "ip:port".
 *       5 ERROR   data = string (at most 128 bytes).
 *       6 UDP     data = light userdata of ud bytes (owned by the caller),
 *                 from = the sender address (for udp_send/udp_address).
 *       7 WARNING ud = KB waiting to be sent (0: drained), data = nil.
 *   drop(msg, sz)         Free a DATA/UDP buffer.
 *   str2p(str) -> ptr, sz Copy a string into a buffer the caller owns.
 *   header(str) -> n      Big-endian unsigned integer of a 1..4 byte string.
 */
#include "skynet.h"
#include "skynet_socket.h"

#include <lauxlib.h>
#include <lua.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define HOST_MAX 256 // longest host accepted in "host:port"

static struct skynet_context *
ctx_of(lua_State *L) {
	return lua_touserdata(L, lua_upvalueindex(1));
}

/* An id argument; ids outside int range are reported as -1 (never open). */
static int
check_id(lua_State *L, int idx) {
	lua_Integer id = luaL_checkinteger(L, idx);
	return (id < 0 || id > INT32_MAX) ? -1 : (int)id;
}

/* ---- addresses ------------------------------------------------------------ */

struct address {
	char host[HOST_MAX];
	int port;
};

/*
 * host, port at idx and idx+1, or one "host:port" / "[v6]:port" string at
 * idx when idx+1 is nil. Raises on malformed input.
 */
static void
check_address(lua_State *L, int idx, struct address *a) {
	size_t len = 0;
	const char *s = luaL_checklstring(L, idx, &len);
	if (!lua_isnoneornil(L, idx + 1)) {
		lua_Integer port = luaL_checkinteger(L, idx + 1);
		luaL_argcheck(L, len < HOST_MAX, idx, "host too long");
		luaL_argcheck(L, port >= 0 && port <= 65535, idx + 1, "bad port");
		memcpy(a->host, s, len + 1);
		a->port = (int)port;
		return;
	}
	const char *colon = NULL;
	const char *host = s;
	size_t host_len;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		luaL_argcheck(L, close != NULL && close[1] == ':', idx, "bad address");
		host = s + 1;
		host_len = (size_t)(close - host);
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		luaL_argcheck(L, colon != NULL, idx, "address needs a port");
		host_len = (size_t)(colon - s);
	}
	luaL_argcheck(L, host_len < HOST_MAX, idx, "host too long");
	char *end = NULL;
	long port = strtol(colon + 1, &end, 10);
	luaL_argcheck(L, end != colon + 1 && *end == '\0' && port >= 0 && port <= 65535, idx,
	              "bad port");
	memcpy(a->host, host, host_len);
	a->host[host_len] = '\0';
	a->port = (int)port;
}

/* An optional host at idx (nil: none) and port at idx+1 (default 0). */
static const char *
opt_host(lua_State *L, int idx, struct address *a) {
	a->port = (int)luaL_optinteger(L, idx + 1, 0);
	luaL_argcheck(L, a->port >= 0 && a->port <= 65535, idx + 1, "bad port");
	if (lua_isnoneornil(L, idx))
		return NULL;
	size_t len = 0;
	const char *s = luaL_checklstring(L, idx, &len);
	luaL_argcheck(L, len < HOST_MAX, idx, "host too long");
	memcpy(a->host, s, len + 1);
	return a->host;
}

/* ---- network -------------------------------------------------------------- */

static int
lconnect(lua_State *L) {
	struct address a;
	check_address(L, 1, &a);
	int id = skynet_socket_connect(ctx_of(L), a.host, a.port);
	if (id < 0) {
		lua_pushnil(L);
		lua_pushstring(L, id == SKYNET_EFULL ? "too many sockets" : "bad address");
		return 2;
	}
	lua_pushinteger(L, id);
	return 1;
}

/* Raise "cannot listen on host:port: reason" (reason lower-cased at its start). */
static int
listen_failed(lua_State *L, const struct address *a, const char *reason) {
	bool v6 = strchr(a->host, ':') != NULL;
	const char *hint =
	    strcmp(reason, "Address already in use") == 0 ? " (is another node running?)" : "";
	char first[2] = {(char)tolower((unsigned char)reason[0]), '\0'};
	lua_pushfstring(L, "cannot listen on %s%s%s:%d: %s%s%s", v6 ? "[" : "",
	                a->host[0] ? a->host : "0.0.0.0", v6 ? "]" : "", a->port, first, reason + 1,
	                hint);
	return lua_error(L);
}

static int
llisten(lua_State *L) {
	struct address a;
	check_address(L, 1, &a);
	int backlog = (int)luaL_optinteger(L, 3, 0); // 0: the node's socket_backlog
	const char *reason = NULL;
	int id = skynet_socket_listen(ctx_of(L), a.host, a.port, backlog, &reason);
	if (id < 0)
		return listen_failed(L, &a, reason && reason[0] ? reason : "unknown error");
	lua_pushinteger(L, id);
	return 1;
}

static int
lstart(lua_State *L) {
	skynet_socket_start(ctx_of(L), check_id(L, 1));
	return 0;
}

static int
lpause(lua_State *L) {
	skynet_socket_pause(ctx_of(L), check_id(L, 1));
	return 0;
}

static int
lclose(lua_State *L) {
	skynet_socket_close(ctx_of(L), check_id(L, 1));
	return 0;
}

static int
lshutdown(lua_State *L) {
	skynet_socket_shutdown(ctx_of(L), check_id(L, 1));
	return 0;
}

static int
lnodelay(lua_State *L) {
	skynet_socket_nodelay(ctx_of(L), check_id(L, 1));
	return 0;
}

static int
lflow_hold(lua_State *L) {
	lua_Integer n = luaL_checkinteger(L, 1);
	luaL_argcheck(L, n >= -INT32_MAX && n <= INT32_MAX, 1, "out of range");
	lua_pushinteger(L, skynet_socket_flow_hold(ctx_of(L), (int)n));
	return 1;
}

static int
lconsumer(lua_State *L) {
	int id = check_id(L, 1);
	lua_Integer handle = luaL_optinteger(L, 2, 0);
	luaL_argcheck(L, handle >= 0 && handle <= UINT32_MAX, 2, "bad service handle");
	skynet_socket_consumer(ctx_of(L), id, (uint32_t)handle);
	return 0;
}

static int
lbind(lua_State *L) {
	lua_Integer fd = luaL_checkinteger(L, 1);
	luaL_argcheck(L, fd >= 0 && fd <= INT32_MAX, 1, "bad fd");
	int id = skynet_socket_bind(ctx_of(L), (int)fd);
	if (id < 0)
		return luaL_error(L, "socketdriver.bind: too many sockets");
	lua_pushinteger(L, id);
	return 1;
}

/* ---- payloads ------------------------------------------------------------- */

struct payload {
	const void *data;
	size_t sz;
	bool owned; // skynet_malloc'd: donated to the socket server
};

/* Concatenate a table of strings into one owned buffer (validated first). */
static void
table_payload(lua_State *L, int idx, struct payload *p) {
	lua_Integer n = luaL_len(L, idx);
	size_t total = 0;
	for (lua_Integer i = 1; i <= n; i++) {
		lua_geti(L, idx, i);
		size_t len = 0;
		if (lua_type(L, -1) != LUA_TSTRING)
			luaL_error(L, "socketdriver: table payload item %d is not a string", (int)i);
		lua_tolstring(L, -1, &len);
		total += len;
		lua_pop(L, 1);
	}
	char *buf = skynet_malloc(total);
	size_t off = 0;
	for (lua_Integer i = 1; i <= n; i++) {
		lua_geti(L, idx, i);
		size_t len = 0;
		const char *s = lua_tolstring(L, -1, &len);
		memcpy(buf + off, s, len);
		off += len;
		lua_pop(L, 1);
	}
	p->data = buf;
	p->sz = total;
	p->owned = true;
}

/* The payload at idx (and its size at idx+1 where one applies). Raises on bad input. */
static void
check_payload(lua_State *L, int idx, struct payload *p) {
	p->owned = false;
	switch (lua_type(L, idx)) {
	case LUA_TSTRING:
		p->data = lua_tolstring(L, idx, &p->sz);
		return;
	case LUA_TLIGHTUSERDATA: {
		lua_Integer sz = luaL_checkinteger(L, idx + 1);
		luaL_argcheck(L, sz >= 0, idx + 1, "negative size");
		p->data = lua_touserdata(L, idx);
		p->sz = (size_t)sz;
		p->owned = true;
		return;
	}
	case LUA_TUSERDATA: {
		size_t len = lua_rawlen(L, idx);
		lua_Integer sz = luaL_optinteger(L, idx + 1, (lua_Integer)len);
		luaL_argcheck(L, sz >= 0 && (size_t)sz <= len, idx + 1, "bad size");
		p->data = lua_touserdata(L, idx);
		p->sz = (size_t)sz;
		return;
	}
	case LUA_TTABLE:
		table_payload(L, idx, p);
		return;
	default:
		luaL_argerror(L, idx, "string, table, or userdata expected");
	}
}

static int
send_payload(lua_State *L, bool low) {
	int id = check_id(L, 1);
	struct payload p;
	check_payload(L, 2, &p);
	int err;
	if (p.owned) {
		void *data = (void *)p.data;
		err = low ? skynet_socket_send_lowpriority(ctx_of(L), id, data, p.sz)
		          : skynet_socket_send(ctx_of(L), id, data, p.sz);
	} else {
		err = skynet_socket_send_copy(ctx_of(L), id, p.data, p.sz, low);
	}
	lua_pushboolean(L, err == 0);
	return 1;
}

static int
lsend(lua_State *L) {
	return send_payload(L, false);
}

static int
llsend(lua_State *L) {
	return send_payload(L, true);
}

/* ---- UDP ------------------------------------------------------------------ */

static int
push_udp_id(lua_State *L, int id) {
	if (id < 0)
		return luaL_error(L, "udp init failed");
	lua_pushinteger(L, id);
	return 1;
}

static int
ludp(lua_State *L) {
	struct address a;
	const char *host = opt_host(L, 1, &a);
	return push_udp_id(L, skynet_socket_udp(ctx_of(L), host, a.port));
}

static int
ludp_listen(lua_State *L) {
	struct address a;
	check_address(L, 1, &a);
	return push_udp_id(L, skynet_socket_udp_listen(ctx_of(L), a.host, a.port));
}

static int
ludp_dial(lua_State *L) {
	struct address a;
	check_address(L, 1, &a);
	return push_udp_id(L, skynet_socket_udp_dial(ctx_of(L), a.host, a.port));
}

static int
ludp_connect(lua_State *L) {
	int id = check_id(L, 1);
	struct address a;
	check_address(L, 2, &a);
	if (skynet_socket_udp_connect(ctx_of(L), id, a.host, a.port) != 0)
		return luaL_error(L, "udp connect failed");
	return 0;
}

/* A UDP address string argument: its bytes, length checked. */
static const char *
check_udp_address(lua_State *L, int idx) {
	size_t len = 0;
	const char *s = luaL_checklstring(L, idx, &len);
	bool ok = (len == 7 && s[0] == 4) || (len == 19 && s[0] == 6);
	luaL_argcheck(L, ok, idx, "invalid udp address");
	return s;
}

static int
ludp_send(lua_State *L) {
	int id = check_id(L, 1);
	const char *address = check_udp_address(L, 2);
	struct payload p;
	check_payload(L, 3, &p);
	int err = skynet_socket_udp_send(ctx_of(L), id, address, p.data, p.sz);
	if (p.owned)
		skynet_free((void *)p.data); // udp_send copies
	lua_pushboolean(L, err == 0);
	return 1;
}

static int
ludp_address(lua_State *L) {
	const uint8_t *a = (const uint8_t *)check_udp_address(L, 1);
	char ip[INET6_ADDRSTRLEN];
	inet_ntop(a[0] == 4 ? AF_INET : AF_INET6, a + 3, ip, sizeof(ip));
	lua_pushstring(L, ip);
	lua_pushinteger(L, (a[1] << 8) | a[2]);
	return 2;
}

/* ---- info and resolve ----------------------------------------------------- */

static const char *
info_type_name(int type) {
	switch (type) {
	case SKYNET_SOCKET_INFO_LISTEN:
		return "LISTEN";
	case SKYNET_SOCKET_INFO_UDP:
		return "UDP";
	case SKYNET_SOCKET_INFO_BIND:
		return "BIND";
	default:
		return "TCP";
	}
}

static void
push_info(lua_State *L, const struct skynet_socket_info *si) {
	lua_createtable(L, 0, 16);
	lua_pushinteger(L, si->id);
	lua_setfield(L, -2, "id");
	lua_pushstring(L, info_type_name(si->type));
	lua_setfield(L, -2, "type");
	lua_pushinteger(L, si->owner);
	lua_setfield(L, -2, "address");
	lua_pushinteger(L, (lua_Integer)si->read_bytes);
	lua_setfield(L, -2, "read");
	lua_pushinteger(L, (lua_Integer)si->write_bytes);
	lua_setfield(L, -2, "write");
	lua_pushinteger(L, (lua_Integer)si->rtime_cs);
	lua_setfield(L, -2, "rtime");
	lua_pushinteger(L, (lua_Integer)si->wtime_cs);
	lua_setfield(L, -2, "wtime");
	lua_pushinteger(L, (lua_Integer)si->wbuffer);
	lua_setfield(L, -2, "wbuffer");
	lua_pushboolean(L, si->reading);
	lua_setfield(L, -2, "reading");
	lua_pushboolean(L, si->writing);
	lua_setfield(L, -2, "writing");
	lua_pushboolean(L, si->closing);
	lua_setfield(L, -2, "closing");
	lua_pushboolean(L, si->flow_paused);
	lua_setfield(L, -2, "flow_paused");
	lua_pushinteger(L, (lua_Integer)si->flow_pauses);
	lua_setfield(L, -2, "flow_pauses");
	if (si->consumer != 0) {
		lua_pushinteger(L, si->consumer);
		lua_setfield(L, -2, "consumer");
	}
	if (si->name[0] != '\0') {
		lua_pushstring(L, si->name);
		bool bound = si->type == SKYNET_SOCKET_INFO_LISTEN || si->type == SKYNET_SOCKET_INFO_UDP;
		lua_setfield(L, -2, bound ? "sock" : "peer");
	}
}

static int
linfo(lua_State *L) {
	int n = 0;
	struct skynet_socket_info *list = skynet_socket_info(&n);
	// Copy into Lua-owned memory first: a memory error below must not leak list.
	struct skynet_socket_info *copy = lua_newuserdatauv(L, (size_t)n * sizeof(*list) + 1, 0);
	if (n > 0)
		memcpy(copy, list, (size_t)n * sizeof(*list));
	skynet_free(list);
	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++) {
		push_info(L, &copy[i]);
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

static int
lresolve(lua_State *L) {
	const char *host = luaL_checkstring(L, 1);
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	struct addrinfo *list = NULL;
	int status = getaddrinfo(host, NULL, &hints, &list);
	if (status != 0)
		return luaL_error(L, "%s", gai_strerror(status));
	// Copy the addresses out before touching Lua, so no error leaves list behind.
	char ips[16][INET6_ADDRSTRLEN];
	int n = 0;
	for (struct addrinfo *ai = list; ai != NULL && n < 16; ai = ai->ai_next) {
		const void *addr = ai->ai_family == AF_INET6
		                       ? (const void *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr
		                       : (const void *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr;
		if (inet_ntop(ai->ai_family, addr, ips[n], sizeof(ips[n])) == NULL)
			continue;
		bool seen = false;
		for (int i = 0; i < n && !seen; i++)
			seen = strcmp(ips[i], ips[n]) == 0;
		if (!seen)
			n++;
	}
	freeaddrinfo(list);
	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++) {
		lua_pushstring(L, ips[i]);
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

/* ---- messages ------------------------------------------------------------- */

static int
lunpack(lua_State *L) {
	luaL_checktype(L, 1, LUA_TLIGHTUSERDATA);
	const struct skynet_socket_message *sm = lua_touserdata(L, 1);
	lua_Integer sz = luaL_checkinteger(L, 2);
	luaL_argcheck(L, sm != NULL && sz >= (lua_Integer)sizeof(*sm), 2, "not a socket message");
	lua_pushinteger(L, sm->type);
	lua_pushinteger(L, sm->id);
	lua_pushinteger(L, sm->ud);
	const char *extra = (const char *)(sm + 1);
	size_t extra_sz = (size_t)sz - sizeof(*sm);
	switch (sm->type) {
	case SKYNET_SOCKET_TYPE_DATA:
		lua_pushlightuserdata(L, sm->buffer);
		return 4;
	case SKYNET_SOCKET_TYPE_UDP: {
		lua_pushlightuserdata(L, sm->buffer);
		int addr_sz = 0;
		const char *addr = skynet_socket_udp_address(sm, (size_t)sz, &addr_sz);
		if (addr == NULL)
			return 4;
		lua_pushlstring(L, addr, (size_t)addr_sz);
		return 5;
	}
	case SKYNET_SOCKET_TYPE_CONNECT:
	case SKYNET_SOCKET_TYPE_ACCEPT:
	case SKYNET_SOCKET_TYPE_ERROR:
		lua_pushlstring(L, extra, extra_sz);
		return 4;
	default:
		return 3;
	}
}

static int
ldrop(lua_State *L) {
	skynet_free(lua_touserdata(L, 1));
	return 0;
}

static int
lstr2p(lua_State *L) {
	size_t sz = 0;
	const char *s = luaL_checklstring(L, 1, &sz);
	void *p = skynet_malloc(sz);
	memcpy(p, s, sz);
	lua_pushlightuserdata(L, p);
	lua_pushinteger(L, (lua_Integer)sz);
	return 2;
}

static int
lheader(lua_State *L) {
	size_t sz = 0;
	const uint8_t *s = (const uint8_t *)luaL_checklstring(L, 1, &sz);
	luaL_argcheck(L, sz >= 1 && sz <= 4, 1, "header must be 1 to 4 bytes");
	lua_Integer n = 0;
	for (size_t i = 0; i < sz; i++)
		n = (n << 8) | s[i];
	lua_pushinteger(L, n);
	return 1;
}

int
luaopen_skynet_socketdriver(lua_State *L) {
	luaL_checkversion(L);
	static const luaL_Reg net[] = {
	    {"connect", lconnect},
	    {"listen", llisten},
	    {"start", lstart},
	    {"pause", lpause},
	    {"close", lclose},
	    {"shutdown", lshutdown},
	    {"nodelay", lnodelay},
	    {"send", lsend},
	    {"lsend", llsend},
	    {"bind", lbind},
	    {"udp", ludp},
	    {"udp_listen", ludp_listen},
	    {"udp_dial", ludp_dial},
	    {"udp_connect", ludp_connect},
	    {"udp_send", ludp_send},
	    {"consumer", lconsumer},
	    {"flow_hold", lflow_hold},
	    {NULL, NULL},
	};
	static const luaL_Reg plain[] = {
	    {"udp_address", ludp_address}, {"info", linfo}, {"resolve", lresolve},
	    {"unpack", lunpack},           {"drop", ldrop}, {"str2p", lstr2p},
	    {"header", lheader},           {NULL, NULL},
	};
	luaL_newlibtable(L, net);
	lua_getfield(L, LUA_REGISTRYINDEX, "skynet_context");
	struct skynet_context *ctx = lua_touserdata(L, -1);
	if (ctx == NULL)
		return luaL_error(L, "skynet.socketdriver: no skynet_context in the registry");
	luaL_setfuncs(L, net, 1);
	luaL_setfuncs(L, plain, 0);
	return 1;
}
