// SPDX-License-Identifier: GPL-2.0
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include "pkt/gen.h"
#include "pkt/build.h"
#include "pkt/text.h"
#include "pkt/stamp.h"
#include "test.h"

/*
 * Reference checksums, written independently of common/pkt/: big-endian 16-bit
 * words, header fields rebuilt from the frame with the checksum zeroed.
 */
static __u32 ref_sum(const __u8 *p, size_t n, __u32 s)
{
	size_t i;

	for (i = 0; i < n; i += 2)
		s += (__u32)(p[i] << 8) | (i + 1 < n ? p[i + 1] : 0);
	return s;
}

static __u16 ref_finish(__u32 s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (__u16)(~s & 0xffff);
}

static __u16 wire16(const __u8 *p)
{
	return (__u16)(p[0] << 8 | p[1]);
}

static __u16 ref_ip_csum(const __u8 *f)
{
	__u8 h[20];

	memcpy(h, f + 14, 20);
	h[10] = h[11] = 0;
	return ref_finish(ref_sum(h, 20, 0));
}

/* UDP checksum over the UDP length the header gives, 0 mapped to 0xffff. */
static __u16 ref_udp_csum(const __u8 *f, bool v6)
{
	unsigned int l4 = v6 ? 54 : 34, ulen = wire16(f + l4 + 4);
	__u8 udp[65536];
	__u32 s = 0;
	__u16 c;

	if (v6)
		s = ref_sum(f + 22, 32, 0);
	else
		s = ref_sum(f + 26, 8, 0);
	s += 17 + ulen;
	memcpy(udp, f + l4, ulen);
	udp[6] = udp[7] = 0;
	c = ref_finish(ref_sum(udp, ulen, s));
	return c ? c : 0xffff;
}

static struct pkt_gen *make_gen(struct pkt_opts *o)
{
	char err[256] = "";
	struct pkt_gen *g = pkt_gen__create(o, err, sizeof(err));

	if (!g)
		fprintf(stderr, "  pkt_gen__create: %s\n", err);
	return g;
}

static void v6_opts(struct pkt_opts *o, const char *src, const char *dst)
{
	char err[256];

	ASSERT_OK(pkt_text_ip_range(src, &o->src_ip, err, sizeof(err)), "parse v6 src");
	ASSERT_OK(pkt_text_ip_range(dst, &o->dst_ip, err, sizeof(err)), "parse v6 dst");
}

/*
 * Golden frames, computed apart from common/pkt/: by scapy (headers
 * and checksums) around testenv/xdpsg/stamp.py's pack() (the stamp and its
 * tag), as in
 *
 *	/usr/bin/python3 -c 'import sys; sys.path.insert(0, "testenv")
 *	from xdpsg import stamp; from scapy.all import *
 *	st = stamp.pack(stamp.Key.public_key(), 0x1234, 0, 1, 0x0102030405060708)
 *	pay = st + bytes((0xa5 ^ i) & 0xff for i in range(60, 72))
 *	print(raw(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") /
 *		IP(src="10.0.0.1", dst="10.0.0.2", flags="DF", id=0) /
 *		UDP(sport=1024, dport=9) / pay).hex())'
 *
 * and the same for the other frames below (IPv6 with IPv6(hlim=64), a key
 * of its own with stamp.Key.from_bytes()).
 */
static void test_golden_v4(void)
{
	static const __u8 head[42] = {
		0x02, 0, 0,  0,	 0, 0x02, 0x02, 0,    0,    0,	  0,	0x01, 0x08, 0x00, /* eth */
		0x45, 0, 0,  58, 0, 0,	  0x40, 0,    64,   17,	  0x26, 0xb1, 10,   0,
		0,    1, 10, 0,	 0, 2,	  0x04, 0x00, 0x00, 0x09, 0,	38,   0xa7, 0x60, /* udp */
	};
	/* Stamp version 3: magic, ticks of the send time, run, flow, seq, tag (public key). */
	static const __u8 stamp[18] = { 0xa3, 0x0e, 0x0c, 0x0a, 0x34, 0x12, 0x00, 0x00, 0x00,
					0x00, 0x01, 0x00, 0x00, 0x00, 0xa6, 0xcf, 0xec, 0x78 };
	struct pkt_gen *g = NULL;
	struct pkt_opts o;
	__u8 f[128];
	unsigned int len, i;

	pkt_opts_init(&o);
	o.size = 72;
	o.run = 0x1234;
	g = make_gen(&o);
	if (!ASSERT_TRUE(g, "create v4 generator"))
		goto out;
	memset(f, 0xee, sizeof(f));
	pkt_gen_prefill(g, f);
	len = pkt_gen_write_tmpl(g, f, 0, 0, 1, 0x0102030405060708ULL);
	ASSERT_EQ(len, 72, "v4 frame length");
	ASSERT_EQ(memcmp(f, head, 42), 0, "v4 headers byte for byte");
	ASSERT_EQ(memcmp(f + 42, stamp, 18), 0, "v4 stamp bytes little-endian");
	ASSERT_EQ(wire16(f + 24), 0x26b1, "v4 IP checksum (hard-coded)");
	ASSERT_EQ(wire16(f + 40), 0xa760, "v4 UDP checksum (hard-coded)");
	ASSERT_EQ(wire16(f + 24), ref_ip_csum(f), "v4 IP checksum vs reference");
	ASSERT_EQ(wire16(f + 40), ref_udp_csum(f, false), "v4 UDP checksum vs reference");
	for (i = 60; i < 72; i++)
		if (!ASSERT_EQ(f[i], (__u8)(0xa5 ^ i), "payload pattern"))
			break;
	ASSERT_EQ(f[72], 0xee, "nothing written past the frame");
	ASSERT_EQ(pkt_verify_checksums(f, len), PKT_CSUM_OK, "verifier accepts v4");
out:
	pkt_gen__destroy(g);
}

/*
 * Flow 3 of 4 (src ports 4997-5000): checksums come from the incremental
 * path; under the public key, then under a key of a file's bytes.
 */
