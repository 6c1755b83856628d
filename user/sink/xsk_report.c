// SPDX-License-Identifier: GPL-2.0
/*
 * The xsk mode's reports: the books of every generator run the sink saw
 * (received, lost, duplicates, reordered, late, latency, pacing), the frames
 * whose claims no sender could make, and where every packet the program saw
 * went. Runs are read from the queues' trackers after their threads ended.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "causes.h"
#include "counter_desc.h"
#include "fmt.h"
#include "log.h"
#include "outfile.h"
#include "xsk.h"

/* Where every packet the program saw went. Returns the unexplained rest. */
static __s64 xsk_balance(const struct sink_stats *d, const struct xq_counts *c,
			 const struct xdp_statistics *x)
{
	return (__s64)d->packets - (__s64)(c->rx_packets + d->redirect_err + x->rx_dropped +
					   x->rx_ring_full + x->rx_invalid_descs);
}

/* The summary's name for where a queue's thread stands on following its receive CPU. */
static const char *xq_follow_name(const struct xq *x)
{
	static const char *const names[] = {
		[XQ_FOLLOW_OFF] = "off",     [XQ_FOLLOW_ALWAYS] = "always",
		[XQ_FOLLOW_AUTO] = "auto",   [XQ_FOLLOW_TRIAL] = "trial",
		[XQ_FOLLOW_MOVED] = "moved", [XQ_FOLLOW_RETURNED] = "returned",
	};

	return names[x->follow];
}

static const char *xq_bind_mode(const struct xq *x)
{
	return x->q && x->q->zerocopy ? "zero-copy" : "copy";
}

void runs_free(struct runs *r)
{
	free(r->row);
}

/* The queues' trackers, for seqtrack's merges. */
struct seqtrack **xsk_trackers(const struct xsk_state *xs)
{
	struct seqtrack **tr = calloc(xs->nxq, sizeof(*tr));
	unsigned int i;

	for (i = 0; tr && i < xs->nxq; i++)
		tr[i] = xs->xq[i].tr;
	return tr;
}

static void runs_add(const struct seqtrack_summary *s, const struct hist *lat, void *ctx)
{
	struct runs *r = ctx;
	struct run_row *row = &r->row[r->n++];

	row->s = *s;
	hist_summarize(lat, &row->lat);
	hist_merge(&r->all, lat);
}

/* --drop-causes: the tracer's books joined with the runs (read once, at the summary). */
static void runs_causes(const struct sink *sk, const struct runs *r)
{
	struct causes_run *ids = sk->causes ? calloc(r->n + 1, sizeof(*ids)) : NULL;
	unsigned int i;

	for (i = 0; ids && i < r->n; i++)
		ids[i] = (struct causes_run){ r->row[i].s.id, r->row[i].s.first_rx,
					      r->row[i].s.last_rx };
	if (ids && causes_settle(sk->causes, ids, r->n))
		pr_warn("--drop-causes: cannot read the drop tracer's books\n");
	free(ids);
}

int runs_collect(const struct sink *sk, struct runs *r)
{
	struct seqtrack **tr = xsk_trackers(sk->ms);
	const struct xsk_state *xs = sk->ms;
	struct hist *folded = malloc(sizeof(*folded));
	int n = tr ? seqtrack_runs(tr, xs->nxq, NULL, NULL) : -ENOMEM;

	memset(r, 0, sizeof(*r));
	hist_init(&r->all);
	r->row = n >= 0 ? calloc(n ? (size_t)n : 1, sizeof(*r->row)) : NULL;
	if (!r->row || !folded || seqtrack_runs(tr, xs->nxq, runs_add, r) < 0) {
		free(tr);
		free(folded);
		runs_free(r);
		return -ENOMEM;
	}
	r->folded_runs = seqtrack_folded(tr, xs->nxq, &r->folded, folded);
	runs_causes(sk, r);
	hist_summarize(folded, &r->folded_lat);
	seqtrack_ipdv_all(tr, xs->nxq, &r->all_ipdv, &r->all_jitter_ns);
	hist_merge(&r->all, folded);
	free(folded);
	free(tr);
	return 0;
}

/* Frames a run sent per second, from its first to its last send time. */
static double run_rate(const struct seqtrack_summary *s)
{
	__u64 span = s->last_ts - s->first_ts;

	return span ? (double)(s->c.received - 1) * 1e9 / (double)span : 0.0;
}

