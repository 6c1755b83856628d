/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_PKT_BUILD_H
#define XDPSG_PKT_BUILD_H

/*
 * Frames built whole and slowly, every length and checksum computed in full:
 * the generator's templates and per-flow deltas, marks, and a replayed
 * frame given a new payload. The hot path (gen.h) only patches them.
 */
#include <linux/types.h>
#include "pkt/opts.h"
#include "pkt/read.h"

/*
 * The frame of tuple t, len bytes, laid out as l (pkt_opts_layout(o)): every
 * header, the stamp with flow, seq and ts 0, the payload pattern, and every
 * checksum computed in full. For gen.c's templates and flow deltas.
 */
void pkt_build_frame(const struct pkt_opts *o, const struct pkt_layout *l,
		     const struct pkt_tuple *t, __u8 *p, unsigned int len);

/* The same frame with payload (plen bytes) as the start of its L4 payload instead of a stamp. */
void pkt_build_frame_payload(const struct pkt_opts *o, const struct pkt_layout *l,
			     const struct pkt_tuple *t, __u8 *p, unsigned int len,
			     const void *payload, unsigned int plen);

/* The tunnel's outer source port for the inner flow t (host order; see PKT_TUNNEL_SPORT_LO). */
__u16 pkt_tunnel_sport(const struct pkt_tuple *t);

/*
 * The headers of a UDP frame that pkt_parse_udp() read (pi), with payload
 * (plen bytes) as its new UDP payload, into out: the IP and UDP lengths,
 * the IPv4 header checksum and the UDP checksum made right (a replayed
 * file's frame turned into a mark). Returns the length, or 0 if it would
 * not fit in room.
 */
unsigned int pkt_udp_repayload(const void *frame, const struct pkt_info *pi, const void *payload,
			       unsigned int plen, void *out, unsigned int room);

#endif
