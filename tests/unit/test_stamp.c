// SPDX-License-Identifier: GPL-2.0
#include <stddef.h>

#include <fcntl.h>
#include <unistd.h>

#include "pkt/gen.h"
#include "pkt/text.h"
#include "pkt/stamp.h"
#include "test.h"

/* The stamps below are the public key's (make_gen() gives no key). */
static int rd(const void *frame, unsigned int len, struct stamp *st)
{
	struct stamp_key k;

	stamp_key_public(&k);
	return stamp_read(frame, len, &k, st);
}

static struct pkt_gen *make_gen(bool v6, unsigned int size, bool no_stamp)
{
	struct pkt_opts o;
	char err[256] = "";
	struct pkt_gen *g;

	pkt_opts_init(&o);
	o.max_size = 9014; /* a 9000-byte link */
	if (v6) {
		pkt_text_ip_range("fd00::1", &o.src_ip, err, sizeof(err));
		pkt_text_ip_range("fd00::2", &o.dst_ip, err, sizeof(err));
	}
	o.size = size;
	o.no_stamp = no_stamp;
	o.run = 0xabcd;
	o.flows = 5;
	ASSERT_OK(pkt_text_port_range("100-104", &o.src_port, err, sizeof(err)), "ports");
	g = pkt_gen__create(&o, err, sizeof(err));
	if (!g)
		fprintf(stderr, "  pkt_gen__create: %s\n", err);
	return g;
}

static void check_round_trip(bool v6, unsigned int size)
{
	struct pkt_gen *g = make_gen(v6, size, false);
	struct stamp st;
	__u8 f[2048];
	unsigned int len;

	if (!ASSERT_TRUE(g, "create"))
		return;
	pkt_gen_prefill(g, f);
	len = pkt_gen_write(g, f, 4, 0xdeadbeef, 0x1122334455667788ULL);
	ASSERT_EQ(len, size, "frame length");
	memset(&st, 0, sizeof(st));
	ASSERT_EQ(rd(f, len, &st), STAMP_DATA, "stamp found");
	ASSERT_EQ(f[len - size + g->lay.pay_off], XDPSG_STAMP_MAGIC, "the magic first");
	ASSERT_EQ(st.run, 0xabcd, "run");
	ASSERT_EQ(st.flow, 4, "flow");
	ASSERT_EQ_U64(st.seq, 0xdeadbeef, "seq");
	ASSERT_EQ_U64(st.ticks, (0x1122334455667788ULL >> 7) & 0xffffff, "ts: 24 bits of ticks");
	ASSERT_EQ_U64(stamp_time(st.ticks, 0x1122334455667900ULL), 0x11223344556677c0ULL,
		      "ts: the rest from the reader's clock, the tick's middle");
	ASSERT_EQ_U64(stamp_time(st.ticks, 0x1122334455667790ULL), 0x1122334455667790ULL,
		      "ts: read within its tick, never after the reading");
	ASSERT_EQ(pkt_verify_checksums(f, len), PKT_CSUM_OK, "checksums with the stamp");
	/* Truncated by one byte: the IP length no longer fits. */
	ASSERT_ERR(rd(f, len - 1, &st), -EINVAL, "truncated frame");
	ASSERT_ERR(rd(f, 13, &st), -EINVAL, "runt frame");
	ASSERT_ERR(rd(f, v6 ? 50 : 30, &st), -EINVAL, "cut inside the IP header");
	pkt_gen__destroy(g);
}

static void test_round_trip_v4_min(void)
{
	check_round_trip(false, 60);
}

static void test_round_trip_v6_min(void)
{
	check_round_trip(true, 80);
}

static void test_round_trip_large(void)
{
	check_round_trip(false, 1514);
	check_round_trip(true, 1514);
}

/*
 * A jumbo frame's first buffer (AF_XDP multi-buffer): the headers and the stamp
 * are in it, the IP length is the whole frame's. Read as the first part of a
 * frame of that length (or of one that may be longer) the stamp is found; read
 * as a whole frame it is truncated, as ever.
 */
