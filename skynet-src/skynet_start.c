/*
 * Threads and boot.
 *
 * Workers: each loops dispatching queues. One with nothing to do may first
 * spin, watching the global queue (at most MAX_SPINNERS at a time), then
 * sleeps on the shared condition variable (sleep counts the sleepers).
 *
 * The spin pays for itself or does not happen. A hit (work shows up while
 * spinning) saves a futex wake and the tens of microseconds a sleeping
 * thread takes to run again; a miss burns SPIN_NS of a core. So:
 * (a) The spin is polite: every SPIN_CHECK_ROUNDS pauses it calls
 *     sched_yield(), so a runnable thread waiting for this core (the other
 *     node of a cluster on the same machine, a database, the socket thread)
 *     runs first. Measured with two nodes of 2 workers on 2 cores: the
 *     sequential cross-node call went from 250-263 us to 107-146 us; local
 *     calls were unchanged (bench_cluster.sh, config.bench).
 * (b) It is gated by its hit rate (skynet_spin.h): each worker keeps an
 *     average of its spins' outcomes and spins only while at least half
 *     of them found work. With the gate closed it still spins on every
 *     SPIN_PROBE-th idle turn, so the average follows the load.
 * (c) Oversubscription closes it: a spin that lasted over SPIN_AWAY_NS of
 *     wall time had its core taken by another thread for that long (more
 *     runnable threads than cores); it counts as a miss whatever it found.
 * The constants, and the figures that chose them, are in docs/scheduling.md.
 * The socket thread (epoll_wait) and the timer thread (a timed condition
 * wait) never spin.
 *
 * The global queue calls wakeup() after every
 * push, and after every pop that leaves other queues behind: if a worker is
 * spinning it will take a queue, so nobody is woken (request/response
 * ping-pong then costs no futex calls); otherwise one sleeper is signalled.
 *
 * A worker's own pushes wake nobody while its message runs
 * (skynet_server.c, dispatch_message_deferred): when the message ends, the
 * worker pays the wake if its turn goes on with the same service, and
 * otherwise pops the global queue itself, which wakes another worker only
 * if more than one queue waits. So a short chain of messages inside one
 * node (caller, cluster sender, caller again) runs on the worker that has
 * it, with no futex call and no sleeper woken to find the queue already
 * taken. A long chain (OWN_CHAIN_WAKE = 8 messages in a row, each leaving
 * work for the next, without the worker going idle) pays one wake, so a
 * second worker can join and the two hand the chain to each other while
 * spinning, as a sequential call between two local services does: on one
 * worker it ran 470-510k calls/s, shared 600-640k. A cross-node call's
 * chain is 2-3 messages per node, under 8.
 * The turn's end also lets go of a drained queue (skynet_mq_leave) instead
 * of handing it back empty, which woke a worker for nothing.
 * Measured on two nodes of 2 workers on 2 cores (bench_cluster.sh, 5
 * alternating runs, medians): the sequential cross-node call went from 156
 * to 110 us, and the CPU per call from 164 to 125 us; neither change alone
 * moved them (the deferred wake came back as the empty hand-back's wake).
 * docs/scheduling.md has the figures.
 * The price: a queue pushed by a message that runs long waits for that
 * message to end, or for the timer thread: each time it wakes (every tick
 * while timers are pending, at least every TIMER_MAX_SLEEP_US), if the
 * global queue holds a queue and some worker's monitor record says its
 * message owes a wake (skynet_monitor_owing), it wakes a sleeper. A
 * service in an endless loop therefore delays what it sent by 100 ms at
 * most, never forever. Only owed wakes are nudged, so a lost wake-up of
 * rules (1) and (2) below still shows as a stall (test_sched).
 *
 * No lost wakeup: while the global queue holds a queue and a worker
 * sleeps, some other worker is awake and bound to pop it (the timer's
 * nudge only bounds the wait behind a long message). Three rules give this.
 * (0) A deferred push is made by a worker that is awake and bound to pop
 *     the global queue when its message ends, or to wake someone then.
 * (1) A push meets a sleeping or spinning worker. A worker leaving the spin
 *     decrements spinning, then (under the mutex) increments sleep and
 *     re-checks the global queue; a pusher appends to the global queue,
 *     then after a full fence reads spinning and sleep. In the total order
 *     of those seq-cst operations either the worker sees the queue, or the
 *     pusher sees it spinning (it sees the queue before it stops, or when it
 *     re-checks on its way to sleep) or sleeping (and signals it: the
 *     sleeper holds the mutex from its re-check until it waits).
 * (2) A spinner absorbs any number of pushes but takes one queue. Without
 *     more, queues pushed during one spin would wait, next to sleeping
 *     workers, until that one finished its message (forever, if it loops):
 *     no later push need come to wake anyone. So the pop that takes a queue
 *     and leaves others calls wakeup() again, from a worker that no longer
 *     counts as spinning: each queue wakes the next worker in turn. The pop
 *     and its look at the rest share the global lock with the pushes, so a
 *     queue appended after that look was pushed after the popper stopped
 *     spinning and falls under (1).
 * A worker woken for a queue that another worker took first finds nothing
 * and goes back to sleep, which costs a futex call and loses nothing. The
 * timer thread therefore never wakes workers. test_sched's idle wake case
 * pushes two queues into a spin while the other worker sleeps; without (2)
 * the second waits for the first's message to end.
 *
 * Timer thread: advances the wheel to the monotonic clock, then sleeps
 * until the tick of the next pending deadline (at most TIMER_MAX_SLEEP_US),
 * instead of polling every 2.5 ms: an idle node costs next to nothing and
 * timers fire at their tick boundary. An earlier add kicks it awake (see
 * skynet_timer_wait_us); so does the worker that finds no service left.
 * In virtual time it instead waits until the node is idle (every worker
 * asleep and the global queue empty; the last worker to fall asleep kicks
 * it) and jumps the clock to the next deadline. It also forwards SIGHUP to
 * the logger and notices when the last service exited: it then sets quit
 * and wakes everyone.
 *
 * Socket thread: runs skynet_socket_poll until told to exit (by the timer
 * thread, once the last service is gone). It needs no wake-up logic of its
 * own: every event is a message push, and the push wakes a worker. In
 * virtual time the node is idle only when the socket thread also is (no
 * command queued, no event ready: skynet_socket_is_idle), and the socket
 * thread kicks the timer thread when it becomes idle, as the last worker
 * to fall asleep does. The socket thread counts as idle only after
 * 10 ms without an event, and turns Nagle off in this mode (socket_server.c),
 * so traffic over loopback between services is delivered before the clock
 * jumps; a peer outside the process is not waited for.
 *
 * Monitor thread: every 5 s checks each worker's monitor record. It also
 * gives freed memory back to the system: glibc keeps what services free in
 * its arenas (per-thread heaps are only shrunk from the top), so after a
 * burst of connections the process would stay at its peak. When services
 * were freed since its last look (skynet_context_released moved), the
 * monitor calls malloc_trim(0), which releases the free pages inside every
 * arena. Config `malloc_trim = false` turns it off.
 *
 * Lock order: worker cond mutex, then timer kick mutex. A spurious early
 * wake of the monitor (only stop_all signals it) just ends it sooner.
 */
