/*
 * snlua's bytecode rewriter (service-src/snlua/slim.c) on its own: it slims
 * a real dump, and it refuses, leaving the dump to the caller as Lua wrote
 * it, any dump whose header is not exactly Lua 5.4's (one case per header
 * field), a truncated dump at every length, and random bytes. Every input
 * sits in a buffer of exactly its own size, so a read past its end is an
 * AddressSanitizer report.
 */
#include "snlua/slim.h"

#include "tt.h"

#include "skynet.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/*
 * The chunk under test: constants of every kind (nil, booleans, integer,
 * float, short and long string), locals, upvalues and nested functions.
 * It returns a checksum string and the function outer, whose parameter
 * names the rewriter drops.
 */
static const char CHUNK[] =
    "local greeting = 'hello'\n"
    "local long = 'a long string constant, longer than the forty bytes of a short one'\n"
    "local function outer(a, b)\n"
    "  local sum = a + b\n"
    "  local function inner(c)\n"
    "    local flags = { t = true, f = false, n = nil }\n"
    "    return sum * c + 0.5, flags.t, flags.f\n"
    "  end\n"
    "  return inner\n"
    "end\n"
    "local x, t, f = outer(1, 2)(3)\n"
    "local big = 1 << 40\n"
    "return string.format('%s %d %.1f %s %s %d', greeting, #long, x, t, f, big), outer\n";

static const char CHUNK_RESULT[] = "hello 66 9.5 true false 1099511627776";

/* Header offsets: signature 0-3, version 4, format 5, LUAC_DATA 6-11, sizes 12-14, LUAC_INT
 * 15-22, LUAC_NUM 23-30. */
#define AT_SIGNATURE   1 // the 'L': byte 0 (ESC) is how lua_load tells binary from text
#define AT_VERSION     4
#define AT_FORMAT      5
#define AT_LUAC_DATA   8
#define AT_INSTRUCTION 12
#define AT_INTEGER     13
#define AT_NUMBER      14
#define AT_LUAC_INT    15
#define AT_LUAC_NUM    (23 + 7) // the last byte of the 8-byte float 370.5
#define HEADER_BYTES   31

/* A dump in a buffer of exactly len bytes (len may be 0). */
static struct snlua_dump
dump_copy(const void *data, size_t len) {
	struct snlua_dump d = {skynet_malloc(len), len, len};
	if (len > 0)
		memcpy(d.data, data, len);
	return d;
}

static void
dump_free(struct snlua_dump *d) {
	skynet_free(d->data);
	*d = (struct snlua_dump){NULL, 0, 0};
}

static lua_State *
new_state(void) {
	lua_State *L = luaL_newstate();
	luaL_openlibs(L);
	return L;
}

/* The dump (with debug information) of CHUNK, in an exact-size buffer. */
static struct snlua_dump
chunk_dump(lua_State *L) {
	struct snlua_dump grown = {NULL, 0, 0};
	if (luaL_loadbuffer(L, CHUNK, sizeof(CHUNK) - 1, "=chunk") == LUA_OK)
		lua_dump(L, snlua_dump_write, &grown, 0);
	lua_pop(L, 1);
	struct snlua_dump d = dump_copy(grown.data, grown.len);
	skynet_free(grown.data);
	return d;
}

static const char *
buffer_reader(lua_State *L, void *ud, size_t *size) {
	struct snlua_dump **pd = ud;
	if (*pd == NULL) {
		*size = 0;
		return NULL;
	}
	*size = (*pd)->len;
	const char *data = (*pd)->data;
	*pd = NULL;
	return data;
}

static int
load_dump(lua_State *L, const struct snlua_dump *d) {
	struct snlua_dump copy = *d;
	struct snlua_dump *reading = &copy;
	return lua_load(L, buffer_reader, &reading, "=chunk", "b");
}

/*
 * Loads d and runs it: true when it yields CHUNK_RESULT. *named tells
 * whether outer still knows the name of its first parameter.
 */
static bool
runs_correctly(lua_State *L, const struct snlua_dump *d, bool *named) {
	int top = lua_gettop(L);
	bool ok = load_dump(L, d) == LUA_OK && lua_pcall(L, 0, 2, 0) == LUA_OK;
	if (ok) {
		const char *got = lua_tostring(L, -2);
		ok = got != NULL && strcmp(got, CHUNK_RESULT) == 0;
		if (!ok)
			fprintf(stderr, "chunk returned %s\n", got ? got : "(not a string)");
		if (named)
			*named = lua_getlocal(L, NULL, 1) != NULL; // the parameter of the function on top
	} else {
		fprintf(stderr, "chunk failed: %s\n", lua_tostring(L, -1));
	}
	lua_settop(L, top);
	return ok;
}

