/*
 * skynet_budget: parsing limits and the config's rules, and the decision
 * after a batch, driven with explicit clock values.
 */
#include "skynet_budget.h"

#include "tt.h"

#include <string.h>

#define MS 1000ull
#define S  1000000ull

static void
parse_changes_only_the_keys_given(int *failed) {
	struct skynet_budget b = {.cpu_us_per_s = 5 * MS, .queue = 7, .memory_bytes = 0, .policy = 0};
	char err[96];
	TT_CHECK(skynet_budget_parse("memory_mb=3  policy=kill", &b, err, sizeof(err)) == 0);
	TT_CHECK(b.cpu_us_per_s == 5 * MS && b.queue == 7);
	TT_CHECK(b.memory_bytes == 3ull << 20 && b.policy == BUDGET_KILL);
	TT_CHECK(skynet_budget_parse("off", &b, err, sizeof(err)) == 0);
	TT_CHECK(b.cpu_us_per_s == 0 && b.queue == 0 && b.memory_bytes == 0 && b.policy == BUDGET_KILL);
	char text[128];
	b.cpu_us_per_s = 250 * MS;
	skynet_budget_format(&b, text, sizeof(text));
	TT_CHECK(strcmp(text, "cpu_ms_per_s=250 memory_mb=0 queue=0 policy=kill") == 0);
}

static void
parse_rejects_bad_input_and_keeps_the_budget(int *failed) {
	struct skynet_budget b = {.cpu_us_per_s = 5 * MS, .queue = 7, .memory_bytes = 0, .policy = 0};
	struct skynet_budget keep = b;
	char err[96];
	TT_CHECK(skynet_budget_parse("queue=5 cpu=3", &b, err, sizeof(err)) != 0);
	TT_CHECK(strstr(err, "unknown key (cpu)") != NULL);
	TT_CHECK(skynet_budget_parse("queue=-1", &b, err, sizeof(err)) != 0);
	TT_CHECK(strstr(err, "bad queue (-1)") != NULL);
	TT_CHECK(skynet_budget_parse("policy=stop", &b, err, sizeof(err)) != 0);
	TT_CHECK(strstr(err, "bad policy (stop)") != NULL);
	TT_CHECK(skynet_budget_parse("memory_mb", &b, err, sizeof(err)) != 0);
	TT_CHECK(skynet_budget_parse("cpu_ms_per_s=1x", &b, err, sizeof(err)) != 0);
	TT_CHECK(memcmp(&b, &keep, sizeof(b)) == 0);
}

static void
rules_match_labels_first_match_wins(int *failed) {
	char err[96];
	TT_CHECK(
	    skynet_budget_rules("snlua agent*: cpu_ms_per_s=200 policy=throttle; snlua *: queue=10;"
	                        " logger: off",
	                        err, sizeof(err)) == 0);
	struct skynet_budget b;
	skynet_budget_for("snlua agent 3", &b);
	TT_CHECK(b.cpu_us_per_s == 200 * MS && b.policy == BUDGET_THROTTLE && b.queue == 0);
	skynet_budget_for("snlua chat", &b);
	TT_CHECK(b.queue == 10 && b.cpu_us_per_s == 0 && b.policy == BUDGET_WARN);
	skynet_budget_for("logger", &b);
	TT_CHECK(b.queue == 0 && b.cpu_us_per_s == 0 && b.memory_bytes == 0);
	skynet_budget_for("gate", &b); // no rule: the default
	TT_CHECK(b.cpu_us_per_s == 1000 * MS && b.memory_bytes == 1024ull << 20 && b.queue == 0);
	TT_CHECK(skynet_budget_rules("agent cpu_ms_per_s=1", err, sizeof(err)) != 0);
	TT_CHECK(strstr(err, "without ':'") != NULL);
	TT_CHECK(skynet_budget_rules("a: queue=x", err, sizeof(err)) != 0);
	skynet_budget_for("snlua agent 3", &b); // a refused set keeps the rules
	TT_CHECK(b.cpu_us_per_s == 200 * MS);
	skynet_budget_rules_free();
	skynet_budget_for("snlua agent 3", &b);
	TT_CHECK(b.cpu_us_per_s == 1000 * MS);
}

static struct skynet_budget_sample
at(uint64_t now_us, uint64_t cpu_us, uint64_t messages) {
	struct skynet_budget_sample s = {.now_us = now_us, .cpu_us = cpu_us, .messages = messages};
	return s;
}

static void
warn_logs_once_per_period_and_counts_each_window(int *failed) {
	struct skynet_budget b = {.cpu_us_per_s = 10 * MS, .policy = BUDGET_WARN};
	struct skynet_budget_track t;
	skynet_budget_track_init(&t, &b);
	struct skynet_budget_stat before, after;
	skynet_budget_stat(&before);
	struct skynet_budget_report r;
	struct skynet_budget_sample s = at(1 * S, 0, 0);
	TT_CHECK(skynet_budget_step(&t, &s, &r) == VERDICT_NONE); // the first window begins
	s = at(1 * S + 100 * MS, 11 * MS, 5);
	TT_CHECK(skynet_budget_step(&t, &s, &r) == VERDICT_LOG);
	TT_CHECK(r.measure == BUDGET_CPU && r.used == 11 * MS && r.limit == 10 * MS && r.log);
	TT_CHECK(!skynet_budget_cpu_over(&t, 11 * MS)); // warn: the batch runs on
	TT_CHECK(ATOM_LOAD(&t.state) & BUDGET_STATE_OVER_CPU);
	s = at(1 * S + 200 * MS, 30 * MS, 6); // same window: no new line, no new count
	TT_CHECK(skynet_budget_step(&t, &s, &r) == VERDICT_NONE);
	s = at(2 * S + 300 * MS, 50 * MS, 7); // the next window begins
	TT_CHECK(skynet_budget_step(&t, &s, &r) == VERDICT_NONE);
	s = at(2 * S + 400 * MS, 61 * MS, 8); // over again: counted, no line before 10 s
	TT_CHECK(skynet_budget_step(&t, &s, &r) == VERDICT_NONE);
	skynet_budget_stat(&after);
	TT_CHECK(after.overruns[BUDGET_CPU] == before.overruns[BUDGET_CPU] + 2);
	s = at(12 * S, 80 * MS, 9); // a new window, the period is over
	TT_CHECK(skynet_budget_step(&t, &s, &r) == VERDICT_NONE);
	s = at(12 * S + 1, 91 * MS, 9);
	TT_CHECK(skynet_budget_step(&t, &s, &r) == VERDICT_LOG);
	TT_CHECK(r.overruns == 2); // the window at 2.3 s and this one
}

