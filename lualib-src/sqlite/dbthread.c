/*
 * The database thread of skynet.db.sqlite. Each open database has one
 * thread, and it is the only thread that calls into SQLite for that
 * database (open, prepare, step, commit, close): a worker thread never
 * waits on the disk. A service talks to it through a request queue and
 * gets its answers back as PTYPE_SQLITE messages.
 *
 * Data structure. struct sqlite_db holds the queue (a singly linked list of
 * struct sqlite_req, head to tail in arrival order), the thread, and what
 * only the thread touches: the connection, its fixed statements (BEGIN,
 * COMMIT, the savepoint verbs) and a cache of prepared statements keyed by
 * SQL text (CACHE_SIZE entries, the least recently used one is finalized
 * when a new one needs room; only statements whose text is exactly one
 * statement are cached).
 *
 * Group commit. The thread sleeps until the queue is not empty, then takes
 * every queued request at once and runs the data requests among them (EXEC,
 * QUERY, BATCH; a run between two control requests OPEN or CLOSE) in one
 * transaction: BEGIN IMMEDIATE (plain BEGIN when read-only), then each
 * request inside its own SAVEPOINT, so a failing request rolls back only its
 * own work and answers an error, then COMMIT. The answers of everything
 * taken are written into one buffer and posted as one message, after the
 * COMMIT succeeded: an answered write is as durable as the synchronous
 * policy makes a commit. If BEGIN or COMMIT fails, or a failing statement
 * made SQLite roll the whole transaction back (an I/O error, a full disk),
 * every request of the group answers that error and nothing of it stays.
 * Requests queued while a group runs form the next group, so the more
 * requests arrive while the disk is busy, the fewer commits per request.
 *
 * Replies go to the owner service with skynet_send (source and destination
 * the owner, session 0, the buffer donated). A service that is gone makes
 * the send fail, and skynet_send frees the buffer. Each queued request is
 * counted with skynet_outside_add(+1) when it is submitted and subtracted
 * after its answer was posted, so virtual time waits for the thread.
 *
 * Lifetime. ref counts the service's userdata (1) and the thread (1). The
 * thread ends after it has handled a CLOSE or a failed OPEN (the service
 * then joins it: no disk work is left by then), or, once the db was
 * abandoned (its userdata collected without a close; the thread was
 * detached), when the queue is empty: it then closes the connection by
 * itself. Before it ends it sets stopped, under the lock, and answers any
 * request still queued with "database is closed"; later submits are
 * refused. The last release frees the struct.
 *
 * An abandoned thread counts as one more outside job (skynet_outside_add)
 * until it has closed the database (finished), so a test can wait in
 * virtual time for the thread to end.
 *
 * Locking. cond's mutex covers head, tail, stopped, abandoned and finished; it is
 * held for O(1) list work only, never across SQLite calls or sends. The
 * connection, statements and cache are the thread's alone. commits and
 * requests are ATOM_* (written by the thread, read by anyone).
 */
#include "dbthread.h"
#include "wire.h"

#include "skynet.h"
#include "skynet_cond.h"

#include <sqlite3.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_SIZE  64  // prepared statements kept per database
#define SQL_SHOWN   60  // characters of SQL an error message quotes
#define ERR_MAX     512 // bytes of an error message
#define BUSY_MS_MAX 3600000

enum fixed_stmt {
	FIXED_BEGIN,
	FIXED_COMMIT,
	FIXED_ROLLBACK,
	FIXED_SAVEPOINT,
	FIXED_RELEASE,
	FIXED_ROLLBACK_TO,
	FIXED_COUNT,
};

struct cached_stmt {
	uint64_t hash;
	size_t len;
	char *sql;          // owned: len bytes
	sqlite3_stmt *stmt; // owned
	uint64_t used;      // cache->clock at the last use
};

struct stmt_cache {
	struct cached_stmt entry[CACHE_SIZE];
	int count;
	uint64_t clock; // counts lookups
};

