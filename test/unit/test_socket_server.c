/*
 * The socket server driven directly over loopback, no Lua and no node: a
 * poller thread runs socket_server_poll and logs every event; the test
 * thread issues commands, plays the peer with plain sockets, and waits
 * (bounded) for events. Covers listen/accept/connect/read/write/close
 * ordering, connect refusal, stale ids, the 1 MB output warning, close
 * flushing and shutdown discarding queued output, write priorities, pause,
 * 1000 connections without an fd leak, EMFILE on accept without a busy
 * loop, UDP over IPv4 and IPv6, and name lookups only in the caller (this
 * binary's own getaddrinfo counts the calls made on a poll thread), flow
 * pauses (a fake consumer: the poller flow-pauses after each DATA while
 * the test says the consumer is full) and the output limit. The last
 * cases run the node's glue (skynet_socket.c) for services of an
 * in-process node: accepted sockets whose ACCEPT dies with the service are
 * closed; a connection stops being read while its consumer's mailbox is
 * at the high-water mark (messages or bytes) and resumes when it drained
 * or when the consumer is gone.
 *
 * Network tests cannot avoid waiting for the kernel: every wait has a
 * deadline (WAIT_MS) so a failure ends the case instead of hanging.
 */
#define _GNU_SOURCE // RTLD_NEXT
#include "socket_server.h"

#include "tt.h"
#include "fixture.h"
#include "skynet.h"
#include "skynet_cond.h"
#include "skynet_flow.h"
#include "skynet_socket_internal.h"
#include "atomic.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define WAIT_MS  5000 // longest wait for one event
#define QUIET_MS 100  // how long "nothing happens" is watched
#define TEXT_MAX 160
#define OWNER    7 // the opaque owner the cases use
#define MB       (1024 * 1024)
#define CHUNK    (64 * 1024)

/* ---- name lookups: which thread calls getaddrinfo ------------------------ */

/*
 * This definition takes the place of the C library's getaddrinfo for every
 * caller in this binary, socket_server.c included (the core is linked in
 * statically). It counts the calls made on a poll thread and the others,
 * keeps the flags of the last call, then forwards to the next definition
 * (the C library's, or a sanitizer's wrapper around it).
 */
static _Thread_local bool ON_POLL_THREAD;
static ATOM_INT POLL_LOOKUPS;   // getaddrinfo calls on a poll thread
static ATOM_INT CALLER_LOOKUPS; // getaddrinfo calls on any other thread
static ATOM_INT LAST_FLAGS;     // ai_flags of the last call

typedef int (*getaddrinfo_fn)(const char *node, const char *service, const struct addrinfo *hints,
                              struct addrinfo **res);

int
getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
            struct addrinfo **res) {
	ATOM_FINC(ON_POLL_THREAD ? &POLL_LOOKUPS : &CALLER_LOOKUPS);
	ATOM_STORE(&LAST_FLAGS, hints ? hints->ai_flags : 0);
	getaddrinfo_fn next = (getaddrinfo_fn)dlsym(RTLD_NEXT, "getaddrinfo");
	if (next == NULL)
		abort(); // no C library below us: nothing sensible to do
	return next(node, service, hints, res);
}

/* ---- the harness: a poller thread logging events ----------------------- */

struct event {
	int type;
	int id;
	int ud;
	uintptr_t opaque;
	char *data; // DATA/UDP bytes (owned), else NULL
	char text[TEXT_MAX];
	uint8_t addr[SKYNET_SOCKET_UDP_ADDRESS_MAX];
	int addr_sz;
	bool taken; // handed to the test already
};

struct harness {
	struct socket_server *ss;
	pthread_t thread;
	struct skynet_cond cond; // covers log, n, cap, first
	struct event *log;
	int n;
	int cap;
	int first;              // every event before it was taken
	ATOM_INT consumer_full; // the fake consumer: flow-pause each socket that delivers DATA
};

static void
record(struct harness *h, int type, const struct socket_message *m) {
	struct event e = {.type = type, .id = m->id, .ud = m->ud, .opaque = m->opaque};
	if (type == SKYNET_SOCKET_TYPE_DATA || type == SKYNET_SOCKET_TYPE_UDP) {
		e.data = m->data;
		if (m->udp_address_sz > 0) {
			memcpy(e.addr, m->udp_address, (size_t)m->udp_address_sz);
			e.addr_sz = m->udp_address_sz;
		}
	} else if (m->data != NULL) {
		snprintf(e.text, sizeof(e.text), "%s", m->data);
	}
	skynet_cond_lock(&h->cond);
	if (h->n == h->cap) {
		h->cap = h->cap ? h->cap * 2 : 256;
		h->log = skynet_realloc(h->log, (size_t)h->cap * sizeof(*h->log));
	}
	h->log[h->n++] = e;
	skynet_cond_broadcast(&h->cond);
	skynet_cond_unlock(&h->cond);
}

static void *
poller(void *p) {
	struct harness *h = p;
	struct socket_message m;
	ON_POLL_THREAD = true;
	for (;;) {
		int type = socket_server_poll(h->ss, &m);
		if (type == SOCKET_SERVER_EXIT)
			break;
		// As the node does: right after DATA, on this thread, keyed by the consumer.
		if (type == SKYNET_SOCKET_TYPE_DATA && ATOM_LOAD(&h->consumer_full))
			socket_server_flow_pause(h->ss, m.id, m.consumer);
		record(h, type, &m);
	}
	return NULL;
}

static struct harness *
harness_start_with(socket_server_idle_cb idle) {
	struct harness *h = skynet_calloc(1, sizeof(*h));
	const struct socket_server_hooks hooks = {
	    .malloc = skynet_malloc,
	    .calloc = skynet_calloc,
	    .realloc = skynet_realloc,
	    .free = skynet_free,
	};
	h->ss = socket_server_create(&hooks);
	if (idle != NULL)
		socket_server_set_idle_cb(h->ss, idle);
	skynet_cond_init(&h->cond);
	if (pthread_create(&h->thread, NULL, poller, h) != 0)
		abort();
	return h;
}

static struct harness *
harness_start(void) {
	return harness_start_with(NULL);
}

static void
harness_stop(struct harness *h) {
	socket_server_exit(h->ss);
	pthread_join(h->thread, NULL);
	socket_server_release(h->ss);
	for (int i = 0; i < h->n; i++)
		skynet_free(h->log[i].data);
	skynet_free(h->log);
	skynet_cond_destroy(&h->cond);
	skynet_free(h);
}

static uint64_t
now_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * The oldest event not taken yet for which match (NULL: any) is true,
 * waiting at most ms milliseconds; NULL when none came. With take it is
 * marked taken and the caller owns the copy returned (event_free);
 * otherwise the result only says whether one exists (freed by the caller,
 * without data).
 */
typedef bool (*event_match)(const struct event *e, const void *arg);

static struct event *
find_event(struct harness *h, event_match match, const void *arg, int ms, bool take) {
	uint64_t deadline = now_ms() + (uint64_t)ms;
	struct event *found = NULL;
	int scanned = h->first;
	skynet_cond_lock(&h->cond);
	for (;;) {
		for (int i = scanned; i < h->n && found == NULL; i++) {
			struct event *e = &h->log[i];
			if (!e->taken && (match == NULL || match(e, arg)))
				found = e;
		}
		scanned = h->n;
		uint64_t t = now_ms();
		if (found != NULL || t >= deadline)
			break;
		skynet_cond_timedwait(&h->cond, (long)(deadline - t) * 1000);
	}
	// The log moves when it grows: hand out a copy.
	struct event *copy = NULL;
	if (found) {
		copy = skynet_malloc(sizeof(*copy));
		*copy = *found;
		if (take) {
			found->taken = true;
			found->data = NULL; // the copy owns it now
		} else {
			copy->data = NULL;
		}
	}
	while (h->first < h->n && h->log[h->first].taken)
		h->first++;
	skynet_cond_unlock(&h->cond);
	return copy;
}

static struct event *
wait_event(struct harness *h, event_match match, const void *arg, int ms) {
	return find_event(h, match, arg, ms, true);
}

static void
event_free(struct event *e) {
	if (e) {
		skynet_free(e->data);
		skynet_free(e);
	}
}

struct want {
	int type;
	int id; // -1: any
};

static bool
match_type_id(const struct event *e, const void *arg) {
	const struct want *w = arg;
	return e->type == w->type && (w->id < 0 || e->id == w->id);
}

/* The next event of type for id (-1: any id), skipping others. */
static struct event *
expect(struct harness *h, int type, int id) {
	struct want w = {type, id};
	return wait_event(h, match_type_id, &w, WAIT_MS);
}

/* True when no event of type for id is there or arrives within ms (nothing is taken). */
static bool
quiet(struct harness *h, int type, int id, int ms) {
	struct want w = {type, id};
	struct event *e = find_event(h, match_type_id, &w, ms, false);
	bool none = e == NULL;
	event_free(e);
	return none;
}

static bool
match_id(const struct event *e, const void *arg) {
	return e->id == *(const int *)arg;
}

/* The next event of id that ends it: CLOSE or ERROR. */
static bool
match_end(const struct event *e, const void *arg) {
	return e->id == *(const int *)arg &&
	       (e->type == SKYNET_SOCKET_TYPE_CLOSE || e->type == SKYNET_SOCKET_TYPE_ERROR);
}

/* Collect DATA for id until n bytes arrived (or WAIT_MS passed); returns bytes got. */
static size_t
read_data(struct harness *h, int id, char *out, size_t n) {
	size_t got = 0;
	while (got < n) {
		struct event *e = expect(h, SKYNET_SOCKET_TYPE_DATA, id);
		if (e == NULL)
			break;
		size_t take = (size_t)e->ud;
		if (take > n - got)
			take = n - got;
		memcpy(out + got, e->data, take);
		got += take;
		event_free(e);
	}
	return got;
}