static void check_first_buffer(bool v6)
{
	struct pkt_gen *g = make_gen(v6, 9000, false);
	struct stamp_key k;
	struct stamp st;
	static __u8 f[9000];
	unsigned int len;

	if (!ASSERT_TRUE(g, "create"))
		return;
	stamp_key_public(&k);
	pkt_gen_prefill(g, f);
	len = pkt_gen_write(g, f, 2, 77, 0x1000);
	ASSERT_EQ(len, 9000, "frame length");
	ASSERT_EQ(stamp_read_part(f, 3000, len, &k, &st), STAMP_DATA, "first 3000 of 9000");
	ASSERT_EQ(st.flow, 2, "flow");
	ASSERT_EQ_U64(st.seq, 77, "seq");
	ASSERT_EQ(stamp_read_part(f, 3000, 0xffff, &k, &st), STAMP_DATA, "length unknown yet");
	ASSERT_EQ(stamp_peek_part(f, 3000, len, &st), STAMP_DATA, "peek, first buffer");
	ASSERT_ERR(stamp_read_part(f, 3000, 8999, &k, &st), -EINVAL,
		   "a frame shorter than its IP length");
	ASSERT_ERR(rd(f, 3000, &st), -EINVAL, "the first buffer as a whole frame");
	ASSERT_ERR(stamp_read_part(f, v6 ? 50 : 30, len, &k, &st), -EINVAL,
		   "headers past the buffer");
	pkt_gen__destroy(g);
}

static void test_first_buffer(void)
{
	check_first_buffer(false);
	check_first_buffer(true);
}

static void test_foreign(void)
{
	struct pkt_gen *g = make_gen(false, 60, false), *bare = NULL;
	struct stamp st;
	__u8 f[128], v[128];

	if (!ASSERT_TRUE(g, "create"))
		goto out;
	pkt_gen_prefill(g, f);
	pkt_gen_write(g, f, 0, 1, 2);
	ASSERT_EQ(rd(f, 60, &st), STAMP_DATA, "baseline frame is stamped");

	/* one 802.1Q tag */
	memcpy(v, f, 12);
	v[12] = 0x81;
	v[13] = 0x00;
	v[14] = 0x00;
	v[15] = 0x07;
	memcpy(v + 16, f + 12, 48);
	ASSERT_EQ(rd(v, 64, &st), STAMP_DATA, "VLAN-tagged frame");
	ASSERT_EQ(st.seq, 1, "seq through VLAN");

	/* IPv4 options: IHL 6, stamp moves back by 4 */
	memcpy(v, f, 34);
	v[14] = 0x46;
	v[17] += 4;
	memset(v + 34, 1, 4); /* NOP options */
	memcpy(v + 38, f + 34, 26);
	ASSERT_EQ(rd(v, 64, &st), STAMP_DATA, "IPv4 options honoured");
	ASSERT_EQ(st.seq, 1, "seq after options");
	ASSERT_ERR(rd(v, 63, &st), -EINVAL, "options frame truncated");

	memcpy(v, f, 60);
	v[42] ^= 0xff;
	ASSERT_ERR(rd(v, 60, &st), -ENOENT, "wrong magic");
	memcpy(v, f, 60);
	v[23] = 6;
	ASSERT_ERR(rd(v, 60, &st), -EINVAL, "a UDP header read as TCP (data offset 0)");
	memcpy(v, f, 60);
	v[12] = 0x08;
	v[13] = 0x06;
	ASSERT_ERR(rd(v, 60, &st), -ENOENT, "ARP");
	memcpy(v, f, 60);
	v[20] = 0x20; /* MF */
	ASSERT_ERR(rd(v, 60, &st), -ENOENT, "IPv4 fragment");
	memcpy(v, f, 60);
	v[14] = 0x44; /* IHL 4 */
	ASSERT_ERR(rd(v, 60, &st), -EINVAL, "IHL below 5");
	memcpy(v, f, 60);
	v[39] = 7; /* UDP length 7 */
	ASSERT_ERR(rd(v, 60, &st), -EINVAL, "UDP length below 8");

	bare = make_gen(false, 50, true);
	if (!ASSERT_TRUE(bare, "create unstamped"))
		goto out;
	pkt_gen_prefill(bare, f);
	pkt_gen_write(bare, f, 0, 1, 2);
	ASSERT_ERR(rd(f, 50, &st), -ENOENT, "UDP payload too short for a stamp");
	pkt_gen__destroy(bare);
	bare = make_gen(false, 60, true);
	if (!ASSERT_TRUE(bare, "create unstamped 60"))
		goto out;
	pkt_gen_prefill(bare, f);
	pkt_gen_write(bare, f, 0, 1, 2);
	ASSERT_ERR(rd(f, 60, &st), -ENOENT, "unstamped payload of stamp size");
out:
	pkt_gen__destroy(bare);
	pkt_gen__destroy(g);
}

