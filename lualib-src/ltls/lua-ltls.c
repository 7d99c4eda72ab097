/*
 * ltls: TLS over OpenSSL memory BIOs for the HTTP and WebSocket libraries
 * (luaclib/ltls.so: `require "ltls.c"` and `require "ltls.init.c"`).
 *
 * The Lua side moves bytes between the socket and OpenSSL: every call is
 * synchronous. A TLS object owns one SSL whose read BIO receives the
 * ciphertext the peer sent (handshake(in), read(in)) and whose write BIO
 * collects the ciphertext to send (returned by handshake, write). Objects:
 *
 *   ctx  userdata "ltls.ctx": one SSL_CTX (TLS_method: any version OpenSSL
 *        allows). Peer certificates are not verified unless
 *        ctx:set_verify(true[, cafile]) asked for it (then the system CA
 *        store or cafile, and the host name given to newtls, are checked).
 *   tls  userdata "ltls.tls": SSL + its BIOs; its user value holds the ctx
 *        userdata so the SSL_CTX outlives every SSL made from it. After
 *        close() (or collection) ssl is NULL and every method raises
 *        "context is closed".
 *
 * Process-wide initialisation: OpenSSL 3 initialises itself, but scripts
 * expect `require "ltls.c"` to fail until the node's bootstrap ran
 * ltls.init.c's constructor (config enablessl = true). READY records that;
 * it is written once by the constructor and read by every service loading
 * the module (an atomic flag; one shared object, so one flag per process).
 */
#include "atomic.h"

#include <lauxlib.h>
#include <lua.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdbool.h>
#include <string.h>

#define CTX_META  "ltls.ctx"
#define TLS_META  "ltls.tls"
#define BIO_CHUNK 4096

static ATOM_INT READY;

struct tls_ctx {
	SSL_CTX *ctx; // owned
	bool verify;
};

struct tls_conn {
	SSL *ssl;     // owned; NULL once closed
	BIO *in_bio;  // owned by ssl
	BIO *out_bio; // owned by ssl
};

/* The first queued OpenSSL error as text (or "" if none); clears the queue. */
static const char *
ssl_error_text(char *buf, size_t sz) {
	unsigned long e = ERR_get_error();
	if (e == 0) {
		buf[0] = '\0';
		return buf;
	}
	ERR_error_string_n(e, buf, sz);
	ERR_clear_error();
	return buf;
}

static struct tls_ctx *
check_ctx(lua_State *L, int idx) {
	struct tls_ctx *c = luaL_testudata(L, idx, CTX_META);
	if (c == NULL)
		luaL_error(L, "need sslctx");
	return c;
}

static struct tls_conn *
check_tls(lua_State *L, int idx) {
	struct tls_conn *t = luaL_testudata(L, idx, TLS_META);
	if (t == NULL)
		luaL_error(L, "need tls context");
	if (t->ssl == NULL)
		luaL_error(L, "context is closed");
	return t;
}

/* Pushes what the write BIO holds (maybe ""), returns its length. */
static size_t
push_pending(lua_State *L, struct tls_conn *t) {
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	size_t total = 0;
	for (;;) {
		char *p = luaL_prepbuffsize(&b, BIO_CHUNK);
		int n = BIO_read(t->out_bio, p, BIO_CHUNK);
		if (n <= 0)
			break;
		luaL_addsize(&b, (size_t)n);
		total += (size_t)n;
	}
	luaL_pushresult(&b);
	return total;
}

static void
feed(lua_State *L, struct tls_conn *t, int idx) {
	size_t sz = 0;
	const char *s = luaL_optlstring(L, idx, NULL, &sz);
	while (s && sz > 0) {
		int n = BIO_write(t->in_bio, s, sz > 0x40000000 ? 0x40000000 : (int)sz);
		if (n <= 0)
			luaL_error(L, "BIO_write error:%d", n);
		s += n;
		sz -= (size_t)n;
	}
}

/*--------------------------------------------------------------- ctx */

