// SPDX-License-Identifier: GPL-2.0
/*
 * Every counter xdp-gen reports that all modes have, described once
 * (common/report/counter_desc.h); a mode's own failure reasons are a table in its
 * file (struct gen_mode.failures). The JSON, the text, the OpenMetrics export
 * and --counters (which the docs test checks against the man page and
 * docs/monitoring.md) are written from these rows.
 */
#include <stdio.h>

#include "gen.h"
#include "report/counter_desc.h"

#define GC(f) offsetof(struct gen_counters, f)
#define CFG(f) offsetof(struct gen_cfg, f)

static const struct ctr_desc sent_rows[] = {
	{ "tx_packets", GC(sent), CTR_COUNTER, "frames", CTR_JSON | CTR_METRIC, 0,
	  "Frames sent (confirmed by the kernel), by queue." },
	{ "tx_bytes", GC(bytes), CTR_COUNTER, "bytes", CTR_JSON | CTR_METRIC, 0,
	  "Bytes of the frames sent, by queue." },
	{ "kicks", GC(kicks), CTR_COUNTER, "calls", CTR_JSON, 0,
	  "Times an AF_XDP sending loop asked the kernel to send (sendto); 0 in the other modes." },
};

/* Per queue in the export (kernel and qdisc: per thread, numbered as queues). */
const struct ctr_family gen_sent = {
	.name = "gen_sent",
	.prefix = "xdp_gen_",
	CTR_ROWS(sent_rows),
};

static const struct ctr_desc stall_rows[] = {
	{ "ring_full", GC(stall_ring), CTR_COUNTER, "waits", CTR_ALL, 0,
	  "The transmit ring was full." },
	{ "no_free_frame", GC(stall_frames), CTR_COUNTER, "waits", CTR_ALL, 0,
	  "No free frame: waiting for completions." },
	{ "kick_busy", GC(stall_kick), CTR_COUNTER, "waits", CTR_ALL, 0,
	  "The kernel answered a kick with EAGAIN, EBUSY or ENOBUFS." },
	{ "device_idle", GC(stall_idle), CTR_COUNTER, "waits", CTR_ALL, 0,
	  "The device took and returned nothing for 4,096 rounds (a link down, a queue that does not drain): waited in poll() for room, up to 10 ms." },
};

const struct ctr_family gen_stalls = {
	.name = "gen_stalls",
	.json = "stalls",
	.metric = "xdp_gen_stalls_total",
	.label = "reason",
	.help = "Times a sending loop waited instead of sending, by reason (nothing is dropped).",
	CTR_ROWS(stall_rows),
};

static const struct ctr_desc failure_rows[] = {
	{ "link_tx_dropped", offsetof(struct gen_failures, link_tx_dropped), CTR_COUNTER, "frames",
	  CTR_ALL, 0,
	  "Frames the interface dropped after taking them (its tx_dropped: every sender's)." },
};

/* The reasons every mode has; struct gen_mode.failures adds the mode's to the same object. */
const struct ctr_family gen_failures_all = {
	.name = "gen_failures",
	.json = "drops",
	.metric = "xdp_gen_failures_total",
	.label = "reason",
	.help = "Frames that were not sent or that the kernel dropped after taking them, by reason.",
	CTR_ROWS(failure_rows),
};

/* What was asked, for the dashboards: over struct gen_cfg. */
static const struct ctr_desc config_rows[] = {
	/*
	 * A setting, which rate() over a counter cannot give; named with its unit
	 * spelled out, as Prometheus asks (it was rate_pps).
	 */
	{ "rate_packets_per_second", CFG(rate), CTR_GAUGE, "packets/s", CTR_METRIC, 0,
	  "The configured rate in packets per second over all threads; 0: no limit." },
	{ "requested_packets", CFG(count), CTR_GAUGE, "packets", CTR_METRIC, 0,
	  "The configured --count; 0: no limit." },
};

const struct ctr_family gen_config = {
	.name = "gen_config",
	.prefix = "xdp_gen_",
	CTR_ROWS(config_rows),
};

static const struct ctr_family *const families[] = { &gen_sent, &gen_stalls, &gen_failures_all,
						     &gen_config };

int gen_list_counters(const struct param_cmd *const *cmds)
{
	struct ctr_mode modes[8];
	unsigned int n, i;

	for (n = 0; cmds[n] && n < sizeof(modes) / sizeof(modes[0]); n++)
		modes[n] = (struct ctr_mode){ cmds[n]->name, 0 };
	for (i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		ctr_list(stdout, "xdp-gen", families[i], modes, n, 0);
	/* A mode's own reasons appear in its reports only. */
	for (i = 0; i < n; i++) {
		const struct gen_mode *m = cmds[i]->ops;

		if (m->failures)
			ctr_list(stdout, "xdp-gen", m->failures, &modes[i], 1, 0);
	}
	return 0;
}
