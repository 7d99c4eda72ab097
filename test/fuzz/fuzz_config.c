/*
 * Fuzz target "config": skynet_config_load (skynet-src/skynet_config.c) on
 * arbitrary config text.
 *
 * The input is the text of the main config file; whatever follows its first
 * NUL byte becomes a second file, "inc", in the same directory, so that
 * include "inc" (and include chains, include loops) get fuzzed too. Both are
 * written before each run to a private directory, in /dev/shm when there is
 * one (a disk-backed directory makes the file writes the bulk of the run
 * time), else under $TMPDIR; the env is emptied, so every input starts from
 * the same state. $FUZZ_HOME is set, for $NAME substitution to find.
 *
 * Properties: the loader returns 0 or SKYNET_EINVAL, with a non-empty
 * one-line message on failure; it never hangs (libFuzzer's -timeout) and
 * never reads or leaks memory it should not (ASan, LeakSanitizer).
 *
 * The loader is included directly so that its instruction budget can be
 * lowered: a looping input then costs a few milliseconds, not tens.
 *
 * Known limit, kept out of this target: the budget counts VM instructions,
 * so it cannot stop a string function that runs long inside C. Two such
 * configs hang the loader: (""):rep(3^25) (Lua 5.4.4 copies an empty string
 * 3^25 times) and a backtracking pattern, ("a"):rep(28):find(("a*"):rep(28)
 * .. "b"). The target therefore opens the string library through
 * fuzz_open_string, which leaves out the pattern functions (find, match,
 * gmatch, gsub) and makes rep of an empty string return "" at once.
 */
#define luaopen_string fuzz_open_string
#include "../../skynet-src/skynet_config.c"
#undef luaopen_string

#include "skynet.h"
#include "skynet_env.h"

#include "fuzz.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FUZZ_CONFIG_STEPS 200000 // the loader's instruction budget here

static char DIR_PATH[PATH_MAX]; // the private directory, "" until created
static char MAIN_PATH[PATH_MAX];
static char INC_PATH[PATH_MAX];

static void
remove_dir(void) {
	(void)unlink(MAIN_PATH); // may not exist: nothing to do
	(void)unlink(INC_PATH);
	(void)rmdir(DIR_PATH);
}

static void
make_dir(void) {
	const char *tmp = getenv("TMPDIR");
	if (access("/dev/shm", W_OK) == 0)
		tmp = "/dev/shm";
	snprintf(DIR_PATH, sizeof(DIR_PATH), "%s/fuzz_config.XXXXXX", tmp ? tmp : "/tmp");
	FUZZ_CHECK(mkdtemp(DIR_PATH) != NULL);
	snprintf(MAIN_PATH, sizeof(MAIN_PATH), "%s/main", DIR_PATH);
	snprintf(INC_PATH, sizeof(INC_PATH), "%s/inc", DIR_PATH);
	FUZZ_CHECK(setenv("FUZZ_HOME", DIR_PATH, 1) == 0);
	atexit(remove_dir);
	CONFIG_MAX_STEPS = FUZZ_CONFIG_STEPS;
}

static void
write_file(const char *path, const uint8_t *p, size_t n) {
	FILE *f = fopen(path, "wb");
	FUZZ_CHECK(f != NULL);
	FUZZ_CHECK(fwrite(p, 1, n, f) == n);
	FUZZ_CHECK(fclose(f) == 0);
}

int luaopen_string(lua_State *L); // the real one (lualib.h named the stand-in)

/* string.rep, except that an empty result comes back at once. Upvalue 1: the real rep. */
static int
bounded_rep(lua_State *L) {
	size_t len = 0, sep_len = 0;
	luaL_checklstring(L, 1, &len);
	lua_Integer n = luaL_checkinteger(L, 2);
	luaL_optlstring(L, 3, "", &sep_len);
	if (n <= 0 || len + sep_len == 0) {
		lua_pushliteral(L, "");
		return 1;
	}
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	lua_call(L, lua_gettop(L) - 1, 1);
	return 1;
}

/* The string library the loader opens here (see the top comment). */
int
fuzz_open_string(lua_State *L) {
	luaopen_string(L);
	static const char *const unbounded[] = {"find", "match", "gmatch", "gsub"};
	for (size_t i = 0; i < sizeof(unbounded) / sizeof(unbounded[0]); i++) {
		lua_pushnil(L);
		lua_setfield(L, -2, unbounded[i]);
	}
	lua_getfield(L, -1, "rep");
	lua_pushcclosure(L, bounded_rep, 1);
	lua_setfield(L, -2, "rep");
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	if (DIR_PATH[0] == '\0')
		make_dir();
	const uint8_t *nul = memchr(data, '\0', size);
	size_t main_len = nul ? (size_t)(nul - data) : size;
	write_file(MAIN_PATH, data, main_len);
	if (nul != NULL)
		write_file(INC_PATH, nul + 1, size - main_len - 1);
	else
		(void)unlink(INC_PATH); // may not exist: nothing to do

	skynet_env_exit();
	skynet_env_init();
	char err[256];
	err[0] = '\0';
	int ret = skynet_config_load(MAIN_PATH, err, sizeof(err));
	FUZZ_CHECK(ret == 0 || ret == SKYNET_EINVAL);
	if (ret != 0)
		FUZZ_CHECK(err[0] != '\0' && strchr(err, '\n') == NULL);
	skynet_env_exit();
	return 0;
}