static void test_golden_v4_flow(void)
{
	static const __u8 stamp_pub[18] = { 0xa3, 0x9a, 0xb7, 0x0e, 0xef, 0xbe, 0x00, 0x00, 0x03,
					    0x00, 0xfe, 0xff, 0xff, 0xff, 0xdc, 0x0f, 0x4c, 0xdb };
	static const __u8 stamp_key[18] = { 0xa3, 0x9a, 0xb7, 0x0e, 0xef, 0xbe, 0x00, 0x00, 0x03,
					    0x00, 0xfe, 0xff, 0xff, 0xff, 0x03, 0x90, 0x93, 0x80 };
	static const char key_bytes[] = "golden test key, not secret\n";
	char path[] = "/tmp/xdpsg-test-key.XXXXXX";
	struct stamp_key key;
	struct pkt_gen *g = NULL;
	struct pkt_opts o;
	char err[256];
	__u8 f[128];
	int fd;

	pkt_opts_init(&o);
	ASSERT_OK(pkt_text_ip_range("192.168.1.10", &o.src_ip, err, sizeof(err)), "src");
	ASSERT_OK(pkt_text_ip_range("192.168.2.20", &o.dst_ip, err, sizeof(err)), "dst");
	ASSERT_OK(pkt_text_port_range("4997-5000", &o.src_port, err, sizeof(err)), "sport");
	ASSERT_OK(pkt_text_port_range("6000", &o.dst_port, err, sizeof(err)), "dport");
	o.flows = 4;
	o.run = 0xbeef;
	g = make_gen(&o);
	if (!ASSERT_TRUE(g, "create"))
		goto out;
	pkt_gen_prefill(g, f);
	ASSERT_EQ(pkt_gen_write_tmpl(g, f, 0, 3, 0xfffffffe, 123456789), 60, "length");
	ASSERT_EQ(wire16(f + 34), 5000, "flow 3 src port");
	ASSERT_EQ(wire16(f + 24), 0xb650, "IP checksum (hard-coded)");
	ASSERT_EQ(wire16(f + 40), 0xdaff, "UDP checksum (hard-coded)");
	ASSERT_EQ(memcmp(f + 42, stamp_pub, 18), 0, "stamp under the public key");
	pkt_gen__destroy(g);
	g = NULL;

	fd = mkstemp(path);
	if (!ASSERT_GE(fd, 0, "key file"))
		goto out;
	ASSERT_EQ(write(fd, key_bytes, sizeof(key_bytes) - 1), (ssize_t)sizeof(key_bytes) - 1,
		  "write the key file");
	close(fd);
	ASSERT_OK(stamp_key_resolve(&key, path, err, sizeof(err)), "the file's key");
	unlink(path);
	ASSERT_STREQ(key.id, "a1787efb", "the key's id (stamp.py's)");
	o.key = &key;
	g = make_gen(&o);
	if (!ASSERT_TRUE(g, "create, keyed"))
		goto out;
	pkt_gen_prefill(g, f);
	ASSERT_EQ(pkt_gen_write_tmpl(g, f, 0, 3, 0xfffffffe, 123456789), 60, "length");
	ASSERT_EQ(wire16(f + 40), 0x6cda, "UDP checksum, keyed (hard-coded)");
	ASSERT_EQ(memcmp(f + 42, stamp_key, 18), 0, "stamp under the file's key");
out:
	pkt_gen__destroy(g);
}

static void test_golden_v6(void)
{
	static const __u8 ip6[40] = {
		0x60, 0, 0, 0, 0,    36, 17, 64, 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0,    0, 0, 1, 0xfd, 0,	 0,  0,	 0,    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,
	};
	struct pkt_gen *g = NULL;
	struct pkt_opts o;
	__u8 f[128];
	unsigned int len;

	pkt_opts_init(&o);
	v6_opts(&o, "fd00::1", "fd00::2");
	o.size = 90;
	o.run = 0x1234;
	g = make_gen(&o);
	if (!ASSERT_TRUE(g, "create v6 generator"))
		goto out;
	pkt_gen_prefill(g, f);
	len = pkt_gen_write_tmpl(g, f, 0, 0, 1, 0x0102030405060708ULL);
	ASSERT_EQ(len, 90, "v6 frame length");
	ASSERT_EQ(wire16(f + 12), 0x86dd, "ethertype IPv6");
	ASSERT_EQ(memcmp(f + 14, ip6, 40), 0, "IPv6 header byte for byte");
	ASSERT_EQ(wire16(f + 58), 36, "UDP length");
	ASSERT_EQ(wire16(f + 60), 0xb858, "v6 UDP checksum (hard-coded)");
	ASSERT_EQ(wire16(f + 60), ref_udp_csum(f, true), "v6 UDP checksum vs reference");
	ASSERT_EQ(f[62], XDPSG_STAMP_MAGIC, "stamp magic at offset 62");
	ASSERT_EQ(pkt_verify_checksums(f, len), PKT_CSUM_OK, "verifier accepts v6");
	f[70] ^= 1;
	ASSERT_EQ(pkt_verify_checksums(f, len), PKT_CSUM_BAD_UDP, "verifier catches a flipped bit");
out:
	pkt_gen__destroy(g);
}

/*
 * A replayed file's frame turned into a mark (pkt_udp_repayload()): its own
 * headers, IPv4 with options, IPv6, a VLAN tag; the new lengths and
 * checksums right (the reference sums above), the mark read back.
 */
static void test_udp_repayload(void)
{
	struct xdpsg_mark mk = { .kind = XDPSG_MARK_START, .flow = 2, .nflows = 3 };
	struct stamp_key key;
	__u8 f[256], out[256], body[PKT_MARK_PAYLOAD];
	struct pkt_gen *g = NULL;
	struct pkt_info pi;
	struct pkt_opts o;
	struct stamp st;
	unsigned int len, v, want;

	stamp_key_public(&key);
	stamp_write_mark(body, &key, 0x77, 5000, &mk);
	for (v = 0; v < 3; v++) {
		pkt_opts_init(&o);
		if (v == 1)
			v6_opts(&o, "fd00::1", "fd00::2");
		o.size = 200;
		o.nvlan = v == 2;
		g = make_gen(&o);
		if (!ASSERT_TRUE(g, "create"))
			return;
		pkt_gen_prefill(g, f);
		pkt_gen_write_tmpl(g, f, 0, 0, 7, 1);
		len = 200;
		if (v == 0) {
			/* Four bytes of IPv4 options (NOP NOP NOP EOL): IHL 6. */
			memmove(f + 38, f + 34, len - 34);
			memcpy(f + 34, "\x01\x01\x01\x00", 4);
			f[14] = 0x46;
			len += 4;
			f[16] = (__u8)((len - 14) >> 8);
			f[17] = (__u8)(len - 14);
		}
		ASSERT_OK(pkt_parse_udp(f, len, &pi), "a UDP frame");
		want = pi.payload_off + PKT_MARK_PAYLOAD;
		ASSERT_EQ(pkt_udp_repayload(f, &pi, body, sizeof(body), out, want - 1), 0,
			  "no room: nothing");
		ASSERT_EQ(pkt_udp_repayload(f, &pi, body, sizeof(body), out, sizeof(out)), want,
			  "headers and the mark");
		ASSERT_EQ(memcmp(out, f, pi.l3_off), 0, "the same Ethernet header and tags");
		if (v != 1)
			ASSERT_EQ(
				ref_finish(ref_sum(out + pi.l3_off, (out[pi.l3_off] & 15) * 4, 0)),
				0, "IPv4 header checksum (the options in it)");
		ASSERT_EQ(pkt_verify_checksums(out, want), PKT_CSUM_OK, "UDP checksum and lengths");
		ASSERT_EQ(stamp_read(out, want, &key, &st), STAMP_MARK, "the mark reads back");
		ASSERT_EQ(st.mark.flow, 2, "its flow");
		pkt_gen__destroy(g);
	}
}

