#ifndef SKYNET_SOCKET_SERVER_H
#define SKYNET_SOCKET_SERVER_H

/*
 * Internal: skynet-src/ (and its tests) only, never service-src/ or lualib-src/.
 *
 * The epoll socket server: a table of SKYNET_SOCKET_MAX sockets driven by one
 * thread calling socket_server_poll, and commands any thread may issue. It
 * knows nothing of services: an owner is an opaque uintptr_t carried into
 * every event (skynet_socket.c passes handles). The design (ids, buffers,
 * write queues, warnings, descriptor exhaustion) is described at the top of
 * socket_server.c.
 *
 * Threads: socket_server_poll and socket_server_release belong to the one
 * polling thread; every other function is thread-safe and never blocks on
 * the network. Name lookups happen only in the caller of listen, connect
 * and the UDP functions (never on the polling thread): a numeric address
 * never waits, a host name may block that caller on the system resolver.
 * Commands from one thread are carried out in the order they were issued.
 * Ids: see the top of socket_server.c; a stale id is ignored by every
 * function.
 *
 * Self-contained: this header needs only system headers, and the library
 * (socket_server.c with atomic.h and spinlock.h) nothing else of the
 * runtime. The host program's allocator and clock come in through
 * struct socket_server_hooks.
 */

#include "socket_codes.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Results of socket_server_poll: the event types of socket_codes.h
 * (SKYNET_SOCKET_TYPE_DATA .. _WARNING), and these two of the library's own.
 */
#define SOCKET_SERVER_EXIT   8 // socket_server_exit was called
#define SOCKET_SERVER_NOTICE 9 // data: a line for the log (no socket owner)

/*
 * One event:
 *   DATA/UDP  ud = byte count, data = the bytes (owned by the caller now)
 *   CONNECT   ud = bound port (listen) or 0, data = text
 *   ACCEPT    id = listener, ud = new id, data = "ip:port"
 *   ERROR     data = text (at most 128 bytes)
 *   WARNING   ud = KB pending (0 = drained)
 *   NOTICE    data = text, id = the socket concerned or -1
 * Text is NUL-terminated and borrowed: valid until the next poll.
 */
struct socket_message {
	int id;
	uintptr_t opaque;   // owner
	uintptr_t consumer; // who consumes the socket's data: its consumer, or the owner
	int ud;
	char *data;
	const uint8_t *udp_address; // UDP: sender (borrowed, until the next poll)
	int udp_address_sz;
};

/* Errors the functions below return (negative). */
enum socket_server_err {
	SOCKET_SERVER_EINVAL = -3, // malformed argument, or not an open socket
	SOCKET_SERVER_EIO = -5,    // the operating system refused (bind, listen, socket)
	SOCKET_SERVER_EFULL = -6,  // every id is in use
};

struct socket_server;

/* A clock for the statistics (rtime/wtime), read after each wait in epoll. */
typedef uint64_t (*socket_server_clock_cb)(void);

/*
 * What the server takes from the program that embeds it. The four
 * allocator functions are required and never return NULL (running out of
 * memory is the host's to handle, e.g. by aborting). The server allocates
 * everything with them: a buffer it hands out (a DATA or UDP result, the
 * socket_server_info array) is freed with free, and a SOCKET_BUFFER_MEMORY
 * send buffer must come from malloc or realloc. free(NULL) must do
 * nothing. All of them are called from any thread. clock may be NULL (then
 * only socket_server_updatetime sets the time).
 */
struct socket_server_hooks {
	void *(*malloc)(size_t sz);
	void *(*calloc)(size_t n, size_t sz);
	void *(*realloc)(void *p, size_t sz);
	void (*free)(void *p);
	socket_server_clock_cb clock;
};

/*
 * Create a server (epoll, command queue, reserve fd); hooks is copied.
 * NULL when the OS refuses a descriptor.
 */
