// SPDX-License-Identifier: GPL-2.0
#include <math.h>

#include "../../user/gen/pace.h"
#include "base/runtime.h"
#include "cli/params.h"
#include "test.h"

#define NS 1000000000ULL

/* Shares add up to the totals, differ by at most one, and idle only when zero. */
static void test_share_exact(void)
{
	static const __u64 counts[] = { 0, 1, 2, 3, 7, 1000, 1000001 };
	static const unsigned int threads[] = { 1, 2, 3, 8 };
	unsigned int c, t, i;

	for (c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		for (t = 0; t < sizeof(threads) / sizeof(threads[0]); t++) {
			__u64 sum_q = 0, sum_r = 0, lo = ~0ULL, hi = 0;
			unsigned int n = threads[t];

			for (i = 0; i < n; i++) {
				struct pace p;

				pace_share(&p, counts[c], counts[c] * 3, i, n);
				sum_q += p.quota;
				sum_r += p.rate;
				lo = p.quota < lo ? p.quota : lo;
				hi = p.quota > hi ? p.quota : hi;
				if (!ASSERT_EQ(p.idle, counts[c] && !p.quota,
					       "idle iff share is zero"))
					return;
			}
			if (!ASSERT_EQ_U64(sum_q, counts[c], "quotas add up to --count") ||
			    !ASSERT_EQ_U64(sum_r, counts[c] * 3, "rates add up to --rate") ||
			    !ASSERT_LE(hi - lo, 1, "quotas differ by at most one"))
				return;
		}
	}
}

/* Fewer packets than threads: the threads without a packet are idle, not unlimited. */
static void test_share_zero_is_idle(void)
{
	struct pace p;

	pace_share(&p, 1, 0, 1, 2);
	ASSERT_EQ_U64(p.quota, 0, "thread 1 of 2 gets no packet of 1");
	ASSERT_TRUE(p.idle, "so it is idle");
	pace_share(&p, 0, 1, 1, 2);
	ASSERT_TRUE(p.idle, "a zero share of the rate is idle too");
	pace_share(&p, 0, 0, 5, 8);
	ASSERT_FALSE(p.idle, "no count and no rate: unlimited");
}

static void test_budget_quota(void)
{
	struct pace p;
	__u64 due;

	pace_share(&p, 100, 0, 0, 1);
	ASSERT_EQ(pace_budget(&p, 0, 64, 0, &due), 64, "a full batch");
	ASSERT_EQ(pace_budget(&p, 64, 64, 0, &due), 36, "what is left");
	ASSERT_EQ(pace_budget(&p, 100, 64, 0, &due), 0, "nothing after the quota");
	ASSERT_EQ_U64(due, 0, "and nothing is due");
	ASSERT_TRUE(pace_done(&p, 100), "done at the quota");
	ASSERT_FALSE(pace_done(&p, 99), "not before");
	pace_share(&p, 0, 0, 0, 1);
	ASSERT_EQ(pace_budget(&p, 1ULL << 40, 32, 0, &due), 32, "unlimited: the batch");
	ASSERT_FALSE(pace_done(&p, 1ULL << 40), "unlimited is never done");
}

static void test_budget_rate(void)
{
	struct pace p;
	__u64 due;

	pace_share(&p, 0, 1000, 0, 1); /* one frame per millisecond */
	p.t0 = 5 * NS;
	ASSERT_EQ(pace_budget(&p, 0, 64, 5 * NS, &due), 0, "nothing due at t0");
	ASSERT_EQ_U64(due, 5 * NS + 1000000, "the first frame is due after 1 ms");
	ASSERT_EQ(pace_budget(&p, 0, 64, 5 * NS + 10000000, &due), 10, "10 due after 10 ms");
	ASSERT_EQ(pace_budget(&p, 10, 64, 5 * NS + 10000000, &due), 0, "none after sending them");
	ASSERT_EQ_U64(due, 5 * NS + 11000000, "the 11th at 11 ms");
	ASSERT_EQ(pace_budget(&p, 0, 64, 6 * NS, &due), 16, "a backlog goes a few at a time");
	ASSERT_EQ(pace_budget(&p, 0, 64, 4 * NS, &due), 0, "a clock before t0 sends nothing");
}

