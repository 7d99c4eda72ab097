/*
 * The node's timer: one skynet_wheel (see skynet_wheel.c for the slots,
 * the wrap rule and the skipping) driven in centiseconds.
 *
 * Time. `now_cs` is what skynet_now() reports: at init the centisecond part
 * of the wall clock (0..99), then it grows by the monotonic centiseconds
 * that elapse, as read by skynet_updatetime on the timer thread (every
 * 2.5 ms). One tick of the wheel is one centisecond; `wheel_cs` is the
 * now_cs value of the wheel's current tick, <= now_cs, and the wheel is
 * advanced one tick per elapsed centisecond (a jump costs time in proportion
 * to the timers that fire, not to its length). A clock that goes backwards
 * is logged once; the timer then counts from the new reading and now_cs
 * never decreases. In virtual time the clock is never read: now_cs starts
 * at 0 and moves only in skynet_timer_advance_idle, straight to the next
 * deadline.
 *
 * A timer asked for time_cs is due at deadline = (precise now) + time_cs,
 * where precise now also counts the centiseconds elapsed since the last
 * update (current_cs), so no timer fires a full tick early for having been
 * added just before an update. It fires on the first tick >= deadline.
 *
 * Locking. `lock` (a spinlock) covers the wheel and wheel_cs; adds, cancels
 * and counts hold it for O(1) work, advancing for at most TIMER_BATCH units
 * (the wheel bounds the work per call, a big slot is cascaded across several
 * calls). Expired timers are copied out into a batch on the advancer's stack
 * and turned into messages after unlocking, so no queue lock is ever taken
 * under the timer lock and adders never wait for a dispatch. `advancing` (a
 * mutex, held across dispatch) lets one advancer run at a time, the timer
 * thread or the idle scheduler, so that batches reach the queues in firing
 * order. Lock order: advancing, then lock. Why this is safe: the wheel is
 * consistent at every unlock, so an add made between two batches of an
 * update (or of a long catch-up) is placed relative to the wheel's current
 * tick and fires when that tick comes, in the same update if it is already
 * due; if the wheel moved past the deadline while the adder computed it, the
 * adder pushes the response itself. A cancel that returns 0 removed the
 * timer before any batch took it, so no message is sent; once a batch holds
 * the timer, cancel returns SKYNET_ENOENT and the message arrives (the Lua
 * side discards it). Why one lock and not per-thread add buffers drained by
 * the tick loop: an add or cancel is O(1) work (tens of ns in cache), the
 * advancer never holds the lock for more than a batch (microseconds), and
 * cancel must see every pending timer to answer 0 or SKYNET_ENOENT truly,
 * which timers parked in another thread's buffer would break.
 *
 * Sleeping. The timer thread does not poll: after each update it asks
 * skynet_timer_wait_us for the time until the tick of the next pending
 * deadline begins (tick boundaries are exact multiples of 10 ms of
 * CLOCK_MONOTONIC) and sleeps until then, so an idle node wakes rarely and
 * a due timer fires within the thread's wake-up latency of its tick, not up
 * to a 2.5 ms poll later. wake_cs (under lock) is that tick; an add whose
 * deadline falls before it kicks the thread awake. Both the computation of
 * wake_cs and an add's comparison with it happen under lock, so either the
 * thread saw the new timer or the adder sees the new wake_cs.
 *
 * Precise timers (skynet_timeout_us) live beside the wheel in a heap of
 * microsecond deadlines (skynet_fine.c), under the same lock. The timer
 * thread's wake-up instant (wake_us) is the earlier of the next tick's
 * beginning and the heap's first deadline; an add before wake_us kicks it.
 * skynet_updatetime pops what is due after advancing the wheel, so a
 * precise timer fires within the thread's wake-up latency of its deadline
 * (tens of microseconds) instead of up to a tick later. Why not finer
 * ticks: every timer would pay for them (10x the ticks to advance, a wheel
 * node with a remainder field), while few deadlines need better than a
 * centisecond; the heap costs O(log n) only for those that ask. In virtual
 * time a precise timer is a wheel timer of the covering centiseconds.
 *
 * The clock (CLOCK) counts microseconds; the wheel uses its whole
 * centiseconds. now_cs and clock_cs (the monotonic reading that matches now_cs) are read
 * without the lock. The timer thread stores clock_cs and then now_cs;
 * current_cs loads now_cs and then clock_cs, so it never pairs a new now_cs
 * with an old clock_cs, and the estimate can only fall short (never early).
 */
