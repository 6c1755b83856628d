// SPDX-License-Identifier: GPL-2.0
/*
 * The generator's frames of every kind, built whole and slowly: templates
 * and per-flow checksum deltas come from here, the hot path (pkt.h) only
 * patches them. Layout: docs/gen.md.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pkt/pkt.h"
#include "pkt/pkt_build.h"

#define ETH_TYPE_IPV4 0x0800
#define ETH_TYPE_IPV6 0x86dd
#define ETH_TYPE_8021Q 0x8100
#define ETH_TYPE_8021AD 0x88a8
#define ETH_TYPE_TEB 0x6558 /* transparent Ethernet bridging: GENEVE's inner Ethernet */
#define IPPROTO_GRE_NR 47
#define IPPROTO_IPIP_NR 4
#define IPPROTO_IPV6_NR 41
#define IPPROTO_ICMPV6_NR 58
#define TUN_HLEN 8 /* VXLAN and GENEVE (no options) headers */
#define GRE_HLEN 4

static unsigned int ip_hlen(enum pkt_family f)
{
	return f == PKT_IPV6 ? 40 : 20;
}

static unsigned int l4_hlen(enum pkt_proto p)
{
	return p == PKT_TCP ? 20 : 8;
}

static enum pkt_proto proto_of(const struct pkt_opts *o)
{
	return o->proto ? o->proto : PKT_UDP;
}

void pkt_opts_layout(const struct pkt_opts *o, struct pkt_layout *l)
{
	enum pkt_family in = o->src_ip.family;
	unsigned int off = PKT_ETH_HLEN + 4 * o->nvlan;

	memset(l, 0, sizeof(*l));
	l->proto = proto_of(o);
	l->ofamily = in;
	if (o->encap) {
		l->ofamily = o->outer_src.family ? o->outer_src.family : in;
		l->ol3_off = off;
		off += ip_hlen(l->ofamily);
		switch (o->encap) {
		case PKT_ENCAP_VXLAN:
		case PKT_ENCAP_GENEVE:
			l->ol4_off = off;
			off += 8 + TUN_HLEN + PKT_ETH_HLEN;
			break;
		case PKT_ENCAP_GRE:
			off += GRE_HLEN;
			break;
		default:
			break;
		}
	}
	l->l3_off = off;
	l->l4_off = off + ip_hlen(in);
	l->port_off = l->l4_off + (l->proto == PKT_ICMP ? 4 : 0);
	l->csum_off = l->l4_off + (l->proto == PKT_UDP ? 6 : l->proto == PKT_TCP ? 16 : 2);
	l->pay_off = l->l4_off + l4_hlen(l->proto);
}

unsigned int pkt_opts_min_size(const struct pkt_opts *o)
{
	struct pkt_layout l;

	pkt_opts_layout(o, &l);
	return l.pay_off + (o->no_stamp ? 0 : XDPSG_STAMP_SIZE);
}

static const char tcp_letters[] = "FSRPAUEC"; /* bit i of the flags byte */

int pkt_parse_tcp_flags(const char *s, __u8 *out, char *err, size_t errlen)
{
	const char *c;

	*out = 0;
	for (c = s; *c; c++) {
		const char *at = *c ? strchr(tcp_letters, *c) : NULL;

		if (!at) {
			PKT_SETERR(
				err, errlen,
				"--tcp-flags %s: '%c' is not a TCP flag; use letters from S A P R F U E C, e.g. S, SA or PA",
				s, *c);
			return -EINVAL;
		}
		*out |= (__u8)(1u << (at - tcp_letters));
	}
	if (!*s) {
		PKT_SETERR(err, errlen, "--tcp-flags is empty; give letters like S, SA or PA");
		return -EINVAL;
	}
	return 0;
}

