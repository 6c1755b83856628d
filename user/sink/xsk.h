/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_SINK_XSK_H
#define XDPSG_SINK_XSK_H

/*
 * The xsk mode's own parts: xsk.c plans the queues and runs their threads,
 * xsk_report.c turns what they counted into reports. A queue's thread is the
 * only writer of its struct xq but for cpu, which the main thread changes
 * with --follow-rx once the thread is set up; the main thread reads the
 * published counters while the run goes on, and the trackers (per-run books) only after the
 * threads are joined.
 */
#include "capture.h"
#include "measure/hist.h"
#include "measure/seqtrack.h"
#include "sink.h"

/*
 * Where a queue's thread stands on following its receive CPU: never (--cpus,
 * --no-follow-rx), always (--follow-rx), or automatically: it
 * stays while the queue keeps up, moves when the socket drops frames, and
 * keeps the move only if the queue then delivers at least as much.
 */
enum xq_follow {
	XQ_FOLLOW_OFF,
	XQ_FOLLOW_ALWAYS,
	XQ_FOLLOW_AUTO, /* not moved yet */
	XQ_FOLLOW_TRIAL, /* moved; judged at the next look */
	XQ_FOLLOW_MOVED, /* kept the move; follows the receive CPU from now on */
	XQ_FOLLOW_RETURNED, /* the move delivered less: back home for good */
};

/* What one queue's thread has counted. */
struct xq_counts {
	__u64 rx_packets; /* delivered to user space */
	__u64 rx_bytes;
	__u64 foreign; /* without a stamp */
	__u64 forged; /* with a stamp whose keyed check failed: in no books */
	__u64 marks; /* the generators' start and end marks */
	__u64 stray; /* frames of runs closed while on probation: received, not checked */
	__u64 runs; /* books the queue opened (over queues: the most any queue opened) */
	struct seqtrack_counts st;
	/*
	 * stamped frames timed by the NIC's receive timestamp (--hw-time), the
	 * kernel's receive time (the program's metadata) or by the read
	 */
	__u64 rx_time_hw, rx_time_kernel, rx_time_user;
	/* stamped frames the receive-time sample skipped: booked, in no latency figure */
	__u64 rx_untimed;
	/* frames checked from the program's records, not read (shared.h, struct xdpsg_xsk_rec) */
	__u64 rx_recorded;
	struct hist_coarse live; /* their latency, coarse: exported every interval */
	/* receive times of the first and the last batch, 0 before any: not deltas */
	__u64 first_ns, last_ns;
};

/*
 * The stamp checks as the reports show them, of a queue's books or a run's;
 * the rows of the books' tables (counters.c) point here. With settled, lost
 * is only what no late frame can take back any more (an exposition while
 * the run goes on: a counter never falls) and lost_pending the rest.
 */
struct xsk_books {
	__u64 stamped, foreign, forged, lost, lost_at_end, missing_head, duplicates, reordered,
		late;
	__u64 lost_pending, marks, unplaced, stray;
};

static inline void xsk_books_of(const struct seqtrack_counts *st, __u64 foreign, __u64 forged,
				__u64 marks, __u64 stray, bool settled, struct xsk_books *b)
{
	*b = (struct xsk_books){
		.stamped = st->received,
		.foreign = foreign,
		.forged = forged,
		.lost = settled ? st->lost_final : st->lost,
		.lost_at_end = st->lost_at_end,
		.missing_head = st->missing_head,
		.duplicates = st->duplicates,
		.reordered = st->reordered,
		.late = st->late,
		.lost_pending = settled ? st->lost - st->lost_final : 0,
		.marks = marks,
		.unplaced = st->unplaced,
		.stray = stray,
	};
}

/* A queue's books as the reports show them. */
static inline void xsk_books_of_queue(const struct xq_counts *c, bool settled, struct xsk_books *b)
{
	xsk_books_of(&c->st, c->foreign, c->forged, c->marks, c->stray, settled, b);
}

/*
 * Written by the queue's thread only, read by main: a cache line of its own,
 * and a sequence count so that a reading is one batch's (counter.h).
 */
struct xq_published {
	__u64 seq;
	struct xq_counts c;
} __attribute__((aligned(64)));

/*
 * A follow trial is held to the best of this many whole looks at home, not
 * the last one alone: on a shared machine one look can find the thread
 * starved (another task, a stolen vCPU), and against that any move pays.
 */
#define XQ_FOLLOW_HOME_LOOKS 3

