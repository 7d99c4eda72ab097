/*
 * Message queues.
 *
 * A service queue is a growable ring of messages (capacity starts at 8 and
 * doubles when full; no upper bound). The global queue is a singly linked
 * FIFO of service queues threaded through message_queue.next.
 *
 * Priority lane. A queue whose service opted in (skynet_mq_set_priority)
 * sends its priority messages into a second ring, the lane, and every pop
 * takes the lane's head first while the lane holds anything; otherwise the
 * ordinary ring's head. Priority messages are the ones the node itself uses
 * to steer a service rather than to feed it: timer expiries, PTYPE_DEBUG and
 * PTYPE_SYSTEM (skynet_mq_is_priority). A timer expiry is told apart from a
 * call's response by its source: the timer posts its PTYPE_RESPONSE with
 * source 0, and no service can send with source 0 (skynet_send replaces it
 * with the sender's handle), so a response from 0 is always a timer's (a
 * timeout of 0 is not one: skynet_timeout_new posts it from the service
 * itself, so skynet.yield still lets the backlog run first). Order: each ring is a FIFO, so messages of
 * one lane keep their arrival order; between lanes, a priority message
 * overtakes every ordinary one queued before it. Nothing else changes: with
 * the lane off (the default) the lane is never used and the queue behaves as
 * skynet's single FIFO. Turning it off leaves what the lane holds ahead of
 * the ordinary ring (popped first, in order); new messages then go to the
 * ordinary ring.
 *
 * The lane is allocated on its first message, not when the service opts in,
 * so an idle service costs one pointer more than before. It starts at
 * LANE_SIZE slots, doubles like the ring, and is freed when a pop drains it
 * after it grew (a burst of expiries gives its memory back; a lane of the
 * first size is kept for the next expiry).
 *
 * Invariant (gives per-service mutual exclusion): in_global is 1 exactly
 * while the queue sits in the global queue or a worker holds it. Push sets
 * it and links the queue into the global queue if it was 0; a pop that
 * finds the queue empty (both rings) clears it. So a queue is in the global
 * queue, or held, whenever either ring holds a message. A worker that popped
 * a queue from the global queue is the only one that can pop its messages
 * until it pushes the queue back or a pop finds it empty; so no service runs
 * on two workers, with or without the lane. Messages from one sender to one
 * receiver in one lane keep their order because each push appends under the
 * queue's lock and one worker pops in order.
 *
 * Bytes: each queue also counts the payload bytes of its pending messages
 * (the low 56 bits of sz, plus what the weigh hook installed for the
 * message's type adds: a socket DATA or UDP message's payload is only a
 * header, the buffer it carries is counted by skynet_socket.c's hook; the
 * queue never reads inside a payload itself). The count is kept under the
 * queue's lock by push and pop, reads the same message at both ends,
 * saturates at 0 and is reset when a pop finds the queue empty, so a message
 * whose header was changed while it was queued cannot make it drift. Socket
 * flow control reads it. Length and bytes cover both rings: a message waits
 * whichever ring holds it, so flow control (skynet_flow.c) sees the same
 * backlog with the lane on or off (socket messages are never priority).
 *
 * Overload: after a pop, if the remaining length (both rings) exceeds the
 * threshold (1024 at first), the length is recorded and the threshold
 * doubles until it exceeds the length; skynet_mq_overload reads and clears
 * the record. An empty pop resets the threshold, so there is one warning
 * ("May overload") per crossing of 1024, 2048, 4096, ... whichever lane the
 * messages sit in.
 *
 * Wake-up hook (the scheduler's): called after every push into the global
 * queue, and after every pop that leaves other queues in it, so that a
 * worker taking one of several queues hands the rest on to a sleeping one.
 * A thread may defer the pushes' calls (skynet_mq_defer_wakeup): a worker
 * does while it runs a message, since it looks at the global queue itself
 * once the message ends (skynet_start.c gives the rule). The deferral is a
 * thread-local flag, so it touches no shared line.
 *
 * Locking: each queue's spinlock covers its rings (the lane too), in_global,
 * priority, release and overload fields; the global queue has its own
 * spinlock covering head, tail and the next links. The two are never held
 * together: push decides under the queue's lock whether the queue must join
 * the global queue, unlocks, then links it under the global lock (safe: see
 * skynet_mq_push). Both are held for O(1) work only (a ring expansion is a
 * memcpy, bounded by the queue; the lane's first allocation is a malloc).
 */
#include "skynet_mq.h"

#include "skynet.h"
#include "skynet_malloc.h"
#include "atomic.h"
#include "spinlock.h"

#include <assert.h>
#include <stdbool.h>
#include <string.h>

#define DEFAULT_QUEUE_SIZE 8
#define LANE_SIZE          4
#define MQ_OVERLOAD        1024

