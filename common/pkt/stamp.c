// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/parsing.h"
#include "pkt/read.h"
#include "pkt/stamp.h"

/* The layout in shared.h, held to its word. */
_Static_assert(sizeof(struct xdpsg_stamp) == XDPSG_STAMP_SIZE, "stamp size");
_Static_assert(offsetof(struct xdpsg_stamp, run) == XDPSG_STAMP_OFF_RUN, "run offset");
_Static_assert(offsetof(struct xdpsg_stamp, flow) == XDPSG_STAMP_OFF_FLOW, "flow offset");
_Static_assert(offsetof(struct xdpsg_stamp, seq) == XDPSG_STAMP_OFF_SEQ, "seq offset");
_Static_assert(offsetof(struct xdpsg_stamp, tag) == XDPSG_STAMP_OFF_TAG, "tag offset");
_Static_assert(sizeof(struct xdpsg_mark) == XDPSG_MARK_SIZE, "mark size");
_Static_assert(XDPSG_MARK_SIZE % 8 == 0, "a mark is whole words of the tag's message");

/* ---------------------------------------------------------------------------
 * The key
 */

/* The public key: the bytes "xdpsg public key", read as SipHash reads a key. */
void stamp_key_public(struct stamp_key *k)
{
	static const char bytes[16] = "xdpsg public key";

	memset(k, 0, sizeof(*k));
	memcpy(&k->k0, bytes, 8);
	memcpy(&k->k1, bytes + 8, 8);
	k->k0 = le64toh(k->k0);
	k->k1 = le64toh(k->k1);
	k->public_key = true;
	snprintf(k->id, sizeof(k->id), "%08x",
		 (unsigned int)stamp_siphash(k->k0, k->k1, "key id", 6, 2, 4));
}

__u64 stamp_siphash(__u64 k0, __u64 k1, const void *data, size_t len, int c, int d)
{
	const __u8 *p = data;
	struct xdpsg_tag_state s;
	__u64 m, b = (__u64)len << 56;
	size_t i, end = len - len % 8;
	int r;

	xdpsg_tag_key(&s, k0, k1);
	for (i = 0; i < end; i += 8) {
		memcpy(&m, p + i, 8);
		m = le64toh(m);
		s.v3 ^= m;
		for (r = 0; r < c; r++)
			xdpsg_sipround(&s);
		s.v0 ^= m;
	}
	for (i = end; i < len; i++)
		b |= (__u64)p[i] << (8 * (i - end));
	s.v3 ^= b;
	for (r = 0; r < c; r++)
		xdpsg_sipround(&s);
	s.v0 ^= b;
	s.v2 ^= 0xff;
	for (r = 0; r < d; r++)
		xdpsg_sipround(&s);
	return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

/* The key of a file's bytes: two SipHash-2-4 sums of them under the public key, told apart. */
static void key_derive(struct stamp_key *k, const void *bytes, size_t len)
{
	struct stamp_key pub;

	stamp_key_public(&pub);
	k->k0 = stamp_siphash(pub.k0 ^ 1, pub.k1, bytes, len, 2, 4);
	k->k1 = stamp_siphash(pub.k0 ^ 2, pub.k1, bytes, len, 2, 4);
	k->public_key = false;
	snprintf(k->id, sizeof(k->id), "%08x",
		 (unsigned int)stamp_siphash(k->k0, k->k1, "key id", 6, 2, 4));
}

#define KEY_FILE_MAX 4096

static int key_load(struct stamp_key *k, const char *path, const char *how, char *err,
		    size_t errlen)
{
	char buf[KEY_FILE_MAX + 1];
	ssize_t n;
	int fd, e;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = -errno;
		PKT_SETERR(err, errlen,
			   "%s %s: %s; give a file of at least %d bytes both ends read", how, path,
			   strerror(-e), STAMP_KEY_MIN);
		return e;
	}
	n = read(fd, buf, sizeof(buf));
	e = n < 0 ? -errno : 0;
	close(fd);
	if (e) {
		PKT_SETERR(err, errlen, "%s %s: cannot read it: %s", how, path, strerror(-e));
		return e;
	}
	if (n > KEY_FILE_MAX) {
		PKT_SETERR(err, errlen, "%s %s: longer than %d bytes; a key file is a short secret",
			   how, path, KEY_FILE_MAX);
		return -EINVAL;
	}
	while (n > 0 && isspace((unsigned char)buf[n - 1]))
		n--;
	if (n < STAMP_KEY_MIN) {
		PKT_SETERR(
			err, errlen,
			"%s %s: %zd bytes, too short for a key; give at least %d (head -c 32 /dev/urandom | xxd -p > FILE)",
			how, path, n, STAMP_KEY_MIN);
		return -EINVAL;
	}
	key_derive(k, buf, (size_t)n);
	memset(buf, 0, sizeof(buf));
	return 0;
}

