/*
 * Unit tests for the env table (skynet_env.c), the config loader
 * (skynet_config.c) and the list of known keys (skynet_keys.c). Config files are written under a fresh mkdtemp
 * directory that is removed at the end.
 */

#include "skynet.h"
#include "skynet_env.h"
#include "skynet_keys.h"
#include "tt.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char TMP_DIR[256]; // the temporary directory of this run

/* Write content to DIR/rel, creating one missing parent directory level. */
static void
put(const char *rel, const char *content) {
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", TMP_DIR, rel);
	char *slash = strrchr(path, '/');
	*slash = '\0';
	(void)mkdir(path, 0700); // exists already: fine
	*slash = '/';
	FILE *f = fopen(path, "w");
	if (f == NULL) {
		perror(path);
		exit(2);
	}
	fputs(content, f);
	fclose(f);
}

static const char *
at(const char *rel) {
	static char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", TMP_DIR, rel);
	return path;
}

static void
env_reset(void) {
	skynet_env_exit();
	skynet_env_init();
}

static bool
env_is(const char *key, const char *want) {
	const char *v = skynet_getenv(key);
	if (v == NULL || want == NULL)
		return v == want;
	return strcmp(v, want) == 0;
}

static bool
has(const char *err, const char *part) {
	return strstr(err, part) != NULL;
}

static void
config_plain_keys_and_types(int *failed) {
	env_reset();
	put("plain.lua", "thread = 4\n"
	                 "name = \"node1\"\n"
	                 "ratio = 1.5\n"
	                 "half = 16 / 2\n"
	                 "big = 1e15\n"
	                 "neg = -3\n"
	                 "flag = true\n"
	                 "off = false\n"
	                 "nothing = nil\n"
	                 "-- a comment\n");
	char err[256] = "";
	TT_CHECK(skynet_config_load(at("plain.lua"), err, sizeof(err)) == 0);
	TT_CHECK(env_is("thread", "4"));
	TT_CHECK(env_is("name", "node1"));
	TT_CHECK(env_is("ratio", "1.5"));
	TT_CHECK(env_is("half", "8"));
	TT_CHECK(env_is("big", "1000000000000000"));
	TT_CHECK(env_is("neg", "-3"));
	TT_CHECK(env_is("flag", "true"));
	TT_CHECK(env_is("off", "false"));
	TT_CHECK(env_is("nothing", NULL));
	TT_CHECK(env_is("include", NULL));
	TT_CHECK(err[0] == '\0');
}

static void
config_expressions_use_earlier_keys(int *failed) {
	env_reset();
	put("expr.lua", "root = \"./\"\n"
	                "luaservice = root .. \"service/?.lua;\" .. root .. \"test/?.lua\"\n"
	                "thread = 2\n"
	                "workers = thread * 3\n"
	                "upper = (\"abc\"):upper()\n"
	                "local hidden = 5\n"
	                "shown = hidden + 1\n");
	char err[256] = "";
	TT_CHECK(skynet_config_load(at("expr.lua"), err, sizeof(err)) == 0);
	TT_CHECK(env_is("luaservice", "./service/?.lua;./test/?.lua"));
	TT_CHECK(env_is("workers", "6"));
	TT_CHECK(env_is("upper", "ABC"));
	TT_CHECK(env_is("hidden", NULL));
	TT_CHECK(env_is("shown", "6"));
}

static void
config_include_relative_nested(int *failed) {
	env_reset();
	put("inc/main.lua", "root = \"r\"\n"
	                    "include \"sub/a.lua\"\n"
	                    "include \"d.lua\"\n"
	                    "after = a .. b .. c .. d\n");
	put("inc/sub/a.lua", "a = root .. \"A\"\ninclude \"b.lua\"\n");
	put("inc/sub/b.lua", "b = \"B\"\ninclude \"../c.lua\"\n");
	put("inc/c.lua", "c = \"C\"\n");
	put("inc/d.lua", "d = \"D\"\n");
	char err[256] = "";
	TT_CHECK(skynet_config_load(at("inc/main.lua"), err, sizeof(err)) == 0);
	TT_CHECK(env_is("a", "rA"));
	TT_CHECK(env_is("b", "B"));
	TT_CHECK(env_is("c", "C"));
	TT_CHECK(env_is("d", "D"));
	TT_CHECK(env_is("after", "rABCD"));
	if (err[0] != '\0')
		fprintf(stderr, "  err: %s\n", err);

	/* A top-level name without a directory: includes resolve against the cwd. */
	env_reset();
	int cwd = open(".", O_RDONLY | O_DIRECTORY);
	TT_CHECK(cwd >= 0 && chdir(at("inc")) == 0);
	TT_CHECK(skynet_config_load("main.lua", err, sizeof(err)) == 0);
	TT_CHECK(env_is("after", "rABCD"));
	TT_CHECK(fchdir(cwd) == 0);
	close(cwd);
}

