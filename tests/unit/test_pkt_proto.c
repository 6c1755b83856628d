// SPDX-License-Identifier: GPL-2.0
/*
 * The generator's frames of every kind (TCP, ICMP, VLAN/QinQ, VXLAN, GENEVE,
 * GRE, IP in IP, IPv4 and IPv6 inside and out): every checksum recomputed in
 * full (pkt_check.h) for many flows, sizes, sequence numbers and send times,
 * the parser's reading of each frame, the stamp at the L4 payload's start,
 * and the option parsers' refusals.
 */
#include <errno.h>
#include <stdlib.h>

#include "pkt/gen.h"
#include "pkt/build.h"
#include "pkt/text.h"
#include "pkt/stamp.h"
#include "pkt_check.h"
#include "test.h"

#define L_VLAN 0x1
#define L_QINQ 0x2
#define L_VXLAN 0x8
#define L_GENEVE 0x10
#define L_GRE 0x20
#define L_IPIP 0x40

struct kind {
	const char *name;
	enum pkt_proto proto;
	unsigned int nvlan;
	enum pkt_encap encap;
	bool v6, outer_v6;
	unsigned int layers; /* what pkt_parse_l4() must report */
	unsigned int min; /* the stamped minimum frame */
};

static const struct kind kinds[] = {
	{ "udp v4", PKT_UDP, 0, 0, false, false, 0, 60 },
	{ "tcp v4", PKT_TCP, 0, 0, false, false, 0, 72 },
	{ "tcp v6", PKT_TCP, 0, 0, true, true, 0, 92 },
	{ "icmp v4", PKT_ICMP, 0, 0, false, false, 0, 60 },
	{ "icmp v6", PKT_ICMP, 0, 0, true, true, 0, 80 },
	{ "udp vlan", PKT_UDP, 1, 0, false, false, L_VLAN, 64 },
	{ "tcp qinq v6", PKT_TCP, 2, 0, true, true, L_VLAN | L_QINQ, 100 },
	{ "udp vxlan", PKT_UDP, 0, PKT_ENCAP_VXLAN, false, false, L_VXLAN, 110 },
	{ "udp vxlan v6", PKT_UDP, 0, PKT_ENCAP_VXLAN, true, true, L_VXLAN, 150 },
	{ "tcp geneve vlan", PKT_TCP, 1, PKT_ENCAP_GENEVE, false, false, L_VLAN | L_GENEVE, 126 },
	{ "icmp geneve 4in6", PKT_ICMP, 0, PKT_ENCAP_GENEVE, false, true, L_GENEVE, 130 },
	{ "udp gre", PKT_UDP, 0, PKT_ENCAP_GRE, false, false, L_GRE, 84 },
	{ "tcp gre v6", PKT_TCP, 0, PKT_ENCAP_GRE, true, true, L_GRE, 136 },
	{ "udp ipip", PKT_UDP, 0, PKT_ENCAP_IPIP, false, false, L_IPIP, 80 },
	{ "icmp 6in4", PKT_ICMP, 0, PKT_ENCAP_IPIP, true, false, L_IPIP, 100 },
	{ "udp 4in6 qinq", PKT_UDP, 2, PKT_ENCAP_IPIP, false, true, L_IPIP | L_VLAN | L_QINQ, 108 },
};