int stamp_key_resolve(struct stamp_key *k, const char *opt, char *err, size_t errlen)
{
	const char *env = getenv(STAMP_KEY_ENV);

	if (opt)
		return key_load(k, opt, "--stamp-key", err, errlen);
	if (env && *env)
		return key_load(k, env, "$" STAMP_KEY_ENV, err, errlen);
	stamp_key_public(k);
	return 0;
}

const char *stamp_key_name(const struct stamp_key *k, char *buf, size_t len)
{
	if (k->public_key)
		snprintf(buf, len, "public");
	else
		snprintf(buf, len, "file %s", k->id);
	return buf;
}

/* ---------------------------------------------------------------------------
 * Writing
 */

void stamp_write_run(void *at, __u32 run)
{
	__u32 run_le = htole32(run);

	memset(at, 0, XDPSG_STAMP_SIZE);
	memcpy((__u8 *)at + XDPSG_STAMP_OFF_RUN, &run_le, 4);
}

void stamp_write(void *at, const struct stamp_key *k, __u32 run, __u16 flow, __u32 seq, __u64 ts_ns)
{
	struct xdpsg_tag_state fs;

	stamp_write_run(at, run);
	stamp_flow_state(&fs, k, run, flow);
	stamp_patch(at, &fs, flow, seq, ts_ns);
}

__u64 stamp_retime(void *at, const struct xdpsg_tag_state *fs, __u64 ts_ns)
{
	__u8 *st = at;
	__u32 head_le, seq_le, tag_le;
	__u64 old, sum;

	old = stamp_csum_words(st + XDPSG_STAMP_OFF_HEAD, 4) +
	      stamp_csum_words(st + XDPSG_STAMP_OFF_TAG, 4);
	memcpy(&seq_le, st + XDPSG_STAMP_OFF_SEQ, 4);
	head_le = htole32(XDPSG_STAMP_HEAD(ts_ns));
	tag_le = htole32(xdpsg_tag_data(fs, le32toh(seq_le), le32toh(head_le)));
	memcpy(st + XDPSG_STAMP_OFF_HEAD, &head_le, 4);
	memcpy(st + XDPSG_STAMP_OFF_TAG, &tag_le, 4);
	sum = stamp_csum_words(st + XDPSG_STAMP_OFF_HEAD, 4) +
	      stamp_csum_words(st + XDPSG_STAMP_OFF_TAG, 4);
	/* minus the old words: add their complements (4 words, 16 bits each) */
	return sum + 4 * 0xffffULL - old;
}

/* A mark's body as the tag's message words, little-endian on the wire. */
static void mark_to_le(struct xdpsg_mark *out, const struct xdpsg_mark *m)
{
	*out = *m;
	out->flow = htole16(m->flow);
	out->repeat = htole16(m->repeat);
	out->flags = htole16(m->flags);
	out->flow_frames = htole64(m->flow_frames);
	out->run_frames = htole64(m->run_frames);
	out->clock_ns = htole64(m->clock_ns);
	out->clock_id = htole64(m->clock_id);
	out->nflows = htole32(m->nflows);
	out->sync_error_us = htole32(m->sync_error_us);
}

