// SPDX-License-Identifier: GPL-2.0
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pkt.h"
#include "stamp.h"

int stamp_read(const void *frame, unsigned int len, struct xdpsg_stamp *out)
{
	struct xdpsg_stamp st;
	struct pkt_info pi;
	int ret;

	ret = pkt_parse_udp(frame, len, &pi);
	if (ret)
		return ret;
	if (pi.udp_len - 8 < XDPSG_STAMP_SIZE)
		return -ENOENT;
	memcpy(&st, (const __u8 *)frame + pi.payload_off, sizeof(st));
	if (le16toh(st.magic) != XDPSG_STAMP_MAGIC)
		return -ENOENT;
	out->magic = XDPSG_STAMP_MAGIC;
	out->run = le16toh(st.run);
	out->flow = le16toh(st.flow);
	out->seq = le32toh(st.seq);
	out->ts_ns = le64toh(st.ts_ns);
	return 0;
}

void stamp_write(void *at, __u16 run, __u16 flow, __u32 seq, __u64 ts_ns)
{
	struct xdpsg_stamp st = {
		.magic = htole16(XDPSG_STAMP_MAGIC),
		.run = htole16(run),
		.flow = htole16(flow),
		.seq = htole32(seq),
		.ts_ns = htole64(ts_ns),
	};

	memcpy(at, &st, sizeof(st));
}
