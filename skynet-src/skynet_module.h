#ifndef SKYNET_MODULE_H
#define SKYNET_MODULE_H

/*
 * Internal: skynet-src/ (and its tests) only, never service-src/ or lualib-src/.
 *
 * C service modules: found along the cpath patterns ("./cservice/?.so"),
 * opened once and cached, or registered statically (tests, built-ins).
 */

#include "skynet.h"

typedef void *(*skynet_dl_create)(void);
typedef int (*skynet_dl_init)(void *inst, struct skynet_context *, const char *parm);
typedef void (*skynet_dl_release)(void *inst);
typedef void (*skynet_dl_signal)(void *inst, int signal);

struct skynet_module {
	const char *name; // borrowed from the loader (lives for the process)
	void *module;     // dlopen handle, NULL for static modules
	skynet_dl_create create;
	skynet_dl_init init;
	skynet_dl_release release;
	skynet_dl_signal signal;
};

/*
 * Set up the search path (';'-separated patterns, each with one '?'). A
 * second call only replaces the path, keeping modules already registered.
 */
void skynet_module_init(const char *path);
void skynet_module_exit(void);
/* The module named name, loading it on first use; NULL (reported) when missing. */
struct skynet_module *skynet_module_query(const char *name);
/* Register a module built into the binary (its name and functions are copied). */
void skynet_module_insert(const struct skynet_module *mod);

void *skynet_module_instance_create(struct skynet_module *m);
int skynet_module_instance_init(struct skynet_module *m, void *inst, struct skynet_context *ctx,
                                const char *parm);
void skynet_module_instance_release(struct skynet_module *m, void *inst);
void skynet_module_instance_signal(struct skynet_module *m, void *inst, int signal);

#endif
