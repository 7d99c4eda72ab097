/*
 * Posting a message: find the service by handle (the handle table takes a
 * reference on its context), append to its queue, drop the reference. The
 * context stays alive while its queue is used, so the queue is never freed
 * under a push (a queue is freed only after its context's last release).
 */
#include "skynet_post.h"

#include "skynet.h"
#include "skynet_handle.h"

int
skynet_post(uint32_t handle, struct skynet_message *msg) {
	struct skynet_context *ctx = skynet_handle_grab(handle);
	if (ctx == NULL)
		return SKYNET_EDEAD;
	skynet_mq_push(skynet_mailbox_of(ctx)->queue, msg);
	skynet_handle_drop(ctx);
	return 0;
}

uint32_t
skynet_context_handle(struct skynet_context *ctx) {
	return skynet_mailbox_of(ctx)->handle;
}

int
skynet_context_newsession(struct skynet_context *ctx) {
	struct skynet_mailbox *box = skynet_mailbox_of(ctx);
	// Session always positive: 1..0x7fffffff, wrapping to 1.
	int session = ++box->session_id;
	if (session <= 0) {
		box->session_id = 1;
		return 1;
	}
	return session;
}
