/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_SINK_CAUSES_H
#define XDPSG_SINK_CAUSES_H

/*
 * Where a run's frames were lost (--drop-causes): the drop tracer
 * (user/sink/drops.h) attached host-wide for the sink's life, its books joined
 * with the sink's per-run books at the summary. The tracer's drops of a
 * run's stamped frames are that run's causes (its marks apart: no frame of
 * its books); a drop without its run (unidentified: the kernel reported no
 * frame, or its stamp lay beyond the tracer's copy) is charged by when it
 * happened, to the only run whose frames were arriving then, on the sink's
 * own interface or on a device where the tracer counted drops of the sink's
 * runs by their stamp; otherwise it is reported beside the runs. Forged
 * stamps and frames without one are never a run's. Main thread only.
 */
#include <linux/types.h>

#include "base/json_writer.h"
#include "report/metrics.h"

struct sink;
struct causes;
struct drops;
struct drops_count;

/*
 * Load and attach the tracer; sk->causes. 0, or -errno after one line
 * naming what is missing (nothing is then left loaded or attached).
 */
int causes__open(struct sink *sk);
void causes__destroy(struct causes *c);

/* A run of the sink's books: its id, and when its first and last frames arrived. */
struct causes_run {
	__u32 id;
	__u64 first_ns, last_ns; /* CLOCK_MONOTONIC */
};

/* Every tick (main thread): the sink device's drops without a frame, by when they happened. */
void causes_tick(struct causes *c, __u64 now_ns);

/*
 * The summary's join: read the tracer's books (once) and charge the
 * unidentified counts, given the runs in the sink's books. 0 or -errno.
 */
int causes_settle(struct causes *c, const struct causes_run *runs, unsigned int n);

/* What a run's books say that its causes are joined with. */
struct causes_books {
	__s64 lost;
	__u64 head; /* frames missing before the first: explained as lost ones are */
	__u64 marks_missing; /* its marks that never arrived, once its end is seen; else 0 */
};

/* A run's causes as its JSON members: lost_causes, lost_unexplained, lost_overexplained. */
void causes_json_run(const struct causes *c, struct jw *w, __u32 run, const struct causes_books *b);
/* The summary's members beside the runs: the tracer, and counts charged to no run. */
void causes_json_rest(const struct causes *c, struct jw *w);
/* "lost 1,234: QDISC_DROP r1-ds 1,200, ..., unexplained 0" under a run. */
void causes_text_run(const struct causes *c, __u32 run, const struct causes_books *b);
void causes_text_rest(const struct causes *c);
/* xdp_sink_lost_by_cause_total{run,reason,device}: the family's lines, then each run's. */
void causes_metrics_head(const struct causes *c, struct metrics_w *w);
void causes_metrics_run(const struct causes *c, struct metrics_w *w, __u32 run,
			const struct causes_books *b);

/*
 * Shared with the drops command: a count's labels and names. k gives the
 * device and netns labels (NULL: both ""); netns is the namespace's name
 * (ip netns) or, unnamed, its inode: a device name alone is not unique.
 */
void causes_metric_sample(struct metrics_w *w, const char *name, const char *run, const char *kind,
			  const char *reason, const struct drops_count *k, __u64 v);
const char *causes_reason(struct drops *d, __u32 reason, char *buf, size_t len);
/* "dev" or "dev@ns" when the device is in a named namespace other than ours. */
void causes_dev_name(const struct drops_count *k, char *buf, size_t len);
/* The rows of the family sink_causes (counters.c), and the values they describe. */
enum sink_cause_row {
	SINK_CAUSE_LOST, /* xdp_sink_lost_by_cause_total */
	SINK_CAUSE_DROPPED, /* xdp_sink_dropped_by_cause_total */
	SINK_CAUSE_UNCHARGED, /* xdp_sink_drop_runs_uncharged_total */
};

struct sink_cause_vals {
	__u64 lost_by_cause, dropped_by_cause, drop_runs_uncharged;
};

/* The test build's kernel BTF in place of the kernel's (XDPSG_TEST_DROPS_BTF); NULL otherwise. */
const char *causes_test_btf(void);

#endif
