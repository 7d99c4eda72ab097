/*
 * skynet.crypt (and client.crypt): the hashing and cipher helpers skynet's
 * login protocol and game clients use. Every function takes and returns
 * Lua strings of raw bytes; an "8-byte key" is a string of exactly 8 bytes,
 * read as an unsigned 64-bit little-endian number where arithmetic is done.
 *
 * Where the bytes come from:
 *   libcrypto (standard algorithms): SHA-1 and MD5 digests (EVP_Digest),
 *     HMAC-SHA1 (HMAC), the DES block cipher (DES_ecb_encrypt: OpenSSL 3
 *     keeps EVP's DES-ECB in the legacy provider, which would have to be
 *     loaded process-wide), base64 encoding (EVP_EncodeBlock), random bytes
 *     (RAND_bytes), the MD5 compression function (MD5_Transform).
 *   written here (skynet's own constructions):
 *     hashkey      two 32-bit string hashes (djb x33 from 5381, and the
 *                  shift/xor hash from 0x4e67c6a7), each stored little-endian
 *     hmac64       one bare MD5 compression of the words x1 x0 y1 y0 (x4),
 *                  without the final feed-forward: result (c^d, a^b)
 *     hmac64_md5   MD5 of x y x y x y, first half XOR second half
 *     hmac_hash    hmac64(hashkey(text), key)
 *     dhexchange / dhsecret  modular exponentiation in the group of
 *                  integers mod P = 2^64 - 59, generator 5, the exponent
 *                  never reduced; a base is reduced only when above P, so
 *                  base P with exponent 1 gives P back (peers rely on the
 *                  exact bytes, quirk included)
 *     DES padding  always added: ISO/IEC 7816-4 (0x80 then zeros, mode 0,
 *                  the default) or PKCS#7 (mode 1), checked on decoding
 *     base64decode a lenient decoder: bytes outside the alphabet are
 *                  skipped, groups of 4 symbols are decoded one by one, a
 *                  group cut short by the end is completed with '=', and
 *                  skipped bytes after the last group make an empty group
 *                  (an error), as in skynet
 *     hexdecode    skynet's digit rule: '0'..'9', else (ch - 'a' + 10) as
 *                  a byte, any value above 16 rejected (so 'g' is 16 and
 *                  the uppercase letters 'A'..'V' fail)
 *     xor_str      repeating-key XOR
 *
 * Memory: results are built in luaL_Buffers, so an error on any path
 * leaves nothing behind; no heap allocation of our own and no symbol of the
 * skynet runtime (the same object is linked into client.so). Threads: no
 * mutable static data; libcrypto's calls used here are thread-safe.
 */
#include "lua-crypt.h"

/*
 * DES_ecb_encrypt, DES_set_key_unchecked, MD5_Init and MD5_Transform are
 * deprecated in OpenSSL 3 but still built into libcrypto; they are the
 * only calls that give the raw DES block cipher without loading the legacy
 * provider, and MD5's compression function on its own.
 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/crypto.h>
#include <openssl/des.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/md5.h>
#include <openssl/rand.h>

#include <lauxlib.h>
#include <lua.h>

#include <stdint.h>
#include <string.h>

#define CRYPT_KEY_BYTES    8
#define DES_BLOCK_BYTES    8
#define PADDING_ISO7816_4  0
#define PADDING_PKCS7      1
#define DH_PRIME           0xFFFFFFFFFFFFFFC5ULL // 2^64 - 59
#define DH_GENERATOR       5
#define SHA1_BLOCK_BYTES   64
#define BASE64_PAD         64 // the value given to '='
#define BASE64_CHUNK_BYTES (3 * 4096)
#define HASHKEY_H1_START   5381u
#define HASHKEY_H2_START   0x4E67C6A7u

static uint64_t
read_u64le(const uint8_t *p) {
	uint64_t v = 0;
	for (int i = CRYPT_KEY_BYTES - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void
write_u64le(uint8_t *p, uint64_t v) {
	for (int i = 0; i < CRYPT_KEY_BYTES; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void
write_u32le(uint8_t *p, uint32_t v) {
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static const uint8_t *
check_bytes(lua_State *L, int idx, size_t *sz) {
	return (const uint8_t *)luaL_checklstring(L, idx, sz);
}

/* Argument idx as an 8-byte key; any other length raises err. */
static const uint8_t *
check_key8(lua_State *L, int idx, const char *err) {
	size_t sz;
	const uint8_t *p = check_bytes(L, idx, &sz);
	if (sz != CRYPT_KEY_BYTES)
		luaL_error(L, "%s", err);
	return p;
}

