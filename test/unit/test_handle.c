/*
 * Handle table: registration, retirement, reuse rules, growth, names, wrap,
 * and a concurrent stress of register/grab/retire.
 */
#include "tt.h"

#include "fixture.h"

#include "skynet.h"
#include "skynet_env.h"
#include "atomic.h"

#include <pthread.h>
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
	return skynet_context_new("nop", NULL);
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
	struct skynet_context *ctx = fixture_service("nop", NULL);
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

/*
 * A KILL that lands the moment a new service becomes runnable (standing in
 * for one from another worker, which may run as soon as the service's queue
 * is scheduled): the wake-up hook of the global queue retires the service
 * there. LAUNCH must still answer with its handle, without touching the
 * freed context (ASan reports a use after free otherwise).
 */
static uint32_t KILL_ON_WAKE;

static void
kill_on_wake(void) {
	uint32_t handle = KILL_ON_WAKE;
	KILL_ON_WAKE = 0;
	if (handle)
		skynet_handle_retire(handle);
}

static void
launch_killed_at_once(int *failed) {
	setup(0);
	skynet_env_init();
	struct skynet_context *launcher = fixture_service("nop", NULL);
	TT_CHECK(launcher != NULL && skynet_context_handle(launcher) == 1);
	skynet_mq_set_wakeup(kill_on_wake);
	KILL_ON_WAKE = 2; // the next handle
	const char *r = skynet_command(launcher, "LAUNCH", "nop");
	TT_CHECK(KILL_ON_WAKE == 0); // the hook ran
	TT_CHECK(r && strcmp(r, ":00000002") == 0);
	TT_CHECK(skynet_handle_grab(2) == NULL);
	TT_CHECK(skynet_context_total() == 1); // the launcher
	skynet_mq_set_wakeup(NULL);
	teardown();
	skynet_env_exit();
}

/* A service that exits during its own init: no handle comes back, nothing stays. */
static int
exit_in_init(void *inst, struct skynet_context *ctx, const char *parm) {
	skynet_command(ctx, "EXIT", NULL);
	return 0;
}

static void
exit_during_init(int *failed) {
	setup(0);
	const struct skynet_module m = {.name = "quitter", .init = exit_in_init};
	skynet_module_insert(&m);
	int total = skynet_context_total();
	TT_CHECK(skynet_context_new("quitter", NULL) == 0);
	TT_CHECK(skynet_handle_grab(1) == NULL);
	TT_CHECK(skynet_handle_count() == 0);
	TT_CHECK(skynet_context_total() == total);
	TT_CHECK(skynet_context_new("missing", NULL) == 0);
	teardown();
}

/*
 * concurrent: on a fresh table each round, CREATORS threads create services
 * (each keeping every other one alive, so the table doubles again and again
 * while others register) and a prober pushes to and grabs the handles about
 * to be handed out. Handles are sequential within a round, so the prober
 * aims at the newest few and the next few. Checks: a handle is grabbable, as itself, from its
 * creation until it retires and never afterwards; a context anyone can grab
 * is complete (a push needs its queue); the table ends empty.
 */
#define CREATORS 3
#define LIVE_MAX 2048

static ATOM_INT CONC_BAD;     // failed checks, from any thread
static ATOM_INT CONC_CREATED; // services created this round
static ATOM_INT CONC_RUNNING; // creators still running
static ATOM_INT CONC_HITS;    // pushes the prober got through
static int CONC_PER_THREAD;

static void
conc_check(bool ok) {
	if (!ok)
		ATOM_FINC(&CONC_BAD);
}

/* handle is registered as itself. */
static bool
grabbable(uint32_t handle) {
	struct skynet_context *ctx = skynet_handle_grab(handle);
	if (ctx == NULL)
		return false;
	bool same = skynet_context_handle(ctx) == handle;
	skynet_context_release(ctx);
	return same;
}

static void
conc_retire(uint32_t handle) {
	conc_check(grabbable(handle));
	conc_check(skynet_handle_retire(handle) == 1);
	conc_check(!grabbable(handle));
	conc_check(skynet_handle_retire(handle) == 0);
}

static void *
conc_creator(void *ud) {
	uint32_t *live = skynet_malloc(LIVE_MAX * sizeof(*live));
	int head = 0, n = 0;
	uint32_t rng = (uint32_t)(uintptr_t)ud * 2654435761u + 1;
	for (int i = 0; i < CONC_PER_THREAD; i++) {
		uint32_t h = skynet_context_new("nop", NULL);
		ATOM_FINC(&CONC_CREATED);
		conc_check(h != 0 && grabbable(h));
		live[(head + n++) % LIVE_MAX] = h;
		rng = rng * 1103515245 + 12345;
		conc_check(grabbable(live[(head + (rng >> 8) % n) % LIVE_MAX]));
		if (i % 2 == 1 || n == LIVE_MAX) {
			conc_retire(live[head]);
			head = (head + 1) % LIVE_MAX;
			n--;
		}
	}
	while (n > 0) {
		conc_retire(live[head]);
		head = (head + 1) % LIVE_MAX;
		n--;
	}
	skynet_free(live);
	ATOM_FDEC(&CONC_RUNNING);
	return NULL;
}

static void *
conc_prober(void *ud) {
	struct skynet_message msg = {.source = 0, .session = 0, .data = NULL, .sz = 0};
	while (ATOM_LOAD(&CONC_RUNNING) > 0) {
		// The newest handles (live: every other one is kept) and the next ones.
		int created = ATOM_LOAD(&CONC_CREATED);
		uint32_t first = created > CREATORS ? (uint32_t)(created - CREATORS) + 1 : 1;
		for (uint32_t h = first; h < first + 2 * CREATORS; h++) {
			if (skynet_post(h, &msg) == 0)
				ATOM_FINC(&CONC_HITS);
			struct skynet_context *ctx = skynet_handle_grab(h);
			if (ctx) {
				conc_check(skynet_context_handle(ctx) == h);
				skynet_context_release(ctx);
			}
		}
	}
	return NULL;
}

static void
concurrent_register_grab_retire(int *failed) {
	int rounds = tt_stress() ? 40 : 20;
	CONC_PER_THREAD = 1500;
	ATOM_STORE(&CONC_BAD, 0);
	ATOM_STORE(&CONC_HITS, 0);
	for (int r = 0; r < rounds; r++) {
		setup(0);
		ATOM_STORE(&CONC_CREATED, 0);
		ATOM_STORE(&CONC_RUNNING, CREATORS);
		pthread_t t[CREATORS + 1];
		for (int i = 0; i < CREATORS; i++)
			TT_CHECK(pthread_create(&t[i], NULL, conc_creator, (void *)(uintptr_t)(r * 8 + i)) ==
			         0);
		TT_CHECK(pthread_create(&t[CREATORS], NULL, conc_prober, NULL) == 0);
		for (int i = 0; i <= CREATORS; i++)
			pthread_join(t[i], NULL);
		TT_CHECK(skynet_handle_count() == 0);
		teardown();
	}
	TT_CHECK(ATOM_LOAD(&CONC_BAD) == 0);
	TT_CHECK(ATOM_LOAD(&CONC_HITS) > 0); // the prober did reach new services
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
	TT_RUN(launch_killed_at_once);
	TT_RUN(exit_during_init);
	TT_RUN(concurrent_register_grab_retire);
	skynet_globalexit();
	return tt_summary();
}
