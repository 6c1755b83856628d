// SPDX-License-Identifier: GPL-2.0
#include <stddef.h>
#include <stdlib.h>

#include "measure/seqtrack.h"
#include "test.h"

/*
 * Frames as a well-behaved sender makes them: send time proportional to the
 * sequence number (1 us apart, from 'origin' on, so a test can cross the
 * 32-bit wrap), received at NOW. The sink's clock id is CLOCK_HERE; a mark
 * with it says the run is stamped on this sink's clock.
 */
#define T0 10000000000ULL /* 10 s */
#define NOW (T0 + 5000000ULL)
#define CLOCK_HERE 0x1234567890abcdefULL
static __u32 origin;

static enum seqtrack_verdict feed_at(struct seqtrack *t, __u32 run, __u16 flow, __u32 seq, __u64 ts,
				     __u64 now)
{
	struct stamp st = { .run = run, .flow = flow, .seq = seq, .ticks = stamp_ticks(ts) };

	return seqtrack_update(t, &st, now);
}

static __u64 ts_of(__u32 seq)
{
	return T0 + (__u64)(__u32)(seq - origin) * 1000;
}

static enum seqtrack_verdict feed(struct seqtrack *t, __u32 run, __u16 flow, __u32 seq)
{
	return feed_at(t, run, flow, seq, ts_of(seq), NOW);
}

/*
 * A mark of the run written at gen_ns on the generator's clock (clock_id),
 * received at now: START (flow unused) or END of a flow with its frames.
 */
static enum seqtrack_verdict mark_at(struct seqtrack *t, __u32 run, __u8 kind, __u16 flow,
				     __u64 frames, __u64 clock_id, __u64 gen_ns, __u64 now)
{
	struct stamp st = { .run = run, .flow = XDPSG_MARK_FLOW, .ticks = stamp_ticks(gen_ns) };

	st.mark = (struct xdpsg_mark){ .kind = kind,
				       .flow = flow,
				       .flow_frames = frames,
				       .clock_ns = gen_ns,
				       .clock_id = clock_id,
				       .nflows = 1 };
	return seqtrack_mark(t, &st, now);
}

static enum seqtrack_verdict end_mark(struct seqtrack *t, __u32 run, __u16 flow, __u64 frames)
{
	return mark_at(t, run, XDPSG_MARK_END, flow, frames, CLOCK_HERE, NOW - 1000, NOW);
}

static enum seqtrack_verdict start_mark(struct seqtrack *t, __u32 run)
{
	return mark_at(t, run, XDPSG_MARK_START, 0, 0, CLOCK_HERE, NOW - 1000, NOW);
}

/* Every run's books over the trackers, the folded ones' too (and those on probation). */
static void add_books(const struct seqtrack_summary *s, const struct hist *lat, void *ctx)
{
	(void)lat;
	seqtrack_counts_merge(ctx, &s->c);
}

static struct seqtrack_counts books(struct seqtrack *t)
{
	struct seqtrack_counts c = { 0 };
	struct seqtrack_summary f;

	seqtrack_runs(&t, 1, add_books, &c);
	seqtrack_folded(&t, 1, &f, NULL);
	seqtrack_counts_merge(&c, &f.c);
	return c;
}

#define COUNTS_EQ(t, rx, lo, du, re, la)                      \
	do {                                                  \
		struct seqtrack_counts ___c = books(t);       \
		ASSERT_EQ(___c.received, rx, "received");     \
		ASSERT_EQ(___c.lost, lo, "lost");             \
		ASSERT_EQ(___c.duplicates, du, "duplicates"); \
		ASSERT_EQ(___c.reordered, re, "reordered");   \
		ASSERT_EQ(___c.late, la, "late");             \
	} while (0)

static void test_in_order(void)
{
	struct seqtrack *t = seqtrack__create(CLOCK_HERE);
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
	struct seqtrack *t = seqtrack__create(CLOCK_HERE);
	__u32 i;

	if (!ASSERT_TRUE(t, "create"))
		return;
	for (i = 0; i < 10; i++)
		feed(t, 1, 0, i);
	ASSERT_EQ(feed(t, 1, 0, 15), SEQ_GAP, "jump ahead");
	for (i = 16; i < 20; i++)
		feed(t, 1, 0, i);
	COUNTS_EQ(t, 15, 5, 0, 0, 0);
	ASSERT_EQ(books(t).lost_final, 0, "10..14 still in the window");
	/* A gap far beyond the window is still counted exactly. */
	ASSERT_EQ(feed(t, 1, 0, 20 + 100000), SEQ_GAP, "long gap");
	ASSERT_EQ(books(t).lost, 100005, "lost after a long gap");
	/* 99,873 of the gap never fit in the window, and it pushed out 10..14. */
	ASSERT_EQ(books(t).lost_final, 99873 + 5, "final after a long gap");
	seqtrack__destroy(t);
}

