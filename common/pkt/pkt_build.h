/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_PKT_BUILD_H
#define XDPSG_PKT_BUILD_H

#include "pkt/pkt.h"

/*
 * The frame of tuple t, len bytes, laid out as l (pkt_opts_layout(o)): every
 * header, the stamp with flow, seq and ts 0, the payload pattern, and every
 * checksum computed in full. For pkt.c's templates and flow deltas.
 */
void pkt_build_frame(const struct pkt_opts *o, const struct pkt_layout *l,
		     const struct pkt_tuple *t, __u8 *p, unsigned int len);

/* "IPv4 TCP, VLAN 100, in vxlan over IPv6": what the frames are, for the start line. */
void pkt_kind_str(const struct pkt_opts *o, char *buf, size_t len);

#endif
