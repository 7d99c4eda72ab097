/*
 * The timer glue (skynet_timer.c) on real contexts with a fake clock:
 * messages, the timer thread's sleep/kick protocol, cancel, retirement,
 * STAT counts and virtual time. Messages are collected by running the
 * service's queue on this thread (skynet_context_dispatchall).
 */
#include "tt.h"

#include "fixture.h"

#include "skynet.h"
#include "skynet_env.h"

#include <stdio.h>
#include <string.h>

static uint64_t FAKE_CS;
static uint64_t FAKE_SUB_US; // microseconds past FAKE_CS

static uint64_t
fake_clock(void) {
	return FAKE_CS * 10000 + FAKE_SUB_US;
}

#define MAXGOT 64

static struct {
	int n;
	int session[MAXGOT];
	uint32_t source[MAXGOT];
	int type[MAXGOT];
	uint64_t now[MAXGOT];
} GOT;

static int
collect_cb(struct skynet_context *ctx, void *ud, int type, int session, uint32_t source,
           const void *msg, size_t sz) {
	if (GOT.n < MAXGOT) {
		GOT.session[GOT.n] = session;
		GOT.source[GOT.n] = source;
		GOT.type[GOT.n] = type;
		GOT.now[GOT.n] = skynet_now();
		GOT.n++;
	}
	return 0;
}

static int
collect_init(void *inst, struct skynet_context *ctx, const char *parm) {
	skynet_callback(ctx, NULL, collect_cb);
	return 0;
}

/* A module whose init sets two timers and then fails. */
static uint32_t FAILED_HANDLE;

static int
failinit_init(void *inst, struct skynet_context *ctx, const char *parm) {
	FAILED_HANDLE = skynet_context_handle(ctx);
	skynet_timeout(FAILED_HANDLE, 10, 1);
	skynet_timeout(FAILED_HANDLE, 100000, 2);
	return 1;
}

static int KICKS;

static void
count_kick(void) {
	KICKS++;
}

static struct skynet_context *
setup(bool virtual_time, uint64_t clock_cs) {
	FAKE_CS = clock_cs;
	FAKE_SUB_US = 0;
	memset(&GOT, 0, sizeof(GOT));
	KICKS = 0;
	const struct skynet_module m[] = {
	    {.name = "collect", .init = collect_init},
	    {.name = "failinit", .init = failinit_init},
	};
	skynet_timer_set_clock(fake_clock);
	fixture_setup(0, m, 2, virtual_time);
	skynet_timer_set_kick(count_kick);
	return fixture_service("collect", NULL);
}

static void
teardown(void) {
	skynet_timer_set_kick(NULL);
	fixture_teardown();
	skynet_timer_set_clock(NULL);
}

static void
zero_delay_is_immediate(int *failed) {
	struct skynet_context *ctx = setup(false, 5000);
	uint32_t h = skynet_context_handle(ctx);
	TT_CHECK(skynet_timeout(h, 0, 11) == 11);
	TT_CHECK(skynet_timeout(h, -5, 12) == 12);
	TT_CHECK(skynet_timeout(0x00ffffff, 0, 13) == SKYNET_EDEAD);
	skynet_context_dispatchall(ctx);
	TT_CHECK(GOT.n == 2 && GOT.session[0] == 11 && GOT.session[1] == 12);
	TT_CHECK(GOT.source[0] == 0 && GOT.type[0] == PTYPE_RESPONSE);
	TT_CHECK(skynet_timer_pending(0) == 0);
	teardown();
}

