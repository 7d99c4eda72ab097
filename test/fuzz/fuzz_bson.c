/*
 * Fuzz target "bson": bson.decode and doc:makeindex (lualib-src/bson/lua-bson.c)
 * on arbitrary bytes, held in a full userdata of exactly the input's size so
 * that ASan sees any read past the end.
 *
 * Properties, for every input:
 *   - decode returns a table or raises one of the decoder's errors;
 *   - makeindex on the same bytes (as a bson object) succeeds or raises one
 *     of them; when both succeed, assigning every indexed key its decoded
 *     value raises at most a type or range error and the document still
 *     decodes (only fixed-size payloads changed);
 *   - encode of the decoded table succeeds or raises one of the errors a
 *     decoded value can meet (UTF-8, an array decoded with keys that are
 *     not 1..n, a decoded string starting with a zero byte, which encode
 *     reads as a tagged value), and whatever it encodes decodes again.
 *
 * A fresh lua_State per input keeps runs independent of each other and lets
 * LeakSanitizer attribute a leak to the input that caused it.
 */
#define _GNU_SOURCE // memmem
#include "../../lualib-src/bson/lua-bson.c"

#include "fuzz.h"

#include <lauxlib.h>
#include <lua.h>

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Whether the error on top holds one of texts (it may hold zero bytes: "<v> must be ..."). */
static bool
error_is(lua_State *L, const char *const *texts) {
	size_t len;
	const char *err = lua_tolstring(L, -1, &len);
	if (err == NULL)
		return false;
	for (; *texts != NULL; texts++) {
		if (memmem(err, len, *texts, strlen(*texts)) != NULL)
			return true;
	}
	fprintf(stderr, "unexpected error (%zu bytes): %s\n", len, err);
	for (size_t i = 0; i < len; i++)
		fprintf(stderr, "%02x%c", (unsigned char)err[i], i + 1 < len ? ' ' : '\n');
	return false;
}

static const char *const DECODE_ERRORS[] = {
    "Invalid bson block",
    "Invalid document end",
    "Invalid bson string , length =",
    "Invalid bson type : ",
    "Too depth while decoding bson",
    "Invalid bson array key : ",
    NULL,
};

static const char *const UPDATE_ERRORS[] = {
    "must be a 32bit integer ",
    "must be a 64bit integer ",
    "Type mismatch, need bson type ",
    "number expected",
    NULL,
};

/* A decoded string that starts with a zero byte reads as a tagged value when encoded again. */
static const char *const ENCODE_ERRORS[] = {
    "Invalid utf8 string",
    "Bson dictionary's key can't be number",
    "Bson array has a hole (nil), Use bson.null instead",
    "Invalid subtype ",
    "Invalid object id",
    "Invalid date",
    "Invalid timestamp",
    "Invalid int64",
    "Invalid binary",
    "Invalid regex",
    "Invalid bson block",
    "Invalid bson string , length =",
    "Invalid bson value of type ",
    NULL,
};

/* Pushes the result of f(arg) and returns true, or pushes the error and returns false. */
static bool
call1(lua_State *L, lua_CFunction f, int arg) {
	lua_pushcfunction(L, f);
	lua_pushvalue(L, arg);
	return lua_pcall(L, 1, 1, 0) == LUA_OK;
}

/* doc (a bson object at doc_idx) [key] = decoded[key] for each key of its index. */
static void
update_every_key(lua_State *L, int doc_idx, int decoded_idx) {
	FUZZ_CHECK(lua_getiuservalue(L, doc_idx, 1) == LUA_TTABLE);
	int index = lua_gettop(L);
	lua_pushnil(L);
	while (lua_next(L, index) != 0) {
		lua_pop(L, 1);
		lua_pushcfunction(L, lnewindex);
		lua_pushvalue(L, doc_idx);
		lua_pushvalue(L, -3);
		lua_pushvalue(L, -1);
		lua_rawget(L, decoded_idx);
		if (lua_pcall(L, 3, 0, 0) != LUA_OK) {
			FUZZ_CHECK(error_is(L, UPDATE_ERRORS));
			lua_pop(L, 1);
		}
	}
	lua_pop(L, 1);
	FUZZ_CHECK(call1(L, ldecode, doc_idx));
	FUZZ_CHECK(lua_istable(L, -1));
	lua_pop(L, 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	lua_State *L = fuzz_lua_open();
	luaL_requiref(L, "bson", luaopen_bson, 0);
	lua_pop(L, 1);
	luaL_checkstack(L, 16, NULL);

	uint8_t *raw = lua_newuserdatauv(L, size, 0);
	memcpy(raw, data, size);
	int raw_idx = lua_gettop(L);
	uint8_t *doc = lua_newuserdatauv(L, size, 1);
	memcpy(doc, data, size);
	luaL_setmetatable(L, "bson");
	int doc_idx = lua_gettop(L);

	bool decoded = call1(L, ldecode, raw_idx);
	if (decoded)
		FUZZ_CHECK(lua_istable(L, -1));
	else
		FUZZ_CHECK(error_is(L, DECODE_ERRORS));
	int decoded_idx = lua_gettop(L);

	if (call1(L, lmakeindex, doc_idx)) {
		FUZZ_CHECK(lua_touserdata(L, -1) == doc);
		if (decoded)
			update_every_key(L, doc_idx, decoded_idx);
	} else {
		FUZZ_CHECK(error_is(L, DECODE_ERRORS));
	}
	lua_pop(L, 1);

	if (decoded) {
		if (call1(L, lencode, decoded_idx)) {
			FUZZ_CHECK(call1(L, ldecode, lua_gettop(L)));
			FUZZ_CHECK(lua_istable(L, -1));
		} else {
			FUZZ_CHECK(error_is(L, ENCODE_ERRORS));
		}
	}
	lua_close(L);
	return 0;
}