#include "skynet_start.h"

#include "skynet.h"
#include "skynet_budget.h"
#include "skynet_command.h"
#include "skynet_daemon.h"
#include "skynet_env.h"
#include "skynet_flow.h"
#include "skynet_handle.h"
#include "skynet_harbor.h"
#include "skynet_module.h"
#include "skynet_monitor.h"
#include "skynet_mq.h"
#include "skynet_server.h"
#include "skynet_socket_internal.h"
#include "skynet_spin.h"
#include "skynet_timer.h"
#include "skynet_profiler.h"
#include "atomic.h"
#include "skynet_cond.h"

#include <malloc.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TIMER_MAX_SLEEP_US    100000 // bounds SIGHUP handling latency
#define TIMER_VIRTUAL_WAIT_US 10000
#define MONITOR_PERIOD_S      5
#define MAX_SPINNERS          1
#define SPIN_NS               50000  // the longest spin
#define SPIN_AWAY_NS          200000 // a spin longer than this lost its core
#define SPIN_CHECK_ROUNDS     64     // pauses between a yield and a look at the clock

struct monitor {
	int count;
	struct skynet_monitor **m; // owned, one per worker
	struct skynet_cond cond;   // workers sleep here
	struct skynet_cond kick;   // the timer thread sleeps here
	bool kicked;               // kick's mutex: a wake-up the timer thread has not seen
	struct skynet_cond idle;   // the monitor thread waits here between checks
	ATOM_INT sleep;            // workers asleep on cond
	ATOM_INT spinning;         // workers spinning for work
	ATOM_INT quit;
	bool virtual_time;
	bool trim;         // config malloc_trim
	size_t trimmed_at; // monitor thread: skynet_context_released() at the last trim
};

