// SPDX-License-Identifier: GPL-2.0
/*
 * xdp-gen's kernel-mode program through BPF_PROG_RUN: every frame it builds
 * is byte for byte what the user-space generator (pkt_gen_write_tmpl) writes
 * for the same flow, size, sequence number and timestamp, over IPv4 and IPv6,
 * one and many flows, IMIX, stamps on and off, sequential and random flow
 * order. Then a live-frames run into a veth pair in a private namespace,
 * counted at the receiving end, and the transmit rate printed. Needs root.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/if_link.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../../user/gen/gen_prog.h"
#include "pkt/gen.h"
#include "pkt/text.h"
#include "pkt/stamp.h"
#include "pkt_check.h"
#include "shared.h"
#include "test.h"
#include "xdp_gen.skel.h"
#include "xdp_sink.skel.h"

static int silent(enum libbpf_print_level l, const char *f, va_list ap)
{
	(void)l;
	(void)f;
	(void)ap;
	return 0;
}

/*
 * The stamps' key in every test here: not the public one, so a frame the
 * program signs is proven to carry the C writer's tag under a key of its
 * own, and to fail under another (below).
 */
static const struct stamp_key test_key = {
	.k0 = 0x0706050403020100ULL,
	.k1 = 0x0f0e0d0c0b0a0908ULL,
	.id = "testkey",
};

static struct pkt_gen *make_gen(const struct pkt_opts *o)
{
	struct pkt_opts keyed = *o;
	char err[256] = "";
	struct pkt_gen *g;

	keyed.key = &test_key;
	g = pkt_gen__create(&keyed, err, sizeof(err));

	if (!g)
		fprintf(stderr, "  pkt_gen__create: %s\n", err);
	return g;
}

/*
 * A live frame's page comes back with what the stack that received it wrote
 * into it: a receiver that removed a VLAN tag in place moved the MACs 4 bytes
 * on; a router that forwarded it wrote its own Ethernet header in front of
 * the (outer) IP header and took one off the TTL or hop limit (fixing the
 * IPv4 checksum). Every run of check_frames() feeds the program such an
 * input frame: whatever the kind and the path, the frame must leave whole.
 */
static void forwarded(const struct pkt_gen *g, __u8 *f)
{
	const struct pkt_layout *l = &g->lay;
	unsigned int ip = l->ol3_off ? l->ol3_off : l->l3_off;
	bool v6 = (l->ol3_off ? l->ofamily : g->family) == PKT_IPV6;
	__u16 csum, old, new;

	if (ip > PKT_ETH_HLEN) /* a tag removed in place */
		memmove(f + 4, f, 12);
	memset(f + ip - PKT_ETH_HLEN, 0x5a, 12); /* the router's MACs */
	if (v6) {
		f[ip + 7]--;
		return;
	}
	memcpy(&old, f + ip + 8, 2);
	f[ip + 8]--;
	memcpy(&new, f + ip + 8, 2);
	memcpy(&csum, f + ip + 10, 2);
	csum = (__u16)~pkt_csum_fold((__u16)~csum + (__u64)(__u16)~old + new);
	memcpy(f + ip + 10, &csum, 2);
}

/* Load xdp_gen for g, maps filled, state set for 'cpu'. */
/* The program reads the clock once every this many frames (xdp-gen: the batch size). */
static __u32 clock_every = 1;

