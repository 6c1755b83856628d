/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_SEQTRACK_H
#define XDPSG_SEQTRACK_H

/*
 * What a sink makes of the stamps it reads: books per generator run, and in
 * each run per flow. One tracker per receive thread (single writer); the
 * books of several trackers are merged for reports.
 *
 * A frame can only ever touch the books of the run its stamp names, and only
 * when its claims are ones its sender could have made:
 *
 *  - send time: the 48-bit ts is completed from the sink's clock (same
 *    machine, CLOCK_MONOTONIC). A send time after the receive time is
 *    'ts_future'; one from before the sink started listening (less a second
 *    of slack) is 'ts_stale'. Neither changes the books or the latency.
 *  - sequence, per flow (serial-number arithmetic, RFC 1982, so the 32-bit
 *    wrap is seamless). The flow keeps 'expected' (last in-order seq + 1),
 *    the send time of its newest frame, and a SEQTRACK_WINDOW-frame window
 *    behind expected that remembers which numbers were counted lost:
 *      first frame of the flow: baseline (nothing before it is lost, the sink
 *        may start late);
 *      ahead by d >= 0: in order (d == 0) or a gap, lost += d; but only if the
 *        sender could have sent d more frames of this flow between the two
 *        send times (at most one per SEQTRACK_MIN_GAP_NS, plus
 *        SEQTRACK_SLACK_FRAMES for frames that share a send time) and the
 *        frame was not sent before the newest one; otherwise 'implausible';
 *      behind, inside the window: a number counted lost is 'reordered'
 *        (lost -= 1), one already received a 'duplicate';
 *      behind, past the window: 'late' (neither lost nor duplicates change,
 *        so lost can exceed the true loss by at most 'late'); but a frame
 *        behind expected whose send time is after the newest frame's cannot
 *        be an old frame of this flow: 'implausible'.
 *    An implausible frame is counted and changes nothing else.
 *    A number counted lost that leaves the window (expected moved more than
 *    SEQTRACK_WINDOW - 1 past it) is also 'lost_final': nothing can take it
 *    back any more, so lost_final never falls, and lost - lost_final are the
 *    gaps a late frame may still fill.
 *  - runs: a run's books are opened by the first frame of a new run id whose
 *    claims are accepted (a frame whose send time is rejected opens nothing:
 *    it is counted in the totals only, so a run that only ever made rejected
 *    claims holds no slot and no memory). At most SEQTRACK_RUNS_MAX runs
 *    have open books per tracker. When one more arrives, one is closed to
 *    make room: the one idle longest (no frame in its books for
 *    SEQTRACK_IDLE_NS), or, when none is idle, the one with the fewest frames
 *    in its books (then the one heard from least recently), so frames that
 *    each name a new run push out each other, not a run that has shown more.
 *    Closed books are finalised: kept whole (SEQTRACK_DONE_MAX per tracker)
 *    and reported with the rest; beyond that the closed run with the fewest
 *    frames is folded into one 'folded' record (counts and latency merged,
 *    the number of runs folded kept), never dropped. A frame of a run whose
 *    books were closed opens new books ('reopened' in its summary): its flows
 *    start from a new baseline, so what was lost around the reopening is not
 *    counted, and the report says so.
 *  - memory: flows live in a per-run hash table (open addressing on the flow
 *    id, so xdp-gen's consecutive flows never collide) grown by doubling at
 *    half load; the open runs' tables together grow by at most
 *    SEQTRACK_FLOW_SLOTS_MAX slots beyond their first SEQTRACK_FLOW_SLOTS_MIN
 *    (one xdp-gen run's 65,536 flows take half of that). A frame of a new flow that finds no room
 *    (after closing runs idle for SEQTRACK_IDLE_NS) is 'unplaced', in its
 *    run's books and the totals: the run's report then shows frames that were
 *    never checked. Per tracker (one per queue) that bounds the books at
 *    about 8 MiB of flows plus (SEQTRACK_RUNS_MAX + SEQTRACK_DONE_MAX + 2)
 *    pairs of histograms (latency and |IPDV|, about 38 KiB a pair): under
 *    28 MiB whatever arrives.
 *    Nothing is allocated for a frame whose claims were rejected.
 *
 * Each run also keeps its latency histogram (receive time - send time), its
 * first and last send and receive times, the most frames sent in one
 * SEQTRACK_BURST_NS window of send time (the generator's pacing), and its
 * delay variation (jitter.h) over its frames in the order the tracker got
 * them: a histogram of |IPDV| beside the latency's (counted in the bound
 * above) and RFC 3550's J.
 */
#include <stdbool.h>
#include <linux/types.h>

#include "hist.h"
#include "jitter.h"
#include "stamp.h"

#define SEQTRACK_WINDOW 128
#define SEQTRACK_FLOWS_MAX 65536 /* flow ids a stamp can name */
#define SEQTRACK_RUNS_MAX 256 /* runs with open books, per tracker */
#define SEQTRACK_DONE_MAX 256 /* closed runs kept whole, per tracker */
#define SEQTRACK_FLOW_SLOTS_MIN 16 /* a new run's flow table */
#define SEQTRACK_FLOW_SLOTS_MAX 262144 /* grown slots over all open runs' tables: 8 MiB */
#define SEQTRACK_IDLE_NS 1000000000ULL /* a run with no frame for this long is idle */
#define SEQTRACK_MIN_GAP_NS 1 /* no flow is sent faster than 1 Gpps */
#define SEQTRACK_SLACK_FRAMES 4096 /* frames that may share one send time (a batch) */
#define SEQTRACK_STALE_NS 1000000000ULL
#define SEQTRACK_BURST_NS 100000ULL /* 100 us */

