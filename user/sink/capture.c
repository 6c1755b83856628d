// SPDX-License-Identifier: GPL-2.0
/*
 * The capture rings and their writer (see capture.h). The receive threads
 * only ever copy into their own ring and move its head; the writer only reads
 * slots below the head and moves the tail. Head and tail live on cache lines
 * of their own, so the two sides share nothing else.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fmt.h"
#include "base/log.h"
#include "base/outfile.h"
#include "base/runtime.h"
#include "capture.h"
#include "measure/seqtrack.h"
#include "pkt/pcapio.h"
#include "pkt/stamp.h"

struct cap_hdr {
	__u64 ts_ns; /* CLOCK_MONOTONIC */
	__u32 len, caplen;
	/* What the sink made of the frame: the file's comment on it (pcapng). */
	__u32 run, seq;
	__u16 flow;
	__s8 verdict; /* enum seqtrack_verdict, or CAPTURE_FOREIGN/UNCHECKED */
	__u8 gap; /* CAP_GAP_* */
	/* gap after: the loss episode this frame ends (frames 0: not known) */
	__u32 ep_frames;
	__u64 ep_outage_ns;
};

enum { CAP_GAP_NONE, CAP_GAP_BEFORE, CAP_GAP_AFTER };

#define CAP_NAME_LEN 64

/* The last in-order frame of a flow, for the "before" side of a gap. */
struct cap_prev {
	__u32 run;
	__u16 flow;
	bool valid;
	bool written; /* already captured (the "after" of an earlier gap) */
	struct cap_hdr h;
	__u8 *data;
};

struct capq {
	/* producer: the receive thread */
	__u64 head __attribute__((aligned(64)));
	__u64 tail_seen; /* the tail as last read: reread only when the ring looks full */
	__u64 dropped; /* ring full: not captured */
	struct cap_prev *prev; /* anomalies only: CAPTURE_FLOWS entries */
	/* set by main once the receive threads are done (capture_queue_stats) */
	bool have_kernel;
	__u64 kernel_received, kernel_dropped;
	/* consumer: the writer */
	__u64 tail __attribute__((aligned(64)));
	/* fixed */
	struct capture *c __attribute__((aligned(64)));
	const struct seqtrack *tr; /* the queue's books: the episode a gap ends */
	__u8 *slots;
	__u8 *prev_data;
};

struct capture {
	unsigned int nq;
	struct capq *q;
	char (*names)[CAP_NAME_LEN]; /* per queue: the pcapng interface's name */
	__u64 start; /* wall clock */
	__u32 snap, stride;
	bool anomalies;
	__u64 max; /* 0: no limit */
	__u64 wall; /* CLOCK_MONOTONIC to wall clock */
	const char *path;
	struct pcapio_writer *w;
	pthread_t writer;
	bool started, finished;
	int stop;
	int full; /* --capture-max reached: receive threads stop offering */
	__u64 written; /* the writer's, read after the join */
	int err;
};

int capture_check(const struct sink_cfg *cfg)
{
	if (!cfg->capture) {
		if (cfg->capture_what || cfg->snaplen || cfg->capture_max || cfg->capture_format) {
			pr_warn("--capture-what, --capture-format, --snaplen and --capture-max go with --capture FILE; add it\n");
			return -EINVAL;
		}
		return 0;
	}
	if (cfg->capture_what && cfg->no_verify) {
		pr_warn("--capture-what anomalies needs the stamps that --no-verify skips; drop one of them\n");
		return -EINVAL;
	}
	return outfile_check("--capture", cfg->capture) ? -EINVAL : 0;
}

static struct cap_hdr *slot(const struct capture *c, const struct capq *q, __u64 i)
{
	return (struct cap_hdr *)(q->slots + (i % CAPTURE_RING_SLOTS) * c->stride);
}

