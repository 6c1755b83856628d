/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_STAMP_H
#define XDPSG_STAMP_H

/*
 * The stamp, both ways: xdp-gen writes it (stamp_write() once, or a template
 * with only the run in it and stamp_patch() per frame on the hot path),
 * xdp-sink reads and checks it (stamp_read()). Its layout is struct
 * xdpsg_stamp in shared.h, its keyed check stamp_tag.h's; the BPF writer
 * (bpf/xdp_gen.bpf.c) and the drop tracer include both too. What the sink
 * does with the sequence numbers is seqtrack.h's.
 *
 * The key. Both ends share one (--stamp-key FILE, or the file that
 * $XDPSG_STAMP_KEY names; the lab keeps one per lab). The key is derived
 * from the file's bytes, at least STAMP_KEY_MIN of them once trailing
 * whitespace is cut, so a line of text and raw random bytes both do. Without
 * a file the public key is used: it tells real stamps from frames that only
 * look like them, but anyone can forge it.
 */
#include <endian.h>
#include <stddef.h>
#include <string.h>
#include <stdbool.h>
#include <linux/types.h>

#include "shared.h"
#include "stamp_tag.h"

#define STAMP_KEY_MIN 16
#define STAMP_KEY_ENV "XDPSG_STAMP_KEY"

struct stamp_key {
	__u64 k0, k1;
	bool public_key;
	char id[9]; /* 8 hex digits that name the key (a hash of it), for both ends to compare */
};

/* The public key. */
void stamp_key_public(struct stamp_key *k);
/*
 * The key of opt (--stamp-key) if given, else of the file $XDPSG_STAMP_KEY
 * names if set and not empty, else the public key. 0, or -errno with one
 * line naming the file and the fix in err.
 */
int stamp_key_resolve(struct stamp_key *k, const char *opt, char *err, size_t errlen);
/* "public" or "file <id>", as reports show it. */
const char *stamp_key_name(const struct stamp_key *k, char *buf, size_t len);

/* SipHash-c-d of a byte string (the reference algorithm): key derivation and tests. */
__u64 stamp_siphash(__u64 k0, __u64 k1, const void *data, size_t len, int c, int d);

/* A stamp as read, fields in host order. */
struct stamp {
	__u32 run;
	__u16 flow;
	__u32 seq;
	__u32 ticks; /* send time: the low 24 bits of its 128 ns ticks (stamp_time()) */
	struct xdpsg_mark mark; /* a mark's (STAMP_MARK), host order */
};

/* stamp_read()'s results besides the errors. */
enum stamp_kind {
	STAMP_DATA = 0,
	STAMP_MARK = 1,
};

/* The send time's 24-bit ticks of a time in ns. */
static inline __u32 stamp_ticks(__u64 ns)
{
	return (__u32)(ns >> XDPSG_STAMP_TICK_SHIFT) & XDPSG_STAMP_TS_MASK;
}

#define STAMP_WRAP_NS (1ULL << (XDPSG_STAMP_TS_BITS + XDPSG_STAMP_TICK_SHIFT)) /* 2.15 s */
#define STAMP_TICK_NS (1ULL << XDPSG_STAMP_TICK_SHIFT)

/*
 * The send time, in full, of ticks read at 'now' on the same clock: the tick
 * within STAMP_WRAP_NS before now whose low bits match, at its middle
 * (never after now).
 */
static inline __u64 stamp_time(__u32 ticks, __u64 now)
{
	__u64 now_t = now >> XDPSG_STAMP_TICK_SHIFT;
	__u64 back = (now_t - ticks) & XDPSG_STAMP_TS_MASK;
	__u64 t = ((now_t - back) << XDPSG_STAMP_TICK_SHIFT) + STAMP_TICK_NS / 2;

	return t > now ? now : t;
}

/* The 16-bit words of a stamp's bytes, for the L4 checksum (not folded). */
static inline __u64 stamp_csum_words(const void *at, unsigned int len)
{
	const __u8 *p = at;
	__u64 sum = 0;
	unsigned int i;
	__u16 w;

	for (i = 0; i + 1 < len; i += 2) {
		memcpy(&w, p + i, 2);
		sum += w;
	}
	return sum;
}