/* ---- helpers: listeners and plain peers ---------------------------------- */

/* A started listener on 127.0.0.1; *port gets its port. Returns the id or -1. */
static int
open_listener(struct harness *h, int *port, bool start) {
	int id = socket_server_listen(h->ss, OWNER, "127.0.0.1", 0, 1024, NULL);
	if (id < 0)
		return -1;
	struct event *e = expect(h, SKYNET_SOCKET_TYPE_CONNECT, id);
	if (e == NULL)
		return -1;
	*port = e->ud;
	event_free(e);
	if (start) {
		socket_server_start(h->ss, OWNER, id);
		event_free(expect(h, SKYNET_SOCKET_TYPE_CONNECT, id));
	}
	return id;
}

static int
peer_connect(int port) {
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Accept the next connection on listener lid and start it. Returns its id or -1. */
static int
accept_started(struct harness *h, int lid) {
	struct event *e = expect(h, SKYNET_SOCKET_TYPE_ACCEPT, lid);
	if (e == NULL)
		return -1;
	int id = e->ud;
	event_free(e);
	socket_server_start(h->ss, OWNER, id);
	e = expect(h, SKYNET_SOCKET_TYPE_CONNECT, id);
	bool ok = e != NULL && strcmp(e->text, "start") == 0;
	event_free(e);
	return ok ? id : -1;
}

/* Read from a blocking fd until n bytes or EOF/error (bounded by WAIT_MS per poll). */
static size_t
peer_read(int fd, char *out, size_t n) {
	size_t got = 0;
	while (got < n) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, WAIT_MS) <= 0)
			break;
		ssize_t r = recv(fd, out + got, n - got, 0);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	return got;
}

/* True when fd reaches EOF (or a reset) within WAIT_MS, draining what comes first. */
static bool
peer_sees_eof(int fd, size_t *drained) {
	char buf[CHUNK];
	uint64_t deadline = now_ms() + WAIT_MS;
	while (now_ms() < deadline) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, WAIT_MS) <= 0)
			return false;
		ssize_t r = recv(fd, buf, sizeof(buf), 0);
		if (r <= 0)
			return true;
		if (drained)
			*drained += (size_t)r;
	}
	return false;
}

static int
count_fds(void) {
	DIR *d = opendir("/proc/self/fd");
	if (d == NULL)
		return -1;
	int n = 0;
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n;
}

static int
send_string(struct harness *h, int id, const char *s) {
	struct socket_sendbuffer b = {id, SOCKET_BUFFER_RAWCOPY, s, strlen(s)};
	return socket_server_send(h->ss, &b);
}

/* Queue n bytes (value c) at the given priority as one owned buffer. */
static int
send_fill(struct harness *h, int id, size_t n, char c, bool low) {
	char *p = skynet_malloc(n);
	memset(p, c, n);
	struct socket_sendbuffer b = {id, SOCKET_BUFFER_MEMORY, p, n};
	return low ? socket_server_send_lowpriority(h->ss, &b) : socket_server_send(h->ss, &b);
}

/*
 * With a peer that reads nothing, queue 64 KB chunks of c on id until
 * `warnings` WARNING events came (the kernel's own buffers, up to several
 * MB, fill first). Returns the bytes sent, 0 on failure; *kb gets the ud of
 * each warning.
 */
static size_t
fill_until_warnings(struct harness *h, int id, char c, int warnings, int *kb) {
	size_t sent = 0;
	struct want w = {SKYNET_SOCKET_TYPE_WARNING, id};
	int seen = 0;
	while (seen < warnings && sent < 64 * (size_t)MB) {
		if (send_fill(h, id, CHUNK, c, false) != 0)
			return 0;
		sent += CHUNK;
		// Wait for the poll thread to take this chunk before the next one.
		struct event *e = wait_event(h, match_type_id, &w, sent % MB == 0 ? 50 : 0);
		if (e != NULL)
			kb[seen++] = e->ud;
		event_free(e);
	}
	while (seen < warnings) {
		struct event *e = wait_event(h, match_type_id, &w, WAIT_MS);
		if (e == NULL)
			return 0;
		kb[seen++] = e->ud;
		event_free(e);
	}
	return sent;
}

/* ---- cases ------------------------------------------------------------- */

static void
listen_accept_read_write_close(int *failed) {
	struct harness *h = harness_start();
	int port = 0;
	int lid = socket_server_listen(h->ss, OWNER, "127.0.0.1", 0, 16, NULL);
	TT_CHECK(lid >= 0);
	struct event *e = expect(h, SKYNET_SOCKET_TYPE_CONNECT, lid);
	TT_CHECK(e != NULL && e->ud > 0 && strcmp(e->text, "127.0.0.1") == 0 && e->opaque == OWNER);
	port = e ? e->ud : 0;
	event_free(e);
	// Not accepting before start: the connection waits in the backlog.
	int fd = peer_connect(port);
	TT_CHECK(fd >= 0);
	TT_CHECK(quiet(h, SKYNET_SOCKET_TYPE_ACCEPT, lid, QUIET_MS));
	socket_server_start(h->ss, OWNER, lid);
	e = expect(h, SKYNET_SOCKET_TYPE_CONNECT, lid);
	TT_CHECK(e != NULL && strcmp(e->text, "start") == 0);
	event_free(e);
	e = expect(h, SKYNET_SOCKET_TYPE_ACCEPT, lid);
	TT_CHECK(e != NULL && e->ud > 0 && strncmp(e->text, "127.0.0.1:", 10) == 0);
	int id = e ? e->ud : -1;
	event_free(e);
	// Not reading before start either.
	TT_CHECK(send(fd, "early", 5, 0) == 5);
	TT_CHECK(quiet(h, SKYNET_SOCKET_TYPE_DATA, id, QUIET_MS));
	socket_server_start(h->ss, OWNER + 1, id); // a new owner: events go there
	e = expect(h, SKYNET_SOCKET_TYPE_CONNECT, id);
	TT_CHECK(e != NULL && e->opaque == OWNER + 1 && strcmp(e->text, "start") == 0);
	event_free(e);
	char buf[16] = {0};
	TT_CHECK(read_data(h, id, buf, 5) == 5 && memcmp(buf, "early", 5) == 0);
	TT_CHECK(send_string(h, id, "reply") == 0);
	TT_CHECK(peer_read(fd, buf, 5) == 5 && memcmp(buf, "reply", 5) == 0);
	// The peer closes: CLOSE for the owner.
	close(fd);
	e = expect(h, SKYNET_SOCKET_TYPE_CLOSE, id);
	TT_CHECK(e != NULL && e->opaque == OWNER + 1);
	event_free(e);
	TT_CHECK(send_string(h, id, "late") == SKYNET_EINVAL);
	// Our close of a listener.
	socket_server_close(h->ss, OWNER, lid);
	event_free(e = expect(h, SKYNET_SOCKET_TYPE_CLOSE, lid));
	TT_CHECK(e != NULL);
	TT_CHECK(peer_connect(port) < 0); // refused now
	harness_stop(h);
}

static void
connect_both_ends(int *failed) {
	struct harness *h = harness_start();
	int port = 0;
	int lid = open_listener(h, &port, true);
	TT_CHECK(lid >= 0);
	int cid = socket_server_connect(h->ss, OWNER, "127.0.0.1", port);
	TT_CHECK(cid >= 0);
	struct event *e = expect(h, SKYNET_SOCKET_TYPE_CONNECT, cid);
	TT_CHECK(e != NULL && strcmp(e->text, "127.0.0.1") == 0);
	event_free(e);
	int sid = accept_started(h, lid);
	TT_CHECK(sid >= 0);
	TT_CHECK(send_string(h, cid, "ping") == 0);
	char buf[8] = {0};
	TT_CHECK(read_data(h, sid, buf, 4) == 4 && memcmp(buf, "ping", 4) == 0);
	TT_CHECK(send_string(h, sid, "pong") == 0);
	TT_CHECK(read_data(h, cid, buf, 4) == 4 && memcmp(buf, "pong", 4) == 0);
	// Close with nothing queued: CLOSE at once, the other end sees the end too.
	socket_server_close(h->ss, OWNER, cid);
	event_free(e = expect(h, SKYNET_SOCKET_TYPE_CLOSE, cid));
	TT_CHECK(e != NULL);
	event_free(e = expect(h, SKYNET_SOCKET_TYPE_CLOSE, sid));
	TT_CHECK(e != NULL);
	harness_stop(h);
}

static void
connect_refused_reports_error(int *failed) {
	struct harness *h = harness_start();
	int port = 0;
	int lid = open_listener(h, &port, false);
	socket_server_close(h->ss, OWNER, lid); // the port is free again, nobody listens
	event_free(expect(h, SKYNET_SOCKET_TYPE_CLOSE, lid));
	int id = socket_server_connect(h->ss, OWNER, "127.0.0.1", port);
	TT_CHECK(id >= 0);
	struct event *e = expect(h, SKYNET_SOCKET_TYPE_ERROR, id);
	TT_CHECK(e != NULL && strstr(e->text, "refused") != NULL && e->opaque == OWNER);
	event_free(e);
	TT_CHECK(send_string(h, id, "x") == SKYNET_EINVAL);
	TT_CHECK(socket_server_connect(h->ss, OWNER, "127.0.0.1", 70000) == SKYNET_EINVAL);
	harness_stop(h);
}

