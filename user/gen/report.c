// SPDX-License-Identifier: GPL-2.0
/*
 * xdp-gen's readings and reports: what every mode counts (frames and bytes
 * sent, the link's counters, per thread), with the mode's own parts from its
 * struct gen_mode. The skeleton (common/report/run.c) decides text or JSON.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fmt.h"
#include "base/runtime.h"
#include "gen.h"
#include "marks.h"
#include "pace.h"
#include "pkt/build.h"
#include "replay.h"
#include "report/counter_desc.h"
#include "streams.h"

static struct gen_snapshot *snap_of(const struct run_snap *rs)
{
	return (struct gen_snapshot *)rs;
}

static int snapshot_alloc(const struct gen *g, struct gen_snapshot *s)
{
	s->per = calloc(g->nthreads, sizeof(*s->per));
	s->m = g->mode->snap_size ? calloc(1, g->mode->snap_size) : NULL;
	if (g->kr)
		s->ks = calloc(1, sizeof(*s->ks));
	if (g->nstreams)
		s->stream_tx = calloc(2 * (size_t)g->nstreams, sizeof(*s->stream_tx));
	if (!s->per || (g->mode->snap_size && !s->m) || (g->kr && !s->ks) ||
	    (g->nstreams && !s->stream_tx))
		return -ENOMEM;
	return 0;
}

int gen_snapshots_alloc(struct gen *g)
{
	if (snapshot_alloc(g, &g->base) || snapshot_alloc(g, &g->prev) ||
	    snapshot_alloc(g, &g->cur))
		return -ENOMEM;
	return 0;
}

static void snapshot_free(struct gen_snapshot *s)
{
	free(s->per);
	free(s->m);
	free(s->ks);
	free(s->stream_tx);
}

void gen_snapshots_free(struct gen *g)
{
	snapshot_free(&g->base);
	snapshot_free(&g->prev);
	snapshot_free(&g->cur);
}

static void counters_add(struct gen_counters *d, const struct gen_counters *s)
{
	unsigned int k;

	d->sent += CNT_READ(s->sent);
	d->bytes += CNT_READ(s->bytes);
	d->submitted += CNT_READ(s->submitted);
	d->stall_ring += CNT_READ(s->stall_ring);
	d->stall_frames += CNT_READ(s->stall_frames);
	d->stall_kick += CNT_READ(s->stall_kick);
	d->stall_idle += CNT_READ(s->stall_idle);
	d->kicks += CNT_READ(s->kicks);
	d->marks += CNT_READ(s->marks);
	for (k = 0; k < GEN_MODE_COUNTERS; k++)
		d->m[k] += CNT_READ(s->m[k]);
}

int gen_sample(void *ctx, struct run_snap *rs)
{
	struct gen *g = ctx;
	struct gen_snapshot *s = snap_of(rs);
	unsigned int i;

	s->rs.t_ns = now_ns();
	s->first_send_ns = s->last_send_ns = 0;
	for (i = 0; i < g->nthreads; i++) {
		__u64 f = CNT_READ(g->th[i].first_ns), l = CNT_READ(g->th[i].last_ns);

		memset(&s->per[i], 0, sizeof(s->per[i]));
		counters_add(&s->per[i], &g->th[i].c);
		if (f && (!s->first_send_ns || f < s->first_send_ns))
			s->first_send_ns = f;
		if (l > s->last_send_ns)
			s->last_send_ns = l;
	}
	for (i = 0; i < g->nstreams; i++)
		s->stream_tx[2 * i] = gen_stream_sent(g, i, &s->stream_tx[2 * i + 1]);
	if (g->mode->sample)
		g->mode->sample(g, s);
	memset(&s->total, 0, sizeof(s->total));
	for (i = 0; i < g->nthreads; i++)
		counters_add(&s->total, &s->per[i]);
	iface_link_stats(g->ifc.name, &s->link);
	if (g->kr && s->ks)
		kstats_read(g->kr, s->ks);
	return 0;
}

void gen_copy(void *ctx, struct run_snap *dst_rs, const struct run_snap *src_rs)
{
	const struct gen *g = ctx;
	struct gen_snapshot *d = snap_of(dst_rs);
	const struct gen_snapshot *s = snap_of(src_rs);

	/* Members one by one: the buffers stay the destination's own. */
	d->rs = s->rs;
	d->total = s->total;
	d->link = s->link;
	d->first_send_ns = s->first_send_ns;
	d->last_send_ns = s->last_send_ns;
	memcpy(d->per, s->per, g->nthreads * sizeof(*d->per));
	if (d->ks && s->ks)
		*d->ks = *s->ks;
	if (d->m)
		memcpy(d->m, s->m, g->mode->snap_size);
	if (d->stream_tx)
		memcpy(d->stream_tx, s->stream_tx, 2 * (size_t)g->nstreams * sizeof(*d->stream_tx));
}

