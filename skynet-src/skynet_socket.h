#ifndef SKYNET_SOCKET_H
#define SKYNET_SOCKET_H

/*
 * Public header (the set is listed at the top of skynet.h).
 *
 * The node's network layer as services see it (a public header: service-src
 * and lualib-src may include it). One socket thread runs the socket server
 * (socket_server.h); these functions queue commands for it and never block
 * on the network. Every event of a socket becomes a PTYPE_SOCKET message
 * (source 0, session 0) to the socket's owner: the service that connected,
 * listened, bound, opened it with UDP, or last started it. The owner of an
 * accepted socket is the listener's owner until some service starts it.
 *
 * Socket ids are non-negative ints below 2^31; at most SKYNET_SOCKET_MAX are
 * open at once. A closed id is not handed out again until about 2^31 more
 * ids have been allocated, so a stale id never reaches a newer socket: every
 * call with a stale id does nothing (sends return an error and free the
 * buffer). Errors are enum skynet_err values (negative).
 *
 * Unless a comment says otherwise every function here is thread-safe and
 * may be called from any service; ctx is the calling service (it becomes
 * the owner where the comment says so) and is borrowed.
 */

#include "skynet.h"
#include "socket_codes.h"

#include <stdbool.h>
#include <stddef.h>

/* SKYNET_SOCKET_MAX, the event types (the type field of struct skynet_socket_message) and
 * the socket kinds come from socket_codes.h (skynet's numbers). */

/*
 * The payload of a PTYPE_SOCKET message. The message size is
 * sizeof(struct skynet_socket_message) plus the inline bytes that follow
 * the struct:
 *   DATA     id, ud = byte count, buffer = the bytes. The receiver owns
 *            buffer (skynet_free it, or keep it). No inline bytes.
 *   CONNECT  ud = bound port for a listen confirmation, else 0; buffer
 *            NULL; inline text: the bound ip (listen), the peer ip
 *            (connect), or "start", "transfer", "binding".
 *   CLOSE    ud = 0, buffer NULL, no inline bytes.
 *   ACCEPT   id = the listener, ud = the new socket id, buffer NULL;
 *            inline text "ip:port" of the peer.
 *   ERROR    ud = 0, buffer NULL; inline text, at most 128 bytes (for
 *            example "Connection refused"). The socket is closed.
 *   UDP      ud = byte count, buffer = the datagram (owned by the
 *            receiver); inline bytes: the sender address (see
 *            skynet_socket_udp_address).
 *   WARNING  ud = KB waiting to be sent (0: the queue drained), buffer NULL.
 * Inline text is not NUL-terminated; its length is the message size minus
 * sizeof(struct skynet_socket_message).
 */
struct skynet_socket_message {
	int type;
	int id;
	int ud;
	char *buffer;
};

/* ---- TCP --------------------------------------------------------------- */

/*
 * Bind and listen on host:port (host NULL or "" means 0.0.0.0; "::" and
 * other IPv6 literals work; port 0 picks a free port) with backlog (<= 0:
 * 32). The bind happens now, in the caller; ctx owns the socket and gets a
 * CONNECT event (ud = bound port, text = bound ip) once it is registered.
 * Nothing is accepted until skynet_socket_start. Returns the id, or
 * SKYNET_EIO (bind/listen failed) or SKYNET_EFULL (no free id). On failure
 * *reason (when reason is not NULL) is set to the cause, static text such as
 * "Address already in use", and the caller reports it; with reason NULL the
 * failure is logged here.
 */
int skynet_socket_listen(struct skynet_context *ctx, const char *host, int port, int backlog,
                         const char **reason);

/*
 * Connect to host:port; ctx owns the socket. The result arrives as CONNECT
 * (text = peer ip; the socket is then reading) or ERROR (text = the
 * reason, e.g. "Connection refused", or the resolver's text for a name
 * that does not resolve). host is resolved now, in the caller: a numeric
 * address never waits, a host name may block the calling worker on the
 * system resolver (the socket thread never resolves). The connect itself
 * never blocks. Returns the id, or SKYNET_EFULL / SKYNET_EINVAL.
 */
int skynet_socket_connect(struct skynet_context *ctx, const char *host, int port);

/*
 * Wrap an existing OS fd (stdin for the console); the socket server owns
 * fd from now on and closes it when the socket closes. CONNECT "binding"
 * follows (ERROR when fd cannot be polled, e.g. a regular file). Returns
 * the id or SKYNET_EFULL (fd is then left open).
 */
int skynet_socket_bind(struct skynet_context *ctx, int fd);

/*
 * Start or resume reading (accepting, for a listener) and make ctx the
 * owner. Answers CONNECT "start" (or "transfer" when the owner changed),
 * or ERROR "invalid socket" for an id that is not open.
 */
void skynet_socket_start(struct skynet_context *ctx, int id);
/* Stop reading (accepting) until the next skynet_socket_start. No event. */
void skynet_socket_pause(struct skynet_context *ctx, int id);
/*
 * Close after the queued output is sent; nothing more is read. CLOSE
 * follows once the socket is closed (at once when nothing is queued).
 */
void skynet_socket_close(struct skynet_context *ctx, int id);
/* Close now, discarding queued output. CLOSE follows. */
void skynet_socket_shutdown(struct skynet_context *ctx, int id);
/* Set TCP_NODELAY. */
void skynet_socket_nodelay(struct skynet_context *ctx, int id);

