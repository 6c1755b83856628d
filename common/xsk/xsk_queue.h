/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_XSK_QUEUE_H
#define XDPSG_XSK_QUEUE_H

/*
 * One AF_XDP socket per queue, on its own UMEM (umem.h) and frame allocator
 * (frame_alloc.h).
 *
 *   xsk_queue_opts_init(&o)          defaults: 4096-byte frames, rx/tx rings
 *                                    2048, fill 2 x rx, completion = tx,
 *                                    batch 64, need_wakeup on, mode auto
 *   xsk_queue__create(&q, &o)        place + touch the UMEM for o.cpu, register
 *                                    it, create and bind the socket, fill the
 *                                    fill ring when rx is enabled
 *   xsk_queue__destroy(q)            NULL-safe
 *   xsk_queue_fd(q)                  the socket: the caller's own XDP program
 *                                    redirects into it through the caller's own
 *                                    XSKMAP (libxdp never loads a program here:
 *                                    XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD)
 *
 * Copy mode: AUTO tries zero-copy and falls back to copy when the driver
 * refuses (EOPNOTSUPP/EINVAL); q->zerocopy says what was bound (read back
 * with getsockopt(XDP_OPTIONS)). ZEROCOPY fails with a clear message where it
 * is unsupported (veth). Bad interface names give -ENODEV, a missing queue
 * -EINVAL, each after one pr_warn line naming the problem.
 *
 * Threading: after creation everything below belongs to ONE thread, the
 * queue's (pinned to o.cpu): rings are single-producer/single-consumer and
 * the allocator has no locks. The creating thread may hand the queue over
 * (thread creation orders the memory). Other threads may only read q->cnt,
 * q->fa->cnt and call xsk_queue_stats()/xsk_queue_ring_levels() for reports.
 *
 * Receive, one batch:
 *   n = xsk_queue_rx_peek(q, batch, &idx);       kernel_rx -> app
 *   ... xsk_queue_rx_desc(q, idx + i) ...
 *   xsk_queue_rx_recycle(q, idx, n);             frames -> free, ring released
 *   xsk_queue_refill(q);                         free -> fill ring
 *   xsk_queue_wakeup_rx(q);                      only if the kernel asks
 * Transmit, one batch:
 *   n = frame_alloc_bulk(q->fa, batch, addrs);   free -> app
 *   n = xsk_queue_tx_reserve(q, n, &idx);        (free what does not fit)
 *   ... fill xsk_queue_tx_desc(q, idx + i) ...
 *   xsk_queue_tx_submit(q, n);                   app -> kernel_tx
 *   xsk_queue_kick_tx(q);                        sendto when asked
 *   xsk_queue_complete(q);                       completion -> free
 */
#include <stdbool.h>
#include <net/if.h>
#include <linux/if_xdp.h>
#include <linux/types.h>
#include <xdp/xsk.h>

#include "xsk/frame_alloc.h"
#include "xsk/umem.h"

/* Fallbacks for headers older than the running kernel. */
#ifndef XDP_USE_SG
#define XDP_USE_SG (1 << 4)
#endif
#ifndef XDP_MAX_TX_SKB_BUDGET
#define XDP_MAX_TX_SKB_BUDGET 9 /* Linux 6.17: copy-mode tx frames per kick */
#endif
#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL 69
#endif
#ifndef SO_BUSY_POLL_BUDGET
#define SO_BUSY_POLL_BUDGET 70
#endif
#ifndef SO_BUSY_POLL
#define SO_BUSY_POLL 46
#endif

#define XSK_QUEUE_RING_DEFAULT 2048
#define XSK_QUEUE_BATCH_DEFAULT 64
#define XSK_QUEUE_BUSY_POLL_USECS_DEFAULT 20

enum xsk_copy_mode {
	XSK_COPY_MODE_AUTO = 0,
	XSK_COPY_MODE_COPY,
	XSK_COPY_MODE_ZEROCOPY,
};

