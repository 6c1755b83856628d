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
	for (i = 0; i < t->ndone; i++)
		free(t->done[i].latency);
	free(t->folded.latency);
	free(t->spare);
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

/* ---------------------------------------------------------------------------
 * Flows: a hash table per run, the flow id as its own hash (xdp-gen numbers
 * flows from 0, so a run's flows fill the table without a collision).
 */

/* The slot of a flow: its own, or the empty one where it would go. */
static inline struct seqtrack_flow *flow_slot(const struct seqtrack_run *r, __u16 flow)
{
	__u32 mask = r->slots - 1, i = flow & mask;

	/* At most half the slots are used: an empty one ends every search. */
	while (r->flows[i].used && r->flows[i].key != flow)
		i = (i + 1) & mask;
	return &r->flows[i];
}

/* r's flows moved into a table of n slots (a power of two). */
static int flows_resize(struct seqtrack_run *r, __u32 n)
{
	struct seqtrack_flow *old = r->flows, *f = calloc(n, sizeof(*f));
	__u32 i, oldn = r->slots;

	if (!f)
		return -ENOMEM;
	r->flows = f;
	r->slots = n;
	for (i = 0; i < oldn; i++)
		if (old[i].used)
			*flow_slot(r, old[i].key) = old[i];
	free(old);
	return 0;
}

/* ---------------------------------------------------------------------------
 * Runs: open books, closed books, the folded rest.
 */

static bool run_idle(const struct seqtrack_run *r, __u64 now)
{
	return now > r->last_rx && now - r->last_rx >= SEQTRACK_IDLE_NS;
}

/* The run to close for room: the one idle longest, else the least shown, least recent. */
static unsigned int run_victim(const struct seqtrack *t, __u64 now)
{
	unsigned int i, v = 0;
	bool v_idle = run_idle(&t->runs[0], now);

	for (i = 1; i < t->nruns; i++) {
		const struct seqtrack_run *r = &t->runs[i], *b = &t->runs[v];
		bool idle = run_idle(r, now);

		if (idle != v_idle		   ? idle :
		    idle			   ? r->last_rx < b->last_rx :
		    r->c.received != b->c.received ? r->c.received < b->c.received :
						     r->last_rx < b->last_rx) {
			v = i;
			v_idle = idle;
		}
	}
	return v;
}

static void counts_widen(struct seqtrack_run *into, const struct seqtrack_run *from)
{
	seqtrack_counts_merge(&into->c, &from->c);
	if (from->first_rx && (!into->first_rx || from->first_rx < into->first_rx))
		into->first_rx = from->first_rx;
	if (from->first_rx && (!into->first_ts || from->first_ts < into->first_ts))
		into->first_ts = from->first_ts;
	into->last_ts = from->last_ts > into->last_ts ? from->last_ts : into->last_ts;
	into->last_rx = from->last_rx > into->last_rx ? from->last_rx : into->last_rx;
	into->flows_seen += from->flows_seen;
}

static void hist_release(struct seqtrack *t, struct hist *h)
{
	if (!t->spare)
		t->spare = h;
	else
		free(h);
}

/* The closed run with the fewest frames (then the oldest) joins the folded record. */
static void done_fold(struct seqtrack *t)
{
	struct seqtrack_run *d;
	unsigned int i, v = 0;

	for (i = 1; i < t->ndone; i++) {
		const struct seqtrack_run *a = &t->done[i], *b = &t->done[v];

		if (a->c.received != b->c.received ? a->c.received < b->c.received :
						     a->last_rx < b->last_rx)
			v = i;
	}
	d = &t->done[v];
	counts_widen(&t->folded, d);
	if (!t->folded.latency) {
		/* the first one folded lends its own */
		t->folded.latency = d->latency;
		t->folded.ipdv = d->ipdv;
		t->folded.jit = d->jit;
	} else {
		jitter_merge(&t->folded.jit, t->folded.ipdv->count, &d->jit, d->ipdv->count);
		hist_merge(t->folded.latency, d->latency);
		hist_merge(t->folded.ipdv, d->ipdv);
		hist_release(t, d->latency);
	}
	t->folded_runs++;
	t->done[v] = t->done[--t->ndone];
}

