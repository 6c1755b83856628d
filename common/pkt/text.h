/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_PKT_TEXT_H
#define XDPSG_PKT_TEXT_H

/*
 * The generator's options as text: MAC addresses, IP and port ranges, IMIX
 * specifications, TCP flags and tunnels. Each returns 0 or -EINVAL, and on
 * error writes one line into err naming the problem and the fix.
 */
#include "pkt/opts.h"

/* "S", "SA", "PA": TCP flag letters S A P R F U E C into PKT_TCP_* bits. */
int pkt_text_tcp_flags(const char *s, __u8 *out, char *err, size_t errlen);
/* "vxlan", "vxlan:42", "geneve[:VNI]", "gre", "ipip"; VXLAN/GENEVE's VNI defaults to 0. */
int pkt_text_encap(const char *s, enum pkt_encap *encap, __u32 *vni, char *err, size_t errlen);
int pkt_text_mac(const char *s, __u8 mac[6], char *err, size_t errlen);
/* "10.0.0.1", "10.0.0.1-10.0.0.254", "fd00::1", "fd00::1-fd00::ff" */
int pkt_text_ip_range(const char *s, struct pkt_ip_range *out, char *err, size_t errlen);
/* "1000" or "1000-2000"; port 0 is refused */
int pkt_text_port_range(const char *s, struct pkt_port_range *out, char *err, size_t errlen);
/* "60:7,576:4,1500:1"; a missing weight (":W") means 1 */
int pkt_text_imix(const char *s, struct pkt_imix *out, char *err, size_t errlen);
/* PKT_IMIX_DEFAULT with its smallest size raised to min_size if that is larger. */
void pkt_imix_default(struct pkt_imix *out, unsigned int min_size);

#endif
