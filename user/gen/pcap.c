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

#include "base/log.h"
#include "gen.h"
#include "pkt/build.h"
#include "marks.h"
#include "pkt/stamp.h"
#include "replay.h"
#include "xsk/xsk_queue.h"
#include "xsk_tx.h"

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
 * The largest frame that can go: the longest chain of UMEM frames
 * (xsk_tx.h), or the interface's MTU plus Ethernet header and one VLAN tag,
 * whichever is less; what sets it, and how to take a longer frame.
 */
static void max_frame(const struct gen *g, struct pcapio_limits *lim, char *what, size_t len)
{
	__u32 umem = (__u32)g->cfg->xsk.frame_size, chain = GEN_XSK_SLOT_MAX * umem;
	__u32 dev = g->ifc.mtu ? g->ifc.mtu + 14 + 4 : chain;

	lim->max_frames = REPLAY_FRAMES_MAX;
	lim->what = what;
	if (dev < chain) {
		snprintf(what, len, "%s (MTU %u)", g->ifc.name, g->ifc.mtu);
		lim->max_len = dev;
		lim->fix = "raise the MTU";
		return;
	}
	snprintf(what, len, "a chain of %u UMEM frames", GEN_XSK_SLOT_MAX);
	lim->max_len = chain;
	lim->fix = umem < UMEM_FRAME_SIZE_MAX ? "use --frame-size 4096" : NULL;
}

/*
 * Where a frame's stamp and UDP checksum go: by pkt_parse_udp(), the rule the
 * sink's stamp_read() applies, so a frame gets a stamp exactly when the sink
 * will read one back (a frame stamped against that rule would be foreign at
 * the sink and its sequence number a gap). 0, or the reason it goes unstamped.
 */
static int stamp_place(const __u8 *p, __u32 len, struct pkt_info *pi, __u64 *pseudo)
{
	const __u8 *ip;
	int ret;

	ret = pkt_parse_udp(p, len, pi);
	if (ret == -ENOENT)
		return REPLAY_UNSTAMPED_NOT_UDP;
	if (ret)
		return REPLAY_UNSTAMPED_MALFORMED;
	if (pi->udp_len - 8 < XDPSG_STAMP_SIZE)
		return REPLAY_UNSTAMPED_NO_ROOM;
	ip = p + pi->l3_off;
	if (pi->family == PKT_IPV4)
		*pseudo = pkt_csum_partial(ip + 12, 8, 0) + pkt_csum_partial("\0\21", 2, 0);
	else
		*pseudo = pkt_csum_partial(ip + 8, 32, 0) + pkt_csum_partial("\0\0\0\21", 4, 0);
	/* The UDP length word, as in the pseudo header (memory order, like the rest). */
	*pseudo += pkt_csum_partial(p + pi->l4_off + 4, 2, 0);
	return 0;
}

/*
 * --stamp: write a template stamp (run, zero flow, sequence and time) into
 * each frame the sink will read it from, and keep the checksum's sum without
 * it so a send only adds the new words.
 */
static int stamp_prepare(struct gen *g, struct gen_replay *r)
{
	struct pcap_frames *f = &r->f;
	struct pkt_info pi;
	__u32 i, uo;
	__u64 ph;
	int why;

	r->mark_frame = -1;
	r->stamp_off = calloc(f->n, sizeof(*r->stamp_off));
	r->csum_off = calloc(f->n, sizeof(*r->csum_off));
	r->base = calloc(f->n, sizeof(*r->base));
	if (!r->stamp_off || !r->csum_off || !r->base)
		return -ENOMEM;
	for (i = 0; i < f->n; i++) {
		__u8 *p = f->data + f->off[i];
		__u16 csum;

		why = stamp_place(p, f->len[i], &pi, &ph);
		if (why) {
			r->unstamped[why]++;
			continue;
		}
		uo = pi.l4_off;
		if (r->mark_frame < 0 && pi.payload_off + PKT_MARK_PAYLOAD <= GEN_MARK_FRAME)
			r->mark_frame = (int)i;
		stamp_write_run(p + pi.payload_off, g->popts.run);
		r->stamp_off[i] = (__u16)pi.payload_off;
		r->nstamped++;
		if (!p[uo + 6] && !p[uo + 7] && pi.family == PKT_IPV4)
			continue; /* IPv4 without a UDP checksum: keep it so */
		r->csum_off[i] = (__u16)(uo + 6);
		p[uo + 6] = p[uo + 7] = 0;
		r->base[i] = pkt_csum_fold(pkt_csum_partial(p + uo, pi.udp_len, ph));
		/* The file's frame as the first send will have it: a valid checksum. */
		csum = (__u16)~r->base[i];
		if (!csum)
			csum = 0xffff;
		memcpy(p + uo + 6, &csum, 2);
	}
	return 0;
}

