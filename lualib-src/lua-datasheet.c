/*
 * skynet.datasheet.core: images of datasheets in C memory, and the lazy
 * proxy tables readers see them through.
 *
 * Images. An image is the byte string of lualib/skynet/datasheet/dump.lua
 * (header u32 strtbl, u32 n, u32 index[n]; table records; a NUL-terminated
 * string pool), copied by load() into one skynet_malloc block (struct image)
 * after a full check (image_check): every slot offset, record size, type
 * byte, string offset and table reference lies inside the image, the pool
 * ends with a NUL (so every string offset below the end finds its
 * terminator), table 0 exists and is never referenced, and no table is
 * referenced twice (so what a reader can reach is a finite tree). Readers
 * then read without further bounds checks. An image is immutable from load()
 * until it is freed, so reading it needs no lock.
 *
 * Ownership. An image carries an atomic reference count; whoever drops the
 * last reference frees it. load() returns it with one reference, the
 * datasheet cell's, which the cell keeps while the image is the current
 * version of its name or while the cell's books show a reader holding it
 * (the cell drops it with release()). Each reader sheet takes a reference
 * of its own when it starts reading an image (new, update) and drops it
 * when it moves to a newer one or is collected (its __gc, also when the
 * reader's Lua state closes). So images live in no builder's Lua heap (a
 * builder may exit), an old version dies as soon as the last reader moved
 * off it, and one that a dead reader never picked up is freed by the cell
 * once it learns of the exit. The pointer reaches a reader in a message the
 * cell sends while its own reference is held; the message queue orders the
 * load before the reads, the count orders the reads before the free.
 * LIVE_IMAGES counts the images alive in the process (for tests).
 *
 * Proxies (per reader Lua state). new(ptr) makes a sheet: a userdata holding
 * the current image pointer and the sheet's reference to it, whose user value is the identity cache, table number -> proxy
 * (weak values). A proxy is an empty Lua table with the shared metatable
 * (__index, __pairs, __len). Its table number and sheet live in a small
 * userdata (struct proxy, user value = the sheet) found through PROXIES, a
 * weak-keyed table proxy -> info, so no key of the data is shadowed. The
 * first __index, __pairs or # fills the whole level into the table (numbers,
 * booleans and strings by value, subtables as proxies from the cache) and
 * removes the metatable: from then on it is a plain table, writes included.
 * update(root, ptr) re-points the sheet to a newer image whose table numbers
 * were kept at shared key paths (dump.diff): each cached proxy is emptied and
 * gets the metatable back; one whose number has no table in the new image is
 * marked dead, leaves the cache, and raises "Invalid proxy (index = <i>)" on
 * any access.
 *
 * Upvalues shared by the module functions and the metamethods: 1 PROXIES,
 * 2 the proxy metatable, 3 the sheet metatable (__gc). Stock Lua 5.4 needs
 * no patch for any of this. The module functions load, check, release,
 * live, refs and tables serve the cell, the builder and the tests.
 */
#include "skynet.h"
#include "atomic.h"

#include <lauxlib.h>
#include <lua.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define IMAGE_MAGIC 0x54485344u // "DSHT"
#define IMAGE_HOLE  0xffffffffu
#define SLOT_NONE   UINT64_MAX
#define IMAGE_WHY   128

#define UV_PROXIES lua_upvalueindex(1)
#define UV_META    lua_upvalueindex(2)
#define UV_SHEET   lua_upvalueindex(3)

enum value_type {
	VALUE_INTEGER = 1,
	VALUE_REAL = 2,
	VALUE_BOOLEAN = 3,
	VALUE_TABLE = 4,
	VALUE_STRING = 5,
};

struct image {
	uint32_t magic; // IMAGE_MAGIC while alive, 0 once freed
	ATOM_INT ref;   // the cell's reference and one per reader sheet on it
	uint32_t ntables;
	uint32_t strtbl;
	size_t size;
	uint8_t data[]; // owned: the checked image bytes
};

/* One table record, located in an image. */
struct record {
	const uint8_t *types;  // narray + ndict type bytes
	const uint8_t *values; // narray words, then ndict (key, value) word pairs
	uint32_t narray;
	uint32_t ndict;
};

struct sheet {
	struct image *img; // owned: one reference (NULL once dropped by __gc)
};

struct proxy {
	uint32_t index; // table number
	bool dead;      // its table no longer exists
};