static void json_hist(struct jw *w, const char *key, const struct hist *h)
{
	struct hist_summary hs;

	hist_summarize(h, &hs);
	hist_summary_json(w, key, &hs);
}

static void json_run(const struct sink *sk, struct jw *w, const char *key,
		     const struct seqtrack_summary *s, const struct hist_summary *lat)
{
	__u64 t0 = sk->base.rs.t_ns;

	jw_obj(w, key);
	jw_u64(w, "run", s->id);
	jw_u64(w, "received", s->c.received);
	jw_i64(w, "lost", (__s64)s->c.lost);
	jw_u64(w, "duplicates", s->c.duplicates);
	jw_u64(w, "reordered", s->c.reordered);
	jw_u64(w, "late", s->c.late);
	jw_u64(w, "implausible", s->c.implausible);
	jw_u64(w, "ts_future", s->c.ts_future);
	jw_u64(w, "ts_stale", s->c.ts_stale);
	jw_u64(w, "unplaced", s->c.unplaced);
	jw_u64(w, "reopened", s->reopened);
	jw_u64(w, "flows", s->flows);
	jw_double(w, "first_rx_s", s->first_rx > t0 ? (double)(s->first_rx - t0) / 1e9 : 0);
	jw_double(w, "last_rx_s", s->last_rx > t0 ? (double)(s->last_rx - t0) / 1e9 : 0);
	jw_double(w, "send_s", (double)(s->last_ts - s->first_ts) / 1e9);
	jw_double(w, "send_pps", run_rate(s));
	jw_u64(w, "burst_100us_max", s->burst_max);
	jw_double(w, "burst_100us_ideal", run_rate(s) * SEQTRACK_BURST_NS / 1e9);
	hist_summary_json(w, "latency_ns", lat);
	jw_u64(w, "untimed", s->c.untimed);
	hist_summary_json(w, "ipdv_ns", &s->ipdv);
	jw_double(w, "jitter_ns", s->jitter_ns);
	if (!key)
		causes_json_run(sk->causes, w, s->id, (__s64)s->c.lost);
	jw_end_obj(w);
}

/*
 * What the latency is measured to: the kernel's receive time (the program's
 * metadata), or the moment the queue's thread read the frame (which adds its
 * wake-up); "mixed" if some frames came with the first and some without.
 */
static const char *latency_basis(const struct xq_counts *c)
{
	if (c->rx_time_kernel && c->rx_time_user)
		return "mixed";
	if (c->rx_time_kernel)
		return "kernel receive time";
	return c->rx_time_user ? "user-space read time" : "none";
}

static void json_checks(struct jw *w, const struct xq_counts *c, __u64 runs, unsigned int has)
{
	struct xsk_books bk;

	jw_str(w, "latency_basis", latency_basis(c));
	jw_u64(w, "rx_time_kernel", c->rx_time_kernel);
	jw_u64(w, "rx_time_user", c->rx_time_user);
	jw_u64(w, "rx_untimed", c->rx_untimed);

	xsk_books_of(&c->st, c->foreign, false, &bk);
	ctr_json_members(w, &sink_xsk_books, &bk, has);
	jw_u64(w, "restarts", runs > 1 ? runs - 1 : 0);
	ctr_json(w, &sink_xsk_rejected, &bk, has);
}

/* The summary's verdicts: every run's books, and the latency over all of them. */
static void json_runs(const struct sink *sk, struct jw *w, const struct runs *r0)
{
	const struct runs r = *r0;
	unsigned int i;

	json_hist(w, "latency_ns", &r0->all);
	json_hist(w, "ipdv_ns", &r0->all_ipdv);
	jw_double(w, "jitter_ns", r0->all_jitter_ns);
	jw_u64(w, "runs_count", r.n);
	jw_arr(w, "runs");
	for (i = 0; i < r.n; i++)
		json_run(sk, w, NULL, &r.row[i].s, &r.row[i].lat);
	jw_end_arr(w);
	/* Runs folded away for room: reported together, never dropped. */
	if (r.folded_runs) {
		jw_u64(w, "runs_folded", r.folded_runs);
		json_run(sk, w, "folded", &r.folded, &r.folded_lat);
	}
	causes_json_rest(sk->causes, w);
}

