/*
 * logger: the C log service (the config key `logservice` names it; the default).
 *
 * Param: a file path, or NULL/empty for stdout. Each PTYPE_TEXT message
 * becomes one line "[:%08x] <text>", flushed at once. Lines written to a file
 * start with a local wall-clock stamp "dd/mm/yy HH:MM:SS.cc ". PTYPE_SYSTEM
 * reopens the file in append mode, for log rotation on SIGHUP; if the new
 * open fails the old stream is kept and the failure is logged into it.
 *
 * Threads: the callback runs on one worker at a time (a service is never
 * entered by two threads), so the struct needs no lock. logger_signal does
 * nothing and touches nothing.
 */

#include "skynet.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

struct logger {
	FILE *handle;   // owned when filename != NULL, else stdout (borrowed)
	char *filename; // owned; NULL when writing to stdout
};

struct logger *
logger_create(void) {
	struct logger *inst = skynet_malloc(sizeof(*inst));
	inst->handle = NULL;
	inst->filename = NULL;
	return inst;
}

void
logger_release(struct logger *inst) {
	if (inst == NULL)
		return;
	if (inst->filename != NULL && inst->handle != NULL)
		(void)fclose(inst->handle); // nothing left to report a failure to
	skynet_free(inst->filename);
	skynet_free(inst);
}

/* Write "dd/mm/yy HH:MM:SS.cc " from the wall clock, in local time. */
static void
write_stamp(FILE *f) {
	struct timeval tv;
	gettimeofday(&tv, NULL);
	time_t sec = tv.tv_sec;
	struct tm tm;
	localtime_r(&sec, &tm);
	char buf[32];
	size_t n = strftime(buf, sizeof(buf), "%d/%m/%y %H:%M:%S", &tm);
	buf[n] = '\0';
	fprintf(f, "%s.%02d ", buf, (int)(tv.tv_usec / 10000));
}

static void
reopen(struct logger *inst) {
	if (inst->filename == NULL)
		return;
	FILE *f = fopen(inst->filename, "a");
	if (f == NULL) {
		write_stamp(inst->handle);
		fprintf(inst->handle, "[:00000000] error: logger: cannot reopen file=%s: %s\n",
		        inst->filename, strerror(errno));
		fflush(inst->handle);
		return;
	}
	(void)fclose(inst->handle); // the data was flushed line by line already
	inst->handle = f;
}

static int
logger_cb(struct skynet_context *ctx, void *ud, int type, int session, uint32_t source,
          const void *msg, size_t sz) {
	struct logger *inst = ud;
	switch (type) {
	case PTYPE_SYSTEM:
		reopen(inst);
		break;
	case PTYPE_TEXT:
		// One line is one locked stdio sequence, so output another thread
		// writes to the same stream (a Lua print) cannot land inside it.
		flockfile(inst->handle);
		if (inst->filename != NULL)
			write_stamp(inst->handle);
		fprintf(inst->handle, "[:%08x] ", source);
		if (sz > 0)
			fwrite(msg, 1, sz, inst->handle);
		fputc('\n', inst->handle);
		fflush(inst->handle);
		funlockfile(inst->handle);
		break;
	default:
		break;
	}
	return 0;
}

int
logger_init(struct logger *inst, struct skynet_context *ctx, const char *parm) {
	if (parm != NULL && parm[0] != '\0') {
		inst->handle = fopen(parm, "a");
		if (inst->handle == NULL) {
			fprintf(stderr, "error: logger: cannot open file=%s: %s\n", parm, strerror(errno));
			return SKYNET_EIO;
		}
		inst->filename = skynet_strdup(parm);
	} else {
		inst->handle = stdout;
	}
	skynet_callback(ctx, inst, logger_cb);
	return 0;
}

void
logger_signal(struct logger *inst, int signal) {
	(void)inst;
	(void)signal;
}
