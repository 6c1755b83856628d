// SPDX-License-Identifier: GPL-2.0
/*
 * xdp-gen xsk --rtt: receive our own frames back from a reflector and keep
 * their books with seqtrack (lost, duplicates, round-trip histogram).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/fmt.h"
#include "base/log.h"
#include "gen.h"
#include "kern/xdp_attach.h"
#include "measure/seqtrack.h"
#include "pkt/stamp.h"
#include "report/metrics.h"
#include "rtt.h"
#include "xdp_gen.skel.h"

/*
 * After the last send, returns are awaited until all are in, or until none
 * came for RTT_IDLE_NS, and never longer than RTT_DRAIN_NS: a frame that
 * takes longer than that to come back is as good as lost.
 */
#define RTT_IDLE_NS 500000000ULL
#define RTT_DRAIN_NS 3000000000ULL

struct rtt_q {
	struct xsk_queue *q;
	struct pkt_gen *pg; /* restores the payload of returned frames before they are sent again */
	struct seqtrack *st;
	const struct stamp_key *key;
	__u32 run;
	__u64 clock_off; /* the stamps' clock minus CLOCK_MONOTONIC (--clock) */
	__u64 ours; /* frames of this run that came back (duplicates included) */
	__u64 marks; /* this run's marks that came back: in no book */
	__u64 foreign; /* anything else the program handed us */
};

struct gen_rtt {
	struct xdp_gen_bpf *skel;
	struct xdp_attachment *att;
	struct rtt_q **qs; /* per thread */
	/* the summary, computed once after the workers ended */
	bool summed;
	struct seqtrack_summary s;
	struct hist lat;
	__u64 sent, back, lost, foreign;
	__u64 no_socket; /* came back on a queue without a socket (the program's count) */
};

int gen_rtt_setup(struct gen *g)
{
	struct xdp_attach_opts ao = {
		.tool = "xdp-gen",
		.own_prefix = "xdp_gen_",
		.ifname = g->ifc.name,
		.ifindex = g->ifc.ifindex,
		.mode = XDPSG_MODE_NATIVE,
	};
	struct bpf_program *p;
	struct gen_rtt *r;
	int err;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	g->rtt = r;
	r->qs = calloc(g->nthreads, sizeof(*r->qs));
	r->skel = xdp_gen_bpf__open();
	if (!r->qs || !r->skel)
		return -ENOMEM;
	bpf_object__for_each_program(p, r->skel->obj)
		bpf_program__set_autoload(p, p == r->skel->progs.xdp_gen_rtt);
	err = xdp_gen_bpf__load(r->skel);
	if (err) {
		pr_warn("cannot load the --rtt receive program: %s\n", strerror(-err));
		return err;
	}
	return xdp_attachment__create(r->skel->obj, "xdp_gen_rtt", &ao, &r->att);
}

void gen_rtt_cleanup(struct gen *g)
{
	struct gen_rtt *r = g->rtt;
	unsigned int i;

	if (!r)
		return;
	xdp_attachment__destroy(r->att);
	xdp_gen_bpf__destroy(r->skel);
	for (i = 0; r->qs && i < g->nthreads; i++) {
		if (r->qs[i])
			seqtrack__destroy(r->qs[i]->st);
		free(r->qs[i]);
	}
	free(r->qs);
	free(r);
	g->rtt = NULL;
}

int rtt_q_setup(struct gen *g, unsigned int idx, struct xsk_queue *q, struct pkt_gen *pg,
		struct rtt_q **out)
{
	struct rtt_q *r = calloc(1, sizeof(*r));
	int fd = xsk_queue_fd(q), err;
	__u32 key = q->queue_id;

	*out = r;
	if (!r)
		return -ENOMEM;
	g->rtt->qs[idx] = r;
	r->q = q;
	r->pg = pg;
	r->run = g->popts.run;
	r->key = &g->key;
	r->clock_off = g->clock.user_offset_ns;
	r->st = seqtrack__create(g->clock.id);
	if (!r->st)
		return -ENOMEM;
	seqtrack_own_clock(r->st); /* its own frames, back: sent and timed on this clock */
	err = bpf_map_update_elem(bpf_map__fd(g->rtt->skel->maps.rtt_xsks), &key, &fd, 0);
	if (err) {
		err = -errno;
		pr_warn("queue %u: cannot register the socket for --rtt: %s\n", key,
			strerror(-err));
	}
	return err;
}

__u32 rtt_q_poll(struct rtt_q *r)
{
	struct xsk_queue *q = r->q;
	__u32 idx, n, i;
	__u64 now;

	n = xsk_queue_rx_peek(q, q->batch, &idx);
	if (!n)
		return 0;
	now = now_ns() + r->clock_off; /* on the stamps' clock */
	for (i = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_queue_rx_desc(q, idx + i);
		struct stamp st;
		int kind = stamp_read(xsk_queue_frame_data(q, d->addr), d->len, r->key, &st);

		if (kind == STAMP_MARK && st.run == r->run) {
			r->marks++;
		} else if (kind != STAMP_DATA || st.run != r->run) {
			r->foreign++;
		} else {
			seqtrack_update(r->st, &st, now);
			r->ours++;
		}
		/* The kernel wrote past the headroom: the payload the sender expects is gone. */
		pkt_gen_prefill(r->pg,
				xsk_queue_frame_data(q, frame_alloc_frame_of(q->fa, d->addr)));
	}
	xsk_queue_rx_recycle(q, idx, n);
	xsk_queue_refill(q);
	if (xsk_ring_prod__needs_wakeup(&q->umem->fill))
		xsk_queue_wakeup_rx(q);
	return n;
}