/* When frame k of a thread at 'rate' is due: the first ns with floor(t * rate / 1e9) >= k. */
static __u64 due_at(__u64 k, __u64 rate)
{
	return (__u64)(((unsigned __int128)k * NS + rate - 1) / rate);
}

/*
 * The schedule, to the nanosecond: a sender that comes back exactly when the
 * pacer says sends frame k at due_at(k) after t0, one at a time, never a
 * nanosecond early or late. A pacer 1% fast (or one frame in a million) fails
 * here; a check of "10 due after 10 ms" rounds that away.
 */
static void test_schedule_exact(void)
{
	static const __u64 rates[] = { 1, 3, 7, 999, 1000, 65537, 100000, 1000003, 14880952 };
	unsigned int r;

	for (r = 0; r < sizeof(rates) / sizeof(rates[0]); r++) {
		__u64 rate = rates[r], t0 = 5 * NS + 123, now = t0, sent = 0, due;
		__u64 frames = rate < 20000 ? rate : 20000;
		struct pace p;
		__u32 n;

		pace_share(&p, 0, rate, 0, 1);
		p.t0 = t0;
		while (sent < frames) {
			n = pace_budget(&p, sent, 64, now, &due);
			if (!n) {
				if (!ASSERT_EQ_U64(due, t0 + due_at(sent + 1, rate),
						   "the next frame is due at its first nanosecond"))
					return;
				now = due;
				continue;
			}
			if (!ASSERT_EQ(n, 1, "one frame at its due time") ||
			    !ASSERT_EQ_U64(now - t0, due_at(sent + 1, rate),
					   "sent at its due time"))
				return;
			pace_sent(&p, n);
			sent += n;
		}
	}
}

/*
 * In any elapsed time t a thread has sent exactly floor(t * rate / 1e9)
 * frames: probed every few frames' time (within the catch-up bucket), over
 * two seconds, for each thread of a rate split three ways.
 */
static void test_elapsed_exact(void)
{
	static const __u64 rates[] = { 1000, 99999, 1000001 };
	unsigned int r, i;

	for (r = 0; r < sizeof(rates) / sizeof(rates[0]); r++) {
		for (i = 0; i < 3; i++) {
			__u64 t0 = 7 * NS, t, sent = 0, due, rate;
			struct pace p;

			pace_share(&p, 0, rates[r], i, 3);
			rate = p.rate;
			p.t0 = t0;
			for (t = 0; t <= 2 * NS; t += 5 * NS / rate + 13) {
				__u64 want = (__u64)((unsigned __int128)t * rate / NS);
				__u32 n = pace_budget(&p, sent, 64, t0 + t, &due);

				pace_sent(&p, n);
				sent += n;
				if (!ASSERT_EQ_U64(sent, want, "frames sent by then"))
					return;
			}
		}
	}
}

/* Rate and quota together: the smaller limit wins. */
static void test_budget_rate_and_quota(void)
{
	struct pace p;
	__u64 due;

	pace_share(&p, 5, 1000, 0, 1);
	p.t0 = 0;
	ASSERT_EQ(pace_budget(&p, 0, 64, NS, &due), 5, "the quota caps a large backlog");
	ASSERT_EQ(pace_budget(&p, 3, 64, 4000000, &due), 1, "the rate caps a young run");
}

/* A long run at a high rate: the arithmetic neither overflows nor drifts. */
static void test_budget_long_run(void)
{
	struct pace p;
	__u64 due, day = 86400ULL * NS;

	pace_share(&p, 0, 1000000000ULL, 0, 1);
	p.t0 = 1;
	ASSERT_EQ(pace_budget(&p, day - 64, 64, day + 1, &due), 64, "a day at 1 Gpps");
	ASSERT_EQ(pace_budget(&p, day, 64, day + 1, &due), 0, "exactly on schedule");
	ASSERT_EQ_U64(due, day + 2, "the next one 1 ns later");
}