static void test_foreign_v6(void)
{
	struct pkt_gen *g = make_gen(true, 80, false);
	struct stamp st;
	__u8 f[128];

	if (!ASSERT_TRUE(g, "create"))
		return;
	pkt_gen_prefill(g, f);
	pkt_gen_write(g, f, 2, 3, 4);
	ASSERT_EQ(rd(f, 80, &st), STAMP_DATA, "IPv6 stamped");
	f[20] = 0; /* next header: hop-by-hop options, read from the UDP header's bytes */
	ASSERT_TRUE(rd(f, 80, &st) < 0, "no stamp behind a garbage extension header");
	f[20] = 17;
	f[19] = 200; /* payload length beyond the frame */
	ASSERT_ERR(rd(f, 80, &st), -EINVAL, "IPv6 payload length too long");
	pkt_gen__destroy(g);
}

/*
 * The UDP header of a generated frame turned into an ICMP one of the same
 * size: the stamp stays at the start of the L4 payload. Only an echo's data
 * is a stamp; any other ICMP message with the same bytes is foreign.
 */
static void check_icmp(bool v6)
{
	struct pkt_gen *g = make_gen(v6, v6 ? 80 : 60, false);
	unsigned int l4 = v6 ? 54 : 34, len = v6 ? 80 : 60;
	const __u8 echo[2] = { v6 ? 128 : 8, v6 ? 129 : 0 };
	const __u8 other[2] = { v6 ? 135 : 13, v6 ? 1 : 3 }; /* ND NS, timestamp; unreachable */
	struct stamp st;
	__u8 f[128];
	int i;

	if (!ASSERT_TRUE(g, "create"))
		return;
	pkt_gen_prefill(g, f);
	pkt_gen_write(g, f, 1, 7, 9);
	f[v6 ? 20 : 23] = v6 ? 58 : 1;
	for (i = 0; i < 2; i++) {
		f[l4] = echo[i];
		ASSERT_EQ(rd(f, len, &st), STAMP_DATA, "an echo's data carries the stamp");
		ASSERT_EQ(st.seq, 7, "seq in the echo's data");
		f[l4] = other[i];
		ASSERT_ERR(rd(f, len, &st), -ENOENT, "ICMP that is no echo: foreign");
	}
	pkt_gen__destroy(g);
}

static void test_icmp_echo_only(void)
{
	check_icmp(false);
	check_icmp(true);
}

/* SipHash-2-4's reference vectors (key 00..0f, message 00..n-1): the round function is SipHash's. */
static void test_siphash_reference(void)
{
	static const struct {
		size_t n;
		__u64 want;
	} v[] = {
		{ 0, 0x726fdb47dd0e0e31ULL },  { 1, 0x74f839c593dc67fdULL },
		{ 8, 0x93f5f5799a932462ULL },  { 15, 0xa129ca6149be45e5ULL },
		{ 63, 0x958a324ceb064572ULL },
	};
	__u8 key[16], msg[64];
	__u64 k0, k1;
	unsigned int i;

	for (i = 0; i < sizeof(msg); i++)
		msg[i] = (__u8)i;
	for (i = 0; i < 16; i++)
		key[i] = (__u8)i;
	memcpy(&k0, key, 8);
	memcpy(&k1, key + 8, 8);
	k0 = le64toh(k0);
	k1 = le64toh(k1);
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		ASSERT_EQ_U64(stamp_siphash(k0, k1, msg, v[i].n, 2, 4), v[i].want, "SipHash-2-4");
}

/*
 * The tag a writer makes from its flow's state (stamp_tag.h) is SipHash-1-3
 * of the 16-byte message m0 m1, computed from scratch.
 */
static void test_tag_is_siphash13(void)
{
	struct stamp_key k;
	struct stamp st;
	__u8 buf[XDPSG_STAMP_SIZE], msg[16];
	__u64 m0, m1, ns = 123456789012345ULL;
	__u32 tag;

	stamp_key_public(&k);
	stamp_write(buf, &k, 0x01020304, 77, 0xa0b0c0d0, ns);
	ASSERT_EQ(stamp_check(buf, sizeof(buf), &k, &st), STAMP_DATA, "checks");
	m0 = htole64(0x01020304ULL | 77ULL << 32 | XDPSG_TAG_DOMAIN << 48);
	m1 = htole64(0xa0b0c0d0ULL | (__u64)stamp_ticks(ns) << 32);
	memcpy(msg, &m0, 8);
	memcpy(msg + 8, &m1, 8);
	memcpy(&tag, buf + XDPSG_STAMP_OFF_TAG, 4);
	ASSERT_EQ_U64(le32toh(tag), (__u32)stamp_siphash(k.k0, k.k1, msg, 16, 1, 3),
		      "tag = SipHash-1-3(key, m0 m1), low 32 bits");
}