/* A UDP socket bound to 127.0.0.1 and its encoded address. */
static int
udp_bound(struct harness *h, const char *host, uint8_t *addr, int *addr_sz) {
	int id = socket_server_udp(h->ss, OWNER, host, 0);
	if (id < 0)
		return id;
	// The bound port: from the info list (the name is "ip:port").
	for (int tries = 0; tries < 1000; tries++) {
		int n = 0;
		struct socket_server_info *info = socket_server_info(h->ss, &n);
		char name[64] = "";
		for (int i = 0; i < n; i++) {
			if (info[i].id == id)
				memcpy(name, info[i].name, sizeof(name));
		}
		skynet_free(info);
		char *colon = strrchr(name, ':');
		if (colon != NULL) {
			union {
				struct sockaddr_in v4;
				struct sockaddr_in6 v6;
			} sa;
			memset(&sa, 0, sizeof(sa));
			int port = atoi(colon + 1);
			if (strchr(host, ':') != NULL) {
				sa.v6.sin6_family = AF_INET6;
				sa.v6.sin6_port = htons((uint16_t)port);
				inet_pton(AF_INET6, host, &sa.v6.sin6_addr);
			} else {
				sa.v4.sin_family = AF_INET;
				sa.v4.sin_port = htons((uint16_t)port);
				inet_pton(AF_INET, host, &sa.v4.sin_addr);
			}
			*addr_sz = socket_server_encode_address(&sa, addr);
			return id;
		}
		usleep(1000); // the poll thread registers it
	}
	return -1;
}

static void
udp_round_trip_on(int *failed, const char *host) {
	struct harness *h = harness_start();
	uint8_t addr[SKYNET_SOCKET_UDP_ADDRESS_MAX];
	int addr_sz = 0;
	int server = udp_bound(h, host, addr, &addr_sz);
	TT_CHECK(server >= 0 && addr_sz == (strchr(host, ':') ? 19 : 7));
	int client = socket_server_udp(h->ss, OWNER, strchr(host, ':') ? "::" : NULL, 0);
	TT_CHECK(client >= 0);
	struct socket_sendbuffer b = {client, SOCKET_BUFFER_RAWCOPY, "datagram", 8};
	TT_CHECK(socket_server_udp_send(h->ss, addr, addr_sz, &b) == 0);
	struct event *e = expect(h, SKYNET_SOCKET_TYPE_UDP, server);
	TT_CHECK(e != NULL && e->ud == 8 && memcmp(e->data, "datagram", 8) == 0 &&
	         e->addr_sz == addr_sz);
	// Answer to the sender's address as received.
	if (e != NULL) {
		struct socket_sendbuffer r = {server, SOCKET_BUFFER_RAWCOPY, "answer", 6};
		TT_CHECK(socket_server_udp_send(h->ss, e->addr, e->addr_sz, &r) == 0);
	}
	event_free(e);
	e = expect(h, SKYNET_SOCKET_TYPE_UDP, client);
	TT_CHECK(e != NULL && e->ud == 6 && memcmp(e->data, "answer", 6) == 0);
	event_free(e);
	// A connected UDP socket sends with plain send.
	int dial = socket_server_udp(h->ss, OWNER, NULL, 0);
	char ip[64];
	snprintf(ip, sizeof(ip), "%s", host);
	int port = (addr[1] << 8) | addr[2];
	if (strchr(host, ':') == NULL) {
		TT_CHECK(socket_server_udp_connect(h->ss, dial, ip, port) == 0);
		struct socket_sendbuffer c = {dial, SOCKET_BUFFER_RAWCOPY, "connected", 9};
		TT_CHECK(socket_server_send(h->ss, &c) == 0);
		e = expect(h, SKYNET_SOCKET_TYPE_UDP, server);
		TT_CHECK(e != NULL && e->ud == 9);
		event_free(e);
	}
	int dialed = socket_server_udp_dial(h->ss, OWNER, ip, port);
	TT_CHECK(dialed >= 0);
	struct socket_sendbuffer d = {dialed, SOCKET_BUFFER_RAWCOPY, "dialed", 6};
	TT_CHECK(socket_server_send(h->ss, &d) == 0);
	e = expect(h, SKYNET_SOCKET_TYPE_UDP, server);
	TT_CHECK(e != NULL && e->ud == 6);
	event_free(e);
	// Malformed addresses are refused at once.
	uint8_t bad[7] = {5, 0, 0, 0, 0, 0, 0};
	struct socket_sendbuffer x = {client, SOCKET_BUFFER_RAWCOPY, "x", 1};
	TT_CHECK(socket_server_udp_send(h->ss, bad, 7, &x) == SKYNET_EINVAL);
	harness_stop(h);
}

static void
udp_round_trip(int *failed) {
	udp_round_trip_on(failed, "127.0.0.1");
}

static bool
has_ipv6_loopback(void) {
	int fd = socket(AF_INET6, SOCK_DGRAM, 0);
	if (fd < 0)
		return false;
	struct sockaddr_in6 sa = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	bool ok = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return ok;
}

static void
udp_round_trip_ipv6(int *failed) {
	if (!has_ipv6_loopback()) {
		printf("skip udp_round_trip_ipv6: no ::1\n");
		return;
	}
	udp_round_trip_on(failed, "::1");
}

/*
 * Connects never make the poll thread resolve: a numeric address is looked
 * up once, numerically, in the caller; a name in the caller too, before
 * connect returns; a name that does not resolve gives its caller ERROR and
 * leaves no socket.
 */
static void
connect_resolves_in_the_caller(int *failed) {
	struct harness *h = harness_start();
	int port = 0;
	int lid = open_listener(h, &port, true);
	TT_CHECK(lid >= 0);
	// localhost may name ::1 first: listen there too, on the same port, when we can.
	if (has_ipv6_loopback()) {
		int lid6 = socket_server_listen(h->ss, OWNER, "::1", port, 16, NULL);
		if (lid6 >= 0) {
			event_free(expect(h, SKYNET_SOCKET_TYPE_CONNECT, lid6));
			socket_server_start(h->ss, OWNER, lid6);
			event_free(expect(h, SKYNET_SOCKET_TYPE_CONNECT, lid6));
		}
	}
	int on_poll = ATOM_LOAD(&POLL_LOOKUPS);
	int in_caller = ATOM_LOAD(&CALLER_LOOKUPS);
	int cid = socket_server_connect(h->ss, OWNER, "127.0.0.1", port);
	TT_CHECK(ATOM_LOAD(&CALLER_LOOKUPS) == in_caller + 1);
	TT_CHECK(ATOM_LOAD(&LAST_FLAGS) & AI_NUMERICHOST);
	struct event *e = wait_event(h, match_id, &cid, WAIT_MS);
	TT_CHECK(e != NULL && e->type == SKYNET_SOCKET_TYPE_CONNECT);
	event_free(e);
	// A name: resolved before connect returns, on this thread.
	in_caller = ATOM_LOAD(&CALLER_LOOKUPS);
	int nid = socket_server_connect(h->ss, OWNER, "localhost", port);
	TT_CHECK(nid >= 0);
	TT_CHECK(ATOM_LOAD(&CALLER_LOOKUPS) > in_caller);
	e = wait_event(h, match_id, &nid, WAIT_MS);
	TT_CHECK(e != NULL && e->type == SKYNET_SOCKET_TYPE_CONNECT);
	if (e != NULL && e->type != SKYNET_SOCKET_TYPE_CONNECT)
		fprintf(stderr, "connect localhost: %s\n", e->text);
	event_free(e);
	// A name that cannot resolve: an id, then ERROR with the resolver's text.
	uint64_t t0 = now_ms();
	int bad = socket_server_connect(h->ss, OWNER, "no-such-host.invalid", port);
	TT_CHECK(bad >= 0);
	e = expect(h, SKYNET_SOCKET_TYPE_ERROR, bad);
	TT_CHECK(e != NULL && e->text[0] != '\0' && e->opaque == OWNER);
	event_free(e);
	TT_CHECK(now_ms() - t0 < WAIT_MS);
	TT_CHECK(send_string(h, bad, "x") == SKYNET_EINVAL); // no socket behind it
	TT_CHECK(quiet(h, SKYNET_SOCKET_TYPE_CONNECT, bad, QUIET_MS));
	int stray = ATOM_LOAD(&POLL_LOOKUPS) - on_poll;
	TT_CHECK(stray == 0);
	if (stray != 0)
		fprintf(stderr, "getaddrinfo calls on the poll thread: %d\n", stray);
	harness_stop(h);
}

/*
 * Ids are not reused for about 2^31 allocations: a socket that lands in a
 * stale id's slot is out of that id's reach.
 */