struct seqtrack_counts {
	__u64 received; /* frames in the books, whatever their verdict below */
	__u64 lost; /* skipped and not (yet) seen; can drop when reordered ones arrive */
	__u64 lost_final; /* of those, past the window: no late frame can take them back */
	__u64 duplicates;
	__u64 reordered;
	__u64 late;
	__u64 implausible; /* a sequence claim its sender could not have made */
	__u64 ts_future; /* send time after the receive time */
	__u64 ts_stale; /* send time from before the sink started */
	__u64 unplaced; /* frames of the run, or of no run, that found no room: never checked */
	/*
	 * Received, not implausible, but untimed (seqtrack_update_timed()): in
	 * no latency or jitter figure. latency count + untimed = received -
	 * implausible.
	 */
	__u64 untimed;
};

enum seqtrack_verdict {
	SEQ_FIRST, /* baseline of a flow */
	SEQ_IN_ORDER,
	SEQ_GAP, /* ahead of expected; the gap counted lost */
	SEQ_REORDERED,
	SEQ_DUPLICATE,
	SEQ_LATE,
	SEQ_IMPLAUSIBLE,
	SEQ_TS_FUTURE,
	SEQ_TS_STALE,
	SEQ_UNPLACED, /* no room for its run or its flow: not checked */
};

/* One flow's state: a slot of its run's hash table (32 bytes). */
struct seqtrack_flow {
	__u32 expected;
	__u16 key; /* the flow id */
	__u8 used;
	__u8 span; /* how far back the window is meaningful: 1..SEQTRACK_WINDOW */
	__u64 newest_ts; /* send time of the frame that set 'expected' */
	__u64 missing[SEQTRACK_WINDOW / 64]; /* bit b: seq expected-1-b counted lost */
};

struct seqtrack_run {
	__u32 id;
	struct seqtrack_counts c;
	__u64 first_ts, last_ts; /* send times of the frames in the books */
	__u64 first_rx, last_rx; /* their receive times */
	__u64 burst_slot; /* current SEQTRACK_BURST_NS slot of send time */
	__u32 burst_n, burst_max; /* frames in it; the most in any */
	__u32 slots; /* size of flows[], a power of two; 0 once the books are closed */
	__u32 flows_seen; /* used slots */
	__u32 reopened; /* books of this id closed earlier in this tracker, then opened again */
	__u32 order; /* when the tracker opened these books: reports keep that order */
	struct seqtrack_flow *flows;
	struct hist *latency; /* and |IPDV| in the same block: */
	struct hist *ipdv; /* latency + 1 */
	struct jitter jit;
};

/* Owned by one thread (one queue). */
struct seqtrack {
	struct seqtrack_counts total; /* over all runs, kept as they change */
	struct hist_coarse live; /* every run's latency, coarse: for export while the run goes on */
	__u64 start_ns; /* when the sink started listening: older send times are stale */
	__u64 opened; /* books ever opened (reopenings included) */
	__u64 closed; /* books closed to make room */
	__u32 slots; /* flow slots of the open runs beyond their first tables */
	unsigned int nruns, last, ndone;
	__u32 folded_runs; /* closed runs folded into 'folded' */
	struct seqtrack_run folded; /* their books together (id 0; c, times, latency) */
	struct hist *spare; /* a histogram kept for the next run that opens */
	struct seqtrack_run runs[SEQTRACK_RUNS_MAX];
	struct seqtrack_run done[SEQTRACK_DONE_MAX]; /* closed books: flows freed */
};

/* start_ns: the sink's start, on the stamps' clock. NULL and errno on error. */
struct seqtrack *seqtrack__create(__u64 start_ns);
void seqtrack__destroy(struct seqtrack *t);
/* Forget every run and zero the counts. */
void seqtrack_reset(struct seqtrack *t);

/*
 * One stamped frame received at now_ns. Untimed (timed false): now_ns is only
 * an upper bound on when it arrived (the reader's time, for a frame the
 * receive-time sample skipped): it is booked and checked, but is in no
 * latency, jitter or live histogram figure.
 */
enum seqtrack_verdict seqtrack_update_timed(struct seqtrack *t, const struct stamp *st,
					    __u64 now_ns, bool timed);

static inline enum seqtrack_verdict seqtrack_update(struct seqtrack *t, const struct stamp *st,
						    __u64 now_ns)
{
	return seqtrack_update_timed(t, st, now_ns, true);
}
const char *seqtrack_verdict_str(enum seqtrack_verdict v);

/* A's books plus B's: received, lost, ... summed. */
void seqtrack_counts_merge(struct seqtrack_counts *into, const struct seqtrack_counts *from);

/*
 * One run's books merged over trackers (several queues) and over the pieces a
 * reopening split them into: counts summed, times widened, bursts summed (an
 * upper bound when a run spans queues).
 */
struct seqtrack_summary {
	__u32 id;
	struct seqtrack_counts c;
	__u64 first_ts, last_ts, first_rx, last_rx;
	__u64 burst_max;
	__u32 flows; /* flows seen (a flow seen again after a reopening counts twice) */
	__u32 reopened; /* times its books were closed for room and opened again */
	struct hist_summary ipdv; /* |IPDV| over its pieces' histograms */
	double jitter_ns; /* RFC 3550 J: its pieces' J, weighted by their IPDV counts */
};

/* Called once per run with its merged books and latency. */
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
