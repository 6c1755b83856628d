// SPDX-License-Identifier: GPL-2.0
/*
 * xdp-gen: send traffic into an interface as fast as the machine allows, or at
 * an exact rate, with contents a sink can check (flow, sequence, send time).
 *
 * This file holds the option tables, the command list and main(); each
 * command's mode is a struct gen_mode in its own file (xsk.c, kernel.c,
 * qdisc.c), run by the skeleton both tools share (common/report/run.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cpu.h"
#include "base/json_error.h"
#include "base/log.h"
#include "base/runtime.h"
#include "cli/params.h"
#include "cli/params_cmd.h"
#include "gen.h"
#include "marks.h"
#include "replay.h"
#include "streams.h"

static const struct gen_cfg defaults = {
	.interval = 1000000000ULL,
	.batch = 64,
	/*
	 * A copy-mode kick sends one batch: 256 frames per sendto() beat 64 by
	 * 10% here (xdp-gen xsk vs xdpsock -t went 1.07 -> 1.18-1.25).
	 */
	.xsk_batch = 256,
	.ring_size = 2048,
	.xsk = XSK_CLI_DEFAULTS,
	.queues = { .n = 1, .ids = { 0 } },
};

#define OPT(f) offsetof(struct gen_cfg, f)

static const struct param_def run_opts[] = {
	PARAM_OPT("duration", PARAM_DURATION, OPT(duration), .short_opt = 'd', .metavar = "TIME",
		  .help = "stop after this long", .min = 1),
	PARAM_OPT("count", PARAM_COUNT, OPT(count), .short_opt = 'n', .metavar = "PACKETS",
		  .help = "send exactly this many, over all threads", .min = 1),
	PARAM_OPT("rate", PARAM_RATE, OPT(rate), .short_opt = 'r', .metavar = "PPS",
		  .help = "packets per second over all threads (0: no limit)",
		  .max = 1000000000ULL),
	PARAM_OPT("interval", PARAM_DURATION, OPT(interval), .short_opt = 'i', .metavar = "TIME",
		  .help = "statistics period", .min = 10000000ULL, .max = 3600000000000ULL),
	PARAM_OPT("json", PARAM_FLAG, OPT(json), .short_opt = 'j',
		  .help = "one JSON object per line"),
	PARAM_OPT("quiet", PARAM_FLAG, OPT(quiet), .short_opt = 'q',
		  .help = "print only the final summary"),
	PARAM_OPT("verbose", PARAM_COUNTER, OPT(verbose), .short_opt = 'v',
		  .help = "per-queue detail and frame accounting; twice for libbpf's messages"),
	PARAM_OPT("kernel-stats", PARAM_FLAG, OPT(kernel_stats),
		  .help = "also show the interface's qdisc, link and veth counters"),
	METRICS_CLI_PARAMS(struct gen_cfg, metrics),
	{},
};

/* Shapes the xsk and kernel modes give the stream (user/gen/pace.h, bpf/xdp_gen.bpf.c). */
static const struct param_def shape_opts[] = {
	PARAM_OPT(
		"burst", PARAM_COUNT, OPT(burst), .metavar = "N",
		.help = "send N frames back to back per burst (over all threads), a burst every --burst-gap or N / --rate",
		.min = 1, .max = 1000000),
	PARAM_OPT("burst-gap", PARAM_DURATION, OPT(burst_gap), .metavar = "TIME",
		  .help = "with --burst: from the start of one burst to the start of the next",
		  .min = 1000, .max = 3600000000000ULL),
	PARAM_OPT("poisson", PARAM_FLAG, OPT(poisson),
		  .help = "exponential gaps between frames at the mean --rate (a Poisson stream)"),
	{},
};

static const struct param_enum protos[] = {
	{ .name = "udp", .value = PKT_UDP },
	{ .name = "tcp", .value = PKT_TCP },
	{ .name = "icmp", .value = PKT_ICMP },
	{},
};

static const struct param_enum clocks[] = {
	{ .name = "monotonic", .value = XDPSG_CLOCK_MONOTONIC },
	{ .name = "tai", .value = XDPSG_CLOCK_TAI },
	{ .name = "realtime", .value = XDPSG_CLOCK_REALTIME },
	{},
};

