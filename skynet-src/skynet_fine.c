/*
 * Precise timers: a binary min-heap of entries ordered by (due_us, seq),
 * seq being the order of adds, so equal deadlines pop in the order they were
 * added. Beside it an index, an open-addressing table (linear probing,
 * power-of-two size, at most half full) whose slots hold heap position + 1
 * (0: empty), hashed on (handle, session); each entry records its slot, so
 * moving an entry in the heap updates the index in O(1).
 *
 * Invariants: index[v[i].slot] == i + 1 for every entry i < n; every slot
 * between an entry's home slot and its slot is occupied (so a probe from the
 * home finds it); deleting a slot shifts the probe run after it back
 * (no tombstones). The table doubles when it would be more than half full
 * and halves when it is less than an eighth full (never below FINE_MIN_SLOTS).
 *
 * Units: microseconds, of whatever clock the caller counts in.
 */
#include "skynet_fine.h"

#include "skynet.h"

#include <assert.h>

#define FINE_MIN_SLOTS 16

struct fine_entry {
	uint64_t due_us;
	uint64_t seq;
	uint32_t handle;
	int session;
	uint32_t slot; // its slot in the index
};

struct skynet_fine {
	struct fine_entry *v; // owned: the heap, n used of cap
	size_t n;
	size_t cap;
	uint32_t *index; // owned: mask + 1 slots
	uint32_t mask;
	uint64_t seq;
};

static uint32_t
home(const struct skynet_fine *f, uint32_t handle, int session) {
	uint64_t h = ((uint64_t)handle << 32 | (uint32_t)session) * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 32) & f->mask;
}

static void
index_build(struct skynet_fine *f, uint32_t slots) {
	skynet_free(f->index);
	f->index = skynet_calloc(slots, sizeof(uint32_t));
	f->mask = slots - 1;
	for (size_t i = 0; i < f->n; i++) {
		uint32_t s = home(f, f->v[i].handle, f->v[i].session);
		while (f->index[s] != 0)
			s = (s + 1) & f->mask;
		f->index[s] = (uint32_t)i + 1;
		f->v[i].slot = s;
	}
}

/* Empty slot s and shift the probe run after it back. */
static void
index_delete(struct skynet_fine *f, uint32_t s) {
	uint32_t j = s;
	for (;;) {
		j = (j + 1) & f->mask;
		uint32_t at = f->index[j];
		if (at == 0)
			break;
		struct fine_entry *e = &f->v[at - 1];
		uint32_t h = home(f, e->handle, e->session);
		/* Entry j may fill s unless its home lies cyclically in (s, j]. */
		bool stays = s <= j ? (s < h && h <= j) : (s < h || h <= j);
		if (stays)
			continue;
		f->index[s] = at;
		e->slot = s;
		s = j;
	}
	f->index[s] = 0;
}

static bool
before(const struct fine_entry *a, const struct fine_entry *b) {
	return a->due_us < b->due_us || (a->due_us == b->due_us && a->seq < b->seq);
}

static void
place(struct skynet_fine *f, size_t i, struct fine_entry e) {
	f->v[i] = e;
	f->index[e.slot] = (uint32_t)i + 1;
}

static void
sift_up(struct skynet_fine *f, size_t i) {
	struct fine_entry e = f->v[i];
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!before(&e, &f->v[p]))
			break;
		place(f, i, f->v[p]);
		i = p;
	}
	place(f, i, e);
}

static void
sift_down(struct skynet_fine *f, size_t i) {
	struct fine_entry e = f->v[i];
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= f->n)
			break;
		if (c + 1 < f->n && before(&f->v[c + 1], &f->v[c]))
			c++;
		if (!before(&f->v[c], &e))
			break;
		place(f, i, f->v[c]);
		i = c;
	}
	place(f, i, e);
}

struct skynet_fine *
skynet_fine_create(void) {
	struct skynet_fine *f = skynet_calloc(1, sizeof(*f));
	index_build(f, FINE_MIN_SLOTS);
	return f;
}

