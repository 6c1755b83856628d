// SPDX-License-Identifier: GPL-2.0
/*
 * xdp-gen qdisc: AF_PACKET through the qdisc layer, batched with sendmmsg,
 * one socket per thread: the transmit path that backs up and overflows. A
 * frame the qdisc refuses is counted and never sent again.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/if_packet.h>
#include <unistd.h>

#include "base/cpu.h"
#include "base/fmt.h"
#include "base/log.h"
#include "base/runtime.h"
#include "gen.h"
#include "marks.h"
#include "report/counter_desc.h"
#include "stall.h"
#include "streams.h"

/*
 * The mode's counters in gen_counters.m[]: frames the qdisc refused, and
 * tries of a mark it refused (sent again: a mark is not a counted frame, and
 * one the qdisc dropped was not on the wire).
 */
enum { QDISC_REFUSED, QDISC_MARKS_REFUSED };

#define STALL_WINDOW_NS 1000000000ULL

struct qdisc_gen {
	struct stall stall;
	__u64 stall_ns;
	bool stalled;
};

/* One thread's socket and its batch of frames. */
struct qdisc_tx {
	int fd;
	struct sockaddr_ll sll;
	struct mmsghdr *msgs;
	struct iovec *iov;
	__u8 *bufs;
};

static int qdisc_socket(struct gen_thread *t, struct qdisc_tx *x)
{
	const struct gen_cfg *cfg = t->g->cfg;
	int fd, val;

	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		pr_warn("cannot open an AF_PACKET socket: %s (needs CAP_NET_RAW)\n",
			strerror(errno));
		return -errno;
	}
	/*
	 * Blocking, with no send timeout: a short sendmmsg count then has one
	 * meaning, the qdisc refusing the next frame. A stop wakes a thread
	 * blocked on a full send buffer with SIGUSR1.
	 */
	if (cfg->sndbuf) {
		val = (int)(cfg->sndbuf / 2); /* the kernel doubles what it is given */
		if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &val, sizeof(val))) {
			pr_warn("cannot force the send buffer to %" PRIu64
				" bytes (%s); using the sysctl limit\n",
				(uint64_t)cfg->sndbuf, strerror(errno));
			setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &val, sizeof(val));
		}
	}
	memset(&x->sll, 0, sizeof(x->sll));
	x->sll.sll_family = AF_PACKET;
	x->sll.sll_ifindex = t->g->ifc.ifindex;
	x->sll.sll_halen = 6;
	memcpy(x->sll.sll_addr, t->g->popts.dst_mac, 6);
	x->fd = fd;
	return 0;
}

static int qdisc_setup(struct gen_thread *t, struct qdisc_tx *x)
{
	__u32 batch = (__u32)t->g->cfg->batch, i;
	unsigned int flen = pkt_gen_max_len(t->pg);
	int err;

	x->msgs = calloc(batch, sizeof(*x->msgs));
	x->iov = calloc(batch, sizeof(*x->iov));
	x->bufs = calloc(batch, flen);
	if (!x->msgs || !x->iov || !x->bufs)
		return -ENOMEM;
	err = cpu_pin_self(t->cpu);
	if (!err)
		err = qdisc_socket(t, x);
	for (i = 0; !err && i < batch; i++) {
		pkt_gen_prefill(t->pg, x->bufs + (size_t)i * flen);
		x->iov[i].iov_base = x->bufs + (size_t)i * flen;
		x->msgs[i].msg_hdr.msg_name = &x->sll;
		x->msgs[i].msg_hdr.msg_namelen = sizeof(x->sll);
		x->msgs[i].msg_hdr.msg_iov = &x->iov[i];
		x->msgs[i].msg_hdr.msg_iovlen = 1;
	}
	return err;
}

/*
 * Hand 'want' frames to the qdisc. Returns the frames dealt with (accepted
 * or refused), or -errno on a failure that ends the thread.
 */
static int qdisc_send(struct gen_thread *t, struct qdisc_tx *x, __u32 want)
{
	struct gen *g = t->g;
	__u32 start = 0, i;
	__u64 bytes = 0;

	while (start < want && !gen_should_stop(g)) {
		int r = sendmmsg(x->fd, x->msgs + start, want - start, 0);

		if (r < 0 && errno == EINTR)
			break; /* woken to stop: this frame was not taken */
		if (r < 0 && errno != ENOBUFS) {
			pr_warn("sendmmsg on %s: %s\n", g->ifc.name, strerror(errno));
			return -errno;
		}
		if (r < 0) {
			/* The qdisc was full and dropped it: refused, never sent again. */
			CNT_ADD(t->c.m[QDISC_REFUSED], 1);
			start++;
			continue;
		}
		for (i = start; i < start + (__u32)r; i++)
			bytes += x->iov[i].iov_len;
		CNT_ADD(t->c.sent, (__u64)r);
		start += (__u32)r;
		/*
		 * A short count: sendmmsg dropped the error of the next frame.
		 * On a blocking packet socket without a send timeout that is
		 * the qdisc refusing it (ENOBUFS), unless the wake-up signal
		 * interrupted the call (then the frame was not taken). The stop
		 * flag alone says nothing: it can be set while the qdisc refuses.
		 */
		if (start < want) {
			if (gen_woken)
				break;
			CNT_ADD(t->c.m[QDISC_REFUSED], 1);
			start++;
		}
	}
	CNT_ADD(t->c.bytes, bytes);
	return (int)start;
}

