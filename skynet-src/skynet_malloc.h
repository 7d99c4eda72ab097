#ifndef SKYNET_MALLOC_H
#define SKYNET_MALLOC_H

/*
 * Public header (the set is listed at the top of skynet.h).
 *
 * The project's allocator. These never return NULL: running out of memory
 * prints a line to stderr and aborts, so callers never check. Memory from
 * one of them is freed with skynet_free. Thread-safe.
 */

#include <stddef.h>

void *skynet_malloc(size_t sz);
void *skynet_calloc(size_t nmemb, size_t size);
void *skynet_realloc(void *ptr, size_t size);
void skynet_free(void *ptr);
/* The bytes the block p (from one of these, not NULL) can hold: at least
 * the size asked for; what lies past it may be written by its owner. */
size_t skynet_malloc_usable(void *p);
/* A copy of str (NUL-terminated) that the caller owns. */
char *skynet_strdup(const char *str);
/* lua_Alloc-shaped: nsize 0 frees and returns NULL; otherwise realloc. */
void *skynet_lalloc(void *ptr, size_t osize, size_t nsize);

#endif
