/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_HIST_H
#define XDPSG_HIST_H

/*
 * Latency histogram, HDR-style log-linear, in nanoseconds. Values below 128
 * have a bucket each; above, every power of two [2^k, 2^(k+1)) is split into
 * 64 equal sub-buckets of width 2^(k-6). Buckets cover 0 .. 2^42-1 ns (about
 * 73 minutes); larger values land in the last bucket and in 'overflow'.
 * Fixed memory (about 19 KiB), no allocation, single writer.
 *
 * Precision: min, max, count and mean are exact. A percentile is reported as
 * the upper (inclusive) bound of the bucket that holds it, clamped to
 * [min, max]: never below the true value v, and at most v/64 (1.6%) above it;
 * exact below 128 ns.
 *
 * Percentile p (0..100) is the value at rank ceil(p/100 * count) (1-based)
 * in the sorted recorded values: the smallest v with at least p% of the
 * values <= v.
 */
#include <stdio.h>
#include <linux/types.h>

#define HIST_SUB_BITS 6
#define HIST_SUB (1U << HIST_SUB_BITS)
#define HIST_MAX_BITS 42
#define HIST_BUCKETS ((HIST_MAX_BITS - HIST_SUB_BITS + 1) * HIST_SUB)

struct hist {
	__u64 count;
	__u64 min, max;
	__u64 sum_lo, sum_hi; /* 128-bit sum for the mean */
	__u64 overflow; /* values >= 2^HIST_MAX_BITS */
	__u64 buckets[HIST_BUCKETS];
};

struct hist_summary {
	__u64 count, min, max, p50, p90, p99, p999;
	double mean;
};

void hist_init(struct hist *h);

struct jw;
/* A summary as the JSON object "key": {count, min, p50, p90, p99, p999, max, mean}. */
void hist_summary_json(struct jw *w, const char *key, const struct hist_summary *h);

static inline unsigned int hist_index(__u64 v)
{
	unsigned int k;

	if (v < HIST_SUB)
		return (unsigned int)v;
	if (v >> HIST_MAX_BITS)
		return HIST_BUCKETS - 1;
	k = 63 - (unsigned int)__builtin_clzll(v);
	return ((k - HIST_SUB_BITS) << HIST_SUB_BITS) + (unsigned int)(v >> (k - HIST_SUB_BITS));
}

static inline void hist_record(struct hist *h, __u64 v)
{
	h->buckets[hist_index(v)]++;
	h->count++;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->sum_lo += v;
	if (h->sum_lo < v)
		h->sum_hi++;
	if (v >> HIST_MAX_BITS)
		h->overflow++;
}

/* Bounds of bucket i, both inclusive. */
__u64 hist_bucket_lower(unsigned int i);
__u64 hist_bucket_upper(unsigned int i);

/* 0 when empty. */
__u64 hist_min(const struct hist *h);
__u64 hist_max(const struct hist *h);
double hist_mean(const struct hist *h);
__u64 hist_percentile(const struct hist *h, double p);
void hist_summarize(const struct hist *h, struct hist_summary *out);

/* into += from, as if every value of 'from' had been recorded into 'into'. */
void hist_merge(struct hist *into, const struct hist *from);

/*
 * A coarse histogram for live export: counts between fixed bounds in 1-2.5-5
 * steps from 1 us to 10 s (the bounds of an OpenMetrics export), exact at
 * each bound, with the count and sum. 25 words: cheap to copy out every
 * batch, and a few compares per value.
 */
#define HIST_COARSE_BOUNDS 22
extern const __u64 hist_coarse_bounds_ns[HIST_COARSE_BOUNDS];

struct hist_coarse {
	__u64 count, sum; /* sum in ns: 2^64 ns is 584 years of latency */
	__u64 n[HIST_COARSE_BOUNDS + 1]; /* n[i]: in (bound i-1, bound i]; the last: above all */
};

static inline void hist_coarse_record(struct hist_coarse *h, __u64 v)
{
	unsigned int lo = 0, hi = HIST_COARSE_BOUNDS, i;

	/* The first bound at or above v (HIST_COARSE_BOUNDS: above all), in five steps. */
	while (lo < hi) {
		i = (lo + hi) / 2;
		if (v > hist_coarse_bounds_ns[i])
			lo = i + 1;
		else
			hi = i;
	}
	i = lo;
	h->n[i]++;
	h->count++;
	h->sum += v;
}

/* into += from. */
void hist_coarse_merge(struct hist_coarse *into, const struct hist_coarse *from);

/*
 * Non-empty buckets for plotting. CSV: a "lower_ns,upper_ns,count" header
 * line, then one line per bucket. JSON: one object, the summary fields plus
 * "buckets": [{"lower_ns":..,"upper_ns":..,"count":..},...], no newline.
 * Bounds are inclusive. Return 0 or -EIO.
 */
int hist_write_csv(const struct hist *h, FILE *out);
int hist_write_json(const struct hist *h, FILE *out);

#endif