static void
fires_at_deadline_tick(int *failed) {
	struct skynet_context *ctx = setup(false, 5000);
	uint32_t h = skynet_context_handle(ctx);
	uint64_t start = skynet_now();
	skynet_timeout(h, 30, 1);
	skynet_timeout(h, 10, 2);
	FAKE_CS += 9;
	skynet_updatetime();
	skynet_context_dispatchall(ctx);
	TT_CHECK(GOT.n == 0); // never early
	FAKE_CS += 1;
	skynet_updatetime();
	skynet_context_dispatchall(ctx);
	TT_CHECK(GOT.n == 1 && GOT.session[0] == 2 && GOT.now[0] == start + 10);
	FAKE_CS += 100; // a jump: the rest fires in one update
	skynet_updatetime();
	skynet_context_dispatchall(ctx);
	TT_CHECK(GOT.n == 2 && GOT.session[1] == 1);
	teardown();
}

static uint32_t WOKEN[4];
static int WOKEN_N;

static void
record_wake(uint32_t handle) {
	if (WOKEN_N < 4)
		WOKEN[WOKEN_N++] = handle;
}

/* A wake timer calls the wake callback, sends no message, and goes with its service. */
static void
wake_timers_call_back_and_retire(int *failed) {
	struct skynet_context *ctx = setup(false, 5000);
	uint32_t h = skynet_context_handle(ctx);
	skynet_timer_set_wake(record_wake);
	WOKEN_N = 0;
	skynet_timer_wake(h, 0); // at least one tick
	skynet_timer_wake(h, 20);
	TT_CHECK(skynet_timer_pending(h) == 2);
	FAKE_CS += 1;
	skynet_updatetime();
	skynet_context_dispatchall(ctx);
	TT_CHECK(WOKEN_N == 1 && WOKEN[0] == h && GOT.n == 0);
	skynet_context_retire(h);
	TT_CHECK(skynet_timer_pending(h) == 0);
	FAKE_CS += 100;
	skynet_updatetime();
	TT_CHECK(WOKEN_N == 1);
	skynet_timer_set_wake(NULL);
	teardown();
}

/* Sleep in wait_us steps (the timer thread's loop) until n messages arrived. */
static int
sleep_until_fired(struct skynet_context *ctx, int n, uint64_t *slept_cs) {
	int wakeups = 0;
	*slept_cs = 0;
	while (GOT.n < n && wakeups < 100) {
		uint64_t us = skynet_timer_wait_us(10000000);
		FAKE_CS += us / 10000;
		*slept_cs += us / 10000;
		skynet_updatetime();
		skynet_context_dispatchall(ctx);
		wakeups++;
	}
	return wakeups;
}

static void
sleep_until_next_deadline_and_kick(int *failed) {
	struct skynet_context *ctx = setup(false, 5000);
	uint32_t h = skynet_context_handle(ctx);
	skynet_updatetime();
	// Nothing pending: sleep the whole allowance.
	TT_CHECK(skynet_timer_wait_us(1000000) == 1000000);
	skynet_timeout(h, 500, 1); // after the planned wake: no kick
	TT_CHECK(KICKS == 0);
	uint64_t us = skynet_timer_wait_us(10000000);
	TT_CHECK(us > 0 && us <= 5000000); // never past the deadline (a cascade may come first)
	skynet_timeout(h, 1, 2);           // before the planned wake: kick the sleeping thread
	TT_CHECK(KICKS == 1);
	skynet_timeout(h, 1, 3); // the thread is woken already
	TT_CHECK(KICKS == 1);
	TT_CHECK(skynet_timer_wait_us(10000000) == 10000);
	uint64_t slept;
	int wakeups = sleep_until_fired(ctx, 2, &slept);
	TT_CHECK(GOT.n == 2 && GOT.session[0] == 2 && GOT.session[1] == 3);
	TT_CHECK(wakeups == 1 && slept == 1);
	// The far timer: a handful of wake-ups (cascades), landing exactly on its tick.
	wakeups = sleep_until_fired(ctx, 3, &slept);
	TT_CHECK(GOT.n == 3 && GOT.session[2] == 1);
	TT_CHECK(wakeups <= 4 && slept == 499);
	teardown();
}

