#ifndef SKYNET_HARBOR_H
#define SKYNET_HARBOR_H

/*
 * Internal: skynet-src/ (and its tests) only, never service-src/ or lualib-src/.
 *
 * Node identity and global names for a single node (harbor 0): a global
 * name (no ':' or '.' prefix, at most 15 characters) maps to a handle once
 * registered; messages sent to it before that are queued here and flushed,
 * in send order, by the registration.
 */

#include "skynet_mq.h"

#include <stdbool.h>
#include <stdint.h>

#define GLOBALNAME_LENGTH 16

void skynet_harbor_init(int harbor);
/* Free the name table and any still-queued messages. */
void skynet_harbor_exit(void);
/* True when handle names a service on another node (non-zero, different harbor id). */
bool skynet_harbor_isremote(uint32_t handle);
/*
 * Deliver msg to the global name: at once when it is registered (returns
 * the push result; on SKYNET_EDEAD the caller keeps msg->data), otherwise
 * queued (takes ownership of msg->data, returns 0). SKYNET_EINVAL for a
 * malformed name (the caller keeps msg->data). Thread-safe.
 */
int skynet_harbor_send(const char *name, struct skynet_message *msg);
/* Bind name to handle and flush what was queued for it. 0 or SKYNET_EINVAL. Thread-safe. */
int skynet_harbor_register(const char *name, uint32_t handle);

#endif
