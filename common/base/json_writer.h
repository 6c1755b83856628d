/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_JSON_WRITER_H
#define XDPSG_JSON_WRITER_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

/*
 * The --json contract's writer: one object per line, members added in order,
 * nesting by jw_obj/jw_arr. Human-readable numbers are fmt.h's.
 */
#define JW_MAX_DEPTH 8

/*
 * The record format's version, in every record after "type" (docs/json.md):
 * additions keep it, a removed, renamed or retyped key bumps it.
 */
#define JW_SCHEMA_VERSION 1

struct jw {
	FILE *f;
	int depth;
	bool need_comma[JW_MAX_DEPTH];
};

/* A record: {"type":TYPE,"schema":N,...; type NULL starts a bare object (tests). */
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
void jw_null(struct jw *w, const char *key);

#endif
