/*
 * The epoll socket server.
 *
 * Slots and ids. A fixed table of SKYNET_SOCKET_MAX slots. An id is taken
 * from a counter that only grows (wrapping at 2^31) and lives in slot
 * id % SKYNET_SOCKET_MAX; a slot is claimed by CAS INVALID -> RESERVE, by a
 * worker (listen, connect, bind, udp) or by the poll thread (accept), and
 * stores its id. Every command checks slot->id == id, so a stale id reaches
 * nothing until the counter has gone round 2^31 ids. The slot's other
 * fields belong to the poll thread; it resets them before it stores INVALID.
 *
 * Commands. Workers never touch a socket's fd or queues: they append a
 * malloc'd request to a list under a spinlock and, when the list was empty,
 * write the eventfd the poll thread watches. The poll thread reads the
 * eventfd before taking the whole list (so a request appended after the
 * take always writes the eventfd again), then runs the requests in order.
 * Nothing a worker does waits for the network or for the poll thread.
 * Listen and UDP sockets are created in the caller (so errors are
 * synchronous); a TCP connect is resolved in the caller and its address
 * list handed over, then the poll thread creates and connects the socket.
 *
 * Name lookups. The poll thread never calls getaddrinfo: every lookup runs
 * in the thread calling socket_server_listen/connect/udp/udp_dial/
 * udp_connect. A numeric address goes through AI_NUMERICHOST and never
 * waits; only a host name may block, and then it blocks that caller (a
 * worker thread, for skynet) on the system resolver, never the poll
 * thread. A connect whose name does not resolve still returns an id: its
 * ERROR event (the resolver's text) comes from the poll thread like any
 * failed connect, and the id is free again.
 *
 * Events. Level-triggered epoll; a socket is registered only while its
 * mask is not empty (so a paused socket with nothing to send cannot spin
 * on HUP). One read per readable event into a fresh buffer handed to the
 * owner: the size starts at MIN_READ_BUFFER, doubles after a full read and
 * halves after one under half full (bounded by MAX_READ_BUFFER). An event
 * may yield several results (read, then write, then error): its flags are
 * cleared one by one and the poll returns after each result. A socket
 * freed while later events of the same batch point to it has them cleared.
 *
 * Writes. Sent at once when nothing is queued; what the kernel refuses is
 * queued on the high list (normal sends) or the low list (low priority,
 * sent only when the high list is empty; a low buffer that was partly sent
 * moves to the head of the high list so it leaves whole). wb_size counts
 * the bytes queued; when it reaches 1 MB, then 2, 4, 8 ... MB, the owner
 * gets a WARNING (KB queued), and WARNING 0 once the queue drains.
 *
 * Closing. close: at once when nothing is queued; otherwise the socket
 * keeps sending (reads are discarded so the final close sends FIN, not RST)
 * and CLOSE is reported when the queue drains. shutdown: at once, output
 * dropped. A peer closing while output is queued: CLOSE is reported at once
 * and the socket drains in the background, then is freed without another
 * event. Read and write errors report ERROR (strerror text) and free it.
 *
 * Descriptor exhaustion. accept failing with EMFILE/ENFILE would leave the
 * listener readable forever. The server keeps a reserve fd (/dev/null): it
 * closes it, accepts and closes the connection, and reopens it, so each
 * wake-up drains one pending connection; a NOTICE line (at most one per
 * second) reports the drops. If the reserve cannot be had, the listener
 * rests for THROTTLE_MS before accepting again.
 *
 * Flow control. Reading a TCP connection stops for two independent
 * reasons that compose: the owner paused it (reading == false, owner's
 * pause/start), or the host paused its flow (flow_paused) because the
 * service consuming its data is behind. The socket is read only when the
 * owner wants input and no flow pause holds. A flow pause is made on the
 * poll thread itself, between two polls (socket_server_flow_pause, right
 * after the host delivered a DATA result), and is tagged with a key (an
 * opaque value: skynet uses the handle of the service that is behind);
 * socket_server_flow_resume(key), a request from any thread, lifts every
 * flow pause with that key. Flow-paused sockets sit on a doubly linked
 * list (flow_head), so a resume walks only the paused sockets and a freed
 * socket leaves the list in O(1); with nothing paused nothing of this
 * runs. Each socket names its consumer (0: the owner), which the server
 * only carries into results for the host; changing the consumer, or the
 * owner through start, lifts the socket's flow pause (the host decides
 * again on the next DATA). Only connected TCP sockets are flow-paused.
 * Counters: each socket's flow_pauses and the server's total, for
 * statistics and tests.
 *
 * Output limit. With a limit set (bytes, 0 = none), a send that leaves a
 * TCP socket with more than that many bytes queued closes it at once
 * (queued output dropped): the owner gets CLOSE and the next poll returns
 * a NOTICE naming the peer and the limit (one log line). The WARNING
 * events before it fire at their thresholds as usual.
 *
 * Virtual time: with an idle callback the poll thread first waits up to
 * IDLE_GRACE_MS for an event, then marks itself idle and calls the callback
 * before it blocks. Queued commands are counted (cmd_pending) from before
 * they are queued until they ran, so a command in flight is never mistaken
 * for idleness. The grace covers work the kernel finishes a little later
 * (softirq deferred to ksoftirqd); in this mode every TCP socket also gets
 * TCP_NODELAY, since Nagle's algorithm holds a small segment until the
 * peer's delayed ACK (40 ms or more) while the node would look idle.
 *
 * Locks: ss->lock (command list) and each slot's lock (its name, read by
 * socket_server_info) are spinlocks, never held together, never across a
 * syscall. Units: times in the caller's clock (centiseconds for skynet).
 *
 * Dependencies: none above it. This file, socket_server.h and the two
 * header-only primitives it uses (atomic.h, spinlock.h: they include only
 * system headers) form a small event library that builds and runs in
 * another program unchanged (test_socket_alone builds it with nothing else
 * of the runtime). What it needs from its host comes through
 * struct socket_server_hooks (allocator, clock); it logs nothing itself:
 * errors are return codes and ERROR results, and anything worth a log line
 * is a NOTICE result.
 */
#define _GNU_SOURCE // accept4
#include "socket_server.h"

#include "atomic.h"
#include "spinlock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_EVENT        64
#define MIN_READ_BUFFER  64
#define MAX_READ_BUFFER  (1024 * 1024)
#define WARNING_SIZE     (1024 * 1024)
#define MAX_UDP_PACKAGE  65535
#define ERROR_TEXT_MAX   128
#define DEFAULT_BACKLOG  511 // a listen without one, unless set (bursts of connects must not retry)
#define THROTTLE_MS      100
#define NOTICE_PERIOD_MS 1000
#define ID_MASK          0x7fffffff
#define CONNECT_ADDR_MAX 16 // addresses of one host name a connect may try
/*
 * Virtual time: how long the socket thread must see no event before the
 * node may count as idle. Sanitizer builds run several times slower, so a
 * loopback round trip can outlast the normal grace there.
 */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__) || defined(SKYNET_TSAN)
#define IDLE_GRACE_MS 50
#else
#define IDLE_GRACE_MS 10
#endif
#define NONE (-1) // a step that produced no result

enum socket_state {
	SOCKET_INVALID = 0,
	SOCKET_RESERVE,    // claimed; its creating request is on the way
	SOCKET_PLISTEN,    // listening, not accepting until started
	SOCKET_LISTEN,     // accepting (unless paused)
	SOCKET_CONNECTING, // TCP connect in progress
	SOCKET_CONNECTED,  // TCP or UDP, reading unless paused
	SOCKET_PACCEPT,    // accepted, not started
	SOCKET_BIND,       // a foreign fd (stdin)
};

enum socket_protocol {
	PROTO_TCP,
	PROTO_UDP,
	PROTO_UDPV6,
	PROTO_FD, // read/write instead of recv/send
};

/* socket_info flags, mirrored for socket_server_info. */
#define INFO_READING 1
#define INFO_WRITING 2
#define INFO_CLOSING 4
#define INFO_UDP     8
#define INFO_FLOW    16 // flow-paused

union sockaddr_all {
	struct sockaddr s;
	struct sockaddr_in v4;
	struct sockaddr_in6 v6;
	struct sockaddr_storage any;
};

struct write_buffer {
	struct write_buffer *next;
	char *buffer; // owned
	char *ptr;    // the first byte not sent yet
	size_t sz;    // bytes left from ptr
	uint8_t addr_sz;
	uint8_t udp_address[SKYNET_SOCKET_UDP_ADDRESS_MAX]; // UDP: destination (0 bytes: connected)
};

struct wb_list {
	struct write_buffer *head; // owned
	struct write_buffer *tail;
};

struct socket {
	/* Read by other threads (atomics), written by the poll thread or a reserving worker. */
	ATOM_INT type; // enum socket_state
	ATOM_INT id;
	uintptr_t opaque; // atomic: the owner
	ATOM_INT info_flags;
	ATOM_U64 read_bytes;
	ATOM_U64 write_bytes;
	ATOM_U64 rtime;
	ATOM_U64 wtime;
	ATOM_SIZET wb_size;   // bytes queued on high + low
	uintptr_t consumer;   // atomic: the service consuming its data (0: the owner)
	ATOM_U64 flow_pauses; // flow pauses since it opened
	struct spinlock lock; // covers name
	char name[64];
	/* Poll thread only. */
	int fd;
	int protocol;     // enum socket_protocol
	uint32_t events;  // epoll mask registered now (0: not registered)
	bool reading;     // the owner wants input (not paused)
	bool closing;     // close requested: free once the queue drains
	bool told_close;  // the owner already got CLOSE: no more events
	bool throttled;   // listener resting for lack of fds
	int read_size;    // next read buffer size
	size_t warn_size; // last warning threshold passed (0: none)
	bool flow_paused; // not read until socket_server_flow_resume(flow_key)
	uintptr_t flow_key;
	struct socket *flow_prev; // the list of flow-paused sockets (ss->flow_head)
	struct socket *flow_next;
	struct wb_list high;
	struct wb_list low;
	struct socket *throttle_next;
};