static void
config_include_absolute_resets_directory(int *failed) {
	env_reset();
	char text[PATH_MAX + 64];
	snprintf(text, sizeof(text), "include \"%s\"\nx = \"X\"\n", at("abs/y.lua"));
	put("rel/main.lua", text);
	put("abs/y.lua", "y = \"Y\"\ninclude \"z.lua\"\n");
	put("abs/z.lua", "z = \"Z\"\n");
	put("rel/z.lua", "z = \"wrong\"\n");
	char err[256] = "";
	TT_CHECK(skynet_config_load(at("rel/main.lua"), err, sizeof(err)) == 0);
	TT_CHECK(env_is("x", "X"));
	TT_CHECK(env_is("y", "Y"));
	TT_CHECK(env_is("z", "Z"));
}

static void
config_env_expansion(int *failed) {
	env_reset();
	setenv("SKYWHEEL_T_PORT", "8888", 1);
	setenv("SKYWHEEL_T_DIR1", "/opt/game", 1);
	put("envx.lua", "port = $SKYWHEEL_T_PORT\n"
	                "addr = \"127.0.0.1:$SKYWHEEL_T_PORT\"\n"
	                "path = '$SKYWHEEL_T_DIR1/?.lua'\n"
	                "price = \"$\"\n"
	                "odd = \"a$-b$ \"\n");
	char err[256] = "";
	TT_CHECK(skynet_config_load(at("envx.lua"), err, sizeof(err)) == 0);
	TT_CHECK(env_is("port", "8888"));
	TT_CHECK(env_is("addr", "127.0.0.1:8888"));
	TT_CHECK(env_is("path", "/opt/game/?.lua"));
	TT_CHECK(env_is("price", "$"));
	TT_CHECK(env_is("odd", "a$-b$ "));
	unsetenv("SKYWHEEL_T_PORT");
	unsetenv("SKYWHEEL_T_DIR1");
}

static void
config_env_unset_is_an_error(int *failed) {
	env_reset();
	unsetenv("SKYWHEEL_T_UNSET");
	setenv("SKYWHEEL_T_SET", "1", 1);
	put("unset.lua", "a = 1\n"
	                 "b = \"$SKYWHEEL_T_SET and $SKYWHEEL_T_UNSET\"\n");
	char err[256] = "";
	TT_CHECK(skynet_config_load(at("unset.lua"), err, sizeof(err)) == SKYNET_EINVAL);
	TT_CHECK(has(err, "os.getenv() failed: SKYWHEEL_T_UNSET"));
	TT_CHECK(has(err, "unset.lua:2:"));
	TT_CHECK(env_is("a", NULL)); // nothing is written on failure

	/* In an included file the message names that file, once. */
	put("envinc/main.lua", "a = 1\ninclude \"sub.lua\"\n");
	put("envinc/sub.lua", "-- $SKYWHEEL_T_SET\nx = $SKYWHEEL_T_UNSET\n");
	TT_CHECK(skynet_config_load(at("envinc/main.lua"), err, sizeof(err)) == SKYNET_EINVAL);
	TT_CHECK(has(err, "envinc/sub.lua:2: os.getenv() failed: SKYWHEEL_T_UNSET"));
	TT_CHECK(!has(err, "main.lua"));
	unsetenv("SKYWHEEL_T_SET");
}