void gen_started(void *ctx)
{
	const struct gen *g = ctx;
	unsigned int i;
	char kind[96];

	pkt_kind_str(&g->popts, kind, sizeof(kind));
	printf("xdp-gen %s on %s: %u %s%s (", g->mode_name, FMT_NAME(g->ifc.name), g->nthreads,
	       g->mode->unit, g->nthreads > 1 ? "s" : "");
	for (i = 0; i < g->nthreads; i++)
		printf("%s%u on cpu %d", i ? ", " : "", g->th[i].queue, g->th[i].cpu);
	if (g->replay)
		printf("), %s, %u frames of %s (%u-%u bytes), run %08x; Ctrl-C to stop\n",
		       g->mode->describe(g), g->replay->f.n, g->cfg->pcap, g->replay->f.min_len,
		       g->replay->f.max_len, (unsigned int)g->popts.run);
	else if (g->nstreams)
		printf("), %s, %u streams, runs %08x-%08x; Ctrl-C to stop\n", g->mode->describe(g),
		       g->nstreams, (unsigned int)g->popts.run,
		       (unsigned int)(g->popts.run + g->nstreams - 1));
	else
		printf("), %s, %u-byte frames%s (%s), run %08x; Ctrl-C to stop\n",
		       g->mode->describe(g), pkt_gen_max_len(g->th[0].pg),
		       g->popts.imix ? " max (imix)" : "", kind, (unsigned int)g->popts.run);
	gen_streams_started(g);
}

static __u64 outstanding(const struct gen *g, const struct gen_counters *c)
{
	return g->mode->outstanding ? g->mode->outstanding(c) : 0;
}

/* Every failure between two readings: the ones every mode has, then the mode's own. */
static void failures_between(struct gen *g, const struct gen_snapshot *a,
			     const struct gen_snapshot *b, struct gen_failures *f)
{
	unsigned int k;

	memset(f, 0, sizeof(*f));
	f->link_tx_dropped = a->link.tx_dropped - b->link.tx_dropped;
	for (k = 0; k < GEN_MODE_COUNTERS; k++)
		f->m[k] = gen_mode_delta(a, b, k);
	if (g->mode->failures_read)
		g->mode->failures_read(g, a, b, f);
}

static __u64 failures_sum(const struct gen *g, const struct gen_failures *f)
{
	return ctr_sum(&gen_failures_all, f, 0) +
	       (g->mode->failures ? ctr_sum(g->mode->failures, f, 0) : 0);
}

/* "name N" of every failure, sep between them. */
static void text_failures(const struct gen *g, const struct gen_failures *f, const char *sep)
{
	if (ctr_text(stdout, &gen_failures_all, f, 0, sep) && g->mode->failures)
		fputs(sep, stdout);
	if (g->mode->failures)
		ctr_text(stdout, g->mode->failures, f, 0, sep);
}

/* The same, failures that are not 0 only. */
static void text_failures_nonzero(const struct gen *g, const struct gen_failures *f,
				  const char *sep)
{
	if (ctr_text_nonzero(stdout, &gen_failures_all, f, 0, sep) && g->mode->failures &&
	    ctr_sum(g->mode->failures, f, 0))
		fputs(sep, stdout);
	if (g->mode->failures)
		ctr_text_nonzero(stdout, g->mode->failures, f, 0, sep);
}

