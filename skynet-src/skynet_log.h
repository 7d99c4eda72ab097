#ifndef SKYNET_LOG_H
#define SKYNET_LOG_H

/*
 * Internal: skynet-src/ (and its tests) only, never service-src/ or lualib-src/.
 *
 * Per-service message logs (commands LOGON / LOGOFF): every message a
 * service receives, one line each, in <logpath>/<handle %08x>.log.
 */

#include "skynet.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Open (append) the log file of handle under env "logpath" and write its
 * first line "open time: <now cs> <ctime>". Returns the stream, owned by the
 * caller until skynet_log_close, or NULL when logpath is unset or the file
 * cannot be opened (both logged on behalf of ctx). Thread-safe.
 */
FILE *skynet_log_open(struct skynet_context *ctx, uint32_t handle);

/* Write "close time: <now cs>" and close f (takes ownership; NULL does nothing). */
void skynet_log_close(struct skynet_context *ctx, FILE *f, uint32_t handle);

/*
 * Append one line for a received message: ":%08x type session now hexpayload"
 * (source, PTYPE, session, skynet_now() in cs, payload bytes as lower-case
 * hex), flushed; a PTYPE_SOCKET message is written as "[socket] type id ud
 * text-or-hex" instead, as skynet writes it. buffer is borrowed. Call from one thread
 * at a time per f (the worker running the logged service).
 */
void skynet_log_output(FILE *f, uint32_t source, int type, int session, void *buffer, size_t sz);

#endif
