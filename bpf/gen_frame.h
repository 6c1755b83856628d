/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every program of xdp_gen.bpf.c shares: the settings user space fixes
 * before load, the maps (templates, flows, per-CPU books, tx_port), and the
 * per-frame work (flow and size choice, pacing, the stamp, the checksums,
 * the redirect). The programs themselves are xdp_gen.bpf.c's and the
 * headers it includes after this one.
 */
#ifndef XDPSG_BPF_GEN_FRAME_H
#define XDPSG_BPF_GEN_FRAME_H

/* Set by user space before load. */
const volatile bool ipv6 = false;
const volatile bool stamp = true;
const volatile bool random_flows = false;
const volatile __u32 nflows = 1;
const volatile __u32 nsizes = 1; /* templates in 'sizes' */
const volatile __u32 size_seq_len = 1; /* entries used in 'size_seq' */
const volatile __u32 ifindex_out = 0;
/*
 * Frames of a batch leave together when the kernel flushes it, so the clock
 * (slow in a VM: a third of the per-frame cost) is read once per batch and
 * every frame of the batch carries that reading; paced frames read it each.
 */
const volatile __u32 clock_every = 1;
/*
 * The stamps' clock is the generator's CLOCK_MONOTONIC as its process reads
 * it: bpf_ktime_get_ns() plus its time namespace's offset (clockid.h), so
 * kernel mode and xsk mode stamp one clock.
 */
const volatile __u64 clock_off = 0;
/*
 * The frame's layout (struct pkt_layout), for every kind but plain UDP,
 * which keeps its fixed offsets below. As rodata they are constants to the
 * verifier: bounds checks and dead branches fold away.
 */
const volatile bool plain = true;
const volatile __u32 l3_off = 14; /* (inner) IP header */
const volatile __u32 port_off = 34; /* ports; ICMP: echo id and sequence */
const volatile __u32 udp_len_off = 38; /* inner UDP length; 0: not UDP */
const volatile __u32 csum_off = 40; /* L4 checksum */
const volatile __u32 pay_off = 42; /* stamp */
const volatile __u32 ol3_off = 0; /* outer IP header; 0: no tunnel */
const volatile bool ol3_v6 = false;
const volatile __u32 ol4_off = 0; /* outer UDP header; 0: none */
/*
 * What a stack that received a live frame may have written into its page,
 * which comes back to this program (measured: a routing DUT's GRO builds the
 * skb on the page, and forwarding writes the DUT's Ethernet header and
 * takes one off the TTL there): the Ethernet header and tags (a receiver
 * that strips a tag moves the MACs 4 bytes on, in place), and the (outer)
 * IP header up to its TTL and protocol, or its hop limit. The first hdr_len
 * bytes (22 to 32) are the same in every frame of the run but for the IP
 * length, which every path writes after them; so each frame starts with them
 * from these words, in three 8-byte moves and, past 24 bytes (tags), a fourth
 * at hdr_tail_off = hdr_len - 8, overlapping. The (outer) IPv4 header checksum at
 * hdr_csum_off (0: the outer header is IPv6) is the paths' own.
 */
const volatile __u64 hdr_0 = 0, hdr_8 = 0, hdr_16 = 0, hdr_tail = 0; /* as in memory */
const volatile __u32 hdr_tail_off = 16;
const volatile __u32 hdr_csum_off = 0;
/*
 * --stream (struct gen_sched): this program is stream stream_idx of
 * nstreams, tail-called by xdp_gen_streams; any_paced: some stream has a
 * rate, so the dispatcher reads the clock every run.
 */
const volatile bool streamed = false;
const volatile __u32 stream_idx = 0;
const volatile __u32 nstreams = 0;
const volatile bool any_paced = false;
/*
 * --stream: the longest headers and stamp of any stream. Past them every
 * stream's frame holds the same payload pattern (pkt.h), so a frame another
 * stream left in the page is this stream's own once its first copy_len
 * bytes are. 0: one stream, whose pages no other writes.
 */
