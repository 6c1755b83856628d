/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_PKT_H
#define XDPSG_PKT_H

/*
 * Packet crafting for xdp-gen: Ethernet [+ up to two VLAN tags] [+ a tunnel:
 * outer IP + VXLAN, GENEVE, GRE or nothing (IP in IP)] + IPv4/IPv6 + UDP, TCP
 * or ICMP echo request, with the xdpsg stamp (shared.h) at the start of the
 * L4 payload. docs/gen.md draws each kind with its offsets.
 *
 * Frame sizes are counted without the FCS. The smallest frame is the headers
 * (42 bytes for IPv4 UDP, 62 IPv6) plus the 18-byte stamp when stamping
 * (60 / 80); pkt_opts_min_size() says it for any kind.
 *
 * Hot path: pkt_gen__create() builds one full template per frame size, and per
 * flow only the tuple and its precomputed checksum deltas. pkt_gen_write()
 * then copies the template's headers and stamp (60 or 80 bytes), patches the
 * tuple and the stamp, and fixes the IPv4 header and UDP checksums by
 * incremental update (RFC 1624). No syscalls, locks or allocation.
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
 *
 * Flows. Flow i maps to a (src ip, dst ip, src port, dst port) tuple by
 * walking the ranges as a mixed-radix number, src port fastest, then dst
 * port, then src ip, then dst ip:
 *	sport = sport_lo + i % nsport;	i /= nsport;
 *	dport = dport_lo + i % ndport;	i /= ndport;
 *	saddr = saddr_lo + i % nsaddr;	i /= nsaddr;
 *	daddr = daddr_lo + i % ndaddr;
 * so the first N flows are distinct as long as N <= nsport*ndport*nsaddr*ndaddr.
 * N is at most PKT_FLOWS_MAX (the stamp's flow id is 16 bits).
 */
#include <endian.h>
#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>
#include <linux/types.h>

#include "pkt/stamp.h"
#include "shared.h"

enum pkt_family {
	PKT_IPV4 = 4,
	PKT_IPV6 = 6,
};

#define PKT_ETH_HLEN 14
#define PKT_V4_HDR_LEN 42 /* Ethernet + IPv4 (no options) + UDP */
#define PKT_V6_HDR_LEN 62 /* Ethernet + IPv6 + UDP */
#define PKT_SIZE_DEFAULT 60 /* 64-byte Ethernet minimum less the FCS */
#define PKT_SIZE_MAX (65535 + PKT_ETH_HLEN) /* IPv4 total length is 16 bits */
#define PKT_MAX_SIZE_DEFAULT 1514 /* MTU 1500 + Ethernet header */
#define PKT_FLOWS_MAX XDPSG_STAMP_FLOWS_MAX /* flow 0xffff is a mark's (shared.h) */

/* Byte offsets in the frames we build (no VLAN tag, no IP options). */
#define PKT_V4_OFF_CSUM 24
#define PKT_V4_OFF_SADDR 26
#define PKT_V4_OFF_DADDR 30
#define PKT_V4_OFF_UDP 34
#define PKT_V6_OFF_SADDR 22
#define PKT_V6_OFF_DADDR 38
#define PKT_V6_OFF_UDP 54
#define PKT_UDP_OFF_CSUM 6

/* The payload byte at frame offset 'off' (after the stamp, or after UDP without one). */
#define PKT_PATTERN_BYTE(off) ((__u8)(0xa5 ^ (off)))

/* Address range. IPv4 lives in lo (host order); IPv6 = hi:lo, only lo varies. */
struct pkt_ip_range {
	enum pkt_family family;
	__u64 hi; /* IPv6 upper 64 bits, host order; 0 for IPv4 */
	__u64 lo_start, lo_end; /* inclusive, host order */
};

struct pkt_port_range {
	__u16 start, end; /* inclusive, host order */
};

/* IMIX: weighted frame sizes, expanded into a short interleaved sequence. */
#define PKT_IMIX_MAX 16
#define PKT_IMIX_SEQ_MAX 1024
#define PKT_IMIX_DEFAULT "60:7,576:4,1500:1"

