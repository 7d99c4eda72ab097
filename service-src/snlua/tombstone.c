/*
 * snlua's part of a crash tombstone: the Lua stack of the service that the
 * crashing thread was running, written from inside the node's signal
 * handler (skynet_tombstone_set_stack in skynet.h; the core's side, with
 * the file format, is skynet-src/skynet_tombstone.c).
 *
 * Which state. The trap (trap.c) keeps, per worker thread, the instance it
 * runs (CURRENT, set around every message) and, per instance, the
 * coroutine running now (active, set on every resume). Both are written by
 * the thread that runs the service, and the writer runs on that same
 * thread, so it reads them with no race. The walk covers active, then the
 * main thread when active is a coroutine (the main thread waits inside
 * resume, in the dispatcher).
 *
 * Why it is safe enough. The walk calls lua_getstack and lua_getinfo("Sln")
 * only: they read the CallInfo chain and the prototypes (source name, line
 * info, the calling instruction for a frame's name), allocate nothing, run
 * no metamethod and take no lock (lua_lock is empty in a stock Lua). The
 * state belongs to the interrupted thread, so no other thread changes it
 * during the walk. Limits: POSIX does not list these functions as
 * async-signal-safe; if the signal interrupted the VM while it was setting
 * up a call, the newest frame may be half built (a wrong name or line, or
 * a second fault, which ends the process at once: the core writes this
 * part after everything but the C backtrace). The line of the newest Lua
 * frame is exact when that frame called into C (a faulting C function);
 * when the signal came from outside while the VM ran, it may lag (Lua
 * saves the pc at calls). Other workers' states are never read: another
 * thread is running them (the core marks them "not captured").
 *
 * Data: none of its own. Locking: none (the crashing thread only).
 */
#include "tombstone.h"
#include "instance.h"
#include "trap.h"

#include "skynet.h"

#include <lua.h>

#include <string.h>

#define TOMB_LUA_FRAMES 32 // frames written per state

static void
write_frame(struct skynet_tombstone_out *out, lua_Debug *ar) {
	skynet_tombstone_puts(out, "    ");
	skynet_tombstone_puts(out, ar->short_src);
	if (ar->currentline > 0) {
		skynet_tombstone_puts(out, ":");
		skynet_tombstone_putint(out, ar->currentline);
	}
	skynet_tombstone_puts(out, " in ");
	if (ar->namewhat != NULL && ar->namewhat[0] != '\0' && ar->name != NULL) {
		skynet_tombstone_puts(out, ar->namewhat);
		skynet_tombstone_puts(out, " '");
		skynet_tombstone_puts(out, ar->name);
		skynet_tombstone_puts(out, "'\n");
	} else if (strcmp(ar->what, "main") == 0) {
		skynet_tombstone_puts(out, "main chunk\n");
	} else if (strcmp(ar->what, "C") == 0) {
		skynet_tombstone_puts(out, "?\n");
	} else {
		skynet_tombstone_puts(out, "function <");
		skynet_tombstone_puts(out, ar->short_src);
		skynet_tombstone_puts(out, ":");
		skynet_tombstone_putint(out, ar->linedefined);
		skynet_tombstone_puts(out, ">\n");
	}
}

/* Every frame of L, newest first, at most TOMB_LUA_FRAMES. */
static void
write_state(struct skynet_tombstone_out *out, lua_State *L) {
	lua_Debug ar;
	int level = 0;
	while (lua_getstack(L, level, &ar)) {
		if (level == TOMB_LUA_FRAMES) {
			skynet_tombstone_puts(out, "    ...\n");
			return;
		}
		if (lua_getinfo(L, "Sln", &ar))
			write_frame(out, &ar);
		level++;
	}
	if (level == 0)
		skynet_tombstone_puts(out, "    (no frame)\n");
}

static void
write_stack(struct skynet_tombstone_out *out) {
	lua_State *active = NULL;
	struct snlua *l = snlua_trap_running(&active);
	if (l == NULL || active == NULL) {
		skynet_tombstone_puts(out, "  none (the service runs no Lua now)\n");
		return;
	}
	skynet_tombstone_puts(out, active == l->L ? "  main thread:\n" : "  running coroutine:\n");
	write_state(out, active);
	if (active != l->L) {
		skynet_tombstone_puts(out, "  main thread (resumed the coroutine):\n");
		write_state(out, l->L);
	}
}

void
snlua_tombstone_install(void) {
	skynet_tombstone_set_stack(write_stack);
}