struct socket_server *socket_server_create(const struct socket_server_hooks *hooks);
/* Close every fd, free queued output and the server. Poll thread, or after it ended. */
void socket_server_release(struct socket_server *ss);
/* Set the clock the statistics record (rtime/wtime). Any thread. */
void socket_server_updatetime(struct socket_server *ss, uint64_t time_cs);

/*
 * Poll thread: block until the next event and return its type (fills
 * *result). Returns SOCKET_SERVER_EXIT once socket_server_exit was seen.
 */
int socket_server_poll(struct socket_server *ss, struct socket_message *result);

/* Make the poll thread return SOCKET_SERVER_EXIT. */
void socket_server_exit(struct socket_server *ss);

/*
 * Idle tracking for virtual time. With a callback installed (before the
 * poll thread runs), the poll thread calls it each time it is about to
 * block with no command queued and no event ready, and socket_server_is_idle
 * reports that state. Without one, is_idle is always false.
 */
typedef void (*socket_server_idle_cb)(void);
void socket_server_set_idle_cb(struct socket_server *ss, socket_server_idle_cb cb);
bool socket_server_is_idle(struct socket_server *ss);

/*
 * Listen on host:port now (in the caller): host NULL or "" is 0.0.0.0;
 * backlog <= 0 means 32. Owner opaque gets CONNECT (ud = port, text =
 * bound ip) when the poll thread registers it. Returns the id, or
 * SOCKET_SERVER_EIO (*err, if not NULL, gets the errno or EAI_ code text
 * borrowed from a static string) or SOCKET_SERVER_EFULL.
 */
int socket_server_listen(struct socket_server *ss, uintptr_t opaque, const char *host, int port,
                         int backlog, const char **err);
/*
 * Connect to host:port. host is resolved now, in the caller (see the
 * top); the poll thread then connects without blocking and reports
 * CONNECT or ERROR to opaque. A name that does not resolve still gets an
 * id, and ERROR (the resolver's text) follows for it. Returns the id,
 * SOCKET_SERVER_EINVAL (host NULL, bad port) or SOCKET_SERVER_EFULL.
 */
int socket_server_connect(struct socket_server *ss, uintptr_t opaque, const char *host, int port);
/* Take over fd (nonblocking from now on). Returns the id or SOCKET_SERVER_EFULL. */
int socket_server_bind(struct socket_server *ss, uintptr_t opaque, int fd);
void socket_server_start(struct socket_server *ss, uintptr_t opaque, int id);
void socket_server_pause(struct socket_server *ss, uintptr_t opaque, int id);
/* Close after the output queue drains; CLOSE goes to opaque for a stale id. */
void socket_server_close(struct socket_server *ss, uintptr_t opaque, int id);
/* Close now, dropping the output queue; CLOSE follows. */
void socket_server_shutdown(struct socket_server *ss, uintptr_t opaque, int id);
void socket_server_nodelay(struct socket_server *ss, int id);

/*
 * Flow control (see the top of socket_server.c). consumer: name who
 * consumes the data of TCP socket id (0: its owner); it comes with every
 * result of the socket (socket_message.consumer) for the host to check.
 * Setting it, or a start by a new owner (which resets it to 0), lifts a
 * flow pause of the socket. Any thread.
 */
void socket_server_consumer(struct socket_server *ss, int id, uintptr_t consumer);
/*
 * Poll thread only, between two polls (typically right after a DATA
 * result): stop reading connected TCP socket id until a resume with key,
 * whatever its owner's pause/start say (reading needs both). Returns true
 * when it paused it; false when id is not an open connected TCP socket,
 * is closing, or is flow-paused already.
 */
bool socket_server_flow_pause(struct socket_server *ss, int id, uintptr_t key);
/* Lift every flow pause made with key (a request: runs in order). Any thread. */
void socket_server_flow_resume(struct socket_server *ss, uintptr_t key);
/* Flow pauses since the server was created (statistics). Any thread. */
uint64_t socket_server_flow_pauses(struct socket_server *ss);
/*
 * Close a TCP socket as soon as more than bytes of output wait for it
 * (output dropped; its owner gets CLOSE, then a NOTICE names the peer and
 * the limit). 0 (the default) means no limit. Any thread.
 */
