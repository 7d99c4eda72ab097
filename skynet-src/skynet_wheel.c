/*
 * Hierarchical timer wheel over a 32-bit tick counter (one tick is one
 * centisecond in the node, but nothing here knows that).
 *
 * Slots. 256 near slots hold timers whose expiry shares all but the low 8
 * bits with the current tick `time`; levels 0..3 of 64 slots each take the
 * rest, a timer going to the first level i whose window holds it (expiry
 * and time agree on every bit above 8 + 6 * (i + 1)) at slot
 * (expiry >> (8 + 6 * i)) & 63; level 3 takes whatever is left, including
 * expiries past the 32-bit wrap. When the low 8 bits of time roll over to 0,
 * the slot of the lowest level whose index is not 0 is redistributed
 * ("cascaded"); at the wrap (time == 0) that is level 3 slot 0. Invariant:
 * a timer sits in the slot the rule picks for the current time, until that
 * slot is cascaded; so the near slot of `time` holds exactly the timers due
 * now, and every timer reaches it no earlier than its expiry. A delay is at
 * most WHEEL_MAX_DELAY so that a wrapped expiry never shares the top 6 bits
 * with time (which would make it look due a lap early).
 *
 * Lanes. Each level slot is WHEEL_LANES lists, picked by the low bits of
 * the expiry. Cascading walks lists of nodes that have long left the cache;
 * one list is a pointer chase that waits for each miss in turn, while
 * taking the lanes in turn keeps several misses in flight. (For the same
 * reason, draining a near slot prefetches the hash bucket and service
 * neighbours of the timers a few places ahead.)
 *
 * Order. All pending timers with one expiry are always in the same list, in
 * the order they were added: lists append at the tail, equal expiries share
 * a lane, and a cascade moves each lane in order. While a cascade is in
 * progress (the slot's lanes detached into the cascade lanes and only partly
 * redistributed, see below), new timers are appended to the cascade lane of
 * their expiry too, so that none overtakes an older one.
 *
 * Skipping. Occupancy bitmaps (256 bits for near, 64 per level, a level bit
 * set while any lane of the slot is occupied) give the next tick at which
 * anything happens in O(1): the next occupied near slot of this 256-tick
 * block, else the next cascade of an occupied slot. advance jumps straight
 * there, so a jump of D ticks costs time in proportion to the timers fired
 * and cascaded (at most 4 cascades each), plus one stop per lap of the
 * counter, whatever D is.
 *
 * Bounded work. advance does at most ~cap units (a timer fired, a timer
 * cascaded, a stop) per call. A big slot is cascaded across several calls:
 * its lanes are first spliced in O(1) into the cascade lanes, which every
 * call drains before anything else; a caller holding a spinlock around each
 * call never holds it long, and adds/cancels interleave between calls.
 *
 * Memory. Nodes are 32 bytes in a pool of 1024-node chunks that never move;
 * links are 32-bit indices into the pool. A slot list is doubly linked and
 * its two ends point at the list itself (WHEEL_LIST | id), so unlinking
 * needs no search and tells when the list becomes empty (for the bitmap).
 * A linear-hashing table (chain heads, one 32-bit word per timer, grown one
 * bucket at a time, so there is no rehash pause) maps (handle, session) to
 * the timer for O(1) cancel. Each chain is newest first: adds push at its
 * head, removals and splits keep the order of the rest, so the first match
 * is the timer set last for its pair, which is the one cancel removes. A
 * second, small one maps handle to a service record: a pool node heading a
 * doubly linked list of that service's timers, with their count; it lives
 * while the service has timers. Kept apart, the record chains hold only
 * records, few enough to stay in cache. Free nodes form a LIFO list, so a
 * cancelled node is reused by the next add; the pool never shrinks. Per
 * pending timer: 32 bytes of node plus ~4 of bucket.
 */
#include "skynet_wheel.h"

#include "skynet.h"

#include <assert.h>
#include <string.h>