struct sqlite_db {
	ATOM_INT ref;
	uint32_t owner;
	pthread_t thread;
	struct skynet_cond cond; // covers the five fields below
	struct sqlite_req *head; // owned: the queue
	struct sqlite_req *tail; // borrowed: head's last
	bool stopped;            // the thread takes no more requests
	bool abandoned;          // nobody will join; end when the queue is empty
	bool finished;           // the thread has closed the database, about to end
	ATOM_U64 commits;
	ATOM_U64 requests;
	/* The thread's alone. */
	sqlite3 *conn; // owned, NULL until opened and after a close
	bool readonly;
	bool preparing; // compiling a service's SQL: transaction statements are refused
	sqlite3_stmt *fixed[FIXED_COUNT]; // owned, with conn
	struct stmt_cache cache;
};

/* The message of a failed request. */
struct run_error {
	char text[ERR_MAX];
};

struct sqlite_req *
sqlite_req_create(int kind, uint32_t id, size_t len) {
	struct sqlite_req *req = skynet_malloc(sizeof(*req) + len);
	req->next = NULL;
	req->id = id;
	req->kind = kind;
	req->len = len;
	return req;
}

static void
set_error(struct run_error *e, const char *what, const char *sql, size_t sql_len) {
	int shown = (int)(sql_len < SQL_SHOWN ? sql_len : SQL_SHOWN);
	snprintf(e->text, sizeof(e->text), "sqlite: %s (%.*s)", what, shown, sql);
}

/*
 * The authorizer: while a service's SQL compiles, refuse BEGIN, COMMIT,
 * ROLLBACK, SAVEPOINT and RELEASE, which would end or split the group's
 * transaction (the thread runs its own).
 */
static int
authorize(void *ud, int action, const char *a, const char *b, const char *c, const char *d) {
	const struct sqlite_db *db = ud;
	if (db->preparing && (action == SQLITE_TRANSACTION || action == SQLITE_SAVEPOINT))
		return SQLITE_DENY;
	return SQLITE_OK;
}

static void
set_prepare_error(struct sqlite_db *db, struct run_error *e, int rc, const char *sql, size_t len) {
	if (rc == SQLITE_AUTH)
		set_error(e, "transaction statements are not allowed here", sql, len);
	else
		set_error(e, sqlite3_errmsg(db->conn), sql, len);
}

/* The statement cache. */

static uint64_t
hash_sql(const char *sql, size_t len) {
	uint64_t h = 14695981039346656037ull; // FNV-1a
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)sql[i];
		h *= 1099511628211ull;
	}
	return h;
}

static sqlite3_stmt *
cache_find(struct stmt_cache *c, uint64_t hash, const char *sql, size_t len) {
	c->clock++;
	for (int i = 0; i < c->count; i++) {
		struct cached_stmt *e = &c->entry[i];
		if (e->hash == hash && e->len == len && memcmp(e->sql, sql, len) == 0) {
			e->used = c->clock;
			return e->stmt;
		}
	}
	return NULL;
}

/* Keep stmt (owned from now on) for sql; finalizes the least recently used when full. */
static void
cache_add(struct stmt_cache *c, uint64_t hash, const char *sql, size_t len, sqlite3_stmt *stmt) {
	int slot = c->count;
	if (slot == CACHE_SIZE) {
		slot = 0;
		for (int i = 1; i < CACHE_SIZE; i++) {
			if (c->entry[i].used < c->entry[slot].used)
				slot = i;
		}
		sqlite3_finalize(c->entry[slot].stmt);
		skynet_free(c->entry[slot].sql);
	} else {
		c->count++;
	}
	struct cached_stmt *e = &c->entry[slot];
	e->hash = hash;
	e->len = len;
	e->sql = skynet_malloc(len > 0 ? len : 1);
	memcpy(e->sql, sql, len);
	e->stmt = stmt;
	e->used = c->clock;
}