static void test_duplicate(void)
{
	struct seqtrack *t = seqtrack__create(CLOCK_HERE);
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
	struct seqtrack *t = seqtrack__create(CLOCK_HERE);
	__u32 i;

	if (!ASSERT_TRUE(t, "create"))
		return;
	feed(t, 1, 0, 0);
	feed(t, 1, 0, 1);
	ASSERT_EQ(feed(t, 1, 0, 3), SEQ_GAP, "3 before 2");
	ASSERT_EQ(books(t).lost, 1, "2 provisionally lost");
	ASSERT_EQ(feed(t, 1, 0, 2), SEQ_REORDERED, "2 arrives late");
	ASSERT_EQ(feed(t, 1, 0, 2), SEQ_DUPLICATE, "2 again is a duplicate");
	feed(t, 1, 0, 4);
	COUNTS_EQ(t, 6, 0, 1, 1, 0);

	/* 100 then 5..99 backwards: all inside the window. */
	ASSERT_EQ(feed(t, 1, 1, 4), SEQ_FIRST, "flow 1 baseline");
	feed(t, 1, 1, 100);
	ASSERT_EQ(books(t).lost, 95, "95 provisionally lost");
	for (i = 99; i >= 5; i--)
		if (!ASSERT_EQ(feed(t, 1, 1, i), SEQ_REORDERED, "reordered"))
			break;
	ASSERT_EQ(books(t).lost, 0, "nothing lost in the end");
	ASSERT_EQ(books(t).reordered, 96, "reordered total");
	seqtrack__destroy(t);
}

/* The window edge: 127 behind is still classified, 128 behind is late. */
static void test_window_edge(void)
{
	struct seqtrack *t = seqtrack__create(CLOCK_HERE);
	__u32 i;

	if (!ASSERT_TRUE(t, "create"))
		return;
	feed(t, 1, 0, 0);
	feed(t, 1, 0, 201); /* 1..200 lost */
	ASSERT_EQ(books(t).lost, 200, "gap of 200");
	ASSERT_EQ(books(t).lost_final, 73, "1..73 never fit in the window");
	ASSERT_EQ(feed(t, 1, 0, 201 - 127), SEQ_REORDERED, "127 behind: in the window");
	ASSERT_EQ(feed(t, 1, 0, 201 - 128), SEQ_LATE, "128 behind: late");
	ASSERT_EQ(feed(t, 1, 0, 0), SEQ_LATE, "long ago: late (duplicate or not)");
	COUNTS_EQ(t, 5, 199, 0, 1, 2);
	ASSERT_EQ(books(t).lost_final, 73, "late frames take nothing back");
	seqtrack__destroy(t);

	/* A lost mark carried across the window's 64-bit word boundary one step at a time. */
	t = seqtrack__create(CLOCK_HERE);
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

	/*
	 * Sequence numbers start at 0: before the first frame they are missing
	 * at the head, not lost, and one of them arriving later takes its share
	 * back; far behind, late.
	 */
	t = seqtrack__create(CLOCK_HERE);
	if (!ASSERT_TRUE(t, "create"))
		return;
	ASSERT_EQ(feed(t, 1, 0, 100), SEQ_FIRST, "first frame: seq 100");
	ASSERT_EQ(books(t).missing_head, 100, "0..99 missing at the head");
	ASSERT_EQ(feed(t, 1, 0, 99), SEQ_REORDERED, "99 arrives after it");
	ASSERT_EQ(feed(t, 1, 0, 100), SEQ_DUPLICATE, "the first repeated");
	feed(t, 1, 0, 101);
	ASSERT_EQ(feed(t, 1, 0, 99), SEQ_DUPLICATE, "99 again");
	COUNTS_EQ(t, 5, 0, 2, 1, 0);
	ASSERT_EQ(books(t).missing_head, 99, "0..98 missing at the head");
	ASSERT_EQ(feed(t, 1, 1, 1000), SEQ_FIRST, "flow 1 starts at 1000");
	ASSERT_EQ(feed(t, 1, 1, 2), SEQ_LATE, "a number long before it: late");
	ASSERT_EQ(books(t).missing_head, 99 + 1000, "flow 1's head too");
	seqtrack__destroy(t);
}

/*
 * A gap becomes final when it leaves the window, one number per in-order
 * frame, and a frame that fills a gap in time takes back only what is not
 * final yet: lost_final never falls.
 */
static void test_lost_final(void)
{
	struct seqtrack *t = seqtrack__create(CLOCK_HERE);
	__u32 i;

	if (!ASSERT_TRUE(t, "create"))
		return;
	feed(t, 1, 0, 0);
	feed(t, 1, 0, 6); /* 1..5 lost, at window bits 5..1 */
	ASSERT_EQ(feed(t, 1, 0, 3), SEQ_REORDERED, "3 in time");
	for (i = 7; i <= 128; i++)
		feed(t, 1, 0, i);
	ASSERT_EQ(books(t).lost, 4, "1, 2, 4, 5 lost");
	ASSERT_EQ(books(t).lost_final, 0, "1 is 127 behind: still in the window");
	feed(t, 1, 0, 129);
	ASSERT_EQ(books(t).lost_final, 1, "1 is 128 behind: final");
	ASSERT_EQ(feed(t, 1, 0, 1), SEQ_LATE, "1 too late");
	ASSERT_EQ(feed(t, 1, 0, 4), SEQ_REORDERED, "4 still in time");
	ASSERT_EQ(books(t).lost, 3, "1, 2 and 5 lost, 4 taken back");
	ASSERT_EQ(books(t).lost_final, 1, "4 was never final");
	for (i = 130; i <= 133; i++)
		feed(t, 1, 0, i);
	ASSERT_EQ(books(t).lost_final, 3, "1, 2 and 5 final");
	ASSERT_EQ(books(t).lost, books(t).lost_final, "nothing pending");
	seqtrack__destroy(t);
}