static void
config_missing_file(int *failed) {
	env_reset();
	char err[256] = "";
	TT_CHECK(skynet_config_load(at("no-such.lua"), err, sizeof(err)) == SKYNET_EINVAL);
	TT_CHECK(has(err, "no-such.lua"));
	TT_CHECK(has(err, "No such file"));

	put("missinc.lua", "a = 1\ninclude \"gone.lua\"\n");
	err[0] = '\0';
	TT_CHECK(skynet_config_load(at("missinc.lua"), err, sizeof(err)) == SKYNET_EINVAL);
	TT_CHECK(has(err, "missinc.lua:2:"));
	TT_CHECK(has(err, "gone.lua"));
	TT_CHECK(env_is("a", NULL));

	TT_CHECK(skynet_config_load(NULL, err, sizeof(err)) == SKYNET_EINVAL);
	TT_CHECK(skynet_config_load(at("no-such.lua"), NULL, 0) == SKYNET_EINVAL);
}

static void
config_syntax_and_runtime_errors(int *failed) {
	env_reset();
	put("bad.lua", "a = 1\nb = = 2\n");
	char err[256] = "";
	TT_CHECK(skynet_config_load(at("bad.lua"), err, sizeof(err)) == SKYNET_EINVAL);
	TT_CHECK(has(err, "bad.lua:2:"));
	TT_CHECK(strchr(err, '\n') == NULL);

	put("sub/inner.lua", "x = 1\ny = undefined_table.field\n");
	put("outer.lua", "include \"sub/inner.lua\"\n");
	TT_CHECK(skynet_config_load(at("outer.lua"), err, sizeof(err)) == SKYNET_EINVAL);
	TT_CHECK(has(err, "inner.lua:2:"));
	TT_CHECK(has(err, "undefined_table"));

	put("multi.lua", "include \"first\\nsecond\"\n");
	TT_CHECK(skynet_config_load(at("multi.lua"), err, sizeof(err)) == SKYNET_EINVAL);
	TT_CHECK(has(err, "first second"));
	TT_CHECK(strchr(err, '\n') == NULL);

	put("binary.lua", "\x1bLua");
	TT_CHECK(skynet_config_load(at("binary.lua"), err, sizeof(err)) == SKYNET_EINVAL);
	TT_CHECK(has(err, "binary"));

	put("badinc.lua", "include(42 > 1)\n");
	TT_CHECK(skynet_config_load(at("badinc.lua"), err, sizeof(err)) == SKYNET_EINVAL);
	TT_CHECK(has(err, "badinc.lua:1:"));

	char small[8];
	TT_CHECK(skynet_config_load(at("bad.lua"), small, sizeof(small)) == SKYNET_EINVAL);
	TT_CHECK(strlen(small) == sizeof(small) - 1);
}

static void
config_include_loop_is_an_error(int *failed) {
	env_reset();
	put("loop.lua", "n = (n or 0) + 1\ninclude \"loop.lua\"\n");
	char err[256] = "";
	TT_CHECK(skynet_config_load(at("loop.lua"), err, sizeof(err)) == SKYNET_EINVAL);
	TT_CHECK(has(err, "include nested deeper"));
	TT_CHECK(has(err, "loop.lua:2:"));
	TT_CHECK(env_is("n", NULL));
}

/*
 * A config that runs too long is an error, not a hung startup. The bounded
 * loop (about 60 M instructions) finishes within a second even where the
 * budget is missing, so that case fails instead of hanging; the endless
 * loops run only once the budget has shown to work.
 */
static void
config_endless_loop_is_an_error(int *failed) {
	env_reset();
	char err[256] = "";
	put("short.lua", "n = 0\nfor i = 1, 1000 do n = n + i end\n");
	TT_CHECK(skynet_config_load(at("short.lua"), err, sizeof(err)) == 0);
	TT_CHECK(env_is("n", "500500"));

	env_reset();
	put("long.lua", "n = 0\nfor i = 1, 3e7 do\n  n = n + 1\nend\n");
	int ret = skynet_config_load(at("long.lua"), err, sizeof(err));
	TT_CHECK(ret == SKYNET_EINVAL);
	TT_CHECK(has(err, "long.lua:3: config runs too long"));
	TT_CHECK(env_is("n", NULL));
	if (ret != SKYNET_EINVAL)
		return;

	put("endless.lua", "while true do end\n");
	TT_CHECK(skynet_config_load(at("endless.lua"), err, sizeof(err)) == SKYNET_EINVAL);
	TT_CHECK(has(err, "endless.lua:1: config runs too long"));

	/* Included files share one budget: each alone fits, three together do not. */
	put("spin.lua", "for i = 1, 4e6 do end\n");
	put("once.lua", "include \"spin.lua\"\n");
	put("thrice.lua", "include \"spin.lua\"\ninclude \"spin.lua\"\ninclude \"spin.lua\"\n");
	env_reset();
	TT_CHECK(skynet_config_load(at("once.lua"), err, sizeof(err)) == 0);
	env_reset();
	TT_CHECK(skynet_config_load(at("thrice.lua"), err, sizeof(err)) == SKYNET_EINVAL);
	TT_CHECK(has(err, "spin.lua:1: config runs too long"));
}

