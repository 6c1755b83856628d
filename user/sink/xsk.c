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

#include "counter.h"
#include "cpu.h"
#include "fmt.h"
#include "hist.h"
#include "outfile.h"
#include "log.h"
#include "runtime.h"
#include "seqtrack.h"
#include "sink.h"
#include "stamp.h"
#include "xdp_sink.skel.h"

/* What one queue's thread has counted. */
struct xq_counts {
	__u64 rx_packets; /* delivered to user space */
	__u64 rx_bytes;
	__u64 foreign; /* without a stamp */
	struct seqtrack_counts st;
};

/* Written by the queue's thread only, read by main: a cache line of its own. */
struct xq_published {
	struct xq_counts c;
} __attribute__((aligned(64)));

struct xq {
	struct run_worker w;
	struct sink *sk;
	unsigned int queue;
	int cpu;
	struct xsk_queue *q;
	struct seqtrack *tr;
	struct hist *hist;
	struct xq_published pub;
	char accounting[160];
	bool accounting_ok;
};

struct xsk_state {
	unsigned int nxq;
	struct xq *xq;
};

/*
 * The mode's part of a reading: each queue's counters, then each socket's
 * XDP_STATISTICS, nxq of each.
 */
static size_t xsk_snap_size(const struct sink *sk)
{
	const struct xsk_state *xs = sk->ms;

	return xs->nxq * (sizeof(struct xq_counts) + sizeof(struct xdp_statistics));
}

static struct xq_counts *snap_xc(const struct sink_snap *s)
{
	return s->mode;
}

static struct xdp_statistics *snap_xs(const struct sink *sk, const struct sink_snap *s)
{
	const struct xsk_state *xs = sk->ms;

	return (struct xdp_statistics *)(snap_xc(s) + xs->nxq);
}

static void xq_counts_read(struct xq_counts *d, const struct xq_published *s)
{
	const __u64 *src = (const __u64 *)&s->c;
	__u64 *dst = (__u64 *)d;
	unsigned int i;

	for (i = 0; i < sizeof(*d) / sizeof(__u64); i++)
		dst[i] = CNT_READ(src[i]);
}

static void xsk_read(struct sink *sk, struct sink_snap *s)
{
	const struct xsk_state *xs = sk->ms;
	struct xq_counts *xc = snap_xc(s);
	struct xdp_statistics *st = snap_xs(sk, s);
	unsigned int i;

	for (i = 0; i < xs->nxq; i++) {
		xq_counts_read(&xc[i], &xs->xq[i].pub);
		if (!xs->xq[i].q || xsk_queue_stats(xs->xq[i].q, &st[i]))
			memset(&st[i], 0, sizeof(st[i]));
	}
}

/* Totals over the queues of a reading. */
static void xq_total(const struct sink *sk, const struct sink_snap *s, struct xq_counts *c,
		     struct xdp_statistics *x)
{
	const struct xsk_state *xs = sk->ms;
	const struct xq_counts *xc = snap_xc(s);
	const struct xdp_statistics *st = snap_xs(sk, s);
	unsigned int i;

	memset(c, 0, sizeof(*c));
	memset(x, 0, sizeof(*x));
	for (i = 0; i < xs->nxq; i++) {
		c->rx_packets += xc[i].rx_packets;
		c->rx_bytes += xc[i].rx_bytes;
		c->foreign += xc[i].foreign;
		seqtrack_counts_merge(&c->st, &xc[i].st);
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

	xq_total(sk, s, &c, &x);
	if (bytes)
		*bytes = c.rx_bytes;
	return c.rx_packets;
}

static void xsk_deltas(const struct sink *sk, const struct sink_snap *a, const struct sink_snap *b,
		       struct xq_counts *c, struct xdp_statistics *x)
{
	struct xq_counts cb;
	struct xdp_statistics xb;
	__u64 *pc = (__u64 *)c;
	const __u64 *pb = (const __u64 *)&cb;
	unsigned int i;