static int queues_alloc(struct capture *c)
{
	unsigned int i, f;

	c->q = aligned_alloc(64, sizeof(*c->q) * c->nq);
	if (!c->q)
		return -ENOMEM;
	memset(c->q, 0, sizeof(*c->q) * c->nq);
	for (i = 0; i < c->nq; i++) {
		struct capq *q = &c->q[i];

		q->c = c;
		q->slots = malloc((size_t)CAPTURE_RING_SLOTS * c->stride);
		if (!q->slots)
			return -ENOMEM;
		if (!c->anomalies)
			continue;
		q->prev = calloc(CAPTURE_FLOWS, sizeof(*q->prev));
		q->prev_data = malloc((size_t)CAPTURE_FLOWS * c->snap);
		if (!q->prev || !q->prev_data)
			return -ENOMEM;
		for (f = 0; f < CAPTURE_FLOWS; f++)
			q->prev[f].data = q->prev_data + (size_t)f * c->snap;
	}
	return 0;
}

/* The verdict on a frame the books did not take in order, or NULL for one they did. */
static const char *comment(const struct cap_hdr *h, char *buf, size_t len)
{
	const char *v;

	if (h->gap)
		v = h->gap == CAP_GAP_BEFORE ? "gap before" : "gap after";
	else if (h->verdict == CAPTURE_FOREIGN)
		return "xdpsg: foreign (no stamp)";
	else if (h->verdict == CAPTURE_FORGED)
		v = "forged (the stamp's check failed)";
	else if (h->verdict < 0 || h->verdict == SEQ_FIRST || h->verdict == SEQ_IN_ORDER)
		return NULL;
	else
		v = seqtrack_verdict_str(h->verdict);
	snprintf(buf, len, "xdpsg: %s run=%u flow=%u seq=%u", v, h->run, h->flow, h->seq);
	if (h->gap == CAP_GAP_AFTER && h->ep_frames) {
		size_t n = strlen(buf);
		char o[24];

		snprintf(buf + n, len - n, "; loss episode: seq %u..%u (%u frames), outage %s",
			 h->seq - h->ep_frames, h->seq - 1, h->ep_frames,
			 fmt_ns(o, sizeof(o), h->ep_outage_ns));
	}
	return buf;
}

/* Everything below the heads goes into the file; returns the frames written. */
static __u64 drain(struct capture *c)
{
	char text[224];
	__u64 n = 0;
	unsigned int i;

	for (i = 0; i < c->nq; i++) {
		struct capq *q = &c->q[i];
		__u64 head = __atomic_load_n(&q->head, __ATOMIC_ACQUIRE), t;

		for (t = q->tail; t < head; t++) {
			const struct cap_hdr *h = slot(c, q, t);

			if (c->max && c->written >= c->max) {
				__atomic_store_n(&c->full, 1, __ATOMIC_RELAXED);
				continue;
			}
			pcapio_write_if(c->w, i, h->ts_ns + c->wall, h + 1, h->caplen, h->len,
					comment(h, text, sizeof(text)));
			c->written++;
			n++;
		}
		__atomic_store_n(&q->tail, head, __ATOMIC_RELEASE);
	}
	return n;
}

static void *writer(void *arg)
{
	struct capture *c = arg;

	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE))
		if (!drain(c))
			usleep(1000);
	/* The receive threads have stopped: what is in the rings is all there is. */
	drain(c);
	return NULL;
}

/* pcapng: one interface per queue, named after the device and the queue. */
static int writer_open(struct capture *c, const struct sink_cfg *cfg, const char *ifname,
		       const unsigned int *queues)
{
	struct pcapio_opts o = {
		.snaplen = c->snap,
		.format = cfg->capture_format ? (enum pcapio_format)(cfg->capture_format - 1) :
						pcapio_format_of(c->path),
		.nif = c->nq,
		.app = "xdp-sink " XDPSG_VERSION,
	};
	const char **names = calloc(c->nq, sizeof(*names));
	unsigned int i;
	int err;

	c->names = calloc(c->nq, sizeof(*c->names));
	if (!names || !c->names) {
		free(names);
		return -ENOMEM;
	}
	for (i = 0; i < c->nq; i++) {
		snprintf(c->names[i], sizeof(c->names[i]), "%s:q%u", ifname, queues[i]);
		names[i] = c->names[i];
	}
	o.if_names = names;
	err = pcapio_writer__open_opts(&c->w, "--capture", c->path, &o);
	free(names);
	return err;
}

