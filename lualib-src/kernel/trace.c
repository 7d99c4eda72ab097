/*
 * skynet.kernel, spans: what a traced coroutine records and what its
 * messages carry.
 *
 * A traced coroutine has a tag (UV_TRACE_TAG[co], skynet's trace tag: for
 * traces begun here, the 32 hex digits of the trace id) and a span
 * (UV_TRACE_SPAN[co], a full userdata holding a struct skynet_span: its id,
 * its parent's, where and when it began). The span ends, and is kept in the
 * node's ring (lua-span.c), when the coroutine stops for good, or when it
 * begins another (a server loop serving request after request).
 *
 * The trace payload. Before each call, send and redirect of a traced
 * coroutine, a PTYPE_TRACE message goes to the destination, from the same
 * source, as skynet does before calls: its text is the tag, followed by a
 * space and the 16 hex digits of the sender's span id. The receiver
 * (dispatch.c) attaches it to the next request from that source, and the
 * coroutine serving that request begins a span whose parent is the
 * sender's span. A payload without the suffix (skynet.tracecall, or a
 * skynet peer through the cluster) gives a span without a parent.
 *
 * Cost. k->traced_n counts the coroutines with a tag and k->trace_pending
 * the payloads announced and not yet taken (every write of UV_TRACE_TAG and
 * UV_TRACE_SOURCE goes through kernel_set_tag and kernel_set_trace_source);
 * the send paths, the start of a request and the end of a coroutine look
 * at the tables only while these are not 0, so a service with no traced
 * coroutine pays one branch per message.
 *
 * Owns: UV_TRACE_SPAN, k->traced_n, k->trace_pending, k->trace_quiet and
 * k->trace_read (config trace_lines, read once, when the service first
 * traces). Sets UV_TRACE_TAG entries with the spans it begins. Reads:
 * UV_RUNNING, SERVICE_NAME. skynet.error (kernel_lerror) is here too: it
 * reads the running coroutine's tag.
 */

#include "kernel.h"
#include "../lua-span.h"

#include <lauxlib.h>

#include <string.h>

#define PAYLOAD_SUFFIX (1 + SPAN_ID_HEX) // " " and a span id

void
kernel_trace_on(struct kernel *k) {
	if (!k->trace_read) {
		k->trace_read = true;
		const char *v = skynet_command(k->ctx, "GETENV", "trace_lines");
		k->trace_quiet = v != NULL && strcmp(v, "false") == 0;
	}
}

/* t[key at key] = the value on top (popped) in state table v; returns how
 * the number of entries changed (-1, 0, 1). */
static int
set_counted(lua_State *L, int K, int v, int key) {
	key = lua_absindex(L, key);
	bool now = !lua_isnil(L, -1);
	bool was = kernel_get(L, K, v, key) != LUA_TNIL;
	lua_pop(L, 1);
	kernel_set(L, K, v, key);
	return (int)now - (int)was;
}

void
kernel_set_tag(lua_State *L, int K, struct kernel *k, int co) {
	k->traced_n += set_counted(L, K, UV_TRACE_TAG, co);
}

void
kernel_set_trace_source(lua_State *L, int K, struct kernel *k, int source) {
	k->trace_pending += set_counted(L, K, UV_TRACE_SOURCE, source);
}

/* The span of the coroutine at co, or NULL. */
static struct skynet_span *
span_of(lua_State *L, int K, int co) {
	struct skynet_span *s = NULL;
	if (kernel_get(L, K, UV_TRACE_SPAN, co) == LUA_TUSERDATA)
		s = lua_touserdata(L, -1);
	lua_pop(L, 1);
	return s;
}

/* The span's name: the service's name, then the text at name (when a string). */
static void
name_span(lua_State *L, struct skynet_span *s, int name) {
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	if (lua_getglobal(L, "SERVICE_NAME") == LUA_TSTRING)
		luaL_addvalue(&b);
	else
		lua_pop(L, 1);
	if (name != 0 && lua_type(L, name) == LUA_TSTRING) {
		luaL_addchar(&b, ' ');
		lua_pushvalue(L, name);
		luaL_addvalue(&b);
	}
	luaL_pushresult(&b);
	size_t len;
	const char *text = lua_tolstring(L, -1, &len);
	if (len >= sizeof(s->name))
		len = sizeof(s->name) - 1;
	memcpy(s->name, text, len);
	s->name[len] = '\0';
	lua_pop(L, 1);
}

void
kernel_span_end(lua_State *L, int K, struct kernel *k, int co, bool failed) {
	co = lua_absindex(L, co);
	struct skynet_span *s = span_of(L, K, co);
	if (s == NULL)
		return;
	s->end_ns = skynet_span_wall_ns();
	s->status = failed ? SPAN_ERROR : SPAN_OK;
	skynet_span_keep(k->ctx, s);
	lua_pushnil(L);
	kernel_set(L, K, UV_TRACE_SPAN, co);
}

void
kernel_span_begin(lua_State *L, int K, struct kernel *k, const struct kernel_span_from *from) {
	int co = lua_absindex(L, from->co);
	int tag = lua_absindex(L, from->tag);
	kernel_trace_on(k);
	kernel_span_end(L, K, k, co, false);
	struct skynet_span *s = lua_newuserdatauv(L, sizeof(*s), 0);
	memset(s, 0, sizeof(*s));
	size_t len;
	const char *text = lua_tolstring(L, tag, &len);
	skynet_span_trace_of(text, len, s->trace);
	s->span = skynet_span_new_id();
	s->parent = from->parent;
	s->source = from->source;
	s->address = kernel_self(k);
	s->start_ns = skynet_span_wall_ns();
	name_span(L, s, from->name != 0 ? lua_absindex(L, from->name) : 0);
	kernel_set(L, K, UV_TRACE_SPAN, co);
	lua_pushvalue(L, tag);
	kernel_set_tag(L, K, k, co);
}

