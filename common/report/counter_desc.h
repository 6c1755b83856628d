/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_COUNTER_DESC_H
#define XDPSG_COUNTER_DESC_H

/*
 * Counters described once, as the kernel's veth_rq_stats_desc[] does it: a
 * family is a table of rows, each a name and the offsetof() of a __u64 in
 * the family's struct, with its kind, unit and help text. One loop per output
 * writes every row: the JSON members, a text list, the OpenMetrics samples
 * (the HELP text comes from the table) and the listing that the docs test
 * reads (TOOL --counters). Adding a counter is adding a row.
 *
 * A row's name is its JSON key, its word in the text lists and, in a labelled
 * family, its label value; those are the names scripts and dashboards read,
 * so a row is never renamed. The outputs take a struct of values that are
 * already deltas (or levels, for a gauge): the tables know no readings.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#include "base/json_writer.h"
#include "report/metrics.h"

enum ctr_kind {
	CTR_COUNTER, /* only grows; reports show the change between two readings */
	CTR_GAUGE, /* a level */
};

/* Where a row appears (ctr_desc.flags). */
#define CTR_JSON (1U << 0)
#define CTR_TEXT (1U << 1)
#define CTR_METRIC (1U << 2)
#define CTR_ALL (CTR_JSON | CTR_TEXT | CTR_METRIC)
/* A JSON value that can be negative (lost: a late frame takes a gap back). */
#define CTR_SIGNED (1U << 3)

struct ctr_desc {
	const char *name;
	size_t off; /* offsetof() of the __u64 in the family's struct */
	enum ctr_kind kind;
	const char *unit; /* what one count is: "packets", "frames", "bytes", "waits" */
	unsigned int flags; /* CTR_* */
	/*
	 * The conditions the row needs, all of them, as bits the tool defines
	 * (the sink: what its mode can count; a veth under it); 0: always. A
	 * report shows the rows whose conditions its 'have' bits meet.
	 */
	unsigned int when;
	const char *help; /* one sentence; the OpenMetrics HELP of a row of its own */
};

struct ctr_family {
	const char *name; /* as --counters lists it: "sink_drops" */
	/*
	 * Where its rows go in the JSON: a dotted path whose last part is the
	 * object ctr_json() writes ("parse.errors": the caller has opened
	 * "parse"); NULL: members of the object being written.
	 */
	const char *json;
	/*
	 * OpenMetrics. Labelled: one metric whose samples are the rows, told
	 * apart by label (xdp_sink_drops_total{reason="xdp_aborted"}), with
	 * help. Otherwise each CTR_METRIC row is a metric of its own, prefix +
	 * name (+ "_total" for a counter), with the row's help.
	 */
	const char *metric;
	const char *label;
	const char *help;
	const char *prefix;
	const struct ctr_desc *rows;
	unsigned int n;
};

#define CTR_ROWS(r) .rows = (r), .n = sizeof(r) / sizeof((r)[0])

static inline __u64 ctr_get(const struct ctr_desc *d, const void *vals)
{
	return *(const __u64 *)((const char *)vals + d->off);
}

/* res = a - b, member by member, for structs of __u64 only (the families' value structs). */
static inline void ctr_sub(void *res, const void *a, const void *b, size_t size)
{
	const __u64 *pa = a, *pb = b;
	__u64 *r = res;
	size_t i;

	for (i = 0; i < size / sizeof(__u64); i++)
		r[i] = pa[i] - pb[i];
}

/* Is the row in output 'out' (CTR_JSON, ...) of a report whose conditions are 'have'? */
static inline bool ctr_shown(const struct ctr_desc *d, unsigned int out, unsigned int have)
{
	return (d->flags & out) && (d->when & ~have) == 0;
}

/* The rows' values as members of the current object, or in the family's own one. */
void ctr_json_members(struct jw *w, const struct ctr_family *f, const void *vals,
		      unsigned int have);
void ctr_json(struct jw *w, const struct ctr_family *f, const void *vals, unsigned int have);

/* "name value" of each text row, sep between them. Returns the rows printed. */
unsigned int ctr_text(FILE *out, const struct ctr_family *f, const void *vals, unsigned int have,
		      const char *sep);

/* The same, rows that are not 0 only. */
unsigned int ctr_text_nonzero(FILE *out, const struct ctr_family *f, const void *vals,
			      unsigned int have, const char *sep);

/* The sum of the text rows (a line that lists them only when one is not 0). */
__u64 ctr_sum(const struct ctr_family *f, const void *vals, unsigned int have);

/*
 * A labelled family's metric: ctr_metrics() writes its TYPE and HELP lines and
 * a sample per row; ctr_metrics_samples() only the samples (a second family
 * adding rows to the same metric: a mode's own failures).
 */
void ctr_metrics(struct metrics_w *w, const struct ctr_family *f, const void *vals,
		 unsigned int have);
void ctr_metrics_samples(struct metrics_w *w, const struct ctr_family *f, const void *vals,
			 unsigned int have);

/*
 * A row of its own as a metric, one sample per instance: ctr_metric_head()
 * once, then ctr_metric_at() per queue or run (key NULL: no label of its own).
 */
void ctr_metric_name(const struct ctr_family *f, const struct ctr_desc *d, char *buf, size_t len);
void ctr_metric_head(struct metrics_w *w, const struct ctr_family *f, const struct ctr_desc *d);
void ctr_metric_at(struct metrics_w *w, const struct ctr_family *f, const struct ctr_desc *d,
		   const char *key, const char *value, const void *vals);

/* A mode as the listing names it, and the condition bits it brings. */
struct ctr_mode {
	const char *name;
	unsigned int has;
};

/*
 * --counters: one JSON line per row, {"type":"counter","tool","family",
 * "name","kind","unit","help","json" (its key's dotted path),"metric" (the
 * metric's name),"label" (the label key whose value is the name),"text" (in
 * the text lists),"modes" (the modes whose reports can show it)}; "" where a
 * row has no such place. Bits in 'runtime' are met at run time (a veth,
 * --parse) and count as met here.
 */
void ctr_list(FILE *out, const char *tool, const struct ctr_family *f, const struct ctr_mode *modes,
	      unsigned int nmodes, unsigned int runtime);

#endif
