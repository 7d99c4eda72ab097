/*
 * The project's allocator (skynet_malloc & co), compiled into sproto.so as
 * well, so that a plain lua5.4 (a terminal client, as in the reference's
 * demo) can load sproto.core. Inside a skynet node these copies are never
 * called: the executable exports its own skynet_malloc (-Wl,-E), and the
 * dynamic linker binds this library's calls to the executable's definitions,
 * which come first in the global lookup order.
 */
#include "../../skynet-src/skynet_malloc.c"
