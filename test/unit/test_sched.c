/*
 * Scheduler: a full node in-process (skynet_start) with static modules.
 *
 * stress: NSVC services each send K messages to every other service, in
 * batches interleaved with ticks to themselves, for worker counts 1..8.
 * Checks: every message delivered exactly once, per-pair order kept, no
 * service entered by two threads at once (an atomic flag per service),
 * and the node stops by itself when the last service exits.
 *
 * dead handles: requests queued to a service that exits come back as
 * PTYPE_ERROR with their sessions; a send to a handle that never existed
 * fails at once.
 *
 * Then: the overload warning in the log, a lost-wakeup detector (idle wake)
 * and SIGHUP reaching the logger; each case explains itself below.
 */
#include "tt.h"

#include "skynet.h"
#include "skynet_env.h"
#include "skynet_handle.h"
#include "skynet_module.h"
#include "skynet_monitor.h"
#include "skynet_server.h"
#include "skynet_spin.h"
#include "skynet_start.h"
#include "skynet_timer.h"
#include "skynet_cond.h"
#include "atomic.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define NSVC  12
#define BATCH 7

static int K; // messages from each service to each other one

struct payload {
	int from;
	int seq;
};

struct stress {
	int id;
	ATOM_INT busy;
	int next_target;
	int sent_to[NSVC];
	int expect_from[NSVC];
	int received;
	int total_to_send;
	int sent;
	bool done;
};

static uint32_t HANDLES[NSVC];
static ATOM_INT RECEIVED;
static ATOM_INT ORDER_ERRORS;
static ATOM_INT DOUBLE_ENTRY;
static ATOM_INT EXITED;

static void *
stress_create(void) {
	return skynet_calloc(1, sizeof(struct stress));
}

static void
stress_release(void *inst) {
	skynet_free(inst);
}

static void
send_batch(struct skynet_context *ctx, struct stress *s) {
	for (int b = 0; b < BATCH && s->sent < s->total_to_send; b++) {
		int t;
		do {
			t = s->next_target;
			s->next_target = (s->next_target + 1) % NSVC;
		} while (t == s->id || s->sent_to[t] >= K);
		struct payload p = {s->id, s->sent_to[t]++};
		skynet_send(ctx, 0, HANDLES[t], PTYPE_CLIENT, 0, &p, sizeof(p));
		s->sent++;
	}
	if (s->sent < s->total_to_send)
		skynet_send(ctx, 0, skynet_context_handle(ctx), PTYPE_TEXT, 0, "tick", 4);
}

static void
maybe_exit(struct skynet_context *ctx, struct stress *s) {
	if (!s->done && s->sent == s->total_to_send && s->received == (NSVC - 1) * K) {
		s->done = true;
		ATOM_FINC(&EXITED);
		skynet_command(ctx, "EXIT", NULL);
	}
}

static int
stress_cb(struct skynet_context *ctx, void *ud, int type, int session, uint32_t source,
          const void *msg, size_t sz) {
	struct stress *s = ud;
	if (ATOM_XCHG(&s->busy, 1) != 0)
		ATOM_FINC(&DOUBLE_ENTRY);
	if (type == PTYPE_TEXT) {
		send_batch(ctx, s);
	} else if (type == PTYPE_CLIENT && sz == sizeof(struct payload)) {
		const struct payload *p = msg;
		if (p->seq != s->expect_from[p->from])
			ATOM_FINC(&ORDER_ERRORS);
		s->expect_from[p->from] = p->seq + 1;
		s->received++;
		ATOM_FINC(&RECEIVED);
	}
	maybe_exit(ctx, s);
	ATOM_STORE(&s->busy, 0);
	return 0;
}

static int
stress_init(void *inst, struct skynet_context *ctx, const char *parm) {
	struct stress *s = inst;
	s->id = atoi(parm);
	s->total_to_send = (NSVC - 1) * K;
	skynet_callback(ctx, s, stress_cb);
	return 0;
}

/* driver: launches the stress services, starts them, exits on its own message. */
static int
driver_cb(struct skynet_context *ctx, void *ud, int type, int session, uint32_t source,
          const void *msg, size_t sz) {
	skynet_command(ctx, "EXIT", NULL);
	return 0;
}

