/*
 * Crash tombstones: the file a node writes when a fatal signal (SIGSEGV,
 * SIGBUS, SIGFPE, SIGILL, SIGABRT) reaches it, whether the kernel raised it
 * for a fault, abort() did, or someone sent it (`kill -SEGV`). The file
 * format and the limits are in docs/tombstones.md.
 *
 * Data. One record per thread that dispatches messages (a worker, or the
 * main thread when it flushes the logger), claimed from the static array
 * SLOTS on the thread's first dispatch and found again through the
 * thread-local SELF. A record holds the handle running now (0: none), the
 * label of the last service it ran ("module param", copied from the
 * context when the service changes: the handler never follows a pointer
 * into a context, which another thread may free meanwhile), a count of
 * the messages it dispatched, and a ring of the last TOMB_RING of them
 * (source, destination, type, session, size). Only the owning thread
 * writes its record; the only other reader is the handler, which reads
 * it while the owner may go on writing: a value can be torn or a line
 * one message old, never out of bounds (the label is read up to its
 * fixed size, the ring index is taken modulo TOMB_RING). No lock; the
 * running handle and the count are relaxed atomics, nothing pairs with
 * them but the handler's reads.
 *
 * The handler does only async-signal-safe work: clock_gettime, getpid,
 * gettid, open, write, close, sigaction, raise, nanosleep and loads from
 * memory prepared beforehand. It allocates nothing and takes no lock: the
 * text is built in the static OUT buffer with the appenders below (no
 * stdio), the file name's prefix (an absolute path) and the log file's
 * path were copied at init, backtrace() was called once at init so that
 * libgcc's unwinder is loaded before a fault needs it, and
 * backtrace_symbols_fd writes straight to the file without malloc.
 *
 * The Lua stack of the crashing thread comes from the stack writer a
 * module registered (skynet_tombstone_set_stack; snlua's, in
 * service-src/snlua/tombstone.c), called on the crashing thread only: the
 * state it walks is the one this thread was running, which no other
 * thread touches, and the walk only reads it. The other workers' states
 * are being run by their threads at this moment; reading them could see
 * them mid-change, so their stacks are reported as not captured (their
 * service and recent messages still are). The risky parts (the Lua walk
 * and the C backtrace, which read a state the fault may have damaged)
 * come last, after everything read from the records is written.
 *
 * Order and second faults. WRITER holds the kernel thread id of the one
 * thread writing. The handler blocks all five signals while it runs, so a
 * fault inside it (a damaged stack, a state the walk cannot read) is
 * delivered while blocked, and the kernel then kills the process at once
 * with that signal. A fatal signal on another thread while one is writing
 * waits up to TOMB_WAIT_MS for the writer to finish and kill the process,
 * then dies itself. When done, the handler restores the default action
 * and raises the signal again: it is delivered when the handler returns,
 * so the process still dies of it, with a core dump where they are on.
 * Each worker gets an alternate signal stack on its first dispatch (the
 * main thread at init), so a stack overflow there is reported too.
 */
#include "skynet_tombstone.h"

#include "skynet.h"
#include "atomic.h"

#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define TOMB_RING        16   // messages kept per worker
#define TOMB_SLOTS       1040 // threads that may dispatch: 1024 workers and a few more
#define TOMB_OUT         8192 // bytes of text built before a write
#define TOMB_FRAMES      64   // C frames in the backtrace
#define TOMB_WAIT_MS     2000 // another thread's fault waits this long for the writer
#define TOMB_ALTSTACK    (64 * 1024)
#define TOMB_PATH_MAX    (PATH_MAX + 64)
#define TOMB_NAME_SUFFIX 48 // "tombstone-<pid>-<seconds>.txt"

