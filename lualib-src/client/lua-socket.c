/*
 * client.socket: skynet's socket module for terminal clients and test bots,
 * loaded by a plain lua5.4 (LUA_CPATH=luaclib/?.so finds it in
 * luaclib/client.so, next to client.crypt). Not for services: its calls
 * block the thread.
 *
 * API, with skynet's calls and results:
 *   connect(host, port) -> fd     TCP connect (blocking); the socket is then
 *                                 non-blocking. Raises "Connect <host>
 *                                 <port> failed".
 *   send(fd, bytes)               writes all the bytes as they are (no
 *                                 framing), waiting while the kernel's
 *                                 buffer is full. Raises "socket error: ..."
 *   recv(fd) -> bytes, "" or nil  one read of at most RECV_CHUNK bytes: the
 *                                 bytes; "" once the peer has closed;
 *                                 nothing (nil) when no byte is there now.
 *                                 Raises "socket error: ..." on another
 *                                 failure.
 *   close(fd)
 *   usleep(us)                    sleeps us microseconds
 *   readstdin() -> line or nil    the next line of standard input without
 *                                 its newline; nil while no whole line has
 *                                 come. Never blocks.
 *
 * Where it differs from skynet (same calls, safer ends): connect also takes
 * host names and IPv6 addresses; send to a closed peer raises instead of
 * killing the process with SIGPIPE, and waits in poll() instead of
 * spinning; stdin is read by readstdin itself (a poll with no wait, then
 * one read) instead of by a thread started at load, and its end is
 * reported as nil, "eof" (after the last line, even one without a newline)
 * instead of exiting the process.
 *
 * State: readstdin's bytes read but not yet returned (no whole line yet)
 * and whether stdin has ended are its two upvalues; nothing is global.
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
#include <time.h>
#include <unistd.h>

#define RECV_CHUNK  65536
#define STDIN_CHUNK 4096

/* readstdin's upvalues. */
enum {
	UP_PENDING = 1, // string: bytes read from stdin, not yet returned
	UP_EOF,         // boolean: stdin has ended
};

static int
socket_error(lua_State *L, int err) {
	return luaL_error(L, "socket error: %s", strerror(err));
}

/* A connected socket to host:port, or -1. */
static int
connect_to(const char *host, int port) {
	char service[16];
	snprintf(service, sizeof(service), "%d", port);
	struct addrinfo hints;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	struct addrinfo *list = NULL;
	if (getaddrinfo(host, service, &hints, &list) != 0)
		return -1;
	int fd = -1;
	for (struct addrinfo *ai = list; ai != NULL && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
		if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
			(void)close(fd); // nothing to do on failure
			fd = -1;
		}
	}
	freeaddrinfo(list);
	return fd;
}

static int
lconnect(lua_State *L) {
	const char *host = luaL_checkstring(L, 1);
	lua_Integer port = luaL_checkinteger(L, 2);
	luaL_argcheck(L, port > 0 && port < 65536, 2, "port out of range");
	int fd = connect_to(host, (int)port);
	int flags = fd >= 0 ? fcntl(fd, F_GETFL, 0) : -1;
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		if (fd >= 0)
			(void)close(fd); // nothing to do on failure
		return luaL_error(L, "Connect %s %d failed", host, (int)port);
	}
	int one = 1;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)); // best effort
	lua_pushinteger(L, fd);
	return 1;
}

static int
lsend(lua_State *L) {
	int fd = (int)luaL_checkinteger(L, 1);
	size_t len;
	const char *p = luaL_checklstring(L, 2, &len);
	while (len > 0) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		if (n >= 0) {
			p += n;
			len -= (size_t)n;
		} else if (errno == EAGAIN || errno == EWOULDBLOCK) {
			struct pollfd w = {.fd = fd, .events = POLLOUT};
			if (poll(&w, 1, -1) < 0 && errno != EINTR)
				return socket_error(L, errno);
		} else if (errno != EINTR) {
			return socket_error(L, errno);
		}
	}
	return 0;
}

