// SPDX-License-Identifier: GPL-2.0
/*
 * The xsk mode's books of generator runs as the reports show them: collected
 * from the queues' trackers once their threads have ended, with what can be
 * said of each run's end (did its end marks arrive?) and clock (can its
 * latency be figured?), in JSON and in words.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fmt.h"
#include "base/log.h"
#include "base/runtime.h"
#include "causes.h"
#include "measure/clockid.h"
#include "xsk.h"

void xsk_runs_free(struct xsk_runs *r)
{
	free(r->row);
	r->row = NULL;
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

static void xsk_runs_add(const struct seqtrack_summary *s, const struct hist *lat, void *ctx)
{
	struct xsk_runs *r = ctx;
	struct xsk_run_row *row = &r->row[r->n++];

	row->s = *s;
	hist_summarize(lat, &row->lat);
	hist_merge(&r->all, lat);
	seqtrack_counts_merge(&r->sum, &s->c);
}

/* --drop-causes: the tracer's books joined with the runs (read once, at the summary). */
static void xsk_runs_causes(const struct sink *sk, const struct xsk_runs *r)
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

/* What the trackers closed: books closed for room (kept or folded), and strays. */
static void xsk_runs_closed(struct seqtrack *const *tr, unsigned int n, struct xsk_runs *r)
{
	unsigned int q, i;

	for (q = 0; q < n; q++) {
		const struct seqtrack *t = tr[q];

		if (!t)
			continue;
		r->closed_runs += t->ndone + t->folded_runs;
		for (i = 0; i < t->ndone; i++)
			r->closed_lost += t->done[i].c.lost;
		r->closed_lost += t->folded.c.lost;
		r->stray += t->stray;
		r->stray_runs += t->stray_runs;
		r->marks += t->marks;
	}
}

int xsk_runs_collect(const struct sink *sk, struct xsk_runs *r)
{
	struct seqtrack **tr = xsk_trackers(sk->ms);
	const struct xsk_state *xs = sk->ms;
	struct hist *folded = malloc(sizeof(*folded));
	int n = tr ? seqtrack_runs(tr, xs->nxq, NULL, NULL) : -ENOMEM;

	memset(r, 0, sizeof(*r));
	r->end_ns = now_ns();
	hist_init(&r->all);
	r->row = n >= 0 ? calloc(n ? (size_t)n : 1, sizeof(*r->row)) : NULL;
	if (!r->row || !folded || seqtrack_runs(tr, xs->nxq, xsk_runs_add, r) < 0) {
		free(tr);
		free(folded);
		xsk_runs_free(r);
		return -ENOMEM;
	}
	r->folded_runs = seqtrack_folded(tr, xs->nxq, &r->folded, folded);
	seqtrack_counts_merge(&r->sum, &r->folded.c);
	xsk_runs_closed(tr, xs->nxq, r);
	xsk_runs_causes(sk, r);
	hist_summarize(folded, &r->folded_lat);
	seqtrack_ipdv_all(tr, xs->nxq, &r->all_ipdv, &r->all_jitter_ns);
	if (seqtrack_clock_timed(r->folded.mk.state))
		hist_merge(&r->all, folded);
	free(folded);
	free(tr);
	return 0;
}

/* ---------------------------------------------------------------------------
 * A run's end and clock
 */

/*
 * Did the run's end marks arrive? For every flow it has (the marks say how
 * many), for some, or none; none while its frames still came in the last
 * second before the sink stopped is the sink's doing, not the run's.
 */
enum xsk_run_end xsk_run_end_of(const struct xsk_runs *r, const struct seqtrack_summary *s)
{
	__u32 flows = s->mk.nflows > s->flows_data ? s->mk.nflows : s->flows_data;

	if (s->mk.flows_ended && s->mk.flows_ended >= flows)
		return RUN_END_SEEN;
	if (r->end_ns > s->last_rx && r->end_ns - s->last_rx < SEQTRACK_IDLE_NS)
		return RUN_END_SINK_STOPPED;
	return s->mk.flows_ended ? RUN_END_PARTIAL : RUN_END_NONE;
}

/*
 * What the run's causes are joined with: its lost, the frames missing before
 * its first, and its marks that did not arrive once its end is seen (then
 * every flow sent XDPSG_MARK_START_REPEAT start marks and XDPSG_MARK_REPEAT
 * end marks; while it is not, how many it sent is unknown: 0).
 */
