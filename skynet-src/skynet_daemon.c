/*
 * Daemon mode: a pid file that is both a record (the daemon's pid, read by
 * whoever starts the next instance) and a lock (flock, taken before forking
 * and inherited by the daemon, so two starters racing on one file cannot both
 * win even when the recorded pid is stale).
 *
 * All checks that can refuse the start run before the fork, so a refusal is
 * reported by the process the user started, with a non-zero exit status.
 * That process also waits, on a pipe, until the daemon has written the pid
 * file, so the file is in place when the command returns (exit 0), and a
 * daemon that fails to set itself up makes it exit 1.
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

/*
 * Fork; the parent waits for the child's readiness byte and exits with it.
 * In the child, returns 0 with *ready_fd the pipe end to report on.
 */
static int
detach(int *ready_fd) {
	int p[2];
	if (pipe(p) != 0)
		return SKYNET_EIO;
	pid_t child = fork();
	if (child < 0) {
		(void)close(p[0]); // nothing to do on failure
		(void)close(p[1]);
		return SKYNET_EIO;
	}
	if (child > 0) {
		(void)close(p[1]); // the parent only reads
		char ok = 0;
		ssize_t n;
		do {
			n = read(p[0], &ok, 1);
		} while (n < 0 && errno == EINTR);
		_exit(n == 1 && ok == 'y' ? 0 : 1);
	}
	(void)close(p[0]); // the child only writes
	if (setsid() < 0) {
		(void)close(p[1]);
		return SKYNET_EIO;
	}
	*ready_fd = p[1];
	return 0;
}

static void
report_ready(int ready_fd, bool ok) {
	if (ok)
		(void)write(ready_fd, "y", 1); // the parent sees EOF (failure) otherwise
	(void)close(ready_fd);
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
	int ready_fd;
	if (detach(&ready_fd) != 0) {
		fprintf(stderr, "error: daemon: cannot detach: %s\n", strerror(errno));
		goto fail_close_fd;
	}
	/* Only the daemon gets here; the parent waits for report_ready. */
	if (write_pid(fd) != 0) {
		fprintf(stderr, "error: daemon: cannot write pidfile=%s: %s\n", pidfile, strerror(errno));
		goto fail_remove_file;
	}
	if (redirect_fds() != 0) {
		fprintf(stderr, "error: daemon: cannot redirect fds to /dev/null: %s\n", strerror(errno));
		goto fail_remove_file;
	}
	report_ready(ready_fd, true);
	PIDFD = fd;
	return 0;
fail_remove_file:
	(void)unlink(pidfile); // best effort: we are failing anyway
	report_ready(ready_fd, false);
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
