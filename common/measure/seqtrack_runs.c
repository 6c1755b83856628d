// SPDX-License-Identifier: GPL-2.0
/*
 * Where the books live (seqtrack.h): the open runs, on probation or not,
 * their index by id, their flows, and the closed and folded books. The
 * books' frame-by-frame arithmetic is seqtrack.c's, built on this file
 * (seqtrack_runs.h); this file needs nothing of it.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "measure/seqtrack_episodes.h"
#include "measure/seqtrack_runs.h"

struct seqtrack *seqtrack__create(__u64 clock_id)
{
	struct seqtrack *t = calloc(1, sizeof(*t));

	if (t) {
		clock_set_one(&t->clk, clock_id);
		t->prob_head = t->prob_tail = SEQTRACK_NONE;
		t->episodes_keep = EPISODES_KEEP;
	}
	return t;
}

static void runs_release(struct seqtrack *t)
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
	runs_release(t);
	free(t);
}

void seqtrack_reset(struct seqtrack *t)
{
	struct clock_set clk = t->clk;
	bool own = t->own_clock;
	unsigned int keep = t->episodes_keep;

	runs_release(t);
	memset(t, 0, sizeof(*t));
	t->clk = clk;
	t->own_clock = own;
	t->episodes_keep = keep;
	t->prob_head = t->prob_tail = SEQTRACK_NONE;
}

/* ---------------------------------------------------------------------------
 * The index of open runs by id (open addressing, linear probing, deletion by
 * backward shift) and the set of ids whose books were closed.
 */

static inline __u32 id_hash(__u32 id)
{
	return (id * 2654435761u) >> 16;
}

unsigned int seqtrack_index_find(const struct seqtrack *t, __u32 id)
{
	__u32 i = id_hash(id) & (SEQTRACK_INDEX - 1);

	while (t->index[i] && t->runs[t->index[i] - 1].id != id)
		i = (i + 1) & (SEQTRACK_INDEX - 1);
	return i;
}

static void index_put(struct seqtrack *t, __u32 id, unsigned int slot)
{
	t->index[seqtrack_index_find(t, id)] = (__u16)(slot + 1);
}

static void index_del(struct seqtrack *t, __u32 id)
{
	__u32 i = seqtrack_index_find(t, id), j = i, home;

	if (!t->index[i])
		return;
	for (;;) {
		t->index[i] = 0;
		for (;;) {
			j = (j + 1) & (SEQTRACK_INDEX - 1);
			if (!t->index[j])
				return;
			home = id_hash(t->runs[t->index[j] - 1].id) & (SEQTRACK_INDEX - 1);
			/* j's entry may move back to i only if its home is not in (i, j] */
			if (i <= j ? (home <= i || home > j) : (home <= i && home > j))
				break;
		}
		t->index[i] = t->index[j];
		i = j;
	}
}

static bool closed_has(const struct seqtrack *t, __u32 id)
{
	__u32 i = id_hash(id) & (SEQTRACK_CLOSED_IDS - 1);

	while (t->closed_ids[i]) {
		if (t->closed_ids[i] == id + 1 || (id == 0xffffffffu && t->closed_ids[i] == ~0u))
			return true;
		i = (i + 1) & (SEQTRACK_CLOSED_IDS - 1);
	}
	return false;
}

/* Remembered while there is room (then a reopened run is not known as such: its heads count). */
static void closed_add(struct seqtrack *t, __u32 id)
{
	__u32 i = id_hash(id) & (SEQTRACK_CLOSED_IDS - 1);

	if (closed_has(t, id) || t->nclosed_ids >= SEQTRACK_CLOSED_IDS / 2)
		return;
	while (t->closed_ids[i])
		i = (i + 1) & (SEQTRACK_CLOSED_IDS - 1);
	t->closed_ids[i] = id == 0xffffffffu ? ~0u : id + 1;
	t->nclosed_ids++;
}

/* ---------------------------------------------------------------------------
 * Flows: one inline while a run has one, then a hash table per run, the flow
 * id as its own hash (xdp-gen numbers flows from 0: no collisions).
 */