static int
driver_init(void *inst, struct skynet_context *ctx, const char *parm) {
	for (int i = 0; i < NSVC; i++) {
		char arg[16];
		snprintf(arg, sizeof(arg), "%d", i);
		HANDLES[i] = skynet_context_new("stress", arg);
	}
	for (int i = 0; i < NSVC; i++)
		skynet_send(ctx, 0, HANDLES[i], PTYPE_TEXT, 0, "go", 2);
	skynet_callback(ctx, NULL, driver_cb);
	skynet_send(ctx, 0, skynet_context_handle(ctx), PTYPE_TEXT, 0, "exit", 4);
	return 0;
}

/* Overload warnings seen by the logger: the queue length each one reported. */
static int OVERLOAD_SEEN[8];
static int OVERLOAD_N;

static ATOM_INT HUP_SEEN; // the logger got the reopen request SIGHUP turns into

static int
quiet_logger_cb(struct skynet_context *ctx, void *ud, int type, int session, uint32_t source,
                const void *msg, size_t sz) {
	static const char prefix[] = "error: May overload, message queue length = ";
	if (type == PTYPE_SYSTEM)
		ATOM_STORE(&HUP_SEEN, 1);
	if (sz > sizeof(prefix) - 1 && memcmp(msg, prefix, sizeof(prefix) - 1) == 0 && OVERLOAD_N < 8)
		OVERLOAD_SEEN[OVERLOAD_N++] = atoi((const char *)msg + sizeof(prefix) - 1);
	if (getenv("TT_VERBOSE"))
		fprintf(stderr, "[:%08x] %.*s\n", source, (int)sz, (const char *)msg);
	return 0;
}

static int
quiet_logger_init(void *inst, struct skynet_context *ctx, const char *parm) {
	skynet_callback(ctx, NULL, quiet_logger_cb);
	return 0;
}

/* The modules a node in this test can launch, registered before each boot. */
static void insert_modules(void);

static void
run_node(int threads, const char *bootstrap, bool virtual_time) {
	skynet_module_init("");
	insert_modules();
	struct skynet_config config = {
	    .thread = threads,
	    .harbor = 0,
	    .profile = true,
	    .virtual_time = virtual_time,
	    .daemon = NULL,
	    .module_path = "",
	    .bootstrap = bootstrap,
	    .logger = NULL,
	    .logservice = "logger",
	};
	skynet_start(&config);
}

static void
stress_all_worker_counts(int *failed) {
	K = tt_stress() ? 300 : 60;
	for (int threads = 1; threads <= 8; threads++) {
		ATOM_STORE(&RECEIVED, 0);
		ATOM_STORE(&ORDER_ERRORS, 0);
		ATOM_STORE(&DOUBLE_ENTRY, 0);
		ATOM_STORE(&EXITED, 0);
		run_node(threads, "driver", false);
		TT_CHECK(ATOM_LOAD(&RECEIVED) == NSVC * (NSVC - 1) * K);
		TT_CHECK(ATOM_LOAD(&ORDER_ERRORS) == 0);
		TT_CHECK(ATOM_LOAD(&DOUBLE_ENTRY) == 0);
		TT_CHECK(ATOM_LOAD(&EXITED) == NSVC);
		TT_CHECK(skynet_context_total() == 0);
	}
}

/* dead: exits on its first message. asker: queues requests behind that. */
static int
dead_cb(struct skynet_context *ctx, void *ud, int type, int session, uint32_t source,
        const void *msg, size_t sz) {
	skynet_command(ctx, "EXIT", NULL);
	return 0;
}

static int
dead_init(void *inst, struct skynet_context *ctx, const char *parm) {
	skynet_callback(ctx, NULL, dead_cb);
	return 0;
}

#define NREQ 3

struct asker {
	uint32_t target;
	int sessions[NREQ];
	int errors_matched;
	int errors_wrong_source;
	int send_to_void;
	int send_to_void_named;
	int giveup_session;
};

static struct asker ASKER;

static int
asker_cb(struct skynet_context *ctx, void *ud, int type, int session, uint32_t source,
         const void *msg, size_t sz) {
	struct asker *a = &ASKER;
	if (type == PTYPE_ERROR) {
		for (int i = 0; i < NREQ; i++) {
			if (a->sessions[i] == session) {
				a->sessions[i] = 0;
				a->errors_matched++;
				if (source != a->target)
					a->errors_wrong_source++;
			}
		}
	}
	bool give_up = type == PTYPE_RESPONSE && source == 0 && session == a->giveup_session;
	if (a->errors_matched == NREQ || give_up)
		skynet_command(ctx, "EXIT", NULL);
	return 0;
}

