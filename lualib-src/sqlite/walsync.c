/*
 * The WAL syncer of a database thread (sync "full" on a WAL database).
 *
 * Why. With synchronous=FULL SQLite fsyncs the WAL inside every COMMIT: the
 * database thread waits for the disk (2-5 ms on the machines measured)
 * before it can run the next group, so no SQL runs while the disk syncs,
 * and the sets a node can make per second are capped by how many requests
 * wait per fsync. Instead the database runs with synchronous=NORMAL (a
 * COMMIT writes the WAL without syncing it; SQLite stays consistent after a
 * power loss and may only lose the last commits), and this thread makes
 * those commits durable before anyone hears of them: the database thread
 * hands it each group's answers, and it posts them only after an fdatasync
 * of the WAL that began after their COMMIT returned. While the disk syncs
 * one group, the database thread runs the next one: SQL and syncing
 * overlap. A caller
 * gets FULL's guarantee: an answered write is on disk.
 *
 * Data: the batch queued (the answers, the request count and ids, whether
 * a sync is owed) under cond's mutex, at most one: a push waits while the
 * batch pushed before it is still queued, not yet taken by a sync, so the
 * database thread runs at most one group ahead of the disk. The requests
 * that arrive meanwhile wait in the database's queue and commit as one
 * bigger group instead of many small commits that would each rewrite the
 * same pages into the WAL (sync "normal", which never waits, made smaller
 * groups and fewer sets per second than "full" on an idle VM). Batches are
 * posted in the order they came, those that owe no sync too, so the
 * owner's answers stay in order.
 * The thread owns its descriptor of the WAL, opened at the first sync and
 * opened again when the path no longer names that file (a journal_mode
 * switch made a new one); after each open the folder is synced once, so the
 * WAL's name is durable too.
 *
 * Failure: when the WAL cannot be opened or synced, every request of the
 * batches that sync covered is answered "sqlite: cannot sync the WAL: why"
 * (its write is in the database but may not survive a power loss: the
 * caller is told it has no guarantee), and later batches try again.
 *
 * Locking: cond's mutex covers head and quit, held for O(1) work;
 * the descriptor, the sync and the posting are the thread's alone.
 */
#include "walsync.h"

#include "skynet.h"
#include "skynet_cond.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

struct batch {
	struct batch *next;
	struct wire_buf out; // owned
	int n;
	uint32_t *ids; // owned: n ids
	bool sync;
};

struct walsync {
	pthread_t thread;
	struct skynet_cond cond; // covers head and quit
	struct batch *head;      // owned: the batch queued, at most one
	bool quit;
	walsync_post post;
	void *ud;
	ATOM_U64 *syncs;
	char *path; // owned
	int fd;     // the thread's; -1 until opened
	dev_t dev;
	ino_t ino;
};

/* Sync the folder that holds path (its new entry). */
static void
sync_folder(const char *path) {
	const char *slash = strrchr(path, '/');
	char dir[4096];
	if (slash == NULL) {
		snprintf(dir, sizeof(dir), ".");
	} else if (slash == path) {
		snprintf(dir, sizeof(dir), "/");
	} else {
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	}
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
}

/* The descriptor of the file the path names now; -1 with errno set. */
static int
wal_fd(struct walsync *s) {
	struct stat st;
	if (s->fd >= 0 && stat(s->path, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino)
		return s->fd;
	if (s->fd >= 0) {
		close(s->fd);
		s->fd = -1;
	}
	int fd = open(s->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0) {
		int err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	s->fd = fd;
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	sync_folder(s->path);
	return fd;
}

/* One fdatasync of the WAL; false with why filled in. */
static bool
sync_wal(struct walsync *s, char *why, size_t size) {
	int fd = wal_fd(s);
	if (fd < 0 || fdatasync(fd) != 0) {
		snprintf(why, size, "sqlite: cannot sync the WAL: %s (%s)", strerror(errno), s->path);
		return false;
	}
	ATOM_FINC(s->syncs);
	return true;
}

static void
free_batch(struct batch *b) {
	skynet_free(b->out.p);
	skynet_free(b->ids);
	skynet_free(b);
}

/* Post the batches of list in order: those owing a sync after one fdatasync. */
static void
post_list(struct walsync *s, struct batch *list, bool final) {
	bool owed = final;
	for (struct batch *b = list; b != NULL; b = b->next)
		owed = owed || b->sync;
	char why[256];
	bool synced = !owed || sync_wal(s, why, sizeof(why));
	while (list != NULL) {
		struct batch *b = list;
		list = b->next;
		if (b->sync && !synced) {
			b->out.len = 0;
			for (int i = 0; i < b->n; i++)
				wire_put_error(&b->out, b->ids[i], why);
		}
		s->post(s->ud, &b->out, b->n); // takes the buffer
		b->out.p = NULL;
		free_batch(b);
	}
}

static void *
sync_main(void *arg) {
	struct walsync *s = arg;
	for (;;) {
		skynet_cond_lock(&s->cond);
		while (s->head == NULL && !s->quit)
			skynet_cond_wait(&s->cond);
		struct batch *list = s->head;
		s->head = NULL;
		bool quit = s->quit;
		skynet_cond_broadcast(&s->cond); // a push may wait for the queue to empty
		skynet_cond_unlock(&s->cond);
		post_list(s, list, quit);
		if (quit)
			return NULL;
	}
}

struct walsync *
walsync_start(const char *wal_path, walsync_post post, void *ud, ATOM_U64 *syncs) {
	struct walsync *s = skynet_calloc(1, sizeof(*s));
	skynet_cond_init(&s->cond);
	s->post = post;
	s->ud = ud;
	s->syncs = syncs;
	s->fd = -1;
	size_t len = strlen(wal_path);
	s->path = skynet_malloc(len + 1);
	memcpy(s->path, wal_path, len + 1);
	if (pthread_create(&s->thread, NULL, sync_main, s) != 0) {
		skynet_cond_destroy(&s->cond);
		skynet_free(s->path);
		skynet_free(s);
		return NULL;
	}
	return s;
}

void
walsync_push(struct walsync *s, struct wire_buf *out, int n, uint32_t *ids, bool sync) {
	struct batch *b = skynet_malloc(sizeof(*b));
	b->next = NULL;
	b->out = *out;
	b->n = n;
	b->ids = ids;
	b->sync = sync;
	out->p = NULL;
	out->len = out->cap = 0;
	skynet_cond_lock(&s->cond);
	while (s->head != NULL) // one batch ahead at most: see the top comment
		skynet_cond_wait(&s->cond);
	s->head = b;
	skynet_cond_broadcast(&s->cond);
	skynet_cond_unlock(&s->cond);
}

void
walsync_stop(struct walsync *s) {
	if (s == NULL)
		return;
	skynet_cond_lock(&s->cond);
	s->quit = true;
	skynet_cond_broadcast(&s->cond);
	skynet_cond_unlock(&s->cond);
	if (pthread_join(s->thread, NULL) != 0)
		abort();
	if (s->fd >= 0)
		close(s->fd);
	skynet_cond_destroy(&s->cond);
	skynet_free(s->path);
	skynet_free(s);
}
