/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_SEQTRACK_H
#define XDPSG_SEQTRACK_H

/*
 * What a sink makes of the stamps it reads: books per generator run, and in
 * each run per flow. One tracker per receive thread (single writer); the
 * books of several trackers are merged for reports (seqtrack_sum.c).
 *
 * Only stamps whose keyed check passed reach the books (stamp.h): a frame can
 * only ever touch the books of the run its stamp names, and trust comes from
 * the key, not from time. No frame is judged by its send time: the books are
 * sequence numbers alone, so they hold whatever the sender's clock says.
 *
 *  - sequence, per flow (serial-number arithmetic, RFC 1982, so the 32-bit
 *    wrap is seamless). Sequence numbers start at 0. The flow keeps
 *    'expected' (last in-order seq + 1) and a SEQTRACK_WINDOW-frame window
 *    behind it that remembers which numbers were counted missing:
 *      first frame of the flow: the numbers before it are 'missing_head'
 *        ("missing before the first frame": sent before this sink was ready,
 *        or lost at the start), not 'lost';
 *      ahead by d >= 0: in order (d == 0) or a gap, lost += d;
 *      behind, inside the window: a number counted missing is 'reordered'
 *        (lost or missing_head -= 1), one already received a 'duplicate';
 *      behind, past the window: 'late' (lost can exceed the true loss by at
 *        most 'late').
 *    A number counted lost that leaves the window is also 'lost_final':
 *    nothing can take it back any more.
 *  - the end (a mark, shared.h): an END mark says how many frames the flow
 *    sent; the numbers from 'expected' up to that are 'lost_at_end', inside
 *    'lost' (a frame of them arriving after the mark takes its share back).
 *    A flow without one has an unknown end: the report says so, never a
 *    clean "lost 0".
 *  - time: the stamp's 24-bit send ticks are unwrapped per run, by the
 *    receive times' gaps, into send times on the generator's clock. The
 *    times between frames of a run (pacing, delay variation) hold whatever
 *    that clock is; the latency (receive - send) is figured only where a mark
 *    named the generator's clock and this sink reads it too (SEQTRACK_CLOCK_SAME), or
 *    both ends say theirs are synchronised copies of one (SEQTRACK_CLOCK_SYNCED).
 *  - runs: a run's books open at its first frame. At most SEQTRACK_RUNS_MAX
 *    are open per tracker, SEQTRACK_PROBATION_MAX of them on probation:
 *    runs that have shown fewer than SEQTRACK_PROMOTE frames and no mark. A
 *    new run that finds no room closes the oldest run on probation, in
 *    constant time and without allocating (its frames then count as 'stray':
 *    received, not checked), so a flood of one-frame runs pushes out only
 *    itself. A run off probation that must make room closes the one idle
 *    longest, or (none idle) the one with the fewest frames; closed books
 *    are final (every gap lost for good) and kept whole (SEQTRACK_DONE_MAX
 *    per tracker), beyond that folded into one record, never dropped. A
 *    frame of a run whose books were closed opens new books ('reopened'):
 *    its flows start from where the frame is, so what was lost between the
 *    pieces is not counted, and the report says so.
 *  - loss episodes (episodes.h): a gap opens one in its flow, with the send
 *    times of the frames on either side. It stays open, and a reordered frame
 *    inside it shrinks or splits it, until the flow's next gap or the books'
 *    report or close; then it joins the run's episodes. A reordered frame of
 *    an episode already closed is counted 'amended'.
 *  - memory: flows live in a per-run hash table (open addressing on the flow
 *    id), a run on probation has one flow inline; the tables of the open
 *    runs grow by at most SEQTRACK_FLOW_SLOTS_MAX slots beyond their first
 *    (one xdp-gen run's 65,535 flows take half of that). A frame of a new
 *    flow that finds no room is 'unplaced': never checked. Latency and |IPDV|
 *    histograms (about 38 KiB a pair) are allocated when a run leaves
 *    probation; before that its first latencies wait in the run. Per tracker
 *    the books stay under about 36 MiB whatever arrives (the struct 1.3 MiB,
 *    flows 16 MiB, 513 histogram pairs), and nothing is allocated for a frame
 *    that opens a run.
 */
#include <stdbool.h>
#include <linux/types.h>

#include "measure/clockid.h"
#include "measure/episodes.h"
#include "measure/hist.h"
#include "measure/jitter.h"
#include "pkt/stamp.h"