static int
asker_init(void *inst, struct skynet_context *ctx, const char *parm) {
	struct asker *a = &ASKER;
	memset(a, 0, sizeof(*a));
	skynet_callback(ctx, NULL, asker_cb);
	a->target = skynet_context_new("dead", NULL);
	// One worker runs this init before any worker starts: the target cannot run yet.
	skynet_send(ctx, 0, a->target, PTYPE_TEXT, 0, "die", 3);
	for (int i = 0; i < NREQ; i++) {
		a->sessions[i] =
		    skynet_send(ctx, 0, a->target, PTYPE_TEXT | PTYPE_TAG_ALLOCSESSION, 0, "req", 3);
	}
	a->send_to_void = skynet_send(ctx, 0, 0x00abcdef, PTYPE_TEXT, 77, "x", 1);
	a->send_to_void_named = skynet_sendname(ctx, 0, ".nobody", PTYPE_TEXT, 78, "x", 1);
	// Virtual time: if no error ever arrives the node idles and this fires at once.
	const char *s = skynet_command(ctx, "TIMEOUT", "1000");
	a->giveup_session = atoi(s);
	return 0;
}

static void
dead_handle_requests_get_errors(int *failed) {
	run_node(1, "asker", true);
	TT_CHECK(ASKER.errors_matched == NREQ);
	TT_CHECK(ASKER.errors_wrong_source == 0);
	TT_CHECK(ASKER.send_to_void == SKYNET_EDEAD);
	TT_CHECK(ASKER.send_to_void_named == SKYNET_EDEAD);
	TT_CHECK(skynet_context_total() == 0);
}

/* Idle turns out of n that the gate lets spin. */
static int
spins_allowed(struct spin_gate *g, int n) {
	int allowed = 0;
	for (int i = 0; i < n; i++)
		allowed += spin_gate_allows(g);
	return allowed;
}

/*
 * The spin gate: open at first; closed after spins that find nothing or
 * lose their core (then only every SPIN_PROBE-th idle turn spins); open
 * again after spins that find work.
 */
static void
spin_gate_follows_hits(int *failed) {
	struct spin_gate g;
	spin_gate_init(&g);
	TT_CHECK(spins_allowed(&g, 100) == 100);
	for (int i = 0; i < 8; i++)
		spin_gate_record(&g, true, false);
	TT_CHECK(spins_allowed(&g, 100) == 100); // hits keep it open
	int misses = 0;
	while (spin_gate_allows(&g) && misses < 100) {
		spin_gate_record(&g, false, false);
		misses++;
	}
	TT_CHECK(misses >= 3 && misses <= 8);             // a few misses close it
	TT_CHECK(spins_allowed(&g, 8 * SPIN_PROBE) == 8); // closed: one probe in SPIN_PROBE
	for (int i = 0; i < 50; i++)
		spin_gate_record(&g, false, false); // the probes keep missing
	TT_CHECK(spins_allowed(&g, 8 * SPIN_PROBE) == 8);
	int hits = 0;
	do {
		spin_gate_record(&g, true, false); // the probes find work
		hits++;
	} while (spins_allowed(&g, SPIN_PROBE) != SPIN_PROBE && hits < 100);
	TT_CHECK(hits >= 4 && hits <= 8); // a few hits open it again
	spin_gate_init(&g);
	int aways = 0;
	while (spin_gate_allows(&g) && aways < 100) {
		spin_gate_record(&g, true, true); // found work, but the core was taken
		aways++;
	}
	TT_CHECK(aways == misses); // counts as a miss
}

static void
monitor_flags_endless_once(int *failed) {
	skynet_handle_init(0, skynet_context_grab, skynet_context_release); // skynet_error looks up
	struct skynet_monitor *sm = skynet_monitor_new();
	skynet_monitor_trigger(sm, 5, 0);
	TT_CHECK(skynet_monitor_check(sm) == 0); // first sight of this version
	skynet_monitor_trigger(sm, 0, 0);
	TT_CHECK(skynet_monitor_check(sm) == 0); // moved on
	skynet_monitor_trigger(sm, 5, 0x77);     // a message starts and never ends
	TT_CHECK(skynet_monitor_check(sm) == 0);
	TT_CHECK(skynet_monitor_check(sm) == 0x77); // stuck for a whole period: reported
	TT_CHECK(skynet_monitor_check(sm) == 0);    // once
	skynet_monitor_trigger(sm, 0, 0);
	TT_CHECK(skynet_monitor_check(sm) == 0);
	TT_CHECK(skynet_monitor_check(sm) == 0); // idle worker: nothing running
	skynet_monitor_delete(sm);
	skynet_handle_exit();
}

