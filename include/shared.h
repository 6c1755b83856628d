/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_SHARED_H
#define XDPSG_SHARED_H

/*
 * Types shared by the BPF programs and user space. Only uapi types here: this
 * header is compiled by clang -target bpf as well as by the host compiler.
 */
#include <linux/types.h>

/*
 * The stamp xdp-gen writes at the start of every L4 payload, and xdp-sink and
 * the drop tracer read: the one definition of its layout, for the BPF writer
 * (bpf/xdp_gen.bpf.c), the BPF reader (bpf/xdp_drops.bpf.c), the C writer and
 * reader (common/pkt/stamp.h) and the Python one (testenv/xdpsg/stamp.py).
 * 18 bytes, so it fits the smallest IPv4 frame (60 bytes: 14 Ethernet + 20
 * IPv4 + 8 UDP + 18). Version 3:
 *
 *	offset	bytes	field
 *	0	1	magic	0xa3: a payload that starts otherwise is no stamp
 *	1	3	ts	send time on the generator's clock, in 128 ns ticks,
 *			low 24 bits (they wrap every 2.15 s): for latency
 *			where the sink reads the same clock, for the time
 *			between frames of one run always
 *	4	4	run	random at every generator start; with 32 bits two
 *			runs share an id once in 4 billion starts
 *	8	2	flow	flow index within the run; 0xffff: a mark (below)
 *	10	4	seq	per-flow sequence number from 0, wraps
 *	14	4	tag	the keyed check: SipHash-1-3 (stamp_tag.h) under the
 *			key both ends share, over run, flow, seq and ts
 *
 * What fits and what does not: a 32-bit run (no collisions), a 16-bit flow
 * (65,535 flows), a 32-bit sequence (a wrap per flow no loss burst reaches)
 * and a 32-bit tag (a forger without the key needs 4 billion tries per frame
 * it gets in) take 14 bytes; the magic, which tells a frame that is no stamp
 * from one that fails the check, and the send time share the last 4.
 *
 * Every field is little-endian and starts at an even offset but ts, which
 * shares the first 32-bit word with the magic (word = magic | ts << 8), so a
 * writer fixes the L4 checksum by adding the new 16-bit words.
 */
#define XDPSG_STAMP_MAGIC 0xa3
#define XDPSG_STAMP_VERSION 3 /* the layout below; --version --json tells it */
#define XDPSG_STAMP_SIZE 18
#define XDPSG_STAMP_TS_BITS 24
#define XDPSG_STAMP_TS_MASK ((1U << XDPSG_STAMP_TS_BITS) - 1)
#define XDPSG_STAMP_TICK_SHIFT 7 /* a tick is 2^7 = 128 ns */
#define XDPSG_STAMP_OFF_HEAD 0 /* magic | ts << 8 */
#define XDPSG_STAMP_OFF_RUN 4
#define XDPSG_STAMP_OFF_FLOW 8
#define XDPSG_STAMP_OFF_SEQ 10
#define XDPSG_STAMP_OFF_TAG 14
#define XDPSG_STAMP_FLOWS_MAX 65535 /* flow ids of data frames: 0 .. 65534 */

struct xdpsg_stamp {
	__u32 head; /* XDPSG_STAMP_MAGIC | ts << 8 */
	__u32 run;
	__u16 flow;
	__u32 seq;
	__u32 tag;
} __attribute__((packed));

/* The stamp's first word: the magic and the send time (ns on the generator's clock). */
#define XDPSG_STAMP_HEAD(ns)        \
	((__u32)XDPSG_STAMP_MAGIC | \
	 (((__u32)((ns) >> XDPSG_STAMP_TICK_SHIFT) & XDPSG_STAMP_TS_MASK) << 8))

