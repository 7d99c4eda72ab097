/*
 * Fuzz target "socket_read": the read path of skynet-src/socket_server.c,
 * driven in-process on one thread. Each input gets a fresh socketpair; one
 * end is handed to the server with socket_server_bind, the other plays the
 * peer. The harness calls socket_server_poll itself, and only when it knows
 * an event is due, so the poll never waits for nothing.
 *
 * The input is a list of operations; each starts with one byte b:
 *   b & 7 == 0, 1  the peer WRITES the next n bytes, n = the following byte
 *                  (255: all that is left); while the socket reads, the
 *                  harness polls until every byte came back as DATA
 *   2, 6           the server SENDS the next n bytes (6: low priority)
 *   3              PAUSE reading
 *   4              START reading; the CONNECT "start" it answers is also
 *                  the harness's barrier: every earlier command has run
 *   5              the peer READS what has arrived
 *   7              the end, by (b >> 3) & 3: server close, server shutdown,
 *                  peer shutdown(SHUT_WR), peer close
 * After the last operation the peer closes.
 *
 * Properties: DATA events carry the peer's bytes in order, none lost or
 * repeated, each buffer 1..1 MB and owned by the receiver (LeakSanitizer);
 * the peer receives the server's sends in the order they were issued; every
 * event belongs to the socket and owner in use; a close from either side
 * is reported as CLOSE; nothing blocks (libFuzzer's -timeout).
 * The harness keeps both directions of the socketpair far from full, so
 * the kernel takes every write whole: issue order is then delivery order,
 * and no poll waits on a flush. The kernel charges each write a few hundred
 * bytes besides its payload, so what is bounded is the number of writes
 * (WRITES_MAX each way; later ones are skipped) as well as the bytes sent
 * (SEND_MAX).
 */
#include "socket_server.h"

#include "skynet.h"
#include "skynet_malloc.h"

#include "fuzz.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define OWNER      7
#define SEND_MAX   (16 * 1024)
#define WRITES_MAX 64

static struct socket_server *SERVER; // created once, kept for the whole run

struct session {
	int id;        // the server's id for its end
	int peer;      // the harness's end
	bool reading;  // what the server was last told: start or pause
	bool closed;   // the server reported CLOSE
	uint8_t *in;   // owned: bytes the peer wrote
	size_t in_len; // of which the server delivered `delivered`
	size_t delivered;
	uint8_t *out; // owned: bytes the server was asked to send
	size_t out_len;
	size_t out_seen; // of which the peer received this many
	int writes;      // peer writes so far
	int sends;       // server sends so far
};

static int
poll_one(struct socket_message *m) {
	int type = socket_server_poll(SERVER, m);
	FUZZ_CHECK(type != SOCKET_SERVER_EXIT && type != SOCKET_SERVER_NOTICE);
	return type;
}

/* A DATA event: its bytes must be the next ones the peer wrote. */
static void
take_data(struct session *s, const struct socket_message *m) {
	FUZZ_CHECK(m->id == s->id && m->opaque == OWNER);
	FUZZ_CHECK(m->ud > 0 && m->ud <= 1024 * 1024 && m->data != NULL);
	FUZZ_CHECK((size_t)m->ud <= s->in_len - s->delivered);
	FUZZ_CHECK(memcmp(m->data, s->in + s->delivered, (size_t)m->ud) == 0);
	s->delivered += (size_t)m->ud;
	skynet_free(m->data);
}

/* Poll until every byte the peer wrote was delivered (the server is reading). */
static void
drain_input(struct session *s) {
	while (s->delivered < s->in_len) {
		struct socket_message m;
		FUZZ_CHECK(poll_one(&m) == SKYNET_SOCKET_TYPE_DATA);
		take_data(s, &m);
	}
}

/* START, then poll to its CONNECT "start": every command issued before has run. */
static void
barrier(struct session *s) {
	socket_server_start(SERVER, OWNER, s->id);
	s->reading = true;
	for (;;) {
		struct socket_message m;
		int type = poll_one(&m);
		if (type == SKYNET_SOCKET_TYPE_DATA) {
			take_data(s, &m);
			continue;
		}
		FUZZ_CHECK(type == SKYNET_SOCKET_TYPE_CONNECT && m.id == s->id && m.opaque == OWNER);
		FUZZ_CHECK(strcmp(m.data, "start") == 0);
		return;
	}
}

static void
peer_write(struct session *s, const uint8_t *p, size_t n) {
	if (n == 0 || s->writes == WRITES_MAX)
		return;
	s->writes++;
	ssize_t w = write(s->peer, p, n);
	FUZZ_CHECK(w == (ssize_t)n);
	s->in = skynet_realloc(s->in, s->in_len + n);
	memcpy(s->in + s->in_len, p, n);
	s->in_len += n;
	if (s->reading)
		drain_input(s);
}

