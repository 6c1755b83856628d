// SPDX-License-Identifier: GPL-2.0
/*
 * xdp-sink's programs run through BPF_PROG_RUN on hand-made frames: every
 * malformed frame is counted under its reason, never misread; verdicts and
 * the MAC swap are right; --cost spins for at least the time asked; drop
 * --sample gives every frame its one drop verdict and samples one in N.
 * Needs root (SKIP otherwise).
 */
#include <sched.h>
#include <stddef.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/in6.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "parse_counters.h"
#include "pkt/gen.h"
#include "pkt/text.h"
#include "shared.h"
#include "test.h"
#include "xdp_sample.h"
#include "xdp_sink.skel.h"

static int silent(enum libbpf_print_level l, const char *f, va_list ap)
{
	(void)l;
	(void)f;
	(void)ap;
	return 0;
}

static struct xdp_sink_bpf *load(bool parse, __u64 cost)
{
	struct xdp_sink_bpf *skel;

	libbpf_set_print(silent);
	skel = xdp_sink_bpf__open();
	if (!skel)
		return NULL;
	skel->rodata->do_parse = parse;
	skel->rodata->cost_ns = cost;
	if (xdp_sink_bpf__load(skel)) {
		xdp_sink_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

static int run(struct bpf_program *prog, void *pkt, __u32 len, __u32 repeat, __u32 *retval,
	       __u32 *duration, void *out)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = len, .repeat = repeat,
		    .data_out = out, .data_size_out = out ? 2048 : 0);
	int err = bpf_prog_test_run_opts(bpf_program__fd(prog), &o);

	if (retval)
		*retval = o.retval;
	if (duration)
		*duration = o.duration;
	return err ? -errno : 0;
}

static void read_stats(struct xdp_sink_bpf *skel, struct sink_stats *sum)
{
	int ncpu = libbpf_num_possible_cpus(), c, fd = bpf_map__fd(skel->maps.stats);
	struct sink_stats vals[ncpu];
	__u32 key = 0;
	unsigned int i;

	memset(sum, 0, sizeof(*sum));
	if (bpf_map_lookup_elem(fd, &key, vals))
		return;
	for (c = 0; c < ncpu; c++)
		for (i = 0; i < sizeof(*sum) / 8; i++)
			((__u64 *)sum)[i] += ((__u64 *)&vals[c])[i];
}

/* Ethernet header with the given EtherType; returns the header length. */
static unsigned int eth(unsigned char *p, __u16 proto)
{
	static const unsigned char dst[6] = { 2, 0, 0, 0, 0, 2 }, src[6] = { 2, 0, 0, 0, 0, 1 };

	memcpy(p, dst, 6);
	memcpy(p + 6, src, 6);
	p[12] = (unsigned char)(proto >> 8);
	p[13] = (unsigned char)proto;
	return 14;
}

static unsigned int ipv4(unsigned char *p, __u8 ihl, __u8 proto)
{
	p[0] = (unsigned char)(0x40 | ihl);
	p[8] = 64;
	p[9] = proto;
	return (unsigned int)ihl * 4;
}

static unsigned int ipv6(unsigned char *p, __u8 nexthdr)
{
	p[0] = 0x60;
	p[6] = nexthdr;
	p[7] = 64;
	return 40;
}

static void be16(unsigned char *p, unsigned int v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
}

/* Length fields: IPv4 total length, IPv6 payload length, UDP length. */
static void set_tot(unsigned char *ip, unsigned int v)
{
	be16(ip + 2, v);
}

static void set_plen(unsigned char *ip6, unsigned int v)
{
	be16(ip6 + 4, v);
}

static void set_ulen(unsigned char *udp, unsigned int v)
{
	be16(udp + 4, v);
}