/* flood: queues 5000 messages to itself during init, then drains them and exits. */
static int
flood_cb(struct skynet_context *ctx, void *ud, int type, int session, uint32_t source,
         const void *msg, size_t sz) {
	int *left = ud;
	if (--*left == 0)
		skynet_command(ctx, "EXIT", NULL);
	return 0;
}

static int FLOOD_LEFT;

static int
flood_init(void *inst, struct skynet_context *ctx, const char *parm) {
	FLOOD_LEFT = 5000;
	skynet_callback(ctx, &FLOOD_LEFT, flood_cb);
	for (int i = 0; i < FLOOD_LEFT; i++)
		skynet_send(ctx, 0, skynet_context_handle(ctx), PTYPE_TEXT, 0, NULL, 0);
	return 0;
}

static void
overload_warned_once_per_doubling(int *failed) {
	OVERLOAD_N = 0;
	run_node(1, "flood", false);
	// 4999 left after the first pop: past 1024, 2048 and 4096 at once, one line.
	TT_CHECK(OVERLOAD_N == 1);
	TT_CHECK(OVERLOAD_SEEN[0] == 4999);
	TT_CHECK(FLOOD_LEFT == 0);
}

/*
 * idle wake: a lost-wakeup detector. Each round, in virtual time, the timer
 * fires a "poke" once every worker sleeps: its push wakes one worker, which
 * runs the poke, goes idle and spins, while the other worker sleeps on. An
 * outside thread X (standing in for the socket thread) sees the poke ran,
 * waits a varying few microseconds (so that over the rounds its pushes land
 * inside that spin), then pushes one message to "blocker" and one to "target". The
 * blocker is first in the global queue; its callback waits (blocked, like a
 * long computation) until the target ran. A target queue left in the global
 * queue while a worker sleeps does not run until the blocker gives up after
 * WAKE_DEADLINE_US: that round counts as a stall and ends the test. The
 * blocker then arms the next round's poke.
 */
#define WAKE_DEADLINE_US 5000000L

static uint32_t WAKE_BLOCKER, WAKE_TARGET, WAKE_POKE;
static int WAKE_ROUNDS;
static ATOM_INT WAKE_POKED; // round whose poke ran
static struct skynet_cond WAKE_COND;
static int WAKE_TARGET_RAN; // WAKE_COND: round whose target message ran
static int WAKE_DONE;       // WAKE_COND: round whose blocker message finished
static int WAKE_STALLS;     // WAKE_COND
static pthread_t WAKE_THREAD;

static uint64_t
now_us(void) {
	struct timespec ti;
	clock_gettime(CLOCK_MONOTONIC, &ti);
	return (uint64_t)ti.tv_sec * 1000000 + (uint64_t)ti.tv_nsec / 1000;
}

