/*
 * Handle table.
 *
 * Data structure: an open-addressed array of slots whose size is a power of
 * two; a handle's slot is (handle & (size - 1)). Each slot holds the handle
 * it was given to and the context published there (NULL while reserved). A
 * new handle is the first index at or after the cursor whose slot is free;
 * the cursor only grows (wrapping from 0xffffff to 1), so a retired handle
 * is not reused until the 24-bit index wraps. When every slot is taken the
 * array doubles and each slot moves to its place for the new mask. Lookups
 * compare the full handle, so a stale handle never finds a newer service.
 *
 * Registration is two steps so that nobody can reach a half-built context:
 * reserve takes a slot and returns its handle (grab finds nothing there
 * yet); the creator builds the context around that handle (its queue, its
 * own copy of the handle) and publishes it. Everything the table needs (the
 * handle, for lookups and for rehashing) lives in the slot and is written
 * under the lock; the table never reads a context's fields.
 *
 * Names: a sorted array of (name, handle) searched by binary search. A
 * handle may have several names; a name is unique.
 *
 * Locking: one rwlock covers everything here. Lookups (grab, findname) take
 * it shared; reserve, publish, retire and naming take it exclusively. The
 * lock is never held while calling into a context (release happens after
 * unlock).
 *
 * Ownership: the table holds one reference to each published context,
 * dropped by retire. Contexts are opaque here: references are taken and
 * dropped through the callbacks given to skynet_handle_init (the context
 * layer owns the count), so this file depends on nothing above it.
 * Retiring a service's other parts (its timers) is the caller's job.
 */
#include "skynet_handle.h"

#include "skynet_malloc.h"
#include "rwlock.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_SLOT_SIZE 4
#define MAX_SLOT_SIZE     0x40000000

struct handle_name {
	char *name; // owned
	uint32_t handle;
};

struct handle_slot {
	uint32_t handle;            // full handle (harbor bits included); 0 when free
	struct skynet_context *ctx; // holds a reference; NULL while only reserved
};

struct handle_storage {
	skynet_handle_grab_cb grab;       // set at init, then read-only
	skynet_handle_release_cb release; // set at init, then read-only
	struct rwlock lock;               // covers every field below
	uint32_t harbor;                  // harbor id, already shifted into the top 8 bits
	uint32_t handle_index;
	int slot_size;
	struct handle_slot *slot; // owned array
	int name_cap;
	int name_count;
	struct handle_name *name; // owned, sorted by name
};

static struct handle_storage *HANDLES = NULL;

static void
grow_slots(struct handle_storage *s) {
	assert(s->slot_size * 2 - 1 <= HANDLE_MASK);
	struct handle_slot *new_slot = skynet_calloc(s->slot_size * 2, sizeof(*new_slot));
	for (int i = 0; i < s->slot_size; i++) {
		if (s->slot[i].handle != 0) {
			int hash = s->slot[i].handle & (s->slot_size * 2 - 1);
			assert(new_slot[hash].handle == 0);
			new_slot[hash] = s->slot[i];
		}
	}
	skynet_free(s->slot);
	s->slot = new_slot;
	s->slot_size *= 2;
}

uint32_t
skynet_handle_reserve(void) {
	struct handle_storage *s = HANDLES;
	rwlock_wlock(&s->lock);
	for (;;) {
		uint32_t index = s->handle_index;
		for (int i = 0; i < s->slot_size; i++, index++) {
			if (index > HANDLE_MASK)
				index = 1; // 0 is reserved
			struct handle_slot *slot = &s->slot[index & (s->slot_size - 1)];
			if (slot->handle == 0) {
				uint32_t handle = index | s->harbor;
				slot->handle = handle;
				slot->ctx = NULL;
				s->handle_index = index + 1;
				rwlock_wunlock(&s->lock);
				return handle;
			}
		}
		grow_slots(s);
	}
}

void
skynet_handle_publish(uint32_t handle, struct skynet_context *ctx) {
	struct handle_storage *s = HANDLES;
	rwlock_wlock(&s->lock);
	struct handle_slot *slot = &s->slot[handle & (s->slot_size - 1)];
	assert(slot->handle == handle && slot->ctx == NULL); // reserved, not yet published
	slot->ctx = ctx;
	rwlock_wunlock(&s->lock);
}

static int
name_search(struct handle_storage *s, const char *name, int *pos) {
	int begin = 0, end = s->name_count - 1;
	while (begin <= end) {
		int mid = (begin + end) / 2;
		int c = strcmp(s->name[mid].name, name);
		if (c == 0) {
			*pos = mid;
			return 1;
		}
		if (c < 0)
			begin = mid + 1;
		else
			end = mid - 1;
	}
	*pos = begin;
	return 0;
}

