// SPDX-License-Identifier: GPL-2.0
#include <stddef.h>

#include "seqtrack.h"
#include "test.h"

static struct xdpsg_stamp S(__u16 run, __u16 flow, __u32 seq) {
	struct xdpsg_stamp st = { .magic = XDPSG_STAMP_MAGIC, .run = run, .flow = flow, .seq = seq };

	return st;
}

static enum seqtrack_verdict
feed(struct seqtrack *t, __u16 run, __u16 flow, __u32 seq)
{
	struct xdpsg_stamp st = S(run, flow, seq);

	return seqtrack_update(t, &st);
}

#define COUNTS_EQ(t, rx, lo, du, re, la, rs)                         \
	do {                                                         \
		ASSERT_EQ((t)->counts.received, rx, "received");     \
		ASSERT_EQ((t)->counts.lost, lo, "lost");             \
		ASSERT_EQ((t)->counts.duplicates, du, "duplicates"); \
		ASSERT_EQ((t)->counts.reordered, re, "reordered");   \
		ASSERT_EQ((t)->counts.late, la, "late");             \
		ASSERT_EQ((t)->counts.restarts, rs, "restarts");     \
	} while (0)

static void test_in_order(void)
{
	struct seqtrack *t = seqtrack__create(4);
	__u32 i;

	if (!ASSERT_TRUE(t, "create"))
		return;
	ASSERT_EQ(feed(t, 1, 0, 0), SEQ_FIRST, "first packet is the baseline");
	for (i = 1; i < 1000; i++)
		if (!ASSERT_EQ(feed(t, 1, 0, i), SEQ_IN_ORDER, "in order"))
			break;
	COUNTS_EQ(t, 1000, 0, 0, 0, 0, 0);
	seqtrack__destroy(t);
}

static void test_gap(void)
{
	struct seqtrack *t = seqtrack__create(4);
	__u32 i;

	if (!ASSERT_TRUE(t, "create"))
		return;
	for (i = 0; i < 10; i++)
		feed(t, 1, 0, i);
	ASSERT_EQ(feed(t, 1, 0, 15), SEQ_GAP, "jump ahead");
	for (i = 16; i < 20; i++)
		feed(t, 1, 0, i);
	COUNTS_EQ(t, 15, 5, 0, 0, 0, 0);
	/* A gap far beyond the window is still counted exactly. */
	ASSERT_EQ(feed(t, 1, 0, 20 + 100000), SEQ_GAP, "long gap");
	ASSERT_EQ(t->counts.lost, 100005, "lost after a long gap");
	seqtrack__destroy(t);
}

static void test_duplicate(void)
{
	struct seqtrack *t = seqtrack__create(4);
	__u32 i;

	if (!ASSERT_TRUE(t, "create"))
		return;
	for (i = 0; i < 10; i++)
		feed(t, 1, 0, i);
	ASSERT_EQ(feed(t, 1, 0, 9), SEQ_DUPLICATE, "repeat of the last");
	ASSERT_EQ(feed(t, 1, 0, 5), SEQ_DUPLICATE, "repeat of an older one");
	ASSERT_EQ(feed(t, 1, 0, 5), SEQ_DUPLICATE, "and again");
	ASSERT_EQ(feed(t, 1, 0, 0), SEQ_DUPLICATE, "repeat of the baseline");
	ASSERT_EQ(feed(t, 1, 0, 10), SEQ_IN_ORDER, "stream continues");
	COUNTS_EQ(t, 15, 0, 4, 0, 0, 0);
	seqtrack__destroy(t);
}