static void mark_from_le(struct xdpsg_mark *out, const struct xdpsg_mark *m)
{
	*out = *m;
	out->flow = le16toh(m->flow);
	out->repeat = le16toh(m->repeat);
	out->flags = le16toh(m->flags);
	out->flow_frames = le64toh(m->flow_frames);
	out->run_frames = le64toh(m->run_frames);
	out->clock_ns = le64toh(m->clock_ns);
	out->clock_id = le64toh(m->clock_id);
	out->nflows = le32toh(m->nflows);
	out->sync_error_us = le32toh(m->sync_error_us);
}

/* The tag of a mark: the stamp's m0 and m1, then the body's words. */
static __u32 mark_tag(const struct stamp_key *k, __u32 run, __u32 seq, __u32 head,
		      const struct xdpsg_mark *le)
{
	struct xdpsg_tag_state s;
	__u64 w[XDPSG_MARK_SIZE / 8];
	unsigned int i;

	memcpy(w, le, sizeof(w));
	xdpsg_tag_flow(&s, k->k0, k->k1, run, XDPSG_MARK_FLOW);
	xdpsg_tag_word(&s, xdpsg_tag_m1(seq, head));
	for (i = 0; i < XDPSG_MARK_SIZE / 8; i++)
		xdpsg_tag_word(&s, le64toh(w[i]));
	return (__u32)xdpsg_tag_final(&s, 16 + XDPSG_MARK_SIZE);
}

void stamp_write_mark(void *at, const struct stamp_key *k, __u32 run, __u64 ts_ns,
		      const struct xdpsg_mark *m)
{
	struct xdpsg_mark le;
	struct xdpsg_stamp st;
	__u32 head = XDPSG_STAMP_HEAD(ts_ns);

	mark_to_le(&le, m);
	st.head = htole32(head);
	st.run = htole32(run);
	st.flow = htole16(XDPSG_MARK_FLOW);
	st.seq = htole32(m->repeat);
	st.tag = htole32(mark_tag(k, run, m->repeat, head, &le));
	memcpy(at, &st, sizeof(st));
	memcpy((__u8 *)at + XDPSG_STAMP_SIZE, &le, sizeof(le));
}

/* ---------------------------------------------------------------------------
 * Reading
 */

/* ICMP echo request and reply: types 8 and 0, ICMPv6 128 and 129. */
static bool icmp_is_echo(unsigned int proto, __u8 type)
{
	if (proto == PARSE_IPPROTO_ICMP)
		return type == 8 || type == 0;
	return type == 128 || type == 129;
}

/* xdp-sink's program tells a mark from its flow's bytes at this offset (struct xdpsg_xsk_rec). */
_Static_assert(offsetof(struct xdpsg_stamp, flow) == 8, "the stamp's flow is at byte 8");
/*
 * And takes a UDP payload that begins with the magic for a stamp without
 * looking for a tunnel, as parsing.h does: the magic has no VXLAN I flag
 * (0x08) and is no GENEVE version 0 (top two bits).
 */
_Static_assert(!(XDPSG_STAMP_MAGIC & 0x08) && (XDPSG_STAMP_MAGIC >> 6),
	       "a stamped UDP payload reads as no VXLAN or GENEVE header");

