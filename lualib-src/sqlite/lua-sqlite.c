/*
 * sqlite.core: the Lua side of skynet.db.sqlite (lualib/skynet/db/sqlite.lua
 * is the API; this module only marshals). It turns Lua calls into requests
 * for a database thread (dbthread.c, which owns every SQLite call) and
 * decodes the thread's answers (wire.h's formats) into Lua values. Nothing
 * here blocks: submitting takes the queue's lock for O(1) work, decoding
 * reads a buffer already in memory.
 *
 *   core.open(owner, id, path, sync, wal, readonly, create, exclusive, busy_ms) -> handle
 *       Starts the thread and queues the OPEN request id. Its answer goes
 *       to the service owner (skynet.self()) as a PTYPE_SQLITE message.
 *   handle:exec(id, kind, sql, ...)   kind core.EXEC or core.QUERY
 *   handle:batch(id, list)            list = { {sql, params...[, n = count]}, ... }
 *   handle:close(id)
 *       Queue a request; true, or false when the thread has stopped.
 *       Raise (before anything is queued) on a value that cannot be bound.
 *   handle:join()    after the answer to close (or to a failed open)
 *   handle:stats()   -> commits, requests
 *   core.decode(msg, sz) -> t, n
 *       The n answers of a PTYPE_SQLITE message, flat in t: for answer i
 *       (from 0), t[4i+1] = id, t[4i+2] = ok, t[4i+3] and t[4i+4] the
 *       values: the error message; nothing (open, close); changes and
 *       last_insert_rowid (exec); the rows (query); the results (batch).
 *   core.blob(s) -> a marker that binds s as a BLOB
 *
 * State. A handle (full userdata) holds one reference on its struct
 * sqlite_db. Its __gc abandons the thread unless it was joined (the thread
 * then finishes what is queued and ends by itself) and drops the reference:
 * a service that exits with an open db leaks no thread.
 */
#include "dbthread.h"
#include "wire.h"

#include "skynet.h"

#include <lauxlib.h>
#include <lua.h>

#include <stdbool.h>
#include <string.h>

#define HANDLE_MT       "skynet.db.sqlite.handle"
#define BLOB_MT         "skynet.db.sqlite.blob"
#define PARAM_MAX_BYTES 1000000000 // SQLite's default SQLITE_MAX_LENGTH; fits wire.h's u32

struct handle {
	struct sqlite_db *db; // owned reference, NULL after __gc
	bool joined;
};

/* Requests. */

static struct handle *
check_handle(lua_State *L) {
	struct handle *h = luaL_checkudata(L, 1, HANDLE_MT);
	if (h->db == NULL)
		luaL_error(L, "sqlite: database is closed");
	return h;
}

static bool
is_blob(lua_State *L, int idx) {
	if (lua_type(L, idx) != LUA_TTABLE || !lua_getmetatable(L, idx))
		return false;
	luaL_getmetatable(L, BLOB_MT);
	bool same = lua_rawequal(L, -1, -2);
	lua_pop(L, 2);
	return same;
}

/* Raise unless the value at idx can be bound (parameter number n of the statement). */
static void
check_value(lua_State *L, int idx, int n) {
	size_t len = 0;
	switch (lua_type(L, idx)) {
	case LUA_TNIL:
	case LUA_TBOOLEAN:
	case LUA_TNUMBER:
		return;
	case LUA_TSTRING:
		len = lua_rawlen(L, idx);
		break;
	default:
		if (!is_blob(L, idx))
			luaL_error(L, "sqlite: parameter %d: cannot bind a %s", n, luaL_typename(L, idx));
		lua_rawgeti(L, idx, 1);
		len = lua_rawlen(L, -1);
		lua_pop(L, 1);
		break;
	}
	if (len > PARAM_MAX_BYTES)
		luaL_error(L, "sqlite: parameter %d: %zu bytes, more than %d", n, len, PARAM_MAX_BYTES);
}

