/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_LOG_H
#define XDPSG_LOG_H

#include <stdarg.h>
#include <stdbool.h>

/*
 * Messages go to stderr; statistics go to stdout. Levels are ordered so that a
 * larger number means more output.
 */
enum log_level {
	LOG_LEVEL_WARN = 0,
	LOG_LEVEL_INFO = 1,
	LOG_LEVEL_DEBUG = 2,
	/* libbpf's own debug output, shown only at -vv */
	LOG_LEVEL_TRACE = 3,
};

void log_set_level(enum log_level level);
enum log_level log_get_level(void);
void log_set_prog(const char *name);
const char *log_get_prog(void);

/* Route libbpf's and libxdp's messages through us, one level quieter. */
void log_route_libbpf(void);

/* The tools' -q and -v (-vv adds libbpf's debug output), and the routing above. */
void log_setup(bool quiet, int verbose);

/*
 * While set, libbpf's and libxdp's messages are shown only at -v and above:
 * for calls whose failures are expected and handled (libxdp's dispatcher
 * check, which fails on some kernels before it falls back).
 */
void log_libbpf_expect_failures(bool on);

/* A libbpf/libxdp level mapped to ours: exposed for the unit tests. */
enum log_level log_level_from_libbpf(int libbpf_level);

/* Where messages go; tests point it at a memory stream. NULL means stderr. */
void log_set_stream(void *fp);

void log_printf(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_vprintf(enum log_level level, const char *fmt, va_list ap);

#define pr_warn(fmt, ...) log_printf(LOG_LEVEL_WARN, fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...) log_printf(LOG_LEVEL_INFO, fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...) log_printf(LOG_LEVEL_DEBUG, fmt, ##__VA_ARGS__)

#endif
