// SPDX-License-Identifier: GPL-2.0
/*
 * Reading frames: their headers by include/bpf/parsing.h's rule, and their
 * checksums recomputed in full (read.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

/* The IP headers' lengths are checked against the whole frame, of which a buffer may hold less. */
#define PARSE_COPY
#include "bpf/parsing.h"
#include "pkt/read.h"

#define IPPROTO_UDP_NR 17

/* Checksums */

__u64 pkt_csum_partial(const void *data, unsigned int len, __u64 sum)
{
	const __u8 *p = data;
	__u16 w;

	while (len >= 2) {
		memcpy(&w, p, 2);
		sum += w;
		p += 2;
		len -= 2;
	}
	if (len) {
		__u8 last[2] = { p[0], 0 };

		memcpy(&w, last, 2);
		sum += w;
	}
	return sum;
}

/* Pseudo header sum: addresses as in the frame, then protocol and UDP length. */
static __u64 pseudo_sum(const __u8 *frame, const struct pkt_info *pi)
{
	const __u8 *ip = frame + pi->l3_off;
	__u64 sum;

	if (pi->family == PKT_IPV4)
		sum = pkt_csum_partial(ip + 12, 8, 0);
	else
		sum = pkt_csum_partial(ip + 8, 32, 0);
	return sum + htons(IPPROTO_UDP_NR) + htons((__u16)pi->udp_len);
}

/*
 * The sink's XDP program and this reader apply one rule, include/bpf/parsing.h's,
 * to the same bytes: a frame the program counts as udp/tcp/icmp is one this
 * accepts, and no other (tests/unit/test_sink_prog.c checks both on the same
 * frames).
 */
_Static_assert(PKT_TUNNEL_LAYERS == (PARSE_L_VXLAN | PARSE_L_GENEVE | PARSE_L_GRE | PARSE_L_IPIP),
	       "read.h's tunnel bits are parsing.h's");

int pkt_parse_l4(const void *frame, unsigned int len, struct pkt_info *out)
{
	return pkt_parse_l4_part(frame, len, len, out);
}

int pkt_parse_l4_part(const void *frame, unsigned int len, unsigned int flen, struct pkt_info *out)
{
	struct hdr_cursor c = {
		.start = (void *)frame,
		.pos = (void *)frame,
		.end = (__u8 *)frame + len,
		.frame_end = (__u8 *)frame + (flen > len ? flen : len),
	};
	const __u8 *p = frame;
	enum parse_result r = parse_frame(&c);

	switch (r) {
	case PARSE_UDP4:
	case PARSE_TCP4:
	case PARSE_ICMP4:
		out->family = PKT_IPV4;
		break;
	case PARSE_UDP6:
	case PARSE_TCP6:
	case PARSE_ICMP6:
		out->family = PKT_IPV6;
		break;
	case PARSE_OTHER:
		return -ENOENT;
	default:
		return -EINVAL;
	}
	out->proto = r == PARSE_UDP4 || r == PARSE_UDP6 ? IPPROTO_UDP :
		     r == PARSE_TCP4 || r == PARSE_TCP6 ? PARSE_IPPROTO_TCP :
		     r == PARSE_ICMP4			? PARSE_IPPROTO_ICMP :
							  PARSE_IPPROTO_ICMPV6;
	out->layers = c.layers;
	out->l3_off = (unsigned int)((const __u8 *)c.l3 - p);
	out->l4_off = (unsigned int)((const __u8 *)c.l4 - p);
	out->l3_len = c.l3_len;
	out->payload_off = (unsigned int)((const __u8 *)c.payload - p);
	out->payload_len = c.l4_len - (out->payload_off - out->l4_off);
	out->udp_len = out->proto == IPPROTO_UDP ? c.l4_len : 0;
	return 0;
}

int pkt_parse_udp(const void *frame, unsigned int len, struct pkt_info *out)
{
	int ret = pkt_parse_l4(frame, len, out);

	if (ret)
		return ret;
	/* Inside a tunnel, rewriting the payload would break an outer checksum. */
	if (out->proto != IPPROTO_UDP || out->layers & PKT_TUNNEL_LAYERS)
		return -ENOENT;
	return 0;
}

int pkt_verify_checksums(const void *frame, unsigned int len)
{
	const __u8 *p = frame;
	struct pkt_info pi;
	__u16 stored;
	__u64 sum;
	int ret;

	ret = pkt_parse_udp(frame, len, &pi);
	if (ret == -ENOENT)
		return PKT_CSUM_NOT_UDP;
	if (ret)
		return PKT_CSUM_TRUNCATED;
	if (pi.family == PKT_IPV4 &&
	    pkt_csum_fold(pkt_csum_partial(p + pi.l3_off, pi.l4_off - pi.l3_off, 0)) != 0xffff)
		return PKT_CSUM_BAD_IP;
	memcpy(&stored, p + pi.l4_off + PKT_UDP_OFF_CSUM, 2);
	if (stored == 0)
		return pi.family == PKT_IPV4 ? PKT_CSUM_OK : PKT_CSUM_BAD_UDP;
	sum = pkt_csum_partial(p + pi.l4_off, pi.udp_len, pseudo_sum(p, &pi));
	return pkt_csum_fold(sum) == 0xffff ? PKT_CSUM_OK : PKT_CSUM_BAD_UDP;
}

const char *pkt_csum_str(int result)
{
	switch (result) {
	case PKT_CSUM_OK:
		return "ok";
	case PKT_CSUM_NOT_UDP:
		return "not an IPv4/IPv6 UDP packet";
	case PKT_CSUM_TRUNCATED:
		return "truncated: headers claim more than the frame holds";
	case PKT_CSUM_BAD_IP:
		return "bad IPv4 header checksum";
	case PKT_CSUM_BAD_UDP:
		return "bad UDP checksum";
	}
	return "unknown";
}
