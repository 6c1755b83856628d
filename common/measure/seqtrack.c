// SPDX-License-Identifier: GPL-2.0
/*
 * The books, frame by frame (seqtrack.h says what they keep and why): the
 * sequence window, the end marks, send times and latency. Where the books
 * live, and runs open and close, is seqtrack_runs.c's; the merges for
 * reports seqtrack_sum.c's.
 */
#include <stddef.h>
#include <string.h>

#include "measure/seqtrack_episodes.h"
#include "measure/seqtrack_runs.h"

/*
 * Window bitmap helpers; the window is 128 bits in two words. A shift by n
 * drops the bits at 128 - n and up: it returns how many of them were set
 * (numbers counted missing that no late frame can take back any more).
 */
static __u32 win_shift(__u64 *m, __u32 n)
{
	__u32 out;

	if (n == 1) { /* in order: the common case, and popcount is a call without -mpopcnt */
		out = (__u32)(m[1] >> 63);
		m[1] = (m[1] << 1) | (m[0] >> 63);
		m[0] <<= 1;
	} else if (n >= 128) {
		out = (__u32)(__builtin_popcountll(m[0]) + __builtin_popcountll(m[1]));
		m[0] = m[1] = 0;
	} else if (n >= 64) {
		out = (__u32)__builtin_popcountll(m[1]);
		if (n > 64)
			out += (__u32)__builtin_popcountll(m[0] >> (128 - n));
		m[1] = m[0] << (n - 64);
		m[0] = 0;
	} else if (n) {
		out = (__u32)__builtin_popcountll(m[1] >> (64 - n));
		m[1] = (m[1] << n) | (m[0] >> (64 - n));
		m[0] <<= n;
	} else {
		out = 0;
	}
	return out;
}

/* Set bits 1..k (k <= 127). */
static void win_mark(__u64 *m, __u32 k)
{
	if (k == 0)
		return;
	if (k <= 63) {
		m[0] |= ((1ULL << k) - 1) << 1;
		return;
	}
	m[0] |= ~1ULL;
	m[1] |= k - 63 == 64 ? ~0ULL : (1ULL << (k - 63)) - 1;
}

/* Set bits at positions p0 and up (p0 <= 128). */
static __u32 win_count_from(const __u64 *m, __u32 p0)
{
	if (p0 >= 128)
		return 0;
	if (p0 >= 64)
		return (__u32)__builtin_popcountll(m[1] >> (p0 - 64));
	return (__u32)(__builtin_popcountll(m[0] >> p0) + __builtin_popcountll(m[1]));
}

static bool win_test_clear(__u64 *m, __u32 b)
{
	__u64 bit = 1ULL << (b & 63);
	__u64 *w = &m[b >> 6];
	bool was = *w & bit;

	*w &= ~bit;
	return was;
}

/* ---------------------------------------------------------------------------
 * Sequence numbers
 */

/* Frames of the flow's end still to come: from expected up to the END mark's count. */
static __u32 flow_tail(const struct seqtrack_flow *fs)
{
	__s32 d;

	if (!(fs->flags & SEQTRACK_FLOW_END) ||
	    ((fs->flags & SEQTRACK_FLOW_NO_HEAD) && !(fs->flags & SEQTRACK_FLOW_DATA)))
		return 0;
	d = (__s32)(fs->end - fs->expected);
	return d > 0 ? (__u32)d : 0;
}

/*
 * Of the set bits a shift by n drops, those of numbers before the flow's
 * first frame (at window positions expected - first and up): missing at the
 * head, not lost.
 */
static __u32 head_dropped(struct seqtrack_flow *fs, __u32 n)
{
	__u32 h = fs->expected - fs->first, from = n >= 128 ? 0 : 128 - n;

	if (!(fs->flags & SEQTRACK_FLOW_HEAD))
		return 0;
	if (h >= 128) {
		fs->flags &= (__u8)~SEQTRACK_FLOW_HEAD;
		return 0;
	}
	return win_count_from(fs->missing, h > from ? h : from);
}

