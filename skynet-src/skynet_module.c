/*
 * C module loader.
 *
 * Modules are found along the cpath: ';'-separated templates, each holding
 * one '?' that the module name replaces. The first candidate dlopen accepts
 * wins; its NAME_create/_init/_release/_signal symbols are resolved (the
 * prefix is the part of NAME after its last '.'), _init being required.
 * Loaded and statically inserted modules are cached for the process (at
 * most MAX_MODULE_TYPE of them).
 *
 * Locking: a mutex (not a spinlock: dlopen blocks) serializes loading and
 * inserting. Lookups are lock-free reads of entries published before count
 * was raised (count is read with acquire, paired with the release store in
 * publish); a load happens under the mutex, so two threads never dlopen the
 * same module twice.
 */
#include "skynet_module.h"

#include "skynet.h"
#include "atomic.h"
#include "skynet_cond.h"

#include <assert.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MODULE_TYPE 32

struct modules {
	struct skynet_cond lock; // its mutex covers loading and m[count] publication
	ATOM_INT count;
	const char *path; // owned
	struct skynet_module m[MAX_MODULE_TYPE];
};

static struct modules *MODULES = NULL;

static void *
try_open(struct modules *m, const char *name) {
	size_t name_size = strlen(name);
	size_t path_size = strlen(m->path);
	char *tmp = skynet_malloc(name_size + path_size + 1);
	void *dl = NULL;
	const char *path = m->path;
	char errors[1024] = "";
	size_t elen = 0;
	while (path && *path) {
		while (*path == ';')
			path++;
		if (*path == '\0')
			break;
		const char *end = strchr(path, ';');
		size_t len = end ? (size_t)(end - path) : strlen(path);
		const char *q = memchr(path, '?', len);
		if (q == NULL) {
			fprintf(stderr, "Invalid C service path\n");
			exit(1);
		}
		size_t before = q - path;
		memcpy(tmp, path, before);
		memcpy(tmp + before, name, name_size);
		memcpy(tmp + before + name_size, q + 1, len - before - 1);
		tmp[len - 1 + name_size] = '\0';
		dl = dlopen(tmp, RTLD_NOW | RTLD_GLOBAL);
		if (dl)
			break;
		const char *err = dlerror();
		int w = snprintf(errors + elen, sizeof(errors) - elen, "%s%s", elen ? "; " : "",
		                 err ? err : tmp);
		if (w > 0 && (size_t)w < sizeof(errors) - elen)
			elen += w;
		path = end;
	}
	if (dl == NULL)
		fprintf(stderr, "try open %s failed : %s\n", name, errors);
	skynet_free(tmp);
	return dl;
}

static struct skynet_module *
query(struct modules *m, const char *name) {
	int n = ATOM_LOAD_ACQUIRE(&m->count); // pairs with the release store in publish()
	for (int i = 0; i < n; i++) {
		if (strcmp(m->m[i].name, name) == 0)
			return &m->m[i];
	}
	return NULL;
}

static void *
get_api(struct skynet_module *mod, const char *suffix) {
	const char *name = mod->name;
	const char *dot = strrchr(name, '.');
	if (dot)
		name = dot + 1;
	char tmp[128];
	int n = snprintf(tmp, sizeof(tmp), "%s%s", name, suffix);
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return NULL;
	return dlsym(mod->module, tmp);
}

static int
open_sym(struct skynet_module *mod) {
	mod->create = (skynet_dl_create)get_api(mod, "_create");
	mod->init = (skynet_dl_init)get_api(mod, "_init");
	mod->release = (skynet_dl_release)get_api(mod, "_release");
	mod->signal = (skynet_dl_signal)get_api(mod, "_signal");
	return mod->init == NULL;
}

/* Caller holds the lock; count < MAX_MODULE_TYPE. */
static struct skynet_module *
publish(struct modules *m, const struct skynet_module *mod) {
	int n = ATOM_LOAD_RELAXED(&m->count);
	m->m[n] = *mod;
	m->m[n].name = skynet_strdup(mod->name);
	ATOM_STORE_RELEASE(&m->count, n + 1); // pairs with the acquire load in query()
	return &m->m[n];
}

struct skynet_module *
skynet_module_query(const char *name) {
	struct modules *m = MODULES;
	struct skynet_module *result = query(m, name);
	if (result)
		return result;
	skynet_cond_lock(&m->lock);
	result = query(m, name); // another thread may have loaded it
	if (result == NULL && ATOM_LOAD_RELAXED(&m->count) < MAX_MODULE_TYPE) {
		void *dl = try_open(m, name);
		if (dl) {
			struct skynet_module mod = {.name = name, .module = dl};
			if (open_sym(&mod) == 0) {
				result = publish(m, &mod);
			} else {
				fprintf(stderr, "error: module: symbol %s_init missing in module %s\n",
				        strrchr(name, '.') ? strrchr(name, '.') + 1 : name, name);
				(void)dlclose(dl); // nothing to do on failure
			}
		}
	} else if (result == NULL) {
		fprintf(stderr, "error: module: too many modules, can't load %s\n", name);
	}
	skynet_cond_unlock(&m->lock);
	return result;
}

void
skynet_module_insert(const struct skynet_module *mod) {
	struct modules *m = MODULES;
	skynet_cond_lock(&m->lock);
	assert(query(m, mod->name) == NULL && ATOM_LOAD_RELAXED(&m->count) < MAX_MODULE_TYPE);
	publish(m, mod);
	skynet_cond_unlock(&m->lock);
}

void *
skynet_module_instance_create(struct skynet_module *m) {
	if (m->create)
		return m->create();
	return (void *)(intptr_t)(~0);
}

int
skynet_module_instance_init(struct skynet_module *m, void *inst, struct skynet_context *ctx,
                            const char *parm) {
	return m->init(inst, ctx, parm);
}

void
skynet_module_instance_release(struct skynet_module *m, void *inst) {
	if (m->release)
		m->release(inst);
}

void
skynet_module_instance_signal(struct skynet_module *m, void *inst, int signal) {
	if (m->signal)
		m->signal(inst, signal);
}

void
skynet_module_init(const char *path) {
	if (MODULES != NULL) {
		// Already set up (tests insert static modules first): only the path changes.
		skynet_free((void *)MODULES->path);
		MODULES->path = skynet_strdup(path);
		return;
	}
	struct modules *m = skynet_calloc(1, sizeof(*m));
	ATOM_INIT(&m->count, 0);
	m->path = skynet_strdup(path);
	skynet_cond_init(&m->lock);
	MODULES = m;
}

void
skynet_module_exit(void) {
	struct modules *m = MODULES;
	if (m == NULL)
		return;
	int n = ATOM_LOAD(&m->count);
	for (int i = 0; i < n; i++)
		skynet_free((void *)m->m[i].name);
	// Loaded libraries stay mapped: code of theirs may still be on a stack (atexit, TLS).
	skynet_free((void *)m->path);
	skynet_cond_destroy(&m->lock);
	skynet_free(m);
	MODULES = NULL;
}