static void test_reorder(void)
{
	struct seqtrack *t = seqtrack__create(4);
	__u32 i;

	if (!ASSERT_TRUE(t, "create"))
		return;
	feed(t, 1, 0, 0);
	feed(t, 1, 0, 1);
	ASSERT_EQ(feed(t, 1, 0, 3), SEQ_GAP, "3 before 2");
	ASSERT_EQ(t->counts.lost, 1, "2 provisionally lost");
	ASSERT_EQ(feed(t, 1, 0, 2), SEQ_REORDERED, "2 arrives late");
	ASSERT_EQ(feed(t, 1, 0, 2), SEQ_DUPLICATE, "2 again is a duplicate");
	feed(t, 1, 0, 4);
	COUNTS_EQ(t, 6, 0, 1, 1, 0, 0);

	/* 100 then 5..99 backwards: all inside the window. */
	ASSERT_EQ(feed(t, 1, 1, 4), SEQ_FIRST, "flow 1 baseline");
	feed(t, 1, 1, 100);
	ASSERT_EQ(t->counts.lost, 95, "95 provisionally lost");
	for (i = 99; i >= 5; i--)
		if (!ASSERT_EQ(feed(t, 1, 1, i), SEQ_REORDERED, "reordered"))
			break;
	ASSERT_EQ(t->counts.lost, 0, "nothing lost in the end");
	ASSERT_EQ(t->counts.reordered, 96, "reordered total");
	seqtrack__destroy(t);
}

/* The window edge: 127 behind is still classified, 128 behind is late. */
static void test_window_edge(void)
{
	struct seqtrack *t = seqtrack__create(1);
	__u32 i;

	if (!ASSERT_TRUE(t, "create"))
		return;
	feed(t, 1, 0, 0);
	feed(t, 1, 0, 201); /* 1..200 lost */
	ASSERT_EQ(t->counts.lost, 200, "gap of 200");
	ASSERT_EQ(feed(t, 1, 0, 201 - 127), SEQ_REORDERED, "127 behind: in the window");
	ASSERT_EQ(feed(t, 1, 0, 201 - 128), SEQ_LATE, "128 behind: late");
	ASSERT_EQ(feed(t, 1, 0, 0), SEQ_LATE, "long ago: late (duplicate or not)");
	COUNTS_EQ(t, 5, 199, 0, 1, 2, 0);
	seqtrack__destroy(t);

	/* A lost mark carried across the window's 64-bit word boundary one step at a time. */
	t = seqtrack__create(2);
	if (!ASSERT_TRUE(t, "create"))
		return;
	feed(t, 1, 0, 0);
	feed(t, 1, 0, 2);
	for (i = 3; i <= 100; i++)
		feed(t, 1, 0, i);
	ASSERT_EQ(feed(t, 1, 0, 1), SEQ_REORDERED, "99 behind, after 98 single shifts");
	ASSERT_EQ(feed(t, 1, 0, 50), SEQ_DUPLICATE, "received one, 50 behind");
	COUNTS_EQ(t, 102, 0, 1, 1, 0, 0);
	/* ... and in one shift of 64 or more. */
	feed(t, 1, 1, 0);
	feed(t, 1, 1, 2);
	ASSERT_EQ(feed(t, 1, 1, 72), SEQ_GAP, "gap of 69, shift of 70");
	ASSERT_EQ(feed(t, 1, 1, 1), SEQ_REORDERED, "71 behind, after one long shift");
	ASSERT_EQ(feed(t, 1, 1, 2), SEQ_DUPLICATE, "received one, 70 behind");
	ASSERT_EQ(feed(t, 1, 1, 40), SEQ_REORDERED, "one of the gap");
	COUNTS_EQ(t, 108, 68, 2, 3, 0, 0);
	seqtrack__destroy(t);

	/* Before the baseline: late, never a negative loss. */
	t = seqtrack__create(1);
	if (!ASSERT_TRUE(t, "create"))
		return;
	feed(t, 1, 0, 100);
	ASSERT_EQ(feed(t, 1, 0, 99), SEQ_LATE, "before the baseline");
	ASSERT_EQ(feed(t, 1, 0, 100), SEQ_DUPLICATE, "baseline repeated");
	feed(t, 1, 0, 101);
	ASSERT_EQ(feed(t, 1, 0, 99), SEQ_LATE, "still before the baseline");
	COUNTS_EQ(t, 5, 0, 1, 0, 2, 0);
	seqtrack__destroy(t);
}

