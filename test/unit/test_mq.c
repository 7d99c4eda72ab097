/*
 * Message queues: order, growth, global-queue membership, overload, release, byte counts;
 * the priority lane (order within each lane, lazy allocation, growth, counters, and a stress
 * case with concurrent producers and workers).
 */
#include "tt.h"

#include "skynet.h"
#include "skynet_mq.h"
#include "skynet_socket_internal.h"
#include "atomic.h"

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>

static struct skynet_message
msg_n(int n) {
	struct skynet_message m = {.source = 1, .session = n, .data = NULL, .sz = 0};
	return m;
}

static void
fifo_order_and_growth(int *failed) {
	skynet_mq_init();
	struct message_queue *q = skynet_mq_create(7);
	TT_CHECK(skynet_mq_handle(q) == 7);
	enum { N = 10000 }; // far past the initial 64 slots
	for (int i = 0; i < N; i++) {
		struct skynet_message m = msg_n(i);
		skynet_mq_push(q, &m);
	}
	TT_CHECK(skynet_mq_length(q) == N);
	int in_order = 1;
	struct skynet_message m;
	for (int i = 0; i < N; i++) {
		if (skynet_mq_pop(q, &m) != 0 || m.session != i)
			in_order = 0;
	}
	TT_CHECK(in_order);
	TT_CHECK(skynet_mq_pop(q, &m) == 1);
	skynet_mq_mark_release(q); // empty and out of the global queue: joins it
	TT_CHECK(skynet_globalmq_pop() == q);
	skynet_mq_release(q, NULL, NULL);
	skynet_mq_exit();
}

static void
wraparound_keeps_order(int *failed) {
	skynet_mq_init();
	struct message_queue *q = skynet_mq_create(1);
	int next_push = 0, next_pop = 0, ok = 1;
	struct skynet_message m;
	// Interleave so head and tail wrap many times, growing in between.
	for (int round = 0; round < 200; round++) {
		for (int i = 0; i < 50 + round; i++) {
			m = msg_n(next_push++);
			skynet_mq_push(q, &m);
		}
		for (int i = 0; i < 45 + round; i++) {
			if (skynet_mq_pop(q, &m) != 0 || m.session != next_pop++)
				ok = 0;
		}
	}
	while (skynet_mq_pop(q, &m) == 0) {
		if (m.session != next_pop++)
			ok = 0;
	}
	TT_CHECK(ok);
	TT_CHECK(next_pop == next_push);
	skynet_mq_mark_release(q);
	TT_CHECK(skynet_globalmq_pop() == q);
	skynet_mq_release(q, NULL, NULL);
	skynet_mq_exit();
}

static int WAKEUPS;

static void
count_wakeup(void) {
	WAKEUPS++;
}

static void
global_membership(int *failed) {
	skynet_mq_init();
	skynet_mq_set_wakeup(count_wakeup);
	WAKEUPS = 0;
	struct message_queue *q = skynet_mq_create(1);
	struct skynet_message m = msg_n(1);
	// A new queue counts as in the global queue (init running): pushes do not link it.
	skynet_mq_push(q, &m);
	TT_CHECK(skynet_globalmq_empty());
	TT_CHECK(WAKEUPS == 0);
	skynet_globalmq_push(q); // init succeeded
	TT_CHECK(WAKEUPS == 1);
	TT_CHECK(!skynet_globalmq_empty());
	skynet_mq_push(q, &m); // already in: not linked twice
	TT_CHECK(skynet_globalmq_pop() == q);
	TT_CHECK(skynet_globalmq_pop() == NULL);
	// A worker holds q: drains it; the empty pop takes it out of the global queue.
	TT_CHECK(skynet_mq_pop(q, &m) == 0);
	TT_CHECK(skynet_mq_pop(q, &m) == 0);
	TT_CHECK(skynet_mq_pop(q, &m) == 1);
	TT_CHECK(skynet_globalmq_empty());
	// The next push links it again, once, and wakes a worker.
	skynet_mq_push(q, &m);
	skynet_mq_push(q, &m);
	TT_CHECK(WAKEUPS == 2);
	TT_CHECK(skynet_globalmq_pop() == q);
	TT_CHECK(skynet_globalmq_pop() == NULL);
	int dropped = 0;
	while (skynet_mq_pop(q, &m) == 0)
		dropped++;
	TT_CHECK(dropped == 2);
	skynet_mq_mark_release(q);
	TT_CHECK(skynet_globalmq_pop() == q);
	skynet_mq_release(q, NULL, NULL);
	skynet_mq_exit();
}

