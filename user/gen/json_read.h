/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_GEN_JSON_READ_H
#define XDPSG_GEN_JSON_READ_H

/*
 * The smallest JSON reader that says the line of a mistake, for --streams
 * FILE: tokens over a text in memory (no NUL in it), whitespace skipped and
 * lines counted. Values are strings without escapes but \" and \\ (which
 * are refused, with a line that says so), numbers and bare words (true,
 * false), handed back as spans of the text. What the tokens mean is the
 * caller's: it builds its own objects.
 */
#include <stdbool.h>
#include <stddef.h>

struct json_read {
	const char *p, *end;
	unsigned int line; /* of *p, from 1 */
	char err[160]; /* the mistake, after a call returned -EINVAL */
};

void json_read_init(struct json_read *j, const char *text, size_t len);
/* Past spaces, tabs and line ends. */
void json_read_ws(struct json_read *j);
/* After whitespace: the next character is c, and is consumed. */
bool json_read_eat(struct json_read *j, char c);
/* After whitespace: the next character (not consumed), or 0 at the end. */
char json_read_peek(struct json_read *j);
/* -EINVAL, with what in err. */
int json_read_fail(struct json_read *j, const char *what);
/* A string's contents (without the quotes), a number or a word: *text, *len into the text. */
int json_read_value(struct json_read *j, const char **text, size_t *len);

#endif
