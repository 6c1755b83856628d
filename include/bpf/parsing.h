/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_PARSING_H
#define XDPSG_PARSING_H

/*
 * Bounds-checked header parsing: the one rule for where a packet's payload
 * is, shared by the sink's XDP program (parse_packet()) and user space, where
 * pkt_parse_l4() (common/pkt/pkt.c) runs the same functions on a frame in memory.
 * Every reader checks the end of the packet before it touches a byte; each
 * returns a parse result instead of guessing, so malformed frames are counted,
 * never misread.
 *
 * The rule: Ethernet with up to two 802.1Q/802.1ad tags (QinQ); IPv4 whose
 * total length fits its header and the frame; IPv6 whose payload fits the
 * frame, through up to PARSE_IP6_EXT_MAX extension headers (hop-by-hop,
 * routing, fragment, destination options, AH, mobility, HIP, shim6); then
 * UDP (length at least 8, within the IP packet), TCP (data offset at least
 * 5, header within the IP packet) or ICMP/ICMPv6 (an 8-byte header). A
 * fragment that does not carry the whole datagram (IPv4 MF or an offset, or
 * an IPv6 fragment header saying so) is PARSE_OTHER: a non-first one has no
 * L4 header at all.
 *
 * One tunnel is looked through, and the result is then the inner packet's:
 * VXLAN (UDP port 4789, I flag set and reserved bits clear), GENEVE (UDP port
 * 6081, version 0, carrying Ethernet), GRE (version 0, carrying IPv4, IPv6 or
 * Ethernet) and IP in IP (IPv4 or IPv6 in IPv4 or IPv6). A UDP packet to a
 * tunnel port whose header is not a valid tunnel header stays plain UDP, so
 * a stamped UDP stream to port 4789 is still found. What was walked through
 * is in the cursor's layers bits, for the per-encapsulation counts.
 */
#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
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
	PARSE_TCP4,
	PARSE_TCP6,
	PARSE_ICMP4,
	PARSE_ICMP6,
	PARSE_OTHER,
	PARSE_ERR_ETH,
	PARSE_ERR_IP,
	PARSE_ERR_IP6_EXT,
	PARSE_ERR_UDP,
	PARSE_ERR_TCP,
	PARSE_ERR_ICMP,
	PARSE_ERR_TUNNEL,
};

/* What a frame was carried in: bits of hdr_cursor.layers. */
enum parse_layer {
	PARSE_L_VLAN = 1 << 0, /* one tag or more */
	PARSE_L_QINQ = 1 << 1, /* two tags */
	PARSE_L_IP6_EXT = 1 << 2, /* IPv6 extension headers walked */
	PARSE_L_VXLAN = 1 << 3,
	PARSE_L_GENEVE = 1 << 4,
	PARSE_L_GRE = 1 << 5,
	PARSE_L_IPIP = 1 << 6,
};

#define PARSE_IP6_EXT_MAX 8
#define PARSE_PORT_VXLAN 4789
#define PARSE_PORT_GENEVE 6081
#define PARSE_ETH_P_TEB 0x6558 /* transparent Ethernet bridging: an Ethernet frame inside */
#define PARSE_IPPROTO_GRE 47
#define PARSE_IPPROTO_IPIP 4
#define PARSE_IPPROTO_IPV6 41
#define PARSE_IPPROTO_TCP 6
#define PARSE_IPPROTO_ICMP 1
#define PARSE_IPPROTO_ICMPV6 58

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

struct hdr_cursor {
	void *start; /* the frame's first byte */
	void *pos;
	void *end; /* the end of what the walk may read */
	/*
	 * With PARSE_COPY only: the end of the whole frame, of which the walk
	 * reads a copy of the first bytes (start to end), for the IP headers'
	 * lengths. Without it the walk has the whole frame and end is both.
	 */
	void *frame_end;
	void *l3; /* the (innermost) IP header, once parsed */
	void *l4; /* its L4 header, once parsed */
	void *payload; /* the L4 payload, where a stamp sits */
	__u32 l3_len; /* IPv4 total length, or IPv6 header + payload length */
	__u32 l4_len; /* the L4 header and its payload, as the IP header bounds it */
	__u32 layers; /* enum parse_layer bits */
};

/*
 * The verifier tracks each path's packet pointer with its own range, so a
 * walk whose steps vary in length (extension headers, tunnel options)
 * multiplies the states it explores past its limit. Re-deriving the cursor
 * from a masked offset gives every path the same range, and the states after
 * it prune. User space needs none of it.
 *
 * The walk moves forward only, and the mask must not change that: every step
 * is checked against end before the cursor moves, so the cursor never passes
 * end, and the mask must be above end - start for every frame, or a masked
 * offset would take the cursor back into bytes already walked. In XDP the
 * frame's linear part is at most a 4 KiB page, far below the default. A
 * program that walks a copy in a map value (the drop tracer) sets
 * PARSE_COPY, a smaller mask above its copy's length (so every offset stays
 * inside the value) and end at its copy's end.
 */
