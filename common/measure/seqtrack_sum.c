// SPDX-License-Identifier: GPL-2.0
/*
 * The books for reports: every run merged over the trackers (one per queue)
 * and over the pieces a reopening split it into (seqtrack.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "measure/seqtrack_episodes.h"
#include "measure/seqtrack_runs.h"

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

/* What the marks said, over trackers: a clock once named stays named; counts the most seen. */
static void marks_merge(struct seqtrack_marks *into, const struct seqtrack_marks *from)
{
	into->received += from->received;
	into->conflicts += from->conflicts;
	into->flows_ended += from->flows_ended; /* a flow is ended on its own queue */
	if (from->run_frames && into->run_frames && from->run_frames != into->run_frames)
		into->conflicts++;
	if (from->run_frames > into->run_frames)
		into->run_frames = from->run_frames;
	if (from->nflows > into->nflows)
		into->nflows = from->nflows;
	into->start_seen |= from->start_seen;
	if (from->state != SEQTRACK_CLOCK_UNKNOWN && into->state != SEQTRACK_CLOCK_OTHER) {
		into->state = from->state;
		into->clock = from->clock;
		into->synced = from->synced;
		into->sync_error_us = from->sync_error_us;
		into->offset_ns = from->offset_ns;
		into->why = from->why;
		into->sync_error_ns = from->sync_error_ns;
	}
}

static void summary_add(struct seqtrack_summary *s, const struct seqtrack_run *r)
{
	seqtrack_counts_merge(&s->c, &r->c);
	marks_merge(&s->mk, &r->mk);
	if (r->first_rx && (!s->first_rx || r->first_rx < s->first_rx))
		s->first_rx = r->first_rx;
	if (r->first_ts && (!s->first_ts || r->first_ts < s->first_ts))
		s->first_ts = r->first_ts;
	s->last_ts = r->last_ts > s->last_ts ? r->last_ts : s->last_ts;
	s->last_rx = r->last_rx > s->last_rx ? r->last_rx : s->last_rx;
	s->burst_max += r->burst_max;
	s->flows += r->flows_seen; /* a flow arrives on one queue */
	s->flows_data += r->flows_data;
	s->reopened += r->reopened;
	if (r->ipdv && r->ipdv->count)
		s->jitter_ns = (s->jitter_ns * (double)s->ipdv.count +
				jitter_ns(&r->jit) * (double)r->ipdv->count) /
			       (double)(s->ipdv.count + r->ipdv->count);
	if (r->ipdv)
		s->ipdv.count += r->ipdv->count; /* the weight so far; summarized at the end */
	/* The pieces each keep their longest episodes: the longest of all are among them. */
	episodes_merge(&s->ep, &r->ep, EPISODES_MAX);
	seqtrack_episodes_open(r, &s->ep, EPISODES_MAX);
}

/*
 * A run's latency and |IPDV| into lat[0] and lat[1]: its histograms, or, on
 * probation, its early transits as they would have gone in.
 */
static void run_hists(const struct seqtrack_run *r, struct hist *lat)
{
	struct jitter j = { 0 };
	unsigned int i;
	__u64 d;

	if (r->latency) {
		hist_merge(lat, r->latency);
		hist_merge(lat + 1, r->ipdv);
		return;
	}
	for (i = 0; i < r->nearly; i++) {
		if (jitter_update(&j, r->early[i], &d))
			hist_record(lat + 1, d);
		hist_record(lat, (__s64)r->early[i] < 0 ? 0 : r->early[i]);
	}
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

/* r's record of flow key, or NULL (read only: nothing is made). */
static const struct seqtrack_flow *flow_find(const struct seqtrack_run *r, __u16 key)
{
	__u32 i, mask;

	if (!r->slots)
		return (r->one.flags & SEQTRACK_FLOW_USED) && r->one.key == key ? &r->one : NULL;
	mask = r->slots - 1;
	for (i = key & mask; r->flows[i].flags & SEQTRACK_FLOW_USED; i = (i + 1) & mask)
		if (r->flows[i].key == key)
			return &r->flows[i];
	return NULL;
}

/* Only END marks of the flow came to f: no frame, no reopened books. */
static bool marks_only(const struct seqtrack_flow *f)
{
	return f &&
	       (f->flags & (SEQTRACK_FLOW_USED | SEQTRACK_FLOW_END | SEQTRACK_FLOW_DATA |
			    SEQTRACK_FLOW_NO_HEAD)) == (SEQTRACK_FLOW_USED | SEQTRACK_FLOW_END);
}

/*
 * A flow's END marks booked on one queue while its frames arrived on another:
 * the kernel may steer a flow's marks apart from its frames (a VLAN-tagged
 * TCP flow sent through the qdisc, on this kernel, goes out on another veth
 * queue than its marks). A queue that saw only marks counted every frame of
 * the flow lost after the last it saw, which was none. The flow is one: its
 * tail is what follows the last frame the frames' queue saw, counted once
 * (there if marks came there too, else by the first marks-only queue), and
 * its end once.
 */
static void ends_across(const struct run_ref *refs, unsigned int k, struct seqtrack_summary *s)
{
	unsigned int i, j, f;

	for (i = 0; k > 1 && i < k; i++) {
		const struct seqtrack_run *r = refs[i].r;
		unsigned int n = r->slots ? r->slots : 1;

		for (f = 0; f < n; f++) {
			const struct seqtrack_flow *m = r->slots ? &r->flows[f] : &r->one;
			const struct seqtrack_flow *d = NULL;
			__s32 tail = (__s32)(m->end - m->expected), got;
			bool keeps = true;

			if (!marks_only(m))
				continue;
			for (j = 0; !d && j < k; j++) {
				d = j == i ? NULL : flow_find(refs[j].r, m->key);
				if (d && !(d->flags & SEQTRACK_FLOW_DATA))
					d = NULL;
			}
			if (!d)
				continue;
			keeps = !(d->flags & SEQTRACK_FLOW_END);
			for (j = 0; keeps && j < i; j++)
				keeps = !marks_only(flow_find(refs[j].r, m->key));
			tail = tail > 0 ? tail : 0;
			got = tail;
			if (keeps) {
				/* What follows d's last frame stays: the flow's true tail. */
				__s32 after = (__s32)(m->end - d->expected);

				got = tail - (after > 0 ? after : 0);
				got = got > 0 ? got : 0;
			} else {
				s->mk.flows_ended--;
			}
			s->c.lost -= (__u32)got;
			s->c.lost_at_end -= (__u32)got;
			s->flows--;
		}
	}
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
		run_hists(refs[i].r, lat);
	}
	ends_across(refs, k, &s);
	hist_summarize(lat + 1, &s.ipdv);
	/* A latency only where the run named this sink's clock. */
	if (!seqtrack_clock_timed(s.mk.state))
		hist_init(lat);
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
		if (lat && t->folded.latency)
			hist_merge(lat, t->folded.latency);
		if (ipdv && t->folded.ipdv)
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
