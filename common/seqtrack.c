// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "seqtrack.h"

struct seqtrack *seqtrack__create(__u64 start_ns)
{
	struct seqtrack *t = calloc(1, sizeof(*t));

	if (t)
		t->start_ns = start_ns;
	return t;
}

static void runs_free(struct seqtrack *t)
{
	unsigned int i;

	for (i = 0; i < t->nruns; i++) {
		free(t->runs[i].flows);
		free(t->runs[i].latency);
	}
}

void seqtrack__destroy(struct seqtrack *t)
{
	if (!t)
		return;
	runs_free(t);
	free(t);
}

void seqtrack_reset(struct seqtrack *t)
{
	__u64 start = t->start_ns;

	runs_free(t);
	memset(t, 0, sizeof(*t));
	t->start_ns = start;
}

/*
 * Window bitmap helpers; the window is 128 bits in two words. A shift by n
 * drops the bits at 128 - n and up: it returns how many of them were set
 * (numbers counted lost that no late frame can take back any more).
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

static bool win_test_clear(__u64 *m, __u32 b)
{
	__u64 bit = 1ULL << (b & 63);
	__u64 *w = &m[b >> 6];
	bool was = *w & bit;

	*w &= ~bit;
	return was;
}

/* The run of this id: the last one used, one seen before, or a new one; NULL if full. */
static struct seqtrack_run *run_of(struct seqtrack *t, __u32 id)
{
	struct seqtrack_run *r;
	unsigned int i;

	if (t->nruns && t->runs[t->last].id == id)
		return &t->runs[t->last];
	for (i = 0; i < t->nruns; i++)
		if (t->runs[i].id == id) {
			t->last = i;
			return &t->runs[i];
		}
	if (t->nruns == SEQTRACK_RUNS_MAX)
		return NULL;
	r = &t->runs[t->nruns];
	memset(r, 0, sizeof(*r));
	r->latency = malloc(sizeof(*r->latency));
	if (!r->latency)
		return NULL;
	hist_init(r->latency);
	r->id = id;
	t->last = t->nruns++;
	return r;
}

/* The state of a flow, the run's table grown to hold it; NULL without memory. */
static struct seqtrack_flow *flow_of(struct seqtrack_run *r, __u16 flow)
{
	struct seqtrack_flow *f;
	__u32 n;

	if (flow < r->nflows)
		return &r->flows[flow];
	for (n = r->nflows ? r->nflows : 4; n <= flow; n *= 2)
		;
	f = realloc(r->flows, (size_t)n * sizeof(*f));
	if (!f)
		return NULL;
	memset(f + r->nflows, 0, (size_t)(n - r->nflows) * sizeof(*f));
	r->flows = f;
	r->nflows = n;
	return &f[flow];
}

/* Could the sender have sent d more frames of a flow between these send times? */
static bool gap_plausible(const struct seqtrack_flow *fs, __u32 d, __u64 ts)
{
	if (ts < fs->newest_ts)
		return false; /* sent before the frame it claims to follow */
	return d <= SEQTRACK_SLACK_FRAMES + (ts - fs->newest_ts) / SEQTRACK_MIN_GAP_NS;
}

static enum seqtrack_verdict ahead(struct seqtrack_counts *c, struct seqtrack_flow *fs, __u32 seq,
				   __u32 d, __u64 ts)
{
	c->lost += d;
	/* d < 2^31: no overflow. Numbers of the gap beyond the window are final at once. */
	c->lost_final += win_shift(fs->missing, d + 1);
	if (d > SEQTRACK_WINDOW - 1)
		c->lost_final += d - (SEQTRACK_WINDOW - 1);
	win_mark(fs->missing, d < SEQTRACK_WINDOW - 1 ? d : SEQTRACK_WINDOW - 1);
	fs->span = d >= (__u32)(SEQTRACK_WINDOW - fs->span) ? SEQTRACK_WINDOW : fs->span + d + 1;
	fs->expected = seq + 1;
	fs->newest_ts = ts;
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
		c->lost--;
		c->reordered++;
		return SEQ_REORDERED;
	}
	c->duplicates++;
	return SEQ_DUPLICATE;
}

/* The sequence verdict of a frame of run r, its counts in c. */
static enum seqtrack_verdict sequence(struct seqtrack_counts *c, struct seqtrack_flow *fs,
				      const struct stamp *st, __u64 ts)
{
	__u32 d;

	if (!fs->valid) {
		memset(fs, 0, sizeof(*fs));
		fs->valid = 1;
		fs->expected = st->seq + 1;
		fs->span = 1;
		fs->newest_ts = ts;
		c->received++;
		return SEQ_FIRST;
	}
	d = st->seq - fs->expected;
	if ((__s32)d >= 0 ? !gap_plausible(fs, d, ts) : ts > fs->newest_ts) {
		c->implausible++;
		return SEQ_IMPLAUSIBLE;
	}
	c->received++;
	return (__s32)d >= 0 ? ahead(c, fs, st->seq, d, ts) : behind(c, fs, st->seq);
}

