/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_FRAME_ALLOC_H
#define XDPSG_FRAME_ALLOC_H

/*
 * Per-queue UMEM frame allocator.
 *
 * Threading: an allocator is owned by exactly one thread, the one that runs its
 * queue (and therefore its fill, completion, rx and tx rings). No locks, no
 * atomics; every counter is a plain __u64 with that thread as its only writer.
 * Another thread may read the counters for statistics (a torn or stale read
 * of a u64 on x86-64 is not possible, stale is fine for stats), but only the
 * owner may call anything below except frame_alloc_check() on a quiesced
 * allocator.
 *
 * Frames are identified by their UMEM offset (aligned mode: i * frame_size).
 * The free frames are a LIFO stack: the frames freed last are handed out first
 * because they are the ones still warm in the cache.
 *
 *   frame_alloc__create(&fa, &opts) / frame_alloc__destroy(fa)
 *   n = frame_alloc_bulk(fa, want, out)  gives up to want frames, never blocks;
 *                                        returns how many (0 when exhausted)
 *   frame_free_bulk(fa, n, in)           0, or -EINVAL if something was rejected
 *   frame_alloc_one(fa, &addr) / frame_free_one(fa, addr)
 *
 * Ring helpers, one batch per call (one reserve+submit or peek+release):
 *   frame_alloc_fill_refill(fa, fill, batch)  free -> fill ring, as many as the
 *                                             ring has room for, up to batch
 *   frame_alloc_comp_drain(fa, comp, batch)   completion ring -> free
 *
 * Ownership accounting: every frame is in exactly one place.
 *   free       in this allocator (nr_free)
 *   kernel_rx  fill ring or rx ring: user space cannot see when the kernel moves
 *              a frame from the fill ring to the rx ring (zero-copy drivers keep
 *              it in the NIC ring in between), so the two are one place
 *   kernel_tx  tx ring or completion ring, for the same reason
 *   app        held by the application (allocated, or peeked from rx)
 * Transitions the allocator does itself: alloc (free -> app), free (app ->
 * free), refill (free -> kernel_rx), drain (kernel_tx -> free). The application
 * reports the others with the frame_alloc_note_*() helpers:
 *   after an rx peek of n descriptors       frame_alloc_note_rx(fa, n)
 *   when it puts held frames on the fill ring frame_alloc_note_fill(fa, n)
 *   before it submits n tx descriptors      frame_alloc_note_tx(fa, n)
 *   when it drains the completion ring itself frame_alloc_note_completed(fa, n)
 * frame_alloc_check() proves free + kernel_rx + kernel_tx + app == nr_frames.
 *
 * Debug mode (opts.debug, or FRAME_ALLOC_DEBUG defined at build time): a
 * bitmap of free frames catches double frees and foreign addresses (outside the
 * UMEM or not frame-aligned). They are rejected, counted, reported once each
 * with pr_warn (the first few) and make frame_free_bulk() return -EINVAL and
 * frame_alloc_check() fail. Without debug mode a free that would overfill the
 * stack is still rejected (-EINVAL), since that can only be a double free.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <linux/types.h>

struct xsk_ring_prod;
struct xsk_ring_cons;

struct frame_alloc_opts {
	__u32 nr_frames;
	__u32 frame_size; /* power of two: 2048 or 4096 for AF_XDP */
	bool debug;
};

struct frame_alloc_counters {
	/* where the frames not in the free stack are */
	__u64 kernel_rx;
	__u64 kernel_tx;
	__u64 app;
	/* events */
	__u64 alloc_short; /* alloc_bulk calls that got fewer than asked */
	__u64 refilled; /* frames put on the fill ring by the helper */
	__u64 completed; /* frames drained from the completion ring by the helper */
	__u64 double_free; /* rejected: frame already free (debug mode) */
	__u64 foreign; /* rejected: outside the UMEM or not aligned (debug mode) */
	__u64 overflow; /* rejected frees that would hold more than nr_frames */
};

