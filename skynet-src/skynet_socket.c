/*
 * Glue between the socket server and services: one process-wide server,
 * driven by the socket thread (skynet_start.c) through skynet_socket_poll.
 *
 * Each event becomes one PTYPE_SOCKET message (source 0, session 0) whose
 * payload is a struct skynet_socket_message followed by the inline bytes
 * skynet_socket.h lists; a DATA/UDP buffer moves into the message as is.
 * Pushing the message wakes a worker if one is needed (skynet_mq's wakeup
 * hook), so the socket thread does nothing more for that.
 *
 * An event whose owner is gone is dropped, and the socket is shut down so
 * it does not leak (for ACCEPT, the new socket too): nobody could close it.
 * A message that was queued but dies with its service later (the core
 * hands it to skynet_socket_message_free) shuts down only the new socket
 * of an ACCEPT: that id never reached anyone, while any other socket may
 * have been passed to another service since. Accepting and reporting are
 * one step of the socket thread, so there is no moment where an accepted
 * socket exists without its ACCEPT on the way to the listener's owner:
 * delivered (the owner must start or close it; skynet.socket closes one
 * whose listener it no longer knows), or dropped here or in drop_orphan.
 * NOTICE results are logged (rate-limited by the server).
 *
 * Flow control (the protocol is at the top of skynet_flow.c): after a DATA
 * message went to the owner, the socket thread asks skynet_flow whether
 * the consumer's mailbox, then the owner's, is too full, and pauses the
 * socket keyed by that service's handle; skynet_socket_flow_resume undoes
 * it for a handle.
 *
 * The socket server is a self-contained library (it includes nothing of
 * the runtime): this file adapts it. It hands the server skynet's
 * allocator and clock, passes its event types on as they are (both sides
 * take them from socket_codes.h) and its error codes too (equal values,
 * checked below at compile time: skynet_err is skynet.h's, which the
 * library cannot include), and converts its socket_server_info snapshot
 * into the public struct skynet_socket_info.
 */
#include "skynet_socket_internal.h"

#include "skynet.h"
#include "skynet_flow.h"
#include "skynet_handle.h"
#include "skynet_mq.h"
#include "skynet_post.h"
#include "skynet_timer.h"
#include "socket_server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INLINE_TEXT_MAX 128 // event text (error, address) is cut to 128 chars, as in skynet

_Static_assert((int)SOCKET_SERVER_EINVAL == (int)SKYNET_EINVAL &&
                   (int)SOCKET_SERVER_EIO == (int)SKYNET_EIO &&
                   (int)SOCKET_SERVER_EFULL == (int)SKYNET_EFULL,
               "socket server errors are passed on as skynet errors");

static struct socket_server *SOCKET_SERVER = NULL;

static uint64_t
clock_cs(void) {
	return skynet_now();
}

void
skynet_socket_init(void) {
	const struct socket_server_hooks hooks = {
	    .malloc = skynet_malloc,
	    .calloc = skynet_calloc,
	    .realloc = skynet_realloc,
	    .free = skynet_free,
	    .clock = clock_cs,
	};
	SOCKET_SERVER = socket_server_create(&hooks);
	if (SOCKET_SERVER == NULL) {
		fprintf(stderr, "skynet: socket: cannot create the socket server\n");
		exit(1);
	}
}

void
skynet_socket_exit(void) {
	socket_server_exit(SOCKET_SERVER);
}

void
skynet_socket_free(void) {
	socket_server_release(SOCKET_SERVER);
	SOCKET_SERVER = NULL;
}

bool
skynet_socket_is_idle(void) {
	return socket_server_is_idle(SOCKET_SERVER);
}

void
skynet_socket_set_idle_cb(skynet_socket_idle_cb cb) {
	socket_server_set_idle_cb(SOCKET_SERVER, cb);
}

void
skynet_socket_set_output_limit(size_t bytes) {
	socket_server_set_output_limit(SOCKET_SERVER, bytes);
}

void
skynet_socket_set_backlog(int backlog) {
	socket_server_set_backlog(SOCKET_SERVER, backlog);
}

void
skynet_socket_flow_resume(uint32_t handle) {
	if (SOCKET_SERVER != NULL)
		socket_server_flow_resume(SOCKET_SERVER, (uintptr_t)handle);
}

uint64_t
skynet_socket_flow_pauses(void) {
	return SOCKET_SERVER ? socket_server_flow_pauses(SOCKET_SERVER) : 0;
}

/* The owner of result is gone: make sure the socket does not outlive it. */
static void
drop_orphan(int type, const struct socket_message *result) {
	if (type == SKYNET_SOCKET_TYPE_CLOSE || type == SKYNET_SOCKET_TYPE_ERROR)
		return; // already closed
	socket_server_shutdown(SOCKET_SERVER, 0, result->id);
	if (type == SKYNET_SOCKET_TYPE_ACCEPT)
		socket_server_shutdown(SOCKET_SERVER, 0, result->ud);
}

/*
 * Pause socket id when the mailbox of handle is at the high-water mark.
 * Returns true when it paused it.
 */
