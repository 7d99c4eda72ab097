#ifndef SKYNET_DAEMON_H
#define SKYNET_DAEMON_H

/*
 * Internal: skynet-src/ (and its tests) only, never service-src/ or lualib-src/.
 *
 * Daemon mode (config key "daemon" = pid file). Startup only: call before any
 * thread is created (the process forks) and before the logger exists (errors
 * go to stderr, as one "error: daemon: ..." line). Not thread-safe.
 */

/*
 * Refuse to start when pidfile names a live process other than this one or is
 * locked by one; otherwise lock pidfile (flock, held until exit), detach from
 * the terminal (fork, setsid: the parent exits 0), write the daemon's pid into
 * the file and point fds 0/1/2 at /dev/null. Returns 0 in the daemon, or
 * SKYNET_EINVAL (already running) / SKYNET_EIO (a system call failed) in the
 * original process, which has not forked then and should exit 1.
 */
int skynet_daemon_init(const char *pidfile);

/* Remove pidfile and drop its lock. Returns 0, or SKYNET_EIO when unlink fails. */
int skynet_daemon_exit(const char *pidfile);

#endif
