/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_GEN_RTT_H
#define XDPSG_GEN_RTT_H

/*
 * xdp-gen xsk --rtt: the frames a reflector (xdp-sink tx --reflect) sends
 * back arrive in the sending queue's own socket (its rx ring, same UMEM) and
 * are checked with the sink's own books (seqtrack.h): round trip = receive
 * time - the stamp's send time, both on this machine's clock, so no clock
 * needs to agree with the far end's.
 *
 * Threads: gen_rtt_setup()/gen_rtt_cleanup() and the reports run on the main
 * thread (reports only after the workers were joined); an rtt_q belongs to
 * its queue's worker from rtt_q_setup() to the end of its loop.
 */
#include <stdbool.h>
#include <linux/types.h>

struct gen;
struct jw;
struct metrics_w;
struct pkt_gen;
struct rtt_q;
struct xsk_queue;

/* Before the workers start: load and attach the receive program. */
int gen_rtt_setup(struct gen *g);
void gen_rtt_cleanup(struct gen *g);

/* In the worker, once its socket exists: books, and the socket in the program's map. */
int rtt_q_setup(struct gen *g, unsigned int idx, struct xsk_queue *q, struct pkt_gen *pg,
		struct rtt_q **out);

/* Whatever came back: into the books, the frames back to the allocator. */
__u32 rtt_q_poll(struct rtt_q *r);

/* Until due_ns, or earlier when a frame comes back. */
void rtt_q_wait(struct rtt_q *r, __u64 due_ns);

/* After the last send: wait for the returns of 'sent' frames, a bounded time. */
void rtt_q_drain(struct rtt_q *r, __u64 sent);

/* Summary: text lines, the "rtt" JSON object, OpenMetrics families. */
void gen_rtt_text(struct gen *g);
void gen_rtt_json(struct gen *g, struct jw *w);
void gen_rtt_metrics(struct gen *g, struct metrics_w *w);

#endif
