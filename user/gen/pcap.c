// SPDX-License-Identifier: GPL-2.0
/*
 * xdp-gen xsk --pcap: replay a capture's frames (see replay.h). Everything
 * that can be wrong with the file is found here, in preflight, before a
 * socket exists.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "log.h"
#include "replay.h"
#include "xsk_queue.h"

/* --pcap-timing fast | original | original:X (X times as fast, 0.001 to 1000). */
static int parse_timing(struct gen_replay *r, const char *s)
{
	char *end;

	r->speed = 1.0;
	if (!s || !strcmp(s, "fast"))
		return 0;
	if (strncmp(s, "original", 8))
		goto bad;
	r->original = true;
	if (!s[8])
		return 0;
	if (s[8] != ':')
		goto bad;
	r->speed = strtod(s + 9, &end);
	if (end == s + 9 || *end || !(r->speed >= 0.001 && r->speed <= 1000))
		goto bad;
	return 0;
bad:
	fprintf(stderr,
		"xdp-gen: --pcap-timing '%s' is not fast, original or original:X (X from 0.001 to 1000, e.g. original:2 for twice as fast)\n",
		s);
	return -EINVAL;
}

/*
 * The largest frame that can go: the UMEM frame's size, or the interface's
 * MTU plus Ethernet header and one VLAN tag, whichever is less.
 */
static __u32 max_frame(const struct gen *g, char *what, size_t len)
{
	__u32 umem = (__u32)g->cfg->xsk.frame_size;
	__u32 dev = g->ifc.mtu ? g->ifc.mtu + 14 + 4 : umem;

	if (dev < umem) {
		snprintf(what, len, "%s (MTU %u)", g->ifc.name, g->ifc.mtu);
		return dev;
	}
	snprintf(what, len, "a UMEM frame");
	return umem;
}

static int check_options(const struct gen *g, const struct gen_replay *r)
{
	const struct gen_cfg *cfg = g->cfg;

	if (r->original && cfg->rate) {
		fprintf(stderr,
			"xdp-gen: --rate and --pcap-timing original both set the pace; give one of them\n");
		return -EINVAL;
	}
	if (cfg->imix || cfg->imix_sizes || cfg->size) {
		fprintf(stderr,
			"xdp-gen: --pcap sends the file's frames as they are; drop -s/--imix/--imix-sizes\n");
		return -EINVAL;
	}
	return 0;
}

int gen_replay_preflight(struct gen *g)
{
	const struct gen_cfg *cfg = g->cfg;
	struct gen_replay *r;
	char why[512], what[64];
	__u32 lim = max_frame(g, what, sizeof(what));
	int err;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	g->replay = r;
	err = parse_timing(r, cfg->pcap_timing);
	if (!err)
		err = check_options(g, r);
	if (err)
		return err;
	err = pcapio_load(cfg->pcap, lim, what, REPLAY_FRAMES_MAX, &r->f, why, sizeof(why));
	if (err) {
		fprintf(stderr, "xdp-gen: %s\n", why);
		return err == -ENOMEM ? err : -EINVAL;
	}
	/* One pass lasts the file's span plus one average gap, so a loop keeps the rhythm. */
	if (r->f.n > 1) {
		__u64 span = r->f.ts_ns[r->f.n - 1] - r->f.ts_ns[0];

		r->period_ns = span + span / (r->f.n - 1);
	}
	if (!r->period_ns)
		r->period_ns = 1000000;
	pr_info("replaying %s: %u frames of %u to %u bytes, %s timing\n", cfg->pcap, r->f.n,
		r->f.min_len, r->f.max_len, r->original ? "original" : "fast");
	return 0;
}

/*
 * Live frames start every frame from one input packet and recycle pages that
 * keep what the program last wrote: replaying a file would mean copying each
 * frame's bytes from a map into the page per packet, the copy the replay is
 * built to avoid, for at most 3408-byte frames. See the man page.
 */
int gen_replay_refuse_kernel(void)
{
	fprintf(stderr,
		"xdp-gen: kernel mode cannot replay a capture without copying every frame in the kernel; use 'xdp-gen xsk --pcap'\n");
	return -EINVAL;
}

void gen_replay_free(struct gen *g)
{
	if (!g->replay)
		return;
	pcapio_frames_free(&g->replay->f);
	free(g->replay);
	g->replay = NULL;
}

__u32 gen_replay_slots(const struct gen *g)
{
	__u32 n = g->replay->f.n, need = 2 * (__u32)g->cfg->ring_size;
	__u32 reps = (need + n - 1) / n;

	return n * reps;
}

int replay_q_setup(struct replay_q *rq, const struct gen *g, struct xsk_queue *q)
{
	const struct pcap_frames *f = &g->replay->f;
	__u32 s;

	rq->r = g->replay;
	rq->frame_size = q->umem->frame_size;
	rq->nslots = gen_replay_slots(g);
	if (q->umem->nr_frames < rq->nslots)
		return -EINVAL;
	/*
	 * The allocator keeps its frames out of the way: the replay hands the
	 * slots out itself, in file order, and gives them all back at the end.
	 */
	rq->held = calloc(q->umem->nr_frames, sizeof(*rq->held));
	if (!rq->held)
		return -ENOMEM;
	rq->nheld = frame_alloc_bulk(q->fa, q->umem->nr_frames, rq->held);
	for (s = 0; s < rq->nslots; s++)
		memcpy(xsk_queue_frame_data(q, (__u64)s * rq->frame_size), pcap_frame(f, s % f->n),
		       f->len[s % f->n]);
	return 0;
}

void replay_q_release(struct replay_q *rq, struct xsk_queue *q)
{
	if (rq->nheld)
		frame_free_bulk(q->fa, rq->nheld, rq->held);
	rq->nheld = 0;
}

void replay_q_free(struct replay_q *rq)
{
	if (!rq)
		return;
	free(rq->held);
	free(rq);
}

/* When the k-th frame a queue sends is due, in original timing. */
static __u64 due_of(const struct replay_q *rq, __u64 k)
{
	const struct gen_replay *r = rq->r;
	__u64 loop = k / r->f.n, i = k % r->f.n;
	double at = (double)(loop * r->period_ns + (r->f.ts_ns[i] - r->f.ts_ns[0]));

	return rq->t0 + (__u64)(at / r->speed);
}

__u32 replay_budget(const struct replay_q *rq, __u64 sent, __u32 want, __u64 now, __u64 *due_ns)
{
	__u32 n = 0;

	if (!rq->r->original)
		return want;
	while (n < want && due_of(rq, sent + n) <= now)
		n++;
	if (!n)
		*due_ns = due_of(rq, sent);
	return n;
}
