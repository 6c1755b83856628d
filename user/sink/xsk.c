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
		seqtrack_episodes_keep(x->tr, (unsigned int)cfg->episodes);
		/* The thread's books, made here on its own NUMA node: the capture reads its gaps. */
		if (x->cap)
			capture_queue_books(x->cap, x->tr);
	}
	if (xs->records && x->queue < XDPSG_MAX_QUEUES) {
		x->rec_mask = xs->rec_n - 1;
		x->recs = (const struct xdpsg_xsk_rec *)xs->recs_map + (size_t)x->queue * xs->rec_n;
		x->ring = (struct xdpsg_xsk_ring *)xs->rings_map + x->queue;
		x->rec_next = x->ring->cons;
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

static inline enum xq_timing xq_rx_value(const struct xq *x, __u64 v, __u64 now, __u64 *rx)
{
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

static inline const struct xdpsg_rx_meta *xq_meta(const void *data)
{
	return (const struct xdpsg_rx_meta *)((const __u8 *)data - sizeof(struct xdpsg_rx_meta));
}

static inline enum xq_timing xq_rx_time(const struct xq *x, const void *data, __u64 now, __u64 *rx)
{
	return xq_rx_value(x, xq_meta(data)->rx_ns, now, rx);
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

/* Book a frame by its stamp_read() result v; the capture's verdict on it. */
static inline int xq_book(struct xq *x, struct xq_counts *t, int v, const struct stamp *st,
			  __u64 rx, enum xq_timing tm)
{
	if (v == STAMP_DATA) {
		t->rx_time_hw += tm == XQ_HW;
		t->rx_time_kernel += tm == XQ_KERNEL;
		t->rx_untimed += tm == XQ_UNTIMED;
		t->rx_time_user += tm == XQ_USER;
		return seqtrack_update_timed(x->tr, st, rx, tm != XQ_UNTIMED);
	}
	if (v == STAMP_MARK)
		return seqtrack_mark(x->tr, st, rx);
	if (v == -EBADMSG) {
		t->forged++;
		return CAPTURE_FORGED;
	}
	t->foreign++;
	return CAPTURE_FOREIGN;
}

/* The frame's record if it has one (it holds the ticket, and a stamp), else NULL. */
static inline const struct xdpsg_xsk_rec *xq_rec(const struct xq *x, __u32 ticket)
{
	const struct xdpsg_xsk_rec *r = &x->recs[ticket & x->rec_mask];

	return r->ticket == ticket && r->kind == XDPSG_REC_STAMP ? r : NULL;
}

#ifdef XDPSG_TEST_HOOKS
static inline int xq_stamp_rec(const struct xq *x, const struct xdpsg_xsk_rec *r, struct stamp *st)
{
	return x->unkeyed ? stamp_peek_at(r->stamp, sizeof(r->stamp), st) :
			    stamp_check(r->stamp, sizeof(r->stamp), &x->sk->key, st);
}
#else
static inline int xq_stamp_rec(const struct xq *x, const struct xdpsg_xsk_rec *r, struct stamp *st)
{
	return stamp_check(r->stamp, sizeof(r->stamp), &x->sk->key, st);
}
#endif

/* Records read ahead of the one being booked: the program wrote them on another CPU. */
#define XQ_REC_AHEAD 8

/*
 * xq_consume() with records (single-buffer frames, no capture, no --cost): each
 * frame is booked from its record, and only a frame without one (no stamp
 * where the program looked, a mark, a ring that was full) is read. Which
 * ticket a descriptor has: when the last of the batch has the n-th ticket
 * from the next expected, the batch's are consecutive (tickets rise in the
 * order frames enter the socket, and a frame the socket dropped leaves a gap);
 * otherwise each frame's metadata says.
 */
static void xq_consume_records(struct xq *x, struct xq_counts *t, __u32 idx, __u32 n, __u64 now)
{
	const struct xdpsg_rx_meta *last =
		xq_meta(xsk_queue_frame_data(x->q, xsk_queue_rx_desc(x->q, idx + n - 1)->addr));
	bool ticketed = last->flags & XDPSG_META_TICKET;
	__u32 first = (__u32)x->rec_next, i;
	bool in_order = ticketed && last->ticket == first + n - 1;

	for (i = 0; i < n && i < XQ_REC_AHEAD && in_order; i++)
		__builtin_prefetch(&x->recs[(first + i) & x->rec_mask]);
	for (i = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_queue_rx_desc(x->q, idx + i);
		const struct xdpsg_xsk_rec *r = NULL;
		const void *data = NULL;
		struct stamp st;
		enum xq_timing tm;
		__u64 rx;
		int v;

		t->rx_bytes += d->len;
		if (in_order) {
			if (i + XQ_REC_AHEAD < n)
				__builtin_prefetch(
					&x->recs[(first + i + XQ_REC_AHEAD) & x->rec_mask]);
			r = xq_rec(x, first + i);
		} else {
			const struct xdpsg_rx_meta *m;

			data = xsk_queue_frame_data(x->q, d->addr);
			m = xq_meta(data);
			if (m->flags & XDPSG_META_TICKET)
				r = xq_rec(x, m->ticket);
		}
		if (r) {
			tm = xq_rx_value(x, r->rx_ns, now, &rx);
			v = xq_stamp_rec(x, r, &st);
			t->rx_recorded++;
		} else {
			if (!data)
				data = xsk_queue_frame_data(x->q, d->addr);
			tm = xq_rx_time(x, data, now, &rx);
			v = xq_stamp(x, data, d->len, d->len, &st);
		}
		xq_book(x, t, v, &st, rx, tm);
	}
	/* Tickets below the last one delivered are done with: the program may write over them. */
	if (ticketed) {
		x->rec_next += (__u32)(last->ticket + 1 - first);
		__atomic_store_n(&x->ring->cons, x->rec_next, __ATOMIC_RELEASE);
	}
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

	if (x->recs) {
		xq_consume_records(x, t, idx, n, now);
	} else if (!x->tr) {
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
			v = xq_book(x, t, v, &st, rx, tm);
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
	xsk_records_unmap(xs);
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
	.configure = xsk_configure,
	.loaded = xsk_loaded,
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
