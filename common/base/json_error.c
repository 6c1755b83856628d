// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/json_error.h"
#include "base/json_writer.h"

/* Long enough for any one message; a longer first line is cut, not lost on fd 2. */
#define JE_LINE_MAX 1024

static struct {
	bool armed;
	const char *tool;
	FILE *real;
	char cur[JE_LINE_MAX];
	size_t cur_len;
	char own[JE_LINE_MAX]; /* the first line that starts with the tool's name */
	char any[JE_LINE_MAX]; /* the first non-empty line, if none is the tool's */
} je;

static void je_line_done(void)
{
	je.cur[je.cur_len] = '\0';
	if (!je.own[0] && !strncmp(je.cur, je.tool, strlen(je.tool)))
		snprintf(je.own, sizeof(je.own), "%s", je.cur);
	if (!je.any[0] && je.cur_len)
		snprintf(je.any, sizeof(je.any), "%s", je.cur);
	je.cur_len = 0;
}

static void je_keep(const char *buf, size_t size)
{
	size_t i;

	for (i = 0; i < size; i++) {
		if (buf[i] == '\n')
			je_line_done();
		else if (je.cur_len < sizeof(je.cur) - 1)
			je.cur[je.cur_len++] = buf[i];
	}
}

static ssize_t je_write(void *cookie, const char *buf, size_t size)
{
	size_t done = 0;
	ssize_t n;

	(void)cookie;
	while (done < size) {
		n = write(STDERR_FILENO, buf + done, size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += n;
	}
	je_keep(buf, size);
	return size;
}

/* -j alone or in a cluster of the value-less short flags (-qj, -jv). */
static bool is_json_flag(const char *a)
{
	if (!strcmp(a, "--json"))
		return true;
	if (a[0] != '-' || a[1] == '-' || !strchr(a, 'j'))
		return false;
	return a[1] && strspn(a + 1, "jqvh") == strlen(a + 1);
}

static bool wants_json(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (is_json_flag(argv[i]))
			return true;
	return false;
}

void json_error_arm(const char *tool, int argc, char **argv)
{
	cookie_io_functions_t io = { .write = je_write };
	FILE *f;

	if (je.armed || !wants_json(argc, argv))
		return;
	f = fopencookie(NULL, "w", io);
	if (!f)
		return;
	/* Unbuffered, as stderr is: lines keep their order with stdout's. */
	setvbuf(f, NULL, _IONBF, 0);
	je.tool = tool;
	je.real = stderr;
	stderr = f;
	je.armed = true;
}

int json_error_finish(int code)
{
	struct jw w;

	if (!je.armed)
		return code;
	fflush(stderr);
	if (je.cur_len)
		je_line_done();
	if (code) {
		jw_begin(&w, stdout, "error");
		jw_str(&w, "tool", je.tool);
		jw_str(&w, "message", je.own[0] ? je.own : je.any[0] ? je.any : "failed");
		jw_i64(&w, "exit", code);
		jw_finish(&w);
	}
	fclose(stderr);
	stderr = je.real;
	je.armed = false;
	return code;
}