/* Caller holds the write lock. Removes every name bound to handle. */
static void
remove_names(struct handle_storage *s, uint32_t handle) {
	int j = 0;
	for (int i = 0; i < s->name_count; i++) {
		if (s->name[i].handle == handle) {
			skynet_free(s->name[i].name);
			continue;
		}
		if (i != j)
			s->name[j] = s->name[i];
		j++;
	}
	s->name_count = j;
}

int
skynet_handle_retire(uint32_t handle) {
	struct handle_storage *s = HANDLES;
	struct skynet_context *ctx = NULL;
	rwlock_wlock(&s->lock);
	struct handle_slot *slot = &s->slot[handle & (s->slot_size - 1)];
	if (handle != 0 && slot->handle == handle && slot->ctx != NULL) {
		ctx = slot->ctx;
		slot->handle = 0;
		slot->ctx = NULL;
		remove_names(s, handle);
	}
	rwlock_wunlock(&s->lock);
	if (ctx == NULL)
		return 0;
	s->release(ctx); // the table's reference
	return 1;
}

uint32_t
skynet_handle_next(int *cursor) {
	struct handle_storage *s = HANDLES;
	uint32_t handle = 0;
	rwlock_rlock(&s->lock);
	int i = *cursor < 0 ? 0 : *cursor;
	for (; i < s->slot_size; i++) {
		if (s->slot[i].ctx != NULL) {
			handle = s->slot[i].handle;
			i++;
			break;
		}
	}
	rwlock_runlock(&s->lock);
	*cursor = i;
	return handle;
}

struct skynet_context *
skynet_handle_grab(uint32_t handle) {
	struct handle_storage *s = HANDLES;
	struct skynet_context *result = NULL;
	rwlock_rlock(&s->lock);
	struct handle_slot *slot = &s->slot[handle & (s->slot_size - 1)];
	if (handle != 0 && slot->handle == handle && slot->ctx != NULL) {
		result = slot->ctx;
		s->grab(result);
	}
	rwlock_runlock(&s->lock);
	return result;
}

void
skynet_handle_drop(struct skynet_context *ctx) {
	HANDLES->release(ctx);
}

uint32_t
skynet_handle_findname(const char *name) {
	struct handle_storage *s = HANDLES;
	uint32_t handle = 0;
	int pos;
	rwlock_rlock(&s->lock);
	if (name_search(s, name, &pos))
		handle = s->name[pos].handle;
	rwlock_runlock(&s->lock);
	return handle;
}

const char *
skynet_handle_namehandle(uint32_t handle, const char *name) {
	struct handle_storage *s = HANDLES;
	const char *result = NULL;
	int pos;
	rwlock_wlock(&s->lock);
	if (!name_search(s, name, &pos)) {
		if (s->name_count == s->name_cap) {
			s->name_cap = s->name_cap ? s->name_cap * 2 : 8;
			s->name = skynet_realloc(s->name, s->name_cap * sizeof(*s->name));
		}
		memmove(&s->name[pos + 1], &s->name[pos], (s->name_count - pos) * sizeof(*s->name));
		s->name[pos].name = skynet_strdup(name);
		s->name[pos].handle = handle;
		s->name_count++;
		result = s->name[pos].name;
	}
	rwlock_wunlock(&s->lock);
	return result;
}

int
skynet_handle_count(void) {
	struct handle_storage *s = HANDLES;
	int n = 0;
	rwlock_rlock(&s->lock);
	for (int i = 0; i < s->slot_size; i++)
		n += s->slot[i].ctx != NULL;
	rwlock_runlock(&s->lock);
	return n;
}

void
skynet_handle_set_cursor(uint32_t index) {
	struct handle_storage *s = HANDLES;
	rwlock_wlock(&s->lock);
	s->handle_index = index & HANDLE_MASK;
	if (s->handle_index == 0)
		s->handle_index = 1;
	rwlock_wunlock(&s->lock);
}

void
skynet_handle_init(int harbor, skynet_handle_grab_cb grab, skynet_handle_release_cb release) {
	assert(HANDLES == NULL && grab != NULL && release != NULL);
	struct handle_storage *s = skynet_calloc(1, sizeof(*s));
	s->grab = grab;
	s->release = release;
	rwlock_init(&s->lock);
	s->slot_size = DEFAULT_SLOT_SIZE;
	s->slot = skynet_calloc(s->slot_size, sizeof(*s->slot));
	s->harbor = (uint32_t)(harbor & 0xff) << HANDLE_REMOTE_SHIFT;
	s->handle_index = 1;
	HANDLES = s;
}

void
skynet_handle_exit(void) {
	struct handle_storage *s = HANDLES;
	if (s == NULL)
		return;
	for (int i = 0; i < s->name_count; i++)
		skynet_free(s->name[i].name);
	skynet_free(s->name);
	skynet_free(s->slot);
	rwlock_destroy(&s->lock);
	skynet_free(s);
	HANDLES = NULL;
}