static __u64 rate_ns(const struct gen_snapshot *a, const struct gen_snapshot *b,
		     enum run_report kind);

/* Is this run stamped (built frames without --no-stamp, or a replay with --stamp)? */
static bool gen_stamped(const struct gen *g)
{
	return g->replay ? g->replay->stamp : !g->popts.no_stamp;
}

/*
 * The stamps' clock, and this host's sync state: where the sink is another
 * host, the error of a one-way latency is both ends' together.
 */
static void text_clock(const struct gen *g)
{
	const struct clock_info *ci = &g->clock;
	char e[24];

	printf("  clock:    %s, ", clock_name(ci->clock));
	if (ci->clock == XDPSG_CLOCK_MONOTONIC)
		printf("this host's own: one-way latency only where the sink runs on this kernel (--clock tai across hosts)\n");
	else if (ci->synced)
		printf("synchronised, error at most %s (adjtimex maxerror)\n",
		       fmt_ns(e, sizeof(e), ci->maxerror_us * 1000ULL));
	else
		printf("not synchronised (adjtimex: STA_UNSYNC): a sink on another host figures no one-way latency (run chrony, or ptp4l and phc2sys)\n");
}

static void json_clock(struct jw *w, const struct gen *g)
{
	const struct clock_info *ci = &g->clock;

	jw_obj(w, "clock");
	jw_str(w, "name", clock_name(ci->clock));
	jw_bool(w, "synchronised", ci->synced);
	jw_u64(w, "sync_error_ns", ci->maxerror_us * 1000ULL);
	jw_end_obj(w);
}

static void json_queues(struct gen *g, struct jw *w, const struct gen_snapshot *a,
			const struct gen_snapshot *b, enum run_report kind)
{
	__u64 dt = rate_ns(a, b, kind);
	unsigned int i;

	jw_arr(w, "queues");
	for (i = 0; i < g->nthreads; i++) {
		const struct gen_counters *pa = &a->per[i], *pb = &b->per[i];

		jw_obj(w, NULL);
		jw_u64(w, "queue", g->th[i].queue);
		jw_u64(w, "cpu", (__u64)g->th[i].cpu);
		jw_u64(w, "tx_packets", pa->sent - pb->sent);
		jw_u64(w, "tx_bytes", pa->bytes - pb->bytes);
		jw_double(w, "pps", counter_rate(pa->sent, pb->sent, dt));
		jw_u64(w, "outstanding", outstanding(g, pa));
		if (g->mode->json_queue)
			g->mode->json_queue(g, w, i, a, kind);
		jw_end_obj(w);
	}
	jw_end_arr(w);
}

/*
 * The summary's sending span: from the first frame handed to the kernel to
 * the last (the time a mode takes to start sending is not its rate's).
 */
static __u64 send_span(const struct gen_snapshot *a, const struct gen_snapshot *b)
{
	__u64 from = a->first_send_ns > b->rs.t_ns ? a->first_send_ns : b->rs.t_ns;

	return a->last_send_ns > from ? a->last_send_ns - from : 0;
}

/* The basis of a report's rates: the row, or in the summary the sending span. */
static __u64 rate_ns(const struct gen_snapshot *a, const struct gen_snapshot *b,
		     enum run_report kind)
{
	__u64 span = kind == RUN_SUMMARY ? send_span(a, b) : 0;

	return span ? span : a->rs.t_ns - b->rs.t_ns;
}

/*
 * --rate was reached: at least 99% of it over the sending span. -1 without
 * --rate. With streams, each has its rate and its span (they may end apart):
 * reached when every stream with a rate reached its own.
 */
static int rate_reached(const struct gen *g, __u64 sent, __u64 span);

/* The flows of the run: with streams, of all of them (each is a run of its own). */
static __u64 run_flows(const struct gen *g)
{
	__u64 n = 0;
	unsigned int s;

	for (s = 0; s < g->nstreams; s++)
		n += g->streams[s].popts.flows;
	if (g->replay)
		return g->replay->stamp ? g->nthreads : 0;
	return g->nstreams ? n : g->popts.flows;
}