static void test_wrap(void)
{
	struct seqtrack *t = seqtrack__create(2);
	__u32 s;

	if (!ASSERT_TRUE(t, "create"))
		return;
	for (s = 0xfffffff0; s != 0x10; s++)
		if (!ASSERT_TRUE(feed(t, 1, 0, s) <= SEQ_IN_ORDER, "in order across 2^32"))
			break;
	COUNTS_EQ(t, 32, 0, 0, 0, 0, 0);
	feed(t, 1, 1, 0xfffffffe);
	ASSERT_EQ(feed(t, 1, 1, 1), SEQ_GAP, "gap across the wrap");
	ASSERT_EQ(t->counts.lost, 2, "0xffffffff and 0 lost");
	ASSERT_EQ(feed(t, 1, 1, 0xffffffff), SEQ_REORDERED, "reorder across the wrap");
	ASSERT_EQ(feed(t, 1, 1, 0), SEQ_REORDERED, "reorder of 0");
	ASSERT_EQ(feed(t, 1, 1, 0xfffffffe), SEQ_DUPLICATE, "duplicate across the wrap");
	ASSERT_EQ(t->counts.lost, 0, "nothing lost");
	seqtrack__destroy(t);
}

static void test_restart(void)
{
	struct seqtrack *t = seqtrack__create(2);
	__u32 i;

	if (!ASSERT_TRUE(t, "create"))
		return;
	for (i = 0; i < 10; i++) {
		feed(t, 0x1111, 0, i);
		feed(t, 0x1111, 1, 1000 + i);
	}
	/* New run: sequence numbers start over. */
	ASSERT_EQ(feed(t, 0x2222, 0, 0), SEQ_FIRST, "new run re-baselines flow 0");
	ASSERT_EQ(feed(t, 0x2222, 1, 0), SEQ_FIRST, "and flow 1");
	for (i = 1; i < 5; i++) {
		feed(t, 0x2222, 0, i);
		feed(t, 0x2222, 1, i);
	}
	COUNTS_EQ(t, 30, 0, 0, 0, 0, 1);
	ASSERT_EQ(feed(t, 0x1111, 0, 10), SEQ_LATE, "straggler of the old run");
	ASSERT_EQ(t->counts.restarts, 1, "straggler is not a restart");
	ASSERT_EQ(feed(t, 0x2222, 0, 5), SEQ_IN_ORDER, "new run continues");
	ASSERT_EQ(feed(t, 0x3333, 0, 77), SEQ_FIRST, "third run");
	COUNTS_EQ(t, 33, 0, 0, 0, 1, 2);
	seqtrack_reset(t);
	COUNTS_EQ(t, 0, 0, 0, 0, 0, 0);
	ASSERT_EQ(feed(t, 0x3333, 0, 78), SEQ_FIRST, "reset forgets flows");
	seqtrack__destroy(t);
}

static void test_many_flows(void)
{
	struct seqtrack *t = seqtrack__create(0);
	__u32 f, s;

	if (!ASSERT_TRUE(t, "create with 65536 flows"))
		return;
	ASSERT_EQ(t->nflows, SEQTRACK_FLOWS_MAX, "0 means the maximum");
	/* Every flow sends 0..9; odd flows lose 3..5; flow % 7 == 0 duplicates 8. */
	for (s = 0; s < 10; s++) {
		for (f = 0; f < SEQTRACK_FLOWS_MAX; f++) {
			if ((f & 1) && s >= 3 && s <= 5)
				continue;
			feed(t, 9, (__u16)f, s + f);
			if (s == 8 && f % 7 == 0)
				feed(t, 9, (__u16)f, s + f);
		}
	}
	ASSERT_EQ(t->counts.lost, 3 * 32768, "3 lost in each odd flow");
	ASSERT_EQ(t->counts.duplicates, (65536 + 6) / 7, "one duplicate per seventh flow");
	ASSERT_EQ(t->counts.received, 10 * 65536 - 3 * 32768 + (65536 + 6) / 7, "received");
	ASSERT_EQ(t->counts.reordered, 0, "no reordering");
	seqtrack__destroy(t);

	t = seqtrack__create(10);
	if (!ASSERT_TRUE(t, "create with 10 flows"))
		return;
	ASSERT_EQ(feed(t, 9, 10, 0), SEQ_BAD_FLOW, "flow id beyond the tracker");
	ASSERT_EQ(t->counts.bad_flow, 1, "bad_flow counted");
	ASSERT_EQ(t->counts.received, 0, "not received");
	seqtrack__destroy(t);
	errno = 0;
	ASSERT_FALSE(seqtrack__create(SEQTRACK_FLOWS_MAX + 1), "too many flows refused");
	ASSERT_EQ(errno, EINVAL, "EINVAL");
}

