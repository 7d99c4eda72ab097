/*
 * clientsocket: the small socket module of the demo's terminal client
 * (examples/client.lua), loaded by the system lua5.4 interpreter, not by
 * skynet. Built by make as luaclib/clientsocket.so.
 *
 * Design: one blocking connect, then the socket is non-blocking; the
 * client's loop waits in poll() for the socket and standard input at once,
 * so pushes from the server print while the player types. Framing of the
 * received bytes (2-byte big-endian length) is left to Lua; send() adds
 * the header itself.
 *
 * API (expected failures return nil, "reason"; bad arguments raise):
 *   connect(host, port) -> fd            TCP connect (blocking), then
 *                                        non-blocking with TCP_NODELAY
 *   send(fd, payload) -> true            one frame; waits (poll) until
 *                                        it is all written
 *   write(fd, bytes) -> true             the bytes as they are, no header
 *                                        (the debug console's lines);
 *                                        waits like send
 *   recv(fd) -> bytes                    what is buffered now ("" if
 *                                        nothing); nil, "closed" at EOF
 *   poll(fd, timeout_ms [, stdin=true]) -> sock, input
 *                                        waits until fd (skipped if < 0)
 *                                        or stdin (unless the third
 *                                        argument is false) is readable,
 *                                        or the timeout passes (-1: never)
 *   readstdin() -> bytes                 one read() of stdin; nil at EOF
 *   isatty(fd) -> boolean
 *   close(fd)
 */
#include <lauxlib.h>
#include <lua.h>

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define CLIENT_MAX_PAYLOAD  65535
#define CLIENT_READ_CHUNK   65536
#define CLIENT_SEND_WAIT_MS 5000

static int
fail(lua_State *L, const char *what, int err) {
	lua_pushnil(L);
	lua_pushfstring(L, "%s: %s", what, strerror(err));
	return 2;
}

static int
lconnect(lua_State *L) {
	const char *host = luaL_checkstring(L, 1);
	lua_Integer port = luaL_checkinteger(L, 2);
	luaL_argcheck(L, port > 0 && port < 65536, 2, "port out of range");
	char service[16];
	snprintf(service, sizeof(service), "%d", (int)port);
	struct addrinfo hints;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	struct addrinfo *list = NULL;
	int gai = getaddrinfo(host, service, &hints, &list);
	if (gai != 0) {
		lua_pushnil(L);
		lua_pushfstring(L, "resolve %s: %s", host, gai_strerror(gai));
		return 2;
	}
	int fd = -1;
	int err = ECONNREFUSED;
	for (struct addrinfo *ai = list; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
		if (fd < 0) {
			err = errno;
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		err = errno;
		(void)close(fd); // nothing to do on failure
		fd = -1;
	}
	freeaddrinfo(list);
	if (fd < 0)
		return fail(L, "connect", err);
	int one = 1;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)); // best effort
	int flags = fcntl(fd, F_GETFL, 0);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		err = errno;
		(void)close(fd); // nothing to do on failure
		return fail(L, "fcntl", err);
	}
	lua_pushinteger(L, fd);
	return 1;
}

/* Writes all len bytes of buf to the non-blocking fd; 0 or an errno. */
static int
write_all(int fd, const char *buf, size_t len) {
	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd p = {.fd = fd, .events = POLLOUT};
			int r = poll(&p, 1, CLIENT_SEND_WAIT_MS);
			if (r == 0)
				return ETIMEDOUT;
			if (r < 0 && errno != EINTR)
				return errno;
			continue;
		}
		return n < 0 ? errno : EPIPE;
	}
	return 0;
}

static int
lsend(lua_State *L) {
	int fd = (int)luaL_checkinteger(L, 1);
	size_t len;
	const char *payload = luaL_checklstring(L, 2, &len);
	luaL_argcheck(L, len <= CLIENT_MAX_PAYLOAD, 2, "payload longer than 65535 bytes");
	char header[2] = {(char)(len >> 8), (char)(len & 0xff)};
	int err = write_all(fd, header, sizeof(header));
	if (err == 0)
		err = write_all(fd, payload, len);
	if (err != 0)
		return fail(L, "send", err);
	lua_pushboolean(L, 1);
	return 1;
}

static int
lwrite(lua_State *L) {
	int fd = (int)luaL_checkinteger(L, 1);
	size_t len;
	const char *bytes = luaL_checklstring(L, 2, &len);
	int err = write_all(fd, bytes, len);
	if (err != 0)
		return fail(L, "write", err);
	lua_pushboolean(L, 1);
	return 1;
}

static int
lrecv(lua_State *L) {
	int fd = (int)luaL_checkinteger(L, 1);
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	for (;;) {
		char *p = luaL_prepbuffsize(&b, CLIENT_READ_CHUNK);
		ssize_t n = read(fd, p, CLIENT_READ_CHUNK);
		if (n > 0) {
			luaL_addsize(&b, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		int err = n < 0 ? errno : 0;
		if (luaL_bufflen(&b) > 0)
			break; // report the bytes now, the close on the next call
		if (err == 0) {
			lua_pushnil(L);
			lua_pushliteral(L, "closed");
			return 2;
		}
		return fail(L, "recv", err);
	}
	luaL_pushresult(&b);
	return 1;
}

/* True when poll() reported entry p readable, closed or failed. */
static bool
is_ready(const struct pollfd *p) {
	return p != NULL && (p->revents & (POLLIN | POLLHUP | POLLERR)) != 0;
}

static int
lpoll(lua_State *L) {
	int fd = (int)luaL_checkinteger(L, 1);
	int timeout_ms = (int)luaL_optinteger(L, 2, -1);
	bool watch_stdin = lua_isnoneornil(L, 3) || lua_toboolean(L, 3);
	struct pollfd p[2];
	struct pollfd *sock = NULL;
	struct pollfd *input = NULL;
	nfds_t n = 0;
	if (fd >= 0) {
		sock = &p[n++];
		*sock = (struct pollfd){.fd = fd, .events = POLLIN};
	}
	if (watch_stdin) {
		input = &p[n++];
		*input = (struct pollfd){.fd = 0, .events = POLLIN};
	}
	int r = poll(p, n, timeout_ms); // n == 0: a plain sleep
	if (r < 0 && errno != EINTR)
		return fail(L, "poll", errno);
	lua_pushboolean(L, r > 0 && is_ready(sock));
	lua_pushboolean(L, r > 0 && is_ready(input));
	return 2;
}

static int
lreadstdin(lua_State *L) {
	char buf[4096];
	ssize_t n;
	do {
		n = read(0, buf, sizeof(buf));
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return fail(L, "read stdin", errno);
	if (n == 0)
		return 0; // EOF
	lua_pushlstring(L, buf, (size_t)n);
	return 1;
}

static int
lisatty(lua_State *L) {
	lua_pushboolean(L, isatty((int)luaL_checkinteger(L, 1)));
	return 1;
}

static int
lclose(lua_State *L) {
	int fd = (int)luaL_checkinteger(L, 1);
	if (fd > 2)
		(void)close(fd); // nothing to do on failure
	return 0;
}

int luaopen_clientsocket(lua_State *L);

int
luaopen_clientsocket(lua_State *L) {
	luaL_checkversion(L);
	static const luaL_Reg funcs[] = {
	    {"connect", lconnect}, {"send", lsend},   {"write", lwrite},
	    {"recv", lrecv},       {"poll", lpoll},   {"readstdin", lreadstdin},
	    {"isatty", lisatty},   {"close", lclose}, {NULL, NULL},
	};
	luaL_newlib(L, funcs);
	return 1;
}
