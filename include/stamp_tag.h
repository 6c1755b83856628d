/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_STAMP_TAG_H
#define XDPSG_STAMP_TAG_H

/*
 * The stamp's keyed check (shared.h): SipHash-1-3 (Aumasson and Bernstein,
 * one compression round per word, three finalisation rounds: the variant
 * Rust's standard hashers use), under a 128-bit key both ends share,
 * truncated to its low 32 bits. Compiled by clang -target bpf (the generator
 * and the drop tracer) and by the host compiler (everything else), so only
 * uapi types and inline code here.
 *
 * The message, in 64-bit little-endian words:
 *	m0 = run | flow << 32 | XDPSG_TAG_DOMAIN << 48
 *	m1 = seq | ts << 32			(ts: the stamp's 24-bit ticks)
 *	a mark's struct xdpsg_mark, six words, after them
 * then SipHash's final block (the message length << 56). m0 is the same for
 * every frame of a flow, so a writer keeps the state after it per flow
 * (struct xdpsg_tag_state): a frame then costs five rounds (m1, the length
 * block, three to finish) instead of six and the key setup.
 */
#include <linux/types.h>

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* Version 3 in the top 16 bits of m0: a later layout cannot be taken for this one. */
#define XDPSG_TAG_DOMAIN 0x5303ULL

/* SipHash's state after the key, and after any words absorbed so far. */
struct xdpsg_tag_state {
	__u64 v0, v1, v2, v3;
};

#define XDPSG_ROTL64(x, b) (((x) << (b)) | ((x) >> (64 - (b))))

static __always_inline void xdpsg_sipround(struct xdpsg_tag_state *s)
{
	__u64 v0 = s->v0, v1 = s->v1, v2 = s->v2, v3 = s->v3;

	v0 += v1;
	v1 = XDPSG_ROTL64(v1, 13);
	v1 ^= v0;
	v0 = XDPSG_ROTL64(v0, 32);
	v2 += v3;
	v3 = XDPSG_ROTL64(v3, 16);
	v3 ^= v2;
	v0 += v3;
	v3 = XDPSG_ROTL64(v3, 21);
	v3 ^= v0;
	v2 += v1;
	v1 = XDPSG_ROTL64(v1, 17);
	v1 ^= v2;
	v2 = XDPSG_ROTL64(v2, 32);
	s->v0 = v0;
	s->v1 = v1;
	s->v2 = v2;
	s->v3 = v3;
}

static __always_inline void xdpsg_tag_key(struct xdpsg_tag_state *s, __u64 k0, __u64 k1)
{
	s->v0 = k0 ^ 0x736f6d6570736575ULL;
	s->v1 = k1 ^ 0x646f72616e646f6dULL;
	s->v2 = k0 ^ 0x6c7967656e657261ULL;
	s->v3 = k1 ^ 0x7465646279746573ULL;
}

/* One message word, one compression round (SipHash-1-x). */
static __always_inline void xdpsg_tag_word(struct xdpsg_tag_state *s, __u64 m)
{
	s->v3 ^= m;
	xdpsg_sipround(s);
	s->v0 ^= m;
}

/* The final block of a message of len bytes (a multiple of 8) and three rounds. */
static __always_inline __u64 xdpsg_tag_final(struct xdpsg_tag_state *s, __u64 len)
{
	xdpsg_tag_word(s, len << 56);
	s->v2 ^= 0xff;
	xdpsg_sipround(s);
	xdpsg_sipround(s);
	xdpsg_sipround(s);
	return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

/* A flow's state after m0: what a writer keeps per flow. */
static __always_inline void xdpsg_tag_flow(struct xdpsg_tag_state *s, __u64 k0, __u64 k1, __u32 run,
					   __u16 flow)
{
	xdpsg_tag_key(s, k0, k1);
	xdpsg_tag_word(s, (__u64)run | (__u64)flow << 32 | XDPSG_TAG_DOMAIN << 48);
}

/* The m1 word of a frame: its sequence number and the 24-bit ticks of its head word. */
static __always_inline __u64 xdpsg_tag_m1(__u32 seq, __u32 head)
{
	return (__u64)seq | (__u64)(head >> 8) << 32;
}

/* A data frame's tag from its flow's state (not changed). */
static __always_inline __u32 xdpsg_tag_data(const struct xdpsg_tag_state *flow, __u32 seq,
					    __u32 head)
{
	struct xdpsg_tag_state s = *flow;

	xdpsg_tag_word(&s, xdpsg_tag_m1(seq, head));
	return (__u32)xdpsg_tag_final(&s, 16);
}

#endif
