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

/* "1.23s", "4.56ms", "7.8us", "90ns" */
const char *fmt_ns(char *buf, size_t len, __u64 ns);

#endif