int pkt_parse_encap(const char *s, enum pkt_encap *encap, __u32 *vni, char *err, size_t errlen)
{
	const char *colon = strchr(s, ':');
	size_t n = colon ? (size_t)(colon - s) : strlen(s);
	unsigned long v = 0;
	char *end;

	*vni = 0;
	if (n == 5 && !strncmp(s, "vxlan", 5))
		*encap = PKT_ENCAP_VXLAN;
	else if (n == 6 && !strncmp(s, "geneve", 6))
		*encap = PKT_ENCAP_GENEVE;
	else if (n == 3 && !strncmp(s, "gre", 3))
		*encap = PKT_ENCAP_GRE;
	else if (n == 4 && !strncmp(s, "ipip", 4))
		*encap = PKT_ENCAP_IPIP;
	else {
		PKT_SETERR(err, errlen,
			   "--encap %s: unknown tunnel; use vxlan[:VNI], geneve[:VNI], gre or ipip",
			   s);
		return -EINVAL;
	}
	if (!colon)
		return 0;
	if (*encap != PKT_ENCAP_VXLAN && *encap != PKT_ENCAP_GENEVE) {
		PKT_SETERR(err, errlen, "--encap %s: only vxlan and geneve take a VNI; drop ':%s'",
			   s, colon + 1);
		return -EINVAL;
	}
	errno = 0;
	v = strtoul(colon + 1, &end, 0);
	if (errno || end == colon + 1 || *end || colon[1] == '-' || v > PKT_VNI_MAX) {
		PKT_SETERR(err, errlen, "--encap %s: the VNI must be a number from 0 to %u", s,
			   PKT_VNI_MAX);
		return -EINVAL;
	}
	*vni = (__u32)v;
	return 0;
}

const char *pkt_proto_name(enum pkt_proto p)
{
	return p == PKT_TCP ? "tcp" : p == PKT_ICMP ? "icmp" : "udp";
}

const char *pkt_encap_name(enum pkt_encap e)
{
	static const char *const names[] = { "none", "vxlan", "geneve", "gre", "ipip" };

	return (unsigned int)e < 5 ? names[e] : "?";
}

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
	enum pkt_proto p = proto_of(o);

	memset(l4, 0, l4_hlen(p));
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
	unsigned int proto = ipproto[o->encap], after = l->ol3_off + ip_hlen(l->ofamily);
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

unsigned int pkt_gen_mark_len(const struct pkt_gen *g)
{
	unsigned int len = g->lay.pay_off + PKT_MARK_PAYLOAD;

	return len < PKT_SIZE_DEFAULT ? PKT_SIZE_DEFAULT : len;
}

unsigned int pkt_gen_mark(const struct pkt_gen *g, __u32 flow, __u64 ts_ns,
			  const struct xdpsg_mark *m, void *frame)
{
	unsigned int len = pkt_gen_mark_len(g);
	__u8 body[PKT_MARK_PAYLOAD];
	struct pkt_tuple t;

	pkt_flow_tuple(&g->opts, flow, &t);
	stamp_write_mark(body, &g->key, g->run, ts_ns, m);
	build(&g->opts, &g->lay, &t, frame, len, body, sizeof(body));
	return len;
}

void pkt_kind_str(const struct pkt_opts *o, char *buf, size_t len)
{
	struct pkt_layout l;
	size_t off;

	pkt_opts_layout(o, &l);
	off = (size_t)snprintf(buf, len, "%s %s", pkt_family_name(o->src_ip.family),
			       l.proto == PKT_TCP  ? "TCP" :
			       l.proto == PKT_ICMP ? "ICMP echo" :
						     "UDP");
	if (o->nvlan == 1 && off < len)
		off += (size_t)snprintf(buf + off, len - off, ", VLAN %u", o->vlan[0]);
	else if (o->nvlan == 2 && off < len)
		off += (size_t)snprintf(buf + off, len - off, ", QinQ %u.%u", o->vlan[0],
					o->vlan[1]);
	if (o->encap && off < len)
		snprintf(buf + off, len - off, ", in %s over %s", pkt_encap_name(o->encap),
			 pkt_family_name(l.ofamily));
}
