// SPDX-License-Identifier: GPL-2.0
#include <stddef.h>
#include <stdlib.h>

#include "seqtrack.h"
#include "test.h"

/*
 * Frames as a well-behaved sender makes them: send time proportional to the
 * sequence number (1 us apart, from 'origin' on, so a test can cross the
 * 32-bit wrap), received at NOW, long after.
 */
#define T0 10000000000ULL /* the tracker's start: 10 s */
#define NOW (T0 + (1ULL << 43))
static __u32 origin;

static enum seqtrack_verdict feed_ts(struct seqtrack *t, __u32 run, __u16 flow, __u32 seq, __u64 ts)
{
	struct stamp st = { .run = run, .flow = flow, .seq = seq, .ticks = stamp_ticks(ts) };

	return seqtrack_update(t, &st, NOW);
}

static __u64 ts_of(__u32 seq)
{
	return T0 + (__u64)(__u32)(seq - origin) * 1000;
}

static enum seqtrack_verdict feed(struct seqtrack *t, __u32 run, __u16 flow, __u32 seq)
{
	return feed_ts(t, run, flow, seq, ts_of(seq));
}

#define COUNTS_EQ(t, rx, lo, du, re, la)                            \
	do {                                                        \
		ASSERT_EQ((t)->total.received, rx, "received");     \
		ASSERT_EQ((t)->total.lost, lo, "lost");             \
		ASSERT_EQ((t)->total.duplicates, du, "duplicates"); \
		ASSERT_EQ((t)->total.reordered, re, "reordered");   \
		ASSERT_EQ((t)->total.late, la, "late");             \
	} while (0)

static void test_in_order(void)
{
	struct seqtrack *t = seqtrack__create(T0);
	__u32 i;

	if (!ASSERT_TRUE(t, "create"))
		return;
	ASSERT_EQ(feed(t, 1, 0, 0), SEQ_FIRST, "first packet is the baseline");
	for (i = 1; i < 1000; i++)
		if (!ASSERT_EQ(feed(t, 1, 0, i), SEQ_IN_ORDER, "in order"))
			break;
	COUNTS_EQ(t, 1000, 0, 0, 0, 0);
	seqtrack__destroy(t);
}

static void test_gap(void)
{
	struct seqtrack *t = seqtrack__create(T0);
	__u32 i;

	if (!ASSERT_TRUE(t, "create"))
		return;
	for (i = 0; i < 10; i++)
		feed(t, 1, 0, i);
	ASSERT_EQ(feed(t, 1, 0, 15), SEQ_GAP, "jump ahead");
	for (i = 16; i < 20; i++)
		feed(t, 1, 0, i);
	COUNTS_EQ(t, 15, 5, 0, 0, 0);
	ASSERT_EQ(t->total.lost_final, 0, "10..14 still in the window");
	/* A gap far beyond the window is still counted exactly. */
	ASSERT_EQ(feed(t, 1, 0, 20 + 100000), SEQ_GAP, "long gap");
	ASSERT_EQ(t->total.lost, 100005, "lost after a long gap");
	/* 99,873 of the gap never fit in the window, and it pushed out 10..14. */
	ASSERT_EQ(t->total.lost_final, 99873 + 5, "final after a long gap");
	seqtrack__destroy(t);
}

static void test_duplicate(void)
{
	struct seqtrack *t = seqtrack__create(T0);
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
	COUNTS_EQ(t, 15, 0, 4, 0, 0);
	seqtrack__destroy(t);
}

static void test_reorder(void)
{
	struct seqtrack *t = seqtrack__create(T0);
	__u32 i;

	if (!ASSERT_TRUE(t, "create"))
		return;
	feed(t, 1, 0, 0);
	feed(t, 1, 0, 1);
	ASSERT_EQ(feed(t, 1, 0, 3), SEQ_GAP, "3 before 2");
	ASSERT_EQ(t->total.lost, 1, "2 provisionally lost");
	ASSERT_EQ(feed(t, 1, 0, 2), SEQ_REORDERED, "2 arrives late");
	ASSERT_EQ(feed(t, 1, 0, 2), SEQ_DUPLICATE, "2 again is a duplicate");
	feed(t, 1, 0, 4);
	COUNTS_EQ(t, 6, 0, 1, 1, 0);

	/* 100 then 5..99 backwards: all inside the window. */
	ASSERT_EQ(feed(t, 1, 1, 4), SEQ_FIRST, "flow 1 baseline");
	feed(t, 1, 1, 100);
	ASSERT_EQ(t->total.lost, 95, "95 provisionally lost");
	for (i = 99; i >= 5; i--)
		if (!ASSERT_EQ(feed(t, 1, 1, i), SEQ_REORDERED, "reordered"))
			break;
	ASSERT_EQ(t->total.lost, 0, "nothing lost in the end");
	ASSERT_EQ(t->total.reordered, 96, "reordered total");
	seqtrack__destroy(t);
}

