// SPDX-License-Identifier: GPL-2.0
/*
 * xdp-sink: absorb or forward everything that arrives on an interface and
 * report exactly what happened, from the kernel's own counters. This file
 * holds the options and the commands; each command's mode is a struct
 * sink_mode_ops (xdp.c, xsk.c), run by sink.c through the run skeleton.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/json_error.h"
#include "base/log.h"
#include "base/runtime.h"
#include "cli/params.h"
#include "cli/params_cmd.h"
#include "kern/xdp_attach.h"
#include "measure/episodes.h"
#include "report/run.h"
#include "sink.h"

static const struct sink_cfg defaults = {
	.interval = 1000000000ULL,
	.xdp_mode = XDPSG_MODE_NATIVE,
	.queues = { .all = true }, /* a socket on every queue: nothing arrives unchecked */
	.batch = 64,
	/*
	 * An AF_XDP rx ring has no backpressure: whatever arrives while the
	 * thread is away (a nap, or a busy machine scheduling something else)
	 * must fit. 8192 entries are 20 ms at 400 kpps, 5 ms at 1.6 Mpps (a
	 * quarter of a queue's capacity here), for a 64 MiB UMEM per queue.
	 */
	.ring_size = 8192,
	.qsize = 2048, /* xdp-bench redirect-cpu's */
	.episodes = EPISODES_KEEP,
	/* frame_size 0: xsk_plan() picks 2048 bytes when the interface's MTU fits, else 4096 */
	.xsk = { .frame_size = 0 },
};

static const struct param_enum xdp_modes[] = {
	{ .name = "native", .value = XDPSG_MODE_NATIVE },
	{ .name = "skb", .value = XDPSG_MODE_SKB },
	{},
};

static const struct param_enum capture_whats[] = {
	{ .name = "all" },
	{ .name = "anomalies", .value = 1 },
	{},
};

/* 0 is "from the name"; the others are enum pcapio_format + 1. */
static const struct param_enum capture_formats[] = {
	{ .name = "pcap", .value = 1 },
	{ .name = "pcapng", .value = 2 },
	{},
};

static const struct param_enum packet_ops[] = {
	{ .name = "none", .value = XDPSG_OP_NONE },
	{ .name = "read-data", .value = XDPSG_OP_READ_DATA },
	{ .name = "swap-macs", .value = XDPSG_OP_SWAP_MACS },
	{},
};

static const struct param_enum remote_actions[] = {
	{ .name = "drop" },
	{ .name = "pass", .value = 1 },
	{},
};

#define OPT(f) offsetof(struct sink_cfg, f)

/* Every command's, the drops command (no interface) too. */
static const struct param_enum drop_causes_where[] = {
	{ .name = "host", .value = SINK_CAUSES_HOST },
	{ .name = "local", .value = SINK_CAUSES_LOCAL },
	{},
};

static const struct param_def run_opts[] = {
	PARAM_OPT("duration", PARAM_DURATION, OPT(duration), .short_opt = 'd', .metavar = "TIME",
		  .help = "stop after this long", .min = 1),
	PARAM_OPT("interval", PARAM_DURATION, OPT(interval), .short_opt = 'i', .metavar = "TIME",
		  .help = "statistics period", .min = 10000000ULL, .max = 3600000000000ULL),
	PARAM_OPT("json", PARAM_FLAG, OPT(json), .short_opt = 'j',
		  .help = "one JSON object per line"),
	PARAM_OPT("quiet", PARAM_FLAG, OPT(quiet), .short_opt = 'q',
		  .help = "print only the final summary"),
	PARAM_OPT(
		"verbose", PARAM_COUNTER, OPT(verbose), .short_opt = 'v',
		.help = "per-queue and per-CPU detail (drops: unstamped drops too); twice for libbpf's messages"),
	METRICS_CLI_PARAMS(struct sink_cfg, metrics),
	{},
};

