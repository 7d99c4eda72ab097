#ifndef SKYNET_MQ_H
#define SKYNET_MQ_H

/*
 * Internal: skynet-src/ (and its tests) only, never service-src/ or lualib-src/.
 *
 * Message queues: one FIFO per service (two with its priority lane on) and
 * the global run queue of service queues. See skynet_mq.c for the invariants.
 */

#include "atomic.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct skynet_message {
	uint32_t source;
	int session;
	void *data; // owned by whoever holds the message
	size_t sz;  // payload length in the low 55 bits, MESSAGE_TRACED, type in the top 8
};

#define MESSAGE_TYPE_SHIFT ((sizeof(size_t) - 1) * 8)
/* The length bits of sz (the name is skynet's: it masks the type off). */
#define MESSAGE_TYPE_MASK (SIZE_MAX >> 9)
/* The payload ends with a trace trailer (skynet_trace.c); the length counts it. */
#define MESSAGE_TRACED ((size_t)1 << (MESSAGE_TYPE_SHIFT - 1))

static inline size_t
skynet_message_sz(int type, size_t len) {
	return len | ((size_t)type << MESSAGE_TYPE_SHIFT);
}

static inline int
skynet_message_type(size_t sz) {
	return (int)(sz >> MESSAGE_TYPE_SHIFT);
}

struct message_queue;

/*
 * Called, outside every queue lock, after a queue entered the global queue
 * (from the pushing thread) and after a pop left other queues in it (from the
 * popping thread): work may be waiting that no worker is coming for.
 */
typedef void (*skynet_mq_wakeup_cb)(void);

/*
 * The bytes a payload of sz bytes stands for beyond sz (a header carrying a
 * buffer). Called under a queue's lock: O(1), no locks, no calls out.
 */
typedef size_t (*skynet_mq_weigh_cb)(const void *payload, size_t sz);

/* Set up the global queue. Not thread-safe: call once before any thread. */
void skynet_mq_init(void);
/* Free the global queue (queues still in it are the caller's business). */
void skynet_mq_exit(void);
/*
 * Install the weigh hook of message type (0..255; NULL: a payload weighs
 * its size). Not thread-safe: set before any thread pushes.
 */
void skynet_mq_set_weigh(int type, skynet_mq_weigh_cb cb);
/* Install the wake-up hook (NULL for none). Not thread-safe: set before the workers start. */
void skynet_mq_set_wakeup(skynet_mq_wakeup_cb cb);

/* Append q to the global queue. Thread-safe. Calls the hook unless this thread defers it. */
void skynet_globalmq_push(struct message_queue *q);
/*
 * Deferred wake-ups, for the calling thread only: after
 * skynet_mq_defer_wakeup, its pushes into the global queue skip the hook
 * until skynet_mq_owed_wakeup, which ends the deferral and returns whether
 * one was skipped. The caller then owes that wake-up: it calls
 * skynet_mq_wakeup, or pops the global queue itself without waiting.
 * Meanwhile *sign is 1 (a relaxed store on the first skipped hook, back to
 * 0 when the deferral ends), so another thread can see a wake-up is owed.
 */
void skynet_mq_defer_wakeup(ATOM_INT *sign);
bool skynet_mq_owed_wakeup(void);
void skynet_mq_wakeup(void);
/* Take the head of the global queue, or NULL. Thread-safe; calls the hook if others remain. */
struct message_queue *skynet_globalmq_pop(void);
/* True when the global queue holds no service queue (a racy snapshot). */
int skynet_globalmq_empty(void);
/* Like !skynet_globalmq_empty without taking the lock: a hint for spinning. */
int skynet_globalmq_peek(void);

/*
 * A new queue for handle. It starts marked as in the global queue (but is
 * not in it) so that no worker runs the service before its init finished;
 * the creator calls skynet_globalmq_push once init succeeded.
 */
struct message_queue *skynet_mq_create(uint32_t handle);
/* The service retired: the next worker to pop q drains and frees it. */
void skynet_mq_mark_release(struct message_queue *q);

typedef void (*message_drop)(struct skynet_message *msg, void *ud);
/*
 * Free q if it was marked released, handing every pending message to
 * drop_func first; otherwise put it back into the global queue.
 */
void skynet_mq_release(struct message_queue *q, message_drop drop_func, void *ud);
uint32_t skynet_mq_handle(struct message_queue *q);

/*
 * Pop into *message, the lane's head first: 0 on success, 1 when both lanes
 * are empty (which leaves the global queue).
 */
int skynet_mq_pop(struct message_queue *q, struct skynet_message *message);
/*
 * The holder of q is done with it: if both lanes are empty, q leaves the
 * global queue as an empty pop would (the next push links it again) and
 * this returns true; otherwise false, and q stays held.
 */
bool skynet_mq_leave(struct message_queue *q);
/* Append a copy of *message; joins the global queue if it was outside. */
void skynet_mq_push(struct message_queue *q, struct skynet_message *message);

/*
 * Turn q's priority lane on or off (see skynet_mq.c); returns the previous
 * setting. On, the messages skynet_mq_is_priority accepts are popped before
 * the ordinary backlog. Thread-safe.
 */
bool skynet_mq_set_priority(struct message_queue *q, bool on);
/* True while q's priority lane is on (a racy snapshot). */
bool skynet_mq_priority(struct message_queue *q);
/*
 * True for the messages the lane takes: PTYPE_DEBUG, PTYPE_SYSTEM, and a
 * PTYPE_RESPONSE from source 0 (a timer expiry). Pure; thread-safe.
 */
bool skynet_mq_is_priority(const struct skynet_message *m);

/* Pending message count, both lanes (a racy snapshot). */
int skynet_mq_length(struct message_queue *q);
/* Pending messages in the priority lane (a racy snapshot). */
int skynet_mq_lane_length(struct message_queue *q);
/* Slots of the lane's ring, 0 while it is not allocated (a racy snapshot; for tests). */
int skynet_mq_lane_capacity(struct message_queue *q);
/*
 * Payload bytes of the pending messages (a racy snapshot): the payload
 * sizes, plus what the weigh hooks add (the buffer of each socket DATA/UDP
 * message).
 */
size_t skynet_mq_bytes(struct message_queue *q);
/* Length and bytes read together (one lock). */
void skynet_mq_backlog(struct message_queue *q, int *length, size_t *bytes);
/* The queue length that crossed the overload threshold since the last call, or 0. */
int skynet_mq_overload(struct message_queue *q);

#endif