/* Any field changed, or another key: the check fails (-EBADMSG), the magic still there. */
static void test_forged(void)
{
	struct stamp_key k, other;
	struct stamp st;
	__u8 buf[XDPSG_STAMP_SIZE], v[XDPSG_STAMP_SIZE];
	unsigned int i;

	stamp_key_public(&k);
	other = k;
	other.k1 ^= 1;
	stamp_write(buf, &k, 9, 3, 100, 5000000);
	ASSERT_EQ(stamp_check(buf, sizeof(buf), &k, &st), STAMP_DATA, "genuine");
	ASSERT_EQ(stamp_check(buf, sizeof(buf), &other, &st), -EBADMSG, "another key");
	ASSERT_EQ(st.run, 9, "read as it was, though forged");
	for (i = 1; i < XDPSG_STAMP_SIZE; i++) {
		memcpy(v, buf, sizeof(v));
		v[i] ^= 0x10;
		if (!ASSERT_EQ(stamp_check(v, sizeof(v), &k, &st), -EBADMSG, "a byte changed"))
			fprintf(stderr, "  byte %u\n", i);
	}
	memcpy(v, buf, sizeof(v));
	v[0] ^= 1;
	ASSERT_EQ(stamp_check(v, sizeof(v), &k, &st), -ENOENT, "no magic: no stamp at all");
	ASSERT_EQ(stamp_check(buf, sizeof(buf) - 1, &k, &st), -ENOENT, "too short");
}

static void test_mark_round_trip(void)
{
	struct xdpsg_mark m = {
		.kind = XDPSG_MARK_END,
		.clock = XDPSG_CLOCK_TAI,
		.flow = 513,
		.repeat = 2,
		.flags = XDPSG_MARK_F_SYNCED,
		.flow_frames = 0x1122334455ULL,
		.run_frames = 0x99887766554433ULL,
		.clock_ns = 0xfedcba9876543210ULL,
		.clock_id = 0x0123456789abcdefULL,
		.nflows = 70000,
		.sync_error_us = 1234,
	};
	__u8 buf[XDPSG_STAMP_SIZE + XDPSG_MARK_SIZE], v[sizeof(buf)];
	struct stamp_key k;
	struct stamp st;
	unsigned int i;

	stamp_key_public(&k);
	stamp_write_mark(buf, &k, 0xabcdef01, 777777777, &m);
	ASSERT_EQ(stamp_check(buf, sizeof(buf), &k, &st), STAMP_MARK, "a mark");
	ASSERT_EQ(st.flow, XDPSG_MARK_FLOW, "on the marks' flow");
	ASSERT_EQ(st.run, 0xabcdef01, "run");
	ASSERT_EQ(st.seq, 2, "seq: the repeat");
	ASSERT_TRUE(!memcmp(&st.mark, &m, sizeof(m)), "the body as written");
	ASSERT_EQ(stamp_check(buf, sizeof(buf) - 1, &k, &st), -EBADMSG, "cut short");
	for (i = XDPSG_STAMP_SIZE; i < sizeof(buf); i++) {
		memcpy(v, buf, sizeof(v));
		v[i] ^= 0x80;
		if (!ASSERT_EQ(stamp_check(v, sizeof(v), &k, &st), -EBADMSG, "a body byte changed"))
			fprintf(stderr, "  byte %u\n", i);
	}
}

static int write_file(const char *path, const char *bytes, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ssize_t w;

	if (fd < 0)
		return -1;
	w = write(fd, bytes, n);
	close(fd);
	return w == (ssize_t)n ? 0 : -1;
}

