/*
 * The sampling profiler's core: the sampler thread, the table of folded
 * stacks, and the last finished profile (docs/ref/skynet.profiler.md).
 *
 * How a sample is taken. While a profile runs, the sampler thread wakes
 * hz times a second (deadlines on CLOCK_MONOTONIC, a late tick is skipped,
 * not made up) and reads, for every thread that dispatches messages, the
 * service it runs now (skynet_tombstone_running: the per-worker record the
 * crash tombstone keeps). To each thread that runs a wanted service (the
 * target, or any when the target is 0) it sends PROF_SIGNAL with tgkill.
 * The handler, on that worker, calls the sampler callback a host
 * registered (snlua's, service-src/snlua/sampler.c), which is
 * async-signal-safe: it only notes that a sample is due and sets a Lua
 * count hook on the state the worker runs (lua_sethook may be called from
 * a signal handler on the thread that runs the state). At the state's next
 * instruction (or the return of the C function it is in) the hook walks
 * the stack in the service's own thread, with lua_getstack/lua_getinfo,
 * builds the folded line "name :addr;frame;...;frame" and hands it to
 * skynet_profiler_record. The sampler thread never reads a service's
 * memory: a service that exits while sampled only stops being sent
 * signals, and its samples, copied into the table, stay in the profile.
 *
 * Data. One profile at a time, in PROF: the table maps a folded stack (its
 * own copy) to a count of samples, chained in PROF_BUCKETS buckets by
 * FNV-1a hash; at most PROF_STACKS_MAX distinct stacks, further new stacks
 * are counted in overflow. stop detaches the table, writes it as text
 * (lines "stack count", most samples first) and keeps that text as the
 * last profile, which replaces the one before.
 *
 * Locking. PROF.data (a mutex and condition variable) covers the table,
 * the counters, last, and the sampler's wait; the sampler holds it only to
 * wait and to read its settings, never while it signals. PROF.control (a
 * mutex) serialises start and stop, and is held across the join of the
 * sampler thread, so a start never overlaps a stopping sampler. Lock
 * order: control, then data. running, target and ticket are also atomics,
 * written under data and read without a lock by skynet_profiler_wants (the
 * signal handler's callback); their seq-cst stores pair with those loads.
 * Tickets. A sample is recorded a while after it was asked for (at the
 * next instruction, or at the end of the message): long enough, on a
 * loaded machine, for the profile to stop and the next one to start. So
 * wants hands out the running profile's ticket, the asker keeps it with
 * the sample it owes, and record drops a sample whose ticket is not the
 * running profile's (or that comes after stop: no table). ThreadSanitizer: every shared field is either under data or an
 * ATOM_*; the handler and the Lua hook run on the worker that owns the
 * state; the tombstone records are read with relaxed atomics. Liblua is
 * not instrumented, so lua_sethook from the handler is outside TSan's
 * view; it is safe because the handler runs on the thread that runs the
 * state (TSan delivers a signal at the thread's next intercepted call or
 * atomic operation, so under TSan a sample lands a little later).
 *
 * Units: hz is samples per second per sampled thread (1 to PROF_HZ_MAX);
 * times are nanoseconds inside, counts are samples.
 */
#include "skynet_profiler.h"

#include "skynet.h"
#include "skynet_cond.h"
#include "skynet_malloc.h"
#include "skynet_tombstone.h"
#include "atomic.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PROF_SIGNAL     (SIGRTMIN + 4)
#define PROF_BUCKETS    4096
#define PROF_STACKS_MAX 65536 // distinct stacks kept; more are counted in overflow
#define PROF_HZ_MAX     SKYNET_PROFILER_HZ_MAX
#define PROF_OVERFLOW   "[profiler];[more distinct stacks than the table keeps]"

struct prof_stack {
	struct prof_stack *next;
	uint64_t count;
	uint32_t hash;
	size_t len;
	char text[]; // the folded stack, NUL-terminated
};

struct prof_table {
	size_t stacks;
	struct prof_stack *bucket[PROF_BUCKETS];
};

