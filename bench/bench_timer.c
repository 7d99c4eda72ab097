/*
 * Timer benchmarks on a fake clock: the wheel (skynet_wheel.c) against a
 * binary and a 4-ary min-heap written here, for add, cancel by (handle,
 * session) and fire, with n timers pending and delays spread uniformly
 * over 1..100000 ticks (seeded). The heaps get what the wheel has: an
 * index per timer for removal from the middle, a (handle, session) hash
 * for cancel, and (expiry, insertion) keys for same-tick order; their
 * arrays are sized up front. Every structure is measured warm, as in a
 * running node: a first round of n adds and cancels sized its memory (the
 * wheel's cold first round is reported apart, add_cold_ns). Cancels go in
 * random order. Fire runs the tick loop one tick at a time, like the timer
 * thread, and counts per timer fired.
 *
 * Each figure is the best of a few runs (the machine is shared). Prints
 * "BENCH name=... value=... unit=..." lines; about 10 s in all.
 */
#include "skynet_wheel.h"

#include "skynet.h"
#include "atomic.h"
#include "spinlock.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define BENCH_MAX_DELAY 100000u
#define BENCH_HANDLES   1024u
#define BENCH_BATCH     256
#define BENCH_NIL       0xffffffffu

static uint64_t
now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t
rng_next(uint64_t *s) {
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void
report(const char *name, double value, const char *unit) {
	printf("BENCH name=%s value=%.6g unit=%s\n", name, value, unit);
	fflush(stdout);
}

/* The workload: timer i is (handle[i], i) due delay[i] ticks from 0; cancels go in order[]. */
struct workload {
	size_t n;
	uint32_t *delay;
	uint32_t *order; // a permutation of 0..n-1
};

static void
workload_init(struct workload *wl, size_t n, uint64_t seed) {
	wl->n = n;
	wl->delay = skynet_malloc(n * sizeof(*wl->delay));
	wl->order = skynet_malloc(n * sizeof(*wl->order));
	for (size_t i = 0; i < n; i++) {
		wl->delay[i] = 1 + (uint32_t)(rng_next(&seed) % BENCH_MAX_DELAY);
		wl->order[i] = (uint32_t)i;
	}
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = rng_next(&seed) % (i + 1);
		uint32_t t = wl->order[i];
		wl->order[i] = wl->order[j];
		wl->order[j] = t;
	}
}

static void
workload_destroy(struct workload *wl) {
	skynet_free(wl->delay);
	skynet_free(wl->order);
}

static inline uint32_t
handle_of(size_t i) {
	return 1 + (uint32_t)(i % BENCH_HANDLES);
}

/* Per-op results of one implementation at one n, in ns. */
struct result {
	double add_cold;
	double add;
	double cancel;
	double fire;
};

static void
keep_best(struct result *best, const struct result *r) {
	if (r->add_cold < best->add_cold)
		best->add_cold = r->add_cold;
	if (r->add < best->add)
		best->add = r->add;
	if (r->cancel < best->cancel)
		best->cancel = r->cancel;
	if (r->fire < best->fire)
		best->fire = r->fire;
}

static size_t FIRED_SINK;

/* Add the whole workload; ns per add. */
static double
wheel_fill(struct skynet_wheel *w, const struct workload *wl) {
	uint64_t t0 = now_ns();
	for (size_t i = 0; i < wl->n; i++)
		skynet_wheel_add(w, handle_of(i), (int)i, wl->delay[i]);
	return (double)(now_ns() - t0) / (double)wl->n;
}

/* Cancel the whole workload in random order; ns per cancel. */
static double
wheel_clear(struct skynet_wheel *w, const struct workload *wl) {
	uint64_t t0 = now_ns();
	for (size_t i = 0; i < wl->n; i++)
		skynet_wheel_cancel(w, handle_of(wl->order[i]), (int)wl->order[i]);
	return (double)(now_ns() - t0) / (double)wl->n;
}