enum request_kind {
	REQ_LISTEN,
	REQ_CONNECT,
	REQ_BIND,
	REQ_UDP,
	REQ_START,
	REQ_PAUSE,
	REQ_CLOSE,
	REQ_SHUTDOWN,
	REQ_NODELAY,
	REQ_SEND,
	REQ_SEND_LOW,
	REQ_UDP_CONNECT,
	REQ_CONSUMER,
	REQ_FLOW_RESUME,
	REQ_EXIT,
};

struct request {
	struct request *next;
	int kind;
	int id;
	uintptr_t opaque;         // the caller; CONSUMER: the consumer; FLOW_RESUME: the key
	int fd;                   // LISTEN, BIND, UDP
	int protocol;             // UDP
	union sockaddr_all *peer; // CONNECT: addresses to try in order, owned
	int peer_n;               // CONNECT: entries in peer
	const char *fail;         // CONNECT: why the name did not resolve (static text), or NULL
	char *buffer;             // SEND, owned
	size_t sz;                // SEND
	uint8_t addr_sz;          // SEND (UDP), UDP_CONNECT
	uint8_t address[SKYNET_SOCKET_UDP_ADDRESS_MAX];
};

struct event {
	struct socket *s; // NULL once handled or freed
	uint32_t flags;   // epoll flags not handled yet
};

struct socket_server {
	int epoll_fd;
	int event_fd;   // written when the request list becomes non-empty
	int reserve_fd; // spare descriptor for EMFILE on accept, or -1
	ATOM_UINT alloc_id;
	ATOM_U64 time;
	ATOM_SIZET output_limit; // bytes queued on a TCP socket before it is closed (0: no limit)
	ATOM_INT listen_backlog; // backlog of a listen that gives none (0: DEFAULT_BACKLOG)
	ATOM_U64 flow_pauses;    // flow pauses since the server started
	struct socket_server_hooks hooks; // allocator and clock: set at create, then read-only
	/* The request list. */
	struct spinlock lock; // covers cmd_head, cmd_tail
	struct request *cmd_head;
	struct request *cmd_tail;
	ATOM_INT cmd_pending; // requests queued or taken and not run yet
	/* Poll thread only. */
	struct request *run_head; // taken from the list, run in order
	bool check_cmd;           // the eventfd fired: take the list
	int event_n;
	int event_index;
	struct event ev[MAX_EVENT];
	socket_server_idle_cb idle_cb;
	ATOM_INT idle;
	struct socket *throttled; // listeners resting, linked by throttle_next
	uint64_t throttle_until_ms;
	uint64_t notice_ms;       // last NOTICE about dropped connections
	unsigned dropped;         // connections dropped since that NOTICE
	struct socket *flow_head; // flow-paused sockets, linked by flow_next
	bool notice_pending;      // notice is the next result (see the output limit)
	char notice[256];
	char text[256]; // text of the last result
	uint8_t udp_address[SKYNET_SOCKET_UDP_ADDRESS_MAX];
	uint8_t udp_buffer[MAX_UDP_PACKAGE];
	struct socket slot[SKYNET_SOCKET_MAX];
};

/* ---- helpers ------------------------------------------------------------ */

static uint64_t
monotonic_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static inline struct socket *
slot_of(struct socket_server *ss, int id) {
	return &ss->slot[(unsigned)id % SKYNET_SOCKET_MAX];
}

/* The live socket with this id, or NULL (stale, free or only reserved). */
static struct socket *
live_socket(struct socket_server *ss, int id) {
	if (id < 0)
		return NULL;
	struct socket *s = slot_of(ss, id);
	int type = ATOM_LOAD(&s->type);
	if (type == SOCKET_INVALID || type == SOCKET_RESERVE || ATOM_LOAD(&s->id) != id)
		return NULL;
	return s;
}

/*
 * A quick check from a caller thread (a socket still being set up counts):
 * the poll thread checks again when it runs the request.
 */
static bool
may_use(struct socket_server *ss, int id) {
	if (id < 0)
		return false;
	struct socket *s = slot_of(ss, id);
	return ATOM_LOAD(&s->type) != SOCKET_INVALID && ATOM_LOAD(&s->id) == id;
}

/* The reserved slot awaiting its creating request, or NULL. */
static struct socket *
reserved_socket(struct socket_server *ss, int id) {
	struct socket *s = slot_of(ss, id);
	if (ATOM_LOAD(&s->type) != SOCKET_RESERVE || ATOM_LOAD(&s->id) != id)
		return NULL;
	return s;
}

static int
reserve_id(struct socket_server *ss) {
	for (int i = 0; i < SKYNET_SOCKET_MAX; i++) {
		int id = (int)((ATOM_FINC(&ss->alloc_id) + 1) & ID_MASK);
		struct socket *s = slot_of(ss, id);
		if (ATOM_LOAD(&s->type) == SOCKET_INVALID &&
		    ATOM_CAS(&s->type, SOCKET_INVALID, SOCKET_RESERVE)) {
			ATOM_STORE(&s->id, id);
			return id;
		}
	}
	return SOCKET_SERVER_EFULL;
}

/* A worker gives back a slot it reserved but could not use. */
static void
unreserve(struct socket_server *ss, int id) {
	ATOM_STORE(&slot_of(ss, id)->type, SOCKET_INVALID);
}

static void
set_nonblocking(int fd) {
	int flags = fcntl(fd, F_GETFL, 0);
	if (flags >= 0)
		(void)fcntl(fd, F_SETFL, flags | O_NONBLOCK); // a blocking fd still works, slowly
}

static void
set_nodelay(int fd) {
	int on = 1;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on)); // best effort
}

/* Options of every new TCP connection. */
static void
tune_stream(struct socket_server *ss, int fd) {
	int on = 1;
	(void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on)); // best effort
	if (ss->idle_cb != NULL)
		set_nodelay(fd); // see the top comment: virtual time
}

/* "ip" or "ip:port" ("[ip]:port" for IPv6) of sa into buf; "" for other families. */
static void
format_address(const union sockaddr_all *sa, char *buf, size_t sz, bool with_port) {
	char ip[INET6_ADDRSTRLEN];
	int port;
	bool v6 = sa->s.sa_family == AF_INET6;
	if (sa->s.sa_family == AF_INET) {
		inet_ntop(AF_INET, &sa->v4.sin_addr, ip, sizeof(ip));
		port = ntohs(sa->v4.sin_port);
	} else if (v6) {
		inet_ntop(AF_INET6, &sa->v6.sin6_addr, ip, sizeof(ip));
		port = ntohs(sa->v6.sin6_port);
	} else {
		buf[0] = '\0';
		return;
	}
	if (!with_port)
		snprintf(buf, sz, "%s", ip);
	else if (v6)
		snprintf(buf, sz, "[%s]:%d", ip, port);
	else
		snprintf(buf, sz, "%s:%d", ip, port);
}

int
socket_server_encode_address(const void *p, uint8_t *out) {
	const union sockaddr_all *sa = p;
	if (sa->s.sa_family == AF_INET) {
		out[0] = 4;
		memcpy(out + 1, &sa->v4.sin_port, 2); // already big-endian
		memcpy(out + 3, &sa->v4.sin_addr, 4);
		return 7;
	}
	if (sa->s.sa_family == AF_INET6) {
		out[0] = 6;
		memcpy(out + 1, &sa->v6.sin6_port, 2);
		memcpy(out + 3, &sa->v6.sin6_addr, 16);
		return 19;
	}
	return 0;
}

int
socket_server_address_size(const uint8_t *addr, size_t sz) {
	if (sz >= 7 && addr[0] == 4)
		return 7;
	if (sz >= 19 && addr[0] == 6)
		return 19;
	return 0;
}

static socklen_t
decode_address(const uint8_t *addr, int sz, union sockaddr_all *sa) {
	memset(sa, 0, sizeof(*sa));
	if (sz == 7 && addr[0] == 4) {
		sa->v4.sin_family = AF_INET;
		memcpy(&sa->v4.sin_port, addr + 1, 2);
		memcpy(&sa->v4.sin_addr, addr + 3, 4);
		return sizeof(sa->v4);
	}
	if (sz == 19 && addr[0] == 6) {
		sa->v6.sin6_family = AF_INET6;
		memcpy(&sa->v6.sin6_port, addr + 1, 2);
		memcpy(&sa->v6.sin6_addr, addr + 3, 16);
		return sizeof(sa->v6);
	}
	return 0;
}

static void
set_name(struct socket *s, const char *name) {
	SPIN_LOCK(s);
	snprintf(s->name, sizeof(s->name), "%s", name);
	SPIN_UNLOCK(s);
}

static void
set_text(struct socket_server *ss, const char *text) {
	snprintf(ss->text, ERROR_TEXT_MAX + 1, "%s", text);
}