/* Write the value at idx (checked by check_value; raises nothing). */
static void
put_param(lua_State *L, int idx, struct wire_buf *b) {
	size_t n;
	const char *s;
	switch (lua_type(L, idx)) {
	case LUA_TBOOLEAN:
		wire_put_u8(b, WIRE_INT);
		wire_put_i64(b, lua_toboolean(L, idx));
		break;
	case LUA_TNUMBER:
		if (lua_isinteger(L, idx)) {
			wire_put_u8(b, WIRE_INT);
			wire_put_i64(b, (int64_t)lua_tointeger(L, idx));
		} else {
			double fv = (double)lua_tonumber(L, idx);
			int64_t iv;
			memcpy(&iv, &fv, sizeof(iv));
			wire_put_u8(b, WIRE_FLOAT);
			wire_put_i64(b, iv);
		}
		break;
	case LUA_TSTRING:
		s = lua_tolstring(L, idx, &n);
		wire_put_u8(b, WIRE_TEXT);
		wire_put_str(b, s, n);
		break;
	case LUA_TTABLE: // a blob marker: its string is at [1]
		lua_rawgeti(L, idx, 1);
		s = lua_tolstring(L, -1, &n);
		wire_put_u8(b, WIRE_BLOB);
		wire_put_str(b, s, n);
		lua_pop(L, 1);
		break;
	default:
		wire_put_u8(b, WIRE_NULL);
		break;
	}
}

/* Queue a request of kind with the body b built; frees b. Pushes true, or false if stopped. */
static int
submit(lua_State *L, struct handle *h, int kind, uint32_t id, struct wire_buf *b) {
	struct sqlite_req *req = sqlite_req_create(kind, id, b->len);
	if (b->len > 0)
		memcpy(req->body, b->p, b->len);
	skynet_free(b->p);
	lua_pushboolean(L, sqlite_db_submit(h->db, req) == 0);
	return 1;
}

/* handle:exec(id, kind, sql, ...): stack 1 handle, 2 id, 3 kind, 4 sql, 5.. params. */
static int
lexec(lua_State *L) {
	enum { SLOT_ID = 2, SLOT_KIND, SLOT_SQL, SLOT_PARAMS };
	struct handle *h = check_handle(L);
	uint32_t id = (uint32_t)luaL_checkinteger(L, SLOT_ID);
	int kind = (int)luaL_checkinteger(L, SLOT_KIND);
	size_t len;
	const char *sql = luaL_checklstring(L, SLOT_SQL, &len);
	int top = lua_gettop(L);
	luaL_argcheck(L, kind == WIRE_EXEC || kind == WIRE_QUERY, SLOT_KIND, "exec or query");
	for (int i = SLOT_PARAMS; i <= top; i++)
		check_value(L, i, i - SLOT_PARAMS + 1);
	struct wire_buf b = {NULL, 0, 0};
	wire_put_u32(&b, 1);
	wire_put_str(&b, sql, len);
	wire_put_u32(&b, (uint32_t)(top - SLOT_PARAMS + 1));
	for (int i = SLOT_PARAMS; i <= top; i++)
		put_param(L, i, &b);
	return submit(L, h, kind, id, &b);
}

/* The number of parameters of the batch item at idx: item.n - 1, or #item - 1. */
static int
item_params(lua_State *L, int idx) {
	lua_getfield(L, idx, "n");
	lua_Integer n = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : (lua_Integer)lua_rawlen(L, idx);
	lua_pop(L, 1);
	return n > 1 ? (int)n - 1 : 0;
}

/* Raise unless every item of the list at idx is {sql, params...}. */
static void
check_batch(lua_State *L, int idx, lua_Integer count) {
	for (lua_Integer i = 1; i <= count; i++) {
		if (lua_rawgeti(L, idx, i) != LUA_TTABLE)
			luaL_error(L, "sqlite: batch item %d: a table {sql, params...} expected", (int)i);
		int item = lua_gettop(L);
		if (lua_rawgeti(L, item, 1) != LUA_TSTRING)
			luaL_error(L, "sqlite: batch item %d: no sql string at [1]", (int)i);
		lua_pop(L, 1);
		int nparams = item_params(L, item);
		for (int p = 1; p <= nparams; p++) {
			lua_rawgeti(L, item, p + 1);
			check_value(L, -1, p);
			lua_pop(L, 1);
		}
		lua_pop(L, 1);
	}
}