/* The commands on an interface. */
static const struct param_def common_opts[] = {
	PARAM_OPT("count", PARAM_COUNT, OPT(count), .short_opt = 'n', .metavar = "PACKETS",
		  .help = "stop once this many have arrived", .min = 1),
	PARAM_OPT("xdp-mode", PARAM_ENUM, OPT(xdp_mode), .short_opt = 'm', .metavar = "MODE",
		  .help = "XDP attach mode: native or skb", .enums = xdp_modes),
	PARAM_OPT(
		"force", PARAM_FLAG, OPT(force),
		.help = "replace an XDP program already on the interface (another process's BPF link: detach it)"),
	PARAM_OPT("pin", PARAM_FLAG, OPT(pin), .help = "pin maps under " SINK_PIN_ROOT "/IFNAME/"),
	PARAM_OPT("keep-pins", PARAM_FLAG, OPT(keep_pins),
		  .help = "leave the pins in place at exit"),
	PARAM_OPT(
		"parse", PARAM_FLAG, OPT(parse),
		.help = "parse each packet (VLAN, IPv6 extension headers, one tunnel, UDP/TCP/ICMP) and count what is found"),
	PARAM_OPT("cost", PARAM_UINT, OPT(cost), .metavar = "NS",
		  .help = "busy work per packet in nanoseconds (slow sink)", .max = 1000000),
	PARAM_OPT("kernel-stats", PARAM_FLAG, OPT(kernel_stats),
		  .help = "also show the interface's link, qdisc and veth counters"),
	{},
};

/* The in-kernel verdicts': what the program does to a frame before its verdict. */
static const struct param_def op_opts[] = {
	PARAM_OPT(
		"packet-op", PARAM_ENUM, OPT(packet_op), .metavar = "none|read-data|swap-macs",
		.help = "before the verdict, read the frame's first bytes or swap its MAC addresses (tx swaps them anyway)",
		.enums = packet_ops),
	{},
};

static const struct param_def redirect_cpu_opts[] = {
	PARAM_OPT("cpu", PARAM_LIST, OPT(remote_cpus), .metavar = "all|LIST",
		  .help = "CPUs to redirect to, round robin (default: all online CPUs)",
		  .max = 4095),
	PARAM_OPT("qsize", PARAM_UINT, OPT(qsize), .metavar = "FRAMES",
		  .help = "each CPU's cpumap queue", .min = 1, .max = 16384),
	PARAM_OPT(
		"remote-action", PARAM_ENUM, OPT(remote_action), .metavar = "drop|pass",
		.help = "what the remote CPU does with each frame: drop it, or hand it to the stack",
		.enums = remote_actions),
	{},
};

static const struct param_cmd cmd_redirect_cpu = {
	.name = "redirect-cpu",
	.summary = "spread every packet over CPUs through a cpumap and drop or pass it there",
	.description =
		"As xdp-bench redirect-cpu: the program sends each frame round robin to a CPU\n"
		"of --cpu through a cpumap; there the cpumap's own program counts it (per CPU)\n"
		"and drops it or hands it to the stack (--remote-action). Frames redirected but\n"
		"never seen on their CPU were dropped when its queue (--qsize) was full:\n"
		"cpumap_unseen.",
	.positional = "IFNAME",
	.tables = { run_opts, common_opts, op_opts, redirect_cpu_opts, NULL },
	.ops = &sink_redirect_cpu_ops,
};

static const struct param_def redirect_opts[] = {
	PARAM_OPT("to", PARAM_IFNAME, OPT(to), .metavar = "IFNAME",
		  .help = "interface to redirect to (required)"),
	{},
};

