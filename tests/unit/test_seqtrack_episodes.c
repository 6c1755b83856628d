// SPDX-License-Identifier: GPL-2.0
/*
 * Loss episodes in the books (episodes.h, seqtrack_episodes.c): one gap, a gap
 * that reordered frames shrink, split or fill, the longest kept whole, a
 * frame of an episode already closed, what is no episode (before a flow's
 * first frame, after its last), and episodes of one run on two trackers.
 */
#include <stddef.h>
#include <stdlib.h>

#include "measure/seqtrack.h"
#include "test.h"

/* Frames 1 us apart from T0: a gap of n numbers is an outage of n us. */
#define T0 10000000000ULL
#define NOW (T0 + 900000000ULL)
#define US 1000ULL
#define TICK 128ULL /* a stamp's time resolution: send times are within half of it */

static __u64 ts_of(__u32 seq)
{
	return T0 + (__u64)seq * US;
}

static enum seqtrack_verdict feed(struct seqtrack *t, __u32 run, __u16 flow, __u32 seq)
{
	struct stamp st = { .run = run, .flow = flow, .seq = seq, .ticks = stamp_ticks(ts_of(seq)) };

	return seqtrack_update(t, &st, NOW);
}

static void feed_range(struct seqtrack *t, __u32 run, __u16 flow, __u32 from, __u32 to)
{
	__u32 s;

	for (s = from; s < to; s++)
		feed(t, run, flow, s);
}

struct got {
	struct episodes ep;
	struct seqtrack_counts c;
	unsigned int runs;
};

static void take(const struct seqtrack_summary *s, const struct hist *lat, void *ctx)
{
	struct got *g = ctx;

	(void)lat;
	g->ep = s->ep;
	g->c = s->c;
	g->runs++;
}

static struct got summary(struct seqtrack **t, unsigned int n)
{
	struct got g = { 0 };

	seqtrack_runs(t, n, take, &g);
	return g;
}

static bool near(__u64 a, __u64 b)
{
	return a + TICK >= b && b + TICK >= a;
}

static void test_one_gap(void)
{
	struct seqtrack *t = seqtrack__create(1);
	struct episode e[EPISODES_MAX];
	struct got g;

	if (!ASSERT_TRUE(t, "create"))
		return;
	feed_range(t, 1, 3, 0, 400);
	feed_range(t, 1, 3, 450, 1000);
	g = summary(&t, 1);
	ASSERT_EQ(g.ep.count, 1, "one episode");
	ASSERT_EQ(g.ep.frames, 50, "its frames");
	ASSERT_EQ(g.c.lost, 50, "the books' lost");
	/* 399 and 450 are 51 us apart; less one interval (1 us): 50 us. */
	ASSERT_TRUE(near(g.ep.max_ns, 50 * US), "outage 50 us");
	ASSERT_EQ(g.ep.total_ns, g.ep.max_ns, "total = the one");
	ASSERT_EQ(g.ep.max_flow, 3, "worst flow");
	if (ASSERT_EQ(episodes_sorted(&g.ep, e), 1, "kept whole")) {
		ASSERT_EQ(e[0].first, 400, "first missing");
		ASSERT_EQ(e[0].frames, 50, "frames");
		ASSERT_TRUE(near(e[0].at_ns, ts_of(399)), "at: the frame before");
	}
	seqtrack__destroy(t);
}

