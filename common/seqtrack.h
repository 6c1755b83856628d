/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_SEQTRACK_H
#define XDPSG_SEQTRACK_H

#include <stdbool.h>
#include <linux/types.h>

#include "shared.h"

/*
 * Sequence tracking, per flow, with serial-number arithmetic (RFC 1982) so
 * 32-bit wrap-around is seamless. For each flow the tracker keeps 'expected'
 * (last in-order seq + 1) and a SEQTRACK_WINDOW-packet window behind it that
 * remembers which sequence numbers were counted lost. For a stamped packet
 * of a known flow (received += 1):
 *
 *  - first packet of the flow, or of a new run for it: baseline, expected =
 *    seq + 1. Nothing before it counts as lost (the sink may start late).
 *  - d = seq - expected (signed 32-bit) >= 0: in order (d == 0) or a gap;
 *    lost += d, expected = seq + 1. The d skipped numbers are marked lost
 *    in the window.
 *  - seq behind expected by b = expected - 1 - seq, and b inside the window
 *    (b < SEQTRACK_WINDOW and not before the flow's baseline):
 *      marked lost -> reordered += 1, lost -= 1, the mark cleared;
 *      otherwise   -> duplicates += 1 (it was received before).
 *  - behind by more than the window, or before the baseline: late += 1.
 *    The tracker cannot tell a duplicate from a very late packet there, so
 *    neither lost nor duplicates change: lost can exceed the true loss by at
 *    most 'late'.
 *  - a gap of 2^31 or more looks like a step back (serial arithmetic).
 *
 * Runs: every generator start picks a new run id. A packet whose run differs
 * from the tracker's current one starts a new run (restarts += 1, except for
 * the very first run seen) and each flow is re-baselined when it is next seen
 * in the new run: no loss or duplicates across a restart. Stragglers from the
 * run just replaced count as late, not as another restart.
 *
 * Flow ids at or above the tracker's flow count go to bad_flow.
 */
#define SEQTRACK_WINDOW 128
#define SEQTRACK_FLOWS_MAX 65536

struct seqtrack_counts {
	__u64 received; /* stamped packets of known flows, whatever their verdict */
	__u64 lost; /* skipped and not (yet) seen; can drop when reordered ones arrive */
	__u64 duplicates;
	__u64 reordered;
	__u64 late;
	__u64 restarts;
	__u64 bad_flow;
};

enum seqtrack_verdict {
	SEQ_FIRST, /* baseline of a flow */
	SEQ_IN_ORDER,
	SEQ_GAP, /* ahead of expected; the gap counted lost */
	SEQ_REORDERED,
	SEQ_DUPLICATE,
	SEQ_LATE,
	SEQ_BAD_FLOW,
};

struct seqtrack_flow {
	__u32 expected;
	__u16 run;
	__u8 valid;
	__u8 span; /* how far back the window is meaningful: 1..SEQTRACK_WINDOW */
	__u64 missing[SEQTRACK_WINDOW / 64]; /* bit b: seq expected-1-b counted lost */
};

/* Owned by one thread (one queue); merge the counts of several. */
struct seqtrack {
	struct seqtrack_counts counts;
	__u32 nflows;
	__u16 run, prev_run;
	bool have_run, have_prev;
	struct seqtrack_flow *flows;
};

/* nflows 1..SEQTRACK_FLOWS_MAX (0 means SEQTRACK_FLOWS_MAX). NULL and errno on error. */
struct seqtrack *seqtrack__create(__u32 nflows);
void seqtrack__destroy(struct seqtrack *t);
/* Forget every flow and zero the counts. */
void seqtrack_reset(struct seqtrack *t);
enum seqtrack_verdict seqtrack_update(struct seqtrack *t, const struct xdpsg_stamp *st);
const char *seqtrack_verdict_str(enum seqtrack_verdict v);

/*
 * Sum over queues. restarts takes the maximum: every queue that gets traffic
 * sees the same restart.
 */
void seqtrack_counts_merge(struct seqtrack_counts *into, const struct seqtrack_counts *from);

#endif