static void
full_dump_runs(int *failed) {
	lua_State *L = new_state();
	struct snlua_dump d = chunk_dump(L);
	TT_CHECK(d.len > HEADER_BYTES);
	bool named = false;
	TT_CHECK(runs_correctly(L, &d, &named));
	TT_CHECK(named);
	dump_free(&d);
	lua_close(L);
}

static void
rewrite_drops_names_and_runs(int *failed) {
	lua_State *L = new_state();
	struct snlua_dump d = chunk_dump(L);
	struct snlua_dump out = {NULL, 0, 0};
	TT_CHECK(snlua_slim_dump(&d, &out));
	TT_CHECK(out.len > HEADER_BYTES && out.len < d.len);
	TT_CHECK(memcmp(out.data, d.data, HEADER_BYTES) == 0);
	bool named = true;
	TT_CHECK(runs_correctly(L, &out, &named));
	TT_CHECK(!named);
	dump_free(&out);
	dump_free(&d);
	lua_close(L);
}

static void
apply_replaces_a_sound_dump(int *failed) {
	lua_State *L = new_state();
	struct snlua_dump d = chunk_dump(L);
	size_t full_len = d.len;
	TT_CHECK(snlua_slim_apply(L, "=chunk", &d));
	TT_CHECK(lua_gettop(L) == 0);
	TT_CHECK(d.len < full_len);
	bool named = true;
	TT_CHECK(runs_correctly(L, &d, &named));
	TT_CHECK(!named);
	dump_free(&d);
	lua_close(L);
}

/*
 * in is refused by the rewriter (out stays empty) and by the code cache's
 * choice, which leaves in exactly as it was: same buffer, same bytes.
 */
static bool
refused_and_kept(lua_State *L, struct snlua_dump *in) {
	struct snlua_dump out = {NULL, 0, 0};
	bool refused = !snlua_slim_dump(in, &out) && out.data == NULL && out.len == 0;
	struct snlua_dump before = dump_copy(in->data, in->len);
	char *data = in->data;
	bool kept = !snlua_slim_apply(L, "=chunk", in) && in->data == data && in->len == before.len &&
	            (before.len == 0 || memcmp(in->data, before.data, before.len) == 0) &&
	            lua_gettop(L) == 0;
	dump_free(&before);
	return refused && kept;
}

/*
 * One header field altered (the byte at offset gets delta added): the
 * rewriter refuses, and the dump Lua wrote is what the cache keeps. Lua's
 * own loader refuses the same header, so a dump the rewriter refuses this
 * way comes only from a Lua build it was not written for; that build loads
 * its own dump, which is why the dump must be kept as it is.
 */
static void
refuses_altered_field(int *failed, size_t offset, int delta) {
	lua_State *L = new_state();
	struct snlua_dump d = chunk_dump(L);
	TT_CHECK(d.len > offset);
	d.data[offset] = (char)(d.data[offset] + delta);
	TT_CHECK(refused_and_kept(L, &d));
	TT_CHECK(load_dump(L, &d) != LUA_OK); // Lua checks this field too
	lua_settop(L, 0);
	dump_free(&d);
	lua_close(L);
}

static void
refuses_signature(int *failed) {
	refuses_altered_field(failed, AT_SIGNATURE, 1);
}

static void
refuses_version(int *failed) {
	refuses_altered_field(failed, AT_VERSION, 1); // 0x55
}

static void
refuses_format(int *failed) {
	refuses_altered_field(failed, AT_FORMAT, 1);
}

static void
refuses_luac_data(int *failed) {
	refuses_altered_field(failed, AT_LUAC_DATA, 1);
}

static void
refuses_instruction_size(int *failed) {
	refuses_altered_field(failed, AT_INSTRUCTION, 4); // 8-byte instructions
}

static void
refuses_integer_size(int *failed) {
	refuses_altered_field(failed, AT_INTEGER, -4); // 4-byte integers
}

static void
refuses_number_size(int *failed) {
	refuses_altered_field(failed, AT_NUMBER, -4); // 4-byte floats
}

static void
refuses_luac_int(int *failed) {
	refuses_altered_field(failed, AT_LUAC_INT, 1); // 0x5679 (or another byte order)
}

static void
refuses_luac_num(int *failed) {
	refuses_altered_field(failed, AT_LUAC_NUM, 1); // another float
}

/*
 * A dump that Lua loads but the rewriter refuses (one byte past the main
 * function, which Lua never reads): the cache keeps it and it runs.
 */
