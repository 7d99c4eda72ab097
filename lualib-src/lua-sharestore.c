/*
 * The shared immutable store: one tree of tables, built once, then read by
 * every service of the process without locks, and freed by the last
 * reference. skynet.sharedata.core and skynet.sharetable.core are thin
 * layers over it (lua-sharedata.c, lua-sharetable.c); their Lua libraries
 * build the proxies readers see.
 *
 * Version. A struct sstore holds one built tree: nodes[1..nnodes] (node 1 is
 * the root), the string arena and the Lua functions' bytecode. Each node has
 * an array part for the keys 1..asize, asize being the border (#) the source
 * table had when the version was built, so it may hold nil holes, and an
 * open-addressing hash part (linear probing, capacity a power of two, load at
 * most 3/4, an empty slot has a nil key) for every other key. A value is a
 * tagged union: nil, false, true, integer, float, string (pointer into the
 * arena), table (node number), Lua function (index into funcs, whose bytes
 * are a string.dump of a function without upvalues), light C function, light
 * userdata. Strings are deduplicated at build time, so inside one version two
 * equal strings have the same pointer; each carries its length and a hash
 * computed by str_hash (readers hash their Lua key the same way). Tables
 * reached twice (shared subtables, cycles) become one node.
 *
 * Immutability. Nothing of a version changes after sstore_build returns
 * except dirty (an atomic; the reference count lives in the slot table).
 * Readers in other threads get the pointer through the slot table's atomics
 * or in a message (the message queue's lock), both of which order the
 * build's writes before their reads.
 *
 * References. A version's reference count counts its owners: the builder's
 * caller, each reference userdata (struct sst_ref, one per version per
 * service in practice) and the raw host references of sharedata's
 * corelib.host. The version is freed by whoever drops the last one, in any
 * thread.
 *
 * Handles and the slot table. Lua code names a version by a handle: a light
 * userdata whose value packs a slot index and that slot's generation, not an
 * address. SLOTS is a static table of SLOT_COUNT slots; a slot holds one
 * 64-bit atomic word, generation (high 32 bits) and reference count (low 32
 * bits, 0 = free slot), and the version pointer. The count lives in the
 * slot, never freed memory, so a stale handle can be checked without
 * touching freed memory: open(handle) raises the count with a CAS only if
 * the word still has the handle's generation and a non-zero count, and
 * answers nil otherwise. The CAS that takes the count to 0 hands the version
 * to that thread, which frees it without touching the slot again; a new
 * build claims a free slot with a CAS that bumps its generation, then
 * stores its version pointer (read only by holders of the new generation).
 * So a service can pass a handle in a message without lending a reference:
 * if the version died in between, the receiver learns it cleanly. Only
 * atomics (atomic.h), no lock: every operation is a bounded CAS loop, except
 * the claim, which scans at most SLOT_COUNT slots from a rotating cursor.
 *
 * Building. sstore_build walks the source tables breadth-first with a queue
 * and a seen-map kept as Lua tables on the builder's stack (no C recursion,
 * no depth limit); the partial version and the string set live in a
 * to-be-closed userdata, so a Lua error in the middle (a rejected key or
 * value) frees everything. The string pool is plain C memory, so there is no
 * limit on the number of distinct strings beyond memory itself.
 *
 * Units: sizes in bytes, node numbers and function ids 1-based.
 */
#include "lua-sharestore.h"

#include "atomic.h"
#include "skynet_malloc.h"

#include <lauxlib.h>
#include <lua.h>

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define REF_MT "skynet.sharestore.ref"

#define MAX_NODES     (UINT32_MAX / 4)
#define MAX_PART      (UINT32_MAX / 4)
#define CHUNK_BYTES   (64 * 1024)
#define CHUNK_PRIVATE (CHUNK_BYTES / 4) // a string this big gets a chunk of its own

enum {
	SST_NIL = 0,
	SST_FALSE,
	SST_TRUE,
	SST_INT,
	SST_REAL,
	SST_STRING,
	SST_TABLE,
	SST_LFUNC,
	SST_CFUNC,
	SST_LUDATA,
};

struct sst_string {
	size_t len;
	uint32_t hash;
	char data[]; // len bytes and a NUL
};

struct sst_value {
	union {
		lua_Integer i;
		lua_Number n;
		const struct sst_string *s; // borrowed: the version's arena
		uint32_t id;                // SST_TABLE: node, SST_LFUNC: function
		lua_CFunction f;
		void *p;
	} u;
	uint32_t type;
};

struct sst_slot {
	struct sst_value key;
	struct sst_value val;
};

struct sst_node {
	struct sst_value *array; // owned (one block with hash): keys 1..asize
	struct sst_slot *hash;   // in the same block; NULL when hcount is 0
	uint32_t asize;
	uint32_t hmask; // capacity - 1
	uint32_t hcount;
};

struct sst_chunk {
	struct sst_chunk *next;
	size_t used;
	size_t cap;
	char data[];
};