static void test_parse_errors(void)
{
	struct xdp_sink_bpf *skel;
	struct sink_stats s;
	unsigned char pkt[128];
	unsigned int o;
	__u32 ret;

	if (geteuid()) {
		TEST_SKIP("needs root");
		return;
	}
	skel = load(true, 0);
	if (!ASSERT_TRUE(skel != NULL, "load with --parse"))
		return;

	/* 1: a VLAN tag cut short (BPF_PROG_RUN needs at least 14 bytes). */
	memset(pkt, 0, sizeof(pkt));
	o = eth(pkt, ETH_P_8021Q);
	ASSERT_OK(run(skel->progs.xdp_sink_drop, pkt, o + 2, 1, &ret, NULL, NULL), "run vlan");
	ASSERT_EQ(ret, XDP_DROP, "verdict on a short frame");
	/* 2: IPv4 header truncated. */
	memset(pkt, 0, sizeof(pkt));
	o = eth(pkt, ETH_P_IP);
	ipv4(pkt + o, 5, IPPROTO_UDP);
	ASSERT_OK(run(skel->progs.xdp_sink_drop, pkt, o + 10, 1, NULL, NULL, NULL), "run ip trunc");
	/* 3: IHL below 5. */
	ipv4(pkt + o, 4, IPPROTO_UDP);
	ASSERT_OK(run(skel->progs.xdp_sink_drop, pkt, 60, 1, NULL, NULL, NULL), "run ihl 4");
	/* 4: IHL 15 (60 bytes of header) in a 60-byte frame. */
	ipv4(pkt + o, 15, IPPROTO_UDP);
	ASSERT_OK(run(skel->progs.xdp_sink_drop, pkt, 60, 1, NULL, NULL, NULL), "run ihl 15");
	/* 5: IPv4 version field wrong. */
	pkt[o] = 0x65;
	ASSERT_OK(run(skel->progs.xdp_sink_drop, pkt, 60, 1, NULL, NULL, NULL), "run version");
	/* 6, 7: IPv6 with hop-by-hop options, and with a fragment header. */
	memset(pkt, 0, sizeof(pkt));
	o = eth(pkt, ETH_P_IPV6);
	ipv6(pkt + o, IPPROTO_HOPOPTS);
	ASSERT_OK(run(skel->progs.xdp_sink_drop, pkt, 80, 1, NULL, NULL, NULL), "run hopopts");
	ipv6(pkt + o, IPPROTO_FRAGMENT);
	ASSERT_OK(run(skel->progs.xdp_sink_drop, pkt, 80, 1, NULL, NULL, NULL), "run frag");
	/* 8: IPv6 truncated. */
	ASSERT_OK(run(skel->progs.xdp_sink_drop, pkt, 14 + 39, 1, NULL, NULL, NULL),
		  "run ip6 trunc");
	/* 9: UDP header truncated after a good IPv4 header. */
	memset(pkt, 0, sizeof(pkt));
	o = eth(pkt, ETH_P_IP);
	set_tot(pkt + o, 24);
	o += ipv4(pkt + o, 5, IPPROTO_UDP);
	ASSERT_OK(run(skel->progs.xdp_sink_drop, pkt, o + 4, 1, NULL, NULL, NULL), "run udp trunc");
	/* Good frames: UDP/IPv4 with options, UDP/IPv6; a TCP header of zeros (offset 0), ARP. */
	memset(pkt, 0, sizeof(pkt));
	o = eth(pkt, ETH_P_IP);
	set_tot(pkt + o, 24 + 8);
	o += ipv4(pkt + o, 6, IPPROTO_UDP);
	set_ulen(pkt + o, 8);
	ASSERT_OK(run(skel->progs.xdp_sink_drop, pkt, o + 8, 1, NULL, NULL, NULL), "run udp4");
	memset(pkt, 0, sizeof(pkt));
	o = eth(pkt, ETH_P_IPV6);
	set_plen(pkt + o, 8);
	o += ipv6(pkt + o, IPPROTO_UDP);
	set_ulen(pkt + o, 8);
	ASSERT_OK(run(skel->progs.xdp_sink_drop, pkt, o + 8, 3, NULL, NULL, NULL), "run udp6 x3");
	memset(pkt, 0, sizeof(pkt));
	o = eth(pkt, ETH_P_IP);
	set_tot(pkt + o, 60 - 14);
	ipv4(pkt + o, 5, IPPROTO_TCP);
	ASSERT_OK(run(skel->progs.xdp_sink_drop, pkt, 60, 1, NULL, NULL, NULL), "run tcp");
	o = eth(pkt, ETH_P_ARP);
	ASSERT_OK(run(skel->progs.xdp_sink_drop, pkt, 60, 1, NULL, NULL, NULL), "run arp");

	read_stats(skel, &s);
	ASSERT_EQ(s.packets, 15, "every run counted");
	ASSERT_EQ(s.drop, 15, "every run dropped");
	ASSERT_EQ(s.err_eth, 1, "short VLAN frame is an Ethernet error");
	ASSERT_EQ(s.err_ip, 5, "truncated/bad IPv4 and truncated IPv6 are IP errors");
	ASSERT_EQ(s.err_ip6_ext, 2, "IPv6 extension headers past the payload");
	ASSERT_EQ(s.err_udp, 1, "truncated UDP");
	ASSERT_EQ(s.udp4, 1, "UDP over IPv4 with options");
	ASSERT_EQ(s.udp6, 3, "UDP over IPv6");
	ASSERT_EQ(s.err_tcp, 1, "a TCP data offset of 0");
	ASSERT_EQ(s.other, 1, "ARP is other");
	ASSERT_EQ(s.ip6_ext, 2, "both truncated chains count as met");
	xdp_sink_bpf__destroy(skel);
}

static void test_no_parse_counts_only(void)
{
	struct xdp_sink_bpf *skel;
	struct sink_stats s;
	unsigned char pkt[64] = {};

	if (geteuid()) {
		TEST_SKIP("needs root");
		return;
	}
	skel = load(false, 0);
	if (!ASSERT_TRUE(skel != NULL, "load"))
		return;
	eth(pkt, ETH_P_IP);
	ASSERT_OK(run(skel->progs.xdp_sink_pass, pkt, 60, 5, NULL, NULL, NULL), "run pass");
	read_stats(skel, &s);
	ASSERT_EQ(s.packets, 5, "packets");
	ASSERT_EQ(s.bytes, 300, "bytes");
	ASSERT_EQ(s.pass, 5, "pass verdicts");
	ASSERT_EQ(s.err_ip + s.udp4 + s.other, 0, "no parsing without --parse");
	xdp_sink_bpf__destroy(skel);
}

/*
 * drop_plain, the default drop (no --parse, --cost, --packet-op, --sample):
 * the same counts as the program that tests each setting, frame by frame.
 */
static void test_drop_plain_counts_as_the_full_program(void)
{
	unsigned char pkt[128] = {};
	struct sink_stats s[2];
	int plain;

	if (geteuid()) {
		TEST_SKIP("needs root");
		return;
	}
	eth(pkt, ETH_P_IP);
	for (plain = 0; plain < 2; plain++) {
		struct xdp_sink_bpf *skel;
		__u32 ret = 0;

		libbpf_set_print(silent);
		skel = xdp_sink_bpf__open();
		if (!ASSERT_TRUE(skel != NULL, "open"))
			return;
		skel->rodata->drop_plain = plain;
		if (!ASSERT_OK(xdp_sink_bpf__load(skel), "load")) {
			xdp_sink_bpf__destroy(skel);
			return;
		}
		ASSERT_OK(run(skel->progs.xdp_sink_drop, pkt, 60, 3, &ret, NULL, NULL), "run 60");
		ASSERT_EQ(ret, XDP_DROP, "drop verdict");
		ASSERT_OK(run(skel->progs.xdp_sink_drop, pkt, 128, 2, NULL, NULL, NULL), "run 128");
		read_stats(skel, &s[plain]);
		xdp_sink_bpf__destroy(skel);
	}
	ASSERT_EQ(s[1].packets, 5, "plain: packets");
	ASSERT_EQ(s[1].bytes, 3 * 60 + 2 * 128, "plain: bytes");
	ASSERT_EQ(s[1].drop, 5, "plain: drop verdicts");
	ASSERT_EQ(memcmp(&s[0], &s[1], sizeof(s[0])), 0, "plain and full count alike");
}

