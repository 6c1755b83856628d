/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_PARSING_H
#define XDPSG_PARSING_H

/*
 * Bounds-checked header parsing for XDP. Every reader checks the end of the
 * packet before it touches a byte; each returns a parse result instead of
 * guessing, so malformed frames are counted, never misread.
 */
#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>

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

struct hdr_cursor {
	void *pos;
	void *end;
};

/* Ethernet plus at most one 802.1Q/802.1ad tag; returns the inner EtherType. */
static __always_inline int parse_ethhdr(struct hdr_cursor *c, __u16 *proto)
{
	struct ethhdr *eth = c->pos;
	struct vlan_hdr *vh;

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

static __always_inline enum parse_result parse_udphdr(struct hdr_cursor *c, enum parse_result ok)
{
	struct udphdr *udp = c->pos;

	if ((void *)(udp + 1) > c->end)
		return PARSE_ERR_UDP;
	c->pos = udp + 1;
	return ok;
}

static __always_inline enum parse_result parse_ipv4(struct hdr_cursor *c)
{
	struct iphdr *iph = c->pos;
	unsigned int hlen;

	if ((void *)(iph + 1) > c->end)
		return PARSE_ERR_IP;
	if (iph->version != 4 || iph->ihl < 5)
		return PARSE_ERR_IP;
	hlen = iph->ihl * 4;
	if (c->pos + hlen > c->end)
		return PARSE_ERR_IP;
	c->pos += hlen;
	if (iph->protocol != IPPROTO_UDP)
		return PARSE_OTHER;
	return parse_udphdr(c, PARSE_UDP4);
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
	struct ipv6hdr *ip6h = c->pos;

	if ((void *)(ip6h + 1) > c->end)
		return PARSE_ERR_IP;
	if (ip6h->version != 6)
		return PARSE_ERR_IP;
	c->pos = ip6h + 1;
	if (ipv6_is_ext(ip6h->nexthdr))
		return PARSE_ERR_IP6_EXT;
	if (ip6h->nexthdr != IPPROTO_UDP)
		return PARSE_OTHER;
	return parse_udphdr(c, PARSE_UDP6);
}

static __always_inline enum parse_result parse_packet(struct xdp_md *ctx)
{
	struct hdr_cursor c = {
		.pos = (void *)(long)ctx->data,
		.end = (void *)(long)ctx->data_end,
	};
	__u16 proto;

	if (parse_ethhdr(&c, &proto))
		return PARSE_ERR_ETH;
	if (proto == ETH_P_IP)
		return parse_ipv4(&c);
	if (proto == ETH_P_IPV6)
		return parse_ipv6(&c);
	return PARSE_OTHER;
}

#endif
