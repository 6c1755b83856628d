// SPDX-License-Identifier: GPL-2.0
/*
 * xdp-gen's kernel mode: run through BPF_PROG_RUN with
 * BPF_F_TEST_XDP_LIVE_FRAMES, each run turns the input frame (the largest
 * template, built by user space with pkt/gen.h) into the next packet and
 * redirects it out of ifindex_out (through tx_port). The bytes are those pkt_gen_write_tmpl()
 * writes: same flow order, size sequence, stamps and checksums.
 *
 * Live-frame pages keep what the previous packet left in them, so every
 * per-packet field is written each time and the checksums start from the
 * per-size base values plus per-flow deltas, never from the frame.
 */
#include <stdbool.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "bpf/parsing.h"
#include "shared.h"
#include "stamp_tag.h"

/* Shared by every program below, in this order: each uses those before it. */
#include "gen_frame.h"
#include "gen_streams.h"
#include "gen_marks.h"
#include "gen_tp.h"

SEC("xdp")
int xdp_gen(struct xdp_md *ctx)
{
	struct gen_sched *s = NULL;
	const struct gen_size *sz;
	const struct gen_flow *fl;
	void *data, *data_end;
	struct gen_cpu *c;
	__u32 key = 0, flow;
	int t, ret;
	long len;
	bool ok;

	c = bpf_map_lookup_elem(&cpu_state, &key);
	if (!c)
		return XDP_ABORTED;
	if (streamed) {
		s = bpf_map_lookup_elem(&sched, &key);
		if (!s)
			return XDP_ABORTED;
		if (!stream_may_send(c, s))
			return XDP_DROP;
		if (c->fixed)
			return send_fixed_stream(ctx, c, s);
	} else {
		if (c->rate && !due_at(c, bpf_ktime_get_ns()))
			return XDP_DROP; /* not due: this run sends nothing */
		if (c->fixed)
			return send_fixed(ctx, c);
	}
	flow = next_flow(c);
	t = next_size(c);
	if (t < 0)
		return XDP_ABORTED;
	key = t;
	sz = bpf_map_lookup_elem(&sizes, &key);
	fl = bpf_map_lookup_elem(&flows, &flow);
	if (!sz || !fl)
		return XDP_ABORTED;

	/* Smaller sizes are the largest template cut short; never grow. */
	len = ctx->data_end - ctx->data;
	if (sz->len < len) {
		if (bpf_xdp_adjust_tail(ctx, (int)sz->len - (int)len))
			return XDP_ABORTED;
		len = sz->len;
	}
	if (streamed && !copy_tmpl(ctx, len))
		return XDP_ABORTED;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	if (!plain)
		ok = write_any(c, data, data_end, sz, fl, flow);
	else if (ipv6)
		ok = write_v6(c, data, data_end, sz, fl, flow);
	else
		ok = write_v4(c, data, data_end, sz, fl, flow);
	if (!ok)
		return XDP_ABORTED;

	ret = bpf_redirect_map(&tx_port, 0, 0);
	if (ret == XDP_REDIRECT) {
		count_sent(c, len);
		if (s)
			stream_sent(c, s);
	} else {
		c->redirect_err++;
	}
	return ret;
}

/*
 * xsk --rtt: the frames a reflector returns come back into the sending
 * queue's own socket (same UMEM, its rx ring); anything not UDP goes on to
 * the stack (ARP and neighbour discovery keep working).
 */
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, XDPSG_MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} rtt_xsks SEC(".maps");

/* UDP frames that came back on a queue without a socket: passed on, never timed. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} rtt_no_socket SEC(".maps");

SEC("xdp")
int xdp_gen_rtt(struct xdp_md *ctx)
{
	__u32 key = 0, layers;
	enum parse_result r = parse_packet(ctx, &layers);
	__u64 *n;
	int ret;

	if (r != PARSE_UDP4 && r != PARSE_UDP6)
		return XDP_PASS;
	ret = bpf_redirect_map(&rtt_xsks, ctx->rx_queue_index, XDP_PASS);
	if (ret != XDP_REDIRECT) {
		n = bpf_map_lookup_elem(&rtt_no_socket, &key);
		if (n)
			(*n)++;
	}
	return ret;
}

/* The transmit limit reference: the verdict without building a packet. */
SEC("xdp")
int xdp_gen_bare(struct xdp_md *ctx)
{
	return bpf_redirect(ifindex_out, 0);
}

char _license[] SEC("license") = "GPL";