static bool
flow_over(int id, uint32_t handle) {
	struct skynet_context *ctx = skynet_handle_grab(handle);
	if (ctx == NULL)
		return false;
	bool paused =
	    skynet_flow_is_high(ctx) && socket_server_flow_pause(SOCKET_SERVER, id, (uintptr_t)handle);
	if (paused && !skynet_flow_mark(ctx))
		socket_server_flow_resume(SOCKET_SERVER, (uintptr_t)handle); // drained meanwhile
	skynet_handle_drop(ctx);
	return paused;
}

/* After DATA went to the owner: back-pressure from the consumer, then the owner. */
static void
flow_check(const struct socket_message *result) {
	uint32_t owner = (uint32_t)result->opaque;
	uint32_t consumer = (uint32_t)result->consumer;
	if (!flow_over(result->id, consumer) && consumer != owner)
		flow_over(result->id, owner);
}

/* Returns true when the message reached the owner's mailbox. */
static bool
forward_message(int type, const struct socket_message *result) {
	const void *extra = NULL;
	size_t extra_sz = 0;
	if (type == SKYNET_SOCKET_TYPE_CONNECT || type == SKYNET_SOCKET_TYPE_ACCEPT ||
	    type == SKYNET_SOCKET_TYPE_ERROR) {
		extra = result->data;
		extra_sz = result->data ? strnlen(result->data, INLINE_TEXT_MAX) : 0;
	} else if (type == SKYNET_SOCKET_TYPE_UDP) {
		extra = result->udp_address;
		extra_sz = (size_t)result->udp_address_sz;
	}
	size_t sz = sizeof(struct skynet_socket_message) + extra_sz;
	struct skynet_socket_message *sm = skynet_malloc(sz);
	sm->type = type;
	sm->id = result->id;
	sm->ud = result->ud;
	bool owns_buffer = type == SKYNET_SOCKET_TYPE_DATA || type == SKYNET_SOCKET_TYPE_UDP;
	sm->buffer = owns_buffer ? result->data : NULL;
	if (extra_sz > 0)
		memcpy(sm + 1, extra, extra_sz);
	struct skynet_message message = {
	    .source = 0,
	    .session = 0,
	    .data = sm,
	    .sz = skynet_message_sz(PTYPE_SOCKET, sz),
	};
	if (skynet_post((uint32_t)result->opaque, &message) != 0) {
		skynet_free(sm->buffer);
		skynet_free(sm);
		drop_orphan(type, result);
		return false;
	}
	return true;
}

int
skynet_socket_poll(void) {
	struct socket_message result;
	int type = socket_server_poll(SOCKET_SERVER, &result);
	switch (type) {
	case SOCKET_SERVER_EXIT:
		return 0;
	case SOCKET_SERVER_NOTICE:
		skynet_error(NULL, "%s", result.data);
		return 1;
	case SKYNET_SOCKET_TYPE_DATA:
		if (forward_message(type, &result) && skynet_flow_enabled())
			flow_check(&result);
		return 1;
	default:
		forward_message(type, &result);
		return 1;
	}
}

size_t
skynet_socket_message_bytes(const void *payload, size_t sz) {
	if (sz < sizeof(struct skynet_socket_message))
		return 0;
	const struct skynet_socket_message *sm = payload;
	bool carries = sm->type == SKYNET_SOCKET_TYPE_DATA || sm->type == SKYNET_SOCKET_TYPE_UDP;
	return carries && sm->ud > 0 ? (size_t)sm->ud : 0;
}

void
skynet_socket_message_free(void *payload) {
	struct skynet_socket_message *sm = payload;
	if (sm == NULL)
		return;
	if (sm->type == SKYNET_SOCKET_TYPE_DATA || sm->type == SKYNET_SOCKET_TYPE_UDP)
		skynet_free(sm->buffer);
	else if (sm->type == SKYNET_SOCKET_TYPE_ACCEPT && SOCKET_SERVER != NULL)
		socket_server_shutdown(SOCKET_SERVER, 0, sm->ud); // unknown to anyone: see the top
	skynet_free(sm);
}

static uintptr_t
owner(struct skynet_context *ctx) {
	return ctx ? skynet_context_handle(ctx) : 0;
}

int
skynet_socket_listen(struct skynet_context *ctx, const char *host, int port, int backlog,
                     const char **reason) {
	const char *err = NULL;
	int id = socket_server_listen(SOCKET_SERVER, owner(ctx), host, port, backlog, &err);
	if (id < 0 && reason != NULL)
		*reason = err ? err : "unknown error";
	else if (id < 0)
		skynet_error(ctx, "error: socket: listen failed host=%s port=%d reason=%s",
		             host ? host : "", port, err ? err : "?");
	return id;
}

int
skynet_socket_connect(struct skynet_context *ctx, const char *host, int port) {
	return socket_server_connect(SOCKET_SERVER, owner(ctx), host, port);
}

int
skynet_socket_bind(struct skynet_context *ctx, int fd) {
	return socket_server_bind(SOCKET_SERVER, owner(ctx), fd);
}

void
skynet_socket_start(struct skynet_context *ctx, int id) {
	socket_server_start(SOCKET_SERVER, owner(ctx), id);
}