static inline struct seqtrack_flow *flow_slot(struct seqtrack_flow *tbl, __u32 slots, __u16 flow)
{
	__u32 mask = slots - 1, i = flow & mask;

	/* At most half the slots are used: an empty one ends every search. */
	while ((tbl[i].flags & SEQTRACK_FLOW_USED) && tbl[i].key != flow)
		i = (i + 1) & mask;
	return &tbl[i];
}

/* r's flows moved into a table of n slots (a power of two). */
static int flows_resize(struct seqtrack_run *r, __u32 n)
{
	struct seqtrack_flow *old = r->flows, *f = calloc(n, sizeof(*f));
	__u32 i, oldn = r->slots;

	if (!f)
		return -ENOMEM;
	if (!oldn && (r->one.flags & SEQTRACK_FLOW_USED)) {
		*flow_slot(f, n, r->one.key) = r->one;
		r->one.ep_frames = 0; /* its open episode moved with it: none stays behind */
	}
	for (i = 0; i < oldn; i++)
		if (old[i].flags & SEQTRACK_FLOW_USED)
			*flow_slot(f, n, old[i].key) = old[i];
	free(old);
	r->flows = f;
	r->slots = n;
	return 0;
}

/* ---------------------------------------------------------------------------
 * Runs: open, on probation or not, closed, folded.
 */

static inline struct seqtrack_run *slot_run(struct seqtrack *t, __u16 s)
{
	return s == SEQTRACK_NONE ? NULL : &t->runs[s];
}

static void prob_unlink(struct seqtrack *t, struct seqtrack_run *r)
{
	struct seqtrack_run *p = slot_run(t, r->prev), *n = slot_run(t, r->next);

	if (p)
		p->next = r->next;
	else
		t->prob_head = r->next;
	if (n)
		n->prev = r->prev;
	else
		t->prob_tail = r->prev;
	r->probation = false;
	t->nprobation--;
}

static void prob_append(struct seqtrack *t, unsigned int slot)
{
	struct seqtrack_run *r = &t->runs[slot], *tail = slot_run(t, t->prob_tail);

	r->probation = true;
	r->prev = t->prob_tail;
	r->next = SEQTRACK_NONE;
	if (tail)
		tail->next = (__u16)slot;
	else
		t->prob_head = (__u16)slot;
	t->prob_tail = (__u16)slot;
	t->nprobation++;
}

/* The run at slot 'from' moves to slot 'to' (which is free): index and links follow. */
static void run_move(struct seqtrack *t, unsigned int from, unsigned int to)
{
	struct seqtrack_run *r = &t->runs[to];

	*r = t->runs[from];
	t->index[seqtrack_index_find(t, r->id)] = (__u16)(to + 1);
	if (r->probation) {
		if (r->prev != SEQTRACK_NONE)
			t->runs[r->prev].next = (__u16)to;
		else
			t->prob_head = (__u16)to;
		if (r->next != SEQTRACK_NONE)
			t->runs[r->next].prev = (__u16)to;
		else
			t->prob_tail = (__u16)to;
	}
}

/* Slot i is emptied: the last run moves in, so the open runs stay runs[0..nruns). */
static void run_remove(struct seqtrack *t, unsigned int i)
{
	index_del(t, t->runs[i].id);
	if (i != t->nruns - 1)
		run_move(t, t->nruns - 1, i);
	t->nruns--;
	t->last = 0;
}

static bool run_idle(const struct seqtrack_run *r, __u64 now)
{
	return now > r->last_rx && now - r->last_rx >= SEQTRACK_IDLE_NS;
}

/* Every flow it has was ended by a mark: nothing more is to come. */
static bool run_finished(const struct seqtrack_run *r)
{
	return r->mk.nflows && r->mk.flows_ended >= r->mk.nflows;
}

/* How willing a run is to be closed: finished and idle 2, idle 1, sending 0. */
static int victim_rank(const struct seqtrack_run *r, __u64 now)
{
	if (!run_idle(r, now))
		return 0;
	return run_finished(r) ? 2 : 1;
}

