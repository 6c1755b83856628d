// SPDX-License-Identifier: GPL-2.0
/*
 * xdp-gen xsk: AF_XDP transmit, one socket, UMEM and frame allocator per
 * queue, each owned by one thread pinned to its CPU.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cpu.h"
#include "base/log.h"
#include "base/runtime.h"
#include "gen.h"
#include "marks.h"
#include "replay.h"
#include "rtt.h"
#include "streams.h"
#include "xsk_tx.h"

/* A mark's frame, in xsk_tx.lens: not a data frame, in no count but the marks'. */
#define XSK_LEN_MARK 0x80000000U
/* A mark's frame never waits longer than this for its completion. */
#define XSK_MARK_WAIT_NS 1000000000ULL
/* Allocator frames (slots) a replay keeps for its marks, past the file's slots. */
#define XSK_MARK_FRAMES 64

/* From this rate per queue on, a thread spins between frames: sleeping would not pay. */
#define XSK_SPIN_RATE 500000ULL

static void set_tx_budget(struct gen_thread *t, struct xsk_tx *x)
{
	const struct gen_cfg *cfg = t->g->cfg;
	__u32 budget = (__u32)(cfg->tx_budget ? cfg->tx_budget : cfg->xsk_batch);
	int err;

	/*
	 * A copy-mode kick sends at most 32 descriptors unless raised (Linux
	 * 6.17): one batch per kick halves the syscalls (measured: +4% on veth).
	 * A batch of chains is up to chain_max descriptors a frame. The kernel
	 * takes 32 up to the tx ring's size (EACCES otherwise, checked for
	 * --tx-budget in the preflight): a smaller batch already fits the 32.
	 */
	if (!cfg->tx_budget && x->chain_max > 1) {
		__u64 want = (__u64)budget * x->chain_max;

		budget = (__u32)(want < cfg->ring_size ? want : cfg->ring_size);
	}
	if (x->zerocopy || budget < XSK_TX_BUDGET_MIN)
		return;
	err = xsk_queue_set_tx_budget(x->q, budget);
	if (err == -ENOPROTOOPT && cfg->tx_budget)
		pr_info("queue %u: this kernel has no XDP_MAX_TX_SKB_BUDGET (Linux 6.17+); --tx-budget ignored\n",
			t->queue);
	else if (err && err != -ENOPROTOOPT)
		pr_warn("queue %u: the kernel refused a tx budget of %u: %s\n", t->queue, budget,
			strerror(-err));
}

static int xsk_setup(struct gen_thread *t, struct xsk_tx *x)
{
	const struct gen_cfg *cfg = t->g->cfg;
	struct xsk_queue_opts o;
	__u32 i, n, nr;
	int err;

	xsk_queue_opts_cli(&o, t->g->ifc.name, t->queue, t->cpu, &cfg->xsk, (__u32)cfg->xsk_batch,
			   cfg->rtt ? (__u32)cfg->ring_size : 0, (__u32)cfg->ring_size);
	if (t->g->replay)
		o.nr_frames = gen_replay_slots(t->g) + XSK_MARK_FRAMES;
	else if (cfg->rtt) /* the tx ring full, as many on their way back, the fill ring's */
		o.nr_frames = 2 * o.tx_size + o.fill_size;
	o.slot_frames = x->slot_frames;
	o.sg = x->slot_frames > 1;
	err = xsk_queue__create(&x->q, &o);
	if (err)
		return err;
	if (cfg->rtt) {
		err = rtt_q_setup(t->g, t->idx, x->q, t->pg, &x->rtt);
		if (err)
			return err;
	}
	x->zerocopy = x->q->zerocopy;
	set_tx_budget(t, x);

	nr = x->q->umem->nr_frames;
	x->addrs = calloc(nr, sizeof(*x->addrs));
	x->lens = calloc(nr, sizeof(*x->lens));
	if (!x->addrs || !x->lens)
		return -ENOMEM;
	if (t->g->replay) {
		x->rp = calloc(1, sizeof(*x->rp));
		if (!x->rp)
			return -ENOMEM;
		t->replay_seq = &x->rp->seq;
		return replay_q_setup(x->rp, t->g, x->q, (__u16)t->idx);
	}
	/*
	 * Write every frame's payload once: afterwards only headers and stamp
	 * are rewritten per packet (the pattern depends only on the offset).
	 */
	n = frame_alloc_bulk(x->q->fa, nr, x->addrs);
	for (i = 0; i < n; i++)
		pkt_gen_prefill(t->pg, xsk_queue_frame_data(x->q, x->addrs[i]));
	frame_free_bulk(x->q->fa, n, x->addrs);
	return 0;
}