static void
cancel_sends_nothing(int *failed) {
	struct skynet_context *ctx = setup(false, 100);
	uint32_t h = skynet_context_handle(ctx);
	skynet_timeout(h, 10, 1);
	skynet_timeout(h, 10, 2);
	TT_CHECK(skynet_timer_pending(h) == 2);
	TT_CHECK(skynet_timeout_cancel(ctx, 1) == 0);
	TT_CHECK(skynet_timeout_cancel(ctx, 1) == SKYNET_ENOENT);
	TT_CHECK(skynet_timeout_cancel(ctx, 99) == SKYNET_ENOENT);
	const char *n = skynet_command(ctx, "STAT", "timers");
	TT_CHECK(n && strcmp(n, "1") == 0);
	FAKE_CS += 20;
	skynet_updatetime();
	skynet_context_dispatchall(ctx);
	TT_CHECK(GOT.n == 1 && GOT.session[0] == 2);
	TT_CHECK(skynet_timeout_cancel(ctx, 2) == SKYNET_ENOENT); // fired already
	teardown();
}

static void
retired_service_takes_its_timers(int *failed) {
	struct skynet_context *ctx = setup(false, 100);
	struct skynet_context *other = fixture_service("collect", NULL);
	uint32_t h = skynet_context_handle(ctx);
	uint32_t o = skynet_context_handle(other);
	for (int i = 1; i <= 1000; i++)
		skynet_timeout(h, i, i);
	skynet_timeout(o, 5, 1);
	const char *total = skynet_command(other, "STAT", "timers_total");
	TT_CHECK(total && strcmp(total, "1001") == 0);
	skynet_context_retire(h);
	TT_CHECK(skynet_timer_pending(h) == 0);
	TT_CHECK(skynet_timer_pending(0) == 1);
	teardown();
}

/* A service with two pending timers (one near, one far). */
static uint32_t
service_with_timers(void) {
	struct skynet_context *ctx = fixture_service("collect", NULL);
	uint32_t h = ctx ? skynet_context_handle(ctx) : 0;
	skynet_timeout(h, 10, 1);
	skynet_timeout(h, 100000, 2);
	return h;
}

/*
 * Each path that ends a service drops its pending timers at once, so the
 * wheel's count falls right after the retire (not when the timers fire).
 */
static void
kill_and_exit_drop_timers(int *failed) {
	struct skynet_context *ctx = setup(false, 100);
	uint32_t a = service_with_timers();
	uint32_t b = service_with_timers();
	TT_CHECK(skynet_timer_pending(0) == 4);
	char addr[16];
	snprintf(addr, sizeof(addr), ":%x", a);
	skynet_command(ctx, "KILL", addr);
	TT_CHECK(skynet_handle_count() == 2);
	TT_CHECK(skynet_timer_pending(a) == 0 && skynet_timer_pending(0) == 2);
	struct skynet_context *self = skynet_handle_grab(b); // kept valid through its own EXIT
	TT_CHECK(self != NULL);
	if (self) {
		skynet_command(self, "EXIT", NULL);
		skynet_context_release(self);
	}
	TT_CHECK(skynet_handle_count() == 1);
	TT_CHECK(skynet_timer_pending(b) == 0 && skynet_timer_pending(0) == 0);
	teardown();
}

static void
failed_launch_drops_timers(int *failed) {
	setup(false, 100);
	FAILED_HANDLE = 0;
	TT_CHECK(skynet_context_new("failinit", NULL) == 0);
	TT_CHECK(FAILED_HANDLE != 0 && skynet_handle_count() == 1);
	TT_CHECK(skynet_timer_pending(FAILED_HANDLE) == 0 && skynet_timer_pending(0) == 0);
	teardown();
}