const volatile __u32 copy_len = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gen_cpu);
} cpu_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XDPSG_GEN_MAX_SIZES);
	__type(key, __u32);
	__type(value, struct gen_size);
} sizes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XDPSG_GEN_SEQ_MAX);
	__type(key, __u32);
	__type(value, __u32); /* index into 'sizes' */
} size_seq SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XDPSG_GEN_MAX_FLOWS);
	__type(key, __u32);
	__type(value, struct gen_flow);
} flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XDPSG_GEN_MAX_FLOWS);
	__type(key, __u32);
	__type(value, __u32); /* next sequence number of each flow */
} seqs SEC(".maps");

/*
 * The target device, entry 0 (ifindex_out, set by gen_prog_fill_maps()):
 * bpf_redirect_map() finds it by pointer, where bpf_redirect() looks the
 * ifindex up in the namespace's device table for every frame.
 */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} tx_port SEC(".maps");

/* --poisson: -ln(1 - u) at XDPSG_GEN_EXP_GAPS evenly spaced u, mean 1 << XDPSG_GEN_EXP_FP. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XDPSG_GEN_EXP_GAPS);
	__type(key, __u32);
	__type(value, __u32);
} exp_gaps SEC(".maps");

/* tx_port's map id, for the xdp_redirect_err filter (set by user space after load). */
__u32 tx_port_id = 0;

/* What the kernel reports after the program returned (optional tracepoints). */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gen_xmit_stats);
} xmit_stats SEC(".maps");

/* Frame offsets (cf. pkt.h): no VLAN tag, no IP options. */
#define GEN_V4_OFF_LEN 16
#define GEN_V4_OFF_CSUM 24
#define GEN_V4_OFF_SADDR 26
#define GEN_V4_OFF_DADDR 30
#define GEN_V4_OFF_UDP 34
#define GEN_V6_OFF_LEN 18
#define GEN_V6_OFF_SADDR_LO (22 + 8)
#define GEN_V6_OFF_DADDR_LO (38 + 8)
#define GEN_V6_OFF_UDP 54
/* In the UDP header. */
#define GEN_UDP_OFF_LEN 4
#define GEN_UDP_OFF_CSUM 6

/*
 * Typed stores, so clang emits one wide store: through a char pointer or
 * __builtin_memcpy the BPF backend assumes no alignment and writes bytes.
 * The offsets are fixed and checked against data_end by the caller.
 */
#define GEN_PUT(type, p, off, v) (*(type *)((__u8 *)(p) + (off)) = (v))

/* pkt_csum_fold(): ones'-complement fold of a 64-bit sum to 16 bits. */
static __always_inline __u16 csum_fold(__u64 sum)
{
	sum = (sum & 0xffffffffULL) + (sum >> 32);
	sum = (sum & 0xffffffffULL) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)sum;
}