static void
global_fifo(int *failed) {
	skynet_mq_init();
	struct message_queue *q[3];
	for (int i = 0; i < 3; i++) {
		q[i] = skynet_mq_create(i + 1);
		skynet_globalmq_push(q[i]);
	}
	for (int i = 0; i < 3; i++)
		TT_CHECK(skynet_globalmq_pop() == q[i]);
	TT_CHECK(skynet_globalmq_pop() == NULL);
	for (int i = 0; i < 3; i++) {
		struct skynet_message m;
		TT_CHECK(skynet_mq_pop(q[i], &m) == 1);
		skynet_mq_mark_release(q[i]);
		skynet_mq_release(skynet_globalmq_pop(), NULL, NULL);
	}
	skynet_mq_exit();
}

static void
overload_once_per_doubling(int *failed) {
	skynet_mq_init();
	struct message_queue *q = skynet_mq_create(1);
	struct skynet_message m = msg_n(0);
	for (int i = 0; i < 5000; i++)
		skynet_mq_push(q, &m);
	TT_CHECK(skynet_mq_overload(q) == 0);
	TT_CHECK(skynet_mq_pop(q, &m) == 0); // 4999 left: past 1024, 2048 and 4096
	TT_CHECK(skynet_mq_overload(q) == 4999);
	TT_CHECK(skynet_mq_overload(q) == 0); // read clears
	TT_CHECK(skynet_mq_pop(q, &m) == 0);
	TT_CHECK(skynet_mq_overload(q) == 0); // threshold is 8192 now
	while (skynet_mq_pop(q, &m) == 0)
		;
	// An empty pop resets the threshold to 1024.
	for (int i = 0; i < 1100; i++)
		skynet_mq_push(q, &m);
	TT_CHECK(skynet_mq_pop(q, &m) == 0);
	TT_CHECK(skynet_mq_overload(q) == 1099);
	while (skynet_mq_pop(q, &m) == 0)
		;
	skynet_mq_mark_release(q);
	skynet_mq_release(skynet_globalmq_pop(), NULL, NULL);
	skynet_mq_exit();
}

/*
 * Grow the backlog by one per pop (push two, pop one) for rounds rounds,
 * recording each warning skynet_mq_overload reports after a pop. Returns the
 * number recorded (at most max).
 */
static int
grow_and_watch(struct message_queue *q, int rounds, int *seen, int max) {
	struct skynet_message m = msg_n(0);
	int n = 0;
	for (int i = 0; i < rounds; i++) {
		skynet_mq_push(q, &m);
		skynet_mq_push(q, &m);
		skynet_mq_pop(q, &m);
		int overload = skynet_mq_overload(q);
		if (overload && n < max)
			seen[n] = overload;
		if (overload)
			n++;
	}
	return n;
}

static void
overload_warns_at_each_doubling(int *failed) {
	skynet_mq_init();
	struct message_queue *q = skynet_mq_create(1);
	struct skynet_message m;
	int seen[8];
	// 10,000 rounds leave 10,000 queued: past 1024, 2048, 4096 and 8192, one warning each.
	TT_CHECK(grow_and_watch(q, 10000, seen, 8) == 4);
	TT_CHECK(seen[0] == 1025 && seen[1] == 2049 && seen[2] == 4097 && seen[3] == 8193);
	// Shrinking without draining keeps the threshold (16384): growing back is no new crossing.
	for (int i = 0; i < 9000; i++)
		skynet_mq_pop(q, &m);
	TT_CHECK(skynet_mq_overload(q) == 0);
	TT_CHECK(grow_and_watch(q, 5000, seen, 8) == 0);
	// Drained: the next crossing of 1024 warns again, once.
	while (skynet_mq_pop(q, &m) == 0)
		TT_CHECK(skynet_mq_overload(q) == 0);
	TT_CHECK(grow_and_watch(q, 2000, seen, 8) == 1);
	TT_CHECK(seen[0] == 1025);
	while (skynet_mq_pop(q, &m) == 0)
		;
	skynet_mq_mark_release(q);
	skynet_mq_release(skynet_globalmq_pop(), NULL, NULL);
	skynet_mq_exit();
}