static enum seqtrack_verdict ahead(struct seqtrack_counts *c, struct seqtrack_flow *fs, __u32 seq,
				   __u32 d, bool head)
{
	__u32 tail = flow_tail(fs), t2, hd = head ? 0 : head_dropped(fs, d + 1);

	if (head)
		c->missing_head += d;
	else
		c->lost += d;
	/* d < 2^31: no overflow. Numbers of the gap beyond the window are final at once. */
	c->lost_final += win_shift(fs->missing, d + 1) - hd;
	if (d > SEQTRACK_WINDOW - 1 && !head)
		c->lost_final += d - (SEQTRACK_WINDOW - 1);
	win_mark(fs->missing, d < SEQTRACK_WINDOW - 1 ? d : SEQTRACK_WINDOW - 1);
	fs->span = d >= (__u32)(SEQTRACK_WINDOW - fs->span) ? SEQTRACK_WINDOW : fs->span + d + 1;
	fs->expected = seq + 1;
	if (head && d)
		fs->flags |= SEQTRACK_FLOW_HEAD;
	/* What the end mark had counted lost after the last frame, these numbers take over. */
	t2 = flow_tail(fs);
	c->lost -= tail - t2;
	c->lost_at_end -= tail - t2;
	return d ? SEQ_GAP : SEQ_IN_ORDER;
}

static enum seqtrack_verdict behind(struct seqtrack_counts *c, struct seqtrack_flow *fs, __u32 seq)
{
	__u32 back = fs->expected - 1 - seq;

	if (back >= fs->span) {
		c->late++;
		return SEQ_LATE;
	}
	if (win_test_clear(fs->missing, back)) {
		/* before the flow's first frame: it was missing, not lost */
		if ((__s32)(seq - fs->first) < 0 && !(fs->flags & SEQTRACK_FLOW_NO_HEAD))
			c->missing_head--;
		else
			c->lost--;
		c->reordered++;
		return SEQ_REORDERED;
	}
	c->duplicates++;
	return SEQ_DUPLICATE;
}

/*
 * The sequence verdict of a data frame sent at ts, its counts in r's books and
 * its loss episodes in its flow's.
 */
static enum seqtrack_verdict sequence(struct seqtrack_run *r, struct seqtrack_flow *fs, __u32 seq,
				      __u64 ts, unsigned int keep)
{
	struct seqtrack_counts *c = &r->c;
	enum seqtrack_verdict v;
	__u32 d;

	c->received++;
	if (!(fs->flags & SEQTRACK_FLOW_DATA)) {
		fs->flags |= SEQTRACK_FLOW_DATA;
		fs->first = seq;
		fs->last_ts = ts;
		if (fs->flags & SEQTRACK_FLOW_NO_HEAD) {
			/* reopened books: this frame is the baseline, nothing before it is known */
			fs->expected = seq + 1;
			fs->span = 1;
			return SEQ_FIRST;
		}
		/*
		 * Sequence numbers start at 0: the numbers before are missing at
		 * the head, or lost if the flow's end mark came first (the sink
		 * was listening then).
		 */
		fs->expected = 0;
		ahead(c, fs, seq, seq, !(fs->flags & SEQTRACK_FLOW_END));
		return SEQ_FIRST;
	}
	d = seq - fs->expected;
	if ((__s32)d >= 0) {
		if (d)
			seqtrack_episode_open(r, fs, seq, d, ts, keep);
		fs->last_ts = ts;
		return ahead(c, fs, seq, d, false);
	}
	v = behind(c, fs, seq);
	/* Numbers before the flow's first frame are in no episode. */
	if (v == SEQ_REORDERED && (__s32)(seq - fs->first) >= 0)
		seqtrack_episode_reordered(r, fs, seq, ts, keep);
	return v;
}

/* ---------------------------------------------------------------------------
 * Send times, latency, pacing
 */

