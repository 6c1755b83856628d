// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <xdp/xsk.h>

#include "base/fmt.h"
#include "base/log.h"
#include "xsk/frame_alloc.h"

/* Rejected frees are reported one by one only this many times per allocator. */
#define FRAME_ALLOC_WARN_MAX 8
/* Completion entries checked per chunk on the slow (debug) path. */
#define FRAME_ALLOC_CHUNK 64

int frame_alloc__create(struct frame_alloc **out, const struct frame_alloc_opts *opts)
{
	struct frame_alloc *fa = NULL;
	__u32 i;
	int err = 0;

	if (!out || !opts || !opts->nr_frames || opts->frame_size < 64 ||
	    (opts->frame_size & (opts->frame_size - 1))) {
		err = -EINVAL;
		goto out;
	}
	fa = calloc(1, sizeof(*fa));
	if (!fa) {
		err = -ENOMEM;
		goto out;
	}
	fa->nr_frames = opts->nr_frames;
	fa->frame_size = opts->frame_size;
	fa->frame_mask = opts->frame_size - 1;
	fa->debug = opts->debug;
#ifdef FRAME_ALLOC_DEBUG
	fa->debug = true;
#endif
	fa->stack = calloc(fa->nr_frames, sizeof(*fa->stack));
	if (!fa->stack) {
		err = -ENOMEM;
		goto out;
	}
	if (fa->debug) {
		fa->free_map = calloc((fa->nr_frames + 63) / 64, sizeof(*fa->free_map));
		if (!fa->free_map) {
			err = -ENOMEM;
			goto out;
		}
	}
	/* Frame 0 on top: a fresh allocator hands out frames in address order. */
	for (i = 0; i < fa->nr_frames; i++) {
		__u64 frame = fa->nr_frames - 1 - i;

		fa->stack[i] = frame * fa->frame_size;
		if (fa->free_map)
			fa->free_map[frame / 64] |= 1ULL << (frame % 64);
	}
	fa->nr_free = fa->nr_frames;
	*out = fa;
	fa = NULL;
out:
	frame_alloc__destroy(fa);
	return err;
}

void frame_alloc__destroy(struct frame_alloc *fa)
{
	if (!fa)
		return;
	free(fa->free_map);
	free(fa->stack);
	free(fa);
}

static bool frame_is_free(const struct frame_alloc *fa, __u64 frame)
{
	return fa->free_map[frame / 64] & (1ULL << (frame % 64));
}

void frame_alloc__debug_alloc(struct frame_alloc *fa, const __u64 *out, __u32 n)
{
	__u32 i;

	for (i = 0; i < n; i++) {
		__u64 frame = out[i] / fa->frame_size;

		fa->free_map[frame / 64] &= ~(1ULL << (frame % 64));
	}
}

static __u64 rejected(const struct frame_alloc *fa)
{
	return fa->cnt.double_free + fa->cnt.foreign + fa->cnt.overflow;
}

static void warn_rejected(const struct frame_alloc *fa, const char *what, __u64 addr)
{
	if (rejected(fa) > FRAME_ALLOC_WARN_MAX)
		return;
	pr_warn("frame allocator: %s 0x%" PRIx64 " rejected (%u frames of %" PRIu64 " bytes)%s\n",
		what, (uint64_t)addr, fa->nr_frames, (uint64_t)fa->frame_size,
		rejected(fa) == FRAME_ALLOC_WARN_MAX ? "; not reporting further ones" : "");
}

/*
 * Push in[] onto the stack, taking them from *from. Debug mode checks each
 * address; without it only a push past nr_frames is refused (as a whole).
 */
static int free_checked(struct frame_alloc *fa, __u32 n, const __u64 *in, __u64 *from)
{
	__u64 limit = (__u64)fa->nr_frames * fa->frame_size;
	__u32 i, pushed = 0;
	int err = 0;

	if (!fa->debug) {
		if (n > fa->nr_frames - fa->nr_free) {
			fa->cnt.overflow++;
			warn_rejected(fa, "free overflowing the free list, first address", in[0]);
			return -EINVAL;
		}
		memcpy(fa->stack + fa->nr_free, in, (size_t)n * sizeof(*in));
		fa->nr_free += n;
		*from -= n;
		return 0;
	}
	for (i = 0; i < n; i++) {
		__u64 addr = in[i], frame = addr / fa->frame_size;

		if (addr >= limit || (addr & fa->frame_mask)) {
			fa->cnt.foreign++;
			warn_rejected(fa, "free of foreign address", addr);
			err = -EINVAL;
			continue;
		}
		if (frame_is_free(fa, frame)) {
			fa->cnt.double_free++;
			warn_rejected(fa, "double free of frame", addr);
			err = -EINVAL;
			continue;
		}
		fa->free_map[frame / 64] |= 1ULL << (frame % 64);
		fa->stack[fa->nr_free++] = addr;
		pushed++;
	}
	*from -= pushed;
	return err;
}

