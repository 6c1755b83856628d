// SPDX-License-Identifier: GPL-2.0
/*
 * xdp-sink's programs: drop, pass, tx (bounce), redirect (devmap) and xsk
 * (into an AF_XDP socket per queue). All share one counting path; what else
 * runs per packet is fixed before load through const volatile settings, so a
 * plain sink pays for nothing it did not ask for.
 */
#include <stdbool.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "bpf/parsing.h"
#include "shared.h"
#include "sink_blackhole.h"
#include "sink_records.h"
#include "xdp_sample.h"

/* Set by user space before load. */
const volatile bool do_parse = false;
const volatile __u64 cost_ns = 0;
/* tx --reflect: also swap IP addresses and UDP ports, so the frame goes back to its sender. */
const volatile bool reflect = false;
/* drop --sample N: one frame in N (0: none) into the samples ring, snap bytes of it. */
const volatile __u32 sample_every = 0;
const volatile __u32 sample_snap = XDPSG_SAMPLE_MAX;
/*
 * Queues with a stats slot of their own: those the interface had when the
 * sink started, which it reads. A queue added later (ethtool -L) counts in
 * the overflow slot, which it always reads, so no packet goes uncounted.
 */
const volatile __u32 queue_slots = XDPSG_MAX_QUEUES;
/*
 * --packet-op (enum xdpsg_packet_op): read the frame's first bytes, or swap
 * its Ethernet addresses, before the verdict (xdp-bench's read-data and
 * swap-macs), so a benchmark pays for touching the packet as a real program
 * would. tx swaps the addresses whatever it says: that is its bounce.
 */
const volatile __u32 packet_op = XDPSG_OP_NONE;
/* redirect-cpu: CPUs in cpus_available[0, cpu_count); the remote program's verdict. */
const volatile __u32 cpu_count = 0;
const volatile bool remote_pass = false;
/*
 * xsk: the receive time goes in front of the frame (struct xdpsg_rx_meta), so
 * the sink's latency ends where the kernel received the frame, not where its
 * thread woke up to read it.
 */
const volatile bool rx_time = false;
/* xsk --time-all: time every frame, whatever the rate (see struct xdpsg_rx_meta). */
const volatile bool rx_time_all = false;
/*
 * xsk --hw-time loads xdp_sink_xsk_hw instead: the NIC's receive timestamp
 * first, where its driver gives one, marked XDPSG_RX_HW; else the kernel's
 * clock as without it. The kfunc is only for a program bound to the device
 * (BPF_F_XDP_DEV_BOUND_ONLY): the kernel refuses it in any other, so it is
 * in that program alone.
 *
 * And only in the object built from xdp_sink_hw.bpf.c, which defines
 * XDPSG_SINK_HW: an object that calls a kfunc makes libbpf read the kernel's
 * BTF (5 MB) at every load, which tripled the sink's start (73 against 23 ms,
 * and as much CPU, paired). This one says "no timestamp" instead, and
 * xdp-sink loads the other's bytes only for --hw-time (sink.c's sink_open()).
 */
#ifdef XDPSG_SINK_HW
extern int bpf_xdp_metadata_rx_timestamp(const struct xdp_md *ctx, __u64 *timestamp) __ksym __weak;
#else
static __always_inline int bpf_xdp_metadata_rx_timestamp(const struct xdp_md *ctx, __u64 *timestamp)
{
	return -95; /* -EOPNOTSUPP */
}
#endif
/*
 * Loaded frags-aware (BPF_F_XDP_HAS_FRAGS), for a link whose frames may not fit
 * one buffer (jumbo frames): a frame's length is that of all its buffers. The
 * headers, the stamp and the packet ops are read in the first buffer as ever.
 */
const volatile bool frags = false;
/*
 * xsk: records for the queue's thread (struct xdpsg_xsk_rec in shared.h), in
 * rings of xsk_rec_mask + 1 a queue. Needs rx_time (the metadata carries the
 * ticket) and single-buffer frames.
 */
const volatile bool xsk_records = false;
const volatile __u32 xsk_rec_mask = 0;
/*
 * drop with none of --parse, --cost, --packet-op, --sample and a link of
 * one-buffer frames: the verifier drops the branches the other settings
 * guard, but not the loads that test them, so this one setting stands for
 * them all and the program reads one flag a frame instead of five.
 */
const volatile bool drop_plain = false;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XDPSG_STATS_SLOTS);
	__type(key, __u32);
	__type(value, struct sink_stats);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} tx_port SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, XDPSG_MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} xsks SEC(".maps");