struct sstore {
	ATOM_INT dirty;
	uint32_t slot;          // index in SLOTS; the count lives there
	uint32_t gen;           // the slot's generation for this version
	struct sst_node *nodes; // owned: nodes[0] unused, 1..nnodes
	uint32_t nnodes;
	uint32_t ncap;                   // allocated entries of nodes (build time)
	const struct sst_string **funcs; // owned array, 1..nfuncs; strings in the arena
	uint32_t nfuncs;
	uint32_t fcap;
	struct sst_chunk *chunks; // owned: the string arena
	size_t bytes;             // everything above, for stat
};

/* A key as looked up from Lua. */
struct sst_key {
	struct sst_value v;
	const char *str; // SST_STRING: the Lua string's bytes
	size_t len;
	uint32_t hash;
};

/* Userdata owning one reference; s is NULL once closed. */
struct sst_ref {
	struct sstore *s;
};

/* One entry of the slot table (see the design comment). */
struct sst_slot_entry {
	ATOM_U64 word;        // generation << 32 | reference count
	ATOM_POINTER version; // struct sstore *, valid while the count is not 0
};

#define SLOT_COUNT  65536
#define WORD_GEN(w) ((uint32_t)((w) >> 32))
#define WORD_REF(w) ((uint32_t)(w))

static struct sst_slot_entry SLOTS[SLOT_COUNT];
static ATOM_U32 SLOT_CURSOR;
static ATOM_SIZET LIVE_COUNT; // statistics only
static ATOM_SIZET LIVE_BYTES;

/* ------------------------------------------------------------------ hashing */

