// SPDX-License-Identifier: GPL-2.0
/*
 * xdp-sink xsk's records (struct xdpsg_xsk_rec in shared.h), through
 * BPF_PROG_RUN on hand-made frames: the program records a stamp exactly where
 * the user-space reader finds one, so that a stamp checked from its record
 * reads as it would from the frame; whatever the reader would judge from more
 * than the stamp (a mark, a short payload, no stamp) is left to the thread;
 * every frame takes the next ticket, and a full ring writes over nothing.
 * Needs root (SKIP otherwise).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <linux/in.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "pkt/stamp.h"
#include "shared.h"
#include "test.h"
#include "xdp_sink.skel.h"

#define RING 4 /* records in the test's ring */

static int silent(enum libbpf_print_level l, const char *f, va_list ap)
{
	(void)l;
	(void)f;
	(void)ap;
	return 0;
}

static struct xdp_sink_bpf *load_records(void)
{
	struct xdp_sink_bpf *skel;

	libbpf_set_print(silent);
	skel = xdp_sink_bpf__open();
	if (!skel)
		return NULL;
	skel->rodata->rx_time = true;
	skel->rodata->xsk_records = true;
	skel->rodata->xsk_rec_mask = RING - 1;
	bpf_map__set_max_entries(skel->maps.xsk_recs, RING);
	if (xdp_sink_bpf__load(skel)) {
		xdp_sink_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

/* The program with records, or NULL: skipped (not root) or failed. */
static struct xdp_sink_bpf *setup(void)
{
	struct xdp_sink_bpf *skel;

	if (geteuid()) {
		TEST_SKIP("needs root");
		return NULL;
	}
	skel = load_records();
	ASSERT_TRUE(skel != NULL, "load with records");
	return skel;
}

static void be16(unsigned char *p, unsigned int v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
}

enum shape {
	S_UDP4,
	S_UDP6,
	S_UDP4_VLAN,
	S_TCP4,
	S_MARK,
	S_FORGED,
	S_SHORT_PAYLOAD, /* the stamp's bytes are there, but past the UDP length */
	S_NO_MAGIC,
	S_VXLAN_PORT, /* to VXLAN's port, but stamped: UDP to both */
	S_IP_OPTIONS,
	S_FRAGMENT,
	S_TOT_BEYOND, /* an IPv4 total length past the frame */
	S_UDP_BEYOND_IP, /* a UDP length past the IP packet */
	S_QINQ, /* two VLAN tags: the reader walks them, the program does not */
	S_TCP_LONG_HEADER, /* a TCP header longer than the room its IP packet leaves */
	S_NSHAPES,
};

static const char *const shape_name[S_NSHAPES] = {
	"udp4",
	"udp6",
	"udp4 in 802.1Q",
	"tcp4",
	"a mark",
	"a forged tag",
	"a UDP length short of the stamp",
	"no magic",
	"udp4 to the VXLAN port",
	"IPv4 with options",
	"an IPv4 first fragment",
	"an IPv4 total length past the frame",
	"a UDP length past the IP packet",
	"udp4 in 802.1ad and 802.1Q",
	"a TCP header longer than its packet",
};

/* A frame of that shape with a stamp (run 7, flow 3, seq 41) at its payload; its length. */
static unsigned int frame(enum shape s, unsigned char *p)
{
	bool v6 = s == S_UDP6, tcp = s == S_TCP4 || s == S_TCP_LONG_HEADER;
	unsigned int o = 14, l4hdr = tcp ? 20 : 8, body, l4len, at;
	struct stamp_key k;

	memset(p, 0, 256);
	stamp_key_public(&k);
	memcpy(p, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01", 12);
	if (s == S_UDP4_VLAN) {
		be16(p + 12, ETH_P_8021Q);
		be16(p + 16, ETH_P_IP);
		o += 4;
	} else if (s == S_QINQ) {
		be16(p + 12, ETH_P_8021AD);
		be16(p + 16, ETH_P_8021Q);
		be16(p + 20, ETH_P_IP);
		o += 8;
	} else {
		be16(p + 12, v6 ? ETH_P_IPV6 : ETH_P_IP);
	}
	body = XDPSG_STAMP_SIZE + (s == S_MARK ? XDPSG_MARK_SIZE : 0);
	l4len = l4hdr + (s == S_SHORT_PAYLOAD ? XDPSG_STAMP_SIZE - 2 : body);
	if (v6) {
		p[o] = 0x60;
		be16(p + o + 4, l4len);
		p[o + 6] = IPPROTO_UDP;
		p[o + 7] = 64;
		o += 40;
	} else {
		unsigned int ihl = s == S_IP_OPTIONS ? 6 : 5;

		p[o] = (unsigned char)(0x40 | ihl);
		be16(p + o + 2, ihl * 4 + l4len + (s == S_TOT_BEYOND ? 100 : 0));
		p[o + 8] = 64;
		p[o + 9] = tcp ? IPPROTO_TCP : IPPROTO_UDP;
		if (s == S_FRAGMENT)
			be16(p + o + 6, 0x2000);
		o += ihl * 4;
	}
	if (tcp)
		p[o + 12] = (s == S_TCP_LONG_HEADER ? 15 : 5) << 4; /* data offset */
	else
		be16(p + o + 4, l4len + (s == S_UDP_BEYOND_IP ? 1 : 0));
	if (s == S_VXLAN_PORT)
		be16(p + o + 2, 4789);
	at = o + l4hdr;
	if (s == S_MARK) {
		struct xdpsg_mark m = { .kind = XDPSG_MARK_END, .flow = 3, .flow_frames = 42 };

		stamp_write_mark(p + at, &k, 7, 123456789, &m);
	} else {
		stamp_write(p + at, &k, 7, 3, 41, 123456789);
	}
	if (s == S_FORGED)
		p[at + XDPSG_STAMP_SIZE - 1] ^= 0x5a;
	if (s == S_NO_MAGIC)
		p[at] ^= 0xff;
	return at + body < 60 ? 60 : at + body;
}

/* One run: the metadata in front of the frame. */
static int run_one(struct xdp_sink_bpf *skel, unsigned char *pkt, unsigned int len,
		   struct xdpsg_rx_meta *m)
{
	unsigned char out[2048];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = len, .data_out = out,
		    .data_size_out = sizeof(out), .repeat = 1);

	if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.xdp_sink_xsk), &o))
		return -errno;
	if (o.data_size_out != len + sizeof(*m))
		return -EMSGSIZE;
	memcpy(m, out, sizeof(*m));
	return 0;
}