static struct xdp_gen_bpf *load_gen(const struct pkt_gen *g, __u32 ifindex_out, int cpu,
				    bool tracing)
{
	struct xdp_gen_bpf *skel;

	libbpf_set_print(silent);
	skel = xdp_gen_bpf__open();
	if (!ASSERT_TRUE(skel != NULL, "open xdp_gen"))
		return NULL;
	gen_prog_set_rodata(skel, g, ifindex_out);
	gen_prog_size_marks(skel, 256);
	skel->rodata->clock_every = clock_every;
	/*
	 * As xdp-gen does: the raw tracepoints see every process, and another
	 * run's frames to the same ifindex in its own namespace would count.
	 */
	skel->rodata->owner_tgid = (__u32)getpid();
	/* As when a kernel lacks the tracepoints: the object must load without them. */
	bpf_program__set_autoload(skel->progs.gen_devmap_xmit, tracing);
	bpf_program__set_autoload(skel->progs.gen_redirect_err, tracing);
	if (tracing && !ASSERT_OK(gen_prog_set_netdev_off(skel), "net_device's ifindex in BTF")) {
		xdp_gen_bpf__destroy(skel);
		return NULL;
	}
	/*
	 * Not the --rtt responder, as xdp-gen kernel does not: it runs in no case
	 * here, and its verification (0.12 s) at every load was a third of this
	 * file's time. test_rtt.sh loads it.
	 */
	bpf_program__set_autoload(skel->progs.xdp_gen_rtt, false);
	if (!ASSERT_OK(xdp_gen_bpf__load(skel), "load xdp_gen") ||
	    !ASSERT_OK(gen_prog_fill_maps(skel, g), "fill maps") ||
	    !ASSERT_OK(gen_prog_set_cpu(skel, g, cpu, 0, 0), "set cpu state")) {
		xdp_gen_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

static bool read_cpu(struct xdp_gen_bpf *skel, int cpu, struct gen_cpu *out)
{
	int ncpu = libbpf_num_possible_cpus();
	struct gen_cpu vals[ncpu];
	__u32 key = 0;

	if (bpf_map__lookup_elem(skel->maps.cpu_state, &key, sizeof(key), vals, sizeof(vals), 0))
		return false;
	*out = vals[cpu];
	return true;
}

/* BPF_PROG_RUN runs on the calling CPU: stay on one, so its state slot is the one used. */
static int pin_self(void)
{
	int cpu = sched_getcpu();
	cpu_set_t set;

	if (cpu < 0)
		return -1;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return -1;
	return cpu;
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static bool frames_equal(const __u8 *got, const __u8 *want, unsigned int len, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < len; i++) {
		if (got[i] != want[i]) {
			fprintf(stderr, "  packet %u: byte %u is 0x%02x, want 0x%02x\n", n, i,
				got[i], want[i]);
			return false;
		}
	}
	return true;
}

/*
 * Run the program npkts times, one frame per run, and check each output
 * against pkt_gen_write_tmpl() with the same flow, size and sequence number
 * (and the timestamp the kernel wrote). g is advanced in step as the mirror.
 */
static void check_frames(const char *what, const struct pkt_opts *o, unsigned int npkts)
{
	unsigned int maxlen, len, n, hdr, bad = 0;
	__u8 *in = NULL, *in0 = NULL, *want = NULL, out[4096];
	struct xdp_gen_bpf *skel = NULL;
	__u64 bytes = 0, t_start, last_ts = 0;
	struct pkt_gen *g;
	struct gen_cpu c;
	int cpu;

	g = make_gen(o);
	if (!ASSERT_TRUE(g != NULL, what))
		return;
	cpu = pin_self();
	if (!ASSERT_GE(cpu, 0, "pin to a CPU"))
		goto out;
	skel = load_gen(g, 1, cpu, false);
	if (!skel)
		goto out;
	maxlen = pkt_gen_max_len(g);
	hdr = pkt_hdr_len(g->family);
	in = malloc(maxlen);
	in0 = malloc(maxlen);
	want = malloc(maxlen);
	if (!ASSERT_TRUE(in && in0 && want, "allocate frames"))
		goto out;
	gen_prog_input_frame(g, in0);
	pkt_gen_prefill(g, want);
	t_start = now_ns();

	for (n = 0; n < npkts && !bad; n++) {
		LIBBPF_OPTS(bpf_test_run_opts, r, .data_in = in, .data_size_in = maxlen,
			    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);
		__u32 flow = pkt_gen_next_flow(g);
		unsigned int t = pkt_gen_next_size(g);
		__u32 seq = g->seq[flow]++;
		struct stamp st = {};
		__u64 ts = 0;

		memcpy(in, in0, maxlen);
		forwarded(g, in);
		if (!ASSERT_OK(bpf_prog_test_run_opts(bpf_program__fd(skel->progs.xdp_gen), &r),
			       "BPF_PROG_RUN")) {
			bad++;
			break;
		}
		bad += !ASSERT_EQ(r.retval, XDP_REDIRECT, "verdict");
		pkt_gen_template(g, t, &len);
		bad += !ASSERT_EQ(r.data_size_out, len, "frame length is the size's");
		if (bad)
			break;
		if (g->stamp) {
			struct stamp_key pub;

			stamp_key_public(&pub);
			bad += !ASSERT_EQ(stamp_read(out, len, &test_key, &st), STAMP_DATA,
					  "stamp found, its tag right under the run's key");
			bad += !ASSERT_EQ(stamp_read(out, len, &pub, &st), -EBADMSG,
					  "the tag fails under another key");
			bad += !ASSERT_EQ(stamp_read(out, len, &test_key, &st), STAMP_DATA,
					  "read again");
			ts = stamp_time(st.ticks, now_ns());
			bad += !ASSERT_EQ(st.run, o->run, "run id");
			bad += !ASSERT_EQ(st.flow, flow, "flow id");
			bad += !ASSERT_EQ(st.seq, seq, "per-flow sequence number");
			bad += !ASSERT_TRUE(ts >= t_start && ts >= last_ts && ts <= now_ns(),
					    "timestamp is CLOCK_MONOTONIC, in order");
			last_ts = ts;
		}
		pkt_gen_write_tmpl(g, want, t, flow, seq, ts);
		bad += !frames_equal(out, want, len, n);
		bad += !ASSERT_TRUE(pkt_check_csums(out, len) == NULL, "checksums");
		bytes += len;
	}
	if (!ASSERT_EQ(bad, 0, "every frame as the C writer's, byte for byte")) {
		fprintf(stderr, "  %s: packet %u (flow order %s, %u flows, hdr %u) wrong\n", what,
			n - 1, g->random ? "random" : "sequential", g->nflows, hdr);
		goto out;
	}

	if (!ASSERT_TRUE(read_cpu(skel, cpu, &c), "read cpu state"))
		goto out;
	{
		ASSERT_EQ(c.packets, npkts, "packets counted");
		ASSERT_EQ_U64(c.bytes, bytes, "bytes counted");
		ASSERT_EQ(c.redirect_err, 0, "no redirect errors");
		ASSERT_EQ(c.flow_pos, g->flow_pos, "flow position as pkt_gen's");
		ASSERT_EQ(c.size_pos, g->size_pos, "size position as pkt_gen's");
		ASSERT_EQ_U64(c.rng, g->rng, "rng state as pkt_gen's");
	}
	ASSERT_EQ(c.fixed, gen_prog_fixed(g), "a fixed frame exactly when one flow in one size");
	/* What the end marks read: the program's own sequence numbers (fixed or not). */
	if (g->stamp) {
		struct pkt_gen *r = make_gen(o);
		__u32 f;

		if (ASSERT_TRUE(r && !gen_prog_read_seqs(skel, r, cpu), "read the program's seqs"))
			for (f = g->shard; f < g->nflows; f += g->shards)
				if (!ASSERT_EQ(r->seq[f], g->seq[f],
					       "a flow's frames, as the marks say"))
					break;
		pkt_gen__destroy(r);
	}
	if (g->stamp && c.fixed) {
		/* The fixed frame's flow keeps its sequence in the CPU's state, not in 'seqs'. */
		ASSERT_EQ(c.fixed_seq, g->seq[g->flow_pos], "next sequence number of the one flow");
	} else if (g->stamp) {
		__u32 f, s;

		for (f = 0; f < g->nflows; f++) {
			if (bpf_map__lookup_elem(skel->maps.seqs, &f, sizeof(f), &s, sizeof(s),
						 0) ||
			    !ASSERT_EQ(s, g->seq[f], "next sequence number per flow"))
				break;
		}
	}
out:
	xdp_gen_bpf__destroy(skel);
	free(in);
	free(in0);
	free(want);
	pkt_gen__destroy(g);
}

static void opts_ranges(struct pkt_opts *o, const char *src, const char *dst, const char *sport,
			const char *dport)
{
	char err[256];

	ASSERT_OK(pkt_text_ip_range(src, &o->src_ip, err, sizeof(err)), "parse src ip");
	ASSERT_OK(pkt_text_ip_range(dst, &o->dst_ip, err, sizeof(err)), "parse dst ip");
	ASSERT_OK(pkt_text_port_range(sport, &o->src_port, err, sizeof(err)), "parse src port");
	ASSERT_OK(pkt_text_port_range(dport, &o->dst_port, err, sizeof(err)), "parse dst port");
}

/*
 * --rate in the program: a run sends only when its frame is due, and never
 * more than the limit. Checked without timing: at 1 frame/s only the first of
 * 1000 quick runs is due; at 1 Gframe/s every run is due until the limit.
 */
static void test_paced(void)
{
	unsigned char in[128], out[128];
	struct xdp_gen_bpf *skel = NULL;
	struct pkt_gen *g = NULL;
	struct gen_cpu c;
	struct pkt_opts o;
	int cpu, fd;

	if (geteuid()) {
		TEST_SKIP("needs root");
		return;
	}
	cpu = pin_self();
	pkt_opts_init(&o);
	g = make_gen(&o);
	if (!ASSERT_TRUE(cpu >= 0 && g, "pin and make a generator"))
		goto out;
	skel = load_gen(g, 1, cpu, false);
	if (!ASSERT_TRUE(skel, "load"))
		goto out;
	gen_prog_input_frame(g, in);
	fd = bpf_program__fd(skel->progs.xdp_gen);
	{
		LIBBPF_OPTS(bpf_test_run_opts, r, .data_in = in, .data_size_in = 60,
			    .data_out = out, .data_size_out = sizeof(out), .repeat = 1000);

		ASSERT_OK(gen_prog_set_cpu(skel, g, cpu, 1, 0), "1 frame per second");
		ASSERT_OK(bpf_prog_test_run_opts(fd, &r), "1000 runs");
		ASSERT_TRUE(read_cpu(skel, cpu, &c), "read state");
		ASSERT_EQ_U64(c.packets, 1, "only the first run was due");
		ASSERT_EQ(r.retval, XDP_DROP, "the last run sent nothing");
		ASSERT_OK(gen_prog_set_cpu(skel, g, cpu, 1000000000ULL, 5), "fast, limit 5");
		ASSERT_OK(bpf_prog_test_run_opts(fd, &r), "1000 runs");
		ASSERT_TRUE(read_cpu(skel, cpu, &c), "read state");
		ASSERT_EQ_U64(c.packets, 5, "the limit holds");
		ASSERT_OK(gen_prog_set_cpu(skel, g, cpu, 0, 0), "no rate");
		ASSERT_OK(bpf_prog_test_run_opts(fd, &r), "1000 runs");
		ASSERT_TRUE(read_cpu(skel, cpu, &c), "read state");
		ASSERT_EQ_U64(c.packets, 1000, "without a rate every run sends");
	}
out:
	xdp_gen_bpf__destroy(skel);
	pkt_gen__destroy(g);
}

static bool write_cpu(struct xdp_gen_bpf *skel, int cpu, const struct gen_cpu *c)
{
	int ncpu = libbpf_num_possible_cpus();
	struct gen_cpu vals[ncpu];
	__u32 key = 0;

	if (bpf_map__lookup_elem(skel->maps.cpu_state, &key, sizeof(key), vals, sizeof(vals), 0))
		return false;
	vals[cpu] = *c;
	return !bpf_map__update_elem(skel->maps.cpu_state, &key, sizeof(key), vals, sizeof(vals),
				     0);
}

/*
 * --burst in the program: a burst of 5 whose next is due in an hour goes
 * whole in the first runs, then nothing (at its 1-per-second average rate,
 * without the burst, one frame would go). A burst cut in two (it began 5 s
 * ago, every 2 s, a pause, its last 2 frames go now) holds the next one, though
 * due, until half a gap after those 2: a late tail never runs into a burst.
 * And a burst begins at the first run of one of the kernel's batches.
 */
static void test_paced_burst(void)
{
	struct pace_shape_opts so = { .burst = 5, .gap_ns = 3600000000000ULL };
	unsigned char in[128], out[128];
	struct xdp_gen_bpf *skel = NULL;
	struct pkt_gen *g = NULL;
	struct gen_cpu c;
	struct pkt_opts o;
	struct pace p;
	int cpu, fd;

	if (geteuid()) {
		TEST_SKIP("needs root");
		return;
	}
	cpu = pin_self();
	pkt_opts_init(&o);
	g = make_gen(&o);
	if (!ASSERT_TRUE(cpu >= 0 && g, "pin and make a generator"))
		goto out;
	skel = load_gen(g, 1, cpu, false);
	if (!ASSERT_TRUE(skel, "load"))
		goto out;
	gen_prog_input_frame(g, in);
	fd = bpf_program__fd(skel->progs.xdp_gen);
	pace_share(&p, 0, 0, 0, 1);
	pace_shape(&p, &so, 0, 1);
	{
		LIBBPF_OPTS(bpf_test_run_opts, r, .data_in = in, .data_size_in = 60,
			    .data_out = out, .data_size_out = sizeof(out), .repeat = 1000);

		ASSERT_OK(gen_prog_set_cpu(skel, g, cpu, p.rate, 0), "the bursts' average rate");
		ASSERT_OK(gen_prog_set_shape(skel, cpu, &p, 0), "a burst of 5 an hour");
		ASSERT_OK(bpf_prog_test_run_opts(fd, &r), "1000 runs");
		ASSERT_TRUE(read_cpu(skel, cpu, &c), "read state");
		ASSERT_EQ_U64(c.packets, 5, "one whole burst, then nothing");
		ASSERT_EQ_U64(c.burst_left, 0, "between bursts");
		/* Seconds now, not hours: the machine may have been up for less. */
		c.burst_gap_ns = 2000000000ULL;
		c.t0 = now_ns() - 10000000000ULL;
		c.due_ns = 0;
		c.burst_start = c.t0 + 5000000000ULL;
		c.burst_left = 2;
		ASSERT_TRUE(write_cpu(skel, cpu, &c), "a burst cut 5 s ago");
		ASSERT_OK(bpf_prog_test_run_opts(fd, &r), "1000 runs");
		ASSERT_TRUE(read_cpu(skel, cpu, &c), "read state");
		ASSERT_EQ_U64(c.packets, 7, "its tail, then not the next burst, though due");
		/*
		 * In batches of 8 runs, a burst due at the fourth run of one
		 * waits for the next batch's first, and goes whole in it.
		 */
		c.batch_runs = 8;
		c.batch_pos = 3;
		c.t0 = now_ns() - 10000000000ULL;
		c.due_ns = 0;
		c.burst_start = 0;
		c.burst_left = 0;
		c.packets = 0;
		r.repeat = 5;
		ASSERT_TRUE(write_cpu(skel, cpu, &c), "a burst due mid-batch");
		ASSERT_OK(bpf_prog_test_run_opts(fd, &r), "the batch's last 5 runs");
		ASSERT_TRUE(read_cpu(skel, cpu, &c), "read state");
		ASSERT_EQ_U64(c.packets, 0, "no burst begins mid-batch");
		ASSERT_EQ(c.batch_pos, 0, "at the next batch's first run");
		ASSERT_OK(bpf_prog_test_run_opts(fd, &r), "the next batch's first 5 runs");
		ASSERT_TRUE(read_cpu(skel, cpu, &c), "read state");
		ASSERT_EQ_U64(c.packets, 5, "the whole burst, at the batch's start");
	}
out:
	xdp_gen_bpf__destroy(skel);
	pkt_gen__destroy(g);
}

/* --poisson's table: increasing quantiles whose mean is one interval, to rounding. */
static void test_exp_table(void)
{
	__u32 q[XDPSG_GEN_EXP_GAPS];
	__u64 sum = 0;
	unsigned int i, up = 1;

	gen_prog_exp_table(q, XDPSG_GEN_EXP_GAPS);
	for (i = 0; i < XDPSG_GEN_EXP_GAPS; i++) {
		sum += q[i];
		up &= !i || q[i] > q[i - 1];
	}
	ASSERT_TRUE(up, "increasing");
	ASSERT_LE(sum / XDPSG_GEN_EXP_GAPS - (1 << XDPSG_GEN_EXP_FP) + 1, 2,
		  "mean one interval, within rounding");
	ASSERT_LT(q[0], 1 << (XDPSG_GEN_EXP_FP - 9), "shortest gap near 0");
	ASSERT_GT(q[XDPSG_GEN_EXP_GAPS - 1], 7 << XDPSG_GEN_EXP_FP, "longest over 7 intervals");
}

/* 2^64 / 1e9: packets * 1e9 no longer fits in 64 bits past this count. */
#define WRAP_PACKETS 18446744073ULL

/*
 * The frame after 'packets' is due at t0 + packets * 1e9 / rate, computed
 * here in 128 bits; the state is set as if the CPU had sent that many since
 * a t0 'back_ns' ago (last frame long ago, so the catch-up gap allows it).
 * The margins are seconds: due or not due cannot depend on the machine's speed.
 */
static void paced_at(struct xdp_gen_bpf *skel, int cpu, const void *in, __u64 rate, __u64 packets,
		     __u64 back_ns, __u32 runs)
{
	LIBBPF_OPTS(bpf_test_run_opts, r, .data_in = in, .data_size_in = 60, .repeat = 1);
	unsigned __int128 due, want_ns;
	struct gen_cpu c;
	__u64 t0, now, sent;
	char what[160];
	__u32 i;

	if (!ASSERT_TRUE(read_cpu(skel, cpu, &c), "read state"))
		return;
	now = now_ns();
	t0 = now - back_ns;
	c.rate = rate;
	c.limit = 0;
	c.min_gap_ns = 500000000ULL / rate;
	c.t0 = t0;
	c.last_ns = 0;
	gen_prog_set_schedule(&c, packets);
	if (!ASSERT_TRUE(write_cpu(skel, cpu, &c), "write state"))
		return;
	for (i = 0; i < runs; i++)
		if (!ASSERT_OK(bpf_prog_test_run_opts(bpf_program__fd(skel->progs.xdp_gen), &r),
			       "BPF_PROG_RUN"))
			return;
	if (!ASSERT_TRUE(read_cpu(skel, cpu, &c), "read state"))
		return;
	/* Due now (runs well within a second): every run sends, else none does. */
	due = (unsigned __int128)t0 + (unsigned __int128)packets * 1000000000ULL / rate;
	sent = due <= now ? runs : 0;
	snprintf(what, sizeof(what), "rate %llu, %llu sent, t0 %.1f s ago: frames sent",
		 (unsigned long long)rate, (unsigned long long)packets, back_ns / 1e9);
	ASSERT_EQ_U64(c.packets, packets + sent, what);
	/* The schedule the program advanced is still the exact one. */
	want_ns = (unsigned __int128)c.packets * 1000000000ULL;
	snprintf(what, sizeof(what), "rate %llu after %llu frames: due_ns, due_rem exact",
		 (unsigned long long)rate, (unsigned long long)c.packets);
	ASSERT_TRUE(want_ns / rate > ~0ULL ? c.due_ns == ~0ULL :
					     c.due_ns == (__u64)(want_ns / rate) &&
						     c.due_rem == (__u64)(want_ns % rate),
		    what);
}

/*
 * The schedule near and past 2^64 / 1e9 frames, where packets * 1e9 wraps
 * (31 minutes at 10 Mpps on one CPU): a frame is due exactly when the
 * 128-bit schedule says so, and the state the program advances stays exact.
 */
static void test_paced_wrap(void)
{
	struct xdp_gen_bpf *skel = NULL;
	struct pkt_gen *g = NULL;
	unsigned char in[128];
	struct pkt_opts o;
	int cpu;

	if (geteuid()) {
		TEST_SKIP("needs root");
		return;
	}
	cpu = pin_self();
	pkt_opts_init(&o);
	g = make_gen(&o);
	if (!ASSERT_TRUE(cpu >= 0 && g, "pin and make a generator"))
		goto out;
	skel = load_gen(g, 1, cpu, false);
	if (!ASSERT_TRUE(skel, "load"))
		goto out;
	gen_prog_input_frame(g, in);
	/* 1 Gpps: the frame after n is due n ns after t0 (18.4 s here). */
	paced_at(skel, cpu, in, 1000000000ULL, WRAP_PACKETS, 20000000000ULL, 1);
	paced_at(skel, cpu, in, 1000000000ULL, WRAP_PACKETS + 1, 17000000000ULL, 1);
	paced_at(skel, cpu, in, 1000000000ULL, WRAP_PACKETS + 1, 20000000000ULL, 1);
	paced_at(skel, cpu, in, 1000000000ULL, WRAP_PACKETS - 2, 30000000000ULL, 5);
	/* A rate with a remainder: the quotient and remainder carry across the wrap. */
	paced_at(skel, cpu, in, 999999937ULL, WRAP_PACKETS - 2, 30000000000ULL, 5);
	paced_at(skel, cpu, in, 999999937ULL, WRAP_PACKETS + 1, 17000000000ULL, 1);
	paced_at(skel, cpu, in, 3ULL, 5ULL, 2000000000ULL, 1);
	/* 1 pps: centuries ahead, past the clock's range; never due. */
	paced_at(skel, cpu, in, 1ULL, WRAP_PACKETS, 10000000000ULL, 1);
	paced_at(skel, cpu, in, 1ULL, WRAP_PACKETS + 1, 10000000000ULL, 1);
	paced_at(skel, cpu, in, 1ULL, ~0ULL, 10000000000ULL, 1);
out:
	xdp_gen_bpf__destroy(skel);
	pkt_gen__destroy(g);
}

static void test_v4_one_flow(void)
{
	struct pkt_opts o;

	if (geteuid()) {
		TEST_SKIP("needs root");
		return;
	}
	pkt_opts_init(&o);
	o.run = 0x1234;
	check_frames("v4 1 flow 60 B", &o, 50);
	o.no_stamp = true;
	o.size = 128;
	check_frames("v4 1 flow no stamp 128 B", &o, 20);
}

/* Ranges that carry across bytes and ports near 65535 exercise the checksum folding. */
static void test_v4_flows_imix(void)
{
	struct pkt_imix imix;
	char err[256];
	struct pkt_opts o;

	if (geteuid()) {
		TEST_SKIP("needs root");
		return;
	}
	pkt_opts_init(&o);
	opts_ranges(&o, "10.0.0.250-10.0.1.5", "192.168.255.254-192.169.0.1", "65530-65535",
		    "9-11");
	ASSERT_OK(pkt_text_imix("60:7,576:4,1500:1", &imix, err, sizeof(err)), "parse imix");
	o.imix = &imix;
	o.flows = 800;
	o.run = 0xbeef;
	check_frames("v4 800 flows imix", &o, 1500);
	o.no_stamp = true;
	o.flows = 77;
	check_frames("v4 77 flows imix no stamp", &o, 300);
	o.no_stamp = false;
	o.random = true;
	o.seed = 42;
	o.flows = 800;
	o.shards = 3;
	o.shard = 2;
	check_frames("v4 800 flows random shard 2/3", &o, 1000);
	o.random = false;
	check_frames("v4 800 flows sequential shard 2/3", &o, 1000);
}

static void test_v6(void)
{
	struct pkt_imix imix;
	char err[256];
	struct pkt_opts o;

	if (geteuid()) {
		TEST_SKIP("needs root");
		return;
	}
	pkt_opts_init(&o);
	opts_ranges(&o, "fd00::1", "fd00::2", "1024", "9");
	o.size = 80;
	o.run = 7;
	check_frames("v6 1 flow 80 B", &o, 50);
	opts_ranges(&o, "fd00::ffff:fffe-fd00::1:0:1", "fd01::ff:ffff:fff0-fd01::100:0:3",
		    "65000-65535", "9-10");
	ASSERT_OK(pkt_text_imix("80:7,576:4,1500:1", &imix, err, sizeof(err)), "parse imix");
	o.imix = &imix;
	o.flows = 65535;
	check_frames("v6 65535 flows imix", &o, 1500);
	o.random = true;
	o.seed = 3;
	o.flows = 5000;
	o.shards = 2;
	o.shard = 1;
	check_frames("v6 5000 flows random shard 1/2", &o, 1000);
	o.no_stamp = true;
	o.random = false;
	check_frames("v6 5000 flows no stamp", &o, 500);
}

/*
 * Every header kind through the program's layout path (write_any) and its
 * fixed-frame path: TCP, ICMP, tags, each tunnel, both families.
 */
static void test_kinds(void)
{
	static const struct {
		const char *name;
		enum pkt_proto proto;
		unsigned int nvlan;
		enum pkt_encap encap;
		const char *src, *dst, *osrc, *odst;
	} k[] = {
		{ "tcp v4", PKT_TCP, 0, 0, "10.0.0.250-10.0.1.5", "10.1.0.1", NULL, NULL },
		{ "icmp v6", PKT_ICMP, 0, 0, "fd00::fff0-fd00::1:3", "fd01::1", NULL, NULL },
		{ "udp qinq", PKT_UDP, 2, 0, "10.0.0.1-10.0.0.9", "10.1.0.1", NULL, NULL },
		{ "tcp vlan v6", PKT_TCP, 1, 0, "fd00::1-fd00::9", "fd01::1", NULL, NULL },
		{ "udp vxlan", PKT_UDP, 0, PKT_ENCAP_VXLAN, "10.0.0.250-10.0.1.5", "10.1.0.1",
		  "172.16.0.1", "172.16.0.2" },
		{ "udp geneve v6", PKT_UDP, 1, PKT_ENCAP_GENEVE, "fd00::fff0-fd00::1:3", "fd01::1",
		  "fd10::1", "fd10::2" },
		{ "icmp gre", PKT_ICMP, 0, PKT_ENCAP_GRE, "10.0.0.1-10.0.0.9", "10.1.0.1",
		  "172.16.0.1", "172.16.0.2" },
		{ "tcp 6in4", PKT_TCP, 0, PKT_ENCAP_IPIP, "fd00::1-fd00::9", "fd01::1",
		  "172.16.0.1", "172.16.0.2" },
	};
	struct pkt_imix imix;
	char err[256], name[64];
	struct pkt_opts o;
	unsigned int i;

	if (geteuid()) {
		TEST_SKIP("needs root");
		return;
	}
	ASSERT_OK(pkt_text_imix("160:3,161:2,1500:1", &imix, err, sizeof(err)), "parse imix");
	for (i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		pkt_opts_init(&o);
		opts_ranges(&o, k[i].src, k[i].dst, "65530-65535", "80");
		o.proto = k[i].proto;
		o.tcp_flags = PKT_TCP_SYN;
		o.nvlan = k[i].nvlan;
		o.vlan[0] = 100;
		o.vlan[1] = 200;
		o.encap = k[i].encap;
		o.vni = 42;
		if (k[i].osrc) {
			ASSERT_OK(pkt_text_ip_range(k[i].osrc, &o.outer_src, err, sizeof(err)),
				  "outer src");
			ASSERT_OK(pkt_text_ip_range(k[i].odst, &o.outer_dst, err, sizeof(err)),
				  "outer dst");
		}
		o.run = 0x77 + i;
		o.size = 160;
		snprintf(name, sizeof(name), "%s fixed", k[i].name);
		check_frames(name, &o, 30);
		o.imix = &imix;
		o.flows = 40;
		snprintf(name, sizeof(name), "%s 40 flows imix", k[i].name);
		check_frames(name, &o, 300);
	}
}

/*
 * --stream: the dispatcher and three streams' programs, loaded as xdp-gen
 * loads them. Each run's frame is the next stream's in turn, byte for byte
 * what its own pkt_gen writes, whatever another stream left in the frame
 * (a live-frame page keeps the last frame: here each run's input is the
 * run before's output, noise over the headers any stream may have); a
 * stream at its limit leaves the turn, and with none left a run sends nothing.
 */
#define NSTREAMS 3

static void test_streams(void)
{
	struct xdp_gen_bpf *run = NULL, *sk[NSTREAMS] = { NULL };
	struct pkt_gen *g[NSTREAMS] = { NULL };
	__u8 *in = NULL, *want[NSTREAMS] = { NULL }, out[4096];
	static const __u64 limit[NSTREAMS] = { 0, 7, 0 };
	unsigned int i, n, s, len, maxlen = 0, big = 0, bad = 0, sent[NSTREAMS] = { 0 };
	__u32 copy_len = 0;
	struct pkt_imix imix;
	struct pkt_opts o[NSTREAMS];
	char err[256];
	int cpu;

	if (geteuid()) {
		TEST_SKIP("needs root");
		return;
	}
	ASSERT_OK(pkt_text_imix("160:3,161:2,1500:1", &imix, err, sizeof(err)), "parse imix");
	for (s = 0; s < NSTREAMS; s++) {
		pkt_opts_init(&o[s]);
		o[s].run = 0x500 + s;
	}
	opts_ranges(&o[0], "10.0.0.1", "10.1.0.1", "1000", "9");
	o[0].size = 60; /* one flow, one size: the fixed path, after the copy */
	opts_ranges(&o[1], "fd00::1-fd00::9", "fd01::1", "65530-65535", "80");
	o[1].proto = PKT_TCP;
	o[1].tcp_flags = PKT_TCP_SYN;
	o[1].nvlan = 1;
	o[1].vlan[0] = 100;
	o[1].imix = &imix;
	o[1].flows = 9;
	opts_ranges(&o[2], "10.0.0.1-10.0.0.40", "10.1.0.1", "1000", "9");
	o[2].proto = PKT_ICMP;
	o[2].encap = PKT_ENCAP_VXLAN;
	o[2].vni = 42;
	ASSERT_OK(pkt_text_ip_range("172.16.0.1", &o[2].outer_src, err, sizeof(err)), "outer");
	ASSERT_OK(pkt_text_ip_range("172.16.0.2", &o[2].outer_dst, err, sizeof(err)), "outer");
	o[2].size = 300;
	o[2].flows = 40;
	cpu = pin_self();
	if (!ASSERT_GE(cpu, 0, "pin to a CPU"))
		return;
	for (s = 0; s < NSTREAMS; s++) {
		g[s] = make_gen(&o[s]);
		if (!ASSERT_TRUE(g[s] != NULL, "stream generator"))
			goto out;
		want[s] = malloc(pkt_gen_max_len(g[s]));
		if (!ASSERT_TRUE(want[s] != NULL, "allocate"))
			goto out;
		pkt_gen_prefill(g[s], want[s]);
		if (pkt_gen_max_len(g[s]) > maxlen) {
			maxlen = pkt_gen_max_len(g[s]);
			big = s;
		}
		if (pkt_gen_copy_len(g[s]) > copy_len)
			copy_len = pkt_gen_copy_len(g[s]);
	}
	libbpf_set_print(silent);
	run = xdp_gen_bpf__open();
	if (!ASSERT_TRUE(run != NULL, "open the run's object"))
		goto out;
	gen_prog_set_rodata(run, g[2], 1);
	gen_prog_set_dispatch(run, NSTREAMS, false);
	bpf_program__set_autoload(run->progs.gen_devmap_xmit, false);
	bpf_program__set_autoload(run->progs.gen_redirect_err, false);
	bpf_program__set_autoload(run->progs.xdp_gen_rtt, false);
	if (!ASSERT_OK(xdp_gen_bpf__load(run), "load the dispatcher") ||
	    !ASSERT_OK(gen_prog_set_target(run), "target"))
		goto out;
	for (s = 0; s < NSTREAMS; s++)
		if (!ASSERT_OK(gen_prog_load_stream(run, g[s], s, false, copy_len, &sk[s]),
			       "load a stream") ||
		    !ASSERT_OK(gen_prog_set_stream_cpu(sk[s], g[s], cpu, 0, limit[s]),
			       "stream cpu"))
			goto out;
	if (!ASSERT_OK(gen_prog_set_live(run, cpu, (1U << NSTREAMS) - 1), "live streams"))
		goto out;
	in = malloc(maxlen);
	if (!ASSERT_TRUE(in != NULL, "allocate"))
		goto out;
	pkt_gen_prefill(g[big], in);
	srand(7);
	for (n = 0; n < 60; n++) {
		LIBBPF_OPTS(bpf_test_run_opts, r, .data_in = in, .data_size_in = maxlen,
			    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);
		struct stamp st = {};
		__u32 flow, seq;
		unsigned int t;

		for (i = 0; i < copy_len; i++)
			in[i] = (__u8)rand();
		/* In turn, skipping stream 1 once it sent its limit. */
		s = n < 3 * limit[1] ? n % 3 : (n - 3 * limit[1]) % 2 ? 2 : 0;
		if (!ASSERT_OK(bpf_prog_test_run_opts(bpf_program__fd(run->progs.xdp_gen_streams),
						      &r),
			       "BPF_PROG_RUN")) {
			bad++;
			break;
		}
		bad += !ASSERT_EQ(r.retval, XDP_REDIRECT, "verdict");
		flow = pkt_gen_next_flow(g[s]);
		t = pkt_gen_next_size(g[s]);
		seq = g[s]->seq[flow]++;
		pkt_gen_template(g[s], t, &len);
		bad += !ASSERT_EQ(r.data_size_out, len, "the stream's frame length");
		bad += !ASSERT_EQ(stamp_read(out, r.data_size_out, &test_key, &st), STAMP_DATA,
				  "stamp found, its tag right under the run's key");
		bad += !ASSERT_EQ(st.run, o[s].run, "the stream's run id");
		if (bad)
			break;
		pkt_gen_write_tmpl(g[s], want[s], t, flow, seq, stamp_time(st.ticks, now_ns()));
		bad += !frames_equal(out, want[s], len, n);
		bad += !ASSERT_TRUE(pkt_check_csums(out, len) == NULL, "checksums");
		if (bad)
			break;
		sent[s]++;
		memcpy(in, out, len);
	}
	if (!ASSERT_EQ(bad, 0, "every frame as its stream's C writer's, byte for byte"))
		fprintf(stderr, "  streams: run %u (stream %u) wrong\n", n, s);
	for (s = 0; s < NSTREAMS; s++) {
		struct gen_cpu c;

		if (ASSERT_TRUE(read_cpu(sk[s], cpu, &c), "read a stream's state"))
			ASSERT_EQ(c.packets, sent[s], "the stream's frames counted");
	}
	ASSERT_EQ(sent[1], limit[1], "the limited stream sent its limit");
	/* The others at their limits too: nothing is left, and a run sends nothing. */
	ASSERT_OK(gen_prog_set_stream_cpu(sk[0], g[0], cpu, 0, 1), "limit stream 0");
	ASSERT_OK(gen_prog_set_stream_cpu(sk[2], g[2], cpu, 0, 1), "limit stream 2");
	for (n = 0; n < 3; n++) {
		LIBBPF_OPTS(bpf_test_run_opts, r, .data_in = in, .data_size_in = maxlen,
			    .repeat = 1);

		ASSERT_OK(bpf_prog_test_run_opts(bpf_program__fd(run->progs.xdp_gen_streams), &r),
			  "BPF_PROG_RUN");
		ASSERT_EQ(r.retval, n < 2 ? XDP_REDIRECT : XDP_DROP, "the last frames, then none");
	}
out:
	for (s = 0; s < NSTREAMS; s++) {
		xdp_gen_bpf__destroy(sk[s]);
		pkt_gen__destroy(g[s]);
		free(want[s]);
	}
	xdp_gen_bpf__destroy(run);
	free(in);
}

/*
 * One stream (its program copies no template: no other stream writes its
 * pages) whose input frame a stack wrote into (forwarded()): the fixed
 * path (one flow, one size) and the full one, byte for byte as its C writer.
 */
static void stream_forwarded(const char *what, struct pkt_opts *o, int cpu)
{
	struct xdp_gen_bpf *run = NULL, *sk = NULL;
	__u8 in[2048], in0[2048], want[2048], out[2048];
	struct pkt_gen *g = make_gen(o);
	unsigned int n, t, len, bad = 0;

	if (!ASSERT_TRUE(g != NULL, what))
		return;
	run = xdp_gen_bpf__open();
	if (!ASSERT_TRUE(run != NULL, "open the run's object"))
		goto out;
	gen_prog_set_rodata(run, g, 1);
	gen_prog_set_dispatch(run, 1, false);
	bpf_program__set_autoload(run->progs.gen_devmap_xmit, false);
	bpf_program__set_autoload(run->progs.gen_redirect_err, false);
	bpf_program__set_autoload(run->progs.xdp_gen_rtt, false);
	if (!ASSERT_OK(xdp_gen_bpf__load(run), "load the dispatcher") ||
	    !ASSERT_OK(gen_prog_set_target(run), "target") ||
	    !ASSERT_OK(gen_prog_load_stream(run, g, 0, false, 0, &sk), "load the stream") ||
	    !ASSERT_OK(gen_prog_set_stream_cpu(sk, g, cpu, 0, 0), "stream cpu") ||
	    !ASSERT_OK(gen_prog_set_live(run, cpu, 1), "live"))
		goto out;
	gen_prog_input_frame(g, in0);
	pkt_gen_prefill(g, want);
	for (n = 0; n < 20 && !bad; n++) {
		LIBBPF_OPTS(bpf_test_run_opts, r, .data_in = in, .data_size_in = pkt_gen_max_len(g),
			    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);
		__u32 flow = pkt_gen_next_flow(g), seq;
		struct stamp st = {};

		memcpy(in, in0, pkt_gen_max_len(g));
		forwarded(g, in);
		t = pkt_gen_next_size(g);
		seq = g->seq[flow]++;
		pkt_gen_template(g, t, &len);
		bad += !ASSERT_OK(bpf_prog_test_run_opts(
					  bpf_program__fd(run->progs.xdp_gen_streams), &r),
				  "BPF_PROG_RUN") ||
		       !ASSERT_EQ(r.data_size_out, len, "length") ||
		       !ASSERT_EQ(stamp_read(out, len, &test_key, &st), STAMP_DATA, "stamp");
		if (bad)
			break;
		pkt_gen_write_tmpl(g, want, t, flow, seq, stamp_time(st.ticks, now_ns()));
		bad += !frames_equal(out, want, len, n);
	}
	ASSERT_EQ(bad, 0, what);
out:
	xdp_gen_bpf__destroy(sk);
	xdp_gen_bpf__destroy(run);
	pkt_gen__destroy(g);
}

static void test_stream_forwarded(void)
{
	struct pkt_opts o;
	int cpu;

	if (geteuid()) {
		TEST_SKIP("needs root");
		return;
	}
	cpu = pin_self();
	if (!ASSERT_GE(cpu, 0, "pin to a CPU"))
		return;
	pkt_opts_init(&o);
	o.run = 0x600;
	stream_forwarded("one stream, fixed", &o, cpu);
	opts_ranges(&o, "10.0.0.1-10.0.0.4", "10.1.0.1", "1000", "9");
	o.flows = 4;
	o.proto = PKT_TCP;
	o.tcp_flags = PKT_TCP_SYN;
	o.size = 100;
	stream_forwarded("one stream, 4 flows", &o, cpu);
}

/* ---- live frames into a veth pair ---- */

#define LIVE_DEV "xg0"
#define LIVE_PEER "xg1"

static int sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd) == 0 ? 0 : -1;
}