static void json_sockets(const struct sink *sk, struct jw *w, const struct sink_snap *a,
			 const struct sink_snap *b, bool summary)
{
	const struct xsk_state *xs = sk->ms;
	const struct xq_counts *ca = xsk_snap_xc(a), *cb = xsk_snap_xc(b);
	const struct xdp_statistics *sa = xsk_snap_xs(sk, a), *sb = xsk_snap_xs(sk, b);
	unsigned int i;

	jw_arr(w, "sockets");
	for (i = 0; i < xs->nxq; i++) {
		const struct xq *x = &xs->xq[i];

		jw_obj(w, NULL);
		jw_u64(w, "queue", x->queue);
		jw_u64(w, "cpu", (__u64)x->cpu);
		jw_u64(w, "cpu_moves", x->cpu_moves);
		jw_str(w, "follow", xq_follow_name(x));
		jw_i64(w, "rx_cpu", x->rx_cpu);
		jw_u64(w, "frame_size", xs->frame_size);
		jw_str(w, "mode", xq_bind_mode(x));
		jw_u64(w, "rx_packets", ca[i].rx_packets - cb[i].rx_packets);
		jw_double(w, "pps",
			  counter_rate(ca[i].rx_packets, cb[i].rx_packets,
				       a->rs.t_ns - b->rs.t_ns));
		if (!sk->cfg->no_verify) {
			jw_i64(w, "lost", (__s64)(ca[i].st.lost - cb[i].st.lost));
			jw_u64(w, "duplicates", ca[i].st.duplicates - cb[i].st.duplicates);
			jw_u64(w, "reordered", ca[i].st.reordered - cb[i].st.reordered);
		}
		jw_u64(w, "rx_ring_full", sa[i].rx_ring_full - sb[i].rx_ring_full);
		jw_u64(w, "fill_ring_empty", sa[i].rx_dropped - sb[i].rx_dropped);
		if (summary && x->accounting[0]) {
			jw_bool(w, "frames_balanced", x->accounting_ok);
			jw_str(w, "frame_accounting", x->accounting);
		}
		jw_end_obj(w);
	}
	jw_end_arr(w);
}

void xsk_json(const struct sink *sk, struct jw *w, const struct sink_snap *a,
	      const struct sink_snap *b, const struct sink_stats *d, const struct sink_drops *dr,
	      enum run_report kind)
{
	bool summary = kind == RUN_SUMMARY, books = !sk->cfg->no_verify;
	unsigned int has = sink_has(sk, kind);
	struct xq_counts c;
	struct xdp_statistics x;
	struct runs *r = NULL;

	(void)dr;
	xsk_deltas(sk, a, b, &c, &x);
	/* The summary's runs are the distinct ones; an interval has the queues' books opened. */
	if (summary && books) {
		r = malloc(sizeof(*r));
		if (r && runs_collect(sk, r)) {
			free(r);
			r = NULL;
		}
	}
	jw_u64(w, "xdp_packets", d->packets);
	/* Frames on queues without a socket: never read, never in any books. */
	jw_u64(w, "not_checked", d->redirect_err);
	if (books)
		json_checks(w, &c, r ? r->n : c.runs, has);
	ctr_json(w, &sink_xsk_stats, &x, has);
	if (summary)
		jw_i64(w, "unexplained", xsk_balance(d, &c, &x));
	if (r)
		json_runs(sk, w, r);
	if (summary)
		capture_json(((const struct xsk_state *)sk->ms)->cap, w);
	json_sockets(sk, w, a, b, summary);
	if (r)
		runs_free(r);
	free(r);
}

static void text_interval(const struct sink *sk, const struct xq_counts *c)
{
	__u64 rejected = c->st.implausible + c->st.ts_future + c->st.ts_stale + c->st.unplaced;

	if (!sk->cfg->no_verify)
		printf("  lost %s dup %s reord %s foreign %s", FMT_ICOUNT(c->st.lost),
		       FMT_COUNT(c->st.duplicates), FMT_COUNT(c->st.reordered),
		       FMT_COUNT(c->foreign));
	if (rejected)
		printf(" rejected %s", FMT_COUNT(rejected));
}

static void text_lat(const char *label, const struct hist_summary *h)
{
	const struct hist_summary hs = *h;
	char l[6][24];

	if (hs.count)
		printf("%smin %s, p50 %s, p90 %s, p99 %s, p99.9 %s, max %s\n", label,
		       fmt_ns(l[0], 24, hs.min), fmt_ns(l[1], 24, hs.p50), fmt_ns(l[2], 24, hs.p90),
		       fmt_ns(l[3], 24, hs.p99), fmt_ns(l[4], 24, hs.p999),
		       fmt_ns(l[5], 24, hs.max));
}