#define WHEEL_NEAR_BITS   8
#define WHEEL_NEAR_SLOTS  256
#define WHEEL_NEAR_MASK   255u
#define WHEEL_LEVEL_BITS  6
#define WHEEL_LEVEL_SLOTS 64
#define WHEEL_LEVEL_MASK  63u
#define WHEEL_LEVELS      4
/* A level slot (and the cascade in progress) is this many lists, by expiry & (lanes - 1). */
#define WHEEL_LANES 4u
/* List ids: 0..255 near, 256.. the level slots' lanes, then the cascade's lanes. */
#define WHEEL_LIST_CASCADE (WHEEL_NEAR_SLOTS + WHEEL_LEVELS * WHEEL_LEVEL_SLOTS * WHEEL_LANES)
#define WHEEL_LIST_COUNT   (WHEEL_LIST_CASCADE + WHEEL_LANES)

/* Link values. Node indices stay below WHEEL_LIST. */
#define WHEEL_LIST   0x80000000u // | list id: the end of that slot list
#define WHEEL_NIL    0xffffffffu // end of a hash chain, service list, free list
#define WHEEL_RECORD 0xfffffffeu // prev of a service record
#define WHEEL_FREE   0xfffffffdu // prev of a free node

#define WHEEL_PREFETCH_AHEAD 4 // timers of a slot whose memory is fetched ahead of their turn

#define WHEEL_CHUNK_SHIFT 10
#define WHEEL_CHUNK_NODES (1u << WHEEL_CHUNK_SHIFT)
#define WHEEL_SEG_SHIFT   10
#define WHEEL_SEG_BUCKETS (1u << WHEEL_SEG_SHIFT)

/*
 * A pending timer, a service record, or a free node. A timer names its
 * service by the record's index (the handle is in the record, which is hot
 * in cache), so dropping a timer never searches for its record. A record's
 * expire counts the service's timers and its snext is the first of them.
 */
struct wheel_node {
	uint32_t owner; // timer: index of its record; record: the service handle
	int session;
	uint32_t expire; // tick the timer is due
	uint32_t next;   // slot list (or free list)
	uint32_t prev;   // slot list, or WHEEL_RECORD / WHEEL_FREE
	uint32_t hnext;  // hash chain
	uint32_t snext;  // service list
	uint32_t sprev;  // service list; the first timer's sprev is its record
};

_Static_assert(sizeof(struct wheel_node) == 32, "a node must stay at 32 bytes");

/* Linear hashing: base + split buckets in use; bucket b < split is already split. */
struct wheel_hash {
	uint32_t **segs; // owned: segments of WHEEL_SEG_BUCKETS chain heads, each owned
	size_t nsegs;
	size_t segs_cap;
	uint32_t base; // buckets at the start of this doubling round, a power of 2
	uint32_t split;
	size_t entries;
};

struct skynet_wheel {
	uint32_t time;
	uint64_t near_bits[WHEEL_NEAR_SLOTS / 64];
	uint64_t level_bits[WHEEL_LEVELS];
	uint32_t head[WHEEL_LIST_COUNT];
	uint32_t tail[WHEEL_LIST_COUNT];
	size_t pending;             // timers, records excluded
	struct wheel_node **chunks; // owned, each chunk owned
	size_t nchunks;
	size_t chunks_cap;
	uint32_t free_head;
	struct wheel_hash timers;  // (handle, session) -> timer
	struct wheel_hash records; // handle -> service record
	struct skynet_wheel_stats stats;
};

static inline struct wheel_node *
node_at(const struct skynet_wheel *w, uint32_t idx) {
	return &w->chunks[idx >> WHEEL_CHUNK_SHIFT][idx & (WHEEL_CHUNK_NODES - 1)];
}

static inline bool
is_list_end(uint32_t link) {
	return link >= WHEEL_LIST;
}

static inline bool
list_is_empty(const struct skynet_wheel *w, uint32_t list) {
	return is_list_end(w->head[list]);
}

/* First lane of a level slot. */
static inline uint32_t
level_list(int level, uint32_t slot) {
	return WHEEL_NEAR_SLOTS + ((uint32_t)level * WHEEL_LEVEL_SLOTS + slot) * WHEEL_LANES;
}

static inline uint32_t
lane_of(uint32_t expire) {
	return expire & (WHEEL_LANES - 1);
}

static inline bool
is_cascading(const struct skynet_wheel *w) {
	for (uint32_t lane = 0; lane < WHEEL_LANES; lane++)
		if (!list_is_empty(w, WHEEL_LIST_CASCADE + lane))
			return true;
	return false;
}

/* Bits strictly above bit k (0..63). */
static inline uint64_t
bits_above(unsigned k) {
	return (~0ULL << k) << 1;
}

