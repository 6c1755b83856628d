/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xdp_gen.bpf.c's tracepoint programs: what happens to its frames after it
 * returned. Included by xdp_gen.bpf.c after gen_frame.h (tx_port, xmit_stats).
 */
#ifndef XDPSG_BPF_GEN_TP_H
#define XDPSG_BPF_GEN_TP_H

/*
 * Transmit results the caller of BPF_PROG_RUN cannot see, from tracepoints:
 * they attach through BTF, with no tracefs mounted. Only the one field read
 * from struct net_device is declared; CO-RE relocates its offset from the
 * running kernel's BTF. User space attaches them where they exist.
 */
struct net_device {
	int ifindex;
} __attribute__((preserve_access_index));

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

/*
 * TP_PROTO(from_dev, to_dev, int sent, int drops, int err): one event per
 * bulk (up to 16 frames) the devmap flushed into to_dev. A device's own
 * xmit counters count every sender; these count this process's frames only:
 * flushed in its context, and from the device BPF_PROG_RUN receives on
 * (the namespace's lo), which tells them from a redirect by an XDP program
 * whose NAPI poll ran in this context as a softirq (the peer's, a DUT's).
 * tp_btf, not raw_tp: the device fields are plain loads, no helper calls.
 */
SEC("tp_btf/xdp_devmap_xmit")
int gen_devmap_xmit(__u64 *ctx)
{
	const struct net_device *from = (const void *)ctx[0], *to = (const void *)ctx[1];
	struct gen_xmit_stats *s;
	__u32 key = 0;

	if (not_ours())
		return 0;
	if (owner_tgid && from->ifindex != LOOPBACK_IFINDEX)
		return 0;
	if (ifindex_out && to->ifindex != (int)ifindex_out)
		return 0;
	s = bpf_map_lookup_elem(&xmit_stats, &key);
	if (!s)
		return 0;
	s->sent += (int)ctx[2];
	s->drops += (int)ctx[3];
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