#define SEQTRACK_WINDOW 128
#define SEQTRACK_RUNS_MAX 256 /* runs with open books, per tracker */
#define SEQTRACK_PROBATION_MAX 32 /* of them, runs not yet shown to be a run */
#define SEQTRACK_PROMOTE 8 /* frames that take a run off probation (or any mark) */
#define SEQTRACK_DONE_MAX 256 /* closed runs kept whole, per tracker */
#define SEQTRACK_FLOW_SLOTS_MIN 16 /* a run's first flow table */
#define SEQTRACK_FLOW_SLOTS_MAX 262144 /* grown slots over all open runs' tables: 16 MiB */
#define SEQTRACK_IDLE_NS 1000000000ULL /* a run with no frame for this long is idle */
#define SEQTRACK_BURST_NS 100000ULL /* 100 us */
#define SEQTRACK_INDEX 1024 /* open runs' id index: a power of 2, at least 2 x RUNS_MAX */
#define SEQTRACK_CLOSED_IDS 4096 /* ids of closed runs remembered (a power of 2) */

struct seqtrack_counts {
	__u64 received; /* frames in the books, whatever their verdict below */
	__u64 lost; /* skipped and not (yet) seen, the end's too; can drop when reordered ones arrive */
	__u64 lost_final; /* of those, past the window or closed: no late frame takes them back */
	__u64 lost_at_end; /* of lost: after the last that arrived, up to the end mark's count */
	__u64 missing_head; /* before the first frame of a flow: not in lost */
	__u64 duplicates;
	__u64 reordered;
	__u64 late;
	__u64 unplaced; /* frames of the run, or of no run, that found no room: never checked */
	/* received but untimed (seqtrack_update_timed()): in no latency or jitter figure */
	__u64 untimed;
};

enum seqtrack_verdict {
	SEQ_FIRST, /* the first frame of a flow */
	SEQ_IN_ORDER,
	SEQ_GAP, /* ahead of expected; the gap counted lost */
	SEQ_REORDERED,
	SEQ_DUPLICATE,
	SEQ_LATE,
	SEQ_UNPLACED, /* no room for its run or its flow: not checked */
	SEQ_MARK, /* a mark, booked as such */
};

/* What a run's marks said of its clock, against this sink's. */
enum seqtrack_clock {
	SEQTRACK_CLOCK_UNKNOWN, /* no mark yet */
	SEQTRACK_CLOCK_SAME, /* one clock: the generator stamped one this sink reads: latency holds, error 0 */
	SEQTRACK_CLOCK_OTHER, /* a clock not this sink's: no latency (mk.why), the books hold */
	/* the same kind of clock on another host, both synchronised: latency within mk.sync_error_ns */
	SEQTRACK_CLOCK_SYNCED,
};

/* Why a run on SEQTRACK_CLOCK_OTHER has no latency. */
enum seqtrack_clock_why {
	SEQTRACK_WHY_NONE,
	SEQTRACK_WHY_MONOTONIC, /* another host's (or time namespace's) CLOCK_MONOTONIC */
	SEQTRACK_WHY_GEN_UNSYNCED, /* tai/realtime, the generator's clock not synchronised */
	SEQTRACK_WHY_SINK_UNSYNCED, /* tai/realtime, this sink's clock not synchronised */
	SEQTRACK_WHY_UNSYNCED, /* tai/realtime, neither clock synchronised */
};

/* Does a run on this clock state have a one-way latency? */
static inline bool seqtrack_clock_timed(unsigned int state)
{
	return state == SEQTRACK_CLOCK_SAME || state == SEQTRACK_CLOCK_SYNCED;
}

/* One flow's state: a slot of its run's hash table (64 bytes). */
struct seqtrack_flow {
	__u32 expected; /* highest seq received + 1 */
	__u32 first; /* the first frame's seq: the head missing before it */
	__u32 end; /* with SEQTRACK_FLOW_END: the END mark's frame count (low 32 bits) */
	__u16 key; /* the flow id */
	__u8 span; /* how far back the window is meaningful: 0 (unused) ..SEQTRACK_WINDOW */
	__u8 flags; /* SEQTRACK_FLOW_* */
	__u64 missing[SEQTRACK_WINDOW / 64]; /* bit b: seq expected-1-b counted missing */
	__u64 last_ts; /* send time of the frame at expected - 1 (the highest received) */
	/* the open loss episode: numbers ep_first.. (ep_frames of them, 0: none) */
	__u64 ep_before, ep_after; /* send times of the frames on either side */
	__u32 ep_first, ep_frames;
};

#define SEQTRACK_FLOW_USED 0x1
#define SEQTRACK_FLOW_END 0x2 /* an END mark named its count */
#define SEQTRACK_FLOW_NO_HEAD 0x4 /* books reopened: what came before is not ours to count */
#define SEQTRACK_FLOW_DATA 0x8 /* a data frame arrived (not only a mark) */
#define SEQTRACK_FLOW_HEAD 0x10 /* numbers before the first frame may still be in the window */