/* Sanitizer builds leave the fatal signals to the sanitizer (skynet_tombstone.h). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || defined(SKYNET_TSAN)
#define TOMB_SANITIZER true
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TOMB_SANITIZER true
#endif
#endif
#ifndef TOMB_SANITIZER
#define TOMB_SANITIZER false
#endif

struct tomb_msg {
	uint32_t source;
	uint32_t destination;
	int32_t session;
	int32_t type;
	size_t size;
};

/* One dispatching thread's record; written by that thread, read by the handler. */
struct tomb_worker {
	ATOM_U32 running; // handle of the service running now, 0: none
	ATOM_U64 count;   // messages dispatched; the newest is ring[(count - 1) % TOMB_RING]
	ATOM_ULONG tid;   // kernel thread id, 0 until the slot is claimed; also read by the profiler
	uint32_t label_of;
	char label[SKYNET_TOMBSTONE_LABEL]; // label_of's "module param"
	struct tomb_msg ring[TOMB_RING];
};

/* A buffer of text on its way to fd. */
struct skynet_tombstone_out {
	int fd;
	size_t len;
	char buf[TOMB_OUT];
};

static struct tomb_worker SLOTS[TOMB_SLOTS];
static ATOM_INT SLOTS_USED;
static struct tomb_worker SPARE; // for threads past TOMB_SLOTS: recorded, never reported
static __thread struct tomb_worker *SELF __attribute__((tls_model("initial-exec")));

static bool INSTALLED;              // handlers in place (not in a sanitizer build)
static char PREFIX[TOMB_PATH_MAX];  // "<absolute dir>/tombstone-"
static char LOGFILE[TOMB_PATH_MAX]; // the logger's file, "" for none
static ATOM_POINTER STACK_CB;       // skynet_tombstone_stack_cb
static ATOM_ULONG WRITER;           // tid of the thread writing, 0: none
static struct skynet_tombstone_counters COUNTERS;
static struct skynet_tombstone_out OUT; // the writer's only: WRITER guards it

