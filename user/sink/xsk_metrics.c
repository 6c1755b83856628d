// SPDX-License-Identifier: GPL-2.0
/*
 * The xsk mode's OpenMetrics rows: what the sockets delivered, the queues'
 * books while the run goes on, and at the end every generator run's books,
 * latency and delay variation.
 */
#include <stdio.h>
#include <stdlib.h>

#include "causes.h"
#include "report/counter_desc.h"
#include "xsk.h"

/* The books' rows an exposition has, each a metric of its own, with one sample per queue or run. */
#define for_each_book_metric(r, has)                                                   \
	for (r = sink_xsk_books.rows; r < sink_xsk_books.rows + sink_xsk_books.n; r++) \
		if (ctr_shown(r, CTR_METRIC, has))

/*
 * While the run goes on: the queues' published books. A counter never
 * falls, and a gap that a late frame fills is taken back from 'lost'; so
 * lost is the part no frame can take back any more (lost_final), and the
 * gaps still inside the reorder window are the gauge lost_pending beside it.
 */
static void metrics_queue_books(const struct sink *sk, struct metrics_w *w,
				const struct sink_snap *a, const struct sink_snap *b,
				unsigned int has)
{
	const struct xsk_state *xs = sk->ms;
	const struct xq_counts *ca = xsk_snap_xc(a), *cb = xsk_snap_xc(b);
	struct xsk_books ba, bb, d;
	const struct ctr_desc *r;
	unsigned int i;
	char q[16];

	for_each_book_metric(r, has)
	{
		ctr_metric_head(w, &sink_xsk_books, r);
		for (i = 0; i < xs->nxq; i++) {
			xsk_books_of_queue(&ca[i], true, &ba);
			xsk_books_of_queue(&cb[i], true, &bb);
			ctr_sub(&d, &ba, &bb, sizeof(d));
			snprintf(q, sizeof(q), "%u", xs->xq[i].queue);
			ctr_metric_at(w, &sink_xsk_books, r, "queue", q, &d);
		}
	}
}

static void metrics_run_hist(const struct seqtrack_summary *s, const struct hist *lat, void *ctx)
{
	char id[16];

	snprintf(id, sizeof(id), "%08x", s->id);
	metrics_hist_seconds(ctx, "xdp_sink_latency_seconds", "run", id, lat);
}

/* Delay variation per run: gauges, one family each (one label of their own). */
static void metrics_jitter(struct metrics_w *w, const struct xsk_runs *rs)
{
	static const struct {
		const char *name, *help;
	} fam[] = {
		{ "xdp_sink_jitter_seconds", "RFC 3550 interarrival jitter of a generator run." },
		{ "xdp_sink_ipdv_p50_seconds", "Median |IPDV| (RFC 3393) of a generator run." },
		{ "xdp_sink_ipdv_p99_seconds", "99th percentile |IPDV| (RFC 3393) of a run." },
	};
	unsigned int f, i;
	char id[16];

	for (f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
		metrics_family(w, fam[f].name, "gauge", "seconds", fam[f].help);
		for (i = 0; i <= rs->n; i++) {
			const struct seqtrack_summary *s = i < rs->n ? &rs->row[i].s : &rs->folded;
			double v = f == 0 ? s->jitter_ns :
				   f == 1 ? (double)s->ipdv.p50 :
					    (double)s->ipdv.p99;

			if (i == rs->n && !rs->folded_runs)
				break;
			snprintf(id, sizeof(id), "%08x", s->id);
			metrics_double(w, fam[f].name, "run", i < rs->n ? id : "folded", v / 1e9);
		}
	}
}

/* How long traffic stopped: each run's loss episodes by outage (docs/outages.md). */
static void metrics_outages(struct metrics_w *w, const struct xsk_runs *rs)
{
	static const char *const name = "xdp_sink_outage_seconds";
	unsigned int i;
	char id[16];

	metrics_family(
		w, name, "histogram", "seconds",
		"Loss episodes of a generator run by how long its traffic stopped: the send-time "
		"gap around each run of a flow's frames that never arrived, less one frame "
		"interval.");
	for (i = 0; i <= rs->n; i++) {
		const struct seqtrack_summary *s = i < rs->n ? &rs->row[i].s : &rs->folded;

		if (i == rs->n && !rs->folded_runs)
			break;
		snprintf(id, sizeof(id), "%08x", s->id);
		metrics_buckets_seconds(w, name, "run", i < rs->n ? id : "folded",
					episode_bounds_ns, s->ep.buckets, EPISODE_BOUNDS,
					s->ep.total_ns);
	}
}

/*
 * At the end, per run: the stamps' clock, whether the generator said it was
 * synchronised, and how far apart the two ends' clocks can be (0 for one
 * clock; only where a one-way latency was figured).
 */
static void metrics_clocks(struct metrics_w *w, const struct xsk_runs *rs)
{
	static const char *const sync = "xdp_sink_clock_synchronised";
	static const char *const err = "xdp_sink_clock_sync_error_seconds";
	unsigned int i;
	char id[16];

	metrics_family(
		w, sync, "gauge", NULL,
		"1 where a run's generator said its clock was synchronised (adjtimex), by run and the stamps' clock.");
	for (i = 0; i < rs->n; i++) {
		const struct seqtrack_marks *mk = &rs->row[i].s.mk;

		if (mk->state == SEQTRACK_CLOCK_UNKNOWN)
			continue;
		snprintf(id, sizeof(id), "%08x", rs->row[i].s.id);
		fprintf(w->f, "%s{%s%srun=\"%s\",clock=\"%s\"} %u\n", sync, w->labels,
			w->labels[0] ? "," : "", id, clock_name((enum xdpsg_clock)mk->clock),
			(unsigned int)mk->synced);
	}
	metrics_family(
		w, err, "gauge", "seconds",
		"How far apart the generator's and this sink's clocks can be, for a run with a one-way latency: 0 for one clock, else both ends' adjtimex maxerror.");
	for (i = 0; i < rs->n; i++) {
		const struct seqtrack_marks *mk = &rs->row[i].s.mk;

		if (!seqtrack_clock_timed(mk->state))
			continue;
		snprintf(id, sizeof(id), "%08x", rs->row[i].s.id);
		metrics_double(w, err, "run", id, (double)mk->sync_error_ns / 1e9);
	}
}