static void test_wrap(void)
{
	struct seqtrack *t = seqtrack__create(CLOCK_HERE);
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
	ASSERT_EQ(books(t).lost, 2, "0xffffffff and 0 lost");
	ASSERT_EQ(feed(t, 1, 1, 0xffffffff), SEQ_REORDERED, "reorder across the wrap");
	ASSERT_EQ(feed(t, 1, 1, 0), SEQ_REORDERED, "reorder of 0");
	ASSERT_EQ(feed(t, 1, 1, 0xfffffffe), SEQ_DUPLICATE, "duplicate across the wrap");
	ASSERT_EQ(books(t).lost, 0, "nothing lost");
	origin = 0;
	seqtrack__destroy(t);
}

/* Runs keep separate books: a second run, or a straggler of the first, touches only its own. */
static void test_runs_are_separate(void)
{
	struct seqtrack *t = seqtrack__create(CLOCK_HERE);
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
	ASSERT_EQ(t->runs[0].c.missing_head, 1000, "run 1's flow 1 started at 1000");
	ASSERT_EQ(t->runs[1].c.received, 11, "run 2 received");
	ASSERT_EQ(t->runs[1].c.lost, 0, "run 2 lost nothing");
	ASSERT_EQ(t->runs[2].c.received, 1, "run 3 received");
	ASSERT_EQ(t->total.received, 22 + 11, "the totals: runs off probation only");
	seqtrack_reset(t);
	COUNTS_EQ(t, 0, 0, 0, 0, 0);
	ASSERT_EQ(feed(t, 0x33333333, 0, 78), SEQ_FIRST, "reset forgets flows");
	seqtrack__destroy(t);
}

/*
 * 64 generators at once, interleaved frame by frame: each run's books are
 * exact. Then a flood of runs of one frame each: they push out each other,
 * never a run that has shown more, without allocating.
 */
static void test_many_runs(void)
{
	struct seqtrack *t = seqtrack__create(CLOCK_HERE);
	__u32 r, s;

	if (!ASSERT_TRUE(t, "create"))
		return;
	for (r = 0; r < 64; r++)
		start_mark(t, 0xabc00000 + r);
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
	for (r = 0; r < 10000; r++)
		feed(t, 0xf0000000 + r, 0, r);
	ASSERT_EQ(t->nruns, 64 + SEQTRACK_PROBATION_MAX,
		  "the flood holds the probation slots only");
	ASSERT_EQ(t->stray_runs, 10000 - SEQTRACK_PROBATION_MAX, "the rest closed as strays");
	ASSERT_EQ(t->stray, 10000 - SEQTRACK_PROBATION_MAX, "their frames not checked");
	ASSERT_EQ(t->closed, 0, "no run's books closed for it");
	ASSERT_EQ(t->slots, 0, "no flow table grew");
	for (r = 64; r < t->nruns; r++)
		if (!ASSERT_TRUE(!t->runs[r].latency && !t->runs[r].flows, "on probation: nothing "
									   "allocated"))
			break;
	ASSERT_EQ(t->total.missing_head, 0, "the strays' sequence numbers in no figure");
	ASSERT_EQ(t->total.unplaced, 0, "nothing unplaced");
	ASSERT_EQ(feed(t, 0xabc00000, 0, 200), SEQ_IN_ORDER, "known runs go on");
	ASSERT_EQ(t->runs[0].reopened, 0, "in their first books");
	seqtrack__destroy(t);
}

/*
 * Sequence numbers start at 0: a flow's first frame says how many came
 * before it (missing at the head, not lost); as the window moves on they
 * become final without ever counting as lost.
 */
static void test_head(void)
{
	struct seqtrack *t = seqtrack__create(CLOCK_HERE);
	struct seqtrack_counts c;
	__u32 i;

	if (!ASSERT_TRUE(t, "create"))
		return;
	ASSERT_EQ(feed(t, 1, 0, 173), SEQ_FIRST, "the sink's first frame of the flow: 173");
	for (i = 174; i < 1000; i++)
		feed(t, 1, 0, i);
	c = books(t);
	ASSERT_EQ(c.missing_head, 173, "173 missing before it");
	ASSERT_EQ(c.lost, 0, "none of them lost");
	ASSERT_EQ(c.lost_final, 0, "nor final losses, now past the window");
	ASSERT_EQ(feed(t, 1, 1, 0), SEQ_FIRST, "flow 1 from 0");
	ASSERT_EQ(feed(t, 1, 1, 5), SEQ_GAP, "then a gap");
	ASSERT_EQ(books(t).lost, 4, "a gap is lost");
	ASSERT_EQ(books(t).missing_head, 173, "no head on a flow that starts at 0");
	ASSERT_EQ(feed(t, 1, 2, 3), SEQ_FIRST, "flow 2 from 3");
	ASSERT_EQ(feed(t, 1, 2, 1), SEQ_REORDERED, "1 after 3");
	c = books(t);
	ASSERT_EQ(c.missing_head, 173 + 2, "0 and 2 still missing at flow 2's head");
	ASSERT_EQ(c.lost, 4, "the head's reorder takes nothing from lost");
	seqtrack__destroy(t);
}

/*
 * xdp-gen --rtt's lost: of 10 frames sent, frame 3 never came back and frame
 * 5 came back twice. The books count 10 received, one a duplicate: one lost,
 * though as many came back as were sent.
 */
