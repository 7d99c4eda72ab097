#ifndef SKYNET_TT_H
#define SKYNET_TT_H

/*
 * A tiny test runner. A case is `static void name(int *failed)` using
 * TT_CHECK, which records file:line and carries on. main() runs cases with
 * TT_RUN(name) and ends with `return tt_summary();`, which prints the exact
 * line "N passed, N failed" and yields a non-zero status on any failure.
 * TT_STRESS (environment) asks stress cases for more rounds (TSan runs).
 */

#include <stdio.h>
#include <stdlib.h>

static int TT_PASSED;
static int TT_FAILED;

#define TT_CHECK(cond)                                                                             \
	do {                                                                                           \
		if (!(cond)) {                                                                             \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
			(*failed)++;                                                                           \
		}                                                                                          \
	} while (0)

#define TT_RUN(name)                                                                               \
	do {                                                                                           \
		int tt_case_failed = 0;                                                                    \
		name(&tt_case_failed);                                                                     \
		printf("%s %s\n", tt_case_failed ? "FAIL" : "ok  ", #name);                                \
		fflush(stdout);                                                                            \
		if (tt_case_failed)                                                                        \
			TT_FAILED++;                                                                           \
		else                                                                                       \
			TT_PASSED++;                                                                           \
	} while (0)

static inline int
tt_stress(void) {
	const char *s = getenv("TT_STRESS");
	return s != NULL && s[0] != '\0' && s[0] != '0';
}

static inline int
tt_summary(void) {
	printf("%d passed, %d failed\n", TT_PASSED, TT_FAILED);
	return TT_FAILED != 0;
}

#endif