static int
push_bytes(lua_State *L, const uint8_t *p, size_t sz) {
	lua_pushlstring(L, (const char *)p, sz);
	return 1;
}

static void
hash_text(const uint8_t *s, size_t sz, uint8_t out[CRYPT_KEY_BYTES]) {
	uint32_t h1 = HASHKEY_H1_START;
	uint32_t h2 = HASHKEY_H2_START;
	for (size_t i = 0; i < sz; i++) {
		uint32_t c = s[i];
		h1 = h1 * 33 + c;
		h2 ^= (h2 << 5) + c + (h2 >> 2);
	}
	write_u32le(out, h1);
	write_u32le(out + 4, h2);
}

static int
lhashkey(lua_State *L) {
	size_t sz;
	const uint8_t *s = check_bytes(L, 1, &sz);
	uint8_t out[CRYPT_KEY_BYTES];
	hash_text(s, sz, out);
	return push_bytes(L, out, sizeof out);
}

static int
lrandomkey(lua_State *L) {
	uint8_t key[CRYPT_KEY_BYTES];
	if (RAND_bytes(key, sizeof key) != 1)
		return luaL_error(L, "randomkey: no random bytes available");
	uint8_t x = 0;
	for (int i = 0; i < CRYPT_KEY_BYTES; i++)
		x ^= key[i];
	if (x == 0)
		key[0] |= 1; // never all zero (dhexchange refuses 0)
	return push_bytes(L, key, sizeof key);
}

/* DES: the key schedule of argument 1 and the padding mode of argument 3. */

static const uint8_t *
check_des_key(lua_State *L) {
	size_t sz;
	const uint8_t *key = check_bytes(L, 1, &sz);
	if (sz != CRYPT_KEY_BYTES)
		luaL_error(L, "Invalid key size %I, need 8 bytes", (lua_Integer)sz);
	return key;
}

static int
check_padding(lua_State *L, int idx) {
	lua_Integer mode = luaL_optinteger(L, idx, PADDING_ISO7816_4);
	if (mode != PADDING_ISO7816_4 && mode != PADDING_PKCS7)
		luaL_error(L, "Invalid padding mode %I", mode);
	return (int)mode;
}

static void
des_block(DES_key_schedule *ks, const uint8_t *in, uint8_t *out, int enc) {
	DES_ecb_encrypt((const_DES_cblock *)in, (DES_cblock *)out, ks, enc);
}

static int
ldesencode(lua_State *L) {
	const uint8_t *key = check_des_key(L);
	size_t len;
	const uint8_t *text = check_bytes(L, 2, &len);
	int mode = check_padding(L, 3);
	size_t full = len & ~(size_t)(DES_BLOCK_BYTES - 1);
	size_t out_len = full + DES_BLOCK_BYTES;
	luaL_Buffer b;
	uint8_t *out = (uint8_t *)luaL_buffinitsize(L, &b, out_len);
	DES_key_schedule ks;
	DES_set_key_unchecked((const_DES_cblock *)key, &ks);
	for (size_t i = 0; i < full; i += DES_BLOCK_BYTES)
		des_block(&ks, text + i, out + i, DES_ENCRYPT);
	uint8_t last[DES_BLOCK_BYTES];
	size_t rest = len - full;
	memcpy(last, text + full, rest);
	if (mode == PADDING_PKCS7) {
		memset(last + rest, (int)(DES_BLOCK_BYTES - rest), DES_BLOCK_BYTES - rest);
	} else {
		last[rest] = 0x80;
		memset(last + rest + 1, 0, DES_BLOCK_BYTES - rest - 1);
	}
	des_block(&ks, last, out + full, DES_ENCRYPT);
	OPENSSL_cleanse(&ks, sizeof ks);
	luaL_pushresultsize(&b, out_len);
	return 1;
}

/* The plaintext bytes the padded last block holds, or -1 if its padding is bad. */
static int
unpadded_size(const uint8_t last[DES_BLOCK_BYTES], int mode) {
	if (mode == PADDING_PKCS7) {
		int n = last[DES_BLOCK_BYTES - 1];
		if (n < 1 || n > DES_BLOCK_BYTES)
			return -1;
		for (int i = DES_BLOCK_BYTES - n; i < DES_BLOCK_BYTES - 1; i++) {
			if (last[i] != n)
				return -1;
		}
		return DES_BLOCK_BYTES - n;
	}
	for (int i = DES_BLOCK_BYTES - 1; i >= 0; i--) {
		if (last[i] == 0x80)
			return i;
		if (last[i] != 0)
			return -1;
	}
	return -1;
}

