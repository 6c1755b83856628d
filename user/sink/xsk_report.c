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

#include "base/fmt.h"
#include "base/log.h"
#include "base/outfile.h"
#include "causes.h"
#include "report/counter_desc.h"
#include "xsk.h"

/*
 * Where every packet the program saw went. Returns the unexplained rest. A
 * redirect can fail after the program and before the socket counts it (CI saw
 * one frame of 454,496 so, in a sink started and stopped under traffic): veth
 * counted it, and veth_rx_drops names it.
 */
static __s64 xsk_balance(const struct sink_stats *d, const struct xq_counts *c,
			 const struct xdp_statistics *x, __u64 veth)
{
	return (__s64)d->packets - (__s64)(c->rx_packets + d->redirect_err + x->rx_dropped +
					   x->rx_ring_full + x->rx_invalid_descs + veth);
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

static void json_hist(struct jw *w, const char *key, const struct hist *h)
{
	struct hist_summary hs;

	hist_summarize(h, &hs);
	hist_summary_json(w, key, &hs);
}

/*
 * What the latency is measured to: the NIC's receive timestamp (--hw-time),
 * the kernel's receive time (the program's metadata), or the moment the
 * queue's thread read the frame (which adds its wake-up); "mixed" if frames
 * came with more than one of them (rx_time_hw, rx_time_kernel and
 * rx_time_user count each).
 */
static const char *latency_basis(const struct xq_counts *c)
{
	if (!!c->rx_time_hw + !!c->rx_time_kernel + !!c->rx_time_user > 1)
		return "mixed";
	if (c->rx_time_hw)
		return "hardware receive time";
	if (c->rx_time_kernel)
		return "kernel receive time";
	return c->rx_time_user ? "user-space read time" : "none";
}

static void json_checks(struct jw *w, const struct xq_counts *c, const struct xsk_runs *r,
			unsigned int has)
{
	struct xsk_books bk;
	__u64 runs = r ? r->n : c->runs;

	jw_str(w, "latency_basis", latency_basis(c));
	jw_u64(w, "rx_time_hw", c->rx_time_hw);
	jw_u64(w, "rx_time_kernel", c->rx_time_kernel);
	jw_u64(w, "rx_time_user", c->rx_time_user);
	jw_u64(w, "rx_untimed", c->rx_untimed);
	jw_u64(w, "rx_recorded", c->rx_recorded);

	/* The summary's books are its runs' (those still on probation too); an interval's the totals. */
	xsk_books_of(r ? &r->sum : &c->st, c->foreign, c->forged, c->marks, r ? r->stray : c->stray,
		     false, &bk);
	ctr_json_members(w, &sink_xsk_books, &bk, has);
	jw_u64(w, "restarts", runs > 1 ? runs - 1 : 0);
	ctr_json(w, &sink_xsk_unchecked, &bk, has);
}

/* The summary's verdicts: every run's books, and the latency over all of them. */
static void json_runs(const struct sink *sk, struct jw *w, const struct xsk_runs *r)
{
	unsigned int i, unseen, stopped;

	json_hist(w, "latency_ns", &r->all);
	json_hist(w, "ipdv_ns", &r->all_ipdv);
	jw_double(w, "jitter_ns", r->all_jitter_ns);
	jw_u64(w, "runs_count", r->n);
	jw_u64(w, "stray_runs", r->stray_runs);
	jw_arr(w, "runs");
	for (i = 0; i < r->n; i++)
		xsk_json_run(sk, w, NULL, r, &r->row[i].s, &r->row[i].lat);
	jw_end_arr(w);
	/* Runs folded away for room: reported together, never dropped. */
	if (r->folded_runs) {
		jw_u64(w, "runs_folded", r->folded_runs);
		xsk_json_run(sk, w, "folded", r, &r->folded, &r->folded_lat);
	}
	xsk_runs_ends(r, &unseen, &stopped);
	jw_obj(w, "ends");
	jw_u64(w, "not_seen", unseen);
	jw_u64(w, "sink_stopped_first", stopped);
	jw_end_obj(w);
	/* Books closed for room: their losses are in the figures above, said once more here. */
	jw_obj(w, "closed");
	jw_u64(w, "runs", r->closed_runs);
	jw_i64(w, "lost", (__s64)r->closed_lost);
	jw_end_obj(w);
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
	struct xsk_runs *r = NULL;

	xsk_deltas(sk, a, b, &c, &x);
	/* The summary's runs are the distinct ones; an interval has the queues' books opened. */
	if (summary && books) {
		r = malloc(sizeof(*r));
		if (r && xsk_runs_collect(sk, r)) {
			free(r);
			r = NULL;
		}
	}
	jw_u64(w, "xdp_packets", d->packets);
	/* Frames on queues without a socket: never read, never in any books. */
	jw_u64(w, "not_checked", d->redirect_err);
	if (books)
		json_checks(w, &c, r, has);
	ctr_json(w, &sink_xsk_stats, &x, has);
	if (summary)
		jw_i64(w, "unexplained", xsk_balance(d, &c, &x, dr->veth_rx_drops));
	if (r)
		json_runs(sk, w, r);
	if (summary)
		capture_json(((const struct xsk_state *)sk->ms)->cap, w);
	json_sockets(sk, w, a, b, summary);
	if (r)
		xsk_runs_free(r);
	free(r);
}

static void text_interval(const struct sink *sk, const struct xq_counts *c)
{
	if (!sk->cfg->no_verify)
		printf("  lost %s dup %s reord %s foreign %s", FMT_ICOUNT(c->st.lost),
		       FMT_COUNT(c->st.duplicates), FMT_COUNT(c->st.reordered),
		       FMT_COUNT(c->foreign));
	if (c->st.missing_head)
		printf(" missing-at-start %s", FMT_COUNT(c->st.missing_head));
	if (c->forged)
		printf(" forged %s", FMT_COUNT(c->forged));
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

/* -v: a run's longest loss episodes, up to --episodes of them, longest first. */
static void text_episodes(const struct seqtrack_summary *s, unsigned int keep)
{
	struct episode e[EPISODES_MAX];
	unsigned int i, n = episodes_sorted(&s->ep, e);
	char l[24];

	n = n < keep ? n : keep;
	for (i = 0; i < n; i++)
		printf("      outage %s: flow %u, seq %u..%u (%s frames), %.6f s into the run\n",
		       fmt_ns(l, sizeof(l), e[i].outage_ns), e[i].flow, e[i].first,
		       e[i].first + e[i].frames - 1, FMT_COUNT(e[i].frames),
		       e[i].at_ns > s->first_ts ? (double)(e[i].at_ns - s->first_ts) / 1e9 : 0);
	if (s->ep.count > n)
		printf("      ... and %s shorter episodes (--episodes keeps %u)\n",
		       FMT_COUNT(s->ep.count - n), keep);
	if (s->ep.amended)
		printf("      %s frames arrived after their episode had closed (a later gap in their flow): the episodes above hold them as lost\n",
		       FMT_COUNT(s->ep.amended));
}

/* -v: one line per run, and one for its latency. */
static void text_run(const struct xsk_runs *r, const struct seqtrack_summary *s,
		     const struct hist_summary *lat, unsigned int keep)
{
	char l[3][24];

	printf("    run %08x: %s received, lost %s (%s after the last), missing at the start %s, duplicates %s, reordered %s, late %s; end %s; sent at %s pps, at most %u in 100 us (even: %.1f)\n",
	       s->id, fmt_count(l[0], sizeof(l[0]), s->c.received), FMT_ICOUNT(s->c.lost),
	       FMT_COUNT(s->c.lost_at_end), FMT_COUNT(s->c.missing_head),
	       FMT_COUNT(s->c.duplicates), FMT_COUNT(s->c.reordered), FMT_COUNT(s->c.late),
	       xsk_run_end_str(xsk_run_end_of(r, s)), fmt_si(l[1], sizeof(l[1]), xsk_run_rate(s)),
	       (unsigned int)s->burst_max, xsk_run_rate(s) * SEQTRACK_BURST_NS / 1e9);
	text_lat("      latency: ", lat);
	if (s->ipdv.count)
		printf("      jitter: IPDV (rfc3393) p50 %s, p99 %s; interarrival (rfc3550) %s\n",
		       fmt_ns(l[0], sizeof(l[0]), s->ipdv.p50),
		       fmt_ns(l[1], sizeof(l[1]), s->ipdv.p99),
		       fmt_ns(l[2], sizeof(l[2]), (__u64)s->jitter_ns));
	text_episodes(s, keep);
}

/* What was received that the books could not check, and why. */
static void text_unchecked_books(const struct sink *sk, const struct xq_counts *c,
				 const struct xsk_runs *r)
{
	char kb[32];

	if (c->forged)
		printf("  forged:   %s frames carried stamps this sink could not verify (wrong key? it checks with the %s key; give both ends the same --stamp-key)\n",
		       FMT_COUNT(c->forged), stamp_key_name(&sk->key, kb, sizeof(kb)));
	if (r->sum.unplaced)
		printf("  not checked: %s stamped frames found no room in the books "
		       "(more runs or flows at once than a queue keeps; man xdp-sink, FORGED FRAMES)\n",
		       FMT_COUNT(r->sum.unplaced));
	if (r->stray)
		printf("  not checked: %s frames of %s runs that showed fewer than %d frames and no mark before more runs needed room (strays of old runs, or a flood of runs)\n",
		       FMT_COUNT(r->stray), FMT_COUNT(r->stray_runs), SEQTRACK_PROMOTE);
	if (r->closed_runs)
		printf("  closed:   %s runs' books closed for room: lost %s, in the figures above\n",
		       FMT_COUNT(r->closed_runs), FMT_ICOUNT(r->closed_lost));
	if (r->folded_runs)
		printf("  folded:   %s closed runs' books kept only together: %s received, "
		       "lost %s\n",
		       FMT_COUNT(r->folded_runs), FMT_COUNT(r->folded.c.received),
		       FMT_ICOUNT(r->folded.c.lost));
}

/*
 * The clock error under the latency: 0 where every timed run shared this
 * host's clock, else the largest bound of two synchronised clocks.
 */
static void text_clock_error(const struct xsk_runs *r)
{
	unsigned int i, c, synced = 0, same = 0, clocks = 0;
	const char *sep = "";
	__u64 worst = 0;
	char e[24];

	for (i = 0; i < r->n; i++) {
		const struct seqtrack_marks *mk = &r->row[i].s.mk;

		if (!seqtrack_clock_timed(mk->state) || mk->clock >= XDPSG_CLOCK_N)
			continue;
		clocks |= 1U << mk->clock;
		synced += mk->state == SEQTRACK_CLOCK_SYNCED;
		same += mk->state == SEQTRACK_CLOCK_SAME;
		worst = mk->sync_error_ns > worst ? mk->sync_error_ns : worst;
	}
	if (!clocks)
		return;
	printf("  clock:    ");
	for (c = 0; c < XDPSG_CLOCK_N; c++)
		if (clocks & (1U << c)) {
			printf("%s%s", sep, clock_name((enum xdpsg_clock)c));
			sep = ", ";
		}
	if (!synced)
		printf("; sync error 0: one clock, both ends read it on one kernel\n");
	else
		printf("; sync error at most %s: two synchronised clocks (both ends' adjtimex maxerror)%s\n",
		       fmt_ns(e, sizeof(e), worst),
		       same ? "; 0 for the runs on this host's clock" : "");
}

static void text_checks(const struct sink *sk, const struct xq_counts *c)
{
	struct hist_summary all;
	struct xsk_runs r;
	char l[3][24];
	unsigned int i;

	if (xsk_runs_collect(sk, &r))
		return;
	printf("  checked:  %s stamped, %s foreign, %s forged; lost %s (%s after the last frame that arrived), duplicates %s, reordered %s, late %s, runs %u\n",
	       fmt_count(l[0], sizeof(l[0]), r.sum.received),
	       fmt_count(l[1], sizeof(l[1]), c->foreign), FMT_COUNT(c->forged),
	       FMT_ICOUNT(r.sum.lost), FMT_COUNT(r.sum.lost_at_end), FMT_COUNT(r.sum.duplicates),
	       FMT_COUNT(r.sum.reordered), FMT_COUNT(r.sum.late), r.n);
	if (r.sum.missing_head)
		printf("  missing:  %s frames before the first of their flow that arrived (sent before this sink was ready?): not in lost\n",
		       FMT_COUNT(r.sum.missing_head));
	text_unchecked_books(sk, c, &r);
	text_runs_notes(&r, sk->cfg->verbose);
	hist_summarize(&r.all, &all);
	if (all.count) {
		text_lat("  latency:  ", &all);
		text_clock_error(&r);
	} else if (r.n) {
		printf("  latency:  not figured: no run was stamped on a clock this host shares (the lines above say why)\n");
	}
	if (c->rx_untimed)
		printf("  timed:    %s of %s stamped frames (frames reaching a CPU less than 1.02 us apart, "
		       "in a burst or above about 1 Mpps, are timed about one in 16, 9 to 24 at random; "
		       "--time-all times every frame)\n",
		       fmt_count(l[0], sizeof(l[0]),
				 c->rx_time_hw + c->rx_time_kernel + c->rx_time_user),
		       fmt_count(l[1], sizeof(l[1]),
				 c->rx_time_hw + c->rx_time_kernel + c->rx_time_user +
					 c->rx_untimed));
	if (sk->cfg->verbose && c->rx_packets)
		printf("  records:  %s of %s frames checked from the program's records, the rest read from the UMEM\n",
		       fmt_count(l[0], sizeof(l[0]), c->rx_recorded),
		       fmt_count(l[1], sizeof(l[1]), c->rx_packets));
	hist_summarize(&r.all_ipdv, &all);
	if (all.count)
		printf("  jitter:   IPDV (rfc3393) p50 %s, p99 %s; interarrival (rfc3550) %s (latency basis: %s)\n",
		       fmt_ns(l[0], sizeof(l[0]), all.p50), fmt_ns(l[1], sizeof(l[1]), all.p99),
		       fmt_ns(l[2], sizeof(l[2]), (__u64)r.all_jitter_ns), latency_basis(c));
	for (i = 0; i < r.n; i++) {
		struct causes_books b = xsk_run_causes_books(&r, &r.row[i].s);

		if (sk->cfg->verbose)
			text_run(&r, &r.row[i].s, &r.row[i].lat, (unsigned int)sk->cfg->episodes);
		causes_text_run(sk->causes, r.row[i].s.id, &b);
	}
	causes_text_rest(sk->causes);
	xsk_runs_free(&r);
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
	/* veth's drops over the span that no socket counter names (xsk_drops()'s share) */
	__u64 veth = xsk_veth_unnamed(a->veth_rx_drops - b->veth_rx_drops, x);
	char l[2][24];
	unsigned int i;

	if (d->redirect_err)
		text_unchecked(sk, a, b, d->redirect_err);
	if (!sk->cfg->no_verify)
		text_checks(sk, c);
	/* The drop names are JSON's (the drops: line's), so one count has one name. */
	printf("  accounted: XDP saw %s = delivered %s + no_socket %s + xsk_fill_ring_empty %s + xsk_rx_ring_full %s + xsk_rx_invalid %s + veth_rx_drops %s; unexplained %s\n",
	       fmt_count(l[0], sizeof(l[0]), d->packets),
	       fmt_count(l[1], sizeof(l[1]), c->rx_packets), FMT_COUNT(d->redirect_err),
	       FMT_COUNT(x->rx_dropped), FMT_COUNT(x->rx_ring_full), FMT_COUNT(x->rx_invalid_descs),
	       FMT_COUNT(veth), FMT_ICOUNT(xsk_balance(d, c, x, veth)));
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
 * The books' part of RESULT. Never a bare "lost 0": frames missing before a
 * run's first, runs whose end was not seen (what came after their last frame
 * is unknown), books closed for room, frames no book checked and forged
 * stamps are said beside it.
 */
static void result_books(const struct sink *sk, const struct xq_counts *c)
{
	unsigned int unseen, stopped;
	struct xsk_runs r;

	if (xsk_runs_collect(sk, &r))
		return;
	if (!r.n) {
		if (r.stray)
			printf("%s frames delivered, %s of them stamped by xdp-gen in runs too short to book (fewer than %d frames and no mark): nothing checked",
			       FMT_COUNT(c->rx_packets), FMT_COUNT(r.stray), SEQTRACK_PROMOTE);
		else if (c->forged)
			printf("%s frames carried stamps this sink could not verify (wrong key?): nothing checked",
			       FMT_COUNT(c->forged));
		else
			printf("%s frames delivered, none stamped by xdp-gen: nothing to check",
			       FMT_COUNT(c->rx_packets));
		xsk_runs_free(&r);
		return;
	}
	xsk_runs_ends(&r, &unseen, &stopped);
	printf("%s stamped frames of %u run%s checked: lost %s", FMT_COUNT(r.sum.received), r.n,
	       r.n == 1 ? "" : "s", FMT_ICOUNT(r.sum.lost));
	if (unseen + stopped)
		printf(" up to the last frame that arrived");
	else
		printf(" (%s after the last frame that arrived)", FMT_COUNT(r.sum.lost_at_end));
	printf(", duplicates %s, reordered %s, late %s", FMT_COUNT(r.sum.duplicates),
	       FMT_COUNT(r.sum.reordered), FMT_COUNT(r.sum.late));
	if (r.sum.missing_head)
		printf("; MISSING %s before the first frame (sent before this sink was ready?)",
		       FMT_COUNT(r.sum.missing_head));
	if (unseen)
		printf("; END NOT SEEN for %u run%s (frames after the last that arrived unknown)",
		       unseen, unseen == 1 ? "" : "s");
	if (stopped)
		printf("; %u run%s still arriving when the sink stopped (frames on their way: not seen, not lost)",
		       stopped, stopped == 1 ? "" : "s");
	if (r.closed_runs)
		printf("; %s runs closed for room (lost %s, in these figures)",
		       FMT_COUNT(r.closed_runs), FMT_ICOUNT(r.closed_lost));
	if (r.sum.unplaced + r.stray)
		printf("; %s not checked (no room in the books)",
		       FMT_COUNT(r.sum.unplaced + r.stray));
	xsk_runs_free(&r);
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

	xsk_deltas(sk, a, b, &c, &x);
	sock_drops = x.rx_dropped + x.rx_ring_full + x.rx_invalid_descs;
	unexplained = xsk_balance(d, &c, &x, dr->veth_rx_drops);
	sink_result_begin(sk, a, b);
	if (unexplained)
		printf("the books DO NOT balance (%s unexplained); ", FMT_ICOUNT(unexplained));
	if (no_socket)
		printf("NOT ALL CHECKED: %s of %s frames reached queues without a socket; ",
		       FMT_COUNT(no_socket), FMT_COUNT(d->packets));
	if (sk->cfg->no_verify)
		printf("%s frames delivered, not checked (--no-verify)", FMT_COUNT(c.rx_packets));
	else
		result_books(sk, &c);
	if (sock_drops)
		printf("; %s dropped at the sockets", FMT_COUNT(sock_drops));
	if (c.forged && !sk->cfg->no_verify)
		printf("; %s forged (stamps under another key?)", FMT_COUNT(c.forged));
	if (c.foreign && !sk->cfg->no_verify)
		printf("; %s foreign", FMT_COUNT(c.foreign));
	printf("\n");
}

/* A new file renamed over the old one at the end: a failure keeps the old. */
static int write_hist(const struct sink *sk, const char *path)
{
	size_t len = strlen(path);
	struct outfile o;
	struct xsk_runs r;
	int err;

	if (xsk_runs_collect(sk, &r))
		return -ENOMEM;
	err = outfile_open(&o, "--hist", path);
	if (!err)
		err = len > 5 && !strcmp(path + len - 5, ".json") ? hist_write_json(&r.all, o.f) :
								    hist_write_csv(&r.all, o.f);
	if (!err)
		err = outfile_commit(&o);
	else
		outfile_abort(&o);
	xsk_runs_free(&r);
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