int capture__create(struct capture **out, const struct sink_cfg *cfg, unsigned int nq,
		    __u32 frame_size, const char *ifname, const unsigned int *queues)
{
	struct capture *c = calloc(1, sizeof(*c));
	int err;

	*out = c;
	if (!c)
		return -ENOMEM;
	c->nq = nq;
	c->path = cfg->capture;
	c->anomalies = cfg->capture_what;
	c->max = cfg->capture_max;
	/* No frame is longer than a UMEM frame: a larger snap length would waste slots. */
	c->snap = frame_size;
	if (cfg->snaplen && cfg->snaplen < c->snap)
		c->snap = (__u32)cfg->snaplen;
	c->stride = (__u32)((sizeof(struct cap_hdr) + c->snap + 63) & ~63UL);
	c->wall = pcapio_wall_offset();
	c->start = now_ns() + c->wall;
	err = queues_alloc(c);
	if (err)
		return err;
	/* A new file beside the target: the old capture stays until this one is complete. */
	err = writer_open(c, cfg, ifname, queues);
	if (err)
		return err;
	err = -pthread_create(&c->writer, NULL, writer, c);
	c->started = !err;
	return err;
}

void capture_queue_books(struct capq *q, const struct seqtrack *tr)
{
	q->tr = tr;
}

struct capq *capture_queue(struct capture *c, unsigned int i)
{
	return c ? &c->q[i] : NULL;
}

/* Into the ring, or counted as dropped; never waits. */
static void push(struct capq *q, const struct cap_hdr *src, const void *data)
{
	struct capture *c = q->c;
	struct cap_hdr *h;

	if (q->head - q->tail_seen >= CAPTURE_RING_SLOTS) {
		q->tail_seen = __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE);
		if (q->head - q->tail_seen >= CAPTURE_RING_SLOTS) {
			__atomic_store_n(&q->dropped, q->dropped + 1, __ATOMIC_RELAXED);
			return;
		}
	}
	h = slot(c, q, q->head);
	*h = *src;
	memcpy(h + 1, data, src->caplen);
	__atomic_store_n(&q->head, q->head + 1, __ATOMIC_RELEASE);
}

static struct cap_prev *prev_of(struct capq *q, const struct stamp *st)
{
	__u32 k = (st->run * 2654435761U) ^ ((__u32)st->flow * 40503U);

	return &q->prev[(k ^ (k >> 16)) % CAPTURE_FLOWS];
}

/* An in-order frame: keep it as its flow's "before". */
static void remember(struct capq *q, const struct cap_hdr *h, const void *data,
		     const struct stamp *st, bool written)
{
	struct cap_prev *p = prev_of(q, st);

	p->run = st->run;
	p->flow = st->flow;
	p->valid = true;
	p->written = written;
	p->h = *h;
	memcpy(p->data, data, h->caplen);
}

static void anomaly(struct capq *q, const struct cap_hdr *h, const void *data, int verdict,
		    const struct stamp *st)
{
	struct cap_prev *p;

	switch (verdict) {
	case SEQ_FIRST:
	case SEQ_IN_ORDER:
		remember(q, h, data, st, false);
		return;
	case SEQ_MARK: /* a run's start or end, no anomaly */
		return;
	case SEQ_GAP:
		p = prev_of(q, st);
		if (p->valid && p->run == st->run && p->flow == st->flow && !p->written) {
			struct cap_hdr before = p->h;

			before.gap = CAP_GAP_BEFORE;
			push(q, &before, p->data);
		}
		push(q, h, data);
		remember(q, h, data, st, true);
		return;
	default: /* foreign, and every verdict the books refused or doubted */
		push(q, h, data);
	}
}