#ifndef PARSE_OFF_MASK
#define PARSE_OFF_MASK 0x3fff
#endif

/* Where the IP headers' lengths must end: the whole frame, of which a copy may hold less. */
#ifdef PARSE_COPY
#define PARSE_LEN_END(c) ((c)->frame_end)
#else
#define PARSE_LEN_END(c) ((c)->end)
#endif

static __always_inline void parse_settle(struct hdr_cursor *c)
{
#ifdef __bpf__
	__u64 off = (__u64)(c->pos - c->start);

	off &= PARSE_OFF_MASK;
	c->pos = c->start + off;
#else
	(void)c;
#endif
}

/*
 * One VLAN tag, if *proto says one follows: 1 when read (the cursor past it,
 * *proto what it carries), 0 when there is none, -1 when it is cut short.
 */
static __always_inline int parse_vlan_tag(struct hdr_cursor *c, __u16 *proto)
{
	parse_vlan_t *vh = c->pos;

	if (*proto != ETH_P_8021Q && *proto != ETH_P_8021AD)
		return 0;
	if ((void *)(vh + 1) > c->end)
		return -1;
	*proto = bpf_ntohs(vh->proto);
	c->pos = vh + 1;
	return 1;
}

/* Ethernet plus up to two 802.1Q/802.1ad tags; returns the inner EtherType. */
static __always_inline int parse_ethhdr(struct hdr_cursor *c, __u16 *proto)
{
	parse_eth_t *eth = c->pos;
	int r;

	if ((void *)(eth + 1) > c->end)
		return -1;
	*proto = bpf_ntohs(eth->h_proto);
	c->pos = eth + 1;
	r = parse_vlan_tag(c, proto);
	if (r <= 0)
		return r;
	c->layers |= PARSE_L_VLAN;
	r = parse_vlan_tag(c, proto);
	if (r <= 0)
		return r;
	c->layers |= PARSE_L_QINQ;
	return 0;
}

/*
 * Internal results: a tunnel was found and the cursor is at the packet it
 * carries, which parse_frame() then parses as the result.
 */
#define PARSE_INNER_ETH 100
#define PARSE_INNER_IP4 101
#define PARSE_INNER_IP6 102

/* The L4 header within the room the IP header leaves for it (room: its length). */
static __always_inline int parse_l4(struct hdr_cursor *c, __u8 proto, __u32 room, bool v6)
{
	__u8 *b = c->pos;
	__u32 len;

	switch (proto) {
	case IPPROTO_UDP:
		if ((void *)(b + 8) > c->end)
			return PARSE_ERR_UDP;
		len = (__u32)b[4] << 8 | b[5];
		if (len < 8 || len > room)
			return PARSE_ERR_UDP;
		c->payload = b + 8;
		c->l4_len = len;
		c->l4 = b;
		c->pos = b + 8;
		return v6 ? PARSE_UDP6 : PARSE_UDP4;
	case PARSE_IPPROTO_TCP:
		if ((void *)(b + 20) > c->end || room < 20)
			return PARSE_ERR_TCP;
		len = (__u32)(b[12] >> 4) * 4;
		if (len < 20 || len > room || (void *)(b + len) > c->end)
			return PARSE_ERR_TCP;
		c->payload = b + len;
		c->l4_len = room;
		c->l4 = b;
		c->pos = b + len;
		return v6 ? PARSE_TCP6 : PARSE_TCP4;
	case PARSE_IPPROTO_ICMP:
	case PARSE_IPPROTO_ICMPV6:
		if (v6 != (proto == PARSE_IPPROTO_ICMPV6))
			return PARSE_OTHER;
		if ((void *)(b + 8) > c->end || room < 8)
			return PARSE_ERR_ICMP;
		c->payload = b + 8;
		c->l4_len = room;
		c->l4 = b;
		c->pos = b + 8;
		return v6 ? PARSE_ICMP6 : PARSE_ICMP4;
	default:
		return PARSE_OTHER;
	}
}

/*
 * A UDP packet to a tunnel port whose header says it is one: the cursor
 * moves to the Ethernet frame inside. Anything else is the UDP packet it was.
 */
