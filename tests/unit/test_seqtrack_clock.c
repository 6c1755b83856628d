// SPDX-License-Identifier: GPL-2.0
/*
 * The clocks a run may be stamped on (xdp-gen --clock) against the sink's
 * (clockid.h's clock_set): one clock, two synchronised ones, two that are not,
 * another host's CLOCK_MONOTONIC; and a run whose frames arrived before the
 * mark that named its clock.
 */
#include <stddef.h>
#include <stdlib.h>

#include "measure/seqtrack.h"
#include "test.h"

#define S1 1000000000ULL
#define NOW (10 * S1) /* the sink's receive times: its CLOCK_MONOTONIC */
#define MONO_HERE 0x1111ULL
#define TAI_HERE 0x2222ULL
#define REAL_HERE 0x3333ULL
#define TAI_SHIFT (1700000000ULL * S1 + 37 * S1 + 123456789ULL) /* TAI - this sink's monotonic */
#define REAL_SHIFT (1700000000ULL * S1 + 123456789ULL)
#define TRANSIT 5000ULL /* every frame's one-way latency, ns */
#define SINK_MAXERR_US 40

static void clocks_here(struct clock_set *cs, bool synced)
{
	*cs = (struct clock_set){ .id = { MONO_HERE, TAI_HERE, REAL_HERE },
				  .shift_ns = { 0, TAI_SHIFT, REAL_SHIFT },
				  .synced = synced,
				  .maxerror_us = SINK_MAXERR_US };
}

static struct seqtrack *tracker(bool synced)
{
	struct seqtrack *t = seqtrack__create(MONO_HERE);
	struct clock_set cs;

	if (t) {
		clocks_here(&cs, synced);
		seqtrack_clocks(t, &cs);
	}
	return t;
}

/* A START mark of run on clock c (of id), sent at gen_ns on it, received at now. */
static void start_mark(struct seqtrack *t, __u32 run, enum xdpsg_clock c, __u64 id, bool synced,
		       __u32 err_us, __u64 gen_ns, __u64 now)
{
	struct stamp st = { .run = run, .flow = XDPSG_MARK_FLOW, .ticks = stamp_ticks(gen_ns) };

	st.mark = (struct xdpsg_mark){ .kind = XDPSG_MARK_START,
				       .clock = (__u8)c,
				       .flags = synced ? XDPSG_MARK_F_SYNCED : 0,
				       .clock_ns = gen_ns,
				       .clock_id = id,
				       .sync_error_us = err_us,
				       .nflows = 1 };
	seqtrack_mark(t, &st, now);
}

/* Frame seq of run, received at now, sent TRANSIT before on a clock 'shift' ahead. */
static void frame(struct seqtrack *t, __u32 run, __u32 seq, __u64 shift, __u64 now)
{
	struct stamp st = { .run = run, .seq = seq, .ticks = stamp_ticks(now + shift - TRANSIT) };

	seqtrack_update(t, &st, now);
}

struct runs {
	unsigned int n;
	struct seqtrack_summary s[8];
	struct hist_summary lat[8];
};

static void collect(const struct seqtrack_summary *s, const struct hist *lat, void *ctx)
{
	struct runs *r = ctx;

	if (r->n < 8) {
		r->s[r->n] = *s;
		hist_summarize(lat, &r->lat[r->n]);
	}
	r->n++;
}

/* The latency is TRANSIT, to the histogram's precision and half a tick. */
static bool transit_right(const struct hist_summary *h)
{
	return h->min + 200 >= TRANSIT && h->max <= TRANSIT + TRANSIT / 50 + 200;
}

/*
 * One tracker, five runs: TAI of this kernel (one clock: error 0); TAI of
 * another host, both synchronised (timed, the two bounds added); the same with
 * the generator's clock not synchronised; another host's CLOCK_MONOTONIC; and
 * REALTIME of this kernel.
 */