/* The rate asked: --rate, or with streams the sum of theirs. */
static __u64 rate_asked(const struct gen *g)
{
	__u64 r = 0;
	unsigned int s;

	for (s = 0; s < g->nstreams; s++)
		r += g->streams[s].rate;
	return g->nstreams ? r : g->cfg->rate;
}

static int rate_reached(const struct gen *g, __u64 sent, __u64 span)
{
	if (g->nstreams)
		return gen_streams_rate_reached(g);
	if (!g->cfg->rate)
		return -1;
	return pace_reached(sent, span, g->cfg->rate);
}

void gen_json(void *ctx, struct jw *w, const struct run_snap *ra, const struct run_snap *rb,
	      enum run_report kind)
{
	struct gen *g = ctx;
	const struct gen_snapshot *a = snap_of(ra), *b = snap_of(rb);
	__u64 dt = rate_ns(a, b, kind);
	struct gen_failures f;
	struct gen_counters d;
	int reached;

	ctr_sub(&d, &a->total, &b->total, sizeof(d));
	failures_between(g, a, b, &f);
	if (kind == RUN_SUMMARY) {
		char key[32];

		jw_u64(w, "requested", g->cfg->count);
		jw_u64(w, "run", g->popts.run);
		jw_u64(w, "flows", run_flows(g));
		jw_str(w, "stamp_key", stamp_key_name(&g->key, key, sizeof(key)));
		json_clock(w, g);
		jw_str(w, "rate_basis", "sending");
		jw_double(w, "send_s", (double)send_span(a, b) / 1e9);
		reached = rate_reached(g, d.sent, send_span(a, b));
		if (reached >= 0) {
			jw_u64(w, "rate_asked", rate_asked(g));
			jw_bool(w, "rate_reached", reached);
		}
	} else {
		jw_str(w, "rate_basis", "interval");
	}
	ctr_json(w, &gen_sent, &d, 0);
	if (kind == RUN_SUMMARY) {
		jw_u64(w, "marks", d.marks);
		jw_u64(w, "marks_per_flow", gen_marks_per_flow(g));
	}
	jw_u64(w, "rx_packets", 0);
	jw_u64(w, "rx_bytes", 0);
	jw_double(w, "pps", counter_rate(a->total.sent, b->total.sent, dt));
	jw_double(w, "bps", counter_rate(a->total.bytes, b->total.bytes, dt) * 8);
	jw_u64(w, "outstanding", outstanding(g, &a->total));
	ctr_json(w, &gen_stalls, &d, 0);
	if (g->mode->json)
		g->mode->json(g, w, a, b, kind);
	jw_obj(w, "drops");
	ctr_json_members(w, &gen_failures_all, &f, 0);
	if (g->mode->failures)
		ctr_json_members(w, g->mode->failures, &f, 0);
	jw_end_obj(w);
	if (g->cfg->kernel_stats && a->ks && b->ks)
		kstats_json_delta(w, "kernel_stats", a->ks, b->ks);
	jw_obj(w, "kernel");
	jw_u64(w, "link_tx_packets", a->link.tx_packets - b->link.tx_packets);
	jw_u64(w, "link_tx_dropped", a->link.tx_dropped - b->link.tx_dropped);
	if (g->mode->json_kernel)
		g->mode->json_kernel(g, w, a, b);
	jw_end_obj(w);
	json_queues(g, w, a, b, kind);
	if (kind == RUN_SUMMARY)
		gen_streams_json(g, w);
	else
		gen_streams_json_interval(g, w, a->stream_tx, b->stream_tx, dt);
}