/*
 * A mark: a stamped frame whose flow is XDPSG_MARK_FLOW and whose payload
 * goes on with a struct xdpsg_mark, the tag covering both. xdp-gen sends
 * marks on each flow's own addresses and ports (so they take the flow's path
 * and land on its queue), outside the run's counted frames and rate:
 *
 *  - START, before the flow's first frame: which clock the run's send times
 *    are on, so the sink knows whether their latency can be figured;
 *  - END, after its last: how many frames the flow sent (sequence numbers 0
 *    .. flow_frames - 1) and the run sent, so the sink counts the frames lost
 *    after the last one that arrived.
 *
 * Each is sent XDPSG_MARK_REPEAT times with growing gaps (one drop, or a
 * queue still draining, does not lose it); the stamp's seq is the repeat.
 */
#define XDPSG_MARK_FLOW 0xffff
#define XDPSG_MARK_SIZE 48
#define XDPSG_MARK_REPEAT 4 /* END marks a flow sends */
#define XDPSG_MARK_START_REPEAT 2 /* START marks a flow sends */

enum xdpsg_mark_kind {
	XDPSG_MARK_START = 1,
	XDPSG_MARK_END = 2,
};

/* The clocks a generator may stamp with (xdp-gen --clock). */
enum xdpsg_clock {
	XDPSG_CLOCK_MONOTONIC = 0,
	XDPSG_CLOCK_TAI = 1,
	XDPSG_CLOCK_REALTIME = 2,
	XDPSG_CLOCK_N,
};

#define XDPSG_MARK_F_SYNCED 0x1 /* the generator's clock was synchronised (adjtimex) */

struct xdpsg_mark {
	__u8 kind; /* enum xdpsg_mark_kind */
	__u8 clock; /* enum xdpsg_clock */
	__u16 flow; /* the flow it speaks for */
	__u16 repeat; /* 0 .. XDPSG_MARK_REPEAT - 1 */
	__u16 flags; /* XDPSG_MARK_F_* */
	__u64 flow_frames; /* END: frames the flow sent */
	__u64 run_frames; /* END: frames the run sent, over all its flows and threads */
	__u64 clock_ns; /* when this mark was written, in full, on the stamps' clock */
	/*
	 * Which clock: a hash of the kernel's boot id, the clock and its time
	 * namespace offset. The same id on both ends: one clock, latency can be
	 * figured; another: it cannot, unless both are synchronised (TAI).
	 */
	__u64 clock_id;
	__u32 nflows; /* flows in the run */
	__u32 sync_error_us; /* the generator's clock error estimate (adjtimex maxerror) */
} __attribute__((packed));

/*
 * What xdp-sink's xsk program puts in front of a frame (XDP metadata, which
 * AF_XDP delivers just before the frame's first byte): when the kernel
 * received it, CLOCK_MONOTONIC as the stamp's send time, or XDPSG_RX_UNTIMED.
 * A frame that arrives without metadata reads 0 (the UMEM starts zeroed and a
 * device gives every frame metadata or none), never a stale time.
 *
 * The clock read is the dearest thing the program does (a pvclock in a VM:
 * measured 35-40 ns, as much as the rest of the program), so above about
 * 1 Mpps on one CPU (frames closer than 2^XDPSG_RX_DENSE_SHIFT ns apart) only
 * one frame in about 16 is timed: after each timed frame the next
 * XDPSG_RX_SKIP_MIN .. XDPSG_RX_SKIP_MIN + XDPSG_RX_SKIP_SPAN - 1 frames (a
 * random count, so a periodic traffic shape cannot line up with the sample)
 * carry XDPSG_RX_UNTIMED: they are booked, but are in no latency or jitter
 * figure. Below that rate every frame is timed. xsk --time-all times all.
 */
struct xdpsg_rx_meta {
	/*
	 * With records (struct xdpsg_xsk_rec): the frame's ticket, its place in
	 * the queue's record ring, and XDPSG_META_TICKET in flags; 0 without.
	 */
	__u32 ticket;
	__u32 flags;
	__u64 rx_ns; /* last: the 8 bytes just before the frame */
};

#define XDPSG_META_TICKET 1U /* ticket is the frame's */

