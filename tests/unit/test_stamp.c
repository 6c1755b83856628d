// SPDX-License-Identifier: GPL-2.0
#include <stddef.h>

#include "pkt.h"
#include "stamp.h"
#include "test.h"

static struct pkt_gen *make_gen(bool v6, unsigned int size, bool no_stamp)
{
	struct pkt_opts o;
	char err[256] = "";
	struct pkt_gen *g;

	pkt_opts_init(&o);
	if (v6) {
		pkt_parse_ip_range("fd00::1", &o.src_ip, err, sizeof(err));
		pkt_parse_ip_range("fd00::2", &o.dst_ip, err, sizeof(err));
	}
	o.size = size;
	o.no_stamp = no_stamp;
	o.run = 0xabcd;
	o.flows = 5;
	ASSERT_OK(pkt_parse_port_range("100-104", &o.src_port, err, sizeof(err)), "ports");
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
	ASSERT_OK(stamp_read(f, len, &st), "stamp found");
	ASSERT_EQ(st.run, 0xabcd, "run");
	ASSERT_EQ(st.flow, 4, "flow");
	ASSERT_EQ_U64(st.seq, 0xdeadbeef, "seq");
	ASSERT_EQ_U64(st.ts_ns, 0x334455667788ULL, "ts: the low 48 bits");
	ASSERT_EQ_U64(stamp_time(st.ts_ns, 0x1122334455667790ULL), 0x1122334455667788ULL,
		      "ts: the rest from the reader's clock");
	/* Truncated by one byte: the IP length no longer fits. */
	ASSERT_ERR(stamp_read(f, len - 1, &st), -EINVAL, "truncated frame");
	ASSERT_ERR(stamp_read(f, 13, &st), -EINVAL, "runt frame");
	ASSERT_ERR(stamp_read(f, v6 ? 50 : 30, &st), -EINVAL, "cut inside the IP header");
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

static void test_foreign(void)
{
	struct pkt_gen *g = make_gen(false, 60, false), *bare = NULL;
	struct stamp st;
	__u8 f[128], v[128];

	if (!ASSERT_TRUE(g, "create"))
		goto out;
	pkt_gen_prefill(g, f);
	pkt_gen_write(g, f, 0, 1, 2);
	ASSERT_OK(stamp_read(f, 60, &st), "baseline frame is stamped");

	/* one 802.1Q tag */
	memcpy(v, f, 12);
	v[12] = 0x81;
	v[13] = 0x00;
	v[14] = 0x00;
	v[15] = 0x07;
	memcpy(v + 16, f + 12, 48);
	ASSERT_OK(stamp_read(v, 64, &st), "VLAN-tagged frame");
	ASSERT_EQ(st.seq, 1, "seq through VLAN");

	/* IPv4 options: IHL 6, stamp moves back by 4 */
	memcpy(v, f, 34);
	v[14] = 0x46;
	v[17] += 4;
	memset(v + 34, 1, 4); /* NOP options */
	memcpy(v + 38, f + 34, 26);
	ASSERT_OK(stamp_read(v, 64, &st), "IPv4 options honoured");
	ASSERT_EQ(st.seq, 1, "seq after options");
	ASSERT_ERR(stamp_read(v, 63, &st), -EINVAL, "options frame truncated");

	memcpy(v, f, 60);
	v[42] ^= 0xff;
	ASSERT_ERR(stamp_read(v, 60, &st), -ENOENT, "wrong magic");
	memcpy(v, f, 60);
	v[23] = 6;
	ASSERT_ERR(stamp_read(v, 60, &st), -EINVAL, "a UDP header read as TCP (data offset 0)");
	memcpy(v, f, 60);
	v[12] = 0x08;
	v[13] = 0x06;
	ASSERT_ERR(stamp_read(v, 60, &st), -ENOENT, "ARP");
	memcpy(v, f, 60);
	v[20] = 0x20; /* MF */
	ASSERT_ERR(stamp_read(v, 60, &st), -ENOENT, "IPv4 fragment");
	memcpy(v, f, 60);
	v[14] = 0x44; /* IHL 4 */
	ASSERT_ERR(stamp_read(v, 60, &st), -EINVAL, "IHL below 5");
	memcpy(v, f, 60);
	v[39] = 7; /* UDP length 7 */
	ASSERT_ERR(stamp_read(v, 60, &st), -EINVAL, "UDP length below 8");

	bare = make_gen(false, 50, true);
	if (!ASSERT_TRUE(bare, "create unstamped"))
		goto out;
	pkt_gen_prefill(bare, f);
	pkt_gen_write(bare, f, 0, 1, 2);
	ASSERT_ERR(stamp_read(f, 50, &st), -ENOENT, "UDP payload too short for a stamp");
	pkt_gen__destroy(bare);
	bare = make_gen(false, 60, true);
	if (!ASSERT_TRUE(bare, "create unstamped 60"))
		goto out;
	pkt_gen_prefill(bare, f);
	pkt_gen_write(bare, f, 0, 1, 2);
	ASSERT_ERR(stamp_read(f, 60, &st), -ENOENT, "unstamped payload of stamp size");
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
	ASSERT_OK(stamp_read(f, 80, &st), "IPv6 stamped");
	f[20] = 0; /* next header: hop-by-hop options, read from the UDP header's bytes */
	ASSERT_TRUE(stamp_read(f, 80, &st) < 0, "no stamp behind a garbage extension header");
	f[20] = 17;
	f[19] = 200; /* payload length beyond the frame */
	ASSERT_ERR(stamp_read(f, 80, &st), -EINVAL, "IPv6 payload length too long");
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
		ASSERT_OK(stamp_read(f, len, &st), "an echo's data carries the stamp");
		ASSERT_EQ(st.seq, 7, "seq in the echo's data");
		f[l4] = other[i];
		ASSERT_ERR(stamp_read(f, len, &st), -ENOENT, "ICMP that is no echo: foreign");
	}
	pkt_gen__destroy(g);
}

static void test_icmp_echo_only(void)
{
	check_icmp(false);
	check_icmp(true);
}

static const struct test_case cases[] = {
	TEST_CASE(round_trip_v4_min), TEST_CASE(round_trip_v6_min), TEST_CASE(round_trip_large),
	TEST_CASE(foreign),	      TEST_CASE(foreign_v6),	    TEST_CASE(icmp_echo_only),
};

TEST_MAIN("stamp", cases)
