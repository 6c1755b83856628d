/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xdp_sink.bpf.c's outage window for the redirect program (the lab's
 * 'blackhole' command; the maps' layouts are include/xdp_blackhole.h's).
 * Included by xdp_sink.bpf.c after shared.h.
 */
#ifndef XDPSG_BPF_SINK_BLACKHOLE_H
#define XDPSG_BPF_SINK_BLACKHOLE_H

#include <stdbool.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "xdp_blackhole.h"

/* redirect: the outage window the lab arms (xdp_blackhole.h), and what it dropped. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xdpsg_blackhole);
} blackhole SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xdpsg_blackhole_stats);
} blackhole_stats SEC(".maps");

/*
 * Inside the armed window: the frame is dropped (a drop verdict) and
 * counted in blackhole_stats. Unarmed, this costs a load and a branch: an
 * array lookup with a constant key is a pointer the verifier works out.
 */
static __always_inline bool blackholed(struct sink_stats *s)
{
	struct xdpsg_blackhole_stats *bs;
	struct xdpsg_blackhole *bh;
	__u32 key = 0;
	__u64 now;

	bh = bpf_map_lookup_elem(&blackhole, &key);
	if (!bh || !bh->end_ns)
		return false;
	now = bpf_ktime_get_ns();
	if (now < bh->start_ns || now >= bh->end_ns)
		return false;
	bs = bpf_map_lookup_elem(&blackhole_stats, &key);
	if (bs) {
		if (!bs->dropped)
			bs->first_ns = now;
		bs->dropped++;
		bs->last_ns = now;
	}
	if (s)
		s->drop++;
	return true;
}

#endif