/*
 * Bytes of the frames the completion ring returns, then recycle them. A
 * mark's frame counts as a mark only, and goes back to the allocator even
 * in a replay (it is none of the file's slots); its address is kept at the
 * array's far end. It gets its payload pattern back first: the data frames
 * write only their headers and stamp into a recycled frame (pkt/gen.h).
 */
static __u32 xsk_reap(struct gen_thread *t, struct xsk_tx *x)
{
	struct xsk_queue *q = x->q;
	struct xsk_ring_cons *cq = &q->umem->comp;
	__u32 idx, i, n, nd = 0, nm = 0, nr = q->umem->nr_frames;
	__u64 bytes = 0;

	n = xsk_ring_cons__peek(cq, q->batch, &idx);
	if (!n)
		return 0;
	for (i = 0; i < n; i++) {
		__u64 part = *xsk_ring_cons__comp_addr(cq, idx + i);
		__u64 addr = part & ~x->slot_mask;
		__u32 len = x->lens[addr >> x->chunk_shift];

		/* A chain's frame is back with its last part (they return in order). */
		if ((part - addr) >> x->chunk_shift !=
		    ((len & ~XSK_LEN_MARK) - 1) >> x->chunk_shift)
			continue;
		if (len & XSK_LEN_MARK) {
			x->addrs[nr - 1 - nm++] = addr;
			if (!x->rp)
				pkt_gen_prefill(t->pg, xsk_queue_frame_data(q, addr));
			continue;
		}
		x->addrs[nd++] = addr;
		bytes += len;
	}
	xsk_ring_cons__release(cq, n);
	frame_alloc_note_completed(q->fa, nd + nm);
	if (x->rp)
		replay_done(x->rp, nd);
	else
		frame_free_bulk(q->fa, nd, x->addrs);
	if (nm) {
		frame_free_bulk(q->fa, nm, x->addrs + nr - nm);
		x->marks_done += nm;
	}
	CNT_ADD(t->c.sent, nd);
	CNT_ADD(t->c.bytes, bytes);
	return n;
}

/* Up to n marks into frames of the allocator and the tx ring; how many went in. */
static __u32 xsk_mark_submit(struct gen_thread *t, struct xsk_tx *x, void *const *frames,
			     const __u32 *lens, __u32 n, __u64 deadline)
{
	struct xsk_queue *q = x->q;
	__u64 addrs[XSK_MARK_FRAMES];
	__u32 got, idx = 0, i;

	got = frame_alloc_bulk(q->fa, n < XSK_MARK_FRAMES ? n : XSK_MARK_FRAMES, addrs);
	while (got && !xsk_queue_tx_reserve(q, got, &idx)) {
		if (now_ns() > deadline) {
			frame_free_bulk(q->fa, got, addrs);
			return 0;
		}
		if (!xsk_reap(t, x))
			usleep(20);
	}
	for (i = 0; i < got; i++) {
		struct xdp_desc *d = xsk_queue_tx_desc(q, idx + i);

		memcpy(xsk_queue_frame_data(q, addrs[i]), frames[i], lens[i]);
		d->addr = addrs[i];
		d->len = lens[i];
		d->options = 0; /* the slot may have held a chain's part */
		x->lens[addrs[i] >> x->chunk_shift] = lens[i] | XSK_LEN_MARK;
	}
	if (got)
		xsk_queue_tx_submit(q, got);
	return got;
}