static void kind_opts(const struct kind *k, struct pkt_opts *o, struct pkt_imix *imix)
{
	char err[256];

	pkt_opts_init(o);
	o->proto = k->proto;
	o->tcp_flags = PKT_TCP_SYN | PKT_TCP_ACK;
	o->nvlan = k->nvlan;
	o->vlan[0] = 4094;
	o->vlan[1] = 100;
	o->vlan_prio = 5;
	o->encap = k->encap;
	o->vni = 0xabcdef;
	o->run = 0x5eed;
	/* Ranges that carry across bytes and ports near 65535 exercise the folding. */
	ASSERT_OK(pkt_text_ip_range(k->v6 ? "fd00::fff0-fd00::1:3" : "10.0.0.250-10.0.1.5",
				    &o->src_ip, err, sizeof(err)),
		  "src ip");
	ASSERT_OK(pkt_text_ip_range(k->v6 ? "fd01::ffff" : "192.168.255.255", &o->dst_ip, err,
				    sizeof(err)),
		  "dst ip");
	ASSERT_OK(pkt_text_port_range("65530-65535", &o->src_port, err, sizeof(err)), "sport");
	if (k->proto == PKT_ICMP)
		o->dst_port = (struct pkt_port_range){ 0, 0 };
	ASSERT_OK(pkt_text_ip_range(k->outer_v6 ? "fd10::1" : "172.16.0.1", &o->outer_src, err,
				    sizeof(err)),
		  "outer src");
	ASSERT_OK(pkt_text_ip_range(k->outer_v6 ? "fd10::2" : "172.16.0.2", &o->outer_dst, err,
				    sizeof(err)),
		  "outer dst");
	imix->n = 3;
	imix->size[0] = k->min;
	imix->size[1] = k->min + 1; /* odd: the pattern's last byte pads a checksum word */
	imix->size[2] = 1500;
	imix->weight[0] = imix->weight[1] = imix->weight[2] = 1;
	imix->seq_len = 3;
	imix->seq[0] = 0;
	imix->seq[1] = 1;
	imix->seq[2] = 2;
	o->imix = imix;
	o->flows = 60;
}

/* One frame of kind k: parsed as written, stamp where the L4 payload starts, checksums right. */
static bool check_frame(const struct kind *k, const struct pkt_gen *g, const __u8 *f,
			unsigned int len, __u32 flow, __u32 seq, __u64 ts)
{
	struct pkt_info pi;
	struct stamp st;
	const char *bad = pkt_check_csums(f, len);
	unsigned int want = k->proto == PKT_ICMP ? (k->v6 ? 58 : 1) : k->proto;

	if (!ASSERT_TRUE(bad == NULL, k->name)) {
		fprintf(stderr, "  %s: %s wrong (flow %u seq %u len %u)\n", k->name, bad, flow, seq,
			len);
		return false;
	}
	if (!ASSERT_OK(pkt_parse_l4(f, len, &pi), "parses") ||
	    !ASSERT_EQ(pi.proto, want, "protocol") ||
	    !ASSERT_EQ(pi.family, k->v6 ? PKT_IPV6 : PKT_IPV4, "inner family") ||
	    !ASSERT_EQ(pi.layers & 0x7b, k->layers, "layers") ||
	    !ASSERT_EQ(pi.payload_off, g->lay.pay_off, "stamp at the L4 payload's start") ||
	    !ASSERT_EQ(stamp_read(f, len, &g->key, &st), STAMP_DATA, "stamp") ||
	    !ASSERT_EQ(st.flow, flow, "flow") || !ASSERT_EQ(st.seq, seq, "seq") ||
	    !ASSERT_EQ(st.ticks, stamp_ticks(ts), "ts"))
		return false;
	if (k->proto == PKT_ICMP)
		return ASSERT_EQ(pc_get16(f + pi.l4_off) >> 8, k->v6 ? 128u : 8u, "echo request") &&
		       ASSERT_EQ(pc_get16(f + pi.l4_off + 4), 65530 + flow % 6, "echo id = sport");
	if (k->proto == PKT_TCP)
		return ASSERT_EQ(f[pi.l4_off + 13], PKT_TCP_SYN | PKT_TCP_ACK, "TCP flags") &&
		       ASSERT_EQ(f[pi.l4_off + 12], 0x50, "data offset 5");
	return true;
}