static void test_key_files(void)
{
	char dir[] = "/tmp/xdpsg-key-XXXXXX", a[64], b[64], err[256];
	struct stamp_key ka, kb, pub;

	if (!ASSERT_TRUE(mkdtemp(dir), "temp dir"))
		return;
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	stamp_key_public(&pub);
	unsetenv(STAMP_KEY_ENV);
	ASSERT_OK(stamp_key_resolve(&ka, NULL, err, sizeof(err)), "no file: the public key");
	ASSERT_TRUE(ka.public_key && ka.k0 == pub.k0 && ka.k1 == pub.k1, "public");
	ASSERT_EQ(stamp_key_resolve(&ka, a, err, sizeof(err)), -ENOENT, "missing file");
	ASSERT_TRUE(strstr(err, a) && strstr(err, "--stamp-key"), "the error names the file");
	ASSERT_OK(write_file(a, "0123456789abcde\n", 16), "write");
	ASSERT_EQ(stamp_key_resolve(&ka, a, err, sizeof(err)), -EINVAL, "15 bytes and a newline");
	ASSERT_TRUE(strstr(err, "too short") != NULL, "says too short");
	ASSERT_OK(write_file(a, "0123456789abcdef\n", 17), "write");
	ASSERT_OK(write_file(b, "0123456789abcdef", 16), "write");
	ASSERT_OK(stamp_key_resolve(&ka, a, err, sizeof(err)), "16 bytes and a newline");
	ASSERT_OK(stamp_key_resolve(&kb, b, err, sizeof(err)), "16 bytes");
	ASSERT_TRUE(!ka.public_key && ka.k0 == kb.k0 && ka.k1 == kb.k1,
		    "trailing whitespace is no part of the key");
	ASSERT_TRUE(ka.k0 != pub.k0 && strcmp(ka.id, pub.id), "not the public key");
	ASSERT_OK(write_file(b, "0123456789abcdeF", 16), "write");
	ASSERT_OK(stamp_key_resolve(&kb, b, err, sizeof(err)), "another key");
	ASSERT_TRUE(ka.k0 != kb.k0 && strcmp(ka.id, kb.id), "another file, another key and id");
	setenv(STAMP_KEY_ENV, b, 1);
	ASSERT_OK(stamp_key_resolve(&ka, NULL, err, sizeof(err)), "the environment's file");
	ASSERT_TRUE(ka.k0 == kb.k0 && !strcmp(ka.id, kb.id), "is the key");
	ASSERT_OK(stamp_key_resolve(&ka, a, err, sizeof(err)), "--stamp-key first");
	ASSERT_TRUE(ka.k0 != kb.k0, "over the environment");
	unsetenv(STAMP_KEY_ENV);
	unlink(a);
	unlink(b);
	rmdir(dir);
}

/* The send time moved by pkt_gen_set_time(): stamp and checksum still right. */
static void test_retime(void)
{
	struct pkt_gen *g = make_gen(false, 100, false);
	struct stamp st;
	__u8 f[128];

	if (!ASSERT_TRUE(g, "create"))
		return;
	pkt_gen_prefill(g, f);
	pkt_gen_write(g, f, 2, 41, 0);
	pkt_gen_set_time(g, f, 987654321987ULL);
	ASSERT_EQ(rd(f, 100, &st), STAMP_DATA, "still a genuine stamp");
	ASSERT_EQ(st.ticks, stamp_ticks(987654321987ULL), "the new time");
	ASSERT_EQ(st.seq, 41, "seq kept");
	ASSERT_EQ(pkt_verify_checksums(f, 100), PKT_CSUM_OK, "checksum follows");
	pkt_gen__destroy(g);
}

/* stamp_time(): the tick before now, across the 24-bit wrap. */
static void test_time_wrap(void)
{
	__u64 now = 5 * STAMP_WRAP_NS + 1000;

	ASSERT_EQ_U64(stamp_time(stamp_ticks(now - 10000), now), ((now - 10000) & ~127ULL) + 64,
		      "10 us before");
	ASSERT_EQ_U64(stamp_time(stamp_ticks(now - 2000), now), ((now - 2000) & ~127ULL) + 64,
		      "just before the wrap, read after it");
	ASSERT_EQ_U64(stamp_time(stamp_ticks(now), now), (now & ~127ULL) + 64, "the same tick");
	ASSERT_EQ_U64(stamp_time(stamp_ticks(now - 100), now - 100), now - 100,
		      "early in its tick: not after the reading");
}

static const struct test_case cases[] = {
	TEST_CASE(round_trip_v4_min), TEST_CASE(round_trip_v6_min), TEST_CASE(round_trip_large),
	TEST_CASE(foreign),	      TEST_CASE(foreign_v6),	    TEST_CASE(icmp_echo_only),
	TEST_CASE(siphash_reference), TEST_CASE(tag_is_siphash13),  TEST_CASE(forged),
	TEST_CASE(mark_round_trip),   TEST_CASE(key_files),	    TEST_CASE(retime),
	TEST_CASE(time_wrap),	      TEST_CASE(first_buffer),
};

TEST_MAIN("stamp", cases)