static void
wheel_run(const struct workload *wl, struct result *r, double *bytes_per_timer) {
	struct skynet_wheel *w = skynet_wheel_create(0);
	r->add_cold = wheel_fill(w, wl);
	wheel_clear(w, wl);
	r->add = wheel_fill(w, wl);
	*bytes_per_timer = (double)skynet_wheel_bytes(w) / (double)wl->n;
	r->cancel = wheel_clear(w, wl);
	wheel_fill(w, wl);
	struct skynet_wheel_expired out[BENCH_BATCH];
	size_t fired = 0;
	uint64_t t0 = now_ns();
	for (uint32_t tick = 0; tick < BENCH_MAX_DELAY; tick++) {
		uint64_t ticks = 1;
		while (ticks > 0 || skynet_wheel_has_due(w))
			fired += skynet_wheel_advance(w, &ticks, out, BENCH_BATCH);
	}
	r->fire = (double)(now_ns() - t0) / (double)wl->n;
	FIRED_SINK += fired;
	skynet_wheel_release(w);
}

/*
 * The comparison heaps: entries (key, id) with key = expiry << 32 | insertion
 * sequence; a pool of nodes (handle, session, heap position) recycled LIFO
 * like the wheel's, ids being node indices; and an open-addressing (linear
 * probing, load <= 0.5) hash from (handle, session) to id.
 */
struct heap_entry {
	uint64_t key;
	uint32_t id;
};

struct heap_node {
	uint32_t handle;
	int session;
	uint32_t pos;  // index in the heap array
	uint32_t next; // free list
};

struct heap {
	struct heap_entry *a; // owned
	size_t size;
	struct heap_node *nodes; // owned
	uint32_t free_head;
	uint32_t *table; // owned: ids, BENCH_NIL when empty
	size_t mask;
	uint32_t seq;
};

static void
heap_init(struct heap *h, size_t n) {
	memset(h, 0, sizeof(*h));
	h->a = skynet_malloc(n * sizeof(*h->a));
	h->nodes = skynet_malloc(n * sizeof(*h->nodes));
	for (size_t i = 0; i < n; i++)
		h->nodes[i].next = i + 1 < n ? (uint32_t)i + 1 : BENCH_NIL;
	size_t cap = 16;
	while (cap < 2 * n)
		cap <<= 1;
	h->table = skynet_malloc(cap * sizeof(*h->table));
	memset(h->table, 0xff, cap * sizeof(*h->table));
	h->mask = cap - 1;
}

static void
heap_destroy(struct heap *h) {
	skynet_free(h->a);
	skynet_free(h->nodes);
	skynet_free(h->table);
}

static size_t
heap_bytes(const struct heap *h, size_t n) {
	return n * (sizeof(*h->a) + sizeof(*h->nodes)) + (h->mask + 1) * sizeof(*h->table);
}

static inline size_t
pair_hash(uint32_t handle, int session) {
	uint64_t k = ((uint64_t)handle << 32) | (uint32_t)session;
	k *= 0x9e3779b97f4a7c15ULL;
	return (size_t)(k >> 29);
}

static void
table_put(struct heap *h, uint32_t id) {
	size_t i = pair_hash(h->nodes[id].handle, h->nodes[id].session) & h->mask;
	while (h->table[i] != BENCH_NIL)
		i = (i + 1) & h->mask;
	h->table[i] = id;
}