/* Write the batch at idx (checked by check_batch; raises nothing). */
static void
put_batch(lua_State *L, int idx, lua_Integer count, struct wire_buf *b) {
	wire_put_u32(b, (uint32_t)count);
	for (lua_Integer i = 1; i <= count; i++) {
		lua_rawgeti(L, idx, i);
		int item = lua_gettop(L);
		size_t len;
		lua_rawgeti(L, item, 1);
		const char *sql = lua_tolstring(L, -1, &len);
		wire_put_str(b, sql, len);
		lua_pop(L, 1);
		int nparams = item_params(L, item);
		wire_put_u32(b, (uint32_t)nparams);
		for (int p = 1; p <= nparams; p++) {
			lua_rawgeti(L, item, p + 1);
			put_param(L, lua_gettop(L), b);
			lua_pop(L, 1);
		}
		lua_pop(L, 1);
	}
}

/* handle:batch(id, list) */
static int
lbatch(lua_State *L) {
	enum { SLOT_ID = 2, SLOT_LIST };
	struct handle *h = check_handle(L);
	uint32_t id = (uint32_t)luaL_checkinteger(L, SLOT_ID);
	luaL_checktype(L, SLOT_LIST, LUA_TTABLE);
	lua_Integer count = (lua_Integer)lua_rawlen(L, SLOT_LIST);
	luaL_checkstack(L, 8, NULL);
	check_batch(L, SLOT_LIST, count);
	struct wire_buf b = {NULL, 0, 0};
	put_batch(L, SLOT_LIST, count, &b);
	return submit(L, h, WIRE_BATCH, id, &b);
}

/* handle:close(id) */
static int
lclose(lua_State *L) {
	struct handle *h = check_handle(L);
	uint32_t id = (uint32_t)luaL_checkinteger(L, 2);
	struct wire_buf b = {NULL, 0, 0};
	return submit(L, h, WIRE_CLOSE, id, &b);
}

static int
ljoin(lua_State *L) {
	struct handle *h = check_handle(L);
	if (!h->joined) {
		sqlite_db_join(h->db);
		h->joined = true;
	}
	return 0;
}

static int
lstats(lua_State *L) {
	struct handle *h = check_handle(L);
	uint64_t commits, requests;
	sqlite_db_stats(h->db, &commits, &requests);
	lua_pushinteger(L, (lua_Integer)commits);
	lua_pushinteger(L, (lua_Integer)requests);
	return 2;
}

static int
lgc(lua_State *L) {
	struct handle *h = luaL_checkudata(L, 1, HANDLE_MT);
	if (h->db == NULL)
		return 0;
	if (!h->joined)
		sqlite_db_abandon(h->db);
	sqlite_db_release(h->db);
	h->db = NULL;
	return 0;
}

/* core.open(owner, id, path, sync, wal, readonly, create, exclusive, busy_ms) */
static int
lopen(lua_State *L) {
	enum {
		SLOT_OWNER = 1,
		SLOT_ID,
		SLOT_PATH,
		SLOT_SYNC,
		SLOT_WAL,
		SLOT_READONLY,
		SLOT_CREATE,
		SLOT_EXCLUSIVE,
		SLOT_BUSY
	};
	uint32_t owner = (uint32_t)luaL_checkinteger(L, SLOT_OWNER);
	uint32_t id = (uint32_t)luaL_checkinteger(L, SLOT_ID);
	size_t len;
	const char *path = luaL_checklstring(L, SLOT_PATH, &len);
	lua_Integer sync = luaL_checkinteger(L, SLOT_SYNC);
	lua_Integer busy = luaL_checkinteger(L, SLOT_BUSY);
	luaL_argcheck(L, sync >= WIRE_SYNC_OFF && sync <= WIRE_SYNC_FULL, SLOT_SYNC, "bad sync");
	luaL_argcheck(L, strlen(path) == len, SLOT_PATH, "a path without \\0");
	struct handle *h = lua_newuserdatauv(L, sizeof(*h), 0);
	h->db = NULL;
	h->joined = false;
	luaL_setmetatable(L, HANDLE_MT);
	h->db = sqlite_db_create(owner);
	if (h->db == NULL)
		return luaL_error(L, "sqlite: cannot open %s: no thread for it", path);
	struct wire_buf b = {NULL, 0, 0};
	wire_put_u8(&b, (uint8_t)sync);
	wire_put_u8(&b, (uint8_t)lua_toboolean(L, SLOT_WAL));
	wire_put_u8(&b, (uint8_t)lua_toboolean(L, SLOT_READONLY));
	wire_put_u8(&b, (uint8_t)lua_toboolean(L, SLOT_CREATE));
	wire_put_u8(&b, (uint8_t)lua_toboolean(L, SLOT_EXCLUSIVE));
	wire_put_i64(&b, (int64_t)busy);
	wire_put_str(&b, path, len);
	submit(L, h, WIRE_OPEN, id, &b);
	lua_pop(L, 1); // submit's boolean: a new thread takes requests
	return 1;
}

