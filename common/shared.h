/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_SHARED_H
#define XDPSG_SHARED_H

/*
 * Types shared by the BPF programs and user space. Only uapi types here: this
 * header is compiled by clang -target bpf as well as by the host compiler.
 */
#include <linux/types.h>

/*
 * The stamp xdp-gen writes at the start of every UDP payload, and xdp-sink
 * reads. 18 bytes, so it fits the smallest IPv4 frame (60 bytes: 14 Ethernet +
 * 20 IPv4 + 8 UDP + 18). All fields little-endian. 'run' changes every time a
 * generator starts, so a sink tells a restart from loss or duplicates.
 */
#define XDPSG_STAMP_MAGIC 0x5853 /* "SX" on the wire, little-endian */
#define XDPSG_STAMP_SIZE 18

struct xdpsg_stamp {
	__u16 magic;
	__u16 run; /* generator run id */
	__u16 flow; /* flow index within the run */
	__u32 seq; /* per-flow sequence number, wraps */
	__u64 ts_ns; /* CLOCK_MONOTONIC at send */
} __attribute__((packed));

#endif
