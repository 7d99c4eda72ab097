/*
 * The process-wide environment: a string -> string table with write-once keys.
 *
 * Data structure: a chained hash table. Each entry is one allocation holding
 * the key and the value back to back, so a value never moves once written;
 * growing the table only relinks entries. That is what lets skynet_getenv
 * hand out borrowed pointers that stay valid until skynet_env_exit.
 *
 * Locking: one reader-writer lock (ENV.lock) covers every field of ENV.
 * Lookups take it for reading, inserts and init/exit for writing. The lock is
 * statically initialised, so skynet_getenv before skynet_env_init simply finds
 * nothing, and init/exit may be repeated (tests reset the env between cases).
 *
 * The opt* helpers read a key and, when it is absent, insert the default in
 * the same critical section (env_insert), so two threads asking for the same
 * absent key agree on one value. A present value that does not parse
 * (optint: not a decimal int; optboolean: neither "true" nor "false") yields
 * the default and one "warn: env: ..." line on stderr: these helpers run at
 * startup, before the logger exists.
 */

#include "skynet_env.h"
#include "skynet.h"
#include "rwlock.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ENV_INITIAL_SLOTS 64

struct env_entry {
	struct env_entry *next; // owned by the chain it sits in
	uint32_t hash;
	const char *value; // points into data, after the key's NUL
	char data[];       // "key\0value\0"
};

static struct env_table {
	struct rwlock lock;
	struct env_entry **slot; // owned; NULL before init and after exit
	size_t slot_count;       // a power of two
	size_t count;
} ENV = {.lock = {PTHREAD_RWLOCK_INITIALIZER}};

/* FNV-1a: the keys are short config names, nothing adversarial. */
static uint32_t
key_hash(const char *key) {
	uint32_t h = 2166136261u;
	for (const unsigned char *p = (const unsigned char *)key; *p; p++)
		h = (h ^ *p) * 16777619u;
	return h;
}

/* Caller holds ENV.lock (read or write). */
static struct env_entry *
env_find(const char *key, uint32_t hash) {
	if (ENV.slot == NULL)
		return NULL;
	struct env_entry *e = ENV.slot[hash & (ENV.slot_count - 1)];
	while (e != NULL && (e->hash != hash || strcmp(e->data, key) != 0))
		e = e->next;
	return e;
}

/* Caller holds ENV.lock for writing and ENV.slot is allocated. */
static void
env_grow(void) {
	size_t n = ENV.slot_count * 2;
	struct env_entry **slot = skynet_calloc(n, sizeof(*slot));
	for (size_t i = 0; i < ENV.slot_count; i++) {
		struct env_entry *e = ENV.slot[i];
		while (e != NULL) {
			struct env_entry *next = e->next;
			e->next = slot[e->hash & (n - 1)];
			slot[e->hash & (n - 1)] = e;
			e = next;
		}
	}
	skynet_free(ENV.slot);
	ENV.slot = slot;
	ENV.slot_count = n;
}

/* Caller holds ENV.lock for writing. */
static void
env_alloc_slots(void) {
	if (ENV.slot != NULL)
		return;
	ENV.slot_count = ENV_INITIAL_SLOTS;
	ENV.slot = skynet_calloc(ENV.slot_count, sizeof(*ENV.slot));
	ENV.count = 0;
}

/*
 * Insert key = value unless key exists. Returns the value now stored under
 * key (borrowed until skynet_env_exit); *inserted tells which case it was.
 */
static const char *
env_insert(const char *key, const char *value, bool *inserted) {
	uint32_t hash = key_hash(key);
	size_t klen = strlen(key);
	size_t vlen = strlen(value);
	rwlock_wlock(&ENV.lock);
	env_alloc_slots();
	struct env_entry *e = env_find(key, hash);
	*inserted = e == NULL;
	if (e == NULL) {
		e = skynet_malloc(sizeof(*e) + klen + vlen + 2);
		memcpy(e->data, key, klen + 1);
		memcpy(e->data + klen + 1, value, vlen + 1);
		e->value = e->data + klen + 1;
		e->hash = hash;
		if (ENV.count >= ENV.slot_count)
			env_grow();
		size_t i = hash & (ENV.slot_count - 1);
		e->next = ENV.slot[i];
		ENV.slot[i] = e;
		ENV.count++;
	}
	const char *ret = e->value;
	rwlock_wunlock(&ENV.lock);
	return ret;
}