static void
cache_clear(struct stmt_cache *c) {
	for (int i = 0; i < c->count; i++) {
		sqlite3_finalize(c->entry[i].stmt);
		skynet_free(c->entry[i].sql);
	}
	c->count = 0;
}

/* The connection. */

static bool
is_blank(const char *s, const char *end) {
	for (; s < end; s++) {
		if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r' && *s != ';')
			return false;
	}
	return true;
}

/*
 * Prepare sql into *stmt. *cached tells whether the cache owns it (else the
 * caller finalizes it); *single whether sql is one statement only (a text
 * that is not is a script; *stmt is then its first statement, uncached).
 * *stmt is NULL for a text with no statement. False with e set on a
 * compile error.
 */
static bool
prepare(struct sqlite_db *db, const char *sql, size_t len, sqlite3_stmt **stmt, bool *cached,
        bool *single, struct run_error *e) {
	uint64_t hash = hash_sql(sql, len);
	*stmt = cache_find(&db->cache, hash, sql, len);
	*cached = *single = true;
	if (*stmt != NULL)
		return true;
	const char *tail = NULL;
	db->preparing = true;
	int rc = sqlite3_prepare_v3(db->conn, sql, (int)len, SQLITE_PREPARE_PERSISTENT, stmt, &tail);
	db->preparing = false;
	if (rc != SQLITE_OK) {
		set_prepare_error(db, e, rc, sql, len);
		return false;
	}
	*single = tail == NULL || is_blank(tail, sql + len);
	*cached = *stmt != NULL && *single;
	if (*cached)
		cache_add(&db->cache, hash, sql, len, *stmt);
	return true;
}

static bool
step_fixed(struct sqlite_db *db, enum fixed_stmt which, struct run_error *e) {
	sqlite3_stmt *stmt = db->fixed[which];
	int rc = sqlite3_step(stmt);
	if (rc != SQLITE_DONE && e != NULL)
		set_error(e, sqlite3_errmsg(db->conn), sqlite3_sql(stmt), strlen(sqlite3_sql(stmt)));
	sqlite3_reset(stmt);
	return rc == SQLITE_DONE;
}

static bool
prepare_fixed(struct sqlite_db *db) {
	const char *text[FIXED_COUNT] = {
	    [FIXED_BEGIN] = db->readonly ? "BEGIN" : "BEGIN IMMEDIATE",
	    [FIXED_COMMIT] = "COMMIT",
	    [FIXED_ROLLBACK] = "ROLLBACK",
	    [FIXED_SAVEPOINT] = "SAVEPOINT request",
	    [FIXED_RELEASE] = "RELEASE request",
	    [FIXED_ROLLBACK_TO] = "ROLLBACK TO request",
	};
	for (int i = 0; i < FIXED_COUNT; i++) {
		if (sqlite3_prepare_v3(db->conn, text[i], -1, SQLITE_PREPARE_PERSISTENT, &db->fixed[i],
		                       NULL) != SQLITE_OK)
			return false;
	}
	return true;
}

static void
close_conn(struct sqlite_db *db) {
	if (db->conn == NULL)
		return;
	cache_clear(&db->cache);
	for (int i = 0; i < FIXED_COUNT; i++) {
		sqlite3_finalize(db->fixed[i]);
		db->fixed[i] = NULL;
	}
	sqlite3_close_v2(db->conn);
	db->conn = NULL;
}

/* Binding and stepping. */