/* xsk records: sized before load to the queues' rings, one record otherwise. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xdpsg_xsk_rec);
} xsk_recs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XDPSG_MAX_QUEUES);
	__type(key, __u32);
	__type(value, struct xdpsg_xsk_ring);
} xsk_rings SEC(".maps");

/* redirect-cpu. Both sized before load to the possible CPUs (a cpumap takes no more). */
struct {
	__uint(type, BPF_MAP_TYPE_CPUMAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bpf_cpumap_val);
} cpu_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cpus_available SEC(".maps");

/* The round robin's position, per CPU that receives: no atomics, each CPU cycles on its own. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cpu_rr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sink_cpumap_stats);
} cpumap_stats SEC(".maps");

/* Sized before load: XDPSG_SAMPLE_RING with --sample, one page otherwise. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, XDPSG_SAMPLE_RING);
} samples SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xdpsg_sample_state);
} sample_state SEC(".maps");

static long spin_cb(__u64 index, void *ctx)
{
	__u64 *deadline = ctx;

	return bpf_ktime_get_ns() >= *deadline;
}

/*
 * The slow-consumer knob: spin until cost_ns has passed. Time-based, so the
 * cost holds whatever the CPU's speed; bpf_loop bounds it for the verifier.
 */
static __always_inline void burn(void)
{
	__u64 deadline;
	__u32 loops;

	if (!cost_ns)
		return;
	deadline = bpf_ktime_get_ns() + cost_ns;
	loops = cost_ns > (1 << 23) ? (1 << 23) : (__u32)cost_ns;
	bpf_loop(loops, spin_cb, &deadline, 0);
}

/* --parse: what the frame is, and what it was carried in. */
static __always_inline void count_parse(struct xdp_md *ctx, struct sink_stats *s)
{
	__u32 layers = 0;

	switch (parse_packet(ctx, &layers)) {
	case PARSE_UDP4:
		s->udp4++;
		break;
	case PARSE_UDP6:
		s->udp6++;
		break;
	case PARSE_TCP4:
		s->tcp4++;
		break;
	case PARSE_TCP6:
		s->tcp6++;
		break;
	case PARSE_ICMP4:
		s->icmp4++;
		break;
	case PARSE_ICMP6:
		s->icmp6++;
		break;
	case PARSE_OTHER:
		s->other++;
		break;
	case PARSE_ERR_ETH:
		s->err_eth++;
		break;
	case PARSE_ERR_IP:
		s->err_ip++;
		break;
	case PARSE_ERR_IP6_EXT:
		s->err_ip6_ext++;
		break;
	case PARSE_ERR_UDP:
		s->err_udp++;
		break;
	case PARSE_ERR_TCP:
		s->err_tcp++;
		break;
	case PARSE_ERR_ICMP:
		s->err_icmp++;
		break;
	case PARSE_ERR_TUNNEL:
		s->err_tunnel++;
		break;
	}
	if (!layers)
		return;
	s->vlan += !!(layers & PARSE_L_VLAN);
	s->qinq += !!(layers & PARSE_L_QINQ);
	s->ip6_ext += !!(layers & PARSE_L_IP6_EXT);
	s->vxlan += !!(layers & PARSE_L_VXLAN);
	s->geneve += !!(layers & PARSE_L_GENEVE);
	s->gre += !!(layers & PARSE_L_GRE);
	s->ipip += !!(layers & PARSE_L_IPIP);
}

/* The frame's length: with frags, summed over all its buffers. */
static __always_inline __u32 frame_len(struct xdp_md *ctx)
{
	if (frags)
		return (__u32)bpf_xdp_get_buff_len(ctx);
	return ctx->data_end - ctx->data;
}

/* This frame's queue slot in the counters, on this CPU. */
static __always_inline struct sink_stats *slot(struct xdp_md *ctx)
{
	__u32 key = ctx->rx_queue_index;

	if (key >= queue_slots || key >= XDPSG_MAX_QUEUES)
		key = XDPSG_MAX_QUEUES;
	return bpf_map_lookup_elem(&stats, &key);
}

static __always_inline struct sink_stats *count_in(struct xdp_md *ctx, struct sink_stats *s)
{
	if (!s)
		return NULL;
	s->packets++;
	s->bytes += frame_len(ctx);
	if (do_parse)
		count_parse(ctx, s);
	burn();
	return s;
}

static __always_inline struct sink_stats *count(struct xdp_md *ctx)
{
	return count_in(ctx, slot(ctx));
}