/* The window edge: 127 behind is still classified, 128 behind is late. */
static void test_window_edge(void)
{
	struct seqtrack *t = seqtrack__create(T0);
	__u32 i;

	if (!ASSERT_TRUE(t, "create"))
		return;
	feed(t, 1, 0, 0);
	feed(t, 1, 0, 201); /* 1..200 lost */
	ASSERT_EQ(t->total.lost, 200, "gap of 200");
	ASSERT_EQ(t->total.lost_final, 73, "1..73 never fit in the window");
	ASSERT_EQ(feed(t, 1, 0, 201 - 127), SEQ_REORDERED, "127 behind: in the window");
	ASSERT_EQ(feed(t, 1, 0, 201 - 128), SEQ_LATE, "128 behind: late");
	ASSERT_EQ(feed(t, 1, 0, 0), SEQ_LATE, "long ago: late (duplicate or not)");
	COUNTS_EQ(t, 5, 199, 0, 1, 2);
	ASSERT_EQ(t->total.lost_final, 73, "late frames take nothing back");
	seqtrack__destroy(t);

	/* A lost mark carried across the window's 64-bit word boundary one step at a time. */
	t = seqtrack__create(T0);
	if (!ASSERT_TRUE(t, "create"))
		return;
	feed(t, 1, 0, 0);
	feed(t, 1, 0, 2);
	for (i = 3; i <= 100; i++)
		feed(t, 1, 0, i);
	ASSERT_EQ(feed(t, 1, 0, 1), SEQ_REORDERED, "99 behind, after 98 single shifts");
	ASSERT_EQ(feed(t, 1, 0, 50), SEQ_DUPLICATE, "received one, 50 behind");
	COUNTS_EQ(t, 102, 0, 1, 1, 0);
	/* ... and in one shift of 64 or more. */
	feed(t, 1, 1, 0);
	feed(t, 1, 1, 2);
	ASSERT_EQ(feed(t, 1, 1, 72), SEQ_GAP, "gap of 69, shift of 70");
	ASSERT_EQ(feed(t, 1, 1, 1), SEQ_REORDERED, "71 behind, after one long shift");
	ASSERT_EQ(feed(t, 1, 1, 2), SEQ_DUPLICATE, "received one, 70 behind");
	ASSERT_EQ(feed(t, 1, 1, 40), SEQ_REORDERED, "one of the gap");
	COUNTS_EQ(t, 108, 68, 2, 3, 0);
	seqtrack__destroy(t);

	/* Before the baseline: late, never a negative loss. */
	t = seqtrack__create(T0);
	if (!ASSERT_TRUE(t, "create"))
		return;
	feed(t, 1, 0, 100);
	ASSERT_EQ(feed(t, 1, 0, 99), SEQ_LATE, "before the baseline");
	ASSERT_EQ(feed(t, 1, 0, 100), SEQ_DUPLICATE, "baseline repeated");
	feed(t, 1, 0, 101);
	ASSERT_EQ(feed(t, 1, 0, 99), SEQ_LATE, "still before the baseline");
	COUNTS_EQ(t, 5, 0, 1, 0, 2);
	seqtrack__destroy(t);
}

/*
 * A gap becomes final when it leaves the window, one number per in-order
 * frame, and a frame that fills a gap in time takes back only what is not
 * final yet: lost_final never falls.
 */
static void test_lost_final(void)
{
	struct seqtrack *t = seqtrack__create(T0);
	__u32 i;

	if (!ASSERT_TRUE(t, "create"))
		return;
	feed(t, 1, 0, 0);
	feed(t, 1, 0, 6); /* 1..5 lost, at window bits 5..1 */
	ASSERT_EQ(feed(t, 1, 0, 3), SEQ_REORDERED, "3 in time");
	for (i = 7; i <= 128; i++)
		feed(t, 1, 0, i);
	ASSERT_EQ(t->total.lost, 4, "1, 2, 4, 5 lost");
	ASSERT_EQ(t->total.lost_final, 0, "1 is 127 behind: still in the window");
	feed(t, 1, 0, 129);
	ASSERT_EQ(t->total.lost_final, 1, "1 is 128 behind: final");
	ASSERT_EQ(feed(t, 1, 0, 1), SEQ_LATE, "1 too late");
	ASSERT_EQ(feed(t, 1, 0, 4), SEQ_REORDERED, "4 still in time");
	ASSERT_EQ(t->total.lost, 3, "1, 2 and 5 lost, 4 taken back");
	ASSERT_EQ(t->total.lost_final, 1, "4 was never final");
	for (i = 130; i <= 133; i++)
		feed(t, 1, 0, i);
	ASSERT_EQ(t->total.lost_final, 3, "1, 2 and 5 final");
	ASSERT_EQ(t->total.lost, t->total.lost_final, "nothing pending");
	seqtrack__destroy(t);
}