static void text_interval(struct gen *g, const struct gen_snapshot *a, const struct gen_snapshot *b)
{
	__u64 dt = a->rs.t_ns - b->rs.t_ns;
	char b1[32], b2[32], b3[32];
	struct gen_failures f;
	struct gen_counters d;

	ctr_sub(&d, &a->total, &b->total, sizeof(d));
	failures_between(g, a, b, &f);
	printf("%8.2fs  tx %7s pps %7sbit/s  total %s",
	       (double)(a->rs.t_ns - g->base.rs.t_ns) / 1e9,
	       fmt_si(b1, sizeof(b1), counter_rate(a->total.sent, b->total.sent, dt)),
	       fmt_si(b2, sizeof(b2), counter_rate(a->total.bytes, b->total.bytes, dt) * 8),
	       fmt_count(b3, sizeof(b3), a->total.sent - g->base.total.sent));
	if (ctr_sum(&gen_stalls, &d, 0)) {
		printf("  stalls: ");
		ctr_text(stdout, &gen_stalls, &d, 0, " ");
	}
	if (outstanding(g, &a->total))
		printf("  outstanding %s", FMT_COUNT(outstanding(g, &a->total)));
	if (failures_sum(g, &f)) {
		printf("  drops: ");
		text_failures(g, &f, " ");
	}
	if (g->mode->text)
		g->mode->text(g, a, b, RUN_INTERVAL);
	gen_streams_text_interval(g, a->stream_tx, b->stream_tx, dt);
	printf("\n");
}

/*
 * A rate needs a span to be figured over: a few frames sent in microseconds
 * would read as tens of Mpps on a path that tops at one. A verdict on --rate
 * needs more: over a short run the thread's start and the pacer's first
 * catch-up weigh, not how fast the machine sends.
 */
#define GEN_RATE_MIN_SPAN_NS 10000000ULL /* 10 ms */
#define GEN_VERDICT_MIN_SPAN_NS 500000000ULL /* 0.5 s */

/* --rate given: say whether it was reached, in one line. */
static void text_rate(const struct gen *g, __u64 sent, __u64 span)
{
	int reached = rate_reached(g, sent, span);
	double got = counter_rate(sent, 0, span);

	if (reached < 0)
		return;
	if (!reached && !g->nstreams && span < GEN_RATE_MIN_SPAN_NS)
		printf("  rate:     not judged: %s frames in %.2f ms of sending, too short to figure a rate\n",
		       FMT_COUNT(sent), (double)span / 1e6);
	else if (!reached && !g->nstreams && span < GEN_VERDICT_MIN_SPAN_NS)
		printf("  rate:     not judged: %s pps of the %s asked (%.1f%%) over %.2f s of sending, too short to judge (the start weighs; a run of 0.5 s or more is judged)\n",
		       FMT_SI(got), FMT_SI((double)g->cfg->rate),
		       got * 100.0 / (double)g->cfg->rate, (double)span / 1e9);
	else if (g->nstreams)
		printf("  rate:     %s (each stream at its own rate, below)\n",
		       reached ? "reached" : "NOT reached by every stream");
	else if (reached)
		printf("  rate:     reached: %s pps of the %s asked\n", FMT_SI(got),
		       FMT_SI((double)g->cfg->rate));
	else
		printf("  rate:     NOT reached: %s pps of the %s asked (%.1f%%); this machine sends no faster this way (more queues or threads, or kernel mode, send more)\n",
		       FMT_SI(got), FMT_SI((double)g->cfg->rate),
		       got * 100.0 / (double)g->cfg->rate);
}

/* The line a person reads first, last: what went out, and whether it was what was asked. */
static void text_result(struct gen *g, const struct gen_snapshot *a, const struct gen_snapshot *b,
			const struct gen_failures *f)
{
	__u64 sent = a->total.sent - b->total.sent, span = send_span(a, b);
	int reached = rate_reached(g, sent, span);

	printf("RESULT: %s", FMT_COUNT(sent));
	if (g->cfg->count)
		printf(" of %s asked", FMT_COUNT(g->cfg->count));
	if (span >= GEN_RATE_MIN_SPAN_NS)
		printf(" sent at %s pps", FMT_SI(counter_rate(sent, 0, span)));
	else
		printf(" sent in %.2f ms (too short for a rate)", (double)span / 1e6);
	if (reached >= 0 && g->nstreams) {
		/* Streams end apart: the run's own rate is no stream's; each says its own. */
		printf(", %s (",
		       reached ? "every stream's rate reached" : "a stream's rate NOT reached");
		gen_streams_rate_text(g);
		printf(")");
	} else if (reached >= 0 && !reached && span < GEN_VERDICT_MIN_SPAN_NS)
		printf(", rate not judged: too short a run (asked %s pps)",
		       FMT_SI((double)rate_asked(g)));
	else if (reached >= 0)
		printf(", rate %s (asked %s pps)", reached ? "reached" : "NOT reached",
		       FMT_SI((double)rate_asked(g)));
	if (failures_sum(g, f)) {
		printf("; %s failed (", FMT_COUNT(failures_sum(g, f)));
		text_failures_nonzero(g, f, ", ");
		printf(")");
	}
	if (g->cfg->count && sent < g->cfg->count)
		printf("; stopped by %s before the count", g->run.stop_reason);
	printf("\n");
}