/*
 * Original timing: one pass lasts the file's span plus one average gap (so a
 * loop keeps the rhythm), divided by the speed. The scaled pass must be a
 * number of nanoseconds a send time can hold: a file with an enormous gap (or
 * a slow original:X of a long one) is refused here, naming the largest gap,
 * rather than scheduled at a time the arithmetic cannot represent.
 */
static int plan_timing(struct gen_replay *r, const char *path, const char *timing)
{
	const struct pcap_frames *f = &r->f;
	__u64 span = f->ts_ns[f->n - 1] - f->ts_ns[0], gap = 0;
	double pass = 1e6;
	__u32 i, at = 1;

	if (f->n > 1 && span)
		pass = (double)span + (double)span / (f->n - 1);
	pass /= r->speed;
	if (pass < (double)REPLAY_PASS_MAX_NS) {
		r->pass_ns = (__u64)pass;
		return 0;
	}
	for (i = 1; i < f->n; i++) {
		if (f->ts_ns[i] - f->ts_ns[i - 1] > gap) {
			gap = f->ts_ns[i] - f->ts_ns[i - 1];
			at = i;
		}
	}
	fprintf(stderr,
		"xdp-gen: --pcap-timing %s would make one pass through %s last %.3g s (frame %u comes %.3g s after frame %u), more than original timing can schedule (%.3g s); cut the file before frame %u (editcap) or replay it faster\n",
		timing, path, pass / 1e9, at + 1, (double)gap / 1e9, at, REPLAY_PASS_MAX_NS / 1e9,
		at + 1);
	return -EINVAL;
}