/* -v: one line per run, and one for its latency. */
static void text_run(const struct seqtrack_summary *s, const struct hist_summary *lat)
{
	char l[3][24];

	printf("    run %08x: %s received, lost %s, duplicates %s, reordered %s, late %s, rejected %s; sent at %s pps, at most %u in 100 us (even: %.1f)\n",
	       s->id, fmt_count(l[0], sizeof(l[0]), s->c.received), FMT_ICOUNT(s->c.lost),
	       FMT_COUNT(s->c.duplicates), FMT_COUNT(s->c.reordered), FMT_COUNT(s->c.late),
	       FMT_COUNT((s->c.implausible + s->c.ts_future + s->c.ts_stale)),
	       fmt_si(l[1], sizeof(l[1]), run_rate(s)), (unsigned int)s->burst_max,
	       run_rate(s) * SEQTRACK_BURST_NS / 1e9);
	text_lat("      latency: ", lat);
	if (s->ipdv.count)
		printf("      jitter: IPDV (rfc3393) p50 %s, p99 %s; interarrival (rfc3550) %s\n",
		       fmt_ns(l[0], sizeof(l[0]), s->ipdv.p50),
		       fmt_ns(l[1], sizeof(l[1]), s->ipdv.p99),
		       fmt_ns(l[2], sizeof(l[2]), (__u64)s->jitter_ns));
	if (s->c.unplaced || s->reopened)
		printf("      not checked: %s frames found no room in the books; "
		       "books reopened %u times (losses around a reopening are not counted)\n",
		       FMT_COUNT(s->c.unplaced), s->reopened);
}

static void text_checks(const struct sink *sk, const struct xq_counts *c)
{
	struct hist_summary all;
	struct runs r;
	char l[3][24];
	unsigned int i;

	if (runs_collect(sk, &r))
		return;
	printf("  checked:  %s stamped, %s foreign; lost %s, duplicates %s, reordered %s, late %s, runs %u\n",
	       fmt_count(l[0], sizeof(l[0]), c->st.received),
	       fmt_count(l[1], sizeof(l[1]), c->foreign), FMT_COUNT(c->st.lost),
	       FMT_COUNT(c->st.duplicates), FMT_COUNT(c->st.reordered), FMT_COUNT(c->st.late), r.n);
	if (c->st.implausible || c->st.ts_future || c->st.ts_stale)
		printf("  rejected: implausible sequence %s, send time in the future %s, before the sink started %s (in no run's books)\n",
		       FMT_COUNT(c->st.implausible), FMT_COUNT(c->st.ts_future),
		       FMT_COUNT(c->st.ts_stale));
	/* The usual cause: a capture of xdp-gen's frames replayed with their old stamps. */
	if (c->st.ts_stale && !c->st.received)
		printf("  hint: every stamped frame was sent before this sink started: a replayed "
		       "capture of xdp-gen traffic? 'xdp-gen xsk --pcap FILE --stamp' stamps it afresh\n");
	if (c->st.unplaced)
		printf("  not checked: %s stamped frames found no room in the books "
		       "(more runs or flows at once than a queue keeps; man xdp-sink, FORGED FRAMES)\n",
		       FMT_COUNT(c->st.unplaced));
	if (r.folded_runs)
		printf("  folded:   %s closed runs' books kept only together: %s received, "
		       "lost %s\n",
		       FMT_COUNT(r.folded_runs), fmt_count(l[0], sizeof(l[0]), r.folded.c.received),
		       FMT_ICOUNT(r.folded.c.lost));
	hist_summarize(&r.all, &all);
	text_lat("  latency:  ", &all);
	if (c->rx_untimed)
		printf("  timed:    %s of %s stamped frames (above about 1 Mpps on a CPU the kernel times "
		       "one in 16; --time-all times every frame)\n",
		       fmt_count(l[0], sizeof(l[0]), c->rx_time_kernel + c->rx_time_user),
		       fmt_count(l[1], sizeof(l[1]),
				 c->rx_time_kernel + c->rx_time_user + c->rx_untimed));
	hist_summarize(&r.all_ipdv, &all);
	if (all.count)
		printf("  jitter:   IPDV (rfc3393) p50 %s, p99 %s; interarrival (rfc3550) %s (latency basis: %s)\n",
		       fmt_ns(l[0], sizeof(l[0]), all.p50), fmt_ns(l[1], sizeof(l[1]), all.p99),
		       fmt_ns(l[2], sizeof(l[2]), (__u64)r.all_jitter_ns), latency_basis(c));
	for (i = 0; i < r.n; i++) {
		if (sk->cfg->verbose)
			text_run(&r.row[i].s, &r.row[i].lat);
		causes_text_run(sk->causes, r.row[i].s.id, (__s64)r.row[i].s.c.lost);
	}
	causes_text_rest(sk->causes);
	runs_free(&r);
}