/* Close the open run at i: its flows freed, its books kept among the closed. */
static void run_close(struct seqtrack *t, unsigned int i)
{
	struct seqtrack_run *r = &t->runs[i];

	t->slots -= r->slots - SEQTRACK_FLOW_SLOTS_MIN;
	free(r->flows);
	r->flows = NULL;
	r->slots = 0;
	if (t->ndone == SEQTRACK_DONE_MAX)
		done_fold(t);
	t->done[t->ndone++] = *r;
	t->runs[i] = t->runs[--t->nruns];
	t->closed++;
	t->last = 0;
}

/*
 * Room for 'need' more flow slots: close idle runs, the one idle longest
 * first, never *keep (which is followed if it moves). False if none is idle.
 */
static bool room(struct seqtrack *t, __u32 need, struct seqtrack_run **keep, __u64 now)
{
	while (t->slots + need > SEQTRACK_FLOW_SLOTS_MAX) {
		unsigned int i, v = t->nruns;

		for (i = 0; i < t->nruns; i++)
			if (&t->runs[i] != *keep && run_idle(&t->runs[i], now) &&
			    (v == t->nruns || t->runs[i].last_rx < t->runs[v].last_rx))
				v = i;
		if (v == t->nruns)
			return false;
		if (*keep == &t->runs[t->nruns - 1])
			*keep = &t->runs[v]; /* the last run moves into the closed one's place */
		run_close(t, v);
	}
	return true;
}

/* The open run of this id: the last one used, or another; NULL if none. */
static inline struct seqtrack_run *run_find(struct seqtrack *t, __u32 id)
{
	unsigned int i;

	if (t->nruns && t->runs[t->last].id == id)
		return &t->runs[t->last];
	for (i = 0; i < t->nruns; i++)
		if (t->runs[i].id == id) {
			t->last = i;
			return &t->runs[i];
		}
	return NULL;
}

/*
 * Open books for a run whose first frame was accepted; NULL without memory.
 * Its first table is outside the slots' cap, so every run that gets this far
 * has books in which its frames are counted, placed or not.
 */
static struct seqtrack_run *run_open(struct seqtrack *t, __u32 id, __u64 now)
{
	struct seqtrack_run *r;
	unsigned int i;

	if (t->nruns == SEQTRACK_RUNS_MAX)
		run_close(t, run_victim(t, now));
	r = &t->runs[t->nruns];
	memset(r, 0, sizeof(*r));
	/* Latency and |IPDV| in one block: one allocation, one spare. */
	r->latency = t->spare ? t->spare : malloc(2 * sizeof(*r->latency));
	t->spare = NULL;
	r->flows = calloc(SEQTRACK_FLOW_SLOTS_MIN, sizeof(*r->flows));
	if (!r->latency || !r->flows) {
		free(r->flows);
		hist_release(t, r->latency);
		return NULL;
	}
	r->ipdv = r->latency + 1;
	hist_init(r->latency);
	hist_init(r->ipdv);
	r->id = id;
	r->slots = SEQTRACK_FLOW_SLOTS_MIN;
	r->order = (__u32)t->opened++;
	for (i = 0; i < t->ndone && !r->reopened; i++)
		r->reopened = t->done[i].id == id;
	t->last = t->nruns++;
	return r;
}

/*
 * The state of a flow of *rp, a new (zeroed, span 0) one if it had none; the
 * table grows at half load. NULL when there is no room (*rp may move).
 */