static __u64 rnd_state = 88172645463325252ULL;

static __u64 rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* Thousands of random flows/seqs/timestamps/sizes: incremental == full recomputation. */
static void check_incremental(bool v6, bool copy_payload)
{
	static __u8 recycled[2048], fresh[2048];
	struct pkt_gen *g = NULL;
	struct pkt_imix imix;
	struct pkt_opts o;
	char err[256];
	unsigned int i, len, bad = 0;

	pkt_opts_init(&o);
	if (v6) {
		v6_opts(&o, "fd00::1:0-fd00::1:ff", "fd00:1::ffff:fff0-fd00:1::1:0:f");
		ASSERT_OK(pkt_text_imix("81:3,577:2,1499:1,80:1", &imix, err, sizeof(err)), "imix");
	} else {
		ASSERT_OK(pkt_text_ip_range("10.0.0.250-10.0.1.5", &o.src_ip, err, sizeof(err)),
			  "src");
		ASSERT_OK(pkt_text_ip_range("192.168.255.255-192.169.0.3", &o.dst_ip, err,
					    sizeof(err)),
			  "dst");
		ASSERT_OK(pkt_text_imix("60:3,61:2,577:2,1500:1", &imix, err, sizeof(err)), "imix");
	}
	ASSERT_OK(pkt_text_port_range("65530-65535", &o.src_port, err, sizeof(err)), "sport");
	ASSERT_OK(pkt_text_port_range("1-7", &o.dst_port, err, sizeof(err)), "dport");
	o.imix = &imix;
	o.flows = 2000;
	o.random = true;
	o.seed = 42;
	o.copy_payload = copy_payload;
	o.max_size = 1514;
	g = make_gen(&o);
	if (!ASSERT_TRUE(g, "create"))
		goto out;
	memset(recycled, 0x77, sizeof(recycled));
	if (!copy_payload)
		pkt_gen_prefill(g, recycled);
	for (i = 0; i < 20000 && !bad; i++) {
		__u32 flow = pkt_gen_next_flow(g);
		__u32 seq = (__u32)rnd();
		__u64 ts = i % 3 ? rnd() : i; /* small and large timestamps */
		unsigned int t = pkt_gen_next_size(g);

		len = pkt_gen_write_tmpl(g, recycled, t, flow, seq, ts);
		if (!v6 && wire16(recycled + 24) != ref_ip_csum(recycled)) {
			ASSERT_EQ(wire16(recycled + 24), ref_ip_csum(recycled), "IP checksum");
			bad++;
		}
		if (wire16(recycled + (v6 ? 60 : 40)) != ref_udp_csum(recycled, v6)) {
			ASSERT_EQ(wire16(recycled + (v6 ? 60 : 40)), ref_udp_csum(recycled, v6),
				  "UDP checksum");
			bad++;
		}
		if (wire16(recycled + (v6 ? 60 : 40)) == 0) {
			ASSERT_TRUE(false, "UDP checksum is never 0");
			bad++;
		}
		if (pkt_verify_checksums(recycled, len) != PKT_CSUM_OK) {
			ASSERT_EQ(pkt_verify_checksums(recycled, len), PKT_CSUM_OK, "verifier");
			bad++;
		}
		/* A recycled buffer must hold exactly what a fresh full copy holds. */
		if (i % 16 == 0) {
			struct pkt_opts fo = o;
			struct pkt_gen *fg;

			fo.copy_payload = true;
			fo.random = false;
			fg = make_gen(&fo);
			if (!ASSERT_TRUE(fg, "create fresh"))
				break;
			memset(fresh, 0x33, sizeof(fresh));
			ASSERT_EQ(pkt_gen_write_tmpl(fg, fresh, t, flow, seq, ts), len,
				  "fresh length");
			if (memcmp(fresh, recycled, len)) {
				ASSERT_TRUE(false, "recycled frame equals a fresh full copy");
				bad++;
			}
			pkt_gen__destroy(fg);
		}
	}
	ASSERT_EQ(bad, 0, "frames with a wrong checksum or content");
out:
	pkt_gen__destroy(g);
}

static void test_incremental_v4(void)
{
	check_incremental(false, false);
}

static void test_incremental_v6(void)
{
	check_incremental(true, false);
}

static void test_incremental_copy_payload(void)
{
	check_incremental(false, true);
}

/* Walk seq until the computed UDP checksum is 0: it must go out as 0xffff. */
static void check_zero_corner(bool v6)
{
	struct pkt_gen *g = NULL;
	struct pkt_opts o;
	__u8 f[128];
	__u32 seq;
	bool found = false;
	unsigned int off = v6 ? 60 : 40;

	pkt_opts_init(&o);
	if (v6)
		v6_opts(&o, "fd00::1", "fd00::2");
	o.size = v6 ? 80 : 60;
	g = make_gen(&o);
	if (!ASSERT_TRUE(g, "create"))
		goto out;
	pkt_gen_prefill(g, f);
	for (seq = 0; seq < 0x30000; seq++) {
		__u16 raw;

		pkt_gen_write_tmpl(g, f, 0, 0, seq, 7);
		/* What the checksum would be without the 0 -> 0xffff rule. */
		memset(f + off, 0, 2);
		raw = ref_finish(ref_sum(f + (v6 ? 22 : 26), v6 ? 32 : 8, 0) + 17 +
				 wire16(f + off - 2) + ref_sum(f + off - 6, o.size - (off - 6), 0));
		pkt_gen_write_tmpl(g, f, 0, 0, seq, 7);
		if (raw == 0) {
			found = true;
			ASSERT_EQ(wire16(f + off), 0xffff, "computed 0 is sent as 0xffff");
			ASSERT_EQ(pkt_verify_checksums(f, o.size), PKT_CSUM_OK, "0xffff verifies");
			break;
		}
	}
	ASSERT_TRUE(found, "a seq with UDP checksum 0 exists in range");
out:
	pkt_gen__destroy(g);
}

static void test_udp_zero_v4(void)
{
	check_zero_corner(false);
}

static void test_udp_zero_v6(void)
{
	check_zero_corner(true);
}

static void test_no_stamp(void)
{
	struct pkt_gen *g = NULL;
	struct pkt_opts o;
	__u8 f[64];
	unsigned int len;

	pkt_opts_init(&o);
	o.no_stamp = true;
	o.size = 42;
	g = make_gen(&o);
	if (!ASSERT_TRUE(g, "42-byte frames without a stamp"))
		goto out;
	ASSERT_EQ(pkt_gen_copy_len(g), 42, "copies headers only");
	pkt_gen_prefill(g, f);
	len = pkt_gen_write(g, f, 0, 5, 5);
	ASSERT_EQ(len, 42, "length");
	ASSERT_EQ(wire16(f + 38), 8, "empty UDP payload");
	ASSERT_EQ(pkt_verify_checksums(f, len), PKT_CSUM_OK, "checksums");
	ASSERT_EQ(wire16(f + 40), ref_udp_csum(f, false), "UDP checksum vs reference");
out:
	pkt_gen__destroy(g);
}

