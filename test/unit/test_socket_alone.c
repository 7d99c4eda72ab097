/*
 * The socket server as a library of its own: this program is built from
 * socket_server.c and this file only (the Makefile links nothing else of
 * the runtime, so any call into it would fail the link), and plays the
 * part of a foreign host. It brings its own allocator (libc, counted) and
 * clock through struct socket_server_hooks, and runs a loopback listen,
 * connect, send and reply on one thread: each command is queued, then
 * socket_server_poll on the same thread carries it out and returns the
 * events. alarm() bounds the run should an expected event never come.
 */
#include "socket_server.h"

#include "tt.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the host's allocator and clock --------------------------------------- */

static int LIVE;     // blocks allocated through the hooks and not freed yet
static int CLOCK_N;  // calls of the clock hook
#define HOST_TIME 42 // what the host's clock always reads

static void *
checked(void *p) {
	if (p == NULL)
		abort(); // the hooks' contract: never NULL
	return p;
}

static void *
host_malloc(size_t sz) {
	LIVE++;
	return checked(malloc(sz)); // a foreign program's allocator: plain libc
}

static void *
host_calloc(size_t n, size_t sz) {
	LIVE++;
	return checked(calloc(n, sz));
}

static void *
host_realloc(void *p, size_t sz) {
	if (p == NULL)
		LIVE++;
	return checked(realloc(p, sz));
}

static void
host_free(void *p) {
	if (p != NULL)
		LIVE--;
	free(p);
}

static uint64_t
host_clock(void) {
	CLOCK_N++;
	return HOST_TIME;
}

static const struct socket_server_hooks HOOKS = {
    .malloc = host_malloc,
    .calloc = host_calloc,
    .realloc = host_realloc,
    .free = host_free,
    .clock = host_clock,
};

/* ---- driving the poll loop on this thread ---------------------------------- */

/*
 * Poll until an event of type for id (-1: any) arrives; other events are
 * dropped, their buffers freed. Returns the event's ud (-1 when it never
 * came); a DATA payload is appended to buf (cap bytes) and counted in *len.
 */
static int
wait_for(struct socket_server *ss, int type, int id, char *buf, size_t cap, size_t *len) {
	for (int round = 0; round < 1000; round++) {
		struct socket_message m;
		int t = socket_server_poll(ss, &m);
		bool owned = t == SKYNET_SOCKET_TYPE_DATA || t == SKYNET_SOCKET_TYPE_UDP;
		if (t == type && (id < 0 || m.id == id)) {
			if (t == SKYNET_SOCKET_TYPE_DATA && buf != NULL && *len + (size_t)m.ud <= cap) {
				memcpy(buf + *len, m.data, (size_t)m.ud);
				*len += (size_t)m.ud;
			}
			if (owned)
				HOOKS.free(m.data);
			return m.ud;
		}
		if (owned)
			HOOKS.free(m.data);
	}
	return -1;
}

/* Read exactly want bytes from id into buf (several DATA events if the kernel splits them). */
static bool
read_exactly(struct socket_server *ss, int id, char *buf, size_t want) {
	size_t len = 0;
	for (int i = 0; i < 100 && len < want; i++) {
		if (wait_for(ss, SKYNET_SOCKET_TYPE_DATA, id, buf, want, &len) < 0)
			return false;
	}
	return len == want;
}

static void
loopback_round_trip(int *failed) {
	LIVE = 0;
	struct socket_server *ss = socket_server_create(&HOOKS);
	TT_CHECK(ss != NULL && LIVE >= 1 && CLOCK_N >= 1);
	if (ss == NULL)
		return;
	TT_CHECK(socket_server_connect(ss, 1, NULL, 80) == SOCKET_SERVER_EINVAL);

	const char *err = NULL;
	int lid = socket_server_listen(ss, 1, "127.0.0.1", 0, 8, &err);
	TT_CHECK(lid >= 0);
	int port = wait_for(ss, SKYNET_SOCKET_TYPE_CONNECT, lid, NULL, 0, NULL);
	TT_CHECK(port > 0);
	socket_server_start(ss, 1, lid);
	TT_CHECK(wait_for(ss, SKYNET_SOCKET_TYPE_CONNECT, lid, NULL, 0, NULL) >= 0);

	int cid = socket_server_connect(ss, 2, "127.0.0.1", port);
	TT_CHECK(cid >= 0 && cid != lid);
	int aid = wait_for(ss, SKYNET_SOCKET_TYPE_ACCEPT, lid, NULL, 0, NULL);
	TT_CHECK(aid >= 0 && aid != cid);
	socket_server_start(ss, 3, aid);
	TT_CHECK(wait_for(ss, SKYNET_SOCKET_TYPE_CONNECT, aid, NULL, 0, NULL) >= 0);

	// Client to server: a borrowed buffer, then one the server takes over.
	struct socket_sendbuffer copy = {cid, SOCKET_BUFFER_RAWCOPY, "hello ", 6};
	TT_CHECK(socket_server_send(ss, &copy) == 0);
	char *owned = HOOKS.malloc(5);
	memcpy(owned, "world", 5);
	struct socket_sendbuffer give = {cid, SOCKET_BUFFER_MEMORY, owned, 5};
	TT_CHECK(socket_server_send(ss, &give) == 0);
	char got[16] = "";
	TT_CHECK(read_exactly(ss, aid, got, 11) && memcmp(got, "hello world", 11) == 0);

	// And the reply.
	struct socket_sendbuffer back = {aid, SOCKET_BUFFER_RAWCOPY, "pong", 4};
	TT_CHECK(socket_server_send(ss, &back) == 0);
	memset(got, 0, sizeof(got));
	TT_CHECK(read_exactly(ss, cid, got, 4) && memcmp(got, "pong", 4) == 0);

	int n = 0;
	struct socket_server_info *info = socket_server_info(ss, &n);
	TT_CHECK(n == 3);
	for (int i = 0; i < n; i++) {
		if (info[i].id == aid)
			TT_CHECK(info[i].type == SKYNET_SOCKET_INFO_TCP && info[i].opaque == 3 &&
			         info[i].read_bytes == 11 && info[i].rtime == HOST_TIME);
		if (info[i].id == lid)
			TT_CHECK(info[i].type == SKYNET_SOCKET_INFO_LISTEN);
	}
	HOOKS.free(info);

	socket_server_close(ss, 2, cid);
	TT_CHECK(wait_for(ss, SKYNET_SOCKET_TYPE_CLOSE, aid, NULL, 0, NULL) >= 0);
	socket_server_exit(ss);
	int t = -1;
	for (int round = 0; round < 100 && t != SOCKET_SERVER_EXIT; round++) {
		struct socket_message m;
		t = socket_server_poll(ss, &m);
		if (t == SKYNET_SOCKET_TYPE_DATA || t == SKYNET_SOCKET_TYPE_UDP)
			HOOKS.free(m.data);
	}
	TT_CHECK(t == SOCKET_SERVER_EXIT);
	socket_server_release(ss);
	TT_CHECK(LIVE == 0); // every block came from, and went back through, the hooks
}

int
main(void) {
	alarm(60); // a lost event ends the run instead of blocking in epoll forever
	TT_RUN(loopback_round_trip);
	return tt_summary();
}
