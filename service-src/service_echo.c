/*
 * echo: a small C service for tests that do not need Lua.
 *
 * - A request (any type but RESPONSE/ERROR, session != 0) is answered with
 *   a PTYPE_RESPONSE carrying the same payload.
 * - PTYPE_TEXT "exit" (with or without a session) makes it exit.
 * - Param "<cs>" (optional): exit by itself after that many centiseconds,
 *   through the TIMEOUT command; the node stops when it was the last service.
 * - PTYPE_TEXT "count" requests are answered with the number of messages
 *   received so far, as decimal text.
 */
#include "skynet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct echo {
	int lifetime_session; // session of the self-exit timer, 0 if none
	long received;
};

struct echo *
echo_create(void) {
	return skynet_calloc(1, sizeof(struct echo));
}

void
echo_release(struct echo *e) {
	skynet_free(e);
}

static bool
is_text(const void *msg, size_t sz, const char *word) {
	size_t n = strlen(word);
	return sz == n && memcmp(msg, word, n) == 0;
}

static int
echo_cb(struct skynet_context *ctx, void *ud, int type, int session, uint32_t source,
        const void *msg, size_t sz) {
	struct echo *e = ud;
	e->received++;
	if (type == PTYPE_RESPONSE) {
		if (session == e->lifetime_session && source == 0)
			skynet_command(ctx, "EXIT", NULL);
		return 0;
	}
	if (type == PTYPE_ERROR)
		return 0;
	if (type == PTYPE_TEXT && is_text(msg, sz, "exit")) {
		skynet_command(ctx, "EXIT", NULL);
		return 0;
	}
	if (session == 0)
		return 0;
	if (type == PTYPE_TEXT && is_text(msg, sz, "count")) {
		char tmp[32];
		int n = snprintf(tmp, sizeof(tmp), "%ld", e->received);
		skynet_send(ctx, 0, source, PTYPE_RESPONSE, session, tmp, n);
		return 0;
	}
	skynet_send(ctx, 0, source, PTYPE_RESPONSE | PTYPE_TAG_DONTCOPY, session, (void *)msg, sz);
	return 1; // the payload went back to the sender
}

int
echo_init(struct echo *e, struct skynet_context *ctx, const char *parm) {
	skynet_callback(ctx, e, echo_cb);
	if (parm && parm[0]) {
		char *end;
		long cs = strtol(parm, &end, 10);
		if (*end != '\0' || cs < 0) {
			skynet_error(ctx, "error: echo: bad lifetime (%s)", parm);
			return 1;
		}
		const char *session = skynet_command(ctx, "TIMEOUT", parm);
		e->lifetime_session = (int)strtol(session, NULL, 10);
	}
	return 0;
}

void
echo_signal(struct echo *e, int signal) {
}