void socket_server_set_output_limit(struct socket_server *ss, size_t bytes);
/*
 * The backlog of a listen that gives none (backlog <= 0): backlog, or 511
 * for 0 (the default). The kernel caps it at net.core.somaxconn. Any thread.
 */
void socket_server_set_backlog(struct socket_server *ss, int backlog);

/* How a send hands over its bytes. */
enum socket_buffer_kind {
	SOCKET_BUFFER_MEMORY,  // from hooks.malloc: ownership passes to the server
	SOCKET_BUFFER_RAWCOPY, // borrowed: copied before the call returns
};

struct socket_sendbuffer {
	int id;
	enum socket_buffer_kind kind;
	const void *buffer;
	size_t sz;
};

/*
 * Queue buf->sz bytes for buf->id (high or low priority). A MEMORY buffer
 * is owned by the server on every path. Returns 0 or SOCKET_SERVER_EINVAL
 * (not an open socket).
 */
int socket_server_send(struct socket_server *ss, const struct socket_sendbuffer *buf);
int socket_server_send_lowpriority(struct socket_server *ss, const struct socket_sendbuffer *buf);

/*
 * A UDP socket (bound when host is not NULL, to port; family from host,
 * IPv4 when NULL). Returns the id, SOCKET_SERVER_EINVAL (bad address),
 * SOCKET_SERVER_EIO or SOCKET_SERVER_EFULL. udp_dial: unbound, connected to
 * host:port.
 */
int socket_server_udp(struct socket_server *ss, uintptr_t opaque, const char *host, int port);
int socket_server_udp_dial(struct socket_server *ss, uintptr_t opaque, const char *host, int port);
/* Default destination of a UDP socket. 0 or SOCKET_SERVER_EINVAL. */
int socket_server_udp_connect(struct socket_server *ss, int id, const char *host, int port);
/*
 * One datagram to address (addr_sz bytes, the encoding above, borrowed).
 * buf as for socket_server_send. 0 or SOCKET_SERVER_EINVAL.
 */
int socket_server_udp_send(struct socket_server *ss, const uint8_t *address, int addr_sz,
                           const struct socket_sendbuffer *buf);
/*
 * Encode sa into out (SKYNET_SOCKET_UDP_ADDRESS_MAX bytes); returns the length, or
 * 0 for an unsupported family.
 */
int socket_server_encode_address(const void *sa, uint8_t *out);
/* Length of the encoded address at addr (sz bytes), or 0 when malformed. */
int socket_server_address_size(const uint8_t *addr, size_t sz);

/* One open socket, for statistics. */
struct socket_server_info {
	int id;
	int type;             // SOCKET_SERVER_INFO_*
	uintptr_t opaque;     // the owner
	bool reading;         // reading (accepting) is on
	bool writing;         // output is waiting for the kernel
	bool closing;         // closing once the output is sent
	bool flow_paused;     // not read: the consumer is behind (socket_server_flow_pause)
	uint64_t flow_pauses; // flow pauses since it opened
	uintptr_t consumer;   // the consumer named for it, 0 for none (the owner)
	uint64_t read_bytes;
	uint64_t write_bytes;
	uint64_t rtime;   // the clock's time of the last read, 0 if never
	uint64_t wtime;   // the clock's time of the last write, 0 if never
	uint64_t wbuffer; // bytes waiting to be sent
	char name[64];    // "ip:port" of the peer (bound address for a listener), or ""
};

/*
 * Snapshot of every open socket: an array of *count entries (NULL when
 * none) that the caller frees with hooks.free. Any thread.
 */
struct socket_server_info *socket_server_info(struct socket_server *ss, int *count);

#endif
