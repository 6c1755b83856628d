// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "base/fmt.h"
#include "base/json_writer.h"

static void jw_sep(struct jw *w, const char *key)
{
	if (w->need_comma[w->depth])
		fputc(',', w->f);
	w->need_comma[w->depth] = true;
	if (key)
		fprintf(w->f, "\"%s\":", key);
}

static void jw_push(struct jw *w, char c)
{
	fputc(c, w->f);
	if (w->depth < JW_MAX_DEPTH - 1)
		w->depth++;
	w->need_comma[w->depth] = false;
}

void jw_begin(struct jw *w, FILE *f, const char *type)
{
	memset(w, 0, sizeof(*w));
	w->f = f;
	fputc('{', f);
	if (!type)
		return;
	jw_str(w, "type", type);
	jw_u64(w, "schema", JW_SCHEMA_VERSION);
}

void jw_finish(struct jw *w)
{
	fputs("}\n", w->f);
	fflush(w->f);
}

void jw_obj(struct jw *w, const char *key)
{
	jw_sep(w, key);
	jw_push(w, '{');
}

void jw_end_obj(struct jw *w)
{
	fputc('}', w->f);
	if (w->depth > 0)
		w->depth--;
}

void jw_arr(struct jw *w, const char *key)
{
	jw_sep(w, key);
	jw_push(w, '[');
}

void jw_end_arr(struct jw *w)
{
	fputc(']', w->f);
	if (w->depth > 0)
		w->depth--;
}

void jw_u64(struct jw *w, const char *key, __u64 v)
{
	jw_sep(w, key);
	fprintf(w->f, "%" PRIu64, (uint64_t)v);
}

void jw_i64(struct jw *w, const char *key, __s64 v)
{
	jw_sep(w, key);
	fprintf(w->f, "%" PRId64, (int64_t)v);
}

void jw_double(struct jw *w, const char *key, double v)
{
	jw_sep(w, key);
	if (isfinite(v))
		fprintf(w->f, "%.3f", v);
	else
		fputs("null", w->f);
}

void jw_null(struct jw *w, const char *key)
{
	jw_sep(w, key);
	fputs("null", w->f);
}

void jw_str(struct jw *w, const char *key, const char *v)
{
	const char *p;

	jw_sep(w, key);
	fputc('"', w->f);
	/* Names by fmt_name()'s rule, so the output is always UTF-8: \xHH, its \ escaped. */
	for (p = v; p && *p;) {
		unsigned int u = fmt_name_unit(p);

		if (*p == '"' || *p == '\\')
			fprintf(w->f, "\\%c", *p);
		else if (u)
			fwrite(p, 1, u, w->f);
		else
			fprintf(w->f, "\\\\x%02x", (unsigned char)*p);
		p += u ? u : 1;
	}
	fputc('"', w->f);
}

void jw_bool(struct jw *w, const char *key, bool v)
{
	jw_sep(w, key);
	fputs(v ? "true" : "false", w->f);
}