/*
 * At the end: every generator run's books and latency, labelled by its run
 * id; runs folded away for room together, as run="folded". Nothing more
 * arrives, so every gap is lost.
 */
static void metrics_runs(const struct sink *sk, struct metrics_w *w, unsigned int has)
{
	static const char *const lat = "xdp_sink_latency_seconds";
	const struct xsk_state *xs = sk->ms;
	struct seqtrack **tr = xsk_trackers(xs);
	struct hist *folded = malloc(sizeof(*folded));
	const struct ctr_desc *r;
	struct xsk_books bk;
	char id[16];
	struct xsk_runs rs;
	unsigned int i;

	if (!tr || !folded || xsk_runs_collect(sk, &rs))
		goto out;
	for_each_book_metric(r, has)
	{
		ctr_metric_head(w, &sink_xsk_books, r);
		for (i = 0; i < rs.n; i++) {
			snprintf(id, sizeof(id), "%08x", rs.row[i].s.id);
			xsk_books_of(&rs.row[i].s.c, 0, 0, rs.row[i].s.mk.received, 0, false, &bk);
			ctr_metric_at(w, &sink_xsk_books, r, "run", id, &bk);
		}
		if (rs.folded_runs) {
			xsk_books_of(&rs.folded.c, 0, 0, rs.folded.mk.received, 0, false, &bk);
			ctr_metric_at(w, &sink_xsk_books, r, "run", "folded", &bk);
		}
	}
	causes_metrics_head(sk->causes, w);
	for (i = 0; i < rs.n; i++) {
		struct causes_books b = xsk_run_causes_books(&rs, &rs.row[i].s);

		causes_metrics_run(sk->causes, w, rs.row[i].s.id, &b);
	}
	metrics_family(w, lat, "histogram", "seconds",
		       "Send-to-receive latency of stamped frames, by generator run.");
	seqtrack_runs(tr, xs->nxq, metrics_run_hist, w);
	if (seqtrack_folded(tr, xs->nxq, &rs.folded, folded))
		metrics_hist_seconds(w, lat, "run", "folded", folded);
	metrics_jitter(w, &rs);
	metrics_outages(w, &rs);
	metrics_clocks(w, &rs);
	xsk_runs_free(&rs);
out:
	free(folded);
	free(tr);
}

/* What the sockets delivered, by queue. */
static void metrics_rx(const struct sink *sk, struct metrics_w *w, const struct sink_snap *a,
		       const struct sink_snap *b, unsigned int has)
{
	const struct xsk_state *xs = sk->ms;
	const struct xq_counts *ca = xsk_snap_xc(a), *cb = xsk_snap_xc(b);
	const struct ctr_desc *r;
	struct xq_counts d;
	unsigned int i;
	char q[16];

	for (r = sink_xsk_rx.rows; r < sink_xsk_rx.rows + sink_xsk_rx.n; r++) {
		if (!ctr_shown(r, CTR_METRIC, has))
			continue;
		ctr_metric_head(w, &sink_xsk_rx, r);
		for (i = 0; i < xs->nxq; i++) {
			ctr_sub(&d, &ca[i], &cb[i], sizeof(d));
			snprintf(q, sizeof(q), "%u", xs->xq[i].queue);
			ctr_metric_at(w, &sink_xsk_rx, r, "queue", q, &d);
		}
	}
}

/*
 * Every exposition, while the run goes on too: the latency of each queue's
 * stamped frames, all runs together, as a histogram whose rows only grow, so
 * histogram_quantile(0.99, sum by (le) (rate(..._bucket[30s]))) follows a
 * running test. The per-run histograms are read only at the end.
 */
static void metrics_live(const struct sink *sk, struct metrics_w *w, const struct sink_snap *a,
			 const struct sink_snap *b)
{
	static const char *const name = "xdp_sink_queue_latency_seconds";
	const struct xsk_state *xs = sk->ms;
	const struct xq_counts *ca = xsk_snap_xc(a), *cb = xsk_snap_xc(b);
	struct hist_coarse d;
	unsigned int i;
	char q[16];

	metrics_family(w, name, "histogram", "seconds",
		       "Send-to-receive latency of stamped frames by receive queue, all runs "
		       "together, updated every interval.");
	for (i = 0; i < xs->nxq; i++) {
		ctr_sub(&d, &ca[i].live, &cb[i].live, sizeof(d));
		snprintf(q, sizeof(q), "%u", xs->xq[i].queue);
		metrics_hist_coarse_seconds(w, name, "queue", q, &d);
	}
}

void xsk_metrics(const struct sink *sk, struct metrics_w *w, const struct sink_snap *a,
		 const struct sink_snap *b, enum run_report kind)
{
	unsigned int has = sink_has(sk, kind);

	metrics_rx(sk, w, a, b, has);
	if (sk->cfg->no_verify)
		return;
	metrics_live(sk, w, a, b);
	/* Per-run books are read only once the queues' threads have stopped. */
	if (kind == RUN_SUMMARY)
		metrics_runs(sk, w, has);
	else
		metrics_queue_books(sk, w, a, b, has);
}
