/*
 * md5.core: MD5 digests and an MD5-based stream cipher (lualib/md5.lua adds
 * sumhexa and hmacmd5 on top). Loaded from luaclib/md5.so, by skynet
 * services and by a plain lua5.4 alike: the code uses only Lua and
 * libcrypto (MD5 itself is libcrypto's EVP digest).
 *
 *   sum(s)                   16 raw bytes of MD5(s)
 *   exor(a, b)               a XOR b, byte by byte; equal lengths only
 *   crypt(msg, key[, seed])  one byte #seed, the seed, then #msg bytes of
 *                            ciphertext. Without a third argument the seed
 *                            is the raw bytes of the current time_t
 *   decrypt(cipher, key)     the msg that crypt(msg, key, seed) encrypted
 *
 * The stream cipher: a working block B holds the seed zero-padded to 16
 * bytes followed by the key (so 16 + #key bytes; seed <= 16 bytes, key <=
 * 256 bytes). Each 16-byte chunk of the message (the last may be shorter)
 * is XORed with the first bytes of MD5(B); the ciphertext chunk then
 * overwrites the first bytes of B. Encryption and decryption run the same
 * keystream, as both feed the ciphertext back. B lives on the C stack;
 * results are built in luaL_Buffers, so errors leave nothing behind.
 */
#include <openssl/evp.h>
#include <openssl/md5.h>

#include <lauxlib.h>
#include <lua.h>

#include <stdint.h>
#include <string.h>
#include <time.h>

#define MD5_CHUNK_BYTES 16 // bytes of keystream per MD5 of the block
#define MD5_SEED_MAX    16
#define MD5_KEY_MAX     256

int luaopen_md5_core(lua_State *L);

static const uint8_t *
check_bytes(lua_State *L, int idx, size_t *sz) {
	return (const uint8_t *)luaL_checklstring(L, idx, sz);
}

static void
digest(lua_State *L, const uint8_t *s, size_t sz, uint8_t out[MD5_DIGEST_LENGTH]) {
	if (EVP_Digest(s, sz, out, NULL, EVP_md5(), NULL) != 1)
		luaL_error(L, "md5: libcrypto md5 failed");
}

static int
lsum(lua_State *L) {
	size_t sz;
	const uint8_t *s = check_bytes(L, 1, &sz);
	uint8_t out[MD5_DIGEST_LENGTH];
	digest(L, s, sz, out);
	lua_pushlstring(L, (const char *)out, sizeof out);
	return 1;
}

static int
lexor(lua_State *L) {
	size_t asz, bsz;
	const uint8_t *a = check_bytes(L, 1, &asz);
	const uint8_t *b = check_bytes(L, 2, &bsz);
	luaL_argcheck(L, asz == bsz, 2, "lengths must be equal");
	luaL_Buffer buf;
	uint8_t *out = (uint8_t *)luaL_buffinitsize(L, &buf, asz);
	for (size_t i = 0; i < asz; i++)
		out[i] = a[i] ^ b[i];
	luaL_pushresultsize(&buf, asz);
	return 1;
}

/*
 * The working block of the stream cipher, filled from seed and key (both
 * already checked against their limits); returns its size.
 */
static size_t
init_block(uint8_t *block, const uint8_t *seed, size_t seed_sz, const uint8_t *key, size_t key_sz) {
	memset(block, 0, MD5_SEED_MAX);
	memcpy(block, seed, seed_sz);
	memcpy(block + MD5_SEED_MAX, key, key_sz);
	return MD5_SEED_MAX + key_sz;
}

/* XORs in with the keystream into out; encrypt says which of the two is the ciphertext. */
static void
run_stream(lua_State *L, uint8_t *block, size_t block_sz, const uint8_t *in, size_t sz,
           uint8_t *out, int encrypt) {
	for (size_t i = 0; i < sz; i += MD5_CHUNK_BYTES) {
		size_t n = sz - i < MD5_CHUNK_BYTES ? sz - i : MD5_CHUNK_BYTES;
		uint8_t k[MD5_DIGEST_LENGTH];
		digest(L, block, block_sz, k);
		for (size_t j = 0; j < n; j++)
			out[i + j] = in[i + j] ^ k[j];
		memcpy(block, encrypt ? out + i : in + i, n);
	}
}

static const uint8_t *
check_key(lua_State *L, int idx, size_t *sz) {
	const uint8_t *key = check_bytes(L, idx, sz);
	if (*sz > MD5_KEY_MAX)
		luaL_error(L, "key too long (> %d)", MD5_KEY_MAX);
	return key;
}

static int
lcrypt(lua_State *L) {
	size_t msg_sz, key_sz, seed_sz;
	const uint8_t *msg = check_bytes(L, 1, &msg_sz);
	const uint8_t *key = check_key(L, 2, &key_sz);
	const uint8_t *seed;
	time_t now;
	if (lua_gettop(L) >= 3) {
		seed = check_bytes(L, 3, &seed_sz);
	} else {
		now = time(NULL);
		seed = (const uint8_t *)&now;
		seed_sz = sizeof now;
	}
	if (seed_sz > MD5_SEED_MAX)
		return luaL_error(L, "seed too long (> %d)", MD5_SEED_MAX);
	uint8_t block[MD5_SEED_MAX + MD5_KEY_MAX];
	size_t block_sz = init_block(block, seed, seed_sz, key, key_sz);
	size_t out_sz = 1 + seed_sz + msg_sz;
	luaL_Buffer b;
	uint8_t *out = (uint8_t *)luaL_buffinitsize(L, &b, out_sz);
	out[0] = (uint8_t)seed_sz;
	memcpy(out + 1, seed, seed_sz);
	run_stream(L, block, block_sz, msg, msg_sz, out + 1 + seed_sz, 1);
	luaL_pushresultsize(&b, out_sz);
	return 1;
}

static int
ldecrypt(lua_State *L) {
	size_t sz, key_sz;
	const uint8_t *cipher = check_bytes(L, 1, &sz);
	const uint8_t *key = check_key(L, 2, &key_sz);
	size_t seed_sz = sz > 0 ? cipher[0] : 0;
	luaL_argcheck(L, sz > 0 && seed_sz <= MD5_SEED_MAX && sz >= 1 + seed_sz, 1,
	              "invalid cyphered string");
	uint8_t block[MD5_SEED_MAX + MD5_KEY_MAX];
	size_t block_sz = init_block(block, cipher + 1, seed_sz, key, key_sz);
	size_t msg_sz = sz - 1 - seed_sz;
	luaL_Buffer b;
	uint8_t *out = (uint8_t *)luaL_buffinitsize(L, &b, msg_sz);
	run_stream(L, block, block_sz, cipher + 1 + seed_sz, msg_sz, out, 0);
	luaL_pushresultsize(&b, msg_sz);
	return 1;
}

int
luaopen_md5_core(lua_State *L) {
	static const luaL_Reg funcs[] = {
	    {"sum", lsum}, {"exor", lexor}, {"crypt", lcrypt}, {"decrypt", ldecrypt}, {NULL, NULL},
	};
	luaL_newlib(L, funcs);
	lua_pushliteral(L, "MD5 1.2");
	lua_setfield(L, -2, "_VERSION");
	lua_pushliteral(L, "Copyright (C) 2003-2013 PUC-Rio");
	lua_setfield(L, -2, "_COPYRIGHT");
	lua_pushliteral(L, "Basic cryptographic facilities");
	lua_setfield(L, -2, "_DESCRIPTION");
	return 1;
}
