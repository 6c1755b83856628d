/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_GEN_H
#define XDPSG_GEN_H

/*
 * xdp-gen's shared state. main.c parses the options and runs the skeleton
 * (common/report/run.h); packets.c builds what every mode sends; report.c reads the
 * counters and prints them; each mode (xsk.c, kernel.c, qdisc.c) is a struct
 * gen_mode whose callbacks own everything that differs between modes.
 *
 * Threads: one worker per queue (xsk) or per CPU (kernel, qdisc). A worker
 * owns its struct gen_thread's counters (single writer, one cache line) and
 * its mode state; the main thread only reads them.
 */
#include <signal.h>
#include <stdbool.h>
#include <linux/types.h>

#include "base/counter.h"
#include "base/json_writer.h"
#include "base/runtime.h"
#include "cli/params.h"
#include "kern/iface.h"
#include "kern/kstats.h"
#include "measure/clockid.h"
#include "pace.h"
#include "pkt/gen.h"
#include "report/metrics.h"
#include "report/run.h"
#include "xsk/xsk_queue.h"

struct gen_cfg {
	/* run */
	__u64 duration, count, interval, rate;
	/* traffic shape (xsk, kernel) */
	__u64 burst, burst_gap;
	bool poisson;
	bool json, quiet;
	int verbose;
	/* packets */
	__u64 size;
	bool imix;
	const char *imix_sizes;
	bool ipv6;
	const char *src_mac, *dst_mac, *src_ip, *dst_ip, *src_port, *dst_port;
	__u64 flows;
	bool random;
	bool no_stamp;
	const char *stamp_key; /* --stamp-key FILE */
	int clock; /* --clock: enum xdpsg_clock the stamps are on */
	bool no_end_mark; /* marks.h: start marks only */
	/* headers (common/pkt/opts.h) */
	int proto; /* enum pkt_proto; 0: UDP */
	const char *tcp_flags;
	struct param_strings vlan;
	__u64 vlan_prio;
	const char *encap, *outer_src_ip, *outer_dst_ip;
	/* several streams (streams.c): --stream SPEC, --streams FILE */
	struct param_strings stream;
	const char *streams_file;
	/* replay (xsk --pcap) */
	const char *pcap, *pcap_timing;
	bool stamp;
	/* threads */
	struct param_list queues;
	struct param_list cpus;
	/* AF_XDP */
	__u64 batch, ring_size;
	__u64 xsk_batch; /* xsk's --batch: its own default (larger kicks pay there) */
	struct xsk_cli xsk;
	__u64 tx_budget;
	bool rtt; /* receive the frames a reflector returns, report the round trip */
	/* kernel (live frames) */
	__u64 threads;
	bool fix_peer;
	bool own_counts; /* count transmitted/failed from this process's tracepoint events */
	/* qdisc (AF_PACKET) */
	__u64 sndbuf;
	bool kernel_stats;
	/* OpenMetrics export */
	struct metrics_cli metrics;
};

/* A mode's own counters (failures by reason), described by the mode's failures table. */
#define GEN_MODE_COUNTERS 2

/* Counters of one thread: written only by it, read by the main thread. */
struct gen_counters {
	__u64 sent; /* frames the kernel confirmed taking */
	__u64 bytes; /* bytes of the frames sent */
	__u64 submitted; /* frames handed to the kernel */
	/* the sending loop waited: why, and how often it asked the kernel to send */
	__u64 stall_ring; /* the transmit ring was full */
	__u64 stall_frames; /* no free frame: waiting for completions */
	__u64 stall_kick; /* the kick was answered EAGAIN/EBUSY/ENOBUFS */
	__u64 stall_idle; /* the device took nothing for a while: waited in poll() */
	__u64 kicks;
	__u64 marks; /* marks the kernel took (marks.h): never in sent, bytes or the rate */
	__u64 m[GEN_MODE_COUNTERS];
} __attribute__((aligned(64)));

/*
 * Frames not sent, or dropped after the kernel took them, between two
 * readings: the rows of the failures' tables point here (counters.c has the
 * ones every mode has, a mode's file its own).
 */
struct gen_failures {
	__u64 link_tx_dropped;
	__u64 m[GEN_MODE_COUNTERS]; /* the threads' own counts (gen_counters.m) */
	__u64 x[GEN_MODE_COUNTERS]; /* what the mode reads elsewhere (failures_read) */
};

