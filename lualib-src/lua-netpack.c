/*
 * skynet.netpack: client framing. A frame is a 2-byte big-endian
 * length followed by that many payload bytes (0..65535).
 *
 * API:
 *   filter(queue, msg, sz) -> queue, kind, ...
 *       msg, sz: a PTYPE_SOCKET message (skynet_socket.h). queue: nil or
 *       the userdata a previous call returned (always keep the returned
 *       one; it is created on the first DATA). The kinds:
 *         "data", fd, ptr, sz   exactly one complete frame (payload only;
 *                               the caller owns ptr, a skynet_malloc'd
 *                               buffer, never NULL, even for sz 0)
 *         "more"                several frames were queued: take them with
 *                               pop. Also used for a single frame while
 *                               older frames are still queued, so frames
 *                               always come out in arrival order.
 *         "open", fd, "ip:port" a connection was accepted (fd: new socket)
 *         "close", fd
 *         "error", fd, text
 *         "warning", fd, kbytes
 *         "init", id, ip, port  a listen (or start) confirmation
 *         (no kind)             only part of a frame arrived, or a UDP
 *                               datagram (dropped)
 *       The DATA buffer is always freed. Partial frames (a split header
 *       included) are kept per fd and dropped on "close" and "error".
 *   pop(queue) -> fd, ptr, sz | nothing
 *       The oldest queued frame (the caller owns ptr). Works as an
 *       iterator: for fd, ptr, sz in netpack.pop, queue do ... end
 *   pack(str | ptr, sz) -> ptr, sz + 2
 *       A new buffer (the caller owns it) holding the header and payload.
 *       A ptr argument stays the caller's. Raises "Invalid size (too long)
 *       of data" for payloads of 65536 bytes or more.
 *   tostring(ptr, sz) -> string      Copies the buffer and frees it.
 *   clear(queue)                     Frees every queued frame and partial
 *                                    frame; the queue stays usable. The
 *                                    queue's __gc does the same.
 *
 * The queue: a ring of complete frames (fd, ptr, sz) plus a hash table
 * (fd -> partial frame) with NETPACK_HASH buckets and chaining. Memory per
 * fd is bounded by one partial frame (at most 64 KB).
 */
#include "skynet.h"
#include "skynet_socket.h"

#include <lauxlib.h>
#include <lua.h>

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define NETPACK_METATABLE "skynet.netpack.queue"
#define NETPACK_HASH      1024
#define NETPACK_MAX       65535
#define QUEUE_MIN_SLOTS   16

struct frame {
	int fd;
	int sz;
	char *data; // owned
};

struct partial {
	struct partial *next;
	int fd;
	int header_got; // 0..2 header bytes seen
	uint8_t header0;
	int need; // payload size (valid once header_got == 2)
	int got;
	char *data; // owned, need bytes (once header_got == 2)
};

struct netpack_queue {
	struct frame *ring; // owned, cap slots
	int cap;
	int head;
	int count;
	struct partial *hash[NETPACK_HASH]; // owned chains
};

static struct netpack_queue *
check_queue(lua_State *L, int idx) {
	return luaL_checkudata(L, idx, NETPACK_METATABLE);
}

static struct netpack_queue *
new_queue(lua_State *L) {
	struct netpack_queue *q = lua_newuserdatauv(L, sizeof(*q), 0);
	memset(q, 0, sizeof(*q));
	luaL_setmetatable(L, NETPACK_METATABLE);
	return q;
}

static char *
frame_buffer(int sz) {
	return skynet_malloc(sz > 0 ? (size_t)sz : 1);
}

static void
push_frame(struct netpack_queue *q, int fd, char *data, int sz) {
	if (q->count == q->cap) {
		int cap = q->cap ? q->cap * 2 : QUEUE_MIN_SLOTS;
		struct frame *ring = skynet_malloc((size_t)cap * sizeof(*ring));
		for (int i = 0; i < q->count; i++)
			ring[i] = q->ring[(q->head + i) % q->cap];
		skynet_free(q->ring);
		q->ring = ring;
		q->cap = cap;
		q->head = 0;
	}
	struct frame *f = &q->ring[(q->head + q->count) % q->cap];
	f->fd = fd;
	f->sz = sz;
	f->data = data;
	q->count++;
}

static bool
pop_frame(struct netpack_queue *q, struct frame *out) {
	if (q == NULL || q->count == 0)
		return false;
	*out = q->ring[q->head];
	q->head = (q->head + 1) % q->cap;
	q->count--;
	return true;
}

static struct partial **
bucket(struct netpack_queue *q, int fd) {
	return &q->hash[(unsigned)fd % NETPACK_HASH];
}