static const struct param_def pkt_opts_table[] = {
	PARAM_OPT(
		"size", PARAM_UINT, OPT(size), .short_opt = 's', .metavar = "BYTES",
		.help = "frame size without FCS (default: the smallest that holds the stamp, 60 for IPv4, 80 for IPv6)",
		.min = /* The real minimum depends on the family and the stamp: pkt_check_size() says it. */
		1,
		.max = PKT_SIZE_MAX),
	PARAM_OPT("imix", PARAM_FLAG, OPT(imix), .help = "mixed sizes, 7:4:1 of 60/576/1500 bytes"),
	PARAM_OPT("imix-sizes", PARAM_STRING, OPT(imix_sizes), .metavar = "SPEC",
		  .help = "mixed sizes as SIZE:WEIGHT,... e.g. 60:7,576:4,1500:1"),
	PARAM_OPT("ipv6", PARAM_FLAG, OPT(ipv6), .short_opt = '6', .help = "IPv6 instead of IPv4"),
	PARAM_OPT("src-mac", PARAM_STRING, OPT(src_mac), .metavar = "MAC",
		  .help = "source MAC (default: the interface's)"),
	PARAM_OPT("dst-mac", PARAM_STRING, OPT(dst_mac), .metavar = "MAC",
		  .help = "destination MAC (default: the neighbour entry for --dst-ip)"),
	PARAM_OPT("src-ip", PARAM_STRING, OPT(src_ip), .metavar = "IP[-IP]",
		  .help = "source address or range (default: the interface's address)"),
	PARAM_OPT("dst-ip", PARAM_STRING, OPT(dst_ip), .metavar = "IP[-IP]",
		  .help = "destination address or range (default: the interface's first neighbour)"),
	PARAM_OPT("src-port", PARAM_STRING, OPT(src_port), .metavar = "PORT[-PORT]",
		  .help = "UDP/TCP source port or range"),
	PARAM_OPT("dst-port", PARAM_STRING, OPT(dst_port), .metavar = "PORT[-PORT]",
		  .help = "UDP/TCP destination port or range"),
	PARAM_OPT("flows", PARAM_UINT, OPT(flows), .metavar = "N",
		  .help = "flows spread over the ranges (default 1 per thread)", .min = 1,
		  .max = PKT_FLOWS_MAX),
	PARAM_OPT("random", PARAM_FLAG, OPT(random),
		  .help = "pick flows at random instead of in turn"),
	PARAM_OPT("no-stamp", PARAM_FLAG, OPT(no_stamp),
		  .help = "no flow/sequence/time stamp in the payload"),
	PARAM_OPT(
		"no-end-mark", PARAM_FLAG, OPT(no_end_mark),
		.help = "send no end marks after the run's last frame (start marks still go; see MARKS)"),
	PARAM_OPT(
		"stamp-key", PARAM_STRING, OPT(stamp_key), .metavar = "FILE",
		.help = "sign the stamps with the key in FILE, the one the sink checks with (default: the file "
			"$XDPSG_STAMP_KEY names, else the public key, which anyone can forge)"),
	PARAM_OPT(
		"clock", PARAM_ENUM, OPT(clock), .metavar = "monotonic|tai|realtime",
		.help = "the clock of the stamps' send times: monotonic (default) works where the sink runs on this kernel; "
			"tai or realtime across hosts whose clocks are synchronised (chrony, ptp4l and phc2sys)",
		.enums = clocks),
	PARAM_OPT(
		"proto", PARAM_ENUM, OPT(proto), .metavar = "udp|tcp|icmp",
		.help = "L4 protocol; icmp is an echo request (ICMPv6 with --ipv6), its id the flow's source port",
		.enums = protos),
	PARAM_OPT("tcp-flags", PARAM_STRING, OPT(tcp_flags), .metavar = "LETTERS",
		  .help = "with --proto tcp: flags from S A P R F U E C, e.g. SA or PA (default S)"),
	PARAM_OPT("vlan", PARAM_STRINGS, OPT(vlan), .metavar = "ID",
		  .help = "VLAN tag 0-4095; twice for QinQ (802.1ad outer, then 802.1Q)"),
	PARAM_OPT("vlan-prio", PARAM_UINT, OPT(vlan_prio), .metavar = "N",
		  .help = "priority (PCP) of the VLAN tags", .max = 7),
	PARAM_OPT(
		"encap", PARAM_STRING, OPT(encap), .metavar = "TUNNEL",
		.help = "wrap each packet in a tunnel: vxlan[:VNI], geneve[:VNI] (VNI 0-16777215, default 0), gre or ipip"),
	PARAM_OPT("outer-src-ip", PARAM_STRING, OPT(outer_src_ip), .metavar = "IP",
		  .help = "with --encap: the tunnel's source (default: the interface's address)"),
	PARAM_OPT(
		"outer-dst-ip", PARAM_STRING, OPT(outer_dst_ip), .metavar = "IP",
		.help = "with --encap: the tunnel's destination (default: the interface's first neighbour)"),
	{},
};

