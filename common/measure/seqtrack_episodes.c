// SPDX-License-Identifier: GPL-2.0
/*
 * Loss episodes in the books (episodes.h): each flow's open one, which its
 * gaps and reordered frames shape, and its close into its run's books.
 */
#include "measure/seqtrack_episodes.h"

static void episode_emit(struct seqtrack_run *r, const struct seqtrack_flow *fs, __u32 first,
			 __u32 frames, __u64 before, __u64 after, unsigned int keep)
{
	struct episode e = {
		.at_ns = before,
		.outage_ns = episode_outage(before, after, frames),
		.first = first,
		.frames = frames,
		.flow = fs->key,
	};

	if (frames)
		episodes_add(&r->ep, &e, keep);
}

static void episode_close(struct seqtrack_run *r, struct seqtrack_flow *fs, unsigned int keep)
{
	episode_emit(r, fs, fs->ep_first, fs->ep_frames, fs->ep_before, fs->ep_after, keep);
	fs->ep_frames = 0;
}

/* A gap of d numbers before seq, sent at ts: the flow's new open episode. */
void seqtrack_episode_open(struct seqtrack_run *r, struct seqtrack_flow *fs, __u32 seq, __u32 d,
			   __u64 ts, unsigned int keep)
{
	if (fs->ep_frames)
		episode_close(r, fs, keep);
	fs->ep_first = seq - d;
	fs->ep_frames = d;
	fs->ep_before = fs->last_ts;
	fs->ep_after = ts;
}

/*
 * A reordered frame (seq, sent at ts) inside the open episode shrinks it from
 * either end, or splits it: the part before closes, the part after stays
 * open. One of an episode already closed is counted, not taken from it.
 */
void seqtrack_episode_reordered(struct seqtrack_run *r, struct seqtrack_flow *fs, __u32 seq,
				__u64 ts, unsigned int keep)
{
	__u32 k = seq - fs->ep_first;

	if (!fs->ep_frames || k >= fs->ep_frames) {
		r->ep.amended++;
		return;
	}
	if (k == 0) {
		fs->ep_first++;
		fs->ep_before = ts;
	} else if (k < fs->ep_frames - 1) {
		episode_emit(r, fs, fs->ep_first, k, fs->ep_before, ts, keep);
		fs->ep_first = seq + 1;
		fs->ep_frames -= k;
		fs->ep_before = ts;
	} else {
		fs->ep_after = ts;
	}
	fs->ep_frames--;
}

static struct seqtrack_flow *run_flow_at(const struct seqtrack_run *r, __u32 i)
{
	return r->slots ? &r->flows[i] : (struct seqtrack_flow *)&r->one;
}

void seqtrack_episodes_close(struct seqtrack *t, struct seqtrack_run *r)
{
	__u32 i, n = r->slots ? r->slots : 1;

	for (i = 0; i < n; i++) {
		struct seqtrack_flow *fs = run_flow_at(r, i);

		if ((fs->flags & SEQTRACK_FLOW_USED) && fs->ep_frames)
			episode_close(r, fs, t->episodes_keep);
	}
}

void seqtrack_episodes_open(const struct seqtrack_run *r, struct episodes *into, unsigned int keep)
{
	__u32 i, n = r->slots ? r->slots : 1;

	for (i = 0; i < n; i++) {
		const struct seqtrack_flow *fs = run_flow_at(r, i);
		struct episode e;

		if (!(fs->flags & SEQTRACK_FLOW_USED) || !fs->ep_frames)
			continue;
		e = (struct episode){
			.at_ns = fs->ep_before,
			.outage_ns = episode_outage(fs->ep_before, fs->ep_after, fs->ep_frames),
			.first = fs->ep_first,
			.frames = fs->ep_frames,
			.flow = fs->key,
		};
		episodes_add(into, &e, keep);
	}
}