/*
 * The full send time of a frame of r: the stamp's 24-bit ticks placed, from
 * the newest frame's, where the receive times' gap says (a run's frames
 * keep their gaps however long it goes and whatever clock it is on). The
 * first frame's is the tick before its receive time.
 */
static __u64 send_time(struct seqtrack_run *r, __u32 ticks, __u64 now)
{
	__u64 tick, d;
	__s64 expect, k;

	if (!r->anchor_rx) {
		tick = stamp_time(ticks, now) >> XDPSG_STAMP_TICK_SHIFT;
	} else {
		d = (ticks - r->anchor_tick) & XDPSG_STAMP_TS_MASK;
		expect = (__s64)(now - r->anchor_rx) / (__s64)STAMP_TICK_NS;
		/* the multiple of the wrap that brings d nearest the gap */
		k = (expect - (__s64)d + (1LL << (XDPSG_STAMP_TS_BITS - 1))) >> XDPSG_STAMP_TS_BITS;
		tick = r->anchor_tick + d + (__u64)k * (1ULL << XDPSG_STAMP_TS_BITS);
	}
	if (!r->anchor_rx || (__s64)(tick - r->anchor_tick) > 0) {
		r->anchor_tick = tick;
		r->anchor_rx = now;
	}
	return (tick << XDPSG_STAMP_TICK_SHIFT) + STAMP_TICK_NS / 2;
}

/* A timed frame's transit (receive - send) into the run's delay figures. */
static void note_transit(struct seqtrack *t, struct seqtrack_run *r, __u64 transit)
{
	__u64 d;

	if (r->probation) {
		if (r->nearly < SEQTRACK_EARLY)
			r->early[r->nearly++] = transit;
		return;
	}
	if (jitter_update(&r->jit, transit, &d))
		hist_record(r->ipdv, d);
	/* the latency only where it may be this sink's clock; the live export only where it is */
	if (r->mk.state != SEQTRACK_CLOCK_OTHER)
		hist_record(r->latency, (__s64)transit < 0 ? 0 : transit);
	if (seqtrack_clock_timed(r->mk.state))
		hist_coarse_record(&t->live, (__s64)transit < 0 ? 0 : transit);
}

/* Returns the frame's send time, on the run's clock. */
static __u64 note_times(struct seqtrack *t, struct seqtrack_run *r, __u32 ticks, __u64 now,
			bool timed)
{
	__u64 cnow = now + r->shift; /* the receive time on the run's clock */
	__u64 ts = send_time(r, ticks, cnow), slot = ts / SEQTRACK_BURST_NS;

	/* The first data frame; a mark may have come first (its time is no send time). */
	if (!r->first_rx)
		r->first_rx = now;
	if (!r->first_ts) {
		r->first_ts = r->last_ts = ts;
		r->burst_slot = slot;
	}
	r->first_ts = ts < r->first_ts ? ts : r->first_ts;
	r->last_ts = ts > r->last_ts ? ts : r->last_ts;
	r->last_rx = now;
	if (timed)
		note_transit(t, r, cnow - ts);
	else
		r->c.untimed++;
	if (slot == r->burst_slot) {
		r->burst_n++;
	} else if (slot > r->burst_slot) {
		r->burst_slot = slot;
		r->burst_n = 1;
	}
	if (r->burst_n > r->burst_max)
		r->burst_max = r->burst_n;
	return ts;
}

/* ---------------------------------------------------------------------------
 * Frames in
 */

/* The totals follow the books of runs off probation: add what a frame changed. */
static void totals_follow(struct seqtrack *t, const struct seqtrack_run *r,
			  const struct seqtrack_counts *before)
{
	const __u64 *a = (const __u64 *)&r->c, *b = (const __u64 *)before;
	__u64 *tot = (__u64 *)&t->total;
	unsigned int i;

	if (r->probation)
		return;
	for (i = 0; i < sizeof(r->c) / sizeof(__u64); i++)
		tot[i] += a[i] - b[i];
}

