// SPDX-License-Identifier: GPL-2.0
/*
 * Every counter xdp-sink reports, described once (common/report/counter_desc.h): a
 * row per counter, read by the JSON, the text, the OpenMetrics export and
 * --counters (which the docs test checks against the man page and
 * docs/monitoring.md). A new drop reason the program counts is a field of
 * struct sink_stats, its increment in bpf/xdp_sink.bpf.c and a row of
 * drop_rows[]; every output follows.
 */
#include <stdio.h>

#include "causes.h"
#include "report/counter_desc.h"
#include "sink.h"
#include "xsk.h"

#define ST(f) offsetof(struct sink_stats, f)
#define DR(f) offsetof(struct sink_drops, f)
#define XS(f) offsetof(struct xdp_statistics, f)
#define XQ(f) offsetof(struct xq_counts, f)
#define BK(f) offsetof(struct xsk_books, f)

#define PKTS CTR_COUNTER, "packets"
#define FRAMES CTR_COUNTER, "frames"

static const struct ctr_desc verdict_rows[] = {
	{ "drop", ST(drop), PKTS, CTR_ALL, 0, "XDP_DROP: dropped by the program, as asked." },
	{ "pass", ST(pass), PKTS, CTR_ALL, 0, "XDP_PASS: handed to the kernel's stack." },
	{ "tx", ST(tx), PKTS, CTR_ALL, 0, "XDP_TX: bounced out of the interface." },
	{ "redirect", ST(redirect), PKTS, CTR_ALL, 0,
	  "XDP_REDIRECT that found its target (devmap), CPU (cpumap) or socket (xskmap)." },
	{ "aborted", ST(aborted), PKTS, CTR_ALL, 0,
	  "XDP_ABORTED: frames the program could not handle (tx: shorter than an Ethernet header)." },
};

const struct ctr_family sink_verdicts = {
	.name = "sink_verdicts",
	.json = "actions",
	.metric = "xdp_sink_verdicts_total",
	.label = "verdict",
	.help = "XDP verdicts of the sink's program, by verdict (aborted is also a drop).",
	CTR_ROWS(verdict_rows),
};

/* --parse: what the program found in each packet. */
static const struct ctr_desc parse_rows[] = {
	{ "udp4", ST(udp4), PKTS, CTR_JSON | CTR_TEXT, SINK_HAS_PARSE, "UDP over IPv4." },
	{ "udp6", ST(udp6), PKTS, CTR_JSON | CTR_TEXT, SINK_HAS_PARSE, "UDP over IPv6." },
	{ "tcp4", ST(tcp4), PKTS, CTR_JSON | CTR_TEXT, SINK_HAS_PARSE, "TCP over IPv4." },
	{ "tcp6", ST(tcp6), PKTS, CTR_JSON | CTR_TEXT, SINK_HAS_PARSE, "TCP over IPv6." },
	{ "icmp4", ST(icmp4), PKTS, CTR_JSON | CTR_TEXT, SINK_HAS_PARSE, "ICMP over IPv4." },
	{ "icmp6", ST(icmp6), PKTS, CTR_JSON | CTR_TEXT, SINK_HAS_PARSE, "ICMPv6." },
	{ "other", ST(other), PKTS, CTR_JSON | CTR_TEXT, SINK_HAS_PARSE,
	  "Well-formed, but none of the above (ARP, a fragment, ESP, an unknown protocol)." },
};

const struct ctr_family sink_parse = {
	.name = "sink_parse",
	.json = "parse",
	CTR_ROWS(parse_rows),
};

static const struct ctr_desc parse_error_rows[] = {
	{ "eth", ST(err_eth), PKTS, CTR_JSON | CTR_TEXT, SINK_HAS_PARSE,
	  "Shorter than an Ethernet header and its VLAN tags." },
	{ "ip", ST(err_ip), PKTS, CTR_JSON | CTR_TEXT, SINK_HAS_PARSE,
	  "Truncated IP header, a bad version, an IHL below 5 or a length past the frame." },
	{ "ip6_ext", ST(err_ip6_ext), PKTS, CTR_JSON | CTR_TEXT, SINK_HAS_PARSE,
	  "IPv6 extension headers cut short, or more than eight of them." },
	{ "udp", ST(err_udp), PKTS, CTR_JSON | CTR_TEXT, SINK_HAS_PARSE,
	  "Truncated UDP header, or a UDP length below 8 or past the IP packet." },
	{ "tcp", ST(err_tcp), PKTS, CTR_JSON | CTR_TEXT, SINK_HAS_PARSE,
	  "Truncated TCP header, or a data offset below 5 or past the IP packet." },
	{ "icmp", ST(err_icmp), PKTS, CTR_JSON | CTR_TEXT, SINK_HAS_PARSE,
	  "Truncated ICMP or ICMPv6 header." },
	{ "tunnel", ST(err_tunnel), PKTS, CTR_JSON | CTR_TEXT, SINK_HAS_PARSE,
	  "Truncated GRE or GENEVE header." },
};

