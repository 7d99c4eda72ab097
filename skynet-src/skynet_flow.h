#ifndef SKYNET_FLOW_H
#define SKYNET_FLOW_H

/*
 * Internal. Socket flow control, the policy: when a service's mailbox is
 * too full to take more socket data, and when it has caught up. The whole
 * protocol (who pauses, who marks, who resumes, and why no wake-up is lost)
 * is described at the top of skynet_flow.c. The mechanism is elsewhere:
 * skynet_socket.c pauses and resumes sockets (socket_server.c keys them by
 * handle), skynet_server.c asks at the end of each dispatch batch, and
 * skynet_mq.c counts the bytes.
 */

#include <stdbool.h>
#include <stddef.h>

struct skynet_context;

#define SKYNET_FLOW_HIGH_MSGS  1024      // default socket_flow_high_msgs
#define SKYNET_FLOW_HIGH_BYTES (1 << 20) // default socket_flow_high_bytes

/*
 * Set the mailbox high-water marks (messages, payload bytes; 0 turns that
 * limit off); the low-water marks are a quarter of them. Before any thread.
 */
void skynet_flow_config(int high_msgs, size_t high_bytes);
/* False when both limits are off. */
bool skynet_flow_enabled(void);
/*
 * Add delta (negative: release) to the requests ctx took out of its
 * mailbox but still holds (parked coroutines); they count as waiting
 * messages. Never goes below 0. Returns the new count. Call from ctx's own
 * callback (a release then ends in the dispatch batch that checks the
 * low-water mark). Thread-safe.
 */
int skynet_flow_hold(struct skynet_context *ctx, int delta);
/* ctx's mailbox is at or above a high-water mark. Socket thread. */
bool skynet_flow_is_high(struct skynet_context *ctx);
/*
 * Mark ctx: sockets were flow-paused for it. Returns false when its
 * mailbox had already fallen to the low-water mark and the mark was taken
 * back: the caller then resumes those sockets itself. Socket thread, with
 * a reference on ctx.
 */
bool skynet_flow_mark(struct skynet_context *ctx);
/*
 * End of a dispatch batch of ctx (a worker): true when ctx was marked and
 * its mailbox is down to the low-water mark; the mark is cleared and the
 * caller resumes its sockets (skynet_socket_flow_resume). One load while
 * ctx is not marked.
 */
bool skynet_flow_relieve(struct skynet_context *ctx);
/* ctx is being freed: true when it was marked (the caller resumes its sockets). */
bool skynet_flow_is_marked(struct skynet_context *ctx);

#endif