struct worker_parm {
	struct monitor *m;
	int id;
	int weight;
	struct spin_gate gate; // whether to spin (skynet_spin.h)
};

static struct monitor *THREADS = NULL; // the threads' shared state, while the node runs
/*
 * Set by the SIGHUP handler, on whichever thread the signal lands; cleared by
 * the timer thread. An atomic (lock-free for int, so safe in a handler): a
 * volatile flag would be a data race between those two threads.
 */
static ATOM_INT SIGHUP_PENDING = 0;
/*
 * Jobs that threads outside the workers owe the node (skynet_outside_add):
 * while above zero, is_idle is false. Such a thread posts its answer before
 * it subtracts, so reading zero here means every answer is in a mailbox.
 */
static ATOM_INT OUTSIDE_JOBS = 0;

void
skynet_outside_add(int delta) {
	ATOM_FADD(&OUTSIDE_JOBS, delta);
}

static void
handle_hup(int signal) {
	if (signal == SIGHUP)
		ATOM_STORE(&SIGHUP_PENDING, 1);
}

static ATOM_U64 WAKEUPS = 0; // sleepers signalled, for skynet_worker_wakeups
static ATOM_U64 NUDGES = 0;  // the timer thread's wakes for owed wake-ups

uint64_t
skynet_worker_wakeups(void) {
	return ATOM_LOAD_RELAXED(&WAKEUPS);
}

uint64_t
skynet_worker_nudges(void) {
	return ATOM_LOAD_RELAXED(&NUDGES);
}

/* Signal one sleeper unless a worker spins (it will take the work). True when one was signalled. */
static bool
wake_one(void) {
	struct monitor *m = THREADS;
	ATOM_FENCE(); // order the global-queue append before these reads (see top comment)
	if (ATOM_LOAD(&m->spinning) > 0)
		return false;
	if (ATOM_LOAD(&m->sleep) == 0)
		return false;
	ATOM_FADD_RELAXED(&WAKEUPS, 1);
	skynet_cond_lock(&m->cond);
	skynet_cond_signal(&m->cond);
	skynet_cond_unlock(&m->cond);
	return true;
}

/* The global queue's wake-up hook. */
static void
wakeup(void) {
	(void)wake_one();
}

/*
 * Timer thread: a worker whose running message pushed queues without waking
 * anyone holds them until the message ends; wake a sleeper for them now
 * (see the top comment). A stale read only costs a wake that finds nothing.
 */
static void
nudge_workers(struct monitor *m) {
	if (!skynet_globalmq_peek())
		return;
	for (int i = 0; i < m->count; i++) {
		if (ATOM_LOAD_RELAXED(skynet_monitor_owing(m->m[i]))) {
			if (wake_one())
				ATOM_FADD_RELAXED(&NUDGES, 1);
			return;
		}
	}
}

static void
kick_timer(void) {
	struct monitor *m = THREADS;
	skynet_cond_lock(&m->kick);
	m->kicked = true;
	skynet_cond_signal(&m->kick);
	skynet_cond_unlock(&m->kick);
}

static void
timer_sleep(struct monitor *m, uint64_t us) {
	skynet_cond_lock(&m->kick);
	if (!m->kicked && !ATOM_LOAD(&m->quit))
		skynet_cond_timedwait(&m->kick, (long)us);
	m->kicked = false;
	skynet_cond_unlock(&m->kick);
}

static bool
is_idle(struct monitor *m) {
	/*
	 * Order matters. The global queue first: a woken worker leaves `sleep`
	 * before it pops a queue, so "empty, then everyone asleep" means no
	 * worker took a queue in between (the other order could see all asleep,
	 * then an empty queue that a just-woken worker had popped, and jump the
	 * clock under a running service). The socket thread last: a worker
	 * queues its socket command before it sleeps. Outside jobs before the
	 * global queue: their threads post an answer before they subtract, so
	 * zero here means the answers were pushed before the queue is read.
	 */
	if (ATOM_LOAD(&OUTSIDE_JOBS) > 0)
		return false;
	if (!skynet_globalmq_empty())
		return false;
	return ATOM_LOAD(&m->sleep) == m->count && skynet_socket_is_idle();
}