static __u64 sink_packets(struct xdp_sink_bpf *sink)
{
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(sink->maps.stats), c;
	struct sink_stats vals[ncpu];
	__u64 sum = 0;
	__u32 key;

	for (key = 0; key < XDPSG_STATS_SLOTS; key++) {
		if (bpf_map_lookup_elem(fd, &key, vals))
			continue;
		for (c = 0; c < ncpu; c++)
			sum += vals[c].packets;
	}
	return sum;
}

static void xmit_stats_sum(struct xdp_gen_bpf *skel, __u64 out[3])
{
	int ncpu = libbpf_num_possible_cpus(), c;
	__u64 vals[ncpu][3];
	__u32 key = 0;

	out[0] = out[1] = out[2] = 0;
	if (bpf_map__lookup_elem(skel->maps.xmit_stats, &key, sizeof(key), vals, sizeof(vals), 0))
		return;
	for (c = 0; c < ncpu; c++) {
		out[0] += vals[c][0];
		out[1] += vals[c][1];
		out[2] += vals[c][2];
	}
}

static int run_live(int prog_fd, const void *frame, unsigned int len, __u32 repeat)
{
	LIBBPF_OPTS(bpf_test_run_opts, r, .data_in = frame, .data_size_in = len, .repeat = repeat,
		    .batch_size = 64, .flags = BPF_F_TEST_XDP_LIVE_FRAMES);

	return bpf_prog_test_run_opts(prog_fd, &r) ? -errno : 0;
}