/*
 * xdp-sink xsk's records. A queue's thread runs on one CPU and the kernel
 * copies each frame into its UMEM on another (the receive CPU); reading the
 * frame brings its cache line over, and the kernel's next copy into that
 * UMEM frame has to take it back, a stall per frame on the CPU that receives.
 * So the program, which has the frame in its cache already, copies what the
 * books need into a record, two to a cache line, and the thread reads the
 * records instead of the frames.
 *
 * Each queue has a ring of xsk_rec_mask + 1 records and a struct
 * xdpsg_xsk_ring. Every frame the program sends to the queue's socket takes
 * the next ticket (prod), which goes in its metadata; if the ring has room
 * (prod - cons below its size) the record at ticket & mask is written, ticket
 * last. The socket may still drop the frame after that (its ring full), so a
 * ticket can have no descriptor: the thread finds each descriptor's ticket
 * (the next one, when the last descriptor of a batch shows them consecutive;
 * else in each frame's metadata), takes a record only when it holds that
 * ticket, and reads the frame itself otherwise. One program run per queue at
 * a time (native XDP: the queue's NAPI), so tickets come in the order the
 * frames enter the socket.
 */
#define XDPSG_XSK_REC_MAX (1U << 16) /* records a queue, at most: tickets are 32 bits */

enum xdpsg_rec_kind {
	XDPSG_REC_READ = 0, /* no stamp where the program looked: the thread reads the frame */
	XDPSG_REC_STAMP = 1, /* stamp[] is the frame's stamp, as on the wire, unchecked */
};

struct xdpsg_xsk_rec {
	__u64 rx_ns; /* as struct xdpsg_rx_meta's */
	__u32 ticket;
	__u8 kind; /* enum xdpsg_rec_kind */
	__u8 pad;
	__u8 stamp[XDPSG_STAMP_SIZE];
};

struct xdpsg_xsk_ring {
	__u64 prod; /* the next ticket: the program's */
	__u8 pad0[56];
	__u64 cons; /* tickets below this are read: the thread's */
	__u8 pad1[56];
};

#define XDPSG_RX_UNTIMED 1ULL
/* rx_ns with this bit: the NIC's receive timestamp (xdp-sink xsk --hw-time), on its clock */
#define XDPSG_RX_HW (1ULL << 63)
#define XDPSG_RX_DENSE_SHIFT 10
#define XDPSG_RX_SKIP_MIN 8
#define XDPSG_RX_SKIP_SPAN 16 /* a power of 2 */

/*
 * xdp-sink's in-kernel counters: one PERCPU_ARRAY entry per receive queue
 * (queues at or above XDPSG_MAX_QUEUES share the last slot), so each CPU
 * writes its own copy without atomics and bpftool prints the field names.
 */
#define XDPSG_MAX_QUEUES 64
#define XDPSG_STATS_SLOTS (XDPSG_MAX_QUEUES + 1)

