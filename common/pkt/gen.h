/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_PKT_GEN_H
#define XDPSG_PKT_GEN_H

/*
 * The generator's hot path. pkt_gen__create() builds one full template per
 * frame size (build.h), and per flow only the tuple and its precomputed
 * checksum deltas. pkt_gen_write() then copies the template's headers and
 * stamp (60 or 80 bytes), patches the tuple and the stamp, and fixes the
 * IPv4 header and UDP checksums by incremental update (RFC 1624). No
 * syscalls, locks or allocation.
 *
 * Frame buffer contract. The payload after the stamp is a fixed pattern that
 * depends only on the byte's offset in the frame (PKT_PATTERN_BYTE), never on
 * the frame size. So a buffer filled once with pkt_gen_prefill() (the largest
 * template, in full) holds the right payload for every size, and
 * pkt_gen_write() only rewrites the first pkt_gen_copy_len() bytes. Buffers
 * may be recycled between sizes freely, as long as nobody but pkt_gen_write()
 * writes into them. If that cannot be promised (shared buffers, buffers the
 * kernel may scribble on), set opts.copy_payload: every write then copies the
 * whole frame.
 */
#include <endian.h>
#include <stdbool.h>
#include <string.h>
#include <linux/types.h>

#include "pkt/opts.h"
#include "pkt/read.h"
#include "pkt/stamp.h"
#include "shared.h"

/* Generator internals, public only so the hot path can be inline. */
struct pkt_tmpl {
	__u8 *data;
	unsigned int len;
	__u16 ip_csum; /* as stored in the template (memory order) */
	__u16 udp_csum; /* the L4 checksum (UDP, TCP or ICMP) */
	__u16 ocsum; /* the outer UDP checksum of a VXLAN/GENEVE frame */
};

struct pkt_flow {
	union {
		struct {
			__u32 saddr, daddr; /* network order */
		} v4;
		struct {
			__u64 saddr_lo, daddr_lo; /* low 64 bits, network order */
		} v6;
	};
	__u16 sport, dport; /* network order */
	__u16 ip_delta; /* ones'-complement difference from flow 0, IPv4 header */
	__u16 udp_delta; /* same, L4 checksum (pseudo header + ports, or ICMP id) */
	__u16 ocsum_delta; /* same, outer UDP checksum of a tunnel */
	__u16 osport; /* a tunnel's outer UDP source port, network order (pkt_tunnel_sport()) */
};

struct pkt_gen {
	enum pkt_family family;
	struct pkt_layout lay;
	bool stamp;
	bool random;
	unsigned int copy_len; /* bytes copied per frame when the payload is prefilled */
	unsigned int copy_payload; /* nonzero: copy whole frames */
	unsigned int ntmpl;
	struct pkt_tmpl tmpl[PKT_IMIX_MAX];
	unsigned int size_pos, size_seq_len;
	__u8 size_seq[PKT_IMIX_SEQ_MAX];
	__u32 nflows; /* flows in the run */
	__u32 shard, shards, nlocal; /* flows this generator emits: shard + k * shards */
	__u32 flow_pos; /* next flow in sequential order */
	__u64 rng;
	struct pkt_flow *flows; /* nflows entries */
	__u32 *seq; /* next sequence number per flow, nflows entries */
	struct xdpsg_tag_state *tag; /* per flow: the stamp's keyed check after run and flow */
	struct stamp_key key;
	__u32 run;
	struct pkt_opts opts; /* as given (imix and key cleared): marks are built from them */
	/* added to every send time given before it goes into a stamp: the stamps' clock's offset */
	__u64 clock_off;
};

/*
 * Validates opts (sizes, ranges, families, flow count) and builds the
 * templates. On error returns NULL, sets errno and writes one line into err.
 */
struct pkt_gen *pkt_gen__create(const struct pkt_opts *opts, char *err, size_t errlen);
void pkt_gen__destroy(struct pkt_gen *g);

/* Largest frame this generator writes: the size frame buffers must have. */
unsigned int pkt_gen_max_len(const struct pkt_gen *g);
/* Fill a frame buffer (pkt_gen_max_len() bytes) once, before its first pkt_gen_write(). */
void pkt_gen_prefill(const struct pkt_gen *g, void *frame);
/* The template of size index t (bytes and length), e.g. for a BPF generator. */
const __u8 *pkt_gen_template(const struct pkt_gen *g, unsigned int t, unsigned int *len);
unsigned int pkt_gen_copy_len(const struct pkt_gen *g);

/* A mark's L4 payload: the stamp and the mark's body (docs/stamp.md). */
#define PKT_MARK_PAYLOAD (XDPSG_STAMP_SIZE + XDPSG_MARK_SIZE)

/* The length of every mark g builds (pkt_gen_mark()): its headers and the mark. */
unsigned int pkt_gen_mark_len(const struct pkt_gen *g);

/*
 * A mark of flow 'flow' into frame (pkt_gen_mark_len(g) bytes): the flow's
 * own headers, as its frames carry them (addresses, ports, tags, tunnel,
 * protocol), with the mark m stamped at ts_ns under the generator's key and
 * run (stamp_write_mark()) as the whole L4 payload, every length and
 * checksum its own. Returns the length. Not the hot path: built whole.
 */
unsigned int pkt_gen_mark(const struct pkt_gen *g, __u32 flow, __u64 ts_ns,
			  const struct xdpsg_mark *m, void *frame);

