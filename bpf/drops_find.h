/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The drop tracer's stamp finder (bpf/xdp_drops.bpf.c): a copy of a dropped
 * frame's first bytes, the parse over it (include/bpf/parsing.h's rule) a
 * layer at a time, and the keyed tag check. Its big parts are global
 * functions, each checked once by the verifier: inlined into one another,
 * each was walked again for every state the one before it ended in.
 */
#ifndef XDPSG_BPF_DROPS_FIND_H
#define XDPSG_BPF_DROPS_FIND_H

/*
 * The one parsing rule, run on a copy of the frame's first DROPS_SNAP bytes
 * in a per-CPU buffer. The walk reads only the copy (its cursor's end is the
 * copy's end, the frame's end only bounds the IP lengths), so it never
 * reaches an offset the mask changes. The verifier cannot know that: for it,
 * offsets masked below 512 keep every header a walk can reach (IPv6
 * extension headers of up to 2 KiB each, GENEVE options) inside DROPS_BUF.
 */
#define PARSE_COPY
#define PARSE_OFF_MASK 0x1ff
#define PARSE_IP6_EXT_WALK drops_ip6_ext
#include "bpf/parsing.h"

/* The stamps' key, stamp_key's k0 and k1: only a stamp whose tag checks under it is a run's. */
const volatile __u64 tag_k0, tag_k1;

/*
 * Bytes of a frame read to find the stamp: enough for two VLAN tags, an
 * outer IPv6 header, UDP and GENEVE, and an inner Ethernet, IPv6 and TCP
 * header (a power of two: the copy's length is masked to it).
 */
#define DROPS_SNAP 256
#define DROPS_BUF 4096
_Static_assert(DROPS_SNAP <= PARSE_OFF_MASK, "the mask must never move the cursor back");
#define DROPS_MIN_FRAME (14 + 20 + 8 + XDPSG_STAMP_SIZE)

struct drops_buf {
	__u8 b[DROPS_BUF];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct drops_buf);
} drops_scratch SEC(".maps");

/* What find_stamp() found in a frame. */
enum found {
	FOUND_NONE, /* no stamp: counted as unstamped */
	FOUND_UNREAD, /* its headers or its stamp go on beyond the copy: unidentified */
	FOUND_FORGED, /* the magic, and a tag that fails the check */
	FOUND_DATA, /* a data frame's stamp that passed the check */
	FOUND_MARK, /* a mark that passed the check */
};

static __always_inline __u32 le32(const __u8 *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (__u32)p[3] << 24;
}

/*
 * The stamp at offset off of the copy (its first n bytes hold the frame; a
 * mark's body too, if the copy holds it), checked as stamp_check() does:
 * SipHash-1-3 under the key set before load (stamp_tag.h), about 20 ns a
 * data frame. A mark's tag covers its body: six more words. Its enum found.
 *
 * A global function: the verifier checks it once, alone. Inlined, the tag's
 * rounds were walked again for every state the parse ended in, and half of
 * the tracer's start (1.1 s on this machine) was spent verifying them.
 */
__noinline int check_stamp(struct drops_buf *buf, __u32 off, __u32 plen, __u32 n, __u32 *run)
{
	struct xdpsg_tag_state s;
	const __u8 *p, *end;
	__u32 head, seq, tag;
	__u16 flow;
	int i;

	if (!buf || !run)
		return FOUND_NONE;
	/* Below the mask already (the walk's offsets are); masked again for the verifier. */
	off &= PARSE_OFF_MASK;
	p = buf->b + off;
	end = buf->b + (n > DROPS_SNAP ? DROPS_SNAP : n);
	if ((const void *)(p + XDPSG_STAMP_SIZE) > (const void *)end)
		return FOUND_UNREAD;
	head = le32(p);
	*run = le32(p + XDPSG_STAMP_OFF_RUN);
	flow = p[XDPSG_STAMP_OFF_FLOW] | p[XDPSG_STAMP_OFF_FLOW + 1] << 8;
	seq = le32(p + XDPSG_STAMP_OFF_SEQ);
	tag = le32(p + XDPSG_STAMP_OFF_TAG);
	xdpsg_tag_flow(&s, tag_k0, tag_k1, *run, flow);
	if (flow != XDPSG_MARK_FLOW)
		return xdpsg_tag_data(&s, seq, head) == tag ? FOUND_DATA : FOUND_FORGED;
	/* A mark without its body is as good as forged (stamp_check()'s rule). */
	if (plen < XDPSG_STAMP_SIZE + XDPSG_MARK_SIZE)
		return FOUND_FORGED;
	if ((const void *)(p + XDPSG_STAMP_SIZE + XDPSG_MARK_SIZE) > (const void *)end)
		return FOUND_UNREAD;
	xdpsg_tag_word(&s, xdpsg_tag_m1(seq, head));
	for (i = 0; i < XDPSG_MARK_SIZE / 8; i++) {
		const __u8 *w = p + XDPSG_STAMP_SIZE + i * 8;

		xdpsg_tag_word(&s, le32(w) | (__u64)le32(w + 4) << 32);
	}
	return (__u32)xdpsg_tag_final(&s, 16 + XDPSG_MARK_SIZE) == tag ? FOUND_MARK : FOUND_FORGED;
}

