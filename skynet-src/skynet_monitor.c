/*
 * Monitor records. version is bumped by the worker around every message;
 * source/destination describe the running message. The monitor thread is
 * the only reader; check_version and reported are its private state.
 * Fields the worker writes are ATOM_*: the monitor reads them racily on
 * purpose (a stale read only delays detection by one period).
 */
#include "skynet_monitor.h"

#include "skynet.h"
#include "atomic.h"

#include <string.h>

struct skynet_monitor {
	ATOM_INT version;
	ATOM_U32 source;
	ATOM_U32 destination;
	ATOM_INT owing;    // see skynet_monitor_owing
	int check_version; // monitor thread only
	int reported;      // monitor thread only: the version already logged
};

struct skynet_monitor *
skynet_monitor_new(void) {
	struct skynet_monitor *sm = skynet_calloc(1, sizeof(*sm));
	sm->reported = -1;
	return sm;
}

void
skynet_monitor_delete(struct skynet_monitor *sm) {
	skynet_free(sm);
}

void
skynet_monitor_trigger(struct skynet_monitor *sm, uint32_t source, uint32_t destination) {
	// Relaxed: the monitor tolerates stale values; the version bump orders nothing.
	ATOM_STORE_RELAXED(&sm->source, source);
	ATOM_STORE_RELAXED(&sm->destination, destination);
	ATOM_FADD_RELAXED(&sm->version, 1);
}

uint32_t
skynet_monitor_check(struct skynet_monitor *sm) {
	int version = ATOM_LOAD_RELAXED(&sm->version);
	uint32_t flagged = 0;
	if (version == sm->check_version) {
		uint32_t destination = ATOM_LOAD_RELAXED(&sm->destination);
		if (destination && sm->reported != version) {
			sm->reported = version;
			flagged = destination;
			skynet_error(NULL,
			             "error: A message from [ :%08x ] to [ :%08x ] maybe in an endless loop "
			             "(version = %d)",
			             ATOM_LOAD_RELAXED(&sm->source), destination, version);
		}
	} else {
		sm->check_version = version;
	}
	return flagged;
}

uint32_t
skynet_monitor_running(struct skynet_monitor *sm) {
	return ATOM_LOAD_RELAXED(&sm->destination);
}

ATOM_INT *
skynet_monitor_owing(struct skynet_monitor *sm) {
	return &sm->owing;
}