static void test_sizes(void)
{
	char err[256] = "";

	ASSERT_EQ(pkt_min_size(PKT_IPV4, true), 60, "IPv4 stamped minimum");
	ASSERT_EQ(pkt_min_size(PKT_IPV6, true), 80, "IPv6 stamped minimum");
	ASSERT_EQ(pkt_min_size(PKT_IPV4, false), 42, "IPv4 bare minimum");
	ASSERT_EQ(pkt_min_size(PKT_IPV6, false), 62, "IPv6 bare minimum");
	ASSERT_OK(pkt_check_size(PKT_IPV4, true, 60, 1514, err, sizeof(err)), "60 ok");
	ASSERT_OK(pkt_check_size(PKT_IPV4, true, 1514, 1514, err, sizeof(err)), "1514 ok");
	ASSERT_ERR(pkt_check_size(PKT_IPV4, true, 50, 1514, err, sizeof(err)), -EINVAL, "50");
	ASSERT_STREQ(
		err,
		"size 50 is below the 60-byte minimum for IPv4 UDP with a stamp; use -s 60 or more, or --no-stamp",
		"below minimum message");
	ASSERT_ERR(pkt_check_size(PKT_IPV6, true, 79, 1514, err, sizeof(err)), -EINVAL, "79 v6");
	ASSERT_STREQ(
		err,
		"size 79 is below the 80-byte minimum for IPv6 UDP with a stamp; use -s 80 or more, or --no-stamp",
		"v6 below minimum message");
	ASSERT_ERR(pkt_check_size(PKT_IPV4, false, 41, 1514, err, sizeof(err)), -EINVAL, "41");
	ASSERT_STREQ(err,
		     "size 41 is below the 42-byte minimum for IPv4 UDP headers; use -s 42 or more",
		     "no-stamp minimum message");
	ASSERT_ERR(pkt_check_size(PKT_IPV4, true, 1515, 1514, err, sizeof(err)), -EINVAL, "1515");
	ASSERT_STREQ(
		err,
		"size 1515 is above the 1514-byte maximum frame (MTU 1500 + 14); use -s 1514 or less, or raise the MTU",
		"above maximum message");
	ASSERT_OK(pkt_check_size(PKT_IPV4, true, 1514, 0, err, sizeof(err)), "max 0 = 1514");
	ASSERT_ERR(pkt_check_size(PKT_IPV4, true, 70000, 100000, err, sizeof(err)), -EINVAL,
		   "above the IPv4 length limit");
}

static void test_parse_mac(void)
{
	char err[256] = "";
	__u8 mac[6] = { 0 };

	ASSERT_OK(pkt_text_mac("aa:bb:cc:dd:ee:ff", mac, err, sizeof(err)), "lower case");
	ASSERT_EQ(mac[0], 0xaa, "byte 0");
	ASSERT_EQ(mac[5], 0xff, "byte 5");
	ASSERT_OK(pkt_text_mac("2:0:0:A:b:C0", mac, err, sizeof(err)), "short and mixed case");
	ASSERT_EQ(mac[0], 2, "short byte");
	ASSERT_EQ(mac[5], 0xc0, "upper case byte");
	ASSERT_ERR(pkt_text_mac("", mac, err, sizeof(err)), -EINVAL, "empty");
	ASSERT_STREQ(err, "empty MAC address; write it as aa:bb:cc:dd:ee:ff", "empty message");
	ASSERT_ERR(pkt_text_mac("aa:bb:cc:dd:ee", mac, err, sizeof(err)), -EINVAL, "five");
	ASSERT_STREQ(
		err,
		"bad MAC address 'aa:bb:cc:dd:ee': expected six hex bytes like aa:bb:cc:dd:ee:ff",
		"bad message");
	ASSERT_ERR(pkt_text_mac("aa:bb:cc:dd:ee:ff:00", mac, err, sizeof(err)), -EINVAL, "seven");
	ASSERT_ERR(pkt_text_mac("aaa:bb:cc:dd:ee:ff", mac, err, sizeof(err)), -EINVAL, "3 digits");
	ASSERT_ERR(pkt_text_mac("gg:bb:cc:dd:ee:ff", mac, err, sizeof(err)), -EINVAL, "not hex");
	ASSERT_ERR(pkt_text_mac("aa-bb-cc-dd-ee-ff", mac, err, sizeof(err)), -EINVAL, "dashes");
	ASSERT_EQ(mac[5], 0xc0, "untouched on error");
}

static void test_parse_ip_range(void)
{
	struct pkt_ip_range r;
	char err[256] = "";

	ASSERT_OK(pkt_text_ip_range("10.0.0.1", &r, err, sizeof(err)), "single v4");
	ASSERT_EQ(r.family, PKT_IPV4, "v4 family");
	ASSERT_EQ(r.lo_start, 0x0a000001, "v4 start");
	ASSERT_EQ(r.lo_end, 0x0a000001, "v4 single end");
	ASSERT_OK(pkt_text_ip_range("10.0.0.1-10.0.0.254", &r, err, sizeof(err)), "v4 range");
	ASSERT_EQ(r.lo_end, 0x0a0000fe, "v4 range end");
	ASSERT_OK(pkt_text_ip_range("fd00::1-fd00::ff", &r, err, sizeof(err)), "v6 range");
	ASSERT_EQ(r.family, PKT_IPV6, "v6 family");
	ASSERT_EQ_U64(r.hi, 0xfd00000000000000ULL, "v6 upper half");
	ASSERT_EQ(r.lo_start, 1, "v6 start");
	ASSERT_EQ(r.lo_end, 0xff, "v6 end");
	ASSERT_OK(pkt_text_ip_range("fd00::1:0:0:0-fd00::ffff:0:0:0", &r, err, sizeof(err)),
		  "v6 range in the top of the low half");

	ASSERT_ERR(pkt_text_ip_range("", &r, err, sizeof(err)), -EINVAL, "empty");
	ASSERT_STREQ(err, "empty address; give one like 10.0.0.1 or 10.0.0.1-10.0.0.254",
		     "empty message");
	ASSERT_ERR(pkt_text_ip_range("10.0.0.300", &r, err, sizeof(err)), -EINVAL, "bad v4");
	ASSERT_STREQ(
		err,
		"bad address '10.0.0.300': expected an IPv4 or IPv6 address or a range like 10.0.0.1-10.0.0.254",
		"bad message");
	ASSERT_ERR(pkt_text_ip_range("10.0.0.1-", &r, err, sizeof(err)), -EINVAL, "open range");
	ASSERT_ERR(pkt_text_ip_range("fd00::g", &r, err, sizeof(err)), -EINVAL, "bad v6");
	ASSERT_ERR(pkt_text_ip_range("10.0.0.1-fd00::1", &r, err, sizeof(err)), -EINVAL, "mixed");
	ASSERT_STREQ(
		err,
		"address range '10.0.0.1-fd00::1' mixes IPv4 and IPv6; give both ends in one family",
		"mixed message");
	ASSERT_ERR(pkt_text_ip_range("10.0.0.9-10.0.0.1", &r, err, sizeof(err)), -EINVAL,
		   "reversed");
	ASSERT_STREQ(err,
		     "address range '10.0.0.9-10.0.0.1' starts above its end; write it as LOW-HIGH",
		     "reversed message");
	ASSERT_ERR(pkt_text_ip_range("fd00::1-fd01::1", &r, err, sizeof(err)), -EINVAL,
		   "upper 64 bits");
	ASSERT_STREQ(
		err,
		"IPv6 range 'fd00::1-fd01::1' differs in the upper 64 bits; only the low 64 bits may vary, e.g. fd00::1-fd00::ff",
		"upper 64 bits message");
	ASSERT_ERR(pkt_text_ip_range("fd00::ff-fd00::1", &r, err, sizeof(err)), -EINVAL,
		   "v6 reversed");
}

