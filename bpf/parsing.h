/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_PARSING_H
#define XDPSG_PARSING_H

/*
 * Bounds-checked header parsing: the one rule for what counts as a UDP packet,
 * shared by the sink's XDP program (parse_packet()) and user space, where
 * pkt_parse_udp() (common/pkt.c) runs the same functions on a frame in memory.
 * Every reader checks the end of the packet before it touches a byte; each
 * returns a parse result instead of guessing, so malformed frames are counted,
 * never misread.
 *
 * The rule: Ethernet with at most one 802.1Q or 802.1ad tag; IPv4 whose total
 * length fits its header and the frame; IPv6 whose payload fits the frame, with
 * no extension header; then a UDP header whose length is at least 8 and within
 * the IP packet. An IPv4 fragment (MF set or an offset) is PARSE_OTHER: it does
 * not carry a whole datagram (a non-first one has no UDP header at all).
 */
#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* IPv4 frag_off bits (the kernel's IP_MF and IP_OFFSET are not uapi). */
#define PARSE_IP_MF 0x2000
#define PARSE_IP_OFFSET 0x1fff

enum parse_result {
	PARSE_UDP4,
	PARSE_UDP6,
	PARSE_OTHER,
	PARSE_ERR_ETH,
	PARSE_ERR_IP,
	PARSE_ERR_IP6_EXT,
	PARSE_ERR_UDP,
};

struct vlan_hdr {
	__be16 tci;
	__be16 proto;
};

/*
 * User space runs these on frames at any address (an IP header sits 2 bytes
 * off a 4-byte boundary behind Ethernet), so there the header types have
 * alignment 1 and the compiler never assumes more. BPF needs no such care.
 */
#ifdef __bpf__
#define PARSE_HDR_ALIGN
#else
#define PARSE_HDR_ALIGN __attribute__((aligned(1)))
#endif
typedef struct ethhdr PARSE_HDR_ALIGN parse_eth_t;
typedef struct vlan_hdr PARSE_HDR_ALIGN parse_vlan_t;
typedef struct iphdr PARSE_HDR_ALIGN parse_ip4_t;
typedef struct ipv6hdr PARSE_HDR_ALIGN parse_ip6_t;
typedef struct udphdr PARSE_HDR_ALIGN parse_udp_t;

struct hdr_cursor {
	void *pos;
	void *end;
	void *l3; /* the IP header, once parsed */
	void *l4; /* the UDP header, once parsed */
	__u32 l3_len; /* IPv4 total length, or IPv6 header + payload length */
};

/* Ethernet plus at most one 802.1Q/802.1ad tag; returns the inner EtherType. */
static __always_inline int parse_ethhdr(struct hdr_cursor *c, __u16 *proto)
{
	parse_eth_t *eth = c->pos;
	parse_vlan_t *vh;

	if ((void *)(eth + 1) > c->end)
		return -1;
	*proto = bpf_ntohs(eth->h_proto);
	c->pos = eth + 1;
	if (*proto == ETH_P_8021Q || *proto == ETH_P_8021AD) {
		vh = c->pos;
		if ((void *)(vh + 1) > c->end)
			return -1;
		*proto = bpf_ntohs(vh->proto);
		c->pos = vh + 1;
	}
	return 0;
}

/* A UDP header within the room the IP header leaves for it. */
static __always_inline enum parse_result parse_udphdr(struct hdr_cursor *c, __u32 room,
						      enum parse_result ok)
{
	parse_udp_t *udp = c->pos;
	__u32 ulen;

	if ((void *)(udp + 1) > c->end)
		return PARSE_ERR_UDP;
	ulen = bpf_ntohs(udp->len);
	if (ulen < sizeof(*udp) || ulen > room)
		return PARSE_ERR_UDP;
	c->l4 = udp;
	c->pos = udp + 1;
	return ok;
}

static __always_inline enum parse_result parse_ipv4(struct hdr_cursor *c)
{
	parse_ip4_t *iph = c->pos;
	__u32 hlen, tot;

	if ((void *)(iph + 1) > c->end)
		return PARSE_ERR_IP;
	if (iph->version != 4 || iph->ihl < 5)
		return PARSE_ERR_IP;
	hlen = iph->ihl * 4;
	tot = bpf_ntohs(iph->tot_len);
	if (tot < hlen || c->pos + tot > c->end || c->pos + hlen > c->end)
		return PARSE_ERR_IP;
	c->l3 = iph;
	c->l3_len = tot;
	c->pos += hlen;
	if (iph->protocol != IPPROTO_UDP)
		return PARSE_OTHER;
	if (iph->frag_off & bpf_htons(PARSE_IP_MF | PARSE_IP_OFFSET))
		return PARSE_OTHER;
	return parse_udphdr(c, tot - hlen, PARSE_UDP4);
}

static __always_inline bool ipv6_is_ext(__u8 nexthdr)
{
	switch (nexthdr) {
	case IPPROTO_HOPOPTS:
	case IPPROTO_ROUTING:
	case IPPROTO_FRAGMENT:
	case IPPROTO_DSTOPTS:
	case IPPROTO_AH:
	case IPPROTO_MH:
	case 139: /* HIP */
	case 140: /* Shim6 */
		return true;
	default:
		return false;
	}
}

static __always_inline enum parse_result parse_ipv6(struct hdr_cursor *c)
{
	parse_ip6_t *ip6h = c->pos;
	__u32 plen;

	if ((void *)(ip6h + 1) > c->end)
		return PARSE_ERR_IP;
	if (ip6h->version != 6)
		return PARSE_ERR_IP;
	plen = bpf_ntohs(ip6h->payload_len);
	if ((void *)(ip6h + 1) + plen > c->end)
		return PARSE_ERR_IP;
	c->l3 = ip6h;
	c->l3_len = sizeof(*ip6h) + plen;
	c->pos = ip6h + 1;
	if (ipv6_is_ext(ip6h->nexthdr))
		return PARSE_ERR_IP6_EXT;
	if (ip6h->nexthdr != IPPROTO_UDP)
		return PARSE_OTHER;
	return parse_udphdr(c, plen, PARSE_UDP6);
}

/* A frame from c->pos to c->end, the cursor left at what was found. */
static __always_inline enum parse_result parse_frame(struct hdr_cursor *c)
{
	__u16 proto;

	if (parse_ethhdr(c, &proto))
		return PARSE_ERR_ETH;
	if (proto == ETH_P_IP)
		return parse_ipv4(c);
	if (proto == ETH_P_IPV6)
		return parse_ipv6(c);
	return PARSE_OTHER;
}

static __always_inline enum parse_result parse_packet(struct xdp_md *ctx)
{
	struct hdr_cursor c = {
		.pos = (void *)(long)ctx->data,
		.end = (void *)(long)ctx->data_end,
	};

	return parse_frame(&c);
}

#endif