struct pkt_imix {
	unsigned int n;
	unsigned int size[PKT_IMIX_MAX];
	unsigned int weight[PKT_IMIX_MAX]; /* divided by their greatest common divisor */
	unsigned int seq_len; /* sum of the weights */
	__u8 seq[PKT_IMIX_SEQ_MAX]; /* indices into size[], smooth weighted round robin */
};

/* The L4 protocol: the IP protocol number (ICMP means ICMPv6 over IPv6). */
enum pkt_proto {
	PKT_UDP = 17,
	PKT_TCP = 6,
	PKT_ICMP = 1,
};

enum pkt_encap {
	PKT_ENCAP_NONE = 0,
	PKT_ENCAP_VXLAN, /* UDP port 4789, inner Ethernet */
	PKT_ENCAP_GENEVE, /* UDP port 6081, no options, inner Ethernet */
	PKT_ENCAP_GRE, /* 4-byte GRE header (no key, no checksum), inner IP */
	PKT_ENCAP_IPIP, /* inner IP right after the outer one (4in4, 6in4, 4in6, 6in6) */
};

#define PKT_VLAN_MAX 2
#define PKT_VNI_MAX 0xffffff
#define PKT_VXLAN_PORT 4789
#define PKT_GENEVE_PORT 6081
/*
 * The outer UDP source port of VXLAN/GENEVE: a hash of the inner flow's
 * addresses and ports into 49152-65535 (RFC 7348 section 5, RFC 8926
 * section 3.3), so a receiver that spreads by the outer header spreads
 * the inner flows, and a flow always takes the same port.
 */
#define PKT_TUNNEL_SPORT_LO 49152
#define PKT_TUNNEL_SPORT_N 16384
/* TCP flag bits, as in the header's 13th byte. */
#define PKT_TCP_FIN 0x01
#define PKT_TCP_SYN 0x02
#define PKT_TCP_RST 0x04
#define PKT_TCP_PSH 0x08
#define PKT_TCP_ACK 0x10
#define PKT_TCP_URG 0x20
#define PKT_TCP_ECE 0x40
#define PKT_TCP_CWR 0x80
#define PKT_TCP_SEQ 1 /* sequence number of every segment; ack 1 when ACK is set */
#define PKT_TCP_WINDOW 65535

struct pkt_opts {
	__u8 src_mac[6], dst_mac[6];
	struct pkt_ip_range src_ip, dst_ip; /* same family */
	struct pkt_port_range src_port, dst_port;
	unsigned int size; /* frame size without FCS, when imix is NULL */
	unsigned int max_size; /* largest frame the interface takes: MTU + 14 */
	const struct pkt_imix *imix; /* NULL: every frame is 'size' bytes */
	bool no_stamp;
	const struct stamp_key *key; /* the stamps' key; NULL: the public key */
	bool copy_payload; /* copy whole frames: buffers are not prefilled */
	bool random; /* flow order: pseudo-random instead of 0,1,..,N-1,0,.. */
	__u64 seed; /* for the random flow order */
	__u32 run; /* generator run id, random per run */
	__u32 flows; /* number of flows, 1..PKT_FLOWS_MAX */
	/*
	 * Multi-queue generators share one run id and flow space: this generator
	 * only emits the flows f with f % shards == shard, so per-flow sequence
	 * numbers stay single-writer. shards 0 means 1.
	 */
	__u32 shard, shards;
	/* Headers. Zeroed by pkt_opts_init(): plain UDP, no tags, no tunnel. */
	enum pkt_proto proto; /* 0 means UDP */
	__u8 tcp_flags; /* PKT_TCP_* bits */
	unsigned int nvlan; /* tags: 1 is 802.1Q; 2 is 802.1ad outer, 802.1Q inner */
	__u16 vlan[PKT_VLAN_MAX]; /* ids, outer first */
	__u8 vlan_prio; /* PCP of every tag */
	enum pkt_encap encap;
	__u32 vni; /* VXLAN/GENEVE */
	/* The tunnel's outer addresses (single, lo_start used); the family may differ from the inner. */
	struct pkt_ip_range outer_src, outer_dst;
};

