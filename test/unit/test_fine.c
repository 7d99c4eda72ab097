/*
 * Unit tests of the precise timers' heap (skynet_fine.c): its order, its
 * cancel (the one added last of duplicates), retirement, and a random run
 * of adds, cancels, pops and retirements checked step by step against a
 * plain array that does the same thing slowly.
 */
#include "skynet_fine.h"

#include "skynet.h"
#include "tt.h"

#include <stdint.h>
#include <string.h>

static uint64_t
rng_next(uint64_t *s) {
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void
pops_in_deadline_then_add_order(int *failed) {
	struct skynet_fine *f = skynet_fine_create();
	skynet_fine_add(f, 1, 10, 500);
	skynet_fine_add(f, 1, 11, 300);
	skynet_fine_add(f, 2, 12, 500);
	skynet_fine_add(f, 1, 13, 100);
	TT_CHECK(skynet_fine_next(f) == 100);
	struct skynet_wheel_expired out[8];
	uint64_t due[8];
	TT_CHECK(skynet_fine_pop(f, 99, out, due, 8) == 0);
	TT_CHECK(skynet_fine_pop(f, 300, out, due, 8) == 2);
	TT_CHECK(out[0].session == 13 && out[1].session == 11 && due[1] == 300);
	TT_CHECK(skynet_fine_pop(f, 1000, out, NULL, 1) == 1 && out[0].session == 10);
	TT_CHECK(skynet_fine_pop(f, 1000, out, NULL, 8) == 1 && out[0].session == 12);
	TT_CHECK(out[0].handle == 2 && skynet_fine_next(f) == UINT64_MAX);
	skynet_fine_release(f);
}

static void
cancel_takes_the_last_of_duplicates(int *failed) {
	struct skynet_fine *f = skynet_fine_create();
	skynet_fine_add(f, 7, 1, 100);
	skynet_fine_add(f, 7, 1, 200);
	TT_CHECK(skynet_fine_pending(f, 7) == 2);
	TT_CHECK(skynet_fine_cancel(f, 7, 1) == 0);
	TT_CHECK(skynet_fine_next(f) == 100); // the one added first stays
	TT_CHECK(skynet_fine_cancel(f, 7, 1) == 0);
	TT_CHECK(skynet_fine_cancel(f, 7, 1) == SKYNET_ENOENT);
	TT_CHECK(skynet_fine_cancel(f, 8, 1) == SKYNET_ENOENT);
	TT_CHECK(skynet_fine_pending(f, 0) == 0);
	skynet_fine_release(f);
}

static void
retirement_keeps_the_rest_in_order(int *failed) {
	struct skynet_fine *f = skynet_fine_create();
	for (int i = 0; i < 1000; i++)
		skynet_fine_add(f, 1 + i % 3, i, (uint64_t)(1000 - i));
	TT_CHECK(skynet_fine_remove_service(f, 2) == 333);
	TT_CHECK(skynet_fine_pending(f, 2) == 0 && skynet_fine_pending(f, 0) == 667);
	TT_CHECK(skynet_fine_cancel(f, 1, 0) == 0); // the index was rebuilt
	struct skynet_wheel_expired out[1000];
	uint64_t due[1000];
	size_t n = skynet_fine_pop(f, UINT64_MAX, out, due, 1000);
	TT_CHECK(n == 666);
	for (size_t i = 1; i < n; i++)
		TT_CHECK(due[i - 1] <= due[i] && out[i].handle != 2);
	skynet_fine_release(f);
}

/* The model: every pending timer in the order it was added. */
struct model_timer {
	uint32_t handle;
	int session;
	uint64_t due;
	uint64_t seq;
};

#define MODEL_MAX 4096

static struct model_timer MODEL[MODEL_MAX];
static int MODEL_N;

static void
model_remove(int i) {
	memmove(&MODEL[i], &MODEL[i + 1], (size_t)(MODEL_N - i - 1) * sizeof(MODEL[0]));
	MODEL_N--;
}

/* The model's next pop at or before now: the earliest due, the first added of equals. */
static int
model_first(uint64_t now) {
	int best = -1;
	for (int i = 0; i < MODEL_N; i++)
		if (MODEL[i].due <= now && (best < 0 || MODEL[i].due < MODEL[best].due))
			best = i;
	return best;
}

static void
random_run_matches_the_model(int *failed) {
	struct skynet_fine *f = skynet_fine_create();
	uint64_t rng = 0x2545f4914f6cdd1dull;
	uint64_t now = 0;
	uint64_t seq = 0;
	MODEL_N = 0;
	for (int step = 0; step < 200000 && !*failed; step++) {
		uint64_t r = rng_next(&rng) % 100;
		if (r < 50 && MODEL_N < MODEL_MAX) {
			uint32_t handle = 1 + (uint32_t)(rng_next(&rng) % 8);
			int session = (int)(rng_next(&rng) % 64); // duplicates happen
			uint64_t due = now + rng_next(&rng) % 50;
			skynet_fine_add(f, handle, session, due);
			MODEL[MODEL_N++] = (struct model_timer){handle, session, due, seq++};
		} else if (r < 75) {
			uint32_t handle = 1 + (uint32_t)(rng_next(&rng) % 8);
			int session = (int)(rng_next(&rng) % 64);
			int last = -1;
			for (int i = 0; i < MODEL_N; i++)
				if (MODEL[i].handle == handle && MODEL[i].session == session)
					last = i;
			int err = skynet_fine_cancel(f, handle, session);
			TT_CHECK(err == (last < 0 ? SKYNET_ENOENT : 0));
			if (last >= 0)
				model_remove(last);
		} else if (r < 99) {
			now += rng_next(&rng) % 20;
			struct skynet_wheel_expired out[16];
			uint64_t due[16];
			size_t n = skynet_fine_pop(f, now, out, due, 16);
			for (size_t i = 0; i < n; i++) {
				int m = model_first(now);
				TT_CHECK(m >= 0 && MODEL[m].handle == out[i].handle &&
				         MODEL[m].session == out[i].session && MODEL[m].due == due[i]);
				if (m < 0)
					break;
				model_remove(m);
			}
			TT_CHECK(n == 16 || model_first(now) < 0);
		} else {
			uint32_t handle = 1 + (uint32_t)(rng_next(&rng) % 8);
			size_t expect = 0;
			for (int i = MODEL_N - 1; i >= 0; i--)
				if (MODEL[i].handle == handle) {
					model_remove(i);
					expect++;
				}
			TT_CHECK(skynet_fine_remove_service(f, handle) == expect);
		}
		TT_CHECK(skynet_fine_pending(f, 0) == (size_t)MODEL_N);
	}
	skynet_fine_release(f);
}

int
main(void) {
	TT_RUN(pops_in_deadline_then_add_order);
	TT_RUN(cancel_takes_the_last_of_duplicates);
	TT_RUN(retirement_keeps_the_rest_in_order);
	TT_RUN(random_run_matches_the_model);
	return tt_summary();
}