/*
 * A thread that was away catches up without a burst: at most the bucket's
 * depth at once (500 us of frames, at least 16), then no faster than twice
 * the rate, until it is back on schedule.
 */
static void test_catch_up(void)
{
	__u64 due, now = 10 * NS, sent = 0, t;
	unsigned int n, most = 0;
	struct pace p;

	pace_share(&p, 0, 1000000, 0, 1); /* 1 Mpps: depth 500 frames */
	p.t0 = now;
	now += 5000000; /* 5 ms away: 5000 frames behind */
	n = pace_budget(&p, sent, 2048, now, &due);
	ASSERT_EQ(n, 500, "the first burst is the depth");
	pace_sent(&p, n);
	sent += n;
	ASSERT_EQ(pace_budget(&p, sent, 2048, now, &due), 0, "then nothing at once");
	ASSERT_EQ_U64(due, now + 500, "the next after half the interval");
	/* Every 10 us: at most 20 frames' credit, so the backlog shrinks steadily. */
	for (t = 0; t < 100000; t += 10000) {
		n = pace_budget(&p, sent, 2048, now + 10000 + t, &due);
		pace_sent(&p, n);
		sent += n;
		most = n > most ? n : most;
	}
	ASSERT_LE(most, 20, "catching up at twice the rate");
	ASSERT_GE(most, 19, "but catching up");
	/* Far behind: the quota still caps what goes. */
	pace_share(&p, 5, 1000000, 0, 1);
	p.t0 = 0;
	ASSERT_EQ(pace_budget(&p, 0, 64, NS, &due), 5, "quota before depth");
}

/*
 * -d 5124095h is 1.8e19 ns: now + that wraps past 2^64 once the clock reads
 * more than 35 minutes, and must saturate instead. 'now' is a clock reading of
 * a machine up for a day, not this one's: a freshly booted one would not wrap.
 */
static void test_deadline_saturates(void)
{
	const char *why = NULL;
	__u64 d = 0, now = 86400ULL * 1000000000ULL;

	ASSERT_OK(params_parse_duration("5124095h", &d, &why), "parse 5124095h");
	ASSERT_TRUE(now + d < now, "the plain sum wraps (the bug)");
	ASSERT_EQ_U64(deadline_after(now, d), ~0ULL, "saturated deadline");
	ASSERT_TRUE(deadline_after(now, d) > now, "the deadline is in the future");
	ASSERT_EQ_U64(deadline_after(5, 7), 12, "small sums are exact");
	ASSERT_EQ_U64(deadline_after(~0ULL, 1), ~0ULL, "at the limit");
}

/*
 * --burst 64 every 1 ms: a sender that comes back when the pacer says sends
 * 64 frames at each burst's due time, none between; a sender late by three
 * bursts sends the late one at once and the next no sooner than half a gap
 * later, so no two bursts ever run into one.
 */