static void
signal_hup(void) {
	// Ask the logger to reopen its file.
	uint32_t logger = skynet_handle_findname("logger");
	if (logger) {
		struct skynet_message msg = {
		    .source = 0,
		    .session = 0,
		    .data = NULL,
		    .sz = skynet_message_sz(PTYPE_SYSTEM, 0),
		};
		skynet_post(logger, &msg);
	}
}

static void
stop_all(struct monitor *m) {
	skynet_cond_lock(&m->cond);
	ATOM_STORE(&m->quit, 1);
	skynet_cond_broadcast(&m->cond);
	skynet_cond_unlock(&m->cond);
	skynet_cond_lock(&m->kick);
	skynet_cond_broadcast(&m->kick);
	skynet_cond_unlock(&m->kick);
	skynet_cond_lock(&m->idle);
	skynet_cond_broadcast(&m->idle);
	skynet_cond_unlock(&m->idle);
}

static void
virtual_step(struct monitor *m) {
	if (is_idle(m) && skynet_timer_advance_idle())
		return;
	// Busy, or idle with nothing pending: wait for the last worker to fall asleep.
	timer_sleep(m, TIMER_VIRTUAL_WAIT_US);
}

static void *
thread_timer(void *p) {
	struct monitor *m = p;
	skynet_initthread(THREAD_TIMER);
	for (;;) {
		if (m->virtual_time) {
			virtual_step(m);
		} else {
			skynet_updatetime();
			uint64_t us = skynet_timer_wait_us(TIMER_MAX_SLEEP_US);
			if (us > 0)
				timer_sleep(m, us);
		}
		if (skynet_context_total() == 0)
			break;
		if (ATOM_XCHG(&SIGHUP_PENDING, 0))
			signal_hup();
		nudge_workers(m);
	}
	skynet_socket_exit();
	stop_all(m);
	return NULL;
}

static void *
thread_socket(void *p) {
	skynet_initthread(THREAD_SOCKET);
	while (skynet_socket_poll() != 0)
		;
	return NULL;
}

/* Monitor thread: hand free heap pages back once services have been freed. */
static void
trim_heap(struct monitor *m) {
	size_t released = skynet_context_released();
	if (!m->trim || released == m->trimmed_at)
		return;
	m->trimmed_at = released;
	malloc_trim(0);
}

static void *
thread_monitor(void *p) {
	struct monitor *m = p;
	skynet_initthread(THREAD_MONITOR);
	for (;;) {
		skynet_cond_lock(&m->idle);
		if (!ATOM_LOAD(&m->quit))
			skynet_cond_timedwait(&m->idle, MONITOR_PERIOD_S * 1000000L);
		skynet_cond_unlock(&m->idle);
		if (ATOM_LOAD(&m->quit) || skynet_context_total() == 0)
			break;
		for (int i = 0; i < m->count; i++) {
			uint32_t stuck = skynet_monitor_check(m->m[i]);
			if (stuck != 0)
				skynet_context_endless(stuck);
		}
		trim_heap(m);
	}
	return NULL;
}

static void
worker_sleep(struct monitor *m) {
	skynet_cond_lock(&m->cond);
	int sleepers = ATOM_FINC(&m->sleep) + 1;
	// The node went idle (virtual time jumps), or no service is left (time to stop).
	if ((sleepers == m->count && m->virtual_time) || skynet_context_total() == 0)
		kick_timer();
	if (!ATOM_LOAD(&m->quit) && skynet_globalmq_empty())
		skynet_cond_wait(&m->cond);
	ATOM_FDEC(&m->sleep);
	skynet_cond_unlock(&m->cond);
}

static inline void
cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static uint64_t
now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Watch the global queue for up to SPIN_NS, yielding the core now and then. */
static bool
spin_for_work(struct monitor *m, bool *away) {
	uint64_t start = now_ns();
	for (;;) {
		for (int i = 0; i < SPIN_CHECK_ROUNDS; i++) {
			if (skynet_globalmq_peek())
				goto found;
			cpu_relax();
		}
		sched_yield();
		uint64_t spent = now_ns() - start;
		if (spent >= SPIN_NS || ATOM_LOAD_RELAXED(&m->quit)) {
			*away = spent > SPIN_AWAY_NS;
			return false;
		}
	}
found:
	*away = now_ns() - start > SPIN_AWAY_NS;
	return true;
}

