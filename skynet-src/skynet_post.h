#ifndef SKYNET_POST_H
#define SKYNET_POST_H

/*
 * Internal. The bottom layer that posts messages: a handle to its service's
 * queue. It sits on the handle table and the queues only, so the modules
 * that make messages (timer, socket, harbor, error) and the context layer
 * above them (skynet_server.c) all post through it without calling each
 * other.
 *
 * Mailbox: the part of a context this layer and the flow control read.
 * struct skynet_context (skynet_server.c) begins with it, so a context
 * pointer converts to a pointer to its mailbox (C11 6.7.2.1, a struct and
 * its first member share an address). Only skynet_post.c, skynet_flow.c and
 * skynet_server.c touch its fields.
 */

#include "skynet_mq.h"
#include "atomic.h"

#include <stdint.h>

struct skynet_context;

struct skynet_mailbox {
	uint32_t handle;             // set before the context is published, then read-only
	int session_id;              // last session; the thread running the context only
	struct message_queue *queue; // owned by the context
	ATOM_INT flow_mark;          // private to skynet_flow.c: sockets are paused for us
	ATOM_INT flow_held;          // private to skynet_flow.c: requests held out of the queue
};

/* The mailbox of ctx (borrowed, lives as long as ctx). */
static inline struct skynet_mailbox *
skynet_mailbox_of(struct skynet_context *ctx) {
	return (struct skynet_mailbox *)(void *)ctx;
}

/*
 * Queue msg for the service at handle. Takes ownership of msg->data on
 * success only: returns 0, or SKYNET_EDEAD when no service is published at
 * handle (the caller still owns msg->data). Thread-safe; never blocks.
 */
int skynet_post(uint32_t handle, struct skynet_message *msg);

/*
 * The handle of ctx, and a fresh session from it (1..0x7fffffff, wrapping;
 * only on the thread running ctx). Named for the object they read: they
 * are the context's, kept here so that posting modules need nothing above.
 */
uint32_t skynet_context_handle(struct skynet_context *ctx);
int skynet_context_newsession(struct skynet_context *ctx);

#endif