/* Keep the bitmaps in step: a level slot is occupied while any of its lanes is. */
static void
mark_list(struct skynet_wheel *w, uint32_t list, bool occupied) {
	uint64_t *word;
	uint32_t bit;
	if (list < WHEEL_NEAR_SLOTS) {
		word = &w->near_bits[list >> 6];
		bit = list & 63;
	} else if (list < WHEEL_LIST_CASCADE) {
		uint32_t slot = (list - WHEEL_NEAR_SLOTS) / WHEEL_LANES; // level * 64 + slot
		word = &w->level_bits[slot >> 6];
		bit = slot & 63;
		uint32_t first = WHEEL_NEAR_SLOTS + slot * WHEEL_LANES;
		for (uint32_t lane = 0; !occupied && lane < WHEEL_LANES; lane++)
			if (!list_is_empty(w, first + lane))
				return;
	} else {
		return;
	}
	if (occupied)
		*word |= 1ULL << bit;
	else
		*word &= ~(1ULL << bit);
}

static void
list_append(struct skynet_wheel *w, uint32_t list, uint32_t idx) {
	struct wheel_node *n = node_at(w, idx);
	uint32_t tail = w->tail[list];
	n->next = WHEEL_LIST | list;
	n->prev = tail;
	if (is_list_end(tail)) {
		w->head[list] = idx;
		mark_list(w, list, true);
	} else {
		node_at(w, tail)->next = idx;
	}
	w->tail[list] = idx;
}

static void
list_unlink(struct skynet_wheel *w, uint32_t idx) {
	struct wheel_node *n = node_at(w, idx);
	uint32_t next = n->next;
	uint32_t prev = n->prev;
	if (is_list_end(prev))
		w->head[prev & ~WHEEL_LIST] = next;
	else
		node_at(w, prev)->next = next;
	if (is_list_end(next))
		w->tail[next & ~WHEEL_LIST] = prev;
	else
		node_at(w, next)->prev = prev;
	if (is_list_end(prev) && is_list_end(next))
		mark_list(w, next & ~WHEEL_LIST, false);
}

/* Move all of list from to the empty list to, keeping the order. O(1). */
static void
list_splice(struct skynet_wheel *w, uint32_t from, uint32_t to) {
	uint32_t first = w->head[from];
	if (is_list_end(first))
		return;
	uint32_t last = w->tail[from];
	assert(list_is_empty(w, to));
	node_at(w, first)->prev = WHEEL_LIST | to;
	node_at(w, last)->next = WHEEL_LIST | to;
	w->head[to] = first;
	w->tail[to] = last;
	w->head[from] = w->tail[from] = WHEEL_LIST | from;
	mark_list(w, from, false);
	mark_list(w, to, true);
}

/* The list a timer due at expire belongs to while the counter reads time. */
static uint32_t
list_of(uint32_t time, uint32_t expire) {
	if ((expire | WHEEL_NEAR_MASK) == (time | WHEEL_NEAR_MASK))
		return expire & WHEEL_NEAR_MASK;
	for (int i = 0; i < WHEEL_LEVELS - 1; i++) {
		unsigned shift = WHEEL_NEAR_BITS + (unsigned)i * WHEEL_LEVEL_BITS;
		uint32_t window = (1u << (shift + WHEEL_LEVEL_BITS)) - 1;
		if ((expire | window) == (time | window))
			return level_list(i, (expire >> shift) & WHEEL_LEVEL_MASK) + lane_of(expire);
	}
	return level_list(WHEEL_LEVELS - 1, expire >> (32 - WHEEL_LEVEL_BITS)) + lane_of(expire);
}

static void
pool_grow(struct skynet_wheel *w) {
	assert(w->nchunks < (WHEEL_LIST >> WHEEL_CHUNK_SHIFT));
	if (w->nchunks == w->chunks_cap) {
		w->chunks_cap = w->chunks_cap ? w->chunks_cap * 2 : 16;
		w->chunks = skynet_realloc(w->chunks, w->chunks_cap * sizeof(*w->chunks));
	}
	struct wheel_node *chunk = skynet_malloc(WHEEL_CHUNK_NODES * sizeof(*chunk));
	uint32_t first = (uint32_t)w->nchunks << WHEEL_CHUNK_SHIFT;
	for (uint32_t i = 0; i < WHEEL_CHUNK_NODES; i++) {
		chunk[i].prev = WHEEL_FREE;
		chunk[i].next = i + 1 < WHEEL_CHUNK_NODES ? first + i + 1 : w->free_head;
	}
	w->chunks[w->nchunks++] = chunk;
	w->free_head = first;
	w->stats.chunks++;
}

