/*
 * Per-service budgets: limits, the config's rules, and the decision after a
 * batch. The context layer (skynet_server.c) carries the decision out.
 *
 * Measures. CPU: the time a worker spent inside the service's callback
 * (skynet_server.c counts it per message, CLOCK_MONOTONIC, so time the
 * worker thread was preempted counts too; needs config profile = true),
 * counted per window of BUDGET_WINDOW_US. A window begins at the first
 * batch end after the previous one is over, so a window lasts at least 1 s
 * and the limit (per second) is never stricter than stated. Memory: the Lua
 * heap snlua's allocator counts, as of the last batch end. Queue: the
 * messages waiting at the last batch end.
 *
 * Decision (skynet_budget_step), after each batch:
 * - kill: any measure over -> VERDICT_KILL;
 * - throttle: CPU over -> VERDICT_PARK until the window ends (the worker
 *   stops the batch as soon as the limit is passed, skynet_budget_cpu_over,
 *   so the overshoot is one message). Deferring cannot bring a heap or a
 *   queue down, so memory and queue overruns are handled as warn;
 * - warn, and throttle's memory and queue: VERDICT_LOG, one line per service
 *   per BUDGET_WARN_PERIOD_US, which says how many windows were over since
 *   the previous line.
 * Each window over a limit counts once per measure in OVERRUNS.
 *
 * Rules. The config key `budget` is parsed once at boot into RULES: an array
 * of (glob, budget); a service's label ("snlua agent 3") is matched with
 * fnmatch against each in turn. Read-only after boot, so no lock.
 */
#include "skynet_budget.h"

#include "skynet.h"

#include <ctype.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUDGET_MAX_CPU_MS   1000000 // cpu_ms_per_s accepted up to this
#define BUDGET_MAX_MEM_MB   (1024 * 1024)
#define BUDGET_MAX_QUEUE    0x7fffffff
#define BUDGET_RULE_PATTERN 128

/*
 * A budget nobody meets in a normal game: a whole core, 1 GB of Lua heap.
 * The queue is not watched by default (reading its length takes the queue's
 * lock on every batch); the mailbox's own "May overload" warning, at 1024
 * messages and every doubling, already speaks for it.
 */
static const struct skynet_budget DEFAULT_BUDGET = {
    .cpu_us_per_s = 1000000,
    .queue = 0,
    .memory_bytes = (uint64_t)1024 * 1024 * 1024,
    .policy = BUDGET_WARN,
};

struct budget_rule {
	char pattern[BUDGET_RULE_PATTERN];
	struct skynet_budget budget;
};

static struct budget_rule *RULES; // owned; set at boot, then read-only
static int RULE_COUNT;

static ATOM_U64 OVERRUNS[BUDGET_MEASURES];
static ATOM_U64 THROTTLES;
static ATOM_U64 KILLS;

static const char *const MEASURE_NAMES[BUDGET_MEASURES] = {"cpu", "memory", "queue"};
static const char *const POLICY_NAMES[] = {"warn", "throttle", "kill"};

const char *
skynet_budget_measure_name(int measure) {
	return measure >= 0 && measure < BUDGET_MEASURES ? MEASURE_NAMES[measure] : "?";
}

const char *
skynet_budget_policy_name(int policy) {
	return policy >= BUDGET_WARN && policy <= BUDGET_KILL ? POLICY_NAMES[policy] : "?";
}

/* A whole non-negative decimal number up to max, or -1. */
static long long
parse_count(const char *v, long long max) {
	if (!isdigit((unsigned char)v[0]))
		return -1;
	char *end;
	long long n = strtoll(v, &end, 10);
	return *end == '\0' && n <= max ? n : -1;
}