struct sink_stats {
	__u64 packets; /* every packet the program saw */
	__u64 bytes;
	/* verdicts */
	__u64 drop;
	__u64 pass;
	__u64 tx;
	__u64 redirect; /* redirect accepted by the map lookup */
	__u64 redirect_err; /* no target in the devmap/xskmap slot */
	__u64 aborted;
	/* with --parse: what was found (inside a tunnel: what the tunnel carried) */
	__u64 udp4;
	__u64 udp6;
	__u64 tcp4;
	__u64 tcp6;
	__u64 icmp4;
	__u64 icmp6;
	__u64 other; /* valid, but none of the above */
	/* with --parse: parse errors by reason */
	__u64 err_eth; /* shorter than an Ethernet (+VLAN) header */
	__u64 err_ip; /* truncated IP header, bad version or IHL < 5 */
	__u64 err_ip6_ext; /* IPv6 extension headers truncated or more than 8 */
	__u64 err_udp; /* truncated UDP header */
	__u64 err_tcp; /* truncated TCP header or a bad data offset */
	__u64 err_icmp; /* truncated ICMP header */
	__u64 err_tunnel; /* truncated tunnel header */
	/* with --parse: what frames were carried in (one frame may count in several) */
	__u64 vlan; /* one 802.1Q/802.1ad tag or more */
	__u64 qinq; /* two tags */
	__u64 ip6_ext; /* IPv6 extension headers walked */
	__u64 vxlan;
	__u64 geneve;
	__u64 gre;
	__u64 ipip; /* IPv4 or IPv6 in IPv4 or IPv6 */
	/*
	 * drop --sample N: frames since this slot's last sample on this CPU.
	 * Not a count (summing it means nothing); it lives here because the
	 * program already holds this entry, so sampling costs no extra lookup.
	 */
	__u64 sample_countdown;
	/*
	 * xsk: the sampled receive time's state on this CPU (struct
	 * xdpsg_rx_meta), kept here for the same reason. Not counts either.
	 */
	__u64 rx_clock_last; /* the last timed frame's time */
	__u32 rx_clock_frames; /* frames since then, counting the next timed one */
	__u32 rx_clock_skip; /* frames still to go untimed */
	/*
	 * --packet-op read-data: the bytes read, folded in, so the compiler
	 * keeps the reads. Not a count either.
	 */
	__u64 read_sum;
};

/*
 * xdp-sink redirect-cpu: what the program on the cpumap entries saw, one
 * PERCPU_ARRAY entry whose copy of each CPU is that CPU's: the per-CPU
 * counts are the remote CPUs' own, without atomics.
 */
struct sink_cpumap_stats {
	__u64 packets;
	__u64 bytes;
	__u64 drop; /* --remote-action drop */
	__u64 pass; /* --remote-action pass: handed to the stack on that CPU */
};

/* --packet-op: what the program does to each frame before its verdict. */
enum xdpsg_packet_op {
	XDPSG_OP_NONE,
	XDPSG_OP_READ_DATA,
	XDPSG_OP_SWAP_MACS,
};

/*
 * xdp-gen kernel mode: the live-frames program rewrites each frame from these.
 * User space builds them with pkt.h (the same templates and checksum deltas as
 * the AF_XDP path), so both modes put identical bytes on the wire.
 *
 * The input frame of BPF_PROG_RUN is the largest template; smaller sizes are
 * made by trimming the tail (the payload pattern depends only on the offset).
 */
#define XDPSG_GEN_MAX_SIZES 16 /* templates (IMIX sizes) */
#define XDPSG_GEN_SEQ_MAX 1024 /* IMIX size sequence length */
#define XDPSG_GEN_MAX_FLOWS 65536
/* --poisson in the kernel: exponential gaps from a table of this many quantiles (a power of 2) */
#define XDPSG_GEN_EXP_GAPS 1024
#define XDPSG_GEN_EXP_FP 16 /* the table's gaps are multiples of the mean, 16 fraction bits */

struct gen_size {
	__u16 len; /* frame length */
	__u16 l3_len; /* IPv4 total length / IPv6 payload length, network order */
	__u16 udp_len; /* network order */
	__u16 ip_csum; /* IPv4 header checksum of this size's template, flow 0 */
	__u16 udp_csum; /* L4 checksum of this size's template, flow 0, stamp zeroed */
	/* a tunnel's outer headers, network order as in the template */
	__u16 ol3_len; /* outer IPv4 total length / IPv6 payload length */
	__u16 oip_csum; /* outer IPv4 header checksum: constant per size */
	__u16 ol4_len; /* outer UDP length (VXLAN, GENEVE) */
	__u16 ocsum; /* outer UDP checksum, flow 0 (the stamp never changes it) */
};