/* The priority lane: a ring like the queue's own, allocated on its first message. */
struct mq_lane {
	int cap;
	int head;
	int tail;
	struct skynet_message ring[]; // cap slots
};

struct message_queue {
	struct spinlock lock; // covers every field but handle
	uint32_t handle;      // immutable
	int cap;
	int head;
	int tail;
	int release;
	int in_global;
	int overload;
	int overload_threshold;
	bool priority;                // the service opted in to the lane
	bool emptied;                 // the holder's last pop took the last message (holder only)
	size_t bytes;                 // payload bytes of the pending messages (both rings)
	struct skynet_message *queue; // owned ring
	struct mq_lane *lane;         // owned; NULL until the first priority message
	struct message_queue *next;   // covered by the global queue's lock
};

struct global_queue {
	struct spinlock lock;       // covers head, tail and every next link
	struct message_queue *head; // also read without the lock by skynet_globalmq_peek
	struct message_queue *tail;
};

static struct global_queue *GLOBAL_QUEUE = NULL;
static skynet_mq_wakeup_cb WAKEUP = NULL;
static skynet_mq_weigh_cb WEIGH[256]; // by message type; set before any thread
/* This thread's deferral: DEFER_OFF, or DEFER_ON until a push skips the hook, then DEFER_OWED. */
enum { DEFER_OFF, DEFER_ON, DEFER_OWED };
static __thread int DEFER = DEFER_OFF;
static __thread ATOM_INT *DEFER_SIGN; // set while DEFER_OWED, for other threads to see

void
skynet_globalmq_push(struct message_queue *q) {
	struct global_queue *g = GLOBAL_QUEUE;
	SPIN_LOCK(g);
	assert(q->next == NULL);
	if (g->tail) {
		g->tail->next = q;
		g->tail = q;
	} else {
		ATOM_STORE_RELAXED(&g->head, q); // see skynet_globalmq_peek
		g->tail = q;
	}
	SPIN_UNLOCK(g);
	if (DEFER == DEFER_ON) {
		DEFER = DEFER_OWED;
		ATOM_STORE_RELAXED(DEFER_SIGN, 1);
	} else if (DEFER == DEFER_OFF) {
		skynet_mq_wakeup();
	}
}

void
skynet_mq_defer_wakeup(ATOM_INT *sign) {
	DEFER = DEFER_ON;
	DEFER_SIGN = sign;
}

bool
skynet_mq_owed_wakeup(void) {
	bool owed = DEFER == DEFER_OWED;
	if (owed)
		ATOM_STORE_RELAXED(DEFER_SIGN, 0);
	DEFER = DEFER_OFF;
	return owed;
}

void
skynet_mq_wakeup(void) {
	if (WAKEUP)
		WAKEUP();
}

struct message_queue *
skynet_globalmq_pop(void) {
	struct global_queue *g = GLOBAL_QUEUE;
	SPIN_LOCK(g);
	struct message_queue *mq = g->head;
	bool more = false;
	if (mq) {
		more = mq->next != NULL;
		ATOM_STORE_RELAXED(&g->head, mq->next);
		if (!more) {
			assert(mq == g->tail);
			g->tail = NULL;
		}
		mq->next = NULL;
	}
	SPIN_UNLOCK(g);
	// Others wait behind this one: hand them on to another worker.
	if (more)
		skynet_mq_wakeup();
	return mq;
}

int
skynet_globalmq_empty(void) {
	struct global_queue *g = GLOBAL_QUEUE;
	SPIN_LOCK(g);
	int empty = g->head == NULL;
	SPIN_UNLOCK(g);
	return empty;
}

struct message_queue *
skynet_mq_create(uint32_t handle) {
	struct message_queue *q = skynet_malloc(sizeof(*q));
	q->handle = handle;
	q->cap = DEFAULT_QUEUE_SIZE;
	q->head = 0;
	q->tail = 0;
	SPIN_INIT(q);
	// Marked as in the global queue until the service's init succeeded.
	q->in_global = 1;
	q->release = 0;
	q->overload = 0;
	q->overload_threshold = MQ_OVERLOAD;
	q->bytes = 0;
	q->priority = false;
	q->emptied = false;
	q->queue = skynet_malloc(sizeof(struct skynet_message) * q->cap);
	q->lane = NULL;
	q->next = NULL;
	return q;
}

static void
release_queue(struct message_queue *q) {
	SPIN_DESTROY(q);
	skynet_free(q->lane);
	skynet_free(q->queue);
	skynet_free(q);
}

uint32_t
skynet_mq_handle(struct message_queue *q) {
	return q->handle;
}

static inline int
ring_length(int head, int tail, int cap) {
	return head <= tail ? tail - head : tail + cap - head;
}

