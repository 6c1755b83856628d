// SPDX-License-Identifier: GPL-2.0
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pkt.h"
#include "../bpf/parsing.h"
#include "stamp.h"

/* The layout in shared.h, held to its word. */
_Static_assert(sizeof(struct xdpsg_stamp) == XDPSG_STAMP_SIZE, "stamp size");
_Static_assert(offsetof(struct xdpsg_stamp, run) == XDPSG_STAMP_OFF_RUN, "run offset");
_Static_assert(offsetof(struct xdpsg_stamp, flow) == XDPSG_STAMP_OFF_FLOW, "flow offset");
_Static_assert(offsetof(struct xdpsg_stamp, seq) == XDPSG_STAMP_OFF_SEQ, "seq offset");
_Static_assert(offsetof(struct xdpsg_stamp, ts_lo) == XDPSG_STAMP_OFF_TS, "ts offset");

/* ICMP echo request and reply: types 8 and 0, ICMPv6 128 and 129. */
static bool icmp_is_echo(unsigned int proto, __u8 type)
{
	if (proto == PARSE_IPPROTO_ICMP)
		return type == 8 || type == 0;
	return type == 128 || type == 129;
}

int stamp_read(const void *frame, unsigned int len, struct stamp *out)
{
	const __u8 *p = frame;
	struct xdpsg_stamp st;
	struct pkt_info pi;
	int ret;

	ret = pkt_parse_l4(frame, len, &pi);
	if (ret)
		return ret;
	/*
	 * Only an echo's data is the sender's to fill: any other ICMP message
	 * carries what its type says (an error quotes someone's packet), never
	 * a stamp of ours.
	 */
	if ((pi.proto == PARSE_IPPROTO_ICMP || pi.proto == PARSE_IPPROTO_ICMPV6) &&
	    !icmp_is_echo(pi.proto, p[pi.l4_off]))
		return -ENOENT;
	if (pi.payload_len < XDPSG_STAMP_SIZE)
		return -ENOENT;
	memcpy(&st, (const __u8 *)frame + pi.payload_off, sizeof(st));
	if (le16toh(st.magic) != XDPSG_STAMP_MAGIC)
		return -ENOENT;
	out->run = le32toh(st.run);
	out->flow = le16toh(st.flow);
	out->seq = le32toh(st.seq);
	out->ts_ns = le32toh(st.ts_lo) | (__u64)le16toh(st.ts_hi) << 32;
	return 0;
}

void stamp_write(void *at, __u32 run, __u16 flow, __u32 seq, __u64 ts_ns)
{
	struct xdpsg_stamp st = {
		.magic = htole16(XDPSG_STAMP_MAGIC),
		.run = htole32(run),
		.flow = htole16(flow),
		.seq = htole32(seq),
		.ts_lo = htole32((__u32)ts_ns),
		.ts_hi = htole16((__u16)(ts_ns >> 32)),
	};

	memcpy(at, &st, sizeof(st));
}