static void check_kind(const struct kind *k)
{
	__u8 *f = NULL, *fresh = NULL;
	struct pkt_gen *g = NULL;
	struct pkt_imix imix;
	struct pkt_opts o;
	char err[256] = "";
	unsigned int i, len;

	kind_opts(k, &o, &imix);
	ASSERT_EQ(pkt_opts_min_size(&o), k->min, k->name);
	g = pkt_gen__create(&o, err, sizeof(err));
	if (!ASSERT_TRUE(g != NULL, k->name)) {
		fprintf(stderr, "  %s: %s\n", k->name, err);
		return;
	}
	f = malloc(pkt_gen_max_len(g));
	fresh = malloc(pkt_gen_max_len(g));
	if (!ASSERT_TRUE(f && fresh, "alloc"))
		goto out;
	pkt_gen_prefill(g, f);
	/* Recycled buffers across sizes and flows, stamped late (pkt_gen_set_time) half the time. */
	for (i = 0; i < 600; i++) {
		__u32 flow = pkt_gen_next_flow(g), seq = g->seq[flow]++;
		__u64 ts = 0x0000fedcba987654ULL * (i + 1) & 0xffffffffffffULL;

		if (i & 1) {
			len = pkt_gen_write(g, f, flow, seq, 0);
			pkt_gen_set_time(g, f, ts);
		} else {
			len = pkt_gen_write(g, f, flow, seq, ts);
		}
		if (!check_frame(k, g, f, len, flow, seq, ts))
			goto out;
	}
out:
	free(f);
	free(fresh);
	pkt_gen__destroy(g);
}

static void test_kinds(void)
{
	unsigned int i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		check_kind(&kinds[i]);
}

/*
 * Marks (pkt_gen_mark()) of every kind: the flow's own headers, byte for byte
 * as a data frame of the same flow and length has them but for the L4
 * checksum (the payload differs; a tunnel's outer checksum cancels it, as
 * for the data frames), every checksum right, and the mark whole as the L4
 * payload, read back under the key.
 */
static void test_marks(void)
{
	struct pkt_gen *g = NULL, *same = NULL;
	struct pkt_imix imix;
	struct pkt_info pi;
	struct pkt_opts o;
	struct stamp st;
	char err[256];
	__u8 m[512], d[512];
	unsigned int i, len;
	__u32 f;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		const struct kind *k = &kinds[i];

		kind_opts(k, &o, &imix);
		g = pkt_gen__create(&o, err, sizeof(err));
		if (!ASSERT_TRUE(g != NULL, k->name))
			return;
		len = pkt_gen_mark_len(g);
		ASSERT_EQ(len, g->lay.pay_off + XDPSG_STAMP_SIZE + XDPSG_MARK_SIZE, "mark length");
		o.imix = NULL;
		o.size = len;
		same = pkt_gen__create(&o, err, sizeof(err));
		if (!ASSERT_TRUE(same != NULL, "a generator of the mark's length"))
			break;
		for (f = 0; f < o.flows; f += 7) {
			struct xdpsg_mark mk = { .kind = XDPSG_MARK_END,
						 .flow = (__u16)f,
						 .repeat = 3,
						 .flow_frames = 1000 + f,
						 .run_frames = 99999,
						 .clock_ns = 123456789 + f,
						 .clock_id = 0x1122334455667788ULL,
						 .nflows = o.flows };

			ASSERT_EQ(pkt_gen_mark(g, f, mk.clock_ns, &mk, m), len, "length");
			pkt_gen_prefill(same, d);
			pkt_gen_write_tmpl(same, d, 0, f, 0, 0);
			memcpy(d + g->lay.csum_off, m + g->lay.csum_off, 2);
			if (!ASSERT_EQ(memcmp(m, d, g->lay.pay_off), 0,
				       "the flow's headers, lengths and outer checksums") ||
			    !ASSERT_TRUE(pkt_check_csums(m, len) == NULL, k->name) ||
			    !ASSERT_OK(pkt_parse_l4(m, len, &pi), "parses") ||
			    !ASSERT_EQ(pi.payload_len, XDPSG_STAMP_SIZE + XDPSG_MARK_SIZE,
				       "the mark is the L4 payload") ||
			    !ASSERT_EQ(stamp_read(m, len, &g->key, &st), STAMP_MARK, "a mark") ||
			    !ASSERT_EQ(st.run, o.run, "its run") ||
			    !ASSERT_EQ(st.flow, XDPSG_MARK_FLOW, "flow 0xffff") ||
			    !ASSERT_EQ(st.seq, 3, "seq = repeat") ||
			    !ASSERT_EQ(st.mark.flow, f, "the flow it speaks for") ||
			    !ASSERT_EQ_U64(st.mark.flow_frames, 1000 + f, "flow_frames") ||
			    !ASSERT_EQ_U64(st.mark.clock_id, mk.clock_id, "clock_id") ||
			    !ASSERT_EQ(st.ticks, stamp_ticks(mk.clock_ns), "send time")) {
				fprintf(stderr, "  %s: mark of flow %u wrong\n", k->name, f);
				break;
			}
		}
		pkt_gen__destroy(same);
		pkt_gen__destroy(g);
		same = g = NULL;
	}
	pkt_gen__destroy(same);
	pkt_gen__destroy(g);
}