/* Several streams (streams.c): every mode interleaves them in each thread. */
static const struct param_def stream_opts[] = {
	PARAM_OPT(
		"stream", PARAM_STRINGS, OPT(stream), .metavar = "SPEC",
		.help = "one of several streams: KEY=VALUE,... with KEY one of proto, tcp-flags, vlan (ID or OUTER/INNER), vlan-prio, encap, size, imix, imix-sizes, flows, src-ip, dst-ip, src-port, dst-port, ipv6, rate, count, name; the other options are every stream's defaults (man xdp-gen, section STREAMS)"),
	PARAM_OPT(
		"streams", PARAM_STRING, OPT(streams_file), .metavar = "FILE",
		.help = "the streams as a JSON array of objects with --stream's keys (man xdp-gen, section STREAMS)"),
	{},
};

static const struct param_def xsk_opts[] = {
	PARAM_OPT("queues", PARAM_LIST, OPT(queues), .metavar = "all|LIST",
		  .help = "transmit queues, one thread each", .max = 1023),
	PARAM_OPT("cpus", PARAM_LIST, OPT(cpus), .metavar = "LIST",
		  .help = "CPU of each queue's thread (default: queue i on CPU i mod CPUs)",
		  .max = 4095),
	PARAM_OPT("batch", PARAM_UINT, OPT(xsk_batch), .short_opt = 'b', .metavar = "N",
		  .help = "frames per ring operation and kick", .min = 1, .max = 2048),
	PARAM_OPT("ring-size", PARAM_UINT, OPT(ring_size), .metavar = "N",
		  .help = "tx and completion ring entries", .min = 64, .max = 32768),
	XSK_CLI_PARAMS(struct gen_cfg, xsk),
	PARAM_OPT(
		"tx-budget", PARAM_UINT, OPT(tx_budget), .metavar = "N",
		.help = "copy-mode frames per kick, Linux 6.17+: 32 (the kernel's own) up to --ring-size (default: the batch size)",
		.min = 1, .max = 65536),
	PARAM_OPT(
		"pcap", PARAM_STRING, OPT(pcap), .metavar = "FILE",
		.help = "replay the frames of this Ethernet capture (pcap or pcapng), in file order, looping"),
	PARAM_OPT(
		"pcap-timing", PARAM_STRING, OPT(pcap_timing), .metavar = "fast|original[:X]",
		.help = "with --pcap: frames back to back (fast), or the file's gaps, X times as fast"),
	PARAM_OPT(
		"stamp", PARAM_FLAG, OPT(stamp),
		.help = "with --pcap: stamp the IPv4/IPv6 UDP frames with room (others go byte for byte)"),
	PARAM_OPT(
		"rtt", PARAM_FLAG, OPT(rtt),
		.help = "receive the frames a reflector returns (xdp-sink tx --reflect) and report the round trip"),
	{},
};