static void test_clock_kinds(void)
{
	struct seqtrack *t = tracker(true);
	struct runs r = { 0 };
	__u32 i;

	if (!ASSERT_TRUE(t, "create"))
		return;
	start_mark(t, 1, XDPSG_CLOCK_TAI, TAI_HERE, false, 0, NOW + TAI_SHIFT - TRANSIT, NOW);
	start_mark(t, 2, XDPSG_CLOCK_TAI, 0xabc, true, 10, NOW + TAI_SHIFT - TRANSIT, NOW);
	start_mark(t, 3, XDPSG_CLOCK_TAI, 0xabc, false, 10, NOW + TAI_SHIFT - TRANSIT, NOW);
	start_mark(t, 4, XDPSG_CLOCK_MONOTONIC, 0xdef, true, 10, NOW + 86400 * S1, NOW);
	start_mark(t, 5, XDPSG_CLOCK_REALTIME, REAL_HERE, false, 0, NOW + REAL_SHIFT - TRANSIT,
		   NOW);
	for (i = 0; i < 100; i++) {
		__u64 rx = NOW + 1000 + i * 10000ULL;

		frame(t, 1, i, TAI_SHIFT, rx);
		frame(t, 2, i, TAI_SHIFT, rx);
		frame(t, 3, i, TAI_SHIFT, rx);
		frame(t, 4, i, 86400 * S1, rx);
		frame(t, 5, i, REAL_SHIFT, rx);
	}
	ASSERT_EQ(seqtrack_runs(&t, 1, collect, &r), 5, "five runs");
	ASSERT_EQ(r.s[0].mk.state, SEQTRACK_CLOCK_SAME, "run 1: this kernel's TAI");
	ASSERT_EQ(r.lat[0].count, 100, "run 1: timed");
	ASSERT_TRUE(transit_right(&r.lat[0]), "run 1: the latency on TAI");
	ASSERT_EQ_U64(r.s[0].mk.sync_error_ns, 0, "run 1: one clock, no error");
	ASSERT_EQ(r.s[1].mk.state, SEQTRACK_CLOCK_SYNCED, "run 2: two synchronised clocks");
	ASSERT_EQ(r.lat[1].count, 100, "run 2: timed");
	ASSERT_TRUE(transit_right(&r.lat[1]), "run 2: the latency on TAI");
	ASSERT_EQ_U64(r.s[1].mk.sync_error_ns, (10 + SINK_MAXERR_US) * 1000ULL,
		      "run 2: both ends' error bounds");
	ASSERT_EQ(r.s[2].mk.state, SEQTRACK_CLOCK_OTHER, "run 3: the generator's not synchronised");
	ASSERT_EQ(r.s[2].mk.why, SEQTRACK_WHY_GEN_UNSYNCED, "run 3: why");
	ASSERT_EQ(r.lat[2].count, 0, "run 3: no latency");
	ASSERT_EQ(r.s[2].c.received, 100, "run 3: its books hold");
	ASSERT_EQ(r.s[3].mk.state, SEQTRACK_CLOCK_OTHER, "run 4: another host's monotonic");
	ASSERT_EQ(r.s[3].mk.why, SEQTRACK_WHY_MONOTONIC, "run 4: why");
	ASSERT_EQ(r.lat[3].count, 0, "run 4: no latency");
	ASSERT_EQ(r.s[4].mk.state, SEQTRACK_CLOCK_SAME, "run 5: this kernel's realtime");
	ASSERT_TRUE(transit_right(&r.lat[4]), "run 5: the latency on realtime");
	ASSERT_EQ(t->live.count, 300, "the live histogram: the three timed runs");
	seqtrack__destroy(t);
}

/* A sink whose own clock is not synchronised times no run of another host's. */
static void test_clock_sink_unsynced(void)
{
	struct seqtrack *t = tracker(false);
	struct runs r = { 0 };
	__u32 i;

	if (!ASSERT_TRUE(t, "create"))
		return;
	start_mark(t, 1, XDPSG_CLOCK_TAI, 0xabc, true, 10, NOW + TAI_SHIFT - TRANSIT, NOW);
	start_mark(t, 2, XDPSG_CLOCK_TAI, 0xabc, false, 10, NOW + TAI_SHIFT - TRANSIT, NOW);
	start_mark(t, 3, XDPSG_CLOCK_TAI, TAI_HERE, false, 0, NOW + TAI_SHIFT - TRANSIT, NOW);
	for (i = 0; i < 50; i++) {
		frame(t, 1, i, TAI_SHIFT, NOW + 1000 + i * 10000ULL);
		frame(t, 2, i, TAI_SHIFT, NOW + 1000 + i * 10000ULL);
		frame(t, 3, i, TAI_SHIFT, NOW + 1000 + i * 10000ULL);
	}
	ASSERT_EQ(seqtrack_runs(&t, 1, collect, &r), 3, "three runs");
	ASSERT_EQ(r.s[0].mk.state, SEQTRACK_CLOCK_OTHER, "run 1: this sink is not synchronised");
	ASSERT_EQ(r.s[0].mk.why, SEQTRACK_WHY_SINK_UNSYNCED, "run 1: why");
	ASSERT_EQ(r.s[1].mk.why, SEQTRACK_WHY_UNSYNCED, "run 2: neither is");
	ASSERT_EQ(r.lat[0].count + r.lat[1].count, 0, "no latency for either");
	ASSERT_EQ(r.s[2].mk.state, SEQTRACK_CLOCK_SAME, "run 3: one clock needs no sync");
	ASSERT_EQ(r.lat[2].count, 50, "run 3: timed");
	seqtrack__destroy(t);
}

