#ifndef SKYNET_FUZZ_H
#define SKYNET_FUZZ_H

/*
 * Helpers shared by the libFuzzer targets in test/fuzz/ (built and run by
 * `make fuzz`, see test/fuzz/run.sh).
 *
 * FUZZ_CHECK states a property of the code under test. A broken property
 * prints its file, line and text and aborts, so libFuzzer records the input
 * as a crash exactly as it does for a sanitizer report.
 *
 * struct fuzz_input reads the fuzzer's bytes as a little program: an
 * operation byte, then its arguments. Past the end every read yields 0, so
 * each input, however short, means something.
 */

#include "skynet_malloc.h"

#include <lua.h>
#include <sanitizer/asan_interface.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_CHECK(cond)                                                                           \
	do {                                                                                           \
		if (!(cond)) {                                                                             \
			fprintf(stderr, "%s:%d: fuzz property broken: %s\n", __FILE__, __LINE__, #cond);       \
			abort();                                                                               \
		}                                                                                          \
	} while (0)

struct fuzz_input {
	const uint8_t *p; // borrowed: the fuzzer's buffer
	size_t left;
};

static inline bool
fuzz_more(const struct fuzz_input *in) {
	return in->left > 0;
}

static inline uint8_t
fuzz_byte(struct fuzz_input *in) {
	if (in->left == 0)
		return 0;
	in->left--;
	return *in->p++;
}

/* Up to n bytes (fewer at the end); *got is how many. Borrowed from the input. */
static inline const uint8_t *
fuzz_bytes(struct fuzz_input *in, size_t n, size_t *got) {
	if (n > in->left)
		n = in->left;
	const uint8_t *p = in->p;
	in->p += n;
	in->left -= n;
	*got = n;
	return p;
}

/*
 * A lua_State whose memory comes from one arena, emptied when the state is
 * closed. Creating a state with the system allocator costs about as much as
 * running a typical input, and a state kept across inputs would hide leaks
 * (libFuzzer blames a run that frees less than it allocates). With the arena
 * only the code under test uses malloc, so leaks stay visible. Blocks are
 * separated by poisoned red zones and a freed or moved block is poisoned, so
 * ASan still sees overflows and use after free inside Lua objects. A request
 * past FUZZ_ARENA_BYTES fails as an ordinary Lua memory error.
 */
#define FUZZ_ARENA_BYTES (64u << 20)
#define FUZZ_ARENA_ALIGN 16

static struct {
	char *base; // owned: FUZZ_ARENA_BYTES, allocated once
	size_t used;
	char *last; // the newest block, which can grow in place
} FUZZ_ARENA;

static void *
fuzz_arena_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
	(void)ud;
	if (nsize == 0) {
		if (ptr != NULL)
			ASAN_POISON_MEMORY_REGION(ptr, osize);
		return NULL;
	}
	if (ptr != NULL && ptr == FUZZ_ARENA.last &&
	    (size_t)((char *)ptr - FUZZ_ARENA.base) + nsize <= FUZZ_ARENA_BYTES - FUZZ_ARENA_ALIGN) {
		ASAN_UNPOISON_MEMORY_REGION(ptr, nsize);
		if (nsize < osize)
			ASAN_POISON_MEMORY_REGION((char *)ptr + nsize, osize - nsize);
		FUZZ_ARENA.used = (size_t)((char *)ptr - FUZZ_ARENA.base) + nsize;
		FUZZ_ARENA.used =
		    (FUZZ_ARENA.used + FUZZ_ARENA_ALIGN - 1) & ~(size_t)(FUZZ_ARENA_ALIGN - 1);
		FUZZ_ARENA.used += FUZZ_ARENA_ALIGN; // red zone
		return ptr;
	}
	size_t need = (nsize + FUZZ_ARENA_ALIGN - 1) & ~(size_t)(FUZZ_ARENA_ALIGN - 1);
	if (need > FUZZ_ARENA_BYTES - FUZZ_ARENA.used - FUZZ_ARENA_ALIGN)
		return NULL;
	char *p = FUZZ_ARENA.base + FUZZ_ARENA.used;
	FUZZ_ARENA.used += need + FUZZ_ARENA_ALIGN;
	FUZZ_ARENA.last = p;
	ASAN_UNPOISON_MEMORY_REGION(p, nsize);
	if (ptr != NULL) {
		memcpy(p, ptr, osize < nsize ? osize : nsize);
		ASAN_POISON_MEMORY_REGION(ptr, osize);
	}
	return p;
}

/* A new state on the emptied arena. Only one exists at a time. */
static inline lua_State *
fuzz_lua_open(void) {
	if (FUZZ_ARENA.base == NULL) {
		FUZZ_ARENA.base = skynet_malloc(FUZZ_ARENA_BYTES);
		FUZZ_ARENA.used = FUZZ_ARENA_BYTES;
	}
	ASAN_POISON_MEMORY_REGION(FUZZ_ARENA.base, FUZZ_ARENA.used); // the rest still is
	FUZZ_ARENA.used = 0;
	FUZZ_ARENA.last = NULL;
	lua_State *L = lua_newstate(fuzz_arena_alloc, NULL);
	FUZZ_CHECK(L != NULL);
	return L;
}

#endif