struct causes_books xsk_run_causes_books(const struct xsk_runs *r, const struct seqtrack_summary *s)
{
	__u32 flows = s->mk.nflows > s->flows_data ? s->mk.nflows : s->flows_data;
	__u64 sent = (__u64)flows * (XDPSG_MARK_START_REPEAT + XDPSG_MARK_REPEAT);
	struct causes_books b = { .lost = (__s64)s->c.lost, .head = s->c.missing_head };

	if (xsk_run_end_of(r, s) == RUN_END_SEEN && sent > s->mk.received)
		b.marks_missing = sent - s->mk.received;
	return b;
}

const char *xsk_run_end_str(enum xsk_run_end e)
{
	static const char *const names[] = {
		[RUN_END_SEEN] = "seen",
		[RUN_END_PARTIAL] = "partly seen",
		[RUN_END_NONE] = "not seen",
		[RUN_END_SINK_STOPPED] = "not seen: the sink stopped first",
	};

	return names[e];
}

/* "86,400 s", "12.5 ms": an offset's size in words (its sign said apart). */
static const char *fmt_offset(char *buf, size_t len, __s64 ns)
{
	__u64 a = ns < 0 ? (__u64)-ns : (__u64)ns;

	if (a >= 10000000000ULL)
		snprintf(buf, len, "%s s", FMT_COUNT((a + 500000000ULL) / 1000000000ULL));
	else
		fmt_ns(buf, len, a);
	return buf;
}

/* Where a timed run's clock error comes from (seqtrack_clock_timed()). */
const char *xsk_run_sync_basis(const struct seqtrack_summary *s)
{
	return s->mk.state == SEQTRACK_CLOCK_SAME ?
		       "one clock: both ends read it on one kernel" :
		       "two synchronised clocks: both ends' adjtimex maxerror added";
}

/* Why a run has no latency figure, or NULL when it has one. */
const char *xsk_run_clock_note(const struct seqtrack_summary *s, char *buf, size_t len)
{
	char off[32];

	const char *name = clock_name((enum xdpsg_clock)s->mk.clock);

	switch (s->mk.state) {
	case SEQTRACK_CLOCK_SAME:
	case SEQTRACK_CLOCK_SYNCED:
		return NULL;
	case SEQTRACK_CLOCK_OTHER:
		if (s->mk.why == SEQTRACK_WHY_MONOTONIC) {
			snprintf(
				buf, len,
				"the generator stamped its own host's CLOCK_MONOTONIC (%s from this host's), which no other host reads: no one-way latency; use xdp-gen --clock tai with both clocks synchronised (chrony, ptp4l and phc2sys), or a round trip (xdp-gen --rtt); the books hold",
				fmt_offset(off, sizeof(off), s->mk.offset_ns));
			return buf;
		}
		snprintf(
			buf, len,
			"%s not synchronised (adjtimex: STA_UNSYNC), so the %s times of two hosts cannot be subtracted (%s apart): no one-way latency; synchronise %s (chrony, ptp4l and phc2sys); the books hold",
			s->mk.why == SEQTRACK_WHY_GEN_UNSYNCED	? "the generator's clock is" :
			s->mk.why == SEQTRACK_WHY_SINK_UNSYNCED ? "this host's clock is" :
								  "neither host's clock is",
			name, fmt_offset(off, sizeof(off), s->mk.offset_ns),
			s->mk.why == SEQTRACK_WHY_GEN_UNSYNCED	? "the generator's" :
			s->mk.why == SEQTRACK_WHY_SINK_UNSYNCED ? "this host's" :
								  "both");
		return buf;
	default:
		snprintf(
			buf, len,
			"no mark named the generator's clock (its start and end marks did not arrive): no one-way latency; the books hold");
		return buf;
	}
}

/* ---------------------------------------------------------------------------
 * JSON
 */

/* Frames a run sent per second, from its first to its last send time. */
double xsk_run_rate(const struct seqtrack_summary *s)
{
	__u64 span = s->last_ts - s->first_ts;

	return span && s->c.received > 1 ? (double)(s->c.received - 1) * 1e9 / (double)span : 0.0;
}