/* Bind the nparams values r holds to stmt. False with e set on a mismatch. */
static bool
bind_params(sqlite3_stmt *stmt, struct wire_reader *r, uint32_t nparams, struct run_error *e,
            const char *sql, size_t sql_len) {
	int want = sqlite3_bind_parameter_count(stmt);
	if ((uint32_t)want != nparams) {
		char what[96];
		snprintf(what, sizeof(what), "%u parameters given, the statement has %d", nparams, want);
		set_error(e, what, sql, sql_len);
		return false;
	}
	for (int i = 1; i <= want; i++) {
		uint8_t type = wire_get_u8(r);
		size_t n;
		const char *s;
		int64_t iv;
		double fv;
		switch (type) {
		case WIRE_INT:
			sqlite3_bind_int64(stmt, i, wire_get_i64(r));
			break;
		case WIRE_FLOAT:
			iv = wire_get_i64(r);
			memcpy(&fv, &iv, sizeof(fv));
			sqlite3_bind_double(stmt, i, fv);
			break;
		case WIRE_TEXT:
			s = wire_get_str(r, &n);
			sqlite3_bind_text64(stmt, i, s ? s : "", n, SQLITE_STATIC, SQLITE_UTF8);
			break;
		case WIRE_BLOB:
			s = wire_get_str(r, &n);
			sqlite3_bind_blob64(stmt, i, s ? s : "", n, SQLITE_STATIC);
			break;
		default:
			sqlite3_bind_null(stmt, i);
			break;
		}
	}
	return true;
}

static void
put_value(struct wire_buf *out, sqlite3_stmt *stmt, int col) {
	switch (sqlite3_column_type(stmt, col)) {
	case SQLITE_INTEGER:
		wire_put_u8(out, WIRE_INT);
		wire_put_i64(out, sqlite3_column_int64(stmt, col));
		break;
	case SQLITE_FLOAT: {
		double fv = sqlite3_column_double(stmt, col);
		int64_t iv;
		memcpy(&iv, &fv, sizeof(iv));
		wire_put_u8(out, WIRE_FLOAT);
		wire_put_i64(out, iv);
		break;
	}
	case SQLITE_TEXT: {
		const unsigned char *s = sqlite3_column_text(stmt, col);
		wire_put_u8(out, WIRE_TEXT);
		wire_put_str(out, s, (size_t)sqlite3_column_bytes(stmt, col));
		break;
	}
	case SQLITE_BLOB: {
		const void *s = sqlite3_column_blob(stmt, col);
		wire_put_u8(out, WIRE_BLOB);
		wire_put_str(out, s, (size_t)sqlite3_column_bytes(stmt, col));
		break;
	}
	default:
		wire_put_u8(out, WIRE_NULL);
		break;
	}
}

/*
 * Step stmt to its end. With rows, writes a WIRE_ROWS result to out, else a
 * WIRE_CHANGES one (out NULL: writes nothing). Resets stmt and clears its
 * bindings in every case. False with e set on an error.
 */
static bool
step_all(struct sqlite_db *db, sqlite3_stmt *stmt, bool rows, struct wire_buf *out,
         struct run_error *e, const char *sql, size_t sql_len) {
	int ncols = sqlite3_column_count(stmt);
	size_t nrows_at = 0;
	uint32_t nrows = 0;
	if (rows && out != NULL) {
		wire_put_u8(out, WIRE_ROWS);
		wire_put_u32(out, (uint32_t)ncols);
		for (int i = 0; i < ncols; i++) {
			const char *name = sqlite3_column_name(stmt, i);
			if (name == NULL) // out of memory in SQLite
				name = "";
			wire_put_str(out, name, strlen(name));
		}
		nrows_at = out->len;
		wire_put_u32(out, 0);
	}
	int rc;
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		if (!rows || out == NULL)
			continue;
		for (int i = 0; i < ncols; i++)
			put_value(out, stmt, i);
		nrows++;
	}
	bool ok = rc == SQLITE_DONE;
	if (!ok)
		set_error(e, sqlite3_errmsg(db->conn), sql, sql_len);
	else if (rows && out != NULL)
		memcpy(out->p + nrows_at, &nrows, sizeof(nrows));
	else if (out != NULL) {
		wire_put_u8(out, WIRE_CHANGES);
		wire_put_i64(out, sqlite3_stmt_readonly(stmt) ? 0 : sqlite3_changes64(db->conn));
		wire_put_i64(out, sqlite3_last_insert_rowid(db->conn));
	}
	sqlite3_reset(stmt);
	sqlite3_clear_bindings(stmt);
	return ok;
}