static void test_wrap(void)
{
	struct seqtrack *t = seqtrack__create(T0);
	__u32 s;

	if (!ASSERT_TRUE(t, "create"))
		return;
	origin = 0xffff0000;
	for (s = 0xfffffff0; s != 0x10; s++)
		if (!ASSERT_TRUE(feed(t, 1, 0, s) <= SEQ_IN_ORDER, "in order across 2^32"))
			break;
	COUNTS_EQ(t, 32, 0, 0, 0, 0);
	feed(t, 1, 1, 0xfffffffe);
	ASSERT_EQ(feed(t, 1, 1, 1), SEQ_GAP, "gap across the wrap");
	ASSERT_EQ(t->total.lost, 2, "0xffffffff and 0 lost");
	ASSERT_EQ(feed(t, 1, 1, 0xffffffff), SEQ_REORDERED, "reorder across the wrap");
	ASSERT_EQ(feed(t, 1, 1, 0), SEQ_REORDERED, "reorder of 0");
	ASSERT_EQ(feed(t, 1, 1, 0xfffffffe), SEQ_DUPLICATE, "duplicate across the wrap");
	ASSERT_EQ(t->total.lost, 0, "nothing lost");
	origin = 0;
	seqtrack__destroy(t);
}

/* Runs keep separate books: a second run, or a straggler of the first, touches only its own. */
static void test_runs_are_separate(void)
{
	struct seqtrack *t = seqtrack__create(T0);
	__u32 i;

	if (!ASSERT_TRUE(t, "create"))
		return;
	for (i = 0; i < 10; i++) {
		feed(t, 0x11111111, 0, i);
		feed(t, 0x11111111, 1, 1000 + i);
	}
	/* New run: sequence numbers start over. */
	ASSERT_EQ(feed(t, 0x22222222, 0, 0), SEQ_FIRST, "new run baselines flow 0");
	ASSERT_EQ(feed(t, 0x22222222, 1, 0), SEQ_FIRST, "and flow 1");
	for (i = 1; i < 5; i++) {
		feed(t, 0x22222222, 0, i);
		feed(t, 0x22222222, 1, i);
	}
	COUNTS_EQ(t, 30, 0, 0, 0, 0);
	ASSERT_EQ(feed(t, 0x11111111, 0, 10), SEQ_IN_ORDER, "the first run goes on in its books");
	ASSERT_EQ(feed(t, 0x22222222, 0, 5), SEQ_IN_ORDER, "so does the second");
	ASSERT_EQ(feed(t, 0x33333333, 0, 77), SEQ_FIRST, "third run");
	ASSERT_EQ(feed(t, 0x11111111, 0, 13), SEQ_GAP, "a gap in the first run");
	COUNTS_EQ(t, 34, 2, 0, 0, 0);
	ASSERT_EQ(t->nruns, 3, "three runs");
	ASSERT_EQ(t->runs[0].c.received, 22, "run 1 received");
	ASSERT_EQ(t->runs[0].c.lost, 2, "run 1 lost");
	ASSERT_EQ(t->runs[1].c.received, 11, "run 2 received");
	ASSERT_EQ(t->runs[1].c.lost, 0, "run 2 lost nothing");
	ASSERT_EQ(t->runs[2].c.received, 1, "run 3 received");
	seqtrack_reset(t);
	COUNTS_EQ(t, 0, 0, 0, 0, 0);
	ASSERT_EQ(feed(t, 0x33333333, 0, 78), SEQ_FIRST, "reset forgets flows");
	seqtrack__destroy(t);
}

/* 64 generators at once, interleaved frame by frame: each run's books are exact. */
static void test_many_runs(void)
{
	struct seqtrack *t = seqtrack__create(T0);
	__u32 r, s;

	if (!ASSERT_TRUE(t, "create"))
		return;
	for (s = 0; s < 200; s++)
		for (r = 0; r < 64; r++)
			if (!(r == 7 && s == 100))
				feed(t, 0xabc00000 + r, (__u16)(r % 3), s);
	ASSERT_EQ(t->nruns, 64, "64 runs");
	for (r = 0; r < 64; r++) {
		ASSERT_EQ(t->runs[r].c.received, 200 - (r == 7), "each run's received");
		ASSERT_EQ(t->runs[r].c.lost, r == 7, "the one gap in its own run");
		ASSERT_EQ(t->runs[r].latency->count, 200 - (r == 7), "latency per run");
	}
	/* A full table: run 257 closes the books of a run that has shown least. */
	for (r = 64; r < SEQTRACK_RUNS_MAX; r++)
		feed(t, 0xabc00000 + r, 0, 0);
	ASSERT_EQ(feed(t, 0xfeed, 0, 0), SEQ_FIRST, "run 257 gets books");
	ASSERT_EQ(t->closed, 1, "one run's books closed for it");
	ASSERT_EQ(t->ndone, 1, "and kept among the closed");
	ASSERT_EQ(t->done[0].id, 0xabc00000 + 64, "the first of the one-frame runs");
	ASSERT_EQ(t->total.unplaced, 0, "nothing unplaced");
	ASSERT_EQ(feed(t, 0xabc00000, 0, 200), SEQ_IN_ORDER, "known runs go on");
	seqtrack__destroy(t);
}

/*
 * Claims no sender could make change nothing but their own counters: a
 * sequence jump of 2^31, one too fast for the time between the send times,
 * a step back sent after the newest frame, a send time in the future or from
 * before the sink started. An unknown run is its own run.
 */