/* Printed, not asserted: the rate depends on the machine. 'delivered' is what the peer saw. */
static void live_rates(struct xdp_gen_bpf *skel, struct xdp_sink_bpf *sink, const void *frame,
		       unsigned int len)
{
	const __u32 repeat = 5000000;
	__u64 t0, t1, t2, s0, s1, s2;

	s0 = sink_packets(sink);
	t0 = now_ns();
	if (!ASSERT_OK(run_live(bpf_program__fd(skel->progs.xdp_gen), frame, len, repeat),
		       "live run, stamped"))
		return;
	t1 = now_ns();
	s1 = sink_packets(sink);
	if (!ASSERT_OK(run_live(bpf_program__fd(skel->progs.xdp_gen_bare), frame, len, repeat),
		       "live run, bare"))
		return;
	t2 = now_ns();
	s2 = sink_packets(sink);
	printf("  live frames, %u B, 1 thread: xdp_gen %.2f Mpps (delivered %.1f%%), "
	       "xdp_gen_bare %.2f Mpps (delivered %.1f%%)\n",
	       len, repeat * 1e3 / (double)(t1 - t0), (s1 - s0) * 100.0 / repeat,
	       repeat * 1e3 / (double)(t2 - t1), (s2 - s1) * 100.0 / repeat);
}