static void
stale_id_never_reaches_new_socket(int *failed) {
	struct harness *h = harness_start();
	int stale = socket_server_udp(h->ss, OWNER, NULL, 0);
	TT_CHECK(stale >= 0);
	socket_server_shutdown(h->ss, OWNER, stale);
	event_free(expect(h, SKYNET_SOCKET_TYPE_CLOSE, stale));
	// Allocate until an id lands in the stale id's slot.
	int fresh = -1;
	int batch[512];
	for (int round = 0; round < 200 && fresh < 0; round++) {
		int n = 0;
		for (int i = 0; i < 512; i++) {
			int id = socket_server_udp(h->ss, OWNER, NULL, 0);
			if (id % SKYNET_SOCKET_MAX == stale % SKYNET_SOCKET_MAX) {
				fresh = id;
				break;
			}
			batch[n++] = id;
		}
		for (int i = 0; i < n; i++)
			socket_server_shutdown(h->ss, OWNER, batch[i]);
		for (int i = 0; i < n; i++)
			event_free(expect(h, SKYNET_SOCKET_TYPE_CLOSE, batch[i]));
	}
	TT_CHECK(fresh >= 0 && fresh != stale);
	// The stale id reaches nothing; the fresh socket still works.
	TT_CHECK(send_string(h, stale, "x") == SKYNET_EINVAL);
	socket_server_close(h->ss, OWNER, stale);
	struct event *e = expect(h, SKYNET_SOCKET_TYPE_CLOSE, stale);
	TT_CHECK(e != NULL && e->id == stale); // answered for the stale id only
	event_free(e);
	socket_server_start(h->ss, OWNER, stale);
	e = expect(h, SKYNET_SOCKET_TYPE_ERROR, stale);
	TT_CHECK(e != NULL && strcmp(e->text, "invalid socket") == 0);
	event_free(e);
	int n = 0;
	struct socket_server_info *info = socket_server_info(h->ss, &n);
	bool alive = false;
	for (int i = 0; i < n; i++)
		alive = alive || info[i].id == fresh;
	skynet_free(info);
	TT_CHECK(alive);
	harness_stop(h);
}

/* A connected pair: a started server-side id and a plain peer fd. */
static int
pair(struct harness *h, int *lid, int *peer) {
	int port = 0;
	*lid = open_listener(h, &port, true);
	*peer = peer_connect(port);
	return accept_started(h, *lid);
}

static void
pending_output_warns_at_1mb_and_doublings(int *failed) {
	struct harness *h = harness_start();
	int lid, fd;
	int id = pair(h, &lid, &fd);
	TT_CHECK(id >= 0 && fd >= 0);
	// The peer reads nothing: output piles up past 1, 2 and 4 MB.
	int kb[3] = {0};
	size_t sent = fill_until_warnings(h, id, 'w', 3, kb);
	TT_CHECK(sent > 0);
	int thresholds[] = {1024, 2048, 4096};
	for (int i = 0; i < 3; i++)
		TT_CHECK(kb[i] >= thresholds[i] && kb[i] < thresholds[i] + 1024);
	TT_CHECK(quiet(h, SKYNET_SOCKET_TYPE_WARNING, id, QUIET_MS)); // no more before 8 MB
	int n = 0;
	struct socket_server_info *info = socket_server_info(h->ss, &n);
	bool seen = false;
	for (int i = 0; i < n; i++) {
		if (info[i].id == id) {
			seen = true;
			TT_CHECK(info[i].wbuffer > 4 * MB && info[i].writing);
		}
	}
	skynet_free(info);
	TT_CHECK(seen);
	// The peer drains: WARNING 0.
	size_t drained = 0;
	char *buf = skynet_malloc(CHUNK);
	while (drained < sent) {
		size_t r = peer_read(fd, buf, CHUNK);
		if (r == 0)
			break;
		drained += r;
	}
	skynet_free(buf);
	TT_CHECK(drained == sent);
	struct event *e = expect(h, SKYNET_SOCKET_TYPE_WARNING, id);
	TT_CHECK(e != NULL && e->ud == 0);
	event_free(e);
	close(fd);
	harness_stop(h);
}

static void
close_flushes_pending_output(int *failed) {
	struct harness *h = harness_start();
	int lid, fd;
	int id = pair(h, &lid, &fd);
	TT_CHECK(id >= 0);
	int kb[1];
	size_t total = fill_until_warnings(h, id, 'a', 1, kb); // over 1 MB queued
	TT_CHECK(total > 0);
	TT_CHECK(send_string(h, id, "end") == 0);
	total += 3;
	socket_server_close(h->ss, OWNER, id);
	TT_CHECK(quiet(h, SKYNET_SOCKET_TYPE_CLOSE, id, QUIET_MS)); // still flushing
	TT_CHECK(send_string(h, id, "after close") == 0);           // taken, never sent
	char *buf = skynet_malloc(total + 64);
	size_t got = peer_read(fd, buf, total + 64);
	TT_CHECK(got == total);
	bool intact = got == total && memcmp(buf + total - 3, "end", 3) == 0;
	for (size_t i = 0; i + 3 < got && intact; i++)
		intact = buf[i] == 'a';
	TT_CHECK(intact);
	skynet_free(buf);
	TT_CHECK(peer_sees_eof(fd, NULL));
	struct event *e = expect(h, SKYNET_SOCKET_TYPE_CLOSE, id);
	TT_CHECK(e != NULL && e->opaque == OWNER);
	event_free(e);
	close(fd);
	harness_stop(h);
}

static void
shutdown_discards_pending_output(int *failed) {
	struct harness *h = harness_start();
	int lid, fd;
	int id = pair(h, &lid, &fd);
	TT_CHECK(id >= 0);
	int kb[1];
	size_t total = fill_until_warnings(h, id, 's', 1, kb); // over 1 MB queued
	TT_CHECK(total > 0);
	socket_server_shutdown(h->ss, OWNER, id);
	struct event *e = expect(h, SKYNET_SOCKET_TYPE_CLOSE, id);
	TT_CHECK(e != NULL);
	event_free(e);
	size_t drained = 0;
	TT_CHECK(peer_sees_eof(fd, &drained));
	TT_CHECK(drained < total);
	close(fd);
	harness_stop(h);
}

static void
peer_closing_while_output_queued(int *failed) {
	struct harness *h = harness_start();
	int lid, fd;
	int id = pair(h, &lid, &fd);
	TT_CHECK(id >= 0);
	int kb[1];
	TT_CHECK(fill_until_warnings(h, id, 'p', 1, kb) > 0);
	// The peer goes away without reading: the owner hears of it once.
	close(fd);
	struct event *e = wait_event(h, match_end, &id, WAIT_MS);
	TT_CHECK(e != NULL);
	event_free(e);
	TT_CHECK(quiet(h, SKYNET_SOCKET_TYPE_CLOSE, id, QUIET_MS));
	TT_CHECK(quiet(h, SKYNET_SOCKET_TYPE_ERROR, id, QUIET_MS));
	// Writes to it fail or vanish; they never crash.
	send_string(h, id, "to nobody");
	int n = 0;
	skynet_free(socket_server_info(h->ss, &n));
	harness_stop(h);
}

static void
low_priority_waits_for_normal(int *failed) {
	struct harness *h = harness_start();
	int lid, fd;
	int id = pair(h, &lid, &fd);
	TT_CHECK(id >= 0);
	int kb[1];
	size_t big = fill_until_warnings(h, id, 'B', 1, kb); // the kernel is full, 1 MB queued
	TT_CHECK(big > 0);
	send_fill(h, id, 1000, 'L', true);
	send_fill(h, id, 1000, 'H', false);
	size_t total = big + 2000;
	char *buf = skynet_malloc(total);
	TT_CHECK(peer_read(fd, buf, total) == total);
	TT_CHECK(buf[big - 1] == 'B' && buf[big] == 'H' && buf[big + 999] == 'H' &&
	         buf[big + 1000] == 'L' && buf[total - 1] == 'L');
	skynet_free(buf);
	close(fd);
	harness_stop(h);
}

static void
pause_stops_reading_until_start(int *failed) {
	struct harness *h = harness_start();
	int lid, fd;
	int id = pair(h, &lid, &fd);
	TT_CHECK(id >= 0);
	socket_server_pause(h->ss, OWNER, id);
	TT_CHECK(quiet(h, SKYNET_SOCKET_TYPE_DATA, id, 20)); // let the pause land
	TT_CHECK(send(fd, "held", 4, 0) == 4);
	TT_CHECK(quiet(h, SKYNET_SOCKET_TYPE_DATA, id, QUIET_MS));
	socket_server_start(h->ss, OWNER, id);
	char buf[4];
	TT_CHECK(read_data(h, id, buf, 4) == 4 && memcmp(buf, "held", 4) == 0);
	// A paused socket whose peer resets does not spin (nothing polls it).
	socket_server_pause(h->ss, OWNER, id);
	struct linger lg = {1, 0};
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd); // RST
	TT_CHECK(quiet(h, SKYNET_SOCKET_TYPE_DATA, id, QUIET_MS));
	socket_server_start(h->ss, OWNER, id);
	struct event *e = wait_event(h, match_end, &id, WAIT_MS);
	TT_CHECK(e != NULL);
	event_free(e);
	harness_stop(h);
}

/* ---- flow control and the output limit ----------------------------------- */

/* The info entry of id (false when it is not open). */
static bool
info_of(struct socket_server *ss, int id, struct socket_server_info *out) {
	int n = 0;
	struct socket_server_info *info = socket_server_info(ss, &n);
	bool seen = false;
	for (int i = 0; i < n; i++) {
		if (info[i].id == id) {
			*out = info[i];
			seen = true;
		}
	}
	skynet_free(info);
	return seen;
}

/* The port listener lid is bound to (0 when unknown). */
static int
listener_port(struct harness *h, int lid) {
	struct socket_server_info si;
	if (!info_of(h->ss, lid, &si))
		return 0;
	const char *colon = strrchr(si.name, ':');
	return colon ? atoi(colon + 1) : 0;
}

/* The peer sends one byte; DATA for it comes (and is taken). */
static bool
one_byte_arrives(struct harness *h, int id, int fd, char c) {
	if (send(fd, &c, 1, 0) != 1)
		return false;
	char got = 0;
	return read_data(h, id, &got, 1) == 1 && got == c;
}

/*
 * A flow pause holds reading until a resume with its key, whatever the
 * owner's pause and start do; an owner pause holds it after the resume.
 */