static void
server_send(struct session *s, const uint8_t *p, size_t n, bool low) {
	if (n == 0 || s->sends == WRITES_MAX || s->out_len + n > SEND_MAX)
		return;
	s->sends++;
	char *buf = skynet_malloc(n);
	memcpy(buf, p, n);
	struct socket_sendbuffer sb = {
	    .id = s->id, .kind = SOCKET_BUFFER_MEMORY, .buffer = buf, .sz = n};
	int err = low ? socket_server_send_lowpriority(SERVER, &sb) : socket_server_send(SERVER, &sb);
	FUZZ_CHECK(err == 0);
	s->out = skynet_realloc(s->out, s->out_len + n);
	memcpy(s->out + s->out_len, p, n);
	s->out_len += n;
}

/* Read whatever reached the peer: a continuation of what the server was asked to send. */
static void
peer_read(struct session *s) {
	uint8_t buf[4096];
	for (;;) {
		ssize_t n = recv(s->peer, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			FUZZ_CHECK(n == 0 || errno == EAGAIN || errno == EWOULDBLOCK);
			return;
		}
		FUZZ_CHECK((size_t)n <= s->out_len - s->out_seen);
		FUZZ_CHECK(memcmp(buf, s->out + s->out_seen, (size_t)n) == 0);
		s->out_seen += (size_t)n;
	}
}

/* Everything written was delivered and everything sent was received. */
static void
settle(struct session *s) {
	barrier(s);
	drain_input(s);
	peer_read(s);
	FUZZ_CHECK(s->out_seen == s->out_len);
}

static void
expect_close(struct session *s) {
	struct socket_message m;
	FUZZ_CHECK(poll_one(&m) == SKYNET_SOCKET_TYPE_CLOSE);
	FUZZ_CHECK(m.id == s->id && m.opaque == OWNER);
	s->closed = true;
}

/* End the session the way op selects (see the top comment). */
static void
finish(struct session *s, int how) {
	settle(s);
	switch (how) {
	case 0:
		socket_server_close(SERVER, OWNER, s->id);
		break;
	case 1:
		socket_server_shutdown(SERVER, OWNER, s->id);
		break;
	case 2:
		FUZZ_CHECK(shutdown(s->peer, SHUT_WR) == 0);
		break;
	default:
		FUZZ_CHECK(close(s->peer) == 0);
		s->peer = -1;
		break;
	}
	expect_close(s);
}

static void
run_ops(struct session *s, struct fuzz_input *in) {
	while (fuzz_more(in)) {
		uint8_t b = fuzz_byte(in);
		size_t want, n;
		const uint8_t *p;
		switch (b & 7) {
		case 0:
		case 1:
			want = fuzz_byte(in);
			p = fuzz_bytes(in, want == 255 ? in->left : want, &n);
			peer_write(s, p, n);
			break;
		case 2:
		case 6:
			p = fuzz_bytes(in, fuzz_byte(in), &n);
			server_send(s, p, n, (b & 7) == 6);
			break;
		case 3:
			socket_server_pause(SERVER, OWNER, s->id);
			s->reading = false;
			break;
		case 4:
			barrier(s);
			drain_input(s);
			break;
		case 5:
			peer_read(s);
			break;
		default:
			finish(s, (b >> 3) & 3);
			return;
		}
	}
	finish(s, 3);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	if (SERVER == NULL) {
		static const struct socket_server_hooks hooks = {
		    .malloc = skynet_malloc,
		    .calloc = skynet_calloc,
		    .realloc = skynet_realloc,
		    .free = skynet_free,
		};
		SERVER = socket_server_create(&hooks);
		FUZZ_CHECK(SERVER != NULL);
	}
	int sv[2];
	FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) == 0);
	struct session s = {.peer = sv[1], .reading = true};
	s.id = socket_server_bind(SERVER, OWNER, sv[0]);
	FUZZ_CHECK(s.id >= 0);
	struct socket_message m;
	FUZZ_CHECK(poll_one(&m) == SKYNET_SOCKET_TYPE_CONNECT && m.id == s.id);
	FUZZ_CHECK(strcmp(m.data, "binding") == 0);

	struct fuzz_input in = {data, size};
	run_ops(&s, &in);
	FUZZ_CHECK(s.closed);
	if (s.peer >= 0)
		FUZZ_CHECK(close(s.peer) == 0);
	skynet_free(s.in);
	skynet_free(s.out);
	return 0;
}