static inline void
pause_cpu(void) {
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* Caller holds WAKE_COND: wait until *v reaches round or deadline_us passes. */
static bool
wait_round(int *v, int round, long deadline_us) {
	uint64_t deadline = now_us() + deadline_us;
	while (*v < round) {
		uint64_t now = now_us();
		if (now >= deadline)
			return false;
		skynet_cond_timedwait(&WAKE_COND, (long)(deadline - now));
	}
	return true;
}

static void
set_round(int *v, int round) {
	skynet_cond_lock(&WAKE_COND);
	*v = round;
	skynet_cond_broadcast(&WAKE_COND);
	skynet_cond_unlock(&WAKE_COND);
}

static void
wake_push(uint32_t handle, int session) {
	struct skynet_message msg = {
	    .source = 0, .session = session, .data = NULL, .sz = skynet_message_sz(PTYPE_CLIENT, 0)};
	skynet_post(handle, &msg);
}

/* Spin until the poke of round ran (it takes microseconds); false after the deadline. */
static bool
wait_poked(int round) {
	uint64_t deadline = now_us() + WAKE_DEADLINE_US;
	while (ATOM_LOAD(&WAKE_POKED) < round) {
		pause_cpu();
		if (now_us() > deadline)
			return false;
	}
	return true;
}

static void *
wake_pusher(void *ud) {
	uint32_t rng = 12345;
	for (int round = 1; round <= WAKE_ROUNDS; round++) {
		if (!wait_poked(round))
			break;
		rng = rng * 1103515245 + 12345;
		// The poke's worker spins for 2000 pauses; X is usually late already.
		int delay = (int)((rng >> 16) % 512);
		for (int i = 0; i < delay; i++)
			pause_cpu();
		wake_push(WAKE_BLOCKER, round);
		wake_push(WAKE_TARGET, round);
		skynet_cond_lock(&WAKE_COND);
		bool done = wait_round(&WAKE_DONE, round, 2 * WAKE_DEADLINE_US);
		bool stalled = WAKE_STALLS > 0;
		skynet_cond_unlock(&WAKE_COND);
		if (!done || stalled)
			break; // one stall proves it: do not wait out more deadlines
	}
	wake_push(WAKE_BLOCKER, -1);
	wake_push(WAKE_TARGET, -1);
	wake_push(WAKE_POKE, -1);
	return NULL;
}

static int
wake_cb(struct skynet_context *ctx, void *ud, int type, int session, uint32_t source,
        const void *msg, size_t sz) {
	uint32_t self = skynet_context_handle(ctx);
	if (session < 0) {
		skynet_command(ctx, "EXIT", NULL);
	} else if (self == WAKE_POKE) {
		ATOM_STORE(&WAKE_POKED, session);
	} else if (self == WAKE_TARGET) {
		set_round(&WAKE_TARGET_RAN, session);
	} else {
		skynet_cond_lock(&WAKE_COND);
		if (!wait_round(&WAKE_TARGET_RAN, session, WAKE_DEADLINE_US))
			WAKE_STALLS++;
		WAKE_DONE = session;
		skynet_cond_broadcast(&WAKE_COND);
		skynet_cond_unlock(&WAKE_COND);
		if (session < WAKE_ROUNDS)
			skynet_timeout(WAKE_POKE, 1, session + 1); // fires once all workers sleep
	}
	return 0;
}

static int
wake_init(void *inst, struct skynet_context *ctx, const char *parm) {
	skynet_callback(ctx, NULL, wake_cb);
	return 0;
}

static int
wake_driver_init(void *inst, struct skynet_context *ctx, const char *parm) {
	WAKE_BLOCKER = skynet_context_new("wake", NULL);
	WAKE_TARGET = skynet_context_new("wake", NULL);
	WAKE_POKE = skynet_context_new("wake", NULL);
	if (pthread_create(&WAKE_THREAD, NULL, wake_pusher, NULL) != 0)
		return 1;
	skynet_timeout(WAKE_POKE, 1, 1);
	skynet_callback(ctx, NULL, driver_cb);
	skynet_send(ctx, 0, skynet_context_handle(ctx), PTYPE_TEXT, 0, "exit", 4);
	return 0;
}

static void
idle_worker_woken_for_queued_work(int *failed) {
	WAKE_ROUNDS = tt_stress() ? 3000 : 1000;
	ATOM_STORE(&WAKE_POKED, 0);
	skynet_cond_init(&WAKE_COND);
	WAKE_TARGET_RAN = WAKE_DONE = WAKE_STALLS = 0;
	run_node(2, "wake_driver", true);
	pthread_join(WAKE_THREAD, NULL);
	TT_CHECK(WAKE_STALLS == 0);
	TT_CHECK(WAKE_DONE == WAKE_ROUNDS);
	TT_CHECK(skynet_context_total() == 0);
	skynet_cond_destroy(&WAKE_COND);
}

/*
 * own pushes: two services pass a message back and forth, each busy for
 * RALLY_BUSY_US (longer than a spin, so an idle worker gives up spinning
 * and sleeps). The worker running one's message pushes the other's queue
 * without waking anyone and takes it itself when the message ends.
 * Short rallies (RALLY_SHORT hops, started by a virtual-time timeout once
 * both workers sleep) cost the timer's one wake each and nothing more;
 * waking on each push costs one wake per hop. A long rally (RALLY_LONG
 * hops in a row) wakes a sleeper once per OWN_CHAIN_WAKE (8) hops, so a
 * second worker can share a long chain: at least once, at most about
 * RALLY_LONG / 8 times.
 */
#define RALLY_ROUNDS  20
#define RALLY_SHORT   3
#define RALLY_LONG    300
#define RALLY_BUSY_US 100

static uint32_t RALLY[2];
static uint32_t RALLY_DRIVER;
static int RALLY_ROUND; // driver only
static int RALLY_HOPS;  // hops per rally of this run
static int RALLY_HOP;   // the last hop run (the hops are sequential)
static uint64_t RALLY_WAKES_AT_START;
static uint64_t RALLY_WAKES;

static void
busy_us(int us) {
	uint64_t until = now_us() + (uint64_t)us;
	while (now_us() < until)
		pause_cpu();
}

static int
rally_cb(struct skynet_context *ctx, void *ud, int type, int session, uint32_t source,
         const void *msg, size_t sz) {
	uint32_t self = skynet_context_handle(ctx);
	uint32_t other = self == RALLY[0] ? RALLY[1] : RALLY[0];
	if (session < 0) {
		skynet_command(ctx, "EXIT", NULL);
		return 0;
	}
	busy_us(RALLY_BUSY_US);
	RALLY_HOP = session;
	if (session < RALLY_HOPS)
		skynet_send(ctx, 0, other, PTYPE_TEXT, session + 1, NULL, 0);
	else
		skynet_send(ctx, 0, RALLY_DRIVER, PTYPE_TEXT, 0, NULL, 0); // the rally is over
	return 0;
}

static int
rally_init(void *inst, struct skynet_context *ctx, const char *parm) {
	skynet_callback(ctx, NULL, rally_cb);
	return 0;
}

/* A timeout starts each rally; the rally's last hop reports back. */
static int
rally_driver_cb(struct skynet_context *ctx, void *ud, int type, int session, uint32_t source,
                const void *msg, size_t sz) {
	if (type == PTYPE_RESPONSE) {
		if (RALLY_ROUND++ == 0)
			RALLY_WAKES_AT_START = skynet_worker_wakeups();
		skynet_send(ctx, 0, RALLY[0], PTYPE_TEXT, 1, NULL, 0);
		return 0;
	}
	int rounds = RALLY_HOPS == RALLY_SHORT ? RALLY_ROUNDS : 1;
	if (RALLY_ROUND < rounds) {
		skynet_command(ctx, "TIMEOUT", "1");
		return 0;
	}
	RALLY_WAKES = skynet_worker_wakeups() - RALLY_WAKES_AT_START;
	for (int i = 0; i < 2; i++)
		skynet_send(ctx, 0, RALLY[i], PTYPE_TEXT, -1, NULL, 0);
	skynet_command(ctx, "EXIT", NULL);
	return 0;
}

static int
rally_driver_init(void *inst, struct skynet_context *ctx, const char *parm) {
	RALLY_DRIVER = skynet_context_handle(ctx);
	RALLY[0] = skynet_context_new("rally", NULL);
	RALLY[1] = skynet_context_new("rally", NULL);
	RALLY_ROUND = 0;
	RALLY_HOP = 0;
	skynet_callback(ctx, NULL, rally_driver_cb);
	skynet_command(ctx, "TIMEOUT", "1");
	return 0;
}

static void
own_pushes_wake_nobody(int *failed) {
	RALLY_HOPS = RALLY_SHORT;
	run_node(2, "rally_driver", true);
	TT_CHECK(RALLY_ROUND == RALLY_ROUNDS && RALLY_HOP == RALLY_SHORT);
	// One wake per rally is the timer's; waking on each push would add RALLY_SHORT more.
	TT_CHECK(RALLY_WAKES <= RALLY_ROUNDS + RALLY_ROUNDS / 2);
	if (RALLY_WAKES > RALLY_ROUNDS + RALLY_ROUNDS / 2)
		fprintf(stderr, "  %llu wakes in %d short rallies\n", (unsigned long long)RALLY_WAKES,
		        RALLY_ROUNDS);
	TT_CHECK(skynet_context_total() == 0);
	RALLY_HOPS = RALLY_LONG;
	run_node(2, "rally_driver", true);
	TT_CHECK(RALLY_HOP == RALLY_LONG);
	TT_CHECK(RALLY_WAKES >= 1 && RALLY_WAKES <= RALLY_LONG / 8 + 4);
	if (RALLY_WAKES < 1 || RALLY_WAKES > RALLY_LONG / 8 + 4)
		fprintf(stderr, "  %llu wakes in a rally of %d hops\n", (unsigned long long)RALLY_WAKES,
		        RALLY_LONG);
	TT_CHECK(skynet_context_total() == 0);
}

/*
 * idle node: a node of 2 workers whose only work is a service ticking
 * every 10 ms (real time) for IDLE_TICKS ticks. Each tick wakes a worker,
 * which finds nothing more, spins briefly at most and sleeps. The process's
 * CPU time over the wall time of the ticks stays under IDLE_CPU_CAP (a
 * worker that kept spinning would hold a whole core: a ratio near 1).
 */
#define IDLE_TICKS   30
#define IDLE_CPU_CAP 0.10

static int IDLE_TICK;
static uint64_t IDLE_WALL0;
static uint64_t IDLE_CPU0;
static double IDLE_RATIO;

static uint64_t
cpu_us(void) {
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static int
idler_cb(struct skynet_context *ctx, void *ud, int type, int session, uint32_t source,
         const void *msg, size_t sz) {
	if (++IDLE_TICK == 1) {
		IDLE_WALL0 = now_us(); // measured from the first tick: boot is not idle
		IDLE_CPU0 = cpu_us();
	} else if (IDLE_TICK == IDLE_TICKS) {
		IDLE_RATIO = (double)(cpu_us() - IDLE_CPU0) / (double)(now_us() - IDLE_WALL0);
		skynet_command(ctx, "EXIT", NULL);
		return 0;
	}
	skynet_command(ctx, "TIMEOUT", "1");
	return 0;
}

static int
idler_init(void *inst, struct skynet_context *ctx, const char *parm) {
	IDLE_TICK = 0;
	skynet_callback(ctx, NULL, idler_cb);
	skynet_command(ctx, "TIMEOUT", "1");
	return 0;
}

static void
idle_node_costs_no_cpu(int *failed) {
	IDLE_RATIO = 1;
	run_node(2, "idler", false);
	TT_CHECK(IDLE_TICK == IDLE_TICKS);
	TT_CHECK(IDLE_RATIO < IDLE_CPU_CAP);
	if (getenv("TT_VERBOSE") || IDLE_RATIO >= IDLE_CPU_CAP)
		fprintf(stderr, "  idle node: %.4f of a core\n", IDLE_RATIO);
	TT_CHECK(skynet_context_total() == 0);
}

/*
 * long message: in virtual time a timeout fires once both workers sleep and
 * wakes one, which runs "holder". Its message pushes "waiter" (no wake: the
 * worker owes it) and then blocks until the waiter ran, as a long
 * computation would. The timer thread sees the owed wake and wakes the
 * sleeping worker for the waiter; without it the waiter would wait for the
 * holder's message to end, and the holder gives up after LONG_DEADLINE_US.
 */
#define LONG_DEADLINE_US 5000000L

static uint32_t LONG_WAITER;
static struct skynet_cond LONG_COND;
static bool LONG_WAITER_RAN; // LONG_COND
static bool LONG_IN_TIME;

static int
long_waiter_cb(struct skynet_context *ctx, void *ud, int type, int session, uint32_t source,
               const void *msg, size_t sz) {
	skynet_cond_lock(&LONG_COND);
	LONG_WAITER_RAN = true;
	skynet_cond_broadcast(&LONG_COND);
	skynet_cond_unlock(&LONG_COND);
	skynet_command(ctx, "EXIT", NULL);
	return 0;
}

static int
long_waiter_init(void *inst, struct skynet_context *ctx, const char *parm) {
	skynet_callback(ctx, NULL, long_waiter_cb);
	return 0;
}

static int
long_holder_cb(struct skynet_context *ctx, void *ud, int type, int session, uint32_t source,
               const void *msg, size_t sz) {
	skynet_send(ctx, 0, LONG_WAITER, PTYPE_TEXT, 0, NULL, 0);
	uint64_t deadline = now_us() + LONG_DEADLINE_US;
	skynet_cond_lock(&LONG_COND);
	uint64_t now;
	while (!LONG_WAITER_RAN && (now = now_us()) < deadline)
		skynet_cond_timedwait(&LONG_COND, (long)(deadline - now));
	LONG_IN_TIME = LONG_WAITER_RAN;
	skynet_cond_unlock(&LONG_COND);
	skynet_command(ctx, "EXIT", NULL);
	return 0;
}

static int
long_holder_init(void *inst, struct skynet_context *ctx, const char *parm) {
	LONG_WAITER = skynet_context_new("long_waiter", NULL);
	skynet_callback(ctx, NULL, long_holder_cb);
	skynet_command(ctx, "TIMEOUT", "1");
	return 0;
}

static void
long_message_does_not_hold_its_pushes(int *failed) {
	skynet_cond_init(&LONG_COND);
	LONG_WAITER_RAN = LONG_IN_TIME = false;
	uint64_t nudges = skynet_worker_nudges();
	run_node(2, "long_holder", true);
	TT_CHECK(LONG_IN_TIME);
	TT_CHECK(skynet_worker_nudges() > nudges);
	TT_CHECK(skynet_context_total() == 0);
	skynet_cond_destroy(&LONG_COND);
}

/*
 * sighup: after a few virtual-time timeouts (so the timer thread has looked
 * at the pending-signal flag already), a service sends SIGHUP to the main
 * thread, which is blocked joining the node's threads (where a kill -HUP
 * from outside usually lands), then polls with timeouts until the logger got
 * the reopen request. Timeouts in virtual time take no time of their own,
 * so the bound is many polls: under ASan, on a busy machine, 100 of them
 * once passed before the signal had gone its way. The flag is written on one thread and read on the
 * timer thread: TSan reports a data race unless it is atomic.
 */
#define HUP_MAX_POLLS 100000 // virtual time: polls are fast, and a loaded machine may need many

static pthread_t MAIN_THREAD;
static int HUP_POLLS;

static int
hup_cb(struct skynet_context *ctx, void *ud, int type, int session, uint32_t source,
       const void *msg, size_t sz) {
	if (type == PTYPE_RESPONSE && ++HUP_POLLS == 3) {
		pthread_kill(MAIN_THREAD, SIGHUP);
	} else if ((HUP_POLLS > 3 && ATOM_LOAD(&HUP_SEEN)) || HUP_POLLS >= HUP_MAX_POLLS) {
		skynet_command(ctx, "EXIT", NULL);
		return 0;
	}
	skynet_command(ctx, "TIMEOUT", "10");
	return 0;
}

static int
hup_init(void *inst, struct skynet_context *ctx, const char *parm) {
	skynet_callback(ctx, NULL, hup_cb);
	skynet_command(ctx, "TIMEOUT", "10");
	return 0;
}

static void
sighup_reaches_logger(int *failed) {
	MAIN_THREAD = pthread_self();
	ATOM_STORE(&HUP_SEEN, 0);
	HUP_POLLS = 0;
	run_node(2, "hup", true);
	TT_CHECK(ATOM_LOAD(&HUP_SEEN) == 1);
	TT_CHECK(HUP_POLLS < HUP_MAX_POLLS);
}

static void
insert_modules(void) {
	static const struct skynet_module mods[] = {
	    {.name = "logger", .init = quiet_logger_init},
	    {.name = "stress", .create = stress_create, .init = stress_init, .release = stress_release},
	    {.name = "driver", .init = driver_init},
	    {.name = "dead", .init = dead_init},
	    {.name = "asker", .init = asker_init},
	    {.name = "flood", .init = flood_init},
	    {.name = "wake", .init = wake_init},
	    {.name = "wake_driver", .init = wake_driver_init},
	    {.name = "hup", .init = hup_init},
	    {.name = "rally", .init = rally_init},
	    {.name = "rally_driver", .init = rally_driver_init},
	    {.name = "long_waiter", .init = long_waiter_init},
	    {.name = "long_holder", .init = long_holder_init},
	    {.name = "idler", .init = idler_init},
	};
	for (size_t i = 0; i < sizeof(mods) / sizeof(mods[0]); i++)
		skynet_module_insert(&mods[i]);
}

int
main(void) {
	skynet_globalinit();
	skynet_env_init();
	TT_RUN(stress_all_worker_counts);
	TT_RUN(dead_handle_requests_get_errors);
	TT_RUN(spin_gate_follows_hits);
	TT_RUN(monitor_flags_endless_once);
	TT_RUN(overload_warned_once_per_doubling);
	TT_RUN(idle_worker_woken_for_queued_work);
	TT_RUN(own_pushes_wake_nobody);
	TT_RUN(long_message_does_not_hold_its_pushes);
	TT_RUN(idle_node_costs_no_cpu);
	TT_RUN(sighup_reaches_logger);
	skynet_env_exit();
	skynet_globalexit();
	return tt_summary();
}
