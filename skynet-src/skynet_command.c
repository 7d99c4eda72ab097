/*
 * The text commands (skynet's command set, skynet_command in skynet.h):
 * each parses its parameter, calls the module that does the work (the
 * context layer, the handle table, the timer, env, harbor, per-service
 * logs) and answers in the calling context's result buffer, or NULL.
 *
 * State of its own: the MONITOR service (told when a service is killed)
 * and the exit status ABORT sets. Commands run on the thread running the
 * calling context; MONITOR is set once at boot by the bootstrap service.
 */
#include "skynet_command.h"

#include "skynet.h"
#include "skynet_budget.h"
#include "skynet_env.h"
#include "skynet_handle.h"
#include "skynet_harbor.h"
#include "skynet_log.h"
#include "skynet_post.h"
#include "skynet_server.h"
#include "skynet_timer.h"
#include "atomic.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t MONITOR_EXIT = 0; // told of every KILL (MONITOR), 0 for none
static ATOM_INT EXIT_STATUS = 0;  // the process's exit status, set by ABORT

int
skynet_exit_status(void) {
	return ATOM_LOAD(&EXIT_STATUS);
}

static void
id_to_hex(char *str, uint32_t id) {
	static const char hex[16] = "0123456789ABCDEF";
	str[0] = ':';
	for (int i = 0; i < 8; i++)
		str[i + 1] = hex[(id >> ((7 - i) * 4)) & 0xf];
	str[9] = '\0';
}

static void
handle_exit(struct skynet_context *context, uint32_t handle) {
	if (handle == 0) {
		handle = skynet_context_handle(context);
		skynet_error(context, "KILL self");
	} else {
		skynet_error(context, "KILL :%0x", handle);
	}
	if (MONITOR_EXIT)
		skynet_send(context, handle, MONITOR_EXIT, PTYPE_CLIENT, 0, NULL, 0);
	skynet_context_retire(handle);
}

/* Commands (skynet's text command set): each returns a borrowed string or NULL. */

static const char *
cmd_timeout(struct skynet_context *context, const char *param) {
	int ti = param ? (int)strtol(param, NULL, 10) : 0;
	sprintf(skynet_context_result(context), "%d", skynet_timeout_new(context, ti));
	return skynet_context_result(context);
}

static const char *
cmd_reg(struct skynet_context *context, const char *param) {
	if (param == NULL || param[0] == '\0') {
		sprintf(skynet_context_result(context), ":%x", skynet_context_handle(context));
		return skynet_context_result(context);
	}
	if (param[0] == '.')
		return skynet_handle_namehandle(skynet_context_handle(context), param + 1);
	skynet_error(context, "error: Can't register global name %s in C", param);
	return NULL;
}

static const char *
cmd_query(struct skynet_context *context, const char *param) {
	if (param && param[0] == '.') {
		uint32_t handle = skynet_handle_findname(param + 1);
		if (handle) {
			sprintf(skynet_context_result(context), ":%x", handle);
			return skynet_context_result(context);
		}
	}
	return NULL;
}

static const char *
cmd_name(struct skynet_context *context, const char *param) {
	if (param == NULL)
		return NULL;
	char name[64];
	char addr[64];
	if (sscanf(param, "%63s %63s", name, addr) != 2 || addr[0] != ':')
		return NULL;
	uint32_t handle = (uint32_t)strtoul(addr + 1, NULL, 16);
	if (handle == 0)
		return NULL;
	if (name[0] == '.')
		return skynet_handle_namehandle(handle, name + 1);
	skynet_error(context, "error: Can't set global name %s in C", name);
	return NULL;
}

/* GLOBALNAME "name :hex": bind a global name (the single-node harbor). */
static const char *
cmd_globalname(struct skynet_context *context, const char *param) {
	if (param == NULL)
		return NULL;
	char name[SKYNET_RESULT_SIZE];
	char addr[64];
	if (sscanf(param, "%31s %63s", name, addr) != 2 || addr[0] != ':')
		return NULL;
	uint32_t handle = (uint32_t)strtoul(addr + 1, NULL, 16);
	if (skynet_harbor_register(name, handle) != 0) {
		skynet_error(context, "error: invalid global name %s", name);
		return NULL;
	}
	memcpy(skynet_context_result(context), name, sizeof(name));
	return skynet_context_result(context);
}

static const char *
cmd_exit(struct skynet_context *context, const char *param) {
	handle_exit(context, 0);
	return NULL;
}

