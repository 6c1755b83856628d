/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_STAMP_H
#define XDPSG_STAMP_H

/*
 * The stamp, both ways: xdp-gen writes it (stamp_write() once per template,
 * stamp_patch() per frame on the hot path), xdp-sink reads it (stamp_read()).
 * Its layout is struct xdpsg_stamp in shared.h, which the BPF writer
 * (bpf/xdp_gen.bpf.c) includes too. What the sink does with the sequence
 * numbers is seqtrack.h's; latency histograms are hist.h's.
 */
#include <endian.h>
#include <stddef.h>
#include <string.h>
#include <stdbool.h>
#include <linux/types.h>

#include "shared.h"

/* Write a whole stamp (host-order fields) at 'at', little-endian, magic included. */
void stamp_write(void *at, __u16 run, __u16 flow, __u32 seq, __u64 ts_ns);

/*
 * Per frame: fill flow, seq and time into a stamp written with those three
 * zero (the template's). Returns what the new bytes add to the UDP checksum
 * (16-bit words, not folded), so the caller fixes it incrementally.
 */
static inline __u64 stamp_patch(void *at, __u16 flow, __u32 seq, __u64 ts_ns)
{
	__u8 *st = at;
	__u16 flow_le = htole16(flow);
	__u32 seq_le = htole32(seq);
	__u64 ts_le = htole64(ts_ns);

	memcpy(st + offsetof(struct xdpsg_stamp, flow), &flow_le, 2);
	memcpy(st + offsetof(struct xdpsg_stamp, seq), &seq_le, 4);
	memcpy(st + offsetof(struct xdpsg_stamp, ts_ns), &ts_le, 8);
	return flow_le + (__u64)seq_le + (ts_le & 0xffffffffULL) + (ts_le >> 32);
}

/*
 * Parse Ethernet (one 802.1Q tag tolerated), IPv4 (options honoured, no
 * fragments) or IPv6 (no extension headers), UDP, then the stamp at the start
 * of the UDP payload. Fills out with host-order fields and returns 0 if the
 * frame carries a stamp; -ENOENT for a foreign frame (not UDP, payload too
 * short for a stamp, wrong magic); -EINVAL for a truncated one (headers claim
 * more than the frame holds). The sink counts both as "foreign".
 */
int stamp_read(const void *frame, unsigned int len, struct xdpsg_stamp *out);

#endif