static int
lrecv(lua_State *L) {
	int fd = (int)luaL_checkinteger(L, 1);
	luaL_Buffer b;
	char *p = luaL_buffinitsize(L, &b, RECV_CHUNK);
	ssize_t n;
	do {
		n = recv(fd, p, RECV_CHUNK, 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0; // nothing there now
	if (n < 0)
		return socket_error(L, errno);
	luaL_pushresultsize(&b, (size_t)n); // "" when the peer has closed
	return 1;
}

static int
lclose(lua_State *L) {
	int fd = (int)luaL_checkinteger(L, 1);
	(void)close(fd); // nothing to do on failure
	return 0;
}

static int
lusleep(lua_State *L) {
	lua_Integer us = luaL_checkinteger(L, 1);
	if (us <= 0)
		return 0;
	struct timespec left = {.tv_sec = us / 1000000, .tv_nsec = (long)(us % 1000000) * 1000};
	while (nanosleep(&left, &left) != 0 && errno == EINTR) {
	}
	return 0;
}

/*
 * If the pending bytes (upvalue UP_PENDING) hold a whole line, pushes it
 * without its newline, keeps the rest pending and returns true; else
 * pushes nothing and returns false.
 */
static bool
take_line(lua_State *L) {
	size_t len;
	const char *s = lua_tolstring(L, lua_upvalueindex(UP_PENDING), &len);
	const char *nl = memchr(s, '\n', len);
	if (nl == NULL)
		return false;
	lua_pushlstring(L, s, (size_t)(nl - s));                // the line
	lua_pushlstring(L, nl + 1, len - (size_t)(nl - s) - 1); // the rest
	lua_replace(L, lua_upvalueindex(UP_PENDING));
	return true;
}

static bool
is_stdin_ready(void) {
	struct pollfd p = {.fd = 0, .events = POLLIN};
	int r;
	do {
		r = poll(&p, 1, 0);
	} while (r < 0 && errno == EINTR);
	return r > 0;
}

/*
 * One read of stdin, appended to the pending bytes; at its end sets
 * UP_EOF. Returns 0 or an errno. Stack unchanged.
 */
static int
read_stdin(lua_State *L) {
	char buf[STDIN_CHUNK];
	ssize_t n;
	do {
		n = read(0, buf, sizeof(buf));
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : errno;
	if (n == 0) {
		lua_pushboolean(L, 1);
		lua_replace(L, lua_upvalueindex(UP_EOF));
		return 0;
	}
	lua_pushvalue(L, lua_upvalueindex(UP_PENDING));
	lua_pushlstring(L, buf, (size_t)n);
	lua_concat(L, 2);
	lua_replace(L, lua_upvalueindex(UP_PENDING));
	return 0;
}

static int
lreadstdin(lua_State *L) {
	lua_settop(L, 0);
	while (!take_line(L)) {
		if (lua_toboolean(L, lua_upvalueindex(UP_EOF))) {
			/* the last line may lack its newline; after it, nil, "eof" */
			size_t len;
			lua_tolstring(L, lua_upvalueindex(UP_PENDING), &len);
			if (len > 0) {
				lua_pushvalue(L, lua_upvalueindex(UP_PENDING));
				lua_pushliteral(L, "");
				lua_replace(L, lua_upvalueindex(UP_PENDING));
				return 1;
			}
			lua_pushnil(L);
			lua_pushliteral(L, "eof");
			return 2;
		}
		if (!is_stdin_ready())
			return 0; // no whole line yet
		int err = read_stdin(L);
		if (err != 0)
			return luaL_error(L, "read stdin: %s", strerror(err));
	}
	return 1;
}

int luaopen_client_socket(lua_State *L);

int
luaopen_client_socket(lua_State *L) {
	luaL_checkversion(L);
	static const luaL_Reg funcs[] = {
	    {"connect", lconnect}, {"send", lsend},     {"recv", lrecv},
	    {"close", lclose},     {"usleep", lusleep}, {NULL, NULL},
	};
	luaL_newlib(L, funcs);
	lua_pushliteral(L, ""); // UP_PENDING
	lua_pushboolean(L, 0);  // UP_EOF
	lua_pushcclosure(L, lreadstdin, 2);
	lua_setfield(L, -2, "readstdin");
	return 1;
}