/* Multi-buffer AF_XDP (Linux 6.6), for uapi headers older than that. */
#ifndef XDP_USE_SG
#define XDP_USE_SG (1 << 4)
#endif
#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD (1 << 0) /* in xdp_desc.options: the frame goes on in the next one */
#endif

struct xsk_queue_opts {
	const char *ifname;
	__u32 queue_id;
	int cpu; /* cpu of the queue thread: the UMEM goes on its node; -1 = current */
	__u32 frame_size; /* 2048 or 4096 */
	__u32 nr_frames; /* 0: fill (if rx) + tx (if tx) ring sizes */
	/*
	 * UMEM frames per allocator frame, a power of two (0 means 1): a frame
	 * larger than one UMEM frame goes out as a chain (sg) from consecutive
	 * ones. nr_frames counts the allocator's frames, each this many.
	 */
	__u32 slot_frames;
	__u32 headroom;
	__u32 rx_size, tx_size; /* powers of two */
	__u32 fill_size; /* 0: 2 x rx_size */
	__u32 comp_size; /* 0: tx_size */
	bool rx, tx;
	enum xsk_copy_mode mode;
	bool need_wakeup;
	/* XDP_USE_SG: a frame of several buffers arrives as a chain of descriptors */
	bool sg;
	bool busy_poll;
	__u32 busy_poll_usecs; /* 0: 20 */
	__u32 batch; /* ring batch, and SO_BUSY_POLL_BUDGET */
	bool huge_pages;
	bool debug_alloc; /* frame_alloc debug mode: catch double/foreign frees */
};

struct xsk_queue_counters {
	__u64 rx_wakeups; /* recvfrom calls to wake the kernel's rx side */
	__u64 tx_kicks; /* sendto calls */
	__u64 tx_kick_again; /* sendto answered EAGAIN: its budget was used, frames remain */
	__u64 tx_kick_busy; /* sendto answered EBUSY/ENOBUFS: retried later */
	__u64 tx_stall_waits; /* poll() waits for room: the device took nothing for a while */
};

struct xsk_queue {
	char ifname[IF_NAMESIZE];
	int ifindex;
	__u32 queue_id;
	int fd;
	bool zerocopy; /* bound mode, as the kernel reports it */
	bool need_wakeup;
	bool busy_poll;
	int nic_node; /* for reports only: -1 for veth and other virtual devices */
	__u32 batch;
	__u32 rx_size, tx_size;
	struct umem *umem;
	struct frame_alloc *fa;
	struct xsk_socket *xsk;
	struct xsk_ring_cons rx;
	struct xsk_ring_prod tx;
	struct xsk_queue_counters cnt;
	__u32 tx_stuck; /* xsk_queue_tx_round(): rounds in a row without progress */
	/* xsk_queue_stats(): the last good reading, and how many reads failed (the reader's) */
	struct xdp_statistics last_stats;
	__u64 stats_failures;
};

/* Occupancy seen in the shared ring indexes (any thread, approximate). */
struct xsk_queue_ring_levels {
	__u32 fill; /* produced, not yet taken by the kernel */
	__u32 rx; /* received, not yet released by us */
	__u32 tx; /* submitted, not yet taken by the kernel */
	__u32 comp; /* completed, not yet drained by us */
};

void xsk_queue_opts_init(struct xsk_queue_opts *opts);
const char *xsk_copy_mode_name(enum xsk_copy_mode mode);
/* "auto", "copy", "zero-copy" (also "zc", "zerocopy"); -EINVAL otherwise. */
int xsk_copy_mode_parse(const char *s, enum xsk_copy_mode *mode);

/*
 * The AF_XDP options both tools take, one definition: a config struct holds a
 * 'struct xsk_cli' member, its option table gets XSK_CLI_PARAMS() rows (the
 * PARAM_* names come from params.h where the macro is expanded), and
 * xsk_queue_apply_cli() moves them into the socket options.
 */