static __always_inline int parse_udp_tunnel(struct hdr_cursor *c, int udp)
{
	__u8 *u = c->l4, *b = c->payload;
	__u32 dport = (__u32)u[2] << 8 | u[3], hl;

	if ((dport != PARSE_PORT_VXLAN && dport != PARSE_PORT_GENEVE) || c->l4_len < 16 ||
	    (void *)(b + 8) > c->end)
		return udp;
	if (dport == PARSE_PORT_VXLAN) {
		/*
		 * RFC 7348: the I flag set, the last byte reserved. With the P
		 * flag (VXLAN-GPE's layout) the next protocol must be Ethernet.
		 * A stamp's first byte (XDPSG_STAMP_MAGIC) has no I flag, so a
		 * stamped UDP stream to port 4789 stays UDP.
		 */
		if (!(b[0] & 0x08) || b[7] || ((b[0] & 0x04) && b[3] != 3))
			return udp;
		c->pos = b + 8;
		c->layers |= PARSE_L_VXLAN;
		return PARSE_INNER_ETH;
	}
	/* GENEVE (RFC 8926): version 0 carrying Ethernet; options of opt_len words. */
	if ((b[0] >> 6) || ((__u32)b[2] << 8 | b[3]) != PARSE_ETH_P_TEB)
		return udp;
	hl = 8 + (__u32)(b[0] & 0x3f) * 4;
	if (hl > c->l4_len - 8 || (void *)(b + hl) > c->end)
		return PARSE_ERR_TUNNEL;
	c->pos = b + hl;
	c->layers |= PARSE_L_GENEVE;
	return PARSE_INNER_ETH;
}

/* GRE version 0 (RFC 2784/2890): what it carries, if we read it. */
static __always_inline int parse_gre(struct hdr_cursor *c, __u32 room)
{
	__u8 *b = c->pos;
	__u32 flags, proto, hl = 4;

	if ((void *)(b + 4) > c->end || room < 4)
		return PARSE_ERR_TUNNEL;
	flags = (__u32)b[0] << 8 | b[1];
	proto = (__u32)b[2] << 8 | b[3];
	/* Version 1 (PPTP) and source routing carry something else. */
	if ((flags & 0x7) || (flags & 0x4000))
		return PARSE_OTHER;
	hl += (flags & 0x8000 ? 4 : 0) + (flags & 0x2000 ? 4 : 0) + (flags & 0x1000 ? 4 : 0);
	c->layers |= PARSE_L_GRE;
	if (hl > room || (void *)(b + hl) > c->end)
		return PARSE_ERR_TUNNEL;
	if (proto != ETH_P_IP && proto != ETH_P_IPV6 && proto != PARSE_ETH_P_TEB)
		return PARSE_OTHER;
	c->pos = b + hl;
	return proto == ETH_P_IP   ? PARSE_INNER_IP4 :
	       proto == ETH_P_IPV6 ? PARSE_INNER_IP6 :
				     PARSE_INNER_ETH;
}

/* After the IP header: a tunnel (when tunnels are looked through) or the L4 header. */
static __always_inline int parse_ip_payload(struct hdr_cursor *c, __u8 proto, __u32 room, bool v6,
					    bool tunnels)
{
	int r;

	if (tunnels) {
		if (proto == PARSE_IPPROTO_IPIP || proto == PARSE_IPPROTO_IPV6) {
			c->layers |= PARSE_L_IPIP;
			return proto == PARSE_IPPROTO_IPIP ? PARSE_INNER_IP4 : PARSE_INNER_IP6;
		}
		if (proto == PARSE_IPPROTO_GRE)
			return parse_gre(c, room);
	}
	r = parse_l4(c, proto, room, v6);
	if (tunnels && (r == PARSE_UDP4 || r == PARSE_UDP6))
		return parse_udp_tunnel(c, r);
	return r;
}

