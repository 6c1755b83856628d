/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_STAMP_H
#define XDPSG_STAMP_H

/*
 * The sink's side of the stamp: finding it in a frame, and tracking per-flow
 * sequence numbers into received / lost / duplicates / reordered / late.
 * Writing it is pkt_stamp_write() / pkt_gen_write() in pkt.h; latency
 * histograms are in hist.h.
 */
#include <stdbool.h>
#include <linux/types.h>

#include "shared.h"

/*
 * Parse Ethernet (one 802.1Q tag tolerated), IPv4 (options honoured, no
 * fragments) or IPv6 (no extension headers), UDP, then the stamp at the start
 * of the UDP payload. Fills out with host-order fields and returns 0 if the
 * frame carries a stamp; -ENOENT for a foreign frame (not UDP, payload too
 * short for a stamp, wrong magic); -EINVAL for a truncated one (headers claim
 * more than the frame holds). The sink counts both as "foreign".
 */
int stamp_read(const void *frame, unsigned int len, struct xdpsg_stamp *out);

/*
 * Sequence tracking, per flow, with serial-number arithmetic (RFC 1982) so
 * 32-bit wrap-around is seamless. For each flow the tracker keeps 'expected'
 * (last in-order seq + 1) and a STAMP_WINDOW-packet window behind it that
 * remembers which sequence numbers were counted lost. For a stamped packet
 * of a known flow (received += 1):
 *
 *  - first packet of the flow, or of a new run for it: baseline, expected =
 *    seq + 1. Nothing before it counts as lost (the sink may start late).
 *  - d = seq - expected (signed 32-bit) >= 0: in order (d == 0) or a gap;
 *    lost += d, expected = seq + 1. The d skipped numbers are marked lost
 *    in the window.
 *  - seq behind expected by b = expected - 1 - seq, and b inside the window
 *    (b < STAMP_WINDOW and not before the flow's baseline):
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
#define STAMP_WINDOW 128
#define STAMP_FLOWS_MAX 65536

struct stamp_counts {
	__u64 received; /* stamped packets of known flows, whatever their verdict */
	__u64 lost; /* skipped and not (yet) seen; can drop when reordered ones arrive */
	__u64 duplicates;
	__u64 reordered;
	__u64 late;
	__u64 restarts;
	__u64 bad_flow;
};

enum stamp_verdict {
	STAMP_FIRST, /* baseline of a flow */
	STAMP_IN_ORDER,
	STAMP_GAP, /* ahead of expected; the gap counted lost */
	STAMP_REORDERED,
	STAMP_DUPLICATE,
	STAMP_LATE,
	STAMP_BAD_FLOW,
};

struct stamp_flow_state {
	__u32 expected;
	__u16 run;
	__u8 valid;
	__u8 span; /* how far back the window is meaningful: 1..STAMP_WINDOW */
	__u64 missing[STAMP_WINDOW / 64]; /* bit b: seq expected-1-b counted lost */
};

/* Owned by one thread (one queue); merge the counts of several. */
struct stamp_tracker {
	struct stamp_counts counts;
	__u32 nflows;
	__u16 run, prev_run;
	bool have_run, have_prev;
	struct stamp_flow_state *flows;
};

/* nflows 1..STAMP_FLOWS_MAX (0 means STAMP_FLOWS_MAX). NULL and errno on error. */
struct stamp_tracker *stamp_tracker__create(__u32 nflows);
void stamp_tracker__destroy(struct stamp_tracker *t);
/* Forget every flow and zero the counts. */
void stamp_tracker_reset(struct stamp_tracker *t);
enum stamp_verdict stamp_tracker_update(struct stamp_tracker *t, const struct xdpsg_stamp *st);
const char *stamp_verdict_str(enum stamp_verdict v);

/*
 * Sum over queues. restarts takes the maximum: every queue that gets traffic
 * sees the same restart.
 */
void stamp_counts_merge(struct stamp_counts *into, const struct stamp_counts *from);

#endif
