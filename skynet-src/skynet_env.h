#ifndef SKYNET_ENV_H
#define SKYNET_ENV_H

/*
 * Internal: skynet-src/ (and its tests) only, never service-src/ or lualib-src/.
 *
 * The process-wide string -> string environment (config keys, setenv).
 * Keys are write-once. Thread-safe.
 */

#include <stdbool.h>
#include <stddef.h>

void skynet_env_init(void);
void skynet_env_exit(void);
/* Value of key, borrowed until the process exits (values never change), or NULL. */
const char *skynet_getenv(const char *key);
/* Set key once: 0, or SKYNET_EINVAL when the key exists already. Copies both. */
int skynet_setenv(const char *key, const char *value);
/*
 * Store up to max keys of the env in keys (borrowed until skynet_env_exit, in no particular
 * order) and return how many keys the env holds, which may exceed max. Thread-safe.
 */
size_t skynet_env_keys(const char **keys, size_t max);

/* Integer value of key, or opt written back into the env when absent. */
int skynet_optint(const char *key, int opt);
/* Boolean ("true"/"false"), or opt written back when absent. */
bool skynet_optboolean(const char *key, bool opt);
/* String value, or opt (written back unless NULL) when absent. Borrowed. */
const char *skynet_optstring(const char *key, const char *opt);

/*
 * Load a config file into the env: Lua syntax, include "file",
 * $NAME expansion. Returns 0, or SKYNET_EINVAL with a one-line message
 * (no newline) in err.
 */
int skynet_config_load(const char *path, char *err, size_t err_len);

#endif