/*
 * A veth pair in a namespace of our own, entered with setns (BPF_PROG_RUN
 * redirects by ifindex in the caller's namespace), and a sink program on the
 * peer: without a native XDP program there it has no NAPI and drops.
 */
struct lab {
	char ns[64];
	int self_ns, ns_fd;
	bool made, in_ns;
	__u32 dev, peer;
	struct xdp_sink_bpf *sink;
};

static void lab_down(struct lab *l)
{
	if (l->peer)
		bpf_xdp_detach((int)l->peer, XDP_FLAGS_DRV_MODE, NULL);
	xdp_sink_bpf__destroy(l->sink);
	if (l->in_ns)
		ASSERT_OK(setns(l->self_ns, CLONE_NEWNET), "setns back");
	if (l->self_ns >= 0)
		close(l->self_ns);
	if (l->ns_fd >= 0)
		close(l->ns_fd);
	if (l->made)
		sh("ip netns del %s", l->ns);
}

/* Everything lab_down() undoes is recorded in l as it is made. */
static bool lab_up(struct lab *l, bool pass)
{
	char path[128];

	memset(l, 0, sizeof(*l));
	l->self_ns = l->ns_fd = -1;
	snprintf(l->ns, sizeof(l->ns), "xdpsg-genprog-%d", (int)getpid());
	if (!ASSERT_OK(sh("ip netns add %s", l->ns), "ip netns add"))
		return false;
	l->made = true;
	/* No IPv6 neighbour discovery: the peer must see our frames only. */
	if (!ASSERT_OK(sh("ip netns exec %s sysctl -qw net.ipv6.conf.all.disable_ipv6=1 "
			  "net.ipv6.conf.default.disable_ipv6=1",
			  l->ns),
		       "disable IPv6") ||
	    !ASSERT_OK(sh("ip -n %s link add %s type veth peer name %s", l->ns, LIVE_DEV,
			  LIVE_PEER),
		       "make the veth pair") ||
	    !ASSERT_OK(sh("ip -n %s link set %s up && ip -n %s link set %s up", l->ns, LIVE_DEV,
			  l->ns, LIVE_PEER),
		       "links up"))
		return false;
	snprintf(path, sizeof(path), "/var/run/netns/%s", l->ns);
	l->self_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	l->ns_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (!ASSERT_TRUE(l->self_ns >= 0 && l->ns_fd >= 0, "open netns files") ||
	    !ASSERT_OK(setns(l->ns_fd, CLONE_NEWNET), "setns"))
		return false;
	l->in_ns = true;
	l->dev = if_nametoindex(LIVE_DEV);
	l->peer = if_nametoindex(LIVE_PEER);
	if (!ASSERT_TRUE(l->dev && l->peer, "veth ifindexes"))
		return false;
	l->sink = xdp_sink_bpf__open_and_load();
	if (!ASSERT_TRUE(l->sink != NULL, "load xdp_sink"))
		return false;
	return ASSERT_OK(bpf_xdp_attach((int)l->peer,
					bpf_program__fd(pass ? l->sink->progs.xdp_sink_pass :
							       l->sink->progs.xdp_sink_drop),
					XDP_FLAGS_DRV_MODE, NULL),
			 "attach xdp_sink to the peer");
}

