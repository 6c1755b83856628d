// SPDX-License-Identifier: GPL-2.0
/*
 * xsk: one AF_XDP socket, UMEM and thread per receive queue. The program
 * redirects each packet into its queue's socket; the queue's thread verifies
 * the stamp, counts, and returns the frames to the fill ring. Every packet the
 * program saw is accounted for: delivered, or dropped at a named place.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/counter.h"
#include "base/cpu.h"
#include "base/fmt.h"
#include "base/log.h"
#include "base/numa.h"
#include "base/outfile.h"
#include "base/runtime.h"
#include "measure/clockid.h"
#include "pkt/stamp.h"
#include "xdp_sink.skel.h"
#include "xsk.h"

/*
 * The mode's part of a reading: each queue's counters, then each socket's
 * XDP_STATISTICS, nxq of each.
 */
static size_t xsk_snap_size(const struct sink *sk)
{
	const struct xsk_state *xs = sk->ms;

	return xs->nxq * (sizeof(struct xq_counts) + sizeof(struct xdp_statistics));
}

static void xq_counts_read(struct xq_counts *d, const struct xq_published *s)
{
	cnt_snapshot(&s->seq, (__u64 *)d, (const __u64 *)&s->c, sizeof(*d) / sizeof(__u64));
}

static void xsk_read(struct sink *sk, struct sink_snap *s)
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
static __u64 xsk_received(const struct sink *sk, const struct sink_snap *s, __u64 *bytes)
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

/* ---------------------------------------------------------------------------
 * The queues' threads
 */

#ifdef XDPSG_TEST_HOOKS
/*
 * Test hook, only in the test build (build/test-hooks/xdp-sink): with
 * XDPSG_TEST_NO_STAMP_CHECK=1 stamps are read without their keyed check, so
 * the bench can pair the verifying sink with the same sink minus the check.
 * A production binary has no such code and reads no such variable.
 */
static bool unkeyed_hook(void)
{
	const char *v = getenv("XDPSG_TEST_NO_STAMP_CHECK");

	return v && !strcmp(v, "1");
}

static inline int xq_stamp(const struct xq *x, const void *data, __u32 len, __u32 flen,
			   struct stamp *st)
{
	return x->unkeyed ? stamp_peek_part(data, len, flen, st) :
			    stamp_read_part(data, len, flen, &x->sk->key, st);
}
#else
static bool unkeyed_hook(void)
{
	return false;
}

static inline int xq_stamp(const struct xq *x, const void *data, __u32 len, __u32 flen,
			   struct stamp *st)
{
	return stamp_read_part(data, len, flen, &x->sk->key, st);
}
#endif

static int xq_setup(struct xq *x)
{
	const struct sink_cfg *cfg = x->sk->cfg;
	const struct xsk_state *xs = x->sk->ms;
	struct xsk_cli cli = cfg->xsk;
	struct xsk_queue_opts o;
	__u32 key = x->queue;
	int fd, err;

	x->unkeyed = unkeyed_hook();
	cli.frame_size = xs->frame_size;
	xsk_queue_opts_cli(&o, x->sk->ifc.name, x->queue, x->cpu, &cli, (__u32)cfg->batch,
			   (__u32)cfg->ring_size, 0);
	o.sg = x->sk->frags;
	err = xsk_queue__create(&x->q, &o);
	if (err)
		return err;
	if (x->cap && x->sk->frags) {
		x->gather_cap = xs->max_frame;
		x->gather = malloc(x->gather_cap);
		if (!x->gather)
			return -ENOMEM;
	}
	if (!cfg->no_verify) {
		x->tr = seqtrack__create(xs->clock_id);
		if (!x->tr)
			return -ENOMEM;
		seqtrack_clocks(x->tr, &xs->clocks);
	}
	/* The program redirects this queue's packets into this socket from now on. */
	fd = xsk_queue_fd(x->q);
	if (bpf_map_update_elem(bpf_map__fd(x->sk->skel->maps.xsks), &key, &fd, 0)) {
		err = -errno;
		pr_warn("cannot add the socket of queue %u to the XSKMAP: %s\n", x->queue,
			strerror(-err));
		return err;
	}
	return 0;
}

/*
 * The main thread's stop, given after the detach. Not run_should_stop(): a
 * signal arrives before the detach, and the ring must be read to the end.
 */
static bool xq_stopping(const struct xq *x)
{
	return run_stop_requested(&x->sk->run);
}

/*
 * --read-data: the first 8 bytes of a frame, read as an application reading its
 * packets would: the frame's first cache line comes to this thread's CPU, and
 * the kernel's next copy into that UMEM frame takes it back.
 */
static inline __u64 read_head(const void *data, __u32 len)
{
	__u64 v = 0;

	memcpy(&v, data, len < sizeof(v) ? len : sizeof(v));
	return v;
}