/*
 * A script: several statements in one text, no parameters. Each is
 * prepared and run in turn, uncached, its rows dropped; writes the
 * WIRE_CHANGES result of the last one to out.
 */
static bool
run_script(struct sqlite_db *db, const char *sql, size_t len, struct wire_buf *out,
           struct run_error *e) {
	const char *at = sql, *end = sql + len;
	int64_t changes = 0;
	while (at < end && !is_blank(at, end)) {
		sqlite3_stmt *stmt = NULL;
		const char *tail = end;
		db->preparing = true;
		int rc = sqlite3_prepare_v2(db->conn, at, (int)(end - at), &stmt, &tail);
		db->preparing = false;
		if (rc != SQLITE_OK) {
			set_prepare_error(db, e, rc, at, (size_t)(end - at));
			return false;
		}
		if (stmt != NULL) {
			bool ok = step_all(db, stmt, false, NULL, e, at, (size_t)(tail - at));
			changes = sqlite3_stmt_readonly(stmt) ? 0 : sqlite3_changes64(db->conn);
			sqlite3_finalize(stmt);
			if (!ok)
				return false;
		}
		at = tail;
	}
	wire_put_u8(out, WIRE_CHANGES);
	wire_put_i64(out, changes);
	wire_put_i64(out, sqlite3_last_insert_rowid(db->conn));
	return true;
}

/* One statement of a request: r is at its str sql. */
static bool
run_statement(struct sqlite_db *db, int kind, struct wire_reader *r, struct wire_buf *out,
              struct run_error *e) {
	size_t len;
	const char *sql = wire_get_str(r, &len);
	uint32_t nparams = wire_get_u32(r);
	if (r->bad) {
		snprintf(e->text, sizeof(e->text), "sqlite: malformed request");
		return false;
	}
	bool cached, single;
	sqlite3_stmt *stmt;
	if (!prepare(db, sql, len, &stmt, &cached, &single, e))
		return false;
	if (!single || stmt == NULL) {
		if (!cached)
			sqlite3_finalize(stmt);
		if (nparams == 0 && kind != WIRE_QUERY)
			return run_script(db, sql, len, out, e);
		set_error(e, "one statement expected (query runs one; a script takes no parameters)", sql,
		          len);
		return false;
	}
	bool ok = bind_params(stmt, r, nparams, e, sql, len);
	if (ok) {
		bool rows = kind == WIRE_QUERY || (kind == WIRE_BATCH && sqlite3_column_count(stmt) > 0);
		ok = step_all(db, stmt, rows, out, e, sql, len);
	} else {
		sqlite3_clear_bindings(stmt);
	}
	if (!cached)
		sqlite3_finalize(stmt);
	return ok;
}

/* Run req's statements inside its savepoint; its results go to out. */
static bool
run_request(struct sqlite_db *db, struct sqlite_req *req, struct wire_buf *out,
            struct run_error *e) {
	if (!step_fixed(db, FIXED_SAVEPOINT, e))
		return false;
	struct wire_reader r = {.p = req->body, .left = req->len, .bad = 0};
	uint32_t count = wire_get_u32(&r);
	if (req->kind == WIRE_BATCH)
		wire_put_u32(out, count);
	bool ok = !r.bad;
	for (uint32_t i = 0; ok && i < count; i++)
		ok = run_statement(db, req->kind, &r, out, e);
	if (!ok && !sqlite3_get_autocommit(db->conn))
		step_fixed(db, FIXED_ROLLBACK_TO, NULL);
	if (!sqlite3_get_autocommit(db->conn))
		step_fixed(db, FIXED_RELEASE, NULL);
	return ok;
}

static void
put_error(struct wire_buf *out, uint32_t id, const char *text) {
	wire_put_u32(out, id);
	wire_put_u8(out, WIRE_ERR);
	wire_put_str(out, text, strlen(text));
}