static void test_burst_schedule(void)
{
	struct pace_shape_opts so = { .burst = 64, .gap_ns = 1000000 };
	__u64 t0 = 7 * NS, now = t0, sent = 0, due, start = 0, prev = 0;
	unsigned int bursts = 0;
	struct pace p;
	__u32 n;

	pace_share(&p, 6400, 0, 0, 1);
	pace_shape(&p, &so, 0, 1);
	ASSERT_EQ_U64(p.rate, 64000, "average rate of the bursts");
	p.t0 = t0;
	while (sent < 6400) {
		n = pace_budget(&p, sent, 256, now, &due);
		if (!n) {
			if (!ASSERT_EQ_U64(sent % 64, 0, "waits only between bursts"))
				return;
			now = due;
			continue;
		}
		if (sent % 64 == 0) {
			if (!ASSERT_EQ(n, 64, "a whole burst at once") ||
			    !ASSERT_EQ_U64(now, t0 + (sent / 64) * 1000000ULL, "at its due time"))
				return;
			bursts++;
		}
		pace_sent(&p, n);
		sent += n;
	}
	ASSERT_EQ(bursts, 100, "100 bursts of 64");
	/*
	 * 3.5 gaps late: one burst at once, the next ones half a gap apart
	 * (4.0, 4.5, ... ms) until back on the schedule at 7 ms, then 8, 9.
	 */
	pace_share(&p, 0, 0, 0, 1);
	pace_shape(&p, &so, 0, 1);
	p.t0 = t0;
	sent = 0;
	now = t0 + 3500000;
	while (sent < 10 * 64) {
		n = pace_budget(&p, sent, 16, now, &due);
		if (!n) {
			now = due;
			continue;
		}
		if (sent % 64 == 0) {
			prev = start;
			start = now;
			if (prev &&
			    !ASSERT_GE(start - prev, 500000, "bursts half a gap apart at least"))
				return;
		}
		pace_sent(&p, n);
		sent += n;
	}
	ASSERT_EQ_U64(start, t0 + 9000000, "back on schedule: the tenth burst at 9 ms");
	/*
	 * A burst cut in two: 40 frames at 0, a pause, the other 24 at 1.2 ms.
	 * The next burst, due at 1 ms, waits half a gap after those 24 (1.7
	 * ms), so no 100 us holds more than one burst's frames.
	 */
	pace_share(&p, 0, 0, 0, 1);
	pace_shape(&p, &so, 0, 1);
	p.t0 = t0;
	ASSERT_EQ(pace_budget(&p, 0, 40, t0, &due), 40, "the first 40 of the burst");
	pace_sent(&p, 40);
	ASSERT_EQ(pace_budget(&p, 40, 256, t0 + 1200000, &due), 24, "the rest, late");
	pace_sent(&p, 24);
	ASSERT_EQ(pace_budget(&p, 64, 256, t0 + 1200001, &due), 0, "the next burst waits");
	ASSERT_EQ_U64(due, t0 + 1700000, "half a gap after the late tail");
	ASSERT_EQ(pace_budget(&p, 64, 256, due, &due), 64, "then goes whole");
	/* Two threads share a burst of 65: 33 and 32, due at the same times. */
	pace_share(&p, 0, 0, 1, 2);
	so.burst = 65;
	pace_shape(&p, &so, 1, 2);
	ASSERT_EQ_U64(p.burst, 32, "the second thread's share of the burst");
}

/*
 * --poisson: the gaps have the asked mean (within 1% over 200,000 on a fixed
 * seed), the same seed gives the same schedule, and a sender that comes back
 * when the pacer says sends each frame at its own due time.
 */
