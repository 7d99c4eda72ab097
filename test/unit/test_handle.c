/* Handle table: registration, retirement, reuse rules, growth, names, wrap. */
#include "tt.h"

#include "fixture.h"

#include "skynet.h"
#include "skynet_env.h"

#include <string.h>

static int
nop_init(void *inst, struct skynet_context *ctx, const char *parm) {
	return 0;
}

static int LAST_SIGNAL = -1;

static void
record_signal(void *inst, int sig) {
	LAST_SIGNAL = sig;
}

static void
setup(int harbor) {
	const struct skynet_module nop = {.name = "nop", .init = nop_init, .signal = record_signal};
	fixture_setup(harbor, &nop, 1, true);
}

static void
teardown(void) {
	fixture_teardown();
}

static uint32_t
new_service(void) {
	struct skynet_context *ctx = skynet_context_new("nop", NULL);
	return ctx ? skynet_context_handle(ctx) : 0;
}

static void
register_grab_retire(int *failed) {
	setup(0);
	uint32_t a = new_service();
	uint32_t b = new_service();
	TT_CHECK(a == 1 && b == 2);
	struct skynet_context *ctx = skynet_handle_grab(a);
	TT_CHECK(ctx != NULL && skynet_context_handle(ctx) == a);
	if (ctx)
		skynet_context_release(ctx);
	TT_CHECK(skynet_handle_retire(a) == 1);
	TT_CHECK(skynet_handle_grab(a) == NULL);
	TT_CHECK(skynet_handle_retire(a) == 0);
	TT_CHECK(skynet_handle_count() == 1);
	teardown();
}

static void
retired_handle_not_reused(int *failed) {
	setup(0);
	uint32_t a = new_service();
	skynet_handle_retire(a);
	uint32_t b = new_service();
	// The index only grows: the freed slot is taken by a new handle value.
	TT_CHECK(b != a && b == a + 1);
	TT_CHECK(skynet_handle_grab(a) == NULL);
	struct skynet_context *ctx = skynet_handle_grab(b);
	TT_CHECK(ctx != NULL);
	if (ctx)
		skynet_context_release(ctx);
	teardown();
}

static void
harbor_in_top_byte(int *failed) {
	setup(5);
	uint32_t a = new_service();
	TT_CHECK(a == 0x05000001);
	TT_CHECK(!skynet_isremote(NULL, a, NULL));
	int harbor = 0;
	TT_CHECK(skynet_isremote(NULL, 0x07000001, &harbor) && harbor == 7);
	teardown();
}

static void
grows_past_64k(int *failed) {
	setup(0);
	enum { N = 70000 };
	static uint32_t h[N];
	int ok = 1;
	for (int i = 0; i < N; i++) {
		h[i] = new_service();
		if (h[i] != (uint32_t)i + 1)
			ok = 0;
	}
	TT_CHECK(ok);
	TT_CHECK(skynet_handle_count() == N);
	int found = 1;
	for (int i = 0; i < N; i += 997) {
		struct skynet_context *ctx = skynet_handle_grab(h[i]);
		found = found && ctx && skynet_context_handle(ctx) == h[i];
		if (ctx)
			skynet_context_release(ctx);
	}
	TT_CHECK(found);
	teardown();
}

static void
cursor_wraps_skipping_live(int *failed) {
	setup(0);
	uint32_t first = new_service(); // handle 1 stays alive
	skynet_handle_set_cursor(0xfffffe);
	uint32_t a = new_service();
	uint32_t b = new_service();
	uint32_t c = new_service();
	TT_CHECK(first == 1);
	TT_CHECK(a == 0xfffffe && b == 0xffffff);
	// Wrapped past 0xffffff to the low indexes: 0 is reserved, 1 is alive.
	TT_CHECK(c >= 2 && c < 0x100);
	struct skynet_context *ctx = skynet_handle_grab(c);
	TT_CHECK(ctx != NULL);
	if (ctx)
		skynet_context_release(ctx);
	teardown();
}

static void
names(int *failed) {
	setup(0);
	uint32_t a = new_service();
	uint32_t b = new_service();
	TT_CHECK(skynet_handle_namehandle(a, "alpha") != NULL);
	TT_CHECK(skynet_handle_namehandle(a, "first") != NULL);
	TT_CHECK(skynet_handle_namehandle(b, "alpha") == NULL); // taken
	TT_CHECK(skynet_handle_namehandle(b, "beta") != NULL);
	TT_CHECK(skynet_handle_findname("alpha") == a);
	TT_CHECK(skynet_handle_findname("first") == a);
	TT_CHECK(skynet_handle_findname("beta") == b);
	TT_CHECK(skynet_handle_findname("Alpha") == 0); // case-sensitive
	skynet_handle_retire(a);
	TT_CHECK(skynet_handle_findname("alpha") == 0);
	TT_CHECK(skynet_handle_findname("first") == 0);
	TT_CHECK(skynet_handle_findname("beta") == b);
	TT_CHECK(skynet_handle_namehandle(b, "alpha") != NULL);
	teardown();
}

static void
command_names(int *failed) {
	setup(0);
	skynet_env_init();
	struct skynet_context *ctx = skynet_context_new("nop", NULL);
	uint32_t other = new_service();
	const char *r = skynet_command(ctx, "REG", NULL);
	TT_CHECK(r && strcmp(r, ":1") == 0);
	TT_CHECK(skynet_command(ctx, "REG", ".svc") != NULL);
	r = skynet_command(ctx, "QUERY", ".svc");
	TT_CHECK(r && strcmp(r, ":1") == 0);
	TT_CHECK(skynet_command(ctx, "QUERY", ".nobody") == NULL);
	TT_CHECK(skynet_command(ctx, "NAME", ".other :2") != NULL);
	TT_CHECK(skynet_queryname(ctx, ".other") == other);
	TT_CHECK(skynet_queryname(ctx, ":2") == other);
	TT_CHECK(skynet_command(ctx, "NAME", ".zero :0") == NULL);
	TT_CHECK(skynet_command(ctx, "NAME", ".bad 2") == NULL);
	TT_CHECK(skynet_command(ctx, "REG", "global") == NULL);
	// SIGNAL takes ":hex" or ".name", then an optional number (base auto-detected).
	skynet_command(ctx, "SIGNAL", ".other 1");
	TT_CHECK(LAST_SIGNAL == 1);
	skynet_command(ctx, "SIGNAL", ":2 0x10");
	TT_CHECK(LAST_SIGNAL == 16);
	skynet_command(ctx, "SIGNAL", ".svc");
	TT_CHECK(LAST_SIGNAL == 0);
	teardown();
	skynet_env_exit();
}

int
main(void) {
	skynet_globalinit();
	TT_RUN(register_grab_retire);
	TT_RUN(retired_handle_not_reused);
	TT_RUN(harbor_in_top_byte);
	TT_RUN(grows_past_64k);
	TT_RUN(cursor_wraps_skipping_live);
	TT_RUN(names);
	TT_RUN(command_names);
	skynet_globalexit();
	return tt_summary();
}