static struct {
	pthread_mutex_t control; // start and stop, one at a time
	struct skynet_cond data; // covers the fields below but the atomics
	ATOM_INT running;        // a profile is being taken
	ATOM_U32 target;         // the handle sampled, 0: every service
	ATOM_U32 ticket;         // the running profile's number, never 0; a new one at each start
	int hz;
	uint64_t started_ns;
	uint64_t ticks;   // sampler wake-ups
	uint64_t signals; // signals sent to workers
	uint64_t samples; // stacks recorded
	uint64_t cost_ns; // what taking them cost the workers, summed
	uint64_t overflow;
	struct prof_table *table; // owned; NULL when not running
	char *last;               // owned: the last profile's text, NULL before the first
	size_t last_len;
	uint64_t last_samples;
	pthread_t thread;
	bool thread_live; // thread is to be joined (control)
} PROF = {.control = PTHREAD_MUTEX_INITIALIZER};

static ATOM_POINTER SAMPLER;  // skynet_profiler_sample_cb
static ATOM_INT SIGNAL_READY; // PROF_SIGNAL's handler is installed
static pthread_once_t DATA_ONCE = PTHREAD_ONCE_INIT;
static pthread_once_t SIGNAL_ONCE = PTHREAD_ONCE_INIT;

static void
data_init(void) {
	skynet_cond_init(&PROF.data);
}

static void
control_lock(void) {
	if (pthread_mutex_lock(&PROF.control) != 0)
		abort();
	if (pthread_once(&DATA_ONCE, data_init) != 0)
		abort();
}

static void
control_unlock(void) {
	if (pthread_mutex_unlock(&PROF.control) != 0)
		abort();
}

/* ---- the worker side ---------------------------------------------------- */

/* On a worker, for PROF_SIGNAL; async-signal-safe (the callback must be too). */
static void
prof_signal(int sig) {
	int saved_errno = errno;
	skynet_profiler_sample_cb cb = (skynet_profiler_sample_cb)ATOM_LOAD(&SAMPLER);
	if (cb != NULL)
		cb();
	errno = saved_errno;
}

static void
install_signal(void) {
	struct sigaction old;
	if (sigaction(PROF_SIGNAL, NULL, &old) != 0 || old.sa_handler != SIG_DFL) {
		skynet_error(NULL, "warn: profiler: signal %d is taken, no sample can be taken",
		             PROF_SIGNAL);
		return;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = prof_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(PROF_SIGNAL, &sa, NULL) != 0) {
		skynet_error(NULL, "warn: profiler: sigaction failed, no sample can be taken");
		return;
	}
	ATOM_STORE(&SIGNAL_READY, 1);
}

void
skynet_profiler_set_sampler(skynet_profiler_sample_cb cb) {
	ATOM_STORE(&SAMPLER, (void *)cb);
}

uint32_t
skynet_profiler_wants(uint32_t handle) {
	uint32_t ticket = ATOM_LOAD(&PROF.ticket); // pairs with the stores in start and stop
	if (!ATOM_LOAD(&PROF.running))
		return 0;
	uint32_t target = ATOM_LOAD(&PROF.target);
	return target == 0 || target == handle ? ticket : 0;
}