/* Remove (handle, session) from the table: its id, or BENCH_NIL. */
static uint32_t
table_take(struct heap *h, uint32_t handle, int session) {
	size_t i = pair_hash(handle, session) & h->mask;
	for (;;) {
		uint32_t id = h->table[i];
		if (id == BENCH_NIL)
			return BENCH_NIL;
		if (h->nodes[id].handle == handle && h->nodes[id].session == session)
			break;
		i = (i + 1) & h->mask;
	}
	uint32_t found = h->table[i];
	/* Backward-shift deletion keeps every probe chain unbroken. */
	size_t hole = i;
	for (size_t j = (i + 1) & h->mask; h->table[j] != BENCH_NIL; j = (j + 1) & h->mask) {
		const struct heap_node *e = &h->nodes[h->table[j]];
		size_t home = pair_hash(e->handle, e->session) & h->mask;
		if (((j - home) & h->mask) >= ((j - hole) & h->mask)) {
			h->table[hole] = h->table[j];
			hole = j;
		}
	}
	h->table[hole] = BENCH_NIL;
	return found;
}

static inline void
heap_set(struct heap *h, size_t i, struct heap_entry e) {
	h->a[i] = e;
	h->nodes[e.id].pos = (uint32_t)i;
}

static inline void
sift_up(struct heap *h, size_t i, unsigned arity) {
	struct heap_entry e = h->a[i];
	while (i > 0) {
		size_t parent = (i - 1) / arity;
		if (h->a[parent].key <= e.key)
			break;
		heap_set(h, i, h->a[parent]);
		i = parent;
	}
	heap_set(h, i, e);
}

static inline void
sift_down(struct heap *h, size_t i, unsigned arity) {
	struct heap_entry e = h->a[i];
	for (;;) {
		size_t first = i * arity + 1;
		if (first >= h->size)
			break;
		size_t last = first + arity < h->size ? first + arity : h->size;
		size_t min = first;
		for (size_t c = first + 1; c < last; c++)
			if (h->a[c].key < h->a[min].key)
				min = c;
		if (h->a[min].key >= e.key)
			break;
		heap_set(h, i, h->a[min]);
		i = min;
	}
	heap_set(h, i, e);
}

static inline void
heap_add(struct heap *h, uint32_t handle, int session, uint32_t expire, unsigned arity) {
	uint32_t id = h->free_head;
	struct heap_node *node = &h->nodes[id];
	h->free_head = node->next;
	node->handle = handle;
	node->session = session;
	table_put(h, id);
	struct heap_entry e = {((uint64_t)expire << 32) | h->seq++, id};
	h->a[h->size] = e;
	sift_up(h, h->size++, arity);
}

static inline void
heap_remove_at(struct heap *h, size_t i, unsigned arity) {
	struct heap_entry last = h->a[--h->size];
	if (i == h->size)
		return;
	uint64_t old = h->a[i].key;
	heap_set(h, i, last);
	if (last.key < old)
		sift_up(h, i, arity);
	else
		sift_down(h, i, arity);
}

static inline int
heap_cancel(struct heap *h, uint32_t handle, int session, unsigned arity) {
	uint32_t id = table_take(h, handle, session);
	if (id == BENCH_NIL)
		return SKYNET_ENOENT;
	heap_remove_at(h, h->nodes[id].pos, arity);
	h->nodes[id].next = h->free_head;
	h->free_head = id;
	return 0;
}

/* Pop every timer due at or before tick into out; returns the count. */
static inline size_t
heap_fire(struct heap *h, uint32_t tick, struct skynet_wheel_expired *out, unsigned arity) {
	size_t n = 0;
	while (h->size > 0 && (h->a[0].key >> 32) <= tick && n < BENCH_BATCH) {
		uint32_t id = h->a[0].id;
		struct heap_node *node = &h->nodes[id];
		out[n].handle = node->handle;
		out[n].session = node->session;
		n++;
		table_take(h, node->handle, node->session);
		heap_remove_at(h, 0, arity);
		node->next = h->free_head;
		h->free_head = id;
	}
	return n;
}