#include "skynet_timer.h"

#include "skynet.h"
#include "skynet_fine.h"
#include "skynet_post.h"
#include "skynet_wheel.h"
#include "atomic.h"
#include "skynet_cond.h"
#include "spinlock.h"

#include <inttypes.h>
#include <time.h>

#define TIMER_BATCH 256 // units of wheel work, and expired timers, per lock hold

struct timer_state {
	struct spinlock lock;
	struct skynet_wheel *wheel;   // owned; lock
	uint64_t wheel_cs;            // lock; written by the advancer only
	uint64_t wake_cs;             // lock; the tick the sleeping timer thread wakes at
	struct skynet_fine *fine;     // owned; lock: the precise timers
	uint64_t wake_us;             // lock; the instant (CLOCK) the sleeping timer thread wakes at
	struct skynet_cond advancing; // its mutex only
	bool warned_backwards;        // advancing
	ATOM_U64 now_cs;
	ATOM_U64 clock_cs; // real time only
	/* Statistics: written by the advancer only (under advancing), read relaxed. */
	ATOM_U64 fired;
	ATOM_U64 late_sum_us;
	ATOM_U64 late[SKYNET_TIMER_LATE_BUCKETS];
	ATOM_U64 last_late_us;
	uint32_t starttime;
	bool virtual_time;
};

static struct timer_state *TIMER;

static uint64_t
monotonic_real_us(void) {
	return skynet_monotonic_ns() / 1000;
}

static skynet_timer_clock_cb CLOCK = monotonic_real_us;

/* The clock in whole centiseconds: the wheel's ticks. */
static uint64_t
clock_cs(void) {
	return CLOCK() / 10000;
}
static skynet_timer_kick_cb KICK = NULL;
static skynet_timer_wake_cb WAKE = NULL;
#define WAKE_SESSION 0 // the session of wake timers (skynet_timer_wake)

void
skynet_timer_set_kick(skynet_timer_kick_cb kick) {
	KICK = kick;
}

void
skynet_timer_set_wake(skynet_timer_wake_cb wake) {
	WAKE = wake;
}

void
skynet_timer_set_clock(skynet_timer_clock_cb clock) {
	CLOCK = clock != NULL ? clock : monotonic_real_us;
}

void
skynet_timer_init(bool virtual_time) {
	struct timer_state *t = skynet_calloc(1, sizeof(*t));
	SPIN_INIT(t);
	skynet_cond_init(&t->advancing);
	struct timespec wall;
	clock_gettime(CLOCK_REALTIME, &wall);
	t->starttime = (uint32_t)wall.tv_sec;
	t->virtual_time = virtual_time;
	uint64_t now = virtual_time ? 0 : (uint64_t)wall.tv_nsec / 10000000;
	ATOM_INIT(&t->now_cs, now);
	ATOM_INIT(&t->clock_cs, virtual_time ? 0 : clock_cs());
	t->wheel_cs = now;
	t->wheel = skynet_wheel_create((uint32_t)now);
	t->fine = skynet_fine_create();
	TIMER = t;
}

void
skynet_timer_exit(void) {
	struct timer_state *t = TIMER;
	if (t == NULL)
		return;
	TIMER = NULL;
	skynet_wheel_release(t->wheel);
	skynet_fine_release(t->fine);
	skynet_cond_destroy(&t->advancing);
	SPIN_DESTROY(t);
	skynet_free(t);
}

static uint64_t current_cs(const struct timer_state *t);

uint64_t
skynet_now(void) {
	// The clock, not the last published value: the timer thread may sleep long.
	return current_cs(TIMER);
}

uint32_t
skynet_starttime(void) {
	return TIMER->starttime;
}

/* now_cs plus the centiseconds elapsed since the timer thread last published it. */
static uint64_t
current_cs(const struct timer_state *t) {
	uint64_t now = ATOM_LOAD(&t->now_cs);
	if (t->virtual_time)
		return now;
	uint64_t last = ATOM_LOAD(&t->clock_cs); // after now_cs: see the top comment
	uint64_t clock = clock_cs();
	return clock > last ? now + (clock - last) : now;
}

static int
push_response(uint32_t handle, int session) {
	struct skynet_message msg = {
	    .source = 0,
	    .session = session,
	    .data = NULL,
	    .sz = skynet_message_sz(PTYPE_RESPONSE, 0),
	};
	return skynet_post(handle, &msg);
}