const struct ctr_family sink_parse_errors = {
	.name = "sink_parse_errors",
	.json = "parse.errors",
	CTR_ROWS(parse_error_rows),
};

/* --parse: what frames were carried in; a frame counts once in each layer it has. */
static const struct ctr_desc parse_layer_rows[] = {
	{ "vlan", ST(vlan), PKTS, CTR_JSON | CTR_TEXT, SINK_HAS_PARSE,
	  "Frames with one 802.1Q/802.1ad tag or more." },
	{ "qinq", ST(qinq), PKTS, CTR_JSON | CTR_TEXT, SINK_HAS_PARSE, "Frames with two tags." },
	{ "ip6_ext", ST(ip6_ext), PKTS, CTR_JSON | CTR_TEXT, SINK_HAS_PARSE,
	  "IPv6 packets whose extension headers were walked." },
	{ "vxlan", ST(vxlan), PKTS, CTR_JSON | CTR_TEXT, SINK_HAS_PARSE,
	  "Frames inside VXLAN (UDP port 4789)." },
	{ "geneve", ST(geneve), PKTS, CTR_JSON | CTR_TEXT, SINK_HAS_PARSE,
	  "Frames inside GENEVE (UDP port 6081)." },
	{ "gre", ST(gre), PKTS, CTR_JSON | CTR_TEXT, SINK_HAS_PARSE,
	  "Packets or frames inside GRE." },
	{ "ipip", ST(ipip), PKTS, CTR_JSON | CTR_TEXT, SINK_HAS_PARSE,
	  "IPv4 or IPv6 inside IPv4 or IPv6." },
};

const struct ctr_family sink_parse_layers = {
	.name = "sink_parse_layers",
	.json = "parse.layers",
	CTR_ROWS(parse_layer_rows),
};

/* Where packets were lost on the receive path, each drop under one name. */
static const struct ctr_desc drop_rows[] = {
	{ "xdp_aborted", DR(prog.aborted), PKTS, CTR_ALL, SINK_HAS_VERDICT,
	  "Frames the program aborted (XDP_ABORTED)." },
	{ "redirect_no_target", DR(prog.redirect_err), PKTS, CTR_ALL, SINK_HAS_REDIRECT,
	  "Redirects that found no target in the devmap." },
	{ "no_socket", DR(prog.redirect_err), PKTS, CTR_ALL, SINK_HAS_XSK,
	  "Frames on a queue without a socket: dropped by the program." },
	{ "cpumap_no_target", DR(prog.redirect_err), PKTS, CTR_ALL, SINK_HAS_CPUMAP,
	  "Redirects that found no CPU in the cpumap." },
	{ "cpumap_unseen", DR(cpumap_unseen), PKTS, CTR_ALL, SINK_HAS_CPUMAP,
	  "Redirected to a CPU but not counted there: dropped at the enqueue because that CPU's "
	  "queue (--qsize) was full, or, in an interval, still queued." },
	{ "xdp_tx_errors", DR(xdp_tx_errors), PKTS, CTR_ALL, SINK_HAS_TX,
	  "Bounced frames the kernel failed to send (the interface's xdp_tx_errors)." },
	{ "xdp_xmit_errors", DR(xdp_xmit_errors), PKTS, CTR_ALL, SINK_HAS_REDIRECT,
	  "Redirected frames the target dropped (its xdp_xmit_errors)." },
	{ "xsk_fill_ring_empty", DR(xsk.rx_dropped), PKTS, CTR_ALL, SINK_HAS_XSK,
	  "Frames a socket had no free frame for (its fill ring was empty)." },
	{ "xsk_rx_ring_full", DR(xsk.rx_ring_full), PKTS, CTR_ALL, SINK_HAS_XSK,
	  "Frames a socket's full rx ring refused." },
	{ "xsk_rx_invalid", DR(xsk.rx_invalid_descs), PKTS, CTR_ALL, SINK_HAS_XSK,
	  "Frames a socket dropped as invalid descriptors." },
	{ "veth_rx_drops", DR(veth_rx_drops), PKTS, CTR_ALL, SINK_HAS_VETH,
	  "Dropped in the veth's receive path after XDP, beyond what the reasons above name." },
};

const struct ctr_family sink_drop_reasons = {
	.name = "sink_drops",
	.json = "drops",
	.metric = "xdp_sink_drops_total",
	.label = "reason",
	.help = "Packets lost on the receive path, by the layer that dropped them.",
	CTR_ROWS(drop_rows),
};

