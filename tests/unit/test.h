/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_TEST_H
#define XDPSG_TEST_H

/*
 * A tiny unit-test harness. ASSERT_* print what was expected and what came,
 * count the failure and evaluate to a bool so a test can 'goto out'. Each test
 * prints one "[suite:name] PASS|FAIL|SKIP" line; tests/run.sh counts them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test__failed;
static const char *test__skipped;

#define ASSERT__CMP(a, b, op, name)                                                           \
	({                                                                                    \
		long long ___a = (long long)(a), ___b = (long long)(b);                       \
		bool ___ok = ___a op ___b;                                                    \
		if (!___ok) {                                                                 \
			fprintf(stderr, "  %s:%d: %s: expected %s %s %s, got %lld vs %lld\n", \
				__FILE__, __LINE__, name, #a, #op, #b, ___a, ___b);           \
			test__failed++;                                                       \
		}                                                                             \
		___ok;                                                                        \
	})

#define ASSERT_EQ(a, b, name) ASSERT__CMP(a, b, ==, name)
#define ASSERT_NEQ(a, b, name) ASSERT__CMP(a, b, !=, name)
#define ASSERT_LT(a, b, name) ASSERT__CMP(a, b, <, name)
#define ASSERT_LE(a, b, name) ASSERT__CMP(a, b, <=, name)
#define ASSERT_GT(a, b, name) ASSERT__CMP(a, b, >, name)
#define ASSERT_GE(a, b, name) ASSERT__CMP(a, b, >=, name)

/* Unsigned 64-bit comparison, for values above LLONG_MAX. */
#define ASSERT_EQ_U64(a, b, name)                                                             \
	({                                                                                    \
		uint64_t ___a = (uint64_t)(a), ___b = (uint64_t)(b);                          \
		bool ___ok = ___a == ___b;                                                    \
		if (!___ok) {                                                                 \
			fprintf(stderr,                                                       \
				"  %s:%d: %s: expected %s == %s, got %" PRIu64 " vs %" PRIu64 \
				"\n",                                                         \
				__FILE__, __LINE__, name, #a, #b, ___a, ___b);                \
			test__failed++;                                                       \
		}                                                                             \
		___ok;                                                                        \
	})

#define ASSERT_TRUE(c, name)                                                                      \
	({                                                                                        \
		bool ___ok = !!(c);                                                               \
		if (!___ok) {                                                                     \
			fprintf(stderr, "  %s:%d: %s: expected %s to hold\n", __FILE__, __LINE__, \
				name, #c);                                                        \
			test__failed++;                                                           \
		}                                                                                 \
		___ok;                                                                            \
	})

#define ASSERT_FALSE(c, name) ASSERT_TRUE(!(c), name)

#define ASSERT_OK(err, name)                                                              \
	({                                                                                \
		long long ___e = (long long)(err);                                        \
		bool ___ok = ___e == 0;                                                   \
		if (!___ok) {                                                             \
			fprintf(stderr, "  %s:%d: %s: expected success, got %lld (%s)\n", \
				__FILE__, __LINE__, name, ___e,                           \
				___e < 0 ? strerror((int)-___e) : "positive");            \
			test__failed++;                                                   \
		}                                                                         \
		___ok;                                                                    \
	})

#define ASSERT_ERR(err, expected, name)                                                           \
	({                                                                                        \
		long long ___e = (long long)(err);                                                \
		bool ___ok = ___e == (long long)(expected);                                       \
		if (!___ok) {                                                                     \
			fprintf(stderr, "  %s:%d: %s: expected error %lld, got %lld\n", __FILE__, \
				__LINE__, name, (long long)(expected), ___e);                     \
			test__failed++;                                                           \
		}                                                                                 \
		___ok;                                                                            \
	})

#define ASSERT_STREQ(a, b, name)                                                                 \
	({                                                                                       \
		const char *___a = (a), *___b = (b);                                             \
		bool ___ok = ___a && ___b && !strcmp(___a, ___b);                                \
		if (!___ok) {                                                                    \
			fprintf(stderr, "  %s:%d: %s: expected \"%s\", got \"%s\"\n", __FILE__,  \
				__LINE__, name, ___b ? ___b : "(null)", ___a ? ___a : "(null)"); \
			test__failed++;                                                          \
		}                                                                                \
		___ok;                                                                           \
	})

/* Mark the running test skipped, with the reason shown on its line. */
#define TEST_SKIP(reason) (test__skipped = (reason))

struct test_case {
	const char *name;
	void (*fn)(void);
};

#define TEST_CASE(n)         \
	{                    \
#n, test_##n \
	}

static inline int test_run_all(const char *suite, const struct test_case *cases, size_t n, int argc,
			       char **argv)
{
	int failed = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		int before = test__failed;

		if (argc > 1 && !strstr(cases[i].name, argv[1]))
			continue;
		test__skipped = NULL;
		cases[i].fn();
		if (test__failed != before) {
			printf("[%s:%s] FAIL\n", suite, cases[i].name);
			failed++;
		} else if (test__skipped) {
			printf("[%s:%s] SKIP (%s)\n", suite, cases[i].name, test__skipped);
		} else {
			printf("[%s:%s] PASS\n", suite, cases[i].name);
		}
		fflush(stdout);
	}
	return failed ? 1 : 0;
}

#define TEST_MAIN(suite, cases)                                                                  \
	int main(int argc, char **argv)                                                          \
	{                                                                                        \
		return test_run_all(suite, cases, sizeof(cases) / sizeof(cases[0]), argc, argv); \
	}

#endif
