/* Message queues: order, growth, global-queue membership, overload, release, byte counts. */
#include "tt.h"

#include "skynet.h"
#include "skynet_mq.h"
#include "skynet_socket_internal.h"

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
	return tt_summary();
}