static void qdisc_loop(struct gen_thread *t, struct qdisc_tx *x)
{
	struct gen *g = t->g;
	__u32 batch = (__u32)g->cfg->batch, i;
	__u64 due;

	while (!gen_should_stop(g)) {
		__u64 attempted = t->c.sent + t->c.m[QDISC_REFUSED], ts;
		__u32 want;
		int done;

		if (pace_done(&t->pace, attempted))
			break;
		want = pace_budget(&t->pace, attempted, batch, now_ns(), &due);
		if (!want) {
			pace_wait(due, false);
			continue;
		}
		ts = now_ns();
		for (i = 0; i < want; i++)
			x->iov[i].iov_len = pkt_gen_next(t->pg, x->iov[i].iov_base, ts);
		done = qdisc_send(t, x, want);
		if (done < 0) {
			t->w.err = done;
			break;
		}
		for (i = want; i-- > (__u32)done;)
			pkt_gen_take_back(t->pg, x->iov[i].iov_base);
		pace_sent(&t->pace, (__u32)done);
		CNT_ADD(t->c.submitted, (__u64)done);
		gen_note_sent(t, ts);
	}
}

/*
 * Several streams (streams.h): each turn hands each stream's budget to the
 * qdisc, in stream order; when none is due, sleep until the first is.
 */
static void qdisc_streams_loop(struct gen_thread *t, struct qdisc_tx *x)
{
	struct gen *g = t->g;
	__u32 batch = (__u32)g->cfg->batch, i;
	unsigned int s;

	for (s = 0; s < g->nstreams; s++)
		t->ts[s].pace.t0 = t->pace.t0;
	while (!gen_should_stop(g)) {
		__u64 now = now_ns(), first = 0, sent, bytes, stamp;
		bool left = false, went = false;

		for (s = 0; s < g->nstreams && !gen_should_stop(g); s++) {
			struct gen_tstream *ts = &t->ts[s];
			__u32 want;
			int done;

			if (gen_tstream_done(ts))
				continue;
			left = true;
			want = gen_tstream_budget(ts, batch, now, &first);
			if (!want)
				continue;
			stamp = now_ns();
			for (i = 0; i < want; i++)
				x->iov[i].iov_len = pkt_gen_next(ts->pg, x->iov[i].iov_base, stamp);
			sent = t->c.sent;
			bytes = t->c.bytes;
			done = qdisc_send(t, x, want);
			if (done < 0) {
				t->w.err = done;
				return;
			}
			for (i = want; i-- > (__u32)done;)
				pkt_gen_take_back(ts->pg, x->iov[i].iov_base);
			pace_sent(&ts->pace, (__u32)done);
			CNT_ADD(ts->attempted, (__u64)done);
			CNT_ADD(ts->sent, t->c.sent - sent);
			CNT_ADD(ts->bytes, t->c.bytes - bytes);
			CNT_ADD(t->c.submitted, (__u64)done);
			gen_note_sent(t, stamp);
			gen_tstream_note(ts, (__u32)done, stamp);
			went |= done != 0;
		}
		if (!left)
			break;
		if (!went && first)
			pace_wait(first, false);
	}
}

/* A mark that waits for room in the send buffer waits no longer than this. */
#define QDISC_MARK_WAIT_NS 1000000000ULL

/*
 * Marks through the thread's own socket, as its frames go, one sendto each
 * and never blocking: a full send buffer, or a full qdisc that refused a
 * mark (ENOBUFS: counted, for the qdisc's drops), are waited out a bounded
 * time. Returns the marks it took.
 */
static int qdisc_mark_send(struct gen_thread *t, void *const *frames, const __u32 *lens,
			   unsigned int n)
{
	struct qdisc_tx *x = t->m;
	__u64 deadline = now_ns() + QDISC_MARK_WAIT_NS;
	unsigned int i, taken = 0;

	for (i = 0; i < n; i++) {
		for (;;) {
			ssize_t r = sendto(x->fd, frames[i], lens[i], MSG_DONTWAIT,
					   (struct sockaddr *)&x->sll, sizeof(x->sll));

			if (r >= 0) {
				taken++;
				break;
			}
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS)
				CNT_ADD(t->c.m[QDISC_MARKS_REFUSED], 1);
			else if (errno != EAGAIN)
				return taken ? (int)taken : -errno;
			if (now_ns() > deadline)
				return taken ? (int)taken : -errno;
			usleep(50);
		}
	}
	return (int)taken;
}

static void *qdisc_worker(void *arg)
{
	struct gen_thread *t = arg;
	struct qdisc_tx x = { .fd = -1 };

	runtime_block_signals();
	t->m = &x;
	if (gen_worker_ready(t, qdisc_setup(t, &x))) {
		gen_marks_start(t);
		if (t->ts)
			qdisc_streams_loop(t, &x);
		else
			qdisc_loop(t, &x);
		gen_marks_end(t);
	}
	if (x.fd >= 0)
		close(x.fd);
	free(x.msgs);
	free(x.iov);
	free(x.bufs);
	t->m = NULL;
	run_worker_done(&t->w);
	return NULL;
}