/* Handle named by the first word of param (":hex" or ".name"), or 0. */
static uint32_t
tohandle(struct skynet_context *context, const char *param) {
	if (param == NULL)
		return 0;
	if (param[0] == ':')
		return (uint32_t)strtoul(param + 1, NULL, 16);
	if (param[0] == '.') {
		char name[64];
		size_t len = strcspn(param + 1, " \t");
		if (len >= sizeof(name))
			return 0;
		memcpy(name, param + 1, len);
		name[len] = '\0';
		return skynet_handle_findname(name);
	}
	skynet_error(context, "error: Can't convert %s to handle", param);
	return 0;
}

static const char *
cmd_kill(struct skynet_context *context, const char *param) {
	uint32_t handle = tohandle(context, param);
	if (handle)
		handle_exit(context, handle);
	return NULL;
}

static const char *
cmd_launch(struct skynet_context *context, const char *param) {
	if (param == NULL)
		return NULL;
	size_t sz = strlen(param);
	char *tmp = skynet_malloc(sz + 1);
	memcpy(tmp, param, sz + 1);
	char *args = tmp;
	char *mod = strsep(&args, " \t\r\n");
	if (args) {
		args[strcspn(args, "\r\n")] = '\0';
	}
	const char *result = NULL;
	uint32_t handle = skynet_context_new(mod, args);
	if (handle) {
		id_to_hex(skynet_context_result(context), handle);
		result = skynet_context_result(context);
	}
	skynet_free(tmp);
	return result;
}

static const char *
cmd_getenv(struct skynet_context *context, const char *param) {
	return param ? skynet_getenv(param) : NULL;
}

static const char *
cmd_setenv(struct skynet_context *context, const char *param) {
	if (param == NULL)
		return NULL;
	size_t sz = strcspn(param, " ");
	char *key = skynet_malloc(sz + 1);
	memcpy(key, param, sz);
	key[sz] = '\0';
	const char *value = param[sz] ? param + sz + 1 : "";
	if (skynet_setenv(key, value) != 0)
		skynet_error(context, "error: Can't setenv exist key : %s", key);
	skynet_free(key);
	return NULL;
}

static const char *
cmd_starttime(struct skynet_context *context, const char *param) {
	sprintf(skynet_context_result(context), "%u", skynet_starttime());
	return skynet_context_result(context);
}

static const char *
cmd_now(struct skynet_context *context, const char *param) {
	sprintf(skynet_context_result(context), "%" PRIu64, skynet_now());
	return skynet_context_result(context);
}

/* ABORT [status]: retire every service; the process then exits with status (default 0). */
static const char *
cmd_abort(struct skynet_context *context, const char *param) {
	if (param != NULL && param[0] != '\0') {
		char *end;
		long status = strtol(param, &end, 10);
		if (*end != '\0' || status < 0 || status > 255) {
			skynet_error(context, "error: abort: bad exit status status=%s", param);
			status = 1;
		}
		ATOM_STORE(&EXIT_STATUS, (int)status);
	}
	skynet_context_retireall();
	return NULL;
}

static const char *
cmd_monitor(struct skynet_context *context, const char *param) {
	if (param == NULL || param[0] == '\0') {
		if (MONITOR_EXIT) {
			sprintf(skynet_context_result(context), ":%x", MONITOR_EXIT);
			return skynet_context_result(context);
		}
		return NULL;
	}
	MONITOR_EXIT = tohandle(context, param);
	return NULL;
}

static const char *
cmd_endless(struct skynet_context *context, const char *param) {
	bool endless = skynet_context_take_endless(context);
	strcpy(skynet_context_result(context), endless ? "1" : "0");
	return skynet_context_result(context);
}

static const char *
cmd_stat(struct skynet_context *context, const char *param) {
	if (param == NULL)
		return NULL;
	char *result = skynet_context_result(context);
	struct skynet_service_stat st;
	skynet_context_stat(context, &st);
	if (strcmp(param, "mqlen") == 0) {
		sprintf(result, "%d", st.mqlen);
	} else if (strcmp(param, "endless") == 0) {
		return cmd_endless(context, param);
	} else if (strcmp(param, "cpu") == 0) {
		sprintf(result, "%lf", (double)st.cpu_us / 1000000.0);
	} else if (strcmp(param, "time") == 0) {
		sprintf(result, "%lf", (double)skynet_context_running_us(context) / 1000000.0);
	} else if (strcmp(param, "message") == 0) {
		sprintf(result, "%d", (int)st.messages);
	} else if (strcmp(param, "timers") == 0) {
		sprintf(result, "%zu", skynet_timer_pending(st.handle));
	} else if (strcmp(param, "timers_total") == 0) {
		sprintf(result, "%zu", skynet_timer_pending(0));
	} else {
		result[0] = '\0';
	}
	return result;
}