/*
 * A pop that leaves other queues in the global queue calls the wake-up hook
 * again: a worker that took one queue hands the rest on to a sleeper (pushes
 * that saw a spinning worker woke nobody).
 */
static void
pop_passes_wakeup_on(int *failed) {
	skynet_mq_init();
	skynet_mq_set_wakeup(count_wakeup);
	WAKEUPS = 0;
	struct message_queue *q[3];
	for (int i = 0; i < 3; i++) {
		q[i] = skynet_mq_create(i + 1);
		skynet_globalmq_push(q[i]);
	}
	TT_CHECK(WAKEUPS == 3);
	TT_CHECK(skynet_globalmq_pop() == q[0]);
	TT_CHECK(WAKEUPS == 4); // two left
	TT_CHECK(skynet_globalmq_pop() == q[1]);
	TT_CHECK(WAKEUPS == 5); // one left
	TT_CHECK(skynet_globalmq_pop() == q[2]);
	TT_CHECK(WAKEUPS == 5); // none left: nothing to hand on
	TT_CHECK(skynet_globalmq_pop() == NULL);
	TT_CHECK(WAKEUPS == 5);
	skynet_mq_set_wakeup(NULL);
	for (int i = 0; i < 3; i++) {
		struct skynet_message m;
		TT_CHECK(skynet_mq_pop(q[i], &m) == 1);
		skynet_mq_mark_release(q[i]);
		skynet_mq_release(skynet_globalmq_pop(), NULL, NULL);
	}
	skynet_mq_exit();
}

/*
 * A held queue its worker is done with: skynet_mq_leave lets it go only when
 * empty (the next push links it again and wakes); a queue with messages
 * stays held. Deferred pushes skip the hook, mark the sign and report the
 * owed wake; pops are not deferred.
 */
static void
leave_and_deferred_wakeups(int *failed) {
	skynet_mq_init();
	skynet_mq_set_wakeup(count_wakeup);
	WAKEUPS = 0;
	struct message_queue *q = skynet_mq_create(1);
	struct message_queue *other = skynet_mq_create(2);
	struct skynet_message m = msg_n(1);
	skynet_globalmq_push(q);
	skynet_globalmq_push(other);
	TT_CHECK(WAKEUPS == 2);
	TT_CHECK(skynet_globalmq_pop() == q);
	TT_CHECK(skynet_globalmq_pop() == other);
	skynet_mq_push(q, &m); // held: not linked
	TT_CHECK(!skynet_mq_leave(q));
	TT_CHECK(skynet_globalmq_empty());
	TT_CHECK(skynet_mq_pop(q, &m) == 0);
	TT_CHECK(skynet_mq_leave(q)); // drained: let go, not handed back
	TT_CHECK(skynet_globalmq_empty());
	TT_CHECK(WAKEUPS == 3); // the pop of q left other behind
	ATOM_INT sign = 0;
	skynet_mq_defer_wakeup(&sign);
	skynet_mq_push(q, &m); // links q again, without the hook
	TT_CHECK(WAKEUPS == 3);
	TT_CHECK(ATOM_LOAD(&sign) == 1);
	TT_CHECK(skynet_mq_pop(other, &m) == 1); // other is empty: leaves
	skynet_mq_push(other, &m);
	TT_CHECK(WAKEUPS == 3);
	TT_CHECK(skynet_globalmq_pop() == q); // others remain: pops still hand them on
	TT_CHECK(WAKEUPS == 4);
	TT_CHECK(skynet_mq_owed_wakeup());
	TT_CHECK(ATOM_LOAD(&sign) == 0);
	TT_CHECK(!skynet_mq_owed_wakeup()); // ended
	skynet_mq_defer_wakeup(&sign);
	TT_CHECK(!skynet_mq_owed_wakeup()); // nothing pushed: nothing owed
	TT_CHECK(skynet_mq_pop(q, &m) == 0);
	TT_CHECK(skynet_mq_leave(q));
	skynet_mq_push(q, &m); // not deferred any more
	TT_CHECK(WAKEUPS == 5);
	skynet_mq_set_wakeup(NULL);
	struct message_queue *both[2] = {other, q};
	for (int i = 0; i < 2; i++) {
		TT_CHECK(skynet_globalmq_pop() == both[i]);
		while (skynet_mq_pop(both[i], &m) == 0)
			;
	}
	TT_CHECK(skynet_globalmq_empty());
	for (int i = 0; i < 2; i++) {
		skynet_mq_mark_release(both[i]);
		skynet_mq_release(skynet_globalmq_pop(), NULL, NULL);
	}
	skynet_mq_exit();
}