/*
 * A config's memory is bounded: a huge value or an endless file is an error,
 * not an exhausted machine. /dev/zero is read only once the first bound has
 * shown to work (without a bound it would read until memory runs out).
 */
static void
config_memory_is_bounded(int *failed) {
	env_reset();
	char err[256] = "";
	put("mb.lua", "s = (\"x\"):rep(1024 * 1024)\n");
	TT_CHECK(skynet_config_load(at("mb.lua"), err, sizeof(err)) == 0);
	TT_CHECK(skynet_getenv("s") != NULL && strlen(skynet_getenv("s")) == 1024 * 1024);

	env_reset();
	put("huge.lua", "before = 1\ns = (\"x\"):rep(100 * 1024 * 1024)\n");
	int ret = skynet_config_load(at("huge.lua"), err, sizeof(err));
	TT_CHECK(ret == SKYNET_EINVAL);
	TT_CHECK(strcmp(err, "config needs more than 64 MB of memory") == 0);
	TT_CHECK(env_is("before", NULL) && env_is("s", NULL));
	if (ret != SKYNET_EINVAL)
		return;

	put("zero.lua", "include \"/dev/zero\"\n");
	TT_CHECK(skynet_config_load(at("zero.lua"), err, sizeof(err)) == SKYNET_EINVAL);
	TT_CHECK(has(err, "cannot open included file /dev/zero: File too large"));
}

static void
config_invalid_values(int *failed) {
	env_reset();
	char err[256] = "";
	put("tab.lua", "ok = 1\nt = { 1, 2 }\n");
	TT_CHECK(skynet_config_load(at("tab.lua"), err, sizeof(err)) == SKYNET_EINVAL);
	TT_CHECK(strcmp(err, "Invalid config table key = t") == 0);
	TT_CHECK(env_is("ok", NULL));

	put("fun.lua", "f = function() end\n");
	TT_CHECK(skynet_config_load(at("fun.lua"), err, sizeof(err)) == SKYNET_EINVAL);
	TT_CHECK(strcmp(err, "Invalid config table key = f") == 0);

	put("key.lua", "_ENV[1] = \"x\"\n");
	TT_CHECK(skynet_config_load(at("key.lua"), err, sizeof(err)) == SKYNET_EINVAL);
	TT_CHECK(strcmp(err, "Invalid config table") == 0);

	put("nul.lua", "s = \"a\\0b\"\n");
	TT_CHECK(skynet_config_load(at("nul.lua"), err, sizeof(err)) == SKYNET_EINVAL);
	TT_CHECK(strcmp(err, "Invalid config table key = s") == 0);
}

static void
config_key_set_already(int *failed) {
	env_reset();
	TT_CHECK(skynet_setenv("thread", "2") == 0);
	put("dup.lua", "thread = 4\nother = 1\n");
	char err[256] = "";
	TT_CHECK(skynet_config_load(at("dup.lua"), err, sizeof(err)) == SKYNET_EINVAL);
	TT_CHECK(has(err, "thread"));
	TT_CHECK(env_is("thread", "2"));
	TT_CHECK(env_is("other", NULL));
}

static void
env_setenv_is_write_once(int *failed) {
	env_reset();
	TT_CHECK(skynet_getenv("k") == NULL);
	TT_CHECK(skynet_setenv("k", "first") == 0);
	const char *v = skynet_getenv("k");
	TT_CHECK(skynet_setenv("k", "second") == SKYNET_EINVAL);
	TT_CHECK(env_is("k", "first"));
	TT_CHECK(skynet_setenv(NULL, "x") == SKYNET_EINVAL);
	TT_CHECK(skynet_setenv("nullvalue", NULL) == SKYNET_EINVAL);
	TT_CHECK(skynet_setenv("empty", "") == 0 && env_is("empty", ""));
	/* Values never move, even when the table grows under them. */
	char key[32];
	for (int i = 0; i < 2000; i++) {
		snprintf(key, sizeof(key), "key%d", i);
		TT_CHECK(skynet_setenv(key, key) == 0);
	}
	TT_CHECK(skynet_getenv("k") == v);
	TT_CHECK(env_is("k", "first"));
	TT_CHECK(env_is("key1999", "key1999"));
}

