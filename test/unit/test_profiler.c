/*
 * The sampling profiler's core (skynet-src/skynet_profiler.c) without a
 * node: tickets, the folded text, the last profile, bad arguments, and
 * records from several threads while profiles start and stop (run under
 * TSan by make test-tsan). No worker runs here, so the sampler thread
 * signals nobody: the samples are recorded by hand.
 */
#include "skynet.h"
#include "skynet_profiler.h"
#include "tt.h"

#include <pthread.h>
#include <string.h>

#define REC(ticket, s) skynet_profiler_record((ticket), (s), strlen(s), 1000)

static void
counts_and_orders_stacks(int *failed) {
	TT_CHECK(skynet_profiler_start(0, 100) == 0);
	uint32_t ticket = skynet_profiler_wants(7);
	TT_CHECK(ticket != 0);
	REC(ticket, "a :00000007;f;g");
	REC(ticket, "b :00000008;h");
	REC(ticket, "b :00000008;h");
	struct skynet_profiler_status st;
	skynet_profiler_status(&st);
	TT_CHECK(st.samples == 3 && st.cost_ns == 3000 && st.stacks == 2);
	size_t len = 0;
	uint64_t samples = 0;
	char *text = skynet_profiler_stop(&len, &samples);
	TT_CHECK(text != NULL && strcmp(text, "b :00000008;h 2\na :00000007;f;g 1\n") == 0);
	TT_CHECK(len == strlen("b :00000008;h 2\na :00000007;f;g 1\n") && samples == 3);
	char *last = skynet_profiler_last(&len, &samples);
	TT_CHECK(last != NULL && text != NULL && strcmp(last, text) == 0);
	skynet_free(text);
	skynet_free(last);
	TT_CHECK(skynet_profiler_wants(7) == 0);
	TT_CHECK(skynet_profiler_stop(&len, NULL) == NULL);
}

static void
a_late_sample_is_not_the_next_profile(int *failed) {
	TT_CHECK(skynet_profiler_start(0, 100) == 0);
	uint32_t first = skynet_profiler_wants(9);
	size_t len;
	skynet_free(skynet_profiler_stop(&len, NULL));
	REC(first, "x :00000009;after stop");
	TT_CHECK(skynet_profiler_start(0, 100) == 0);
	uint32_t second = skynet_profiler_wants(9);
	TT_CHECK(second != 0 && second != first);
	REC(first, "x :00000009;owed to the first");
	REC(second, "y :0000000a;the second's");
	uint64_t samples = 0;
	char *text = skynet_profiler_stop(&len, &samples);
	TT_CHECK(text != NULL && strcmp(text, "y :0000000a;the second's 1\n") == 0 && samples == 1);
	skynet_free(text);
}

static void
target_and_arguments(int *failed) {
	TT_CHECK(skynet_profiler_start(0, 0) == SKYNET_EINVAL);
	TT_CHECK(skynet_profiler_start(0, SKYNET_PROFILER_HZ_MAX + 1) == SKYNET_EINVAL);
	TT_CHECK(skynet_profiler_start(5, SKYNET_PROFILER_HZ_MAX) == 0);
	TT_CHECK(skynet_profiler_start(0, 100) == SKYNET_EBUSY);
	TT_CHECK(skynet_profiler_wants(5) != 0);
	TT_CHECK(skynet_profiler_wants(6) == 0);
	struct skynet_profiler_status st;
	skynet_profiler_status(&st);
	TT_CHECK(st.running && st.target == 5 && st.hz == SKYNET_PROFILER_HZ_MAX && st.has_last);
	size_t len;
	skynet_free(skynet_profiler_stop(&len, NULL));
	skynet_profiler_status(&st);
	TT_CHECK(!st.running && st.last_samples == 0);
}

struct recorder {
	int rounds;
	int stop;
};

static void *
record_loop(void *ud) {
	struct recorder *r = ud;
	while (!__atomic_load_n(&r->stop, __ATOMIC_SEQ_CST)) {
		uint32_t ticket = skynet_profiler_wants(3);
		if (ticket != 0)
			REC(ticket, "s :00000003;loop");
		r->rounds++;
	}
	return NULL;
}

static void
records_while_starting_and_stopping(int *failed) {
	struct recorder r[2] = {{0, 0}, {0, 0}};
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		TT_CHECK(pthread_create(&t[i], NULL, record_loop, &r[i]) == 0);
	int profiles = tt_stress() ? 400 : 100;
	uint64_t total = 0;
	for (int i = 0; i < profiles; i++) {
		TT_CHECK(skynet_profiler_start(i % 2 ? 3 : 0, SKYNET_PROFILER_HZ_MAX) == 0);
		size_t len;
		uint64_t samples = 0;
		char *text = skynet_profiler_stop(&len, &samples);
		TT_CHECK(text != NULL);
		/* every sample counted is in the text, as one line */
		if (samples > 0)
			TT_CHECK(text != NULL && strstr(text, "s :00000003;loop ") == text);
		total += samples;
		skynet_free(text);
	}
	for (int i = 0; i < 2; i++) {
		__atomic_store_n(&r[i].stop, 1, __ATOMIC_SEQ_CST);
		pthread_join(t[i], NULL);
	}
	TT_CHECK(r[0].rounds > 0 && r[1].rounds > 0);
	printf("     (%d profiles, %llu samples)\n", profiles, (unsigned long long)total);
}

int
main(void) {
	TT_RUN(counts_and_orders_stacks);
	TT_RUN(a_late_sample_is_not_the_next_profile);
	TT_RUN(target_and_arguments);
	TT_RUN(records_while_starting_and_stopping);
	skynet_profiler_exit();
	return tt_summary();
}