static uint32_t
node_alloc(struct skynet_wheel *w) {
	if (w->free_head == WHEEL_NIL)
		pool_grow(w);
	uint32_t idx = w->free_head;
	w->free_head = node_at(w, idx)->next;
	return idx;
}

static void
node_free(struct skynet_wheel *w, uint32_t idx) {
	struct wheel_node *n = node_at(w, idx);
	n->prev = WHEEL_FREE;
	n->next = w->free_head;
	w->free_head = idx;
}

/*
 * Hash of the pair (a, b): multiply, then fold the high half into the low
 * one (linear hashing uses the low bits). The high half alone leaves a
 * lattice in its low bits for the sequential sessions of one service,
 * doubling the chain walks; folded, chains stay as short as random ones.
 */
static inline uint32_t
mix(uint32_t a, uint32_t b) {
	uint64_t x = (((uint64_t)a << 32) | b) * 0x9e3779b97f4a7c15ULL;
	return (uint32_t)(x ^ (x >> 32));
}

static inline uint32_t
timer_hash(uint32_t handle, int session) {
	return mix(handle, (uint32_t)session);
}

static inline uint32_t
record_hash(uint32_t handle) {
	return mix(~handle, 0x9e3779b9u);
}

static inline bool
is_record(const struct wheel_node *n) {
	return n->prev == WHEEL_RECORD;
}

static uint32_t
node_hash(const struct skynet_wheel *w, const struct wheel_node *n) {
	if (is_record(n))
		return record_hash(n->owner);
	return timer_hash(node_at(w, n->owner)->owner, n->session);
}

static uint32_t *
bucket_of(const struct wheel_hash *h, uint32_t hv) {
	uint32_t b = hv & (h->base - 1);
	if (b < h->split)
		b = hv & (h->base | (h->base - 1));
	return &h->segs[b >> WHEEL_SEG_SHIFT][b & (WHEEL_SEG_BUCKETS - 1)];
}

static void
hash_add_segment(struct wheel_hash *h) {
	if (h->nsegs == h->segs_cap) {
		h->segs_cap = h->segs_cap ? h->segs_cap * 2 : 16;
		h->segs = skynet_realloc(h->segs, h->segs_cap * sizeof(*h->segs));
	}
	uint32_t *seg = skynet_malloc(WHEEL_SEG_BUCKETS * sizeof(*seg));
	memset(seg, 0xff, WHEEL_SEG_BUCKETS * sizeof(*seg)); // WHEEL_NIL
	h->segs[h->nsegs++] = seg;
}

static void
hash_destroy(struct wheel_hash *h) {
	for (size_t i = 0; i < h->nsegs; i++)
		skynet_free(h->segs[i]);
	skynet_free(h->segs);
}

static size_t
hash_bytes(const struct wheel_hash *h) {
	return h->nsegs * WHEEL_SEG_BUCKETS * sizeof(uint32_t) + h->segs_cap * sizeof(*h->segs);
}

/*
 * Split bucket `split` of h into itself and split + base: O(chain length).
 * Both halves keep the chain's order (newest first): the moved nodes are
 * appended to the new bucket, which starts empty.
 */
static void
hash_split(struct skynet_wheel *w, struct wheel_hash *h) {
	uint32_t to = h->split + h->base;
	if ((to >> WHEEL_SEG_SHIFT) == h->nsegs)
		hash_add_segment(h);
	uint32_t mask = h->base | (h->base - 1);
	uint32_t *link = &h->segs[h->split >> WHEEL_SEG_SHIFT][h->split & (WHEEL_SEG_BUCKETS - 1)];
	uint32_t *dst = &h->segs[to >> WHEEL_SEG_SHIFT][to & (WHEEL_SEG_BUCKETS - 1)];
	assert(*dst == WHEEL_NIL);
	while (*link != WHEEL_NIL) {
		uint32_t idx = *link;
		struct wheel_node *n = node_at(w, idx);
		if ((node_hash(w, n) & mask) == to) {
			*link = n->hnext;
			*dst = idx;
			dst = &n->hnext;
		} else {
			link = &n->hnext;
		}
	}
	*dst = WHEEL_NIL;
	if (++h->split == h->base) {
		h->base <<= 1;
		h->split = 0;
	}
}

