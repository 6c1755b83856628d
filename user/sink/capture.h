/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_SINK_CAPTURE_H
#define XDPSG_SINK_CAPTURE_H

/*
 * xdp-sink xsk --capture: received frames into a pcap or pcapng file, written
 * off the receive threads. pcapng (a name ending in .pcapng, or
 * --capture-format) has one interface per receive queue ("IFNAME:qN"), a
 * comment on every frame the books did not take in order (its verdict: gap
 * before, gap after, duplicate, reordered, late, implausible, ts-future,
 * ts-stale, unplaced, foreign; and its run, flow and sequence number), and
 * each queue's counts in a statistics block at the end.
 *
 * Each receive queue has a single-producer/single-consumer ring of slots;
 * the queue's thread copies at most --snaplen bytes of a frame it keeps into
 * the next slot (the one copy capturing costs it) and never waits: when the
 * ring is full the frame is not captured and 'dropped' counts it, the packet
 * itself is unaffected. One writer thread empties the rings into the file.
 *
 * --capture-what anomalies keeps what a loss hunt needs: frames without a
 * stamp (foreign), every frame the sequence books did not take in order
 * (duplicate, reordered, late, implausible, a send time in the future or from
 * before the start, a run beyond the table), and for every gap the frame on
 * either side of it: the last in-order frame of the flow, kept in a one-slot
 * copy per flow (a table of CAPTURE_FLOWS entries by run and flow; a flow whose
 * entry another flow took has no "before" frame), and the frame after the gap.
 *
 *   capture_check(cfg)          preflight: the options and the file's path
 *   capture__create(&c, cfg, n, fs, ifname, queues)
 *                               open the file, start the writer; n queues
 *                               (their numbers in queues[]) whose UMEM frames
 *                               are fs bytes
 *   capture_queue(c, i)         queue i's ring, for its thread only
 *   capture_offer(cq, ...)      receive thread, per frame
 *   capture_queue_backlog(cq, &dropped)
 *                               receive thread: frames offered that the
 *                               writer has not taken yet, and the frames
 *                               the full ring refused so far
 *   capture_queue_stats(c, i, received, dropped)
 *                               main, once the receive threads are done:
 *                               queue i's socket counts, for the file
 *   capture_finish(c)           the run has ended and the receive threads
 *                               stopped: drain, join, and rename the complete
 *                               file over FILE (idempotent; 0 or -errno)
 *   capture__destroy(c)         NULL-safe; without capture_finish (a run that
 *                               failed or never started) the new file is
 *                               removed and FILE keeps what it held
 *
 * The file is written through common/base/outfile: a new file beside FILE, never
 * through a symlink, renamed over FILE only when the capture is complete.
 */
#include <stdbool.h>
#include <linux/types.h>

#include "base/json_writer.h"
#include "sink.h"

#define CAPTURE_FLOWS 1024
#define CAPTURE_RING_SLOTS 4096

struct seqtrack;

/* Verdicts beyond seqtrack's (enum seqtrack_verdict) for capture_offer(). */
#define CAPTURE_FOREIGN -1 /* no stamp */
#define CAPTURE_UNCHECKED -2 /* --no-verify: nothing is known */
#define CAPTURE_FORGED -3 /* a stamp whose keyed check failed */

struct capture;
struct capq;
struct stamp;

int capture_check(const struct sink_cfg *cfg);
int capture__create(struct capture **out, const struct sink_cfg *cfg, unsigned int nq,
		    __u32 frame_size, const char *ifname, const unsigned int *queues);
void capture_queue_stats(struct capture *c, unsigned int i, __u64 received, __u64 dropped);
struct capq *capture_queue(struct capture *c, unsigned int i);
/* The books queue q's frames go to (NULL: none), for the loss episode a gap ends. */
void capture_queue_books(struct capq *q, const struct seqtrack *tr);
/* A frame of len bytes received at now_ns, with seqtrack's verdict (or CAPTURE_*). */
void capture_offer(struct capq *q, const void *data, __u32 len, __u64 now_ns, int verdict,
		   const struct stamp *st);
__u64 capture_queue_backlog(struct capq *q, __u64 *dropped);
int capture_finish(struct capture *c);
void capture__destroy(struct capture *c);

/* Summary members: captured, capture_dropped, capture_max_reached. */
void capture_json(const struct capture *c, struct jw *w);
void capture_text(const struct capture *c);

#endif