static void json_clock(struct jw *w, const struct seqtrack_summary *s)
{
	char note[256];
	const char *why = xsk_run_clock_note(s, note, sizeof(note));

	jw_obj(w, "clock");
	jw_str(w, "state", seqtrack_clock_str((enum seqtrack_clock)s->mk.state));
	if (s->mk.state != SEQTRACK_CLOCK_UNKNOWN) {
		jw_str(w, "name", clock_name((enum xdpsg_clock)s->mk.clock));
		jw_double(w, "offset_s", (double)s->mk.offset_ns / 1e9);
		jw_bool(w, "synchronised", s->mk.synced);
	}
	if (seqtrack_clock_timed(s->mk.state)) {
		jw_u64(w, "sync_error_ns", s->mk.sync_error_ns);
		jw_str(w, "sync_error_basis", xsk_run_sync_basis(s));
	} else {
		jw_null(w, "sync_error_ns");
		jw_null(w, "sync_error_basis");
	}
	jw_str(w, "latency", why ? why : "figured");
	jw_end_obj(w);
}

static void json_end(struct jw *w, const struct xsk_runs *r, const struct seqtrack_summary *s)
{
	jw_str(w, "end", xsk_run_end_str(xsk_run_end_of(r, s)));
	jw_u64(w, "flows_ended", s->mk.flows_ended);
	if (s->mk.run_frames)
		jw_u64(w, "sent", s->mk.run_frames);
	else
		jw_null(w, "sent");
	jw_u64(w, "marks", s->mk.received);
	jw_u64(w, "mark_conflicts", s->mk.conflicts);
}

/*
 * The run's loss episodes: counts and outages, and (the summary's runs) the
 * longest, up to --episodes of them, longest first.
 */
static void json_episodes(struct jw *w, const struct seqtrack_summary *s, unsigned int keep,
			  bool list)
{
	struct episode e[EPISODES_MAX];
	unsigned int i, n;

	jw_u64(w, "loss_episodes", s->ep.count);
	jw_u64(w, "loss_episode_frames", s->ep.frames);
	jw_u64(w, "outage_max_ns", s->ep.max_ns);
	jw_u64(w, "outage_total_ns", s->ep.total_ns);
	if (s->ep.count)
		jw_u64(w, "outage_worst_flow", s->ep.max_flow);
	else
		jw_null(w, "outage_worst_flow");
	jw_u64(w, "episodes_amended", s->ep.amended);
	if (!list)
		return;
	n = episodes_sorted(&s->ep, e);
	n = n < keep ? n : keep;
	jw_arr(w, "episodes");
	for (i = 0; i < n; i++) {
		jw_obj(w, NULL);
		jw_u64(w, "flow", e[i].flow);
		jw_u64(w, "first_seq", e[i].first);
		jw_u64(w, "frames", e[i].frames);
		jw_u64(w, "outage_ns", e[i].outage_ns);
		jw_u64(w, "at_ns", e[i].at_ns);
		jw_double(w, "at_s",
			  e[i].at_ns > s->first_ts ? (double)(e[i].at_ns - s->first_ts) / 1e9 : 0);
		jw_end_obj(w);
	}
	jw_end_arr(w);
}

void xsk_json_run(const struct sink *sk, struct jw *w, const char *key, const struct xsk_runs *r,
		  const struct seqtrack_summary *s, const struct hist_summary *lat)
{
	__u64 t0 = sk->base.rs.t_ns;

	jw_obj(w, key);
	jw_u64(w, "run", s->id);
	jw_u64(w, "received", s->c.received);
	jw_i64(w, "lost", (__s64)s->c.lost);
	jw_u64(w, "lost_at_end", s->c.lost_at_end);
	jw_u64(w, "missing_head", s->c.missing_head);
	jw_u64(w, "duplicates", s->c.duplicates);
	jw_u64(w, "reordered", s->c.reordered);
	jw_u64(w, "late", s->c.late);
	jw_u64(w, "unplaced", s->c.unplaced);
	jw_u64(w, "reopened", s->reopened);
	jw_u64(w, "flows", s->flows);
	json_episodes(w, s, (unsigned int)sk->cfg->episodes, !key);
	if (!key)
		json_end(w, r, s);
	jw_double(w, "first_rx_s", s->first_rx > t0 ? (double)(s->first_rx - t0) / 1e9 : 0);
	jw_double(w, "last_rx_s", s->last_rx > t0 ? (double)(s->last_rx - t0) / 1e9 : 0);
	jw_double(w, "send_s", (double)(s->last_ts - s->first_ts) / 1e9);
	jw_double(w, "send_pps", xsk_run_rate(s));
	jw_u64(w, "burst_100us_max", s->burst_max);
	jw_double(w, "burst_100us_ideal", xsk_run_rate(s) * SEQTRACK_BURST_NS / 1e9);
	json_clock(w, s);
	if (seqtrack_clock_timed(s->mk.state))
		hist_summary_json(w, "latency_ns", lat);
	jw_u64(w, "untimed", s->c.untimed);
	hist_summary_json(w, "ipdv_ns", &s->ipdv);
	jw_double(w, "jitter_ns", s->jitter_ns);
	if (!key) {
		struct causes_books b = xsk_run_causes_books(r, s);

		causes_json_run(sk->causes, w, s->id, &b);
	}
	jw_end_obj(w);
}