static int
ldesdecode(lua_State *L) {
	const uint8_t *key = check_des_key(L);
	size_t len;
	const uint8_t *text = check_bytes(L, 2, &len);
	int mode = check_padding(L, 3);
	if (len == 0 || len % DES_BLOCK_BYTES != 0)
		return luaL_error(L, "Invalid des crypt text length %I", (lua_Integer)len);
	luaL_Buffer b;
	uint8_t *out = (uint8_t *)luaL_buffinitsize(L, &b, len);
	DES_key_schedule ks;
	DES_set_key_unchecked((const_DES_cblock *)key, &ks);
	for (size_t i = 0; i < len; i += DES_BLOCK_BYTES)
		des_block(&ks, text + i, out + i, DES_DECRYPT);
	OPENSSL_cleanse(&ks, sizeof ks);
	int kept = unpadded_size(out + len - DES_BLOCK_BYTES, mode);
	if (kept < 0)
		return luaL_error(L, "Invalid des crypt text");
	luaL_pushresultsize(&b, len - DES_BLOCK_BYTES + (size_t)kept);
	return 1;
}

static int
lhexencode(lua_State *L) {
	static const char digits[] = "0123456789abcdef";
	size_t sz;
	const uint8_t *s = check_bytes(L, 1, &sz);
	luaL_Buffer b;
	char *out = luaL_buffinitsize(L, &b, sz * 2);
	for (size_t i = 0; i < sz; i++) {
		out[2 * i] = digits[s[i] >> 4];
		out[2 * i + 1] = digits[s[i] & 0xf];
	}
	luaL_pushresultsize(&b, sz * 2);
	return 1;
}

/* A hex digit's value as skynet reads it: above 16 means not a digit. */
static unsigned
hex_value(uint8_t ch) {
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	return (uint8_t)(ch - 'a' + 10);
}