/* What arrived, by receive queue: the program's count, or what the sockets delivered (xsk). */
static const struct ctr_desc rx_rows[] = {
	{ "rx_packets", ST(packets), PKTS, CTR_METRIC, SINK_HAS_VERDICT,
	  "Packets received, by receive queue." },
	{ "rx_bytes", ST(bytes), CTR_COUNTER, "bytes", CTR_METRIC, SINK_HAS_VERDICT,
	  "Bytes received, by receive queue." },
};

const struct ctr_family sink_rx = {
	.name = "sink_rx",
	.prefix = "xdp_sink_",
	CTR_ROWS(rx_rows),
};

static const struct ctr_desc xsk_rx_rows[] = {
	{ "rx_packets", XQ(rx_packets), PKTS, CTR_METRIC, SINK_HAS_XSK,
	  "Packets received, by receive queue (AF_XDP: delivered to the socket)." },
	{ "rx_bytes", XQ(rx_bytes), CTR_COUNTER, "bytes", CTR_METRIC, SINK_HAS_XSK,
	  "Bytes received, by receive queue (AF_XDP: delivered to the socket)." },
};

const struct ctr_family sink_xsk_rx = {
	.name = "sink_xsk_rx",
	.prefix = "xdp_sink_",
	CTR_ROWS(xsk_rx_rows),
};

/* The sockets' XDP_STATISTICS, summed, as the kernel names them. */
static const struct ctr_desc xsk_stat_rows[] = {
	{ "rx_dropped", XS(rx_dropped), FRAMES, CTR_JSON, SINK_HAS_XSK,
	  "XDP_STATISTICS rx_dropped: no free frame (fill ring empty)." },
	{ "rx_ring_full", XS(rx_ring_full), FRAMES, CTR_JSON, SINK_HAS_XSK,
	  "XDP_STATISTICS rx_ring_full: the rx ring was full." },
	{ "rx_fill_ring_empty_descs", XS(rx_fill_ring_empty_descs), CTR_COUNTER, "events", CTR_JSON,
	  SINK_HAS_XSK,
	  "XDP_STATISTICS rx_fill_ring_empty_descs: times the fill ring was found empty." },
	{ "rx_invalid_descs", XS(rx_invalid_descs), FRAMES, CTR_JSON, SINK_HAS_XSK,
	  "XDP_STATISTICS rx_invalid_descs: invalid descriptors." },
};

const struct ctr_family sink_xsk_stats = {
	.name = "sink_xsk_socket",
	.json = "xsk",
	CTR_ROWS(xsk_stat_rows),
};

/* xsk: the stamp checks, from the queues' books (totals; by queue or by run in the export). */
static const struct ctr_desc book_rows[] = {
	{ "stamped", BK(stamped), FRAMES, CTR_JSON, SINK_HAS_XSK,
	  "Stamped frames whose keyed check passed, entered in a run's books." },
	{ "foreign", BK(foreign), FRAMES, CTR_JSON, SINK_HAS_XSK, "Frames without a stamp." },
	{ "forged", BK(forged), FRAMES, CTR_JSON | CTR_METRIC, SINK_HAS_XSK,
	  "Frames with a stamp whose keyed check failed (forged, or stamped under another key): "
	  "in no run's books." },
	{ "lost", BK(lost), FRAMES, CTR_JSON | CTR_METRIC | CTR_SIGNED, SINK_HAS_XSK,
	  "Stamped frames missing from their flow's sequence for good, the end's too: while "
	  "running, gaps past the reorder window (xdp_sink_lost_pending has the rest); at exit, "
	  "every gap and every frame after the last that arrived up to the end mark's count." },
	{ "lost_at_end", BK(lost_at_end), FRAMES, CTR_JSON | CTR_METRIC, SINK_HAS_XSK,
	  "Of lost: frames after the last one of their flow that arrived, up to the count its end "
	  "mark gave." },
	{ "missing_head", BK(missing_head), FRAMES, CTR_JSON | CTR_METRIC, SINK_HAS_XSK,
	  "Frames missing before the first one of their flow that arrived (sequence numbers start "
	  "at 0): sent before this sink was ready, or lost at the start. Not in lost." },
	{ "duplicates", BK(duplicates), FRAMES, CTR_JSON | CTR_METRIC, SINK_HAS_XSK,
	  "Stamped frames received more than once." },
	{ "reordered", BK(reordered), FRAMES, CTR_JSON | CTR_METRIC, SINK_HAS_XSK,
	  "Stamped frames that arrived after a later one of their flow." },
	{ "late", BK(late), FRAMES, CTR_JSON, SINK_HAS_XSK,
	  "Stamped frames behind the reorder window: duplicates or late originals." },
	{ "marks", BK(marks), FRAMES, CTR_JSON, SINK_HAS_XSK,
	  "The generators' start and end marks (not counted as stamped)." },
	{ "lost_pending", BK(lost_pending), CTR_GAUGE, "frames", CTR_METRIC,
	  SINK_HAS_XSK | SINK_HAS_LIVE,
	  "Gaps in stamped flows still inside the reorder window: a late frame may fill them; "
	  "lost = xdp_sink_lost_total + this." },
};

