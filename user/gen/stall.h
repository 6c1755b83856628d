/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_STALL_H
#define XDPSG_STALL_H

#include <stdbool.h>
#include <linux/types.h>

/*
 * A transmit path is stalled when its qdisc holds packets (backlog > 0) but
 * sends none for a whole window: a stopped TX queue that is never woken. The
 * detector is fed samples (time, packets the qdisc sent, its backlog) and
 * answers whether the path has been stuck for at least the window.
 */
struct stall {
	__u64 window_ns;
	__u64 last_sent; /* qdisc sent counter at the last progress */
	__u64 since_ns; /* when the backlog was first seen stuck; 0: not stuck */
	bool primed;
};

void stall_init(struct stall *s, __u64 window_ns);
/* true when backlog > 0 and 'sent' has not moved for window_ns */
bool stall_update(struct stall *s, __u64 now_ns, __u64 sent, __u64 backlog);
/* How long the path has been stuck so far (0 when it is not). */
__u64 stall_duration(const struct stall *s, __u64 now_ns);

#endif