static void test_never_back(void)
{
	struct seqtrack *t = seqtrack__create(CLOCK_HERE);
	struct seqtrack_counts c;
	__u32 i;

	if (!ASSERT_TRUE(t, "create"))
		return;
	for (i = 0; i < 10; i++) {
		if (i != 3)
			feed(t, 1, 0, i);
		if (i == 5)
			feed(t, 1, 0, i);
	}
	c = books(t);
	ASSERT_EQ(c.received, 10, "ten came back");
	ASSERT_EQ(c.duplicates, 1, "one of them twice");
	ASSERT_EQ(seqtrack_never_back(10, c.received, c.duplicates), 1, "one never came back");
	ASSERT_EQ(seqtrack_never_back(10, 10, 0), 0, "all back once: none");
	ASSERT_EQ(seqtrack_never_back(10, 3, 5), 10,
		  "more duplicates than frames: all lost, no wrap");
	seqtrack__destroy(t);
}

/*
 * The end mark counts the frames after the last that arrived (lost_at_end,
 * within lost); a frame of them arriving after the mark takes its share back;
 * repeats change nothing, and a mark that disagrees is counted and ignored.
 */
static void test_end_marks(void)
{
	struct seqtrack *t = seqtrack__create(CLOCK_HERE);
	struct seqtrack_counts c;
	__u32 i;

	if (!ASSERT_TRUE(t, "create"))
		return;
	for (i = 0; i < 90; i++)
		feed(t, 5, 0, i);
	ASSERT_EQ(end_mark(t, 5, 0, 100), SEQ_MARK, "the end: 100 frames");
	c = books(t);
	ASSERT_EQ(c.lost, 10, "90..99 lost");
	ASSERT_EQ(c.lost_at_end, 10, "after the last that arrived");
	ASSERT_EQ(feed(t, 5, 0, 95), SEQ_GAP, "95 comes after the mark");
	c = books(t);
	ASSERT_EQ(c.lost, 9, "90..94 a gap, 96..99 the end");
	ASSERT_EQ(c.lost_at_end, 4, "96..99");
	ASSERT_EQ(end_mark(t, 5, 0, 100), SEQ_MARK, "the mark repeated");
	ASSERT_EQ(end_mark(t, 5, 0, 120), SEQ_MARK, "a mark that disagrees");
	c = books(t);
	ASSERT_EQ(c.lost, 9, "neither changes the books");
	ASSERT_EQ(t->runs[0].mk.conflicts, 1, "the disagreement counted");
	ASSERT_EQ(t->runs[0].mk.flows_ended, 1, "one flow ended");
	/* A flow whose every frame was lost: its end mark alone opens its books. */
	ASSERT_EQ(end_mark(t, 5, 1, 50), SEQ_MARK, "flow 1's end: 50, none arrived");
	c = books(t);
	ASSERT_EQ(c.lost, 9 + 50, "all 50 lost");
	ASSERT_EQ(c.lost_at_end, 4 + 50, "after the last that arrived (none)");
	ASSERT_EQ(c.missing_head, 0, "the sink was listening: nothing missing at the head");
	ASSERT_EQ(feed(t, 5, 1, 10), SEQ_FIRST, "then frame 10 of it");
	c = books(t);
	ASSERT_EQ(c.lost, 9 + 49, "0..9 a gap, 11..49 the end");
	ASSERT_EQ(c.lost_at_end, 4 + 39, "11..49");
	ASSERT_EQ(c.received, 91 + 1, "received");
	ASSERT_EQ(t->marks, 4, "four marks booked");
	seqtrack__destroy(t);
}

struct three {
	unsigned int n;
	struct seqtrack_summary s[3];
	__u64 lat[3];
};

static void collect3(const struct seqtrack_summary *s, const struct hist *lat, void *ctx)
{
	struct three *f = ctx;

	if (f->n < 3) {
		f->s[f->n] = *s;
		f->lat[f->n] = lat->count;
	}
	f->n++;
}

/*
 * A run's latency is figured only where a mark named this sink's clock; the
 * books and the delay variation hold whatever the clock.
 */
static void test_clock_named(void)
{
	struct seqtrack *t = seqtrack__create(CLOCK_HERE);
	struct three f = { 0 };
	const __u64 day = 86400ULL * 1000000000ULL;
	__u32 i;

	if (!ASSERT_TRUE(t, "create"))
		return;
	mark_at(t, 1, XDPSG_MARK_START, 0, 0, CLOCK_HERE, NOW - 1000, NOW);
	mark_at(t, 2, XDPSG_MARK_START, 0, 0, 0x999, NOW + day - 1000, NOW);
	for (i = 0; i < 100; i++) {
		__u64 rx = NOW + i * 10000;

		feed_at(t, 1, 0, i, rx - 5000, rx);
		feed_at(t, 2, 0, i, rx + day - 5000, rx); /* a clock a day ahead */
		feed_at(t, 3, 0, i, rx - 5000, rx);
	}
	mark_at(t, 2, XDPSG_MARK_END, 0, 100, 0x999, NOW + day + 2000000, NOW + 2005000);
	ASSERT_EQ(seqtrack_runs(&t, 1, collect3, &f), 3, "three runs");
	ASSERT_EQ(f.s[0].mk.state, SEQTRACK_CLOCK_SAME, "run 1: this sink's clock");
	ASSERT_EQ(f.lat[0], 100, "its latency figured");
	ASSERT_EQ(f.s[1].mk.state, SEQTRACK_CLOCK_OTHER, "run 2: another clock");
	ASSERT_EQ(f.lat[1], 0, "no latency");
	ASSERT_TRUE(f.s[1].mk.offset_ns > (__s64)day - 10000000 &&
			    f.s[1].mk.offset_ns < (__s64)day + 10000000,
		    "the offset seen: a day");
	ASSERT_EQ(f.s[1].c.received, 100, "its books hold");
	ASSERT_EQ(f.s[1].c.lost, 0, "nothing lost");
	ASSERT_EQ(f.s[1].c.lost_at_end, 0, "its end seen, nothing after it");
	ASSERT_EQ(f.s[1].ipdv.count, 99, "delay variation figured");
	ASSERT_TRUE(f.s[1].ipdv.max < 200, "steady: within a tick");
	ASSERT_EQ(f.s[2].mk.state, SEQTRACK_CLOCK_UNKNOWN, "run 3: no mark");
	ASSERT_EQ(f.lat[2], 0, "no latency");
	ASSERT_EQ(t->live.count, 100, "the live histogram: run 1's only");
	seqtrack__destroy(t);
}