/* Busy work per packet, the user-space twin of the XDP --cost knob. */
static void spin_until(__u64 t)
{
	while (now_ns() < t)
		;
}

/*
 * The ring is empty. --busy-poll: spin, which answers fastest and keeps a CPU
 * busy whatever the rate; after XQ_SPINS_IDLE empty looks, wait in poll().
 * Default: while every frame carries the kernel's receive time (the program's
 * metadata), when the thread wakes is not in any latency it reports, so it
 * naps XQ_NAP_NS at a time: every wake-up finds a batch, the CPU it uses
 * follows the traffic, and the kernel never has to wake it (a poll() waiter
 * costs the receive path a wake-up per flush: measured, the verifying sink
 * at 2.3-2.8 Mpps against 7.5 with naps). After XQ_NAPS_IDLE empty naps it
 * waits in poll(). Before the first frame, for frames without the kernel's
 * time (timed by this wake-up), and with --poll: poll() at once, so the
 * thread wakes on arrival.
 */
#define XQ_NAP_NS 200000ULL
#define XQ_NAPS_IDLE 50
#define XQ_SPINS_IDLE 10000
#define XQ_POLL_MS 10 /* a stop is seen within this */

static void xq_idle(const struct sink_cfg *cfg, struct pollfd *pfd, unsigned int *idle,
		    bool kernel_timed)
{
	if (cfg->xsk.busy_poll && ++*idle < XQ_SPINS_IDLE)
		return;
	if (cfg->poll || cfg->xsk.busy_poll || !kernel_timed || ++*idle > XQ_NAPS_IDLE) {
		poll(pfd, 1, XQ_POLL_MS);
		*idle = 0;
		return;
	}
	runtime_sleep_until(now_ns() + XQ_NAP_NS);
}

/* Publish once per batch, one writer; readers see every field from one batch. */
static void xq_publish(struct xq *x, const struct xq_counts *t)
{
	cnt_publish(&x->pub.seq, (__u64 *)&x->pub.c, (const __u64 *)t, sizeof(*t) / sizeof(__u64));
}

/*
 * Frames ahead of the one being verified whose headers are fetched early:
 * the kernel wrote them on another CPU, so the first read of each misses
 * the cache; asking for them a few frames ahead overlaps those misses.
 */
#define XQ_PREFETCH_AHEAD 4

static inline void xq_prefetch(struct xq *x, __u32 idx)
{
	const __u8 *data = xsk_queue_frame_data(x->q, xsk_queue_rx_desc(x->q, idx)->addr);

	__builtin_prefetch(data);
	/* The receive time in front of the frame: the line before, when data is aligned. */
	__builtin_prefetch(data - sizeof(struct xdpsg_rx_meta));
}

/*
 * When the frame was received: the kernel's time in front of it (the
 * program's metadata), so that the thread's wake-up is not in the latency; or,
 * for a frame without one, when the thread read it. Read, never written: a
 * store here would leave the line dirty in this CPU's cache for the kernel's
 * next copy into the buffer to take back (measured: the verifying sink at
 * less than half its rate). Nothing stale can be read: the UMEM starts zeroed,
 * and a device gives every frame its metadata or none (bpf_xdp_adjust_meta
 * fails only where the driver has no metadata at all).
 */
enum xq_timing {
	XQ_HW, /* the NIC's receive timestamp (--hw-time) */
	XQ_KERNEL, /* the kernel's receive time */
	XQ_UNTIMED, /* skipped by the program's sample (struct xdpsg_rx_meta) */
	XQ_USER, /* no metadata: the time the thread read it */
};

static inline enum xq_timing xq_rx_time(const struct xq *x, const void *data, __u64 now, __u64 *rx)
{
	const struct xdpsg_rx_meta *m =
		(const struct xdpsg_rx_meta *)((const __u8 *)data - sizeof(*m));
	__u64 v = m->rx_ns;
	enum xq_timing tm = XQ_KERNEL;

	*rx = now;
	if (v == XDPSG_RX_UNTIMED)
		return XQ_UNTIMED;
	if (!v)
		return XQ_USER;
	if (v & XDPSG_RX_HW) {
		/* the NIC's clock, tied to CLOCK_TAI, as this process's monotonic clock */
		v = (v & ~XDPSG_RX_HW) - x->hw_off;
		tm = XQ_HW;
	} else {
		/* the kernel's clock, as this process reads it (a time namespace shifts it) */
		v += x->rx_off;
	}
	/* Read after the kernel took it, so never later than now; clamp a clock that says otherwise. */
	if (v < now)
		*rx = v;
	return tm;
}