/* ---------------------------------------------------------------------------
 * Words
 */

/* Anything about a run that its counts alone do not say, or false. */
static bool run_has_note(const struct xsk_runs *r, const struct seqtrack_summary *s)
{
	return xsk_run_end_of(r, s) != RUN_END_SEEN || s->c.missing_head ||
	       s->mk.state != SEQTRACK_CLOCK_SAME || s->reopened || s->mk.conflicts ||
	       s->c.unplaced || s->ep.count;
}

/* One line per thing to say of a run, each starting with its id. */
void text_run_notes(const struct xsk_runs *r, const struct seqtrack_summary *s)
{
	enum xsk_run_end e = xsk_run_end_of(r, s);
	char note[256];

	if (e != RUN_END_SEEN) {
		printf("    run %08x: end %s", s->id, xsk_run_end_str(e));
		if (e == RUN_END_SINK_STOPPED)
			printf(" (frames still on their way are not lost)");
		else if (e == RUN_END_PARTIAL)
			printf(" (%u of %u flows ended)", s->mk.flows_ended,
			       s->mk.nflows > s->flows_data ? s->mk.nflows : s->flows_data);
		printf(": frames after the last that arrived unknown%s\n",
		       e == RUN_END_NONE && !s->mk.received ?
			       " (no marks came: xdp-gen --no-end-mark, or they were lost)" :
			       "");
	}
	if (s->c.missing_head)
		printf("    run %08x: %s frames missing before the first that arrived (sent before this sink was ready?)\n",
		       s->id, FMT_COUNT(s->c.missing_head));
	if (xsk_run_clock_note(s, note, sizeof(note)))
		printf("    run %08x: %s\n", s->id, note);
	if (s->reopened || s->c.unplaced)
		printf("    run %08x: not checked: %s frames found no room in the books; books reopened %u times (losses between the pieces are not counted)\n",
		       s->id, FMT_COUNT(s->c.unplaced), s->reopened);
	if (s->mk.conflicts)
		printf("    run %08x: %s end marks disagreed with an earlier one and were ignored\n",
		       s->id, FMT_COUNT(s->mk.conflicts));
	if (s->ep.count) {
		char a[24], b[24];

		printf("    run %08x: traffic stopped %s times (loss episodes: %s frames), the longest for %s (flow %u), %s in all\n",
		       s->id, FMT_COUNT(s->ep.count), FMT_COUNT(s->ep.frames),
		       fmt_ns(a, sizeof(a), s->ep.max_ns), s->ep.max_flow,
		       fmt_ns(b, sizeof(b), s->ep.total_ns));
	}
}

/* Up to RUNS_NOTED runs' notes; the rest counted (-v and JSON have each). */
#define RUNS_NOTED 8

void text_runs_notes(const struct xsk_runs *r, bool verbose)
{
	unsigned int i, shown = 0, more = 0;

	for (i = 0; i < r->n; i++) {
		if (!run_has_note(r, &r->row[i].s))
			continue;
		if (verbose || shown < RUNS_NOTED) {
			text_run_notes(r, &r->row[i].s);
			shown++;
		} else {
			more++;
		}
	}
	if (more)
		printf("    ... and %u more runs with something to say (-v or --json shows each)\n",
		       more);
}

/* How many runs end in each way. */
void xsk_runs_ends(const struct xsk_runs *r, unsigned int *unseen, unsigned int *stopped)
{
	unsigned int i;

	*unseen = *stopped = 0;
	for (i = 0; i < r->n; i++) {
		enum xsk_run_end e = xsk_run_end_of(r, &r->row[i].s);

		*unseen += e == RUN_END_NONE || e == RUN_END_PARTIAL;
		*stopped += e == RUN_END_SINK_STOPPED;
	}
}