/*
 * Send times are unwrapped per run from the receive times' gaps: a frame a
 * second over ten seconds, with a five-second outage, keeps its gaps
 * although the 24-bit ticks wrap every 2.15 s; so does a clock a day ahead.
 */
static void test_time_unwrap(void)
{
	struct seqtrack *t = seqtrack__create(CLOCK_HERE);
	const __u64 s1 = 1000000000ULL, day = 86400 * s1;
	__u32 i, seq = 0;

	if (!ASSERT_TRUE(t, "create"))
		return;
	for (i = 0; i < 20; i++) {
		__u64 ts = T0 + i * s1 / 2 + (i >= 10 ? 5 * s1 : 0), rx = ts + 7000;

		feed_at(t, 1, 0, seq, ts, rx);
		feed_at(t, 2, 0, seq, ts + day, rx);
		seq++;
	}
	ASSERT_EQ_U64(t->runs[0].last_ts - t->runs[0].first_ts, 19 * s1 / 2 + 5 * s1,
		      "run 1: 14.5 s from the first to the last send time");
	ASSERT_EQ_U64(t->runs[1].last_ts - t->runs[1].first_ts, 19 * s1 / 2 + 5 * s1,
		      "run 2, on a clock a day ahead: the same");
	seqtrack__destroy(t);
}

/* The most frames sent within 100 us of send time. */
static void test_burst(void)
{
	struct seqtrack *t = seqtrack__create(CLOCK_HERE);
	__u32 i;

	if (!ASSERT_TRUE(t, "create"))
		return;
	/* 10 frames in each 100 us, except 30 in one. */
	for (i = 0; i < 1000; i++)
		feed_at(t, 1, 0, i, T0 + (__u64)i * 10000, T0 + (__u64)i * 10000 + 5000);
	for (i = 0; i < 20; i++)
		feed_at(t, 1, 0, 1000 + i, T0 + 10000000 + 50000, T0 + 10000000 + 55000);
	ASSERT_EQ(t->runs[0].burst_max, 20, "the burst");
	ASSERT_TRUE(t->runs[0].first_ts - T0 < STAMP_TICK_NS, "first send time, within its tick");
	ASSERT_TRUE(t->runs[0].last_ts - (T0 + 10050000) + STAMP_TICK_NS < 2 * STAMP_TICK_NS,
		    "last send time, within its tick");
	seqtrack__destroy(t);
}