/* Messages in the lane. Under the queue's lock. */
static inline int
lane_length(const struct message_queue *q) {
	const struct mq_lane *l = q->lane;
	return l == NULL ? 0 : ring_length(l->head, l->tail, l->cap);
}

/* Messages in both rings. Under the queue's lock. */
static inline int
queue_length(const struct message_queue *q) {
	return ring_length(q->head, q->tail, q->cap) + lane_length(q);
}

int
skynet_mq_length(struct message_queue *q) {
	SPIN_LOCK(q);
	int length = queue_length(q);
	SPIN_UNLOCK(q);
	return length;
}

int
skynet_mq_lane_length(struct message_queue *q) {
	SPIN_LOCK(q);
	int length = lane_length(q);
	SPIN_UNLOCK(q);
	return length;
}

int
skynet_mq_lane_capacity(struct message_queue *q) {
	SPIN_LOCK(q);
	int cap = q->lane == NULL ? 0 : q->lane->cap;
	SPIN_UNLOCK(q);
	return cap;
}

bool
skynet_mq_set_priority(struct message_queue *q, bool on) {
	SPIN_LOCK(q);
	bool was = q->priority;
	q->priority = on;
	SPIN_UNLOCK(q);
	return was;
}

bool
skynet_mq_priority(struct message_queue *q) {
	SPIN_LOCK(q);
	bool on = q->priority;
	SPIN_UNLOCK(q);
	return on;
}

static inline bool
is_priority(const struct skynet_message *m) {
	switch (skynet_message_type(m->sz)) {
	case PTYPE_DEBUG:
	case PTYPE_SYSTEM:
		return true;
	case PTYPE_RESPONSE:
		return m->source == 0; // the timer's: see the top comment
	default:
		return false;
	}
}

bool
skynet_mq_is_priority(const struct skynet_message *m) {
	return is_priority(m);
}

size_t
skynet_mq_bytes(struct message_queue *q) {
	SPIN_LOCK(q);
	size_t bytes = q->bytes;
	SPIN_UNLOCK(q);
	return bytes;
}

void
skynet_mq_backlog(struct message_queue *q, int *length, size_t *bytes) {
	SPIN_LOCK(q);
	int n = queue_length(q);
	*bytes = q->bytes;
	SPIN_UNLOCK(q);
	*length = n;
}

/* The bytes a message accounts for (see the top comment). Under the queue's lock: O(1). */
static size_t
message_bytes(const struct skynet_message *m) {
	size_t sz = m->sz & MESSAGE_TYPE_MASK;
	skynet_mq_weigh_cb weigh = WEIGH[skynet_message_type(m->sz) & 0xff];
	if (weigh == NULL || m->data == NULL)
		return sz;
	return sz + weigh(m->data, sz);
}

int
skynet_mq_overload(struct message_queue *q) {
	SPIN_LOCK(q);
	int overload = q->overload;
	q->overload = 0;
	SPIN_UNLOCK(q);
	return overload;
}

/* Take the lane's head into *m; false when the lane is empty. Under the queue's lock. */
static bool
lane_pop(struct message_queue *q, struct skynet_message *m) {
	struct mq_lane *l = q->lane;
	if (l == NULL || l->head == l->tail)
		return false;
	*m = l->ring[l->head];
	if (++l->head >= l->cap)
		l->head = 0;
	if (l->head == l->tail && l->cap > LANE_SIZE) {
		// Drained after a burst: give the grown ring back.
		skynet_free(l);
		q->lane = NULL;
	}
	return true;
}

/* Take the ordinary ring's head into *m; false when it is empty. Under the queue's lock. */
static bool
ring_pop(struct message_queue *q, struct skynet_message *m) {
	if (q->head == q->tail)
		return false;
	*m = q->queue[q->head];
	if (++q->head >= q->cap)
		q->head = 0;
	return true;
}

/* The held queue q is empty: it stops being held (a push links it again). Under q's lock. */
static void
leave_global(struct message_queue *q) {
	q->overload_threshold = MQ_OVERLOAD;
	q->bytes = 0;
	q->in_global = 0;
}

int
skynet_mq_pop(struct message_queue *q, struct skynet_message *message) {
	SPIN_LOCK(q);
	bool got = lane_pop(q, message) || ring_pop(q, message);
	if (got) {
		size_t bytes = message_bytes(message);
		q->bytes = q->bytes > bytes ? q->bytes - bytes : 0;
		int length = queue_length(q);
		q->emptied = length == 0;
		while (length > q->overload_threshold) {
			q->overload = length;
			q->overload_threshold *= 2;
		}
	} else {
		leave_global(q);
	}
	SPIN_UNLOCK(q);
	return got ? 0 : 1;
}

