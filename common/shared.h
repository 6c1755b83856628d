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

/*
 * xdp-sink's in-kernel counters: one PERCPU_ARRAY entry per receive queue
 * (queues at or above XDPSG_MAX_QUEUES share the last slot), so each CPU
 * writes its own copy without atomics and bpftool prints the field names.
 */
#define XDPSG_MAX_QUEUES 64
#define XDPSG_STATS_SLOTS (XDPSG_MAX_QUEUES + 1)

struct sink_stats {
	__u64 packets; /* every packet the program saw */
	__u64 bytes;
	/* verdicts */
	__u64 drop;
	__u64 pass;
	__u64 tx;
	__u64 redirect; /* redirect accepted by the map lookup */
	__u64 redirect_err; /* no target in the devmap/xskmap slot */
	__u64 aborted;
	/* with --parse: what was found */
	__u64 udp4;
	__u64 udp6;
	__u64 other; /* valid, but not UDP over IPv4/IPv6 */
	/* with --parse: parse errors by reason */
	__u64 err_eth; /* shorter than an Ethernet (+VLAN) header */
	__u64 err_ip; /* truncated IP header, bad version or IHL < 5 */
	__u64 err_ip6_ext; /* IPv6 extension headers (not followed) */
	__u64 err_udp; /* truncated UDP header */
};

#endif