static ATOM_INT LIVE_IMAGES;

static inline uint32_t
read_u32(const uint8_t *p) {
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint32_t
align4(uint64_t n) {
	return (uint32_t)((n + 3) & ~(uint64_t)3);
}

/* Byte offset (from the image start) of slot i's record; SLOT_NONE if the slot is empty. */
static inline uint64_t
slot_start(const uint8_t *data, uint32_t ntables, uint32_t i) {
	uint32_t off = read_u32(data + 8 + 4 * (uint64_t)i);
	if (off == IMAGE_HOLE)
		return SLOT_NONE;
	return 8 + 4 * (uint64_t)ntables + off;
}

/* The record of slot i of a checked image; false if the slot is empty or out of range. */
static bool
image_record(const struct image *img, uint32_t i, struct record *r) {
	if (i >= img->ntables)
		return false;
	uint64_t start = slot_start(img->data, img->ntables, i);
	if (start == SLOT_NONE)
		return false;
	const uint8_t *p = img->data + start;
	r->narray = read_u32(p);
	r->ndict = read_u32(p + 4);
	r->types = p + 8;
	r->values = p + 8 + align4((uint64_t)r->narray + r->ndict);
	return true;
}

/* Checks one value word of type ty; refs marks tables already referenced. */
static bool
check_value(const uint8_t *data, uint32_t ntables, uint64_t strsize, uint8_t ty, uint32_t word,
            uint8_t *refs, char *why) {
	switch (ty) {
	case VALUE_INTEGER:
	case VALUE_REAL:
	case VALUE_BOOLEAN:
		return true;
	case VALUE_STRING:
		if (word < strsize)
			return true;
		snprintf(why, IMAGE_WHY, "string offset %u out of bounds", word);
		return false;
	case VALUE_TABLE:
		if (word == 0 || word >= ntables || slot_start(data, ntables, word) == SLOT_NONE ||
		    (refs[word / 8] & (1u << (word % 8)))) {
			snprintf(why, IMAGE_WHY, "bad table reference %u", word);
			return false;
		}
		refs[word / 8] |= (uint8_t)(1u << (word % 8));
		return true;
	default:
		snprintf(why, IMAGE_WHY, "bad value type %u", ty);
		return false;
	}
}

/* Checks the record of slot i (not empty) of an image whose header passed. */
static bool
check_record(const uint8_t *data, uint32_t ntables, uint32_t strtbl, size_t size, uint32_t i,
             uint8_t *refs, char *why) {
	uint64_t start = slot_start(data, ntables, i);
	if (start + 8 > strtbl)
		goto fail_bounds;
	int32_t narray = (int32_t)read_u32(data + start);
	int32_t ndict = (int32_t)read_u32(data + start + 4);
	if (narray < 0 || ndict < 0)
		goto fail_bounds;
	uint64_t ntypes = (uint64_t)narray + (uint64_t)ndict;
	uint64_t values = start + 8 + align4(ntypes);
	if (values + 4 * (uint64_t)narray + 8 * (uint64_t)ndict > strtbl)
		goto fail_bounds;
	const uint8_t *types = data + start + 8;
	const uint8_t *w = data + values;
	uint64_t strsize = size - strtbl;
	for (uint64_t k = 0; k < ntypes; k++) {
		if (k >= (uint64_t)narray) {
			uint32_t key = read_u32(w);
			w += 4;
			if (!check_value(data, ntables, strsize, VALUE_STRING, key, refs, why))
				return false;
		}
		if (!check_value(data, ntables, strsize, types[k], read_u32(w), refs, why))
			return false;
		w += 4;
	}
	return true;
fail_bounds:
	snprintf(why, IMAGE_WHY, "table %u out of bounds", i);
	return false;
}

/* True if data[0..size) is a well-formed image; else why says what is wrong. */
static bool
image_check(const uint8_t *data, size_t size, char *why) {
	if (size < 8 || size > UINT32_MAX) {
		snprintf(why, IMAGE_WHY, "bad size %zu", size);
		return false;
	}
	uint32_t strtbl = read_u32(data);
	uint32_t ntables = read_u32(data + 4);
	if (ntables == 0 || 8 + 4 * (uint64_t)ntables > strtbl || strtbl >= size) {
		snprintf(why, IMAGE_WHY, "bad header (strtbl = %u, n = %u, size = %zu)", strtbl, ntables,
		         size);
		return false;
	}
	if (data[size - 1] != 0) {
		snprintf(why, IMAGE_WHY, "the string area does not end with a zero byte");
		return false;
	}
	if (slot_start(data, ntables, 0) == SLOT_NONE) {
		snprintf(why, IMAGE_WHY, "no root table");
		return false;
	}
	uint8_t *refs = skynet_malloc(ntables / 8 + 1);
	memset(refs, 0, ntables / 8 + 1);
	bool ok = true;
	for (uint32_t i = 0; ok && i < ntables; i++) {
		if (slot_start(data, ntables, i) != SLOT_NONE)
			ok = check_record(data, ntables, strtbl, size, i, refs, why);
	}
	skynet_free(refs);
	return ok;
}

/* Raises unless the string at idx is a well-formed image; returns its bytes. */
static const uint8_t *
check_image_string(lua_State *L, int idx, size_t *size) {
	const uint8_t *data = (const uint8_t *)luaL_checklstring(L, idx, size);
	char why[IMAGE_WHY];
	if (!image_check(data, *size, why))
		luaL_error(L, "datasheet: invalid image (%s)", why);
	return data;
}

static struct image *
check_image_pointer(lua_State *L, int idx) {
	luaL_checktype(L, idx, LUA_TLIGHTUSERDATA);
	struct image *img = lua_touserdata(L, idx);
	if (img == NULL || img->magic != IMAGE_MAGIC)
		luaL_error(L, "Invalid data handle %p", (void *)img);
	return img;
}

/* check(s): true, or raises "datasheet: invalid image (...)". */
static int
lcheck(lua_State *L) {
	size_t size;
	check_image_string(L, 1, &size);
	lua_pushboolean(L, 1);
	return 1;
}

static void
image_grab(struct image *img) {
	ATOM_FINC(&img->ref);
}

static void
image_release(struct image *img) {
	if (ATOM_FDEC(&img->ref) == 1) {
		img->magic = 0;
		skynet_free(img);
		ATOM_FDEC(&LIVE_IMAGES);
	}
}

/* load(s): a checked copy of image s in C memory (one reference), as a light userdata. */
static int
lload(lua_State *L) {
	size_t size;
	const uint8_t *data = check_image_string(L, 1, &size);
	struct image *img = skynet_malloc(sizeof(*img) + size);
	img->magic = IMAGE_MAGIC;
	ATOM_INIT(&img->ref, 1); // the caller's: the cell's reference
	img->strtbl = read_u32(data);
	img->ntables = read_u32(data + 4);
	img->size = size;
	memcpy(img->data, data, size);
	ATOM_FINC(&LIVE_IMAGES);
	lua_pushlightuserdata(L, img);
	return 1;
}

/* release(ptr): drops the reference load() gave; the last one frees the image. */
static int
lrelease(lua_State *L) {
	image_release(check_image_pointer(L, 1));
	return 0;
}

/* refs(ptr): the reference count of an image (for tests). */
static int
lrefs(lua_State *L) {
	struct image *img = check_image_pointer(L, 1);
	lua_pushinteger(L, ATOM_LOAD(&img->ref));
	return 1;
}

/* live(): number of images alive in the process. */
static int
llive(lua_State *L) {
	lua_pushinteger(L, ATOM_LOAD(&LIVE_IMAGES));
	return 1;
}

/* tables(ptr): number of table slots of an image (for diagnostics). */
static int
ltables(lua_State *L) {
	const struct image *img = check_image_pointer(L, 1);
	lua_pushinteger(L, img->ntables);
	return 1;
}

/* stringpointer(s): the address of the bytes of s, as a light userdata. */
static int
lstringpointer(lua_State *L) {
	const char *s = luaL_checkstring(L, 1);
	lua_pushlightuserdata(L, (void *)s);
	return 1;
}

/*
 * Pushes a new proxy for table `index` of the sheet at `sheet`, recorded in
 * PROXIES and in the cache at `cache`. Needs the module upvalues.
 */
static void
new_proxy(lua_State *L, int sheet, int cache, uint32_t index) {
	lua_createtable(L, 0, 0);
	struct proxy *p = lua_newuserdatauv(L, sizeof(*p), 1);
	p->index = index;
	p->dead = false;
	lua_pushvalue(L, sheet);
	lua_setiuservalue(L, -2, 1);
	lua_pushvalue(L, -2);
	lua_insert(L, -2);
	lua_rawset(L, UV_PROXIES); // PROXIES[proxy] = info
	lua_pushvalue(L, UV_META);
	lua_setmetatable(L, -2);
	lua_pushvalue(L, -1);
	lua_rawseti(L, cache, index);
}

/* Pushes the proxy of table `index` (the cached one if alive). */
static void
push_child(lua_State *L, int sheet, int cache, uint32_t index) {
	if (lua_rawgeti(L, cache, index) == LUA_TTABLE)
		return;
	lua_pop(L, 1);
	new_proxy(L, sheet, cache, index);
}

static void
push_value(lua_State *L, const struct image *img, uint8_t ty, const uint8_t *w, int sheet,
           int cache) {
	uint32_t word = read_u32(w);
	switch (ty) {
	case VALUE_INTEGER:
		lua_pushinteger(L, (int32_t)word);
		break;
	case VALUE_REAL: {
		float f;
		memcpy(&f, &word, sizeof(f));
		lua_pushnumber(L, (lua_Number)f);
		break;
	}
	case VALUE_BOOLEAN:
		lua_pushboolean(L, word != 0);
		break;
	case VALUE_TABLE:
		push_child(L, sheet, cache, word);
		break;
	default: // VALUE_STRING: image_check allows no other type
		lua_pushstring(L, (const char *)img->data + img->strtbl + word);
		break;
	}
}

/*
 * Pushes the info of the proxy table at t, or returns NULL (nothing pushed)
 * if t is not a proxy.
 */
static struct proxy *
proxy_info(lua_State *L, int t) {
	lua_pushvalue(L, t);
	if (lua_rawget(L, UV_PROXIES) != LUA_TUSERDATA) {
		lua_pop(L, 1);
		return NULL;
	}
	return lua_touserdata(L, -1);
}

static struct proxy *
check_proxy(lua_State *L, int t) {
	struct proxy *p = proxy_info(L, t);
	if (p == NULL)
		luaL_error(L, "Invalid proxy table %p", lua_topointer(L, t));
	return p;
}

/* Copies the level of the proxy at t into it and removes its metatable. */
static void
fill(lua_State *L, int t) {
	luaL_checkstack(L, 8, NULL);
	struct proxy *p = check_proxy(L, t);
	lua_getiuservalue(L, -1, 1);
	int sheet = lua_gettop(L);
	const struct sheet *s = lua_touserdata(L, sheet);
	struct record r;
	if (p->dead || !image_record(s->img, p->index, &r))
		luaL_error(L, "Invalid proxy (index = %d)", (int)p->index);
	lua_getiuservalue(L, sheet, 1);
	int cache = lua_gettop(L);
	const uint8_t *w = r.values;
	for (uint32_t i = 0; i < r.narray; i++, w += 4) {
		push_value(L, s->img, r.types[i], w, sheet, cache);
		lua_rawseti(L, t, (lua_Integer)i + 1);
	}
	for (uint32_t i = 0; i < r.ndict; i++, w += 8) {
		lua_pushstring(L, (const char *)s->img->data + s->img->strtbl + read_u32(w));
		push_value(L, s->img, r.types[r.narray + i], w + 4, sheet, cache);
		lua_rawset(L, t);
	}
	lua_settop(L, sheet - 2); // info, sheet, cache
	lua_pushnil(L);
	lua_setmetatable(L, t);
}

static int
mindex(lua_State *L) {
	fill(L, 1);
	lua_settop(L, 2);
	lua_rawget(L, 1);
	return 1;
}

static int
mnext(lua_State *L) {
	luaL_checktype(L, 1, LUA_TTABLE);
	lua_settop(L, 2);
	if (lua_next(L, 1))
		return 2;
	lua_pushnil(L);
	return 1;
}

static int
mpairs(lua_State *L) {
	fill(L, 1);
	lua_pushcfunction(L, mnext);
	lua_pushvalue(L, 1);
	lua_pushnil(L);
	return 3;
}

static int
mlen(lua_State *L) {
	fill(L, 1);
	lua_pushinteger(L, (lua_Integer)lua_rawlen(L, 1));
	return 1;
}

static int
msheet_gc(lua_State *L) {
	struct sheet *s = lua_touserdata(L, 1);
	if (s->img != NULL) {
		image_release(s->img);
		s->img = NULL;
	}
	return 0;
}

/* new(ptr): the root proxy of a new sheet reading image ptr (it takes a reference). */
static int
lnew(lua_State *L) {
	struct image *img = check_image_pointer(L, 1);
	struct sheet *s = lua_newuserdatauv(L, sizeof(*s), 1);
	s->img = NULL;
	lua_pushvalue(L, UV_SHEET);
	lua_setmetatable(L, -2);
	image_grab(img);
	s->img = img;
	int sheet = lua_gettop(L);
	lua_createtable(L, 0, 0); // the cache, weak values
	lua_createtable(L, 0, 1);
	lua_pushliteral(L, "v");
	lua_setfield(L, -2, "__mode");
	lua_setmetatable(L, -2);
	lua_pushvalue(L, -1);
	lua_setiuservalue(L, sheet, 1);
	new_proxy(L, sheet, sheet + 1, 0);
	return 1;
}

/* Empties the table at t and gives it the proxy metatable back. */
static void
reset_proxy(lua_State *L, int t) {
	lua_pushnil(L);
	while (lua_next(L, t) != 0) {
		lua_pop(L, 1);
		lua_pushvalue(L, -1);
		lua_pushnil(L);
		lua_rawset(L, t); // clearing an existing field keeps the traversal valid
	}
	lua_pushvalue(L, UV_META);
	lua_setmetatable(L, t);
}

/* update(root, ptr): re-points every proxy of root's sheet to image ptr. */
static int
lupdate(lua_State *L) {
	luaL_checktype(L, 1, LUA_TTABLE);
	struct image *img = check_image_pointer(L, 2);
	lua_settop(L, 2);
	check_proxy(L, 1);
	lua_getiuservalue(L, 3, 1);
	struct sheet *s = lua_touserdata(L, 4);
	if (s->img == img)
		return 0;
	image_grab(img);
	image_release(s->img);
	s->img = img;
	lua_getiuservalue(L, 4, 1);
	int cache = 5;
	lua_pushnil(L);
	while (lua_next(L, cache) != 0) { // key: table number, value: proxy
		int t = lua_gettop(L);
		struct record r;
		uint32_t index = (uint32_t)lua_tointeger(L, t - 1);
		reset_proxy(L, t);
		if (!image_record(img, index, &r)) {
			struct proxy *p = check_proxy(L, t);
			p->dead = true;
			lua_pop(L, 1);
			lua_pushvalue(L, t - 1);
			lua_pushnil(L);
			lua_rawset(L, cache);
		}
		lua_settop(L, t - 1);
	}
	return 0;
}

LUAMOD_API int luaopen_skynet_datasheet_core(lua_State *L);

LUAMOD_API int
luaopen_skynet_datasheet_core(lua_State *L) {
	luaL_checkversion(L);
	luaL_Reg lib[] = {
	    {"new", lnew},   {"update", lupdate}, {"stringpointer", lstringpointer},
	    {"load", lload}, {"check", lcheck},   {"release", lrelease},
	    {"live", llive}, {"tables", ltables}, {"refs", lrefs},
	    {NULL, NULL},
	};
	luaL_Reg meta[] = {
	    {"__index", mindex},
	    {"__pairs", mpairs},
	    {"__len", mlen},
	    {NULL, NULL},
	};
	lua_createtable(L, 0, sizeof(lib) / sizeof(lib[0]) - 1);
	lua_createtable(L, 0, 0); // PROXIES, weak keys
	lua_createtable(L, 0, 1);
	lua_pushliteral(L, "k");
	lua_setfield(L, -2, "__mode");
	lua_setmetatable(L, -2);
	lua_createtable(L, 0, 3); // the proxy metatable
	lua_createtable(L, 0, 1); // the sheet metatable
	lua_pushcfunction(L, msheet_gc);
	lua_setfield(L, -2, "__gc");
	// Stack: lib, PROXIES, proxy metatable, sheet metatable.
	lua_pushvalue(L, -2);
	for (int i = 0; i < 3; i++)
		lua_pushvalue(L, -4);
	luaL_setfuncs(L, meta, 3); // into the proxy metatable
	lua_pop(L, 1);
	luaL_setfuncs(L, lib, 3);
	return 1;
}