/* ---- epoll registration --------------------------------------------------- */

static bool
wants_read(const struct socket *s) {
	int type = ATOM_LOAD_RELAXED(&s->type); // our own field: only this thread writes it now
	switch (type) {
	case SOCKET_LISTEN:
		return s->reading && !s->throttled;
	case SOCKET_CONNECTED:
	case SOCKET_BIND:
		return (s->reading && !s->flow_paused) || s->closing; // a closing socket discards input
	default:
		return false;
	}
}

static bool
is_udp(const struct socket *s) {
	return s->protocol == PROTO_UDP || s->protocol == PROTO_UDPV6;
}

static bool
has_output(const struct socket *s) {
	return s->high.head != NULL || s->low.head != NULL;
}

/* Register the mask the socket's state calls for. 0, or an errno value. */
static int
update_mask(struct socket_server *ss, struct socket *s) {
	uint32_t want = 0;
	if (wants_read(s))
		want |= EPOLLIN;
	if (ATOM_LOAD_RELAXED(&s->type) == SOCKET_CONNECTING || has_output(s))
		want |= EPOLLOUT;
	int flags = (s->reading ? INFO_READING : 0) | (has_output(s) ? INFO_WRITING : 0) |
	            (s->closing ? INFO_CLOSING : 0) | (is_udp(s) ? INFO_UDP : 0) |
	            (s->flow_paused ? INFO_FLOW : 0);
	ATOM_STORE_RELAXED(&s->info_flags, flags); // statistics only: socket_server_info
	if (want == s->events)
		return 0;
	struct epoll_event ev = {.events = want, .data.ptr = s};
	int op = s->events == 0 ? EPOLL_CTL_ADD : (want == 0 ? EPOLL_CTL_DEL : EPOLL_CTL_MOD);
	if (epoll_ctl(ss->epoll_fd, op, s->fd, &ev) != 0)
		return errno;
	s->events = want;
	return 0;
}

/* ---- flow control ---------------------------------------------------------- */

static void
flow_link(struct socket_server *ss, struct socket *s, uintptr_t key) {
	s->flow_paused = true;
	s->flow_key = key;
	s->flow_prev = NULL;
	s->flow_next = ss->flow_head;
	if (ss->flow_head)
		ss->flow_head->flow_prev = s;
	ss->flow_head = s;
}

static void
flow_unlink(struct socket_server *ss, struct socket *s) {
	if (!s->flow_paused)
		return;
	if (s->flow_prev)
		s->flow_prev->flow_next = s->flow_next;
	else
		ss->flow_head = s->flow_next;
	if (s->flow_next)
		s->flow_next->flow_prev = s->flow_prev;
	s->flow_prev = s->flow_next = NULL;
	s->flow_paused = false;
	s->flow_key = 0;
}

/* Lift the flow pause of s, if any, and read again if the owner wants to. */
static void
flow_lift(struct socket_server *ss, struct socket *s) {
	if (!s->flow_paused)
		return;
	flow_unlink(ss, s);
	(void)update_mask(ss, s); // a failure shows up on the next event of the fd, never a spin
}

static void
run_flow_resume(struct socket_server *ss, uintptr_t key) {
	struct socket *s = ss->flow_head;
	while (s) {
		struct socket *next = s->flow_next;
		if (s->flow_key == key)
			flow_lift(ss, s);
		s = next;
	}
}

bool
socket_server_flow_pause(struct socket_server *ss, int id, uintptr_t key) {
	struct socket *s = live_socket(ss, id);
	if (s == NULL || s->flow_paused || s->closing || s->protocol != PROTO_TCP ||
	    ATOM_LOAD_RELAXED(&s->type) != SOCKET_CONNECTED) // our own field
		return false;
	flow_link(ss, s, key);
	ATOM_FADD_RELAXED(&s->flow_pauses, 1);  // statistics only
	ATOM_FADD_RELAXED(&ss->flow_pauses, 1); // statistics only
	(void)update_mask(ss, s); // a failure shows up on the next event of the fd, never a spin
	return true;
}

uint64_t
socket_server_flow_pauses(struct socket_server *ss) {
	return ATOM_LOAD_RELAXED(&ss->flow_pauses); // statistics only
}

/* ---- freeing -------------------------------------------------------------- */

static void
free_wb_list(struct socket_server *ss, struct socket *s, struct wb_list *list) {
	struct write_buffer *wb = list->head;
	while (wb) {
		struct write_buffer *next = wb->next;
		ATOM_FSUB(&s->wb_size, wb->sz);
		ss->hooks.free(wb->buffer);
		ss->hooks.free(wb);
		wb = next;
	}
	list->head = list->tail = NULL;
}

/* Forget events of s still waiting in the current batch. */
static void
clear_events(struct socket_server *ss, struct socket *s) {
	for (int i = ss->event_index; i < ss->event_n; i++) {
		if (ss->ev[i].s == s) {
			ss->ev[i].s = NULL;
			ss->ev[i].flags = 0;
		}
	}
}

static void
unthrottle(struct socket_server *ss, struct socket *s) {
	if (!s->throttled)
		return;
	struct socket **p = &ss->throttled;
	while (*p != s)
		p = &(*p)->throttle_next;
	*p = s->throttle_next;
	s->throttle_next = NULL;
	s->throttled = false;
}

/* Close the fd, drop the queues and make the slot free. */
static void
free_socket(struct socket_server *ss, struct socket *s) {
	if (s->events != 0) {
		struct epoll_event ev = {0};
		(void)epoll_ctl(ss->epoll_fd, EPOLL_CTL_DEL, s->fd, &ev); // close() removes it anyway
	}
	if (s->fd >= 0)
		(void)close(s->fd); // nothing to do on failure
	free_wb_list(ss, s, &s->high);
	free_wb_list(ss, s, &s->low);
	clear_events(ss, s);
	unthrottle(ss, s);
	flow_unlink(ss, s);
	ATOM_STORE(&s->consumer, 0);
	ATOM_STORE_RELAXED(&s->flow_pauses, 0); // statistics only
	SPIN_LOCK(s);
	s->name[0] = '\0';
	SPIN_UNLOCK(s);
	s->fd = -1;
	s->events = 0;
	s->reading = s->closing = s->told_close = false;
	s->warn_size = 0;
	ATOM_STORE_RELAXED(&s->info_flags, 0); // statistics only
	ATOM_STORE(&s->type, SOCKET_INVALID);  // last: publishes the reset slot to reserve_id
}

/* Fill a result for s. */
static int
result_of(struct socket *s, struct socket_message *result, int type, int ud, char *data) {
	result->id = ATOM_LOAD(&s->id);
	result->opaque = ATOM_LOAD(&s->opaque);
	uintptr_t consumer = ATOM_LOAD(&s->consumer);
	result->consumer = consumer != 0 ? consumer : result->opaque;
	result->ud = ud;
	result->data = data;
	result->udp_address = NULL;
	result->udp_address_sz = 0;
	return type;
}

static int
report_close(struct socket_server *ss, struct socket *s, struct socket_message *result) {
	bool told = s->told_close;
	result_of(s, result, SKYNET_SOCKET_TYPE_CLOSE, 0, NULL);
	free_socket(ss, s);
	return told ? NONE : SKYNET_SOCKET_TYPE_CLOSE;
}

static int
report_error(struct socket_server *ss, struct socket *s, struct socket_message *result,
             const char *text) {
	bool told = s->told_close;
	set_text(ss, text);
	result_of(s, result, SKYNET_SOCKET_TYPE_ERROR, 0, ss->text);
	free_socket(ss, s);
	return told ? NONE : SKYNET_SOCKET_TYPE_ERROR;
}

/* An event for an id that is not open: goes to whoever asked. */
static int
report_stale(struct socket_server *ss, const struct request *r, struct socket_message *result,
             int type) {
	result->id = r->id;
	result->opaque = r->opaque;
	result->consumer = r->opaque;
	result->ud = 0;
	result->data = NULL;
	result->udp_address = NULL;
	result->udp_address_sz = 0;
	if (type == SKYNET_SOCKET_TYPE_ERROR) {
		set_text(ss, "invalid socket");
		result->data = ss->text;
	}
	return type;
}

/* ---- writing -------------------------------------------------------------- */

static ssize_t
write_fd(struct socket *s, const void *p, size_t sz) {
	if (s->protocol == PROTO_FD)
		return write(s->fd, p, sz);
	return send(s->fd, p, sz, MSG_NOSIGNAL);
}

static ssize_t
write_datagram(struct socket *s, const struct write_buffer *wb) {
	if (wb->addr_sz == 0)
		return send(s->fd, wb->ptr, wb->sz, MSG_NOSIGNAL);
	union sockaddr_all sa;
	socklen_t len = decode_address(wb->udp_address, wb->addr_sz, &sa);
	return sendto(s->fd, wb->ptr, wb->sz, MSG_NOSIGNAL, &sa.s, len);
}

static void
count_write(struct socket_server *ss, struct socket *s, size_t n) {
	ATOM_FADD_RELAXED(&s->write_bytes, n); // statistics only
	ATOM_STORE_RELAXED(&s->wtime, ATOM_LOAD_RELAXED(&ss->time));
}

/*
 * Send from the head of list until the kernel refuses. Returns 0 (the list
 * may still hold data), or the errno of a stream write that failed.
 */