static void test_forged(void)
{
	struct seqtrack *t = seqtrack__create(T0);
	struct seqtrack_counts before;
	__u32 i;

	if (!ASSERT_TRUE(t, "create"))
		return;
	for (i = 0; i < 100; i++)
		feed(t, 1, 0, i);
	before = t->runs[0].c;
	ASSERT_EQ(feed_ts(t, 1, 0, 99 + (1U << 31), ts_of(100)), SEQ_IMPLAUSIBLE, "2^31 ahead");
	ASSERT_EQ(feed_ts(t, 1, 0, 100 + 1000000, ts_of(100)), SEQ_IMPLAUSIBLE,
		  "a million ahead within a microsecond");
	ASSERT_EQ(feed_ts(t, 1, 0, 5, ts_of(200)), SEQ_IMPLAUSIBLE, "an old number sent later");
	ASSERT_EQ(feed_ts(t, 1, 0, 100, NOW + 1000000), SEQ_TS_FUTURE, "sent in the future");
	ASSERT_EQ(feed_ts(t, 1, 0, 100, 1), SEQ_TS_STALE, "sent at 1 ns");
	ASSERT_EQ(feed_ts(t, 0xbad, 0, 1U << 31, ts_of(100)), SEQ_FIRST, "an unknown run: its own");
	ASSERT_EQ(feed_ts(t, 0xbad2, 0, 1, NOW + 1000000), SEQ_TS_FUTURE,
		  "unknown, from the future");
	ASSERT_EQ(feed_ts(t, 0xbad3, 0, 1, 0), SEQ_TS_STALE, "unknown, sent at 0");
	ASSERT_EQ(t->nruns, 2, "rejected claims open no books");
	ASSERT_EQ(t->total.ts_future, 2, "but are counted in the totals");
	ASSERT_EQ(t->runs[0].c.received, before.received, "run 1's received unchanged");
	ASSERT_EQ(t->runs[0].c.lost, before.lost, "run 1's lost unchanged");
	ASSERT_EQ(t->runs[0].c.late, 0, "nothing late");
	ASSERT_EQ(t->runs[0].c.duplicates, 0, "nothing duplicated");
	ASSERT_EQ(t->runs[0].c.implausible, 3, "three implausible");
	ASSERT_EQ(t->runs[0].c.ts_future, 1, "one from the future");
	ASSERT_EQ(t->runs[0].c.ts_stale, 1, "one stale");
	ASSERT_EQ(t->runs[0].latency->count, 100, "none of them in the latency");
	ASSERT_EQ(t->runs[0].latency->max, NOW - ts_of(0), "the latency max is a real one");
	ASSERT_EQ(feed(t, 1, 0, 100), SEQ_IN_ORDER, "the genuine stream goes on");
	/* A large real loss is plausible when enough time passed. */
	ASSERT_EQ(feed_ts(t, 1, 0, 101 + 1000000, ts_of(100) + 2000000), SEQ_GAP,
		  "a million lost over 2 ms");
	COUNTS_EQ(t, 103, 1000000, 0, 0, 0); /* the unknown run counts in the totals */
	ASSERT_EQ(t->total.implausible, 3, "totals follow the runs");
	seqtrack__destroy(t);
}

/* The most frames sent within 100 us of send time. */
static void test_burst(void)
{
	struct seqtrack *t = seqtrack__create(T0);
	__u32 i;

	if (!ASSERT_TRUE(t, "create"))
		return;
	/* 10 frames in each 100 us, except 30 in one. */
	for (i = 0; i < 1000; i++)
		feed_ts(t, 1, 0, i, T0 + (__u64)i * 10000);
	for (i = 0; i < 20; i++)
		feed_ts(t, 1, 0, 1000 + i, T0 + 10000000 + 50000);
	ASSERT_EQ(t->runs[0].burst_max, 20, "the burst");
	ASSERT_EQ(t->runs[0].first_ts, T0, "first send time");
	ASSERT_EQ(t->runs[0].last_ts, T0 + 10050000, "last send time");
	seqtrack__destroy(t);
}

static void test_many_flows(void)
{
	struct seqtrack *t = seqtrack__create(T0);
	__u32 f, s;

	if (!ASSERT_TRUE(t, "create"))
		return;
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
	ASSERT_EQ(t->total.lost, 3 * 32768, "3 lost in each odd flow");
	ASSERT_EQ(t->total.duplicates, (65536 + 6) / 7, "one duplicate per seventh flow");
	ASSERT_EQ(t->total.received, 10 * 65536 - 3 * 32768 + (65536 + 6) / 7, "received");
	ASSERT_EQ(t->total.reordered, 0, "no reordering");
	seqtrack__destroy(t);
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
	struct seqtrack *t = seqtrack__create(T0);
	__u64 lost = 0, dups = 0, reord = 0, final = 0, prev_final = 0;
	unsigned int n = 0, i, max = 0, falls = 0;
	__u32 base = 0xffff0000; /* crosses the 32-bit wrap */

	if (!ASSERT_TRUE(t, "create"))
		return;
	origin = base;
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
		falls += t->total.lost_final < prev_final || t->total.lost_final > t->total.lost;
		prev_final = t->total.lost_final;
	}
	for (i = 0; i <= max; i++) {
		lost += !seen[i];
		final += !seen[i] && max - i >= SEQTRACK_WINDOW;
	}
	ASSERT_EQ(falls, 0, "lost_final never fell, never above lost");
	ASSERT_EQ(t->total.lost_final, final, "lost_final = never received, out of the window");
	ASSERT_EQ(t->total.received, n, "received = arrivals");
	ASSERT_EQ(t->total.lost, lost, "lost = never received");
	ASSERT_EQ(t->total.duplicates, dups, "duplicates = arrivals - distinct");
	ASSERT_EQ(t->total.reordered, reord, "reordered = late first arrivals");
	ASSERT_EQ(t->total.late, 0, "nothing beyond the window");
	ASSERT_GT(lost, 1000, "the channel did lose");
	ASSERT_GT(dups, 1000, "the channel did duplicate");
	ASSERT_GT(reord, 1000, "the channel did reorder");
	origin = 0;
	seqtrack__destroy(t);
}