static int qdisc_plan(struct gen *g, unsigned int maxq)
{
	int err = gen_plan_threads(g, maxq);

	if (err)
		return err;
	g->m = calloc(1, sizeof(struct qdisc_gen));
	if (!g->m)
		return -ENOMEM;
	stall_init(&((struct qdisc_gen *)g->m)->stall, STALL_WINDOW_NS);
	return 0;
}

static const char *qdisc_describe(const struct gen *g)
{
	(void)g;
	return "AF_PACKET through the qdisc";
}

#ifdef XDPSG_TEST_HOOKS
/* Test build only: XDPSG_TEST_STALL=1 feeds the detector a frozen counter. */
static bool stall_hook(void)
{
	static int hook = -1;

	if (hook < 0)
		hook = getenv("XDPSG_TEST_STALL") != NULL;
	return hook;
}
#else
static bool stall_hook(void)
{
	return false;
}
#endif

/*
 * The qdisc holds packets but has sent none for a second: its device's TX
 * queue is stopped and nobody wakes it. Say so and stop instead of hanging.
 */
static const char *qdisc_check(struct gen *g, struct gen_snapshot *cur)
{
	bool hook = stall_hook();
	struct qdisc_gen *q = g->m;
	const struct kstats_qdisc *root;
	__u64 now = now_ns(), sent, backlog;

	if (kstats_read(g->kr, cur->ks))
		return NULL;
	root = kstats_root(cur->ks);
	if (!root)
		return NULL;
	sent = hook ? 0 : root->packets;
	backlog = hook ? 1 : root->backlog + root->qlen;
	if (!stall_update(&q->stall, now, sent, backlog))
		return NULL;
	q->stall_ns = stall_duration(&q->stall, now);
	q->stalled = true;
	pr_warn("stall: the %s qdisc on %s holds %" PRIu64 " bytes (%" PRIu64
		" packets) but sent nothing for %.1f s; its TX queue looks stopped and never woken (seen with multi-queue veth and GRO-only NAPI on the peer: attach an XDP program to the peer)\n",
		root->kind, g->ifc.name, (uint64_t)root->backlog, (uint64_t)root->qlen,
		(double)q->stall_ns / 1e9);
	return "stall";
}

static void qdisc_json(struct gen *g, struct jw *w, const struct gen_snapshot *a,
		       const struct gen_snapshot *b, enum run_report kind)
{
	__u64 refused = gen_mode_delta(a, b, QDISC_REFUSED);

	(void)g;
	(void)kind;
	/* attempted = accepted (tx_packets) + refused by a full qdisc */
	jw_u64(w, "attempted", a->total.sent - b->total.sent + refused);
	jw_u64(w, "refused", refused);
	jw_u64(w, "marks_refused", gen_mode_delta(a, b, QDISC_MARKS_REFUSED));
}

static void qdisc_text(struct gen *g, const struct gen_snapshot *a, const struct gen_snapshot *b,
		       enum run_report kind)
{
	__u64 refused = gen_mode_delta(a, b, QDISC_REFUSED), sent = a->total.sent - b->total.sent;

	(void)g;
	/* An interval's refused frames are in its drops list. */
	if (kind == RUN_SUMMARY)
		printf("  attempted %s = accepted %s + refused %s (ENOBUFS: the qdisc was full); marks refused and sent again %s\n",
		       FMT_COUNT((sent + refused)), FMT_COUNT(sent), FMT_COUNT(refused),
		       FMT_COUNT(gen_mode_delta(a, b, QDISC_MARKS_REFUSED)));
}

static int qdisc_verdict(struct gen *g, const char *stop_reason)
{
	(void)stop_reason;
	return ((struct qdisc_gen *)g->m)->stalled ? -EIO : 0;
}

static void qdisc_cleanup(struct gen *g)
{
	free(g->m);
	g->m = NULL;
}

static const struct ctr_desc failure_rows[] = {
	{ "refused", GEN_FAIL_M(QDISC_REFUSED), CTR_COUNTER, "frames", CTR_ALL, 0,
	  "Frames the qdisc refused (ENOBUFS: it was full and dropped them); not sent again." },
};

static const struct ctr_family qdisc_failures = {
	.name = "gen_qdisc_failures",
	.json = "drops",
	.metric = "xdp_gen_failures_total",
	.label = "reason",
	CTR_ROWS(failure_rows),
};

const struct gen_mode gen_mode_qdisc = {
	.unit = "thread",
	.failures = &qdisc_failures,
	.needs_kstats = true,
	.wake_by_signal = true,
	.plan = qdisc_plan,
	.worker = qdisc_worker,
	.describe = qdisc_describe,
	.check = qdisc_check,
	.json = qdisc_json,
	.text = qdisc_text,
	.verdict = qdisc_verdict,
	.cleanup = qdisc_cleanup,
	.mark_send = qdisc_mark_send,
};