static const struct param_def kernel_opts[] = {
	PARAM_OPT("threads", PARAM_UINT, OPT(threads), .short_opt = 't', .metavar = "N",
		  .help = "threads, one per CPU (default 1)", .min = 1, .max = 1024),
	PARAM_OPT("cpus", PARAM_LIST, OPT(cpus), .metavar = "LIST",
		  .help = "CPU of each thread, all different (default: thread i on CPU i)",
		  .max = 4095),
	PARAM_OPT("batch", PARAM_UINT, OPT(batch), .short_opt = 'b', .metavar = "N",
		  .help = "frames the kernel builds and flushes at a time (BPF_PROG_RUN batch_size)",
		  .min = 1, .max = 256),
	PARAM_OPT("fix-peer", PARAM_FLAG, OPT(fix_peer),
		  .help = "turn GRO on at a veth peer that runs no NAPI (restored at exit)"),
	PARAM_OPT(
		"own-counts", PARAM_FLAG, OPT(own_counts),
		.help = "count this run's transmitted and failed frames from its own xdp_devmap_xmit events, "
			"exact beside other senders on the device (about 3% of the rate)"),
	PARAM_OPT(
		"pcap", PARAM_STRING, OPT(pcap), .metavar = "FILE",
		.help = "refused: live frames cannot replay a capture well (see the man page); use xsk --pcap"),
	{},
};

static const struct param_cmd cmd_kernel = {
	.name = "kernel",
	.summary = "in-kernel generation with BPF_PROG_RUN live frames: the highest rate",
	.description =
		"Each thread runs xdp_gen.bpf.c on its own CPU through BPF_PROG_RUN with\n"
		"BPF_F_TEST_XDP_LIVE_FRAMES; the program rewrites flow, sequence, time and\n"
		"checksums per frame and redirects it out of IFNAME. The kernel can still drop\n"
		"a frame after the program redirected it (on veth: the peer runs no NAPI, or\n"
		"its ring is full); the summary shows sent = transmitted + failed from the\n"
		"device's own counters (another sender's frames there are said, not counted\n"
		"apart, unless --own-counts). Bypasses the qdisc layer. Needs Linux 5.18+.",
	.positional = "IFNAME",
	.tables = { run_opts, shape_opts, pkt_opts_table, stream_opts, kernel_opts },
	.ops = &gen_mode_kernel,
};

static const struct param_def qdisc_opts[] = {
	PARAM_OPT("threads", PARAM_UINT, OPT(threads), .short_opt = 't', .metavar = "N",
		  .help = "sending threads, one socket each (default 1)", .min = 1, .max = 1024),
	PARAM_OPT("cpus", PARAM_LIST, OPT(cpus), .metavar = "LIST",
		  .help = "CPU of each thread (default: thread i on CPU i mod CPUs)", .max = 4095),
	PARAM_OPT("batch", PARAM_UINT, OPT(batch), .short_opt = 'b', .metavar = "N",
		  .help = "frames per sendmmsg call", .min = 1, .max = 1024),
	PARAM_OPT(
		"sndbuf", PARAM_BYTES, OPT(sndbuf), .metavar = "BYTES",
		.help = "socket send buffer, forced past the sysctl limit (SO_SNDBUFFORCE); large lets the qdisc overflow",
		.min = 4096, .max = 1ULL << 31),
	{},
};

static const struct param_cmd cmd_qdisc = {
	.name = "qdisc",
	.summary = "AF_PACKET through the qdisc layer: the path that backs up and overflows",
	.description =
		"Frames go through the interface's qdisc like any socket's (no qdisc bypass),\n"
		"batched with sendmmsg, one socket per thread. A frame the qdisc refuses\n"
		"(ENOBUFS: it was full and dropped it) is counted as refused and not sent\n"
		"again; accepted + refused = attempted. With the default send buffer the\n"
		"threads block instead of overflowing the qdisc: give --sndbuf 64M to let it\n"
		"overflow. A qdisc that holds packets but sends none for a second is reported\n"
		"as a stall and ends the run.",
	.positional = "IFNAME",
	.tables = { run_opts, pkt_opts_table, stream_opts, qdisc_opts, NULL },
	.ops = &gen_mode_qdisc,
};