/*
 * Frames stamped on TAI that arrive before the mark naming the clock were
 * placed on the sink's monotonic clock: the mark moves them. The send times
 * keep their gaps, the latencies after the mark are right, and none of the
 * earlier guesses (off by the clocks' difference) is in the figures.
 */
static void test_clock_named_late(void)
{
	struct seqtrack *t = tracker(true);
	struct runs r = { 0 };
	__u32 i;

	if (!ASSERT_TRUE(t, "create"))
		return;
	for (i = 0; i < 20; i++)
		frame(t, 1, i, TAI_SHIFT, NOW + i * 10000ULL);
	start_mark(t, 1, XDPSG_CLOCK_TAI, TAI_HERE, false, 0, NOW + 200000 + TAI_SHIFT - TRANSIT,
		   NOW + 200000);
	for (; i < 100; i++)
		frame(t, 1, i, TAI_SHIFT, NOW + i * 10000ULL);
	ASSERT_EQ(seqtrack_runs(&t, 1, collect, &r), 1, "one run");
	ASSERT_EQ(r.s[0].mk.state, SEQTRACK_CLOCK_SAME, "this kernel's TAI");
	ASSERT_EQ(r.s[0].c.received, 100, "every frame booked");
	ASSERT_EQ(r.s[0].c.lost, 0, "none lost");
	ASSERT_TRUE(r.lat[0].count >= 80, "the frames after the mark timed");
	ASSERT_TRUE(transit_right(&r.lat[0]), "every latency figured on TAI");
	ASSERT_TRUE(r.s[0].last_ts - r.s[0].first_ts + 200 >= 99 * 10000ULL &&
			    r.s[0].last_ts - r.s[0].first_ts <= 99 * 10000ULL + 200,
		    "the send times keep their gaps");
	ASSERT_TRUE(r.s[0].first_ts + 200 >= NOW + TAI_SHIFT - TRANSIT &&
			    r.s[0].first_ts <= NOW + TAI_SHIFT - TRANSIT + 200,
		    "and sit on TAI");
	ASSERT_TRUE(r.s[0].ipdv.max < 400, "the delay variation: steady");
	seqtrack__destroy(t);
}

/*
 * The START mark before any frame, as xdp-gen sends it: the send times span
 * the frames (a mark's arrival is no send time), so the rate is the frames'.
 */
static void test_mark_first_send_span(void)
{
	struct seqtrack *t = tracker(true);
	struct runs r = { 0 };
	__u32 i;

	if (!ASSERT_TRUE(t, "create"))
		return;
	start_mark(t, 1, XDPSG_CLOCK_MONOTONIC, MONO_HERE, false, 0, NOW - TRANSIT, NOW);
	for (i = 0; i < 100; i++)
		frame(t, 1, i, 0, NOW + 1000000 + i * 10000ULL);
	ASSERT_EQ(seqtrack_runs(&t, 1, collect, &r), 1, "one run");
	ASSERT_TRUE(r.s[0].first_ts + 200 >= NOW + 1000000 - TRANSIT &&
			    r.s[0].first_ts <= NOW + 1000000 - TRANSIT + 200,
		    "the first frame's send time");
	ASSERT_TRUE(r.s[0].last_ts - r.s[0].first_ts + 200 >= 99 * 10000ULL &&
			    r.s[0].last_ts - r.s[0].first_ts <= 99 * 10000ULL + 200,
		    "the send times span the frames");
	ASSERT_EQ(r.s[0].first_rx, NOW, "received from the mark on");
	seqtrack__destroy(t);
}

static const struct test_case cases[] = {
	TEST_CASE(mark_first_send_span),
	TEST_CASE(clock_kinds),
	TEST_CASE(clock_sink_unsynced),
	TEST_CASE(clock_named_late),
};

TEST_MAIN("seqtrack_clock", cases)
