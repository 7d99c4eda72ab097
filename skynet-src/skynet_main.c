/*
 * The node binary: `skynet CONFIG`, or `skynet --help` / `--version`. Loads
 * the config into the env, warns about keys the framework does not read,
 * reads the startup keys (writing their defaults back into the env), installs
 * the crash-tombstone handlers (skynet_tombstone.h) and boots.
 */
#include "skynet.h"

#include "skynet_env.h"
#include "skynet_flow.h"
#include "skynet_keys.h"
#include "skynet_server.h"
#include "skynet_start.h"
#include "skynet_tombstone.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A non-negative integer key (its default written back); exits on a negative value. */
static int
config_count(const char *key, int opt) {
	int v = skynet_optint(key, opt);
	if (v < 0) {
		fprintf(stderr, "skynet: config: %s must be 0 or more (got %d)\n", key, v);
		exit(1);
	}
	return v;
}

static void
usage(FILE *out) {
	fputs("Usage: skynet CONFIG\n"
	      "       skynet --help | --version\n"
	      "\n"
	      "Boots a node from CONFIG, a Lua file of key = value lines, e.g.\n"
	      "    thread = 4                 -- worker threads\n"
	      "    start = \"main\"             -- your first service: main.lua along luaservice\n"
	      "    luaservice = \"./service/?.lua;./game/?.lua\"\n"
	      "    config_keys = \"greeting\"   -- your own keys: no warning for them at boot\n"
	      "    greeting = \"hello\"         -- read with skynet.getenv \"greeting\"\n"
	      "Every key the framework reads is described in docs/config.md.\n"
	      "\n"
	      "From the repository root:\n"
	      "    make run     build and start the demo game server (examples/config)\n"
	      "    make test    build and run every test\n",
	      out);
}

/*
 * Handle an option in place of the config file: --help and --version print
 * and exit 0; any other argument starting with '-' exits 2. Returns for a
 * file name.
 */
static void
handle_option(const char *arg) {
	if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
		usage(stdout);
		exit(0);
	}
	if (strcmp(arg, "--version") == 0) {
		printf("skywheel %s (skynet-compatible actor framework, Lua 5.4)\n", SKYNET_VERSION);
		exit(0);
	}
	if (arg[0] == '-') {
		fprintf(stderr, "skynet: unknown option %s (see skynet --help)\n", arg);
		exit(2);
	}
}

int
main(int argc, char *argv[]) {
	if (argc <= 1) {
		usage(stderr);
		return 1;
	}
	handle_option(argv[1]);
	skynet_globalinit();
	skynet_env_init();

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);

	char err[512];
	if (skynet_config_load(argv[1], err, sizeof(err)) != 0) {
		fprintf(stderr, "skynet: config: %s\n", err);
		return 1;
	}
	skynet_keys_check();

	struct skynet_config config;
	config.thread = skynet_optint("thread", 8);
	if (config.thread < 1 || config.thread > 1024) {
		fprintf(stderr, "skynet: config: thread must be 1..1024 (got %d)\n", config.thread);
		return 1;
	}
	config.harbor = skynet_optint("harbor", 0);
	if (config.harbor < 0 || config.harbor > 255) {
		fprintf(stderr, "skynet: config: harbor must be 0..255 (got %d)\n", config.harbor);
		return 1;
	}
	config.module_path = skynet_optstring("cpath", "./cservice/?.so");
	config.bootstrap = skynet_optstring("bootstrap", "snlua bootstrap");
	config.daemon = skynet_optstring("daemon", NULL);
	config.logger = skynet_optstring("logger", NULL);
	config.logservice = skynet_optstring("logservice", "logger");
	config.profile = skynet_optboolean("profile", true);
	config.malloc_trim = skynet_optboolean("malloc_trim", true);
	if (skynet_priority_configure(skynet_optstring("priority_lane", NULL)) != 0) {
		fprintf(stderr, "skynet: config: priority_lane: each pattern must be at most %d bytes\n",
		        SKYNET_PRIORITY_PATTERN_MAX);
		return 1;
	}
	config.budget = skynet_optstring("budget", NULL);
	const char *timer = skynet_optstring("timer", "real");
	if (strcmp(timer, "virtual") == 0) {
		config.virtual_time = true;
	} else if (strcmp(timer, "real") == 0) {
		config.virtual_time = false;
	} else {
		fprintf(stderr, "skynet: config: timer must be \"real\" or \"virtual\" (got %s)\n", timer);
		return 1;
	}

	config.flow_high_msgs = config_count("socket_flow_high_msgs", SKYNET_FLOW_HIGH_MSGS);
	config.flow_high_bytes = (size_t)config_count("socket_flow_high_bytes", SKYNET_FLOW_HIGH_BYTES);
	config.output_limit = (size_t)config_count("socket_output_limit", 16 << 20);
	config.listen_backlog = config_count("socket_backlog", 511);

	/* Crash tombstones: the handler also appends its line to the logger's file. */
	const char *tombstone_dir = skynet_optstring("tombstone_dir", ".");
	bool file_logger = config.logger != NULL && strcmp(config.logservice, "logger") == 0;
	struct skynet_tombstone_counters counters = {
	    .services = skynet_context_total,
	    .released = skynet_context_released,
	};
	if (skynet_tombstone_init(tombstone_dir, file_logger ? config.logger : NULL, &counters) != 0)
		return 1;

	int status = skynet_start(&config);
	skynet_env_exit();
	skynet_globalexit();
	return status;
}