static const struct param_cmd cmd_xsk = {
	.name = "xsk",
	.summary = "AF_XDP transmit: one socket, UMEM and frame allocator per queue",
	.description =
		"Each queue gets its own thread pinned to a CPU, with its UMEM on that CPU's\n"
		"NUMA node. Frames are written from a template and recycled through the\n"
		"completion ring; the kernel is kicked only when it asks (need_wakeup).\n"
		"AF_XDP transmit bypasses the qdisc layer.",
	.positional = "IFNAME",
	.tables = { run_opts, shape_opts, pkt_opts_table, stream_opts, xsk_opts },
	.ops = &gen_mode_xsk,
};

static const struct param_cmd *const cmds[] = { &cmd_xsk, &cmd_kernel, &cmd_qdisc, NULL };

bool gen_worker_ready(struct gen_thread *t, int err)
{
	run_worker_ready(&t->g->run, &t->w, err);
	if (err || !run_worker_wait_go(&t->g->run))
		return false;
	/* The rate's clock starts with the run, the same for every thread. */
	t->pace.t0 = t->g->run.base->t_ns;
	return !t->pace.idle;
}

/* --burst, --burst-gap and --poisson: what they need and exclude; the gap between bursts. */
static int shape_check(const struct gen_cfg *cfg, __u64 *gap_ns)
{
	const char *why = NULL;

	*gap_ns = cfg->burst_gap;
	if (cfg->burst_gap && !cfg->burst)
		why = "--burst-gap needs --burst N";
	else if (cfg->burst && cfg->poisson)
		why = "--burst and --poisson are two shapes; pick one";
	else if (cfg->burst && !cfg->burst_gap && !cfg->rate)
		why = "--burst needs --burst-gap TIME or --rate PPS (a burst every N / rate)";
	else if (cfg->burst && cfg->burst_gap && cfg->rate)
		why = "--burst-gap and --rate both set the bursts' pace; give one";
	else if (cfg->poisson && !cfg->rate)
		why = "--poisson needs --rate PPS, the mean rate";
	else if ((cfg->burst || cfg->poisson) && cfg->pcap)
		why = "--pcap keeps the file's timing; drop --burst/--poisson";
	if (why) {
		fprintf(stderr, "xdp-gen: %s\n", why);
		return -EINVAL;
	}
	if (cfg->burst && !cfg->burst_gap)
		*gap_ns = (__u64)((unsigned __int128)cfg->burst * 1000000000ULL / cfg->rate);
	return 0;
}

/* CPUs and shares of --count and --rate, once the threads and their queues are known. */
static int place_threads(struct gen *g)
{
	const struct gen_cfg *cfg = g->cfg;
	unsigned int i, ncpu = (unsigned int)cpu_online_count();
	const char *unit = g->mode->unit;
	struct pace_shape_opts so = { .burst = cfg->burst,
				      .poisson = cfg->poisson,
				      .seed = now_ns() };

	if (shape_check(cfg, &so.gap_ns))
		return -EINVAL;

	if (!cfg->cpus.all && cfg->cpus.n && cfg->cpus.n != g->nthreads) {
		fprintf(stderr, "xdp-gen: --cpus names %u CPUs for %u %ss; give one CPU per %s\n",
			cfg->cpus.n, g->nthreads, unit, unit);
		return -EINVAL;
	}
	for (i = 0; i < g->nthreads; i++) {
		struct gen_thread *t = &g->th[i];

		t->g = g;
		t->idx = i;
		t->cpu = (cfg->cpus.n && !cfg->cpus.all) ? (int)cfg->cpus.ids[i] : (int)(i % ncpu);
		if (t->cpu >= (int)ncpu) {
			fprintf(stderr, "xdp-gen: CPU %d is not online (CPUs 0-%u); fix --cpus\n",
				t->cpu, ncpu - 1);
			return -EINVAL;
		}
		/* Each thread owns an exact share of --count and --rate. */
		pace_share(&t->pace, cfg->count, cfg->rate, i, g->nthreads);
		pace_shape(&t->pace, &so, i, g->nthreads);
	}
	return 0;
}

