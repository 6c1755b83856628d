/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_GEN_STREAMS_H
#define XDPSG_GEN_STREAMS_H

/*
 * Several streams in one run (--stream SPEC, --streams FILE). A stream is a
 * copy of the run's options with its own keys applied (proto, vlan, size,
 * flows, addresses, ports, rate, count, ...): its own struct pkt_opts, its
 * own run id (the run's for stream 0, then run + i, so no two share one),
 * its own exact count and rate. Each thread takes a share of every stream
 * (struct gen_tstream: a generator over the stream's shard of flows and a
 * pace) and interleaves them: each wake-up takes each stream's budget.
 *
 * Threads: the parse and the plan run on the main thread before the
 * workers start; a gen_tstream's counters are written by its thread only
 * and read by the main thread for the report.
 */
#include "gen.h"

#define GEN_STREAMS_MAX 16
#define GEN_STREAM_NAME_MAX 32

struct gen_stream {
	struct gen_cfg cfg; /* the run's options with this stream's keys */
	char name[GEN_STREAM_NAME_MAX];
	char where[96]; /* "--stream 1", "--streams f.json line 7: stream 2": for errors */
	bool has_count, has_rate, has_size, has_imix, has_proto, has_tcp_flags, has_ports;
	__u64 count, rate; /* resolved: the stream's share of -n and --rate, or its own */
	struct pkt_opts popts;
	struct pkt_imix imix;
};

struct gen_tstream {
	struct pkt_gen *pg; /* this thread's shard of the stream's flows */
	struct pace pace; /* this thread's share of the stream's count and rate */
	__u64 attempted; /* frames handed over (qdisc: taken or refused), for the pace */
	__u64 sent, bytes;
	__u64 marks; /* its marks the kernel took (marks.h) */
	__u64 first_ns, last_ns; /* its first and last frames handed over, for its rate */
} __attribute__((aligned(64)));

/*
 * The thread has nothing (more) to send of this stream: its share is done,
 * or was none (more threads than the stream's count: quota 0 would mean no
 * limit).
 */
static inline bool gen_tstream_done(const struct gen_tstream *ts)
{
	return ts->pace.idle || pace_done(&ts->pace, ts->attempted);
}

/*
 * How many frames of stream ts may go now (at most batch); 0 when none is
 * due yet, and then *first becomes its due time if that is the earliest of
 * the streams so far (0: none known).
 */
static inline __u32 gen_tstream_budget(struct gen_tstream *ts, __u32 batch, __u64 now, __u64 *first)
{
	__u64 due;
	__u32 want = pace_budget(&ts->pace, ts->attempted, batch, now, &due);

	if (!want && due && (!*first || due < *first))
		*first = due;
	return want;
}

/* The thread handed n frames of stream ts over at 'began'. */
static inline void gen_tstream_note(struct gen_tstream *ts, __u32 n, __u64 began)
{
	if (!n)
		return;
	if (!ts->first_ns)
		CNT_SET(ts->first_ns, began);
	CNT_SET(ts->last_ns, now_ns());
}

/*
 * --stream/--streams into g->streams (before the interface is looked at):
 * -EINVAL after one line naming the stream, the key and the fix. Sets
 * cfg->count to the streams' sum when every stream has a count.
 */
int gen_streams_parse(struct gen *g, struct gen_cfg *cfg, const struct param_cmd *cmd);

/* The streams' pkt_opts (build_opts() of packets.c for each), then every thread's share. */
int gen_streams_build(struct gen *g,
		      int (*build)(struct gen *g, const struct gen_cfg *cfg, struct pkt_opts *o,
				   struct pkt_imix *imix, const char *where));

void gen_streams_free(struct gen *g);

/* Report: a "streams" array, a text line per stream, per-stream metric families. */
void gen_streams_json(const struct gen *g, struct jw *w);
void gen_streams_text(const struct gen *g);
void gen_streams_metrics(struct gen *g, struct metrics_w *w);
void gen_streams_started(const struct gen *g);
/* An interval's part: each stream's frames, bytes and rate between readings b and a (dt ns). */
void gen_streams_json_interval(const struct gen *g, struct jw *w, const __u64 *a, const __u64 *b,
			       __u64 dt);
void gen_streams_text_interval(const struct gen *g, const __u64 *a, const __u64 *b, __u64 dt);

/* With streams: 1 if every stream with a rate reached it, 0 if one did not, -1 if none has one. */
int gen_streams_rate_reached(const struct gen *g);
/* "udp 5.00k of 5.00k pps, syn 9.96k of 10.0k pps NOT reached": each paced stream's rate. */
void gen_streams_rate_text(const struct gen *g);

/* A stream's frames sent (summed over threads), and its rate asked. */
__u64 gen_stream_sent(const struct gen *g, unsigned int s, __u64 *bytes);

#endif