/* A frame as anyone could forge it: any run, flow, sequence and times. */
static enum seqtrack_verdict feed_at(struct seqtrack *t, __u32 run, __u16 flow, __u32 seq, __u64 ts,
				     __u64 now)
{
	struct stamp st = { .run = run, .flow = flow, .seq = seq, .ticks = stamp_ticks(ts) };

	return seqtrack_update(t, &st, now);
}

struct found {
	__u32 id;
	struct seqtrack_summary s;
	unsigned int runs;
};

static void find_run(const struct seqtrack_summary *s, const struct hist *lat, void *ctx)
{
	struct found *f = ctx;

	(void)lat;
	f->runs++;
	if (s->id == f->id)
		f->s = *s;
}

/*
 * 300 frames that name 300 runs with send times no sender could have used
 * (0, the far future, before the sink started) take no run slot and no
 * memory; the genuine run after them has its books.
 */
static void test_rejected_claims_hold_nothing(void)
{
	struct seqtrack *t = seqtrack__create(T0);
	struct found f = { .id = 0x600d };
	__u32 i;

	if (!ASSERT_TRUE(t, "create"))
		return;
	for (i = 0; i < 300; i++) {
		__u64 ts = i % 3 == 0 ? 0 : i % 3 == 1 ? NOW + 1000000000ULL : T0 - 2000000000ULL;

		feed_at(t, 0xf0000000 + i, 65535, i, ts, NOW);
	}
	ASSERT_EQ(t->nruns, 0, "no books opened");
	ASSERT_EQ(t->slots, 0, "no flow memory");
	ASSERT_EQ(t->total.ts_future + t->total.ts_stale, 300, "every one counted as rejected");
	for (i = 0; i < 1000; i++)
		if (!ASSERT_TRUE(feed(t, 0x600d, (__u16)(i % 4), i) <= SEQ_GAP, "genuine frames"))
			break;
	ASSERT_EQ(seqtrack_runs(&t, 1, find_run, &f), 1, "one run");
	ASSERT_EQ(f.s.c.received, 1000, "the genuine run: every frame");
	ASSERT_EQ(f.s.c.unplaced, 0, "none unplaced");
	seqtrack__destroy(t);
}

/*
 * 1,000 forged frames that each name a new run with a plausible send time,
 * before and between the frames of a genuine run: the forgers push out each
 * other, never the run that has shown more; memory stays at the caps.
 */
static void test_forged_runs_cannot_push_out(void)
{
	struct seqtrack *t = seqtrack__create(T0);
	struct found f = { .id = 0x600d };
	__u64 now = NOW;
	__u32 i, k = 0;

	if (!ASSERT_TRUE(t, "create"))
		return;
	for (i = 0; i < 500; i++, now += 1000)
		feed_at(t, 0xf0000000 + k++, (__u16)(65535 - i), rnd(1U << 31), now - 5000, now);
	for (i = 0; i < 20000; i++, now += 1000) {
		if (!ASSERT_TRUE(feed_at(t, 0x600d, (__u16)(i % 7), i / 7, now - 5000, now) <=
					 SEQ_IN_ORDER,
				 "the genuine run's frames are in order in its books"))
			break;
		if (i % 40 == 0) /* 500 more, among its frames */
			feed_at(t, 0xf0000000 + k++, 65535, rnd(1U << 31), now - 5000, now);
	}
	ASSERT_EQ(k, 1000, "a thousand forged runs");
	ASSERT_EQ(seqtrack_runs(&t, 1, find_run, &f), 1000 - 0 + 1 - t->folded_runs,
		  "every run reported, each once (some folded)");
	ASSERT_EQ(f.s.c.received, 20000, "the genuine run: every frame");
	ASSERT_EQ(f.s.c.lost, 0, "lost 0");
	ASSERT_EQ(f.s.reopened, 0, "its books were never closed");
	ASSERT_TRUE(t->nruns <= SEQTRACK_RUNS_MAX && t->ndone <= SEQTRACK_DONE_MAX, "tables");
	ASSERT_TRUE(t->slots <= SEQTRACK_FLOW_SLOTS_MAX, "flow slots capped");
	ASSERT_EQ(t->total.unplaced, 0, "nothing unplaced");
	seqtrack__destroy(t);
}