static void test_parse_port_range(void)
{
	struct pkt_port_range r;
	char err[256] = "";

	ASSERT_OK(pkt_text_port_range("1000", &r, err, sizeof(err)), "single");
	ASSERT_EQ(r.start, 1000, "single start");
	ASSERT_EQ(r.end, 1000, "single end");
	ASSERT_OK(pkt_text_port_range("1000-2000", &r, err, sizeof(err)), "range");
	ASSERT_EQ(r.end, 2000, "range end");
	ASSERT_OK(pkt_text_port_range("65535", &r, err, sizeof(err)), "max port");
	ASSERT_ERR(pkt_text_port_range("", &r, err, sizeof(err)), -EINVAL, "empty");
	ASSERT_STREQ(err, "empty port; give one like 1000 or 1000-2000", "empty message");
	ASSERT_ERR(pkt_text_port_range("http", &r, err, sizeof(err)), -EINVAL, "name");
	ASSERT_STREQ(err, "bad port 'http': expected a number or a range like 1000-2000",
		     "bad message");
	ASSERT_ERR(pkt_text_port_range("10-", &r, err, sizeof(err)), -EINVAL, "open range");
	ASSERT_ERR(pkt_text_port_range("10x", &r, err, sizeof(err)), -EINVAL, "trailing");
	ASSERT_ERR(pkt_text_port_range("-5", &r, err, sizeof(err)), -EINVAL, "negative");
	ASSERT_ERR(pkt_text_port_range("65536", &r, err, sizeof(err)), -EINVAL, "too big");
	ASSERT_STREQ(err, "port in '65536' is above 65535; ports are 1-65535", "too big message");
	ASSERT_ERR(pkt_text_port_range("0-10", &r, err, sizeof(err)), -EINVAL, "zero");
	ASSERT_STREQ(err, "port 0 in '0-10' is reserved; ports are 1-65535", "zero message");
	ASSERT_ERR(pkt_text_port_range("2000-1000", &r, err, sizeof(err)), -EINVAL, "reversed");
	ASSERT_STREQ(err, "port range '2000-1000' starts above its end; write it as LOW-HIGH",
		     "reversed message");
}

static void test_imix(void)
{
	struct pkt_imix im;
	char err[256] = "";
	unsigned int i, cnt[3] = { 0 }, run = 0, max_run = 0;
	bool big_adjacent = false;

	ASSERT_OK(pkt_text_imix(PKT_IMIX_DEFAULT, &im, err, sizeof(err)), "default spec");
	ASSERT_EQ(im.n, 3, "three sizes");
	ASSERT_EQ(im.size[2], 1500, "third size");
	ASSERT_EQ(im.seq_len, 12, "sequence of 12");
	for (i = 0; i < im.seq_len; i++) {
		if (!ASSERT_LT(im.seq[i], 3, "index in range"))
			return;
		cnt[im.seq[i]]++;
		run = i && im.seq[i] == im.seq[i - 1] ? run + 1 : 1;
		if (run > max_run)
			max_run = run;
		if (i && im.seq[i] == 2 && im.seq[i - 1] == 2)
			big_adjacent = true;
	}
	ASSERT_EQ(cnt[0], 7, "seven 60s");
	ASSERT_EQ(cnt[1], 4, "four 576s");
	ASSERT_EQ(cnt[2], 1, "one 1500");
	ASSERT_LE(max_run, 2, "interleaved: no more than two equal sizes in a row");
	ASSERT_FALSE(big_adjacent, "1500s not adjacent");

	ASSERT_OK(pkt_text_imix("60:14,576:8,1500:2", &im, err, sizeof(err)), "scaled weights");
	ASSERT_EQ(im.seq_len, 12, "common factor divided out");
	ASSERT_OK(pkt_text_imix("64,1500", &im, err, sizeof(err)), "weights default to 1");
	ASSERT_EQ(im.seq_len, 2, "two entries");
	ASSERT_EQ(im.weight[1], 1, "weight 1");

	pkt_imix_default(&im, 80);
	ASSERT_EQ(im.size[0], 80, "default IMIX raised to the IPv6 minimum");
	ASSERT_EQ(im.size[1], 576, "576 kept");

	ASSERT_ERR(pkt_text_imix("", &im, err, sizeof(err)), -EINVAL, "empty");
	ASSERT_STREQ(err, "empty IMIX spec; give SIZE:WEIGHT pairs like 60:7,576:4,1500:1",
		     "empty message");
	ASSERT_ERR(pkt_text_imix("60:7,abc:4", &im, err, sizeof(err)), -EINVAL, "bad entry");
	ASSERT_STREQ(err, "bad IMIX entry 'abc:4' in '60:7,abc:4': expected SIZE:WEIGHT like 576:4",
		     "bad entry message");
	ASSERT_ERR(pkt_text_imix("60:7,,576:4", &im, err, sizeof(err)), -EINVAL, "empty entry");
	ASSERT_ERR(pkt_text_imix("60:7,", &im, err, sizeof(err)), -EINVAL, "trailing comma");
	ASSERT_ERR(pkt_text_imix("60:", &im, err, sizeof(err)), -EINVAL, "missing weight");
	ASSERT_ERR(pkt_text_imix("60:0", &im, err, sizeof(err)), -EINVAL, "weight 0");
	ASSERT_STREQ(
		err,
		"IMIX entry '60:0' has weight 0; weights are 1 or more (drop the entry instead)",
		"weight 0 message");
	ASSERT_ERR(pkt_text_imix("60:1,60:2", &im, err, sizeof(err)), -EINVAL, "duplicate size");
	ASSERT_STREQ(
		err,
		"IMIX spec '60:1,60:2' lists size 60 twice; give each size once with the summed weight",
		"duplicate message");
	ASSERT_ERR(pkt_text_imix("99999:1", &im, err, sizeof(err)), -EINVAL, "size too large");
	ASSERT_STREQ(
		err,
		"IMIX entry '99999:1' is too large; sizes go up to 65549, weights up to 1000000",
		"too large message");
	ASSERT_ERR(pkt_text_imix("60:1000,61:999", &im, err, sizeof(err)), -EINVAL, "sum");
	ASSERT_STREQ(
		err,
		"IMIX weights in '60:1000,61:999' add up to 1999 (after dividing by their common factor); keep the sum at 1024 or less",
		"sum message");
	ASSERT_ERR(pkt_text_imix("1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17", &im, err,
				 sizeof(err)),
		   -EINVAL, "too many sizes");
	ASSERT_STREQ(
		err,
		"IMIX spec '1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17' has more than 16 sizes; use fewer",
		"too many message");
}