struct frame_alloc {
	__u64 *stack; /* stack[0 .. nr_free) are free, top is most recent */
	__u32 nr_free;
	__u32 nr_frames;
	__u64 frame_size;
	__u64 frame_mask; /* frame_size - 1 */
	bool debug;
	__u64 *free_map; /* debug: bit i set = frame i is free */
	struct frame_alloc_counters cnt;
};

int frame_alloc__create(struct frame_alloc **out, const struct frame_alloc_opts *opts);
void frame_alloc__destroy(struct frame_alloc *fa);

/* Out-of-line parts of the inline functions; not for direct use. */
void frame_alloc__debug_alloc(struct frame_alloc *fa, const __u64 *out, __u32 n);
int frame_alloc__free_slow(struct frame_alloc *fa, __u32 n, const __u64 *in);

static inline __u32 frame_alloc_bulk(struct frame_alloc *fa, __u32 n, __u64 *out)
{
	if (n > fa->nr_free) {
		fa->cnt.alloc_short++;
		n = fa->nr_free;
	}
	fa->nr_free -= n;
	memcpy(out, fa->stack + fa->nr_free, (size_t)n * sizeof(*out));
	fa->cnt.app += n;
	if (fa->debug)
		frame_alloc__debug_alloc(fa, out, n);
	return n;
}

static inline int frame_free_bulk(struct frame_alloc *fa, __u32 n, const __u64 *in)
{
	if (fa->debug || n > fa->nr_frames - fa->nr_free)
		return frame_alloc__free_slow(fa, n, in);
	memcpy(fa->stack + fa->nr_free, in, (size_t)n * sizeof(*in));
	fa->nr_free += n;
	fa->cnt.app -= n;
	return 0;
}

/* 0 and *addr set, or -ENOMEM when no frame is free. */
static inline int frame_alloc_one(struct frame_alloc *fa, __u64 *addr)
{
	return frame_alloc_bulk(fa, 1, addr) ? 0 : -ENOMEM;
}

static inline int frame_free_one(struct frame_alloc *fa, __u64 addr)
{
	return frame_free_bulk(fa, 1, &addr);
}

/* The frame an address inside it belongs to (rx descriptors carry headroom). */
static inline __u64 frame_alloc_frame_of(const struct frame_alloc *fa, __u64 addr)
{
	return addr & ~fa->frame_mask;
}

static inline __u32 frame_alloc_nr_free(const struct frame_alloc *fa)
{
	return fa->nr_free;
}

/* Transitions the application makes; see the comment at the top. */
static inline void frame_alloc_note_rx(struct frame_alloc *fa, __u32 n)
{
	fa->cnt.kernel_rx -= n;
	fa->cnt.app += n;
}

static inline void frame_alloc_note_fill(struct frame_alloc *fa, __u32 n)
{
	fa->cnt.app -= n;
	fa->cnt.kernel_rx += n;
}

static inline void frame_alloc_note_tx(struct frame_alloc *fa, __u32 n)
{
	fa->cnt.app -= n;
	fa->cnt.kernel_tx += n;
}

static inline void frame_alloc_note_completed(struct frame_alloc *fa, __u32 n)
{
	fa->cnt.kernel_tx -= n;
	fa->cnt.app += n;
}

/* Returns how many frames moved. */
__u32 frame_alloc_fill_refill(struct frame_alloc *fa, struct xsk_ring_prod *fill, __u32 batch);
__u32 frame_alloc_comp_drain(struct frame_alloc *fa, struct xsk_ring_cons *comp, __u32 batch);

/*
 * Prove the accounting: 0 if free + kernel_rx + kernel_tx + app == nr_frames,
 * no place holds more than nr_frames (a counter gone negative) and, in debug
 * mode, the free bitmap agrees and nothing was rejected; -EINVAL otherwise.
 * buf (may be NULL) receives a one-line description either way, e.g.
 * "free 10 kernel_rx 20 kernel_tx 0 app 2 = 32 of 32 frames".
 */
int frame_alloc_check(const struct frame_alloc *fa, char *buf, size_t len);

#endif