/* A flow id of 65535 costs one slot of a small table, not 65,536 records. */
static void test_flow_memory_follows_flows_seen(void)
{
	struct seqtrack *t = seqtrack__create(T0);
	__u32 r;

	if (!ASSERT_TRUE(t, "create"))
		return;
	for (r = 0; r < SEQTRACK_RUNS_MAX; r++)
		feed(t, 0xe0000000 + r, 65535, 1);
	ASSERT_EQ(t->nruns, SEQTRACK_RUNS_MAX, "256 runs");
	ASSERT_EQ(t->slots, 0, "no table grew");
	for (r = 0; r < SEQTRACK_RUNS_MAX; r++)
		if (!ASSERT_EQ(t->runs[r].slots, SEQTRACK_FLOW_SLOTS_MIN, "the smallest table"))
			break;
	seqtrack__destroy(t);
}

/*
 * More flows than the slots hold: three runs of 65,536 flows each. A new flow
 * of the third waits for room (unplaced, in its run's books) until the
 * others go idle and are closed.
 */
static void test_flow_slots_cap(void)
{
	struct seqtrack *t = seqtrack__create(T0);
	struct found f = { .id = 3 };
	__u32 r, i;

	if (!ASSERT_TRUE(t, "create"))
		return;
	for (r = 1; r <= 3; r++)
		for (i = 0; i < SEQTRACK_FLOWS_MAX; i++)
			feed_at(t, r, (__u16)i, 0, NOW - 10, NOW);
	ASSERT_TRUE(t->slots <= SEQTRACK_FLOW_SLOTS_MAX, "the cap holds");
	ASSERT_EQ(seqtrack_runs(&t, 1, find_run, &f), 3, "three runs");
	ASSERT_GT(f.s.c.unplaced, 1000, "run 3's frames that found no room");
	ASSERT_EQ(f.s.c.unplaced, t->total.unplaced, "in run 3's books");
	ASSERT_EQ(f.s.c.received + f.s.c.unplaced, SEQTRACK_FLOWS_MAX, "every frame counted");
	/* Runs 1 and 2 go idle: their books are closed for run 3's next flow. */
	ASSERT_EQ(feed_at(t, 3, SEQTRACK_FLOWS_MAX - 1, 0, NOW + SEQTRACK_IDLE_NS,
			  NOW + SEQTRACK_IDLE_NS + 10),
		  SEQ_FIRST, "room once the others are idle");
	ASSERT_EQ(t->ndone, 1, "one run closed for it");
	ASSERT_EQ(t->done[0].c.received, SEQTRACK_FLOWS_MAX, "with all its books");
	ASSERT_TRUE(t->slots <= SEQTRACK_FLOW_SLOTS_MAX, "the cap holds");
	seqtrack__destroy(t);
}

/*
 * More runs than slots over time: idle runs are closed first, oldest first;
 * closed books are reported; past SEQTRACK_DONE_MAX the closed run with the
 * fewest frames is folded, and a run seen again has its books reopened.
 */
static void test_closed_and_folded(void)
{
	struct seqtrack *t = seqtrack__create(T0);
	struct seqtrack_summary fs;
	struct found f = { .id = 7 };
	__u64 now = NOW;
	__u32 r, i, n = SEQTRACK_RUNS_MAX + SEQTRACK_DONE_MAX + 10;

	if (!ASSERT_TRUE(t, "create"))
		return;
	/* Runs one after another, 2 s apart, run r with r + 1 frames. */
	for (r = 0; r < n; r++, now += 2 * SEQTRACK_IDLE_NS)
		for (i = 0; i <= r; i++)
			feed_at(t, r, 0, i, now - 100, now);
	ASSERT_EQ(t->nruns, SEQTRACK_RUNS_MAX, "open");
	ASSERT_EQ(t->ndone, SEQTRACK_DONE_MAX, "closed");
	ASSERT_EQ(t->folded_runs, 10, "folded");
	ASSERT_EQ(seqtrack_folded(&t, 1, &fs, NULL), 10, "folded, reported");
	ASSERT_EQ(fs.c.received, 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9 + 10,
		  "the ten smallest, in the folded books");
	ASSERT_EQ(seqtrack_runs(&t, 1, find_run, &f), n - 10, "the rest one by one");
	ASSERT_EQ(f.s.c.received, 0, "run 7 is among the folded");
	f.id = 200;
	seqtrack_runs(&t, 1, find_run, &f);
	ASSERT_EQ(f.s.c.received, 201, "a closed run's books are whole");
	/* Run 200 comes back: new books, reported as reopened and merged. */
	feed_at(t, 200, 0, 201, now - 100, now);
	f.runs = 0;
	ASSERT_EQ(seqtrack_runs(&t, 1, find_run, &f), n - 11,
		  "one entry per run (its opening closed one more, and folded one more)");
	ASSERT_EQ(t->folded_runs, 11, "folded");
	ASSERT_EQ(f.s.c.received, 202, "both pieces");
	ASSERT_EQ(f.s.reopened, 1, "said to be reopened");
	seqtrack__destroy(t);
}

struct collected {
	unsigned int n;
	struct seqtrack_summary s[4];
	__u64 lat[4];
};

