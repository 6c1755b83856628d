// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "seqtrack.h"

struct seqtrack *seqtrack__create(__u32 nflows)
{
	struct seqtrack *t;

	if (nflows == 0)
		nflows = SEQTRACK_FLOWS_MAX;
	if (nflows > SEQTRACK_FLOWS_MAX) {
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->flows = calloc(nflows, sizeof(*t->flows));
	if (!t->flows) {
		free(t);
		return NULL;
	}
	t->nflows = nflows;
	return t;
}

void seqtrack__destroy(struct seqtrack *t)
{
	if (!t)
		return;
	free(t->flows);
	free(t);
}

void seqtrack_reset(struct seqtrack *t)
{
	memset(t->flows, 0, t->nflows * sizeof(*t->flows));
	memset(&t->counts, 0, sizeof(t->counts));
	t->have_run = t->have_prev = false;
	t->run = t->prev_run = 0;
}

/* Window bitmap helpers; the window is 128 bits in two words. */
static void win_shift(__u64 *m, __u32 n)
{
	if (n >= 128) {
		m[0] = m[1] = 0;
	} else if (n >= 64) {
		m[1] = m[0] << (n - 64);
		m[0] = 0;
	} else if (n) {
		m[1] = (m[1] << n) | (m[0] >> (64 - n));
		m[0] <<= n;
	}
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

enum seqtrack_verdict seqtrack_update(struct seqtrack *t, const struct xdpsg_stamp *st)
{
	struct seqtrack_counts *c = &t->counts;
	struct seqtrack_flow *fs;
	__u32 d, back;

	if (st->flow >= t->nflows) {
		c->bad_flow++;
		return SEQ_BAD_FLOW;
	}
	c->received++;
	if (!t->have_run || st->run != t->run) {
		if (t->have_prev && st->run == t->prev_run) {
			c->late++;
			return SEQ_LATE;
		}
		if (t->have_run) {
			c->restarts++;
			t->prev_run = t->run;
			t->have_prev = true;
		}
		t->run = st->run;
		t->have_run = true;
	}
	fs = &t->flows[st->flow];
	if (!fs->valid || fs->run != st->run) {
		fs->valid = 1;
		fs->run = st->run;
		fs->expected = st->seq + 1;
		fs->span = 1;
		memset(fs->missing, 0, sizeof(fs->missing));
		return SEQ_FIRST;
	}
	d = st->seq - fs->expected;
	if ((__s32)d >= 0) {
		c->lost += d;
		win_shift(fs->missing, d + 1); /* d < 2^31: no overflow */
		win_mark(fs->missing, d < SEQTRACK_WINDOW - 1 ? d : SEQTRACK_WINDOW - 1);
		fs->span = d >= (__u32)(SEQTRACK_WINDOW - fs->span) ? SEQTRACK_WINDOW :
								      fs->span + d + 1;
		fs->expected = st->seq + 1;
		return d ? SEQ_GAP : SEQ_IN_ORDER;
	}
	back = fs->expected - 1 - st->seq;
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

const char *seqtrack_verdict_str(enum seqtrack_verdict v)
{
	switch (v) {
	case SEQ_FIRST:
		return "first";
	case SEQ_IN_ORDER:
		return "in-order";
	case SEQ_GAP:
		return "gap";
	case SEQ_REORDERED:
		return "reordered";
	case SEQ_DUPLICATE:
		return "duplicate";
	case SEQ_LATE:
		return "late";
	case SEQ_BAD_FLOW:
		return "bad-flow";
	}
	return "unknown";
}

void seqtrack_counts_merge(struct seqtrack_counts *into, const struct seqtrack_counts *from)
{
	into->received += from->received;
	into->lost += from->lost;
	into->duplicates += from->duplicates;
	into->reordered += from->reordered;
	into->late += from->late;
	into->bad_flow += from->bad_flow;
	if (from->restarts > into->restarts)
		into->restarts = from->restarts;
}
