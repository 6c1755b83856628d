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

/* A stamp as read, fields in host order. */
struct stamp {
	__u32 run;
	__u16 flow;
	__u32 seq;
	__u64 ts_ns; /* the low 48 bits sent; stamp_time() restores the rest */
};

#define STAMP_TS_MASK ((1ULL << XDPSG_STAMP_TS_BITS) - 1)

/* Write a whole stamp at 'at', magic included. */
void stamp_write(void *at, __u32 run, __u16 flow, __u32 seq, __u64 ts_ns);

/*
 * Per frame: fill flow, seq and time into a stamp written with those three
 * zero (the template's). Returns what the new bytes add to the UDP checksum
 * (16-bit words, not folded), so the caller fixes it incrementally.
 */
static inline __u64 stamp_patch(void *at, __u16 flow, __u32 seq, __u64 ts_ns)
{
	__u8 *st = at;
	__u16 flow_le = htole16(flow), ts_hi = htole16((__u16)(ts_ns >> 32));
	__u32 seq_le = htole32(seq), ts_lo = htole32((__u32)ts_ns);

	memcpy(st + XDPSG_STAMP_OFF_FLOW, &flow_le, 2);
	memcpy(st + XDPSG_STAMP_OFF_SEQ, &seq_le, 4);
	memcpy(st + XDPSG_STAMP_OFF_TS, &ts_lo, 4);
	memcpy(st + XDPSG_STAMP_OFF_TS + 4, &ts_hi, 2);
	return flow_le + (__u64)seq_le + ts_lo + ts_hi;
}

/*
 * The full send time of a stamp's 48-bit ts, read at 'now' on the same
 * clock: the time within 2^47 ns (39 hours) of now whose low bits match. A
 * time after 'now' comes back as such (the caller decides what a send time in
 * the future means).
 */
static inline __u64 stamp_time(__u64 ts48, __u64 now)
{
	__u64 back = (now - ts48) & STAMP_TS_MASK;

	if (back < (1ULL << (XDPSG_STAMP_TS_BITS - 1)))
		return now - back;
	return now + ((ts48 - now) & STAMP_TS_MASK);
}

/*
 * Find the stamp by bpf/parsing.h's rule (pkt_parse_l4(): up to two VLAN
 * tags, IPv6 extension headers, one tunnel looked through) at the start of
 * the L4 payload: UDP or TCP data, or the data of an ICMP/ICMPv6 echo
 * request or reply. Fills out with host-order fields and returns 0 if the
 * frame carries a stamp; -ENOENT for a foreign frame (another protocol, an
 * ICMP message that is no echo, a payload too short for a stamp, wrong
 * magic); -EINVAL for a truncated one (headers claim more than the frame
 * holds). The sink counts both as "foreign".
 */
int stamp_read(const void *frame, unsigned int len, struct stamp *out);

#endif