static int check_options(const struct gen *g, const struct gen_replay *r)
{
	const struct gen_cfg *cfg = g->cfg;

	if (!cfg->pcap) {
		fprintf(stderr,
			"xdp-gen: --stamp and --pcap-timing go with --pcap FILE (built frames carry a stamp unless --no-stamp)\n");
		return -EINVAL;
	}
	if (cfg->stamp && cfg->no_stamp) {
		fprintf(stderr,
			"xdp-gen: --stamp and --no-stamp contradict each other; give one\n");
		return -EINVAL;
	}

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

/*
 * A capture of xdp-gen's own traffic carries the stamps of the run it caught:
 * replayed as they are, their send times precede any sink started since, and
 * the sink rejects every one. --stamp writes fresh ones.
 */
static void hint_old_stamps(const struct gen *g, const char *path, const struct pcap_frames *f)
{
	struct stamp st;
	__u32 i, n = 0;

	for (i = 0; i < f->n; i++)
		n += stamp_read(f->data + f->off[i], f->len[i], &g->key, &st) >= 0;
	if (n)
		pr_warn("%s: %u of %u frames carry xdp-gen stamps from the captured run; a sink rejects their old send times ('before the sink started'): add --stamp to stamp them afresh\n",
			path, n, f->n);
}

int gen_replay_preflight(struct gen *g)
{
	const struct gen_cfg *cfg = g->cfg;
	struct gen_replay *r;
	struct pcapio_limits lim;
	char why[512], what[64];
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
	max_frame(g, &lim, what, sizeof(what));
	err = pcapio_load(cfg->pcap, &lim, &r->f, why, sizeof(why));
	if (err) {
		fprintf(stderr, "xdp-gen: %s\n", why);
		return err == -ENOMEM ? err : -EINVAL;
	}
	if (r->original && plan_timing(r, cfg->pcap, cfg->pcap_timing))
		return -EINVAL;
	r->stamp = cfg->stamp;
	r->clock_off = g->clock.user_offset_ns;
	if (r->stamp && stamp_prepare(g, r))
		return -ENOMEM;
	if (!r->stamp)
		hint_old_stamps(g, cfg->pcap, &r->f);
	pr_debug("replaying %s: %u frames of %u to %u bytes, %s timing\n", cfg->pcap, r->f.n,
		 r->f.min_len, r->f.max_len, r->original ? "original" : "fast");
	if (r->stamp)
		pr_info("%s: --stamp: %u of %u frames carry a stamp; unstamped: %u not IPv4/IPv6 UDP, %u malformed (lengths the sink's parser rejects, so it counts them foreign), %u with no room for one\n",
			cfg->pcap, r->nstamped, r->f.n, r->unstamped[REPLAY_UNSTAMPED_NOT_UDP],
			r->unstamped[REPLAY_UNSTAMPED_MALFORMED],
			r->unstamped[REPLAY_UNSTAMPED_NO_ROOM]);
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

void gen_replay_json(const struct gen *g, struct jw *w)
{
	const struct gen_replay *r = g->replay;

	jw_obj(w, "pcap");
	jw_u64(w, "frames", r->f.n);
	if (r->stamp) {
		jw_u64(w, "stamped", r->nstamped);
		jw_obj(w, "unstamped");
		jw_u64(w, "not_udp", r->unstamped[REPLAY_UNSTAMPED_NOT_UDP]);
		jw_u64(w, "malformed", r->unstamped[REPLAY_UNSTAMPED_MALFORMED]);
		jw_u64(w, "no_room", r->unstamped[REPLAY_UNSTAMPED_NO_ROOM]);
		jw_end_obj(w);
	}
	jw_end_obj(w);
}

void gen_replay_free(struct gen *g)
{
	if (!g->replay)
		return;
	pcapio_frames_free(&g->replay->f);
	free(g->replay->stamp_off);
	free(g->replay->csum_off);
	free(g->replay->base);
	free(g->replay);
	g->replay = NULL;
}

bool gen_replay_mark_ready(const struct gen *g)
{
	return g->replay && g->replay->stamp && g->replay->mark_frame >= 0;
}

unsigned int gen_replay_mark(const struct gen *g, __u64 ts_ns, const struct xdpsg_mark *m,
			     void *out, unsigned int room)
{
	const struct gen_replay *r = g->replay;
	const __u8 *frame = pcap_frame(&r->f, (__u32)r->mark_frame);
	__u8 body[PKT_MARK_PAYLOAD];
	struct pkt_info pi;

	if (pkt_parse_udp(frame, r->f.len[r->mark_frame], &pi))
		return 0;
	stamp_write_mark(body, &g->key, g->popts.run, ts_ns, m);
	return pkt_udp_repayload(frame, &pi, body, sizeof(body), out, room);
}

__u32 gen_replay_slots(const struct gen *g)
{
	__u32 n = g->replay->f.n, need = 2 * (__u32)g->cfg->ring_size;
	__u32 reps = (need + n - 1) / n;

	return n * reps;
}

int replay_q_setup(struct replay_q *rq, const struct gen *g, struct xsk_queue *q, __u16 flow)
{
	const struct pcap_frames *f = &g->replay->f;
	__u32 s, spare;

	rq->r = g->replay;
	rq->flow = flow;
	stamp_flow_state(&rq->tag, &g->key, g->popts.run, flow);
	rq->frame_size = (__u32)q->fa->frame_size; /* UMEM frames, one or a chain's */
	rq->nslots = gen_replay_slots(g);
	if (q->fa->nr_frames < rq->nslots)
		return -EINVAL;
	/*
	 * The allocator keeps its frames out of the way: the replay hands the
	 * slots out itself, in file order, and gives them all back at the end.
	 */
	rq->held = calloc(q->umem->nr_frames, sizeof(*rq->held));
	if (!rq->held)
		return -ENOMEM;
	rq->nheld = frame_alloc_bulk(q->fa, q->umem->nr_frames, rq->held);
	/* The frames past the slots stay the allocator's: the marks take theirs from it. */
	for (s = 0, spare = rq->nheld; s < spare;) {
		__u64 a = rq->held[s];

		if (a < (__u64)rq->nslots * rq->frame_size) {
			s++;
			continue;
		}
		rq->held[s] = rq->held[--spare];
		rq->held[spare] = a;
	}
	frame_free_bulk(q->fa, rq->nheld - spare, rq->held + spare);
	rq->nheld = spare;
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

/*
 * When the k-th frame a queue sends is due, in original timing. A frame's
 * offset in its pass is at most the pass (below REPLAY_PASS_MAX_NS, checked at
 * load), so its conversion is defined; the passes before it add up in 128
 * bits and a time past the clock's range is never (-d still ends the run).
 */
static __u64 due_of(const struct replay_q *rq, __u64 k)
{
	const struct gen_replay *r = rq->r;
	__u64 loop = k / r->f.n, i = k % r->f.n;
	__u64 off = (__u64)((double)(r->f.ts_ns[i] - r->f.ts_ns[0]) / r->speed);
	unsigned __int128 at = (unsigned __int128)loop * r->pass_ns + off + rq->t0;

	return at > ~0ULL ? ~0ULL : (__u64)at;
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