/*
 * What the sink needs to know to check the stamps: the key they were signed
 * with; and the marks sent besides the frames counted above.
 */
static void text_stamps(const struct gen *g, __u64 marks)
{
	char key[32];

	if (!gen_stamped(g)) {
		printf("  stamps:   none (%s), no marks\n",
		       g->replay ? "the file's frames as they are" : "--no-stamp");
		return;
	}
	stamp_key_name(&g->key, key, sizeof(key));
	printf("  stamps:   key %s%s\n", key,
	       g->key.public_key ?
		       " (anyone can forge it; --stamp-key FILE on both ends)" :
		       " (the sink needs the same file: --stamp-key or $XDPSG_STAMP_KEY)");
	text_clock(g);
	printf("  marks:    %s (%u a flow: %u start%s), not in the counts above\n",
	       FMT_COUNT(marks), gen_marks_per_flow(g), XDPSG_MARK_START_REPEAT,
	       g->cfg->no_end_mark ? "; --no-end-mark" : ", 4 end");
}

static void text_summary(struct gen *g, const struct gen_snapshot *a, const struct gen_snapshot *b)
{
	__u64 dt = a->rs.t_ns - b->rs.t_ns, span = rate_ns(a, b, RUN_SUMMARY);
	char b1[32], b2[32], b3[32], b4[32];
	struct gen_failures f;

	failures_between(g, a, b, &f);
	printf("xdp-gen %s %s: %s packets, %s bytes in %.2f s (", g->mode_name,
	       FMT_NAME(g->ifc.name), fmt_count(b1, sizeof(b1), a->total.sent - b->total.sent),
	       fmt_count(b2, sizeof(b2), a->total.bytes - b->total.bytes), (double)dt / 1e9);
	if (span >= GEN_RATE_MIN_SPAN_NS)
		printf("%s pps, %sbit/s over the %.2f s of sending",
		       fmt_si(b3, sizeof(b3), counter_rate(a->total.sent, b->total.sent, span)),
		       fmt_si(b4, sizeof(b4),
			      counter_rate(a->total.bytes, b->total.bytes, span) * 8),
		       (double)span / 1e9);
	else
		printf("sent in %.2f ms: too short to figure a rate", (double)span / 1e6);
	printf("); stopped by %s\n", g->run.stop_reason);
	text_rate(g, a->total.sent - b->total.sent, span);
	text_stamps(g, a->total.marks - b->total.marks);
	gen_streams_text(g);
	if (g->mode->text)
		g->mode->text(g, a, b, RUN_SUMMARY);
	printf("  drops:    ");
	text_failures(g, &f, ", ");
	printf("\n  kernel:   %s tx_packets %s, tx_dropped %s\n", FMT_NAME(g->ifc.name),
	       FMT_COUNT((a->link.tx_packets - b->link.tx_packets)),
	       FMT_COUNT((a->link.tx_dropped - b->link.tx_dropped)));
}

static void text_queues(struct gen *g, const struct gen_snapshot *a, const struct gen_snapshot *b,
			enum run_report kind)
{
	__u64 dt = rate_ns(a, b, kind);
	char b1[32], b2[32];
	unsigned int i;

	for (i = 0; i < g->nthreads; i++) {
		const struct gen_counters *pa = &a->per[i], *pb = &b->per[i];

		printf("    queue %-4u cpu %-3d %12s packets %8s pps  outstanding %s",
		       g->th[i].queue, g->th[i].cpu, fmt_count(b1, sizeof(b1), pa->sent - pb->sent),
		       fmt_si(b2, sizeof(b2), counter_rate(pa->sent, pb->sent, dt)),
		       FMT_COUNT(outstanding(g, pa)));
		if (g->mode->text_queue)
			g->mode->text_queue(g, i, a, b, kind);
		printf("\n");
	}
}