/* Does a socket of the sink's take this queue's packets? */
static bool has_socket(const struct xsk_state *xs, unsigned int queue)
{
	unsigned int i;

	for (i = 0; i < xs->nxq; i++)
		if (xs->xq[i].queue == queue)
			return true;
	return false;
}

/*
 * Frames that reached a queue without a socket were never read, so no book
 * can say whether they were lost: say so before the books, with the queues.
 */
static void text_unchecked(const struct sink *sk, const struct sink_snap *a,
			   const struct sink_snap *b, __u64 n)
{
	const struct xsk_state *xs = sk->ms;
	unsigned int key, shown = 0;

	printf("  NOT CHECKED: %s frames reached queues without a socket (", FMT_COUNT(n));
	for (key = 0; key <= XDPSG_MAX_QUEUES; key++) {
		__u64 q = a->q[key].packets - b->q[key].packets;

		if (q && (key == XDPSG_MAX_QUEUES || !has_socket(xs, key)))
			printf("%s %s%u: %s", shown++ ? "," : "queue",
			       key == XDPSG_MAX_QUEUES ? ">=" : "",
			       key == XDPSG_MAX_QUEUES ? sk->nslots - 1 : key, FMT_COUNT(q));
	}
	printf("); the books below cover only the queues with one (--queues all: a socket on every queue)\n");
}

static void text_summary(const struct sink *sk, const struct sink_snap *a,
			 const struct sink_snap *b, const struct sink_stats *d,
			 const struct xq_counts *c, const struct xdp_statistics *x)
{
	const struct xsk_state *xs = sk->ms;
	const struct xq_counts *ca = xsk_snap_xc(a), *cb = xsk_snap_xc(b);
	char l[2][24];
	unsigned int i;

	if (d->redirect_err)
		text_unchecked(sk, a, b, d->redirect_err);
	if (!sk->cfg->no_verify)
		text_checks(sk, c);
	/* The drop names are JSON's (the drops: line's), so one count has one name. */
	printf("  accounted: XDP saw %s = delivered %s + no_socket %s + xsk_fill_ring_empty %s + xsk_rx_ring_full %s + xsk_rx_invalid %s; unexplained %s\n",
	       fmt_count(l[0], sizeof(l[0]), d->packets),
	       fmt_count(l[1], sizeof(l[1]), c->rx_packets), FMT_COUNT(d->redirect_err),
	       FMT_COUNT(x->rx_dropped), FMT_COUNT(x->rx_ring_full), FMT_COUNT(x->rx_invalid_descs),
	       FMT_ICOUNT(xsk_balance(d, c, x)));
	for (i = 0; i < xs->nxq; i++) {
		const struct xq *q = &xs->xq[i];

		printf("    socket queue %-3u cpu %-3d (follow %s) %s mode %14s packets%s%s\n",
		       q->queue, q->cpu, xq_follow_name(q), xq_bind_mode(q),
		       fmt_count(l[0], sizeof(l[0]), ca[i].rx_packets - cb[i].rx_packets),
		       q->accounting[0] ? "  frames: " : "", q->accounting);
		/* --cpus kept the thread away from where its frames arrive: say so. */
		if (q->follow == XQ_FOLLOW_OFF && !sk->cfg->no_follow_rx && !sk->cfg->no_verify &&
		    q->rx_cpu >= 0 && q->rx_cpu != q->cpu)
			printf("    hint: queue %u's packets arrive on CPU %d; --follow-rx verifies them "
			       "there, without moving every frame between CPUs (man xdp-sink)\n",
			       q->queue, q->rx_cpu);
		else if (q->follow == XQ_FOLLOW_RETURNED)
			printf("    note: queue %u delivered less on its receive CPU %d (busy with "
			       "something that outranks it?) and went back to CPU %d\n",
			       q->queue, q->rx_cpu, q->cpu);
	}
}