static void test_poisson_schedule(void)
{
	struct pace_shape_opts so = { .poisson = true, .seed = 42 };
	static __u64 first[2001];
	__u64 rng = 12345, sum = 0, t0 = 3 * NS, now, sent, due;
	double mean, var = 0, g;
	unsigned int i, run;
	struct pace p;
	__u32 n;

	for (i = 0; i < 200000; i++)
		sum += pace_exp_gap(&rng, 100000);
	mean = (double)sum / 200000;
	if (!ASSERT_TRUE(mean > 9900 && mean < 10100, "mean gap 10 us within 1%"))
		fprintf(stderr, "  mean gap %.1f ns\n", mean);
	for (run = 0; run < 2; run++) {
		pace_share(&p, 0, 100000, 0, 1);
		pace_shape(&p, &so, 0, 1);
		p.t0 = t0;
		for (now = t0, sent = 0; sent < 2001;) {
			n = pace_budget(&p, sent, 64, now, &due);
			if (!n) {
				if (!ASSERT_GE(due, now, "due in the future"))
					return;
				now = due;
				continue;
			}
			if (!ASSERT_EQ(n, 1, "one frame at its due time"))
				return;
			if (run == 0)
				first[sent] = now;
			else if (!ASSERT_EQ_U64(now, first[sent], "same seed, same schedule"))
				return;
			pace_sent(&p, n);
			sent += n;
		}
	}
	/* The schedule's own gaps: mean 10 us, and as spread as an exponential's (CV 1). */
	mean = (double)(first[2000] - first[0]) / 2000;
	for (i = 0; i < 2000; i++) {
		g = (double)(first[i + 1] - first[i]) - mean;
		var += g * g / 2000;
	}
	if (!ASSERT_TRUE(mean > 9500 && mean < 10500, "schedule's mean gap within 5%") ||
	    !ASSERT_TRUE(var > 0.8 * 0.8 * mean * mean && var < 1.2 * 1.2 * mean * mean,
			 "gaps spread like an exponential's (CV 0.8-1.2)"))
		fprintf(stderr, "  mean %.1f ns, sd %.1f ns\n", mean, sqrt(var));
	/* Late by 10 ms: everything due goes at once, at most a batch. */
	pace_share(&p, 0, 100000, 0, 1);
	pace_shape(&p, &so, 0, 1);
	p.t0 = t0;
	ASSERT_EQ(pace_budget(&p, 0, 64, t0 + 10000000, &due), 64, "a batch of what is due");
}

/*
 * The rate verdict counts n frames as n gaps: a 100-frame run spans 99 of
 * them. At 98% of 100 kpps (gaps of 10,204 ns) it fails, and at 98.5%,
 * which n / (n - 1) gaps read as 99.5%, too; at the rate and at 99.5% it
 * passes.
 */
static void test_reached_counts_every_gap(void)
{
	const __u64 rate = 100000;

	ASSERT_TRUE(pace_reached(100, 99 * 10000, rate), "100 frames at the rate");
	ASSERT_TRUE(pace_reached(100, 99 * 10050, rate), "at 99.5% of it");
	ASSERT_TRUE(!pace_reached(100, 99 * 10204, rate), "not at 98%");
	ASSERT_TRUE(!pace_reached(100, 99 * 10152, rate),
		    "not at 98.5% (n / (n - 1) gaps said 99.5%)");
	/* The edge: 99 frames 99 ms apart, the last's gap after: 99 in 100 ms of 1,000 pps. */
	ASSERT_TRUE(pace_reached(99, 99000000, 1000), "99% exactly");
	ASSERT_TRUE(!pace_reached(99, 99000001, 1000), "a nanosecond under 99%");
	ASSERT_TRUE(pace_reached(1, 0, rate), "one frame: no gap to judge");
	ASSERT_TRUE(!pace_reached(0, 0, rate), "no frames: not reached");
	ASSERT_TRUE(pace_reached(3000000, 1000000000ULL, 1000000),
		    "three times the rate is more than enough");
	/* The figure shown is the one judged: 100 frames at the rate read as the rate. */
	ASSERT_TRUE(pace_pps(100, 99 * 10000, rate) == 100000.0, "pps at the rate");
	ASSERT_TRUE(pace_pps(101, 1000000, 0) == 100000.0, "without a rate: n - 1 gaps");
	ASSERT_TRUE(pace_pps(1, 0, 0) == 0 && pace_pps(0, 0, rate) == 0, "nothing to time");
}

static const struct test_case cases[] = {
	TEST_CASE(share_exact),
	TEST_CASE(share_zero_is_idle),
	TEST_CASE(budget_quota),
	TEST_CASE(budget_rate),
	TEST_CASE(budget_rate_and_quota),
	TEST_CASE(budget_long_run),
	TEST_CASE(catch_up),
	TEST_CASE(deadline_saturates),
	TEST_CASE(schedule_exact),
	TEST_CASE(elapsed_exact),
	TEST_CASE(burst_schedule),
	TEST_CASE(poisson_schedule),
	TEST_CASE(reached_counts_every_gap),
};

TEST_MAIN("pace", cases)
