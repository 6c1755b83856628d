/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xdp_gen.bpf.c's tracepoint programs: what happens to its frames after it
 * returned. Included by xdp_gen.bpf.c after gen_frame.h (tx_port, xmit_stats).
 */
#ifndef XDPSG_BPF_GEN_TP_H
#define XDPSG_BPF_GEN_TP_H

/*
 * Transmit results the caller of BPF_PROG_RUN cannot see, from raw
 * tracepoints: they attach by name, with no tracefs mounted and no BTF.
 * xdp_devmap_xmit reads one field of struct net_device, at the offset user
 * space found in the running kernel's BTF (gen_prog_set_netdev_off()), and
 * only when it loads that program: CO-RE, or a tp_btf program, made libbpf
 * read the kernel's BTF (5 MB) at every start of xdp-gen kernel, most of
 * what a start cost (see xdp_sink_hw.bpf.c).
 */
const volatile __u32 netdev_ifindex_off = 0;

#define MAP_ID_IFINDEX 0x7fffffff /* bpf_redirect(): no map, the index is an ifindex */
#define LOOPBACK_IFINDEX 1 /* every namespace's lo */

/*
 * Tracepoints see every namespace, and ifindexes repeat across them. The
 * frames a BPF_PROG_RUN redirected are flushed in the caller's own context, so
 * the caller's process id tells ours apart (0: count every process).
 */
const volatile __u32 owner_tgid = 0;

static __always_inline bool not_ours(void)
{
	return owner_tgid && (__u32)(bpf_get_current_pid_tgid() >> 32) != owner_tgid;
}

/* A device's ifindex, or 0 if it cannot be read. */
static __always_inline int dev_ifindex(const void *dev)
{
	int ifindex = 0;

	bpf_probe_read_kernel(&ifindex, sizeof(ifindex), (const char *)dev + netdev_ifindex_off);
	return ifindex;
}

/*
 * TP_PROTO(from_dev, to_dev, int sent, int drops, int err): one event per
 * bulk (up to 16 frames) the devmap flushed into to_dev. A device's own
 * xmit counters count every sender; these count this process's frames only:
 * flushed in its context, and from the device BPF_PROG_RUN receives on
 * (the namespace's lo), which tells them from a redirect by an XDP program
 * whose NAPI poll ran in this context as a softirq (the peer's, a DUT's).
 * Attached only with --own-counts, or for a device without counters of its
 * own: two reads a bulk.
 */
SEC("raw_tp/xdp_devmap_xmit")
int gen_devmap_xmit(struct bpf_raw_tracepoint_args *ctx)
{
	const void *from = (const void *)ctx->args[0], *to = (const void *)ctx->args[1];
	struct gen_xmit_stats *s;
	__u32 key = 0;

	if (not_ours())
		return 0;
	if (owner_tgid && dev_ifindex(from) != LOOPBACK_IFINDEX)
		return 0;
	if (ifindex_out && dev_ifindex(to) != (int)ifindex_out)
		return 0;
	s = bpf_map_lookup_elem(&xmit_stats, &key);
	if (!s)
		return 0;
	s->sent += (int)ctx->args[2];
	s->drops += (int)ctx->args[3];
	return 0;
}

/* TP_PROTO(dev, xdp_prog, tgt, int err, enum bpf_map_type, u32 map_id, u32 index) */
SEC("raw_tp/xdp_redirect_err")
int gen_redirect_err(struct bpf_raw_tracepoint_args *ctx)
{
	struct gen_xmit_stats *s;
	__u32 key = 0;

	if (not_ours())
		return 0;
	/*
	 * xdp_gen: bpf_redirect_map() into tx_port, key 0; xdp_gen_bare:
	 * bpf_redirect() by ifindex (map type 0, map id INT_MAX, index = ifindex).
	 */
	if (ifindex_out &&
	    !(ctx->args[4] == BPF_MAP_TYPE_DEVMAP && (__u32)ctx->args[5] == tx_port_id &&
	      (__u32)ctx->args[6] == 0) &&
	    !(ctx->args[4] == 0 && (__u32)ctx->args[5] == MAP_ID_IFINDEX &&
	      (__u32)ctx->args[6] == ifindex_out))
		return 0;
	s = bpf_map_lookup_elem(&xmit_stats, &key);
	if (s)
		s->err++;
	return 0;
}

#endif