static int
lctx_gc(lua_State *L) {
	struct tls_ctx *c = luaL_checkudata(L, 1, CTX_META);
	if (c->ctx) {
		SSL_CTX_free(c->ctx);
		c->ctx = NULL;
	}
	return 0;
}

static int
lctx_set_cert(lua_State *L) {
	struct tls_ctx *c = check_ctx(L, 1);
	const char *certfile = luaL_optstring(L, 2, NULL);
	const char *keyfile = luaL_optstring(L, 3, NULL);
	if (certfile == NULL)
		return luaL_error(L, "need certfile");
	if (keyfile == NULL)
		return luaL_error(L, "need private key");
	char buf[256];
	int ret = SSL_CTX_use_certificate_chain_file(c->ctx, certfile);
	if (ret != 1)
		return luaL_error(L, "SSL_CTX_use_certificate_chain_file error:%d (%s: %s)", ret, certfile,
		                  ssl_error_text(buf, sizeof(buf)));
	ret = SSL_CTX_use_PrivateKey_file(c->ctx, keyfile, SSL_FILETYPE_PEM);
	if (ret != 1)
		return luaL_error(L, "SSL_CTX_use_PrivateKey_file error:%d (%s: %s)", ret, keyfile,
		                  ssl_error_text(buf, sizeof(buf)));
	ret = SSL_CTX_check_private_key(c->ctx);
	if (ret != 1)
		return luaL_error(L, "SSL_CTX_check_private_key error:%d (%s)", ret,
		                  ssl_error_text(buf, sizeof(buf)));
	return 0;
}

/* Cipher lists: TLS 1.2 and below (SSL_CTX_set_cipher_list) and TLS 1.3
 * suites (SSL_CTX_set_ciphersuites); a list must be valid for at least one. */
static int
lctx_set_ciphers(lua_State *L) {
	struct tls_ctx *c = check_ctx(L, 1);
	const char *list = luaL_optstring(L, 2, NULL);
	if (list == NULL)
		return luaL_error(L, "need cipher list");
	int ok12 = SSL_CTX_set_cipher_list(c->ctx, list);
	int ok13 = SSL_CTX_set_ciphersuites(c->ctx, list);
	ERR_clear_error();
	if (!ok12 && !ok13)
		return luaL_error(L, "SSL_CTX_set_cipher_list error: no usable cipher in (%s)", list);
	return 0;
}

/* set_verify(on[, cafile]): verify the peer's certificate chain against the
 * system CA store (or cafile) and, on clients, the host name given to
 * newtls. Off by default, as in skynet. */
static int
lctx_set_verify(lua_State *L) {
	struct tls_ctx *c = check_ctx(L, 1);
	bool on = lua_toboolean(L, 2);
	const char *cafile = luaL_optstring(L, 3, NULL);
	char buf[256];
	if (on) {
		int ret = cafile ? SSL_CTX_load_verify_locations(c->ctx, cafile, NULL)
		                 : SSL_CTX_set_default_verify_paths(c->ctx);
		if (ret != 1)
			return luaL_error(L, "SSL_CTX_load_verify_locations error:%d (%s)", ret,
			                  ssl_error_text(buf, sizeof(buf)));
	}
	SSL_CTX_set_verify(c->ctx, on ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, NULL);
	c->verify = on;
	return 0;
}

static int
lnewctx(lua_State *L) {
	struct tls_ctx *c = lua_newuserdatauv(L, sizeof(*c), 0);
	c->ctx = NULL;
	c->verify = false;
	luaL_setmetatable(L, CTX_META);
	c->ctx = SSL_CTX_new(TLS_method());
	if (c->ctx == NULL) {
		char buf[256];
		return luaL_error(L, "SSL_CTX_new client failed. %s", ssl_error_text(buf, sizeof(buf)));
	}
	return 1;
}

/*--------------------------------------------------------------- tls */

