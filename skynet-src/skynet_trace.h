#ifndef SKYNET_TRACE_H
#define SKYNET_TRACE_H

/*
 * Internal: skynet-src/ (and its tests) only, never service-src/ or lualib-src/.
 *
 * The trace trailer of a message, as a pure function: the receiving side of
 * skynet_trace_attach (skynet.h). Design notes in skynet_trace.c.
 */

#include "skynet.h"

#include <stdbool.h>
#include <stddef.h>

/*
 * The message at data, len bytes in all, ends with a trailer: fill *out
 * (its tag points into data) and return the payload's length before it.
 * A malformed trailer returns false; *out is then untouched.
 */
bool skynet_trace_parse(const void *data, size_t len, struct skynet_trace *out, size_t *payload);

#endif
