// SPDX-License-Identifier: GPL-2.0
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pkt.h"
#include "stamp.h"

int stamp_read(const void *frame, unsigned int len, struct xdpsg_stamp *out)
{
	struct xdpsg_stamp st;
	struct pkt_info pi;
	int ret;

	ret = pkt_parse_udp(frame, len, &pi);
	if (ret)
		return ret;
	if (pi.udp_len - 8 < XDPSG_STAMP_SIZE)
		return -ENOENT;
	memcpy(&st, (const __u8 *)frame + pi.payload_off, sizeof(st));
	if (le16toh(st.magic) != XDPSG_STAMP_MAGIC)
		return -ENOENT;
	out->magic = XDPSG_STAMP_MAGIC;
	out->run = le16toh(st.run);
	out->flow = le16toh(st.flow);
	out->seq = le32toh(st.seq);
	out->ts_ns = le64toh(st.ts_ns);
	return 0;
}

struct stamp_tracker *stamp_tracker__create(__u32 nflows)
{
	struct stamp_tracker *t;

	if (nflows == 0)
		nflows = STAMP_FLOWS_MAX;
	if (nflows > STAMP_FLOWS_MAX) {
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

void stamp_tracker__destroy(struct stamp_tracker *t)
{
	if (!t)
		return;
	free(t->flows);
	free(t);
}

void stamp_tracker_reset(struct stamp_tracker *t)
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

enum stamp_verdict stamp_tracker_update(struct stamp_tracker *t, const struct xdpsg_stamp *st)
{
	struct stamp_counts *c = &t->counts;
	struct stamp_flow_state *fs;
	__u32 d, back;

	if (st->flow >= t->nflows) {
		c->bad_flow++;
		return STAMP_BAD_FLOW;
	}
	c->received++;
	if (!t->have_run || st->run != t->run) {
		if (t->have_prev && st->run == t->prev_run) {
			c->late++;
			return STAMP_LATE;
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
		return STAMP_FIRST;
	}
	d = st->seq - fs->expected;
	if ((__s32)d >= 0) {
		c->lost += d;
		win_shift(fs->missing, d + 1); /* d < 2^31: no overflow */
		win_mark(fs->missing, d < STAMP_WINDOW - 1 ? d : STAMP_WINDOW - 1);
		fs->span = d >= (__u32)(STAMP_WINDOW - fs->span) ? STAMP_WINDOW : fs->span + d + 1;
		fs->expected = st->seq + 1;
		return d ? STAMP_GAP : STAMP_IN_ORDER;
	}
	back = fs->expected - 1 - st->seq;
	if (back >= fs->span) {
		c->late++;
		return STAMP_LATE;
	}
	if (win_test_clear(fs->missing, back)) {
		c->lost--;
		c->reordered++;
		return STAMP_REORDERED;
	}
	c->duplicates++;
	return STAMP_DUPLICATE;
}

const char *stamp_verdict_str(enum stamp_verdict v)
{
	switch (v) {
	case STAMP_FIRST:
		return "first";
	case STAMP_IN_ORDER:
		return "in-order";
	case STAMP_GAP:
		return "gap";
	case STAMP_REORDERED:
		return "reordered";
	case STAMP_DUPLICATE:
		return "duplicate";
	case STAMP_LATE:
		return "late";
	case STAMP_BAD_FLOW:
		return "bad-flow";
	}
	return "unknown";
}

void stamp_counts_merge(struct stamp_counts *into, const struct stamp_counts *from)
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
