/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_RUN_H
#define XDPSG_RUN_H

/*
 * The run skeleton both tools share: start the worker threads and wait until
 * each is set up, take the base reading, print the start line, release the
 * workers together, report every interval, stop by count, duration, a tool's
 * own reason or a signal, stop and join the workers, take the last reading,
 * print the summary and give the verdict; and map the outcome to an exit code.
 *
 * A tool supplies its readings as snapshots (any struct whose first member is
 * a struct run_snap) and a table of callbacks. The skeleton decides whether a
 * report is text or JSON, and writes the members every JSON report has; the
 * tool writes the rest. Threads: everything here runs on the main thread
 * except the run_worker_*() calls, which the workers make.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "base/json_writer.h"
#include "report/metrics.h"

struct run_snap {
	__u64 t_ns; /* CLOCK_MONOTONIC when the reading was taken */
};

/* Embedded in each of a tool's per-thread structures. */
struct run_worker {
	pthread_t tid;
	bool created;
	int err; /* the worker's setup or runtime error, -errno */
	int ready; /* set up (or failed): the main thread may go on */
	int finished; /* left its loop */
};

enum run_report {
	RUN_INTERVAL, /* a = this reading, b = the previous one */
	RUN_SUMMARY, /* a = the last reading, b = the base */
};

struct run;
struct iface;

struct run_ops {
	/* Read every counter into s (t_ns included). */
	int (*sample)(void *ctx, struct run_snap *s);
	/* Deep copy of a snapshot. */
	void (*copy)(void *ctx, struct run_snap *dst, const struct run_snap *src);
	/* Optional: print the text start line (the skeleton prints the JSON one). */
	void (*started)(void *ctx);
	/*
	 * Optional, every tick (and before every report): a reason to stop now
	 * ("count", "stall", "error"), or NULL. May sample into cur.
	 */
	const char *(*check)(void *ctx, struct run_snap *cur, const struct run_snap *base);
	/* Optional, every interval, quiet or not (peak rates). */
	void (*observe)(void *ctx, const struct run_snap *a, const struct run_snap *b);
	/* The tool's JSON members of a report, after the common ones. */
	void (*json)(void *ctx, struct jw *w, const struct run_snap *a, const struct run_snap *b,
		     enum run_report kind);
	/* The tool's text report. */
	void (*text)(void *ctx, const struct run_snap *a, const struct run_snap *b,
		     enum run_report kind);
	/* Optional: before the workers are told to stop (the sink detaches here). */
	void (*quiesce)(void *ctx);
	/* Optional: a worker that has not finished yet; make a blocking call return. */
	void (*wake)(void *ctx, unsigned int worker);
	/*
	 * Optional: the tool's rows of the OpenMetrics exposition, as counters
	 * since the base (a = the reading, b = the base): the same values the
	 * report of that reading shows. Only called with --metrics-*.
	 */
	void (*metrics)(void *ctx, struct metrics_w *w, const struct run_snap *a,
			const struct run_snap *b, enum run_report kind);
	/* Optional: the verdict after the summary, 0 or -errno. */
	int (*verdict)(void *ctx, const char *stop_reason);
};

struct run_opts {
	const char *tool; /* "xdp-gen" */
	const char *mode; /* "xsk" */
	const char *ifname;
	__u64 duration_ns; /* 0: no limit */
	__u64 interval_ns;
	__u64 tick_ns; /* how often check() runs */
	bool json, quiet;
	bool json_ready; /* print {"type":"ready",...} once the run starts */
	struct metrics *metrics; /* --metrics-file/--metrics-listen, or NULL */
	/*
	 * The interface the run is about, or NULL. Watched every tick: if it goes
	 * away (deleted, renamed, moved to another namespace) the run stops with
	 * "interface gone", says so after the summary and returns -ENXIO.
	 */
	const struct iface *ifc;
};

struct run {
	const struct run_ops *ops;
	void *ctx;
	struct run_opts o;
	struct run_snap *base, *prev, *cur;
	bool have_base;
	/* workers: n structures of 'stride' bytes, each with a run_worker at 'off' */
	void *workers;
	unsigned int nworkers;
	size_t stride, off;
	int go, stop;
	const char *stop_reason;
	int err; /* a failure during the run (run_fail), returned after the summary */
	__u64 gone_ns; /* when o.ifc was found gone; 0 while it is here */
};

void run_init(struct run *r, const struct run_ops *ops, void *ctx, const struct run_opts *o,
	      struct run_snap *base, struct run_snap *prev, struct run_snap *cur);

/*
 * Start one thread per worker structure (fn gets its address) and wait until
 * every one has called run_worker_ready(). Returns the first worker's error.
 */
int run_start_workers(struct run *r, void *workers, unsigned int n, size_t stride, size_t off,
		      void *(*fn)(void *));
struct run_worker *run_worker_at(const struct run *r, unsigned int i);

/* The base reading now, before anything is counted (otherwise run_loop takes it). */
int run_take_base(struct run *r);

/*
 * The run itself, from the start line to the verdict. Returns 0, a worker's
 * error, or what check()/verdict() decided (-errno).
 */
int run_loop(struct run *r);

/* From check(): the run failed with err; return "error" after calling it. */
void run_fail(struct run *r, int err);

/* Stop and join every worker still running (also safe on an error path). */
void run_join_workers(struct run *r);

/* Worker side. */
void run_worker_ready(struct run *r, struct run_worker *w, int err);
/* Wait for the start; false if the run stopped first. */
bool run_worker_wait_go(struct run *r);
void run_worker_done(struct run_worker *w);
bool run_should_stop(const struct run *r);
/*
 * Only the main thread's stop, not a signal: for workers that must go on
 * reading until the main thread has quiesced what feeds them.
 */
bool run_stop_requested(const struct run *r);
bool run_all_finished(const struct run *r);

/*
 * Exit codes: 0 success, 2 when the environment or the usage said no (a
 * missing device or queue, a busy interface, missing privileges, no huge
 * pages when asked for), 1 for any other failure.
 */
int run_exit_code(int err, bool huge_pages_asked);

/* "SIGINT", "SIGTERM" or "SIGHUP": the signal that stopped the run. */
const char *run_signal_name(int sig);

#endif