/*
 * One frame in sample_every goes to user space. The 1-in-N countdown is in
 * the frame's own stats entry (per queue slot and CPU, no atomics); the
 * sample counters are looked up only for the frame that is sampled. A full
 * ring loses the sample, never the frame's verdict.
 */
static __always_inline void sample(struct xdp_md *ctx, struct sink_stats *s)
{
	__u32 key = 0, len = frame_len(ctx);
	struct xdpsg_sample_state *st;
	struct xdpsg_sample *rec;
	__u64 cap;

	if (++s->sample_countdown < sample_every)
		return;
	s->sample_countdown = 0;
	st = bpf_map_lookup_elem(&sample_state, &key);
	if (!st)
		return;
	rec = bpf_ringbuf_reserve(&samples, sizeof(*rec), 0);
	if (!rec) {
		st->lost++;
		return;
	}
	cap = len < sample_snap ? len : sample_snap;
	/* 1 to XDPSG_SAMPLE_MAX (a power of two) in a form the verifier follows. */
	cap = ((cap - 1) & (XDPSG_SAMPLE_MAX - 1)) + 1;
	if (!len || bpf_xdp_load_bytes(ctx, 0, rec->data, cap)) {
		bpf_ringbuf_discard(rec, 0);
		return;
	}
	rec->ts_ns = bpf_ktime_get_ns();
	rec->len = len;
	rec->caplen = cap;
	/* No wake-up from the receive path: the reader polls the ring on its own clock. */
	bpf_ringbuf_submit(rec, BPF_RB_NO_WAKEUP);
	st->taken++;
}

static __always_inline void swap_macs(struct ethhdr *eth)
{
	unsigned char tmp[ETH_ALEN];

	__builtin_memcpy(tmp, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, tmp, ETH_ALEN);
}

/*
 * --packet-op. read-data reads what a forwarding program reads first: the
 * Ethernet header (both addresses and the type) and the 8 bytes after it
 * when the frame has them. False for a frame shorter than an Ethernet
 * header, which the caller aborts (xdp-bench does the same).
 */
static __always_inline bool packet_op_apply(struct xdp_md *ctx, struct sink_stats *s)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	__u64 sum;

	if (packet_op == XDPSG_OP_NONE)
		return true;
	if ((void *)(eth + 1) > data_end)
		return false;
	if (packet_op == XDPSG_OP_SWAP_MACS) {
		swap_macs(eth);
		return true;
	}
	sum = *(__u32 *)eth->h_dest + *(__u16 *)(eth->h_source + 4) + eth->h_proto;
	if ((void *)(eth + 1) + 8 <= data_end)
		sum += *(__u64 *)(eth + 1);
	if (s)
		s->read_sum += sum;
	return true;
}

/* The verdict for a frame --packet-op could not work on. */
/* A redirect's verdict, counted: taken by the map, or no target there. */
static __always_inline int counted_redirect(struct sink_stats *s, int ret)
{
	if (s) {
		if (ret == XDP_REDIRECT)
			s->redirect++;
		else
			s->redirect_err++;
	}
	return ret;
}

static __always_inline int op_aborted(struct sink_stats *s)
{
	if (s)
		s->aborted++;
	return XDP_ABORTED;
}

SEC("xdp")
int xdp_sink_drop(struct xdp_md *ctx)
{
	struct sink_stats *s;

	if (drop_plain) {
		s = slot(ctx);
		if (s) {
			s->packets++;
			s->bytes += ctx->data_end - ctx->data;
			s->drop++;
		}
		return XDP_DROP;
	}
	s = count(ctx);

	if (!packet_op_apply(ctx, s))
		return op_aborted(s);
	if (s) {
		/* Known at load: without --sample the verifier removes this. */
		if (sample_every)
			sample(ctx, s);
		s->drop++;
	}
	return XDP_DROP;
}

SEC("xdp")
int xdp_sink_pass(struct xdp_md *ctx)
{
	struct sink_stats *s = count(ctx);

	if (!packet_op_apply(ctx, s))
		return op_aborted(s);
	if (s)
		s->pass++;
	return XDP_PASS;
}

/* An IPv4 or IPv6 header (as its version says) with its addresses swapped. */
static __always_inline void swap_addrs(__u8 *l3, void *end)
{
	if ((void *)(l3 + sizeof(parse_ip4_t)) > end)
		return;
	if ((*l3 >> 4) == 4) {
		parse_ip4_t *iph = (void *)l3;
		__be32 a = iph->saddr;

		iph->saddr = iph->daddr;
		iph->daddr = a;
	} else if ((void *)(l3 + sizeof(parse_ip6_t)) <= end) {
		parse_ip6_t *ip6h = (void *)l3;
		struct in6_addr a = ip6h->saddr;

		ip6h->saddr = ip6h->daddr;
		ip6h->daddr = a;
	}
}

