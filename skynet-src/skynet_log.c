/*
 * Per-service message logs. The stream belongs to whoever turned logging on
 * (the context's logfile field); this module only formats. Lines are flushed
 * one by one so a log survives a crash of the node.
 */

#include "skynet_log.h"
#include "skynet.h"
#include "skynet_env.h"
#include "skynet_socket.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

#define LOG_HEX_CHUNK 256 // payload bytes formatted per fwrite

FILE *
skynet_log_open(struct skynet_context *ctx, uint32_t handle) {
	const char *logpath = skynet_getenv("logpath");
	if (logpath == NULL) {
		skynet_error(ctx, "error: log: config logpath is not set handle=:%08x", handle);
		return NULL;
	}
	size_t len = strlen(logpath) + 16; // "/" + 8 hex digits + ".log" + NUL
	char *path = skynet_malloc(len);
	snprintf(path, len, "%s/%08x.log", logpath, handle);
	FILE *f = fopen(path, "ab");
	if (f == NULL) {
		skynet_error(ctx, "error: log: cannot open file=%s: %s", path, strerror(errno));
		skynet_free(path);
		return NULL;
	}
	time_t wall = time(NULL);
	char when[32]; // ctime_r needs 26 bytes; its text ends with a newline
	if (ctime_r(&wall, when) == NULL)
		snprintf(when, sizeof(when), "?\n");
	fprintf(f, "open time: %" PRIu64 " %s", skynet_now(), when);
	fflush(f);
	skynet_error(ctx, "info: log: open handle=:%08x file=%s", handle, path);
	skynet_free(path);
	return f;
}

void
skynet_log_close(struct skynet_context *ctx, FILE *f, uint32_t handle) {
	if (f == NULL)
		return;
	skynet_error(ctx, "info: log: close handle=:%08x", handle);
	fprintf(f, "close time: %" PRIu64 "\n", skynet_now());
	(void)fclose(f); // the stream was flushed line by line
}

static void
write_hex(FILE *f, const uint8_t *data, size_t sz) {
	static const char digit[] = "0123456789abcdef";
	char buf[LOG_HEX_CHUNK * 2];
	while (sz > 0) {
		size_t n = sz < LOG_HEX_CHUNK ? sz : LOG_HEX_CHUNK;
		for (size_t i = 0; i < n; i++) {
			buf[2 * i] = digit[data[i] >> 4];
			buf[2 * i + 1] = digit[data[i] & 0xf];
		}
		fwrite(buf, 1, n * 2, f);
		data += n;
		sz -= n;
	}
}

/* "[socket] type id ud [text-or-hex]": inline text as is, DATA/UDP bytes as hex. */
static void
log_socket(FILE *f, const struct skynet_socket_message *sm, size_t sz) {
	fprintf(f, "[socket] %d %d %d ", sm->type, sm->id, sm->ud);
	if (sm->type == SKYNET_SOCKET_TYPE_DATA || sm->type == SKYNET_SOCKET_TYPE_UDP) {
		if (sm->buffer != NULL && sm->ud > 0)
			write_hex(f, (const uint8_t *)sm->buffer, (size_t)sm->ud);
	} else if (sz > sizeof(*sm)) {
		fwrite(sm + 1, 1, sz - sizeof(*sm), f);
	}
}

void
skynet_log_output(FILE *f, uint32_t source, int type, int session, void *buffer, size_t sz) {
	if (type == PTYPE_SOCKET && buffer != NULL && sz >= sizeof(struct skynet_socket_message)) {
		log_socket(f, buffer, sz);
		fputc('\n', f);
		fflush(f);
		return;
	}
	fprintf(f, ":%08x %d %d %" PRIu64 " ", source, type, session, skynet_now());
	if (buffer != NULL)
		write_hex(f, buffer, sz);
	fputc('\n', f);
	fflush(f);
}
