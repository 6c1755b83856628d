// SPDX-License-Identifier: GPL-2.0
/*
 * xsk: the mode's readings. What a reading holds of each queue (the counters
 * its thread publishes once a batch, and the socket's XDP_STATISTICS), their
 * totals over the queues, and the deltas and drops between two readings.
 */
#include <stddef.h>
#include <string.h>

#include "base/counter.h"
#include "base/runtime.h"
#include "xsk.h"

/*
 * The mode's part of a reading: each queue's counters, then each socket's
 * XDP_STATISTICS, nxq of each.
 */
size_t xsk_snap_size(const struct sink *sk)
{
	const struct xsk_state *xs = sk->ms;

	return xs->nxq * (sizeof(struct xq_counts) + sizeof(struct xdp_statistics));
}

static void xq_counts_read(struct xq_counts *d, const struct xq_published *s)
{
	cnt_snapshot(&s->seq, (__u64 *)d, (const __u64 *)&s->c, sizeof(*d) / sizeof(__u64));
}

void xsk_read(struct sink *sk, struct sink_snap *s)
{
	const struct xsk_state *xs = sk->ms;
	struct xq_counts *xc = xsk_snap_xc(s);
	struct xdp_statistics *st = xsk_snap_xs(sk, s);
	unsigned int i;

	/*
	 * The run has ended and the receive threads are done: the capture is
	 * complete, and is renamed over its file before the summary. Not on a
	 * reading before that (threads that a signal stopped during the setup).
	 */
	for (i = 0; i < xs->nxq; i++) {
		xq_counts_read(&xc[i], &xs->xq[i].pub);
		/* A failed read gives the last good one: deltas never go back. */
		if (!xs->xq[i].q)
			memset(&st[i], 0, sizeof(st[i]));
		else
			xsk_queue_stats(xs->xq[i].q, &st[i]);
	}
	if (xs->cap && run_stop_requested(&sk->run) && run_all_finished(&sk->run)) {
		/* The sockets' whole lives: they were made after the capture was opened. */
		for (i = 0; i < xs->nxq; i++)
			capture_queue_stats(xs->cap, i, xc[i].rx_packets,
					    st[i].rx_dropped + st[i].rx_ring_full);
		capture_finish(xs->cap);
	}
}

/* Totals over the queues of a reading. */
void xsk_total(const struct sink *sk, const struct sink_snap *s, struct xq_counts *c,
	       struct xdp_statistics *x)
{
	const struct xsk_state *xs = sk->ms;
	const struct xq_counts *xc = xsk_snap_xc(s);
	const struct xdp_statistics *st = xsk_snap_xs(sk, s);
	unsigned int i;

	memset(c, 0, sizeof(*c));
	memset(x, 0, sizeof(*x));
	for (i = 0; i < xs->nxq; i++) {
		c->rx_packets += xc[i].rx_packets;
		c->rx_bytes += xc[i].rx_bytes;
		c->foreign += xc[i].foreign;
		c->forged += xc[i].forged;
		c->marks += xc[i].marks;
		c->stray += xc[i].stray;
		c->runs = xc[i].runs > c->runs ? xc[i].runs : c->runs;
		seqtrack_counts_merge(&c->st, &xc[i].st);
		c->rx_time_hw += xc[i].rx_time_hw;
		c->rx_time_kernel += xc[i].rx_time_kernel;
		c->rx_time_user += xc[i].rx_time_user;
		c->rx_untimed += xc[i].rx_untimed;
		c->rx_recorded += xc[i].rx_recorded;
		hist_coarse_merge(&c->live, &xc[i].live);
		if (xc[i].first_ns && (!c->first_ns || xc[i].first_ns < c->first_ns))
			c->first_ns = xc[i].first_ns;
		if (xc[i].last_ns > c->last_ns)
			c->last_ns = xc[i].last_ns;
		x->rx_dropped += st[i].rx_dropped;
		x->rx_invalid_descs += st[i].rx_invalid_descs;
		x->rx_ring_full += st[i].rx_ring_full;
		x->rx_fill_ring_empty_descs += st[i].rx_fill_ring_empty_descs;
	}
}

/* What user space read, not what the program saw. */
__u64 xsk_received(const struct sink *sk, const struct sink_snap *s, __u64 *bytes)
{
	struct xq_counts c;
	struct xdp_statistics x;

	xsk_total(sk, s, &c, &x);
	if (bytes)
		*bytes = c.rx_bytes;
	return c.rx_packets;
}

void xsk_deltas(const struct sink *sk, const struct sink_snap *a, const struct sink_snap *b,
		struct xq_counts *c, struct xdp_statistics *x)
{
	struct xq_counts cb;
	struct xdp_statistics xb;
	__u64 *pc = (__u64 *)c;
	const __u64 *pb = (const __u64 *)&cb;
	unsigned int i;

	xsk_total(sk, a, c, x);
	xsk_total(sk, b, &cb, &xb);
	for (i = 0; i < offsetof(struct xq_counts, first_ns) / sizeof(__u64); i++)
		pc[i] -= pb[i];
	x->rx_dropped -= xb.rx_dropped;
	x->rx_invalid_descs -= xb.rx_invalid_descs;
	x->rx_ring_full -= xb.rx_ring_full;
	x->rx_fill_ring_empty_descs -= xb.rx_fill_ring_empty_descs;
}

/* The first and last batch user space read: exact, unlike the ticks. */
bool xsk_span(const struct sink *sk, const struct sink_snap *s, __u64 *first, __u64 *last)
{
	struct xq_counts c;
	struct xdp_statistics x;

	xsk_total(sk, s, &c, &x);
	*first = c.first_ns;
	*last = c.last_ns;
	return c.first_ns != 0;
}

/*
 * The sockets' drops. A redirect into a socket whose rx ring is full (or fill
 * ring empty) fails, and veth counts it as a drop of its own too: leave in
 * veth_rx_drops only what the sockets' counters do not already name, so each
 * drop shows once.
 */
void xsk_drops(const struct sink *sk, const struct sink_snap *a, const struct sink_snap *b,
	       struct sink_drops *d)
{
	struct xq_counts c;

	xsk_deltas(sk, a, b, &c, &d->xsk);
	d->veth_rx_drops = xsk_veth_unnamed(d->veth_rx_drops, &d->xsk);
}
