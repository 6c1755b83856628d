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
	/* frame_size 0: xsk_plan() picks 2048 bytes when the interface's MTU fits, else 4096 */
	.xsk = { .frame_size = 0 },
};

static const struct param_enum xdp_modes[] = {
	{ "native", XDPSG_MODE_NATIVE },
	{ "skb", XDPSG_MODE_SKB },
	{ NULL, 0 },
};

static const struct param_enum capture_whats[] = {
	{ "all", 0 },
	{ "anomalies", 1 },
	{ NULL, 0 },
};

/* 0 is "from the name"; the others are enum pcapio_format + 1. */
static const struct param_enum capture_formats[] = {
	{ "pcap", 1 },
	{ "pcapng", 2 },
	{ NULL, 0 },
};

static const struct param_enum packet_ops[] = {
	{ "none", XDPSG_OP_NONE },
	{ "read-data", XDPSG_OP_READ_DATA },
	{ "swap-macs", XDPSG_OP_SWAP_MACS },
	{ NULL, 0 },
};

static const struct param_enum remote_actions[] = {
	{ "drop", 0 },
	{ "pass", 1 },
	{ NULL, 0 },
};

#define OPT(f) offsetof(struct sink_cfg, f)

/* Every command's, the drops command (no interface) too. */
static const struct param_def run_opts[] = {
	{ "duration", 'd', PARAM_DURATION, OPT(duration), "TIME", "stop after this long", 1, 0 },
	{ "interval", 'i', PARAM_DURATION, OPT(interval), "TIME", "statistics period", 10000000ULL,
	  3600000000000ULL },
	{ "json", 'j', PARAM_FLAG, OPT(json), NULL, "one JSON object per line" },
	{ "quiet", 'q', PARAM_FLAG, OPT(quiet), NULL, "print only the final summary" },
	{ "verbose", 'v', PARAM_COUNTER, OPT(verbose), NULL,
	  "per-queue and per-CPU detail (drops: unstamped drops too); twice for libbpf's messages" },
	METRICS_CLI_PARAMS(struct sink_cfg, metrics),
	{ NULL },
};

/* The commands on an interface. */
static const struct param_def common_opts[] = {
	{ "count", 'n', PARAM_COUNT, OPT(count), "PACKETS", "stop once this many have arrived", 1,
	  0 },
	{ "xdp-mode", 'm', PARAM_ENUM, OPT(xdp_mode), "MODE", "XDP attach mode: native or skb", 0,
	  0, xdp_modes },
	{ "force", 0, PARAM_FLAG, OPT(force), NULL,
	  "replace an XDP program already on the interface (another process's BPF link: detach it)" },
	{ "pin", 0, PARAM_FLAG, OPT(pin), NULL, "pin maps under " SINK_PIN_ROOT "/IFNAME/" },
	{ "keep-pins", 0, PARAM_FLAG, OPT(keep_pins), NULL, "leave the pins in place at exit" },
	{ "parse", 0, PARAM_FLAG, OPT(parse), NULL,
	  "parse each packet (VLAN, IPv6 extension headers, one tunnel, UDP/TCP/ICMP) and count what is found" },
	{ "cost", 0, PARAM_UINT, OPT(cost), "NS", "busy work per packet in nanoseconds (slow sink)",
	  0, 1000000 },
	{ "kernel-stats", 0, PARAM_FLAG, OPT(kernel_stats), NULL,
	  "also show the interface's link, qdisc and veth counters" },
	{ NULL },
};

/* The in-kernel verdicts': what the program does to a frame before its verdict. */
static const struct param_def op_opts[] = {
	{ "packet-op", 0, PARAM_ENUM, OPT(packet_op), "none|read-data|swap-macs",
	  "before the verdict, read the frame's first bytes or swap its MAC addresses (tx swaps them anyway)",
	  0, 0, packet_ops },
	{ NULL },
};

static const struct param_def redirect_cpu_opts[] = {
	{ "cpu", 0, PARAM_LIST, OPT(remote_cpus), "all|LIST",
	  "CPUs to redirect to, round robin (default: all online CPUs)", 0, 4095 },
	{ "qsize", 0, PARAM_UINT, OPT(qsize), "FRAMES", "each CPU's cpumap queue", 1, 16384 },
	{ "remote-action", 0, PARAM_ENUM, OPT(remote_action), "drop|pass",
	  "what the remote CPU does with each frame: drop it, or hand it to the stack", 0, 0,
	  remote_actions },
	{ NULL },
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
	{ "to", 0, PARAM_IFNAME, OPT(to), "IFNAME", "interface to redirect to (required)" },
	{ NULL },
};