static int DROPPED;

static void
count_drop(struct skynet_message *msg, void *ud) {
	DROPPED += *(int *)ud;
	skynet_free(msg->data);
}

static void
release_drains(int *failed) {
	skynet_mq_init();
	struct message_queue *q = skynet_mq_create(1);
	for (int i = 0; i < 3; i++) {
		struct skynet_message m = {.data = skynet_malloc(8), .sz = 8};
		skynet_mq_push(q, &m);
	}
	skynet_globalmq_push(q);
	TT_CHECK(skynet_globalmq_pop() == q);
	// Not released yet: release puts it back into the global queue.
	int one = 1;
	DROPPED = 0;
	skynet_mq_release(q, count_drop, &one);
	TT_CHECK(DROPPED == 0);
	TT_CHECK(skynet_globalmq_pop() == q);
	skynet_mq_mark_release(q); // in_global already set: not linked again
	TT_CHECK(skynet_globalmq_empty());
	skynet_mq_release(q, count_drop, &one);
	TT_CHECK(DROPPED == 3);
	skynet_mq_exit();
}

static struct skynet_message
msg_sized(int type, void *data, size_t sz) {
	struct skynet_message m = {
	    .source = 1, .session = 0, .data = data, .sz = skynet_message_sz(type, sz)};
	return m;
}

/* Length and bytes agree with a model through growth, wrap-around and socket payloads. */
static void
bytes_follow_the_payloads(int *failed) {
	skynet_mq_init();
	skynet_mq_set_weigh(PTYPE_SOCKET, skynet_socket_message_bytes);
	struct message_queue *q = skynet_mq_create(3);
	TT_CHECK(skynet_mq_bytes(q) == 0);
	struct skynet_socket_message data = {.type = SKYNET_SOCKET_TYPE_DATA, .id = 1, .ud = 1000};
	struct skynet_socket_message udp = {.type = SKYNET_SOCKET_TYPE_UDP, .id = 2, .ud = 70};
	struct skynet_socket_message warn = {.type = SKYNET_SOCKET_TYPE_WARNING, .id = 1, .ud = 4096};
	size_t hdr = sizeof(struct skynet_socket_message);
	size_t model = 0;
	int length = 0;
	bool ok = true;
	// Four kinds in turn: plain text of i bytes, DATA, UDP (with a 7-byte address), WARNING.
	for (int round = 0; round < 40; round++) {
		for (int i = 0; i < 30 + round; i++) {
			struct skynet_message m;
			size_t w;
			switch (i % 4) {
			case 0:
				m = msg_sized(PTYPE_TEXT, NULL, (size_t)i);
				w = (size_t)i;
				break;
			case 1:
				m = msg_sized(PTYPE_SOCKET, &data, hdr);
				w = hdr + 1000;
				break;
			case 2:
				m = msg_sized(PTYPE_SOCKET, &udp, hdr + 7);
				w = hdr + 7 + 70;
				break;
			default:
				m = msg_sized(PTYPE_SOCKET, &warn, hdr); // ud is not a byte count
				w = hdr;
				break;
			}
			m.session = (int)w;
			skynet_mq_push(q, &m);
			model += w;
			length++;
		}
		for (int i = 0; i < 25 + round; i++) {
			struct skynet_message m;
			if (skynet_mq_pop(q, &m) != 0)
				ok = false;
			model -= (size_t)m.session;
			length--;
		}
		int n;
		size_t b;
		skynet_mq_backlog(q, &n, &b);
		if (n != length || b != model || skynet_mq_bytes(q) != model)
			ok = false;
	}
	TT_CHECK(ok);
	TT_CHECK(model > 0);
	struct skynet_message m;
	while (skynet_mq_pop(q, &m) == 0)
		;
	TT_CHECK(skynet_mq_bytes(q) == 0);
	skynet_mq_mark_release(q);
	TT_CHECK(skynet_globalmq_pop() == q);
	skynet_mq_release(q, NULL, NULL);
	skynet_mq_exit();
}

