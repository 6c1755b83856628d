// SPDX-License-Identifier: GPL-2.0
/*
 * The generator's frames of every kind, built whole and slowly: templates
 * and per-flow checksum deltas come from here, the hot path (gen.h) only
 * patches them. Layout: docs/gen.md.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pkt/build.h"
#include "pkt/stamp.h"

#define IPPROTO_UDP_NR 17
#define ETH_TYPE_IPV4 0x0800
#define ETH_TYPE_IPV6 0x86dd
#define ETH_TYPE_8021Q 0x8100
#define ETH_TYPE_8021AD 0x88a8
#define ETH_TYPE_TEB 0x6558 /* transparent Ethernet bridging: GENEVE's inner Ethernet */
#define IPPROTO_GRE_NR 47
#define IPPROTO_IPIP_NR 4
#define IPPROTO_IPV6_NR 41
#define IPPROTO_ICMPV6_NR 58

static void put16(__u8 *p, unsigned int v)
{
	__u16 w = htons((__u16)v);

	memcpy(p, &w, 2);
}

static void put32(__u8 *p, __u32 v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

/* Ethernet with the tags; returns the offset after it. */
static unsigned int put_eth(__u8 *p, const struct pkt_opts *o, unsigned int ntag,
			    enum pkt_family next)
{
	unsigned int off = 12, i;

	memcpy(p, o->dst_mac, 6);
	memcpy(p + 6, o->src_mac, 6);
	for (i = 0; i < ntag; i++) {
		put16(p + off, ntag == 2 && i == 0 ? ETH_TYPE_8021AD : ETH_TYPE_8021Q);
		put16(p + off + 2, (unsigned int)(o->vlan_prio & 7) << 13 | (o->vlan[i] & 0xfff));
		off += 4;
	}
	put16(p + off, next == PKT_IPV6 ? ETH_TYPE_IPV6 : ETH_TYPE_IPV4);
	return off + 2;
}

/* An IP header whose packet runs to the frame's end (len). */
static void put_ip(__u8 *ip, enum pkt_family f, unsigned int proto, const __u8 *saddr,
		   const __u8 *daddr, unsigned int plen)
{
	__u16 csum;

	if (f == PKT_IPV6) {
		ip[0] = 0x60; /* version 6, traffic class 0, flow label 0 */
		ip[1] = ip[2] = ip[3] = 0;
		put16(ip + 4, plen - 40);
		ip[6] = (__u8)proto;
		ip[7] = 64; /* hop limit */
		memcpy(ip + 8, saddr, 16);
		memcpy(ip + 24, daddr, 16);
		return;
	}
	ip[0] = 0x45;
	ip[1] = 0;
	put16(ip + 2, plen);
	ip[4] = ip[5] = 0; /* id: DF is set, so any value will do */
	ip[6] = 0x40; /* DF */
	ip[7] = 0;
	ip[8] = 64; /* TTL */
	ip[9] = (__u8)proto;
	ip[10] = ip[11] = 0;
	memcpy(ip + 12, saddr, 4);
	memcpy(ip + 16, daddr, 4);
	csum = (__u16)~pkt_csum_fold(pkt_csum_partial(ip, 20, 0));
	memcpy(ip + 10, &csum, 2);
}

/* Ones'-complement sum of an IP pseudo header (addresses, protocol, length). */
static __u64 pseudo(const __u8 *ip, enum pkt_family f, unsigned int proto, unsigned int len)
{
	__u64 sum = f == PKT_IPV6 ? pkt_csum_partial(ip + 8, 32, 0) :
				    pkt_csum_partial(ip + 12, 8, 0);

	return sum + htons((__u16)proto) + htons((__u16)len);
}

/* The checksum at p + csum_off over [from, len), plus sum; a computed 0 is stored as 0xffff. */
static void put_csum(__u8 *p, unsigned int from, unsigned int len, unsigned int csum_off, __u64 sum)
{
	__u16 csum = (__u16)~pkt_csum_fold(pkt_csum_partial(p + from, len - from, sum));

	if (csum == 0)
		csum = 0xffff;
	memcpy(p + csum_off, &csum, 2);
}

static unsigned int ip_proto_num(enum pkt_family f, enum pkt_proto p)
{
	return p == PKT_ICMP && f == PKT_IPV6 ? IPPROTO_ICMPV6_NR : (unsigned int)p;
}

/* The L4 header with its checksum 0; ports (or ICMP id and seq) from t. */
static void put_l4(__u8 *l4, const struct pkt_opts *o, const struct pkt_tuple *t,
		   unsigned int l4len)
{
	enum pkt_proto p = pkt_opts_proto(o);

	memset(l4, 0, pkt_l4_hlen(p));
	if (p == PKT_ICMP) {
		l4[0] = t->family == PKT_IPV6 ? 128 : 8; /* echo request */
		put16(l4 + 4, t->sport);
		put16(l4 + 6, t->dport);
		return;
	}
	put16(l4, t->sport);
	put16(l4 + 2, t->dport);
	if (p == PKT_UDP) {
		put16(l4 + 4, l4len);
		return;
	}
	put32(l4 + 4, PKT_TCP_SEQ);
	put32(l4 + 8, o->tcp_flags & PKT_TCP_ACK ? 1 : 0);
	l4[12] = 5 << 4; /* data offset: 20 bytes, no options */
	l4[13] = o->tcp_flags;
	put16(l4 + 14, PKT_TCP_WINDOW);
}

static __u8 *addr_of(__u8 *buf, const struct pkt_ip_range *r)
{
	if (r->family == PKT_IPV6) {
		__u64 hi = htobe64(r->hi), lo = htobe64(r->lo_start);

		memcpy(buf, &hi, 8);
		memcpy(buf + 8, &lo, 8);
	} else {
		put32(buf, (__u32)r->lo_start);
	}
	return buf;
}

/* The tunnel's outer headers, between the tags and the inner packet. */
/*
 * FNV-1a over the inner addresses and ports, folded to 14 bits: any fixed
 * hash would do; what matters is that it depends on the whole tuple only.
 */
__u16 pkt_tunnel_sport(const struct pkt_tuple *t)
{
	unsigned int i, n = t->family == PKT_IPV6 ? 16 : 4;
	__u32 h = 2166136261u;
	__u8 b[36];

	memcpy(b, t->saddr, n);
	memcpy(b + n, t->daddr, n);
	put16(b + 2 * n, t->sport);
	put16(b + 2 * n + 2, t->dport);
	for (i = 0; i < 2 * n + 4; i++)
		h = (h ^ b[i]) * 16777619u;
	h ^= h >> 16;
	return (__u16)(PKT_TUNNEL_SPORT_LO + h % PKT_TUNNEL_SPORT_N);
}

static void put_outer(__u8 *p, const struct pkt_opts *o, const struct pkt_layout *l,
		      const struct pkt_tuple *t, unsigned int len)
{
	static const unsigned int ipproto[] = { 0, 17, 17, IPPROTO_GRE_NR, 0 };
	enum pkt_family in = o->src_ip.family;
	unsigned int proto = ipproto[o->encap], after = l->ol3_off + pkt_ip_hlen(l->ofamily);
	__u8 s[16], d[16];

	if (o->encap == PKT_ENCAP_IPIP)
		proto = in == PKT_IPV6 ? IPPROTO_IPV6_NR : IPPROTO_IPIP_NR;
	/* Without outer addresses, the inner ones' first (the tunnel's ends are the hosts). */
	put_ip(p + l->ol3_off, l->ofamily, proto,
	       addr_of(s, o->outer_src.family ? &o->outer_src : &o->src_ip),
	       addr_of(d, o->outer_dst.family ? &o->outer_dst : &o->dst_ip), len - l->ol3_off);
	if (o->encap == PKT_ENCAP_GRE) {
		put16(p + after, 0); /* no checksum, key or sequence number; version 0 */
		put16(p + after + 2, in == PKT_IPV6 ? ETH_TYPE_IPV6 : ETH_TYPE_IPV4);
		return;
	}
	if (!l->ol4_off)
		return;
	put16(p + after, pkt_tunnel_sport(t));
	put16(p + after + 2, o->encap == PKT_ENCAP_VXLAN ? PKT_VXLAN_PORT : PKT_GENEVE_PORT);
	put16(p + after + 4, len - after);
	put16(p + after + 6, 0);
	if (o->encap == PKT_ENCAP_VXLAN) {
		put32(p + after + 8, 0x08000000); /* flags: the VNI is valid */
	} else {
		put16(p + after + 8, 0); /* version 0, no options, no flags */
		put16(p + after + 10, ETH_TYPE_TEB);
	}
	put32(p + after + 12, o->vni << 8);
	put_eth(p + after + 16, o, 0, in);
}

/*
 * Every header, then the L4 payload: payload (plen bytes) if given, else the
 * template's stamp (unless no_stamp); the pattern to the end; every checksum.
 */
static void build(const struct pkt_opts *o, const struct pkt_layout *l, const struct pkt_tuple *t,
		  __u8 *p, unsigned int len, const void *payload, unsigned int plen)
{
	enum pkt_family f = t->family;
	unsigned int pay = l->pay_off, i, proto = ip_proto_num(f, l->proto);
	__u8 *ip = p + l->l3_off;

	put_eth(p, o, o->nvlan, o->encap ? l->ofamily : f);
	if (o->encap)
		put_outer(p, o, l, t, len);
	put_ip(ip, f, proto, t->saddr, t->daddr, len - l->l3_off);
	put_l4(p + l->l4_off, o, t, len - l->l4_off);
	if (payload) {
		memcpy(p + pay, payload, plen);
		pay += plen;
	} else if (!o->no_stamp) {
		stamp_write_run(p + pay, o->run);
		pay += XDPSG_STAMP_SIZE;
	}
	for (i = pay; i < len; i++)
		p[i] = PKT_PATTERN_BYTE(i);
	/* ICMPv4 has no pseudo header; UDP, TCP and ICMPv6 do. */
	put_csum(p, l->l4_off, len, l->csum_off,
		 f == PKT_IPV4 && l->proto == PKT_ICMP ? 0 : pseudo(ip, f, proto, len - l->l4_off));
	if (l->ol4_off)
		put_csum(p, l->ol4_off, len, l->ol4_off + PKT_UDP_OFF_CSUM,
			 pseudo(p + l->ol3_off, l->ofamily, 17, len - l->ol4_off));
}

void pkt_build_frame(const struct pkt_opts *o, const struct pkt_layout *l,
		     const struct pkt_tuple *t, __u8 *p, unsigned int len)
{
	build(o, l, t, p, len, NULL, 0);
}

void pkt_build_frame_payload(const struct pkt_opts *o, const struct pkt_layout *l,
			     const struct pkt_tuple *t, __u8 *p, unsigned int len,
			     const void *payload, unsigned int plen)
{
	build(o, l, t, p, len, payload, plen);
}

unsigned int pkt_udp_repayload(const void *frame, const struct pkt_info *pi, const void *payload,
			       unsigned int plen, void *out, unsigned int room)
{
	unsigned int len = pi->payload_off + plen, l4 = pi->l4_off;
	__u8 *p = out, *ip = p + pi->l3_off;
	__u16 v, csum;
	__u64 sum;

	if (len > room || pi->payload_off != l4 + 8)
		return 0;
	memcpy(p, frame, pi->payload_off);
	memcpy(p + pi->payload_off, payload, plen);
	if (pi->family == PKT_IPV4) {
		unsigned int ihl = (ip[0] & 0xf) * 4;

		v = htons((__u16)(len - pi->l3_off));
		memcpy(ip + 2, &v, 2);
		memset(ip + 10, 0, 2);
		csum = (__u16)~pkt_csum_fold(pkt_csum_partial(ip, ihl, 0));
		memcpy(ip + 10, &csum, 2);
		sum = pkt_csum_partial(ip + 12, 8, 0);
	} else {
		v = htons((__u16)(len - pi->l3_off - 40));
		memcpy(ip + 4, &v, 2);
		sum = pkt_csum_partial(ip + 8, 32, 0);
	}
	v = htons((__u16)(len - l4));
	memcpy(p + l4 + 4, &v, 2);
	memset(p + l4 + PKT_UDP_OFF_CSUM, 0, 2);
	sum += htons(IPPROTO_UDP_NR) + v;
	csum = (__u16)~pkt_csum_fold(pkt_csum_partial(p + l4, len - l4, sum));
	if (!csum)
		csum = 0xffff;
	memcpy(p + l4 + PKT_UDP_OFF_CSUM, &csum, 2);
	return len;
}
