/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_SEQTRACK_RUNS_H
#define XDPSG_SEQTRACK_RUNS_H

/*
 * The runs' table (seqtrack_runs.c), as seqtrack.c's frame-by-frame books use
 * it: find a run, open one, take it off probation, find a flow. No one else
 * includes this.
 */
#include "measure/seqtrack.h"

/* The index slot of run id: its entry, or the empty one where it would go. */
unsigned int seqtrack_index_find(const struct seqtrack *t, __u32 id);
/* Books for a new run, on probation: never NULL (a run on probation, or another, makes room). */
struct seqtrack_run *seqtrack_run_open(struct seqtrack *t, __u32 id, __u64 now);
/* Off probation: histograms made, books into the totals. False without memory. */
bool seqtrack_run_promote(struct seqtrack *t, struct seqtrack_run *r);
/* A flow's state in *rp's books, new if it had none; NULL without room (*rp may move). */
struct seqtrack_flow *seqtrack_flow_of(struct seqtrack *t, struct seqtrack_run **rp, __u16 flow,
				       __u64 now);

/* The open run of this id: the last one used, or another; NULL if none. */
static inline struct seqtrack_run *seqtrack_run_find(struct seqtrack *t, __u32 id)
{
	unsigned int i;

	if (t->nruns && t->runs[t->last].id == id)
		return &t->runs[t->last];
	i = seqtrack_index_find(t, id);
	if (!t->index[i])
		return NULL;
	t->last = t->index[i] - 1;
	return &t->runs[t->last];
}

#endif