static const struct param_def xsk_opts[] = {
	PARAM_OPT("queues", PARAM_LIST, OPT(queues), .metavar = "all|LIST",
		  .help = "receive queues, one socket and thread each",
		  .max = XDPSG_MAX_QUEUES - 1),
	PARAM_OPT(
		"cpus", PARAM_LIST, OPT(cpus), .metavar = "LIST",
		.help = "CPU of each queue's thread (default: the highest CPUs, queue 0 on the last)",
		.max = 4095),
	PARAM_OPT("batch", PARAM_UINT, OPT(batch), .short_opt = 'b', .metavar = "N",
		  .help = "descriptors per ring operation", .min = 1, .max = 2048),
	PARAM_OPT("ring-size", PARAM_UINT, OPT(ring_size), .metavar = "N",
		  .help = "rx ring entries; the UMEM has half as many frames, all in the fill ring",
		  .min = 64, .max = 65536),
	XSK_CLI_PARAMS(struct sink_cfg, xsk),
	PARAM_OPT(
		"poll", PARAM_FLAG, OPT(poll),
		.help = "wake on arrival (poll()) even while frames carry the kernel's receive time"),
	PARAM_OPT(
		"time-all", PARAM_FLAG, OPT(time_all),
		.help = "take the kernel's receive time of every frame (default: frames reaching a CPU less than "
			"1.02 us apart, in a burst or above about 1 Mpps, about one in 16, as the clock read "
			"costs as much as the rest of the program)"),
	PARAM_OPT(
		"hw-time", PARAM_FLAG, OPT(hw_time),
		.help = "end the latency at the NIC's receive timestamp where its driver gives one (bpf_xdp_metadata_rx_timestamp; "
			"the program is bound to the device), else the kernel's; only where the NIC's clock is tied to "
			"the system's CLOCK_TAI (ptp4l and phc2sys -a)"),
	PARAM_OPT(
		"follow-rx", PARAM_FLAG, OPT(follow_rx),
		.help = "move each queue's thread to the CPU where the kernel receives its packets, always "
			"(default: when the queue drops frames, kept only if it delivers more there)"),
	PARAM_OPT("no-follow-rx", PARAM_FLAG, OPT(no_follow_rx),
		  .help = "keep each queue's thread on its CPU (as --cpus does)"),
	PARAM_OPT("episodes", PARAM_UINT, OPT(episodes), .metavar = "N",
		  .help = "the longest loss episodes (how long traffic stopped) kept whole per run; "
			  "the others are counted (default 16)",
		  .min = 0, .max = EPISODES_MAX),
	PARAM_OPT("no-verify", PARAM_FLAG, OPT(no_verify),
		  .help = "count only: do not read stamps (no loss, order or latency checks)"),
	PARAM_OPT(
		"read-data", PARAM_FLAG, OPT(read_data),
		.help = "with --no-verify: read each delivered frame's first bytes, as an application that "
			"looks at its packets does (what that costs the rate: docs/performance.md)"),
	PARAM_OPT(
		"read-frames", PARAM_FLAG, OPT(read_frames),
		.help = "verify each frame from the UMEM (default: from the records the program copies each "
			"stamp into, so the thread need not bring the frame to its CPU)"),
	PARAM_OPT(
		"stamp-key", PARAM_STRING, OPT(stamp_key), .metavar = "FILE",
		.help = "check stamps with the key in FILE, the one xdp-gen stamps with (default: the file "
			"$XDPSG_STAMP_KEY names, else the public key, which anyone can forge)"),
	PARAM_OPT("hist", PARAM_STRING, OPT(hist), .metavar = "FILE",
		  .help = "write the latency histogram to FILE (.csv or .json)"),
	PARAM_OPT(
		"capture", PARAM_STRING, OPT(capture), .metavar = "FILE",
		.help = "write received frames to FILE (nanosecond stamps; pcapng if it ends in .pcapng, with "
			"one interface per queue and each anomaly's verdict as a comment, else pcap), off the "
			"receive threads"),
	PARAM_OPT("capture-format", PARAM_ENUM, OPT(capture_format), .metavar = "pcap|pcapng",
		  .help = "with --capture: the file's format whatever its name",
		  .enums = capture_formats),
	PARAM_OPT(
		"capture-what", PARAM_ENUM, OPT(capture_what), .metavar = "all|anomalies",
		.help = "every frame, or only foreign, duplicate, reordered, late frames and both sides of each gap",
		.enums = capture_whats),
	PARAM_OPT(
		"snaplen", PARAM_UINT, OPT(snaplen), .metavar = "BYTES",
		.help = "with --capture: keep at most this many bytes of a frame (default: all of it)",
		.min = 14, .max = 65535),
	PARAM_OPT("capture-max", PARAM_COUNT, OPT(capture_max), .metavar = "FRAMES",
		  .help = "with --capture: stop capturing after this many frames (the run goes on)",
		  .min = 1),
	PARAM_OPT(
		"drop-causes", PARAM_ENUM, OPT(drop_causes), .metavar = "[host|local]",
		.help = "trace drops and say where each run's lost frames were dropped: on every device of "
			"this host (host, the default), or of this network namespace only (local: another "
			"host is acted out in another namespace, whose drops --drop-causes-from joins)",
		.enums = drop_causes_where, .optional = true, .bare = SINK_CAUSES_HOST),
	PARAM_OPT(
		"drop-causes-from", PARAM_STRINGS, OPT(causes_from), .metavar = "URL",
		.help = "with --drop-causes: also join the drops another host's 'xdp-sink drops --metrics-listen' "
			"exports at URL (http://ADDR:PORT/metrics), read every interval and at the end; repeatable"),
	PARAM_OPT(
		"drop-runs", PARAM_UINT, OPT(drop_runs), .metavar = "N",
		.help = "with --drop-causes: entries in the tracer's run books, one per (run, reason, device); "
			"drops of runs that find them full are counted as uncharged (default 4096)",
		.min = 16, .max = 1048576),
	{},
};