static struct seqtrack_flow *flow_of(struct seqtrack *t, struct seqtrack_run **rp, __u16 flow,
				     __u64 now)
{
	struct seqtrack_run *r = *rp;
	struct seqtrack_flow *f = flow_slot(r, flow);
	__u32 n = r->slots;

	if (f->used)
		return f;
	if ((r->flows_seen + 1) * 2 > n) {
		if (!room(t, n, rp, now))
			return NULL;
		r = *rp;
		if (flows_resize(r, n * 2))
			return NULL;
		t->slots += n;
		f = flow_slot(r, flow);
	}
	f->used = 1;
	f->key = flow;
	r->flows_seen++;
	return f;
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

	if (!fs->span) { /* a new flow (flow_of zeroed it) */
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
static void note_times(struct seqtrack_run *r, __u64 ts, __u64 now, bool timed)
{
	__u64 slot = ts / SEQTRACK_BURST_NS, lat = now > ts ? now - ts : 0, d;

	if (!r->first_rx) {
		r->first_ts = r->last_ts = ts;
		r->first_rx = now;
		r->burst_slot = slot;
	}
	r->first_ts = ts < r->first_ts ? ts : r->first_ts;
	r->last_ts = ts > r->last_ts ? ts : r->last_ts;
	r->last_rx = now;
	if (timed) {
		hist_record(r->latency, lat);
		if (jitter_update(&r->jit, lat, &d))
			hist_record(r->ipdv, d);
	}
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

/* A rejected send time: counted in the totals, and in the run's books if it has any. */
static enum seqtrack_verdict reject(struct seqtrack *t, struct seqtrack_run *r, size_t off,
				    enum seqtrack_verdict v)
{
	if (r)
		add_both(t, r, off);
	else
		(*(__u64 *)((char *)&t->total + off))++;
	return v;
}

enum seqtrack_verdict seqtrack_update_timed(struct seqtrack *t, const struct stamp *st, __u64 now,
					    bool timed)
{
	struct seqtrack_run *r = run_find(t, st->run);
	__u64 ts = stamp_time(st->ticks, now);
	struct seqtrack_counts before;
	struct seqtrack_flow *fs;
	enum seqtrack_verdict v;

	/* Claims about time first: a rejected one opens no books and takes no memory. */
	if (ts > now)
		return reject(t, r, offsetof(struct seqtrack_counts, ts_future), SEQ_TS_FUTURE);
	if (ts + SEQTRACK_STALE_NS < t->start_ns)
		return reject(t, r, offsetof(struct seqtrack_counts, ts_stale), SEQ_TS_STALE);
	if (!r) {
		r = run_open(t, st->run, now);
		if (!r)
			return reject(t, NULL, offsetof(struct seqtrack_counts, unplaced),
				      SEQ_UNPLACED);
	}
	fs = flow_of(t, &r, st->flow, now);
	if (!fs)
		return reject(t, r, offsetof(struct seqtrack_counts, unplaced), SEQ_UNPLACED);
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
	if (v != SEQ_IMPLAUSIBLE) {
		note_times(r, ts, now, timed);
		if (timed) {
			hist_coarse_record(&t->live, now - ts);
		} else {
			r->c.untimed++;
			t->total.untimed++;
		}
	}
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
	into->unplaced += from->unplaced;
	into->untimed += from->untimed;
}

/* A run record of some tracker, for merging by id. */
struct run_ref {
	__u32 id;
	__u32 q; /* the tracker */
	const struct seqtrack_run *r;
};

/* Books opened first come first: first receive time, then tracker, then opening. */
static int ref_before(const struct run_ref *a, const struct run_ref *b)
{
	if (a->r->first_rx != b->r->first_rx)
		return a->r->first_rx < b->r->first_rx ? -1 : 1;
	if (a->q != b->q)
		return a->q < b->q ? -1 : 1;
	return a->r->order < b->r->order ? -1 : a->r->order > b->r->order;
}

static int ref_cmp_id(const void *pa, const void *pb)
{
	const struct run_ref *a = pa, *b = pb;

	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return ref_before(a, b);
}

/* Groups (their first record, by id) in the order their books were first opened. */
static int group_cmp(const void *pa, const void *pb)
{
	return ref_before(*(const struct run_ref *const *)pa, *(const struct run_ref *const *)pb);
}

static void summary_add(struct seqtrack_summary *s, const struct seqtrack_run *r)
{
	seqtrack_counts_merge(&s->c, &r->c);
	if (r->first_rx && (!s->first_rx || r->first_rx < s->first_rx))
		s->first_rx = r->first_rx;
	if (r->first_rx && (!s->first_ts || r->first_ts < s->first_ts))
		s->first_ts = r->first_ts;
	s->last_ts = r->last_ts > s->last_ts ? r->last_ts : s->last_ts;
	s->last_rx = r->last_rx > s->last_rx ? r->last_rx : s->last_rx;
	s->burst_max += r->burst_max;
	s->flows += r->flows_seen; /* a flow arrives on one queue */
	s->reopened += r->reopened;
	if (r->ipdv && r->ipdv->count)
		s->jitter_ns = (s->jitter_ns * (double)s->ipdv.count +
				jitter_ns(&r->jit) * (double)r->ipdv->count) /
			       (double)(s->ipdv.count + r->ipdv->count);
	if (r->ipdv)
		s->ipdv.count += r->ipdv->count; /* the weight so far; summarized at the end */
}

static unsigned int refs_collect(struct seqtrack *const *trackers, unsigned int n,
				 struct run_ref *refs)
{
	unsigned int q, i, m = 0;

	for (q = 0; q < n; q++) {
		const struct seqtrack *t = trackers[q];

		for (i = 0; t && i < t->nruns + t->ndone; i++) {
			const struct seqtrack_run *r = i < t->nruns ? &t->runs[i] :
								      &t->done[i - t->nruns];

			if (refs)
				refs[m] = (struct run_ref){ .id = r->id, .q = q, .r = r };
			m++;
		}
	}
	return m;
}

/* One run's records, refs[0..k), merged and handed to fn. */
static void group_report(const struct run_ref *refs, unsigned int k, struct hist *lat,
			 seqtrack_run_fn fn, void *ctx)
{
	struct seqtrack_summary s;
	unsigned int i;

	memset(&s, 0, sizeof(s));
	s.id = refs[0].id;
	hist_init(lat);
	hist_init(lat + 1);
	for (i = 0; i < k; i++) {
		summary_add(&s, refs[i].r);
		hist_merge(lat, refs[i].r->latency);
		hist_merge(lat + 1, refs[i].r->ipdv);
	}
	hist_summarize(lat + 1, &s.ipdv);
	fn(&s, lat, ctx);
}

int seqtrack_runs(struct seqtrack *const *trackers, unsigned int n, seqtrack_run_fn fn, void *ctx)
{
	unsigned int m = refs_collect(trackers, n, NULL), i, g = 0;
	struct run_ref *refs = malloc((m ? m : 1) * sizeof(*refs));
	const struct run_ref **groups = malloc((m ? m : 1) * sizeof(*groups));
	struct hist *lat = fn ? malloc(2 * sizeof(*lat)) : NULL; /* latency, |IPDV| */
	int err = -ENOMEM;

	if (!refs || !groups || (fn && !lat))
		goto out;
	refs_collect(trackers, n, refs);
	qsort(refs, m, sizeof(*refs), ref_cmp_id);
	for (i = 0; i < m; i++)
		if (!i || refs[i].id != refs[i - 1].id)
			groups[g++] = &refs[i];
	qsort(groups, g, sizeof(*groups), group_cmp);
	for (i = 0; fn && i < g; i++) {
		const struct run_ref *e = groups[i];

		while (e < refs + m && e->id == groups[i]->id)
			e++;
		group_report(groups[i], (unsigned int)(e - groups[i]), lat, fn, ctx);
	}
	err = (int)g;
out:
	free(refs);
	free(groups);
	free(lat);
	return err;
}

__u64 seqtrack_folded(struct seqtrack *const *trackers, unsigned int n, struct seqtrack_summary *s,
		      struct hist *lat)
{
	struct hist *ipdv = malloc(sizeof(*ipdv));
	unsigned int q;
	__u64 runs = 0;

	memset(s, 0, sizeof(*s));
	if (lat)
		hist_init(lat);
	if (ipdv)
		hist_init(ipdv);
	for (q = 0; q < n; q++) {
		const struct seqtrack *t = trackers[q];

		if (!t || !t->folded_runs)
			continue;
		runs += t->folded_runs;
		summary_add(s, &t->folded);
		if (lat)
			hist_merge(lat, t->folded.latency);
		if (ipdv)
			hist_merge(ipdv, t->folded.ipdv);
	}
	/* Without memory for it, the IPDV figures stay 0 (the count says so). */
	if (ipdv)
		hist_summarize(ipdv, &s->ipdv);
	else
		memset(&s->ipdv, 0, sizeof(s->ipdv));
	free(ipdv);
	return runs;
}

void seqtrack_ipdv_all(struct seqtrack *const *trackers, unsigned int n, struct hist *ipdv,
		       double *jitter_ns)
{
	struct seqtrack_summary s;
	unsigned int q, i;

	memset(&s, 0, sizeof(s));
	hist_init(ipdv);
	for (q = 0; q < n; q++) {
		const struct seqtrack *t = trackers[q];

		for (i = 0; t && i < t->nruns + t->ndone + 1; i++) {
			const struct seqtrack_run *r = i < t->nruns ? &t->runs[i] :
						       i < t->nruns + t->ndone ?
								      &t->done[i - t->nruns] :
								      &t->folded;

			if (!r->ipdv)
				continue;
			summary_add(&s, r);
			hist_merge(ipdv, r->ipdv);
		}
	}
	*jitter_ns = s.jitter_ns;
}