struct xsk_cli {
	__u64 frame_size;
	bool copy, zero_copy, no_need_wakeup, busy_poll, huge_pages, debug_alloc;
};

#define XSK_CLI_DEFAULTS           \
	{                          \
		.frame_size = 4096 \
	}

#define XSK_CLI_PARAMS(type, m)                                                                          \
	PARAM_OPT("frame-size", PARAM_UINT, offsetof(type, m.frame_size), .metavar = "BYTES",            \
		  .help = "UMEM frame size: 2048 or 4096", .min = 2048, .max = 4096),                    \
		PARAM_OPT("copy", PARAM_FLAG, offsetof(type, m.copy), .help = "force copy mode"),        \
		PARAM_OPT("zero-copy", PARAM_FLAG, offsetof(type, m.zero_copy),                          \
			  .help = "force zero-copy mode"),                                               \
		PARAM_OPT(                                                                               \
			"no-need-wakeup", PARAM_FLAG, offsetof(type, m.no_need_wakeup),                  \
			.help = "wake the kernel every batch, not only when it asks (need_wakeup off)"), \
		PARAM_OPT("busy-poll", PARAM_FLAG, offsetof(type, m.busy_poll),                          \
			  .help = "prefer busy polling, budget = batch"),                                \
		PARAM_OPT("huge-pages", PARAM_FLAG, offsetof(type, m.huge_pages),                        \
			  .help = "UMEM on 2 MB huge pages"),                                            \
		PARAM_OPT("debug-alloc", PARAM_FLAG, offsetof(type, m.debug_alloc),                      \
			  .help = "check every frame free for double and foreign frees")

void xsk_queue_apply_cli(struct xsk_queue_opts *o, const struct xsk_cli *c);

/*
 * The options of one queue's socket from the command line: the interface,
 * queue and CPU, the xsk_cli options, the batch size and the rings. A receiver
 * (rx_ring > 0) gets half the rx ring's worth of frames (a whole ring's if
 * half is below a batch), all waiting in a fill ring of that size: the kernel
 * copies into a frame again only after that many others, so the memory it
 * writes stays in its cache (measured on veth in copy mode against xdpsock -r:
 * 0.99 with 4096 frames, 0.92 with 8192, 0.62 with 16384); a sender
 * (tx_ring > 0) gets a completion ring as large as the tx ring and frames for
 * both, the tx ring full and as many again on their way back.
 */
void xsk_queue_opts_cli(struct xsk_queue_opts *o, const char *ifname, __u32 queue, int cpu,
			const struct xsk_cli *c, __u32 batch, __u32 rx_ring, __u32 tx_ring);

/*
 * The checks both tools make on their AF_XDP options before any socket exists:
 * --copy with --zero-copy, zero-copy on veth, frame size, ring size. One line
 * naming the problem and the fix; 0 or -EINVAL.
 */
int xsk_queue_check_cli(const char *driver, const struct xsk_cli *c, __u64 ring_size);

int xsk_queue__create(struct xsk_queue **out, const struct xsk_queue_opts *opts);
void xsk_queue__destroy(struct xsk_queue *q);

static inline int xsk_queue_fd(const struct xsk_queue *q)
{
	return q->fd;
}

/*
 * getsockopt(XDP_STATISTICS), by one reader thread. A failed read returns
 * -errno and gives the last good reading (zeros before any), never a zeroed
 * one: the counters a report subtracts never go back.
 */
int xsk_queue_stats(struct xsk_queue *q, struct xdp_statistics *st);
void xsk_queue_ring_levels(const struct xsk_queue *q, struct xsk_queue_ring_levels *lv);

/*
 * Raise the number of frames one copy-mode tx kick may send (default 32),
 * Linux 6.17+. 0 if the kernel took it; -ENOPROTOOPT on older kernels,
 * another -errno if it refused the value (it takes XSK_TX_BUDGET_MIN, its
 * own default, up to the tx ring's entries).
 */