/* Unlink and return the partial frame of fd, or NULL. */
static struct partial *
take_partial(struct netpack_queue *q, int fd) {
	struct partial **p = bucket(q, fd);
	while (*p != NULL) {
		struct partial *pt = *p;
		if (pt->fd == fd) {
			*p = pt->next;
			pt->next = NULL;
			return pt;
		}
		p = &pt->next;
	}
	return NULL;
}

static void
keep_partial(struct netpack_queue *q, struct partial *pt) {
	struct partial **b = bucket(q, pt->fd);
	pt->next = *b;
	*b = pt;
}

static void
free_partial(struct partial *pt) {
	if (pt == NULL)
		return;
	skynet_free(pt->data);
	skynet_free(pt);
}

/* Feed a partial frame; returns the bytes used. Complete frames go to the queue. */
static int
feed_partial(struct netpack_queue *q, struct partial *pt, const uint8_t *p, int n, bool *complete) {
	int used = 0;
	if (pt->header_got == 1) {
		pt->need = (pt->header0 << 8) | p[0];
		pt->header_got = 2;
		pt->data = frame_buffer(pt->need);
		pt->got = 0;
		used = 1;
	}
	int take = pt->need - pt->got;
	if (take > n - used)
		take = n - used;
	memcpy(pt->data + pt->got, p + used, (size_t)take);
	pt->got += take;
	used += take;
	*complete = pt->got == pt->need;
	if (*complete) {
		push_frame(q, pt->fd, pt->data, pt->need);
		pt->data = NULL;
	}
	return used;
}

/* Split n bytes read from fd into frames (queued) and at most one partial frame (kept). */
static void
split_frames(struct netpack_queue *q, int fd, const uint8_t *p, int n) {
	struct partial *pt = take_partial(q, fd);
	if (pt != NULL) {
		bool complete = false;
		int used = feed_partial(q, pt, p, n, &complete);
		p += used;
		n -= used;
		if (!complete) {
			keep_partial(q, pt);
			return;
		}
		free_partial(pt);
	}
	while (n >= 2) {
		int need = (p[0] << 8) | p[1];
		p += 2;
		n -= 2;
		char *data = frame_buffer(need);
		if (n >= need) {
			memcpy(data, p, (size_t)need);
			push_frame(q, fd, data, need);
			p += need;
			n -= need;
			continue;
		}
		pt = skynet_calloc(1, sizeof(*pt));
		pt->fd = fd;
		pt->header_got = 2;
		pt->need = need;
		pt->data = data;
		memcpy(data, p, (size_t)n);
		pt->got = n;
		keep_partial(q, pt);
		return;
	}
	if (n == 1) {
		pt = skynet_calloc(1, sizeof(*pt));
		pt->fd = fd;
		pt->header_got = 1;
		pt->header0 = p[0];
		keep_partial(q, pt);
	}
}

static int
push_frame_results(lua_State *L, const struct frame *f) {
	lua_pushinteger(L, f->fd);
	lua_pushlightuserdata(L, f->data);
	lua_pushinteger(L, f->sz);
	return 3;
}

/* The queue is at stack index 1 (after filter's settop). */
static int
filter_data(lua_State *L, struct netpack_queue *q, const struct skynet_socket_message *sm) {
	if (q == NULL) {
		q = new_queue(L);
		lua_replace(L, 1);
	}
	int before = q->count;
	if (sm->buffer != NULL && sm->ud > 0)
		split_frames(q, sm->id, (const uint8_t *)sm->buffer, sm->ud);
	skynet_free(sm->buffer);
	lua_settop(L, 1);
	int produced = q->count - before;
	if (produced == 0)
		return 1;
	if (produced == 1 && before == 0) {
		struct frame f;
		pop_frame(q, &f);
		lua_pushliteral(L, "data");
		return 2 + push_frame_results(L, &f);
	}
	lua_pushliteral(L, "more");
	return 2;
}

static void
drop_partial(struct netpack_queue *q, int fd) {
	if (q != NULL)
		free_partial(take_partial(q, fd));
}

/* Pushes the inline text of sm (msg_sz bytes in all). */
static void
push_text(lua_State *L, const struct skynet_socket_message *sm, lua_Integer msg_sz) {
	size_t n = (size_t)msg_sz - sizeof(*sm);
	lua_pushlstring(L, (const char *)(sm + 1), n);
}