uint64_t
kernel_trace_split(lua_State *L, int payload) {
	size_t len;
	const char *p = lua_tolstring(L, payload, &len);
	uint8_t id[8];
	if (len > PAYLOAD_SUFFIX && p[len - PAYLOAD_SUFFIX] == ' ' &&
	    skynet_span_unhex(p + len - SPAN_ID_HEX, 8, id)) {
		lua_pushlstring(L, p, len - PAYLOAD_SUFFIX);
		return skynet_span_id_of(id);
	}
	lua_pushvalue(L, payload);
	return 0;
}

bool
kernel_push_trace_payload(lua_State *L, int K, int co) {
	co = lua_absindex(L, co);
	if (kernel_get(L, K, UV_TRACE_TAG, co) == LUA_TNIL || !lua_toboolean(L, -1)) {
		lua_pop(L, 1);
		return false;
	}
	struct skynet_span *s = span_of(L, K, co);
	if (s != NULL) {
		char hex[PAYLOAD_SUFFIX];
		hex[0] = ' ';
		skynet_span_id_hex(s->span, hex + 1);
		lua_pushlstring(L, hex, sizeof(hex));
		lua_concat(L, 2);
	}
	return true;
}

/* Push the 16 hex digits of the span of the coroutine at co, or nil. */
static void
push_span_hex(lua_State *L, int K, int co) {
	struct skynet_span *s = span_of(L, K, co);
	if (s == NULL) {
		lua_pushnil(L);
		return;
	}
	char hex[SPAN_ID_HEX];
	skynet_span_id_hex(s->span, hex);
	lua_pushlstring(L, hex, sizeof(hex));
}

/*
 * S.trace_begin(tag[, parent[, name]]) -> span: the running coroutine begins
 * a span of the trace tag (ending the one it had), child of the span whose 16
 * hex digits are parent (nil: a root), named by the service and name.
 * Returns the new span's id. Raises on a tag that is not a non-empty string.
 */
int
kernel_ltrace_begin(lua_State *L) {
	enum { ARG_TAG = 1, ARG_PARENT, ARG_NAME, SLOT_KERNEL, SLOT_RUNNING };
	lua_settop(L, ARG_NAME);
	size_t len;
	if (lua_type(L, ARG_TAG) != LUA_TSTRING || (lua_tolstring(L, ARG_TAG, &len), len == 0))
		return luaL_error(L, "skynet.trace: bad tag (%s)", luaL_typename(L, ARG_TAG));
	struct kernel *k = kernel_push(L);
	kernel_push_running(L, SLOT_KERNEL);
	if (lua_isnil(L, SLOT_RUNNING))
		return luaL_error(L, "skynet.trace: no running coroutine");
	struct kernel_span_from from = {.co = SLOT_RUNNING, .tag = ARG_TAG, .name = ARG_NAME};
	uint8_t id[8];
	const char *parent = lua_tolstring(L, ARG_PARENT, &len);
	if (parent != NULL && len == SPAN_ID_HEX && skynet_span_unhex(parent, 8, id))
		from.parent = skynet_span_id_of(id);
	kernel_span_begin(L, SLOT_KERNEL, k, &from);
	push_span_hex(L, SLOT_KERNEL, SLOT_RUNNING);
	return 1;
}

/* S.trace_end([failed]): the running coroutine's span ends; it is traced no more. */
int
kernel_ltrace_end(lua_State *L) {
	enum { ARG_FAILED = 1, SLOT_KERNEL, SLOT_RUNNING };
	lua_settop(L, ARG_FAILED);
	struct kernel *k = kernel_push(L);
	kernel_push_running(L, SLOT_KERNEL);
	if (lua_isnil(L, SLOT_RUNNING))
		return 0;
	kernel_span_end(L, SLOT_KERNEL, k, SLOT_RUNNING, lua_toboolean(L, ARG_FAILED));
	lua_pushnil(L);
	kernel_set_tag(L, SLOT_KERNEL, k, SLOT_RUNNING);
	return 0;
}

/* S.trace_context() -> tag, span of the running coroutine (nil when untraced). */
int
kernel_ltrace_context(lua_State *L) {
	enum { SLOT_KERNEL = 1, SLOT_RUNNING, SLOT_TAG };
	lua_settop(L, 0);
	kernel_push(L);
	kernel_push_running(L, SLOT_KERNEL);
	if (kernel_get(L, SLOT_KERNEL, UV_TRACE_TAG, SLOT_RUNNING) != LUA_TSTRING) {
		lua_pushnil(L);
		return 1;
	}
	push_span_hex(L, SLOT_KERNEL, SLOT_RUNNING);
	return 2;
}

/*
 * skynet.error(...): skynet.core's error; in a traced coroutine the line
 * begins with "[trace <tag>]". Upvalue 1: skynet.core's error.
 */
int
kernel_lerror(lua_State *L) {
	struct kernel *k = kernel_push(L);
	lua_pop(L, 1);
	int n = lua_gettop(L);
	if (k->traced_n > 0) {
		lua_pushnil(L); // room for the kernel at n + 1
		kernel_push(L);
		lua_replace(L, n + 1);
		kernel_push_running(L, n + 1);
		if (kernel_get(L, n + 1, UV_TRACE_TAG, -1) == LUA_TSTRING) {
			lua_pushfstring(L, "[trace %s]", lua_tostring(L, -1));
			lua_replace(L, n + 1);
			lua_settop(L, n + 1);
			lua_rotate(L, 1, 1);
			n++;
		}
		lua_settop(L, n);
	}
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	lua_call(L, n, 0);
	return 0;
}
