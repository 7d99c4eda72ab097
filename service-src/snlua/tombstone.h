/*
 * snlua's part of a crash tombstone: the Lua stack of the service the
 * crashing thread runs. See tombstone.c for the design.
 */
#ifndef SKYNET_SNLUA_TOMBSTONE_H
#define SKYNET_SNLUA_TOMBSTONE_H

#pragma GCC visibility push(hidden)

/* Register snlua's stack writer with the node (skynet_tombstone_set_stack). Thread-safe. */
void snlua_tombstone_install(void);

#pragma GCC visibility pop

#endif