/* Apply one "key=value" to b; returns 0 or SKYNET_EINVAL with err filled. */
static int
parse_pair(const char *key, const char *value, struct skynet_budget *b, char *err, size_t errsz) {
	long long n = -1;
	if (strcmp(key, "policy") == 0) {
		for (int p = BUDGET_WARN; p <= BUDGET_KILL; p++) {
			if (strcmp(value, POLICY_NAMES[p]) == 0) {
				b->policy = p;
				return 0;
			}
		}
		snprintf(err, errsz, "bad policy (%s): warn, throttle or kill", value);
		return SKYNET_EINVAL;
	} else if (strcmp(key, "cpu_ms_per_s") == 0) {
		if ((n = parse_count(value, BUDGET_MAX_CPU_MS)) >= 0) {
			b->cpu_us_per_s = (uint32_t)(n * 1000);
			return 0;
		}
	} else if (strcmp(key, "memory_mb") == 0) {
		if ((n = parse_count(value, BUDGET_MAX_MEM_MB)) >= 0) {
			b->memory_bytes = (uint64_t)n * 1024 * 1024;
			return 0;
		}
	} else if (strcmp(key, "queue") == 0) {
		if ((n = parse_count(value, BUDGET_MAX_QUEUE)) >= 0) {
			b->queue = (uint32_t)n;
			return 0;
		}
	} else {
		snprintf(err, errsz, "unknown key (%s)", key);
		return SKYNET_EINVAL;
	}
	snprintf(err, errsz, "bad %s (%s): a whole number, 0 for no limit", key, value);
	return SKYNET_EINVAL;
}

int
skynet_budget_parse(const char *text, struct skynet_budget *b, char *err, size_t errsz) {
	struct skynet_budget nb = *b;
	const char *p = text;
	for (;;) {
		p += strspn(p, " \t\r\n");
		if (*p == '\0')
			break;
		size_t len = strcspn(p, " \t\r\n");
		char word[64];
		if (len >= sizeof(word)) {
			snprintf(err, errsz, "word too long (%.20s...)", p);
			return SKYNET_EINVAL;
		}
		memcpy(word, p, len);
		word[len] = '\0';
		p += len;
		if (strcmp(word, "off") == 0) {
			nb.cpu_us_per_s = 0;
			nb.memory_bytes = 0;
			nb.queue = 0;
			continue;
		}
		char *eq = strchr(word, '=');
		if (eq == NULL) {
			snprintf(err, errsz, "expected key=value (%s)", word);
			return SKYNET_EINVAL;
		}
		*eq = '\0';
		if (parse_pair(word, eq + 1, &nb, err, errsz) != 0)
			return SKYNET_EINVAL;
	}
	*b = nb;
	return 0;
}

void
skynet_budget_format(const struct skynet_budget *b, char *buf, size_t sz) {
	snprintf(buf, sz, "cpu_ms_per_s=%" PRIu32 " memory_mb=%" PRIu64 " queue=%" PRIu32 " policy=%s",
	         b->cpu_us_per_s / 1000, b->memory_bytes / (1024 * 1024), b->queue,
	         skynet_budget_policy_name(b->policy));
}

/* Parse one "glob: key=value ..." rule of len bytes at text into r. */
static int
parse_rule(const char *text, size_t len, struct budget_rule *r, char *err, size_t errsz) {
	const char *colon = memchr(text, ':', len);
	if (colon == NULL) {
		snprintf(err, errsz, "rule without ':' (%.*s)", (int)(len > 40 ? 40 : len), text);
		return SKYNET_EINVAL;
	}
	const char *g = text;
	const char *gend = colon;
	while (g < gend && isspace((unsigned char)*g))
		g++;
	while (gend > g && isspace((unsigned char)gend[-1]))
		gend--;
	if (gend == g || (size_t)(gend - g) >= sizeof(r->pattern)) {
		snprintf(err, errsz, "empty or too long pattern in rule (%.*s)", (int)(len > 40 ? 40 : len),
		         text);
		return SKYNET_EINVAL;
	}
	memcpy(r->pattern, g, (size_t)(gend - g));
	r->pattern[gend - g] = '\0';
	size_t blen = len - (size_t)(colon + 1 - text);
	char *body = skynet_malloc(blen + 1);
	memcpy(body, colon + 1, blen);
	body[blen] = '\0';
	/* A rule starts from no limit with policy warn: what it omits is not watched. */
	memset(&r->budget, 0, sizeof(r->budget));
	int e = skynet_budget_parse(body, &r->budget, err, errsz);
	skynet_free(body);
	return e;
}