/*
 * A socket header changed while queued (a sender breaking the rules)
 * cannot make the count wrap below 0, and an empty queue counts 0 again.
 */
static void
bytes_never_drift(int *failed) {
	skynet_mq_init();
	skynet_mq_set_weigh(PTYPE_SOCKET, skynet_socket_message_bytes);
	struct message_queue *q = skynet_mq_create(4);
	size_t hdr = sizeof(struct skynet_socket_message);
	struct skynet_socket_message sm = {.type = SKYNET_SOCKET_TYPE_DATA, .ud = 10};
	struct skynet_message m = msg_sized(PTYPE_SOCKET, &sm, hdr);
	skynet_mq_push(q, &m);
	TT_CHECK(skynet_mq_bytes(q) == hdr + 10);
	sm.ud = 1 << 20; // now claims more than was counted
	TT_CHECK(skynet_mq_pop(q, &m) == 0);
	TT_CHECK(skynet_mq_bytes(q) == 0);
	sm.ud = 10;
	m = msg_sized(PTYPE_SOCKET, &sm, hdr);
	skynet_mq_push(q, &m);
	sm.ud = 0; // now claims less
	TT_CHECK(skynet_mq_pop(q, &m) == 0);
	TT_CHECK(skynet_mq_bytes(q) == 10);
	TT_CHECK(skynet_mq_pop(q, &m) == 1); // empty: back to 0
	TT_CHECK(skynet_mq_bytes(q) == 0);
	skynet_mq_mark_release(q);
	TT_CHECK(skynet_globalmq_pop() == q);
	skynet_mq_release(q, NULL, NULL);
	skynet_mq_exit();
}

/* ---- the priority lane ---- */

static struct skynet_message
msg_of(int type, uint32_t source, int session) {
	struct skynet_message m = {
	    .source = source, .session = session, .data = NULL, .sz = skynet_message_sz(type, 0)};
	return m;
}

static void
push_of(struct message_queue *q, int type, uint32_t source, int session) {
	struct skynet_message m = msg_of(type, source, session);
	skynet_mq_push(q, &m);
}

/* Pop everything; the sessions in pop order go to got (at most max); returns the count. */
static int
drain(struct message_queue *q, int *got, int max) {
	struct skynet_message m;
	int n = 0;
	while (skynet_mq_pop(q, &m) == 0) {
		if (n < max)
			got[n] = m.session;
		n++;
	}
	return n;
}

static void
finish(struct message_queue *q) {
	skynet_mq_mark_release(q);
	skynet_mq_release(skynet_globalmq_pop(), NULL, NULL);
	skynet_mq_exit();
}

static void
lane_takes_expiries_debug_and_system(int *failed) {
	struct skynet_message m = msg_of(PTYPE_RESPONSE, 0, 1);
	TT_CHECK(skynet_mq_is_priority(&m)); // a timer's expiry
	m = msg_of(PTYPE_RESPONSE, 5, 1);
	TT_CHECK(!skynet_mq_is_priority(&m)); // a call's response
	m = msg_of(PTYPE_DEBUG, 5, 0);
	TT_CHECK(skynet_mq_is_priority(&m));
	m = msg_of(PTYPE_SYSTEM, 0, 0);
	TT_CHECK(skynet_mq_is_priority(&m));
	int ordinary[] = {PTYPE_TEXT, PTYPE_LUA, PTYPE_ERROR, PTYPE_SOCKET, PTYPE_CLIENT};
	for (size_t i = 0; i < sizeof(ordinary) / sizeof(ordinary[0]); i++) {
		m = msg_of(ordinary[i], 0, 0);
		TT_CHECK(!skynet_mq_is_priority(&m));
	}
}

/* Off (the default): one FIFO whatever the types, and no lane is ever made. */
static void
lane_off_is_one_fifo(int *failed) {
	skynet_mq_init();
	struct message_queue *q = skynet_mq_create(1);
	TT_CHECK(!skynet_mq_priority(q));
	int types[] = {PTYPE_LUA, PTYPE_RESPONSE, PTYPE_DEBUG, PTYPE_SYSTEM};
	for (int i = 0; i < 100; i++)
		push_of(q, types[i % 4], 0, i);
	TT_CHECK(skynet_mq_lane_capacity(q) == 0);
	TT_CHECK(skynet_mq_lane_length(q) == 0);
	int got[100];
	TT_CHECK(drain(q, got, 100) == 100);
	bool in_order = true;
	for (int i = 0; i < 100; i++)
		in_order = in_order && got[i] == i;
	TT_CHECK(in_order);
	finish(q);
}