static void
flow_pause_composes_with_owner_pause(int *failed) {
	struct harness *h = harness_start();
	int lid, fd;
	int id = pair(h, &lid, &fd);
	TT_CHECK(id >= 0);
	ATOM_STORE(&h->consumer_full, 1);
	TT_CHECK(one_byte_arrives(h, id, fd, 'a')); // delivered, then paused
	ATOM_STORE(&h->consumer_full, 0);
	struct socket_server_info si;
	TT_CHECK(info_of(h->ss, id, &si) && si.flow_paused && si.reading && si.flow_pauses == 1);
	TT_CHECK(socket_server_flow_pauses(h->ss) == 1);
	TT_CHECK(send(fd, "b", 1, 0) == 1);
	TT_CHECK(quiet(h, SKYNET_SOCKET_TYPE_DATA, id, QUIET_MS));
	// The owner's own pause and start (skynet.socket's auto-pause) leave it paused.
	socket_server_pause(h->ss, OWNER, id);
	socket_server_start(h->ss, OWNER, id);
	event_free(expect(h, SKYNET_SOCKET_TYPE_CONNECT, id));
	TT_CHECK(quiet(h, SKYNET_SOCKET_TYPE_DATA, id, QUIET_MS));
	// Another key lifts nothing.
	socket_server_flow_resume(h->ss, OWNER + 1);
	TT_CHECK(quiet(h, SKYNET_SOCKET_TYPE_DATA, id, QUIET_MS));
	// Paused by the owner too: the resume alone does not read.
	socket_server_pause(h->ss, OWNER, id);
	socket_server_flow_resume(h->ss, OWNER);
	TT_CHECK(quiet(h, SKYNET_SOCKET_TYPE_DATA, id, QUIET_MS));
	TT_CHECK(info_of(h->ss, id, &si) && !si.flow_paused && !si.reading);
	socket_server_start(h->ss, OWNER, id);
	char got = 0;
	TT_CHECK(read_data(h, id, &got, 1) == 1 && got == 'b');
	TT_CHECK(one_byte_arrives(h, id, fd, 'c'));
	close(fd);
	event_free(wait_event(h, match_end, &id, WAIT_MS));
	harness_stop(h);
}

/*
 * The consumer rides along in every result; naming another one, or a
 * start by a new owner (which forgets it), lifts the flow pause. A resume
 * finds only the sockets still paused with its key, closed ones gone.
 */
static void
flow_pause_follows_the_consumer(int *failed) {
	enum { CONSUMER = 42, NEW_OWNER = 9 };
	struct harness *h = harness_start();
	int lid, fd[3], id[3];
	id[0] = pair(h, &lid, &fd[0]);
	struct socket_server_info si;
	for (int i = 1; i < 3; i++) {
		fd[i] = peer_connect(listener_port(h, lid));
		id[i] = accept_started(h, lid);
	}
	for (int i = 0; i < 3; i++) {
		TT_CHECK(id[i] >= 0 && fd[i] >= 0);
		socket_server_consumer(h->ss, id[i], CONSUMER);
	}
	ATOM_STORE(&h->consumer_full, 1);
	for (int i = 0; i < 3; i++) {
		TT_CHECK(send(fd[i], "x", 1, 0) == 1);
		struct event *e = expect(h, SKYNET_SOCKET_TYPE_DATA, id[i]);
		TT_CHECK(e != NULL && e->opaque == OWNER);
		event_free(e);
		TT_CHECK(info_of(h->ss, id[i], &si) && si.flow_paused && si.consumer == CONSUMER);
	}
	ATOM_STORE(&h->consumer_full, 0);
	// The owner's key lifts nothing: they were paused for the consumer.
	socket_server_flow_resume(h->ss, OWNER);
	for (int i = 0; i < 3; i++)
		TT_CHECK(send(fd[i], "y", 1, 0) == 1);
	TT_CHECK(quiet(h, SKYNET_SOCKET_TYPE_DATA, -1, QUIET_MS));
	// 0: naming the owner lifts the pause.
	socket_server_consumer(h->ss, id[0], 0);
	char got = 0;
	TT_CHECK(read_data(h, id[0], &got, 1) == 1 && got == 'y');
	TT_CHECK(info_of(h->ss, id[0], &si) && !si.flow_paused && si.consumer == 0);
	// A new owner: the consumer is forgotten and the pause lifted.
	socket_server_start(h->ss, NEW_OWNER, id[1]);
	struct event *e = expect(h, SKYNET_SOCKET_TYPE_CONNECT, id[1]);
	TT_CHECK(e != NULL && strcmp(e->text, "transfer") == 0);
	event_free(e);
	e = expect(h, SKYNET_SOCKET_TYPE_DATA, id[1]);
	TT_CHECK(e != NULL && e->opaque == NEW_OWNER);
	event_free(e);
	TT_CHECK(info_of(h->ss, id[1], &si) && !si.flow_paused && si.consumer == 0);
	// Close one paused socket: the resume still finds the other.
	socket_server_shutdown(h->ss, OWNER, id[2]);
	event_free(wait_event(h, match_end, &id[2], WAIT_MS));
	socket_server_flow_resume(h->ss, CONSUMER);
	TT_CHECK(quiet(h, SKYNET_SOCKET_TYPE_DATA, -1, QUIET_MS)); // nothing left paused
	socket_server_consumer(h->ss, id[1], CONSUMER);
	ATOM_STORE(&h->consumer_full, 1);
	TT_CHECK(send(fd[1], "z", 1, 0) == 1);
	e = expect(h, SKYNET_SOCKET_TYPE_DATA, id[1]);
	TT_CHECK(e != NULL);
	event_free(e);
	ATOM_STORE(&h->consumer_full, 0);
	TT_CHECK(send(fd[1], "w", 1, 0) == 1);
	TT_CHECK(quiet(h, SKYNET_SOCKET_TYPE_DATA, id[1], QUIET_MS));
	socket_server_flow_resume(h->ss, CONSUMER);
	got = 0;
	TT_CHECK(read_data(h, id[1], &got, 1) == 1 && got == 'w');
	TT_CHECK(socket_server_flow_pauses(h->ss) == 4);
	for (int i = 0; i < 3; i++)
		close(fd[i]);
	harness_stop(h);
}

static bool
match_notice(const struct event *e, const void *arg) {
	return e->type == SOCKET_SERVER_NOTICE && strstr(e->text, arg) != NULL;
}

/*
 * A peer that reads nothing: the warnings come at 1 and 2 MB, then the
 * send that takes the queue past the limit closes the connection (CLOSE
 * to the owner, output dropped) and one NOTICE names the peer and the
 * limit. Other connections are not touched.
 */
static void
output_limit_closes_the_connection(int *failed) {
	struct harness *h = harness_start();
	socket_server_set_output_limit(h->ss, 3 * MB);
	int lid, fd, other_fd;
	int id = pair(h, &lid, &fd);
	TT_CHECK(id >= 0);
	struct socket_server_info si;
	TT_CHECK(info_of(h->ss, id, &si));
	char peer_name[64];
	memcpy(peer_name, si.name, sizeof(peer_name));
	other_fd = peer_connect(listener_port(h, lid));
	int other = accept_started(h, lid);
	TT_CHECK(peer_name[0] != '\0' && other >= 0);
	int kb[2] = {0};
	TT_CHECK(fill_until_warnings(h, id, 'o', 2, kb) > 0);
	TT_CHECK(kb[0] >= 1024 && kb[1] >= 2048);
	// Fill on past 3 MB: the connection goes.
	struct event *end = NULL;
	for (int i = 0; i < 64 && end == NULL; i++) {
		send_fill(h, id, CHUNK, 'o', false);
		end = wait_event(h, match_end, &id, i % 16 == 15 ? 50 : 0);
	}
	if (end == NULL)
		end = wait_event(h, match_end, &id, WAIT_MS);
	TT_CHECK(end != NULL && end->type == SKYNET_SOCKET_TYPE_CLOSE && end->opaque == OWNER);
	event_free(end);
	char want[96];
	snprintf(want, sizeof(want), "address=%s limit=%d", peer_name, 3 * MB);
	struct event *e = wait_event(h, match_notice, want, WAIT_MS);
	TT_CHECK(e != NULL && strstr(e->text, "output limit") != NULL);
	event_free(e);
	TT_CHECK(quiet(h, SOCKET_SERVER_NOTICE, -1, QUIET_MS)); // one line only
	TT_CHECK(!info_of(h->ss, id, &si));
	size_t drained = 0;
	TT_CHECK(peer_sees_eof(fd, &drained));
	// The other connection still works; 0 turns the limit off.
	TT_CHECK(one_byte_arrives(h, other, other_fd, 'k'));
	socket_server_set_output_limit(h->ss, 0);
	close(fd);
	close(other_fd);
	harness_stop(h);
}

static void
thousand_connections_leave_no_fd(int *failed) {
	struct harness *h = harness_start();
	int port = 0;
	int lid = open_listener(h, &port, true);
	TT_CHECK(lid >= 0);
	int before = count_fds();
	enum { BATCH = 250, ROUNDS = 4 };
	int closed = 0;
	for (int round = 0; round < ROUNDS; round++) {
		int client[BATCH], server[BATCH];
		for (int i = 0; i < BATCH; i++)
			client[i] = socket_server_connect(h->ss, OWNER, "127.0.0.1", port);
		for (int i = 0; i < BATCH; i++) {
			struct event *e = expect(h, SKYNET_SOCKET_TYPE_ACCEPT, lid);
			server[i] = e ? e->ud : -1;
			event_free(e);
			socket_server_start(h->ss, OWNER, server[i]);
		}
		// Half close from the client side, half from the server side (shutdown).
		for (int i = 0; i < BATCH; i++) {
			if (i % 2)
				socket_server_close(h->ss, OWNER, client[i]);
			else
				socket_server_shutdown(h->ss, OWNER, server[i]);
		}
		for (int i = 0; i < BATCH; i++) {
			struct event *a = expect(h, SKYNET_SOCKET_TYPE_CLOSE, client[i]);
			struct event *b = expect(h, SKYNET_SOCKET_TYPE_CLOSE, server[i]);
			closed += (a != NULL) + (b != NULL);
			event_free(a);
			event_free(b);
		}
	}
	TT_CHECK(closed == 2 * BATCH * ROUNDS);
	int after = count_fds();
	TT_CHECK(before == after);
	if (before != after)
		fprintf(stderr, "fds before=%d after=%d\n", before, after);
	harness_stop(h);
}