/* The head of a successful answer; its results follow. */
static void
put_ok(struct wire_buf *out, const struct sqlite_req *req) {
	wire_put_u32(out, req->id);
	wire_put_u8(out, (uint8_t)req->kind);
}

/* Answer every request of reqs[0..n) with the same error. */
static void
fail_group(struct sqlite_req **reqs, int n, struct wire_buf *out, const char *text) {
	for (int i = 0; i < n; i++)
		put_error(out, reqs[i]->id, text);
}

/* The data requests reqs[0..n) in one transaction (see the top comment). */
static void
run_group(struct sqlite_db *db, struct sqlite_req **reqs, int n, struct wire_buf *out) {
	struct run_error e;
	if (db->conn == NULL) {
		fail_group(reqs, n, out, "sqlite: database is closed");
		return;
	}
	size_t mark = out->len;
	if (!step_fixed(db, FIXED_BEGIN, &e)) {
		fail_group(reqs, n, out, e.text);
		return;
	}
	for (int i = 0; i < n; i++) {
		size_t record = out->len;
		put_ok(out, reqs[i]);
		if (run_request(db, reqs[i], out, &e))
			continue;
		out->len = record;
		put_error(out, reqs[i]->id, e.text);
		if (sqlite3_get_autocommit(db->conn)) { // SQLite rolled the transaction back
			out->len = mark;
			fail_group(reqs, n, out, e.text);
			return;
		}
	}
	if (step_fixed(db, FIXED_COMMIT, &e)) {
		ATOM_FINC(&db->commits);
		return;
	}
	if (!sqlite3_get_autocommit(db->conn))
		step_fixed(db, FIXED_ROLLBACK, NULL);
	out->len = mark;
	fail_group(reqs, n, out, e.text);
}

/* Opening. */

struct open_opts {
	int sync;
	bool wal, readonly, create, exclusive;
	int busy_ms;
	char *path; // owned
};

static bool
read_open_opts(struct sqlite_req *req, struct open_opts *o) {
	struct wire_reader r = {.p = req->body, .left = req->len, .bad = 0};
	o->sync = wire_get_u8(&r);
	o->wal = wire_get_u8(&r);
	o->readonly = wire_get_u8(&r);
	o->create = wire_get_u8(&r);
	o->exclusive = wire_get_u8(&r);
	int64_t busy = wire_get_i64(&r);
	o->busy_ms = busy < 0 ? 0 : busy > BUSY_MS_MAX ? BUSY_MS_MAX : (int)busy;
	size_t n;
	const char *path = wire_get_str(&r, &n);
	if (r.bad)
		return false;
	o->path = skynet_malloc(n + 1);
	memcpy(o->path, path, n);
	o->path[n] = '\0';
	return true;
}

/* Run one setup statement, dropping its rows. */
static bool
setup(sqlite3 *conn, const char *sql) {
	return sqlite3_exec(conn, sql, NULL, NULL, NULL) == SQLITE_OK;
}