void rtt_q_wait(struct rtt_q *r, __u64 due_ns)
{
	struct pollfd pfd = { .fd = xsk_queue_fd(r->q), .events = POLLIN };
	__u64 now = now_ns(), left = due_ns > now ? due_ns - now : 0;
	struct timespec ts = { .tv_sec = (time_t)(left / 1000000000ULL),
			       .tv_nsec = (long)(left % 1000000000ULL) };

	/* Sleeping in poll, not in a timer: a returning frame wakes us and is timed at once. */
	if (left)
		ppoll(&pfd, 1, &ts, NULL);
}

void rtt_q_drain(struct rtt_q *r, __u64 sent)
{
	__u64 start = now_ns(), last = start, now;

	for (;;) {
		now = now_ns();
		if (r->ours - r->st->total.duplicates >= sent || now - last > RTT_IDLE_NS ||
		    now - start > RTT_DRAIN_NS)
			break;
		if (rtt_q_poll(r))
			last = now_ns();
		else
			rtt_q_wait(r, now + 10000000ULL);
	}
}

struct rtt_pick {
	__u32 run;
	struct gen_rtt *r;
};

static void pick_run(const struct seqtrack_summary *s, const struct hist *lat, void *ctx)
{
	struct rtt_pick *p = ctx;

	if (s->id != p->run)
		return;
	p->r->s = *s;
	hist_merge(&p->r->lat, lat);
}

static __u64 read_no_socket(struct gen_rtt *r)
{
	int ncpu = libbpf_num_possible_cpus(), c;
	__u64 sum = 0, *v;
	__u32 key = 0;

	if (ncpu <= 0)
		return 0;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (v && !bpf_map__lookup_elem(r->skel->maps.rtt_no_socket, &key, sizeof(key), v,
				       (size_t)ncpu * sizeof(*v), 0))
		for (c = 0; c < ncpu; c++)
			sum += v[c];
	free(v);
	return sum;
}

/* The books of every queue, once: the workers have ended when a summary is printed. */
static struct gen_rtt *summed(struct gen *g)
{
	struct gen_rtt *r = g->rtt;
	struct seqtrack *ts[g->nthreads];
	struct rtt_pick p = { .run = g->popts.run, .r = r };
	unsigned int i, n = 0;

	if (!r || r->summed)
		return r;
	r->summed = true;
	hist_init(&r->lat);
	for (i = 0; i < g->nthreads; i++) {
		r->sent += g->th[i].c.sent;
		if (r->qs[i]) {
			ts[n++] = r->qs[i]->st;
			r->foreign += r->qs[i]->foreign;
		}
	}
	if (n && seqtrack_runs(ts, n, pick_run, &p) < 0)
		pr_warn("--rtt: no memory to merge the books of the queues\n");
	r->no_socket = read_no_socket(r);
	if (r->no_socket)
		pr_warn("--rtt: %llu frames came back on queues without a socket and were not timed; send on every queue that receives them (--queues all)\n",
			(unsigned long long)r->no_socket);
	r->back = r->s.c.received;
	r->lost = seqtrack_never_back(r->sent, r->back, r->s.c.duplicates);
	return r;
}

void gen_rtt_text(struct gen *g)
{
	struct gen_rtt *r = summed(g);
	struct hist_summary hs;
	char l[5][24];

	if (!r)
		return;
	hist_summarize(&r->lat, &hs);
	printf("  rtt:      %s of %s back, lost %s, duplicates %s, reordered %s, foreign %s\n",
	       FMT_COUNT(r->back), FMT_COUNT(r->sent), FMT_COUNT(r->lost),
	       FMT_COUNT(r->s.c.duplicates), FMT_COUNT(r->s.c.reordered), FMT_COUNT(r->foreign));
	if (hs.count)
		printf("  rtt:      min %s, p50 %s, p90 %s, p99 %s, max %s\n",
		       fmt_ns(l[0], 24, hs.min), fmt_ns(l[1], 24, hs.p50), fmt_ns(l[2], 24, hs.p90),
		       fmt_ns(l[3], 24, hs.p99), fmt_ns(l[4], 24, hs.max));
}

void gen_rtt_json(struct gen *g, struct jw *w)
{
	struct gen_rtt *r = summed(g);
	struct hist_summary hs;

	if (!r)
		return;
	hist_summarize(&r->lat, &hs);
	jw_obj(w, "rtt");
	jw_u64(w, "sent", r->sent);
	jw_u64(w, "received", r->back);
	jw_u64(w, "lost", r->lost);
	jw_u64(w, "duplicates", r->s.c.duplicates);
	jw_u64(w, "reordered", r->s.c.reordered);
	jw_u64(w, "foreign", r->foreign);
	jw_u64(w, "no_socket", r->no_socket);
	hist_summary_json(w, "rtt_ns", &hs);
	jw_end_obj(w);
}

void gen_rtt_metrics(struct gen *g, struct metrics_w *w)
{
	struct gen_rtt *r = summed(g);

	if (!r)
		return;
	metrics_family(w, "xdp_gen_rtt_frames_total", "counter", NULL,
		       "Frames of this run sent, and returned by the reflector (--rtt)");
	metrics_u64(w, "xdp_gen_rtt_frames_total", "kind", "sent", r->sent);
	metrics_u64(w, "xdp_gen_rtt_frames_total", "kind", "received", r->back);
	metrics_u64(w, "xdp_gen_rtt_frames_total", "kind", "lost", r->lost);
	metrics_u64(w, "xdp_gen_rtt_frames_total", "kind", "duplicates", r->s.c.duplicates);
	metrics_family(w, "xdp_gen_rtt_seconds", "histogram", "seconds",
		       "Round trip: receive time minus the stamp's send time, one clock (--rtt)");
	metrics_hist_seconds(w, "xdp_gen_rtt_seconds", NULL, NULL, &r->lat);
}