void
skynet_fine_release(struct skynet_fine *f) {
	if (f == NULL)
		return;
	skynet_free(f->v);
	skynet_free(f->index);
	skynet_free(f);
}

void
skynet_fine_add(struct skynet_fine *f, uint32_t handle, int session, uint64_t due_us) {
	if ((f->n + 1) * 2 > (size_t)f->mask + 1)
		index_build(f, (f->mask + 1) * 2);
	if (f->n == f->cap) {
		f->cap = f->cap ? f->cap * 2 : 16;
		f->v = skynet_realloc(f->v, f->cap * sizeof(*f->v));
	}
	uint32_t s = home(f, handle, session);
	while (f->index[s] != 0)
		s = (s + 1) & f->mask;
	struct fine_entry e = {
	    .due_us = due_us, .seq = f->seq++, .handle = handle, .session = session, .slot = s};
	size_t i = f->n++;
	place(f, i, e);
	sift_up(f, i);
}

static void
maybe_shrink(struct skynet_fine *f) {
	uint32_t slots = f->mask + 1;
	if (slots > FINE_MIN_SLOTS && f->n * 8 < slots) {
		index_build(f, slots / 2);
		if (f->cap > 16 && f->n * 4 < f->cap) {
			f->cap /= 2;
			f->v = skynet_realloc(f->v, f->cap * sizeof(*f->v));
		}
	}
}

static void
remove_at(struct skynet_fine *f, size_t i) {
	index_delete(f, f->v[i].slot);
	size_t last = --f->n;
	if (i != last) {
		place(f, i, f->v[last]);
		if (i > 0 && before(&f->v[i], &f->v[(i - 1) / 2]))
			sift_up(f, i);
		else
			sift_down(f, i);
	}
}

int
skynet_fine_cancel(struct skynet_fine *f, uint32_t handle, int session) {
	size_t found = SIZE_MAX;
	for (uint32_t s = home(f, handle, session); f->index[s] != 0; s = (s + 1) & f->mask) {
		size_t i = f->index[s] - 1;
		const struct fine_entry *e = &f->v[i];
		if (e->handle == handle && e->session == session &&
		    (found == SIZE_MAX || e->seq > f->v[found].seq))
			found = i;
	}
	if (found == SIZE_MAX)
		return SKYNET_ENOENT;
	remove_at(f, found);
	maybe_shrink(f);
	return 0;
}

uint64_t
skynet_fine_next(const struct skynet_fine *f) {
	return f->n > 0 ? f->v[0].due_us : UINT64_MAX;
}

size_t
skynet_fine_pop(struct skynet_fine *f, uint64_t now_us, struct skynet_wheel_expired *out,
                uint64_t *due, size_t cap) {
	size_t got = 0;
	while (got < cap && f->n > 0 && f->v[0].due_us <= now_us) {
		out[got].handle = f->v[0].handle;
		out[got].session = f->v[0].session;
		if (due != NULL)
			due[got] = f->v[0].due_us;
		got++;
		remove_at(f, 0);
	}
	if (got > 0)
		maybe_shrink(f);
	return got;
}

size_t
skynet_fine_remove_service(struct skynet_fine *f, uint32_t handle) {
	size_t kept = 0;
	for (size_t i = 0; i < f->n; i++)
		if (f->v[i].handle != handle)
			f->v[kept++] = f->v[i];
	size_t removed = f->n - kept;
	if (removed == 0)
		return 0;
	f->n = kept;
	uint32_t slots = f->mask + 1;
	while (slots > FINE_MIN_SLOTS && f->n * 8 < slots)
		slots /= 2;
	index_build(f, slots); // for the entries where they are now; sift_down keeps it
	for (size_t i = kept / 2; i-- > 0;)
		sift_down(f, i);
	return removed;
}

size_t
skynet_fine_pending(const struct skynet_fine *f, uint32_t handle) {
	if (handle == 0)
		return f->n;
	size_t count = 0;
	for (size_t i = 0; i < f->n; i++)
		count += f->v[i].handle == handle;
	return count;
}
