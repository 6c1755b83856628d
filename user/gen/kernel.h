/* SPDX-License-Identifier: GPL-2.0 */
/* xdp-gen kernel mode's state, shared by its setup and books (kernel.c) and its send loops (kernel_loop.c). */
#ifndef XDPSG_GEN_KERNEL_H
#define XDPSG_GEN_KERNEL_H

#include <stdbool.h>
#include <linux/types.h>

#include "gen.h"
#include "shared.h"

struct xdp_gen_bpf;
struct gen_cpu;
struct iface_estats;
struct bpf_link;
struct gen_xmit_stats;

struct kernel_gen {
	struct xdp_gen_bpf *skel;
	int prog_fd; /* what BPF_PROG_RUN runs: xdp_gen, or with --stream xdp_gen_streams */
	/* --stream: each stream's own program and maps (kernel_streams.c) */
	struct xdp_gen_bpf *sk[XDPSG_GEN_MAX_STREAMS];
	unsigned int nsk;
	__u8 *frames; /* BPF_PROG_RUN's input per thread (gen_prog_input_frame()) */
	unsigned int frame_len;
	struct gen_cpu *cpu_vals; /* lookup buffer, one per possible CPU */
	struct iface_estats *estats; /* the device's own ndo_xdp_xmit counters (veth) */
	bool peer_fixed;
	char peer_desc[96];
	/*
	 * Tracepoints, where the kernel has them: [TP_ERR] xdp_redirect_err
	 * (fires only on a failure) and [TP_XMIT] xdp_devmap_xmit (fires for
	 * every bulk of up to 16 frames). Both count this process's frames only:
	 * a device's xdp_xmit counters count every sender's.
	 */
	struct bpf_link *tp_links[2];
	struct gen_xmit_stats *tp_vals;
	__u32 *mark_base; /* each thread's first slot for its marks (xdp_gen_mark) */
};

enum { TP_XMIT, TP_ERR };

/* The mode's counter in gen_counters.m[]. */
enum { KERN_REDIRECT_ERR };

static inline struct kernel_gen *kg(const struct gen *g)
{
	return g->m;
}

void *kernel_worker(void *arg);
/* Marks (marks.h): struct gen_mode's mark_send and mark_sync. */
int kernel_mark_send(struct gen_thread *t, void *const *frames, const __u32 *lens, unsigned int n);
int kernel_mark_sync(struct gen_thread *t);

/* --stream (kernel_streams.c): after the run's own object is loaded and its target set. */
int kernel_streams_setup(struct gen *g);
bool kernel_streams_paced(const struct gen *g);
int kernel_streams_read(struct gen_thread *t, __u32 *live);
void kernel_streams_sample(struct gen *g, struct gen_snapshot *snap);
void kernel_streams_destroy(struct kernel_gen *k);

#endif