#define XSK_TX_BUDGET_MIN 32U
int xsk_queue_set_tx_budget(struct xsk_queue *q, __u32 budget);

/* Send/receive wakeups: a syscall only when the kernel asks (need_wakeup). */
int xsk_queue_kick_tx(struct xsk_queue *q);

/*
 * After a sender's round: did the device take or return frames (progress)?
 * XSK_QUEUE_STUCK_ROUNDS rounds in a row without (a link that went down, a
 * queue that does not drain) and the thread waits in poll() for room in the
 * tx ring, up to XSK_QUEUE_STUCK_WAIT_MS, instead of kicking in a loop at
 * full CPU. Not with busy polling, whose syscalls drive the driver.
 */
#define XSK_QUEUE_STUCK_ROUNDS 4096U
#define XSK_QUEUE_STUCK_WAIT_MS 10
bool xsk_queue_tx_round(struct xsk_queue *q, bool progress); /* true: it waited */
int xsk_queue_wakeup_rx(struct xsk_queue *q);

static inline __u32 xsk_queue_rx_peek(struct xsk_queue *q, __u32 max, __u32 *idx)
{
	__u32 n = xsk_ring_cons__peek(&q->rx, max, idx);

	frame_alloc_note_rx(q->fa, n);
	return n;
}

static inline const struct xdp_desc *xsk_queue_rx_desc(const struct xsk_queue *q, __u32 idx)
{
	return xsk_ring_cons__rx_desc(&q->rx, idx);
}

/* Release n rx descriptors whose frames the application keeps (or freed itself). */
static inline void xsk_queue_rx_release(struct xsk_queue *q, __u32 n)
{
	xsk_ring_cons__release(&q->rx, n);
}

/* Free the frames of rx descriptors idx .. idx + n - 1 and release them. */
int xsk_queue_rx_recycle(struct xsk_queue *q, __u32 idx, __u32 n);

static inline __u32 xsk_queue_refill(struct xsk_queue *q)
{
	return frame_alloc_fill_refill(q->fa, &q->umem->fill, q->batch);
}

static inline __u32 xsk_queue_complete(struct xsk_queue *q)
{
	return frame_alloc_comp_drain(q->fa, &q->umem->comp, q->batch);
}

static inline __u32 xsk_queue_tx_reserve(struct xsk_queue *q, __u32 n, __u32 *idx)
{
	return xsk_ring_prod__reserve(&q->tx, n, idx);
}

static inline struct xdp_desc *xsk_queue_tx_desc(struct xsk_queue *q, __u32 idx)
{
	return xsk_ring_prod__tx_desc(&q->tx, idx);
}

/*
 * ndesc descriptors that carry nframes frames: a frame of several UMEM frames
 * (opts.slot_frames) is a chain. Reserve for the longest chain, give back the
 * rest first with xsk_queue_tx_unreserve().
 */
static inline void xsk_queue_tx_submit_chains(struct xsk_queue *q, __u32 ndesc, __u32 nframes)
{
	frame_alloc_note_tx(q->fa, nframes);
	xsk_ring_prod__submit(&q->tx, ndesc);
}

/* n frames of one descriptor each. */
static inline void xsk_queue_tx_submit(struct xsk_queue *q, __u32 n)
{
	xsk_queue_tx_submit_chains(q, n, n);
}

/* The last n descriptors reserved were not used (libxdp has no call for it). */
static inline void xsk_queue_tx_unreserve(struct xsk_queue *q, __u32 n)
{
	q->tx.cached_prod -= n;
}

/* Descriptors the tx ring has room for now, up to n. */
static inline __u32 xsk_queue_tx_room(struct xsk_queue *q, __u32 n)
{
	return xsk_prod_nb_free(&q->tx, n);
}

static inline void *xsk_queue_frame_data(const struct xsk_queue *q, __u64 addr)
{
	return umem_frame_data(q->umem, addr);
}

#endif
