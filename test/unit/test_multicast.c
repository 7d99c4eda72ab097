/*
 * Payload release functions in the core (skynet_payload_set_release), on
 * the multicast shape: a PTYPE_MULTICAST message holding a package pointer
 * owns one reference, which the installed release function drops whenever
 * the core frees the message (after the callback, or unread when the
 * service is gone or the node stops); a receiver can take the reference
 * over; a failed send leaves it with the sender. The package and its
 * release function are the test's, the shape of lualib-src/lua-multicast.c.
 */
#include "tt.h"

#include "fixture.h"

#include "skynet.h"
#include "skynet_monitor.h"
#include "atomic.h"

#include <string.h>

struct package {
	ATOM_INT ref;
	uint32_t size;
	void *data;
};

static void
package_release(struct package *pkg) {
	if (ATOM_FDEC(&pkg->ref) == 1) {
		skynet_free(pkg->data);
		skynet_free(pkg);
	}
}

static void
release_delivery(int type, void *data, size_t sz) {
	if (data != NULL && sz == sizeof(struct package *)) {
		struct package *pkg;
		memcpy(&pkg, data, sizeof(pkg));
		if (pkg != NULL)
			package_release(pkg);
	}
	skynet_free(data);
}

static void
other_release(int type, void *data, size_t sz) {
	skynet_free(data);
}

static int SEEN;       // multicast messages the recorder callback got
static bool TAKE_OVER; // the callback clears the payload's pointer
static struct package *TAKEN;

static int
record_cb(struct skynet_context *ctx, void *ud, int type, int session, uint32_t source,
          const void *msg, size_t sz) {
	if (type == PTYPE_MULTICAST && sz == sizeof(void *)) {
		SEEN++;
		if (TAKE_OVER) {
			memcpy(&TAKEN, msg, sizeof(TAKEN));
			memset((void *)msg, 0, sizeof(void *));
		}
	}
	return 0;
}

static int
record_init(void *inst, struct skynet_context *ctx, const char *parm) {
	skynet_callback(ctx, NULL, record_cb);
	return 0;
}

static int
silent_init(void *inst, struct skynet_context *ctx, const char *parm) {
	return 0; // no callback: messages are freed unread
}

static void
setup(void) {
	const struct skynet_module mods[] = {
	    {.name = "record", .init = record_init},
	    {.name = "silent", .init = silent_init},
	};
	fixture_setup(0, mods, 2, true);
	SEEN = 0;
	TAKE_OVER = false;
	TAKEN = NULL;
}

/* A package with ref references; the test keeps one more to watch the count. */
static struct package *
new_package(int ref) {
	struct package *pkg = skynet_malloc(sizeof(*pkg));
	ATOM_INIT(&pkg->ref, ref + 1);
	pkg->size = 5;
	pkg->data = skynet_malloc(5);
	memcpy(pkg->data, "hello", 5);
	return pkg;
}

/* Deliver one reference of pkg to handle, the way multicastd does (copied pointer). */
static int
deliver(uint32_t handle, struct package *pkg) {
	return skynet_send(NULL, 0xff, handle, PTYPE_MULTICAST, 256, &pkg, sizeof(pkg));
}

static int
refs(struct package *pkg) {
	return ATOM_LOAD(&pkg->ref);
}

/* Run the queued messages the way a worker does (bounded); retired services get drained. */
static void
run_queues(void) {
	struct skynet_monitor *sm = skynet_monitor_new();
	struct message_queue *q = NULL;
	for (int i = 0; i < 100; i++) {
		q = skynet_context_message_dispatch(sm, q, -1);
		if (q == NULL)
			break;
	}
	skynet_monitor_delete(sm);
}

static void
released_after_callback(int *failed) {
	setup();
	uint32_t h = skynet_context_new("record", NULL);
	struct package *pkg = new_package(2);
	TT_CHECK(deliver(h, pkg) == 256);
	TT_CHECK(deliver(h, pkg) == 256);
	TT_CHECK(refs(pkg) == 3);
	run_queues();
	TT_CHECK(SEEN == 2);
	TT_CHECK(refs(pkg) == 1);
	package_release(pkg);
	fixture_teardown();
}