int
skynet_budget_rules(const char *rules, char *err, size_t errsz) {
	if (rules == NULL || rules[0] == '\0') {
		skynet_budget_rules_free();
		return 0;
	}
	int cap = 1;
	for (const char *p = rules; *p; p++)
		cap += *p == ';';
	struct budget_rule *list = skynet_calloc((size_t)cap, sizeof(*list));
	int n = 0;
	const char *p = rules;
	while (*p) {
		size_t len = strcspn(p, ";");
		if (strspn(p, " \t\r\n") < len) { // not blank
			if (parse_rule(p, len, &list[n], err, errsz) != 0) {
				skynet_free(list);
				return SKYNET_EINVAL;
			}
			n++;
		}
		p += len;
		if (*p == ';')
			p++;
	}
	skynet_budget_rules_free();
	RULES = list;
	RULE_COUNT = n;
	return 0;
}

void
skynet_budget_rules_free(void) {
	skynet_free(RULES);
	RULES = NULL;
	RULE_COUNT = 0;
}

void
skynet_budget_for(const char *label, struct skynet_budget *out) {
	for (int i = 0; i < RULE_COUNT; i++) {
		if (fnmatch(RULES[i].pattern, label, 0) == 0) {
			*out = RULES[i].budget;
			return;
		}
	}
	*out = DEFAULT_BUDGET;
}

static int
state_of(const struct skynet_budget *b) {
	bool watched = b->cpu_us_per_s || b->memory_bytes || b->queue;
	return (watched ? BUDGET_STATE_WATCHED : 0) | (b->policy << BUDGET_STATE_POLICY_SHIFT);
}

void
skynet_budget_track_init(struct skynet_budget_track *t, const struct skynet_budget *b) {
	memset(t, 0, sizeof(*t));
	t->limit = *b;
	ATOM_INIT(&t->state, state_of(b));
}

void
skynet_budget_track_set(struct skynet_budget_track *t, const struct skynet_budget *b) {
	t->limit = *b;
	int keep = ATOM_LOAD_RELAXED(&t->state) & BUDGET_STATE_OVER_CPU;
	ATOM_STORE_RELAXED(&t->state, state_of(b) | keep);
}

/* Start a new window at s->now_us; keep the finished one's rates. Owner thread. */
static void
roll_window(struct skynet_budget_track *t, const struct skynet_budget_sample *s) {
	uint64_t start = ATOM_LOAD_RELAXED(&t->start_us);
	if (start != 0) {
		uint64_t len = s->now_us - start;
		uint64_t cpu = s->cpu_us - ATOM_LOAD_RELAXED(&t->cpu0_us);
		uint64_t msgs = s->messages - ATOM_LOAD_RELAXED(&t->messages0);
		ATOM_STORE_RELAXED(&t->cpu_rate_us, (uint32_t)(cpu * BUDGET_WINDOW_US / len));
		ATOM_STORE_RELAXED(&t->msg_rate, (uint32_t)(msgs * BUDGET_WINDOW_US / len));
	}
	ATOM_STORE_RELAXED(&t->cpu0_us, s->cpu_us);
	ATOM_STORE_RELAXED(&t->messages0, s->messages);
	ATOM_STORE_RELAXED(&t->start_us, s->now_us);
	int st = ATOM_LOAD_RELAXED(&t->state);
	ATOM_STORE_RELAXED(&t->state, st & ~BUDGET_STATE_OVER_CPU);
}

/* Which limits s passes, as BUDGET_STATE_OVER_* bits; fills used/limit of the first. */
static int
over_bits(const struct skynet_budget_track *t, const struct skynet_budget_sample *s,
          struct skynet_budget_report *r) {
	const struct skynet_budget *b = &t->limit;
	uint64_t used[BUDGET_MEASURES] = {
	    s->cpu_us - ATOM_LOAD_RELAXED(&t->cpu0_us),
	    s->lua_bytes,
	    s->mqlen > 0 ? (uint64_t)s->mqlen : 0,
	};
	uint64_t limit[BUDGET_MEASURES] = {b->cpu_us_per_s, b->memory_bytes, b->queue};
	int bits = 0;
	r->measure = -1;
	for (int m = 0; m < BUDGET_MEASURES; m++) {
		if (limit[m] == 0 || used[m] <= limit[m])
			continue;
		bits |= 1 << m;
		if (r->measure < 0) {
			r->measure = m;
			r->used = used[m];
			r->limit = limit[m];
		}
	}
	return bits;
}

