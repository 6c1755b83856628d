// SPDX-License-Identifier: GPL-2.0
/*
 * The one formatter for what people read: counts with thousands separators,
 * rates with three significant digits whose unit follows the rounding.
 */
#include "fmt.h"
#include "test.h"

static void test_rates_round_then_unit(void)
{
	ASSERT_STREQ(FMT_SI(0), "0", "zero");
	ASSERT_STREQ(FMT_SI(45.3), "45.3", "below a thousand");
	ASSERT_STREQ(FMT_SI(99.96), "100", "rounds up without a stray decimal");
	ASSERT_STREQ(FMT_SI(999.6), "1.00k", "a thousand is 1.00k, never 1000");
	ASSERT_STREQ(FMT_SI(9995), "10.0k", "10.0k, never 9.99k rounded to 10.00k");
	ASSERT_STREQ(FMT_SI(99960), "100k", "never 100.0k");
	ASSERT_STREQ(FMT_SI(100000), "100k", "100k");
	ASSERT_STREQ(FMT_SI(999950), "1.00M", "never 1000k");
	ASSERT_STREQ(FMT_SI(1234567), "1.23M", "1.23M");
	ASSERT_STREQ(FMT_SI(-45300), "-45.3k", "negative");
}

static void test_counts_grouped(void)
{
	ASSERT_STREQ(FMT_COUNT(0), "0", "zero");
	ASSERT_STREQ(FMT_COUNT(999), "999", "no separator under a thousand");
	ASSERT_STREQ(FMT_COUNT(1000), "1,000", "1,000");
	ASSERT_STREQ(FMT_COUNT(322501), "322,501", "322,501");
	ASSERT_STREQ(FMT_COUNT(18446744073709551615ULL), "18,446,744,073,709,551,615", "2^64-1");
	ASSERT_STREQ(FMT_ICOUNT(-1234567), "-1,234,567", "negative");
	ASSERT_STREQ(FMT_ICOUNT(-9223372036854775807LL - 1), "-9,223,372,036,854,775,808",
		     "the most negative");
	ASSERT_STREQ(FMT_ICOUNT(5), "5", "small");
}

static const struct test_case cases[] = {
	TEST_CASE(rates_round_then_unit),
	TEST_CASE(counts_grouped),
};

TEST_MAIN("fmt", cases)