static uint64_t
thread_cpu_us(pthread_t t) {
	clockid_t cid;
	struct timespec ts;
	if (pthread_getcpuclockid(t, &cid) != 0 || clock_gettime(cid, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* The smallest descriptor limit that leaves exactly room free numbers below it. */
static int
limit_with_room(int room) {
	int fd = 0;
	for (;; fd++) {
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF && --room == 0)
			return fd + 1;
	}
}

static void
emfile_on_accept_without_busy_loop(int *failed) {
	enum { CLIENTS = 40, ROOM = 5 };
	struct harness *h = harness_start();
	int port = 0;
	int lid = open_listener(h, &port, false); // accepts nothing yet
	TT_CHECK(lid >= 0);
	int fds[CLIENTS];
	for (int i = 0; i < CLIENTS; i++)
		fds[i] = peer_connect(port); // completed by the kernel, waiting in the backlog
	struct rlimit old;
	getrlimit(RLIMIT_NOFILE, &old);
	struct rlimit low = old;
	low.rlim_cur = (rlim_t)limit_with_room(ROOM);
	TT_CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0);
	uint64_t cpu0 = thread_cpu_us(h->thread);
	socket_server_start(h->ss, OWNER, lid);
	// Some are accepted, the rest are dropped (closed at once).
	int accepted = 0;
	int eof = 0;
	uint64_t deadline = now_ms() + WAIT_MS;
	while (eof + accepted < CLIENTS && now_ms() < deadline) {
		struct event *e = wait_event(h, NULL, NULL, 50);
		if (e != NULL && e->type == SKYNET_SOCKET_TYPE_ACCEPT)
			accepted++;
		event_free(e);
		eof = 0;
		for (int i = 0; i < CLIENTS; i++) {
			struct pollfd p = {.fd = fds[i], .events = POLLIN};
			char c;
			if (poll(&p, 1, 0) == 1 && recv(fds[i], &c, 1, MSG_PEEK) <= 0)
				eof++;
		}
	}
	TT_CHECK(accepted > 0 && accepted <= ROOM);
	TT_CHECK(accepted + eof == CLIENTS);
	// Idle now: a busy loop would burn this whole window.
	TT_CHECK(quiet(h, SKYNET_SOCKET_TYPE_ACCEPT, lid, 300));
	uint64_t cpu = thread_cpu_us(h->thread) - cpu0;
	TT_CHECK(cpu < 150000);
	if (cpu >= 150000)
		fprintf(stderr, "socket thread cpu=%lu us\n", (unsigned long)cpu);
	struct event *notice = NULL;
	skynet_cond_lock(&h->cond);
	for (int i = 0; i < h->n && notice == NULL; i++) {
		if (h->log[i].type == SOCKET_SERVER_NOTICE)
			notice = &h->log[i];
	}
	TT_CHECK(notice != NULL && strstr(notice->text, "dropped") != NULL);
	skynet_cond_unlock(&h->cond);
	// Still serving once descriptors are back.
	TT_CHECK(setrlimit(RLIMIT_NOFILE, &old) == 0);
	for (int i = 0; i < CLIENTS; i++)
		close(fds[i]);
	int fd = peer_connect(port);
	TT_CHECK(fd >= 0);
	struct event *e = expect(h, SKYNET_SOCKET_TYPE_ACCEPT, lid);
	TT_CHECK(e != NULL);
	event_free(e);
	close(fd);
	harness_stop(h);
}

static void
bind_wraps_a_pipe(int *failed) {
	struct harness *h = harness_start();
	int p[2];
	TT_CHECK(pipe(p) == 0);
	int id = socket_server_bind(h->ss, OWNER, p[0]);
	struct event *e = expect(h, SKYNET_SOCKET_TYPE_CONNECT, id);
	TT_CHECK(e != NULL && strcmp(e->text, "binding") == 0);
	event_free(e);
	TT_CHECK(write(p[1], "line\n", 5) == 5);
	char buf[5];
	TT_CHECK(read_data(h, id, buf, 5) == 5 && memcmp(buf, "line\n", 5) == 0);
	close(p[1]);
	event_free(e = expect(h, SKYNET_SOCKET_TYPE_CLOSE, id));
	TT_CHECK(e != NULL);
	// A regular file cannot be polled: ERROR, and the socket is gone.
	int f = open("/proc/self/stat", O_RDONLY);
	id = socket_server_bind(h->ss, OWNER, f);
	e = expect(h, SKYNET_SOCKET_TYPE_ERROR, id);
	TT_CHECK(e != NULL);
	event_free(e);
	harness_stop(h);
}

static void
read_buffer_adapts(int *failed) {
	struct harness *h = harness_start();
	int lid, fd;
	int id = pair(h, &lid, &fd);
	TT_CHECK(id >= 0);
	// A stream of 4 MB: reads grow well past the 64-byte start.
	size_t total = 4 * (size_t)MB;
	char *buf = skynet_malloc(CHUNK);
	memset(buf, 'r', CHUNK);
	size_t sent = 0;
	int biggest = 0;
	size_t got = 0;
	while (got < total) {
		if (sent < total) {
			ssize_t w = send(fd, buf, CHUNK, MSG_DONTWAIT);
			if (w > 0)
				sent += (size_t)w;
		}
		struct event *e = expect(h, SKYNET_SOCKET_TYPE_DATA, id);
		if (e == NULL)
			break;
		got += (size_t)e->ud;
		if (e->ud > biggest)
			biggest = e->ud;
		event_free(e);
	}
	TT_CHECK(got == total);
	TT_CHECK(biggest >= 16 * 1024);
	// Then small messages: reads shrink back (the buffer handed out is small).
	int last = 0;
	for (int i = 0; i < 40; i++) {
		TT_CHECK(send(fd, "tiny", 4, 0) == 4);
		struct event *e = expect(h, SKYNET_SOCKET_TYPE_DATA, id);
		last = e ? e->ud : -1;
		event_free(e);
	}
	TT_CHECK(last == 4);
	skynet_free(buf);
	close(fd);
	harness_stop(h);
}

struct sender {
	struct harness *h;
	int id;      // the socket all senders write to
	int thread;  // this sender's number
	int records; // how many to send
	int churn;   // UDP sockets to open and close meanwhile (id allocation races)
};

/* Each record is 8 bytes: thread number and sequence, big-endian 32-bit. */
static void *
sender_main(void *p) {
	struct sender *sd = p;
	for (int i = 0; i < sd->records; i++) {
		uint8_t rec[8];
		uint32_t t = htonl((uint32_t)sd->thread), seq = htonl((uint32_t)i);
		memcpy(rec, &t, 4);
		memcpy(rec + 4, &seq, 4);
		struct socket_sendbuffer b = {sd->id, SOCKET_BUFFER_RAWCOPY, rec, sizeof(rec)};
		socket_server_send(sd->h->ss, &b);
		if (i < sd->churn) {
			int u = socket_server_udp(sd->h->ss, OWNER + 100 + sd->thread, NULL, 0);
			socket_server_shutdown(sd->h->ss, OWNER + 100 + sd->thread, u);
		}
	}
	return NULL;
}

/*
 * Several threads queue commands at once: every record arrives, each
 * thread's records in its own order (the command queue is FIFO), and ids
 * allocated meanwhile are all distinct.
 */
static void
concurrent_senders_keep_per_thread_order(int *failed) {
	enum { THREADS = 4 };
	int records = tt_stress() ? 20000 : 3000;
	struct harness *h = harness_start();
	int lid, fd;
	int id = pair(h, &lid, &fd);
	TT_CHECK(id >= 0);
	struct sender sd[THREADS];
	pthread_t th[THREADS];
	for (int i = 0; i < THREADS; i++) {
		sd[i] = (struct sender){h, id, i, records, 200};
		pthread_create(&th[i], NULL, sender_main, &sd[i]);
	}
	size_t total = (size_t)THREADS * (size_t)records * 8;
	uint8_t *buf = skynet_malloc(total);
	size_t got = peer_read(fd, (char *)buf, total);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	TT_CHECK(got == total);
	uint32_t next[THREADS] = {0};
	bool ordered = true;
	for (size_t off = 0; off + 8 <= got && ordered; off += 8) {
		uint32_t t, seq;
		memcpy(&t, buf + off, 4);
		memcpy(&seq, buf + off + 4, 4);
		t = ntohl(t);
		seq = ntohl(seq);
		ordered = t < THREADS && seq == next[t];
		if (ordered)
			next[t]++;
	}
	TT_CHECK(ordered);
	skynet_free(buf);
	// Every churned UDP socket was answered with its own CLOSE, ids distinct.
	enum { CHURN = THREADS * 200 };
	int ids[CHURN];
	int closes = 0;
	while (closes < CHURN) {
		struct want w = {SKYNET_SOCKET_TYPE_CLOSE, -1};
		struct event *e = wait_event(h, match_type_id, &w, WAIT_MS);
		if (e == NULL)
			break;
		if (e->opaque >= OWNER + 100)
			ids[closes++] = e->id;
		event_free(e);
	}
	TT_CHECK(closes == CHURN);
	bool distinct = true;
	for (int i = 0; i < closes && distinct; i++) {
		for (int j = i + 1; j < closes && distinct; j++)
			distinct = ids[i] != ids[j];
	}
	TT_CHECK(distinct);
	close(fd);
	harness_stop(h);
}

static ATOM_INT IDLE_CALLS;

static void
count_idle(void) {
	ATOM_FINC(&IDLE_CALLS);
}

/*
 * Waits (bounded) until the server reports idle and more than after idle
 * callbacks have run (the flag is set just before the callback runs);
 * returns the idle callbacks so far.
 */
static int
wait_idle(struct harness *h, int after) {
	uint64_t deadline = now_ms() + WAIT_MS;
	while ((!socket_server_is_idle(h->ss) || ATOM_LOAD(&IDLE_CALLS) <= after) &&
	       now_ms() < deadline)
		usleep(1000);
	return ATOM_LOAD(&IDLE_CALLS);
}

/* Virtual time: idle only with no command queued and no event for a while. */
static void
idle_tracking_for_virtual_time(int *failed) {
	struct harness *plain = harness_start();
	TT_CHECK(!socket_server_is_idle(plain->ss)); // no callback: never idle
	harness_stop(plain);
	struct harness *h = harness_start_with(count_idle);
	int calls = wait_idle(h, 0);
	TT_CHECK(socket_server_is_idle(h->ss) && calls > 0);
	uint8_t addr[SKYNET_SOCKET_UDP_ADDRESS_MAX];
	int addr_sz = 0;
	int id = udp_bound(h, "127.0.0.1", addr, &addr_sz);
	TT_CHECK(id >= 0);
	calls = wait_idle(h, 0);
	// A command makes it busy before the call returns ...
	struct socket_sendbuffer b = {id, SOCKET_BUFFER_RAWCOPY, "self", 4};
	TT_CHECK(socket_server_udp_send(h->ss, addr, addr_sz, &b) == 0);
	TT_CHECK(!socket_server_is_idle(h->ss));
	// ... and it is idle again only after the datagram it caused came back.
	struct event *e = expect(h, SKYNET_SOCKET_TYPE_UDP, id);
	TT_CHECK(e != NULL);
	event_free(e);
	TT_CHECK(wait_idle(h, calls) > calls);
	harness_stop(h);
}

/* ---- the node's glue: a service's socket messages ------------------------ */

/*
 * A service that keeps the port of the last CONNECT and the id of the last
 * ACCEPT it was given, and the bytes of the DATA (run on the test thread).
 */
static int HOLDER_PORT;
static int HOLDER_ACCEPTED;
static char HOLDER_DATA[256];
static size_t HOLDER_DATA_SZ;

static int
holder_cb(struct skynet_context *ctx, void *ud, int type, int session, uint32_t source,
          const void *msg, size_t sz) {
	const struct skynet_socket_message *sm = msg;
	if (type != PTYPE_SOCKET)
		return 0;
	if (sm->type == SKYNET_SOCKET_TYPE_CONNECT)
		HOLDER_PORT = sm->ud;
	else if (sm->type == SKYNET_SOCKET_TYPE_ACCEPT)
		HOLDER_ACCEPTED = sm->ud;
	if (sm->type != SKYNET_SOCKET_TYPE_DATA)
		return 0;
	size_t n = (size_t)sm->ud;
	if (n > sizeof(HOLDER_DATA) - HOLDER_DATA_SZ)
		n = sizeof(HOLDER_DATA) - HOLDER_DATA_SZ;
	memcpy(HOLDER_DATA + HOLDER_DATA_SZ, sm->buffer, n);
	HOLDER_DATA_SZ += n;
	skynet_free(sm->buffer);
	return 0;
}

static int
holder_init(void *inst, struct skynet_context *ctx, const char *parm) {
	skynet_callback(ctx, NULL, holder_cb);
	return 0;
}

static void *
node_socket_thread(void *p) {
	ON_POLL_THREAD = true;
	while (skynet_socket_poll())
		;
	return NULL;
}

/* Wait (at most ms) until ctx has n messages queued; false if they never came. */
static bool
wait_queued_ms(struct skynet_context *ctx, int n, int ms) {
	uint64_t deadline = now_ms() + (uint64_t)ms;
	while (atoi(skynet_command(ctx, "STAT", "mqlen")) < n) {
		if (now_ms() >= deadline)
			return false;
		usleep(1000); // the socket thread pushes them
	}
	return true;
}

static bool
wait_queued(struct skynet_context *ctx, int n) {
	return wait_queued_ms(ctx, n, WAIT_MS);
}

/* Wait for n queued messages, then run them on this thread. */
static bool
run_queued(struct skynet_context *ctx, int n) {
	if (!wait_queued(ctx, n))
		return false;
	skynet_context_dispatchall(ctx);
	return true;
}

static int
open_sockets(void) {
	int n = 0;
	skynet_free(skynet_socket_info(&n));
	return n;
}

/* Wait (bounded) until n sockets are open; false if the count never got there. */
static bool
wait_open_sockets(int n) {
	uint64_t deadline = now_ms() + WAIT_MS;
	while (open_sockets() != n) {
		if (now_ms() >= deadline)
			return false;
		usleep(1000); // a slot is freed just after its fd is closed
	}
	return true;
}

/* Every fd sees the end of its stream before one shared deadline. */
static int
count_eof(const int *fds, int n) {
	uint64_t deadline = now_ms() + WAIT_MS;
	int eof = 0;
	for (int i = 0; i < n; i++) {
		for (;;) {
			uint64_t t = now_ms();
			struct pollfd p = {.fd = fds[i], .events = POLLIN};
			if (t >= deadline || poll(&p, 1, (int)(deadline - t)) <= 0)
				break;
			char c;
			if (recv(fds[i], &c, 1, 0) <= 0) {
				eof++;
				break;
			}
		}
	}
	return eof;
}

/*
 * A listening service exits with ACCEPT messages still in its queue: the
 * core drops them, and each accepted socket is closed with them (the
 * peers see the end, the fds and the slots are free again).
 */
static void
accepts_dropped_with_their_service_are_closed(int *failed) {
	enum { PEERS = 8 };
	const struct skynet_module holder = {.name = "holder", .init = holder_init};
	fixture_setup(0, &holder, 1, true);
	skynet_socket_init();
	pthread_t thread;
	if (pthread_create(&thread, NULL, node_socket_thread, NULL) != 0)
		abort();
	struct skynet_context *ctx = fixture_service("holder", NULL);
	TT_CHECK(ctx != NULL);
	int lid = skynet_socket_listen(ctx, "127.0.0.1", 0, PEERS, NULL);
	TT_CHECK(lid >= 0);
	TT_CHECK(run_queued(ctx, 1)); // CONNECT: the port
	int port = HOLDER_PORT;
	skynet_socket_start(ctx, lid);
	TT_CHECK(run_queued(ctx, 1)); // CONNECT "start"
	int fds_before = count_fds();
	int sockets_before = open_sockets();
	int fds[PEERS];
	for (int i = 0; i < PEERS; i++)
		fds[i] = peer_connect(port);
	// Every ACCEPT waits in the queue; nobody runs them.
	TT_CHECK(wait_queued(ctx, PEERS));
	TT_CHECK(atoi(skynet_command(ctx, "STAT", "mqlen")) == PEERS);
	TT_CHECK(open_sockets() == sockets_before + PEERS);
	// The service exits; the next worker step finds its queue and drops it.
	skynet_handle_retire(skynet_context_handle(ctx));
	TT_CHECK(skynet_context_message_dispatch(NULL, NULL, 0) == NULL);
	TT_CHECK(count_eof(fds, PEERS) == PEERS);
	for (int i = 0; i < PEERS; i++)
		close(fds[i]);
	TT_CHECK(wait_open_sockets(sockets_before));
	TT_CHECK(count_fds() == fds_before);
	skynet_socket_shutdown(NULL, lid); // the listener of the dead service
	skynet_socket_exit();
	pthread_join(thread, NULL);
	skynet_socket_free();
	fixture_teardown();
}

/* The node's view of socket id (false when it is not open). */
static bool
node_info(int id, struct skynet_socket_info *out) {
	int n = 0;
	struct skynet_socket_info *info = skynet_socket_info(&n);
	bool seen = false;
	for (int i = 0; i < n; i++) {
		if (info[i].id == id) {
			*out = info[i];
			seen = true;
		}
	}
	skynet_free(info);
	return seen;
}

/* Wait (bounded) until socket id's flow pause is as wanted. */
static bool
wait_flow_paused(int id, bool paused) {
	uint64_t deadline = now_ms() + WAIT_MS;
	struct skynet_socket_info si;
	while (!node_info(id, &si) || si.flow_paused != paused) {
		if (now_ms() >= deadline)
			return false;
		usleep(1000); // the socket thread pauses right after it pushed the DATA
	}
	return true;
}

/* Wait (bounded) until socket id names consumer (the request is on its way). */
static bool
wait_consumer(int id, uint32_t consumer) {
	uint64_t deadline = now_ms() + WAIT_MS;
	struct skynet_socket_info si;
	while (!node_info(id, &si) || si.consumer != consumer) {
		if (now_ms() >= deadline)
			return false;
		usleep(1000); // the socket thread runs the request
	}
	return true;
}

/* One holder listening and one accepted, started connection; *fd is the peer. */
static int
node_connection(struct skynet_context *ctx, int *lid, int *fd) {
	*lid = skynet_socket_listen(ctx, "127.0.0.1", 0, 8, NULL);
	if (*lid < 0 || !run_queued(ctx, 1)) // CONNECT: the port
		return -1;
	int port = HOLDER_PORT;
	skynet_socket_start(ctx, *lid);
	if (!run_queued(ctx, 1)) // CONNECT "start"
		return -1;
	*fd = peer_connect(port);
	if (*fd < 0 || !run_queued(ctx, 1)) // ACCEPT
		return -1;
	int id = HOLDER_ACCEPTED;
	skynet_socket_start(ctx, id);
	return run_queued(ctx, 1) ? id : -1; // CONNECT "start"
}

/* Messages the holder got in text (DATA bytes) since the last call. */
static bool
holder_got(const char *text) {
	bool same = HOLDER_DATA_SZ == strlen(text) && memcmp(HOLDER_DATA, text, HOLDER_DATA_SZ) == 0;
	HOLDER_DATA_SZ = 0;
	return same;
}

static void
node_flow_start(const struct skynet_module *holder, pthread_t *thread, int high_msgs,
                size_t high_bytes) {
	fixture_setup(0, holder, 1, true);
	skynet_socket_init();
	skynet_flow_config(high_msgs, high_bytes); // before the socket thread starts
	if (pthread_create(thread, NULL, node_socket_thread, NULL) != 0)
		abort();
}

static void
node_flow_stop(pthread_t thread, int lid) {
	skynet_flow_config(SKYNET_FLOW_HIGH_MSGS, SKYNET_FLOW_HIGH_BYTES);
	skynet_socket_shutdown(NULL, lid);
	skynet_socket_exit();
	pthread_join(thread, NULL);
	skynet_socket_free();
	fixture_teardown();
}

/*
 * The owner is the consumer (4 messages high, 1 low): with 4 DATA
 * messages waiting the connection is not read; once the service ran them
 * (the end of its dispatch) reading resumes and the held byte comes.
 */
static void
node_connection_waits_for_its_owner(int *failed) {
	const struct skynet_module holder = {.name = "holder", .init = holder_init};
	pthread_t thread;
	node_flow_start(&holder, &thread, 4, 0);
	struct skynet_context *ctx = fixture_service("holder", NULL);
	int lid, fd;
	int id = node_connection(ctx, &lid, &fd);
	TT_CHECK(id >= 0);
	uint64_t pauses_before = skynet_socket_flow_pauses();
	for (int i = 0; i < 4; i++) {
		TT_CHECK(send(fd, "abcd" + i, 1, 0) == 1);
		TT_CHECK(wait_queued(ctx, i + 1));
	}
	TT_CHECK(wait_flow_paused(id, true));
	TT_CHECK(send(fd, "e", 1, 0) == 1);
	TT_CHECK(!wait_queued_ms(ctx, 5, QUIET_MS)); // held in the kernel
	skynet_context_dispatchall(ctx);
	TT_CHECK(holder_got("abcd"));
	TT_CHECK(run_queued(ctx, 1));
	TT_CHECK(holder_got("e"));
	struct skynet_socket_info si;
	TT_CHECK(node_info(id, &si) && !si.flow_paused && si.reading && si.flow_pauses == 1);
	TT_CHECK(skynet_socket_flow_pauses() == pauses_before + 1);
	close(fd);
	TT_CHECK(run_queued(ctx, 1)); // CLOSE
	node_flow_stop(thread, lid);
}

/*
 * Bytes (100 high): DATA buffers count in full. A consumer named for the
 * connection holds it back with its own mailbox, and when that consumer
 * is gone the connection is read again.
 */
static void
node_connection_waits_for_its_consumer(int *failed) {
	const struct skynet_module holder = {.name = "holder", .init = holder_init};
	pthread_t thread;
	node_flow_start(&holder, &thread, 0, 100);
	struct skynet_context *ctx = fixture_service("holder", NULL);
	struct skynet_context *agent = fixture_service("holder", NULL);
	uint32_t agent_handle = skynet_context_handle(agent);
	int lid, fd;
	int id = node_connection(ctx, &lid, &fd);
	TT_CHECK(id >= 0);
	// 150 bytes: read in pieces (64, then 86), paused once 100 wait in the mailbox.
	char big[150];
	memset(big, 'b', sizeof(big));
	TT_CHECK(send(fd, big, sizeof(big), 0) == (ssize_t)sizeof(big));
	TT_CHECK(wait_flow_paused(id, true));
	TT_CHECK(send(fd, "c", 1, 0) == 1);
	int queued = atoi(skynet_command(ctx, "STAT", "mqlen"));
	TT_CHECK(!wait_queued_ms(ctx, queued + 1, QUIET_MS));
	skynet_context_dispatchall(ctx);
	size_t total = HOLDER_DATA_SZ;
	TT_CHECK(total >= 100 && total <= sizeof(big));
	HOLDER_DATA_SZ = 0;
	TT_CHECK(wait_flow_paused(id, false));
	// The rest comes, up to the "c".
	for (int i = 0; i < 8 && total < sizeof(big) + 1 && run_queued(ctx, 1); i++) {
		total += HOLDER_DATA_SZ;
		HOLDER_DATA_SZ = 0;
	}
	TT_CHECK(total == sizeof(big) + 1);
	// The agent consumes the connection; 100 bytes of other mail wait for it.
	skynet_socket_consumer(ctx, id, agent_handle);
	for (int i = 0; i < 4; i++) {
		char *p = skynet_malloc(25);
		memset(p, 'm', 25);
		skynet_send(ctx, 0, agent_handle, PTYPE_TEXT | PTYPE_TAG_DONTCOPY, 0, p, 25);
	}
	TT_CHECK(wait_consumer(id, agent_handle));
	TT_CHECK(send(fd, "f", 1, 0) == 1);
	TT_CHECK(wait_flow_paused(id, true));
	TT_CHECK(run_queued(ctx, 1)); // the owner runs its DATA: the agent is still behind
	TT_CHECK(holder_got("f"));
	TT_CHECK(send(fd, "g", 1, 0) == 1);
	TT_CHECK(!wait_queued_ms(ctx, 1, QUIET_MS));
	// The agent dies with its mail unread: the connection is read again.
	TT_CHECK(skynet_context_retire(agent_handle) == 1);
	TT_CHECK(wait_flow_paused(id, false));
	TT_CHECK(run_queued(ctx, 1));
	TT_CHECK(holder_got("g"));
	close(fd);
	TT_CHECK(run_queued(ctx, 1)); // CLOSE
	node_flow_stop(thread, lid);
}

/*
 * Requests a service holds outside its mailbox weigh like mail: with 4
 * held, one DATA message reaches the high-water mark (4); once released
 * and the mailbox run, reading resumes.
 */
static void
node_held_requests_count_as_mail(int *failed) {
	const struct skynet_module holder = {.name = "holder", .init = holder_init};
	pthread_t thread;
	node_flow_start(&holder, &thread, 4, 0);
	struct skynet_context *ctx = fixture_service("holder", NULL);
	int lid, fd;
	int id = node_connection(ctx, &lid, &fd);
	TT_CHECK(id >= 0);
	TT_CHECK(skynet_socket_flow_hold(ctx, 4) == 4);
	TT_CHECK(send(fd, "a", 1, 0) == 1);
	TT_CHECK(wait_flow_paused(id, true));
	TT_CHECK(send(fd, "b", 1, 0) == 1);
	TT_CHECK(!wait_queued_ms(ctx, 2, QUIET_MS));
	TT_CHECK(skynet_socket_flow_hold(ctx, -3) == 1);
	skynet_context_dispatchall(ctx); // 1 held + 0 waiting: at the low-water mark
	TT_CHECK(holder_got("a"));
	TT_CHECK(run_queued(ctx, 1));
	TT_CHECK(holder_got("b"));
	TT_CHECK(skynet_socket_flow_hold(ctx, -10) == 0); // never below 0
	close(fd);
	TT_CHECK(run_queued(ctx, 1)); // CLOSE
	node_flow_stop(thread, lid);
}

int
main(void) {
	signal(SIGPIPE, SIG_IGN);
	skynet_globalinit(); // the node case runs a service on this thread
	TT_RUN(listen_accept_read_write_close);
	TT_RUN(connect_both_ends);
	TT_RUN(connect_refused_reports_error);
	TT_RUN(udp_round_trip);
	TT_RUN(udp_round_trip_ipv6);
	TT_RUN(connect_resolves_in_the_caller);
	TT_RUN(stale_id_never_reaches_new_socket);
	TT_RUN(pending_output_warns_at_1mb_and_doublings);
	TT_RUN(close_flushes_pending_output);
	TT_RUN(shutdown_discards_pending_output);
	TT_RUN(peer_closing_while_output_queued);
	TT_RUN(low_priority_waits_for_normal);
	TT_RUN(pause_stops_reading_until_start);
	TT_RUN(flow_pause_composes_with_owner_pause);
	TT_RUN(flow_pause_follows_the_consumer);
	TT_RUN(output_limit_closes_the_connection);
	TT_RUN(bind_wraps_a_pipe);
	TT_RUN(read_buffer_adapts);
	TT_RUN(thousand_connections_leave_no_fd);
	TT_RUN(emfile_on_accept_without_busy_loop);
	TT_RUN(idle_tracking_for_virtual_time);
	TT_RUN(concurrent_senders_keep_per_thread_order);
	TT_RUN(accepts_dropped_with_their_service_are_closed);
	TT_RUN(node_connection_waits_for_its_owner);
	TT_RUN(node_connection_waits_for_its_consumer);
	TT_RUN(node_held_requests_count_as_mail);
	skynet_globalexit();
	return tt_summary();
}