static void collect(const struct seqtrack_summary *s, const struct hist *lat, void *ctx)
{
	struct collected *c = ctx;

	if (c->n < 4) {
		c->s[c->n] = *s;
		c->lat[c->n] = lat->count;
	}
	c->n++;
}

/* Two queues' trackers: totals summed, and each run's books merged across them. */
static void test_merge(void)
{
	struct seqtrack *a = seqtrack__create(T0), *b = seqtrack__create(T0);
	struct seqtrack_counts sum = { 0 };
	struct collected c = { 0 };

	if (!ASSERT_TRUE(a && b, "create"))
		goto out;
	feed(a, 1, 0, 0);
	feed(a, 1, 0, 3); /* 2 lost */
	feed(a, 1, 0, 3); /* dup */
	feed(a, 2, 0, 0);
	feed(b, 1, 1, 0);
	feed(b, 1, 1, 2);
	feed(b, 1, 1, 1); /* reordered */
	feed(b, 2, 1, 0);
	feed(b, 3, 1, 0);
	seqtrack_counts_merge(&sum, &a->total);
	seqtrack_counts_merge(&sum, &b->total);
	ASSERT_EQ(sum.received, 9, "received summed");
	ASSERT_EQ(sum.lost, 2, "lost summed");
	ASSERT_EQ(sum.duplicates, 1, "duplicates summed");
	ASSERT_EQ(sum.reordered, 1, "reordered summed");
	ASSERT_EQ(seqtrack_runs((struct seqtrack *const[]){ a, b }, 2, collect, &c), 3,
		  "three runs over both queues");
	ASSERT_EQ(c.n, 3, "each reported once");
	ASSERT_EQ(c.s[0].id, 1, "run 1 first");
	ASSERT_EQ(c.s[0].c.received, 6, "run 1: both queues");
	ASSERT_EQ(c.s[0].c.lost, 2, "run 1 lost");
	ASSERT_EQ(c.s[0].c.reordered, 1, "run 1 reordered");
	ASSERT_EQ(c.lat[0], 6, "run 1 latency merged");
	ASSERT_EQ(c.s[1].c.received, 2, "run 2");
	ASSERT_EQ(c.s[2].c.received, 1, "run 3");
	ASSERT_STREQ(seqtrack_verdict_str(SEQ_REORDERED), "reordered", "verdict name");
	ASSERT_STREQ(seqtrack_verdict_str(SEQ_IMPLAUSIBLE), "implausible", "verdict name");
out:
	seqtrack__destroy(a);
	seqtrack__destroy(b);
}

/* RFC 3550's J by its own formula, in floating point: the reference. */
static double rfc3550(const __u64 *transit, unsigned int n)
{
	double j = 0;
	unsigned int i;

	for (i = 1; i < n; i++) {
		double d = (double)transit[i] - (double)transit[i - 1];

		j += ((d < 0 ? -d : d) - j) / 16;
	}
	return j;
}

/*
 * The jitter math on synthetic arrivals: a constant delay has none; a delay
 * that swings by 20 us reads |IPDV| 20 us whichever way it swings, and J
 * follows RFC 3550's formula to within the integer rounding (1/16 ns a step).
 */
static void test_jitter_math(void)
{
	__u64 transit[200], d = 0, big = 0;
	struct jitter flat = { 0 }, swing = { 0 };
	unsigned int i, n = 0;

	for (i = 0; i < 200; i++) {
		ASSERT_EQ(jitter_update(&flat, 5000, &d), i > 0, "the first frame has no IPDV");
		ASSERT_EQ(d, 0, "constant delay: IPDV 0");
		transit[i] = i % 2 ? 30000 : 10000;
		if (jitter_update(&swing, transit[i], &d)) {
			n++;
			big += d == 20000;
		}
	}
	ASSERT_EQ(jitter_ns(&flat), 0, "constant delay: J 0");
	ASSERT_EQ(big, n, "every |IPDV| 20 us, up or down");
	ASSERT_TRUE(jitter_ns(&swing) > rfc3550(transit, 200) - 20 &&
			    jitter_ns(&swing) < rfc3550(transit, 200) + 20,
		    "J as RFC 3550 computes it");
	ASSERT_TRUE(jitter_ns(&swing) > 19900, "J near the swing after 200 frames");
	/* Two J as one, weighted by IPDV counts, without overflow at large values. */
	flat.j16 = 16ULL << 40;
	swing.j16 = 0;
	jitter_merge(&flat, 1000000, &swing, 3000000);
	ASSERT_EQ(flat.j16, 4ULL << 40, "merged J: (J1 n1 + J2 n2) / (n1 + n2)");
}