static const struct param_cmd cmd_xsk = {
	.name = "xsk",
	.summary = "hand every packet to user space over AF_XDP and check its stamp",
	.description =
		"One AF_XDP socket, UMEM and thread per receive queue; the XDP program\n"
		"redirects each packet into its queue's socket (packets on queues without a\n"
		"socket are counted as no_socket). Each thread reads xdp-gen's stamp and\n"
		"reports lost, duplicates, reordered and latency (send to receive, same clock).\n"
		"Here --cost is busy work per packet in user space.",
	.positional = "IFNAME",
	.tables = { run_opts, common_opts, xsk_opts, NULL },
	.ops = &sink_xsk_ops,
};

static const struct param_def drop_opts[] = {
	PARAM_OPT(
		"sample", PARAM_COUNT, OPT(sample), .metavar = "N",
		.help = "with --capture: copy one frame in N to user space through a BPF ring buffer",
		.min = 1, .max = 1000000000ULL),
	PARAM_OPT(
		"capture", PARAM_STRING, OPT(capture), .metavar = "FILE",
		.help = "with --sample: write the sampled frames to FILE (pcap, nanosecond stamps)"),
	PARAM_OPT(
		"snaplen", PARAM_UINT, OPT(snaplen), .metavar = "BYTES",
		.help = "with --sample: bytes of a sampled frame to keep (at most 2048, the default)",
		.min = 14, .max = 65535),
	{},
};

static const struct param_cmd cmd_drop = {
	.name = "drop",
	.summary = "drop every packet in XDP (XDP_DROP) and count it",
	.description =
		"With --capture FILE --sample N, one frame in N is copied to user space\n"
		"through a BPF ring buffer and written to FILE; every frame is still dropped\n"
		"in the kernel. A full ring loses samples (samples_lost), never frames.",
	.positional = "IFNAME",
	.tables = { run_opts, common_opts, op_opts, drop_opts, NULL },
	.ops = &sink_drop_ops,
};

static const struct param_cmd cmd_pass = {
	.name = "pass",
	.summary = "count every packet and hand it to the kernel stack (XDP_PASS)",
	.positional = "IFNAME",
	.tables = { run_opts, common_opts, op_opts, NULL },
	.ops = &sink_pass_ops,
};

static const struct param_def tx_opts[] = {
	PARAM_OPT("reflect", PARAM_FLAG, OPT(reflect),
		  .help = "also swap IP addresses and UDP ports: a reflector for xdp-gen xsk --rtt"),
	{},
};

static const struct param_cmd cmd_tx = {
	.name = "tx",
	.summary = "bounce every packet back out of the same interface, MACs swapped (XDP_TX)",
	.description = "On a veth, bounced frames reach the peer only if the peer runs NAPI\n"
		       "(an XDP program attached, or GRO on); otherwise the kernel drops them\n"
		       "and xdp-sink reports them as xdp_tx_errors. With --reflect the IP\n"
		       "addresses and UDP ports are swapped too (checksums stay valid, the stamp\n"
		       "is untouched), so each frame returns to its sender: xdp-gen xsk --rtt\n"
		       "measures the round trip on its own clock. --cost adds a known delay.",
	.positional = "IFNAME",
	.tables = { run_opts, common_opts, op_opts, tx_opts, NULL },
	.ops = &sink_tx_ops,
};