static int alloc_threads(struct gen *g, unsigned int n)
{
	g->nthreads = n ? n : 1;
	g->th = calloc(g->nthreads, sizeof(*g->th));
	return g->th ? 0 : -ENOMEM;
}

int gen_plan_threads(struct gen *g, unsigned int maxq)
{
	unsigned int i;
	int err;

	(void)maxq;
	err = alloc_threads(g, g->cfg->threads ? (unsigned int)g->cfg->threads : 1);
	for (i = 0; !err && i < g->nthreads; i++)
		g->th[i].queue = i;
	return err ? err : place_threads(g);
}

int gen_plan_queues(struct gen *g, unsigned int maxq)
{
	const struct gen_cfg *cfg = g->cfg;
	unsigned int i;
	int err;

	err = alloc_threads(g, cfg->queues.all ? maxq : cfg->queues.n);
	for (i = 0; !err && i < g->nthreads; i++) {
		g->th[i].queue = cfg->queues.all ? i : cfg->queues.ids[i];
		if (g->th[i].queue >= maxq) {
			fprintf(stderr, "xdp-gen: %s has no queue %u (it has %u); pick from 0-%u\n",
				g->ifc.name, g->th[i].queue, maxq, maxq - 1);
			return -EINVAL;
		}
	}
	return err ? err : place_threads(g);
}

/*
 * The stamps' key and clock, once the privileges are known to be there (a
 * key file root alone may read would otherwise hide the missing ones).
 */
static int stamp_setup(struct gen *g)
{
	char err[256];
	int ret;

	if (stamp_key_resolve(&g->key, g->cfg->stamp_key, err, sizeof(err))) {
		fprintf(stderr, "xdp-gen: %s\n", err);
		return -EINVAL;
	}
	ret = clock_info_read((enum xdpsg_clock)g->cfg->clock, &g->clock);
	if (ret)
		fprintf(stderr, "xdp-gen: cannot read the clock's state: %s\n", strerror(-ret));
	return ret;
}

/* Everything that can be refused is refused before a socket exists. */
static int preflight(struct gen *g)
{
	unsigned int maxq;
	int err;

	err = iface_preflight(g->ifc.name, "gen", &g->ifc);
	if (!err)
		err = stamp_setup(g);
	if (err)
		return err;
	maxq = g->ifc.tx_queues < g->ifc.rx_queues ? g->ifc.tx_queues : g->ifc.rx_queues;
	err = g->mode->plan(g, maxq ? maxq : 1);
	if (!err)
		err = gen_build_packets(g);
	/* Before the mode's checks: --fix-peer may change the peer, a bad option must not. */
	if (!err)
		err = metrics__create(&(struct metrics_opts){ .tool = "xdp-gen",
							      .mode = g->mode_name,
							      .ifname = g->ifc.name,
							      .cli = &g->cfg->metrics },
				      &g->metrics);
	if (!err && g->mode->preflight)
		err = g->mode->preflight(g);
	return err;
}

/* The kernel's own counters: shown with --kernel-stats, watched by a mode that needs them. */
static int open_kstats(struct gen *g)
{
	if (!g->cfg->kernel_stats && !g->mode->needs_kstats)
		return 0;
	if (kstats_reader__open(g->ifc.name, &g->kr)) {
		pr_warn("cannot read the kernel counters of %s\n", g->ifc.name);
		return -EIO;
	}
	return 0;
}

static const char *check(void *ctx, struct run_snap *cur, const struct run_snap *base)
{
	struct gen *g = ctx;

	(void)base;
	if (run_all_finished(&g->run))
		return g->cfg->count ? "count" : "error";
	return g->mode->check ? g->mode->check(g, (struct gen_snapshot *)cur) : NULL;
}

/* SIGUSR1 only interrupts a worker's blocking call (no SA_RESTART). */
__thread volatile sig_atomic_t gen_woken;

static void on_wake(int sig)
{
	(void)sig;
	gen_woken = 1;
}

/* A worker sending its marks blocks nowhere for long, and its marks must all go. */
static void wake(void *ctx, unsigned int i)
{
	struct gen *g = ctx;

	if (!__atomic_load_n(&g->th[i].marking, __ATOMIC_ACQUIRE))
		pthread_kill(g->th[i].w.tid, SIGUSR1);
}