/* Spin if spinning has been paying (see the top comment). True when work showed up. */
static bool
worker_spin(struct monitor *m, struct worker_parm *wp) {
	if (m->count == 1 || ATOM_LOAD(&m->spinning) >= MAX_SPINNERS)
		return false;
	if (!spin_gate_allows(&wp->gate))
		return false;
	ATOM_FINC(&m->spinning);
	bool away = false;
	bool found = spin_for_work(m, &away);
	ATOM_FDEC(&m->spinning);
	spin_gate_record(&wp->gate, found, away);
	return found;
}

static void *
thread_worker(void *p) {
	struct worker_parm *wp = p;
	struct monitor *m = wp->m;
	struct skynet_monitor *sm = m->m[wp->id];
	skynet_initthread(THREAD_WORKER);
	struct message_queue *q = NULL;
	while (!ATOM_LOAD(&m->quit)) {
		q = skynet_context_message_dispatch(sm, q, wp->weight);
		if (q == NULL && !worker_spin(m, wp))
			worker_sleep(m);
	}
	if (q)
		skynet_globalmq_push(q); // hand it back: shutdown drains what is left
	return NULL;
}

/*
 * Worker i's weight, as in skynet: -1 x4, 0 x4, 1 x8, 2 x8, 3 x8, then 0.
 * A turn on one service queue handles one message at weight -1; at weight
 * w >= 0 it handles about (messages waiting >> w), at least one: weight 0
 * drains the backlog, weight 3 an eighth of it.
 */
static int
worker_weight(int i) {
	static const int weight[] = {
	    -1, -1, -1, -1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
	    2,  2,  2,  2,  2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3,
	};
	return i < (int)(sizeof(weight) / sizeof(weight[0])) ? weight[i] : 0;
}

int
skynet_worker_stats(struct skynet_worker_stat *out, int cap) {
	struct monitor *m = THREADS;
	if (m == NULL)
		return 0;
	for (int i = 0; i < m->count && i < cap; i++) {
		struct skynet_worker_stat *w = &out[i];
		w->handle = skynet_monitor_running(m->m[i]);
		w->running_us = 0;
		w->label[0] = '\0';
		struct skynet_context *ctx = w->handle ? skynet_handle_grab(w->handle) : NULL;
		if (ctx == NULL)
			continue;
		w->running_us = skynet_context_running_us(ctx);
		snprintf(w->label, sizeof(w->label), "%s", skynet_context_label(ctx));
		skynet_context_release(ctx);
	}
	return m->count;
}

static void
create_thread(pthread_t *thread, void *(*start_routine)(void *), void *arg) {
	if (pthread_create(thread, NULL, start_routine, arg)) {
		fprintf(stderr, "Create thread failed\n");
		exit(1);
	}
}

static void
run_threads(int thread, bool virtual_time, bool trim) {
	pthread_t pid[thread + 3];
	struct monitor *m = skynet_calloc(1, sizeof(*m));
	m->count = thread;
	m->virtual_time = virtual_time;
	m->trim = trim;
	m->trimmed_at = skynet_context_released();
	ATOM_INIT(&m->sleep, 0);
	ATOM_INIT(&m->spinning, 0);
	ATOM_INIT(&m->quit, 0);
	m->m = skynet_malloc(thread * sizeof(struct skynet_monitor *));
	for (int i = 0; i < thread; i++)
		m->m[i] = skynet_monitor_new();
	skynet_cond_init(&m->cond);
	skynet_cond_init(&m->kick);
	skynet_cond_init(&m->idle);
	THREADS = m;
	skynet_mq_set_wakeup(wakeup);
	skynet_timer_set_kick(kick_timer);
	if (virtual_time)
		skynet_socket_set_idle_cb(kick_timer);

	create_thread(&pid[0], thread_monitor, m);
	create_thread(&pid[1], thread_timer, m);
	create_thread(&pid[2], thread_socket, m);
	struct worker_parm wp[thread];
	for (int i = 0; i < thread; i++) {
		wp[i].m = m;
		wp[i].id = i;
		wp[i].weight = worker_weight(i);
		spin_gate_init(&wp[i].gate);
		create_thread(&pid[i + 3], thread_worker, &wp[i]);
	}
	for (int i = 0; i < thread + 3; i++)
		pthread_join(pid[i], NULL);

	skynet_mq_set_wakeup(NULL);
	skynet_timer_set_kick(NULL);
	skynet_socket_set_idle_cb(NULL);
	THREADS = NULL;
	for (int i = 0; i < thread; i++)
		skynet_monitor_delete(m->m[i]);
	skynet_free(m->m);
	skynet_cond_destroy(&m->cond);
	skynet_cond_destroy(&m->kick);
	skynet_cond_destroy(&m->idle);
	skynet_free(m);
}