/*
 * On: every priority message before every ordinary one, each lane in arrival
 * order; the lane is made by its first message, not by turning it on.
 */
static void
lane_on_overtakes_in_order(int *failed) {
	skynet_mq_init();
	struct message_queue *q = skynet_mq_create(1);
	TT_CHECK(!skynet_mq_set_priority(q, true));
	TT_CHECK(skynet_mq_priority(q));
	for (int i = 0; i < 10; i++)
		push_of(q, PTYPE_LUA, 7, 100 + i);
	TT_CHECK(skynet_mq_lane_capacity(q) == 0); // on, but no priority message yet
	push_of(q, PTYPE_RESPONSE, 0, 1);          // expiry
	TT_CHECK(skynet_mq_lane_capacity(q) > 0);
	push_of(q, PTYPE_RESPONSE, 7, 110); // a call's response: ordinary
	push_of(q, PTYPE_DEBUG, 7, 2);
	push_of(q, PTYPE_LUA, 7, 111);
	push_of(q, PTYPE_SYSTEM, 7, 3);
	TT_CHECK(skynet_mq_length(q) == 15);
	TT_CHECK(skynet_mq_lane_length(q) == 3);
	int got[15];
	TT_CHECK(drain(q, got, 15) == 15);
	bool in_order = got[0] == 1 && got[1] == 2 && got[2] == 3;
	for (int i = 0; i < 12; i++)
		in_order = in_order && got[3 + i] == 100 + i;
	TT_CHECK(in_order);
	finish(q);
}

/* The lane grows past its first size keeping order, and gives the grown ring back once drained. */
static void
lane_grows_and_shrinks(int *failed) {
	skynet_mq_init();
	struct message_queue *q = skynet_mq_create(1);
	skynet_mq_set_priority(q, true);
	enum { N = 5000 };
	int next_push = 0, next_pop = 0;
	bool in_order = true;
	struct skynet_message m;
	// Interleave so the lane's head and tail wrap while it grows; ordinary messages wait.
	for (int round = 0; round < 50; round++) {
		for (int i = 0; i < 60 + round; i++, next_push++)
			push_of(q, (next_push & 1) ? PTYPE_SYSTEM : PTYPE_RESPONSE, 0, next_push);
		push_of(q, PTYPE_LUA, 9, -1 - round);
		for (int i = 0; i < 50 + round; i++) {
			if (skynet_mq_pop(q, &m) != 0 || m.session != next_pop++)
				in_order = false;
		}
	}
	while (next_push < N)
		push_of(q, PTYPE_DEBUG, 0, next_push++);
	int cap = skynet_mq_lane_capacity(q);
	TT_CHECK(cap >= N - next_pop);
	while (next_pop < N) {
		if (skynet_mq_pop(q, &m) != 0 || m.session != next_pop++)
			in_order = false;
	}
	TT_CHECK(in_order);
	TT_CHECK(skynet_mq_lane_capacity(q) == 0); // drained after it grew: freed
	TT_CHECK(skynet_mq_length(q) == 50);       // the ordinary messages, still in order
	for (int round = 0; round < 50; round++)
		TT_CHECK(skynet_mq_pop(q, &m) == 0 && m.session == -1 - round);
	push_of(q, PTYPE_DEBUG, 0, 1);
	int small = skynet_mq_lane_capacity(q);
	TT_CHECK(small > 0 && small < cap);
	TT_CHECK(skynet_mq_pop(q, &m) == 0 && m.session == 1);
	TT_CHECK(skynet_mq_lane_capacity(q) == small); // first size: kept for the next expiry
	TT_CHECK(skynet_mq_pop(q, &m) == 1);
	finish(q);
}