/* Offsets in a frame of one kind (absolute, from the frame's first byte). */
struct pkt_layout {
	unsigned int l3_off; /* the (inner) IP header */
	unsigned int l4_off;
	unsigned int port_off; /* source and destination port; ICMP: echo id and sequence */
	unsigned int csum_off; /* L4 checksum */
	unsigned int pay_off; /* L4 payload: the stamp */
	unsigned int ol3_off; /* the outer IP header of a tunnel; 0: no tunnel */
	unsigned int ol4_off; /* the outer UDP header (VXLAN, GENEVE); 0: none */
	enum pkt_family ofamily; /* of the outer IP header */
	enum pkt_proto proto;
};

struct pkt_tuple {
	enum pkt_family family;
	__u8 saddr[16], daddr[16]; /* network order; IPv4 uses the first 4 */
	__u16 sport, dport; /* host order */
};

/* Defaults: 10.0.0.1 -> 10.0.0.2, ports 1024 -> 9, 60 bytes, 1 flow, max 1514. */
void pkt_opts_init(struct pkt_opts *opts);

/* Where the headers of the frames opts describes go (the family is opts->src_ip's). */
void pkt_opts_layout(const struct pkt_opts *opts, struct pkt_layout *out);
/* The smallest frame opts' headers (and stamp, unless no_stamp) fit in. */
unsigned int pkt_opts_min_size(const struct pkt_opts *opts);
/* "S", "SA", "PA": TCP flag letters S A P R F U E C into PKT_TCP_* bits. */
int pkt_parse_tcp_flags(const char *s, __u8 *out, char *err, size_t errlen);
/* "vxlan", "vxlan:42", "geneve[:VNI]", "gre", "ipip"; VXLAN/GENEVE's VNI defaults to 0. */
int pkt_parse_encap(const char *s, enum pkt_encap *encap, __u32 *vni, char *err, size_t errlen);
const char *pkt_proto_name(enum pkt_proto proto);
const char *pkt_encap_name(enum pkt_encap encap);

/*
 * Parsers. Each returns 0 or -EINVAL, and on error writes one line into err
 * naming the problem and the fix.
 */
/* For pkt.c and pkt_parse.c: say what is wrong in err, when the caller gave room. */
#define PKT_SETERR(err, errlen, ...)                            \
	do {                                                    \
		if ((err) && (errlen))                          \
			snprintf((err), (errlen), __VA_ARGS__); \
	} while (0)
#define pkt_family_name(f) ((f) == PKT_IPV6 ? "IPv6" : (f) == PKT_IPV4 ? "IPv4" : "unset")

int pkt_parse_mac(const char *s, __u8 mac[6], char *err, size_t errlen);
/* "10.0.0.1", "10.0.0.1-10.0.0.254", "fd00::1", "fd00::1-fd00::ff" */
int pkt_parse_ip_range(const char *s, struct pkt_ip_range *out, char *err, size_t errlen);
/* "1000" or "1000-2000"; port 0 is refused */
int pkt_parse_port_range(const char *s, struct pkt_port_range *out, char *err, size_t errlen);
/* "60:7,576:4,1500:1"; a missing weight (":W") means 1 */
int pkt_parse_imix(const char *s, struct pkt_imix *out, char *err, size_t errlen);
/* PKT_IMIX_DEFAULT with its smallest size raised to min_size if that is larger. */
void pkt_imix_default(struct pkt_imix *out, unsigned int min_size);

unsigned int pkt_hdr_len(enum pkt_family family);
unsigned int pkt_min_size(enum pkt_family family, bool stamp);
/* Size check for one frame size; max_size 0 means PKT_MAX_SIZE_DEFAULT. */
int pkt_check_size(enum pkt_family family, bool stamp, unsigned int size, unsigned int max_size,
		   char *err, size_t errlen);
/* Distinct tuples the ranges give, capped at PKT_FLOWS_MAX + 1. */
__u64 pkt_tuple_count(const struct pkt_opts *opts);
/* The tuple of flow i (see the mapping above); needs no generator. */
void pkt_flow_tuple(const struct pkt_opts *opts, __u32 flow, struct pkt_tuple *out);

