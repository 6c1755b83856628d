// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "base/fmt.h"
#include "base/log.h"

static enum log_level cur_level = LOG_LEVEL_INFO;
static const char *prog_name = "xdpsg";
static FILE *log_stream;
static bool libbpf_expected;

void log_set_level(enum log_level level)
{
	cur_level = level;
}

enum log_level log_get_level(void)
{
	return cur_level;
}

void log_set_prog(const char *name)
{
	const char *slash = strrchr(name, '/');

	prog_name = slash ? slash + 1 : name;
}

const char *log_get_prog(void)
{
	return prog_name;
}

void log_set_stream(void *fp)
{
	log_stream = fp;
}

/*
 * A message names devices, files and programs: it goes out by fmt_name()'s
 * rule (a device named with a byte that is not UTF-8, or an escape, shows
 * as \xHH), its line breaks and tabs kept.
 */
static void log_put_names(FILE *out, const char *fmt, va_list ap)
{
	char small[512], *msg = small, *p;
	va_list copy;
	int n;

	va_copy(copy, ap);
	n = vsnprintf(small, sizeof(small), fmt, copy);
	va_end(copy);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(small)) {
		msg = malloc((size_t)n + 1);
		if (msg)
			vsnprintf(msg, (size_t)n + 1, fmt, ap);
		else
			msg = small; /* cut short, not raw */
	}
	for (p = msg; *p;) {
		unsigned int u = fmt_name_unit(p);

		if (u)
			fwrite(p, 1, u, out);
		else if (*p == '\n' || *p == '\t')
			fputc(*p, out);
		else
			fprintf(out, "\\x%02x", (unsigned char)*p);
		p += u ? u : 1;
	}
	if (msg != small)
		free(msg);
}

void log_vprintf(enum log_level level, const char *fmt, va_list ap)
{
	FILE *out = log_stream ? log_stream : stderr;

	if (level > cur_level)
		return;
	/* Warnings carry the program name so they stand out in mixed output. */
	if (level == LOG_LEVEL_WARN)
		fprintf(out, "%s: ", prog_name);
	log_put_names(out, fmt, ap);
}

void log_printf(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vprintf(level, fmt, ap);
	va_end(ap);
}

enum log_level log_level_from_libbpf(int libbpf_level)
{
	switch (libbpf_level) {
	case LIBBPF_WARN:
		return LOG_LEVEL_INFO;
	case LIBBPF_INFO:
		return LOG_LEVEL_DEBUG;
	default:
		return LOG_LEVEL_TRACE;
	}
}

void log_libbpf_expect_failures(bool on)
{
	libbpf_expected = on;
}

static enum log_level routed(int libbpf_level)
{
	enum log_level l = log_level_from_libbpf(libbpf_level);

	if (libbpf_expected && l < LOG_LEVEL_DEBUG)
		l = LOG_LEVEL_DEBUG;
	return l;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	log_vprintf(routed(level), fmt, ap);
	return 0;
}

static int libxdp_print(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	/* libxdp's levels have the same order and values as libbpf's. */
	log_vprintf(routed((int)level), fmt, ap);
	return 0;
}

void log_route_libbpf(void)
{
	libbpf_set_print(libbpf_print);
	libxdp_set_print(libxdp_print);
}

void log_setup(bool quiet, int verbose)
{
	log_set_level(quiet	   ? LOG_LEVEL_WARN :
		      verbose >= 2 ? LOG_LEVEL_TRACE :
		      verbose	   ? LOG_LEVEL_DEBUG :
				     LOG_LEVEL_INFO);
	log_route_libbpf();
}
