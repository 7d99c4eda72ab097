/*
 * The config keys of the framework and the check of a loaded config.
 *
 * KEYS is the one list of the keys that the C and Lua code of the framework
 * reads. `make docs-check` (docs/tools/check.lua) fails when it differs from
 * the keys the code reads (docs/tools/api.lua --config) or when a key has no
 * row in docs/config.md, so the list cannot drift from the code or the docs.
 *
 * At boot, every other key of the config is reported once on stderr, with
 * the nearest known key when it is close enough to be a typo. A game
 * declares its own keys in config_keys ("world_size, reward_cs"); those are
 * not reported. Warnings never stop the boot.
 *
 * SKYNET_ONLY lists the keys that skynet's own configs carry and this
 * framework accepts without reading them: `root` (a variable the paths are
 * built from) and the harbor keys `master` and `address` (multi-node mode,
 * which this build lacks; with harbor = 0 skynet ignores them too). A skynet
 * config boots here without a warning about them.
 */

#include "skynet_keys.h"
#include "skynet.h"
#include "skynet_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEYS_MAX_LEN 64 // longer names get no suggestion

/* Sorted; check.lua reads the string literals between the braces. */
static const char *const KEYS[] = {
    "bootstrap",
    "budget",
    "certfile",
    "cluster",
    "codecache_strip",
    "config_keys",
    "cpath",
    "daemon",
    "enablessl",
    "harbor",
    "keyfile",
    "logger",
    "logpath",
    "logservice",
    "lua_cpath",
    "lua_path",
    "lualoader",
    "luaservice",
    "malloc_trim",
    "metrics_address",
    "metrics_port",
    "metrics_series_max",
    "metrics_top",
    "preload",
    "priority_lane",
    "profile",
    "profile_web",
    "reminder_attempts",
    "reminder_lease",
    "reminder_store",
    "reminder_sync",
    "reminder_timeout",
    "reminder_window",
    "snax",
    "snax_interface_g",
    "snax_loader",
    "socket_backlog",
    "socket_flow_high_bytes",
    "socket_flow_high_msgs",
    "socket_output_limit",
    "standalone",
    "start",
    "thread",
    "timer",
    "tombstone_dir",
    "trace_lines",
    "trace_name",
    "trace_output",
    "trace_sample",
    "trace_spans",
};

#define KEYS_COUNT (sizeof(KEYS) / sizeof(KEYS[0]))

/* Sorted; kept out of KEYS, which holds exactly the keys the code reads. */
static const char *const SKYNET_ONLY[] = {
    "address",
    "master",
    "root",
};

#define SKYNET_ONLY_COUNT (sizeof(SKYNET_ONLY) / sizeof(SKYNET_ONLY[0]))

static bool
is_listed(const char *const *list, size_t n, const char *key) {
	for (size_t i = 0; i < n; i++) {
		if (strcmp(list[i], key) == 0)
			return true;
	}
	return false;
}

bool
skynet_keys_is_known(const char *key) {
	return is_listed(KEYS, KEYS_COUNT, key) || is_listed(SKYNET_ONLY, SKYNET_ONLY_COUNT, key);
}

static size_t
min3(size_t a, size_t b, size_t c) {
	size_t m = a < b ? a : b;
	return m < c ? m : c;
}

/*
 * Optimal string alignment distance: insertions, deletions, substitutions
 * and swaps of two neighbouring characters each cost 1. Three rows of the
 * usual table; both names are at most KEYS_MAX_LEN long.
 */
static size_t
edit_distance(const char *a, size_t na, const char *b, size_t nb) {
	size_t rows[3][KEYS_MAX_LEN + 1];
	size_t *before = rows[0], *prev = rows[1], *cur = rows[2];
	for (size_t j = 0; j <= nb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= na; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= nb; j++) {
			size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
			cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    before[j - 2] + 1 < cur[j])
				cur[j] = before[j - 2] + 1;
		}
		size_t *t = before;
		before = prev;
		prev = cur;
		cur = t;
	}
	return prev[nb];
}

const char *
skynet_keys_suggest(const char *key) {
	size_t nkey = strlen(key);
	if (nkey > KEYS_MAX_LEN)
		return NULL;
	const char *best = NULL;
	size_t best_d = 3; // suggest at most 2 edits away
	for (size_t i = 0; i < KEYS_COUNT; i++) {
		size_t nknown = strlen(KEYS[i]);
		size_t d = edit_distance(key, nkey, KEYS[i], nknown);
		size_t longer = nkey > nknown ? nkey : nknown;
		if (d < best_d && d * 3 <= longer) {
			best = KEYS[i];
			best_d = d;
		}
	}
	return best;
}

bool
skynet_keys_is_declared(const char *declared, const char *key) {
	static const char SEPARATORS[] = ", \t\n";
	size_t nkey = strlen(key);
	const char *p = declared;
	while (p != NULL && *p != '\0') {
		p += strspn(p, SEPARATORS);
		size_t n = strcspn(p, SEPARATORS);
		if (n == nkey && n > 0 && memcmp(p, key, n) == 0)
			return true;
		p += n;
	}
	return false;
}

static int
compare_names(const void *a, const void *b) {
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void
warn_unknown(const char *key) {
	const char *near = skynet_keys_suggest(key);
	if (near != NULL) {
		fprintf(stderr, "skynet: config: unknown key \"%s\" (did you mean \"%s\"?)\n", key, near);
	} else {
		fprintf(stderr,
		        "skynet: config: unknown key \"%s\" (the framework does not read it; "
		        "list your own keys in config_keys)\n",
		        key);
	}
}

int
skynet_keys_check(void) {
	size_t n = skynet_env_keys(NULL, 0);
	const char **keys = skynet_malloc((n + 1) * sizeof(*keys));
	size_t got = skynet_env_keys(keys, n);
	if (got < n)
		n = got;
	qsort(keys, n, sizeof(*keys), compare_names);
	const char *declared = skynet_getenv("config_keys");
	int warned = 0;
	for (size_t i = 0; i < n; i++) {
		if (skynet_keys_is_known(keys[i]) || skynet_keys_is_declared(declared, keys[i]))
			continue;
		warn_unknown(keys[i]);
		warned++;
	}
	skynet_free(keys);
	return warned;
}