static void test_live_frames(void)
{
	const __u32 repeat = 10000;
	struct bpf_link *tp[2] = {};
	struct xdp_gen_bpf *gen = NULL;
	struct pkt_gen *g = NULL;
	struct pkt_opts o;
	struct gen_cpu c;
	__u8 frame[128];
	struct lab l = { .self_ns = -1, .ns_fd = -1 };
	__u64 xs[3];
	int cpu;

	if (geteuid()) {
		TEST_SKIP("needs root");
		return;
	}
	cpu = pin_self();
	if (!ASSERT_GE(cpu, 0, "pin to a CPU") || !lab_up(&l, false))
		goto out;
	pkt_opts_init(&o);
	o.run = 99;
	g = make_gen(&o);
	if (!ASSERT_TRUE(g != NULL, "pkt_gen"))
		goto out;
	gen_prog_input_frame(g, frame);
	gen = load_gen(g, l.dev, cpu, true);
	if (!gen)
		goto out;
	/* Raw tracepoints attach by name: no tracefs needed. */
	tp[0] = bpf_program__attach(gen->progs.gen_devmap_xmit);
	tp[1] = bpf_program__attach(gen->progs.gen_redirect_err);
	ASSERT_TRUE(tp[0] && tp[1], "attach the raw tracepoints");

	ASSERT_OK(run_live(bpf_program__fd(gen->progs.xdp_gen), frame, pkt_gen_max_len(g), repeat),
		  "live run");
	ASSERT_EQ(sink_packets(l.sink), repeat, "the peer received every frame");
	if (ASSERT_TRUE(read_cpu(gen, cpu, &c), "read cpu state")) {
		ASSERT_EQ(c.packets, repeat, "gen_cpu.packets");
		ASSERT_EQ(c.bytes, (__u64)repeat * 60, "gen_cpu.bytes");
		ASSERT_EQ(c.redirect_err, 0, "gen_cpu.redirect_err");
	}
	if (tp[0] && tp[1]) {
		xmit_stats_sum(gen, xs);
		ASSERT_EQ(xs[0], repeat, "xdp_devmap_xmit: sent");
		ASSERT_EQ(xs[1], 0, "xdp_devmap_xmit: drops");
		ASSERT_EQ(xs[2], 0, "xdp_redirect_err events");
	}
	live_rates(gen, l.sink, frame, pkt_gen_max_len(g));
out:
	bpf_link__destroy(tp[0]);
	bpf_link__destroy(tp[1]);
	xdp_gen_bpf__destroy(gen);
	pkt_gen__destroy(g);
	lab_down(&l);
}