/* Answers. */

static void
malformed(lua_State *L, struct wire_reader *r) {
	if (r->bad)
		luaL_error(L, "sqlite: malformed answer");
}

/* Push the value r is at. */
static void
push_value(lua_State *L, struct wire_reader *r, uint8_t type) {
	size_t n;
	const char *s;
	int64_t iv;
	double fv;
	switch (type) {
	case WIRE_INT:
		lua_pushinteger(L, (lua_Integer)wire_get_i64(r));
		break;
	case WIRE_FLOAT:
		iv = wire_get_i64(r);
		memcpy(&fv, &iv, sizeof(fv));
		lua_pushnumber(L, (lua_Number)fv);
		break;
	default: // WIRE_TEXT, WIRE_BLOB
		s = wire_get_str(r, &n);
		malformed(L, r);
		lua_pushlstring(L, s, n);
		break;
	}
}

/* Push the rows of a WIRE_ROWS result: an array of tables keyed by column name. */
static void
push_rows(lua_State *L, struct wire_reader *r) {
	uint32_t ncols = wire_get_u32(r);
	malformed(L, r);
	luaL_checkstack(L, (int)ncols + 8, "sqlite: too many columns");
	int names = lua_gettop(L) + 1;
	for (uint32_t i = 0; i < ncols; i++) {
		size_t n;
		const char *s = wire_get_str(r, &n);
		malformed(L, r);
		lua_pushlstring(L, s, n);
	}
	uint32_t nrows = wire_get_u32(r);
	malformed(L, r);
	lua_createtable(L, (int)(nrows < 65536 ? nrows : 65536), 0);
	for (uint32_t row = 1; row <= nrows; row++) {
		lua_createtable(L, 0, (int)ncols);
		for (uint32_t c = 0; c < ncols; c++) {
			uint8_t type = wire_get_u8(r);
			malformed(L, r);
			if (type == WIRE_NULL)
				continue;
			lua_pushvalue(L, names + (int)c);
			push_value(L, r, type);
			lua_rawset(L, -3);
		}
		lua_rawseti(L, -2, (lua_Integer)row);
	}
	lua_replace(L, names);
	lua_settop(L, names);
}

/* Push one result of a batch: the rows, or {changes =, last_insert_rowid =}. */
static void
push_batch_result(lua_State *L, struct wire_reader *r) {
	uint8_t tag = wire_get_u8(r);
	malformed(L, r);
	if (tag == WIRE_ROWS) {
		push_rows(L, r);
		return;
	}
	int64_t changes = wire_get_i64(r);
	int64_t rowid = wire_get_i64(r);
	malformed(L, r);
	lua_createtable(L, 0, 2);
	lua_pushinteger(L, (lua_Integer)changes);
	lua_setfield(L, -2, "changes");
	lua_pushinteger(L, (lua_Integer)rowid);
	lua_setfield(L, -2, "last_insert_rowid");
}

