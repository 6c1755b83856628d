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
 * Where a plain frame's stamp is, or NULL: Ethernet with at most one VLAN tag,
 * IPv4 without options or a fragment, or IPv6 without extension headers, then
 * UDP or TCP, with room in their lengths and in this buffer for a stamp that
 * begins with the magic. The same place the sink's reader finds it
 * (parsing.h's walk, which a frame like this takes straight through: the magic
 * tells a stamped UDP stream from a VXLAN or GENEVE header, stamp.c checks
 * that); any other frame is the thread's to read. Not parsing.h's walk
 * itself: with its tunnels and extension headers inlined, the verifier took
 * about 0.3 s of CPU over the program at every start.
 */
static __always_inline __u8 *plain_stamp(struct xdp_md *ctx)
{
	__u8 *d = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end, *l3, *l4, *p;
	__u32 room, len;
	__u16 proto;
	__u8 next;

	if (d + 18 > end)
		return NULL;
	proto = (__u16)(d[12] << 8 | d[13]);
	l3 = d + 14;
	if (proto == ETH_P_8021Q || proto == ETH_P_8021AD) {
		proto = (__u16)(d[16] << 8 | d[17]);
		l3 = d + 18;
	}
	if (proto == ETH_P_IP) {
		if (l3 + 20 > end)
			return NULL;
		len = (__u32)l3[2] << 8 | l3[3];
		/* version 4, no options; not a fragment (MF or an offset) */
		if (l3[0] != 0x45 || (l3[6] & 0x3f) || l3[7] || len < 20 || len > (__u32)(end - l3))
			return NULL;
		room = len - 20;
		next = l3[9];
		l4 = l3 + 20;
	} else if (proto == ETH_P_IPV6) {
		if (l3 + 40 > end)
			return NULL;
		len = (__u32)l3[4] << 8 | l3[5];
		if ((l3[0] >> 4) != 6 || len > (__u32)(end - l3) - 40)
			return NULL;
		room = len;
		next = l3[6];
		l4 = l3 + 40;
	} else {
		return NULL;
	}
	if (next == IPPROTO_UDP) {
		if (l4 + 8 > end)
			return NULL;
		len = (__u32)l4[4] << 8 | l4[5];
		if (len < 8 + XDPSG_STAMP_SIZE || len > room)
			return NULL;
		p = l4 + 8;
	} else if (next == IPPROTO_TCP) {
		if (l4 + 20 > end)
			return NULL;
		len = (__u32)(l4[12] >> 4) * 4; /* the header's length */
		if (len < 20 || room < len + XDPSG_STAMP_SIZE)
			return NULL;
		p = l4 + len;
	} else {
		return NULL;
	}
	if (p + XDPSG_STAMP_SIZE > end || p[0] != XDPSG_STAMP_MAGIC)
		return NULL;
	return p;
}

#endif
