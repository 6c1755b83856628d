/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_METRICS_H
#define XDPSG_METRICS_H

/*
 * OpenMetrics export: the counters of a run as OpenMetrics text, written to a
 * file (--metrics-file, rewritten atomically, for node_exporter's textfile
 * collector) and served over HTTP (--metrics-listen, GET /metrics).
 *
 * Who does what. The run skeleton (run.c) renders one exposition from the
 * snapshot it already took, every interval and once more from the final
 * reading, and publishes it; a tool and its mode only write rows. The HTTP
 * server (http_text.h) and the file's writer each run on a thread of their
 * own, so that neither a slow client nor slow storage holds up the interval
 * loop; they copy the last published text under a mutex and never see a
 * worker's counters: the hot path takes no lock and does not know the export
 * exists.
 *
 * Names: every sample carries the common labels device (node_exporter's name
 * for a network device, so that the two join; none without a device), mode
 * and each --metrics-label KEY=VALUE, then its own (queue, reason, run). A
 * sample whose device is another one (where a drop happened) takes the
 * common labels without device. Counters are written as Prometheus' text parser and promtool
 * want them: the TYPE and HELP lines name the sample, "_total" included.
 */
#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#include "cli/params.h"
#include "measure/hist.h"

/* In each tool's configuration; its option table gets METRICS_CLI_PARAMS() rows. */
struct metrics_cli {
	const char *file;
	const char *listen;
	struct param_strings labels;
};

#define METRICS_CLI_PARAMS(type, m)                                                                             \
	PARAM_OPT(                                                                                              \
		"metrics-file", PARAM_STRING, offsetof(type, m.file), .metavar = "FILE",                        \
		.help = "write OpenMetrics text to FILE every interval and at exit (atomic rename)"),           \
		PARAM_OPT(                                                                                      \
			"metrics-listen", PARAM_STRING, offsetof(type, m.listen),                               \
			.metavar = "[ADDR:]PORT",                                                               \
			.help = "serve OpenMetrics text at http://ADDR:PORT/metrics (default ADDR 127.0.0.1)"), \
		PARAM_OPT("metrics-label", PARAM_STRINGS, offsetof(type, m.labels),                             \
			  .metavar = "KEY=VALUE",                                                               \
			  .help = "add a label to every exported sample (repeatable)")

/* The longest exposition line's label part. */
#define METRICS_LABELS_LEN 2048

/* One exposition being written. */
struct metrics_w {
	FILE *f;
	const char *labels; /* the common labels, escaped: device="eth0",mode="drop" */
	const char *labels_nodev; /* the same without device: mode="drop" */
};

/*
 * Write a label value with OpenMetrics escaping (backslash, double quote and
 * newline) into buf; false if it does not fit.
 */
bool metrics_escape(const char *v, char *buf, size_t len);

/*
 * Check one --metrics-label: a KEY=VALUE whose key follows the label name
 * rules ([a-zA-Z_][a-zA-Z0-9_]*, not starting with "__") and is none of the
 * built-in labels. 0, or -EINVAL with *why set to the reason.
 */
int metrics_label_check(const char *kv, const char **why);

/* A family: "# TYPE", "# UNIT" (unit may be NULL) and "# HELP" lines. */
void metrics_family(struct metrics_w *w, const char *name, const char *type, const char *unit,
		    const char *help);

/* One sample: name{common[,key="value"]} v. key NULL: only the common labels. */
void metrics_u64(struct metrics_w *w, const char *name, const char *key, const char *value,
		 __u64 v);
void metrics_double(struct metrics_w *w, const char *name, const char *key, const char *value,
		    double v);
/* A sample with a numeric label value (queue="3"). */
void metrics_u64_at(struct metrics_w *w, const char *name, const char *key, __u64 at, __u64 v);

/*
 * A histogram of nanosecond values in seconds: cumulative _bucket rows at
 * fixed bounds from 1 us to 10 s and +Inf, _sum and _count. A row's count is
 * the values certainly at or below its bound: a bucket of h that straddles a
 * bound (h's buckets are 1.6% wide) is counted at the next bound. The family
 * lines are the caller's (metrics_family with type "histogram").
 */
void metrics_hist_seconds(struct metrics_w *w, const char *name, const char *key, const char *value,
			  const struct hist *h);

/*
 * A histogram already in buckets: counts[i] values above bounds_ns[i - 1] and
 * at or below bounds_ns[i] (ascending), counts[n] above them all; written
 * as metrics_hist_seconds writes one, with sum_ns as its _sum.
 */
void metrics_buckets_seconds(struct metrics_w *w, const char *name, const char *key,
			     const char *value, const __u64 *bounds_ns, const __u64 *counts,
			     unsigned int n, __u64 sum_ns);

/* The bounds metrics_hist_seconds uses, in nanoseconds (for tests and docs). */
extern const __u64 *const metrics_hist_bounds_ns;
extern const unsigned int metrics_hist_nbounds;

/* The same rows from a coarse histogram (hist.h), whose buckets are the bounds: exact. */
void metrics_hist_coarse_seconds(struct metrics_w *w, const char *name, const char *key,
				 const char *value, const struct hist_coarse *h);

struct metrics;

struct metrics_opts {
	const char *tool; /* "xdp-sink", for messages */
	const char *mode;
	const char *ifname;
	const struct metrics_cli *cli;
};

/*
 * Check everything --metrics-* asked for and take what can be taken before
 * anything is attached: the labels, a temporary file beside --metrics-file,
 * the listening socket of --metrics-listen (its server starts here too, and
 * serves an empty exposition until the first publish). *out is NULL when
 * nothing was asked. 0, or -EINVAL after one line on stderr.
 */
int metrics__create(const struct metrics_opts *o, struct metrics **out);
void metrics__destroy(struct metrics *m);

/* Start an exposition: w->f is a memory stream, w->labels the common labels. */
int metrics_begin(struct metrics *m, struct metrics_w *w);

/*
 * End it ("# EOF") and hand it to the HTTP server and the file's writer; never
 * waits for storage. A file that cannot be written is said once when the
 * writes start to fail and once when they work again, never every interval;
 * it is never fatal. metrics__destroy writes the last text once more, synced.
 */
void metrics_publish(struct metrics *m, struct metrics_w *w);

/*
 * Wait until the writer has tried the text published last: 0 once it is in
 * the file, or that attempt's -errno (-ENOENT: no --metrics-file).
 */
int metrics_file_wait(struct metrics *m);

/* The address --metrics-listen is bound to ("127.0.0.1:9100"); NULL without one (or m). */
const char *metrics_listening(const struct metrics *m);

/* The last published exposition, copied (free() it); NULL before any. */
char *metrics_published_copy(struct metrics *m, size_t *len);

#define METRICS_CONTENT_TYPE "application/openmetrics-text; version=1.0.0; charset=utf-8"

#endif
