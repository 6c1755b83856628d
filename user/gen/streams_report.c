// SPDX-License-Identifier: GPL-2.0
/*
 * The streams in the report: a line each at the start and in the summary,
 * a "streams" array in the summary's JSON, per-stream metric families. Each
 * names its run id, which the sink's runs[] are keyed by.
 */
#include <stdio.h>

#include "base/fmt.h"
#include "pace.h"
#include "pkt/build.h"
#include "streams.h"

__u64 gen_stream_sent(const struct gen *g, unsigned int s, __u64 *bytes)
{
	__u64 n = 0, b = 0;
	unsigned int i;

	for (i = 0; i < g->nthreads; i++) {
		if (!g->th[i].ts)
			continue;
		n += CNT_READ(g->th[i].ts[s].sent);
		b += CNT_READ(g->th[i].ts[s].bytes);
	}
	if (bytes)
		*bytes = b;
	return n;
}

/* A stream's marks (marks.h), summed over threads. */
static __u64 stream_marks(const struct gen *g, unsigned int s)
{
	__u64 n = 0;
	unsigned int i;

	for (i = 0; i < g->nthreads; i++)
		if (g->th[i].ts)
			n += CNT_READ(g->th[i].ts[s].marks);
	return n;
}

/* A stream's sending span: from its first frame handed over to its last, over every thread. */
static __u64 stream_span(const struct gen *g, unsigned int s)
{
	__u64 first = 0, last = 0;
	unsigned int i;

	for (i = 0; i < g->nthreads; i++) {
		const struct gen_tstream *x = g->th[i].ts ? &g->th[i].ts[s] : NULL;

		if (!x || !CNT_READ(x->first_ns))
			continue;
		if (!first || CNT_READ(x->first_ns) < first)
			first = CNT_READ(x->first_ns);
		if (CNT_READ(x->last_ns) > last)
			last = CNT_READ(x->last_ns);
	}
	return last > first ? last - first : 0;
}

/* Frames per second over its span, as the verdict counts them (pace_pps()). */
static double stream_pps(const struct gen *g, unsigned int s, __u64 sent)
{
	return pace_pps(sent, stream_span(g, s), g->streams[s].rate);
}

/* As the run's: at least 99% of the rate asked (pace_reached()). */
static bool stream_reached(const struct gen *g, unsigned int s, __u64 sent)
{
	return pace_reached(sent, stream_span(g, s), g->streams[s].rate);
}

int gen_streams_rate_reached(const struct gen *g)
{
	int reached = -1;
	unsigned int s;

	for (s = 0; s < g->nstreams; s++) {
		__u64 sent = gen_stream_sent(g, s, NULL);

		if (!g->streams[s].rate)
			continue;
		if (!stream_reached(g, s, sent))
			return 0;
		reached = 1;
	}
	return reached;
}

void gen_streams_rate_text(const struct gen *g)
{
	unsigned int s, n = 0;

	for (s = 0; s < g->nstreams; s++) {
		const struct gen_stream *st = &g->streams[s];
		__u64 sent = gen_stream_sent(g, s, NULL);

		if (!st->rate)
			continue;
		printf("%s%s %s of %s pps%s", n++ ? ", " : "", FMT_NAME(st->name),
		       FMT_SI(stream_pps(g, s, sent)), FMT_SI((double)st->rate),
		       stream_reached(g, s, sent) ? "" : " NOT reached");
	}
}

static void headers_str(const struct gen_stream *st, char *buf, size_t len)
{
	pkt_kind_str(&st->popts, buf, len);
}

void gen_streams_json(const struct gen *g, struct jw *w)
{
	unsigned int s;
	char kind[96];

	if (!g->nstreams)
		return;
	jw_arr(w, "streams");
	for (s = 0; s < g->nstreams; s++) {
		const struct gen_stream *st = &g->streams[s];
		__u64 bytes, sent = gen_stream_sent(g, s, &bytes);

		headers_str(st, kind, sizeof(kind));
		jw_obj(w, NULL);
		jw_str(w, "name", st->name);
		jw_u64(w, "run", st->popts.run);
		jw_str(w, "proto", pkt_proto_name(st->popts.proto ? st->popts.proto : PKT_UDP));
		jw_str(w, "headers", kind);
		jw_u64(w, "requested", st->count);
		jw_u64(w, "flows", st->popts.flows);
		jw_u64(w, "tx_packets", sent);
		jw_u64(w, "tx_bytes", bytes);
		jw_u64(w, "marks", stream_marks(g, s));
		jw_double(w, "pps", stream_pps(g, s, sent));
		if (st->rate) {
			jw_u64(w, "rate_asked", st->rate);
			jw_bool(w, "rate_reached", stream_reached(g, s, sent));
		}
		jw_end_obj(w);
	}
	jw_end_arr(w);
}