static int verdict(void *ctx, const char *stop_reason)
{
	struct gen *g = ctx;

	return g->mode->verdict ? g->mode->verdict(g, stop_reason) : 0;
}

/* Static: the run keeps the pointer until cleanup(), after run() has returned. */
#define GEN_RUN_OPS(wake_fn)                                                                    \
	{                                                                                       \
		.sample = gen_sample, .copy = gen_copy, .started = gen_started, .check = check, \
		.json = gen_json, .text = gen_text, .wake = (wake_fn), .metrics = gen_metrics,  \
		.verdict = verdict,                                                             \
	}
static const struct run_ops gen_run_ops = GEN_RUN_OPS(NULL);
static const struct run_ops gen_run_ops_wake = GEN_RUN_OPS(wake);

static int run(struct gen *g)
{
	struct run_opts o = {
		.tool = "xdp-gen",
		.mode = g->mode_name,
		.ifname = g->ifc.name,
		.ifc = &g->ifc,
		.duration_ns = g->cfg->duration,
		.interval_ns = g->cfg->interval,
		.tick_ns = 20000000ULL,
		.json = g->cfg->json,
		.quiet = g->cfg->quiet,
		.metrics = g->metrics,
	};
	int err;

	run_init(&g->run, g->mode->wake_by_signal ? &gen_run_ops_wake : &gen_run_ops, g, &o,
		 &g->base.rs, &g->prev.rs, &g->cur.rs);
	err = open_kstats(g);
	if (!err)
		err = gen_snapshots_alloc(g);
	/* A mode's shared state (a loaded program), then threads that make their sockets. */
	if (!err && g->mode->setup)
		err = g->mode->setup(g);
	if (!err)
		err = run_start_workers(&g->run, g->th, g->nthreads, sizeof(*g->th),
					offsetof(struct gen_thread, w), g->mode->worker);
	return err ? err : run_loop(&g->run);
}

static void cleanup(struct gen *g)
{
	unsigned int i;

	run_join_workers(&g->run);
	if (g->mode && g->mode->cleanup)
		g->mode->cleanup(g);
	/* The streams' generators (t->pg is one of them) go with their streams. */
	gen_streams_free(g);
	for (i = 0; g->th && i < g->nthreads; i++) {
		pkt_gen__destroy(g->th[i].pg);
		gen_marks_free(&g->th[i]);
	}
	free(g->th);
	gen_replay_free(g);
	kstats_reader__close(g->kr);
	metrics__destroy(g->metrics);
	gen_snapshots_free(g);
}

static int gen_main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_wake };
	struct gen_cfg cfg = defaults;
	const struct param_cmd *cmd;
	struct gen g = { .cfg = &cfg };
	const char *ifname;
	int err;

	log_set_prog("xdp-gen");
	/* Hidden, like --man-options: every counter, for the docs test and scripts. */
	if (argc == 2 && !strcmp(argv[1], "--counters"))
		return gen_list_counters(cmds);
	err = params_cmdline(
		"xdp-gen",
		"Send packets with checkable contents, as fast as possible or at a rate.", cmds,
		&defaults, argc, argv, &cfg, &cmd, &ifname);
	if (err >= 0)
		return err;
	log_setup(cfg.quiet, cfg.verbose);
	g.mode = cmd->ops;
	g.mode_name = cmd->name;
	snprintf(g.ifc.name, sizeof(g.ifc.name), "%s", ifname);

	/* Signals first: preflight may change a peer (--fix-peer) that cleanup restores. */
	if (runtime_install_signals()) {
		cleanup(&g);
		return 1;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	err = gen_streams_parse(&g, &cfg, cmd);
	if (!err)
		err = preflight(&g);
	if (err) {
		cleanup(&g);
		return 2;
	}
	err = run(&g);
	cleanup(&g);
	return run_exit_code(err, cfg.xsk.huge_pages);
}

int main(int argc, char **argv)
{
	json_error_arm("xdp-gen", argc, argv);
	return json_error_finish(gen_main(argc, argv));
}