/* Per run in the tracker, and merged over queues: a steady run small, a bursty one large. */
static void test_jitter_runs(void)
{
	struct seqtrack *a = seqtrack__create(T0), *b = seqtrack__create(T0);
	struct collected c = { 0 };
	struct hist *all = malloc(sizeof(*all));
	double j_all = 0;
	__u32 i;

	if (!ASSERT_TRUE(a && b && all, "create"))
		goto out;
	/* Run 1 on two queues: delay 5 us throughout. Run 2, after it: 50 us and 5 us in turn. */
	for (i = 0; i < 100; i++) {
		struct stamp st = {
			.run = 1, .flow = 0, .seq = i, .ticks = stamp_ticks(T0 + i * 1000ULL)
		};
		struct stamp bu = {
			.run = 2, .flow = 0, .seq = i, .ticks = stamp_ticks(T0 + i * 1000ULL)
		};

		seqtrack_update(i % 2 ? a : b, &st, T0 + i * 1000ULL + 5000);
		st.flow = 1;
		seqtrack_update(b, &st, T0 + i * 1000ULL + 5000);
		seqtrack_update(a, &bu, T0 + i * 1000ULL + (i % 2 ? 5000 : 50000));
	}
	ASSERT_EQ(seqtrack_runs((struct seqtrack *const[]){ a, b }, 2, collect, &c), 2, "two runs");
	ASSERT_EQ(c.s[0].ipdv.count, 200 - 2, "run 1: an IPDV per frame but each queue's first");
	ASSERT_EQ(c.s[0].ipdv.max, 0, "steady: no IPDV");
	ASSERT_EQ(c.s[0].jitter_ns, 0, "steady: no jitter");
	ASSERT_EQ(c.s[1].ipdv.count, 99, "run 2: one queue");
	ASSERT_EQ(c.s[1].ipdv.min, 45000, "bursty: every |IPDV| 45 us");
	ASSERT_EQ(c.s[1].ipdv.p50, 45000, "bursty: p50 45 us");
	ASSERT_TRUE(c.s[1].jitter_ns > 40000, "bursty: J near 45 us");
	seqtrack_ipdv_all((struct seqtrack *const[]){ a, b }, 2, all, &j_all);
	ASSERT_EQ(all->count, 198 + 99, "all runs' IPDV");
	ASSERT_TRUE(j_all > c.s[1].jitter_ns * 99 / 297 - 1 &&
			    j_all < c.s[1].jitter_ns * 99 / 297 + 1,
		    "J over runs: weighted by IPDV counts");
out:
	free(all);
	seqtrack__destroy(a);
	seqtrack__destroy(b);
}

/*
 * Frames the receive-time sample skipped (untimed) are booked like any other
 * (a gap among them is loss), but only the timed ones make latency, |IPDV|
 * and the live histogram: an untimed frame's time is the reader's, which
 * would put the thread's wake-up back into the figures.
 */
static void test_untimed_booked_not_timed(void)
{
	struct seqtrack *t = seqtrack__create(T0);
	struct collected c = { 0 };
	__u32 i, timed = 0;

	if (!ASSERT_TRUE(t, "create"))
		return;
	for (i = 0; i < 200; i++) {
		struct stamp st = {
			.run = 7, .flow = 0, .seq = i, .ticks = stamp_ticks(T0 + i * 1000ULL)
		};
		bool on = i % 16 == 0;

		if (i == 100)
			continue; /* lost, among the untimed */
		/* The untimed ones are read 1 ms late: in no figure if they are left out. */
		seqtrack_update_timed(t, &st, T0 + i * 1000ULL + (on ? 5000 : 1000000), on);
		timed += on;
	}
	ASSERT_EQ(seqtrack_runs(&t, 1, collect, &c), 1, "one run");
	ASSERT_EQ(c.s[0].c.received, 199, "every frame booked");
	ASSERT_EQ(c.s[0].c.lost, 1, "a gap among untimed frames is loss");
	ASSERT_EQ(c.lat[0], timed, "latency: the timed frames only");
	ASSERT_EQ(c.s[0].c.untimed, 199 - timed, "the rest counted untimed");
	ASSERT_EQ(t->total.untimed, 199 - timed, "in the totals too");
	ASSERT_EQ(c.s[0].ipdv.count, timed - 1, "IPDV between timed frames");
	ASSERT_EQ(c.s[0].ipdv.max, 0, "none of the readers' lateness in it");
	ASSERT_EQ(t->live.count, timed, "the live histogram: the timed frames only");
	ASSERT_EQ(t->live.sum, timed * 5000ULL, "at their latency");
	seqtrack__destroy(t);
}

static const struct test_case cases[] = {
	TEST_CASE(in_order),
	TEST_CASE(untimed_booked_not_timed),
	TEST_CASE(gap),
	TEST_CASE(duplicate),
	TEST_CASE(reorder),
	TEST_CASE(window_edge),
	TEST_CASE(lost_final),
	TEST_CASE(wrap),
	TEST_CASE(runs_are_separate),
	TEST_CASE(many_runs),
	TEST_CASE(forged),
	TEST_CASE(burst),
	TEST_CASE(many_flows),
	TEST_CASE(channel),
	TEST_CASE(jitter_math),
	TEST_CASE(jitter_runs),
	TEST_CASE(merge),
	TEST_CASE(rejected_claims_hold_nothing),
	TEST_CASE(forged_runs_cannot_push_out),
	TEST_CASE(flow_memory_follows_flows_seen),
	TEST_CASE(flow_slots_cap),
	TEST_CASE(closed_and_folded),
};

TEST_MAIN("seqtrack", cases)