/* What the marks of a run said (merged over trackers: the most any saw). */
struct seqtrack_marks {
	__u64 received; /* marks booked */
	__u64 conflicts; /* END marks that disagreed with an earlier one: ignored */
	__u64 run_frames; /* the run's frame count, from an END mark; 0: none seen */
	__u32 nflows; /* the run's flow count, from any mark */
	__u32 flows_ended; /* flows whose END mark arrived */
	__u8 clock; /* enum xdpsg_clock the stamps are on */
	__u8 synced; /* the generator said its clock was synchronised */
	__u8 state; /* enum seqtrack_clock */
	__u8 start_seen;
	__u8 why; /* enum seqtrack_clock_why */
	__u32 sync_error_us;
	__s64 offset_ns; /* the generator's clock minus this sink's, at a mark (latency included) */
	/* SAME: 0; SYNCED: the two clocks' error bounds together; else unknown (0) */
	__u64 sync_error_ns;
};

#define SEQTRACK_EARLY 8 /* latencies kept in a run before its histograms exist */

struct seqtrack_run {
	__u32 id;
	struct seqtrack_counts c;
	struct seqtrack_marks mk;
	__u64 first_ts, last_ts; /* send times of the frames in the books (unwrapped) */
	__u64 first_rx, last_rx; /* their receive times */
	/* the newest frame's full send tick and its receive time, on the run's clock */
	__u64 anchor_tick, anchor_rx;
	__u64 shift; /* the run's clock minus the receive times' (clock_set.shift_ns) */
	__u64 burst_slot; /* current SEQTRACK_BURST_NS slot of send time */
	__u32 burst_n, burst_max; /* frames in it; the most in any */
	__u32 slots; /* size of flows[], a power of two; 0: the inline flow only */
	__u32 flows_seen; /* used slots */
	__u32 flows_data; /* of them, flows a data frame arrived on (not only a mark) */
	__u32 reopened; /* books of this id closed earlier in this tracker, then opened again */
	__u32 order; /* when the tracker opened these books: reports keep that order */
	__u16 prev, next; /* probation: the list in opening order (SEQTRACK_NONE ends it) */
	bool probation;
	__u8 nearly; /* latencies waiting in early[] */
	struct seqtrack_flow one; /* the flow of a run with one (slots 0) */
	struct seqtrack_flow *flows;
	struct hist *latency; /* and |IPDV| in the same block: NULL on probation */
	struct hist *ipdv; /* latency + 1 */
	__u64 early[SEQTRACK_EARLY]; /* transits (receive - send) before the histograms */
	__u8 early_timed; /* bit i: early[i] was timed */
	struct jitter jit;
	/* closed loss episodes (the open ones are in the flows): last, away from what each frame uses */
	struct episodes ep;
};

#define SEQTRACK_NONE 0xffff

/* The loss episode a frame found a gap before (SEQ_GAP), as it stood then. */
struct seqtrack_gap {
	__u32 first, frames; /* the numbers missing */
	__u64 outage_ns;
};

/* Owned by one thread (one queue). */
struct seqtrack {
	struct seqtrack_counts total; /* over all runs, kept as they change */
	struct hist_coarse live; /* latency of runs on this sink's clock, coarse, for export */
	struct clock_set clk; /* the clocks this sink can read a stamp's time on (clockid.h) */
	bool own_clock; /* every run is on this clock (the round trips of a generator's own frames) */
	unsigned int episodes_keep; /* the longest loss episodes a run keeps whole (episodes.h) */
	struct seqtrack_gap last_gap; /* of the last frame whose verdict was SEQ_GAP */
	__u64 opened; /* books ever opened (reopenings included) */
	__u64 closed; /* books closed to make room */
	__u64 marks; /* marks booked */
	__u64 stray; /* frames of runs closed while on probation: received, not checked */
	__u64 stray_runs;
	__u32 slots; /* flow slots of the open runs beyond their first tables */
	unsigned int nruns, last, ndone, nprobation;
	__u16 prob_head, prob_tail; /* probation list: oldest first */
	__u32 folded_runs; /* closed runs folded into 'folded' */
	struct seqtrack_run folded; /* their books together (id 0; c, times, latency) */
	struct hist *spare; /* a histogram pair kept for the next run that needs one */
	__u16 index[SEQTRACK_INDEX]; /* open run ids -> runs[] slot + 1; 0 empty */
	__u32 closed_ids[SEQTRACK_CLOSED_IDS]; /* ids of closed runs + 1 (0 empty), hashed */
	__u32 nclosed_ids;
	struct seqtrack_run runs[SEQTRACK_RUNS_MAX];
	struct seqtrack_run done[SEQTRACK_DONE_MAX]; /* closed books: flows freed */
};

/*
 * clock_id: this sink's receive clock, CLOCK_MONOTONIC (clockid.h's id);
 * seqtrack_clocks() adds the others. NULL and errno on error.
 */