static void
env_opt_writes_defaults_back(int *failed) {
	env_reset();
	TT_CHECK(skynet_optint("thread", 8) == 8);
	TT_CHECK(env_is("thread", "8"));
	TT_CHECK(skynet_optint("thread", 3) == 8); // the written-back value wins now
	TT_CHECK(skynet_optint("neg", -5) == -5 && env_is("neg", "-5"));
	skynet_setenv("port", " 8080 ");
	TT_CHECK(skynet_optint("port", 1) == 8080);
	skynet_setenv("word", "abc");
	TT_CHECK(skynet_optint("word", 7) == 7); // not a number: the default, with a warning
	TT_CHECK(env_is("word", "abc"));
	skynet_setenv("huge", "99999999999");
	TT_CHECK(skynet_optint("huge", 1) == 1);
	skynet_setenv("float", "2.5");
	TT_CHECK(skynet_optint("float", 1) == 1);

	TT_CHECK(skynet_optboolean("profile", true) == true && env_is("profile", "true"));
	TT_CHECK(skynet_optboolean("quiet", false) == false && env_is("quiet", "false"));
	skynet_setenv("on", "true");
	skynet_setenv("off", "false");
	skynet_setenv("maybe", "yes");
	TT_CHECK(skynet_optboolean("on", false) == true);
	TT_CHECK(skynet_optboolean("off", true) == false);
	TT_CHECK(skynet_optboolean("maybe", true) == true);

	const char *s = skynet_optstring("cpath", "./cservice/?.so");
	TT_CHECK(s != NULL && strcmp(s, "./cservice/?.so") == 0);
	TT_CHECK(s == skynet_getenv("cpath"));
	TT_CHECK(skynet_optstring("logger", NULL) == NULL);
	TT_CHECK(skynet_getenv("logger") == NULL);
	skynet_setenv("start", "main2");
	TT_CHECK(strcmp(skynet_optstring("start", "main"), "main2") == 0);
}

#define STRESS_THREADS 4

static void *
env_hammer(void *arg) {
	int id = (int)(intptr_t)arg;
	int rounds = tt_stress() ? 20000 : 2000;
	intptr_t bad = 0;
	char key[32], value[32];
	for (int i = 0; i < rounds; i++) {
		snprintf(key, sizeof(key), "t%d.%d", id, i);
		snprintf(value, sizeof(value), "%d", i);
		bad += skynet_setenv(key, value) != 0;
		/* Every thread races for the same shared keys through opt*. */
		snprintf(key, sizeof(key), "shared%d", i % 64);
		bad += skynet_optint(key, i % 64) != i % 64;
		snprintf(key, sizeof(key), "t%d.%d", (id + 1) % STRESS_THREADS, i / 2);
		const char *v = skynet_getenv(key);
		bad += v != NULL && atoi(v) != i / 2;
	}
	return (void *)bad;
}

static void
env_concurrent_readers_and_writers(int *failed) {
	env_reset();
	pthread_t th[STRESS_THREADS];
	for (int i = 0; i < STRESS_THREADS; i++)
		TT_CHECK(pthread_create(&th[i], NULL, env_hammer, (void *)(intptr_t)i) == 0);
	for (int i = 0; i < STRESS_THREADS; i++) {
		void *bad;
		pthread_join(th[i], &bad);
		TT_CHECK(bad == NULL);
	}
	TT_CHECK(env_is("t3.1999", "1999"));
	TT_CHECK(env_is("shared63", "63"));
}

/* Remove path and, if it is a directory, everything below it. */
static void
remove_tree(const char *path) {
	DIR *d = opendir(path);
	if (d != NULL) {
		struct dirent *e;
		while ((e = readdir(d)) != NULL) {
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			char sub[PATH_MAX];
			snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
			remove_tree(sub);
		}
		closedir(d);
	}
	remove(path);
}

