/*
 * C-level message throughput and round-trip latency on an in-process node
 * with 2 workers (static modules, the real scheduler).
 *
 *   mq.c.send_1to1_per_s    1 sender -> 1 receiver
 *   mq.c.send_4to1_per_s    4 senders -> 1 receiver
 *   mq.c.send_8pairs_per_s  8 independent sender/receiver pairs
 *   mq.c.rtt_us             request/response between two services, idle workers
 *
 * Each throughput figure is the median of 5 runs. Senders send BATCH copied
 * 16-byte messages per callback, then a tick to themselves.
 */
#include "skynet.h"
#include "skynet_env.h"
#include "skynet_module.h"
#include "skynet_server.h"
#include "skynet_start.h"
#include "atomic.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCH  64
#define RUNS   5
#define MAXSVC 16

static int NSRC, NDST;
static long PER_SRC; // messages each source sends
static uint32_t DST[MAXSVC];
static ATOM_INT DONE_SINKS;
static double T_START, T_END;

static double
now_s(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct sink {
	long expect;
	long got;
};

static int
sink_cb(struct skynet_context *ctx, void *ud, int type, int session, uint32_t source,
        const void *msg, size_t sz) {
	struct sink *s = ud;
	if (++s->got == s->expect) {
		if (ATOM_FINC(&DONE_SINKS) + 1 == NDST)
			T_END = now_s();
		skynet_command(ctx, "EXIT", NULL);
	}
	return 0;
}

static void *
sink_create(void) {
	return skynet_calloc(1, sizeof(struct sink));
}

static void
sink_release(void *p) {
	skynet_free(p);
}

static int
sink_init(void *inst, struct skynet_context *ctx, const char *parm) {
	struct sink *s = inst;
	s->expect = atol(parm);
	skynet_callback(ctx, s, sink_cb);
	return 0;
}

struct src {
	uint32_t target;
	long left;
};

static int
src_cb(struct skynet_context *ctx, void *ud, int type, int session, uint32_t source,
       const void *msg, size_t sz) {
	struct src *s = ud;
	char payload[16] = "0123456789abcde";
	for (int i = 0; i < BATCH && s->left > 0; i++, s->left--)
		skynet_send(ctx, 0, s->target, PTYPE_CLIENT, 0, payload, sizeof(payload));
	if (s->left > 0)
		skynet_send(ctx, 0, skynet_context_handle(ctx), PTYPE_TEXT, 0, NULL, 0);
	else
		skynet_command(ctx, "EXIT", NULL);
	return 0;
}

static void *
src_create(void) {
	return skynet_calloc(1, sizeof(struct src));
}

static int
src_init(void *inst, struct skynet_context *ctx, const char *parm) {
	struct src *s = inst;
	s->target = (uint32_t)strtoul(parm, NULL, 16);
	s->left = PER_SRC;
	skynet_callback(ctx, s, src_cb);
	skynet_send(ctx, 0, skynet_context_handle(ctx), PTYPE_TEXT, 0, NULL, 0);
	return 0;
}

static int
exit_cb(struct skynet_context *ctx, void *ud, int type, int session, uint32_t source,
        const void *msg, size_t sz) {
	skynet_command(ctx, "EXIT", NULL);
	return 0;
}

static int
driver_init(void *inst, struct skynet_context *ctx, const char *parm) {
	char arg[32];
	for (int i = 0; i < NDST; i++) {
		long expect = PER_SRC * NSRC / NDST;
		snprintf(arg, sizeof(arg), "%ld", expect);
		DST[i] = skynet_context_new("sink", arg);
	}
	T_START = now_s();
	for (int i = 0; i < NSRC; i++) {
		snprintf(arg, sizeof(arg), "%x", DST[i % NDST]);
		skynet_context_new("src", arg);
	}
	skynet_callback(ctx, NULL, exit_cb); // the driver leaves once started
	skynet_send(ctx, 0, skynet_context_handle(ctx), PTYPE_TEXT, 0, NULL, 0);
	return 0;
}

/* rtt: ping sends a request to pong (which answers), ROUNDS times, one at a time. */
static long ROUNDS;

struct ping {
	uint32_t pong;
	long left;
};

static int
ping_cb(struct skynet_context *ctx, void *ud, int type, int session, uint32_t source,
        const void *msg, size_t sz) {
	struct ping *p = ud;
	if (--p->left <= 0) {
		T_END = now_s();
		char pong[16];
		snprintf(pong, sizeof(pong), ":%x", p->pong);
		skynet_command(ctx, "KILL", pong);
		skynet_command(ctx, "EXIT", NULL);
		return 0;
	}
	skynet_send(ctx, 0, p->pong, PTYPE_TEXT | PTYPE_TAG_ALLOCSESSION, 0, "ping", 4);
	return 0;
}

static int
pong_cb(struct skynet_context *ctx, void *ud, int type, int session, uint32_t source,
        const void *msg, size_t sz) {
	skynet_send(ctx, 0, source, PTYPE_RESPONSE, session, (void *)msg, sz);
	return 0;
}

static int
pong_init(void *inst, struct skynet_context *ctx, const char *parm) {
	skynet_callback(ctx, NULL, pong_cb);
	return 0;
}

static void *
ping_create(void) {
	return skynet_calloc(1, sizeof(struct ping));
}

static int
ping_init(void *inst, struct skynet_context *ctx, const char *parm) {
	struct ping *p = inst;
	p->pong = skynet_context_new("pong", NULL);
	p->left = ROUNDS + 1;
	skynet_callback(ctx, p, ping_cb);
	T_START = now_s();
	skynet_send(ctx, 0, p->pong, PTYPE_TEXT | PTYPE_TAG_ALLOCSESSION, 0, "ping", 4);
	return 0;
}

static int
logger_cb(struct skynet_context *ctx, void *ud, int type, int session, uint32_t source,
          const void *msg, size_t sz) {
	return 0;
}

static int
logger_init(void *inst, struct skynet_context *ctx, const char *parm) {
	skynet_callback(ctx, NULL, logger_cb);
	return 0;
}

static void
run_node(const char *bootstrap) {
	static const struct skynet_module mods[] = {
	    {.name = "logger", .init = logger_init},
	    {.name = "sink", .create = sink_create, .init = sink_init, .release = sink_release},
	    {.name = "src", .create = src_create, .init = src_init, .release = sink_release},
	    {.name = "driver", .init = driver_init},
	    {.name = "ping", .create = ping_create, .init = ping_init, .release = sink_release},
	    {.name = "pong", .init = pong_init},
	};
	skynet_module_init("");
	for (size_t i = 0; i < sizeof(mods) / sizeof(mods[0]); i++)
		skynet_module_insert(&mods[i]);
	struct skynet_config config = {
	    .thread = 2,
	    .harbor = 0,
	    .profile = true,
	    .module_path = "",
	    .bootstrap = bootstrap,
	    .logservice = "logger",
	};
	skynet_start(&config);
}

static int
cmp_double(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void
throughput(const char *name, int nsrc, int ndst, long total) {
	double rate[RUNS];
	NSRC = nsrc;
	NDST = ndst;
	PER_SRC = total / nsrc;
	for (int r = 0; r < RUNS; r++) {
		ATOM_STORE(&DONE_SINKS, 0);
		run_node("driver");
		rate[r] = (double)(PER_SRC * nsrc) / (T_END - T_START);
	}
	qsort(rate, RUNS, sizeof(double), cmp_double);
	printf("BENCH name=%s value=%.0f unit=msgs/s\n", name, rate[RUNS / 2]);
	fflush(stdout);
}

int
main(void) {
	skynet_globalinit();
	skynet_env_init();
	long total = 2000000;
	throughput("mq.c.send_1to1_per_s", 1, 1, total);
	throughput("mq.c.send_4to1_per_s", 4, 1, total);
	throughput("mq.c.send_8pairs_per_s", 8, 8, total);
	ROUNDS = 100000;
	run_node("ping");
	printf("BENCH name=mq.c.rtt_us value=%.2f unit=us\n", (T_END - T_START) * 1e6 / ROUNDS);
	skynet_env_exit();
	skynet_globalexit();
	return 0;
}