static inline __attribute__((always_inline)) void
heap_run(const struct workload *wl, unsigned arity, struct result *r, double *bytes_per_timer) {
	struct heap h;
	heap_init(&h, wl->n);
	for (size_t i = 0; i < wl->n; i++) // warm-up round
		heap_add(&h, handle_of(i), (int)i, wl->delay[i], arity);
	for (size_t i = 0; i < wl->n; i++)
		heap_cancel(&h, handle_of(wl->order[i]), (int)wl->order[i], arity);
	r->add_cold = 0;
	uint64_t t0 = now_ns();
	for (size_t i = 0; i < wl->n; i++)
		heap_add(&h, handle_of(i), (int)i, wl->delay[i], arity);
	r->add = (double)(now_ns() - t0) / (double)wl->n;
	*bytes_per_timer = (double)heap_bytes(&h, wl->n) / (double)wl->n;
	t0 = now_ns();
	for (size_t i = 0; i < wl->n; i++)
		heap_cancel(&h, handle_of(wl->order[i]), (int)wl->order[i], arity);
	r->cancel = (double)(now_ns() - t0) / (double)wl->n;

	for (size_t i = 0; i < wl->n; i++)
		heap_add(&h, handle_of(i), (int)i, wl->delay[i], arity);
	struct skynet_wheel_expired out[BENCH_BATCH];
	size_t fired = 0;
	t0 = now_ns();
	for (uint32_t tick = 1; tick <= BENCH_MAX_DELAY; tick++) {
		size_t got;
		do {
			got = heap_fire(&h, tick, out, arity);
			fired += got;
		} while (got == BENCH_BATCH);
	}
	r->fire = (double)(now_ns() - t0) / (double)wl->n;
	FIRED_SINK += fired;
	heap_destroy(&h);
}

static void
heap2_run(const struct workload *wl, struct result *r, double *bytes_per_timer) {
	heap_run(wl, 2, r, bytes_per_timer);
}

static void
heap4_run(const struct workload *wl, struct result *r, double *bytes_per_timer) {
	heap_run(wl, 4, r, bytes_per_timer);
}

typedef void (*impl_run_cb)(const struct workload *wl, struct result *r, double *bytes_per_timer);

static void
bench_ops(void) {
	static const struct {
		const char *name;
		impl_run_cb run;
	} impls[] = {{"wheel", wheel_run}, {"heap2", heap2_run}, {"heap4", heap4_run}};
	static const struct {
		size_t n;
		const char *label;
		int reps;
	} sizes[] = {{10000, "1e4", 7}, {100000, "1e5", 5}, {1000000, "1e6", 2}}; // best of reps
	for (size_t s = 0; s < 3; s++) {
		struct workload wl;
		workload_init(&wl, sizes[s].n, 0x5eed0000u + s);
		for (size_t k = 0; k < 3; k++) {
			struct result best = {1e30, 1e30, 1e30, 1e30};
			double bytes = 0;
			for (int rep = 0; rep < sizes[s].reps; rep++) {
				struct result r;
				impls[k].run(&wl, &r, &bytes);
				keep_best(&best, &r);
			}
			char name[96];
			snprintf(name, sizeof(name), "timer.%s.add_ns.%s", impls[k].name, sizes[s].label);
			report(name, best.add, "ns");
			if (k == 0) {
				snprintf(name, sizeof(name), "timer.wheel.add_cold_ns.%s", sizes[s].label);
				report(name, best.add_cold, "ns");
			}
			snprintf(name, sizeof(name), "timer.%s.cancel_ns.%s", impls[k].name, sizes[s].label);
			report(name, best.cancel, "ns");
			snprintf(name, sizeof(name), "timer.%s.fire_ns.%s", impls[k].name, sizes[s].label);
			report(name, best.fire, "ns");
			if (sizes[s].n == 1000000) {
				snprintf(name, sizeof(name), "timer.%s.bytes_per_timer", impls[k].name);
				report(name, bytes, "bytes");
			}
		}
		workload_destroy(&wl);
	}
}

/* Concurrent adds: two threads add under the spinlock while a tick loop fires in batches. */
struct shared {
	struct spinlock lock;
	struct skynet_wheel *w; // lock
	ATOM_INT stop;
	ATOM_U64 adds;
	ATOM_U64 fired;
};