#define GEN_FAIL_M(k) offsetof(struct gen_failures, m[k])
#define GEN_FAIL_X(k) offsetof(struct gen_failures, x[k])

struct ctr_family;
struct gen;
struct gen_stream;
struct gen_tstream;
struct gen_replay;
struct gen_rtt;

struct gen_thread {
	struct gen *g;
	struct run_worker w;
	unsigned int idx;
	unsigned int queue;
	int cpu;
	struct pace pace; /* this thread's share of --count and --rate */
	struct gen_counters c;
	/* when it began handing frames to the kernel, and last did (its writer: the thread) */
	__u64 first_ns, last_ns;
	struct pkt_gen *pg;
	/* With --stream/--streams: its share of each stream (streams.h); pg is the largest's. */
	struct gen_tstream *ts;
	void *m; /* the mode's per-thread state */
	/*
	 * Marks (marks.h). Written by the thread: its runs' frames once its
	 * data is done (mark_frames, by stream), then marks_arrived; marking
	 * while it sends marks (the stop's wake-up signal leaves it alone).
	 */
	__u64 mark_frames[XDPSG_GEN_MAX_STREAMS];
	int marks_arrived, marking;
	void *mark_buf, *mark_batch;
	const __u32 *replay_seq; /* xsk --pcap --stamp: its flow's next sequence number */
};

struct gen_snapshot {
	struct run_snap rs;
	struct gen_counters total;
	struct gen_counters *per; /* per thread */
	struct link_stats link;
	/* the earliest any thread began sending, the latest any sent; 0 before */
	__u64 first_send_ns, last_send_ns;
	struct kstats *ks; /* with --kernel-stats, or when the mode watches the qdisc */
	void *m; /* the mode's own readings, mode->snap_size bytes */
	/* with streams: stream i's frames [2i] and bytes [2i + 1] sent (a mode's sample may refresh them) */
	__u64 *stream_tx;
};

/* Everything that differs between modes. Optional callbacks may be NULL. */
struct gen_mode {
	const char *unit; /* what a worker drives: "queue" or "thread" */
	/* Its own failure reasons: rows over struct gen_failures, in every report. */
	const struct ctr_family *failures;
	bool needs_kstats; /* reads the qdisc even without --kernel-stats */
	bool wake_by_signal; /* workers block in the kernel: SIGUSR1 makes them return */
	size_t snap_size;
	/* How many workers, and which queue each drives (t->queue). */
	int (*plan)(struct gen *g, unsigned int maxq);
	/* Checks that need the packets built; -EINVAL after one line on stderr. */
	int (*preflight)(struct gen *g);
	/* Main thread, before the workers start (load a program, fill maps). */
	int (*setup)(struct gen *g);
	void *(*worker)(void *arg);
	/* Frames handed to the kernel and not yet confirmed; NULL: always 0. */
	__u64 (*outstanding)(const struct gen_counters *c);
	/* "copy mode", "live frames": for the start line. */
	const char *(*describe)(const struct gen *g);
	/* The mode's readings, after the threads' counters are in s->per. */
	void (*sample)(struct gen *g, struct gen_snapshot *s);
	const char *(*check)(struct gen *g, struct gen_snapshot *cur);
	void (*json)(struct gen *g, struct jw *w, const struct gen_snapshot *a,
		     const struct gen_snapshot *b, enum run_report kind);
	/* Its failures between two readings that are not in gen_counters.m (f->x). */
	void (*failures_read)(struct gen *g, const struct gen_snapshot *a,
			      const struct gen_snapshot *b, struct gen_failures *f);
	/* Members of the "kernel" object, after the link counters. */
	void (*json_kernel)(struct gen *g, struct jw *w, const struct gen_snapshot *a,
			    const struct gen_snapshot *b);
	void (*json_queue)(struct gen *g, struct jw *w, unsigned int i,
			   const struct gen_snapshot *a, enum run_report kind);
	void (*text)(struct gen *g, const struct gen_snapshot *a, const struct gen_snapshot *b,
		     enum run_report kind);
	/* Appended to a thread's -v line. */
	void (*text_queue)(struct gen *g, unsigned int i, const struct gen_snapshot *a,
			   const struct gen_snapshot *b, enum run_report kind);
	/* Its own OpenMetrics families, after the common ones. */
	void (*metrics)(struct gen *g, struct metrics_w *w, enum run_report kind);
	int (*verdict)(struct gen *g, const char *stop_reason);
	void (*cleanup)(struct gen *g);
	/*
	 * Marks (marks.h), on the thread, on its own path to the wire (its
	 * socket, its CPU): hand n frames to the kernel, return how many it
	 * took (0..n; -errno: none can go); never blocks for long.
	 */
	int (*mark_send)(struct gen_thread *t, void *const *frames, const __u32 *lens,
			 unsigned int n);
	/* Optional, before the end marks: each of its flows' next sequence number into its pkt_gens. */
	int (*mark_sync)(struct gen_thread *t);
};