/* A timer is due: a wake timer calls WAKE, any other sends its response. */
static void
fire(uint32_t handle, int session) {
	if (session == WAKE_SESSION) {
		if (WAKE)
			WAKE(handle);
		return;
	}
	(void)push_response(handle, session); // a service that is gone gets nothing
}

static void
dispatch(const struct skynet_wheel_expired *batch, size_t n) {
	for (size_t i = 0; i < n; i++)
		fire(batch[i].handle, batch[i].session);
}

static const uint32_t LATE_LE_US[SKYNET_TIMER_LATE_BUCKETS - 1] = {
    1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 1000000,
};

uint32_t
skynet_timer_late_le_us(int i) {
	return i >= 0 && i < SKYNET_TIMER_LATE_BUCKETS - 1 ? LATE_LE_US[i] : 0;
}

/* Counts n timers fired late_us after their tick began. Caller holds advancing
 * (the only writer); relaxed stores pair with the relaxed loads of skynet_timer_stat. */
static void
count_fired(struct timer_state *t, size_t n, uint64_t late_us) {
	int b = 0;
	while (b < SKYNET_TIMER_LATE_BUCKETS - 1 && late_us > LATE_LE_US[b])
		b++;
	ATOM_STORE_RELAXED(&t->fired, ATOM_LOAD_RELAXED(&t->fired) + n);
	ATOM_STORE_RELAXED(&t->late[b], ATOM_LOAD_RELAXED(&t->late[b]) + n);
	ATOM_STORE_RELAXED(&t->late_sum_us, ATOM_LOAD_RELAXED(&t->late_sum_us) + n * late_us);
	ATOM_STORE_RELAXED(&t->last_late_us, late_us);
}

void
skynet_timer_stat(struct skynet_timer_stat *out) {
	struct timer_state *t = TIMER;
	out->pending = skynet_timer_pending(0);
	out->fired = ATOM_LOAD_RELAXED(&t->fired);
	out->late_sum_us = ATOM_LOAD_RELAXED(&t->late_sum_us);
	for (int i = 0; i < SKYNET_TIMER_LATE_BUCKETS; i++)
		out->late[i] = ATOM_LOAD_RELAXED(&t->late[i]);
	out->last_late_us = ATOM_LOAD_RELAXED(&t->last_late_us);
}

static uint64_t monotonic_us(void);

int
skynet_timeout(uint32_t handle, int time_cs, int session) {
	if (time_cs <= 0)
		return push_response(handle, session) == 0 ? session : SKYNET_EDEAD;
	struct timer_state *t = TIMER;
	uint64_t deadline = current_cs(t) + (uint64_t)time_cs;
	SPIN_LOCK(t);
	bool passed = deadline <= t->wheel_cs;
	bool kick = false;
	if (!passed) {
		uint64_t delay = deadline - t->wheel_cs;
		skynet_wheel_add(t->wheel, handle, session,
		                 delay < WHEEL_MAX_DELAY ? (uint32_t)delay : WHEEL_MAX_DELAY);
		kick = deadline < t->wake_cs;
		if (kick)
			t->wake_cs = deadline; // one kick is enough for every earlier add
	}
	SPIN_UNLOCK(t);
	if (passed)
		fire(handle, session); // the wheel went past it meanwhile
	else if (kick && KICK)
		KICK();
	return session;
}

void
skynet_timer_wake(uint32_t handle, int time_cs) {
	(void)skynet_timeout(handle, time_cs > 0 ? time_cs : 1, WAKE_SESSION);
}

int
skynet_timeout_us(uint32_t handle, int64_t delay_us, int session) {
	struct timer_state *t = TIMER;
	if (t->virtual_time) {
		/* Virtual time moves in whole ticks: the first one at or after the deadline. */
		int64_t cs = delay_us > 0 ? (delay_us + 9999) / 10000 : 0;
		return skynet_timeout(handle, cs < INT32_MAX ? (int)cs : INT32_MAX, session);
	}
	if (delay_us <= 0)
		return push_response(handle, session) == 0 ? session : SKYNET_EDEAD;
	uint64_t due = monotonic_us() + (uint64_t)delay_us;
	SPIN_LOCK(t);
	skynet_fine_add(t->fine, handle, session, due);
	bool kick = due < t->wake_us;
	if (kick)
		t->wake_us = due; // one kick is enough for every earlier add
	SPIN_UNLOCK(t);
	if (kick && KICK)
		KICK();
	return session;
}