int stamp_check(const void *p, unsigned int plen, const struct stamp_key *key, struct stamp *out)
{
	struct xdpsg_stamp st;
	struct xdpsg_tag_state fs;
	struct xdpsg_mark le;
	__u32 head;

	if (plen < XDPSG_STAMP_SIZE || *(const __u8 *)p != XDPSG_STAMP_MAGIC)
		return -ENOENT;
	memcpy(&st, p, sizeof(st));
	head = le32toh(st.head);
	out->run = le32toh(st.run);
	out->flow = le16toh(st.flow);
	out->seq = le32toh(st.seq);
	out->ticks = head >> 8;
	if (out->flow != XDPSG_MARK_FLOW) {
		stamp_flow_state(&fs, key, out->run, out->flow);
		return xdpsg_tag_data(&fs, out->seq, head) == le32toh(st.tag) ? STAMP_DATA :
										-EBADMSG;
	}
	/* A mark without its body is as good as forged: nobody sends one. */
	if (plen < XDPSG_STAMP_SIZE + XDPSG_MARK_SIZE)
		return -EBADMSG;
	memcpy(&le, (const __u8 *)p + XDPSG_STAMP_SIZE, sizeof(le));
	mark_from_le(&out->mark, &le);
	if (mark_tag(key, out->run, out->seq, head, &le) != le32toh(st.tag))
		return -EBADMSG;
	return STAMP_MARK;
}

/* Where the stamp would be: 0 with *at and *plen set, or stamp_read()'s error. */
static int stamp_place(const void *frame, unsigned int len, unsigned int flen, const __u8 **at,
		       unsigned int *plen)
{
	const __u8 *p = frame;
	struct pkt_info pi;
	int ret;

	ret = pkt_parse_l4_part(frame, len, flen, &pi);
	if (ret)
		return ret;
	/*
	 * Only an echo's data is the sender's to fill: any other ICMP message
	 * carries what its type says (an error quotes someone's packet), never
	 * a stamp of ours.
	 */
	if ((pi.proto == PARSE_IPPROTO_ICMP || pi.proto == PARSE_IPPROTO_ICMPV6) &&
	    !icmp_is_echo(pi.proto, p[pi.l4_off]))
		return -ENOENT;
	*at = p + pi.payload_off;
	/* What of the payload is in this buffer: all of it, but in a frame's first buffer. */
	*plen = pi.payload_off + pi.payload_len <= len ? pi.payload_len :
		pi.payload_off < len		       ? len - pi.payload_off :
							 0;
	return 0;
}

int stamp_read(const void *frame, unsigned int len, const struct stamp_key *key, struct stamp *out)
{
	return stamp_read_part(frame, len, len, key, out);
}

int stamp_read_part(const void *frame, unsigned int len, unsigned int flen,
		    const struct stamp_key *key, struct stamp *out)
{
	const __u8 *at;
	unsigned int plen;
	int ret = stamp_place(frame, len, flen, &at, &plen);

	return ret ? ret : stamp_check(at, plen, key, out);
}

int stamp_peek(const void *frame, unsigned int len, struct stamp *out)
{
	return stamp_peek_part(frame, len, len, out);
}

int stamp_peek_part(const void *frame, unsigned int len, unsigned int flen, struct stamp *out)
{
	const __u8 *at;
	unsigned int plen;
	int ret = stamp_place(frame, len, flen, &at, &plen);

	return ret ? ret : stamp_peek_at(at, plen, out);
}

int stamp_peek_at(const void *p, unsigned int plen, struct stamp *out)
{
	const __u8 *at = p;
	struct xdpsg_mark le;
	struct xdpsg_stamp st;

	if (plen < XDPSG_STAMP_SIZE || at[0] != XDPSG_STAMP_MAGIC)
		return -ENOENT;
	memcpy(&st, at, sizeof(st));
	out->run = le32toh(st.run);
	out->flow = le16toh(st.flow);
	out->seq = le32toh(st.seq);
	out->ticks = le32toh(st.head) >> 8;
	if (out->flow != XDPSG_MARK_FLOW)
		return STAMP_DATA;
	if (plen < XDPSG_STAMP_SIZE + XDPSG_MARK_SIZE)
		return -ENOENT;
	memcpy(&le, at + XDPSG_STAMP_SIZE, sizeof(le));
	mark_from_le(&out->mark, &le);
	return STAMP_MARK;
}