enum skynet_budget_verdict
skynet_budget_step(struct skynet_budget_track *t, const struct skynet_budget_sample *s,
                   struct skynet_budget_report *r) {
	uint64_t start = ATOM_LOAD_RELAXED(&t->start_us);
	if (start == 0 || s->now_us - start >= BUDGET_WINDOW_US)
		roll_window(t, s);
	memset(r, 0, sizeof(*r));
	int bits = over_bits(t, s, r);
	int st = ATOM_LOAD_RELAXED(&t->state);
	int was = st & (BUDGET_STATE_OVER_CPU | BUDGET_STATE_OVER_MEMORY | BUDGET_STATE_OVER_QUEUE);
	/* CPU stays over for the rest of its window; memory and queue are as of now. */
	int now_over = bits | (was & BUDGET_STATE_OVER_CPU);
	ATOM_STORE_RELAXED(&t->state, (st & ~was) | now_over);
	if (bits == 0)
		return VERDICT_NONE;
	for (int m = 0; m < BUDGET_MEASURES; m++) {
		if ((bits & (1 << m)) && !(was & (1 << m)))
			ATOM_FINC(&OVERRUNS[m]); // once per window (CPU) or per stretch over (memory, queue)
	}
	if ((bits & ~was) != 0)
		t->overruns++;
	if (t->limit.policy == BUDGET_KILL) {
		ATOM_FINC(&KILLS);
		r->log = true;
		return VERDICT_KILL;
	}
	bool due = s->now_us >= t->warn_next_us;
	if (due) {
		t->warn_next_us = s->now_us + BUDGET_WARN_PERIOD_US;
		r->overruns = t->overruns;
		t->overruns = 0;
		r->log = true;
	}
	if (t->limit.policy == BUDGET_THROTTLE && (bits & BUDGET_STATE_OVER_CPU)) {
		r->measure = BUDGET_CPU;
		r->used = s->cpu_us - ATOM_LOAD_RELAXED(&t->cpu0_us);
		r->limit = t->limit.cpu_us_per_s;
		uint64_t end = ATOM_LOAD_RELAXED(&t->start_us) + BUDGET_WINDOW_US;
		r->park_us = end > s->now_us ? end - s->now_us : 0;
		ATOM_FINC(&THROTTLES);
		return VERDICT_PARK;
	}
	return due ? VERDICT_LOG : VERDICT_NONE;
}

void
skynet_budget_rates(struct skynet_budget_track *t, uint64_t now_us, uint64_t cpu_now_us,
                    uint64_t messages_now, uint32_t *cpu_rate_us, uint32_t *msg_rate) {
	uint64_t start = ATOM_LOAD_RELAXED(&t->start_us);
	*cpu_rate_us = 0;
	*msg_rate = 0;
	if (start == 0 || now_us >= start + 2 * BUDGET_WINDOW_US)
		return; // nothing ran in the last complete window
	if (now_us < start + BUDGET_WINDOW_US) {
		*cpu_rate_us = ATOM_LOAD_RELAXED(&t->cpu_rate_us);
		*msg_rate = ATOM_LOAD_RELAXED(&t->msg_rate);
		return;
	}
	/*
	 * The window in progress is complete but not rolled: no batch ended
	 * since it was due, so all it holds ran inside [start, start + window).
	 */
	uint64_t cpu = cpu_now_us - ATOM_LOAD_RELAXED(&t->cpu0_us);
	uint64_t msgs = messages_now - ATOM_LOAD_RELAXED(&t->messages0);
	*cpu_rate_us = (uint32_t)cpu;
	*msg_rate = (uint32_t)msgs;
}

void
skynet_budget_stat(struct skynet_budget_stat *out) {
	for (int m = 0; m < BUDGET_MEASURES; m++)
		out->overruns[m] = ATOM_LOAD(&OVERRUNS[m]);
	out->throttles = ATOM_LOAD(&THROTTLES);
	out->kills = ATOM_LOAD(&KILLS);
}