static int
send_list(struct socket_server *ss, struct socket *s, struct wb_list *list) {
	while (list->head) {
		struct write_buffer *wb = list->head;
		ssize_t n = is_udp(s) ? write_datagram(s, wb) : write_fd(s, wb->ptr, wb->sz);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			if (!is_udp(s))
				return errno;
			n = (ssize_t)wb->sz; // a datagram that cannot go is dropped
		} else {
			count_write(ss, s, (size_t)n);
		}
		ATOM_FSUB(&s->wb_size, (size_t)n);
		if ((size_t)n < wb->sz) {
			wb->ptr += n;
			wb->sz -= (size_t)n;
			return 0;
		}
		list->head = wb->next;
		ss->hooks.free(wb->buffer);
		ss->hooks.free(wb);
	}
	list->tail = NULL;
	return 0;
}

/* The socket may write: flush high, then low. Returns a result type or NONE. */
static int
flush_output(struct socket_server *ss, struct socket *s, struct socket_message *result) {
	int err = send_list(ss, s, &s->high);
	if (err == 0 && s->high.head == NULL && s->low.head != NULL) {
		err = send_list(ss, s, &s->low);
		struct write_buffer *wb = s->low.head;
		if (err == 0 && wb != NULL && wb->ptr != wb->buffer) {
			// Partly sent: finish it before any later normal send.
			s->low.head = wb->next;
			if (s->low.head == NULL)
				s->low.tail = NULL;
			wb->next = NULL;
			s->high.head = s->high.tail = wb;
		}
	}
	if (err != 0)
		return report_error(ss, s, result, strerror(err));
	if (has_output(s))
		return NONE;
	if (s->closing)
		return report_close(ss, s, result);
	int e = update_mask(ss, s);
	if (e != 0)
		return report_error(ss, s, result, strerror(e));
	if (s->warn_size > 0) {
		s->warn_size = 0;
		return result_of(s, result, SKYNET_SOCKET_TYPE_WARNING, 0, NULL);
	}
	return NONE;
}

static void
append_wb(struct wb_list *list, struct write_buffer *wb) {
	wb->next = NULL;
	if (list->tail)
		list->tail->next = wb;
	else
		list->head = wb;
	list->tail = wb;
}

/* Queue the unsent part of buffer (owned) starting at offset. */
static void
queue_output(struct socket_server *ss, struct socket *s, struct wb_list *list, char *buffer,
             size_t offset, size_t sz, const struct request *r) {
	struct write_buffer *wb = ss->hooks.malloc(sizeof(*wb));
	wb->buffer = buffer;
	wb->ptr = buffer + offset;
	wb->sz = sz - offset;
	wb->addr_sz = r->addr_sz;
	if (r->addr_sz > 0)
		memcpy(wb->udp_address, r->address, r->addr_sz);
	append_wb(list, wb);
	ATOM_FADD(&s->wb_size, wb->sz);
}

/* After output was queued: a WARNING when a new threshold (1, 2, 4 ... MB) was passed. */
static int
check_warning(struct socket *s, struct socket_message *result) {
	size_t pending = ATOM_LOAD(&s->wb_size);
	size_t next = s->warn_size ? s->warn_size * 2 : WARNING_SIZE;
	if (pending < next)
		return NONE;
	while (next * 2 <= pending)
		next *= 2;
	s->warn_size = next;
	size_t kb = pending / 1024;
	return result_of(s, result, SKYNET_SOCKET_TYPE_WARNING, kb > INT32_MAX ? INT32_MAX : (int)kb,
	                 NULL);
}

static bool
can_send(const struct socket *s) {
	if (s->closing)
		return false;
	switch (ATOM_LOAD_RELAXED(&s->type)) { // our own field
	case SOCKET_CONNECTED:
	case SOCKET_CONNECTING:
	case SOCKET_PACCEPT:
	case SOCKET_BIND:
		return true;
	default:
		return false;
	}
}

/* Try to write now; returns bytes the kernel took, or -errno on a stream error. */
static ssize_t
write_now(struct socket *s, const struct request *r) {
	for (;;) {
		ssize_t n;
		if (is_udp(s)) {
			struct write_buffer wb = {.ptr = r->buffer, .sz = r->sz, .addr_sz = r->addr_sz};
			memcpy(wb.udp_address, r->address, sizeof(wb.udp_address));
			n = write_datagram(s, &wb);
		} else {
			n = write_fd(s, r->buffer, r->sz);
		}
		if (n >= 0)
			return n;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		if (is_udp(s))
			return (ssize_t)r->sz; // dropped
		return -errno;
	}
}

/*
 * More than limit bytes wait for s: close it now, output dropped. The
 * owner gets CLOSE now and the log line (NOTICE) is the next result.
 */
static int
output_overflow(struct socket_server *ss, struct socket *s, struct socket_message *result,
                size_t limit) {
	char name[64];
	SPIN_LOCK(s);
	memcpy(name, s->name, sizeof(name));
	SPIN_UNLOCK(s);
	snprintf(ss->notice, sizeof(ss->notice),
	         "warn: socket: output limit reached, connection closed id=%d address=%s "
	         "limit=%zu pending=%zu",
	         ATOM_LOAD(&s->id), name[0] ? name : "?", limit, ATOM_LOAD(&s->wb_size));
	ss->notice_pending = true;
	return report_close(ss, s, result);
}

static int
run_send(struct socket_server *ss, struct request *r, struct socket_message *result, bool low) {
	struct socket *s = live_socket(ss, r->id);
	if (s == NULL || !can_send(s))
		return NONE;                        // the caller frees r->buffer
	int type = ATOM_LOAD_RELAXED(&s->type); // our own field
	if (!has_output(s) && (type == SOCKET_CONNECTED || type == SOCKET_BIND)) {
		ssize_t n = write_now(s, r);
		if (n < 0)
			return report_error(ss, s, result, strerror((int)-n));
		if (n > 0)
			count_write(ss, s, (size_t)n);
		if ((size_t)n == r->sz)
			return NONE;
		// The rest goes first, whatever its priority: it must leave whole.
		queue_output(ss, s, &s->high, r->buffer, is_udp(s) ? 0 : (size_t)n, r->sz, r);
	} else {
		queue_output(ss, s, low ? &s->low : &s->high, r->buffer, 0, r->sz, r);
	}
	r->buffer = NULL;                                    // now the queue's
	size_t limit = ATOM_LOAD_RELAXED(&ss->output_limit); // a setting: no ordering needed
	if (limit > 0 && s->protocol == PROTO_TCP && ATOM_LOAD(&s->wb_size) > limit)
		return output_overflow(ss, s, result, limit);
	int err = update_mask(ss, s);
	if (err != 0)
		return report_error(ss, s, result, strerror(err));
	return check_warning(s, result);
}

/* ---- reading -------------------------------------------------------------- */

static void
count_read(struct socket_server *ss, struct socket *s, size_t n) {
	ATOM_FADD_RELAXED(&s->read_bytes, n); // statistics only
	ATOM_STORE_RELAXED(&s->rtime, ATOM_LOAD_RELAXED(&ss->time));
}

/* The peer ended its side. */
static int
peer_closed(struct socket_server *ss, struct socket *s, struct socket_message *result) {
	if (!has_output(s) || s->told_close)
		return report_close(ss, s, result);
	// Tell the owner now; finish sending in the background, then free silently.
	s->told_close = true;
	s->closing = true;
	s->reading = false;
	int err = update_mask(ss, s);
	if (err != 0)
		return report_error(ss, s, result, strerror(err));
	return result_of(s, result, SKYNET_SOCKET_TYPE_CLOSE, 0, NULL);
}

static int
read_stream(struct socket_server *ss, struct socket *s, struct socket_message *result) {
	int sz = s->read_size;
	char *buffer = ss->hooks.malloc((size_t)sz);
	ssize_t n = s->protocol == PROTO_FD ? read(s->fd, buffer, (size_t)sz)
	                                    : recv(s->fd, buffer, (size_t)sz, 0);
	if (n <= 0) {
		int err = n < 0 ? errno : 0;
		ss->hooks.free(buffer);
		if (n == 0)
			return peer_closed(ss, s, result);
		if (err == EINTR || err == EAGAIN || err == EWOULDBLOCK)
			return NONE;
		return report_error(ss, s, result, strerror(err));
	}
	count_read(ss, s, (size_t)n);
	if (s->closing) { // nobody wants it any more
		ss->hooks.free(buffer);
		return NONE;
	}
	if (n == sz && sz < MAX_READ_BUFFER) {
		s->read_size = sz * 2;
	} else if (n < sz / 2 && sz > MIN_READ_BUFFER) {
		s->read_size = sz / 2;
		if (sz >= 4096) // a large, mostly empty buffer: give the slack back
			buffer = ss->hooks.realloc(buffer, (size_t)n);
	}
	return result_of(s, result, SKYNET_SOCKET_TYPE_DATA, (int)n, buffer);
}

static int
read_datagram(struct socket_server *ss, struct socket *s, struct socket_message *result) {
	union sockaddr_all sa;
	socklen_t len = sizeof(sa);
	ssize_t n = recvfrom(s->fd, ss->udp_buffer, MAX_UDP_PACKAGE, 0, &sa.s, &len);
	if (n < 0)
		return NONE; // EAGAIN, or an ICMP error of an earlier send: not fatal for UDP
	count_read(ss, s, (size_t)n);
	char *data = ss->hooks.malloc((size_t)n);
	memcpy(data, ss->udp_buffer, (size_t)n);
	result_of(s, result, SKYNET_SOCKET_TYPE_UDP, (int)n, data);
	result->udp_address = ss->udp_address;
	result->udp_address_sz = socket_server_encode_address(&sa, ss->udp_address);
	return SKYNET_SOCKET_TYPE_UDP;
}