void xsk_text(const struct sink *sk, const struct sink_snap *a, const struct sink_snap *b,
	      const struct sink_stats *d, enum run_report kind)
{
	struct xq_counts c;
	struct xdp_statistics x;

	xsk_deltas(sk, a, b, &c, &x);
	if (kind == RUN_SUMMARY) {
		text_summary(sk, a, b, d, &c, &x);
		capture_text(((const struct xsk_state *)sk->ms)->cap);
	} else
		text_interval(sk, &c);
}

/*
 * RESULT: the books in one line. What was checked and what it found; what was
 * not checked (frames on queues without a socket, frames with no room in the
 * books) and what does not balance come first in it, never a bare "lost 0".
 */
void xsk_result(const struct sink *sk, const struct sink_snap *a, const struct sink_snap *b,
		const struct sink_drops *dr)
{
	const struct sink_stats *d = &dr->prog;
	__u64 sock_drops, no_socket = d->redirect_err;
	struct xq_counts c;
	struct xdp_statistics x;
	__s64 unexplained;
	struct runs r;

	xsk_deltas(sk, a, b, &c, &x);
	sock_drops = x.rx_dropped + x.rx_ring_full + x.rx_invalid_descs;
	unexplained = xsk_balance(d, &c, &x);
	printf("RESULT: ");
	if (sink_unseen(sk, a, b))
		printf("NOT ALL SEEN: %s frames passed unseen on queues added during the run; ",
		       FMT_COUNT(sink_unseen(sk, a, b)));
	if (unexplained)
		printf("the books DO NOT balance (%s unexplained); ", FMT_ICOUNT(unexplained));
	if (no_socket)
		printf("NOT ALL CHECKED: %s of %s frames reached queues without a socket; ",
		       FMT_COUNT(no_socket), FMT_COUNT(d->packets));
	if (sk->cfg->no_verify) {
		printf("%s frames delivered, not checked (--no-verify)", FMT_COUNT(c.rx_packets));
	} else if (!c.st.received || runs_collect(sk, &r)) {
		printf("%s frames delivered, none stamped by xdp-gen: nothing to check",
		       FMT_COUNT(c.rx_packets));
	} else {
		printf("%s stamped frames of %u run%s checked: lost %s, duplicates %s, reordered %s, late %s",
		       FMT_COUNT(c.st.received), r.n, r.n == 1 ? "" : "s", FMT_ICOUNT(c.st.lost),
		       FMT_COUNT(c.st.duplicates), FMT_COUNT(c.st.reordered), FMT_COUNT(c.st.late));
		runs_free(&r);
	}
	if (c.st.unplaced)
		printf("; %s not checked (no room in the books)", FMT_COUNT(c.st.unplaced));
	if (sock_drops)
		printf("; %s dropped at the sockets", FMT_COUNT(sock_drops));
	if (c.st.implausible + c.st.ts_future + c.st.ts_stale)
		printf("; %s rejected claims",
		       FMT_COUNT(c.st.implausible + c.st.ts_future + c.st.ts_stale));
	if (c.foreign && !sk->cfg->no_verify)
		printf("; %s foreign", FMT_COUNT(c.foreign));
	printf("\n");
}

/* A new file renamed over the old one at the end: a failure keeps the old. */
static int write_hist(const struct sink *sk, const char *path)
{
	size_t len = strlen(path);
	struct outfile o;
	struct runs r;
	int err;

	if (runs_collect(sk, &r))
		return -ENOMEM;
	err = outfile_open(&o, "--hist", path);
	if (!err)
		err = len > 5 && !strcmp(path + len - 5, ".json") ? hist_write_json(&r.all, o.f) :
								    hist_write_csv(&r.all, o.f);
	if (!err)
		err = outfile_commit(&o);
	else
		outfile_abort(&o);
	runs_free(&r);
	return err ? -EIO : 0;
}

/* After the summary: the histogram file, and the frame accounting verdict. */
int xsk_finish(struct sink *sk)
{
	const struct xsk_state *xs = sk->ms;
	unsigned int i;
	int err = 0;

	if (sk->cfg->hist)
		err = write_hist(sk, sk->cfg->hist);
	/* Finished before the summary; a capture that could not be written fails the run. */
	if (capture_finish(xs->cap))
		err = -EIO;
	for (i = 0; i < xs->nxq; i++)
		if (xs->xq[i].accounting[0] && !xs->xq[i].accounting_ok) {
			pr_warn("queue %u: frame accounting does not balance: %s\n",
				xs->xq[i].queue, xs->xq[i].accounting);
			err = -EIO;
		}
	return err;
}
