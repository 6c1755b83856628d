// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <stddef.h>

#include "measure/hist.h"
#include "test.h"

static __u64 rng = 0x243f6a8885a308d3ULL;

static __u64 rnd64(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double rnd_unit(void) /* (0, 1) */
{
	return ((rnd64() >> 11) + 0.5) / 9007199254740992.0;
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

static void test_bucket_layout(void)
{
	unsigned int i;

	ASSERT_EQ(HIST_BUCKETS, 2368, "bucket count");
	ASSERT_EQ(hist_bucket_lower(0), 0, "first bucket starts at 0");
	ASSERT_EQ_U64(hist_bucket_upper(HIST_BUCKETS - 1), (1ULL << 42) - 1,
		      "last bucket ends at 2^42-1");
	for (i = 0; i < HIST_BUCKETS; i++) {
		__u64 lo = hist_bucket_lower(i), hi = hist_bucket_upper(i);

		if (!ASSERT_EQ(hist_index(lo), i, "lower bound maps to its bucket") ||
		    !ASSERT_EQ(hist_index(hi), i, "upper bound maps to its bucket") ||
		    !ASSERT_LE((hi - lo + 1) * 64, lo < 128 ? 64 : lo,
			       "width at most 1/64 of lower"))
			return;
		if (i + 1 < HIST_BUCKETS &&
		    !ASSERT_EQ_U64(hist_bucket_lower(i + 1), hi + 1, "buckets are contiguous"))
			return;
		if (i < 128 && !ASSERT_EQ(hi, lo, "exact below 128"))
			return;
	}
	ASSERT_EQ(hist_index(1ULL << 50), HIST_BUCKETS - 1, "huge values in the last bucket");
}

static void test_empty_and_small(void)
{
	static struct hist h;
	struct hist_summary s;
	__u64 v;

	hist_init(&h);
	hist_summarize(&h, &s);
	ASSERT_EQ(s.count, 0, "empty count");
	ASSERT_EQ(s.min, 0, "empty min");
	ASSERT_EQ(s.max, 0, "empty max");
	ASSERT_EQ(s.p99, 0, "empty p99");
	for (v = 1; v <= 100; v++)
		hist_record(&h, v);
	ASSERT_EQ(hist_percentile(&h, 50), 50, "p50 of 1..100 exact");
	ASSERT_EQ(hist_percentile(&h, 90), 90, "p90 exact");
	ASSERT_EQ(hist_percentile(&h, 99), 99, "p99 exact");
	ASSERT_EQ(hist_percentile(&h, 99.9), 100, "p99.9 of 100 values is the max");
	ASSERT_EQ(hist_percentile(&h, 0), 1, "p0 is the min");
	ASSERT_EQ(hist_percentile(&h, 100), 100, "p100 is the max");
	ASSERT_TRUE(hist_mean(&h) == 50.5, "mean exact");

	hist_init(&h);
	hist_record(&h, 1000000);
	ASSERT_EQ(hist_percentile(&h, 50), 1000000, "one value: clamped to it exactly");
	hist_record(&h, 1ULL << 50);
	ASSERT_EQ(h.overflow, 1, "overflow counted");
	ASSERT_EQ_U64(hist_max(&h), 1ULL << 50, "max exact beyond the range");
	ASSERT_EQ_U64(hist_percentile(&h, 100), 1ULL << 50, "p100 beyond the range");
}

enum dist { UNIFORM, LOGNORMAL, EXPONENTIAL, BIMODAL };

static __u64 draw(enum dist d)
{
	double u1, u2, z;

	switch (d) {
	case UNIFORM:
		return rnd64() % 2000000;
	case LOGNORMAL: /* median ~ 20 us, long right tail */
		u1 = rnd_unit();
		u2 = rnd_unit();
		z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
		return (__u64)exp(log(20000.0) + 1.5 * z);
	case EXPONENTIAL:
		return (__u64)(-log(rnd_unit()) * 5000);
	case BIMODAL:
		return rnd64() % 3 ? 50 + rnd64() % 40 : 3000000000ULL + rnd64() % 1000000000ULL;
	}
	return 0;
}

static void check_dist(enum dist d, const char *name)
{
	enum { N = 100000 };
	static const double ps[] = { 0.1, 1, 10, 25, 50, 75, 90, 99, 99.9, 99.99 };
	static __u64 v[N];
	static struct hist h;
	long double sum = 0;
	unsigned int i;

	hist_init(&h);
	for (i = 0; i < N; i++) {
		v[i] = draw(d);
		sum += v[i];
		hist_record(&h, v[i]);
	}
	qsort(v, N, sizeof(v[0]), cmp_u64);
	ASSERT_EQ_U64(hist_min(&h), v[0], name);
	ASSERT_EQ_U64(hist_max(&h), v[N - 1], name);
	ASSERT_EQ_U64(h.count, N, name);
	ASSERT_TRUE(fabs(hist_mean(&h) - (double)(sum / N)) <= 1e-9 * (double)(sum / N), name);
	for (i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		__u64 rank = (__u64)ceill((long double)ps[i] * N / 100.0L - 1e-9L);
		__u64 ref = v[rank - 1], got = hist_percentile(&h, ps[i]);

		if (!ASSERT_GE(got, ref, name) || !ASSERT_LE(got - ref, ref / 64, name)) {
			fprintf(stderr, "  %s p%g: got %llu, sorted reference %llu\n", name, ps[i],
				(unsigned long long)got, (unsigned long long)ref);
			break;
		}
	}
}

static void test_uniform(void)
{
	check_dist(UNIFORM, "uniform: percentile within 1/64 above the sorted reference");
}

static void test_lognormal(void)
{
	check_dist(LOGNORMAL, "log-normal: percentile within 1/64 above the sorted reference");
}

static void test_exponential(void)
{
	check_dist(EXPONENTIAL, "exponential: percentile within 1/64 above the sorted reference");
}

static void test_bimodal(void)
{
	check_dist(BIMODAL, "bimodal ns/seconds: percentile within 1/64 above the reference");
}

static void test_merge(void)
{
	static struct hist all, part[4], merged;
	struct hist_summary a, m;
	unsigned int i;

	hist_init(&all);
	hist_init(&merged);
	for (i = 0; i < 4; i++)
		hist_init(&part[i]);
	for (i = 0; i < 50000; i++) {
		__u64 v = draw(i % 2 ? LOGNORMAL : BIMODAL);

		hist_record(&all, v);
		hist_record(&part[i % 3], v); /* part[3] stays empty */
	}
	for (i = 0; i < 4; i++)
		hist_merge(&merged, &part[i]);
	ASSERT_EQ(memcmp(all.buckets, merged.buckets, sizeof(all.buckets)), 0,
		  "merged buckets equal recording everything in one");
	hist_summarize(&all, &a);
	hist_summarize(&merged, &m);
	ASSERT_EQ_U64(m.count, a.count, "merged count");
	ASSERT_EQ_U64(m.min, a.min, "merged min");
	ASSERT_EQ_U64(m.max, a.max, "merged max");
	ASSERT_EQ_U64(m.p50, a.p50, "merged p50");
	ASSERT_EQ_U64(m.p999, a.p999, "merged p99.9");
	ASSERT_TRUE(m.mean == a.mean, "merged mean");

	/* The 128-bit sum carries. */
	hist_init(&all);
	hist_init(&merged);
	hist_record(&all, UINT64_MAX);
	hist_record(&merged, UINT64_MAX);
	hist_merge(&all, &merged);
	ASSERT_EQ(all.sum_hi, 1, "sum carried into the high word");
	ASSERT_TRUE(hist_mean(&all) == (double)UINT64_MAX, "mean of two huge values");
}

static void test_export(void)
{
	static struct hist h;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	__u64 total = 0, lo, hi, n;
	char *line, *save = NULL;
	unsigned int lines = 0;

	hist_init(&h);
	hist_record(&h, 5);
	hist_record(&h, 5);
	hist_record(&h, 1000);
	hist_record(&h, 123456789);
	f = open_memstream(&buf, &len);
	if (!ASSERT_TRUE(f, "memstream"))
		return;
	ASSERT_OK(hist_write_csv(&h, f), "write csv");
	fclose(f);
	ASSERT_TRUE(!strncmp(buf, "lower_ns,upper_ns,count\n5,5,2\n1000,1007,1\n", 41),
		    "CSV header and first buckets");
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (lines++ == 0)
			continue;
		if (!ASSERT_EQ(sscanf(line, "%llu,%llu,%llu", &lo, &hi, &n), 3, "CSV line parses"))
			break;
		ASSERT_LE(lo, hi, "lower <= upper");
		total += n;
	}
	ASSERT_EQ(lines, 4, "header + 3 non-empty buckets");
	ASSERT_EQ(total, 4, "CSV counts add up");
	free(buf);

	buf = NULL;
	f = open_memstream(&buf, &len);
	if (!ASSERT_TRUE(f, "memstream"))
		return;
	ASSERT_OK(hist_write_json(&h, f), "write json");
	fclose(f);
	ASSERT_TRUE(!strncmp(buf, "{\"count\":4,\"min\":5,\"max\":123456789,", 35), "JSON head");
	ASSERT_TRUE(strstr(buf, "\"p50\":5,") != NULL, "JSON p50");
	ASSERT_TRUE(strstr(buf, "\"buckets\":[{\"lower_ns\":5,\"upper_ns\":5,\"count\":2},"
				"{\"lower_ns\":1000,\"upper_ns\":1007,\"count\":1},") != NULL,
		    "JSON buckets");
	ASSERT_TRUE(len > 2 && !strcmp(buf + len - 2, "]}"), "JSON closed");
	free(buf);
}

static const struct test_case cases[] = {
	TEST_CASE(bucket_layout), TEST_CASE(empty_and_small), TEST_CASE(uniform),
	TEST_CASE(lognormal),	  TEST_CASE(exponential),     TEST_CASE(bimodal),
	TEST_CASE(merge),	  TEST_CASE(export),
};

TEST_MAIN("hist", cases)
