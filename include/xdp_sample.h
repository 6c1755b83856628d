/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_XDP_SAMPLE_H
#define XDPSG_XDP_SAMPLE_H

/*
 * xdp-sink drop --sample N: what the drop program puts in its BPF ring
 * buffer for one frame in N, and its per-CPU counters. Shared by
 * bpf/xdp_sink.bpf.c (the writer) and user/sink/sample.c (the reader).
 */
#include <linux/types.h>

/* Bytes of a frame a sample can hold: longer snap lengths are cut to this. */
#define XDPSG_SAMPLE_MAX 2048
/* The ring buffer: about 4000 samples of the largest size. */
#define XDPSG_SAMPLE_RING (8U << 20)

struct xdpsg_sample {
	__u64 ts_ns; /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 len; /* the frame's length */
	__u32 caplen; /* bytes in data */
	__u8 data[XDPSG_SAMPLE_MAX];
};

/* Per CPU. */
struct xdpsg_sample_state {
	__u64 countdown; /* frames until the next sample */
	__u64 taken; /* samples put in the ring */
	__u64 lost; /* samples the full ring refused */
};

#endif
