// SPDX-License-Identifier: GPL-2.0
/*
 * xdp-gen's readings and reports: what every mode counts (frames and bytes
 * sent, the link's counters, per thread), with the mode's own parts from its
 * struct gen_mode. The skeleton (common/run.c) decides text or JSON.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "gen.h"
#include "replay.h"
#include "runtime.h"

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
	if (!s->per || (g->mode->snap_size && !s->m) || (g->kr && !s->ks))
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
	d->kicks += CNT_READ(s->kicks);
	for (k = 0; k < GEN_MODE_COUNTERS; k++)
		d->m[k] += CNT_READ(s->m[k]);
}

int gen_sample(void *ctx, struct run_snap *rs)
{
	struct gen *g = ctx;
	struct gen_snapshot *s = snap_of(rs);
	unsigned int i;

	s->rs.t_ns = now_ns();
	for (i = 0; i < g->nthreads; i++) {
		memset(&s->per[i], 0, sizeof(s->per[i]));
		counters_add(&s->per[i], &g->th[i].c);
	}
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
	memcpy(d->per, s->per, g->nthreads * sizeof(*d->per));
	if (d->ks && s->ks)
		*d->ks = *s->ks;
	if (d->m)
		memcpy(d->m, s->m, g->mode->snap_size);
}

void gen_started(void *ctx)
{
	const struct gen *g = ctx;
	unsigned int i;

	printf("xdp-gen %s on %s: %u %s%s (", g->mode_name, g->ifc.name, g->nthreads, g->mode->unit,
	       g->nthreads > 1 ? "s" : "");
	for (i = 0; i < g->nthreads; i++)
		printf("%s%u on cpu %d", i ? ", " : "", g->th[i].queue, g->th[i].cpu);
	if (g->replay)
		printf("), %s, %u frames of %s (%u-%u bytes), run %08x; Ctrl-C to stop\n",
		       g->mode->describe(g), g->replay->f.n, g->cfg->pcap, g->replay->f.min_len,
		       g->replay->f.max_len, (unsigned int)g->popts.run);
	else
		printf("), %s, %u-byte frames%s, run %08x; Ctrl-C to stop\n", g->mode->describe(g),
		       pkt_gen_max_len(g->th[0].pg), g->popts.imix ? " max (imix)" : "",
		       (unsigned int)g->popts.run);
}

static __u64 outstanding(const struct gen *g, const struct gen_counters *c)
{
	return g->mode->outstanding ? g->mode->outstanding(c) : 0;
}

static void json_stalls(const struct gen *g, struct jw *w, const struct gen_snapshot *a,
			const struct gen_snapshot *b)
{
	jw_u64(w, "outstanding", outstanding(g, &a->total));
	jw_obj(w, "stalls");
	jw_u64(w, "ring_full", a->total.stall_ring - b->total.stall_ring);
	jw_u64(w, "no_free_frame", a->total.stall_frames - b->total.stall_frames);
	jw_u64(w, "kick_busy", a->total.stall_kick - b->total.stall_kick);
	jw_end_obj(w);
	jw_u64(w, "kicks", a->total.kicks - b->total.kicks);
}

static void json_queues(struct gen *g, struct jw *w, const struct gen_snapshot *a,
			const struct gen_snapshot *b, enum run_report kind)
{
	__u64 dt = a->rs.t_ns - b->rs.t_ns;
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

void gen_json(void *ctx, struct jw *w, const struct run_snap *ra, const struct run_snap *rb,
	      enum run_report kind)
{
	struct gen *g = ctx;
	const struct gen_snapshot *a = snap_of(ra), *b = snap_of(rb);
	__u64 dt = a->rs.t_ns - b->rs.t_ns;

	if (kind == RUN_SUMMARY) {
		jw_u64(w, "requested", g->cfg->count);
		jw_u64(w, "run", g->popts.run);
	}
	jw_u64(w, "tx_packets", a->total.sent - b->total.sent);
	jw_u64(w, "tx_bytes", a->total.bytes - b->total.bytes);
	jw_u64(w, "rx_packets", 0);
	jw_u64(w, "rx_bytes", 0);
	jw_double(w, "pps", counter_rate(a->total.sent, b->total.sent, dt));
	jw_double(w, "bps", counter_rate(a->total.bytes, b->total.bytes, dt) * 8);
	json_stalls(g, w, a, b);
	if (g->mode->json)
		g->mode->json(g, w, a, b, kind);
	jw_obj(w, "drops");
	jw_u64(w, "link_tx_dropped", a->link.tx_dropped - b->link.tx_dropped);
	if (g->mode->json_drops)
		g->mode->json_drops(g, w, a, b);
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
}

static void text_interval(struct gen *g, const struct gen_snapshot *a, const struct gen_snapshot *b)
{
	__u64 dt = a->rs.t_ns - b->rs.t_ns, link_drop = a->link.tx_dropped - b->link.tx_dropped;
	__u64 ring = a->total.stall_ring - b->total.stall_ring,
	      kick = a->total.stall_kick - b->total.stall_kick;
	__u64 frames = a->total.stall_frames - b->total.stall_frames;
	char b1[32], b2[32], b3[32];

	printf("%8.2fs  tx %7s pps %7sbit/s  total %s",
	       (double)(a->rs.t_ns - g->base.rs.t_ns) / 1e9,
	       fmt_si(b1, sizeof(b1), counter_rate(a->total.sent, b->total.sent, dt)),
	       fmt_si(b2, sizeof(b2), counter_rate(a->total.bytes, b->total.bytes, dt) * 8),
	       fmt_count(b3, sizeof(b3), a->total.sent - g->base.total.sent));
	if (ring || frames || kick)
		printf("  stalls: ring %" PRIu64 " frames %" PRIu64 " kick %" PRIu64,
		       (uint64_t)ring, (uint64_t)frames, (uint64_t)kick);
	if (outstanding(g, &a->total))
		printf("  outstanding %" PRIu64, (uint64_t)outstanding(g, &a->total));
	if (link_drop)
		printf("  link tx_dropped %" PRIu64, (uint64_t)link_drop);
	if (g->mode->text)
		g->mode->text(g, a, b, RUN_INTERVAL);
	printf("\n");
}

static void text_summary(struct gen *g, const struct gen_snapshot *a, const struct gen_snapshot *b)
{
	__u64 dt = a->rs.t_ns - b->rs.t_ns;
	char b1[32], b2[32], b3[32], b4[32];

	printf("xdp-gen %s %s: %s packets, %s bytes in %.2f s (%s pps, %sbit/s); stopped by %s\n",
	       g->mode_name, g->ifc.name, fmt_count(b1, sizeof(b1), a->total.sent - b->total.sent),
	       fmt_count(b2, sizeof(b2), a->total.bytes - b->total.bytes), (double)dt / 1e9,
	       fmt_si(b3, sizeof(b3), counter_rate(a->total.sent, b->total.sent, dt)),
	       fmt_si(b4, sizeof(b4), counter_rate(a->total.bytes, b->total.bytes, dt) * 8),
	       g->run.stop_reason);
	if (g->mode->text)
		g->mode->text(g, a, b, RUN_SUMMARY);
	printf("  kernel:   %s tx_packets %" PRIu64 ", tx_dropped %" PRIu64, g->ifc.name,
	       (uint64_t)(a->link.tx_packets - b->link.tx_packets),
	       (uint64_t)(a->link.tx_dropped - b->link.tx_dropped));
	if (g->mode->text_kernel)
		g->mode->text_kernel(g, a, b);
	printf("\n");
}

static void text_queues(struct gen *g, const struct gen_snapshot *a, const struct gen_snapshot *b,
			enum run_report kind)
{
	__u64 dt = a->rs.t_ns - b->rs.t_ns;
	char b1[32], b2[32];
	unsigned int i;

	for (i = 0; i < g->nthreads; i++) {
		const struct gen_counters *pa = &a->per[i], *pb = &b->per[i];

		printf("    queue %-4u cpu %-3d %12s packets %8s pps  outstanding %" PRIu64,
		       g->th[i].queue, g->th[i].cpu, fmt_count(b1, sizeof(b1), pa->sent - pb->sent),
		       fmt_si(b2, sizeof(b2), counter_rate(pa->sent, pb->sent, dt)),
		       (uint64_t)outstanding(g, pa));
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
}

/* Frames sent or bytes sent, by queue (kernel and qdisc: by thread, numbered as queues). */
static void metrics_tx(struct gen *g, struct metrics_w *w, const char *name, const char *help,
		       const struct gen_snapshot *a, const struct gen_snapshot *b, bool bytes)
{
	unsigned int i;

	metrics_family(w, name, "counter", NULL, help);
	for (i = 0; i < g->nthreads; i++)
		metrics_u64_at(w, name, "queue", g->th[i].queue,
			       bytes ? a->per[i].bytes - b->per[i].bytes :
				       a->per[i].sent - b->per[i].sent);
}

