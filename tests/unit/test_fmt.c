// SPDX-License-Identifier: GPL-2.0
/*
 * The one formatter for what people read: counts with thousands separators,
 * rates with three significant digits whose unit follows the rounding.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fmt.h"
#include "base/json_writer.h"
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

/*
 * Names by one rule: printable UTF-8 as it is, any other byte as \xHH; the
 * JSON writer follows it, and its output is always UTF-8 that parses back.
 */
static void test_names_one_rule(void)
{
	char buf[8], *out = NULL;
	size_t len = 0;
	struct jw w;
	FILE *f;

	ASSERT_STREQ(FMT_NAME("veth0"), "veth0", "plain");
	ASSERT_STREQ(FMT_NAME("ev\377"), "ev\\xff", "a byte that is not UTF-8");
	ASSERT_STREQ(FMT_NAME("a\033[31m"), "a\\x1b[31m", "an escape");
	ASSERT_STREQ(FMT_NAME("x\x7f\xc2\x85"), "x\\x7f\\xc2\\x85", "DEL and a C1 control");
	ASSERT_STREQ(FMT_NAME("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\x9d"),
		     "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\x9d", "UTF-8 of 2, 3 and 4 bytes");
	ASSERT_STREQ(FMT_NAME("\xc0\xaf"), "\\xc0\\xaf", "an overlong /");
	ASSERT_STREQ(FMT_NAME("\xed\xa0\x80"), "\\xed\\xa0\\x80", "a surrogate");
	ASSERT_STREQ(FMT_NAME("\xe2\x82"), "\\xe2\\x82", "cut short at the end");
	ASSERT_STREQ(fmt_name(buf, 7, "ab\377cd"), "ab\\xff", "cut, never mid-escape");
	ASSERT_STREQ(fmt_name(buf, sizeof(buf), "abcdefghij"), "abcdefg", "cut to the buffer");
	f = open_memstream(&out, &len);
	if (!ASSERT_TRUE(f, "memstream"))
		return;
	jw_begin(&w, f, NULL);
	jw_str(&w, "ifname", "ev\377\"\\\n\xc3\xa9");
	jw_finish(&w);
	fclose(f);
	ASSERT_TRUE(out && strstr(out, "\"ifname\":\"ev\\\\xff\\\"\\\\\\\\x0a\xc3\xa9\""),
		    "JSON: \\xff with its \\ escaped, the quote and \\ escaped, UTF-8 kept");
	free(out);
}

static const struct test_case cases[] = {
	TEST_CASE(rates_round_then_unit),
	TEST_CASE(counts_grouped),
	TEST_CASE(names_one_rule),
};

TEST_MAIN("fmt", cases)