/* A flow's tag state (stamp_tag.h), which writers keep per flow. */
static inline void stamp_flow_state(struct xdpsg_tag_state *s, const struct stamp_key *k, __u32 run,
				    __u16 flow)
{
	xdpsg_tag_flow(s, k->k0, k->k1, run, flow);
}

/*
 * Per frame: fill ts, flow, seq and tag into a stamp whose run is already
 * there and whose other fields are zero (a template's). fs is the flow's tag
 * state. Returns what the new bytes add to the L4 checksum (16-bit words,
 * not folded), so the caller fixes it incrementally.
 */
static inline __u64 stamp_patch(void *at, const struct xdpsg_tag_state *fs, __u16 flow, __u32 seq,
				__u64 ts_ns)
{
	__u8 *st = at;
	__u32 head = XDPSG_STAMP_HEAD(ts_ns);
	__u32 tag = xdpsg_tag_data(fs, seq, head);
	__u32 head_le = htole32(head), seq_le = htole32(seq), tag_le = htole32(tag);
	__u16 flow_le = htole16(flow);

	memcpy(st + XDPSG_STAMP_OFF_HEAD, &head_le, 4);
	memcpy(st + XDPSG_STAMP_OFF_FLOW, &flow_le, 2);
	memcpy(st + XDPSG_STAMP_OFF_SEQ, &seq_le, 4);
	memcpy(st + XDPSG_STAMP_OFF_TAG, &tag_le, 4);
	return (__u64)(head_le & 0xffff) + (head_le >> 16) + flow_le + (seq_le & 0xffff) +
	       (seq_le >> 16) + (tag_le & 0xffff) + (tag_le >> 16);
}

/*
 * Put a new send time into a whole stamp (another time was in it): head and
 * tag change. Returns the checksum change as ones'-complement words to add:
 * the old words' complements plus the new words.
 */
__u64 stamp_retime(void *at, const struct xdpsg_tag_state *fs, __u64 ts_ns);

/* Write a whole data stamp at 'at'. */
void stamp_write(void *at, const struct stamp_key *k, __u32 run, __u16 flow, __u32 seq,
		 __u64 ts_ns);
/* Only the run, the rest zero: the template stamp_patch() fills in. */
void stamp_write_run(void *at, __u32 run);
/*
 * Write a whole mark at 'at' (XDPSG_STAMP_SIZE + XDPSG_MARK_SIZE bytes): the
 * stamp of flow XDPSG_MARK_FLOW with the repeat as its seq, then m (host
 * order in, little-endian out), the tag over both.
 */
void stamp_write_mark(void *at, const struct stamp_key *k, __u32 run, __u64 ts_ns,
		      const struct xdpsg_mark *m);

/*
 * Find the stamp by include/bpf/parsing.h's rule (pkt_parse_l4(): up to two VLAN
 * tags, IPv6 extension headers, one tunnel looked through) at the start of
 * the L4 payload: UDP or TCP data, or the data of an ICMP/ICMPv6 echo
 * request or reply, and check it under key. Returns STAMP_DATA or STAMP_MARK
 * with out filled; -ENOENT for a foreign frame (another protocol, an ICMP
 * message that is no echo, a payload too short for a stamp, no magic);
 * -EINVAL for a truncated one (headers claim more than the frame holds);
 * -EBADMSG for a stamp whose tag fails the check (forged, or under another
 * key), out filled as read.
 */
int stamp_read(const void *frame, unsigned int len, const struct stamp_key *key, struct stamp *out);
/* stamp_read() in a frame's first buffer: len bytes of a frame of flen (pkt_parse_l4_part()). */
int stamp_read_part(const void *frame, unsigned int len, unsigned int flen,
		    const struct stamp_key *key, struct stamp *out);

/*
 * stamp_read() without the keyed check: what the stamp says, as read. For
 * tools that only look (and for measuring what the check costs), never for
 * books.
 */
int stamp_peek(const void *frame, unsigned int len, struct stamp *out);
int stamp_peek_part(const void *frame, unsigned int len, unsigned int flen, struct stamp *out);

/* Check the stamp (and a mark's body after it) at payload p of plen bytes: as stamp_read(). */
int stamp_check(const void *p, unsigned int plen, const struct stamp_key *key, struct stamp *out);
/* stamp_check() without the keyed check: stamp_peek()'s, at payload p of plen bytes. */
int stamp_peek_at(const void *p, unsigned int plen, struct stamp *out);

#endif
