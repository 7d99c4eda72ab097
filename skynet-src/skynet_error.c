/*
 * skynet_error: format a line and queue it to the logger service as
 * PTYPE_TEXT from the calling context (source 0 without one). Safe from any
 * thread; lines are dropped while no service is named "logger".
 */
#include "skynet.h"

#include "skynet_handle.h"
#include "skynet_post.h"
#include "atomic.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define LOG_MESSAGE_SIZE 256

static ATOM_U32 LOGGER = 0;

void
skynet_error(struct skynet_context *context, const char *msg, ...) {
	uint32_t logger = ATOM_LOAD_RELAXED(&LOGGER); // a cache: a stale 0 only costs a lookup
	if (logger == 0) {
		logger = skynet_handle_findname("logger");
		if (logger == 0)
			return;
		ATOM_STORE_RELAXED(&LOGGER, logger);
	}
	char tmp[LOG_MESSAGE_SIZE];
	va_list ap;
	va_start(ap, msg);
	int len = vsnprintf(tmp, LOG_MESSAGE_SIZE, msg, ap);
	va_end(ap);
	if (len < 0)
		return;
	char *data = skynet_malloc(len + 1);
	if (len < LOG_MESSAGE_SIZE) {
		memcpy(data, tmp, len + 1);
	} else {
		va_start(ap, msg);
		vsnprintf(data, len + 1, msg, ap);
		va_end(ap);
	}
	struct skynet_message smsg = {
	    .source = context ? skynet_context_handle(context) : 0,
	    .session = 0,
	    .data = data,
	    .sz = skynet_message_sz(PTYPE_TEXT, len),
	};
	if (skynet_post(logger, &smsg) != 0) {
		skynet_free(data);
		ATOM_STORE_RELAXED(&LOGGER, 0); // the logger is gone (shutdown)
	}
}
