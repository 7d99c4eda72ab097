/*
 * Daemon mode: a pid file that is both a record (the daemon's pid, read by
 * whoever starts the next instance) and a lock (flock, taken before forking
 * and inherited by the daemon, so two starters racing on one file cannot both
 * win even when the recorded pid is stale).
 *
 * All checks that can refuse the start run before the fork, so a refusal is
 * reported by the process the user started, with a non-zero exit status.
 */

#include "skynet_daemon.h"
#include "skynet.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/types.h>
#include <unistd.h>

static int PIDFD = -1; // owned: the locked pid file, open from init until exit

/* The pid recorded in pidfile, or 0 when there is none. */
static pid_t
read_pid(const char *pidfile) {
	FILE *f = fopen(pidfile, "r");
	if (f == NULL)
		return 0;
	int pid = 0;
	if (fscanf(f, "%d", &pid) != 1)
		pid = 0;
	(void)fclose(f); // read-only: nothing to do on failure
	return pid;
}

static bool
is_running(pid_t pid) {
	if (pid <= 0 || pid == getpid())
		return false;
	return kill(pid, 0) == 0 || errno == EPERM;
}

static int
write_pid(int fd) {
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) != 0 || pwrite(fd, buf, (size_t)n, 0) != n)
		return SKYNET_EIO;
	return 0;
}

static int
redirect_fds(void) {
	int fd = open("/dev/null", O_RDWR);
	if (fd < 0)
		return SKYNET_EIO;
	int ret = 0;
	for (int i = 0; i < 3; i++) {
		if (dup2(fd, i) < 0)
			ret = SKYNET_EIO;
	}
	if (fd > 2)
		(void)close(fd); // a duplicate of /dev/null: nothing to do on failure
	return ret;
}

/* Open and lock pidfile; returns the fd, or a negative SKYNET_E* (reported). */
static int
lock_pidfile(const char *pidfile) {
	int fd = open(pidfile, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "error: daemon: cannot open pidfile=%s: %s\n", pidfile, strerror(errno));
		return SKYNET_EIO;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		int err = errno;
		(void)close(fd); // unlocked and unwritten: nothing to undo
		if (err == EWOULDBLOCK) {
			fprintf(stderr, "error: daemon: already running (pid file locked) pidfile=%s\n",
			        pidfile);
			return SKYNET_EINVAL;
		}
		fprintf(stderr, "error: daemon: cannot lock pidfile=%s: %s\n", pidfile, strerror(err));
		return SKYNET_EIO;
	}
	return fd;
}

int
skynet_daemon_init(const char *pidfile) {
	pid_t pid = read_pid(pidfile);
	if (is_running(pid)) {
		fprintf(stderr, "error: daemon: already running pid=%d pidfile=%s\n", (int)pid, pidfile);
		return SKYNET_EINVAL;
	}
	int fd = lock_pidfile(pidfile);
	if (fd < 0)
		return fd;
	fflush(NULL); // so buffered output is not written twice, once by each process
	if (daemon(1, 1) != 0) {
		fprintf(stderr, "error: daemon: cannot detach: %s\n", strerror(errno));
		goto fail_close_fd;
	}
	/* Only the daemon gets here; the parent has exited 0. */
	if (write_pid(fd) != 0) {
		fprintf(stderr, "error: daemon: cannot write pidfile=%s: %s\n", pidfile, strerror(errno));
		goto fail_remove_file;
	}
	if (redirect_fds() != 0) {
		fprintf(stderr, "error: daemon: cannot redirect fds to /dev/null: %s\n", strerror(errno));
		goto fail_remove_file;
	}
	PIDFD = fd;
	return 0;
fail_remove_file:
	(void)unlink(pidfile); // best effort: we are failing anyway
fail_close_fd:
	(void)close(fd); // releases the lock
	return SKYNET_EIO;
}

int
skynet_daemon_exit(const char *pidfile) {
	int ret = 0;
	if (unlink(pidfile) != 0 && errno != ENOENT)
		ret = SKYNET_EIO;
	if (PIDFD >= 0) {
		(void)close(PIDFD); // releases the lock; nothing to do on failure
		PIDFD = -1;
	}
	return ret;
}
