/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_XDP_BLACKHOLE_H
#define XDPSG_XDP_BLACKHOLE_H

/*
 * xdp-sink redirect's outage window (the lab's 'blackhole' command): while
 * the kernel's CLOCK_MONOTONIC (bpf_ktime_get_ns()) is in [start_ns, end_ns),
 * every frame is dropped, and counted both as a drop verdict and here. The
 * window lives in the one entry of the pinned map 'blackhole'; the counters
 * per CPU in 'blackhole_stats'. Shared by bpf/xdp_sink.bpf.c (the program)
 * and testenv/xdpsg/blackhole.py (which arms the window and reads the
 * counters), whose struct formats must follow these layouts.
 */
#include <linux/types.h>

struct xdpsg_blackhole {
	__u64 start_ns; /* the window opens: CLOCK_MONOTONIC of the host's kernel */
	__u64 end_ns; /* and closes (not included); 0: no window */
};

/* Per CPU; zeroed by whoever arms the next window. */
struct xdpsg_blackhole_stats {
	__u64 dropped; /* frames the window dropped */
	__u64 first_ns; /* when the first of them arrived; 0: none */
	__u64 last_ns; /* and the last */
};

#endif