/*
 * Flow control. Each TCP connection has a consumer: the service whose
 * mailbox its data ends up in. By default that is the owner; a gate that
 * forwards a connection's frames to an agent names the agent here (handle
 * 0 names the owner again). After each DATA message the socket thread
 * looks at the consumer's mailbox, and at the owner's when they differ:
 * at or above the high-water mark (config socket_flow_high_msgs messages
 * or socket_flow_high_bytes bytes) the connection stops being read, and
 * the kernel's window then slows the peer. Reading resumes once that
 * mailbox is down to a quarter of both marks, or when that service is
 * gone. This pause is separate from skynet_socket_pause/start: the socket
 * is read only when the owner wants input and no flow pause holds. A
 * start by a new owner resets the consumer to the owner.
 */
void skynet_socket_consumer(struct skynet_context *ctx, int id, uint32_t handle);
/*
 * Flow control sees mailboxes only. A service that takes requests out of
 * its mailbox and parks them (coroutines waiting on a call or a queue)
 * declares them: delta (+1 per parked request, -1 when it is done) is
 * added to a count that weighs like that many waiting messages. Never
 * below 0; returns the new count. Call from ctx's own callback.
 */
int skynet_socket_flow_hold(struct skynet_context *ctx, int delta);

/*
 * Queue sz bytes for id at normal priority. Takes ownership of buffer on
 * every path (it is freed with skynet_free once sent, or on failure).
 * Returns 0, or SKYNET_EINVAL when id is not an open socket (a socket that
 * closes before the data leaves drops it silently). Never blocks. Output
 * past 1 MB waiting in the queue makes WARNING events (see the message);
 * past the output limit (skynet_socket_set_output_limit) the connection
 * is closed.
 */
int skynet_socket_send(struct skynet_context *ctx, int id, void *buffer, size_t sz);
/* As skynet_socket_send, sent only when the normal queue is empty. */
int skynet_socket_send_lowpriority(struct skynet_context *ctx, int id, void *buffer, size_t sz);
/* As skynet_socket_send, but buffer is borrowed (copied when it must wait). */
int skynet_socket_send_copy(struct skynet_context *ctx, int id, const void *buffer, size_t sz,
                            bool lowpriority);

/* ---- UDP --------------------------------------------------------------- */

/*
 * A UDP socket owned by ctx, bound to host:port when host is not NULL
 * (port 0: any), IPv6 when host is an IPv6 literal. It reads at once;
 * each datagram is a UDP event. No CONNECT event. Returns the id, or
 * SKYNET_EIO / SKYNET_EINVAL / SKYNET_EFULL.
 */
int skynet_socket_udp(struct skynet_context *ctx, const char *host, int port);
/* A UDP socket bound to host:port (skynet_socket_udp with a host). */
int skynet_socket_udp_listen(struct skynet_context *ctx, const char *host, int port);
/* A UDP socket connected to host:port (resolved now, in the caller). */
int skynet_socket_udp_dial(struct skynet_context *ctx, const char *host, int port);
/*
 * Set the default destination of UDP socket id (resolved in the caller).
 * Returns 0 or SKYNET_EINVAL (bad address, or id is not a UDP socket).
 */
int skynet_socket_udp_connect(struct skynet_context *ctx, int id, const char *host, int port);
/*
 * Send one datagram to address (the encoding of skynet_socket_udp_address,
 * borrowed). buffer is borrowed (copied). Returns 0 or SKYNET_EINVAL.
 */
int skynet_socket_udp_send(struct skynet_context *ctx, int id, const char *address,
                           const void *buffer, size_t sz);
/*
 * The sender address of a UDP message of msg_sz bytes: a pointer into the
 * message (borrowed, valid as long as msg) and its length in *addrsz; NULL
 * when msg is not a well-formed UDP message.
 */
const char *skynet_socket_udp_address(const struct skynet_socket_message *msg, size_t msg_sz,
                                      int *addrsz);

/* ---- statistics -------------------------------------------------------- */

/* Socket kinds in struct skynet_socket_info. */

/* One open socket as netstat shows it. */
struct skynet_socket_info {
	int id;
	int type;             // SKYNET_SOCKET_INFO_*
	uint32_t owner;       // service handle
	bool reading;         // reading (accepting) is on
	bool writing;         // output is waiting for the kernel
	bool closing;         // closing once the output is sent
	bool flow_paused;     // not read: its consumer (or owner) is behind
	uint64_t flow_pauses; // flow pauses since it opened
	uint32_t consumer;    // the consumer named for it, 0 for none (the owner)
	uint64_t read_bytes;
	uint64_t write_bytes;
	uint64_t rtime_cs; // skynet_now() of the last read, 0 if never
	uint64_t wtime_cs; // skynet_now() of the last write, 0 if never
	uint64_t wbuffer;  // bytes waiting to be sent
	char name[64];     // "ip:port" of the peer (bound address for a listener), or ""
};

/*
 * Snapshot of every open socket: an array of *count entries the caller
 * frees with skynet_free (NULL when none). Thread-safe.
 */
struct skynet_socket_info *skynet_socket_info(int *count);

#endif