static void
hash_insert(struct skynet_wheel *w, struct wheel_hash *h, uint32_t idx, uint32_t hv) {
	uint32_t *head = bucket_of(h, hv);
	node_at(w, idx)->hnext = *head;
	*head = idx;
	if (++h->entries > (size_t)h->base + h->split && h->base < WHEEL_LIST)
		hash_split(w, h);
}

static void
hash_remove(struct skynet_wheel *w, struct wheel_hash *h, uint32_t idx) {
	struct wheel_node *n = node_at(w, idx);
	uint32_t *link = bucket_of(h, node_hash(w, n));
	while (*link != idx)
		link = &node_at(w, *link)->hnext;
	*link = n->hnext;
	h->entries--;
}

static uint32_t
record_find(const struct skynet_wheel *w, uint32_t handle) {
	uint32_t idx = *bucket_of(&w->records, record_hash(handle));
	while (idx != WHEEL_NIL) {
		const struct wheel_node *n = node_at(w, idx);
		if (n->owner == handle)
			return idx;
		idx = n->hnext;
	}
	return WHEEL_NIL;
}

static uint32_t
record_grab(struct skynet_wheel *w, uint32_t handle) {
	uint32_t idx = record_find(w, handle);
	if (idx != WHEEL_NIL)
		return idx;
	idx = node_alloc(w);
	struct wheel_node *r = node_at(w, idx);
	r->owner = handle;
	r->session = 0;
	r->expire = 0;
	r->next = WHEEL_NIL;
	r->prev = WHEEL_RECORD;
	r->snext = WHEEL_NIL;
	r->sprev = WHEEL_NIL;
	hash_insert(w, &w->records, idx, record_hash(handle));
	return idx;
}

/* Unlink timer idx from its service; free the record with its last timer (returns true then). */
static bool
service_unlink(struct skynet_wheel *w, uint32_t idx) {
	struct wheel_node *n = node_at(w, idx);
	node_at(w, n->sprev)->snext = n->snext;
	if (n->snext != WHEEL_NIL)
		node_at(w, n->snext)->sprev = n->sprev;
	uint32_t rec = n->owner;
	struct wheel_node *r = node_at(w, rec);
	assert(r->expire > 0);
	if (--r->expire > 0)
		return false;
	hash_remove(w, &w->records, rec);
	node_free(w, rec);
	return true;
}

/* Take timer idx out of everything and free it. Returns true if its service record went too. */
static bool
timer_drop(struct skynet_wheel *w, uint32_t idx, uint32_t *hash_link) {
	list_unlink(w, idx);
	if (hash_link != NULL) {
		*hash_link = node_at(w, idx)->hnext;
		w->timers.entries--;
	} else {
		hash_remove(w, &w->timers, idx);
	}
	bool gone = service_unlink(w, idx);
	node_free(w, idx);
	w->pending--;
	return gone;
}

struct skynet_wheel *
skynet_wheel_create(uint32_t time) {
	struct skynet_wheel *w = skynet_calloc(1, sizeof(*w));
	w->time = time;
	for (uint32_t i = 0; i < WHEEL_LIST_COUNT; i++)
		w->head[i] = w->tail[i] = WHEEL_LIST | i;
	w->free_head = WHEEL_NIL;
	w->timers.base = w->records.base = WHEEL_SEG_BUCKETS;
	hash_add_segment(&w->timers);
	hash_add_segment(&w->records);
	return w;
}

void
skynet_wheel_release(struct skynet_wheel *w) {
	if (w == NULL)
		return;
	for (size_t i = 0; i < w->nchunks; i++)
		skynet_free(w->chunks[i]);
	skynet_free(w->chunks);
	hash_destroy(&w->timers);
	hash_destroy(&w->records);
	skynet_free(w);
}

uint32_t
skynet_wheel_time(const struct skynet_wheel *w) {
	return w->time;
}

