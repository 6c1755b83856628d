/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_JITTER_H
#define XDPSG_JITTER_H

/*
 * Delay variation of one stream of frames, in the order they arrive. A
 * frame's transit is its receive time minus its send time (its one-way delay;
 * the clocks need not agree, an offset cancels out). For each frame after the
 * first, D = transit - previous transit is:
 *
 *  - its IPDV (RFC 3393, the selection function "consecutive frames"); the
 *    caller records |D|, so its p50/p99 are of the magnitude: a stream whose
 *    delay swings up and down by x reads x whichever way it swings;
 *  - the input of RFC 3550's interarrival jitter, J += (|D| - J) / 16 (kept
 *    times 16 in integers, as RFC 3550 A.8 does), which weights the last
 *    sixteen or so frames most: what the stream's jitter was at its end.
 *
 * No allocation, single writer, a few instructions per frame.
 */
#include <stdbool.h>
#include <linux/types.h>

struct jitter {
	__u64 n; /* frames seen */
	__u64 last; /* the previous frame's transit */
	__u64 j16; /* RFC 3550 J, times 16 */
};

/* One frame's transit (ns). False for the first frame; else *ipdv = |D|. */
static inline bool jitter_update(struct jitter *j, __u64 transit, __u64 *ipdv)
{
	__s64 d = (__s64)(transit - j->last);

	j->last = transit;
	if (!j->n++)
		return false;
	*ipdv = d < 0 ? (__u64)-d : (__u64)d;
	/* (j16 + 8) >> 4 <= j16 for every j16 >= 0: never below zero. */
	j->j16 += *ipdv - ((j->j16 + 8) >> 4);
	return true;
}

/*
 * Two streams' J as one: weighted by their IPDV counts (the frames each J
 * was made of), in floating point, as j16 times a count can pass 2^64.
 */
static inline void jitter_merge(struct jitter *into, __u64 n_into, const struct jitter *from,
				__u64 n_from)
{
	if (n_into + n_from)
		into->j16 = (__u64)(((double)into->j16 * (double)n_into +
				     (double)from->j16 * (double)n_from) /
				    (double)(n_into + n_from));
	into->n += from->n;
}

/* RFC 3550 J in nanoseconds: 0 before two frames. */
static inline double jitter_ns(const struct jitter *j)
{
	return (double)j->j16 / 16.0;
}

#endif
