#ifndef SKYNET_SOCKET_INTERNAL_H
#define SKYNET_SOCKET_INTERNAL_H

/*
 * Internal: skynet-src/ (and its tests) only. The socket layer's side that
 * services never see: the socket thread's lifecycle (skynet_start.c), its
 * settings, the flow-control resume (skynet_server.c) and the rules for a
 * PTYPE_SOCKET payload the core frees or weighs (skynet_server.c,
 * skynet_mq.c's hook). Implemented in skynet_socket.c with the public part
 * (skynet_socket.h).
 */

#include "skynet_socket.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Create the socket server. Call once before any thread; exits on failure. */
void skynet_socket_init(void);
/* Ask the socket thread to stop: skynet_socket_poll then returns 0. */
void skynet_socket_exit(void);
/* Close every socket and free the server. Call after the socket thread ended. */
void skynet_socket_free(void);
/*
 * Socket thread: wait for and deliver one event. Returns 0 when the
 * server was told to exit, 1 otherwise. Only the socket thread calls it.
 */
int skynet_socket_poll(void);

/*
 * Virtual time: true while the socket thread waits in epoll with nothing to
 * do (no command queued, no event ready). Thread-safe; a racy snapshot.
 */
bool skynet_socket_is_idle(void);

typedef void (*skynet_socket_idle_cb)(void);
/*
 * Install a callback the socket thread runs each time it becomes idle (see
 * skynet_socket_is_idle); NULL (the default) turns idle tracking off. Call
 * before the socket thread starts.
 */
void skynet_socket_set_idle_cb(skynet_socket_idle_cb cb);

/*
 * Close a TCP connection as soon as more than bytes of its output wait to
 * be sent (0: no limit, the default); one log line names the peer and the
 * limit, and the owner gets CLOSE. Any thread.
 */
void skynet_socket_set_output_limit(size_t bytes);

/*
 * The backlog of listening sockets opened without one (0: 511, the
 * default; the kernel caps it at net.core.somaxconn). Any thread.
 */
void skynet_socket_set_backlog(int backlog);

/*
 * Lift the flow pauses made because the service at handle was behind (see
 * flow control below). Called by the core when that service caught up or
 * is gone. Thread-safe; does nothing before skynet_socket_init.
 */
void skynet_socket_flow_resume(uint32_t handle);
/* Flow pauses since the node started (statistics). Thread-safe. */
uint64_t skynet_socket_flow_pauses(void);

/*
 * Free a PTYPE_SOCKET payload that will never be delivered (its service
 * is gone): the DATA/UDP buffer it owns, then payload itself. NULL does
 * nothing. For ACCEPT the new socket (ud) is shut down: its id was never
 * handed to anyone, so nobody else could close it. Any other socket is
 * left alone (it may have a new owner, or its close may still be
 * flushing). Thread-safe.
 */
void skynet_socket_message_free(void *payload);
/*
 * The bytes a PTYPE_SOCKET payload of sz bytes carries beyond itself (the
 * buffer of a DATA or UDP event), for the queues' byte count: the weigh
 * hook of PTYPE_SOCKET (skynet_mq_set_weigh). Reads the header only.
 */
size_t skynet_socket_message_bytes(const void *payload, size_t sz);

#endif
