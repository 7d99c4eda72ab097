/*
 * Unit tests of the timer wheel (skynet_wheel.c), one case per guarantee of
 * issue 3, driven by a fake clock: the test moves the tick counter itself.
 * An advance with cap 1 returns right after the tick at which its one timer
 * fired, so the wheel's time at return is that timer's firing tick.
 */
#include "skynet_wheel.h"

#include "skynet.h"
#include "atomic.h"
#include "spinlock.h"
#include "tt.h"

#include <assert.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define DAY_TICKS 8640000u

static uint64_t
rng_next(uint64_t *s) {
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uint32_t
rng_range(uint64_t *s, uint32_t lo, uint32_t hi) {
	return lo + (uint32_t)(rng_next(s) % ((uint64_t)hi - lo + 1));
}

/*
 * Every timer of the test has handle h and session = its id (ids are
 * 0..n-1): the book records when each was due and when, how often it fired.
 */
struct book {
	int n;
	uint64_t *due; // absolute tick (64-bit, no wrap)
	uint64_t *fired_at;
	int *fired;
	bool *cancelled;
	uint64_t seq_fired; // timers fired in total
	int early;          // fired before due
	int late;           // fired after due (only known with cap 1)
	int order;          // broke (due, insertion) order
	uint64_t last_due;
	int last_id;
};

static void
book_init(struct book *b, int n) {
	memset(b, 0, sizeof(*b));
	b->n = n;
	b->due = skynet_calloc((size_t)n, sizeof(*b->due));
	b->fired_at = skynet_calloc((size_t)n, sizeof(*b->fired_at));
	b->fired = skynet_calloc((size_t)n, sizeof(*b->fired));
	b->cancelled = skynet_calloc((size_t)n, sizeof(*b->cancelled));
	b->last_id = -1;
}

static void
book_destroy(struct book *b) {
	skynet_free(b->due);
	skynet_free(b->fired_at);
	skynet_free(b->fired);
	skynet_free(b->cancelled);
}

/* Absolute time: the wheel's 32-bit time plus the laps counted by the test. */
struct clock {
	struct skynet_wheel *w;
	uint64_t abs; // matches skynet_wheel_time(w) modulo 2^32
};

static void
add_timer(struct clock *c, struct book *b, int id, uint32_t handle, uint32_t delay) {
	skynet_wheel_add(c->w, handle, id, delay);
	b->due[id] = c->abs + delay;
}

/* Record what an advance returned: ids must come in (due, id) order, ids grow with insertion. */
static void
book_fire(struct book *b, const struct skynet_wheel_expired *out, size_t n, uint64_t now,
          bool exact) {
	for (size_t i = 0; i < n; i++) {
		int id = out[i].session;
		if (id < 0 || id >= b->n) {
			b->early++;
			continue;
		}
		b->fired[id]++;
		b->fired_at[id] = now;
		b->seq_fired++;
		if (b->due[id] > now)
			b->early++;
		if (exact && b->due[id] != now)
			b->late++;
		if (b->last_id >= 0 &&
		    (b->due[id] < b->last_due || (b->due[id] == b->last_due && id < b->last_id)))
			b->order++;
		b->last_due = b->due[id];
		b->last_id = id;
	}
}

/* Advance by ticks with the given cap until all work is done; returns the number of calls. */
static size_t
run(struct clock *c, struct book *b, uint64_t ticks, size_t cap) {
	struct skynet_wheel_expired out[64];
	size_t calls = 0;
	while (ticks > 0 || skynet_wheel_has_due(c->w)) {
		uint64_t left = ticks;
		size_t n = skynet_wheel_advance(c->w, &left, out, cap);
		c->abs += ticks - left;
		ticks = left;
		book_fire(b, out, n, c->abs, cap == 1);
		calls++;
	}
	return calls;
}

static int
count_fired(const struct book *b, int want) {
	int bad = 0;
	for (int i = 0; i < b->n; i++)
		if (b->fired[i] != (b->cancelled[i] ? 0 : want))
			bad++;
	return bad;
}

static const uint32_t EDGE_DELAYS[] = {
    1,
    2,
    3,
    255,
    256,
    257,
    16383,
    16384,
    16385,
    1048575,
    1048576,
    1048577,
    67108863,
    67108864,
    67108865,
    DAY_TICKS,
    1u << 30,
    INT32_MAX,
    WHEEL_MAX_DELAY - 1,
    WHEEL_MAX_DELAY,
};
#define EDGE_COUNT ((int)(sizeof(EDGE_DELAYS) / sizeof(EDGE_DELAYS[0])))

/* Never early, never late: each timer fires on its due tick, from several starting counters. */
static void
fires_exactly_on_due_tick(int *failed) {
	static const uint32_t starts[] = {0, 12345, 0x7fffff00u, 0xffffff00u, 0xfffffff0u};
	for (size_t s = 0; s < sizeof(starts) / sizeof(starts[0]); s++) {
		struct clock c = {skynet_wheel_create(starts[s]), starts[s]};
		struct book b;
		int n = 3000;
		book_init(&b, n);
		uint64_t seed = 0x9e3779b97f4a7c15ULL + s;
		for (int i = 0; i < n; i++) {
			uint32_t delay;
			if (i < EDGE_COUNT)
				delay = EDGE_DELAYS[i];
			else if (i % 3 == 0)
				delay = rng_range(&seed, 1, 600);
			else if (i % 3 == 1)
				delay = rng_range(&seed, 1, 2000000);
			else
				delay = rng_range(&seed, 1, INT32_MAX);
			add_timer(&c, &b, i, 1 + (uint32_t)i % 5, delay);
		}
		run(&c, &b, (uint64_t)WHEEL_MAX_DELAY + 10, 1);
		TT_CHECK(b.early == 0);
		TT_CHECK(b.late == 0);
		TT_CHECK(b.order == 0);
		TT_CHECK(count_fired(&b, 1) == 0);
		TT_CHECK(skynet_wheel_count(c.w) == 0);
		book_destroy(&b);
		skynet_wheel_release(c.w);
	}
}

/* Tick by tick across the 32-bit wrap (the counter starts just below 2^32). */
static void
wrap_tick_by_tick(int *failed) {
	struct clock c = {skynet_wheel_create(0xffffff80u), 0xffffff80u};
	struct book b;
	int n = 4000;
	book_init(&b, n);
	uint64_t seed = 42;
	for (int i = 0; i < n; i++)
		add_timer(&c, &b, i, 7, rng_range(&seed, 1, i < 2000 ? 300 : 70000));
	for (int tick = 0; tick < 70100; tick++)
		run(&c, &b, 1, 64);
	TT_CHECK(c.abs > 0xffffffffu);
	TT_CHECK(skynet_wheel_time(c.w) == (uint32_t)c.abs);
	TT_CHECK(b.early == 0);
	TT_CHECK(b.order == 0);
	for (int i = 0; i < n; i++)
		TT_CHECK(b.fired[i] == 1 && b.fired_at[i] == b.due[i]);
	book_destroy(&b);
	skynet_wheel_release(c.w);
}

/* The race of the wheel we imitate: a 1-tick timer added between two updates, at any tick. */
static void
adds_between_updates(int *failed) {
	struct clock c = {skynet_wheel_create(0xfffffe00u), 0xfffffe00u};
	struct book b;
	int n = 3 * 1200;
	book_init(&b, n);
	for (int tick = 0; tick < 1200; tick++) {
		add_timer(&c, &b, 3 * tick, 1, 1);
		add_timer(&c, &b, 3 * tick + 1, 2, 2);
		add_timer(&c, &b, 3 * tick + 2, 3, 256);
		run(&c, &b, 1, 1);
	}
	run(&c, &b, 400, 1);
	TT_CHECK(b.early == 0);
	TT_CHECK(b.late == 0);
	TT_CHECK(b.order == 0);
	TT_CHECK(count_fired(&b, 1) == 0);
	book_destroy(&b);
	skynet_wheel_release(c.w);
}

/* Timers added while a long catch-up is under way (between its calls) fire exactly once, on time. */
static void
adds_during_catchup(int *failed) {
	struct clock c = {skynet_wheel_create(0xfff00000u), 0xfff00000u};
	struct book b;
	int n = 20000;
	book_init(&b, n);
	uint64_t seed = 7;
	int id = 0;
	for (; id < 5000; id++)
		add_timer(&c, &b, id, 1 + (uint32_t)id % 3, rng_range(&seed, 1, 3000000));
	uint64_t ticks = 2500000; // crosses the wrap
	struct skynet_wheel_expired out[4];
	while (ticks > 0 || skynet_wheel_has_due(c.w)) {
		uint64_t left = ticks;
		size_t got = skynet_wheel_advance(c.w, &left, out, id % 2 ? 1 : 4);
		c.abs += ticks - left;
		ticks = left;
		book_fire(&b, out, got, c.abs, false);
		if (id + 3 <= n) {
			add_timer(&c, &b, id, 4, 1);
			add_timer(&c, &b, id + 1, 4, rng_range(&seed, 1, 300));
			add_timer(&c, &b, id + 2, 5, rng_range(&seed, 1, 100000));
			id += 3;
		}
	}
	run(&c, &b, 4000000, 16);
	b.n = id;
	TT_CHECK(id > 10000);
	TT_CHECK(b.early == 0);
	TT_CHECK(b.order == 0);
	TT_CHECK(count_fired(&b, 1) == 0);
	TT_CHECK(skynet_wheel_count(c.w) == 0);
	book_destroy(&b);
	skynet_wheel_release(c.w);
}

/* Same due tick: insertion order, across cascades, and while a big cascade is split over calls. */
static void
same_tick_in_insertion_order(int *failed) {
	struct clock c = {skynet_wheel_create(0xffff0000u), 0xffff0000u};
	struct book b;
	int n = 6000;
	book_init(&b, n);
	uint64_t due = c.abs + 300000;
	int id = 0;
	for (; id < 2000; id++)
		add_timer(&c, &b, id, 1 + (uint32_t)id % 4, (uint32_t)(due - c.abs) - (uint32_t)(id % 2));
	uint64_t seed = 99;
	struct skynet_wheel_expired out[3];
	while (c.abs < due + 2) {
		uint64_t ticks = rng_range(&seed, 1, 5000);
		if (ticks > due + 2 - c.abs)
			ticks = due + 2 - c.abs;
		while (ticks > 0 || skynet_wheel_has_due(c.w)) {
			uint64_t left = ticks;
			size_t got = skynet_wheel_advance(c.w, &left, out, 3);
			c.abs += ticks - left;
			ticks = left;
			book_fire(&b, out, got, c.abs, false);
			/* Also lands in the middle of cascades: 3 units of work per call. */
			if (id + 2 <= n && c.abs < due) {
				add_timer(&c, &b, id, 9, (uint32_t)(due - c.abs));
				add_timer(&c, &b, id + 1, 8, (uint32_t)(due - c.abs) + 1);
				id += 2;
			}
		}
	}
	b.n = id;
	TT_CHECK(b.early == 0);
	TT_CHECK(b.order == 0);
	TT_CHECK(count_fired(&b, 1) == 0);
	book_destroy(&b);
	skynet_wheel_release(c.w);
}

/* Cancel: O(1) by (handle, session), never fires, node reused at once, wherever the timer sits. */
static void
cancel_removes_and_reuses(int *failed) {
	struct clock c = {skynet_wheel_create(100), 100};
	struct book b;
	int n = 10000;
	book_init(&b, n);
	uint64_t seed = 5;
	for (int i = 0; i < n; i++)
		add_timer(&c, &b, i, 1 + (uint32_t)i % 10, rng_range(&seed, 1, 200000));
	size_t bytes = skynet_wheel_bytes(c.w);
	for (int i = 0; i < n; i += 2) {
		TT_CHECK(skynet_wheel_cancel(c.w, 1 + (uint32_t)i % 10, i) == 0);
		b.cancelled[i] = true;
	}
	TT_CHECK(skynet_wheel_cancel(c.w, 1, 0) == SKYNET_ENOENT);     // twice
	TT_CHECK(skynet_wheel_cancel(c.w, 2, 0) == SKYNET_ENOENT);     // wrong handle
	TT_CHECK(skynet_wheel_cancel(c.w, 1, n + 5) == SKYNET_ENOENT); // never existed
	TT_CHECK(skynet_wheel_count(c.w) == (size_t)n / 2);
	/* Re-adding as many reuses the freed nodes: no growth. */
	struct skynet_wheel_stats before, after;
	skynet_wheel_stats(c.w, &before);
	for (int i = 0; i < n; i += 2)
		skynet_wheel_add(c.w, 1 + (uint32_t)i % 10, -1 - i, 10);
	skynet_wheel_stats(c.w, &after);
	TT_CHECK(after.chunks == before.chunks);
	TT_CHECK(skynet_wheel_bytes(c.w) == bytes);
	for (int i = 0; i < n; i += 2)
		TT_CHECK(skynet_wheel_cancel(c.w, 1 + (uint32_t)i % 10, -1 - i) == 0);
	/* Cancel in the middle of a drained slot and of a split cascade. */
	struct skynet_wheel_expired out[1];
	int cancelled_mid = 0;
	for (int round = 0; round < 4000 && skynet_wheel_count(c.w) > 0; round++) {
		uint64_t left = 1 + rng_range(&seed, 0, 200);
		uint64_t asked = left;
		size_t got = skynet_wheel_advance(c.w, &left, out, 1);
		c.abs += asked - left;
		book_fire(&b, out, got, c.abs, true);
		for (int k = 0; k < 3; k++) {
			int i = (int)rng_range(&seed, 0, (uint32_t)n - 1);
			int err = skynet_wheel_cancel(c.w, 1 + (uint32_t)i % 10, i);
			TT_CHECK(err == 0 ? (!b.cancelled[i] && b.fired[i] == 0)
			                  : (b.cancelled[i] || b.fired[i] == 1));
			if (err == 0) {
				b.cancelled[i] = true;
				cancelled_mid++;
			}
		}
	}
	run(&c, &b, 300000, 1);
	TT_CHECK(cancelled_mid > 100);
	TT_CHECK(b.early == 0 && b.late == 0 && b.order == 0);
	TT_CHECK(count_fired(&b, 1) == 0);
	TT_CHECK(skynet_wheel_cancel(c.w, 2, 1) == SKYNET_ENOENT); // fired already
	/* Two timers on one pair: cancel takes the later one, the other still fires. */
	skynet_wheel_add(c.w, 77, 5, 10);
	skynet_wheel_add(c.w, 77, 5, 20);
	TT_CHECK(skynet_wheel_cancel(c.w, 77, 5) == 0);
	struct skynet_wheel_expired two[2];
	uint64_t ticks = 15;
	TT_CHECK(skynet_wheel_advance(c.w, &ticks, two, 2) == 1);
	TT_CHECK(skynet_wheel_count(c.w) == 0);
	book_destroy(&b);
	skynet_wheel_release(c.w);
}

/* A retiring service takes its timers at once, at a cost of its own timers only. */
static void
remove_service_is_local(int *failed) {
	struct clock c = {skynet_wheel_create(0), 0};
	struct book b;
	int n = 30000;
	book_init(&b, n);
	uint64_t seed = 11;
	for (int i = 0; i < n; i++) {
		uint32_t handle = i % 1000 == 0 ? 2 : (i % 2 ? 1 : 3); // handle 2 has 30 timers
		add_timer(&c, &b, i, handle, rng_range(&seed, 1, 100000));
		b.cancelled[i] = handle != 1;
	}
	TT_CHECK(skynet_wheel_pending(c.w, 2) == 30);
	struct skynet_wheel_stats s0, s1;
	skynet_wheel_stats(c.w, &s0);
	TT_CHECK(skynet_wheel_remove_service(c.w, 2, 256) == 30);
	skynet_wheel_stats(c.w, &s1);
	TT_CHECK(s1.unlinked - s0.unlinked == 30);
	TT_CHECK(skynet_wheel_pending(c.w, 2) == 0);
	TT_CHECK(skynet_wheel_remove_service(c.w, 2, 256) == 0);
	/* Batched: a return of max means call again. */
	size_t total = 0, got;
	while ((got = skynet_wheel_remove_service(c.w, 3, 1000)) == 1000)
		total += got;
	total += got;
	TT_CHECK(total == 14970);
	TT_CHECK(skynet_wheel_pending(c.w, 3) == 0);
	TT_CHECK(skynet_wheel_pending(c.w, 1) == 15000);
	TT_CHECK(skynet_wheel_count(c.w) == 15000);
	/* The service can come back. */
	skynet_wheel_add(c.w, 2, n + 1, 5);
	TT_CHECK(skynet_wheel_pending(c.w, 2) == 1);
	TT_CHECK(skynet_wheel_cancel(c.w, 2, n + 1) == 0);
	run(&c, &b, 100001, 32);
	TT_CHECK(b.early == 0 && b.order == 0);
	TT_CHECK(count_fired(&b, 1) == 0);
	book_destroy(&b);
	skynet_wheel_release(c.w);
}

/* A one-day clock jump with 10 timers stops a few times per timer, not once per tick. */
static void
day_jump_costs_per_timer(int *failed) {
	static const uint64_t jumps[] = {DAY_TICKS, 3 * (1ULL << 32) + 12345};
	for (int j = 0; j < 2; j++) {
		struct clock c = {skynet_wheel_create(0xfff00000u), 0xfff00000u};
		struct book b;
		book_init(&b, 10);
		uint64_t seed = 3 + (uint64_t)j;
		for (int i = 0; i < 10; i++)
			add_timer(&c, &b, i, 1, rng_range(&seed, 1, DAY_TICKS));
		size_t calls = run(&c, &b, jumps[j], 256);
		struct skynet_wheel_stats s;
		skynet_wheel_stats(c.w, &s);
		TT_CHECK(count_fired(&b, 1) == 0);
		TT_CHECK(b.early == 0 && b.order == 0);
		TT_CHECK(c.abs == 0xfff00000u + jumps[j]);
		/* Each timer: at most 4 cascades and 1 firing stop; plus one stop per lap of the counter. */
		TT_CHECK(s.steps <= 10 * 5 + 4);
		TT_CHECK(s.cascaded <= 10 * 4);
		TT_CHECK(calls <= 2);
		book_destroy(&b);
		skynet_wheel_release(c.w);
	}
}

/* No allocator call per timer: chunked pool, reused; at most 48 bytes per pending timer. */
static void
pool_reuse_and_bytes(int *failed) {
	struct clock c = {skynet_wheel_create(0), 0};
	struct book b;
	int n = 200000;
	book_init(&b, n);
	uint64_t seed = 13;
	for (int i = 0; i < n; i++)
		add_timer(&c, &b, i, 1 + (uint32_t)i % 1000, rng_range(&seed, 1, 100000));
	size_t bytes = skynet_wheel_bytes(c.w);
	TT_CHECK(bytes <= 48 * (size_t)n);
	struct skynet_wheel_stats s0, s1;
	skynet_wheel_stats(c.w, &s0);
	TT_CHECK(s0.chunks <= ((uint64_t)n + 1000) / 1024 + 1); // chunks, not timers
	run(&c, &b, 100001, 64);
	TT_CHECK(count_fired(&b, 1) == 0);
	for (int i = 0; i < n; i++)
		add_timer(&c, &b, i, 1 + (uint32_t)i % 1000, rng_range(&seed, 1, 100000));
	skynet_wheel_stats(c.w, &s1);
	TT_CHECK(s1.chunks == s0.chunks);
	TT_CHECK(skynet_wheel_bytes(c.w) == bytes);
	book_destroy(&b);
	skynet_wheel_release(c.w);
}

/* Pending counts, total and per service, through add, cancel, fire and removal. */
static void
pending_counts(int *failed) {
	struct skynet_wheel *w = skynet_wheel_create(0);
	for (int i = 0; i < 100; i++)
		skynet_wheel_add(w, 1 + (uint32_t)i % 3, i, 1 + (uint32_t)i);
	TT_CHECK(skynet_wheel_count(w) == 100);
	TT_CHECK(skynet_wheel_pending(w, 1) == 34);
	TT_CHECK(skynet_wheel_pending(w, 2) == 33);
	TT_CHECK(skynet_wheel_pending(w, 3) == 33);
	TT_CHECK(skynet_wheel_pending(w, 4) == 0);
	TT_CHECK(skynet_wheel_cancel(w, 1, 0) == 0);
	TT_CHECK(skynet_wheel_pending(w, 1) == 33);
	struct skynet_wheel_expired out[16];
	uint64_t ticks = 10; // fires sessions 1..9
	size_t fired = 0;
	while (ticks > 0 || skynet_wheel_has_due(w))
		fired += skynet_wheel_advance(w, &ticks, out, 16);
	TT_CHECK(fired == 9);
	TT_CHECK(skynet_wheel_count(w) == 90);
	TT_CHECK(skynet_wheel_pending(w, 1) == 30 && skynet_wheel_pending(w, 2) == 30);
	TT_CHECK(skynet_wheel_remove_service(w, 3, 100) == 30);
	TT_CHECK(skynet_wheel_count(w) == 60);
	skynet_wheel_release(w);
}

/* Virtual time: advancing by next_event until something fires lands on the earliest due tick. */
static void
next_event_reaches_each_deadline(int *failed) {
	struct clock c = {skynet_wheel_create(0xfffff000u), 0xfffff000u};
	struct book b;
	int n = 500;
	book_init(&b, n);
	uint64_t seed = 17;
	for (int i = 0; i < n; i++)
		add_timer(&c, &b, i, 1, i % 2 ? rng_range(&seed, 1, 5000) : rng_range(&seed, 1, 1u << 31));
	TT_CHECK(skynet_wheel_next_event(c.w) > 0);
	struct skynet_wheel_expired out[8];
	int jumps = 0;
	uint64_t d;
	while ((d = skynet_wheel_next_event(c.w)) != UINT64_MAX) {
		uint64_t left = d;
		size_t got = skynet_wheel_advance(c.w, &left, out, 8);
		c.abs += d - left;
		uint64_t earliest = UINT64_MAX;
		for (int i = 0; i < n; i++)
			if (b.fired[i] == 0 && b.due[i] < earliest)
				earliest = b.due[i];
		TT_CHECK(c.abs <= earliest); // never past a deadline
		book_fire(&b, out, got, c.abs, true);
		jumps++;
	}
	TT_CHECK(b.early == 0 && b.late == 0 && b.order == 0);
	TT_CHECK(count_fired(&b, 1) == 0);
	TT_CHECK(jumps < 5 * n);
	book_destroy(&b);
	skynet_wheel_release(c.w);
}

/* Random adds, cancels, removals and advances of every size against a model. */
static void
random_ops_match_model(int *failed) {
	int n = tt_stress() ? 200000 : 60000;
	struct clock c = {skynet_wheel_create(0xfffc0000u), 0xfffc0000u};
	struct book b;
	book_init(&b, n);
	uint64_t seed = 2024;
	int id = 0;
	while (id < n) {
		uint32_t r = rng_range(&seed, 0, 999);
		if (r < 600) {
			uint32_t kind = rng_range(&seed, 0, 3);
			uint32_t delay = kind == 0   ? rng_range(&seed, 1, 4)
			                 : kind == 1 ? rng_range(&seed, 1, 300)
			                 : kind == 2 ? rng_range(&seed, 1, 200000)
			                             : rng_range(&seed, 1, 1u << 28);
			add_timer(&c, &b, id, 1 + (uint32_t)id % 7, delay);
			id++;
		} else if (r < 800 && id > 0) {
			int i = (int)rng_range(&seed, 0, (uint32_t)id - 1);
			int err = skynet_wheel_cancel(c.w, 1 + (uint32_t)i % 7, i);
			bool was_pending = !b.cancelled[i] && b.fired[i] == 0;
			TT_CHECK((err == 0) == was_pending);
			if (err == 0)
				b.cancelled[i] = true;
		} else if (r < 803) {
			uint32_t handle = 1 + rng_range(&seed, 0, 6);
			while (skynet_wheel_remove_service(c.w, handle, 64) == 64)
				;
			for (int i = (int)handle - 1; i < id; i += 7)
				if (b.fired[i] == 0)
					b.cancelled[i] = true;
		} else if (r >= 800) {
			uint64_t ticks = r < 980 ? rng_range(&seed, 1, 500) : rng_range(&seed, 1, 1u << 27);
			run(&c, &b, ticks, r % 2 ? 1 : 1 + r % 13);
		}
	}
	run(&c, &b, (uint64_t)1 << 29, 7);
	b.n = id;
	TT_CHECK(b.early == 0 && b.late == 0 && b.order == 0);
	TT_CHECK(count_fired(&b, 1) == 0);
	TT_CHECK(skynet_wheel_count(c.w) == 0);
	for (uint32_t h = 1; h <= 7; h++)
		TT_CHECK(skynet_wheel_pending(c.w, h) == 0);
	book_destroy(&b);
	skynet_wheel_release(c.w);
}

/*
 * Duplicated (handle, session) pairs while the cancel index grows. The dup
 * keys are handles DUP_HANDLE0.. with sessions 0..DUP_SESSIONS-1; fillers
 * are timers of FILLER_HANDLE with sessions all distinct, added only to
 * make the index grow (it splits a bucket per add once it holds more
 * timers than buckets, from 1024 buckets up). The model keeps each key's
 * pending timers in the order they were added: a cancel must take the last
 * one, and a timer handed out must match a pending timer of its key due on
 * that very tick (every advance has cap 1, so the wheel's time is the
 * firing tick). Copies of one key get distinct due ticks, so a cancel that
 * took the wrong copy shows up when the right one fires.
 */
#define DUP_HANDLE0   200u
#define DUP_HANDLES   4u
#define DUP_SESSIONS  64u
#define DUP_KEYS      (DUP_HANDLES * DUP_SESSIONS)
#define FILLER_HANDLE 9u

struct dup_model {
	struct skynet_wheel *w;
	uint64_t abs; // matches skynet_wheel_time(w) modulo 2^32
	int cap;      // timers the arrays hold
	int n;        // timers added so far
	int fillers;  // filler sessions used so far
	int max_fillers;
	uint64_t *due; // per timer, absolute tick
	int *older;    // per timer: neighbours in its key's pending list, -1 at the ends
	int *newer;
	int *first; // per key: oldest pending timer, -1 when none
	int *last;  // newest pending timer
	size_t pending;
	size_t peak;
	int bad_cancel; // the wheel's answer disagreed with the model
	int bad_fire;   // a timer fired that the model did not expect on that tick
	int cancels;    // cancels that removed a timer
};

static void
dup_init(struct dup_model *m, uint32_t time, int cap, int max_fillers) {
	memset(m, 0, sizeof(*m));
	m->w = skynet_wheel_create(time);
	m->abs = time;
	m->cap = cap;
	m->max_fillers = max_fillers;
	m->due = skynet_calloc((size_t)cap, sizeof(*m->due));
	m->older = skynet_calloc((size_t)cap, sizeof(*m->older));
	m->newer = skynet_calloc((size_t)cap, sizeof(*m->newer));
	size_t keys = DUP_KEYS + (size_t)max_fillers;
	m->first = skynet_malloc(keys * sizeof(*m->first));
	m->last = skynet_malloc(keys * sizeof(*m->last));
	memset(m->first, 0xff, keys * sizeof(*m->first)); // -1
	memset(m->last, 0xff, keys * sizeof(*m->last));
}

static void
dup_destroy(struct dup_model *m) {
	skynet_wheel_release(m->w);
	skynet_free(m->due);
	skynet_free(m->older);
	skynet_free(m->newer);
	skynet_free(m->first);
	skynet_free(m->last);
}

/* The model's key of (handle, session), or -1 for a pair the test never adds. */
static int
dup_key(const struct dup_model *m, uint32_t handle, int session) {
	if (handle == FILLER_HANDLE)
		return session >= 0 && session < m->fillers ? (int)DUP_KEYS + session : -1;
	if (handle < DUP_HANDLE0 || handle >= DUP_HANDLE0 + DUP_HANDLES || session < 0 ||
	    session >= (int)DUP_SESSIONS)
		return -1;
	return (int)((handle - DUP_HANDLE0) * DUP_SESSIONS) + session;
}

static void
dup_unlink(struct dup_model *m, int key, int t) {
	if (m->older[t] >= 0)
		m->newer[m->older[t]] = m->newer[t];
	else
		m->first[key] = m->newer[t];
	if (m->newer[t] >= 0)
		m->older[m->newer[t]] = m->older[t];
	else
		m->last[key] = m->older[t];
	m->pending--;
}

static void
dup_add(struct dup_model *m, uint32_t handle, int session, uint32_t delay) {
	int key = dup_key(m, handle, session);
	assert(key >= 0 && m->n < m->cap && delay > 0);
	int t = m->n++;
	skynet_wheel_add(m->w, handle, session, delay);
	m->due[t] = m->abs + delay;
	m->older[t] = m->last[key];
	m->newer[t] = -1;
	if (m->last[key] >= 0)
		m->newer[m->last[key]] = t;
	else
		m->first[key] = t;
	m->last[key] = t;
	if (++m->pending > m->peak)
		m->peak = m->pending;
}

static void
dup_add_filler(struct dup_model *m, uint32_t delay) {
	assert(m->fillers < m->max_fillers);
	dup_add(m, FILLER_HANDLE, m->fillers++, delay);
}

/* Copy `copy` of dup key k (0..DUP_KEYS-1), due at an absolute tick no other copy of k has. */
static void
dup_add_copy(struct dup_model *m, uint32_t k, uint32_t copy, uint64_t start) {
	uint64_t due = start + 500000 + (uint64_t)copy * DUP_KEYS * 4 + k;
	assert(due > m->abs);
	dup_add(m, DUP_HANDLE0 + k / DUP_SESSIONS, (int)(k % DUP_SESSIONS), (uint32_t)(due - m->abs));
}

static void
dup_cancel(struct dup_model *m, uint32_t handle, int session) {
	int key = dup_key(m, handle, session);
	assert(key >= 0);
	int err = skynet_wheel_cancel(m->w, handle, session);
	int t = m->last[key];
	if ((err == 0) != (t >= 0)) {
		m->bad_cancel++;
		return;
	}
	if (t >= 0) {
		dup_unlink(m, key, t);
		m->cancels++;
	}
}

/* Advance by ticks, one timer per call, matching each firing against the model. */
static void
dup_run(struct dup_model *m, uint64_t ticks) {
	struct skynet_wheel_expired out[1];
	while (ticks > 0 || skynet_wheel_has_due(m->w)) {
		uint64_t left = ticks;
		size_t got = skynet_wheel_advance(m->w, &left, out, 1);
		m->abs += ticks - left;
		ticks = left;
		if (got == 0)
			continue;
		int key = dup_key(m, out[0].handle, out[0].session);
		int t = key >= 0 ? m->first[key] : -1;
		while (t >= 0 && m->due[t] != m->abs)
			t = m->newer[t];
		if (t < 0)
			m->bad_fire++;
		else
			dup_unlink(m, key, t);
	}
}

/* Everything left fires, each timer on its own due tick; nothing more. */
static void
dup_finish(int *failed, struct dup_model *m) {
	dup_run(m, 1u << 22);
	TT_CHECK(m->bad_cancel == 0);
	TT_CHECK(m->bad_fire == 0);
	TT_CHECK(m->pending == 0);
	TT_CHECK(skynet_wheel_count(m->w) == 0);
}

/*
 * One scenario: a string of steps. 'D' adds one more copy of every dup key;
 * 'F' adds 1000 fillers; 'c' .. 'f' cancel each dup key k once if
 * k % 2 .. k % 5 is not 0 (so keys end with different numbers of copies
 * left); 'A' advances 3000 ticks.
 */
static void
dup_scenario(int *failed, const char *plan, uint64_t seed) {
	struct dup_model m;
	int fillers = 0;
	for (const char *p = plan; *p; p++)
		fillers += *p == 'F' ? 1000 : 0;
	dup_init(&m, 0xfffe0000u, fillers + 64 * DUP_KEYS, fillers);
	uint64_t start = m.abs;
	uint32_t copy = 0;
	for (const char *p = plan; *p; p++) {
		switch (*p) {
		case 'D':
			for (uint32_t k = 0; k < DUP_KEYS; k++)
				dup_add_copy(&m, k, copy, start);
			copy++;
			break;
		case 'F':
			for (int i = 0; i < 1000; i++)
				dup_add_filler(&m, rng_range(&seed, 1, 1000000));
			break;
		case 'A':
			dup_run(&m, 3000);
			break;
		default:
			assert(*p >= 'c' && *p <= 'f');
			for (uint32_t k = 0; k < DUP_KEYS; k++)
				if (k % (uint32_t)(*p - 'a') != 0)
					dup_cancel(&m, DUP_HANDLE0 + k / DUP_SESSIONS, (int)(k % DUP_SESSIONS));
			break;
		}
	}
	TT_CHECK(m.cancels > 0);
	dup_finish(failed, &m);
	dup_destroy(&m);
}

/*
 * Cancel of a duplicated pair takes the copy set last, whatever growth of
 * the index came before, between or after the two adds. Index growth only
 * happens while the pending count sets new highs: 1000 fillers take the
 * 1024-bucket index a thousand splits further.
 */
static void
dup_cancel_takes_last_across_growth(int *failed) {
	dup_scenario(failed, "DFFFDc", 1);              // A, growth, B, cancel: B goes
	dup_scenario(failed, "DDFFFc", 2);              // A, B, growth, cancel: B goes
	dup_scenario(failed, "DFDFFFc", 3);             // growth between and after
	dup_scenario(failed, "FFFFFFDDFFFFFFc", 4);     // both after several doublings, then more
	dup_scenario(failed, "DDDFFFFFFFFFFFFccdc", 5); // down to A, to none, past none
}

/* Many copies per key, added between growth steps, cancelled a few at a time, some fired first. */
static void
dup_many_interleaved_with_growth(int *failed) {
	dup_scenario(failed, "DFDFFDFFFFDFFFFFFFFDde", 6);
	dup_scenario(failed, "DFDFAFDdFFFFAeDFFFFFFFFDfcA", 7);
	dup_scenario(failed, "DDDDFDFDFDFDFFDFFDcFFFFDcFFFFDcFFFFd", 8);
}

/* Seeded random adds, cancels of duplicated pairs and advances while the index keeps growing. */
static void
dup_random_across_growth(int *failed) {
	int ops = tt_stress() ? 200000 : 60000;
	struct dup_model m;
	dup_init(&m, 0xfff80000u, ops, ops);
	uint64_t seed = 77;
	for (int op = 0; op < ops; op++) {
		uint32_t r = rng_range(&seed, 0, 99);
		if (r < 35) {
			dup_add_filler(&m, rng_range(&seed, 1, 1u << 21));
		} else if (r < 62) {
			/* 4 handles x 16 sessions: most keys hold several copies at once. */
			uint32_t handle = DUP_HANDLE0 + rng_range(&seed, 0, DUP_HANDLES - 1);
			int session = (int)rng_range(&seed, 0, 15);
			uint32_t kind = rng_range(&seed, 0, 2);
			uint32_t delay = kind == 0   ? rng_range(&seed, 1, 50)
			                 : kind == 1 ? rng_range(&seed, 1, 5000)
			                             : rng_range(&seed, 1, 400000);
			dup_add(&m, handle, session, delay);
		} else if (r < 87) {
			uint32_t handle = DUP_HANDLE0 + rng_range(&seed, 0, DUP_HANDLES - 1);
			dup_cancel(&m, handle, (int)rng_range(&seed, 0, 15));
		} else {
			dup_run(&m, rng_range(&seed, 1, 100));
		}
	}
	TT_CHECK(m.peak > 8192); // the index went through at least three doublings
	TT_CHECK(m.cancels > ops / 10);
	dup_finish(failed, &m);
	dup_destroy(&m);
}

/* Two threads add (and cancel some) while a third ticks; every timer fires exactly once. */
struct shared_wheel {
	struct spinlock lock;
	struct skynet_wheel *w; // lock
	uint64_t abs;           // lock
	struct book b[2];       // due/cancelled: the adder, under lock; fired: the ticker, under lock
	int per_thread;
	ATOM_INT adders_left;
	int cancel_wrong;  // adder only
	int fired_unknown; // ticker only
};

struct adder_arg {
	struct shared_wheel *s;
	int thread;
};

static void *
adder_main(void *ud) {
	struct adder_arg *a = ud;
	struct shared_wheel *s = a->s;
	struct book *b = &s->b[a->thread];
	uint64_t seed = 0x1234567ULL + (uint64_t)a->thread;
	uint32_t handle = 100 + (uint32_t)a->thread;
	for (int i = 0; i < s->per_thread; i++) {
		uint32_t delay = i % 4 == 0 ? rng_range(&seed, 1, 2) : rng_range(&seed, 1, 600);
		SPIN_LOCK(s);
		skynet_wheel_add(s->w, handle, i, delay);
		b->due[i] = s->abs + delay;
		SPIN_UNLOCK(s);
		if (i % 5 == 0 && i > 0) {
			int victim = i - (int)rng_range(&seed, 0, 5);
			SPIN_LOCK(s);
			int err = skynet_wheel_cancel(s->w, handle, victim);
			bool was_pending = !b->cancelled[victim] && b->fired[victim] == 0;
			if ((err == 0) != was_pending)
				s->cancel_wrong++;
			if (err == 0)
				b->cancelled[victim] = true;
			SPIN_UNLOCK(s);
		}
	}
	ATOM_FDEC(&s->adders_left);
	return NULL;
}

static void *
ticker_main(void *ud) {
	struct shared_wheel *s = ud;
	struct skynet_wheel_expired out[32];
	for (;;) {
		bool adding = ATOM_LOAD(&s->adders_left) > 0;
		SPIN_LOCK(s);
		uint64_t ticks = 1;
		bool more;
		do {
			uint64_t left = ticks;
			size_t n = skynet_wheel_advance(s->w, &left, out, 32);
			s->abs += ticks - left;
			ticks = left;
			for (size_t i = 0; i < n; i++) {
				int t = (int)out[i].handle - 100;
				if (t < 0 || t > 1 || out[i].session < 0 || out[i].session >= s->per_thread) {
					s->fired_unknown++;
					continue;
				}
				book_fire(&s->b[t], &out[i], 1, s->abs, true);
			}
			more = ticks > 0 || skynet_wheel_has_due(s->w);
			if (more) { // let the adders in between batches, as skynet_timer.c does
				SPIN_UNLOCK(s);
				SPIN_LOCK(s);
			}
		} while (more);
		bool empty = skynet_wheel_count(s->w) == 0;
		SPIN_UNLOCK(s);
		if (!adding && empty)
			return NULL;
	}
}

static void
concurrent_adds_fire_once(int *failed) {
	struct shared_wheel s;
	memset(&s, 0, sizeof(s));
	SPIN_INIT(&s);
	s.w = skynet_wheel_create(0xffffff00u);
	s.abs = 0xffffff00u;
	s.per_thread = tt_stress() ? 100000 : 30000;
	book_init(&s.b[0], s.per_thread);
	book_init(&s.b[1], s.per_thread);
	ATOM_INIT(&s.adders_left, 2);
	pthread_t ticker, adders[2];
	struct adder_arg args[2] = {{&s, 0}, {&s, 1}};
	pthread_create(&ticker, NULL, ticker_main, &s);
	for (int i = 0; i < 2; i++)
		pthread_create(&adders[i], NULL, adder_main, &args[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(adders[i], NULL);
	pthread_join(ticker, NULL);
	TT_CHECK(s.cancel_wrong == 0);
	TT_CHECK(s.fired_unknown == 0);
	for (int t = 0; t < 2; t++) {
		TT_CHECK(s.b[t].early == 0 && s.b[t].late == 0 && s.b[t].order == 0);
		TT_CHECK(count_fired(&s.b[t], 1) == 0);
		book_destroy(&s.b[t]);
	}
	TT_CHECK(skynet_wheel_count(s.w) == 0);
	skynet_wheel_release(s.w);
	SPIN_DESTROY(&s);
}

/* Run w by ticks to completion; the number fired, the last one's session in *last. */
static size_t
drain(struct skynet_wheel *w, uint64_t ticks, int *last) {
	struct skynet_wheel_expired out[2];
	size_t fired = 0;
	while (ticks > 0 || skynet_wheel_has_due(w)) {
		size_t n = skynet_wheel_advance(w, &ticks, out, 2);
		if (n > 0)
			*last = out[n - 1].session;
		fired += n;
	}
	return fired;
}

/* Delays are clamped to 1..WHEEL_MAX_DELAY. */
static void
delay_is_clamped(int *failed) {
	struct skynet_wheel *w = skynet_wheel_create(5);
	skynet_wheel_add(w, 1, 1, 0);
	skynet_wheel_add(w, 1, 2, UINT32_MAX);
	int last = 0;
	TT_CHECK(drain(w, 1, &last) == 1 && last == 1);
	uint64_t next = skynet_wheel_next_event(w); // a cascade first, never past the deadline
	TT_CHECK(next > 0 && next <= WHEEL_MAX_DELAY - 1);
	TT_CHECK(drain(w, WHEEL_MAX_DELAY - 2, &last) == 0);
	TT_CHECK(drain(w, 1, &last) == 1 && last == 2);
	TT_CHECK(skynet_wheel_next_event(w) == UINT64_MAX);
	skynet_wheel_release(w);
}

int
main(void) {
	TT_RUN(fires_exactly_on_due_tick);
	TT_RUN(wrap_tick_by_tick);
	TT_RUN(adds_between_updates);
	TT_RUN(adds_during_catchup);
	TT_RUN(same_tick_in_insertion_order);
	TT_RUN(cancel_removes_and_reuses);
	TT_RUN(remove_service_is_local);
	TT_RUN(day_jump_costs_per_timer);
	TT_RUN(pool_reuse_and_bytes);
	TT_RUN(pending_counts);
	TT_RUN(next_event_reaches_each_deadline);
	TT_RUN(random_ops_match_model);
	TT_RUN(dup_cancel_takes_last_across_growth);
	TT_RUN(dup_many_interleaved_with_growth);
	TT_RUN(dup_random_across_growth);
	TT_RUN(concurrent_adds_fire_once);
	TT_RUN(delay_is_clamped);
	return tt_summary();
}