/* 100..109 missing; then 100 (front), 109 (back) and 105 (middle) arrive. */
static void test_reordered_shrink_and_split(void)
{
	struct seqtrack *t = seqtrack__create(1);
	struct episode e[EPISODES_MAX];
	struct got g;

	if (!ASSERT_TRUE(t, "create"))
		return;
	feed_range(t, 1, 0, 0, 100);
	feed_range(t, 1, 0, 110, 120);
	ASSERT_EQ(feed(t, 1, 0, 100), SEQ_REORDERED, "front");
	ASSERT_EQ(feed(t, 1, 0, 109), SEQ_REORDERED, "back");
	ASSERT_EQ(feed(t, 1, 0, 105), SEQ_REORDERED, "middle");
	feed_range(t, 1, 0, 120, 200);
	g = summary(&t, 1);
	ASSERT_EQ(g.c.lost, 7, "lost: 101..104, 106..108");
	ASSERT_EQ(g.ep.count, 2, "split in two");
	ASSERT_EQ(g.ep.frames, 7, "their frames = lost");
	ASSERT_EQ(g.ep.amended, 0, "nothing amended");
	if (ASSERT_EQ(episodes_sorted(&g.ep, e), 2, "both kept")) {
		/* 100 to 105: 5 us less 1; 105 to 109: 4 us less 1. */
		ASSERT_EQ(e[0].first, 101, "the longer first");
		ASSERT_EQ(e[0].frames, 4, "4 frames");
		ASSERT_TRUE(near(e[0].outage_ns, 4 * US), "4 us");
		ASSERT_EQ(e[1].first, 106, "then");
		ASSERT_EQ(e[1].frames, 3, "3 frames");
		ASSERT_TRUE(near(e[1].outage_ns, 3 * US), "3 us");
	}
	seqtrack__destroy(t);
}

static void test_refilled_gap_is_none(void)
{
	struct seqtrack *t = seqtrack__create(1);
	struct got g;

	if (!ASSERT_TRUE(t, "create"))
		return;
	feed_range(t, 1, 0, 0, 200);
	feed_range(t, 1, 0, 202, 210);
	feed(t, 1, 0, 201);
	feed(t, 1, 0, 200);
	feed_range(t, 1, 0, 210, 300);
	g = summary(&t, 1);
	ASSERT_EQ(g.c.lost, 0, "nothing lost");
	ASSERT_EQ(g.ep.count, 0, "no episode");
	ASSERT_EQ(g.ep.frames, 0, "no frames");
	seqtrack__destroy(t);
}

/* 20 gaps of 1..20 numbers, keeping 4: the 4 longest, the counts of all. */
static void test_keeps_the_longest(void)
{
	struct seqtrack *t = seqtrack__create(1);
	struct episode e[EPISODES_MAX];
	__u32 seq = 0, k, n;
	struct got g;

	if (!ASSERT_TRUE(t, "create"))
		return;
	seqtrack_episodes_keep(t, 4);
	/* Mixed order of lengths: 11, 2, 13, 4, ... so the shortest kept goes now and then. */
	for (k = 1; k <= 20; k++) {
		__u32 len = k % 2 ? k + 10 > 20 ? k - 10 : k + 10 : k;

		feed_range(t, 1, 0, seq, seq + 200);
		seq += 200 + len;
	}
	feed_range(t, 1, 0, seq, seq + 200);
	g = summary(&t, 1);
	ASSERT_EQ(g.ep.count, 20, "all counted");
	ASSERT_EQ(g.ep.frames, 210, "1 + ... + 20 frames");
	ASSERT_EQ(g.c.lost, 210, "= lost");
	ASSERT_TRUE(near(g.ep.max_ns, 20 * US), "the longest: 20 us");
	ASSERT_TRUE(g.ep.total_ns + 20 * TICK >= 210 * US && g.ep.total_ns <= 210 * US + 20 * TICK,
		    "total 210 us");
	n = episodes_sorted(&g.ep, e);
	if (ASSERT_GE(n, 4, "at least the 4 longest kept")) {
		for (k = 0; k < 4; k++)
			ASSERT_EQ(e[k].frames, 20 - k, "longest first");
	}
	seqtrack__destroy(t);
}

/* Gap A, then gap B within the window: A closes; a frame of A arriving now is amended. */
static void test_amended_after_close(void)
{
	struct seqtrack *t = seqtrack__create(1);
	struct got g;

	if (!ASSERT_TRUE(t, "create"))
		return;
	feed_range(t, 1, 0, 0, 10);
	feed_range(t, 1, 0, 13, 20);
	feed_range(t, 1, 0, 22, 30);
	ASSERT_EQ(feed(t, 1, 0, 11), SEQ_REORDERED, "a frame of the first gap, late");
	g = summary(&t, 1);
	ASSERT_EQ(g.c.lost, 4, "lost: 10, 12, 20, 21");
	ASSERT_EQ(g.ep.count, 2, "two episodes");
	ASSERT_EQ(g.ep.amended, 1, "one frame came after its episode closed");
	ASSERT_EQ(g.ep.frames - g.ep.amended, g.c.lost, "frames - amended = lost");
	seqtrack__destroy(t);
}