struct seqtrack *seqtrack__create(__u64 clock_id);
/* Every clock a run may be stamped on, with the receive times as CLOCK_MONOTONIC. */
static inline void seqtrack_clocks(struct seqtrack *t, const struct clock_set *cs)
{
	t->clk = *cs;
}
void seqtrack__destroy(struct seqtrack *t);
/*
 * Every run these books will see was stamped on this process's own clock
 * (a generator timing its returns): their latency needs no mark.
 */
static inline void seqtrack_own_clock(struct seqtrack *t)
{
	t->own_clock = true;
}
/* Keep the n longest loss episodes of each run whole (at most EPISODES_MAX; default 16). */
static inline void seqtrack_episodes_keep(struct seqtrack *t, unsigned int n)
{
	t->episodes_keep = n < EPISODES_MAX ? n : EPISODES_MAX;
}
/* Forget every run and zero the counts. */
void seqtrack_reset(struct seqtrack *t);

/*
 * Of sent frames, those that never came back (xdp-gen --rtt), from the books
 * of what did: a duplicate is a frame come back twice, not another frame.
 */
static inline __u64 seqtrack_never_back(__u64 sent, __u64 received, __u64 duplicates)
{
	__u64 uniq = received > duplicates ? received - duplicates : 0;

	return sent > uniq ? sent - uniq : 0;
}

/*
 * One data frame received at now_ns (this sink's clock). Untimed (timed
 * false): now_ns is only an upper bound on when it arrived (the reader's
 * time, for a frame the receive-time sample skipped): it is booked and
 * checked, but is in no latency, jitter or live histogram figure.
 */
enum seqtrack_verdict seqtrack_update_timed(struct seqtrack *t, const struct stamp *st,
					    __u64 now_ns, bool timed);

static inline enum seqtrack_verdict seqtrack_update(struct seqtrack *t, const struct stamp *st,
						    __u64 now_ns)
{
	return seqtrack_update_timed(t, st, now_ns, true);
}

/* A mark (stamp_read()'s STAMP_MARK), received at now_ns: SEQ_MARK, or SEQ_UNPLACED. */
enum seqtrack_verdict seqtrack_mark(struct seqtrack *t, const struct stamp *st, __u64 now_ns);

const char *seqtrack_verdict_str(enum seqtrack_verdict v);
const char *seqtrack_clock_str(enum seqtrack_clock c);

/* A's books plus B's: received, lost, ... summed. */
void seqtrack_counts_merge(struct seqtrack_counts *into, const struct seqtrack_counts *from);

/* ---------------------------------------------------------------------------
 * Reports (seqtrack_sum.c): runs merged over trackers.
 */

/*
 * One run's books merged over trackers (several queues) and over the pieces a
 * reopening split them into: counts summed, times widened, bursts summed (an
 * upper bound when a run spans queues), marks as the most any tracker saw.
 */
struct seqtrack_summary {
	__u32 id;
	struct seqtrack_counts c;
	struct seqtrack_marks mk;
	__u64 first_ts, last_ts, first_rx, last_rx;
	__u64 burst_max;
	__u32 flows; /* flows seen (a flow seen again after a reopening counts twice) */
	__u32 flows_data; /* of them, flows a data frame of arrived */
	__u32 reopened; /* times its books were closed for room and opened again */
	struct hist_summary ipdv; /* |IPDV| over its pieces' histograms */
	double jitter_ns; /* RFC 3550 J: its pieces' J, weighted by their IPDV counts */
	/* loss episodes over its pieces: the closed ones, and those still open in their flows */
	struct episodes ep;
};

/*
 * Called once per run with its merged books and latency (an empty histogram
 * where the latency is not figured: mk.state is not SEQTRACK_CLOCK_SAME).
 */
typedef void (*seqtrack_run_fn)(const struct seqtrack_summary *s, const struct hist *lat,
				void *ctx);

/*
 * Every run any of the n trackers holds (open or closed), merged by id, in the
 * order their books were first opened (first receive time, then tracker).
 * Calls fn for each when fn is not NULL; returns how many runs, or -ENOMEM.
 */
int seqtrack_runs(struct seqtrack *const *trackers, unsigned int n, seqtrack_run_fn fn, void *ctx);

/*
 * The runs folded away over the n trackers: their books together into s (id
 * 0) and lat (when not NULL). Returns how many run records were folded (a
 * run folded on two queues counts twice).
 */
__u64 seqtrack_folded(struct seqtrack *const *trackers, unsigned int n, struct seqtrack_summary *s,
		      struct hist *lat);

/*
 * Every run's |IPDV| over the n trackers, folded ones too, into ipdv; their
 * RFC 3550 J weighted by IPDV counts into *jitter_ns.
 */
void seqtrack_ipdv_all(struct seqtrack *const *trackers, unsigned int n, struct hist *ipdv,
		       double *jitter_ns);

#endif
