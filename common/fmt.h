/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_FMT_H
#define XDPSG_FMT_H

/* Numbers for people: the text output of both tools. */
#include <stddef.h>
#include <linux/types.h>

/* "1.23M", "456k", "789": three significant digits, decimal units. */
const char *fmt_si(char *buf, size_t len, double v);
/* "12,345,678" */
const char *fmt_count(char *buf, size_t len, __u64 v);

/* Rate of a counter between two readings; 0 when no time passed. */
static inline double counter_rate(__u64 now, __u64 then, __u64 dt_ns)
{
	return dt_ns && now >= then ? (double)(now - then) * 1e9 / (double)dt_ns : 0.0;
}

/* "1.23s", "4.56ms", "7.8us", "90ns" */
const char *fmt_ns(char *buf, size_t len, __u64 ns);

#endif
