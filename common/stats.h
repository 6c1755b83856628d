/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_STATS_H
#define XDPSG_STATS_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

/*
 * Output helpers shared by the tools: a one-line JSON writer (the --json
 * contract: one object per line) and human-readable number formatting.
 */
#define JW_MAX_DEPTH 8

struct jw {
	FILE *f;
	int depth;
	bool need_comma[JW_MAX_DEPTH];
};

void jw_begin(struct jw *w, FILE *f, const char *type);
void jw_finish(struct jw *w);
/* key is NULL for members of an array. */
void jw_obj(struct jw *w, const char *key);
void jw_end_obj(struct jw *w);
void jw_arr(struct jw *w, const char *key);
void jw_end_arr(struct jw *w);
void jw_u64(struct jw *w, const char *key, __u64 v);
void jw_i64(struct jw *w, const char *key, __s64 v);
void jw_double(struct jw *w, const char *key, double v);
void jw_str(struct jw *w, const char *key, const char *v);
void jw_bool(struct jw *w, const char *key, bool v);

/* "1.23M", "456k", "789": three significant digits, decimal units. */
const char *fmt_si(char *buf, size_t len, double v);
/* "12,345,678" */
const char *fmt_count(char *buf, size_t len, __u64 v);

/* Rate of a counter between two readings; 0 when no time passed. */
static inline double stats_rate(__u64 now, __u64 then, __u64 dt_ns)
{
	return dt_ns && now >= then ? (double)(now - then) * 1e9 / (double)dt_ns : 0.0;
}

#endif