void
skynet_wheel_add(struct skynet_wheel *w, uint32_t handle, int session, uint32_t delay) {
	if (delay == 0)
		delay = 1;
	else if (delay > WHEEL_MAX_DELAY)
		delay = WHEEL_MAX_DELAY;
	uint32_t rec = record_grab(w, handle);
	uint32_t idx = node_alloc(w);
	struct wheel_node *n = node_at(w, idx);
	struct wheel_node *r = node_at(w, rec);
	n->owner = rec;
	n->session = session;
	n->expire = w->time + delay;
	n->sprev = rec;
	n->snext = r->snext;
	if (r->snext != WHEEL_NIL)
		node_at(w, r->snext)->sprev = idx;
	r->snext = idx;
	r->expire++;
	hash_insert(w, &w->timers, idx, timer_hash(handle, session));
	/* During a cascade, queue behind it so that no older timer is overtaken. */
	if (is_cascading(w))
		list_append(w, WHEEL_LIST_CASCADE + lane_of(n->expire), idx);
	else
		list_append(w, list_of(w->time, n->expire), idx);
	w->pending++;
}

int
skynet_wheel_cancel(struct skynet_wheel *w, uint32_t handle, int session) {
	uint32_t rec = record_find(w, handle);
	if (rec == WHEEL_NIL)
		return SKYNET_ENOENT;
	uint32_t *link = bucket_of(&w->timers, timer_hash(handle, session));
	while (*link != WHEEL_NIL) {
		struct wheel_node *n = node_at(w, *link);
		if (n->owner == rec && n->session == session) {
			timer_drop(w, *link, link);
			return 0;
		}
		link = &n->hnext;
	}
	return SKYNET_ENOENT;
}

size_t
skynet_wheel_remove_service(struct skynet_wheel *w, uint32_t handle, size_t max) {
	uint32_t rec = record_find(w, handle);
	if (rec == WHEEL_NIL)
		return 0;
	size_t removed = 0;
	while (removed < max) {
		uint32_t idx = node_at(w, rec)->snext;
		assert(idx != WHEEL_NIL); // a record without timers is freed at once
		removed++;
		w->stats.unlinked++;
		if (timer_drop(w, idx, NULL))
			break;
	}
	return removed;
}

bool
skynet_wheel_has_due(const struct skynet_wheel *w) {
	return !list_is_empty(w, w->time & WHEEL_NEAR_MASK) || is_cascading(w);
}

uint64_t
skynet_wheel_next_event(const struct skynet_wheel *w) {
	if (skynet_wheel_has_due(w))
		return 0;
	/* The next occupied near slot of this block comes before any cascade. */
	uint32_t cur = w->time & WHEEL_NEAR_MASK;
	unsigned word = cur >> 6;
	uint64_t bits = w->near_bits[word] & bits_above(cur & 63);
	while (bits == 0 && ++word < WHEEL_NEAR_SLOTS / 64)
		bits = w->near_bits[word];
	if (bits != 0)
		return word * 64 + (unsigned)__builtin_ctzll(bits) - cur;
	/* A lower level always cascades before a higher one. */
	for (int i = 0; i < WHEEL_LEVELS; i++) {
		bits = w->level_bits[i];
		if (bits == 0)
			continue;
		unsigned shift = WHEEL_NEAR_BITS + (unsigned)i * WHEEL_LEVEL_BITS;
		uint64_t window = 1ULL << (shift + WHEEL_LEVEL_BITS);
		uint64_t start = w->time & ~(window - 1);
		uint64_t later = bits & bits_above((w->time >> shift) & WHEEL_LEVEL_MASK);
		/* Nothing later in this window (only wrapped timers at level 3): stop at its end. */
		uint64_t at = later ? start + ((uint64_t)__builtin_ctzll(later) << shift) : start + window;
		return at - w->time;
	}
	return UINT64_MAX;
}

/*
 * Start loading what dropping timer idx will touch (its hash bucket and
 * service neighbours), so that the misses of consecutive timers of a slot
 * overlap instead of queueing one after the other.
 */
static void
prefetch_drop(const struct skynet_wheel *w, uint32_t idx) {
	const struct wheel_node *n = node_at(w, idx);
	__builtin_prefetch(bucket_of(&w->timers, timer_hash(node_at(w, n->owner)->owner, n->session)));
	__builtin_prefetch(node_at(w, n->sprev), 1);
	if (n->snext != WHEEL_NIL)
		__builtin_prefetch(node_at(w, n->snext), 1);
}