static int
lhexdecode(lua_State *L) {
	size_t sz;
	const uint8_t *s = check_bytes(L, 1, &sz);
	if (sz % 2 != 0)
		return luaL_error(L, "Invalid hex text size %I", (lua_Integer)sz);
	luaL_Buffer b;
	uint8_t *out = (uint8_t *)luaL_buffinitsize(L, &b, sz / 2);
	for (size_t i = 0; i < sz; i += 2) {
		unsigned hi = hex_value(s[i]);
		unsigned lo = hex_value(s[i + 1]);
		if (hi > 16 || lo > 16)
			return luaL_error(L, "Invalid hex text");
		out[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	luaL_pushresultsize(&b, sz / 2);
	return 1;
}

/* Diffie-Hellman in the integers mod DH_PRIME. */

static uint64_t
mulmod_p(uint64_t a, uint64_t b) {
	return (uint64_t)((unsigned __int128)a * b % DH_PRIME);
}

/* base^exp mod P for exp >= 1, left to right; exponent 1 returns base as is. */
static uint64_t
powmod_p(uint64_t base, uint64_t exp) {
	if (base > DH_PRIME)
		base %= DH_PRIME;
	uint64_t r = base;
	for (int bit = 62 - __builtin_clzll(exp); bit >= 0; bit--) {
		r = mulmod_p(r, r);
		if ((exp >> bit) & 1)
			r = mulmod_p(r, base);
	}
	return r;
}

static int
push_u64(lua_State *L, uint64_t v) {
	uint8_t out[CRYPT_KEY_BYTES];
	write_u64le(out, v);
	return push_bytes(L, out, sizeof out);
}

static int
ldhexchange(lua_State *L) {
	uint64_t k = read_u64le(check_key8(L, 1, "Invalid dh uint64 key"));
	if (k == 0)
		return luaL_error(L, "Can't be 0");
	return push_u64(L, powmod_p(DH_GENERATOR, k));
}

static int
ldhsecret(lua_State *L) {
	uint64_t x = read_u64le(check_key8(L, 1, "Invalid uint64 x"));
	uint64_t y = read_u64le(check_key8(L, 2, "Invalid uint64 y"));
	if (x == 0 || y == 0)
		return luaL_error(L, "Can't be 0");
	return push_u64(L, powmod_p(x, y));
}

/* hmac64: MD5_Transform adds the chaining value; subtracting it back gives
 * the bare compression skynet uses. */
static void
hmac64(const uint8_t x[CRYPT_KEY_BYTES], const uint8_t y[CRYPT_KEY_BYTES],
       uint8_t out[CRYPT_KEY_BYTES]) {
	uint8_t block[MD5_CBLOCK];
	for (int i = 0; i < MD5_CBLOCK; i += 16) {
		memcpy(block + i, x + 4, 4);
		memcpy(block + i + 4, x, 4);
		memcpy(block + i + 8, y + 4, 4);
		memcpy(block + i + 12, y, 4);
	}
	MD5_CTX ctx;
	MD5_Init(&ctx);
	uint32_t a0 = ctx.A, b0 = ctx.B, c0 = ctx.C, d0 = ctx.D;
	MD5_Transform(&ctx, block);
	uint32_t a = ctx.A - a0, b = ctx.B - b0, c = ctx.C - c0, d = ctx.D - d0;
	write_u32le(out, c ^ d);
	write_u32le(out + 4, a ^ b);
}

static int
lhmac64(lua_State *L) {
	const uint8_t *x = check_key8(L, 1, "Invalid uint64 x");
	const uint8_t *y = check_key8(L, 2, "Invalid uint64 y");
	uint8_t out[CRYPT_KEY_BYTES];
	hmac64(x, y, out);
	return push_bytes(L, out, sizeof out);
}

static int
lhmac64_md5(lua_State *L) {
	const uint8_t *x = check_key8(L, 1, "Invalid uint64 x");
	const uint8_t *y = check_key8(L, 2, "Invalid uint64 y");
	uint8_t msg[6 * CRYPT_KEY_BYTES];
	for (int i = 0; i < 3; i++) {
		memcpy(msg + 16 * i, x, CRYPT_KEY_BYTES);
		memcpy(msg + 16 * i + 8, y, CRYPT_KEY_BYTES);
	}
	uint8_t digest[MD5_DIGEST_LENGTH];
	if (EVP_Digest(msg, sizeof msg, digest, NULL, EVP_md5(), NULL) != 1)
		return luaL_error(L, "hmac64_md5: libcrypto md5 failed");
	uint8_t out[CRYPT_KEY_BYTES];
	for (int i = 0; i < CRYPT_KEY_BYTES; i++)
		out[i] = digest[i] ^ digest[i + 8];
	return push_bytes(L, out, sizeof out);
}

static int
lhmac_hash(lua_State *L) {
	const uint8_t *key = check_key8(L, 1, "Invalid uint64 key");
	size_t sz;
	const uint8_t *text = check_bytes(L, 2, &sz);
	uint8_t h[CRYPT_KEY_BYTES];
	hash_text(text, sz, h);
	uint8_t out[CRYPT_KEY_BYTES];
	hmac64(h, key, out);
	return push_bytes(L, out, sizeof out);
}

static int
lbase64encode(lua_State *L) {
	size_t sz;
	const uint8_t *s = check_bytes(L, 1, &sz);
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	/* Whole chunks of 3 bytes encode without padding, so the pieces join. */
	for (size_t i = 0; i < sz; i += BASE64_CHUNK_BYTES) {
		size_t n = sz - i < BASE64_CHUNK_BYTES ? sz - i : BASE64_CHUNK_BYTES;
		uint8_t *p = (uint8_t *)luaL_prepbuffsize(&b, (n + 2) / 3 * 4 + 1); // + NUL
		int w = EVP_EncodeBlock(p, s + i, (int)n);
		luaL_addsize(&b, (size_t)w);
	}
	luaL_pushresult(&b);
	return 1;
}

/* 0..63 for the alphabet, BASE64_PAD for '=', -1 for a byte to skip. */
static int
base64_value(uint8_t ch) {
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A';
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9')
		return ch - '0' + 52;
	if (ch == '+')
		return 62;
	if (ch == '/')
		return 63;
	if (ch == '=')
		return BASE64_PAD;
	return -1;
}

/* Decodes the 4 symbols of v into out; returns the bytes written, or -1. */
static int
base64_group(const int v[4], uint8_t *out) {
	int pads = 0;
	for (int i = 0; i < 4; i++)
		pads += v[i] == BASE64_PAD;
	uint32_t n = 0;
	for (int i = 0; i < 4; i++)
		n = n << 6 | (uint32_t)(v[i] & 63);
	if (pads == 0) {
		out[0] = (uint8_t)(n >> 16);
		out[1] = (uint8_t)(n >> 8);
		out[2] = (uint8_t)n;
		return 3;
	}
	if (pads == 1 && v[3] == BASE64_PAD && (v[2] & 3) == 0) {
		out[0] = (uint8_t)(n >> 16);
		out[1] = (uint8_t)(n >> 8);
		return 2;
	}
	if (pads == 2 && v[2] == BASE64_PAD && v[3] == BASE64_PAD && (v[1] & 15) == 0) {
		out[0] = (uint8_t)(n >> 16);
		return 1;
	}
	return -1;
}

static int
lbase64decode(lua_State *L) {
	size_t sz;
	const uint8_t *s = check_bytes(L, 1, &sz);
	luaL_Buffer b;
	/* Only a group of 4 symbols gives 3 bytes; a shorter one is the last. */
	uint8_t *out = (uint8_t *)luaL_buffinitsize(L, &b, sz / 4 * 3 + 3);
	size_t i = 0, n = 0;
	while (i < sz) {
		int v[4];
		for (int j = 0; j < 4; j++) {
			int d = -1;
			while (d < 0 && i < sz)
				d = base64_value(s[i++]);
			v[j] = d < 0 ? BASE64_PAD : d;
		}
		int w = base64_group(v, out + n);
		if (w < 0)
			return luaL_error(L, "Invalid base64 text");
		n += (size_t)w;
	}
	luaL_pushresultsize(&b, n);
	return 1;
}

static int
lsha1(lua_State *L) {
	size_t sz;
	const uint8_t *s = check_bytes(L, 1, &sz);
	uint8_t digest[EVP_MAX_MD_SIZE];
	unsigned int dsz = 0;
	if (EVP_Digest(s, sz, digest, &dsz, EVP_sha1(), NULL) != 1)
		return luaL_error(L, "sha1: libcrypto sha1 failed");
	return push_bytes(L, digest, dsz);
}

static int
lhmac_sha1(lua_State *L) {
	size_t ksz, tsz;
	const uint8_t *key = check_bytes(L, 1, &ksz);
	const uint8_t *text = check_bytes(L, 2, &tsz);
	/* HMAC hashes a key longer than the block first; doing it here keeps
	 * HMAC's int key length in range for any key. */
	uint8_t short_key[EVP_MAX_MD_SIZE];
	if (ksz > SHA1_BLOCK_BYTES) {
		unsigned int n = 0;
		if (EVP_Digest(key, ksz, short_key, &n, EVP_sha1(), NULL) != 1)
			return luaL_error(L, "hmac_sha1: libcrypto sha1 failed");
		key = short_key;
		ksz = n;
	}
	uint8_t digest[EVP_MAX_MD_SIZE];
	unsigned int dsz = 0;
	if (HMAC(EVP_sha1(), key, (int)ksz, text, tsz, digest, &dsz) == NULL)
		return luaL_error(L, "hmac_sha1: libcrypto hmac failed");
	return push_bytes(L, digest, dsz);
}

static int
lxor_str(lua_State *L) {
	size_t sz, ksz;
	const uint8_t *s = check_bytes(L, 1, &sz);
	const uint8_t *k = check_bytes(L, 2, &ksz);
	if (ksz == 0)
		return luaL_error(L, "Can't xor empty string");
	luaL_Buffer b;
	uint8_t *out = (uint8_t *)luaL_buffinitsize(L, &b, sz);
	for (size_t i = 0; i < sz; i++)
		out[i] = s[i] ^ k[i % ksz];
	luaL_pushresultsize(&b, sz);
	return 1;
}

int
luaopen_skynet_crypt(lua_State *L) {
	static const luaL_Reg funcs[] = {
	    {"hashkey", lhashkey},
	    {"randomkey", lrandomkey},
	    {"desencode", ldesencode},
	    {"desdecode", ldesdecode},
	    {"hexencode", lhexencode},
	    {"hexdecode", lhexdecode},
	    {"hmac64", lhmac64},
	    {"hmac64_md5", lhmac64_md5},
	    {"dhexchange", ldhexchange},
	    {"dhsecret", ldhsecret},
	    {"base64encode", lbase64encode},
	    {"base64decode", lbase64decode},
	    {"sha1", lsha1},
	    {"hmac_sha1", lhmac_sha1},
	    {"hmac_hash", lhmac_hash},
	    {"xor_str", lxor_str},
	    {NULL, NULL},
	};
	luaL_newlib(L, funcs);
	lua_createtable(L, 0, 2);
	lua_pushinteger(L, PADDING_ISO7816_4);
	lua_setfield(L, -2, "iso7816_4");
	lua_pushinteger(L, PADDING_PKCS7);
	lua_setfield(L, -2, "pkcs7");
	lua_setfield(L, -2, "padding");
	return 1;
}
