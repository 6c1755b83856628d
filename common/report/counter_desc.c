// SPDX-License-Identifier: GPL-2.0
/* Every output of a counter family from its table (counter_desc.h). */
#include <inttypes.h>
#include <string.h>

#include "base/fmt.h"
#include "report/counter_desc.h"

void ctr_json_members(struct jw *w, const struct ctr_family *f, const void *vals, unsigned int have)
{
	const struct ctr_desc *d;

	for (d = f->rows; d < f->rows + f->n; d++) {
		if (!ctr_shown(d, CTR_JSON, have))
			continue;
		if (d->flags & CTR_SIGNED)
			jw_i64(w, d->name, (__s64)ctr_get(d, vals));
		else
			jw_u64(w, d->name, ctr_get(d, vals));
	}
}

/* The object a family writes: the last part of its path. */
static const char *json_key(const struct ctr_family *f)
{
	const char *dot = f->json ? strrchr(f->json, '.') : NULL;

	return dot ? dot + 1 : f->json;
}

void ctr_json(struct jw *w, const struct ctr_family *f, const void *vals, unsigned int have)
{
	const struct ctr_desc *d;

	if (!f->json) {
		ctr_json_members(w, f, vals, have);
		return;
	}
	/* A family with nothing to show in this report has no object either. */
	for (d = f->rows; d < f->rows + f->n && !ctr_shown(d, CTR_JSON, have); d++)
		;
	if (d == f->rows + f->n)
		return;
	jw_obj(w, json_key(f));
	ctr_json_members(w, f, vals, have);
	jw_end_obj(w);
}

static unsigned int text_rows(FILE *out, const struct ctr_family *f, const void *vals,
			      unsigned int have, const char *sep, bool nonzero)
{
	const struct ctr_desc *d;
	unsigned int n = 0;

	for (d = f->rows; d < f->rows + f->n; d++) {
		if (!ctr_shown(d, CTR_TEXT, have) || (nonzero && !ctr_get(d, vals)))
			continue;
		if (d->flags & CTR_SIGNED)
			fprintf(out, "%s%s %s", n++ ? sep : "", d->name,
				FMT_ICOUNT((__s64)ctr_get(d, vals)));
		else
			fprintf(out, "%s%s %s", n++ ? sep : "", d->name,
				FMT_COUNT(ctr_get(d, vals)));
	}
	return n;
}

unsigned int ctr_text(FILE *out, const struct ctr_family *f, const void *vals, unsigned int have,
		      const char *sep)
{
	return text_rows(out, f, vals, have, sep, false);
}

unsigned int ctr_text_nonzero(FILE *out, const struct ctr_family *f, const void *vals,
			      unsigned int have, const char *sep)
{
	return text_rows(out, f, vals, have, sep, true);
}

__u64 ctr_sum(const struct ctr_family *f, const void *vals, unsigned int have)
{
	const struct ctr_desc *d;
	__u64 sum = 0;

	for (d = f->rows; d < f->rows + f->n; d++)
		if (ctr_shown(d, CTR_TEXT, have))
			sum += ctr_get(d, vals);
	return sum;
}

static const char *kind_name(enum ctr_kind k)
{
	return k == CTR_GAUGE ? "gauge" : "counter";
}

void ctr_metrics_samples(struct metrics_w *w, const struct ctr_family *f, const void *vals,
			 unsigned int have)
{
	const struct ctr_desc *d;

	for (d = f->rows; d < f->rows + f->n; d++)
		if (ctr_shown(d, CTR_METRIC, have))
			metrics_u64(w, f->metric, f->label, d->name, ctr_get(d, vals));
}

void ctr_metrics(struct metrics_w *w, const struct ctr_family *f, const void *vals,
		 unsigned int have)
{
	metrics_family(w, f->metric, kind_name(f->rows[0].kind), NULL, f->help);
	ctr_metrics_samples(w, f, vals, have);
}

void ctr_metric_name(const struct ctr_family *f, const struct ctr_desc *d, char *buf, size_t len)
{
	if (f->metric)
		snprintf(buf, len, "%s", f->metric);
	else
		snprintf(buf, len, "%s%s%s", f->prefix ? f->prefix : "", d->name,
			 d->kind == CTR_COUNTER ? "_total" : "");
}

void ctr_metric_head(struct metrics_w *w, const struct ctr_family *f, const struct ctr_desc *d)
{
	char name[128];

	ctr_metric_name(f, d, name, sizeof(name));
	metrics_family(w, name, kind_name(d->kind), NULL, d->help);
}

void ctr_metric_at(struct metrics_w *w, const struct ctr_family *f, const struct ctr_desc *d,
		   const char *key, const char *value, const void *vals)
{
	char name[128];

	ctr_metric_name(f, d, name, sizeof(name));
	metrics_u64(w, name, key, value, ctr_get(d, vals));
}

void ctr_list(FILE *out, const char *tool, const struct ctr_family *f, const struct ctr_mode *modes,
	      unsigned int nmodes, unsigned int runtime)
{
	const struct ctr_desc *d;
	char metric[128], path[128];
	unsigned int i;
	struct jw w;

	for (d = f->rows; d < f->rows + f->n; d++) {
		jw_begin(&w, out, "counter");
		jw_str(&w, "tool", tool);
		jw_str(&w, "family", f->name);
		jw_str(&w, "name", d->name);
		jw_str(&w, "kind", kind_name(d->kind));
		jw_str(&w, "unit", d->unit);
		jw_str(&w, "help", d->help);
		snprintf(path, sizeof(path), "%s%s%s", f->json ? f->json : "", f->json ? "." : "",
			 d->name);
		jw_str(&w, "json", d->flags & CTR_JSON ? path : "");
		ctr_metric_name(f, d, metric, sizeof(metric));
		jw_str(&w, "metric", d->flags & CTR_METRIC ? metric : "");
		jw_str(&w, "label", d->flags & CTR_METRIC && f->metric ? f->label : "");
		jw_bool(&w, "text", d->flags & CTR_TEXT);
		jw_arr(&w, "modes");
		for (i = 0; i < nmodes; i++)
			if ((d->when & ~(modes[i].has | runtime)) == 0)
				jw_str(&w, NULL, modes[i].name);
		jw_end_arr(&w);
		jw_finish(&w);
	}
}
