/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xdp_gen.bpf.c with --stream (struct gen_sched in shared.h): the maps every
 * stream's program and the dispatcher share or hold, a stream's part of
 * xdp_gen, and the dispatcher xdp_gen_streams, which BPF_PROG_RUN runs.
 * Included by xdp_gen.bpf.c after gen_frame.h (its settings and helpers).
 */
#ifndef XDPSG_BPF_GEN_STREAMS_H
#define XDPSG_BPF_GEN_STREAMS_H

/* The stream's template: its first copy_len bytes are copied into each frame. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gen_tmpl);
} tmpl SEC(".maps");

/* One per CPU, shared by the dispatcher and every stream's program (reused fd). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gen_sched);
} sched SEC(".maps");

/* The streams' programs, by stream index. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, XDPSG_GEN_MAX_STREAMS);
	__type(key, __u32);
	__type(value, __u32);
} stream_progs SEC(".maps");

/*
 * --stream: may this stream send now? Its frame takes the dispatcher's clock
 * reading as its send time. Past its limit it leaves the rotation.
 */
static __always_inline bool stream_may_send(struct gen_cpu *c, struct gen_sched *s)
{
	if (c->limit && c->packets >= c->limit) {
		s->live &= ~(1U << stream_idx);
		return false;
	}
	if (c->rate && !due_at(c, s->now))
		return false;
	c->clock_ns = s->now;
	c->clock_left = 1;
	return true;
}

/* --stream: a frame of this stream went; when is its next one due, is it done? */
static __always_inline void stream_sent(struct gen_cpu *c, struct gen_sched *s)
{
	__u32 i = stream_idx & (XDPSG_GEN_MAX_STREAMS - 1);
	__u64 due = c->t0 + c->due_ns;

	if (!s->first_ns[i])
		s->first_ns[i] = s->now;
	s->last_ns[i] = s->now;
	s->due[i] = !c->rate ? 0 : due < c->t0 ? ~0ULL : due;
	if (c->limit && c->packets >= c->limit)
		s->live &= ~(1U << i);
}

/*
 * --stream: the frame as the stream's template, whatever another stream left
 * in the page: its first copy_len bytes (at most the frame), in 8-byte
 * moves, the last overlapping the one before.
 */
static __always_inline bool copy_tmpl(struct xdp_md *ctx, long len)
{
	__u8 *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u32 key = 0, n, i;
	struct gen_tmpl *t;

	if (!copy_len)
		return true;
	n = len < copy_len ? (__u32)len : copy_len;
	t = bpf_map_lookup_elem(&tmpl, &key);
	if (!t || n < 8 || n > XDPSG_GEN_COPY_MAX)
		return false;
	for (i = 0; i + 8 <= n; i += 8) {
		if (data + i + 8 > end)
			return false;
		GEN_PUT(__u64, data, i, *(__u64 *)(t->b + i));
	}
	i = (n - 8) & (XDPSG_GEN_COPY_MAX - 1);
	if (data + i + 8 > end)
		return false;
	GEN_PUT(__u64, data, i, *(__u64 *)(t->b + i));
	return true;
}

/*
 * --stream, one flow in one size: the stream's template is its frame, so
 * past the copy only the stamp and the L4 checksum change (send_fixed()).
 */
static __always_inline int send_fixed_stream(struct xdp_md *ctx, struct gen_cpu *c,
					     struct gen_sched *s)
{
	long len = ctx->data_end - ctx->data;
	int ret;

	if (c->fixed_len < len && bpf_xdp_adjust_tail(ctx, (int)c->fixed_len - (int)len))
		return XDP_ABORTED;
	if (!copy_tmpl(ctx, c->fixed_len))
		return XDP_ABORTED;
	ret = send_fixed(ctx, c);
	if (ret == XDP_REDIRECT)
		stream_sent(c, s);
	return ret;
}

/*
 * A tail call with a constant index is a direct jump the kernel patches in;
 * with an index in a register it is an indirect one (a retpoline here).
 */
#define TAIL_CALL_AT(k)                               \
	case k:                                       \
		bpf_tail_call(ctx, &stream_progs, k); \
		break

static __always_inline void tail_call_stream(struct xdp_md *ctx, __u32 j)
{
	switch (j) {
		TAIL_CALL_AT(0);
		TAIL_CALL_AT(1);
		TAIL_CALL_AT(2);
		TAIL_CALL_AT(3);
		TAIL_CALL_AT(4);
		TAIL_CALL_AT(5);
		TAIL_CALL_AT(6);
		TAIL_CALL_AT(7);
		TAIL_CALL_AT(8);
		TAIL_CALL_AT(9);
		TAIL_CALL_AT(10);
		TAIL_CALL_AT(11);
		TAIL_CALL_AT(12);
		TAIL_CALL_AT(13);
		TAIL_CALL_AT(14);
		TAIL_CALL_AT(15);
	}
}
_Static_assert(XDPSG_GEN_MAX_STREAMS == 16, "a TAIL_CALL_AT per stream");

/*
 * --stream: what BPF_PROG_RUN runs. Each run tail-calls the next stream in
 * turn that has frames left and is due; a run with none sends nothing.
 */
SEC("xdp")
int xdp_gen_streams(struct xdp_md *ctx)
{
	struct gen_sched *s;
	__u32 key = 0, i, j, k;

	s = bpf_map_lookup_elem(&sched, &key);
	if (!s)
		return XDP_ABORTED;
	if (any_paced || !s->clock_left) {
		s->now = bpf_ktime_get_ns();
		s->clock_left = clock_every;
	}
	s->clock_left--;
	i = s->next;
	for (k = 0; k < XDPSG_GEN_MAX_STREAMS && k < nstreams; k++) {
		if (i >= nstreams)
			i = 0;
		j = i++ & (XDPSG_GEN_MAX_STREAMS - 1);
		if (!(s->live & (1U << j)) || s->due[j] > s->now)
			continue;
		s->next = i;
		tail_call_stream(ctx, j);
		return XDP_ABORTED; /* no program at j */
	}
	s->next = i;
	return XDP_DROP;
}

#endif