static struct seqtrack_run *run_get(struct seqtrack *t, __u32 id, __u64 now)
{
	struct seqtrack_run *r = seqtrack_run_find(t, id);

	return r ? r : seqtrack_run_open(t, id, now);
}

enum seqtrack_verdict seqtrack_update_timed(struct seqtrack *t, const struct stamp *st, __u64 now,
					    bool timed)
{
	struct seqtrack_run *r = run_get(t, st->run, now);
	struct seqtrack_counts before;
	struct seqtrack_flow *fs;
	enum seqtrack_verdict v;

	fs = seqtrack_flow_of(t, &r, st->flow, now);
	if (!fs) {
		r->c.unplaced++;
		if (!r->probation)
			t->total.unplaced++;
		return SEQ_UNPLACED;
	}
	before = r->c;
	r->flows_data += !(fs->flags & SEQTRACK_FLOW_DATA);
	v = sequence(r, fs, st->seq, note_times(t, r, st->ticks, now, timed), t->episodes_keep);
	if (v == SEQ_GAP)
		t->last_gap = (struct seqtrack_gap){
			.first = fs->ep_first,
			.frames = fs->ep_frames,
			.outage_ns = episode_outage(fs->ep_before, fs->ep_after, fs->ep_frames),
		};
	if (r->probation && r->c.received >= SEQTRACK_PROMOTE)
		seqtrack_run_promote(t, r);
	else
		totals_follow(t, r, &before);
	return v;
}

/*
 * The run turns out to be on another clock than its frames so far were
 * placed on (they came before its first mark): move its anchor and send
 * times there. The gaps between frames hold on any clock; the latencies kept
 * do not, and go. The early transits move with the clocks' difference.
 */
static void run_reclock(struct seqtrack_run *r, __u64 shift)
{
	__u64 d = shift - r->shift, tick;
	__s64 moved = 0;
	unsigned int i;

	if (!d)
		return;
	r->shift = shift;
	if (r->anchor_rx) {
		r->anchor_rx += d;
		tick = stamp_time((__u32)r->anchor_tick & XDPSG_STAMP_TS_MASK, r->anchor_rx) >>
		       XDPSG_STAMP_TICK_SHIFT;
		moved = (__s64)((tick - r->anchor_tick) << XDPSG_STAMP_TICK_SHIFT);
		r->anchor_tick = tick;
		r->first_ts += (__u64)moved;
		r->last_ts += (__u64)moved;
		r->burst_slot = r->last_ts / SEQTRACK_BURST_NS;
	}
	for (i = 0; i < r->nearly; i++)
		r->early[i] += d - (__u64)moved;
	r->jit.last += d - (__u64)moved;
	if (r->latency)
		hist_init(r->latency);
}

/* What a mark says of the clock its run is stamped on, against this sink's. */
static void mark_clock(struct seqtrack *t, struct seqtrack_run *r, const struct xdpsg_mark *m,
		       __u64 now)
{
	bool known = m->clock < XDPSG_CLOCK_N, gen_synced = !!(m->flags & XDPSG_MARK_F_SYNCED);
	__u64 shift = known ? t->clk.shift_ns[m->clock] : 0;
	enum seqtrack_clock s = SEQTRACK_CLOCK_OTHER;
	__u8 why = SEQTRACK_WHY_NONE;

	if (known && m->clock_id == t->clk.id[m->clock]) {
		s = SEQTRACK_CLOCK_SAME;
		r->mk.sync_error_ns = 0;
	} else if (!known || m->clock == XDPSG_CLOCK_MONOTONIC) {
		why = SEQTRACK_WHY_MONOTONIC;
	} else if (gen_synced && t->clk.synced) {
		s = SEQTRACK_CLOCK_SYNCED;
		r->mk.sync_error_ns = ((__u64)m->sync_error_us + t->clk.maxerror_us) * 1000ULL;
	} else {
		why = !gen_synced && !t->clk.synced ? SEQTRACK_WHY_UNSYNCED :
		      !gen_synced		    ? SEQTRACK_WHY_GEN_UNSYNCED :
						      SEQTRACK_WHY_SINK_UNSYNCED;
	}
	r->mk.clock = m->clock;
	r->mk.synced = gen_synced;
	r->mk.sync_error_us = m->sync_error_us;
	r->mk.offset_ns = (__s64)(m->clock_ns - (now + shift));
	r->mk.why = why;
	if (s == SEQTRACK_CLOCK_OTHER && r->mk.state != SEQTRACK_CLOCK_OTHER && r->latency)
		hist_init(r->latency); /* what was kept on the chance it was ours, it is not */
	if (seqtrack_clock_timed(s))
		run_reclock(r, shift);
	r->mk.state = (__u8)s;
	if (m->nflows > r->mk.nflows)
		r->mk.nflows = m->nflows;
}

