// SPDX-License-Identifier: GPL-2.0
/* The --streams file's tokens (json_read.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "json_read.h"

void json_read_init(struct json_read *j, const char *text, size_t len)
{
	j->p = text;
	j->end = text + len;
	j->line = 1;
	j->err[0] = '\0';
}

void json_read_ws(struct json_read *j)
{
	while (j->p < j->end && strchr(" \t\r\n", *j->p)) {
		if (*j->p == '\n')
			j->line++;
		j->p++;
	}
}

int json_read_fail(struct json_read *j, const char *what)
{
	snprintf(j->err, sizeof(j->err), "%s", what);
	return -EINVAL;
}

char json_read_peek(struct json_read *j)
{
	json_read_ws(j);
	return j->p < j->end ? *j->p : '\0';
}

bool json_read_eat(struct json_read *j, char c)
{
	if (json_read_peek(j) != c || !c)
		return false;
	j->p++;
	return true;
}

static bool word_char(char c)
{
	return strchr("+-.", c) || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z');
}

int json_read_value(struct json_read *j, const char **text, size_t *len)
{
	const char *b;

	if (json_read_peek(j) == '"') {
		b = ++j->p;
		while (j->p < j->end && *j->p != '"' && *j->p != '\n') {
			if (*j->p == '\\')
				return json_read_fail(
					j,
					"escapes in strings are not supported; write the value plainly");
			j->p++;
		}
		if (j->p >= j->end || *j->p != '"')
			return json_read_fail(
				j, "a string does not end on its line; close it with '\"'");
		*text = b;
		*len = (size_t)(j->p - b);
		j->p++;
		return 0;
	}
	b = j->p;
	while (j->p < j->end && word_char(*j->p))
		j->p++;
	if (j->p == b)
		return json_read_fail(j, "expected a value (a number or a \"string\")");
	*text = b;
	*len = (size_t)(j->p - b);
	return 0;
}