static __always_inline int parse_ipv4(struct hdr_cursor *c, bool tunnels)
{
	parse_ip4_t *iph = c->pos;
	__u32 hlen, tot;

	if ((void *)(iph + 1) > c->end)
		return PARSE_ERR_IP;
	if (iph->version != 4 || iph->ihl < 5)
		return PARSE_ERR_IP;
	hlen = iph->ihl * 4;
	tot = bpf_ntohs(iph->tot_len);
	if (tot < hlen || c->pos + tot > PARSE_LEN_END(c) || c->pos + hlen > c->end)
		return PARSE_ERR_IP;
	c->l3 = iph;
	c->l3_len = tot;
	c->pos += hlen;
	if (iph->frag_off & bpf_htons(PARSE_IP_MF | PARSE_IP_OFFSET))
		return PARSE_OTHER;
	return parse_ip_payload(c, iph->protocol, tot - hlen, false, tunnels);
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

/*
 * The extension headers from c->pos, *nexthdr the first one's type; leaves
 * the cursor and *nexthdr at what follows them, *room what is left of the
 * payload. Every extension header is at least 8 bytes.
 */
static __always_inline int parse_ip6_ext(struct hdr_cursor *c, __u8 *nexthdr, __u32 *room)
{
	__u8 *b;
	__u32 hl;
	int i;

	for (i = 0; i < PARSE_IP6_EXT_MAX; i++) {
		if (!ipv6_is_ext(*nexthdr))
			return 0;
		parse_settle(c);
		b = c->pos;
		c->layers |= PARSE_L_IP6_EXT;
		if ((void *)(b + 8) > c->end || *room < 8)
			return PARSE_ERR_IP6_EXT;
		if (*nexthdr == IPPROTO_FRAGMENT) {
			/* Not the whole datagram: an offset or more to come (M). */
			if (((__u32)b[2] << 8 | b[3]) & 0xfff9)
				return PARSE_OTHER;
			hl = 8;
		} else if (*nexthdr == IPPROTO_AH) {
			hl = ((__u32)b[1] + 2) * 4;
		} else {
			hl = ((__u32)b[1] + 1) * 8;
		}
		if (hl > *room || (void *)(b + hl) > c->end)
			return PARSE_ERR_IP6_EXT;
		*nexthdr = b[0];
		*room -= hl;
		c->pos = b + hl;
	}
	return ipv6_is_ext(*nexthdr) ? PARSE_ERR_IP6_EXT : 0;
}

/*
 * A program may walk the extension headers in a function of its own
 * (PARSE_IP6_EXT_WALK, with parse_ip6_ext()'s arguments and result): the
 * verifier then checks the walk once, not again for every state the
 * headers before it ended in.
 */
#ifdef PARSE_IP6_EXT_WALK
static __always_inline int PARSE_IP6_EXT_WALK(struct hdr_cursor *c, __u8 *nexthdr, __u32 *room);
#else
#define PARSE_IP6_EXT_WALK parse_ip6_ext
#endif

static __always_inline int parse_ipv6(struct hdr_cursor *c, bool tunnels)
{
	parse_ip6_t *ip6h = c->pos;
	__u32 plen;
	__u8 nexthdr;
	int r;

	if ((void *)(ip6h + 1) > c->end)
		return PARSE_ERR_IP;
	if (ip6h->version != 6)
		return PARSE_ERR_IP;
	plen = bpf_ntohs(ip6h->payload_len);
	if ((void *)(ip6h + 1) + plen > PARSE_LEN_END(c))
		return PARSE_ERR_IP;
	c->l3 = ip6h;
	c->l3_len = sizeof(*ip6h) + plen;
	c->pos = ip6h + 1;
	nexthdr = ip6h->nexthdr;
	r = PARSE_IP6_EXT_WALK(c, &nexthdr, &plen);
	if (r)
		return r;
	return parse_ip_payload(c, nexthdr, plen, true, tunnels);
}

/* One layer of packet: from Ethernet or from an IP header (a tunnel's inside). */
static __always_inline int parse_layer(struct hdr_cursor *c, int start, bool tunnels)
{
	__u16 proto;

	parse_settle(c);
	if (start == PARSE_INNER_ETH) {
		if (parse_ethhdr(c, &proto))
			return PARSE_ERR_ETH;
	} else {
		proto = start == PARSE_INNER_IP4 ? ETH_P_IP : ETH_P_IPV6;
	}
	if (proto == ETH_P_IP)
		return parse_ipv4(c, tunnels);
	if (proto == ETH_P_IPV6)
		return parse_ipv6(c, tunnels);
	return PARSE_OTHER;
}

/*
 * A frame from c->pos to c->end, the cursor left at what was found: through
 * at most one tunnel, whose inside is then the result (a tunnel inside a
 * tunnel is counted as the inner tunnel's packet, PARSE_UDP* or PARSE_OTHER).
 */
static __always_inline enum parse_result parse_frame(struct hdr_cursor *c)
{
	int r = parse_layer(c, PARSE_INNER_ETH, true);

	if (r < PARSE_INNER_ETH)
		return (enum parse_result)r;
	return (enum parse_result)parse_layer(c, r, false);
}

static __always_inline enum parse_result parse_packet(struct xdp_md *ctx, __u32 *layers)
{
	struct hdr_cursor c = {
		.start = (void *)(long)ctx->data,
		.pos = (void *)(long)ctx->data,
		.end = (void *)(long)ctx->data_end,
	};
	enum parse_result r = parse_frame(&c);

	*layers = c.layers;
	return r;
}

#endif