/* ABORT, and the shutdown (which retires every service the same way). */
static void
abort_and_shutdown_drop_every_timer(int *failed) {
	struct skynet_context *ctx = setup(false, 100);
	uint32_t h = skynet_context_handle(ctx);
	for (int i = 0; i < 20; i++) // enough for the table to grow several times
		service_with_timers();
	TT_CHECK(skynet_handle_count() == 21 && skynet_timer_pending(0) == 40);
	struct skynet_context *self = skynet_handle_grab(h);
	TT_CHECK(self != NULL);
	if (self) {
		skynet_command(self, "ABORT", NULL);
		skynet_context_release(self);
	}
	TT_CHECK(skynet_handle_count() == 0 && skynet_timer_pending(0) == 0);
	for (int i = 0; i < 5; i++)
		service_with_timers();
	TT_CHECK(skynet_timer_pending(0) == 10);
	skynet_context_retireall(); // what the node's shutdown runs
	TT_CHECK(skynet_handle_count() == 0 && skynet_timer_pending(0) == 0);
	teardown();
}

static void
virtual_time_jumps_to_deadline(int *failed) {
	struct skynet_context *ctx = setup(true, 777);
	uint32_t h = skynet_context_handle(ctx);
	TT_CHECK(skynet_now() == 0);
	skynet_timeout(h, 360000, 1); // one hour
	skynet_timeout(h, 100, 2);
	TT_CHECK(skynet_timer_advance_idle());
	skynet_context_dispatchall(ctx);
	TT_CHECK(GOT.n == 1 && GOT.session[0] == 2 && GOT.now[0] == 100);
	TT_CHECK(skynet_timer_advance_idle());
	skynet_context_dispatchall(ctx);
	TT_CHECK(GOT.n == 2 && GOT.session[1] == 1 && GOT.now[1] == 360000);
	TT_CHECK(!skynet_timer_advance_idle()); // nothing pending
	FAKE_CS += 1000;
	skynet_updatetime(); // the clock is never read in virtual time
	TT_CHECK(skynet_now() == 360000);
	teardown();
}

static void
clock_backwards_never_moves_now_back(int *failed) {
	struct skynet_context *ctx = setup(false, 1000);
	uint32_t h = skynet_context_handle(ctx);
	skynet_timeout(h, 15, 1);
	FAKE_CS += 10;
	skynet_updatetime();
	uint64_t before = skynet_now();
	FAKE_CS -= 500;
	skynet_updatetime();
	TT_CHECK(skynet_now() >= before);
	FAKE_CS += 5;
	skynet_updatetime();
	skynet_context_dispatchall(ctx);
	TT_CHECK(GOT.n == 1 && skynet_now() == before + 5);
	teardown();
}

static void
precise_timer_fires_at_its_microsecond(int *failed) {
	struct skynet_context *ctx = setup(false, 5000);
	uint32_t h = skynet_context_handle(ctx);
	skynet_updatetime();
	TT_CHECK(skynet_timer_wait_us(1000000) == 1000000);
	TT_CHECK(skynet_timeout_us(h, 3500, 1) == 1);
	TT_CHECK(KICKS == 1); // before the planned wake
	skynet_timeout_us(h, 3500, 2);
	skynet_timeout_us(h, 1200, 3);
	TT_CHECK(KICKS == 2);
	TT_CHECK(skynet_timer_pending(h) == 3 && skynet_timer_pending(0) == 3);
	TT_CHECK(skynet_timer_wait_us(1000000) == 1200); // not the next tick, 10 ms away
	FAKE_SUB_US = 1199;
	skynet_updatetime();
	skynet_context_dispatchall(ctx);
	TT_CHECK(GOT.n == 0); // never early
	FAKE_SUB_US = 1200;
	skynet_updatetime();
	skynet_context_dispatchall(ctx);
	TT_CHECK(GOT.n == 1 && GOT.session[0] == 3 && GOT.type[0] == PTYPE_RESPONSE);
	TT_CHECK(GOT.source[0] == 0);
	TT_CHECK(skynet_timer_wait_us(1000000) == 2300);
	FAKE_SUB_US = 3499;
	skynet_updatetime();
	skynet_context_dispatchall(ctx);
	TT_CHECK(GOT.n == 1);
	FAKE_SUB_US = 3600; // the same deadline: in the order they were set
	skynet_updatetime();
	skynet_context_dispatchall(ctx);
	TT_CHECK(GOT.n == 3 && GOT.session[1] == 1 && GOT.session[2] == 2);
	TT_CHECK(skynet_timer_pending(0) == 0);
	TT_CHECK(skynet_timeout_us(h, 0, 4) == 4);
	TT_CHECK(skynet_timeout_us(0x00ffffff, -1, 5) == SKYNET_EDEAD);
	skynet_context_dispatchall(ctx);
	TT_CHECK(GOT.n == 4 && GOT.session[3] == 4);
	teardown();
}