/* ---- accepting ------------------------------------------------------------ */

static void
throttle(struct socket_server *ss, struct socket *s) {
	if (s->throttled)
		return;
	s->throttled = true;
	s->throttle_next = ss->throttled;
	ss->throttled = s;
	ss->throttle_until_ms = monotonic_ms() + THROTTLE_MS;
	(void)update_mask(ss, s); // a failure leaves it polled: we retry next time
}

static int
drop_notice(struct socket_server *ss, struct socket *s, struct socket_message *result,
            const char *why) {
	ss->dropped++;
	uint64_t now = monotonic_ms();
	if (ss->notice_ms != 0 && now - ss->notice_ms < NOTICE_PERIOD_MS)
		return NONE;
	ss->notice_ms = now;
	snprintf(ss->text, sizeof(ss->text),
	         "warn: socket: accept dropped connections listener=%d count=%u reason=%s",
	         ATOM_LOAD(&s->id), ss->dropped, why);
	ss->dropped = 0;
	result_of(s, result, SOCKET_SERVER_NOTICE, 0, ss->text);
	return SOCKET_SERVER_NOTICE;
}

/* accept failed for lack of descriptors: drain one connection, or rest. */
static int
out_of_fds(struct socket_server *ss, struct socket *s, struct socket_message *result, int err) {
	if (ss->reserve_fd >= 0) {
		(void)close(ss->reserve_fd); // frees one descriptor for the accept below
		ss->reserve_fd = -1;
		int fd = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			(void)close(fd); // the peer sees the connection closed
		ss->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
	if (ss->reserve_fd < 0)
		throttle(ss, s);
	return drop_notice(ss, s, result, strerror(err));
}

static int
accept_one(struct socket_server *ss, struct socket *s, struct socket_message *result) {
	union sockaddr_all sa;
	socklen_t len = sizeof(sa);
	int fd = accept4(s->fd, &sa.s, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0) {
		int err = errno;
		if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM)
			return out_of_fds(ss, s, result, err);
		return NONE; // EAGAIN, ECONNABORTED, EINTR ...: try again on the next event
	}
	if (ss->reserve_fd < 0) // give it back first: the next EMFILE needs it
		ss->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int id = reserve_id(ss);
	if (id < 0) {
		(void)close(fd); // no slot for it
		return drop_notice(ss, s, result, "socket table full");
	}
	struct socket *ns = slot_of(ss, id);
	tune_stream(ss, fd);
	ns->fd = fd;
	ns->protocol = PROTO_TCP;
	ns->read_size = MIN_READ_BUFFER;
	ATOM_STORE(&ns->opaque, ATOM_LOAD(&s->opaque));
	char name[64];
	format_address(&sa, name, sizeof(name), true);
	set_name(ns, name);
	ATOM_STORE(&ns->type, SOCKET_PACCEPT);
	set_text(ss, name);
	return result_of(s, result, SKYNET_SOCKET_TYPE_ACCEPT, id, ss->text);
}

/* ---- connecting ----------------------------------------------------------- */

static void
setup_socket(struct socket *s, int fd, int protocol, uintptr_t opaque) {
	s->fd = fd;
	s->protocol = protocol;
	s->read_size = MIN_READ_BUFFER;
	s->reading = true;
	ATOM_STORE(&s->opaque, opaque);
}

/* The socket is connected: report CONNECT with the peer ip. */
static int
connected(struct socket_server *ss, struct socket *s, struct socket_message *result) {
	ATOM_STORE(&s->type, SOCKET_CONNECTED);
	int err = update_mask(ss, s);
	if (err != 0)
		return report_error(ss, s, result, strerror(err));
	union sockaddr_all sa;
	socklen_t len = sizeof(sa);
	if (getpeername(s->fd, &sa.s, &len) != 0)
		return report_error(ss, s, result, strerror(errno));
	char name[64];
	format_address(&sa, name, sizeof(name), true);
	set_name(s, name);
	format_address(&sa, ss->text, sizeof(ss->text), false);
	return result_of(s, result, SKYNET_SOCKET_TYPE_CONNECT, 0, ss->text);
}

static socklen_t
address_length(const union sockaddr_all *sa) {
	return sa->s.sa_family == AF_INET6 ? sizeof(sa->v6) : sizeof(sa->v4);
}

/* The connect could not even start: ERROR with text, and the id is free again. */
static int
connect_failed(struct socket_server *ss, struct socket *s, int id, struct socket_message *result,
               const char *text) {
	set_text(ss, text);
	result_of(s, result, SKYNET_SOCKET_TYPE_ERROR, 0, ss->text);
	unreserve(ss, id);
	return SKYNET_SOCKET_TYPE_ERROR;
}

/*
 * Open a socket to the first address of r->peer that takes a connect at
 * once or starts one. No name lookup here: the caller resolved the list.
 */
static int
run_connect(struct socket_server *ss, struct request *r, struct socket_message *result) {
	struct socket *s = reserved_socket(ss, r->id);
	if (s == NULL)
		return NONE;
	ATOM_STORE(&s->opaque, r->opaque);
	if (r->fail != NULL)
		return connect_failed(ss, s, r->id, result, r->fail);
	int fd = -1;
	int err = EADDRNOTAVAIL; // no address to try
	bool done = false;
	for (int i = 0; i < r->peer_n; i++) {
		const union sockaddr_all *sa = &r->peer[i];
		fd = socket(sa->s.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			err = errno;
			continue;
		}
		tune_stream(ss, fd);
		if (connect(fd, &sa->s, address_length(sa)) == 0) {
			done = true;
			break;
		}
		err = errno;
		if (err == EINPROGRESS)
			break;
		(void)close(fd); // try the next address
		fd = -1;
	}
	if (fd < 0)
		return connect_failed(ss, s, r->id, result, strerror(err));
	setup_socket(s, fd, PROTO_TCP, r->opaque);
	if (done)
		return connected(ss, s, result);
	ATOM_STORE(&s->type, SOCKET_CONNECTING);
	err = update_mask(ss, s);
	if (err != 0)
		return report_error(ss, s, result, strerror(err));
	return NONE;
}

static int
finish_connect(struct socket_server *ss, struct socket *s, struct socket_message *result) {
	int err = 0;
	socklen_t len = sizeof(err);
	if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
		err = errno;
	if (err != 0)
		return report_error(ss, s, result, strerror(err));
	return connected(ss, s, result);
}

/* ---- other requests ------------------------------------------------------- */

static int
run_listen(struct socket_server *ss, struct request *r, struct socket_message *result) {
	struct socket *s = reserved_socket(ss, r->id);
	if (s == NULL) {
		(void)close(r->fd); // cannot happen: the slot was reserved for it
		return NONE;
	}
	setup_socket(s, r->fd, PROTO_TCP, r->opaque);
	s->reading = false; // until start
	union sockaddr_all sa;
	socklen_t len = sizeof(sa);
	int port = 0;
	ss->text[0] = '\0';
	if (getsockname(s->fd, &sa.s, &len) == 0) {
		char name[64];
		format_address(&sa, name, sizeof(name), true);
		set_name(s, name);
		format_address(&sa, ss->text, sizeof(ss->text), false);
		port = ntohs(sa.s.sa_family == AF_INET6 ? sa.v6.sin6_port : sa.v4.sin_port);
	}
	ATOM_STORE(&s->type, SOCKET_PLISTEN);
	return result_of(s, result, SKYNET_SOCKET_TYPE_CONNECT, port, ss->text);
}

static int
run_bind(struct socket_server *ss, struct request *r, struct socket_message *result) {
	struct socket *s = reserved_socket(ss, r->id);
	if (s == NULL)
		return NONE;
	set_nonblocking(r->fd);
	setup_socket(s, r->fd, PROTO_FD, r->opaque);
	ATOM_STORE(&s->type, SOCKET_BIND);
	int err = update_mask(ss, s);
	if (err != 0)
		return report_error(ss, s, result, strerror(err));
	set_text(ss, "binding");
	return result_of(s, result, SKYNET_SOCKET_TYPE_CONNECT, 0, ss->text);
}

static int
run_udp(struct socket_server *ss, struct request *r, struct socket_message *result) {
	struct socket *s = reserved_socket(ss, r->id);
	if (s == NULL) {
		(void)close(r->fd); // cannot happen: the slot was reserved for it
		return NONE;
	}
	setup_socket(s, r->fd, r->protocol, r->opaque);
	union sockaddr_all sa;
	socklen_t len = sizeof(sa);
	if (getsockname(s->fd, &sa.s, &len) == 0) {
		char name[64];
		format_address(&sa, name, sizeof(name), true);
		set_name(s, name); // the bound address, for netstat
	}
	ATOM_STORE(&s->type, SOCKET_CONNECTED);
	int err = update_mask(ss, s);
	if (err != 0)
		return report_error(ss, s, result, strerror(err));
	return NONE;
}