/* Set t[base+3] and t[base+4] (t at -1) from a successful answer of kind. */
static void
set_results(lua_State *L, struct wire_reader *r, int kind, lua_Integer base) {
	if (kind == WIRE_EXEC) {
		uint8_t tag = wire_get_u8(r);
		int64_t changes = wire_get_i64(r);
		int64_t rowid = wire_get_i64(r);
		malformed(L, r);
		if (tag != WIRE_CHANGES)
			luaL_error(L, "sqlite: malformed answer");
		lua_pushinteger(L, (lua_Integer)changes);
		lua_seti(L, -2, base + 3);
		lua_pushinteger(L, (lua_Integer)rowid);
		lua_seti(L, -2, base + 4);
	} else if (kind == WIRE_QUERY) {
		if (wire_get_u8(r) != WIRE_ROWS)
			luaL_error(L, "sqlite: malformed answer");
		push_rows(L, r);
		lua_seti(L, -2, base + 3);
	} else if (kind == WIRE_BATCH) {
		uint32_t count = wire_get_u32(r);
		malformed(L, r);
		lua_createtable(L, (int)(count < 65536 ? count : 65536), 0);
		for (uint32_t i = 1; i <= count; i++) {
			push_batch_result(L, r);
			lua_rawseti(L, -2, (lua_Integer)i);
		}
		lua_seti(L, -2, base + 3);
	}
}

/* core.decode(msg, sz) -> t, n (see the top comment) */
static int
ldecode(lua_State *L) {
	struct wire_reader r = {NULL, 0, 0};
	if (lua_type(L, 1) == LUA_TSTRING) {
		r.p = lua_tolstring(L, 1, &r.left);
	} else {
		luaL_checktype(L, 1, LUA_TLIGHTUSERDATA);
		r.p = lua_touserdata(L, 1);
		r.left = (size_t)luaL_checkinteger(L, 2);
	}
	lua_settop(L, 2);
	lua_newtable(L);
	lua_Integer n = 0;
	while (r.left > 0) {
		lua_Integer base = 4 * n;
		lua_pushinteger(L, (lua_Integer)wire_get_u32(&r));
		lua_seti(L, 3, base + 1);
		uint8_t status = wire_get_u8(&r);
		malformed(L, &r);
		lua_pushboolean(L, status != WIRE_ERR);
		lua_seti(L, 3, base + 2);
		if (status == WIRE_ERR) {
			push_value(L, &r, WIRE_TEXT);
			lua_seti(L, 3, base + 3);
		} else {
			set_results(L, &r, status, base);
		}
		n++;
	}
	lua_pushinteger(L, n);
	return 2;
}

/* core.blob(s) -> marker */
static int
lblob(lua_State *L) {
	luaL_checktype(L, 1, LUA_TSTRING);
	lua_createtable(L, 1, 0);
	lua_pushvalue(L, 1);
	lua_rawseti(L, -2, 1);
	luaL_setmetatable(L, BLOB_MT);
	return 1;
}

static void
set_int(lua_State *L, const char *name, lua_Integer v) {
	lua_pushinteger(L, v);
	lua_setfield(L, -2, name);
}

int
luaopen_sqlite_core(lua_State *L) {
	luaL_checkversion(L);
	luaL_Reg handle_methods[] = {
	    {"exec", lexec}, {"batch", lbatch}, {"close", lclose},
	    {"join", ljoin}, {"stats", lstats}, {NULL, NULL},
	};
	if (luaL_newmetatable(L, HANDLE_MT)) {
		luaL_newlib(L, handle_methods);
		lua_setfield(L, -2, "__index");
		lua_pushcfunction(L, lgc);
		lua_setfield(L, -2, "__gc");
	}
	lua_pop(L, 1);
	luaL_newmetatable(L, BLOB_MT);
	lua_pop(L, 1);
	luaL_Reg funcs[] = {
	    {"open", lopen},
	    {"decode", ldecode},
	    {"blob", lblob},
	    {NULL, NULL},
	};
	luaL_newlib(L, funcs);
	set_int(L, "PTYPE", PTYPE_SQLITE);
	set_int(L, "EXEC", WIRE_EXEC);
	set_int(L, "QUERY", WIRE_QUERY);
	set_int(L, "SYNC_OFF", WIRE_SYNC_OFF);
	set_int(L, "SYNC_NORMAL", WIRE_SYNC_NORMAL);
	set_int(L, "SYNC_FULL", WIRE_SYNC_FULL);
	return 1;
}