static int
ltls_close(lua_State *L) {
	struct tls_conn *t = luaL_testudata(L, 1, TLS_META);
	if (t == NULL)
		return luaL_error(L, "need tls context");
	if (t->ssl) {
		SSL_free(t->ssl); /* frees both BIOs */
		t->ssl = NULL;
		t->in_bio = t->out_bio = NULL;
	}
	return 0;
}

static int
ltls_gc(lua_State *L) {
	return ltls_close(L);
}

/* handshake([in]): the bytes to send, or nothing when there are none. */
static int
ltls_handshake(lua_State *L) {
	struct tls_conn *t = check_tls(L, 1);
	if (SSL_is_init_finished(t->ssl))
		return luaL_error(L, "handshake is finished");
	feed(L, t, 2);
	int ret = SSL_do_handshake(t->ssl);
	if (ret != 1) {
		int err = SSL_get_error(t->ssl, ret);
		if (err != SSL_ERROR_WANT_READ && err != SSL_ERROR_WANT_WRITE) {
			char buf[256];
			const char *why = ssl_error_text(buf, sizeof(buf));
			long vr = SSL_get_verify_result(t->ssl);
			if (vr != X509_V_OK)
				return luaL_error(L, "SSL_do_handshake error:%d ret:%d (%s: %s)", err, ret, why,
				                  X509_verify_cert_error_string(vr));
			return luaL_error(L, "SSL_do_handshake error:%d ret:%d (%s)", err, ret, why);
		}
	}
	if (push_pending(L, t) == 0) {
		lua_pop(L, 1);
		return 0;
	}
	return 1;
}

static int
ltls_finished(lua_State *L) {
	struct tls_conn *t = check_tls(L, 1);
	lua_pushboolean(L, SSL_is_init_finished(t->ssl));
	return 1;
}

/* read([cipher]): all plaintext that can be decrypted now (maybe ""). */
static int
ltls_read(lua_State *L) {
	struct tls_conn *t = check_tls(L, 1);
	feed(L, t, 2);
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	for (;;) {
		char *p = luaL_prepbuffsize(&b, BIO_CHUNK);
		int n = SSL_read(t->ssl, p, BIO_CHUNK);
		if (n > 0) {
			luaL_addsize(&b, (size_t)n);
			continue;
		}
		int err = SSL_get_error(t->ssl, n);
		if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_ZERO_RETURN ||
		    err == SSL_ERROR_WANT_WRITE)
			break;
		char buf[256];
		return luaL_error(L, "SSL_read error:%d (%s)", err, ssl_error_text(buf, sizeof(buf)));
	}
	luaL_pushresult(&b);
	return 1;
}

/* write([plain]): the ciphertext to send ("" if none). */
static int
ltls_write(lua_State *L) {
	struct tls_conn *t = check_tls(L, 1);
	size_t sz = 0;
	const char *s = luaL_optlstring(L, 2, NULL, &sz);
	while (s && sz > 0) {
		int chunk = sz > 0x40000000 ? 0x40000000 : (int)sz;
		int n = SSL_write(t->ssl, s, chunk);
		if (n <= 0) {
			int err = SSL_get_error(t->ssl, n);
			char buf[256];
			return luaL_error(L, "SSL_write error:%d (%s)", err, ssl_error_text(buf, sizeof(buf)));
		}
		s += n;
		sz -= (size_t)n;
	}
	push_pending(L, t);
	return 1;
}

static int
ltls_set_ext_host_name(lua_State *L) {
	struct tls_conn *t = check_tls(L, 1);
	const char *name = luaL_checkstring(L, 2);
	int ret = (int)SSL_set_tlsext_host_name(t->ssl, name);
	lua_pushinteger(L, ret);
	return 1;
}