static void test_many_flows(void)
{
	struct seqtrack *t = seqtrack__create(CLOCK_HERE);
	__u32 f, s;

	if (!ASSERT_TRUE(t, "create"))
		return;
	/* Every flow sends 0..9; odd flows lose 3..5; flow % 7 == 0 duplicates 8. */
	for (s = 0; s < 10; s++) {
		for (f = 0; f < XDPSG_STAMP_FLOWS_MAX; f++) {
			if ((f & 1) && s >= 3 && s <= 5)
				continue;
			feed(t, 9, (__u16)f, s + f);
			if (s == 8 && f % 7 == 0)
				feed(t, 9, (__u16)f, s + f);
		}
	}
	ASSERT_EQ(t->total.lost, 3 * (XDPSG_STAMP_FLOWS_MAX / 2), "3 lost in each odd flow");
	ASSERT_EQ(t->total.duplicates, (XDPSG_STAMP_FLOWS_MAX + 6) / 7,
		  "one duplicate per seventh flow");
	ASSERT_EQ(t->total.received,
		  10 * XDPSG_STAMP_FLOWS_MAX - 3 * (XDPSG_STAMP_FLOWS_MAX / 2) +
			  (XDPSG_STAMP_FLOWS_MAX + 6) / 7,
		  "received");
	ASSERT_EQ(t->total.missing_head,
		  (__u64)XDPSG_STAMP_FLOWS_MAX * (XDPSG_STAMP_FLOWS_MAX - 1) / 2,
		  "flow f starts at f: f missing at its head");
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
	struct seqtrack *t = seqtrack__create(CLOCK_HERE);
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
 * 1,000 frames that each name a new run, before and between the frames of
 * a genuine run (as anyone with the public key can send): they push out
 * each other, never the run that has shown more; memory stays at the caps.
 */
static void test_claims_cannot_push_out(void)
{
	struct seqtrack *t = seqtrack__create(CLOCK_HERE);
	struct found f = { .id = 0x600d };
	__u64 now = NOW;
	__u32 i, k = 0;

	if (!ASSERT_TRUE(t, "create"))
		return;
	for (i = 0; i < 500; i++, now += 1000)
		feed_at(t, 0xf0000000 + k++, (__u16)(65534 - i), rnd(1U << 31), now - 5000, now);
	for (i = 0; i < 20000; i++, now += 1000) {
		if (!ASSERT_TRUE(feed_at(t, 0x600d, (__u16)(i % 7), i / 7, now - 5000, now) <=
					 SEQ_IN_ORDER,
				 "the genuine run's frames are in order in its books"))
			break;
		if (i % 40 == 0) /* 500 more, among its frames */
			feed_at(t, 0xf0000000 + k++, 65534, rnd(1U << 31), now - 5000, now);
	}
	ASSERT_EQ(k, 1000, "a thousand claims");
	ASSERT_EQ(seqtrack_runs(&t, 1, find_run, &f), 1 + t->nprobation,
		  "the genuine run and the claims still on probation");
	ASSERT_EQ(t->stray_runs, 1000 - t->nprobation, "the others closed as strays");
	ASSERT_EQ(f.s.c.received, 20000, "the genuine run: every frame");
	ASSERT_EQ(f.s.c.lost, 0, "lost 0");
	ASSERT_EQ(f.s.reopened, 0, "its books were never closed");
	ASSERT_EQ(t->total.received, 20000, "the totals: the genuine run's");
	ASSERT_EQ(t->slots, 0, "no flow memory beyond the first tables");
	seqtrack__destroy(t);
}

/* A run of one flow keeps it inline: no table, whatever its id. */
static void test_flow_memory_follows_flows_seen(void)
{
	struct seqtrack *t = seqtrack__create(CLOCK_HERE);
	__u32 r, i;

	if (!ASSERT_TRUE(t, "create"))
		return;
	for (r = 0; r < SEQTRACK_RUNS_MAX; r++)
		for (i = 0; i < SEQTRACK_PROMOTE; i++)
			feed(t, 0xe0000000 + r, 65534, i);
	ASSERT_EQ(t->nruns, SEQTRACK_RUNS_MAX, "256 runs");
	ASSERT_EQ(t->nprobation, 0, "all shown to be runs");
	ASSERT_EQ(t->slots, 0, "no table grew");
	for (r = 0; r < SEQTRACK_RUNS_MAX; r++)
		if (!ASSERT_EQ(t->runs[r].slots, 0, "the one flow inline"))
			break;
	ASSERT_EQ(feed(t, 0xe0000000, 7, 0), SEQ_FIRST, "a second flow");
	ASSERT_EQ(t->runs[0].slots, SEQTRACK_FLOW_SLOTS_MIN, "the first table");
	ASSERT_EQ(feed(t, 0xe0000000, 65534, SEQTRACK_PROMOTE), SEQ_IN_ORDER,
		  "the inline flow moved into it");
	seqtrack__destroy(t);
}

/*
 * More flows than the slots hold: three runs of 65,535 flows each. A new flow
 * of the third waits for room (unplaced, in its run's books) until the
 * others go idle and are closed.
 */
static void test_flow_slots_cap(void)
{
	struct seqtrack *t = seqtrack__create(CLOCK_HERE);
	struct found f = { .id = 3 };
	__u32 r, i;

	if (!ASSERT_TRUE(t, "create"))
		return;
	for (r = 1; r <= 3; r++)
		for (i = 0; i < XDPSG_STAMP_FLOWS_MAX; i++)
			feed_at(t, r, (__u16)i, 0, NOW - 10, NOW);
	ASSERT_TRUE(t->slots <= SEQTRACK_FLOW_SLOTS_MAX, "the cap holds");
	ASSERT_EQ(seqtrack_runs(&t, 1, find_run, &f), 3, "three runs");
	ASSERT_GT(f.s.c.unplaced, 1000, "run 3's frames that found no room");
	ASSERT_EQ(f.s.c.unplaced, t->total.unplaced, "in run 3's books");
	ASSERT_EQ(f.s.c.received + f.s.c.unplaced, XDPSG_STAMP_FLOWS_MAX, "every frame counted");
	/* Runs 1 and 2 go idle: their books are closed for run 3's next flow. */
	ASSERT_EQ(feed_at(t, 3, XDPSG_STAMP_FLOWS_MAX - 1, 0, NOW + SEQTRACK_IDLE_NS,
			  NOW + SEQTRACK_IDLE_NS + 10),
		  SEQ_FIRST, "room once the others are idle");
	ASSERT_EQ(t->ndone, 1, "one run closed for it");
	ASSERT_EQ(t->done[0].c.received, XDPSG_STAMP_FLOWS_MAX, "with all its books");
	ASSERT_TRUE(t->slots <= SEQTRACK_FLOW_SLOTS_MAX, "the cap holds");
	seqtrack__destroy(t);
}

/*
 * A run that lost 50 frames is pushed out by 256 others: its books are
 * closed, final, and its 50 lost stay in every figure.
 */
static void test_closed_run_keeps_losses(void)
{
	struct seqtrack *t = seqtrack__create(CLOCK_HERE);
	struct found f = { .id = 0x50 };
	__u64 now = NOW;
	__u32 r, i;

	if (!ASSERT_TRUE(t, "create"))
		return;
	for (i = 0; i < 150; i++)
		if (i < 50 || i >= 100)
			feed_at(t, 0x50, 0, i, now - 5000, now);
	ASSERT_EQ(t->total.lost, 50, "50 lost");
	ASSERT_EQ(t->total.lost_final, 0, "not all of them final while open");
	now += 2 * SEQTRACK_IDLE_NS;
	for (r = 0; r < SEQTRACK_RUNS_MAX; r++, now += 1000)
		for (i = 0; i < SEQTRACK_PROMOTE; i++)
			feed_at(t, 0x1000 + r, 0, i, now - 5000, now);
	ASSERT_EQ(t->closed, 1, "one run's books closed");
	ASSERT_EQ(t->done[0].id, 0x50, "the idle one");
	ASSERT_EQ(t->total.lost, 50, "its losses in the totals");
	ASSERT_EQ(t->total.lost_final, 50, "closed: final");
	ASSERT_EQ(seqtrack_runs(&t, 1, find_run, &f), SEQTRACK_RUNS_MAX + 1, "every run reported");
	ASSERT_EQ(f.s.c.lost, 50, "and in its report");
	ASSERT_EQ(books(t).lost, 50, "and in the sum of every run's books");
	/* It comes back: new books, reopened, nothing counted between the pieces. */
	ASSERT_EQ(feed_at(t, 0x50, 0, 500, now - 5000, now), SEQ_FIRST, "reopened");
	f.runs = 0;
	seqtrack_runs(&t, 1, find_run, &f);
	ASSERT_EQ(f.s.reopened, 1, "said to be reopened");
	ASSERT_EQ(f.s.c.lost, 50, "its first piece's losses");
	ASSERT_EQ(f.s.c.missing_head, 0, "the second piece counts no head");
	seqtrack__destroy(t);
}

/*
 * More runs than slots over time: idle runs are closed first, oldest first;
 * closed books are reported; past SEQTRACK_DONE_MAX the closed run with the
 * fewest frames is folded, and a run seen again has its books reopened.
 */
static void test_closed_and_folded(void)
{
	struct seqtrack *t = seqtrack__create(CLOCK_HERE);
	struct seqtrack_summary fs;
	struct found f = { .id = 7 };
	__u64 now = NOW;
	__u32 r, i, n = SEQTRACK_RUNS_MAX + SEQTRACK_DONE_MAX + 10;

	if (!ASSERT_TRUE(t, "create"))
		return;
	/* Runs one after another, 2 s apart, run r with r + 8 frames. */
	for (r = 0; r < n; r++, now += 2 * SEQTRACK_IDLE_NS)
		for (i = 0; i < r + 8; i++)
			feed_at(t, r, 0, i, now - 100, now);
	ASSERT_EQ(t->nruns, SEQTRACK_RUNS_MAX, "open");
	ASSERT_EQ(t->ndone, SEQTRACK_DONE_MAX, "closed");
	ASSERT_EQ(t->folded_runs, 10, "folded");
	ASSERT_EQ(seqtrack_folded(&t, 1, &fs, NULL), 10, "folded, reported");
	ASSERT_EQ(fs.c.received, 8 * 10 + 45, "the ten smallest, in the folded books");
	ASSERT_EQ(seqtrack_runs(&t, 1, find_run, &f), n - 10, "the rest one by one");
	ASSERT_EQ(f.s.c.received, 0, "run 7 is among the folded");
	f.id = 200;
	seqtrack_runs(&t, 1, find_run, &f);
	ASSERT_EQ(f.s.c.received, 208, "a closed run's books are whole");
	/* Run 200 comes back: new books, reported as reopened and merged. */
	for (i = 0; i < 8; i++)
		feed_at(t, 200, 0, 208 + i, now - 100, now);
	f.runs = 0;
	ASSERT_EQ(seqtrack_runs(&t, 1, find_run, &f), n - 11,
		  "one entry per run (its opening closed one more, and folded one more)");
	ASSERT_EQ(t->folded_runs, 11, "folded");
	ASSERT_EQ(f.s.c.received, 216, "both pieces");
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
/*
 * A flow's END marks on one queue, its frames on another (the kernel steers
 * them apart): one flow, lost only what the frames' queue did not see
 * before the end. Flow 0: 500 announced, all 500 came (on b); flow 1: 500
 * announced, 450 came: 50 lost at the end. Flow 2: 300 announced, 290 came
 * on b, its END marks on both queues (and on c, a third): the 10 once.
 */
static void test_ends_across_queues(void)
{
	struct seqtrack *a = seqtrack__create(CLOCK_HERE), *b = seqtrack__create(CLOCK_HERE);
	struct seqtrack *d = seqtrack__create(CLOCK_HERE);
	struct collected c = { 0 };
	__u32 i;

	if (!ASSERT_TRUE(a && b && d, "create"))
		goto out;
	start_mark(a, 7);
	for (i = 0; i < 500; i++) {
		feed(b, 7, 0, i);
		if (i < 450)
			feed(b, 7, 1, i);
	}
	for (i = 0; i < 290; i++)
		feed(b, 7, 2, i);
	ASSERT_EQ(end_mark(a, 7, 0, 500), SEQ_MARK, "flow 0's end, on a");
	ASSERT_EQ(end_mark(a, 7, 1, 500), SEQ_MARK, "flow 1's end, on a");
	ASSERT_EQ(end_mark(a, 7, 2, 300), SEQ_MARK, "flow 2's end, on a");
	ASSERT_EQ(end_mark(b, 7, 2, 300), SEQ_MARK, "and on b");
	ASSERT_EQ(end_mark(d, 7, 2, 300), SEQ_MARK, "and on d");
	ASSERT_EQ(seqtrack_runs((struct seqtrack *const[]){ a, b, d }, 3, collect, &c), 1,
		  "one run");
	ASSERT_EQ(c.s[0].c.received, 1240, "received");
	ASSERT_EQ(c.s[0].c.lost, 60, "lost: flow 1's last 50, flow 2's last 10");
	ASSERT_EQ(c.s[0].c.lost_at_end, 60, "all of them at the end");
	ASSERT_EQ(c.s[0].flows, 3, "three flows, not six");
	ASSERT_EQ(c.s[0].mk.flows_ended, 3, "each ended once");
out:
	seqtrack__destroy(a);
	seqtrack__destroy(b);
	seqtrack__destroy(d);
}

static void test_merge(void)
{
	struct seqtrack *a = seqtrack__create(CLOCK_HERE), *b = seqtrack__create(CLOCK_HERE);
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
	sum = books(a);
	seqtrack_counts_merge(&sum, &(struct seqtrack_counts){ 0 });
	{
		struct seqtrack_counts cb = books(b);

		seqtrack_counts_merge(&sum, &cb);
	}
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
	ASSERT_EQ(c.lat[0], 0, "run 1: no mark named its clock, no latency");
	ASSERT_EQ(c.s[1].c.received, 2, "run 2");
	ASSERT_EQ(c.s[2].c.received, 1, "run 3");
	ASSERT_STREQ(seqtrack_verdict_str(SEQ_REORDERED), "reordered", "verdict name");
	ASSERT_STREQ(seqtrack_verdict_str(SEQ_MARK), "mark", "verdict name");
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
 * RFC 3550 A.8's integer update, written from the RFC: jitter is kept times
 * 16, and each step adds |D| - ((jitter + 8) >> 4), the +8 rounding the
 * shift to nearest.
 */
static __u64 rfc3550_a8(const __u64 *transit, unsigned int n)
{
	__u64 jitter = 0;
	unsigned int i;

	for (i = 1; i < n; i++) {
		__s64 d = (__s64)(transit[i] - transit[i - 1]);

		if (d < 0)
			d = -d;
		jitter += (__u64)d - ((jitter + 8) >> 4);
	}
	return jitter;
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
	ASSERT_EQ_U64(swing.j16, rfc3550_a8(transit, 200),
		      "J x 16 exactly as RFC 3550 A.8 keeps it");
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
	struct seqtrack *a = seqtrack__create(CLOCK_HERE), *b = seqtrack__create(CLOCK_HERE);
	struct collected c = { 0 };
	struct hist *all = malloc(sizeof(*all));
	double j_all = 0;
	__u32 i;

	if (!ASSERT_TRUE(a && b && all, "create"))
		goto out;
	/* Run 1 on two queues: delay 5 us throughout. Run 2, after it: 50 us and 5 us in turn. */
	for (i = 0; i < 100; i++) {
		struct stamp st = {
			.run = 1, .flow = 0, .seq = i, .ticks = stamp_ticks(T0 + i * 1024ULL)
		};
		struct stamp bu = {
			.run = 2, .flow = 0, .seq = i, .ticks = stamp_ticks(T0 + i * 1024ULL)
		};

		seqtrack_update(i % 2 ? a : b, &st, T0 + i * 1024ULL + 5000);
		st.flow = 1;
		seqtrack_update(b, &st, T0 + i * 1024ULL + 5000);
		seqtrack_update(a, &bu, T0 + i * 1024ULL + (i % 2 ? 5000 : 50000));
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
	struct seqtrack *t = seqtrack__create(CLOCK_HERE);
	struct collected c = { 0 };
	__u32 i, timed = 0;

	if (!ASSERT_TRUE(t, "create"))
		return;
	start_mark(t, 7); /* on this sink's clock */
	for (i = 0; i < 200; i++) {
		struct stamp st = {
			.run = 7, .flow = 0, .seq = i, .ticks = stamp_ticks(T0 + i * 1024ULL)
		};
		bool on = i % 16 == 0;

		if (i == 100)
			continue; /* lost, among the untimed */
		/* The untimed ones are read 1 ms late: in no figure if they are left out. */
		seqtrack_update_timed(t, &st, T0 + i * 1024ULL + (on ? 5000 : 1000000), on);
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
	/* send times tick-aligned: the tick's middle is 64 ns after them */
	ASSERT_EQ(t->live.sum, timed * (5000ULL - STAMP_TICK_NS / 2), "at their latency");
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
	TEST_CASE(head),
	TEST_CASE(never_back),
	TEST_CASE(end_marks),
	TEST_CASE(clock_named),
	TEST_CASE(time_unwrap),
	TEST_CASE(burst),
	TEST_CASE(many_flows),
	TEST_CASE(channel),
	TEST_CASE(jitter_math),
	TEST_CASE(jitter_runs),
	TEST_CASE(merge),
	TEST_CASE(ends_across_queues),
	TEST_CASE(claims_cannot_push_out),
	TEST_CASE(flow_memory_follows_flows_seen),
	TEST_CASE(flow_slots_cap),
	TEST_CASE(closed_run_keeps_losses),
	TEST_CASE(closed_and_folded),
};

TEST_MAIN("seqtrack", cases)