/*
 * Live pages keep the previous packet's bytes: capture what the peer
 * receives (XDP_PASS, then a packet socket) and check every frame against
 * the user-space generator, across IMIX sizes and flows.
 */
static void live_content(const char *what, const struct pkt_opts *o, __u32 repeat)
{
	struct xdp_gen_bpf *gen = NULL;
	int cpu, fd = -1, rcvbuf = 64 << 20;
	__u8 *frame = NULL, *want = NULL, got[2048];
	struct pkt_gen *g = NULL;
	unsigned int n = 0, len;
	__u32 group_ts = 0;
	struct gen_cpu c;
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	struct lab l = { .self_ns = -1, .ns_fd = -1 };
	ssize_t r;

	cpu = pin_self();
	if (!ASSERT_GE(cpu, 0, "pin to a CPU") || !lab_up(&l, true))
		goto out;
	g = make_gen(o);
	if (!ASSERT_TRUE(g != NULL, what))
		goto out;
	frame = malloc(pkt_gen_max_len(g));
	want = malloc(pkt_gen_max_len(g));
	if (!ASSERT_TRUE(frame && want, "allocate frames"))
		goto out;
	gen_prog_input_frame(g, frame);
	pkt_gen_prefill(g, want);
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	sll.sll_ifindex = (int)l.peer;
	if (!ASSERT_GE(fd, 0, "packet socket") ||
	    !ASSERT_OK(setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)),
		       "SO_RCVBUFFORCE") ||
	    !ASSERT_OK(bind(fd, (struct sockaddr *)&sll, sizeof(sll)), "bind to the peer"))
		goto out;
	gen = load_gen(g, l.dev, cpu, false);
	if (!gen)
		goto out;
	if (!ASSERT_OK(run_live(bpf_program__fd(gen->progs.xdp_gen), frame, pkt_gen_max_len(g),
				repeat),
		       "live run"))
		goto out;

	while ((r = recv(fd, got, sizeof(got), MSG_DONTWAIT)) > 0) {
		__u32 flow = pkt_gen_next_flow(g);
		unsigned int t = pkt_gen_next_size(g);
		__u32 seq = g->seq[flow]++;
		struct stamp st = {};

		pkt_gen_template(g, t, &len);
		if (!ASSERT_EQ(r, len, "captured frame length") ||
		    !ASSERT_EQ(stamp_read(got, len, &test_key, &st), STAMP_DATA, "stamp found"))
			break;
		/*
		 * The clock is read for frame 0 and every clock_every frames
		 * after: the frames of one reading share its tick, and the
		 * next reading comes at least clock_every frames later, in
		 * order. Two readings may share a 128 ns tick (clock_every 1:
		 * frames some 100 ns apart), so that they were each read is
		 * the program's count of its readings, below.
		 */
		if (n % clock_every && !ASSERT_EQ(st.ticks, group_ts, "one reading, one tick"))
			break;
		if (n && !(n % clock_every) &&
		    !ASSERT_TRUE(((st.ticks - group_ts) & XDPSG_STAMP_TS_MASK) <
						 XDPSG_STAMP_TS_MASK / 2 &&
					 (clock_every == 1 || st.ticks != group_ts),
				 "a later reading, a later tick (64 frames take more than 128 ns)"))
			break;
		group_ts = st.ticks;
		pkt_gen_write_tmpl(g, want, t, flow, seq, stamp_time(st.ticks, now_ns()));
		if (!frames_equal(got, want, len, n) ||
		    !ASSERT_EQ(pkt_verify_checksums(got, len), PKT_CSUM_OK, "checksums"))
			break;
		n++;
	}
	ASSERT_EQ(n, repeat, "frames captured and right");
	if (ASSERT_TRUE(read_cpu(gen, cpu, &c), "read cpu state"))
		ASSERT_EQ_U64(c.clock_reads, (repeat + clock_every - 1) / clock_every,
			      "a clock reading per clock_every frames, no fewer, no more");