int
skynet_timer_cancel(uint32_t handle, int session) {
	struct timer_state *t = TIMER;
	SPIN_LOCK(t);
	int err = skynet_wheel_cancel(t->wheel, handle, session);
	if (err != 0)
		err = skynet_fine_cancel(t->fine, handle, session);
	SPIN_UNLOCK(t);
	return err;
}

/*
 * A timer due now (skynet.yield, a timeout of 0): no expiry, but a response
 * the service sends itself, so that it queues behind the backlog even with
 * the priority lane on (skynet_mq.c sends responses from source 0 into the
 * lane). A service that is gone gets nothing.
 */
static int
post_due_now(struct skynet_context *ctx, int session) {
	uint32_t handle = skynet_context_handle(ctx);
	struct skynet_message msg = {
	    .source = handle,
	    .session = session,
	    .data = NULL,
	    .sz = skynet_message_sz(PTYPE_RESPONSE, 0),
	};
	(void)skynet_post(handle, &msg);
	return session;
}

int
skynet_timeout_new(struct skynet_context *ctx, int time_cs) {
	int session = skynet_context_newsession(ctx);
	if (time_cs <= 0)
		return post_due_now(ctx, session);
	skynet_timeout(skynet_context_handle(ctx), time_cs, session);
	return session;
}

int
skynet_timeout_us_new(struct skynet_context *ctx, int64_t delay_us) {
	int session = skynet_context_newsession(ctx);
	if (delay_us <= 0)
		return post_due_now(ctx, session);
	skynet_timeout_us(skynet_context_handle(ctx), delay_us, session);
	return session;
}

int
skynet_timeout_cancel(struct skynet_context *ctx, int session) {
	return skynet_timer_cancel(skynet_context_handle(ctx), session);
}

void
skynet_timer_remove_service(uint32_t handle) {
	struct timer_state *t = TIMER;
	size_t removed;
	do {
		SPIN_LOCK(t);
		removed = skynet_wheel_remove_service(t->wheel, handle, TIMER_BATCH);
		SPIN_UNLOCK(t);
	} while (removed == TIMER_BATCH);
	SPIN_LOCK(t);
	(void)skynet_fine_remove_service(t->fine, handle);
	SPIN_UNLOCK(t);
}

size_t
skynet_timer_pending(uint32_t handle) {
	struct timer_state *t = TIMER;
	SPIN_LOCK(t);
	size_t n = handle == 0 ? skynet_wheel_count(t->wheel) : skynet_wheel_pending(t->wheel, handle);
	n += skynet_fine_pending(t->fine, handle);
	SPIN_UNLOCK(t);
	return n;
}

/* Advance the wheel to target_cs batch by batch, dispatching between. Caller holds advancing. */
static void
advance_to(struct timer_state *t, uint64_t target_cs) {
	struct skynet_wheel_expired batch[TIMER_BATCH];
	bool more;
	do {
		SPIN_LOCK(t);
		uint64_t ticks = target_cs - t->wheel_cs;
		uint64_t left = ticks;
		size_t n = skynet_wheel_advance(t->wheel, &left, batch, TIMER_BATCH);
		t->wheel_cs += ticks - left;
		more = left > 0 || skynet_wheel_has_due(t->wheel);
		uint64_t tick = t->wheel_cs;
		SPIN_UNLOCK(t);
		dispatch(batch, n);
		if (n > 0) {
			/* The tick began (now_cs - tick) cs before the clock reading clock_cs. */
			uint64_t behind = ATOM_LOAD(&t->now_cs) - tick;
			uint64_t begin_us = (ATOM_LOAD(&t->clock_cs) - behind) * 10000;
			uint64_t now_us = monotonic_us();
			count_fired(t, n, now_us > begin_us ? now_us - begin_us : 0);
		}
	} while (more);
}

/* Queue the precise timers that are due, batch by batch. Caller holds advancing. */
static void
fire_fine(struct timer_state *t) {
	struct skynet_wheel_expired batch[TIMER_BATCH];
	uint64_t due[TIMER_BATCH];
	size_t n;
	do {
		uint64_t now_us = monotonic_us();
		SPIN_LOCK(t);
		n = skynet_fine_pop(t->fine, now_us, batch, due, TIMER_BATCH);
		SPIN_UNLOCK(t);
		dispatch(batch, n);
		for (size_t i = 0; i < n; i++)
			count_fired(t, 1, now_us - due[i]);
	} while (n == TIMER_BATCH);
}