/* One flow: its tuple and checksum deltas from flow 0 (cf. struct pkt_flow). */
struct gen_flow {
	__u64 saddr; /* IPv4: low 32 bits hold the address; IPv6: low 64 bits of it */
	__u64 daddr; /* network order, as stored in the frame */
	__u16 sport, dport; /* network order */
	__u16 ip_delta; /* ones'-complement add to the IPv4 header checksum */
	__u16 udp_delta; /* ones'-complement add to the L4 checksum */
	__u16 ocsum_delta; /* ones'-complement add to a tunnel's outer UDP checksum */
	__u16 osport; /* a tunnel's outer UDP source port, network order */
	__u16 pad[2];
	/* the stamp's keyed check after this flow's run and id (stamp_tag.h) */
	__u64 tag_v0, tag_v1, tag_v2, tag_v3;
};

/* Per-CPU state of one generator thread (the thread is pinned to that CPU). */
struct gen_cpu {
	/* set by user space before the thread's first run */
	__u32 shard; /* this thread sends flows shard, shard + shards, ... */
	__u32 shards;
	__u32 nlocal; /* number of flows in this shard */
	__u32 flow_pos; /* next flow (sequential order) */
	__u32 size_pos; /* next index into the size sequence */
	/*
	 * 1: this thread sends one flow in one size, and its input frame is
	 * that flow's frame: the program writes only the stamp's seq and time
	 * and the UDP checksum (or nothing, without a stamp).
	 */
	__u32 fixed;
	/* --stream: the fixed frame's length (the input frame is the longest stream's) */
	__u32 fixed_len;
	__u16 fixed_ip_csum; /* the fixed frame's (outer) IPv4 header checksum */
	__u16 fixed_pad;
	__u64 rng; /* xorshift64* state for random flow order; nonzero */
	/*
	 * --rate: the program sends a frame only when it is due, t0 + packets *
	 * 1e9 / rate ns, and skips the run (XDP_DROP, nothing sent) otherwise;
	 * behind schedule it catches up no faster than min_gap_ns apart (half
	 * the interval), so frames stay spread out. rate 0: every run sends.
	 * The product would wrap after 2^64 / 1e9 frames (31 minutes at
	 * 10 Mpps), so the schedule is kept as a quotient and a remainder
	 * advanced by one step per frame sent (gen_prog_set_schedule()):
	 * due_ns * rate + due_rem = packets * 1e9, exact, no division per
	 * frame; due_ns saturates (never due) past 2^64 ns.
	 */
	__u64 rate; /* frames per second of this CPU's thread */
	__u64 limit; /* with rate: the most frames to send; 0: no limit */
	__u64 min_gap_ns;
	__u64 t0; /* the first run's time, set by the program */
	__u64 last_ns; /* when the last frame went */
	__u64 due_ns; /* the next frame is due at t0 + due_ns */
	__u64 due_rem; /* and due_rem / rate of a nanosecond */
	__u64 step_ns, step_rem; /* 1e9 / rate and 1e9 % rate: one frame's interval */
	/* counted by the program */
	__u64 packets; /* frames the program redirected */
	__u64 bytes;
	__u64 redirect_err; /* bpf_redirect refused the frame */
	/* fixed frames: the one flow's next seq and its L4 checksum sum without the stamp's words */
	__u64 fixed_udp_sum;
	__u32 fixed_seq;
	__u32 fixed_flow;
	__u64 fixed_tag[4]; /* the one flow's keyed check state (struct gen_flow's tag_v*) */
	/* the stamp's time, read once every clock_every frames (see xdp_gen.bpf.c) */
	__u32 clock_left;
	__u64 clock_ns;
	__u64 clock_reads; /* how often it was read for the stamps: the tests' proof of clock_every */
	/*
	 * Shapes, with rate set (user/gen/pace.h says what they mean). --burst:
	 * 'burst' frames back to back, one burst due every burst_gap_ns from
	 * t0, a late one no sooner than half a gap after the last one's last
	 * frame (last_ns).
	 * --poisson: the next frame due step_ns x an exponential quantile
	 * from exp_gaps, picked by gap_rng. min_gap_ns is 0 with either.
	 * A burst begins only at the first run of one of the kernel's batches
	 * of batch_runs runs (batch_pos counts them; every call's repeat is a
	 * multiple of batch_runs), so a burst no longer than a batch leaves in
	 * one flush, not split around the receive work of its first part.
	 */
	__u64 burst, burst_gap_ns, burst_left, burst_start;
	__u32 batch_runs, batch_pos;
	__u64 poisson, gap_rng;
};

