/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xdp_sink.bpf.c's walk to a plain frame's stamp, for xdp-sink xsk's records
 * (struct xdpsg_xsk_rec in shared.h). Included by xdp_sink.bpf.c after
 * shared.h; tests/unit/test_sink_records.c checks it against the reader.
 */
#ifndef XDPSG_BPF_SINK_RECORDS_H
#define XDPSG_BPF_SINK_RECORDS_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <bpf/bpf_helpers.h>

/*
 * Where a plain frame's stamp is, or NULL: Ethernet, IPv4 without options or a
 * fragment, or IPv6 without extension headers, then UDP, with room in its
 * length and in this buffer for a stamp that begins with the magic. The same
 * place the sink's reader finds it (parsing.h's walk, which a frame like this
 * takes straight through: the magic tells a stamped UDP stream from a VXLAN or
 * GENEVE header, stamp.c checks that); any other frame is the thread's to
 * read. Not parsing.h's walk itself: with its tunnels and extension headers
 * the verifier takes hundreds of ms over it at every start.
 */
static __always_inline __u8 *plain_stamp(struct xdp_md *ctx)
{
	__u8 *d = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end, *u;
	__u32 room, ulen;
	__u16 proto;

	if (d + 14 + 20 + 8 + XDPSG_STAMP_SIZE > end)
		return NULL;
	proto = (__u16)(d[12] << 8 | d[13]);
	if (proto == ETH_P_IP) {
		__u32 tot = (__u32)d[16] << 8 | d[17];

		/* version 4, no options; not a fragment (MF or an offset) */
		if (d[14] != 0x45 || d[23] != IPPROTO_UDP || (d[20] & 0x3f) || d[21])
			return NULL;
		if (tot < 20 || tot > (__u32)(end - d) - 14)
			return NULL;
		room = tot - 20;
		u = d + 14 + 20;
	} else if (proto == ETH_P_IPV6) {
		__u32 plen = (__u32)d[18] << 8 | d[19];

		if (d + 14 + 40 + 8 + XDPSG_STAMP_SIZE > end || (d[14] >> 4) != 6 ||
		    d[20] != IPPROTO_UDP || plen > (__u32)(end - d) - 54)
			return NULL;
		room = plen;
		u = d + 14 + 40;
	} else {
		return NULL;
	}
	ulen = (__u32)u[4] << 8 | u[5];
	if (ulen < 8 + XDPSG_STAMP_SIZE || ulen > room || u[8] != XDPSG_STAMP_MAGIC)
		return NULL;
	return u + 8;
}

#endif