/* The generator follows the sequence: 7:4:1 over 1200 frames. */
static void test_imix_distribution(void)
{
	struct pkt_gen *g = NULL;
	struct pkt_imix im;
	struct pkt_opts o;
	static __u8 f[1514];
	unsigned int i, n60 = 0, n576 = 0, n1500 = 0, len;
	char err[256];

	pkt_opts_init(&o);
	ASSERT_OK(pkt_text_imix(PKT_IMIX_DEFAULT, &im, err, sizeof(err)), "parse");
	o.imix = &im;
	g = make_gen(&o);
	if (!ASSERT_TRUE(g, "create"))
		goto out;
	ASSERT_EQ(pkt_gen_max_len(g), 1500, "largest frame");
	pkt_gen_prefill(g, f);
	for (i = 0; i < 1200; i++) {
		len = pkt_gen_next(g, f, i);
		n60 += len == 60;
		n576 += len == 576;
		n1500 += len == 1500;
		if (!ASSERT_EQ(pkt_verify_checksums(f, len), PKT_CSUM_OK, "checksums"))
			break;
	}
	ASSERT_EQ(n60, 700, "60-byte frames");
	ASSERT_EQ(n576, 400, "576-byte frames");
	ASSERT_EQ(n1500, 100, "1500-byte frames");
out:
	pkt_gen__destroy(g);
}

static void ranges_24(struct pkt_opts *o)
{
	char err[256];

	pkt_opts_init(o);
	ASSERT_OK(pkt_text_port_range("1000-1001", &o->src_port, err, sizeof(err)), "sport");
	ASSERT_OK(pkt_text_port_range("2000-2002", &o->dst_port, err, sizeof(err)), "dport");
	ASSERT_OK(pkt_text_ip_range("10.0.0.1-10.0.0.2", &o->src_ip, err, sizeof(err)), "src");
	ASSERT_OK(pkt_text_ip_range("10.1.0.1-10.1.0.2", &o->dst_ip, err, sizeof(err)), "dst");
}

static void test_flow_tuples(void)
{
	static const struct {
		__u32 flow;
		__u16 sport, dport;
		__u8 src, dst;
	} want[] = {
		{ 0, 1000, 2000, 1, 1 },  { 1, 1001, 2000, 1, 1 },  { 2, 1000, 2001, 1, 1 },
		{ 5, 1001, 2002, 1, 1 },  { 6, 1000, 2000, 2, 1 },  { 12, 1000, 2000, 1, 2 },
		{ 23, 1001, 2002, 2, 2 }, { 17, 1001, 2002, 1, 2 },
	};
	struct pkt_tuple t, all[24];
	struct pkt_opts o;
	unsigned int i, j;

	ranges_24(&o);
	ASSERT_EQ(pkt_tuple_count(&o), 24, "2 x 3 x 2 x 2 tuples");
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		pkt_flow_tuple(&o, want[i].flow, &t);
		ASSERT_EQ(t.sport, want[i].sport, "src port walks fastest");
		ASSERT_EQ(t.dport, want[i].dport, "then dst port");
		ASSERT_EQ(t.saddr[3], want[i].src, "then src ip");
		ASSERT_EQ(t.daddr[3], want[i].dst, "then dst ip");
		ASSERT_EQ(t.daddr[1], 1, "dst ip prefix");
	}
	for (i = 0; i < 24; i++)
		pkt_flow_tuple(&o, i, &all[i]);
	for (i = 0; i < 24; i++)
		for (j = i + 1; j < 24; j++)
			if (!ASSERT_NEQ(memcmp(&all[i], &all[j], sizeof(t)), 0, "tuples distinct"))
				return;
	pkt_flow_tuple(&o, 24, &t);
	ASSERT_EQ(memcmp(&t, &all[0], sizeof(t)), 0, "flow 24 wraps to flow 0's tuple");
}

static void test_flow_order(void)
{
	struct pkt_gen *g = NULL;
	struct pkt_opts o;
	unsigned int i, seen[24] = { 0 }, covered = 0;
	__u8 f[64];
	struct stamp st;
	struct pkt_tuple t;

	ranges_24(&o);
	o.flows = 24;
	g = make_gen(&o);
	if (!ASSERT_TRUE(g, "create sequential"))
		goto out;
	for (i = 0; i < 50; i++)
		if (!ASSERT_EQ(pkt_gen_next_flow(g), i % 24, "sequential order wraps"))
			break;
	pkt_gen__destroy(g);

	/* pkt_gen_next: per-flow sequence numbers in the stamp. */
	o.flows = 3;
	g = make_gen(&o);
	if (!ASSERT_TRUE(g, "create 3 flows"))
		goto out;
	pkt_gen_prefill(g, f);
	for (i = 0; i < 7; i++) {
		pkt_gen_next(g, f, 1000 + 128 * i);
		if (!ASSERT_EQ(stamp_read(f, 60, &g->key, &st), STAMP_DATA, "stamp readable"))
			break;
		ASSERT_EQ(st.flow, i % 3, "stamp flow");
		ASSERT_EQ(st.seq, i / 3, "stamp per-flow seq");
		ASSERT_EQ(st.ticks, stamp_ticks(1000 + 128 * i), "stamp ts");
		pkt_flow_tuple(&o, i % 3, &t);
		ASSERT_EQ(wire16(f + 34), t.sport, "src port of the flow");
		ASSERT_EQ(wire16(f + 36), t.dport, "dst port of the flow");
	}
	pkt_gen__destroy(g);

	o.flows = 24;
	o.random = true;
	o.seed = 7;
	g = make_gen(&o);
	if (!ASSERT_TRUE(g, "create random"))
		goto out;
	for (i = 0; i < 24 * 20; i++) {
		__u32 fl = pkt_gen_next_flow(g);

		if (!ASSERT_LT(fl, 24, "random flow in range"))
			break;
		covered += !seen[fl]++;
	}
	ASSERT_EQ(covered, 24, "random order covers every flow within 20 x N draws");
	for (i = 0; i < 24; i++)
		ASSERT_LT(seen[i], 60, "no flow takes more than 3x its share");
out:
	pkt_gen__destroy(g);
}