void gen_streams_text(const struct gen *g)
{
	char kind[96], b1[32], b2[32];
	unsigned int s;

	for (s = 0; s < g->nstreams; s++) {
		const struct gen_stream *st = &g->streams[s];
		__u64 sent = gen_stream_sent(g, s, NULL);

		headers_str(st, kind, sizeof(kind));
		printf("  stream %u %-8s run %08x  %s packets", s, FMT_NAME(st->name),
		       (unsigned int)st->popts.run, fmt_count(b1, sizeof(b1), sent));
		if (st->count)
			printf(" of %s", FMT_COUNT(st->count));
		printf(" at %s pps, marks %s", fmt_si(b2, sizeof(b2), stream_pps(g, s, sent)),
		       FMT_COUNT(stream_marks(g, s)));
		if (st->rate)
			printf(" (%s %s)",
			       stream_reached(g, s, sent) ? "asked" : "NOT reached, asked",
			       FMT_SI((double)st->rate));
		printf("  %s\n", kind);
	}
}

void gen_streams_json_interval(const struct gen *g, struct jw *w, const __u64 *a, const __u64 *b,
			       __u64 dt)
{
	unsigned int s;

	if (!g->nstreams)
		return;
	jw_arr(w, "streams");
	for (s = 0; s < g->nstreams; s++) {
		jw_obj(w, NULL);
		jw_str(w, "name", g->streams[s].name);
		jw_u64(w, "run", g->streams[s].popts.run);
		jw_u64(w, "tx_packets", a[2 * s] - b[2 * s]);
		jw_u64(w, "tx_bytes", a[2 * s + 1] - b[2 * s + 1]);
		jw_double(w, "pps", dt ? (double)(a[2 * s] - b[2 * s]) * 1e9 / (double)dt : 0);
		jw_end_obj(w);
	}
	jw_end_arr(w);
}

/* "  streams: udp 6.50M, syn 10.0k pps" after an interval's line. */
void gen_streams_text_interval(const struct gen *g, const __u64 *a, const __u64 *b, __u64 dt)
{
	char r[32];
	unsigned int s;

	for (s = 0; s < g->nstreams; s++)
		printf("%s%s %s", s ? ", " : "  streams: ", g->streams[s].name,
		       fmt_si(r, sizeof(r),
			      dt ? (double)(a[2 * s] - b[2 * s]) * 1e9 / (double)dt : 0));
	if (g->nstreams)
		printf(" pps");
}

void gen_streams_started(const struct gen *g)
{
	char kind[96];
	unsigned int s;

	for (s = 0; s < g->nstreams; s++) {
		const struct gen_stream *st = &g->streams[s];

		headers_str(st, kind, sizeof(kind));
		printf("  stream %u %s: run %08x, %s, %u-byte frames%s", s, FMT_NAME(st->name),
		       (unsigned int)st->popts.run, kind, pkt_gen_max_len(g->th[0].ts[s].pg),
		       st->popts.imix ? " max (imix)" : "");
		if (st->rate)
			printf(", %s pps", FMT_SI((double)st->rate));
		if (st->count)
			printf(", %s frames", FMT_COUNT(st->count));
		printf("\n");
	}
}

/*
 * A family per counter with a sample per stream (label stream="NAME"), and
 * each stream's run id as a gauge: what joins it with the sink's runs.
 */
void gen_streams_metrics(struct gen *g, struct metrics_w *w)
{
	static const char *const fam[] = { "xdp_gen_stream_tx_packets_total",
					   "xdp_gen_stream_tx_bytes_total", "xdp_gen_stream_run" };
	static const char *const help[] = { "Frames of the stream sent.",
					    "Bytes of the stream's frames sent.",
					    "The run id in the stream's stamps (the sink's run)." };
	unsigned int f, s;

	for (f = 0; g->nstreams && f < 3; f++) {
		metrics_family(w, fam[f], f == 2 ? "gauge" : "counter", NULL, help[f]);
		for (s = 0; s < g->nstreams; s++) {
			__u64 bytes, sent = gen_stream_sent(g, s, &bytes);

			metrics_u64(w, fam[f], "stream", g->streams[s].name,
				    f == 2 ? g->streams[s].popts.run :
				    f	   ? bytes :
					     sent);
		}
	}
}