/* Is a a better run to close than b (both off probation, ranked ra and rb)? */
static bool victim_before(const struct seqtrack_run *a, int ra, const struct seqtrack_run *b,
			  int rb)
{
	if (ra != rb)
		return ra > rb;
	if (ra || a->c.received == b->c.received)
		return a->last_rx < b->last_rx;
	return a->c.received < b->c.received;
}

/*
 * The run off probation to close for room: one finished and idle, else the
 * one idle longest, else the least shown, least recent.
 */
static unsigned int run_victim(const struct seqtrack *t, __u64 now)
{
	unsigned int i, v = t->nruns;
	int rank, vrank = 0;

	for (i = 0; i < t->nruns; i++) {
		const struct seqtrack_run *r = &t->runs[i];

		if (r->probation)
			continue;
		rank = victim_rank(r, now);
		if (v == t->nruns || victim_before(r, rank, &t->runs[v], vrank)) {
			v = i;
			vrank = rank;
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
	into->flows_data += from->flows_data;
	episodes_merge(&into->ep, &from->ep, EPISODES_MAX);
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
	} else if (d->latency) {
		jitter_merge(&t->folded.jit, t->folded.ipdv->count, &d->jit, d->ipdv->count);
		hist_merge(t->folded.latency, d->latency);
		hist_merge(t->folded.ipdv, d->ipdv);
		hist_release(t, d->latency);
	}
	t->folded_runs++;
	t->done[v] = t->done[--t->ndone];
}

/*
 * Books closed for room are final: every number still missing is lost for
 * good, in the run's books and the totals.
 */
static void run_settle(struct seqtrack *t, struct seqtrack_run *r)
{
	__u64 pending = r->c.lost - r->c.lost_final;

	r->c.lost_final = r->c.lost;
	t->total.lost_final += pending;
}

static void run_flows_free(struct seqtrack *t, struct seqtrack_run *r)
{
	free(r->flows);
	r->flows = NULL;
	if (r->slots)
		t->slots -= r->slots - SEQTRACK_FLOW_SLOTS_MIN;
	r->slots = 0;
}

/*
 * A run on probation, never shown to be a run, goes: its frames (never in the
 * totals) are stray. Its slot and index entry are left to the caller:
 * emptied (run_remove()), or reused.
 */
static void prob_drop(struct seqtrack *t, struct seqtrack_run *r)
{
	run_flows_free(t, r);
	prob_unlink(t, r);
	t->stray += r->c.received;
	t->stray_runs++;
}

/* Close the open run at i: kept among the closed books, or stray if on probation. */
static void run_close(struct seqtrack *t, unsigned int i)
{
	struct seqtrack_run *r = &t->runs[i];

	if (r->probation) {
		prob_drop(t, r);
		run_remove(t, i);
		return;
	}
	seqtrack_episodes_close(t, r);
	run_flows_free(t, r);
	run_settle(t, r);
	closed_add(t, r->id);
	if (t->ndone == SEQTRACK_DONE_MAX)
		done_fold(t);
	t->done[t->ndone++] = *r;
	t->closed++;
	run_remove(t, i);
}

/*
 * Off probation: its histograms made (its early latencies into them) and its
 * books into the totals. False without memory (it stays on probation).
 */
bool seqtrack_run_promote(struct seqtrack *t, struct seqtrack_run *r)
{
	struct jitter j = { 0 };
	unsigned int i;
	__u64 d;

	if (!r->probation)
		return true;
	r->latency = t->spare ? t->spare : malloc(2 * sizeof(*r->latency));
	t->spare = NULL;
	if (!r->latency)
		return false;
	r->ipdv = r->latency + 1;
	hist_init(r->latency);
	hist_init(r->ipdv);
	for (i = 0; i < r->nearly; i++) {
		if (jitter_update(&j, r->early[i], &d))
			hist_record(r->ipdv, d);
		if (r->mk.state != SEQTRACK_CLOCK_OTHER)
			hist_record(r->latency, (__s64)r->early[i] < 0 ? 0 : r->early[i]);
	}
	r->jit = j;
	r->nearly = 0;
	prob_unlink(t, r);
	seqtrack_counts_merge(&t->total, &r->c);
	return true;
}

/* Open books for a run; NULL when the closed run's place cannot be had (never, in practice). */
struct seqtrack_run *seqtrack_run_open(struct seqtrack *t, __u32 id, __u64 now)
{
	struct seqtrack_run *r;
	unsigned int slot;

	/*
	 * Probation is bounded: a new run pushes out the oldest one on it and
	 * takes its slot (nothing moves: a flood of claims costs little).
	 */
	if (t->nprobation >= SEQTRACK_PROBATION_MAX ||
	    (t->nruns == SEQTRACK_RUNS_MAX && t->nprobation)) {
		slot = t->prob_head;
		prob_drop(t, &t->runs[slot]);
		index_del(t, t->runs[slot].id);
	} else {
		if (t->nruns == SEQTRACK_RUNS_MAX)
			run_close(t, run_victim(t, now));
		slot = t->nruns++;
	}
	r = &t->runs[slot];
	memset(r, 0, offsetof(struct seqtrack_run, early));
	/* The episodes' counts; those kept whole are none once nlong is 0. */
	memset(&r->ep, 0, offsetof(struct episodes, longest));
	r->jit = (struct jitter){ 0 };
	r->id = id;
	r->order = (__u32)t->opened++;
	r->reopened = t->nclosed_ids && closed_has(t, id);
	if (t->own_clock)
		r->mk.state = SEQTRACK_CLOCK_SAME;
	index_put(t, id, slot);
	prob_append(t, slot);
	t->last = slot;
	return r;
}

/*
 * Room for 'need' more flow slots: close idle runs, the one idle longest
 * first, never *keep (which is followed if it moves). False if none is idle.
 */
static bool room(struct seqtrack *t, __u32 need, struct seqtrack_run **keep, __u64 now)
{
	while (t->slots + need > SEQTRACK_FLOW_SLOTS_MAX) {
		unsigned int i, v = t->nruns, k = (unsigned int)(*keep - t->runs);
		__u32 id = (*keep)->id;

		for (i = 0; i < t->nruns; i++)
			if (i != k && run_idle(&t->runs[i], now) && t->runs[i].slots &&
			    (v == t->nruns || t->runs[i].last_rx < t->runs[v].last_rx))
				v = i;
		if (v == t->nruns)
			return false;
		run_close(t, v);
		*keep = &t->runs[t->index[seqtrack_index_find(t, id)] - 1];
	}
	return true;
}

/*
 * The state of a flow of *rp, a new (zeroed but for its key) one if it had
 * none; the table grows at half load. NULL when there is no room (*rp may
 * move).
 */
struct seqtrack_flow *seqtrack_flow_of(struct seqtrack *t, struct seqtrack_run **rp, __u16 flow,
				       __u64 now)
{
	struct seqtrack_run *r = *rp;
	struct seqtrack_flow *f;
	__u32 n = r->slots;

	if (!n && (!(r->one.flags & SEQTRACK_FLOW_USED) || r->one.key == flow)) {
		f = &r->one;
	} else {
		if (!n || (r->flows_seen + 1) * 2 > n) {
			__u32 grow = n ? n : SEQTRACK_FLOW_SLOTS_MIN;

			if (n) {
				f = flow_slot(r->flows, n, flow);
				if (f->flags & SEQTRACK_FLOW_USED)
					return f;
				if (!room(t, n, rp, now))
					return NULL;
				r = *rp;
			}
			if (flows_resize(r, n ? n * 2 : SEQTRACK_FLOW_SLOTS_MIN))
				return NULL;
			if (n)
				t->slots += grow;
		}
		f = flow_slot(r->flows, r->slots, flow);
	}
	if (f->flags & SEQTRACK_FLOW_USED)
		return f;
	memset(f, 0, sizeof(*f));
	f->flags = SEQTRACK_FLOW_USED | (r->reopened ? SEQTRACK_FLOW_NO_HEAD : 0);
	f->key = flow;
	r->flows_seen++;
	return f;
}

void seqtrack_counts_merge(struct seqtrack_counts *into, const struct seqtrack_counts *from)
{
	__u64 *a = (__u64 *)into;
	const __u64 *b = (const __u64 *)from;
	unsigned int i;

	for (i = 0; i < sizeof(*into) / sizeof(__u64); i++)
		a[i] += b[i];
}