static const struct param_cmd cmd_redirect = {
	.name = "redirect",
	.summary = "forward every packet to another interface through a devmap (XDP_REDIRECT)",
	.description = "A veth target takes redirected frames only if its peer runs NAPI\n"
		       "(an XDP program attached, or GRO on). xdp-sink checks this before it\n"
		       "starts when the peer is in this namespace, and reports the kernel's\n"
		       "transmit errors (xdp_xmit_errors) on the target either way.",
	.positional = "IFNAME",
	.tables = { run_opts, common_opts, op_opts, redirect_opts, NULL },
	.ops = &sink_redirect_ops,
};

static const struct param_def drops_opts[] = {
	PARAM_OPT(
		"local", PARAM_FLAG, OPT(drops_local),
		.help = "count drops on this network namespace's devices only, as a host of its own would "
			"(xdp-sink xsk --drop-causes local is the same on the sink)"),
	PARAM_OPT(
		"stamp-key", PARAM_STRING, OPT(stamp_key), .metavar = "FILE",
		.help = "count a run's drops only if its stamp checks with the key in FILE, the one xdp-gen "
			"stamps with (default: the file $XDPSG_STAMP_KEY names, else the public key)"),
	PARAM_OPT(
		"drop-runs", PARAM_UINT, OPT(drop_runs), .metavar = "N",
		.help = "entries in the run books, one per (run, reason, device); drops of runs that find "
			"them full are counted as uncharged (default 4096)",
		.min = 16, .max = 1048576),
	{},
};

static const struct param_cmd cmd_drops = {
	.name = "drops",
	.summary = "trace drops host-wide, by generator run, reason and device (no interface)",
	.description =
		"Attaches the drop tracer to the kernel's drop tracepoints and reports every\n"
		"drop of a frame stamped by xdp-gen by run, reason and device, and drops the\n"
		"kernel reports without the frame (unidentified), until stopped. On a DUT\n"
		"host, join its counts with the sink's books by run id. Attaches no XDP\n"
		"program and takes no interface.",
	.tables = { run_opts, drops_opts, NULL },
	.ops = &sink_drops_ops,
};

static const struct param_cmd *const cmds[] = {
	&cmd_drop, &cmd_pass, &cmd_tx, &cmd_redirect, &cmd_redirect_cpu, &cmd_xsk, &cmd_drops, NULL
};

static int sink_main(int argc, char **argv)
{
	struct sink_cfg cfg = defaults;
	const struct param_cmd *cmd;
	struct sink sk = { .cfg = &cfg };
	const char *ifname;
	int err, ret;

	log_set_prog("xdp-sink");
	/* Hidden, like --man-options: every counter, for the docs test and scripts. */
	if (argc == 2 && !strcmp(argv[1], "--counters"))
		return sink_list_counters(cmds);
	err = params_cmdline("xdp-sink", "Absorb or forward packets in XDP and count them exactly.",
			     cmds, &defaults, argc, argv, &cfg, &cmd, &ifname);
	if (err >= 0)
		return err;
	log_setup(cfg.quiet, cfg.verbose);
	sk.ops = cmd->ops;
	sk.mode_name = cmd->name;
	if (sk.ops->alone)
		return sk.ops->alone(&sk);
	snprintf(sk.ifc.name, sizeof(sk.ifc.name), "%s", ifname);

	/* Check everything that can be checked before touching the kernel. */
	err = sink_preflight(&sk);
	if (err) {
		/* What preflight refuses is a usage problem. */
		ret = err == -ENOMEM ? 1 : 2;
		goto out;
	}
	ret = 1;
	if (runtime_install_signals())
		goto out;

	/* Load, pin, attach, run; teardown undoes whatever was done. */
	err = sink_setup(&sk);
	if (!err)
		err = run_loop(&sk.run);
	ret = run_exit_code(err, cfg.xsk.huge_pages);
out:
	sink_teardown(&sk);
	return ret;
}

int main(int argc, char **argv)
{
	json_error_arm("xdp-sink", argc, argv);
	return json_error_finish(sink_main(argc, argv));
}