static uint32_t
hash_of(const char *s, size_t len) {
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

/* Count one sample of the stack; data held. */
static void
table_add(struct prof_table *t, const char *stack, size_t len) {
	uint32_t h = hash_of(stack, len);
	struct prof_stack **slot = &t->bucket[h % PROF_BUCKETS];
	for (struct prof_stack *s = *slot; s != NULL; s = s->next) {
		if (s->hash == h && s->len == len && memcmp(s->text, stack, len) == 0) {
			s->count++;
			return;
		}
	}
	if (t->stacks == PROF_STACKS_MAX) {
		PROF.overflow++;
		return;
	}
	struct prof_stack *s = skynet_malloc(sizeof(*s) + len + 1);
	s->count = 1;
	s->hash = h;
	s->len = len;
	memcpy(s->text, stack, len);
	s->text[len] = '\0';
	s->next = *slot;
	*slot = s;
	t->stacks++;
}

void
skynet_profiler_record(uint32_t ticket, const char *stack, size_t len, uint64_t cost_ns) {
	skynet_cond_lock(&PROF.data);
	if (PROF.table != NULL && ticket == ATOM_LOAD(&PROF.ticket)) {
		table_add(PROF.table, stack, len);
		PROF.samples++;
		PROF.cost_ns += cost_ns;
	}
	skynet_cond_unlock(&PROF.data);
}

/* ---- the sampler thread ------------------------------------------------- */

/* Send PROF_SIGNAL to every thread running a wanted service; returns how many. */
static uint64_t
signal_workers(uint32_t target) {
	uint64_t sent = 0;
	pid_t pid = getpid();
	int n = skynet_tombstone_threads();
	for (int i = 0; i < n; i++) {
		long tid;
		uint32_t running = skynet_tombstone_running(i, &tid);
		if (running == 0 || tid == 0 || (target != 0 && running != target))
			continue;
		if (syscall(SYS_tgkill, pid, (pid_t)tid, PROF_SIGNAL) == 0)
			sent++;
	}
	return sent;
}

static void *
sampler_main(void *ud) {
	skynet_cond_lock(&PROF.data);
	uint64_t period_ns = 1000000000ull / (uint64_t)PROF.hz;
	uint64_t next = skynet_monotonic_ns() + period_ns;
	while (PROF.table != NULL) {
		uint64_t now = skynet_monotonic_ns();
		if (now < next) {
			skynet_cond_timedwait(&PROF.data, (long)((next - now + 999) / 1000));
			continue; // woken early by stop, or spuriously: look again
		}
		next = now - next >= period_ns ? now + period_ns : next + period_ns;
		uint32_t target = ATOM_LOAD(&PROF.target);
		skynet_cond_unlock(&PROF.data);
		uint64_t sent = signal_workers(target);
		skynet_cond_lock(&PROF.data);
		PROF.ticks++;
		PROF.signals += sent;
	}
	skynet_cond_unlock(&PROF.data);
	return NULL;
}

/* ---- start and stop ----------------------------------------------------- */

int
skynet_profiler_start(uint32_t target, int hz) {
	if (hz < 1 || hz > PROF_HZ_MAX)
		return SKYNET_EINVAL;
	control_lock();
	if (pthread_once(&SIGNAL_ONCE, install_signal) != 0)
		abort();
	if (PROF.thread_live || !ATOM_LOAD(&SIGNAL_READY)) {
		int err = PROF.thread_live ? SKYNET_EBUSY : SKYNET_EIO;
		control_unlock();
		return err;
	}
	struct prof_table *t = skynet_calloc(1, sizeof(*t));
	skynet_cond_lock(&PROF.data);
	PROF.table = t;
	PROF.hz = hz;
	PROF.started_ns = skynet_monotonic_ns();
	PROF.ticks = PROF.signals = PROF.samples = PROF.overflow = PROF.cost_ns = 0;
	ATOM_STORE(&PROF.target, target);
	uint32_t ticket = ATOM_LOAD(&PROF.ticket) + 1;
	ATOM_STORE(&PROF.ticket, ticket == 0 ? 1 : ticket);
	ATOM_STORE(&PROF.running, 1);
	skynet_cond_unlock(&PROF.data);
	if (pthread_create(&PROF.thread, NULL, sampler_main, NULL) != 0) {
		skynet_cond_lock(&PROF.data);
		ATOM_STORE(&PROF.running, 0);
		PROF.table = NULL;
		skynet_cond_unlock(&PROF.data);
		skynet_free(t);
		control_unlock();
		return SKYNET_EIO;
	}
	PROF.thread_live = true;
	control_unlock();
	return 0;
}

static int
by_count(const void *a, const void *b) {
	const struct prof_stack *x = *(struct prof_stack *const *)a;
	const struct prof_stack *y = *(struct prof_stack *const *)b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->text, y->text);
}