int frame_alloc__free_slow(struct frame_alloc *fa, __u32 n, const __u64 *in)
{
	return free_checked(fa, n, in, &fa->cnt.app);
}

__u32 frame_alloc_fill_refill(struct frame_alloc *fa, struct xsk_ring_prod *fill, __u32 batch)
{
	__u32 n, idx, first;
	const __u64 *src;

	n = xsk_prod_nb_free(fill, batch);
	if (n > batch)
		n = batch;
	if (n > fa->nr_free)
		n = fa->nr_free;
	if (!n || xsk_ring_prod__reserve(fill, n, &idx) != n)
		return 0;
	src = fa->stack + fa->nr_free - n;
	if (fa->debug)
		frame_alloc__debug_alloc(fa, src, n);
	/* The reserved slots may wrap around the end of the ring: two copies. */
	first = fill->size - (idx & fill->mask);
	if (first > n)
		first = n;
	memcpy(xsk_ring_prod__fill_addr(fill, idx), src, (size_t)first * sizeof(*src));
	if (n > first)
		memcpy(xsk_ring_prod__fill_addr(fill, idx + first), src + first,
		       (size_t)(n - first) * sizeof(*src));
	fa->nr_free -= n;
	fa->cnt.kernel_rx += n;
	fa->cnt.refilled += n;
	xsk_ring_prod__submit(fill, n);
	return n;
}

__u32 frame_alloc_comp_drain(struct frame_alloc *fa, struct xsk_ring_cons *comp, __u32 batch)
{
	__u32 n, i, idx;

	n = xsk_ring_cons__peek(comp, batch, &idx);
	if (!n)
		return 0;
	if (!fa->debug && n <= fa->nr_frames - fa->nr_free) {
		__u64 *dst = fa->stack + fa->nr_free;

		/* The application may have sent from an offset inside the frame. */
		for (i = 0; i < n; i++)
			dst[i] = *xsk_ring_cons__comp_addr(comp, idx + i) & ~fa->frame_mask;
		fa->nr_free += n;
		fa->cnt.kernel_tx -= n;
	} else {
		__u64 chunk[FRAME_ALLOC_CHUNK];

		for (i = 0; i < n;) {
			__u32 j, m = n - i > FRAME_ALLOC_CHUNK ? FRAME_ALLOC_CHUNK : n - i;

			for (j = 0; j < m; j++)
				chunk[j] = *xsk_ring_cons__comp_addr(comp, idx + i + j) &
					   ~fa->frame_mask;
			if (!fa->debug) {
				/* More completions than frames out: push nothing past the top. */
				fa->cnt.overflow++;
				warn_rejected(fa,
					      "completion overflowing the free list, first address",
					      chunk[0]);
				fa->cnt.kernel_tx -= m;
			} else {
				free_checked(fa, m, chunk, &fa->cnt.kernel_tx);
			}
			i += m;
		}
	}
	fa->cnt.completed += n;
	xsk_ring_cons__release(comp, n);
	return n;
}

static __u64 popcount_map(const struct frame_alloc *fa)
{
	__u64 total = 0;
	__u32 i;

	for (i = 0; i < (fa->nr_frames + 63) / 64; i++)
		total += (__u64)__builtin_popcountll(fa->free_map[i]);
	return total;
}

int frame_alloc_check(const struct frame_alloc *fa, char *buf, size_t len)
{
	const struct frame_alloc_counters *c = &fa->cnt;
	__u64 sum = (__u64)fa->nr_free + c->kernel_rx + c->kernel_tx + c->app;
	char why[160] = "";
	int err = 0;

	if (c->kernel_rx > fa->nr_frames || c->kernel_tx > fa->nr_frames ||
	    c->app > fa->nr_frames) {
		snprintf(why, sizeof(why), ": a count went negative");
		err = -EINVAL;
	} else if (sum != fa->nr_frames) {
		snprintf(why, sizeof(why), ": the sum is not the frame count");
		err = -EINVAL;
	} else if (rejected(fa)) {
		snprintf(why, sizeof(why),
			 ": rejected %" PRIu64 " double frees, %" PRIu64
			 " foreign addresses, %" PRIu64 " overflowing frees",
			 (uint64_t)c->double_free, (uint64_t)c->foreign, (uint64_t)c->overflow);
		err = -EINVAL;
	} else if (fa->free_map && popcount_map(fa) != fa->nr_free) {
		snprintf(why, sizeof(why), ": the free bitmap holds %" PRIu64 " frames",
			 (uint64_t)popcount_map(fa));
		err = -EINVAL;
	}
	if (buf && len)
		snprintf(buf, len, "free %s kernel_rx %s kernel_tx %s app %s = %s of %s frames%s%s",
			 FMT_COUNT(fa->nr_free), FMT_ICOUNT((__s64)c->kernel_rx),
			 FMT_ICOUNT((__s64)c->kernel_tx), FMT_ICOUNT((__s64)c->app),
			 FMT_ICOUNT((__s64)sum), FMT_COUNT(fa->nr_frames), why,
			 fa->debug ? "; debug: every free checked" : "");
	return err;
}