static void
bootstrap(struct skynet_context *logger, const char *cmdline) {
	size_t sz = strlen(cmdline);
	char *name = skynet_malloc(sz + 1);
	char *args = skynet_malloc(sz + 1);
	int arg_pos;
	name[0] = args[0] = '\0';
	sscanf(cmdline, "%s%n", name, &arg_pos);
	while (cmdline[arg_pos] == ' ')
		arg_pos++;
	strcpy(args, cmdline + arg_pos);
	uint32_t handle = skynet_context_new(name, args);
	skynet_free(name);
	skynet_free(args);
	if (handle == 0) {
		skynet_error(NULL, "Bootstrap error : %s", cmdline);
		skynet_context_dispatchall(logger);
		exit(1);
	}
}

static void
drop_free(struct skynet_message *msg, void *ud) {
	skynet_message_discard(msg);
}

/* After every thread stopped: flush and free the logger and whatever queues remain. */
static void
shutdown_node(struct skynet_context *logger) {
	skynet_context_dispatchall(logger);
	skynet_context_retireall();
	skynet_context_release(logger); // the reservation
	struct message_queue *q;
	while ((q = skynet_globalmq_pop()) != NULL)
		skynet_mq_release(q, drop_free, NULL);
}

int
skynet_start(struct skynet_config *config) {
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handle_hup;
	sa.sa_flags = SA_RESTART;
	sigfillset(&sa.sa_mask);
	sigaction(SIGHUP, &sa, NULL);

	if (config->daemon && skynet_daemon_init(config->daemon) != 0)
		exit(1);
	skynet_harbor_init(config->harbor);
	skynet_handle_init(config->harbor, skynet_context_grab, skynet_context_release);
	skynet_mq_init();
	skynet_mq_set_weigh(PTYPE_SOCKET, skynet_socket_message_bytes);
	skynet_module_init(config->module_path);
	skynet_timer_init(config->virtual_time);
	skynet_socket_init();
	skynet_flow_config(config->flow_high_msgs, config->flow_high_bytes);
	skynet_socket_set_output_limit(config->output_limit);
	skynet_socket_set_backlog(config->listen_backlog);
	skynet_profile_enable(config->profile);
	skynet_budget_virtual_time(config->virtual_time);
	char err[128];
	if (skynet_budget_rules(config->budget, err, sizeof(err)) != 0) {
		fprintf(stderr, "config budget: %s\n", err);
		exit(1);
	}

	uint32_t logger_handle = skynet_context_new(config->logservice, config->logger);
	// No worker runs yet, so the logger cannot have exited before this grab.
	struct skynet_context *logger = logger_handle ? skynet_handle_grab(logger_handle) : NULL;
	if (logger == NULL) {
		fprintf(stderr, "Can't launch %s service\n", config->logservice);
		exit(1);
	}
	skynet_handle_namehandle(logger_handle, "logger");
	skynet_context_reserve(logger); // keeps the reference grabbed above

	bootstrap(logger, config->bootstrap);
	run_threads(config->thread, config->virtual_time, config->malloc_trim);
	skynet_profiler_exit(); // a profile still running: no worker is left to record

	shutdown_node(logger);
	skynet_socket_free();
	skynet_timer_exit();
	skynet_module_exit();
	skynet_handle_exit();
	skynet_harbor_exit();
	skynet_mq_exit();
	skynet_budget_rules_free();
	if (config->daemon)
		skynet_daemon_exit(config->daemon);
	return skynet_exit_status();
}