/*
 * Several streams in kernel mode (--stream): one program per stream, each
 * loaded with its own layout and maps, and a dispatcher that BPF_PROG_RUN
 * runs, which tail-calls the stream whose frame is due. Live-frame pages
 * keep what the last frame left in them, and that may be another stream's,
 * so a stream's program copies the start of its template (headers and
 * stamp, the longest of any stream's) into the frame before it writes the
 * rest.
 */
#define XDPSG_GEN_MAX_STREAMS 16
#define XDPSG_LIVE_FRAME_MAX 3408 /* the largest frame BPF_PROG_RUN live frames takes */
#define XDPSG_GEN_COPY_MAX 256 /* headers and stamp a stream's program copies: a power of 2 */

struct gen_tmpl {
	__u8 b[XDPSG_GEN_COPY_MAX + 8]; /* + 8: the last move's offset is masked to below the max */
};

/* Per CPU, shared by the dispatcher and every stream's program. */
struct gen_sched {
	__u32 next; /* the stream tried first in the next run (round robin) */
	/* bit i: stream i has frames left on this CPU (its program clears it at its limit) */
	__u32 live;
	/*
	 * The clock, read by the dispatcher: every run when a stream is paced,
	 * else once a batch; the stamps' send time and the pacing's now.
	 */
	__u64 now;
	__u32 clock_left;
	__u32 pad;
	/* stream i's next frame is due at due[i] (0: whenever it is its turn) */
	__u64 due[XDPSG_GEN_MAX_STREAMS];
	/* stream i's first and last frame on this CPU (the clock above), for its rate */
	__u64 first_ns[XDPSG_GEN_MAX_STREAMS];
	__u64 last_ns[XDPSG_GEN_MAX_STREAMS];
};

/*
 * xdp-gen kernel mode's marks (docs/stamp.md): a thread builds a batch of
 * marks into its own range of mark_frames (from 'base', which user space
 * sizes by the threads' batches) and its CPU's entry of mark_cpu (indexed by
 * CPU, so threads never write each other's), then runs xdp_gen_mark through
 * BPF_PROG_RUN live frames on that CPU (the receive queue of a veth peer
 * follows the sending CPU): each run copies the next mark into the frame and
 * redirects it to tx_port, as the data frames go. A call costs a page pool's
 * setup and teardown (measured 20-40 ms here: an RCU grace period), so a
 * batch is as large as a round of the thread's marks, up to
 * XDPSG_GEN_MARK_BATCH.
 */
#define XDPSG_GEN_MARK_BATCH 4096

struct gen_mark_frame {
	__u32 len; /* at most XDPSG_GEN_COPY_MAX */
	__u32 pad;
	__u8 b[XDPSG_GEN_COPY_MAX + 8]; /* + 8: the last move's offset is masked as copy_tmpl's */
};

struct gen_mark_cpu {
	__u32 next; /* the next of this call's marks this CPU's program sends */
	__u32 n; /* marks in this call */
	__u32 base; /* the first of them in mark_frames */
	__u32 pad;
	__u64 sent; /* marks redirected */
	__u64 redirect_err;
};

/* Transmit results seen by the raw tracepoints, per CPU, for one target device. */
struct gen_xmit_stats {
	__u64 sent; /* xdp_devmap_xmit: frames the driver took */
	__u64 drops; /* xdp_devmap_xmit: frames it refused (ring full, no NAPI) */
	__u64 err; /* xdp_redirect_err: frames that could not be queued at all */
};

#endif