/*
 * PRIORITY [on|off]: turn the calling service's priority lane on or off;
 * answers the previous setting, "1" or "0" (no parameter: only answers).
 */
static const char *
cmd_priority(struct skynet_context *context, const char *param) {
	bool was;
	if (param == NULL || param[0] == '\0') {
		was = skynet_context_priority(context);
	} else if (strcmp(param, "on") == 0) {
		was = skynet_context_set_priority(context, true);
	} else if (strcmp(param, "off") == 0) {
		was = skynet_context_set_priority(context, false);
	} else {
		return NULL;
	}
	strcpy(skynet_context_result(context), was ? "1" : "0");
	return skynet_context_result(context);
}

/* The context named by the first word of param (":hex" or ".name"), grabbed, or NULL. */
static struct skynet_context *
grab_target(struct skynet_context *context, const char *param, uint32_t *handle) {
	*handle = tohandle(context, param);
	return *handle ? skynet_handle_grab(*handle) : NULL;
}

static const char *
cmd_logon(struct skynet_context *context, const char *param) {
	uint32_t handle;
	struct skynet_context *ctx = grab_target(context, param, &handle);
	if (ctx == NULL)
		return NULL;
	if (!skynet_context_is_logging(ctx)) {
		FILE *f = skynet_log_open(context, handle);
		if (f && !skynet_context_log_on(ctx, f))
			fclose(f); // another LOGON won the race
	}
	skynet_handle_drop(ctx);
	return NULL;
}

static const char *
cmd_logoff(struct skynet_context *context, const char *param) {
	uint32_t handle;
	struct skynet_context *ctx = grab_target(context, param, &handle);
	if (ctx == NULL)
		return NULL;
	FILE *f = skynet_context_log_off(ctx);
	if (f)
		skynet_log_close(context, f, handle);
	skynet_handle_drop(ctx);
	return NULL;
}

static const char *
cmd_signal(struct skynet_context *context, const char *param) {
	uint32_t handle = tohandle(context, param);
	if (handle == 0)
		return NULL;
	int sig = 0;
	const char *space = strchr(param, ' ');
	if (space)
		sig = (int)strtol(space + 1, NULL, 0);
	skynet_context_signal(handle, sig);
	return NULL;
}

/*
 * BUDGET ["key=value ..."]: change the calling service's budget (keys
 * cpu_ms_per_s, memory_mb, queue, policy, or "off"), then answer it as
 * "cpu_ms_per_s memory_mb queue policy" (numbers; policy 0 warn, 1
 * throttle, 2 kill). NULL, with the reason logged, on a bad parameter.
 */
static const char *
cmd_budget(struct skynet_context *context, const char *param) {
	if (param != NULL && param[0] != '\0') {
		char err[96];
		if (skynet_context_budget(context, param, err, sizeof(err)) != 0) {
			skynet_error(context, "error: budget: %s", err);
			return NULL;
		}
	}
	struct skynet_budget b;
	skynet_context_budget_get(context, &b);
	char *result = skynet_context_result(context);
	snprintf(result, SKYNET_RESULT_SIZE, "%u %u %u %d", (unsigned)(b.cpu_us_per_s / 1000),
	         (unsigned)(b.memory_bytes >> 20), (unsigned)b.queue, b.policy);
	return result;
}

struct command_func {
	const char *name;
	const char *(*func)(struct skynet_context *context, const char *param);
};

static const struct command_func CMD_FUNCS[] = {
    {"TIMEOUT", cmd_timeout},
    {"REG", cmd_reg},
    {"QUERY", cmd_query},
    {"NAME", cmd_name},
    {"EXIT", cmd_exit},
    {"KILL", cmd_kill},
    {"LAUNCH", cmd_launch},
    {"GETENV", cmd_getenv},
    {"SETENV", cmd_setenv},
    {"STARTTIME", cmd_starttime},
    {"NOW", cmd_now},
    {"ABORT", cmd_abort},
    {"MONITOR", cmd_monitor},
    {"STAT", cmd_stat},
    {"ENDLESS", cmd_endless},
    {"LOGON", cmd_logon},
    {"LOGOFF", cmd_logoff},
    {"SIGNAL", cmd_signal},
    {"GLOBALNAME", cmd_globalname},
    {"PRIORITY", cmd_priority},
    {"BUDGET", cmd_budget},
    {NULL, NULL},
};

const char *
skynet_command(struct skynet_context *context, const char *cmd, const char *param) {
	for (const struct command_func *method = CMD_FUNCS; method->name; method++) {
		if (strcmp(cmd, method->name) == 0)
			return method->func(context, param);
	}
	return NULL;
}