/* Before a flow's first frame and after its last (its END mark's count): no episode. */
static void test_head_and_tail_are_none(void)
{
	struct seqtrack *t = seqtrack__create(1);
	struct stamp st = { .run = 1, .flow = XDPSG_MARK_FLOW };
	struct got g;

	if (!ASSERT_TRUE(t, "create"))
		return;
	feed_range(t, 1, 0, 5, 90);
	st.mark = (struct xdpsg_mark){
		.kind = XDPSG_MARK_END, .flow = 0, .flow_frames = 100, .nflows = 1
	};
	ASSERT_EQ(seqtrack_mark(t, &st, NOW), SEQ_MARK, "END: 100 frames");
	g = summary(&t, 1);
	ASSERT_EQ(g.c.missing_head, 5, "0..4 missing before the first");
	ASSERT_EQ(g.c.lost_at_end, 10, "90..99 after the last");
	ASSERT_EQ(g.ep.count, 0, "no episode");
	seqtrack__destroy(t);
}

/* One run's flows on two trackers (two queues): their episodes add up. */
static void test_two_trackers(void)
{
	struct seqtrack *t[2] = { seqtrack__create(1), seqtrack__create(1) };
	struct got g;

	if (!ASSERT_TRUE(t[0] && t[1], "create"))
		goto out;
	feed_range(t[0], 7, 0, 0, 100);
	feed_range(t[0], 7, 0, 130, 200);
	feed_range(t[1], 7, 1, 0, 100);
	feed_range(t[1], 7, 1, 110, 200);
	g = summary(t, 2);
	ASSERT_EQ(g.runs, 1, "one run");
	ASSERT_EQ(g.ep.count, 2, "an episode on each");
	ASSERT_EQ(g.ep.frames, 40, "30 + 10");
	ASSERT_EQ(g.ep.max_flow, 0, "flow 0 the worst");
	ASSERT_TRUE(near(g.ep.max_ns, 30 * US), "30 us");
out:
	seqtrack__destroy(t[0]);
	seqtrack__destroy(t[1]);
}

/* The outages' histogram counts every episode, kept whole or not, at its bound. */
static void test_buckets(void)
{
	struct episodes e = { 0 };
	struct episode x = { .frames = 1 };
	__u64 n = 0;
	unsigned int i;

	x.outage_ns = 100000; /* at the first bound: in its bucket */
	episodes_add(&e, &x, 1);
	x.outage_ns = 100001;
	episodes_add(&e, &x, 1);
	x.outage_ns = 50 * 1000000ULL;
	episodes_add(&e, &x, 1);
	x.outage_ns = 60 * 1000000000ULL; /* above the last bound */
	episodes_add(&e, &x, 1);
	ASSERT_EQ(e.buckets[0], 1, "100 us: le 100 us");
	ASSERT_EQ(e.buckets[1], 1, "just above: le 1 ms");
	ASSERT_EQ(episode_bounds_ns[5], 50000000ULL, "the sixth bound is 50 ms");
	ASSERT_EQ(e.buckets[5], 1, "50 ms: le 50 ms");
	ASSERT_EQ(e.buckets[EPISODE_BOUNDS], 1, "60 s: above them all");
	for (i = 0; i <= EPISODE_BOUNDS; i++)
		n += e.buckets[i];
	ASSERT_EQ(n, e.count, "every episode in a bucket");
	ASSERT_EQ(e.nlong, 1, "one kept whole");
	episodes_merge(&e, &e, 1);
	ASSERT_EQ(e.buckets[EPISODE_BOUNDS], 2, "merged: summed");
}

static const struct test_case cases[] = {
	TEST_CASE(buckets),
	TEST_CASE(one_gap),
	TEST_CASE(reordered_shrink_and_split),
	TEST_CASE(refilled_gap_is_none),
	TEST_CASE(keeps_the_longest),
	TEST_CASE(amended_after_close),
	TEST_CASE(head_and_tail_are_none),
	TEST_CASE(two_trackers),
};

TEST_MAIN("seqtrack_episodes", cases)