static __u64 rng = 0x9e3779b97f4a7c15ULL;

static __u32 rnd(__u32 n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (__u32)((rng >> 32) % n);
}

/*
 * A lossy, duplicating, reordering channel (displacements well inside the
 * window) checked against definitions that do not follow the algorithm:
 * lost = numbers in [first, highest] never received; duplicates = arrivals
 * minus distinct numbers; reordered = first arrivals of a number below one
 * already seen.
 */
static void test_channel(void)
{
	enum { N = 200000 };
	static __u32 arr[2 * N];
	static __u8 seen[N];
	struct seqtrack *t = seqtrack__create(1);
	__u64 lost = 0, dups = 0, reord = 0;
	unsigned int n = 0, i, max = 0;
	__u32 base = 0xffff0000; /* crosses the 32-bit wrap */

	if (!ASSERT_TRUE(t, "create"))
		return;
	for (i = 0; i < N; i++) {
		if (i && rnd(100) == 0)
			continue; /* 1% lost */
		arr[n++] = i;
		if (rnd(100) == 0)
			arr[n++] = i; /* 1% duplicated */
	}
	for (i = 1; i + 8 < n; i++) {
		if (rnd(50) == 0) { /* 2%: move by up to 8 */
			unsigned int j = i + 1 + rnd(8);
			__u32 tmp = arr[i];

			arr[i] = arr[j];
			arr[j] = tmp;
		}
	}
	for (i = 0; i < n; i++) {
		__u32 s = arr[i];

		if (seen[s])
			dups++;
		else if (i && s < max)
			reord++;
		if (s > max)
			max = s;
		seen[s] = 1;
		feed(t, 5, 0, base + s);
	}
	for (i = 0; i <= max; i++)
		lost += !seen[i];
	ASSERT_EQ(t->counts.received, n, "received = arrivals");
	ASSERT_EQ(t->counts.lost, lost, "lost = never received");
	ASSERT_EQ(t->counts.duplicates, dups, "duplicates = arrivals - distinct");
	ASSERT_EQ(t->counts.reordered, reord, "reordered = late first arrivals");
	ASSERT_EQ(t->counts.late, 0, "nothing beyond the window");
	ASSERT_GT(lost, 1000, "the channel did lose");
	ASSERT_GT(dups, 1000, "the channel did duplicate");
	ASSERT_GT(reord, 1000, "the channel did reorder");
	seqtrack__destroy(t);
}

static void test_merge(void)
{
	struct seqtrack *a = seqtrack__create(4), *b = seqtrack__create(4);
	struct seqtrack_counts sum = { 0 };

	if (!ASSERT_TRUE(a && b, "create"))
		goto out;
	feed(a, 1, 0, 0);
	feed(a, 1, 0, 3); /* 2 lost */
	feed(a, 1, 0, 3); /* dup */
	feed(a, 2, 0, 0); /* restart */
	feed(b, 1, 1, 0);
	feed(b, 1, 1, 2);
	feed(b, 1, 1, 1); /* reordered */
	feed(b, 2, 1, 0); /* restart */
	feed(b, 3, 1, 0); /* restart */
	seqtrack_counts_merge(&sum, &a->counts);
	seqtrack_counts_merge(&sum, &b->counts);
	ASSERT_EQ(sum.received, 9, "received summed");
	ASSERT_EQ(sum.lost, 2, "lost summed");
	ASSERT_EQ(sum.duplicates, 1, "duplicates summed");
	ASSERT_EQ(sum.reordered, 1, "reordered summed");
	ASSERT_EQ(sum.restarts, 2, "restarts: the most any queue saw");
	ASSERT_STREQ(seqtrack_verdict_str(SEQ_REORDERED), "reordered", "verdict name");
out:
	seqtrack__destroy(a);
	seqtrack__destroy(b);
}

static const struct test_case cases[] = {
	TEST_CASE(in_order),	TEST_CASE(gap),	  TEST_CASE(duplicate), TEST_CASE(reorder),
	TEST_CASE(window_edge), TEST_CASE(wrap),  TEST_CASE(restart),	TEST_CASE(many_flows),
	TEST_CASE(channel),	TEST_CASE(merge),
};

TEST_MAIN("seqtrack", cases)
