/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_GEN_PROG_H
#define XDPSG_GEN_PROG_H

/*
 * Feeding xdp_gen.bpf.c from pkt/gen.h: the program repeats its hot path in
 * the kernel, so it gets the generator's own templates, flows and per-shard
 * state.
 * Used by xdp-gen's kernel mode and by its tests.
 */
#include <stdbool.h>

#include "pace.h"
#include "pkt/gen.h"
#include "xdp_gen.skel.h"

/* Before load: the settings the verifier folds into constants. */
void gen_prog_set_rodata(struct xdp_gen_bpf *skel, const struct pkt_gen *g, __u32 ifindex_out);
/*
 * Before load, for gen_devmap_xmit only: where struct net_device keeps its
 * ifindex in the running kernel, from its BTF (read here, and only here: the
 * object needs no BTF otherwise). 0, or a negative errno.
 */
int gen_prog_set_netdev_off(struct xdp_gen_bpf *skel);

/* One size: lengths and base checksums as they are in its template. */
void gen_size_from_tmpl(const struct pkt_gen *g, unsigned int t, struct gen_size *out);

/* After load: the target device (ifindex_out) in tx_port, and its map id for the tracepoints. */
int gen_prog_set_target(struct xdp_gen_bpf *skel);

/* After load: sizes, the size sequence, flows, their next sequence numbers, the target. */
int gen_prog_fill_maps(struct xdp_gen_bpf *skel, const struct pkt_gen *g);

/*
 * The per-CPU state of the thread that will run on 'cpu', from its shard's
 * generator; with rate > 0 the program paces that CPU's frames itself and
 * sends at most limit (0: no limit). Call from one thread at a time
 * (read-modify-write of all CPUs).
 */
int gen_prog_set_cpu(struct xdp_gen_bpf *skel, const struct pkt_gen *g, int cpu, __u64 rate,
		     __u64 limit);

/*
 * A thread with one flow in one size sends a fixed frame: its input frame
 * already holds that flow, and the program rewrites only the stamp's seq
 * and time and the UDP checksum.
 */
/* The same for one stream's program (--stream): never fixed, the limit kept even unpaced. */
int gen_prog_set_stream_cpu(struct xdp_gen_bpf *skel, const struct pkt_gen *g, int cpu, __u64 rate,
			    __u64 limit);

bool gen_prog_fixed(const struct pkt_gen *g);

/*
 * The thread's BPF_PROG_RUN input frame, pkt_gen_max_len(g) bytes: its
 * flow's frame when fixed, else the largest template. The program relies on
 * it: pass this frame, not another.
 */
void gen_prog_input_frame(const struct pkt_gen *g, void *frame);

/*
 * With c->rate set: the pacing schedule of a CPU that has sent 'packets'
 * frames (struct gen_cpu: due_ns, due_rem and the per-frame step), exact
 * for any count, due_ns saturated past 2^64 ns. gen_prog_set_cpu() starts
 * it at 0; tests start it anywhere.
 */
void gen_prog_set_schedule(struct gen_cpu *c, __u64 packets);

/*
 * After gen_prog_set_cpu() with a rate: the thread's shape from its pace
 * (pace_shape()): bursts, or Poisson gaps (which also fills the program's
 * table of exponential quantiles). batch: the runs in each of the kernel's
 * batches (BPF_PROG_RUN's batch_size); bursts begin at a batch's first run,
 * so every call's repeat must then be a multiple of it (0: anywhere).
 */
int gen_prog_set_shape(struct xdp_gen_bpf *skel, int cpu, const struct pace *p, __u32 batch);

/* The quantiles of the exponential distribution the program draws --poisson gaps from. */
void gen_prog_exp_table(__u32 *q, unsigned int n);

/* What the program counted for one CPU; -errno if the map cannot be read. */
int gen_prog_cpu_state(struct xdp_gen_bpf *skel, int cpu, struct gen_cpu *out);

/*
 * --stream: the run's object runs the dispatcher xdp_gen_streams over
 * nstreams streams (before its load; paced: some stream has a rate).
 */
void gen_prog_set_dispatch(struct xdp_gen_bpf *skel, unsigned int nstreams, bool paced);

/*
 * After the run's object is loaded and its target set: stream idx's own
 * xdp_gen for g (its layout, flows, template), sharing the run's target and
 * schedule, in the run's stream_progs. copy_len: the longest
 * pkt_gen_copy_len() of the streams, which each frame starts with from its
 * template (0 with one stream; at most XDPSG_GEN_COPY_MAX, else -E2BIG).
 * *out is the caller's to destroy, also on failure.
 */
int gen_prog_load_stream(struct xdp_gen_bpf *run, const struct pkt_gen *g, unsigned int idx,
			 bool paced, __u32 copy_len, struct xdp_gen_bpf **out);

/* The schedule of the thread on 'cpu' from its start: the streams it sends (bit i: stream i). */
int gen_prog_set_live(struct xdp_gen_bpf *run, int cpu, __u32 live);

/*
 * After a run of the thread on 'cpu': the program's next sequence number of
 * each flow g sends there (its shard), into g->seq: the frames each sent.
 */
int gen_prog_read_seqs(struct xdp_gen_bpf *skel, struct pkt_gen *g, int cpu);

/* Before load: room for 'slots' marks at a time, over all threads (xdp_gen_mark). */
void gen_prog_size_marks(struct xdp_gen_bpf *skel, __u32 slots);

/*
 * Marks (docs/stamp.md): send n frames (at most XDPSG_GEN_MARK_BATCH, each at
 * most XDPSG_GEN_COPY_MAX bytes) through xdp_gen_mark, from slot base on (the
 * calling thread's own range), one BPF_PROG_RUN live frames call of batches
 * of 'batch' on the calling thread's CPU, which must be 'cpu' (pinned).
 * Returns how many the program redirected, or -errno (-E2BIG: past the slots).
 */
int gen_prog_send_marks(struct xdp_gen_bpf *skel, int cpu, __u32 base, void *const *frames,
			const __u32 *lens, unsigned int n, __u32 batch);

#endif
