/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_GEN_REPLAY_H
#define XDPSG_GEN_REPLAY_H

/*
 * xdp-gen xsk --pcap: the frames of a capture instead of built ones (pcap.c).
 *
 * The file is read and checked whole in preflight. Each queue's UMEM holds the
 * file laid out once at setup, repeated until there are frames for the tx
 * ring and the completion ring both (2 x --ring-size): slot s holds the file's
 * frame s mod n. A queue sends the slots strictly in turn and gets them back
 * through the completion ring in the same order, so a slot is never rewritten
 * or sent again while in flight, and nothing is copied per packet. Every
 * queue replays the whole file, in file order, from its first frame, with its
 * share of --count and --rate.
 *
 * Threading: struct gen_replay is written by the main thread in preflight and
 * read-only afterwards; a struct replay_q belongs to its queue's thread.
 */
#include <stdbool.h>
#include <string.h>
#include <linux/types.h>

#include "pkt/pcapio.h"
#include "pkt/gen.h"
#include "pkt/stamp.h"

struct gen;
struct gen_thread;
struct jw;
struct xsk_queue;

/* A replay never holds more frames than this per queue (UMEM: this x frame size). */
#define REPLAY_FRAMES_MAX 32768

/*
 * Original timing: the longest pass through the file, after --pcap-timing's
 * scaling (2^62 ns, about 146 years). Send times are whole nanoseconds from
 * the start, so a longer one has no value to be; a file that needs more is
 * refused at load.
 */
#define REPLAY_PASS_MAX_NS (1ULL << 62)

/* Why a frame of the file goes without a stamp under --stamp. */
enum replay_unstamped {
	REPLAY_UNSTAMPED_NOT_UDP = 1, /* not IPv4/IPv6 UDP: other protocol, fragment, ext header */
	REPLAY_UNSTAMPED_MALFORMED, /* headers whose lengths the sink's parser rejects */
	REPLAY_UNSTAMPED_NO_ROOM, /* UDP payload shorter than a stamp */
	REPLAY_UNSTAMPED_MAX,
};

struct gen_replay {
	struct pcap_frames f;
	bool original; /* --pcap-timing original: keep the file's gaps */
	double speed; /* original:X plays X times as fast */
	__u64 pass_ns; /* one pass through the file in original timing, after speed */
	/*
	 * --stamp: per file frame, where its stamp goes (0: none, sent as it
	 * is), where its UDP checksum is (0: none to keep, IPv4 checksum 0), and
	 * the checksum's sum over the frame with a zero stamp (folded).
	 */
	bool stamp;
	__u32 nstamped; /* frames of the file that carry a stamp */
	__u32 unstamped[REPLAY_UNSTAMPED_MAX]; /* the others, by reason */
	__u16 *stamp_off, *csum_off, *base;
	/* --stamp: the frame whose headers the marks go on, the file's first stamped one; -1: none */
	int mark_frame;
	__u64 clock_off; /* --stamp: the stamps' clock minus CLOCK_MONOTONIC (--clock) */
};

struct replay_q {
	const struct gen_replay *r;
	__u32 nslots, frame_size;
	__u64 next; /* slots handed out, in order */
	__u64 done; /* slots back from the completion ring */
	__u64 t0; /* when sending started: original timing's origin */
	__u64 *held; /* the allocator's frames, held for the whole run */
	__u32 nheld;
	__u16 flow; /* --stamp: this queue's flow (its thread index) ... */
	__u32 seq; /* ... and the next sequence number in it */
	struct xdpsg_tag_state tag; /* the flow's keyed check state */
};

/* Preflight: load and check the file, the timing and the options around it. */
int gen_replay_preflight(struct gen *g);
void gen_replay_free(struct gen *g);
/* Summary: the file's frames and, with --stamp, how many carry one and why not the rest. */
void gen_replay_json(const struct gen *g, struct jw *w);
/* xdp-gen kernel --pcap: one line saying why not, -EINVAL. */
int gen_replay_refuse_kernel(void);
/* --stamp: the marks have a frame to go on (the file has a stamped one). */
bool gen_replay_mark_ready(const struct gen *g);
/*
 * A mark (of a queue's flow: m->flow) into out: the headers of the file's
 * first stamped frame, which every queue replays, the mark m stamped at
 * ts_ns as its UDP payload, its lengths and checksums made right. Its
 * length, 0 if more than room.
 */
unsigned int gen_replay_mark(const struct gen *g, __u64 ts_ns, const struct xdpsg_mark *m,
			     void *out, unsigned int room);

/* UMEM frames a queue needs for the file. */
__u32 gen_replay_slots(const struct gen *g);
/* Thread: lay the file into the queue's UMEM; rq is the thread's own. */
int replay_q_setup(struct replay_q *rq, const struct gen *g, struct xsk_queue *q, __u16 flow);
/* Thread, after the drain: give the allocator its frames back. */
void replay_q_release(struct replay_q *rq, struct xsk_queue *q);
void replay_q_free(struct replay_q *rq);

/* Up to 'want' slots, in turn: their UMEM addresses into addrs. */
static inline __u32 replay_take(struct replay_q *rq, __u32 want, __u64 *addrs)
{
	__u64 free_slots = rq->nslots - (rq->next - rq->done);
	__u32 i, n = want < free_slots ? want : (__u32)free_slots;

	for (i = 0; i < n; i++)
		addrs[i] = ((rq->next + i) % rq->nslots) * (__u64)rq->frame_size;
	rq->next += n;
	return n;
}

/* The last n slots taken did not go out after all. */
static inline void replay_untake(struct replay_q *rq, __u32 n)
{
	rq->next -= n;
}

/* n slots came back (the completion ring returns them in the order sent). */
static inline void replay_done(struct replay_q *rq, __u32 n)
{
	rq->done += n;
}

/*
 * The frame in slot addr (at 'frame' in the UMEM) goes now: its length. With
 * --stamp, a frame with room gets flow, sequence and send time and its UDP
 * checksum follows incrementally; nothing else is written.
 */
static inline __u32 replay_frame(struct replay_q *rq, void *frame, __u64 addr, __u64 now)
{
	const struct gen_replay *r = rq->r;
	__u32 i = (__u32)((addr / rq->frame_size) % r->f.n);
	__u8 *p = frame;
	__u64 sum;
	__u16 csum;

	if (!r->stamp || !r->stamp_off[i])
		return r->f.len[i];
	sum = r->base[i] +
	      stamp_patch(p + r->stamp_off[i], &rq->tag, rq->flow, rq->seq++, now + r->clock_off);
	if (r->csum_off[i]) {
		csum = (__u16)~pkt_csum_fold(sum);
		if (!csum)
			csum = 0xffff;
		memcpy(p + r->csum_off[i], &csum, 2);
	}
	return r->f.len[i];
}

/*
 * Original timing: of 'want' frames from the sent-th on, how many are due at
 * now; when none, *due_ns is when the next one is. Fast timing: want.
 */
__u32 replay_budget(const struct replay_q *rq, __u64 sent, __u32 want, __u64 now, __u64 *due_ns);

#endif