static void
refused_dump_still_loads_and_runs(int *failed) {
	lua_State *L = new_state();
	struct snlua_dump d = chunk_dump(L);
	struct snlua_dump longer = {skynet_malloc(d.len + 1), d.len + 1, d.len + 1};
	memcpy(longer.data, d.data, d.len);
	longer.data[d.len] = 0;
	TT_CHECK(refused_and_kept(L, &longer));
	bool named = false;
	TT_CHECK(runs_correctly(L, &longer, &named));
	TT_CHECK(named); // the full dump, not a slim one
	dump_free(&longer);
	dump_free(&d);
	lua_close(L);
}

/* Every prefix of the dump, from empty to one byte short, in its own exact-size buffer. */
static void
refuses_truncated_dumps(int *failed) {
	lua_State *L = new_state();
	struct snlua_dump d = chunk_dump(L);
	int refused = 0;
	for (size_t len = 0; len < d.len; len++) {
		struct snlua_dump cut = dump_copy(d.data, len);
		if (refused_and_kept(L, &cut))
			refused++;
		else
			fprintf(stderr, "a dump cut to %zu of %zu bytes was not refused\n", len, d.len);
		TT_CHECK(load_dump(L, &cut) != LUA_OK); // Lua says "truncated" and does not crash
		lua_settop(L, 0);
		dump_free(&cut);
	}
	TT_CHECK(refused == (int)d.len);
	dump_free(&d);
	lua_close(L);
}

/* xorshift32: deterministic bytes for the random cases. */
static uint32_t
next_random(uint32_t *state) {
	uint32_t x = *state;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*state = x;
	return x;
}

/* Random bytes of random lengths: all refused, the cache keeps them as they are. */
static void
refuses_random_dumps(int *failed) {
	lua_State *L = new_state();
	uint32_t seed = 0x5eed1234;
	int refused = 0;
	const int rounds = 300;
	for (int i = 0; i < rounds; i++) {
		size_t len = next_random(&seed) % 600;
		struct snlua_dump r = {skynet_malloc(len), len, len};
		for (size_t k = 0; k < len; k++)
			r.data[k] = (char)next_random(&seed);
		if (i % 2 == 1 && len > 0)
			r.data[0] = 0x1b; // looks binary to lua_load
		refused += refused_and_kept(L, &r);
		dump_free(&r);
	}
	TT_CHECK(refused == rounds);
	lua_close(L);
}

/*
 * The known header followed by random bytes, and the real dump with a few
 * random bytes changed past its header: the walk must stay inside the
 * input whatever the bytes say; when it refuses, its output is empty, and
 * when it accepts, the output is no longer than the input.
 */
static void
walks_random_bodies_within_bounds(int *failed) {
	lua_State *L = new_state();
	struct snlua_dump d = chunk_dump(L);
	uint32_t seed = 0xb0d1e5;
	int bad_outputs = 0;
	for (int i = 0; i < 2000; i++) {
		struct snlua_dump in;
		if (i % 2 == 0) {
			size_t len = HEADER_BYTES + next_random(&seed) % 400;
			in = (struct snlua_dump){skynet_malloc(len), len, len};
			memcpy(in.data, d.data, HEADER_BYTES);
			for (size_t k = HEADER_BYTES; k < len; k++)
				in.data[k] = (char)next_random(&seed);
		} else {
			in = dump_copy(d.data, d.len);
			int changes = 1 + (int)(next_random(&seed) % 4);
			for (int k = 0; k < changes; k++) {
				size_t at = HEADER_BYTES + next_random(&seed) % (d.len - HEADER_BYTES);
				in.data[at] = (char)next_random(&seed);
			}
		}
		struct snlua_dump out = {NULL, 0, 0};
		bool ok = snlua_slim_dump(&in, &out);
		if (ok ? out.len > in.len : (out.data != NULL || out.len != 0))
			bad_outputs++;
		dump_free(&out);
		dump_free(&in);
	}
	TT_CHECK(bad_outputs == 0);
	dump_free(&d);
	lua_close(L);
}

int
main(void) {
	TT_RUN(full_dump_runs);
	TT_RUN(rewrite_drops_names_and_runs);
	TT_RUN(apply_replaces_a_sound_dump);
	TT_RUN(refuses_signature);
	TT_RUN(refuses_version);
	TT_RUN(refuses_format);
	TT_RUN(refuses_luac_data);
	TT_RUN(refuses_instruction_size);
	TT_RUN(refuses_integer_size);
	TT_RUN(refuses_number_size);
	TT_RUN(refuses_luac_int);
	TT_RUN(refuses_luac_num);
	TT_RUN(refused_dump_still_loads_and_runs);
	TT_RUN(refuses_truncated_dumps);
	TT_RUN(refuses_random_dumps);
	TT_RUN(walks_random_bodies_within_bounds);
	return tt_summary();
}
