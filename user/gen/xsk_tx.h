/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_GEN_XSK_TX_H
#define XDPSG_GEN_XSK_TX_H

/*
 * xdp-gen xsk, shared by its data path (xsk.c: each queue's thread, its
 * socket and frames) and its mode (xsk_mode.c: plan, checks, reports).
 */
#include <stdbool.h>
#include <linux/types.h>

struct gen_thread;
struct replay_q;
struct rtt_q;
struct xsk_queue;

/* One queue's socket and what its thread keeps about its frames. */
struct xsk_tx {
	struct xsk_queue *q;
	bool zerocopy;
	__u64 *addrs; /* a batch of frame addresses */
	__u32 *lens; /* per UMEM frame: length written (| XSK_LEN_MARK), for bytes at completion */
	__u64 marks_done; /* marks' frames back from the completion ring */
	struct replay_q *rp; /* --pcap: the file's frames, handed out in turn */
	struct rtt_q *rtt; /* --rtt: the returns, in this socket's rx ring */
	char accounting[160]; /* frame accounting check at exit */
	bool accounting_ok;
	/*
	 * A frame larger than a UMEM frame goes out as a chain of descriptors
	 * (XDP_USE_SG) over slot_frames consecutive UMEM frames (a power of
	 * two, so a completion's address names its slot): at most chain_max
	 * descriptors, the last without XDP_PKT_CONTD.
	 */
	__u32 slot_frames, chain_max;
	__u32 chunk_shift; /* log2 of the UMEM frame size */
	__u64 slot_mask; /* slot_frames x UMEM frame size, less one */
};

/*
 * The longest chain a frame may take: veth's copy mode builds one skb of at
 * most MAX_SKB_FRAGS (17) pages and a head; a power of two below that.
 */
#define GEN_XSK_SLOT_MAX 16

/* The queue's thread: set up, send until told to stop or done, drain. */
void *gen_xsk_worker(void *arg);
/* Marks through the queue's own socket; how many completed. */
int gen_xsk_mark_send(struct gen_thread *t, void *const *frames, const __u32 *lens, unsigned int n);

#endif
