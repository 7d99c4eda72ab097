#ifndef SKYNET_COMMAND_H
#define SKYNET_COMMAND_H

/*
 * Internal. The text commands (skynet_command, declared in skynet.h) live in
 * skynet_command.c, above the context layer; this is the rest of their
 * state the node reads.
 */

/* The status the process exits with: 0, or what the last "ABORT status" set. Thread-safe. */
int skynet_exit_status(void);

#endif
