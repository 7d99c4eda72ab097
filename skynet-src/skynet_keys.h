#ifndef SKYNET_KEYS_H
#define SKYNET_KEYS_H

/*
 * Internal: skynet-src/ (and its tests) only.
 *
 * The config keys the framework reads, and the boot-time warning about any
 * other key of a config (a typo would otherwise run on the default silently).
 */

#include <stdbool.h>
#include <stddef.h>

/*
 * True when the framework reads key (a row of docs/config.md), or when key is
 * one of skynet's own config keys accepted here without being read (root,
 * master, address). Thread-safe.
 */
bool skynet_keys_is_known(const char *key);

/*
 * The known key nearest to key (edit distance, a swap of two neighbouring
 * letters counting as one edit) when it is close enough to be a typo: at most
 * 2 edits and at most a third of the longer name. Otherwise NULL. The result
 * is a static string. Thread-safe.
 */
const char *skynet_keys_suggest(const char *key);

/*
 * True when declared names key. declared is the value of the config key
 * config_keys (names separated by commas or blanks), or NULL. Thread-safe.
 */
bool skynet_keys_is_declared(const char *declared, const char *key);

/*
 * Print one line on stderr for each key of the env that the framework does
 * not read and config_keys does not declare, with the nearest known key when
 * there is one. Call it right after the config is loaded, before the logger
 * exists. Returns the number of lines printed; never fails the boot.
 */
int skynet_keys_check(void);

#endif