/*
 * Marks through the queue's own socket: into frames of the allocator (a
 * replay keeps some apart for them), submitted, kicked, and waited for
 * until the completion ring returns them (data frames it returns meanwhile
 * are reaped as such), as many at a time as there are frames. Returns the
 * marks completed.
 */
int gen_xsk_mark_send(struct gen_thread *t, void *const *frames, const __u32 *lens, unsigned int n)
{
	struct xsk_tx *x = t->m;
	__u64 done = x->marks_done, deadline = now_ns() + XSK_MARK_WAIT_NS;
	__u32 sent = 0;

	while (x->marks_done - done < n && now_ns() < deadline) {
		if (sent < n)
			sent += xsk_mark_submit(t, x, frames + sent, lens + sent, n - sent,
						deadline);
		xsk_queue_kick_tx(x->q);
		if (!xsk_reap(t, x))
			usleep(20);
	}
	return (int)(x->marks_done - done);
}

static void xsk_kick(struct gen_thread *t, struct xsk_tx *x)
{
	__u64 busy = x->q->cnt.tx_kick_busy;

	/* Nothing submitted is waiting: a kick would be a syscall for nothing. */
	if (t->c.submitted == t->c.sent)
		return;
	if (!xsk_ring_prod__needs_wakeup(&x->q->tx) && x->q->need_wakeup)
		return;
	xsk_queue_kick_tx(x->q);
	CNT_ADD(t->c.kicks, 1);
	if (x->q->cnt.tx_kick_busy != busy)
		CNT_ADD(t->c.stall_kick, 1);
}

#ifdef XDPSG_TEST_HOOKS
/*
 * Test hook, only in the test build (build/test-hooks/xdp-gen): with
 * XDPSG_TEST_SEQ_JUMP="AT:DELTA" flow 0's sequence number moves by DELTA
 * (negative: back) once thread 0 has submitted AT frames, so tests can put an
 * exact gap or exact duplicates on the wire. A production binary has no such
 * code and reads no such variable.
 */
static bool seq_jump_hook(__s64 *at, __s64 *delta)
{
	const char *v = getenv("XDPSG_TEST_SEQ_JUMP");

	return v && sscanf(v, "%lld:%lld", (long long *)at, (long long *)delta) == 2 && *at > 0;
}
#else
static bool seq_jump_hook(__s64 *at, __s64 *delta)
{
	(void)at;
	(void)delta;
	return false;
}
#endif

/* The next frame (or the file's next) into the slot at addr: its length. */
static inline __u32 xsk_write(struct xsk_tx *x, struct pkt_gen *pg, __u64 addr, __u64 now,
			      bool late)
{
	void *data = xsk_queue_frame_data(x->q, addr);
	__u32 len = x->rp ? replay_frame(x->rp, data, addr, now) :
			    pkt_gen_next(pg, data, late ? 0 : now);

	x->lens[addr >> x->chunk_shift] = len;
	return len;
}

/*
 * Frames larger than a UMEM frame: as many of the n as the ring surely has
 * room for (the longest chain each) are written, each UMEM frame of a slot
 * one descriptor, XDP_PKT_CONTD on all but the last; the descriptors left
 * over go back. Returns the frames, and the descriptors in *ndesc.
 */
static __u32 xsk_fill_chains(struct xsk_tx *x, struct pkt_gen *pg, const __u64 *addrs, __u32 n,
			     __u64 now, bool late, __u32 *ndesc)
{
	struct xsk_queue *q = x->q;
	__u32 chunk = 1U << x->chunk_shift, fit, i, idx, nd = 0, off, left;

	fit = xsk_queue_tx_room(q, n * x->chain_max) / x->chain_max;
	if (fit < n)
		n = fit;
	*ndesc = 0;
	if (!n || !xsk_queue_tx_reserve(q, n * x->chain_max, &idx))
		return 0;
	for (i = 0; i < n; i++) {
		__u32 len = xsk_write(x, pg, addrs[i], now, late);

		for (off = 0, left = len; left; off += chunk) {
			struct xdp_desc *d = xsk_queue_tx_desc(q, idx + nd++);

			d->addr = addrs[i] + off;
			d->len = left > chunk ? chunk : left;
			d->options = left > chunk ? XDP_PKT_CONTD : 0;
			left -= d->len;
		}
	}
	xsk_queue_tx_unreserve(q, n * x->chain_max - nd);
	*ndesc = nd;
	return n;
}

