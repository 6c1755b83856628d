/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_SINK_CAUSES_REMOTE_H
#define XDPSG_SINK_CAUSES_REMOTE_H

/*
 * --drop-causes-from URL: another host's drop tracer, read over HTTP. That
 * host runs 'xdp-sink drops --metrics-listen ADDR:PORT'; its OpenMetrics
 * text has xdp_sink_dropped_by_cause_total{kind,run,reason,device,netns},
 * totals since it started, which causes.c joins with this sink's runs by
 * run id. A source that cannot be read keeps what it said last (its counts
 * only grow); what it never said stays unexplained. Main thread only; no
 * frame waits on it.
 */
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define CAUSES_SRC_URL_MAX 256

/* One count of the remote tracer, as its labels say. */
struct remote_cause {
	__u32 run; /* 0 for counts of no run */
	char kind[16]; /* run, mark, unidentified, uncharged, unstamped, forged */
	char reason[64], dev[64], netns[64];
	__u64 packets;
};

struct causes_src {
	char url[CAUSES_SRC_URL_MAX];
	char host[128], port[8], path[128];
	struct remote_cause *v; /* the last reading that succeeded */
	size_t n;
	__u64 read_ns; /* when it was taken (CLOCK_MONOTONIC); 0: never */
	unsigned int reads, fails;
	bool failing; /* the last attempt failed (said once per run of failures) */
	char err[160]; /* why the last attempt failed */
};

/* Parse an http://HOST[:PORT][/PATH] URL (HOST: a name, IPv4, or [IPv6]). 0 or -EINVAL + why. */
int causes_src_parse(const char *url, struct causes_src *s, char *why, size_t len);
/*
 * GET the URL, at most timeout_ms in all, and keep its counts. 0, or -errno
 * with s->err saying why (the counts read before are kept).
 */
int causes_src_read(struct causes_src *s, int timeout_ms);
void causes_src_free(struct causes_src *s);

/*
 * The counts of xdp_sink_dropped_by_cause_total in an OpenMetrics text, in
 * order; every other line is skipped. 0, or -ENOMEM, or -EINVAL for a
 * sample of the family that cannot be read (a tracer's output, never a guess).
 */
int causes_parse_metrics(const char *text, size_t len, struct remote_cause **v, size_t *n);

#endif