/* Times, latency and the pacing seen in send times, for a frame in the books. */
static void note_times(struct seqtrack_run *r, __u64 ts, __u64 now)
{
	__u64 slot = ts / SEQTRACK_BURST_NS;

	if (!r->first_rx) {
		r->first_ts = r->last_ts = ts;
		r->first_rx = now;
		r->burst_slot = slot;
	}
	r->first_ts = ts < r->first_ts ? ts : r->first_ts;
	r->last_ts = ts > r->last_ts ? ts : r->last_ts;
	r->last_rx = now;
	hist_record(r->latency, now > ts ? now - ts : 0);
	if (slot == r->burst_slot) {
		r->burst_n++;
	} else if (slot > r->burst_slot) {
		r->burst_slot = slot;
		r->burst_n = 1;
	}
	if (r->burst_n > r->burst_max)
		r->burst_max = r->burst_n;
}

/* Count v in the run's books and in the totals (the same field of each). */
static void add_both(struct seqtrack *t, struct seqtrack_run *r, size_t off)
{
	(*(__u64 *)((char *)&r->c + off))++;
	(*(__u64 *)((char *)&t->total + off))++;
}

enum seqtrack_verdict seqtrack_update(struct seqtrack *t, const struct stamp *st, __u64 now)
{
	struct seqtrack_run *r = run_of(t, st->run);
	struct seqtrack_counts before;
	struct seqtrack_flow *fs;
	enum seqtrack_verdict v;
	__u64 ts;

	if (!r) {
		t->unplaced++;
		return SEQ_UNPLACED;
	}
	ts = stamp_time(st->ts_ns, now);
	if (ts > now) {
		add_both(t, r, offsetof(struct seqtrack_counts, ts_future));
		return SEQ_TS_FUTURE;
	}
	if (ts + SEQTRACK_STALE_NS < t->start_ns) {
		add_both(t, r, offsetof(struct seqtrack_counts, ts_stale));
		return SEQ_TS_STALE;
	}
	fs = flow_of(r, st->flow);
	if (!fs) {
		t->unplaced++;
		return SEQ_UNPLACED;
	}
	before = r->c;
	v = sequence(&r->c, fs, st, ts);
	/* The totals follow the run's books: add what this frame changed. */
	t->total.received += r->c.received - before.received;
	t->total.lost += r->c.lost - before.lost;
	t->total.lost_final += r->c.lost_final - before.lost_final;
	t->total.duplicates += r->c.duplicates - before.duplicates;
	t->total.reordered += r->c.reordered - before.reordered;
	t->total.late += r->c.late - before.late;
	t->total.implausible += r->c.implausible - before.implausible;
	if (v != SEQ_IMPLAUSIBLE)
		note_times(r, ts, now);
	if (v == SEQ_FIRST)
		r->flows_seen++;
	return v;
}

const char *seqtrack_verdict_str(enum seqtrack_verdict v)
{
	static const char *const names[] = {
		[SEQ_FIRST] = "first",
		[SEQ_IN_ORDER] = "in-order",
		[SEQ_GAP] = "gap",
		[SEQ_REORDERED] = "reordered",
		[SEQ_DUPLICATE] = "duplicate",
		[SEQ_LATE] = "late",
		[SEQ_IMPLAUSIBLE] = "implausible",
		[SEQ_TS_FUTURE] = "ts-future",
		[SEQ_TS_STALE] = "ts-stale",
		[SEQ_UNPLACED] = "unplaced",
	};

	return (unsigned int)v < sizeof(names) / sizeof(names[0]) ? names[v] : "unknown";
}

void seqtrack_counts_merge(struct seqtrack_counts *into, const struct seqtrack_counts *from)
{
	into->received += from->received;
	into->lost += from->lost;
	into->lost_final += from->lost_final;
	into->duplicates += from->duplicates;
	into->reordered += from->reordered;
	into->late += from->late;
	into->implausible += from->implausible;
	into->ts_future += from->ts_future;
	into->ts_stale += from->ts_stale;
}

static void summary_merge(struct seqtrack_summary *s, const struct seqtrack_run *r, bool first)
{
	if (first) {
		memset(s, 0, sizeof(*s));
		s->id = r->id;
		s->first_ts = r->first_ts;
		s->first_rx = r->first_rx;
	}
	seqtrack_counts_merge(&s->c, &r->c);
	if (r->first_rx && (!s->first_rx || r->first_rx < s->first_rx))
		s->first_rx = r->first_rx;
	if (r->first_rx && (!s->first_ts || r->first_ts < s->first_ts))
		s->first_ts = r->first_ts;
	s->last_ts = r->last_ts > s->last_ts ? r->last_ts : s->last_ts;
	s->last_rx = r->last_rx > s->last_rx ? r->last_rx : s->last_rx;
	s->burst_max += r->burst_max;
	s->flows += r->flows_seen; /* a flow arrives on one queue */
}

unsigned int seqtrack_runs(struct seqtrack *const *trackers, unsigned int n,
			   struct seqtrack_summary *out, struct hist *lat, unsigned int max)
{
	unsigned int q, i, k, m = 0;

	for (q = 0; q < n; q++) {
		if (!trackers[q])
			continue;
		for (i = 0; i < trackers[q]->nruns; i++) {
			const struct seqtrack_run *r = &trackers[q]->runs[i];

			for (k = 0; k < m && out[k].id != r->id; k++)
				;
			if (k == m && m == max)
				continue;
			if (k == m && lat)
				hist_init(&lat[m]);
			summary_merge(&out[k], r, k == m);
			if (lat)
				hist_merge(&lat[k], r->latency);
			m += k == m;
		}
	}
	return m;
}