/* Open and probe the file (a read of sqlite_master, then a write lock). */
static bool
open_conn(struct sqlite_db *db, const struct open_opts *o) {
	int flags = SQLITE_OPEN_NOMUTEX;
	flags |= o->readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
	if (o->create && !o->readonly)
		flags |= SQLITE_OPEN_CREATE;
	if (sqlite3_open_v2(o->path, &db->conn, flags, NULL) != SQLITE_OK)
		return false;
	static const char *sync_sql[] = {
	    [WIRE_SYNC_OFF] = "PRAGMA synchronous=OFF",
	    [WIRE_SYNC_NORMAL] = "PRAGMA synchronous=NORMAL",
	    [WIRE_SYNC_FULL] = "PRAGMA synchronous=FULL",
	};
	sqlite3_busy_timeout(db->conn, o->busy_ms);
	sqlite3_set_authorizer(db->conn, authorize, db);
	if (o->exclusive && !setup(db->conn, "PRAGMA locking_mode=EXCLUSIVE"))
		return false;
	if (!setup(db->conn, "SELECT count(*) FROM sqlite_master"))
		return false;
	if (o->wal && !o->readonly && !setup(db->conn, "PRAGMA journal_mode=WAL"))
		return false;
	if (!setup(db->conn, sync_sql[o->sync <= WIRE_SYNC_FULL ? o->sync : WIRE_SYNC_FULL]))
		return false;
	if (!o->readonly) {
		const char *probe = o->exclusive ? "BEGIN EXCLUSIVE" : "BEGIN IMMEDIATE";
		if (!setup(db->conn, probe))
			return false;
		if (!setup(db->conn, "ROLLBACK"))
			return false;
	}
	db->readonly = o->readonly;
	return prepare_fixed(db);
}

/* Handle an OPEN: answers it into out. Returns whether the db is open. */
static bool
handle_open(struct sqlite_db *db, struct sqlite_req *req, struct wire_buf *out) {
	struct open_opts o;
	if (db->conn != NULL || !read_open_opts(req, &o)) {
		put_error(out, req->id, "sqlite: malformed open request");
		return false;
	}
	bool ok = open_conn(db, &o);
	if (ok) {
		put_ok(out, req);
	} else {
		char text[ERR_MAX];
		const char *why = db->conn ? sqlite3_errmsg(db->conn) : "out of memory";
		snprintf(text, sizeof(text), "sqlite: cannot open %s: %s", o.path, why);
		put_error(out, req->id, text);
		close_conn(db);
	}
	skynet_free(o.path);
	return ok;
}

/* The thread. */

static void
post_answers(struct sqlite_db *db, struct wire_buf *out, int n) {
	ATOM_FADD(&db->requests, (uint64_t)n);
	if (out->len > 0) {
		// Fails only when the owner is gone; skynet_send then frees the buffer.
		(void)skynet_send(NULL, db->owner, db->owner, PTYPE_SQLITE | PTYPE_TAG_DONTCOPY, 0, out->p,
		                  out->len);
	} else {
		skynet_free(out->p);
	}
	out->p = NULL;
	out->len = out->cap = 0;
	skynet_outside_add(-n);
}

/* Every queued request, oldest first; waits for one. NULL: abandoned and drained. */
static struct sqlite_req *
take_all(struct sqlite_db *db) {
	skynet_cond_lock(&db->cond);
	while (db->head == NULL && !db->abandoned)
		skynet_cond_wait(&db->cond);
	struct sqlite_req *list = db->head;
	db->head = db->tail = NULL;
	if (list == NULL)
		db->stopped = true;
	skynet_cond_unlock(&db->cond);
	return list;
}

static void
free_list(struct sqlite_req *list) {
	while (list != NULL) {
		struct sqlite_req *next = list->next;
		skynet_free(list);
		list = next;
	}
}

/*
 * Handle what take_all returned, in order, and post the answers as one
 * message. Returns false once the thread must end (a CLOSE, a failed OPEN).
 */
static bool
run_list(struct sqlite_db *db, struct sqlite_req *list) {
	struct wire_buf out = {NULL, 0, 0};
	int total = 0, ngroup = 0;
	for (struct sqlite_req *req = list; req != NULL; req = req->next)
		total++;
	struct sqlite_req **group = skynet_malloc(sizeof(*group) * (size_t)total);
	bool running = true;
	for (struct sqlite_req *req = list; req != NULL; req = req->next) {
		bool data = req->kind == WIRE_EXEC || req->kind == WIRE_QUERY || req->kind == WIRE_BATCH;
		if (data && running) {
			group[ngroup++] = req;
			continue;
		}
		if (ngroup > 0)
			run_group(db, group, ngroup, &out);
		ngroup = 0;
		if (!running) {
			put_error(&out, req->id, "sqlite: database is closed");
		} else if (req->kind == WIRE_OPEN) {
			running = handle_open(db, req, &out);
		} else { // WIRE_CLOSE
			close_conn(db);
			put_ok(&out, req);
			running = false;
		}
	}
	if (ngroup > 0)
		run_group(db, group, ngroup, &out);
	skynet_free(group);
	post_answers(db, &out, total);
	free_list(list);
	return running;
}

