/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_FMT_H
#define XDPSG_FMT_H

/* Numbers for people: the text output of both tools. */
#include <stddef.h>
#include <linux/types.h>

/*
 * "1.23M", "456k", "78.9", "0": three significant digits, decimal units,
 * rounded before the unit is chosen (999,950 is "1.00M", never "1000k").
 * Every rate either tool prints goes through it.
 */
const char *fmt_si(char *buf, size_t len, double v);
/* "12,345,678", "-1,234": every count either tool prints goes through these. */
const char *fmt_count(char *buf, size_t len, __u64 v);
const char *fmt_icount(char *buf, size_t len, __s64 v);

/*
 * The same inside one printf: each use gets a buffer of its own that lives
 * to the end of the statement, e.g. printf("lost %s\n", FMT_COUNT(lost)).
 */
#define FMT_COUNT(v) fmt_count((char[32]){ 0 }, 32, (v))
#define FMT_ICOUNT(v) fmt_icount((char[32]){ 0 }, 32, (v))
#define FMT_SI(v) fmt_si((char[32]){ 0 }, 32, (v))

/* Rate of a counter between two readings; 0 when no time passed. */
static inline double counter_rate(__u64 now, __u64 then, __u64 dt_ns)
{
	return dt_ns && now >= then ? (double)(now - then) * 1e9 / (double)dt_ns : 0.0;
}

/*
 * Names in every output (text, JSON, OpenMetrics, pcapng), by one rule:
 * printable UTF-8 as it is, every other byte (not UTF-8, a control) as the
 * four characters \xHH, so a device named "ev\377" shows as ev\xff.
 * fmt_name_unit(): the length of the printable character at s, 0 when its
 * first byte must be shown as \xHH. fmt_name(): s by the rule, cut to len.
 */
unsigned int fmt_name_unit(const char *s);
const char *fmt_name(char *buf, size_t len, const char *s);
#define FMT_NAME_MAX 257 /* 64 bytes, each shown as \xHH */
#define FMT_NAME(s) fmt_name((char[FMT_NAME_MAX]){ 0 }, FMT_NAME_MAX, (s))

/* "1.23s", "4.56ms", "7.8us", "90ns" */
const char *fmt_ns(char *buf, size_t len, __u64 ns);

#endif
