/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_TEST_PKT_CHECK_H
#define XDPSG_TEST_PKT_CHECK_H

/*
 * Every checksum of a generated frame, recomputed in full from the bytes:
 * the outer IPv4 header and UDP (a tunnel's, or the packet's own), then the
 * inner packet pkt_parse_l4() finds: its IPv4 header and its UDP, TCP,
 * ICMP or ICMPv6 checksum. NULL when all are right, else which is wrong.
 */
#include <arpa/inet.h>
#include <string.h>

#include "pkt/gen.h"

static inline unsigned int pc_get16(const __u8 *p)
{
	return (unsigned int)p[0] << 8 | p[1];
}

static inline bool pc_sum_ok(const __u8 *p, unsigned int n, __u64 sum)
{
	return pkt_csum_fold(pkt_csum_partial(p, n, sum)) == 0xffff;
}

/* The pseudo header of the IP header at ip, for an L4 segment of len bytes. */
static inline __u64 pc_pseudo(const __u8 *ip, bool v6, unsigned int proto, unsigned int len)
{
	__u64 sum = v6 ? pkt_csum_partial(ip + 8, 32, 0) : pkt_csum_partial(ip + 12, 8, 0);

	return sum + htons((__u16)proto) + htons((__u16)len);
}

static inline const char *pkt_check_csums(const __u8 *f, unsigned int len)
{
	unsigned int off = 12, type, proto, l4len, ihl;
	struct pkt_info pi;
	const __u8 *ip, *l4;

	while (pc_get16(f + off) == 0x8100 || pc_get16(f + off) == 0x88a8)
		off += 4;
	type = pc_get16(f + off);
	ip = f + off + 2;
	if (type == 0x0800) {
		ihl = (ip[0] & 15) * 4;
		if (!pc_sum_ok(ip, ihl, 0))
			return "outer IPv4 header checksum";
		if (ip[9] == 17) {
			l4len = pc_get16(ip + 2) - ihl;
			if (pc_get16(ip + ihl + 6) &&
			    !pc_sum_ok(ip + ihl, l4len, pc_pseudo(ip, false, 17, l4len)))
				return "outer UDP checksum (IPv4)";
		}
	} else if (type == 0x86dd && ip[6] == 17) {
		l4len = pc_get16(ip + 4);
		if (!pc_get16(ip + 40 + 6) ||
		    !pc_sum_ok(ip + 40, l4len, pc_pseudo(ip, true, 17, l4len)))
			return "outer UDP checksum (IPv6)";
	}
	if (pkt_parse_l4(f, len, &pi))
		return "pkt_parse_l4 refused the frame";
	ip = f + pi.l3_off;
	l4 = f + pi.l4_off;
	l4len = pi.l3_len - (pi.l4_off - pi.l3_off);
	if (pi.family == PKT_IPV4 && !pc_sum_ok(ip, pi.l4_off - pi.l3_off, 0))
		return "inner IPv4 header checksum";
	proto = pi.proto;
	if (proto == 1) /* ICMPv4: no pseudo header */
		return pc_sum_ok(l4, l4len, 0) ? NULL : "ICMP checksum";
	if (proto == 17 && pi.family == PKT_IPV4 && !pc_get16(l4 + 6))
		return NULL;
	return pc_sum_ok(l4, l4len, pc_pseudo(ip, pi.family == PKT_IPV6, proto, l4len)) ?
		       NULL :
		       "L4 checksum (UDP, TCP or ICMPv6)";
}

#endif