/* An END mark: the flow's count, and what is still missing after its last frame. */
static void mark_end(struct seqtrack_run *r, struct seqtrack_flow *fs, const struct xdpsg_mark *m)
{
	__u32 end = (__u32)m->flow_frames, tail;

	if (m->run_frames && r->mk.run_frames && m->run_frames != r->mk.run_frames)
		r->mk.conflicts++;
	else if (m->run_frames)
		r->mk.run_frames = m->run_frames;
	if (fs->flags & SEQTRACK_FLOW_END) {
		r->mk.conflicts += fs->end != end;
		return;
	}
	fs->flags |= SEQTRACK_FLOW_END;
	fs->end = end;
	r->mk.flows_ended++;
	tail = flow_tail(fs);
	r->c.lost += tail;
	r->c.lost_at_end += tail;
}

enum seqtrack_verdict seqtrack_mark(struct seqtrack *t, const struct stamp *st, __u64 now)
{
	struct seqtrack_run *r = run_get(t, st->run, now);
	const struct xdpsg_mark *m = &st->mark;
	struct seqtrack_counts before;
	struct seqtrack_flow *fs;

	/* A mark shows a run (its tag covers it): off probation at once. */
	if (!seqtrack_run_promote(t, r))
		return SEQ_UNPLACED;
	t->marks++;
	r->mk.received++;
	if (!r->first_rx)
		r->first_rx = now;
	r->last_rx = now;
	mark_clock(t, r, m, now);
	if (m->kind == XDPSG_MARK_START) {
		r->mk.start_seen = 1;
		return SEQ_MARK;
	}
	if (m->kind != XDPSG_MARK_END || m->flow == XDPSG_MARK_FLOW) {
		r->mk.conflicts++;
		return SEQ_MARK;
	}
	fs = seqtrack_flow_of(t, &r, m->flow, now);
	if (!fs)
		return SEQ_UNPLACED;
	before = r->c;
	mark_end(r, fs, m);
	totals_follow(t, r, &before);
	return SEQ_MARK;
}

const char *seqtrack_verdict_str(enum seqtrack_verdict v)
{
	static const char *const names[] = {
		[SEQ_FIRST] = "first",	       [SEQ_IN_ORDER] = "in-order",   [SEQ_GAP] = "gap",
		[SEQ_REORDERED] = "reordered", [SEQ_DUPLICATE] = "duplicate", [SEQ_LATE] = "late",
		[SEQ_UNPLACED] = "unplaced",   [SEQ_MARK] = "mark",
	};

	return (unsigned int)v < sizeof(names) / sizeof(names[0]) ? names[v] : "unknown";
}

const char *seqtrack_clock_str(enum seqtrack_clock c)
{
	return c == SEQTRACK_CLOCK_SAME	  ? "same" :
	       c == SEQTRACK_CLOCK_SYNCED ? "synced" :
	       c == SEQTRACK_CLOCK_OTHER  ? "other" :
					    "unknown";
}