/* The tunnel's outer source port for the inner flow t (host order; see PKT_TUNNEL_SPORT_LO). */
__u16 pkt_tunnel_sport(const struct pkt_tuple *t);

/* Checksums in "memory order": sum 16-bit words as loaded, store the result as is. */
static inline __u16 pkt_csum_fold(__u64 sum)
{
	sum = (sum & 0xffffffffULL) + (sum >> 32);
	sum = (sum & 0xffffffffULL) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)sum;
}

/* Ones'-complement sum of len bytes added to sum (not folded, not inverted). */
__u64 pkt_csum_partial(const void *data, unsigned int len, __u64 sum);

/* Full recomputation, for tests and the sink. */
enum pkt_csum_result {
	PKT_CSUM_OK = 0,
	PKT_CSUM_NOT_UDP, /* not Ethernet/IPv4|IPv6/UDP: nothing to check */
	PKT_CSUM_TRUNCATED, /* lengths in the headers do not fit the frame */
	PKT_CSUM_BAD_IP, /* IPv4 header checksum */
	PKT_CSUM_BAD_UDP, /* UDP checksum (or 0 over IPv6) */
};

/* 0 (PKT_CSUM_OK) or an enum pkt_csum_result reason. IPv4 UDP checksum 0 is "none": OK. */
int pkt_verify_checksums(const void *frame, unsigned int len);
const char *pkt_csum_str(int result);

/* Where Ethernet [802.1Q] / IPv4|IPv6 / UDP headers are, for the verifier and stamp_read(). */
struct pkt_info {
	enum pkt_family family;
	unsigned int proto; /* IPPROTO_UDP, _TCP, _ICMP or _ICMPV6 */
	unsigned int
		layers; /* what it was carried in: include/bpf/parsing.h's enum parse_layer bits */
	unsigned int l3_off, l4_off, payload_off; /* inside a tunnel: the inner packet's */
	unsigned int l3_len; /* IPv4 total length, or IPv6 header + payload length */
	unsigned int payload_len; /* the L4 payload, as the IP (or UDP) header bounds it */
	unsigned int udp_len; /* UDP only: from its header, >= 8 and within the IP packet */
};

/* parse_layer bits of a tunnel (VXLAN, GENEVE, GRE, IP in IP). */
#define PKT_TUNNEL_LAYERS (0x8 | 0x10 | 0x20 | 0x40)

/*
 * 0 for a UDP, TCP, ICMP or ICMPv6 packet by include/bpf/parsing.h's rule (the one
 * the sink's XDP program applies: up to two VLAN tags, IPv6 extension
 * headers, one tunnel looked through, lengths that fit, no fragment);
 * -ENOENT for anything else that is well formed (another ethertype or
 * protocol, a fragment); -EINVAL for a malformed frame (shorter than its
 * headers say, bad lengths). The stamp sits at payload_off.
 */
int pkt_parse_l4(const void *frame, unsigned int len, struct pkt_info *out);

/* pkt_parse_l4() for UDP outside any tunnel only (where a stamp may be rewritten); -ENOENT else. */
int pkt_parse_udp(const void *frame, unsigned int len, struct pkt_info *out);

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

/*
 * The headers of a UDP frame that pkt_parse_udp() read (pi), with payload
 * (plen bytes) as its new UDP payload, into out: the IP and UDP lengths,
 * the IPv4 header checksum and the UDP checksum made right (a replayed
 * file's frame turned into a mark). Returns the length, or 0 if it would
 * not fit in room.
 */
unsigned int pkt_udp_repayload(const void *frame, const struct pkt_info *pi, const void *payload,
			       unsigned int plen, void *out, unsigned int room);

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
		sum += stamp_patch(p + l->pay_off, &g->tag[flow], (__u16)flow, seq, ts_ns);
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
	csum = (__u16)~pkt_csum_fold((__u16)~csum +
				     stamp_retime(st, &g->tag[le16toh(flow)], ts_ns));
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