/*
 * The stamp, if the frame (lin bytes readable at frame) carries one by the
 * rule of stamp_read(): include/bpf/parsing.h's walk (VLAN/QinQ, IPv6 extension
 * headers, one tunnel) to UDP or TCP data or an ICMP echo's data that starts
 * with the stamp's magic, then its tag checked. Only the first DROPS_SNAP
 * bytes (at most lin) are copied and read: a frame whose headers or stamp go
 * on beyond the copy (deep option chains, a paged payload) is unread, whose
 * it is unknown. The lengths in the headers are checked against the whole
 * frame (flen bytes, its paged part too).
 */
/*
 * A cursor over the copy (its first n bytes) at offset pos, with layers so
 * far: what each of the walk's global functions starts from.
 */
static __always_inline void walk_cursor(struct hdr_cursor *c, struct drops_buf *buf, __u32 n,
					__u32 pos, __u32 layers)
{
	/* 1 to DROPS_SNAP, in a form the verifier follows (the caller's bound is not seen here). */
	n = ((n - 1) & (DROPS_SNAP - 1)) + 1;
	c->start = buf->b;
	c->pos = buf->b + (pos & PARSE_OFF_MASK);
	c->end = buf->b + n;
	c->layers = layers;
}

/* Where an IPv6 extension-header walk over the copy stands (parse_ip6_ext()'s state). */
struct ext_at {
	__u32 pos;
	__u32 room;
	__u32 layers;
	__u8 nexthdr;
};

/*
 * parse_ip6_ext() over the copy (its first n bytes) from *at: a global
 * function, so that the verifier walks its eight headers once rather than
 * once for each state the layers before it ended in. Inlined, that was
 * 170,000 of the 206,000 instructions the verifier walked in each of the two
 * programs that find stamps, 80 ms at every start of the tracer.
 */
__noinline int walk_ip6_ext(struct drops_buf *buf, __u32 n, struct ext_at *at)
{
	struct hdr_cursor c = {};
	__u32 room;
	__u8 next;
	int r;

	if (!buf || !at)
		return PARSE_ERR_IP6_EXT;
	walk_cursor(&c, buf, n, at->pos, at->layers);
	next = at->nexthdr;
	room = at->room;
	r = parse_ip6_ext(&c, &next, &room);
	at->pos = (__u32)((__u8 *)c.pos - buf->b);
	at->nexthdr = next;
	at->room = room;
	at->layers = c.layers;
	return r;
}

/*
 * PARSE_IP6_EXT_WALK for the walk over the copy, which starts at the scratch
 * buffer's start. The cursor stays within the copy (DROPS_SNAP bytes), where
 * the mask changes no offset.
 */
static __always_inline int drops_ip6_ext(struct hdr_cursor *c, __u8 *nexthdr, __u32 *room)
{
	struct drops_buf *buf = c->start;
	struct ext_at at = {
		.pos = (__u32)((__u8 *)c->pos - buf->b),
		.room = *room,
		.layers = c->layers,
		.nexthdr = *nexthdr,
	};
	int r = walk_ip6_ext(buf, (__u32)((__u8 *)c->end - buf->b), &at);

	c->pos = buf->b + (at.pos & PARSE_OFF_MASK);
	c->layers = at.layers;
	*nexthdr = at.nexthdr;
	*room = at.room;
	return r;
}

/*
 * Where a walk over the copy stands between its layers, as offsets into the
 * copy (a pointer at an offset o is o + 1, none is 0): what a global
 * function can be given and give back.
 */
struct walk_at {
	__u32 pos;
	__u32 l4;
	__u32 payload;
	__u32 l4_len;
	__u32 layers;
};

static __always_inline __u8 *walk_ptr(struct drops_buf *buf, __u32 at)
{
	return at ? buf->b + ((at - 1) & PARSE_OFF_MASK) : NULL;
}

static __always_inline __u32 walk_off(struct drops_buf *buf, const void *p)
{
	return p ? (__u32)((const __u8 *)p - buf->b) + 1 : 0;
}

/*
 * One layer of parse_frame()'s walk over a copy (its first n bytes, of a
 * frame of flen), from where *at stands: the outer frame (start
 * PARSE_INNER_ETH at offset 0, tunnels looked through) or a tunnel's inside
 * (no further tunnel). *at is left where the layer ended. A global function:
 * the verifier walks the inner layer once, not again for every state the
 * outer one ended in.
 */