/* Fill and submit up to 'want' frames; returns how many went into the ring. */
static __u32 xsk_send(struct gen_thread *t, struct xsk_tx *x, struct pkt_gen *pg, __u64 *addrs,
		      __u32 want, __u64 now, bool paced)
{
	struct xsk_queue *q = x->q;
	bool late = !x->rp && paced; /* stamp after writing (below) */
	__u32 n, got, nd, idx, i;

	n = x->rp ? replay_take(x->rp, want, addrs) : frame_alloc_bulk(q->fa, want, addrs);
	if (n < want)
		CNT_ADD(t->c.stall_frames, 1);
	if (!n)
		return 0;
	if (x->chain_max > 1) {
		got = xsk_fill_chains(x, pg, addrs, n, now, late, &nd);
	} else {
		got = nd = xsk_queue_tx_reserve(q, n, &idx);
		for (i = 0; i < got; i++) {
			struct xdp_desc *d = xsk_queue_tx_desc(q, idx + i);

			d->addr = addrs[i];
			d->len = xsk_write(x, pg, addrs[i], now, late);
		}
	}
	if (got < n) {
		CNT_ADD(t->c.stall_ring, 1);
		if (x->rp)
			replay_untake(x->rp, n - got);
		else
			frame_free_bulk(q->fa, n - got, addrs + got);
	}
	/*
	 * Paced, the send time goes in last, just before the submit and the
	 * kick (stamped while written, it was the time before the reap, the
	 * budget and the writing: 471 ns before the kick at 1 kpps, 110 after).
	 * Unpaced, a batch waits longer in the kick itself than it takes to
	 * write, and a second pass would cost every frame: stamped as written.
	 */
	if (late && got) {
		__u64 ts = now_ns();

		for (i = 0; i < got; i++)
			pkt_gen_set_time(pg, xsk_queue_frame_data(q, addrs[i]), ts);
	}
	if (got) {
		xsk_queue_tx_submit_chains(q, nd, got);
		CNT_ADD(t->c.submitted, got);
		gen_note_sent(t, now);
	}
	return got;
}

/* Every frame handed over is confirmed before the summary counts it. */
static void xsk_drain(struct gen_thread *t, struct xsk_tx *x)
{
	__u64 deadline = now_ns() + 2000000000ULL;

	while (t->c.sent < t->c.submitted && now_ns() < deadline) {
		if (!xsk_reap(t, x)) {
			xsk_kick(t, x);
			usleep(50);
		}
	}
}

/* After the last frame and mark: every UMEM frame is somewhere the allocator can name. */
static void xsk_finish(struct xsk_tx *x)
{
	if (x->rp)
		replay_q_release(x->rp, x->q);
	x->accounting_ok = !frame_alloc_check(x->q->fa, x->accounting, sizeof(x->accounting));
}

