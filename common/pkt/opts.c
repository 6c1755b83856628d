// SPDX-License-Identifier: GPL-2.0
/*
 * The generator's options: defaults, the size rules, where each header of a
 * kind lands and which tuple flow i gets (opts.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "pkt/opts.h"

void pkt_opts_init(struct pkt_opts *opts)
{
	static const __u8 src_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	static const __u8 dst_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 };

	memset(opts, 0, sizeof(*opts));
	memcpy(opts->src_mac, src_mac, 6);
	memcpy(opts->dst_mac, dst_mac, 6);
	opts->src_ip = (struct pkt_ip_range){ PKT_IPV4, 0, 0x0a000001, 0x0a000001 };
	opts->dst_ip = (struct pkt_ip_range){ PKT_IPV4, 0, 0x0a000002, 0x0a000002 };
	opts->src_port = (struct pkt_port_range){ 1024, 1024 };
	opts->dst_port = (struct pkt_port_range){ 9, 9 };
	opts->size = PKT_SIZE_DEFAULT;
	opts->max_size = PKT_MAX_SIZE_DEFAULT;
	opts->flows = 1;
	opts->shards = 1;
}

/* Sizes and flows */

unsigned int pkt_hdr_len(enum pkt_family family)
{
	return family == PKT_IPV6 ? PKT_V6_HDR_LEN : PKT_V4_HDR_LEN;
}

unsigned int pkt_min_size(enum pkt_family family, bool stamp)
{
	return pkt_hdr_len(family) + (stamp ? XDPSG_STAMP_SIZE : 0);
}

int pkt_check_size(enum pkt_family family, bool stamp, unsigned int size, unsigned int max_size,
		   char *err, size_t errlen)
{
	unsigned int min = pkt_min_size(family, stamp);

	if (!max_size)
		max_size = PKT_MAX_SIZE_DEFAULT;
	if (max_size > PKT_SIZE_MAX)
		max_size = PKT_SIZE_MAX;
	if (size < min) {
		if (stamp)
			PKT_SETERR(
				err, errlen,
				"size %u is below the %u-byte minimum for %s UDP with a stamp; use -s %u or more, or --no-stamp",
				size, min, pkt_family_name(family), min);
		else
			PKT_SETERR(
				err, errlen,
				"size %u is below the %u-byte minimum for %s UDP headers; use -s %u or more",
				size, min, pkt_family_name(family), min);
		return -EINVAL;
	}
	if (size > max_size) {
		PKT_SETERR(
			err, errlen,
			"size %u is above the %u-byte maximum frame (MTU %u + 14); use -s %u or less, or raise the MTU",
			size, max_size, max_size - PKT_ETH_HLEN, max_size);
		return -EINVAL;
	}
	return 0;
}

static __u64 range_count(__u64 lo, __u64 hi)
{
	return hi - lo == UINT64_MAX ? UINT64_MAX : hi - lo + 1;
}

__u64 pkt_tuple_count(const struct pkt_opts *o)
{
	__u64 n[4] = {
		range_count(o->src_port.start, o->src_port.end),
		range_count(o->dst_port.start, o->dst_port.end),
		range_count(o->src_ip.lo_start, o->src_ip.lo_end),
		range_count(o->dst_ip.lo_start, o->dst_ip.lo_end),
	};
	__u64 total = 1;
	int i;

	for (i = 0; i < 4; i++) {
		total *= n[i] > PKT_FLOWS_MAX ? PKT_FLOWS_MAX + 1 : n[i];
		if (total > PKT_FLOWS_MAX)
			return PKT_FLOWS_MAX + 1;
	}
	return total;
}

static void put_addr(__u8 *out, const struct pkt_ip_range *r, __u64 lo)
{
	if (r->family == PKT_IPV6) {
		__u64 hi_be = htobe64(r->hi), lo_be = htobe64(lo);

		memcpy(out, &hi_be, 8);
		memcpy(out + 8, &lo_be, 8);
	} else {
		__u32 v = htobe32((__u32)lo);

		memcpy(out, &v, 4);
	}
}

void pkt_flow_tuple(const struct pkt_opts *o, __u32 flow, struct pkt_tuple *out)
{
	__u64 i = flow, n;

	memset(out, 0, sizeof(*out));
	out->family = o->src_ip.family;
	n = range_count(o->src_port.start, o->src_port.end);
	out->sport = (__u16)(o->src_port.start + i % n);
	i /= n;
	n = range_count(o->dst_port.start, o->dst_port.end);
	out->dport = (__u16)(o->dst_port.start + i % n);
	i /= n;
	n = range_count(o->src_ip.lo_start, o->src_ip.lo_end);
	put_addr(out->saddr, &o->src_ip, o->src_ip.lo_start + i % n);
	i /= n;
	n = range_count(o->dst_ip.lo_start, o->dst_ip.lo_end);
	put_addr(out->daddr, &o->dst_ip, o->dst_ip.lo_start + i % n);
}

void pkt_opts_layout(const struct pkt_opts *o, struct pkt_layout *l)
{
	enum pkt_family in = o->src_ip.family;
	unsigned int off = PKT_ETH_HLEN + 4 * o->nvlan;

	memset(l, 0, sizeof(*l));
	l->proto = pkt_opts_proto(o);
	l->ofamily = in;
	if (o->encap) {
		l->ofamily = o->outer_src.family ? o->outer_src.family : in;
		l->ol3_off = off;
		off += pkt_ip_hlen(l->ofamily);
		switch (o->encap) {
		case PKT_ENCAP_VXLAN:
		case PKT_ENCAP_GENEVE:
			l->ol4_off = off;
			off += 8 + PKT_TUN_HLEN + PKT_ETH_HLEN;
			break;
		case PKT_ENCAP_GRE:
			off += PKT_GRE_HLEN;
			break;
		default:
			break;
		}
	}
	l->l3_off = off;
	l->l4_off = off + pkt_ip_hlen(in);
	l->port_off = l->l4_off + (l->proto == PKT_ICMP ? 4 : 0);
	l->csum_off = l->l4_off + (l->proto == PKT_UDP ? 6 : l->proto == PKT_TCP ? 16 : 2);
	l->pay_off = l->l4_off + pkt_l4_hlen(l->proto);
}

unsigned int pkt_opts_min_size(const struct pkt_opts *o)
{
	struct pkt_layout l;

	pkt_opts_layout(o, &l);
	return l.pay_off + (o->no_stamp ? 0 : XDPSG_STAMP_SIZE);
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