static void test_tx_swaps_macs(void)
{
	unsigned char pkt[64] = {}, out[2048] = {};
	struct xdp_sink_bpf *skel;
	struct sink_stats s;
	__u32 ret;

	if (geteuid()) {
		TEST_SKIP("needs root");
		return;
	}
	skel = load(false, 0);
	if (!ASSERT_TRUE(skel != NULL, "load"))
		return;
	eth(pkt, ETH_P_IP);
	ASSERT_OK(run(skel->progs.xdp_sink_tx, pkt, 60, 1, &ret, NULL, out), "run tx");
	ASSERT_EQ(ret, XDP_TX, "XDP_TX verdict");
	ASSERT_EQ(out[5], 1, "destination is the old source");
	ASSERT_EQ(out[11], 2, "source is the old destination");
	read_stats(skel, &s);
	ASSERT_EQ(s.tx, 1, "tx counted");
	xdp_sink_bpf__destroy(skel);
}

static void test_redirect_without_target(void)
{
	unsigned char pkt[64] = {};
	struct xdp_sink_bpf *skel;
	struct sink_stats s;
	__u32 ret;

	if (geteuid()) {
		TEST_SKIP("needs root");
		return;
	}
	skel = load(false, 0);
	if (!ASSERT_TRUE(skel != NULL, "load"))
		return;
	eth(pkt, ETH_P_IP);
	ASSERT_OK(run(skel->progs.xdp_sink_redirect, pkt, 60, 2, &ret, NULL, NULL), "redirect");
	ASSERT_EQ(ret, XDP_ABORTED, "empty devmap aborts");
	ASSERT_OK(run(skel->progs.xdp_sink_xsk, pkt, 60, 1, &ret, NULL, NULL), "xsk");
	ASSERT_EQ(ret, XDP_DROP, "queue without a socket drops");
	read_stats(skel, &s);
	ASSERT_EQ(s.redirect_err, 3, "missing targets counted");
	ASSERT_EQ(s.redirect, 0, "nothing redirected");
	xdp_sink_bpf__destroy(skel);
}

static struct xdp_sink_bpf *load_op(__u32 op)
{
	struct xdp_sink_bpf *skel;