static const int SIGNALS[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define SIGNALS_COUNT (sizeof(SIGNALS) / sizeof(SIGNALS[0]))

/* ---- the worker side ---------------------------------------------------- */

/* Give the calling thread a stack for the handler, so a stack overflow is reported too. */
static void
give_altstack(void) {
	stack_t ss;
	ss.ss_sp = skynet_malloc(TOMB_ALTSTACK); // kept for the process: the thread may fault any time
	ss.ss_size = TOMB_ALTSTACK;
	ss.ss_flags = 0;
	if (sigaltstack(&ss, NULL) != 0)
		skynet_free(ss.ss_sp);
}

static struct tomb_worker *
claim_slot(void) {
	int i = ATOM_FINC(&SLOTS_USED);
	struct tomb_worker *w = i < TOMB_SLOTS ? &SLOTS[i] : &SPARE;
	ATOM_STORE_RELAXED(&w->tid, (ATOM_ULONG)syscall(SYS_gettid)); // readers skip a 0
	if (INSTALLED && w != &SPARE)
		give_altstack();
	SELF = w;
	return w;
}

void
skynet_tombstone_enter(uint32_t handle, const char *label, uint32_t source, int type, int session,
                       size_t sz) {
	struct tomb_worker *w = SELF;
	if (w == NULL)
		w = claim_slot();
	if (w->label_of != handle) {
		w->label_of = handle;
		memcpy(w->label, label, SKYNET_TOMBSTONE_LABEL);
	}
	uint64_t n = ATOM_LOAD_RELAXED(&w->count); // this thread is the only writer
	struct tomb_msg *m = &w->ring[n % TOMB_RING];
	m->source = source;
	m->destination = handle;
	m->session = session;
	m->type = type;
	m->size = sz;
	ATOM_STORE_RELAXED(&w->count, n + 1); // read by the handler only, which tolerates a torn line
	ATOM_STORE_RELAXED(&w->running, handle);
}

void
skynet_tombstone_leave(void) {
	ATOM_STORE_RELAXED(&SELF->running, 0); // read by the handler and the profiler's sampler
}

int
skynet_tombstone_threads(void) {
	int used = ATOM_LOAD(&SLOTS_USED);
	return used < TOMB_SLOTS ? used : TOMB_SLOTS;
}

uint32_t
skynet_tombstone_running(int i, long *tid) {
	/* Relaxed: a stale handle costs one sample at most (the sampler's receiver checks again). */
	*tid = (long)ATOM_LOAD_RELAXED(&SLOTS[i].tid);
	return ATOM_LOAD_RELAXED(&SLOTS[i].running);
}

/* ---- async-signal-safe text --------------------------------------------- */

static void
out_flush(struct skynet_tombstone_out *out) {
	size_t done = 0;
	while (done < out->len) {
		ssize_t n = write(out->fd, out->buf + done, out->len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; // nothing to do: the rest is lost with the disk
		done += (size_t)n;
	}
	out->len = 0;
}

static void
out_bytes(struct skynet_tombstone_out *out, const char *s, size_t n) {
	while (n > 0) {
		if (out->len == TOMB_OUT)
			out_flush(out);
		size_t room = TOMB_OUT - out->len;
		size_t k = n < room ? n : room;
		memcpy(out->buf + out->len, s, k);
		out->len += k;
		s += k;
		n -= k;
	}
}

void
skynet_tombstone_puts(struct skynet_tombstone_out *out, const char *s) {
	out_bytes(out, s, strlen(s));
}

void
skynet_tombstone_putint(struct skynet_tombstone_out *out, long long v) {
	char digits[24];
	int i = sizeof(digits);
	unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
	do {
		digits[--i] = (char)('0' + u % 10);
		u /= 10;
	} while (u > 0);
	if (v < 0)
		digits[--i] = '-';
	out_bytes(out, digits + i, sizeof(digits) - i);
}

/* width hex digits (at least; more when v needs them), no prefix. */
static void
out_hex(struct skynet_tombstone_out *out, uint64_t v, int width) {
	char digits[16];
	int i = sizeof(digits);
	do {
		digits[--i] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v > 0 || (int)sizeof(digits) - i < width);
	out_bytes(out, digits + i, sizeof(digits) - i);
}

static void
out_handle(struct skynet_tombstone_out *out, uint32_t handle) {
	out_bytes(out, ":", 1);
	out_hex(out, handle, 8);
}

/* Two digits, zero-padded. */
static void
out_2(struct skynet_tombstone_out *out, unsigned v) {
	char d[2] = {(char)('0' + v / 10 % 10), (char)('0' + v % 10)};
	out_bytes(out, d, 2);
}

/* A UTC time as 2026-11-27T12:04:05.123Z (days to a civil date, no gmtime: it may lock). */
static void
out_utc(struct skynet_tombstone_out *out, const struct timespec *ts) {
	long long days = ts->tv_sec / 86400;
	long secs = (long)(ts->tv_sec % 86400);
	long long z = days + 719468;
	long long era = z / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	unsigned day = doy - (153 * mp + 2) / 5 + 1;
	unsigned month = mp < 10 ? mp + 3 : mp - 9;
	long long year = (long long)yoe + era * 400 + (month <= 2);
	skynet_tombstone_putint(out, year);
	out_bytes(out, "-", 1);
	out_2(out, month);
	out_bytes(out, "-", 1);
	out_2(out, day);
	out_bytes(out, "T", 1);
	out_2(out, (unsigned)(secs / 3600));
	out_bytes(out, ":", 1);
	out_2(out, (unsigned)(secs / 60 % 60));
	out_bytes(out, ":", 1);
	out_2(out, (unsigned)(secs % 60));
	out_bytes(out, ".", 1);
	unsigned ms = (unsigned)(ts->tv_nsec / 1000000);
	out_2(out, ms / 10);
	out_bytes(out, &"0123456789"[ms % 10], 1);
	out_bytes(out, "Z", 1);
}

static const char *
signal_name(int sig) {
	switch (sig) {
	case SIGSEGV:
		return "SIGSEGV";
	case SIGBUS:
		return "SIGBUS";
	case SIGFPE:
		return "SIGFPE";
	case SIGILL:
		return "SIGILL";
	case SIGABRT:
		return "SIGABRT";
	}
	return "?";
}

static const char *
type_name(int type) {
	static const char *const NAMES[] = {
	    "text",  "response", "multicast", "client", "system", "harbor", "socket",
	    "error", "queue",    "debug",     "lua",    "snax",   "trace",  "sqlite",
	};
	if (type >= 0 && type < (int)(sizeof(NAMES) / sizeof(NAMES[0])))
		return NAMES[type];
	return NULL;
}

/* ---- the tombstone ------------------------------------------------------ */

static void
write_header(struct skynet_tombstone_out *out, int sig, const siginfo_t *si,
             const struct timespec *now, long tid) {
	skynet_tombstone_puts(out, "skywheel tombstone\ntime: ");
	out_utc(out, now);
	skynet_tombstone_puts(out, " (");
	skynet_tombstone_putint(out, (long long)now->tv_sec);
	skynet_tombstone_puts(out, ")\npid: ");
	skynet_tombstone_putint(out, getpid());
	skynet_tombstone_puts(out, "\nsignal: ");
	skynet_tombstone_putint(out, sig);
	skynet_tombstone_puts(out, " (");
	skynet_tombstone_puts(out, signal_name(sig));
	skynet_tombstone_puts(out, ") code=");
	skynet_tombstone_putint(out, si->si_code);
	if (si->si_code <= 0) {
		/* Sent: kill, tgkill (raise, abort) or sigqueue; there is no fault address. */
		skynet_tombstone_puts(out, "\nsender: pid ");
		skynet_tombstone_putint(out, si->si_pid);
		skynet_tombstone_puts(out, " uid ");
		skynet_tombstone_putint(out, si->si_uid);
		if (si->si_pid == getpid())
			skynet_tombstone_puts(out, " (this process: abort or raise)");
	} else {
		skynet_tombstone_puts(out, " addr=0x");
		out_hex(out, (uint64_t)(uintptr_t)si->si_addr, 1);
		skynet_tombstone_puts(out, "\nsender: kernel (a fault at addr)");
	}
	skynet_tombstone_puts(out, "\nthread: tid ");
	skynet_tombstone_putint(out, tid);
	struct tomb_worker *self = SELF;
	if (self != NULL && self != &SPARE) {
		skynet_tombstone_puts(out, " (worker ");
		skynet_tombstone_putint(out, self - SLOTS);
		skynet_tombstone_puts(out, ")\n");
	} else {
		skynet_tombstone_puts(out, " (not a worker)\n");
	}
}

static void
write_counters(struct skynet_tombstone_out *out, int workers) {
	uint64_t messages = 0;
	for (int i = 0; i < workers; i++)
		messages += ATOM_LOAD_RELAXED(&SLOTS[i].count); // the handler's read of the owner's store
	skynet_tombstone_puts(out, "counters: services=");
	skynet_tombstone_putint(out, COUNTERS.services ? COUNTERS.services() : -1);
	skynet_tombstone_puts(out, " released=");
	skynet_tombstone_putint(out, COUNTERS.released ? (long long)COUNTERS.released() : -1);
	skynet_tombstone_puts(out, " messages=");
	skynet_tombstone_putint(out, (long long)messages);
	skynet_tombstone_puts(out, " workers=");
	skynet_tombstone_putint(out, workers);
	skynet_tombstone_puts(out, "\n");
}

static void
write_message(struct skynet_tombstone_out *out, int age, const struct tomb_msg *m, bool running) {
	skynet_tombstone_puts(out, "    #");
	skynet_tombstone_putint(out, age);
	skynet_tombstone_puts(out, " source=");
	out_handle(out, m->source);
	skynet_tombstone_puts(out, " dest=");
	out_handle(out, m->destination);
	skynet_tombstone_puts(out, " type=");
	const char *name = type_name(m->type);
	if (name != NULL)
		skynet_tombstone_puts(out, name);
	else
		skynet_tombstone_putint(out, m->type);
	skynet_tombstone_puts(out, " session=");
	skynet_tombstone_putint(out, m->session);
	skynet_tombstone_puts(out, " size=");
	skynet_tombstone_putint(out, (long long)m->size);
	skynet_tombstone_puts(out, running ? " (running)\n" : "\n");
}

/* The label, read up to its fixed size: the owner may be rewriting it. */
static void
write_label(struct skynet_tombstone_out *out, const struct tomb_worker *w) {
	size_t n = 0;
	while (n < SKYNET_TOMBSTONE_LABEL && w->label[n] != '\0')
		n++;
	out_bytes(out, w->label, n);
}

static void
write_worker(struct skynet_tombstone_out *out, int i, const struct tomb_worker *self) {
	const struct tomb_worker *w = &SLOTS[i];
	uint32_t running = ATOM_LOAD_RELAXED(&w->running);
	uint64_t count = ATOM_LOAD_RELAXED(&w->count);
	skynet_tombstone_puts(out, "worker ");
	skynet_tombstone_putint(out, i);
	skynet_tombstone_puts(out, " tid ");
	skynet_tombstone_putint(out, (long long)ATOM_LOAD_RELAXED(&w->tid));
	skynet_tombstone_puts(out, w == self ? " (crashed here)" : "");
	if (running != 0) {
		skynet_tombstone_puts(out, ": running ");
		out_handle(out, running);
		skynet_tombstone_puts(out, " \"");
		write_label(out, w);
		skynet_tombstone_puts(out, "\"\n  lua stack: ");
		skynet_tombstone_puts(out, w == self ? "below (lua stack of the crashing thread)\n"
		                                     : "running, not captured (another thread runs it)\n");
	} else {
		skynet_tombstone_puts(out, ": idle\n");
	}
	skynet_tombstone_puts(out, "  messages: ");
	skynet_tombstone_putint(out, (long long)count);
	skynet_tombstone_puts(out, ", newest first:\n");
	uint64_t kept = count < TOMB_RING ? count : TOMB_RING;
	for (uint64_t k = 0; k < kept; k++) {
		const struct tomb_msg *m = &w->ring[(count - 1 - k) % TOMB_RING];
		write_message(out, (int)k, m, k == 0 && running != 0);
	}
}

static void
write_lua_stack(struct skynet_tombstone_out *out, const struct tomb_worker *self) {
	skynet_tombstone_puts(out, "lua stack of the crashing thread:\n");
	skynet_tombstone_stack_cb cb = (skynet_tombstone_stack_cb)ATOM_LOAD(&STACK_CB);
	if (self == NULL || ATOM_LOAD_RELAXED(&self->running) == 0) {
		skynet_tombstone_puts(out, "  none (no service was running on this thread)\n");
		return;
	}
	if (cb == NULL) {
		skynet_tombstone_puts(out, "  none (no module registered a stack writer)\n");
		return;
	}
	out_flush(out); // all above is on disk if the walk faults
	cb(out);
}

static void
write_backtrace(struct skynet_tombstone_out *out) {
	skynet_tombstone_puts(out, "c backtrace of the crashing thread:\n");
	out_flush(out);
	void *frames[TOMB_FRAMES];
	int n = backtrace(frames, TOMB_FRAMES);
	backtrace_symbols_fd(frames, n, out->fd);
}

static void
write_tombstone(struct skynet_tombstone_out *out, int sig, const siginfo_t *si,
                const struct timespec *now, long tid) {
	int workers = ATOM_LOAD(&SLOTS_USED);
	if (workers > TOMB_SLOTS)
		workers = TOMB_SLOTS;
	struct tomb_worker *self = SELF == &SPARE ? NULL : SELF;
	write_header(out, sig, si, now, tid);
	write_counters(out, workers);
	for (int i = 0; i < workers; i++)
		write_worker(out, i, self);
	/* What may fault again comes last: the state walk, then the unwinder. */
	write_lua_stack(out, self);
	write_backtrace(out);
	skynet_tombstone_puts(out, "end of tombstone\n");
	out_flush(out);
}

/* "<PREFIX><pid>-<seconds>.txt" into path. */
static void
make_path(char *path, const struct timespec *now) {
	struct skynet_tombstone_out *out = &OUT;
	out->len = 0;
	skynet_tombstone_puts(out, PREFIX);
	skynet_tombstone_putint(out, getpid());
	skynet_tombstone_puts(out, "-");
	skynet_tombstone_putint(out, (long long)now->tv_sec);
	skynet_tombstone_puts(out, ".txt");
	memcpy(path, out->buf, out->len);
	path[out->len] = '\0';
	out->len = 0;
}

/* "[:00000000] error: tombstone: signal=... file=..." to fd. */
static void
log_line(int fd, int sig, const char *path, bool opened) {
	struct skynet_tombstone_out *out = &OUT;
	out->fd = fd;
	out->len = 0;
	skynet_tombstone_puts(out, "[:00000000] error: tombstone: signal=");
	skynet_tombstone_puts(out, signal_name(sig));
	skynet_tombstone_puts(out, opened ? " file=" : " written to stderr, could not open file=");
	skynet_tombstone_puts(out, path);
	skynet_tombstone_puts(out, "\n");
	out_flush(out);
}

static void
log_everywhere(int sig, const char *path, bool opened) {
	log_line(STDERR_FILENO, sig, path, opened);
	if (LOGFILE[0] == '\0')
		return;
	int fd = open(LOGFILE, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return;
	log_line(fd, sig, path, opened);
	(void)close(fd); // nothing to do on failure
}

/* Die of sig: default action, raised again; delivered once the handler returns. */
static void
die(int sig) {
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	raise(sig);
}

/* Another thread writes a tombstone: give it time to finish (it kills the process). */
static void
wait_for_writer(void) {
	struct timespec ms = {0, 1000000};
	for (int i = 0; i < TOMB_WAIT_MS; i++)
		nanosleep(&ms, NULL);
}

static void
on_fatal(int sig, siginfo_t *si, void *uctx) {
	long tid = (long)syscall(SYS_gettid);
	if (!ATOM_CAS(&WRITER, 0, (ATOM_ULONG)tid)) {
		wait_for_writer();
		die(sig);
		return;
	}
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	static char path[TOMB_PATH_MAX + TOMB_NAME_SUFFIX];
	make_path(path, &now);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	OUT.fd = fd >= 0 ? fd : STDERR_FILENO;
	OUT.len = 0;
	write_tombstone(&OUT, sig, si, &now, tid);
	if (fd >= 0)
		(void)close(fd); // nothing to do on failure
	log_everywhere(sig, path, fd >= 0);
	die(sig);
}

/* ---- set-up ------------------------------------------------------------- */

void
skynet_tombstone_set_stack(skynet_tombstone_stack_cb cb) {
	ATOM_STORE(&STACK_CB, (void *)cb);
}

/* PREFIX = absolute dir + "/tombstone-"; warns when dir is not a writable folder. */
static int
set_prefix(const char *dir) {
	char cwd[PATH_MAX];
	const char *base = "";
	if (dir == NULL || strcmp(dir, ".") == 0)
		dir = "";
	if (dir[0] != '/') {
		if (getcwd(cwd, sizeof(cwd)) == NULL) {
			fprintf(stderr, "skynet: tombstone: cannot read the working folder err=%d\n", errno);
			return SKYNET_EINVAL;
		}
		base = cwd;
	}
	const char *sep = base[0] != '\0' && dir[0] != '\0' ? "/" : "";
	int n = snprintf(PREFIX, sizeof(PREFIX), "%s%s%s/tombstone-", base, sep, dir);
	if (n < 0 || (size_t)n >= sizeof(PREFIX) - TOMB_NAME_SUFFIX) {
		fprintf(stderr, "skynet: config: tombstone_dir is too long (%s)\n", dir);
		return SKYNET_EINVAL;
	}
	PREFIX[n - strlen("/tombstone-")] = '\0';
	if (access(PREFIX, W_OK) != 0)
		fprintf(stderr,
		        "skynet: config: tombstone_dir %s is not a writable folder; a crash file "
		        "would go to stderr\n",
		        PREFIX);
	PREFIX[n - strlen("/tombstone-")] = '/';
	return 0;
}

int
skynet_tombstone_init(const char *dir, const char *logfile,
                      const struct skynet_tombstone_counters *counters) {
	if (set_prefix(dir) != 0)
		return SKYNET_EINVAL;
	if (logfile != NULL && strlen(logfile) < sizeof(LOGFILE))
		strcpy(LOGFILE, logfile);
	COUNTERS = *counters;
	if (TOMB_SANITIZER)
		return 0;
	void *frames[2];
	(void)backtrace(frames, 2); // loads libgcc's unwinder now, not in the handler
	INSTALLED = true;
	give_altstack();
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fatal;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < SIGNALS_COUNT; i++)
		sigaddset(&sa.sa_mask, SIGNALS[i]); // a fault inside the handler kills at once
	for (size_t i = 0; i < SIGNALS_COUNT; i++)
		sigaction(SIGNALS[i], &sa, NULL);
	return 0;
}