/* Turning the lane off keeps what it holds ahead; later messages go to the ordinary ring. */
static void
lane_off_again_keeps_its_messages_ahead(int *failed) {
	skynet_mq_init();
	struct message_queue *q = skynet_mq_create(1);
	skynet_mq_set_priority(q, true);
	push_of(q, PTYPE_LUA, 7, 10);
	push_of(q, PTYPE_SYSTEM, 7, 1);
	TT_CHECK(skynet_mq_set_priority(q, false));
	push_of(q, PTYPE_SYSTEM, 7, 11);
	push_of(q, PTYPE_RESPONSE, 0, 12);
	int got[4];
	TT_CHECK(drain(q, got, 4) == 4);
	TT_CHECK(got[0] == 1 && got[1] == 10 && got[2] == 11 && got[3] == 12);
	finish(q);
}

/*
 * Length, bytes and the overload warning count both lanes; a queue with only
 * lane messages joins the global queue and leaves it on the empty pop.
 */
static void
lane_counts_and_membership(int *failed) {
	skynet_mq_init();
	struct message_queue *q = skynet_mq_create(1);
	skynet_mq_set_priority(q, true);
	skynet_globalmq_push(q); // init done
	TT_CHECK(skynet_globalmq_pop() == q);
	struct skynet_message m;
	TT_CHECK(skynet_mq_pop(q, &m) == 1); // empty: out of the global queue
	TT_CHECK(skynet_globalmq_empty());
	push_of(q, PTYPE_DEBUG, 3, 0); // lane only: joins
	TT_CHECK(skynet_globalmq_pop() == q);
	TT_CHECK(skynet_mq_pop(q, &m) == 0);
	TT_CHECK(skynet_mq_pop(q, &m) == 1);
	TT_CHECK(skynet_globalmq_empty());
	for (int i = 0; i < 600; i++) {
		struct skynet_message a = msg_sized(PTYPE_SYSTEM, NULL, 3);
		struct skynet_message b = msg_sized(PTYPE_LUA, NULL, 5);
		skynet_mq_push(q, &a);
		skynet_mq_push(q, &b);
	}
	int n;
	size_t bytes;
	skynet_mq_backlog(q, &n, &bytes);
	TT_CHECK(n == 1200 && bytes == 600 * 8);
	TT_CHECK(skynet_mq_lane_length(q) == 600);
	TT_CHECK(skynet_mq_pop(q, &m) == 0);
	TT_CHECK(skynet_mq_overload(q) == 1199); // past 1024 with both lanes together
	TT_CHECK(skynet_mq_bytes(q) == 600 * 8 - 3);
	TT_CHECK(skynet_globalmq_pop() == q);
	TT_CHECK(drain(q, NULL, 0) == 1199);
	TT_CHECK(skynet_mq_bytes(q) == 0);
	finish(q);
}

/*
 * Stress: PRODUCERS threads push to one queue with its lane on, each
 * alternating a priority message (an expiry or a system message) and an
 * ordinary one with the same sequence number; WORKERS threads take the queue
 * from the global queue as the scheduler does, pop a batch and put it back.
 * Checked: every message arrives once; each producer's messages keep their
 * order in each lane; an ordinary message never comes out while the
 * priority message pushed before it waits (its producer's priority count is
 * past it); no two workers hold the queue at once. The per-producer records
 * are plain ints: only the holder touches them, so TSan reports a race if
 * the queue invariant fails.
 */
enum { PRODUCERS = 4, WORKERS = 2, BATCH = 16, SEQ_SPAN = 1 << 24 };

struct lane_stress {
	struct message_queue *q;
	int per_producer;
	ATOM_INT popped;
	ATOM_INT busy;
	ATOM_INT double_entry;
	int next_pri[PRODUCERS]; // only the worker holding q
	int next_ord[PRODUCERS];
	int errors;
};

struct producer_arg {
	struct lane_stress *st;
	int id;
};

static void *
stress_produce(void *ud) {
	struct producer_arg *a = ud;
	for (int i = 0; i < a->st->per_producer; i++) {
		int session = a->id * SEQ_SPAN + i;
		if (i & 1)
			push_of(a->st->q, PTYPE_SYSTEM, (uint32_t)a->id + 1, session);
		else
			push_of(a->st->q, PTYPE_RESPONSE, 0, session);
		push_of(a->st->q, PTYPE_LUA, (uint32_t)a->id + 1, session);
	}
	return NULL;
}

