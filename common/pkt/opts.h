/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_PKT_OPTS_H
#define XDPSG_PKT_OPTS_H

/*
 * What the generator's frames are: the options (addresses and ports as
 * ranges, sizes or an IMIX, tags, a tunnel, the L4 protocol), where each
 * header lands (pkt_opts_layout()) and which tuple flow i gets. The frames
 * themselves are built by build.h and written per packet by gen.h; the
 * options' text forms are read by text.h. docs/gen.md draws each kind.
 *
 * Frame sizes are counted without the FCS. The smallest frame is the headers
 * (42 bytes for IPv4 UDP, 62 IPv6) plus the 18-byte stamp when stamping
 * (60 / 80); pkt_opts_min_size() says it for any kind.
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
#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <linux/types.h>

#include "shared.h"

struct stamp_key;

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
#define PKT_TUN_HLEN 8 /* VXLAN and GENEVE (no options) headers */
#define PKT_GRE_HLEN 4 /* no key, no checksum */
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
const char *pkt_proto_name(enum pkt_proto proto);
const char *pkt_encap_name(enum pkt_encap encap);

#define PKT_SETERR(err, errlen, ...)                            \
	do {                                                    \
		if ((err) && (errlen))                          \
			snprintf((err), (errlen), __VA_ARGS__); \
	} while (0)
#define pkt_family_name(f) ((f) == PKT_IPV6 ? "IPv6" : (f) == PKT_IPV4 ? "IPv4" : "unset")

unsigned int pkt_hdr_len(enum pkt_family family);
unsigned int pkt_min_size(enum pkt_family family, bool stamp);
/* Size check for one frame size; max_size 0 means PKT_MAX_SIZE_DEFAULT. */
int pkt_check_size(enum pkt_family family, bool stamp, unsigned int size, unsigned int max_size,
		   char *err, size_t errlen);
/* Distinct tuples the ranges give, capped at PKT_FLOWS_MAX + 1. */
__u64 pkt_tuple_count(const struct pkt_opts *opts);
/* The tuple of flow i (see the mapping above); needs no generator. */
void pkt_flow_tuple(const struct pkt_opts *opts, __u32 flow, struct pkt_tuple *out);

/* Header lengths of the kinds we build: IP without options, TCP without options. */
static inline unsigned int pkt_ip_hlen(enum pkt_family f)
{
	return f == PKT_IPV6 ? 40 : 20;
}

static inline unsigned int pkt_l4_hlen(enum pkt_proto p)
{
	return p == PKT_TCP ? 20 : 8;
}

/* opts' L4 protocol: proto 0 means UDP. */
static inline enum pkt_proto pkt_opts_proto(const struct pkt_opts *o)
{
	return o->proto ? o->proto : PKT_UDP;
}

/* "IPv4 TCP, VLAN 100, in vxlan over IPv6": what the frames are, for the start line. */
void pkt_kind_str(const struct pkt_opts *o, char *buf, size_t len);

#endif