static void test_flow_shards(void)
{
	struct pkt_gen *g = NULL;
	struct pkt_opts o;
	char err[256] = "";
	static const __u32 shard_order[] = { 1, 4, 7, 1, 4, 7, 1 };
	unsigned int i, seen[10] = { 0 };

	ranges_24(&o);
	o.flows = 10;
	o.shards = 3;
	o.shard = 1;
	g = make_gen(&o);
	if (!ASSERT_TRUE(g, "create shard 1 of 3"))
		goto out;
	for (i = 0; i < 7; i++)
		ASSERT_EQ(pkt_gen_next_flow(g), shard_order[i], "shard order");
	pkt_gen__destroy(g);
	o.random = true;
	g = make_gen(&o);
	if (!ASSERT_TRUE(g, "create random shard"))
		goto out;
	for (i = 0; i < 300; i++) {
		__u32 fl = pkt_gen_next_flow(g);

		if (!ASSERT_EQ(fl % 3, 1, "random flow belongs to the shard") ||
		    !ASSERT_LT(fl, 10, "random flow in range"))
			break;
		seen[fl]++;
	}
	ASSERT_TRUE(seen[1] && seen[4] && seen[7], "all three shard flows drawn");
	pkt_gen__destroy(g);
	g = NULL;

	o.shards = 11;
	o.shard = 0;
	g = pkt_gen__create(&o, err, sizeof(err));
	ASSERT_FALSE(g, "more queues than flows");
	ASSERT_STREQ(
		err,
		"10 flows cannot be shared by 11 queues (queue 0); give every queue a flow: --flows 11 or more",
		"shards message");
out:
	pkt_gen__destroy(g);
}

static void test_create_errors(void)
{
	struct pkt_gen *g;
	struct pkt_imix im;
	struct pkt_opts o;
	char err[256] = "";

	ranges_24(&o);
	o.flows = 25;
	g = pkt_gen__create(&o, err, sizeof(err));
	ASSERT_FALSE(g, "25 flows over 24 tuples");
	ASSERT_EQ(errno, EINVAL, "errno EINVAL");
	ASSERT_STREQ(
		err,
		"--flows 25 is more than the 24 distinct (src ip, dst ip, src port, dst port) tuples the ranges give; widen an address or port range, or use --flows 24 or fewer",
		"too many flows message");
	pkt_gen__destroy(g);

	ASSERT_OK(pkt_text_port_range("1-65535", &o.src_port, err, sizeof(err)), "wide ports");
	o.flows = 65536;
	g = pkt_gen__create(&o, err, sizeof(err));
	ASSERT_FALSE(g, "65536 flows");
	ASSERT_STREQ(
		err,
		"--flows 65536 is more than 65535, the most the stamp's 16-bit flow id tells apart (0xffff names a mark); use --flows 65535 or fewer",
		"flow id limit message");
	o.flows = 65535;
	g = pkt_gen__create(&o, err, sizeof(err));
	ASSERT_TRUE(g, "65535 flows allowed");
	pkt_gen__destroy(g);
	o.flows = 0;
	g = pkt_gen__create(&o, err, sizeof(err));
	ASSERT_FALSE(g, "0 flows");
	ASSERT_STREQ(err, "--flows 0: need at least 1 flow", "zero flows message");

	pkt_opts_init(&o);
	v6_opts(&o, "fd00::1", "fd00::2");
	o.dst_ip.family = PKT_IPV4;
	g = pkt_gen__create(&o, err, sizeof(err));
	ASSERT_FALSE(g, "family mismatch");
	ASSERT_STREQ(err,
		     "source is IPv6 but destination is IPv4; give both addresses in one family",
		     "family message");

	pkt_opts_init(&o);
	v6_opts(&o, "fd00::1", "fd00::2");
	g = pkt_gen__create(&o, err, sizeof(err));
	ASSERT_FALSE(g, "60-byte IPv6 frames with a stamp");
	ASSERT_STREQ(
		err,
		"size 60 is below the 80-byte minimum for IPv6 UDP with a stamp; use -s 80 or more, or --no-stamp",
		"v6 default size message");

	pkt_opts_init(&o);
	ASSERT_OK(pkt_text_imix(PKT_IMIX_DEFAULT, &im, err, sizeof(err)), "imix");
	o.imix = &im;
	o.max_size = 1014;
	g = pkt_gen__create(&o, err, sizeof(err));
	ASSERT_FALSE(g, "IMIX size above the MTU");
	ASSERT_STREQ(
		err,
		"size 1500 is above the 1014-byte maximum frame (MTU 1000 + 14); use -s 1014 or less, or raise the MTU",
		"IMIX above MTU message");
}

static void test_parse_frames(void)
{
	struct pkt_gen *g = NULL;
	struct pkt_opts o;
	struct pkt_info pi;
	__u8 f[128], v[128];

	pkt_opts_init(&o);
	g = make_gen(&o);
	if (!ASSERT_TRUE(g, "create"))
		goto out;
	pkt_gen_prefill(g, f);
	pkt_gen_write(g, f, 0, 1, 2);
	ASSERT_OK(pkt_parse_udp(f, 60, &pi), "parse");
	ASSERT_EQ(pi.payload_off, 42, "payload offset");
	ASSERT_EQ(pi.udp_len, 26, "UDP length");
	ASSERT_ERR(pkt_parse_udp(f, 59, &pi), -EINVAL, "one byte short");
	ASSERT_EQ(pkt_verify_checksums(f, 59), PKT_CSUM_TRUNCATED, "verifier: truncated");
	/* Padding after the IP packet is fine (a NIC may pad to 60). */
	ASSERT_OK(pkt_parse_udp(f, 64, &pi), "padded frame");
	/* VLAN tag */
	memcpy(v, f, 12);
	v[12] = 0x81;
	v[13] = 0x00;
	v[14] = 0x00;
	v[15] = 0x05;
	memcpy(v + 16, f + 12, 48);
	ASSERT_OK(pkt_parse_udp(v, 64, &pi), "VLAN");
	ASSERT_EQ(pi.l3_off, 18, "VLAN l3 offset");
	ASSERT_EQ(pkt_verify_checksums(v, 64), PKT_CSUM_OK, "verifier through VLAN");
	f[24] ^= 0x10;
	ASSERT_EQ(pkt_verify_checksums(f, 60), PKT_CSUM_BAD_IP, "bad IP checksum caught");
	ASSERT_STREQ(pkt_csum_str(PKT_CSUM_BAD_IP), "bad IPv4 header checksum", "reason text");
	f[24] ^= 0x10;
	f[23] = 6; /* TCP, with a data offset of 5 words */
	f[14 + 20 + 12] = 0x50;
	ASSERT_ERR(pkt_parse_udp(f, 60, &pi), -ENOENT, "TCP is not UDP");
	ASSERT_OK(pkt_parse_l4(f, 60, &pi), "TCP is an L4 packet");
	ASSERT_EQ(pi.proto, 6, "TCP's protocol");
	ASSERT_EQ(pi.payload_off, 14 + 20 + 20, "payload after the TCP header");
	ASSERT_EQ(pkt_verify_checksums(f, 60), PKT_CSUM_NOT_UDP, "verifier: not UDP");
	f[14 + 20 + 12] = 0x40;
	ASSERT_ERR(pkt_parse_l4(f, 60, &pi), -EINVAL, "TCP data offset 4 is malformed");
out:
	pkt_gen__destroy(g);
}