/* Check one popped message against the holder's records. */
static void
stress_check(struct lane_stress *st, const struct skynet_message *m) {
	int id = m->session / SEQ_SPAN, seq = m->session % SEQ_SPAN;
	if (skynet_mq_is_priority(m)) {
		if (seq != st->next_pri[id]++)
			st->errors++;
	} else if (seq != st->next_ord[id]++ || st->next_pri[id] <= seq) {
		st->errors++; // out of order, or ahead of the priority message pushed before it
	}
}

/* Run a batch of q, as a worker does; false when q left the global queue (empty). */
static bool
stress_batch(struct lane_stress *st, struct message_queue *q) {
	struct skynet_message m;
	for (int i = 0; i < BATCH; i++) {
		ATOM_STORE(&st->busy, 0);
		if (skynet_mq_pop(q, &m) != 0)
			return false;
		if (ATOM_XCHG(&st->busy, 1) != 0)
			ATOM_FINC(&st->double_entry);
		stress_check(st, &m);
		ATOM_FINC(&st->popped);
	}
	ATOM_STORE(&st->busy, 0);
	return true;
}

static void *
stress_work(void *ud) {
	struct lane_stress *st = ud;
	int total = 2 * PRODUCERS * st->per_producer;
	while (ATOM_LOAD(&st->popped) < total) {
		struct message_queue *q = skynet_globalmq_pop();
		if (q == NULL) {
			sched_yield();
			continue;
		}
		if (stress_batch(st, q))
			skynet_globalmq_push(q);
	}
	return NULL;
}

static void
lane_concurrent_producers(int *failed) {
	skynet_mq_init();
	static struct lane_stress st;
	st.q = skynet_mq_create(1);
	st.per_producer = tt_stress() ? 100000 : 20000;
	ATOM_INIT(&st.popped, 0);
	ATOM_INIT(&st.busy, 0);
	ATOM_INIT(&st.double_entry, 0);
	for (int i = 0; i < PRODUCERS; i++)
		st.next_pri[i] = st.next_ord[i] = 0;
	st.errors = 0;
	skynet_mq_set_priority(st.q, true);
	skynet_globalmq_push(st.q);
	pthread_t workers[WORKERS], producers[PRODUCERS];
	struct producer_arg args[PRODUCERS];
	for (int i = 0; i < WORKERS; i++)
		TT_CHECK(pthread_create(&workers[i], NULL, stress_work, &st) == 0);
	for (int i = 0; i < PRODUCERS; i++) {
		args[i] = (struct producer_arg){&st, i};
		TT_CHECK(pthread_create(&producers[i], NULL, stress_produce, &args[i]) == 0);
	}
	for (int i = 0; i < PRODUCERS; i++)
		pthread_join(producers[i], NULL);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(workers[i], NULL);
	TT_CHECK(ATOM_LOAD(&st.popped) == 2 * PRODUCERS * st.per_producer);
	TT_CHECK(ATOM_LOAD(&st.double_entry) == 0);
	TT_CHECK(st.errors == 0);
	bool all = true;
	for (int i = 0; i < PRODUCERS; i++)
		all = all && st.next_pri[i] == st.per_producer && st.next_ord[i] == st.per_producer;
	TT_CHECK(all);
	struct skynet_message m;
	if (skynet_globalmq_pop() == st.q) // still in after its last batch: the empty pop takes it out
		TT_CHECK(skynet_mq_pop(st.q, &m) == 1);
	TT_CHECK(skynet_globalmq_empty());
	finish(st.q);
}

int
main(void) {
	TT_RUN(fifo_order_and_growth);
	TT_RUN(wraparound_keeps_order);
	TT_RUN(global_membership);
	TT_RUN(global_fifo);
	TT_RUN(overload_once_per_doubling);
	TT_RUN(overload_warns_at_each_doubling);
	TT_RUN(pop_passes_wakeup_on);
	TT_RUN(release_drains);
	TT_RUN(bytes_follow_the_payloads);
	TT_RUN(bytes_never_drift);
	TT_RUN(lane_takes_expiries_debug_and_system);
	TT_RUN(lane_off_is_one_fifo);
	TT_RUN(lane_on_overtakes_in_order);
	TT_RUN(lane_grows_and_shrinks);
	TT_RUN(lane_off_again_keeps_its_messages_ahead);
	TT_RUN(lane_counts_and_membership);
	TT_RUN(lane_concurrent_producers);
	TT_RUN(leave_and_deferred_wakeups);
	return tt_summary();
}