/* pkt__xorshift64s() */
static __always_inline __u64 xorshift64s(__u64 *state)
{
	__u64 x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/* pkt_gen_next_flow() */
static __always_inline __u32 next_flow(struct gen_cpu *c)
{
	__u32 f;

	if (random_flows) {
		__u32 r = (__u32)(xorshift64s(&c->rng) >> 32);
		__u32 k = (__u32)(((__u64)r * c->nlocal) >> 32);

		return c->shard + k * c->shards;
	}
	f = c->flow_pos;
	c->flow_pos += c->shards;
	if (c->flow_pos >= nflows)
		c->flow_pos = c->shard;
	return f;
}

/* pkt_gen_next_size(); -1 if the sequence map has no such entry. */
static __always_inline int next_size(struct gen_cpu *c)
{
	__u32 pos = c->size_pos, *t;

	if (nsizes <= 1)
		return 0;
	t = bpf_map_lookup_elem(&size_seq, &pos);
	if (!t)
		return -1;
	if (++pos >= size_seq_len)
		pos = 0;
	c->size_pos = pos;
	return *t;
}

/* The stamp's send time: the clock read at most clock_every frames ago. */
static __always_inline __u64 send_time(struct gen_cpu *c)
{
	if (!c->clock_left) {
		c->clock_ns = bpf_ktime_get_ns();
		c->clock_left = clock_every;
		c->clock_reads++;
	}
	c->clock_left--;
	return c->clock_ns;
}

/*
 * The stamp's head (magic and send time), flow, seq and keyed tag (the run
 * is the template's); returns their 16-bit words for the L4 checksum. ts is
 * the flow's tag state (stamp_tag.h).
 */
static __always_inline __u64 put_stamp(struct gen_cpu *c, __u8 *st,
				       const struct xdpsg_tag_state *ts, __u16 flow, __u32 seq)
{
	__u32 head = XDPSG_STAMP_HEAD(send_time(c) + clock_off);
	__u32 tag = xdpsg_tag_data(ts, seq, head);

	GEN_PUT(__u32, st, XDPSG_STAMP_OFF_HEAD, head);
	GEN_PUT(__u16, st, XDPSG_STAMP_OFF_FLOW, flow);
	GEN_PUT(__u32, st, XDPSG_STAMP_OFF_SEQ, seq);
	GEN_PUT(__u32, st, XDPSG_STAMP_OFF_TAG, tag);
	return (head & 0xffff) + (head >> 16) + flow + (seq & 0xffff) + (seq >> 16) +
	       (tag & 0xffff) + (tag >> 16);
}

/* The stamp of the flow's next frame, plus its words for the L4 checksum. */
static __always_inline __u64 write_stamp(struct gen_cpu *c, __u8 *st, __u32 flow,
					 const struct gen_flow *fl)
{
	__u32 *seqp, seq;

	seqp = bpf_map_lookup_elem(&seqs, &flow);
	seq = seqp ? (*seqp)++ : 0;
	return put_stamp(c, st, (const struct xdpsg_tag_state *)&fl->tag_v0, (__u16)flow, seq);
}

/* A checksum from its ones'-complement sum. */
static __always_inline void put_csum(__u8 *at, __u64 sum)
{
	__u16 csum = (__u16)~csum_fold(sum);

	if (csum == 0)
		csum = 0xffff; /* 0 would mean "no checksum" (IPv4 UDP), or be invalid (IPv6) */
	GEN_PUT(__u16, at, 0, csum);
}

/* The UDP checksum from its ones'-complement sum. */
static __always_inline void put_udp_csum(__u8 *udp, __u64 sum)
{
	put_csum(udp + GEN_UDP_OFF_CSUM, sum);
}

/* Ports, UDP length and checksum: the part IPv4 and IPv6 share. */
static __always_inline void write_udp(struct gen_cpu *c, __u8 *udp, const struct gen_size *sz,
				      const struct gen_flow *fl, __u32 flow)
{
	__u64 sum = (__u16)~sz->udp_csum + (__u64)fl->udp_delta;

	GEN_PUT(__u16, udp, 0, fl->sport);
	GEN_PUT(__u16, udp, 2, fl->dport);
	GEN_PUT(__u16, udp, GEN_UDP_OFF_LEN, sz->udp_len);
	if (stamp)
		sum += write_stamp(c, udp + 8, flow, fl);
	put_udp_csum(udp, sum);
}

/*
 * The frame's first bytes, whatever a stack wrote there (see hdr_0); the
 * caller checked 40 bytes. With several streams the template's copy
 * (copy_tmpl()) already wrote them.
 */
static __always_inline void write_hdr(__u8 *data)
{
	if (copy_len)
		return;
	GEN_PUT(__u64, data, 0, hdr_0);
	GEN_PUT(__u64, data, 8, hdr_8);
	GEN_PUT(__u64, data, 16, hdr_16);
	/* Tags make it longer than 24 bytes (a constant: the branch folds away). */
	if (hdr_tail_off > 16)
		GEN_PUT(__u64, data, hdr_tail_off & 31, hdr_tail);
}

/* Returns false if the frame is too short for the headers (and stamp). */
static __always_inline bool write_v4(struct gen_cpu *c, void *data, void *data_end,
				     const struct gen_size *sz, const struct gen_flow *fl,
				     __u32 flow)
{
	__u16 csum;

	if (data + GEN_V4_OFF_UDP + 8 + (stamp ? XDPSG_STAMP_SIZE : 0) > data_end)
		return false;
	write_hdr(data);
	GEN_PUT(__u16, data, GEN_V4_OFF_LEN, sz->l3_len);
	GEN_PUT(__u32, data, GEN_V4_OFF_SADDR, (__u32)fl->saddr);
	GEN_PUT(__u32, data, GEN_V4_OFF_DADDR, (__u32)fl->daddr);
	csum = (__u16)~csum_fold((__u16)~sz->ip_csum + (__u64)fl->ip_delta);
	GEN_PUT(__u16, data, GEN_V4_OFF_CSUM, csum);
	write_udp(c, data + GEN_V4_OFF_UDP, sz, fl, flow);
	return true;
}

static __always_inline bool write_v6(struct gen_cpu *c, void *data, void *data_end,
				     const struct gen_size *sz, const struct gen_flow *fl,
				     __u32 flow)
{
	if (data + GEN_V6_OFF_UDP + 8 + (stamp ? XDPSG_STAMP_SIZE : 0) > data_end)
		return false;
	write_hdr(data);
	GEN_PUT(__u16, data, GEN_V6_OFF_LEN, sz->l3_len);
	GEN_PUT(__u64, data, GEN_V6_OFF_SADDR_LO, fl->saddr);
	GEN_PUT(__u64, data, GEN_V6_OFF_DADDR_LO, fl->daddr);
	write_udp(c, data + GEN_V6_OFF_UDP, sz, fl, flow);
	return true;
}

/*
 * Any other kind (TCP, ICMP, VLAN tags, a tunnel) at the layout's offsets:
 * the lengths of this size, the flow's addresses and ports, and the
 * checksums from the size's base plus the flow's deltas.
 */
static __always_inline bool write_any(struct gen_cpu *c, __u8 *data, void *data_end,
				      const struct gen_size *sz, const struct gen_flow *fl,
				      __u32 flow)
{
	__u8 *ip = data + l3_off;
	__u64 sum;

	if (data + pay_off + (stamp ? XDPSG_STAMP_SIZE : 0) > (__u8 *)data_end)
		return false;
	write_hdr(data);
	if (ol3_off && ol3_v6) {
		GEN_PUT(__u16, data, ol3_off + 4, sz->ol3_len);
	} else if (ol3_off) {
		GEN_PUT(__u16, data, ol3_off + 2, sz->ol3_len);
		GEN_PUT(__u16, data, ol3_off + 10, sz->oip_csum);
	}
	if (ol4_off) {
		GEN_PUT(__u16, data, ol4_off, fl->osport);
		GEN_PUT(__u16, data, ol4_off + GEN_UDP_OFF_LEN, sz->ol4_len);
	}
	if (ipv6) {
		GEN_PUT(__u16, ip, 4, sz->l3_len);
		GEN_PUT(__u64, ip, 16, fl->saddr);
		GEN_PUT(__u64, ip, 32, fl->daddr);
	} else {
		GEN_PUT(__u16, ip, 2, sz->l3_len);
		GEN_PUT(__u32, ip, 12, (__u32)fl->saddr);
		GEN_PUT(__u32, ip, 16, (__u32)fl->daddr);
		GEN_PUT(__u16, ip, 10,
			(__u16)~csum_fold((__u16)~sz->ip_csum + (__u64)fl->ip_delta));
	}
	GEN_PUT(__u16, data, port_off, fl->sport);
	GEN_PUT(__u16, data, port_off + 2, fl->dport);
	if (udp_len_off)
		GEN_PUT(__u16, data, udp_len_off, sz->udp_len);
	sum = (__u16)~sz->udp_csum + (__u64)fl->udp_delta;
	if (stamp)
		sum += write_stamp(c, data + pay_off, flow, fl);
	put_csum(data + csum_off, sum);
	if (ol4_off)
		put_csum(data + ol4_off + GEN_UDP_OFF_CSUM,
			 (__u16)~sz->ocsum + (__u64)fl->ocsum_delta);
	return true;
}

/* With --rate: is the next frame due at now? Keeps the schedule in c (see struct gen_cpu). */
static __always_inline bool due_at(struct gen_cpu *c, __u64 now)
{
	bool batch_first = true;
	__u64 due;

	if (c->burst && c->batch_runs) {
		batch_first = !c->batch_pos;
		c->batch_pos = c->batch_pos + 1 >= c->batch_runs ? 0 : c->batch_pos + 1;
	}
	if (c->limit && c->packets >= c->limit)
		return false;
	if (!c->t0)
		c->t0 = now;
	due = c->t0 + c->due_ns;
	/* Inside a burst, frames go back to back. */
	if (c->burst && c->burst_left)
		goto go;
	/* Past the clock's range (a schedule centuries ahead): never due. */
	if (due < c->t0 || now < due || now - c->last_ns < c->min_gap_ns)
		return false;
	if (c->burst) {
		/*
		 * Half a gap after the last burst's last frame, not its first: a
		 * burst cut in two by a pause (a preempted call, a new chunk) ends
		 * late, and the next one, already due, must not run into its tail.
		 */
		if (!batch_first || (c->burst_start && now - c->last_ns < c->burst_gap_ns / 2))
			return false;
		c->burst_start = now;
		c->burst_left = c->burst;
	}
go:
	c->last_ns = now;
	c->clock_ns = now; /* this frame's send time */
	c->clock_left = 1;
	return true;
}

/*
 * A frame went: the next is due one interval later. Adding the interval's
 * quotient and remainder keeps due_ns * rate + due_rem = packets * 1e9
 * exactly, with no product to wrap and no division; due_ns saturates.
 */
/* --poisson: the next gap, the mean interval times an exponential quantile. */
static __always_inline __u64 exp_gap(struct gen_cpu *c)
{
	__u32 k = (__u32)(xorshift64s(&c->gap_rng) >> 32) & (XDPSG_GEN_EXP_GAPS - 1);
	__u32 *q = bpf_map_lookup_elem(&exp_gaps, &k);

	return q ? (*q * c->step_ns) >> XDPSG_GEN_EXP_FP : c->step_ns;
}

static __always_inline void count_sent(struct gen_cpu *c, long len)
{
	__u64 due;

	c->packets++;
	c->bytes += len;
	if (!c->rate)
		return;
	if (c->burst || c->poisson) {
		/* The next burst is due a gap after this one's due time, once it is whole. */
		if (c->burst && c->burst_left && --c->burst_left)
			return;
		due = c->due_ns + (c->burst ? c->burst_gap_ns : exp_gap(c));
		c->due_ns = due < c->due_ns ? ~0ULL : due;
		return;
	}
	due = c->due_ns + c->step_ns;
	c->due_rem += c->step_rem;
	if (c->due_rem >= c->rate) {
		c->due_rem -= c->rate;
		due++;
	}
	c->due_ns = due < c->due_ns ? ~0ULL : due;
}

/*
 * A fixed frame (struct gen_cpu): the input frame already is this thread's
 * one flow in its one size; only the stamp's seq and time and the L4
 * checksum change from frame to frame (a tunnel's outer checksum does not:
 * the inner L4 checksum cancels the stamp out), besides the first bytes a
 * stack may have written (write_hdr(), and the flow's IPv4 checksum).
 */
static __always_inline int send_fixed(struct xdp_md *ctx, struct gen_cpu *c)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	__u8 *udp = data + (ipv6 ? GEN_V6_OFF_UDP : GEN_V4_OFF_UDP);
	int ret;

	if (plain) {
		if ((void *)(udp + 8 + (stamp ? XDPSG_STAMP_SIZE : 0)) > data_end)
			return XDP_ABORTED;
		write_hdr(data);
		if (!ipv6)
			GEN_PUT(__u16, data, GEN_V4_OFF_CSUM, c->fixed_ip_csum);
		if (stamp)
			put_udp_csum(udp, c->fixed_udp_sum +
						  put_stamp(c, udp + 8, (void *)c->fixed_tag,
							    (__u16)c->fixed_flow, c->fixed_seq++));
	} else {
		if (data + pay_off + (stamp ? XDPSG_STAMP_SIZE : 0) > data_end)
			return XDP_ABORTED;
		write_hdr(data);
		if (hdr_csum_off)
			GEN_PUT(__u16, data, hdr_csum_off & 63, c->fixed_ip_csum);
		if (stamp)
			put_csum(data + csum_off, c->fixed_udp_sum + put_stamp(c, data + pay_off,
									       (void *)c->fixed_tag,
									       (__u16)c->fixed_flow,
									       c->fixed_seq++));
	}
	ret = bpf_redirect_map(&tx_port, 0, 0);
	if (ret == XDP_REDIRECT)
		count_sent(c, data_end - data);
	else
		c->redirect_err++;
	return ret;
}

#endif