/*
 * Addresses and ports swapped: the one's-complement sums over them (IPv4
 * header, UDP/TCP/ICMPv6 pseudo-header) do not depend on their order, so
 * every checksum stays valid and the payload (the stamp) is not touched.
 * Only the outer packet is read (no tunnel is looked through): a tunnelled
 * frame goes back with the tunnel's addresses and ports swapped, its inside
 * untouched.
 */
static __always_inline void reflect_l3l4(struct xdp_md *ctx)
{
	struct hdr_cursor c = {
		.start = (void *)(long)ctx->data,
		.pos = (void *)(long)ctx->data,
		.end = (void *)(long)ctx->data_end,
	};
	int r = parse_layer(&c, PARSE_INNER_ETH, false);
	__be16 *ports = c.l4;
	__be16 port;

	/* l3 is set once an IP header was found whole, l4 once its L4 header was. */
	if (c.l3)
		swap_addrs(c.l3, c.end);
	if (r != PARSE_UDP4 && r != PARSE_UDP6 && r != PARSE_TCP4 && r != PARSE_TCP6)
		return;
	if (!ports || (void *)(ports + 2) > c.end)
		return;
	port = ports[0];
	ports[0] = ports[1];
	ports[1] = port;
}

SEC("xdp")
int xdp_sink_tx(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct sink_stats *s = count(ctx);
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > data_end)
		return op_aborted(s);
	/* Read before the swap, as a program that reads then forwards would. */
	if (packet_op == XDPSG_OP_READ_DATA)
		packet_op_apply(ctx, s);
	data_end = (void *)(long)ctx->data_end;
	eth = (void *)(long)ctx->data;
	if ((void *)(eth + 1) > data_end)
		return op_aborted(s);
	swap_macs(eth);
	/* Known at load: a plain tx never parses. */
	if (reflect)
		reflect_l3l4(ctx);
	if (s)
		s->tx++;
	return XDP_TX;
}

SEC("xdp")
int xdp_sink_redirect(struct xdp_md *ctx)
{
	struct sink_stats *s = count(ctx);

	if (blackholed(s))
		return XDP_DROP;
	if (!packet_op_apply(ctx, s))
		return op_aborted(s);
	return counted_redirect(s, bpf_redirect_map(&tx_port, 0, XDP_ABORTED));
}

/*
 * redirect-cpu: each frame to the next CPU of the list, round robin, where
 * the cpumap's program (xdp_sink_cpumap) counts it and gives the remote
 * verdict. A CPU without an entry (none can be missing: user space fills
 * all before the attach) fails the redirect and the frame is aborted.
 */
SEC("xdp")
int xdp_sink_redirect_cpu(struct xdp_md *ctx)
{
	struct sink_stats *s = count(ctx);
	__u32 zero = 0, *rr, *cpu;

	if (!packet_op_apply(ctx, s))
		return op_aborted(s);
	rr = bpf_map_lookup_elem(&cpu_rr, &zero);
	if (!rr || !cpu_count)
		return op_aborted(s);
	if (*rr >= cpu_count)
		*rr = 0;
	cpu = bpf_map_lookup_elem(&cpus_available, rr);
	(*rr)++;
	if (!cpu)
		return op_aborted(s);
	return counted_redirect(s, bpf_redirect_map(&cpu_map, *cpu, XDP_ABORTED));
}

/* On the remote CPU, from the cpumap's kthread: count, then drop or pass there. */
SEC("xdp/cpumap")
int xdp_sink_cpumap(struct xdp_md *ctx)
{
	struct sink_cpumap_stats *c;
	__u32 zero = 0;

	c = bpf_map_lookup_elem(&cpumap_stats, &zero);
	if (c) {
		c->packets++;
		c->bytes += frame_len(ctx);
		if (remote_pass)
			c->pass++;
		else
			c->drop++;
	}
	return remote_pass ? XDP_PASS : XDP_DROP;
}

/*
 * The receive time, or XDPSG_RX_UNTIMED for a frame the sample skips (struct
 * xdpsg_rx_meta says when and why). Taken before anything else the program
 * does but find its counters. A frame whose metadata cannot be made (a
 * driver without room for it) goes without: the sink sees a zero and falls
 * back to the time it read the frame.
 */