void
skynet_env_init(void) {
	rwlock_wlock(&ENV.lock);
	env_alloc_slots();
	rwlock_wunlock(&ENV.lock);
}

void
skynet_env_exit(void) {
	rwlock_wlock(&ENV.lock);
	if (ENV.slot != NULL) {
		for (size_t i = 0; i < ENV.slot_count; i++) {
			struct env_entry *e = ENV.slot[i];
			while (e != NULL) {
				struct env_entry *next = e->next;
				skynet_free(e);
				e = next;
			}
		}
		skynet_free(ENV.slot);
		ENV.slot = NULL;
	}
	ENV.slot_count = 0;
	ENV.count = 0;
	rwlock_wunlock(&ENV.lock);
}

const char *
skynet_getenv(const char *key) {
	if (key == NULL)
		return NULL;
	uint32_t hash = key_hash(key);
	rwlock_rlock(&ENV.lock);
	struct env_entry *e = env_find(key, hash);
	const char *value = e ? e->value : NULL;
	rwlock_runlock(&ENV.lock);
	return value;
}

int
skynet_setenv(const char *key, const char *value) {
	if (key == NULL || value == NULL)
		return SKYNET_EINVAL;
	bool inserted;
	env_insert(key, value, &inserted);
	return inserted ? 0 : SKYNET_EINVAL;
}

size_t
skynet_env_keys(const char **keys, size_t max) {
	size_t n = 0;
	rwlock_rlock(&ENV.lock);
	for (size_t i = 0; ENV.slot != NULL && i < ENV.slot_count; i++) {
		for (struct env_entry *e = ENV.slot[i]; e != NULL; e = e->next) {
			if (n < max)
				keys[n] = e->data;
			n++;
		}
	}
	rwlock_runlock(&ENV.lock);
	return n;
}

/* Strict decimal int: optional sign, digits, optional surrounding blanks. */
static bool
parse_int(const char *s, int *out) {
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (end == s || errno == ERANGE || v < INT_MIN || v > INT_MAX)
		return false;
	while (*end == ' ' || *end == '\t')
		end++;
	if (*end != '\0')
		return false;
	*out = (int)v;
	return true;
}

int
skynet_optint(const char *key, int opt) {
	const char *s = skynet_getenv(key);
	if (s == NULL) {
		char buf[16];
		snprintf(buf, sizeof(buf), "%d", opt);
		bool inserted;
		s = env_insert(key, buf, &inserted);
		if (inserted)
			return opt;
		/* Another thread wrote key first: fall through and use its value. */
	}
	int v;
	if (parse_int(s, &v))
		return v;
	fprintf(stderr, "warn: env: not a decimal integer key=%s value=%s default=%d\n", key, s, opt);
	return opt;
}

bool
skynet_optboolean(const char *key, bool opt) {
	bool inserted;
	const char *s = skynet_getenv(key);
	if (s == NULL)
		s = env_insert(key, opt ? "true" : "false", &inserted);
	if (strcmp(s, "true") == 0)
		return true;
	if (strcmp(s, "false") == 0)
		return false;
	fprintf(stderr, "warn: env: not a boolean key=%s value=%s default=%s\n", key, s,
	        opt ? "true" : "false");
	return opt;
}

const char *
skynet_optstring(const char *key, const char *opt) {
	const char *s = skynet_getenv(key);
	if (s != NULL || opt == NULL)
		return s;
	bool inserted;
	return env_insert(key, opt, &inserted);
}
