/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xdp_gen.bpf.c's marks (docs/stamp.md; struct gen_mark_frame in shared.h):
 * xdp_gen_mark, which BPF_PROG_RUN runs on the sending thread's CPU, and its
 * maps. Included by xdp_gen.bpf.c after gen_frame.h (its helpers and tx_port).
 */
#ifndef XDPSG_BPF_GEN_MARKS_H
#define XDPSG_BPF_GEN_MARKS_H

/* Marks (struct gen_mark_frame in shared.h): user space sizes both maps at load. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gen_mark_frame);
} mark_frames SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gen_mark_cpu);
} mark_cpu SEC(".maps");

/*
 * xdp-gen kernel mode's marks: each run sends the next mark of this CPU's
 * batch, whole (a live frame's page holds what the last frame left), on the
 * data frames' way out; past the batch a run sends nothing.
 */
SEC("xdp")
int xdp_gen_mark(struct xdp_md *ctx)
{
	__u32 cpu = bpf_get_smp_processor_id(), slot, n, i;
	struct gen_mark_frame *mf;
	struct gen_mark_cpu *mc;
	__u8 *data, *end;
	long len;
	int ret;

	mc = bpf_map_lookup_elem(&mark_cpu, &cpu);
	if (!mc || mc->next >= mc->n)
		return XDP_DROP;
	slot = mc->base + mc->next++;
	mf = bpf_map_lookup_elem(&mark_frames, &slot);
	if (!mf)
		return XDP_ABORTED;
	n = mf->len;
	if (n < 8 || n > XDPSG_GEN_COPY_MAX)
		return XDP_ABORTED;
	len = ctx->data_end - ctx->data;
	if (len != n && bpf_xdp_adjust_tail(ctx, (int)n - (int)len))
		return XDP_ABORTED;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	for (i = 0; i + 8 <= n; i += 8) {
		if (data + i + 8 > end)
			return XDP_ABORTED;
		GEN_PUT(__u64, data, i, *(__u64 *)(mf->b + i));
	}
	i = (n - 8) & (XDPSG_GEN_COPY_MAX - 1);
	if (data + i + 8 > end)
		return XDP_ABORTED;
	GEN_PUT(__u64, data, i, *(__u64 *)(mf->b + i));
	ret = bpf_redirect_map(&tx_port, 0, 0);
	if (ret == XDP_REDIRECT)
		mc->sent++;
	else
		mc->redirect_err++;
	return ret;
}

#endif