static void *
adder_main(void *ud) {
	struct shared *s = ud;
	uint64_t seed = (uint64_t)(uintptr_t)&seed | 1;
	uint64_t adds = 0;
	while (!ATOM_LOAD_RELAXED(&s->stop)) { // stop only ends the loop: no data rides on it
		for (int i = 0; i < 256; i++) {
			uint32_t delay = 1 + (uint32_t)(rng_next(&seed) % 1000);
			SPIN_LOCK(s);
			skynet_wheel_add(s->w, 1 + (uint32_t)(adds % BENCH_HANDLES), (int)adds, delay);
			SPIN_UNLOCK(s);
			adds++;
		}
	}
	ATOM_FADD(&s->adds, adds);
	return NULL;
}

/* One tick every 100 us (a 100x fast clock), fired in batches with the lock dropped between. */
static void *
ticker_main(void *ud) {
	struct shared *s = ud;
	struct skynet_wheel_expired out[BENCH_BATCH];
	uint64_t fired = 0;
	while (!ATOM_LOAD_RELAXED(&s->stop)) {
		uint64_t ticks = 1;
		bool more;
		do {
			SPIN_LOCK(s);
			fired += skynet_wheel_advance(s->w, &ticks, out, BENCH_BATCH);
			more = ticks > 0 || skynet_wheel_has_due(s->w);
			SPIN_UNLOCK(s);
		} while (more);
		struct timespec pause = {0, 100000};
		nanosleep(&pause, NULL);
	}
	ATOM_FADD(&s->fired, fired);
	return NULL;
}

static void
bench_concurrent_adds(void) {
	struct shared s;
	memset(&s, 0, sizeof(s));
	SPIN_INIT(&s);
	s.w = skynet_wheel_create(0);
	pthread_t ticker, adders[2];
	uint64_t t0 = now_ns();
	pthread_create(&ticker, NULL, ticker_main, &s);
	for (int i = 0; i < 2; i++)
		pthread_create(&adders[i], NULL, adder_main, &s);
	struct timespec run = {0, 600000000};
	nanosleep(&run, NULL);
	ATOM_STORE(&s.stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(adders[i], NULL);
	pthread_join(ticker, NULL);
	double secs = (double)(now_ns() - t0) / 1e9;
	report("timer.concurrent_adds_per_s", (double)ATOM_LOAD(&s.adds) / secs, "adds/s");
	report("timer.concurrent_fired_per_s", (double)ATOM_LOAD(&s.fired) / secs, "timers/s");
	skynet_wheel_release(s.w);
	SPIN_DESTROY(&s);
}

/* A clock jump of one day (8 640 000 ticks) with 10, then 100 000 timers pending. */
static void
bench_catchup(void) {
	static const struct {
		size_t n;
		const char *name;
	} cases[] = {{10, "timer.catchup_1day_ms"}, {100000, "timer.catchup_1day_1e5_ms"}};
	for (size_t k = 0; k < 2; k++) {
		struct skynet_wheel *w = skynet_wheel_create(0xfff00000u);
		uint64_t seed = 77;
		for (size_t i = 0; i < cases[k].n; i++)
			skynet_wheel_add(w, 1, (int)i, 1 + (uint32_t)(rng_next(&seed) % 8640000));
		struct skynet_wheel_expired out[BENCH_BATCH];
		uint64_t ticks = 8640000;
		size_t fired = 0;
		uint64_t t0 = now_ns();
		while (ticks > 0 || skynet_wheel_has_due(w))
			fired += skynet_wheel_advance(w, &ticks, out, BENCH_BATCH);
		report(cases[k].name, (double)(now_ns() - t0) / 1e6, "ms");
		FIRED_SINK += fired;
		skynet_wheel_release(w);
	}
}

int
main(void) {
	bench_ops();
	bench_concurrent_adds();
	bench_catchup();
	return FIRED_SINK == 0;
}