static int
run_start(struct socket_server *ss, struct request *r, struct socket_message *result) {
	struct socket *s = live_socket(ss, r->id);
	if (s == NULL || s->closing)
		return report_stale(ss, r, result, SKYNET_SOCKET_TYPE_ERROR);
	bool transfer = ATOM_LOAD(&s->opaque) != r->opaque;
	if (transfer) { // a new owner consumes its own data until it names a consumer
		ATOM_STORE(&s->consumer, 0);
		flow_lift(ss, s);
	}
	ATOM_STORE(&s->opaque, r->opaque);
	s->reading = true;
	int type = ATOM_LOAD_RELAXED(&s->type); // our own field
	if (type == SOCKET_PACCEPT) {
		type = SOCKET_CONNECTED;
		ATOM_STORE(&s->type, type);
		transfer = false;
	} else if (type == SOCKET_PLISTEN) {
		type = SOCKET_LISTEN;
		ATOM_STORE(&s->type, type);
		transfer = false;
	}
	int err = update_mask(ss, s);
	if (err != 0)
		return report_error(ss, s, result, strerror(err));
	if (type == SOCKET_CONNECTING)
		return NONE; // CONNECT follows when it connects
	set_text(ss, transfer ? "transfer" : "start");
	return result_of(s, result, SKYNET_SOCKET_TYPE_CONNECT, 0, ss->text);
}

static int
run_pause(struct socket_server *ss, struct request *r, struct socket_message *result) {
	struct socket *s = live_socket(ss, r->id);
	if (s == NULL || !s->reading)
		return NONE;
	s->reading = false;
	int err = update_mask(ss, s);
	if (err != 0)
		return report_error(ss, s, result, strerror(err));
	return NONE;
}

static int
run_close(struct socket_server *ss, struct request *r, struct socket_message *result, bool now) {
	struct socket *s = live_socket(ss, r->id);
	if (s == NULL)
		return report_stale(ss, r, result, SKYNET_SOCKET_TYPE_CLOSE);
	if (now || !has_output(s))
		return report_close(ss, s, result);
	if (s->closing)
		return NONE; // CLOSE comes when the queue drains
	s->closing = true;
	int err = update_mask(ss, s);
	if (err != 0)
		return report_error(ss, s, result, strerror(err));
	return NONE;
}

static void
run_consumer(struct socket_server *ss, struct request *r) {
	struct socket *s = live_socket(ss, r->id);
	if (s == NULL || ATOM_LOAD(&s->consumer) == r->opaque)
		return;
	ATOM_STORE(&s->consumer, r->opaque);
	flow_lift(ss, s); // the host decides again on the next DATA
}

static void
run_nodelay(struct socket_server *ss, struct request *r) {
	struct socket *s = live_socket(ss, r->id);
	if (s != NULL && s->protocol == PROTO_TCP)
		set_nodelay(s->fd);
}

static void
run_udp_connect(struct socket_server *ss, struct request *r) {
	struct socket *s = live_socket(ss, r->id);
	if (s == NULL || !is_udp(s))
		return;
	union sockaddr_all sa;
	socklen_t len = decode_address(r->address, r->addr_sz, &sa);
	if (len > 0)
		(void)connect(s->fd, &sa.s, len); // a mismatched family fails; sends then fail too
}

static int
run_request(struct socket_server *ss, struct request *r, struct socket_message *result) {
	switch (r->kind) {
	case REQ_LISTEN:
		return run_listen(ss, r, result);
	case REQ_CONNECT:
		return run_connect(ss, r, result);
	case REQ_BIND:
		return run_bind(ss, r, result);
	case REQ_UDP:
		return run_udp(ss, r, result);
	case REQ_START:
		return run_start(ss, r, result);
	case REQ_PAUSE:
		return run_pause(ss, r, result);
	case REQ_CLOSE:
		return run_close(ss, r, result, false);
	case REQ_SHUTDOWN:
		return run_close(ss, r, result, true);
	case REQ_NODELAY:
		run_nodelay(ss, r);
		return NONE;
	case REQ_SEND:
		return run_send(ss, r, result, false);
	case REQ_SEND_LOW:
		return run_send(ss, r, result, true);
	case REQ_UDP_CONNECT:
		run_udp_connect(ss, r);
		return NONE;
	case REQ_CONSUMER:
		run_consumer(ss, r);
		return NONE;
	case REQ_FLOW_RESUME:
		run_flow_resume(ss, r->opaque);
		return NONE;
	case REQ_EXIT:
		memset(result, 0, sizeof(*result));
		result->id = -1;
		return SOCKET_SERVER_EXIT;
	default:
		return NONE;
	}
}

/* ---- events --------------------------------------------------------------- */

/* Read, then write, then errors: one step per call (see the top comment). */
static int
handle_stream_event(struct socket_server *ss, struct event *e, struct socket *s,
                    struct socket_message *result) {
	if ((e->flags & (EPOLLIN | EPOLLHUP | EPOLLERR)) && wants_read(s)) {
		// The read itself sees the end of the stream or the error.
		e->flags &= ~(uint32_t)(EPOLLIN | EPOLLHUP | EPOLLERR);
		int type = is_udp(s) ? read_datagram(ss, s, result) : read_stream(ss, s, result);
		if (type != NONE || e->s == NULL)
			return type;
	}
	e->flags &= ~(uint32_t)EPOLLIN; // not wanted any more
	if (e->flags & EPOLLOUT) {
		e->flags &= ~(uint32_t)EPOLLOUT;
		if (has_output(s)) {
			int type = flush_output(ss, s, result);
			if (type != NONE || e->s == NULL)
				return type;
		}
	}
	if (e->flags & (EPOLLHUP | EPOLLERR)) {
		e->flags = 0;
		int err = 0;
		socklen_t len = sizeof(err);
		if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
			err = errno;
		if (is_udp(s))
			return NONE; // reading the error cleared it
		if (err != 0)
			return report_error(ss, s, result, strerror(err));
		return report_close(ss, s, result); // hung up while not reading
	}
	return NONE;
}

static int
handle_event(struct socket_server *ss, struct event *e, struct socket_message *result) {
	struct socket *s = e->s;
	switch (ATOM_LOAD_RELAXED(&s->type)) { // our own field
	case SOCKET_LISTEN:
		e->flags = 0;
		return wants_read(s) ? accept_one(ss, s, result) : NONE;
	case SOCKET_CONNECTING:
		e->flags = 0;
		return finish_connect(ss, s, result);
	case SOCKET_CONNECTED:
	case SOCKET_BIND:
		return handle_stream_event(ss, e, s, result);
	default:
		e->flags = 0; // a stale event
		return NONE;
	}
}

static void
drain_eventfd(struct socket_server *ss) {
	uint64_t n;
	while (read(ss->event_fd, &n, sizeof(n)) < 0 && errno == EINTR)
		;
	ss->check_cmd = true;
}

static int
poll_timeout_ms(struct socket_server *ss) {
	if (ss->throttled == NULL)
		return -1;
	uint64_t now = monotonic_ms();
	if (now >= ss->throttle_until_ms)
		return 0;
	return (int)(ss->throttle_until_ms - now);
}

/* Listeners that rested long enough accept again. */
static void
wake_throttled(struct socket_server *ss) {
	if (ss->throttled == NULL || monotonic_ms() < ss->throttle_until_ms)
		return;
	if (ss->reserve_fd < 0)
		ss->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	while (ss->throttled) {
		struct socket *s = ss->throttled;
		unthrottle(ss, s);
		(void)update_mask(ss, s); // a failure shows up as a stuck listener, never a spin
	}
}

static void
wait_events(struct socket_server *ss) {
	struct epoll_event raw[MAX_EVENT];
	int timeout = poll_timeout_ms(ss);
	int n;
	if (ss->idle_cb != NULL && timeout < 0) {
		n = epoll_wait(ss->epoll_fd, raw, MAX_EVENT, IDLE_GRACE_MS);
		if (n == 0) {
			ATOM_STORE(&ss->idle, 1);
			if (ATOM_LOAD(&ss->cmd_pending) == 0)
				ss->idle_cb();
			n = epoll_wait(ss->epoll_fd, raw, MAX_EVENT, -1);
			ATOM_STORE(&ss->idle, 0);
		}
	} else {
		n = epoll_wait(ss->epoll_fd, raw, MAX_EVENT, timeout);
	}
	if (ss->hooks.clock)
		ATOM_STORE_RELAXED(&ss->time, ss->hooks.clock()); // statistics only
	wake_throttled(ss);
	ss->event_index = 0;
	ss->event_n = 0;
	for (int i = 0; i < n; i++) {
		if (raw[i].data.ptr == NULL) {
			drain_eventfd(ss);
			continue;
		}
		ss->ev[ss->event_n].s = raw[i].data.ptr;
		ss->ev[ss->event_n].flags = raw[i].events;
		ss->event_n++;
	}
}

static void
take_requests(struct socket_server *ss) {
	SPIN_LOCK(ss);
	struct request *list = ss->cmd_head;
	ss->cmd_head = ss->cmd_tail = NULL;
	SPIN_UNLOCK(ss);
	ss->run_head = list; // only called while run_head is empty
}

/* The NOTICE an output overflow left for this poll. */
static int
pending_notice(struct socket_server *ss, struct socket_message *result) {
	ss->notice_pending = false;
	memset(result, 0, sizeof(*result));
	result->id = -1;
	result->data = ss->notice;
	return SOCKET_SERVER_NOTICE;
}