static int record_at(struct xdp_sink_bpf *skel, __u32 slot, struct xdpsg_xsk_rec *r)
{
	return bpf_map_lookup_elem(bpf_map__fd(skel->maps.xsk_recs), &slot, r);
}

static int set_cons(struct xdp_sink_bpf *skel, __u64 cons)
{
	struct xdpsg_xsk_ring ring;
	__u32 q = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.xsk_rings), &q, &ring))
		return -1;
	ring.cons = cons;
	return bpf_map_update_elem(bpf_map__fd(skel->maps.xsk_rings), &q, &ring, BPF_ANY);
}

/*
 * Every shape: a record that says STAMP checks as the frame reads (the same
 * result and the same fields); plain stamped UDP and TCP frames are recorded, and
 * what the reader judges from more than the stamp is not, nor a frame the
 * program does not walk (IPv4 options), nor a malformed one.
 */
static void test_records_read_as_the_frame(void)
{
	static const bool recorded[S_NSHAPES] = {
		[S_UDP4] = true, [S_UDP6] = true,   [S_UDP4_VLAN] = true,
		[S_TCP4] = true, [S_FORGED] = true, [S_VXLAN_PORT] = true,
	};
	unsigned char pkt[256];
	struct xdp_sink_bpf *skel;
	struct stamp_key k;
	unsigned int s, len;

	skel = setup();
	if (!skel)
		return;
	stamp_key_public(&k);
	for (s = 0; s < S_NSHAPES; s++) {
		struct stamp from_frame = { 0 }, from_rec = { 0 };
		struct xdpsg_rx_meta m;
		struct xdpsg_xsk_rec r;
		int want, got;

		len = frame(s, pkt);
		if (!ASSERT_OK(set_cons(skel, s), "the thread keeps up"))
			break;
		if (!ASSERT_OK(run_one(skel, pkt, len, &m), shape_name[s]))
			continue;
		ASSERT_EQ(m.flags, XDPSG_META_TICKET, shape_name[s]);
		ASSERT_EQ(m.ticket, s, "tickets in order");
		if (!ASSERT_OK(record_at(skel, s % RING, &r), "read the record"))
			continue;
		ASSERT_EQ(r.ticket, s, "the record holds its ticket");
		ASSERT_EQ(r.rx_ns, m.rx_ns, "and the metadata's receive time");
		want = stamp_read(pkt, len, &k, &from_frame);
		if (!ASSERT_EQ(r.kind == XDPSG_REC_STAMP, recorded[s], shape_name[s]))
			fprintf(stderr, "  %s: kind %u, the reader says %d\n", shape_name[s],
				r.kind, want);
		if (r.kind != XDPSG_REC_STAMP)
			continue;
		got = stamp_check(r.stamp, sizeof(r.stamp), &k, &from_rec);
		ASSERT_EQ(got, want, shape_name[s]);
		ASSERT_EQ(memcmp(&from_rec, &from_frame, sizeof(from_rec)), 0, shape_name[s]);
	}
	xdp_sink_bpf__destroy(skel);
}

/*
 * A full ring: the frame still takes its ticket (so the ones after it stay in
 * order) but writes over no record the thread has yet to read.
 */
static void test_full_ring_writes_over_nothing(void)
{
	unsigned char pkt[256];
	struct xdp_sink_bpf *skel;
	struct xdpsg_rx_meta m;
	struct xdpsg_xsk_rec r;
	unsigned int len, i;

	skel = setup();
	if (!skel)
		return;
	len = frame(S_UDP4, pkt);
	for (i = 0; i < RING + 2; i++) {
		if (!ASSERT_OK(run_one(skel, pkt, len, &m), "run"))
			goto out;
		ASSERT_EQ(m.ticket, i, "every frame takes the next ticket");
		ASSERT_EQ(m.flags, XDPSG_META_TICKET, "and says so");
	}
	for (i = 0; i < RING; i++) {
		ASSERT_OK(record_at(skel, i, &r), "read");
		ASSERT_EQ(r.ticket, i, "the unread records stay as written");
	}
	/* The thread has read three: the next frame, ticket RING + 2, goes into slot 2. */
	ASSERT_OK(set_cons(skel, 3), "the thread read three");
	ASSERT_OK(run_one(skel, pkt, len, &m), "run");
	ASSERT_EQ(m.ticket, RING + 2, "the ticket after the full ring's");
	ASSERT_OK(record_at(skel, (RING + 2) % RING, &r), "read");
	ASSERT_EQ(r.ticket, RING + 2, "recorded once there is room");
	ASSERT_EQ(r.kind, XDPSG_REC_STAMP, "with its stamp");
out:
	xdp_sink_bpf__destroy(skel);
}

static const struct test_case cases[] = {
	TEST_CASE(records_read_as_the_frame),
	TEST_CASE(full_ring_writes_over_nothing),
};

TEST_MAIN("sink_records", cases)