static const struct param_def xsk_opts[] = {
	{ "queues", 0, PARAM_LIST, OPT(queues), "all|LIST",
	  "receive queues, one socket and thread each", 0, XDPSG_MAX_QUEUES - 1 },
	{ "cpus", 0, PARAM_LIST, OPT(cpus), "LIST",
	  "CPU of each queue's thread (default: the highest CPUs, queue 0 on the last)", 0, 4095 },
	{ "batch", 'b', PARAM_UINT, OPT(batch), "N", "descriptors per ring operation", 1, 2048 },
	{ "ring-size", 0, PARAM_UINT, OPT(ring_size), "N",
	  "rx ring entries; the UMEM has half as many frames, all in the fill ring", 64, 65536 },
	XSK_CLI_PARAMS(struct sink_cfg, xsk),
	{ "poll", 0, PARAM_FLAG, OPT(poll), NULL,
	  "wake on arrival (poll()) even while frames carry the kernel's receive time" },
	{ "time-all", 0, PARAM_FLAG, OPT(time_all), NULL,
	  "take the kernel's receive time of every frame (default: frames reaching a CPU less than "
	  "1.02 us apart, in a burst or above about 1 Mpps, about one in 16, as the clock read "
	  "costs as much as the rest of the program)" },
	{ "follow-rx", 0, PARAM_FLAG, OPT(follow_rx), NULL,
	  "move each queue's thread to the CPU where the kernel receives its packets, always "
	  "(default: when the queue drops frames, kept only if it delivers more there)" },
	{ "no-follow-rx", 0, PARAM_FLAG, OPT(no_follow_rx), NULL,
	  "keep each queue's thread on its CPU (as --cpus does)" },
	{ "no-verify", 0, PARAM_FLAG, OPT(no_verify), NULL,
	  "count only: do not read stamps (no loss, order or latency checks)" },
	{ "stamp-key", 0, PARAM_STRING, OPT(stamp_key), "FILE",
	  "check stamps with the key in FILE, the one xdp-gen stamps with (default: the file "
	  "$XDPSG_STAMP_KEY names, else the public key, which anyone can forge)" },
	{ "hist", 0, PARAM_STRING, OPT(hist), "FILE",
	  "write the latency histogram to FILE (.csv or .json)" },
	{ "capture", 0, PARAM_STRING, OPT(capture), "FILE",
	  "write received frames to FILE (nanosecond stamps; pcapng if it ends in .pcapng, with "
	  "one interface per queue and each anomaly's verdict as a comment, else pcap), off the "
	  "receive threads" },
	{ "capture-format", 0, PARAM_ENUM, OPT(capture_format), "pcap|pcapng",
	  "with --capture: the file's format whatever its name", 0, 0, capture_formats },
	{ "capture-what", 0, PARAM_ENUM, OPT(capture_what), "all|anomalies",
	  "every frame, or only foreign, duplicate, reordered, late frames and both sides of each gap",
	  0, 0, capture_whats },
	{ "snaplen", 0, PARAM_UINT, OPT(snaplen), "BYTES",
	  "with --capture: keep at most this many bytes of a frame (default: all of it)", 14,
	  65535 },
	{ "capture-max", 0, PARAM_COUNT, OPT(capture_max), "FRAMES",
	  "with --capture: stop capturing after this many frames (the run goes on)", 1, 0 },
	{ "drop-causes", 0, PARAM_FLAG, OPT(drop_causes), NULL,
	  "trace drops host-wide and say where each run's lost frames were dropped" },
	{ "drop-runs", 0, PARAM_UINT, OPT(drop_runs), "N",
	  "with --drop-causes: entries in the tracer's run books, one per (run, reason, device); "
	  "drops of runs that find them full are counted as uncharged (default 4096)",
	  16, 1048576 },
	{ NULL },
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
	{ "sample", 0, PARAM_COUNT, OPT(sample), "N",
	  "with --capture: copy one frame in N to user space through a BPF ring buffer", 1,
	  1000000000ULL },
	{ "capture", 0, PARAM_STRING, OPT(capture), "FILE",
	  "with --sample: write the sampled frames to FILE (pcap, nanosecond stamps)" },
	{ "snaplen", 0, PARAM_UINT, OPT(snaplen), "BYTES",
	  "with --sample: bytes of a sampled frame to keep (at most 2048, the default)", 14,
	  65535 },
	{ NULL },
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
	{ "reflect", 0, PARAM_FLAG, OPT(reflect), NULL,
	  "also swap IP addresses and UDP ports: a reflector for xdp-gen xsk --rtt" },
	{ NULL },
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
	{ "stamp-key", 0, PARAM_STRING, OPT(stamp_key), "FILE",
	  "count a run's drops only if its stamp checks with the key in FILE, the one xdp-gen "
	  "stamps with (default: the file $XDPSG_STAMP_KEY names, else the public key)" },
	{ "drop-runs", 0, PARAM_UINT, OPT(drop_runs), "N",
	  "entries in the run books, one per (run, reason, device); drops of runs that find "
	  "them full are counted as uncharged (default 4096)",
	  16, 1048576 },
	{ NULL },
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
