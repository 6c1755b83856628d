// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "base/json_writer.h"
#include "measure/hist.h"

void hist_init(struct hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

__u64 hist_bucket_lower(unsigned int i)
{
	unsigned int k;

	if (i < 2 * HIST_SUB)
		return i;
	k = (i >> HIST_SUB_BITS) + HIST_SUB_BITS - 1;
	return (__u64)((i & (HIST_SUB - 1)) + HIST_SUB) << (k - HIST_SUB_BITS);
}

__u64 hist_bucket_upper(unsigned int i)
{
	unsigned int k;

	if (i < 2 * HIST_SUB)
		return i;
	k = (i >> HIST_SUB_BITS) + HIST_SUB_BITS - 1;
	return hist_bucket_lower(i) + (1ULL << (k - HIST_SUB_BITS)) - 1;
}

__u64 hist_min(const struct hist *h)
{
	return h->count ? h->min : 0;
}

__u64 hist_max(const struct hist *h)
{
	return h->count ? h->max : 0;
}

double hist_mean(const struct hist *h)
{
	long double sum;

	if (!h->count)
		return 0;
	sum = (long double)h->sum_hi * 18446744073709551616.0L + (long double)h->sum_lo;
	return (double)(sum / h->count);
}

__u64 hist_percentile(const struct hist *h, double p)
{
	__u64 rank, seen = 0, v;
	unsigned int i;

	if (!h->count)
		return 0;
	if (p <= 0)
		return h->min;
	if (p >= 100)
		return h->max;
	/* The epsilon keeps 99.9% of 1000 at rank 999 despite binary fractions. */
	rank = (__u64)ceill((long double)p * h->count / 100.0L - 1e-9L);
	if (rank < 1)
		rank = 1;
	for (i = 0; i < HIST_BUCKETS; i++) {
		seen += h->buckets[i];
		if (seen >= rank)
			break;
	}
	if (i == HIST_BUCKETS)
		return h->max;
	v = hist_bucket_upper(i);
	if (v > h->max)
		v = h->max;
	if (v < h->min)
		v = h->min;
	return v;
}

void hist_summarize(const struct hist *h, struct hist_summary *out)
{
	out->count = h->count;
	out->min = hist_min(h);
	out->max = hist_max(h);
	out->mean = hist_mean(h);
	out->p50 = hist_percentile(h, 50);
	out->p90 = hist_percentile(h, 90);
	out->p99 = hist_percentile(h, 99);
	out->p999 = hist_percentile(h, 99.9);
}

void hist_merge(struct hist *into, const struct hist *from)
{
	unsigned int i;
	__u64 lo;

	if (!from->count)
		return;
	for (i = 0; i < HIST_BUCKETS; i++)
		into->buckets[i] += from->buckets[i];
	into->count += from->count;
	if (from->min < into->min)
		into->min = from->min;
	if (from->max > into->max)
		into->max = from->max;
	lo = into->sum_lo + from->sum_lo;
	into->sum_hi += from->sum_hi + (lo < into->sum_lo);
	into->sum_lo = lo;
	into->overflow += from->overflow;
}

int hist_write_csv(const struct hist *h, FILE *out)
{
	unsigned int i;

	fprintf(out, "lower_ns,upper_ns,count\n");
	for (i = 0; i < HIST_BUCKETS; i++) {
		if (!h->buckets[i])
			continue;
		fprintf(out, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
			(uint64_t)hist_bucket_lower(i), (uint64_t)hist_bucket_upper(i),
			(uint64_t)h->buckets[i]);
	}
	return ferror(out) ? -EIO : 0;
}

int hist_write_json(const struct hist *h, FILE *out)
{
	struct hist_summary s;
	const char *sep = "";
	unsigned int i;

	hist_summarize(h, &s);
	fprintf(out,
		"{\"count\":%" PRIu64 ",\"min\":%" PRIu64 ",\"max\":%" PRIu64
		",\"mean\":%.1f,\"p50\":%" PRIu64 ",\"p90\":%" PRIu64 ",\"p99\":%" PRIu64
		",\"p999\":%" PRIu64 ",\"buckets\":[",
		(uint64_t)s.count, (uint64_t)s.min, (uint64_t)s.max, s.mean, (uint64_t)s.p50,
		(uint64_t)s.p90, (uint64_t)s.p99, (uint64_t)s.p999);
	for (i = 0; i < HIST_BUCKETS; i++) {
		if (!h->buckets[i])
			continue;
		fprintf(out,
			"%s{\"lower_ns\":%" PRIu64 ",\"upper_ns\":%" PRIu64 ",\"count\":%" PRIu64
			"}",
			sep, (uint64_t)hist_bucket_lower(i), (uint64_t)hist_bucket_upper(i),
			(uint64_t)h->buckets[i]);
		sep = ",";
	}
	fprintf(out, "]}");
	return ferror(out) ? -EIO : 0;
}

const __u64 hist_coarse_bounds_ns[HIST_COARSE_BOUNDS] = {
	1000ULL,       2500ULL,	      5000ULL,	     10000ULL,	     25000ULL,	   50000ULL,
	100000ULL,     250000ULL,     500000ULL,     1000000ULL,     2500000ULL,   5000000ULL,
	10000000ULL,   25000000ULL,   50000000ULL,   100000000ULL,   250000000ULL, 500000000ULL,
	1000000000ULL, 2500000000ULL, 5000000000ULL, 10000000000ULL,
};

void hist_coarse_merge(struct hist_coarse *into, const struct hist_coarse *from)
{
	unsigned int i;

	into->count += from->count;
	into->sum += from->sum;
	for (i = 0; i <= HIST_COARSE_BOUNDS; i++)
		into->n[i] += from->n[i];
}

void hist_summary_json(struct jw *w, const char *key, const struct hist_summary *h)
{
	jw_obj(w, key);
	jw_u64(w, "count", h->count);
	jw_u64(w, "min", h->min);
	jw_u64(w, "p50", h->p50);
	jw_u64(w, "p90", h->p90);
	jw_u64(w, "p99", h->p99);
	jw_u64(w, "p999", h->p999);
	jw_u64(w, "max", h->max);
	jw_double(w, "mean", h->mean);
	jw_end_obj(w);
}