/* A frame for the capture: offered at once, or a chain's parts gathered, offered at its end. */
static void xq_capture(struct xq *x, const void *data, __u32 len, bool first, bool cont, __u64 now,
		       int v, const struct stamp *st)
{
	__u32 n;

	if (first && !cont) {
		capture_offer(x->cap, data, len, now, v, st);
		return;
	}
	if (!x->gather)
		return;
	if (first) {
		x->gather_len = 0;
		x->gather_v = v;
		x->gather_st_ok = st != NULL;
		if (st)
			x->gather_st = *st;
	}
	n = len < x->gather_cap - x->gather_len ? len : x->gather_cap - x->gather_len;
	memcpy(x->gather + x->gather_len, data, n);
	x->gather_len += n;
	if (!cont)
		capture_offer(x->cap, x->gather, x->gather_len, now, x->gather_v,
			      x->gather_st_ok ? &x->gather_st : NULL);
}

/*
 * Verify and count a batch of n descriptors from idx, publish the totals. A frame of several
 * buffers (XDP_USE_SG) is a chain, XDP_PKT_CONTD on all but the last, maybe across batches
 * (x->cont): its first has headers and stamp (length: the IP header's) and counts the frame.
 */
static void xq_consume(struct xq *x, struct xq_counts *t, __u32 idx, __u32 n, __u64 now)
{
	const struct sink_cfg *cfg = x->sk->cfg;
	__u32 i, later = 0;
	bool cont = x->cont;

	if (!x->tr) {
		for (i = 0; i < n; i++) {
			const struct xdp_desc *d = xsk_queue_rx_desc(x->q, idx + i);
			bool first = !cont;

			cont = d->options & XDP_PKT_CONTD;
			t->rx_bytes += d->len;
			if (cfg->read_data)
				x->read_sum +=
					read_head(xsk_queue_frame_data(x->q, d->addr), d->len);
			if (x->cap)
				xq_capture(x, xsk_queue_frame_data(x->q, d->addr), d->len, first,
					   cont, now, CAPTURE_UNCHECKED, NULL);
			if (!first) {
				later++;
				continue;
			}
			if (cfg->cost)
				spin_until(now_ns() + cfg->cost);
		}
	} else {
		for (i = 0; i < n && i < XQ_PREFETCH_AHEAD; i++)
			xq_prefetch(x, idx + i);
		for (i = 0; i < n; i++) {
			const struct xdp_desc *d = xsk_queue_rx_desc(x->q, idx + i);
			const void *data = xsk_queue_frame_data(x->q, d->addr);
			struct stamp st;
			__u64 rx;
			enum xq_timing tm;
			bool first = !cont;
			int v;

			cont = d->options & XDP_PKT_CONTD;
			t->rx_bytes += d->len;
			if (i + XQ_PREFETCH_AHEAD < n)
				xq_prefetch(x, idx + i + XQ_PREFETCH_AHEAD);
			if (!first) {
				later++;
				if (x->cap)
					xq_capture(x, data, d->len, false, cont, now, 0, NULL);
				continue;
			}
			tm = xq_rx_time(x, data, now, &rx);
			v = xq_stamp(x, data, d->len, cont ? 0xffff : d->len, &st);
			if (v == STAMP_DATA) {
				v = seqtrack_update_timed(x->tr, &st, rx, tm != XQ_UNTIMED);
				t->rx_time_hw += tm == XQ_HW;
				t->rx_time_kernel += tm == XQ_KERNEL;
				t->rx_untimed += tm == XQ_UNTIMED;
				t->rx_time_user += tm == XQ_USER;
			} else if (v == STAMP_MARK) {
				v = seqtrack_mark(x->tr, &st, rx);
			} else if (v == -EBADMSG) {
				t->forged++;
				v = CAPTURE_FORGED;
			} else {
				t->foreign++;
				v = CAPTURE_FOREIGN;
			}
			if (x->cap)
				xq_capture(x, data, d->len, true, cont, now, v, &st);
			if (cfg->cost)
				spin_until(now_ns() + cfg->cost);
		}
	}
	x->cont = cont;
	t->rx_packets += n - later;
	xsk_queue_rx_recycle(x->q, idx, n);
	xsk_queue_refill(x->q);
	if (x->tr) {
		t->st = x->tr->total;
		t->live = x->tr->live;
		t->runs = x->tr->opened;
		t->marks = x->tr->marks;
		t->stray = x->tr->stray;
	}
	if (!t->first_ns)
		t->first_ns = now;
	t->last_ns = now;
	xq_publish(x, t);
}

