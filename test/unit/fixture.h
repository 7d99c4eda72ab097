#ifndef SKYNET_FIXTURE_H
#define SKYNET_FIXTURE_H

/*
 * An in-process node without threads, for unit tests that need real
 * contexts: the subsystems are set up, the given static modules inserted,
 * and the timer started (virtual or on the clock installed beforehand with
 * skynet_timer_set_clock). Messages are run on the test's own thread with
 * skynet_context_dispatchall. fixture_teardown frees everything, so ASan
 * sees every leak.
 */

#include "skynet.h"
#include "skynet_handle.h"
#include "skynet_harbor.h"
#include "skynet_module.h"
#include "skynet_mq.h"
#include "skynet_server.h"
#include "skynet_socket_internal.h"
#include "skynet_timer.h"

static void
fixture_setup(int harbor, const struct skynet_module *mods, size_t n, bool virtual_time) {
	skynet_harbor_init(harbor);
	skynet_handle_init(harbor, skynet_context_grab, skynet_context_release);
	skynet_mq_init();
	skynet_mq_set_weigh(PTYPE_SOCKET, skynet_socket_message_bytes);
	skynet_module_init("");
	for (size_t i = 0; i < n; i++)
		skynet_module_insert(&mods[i]);
	skynet_timer_init(virtual_time);
}

/*
 * Launch a service and return its context, or NULL. Borrowed: the handle
 * table's reference keeps it alive until it retires (a fixture runs no other
 * thread that could retire it meanwhile).
 */
static inline struct skynet_context *
fixture_service(const char *name, const char *param) {
	uint32_t handle = skynet_context_new(name, param);
	struct skynet_context *ctx = handle ? skynet_handle_grab(handle) : NULL;
	if (ctx)
		skynet_context_release(ctx); // the table still holds one
	return ctx;
}

static void
fixture_drop(struct skynet_message *msg, void *ud) {
	skynet_free(msg->data);
}

static void
fixture_teardown(void) {
	skynet_context_retireall();
	struct message_queue *q;
	while ((q = skynet_globalmq_pop()) != NULL)
		skynet_mq_release(q, fixture_drop, NULL);
	skynet_timer_exit();
	skynet_module_exit();
	skynet_handle_exit();
	skynet_harbor_exit();
	skynet_mq_exit();
}

#endif