	xq_total(sk, a, c, x);
	xq_total(sk, b, &cb, &xb);
	for (i = 0; i < sizeof(*c) / sizeof(__u64); i++)
		pc[i] -= pb[i];
	x->rx_dropped -= xb.rx_dropped;
	x->rx_invalid_descs -= xb.rx_invalid_descs;
	x->rx_ring_full -= xb.rx_ring_full;
	x->rx_fill_ring_empty_descs -= xb.rx_fill_ring_empty_descs;
}

/* Where every packet the program saw went. Returns the unexplained rest. */
static __s64 xsk_balance(const struct sink_stats *d, const struct xq_counts *c,
			 const struct xdp_statistics *x)
{
	return (__s64)d->packets - (__s64)(c->rx_packets + d->redirect_err + x->rx_dropped +
					   x->rx_ring_full + x->rx_invalid_descs);
}

/* The queues' latency histograms in one; NULL without memory. The caller frees it. */
static struct hist *merged_hist(const struct sink *sk)
{
	const struct xsk_state *xs = sk->ms;
	struct hist *h = malloc(sizeof(*h));
	unsigned int i;

	if (!h)
		return NULL;
	hist_init(h);
	for (i = 0; i < xs->nxq; i++)
		if (xs->xq[i].hist)
			hist_merge(h, xs->xq[i].hist);
	return h;
}

static const char *xq_bind_mode(const struct xq *x)
{
	return x->q && x->q->zerocopy ? "zero-copy" : "copy";
}

/* ---------------------------------------------------------------------------
 * Reports
 */

static void json_checks(struct jw *w, const struct xq_counts *c)
{
	jw_u64(w, "stamped", c->st.received);
	jw_u64(w, "foreign", c->foreign);
	/* Signed: a reordered packet filling an earlier gap takes one back. */
	jw_i64(w, "lost", (__s64)c->st.lost);
	jw_u64(w, "duplicates", c->st.duplicates);
	jw_u64(w, "reordered", c->st.reordered);
	jw_u64(w, "late", c->st.late);
	jw_u64(w, "restarts", c->st.restarts);
}

static void json_drops(struct jw *w, const struct sink_stats *d, const struct xdp_statistics *x)
{
	jw_obj(w, "drops");
	jw_u64(w, "no_socket", d->redirect_err);
	jw_u64(w, "xsk_fill_ring_empty", x->rx_dropped);
	jw_u64(w, "xsk_rx_ring_full", x->rx_ring_full);
	jw_u64(w, "xsk_rx_invalid", x->rx_invalid_descs);
	jw_end_obj(w);
	jw_obj(w, "xsk");
	jw_u64(w, "rx_dropped", x->rx_dropped);
	jw_u64(w, "rx_ring_full", x->rx_ring_full);
	jw_u64(w, "rx_fill_ring_empty_descs", x->rx_fill_ring_empty_descs);
	jw_u64(w, "rx_invalid_descs", x->rx_invalid_descs);
	jw_end_obj(w);
}

static void json_latency(const struct sink *sk, struct jw *w)
{
	struct hist *h = merged_hist(sk);
	struct hist_summary hs;

	if (!h)
		return;
	hist_summarize(h, &hs);
	jw_obj(w, "latency_ns");
	jw_u64(w, "count", hs.count);
	jw_u64(w, "min", hs.min);
	jw_u64(w, "p50", hs.p50);
	jw_u64(w, "p90", hs.p90);
	jw_u64(w, "p99", hs.p99);
	jw_u64(w, "p999", hs.p999);
	jw_u64(w, "max", hs.max);
	jw_double(w, "mean", hs.mean);
	jw_end_obj(w);
	free(h);
}

static void json_sockets(const struct sink *sk, struct jw *w, const struct sink_snap *a,
			 const struct sink_snap *b, bool summary)
{
	const struct xsk_state *xs = sk->ms;
	const struct xq_counts *ca = snap_xc(a), *cb = snap_xc(b);
	const struct xdp_statistics *sa = snap_xs(sk, a), *sb = snap_xs(sk, b);
	unsigned int i;

	jw_arr(w, "sockets");
	for (i = 0; i < xs->nxq; i++) {
		const struct xq *x = &xs->xq[i];

		jw_obj(w, NULL);
		jw_u64(w, "queue", x->queue);
		jw_u64(w, "cpu", (__u64)x->cpu);
		jw_str(w, "mode", xq_bind_mode(x));
		jw_u64(w, "rx_packets", ca[i].rx_packets - cb[i].rx_packets);
		jw_double(w, "pps",
			  counter_rate(ca[i].rx_packets, cb[i].rx_packets,
				       a->rs.t_ns - b->rs.t_ns));
		if (!sk->cfg->no_verify) {
			jw_i64(w, "lost", (__s64)(ca[i].st.lost - cb[i].st.lost));
			jw_u64(w, "duplicates", ca[i].st.duplicates - cb[i].st.duplicates);
			jw_u64(w, "reordered", ca[i].st.reordered - cb[i].st.reordered);
		}
		jw_u64(w, "rx_ring_full", sa[i].rx_ring_full - sb[i].rx_ring_full);
		jw_u64(w, "fill_ring_empty", sa[i].rx_dropped - sb[i].rx_dropped);
		if (summary && x->accounting[0]) {
			jw_bool(w, "frames_balanced", x->accounting_ok);
			jw_str(w, "frame_accounting", x->accounting);
		}
		jw_end_obj(w);
	}
	jw_end_arr(w);
}

static void xsk_json(const struct sink *sk, struct jw *w, const struct sink_snap *a,
		     const struct sink_snap *b, const struct sink_stats *d,
		     const struct sink_drops *dr, enum run_report kind)
{
	bool summary = kind == RUN_SUMMARY;
	struct xq_counts c;
	struct xdp_statistics x;

	(void)dr;
	xsk_deltas(sk, a, b, &c, &x);
	jw_u64(w, "xdp_packets", d->packets);
	if (!sk->cfg->no_verify)
		json_checks(w, &c);
	json_drops(w, d, &x);
	if (summary)
		jw_i64(w, "unexplained", xsk_balance(d, &c, &x));
	if (summary && !sk->cfg->no_verify)
		json_latency(sk, w);
	json_sockets(sk, w, a, b, summary);
}

static void text_interval(const struct sink *sk, const struct sink_stats *d,
			  const struct xq_counts *c, const struct xdp_statistics *x)
{
	if (!sk->cfg->no_verify)
		printf("  lost %" PRId64 " dup %" PRIu64 " reord %" PRIu64 " foreign %" PRIu64,
		       (int64_t)c->st.lost, (uint64_t)c->st.duplicates, (uint64_t)c->st.reordered,
		       (uint64_t)c->foreign);
	if (x->rx_dropped || x->rx_ring_full || d->redirect_err)
		printf("  drops: fill empty %" PRIu64 " ring full %" PRIu64 " no socket %" PRIu64,
		       (uint64_t)x->rx_dropped, (uint64_t)x->rx_ring_full,
		       (uint64_t)d->redirect_err);
}

static void text_checks(const struct sink *sk, const struct xq_counts *c)
{
	struct hist *h = merged_hist(sk);
	struct hist_summary hs;
	char l[6][24];

	printf("  checked:  %s stamped, %s foreign; lost %" PRIu64 ", duplicates %" PRIu64
	       ", reordered %" PRIu64 ", late %" PRIu64 ", restarts %" PRIu64 "\n",
	       fmt_count(l[0], sizeof(l[0]), c->st.received),
	       fmt_count(l[1], sizeof(l[1]), c->foreign), (uint64_t)c->st.lost,
	       (uint64_t)c->st.duplicates, (uint64_t)c->st.reordered, (uint64_t)c->st.late,
	       (uint64_t)c->st.restarts);
	if (!h)
		return;
	hist_summarize(h, &hs);
	if (hs.count)
		printf("  latency:  min %s, p50 %s, p90 %s, p99 %s, p99.9 %s, max %s\n",
		       fmt_ns(l[0], 24, hs.min), fmt_ns(l[1], 24, hs.p50), fmt_ns(l[2], 24, hs.p90),
		       fmt_ns(l[3], 24, hs.p99), fmt_ns(l[4], 24, hs.p999),
		       fmt_ns(l[5], 24, hs.max));
	free(h);
}

static void text_summary(const struct sink *sk, const struct sink_snap *a,
			 const struct sink_snap *b, const struct sink_stats *d,
			 const struct xq_counts *c, const struct xdp_statistics *x)
{
	const struct xsk_state *xs = sk->ms;
	const struct xq_counts *ca = snap_xc(a), *cb = snap_xc(b);
	char l[2][24];
	unsigned int i;

	if (!sk->cfg->no_verify)
		text_checks(sk, c);
	printf("  accounted: XDP saw %s = delivered %s + no socket %" PRIu64
	       " + fill ring empty %" PRIu64 " + rx ring full %" PRIu64 " + invalid %" PRIu64
	       "; unexplained %" PRId64 "\n",
	       fmt_count(l[0], sizeof(l[0]), d->packets),
	       fmt_count(l[1], sizeof(l[1]), c->rx_packets), (uint64_t)d->redirect_err,
	       (uint64_t)x->rx_dropped, (uint64_t)x->rx_ring_full, (uint64_t)x->rx_invalid_descs,
	       (int64_t)xsk_balance(d, c, x));
	for (i = 0; i < xs->nxq; i++) {
		const struct xq *q = &xs->xq[i];

		printf("    socket queue %-3u cpu %-3d %s mode %14s packets%s%s\n", q->queue,
		       q->cpu, xq_bind_mode(q),
		       fmt_count(l[0], sizeof(l[0]), ca[i].rx_packets - cb[i].rx_packets),
		       q->accounting[0] ? "  frames: " : "", q->accounting);
	}
}

static void xsk_text(const struct sink *sk, const struct sink_snap *a, const struct sink_snap *b,
		     const struct sink_stats *d, enum run_report kind)
{
	struct xq_counts c;
	struct xdp_statistics x;

	xsk_deltas(sk, a, b, &c, &x);
	if (kind == RUN_SUMMARY)
		text_summary(sk, a, b, d, &c, &x);
	else
		text_interval(sk, d, &c, &x);
}

/* After the summary: the histogram file, and the frame accounting verdict. */
static int xsk_finish(struct sink *sk)
{
	const struct xsk_state *xs = sk->ms;
	const char *path = sk->cfg->hist;
	unsigned int i;
	int err = 0;

	if (path) {
		struct hist *h = merged_hist(sk);
		size_t len = strlen(path);
		struct outfile o;

		/* A new file renamed over the old one at the end: a failure keeps the old. */
		err = h ? outfile_open(&o, "--hist", path) : -ENOMEM;
		if (!err)
			err = len > 5 && !strcmp(path + len - 5, ".json") ?
				      hist_write_json(h, o.f) :
				      hist_write_csv(h, o.f);
		if (!err)
			err = outfile_commit(&o);
		else if (h)
			outfile_abort(&o);
		if (err)
			err = -EIO;
		free(h);
	}
	for (i = 0; i < xs->nxq; i++)
		if (xs->xq[i].accounting[0] && !xs->xq[i].accounting_ok) {
			pr_warn("queue %u: frame accounting does not balance: %s\n",
				xs->xq[i].queue, xs->xq[i].accounting);
			err = -EIO;
		}
	return err;
}

/* ---------------------------------------------------------------------------
 * The queues' threads
 */

static int xq_setup(struct xq *x)
{
	const struct sink_cfg *cfg = x->sk->cfg;
	struct xsk_queue_opts o;
	__u32 key = x->queue;
	int fd, err;

	xsk_queue_opts_cli(&o, x->sk->ifc.name, x->queue, x->cpu, &cfg->xsk, (__u32)cfg->batch,
			   (__u32)cfg->ring_size, 0);
	err = xsk_queue__create(&x->q, &o);
	if (err)
		return err;
	if (!cfg->no_verify) {
		x->tr = seqtrack__create(0);
		x->hist = malloc(sizeof(*x->hist));
		if (!x->tr || !x->hist)
			return -ENOMEM;
		hist_init(x->hist);
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

/* Busy work per packet, the user-space twin of the XDP --cost knob. */
static void spin_until(__u64 t)
{
	while (now_ns() < t)
		;
}

/* Verify and count one batch of n descriptors from idx, then publish the totals. */
static void xq_consume(struct xq *x, struct xq_counts *t, __u32 idx, __u32 n, __u64 now)
{
	const struct sink_cfg *cfg = x->sk->cfg;
	__u32 i;

	for (i = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_queue_rx_desc(x->q, idx + i);
		const void *data = xsk_queue_frame_data(x->q, d->addr);
		struct xdpsg_stamp st;

		t->rx_bytes += d->len;
		if (x->tr) {
			if (!stamp_read(data, d->len, &st)) {
				seqtrack_update(x->tr, &st);
				if (st.ts_ns <= now)
					hist_record(x->hist, now - st.ts_ns);
			} else {
				t->foreign++;
			}
		}
		if (cfg->cost)
			spin_until(now_ns() + cfg->cost);
	}
	t->rx_packets += n;
	xsk_queue_rx_recycle(x->q, idx, n);
	xsk_queue_refill(x->q);
	if (x->tr)
		t->st = x->tr->counts;
	/* Publish once per batch: plain stores, one writer. */
	CNT_SET(x->pub.c.rx_packets, t->rx_packets);
	CNT_SET(x->pub.c.rx_bytes, t->rx_bytes);
	CNT_SET(x->pub.c.foreign, t->foreign);
	if (x->tr) {
		const __u64 *src = (const __u64 *)&t->st;
		__u64 *dst = (__u64 *)&x->pub.c.st;

		for (i = 0; i < sizeof(t->st) / sizeof(__u64); i++)
			CNT_SET(dst[i], src[i]);
	}
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
			/* Spin while traffic flows; sleep in poll() when it does not. */
			if (cfg->poll || ++idle > 10000) {
				poll(&pfd, 1, 10);
				idle = 0;
			}
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

/* One queue and CPU per thread, checked before anything is created. */
static int plan_queues(struct sink *sk, struct xsk_state *xs)
{
	const struct sink_cfg *cfg = sk->cfg;
	unsigned int i, ncpu = (unsigned int)cpu_online_count();
	unsigned int nrx = sk->ifc.rx_queues ? sk->ifc.rx_queues : 1;

	for (i = 0; i < xs->nxq; i++) {
		struct xq *x = &xs->xq[i];

		x->sk = sk;
		x->queue = cfg->queues.all ? i : cfg->queues.ids[i];
		if (x->queue >= nrx) {
			pr_warn("%s has no queue %u (it has %u); pick from 0-%u\n", sk->ifc.name,
				x->queue, nrx, nrx - 1);
			return -EINVAL;
		}
		/*
		 * Default: the highest CPUs, away from a generator on the same
		 * machine (xdp-gen starts at CPU 0, and on veth the receive work
		 * runs in the sender's softirq on the sender's CPU).
		 */
		x->cpu = (cfg->cpus.n && !cfg->cpus.all) ? (int)cfg->cpus.ids[i] :
							   (int)(ncpu - 1 - i % ncpu);
		if (x->cpu >= (int)ncpu) {
			pr_warn("CPU %d is not online (CPUs 0-%u); fix --cpus\n", x->cpu, ncpu - 1);
			return -EINVAL;
		}
	}
	return 0;
}

static int xsk_plan(struct sink *sk)
{
	const struct sink_cfg *cfg = sk->cfg;
	unsigned int n, nrx = sk->ifc.rx_queues ? sk->ifc.rx_queues : 1;
	struct xsk_state *xs;

	if (xsk_queue_check_cli(sk->ifc.driver, &cfg->xsk, cfg->ring_size))
		return -EINVAL;
	if (cfg->no_verify && cfg->hist) {
		pr_warn("--hist needs the stamps that --no-verify skips; drop one of them\n");
		return -EINVAL;
	}
	/* Only checked here: the file is written when the run has ended. */
	if (cfg->hist && outfile_check("--hist", cfg->hist))
		return -EINVAL;
	n = cfg->queues.all ? nrx : cfg->queues.n;
	if (n > XDPSG_MAX_QUEUES)
		n = XDPSG_MAX_QUEUES;
	if (!cfg->cpus.all && cfg->cpus.n && cfg->cpus.n != n) {
		pr_warn("--cpus names %u CPUs for %u queues; give one CPU per queue\n", cfg->cpus.n,
			n);
		return -EINVAL;
	}
	xs = calloc(1, sizeof(*xs));
	if (!xs)
		return -ENOMEM;
	sk->ms = xs;
	xs->xq = calloc(n, sizeof(*xs->xq));
	if (!xs->xq)
		return -ENOMEM;
	xs->nxq = n;
	return plan_queues(sk, xs);
}

/* Sockets first: the program finds them in the XSKMAP from its first packet. */
static int xsk_start(struct sink *sk)
{
	struct xsk_state *xs = sk->ms;

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
		free(xs->xq[i].hist);
	}
	free(xs->xq);
	free(xs);
	sk->ms = NULL;
}

const struct sink_mode_ops sink_xsk_ops = {
	.prog = "xdp_sink_xsk",
	.pins = SINK_PIN_STATS | SINK_PIN_XSKS,
	.user_cost = true,
	.plan = xsk_plan,
	.start = xsk_start,
	.snap_size = xsk_snap_size,
	.read = xsk_read,
	.received = xsk_received,
	.json = xsk_json,
	.text = xsk_text,
	.finish = xsk_finish,
	.cleanup = xsk_cleanup,
};