void
skynet_socket_pause(struct skynet_context *ctx, int id) {
	socket_server_pause(SOCKET_SERVER, owner(ctx), id);
}

void
skynet_socket_close(struct skynet_context *ctx, int id) {
	socket_server_close(SOCKET_SERVER, owner(ctx), id);
}

void
skynet_socket_shutdown(struct skynet_context *ctx, int id) {
	socket_server_shutdown(SOCKET_SERVER, owner(ctx), id);
}

void
skynet_socket_nodelay(struct skynet_context *ctx, int id) {
	socket_server_nodelay(SOCKET_SERVER, id);
}

void
skynet_socket_consumer(struct skynet_context *ctx, int id, uint32_t handle) {
	socket_server_consumer(SOCKET_SERVER, id, (uintptr_t)handle);
}

int
skynet_socket_flow_hold(struct skynet_context *ctx, int delta) {
	return skynet_flow_hold(ctx, delta);
}

static int
send_buffer(int id, enum socket_buffer_kind kind, const void *buffer, size_t sz, bool low) {
	struct socket_sendbuffer buf = {.id = id, .kind = kind, .buffer = buffer, .sz = sz};
	if (low)
		return socket_server_send_lowpriority(SOCKET_SERVER, &buf);
	return socket_server_send(SOCKET_SERVER, &buf);
}

int
skynet_socket_send(struct skynet_context *ctx, int id, void *buffer, size_t sz) {
	return send_buffer(id, SOCKET_BUFFER_MEMORY, buffer, sz, false);
}

int
skynet_socket_send_lowpriority(struct skynet_context *ctx, int id, void *buffer, size_t sz) {
	return send_buffer(id, SOCKET_BUFFER_MEMORY, buffer, sz, true);
}

int
skynet_socket_send_copy(struct skynet_context *ctx, int id, const void *buffer, size_t sz,
                        bool lowpriority) {
	return send_buffer(id, SOCKET_BUFFER_RAWCOPY, buffer, sz, lowpriority);
}

int
skynet_socket_udp(struct skynet_context *ctx, const char *host, int port) {
	return socket_server_udp(SOCKET_SERVER, owner(ctx), host, port);
}

int
skynet_socket_udp_listen(struct skynet_context *ctx, const char *host, int port) {
	if (host == NULL)
		return SKYNET_EINVAL;
	return socket_server_udp(SOCKET_SERVER, owner(ctx), host, port);
}

int
skynet_socket_udp_dial(struct skynet_context *ctx, const char *host, int port) {
	return socket_server_udp_dial(SOCKET_SERVER, owner(ctx), host, port);
}

int
skynet_socket_udp_connect(struct skynet_context *ctx, int id, const char *host, int port) {
	return socket_server_udp_connect(SOCKET_SERVER, id, host, port);
}

int
skynet_socket_udp_send(struct skynet_context *ctx, int id, const char *address, const void *buffer,
                       size_t sz) {
	const uint8_t *addr = (const uint8_t *)address;
	struct socket_sendbuffer buf = {
	    .id = id, .kind = SOCKET_BUFFER_RAWCOPY, .buffer = buffer, .sz = sz};
	int addr_sz = addr ? socket_server_address_size(addr, SKYNET_SOCKET_UDP_ADDRESS_MAX) : 0;
	return socket_server_udp_send(SOCKET_SERVER, addr, addr_sz, &buf);
}

const char *
skynet_socket_udp_address(const struct skynet_socket_message *msg, size_t msg_sz, int *addrsz) {
	if (msg->type != SKYNET_SOCKET_TYPE_UDP || msg_sz <= sizeof(*msg))
		return NULL;
	const uint8_t *addr = (const uint8_t *)(msg + 1);
	int sz = socket_server_address_size(addr, msg_sz - sizeof(*msg));
	if (sz == 0)
		return NULL;
	*addrsz = sz;
	return (const char *)addr;
}

struct skynet_socket_info *
skynet_socket_info(int *count) {
	int n = 0;
	struct socket_server_info *list = socket_server_info(SOCKET_SERVER, &n);
	struct skynet_socket_info *out = n > 0 ? skynet_malloc((size_t)n * sizeof(*out)) : NULL;
	for (int i = 0; i < n; i++) {
		const struct socket_server_info *si = &list[i];
		out[i] = (struct skynet_socket_info){
		    .id = si->id,
		    .type = si->type,
		    .owner = (uint32_t)si->opaque,
		    .reading = si->reading,
		    .writing = si->writing,
		    .closing = si->closing,
		    .flow_paused = si->flow_paused,
		    .flow_pauses = si->flow_pauses,
		    .consumer = (uint32_t)si->consumer,
		    .read_bytes = si->read_bytes,
		    .write_bytes = si->write_bytes,
		    .rtime_cs = si->rtime,
		    .wtime_cs = si->wtime,
		    .wbuffer = si->wbuffer,
		};
		_Static_assert(sizeof(out[i].name) == sizeof(si->name), "same name buffer");
		memcpy(out[i].name, si->name, sizeof(out[i].name));
	}
	skynet_free(list);
	*count = n;
	return out;
}
