/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_PACE_H
#define XDPSG_PACE_H

/*
 * A sending thread's share of --count and --rate, and when its next frames
 * are due. Shares are exact: over n threads they add up to the totals asked
 * for, so a run sends exactly --count frames at exactly --rate on average.
 * One struct pace per thread, used by that thread only after pace_share().
 */
#include <stdbool.h>
#include <linux/types.h>

struct pace {
	__u64 quota; /* frames to send; 0: no limit */
	__u64 rate; /* frames per second; 0: no limit */
	__u64 t0; /* CLOCK_MONOTONIC ns when sending starts: the rate's origin */
	bool idle; /* the share of --count or --rate is zero: send nothing */
	/*
	 * Behind schedule (the thread was not running), frames catch up no
	 * faster than twice the rate, and at most 'depth' at once: a bucket
	 * of credit in ns << PACE_FP, a frame costing 'cost'.
	 */
	__u64 cost, depth, credit, last_ns;
	/*
	 * Shapes (pace_shape()). --burst: 'burst' frames back to back, a
	 * burst due every 'gap' ns from t0; one late begins no sooner than
	 * half a gap after the last frames of the one before went
	 * ('burst_last'), so two bursts never run into one, even when one was
	 * cut in two by a full ring or a pause.
	 * --poisson: each frame due an exponential gap (mean 1 / rate) after
	 * the one before; 'next_ns' is when the next is due, 'rng' draws gaps.
	 */
	__u64 burst, gap, burst_left, burst_last;
	bool poisson;
	__u64 next_ns, rng;
};

struct pace_shape_opts {
	__u64 burst; /* frames per burst over all threads; 0: no bursts */
	__u64 gap_ns; /* from one burst's start to the next */
	bool poisson;
	__u64 seed; /* for --poisson's gaps: the same seed gives the same schedule */
};

#define PACE_FP 10

/* Thread i of n takes its share of count and rate (0 = unlimited). */
void pace_share(struct pace *p, __u64 count, __u64 rate, unsigned int i, unsigned int n);

/*
 * After pace_share(): thread i of n takes its shape, its share of the burst
 * (the threads' bursts add up to o->burst, all due at once). A burst sets
 * p->rate to its average (at least 1), so rate-based callers see a paced
 * thread. A thread whose share of the burst is zero is idle.
 */
void pace_shape(struct pace *p, const struct pace_shape_opts *o, unsigned int i, unsigned int n);

/* --poisson: the next gap in ns, exponential with mean 1e9 / p->rate, from p->rng. */
__u64 pace_exp_gap(__u64 *rng, __u64 rate);

/* The quota is used up (never, without one). */
static inline bool pace_done(const struct pace *p, __u64 sent)
{
	return p->quota && sent >= p->quota;
}

/*
 * How many frames may go now, at most 'batch', given 'sent' so far: what is
 * left of the quota, the frames the rate has made due since t0, and what the
 * catch-up bucket allows. When none may go, *due_ns is when the next one may
 * (0 if it is the quota that ended). Tell pace_sent() what went.
 */
__u32 pace_budget(struct pace *p, __u64 sent, __u32 batch, __u64 now, __u64 *due_ns);
void pace_sent(struct pace *p, __u32 n);

/*
 * Wait for due_ns. Spinning (the caller loops back at once when it is near)
 * sends each frame closest to its time but keeps a CPU busy whatever the
 * rate; sleeping until it is due costs CPU in proportion to the rate, and
 * frames due while the thread wakes up go together (at 100 kpps, a few).
 */
void pace_wait(__u64 due_ns, bool spin);

/*
 * A rate was reached: frames sent from the first to the last span_ns apart
 * came at 99% or more of rate (frames per second). n frames take n gaps, the
 * last one's after it too: span_ns covers n - 1 of them, and the last is
 * counted at the rate asked. False with no frames; true with one.
 */
bool pace_reached(__u64 frames, __u64 span_ns, __u64 rate);

/*
 * The rate frames came at, span_ns from the first to the last, as
 * pace_reached() judges it: with a rate asked, the last frame's gap at that
 * rate; without, n - 1 gaps over the span. 0 when there is nothing to time.
 */
double pace_pps(__u64 frames, __u64 span_ns, __u64 rate);

#endif