/* The counter's low 8 bits just rolled over: detach the slot to redistribute. */
static void
cascade(struct skynet_wheel *w) {
	uint32_t x = w->time >> WHEEL_NEAR_BITS;
	int level = 0;
	while (level < WHEEL_LEVELS - 1 && (x & WHEEL_LEVEL_MASK) == 0) {
		x >>= WHEEL_LEVEL_BITS;
		level++;
	}
	uint32_t first = level_list(level, x & WHEEL_LEVEL_MASK);
	for (uint32_t lane = 0; lane < WHEEL_LANES; lane++)
		list_splice(w, first + lane, WHEEL_LIST_CASCADE + lane);
}

/*
 * Redistribute up to budget timers of the cascade in progress; returns how
 * many. The lanes are taken in turn, so that the cache misses of up to
 * WHEEL_LANES chains are in flight at once: a single list would be a pointer
 * chase, one miss after the other.
 */
static size_t
cascade_some(struct skynet_wheel *w, size_t budget) {
	size_t moved = 0;
	bool any = true;
	while (any && moved < budget) {
		any = false;
		for (uint32_t lane = 0; lane < WHEEL_LANES && moved < budget; lane++) {
			uint32_t idx = w->head[WHEEL_LIST_CASCADE + lane];
			if (is_list_end(idx))
				continue;
			const struct wheel_node *n = node_at(w, idx);
			if (!is_list_end(n->next))
				__builtin_prefetch(node_at(w, n->next));
			list_unlink(w, idx);
			list_append(w, list_of(w->time, n->expire), idx);
			moved++;
			any = true;
		}
	}
	w->stats.cascaded += moved;
	return moved;
}

/* Nothing due now: jump to the next tick with work, or by all of *ticks. */
static void
step(struct skynet_wheel *w, uint64_t *ticks) {
	uint64_t d = skynet_wheel_next_event(w);
	if (d > *ticks) {
		w->time += (uint32_t)*ticks; // modulo 2^32 on purpose
		*ticks = 0;
		return;
	}
	w->time += (uint32_t)d;
	*ticks -= d;
	w->stats.steps++;
	if ((w->time & WHEEL_NEAR_MASK) == 0)
		cascade(w);
}

size_t
skynet_wheel_advance(struct skynet_wheel *w, uint64_t *ticks, struct skynet_wheel_expired *out,
                     size_t cap) {
	assert(cap > 0);
	size_t n = 0;
	size_t work = 0;
	for (;;) {
		if (is_cascading(w)) {
			work += cascade_some(w, cap - work);
			if (work >= cap)
				return n;
		}
		uint32_t now = w->time & WHEEL_NEAR_MASK;
		uint32_t ahead = w->head[now]; // WHEEL_PREFETCH_AHEAD timers ahead of the one dropped
		for (int k = 0; k < WHEEL_PREFETCH_AHEAD && !is_list_end(ahead); k++) {
			prefetch_drop(w, ahead);
			ahead = node_at(w, ahead)->next;
		}
		while (!list_is_empty(w, now)) {
			if (n == cap)
				return n;
			if (!is_list_end(ahead)) {
				prefetch_drop(w, ahead);
				ahead = node_at(w, ahead)->next;
			}
			uint32_t idx = w->head[now];
			const struct wheel_node *t = node_at(w, idx);
			out[n].handle = node_at(w, t->owner)->owner;
			out[n].session = t->session;
			n++;
			timer_drop(w, idx, NULL);
			w->stats.fired++;
			work++;
		}
		if (*ticks == 0 || work >= cap)
			return n;
		step(w, ticks);
		work++;
	}
}

size_t
skynet_wheel_pending(const struct skynet_wheel *w, uint32_t handle) {
	uint32_t rec = record_find(w, handle);
	return rec == WHEEL_NIL ? 0 : node_at(w, rec)->expire;
}

size_t
skynet_wheel_count(const struct skynet_wheel *w) {
	return w->pending;
}

size_t
skynet_wheel_bytes(const struct skynet_wheel *w) {
	return sizeof(*w) + w->nchunks * WHEEL_CHUNK_NODES * sizeof(struct wheel_node) +
	       w->chunks_cap * sizeof(*w->chunks) + hash_bytes(&w->timers) + hash_bytes(&w->records);
}

void
skynet_wheel_stats(const struct skynet_wheel *w, struct skynet_wheel_stats *stats) {
	*stats = w->stats;
}