out:
	if (fd >= 0)
		close(fd);
	xdp_gen_bpf__destroy(gen);
	pkt_gen__destroy(g);
	free(frame);
	free(want);
	lab_down(&l);
}

static void test_live_content(void)
{
	struct pkt_imix imix;
	char err[256];
	struct pkt_opts o;

	if (geteuid()) {
		TEST_SKIP("needs root");
		return;
	}
	pkt_opts_init(&o);
	opts_ranges(&o, "10.0.0.1-10.0.0.3", "10.0.1.255-10.0.2.1", "1000-1009", "9");
	ASSERT_OK(pkt_text_imix("60:7,576:4,1500:1", &imix, err, sizeof(err)), "parse imix");
	o.imix = &imix;
	o.flows = 90;
	o.run = 5;
	live_content("v4 90 flows imix", &o, 3000);
	opts_ranges(&o, "fd00::1-fd00::3", "fd00::ffff:fffe-fd00::1:0:1", "1000-1009", "9");
	ASSERT_OK(pkt_text_imix("80:7,576:4,1500:1", &imix, err, sizeof(err)), "parse imix");
	o.random = true;
	o.seed = 11;
	live_content("v6 90 flows imix random", &o, 3000);

	/* One flow, one size: the fixed frame, stamped with a clock read per 64 frames. */
	pkt_opts_init(&o);
	o.run = 6;
	clock_every = 64;
	live_content("v4 fixed frame, clock per 64", &o, 3000);
	opts_ranges(&o, "fd00::1", "fd00::2", "1000", "9");
	o.size = 200;
	live_content("v6 fixed frame 200 B, clock per 64", &o, 3000);
	clock_every = 1;
}

/*
 * Marks through xdp_gen_mark (gen_prog_send_marks()), live frames into a
 * veth peer: each one the peer receives is the frame given, byte for byte,
 * whatever its length and whatever the page held before (a batch of two
 * kinds, then a smaller batch into the same CPU's slots), in order, and
 * the program counts what it redirected; a batch too large is refused.
 */
static void test_live_marks(void)
{
	struct xdp_gen_bpf *gen = NULL;
	struct pkt_gen *g[2] = { NULL };
	struct lab l = { .self_ns = -1, .ns_fd = -1 };
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	static __u8 buf[300][512];
	void *frames[300];
	__u32 lens[300];
	int cpu, fd = -1, rcvbuf = 16 << 20;
	unsigned int i, n, round, got;
	struct pkt_opts o;
	__u8 rx[1024];
	char err[256];
	ssize_t r;

	if (geteuid()) {
		TEST_SKIP("needs root");
		return;
	}
	cpu = pin_self();
	if (!ASSERT_GE(cpu, 0, "pin to a CPU") || !lab_up(&l, true))
		goto out;
	pkt_opts_init(&o);
	o.flows = 40;
	o.src_port = (struct pkt_port_range){ 1000, 1039 };
	g[0] = make_gen(&o);
	o.proto = PKT_TCP;
	o.encap = PKT_ENCAP_VXLAN;
	o.size = 200; /* no VLAN tag: the packet socket would see it stripped */
	ASSERT_OK(pkt_text_ip_range("172.16.0.1", &o.outer_src, err, sizeof(err)), "outer");
	ASSERT_OK(pkt_text_ip_range("172.16.0.2", &o.outer_dst, err, sizeof(err)), "outer");
	g[1] = make_gen(&o);
	if (!ASSERT_TRUE(g[0] && g[1], "two kinds"))
		goto out;
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	sll.sll_ifindex = (int)l.peer;
	if (!ASSERT_GE(fd, 0, "packet socket") ||
	    !ASSERT_OK(setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)),
		       "SO_RCVBUFFORCE") ||
	    !ASSERT_OK(bind(fd, (struct sockaddr *)&sll, sizeof(sll)), "bind to the peer"))
		goto out;
	gen = load_gen(g[0], l.dev, cpu, false);
	if (!gen)
		goto out;
	ASSERT_ERR(gen_prog_send_marks(gen, cpu, 0, frames, lens, 300, 64), -E2BIG,
		   "more than a batch");
	for (round = 0; round < 2; round++) {
		n = round ? 5 : 256;
		for (i = 0; i < n; i++) {
			struct xdpsg_mark mk = { .kind = XDPSG_MARK_START,
						 .flow = (__u16)(i % 40),
						 .repeat = (__u16)round,
						 .nflows = 40 };

			frames[i] = buf[i];
			lens[i] =
				pkt_gen_mark(g[(i / 3 + round) % 2], i % 40, 1000 + i, &mk, buf[i]);
		}
		ASSERT_EQ(gen_prog_send_marks(gen, cpu, round, frames, lens, n, 64), (int)n,
			  "every mark redirected");
		for (got = 0; got < n; got++) {
			r = recv(fd, rx, sizeof(rx), MSG_DONTWAIT);
			if (r < 0)
				break;
			if (!ASSERT_EQ(r, lens[got], "a mark's length") ||
			    !ASSERT_EQ(memcmp(rx, frames[got], lens[got]), 0,
				       "the mark as given, in order"))
				break;
		}
		ASSERT_EQ(got, n, "the peer received every mark");
	}
out:
	if (fd >= 0)
		close(fd);
	xdp_gen_bpf__destroy(gen);
	pkt_gen__destroy(g[0]);
	pkt_gen__destroy(g[1]);
	lab_down(&l);
}

static const struct test_case cases[] = {
	TEST_CASE(v4_one_flow),
	TEST_CASE(v4_flows_imix),
	TEST_CASE(v6),
	TEST_CASE(kinds),
	TEST_CASE(live_frames),
	TEST_CASE(live_content),
	TEST_CASE(paced),
	TEST_CASE(paced_wrap),
	TEST_CASE(paced_burst),
	TEST_CASE(exp_table),
	TEST_CASE(streams),
	TEST_CASE(live_marks),
	TEST_CASE(stream_forwarded),
};

TEST_MAIN("gen_prog", cases)