static inline uint64_t
mix64(uint64_t x) {
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static uint32_t
str_hash(const char *p, size_t len) {
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ len;
	while (len >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		h = (h ^ w) * 0x100000001b3ULL;
		h ^= h >> 29;
		p += 8;
		len -= 8;
	}
	uint64_t w = 0;
	memcpy(&w, p, len);
	return (uint32_t)mix64(h ^ w);
}

static uint32_t
value_hash(const struct sst_value *v) {
	switch (v->type) {
	case SST_STRING:
		return v->u.s->hash;
	case SST_INT:
		return (uint32_t)mix64((uint64_t)v->u.i);
	case SST_REAL: {
		uint64_t bits;
		memcpy(&bits, &v->u.n, sizeof(bits));
		return (uint32_t)mix64(bits ^ 0x5bd1e995ULL);
	}
	case SST_TABLE:
	case SST_LFUNC:
		return (uint32_t)mix64(((uint64_t)v->type << 32) | v->u.id);
	case SST_CFUNC: {
		uintptr_t a = 0;
		memcpy(&a, &v->u.f, sizeof(v->u.f) < sizeof(a) ? sizeof(v->u.f) : sizeof(a));
		return (uint32_t)mix64((uint64_t)a ^ 0x77ULL);
	}
	case SST_LUDATA:
		return (uint32_t)mix64((uint64_t)(uintptr_t)v->u.p);
	default: // SST_FALSE, SST_TRUE
		return (uint32_t)mix64(v->type);
	}
}

/* Key equality between a stored key and a lookup key. */
static bool
key_equal(const struct sst_value *stored, const struct sst_key *k) {
	if (stored->type != k->v.type)
		return false;
	switch (stored->type) {
	case SST_STRING: {
		const struct sst_string *s = stored->u.s;
		return s->hash == k->hash && s->len == k->len && memcmp(s->data, k->str, k->len) == 0;
	}
	case SST_INT:
		return stored->u.i == k->v.u.i;
	case SST_REAL:
		return stored->u.n == k->v.u.n;
	case SST_TABLE:
	case SST_LFUNC:
		return stored->u.id == k->v.u.id;
	case SST_CFUNC:
		return stored->u.f == k->v.u.f;
	case SST_LUDATA:
		return stored->u.p == k->v.u.p;
	default:
		return true;
	}
}

/* ----------------------------------------------------------------- lookups */

static const struct sst_value NILVALUE = {.type = SST_NIL};

/* The slot index of k in n's hash part, or -1. */
static int64_t
hash_find(const struct sst_node *n, const struct sst_key *k) {
	if (n->hash == NULL)
		return -1;
	uint32_t i = k->hash & n->hmask;
	for (;;) {
		const struct sst_slot *slot = &n->hash[i];
		if (slot->key.type == SST_NIL)
			return -1;
		if (key_equal(&slot->key, k))
			return i;
		i = (i + 1) & n->hmask;
	}
}

static const struct sst_value *
node_get(const struct sst_node *n, const struct sst_key *k) {
	if (k->v.type == SST_INT && (lua_Unsigned)k->v.u.i - 1 < n->asize)
		return &n->array[k->v.u.i - 1];
	int64_t i = hash_find(n, k);
	return i < 0 ? &NILVALUE : &n->hash[i].val;
}

/* -------------------------------------------------------------- the arena */

static void *
arena_alloc(struct sstore *s, size_t sz) {
	sz = (sz + 7) & ~(size_t)7;
	struct sst_chunk *c = s->chunks;
	if (sz >= CHUNK_PRIVATE) {
		struct sst_chunk *own = skynet_malloc(sizeof(*own) + sz);
		own->used = own->cap = sz;
		s->bytes += sizeof(*own) + sz;
		if (c == NULL) {
			own->next = NULL;
			s->chunks = own;
		} else { // behind the current chunk, which keeps taking small strings
			own->next = c->next;
			c->next = own;
		}
		return own->data;
	}
	if (c == NULL || c->cap - c->used < sz) {
		c = skynet_malloc(sizeof(*c) + CHUNK_BYTES);
		c->used = 0;
		c->cap = CHUNK_BYTES;
		c->next = s->chunks;
		s->chunks = c;
		s->bytes += sizeof(*c) + CHUNK_BYTES;
	}
	void *p = c->data + c->used;
	c->used += sz;
	return p;
}

static void
version_free(struct sstore *s) {
	for (uint32_t i = 1; i <= s->nnodes; i++)
		skynet_free(s->nodes[i].array);
	skynet_free(s->nodes);
	skynet_free(s->funcs);
	struct sst_chunk *c = s->chunks;
	while (c) {
		struct sst_chunk *next = c->next;
		skynet_free(c);
		c = next;
	}
	skynet_free(s);
}

/* ------------------------------------------------------------ slot table */

/*
 * Gives s a slot with one reference (its builder's). Returns false when
 * every slot is taken.
 */
static bool
slot_claim(struct sstore *s) {
	uint32_t start = ATOM_FADD(&SLOT_CURSOR, 1);
	for (uint32_t k = 0; k < SLOT_COUNT; k++) {
		uint32_t i = (start + k) % SLOT_COUNT;
		struct sst_slot_entry *e = &SLOTS[i];
		uint64_t w = ATOM_LOAD(&e->word);
		if (WORD_REF(w) != 0)
			continue;
		uint32_t gen = WORD_GEN(w) + 1;
		if (gen == 0)
			gen = 1; // generation 0 never names a version
		if (!ATOM_CAS(&e->word, w, ((uint64_t)gen << 32) | 1))
			continue;
		s->slot = i;
		s->gen = gen;
		ATOM_STORE(&e->version, s);
		ATOM_FINC(&LIVE_COUNT);
		ATOM_FADD(&LIVE_BYTES, s->bytes);
		return true;
	}
	return false;
}

/* A new reference to the live version named by (slot, gen), or NULL. */
static struct sstore *
slot_grab(uint32_t slot, uint32_t gen) {
	if (slot >= SLOT_COUNT || gen == 0)
		return NULL;
	struct sst_slot_entry *e = &SLOTS[slot];
	uint64_t w = ATOM_LOAD(&e->word);
	for (;;) {
		if (WORD_GEN(w) != gen || WORD_REF(w) == 0 || WORD_REF(w) == UINT32_MAX)
			return NULL;
		if (ATOM_CAS(&e->word, w, w + 1))
			return ATOM_LOAD(&e->version);
		w = ATOM_LOAD(&e->word);
	}
}

/* The reference count of s (a snapshot: for getref and tests). */
static uint32_t
refcount(const struct sstore *s) {
	return WORD_REF(ATOM_LOAD(&SLOTS[s->slot].word));
}

void
sstore_release(struct sstore *s) {
	size_t bytes = s->bytes;
	uint64_t w = ATOM_FSUB(&SLOTS[s->slot].word, 1);
	if (WORD_REF(w) != 1)
		return;
	/* Ours now: the slot is free and nobody can grab s any more. */
	ATOM_FSUB(&LIVE_COUNT, 1);
	ATOM_FSUB(&LIVE_BYTES, bytes);
	version_free(s);
}

/* ------------------------------------------------------------------ build */

struct builder {
	struct sstore *s;              // owned until detached
	const struct sst_string **set; // owned: string set, open addressing
	size_t setcap;
	size_t setcount;
	char *dump; // owned: lua_dump buffer
	size_t dumplen;
	size_t dumpcap;
	enum sstore_mode mode;
};

static void
builder_clear(struct builder *b) {
	if (b->s) {
		version_free(b->s);
		b->s = NULL;
	}
	skynet_free(b->set);
	b->set = NULL;
	skynet_free(b->dump);
	b->dump = NULL;
}

static int
builder_close(lua_State *L) {
	builder_clear(lua_touserdata(L, 1));
	return 0;
}

static const struct sst_string *
intern(struct builder *b, const char *str, size_t len) {
	uint32_t h = str_hash(str, len);
	if (b->setcount * 2 >= b->setcap) {
		size_t ncap = b->setcap ? b->setcap * 2 : 256;
		const struct sst_string **nset = skynet_calloc(ncap, sizeof(*nset));
		for (size_t i = 0; i < b->setcap; i++) {
			const struct sst_string *x = b->set[i];
			if (x == NULL)
				continue;
			size_t j = x->hash & (ncap - 1);
			while (nset[j])
				j = (j + 1) & (ncap - 1);
			nset[j] = x;
		}
		skynet_free(b->set);
		b->set = nset;
		b->setcap = ncap;
	}
	size_t j = h & (b->setcap - 1);
	for (;;) {
		const struct sst_string *x = b->set[j];
		if (x == NULL)
			break;
		if (x->hash == h && x->len == len && memcmp(x->data, str, len) == 0)
			return x;
		j = (j + 1) & (b->setcap - 1);
	}
	struct sst_string *ns = arena_alloc(b->s, sizeof(*ns) + len + 1);
	ns->len = len;
	ns->hash = h;
	memcpy(ns->data, str, len);
	ns->data[len] = '\0';
	b->set[j] = ns;
	b->setcount++;
	return ns;
}

static int
dump_writer(lua_State *L, const void *p, size_t sz, void *ud) {
	struct builder *b = ud;
	if (b->dumpcap - b->dumplen < sz) {
		size_t ncap = b->dumpcap ? b->dumpcap * 2 : 1024;
		while (ncap - b->dumplen < sz)
			ncap *= 2;
		b->dump = skynet_realloc(b->dump, ncap);
		b->dumpcap = ncap;
	}
	memcpy(b->dump + b->dumplen, p, sz);
	b->dumplen += sz;
	return 0;
}

/* Stack slots of a build. */
struct bstack {
	int seen;  // table or function -> node number / -function id
	int queue; // node number -> table
};

/* Id of the table or function at idx: seen before, or a new one (queued if a table). */
static int64_t
object_id(lua_State *L, struct builder *b, const struct bstack *bs, int idx, bool table) {
	lua_pushvalue(L, idx);
	if (lua_rawget(L, bs->seen) != LUA_TNIL) {
		int64_t id = lua_tointeger(L, -1);
		lua_pop(L, 1);
		return id;
	}
	lua_pop(L, 1);
	struct sstore *s = b->s;
	int64_t id;
	if (table) {
		if (s->nnodes >= MAX_NODES)
			luaL_error(L, "too many tables");
		if (s->nnodes + 1 >= s->ncap) {
			uint32_t ncap = s->ncap * 2;
			s->nodes = skynet_realloc(s->nodes, ncap * sizeof(*s->nodes));
			memset(s->nodes + s->ncap, 0, (ncap - s->ncap) * sizeof(*s->nodes));
			s->ncap = ncap;
		}
		id = ++s->nnodes;
		lua_pushvalue(L, idx);
		lua_rawseti(L, bs->queue, id);
	} else {
		b->dumplen = 0;
		lua_pushvalue(L, idx);
		lua_dump(L, dump_writer, b, 0);
		lua_pop(L, 1);
		if (s->nfuncs + 1 >= s->fcap) {
			uint32_t ncap = s->fcap ? s->fcap * 2 : 8;
			s->funcs = skynet_realloc(s->funcs, ncap * sizeof(*s->funcs));
			s->fcap = ncap;
		}
		id = ++s->nfuncs;
		s->funcs[id] = intern(b, b->dump, b->dumplen);
		id = -id;
	}
	lua_pushvalue(L, idx);
	lua_pushinteger(L, id);
	lua_rawset(L, bs->seen);
	return id;
}

static void
check_function(lua_State *L, int idx) {
	if (lua_getupvalue(L, idx, 1) != NULL)
		luaL_error(L, "Invalid function with upvalue");
}

/* Converts the value at idx. key: it is a key (for the error texts of SSTORE_DATA). */
static void
convert(lua_State *L, struct builder *b, const struct bstack *bs, int idx, bool key,
        struct sst_value *out) {
	int t = lua_type(L, idx);
	if (b->mode == SSTORE_DATA) {
		if (key && t == LUA_TNUMBER && !lua_isinteger(L, idx))
			luaL_error(L, "Invalid key %f", lua_tonumber(L, idx));
		if (key && t != LUA_TNUMBER && t != LUA_TSTRING)
			luaL_error(L, "Invalid key type %s", lua_typename(L, t));
		if (t != LUA_TNUMBER && t != LUA_TSTRING && t != LUA_TBOOLEAN && t != LUA_TTABLE)
			luaL_error(L, "Unsupport value type %s", lua_typename(L, t));
	}
	switch (t) {
	case LUA_TBOOLEAN:
		out->type = lua_toboolean(L, idx) ? SST_TRUE : SST_FALSE;
		break;
	case LUA_TNUMBER:
		if (lua_isinteger(L, idx)) {
			out->type = SST_INT;
			out->u.i = lua_tointeger(L, idx);
		} else {
			out->type = SST_REAL;
			out->u.n = lua_tonumber(L, idx);
		}
		break;
	case LUA_TSTRING: {
		size_t len;
		const char *str = lua_tolstring(L, idx, &len);
		out->type = SST_STRING;
		out->u.s = intern(b, str, len);
		break;
	}
	case LUA_TTABLE:
		out->type = SST_TABLE;
		out->u.id = (uint32_t)object_id(L, b, bs, idx, true);
		break;
	case LUA_TFUNCTION:
		check_function(L, idx);
		if (lua_iscfunction(L, idx)) {
			out->type = SST_CFUNC;
			out->u.f = lua_tocfunction(L, idx);
		} else {
			out->type = SST_LFUNC;
			out->u.id = (uint32_t)-object_id(L, b, bs, idx, false);
		}
		break;
	case LUA_TLIGHTUSERDATA:
		out->type = SST_LUDATA;
		out->u.p = lua_touserdata(L, idx);
		break;
	default:
		luaL_error(L, "Invalid type [%s]", lua_typename(L, t));
	}
}

static bool
in_array(lua_State *L, int kidx, uint32_t asize) {
	if (!lua_isinteger(L, kidx))
		return false;
	lua_Integer i = lua_tointeger(L, kidx);
	return i >= 1 && (lua_Unsigned)i <= asize;
}

static void
hash_put(struct sst_node *n, const struct sst_value *k, const struct sst_value *v) {
	uint32_t i = value_hash(k) & n->hmask;
	while (n->hash[i].key.type != SST_NIL)
		i = (i + 1) & n->hmask;
	n->hash[i].key = *k;
	n->hash[i].val = *v;
}

/* Fills node id from the table at the top of L. */
static void
build_node(lua_State *L, struct builder *b, const struct bstack *bs, uint32_t id) {
	int t = lua_gettop(L);
	if (b->mode == SSTORE_TABLE && lua_getmetatable(L, t))
		luaL_error(L, "Can't share metatable");
	lua_Unsigned border = lua_rawlen(L, t);
	if (border > MAX_PART)
		luaL_error(L, "table too large");
	uint32_t asize = (uint32_t)border;
	uint64_t hcount = 0;
	lua_pushnil(L);
	while (lua_next(L, t) != 0) {
		lua_pop(L, 1);
		if (!in_array(L, -1, asize))
			hcount++;
	}
	if (hcount > MAX_PART)
		luaL_error(L, "table too large");
	uint32_t hcap = 0;
	if (hcount > 0) {
		hcap = 4;
		while (hcap - hcap / 4 < hcount)
			hcap *= 2;
	}
	size_t sz = asize * sizeof(struct sst_value) + (size_t)hcap * sizeof(struct sst_slot);
	struct sst_node *n = &b->s->nodes[id];
	n->array = sz ? skynet_calloc(1, sz) : NULL;
	n->hash = hcap ? (struct sst_slot *)(n->array + asize) : NULL;
	n->asize = asize;
	n->hmask = hcap ? hcap - 1 : 0;
	n->hcount = (uint32_t)hcount;
	b->s->bytes += sz;
	lua_pushnil(L);
	while (lua_next(L, t) != 0) {
		struct sst_value k, v;
		convert(L, b, bs, -2, true, &k);
		convert(L, b, bs, -1, false, &v);
		// the node may have moved: object_id grows the node array
		n = &b->s->nodes[id];
		if (k.type == SST_INT && (lua_Unsigned)k.u.i - 1 < asize)
			n->array[k.u.i - 1] = v;
		else
			hash_put(n, &k, &v);
		lua_pop(L, 1);
	}
}

struct sstore *
sstore_build(lua_State *L, int idx, enum sstore_mode mode) {
	idx = lua_absindex(L, idx);
	luaL_checktype(L, idx, LUA_TTABLE);
	luaL_checkstack(L, 16, NULL);
	struct builder *b = lua_newuserdatauv(L, sizeof(*b), 0);
	memset(b, 0, sizeof(*b));
	b->mode = mode;
	if (luaL_newmetatable(L, "skynet.sharestore.builder")) {
		lua_pushcfunction(L, builder_close);
		lua_setfield(L, -2, "__close");
		lua_pushcfunction(L, builder_close);
		lua_setfield(L, -2, "__gc");
	}
	lua_setmetatable(L, -2);
	int top = lua_gettop(L);
	lua_toclose(L, top);
	struct sstore *s = skynet_calloc(1, sizeof(*s));
	b->s = s;
	s->ncap = 16;
	s->nodes = skynet_calloc(s->ncap, sizeof(*s->nodes));
	struct bstack bs;
	lua_newtable(L);
	bs.seen = lua_gettop(L);
	lua_newtable(L);
	bs.queue = lua_gettop(L);
	object_id(L, b, &bs, idx, true);
	for (uint32_t id = 1; id <= s->nnodes; id++) {
		lua_rawgeti(L, bs.queue, id);
		build_node(L, b, &bs, id);
		lua_pop(L, 1);
	}
	s->nodes = skynet_realloc(s->nodes, (s->nnodes + 1) * sizeof(*s->nodes));
	s->ncap = s->nnodes + 1;
	s->bytes += sizeof(*s) + s->ncap * sizeof(*s->nodes) + s->fcap * sizeof(*s->funcs);
	b->s = NULL; // detached: the close below frees only the string set
	lua_settop(L, top);
	lua_closeslot(L, top);
	lua_pop(L, 1);
	ATOM_INIT(&s->dirty, 0);
	if (!slot_claim(s)) {
		version_free(s);
		luaL_error(L, "sharestore: too many live versions (%d)", SLOT_COUNT);
	}
	return s;
}

/* ------------------------------------------------------------ Lua binding */

static void register_ref_meta(lua_State *L);
static int ref_gc(lua_State *L);

static inline void *
handle_of(const struct sstore *s) {
	return (void *)(uintptr_t)(((uint64_t)(s->slot + 1) << 32) | s->gen);
}

/* A new reference to the version the handle at idx names, or NULL once it is gone. */
static struct sstore *
grab_handle_or_null(lua_State *L, int idx) {
	luaL_checktype(L, idx, LUA_TLIGHTUSERDATA);
	uint64_t h = (uint64_t)(uintptr_t)lua_touserdata(L, idx);
	uint64_t slot = h >> 32;
	if (slot == 0)
		return NULL;
	return slot_grab((uint32_t)(slot - 1), (uint32_t)h);
}

void
sstore_pushhandle(lua_State *L, const struct sstore *s) {
	lua_pushlightuserdata(L, handle_of(s));
}

struct sstore **
sstore_pushref(lua_State *L, struct sstore *s) {
	struct sst_ref *r = lua_newuserdatauv(L, sizeof(*r), 0);
	r->s = s;
	if (luaL_getmetatable(L, REF_MT) != LUA_TTABLE) {
		lua_pop(L, 1);
		register_ref_meta(L);
	}
	lua_setmetatable(L, -2);
	return &r->s;
}

/* The reference userdata at idx (upvalue 1 is its metatable). */
static struct sst_ref *
to_ref(lua_State *L, int idx) {
	struct sst_ref *r = lua_touserdata(L, idx);
	if (r == NULL || lua_type(L, idx) != LUA_TUSERDATA || !lua_getmetatable(L, idx) ||
	    !lua_rawequal(L, -1, lua_upvalueindex(1)))
		luaL_typeerror(L, idx, "sharestore reference");
	lua_pop(L, 1);
	return r;
}

static struct sstore *
check_ref(lua_State *L, int idx) {
	struct sst_ref *r = to_ref(L, idx);
	if (r->s == NULL)
		luaL_error(L, "sharestore: the version was released");
	return r->s;
}

static const struct sst_node *
check_node(lua_State *L, const struct sstore *s, int idx) {
	lua_Integer n = luaL_checkinteger(L, idx);
	if (n < 1 || (lua_Unsigned)n > s->nnodes)
		luaL_error(L, "sharestore: bad node %d", (int)n);
	return &s->nodes[n];
}

static int
ref_gc(lua_State *L) {
	struct sst_ref *r = lua_touserdata(L, 1);
	if (r->s) {
		sstore_release(r->s);
		r->s = NULL;
	}
	return 0;
}

/* Pushes v as one or two results (see lindex); returns the count. */
static int
push_value(lua_State *L, const struct sst_value *v) {
	switch (v->type) {
	case SST_NIL:
		lua_pushnil(L);
		return 1;
	case SST_FALSE:
	case SST_TRUE:
		lua_pushboolean(L, v->type == SST_TRUE);
		return 1;
	case SST_INT:
		lua_pushinteger(L, v->u.i);
		return 1;
	case SST_REAL:
		lua_pushnumber(L, v->u.n);
		return 1;
	case SST_STRING:
		lua_pushlstring(L, v->u.s->data, v->u.s->len);
		return 1;
	case SST_TABLE:
		lua_pushboolean(L, 1);
		lua_pushinteger(L, v->u.id);
		return 2;
	case SST_LFUNC:
		lua_pushboolean(L, 1);
		lua_pushinteger(L, -(lua_Integer)v->u.id);
		return 2;
	case SST_CFUNC:
		lua_pushcfunction(L, v->u.f);
		return 1;
	default:
		lua_pushlightuserdata(L, v->u.p);
		return 1;
	}
}

/*
 * The key at idx (with its companion at idx + 1) as a lookup key. Returns
 * false for a key no version can hold (nil, NaN). strict: sharedata's rules
 * (integers, strings, integral floats; "Invalid key <f>" for other floats).
 */
static bool
to_key(lua_State *L, int idx, bool strict, struct sst_key *k) {
	if (!lua_isnoneornil(L, idx + 1)) {
		lua_Integer x = luaL_checkinteger(L, idx + 1);
		k->v.type = x > 0 ? SST_TABLE : SST_LFUNC;
		k->v.u.id = (uint32_t)(x > 0 ? x : -x);
		k->hash = value_hash(&k->v);
		return true;
	}
	int t = lua_type(L, idx);
	switch (t) {
	case LUA_TNUMBER:
		if (lua_isinteger(L, idx)) {
			k->v.type = SST_INT;
			k->v.u.i = lua_tointeger(L, idx);
		} else {
			lua_Number n = lua_tonumber(L, idx);
			lua_Integer i;
			if (lua_numbertointeger(n, &i) && (lua_Number)i == n) {
				k->v.type = SST_INT;
				k->v.u.i = i;
			} else if (strict) {
				luaL_error(L, "Invalid key %f", n);
			} else if (n != n) {
				return false;
			} else {
				k->v.type = SST_REAL;
				k->v.u.n = n;
			}
		}
		break;
	case LUA_TSTRING:
		k->v.type = SST_STRING;
		k->str = lua_tolstring(L, idx, &k->len);
		k->hash = str_hash(k->str, k->len);
		return true;
	case LUA_TNIL:
	case LUA_TNONE:
		return false;
	default:
		if (strict)
			luaL_typeerror(L, idx, "integer or string");
		if (t == LUA_TBOOLEAN) {
			k->v.type = lua_toboolean(L, idx) ? SST_TRUE : SST_FALSE;
		} else if (t == LUA_TLIGHTUSERDATA) {
			k->v.type = SST_LUDATA;
			k->v.u.p = lua_touserdata(L, idx);
		} else if (t == LUA_TFUNCTION && lua_iscfunction(L, idx)) {
			k->v.type = SST_CFUNC;
			k->v.u.f = lua_tocfunction(L, idx);
		} else {
			return false; // a table or Lua function from outside the version
		}
	}
	k->hash = value_hash(&k->v);
	return true;
}

/*
 * index(ref, node, key [, keyx]) -> value | true, x
 * A table value gives true and its node number x > 0, a Lua function true
 * and -id. keyx, when given, is such an x naming a table or function key.
 */
static int
index_with(lua_State *L, bool strict) {
	struct sstore *s = check_ref(L, 1);
	const struct sst_node *n = check_node(L, s, 2);
	struct sst_key k;
	if (!to_key(L, 3, strict, &k))
		return 0;
	return push_value(L, node_get(n, &k));
}

static int
lindex(lua_State *L) {
	return index_with(L, false);
}

/* dindex: index with sharedata's key rules. */
static int
ldindex(lua_State *L) {
	return index_with(L, true);
}

/* len(ref, node) -> the border of the source table. */
static int
llen(lua_State *L) {
	struct sstore *s = check_ref(L, 1);
	const struct sst_node *n = check_node(L, s, 2);
	lua_pushinteger(L, n->asize);
	return 1;
}

/*
 * next(ref, node, key [, keyx]) -> key, keyx, value, valuex
 * The array part in order (nil holes skipped), then the hash part. A key
 * that is not in the node ends the walk (nothing returned).
 */
static int
lnext(lua_State *L) {
	struct sstore *s = check_ref(L, 1);
	const struct sst_node *n = check_node(L, s, 2);
	uint64_t pos = 0; // 0..asize-1: array, then hash slots
	if (!lua_isnoneornil(L, 3) || !lua_isnoneornil(L, 4)) {
		struct sst_key k;
		if (!to_key(L, 3, false, &k))
			return 0;
		if (k.v.type == SST_INT && (lua_Unsigned)k.v.u.i - 1 < n->asize) {
			pos = (uint64_t)k.v.u.i;
		} else {
			int64_t i = hash_find(n, &k);
			if (i < 0)
				return 0;
			pos = n->asize + (uint64_t)i + 1;
		}
	}
	for (; pos < n->asize; pos++) {
		if (n->array[pos].type != SST_NIL) {
			lua_pushinteger(L, (lua_Integer)pos + 1);
			lua_pushnil(L);
			if (push_value(L, &n->array[pos]) == 1)
				lua_pushnil(L);
			return 4;
		}
	}
	uint64_t hcap = n->hash ? (uint64_t)n->hmask + 1 : 0;
	for (pos -= n->asize; pos < hcap; pos++) {
		const struct sst_slot *slot = &n->hash[pos];
		if (slot->key.type != SST_NIL) {
			if (push_value(L, &slot->key) == 1)
				lua_pushnil(L);
			if (push_value(L, &slot->val) == 1)
				lua_pushnil(L);
			return 4;
		}
	}
	return 0;
}

/* Pushes v for copy: tables from / into the map at mapidx, with work queued in workidx. */
static void
copy_value(lua_State *L, const struct sst_value *v, int mapidx, int workidx) {
	if (v->type == SST_LFUNC)
		luaL_error(L, "sharestore: can't copy a function");
	if (v->type != SST_TABLE) {
		push_value(L, v);
		return;
	}
	if (lua_rawgeti(L, mapidx, v->u.id) != LUA_TNIL)
		return;
	lua_pop(L, 1);
	lua_newtable(L);
	lua_pushvalue(L, -1);
	lua_rawseti(L, mapidx, v->u.id);
	lua_Integer w = (lua_Integer)lua_rawlen(L, workidx);
	lua_pushinteger(L, v->u.id);
	lua_rawseti(L, workidx, w + 1);
}

/*
 * copy(ref, node) -> a plain Lua table with the node's content. A node
 * reached twice gives one table (so cycles are kept), without recursion.
 */
static int
lcopy(lua_State *L) {
	struct sstore *s = check_ref(L, 1);
	lua_Integer root = luaL_checkinteger(L, 2);
	check_node(L, s, 2);
	lua_settop(L, 2);
	lua_newtable(L); // 3: node -> table
	lua_newtable(L); // 4: nodes left to fill
	struct sst_value rv = {.type = SST_TABLE, .u.id = (uint32_t)root};
	copy_value(L, &rv, 3, 4); // 5: the result
	lua_Integer w;
	while ((w = (lua_Integer)lua_rawlen(L, 4)) > 0) {
		lua_rawgeti(L, 4, w);
		uint32_t id = (uint32_t)lua_tointeger(L, -1);
		lua_pop(L, 1);
		lua_pushnil(L);
		lua_rawseti(L, 4, w);
		lua_rawgeti(L, 3, id); // the table to fill
		const struct sst_node *n = &s->nodes[id];
		for (uint32_t i = 0; i < n->asize; i++) {
			if (n->array[i].type == SST_NIL)
				continue;
			copy_value(L, &n->array[i], 3, 4);
			lua_rawseti(L, -2, (lua_Integer)i + 1);
		}
		uint64_t hcap = n->hash ? (uint64_t)n->hmask + 1 : 0;
		for (uint64_t i = 0; i < hcap; i++) {
			const struct sst_slot *slot = &n->hash[i];
			if (slot->key.type == SST_NIL)
				continue;
			copy_value(L, &slot->key, 3, 4);
			copy_value(L, &slot->val, 3, 4);
			lua_rawset(L, -3);
		}
		lua_pop(L, 1);
	}
	return 1;
}

/* funcbytes(ref, x) -> the string.dump bytes of function -x. */
static int
lfuncbytes(lua_State *L) {
	struct sstore *s = check_ref(L, 1);
	lua_Integer x = luaL_checkinteger(L, 2);
	if (x >= 0 || (lua_Unsigned)-x > s->nfuncs)
		luaL_error(L, "sharestore: bad function %d", (int)x);
	const struct sst_string *f = s->funcs[-x];
	lua_pushlstring(L, f->data, f->len);
	return 1;
}

/* open(handle) -> a new reference userdata, or nil once the version is gone. */
static int
lopen(lua_State *L) {
	struct sstore *s = grab_handle_or_null(L, 1);
	if (s == NULL)
		return 0;
	sstore_pushref(L, s);
	return 1;
}

/* close(ref): drops its reference now (later calls and __gc do nothing). */
static int
lclose(lua_State *L) {
	struct sst_ref *r = to_ref(L, 1);
	if (r->s) {
		sstore_release(r->s);
		r->s = NULL;
	}
	return 0;
}

/* handle(ref) -> the version's handle. */
static int
lhandle(lua_State *L) {
	lua_pushlightuserdata(L, handle_of(check_ref(L, 1)));
	return 1;
}

/* isdirty(ref) -> whether markdirty was called on the version. */
static int
lisdirty(lua_State *L) {
	lua_pushboolean(L, ATOM_LOAD(&check_ref(L, 1)->dirty) != 0);
	return 1;
}

/* size(ref) -> bytes held by the version. */
static int
lsize(lua_State *L) {
	lua_pushinteger(L, (lua_Integer)check_ref(L, 1)->bytes);
	return 1;
}

/* stat() -> live versions in the process, their bytes. */
static int
lstat(lua_State *L) {
	size_t count = ATOM_LOAD(&LIVE_COUNT);
	size_t bytes = ATOM_LOAD(&LIVE_BYTES);
	lua_pushinteger(L, (lua_Integer)count);
	lua_pushinteger(L, (lua_Integer)bytes);
	return 2;
}

/* Raw host references on handles (sharedata's corelib.host). */

static struct sstore *
grab_handle(lua_State *L, int idx) {
	struct sstore *s = grab_handle_or_null(L, idx);
	if (s == NULL)
		luaL_error(L, "sharestore: invalid object %p", lua_touserdata(L, idx));
	return s;
}

/* incref(handle) -> the new count. */
static int
lincref(lua_State *L) {
	struct sstore *s = grab_handle(L, 1); // this grab is the new reference
	lua_pushinteger(L, refcount(s));
	return 1;
}

/* decref(handle) -> the count left (0: freed). */
static int
ldecref(lua_State *L) {
	struct sstore *s = grab_handle(L, 1);
	int left = (int)refcount(s) - 2;
	sstore_release(s);
	sstore_release(s);
	lua_pushinteger(L, left < 0 ? 0 : left);
	return 1;
}

/* getref(handle) -> the reference count (not counting this call). */
static int
lgetref(lua_State *L) {
	struct sstore *s = grab_handle_or_null(L, 1);
	if (s == NULL) {
		lua_pushinteger(L, 0);
		return 1;
	}
	int n = (int)refcount(s) - 1;
	sstore_release(s);
	lua_pushinteger(L, n);
	return 1;
}

/* markdirty(handle): flags the version as superseded. */
static int
lmarkdirty(lua_State *L) {
	struct sstore *s = grab_handle(L, 1);
	ATOM_STORE(&s->dirty, 1);
	sstore_release(s);
	return 0;
}

/* Pushes the reference metatable, created on first use. */
static void
register_ref_meta(lua_State *L) {
	if (luaL_newmetatable(L, REF_MT)) {
		lua_pushcfunction(L, ref_gc);
		lua_setfield(L, -2, "__gc");
		lua_pushliteral(L, "sharestore reference");
		lua_setfield(L, -2, "__name");
	}
}

void
sstore_register(lua_State *L) {
	static const luaL_Reg funcs[] = {
	    {"open", lopen},
	    {"close", lclose},
	    {"handle", lhandle},
	    {"isdirty", lisdirty},
	    {"size", lsize},
	    {"index", lindex},
	    {"dindex", ldindex},
	    {"len", llen},
	    {"next", lnext},
	    {"copy", lcopy},
	    {"funcbytes", lfuncbytes},
	    {"stat", lstat},
	    {"incref", lincref},
	    {"decref", ldecref},
	    {"getref", lgetref},
	    {"markdirty", lmarkdirty},
	    {NULL, NULL},
	};
	register_ref_meta(L);
	luaL_setfuncs(L, funcs, 1); // upvalue 1: the reference metatable
}