	libbpf_set_print(silent);
	skel = xdp_sink_bpf__open();
	if (!skel)
		return NULL;
	skel->rodata->packet_op = op;
	if (xdp_sink_bpf__load(skel)) {
		xdp_sink_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

/*
 * --packet-op: swap-macs swaps before the verdict in every mode it applies
 * to (tx's own swap is not undone), read-data leaves the frame as it was.
 * (BPF_PROG_RUN takes no frame shorter than Ethernet: the runt's abort is
 * not testable here.)
 */
static void test_packet_op(void)
{
	unsigned char pkt[64] = {}, out[2048] = {};
	struct xdp_sink_bpf *skel;
	struct sink_stats s;
	__u32 ret;

	if (geteuid()) {
		TEST_SKIP("needs root");
		return;
	}
	eth(pkt, ETH_P_IP);
	skel = load_op(XDPSG_OP_SWAP_MACS);
	if (!ASSERT_TRUE(skel != NULL, "load swap-macs"))
		return;
	ASSERT_OK(run(skel->progs.xdp_sink_drop, pkt, 60, 1, &ret, NULL, out), "run drop");
	ASSERT_EQ(ret, XDP_DROP, "drop verdict");
	ASSERT_EQ(out[5], 1, "drop: destination is the old source");
	ASSERT_EQ(out[11], 2, "drop: source is the old destination");
	ASSERT_OK(run(skel->progs.xdp_sink_tx, pkt, 60, 1, &ret, NULL, out), "run tx");
	ASSERT_EQ(out[5], 1, "tx: swapped once, not twice");
	read_stats(skel, &s);
	ASSERT_EQ(s.drop, 1, "drop counted");
	ASSERT_EQ(s.aborted, 0, "nothing aborted");
	xdp_sink_bpf__destroy(skel);

	skel = load_op(XDPSG_OP_READ_DATA);
	if (!ASSERT_TRUE(skel != NULL, "load read-data"))
		return;
	ASSERT_OK(run(skel->progs.xdp_sink_pass, pkt, 60, 1, &ret, NULL, out), "run pass");
	ASSERT_EQ(ret, XDP_PASS, "pass verdict");
	ASSERT_EQ(memcmp(out, pkt, 60), 0, "read-data leaves the frame as it was");
	read_stats(skel, &s);
	ASSERT_TRUE(s.read_sum != 0, "the bytes were read");
	xdp_sink_bpf__destroy(skel);
}

/* redirect-cpu with no CPU configured or entered: every frame aborted and counted. */
static void test_redirect_cpu_without_cpus(void)
{
	unsigned char pkt[64] = {};
	struct xdp_sink_bpf *skel;
	struct sink_stats s;
	__u32 ret;

	if (geteuid()) {
		TEST_SKIP("needs root");
		return;
	}
	skel = load(false, 0);
	if (!ASSERT_TRUE(skel != NULL, "load"))
		return;
	eth(pkt, ETH_P_IP);
	ASSERT_OK(run(skel->progs.xdp_sink_redirect_cpu, pkt, 60, 3, &ret, NULL, NULL), "run");
	ASSERT_EQ(ret, XDP_ABORTED, "no CPU: aborted");
	read_stats(skel, &s);
	ASSERT_EQ(s.packets, 3, "seen");
	ASSERT_EQ(s.aborted + s.redirect_err, 3, "each counted as not redirected");
	ASSERT_EQ(s.redirect, 0, "nothing redirected");
	xdp_sink_bpf__destroy(skel);
}

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/*
 * What --cost guarantees: every packet takes at least the time asked (the
 * program spins to a deadline), and is still counted and given its verdict.
 * Only lower bounds: a busy machine makes a run slower, never faster. How
 * close to the asked cost it lands is a benchmark question, not a test's.
 */
static void test_cost_is_a_floor(void)
{
	static const __u64 asks[] = { 1000, 20000 };
	unsigned char pkt[64] = {};
	struct sink_stats s;
	unsigned int i;

	if (geteuid()) {
		TEST_SKIP("needs root");
		return;
	}
	eth(pkt, ETH_P_IP);
	for (i = 0; i < sizeof(asks) / sizeof(asks[0]); i++) {
		struct xdp_sink_bpf *slow = load(false, asks[i]);
		__u32 repeat = 200, per_run = 0, ret = 0;
		__u64 t0, took;

		if (!ASSERT_TRUE(slow != NULL, "load with a cost"))
			continue;
		t0 = mono_ns();
		ASSERT_OK(run(slow->progs.xdp_sink_drop, pkt, 60, repeat, &ret, &per_run, NULL),
			  "run with a cost");
		took = mono_ns() - t0;
		ASSERT_EQ(ret, XDP_DROP, "the verdict stands");
		ASSERT_GE(per_run, asks[i], "the kernel's time per packet is at least the cost");
		ASSERT_GE(took, (__u64)repeat * asks[i], "the wall time is at least repeat x cost");
		read_stats(slow, &s);
		ASSERT_EQ(s.packets, repeat, "every packet counted");
		ASSERT_EQ(s.drop, repeat, "every packet dropped");
		xdp_sink_bpf__destroy(slow);
	}
}

/* drop --sample: what the program asks of the loader (cf. sample_configure()). */
static struct xdp_sink_bpf *load_sampling(__u32 every, __u32 snap, __u32 ring_bytes)
{
	struct xdp_sink_bpf *skel;

	libbpf_set_print(silent);
	skel = xdp_sink_bpf__open();
	if (!skel)
		return NULL;
	skel->rodata->sample_every = every;
	skel->rodata->sample_snap = snap;
	if (bpf_map__set_max_entries(skel->maps.samples, ring_bytes) || xdp_sink_bpf__load(skel)) {
		xdp_sink_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

/*
 * The 1-in-N countdown is per CPU: keep every run on one, or a migration
 * between BPF_PROG_RUN's repeats splits the count and blurs "exactly 1 in N".
 */
static bool pin_to_this_cpu(cpu_set_t *old)
{
	cpu_set_t one;
	int cpu = sched_getcpu();

	if (cpu < 0 || sched_getaffinity(0, sizeof(*old), old))
		return false;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return !sched_setaffinity(0, sizeof(one), &one);
}

static void read_sample_state(struct xdp_sink_bpf *skel, struct xdpsg_sample_state *sum)
{
	int ncpu = libbpf_num_possible_cpus(), c;
	struct xdpsg_sample_state vals[ncpu];
	__u32 key = 0;

	memset(sum, 0, sizeof(*sum));
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.sample_state), &key, vals))
		return;
	for (c = 0; c < ncpu; c++) {
		sum->taken += vals[c].taken;
		sum->lost += vals[c].lost;
	}
}

/* What the ring held: the frames' marks (byte 20) in order, and their lengths. */
struct seen_samples {
	unsigned int n, bad;
	unsigned char mark[256];
	__u32 len, caplen;
};

static int on_sample(void *ctx, void *data, size_t size)
{
	const struct xdpsg_sample *rec = data;
	struct seen_samples *ss = ctx;

	if (size < sizeof(*rec) || rec->caplen < 21 || ss->n >= sizeof(ss->mark)) {
		ss->bad++;
		return 0;
	}
	ss->mark[ss->n++] = rec->data[20];
	ss->len = rec->len;
	ss->caplen = rec->caplen;
	return 0;
}

static void drain_samples(struct xdp_sink_bpf *skel, struct seen_samples *ss)
{
	struct ring_buffer *rb;

	memset(ss, 0, sizeof(*ss));
	rb = ring_buffer__new(bpf_map__fd(skel->maps.samples), on_sample, ss, NULL);
	if (!ASSERT_TRUE(rb != NULL, "open the samples ring"))
		return;
	ring_buffer__consume(rb);
	ring_buffer__free(rb);
}

/* Every frame gets exactly one drop verdict, sampled or not. */
static void expect_dropped_once(struct xdp_sink_bpf *skel, __u64 frames, const char *when)
{
	struct sink_stats s;

	read_stats(skel, &s);
	ASSERT_EQ(s.packets, frames, when);
	ASSERT_EQ(s.drop, frames, when);
	ASSERT_EQ(s.pass + s.tx + s.redirect + s.redirect_err + s.aborted, 0, when);
}

/*
 * drop --sample 5 --snaplen 100: frames 5, 10, 15, 20 of 23 go to the ring
 * (cut to 100 bytes, their length kept), and all 23 are dropped and counted
 * once; a run of 1000 more goes on from the same countdown.
 */
static void test_sample_one_in_n(void)
{
	unsigned char pkt[128] = {};
	struct xdpsg_sample_state st;
	struct seen_samples ss;
	struct xdp_sink_bpf *skel;
	cpu_set_t old;
	unsigned int i;
	__u32 ret;

	if (geteuid()) {
		TEST_SKIP("needs root");
		return;
	}
	skel = load_sampling(5, 100, XDPSG_SAMPLE_RING);
	if (!ASSERT_TRUE(skel != NULL, "load with --sample 5"))
		return;
	if (!ASSERT_TRUE(pin_to_this_cpu(&old), "pin to one CPU"))
		goto out;
	eth(pkt, ETH_P_IP);
	for (i = 1; i <= 23; i++) {
		pkt[20] = (unsigned char)i;
		ASSERT_OK(run(skel->progs.xdp_sink_drop, pkt, sizeof(pkt), 1, &ret, NULL, NULL),
			  "run one frame");
		ASSERT_EQ(ret, XDP_DROP, "a sampled run still drops");
	}
	expect_dropped_once(skel, 23, "23 frames, one verdict each");
	read_sample_state(skel, &st);
	ASSERT_EQ(st.taken, 4, "samples taken of 23 at one in 5");
	ASSERT_EQ(st.lost, 0, "samples lost with room in the ring");
	drain_samples(skel, &ss);
	ASSERT_EQ(ss.bad, 0, "malformed samples");
	if (ASSERT_EQ(ss.n, 4, "samples in the ring"))
		for (i = 0; i < 4; i++)
			ASSERT_EQ(ss.mark[i], 5 * (i + 1), "the frame sampled is every 5th");
	ASSERT_EQ(ss.len, sizeof(pkt), "a sample keeps the frame's length");
	ASSERT_EQ(ss.caplen, 100, "a sample is cut to the snap length");

	ASSERT_OK(run(skel->progs.xdp_sink_drop, pkt, sizeof(pkt), 1000, &ret, NULL, NULL),
		  "run 1000");
	expect_dropped_once(skel, 1023, "1000 more frames, one verdict each");
	read_sample_state(skel, &st);
	ASSERT_EQ(st.taken, 1023 / 5, "samples taken of 1023 at one in 5");
	drain_samples(skel, &ss);
	ASSERT_EQ(ss.n, 1023 / 5 - 4, "samples in the ring after the second run");
	sched_setaffinity(0, sizeof(old), &old);
out:
	xdp_sink_bpf__destroy(skel);
}

/* A full ring loses the sample, never the frame's verdict. */
static void test_sample_full_ring_keeps_verdict(void)
{
	unsigned char pkt[64] = {};
	struct xdpsg_sample_state st;
	struct xdp_sink_bpf *skel;
	__u32 ret;

	if (geteuid()) {
		TEST_SKIP("needs root");
		return;
	}
	/* One page holds one record (2 KiB of data and its header), never two. */
	skel = load_sampling(1, XDPSG_SAMPLE_MAX, 4096);
	if (!ASSERT_TRUE(skel != NULL, "load with --sample 1 and a one-page ring"))
		return;
	eth(pkt, ETH_P_IP);
	ASSERT_OK(run(skel->progs.xdp_sink_drop, pkt, 60, 10, &ret, NULL, NULL), "run 10");
	ASSERT_EQ(ret, XDP_DROP, "the verdict with a full ring");
	expect_dropped_once(skel, 10, "10 frames into a full ring, one verdict each");
	read_sample_state(skel, &st);
	ASSERT_EQ(st.taken, 1, "samples the ring took");
	ASSERT_EQ(st.lost, 9, "samples the full ring refused");
	xdp_sink_bpf__destroy(skel);
}

/* The frames both parsers see, and the class the one rule gives each. */
enum frame_kind {
	F_UDP4,
	F_UDP4_8021Q,
	F_UDP4_8021AD,
	F_QINQ,
	F_FRAG_FIRST,
	F_FRAG_LATER,
	F_UDP6,
	F_UDP6_8021AD,
	F_IP6_FRAG_HDR,
	F_TCP4,
	F_ARP,
	F_TOT_BEYOND_FRAME,
	F_UDP_LEN_BEYOND_IP,
	F_IP_VERSION_5,
	F_VLAN_CUT,
	F_UDP_IN_PADDING,
	F_STAMP_TO_VXLAN_PORT,
	F_NKINDS,
};

static const struct {
	const char *name;
	enum parse_result want;
} frame_kinds[F_NKINDS] = {
	[F_UDP4] = { "udp4", PARSE_UDP4 },
	[F_UDP4_8021Q] = { "udp4 in 802.1Q", PARSE_UDP4 },
	[F_UDP4_8021AD] = { "udp4 in 802.1ad", PARSE_UDP4 },
	[F_QINQ] = { "802.1ad then 802.1Q (two tags)", PARSE_UDP4 },
	[F_FRAG_FIRST] = { "IPv4 first fragment (MF)", PARSE_OTHER },
	[F_FRAG_LATER] = { "IPv4 non-first fragment", PARSE_OTHER },
	[F_UDP6] = { "udp6", PARSE_UDP6 },
	[F_UDP6_8021AD] = { "udp6 in 802.1ad", PARSE_UDP6 },
	[F_IP6_FRAG_HDR] = { "IPv6 fragment header past the payload", PARSE_ERR_IP6_EXT },
	[F_TCP4] = { "tcp4 with a data offset of 0", PARSE_ERR_TCP },
	[F_ARP] = { "arp", PARSE_OTHER },
	[F_TOT_BEYOND_FRAME] = { "IPv4 total length beyond the frame", PARSE_ERR_IP },
	[F_UDP_LEN_BEYOND_IP] = { "UDP length beyond the IP packet", PARSE_ERR_UDP },
	[F_IP_VERSION_5] = { "IP version 5 under ETH_P_IP", PARSE_ERR_IP },
	[F_VLAN_CUT] = { "VLAN tag cut short", PARSE_ERR_ETH },
	[F_UDP_IN_PADDING] = { "UDP header only in the padding", PARSE_ERR_UDP },
	[F_STAMP_TO_VXLAN_PORT] = { "stamped UDP to port 4789 stays UDP", PARSE_UDP4 },
};

/* A 64-byte-or-so frame of the given kind; returns its length. */
static unsigned int build_frame(enum frame_kind k, unsigned char *p)
{
	unsigned int o, l3, len = 64;

	memset(p, 0, 128);
	switch (k) {
	case F_UDP4_8021Q:
	case F_UDP4_8021AD:
	case F_QINQ:
		o = eth(p, k == F_UDP4_8021Q ? ETH_P_8021Q : ETH_P_8021AD);
		be16(p + o + 2, k == F_QINQ ? ETH_P_8021Q : ETH_P_IP);
		o += 4;
		if (k == F_QINQ) {
			be16(p + o + 2, ETH_P_IP);
			o += 4;
		}
		break;
	case F_UDP6:
	case F_UDP6_8021AD:
	case F_IP6_FRAG_HDR:
		o = eth(p, k == F_UDP6_8021AD ? ETH_P_8021AD : ETH_P_IPV6);
		if (k == F_UDP6_8021AD) {
			be16(p + o + 2, ETH_P_IPV6);
			o += 4;
		}
		l3 = o;
		set_plen(p + l3, 16);
		o += ipv6(p + o, k == F_IP6_FRAG_HDR ? IPPROTO_FRAGMENT : IPPROTO_UDP);
		set_ulen(p + o, 16);
		return o + 16;
	case F_ARP:
		eth(p, ETH_P_ARP);
		return 60;
	case F_VLAN_CUT:
		o = eth(p, ETH_P_8021Q);
		return o + 2;
	default:
		o = eth(p, ETH_P_IP);
		break;
	}
	l3 = o;
	set_tot(p + l3, 20 + 16);
	o += ipv4(p + o, 5, k == F_TCP4 ? IPPROTO_TCP : IPPROTO_UDP);
	set_ulen(p + o, 16);
	if (k == F_FRAG_FIRST)
		be16(p + l3 + 6, 0x2000); /* MF, offset 0 */
	if (k == F_FRAG_LATER)
		be16(p + l3 + 6, 185); /* offset 1480 bytes, no MF */
	if (k == F_TOT_BEYOND_FRAME)
		set_tot(p + l3, 1500);
	if (k == F_UDP_LEN_BEYOND_IP)
		set_ulen(p + o, 17);
	if (k == F_IP_VERSION_5)
		p[l3] = 0x55;
	if (k == F_UDP_IN_PADDING)
		set_tot(p + l3, 20 + 4);
	if (k == F_STAMP_TO_VXLAN_PORT) {
		be16(p + o + 2, 4789);
		p[o + 8] = XDPSG_STAMP_MAGIC & 0xff;
		p[o + 9] = XDPSG_STAMP_MAGIC >> 8;
	}
	return o + 16 > len ? o + 16 : len;
}

/* The class the XDP program gave a frame: the counter that moved. */
static int prog_class(struct xdp_sink_bpf *skel, unsigned char *pkt, unsigned int len)
{
	struct sink_stats a, b;

	read_stats(skel, &a);
	if (run(skel->progs.xdp_sink_drop, pkt, len, 1, NULL, NULL, NULL))
		return -1;
	read_stats(skel, &b);
	return parse_moved(&a, &b);
}

/*
 * The user-space reader's answer in the program's terms: accepted is udp,
 * tcp or icmp of the family and protocol the program named; -ENOENT (well
 * formed, not ours) is other; -EINVAL covers every error. Returns whether
 * the two agree.
 */
static bool reader_agrees(int prog, int ret, const struct pkt_info *pi)
{
	switch (prog) {
	case PARSE_UDP4:
	case PARSE_TCP4:
	case PARSE_ICMP4:
		return ret == 0 && pi->family == PKT_IPV4 &&
		       pi->proto == (prog == PARSE_UDP4 ? 17U :
				     prog == PARSE_TCP4 ? 6U :
							  1U);
	case PARSE_UDP6:
	case PARSE_TCP6:
	case PARSE_ICMP6:
		return ret == 0 && pi->family == PKT_IPV6 &&
		       pi->proto == (prog == PARSE_UDP6 ? 17U :
				     prog == PARSE_TCP6 ? 6U :
							  58U);
	case PARSE_OTHER:
		return ret == -ENOENT;
	default:
		return ret == -EINVAL;
	}
}

/* One rule: the XDP program and pkt_parse_udp()/stamp_read() agree on every frame. */
static void test_parsers_agree(void)
{
	unsigned char pkt[128];
	struct xdp_sink_bpf *skel;
	struct pkt_info pi;
	unsigned int k, len;
	int cls, ret;

	if (geteuid()) {
		TEST_SKIP("needs root");
		return;
	}
	skel = load(true, 0);
	if (!ASSERT_TRUE(skel != NULL, "load with --parse"))
		return;
	for (k = 0; k < F_NKINDS; k++) {
		len = build_frame(k, pkt);
		cls = prog_class(skel, pkt, len);
		memset(&pi, 0, sizeof(pi));
		ret = pkt_parse_l4(pkt, len, &pi);
		if (!ASSERT_EQ(cls, frame_kinds[k].want, frame_kinds[k].name))
			continue;
		if (!ASSERT_TRUE(reader_agrees(cls, ret, &pi), frame_kinds[k].name))
			fprintf(stderr, "  %s: the program says %d, the reader %d\n",
				frame_kinds[k].name, cls, ret);
		if (ret == 0)
			ASSERT_EQ(pi.payload_off + pi.payload_len <= len, 1,
				  "payload in the frame");
	}
	xdp_sink_bpf__destroy(skel);
}

/*
 * tx --reflect on generated frames (IPv4 and IPv6): addresses and ports
 * swapped, checksums still valid, the stamp and payload byte for byte.
 */
static void check_reflect(bool v6)
{
	unsigned char pkt[128] = {}, out[2048] = {};
	unsigned int so = v6 ? PKT_V6_OFF_SADDR : PKT_V4_OFF_SADDR, alen = v6 ? 16 : 4;
	unsigned int uo = v6 ? PKT_V6_OFF_UDP : PKT_V4_OFF_UDP, len;
	struct xdp_sink_bpf *skel = NULL;
	struct pkt_gen *g = NULL;
	struct pkt_opts o;
	char err[128];
	__u32 ret;

	pkt_opts_init(&o);
	o.size = v6 ? 80 : 60;
	o.run = 0x5eed;
	if (v6 && (pkt_text_ip_range("fd00::1", &o.src_ip, err, sizeof(err)) ||
		   pkt_text_ip_range("fd00::2", &o.dst_ip, err, sizeof(err))))
		goto out;
	g = pkt_gen__create(&o, err, sizeof(err));
	if (!ASSERT_TRUE(g != NULL, "pkt_gen"))
		goto out;
	pkt_gen_prefill(g, pkt);
	len = pkt_gen_next(g, pkt, 123456789ULL);
	libbpf_set_print(silent);
	skel = xdp_sink_bpf__open();
	if (!ASSERT_TRUE(skel != NULL, "open"))
		goto out;
	skel->rodata->reflect = true;
	if (!ASSERT_OK(xdp_sink_bpf__load(skel), "load with reflect"))
		goto out;
	ASSERT_OK(run(skel->progs.xdp_sink_tx, pkt, len, 1, &ret, NULL, out), "run tx");
	ASSERT_EQ(ret, XDP_TX, "XDP_TX verdict");
	ASSERT_TRUE(!memcmp(out, pkt + 6, 6) && !memcmp(out + 6, pkt, 6), "MACs swapped");
	ASSERT_TRUE(!memcmp(out + so, pkt + so + alen, alen) &&
			    !memcmp(out + so + alen, pkt + so, alen),
		    "addresses swapped");
	ASSERT_TRUE(!memcmp(out + uo, pkt + uo + 2, 2) && !memcmp(out + uo + 2, pkt + uo, 2),
		    "ports swapped");
	ASSERT_TRUE(!memcmp(out + uo + 4, pkt + uo + 4, len - uo - 4),
		    "UDP length, checksum, stamp and payload unchanged");
	ASSERT_EQ(pkt_verify_checksums(out, len), PKT_CSUM_OK, "checksums valid");
out:
	xdp_sink_bpf__destroy(skel);
	pkt_gen__destroy(g);
}

static void test_tx_reflect(void)
{
	if (geteuid()) {
		TEST_SKIP("needs root");
		return;
	}
	check_reflect(false);
	check_reflect(true);
}

/*
 * The xsk program's receive time: with rx_time set, 8 bytes of metadata in
 * front of the frame hold a CLOCK_MONOTONIC time taken during the run (the
 * stamps' clock), and the frame itself is untouched; without it, no metadata.
 */
static void test_xsk_rx_time(void)
{
	unsigned char pkt[64] = {}, out[2048];
	struct xdpsg_rx_meta m;
	struct xdp_sink_bpf *skel;
	__u32 ret = 0;
	__u64 t0, t1;
	int fd, err;

	if (geteuid()) {
		TEST_SKIP("needs root");
		return;
	}
	libbpf_set_print(silent);
	skel = xdp_sink_bpf__open();
	if (!ASSERT_TRUE(skel != NULL, "open"))
		return;
	skel->rodata->rx_time = true;
	if (!ASSERT_OK(xdp_sink_bpf__load(skel), "load with rx_time"))
		goto out;
	eth(pkt, ETH_P_IP);
	pkt[20] = 0xab;
	fd = bpf_program__fd(skel->progs.xdp_sink_xsk);
	{
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = 60,
			    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);

		t0 = mono_ns();
		err = bpf_prog_test_run_opts(fd, &o);
		t1 = mono_ns();
		ASSERT_OK(err, "run");
		ret = o.retval;
		ASSERT_EQ(o.data_size_out, 60 + sizeof(m), "the metadata comes out in front");
	}
	ASSERT_EQ(ret, XDP_DROP, "no socket: dropped");
	memcpy(&m, out, sizeof(m));
	ASSERT_GE(m.rx_ns, t0, "received during the run (not before)");
	ASSERT_GE(t1, m.rx_ns, "received during the run (not after)");
	ASSERT_EQ(memcmp(out + sizeof(m), pkt, 60), 0, "the frame is untouched");
out:
	xdp_sink_bpf__destroy(skel);
	skel = load(false, 0);
	if (!ASSERT_TRUE(skel != NULL, "load without rx_time"))
		return;
	{
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = 60,
			    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);