struct xq {
	struct run_worker w;
	struct sink *sk;
	unsigned int queue;
	__u64 read_sum; /* --read-data: what it read, kept so that the reads are not optimised away */
	__u64 rx_off; /* xsk_state's: the kernel's receive times into this process's clock */
	__u64 hw_off; /* the NIC's (CLOCK_TAI, as phc2sys keeps it) into this process's clock */
	bool unkeyed; /* test hook: stamps read without their keyed check (xsk.c) */
	int cpu; /* where the thread runs (--follow-rx moves it) */
	int umem_node; /* the NUMA node of the queue's UMEM: --follow-rx stays on it */
	int rx_cpu; /* the CPU that ran most of the program's work for the queue at the last look, or -1 */
	unsigned int cpu_moves;
	/* Following the receive CPU (main thread only; see follow_queue in xsk.c). */
	enum xq_follow follow;
	int home_cpu; /* where an automatic move came from */
	double home_pps; /* delivered per second at home: the best of home_looks */
	double home_looks[XQ_FOLLOW_HOME_LOOKS]; /* pps of the last whole looks at home, newest first */
	__u64 look_ns, look_rx, look_drops; /* the queue at the last look */
	bool look_busy; /* the last look saw traffic: the one after it had traffic throughout */
	unsigned int trial_looks; /* looks since the trial's move (FOLLOW_TRIAL_LOOKS ends it) */
	struct xsk_queue *q;
	struct seqtrack *tr;
	/* Records (shared.h, struct xdpsg_xsk_rec): this queue's ring, or NULL without */
	const struct xdpsg_xsk_rec *recs;
	struct xdpsg_xsk_ring *ring;
	__u32 rec_mask;
	__u64 rec_next; /* the ticket of the next frame the socket delivers */
	bool cont; /* the last descriptor read said XDP_PKT_CONTD: the frame goes on */
	struct capq *cap; /* --capture: this queue's ring to the writer */
	/* --capture of frames of several buffers: the chain gathered whole, then offered */
	__u8 *gather;
	__u32 gather_len, gather_cap;
	int gather_v;
	bool gather_st_ok;
	struct stamp gather_st;
	struct xq_published pub;
	char accounting[160];
	bool accounting_ok;
};

struct xsk_state {
	unsigned int nxq;
	/* The receive clock: this process's CLOCK_MONOTONIC, its id, and what turns a BPF time into it */
	__u64 clock_id, rx_off;
	struct clock_set clocks; /* every clock a run may be stamped on, against that one */
	struct xq *xq;
	struct capture *cap; /* --capture */
	__u32 frame_size; /* UMEM frame size in use: --frame-size, or chosen from the MTU */
	__u32 max_frame; /* the longest frame: frame_size, or the MTU's where frames take several */
	/*
	 * Records: the program copies each frame's stamp for the thread (shared.h),
	 * rec_n a queue; both maps mapped here, recs read-only.
	 */
	bool records;
	__u32 rec_n;
	void *recs_map, *rings_map;
	size_t recs_len, rings_len;
	/* --follow-rx: when to look next, and each queue's per-CPU packets at the last look */
	__u64 follow_next_ns;
	__u64 *follow_seen; /* nxq x ncpus */
};

/*
 * Of VETH, veth's drops after XDP over a span, those no socket counter names:
 * veth counts a failed redirect into a socket as a drop of its own, and the
 * socket counts most of them too (rx_dropped, rx_ring_full); the rest failed
 * before any socket counter saw them, and veth_rx_drops names them.
 */
static inline __u64 xsk_veth_unnamed(__u64 veth, const struct xdp_statistics *x)
{
	__u64 named = x->rx_ring_full + x->rx_dropped;

	return veth > named ? veth - named : 0;
}

/* The mode's part of a reading: each queue's counters, then each socket's XDP_STATISTICS. */
static inline struct xq_counts *xsk_snap_xc(const struct sink_snap *s)
{
	return s->mode;
}

static inline struct xdp_statistics *xsk_snap_xs(const struct sink *sk, const struct sink_snap *s)
{
	const struct xsk_state *xs = sk->ms;

	return (struct xdp_statistics *)(xsk_snap_xc(s) + xs->nxq);
}

/*
 * xsk_readings.c: the mode's struct sink_mode_ops readings (snap_size, read,
 * received, span, drops); totals over the queues of a reading, and the change
 * between two readings.
 */
size_t xsk_snap_size(const struct sink *sk);
void xsk_read(struct sink *sk, struct sink_snap *s);
__u64 xsk_received(const struct sink *sk, const struct sink_snap *s, __u64 *bytes);
bool xsk_span(const struct sink *sk, const struct sink_snap *s, __u64 *first, __u64 *last);
void xsk_drops(const struct sink *sk, const struct sink_snap *a, const struct sink_snap *b,
	       struct sink_drops *d);