extern const struct gen_mode gen_mode_xsk, gen_mode_kernel, gen_mode_qdisc;

struct gen {
	const struct gen_cfg *cfg;
	const struct gen_mode *mode;
	const char *mode_name;
	struct iface ifc;
	struct pkt_opts popts;
	struct pkt_imix imix;
	struct stamp_key key; /* the stamps' (--stamp-key, $XDPSG_STAMP_KEY or the public key) */
	struct clock_info clock; /* the stamps' clock (--clock) as this process reads it */
	unsigned int nthreads;
	struct gen_thread *th;
	struct run run;
	struct gen_snapshot base, prev, cur;
	struct kstats_reader *kr; /* with --kernel-stats, or when the mode needs it */
	struct metrics *metrics; /* --metrics-file/--metrics-listen */
	struct gen_replay *replay; /* --pcap: the file's frames (replay.h) */
	struct gen_rtt *rtt; /* xsk --rtt (rtt.h) */
	struct gen_stream *streams; /* --stream/--streams (streams.h); NULL: one stream, popts */
	unsigned int nstreams;
	char **stream_strs; /* the values the streams' configs point into */
	unsigned int nstream_strs;
	void *m; /* the mode's own state */
};

/* Set in a worker by the stop's wake-up signal (SIGUSR1) once it arrived there. */
extern __thread volatile sig_atomic_t gen_woken;

static inline bool gen_should_stop(const struct gen *g)
{
	return run_should_stop(&g->run);
}

/*
 * A worker is set up (err 0) or failed: tell the main thread. Returns true
 * when it should start sending: the run started and its share is not zero.
 */
bool gen_worker_ready(struct gen_thread *t, int err);

/* packets.c: addresses, templates and one generator per thread. */
int gen_build_packets(struct gen *g);

/* main.c: one worker per thread of --threads, or per queue of --queues. */
int gen_plan_threads(struct gen *g, unsigned int maxq);
int gen_plan_queues(struct gen *g, unsigned int maxq);

/* report.c */
int gen_snapshots_alloc(struct gen *g);
void gen_snapshots_free(struct gen *g);
int gen_sample(void *ctx, struct run_snap *rs);
void gen_copy(void *ctx, struct run_snap *dst, const struct run_snap *src);
void gen_started(void *ctx);
void gen_json(void *ctx, struct jw *w, const struct run_snap *a, const struct run_snap *b,
	      enum run_report kind);
void gen_text(void *ctx, const struct run_snap *a, const struct run_snap *b, enum run_report kind);
void gen_metrics(void *ctx, struct metrics_w *w, const struct run_snap *a, const struct run_snap *b,
		 enum run_report kind);
/* counters.c: the counter families every mode has, and --counters */
extern const struct ctr_family gen_sent, gen_stalls, gen_failures_all, gen_config;
int gen_list_counters(const struct param_cmd *const *cmds);

/* Delta of a mode counter between two readings, over all threads. */
static inline __u64 gen_mode_delta(const struct gen_snapshot *a, const struct gen_snapshot *b,
				   unsigned int k)
{
	return a->total.m[k] - b->total.m[k];
}

/*
 * A worker handed frames to the kernel in a call or batch that began at
 * 'began': the summary's sending span runs from its first such start to its
 * last end.
 */
static inline void gen_note_sent(struct gen_thread *t, __u64 began)
{
	if (!t->first_ns)
		CNT_SET(t->first_ns, began);
	CNT_SET(t->last_ns, now_ns());
}

#endif