		ASSERT_OK(bpf_prog_test_run_opts(bpf_program__fd(skel->progs.xdp_sink_xsk), &o),
			  "run");
		ASSERT_EQ(o.data_size_out, 60, "no metadata unless asked");
	}
	xdp_sink_bpf__destroy(skel);
}

/* Every CPU's slot-0 entry gets the sample's state; returns the map's fd or -1. */
static int rx_clock_set(struct xdp_sink_bpf *skel, __u64 last, __u32 frames, __u32 skip)
{
	int ncpu = libbpf_num_possible_cpus(), c, fd = bpf_map__fd(skel->maps.stats);
	struct sink_stats vals[ncpu];
	__u32 key = 0;

	memset(vals, 0, sizeof(vals));
	for (c = 0; c < ncpu; c++) {
		vals[c].rx_clock_last = last;
		vals[c].rx_clock_frames = frames;
		vals[c].rx_clock_skip = skip;
	}
	return bpf_map_update_elem(fd, &key, vals, BPF_ANY) ? -1 : fd;
}

/* The entry of the CPU that ran the program (the one whose packets moved). */
static bool rx_clock_get(struct xdp_sink_bpf *skel, struct sink_stats *out)
{
	int ncpu = libbpf_num_possible_cpus(), c, fd = bpf_map__fd(skel->maps.stats);
	struct sink_stats vals[ncpu];
	__u32 key = 0;

	if (bpf_map_lookup_elem(fd, &key, vals))
		return false;
	for (c = 0; c < ncpu; c++)
		if (vals[c].packets) {
			*out = vals[c];
			return true;
		}
	return false;
}