void
skynet_updatetime(void) {
	struct timer_state *t = TIMER;
	if (t->virtual_time)
		return;
	skynet_cond_lock(&t->advancing);
	uint64_t clock = clock_cs();
	uint64_t last = ATOM_LOAD(&t->clock_cs);
	uint64_t back_cs = 0;
	if (clock < last) {
		ATOM_STORE(&t->clock_cs, clock); // count from here; now_cs stays
		if (!t->warned_backwards) {
			t->warned_backwards = true;
			back_cs = last - clock;
		}
	} else if (clock > last) {
		/* clock_cs before now_cs: current_cs relies on this order. */
		ATOM_STORE(&t->clock_cs, clock);
		uint64_t now = ATOM_LOAD(&t->now_cs) + (clock - last);
		ATOM_STORE(&t->now_cs, now);
		advance_to(t, now);
	}
	fire_fine(t);
	skynet_cond_unlock(&t->advancing);
	if (back_cs != 0)
		skynet_error(NULL, "warn: timer: clock went backwards diff_cs=%" PRIu64, back_cs);
}

static uint64_t
monotonic_us(void) {
	return CLOCK();
}

uint64_t
skynet_timer_wait_us(uint64_t max_us) {
	struct timer_state *t = TIMER;
	uint64_t max_cs = max_us / 10000 + 1;
	uint64_t now = ATOM_LOAD(&t->now_cs);
	uint64_t clock = ATOM_LOAD(&t->clock_cs);
	SPIN_LOCK(t);
	uint64_t next = skynet_wheel_next_event(t->wheel);
	uint64_t target;
	if (next == UINT64_MAX || next > max_cs || t->wheel_cs + next > now + max_cs)
		target = now + max_cs;
	else
		target = t->wheel_cs + next;
	t->wake_cs = target;
	// Tick target begins when the monotonic clock reaches clock + (target - now) cs.
	uint64_t wake_us = target <= now ? 0 : (clock + (target - now)) * 10000;
	uint64_t fine = skynet_fine_next(t->fine);
	if (fine < wake_us)
		wake_us = fine;
	t->wake_us = wake_us;
	SPIN_UNLOCK(t);
	uint64_t us = monotonic_us();
	if (wake_us <= us)
		return 0;
	return wake_us - us < max_us ? wake_us - us : max_us;
}

/* Move the wheel to the first tick at which a timer fires; fill batch from it. */
static size_t
jump_to_next(struct timer_state *t, struct skynet_wheel_expired *batch, bool *more) {
	for (;;) {
		SPIN_LOCK(t);
		uint64_t ticks = skynet_wheel_next_event(t->wheel);
		if (ticks == UINT64_MAX) {
			SPIN_UNLOCK(t);
			return 0;
		}
		uint64_t left = ticks;
		size_t n = skynet_wheel_advance(t->wheel, &left, batch, TIMER_BATCH);
		t->wheel_cs += ticks - left;
		if (n > 0) {
			ATOM_STORE(&t->now_cs, t->wheel_cs); // before dispatch: handlers see now >= deadline
			*more = skynet_wheel_has_due(t->wheel);
		}
		SPIN_UNLOCK(t);
		if (n > 0)
			return n;
	}
}

bool
skynet_timer_advance_idle(void) {
	struct timer_state *t = TIMER;
	if (!t->virtual_time)
		return false;
	struct skynet_wheel_expired batch[TIMER_BATCH];
	skynet_cond_lock(&t->advancing);
	bool more = false;
	size_t n = jump_to_next(t, batch, &more);
	dispatch(batch, n);
	count_fired(t, n, 0); // virtual time: every timer fires on its tick
	while (more) {
		uint64_t none = 0;
		SPIN_LOCK(t);
		size_t m = skynet_wheel_advance(t->wheel, &none, batch, TIMER_BATCH);
		more = skynet_wheel_has_due(t->wheel);
		SPIN_UNLOCK(t);
		dispatch(batch, m);
		count_fired(t, m, 0);
	}
	skynet_cond_unlock(&t->advancing);
	return n > 0;
}