int
socket_server_poll(struct socket_server *ss, struct socket_message *result) {
	for (;;) {
		if (ss->notice_pending)
			return pending_notice(ss, result);
		if (ss->run_head) {
			struct request *r = ss->run_head;
			ss->run_head = r->next;
			int type = run_request(ss, r, result);
			ss->hooks.free(r->peer);
			ss->hooks.free(r->buffer);
			ss->hooks.free(r);
			ATOM_FDEC(&ss->cmd_pending);
			if (type != NONE)
				return type;
			continue;
		}
		if (ss->check_cmd) {
			ss->check_cmd = false;
			take_requests(ss);
			continue;
		}
		if (ss->event_index >= ss->event_n) {
			wait_events(ss);
			continue;
		}
		struct event *e = &ss->ev[ss->event_index];
		int type = NONE;
		if (e->s != NULL && e->flags != 0)
			type = handle_event(ss, e, result);
		if (e->s == NULL || e->flags == 0)
			ss->event_index++;
		if (type != NONE)
			return type;
	}
}

/* ---- requests from any thread --------------------------------------------- */

static struct request *
new_request(struct socket_server *ss, int kind, int id, uintptr_t opaque) {
	struct request *r = ss->hooks.calloc(1, sizeof(*r));
	r->kind = kind;
	r->id = id;
	r->opaque = opaque;
	r->fd = -1;
	return r;
}