static inline __u64 pkt__xorshift64s(__u64 *state)
{
	__u64 x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/* Next flow to send: sequential over this shard's flows, or pseudo-random. */
static inline __u32 pkt_gen_next_flow(struct pkt_gen *g)
{
	__u32 f;

	if (g->random) {
		__u32 r = (__u32)(pkt__xorshift64s(&g->rng) >> 32);
		__u32 k = (__u32)(((__u64)r * g->nlocal) >> 32);

		return g->shard + k * g->shards;
	}
	f = g->flow_pos;
	g->flow_pos += g->shards;
	if (g->flow_pos >= g->nflows)
		g->flow_pos = g->shard;
	return f;
}

/* Next template (size) index: the IMIX sequence, or always 0 for one size. */
static inline unsigned int pkt_gen_next_size(struct pkt_gen *g)
{
	unsigned int t = g->size_seq[g->size_pos];

	if (++g->size_pos == g->size_seq_len)
		g->size_pos = 0;
	return t;
}

/*
 * Write frame 'flow' / 'seq' / 'ts_ns' from template t into frame; returns
 * its length. flow must be below the generator's flow count.
 */
static inline unsigned int pkt_gen_write_tmpl(struct pkt_gen *g, void *frame, unsigned int t,
					      __u32 flow, __u32 seq, __u64 ts_ns)
{
	const struct pkt_tmpl *tp = &g->tmpl[t];
	const struct pkt_flow *fl = &g->flows[flow];
	const struct pkt_layout *l = &g->lay;
	__u8 *p = frame, *ip = p + l->l3_off;
	__u64 sum;
	__u16 csum;

	memcpy(p, tp->data, g->copy_payload ? tp->len : g->copy_len);
	if (g->family == PKT_IPV4) {
		memcpy(ip + 12, &fl->v4.saddr, 4);
		memcpy(ip + 16, &fl->v4.daddr, 4);
		csum = (__u16)~pkt_csum_fold((__u16)~tp->ip_csum + (__u64)fl->ip_delta);
		memcpy(ip + 10, &csum, 2);
	} else {
		memcpy(ip + 16, &fl->v6.saddr_lo, 8);
		memcpy(ip + 32, &fl->v6.daddr_lo, 8);
	}
	memcpy(p + l->port_off, &fl->sport, 2);
	memcpy(p + l->port_off + 2, &fl->dport, 2);
	if (l->ol4_off)
		memcpy(p + l->ol4_off, &fl->osport, 2);
	sum = (__u16)~tp->udp_csum + (__u64)fl->udp_delta;
	/* The template's stamp holds only the run, so the new words just add. */
	if (g->stamp)
		sum += stamp_patch(p + l->pay_off, &g->tag[flow], (__u16)flow, seq,
				   ts_ns + g->clock_off);
	csum = (__u16)~pkt_csum_fold(sum);
	if (csum == 0)
		csum = 0xffff; /* 0 means "no checksum" (IPv4 UDP) or is invalid (IPv6) */
	memcpy(p + l->csum_off, &csum, 2);
	/* The inner packet sums to minus its pseudo header: the stamp never shows here. */
	if (l->ol4_off) {
		csum = (__u16)~pkt_csum_fold((__u16)~tp->ocsum + (__u64)fl->ocsum_delta);
		if (csum == 0)
			csum = 0xffff;
		memcpy(p + l->ol4_off + PKT_UDP_OFF_CSUM, &csum, 2);
	}
	return tp->len;
}

/* Write the next size from the IMIX sequence (or the one size). */
static inline unsigned int pkt_gen_write(struct pkt_gen *g, void *frame, __u32 flow, __u32 seq,
					 __u64 ts_ns)
{
	return pkt_gen_write_tmpl(g, frame, pkt_gen_next_size(g), flow, seq, ts_ns);
}

/*
 * Put the send time into a frame pkt_gen_write*() wrote with ts_ns 0, and
 * fix its L4 checksum incrementally (RFC 1624): the sender writes a batch
 * first and stamps it just before handing it to the kernel, so the time is
 * the frames' departure, not the start of the batch. No-op without a stamp.
 */
static inline void pkt_gen_set_time(const struct pkt_gen *g, void *frame, __u64 ts_ns)
{
	__u8 *st = (__u8 *)frame + g->lay.pay_off, *cp = (__u8 *)frame + g->lay.csum_off;
	__u16 flow, csum;

	if (!g->stamp)
		return;
	memcpy(&flow, st + XDPSG_STAMP_OFF_FLOW, 2);
	memcpy(&csum, cp, 2);
	/* 0xffff stood for a computed 0: the same zero in ones' complement. */
	csum = (__u16)~pkt_csum_fold(
		(__u16)~csum + stamp_retime(st, &g->tag[le16toh(flow)], ts_ns + g->clock_off));
	if (csum == 0)
		csum = 0xffff;
	memcpy(cp, &csum, 2);
}

/*
 * A frame pkt_gen_next() wrote that was never handed over (a send the stop
 * cut short): its flow takes its sequence number back, so the flow's count
 * (the end marks') is of frames that left. Frames go back last first, and
 * only the flow's latest number: any other is left alone.
 */
static inline void pkt_gen_take_back(struct pkt_gen *g, const void *frame)
{
	const __u8 *st = (const __u8 *)frame + g->lay.pay_off;
	__u16 flow;
	__u32 seq;

	if (!g->stamp)
		return;
	memcpy(&flow, st + XDPSG_STAMP_OFF_FLOW, 2);
	memcpy(&seq, st + XDPSG_STAMP_OFF_SEQ, 4);
	flow = le16toh(flow);
	if (flow < g->nflows && g->seq[flow] && le32toh(seq) == g->seq[flow] - 1)
		g->seq[flow]--;
}

/* The whole per-packet step: next flow, its next sequence number, next size. */
static inline unsigned int pkt_gen_next(struct pkt_gen *g, void *frame, __u64 ts_ns)
{
	__u32 flow = pkt_gen_next_flow(g);

	return pkt_gen_write(g, frame, flow, g->seq[flow]++, ts_ns);
}

#endif
