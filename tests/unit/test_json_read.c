// SPDX-License-Identifier: GPL-2.0
/* The --streams file's reader: tokens, spans, line numbers and the mistakes it names. */
#include <errno.h>
#include <string.h>

#include "../../user/gen/json_read.h"
#include "test.h"

#define INIT(j, s) json_read_init(j, s, strlen(s))

static bool value_is(struct json_read *j, const char *want)
{
	const char *text;
	size_t len;

	return !json_read_value(j, &text, &len) && len == strlen(want) && !memcmp(text, want, len);
}

static void test_tokens_and_lines(void)
{
	struct json_read j;

	INIT(&j, "[\n {\"name\": \"a b\",\n  \"rate\" : 1.5M, \"ipv6\": true}\n]\n");
	ASSERT_TRUE(json_read_eat(&j, '['), "[");
	ASSERT_EQ(json_read_peek(&j), '{', "peek skips the line end");
	ASSERT_EQ(j.line, 2, "line 2");
	ASSERT_TRUE(!json_read_eat(&j, '['), "eat takes only its character");
	ASSERT_TRUE(json_read_eat(&j, '{'), "{");
	ASSERT_TRUE(value_is(&j, "name"), "a key's text, without quotes");
	ASSERT_TRUE(json_read_eat(&j, ':'), ":");
	ASSERT_TRUE(value_is(&j, "a b"), "a string keeps its spaces");
	ASSERT_TRUE(json_read_eat(&j, ','), ",");
	ASSERT_TRUE(value_is(&j, "rate"), "next key");
	ASSERT_EQ(j.line, 3, "line 3");
	ASSERT_TRUE(json_read_eat(&j, ':'), "space before ':'");
	ASSERT_TRUE(value_is(&j, "1.5M"), "a number with a suffix is a word");
	ASSERT_TRUE(json_read_eat(&j, ','), ",");
	ASSERT_TRUE(value_is(&j, "ipv6"), "key");
	ASSERT_TRUE(json_read_eat(&j, ':'), ":");
	ASSERT_TRUE(value_is(&j, "true"), "a bare word");
	ASSERT_TRUE(json_read_eat(&j, '}'), "}");
	ASSERT_TRUE(json_read_eat(&j, ']'), "]");
	ASSERT_EQ(json_read_peek(&j), '\0', "only whitespace left: the end");
	ASSERT_EQ(j.line, 5, "the last line end counted");
	ASSERT_TRUE(!json_read_eat(&j, '\0'), "nothing to eat at the end");
}

static void test_mistakes_named(void)
{
	struct json_read j;
	const char *text;
	size_t len;

	INIT(&j, "\"a\\\"b\"");
	ASSERT_ERR(json_read_value(&j, &text, &len), -EINVAL, "an escape");
	ASSERT_TRUE(strstr(j.err, "escapes in strings are not supported") != NULL, j.err);

	INIT(&j, "\n\"open\n\"");
	ASSERT_ERR(json_read_value(&j, &text, &len), -EINVAL, "a string across lines");
	ASSERT_TRUE(strstr(j.err, "does not end on its line") != NULL, j.err);
	ASSERT_EQ(j.line, 2, "the line where the string began");

	INIT(&j, "\"unterminated");
	ASSERT_ERR(json_read_value(&j, &text, &len), -EINVAL, "no closing quote");

	INIT(&j, "  ,");
	ASSERT_ERR(json_read_value(&j, &text, &len), -EINVAL, "no value");
	ASSERT_TRUE(strstr(j.err, "expected a value") != NULL, j.err);

	INIT(&j, "");
	ASSERT_EQ(json_read_peek(&j), '\0', "empty text: the end at once");
	ASSERT_ERR(json_read_value(&j, &text, &len), -EINVAL, "no value in empty text");
	ASSERT_ERR(json_read_fail(&j, "expected '['"), -EINVAL, "fail");
	ASSERT_STREQ(j.err, "expected '['", "fail keeps what it was told");
}

static const struct test_case cases[] = {
	TEST_CASE(tokens_and_lines),
	TEST_CASE(mistakes_named),
};

TEST_MAIN("json_read", cases)