static void *xq_thread(void *arg)
{
	struct xq *x = arg;
	const struct sink_cfg *cfg = x->sk->cfg;
	__u32 batch = (__u32)cfg->batch, idle = 0;
	__u64 stop_seen = 0;
	struct xq_counts t = { 0 };
	struct pollfd pfd;
	int err, drained = 0;

	runtime_block_signals();
	err = cpu_pin_self(x->cpu);
	if (!err)
		err = xq_setup(x);
	/* Not waiting for the start: the sockets receive from the attach on. */
	run_worker_ready(&x->sk->run, &x->w, err);
	if (err)
		goto out;
	pfd.fd = xsk_queue_fd(x->q);
	pfd.events = POLLIN;

	for (;;) {
		__u32 idx, n = xsk_queue_rx_peek(x->q, batch, &idx);
		__u64 now;

		if (!n) {
			/*
			 * Stopping: the program is detached, so once the ring stays
			 * empty every packet it redirected here has been read.
			 */
			if (xq_stopping(x)) {
				if (++drained > 2)
					break;
				usleep(2000);
				continue;
			}
			xsk_queue_wakeup_rx(x->q);
			/*
			 * Nap unless a frame's time would be this wake-up's: without
			 * the books (--no-verify) no frame is timed at all.
			 */
			xq_idle(cfg, &pfd, &idle,
				!x->tr || ((t.rx_time_kernel || t.rx_time_hw) && !t.rx_time_user));
			continue;
		}
		idle = 0;
		drained = 0;
		now = now_ns();
		/* Stopping, but the ring never empties (the detach failed?): bound the drain. */
		if (xq_stopping(x)) {
			if (!stop_seen)
				stop_seen = now;
			else if (now - stop_seen > 200000000ULL)
				break;
		}
		xq_consume(x, &t, idx, n, now);
	}
	x->accounting_ok = !frame_alloc_check(x->q->fa, x->accounting, sizeof(x->accounting));
out:
	run_worker_done(&x->w);
	return NULL;
}

/* ---------------------------------------------------------------------------
 * Plan, start, clean up
 */

/* Sockets first: the program finds them in the XSKMAP from its first packet. */
static int xsk_start(struct sink *sk)
{
	struct xsk_state *xs = sk->ms;
	unsigned int i;

	/* Where each queue's packets arrive is watched always; --follow-rx acts on it. */
	xs->follow_seen = calloc((size_t)xs->nxq * (size_t)sk->ncpus, sizeof(__u64));
	if (!xs->follow_seen)
		return -ENOMEM;
	if (sk->cfg->capture) {
		unsigned int queues[XDPSG_MAX_QUEUES];
		int err;

		for (i = 0; i < xs->nxq; i++)
			queues[i] = xs->xq[i].queue;
		err = capture__create(&xs->cap, sk->cfg, xs->nxq, xs->max_frame, sk->ifc.name,
				      queues);
		if (err)
			return err;
		for (i = 0; i < xs->nxq; i++)
			xs->xq[i].cap = capture_queue(xs->cap, i);
	}
	return run_start_workers(&sk->run, xs->xq, xs->nxq, sizeof(*xs->xq), offsetof(struct xq, w),
				 xq_thread);
}

/* The first and last batch user space read: exact, unlike the ticks. */
static bool xsk_span(const struct sink *sk, const struct sink_snap *s, __u64 *first, __u64 *last)
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
static void xsk_drops(const struct sink *sk, const struct sink_snap *a, const struct sink_snap *b,
		      struct sink_drops *d)
{
	struct xq_counts c;

	xsk_deltas(sk, a, b, &c, &d->xsk);
	d->veth_rx_drops = xsk_veth_unnamed(d->veth_rx_drops, &d->xsk);
}

static void xsk_cleanup(struct sink *sk)
{
	struct xsk_state *xs = sk->ms;
	unsigned int i;

	if (!xs)
		return;
	run_join_workers(&sk->run);
	for (i = 0; xs->xq && i < xs->nxq; i++) {
		xsk_queue__destroy(xs->xq[i].q);
		seqtrack__destroy(xs->xq[i].tr);
		free(xs->xq[i].gather);
	}
	capture__destroy(xs->cap);
	free(xs->follow_seen);
	free(xs->xq);
	free(xs);
	sk->ms = NULL;
}

const struct sink_mode_ops sink_xsk_ops = {
	.prog = "xdp_sink_xsk",
	.has = SINK_HAS_XSK,
	.pins = SINK_PIN_STATS | SINK_PIN_XSKS,
	.user_cost = true,
	.rx_time = true,
	.plan = xsk_plan,
	.start = xsk_start,
	.snap_size = xsk_snap_size,
	.read = xsk_read,
	.tick = xsk_follow_tick,
	.received = xsk_received,
	.span = xsk_span,
	.drops = xsk_drops,
	.json = xsk_json,
	.text = xsk_text,
	.metrics = xsk_metrics,
	.result = xsk_result,
	.finish = xsk_finish,
	.cleanup = xsk_cleanup,
};