static int
lnewtls(lua_State *L) {
	const char *method = luaL_checkstring(L, 1);
	bool server = strcmp(method, "server") == 0;
	if (!server && strcmp(method, "client") != 0)
		return luaL_error(L, "invalid method:%s e.g[server, client]", method);
	struct tls_ctx *c = check_ctx(L, 2);
	const char *hostname = luaL_optstring(L, 3, NULL);
	struct tls_conn *t = lua_newuserdatauv(L, sizeof(*t), 1);
	t->ssl = NULL;
	t->in_bio = t->out_bio = NULL;
	luaL_setmetatable(L, TLS_META);
	lua_pushvalue(L, 2);
	lua_setiuservalue(L, -2, 1); /* keeps the ctx alive */
	char buf[256];
	t->ssl = SSL_new(c->ctx);
	if (t->ssl == NULL)
		return luaL_error(L, "SSL_new failed. %s", ssl_error_text(buf, sizeof(buf)));
	t->in_bio = BIO_new(BIO_s_mem());
	t->out_bio = BIO_new(BIO_s_mem());
	if (t->in_bio == NULL || t->out_bio == NULL) {
		BIO_free(t->in_bio);
		BIO_free(t->out_bio);
		t->in_bio = t->out_bio = NULL;
		return luaL_error(L, "BIO_new failed");
	}
	BIO_set_mem_eof_return(t->in_bio, -1);
	BIO_set_mem_eof_return(t->out_bio, -1);
	SSL_set_bio(t->ssl, t->in_bio, t->out_bio);
	if (server) {
		SSL_set_accept_state(t->ssl);
	} else {
		SSL_set_connect_state(t->ssl);
		if (hostname) {
			SSL_set_tlsext_host_name(t->ssl, hostname);
			if (c->verify && SSL_set1_host(t->ssl, hostname) != 1)
				return luaL_error(L, "SSL_set1_host failed for %s", hostname);
		}
	}
	return 1;
}

static void
make_meta(lua_State *L, const char *name, const luaL_Reg *methods, lua_CFunction gc) {
	luaL_newmetatable(L, name);
	lua_newtable(L);
	luaL_setfuncs(L, methods, 0);
	lua_setfield(L, -2, "__index");
	lua_pushcfunction(L, gc);
	lua_setfield(L, -2, "__gc");
	lua_pop(L, 1);
}

int
luaopen_ltls_c(lua_State *L) {
	if (!ATOM_LOAD(&READY))
		return luaL_error(L, "ltls need init, Put enablessl = true in you config file.");
	static const luaL_Reg ctx_methods[] = {
	    {"set_cert", lctx_set_cert},
	    {"set_ciphers", lctx_set_ciphers},
	    {"set_verify", lctx_set_verify},
	    {NULL, NULL},
	};
	static const luaL_Reg tls_methods[] = {
	    {"handshake", ltls_handshake},
	    {"finished", ltls_finished},
	    {"read", ltls_read},
	    {"write", ltls_write},
	    {"set_ext_host_name", ltls_set_ext_host_name},
	    {"close", ltls_close},
	    {NULL, NULL},
	};
	make_meta(L, CTX_META, ctx_methods, lctx_gc);
	make_meta(L, TLS_META, tls_methods, ltls_gc);
	static const luaL_Reg funcs[] = {
	    {"newctx", lnewctx},
	    {"newtls", lnewtls},
	    {NULL, NULL},
	};
	luaL_newlib(L, funcs);
	return 1;
}

/*--------------------------------------------------------------- init */

static int
linit_constructor(lua_State *L) {
	if (OPENSSL_init_ssl(0, NULL) != 1)
		return luaL_error(L, "OPENSSL_init_ssl failed");
	ATOM_STORE(&READY, 1);
	return 0;
}

/* OpenSSL 3 frees its global state at exit by itself: nothing to undo but
 * the flag. */
static int
linit_destructor(lua_State *L) {
	ATOM_STORE(&READY, 0);
	return 0;
}

int
luaopen_ltls_init_c(lua_State *L) {
	static const luaL_Reg funcs[] = {
	    {"constructor", linit_constructor},
	    {"destructor", linit_destructor},
	    {NULL, NULL},
	};
	luaL_newlib(L, funcs);
	return 1;
}