static int
lfilter(lua_State *L) {
	struct netpack_queue *q = lua_isnoneornil(L, 1) ? NULL : check_queue(L, 1);
	luaL_checktype(L, 2, LUA_TLIGHTUSERDATA);
	const struct skynet_socket_message *sm = lua_touserdata(L, 2);
	lua_Integer sz = luaL_checkinteger(L, 3);
	luaL_argcheck(L, sm != NULL && sz >= (lua_Integer)sizeof(*sm), 3, "not a socket message");
	lua_settop(L, 1);
	switch (sm->type) {
	case SKYNET_SOCKET_TYPE_DATA:
		return filter_data(L, q, sm);
	case SKYNET_SOCKET_TYPE_CONNECT:
		lua_pushliteral(L, "init");
		lua_pushinteger(L, sm->id);
		push_text(L, sm, sz);
		lua_pushinteger(L, sm->ud);
		return 5;
	case SKYNET_SOCKET_TYPE_CLOSE:
		drop_partial(q, sm->id);
		lua_pushliteral(L, "close");
		lua_pushinteger(L, sm->id);
		return 3;
	case SKYNET_SOCKET_TYPE_ACCEPT:
		lua_pushliteral(L, "open");
		lua_pushinteger(L, sm->ud);
		push_text(L, sm, sz);
		return 4;
	case SKYNET_SOCKET_TYPE_ERROR:
		drop_partial(q, sm->id);
		lua_pushliteral(L, "error");
		lua_pushinteger(L, sm->id);
		push_text(L, sm, sz);
		return 4;
	case SKYNET_SOCKET_TYPE_WARNING:
		lua_pushliteral(L, "warning");
		lua_pushinteger(L, sm->id);
		lua_pushinteger(L, sm->ud);
		return 4;
	case SKYNET_SOCKET_TYPE_UDP:
		skynet_free(sm->buffer); // a gate has no use for datagrams
		return 1;
	default:
		return 1;
	}
}

static int
lpop(lua_State *L) {
	struct netpack_queue *q = lua_isnoneornil(L, 1) ? NULL : check_queue(L, 1);
	struct frame f;
	if (!pop_frame(q, &f))
		return 0;
	return push_frame_results(L, &f);
}

static void
clear_queue(struct netpack_queue *q) {
	struct frame f;
	while (pop_frame(q, &f))
		skynet_free(f.data);
	skynet_free(q->ring);
	q->ring = NULL;
	q->cap = q->head = q->count = 0;
	for (int i = 0; i < NETPACK_HASH; i++) {
		struct partial *pt = q->hash[i];
		while (pt) {
			struct partial *next = pt->next;
			free_partial(pt);
			pt = next;
		}
		q->hash[i] = NULL;
	}
}

static int
lclear(lua_State *L) {
	if (!lua_isnoneornil(L, 1))
		clear_queue(check_queue(L, 1));
	return 0;
}

static int
lpack(lua_State *L) {
	const char *src;
	size_t len;
	if (lua_type(L, 1) == LUA_TLIGHTUSERDATA || lua_type(L, 1) == LUA_TUSERDATA) {
		lua_Integer sz = luaL_checkinteger(L, 2);
		luaL_argcheck(L, sz >= 0, 2, "negative size");
		src = lua_touserdata(L, 1);
		len = (size_t)sz;
	} else {
		src = luaL_checklstring(L, 1, &len);
	}
	if (len > NETPACK_MAX)
		return luaL_error(L, "Invalid size (too long) of data");
	uint8_t *out = skynet_malloc(len + 2);
	out[0] = (uint8_t)(len >> 8);
	out[1] = (uint8_t)(len & 0xff);
	if (len > 0)
		memcpy(out + 2, src, len);
	lua_pushlightuserdata(L, out);
	lua_pushinteger(L, (lua_Integer)len + 2);
	return 2;
}

static int
ltostring(lua_State *L) {
	void *ptr = lua_touserdata(L, 1);
	lua_Integer sz = luaL_checkinteger(L, 2);
	luaL_argcheck(L, sz >= 0, 2, "negative size");
	if (ptr == NULL) {
		lua_pushliteral(L, "");
		return 1;
	}
	// lua_pushlstring may raise on memory: the buffer leaks then, never double-frees.
	lua_pushlstring(L, ptr, (size_t)sz);
	skynet_free(ptr);
	return 1;
}

static int
lqueue_gc(lua_State *L) {
	clear_queue(check_queue(L, 1));
	return 0;
}

LUAMOD_API int
luaopen_skynet_netpack(lua_State *L) {
	luaL_checkversion(L);
	static const luaL_Reg funcs[] = {
	    {"filter", lfilter}, {"pop", lpop},           {"pack", lpack},
	    {"clear", lclear},   {"tostring", ltostring}, {NULL, NULL},
	};
	if (luaL_newmetatable(L, NETPACK_METATABLE)) {
		lua_pushcfunction(L, lqueue_gc);
		lua_setfield(L, -2, "__gc");
	}
	lua_pop(L, 1);
	luaL_newlib(L, funcs);
	return 1;
}