__noinline int walk_layer(struct drops_buf *buf, __u32 n, __u64 flen, int start, struct walk_at *at)
{
	struct hdr_cursor c = {};
	int r;

	if (!buf || !at)
		return PARSE_OTHER;
	walk_cursor(&c, buf, n, at->pos, at->layers);
	/* Compared with, never read through. */
	c.frame_end = buf->b + (flen > 0xffff ? 0xffff : flen);
	c.l4 = walk_ptr(buf, at->l4);
	c.payload = walk_ptr(buf, at->payload);
	c.l4_len = at->l4_len;
	if (start == PARSE_INNER_ETH && !at->pos)
		r = parse_layer(&c, PARSE_INNER_ETH, true);
	else if (start >= PARSE_INNER_ETH && start <= PARSE_INNER_IP6)
		r = parse_layer(&c, start, false);
	else
		return PARSE_OTHER;
	at->pos = (__u32)((__u8 *)c.pos - buf->b);
	at->l4 = walk_off(buf, c.l4);
	at->payload = walk_off(buf, c.payload);
	at->l4_len = c.l4_len;
	at->layers = c.layers;
	return r;
}

/*
 * The walk over a copy (its first n bytes, of a frame of flen): the rest of
 * find_stamp(). A global function, as check_stamp() is, for the same reason:
 * inlined, the walk was verified once for each program that finds stamps
 * (kfree_skb and xdp_redirect_err), some 250 ms of the kernel's time each, at
 * every start of the tracer. On its own the verifier walks it once.
 */
__noinline int find_stamp_in(struct drops_buf *buf, __u32 n, __u64 flen, __u32 *run)
{
	struct walk_at at = {};
	enum parse_result r;
	__u8 *l4, *p, *end;
	__u32 plen;
	bool cut;

	if (!buf || !run)
		return FOUND_NONE;
	/* 1 to DROPS_SNAP, in a form the verifier follows (the caller's bound is not seen here). */
	n = ((n - 1) & (DROPS_SNAP - 1)) + 1;
	end = buf->b + n;
	cut = n < flen;
	/* parse_frame(), a layer at a time: through at most one tunnel. */
	r = (enum parse_result)walk_layer(buf, n, flen, PARSE_INNER_ETH, &at);
	if (r >= PARSE_INNER_ETH)
		r = (enum parse_result)walk_layer(buf, n, flen, r, &at);
	/* Cut short where the copy ends, not where the frame does: whose it is is unknown. */
	if (r >= PARSE_ERR_ETH && cut)
		return FOUND_UNREAD;
	if (r > PARSE_ICMP6)
		return FOUND_NONE;
	l4 = walk_ptr(buf, at.l4);
	p = walk_ptr(buf, at.payload);
	if (!l4 || !p || (void *)(l4 + 1) > (void *)end)
		return FOUND_NONE;
	/* ICMP: only an echo's data is the sender's (stamp_read()'s rule). */
	if (r == PARSE_ICMP4 && l4[0] != 8 && l4[0] != 0)
		return FOUND_NONE;
	if (r == PARSE_ICMP6 && l4[0] != 128 && l4[0] != 129)
		return FOUND_NONE;
	plen = at.l4_len - (__u32)(p - l4);
	if (plen < XDPSG_STAMP_SIZE)
		return FOUND_NONE;
	if ((void *)(p + 1) > (void *)end)
		return FOUND_UNREAD;
	if (p[0] != XDPSG_STAMP_MAGIC)
		return FOUND_NONE;
	if ((void *)(p + XDPSG_STAMP_SIZE) > (void *)end)
		return FOUND_UNREAD;
	return check_stamp(buf, (__u32)(p - buf->b), plen, n, run);
}

/*
 * The stamp, if the frame (lin bytes readable at frame) carries one by the
 * rule of stamp_read(): include/bpf/parsing.h's walk (VLAN/QinQ, IPv6 extension
 * headers, one tunnel) to UDP or TCP data or an ICMP echo's data that starts
 * with the stamp's magic, then its tag checked. Only the first DROPS_SNAP
 * bytes (at most lin) are copied and read: a frame whose headers or stamp go
 * on beyond the copy (deep option chains, a paged payload) is unread, whose
 * it is unknown. The lengths in the headers are checked against the whole
 * frame (flen bytes, its paged part too).
 */
static __always_inline enum found find_stamp(const void *frame, __s64 lin, __u64 flen, __u32 *run)
{
	struct drops_buf *buf;
	__u32 zero = 0, n;

	if (flen < DROPS_MIN_FRAME)
		return FOUND_NONE;
	if (lin <= 0)
		return FOUND_UNREAD;
	buf = bpf_map_lookup_elem(&drops_scratch, &zero);
	if (!buf)
		return FOUND_NONE;
	n = lin > DROPS_SNAP ? DROPS_SNAP : (__u32)lin;
	/* 1 to DROPS_SNAP, in a form the verifier follows. */
	n = ((n - 1) & (DROPS_SNAP - 1)) + 1;
	/* Only what the frame has: the copy's cost grows with its length. */
	if (bpf_probe_read_kernel(buf->b, n, frame))
		return FOUND_NONE;
	return find_stamp_in(buf, n, flen, run);
}

#endif