static void
taken_over_by_receiver(int *failed) {
	setup();
	TAKE_OVER = true;
	uint32_t h = skynet_context_new("record", NULL);
	struct package *pkg = new_package(1);
	deliver(h, pkg);
	run_queues();
	TT_CHECK(SEEN == 1 && TAKEN == pkg);
	TT_CHECK(refs(pkg) == 2); // the receiver owns its reference now
	package_release(pkg);
	package_release(pkg);
	fixture_teardown();
}

static void
released_without_callback(int *failed) {
	setup();
	uint32_t h = skynet_context_new("silent", NULL);
	struct package *pkg = new_package(1);
	deliver(h, pkg);
	run_queues();
	TT_CHECK(refs(pkg) == 1);
	package_release(pkg);
	fixture_teardown();
}

static void
released_when_service_dies_with_queue(int *failed) {
	setup();
	uint32_t h = skynet_context_new("record", NULL);
	struct package *pkg = new_package(3);
	for (int i = 0; i < 3; i++)
		deliver(h, pkg);
	TT_CHECK(skynet_context_retire(h) == 1);
	run_queues(); // the queue of a retired service is drained unread
	TT_CHECK(SEEN == 0);
	TT_CHECK(refs(pkg) == 1);
	package_release(pkg);
	fixture_teardown();
}

static void
failed_send_keeps_reference(int *failed) {
	setup();
	uint32_t h = skynet_context_new("record", NULL);
	skynet_context_retire(h);
	struct package *pkg = new_package(1);
	TT_CHECK(deliver(h, pkg) == SKYNET_EDEAD);
	TT_CHECK(refs(pkg) == 2);
	run_queues();
	package_release(pkg);
	package_release(pkg);
	fixture_teardown();
}

static void
discard_at_shutdown(int *failed) {
	struct package *pkg = new_package(1);
	struct skynet_message msg = {.source = 1, .session = 0};
	msg.data = skynet_malloc(sizeof(pkg));
	memcpy(msg.data, &pkg, sizeof(pkg));
	msg.sz = skynet_message_sz(PTYPE_MULTICAST, sizeof(pkg));
	skynet_message_discard(&msg);
	TT_CHECK(refs(pkg) == 1);
	// A pointer already taken over (NULL) and another type leave the count alone.
	msg.data = skynet_calloc(1, sizeof(pkg));
	skynet_message_discard(&msg);
	msg.data = skynet_malloc(sizeof(pkg));
	memcpy(msg.data, &pkg, sizeof(pkg));
	msg.sz = skynet_message_sz(PTYPE_LUA, sizeof(pkg));
	skynet_message_discard(&msg);
	TT_CHECK(refs(pkg) == 1);
	package_release(pkg);
}

/* The first release function installed for a type stays; bad types are refused. */
static void
install_rules(int *failed) {
	TT_CHECK(skynet_payload_set_release(PTYPE_MULTICAST, release_delivery) == 0);
	TT_CHECK(skynet_payload_set_release(PTYPE_MULTICAST, release_delivery) == 0); // again: fine
	TT_CHECK(skynet_payload_set_release(PTYPE_MULTICAST, other_release) == SKYNET_EINVAL);
	TT_CHECK(skynet_payload_set_release(PTYPE_SOCKET, other_release) == SKYNET_EINVAL);
	TT_CHECK(skynet_payload_set_release(256, other_release) == SKYNET_EINVAL);
	TT_CHECK(skynet_payload_set_release(-1, other_release) == SKYNET_EINVAL);
	TT_CHECK(skynet_payload_set_release(PTYPE_TRACE, NULL) == SKYNET_EINVAL);
}

int
main(void) {
	skynet_globalinit();   // the cases run services on this thread
	TT_RUN(install_rules); // first: the cases below rely on its release function
	TT_RUN(released_after_callback);
	TT_RUN(taken_over_by_receiver);
	TT_RUN(released_without_callback);
	TT_RUN(released_when_service_dies_with_queue);
	TT_RUN(failed_send_keeps_reference);
	TT_RUN(discard_at_shutdown);
	skynet_globalexit();
	return tt_summary();
}