static __always_inline __u64 rx_clock(struct sink_stats *s)
{
	__u64 now, span;

	if (!s || rx_time_all)
		return bpf_ktime_get_ns();
	if (s->rx_clock_skip) {
		s->rx_clock_skip--;
		return XDPSG_RX_UNTIMED;
	}
	now = bpf_ktime_get_ns();
	span = now - s->rx_clock_last;
	if (span < (__u64)s->rx_clock_frames << XDPSG_RX_DENSE_SHIFT) {
		s->rx_clock_skip =
			XDPSG_RX_SKIP_MIN + (bpf_get_prandom_u32() & (XDPSG_RX_SKIP_SPAN - 1));
		s->rx_clock_frames = s->rx_clock_skip + 1;
	} else {
		s->rx_clock_frames = 1;
	}
	s->rx_clock_last = now;
	return now;
}

/*
 * The frame's record: its stamp, if a data stamp sits where plain_stamp()
 * looks; anything else (a mark, whose body goes on past the stamp; VLAN tags,
 * tunnels, TCP, ICMP; no stamp) is the thread's to read.
 */
static __always_inline void xsk_record(struct xdp_md *ctx, struct xdpsg_rx_meta *m, __u64 rx_ns)
{
	__u32 q = ctx->rx_queue_index, key;
	struct xdpsg_xsk_ring *r;
	struct xdpsg_xsk_rec *rec;
	__u8 *p, *end;
	__u64 t;

	r = bpf_map_lookup_elem(&xsk_rings, &q);
	if (!r)
		return;
	t = r->prod++;
	m->ticket = (__u32)t;
	m->flags = XDPSG_META_TICKET;
	/* Full: the thread reads this frame itself (the ticket tells it the record is not there). */
	if (t - *(volatile __u64 *)&r->cons > xsk_rec_mask)
		return;
	key = (q * (xsk_rec_mask + 1)) + ((__u32)t & xsk_rec_mask);
	rec = bpf_map_lookup_elem(&xsk_recs, &key);
	if (!rec)
		return;
	rec->rx_ns = rx_ns;
	rec->kind = XDPSG_REC_READ;
	p = plain_stamp(ctx);
	end = (void *)(long)ctx->data_end;
	if (p && p + XDPSG_STAMP_SIZE <= end) {
		__builtin_memcpy(rec->stamp, p, XDPSG_STAMP_SIZE);
		/* a mark (flow XDPSG_MARK_FLOW) goes on past the stamp: the thread reads it */
		if ((rec->stamp[8] & rec->stamp[9]) != 0xff)
			rec->kind = XDPSG_REC_STAMP;
	}
	rec->ticket = (__u32)t;
}

static __always_inline void stamp_rx_time(struct xdp_md *ctx, struct sink_stats *s, bool hw_time)
{
	struct xdpsg_rx_meta *m;
	void *data;
	__u64 rx;

	if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(*m)))
		return;
	data = (void *)(long)ctx->data;
	m = (void *)(long)ctx->data_meta;
	if ((void *)(m + 1) > data)
		return;
	m->ticket = 0;
	m->flags = 0;
	rx = 0;
	if (hw_time) {
		__u64 hw = 0;

		/* 0 where the driver has it; veth gives no hardware time (-ENODATA) */
		if (!bpf_xdp_metadata_rx_timestamp(ctx, &hw) && hw && hw < XDPSG_RX_HW)
			rx = hw | XDPSG_RX_HW;
	}
	if (!rx)
		rx = rx_clock(s);
	m->rx_ns = rx;
	if (xsk_records && !frags)
		xsk_record(ctx, m, rx);
}

static __always_inline int sink_xsk(struct xdp_md *ctx, bool hw_time)
{
	struct sink_stats *s = slot(ctx);

	if (rx_time)
		stamp_rx_time(ctx, s, hw_time);
	s = count_in(ctx, s);

	/* A queue without a socket is counted and dropped, never passed silently. */
	return counted_redirect(s, bpf_redirect_map(&xsks, ctx->rx_queue_index, XDP_DROP));
}

SEC("xdp")
int xdp_sink_xsk(struct xdp_md *ctx)
{
	return sink_xsk(ctx, false);
}

/*
 * xsk --hw-time: loaded bound to the device (see bpf_xdp_metadata_rx_timestamp
 * above); never by default ('?'), as a program not bound to one is refused.
 */
SEC("?xdp")
int xdp_sink_xsk_hw(struct xdp_md *ctx)
{
	return sink_xsk(ctx, true);
}

/* The reference point for benchmarks: nothing but the verdict. */
SEC("xdp")
int xdp_bare_drop(struct xdp_md *ctx)
{
	return XDP_DROP;
}

char _license[] SEC("license") = "GPL";