/* The table as folded text, most samples first; frees the table. Sets *len. */
static char *
table_text(struct prof_table *t, uint64_t overflow, size_t *len) {
	struct prof_stack **all = skynet_malloc((t->stacks + 1) * sizeof(*all));
	size_t n = 0, bytes = 1;
	for (int b = 0; b < PROF_BUCKETS; b++) {
		for (struct prof_stack *s = t->bucket[b]; s != NULL; s = s->next) {
			all[n++] = s;
			bytes += s->len + 24;
		}
	}
	qsort(all, n, sizeof(*all), by_count);
	bytes += sizeof(PROF_OVERFLOW) + 24;
	char *text = skynet_malloc(bytes);
	size_t pos = 0;
	for (size_t i = 0; i < n; i++) {
		pos += (size_t)snprintf(text + pos, bytes - pos, "%s %llu\n", all[i]->text,
		                        (unsigned long long)all[i]->count);
		skynet_free(all[i]);
	}
	if (overflow > 0)
		pos += (size_t)snprintf(text + pos, bytes - pos, "%s %llu\n", PROF_OVERFLOW,
		                        (unsigned long long)overflow);
	skynet_free(all);
	skynet_free(t);
	*len = pos;
	return text;
}

static char *
copy_text(const char *text, size_t len) {
	char *copy = skynet_malloc(len + 1);
	memcpy(copy, text, len);
	copy[len] = '\0';
	return copy;
}

char *
skynet_profiler_stop(size_t *len, uint64_t *samples) {
	control_lock();
	if (!PROF.thread_live) {
		control_unlock();
		return NULL;
	}
	skynet_cond_lock(&PROF.data);
	ATOM_STORE(&PROF.running, 0);
	struct prof_table *t = PROF.table;
	PROF.table = NULL; // records from now on are dropped; the sampler leaves its loop
	uint64_t overflow = PROF.overflow;
	uint64_t count = PROF.samples;
	skynet_cond_signal(&PROF.data);
	skynet_cond_unlock(&PROF.data);
	pthread_join(PROF.thread, NULL);
	PROF.thread_live = false;
	size_t text_len;
	char *text = table_text(t, overflow, &text_len);
	char *copy = copy_text(text, text_len);
	skynet_cond_lock(&PROF.data);
	char *old = PROF.last;
	PROF.last = text;
	PROF.last_len = text_len;
	PROF.last_samples = count;
	skynet_cond_unlock(&PROF.data);
	control_unlock();
	skynet_free(old);
	*len = text_len;
	if (samples != NULL)
		*samples = count;
	return copy;
}

char *
skynet_profiler_last(size_t *len, uint64_t *samples) {
	if (pthread_once(&DATA_ONCE, data_init) != 0)
		abort();
	char *copy = NULL;
	skynet_cond_lock(&PROF.data);
	if (PROF.last != NULL) {
		copy = copy_text(PROF.last, PROF.last_len);
		*len = PROF.last_len;
		if (samples != NULL)
			*samples = PROF.last_samples;
	}
	skynet_cond_unlock(&PROF.data);
	return copy;
}

void
skynet_profiler_status(struct skynet_profiler_status *st) {
	if (pthread_once(&DATA_ONCE, data_init) != 0)
		abort();
	skynet_cond_lock(&PROF.data);
	st->running = PROF.table != NULL;
	st->target = ATOM_LOAD(&PROF.target);
	st->hz = PROF.hz;
	st->elapsed_ns = st->running ? skynet_monotonic_ns() - PROF.started_ns : 0;
	st->ticks = PROF.ticks;
	st->signals = PROF.signals;
	st->samples = PROF.samples;
	st->cost_ns = PROF.cost_ns;
	st->stacks = st->running ? PROF.table->stacks : 0;
	st->has_last = PROF.last != NULL;
	st->last_samples = PROF.last_samples;
	skynet_cond_unlock(&PROF.data);
}

void
skynet_profiler_exit(void) {
	size_t len;
	skynet_free(skynet_profiler_stop(&len, NULL));
	if (pthread_once(&DATA_ONCE, data_init) != 0)
		abort();
	skynet_cond_lock(&PROF.data);
	char *old = PROF.last;
	PROF.last = NULL;
	skynet_cond_unlock(&PROF.data);
	skynet_free(old);
}
