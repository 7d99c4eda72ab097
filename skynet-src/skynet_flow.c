/*
 * Socket flow control: the policy, and the per-service state it keeps in
 * the service's mailbox (skynet_post.h: flow_mark, flow_held).
 *
 * Protocol. After a DATA message went to the owner, the socket thread
 * checks the mailbox of the socket's consumer (socket_message.consumer),
 * and then the owner's if it differs (skynet_flow_is_high; requests a
 * service declared held, skynet_flow_hold, count as mail). A service at or
 * above the high-water mark gets the socket flow-paused with its handle as
 * the key (skynet_socket.c, socket_server.c), then its context is marked
 * (skynet_flow_mark). The worker that ends a dispatch batch of a marked
 * service whose mailbox is down to the low-water mark (a quarter of the
 * high one) clears the mark (skynet_flow_relieve) and asks for
 * skynet_socket_flow_resume(handle); so does the service's last release
 * (skynet_flow_is_marked). No wake-up is lost: the mark is stored before
 * the mailbox is read again under the queue lock (skynet_flow_mark takes
 * the mark back and the socket thread resumes at once when the mailbox
 * drained meanwhile), and a worker's check follows its pops under that
 * same lock, so either the worker sees the mark or the socket thread sees
 * the drained mailbox; a mailbox not yet drained has messages, hence a
 * later batch that checks again. The context is held (grabbed) from the
 * check to the mark, so a service that dies meanwhile finds the mark in
 * its last release and resumes its sockets. flow_held is read with a
 * seq-cst load after the service's own held updates, paired with the
 * socket thread's seq-cst store of the mark before it reads flow_held.
 * Costs: two mailbox reads per DATA on the socket thread; one load per
 * dispatch batch on the workers while nothing is paused.
 *
 * Limits: a limit of 0 is off; both off disables flow control. They are
 * set before any thread starts, then read-only.
 */
#include "skynet_flow.h"

#include "skynet_mq.h"
#include "skynet_post.h"
#include "atomic.h"

/* The limits of a mailbox (0: that limit is off). */
struct flow_limits {
	int high_msgs;
	int low_msgs;
	size_t high_bytes;
	size_t low_bytes;
};

static struct flow_limits LIMITS = {
    .high_msgs = SKYNET_FLOW_HIGH_MSGS,
    .low_msgs = SKYNET_FLOW_HIGH_MSGS / 4,
    .high_bytes = SKYNET_FLOW_HIGH_BYTES,
    .low_bytes = SKYNET_FLOW_HIGH_BYTES / 4,
};

void
skynet_flow_config(int high_msgs, size_t high_bytes) {
	LIMITS.high_msgs = high_msgs > 0 ? high_msgs : 0;
	LIMITS.low_msgs = LIMITS.high_msgs / 4;
	LIMITS.high_bytes = high_bytes;
	LIMITS.low_bytes = high_bytes / 4;
}

bool
skynet_flow_enabled(void) {
	return LIMITS.high_msgs > 0 || LIMITS.high_bytes > 0;
}

int
skynet_flow_hold(struct skynet_context *ctx, int delta) {
	struct skynet_mailbox *box = skynet_mailbox_of(ctx);
	int held = ATOM_FADD(&box->flow_held, delta) + delta;
	if (held < 0) { // more released than held: a caller's bug, never a negative backlog
		ATOM_FSUB(&box->flow_held, held);
		held = 0;
	}
	return held;
}

/* Mailbox length plus held requests, and payload bytes. */
static void
backlog(struct skynet_mailbox *box, int *length, size_t *bytes) {
	skynet_mq_backlog(box->queue, length, bytes);
	*length += ATOM_LOAD(&box->flow_held);
}

bool
skynet_flow_is_high(struct skynet_context *ctx) {
	int length;
	size_t bytes;
	backlog(skynet_mailbox_of(ctx), &length, &bytes);
	return (LIMITS.high_msgs > 0 && length >= LIMITS.high_msgs) ||
	       (LIMITS.high_bytes > 0 && bytes >= LIMITS.high_bytes);
}

/* At or below the low-water mark (an off limit never holds it up). */
static bool
is_low(struct skynet_mailbox *box) {
	int length;
	size_t bytes;
	backlog(box, &length, &bytes);
	return (LIMITS.high_msgs == 0 || length <= LIMITS.low_msgs) &&
	       (LIMITS.high_bytes == 0 || bytes <= LIMITS.low_bytes);
}

bool
skynet_flow_mark(struct skynet_context *ctx) {
	struct skynet_mailbox *box = skynet_mailbox_of(ctx);
	ATOM_STORE(&box->flow_mark, 1);
	// Read again after the mark (see the top): a worker may have drained it meanwhile.
	if (is_low(box) && ATOM_CAS(&box->flow_mark, 1, 0))
		return false;
	return true;
}

bool
skynet_flow_relieve(struct skynet_context *ctx) {
	struct skynet_mailbox *box = skynet_mailbox_of(ctx);
	/*
	 * The mark is stored before the socket thread takes the queue lock to
	 * read the mailbox, and this load follows our own pops under that lock,
	 * so a mark the drained mailbox depends on is seen (see the top).
	 */
	if (!ATOM_LOAD(&box->flow_mark))
		return false;
	return is_low(box) && ATOM_CAS(&box->flow_mark, 1, 0);
}

bool
skynet_flow_is_marked(struct skynet_context *ctx) {
	return ATOM_LOAD(&skynet_mailbox_of(ctx)->flow_mark) != 0;
}
