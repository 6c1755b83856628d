/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_EPISODES_H
#define XDPSG_EPISODES_H

/*
 * Loss episodes: how long traffic stopped. An episode is a run of
 * consecutive sequence numbers of one flow that never arrived, between two
 * frames that did. Its outage is the send-time gap between those two frames
 * less one frame interval (the gap over the numbers in it plus one): the time
 * during which frames were sent and lost. A blackhole of 50 ms in a stream of
 * evenly spaced frames has an outage of 50 ms, whatever the rate.
 *
 * Per run, the books keep every episode's count and frames, the outages'
 * total and longest, and the 'keep' longest whole (at most EPISODES_MAX), so
 * their memory is fixed whatever arrives. Numbers missing before a flow's
 * first frame or after its last one are no episode: nothing bounds them
 * (they are seqtrack's missing_head and lost_at_end).
 */
#include <stdbool.h>
#include <linux/types.h>

#define EPISODES_MAX 64 /* the longest episodes a run can keep whole */
#define EPISODES_KEEP 16 /* how many it keeps by default */
#define EPISODE_BOUNDS 12 /* the outages' histogram: its bounds (episode_bounds_ns) */

/* 100 us, 1 ms, 5 ms, 10, 20, 50, 100, 200, 500 ms, 1 s, 5 s, 30 s: convergence times. */
extern const __u64 episode_bounds_ns[EPISODE_BOUNDS];

struct episode {
	__u64 at_ns; /* send time of the last frame before it, on the run's clock */
	__u64 outage_ns;
	__u32 first; /* its first missing sequence number */
	__u32 frames; /* numbers missing */
	__u16 flow;
};

struct episodes {
	__u64 count; /* episodes */
	__u64 frames; /* numbers missing in them */
	__u64 total_ns; /* their outages summed (flows' outages at once each count) */
	__u64 max_ns; /* the longest */
	/* frames that arrived after their episode was closed (taken from no episode) */
	__u64 amended;
	/* outages by episode_bounds_ns: [i] above bound i - 1, at or below bound i; the last above all */
	__u64 buckets[EPISODE_BOUNDS + 1];
	__u16 max_flow; /* the flow of the longest */
	__u8 nlong; /* entries in longest[] */
	struct episode longest[EPISODES_MAX]; /* unordered; the shortest goes first */
};

/*
 * The outage of an episode of 'frames' numbers between frames sent at
 * before_ns and after_ns: the gap less one frame interval, the interval being
 * the gap over frames + 1.
 */
static inline __u64 episode_outage(__u64 before_ns, __u64 after_ns, __u32 frames)
{
	__u64 gap = after_ns > before_ns ? after_ns - before_ns : 0;

	return gap - gap / ((__u64)frames + 1);
}

/* One episode into e, kept whole if it is among the 'keep' longest. */
void episodes_add(struct episodes *e, const struct episode *x, unsigned int keep);

/* B's episodes into A: counts summed, the 'keep' longest of both kept. */
void episodes_merge(struct episodes *a, const struct episodes *b, unsigned int keep);

/*
 * The episodes kept whole, longest first (then by flow and sequence number),
 * into out[] (room for EPISODES_MAX); returns how many.
 */
unsigned int episodes_sorted(const struct episodes *e, struct episode *out);

#endif
