/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_PKT_READ_H
#define XDPSG_PKT_READ_H

/*
 * Reading a frame: where its headers are by include/bpf/parsing.h's rule
 * (the sink's XDP program's), and whether its checksums hold.
 */
#include <linux/types.h>
#include "pkt/opts.h"

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
/*
 * pkt_parse_l4() of a frame's first buffer: len bytes of a frame of flen (a
 * frame of several buffers, jumbo frames). The headers must be in the buffer;
 * the IP lengths are checked against flen, and the payload may go on past len.
 */
int pkt_parse_l4_part(const void *frame, unsigned int len, unsigned int flen, struct pkt_info *out);

/* pkt_parse_l4() for UDP outside any tunnel only (where a stamp may be rewritten); -ENOENT else. */
int pkt_parse_udp(const void *frame, unsigned int len, struct pkt_info *out);

#endif