/* One frame of 'size' bytes from a generator with these options, into f. */
static bool frame_of(struct pkt_opts *o, unsigned int size, __u8 *f)
{
	struct pkt_gen *g;

	o->size = size;
	g = make_gen(o);
	if (!g)
		return false;
	pkt_gen_prefill(g, f);
	pkt_gen_write(g, f, 0, 1, 2);
	pkt_gen__destroy(g);
	return true;
}

/*
 * The lengths xdp-gen --pcap --stamp used to trust and the sink's rule
 * rejects (malformed: -EINVAL), and the well-formed variants it accepts. The
 * generator stamps a replayed frame exactly when this accepts it.
 */
static void test_parse_malformed(void)
{
	struct pkt_opts o;
	struct pkt_info pi;
	__u8 f[256], x[256];

	pkt_opts_init(&o);
	if (!ASSERT_TRUE(frame_of(&o, 100, f), "IPv4 frame"))
		return;
	ASSERT_OK(pkt_parse_udp(f, 100, &pi), "well formed");
	memcpy(x, f, 100);
	x[14] = 0x44;
	ASSERT_ERR(pkt_parse_udp(x, 100, &pi), -EINVAL, "IHL 4");
	memcpy(x, f, 100);
	x[17] += 1; /* total length 87: one past the frame */
	ASSERT_ERR(pkt_parse_udp(x, 100, &pi), -EINVAL, "IPv4 total length past the frame");
	memcpy(x, f, 100);
	x[17] = 20 + 8 + 10; /* the UDP header says 66 */
	ASSERT_ERR(pkt_parse_udp(x, 100, &pi), -EINVAL, "IPv4 total length short of UDP");
	memcpy(x, f, 100);
	x[16] = 0;
	x[17] = 16; /* shorter than its own header */
	ASSERT_ERR(pkt_parse_udp(x, 100, &pi), -EINVAL, "IPv4 total length below IHL");
	/* IHL 6: four bytes of options between the header and UDP are fine. */
	memcpy(x, f, 34);
	memcpy(x + 38, f + 34, 66);
	memset(x + 34, 1, 4);
	x[14] = 0x46;
	x[17] += 4;
	ASSERT_OK(pkt_parse_udp(x, 104, &pi), "IPv4 options");
	ASSERT_EQ(pi.l4_off, 38, "UDP after the options");
	/* 802.1ad (QinQ outer tag) like 802.1Q. */
	memcpy(x, f, 12);
	x[12] = 0x88;
	x[13] = 0xa8;
	x[14] = 0;
	x[15] = 7;
	memcpy(x + 16, f + 12, 88);
	ASSERT_OK(pkt_parse_udp(x, 104, &pi), "802.1ad");
	ASSERT_EQ(pi.payload_off, 46, "802.1ad payload offset");

	pkt_opts_init(&o);
	v6_opts(&o, "fd00::1", "fd00::2");
	if (!ASSERT_TRUE(frame_of(&o, 120, f), "IPv6 frame"))
		return;
	ASSERT_OK(pkt_parse_udp(f, 120, &pi), "IPv6 well formed");
	memcpy(x, f, 120);
	x[19] += 1; /* payload length one past the frame */
	ASSERT_ERR(pkt_parse_udp(x, 120, &pi), -EINVAL, "IPv6 payload length past the frame");
	memcpy(x, f, 120);
	x[19] = 8 + 10; /* the UDP header says 66 */
	ASSERT_ERR(pkt_parse_udp(x, 120, &pi), -EINVAL, "IPv6 payload length short of UDP");
}

/*
 * xsk mode writes a batch with send time 0 and stamps it just before the
 * kick: byte for byte the frame written with the time at once, the UDP
 * checksum's 0 -> 0xffff rule included (hit on the way: about 1 in 65,536).
 */
static void check_set_time(bool v6)
{
	struct pkt_gen *a = NULL, *b = NULL;
	unsigned int i, bad = 0, zero = 0, len;
	__u8 fa[128], fb[128];
	struct pkt_opts o;

	pkt_opts_init(&o);
	if (v6)
		v6_opts(&o, "fd00::1", "fd00::2");
	o.size = v6 ? 80 : 60;
	o.run = 0xc10c;
	o.flows = 3;
	o.src_port.end = (__u16)(o.src_port.start + 2);
	a = make_gen(&o);
	b = make_gen(&o);
	if (!ASSERT_TRUE(a && b, "create"))
		goto out;
	pkt_gen_prefill(a, fa);
	pkt_gen_prefill(b, fb);
	for (i = 0; i < 400000; i++) {
		__u64 ts = 0x123456789abULL + (__u64)i * 7919;
		unsigned int off = (v6 ? PKT_V6_OFF_UDP : PKT_V4_OFF_UDP) + PKT_UDP_OFF_CSUM;

		len = pkt_gen_next(a, fa, ts);
		pkt_gen_next(b, fb, 0);
		pkt_gen_set_time(b, fb, ts);
		bad += memcmp(fa, fb, len) != 0;
		zero += fa[off] == 0xff && fa[off + 1] == 0xff;
	}
	ASSERT_EQ(bad, 0, "stamped late == stamped at once");
	ASSERT_GT(zero, 0, "the 0xffff case was met");
	ASSERT_EQ(pkt_verify_checksums(fb, len), PKT_CSUM_OK, "checksums valid");
out:
	pkt_gen__destroy(a);
	pkt_gen__destroy(b);
}

static void test_set_time(void)
{
	check_set_time(false);
	check_set_time(true);
}

static const struct test_case cases[] = {
	TEST_CASE(golden_v4),
	TEST_CASE(golden_v4_flow),
	TEST_CASE(golden_v6),
	TEST_CASE(udp_repayload),
	TEST_CASE(incremental_v4),
	TEST_CASE(incremental_v6),
	TEST_CASE(incremental_copy_payload),
	TEST_CASE(udp_zero_v4),
	TEST_CASE(udp_zero_v6),
	TEST_CASE(no_stamp),
	TEST_CASE(sizes),
	TEST_CASE(parse_mac),
	TEST_CASE(parse_ip_range),
	TEST_CASE(parse_port_range),
	TEST_CASE(imix),
	TEST_CASE(imix_distribution),
	TEST_CASE(flow_tuples),
	TEST_CASE(flow_order),
	TEST_CASE(flow_shards),
	TEST_CASE(create_errors),
	TEST_CASE(parse_frames),
	TEST_CASE(parse_malformed),
	TEST_CASE(set_time),
};

TEST_MAIN("pkt", cases)