void xsk_total(const struct sink *sk, const struct sink_snap *s, struct xq_counts *c,
	       struct xdp_statistics *x);
void xsk_deltas(const struct sink *sk, const struct sink_snap *a, const struct sink_snap *b,
		struct xq_counts *c, struct xdp_statistics *x);

/* Every run the queues saw, merged over queues and reopenings, with its latency. */
struct xsk_run_row {
	struct seqtrack_summary s;
	struct hist_summary lat;
};

struct xsk_runs {
	unsigned int n;
	struct xsk_run_row *row;
	struct seqtrack_counts sum; /* every run's books, the folded ones' too */
	struct hist all; /* the latency of every run on this host's clock, the folded ones' too */
	struct hist all_ipdv; /* every run's |IPDV| */
	double all_jitter_ns; /* their RFC 3550 J, weighted by IPDV counts */
	__u64 folded_runs; /* run records folded away for room, and their books */
	struct seqtrack_summary folded;
	struct hist_summary folded_lat;
	__u64 closed_runs,
		closed_lost; /* books closed for room (in the figures), and their losses */
	__u64 stray, stray_runs; /* frames of runs closed on probation: never checked */
	__u64 marks;
	__u64 end_ns; /* when the books were read: a run still arriving then ended after the sink */
};

/* How a run's end stands (xsk_runs.c). */
enum xsk_run_end {
	RUN_END_SEEN, /* every flow's end mark arrived: the frames after its last are counted */
	RUN_END_PARTIAL, /* some flows' */
	RUN_END_NONE, /* none */
	RUN_END_SINK_STOPPED, /* none, and its frames were still arriving when the sink stopped */
};

/*
 * xsk_plan.c: the mode's struct sink_mode_ops plan, and configure and loaded
 * (the program's records, shared.h's struct xdpsg_xsk_rec: set up, mapped,
 * and unmapped at cleanup).
 */
int xsk_plan(struct sink *sk);
void xsk_configure(struct sink *sk);
int xsk_loaded(struct sink *sk);
/* At cleanup, once the queues' threads have stopped. */
void xsk_records_unmap(struct xsk_state *xs);

/* xsk_runs.c. The runs are read once the queues' threads have ended. */
int xsk_runs_collect(const struct sink *sk, struct xsk_runs *r);
void xsk_runs_free(struct xsk_runs *r);
struct seqtrack **xsk_trackers(const struct xsk_state *xs);
enum xsk_run_end xsk_run_end_of(const struct xsk_runs *r, const struct seqtrack_summary *s);
struct causes_books xsk_run_causes_books(const struct xsk_runs *r,
					 const struct seqtrack_summary *s);
const char *xsk_run_end_str(enum xsk_run_end e);
const char *xsk_run_clock_note(const struct seqtrack_summary *s, char *buf, size_t len);
/* Where a timed run's clock error comes from: one clock, or two synchronised ones. */
const char *xsk_run_sync_basis(const struct seqtrack_summary *s);
double xsk_run_rate(const struct seqtrack_summary *s);
void xsk_json_run(const struct sink *sk, struct jw *w, const char *key, const struct xsk_runs *r,
		  const struct seqtrack_summary *s, const struct hist_summary *lat);
void text_run_notes(const struct xsk_runs *r, const struct seqtrack_summary *s);
void text_runs_notes(const struct xsk_runs *r, bool verbose);
void xsk_runs_ends(const struct xsk_runs *r, unsigned int *unseen, unsigned int *stopped);

/* xsk_report.c */
void xsk_json(const struct sink *sk, struct jw *w, const struct sink_snap *a,
	      const struct sink_snap *b, const struct sink_stats *d, const struct sink_drops *dr,
	      enum run_report kind);
void xsk_text(const struct sink *sk, const struct sink_snap *a, const struct sink_snap *b,
	      const struct sink_stats *d, enum run_report kind);
int xsk_finish(struct sink *sk);
void xsk_result(const struct sink *sk, const struct sink_snap *a, const struct sink_snap *b,
		const struct sink_drops *dr);

/* xsk_metrics.c */
void xsk_metrics(const struct sink *sk, struct metrics_w *w, const struct sink_snap *a,
		 const struct sink_snap *b, enum run_report kind);

/* xsk_follow.c: every FOLLOW_NS, each queue's thread toward the CPU that receives its frames */
void xsk_follow_tick(struct sink *sk, const struct sink_snap *s);

#endif