static void
send_request(struct socket_server *ss, struct request *r) {
	ATOM_FINC(&ss->cmd_pending); // before it is visible: see is_idle
	SPIN_LOCK(ss);
	bool was_empty = ss->cmd_head == NULL;
	if (ss->cmd_tail)
		ss->cmd_tail->next = r;
	else
		ss->cmd_head = r;
	ss->cmd_tail = r;
	SPIN_UNLOCK(ss);
	if (!was_empty)
		return;
	uint64_t one = 1;
	while (write(ss->event_fd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
}

static void
simple_request(struct socket_server *ss, int kind, uintptr_t opaque, int id) {
	send_request(ss, new_request(ss, kind, id, opaque));
}

void
socket_server_exit(struct socket_server *ss) {
	simple_request(ss, REQ_EXIT, 0, -1);
}

void
socket_server_start(struct socket_server *ss, uintptr_t opaque, int id) {
	simple_request(ss, REQ_START, opaque, id);
}

void
socket_server_pause(struct socket_server *ss, uintptr_t opaque, int id) {
	simple_request(ss, REQ_PAUSE, opaque, id);
}

void
socket_server_close(struct socket_server *ss, uintptr_t opaque, int id) {
	simple_request(ss, REQ_CLOSE, opaque, id);
}

void
socket_server_shutdown(struct socket_server *ss, uintptr_t opaque, int id) {
	simple_request(ss, REQ_SHUTDOWN, opaque, id);
}

void
socket_server_nodelay(struct socket_server *ss, int id) {
	simple_request(ss, REQ_NODELAY, 0, id);
}

void
socket_server_consumer(struct socket_server *ss, int id, uintptr_t consumer) {
	simple_request(ss, REQ_CONSUMER, consumer, id);
}

void
socket_server_flow_resume(struct socket_server *ss, uintptr_t key) {
	simple_request(ss, REQ_FLOW_RESUME, key, -1);
}

void
socket_server_set_output_limit(struct socket_server *ss, size_t bytes) {
	ATOM_STORE(&ss->output_limit, bytes);
}

void
socket_server_set_backlog(struct socket_server *ss, int backlog) {
	ATOM_STORE(&ss->listen_backlog, backlog);
}

static bool
valid_port(int port) {
	return port >= 0 && port <= 65535;
}

/*
 * getaddrinfo for host:port in the calling thread: first as a numeric
 * address (never waits), then, only for a name, through the resolver
 * (may block the caller). Returns 0 or an EAI_ code.
 */
static int
lookup(const char *host, int port, struct addrinfo *hints, struct addrinfo **list) {
	char portstr[16];
	snprintf(portstr, sizeof(portstr), "%d", port);
	int flags = hints->ai_flags | AI_NUMERICSERV;
	hints->ai_flags = flags | AI_NUMERICHOST;
	int status = getaddrinfo(host, portstr, hints, list);
	if (status != EAI_NONAME || host == NULL)
		return status;
	hints->ai_flags = flags;
	return getaddrinfo(host, portstr, hints, list);
}

/* Resolve host:port (numeric or not) for a passive or active socket, in the caller. */
static int
resolve(const char *host, int port, int socktype, bool passive, struct addrinfo **list) {
	struct addrinfo hints = {
	    .ai_family = AF_UNSPEC,
	    .ai_socktype = socktype,
	    .ai_flags = passive ? AI_PASSIVE : 0,
	};
	if (host != NULL && host[0] == '\0')
		host = NULL;
	if (host == NULL && passive)
		host = "0.0.0.0";
	return lookup(host, port, &hints, list);
}

static int
open_listen(const char *host, int port, int backlog, const char **err) {
	struct addrinfo *list = NULL;
	int status = resolve(host, port, SOCK_STREAM, true, &list);
	if (status != 0) {
		*err = gai_strerror(status);
		return -1;
	}
	int fd = socket(list->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail_free_list;
	int on = 1;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0)
		goto fail_close_fd;
	if (bind(fd, list->ai_addr, list->ai_addrlen) != 0)
		goto fail_close_fd;
	if (listen(fd, backlog) != 0)
		goto fail_close_fd;
	freeaddrinfo(list);
	return fd;
fail_close_fd:
	*err = strerror(errno);
	(void)close(fd); // nothing to do on failure
	freeaddrinfo(list);
	return -1;
fail_free_list:
	*err = strerror(errno);
	freeaddrinfo(list);
	return -1;
}

int
socket_server_listen(struct socket_server *ss, uintptr_t opaque, const char *host, int port,
                     int backlog, const char **err) {
	const char *why = "bad port";
	if (backlog <= 0) {
		backlog = ATOM_LOAD_RELAXED(&ss->listen_backlog); // a setting: no ordering needed
		if (backlog <= 0)
			backlog = DEFAULT_BACKLOG;
	}
	int fd = valid_port(port) ? open_listen(host, port, backlog, &why) : -1;
	if (fd < 0) {
		if (err)
			*err = why;
		return SOCKET_SERVER_EIO;
	}
	int id = reserve_id(ss);
	if (id < 0) {
		(void)close(fd); // nothing to do on failure
		if (err)
			*err = "socket table full";
		return id;
	}
	struct request *r = new_request(ss, REQ_LISTEN, id, opaque);
	r->fd = fd;
	send_request(ss, r);
	return id;
}

/*
 * The IPv4/IPv6 stream addresses of host:port for a connect, resolved in
 * the calling thread, into r->peer (at most CONNECT_ADDR_MAX, in the
 * resolver's order). Returns NULL, or the resolver's error text (static).
 */
static const char *
resolve_peer(struct socket_server *ss, const char *host, int port, struct request *r) {
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	struct addrinfo *list = NULL;
	int status = lookup(host, port, &hints, &list);
	if (status != 0)
		return gai_strerror(status);
	int n = 0;
	for (struct addrinfo *ai = list; ai != NULL; ai = ai->ai_next)
		n++;
	n = n < CONNECT_ADDR_MAX ? n : CONNECT_ADDR_MAX;
	r->peer = ss->hooks.malloc((size_t)n * sizeof(*r->peer));
	r->peer_n = 0;
	for (struct addrinfo *ai = list; ai != NULL && r->peer_n < n; ai = ai->ai_next) {
		if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
			continue;
		union sockaddr_all *sa = &r->peer[r->peer_n++];
		memset(sa, 0, sizeof(*sa));
		memcpy(sa, ai->ai_addr, ai->ai_addrlen);
	}
	freeaddrinfo(list);
	return NULL;
}

int
socket_server_connect(struct socket_server *ss, uintptr_t opaque, const char *host, int port) {
	if (host == NULL || !valid_port(port))
		return SOCKET_SERVER_EINVAL;
	struct request *r = new_request(ss, REQ_CONNECT, -1, opaque);
	r->fail = resolve_peer(ss, host, port, r); // before the slot is taken: this may block
	int id = reserve_id(ss);
	if (id < 0) {
		ss->hooks.free(r->peer);
		ss->hooks.free(r);
		return id;
	}
	r->id = id;
	send_request(ss, r);
	return id;
}

int
socket_server_bind(struct socket_server *ss, uintptr_t opaque, int fd) {
	int id = reserve_id(ss);
	if (id < 0)
		return id;
	struct request *r = new_request(ss, REQ_BIND, id, opaque);
	r->fd = fd;
	send_request(ss, r);
	return id;
}

static char *
take_buffer(struct socket_server *ss, const struct socket_sendbuffer *buf) {
	if (buf->kind == SOCKET_BUFFER_MEMORY)
		return (char *)buf->buffer;
	char *copy = ss->hooks.malloc(buf->sz);
	memcpy(copy, buf->buffer, buf->sz);
	return copy;
}

static void
drop_buffer(struct socket_server *ss, const struct socket_sendbuffer *buf) {
	if (buf->kind == SOCKET_BUFFER_MEMORY)
		ss->hooks.free((void *)buf->buffer);
}

static int
queue_send(struct socket_server *ss, const struct socket_sendbuffer *buf, int kind,
           const uint8_t *address, int addr_sz) {
	if (!may_use(ss, buf->id)) {
		drop_buffer(ss, buf);
		return SOCKET_SERVER_EINVAL;
	}
	struct request *r = new_request(ss, kind, buf->id, 0);
	r->buffer = take_buffer(ss, buf);
	r->sz = buf->sz;
	if (addr_sz > 0) {
		memcpy(r->address, address, (size_t)addr_sz);
		r->addr_sz = (uint8_t)addr_sz;
	}
	send_request(ss, r);
	return 0;
}

int
socket_server_send(struct socket_server *ss, const struct socket_sendbuffer *buf) {
	return queue_send(ss, buf, REQ_SEND, NULL, 0);
}

int
socket_server_send_lowpriority(struct socket_server *ss, const struct socket_sendbuffer *buf) {
	return queue_send(ss, buf, REQ_SEND_LOW, NULL, 0);
}

/* ---- UDP ------------------------------------------------------------------ */

/* The encoded address of host:port, or 0 when it does not resolve. */
static int
udp_address_of(const char *host, int port, uint8_t *out) {
	struct addrinfo *list = NULL;
	if (!valid_port(port) || resolve(host, port, SOCK_DGRAM, false, &list) != 0)
		return 0;
	int sz = socket_server_encode_address(list->ai_addr, out);
	freeaddrinfo(list);
	return sz;
}

static int
register_udp(struct socket_server *ss, uintptr_t opaque, int fd, int family) {
	int id = reserve_id(ss);
	if (id < 0) {
		(void)close(fd); // nothing to do on failure
		return id;
	}
	struct request *r = new_request(ss, REQ_UDP, id, opaque);
	r->fd = fd;
	r->protocol = family == AF_INET6 ? PROTO_UDPV6 : PROTO_UDP;
	send_request(ss, r);
	return id;
}

int
socket_server_udp(struct socket_server *ss, uintptr_t opaque, const char *host, int port) {
	union sockaddr_all sa;
	socklen_t len = 0;
	int family = AF_INET;
	if (host != NULL) {
		uint8_t addr[SKYNET_SOCKET_UDP_ADDRESS_MAX];
		int sz = udp_address_of(host, port, addr);
		if (sz == 0)
			return SOCKET_SERVER_EINVAL;
		len = decode_address(addr, sz, &sa);
		family = sa.s.sa_family;
	}
	int fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return SOCKET_SERVER_EIO;
	if (len > 0 && bind(fd, &sa.s, len) != 0) {
		(void)close(fd); // nothing to do on failure
		return SOCKET_SERVER_EIO;
	}
	return register_udp(ss, opaque, fd, family);
}

int
socket_server_udp_dial(struct socket_server *ss, uintptr_t opaque, const char *host, int port) {
	uint8_t addr[SKYNET_SOCKET_UDP_ADDRESS_MAX];
	int sz = host ? udp_address_of(host, port, addr) : 0;
	if (sz == 0)
		return SOCKET_SERVER_EINVAL;
	union sockaddr_all sa;
	socklen_t len = decode_address(addr, sz, &sa);
	int fd = socket(sa.s.sa_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return SOCKET_SERVER_EIO;
	if (connect(fd, &sa.s, len) != 0) {
		(void)close(fd); // nothing to do on failure
		return SOCKET_SERVER_EIO;
	}
	return register_udp(ss, opaque, fd, sa.s.sa_family);
}

int
socket_server_udp_connect(struct socket_server *ss, int id, const char *host, int port) {
	if (!may_use(ss, id) || host == NULL)
		return SOCKET_SERVER_EINVAL;
	struct request *r = new_request(ss, REQ_UDP_CONNECT, id, 0);
	int sz = udp_address_of(host, port, r->address);
	if (sz == 0) {
		ss->hooks.free(r);
		return SOCKET_SERVER_EINVAL;
	}
	r->addr_sz = (uint8_t)sz;
	send_request(ss, r);
	return 0;
}

int
socket_server_udp_send(struct socket_server *ss, const uint8_t *address, int addr_sz,
                       const struct socket_sendbuffer *buf) {
	if (address == NULL || socket_server_address_size(address, (size_t)addr_sz) != addr_sz) {
		drop_buffer(ss, buf);
		return SOCKET_SERVER_EINVAL;
	}
	return queue_send(ss, buf, REQ_SEND, address, addr_sz);
}

/* ---- statistics ----------------------------------------------------------- */

static int
info_type(int type, int flags) {
	if (type == SOCKET_PLISTEN || type == SOCKET_LISTEN)
		return SKYNET_SOCKET_INFO_LISTEN;
	if (type == SOCKET_BIND)
		return SKYNET_SOCKET_INFO_BIND;
	if (flags & INFO_UDP)
		return SKYNET_SOCKET_INFO_UDP;
	return SKYNET_SOCKET_INFO_TCP;
}

struct socket_server_info *
socket_server_info(struct socket_server *ss, int *count) {
	int n = 0;
	int cap = 0;
	struct socket_server_info *list = NULL;
	for (int i = 0; i < SKYNET_SOCKET_MAX; i++) {
		struct socket *s = &ss->slot[i];
		int type = ATOM_LOAD(&s->type);
		if (type == SOCKET_INVALID || type == SOCKET_RESERVE)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			list = ss->hooks.realloc(list, (size_t)cap * sizeof(*list));
		}
		struct socket_server_info *si = &list[n++];
		memset(si, 0, sizeof(*si));
		int flags = ATOM_LOAD_RELAXED(&s->info_flags); // statistics only
		si->id = ATOM_LOAD(&s->id);
		si->type = info_type(type, flags);
		si->opaque = ATOM_LOAD(&s->opaque);
		si->reading = (flags & INFO_READING) != 0;
		si->writing = (flags & INFO_WRITING) != 0;
		si->closing = (flags & INFO_CLOSING) != 0;
		si->flow_paused = (flags & INFO_FLOW) != 0;
		si->flow_pauses = ATOM_LOAD_RELAXED(&s->flow_pauses);
		si->consumer = ATOM_LOAD(&s->consumer);
		si->read_bytes = ATOM_LOAD_RELAXED(&s->read_bytes);
		si->write_bytes = ATOM_LOAD_RELAXED(&s->write_bytes);
		si->rtime = ATOM_LOAD_RELAXED(&s->rtime);
		si->wtime = ATOM_LOAD_RELAXED(&s->wtime);
		si->wbuffer = ATOM_LOAD(&s->wb_size);
		SPIN_LOCK(s);
		memcpy(si->name, s->name, sizeof(si->name));
		SPIN_UNLOCK(s);
	}
	*count = n;
	return list;
}

/* ---- life cycle ----------------------------------------------------------- */

struct socket_server *
socket_server_create(const struct socket_server_hooks *hooks) {
	int efd = epoll_create1(EPOLL_CLOEXEC);
	if (efd < 0)
		return NULL;
	int evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (evfd < 0)
		goto fail_close_epoll;
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
	if (epoll_ctl(efd, EPOLL_CTL_ADD, evfd, &ev) != 0)
		goto fail_close_eventfd;
	struct socket_server *ss = hooks->calloc(1, sizeof(*ss));
	ss->hooks = *hooks;
	ss->epoll_fd = efd;
	ss->event_fd = evfd;
	ss->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ATOM_INIT(&ss->time, hooks->clock ? hooks->clock() : 0);
	SPIN_INIT(ss);
	for (int i = 0; i < SKYNET_SOCKET_MAX; i++) {
		struct socket *s = &ss->slot[i];
		s->fd = -1;
		SPIN_INIT(s);
	}
	return ss;
fail_close_eventfd:
	(void)close(evfd); // nothing to do on failure
fail_close_epoll:
	(void)close(efd); // nothing to do on failure
	return NULL;
}

void
socket_server_release(struct socket_server *ss) {
	if (ss == NULL)
		return;
	for (int i = 0; i < SKYNET_SOCKET_MAX; i++) {
		struct socket *s = &ss->slot[i];
		int type = ATOM_LOAD(&s->type);
		if (type != SOCKET_INVALID && type != SOCKET_RESERVE)
			free_socket(ss, s);
		SPIN_DESTROY(s);
	}
	struct request *lists[2] = {ss->run_head, ss->cmd_head};
	for (int i = 0; i < 2; i++) {
		struct request *r = lists[i];
		while (r) {
			struct request *next = r->next;
			if (r->fd >= 0 && (r->kind == REQ_LISTEN || r->kind == REQ_UDP))
				(void)close(r->fd); // created for a socket that never registered
			ss->hooks.free(r->peer);
			ss->hooks.free(r->buffer);
			ss->hooks.free(r);
			r = next;
		}
	}
	if (ss->reserve_fd >= 0)
		(void)close(ss->reserve_fd); // nothing to do on failure
	(void)close(ss->event_fd);
	(void)close(ss->epoll_fd);
	SPIN_DESTROY(ss);
	void (*free_fn)(void *) = ss->hooks.free;
	free_fn(ss);
}

void
socket_server_updatetime(struct socket_server *ss, uint64_t time_cs) {
	ATOM_STORE_RELAXED(&ss->time, time_cs); // statistics only
}

void
socket_server_set_idle_cb(struct socket_server *ss, socket_server_idle_cb cb) {
	ss->idle_cb = cb;
}

bool
socket_server_is_idle(struct socket_server *ss) {
	return ss->idle_cb != NULL && ATOM_LOAD(&ss->idle) && ATOM_LOAD(&ss->cmd_pending) == 0;
}