/* One flow in one size: no stamp, and a zero payload, still right. */
/*
 * A tunnel's outer source port follows the inner flow: the hash of its
 * tuple, in 49152-65535, the same port every time a flow comes round, and
 * spread over the flows (60 flows into 16384 ports: a few collisions at most).
 */
static void test_tunnel_sport(void)
{
	static const unsigned int pick[] = { 7, 8, 10 }; /* vxlan, vxlan v6, geneve vlan */
	unsigned int i, n, k, len, distinct;
	__u16 port[60];
	struct pkt_imix imix;
	struct pkt_tuple t;
	struct pkt_opts o;
	struct pkt_gen *g;
	char err[256];
	__u8 *f;

	for (k = 0; k < sizeof(pick) / sizeof(pick[0]); k++) {
		kind_opts(&kinds[pick[k]], &o, &imix);
		g = pkt_gen__create(&o, err, sizeof(err));
		if (!ASSERT_TRUE(g != NULL, kinds[pick[k]].name))
			return;
		f = malloc(pkt_gen_max_len(g));
		if (!ASSERT_TRUE(f != NULL, "alloc")) {
			pkt_gen__destroy(g);
			return;
		}
		pkt_gen_prefill(g, f);
		for (n = 0; n < 2 * 60; n++) {
			__u32 flow = pkt_gen_next_flow(g);

			len = pkt_gen_write(g, f, flow, g->seq[flow]++, 0);
			pkt_flow_tuple(&o, flow, &t);
			if (!ASSERT_EQ(pc_get16(f + g->lay.ol4_off), pkt_tunnel_sport(&t),
				       "outer source port: the inner flow's hash") ||
			    !ASSERT_TRUE(pkt_check_csums(f, len) == NULL, "checksums"))
				break;
			if (n < 60)
				port[flow] = pc_get16(f + g->lay.ol4_off);
			else if (!ASSERT_EQ(pc_get16(f + g->lay.ol4_off), port[flow],
					    "a flow keeps its port"))
				break;
		}
		for (i = 0, distinct = 0; i < 60; i++) {
			unsigned int j;

			ASSERT_TRUE(port[i] >= PKT_TUNNEL_SPORT_LO, "in 49152-65535");
			for (j = 0; j < i && port[j] != port[i]; j++)
				;
			distinct += j == i;
		}
		ASSERT_GE(distinct, 56, "60 flows take (nearly) 60 ports");
		free(f);
		pkt_gen__destroy(g);
	}
}

static void test_no_stamp(void)
{
	struct pkt_imix imix;
	struct pkt_opts o;
	struct pkt_gen *g;
	char err[256];
	__u8 f[256];
	unsigned int i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		kind_opts(&kinds[i], &o, &imix);
		o.imix = NULL;
		o.no_stamp = true;
		o.size = kinds[i].min - XDPSG_STAMP_SIZE;
		g = pkt_gen__create(&o, err, sizeof(err));
		if (!ASSERT_TRUE(g != NULL, kinds[i].name))
			continue;
		ASSERT_EQ(pkt_gen_write(g, f, 0, 0, 0), o.size, "length");
		ASSERT_TRUE(pkt_check_csums(f, o.size) == NULL, kinds[i].name);
		pkt_gen__destroy(g);
	}
}

static void test_parse_tcp_flags(void)
{
	char err[256];
	__u8 v;

	ASSERT_OK(pkt_text_tcp_flags("S", &v, err, sizeof(err)), "S");
	ASSERT_EQ(v, PKT_TCP_SYN, "S");
	ASSERT_OK(pkt_text_tcp_flags("SA", &v, err, sizeof(err)), "SA");
	ASSERT_EQ(v, PKT_TCP_SYN | PKT_TCP_ACK, "SA");
	ASSERT_OK(pkt_text_tcp_flags("FSRPAUEC", &v, err, sizeof(err)), "all");
	ASSERT_EQ(v, 0xff, "all eight");
	ASSERT_ERR(pkt_text_tcp_flags("SX", &v, err, sizeof(err)), -EINVAL, "X");
	ASSERT_TRUE(strstr(err, "'X' is not a TCP flag") != NULL, "names the letter");
	ASSERT_ERR(pkt_text_tcp_flags("", &v, err, sizeof(err)), -EINVAL, "empty");
	ASSERT_ERR(pkt_text_tcp_flags("s", &v, err, sizeof(err)), -EINVAL, "lower case");
}