/* One run of the xsk program; the receive time it put in front of the frame. */
static __u64 rx_meta_of_run(struct xdp_sink_bpf *skel, unsigned char *pkt)
{
	unsigned char out[2048];
	struct xdpsg_rx_meta m = { 0 };

	if (!run(skel->progs.xdp_sink_xsk, pkt, 60, 1, NULL, NULL, out))
		memcpy(&m, out, sizeof(m));
	return m.rx_ns;
}

/*
 * The receive-time sample (struct xdpsg_rx_meta): frames the sample skips
 * carry XDPSG_RX_UNTIMED and count down; a timed frame close on the heels of
 * the last starts a random skip of 8..23; a sparse one starts none; with
 * rx_time_all every frame is timed whatever the state says.
 */
static void test_xsk_rx_time_sample(void)
{
	unsigned char pkt[64] = {};
	struct xdp_sink_bpf *skel;
	struct sink_stats st;
	__u64 t0, rx;
	int i;

	if (geteuid()) {
		TEST_SKIP("needs root");
		return;
	}
	libbpf_set_print(silent);
	skel = xdp_sink_bpf__open();
	if (!ASSERT_TRUE(skel != NULL, "open"))
		return;
	skel->rodata->rx_time = true;
	if (!ASSERT_OK(xdp_sink_bpf__load(skel), "load"))
		goto out;
	eth(pkt, ETH_P_IP);

	/* Three frames still to skip, then one timed; far from the last: no new skip. */
	ASSERT_GE(rx_clock_set(skel, 1, 1, 3), 0, "set the state");
	for (i = 0; i < 3; i++)
		ASSERT_EQ(rx_meta_of_run(skel, pkt), XDPSG_RX_UNTIMED,
			  "a skipped frame is untimed");
	t0 = mono_ns();
	rx = rx_meta_of_run(skel, pkt);
	ASSERT_GE(rx, t0, "then a timed frame");
	ASSERT_TRUE(rx_clock_get(skel, &st), "read the state");
	ASSERT_EQ(st.rx_clock_skip, 0, "a sparse frame starts no skip");
	ASSERT_EQ(st.rx_clock_frames, 1, "and counts from itself");
	ASSERT_EQ(st.rx_clock_last, rx, "it is the last timed frame");

	/* Dense: a million frames' worth of time has not passed since the last timed one. */
	ASSERT_GE(rx_clock_set(skel, mono_ns(), 1000000, 0), 0, "set the state");
	rx = rx_meta_of_run(skel, pkt);
	ASSERT_GT(rx, XDPSG_RX_UNTIMED, "the frame after a skip is timed");
	ASSERT_TRUE(rx_clock_get(skel, &st), "read the state");
	ASSERT_GE(st.rx_clock_skip, XDPSG_RX_SKIP_MIN, "a dense frame starts a skip");
	ASSERT_GE(XDPSG_RX_SKIP_MIN + XDPSG_RX_SKIP_SPAN - 1, st.rx_clock_skip, "of at most 23");
	ASSERT_EQ(st.rx_clock_frames, st.rx_clock_skip + 1, "the next timed frame is skip + 1 on");
	xdp_sink_bpf__destroy(skel);

	/* --time-all: the state is ignored. */
	skel = xdp_sink_bpf__open();
	if (!ASSERT_TRUE(skel != NULL, "open"))
		return;
	skel->rodata->rx_time = true;
	skel->rodata->rx_time_all = true;
	if (!ASSERT_OK(xdp_sink_bpf__load(skel), "load with rx_time_all"))
		goto out;
	ASSERT_GE(rx_clock_set(skel, mono_ns(), 1000000, 3), 0, "set the state");
	for (i = 0; i < 4; i++)
		ASSERT_GT(rx_meta_of_run(skel, pkt), XDPSG_RX_UNTIMED, "every frame timed");
out:
	xdp_sink_bpf__destroy(skel);
}

static const struct test_case cases[] = {
	TEST_CASE(parse_errors),
	TEST_CASE(no_parse_counts_only),
	TEST_CASE(drop_plain_counts_as_the_full_program),
	TEST_CASE(tx_swaps_macs),
	TEST_CASE(tx_reflect),
	TEST_CASE(redirect_without_target),
	TEST_CASE(packet_op),
	TEST_CASE(redirect_cpu_without_cpus),
	TEST_CASE(cost_is_a_floor),
	TEST_CASE(parsers_agree),
	TEST_CASE(sample_one_in_n),
	TEST_CASE(sample_full_ring_keeps_verdict),
	TEST_CASE(xsk_rx_time),
	TEST_CASE(xsk_rx_time_sample),
};

TEST_MAIN("sink_prog", cases)
