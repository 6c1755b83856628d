/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_PKT_BUILD_H
#define XDPSG_PKT_BUILD_H

#include "pkt.h"

/*
 * The frame of tuple t, len bytes, laid out as l (pkt_opts_layout(o)): every
 * header, the stamp with flow, seq and ts 0, the payload pattern, and every
 * checksum computed in full. For pkt.c's templates and flow deltas.
 */
void pkt_build_frame(const struct pkt_opts *o, const struct pkt_layout *l,
		     const struct pkt_tuple *t, __u8 *p, unsigned int len);

#endif