const struct ctr_family sink_xsk_books = {
	.name = "sink_xsk_books",
	.prefix = "xdp_sink_",
	CTR_ROWS(book_rows),
};

/* Stamped frames the books did not check: in the totals, in no loss figure. */
static const struct ctr_desc unchecked_rows[] = {
	{ "unplaced", BK(unplaced), FRAMES, CTR_JSON, SINK_HAS_XSK,
	  "Stamped frames that found no room in the books: never checked." },
	{ "stray", BK(stray), FRAMES, CTR_JSON, SINK_HAS_XSK,
	  "Frames of runs that showed fewer than 8 frames and no mark before more runs needed "
	  "room (strays of old runs, or a flood of runs): received, never checked." },
};

const struct ctr_family sink_xsk_unchecked = {
	.name = "sink_xsk_unchecked",
	.json = "unchecked",
	CTR_ROWS(unchecked_rows),
};

/* redirect-cpu: what the cpumap's program saw on each remote CPU (struct sink_cpumap_stats). */
#define CM(f) offsetof(struct sink_cpumap_stats, f)

static const struct ctr_desc cpumap_rows[] = {
	{ "packets", CM(packets), PKTS, CTR_JSON | CTR_METRIC, SINK_HAS_CPUMAP,
	  "Frames the cpumap's program saw, by remote CPU." },
	{ "bytes", CM(bytes), CTR_COUNTER, "bytes", CTR_JSON | CTR_METRIC, SINK_HAS_CPUMAP,
	  "Bytes the cpumap's program saw, by remote CPU." },
	{ "drop", CM(drop), PKTS, CTR_JSON | CTR_METRIC, SINK_HAS_CPUMAP,
	  "Frames dropped on the remote CPU (--remote-action drop)." },
	{ "pass", CM(pass), PKTS, CTR_JSON | CTR_METRIC, SINK_HAS_CPUMAP,
	  "Frames handed to the stack on the remote CPU (--remote-action pass)." },
};

const struct ctr_family sink_cpumap = {
	.name = "sink_cpumap",
	.json = "cpumap",
	.prefix = "xdp_sink_cpumap_",
	CTR_ROWS(cpumap_rows),
};

/*
 * The drop tracer's counts (causes.c, drops.c): one metric each, the first
 * two with samples labelled by run, reason and device (their values are the
 * tracer's, not a struct's: the offsets only describe). Rows in the order of
 * enum sink_cause_row.
 */
static const struct ctr_desc cause_rows[] = {
	{ "lost_by_cause", offsetof(struct sink_cause_vals, lost_by_cause), FRAMES, CTR_METRIC,
	  SINK_HAS_XSK,
	  "With --drop-causes, a run's lost frames by where they were dropped (reason, device); "
	  "reason unexplained: what no drop covered." },
	{ "dropped_by_cause", offsetof(struct sink_cause_vals, dropped_by_cause), FRAMES,
	  CTR_METRIC, SINK_HAS_DROPS,
	  "Drops the tracer counted, by kind (run, mark, forged, unstamped, unidentified, "
	  "uncharged: a run's drop that found the run books full, raise --drop-runs), run, reason "
	  "and device." },
	{ "drop_runs_uncharged", offsetof(struct sink_cause_vals, drop_runs_uncharged), FRAMES,
	  CTR_METRIC, SINK_HAS_XSK,
	  "With --drop-causes, drops of runs that found the drop tracer's run books full: counted "
	  "by reason and device but in no run's causes; raise --drop-runs." },
};

const struct ctr_family sink_causes = {
	.name = "sink_causes",
	.prefix = "xdp_sink_",
	CTR_ROWS(cause_rows),
};

static const struct ctr_family *const families[] = {
	&sink_rx,	    &sink_xsk_rx,	 &sink_verdicts,     &sink_parse,
	&sink_parse_errors, &sink_parse_layers,	 &sink_drop_reasons, &sink_xsk_stats,
	&sink_xsk_books,    &sink_xsk_unchecked, &sink_causes,	     &sink_cpumap,
};

int sink_list_counters(const struct param_cmd *const *cmds)
{
	struct ctr_mode modes[8];
	unsigned int n, i;

	for (n = 0; cmds[n] && n < sizeof(modes) / sizeof(modes[0]); n++) {
		const struct sink_mode_ops *ops = cmds[n]->ops;

		modes[n] = (struct ctr_mode){ cmds[n]->name, ops->has };
	}
	for (i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		ctr_list(stdout, "xdp-sink", families[i], modes, n, SINK_HAS_RUNTIME);
	return 0;
}