static void
precise_timer_cancel_and_retire(int *failed) {
	struct skynet_context *ctx = setup(false, 100);
	struct skynet_context *other = fixture_service("collect", NULL);
	uint32_t h = skynet_context_handle(ctx);
	uint32_t o = skynet_context_handle(other);
	for (int i = 1; i <= 100; i++)
		skynet_timeout_us(h, 1000 + i * 37, i);
	skynet_timeout(h, 1, 200); // a wheel timer beside them
	skynet_timeout_us(o, 50000, 1);
	TT_CHECK(skynet_timeout_cancel(ctx, 50) == 0);
	TT_CHECK(skynet_timeout_cancel(ctx, 50) == SKYNET_ENOENT);
	TT_CHECK(skynet_timeout_cancel(ctx, 200) == 0);
	TT_CHECK(skynet_timer_pending(h) == 99);
	FAKE_SUB_US = 1000 + 10 * 37; // sessions 1..10 are due
	skynet_updatetime();
	skynet_context_dispatchall(ctx);
	TT_CHECK(GOT.n == 10);
	for (int i = 0; i < GOT.n; i++)
		TT_CHECK(GOT.session[i] == i + 1);
	skynet_timer_remove_service(h);
	TT_CHECK(skynet_timer_pending(h) == 0 && skynet_timer_pending(o) == 1);
	FAKE_CS += 100;
	skynet_updatetime();
	skynet_context_dispatchall(ctx);
	skynet_context_dispatchall(other);
	TT_CHECK(GOT.n == 11 && GOT.session[10] == 1); // only the other service's
	teardown();
}

static void
precise_timer_in_virtual_time(int *failed) {
	struct skynet_context *ctx = setup(true, 0);
	uint32_t h = skynet_context_handle(ctx);
	uint64_t start = skynet_now();
	skynet_timeout_us(h, 15000, 1); // 1.5 cs: the second tick
	skynet_timeout_us(h, 10000, 2); // exactly one tick
	TT_CHECK(skynet_timer_advance_idle());
	skynet_context_dispatchall(ctx);
	TT_CHECK(GOT.n == 1 && GOT.session[0] == 2 && GOT.now[0] == start + 1);
	TT_CHECK(skynet_timer_advance_idle());
	skynet_context_dispatchall(ctx);
	TT_CHECK(GOT.n == 2 && GOT.session[1] == 1 && GOT.now[1] == start + 2);
	teardown();
}

int
main(void) {
	skynet_globalinit();
	skynet_env_init();
	TT_RUN(zero_delay_is_immediate);
	TT_RUN(fires_at_deadline_tick);
	TT_RUN(wake_timers_call_back_and_retire);
	TT_RUN(sleep_until_next_deadline_and_kick);
	TT_RUN(cancel_sends_nothing);
	TT_RUN(retired_service_takes_its_timers);
	TT_RUN(kill_and_exit_drop_timers);
	TT_RUN(failed_launch_drops_timers);
	TT_RUN(abort_and_shutdown_drop_every_timer);
	TT_RUN(virtual_time_jumps_to_deadline);
	TT_RUN(clock_backwards_never_moves_now_back);
	TT_RUN(precise_timer_fires_at_its_microsecond);
	TT_RUN(precise_timer_cancel_and_retire);
	TT_RUN(precise_timer_in_virtual_time);
	skynet_env_exit();
	skynet_globalexit();
	return tt_summary();
}