/* Refuse further requests and answer those still queued. */
static void
stop(struct sqlite_db *db) {
	skynet_cond_lock(&db->cond);
	db->stopped = true;
	struct sqlite_req *list = db->head;
	db->head = db->tail = NULL;
	skynet_cond_unlock(&db->cond);
	close_conn(db);
	struct wire_buf out = {NULL, 0, 0};
	int n = 0;
	for (struct sqlite_req *req = list; req != NULL; req = req->next, n++)
		put_error(&out, req->id, "sqlite: database is closed");
	if (n > 0)
		post_answers(db, &out, n);
	free_list(list);
	skynet_cond_lock(&db->cond);
	db->finished = true;
	bool owed = db->abandoned;
	skynet_cond_unlock(&db->cond);
	if (owed)
		skynet_outside_add(-1); // sqlite_db_abandon's job is done
}

static void *
db_main(void *arg) {
	struct sqlite_db *db = arg;
	for (;;) {
		struct sqlite_req *list = take_all(db);
		if (list == NULL || !run_list(db, list))
			break;
	}
	stop(db);
	sqlite_db_release(db); // the thread's reference
	return NULL;
}

struct sqlite_db *
sqlite_db_create(uint32_t owner) {
	struct sqlite_db *db = skynet_malloc(sizeof(*db));
	memset(db, 0, sizeof(*db));
	ATOM_INIT(&db->ref, 2); // the caller's userdata, the thread
	db->owner = owner;
	skynet_cond_init(&db->cond);
	ATOM_INIT(&db->commits, 0);
	ATOM_INIT(&db->requests, 0);
	if (pthread_create(&db->thread, NULL, db_main, db) != 0) {
		skynet_cond_destroy(&db->cond);
		skynet_free(db);
		return NULL;
	}
	return db;
}

int
sqlite_db_submit(struct sqlite_db *db, struct sqlite_req *req) {
	req->next = NULL;
	skynet_cond_lock(&db->cond);
	if (db->stopped) {
		skynet_cond_unlock(&db->cond);
		skynet_free(req);
		return SKYNET_EDEAD;
	}
	bool was_empty = db->head == NULL;
	if (db->tail != NULL)
		db->tail->next = req;
	else
		db->head = req;
	db->tail = req;
	skynet_outside_add(1); // under the lock: before the thread can answer it
	if (was_empty)         // else the thread is awake already, or will find the queue
		skynet_cond_signal(&db->cond);
	skynet_cond_unlock(&db->cond);
	return 0;
}

void
sqlite_db_join(struct sqlite_db *db) {
	if (pthread_join(db->thread, NULL) != 0)
		abort();
}

void
sqlite_db_abandon(struct sqlite_db *db) {
	skynet_cond_lock(&db->cond);
	db->abandoned = true;
	if (!db->finished)
		skynet_outside_add(1); // until the thread has closed the database
	skynet_cond_signal(&db->cond);
	skynet_cond_unlock(&db->cond);
	if (pthread_detach(db->thread) != 0)
		abort();
}

void
sqlite_db_release(struct sqlite_db *db) {
	if (db == NULL || ATOM_FDEC(&db->ref) != 1)
		return;
	free_list(db->head);
	skynet_cond_destroy(&db->cond);
	skynet_free(db);
}

void
sqlite_db_stats(struct sqlite_db *db, uint64_t *commits, uint64_t *requests) {
	*commits = ATOM_LOAD(&db->commits);
	*requests = ATOM_LOAD(&db->requests);
}