static void
throttle_parks_until_the_window_ends(int *failed) {
	struct skynet_budget b = {.cpu_us_per_s = 10 * MS, .queue = 5, .policy = BUDGET_THROTTLE};
	struct skynet_budget_track t;
	skynet_budget_track_init(&t, &b);
	struct skynet_budget_report r;
	struct skynet_budget_sample s = at(5 * S, 100 * MS, 0);
	TT_CHECK(skynet_budget_step(&t, &s, &r) == VERDICT_NONE);
	TT_CHECK(!skynet_budget_cpu_over(&t, 109 * MS));
	TT_CHECK(skynet_budget_cpu_over(&t, 111 * MS));
	s = at(5 * S + 300 * MS, 111 * MS, 3);
	TT_CHECK(skynet_budget_step(&t, &s, &r) == VERDICT_PARK);
	TT_CHECK(r.park_us == 700 * MS && r.measure == BUDGET_CPU);
	s = at(6 * S, 111 * MS, 3); // woken: a new window
	TT_CHECK(skynet_budget_step(&t, &s, &r) == VERDICT_NONE);
	TT_CHECK(!(ATOM_LOAD(&t.state) & BUDGET_STATE_OVER_CPU));
	s = at(6 * S + 10 * MS, 112 * MS, 4);
	s.mqlen = 9; // a queue over its limit under throttle only warns
	enum skynet_budget_verdict v = skynet_budget_step(&t, &s, &r);
	TT_CHECK(v == VERDICT_LOG || v == VERDICT_NONE);
	TT_CHECK(ATOM_LOAD(&t.state) & BUDGET_STATE_OVER_QUEUE);
}

static void
kill_on_any_measure(int *failed) {
	struct skynet_budget b = {.memory_bytes = 1 << 20, .policy = BUDGET_KILL};
	struct skynet_budget_track t;
	skynet_budget_track_init(&t, &b);
	struct skynet_budget_report r;
	struct skynet_budget_sample s = at(1 * S, 0, 0);
	s.lua_bytes = 1 << 20;
	TT_CHECK(skynet_budget_step(&t, &s, &r) == VERDICT_NONE); // at the limit is not over it
	s.lua_bytes = (1 << 20) + 1;
	s.mqlen = 1000000; // queue not watched
	TT_CHECK(skynet_budget_step(&t, &s, &r) == VERDICT_KILL);
	TT_CHECK(r.measure == BUDGET_MEMORY && r.used == (1 << 20) + 1);
}

static void
rates_are_over_the_last_complete_window(int *failed) {
	struct skynet_budget b = {.cpu_us_per_s = 1000 * MS};
	struct skynet_budget_track t;
	skynet_budget_track_init(&t, &b);
	struct skynet_budget_report r;
	uint32_t cpu, msgs;
	skynet_budget_rates(&t, 1 * S, 0, 0, &cpu, &msgs);
	TT_CHECK(cpu == 0 && msgs == 0); // never ran
	struct skynet_budget_sample s = at(1 * S, 0, 0);
	skynet_budget_step(&t, &s, &r);
	s = at(1 * S + 500 * MS, 200 * MS, 40);
	skynet_budget_step(&t, &s, &r);
	skynet_budget_rates(&t, 1 * S + 600 * MS, 200 * MS, 40, &cpu, &msgs);
	TT_CHECK(cpu == 0 && msgs == 0); // no window complete yet
	skynet_budget_rates(&t, 2 * S + 100 * MS, 200 * MS, 40, &cpu, &msgs);
	TT_CHECK(cpu == 200 * MS && msgs == 40); // complete, not rolled
	skynet_budget_rates(&t, 2 * S + 900 * MS, 200 * MS, 40, &cpu, &msgs);
	TT_CHECK(cpu == 200 * MS && msgs == 40); // the same figure until the next window ends
	skynet_budget_rates(&t, 3 * S + 100 * MS, 200 * MS, 40, &cpu, &msgs);
	TT_CHECK(cpu == 0 && msgs == 0); // the last complete window was idle
	s = at(3 * S, 300 * MS, 50);     // rolled after 2 s: per second of its length
	skynet_budget_step(&t, &s, &r);
	skynet_budget_rates(&t, 3 * S + 1, 300 * MS, 50, &cpu, &msgs);
	TT_CHECK(cpu == 150 * MS && msgs == 25);
}

int
main(void) {
	TT_RUN(parse_changes_only_the_keys_given);
	TT_RUN(parse_rejects_bad_input_and_keeps_the_budget);
	TT_RUN(rules_match_labels_first_match_wins);
	TT_RUN(warn_logs_once_per_period_and_counts_each_window);
	TT_RUN(throttle_parks_until_the_window_ends);
	TT_RUN(kill_on_any_measure);
	TT_RUN(rates_are_over_the_last_complete_window);
	return tt_summary();
}