static void metrics_failures(struct gen *g, struct metrics_w *w, const struct gen_snapshot *a,
			     const struct gen_snapshot *b)
{
	static const char *const name = "xdp_gen_failures_total";
	unsigned int k;

	metrics_family(
		w, name, "counter", NULL,
		"Frames that were not sent or that the kernel dropped after taking them, by reason.");
	metrics_u64(w, name, "reason", "link_tx_dropped", a->link.tx_dropped - b->link.tx_dropped);
	for (k = 0; k < GEN_MODE_COUNTERS; k++)
		if (g->mode->counter_names[k])
			metrics_u64(w, name, "reason", g->mode->counter_names[k],
				    gen_mode_delta(a, b, k));
	if (g->mode->metrics_failures)
		g->mode->metrics_failures(g, w, a, b);
}

static void metrics_stalls(struct metrics_w *w, const struct gen_snapshot *a,
			   const struct gen_snapshot *b)
{
	static const char *const name = "xdp_gen_stalls_total";

	metrics_family(
		w, name, "counter", NULL,
		"Times a sending loop waited instead of sending, by reason (nothing is dropped).");
	metrics_u64(w, name, "reason", "ring_full", a->total.stall_ring - b->total.stall_ring);
	metrics_u64(w, name, "reason", "no_free_frame",
		    a->total.stall_frames - b->total.stall_frames);
	metrics_u64(w, name, "reason", "kick_busy", a->total.stall_kick - b->total.stall_kick);
}

/* The OpenMetrics rows of a reading: the same counts as the report of a against b. */
void gen_metrics(void *ctx, struct metrics_w *w, const struct run_snap *ra,
		 const struct run_snap *rb, enum run_report kind)
{
	struct gen *g = ctx;
	const struct gen_snapshot *a = snap_of(ra), *b = snap_of(rb);

	(void)kind;
	metrics_tx(g, w, "xdp_gen_tx_packets_total",
		   "Frames sent (confirmed by the kernel), by queue.", a, b, false);
	metrics_tx(g, w, "xdp_gen_tx_bytes_total", "Bytes of the frames sent, by queue.", a, b,
		   true);
	metrics_failures(g, w, a, b);
	metrics_stalls(w, a, b);
	metrics_family(w, "xdp_gen_rate_pps", "gauge", NULL,
		       "The configured rate in packets per second over all threads; 0: no limit.");
	metrics_u64(w, "xdp_gen_rate_pps", NULL, NULL, g->cfg->rate);
	metrics_family(w, "xdp_gen_requested_packets", "gauge", NULL,
		       "The configured --count; 0: no limit.");
	metrics_u64(w, "xdp_gen_requested_packets", NULL, NULL, g->cfg->count);
}