void gen_text(void *ctx, const struct run_snap *ra, const struct run_snap *rb, enum run_report kind)
{
	struct gen *g = ctx;
	const struct gen_snapshot *a = snap_of(ra), *b = snap_of(rb);

	if (kind == RUN_SUMMARY)
		text_summary(g, a, b);
	else
		text_interval(g, a, b);
	if (g->cfg->verbose)
		text_queues(g, a, b, kind);
	/* --kernel-stats: the qdisc's and the veth's own counters, each row and the summary. */
	if (g->cfg->kernel_stats && a->ks && b->ks)
		kstats_print_delta(stdout, g->ifc.name, a->ks, b->ks, g->cfg->verbose);
	if (kind == RUN_SUMMARY) {
		struct gen_failures f;

		failures_between(g, a, b, &f);
		text_result(g, a, b, &f);
	}
}

/* Frames and bytes sent, by queue (kernel and qdisc: by thread, numbered as queues). */
static void metrics_tx(struct gen *g, struct metrics_w *w, const struct gen_snapshot *a,
		       const struct gen_snapshot *b)
{
	const struct ctr_desc *r;
	struct gen_counters d;
	unsigned int i;
	char q[16];

	for (r = gen_sent.rows; r < gen_sent.rows + gen_sent.n; r++) {
		if (!ctr_shown(r, CTR_METRIC, 0))
			continue;
		ctr_metric_head(w, &gen_sent, r);
		for (i = 0; i < g->nthreads; i++) {
			ctr_sub(&d, &a->per[i], &b->per[i], sizeof(d));
			snprintf(q, sizeof(q), "%u", g->th[i].queue);
			ctr_metric_at(w, &gen_sent, r, "queue", q, &d);
		}
	}
}

/* The stamps' clock and this host's synchronisation of it (adjtimex). */
static void metrics_clock(const struct gen *g, struct metrics_w *w)
{
	const struct clock_info *ci = &g->clock;

	metrics_family(
		w, "xdp_gen_clock_synchronised", "gauge", NULL,
		"1 where this host's clock is synchronised (adjtimex: STA_UNSYNC clear), by the stamps' clock (--clock).");
	metrics_u64(w, "xdp_gen_clock_synchronised", "clock", clock_name(ci->clock), ci->synced);
	metrics_family(w, "xdp_gen_clock_sync_error_seconds", "gauge", "seconds",
		       "This host's clock error bound (adjtimex maxerror), by the stamps' clock.");
	metrics_double(w, "xdp_gen_clock_sync_error_seconds", "clock", clock_name(ci->clock),
		       (double)ci->maxerror_us / 1e6);
}

/* The OpenMetrics rows of a reading: the same counts as the report of a against b. */
void gen_metrics(void *ctx, struct metrics_w *w, const struct run_snap *ra,
		 const struct run_snap *rb, enum run_report kind)
{
	struct gen *g = ctx;
	const struct gen_snapshot *a = snap_of(ra), *b = snap_of(rb);
	const struct ctr_desc *r;
	struct gen_failures f;
	struct gen_counters d;

	ctr_sub(&d, &a->total, &b->total, sizeof(d));
	failures_between(g, a, b, &f);
	metrics_tx(g, w, a, b);
	ctr_metrics(w, &gen_failures_all, &f, 0);
	if (g->mode->failures)
		ctr_metrics_samples(w, g->mode->failures, &f, 0);
	ctr_metrics(w, &gen_stalls, &d, 0);
	for (r = gen_config.rows; r < gen_config.rows + gen_config.n; r++) {
		ctr_metric_head(w, &gen_config, r);
		ctr_metric_at(w, &gen_config, r, NULL, NULL, g->cfg);
	}
	if (gen_stamped(g))
		metrics_clock(g, w);
	gen_streams_metrics(g, w);
	if (g->mode->metrics)
		g->mode->metrics(g, w, kind);
}