bool
skynet_mq_leave(struct message_queue *q) {
	/*
	 * Only the holder pops, so a queue its last pop left non-empty still is:
	 * no lock needed to say so (the lock is the busy sink's hottest line).
	 */
	if (!q->emptied)
		return false;
	SPIN_LOCK(q);
	bool empty = queue_length(q) == 0;
	if (empty)
		leave_global(q);
	SPIN_UNLOCK(q);
	return empty;
}

static void
expand_queue(struct message_queue *q) {
	struct skynet_message *new_queue = skynet_malloc(sizeof(*new_queue) * q->cap * 2);
	for (int i = 0; i < q->cap; i++)
		new_queue[i] = q->queue[(q->head + i) % q->cap];
	q->head = 0;
	q->tail = q->cap;
	q->cap *= 2;
	skynet_free(q->queue);
	q->queue = new_queue;
}

static struct mq_lane *
lane_create(int cap) {
	struct mq_lane *l = skynet_malloc(sizeof(*l) + sizeof(l->ring[0]) * (size_t)cap);
	l->cap = cap;
	l->head = 0;
	l->tail = 0;
	return l;
}

/* Append *m to the lane, making or doubling it. Under the queue's lock. */
static void
lane_push(struct message_queue *q, const struct skynet_message *m) {
	struct mq_lane *l = q->lane;
	if (l == NULL)
		q->lane = l = lane_create(LANE_SIZE);
	l->ring[l->tail] = *m;
	if (++l->tail >= l->cap)
		l->tail = 0;
	if (l->head != l->tail)
		return;
	// Full: copy into a ring twice the size, oldest first.
	struct mq_lane *n = lane_create(l->cap * 2);
	for (int i = 0; i < l->cap; i++)
		n->ring[i] = l->ring[(l->head + i) % l->cap];
	n->tail = l->cap;
	skynet_free(l);
	q->lane = n;
}

/* Append *m to the ordinary ring. Under the queue's lock. */
static void
ring_push(struct message_queue *q, const struct skynet_message *m) {
	q->queue[q->tail] = *m;
	if (++q->tail >= q->cap)
		q->tail = 0;
	if (q->head == q->tail)
		expand_queue(q);
}

void
skynet_mq_push(struct message_queue *q, struct skynet_message *message) {
	assert(message);
	size_t bytes = message_bytes(message); // the pusher still owns the payload here
	SPIN_LOCK(q);
	if (q->priority && is_priority(message))
		lane_push(q, message);
	else
		ring_push(q, message);
	q->bytes += bytes;
	bool join = false;
	if (q->in_global == 0) {
		q->in_global = 1;
		join = true;
	}
	SPIN_UNLOCK(q);
	/*
	 * Safe outside the queue lock: only the pusher that flipped in_global
	 * from 0 to 1 links the queue, and no worker can hold it meanwhile.
	 */
	if (join)
		skynet_globalmq_push(q);
}

void
skynet_mq_mark_release(struct message_queue *q) {
	SPIN_LOCK(q);
	assert(q->release == 0);
	q->release = 1;
	bool join = false;
	if (q->in_global == 0) {
		q->in_global = 1;
		join = true;
	}
	SPIN_UNLOCK(q);
	if (join)
		skynet_globalmq_push(q);
}

static void
drop_queue(struct message_queue *q, message_drop drop_func, void *ud) {
	struct skynet_message msg;
	while (!skynet_mq_pop(q, &msg))
		drop_func(&msg, ud);
	release_queue(q);
}

void
skynet_mq_release(struct message_queue *q, message_drop drop_func, void *ud) {
	SPIN_LOCK(q);
	int release = q->release;
	SPIN_UNLOCK(q);
	if (release)
		drop_queue(q, drop_func, ud);
	else
		skynet_globalmq_push(q);
}

int
skynet_globalmq_peek(void) {
	// Relaxed, lock-free: a hint for spinning workers, who take the lock to pop.
	return ATOM_LOAD_RELAXED(&GLOBAL_QUEUE->head) != NULL;
}

void
skynet_mq_set_weigh(int type, skynet_mq_weigh_cb cb) {
	WEIGH[type & 0xff] = cb;
}

void
skynet_mq_set_wakeup(skynet_mq_wakeup_cb cb) {
	WAKEUP = cb;
}

void
skynet_mq_init(void) {
	struct global_queue *g = skynet_calloc(1, sizeof(*g));
	SPIN_INIT(g);
	GLOBAL_QUEUE = g;
}

void
skynet_mq_exit(void) {
	struct global_queue *g = GLOBAL_QUEUE;
	if (g == NULL)
		return;
	SPIN_DESTROY(g);
	skynet_free(g);
	GLOBAL_QUEUE = NULL;
	WAKEUP = NULL;
}