void capture_offer(struct capq *q, const void *data, __u32 len, __u64 now_ns, int verdict,
		   const struct stamp *st)
{
	struct capture *c = q->c;
	struct cap_hdr h = { .ts_ns = now_ns, .len = len, .verdict = (__s8)verdict };

	if (__atomic_load_n(&c->full, __ATOMIC_RELAXED))
		return;
	h.caplen = len < c->snap ? len : c->snap;
	if (verdict >= 0 || verdict == CAPTURE_FORGED) {
		h.run = st->run;
		h.flow = verdict == SEQ_MARK ? st->mark.flow : st->flow;
		h.seq = st->seq;
		h.gap = verdict == SEQ_GAP ? CAP_GAP_AFTER : CAP_GAP_NONE;
		if (verdict == SEQ_GAP && q->tr) {
			h.ep_frames = q->tr->last_gap.frames;
			h.ep_outage_ns = q->tr->last_gap.outage_ns;
		}
	}
	if (c->anomalies)
		anomaly(q, &h, data, verdict, st);
	else
		push(q, &h, data);
}

__u64 capture_queue_backlog(struct capq *q, __u64 *dropped)
{
	*dropped = __atomic_load_n(&q->dropped, __ATOMIC_RELAXED);
	return q->head - __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE);
}

/* The writer has written everything below the heads, and stopped. */
static void writer_stop(struct capture *c)
{
	if (!c->started)
		return;
	__atomic_store_n(&c->stop, 1, __ATOMIC_RELEASE);
	pthread_join(c->writer, NULL);
	c->started = false;
}

void capture_queue_stats(struct capture *c, unsigned int i, __u64 received, __u64 dropped)
{
	if (!c || i >= c->nq)
		return;
	c->q[i].kernel_received = received;
	c->q[i].kernel_dropped = dropped;
	c->q[i].have_kernel = true;
}

/* Each queue's counts into its interface's statistics block. */
static void queue_stats(struct capture *c)
{
	__u64 end = now_ns() + c->wall;
	unsigned int i;

	for (i = 0; i < c->nq; i++) {
		const struct capq *q = &c->q[i];
		struct pcapio_ifstats s = {
			.start_ns = c->start,
			.end_ns = end,
			.have_recv = q->have_kernel,
			.recv = q->kernel_received + q->kernel_dropped,
			.drop = q->kernel_dropped,
			.osdrop = q->dropped,
			.comment =
				"xdpsg: ifrecv = frames the XDP program sent this queue's socket, "
				"ifdrop = of those, dropped by the kernel (rx_dropped + rx_ring_full), "
				"osdrop = received but not captured (the capture writer was behind)",
		};

		pcapio_if_stats(c->w, i, &s);
	}
}

int capture_finish(struct capture *c)
{
	if (!c || c->finished)
		return c ? c->err : 0;
	c->finished = true;
	writer_stop(c);
	queue_stats(c);
	c->err = pcapio_writer__commit(c->w);
	c->w = NULL;
	return c->err;
}

void capture__destroy(struct capture *c)
{
	unsigned int i;

	if (!c)
		return;
	/* Not finished: the run failed or never started, and the old file stays. */
	writer_stop(c);
	pcapio_writer__abort(c->w);
	for (i = 0; c->q && i < c->nq; i++) {
		free(c->q[i].slots);
		free(c->q[i].prev);
		free(c->q[i].prev_data);
	}
	free(c->q);
	free(c->names);
	free(c);
}

static __u64 dropped(const struct capture *c)
{
	__u64 n = 0;
	unsigned int i;

	for (i = 0; i < c->nq; i++)
		n += __atomic_load_n(&c->q[i].dropped, __ATOMIC_RELAXED);
	return n;
}

void capture_json(const struct capture *c, struct jw *w)
{
	if (!c)
		return;
	jw_u64(w, "captured", c->written);
	jw_u64(w, "capture_dropped", dropped(c));
	jw_bool(w, "capture_max_reached", __atomic_load_n(&c->full, __ATOMIC_RELAXED));
}

void capture_text(const struct capture *c)
{
	if (!c)
		return;
	printf("  capture:  %s frames %s %s, %s not captured (writer behind)%s\n",
	       FMT_COUNT(c->written), c->err ? "captured; could not write" : "written to", c->path,
	       FMT_COUNT(dropped(c)),
	       __atomic_load_n(&c->full, __ATOMIC_RELAXED) ? "; --capture-max reached" : "");
}
