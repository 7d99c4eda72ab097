#include "skynet_malloc.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
out_of_memory(size_t sz) {
	fprintf(stderr, "fatal: malloc: out of memory size=%zu\n", sz);
	abort();
}

void *
skynet_malloc(size_t sz) {
	void *p = malloc(sz ? sz : 1);
	if (p == NULL)
		out_of_memory(sz);
	return p;
}

void *
skynet_calloc(size_t nmemb, size_t size) {
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
	if (p == NULL)
		out_of_memory(nmemb * size);
	return p;
}

void *
skynet_realloc(void *ptr, size_t size) {
	void *p = realloc(ptr, size ? size : 1);
	if (p == NULL)
		out_of_memory(size);
	return p;
}

void
skynet_free(void *ptr) {
	free(ptr);
}

size_t
skynet_malloc_usable(void *p) {
	return malloc_usable_size(p);
}

char *
skynet_strdup(const char *str) {
	size_t sz = strlen(str);
	char *ret = skynet_malloc(sz + 1);
	memcpy(ret, str, sz + 1);
	return ret;
}

void *
skynet_lalloc(void *ptr, size_t osize, size_t nsize) {
	(void)osize;
	if (nsize == 0) {
		free(ptr);
		return NULL;
	}
	return skynet_realloc(ptr, nsize);
}