static void
env_keys_lists_every_key(int *failed) {
	env_reset();
	TT_CHECK(skynet_env_keys(NULL, 0) == 0);
	skynet_setenv("alpha", "1");
	skynet_setenv("beta", "2");
	skynet_setenv("gamma", "3");
	const char *keys[2];
	TT_CHECK(skynet_env_keys(keys, 2) == 3); // only two stored
	const char *all[4];
	TT_CHECK(skynet_env_keys(all, 4) == 3);
	int seen = 0;
	for (int i = 0; i < 3; i++) {
		if (strcmp(all[i], "alpha") == 0)
			seen |= 1;
		else if (strcmp(all[i], "beta") == 0)
			seen |= 2;
		else if (strcmp(all[i], "gamma") == 0)
			seen |= 4;
	}
	TT_CHECK(seen == 7);
	env_reset();
}

static bool
suggests(const char *key, const char *want) {
	const char *got = skynet_keys_suggest(key);
	if (got == NULL || want == NULL)
		return got == want;
	return strcmp(got, want) == 0;
}

static void
keys_known_and_suggested(int *failed) {
	TT_CHECK(skynet_keys_is_known("thread"));
	TT_CHECK(skynet_keys_is_known("config_keys"));
	TT_CHECK(!skynet_keys_is_known("thred"));
	/* keys of skynet's own configs: accepted, though nothing here reads them */
	TT_CHECK(skynet_keys_is_known("root"));
	TT_CHECK(skynet_keys_is_known("master"));
	TT_CHECK(skynet_keys_is_known("address"));
	TT_CHECK(skynet_keys_is_known("lualoader") && skynet_keys_is_known("snax"));
	TT_CHECK(!skynet_keys_is_known("roots"));
	TT_CHECK(suggests("thred", "thread"));           // a deletion
	TT_CHECK(suggests("strat", "start"));            // a swap counts as one edit
	TT_CHECK(suggests("luaservices", "luaservice")); // an insertion
	TT_CHECK(suggests("Thread", "thread"));
	TT_CHECK(suggests("tim", NULL)); // 2 edits are too many for a name this short
	TT_CHECK(suggests("world_size", NULL));
	TT_CHECK(suggests("", NULL));
	char longname[100];
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	TT_CHECK(suggests(longname, NULL));
}

static void
keys_declared_list(int *failed) {
	TT_CHECK(skynet_keys_is_declared("world_size, reward_cs", "world_size"));
	TT_CHECK(skynet_keys_is_declared("world_size, reward_cs", "reward_cs"));
	TT_CHECK(skynet_keys_is_declared("a\tb  c,d", "c"));
	TT_CHECK(!skynet_keys_is_declared("world_size, reward_cs", "world"));
	TT_CHECK(!skynet_keys_is_declared("world_size, reward_cs", "reward_cs2"));
	TT_CHECK(!skynet_keys_is_declared("", "x"));
	TT_CHECK(!skynet_keys_is_declared(NULL, "x"));
}

int
main(void) {
	snprintf(TMP_DIR, sizeof(TMP_DIR), "%s/skywheel-cfg-XXXXXX",
	         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(TMP_DIR) == NULL) {
		perror("mkdtemp");
		return 2;
	}
	skynet_env_init();
	TT_RUN(config_plain_keys_and_types);
	TT_RUN(config_expressions_use_earlier_keys);
	TT_RUN(config_include_relative_nested);
	TT_RUN(config_include_absolute_resets_directory);
	TT_RUN(config_env_expansion);
	TT_RUN(config_env_unset_is_an_error);
	TT_RUN(config_missing_file);
	TT_RUN(config_syntax_and_runtime_errors);
	TT_RUN(config_include_loop_is_an_error);
	TT_RUN(config_endless_loop_is_an_error);
	TT_RUN(config_memory_is_bounded);
	TT_RUN(config_invalid_values);
	TT_RUN(config_key_set_already);
	TT_RUN(env_setenv_is_write_once);
	TT_RUN(env_opt_writes_defaults_back);
	TT_RUN(env_concurrent_readers_and_writers);
	TT_RUN(env_keys_lists_every_key);
	TT_RUN(keys_known_and_suggested);
	TT_RUN(keys_declared_list);
	skynet_env_exit();
	remove_tree(TMP_DIR);
	return tt_summary();
}
