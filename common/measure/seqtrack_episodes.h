/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_SEQTRACK_EPISODES_H
#define XDPSG_SEQTRACK_EPISODES_H

/*
 * The books' loss episodes, flow by flow (seqtrack.h says when one opens,
 * changes and closes). For seqtrack*.c only.
 */
#include "measure/seqtrack.h"

/* A gap of d numbers before seq, sent at ts: the flow's new open episode (the old one closes). */
void seqtrack_episode_open(struct seqtrack_run *r, struct seqtrack_flow *fs, __u32 seq, __u32 d,
			   __u64 ts, unsigned int keep);
/*
 * A reordered frame (seq, sent at ts; not before the flow's first frame):
 * inside the open episode it shrinks it from either end or splits it (the
 * part before closes); of an episode already closed it is counted 'amended'.
 */
void seqtrack_episode_reordered(struct seqtrack_run *r, struct seqtrack_flow *fs, __u32 seq,
				__u64 ts, unsigned int keep);
/* The open loss episodes of r's flows close: into r's episodes. */
void seqtrack_episodes_close(struct seqtrack *t, struct seqtrack_run *r);
/* The open loss episodes of r's flows, as they stand, into 'into' (r is left as it is). */
void seqtrack_episodes_open(const struct seqtrack_run *r, struct episodes *into, unsigned int keep);

#endif