static void test_parse_encap(void)
{
	enum pkt_encap e;
	char err[256];
	__u32 vni;

	ASSERT_OK(pkt_text_encap("vxlan:42", &e, &vni, err, sizeof(err)), "vxlan:42");
	ASSERT_TRUE(e == PKT_ENCAP_VXLAN && vni == 42, "vxlan 42");
	ASSERT_OK(pkt_text_encap("geneve:16777215", &e, &vni, err, sizeof(err)), "max VNI");
	ASSERT_TRUE(e == PKT_ENCAP_GENEVE && vni == PKT_VNI_MAX, "geneve max");
	ASSERT_OK(pkt_text_encap("gre", &e, &vni, err, sizeof(err)), "gre");
	ASSERT_OK(pkt_text_encap("ipip", &e, &vni, err, sizeof(err)), "ipip");
	ASSERT_TRUE(e == PKT_ENCAP_IPIP && vni == 0, "ipip");
	ASSERT_ERR(pkt_text_encap("vxlan:16777216", &e, &vni, err, sizeof(err)), -EINVAL,
		   "VNI 2^24");
	ASSERT_TRUE(strstr(err, "VNI") != NULL, "says VNI");
	ASSERT_ERR(pkt_text_encap("vxlan:-1", &e, &vni, err, sizeof(err)), -EINVAL, "VNI -1");
	ASSERT_ERR(pkt_text_encap("vxlan:", &e, &vni, err, sizeof(err)), -EINVAL, "empty VNI");
	ASSERT_ERR(pkt_text_encap("gre:5", &e, &vni, err, sizeof(err)), -EINVAL, "gre VNI");
	ASSERT_ERR(pkt_text_encap("mpls", &e, &vni, err, sizeof(err)), -EINVAL, "unknown");
	ASSERT_ERR(pkt_text_encap("vxlanx", &e, &vni, err, sizeof(err)), -EINVAL, "prefix");
}

static void test_create_errors(void)
{
	struct pkt_opts o;
	char err[256];

	pkt_opts_init(&o);
	o.nvlan = 1;
	o.vlan[0] = 4096;
	ASSERT_TRUE(pkt_gen__create(&o, err, sizeof(err)) == NULL, "VLAN 4096");
	ASSERT_TRUE(strstr(err, "0-4095") != NULL, "says the range");
	o.vlan[0] = 1;
	o.nvlan = 3;
	ASSERT_TRUE(pkt_gen__create(&o, err, sizeof(err)) == NULL, "three tags");
	o.nvlan = 1;
	o.vlan_prio = 8;
	ASSERT_TRUE(pkt_gen__create(&o, err, sizeof(err)) == NULL, "priority 8");
	o.vlan_prio = 0;
	o.proto = PKT_TCP;
	o.size = 71;
	ASSERT_TRUE(pkt_gen__create(&o, err, sizeof(err)) == NULL, "TCP below 76 with a tag");
	ASSERT_TRUE(strstr(err, "76-byte minimum") != NULL, "says the minimum");
	o.nvlan = 0;
	o.encap = PKT_ENCAP_VXLAN;
	o.vni = PKT_VNI_MAX + 1;
	o.size = 200;
	ASSERT_TRUE(pkt_gen__create(&o, err, sizeof(err)) == NULL, "VNI 2^24");
}

static const struct test_case cases[] = {
	TEST_CASE(kinds),	  TEST_CASE(tunnel_sport),    TEST_CASE(marks),
	TEST_CASE(no_stamp),	  TEST_CASE(parse_tcp_flags), TEST_CASE(parse_encap),
	TEST_CASE(create_errors),
};

TEST_MAIN("pkt_proto", cases)