static void xsk_loop(struct gen_thread *t, struct xsk_tx *x, __u64 *addrs)
{
	struct gen *g = t->g;
	__u32 batch = (__u32)g->cfg->xsk_batch;
	/* Spin where sleeping cannot keep the pace, or when asked to (--busy-poll). */
	bool spin = g->cfg->xsk.busy_poll || t->pace.rate >= XSK_SPIN_RATE;
	__s64 jump_at = 0, jump_by = 0;
	bool jump = t->idx == 0 && seq_jump_hook(&jump_at, &jump_by);
	__u64 due;

	if (x->rp)
		x->rp->t0 = t->pace.t0;
	while (!gen_should_stop(g)) {
		__u32 want, reaped = xsk_reap(t, x);
		__u64 now;

		/* Returns first: what came back while we slept is timed before we send more. */
		if (x->rtt)
			rtt_q_poll(x->rtt);
		if (pace_done(&t->pace, t->c.submitted))
			break;
		now = now_ns();
		want = pace_budget(&t->pace, t->c.submitted, batch, now, &due);
		if (want && x->rp)
			want = replay_budget(x->rp, t->c.submitted, want, now, &due);
		if (!want) {
			xsk_kick(t, x);
			/*
			 * A return must wake us, not wait for the next frame: poll,
			 * or spinning (--busy-poll) look at the ring again at once.
			 */
			if (!x->rtt)
				pace_wait(due, spin);
			else if (!spin)
				rtt_q_wait(x->rtt, due);
			continue;
		}
		want = xsk_send(t, x, t->pg, addrs, want, now, t->pace.rate);
		pace_sent(&t->pace, want);
		if (xsk_queue_tx_round(x->q, reaped || want))
			CNT_ADD(t->c.stall_idle, 1);
		if (!want) {
			xsk_kick(t, x);
			continue;
		}
		if (jump && t->c.submitted >= (__u64)jump_at) {
			t->pg->seq[t->pg->shard] += (__u32)jump_by;
			jump = false;
		}
		xsk_kick(t, x);
	}
	xsk_drain(t, x);
	if (x->rtt)
		rtt_q_drain(x->rtt, t->c.sent);
}

/*
 * Several streams (streams.h): each turn takes each stream's budget, in
 * stream order, then one kick; when none is due, wait for the first due.
 */
static void xsk_streams_loop(struct gen_thread *t, struct xsk_tx *x, __u64 *addrs)
{
	struct gen *g = t->g;
	__u32 batch = (__u32)g->cfg->xsk_batch;
	__u64 rate = 0;
	unsigned int s;
	bool spin;

	for (s = 0; s < g->nstreams; s++) {
		t->ts[s].pace.t0 = t->pace.t0;
		rate += t->ts[s].pace.rate;
	}
	spin = g->cfg->xsk.busy_poll || rate >= XSK_SPIN_RATE;
	while (!gen_should_stop(g)) {
		__u64 now = now_ns(), first = 0, bytes;
		bool left = false, went = false, reaped = xsk_reap(t, x);

		for (s = 0; s < g->nstreams; s++) {
			struct gen_tstream *ts = &t->ts[s];
			__u32 want, i;

			if (gen_tstream_done(ts))
				continue;
			left = true;
			want = gen_tstream_budget(ts, batch, now, &first);
			if (!want)
				continue;
			want = xsk_send(t, x, ts->pg, addrs, want, now, ts->pace.rate);
			pace_sent(&ts->pace, want);
			for (i = 0, bytes = 0; i < want; i++)
				bytes += x->lens[addrs[i] >> x->chunk_shift];
			CNT_ADD(ts->attempted, want);
			CNT_ADD(ts->sent, want);
			CNT_ADD(ts->bytes, bytes);
			gen_tstream_note(ts, want, now);
			went |= want != 0;
		}
		if (!left)
			break;
		xsk_kick(t, x);
		if (!went && first)
			pace_wait(first, spin);
		else if (xsk_queue_tx_round(x->q, reaped || went))
			CNT_ADD(t->c.stall_idle, 1);
	}
	xsk_drain(t, x);
}

void *gen_xsk_worker(void *arg)
{
	struct gen_thread *t = arg;
	struct xsk_tx *x = t->m;
	__u64 *addrs;
	int err;

	runtime_block_signals();
	addrs = calloc(t->g->cfg->xsk_batch, sizeof(*addrs));
	err = cpu_pin_self(t->cpu);
	if (!err)
		err = xsk_setup(t, x);
	if (!err && !addrs)
		err = -ENOMEM;
	if (gen_worker_ready(t, err)) {
		gen_marks_start(t);
		if (t->ts)
			xsk_streams_loop(t, x, addrs);
		else
			xsk_loop(t, x, addrs);
		gen_marks_end(t);
		xsk_finish(x);
	}
	free(addrs);
	run_worker_done(&t->w);
	return NULL;
}
