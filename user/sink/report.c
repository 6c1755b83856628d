// SPDX-License-Identifier: GPL-2.0
/* Readings and the report lines every mode shares: verdicts, queues, CPUs, kernel counters. */
#include <errno.h>
#include <math.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/fmt.h"
#include "base/runtime.h"
#include "kern/kstats.h"
#include "report/counter_desc.h"
#include "sink.h"
#include "xdp_sink.skel.h"

#define SINK_NFIELDS (sizeof(struct sink_stats) / sizeof(__u64))

static size_t mode_snap_size(const struct sink *sk)
{
	return sk->ops->snap_size ? sk->ops->snap_size(sk) : 0;
}

int sink_snap_alloc(struct sink *sk, struct sink_snap *s)
{
	size_t msize = mode_snap_size(sk);

	s->cpu = calloc((size_t)sk->ncpus, sizeof(*s->cpu));
	if (!s->cpu)
		return -ENOMEM;
	if (msize) {
		s->mode = calloc(1, msize);
		if (!s->mode)
			return -ENOMEM;
	}
	if (sk->kr) {
		s->ks = calloc(1, sizeof(*s->ks));
		if (!s->ks)
			return -ENOMEM;
	}
	return 0;
}

void sink_snap_free(struct sink_snap *s)
{
	free(s->ks);
	free(s->cpu);
	free(s->mode);
}

void sink_snap_copy(const struct sink *sk, struct sink_snap *dst, const struct sink_snap *src)
{
	struct sink_stats *cpu = dst->cpu;
	struct kstats *ks = dst->ks;
	void *mode = dst->mode;

	*dst = *src;
	dst->cpu = cpu;
	dst->ks = ks;
	dst->mode = mode;
	memcpy(cpu, src->cpu, (size_t)sk->ncpus * sizeof(*cpu));
	if (ks && src->ks)
		*ks = *src->ks;
	if (mode)
		memcpy(mode, src->mode, mode_snap_size(sk));
}

static void stats_add(struct sink_stats *dst, const struct sink_stats *src)
{
	__u64 *d = (__u64 *)dst;
	const __u64 *s = (const __u64 *)src;
	unsigned int i;

	for (i = 0; i < SINK_NFIELDS; i++)
		d[i] += s[i];
}

static void stats_sub(struct sink_stats *res, const struct sink_stats *a,
		      const struct sink_stats *b)
{
	ctr_sub(res, a, b, sizeof(*res));
}

static unsigned int slot_key(const struct sink *sk, unsigned int i)
{
	/* The last slot read is always the overflow slot for queues >= MAX. */
	return i + 1 == sk->nslots ? XDPSG_MAX_QUEUES : i;
}

/*
 * Frames the kernel's XDP counters saw on queues the device did not have at
 * the start. veth (6.18) runs no program on queues added while one is
 * attached (ethtool -L): they pass the sink unseen, and only these counters
 * know them.
 */
static __u64 added_queue_xdp(const struct sink *sk)
{
	__u64 sum = 0, v;
	unsigned int q;

	for (q = sk->nslots - 1; q < XDPSG_MAX_QUEUES; q++) {
		if (!iface_estat_queue(sk->estats, "rx_queue_", q, "_xdp_packets", &v))
			break;
		sum += v;
	}
	return sum;
}

__u64 sink_unseen(const struct sink *sk, const struct sink_snap *a, const struct sink_snap *b)
{
	__u64 added = a->added_queue_xdp - b->added_queue_xdp;
	__u64 counted = a->q[XDPSG_MAX_QUEUES].packets - b->q[XDPSG_MAX_QUEUES].packets;

	return sk->estats && added > counted ? added - counted : 0;
}

int sink_snap_read(struct sink *sk, struct sink_snap *s)
{
	int fd = bpf_map__fd(sk->skel->maps.stats);
	unsigned int i, key;
	int c, err;

	s->rs.t_ns = now_ns();
	memset(&s->total, 0, sizeof(s->total));
	memset(s->cpu, 0, (size_t)sk->ncpus * sizeof(*s->cpu));
	for (i = 0; i < sk->nslots; i++) {
		key = slot_key(sk, i);
		err = bpf_map_lookup_elem(fd, &key, sk->buf);
		if (err)
			return -errno;
		memset(&s->q[key], 0, sizeof(s->q[key]));
		for (c = 0; c < sk->ncpus; c++) {
			stats_add(&s->q[key], &sk->buf[c]);
			stats_add(&s->cpu[c], &sk->buf[c]);
		}
		stats_add(&s->total, &s->q[key]);
	}
	iface_link_stats(sk->ifc.name, &s->link);
	if (sk->kr && s->ks)
		kstats_read(sk->kr, s->ks);
	if (sk->estats && !iface_estats_read(sk->estats)) {
		s->veth_rx_drops = iface_estat_sum(sk->estats, "rx_queue_", "_drops", NULL);
		s->xdp_tx_errors = iface_estat_sum(sk->estats, "rx_queue_", "_xdp_tx_errors", NULL);
		s->added_queue_xdp = added_queue_xdp(sk);
	}
	if (sk->ops->read)
		sk->ops->read(sk, s);
	return 0;
}

/* Packets the sink received: what the program saw, unless the mode says otherwise. */
__u64 sink_received(const struct sink *sk, const struct sink_snap *s, __u64 *bytes)
{
	if (sk->ops->received)
		return sk->ops->received(sk, s, bytes);
	if (bytes)
		*bytes = s->total.bytes;
	return s->total.packets;
}

/* Every drop between two readings, where it was counted; the drop reasons' rows read it. */
static void drops_between(const struct sink *sk, const struct sink_snap *a,
			  const struct sink_snap *b, struct sink_drops *d)
{
	memset(d, 0, sizeof(*d));
	stats_sub(&d->prog, &a->total, &b->total);
	d->veth_rx_drops = a->veth_rx_drops - b->veth_rx_drops;
	d->xdp_tx_errors = a->xdp_tx_errors - b->xdp_tx_errors;
	if (sk->ops->drops)
		sk->ops->drops(sk, a, b, d);
}

static void json_parse(struct jw *w, const struct sink_stats *s, unsigned int has)
{
	if (!(has & SINK_HAS_PARSE))
		return;
	jw_obj(w, "parse");
	ctr_json_members(w, &sink_parse, s, has);
	ctr_json(w, &sink_parse_errors, s, has);
	ctr_json(w, &sink_parse_layers, s, has);
	jw_end_obj(w);
}

static void json_queues_cpus(const struct sink *sk, struct jw *w, const struct sink_snap *a,
			     const struct sink_snap *b, __u64 dt)
{
	struct sink_stats dq, dc;
	unsigned int i, key;
	int c;

	jw_arr(w, "queues");
	for (i = 0; i < sk->nslots; i++) {
		key = slot_key(sk, i);
		stats_sub(&dq, &a->q[key], &b->q[key]);
		jw_obj(w, NULL);
		if (key == XDPSG_MAX_QUEUES) {
			/* Queues the interface did not have at the start (or beyond 64) */
			jw_str(w, "queue", "overflow");
			jw_u64(w, "queues_from", sk->nslots - 1);
		} else {
			jw_u64(w, "queue", key);
		}
		jw_u64(w, "rx_packets", dq.packets);
		jw_u64(w, "rx_bytes", dq.bytes);
		jw_double(w, "pps", counter_rate(a->q[key].packets, b->q[key].packets, dt));
		jw_end_obj(w);
	}
	jw_end_arr(w);
	jw_arr(w, "cpus");
	for (c = 0; c < sk->ncpus; c++) {
		stats_sub(&dc, &a->cpu[c], &b->cpu[c]);
		jw_obj(w, NULL);
		jw_u64(w, "cpu", (__u64)c);
		jw_u64(w, "rx_packets", dc.packets);
		jw_double(w, "pps", counter_rate(a->cpu[c].packets, b->cpu[c].packets, dt));
		jw_end_obj(w);
	}
	jw_end_arr(w);
}

/* The members after the skeleton's own (tool, mode, ifname, stop_reason, times). */
/*
 * The span that carried traffic: from the first packet to the last. Exact
 * where the mode knows the receive times; otherwise from the ticks where the
 * count moved, the first stretched back one tick (it started after the
 * previous one). 0 when nothing arrived.
 */
bool sink_traffic_span(const struct sink *sk, const struct sink_snap *a, __u64 *first, __u64 *last)
{
	if (sk->ops->span && sk->ops->span(sk, a, first, last))
		return true;
	if (!sk->seen)
		return false;
	*first = sk->first_rx_ns - SINK_TICK_NS;
	*last = sk->last_rx_ns;
	return true;
}

static __u64 traffic_span(const struct sink *sk, const struct sink_snap *a, __u64 *first)
{
	__u64 f = 0, l = 0;

	if (!sink_traffic_span(sk, a, &f, &l))
		return 0;
	*first = f;
	return l > f ? l - f : 0;
}

/*
 * The summary's rates are over the span that carried traffic, in text and
 * JSON alike; the busiest row is shown beside them only when it is at least
 * their average (rows too short to judge are left out of it, see observe()).
 */
static double peak_of(const struct sink *sk, double avg)
{
	return sk->peak_pps >= avg ? sk->peak_pps : 0;
}

static void json_span(struct sink *sk, struct jw *w, const struct sink_snap *a,
		      const struct sink_snap *b)
{
	__u64 first = 0, span = traffic_span(sk, a, &first);
	__u64 n = sink_received(sk, a, NULL) - sink_received(sk, b, NULL);
	double avg = span ? (double)n * 1e9 / (double)span : 0;

	jw_str(w, "rate_basis", "active");
	jw_u64(w, "unseen", sink_unseen(sk, a, b));
	/* The program detached part-way (another took the interface): from when, else null. */
	jw_double(w, "detached_s",
		  sk->detached_ns ? (double)(sk->detached_ns - b->rs.t_ns) / 1e9 : NAN);
	jw_double(w, "active_s", (double)span / 1e9);
	jw_double(w, "active_pps", avg);
	jw_double(w, "run_pps", counter_rate(n, 0, a->rs.t_ns - b->rs.t_ns));
	jw_double(w, "first_packet_s",
		  first > sk->base.rs.t_ns ? (double)(first - sk->base.rs.t_ns) / 1e9 : 0);
	if (peak_of(sk, avg))
		jw_double(w, "peak_pps", peak_of(sk, avg));
}

/* Rates of a report: over the row in an interval, over the traffic's span in the summary. */
static __u64 rate_ns(const struct sink *sk, const struct sink_snap *a, const struct sink_snap *b,
		     enum run_report kind)
{
	__u64 first;
	__u64 span = kind == RUN_SUMMARY ? traffic_span(sk, a, &first) : 0;

	return span ? span : a->rs.t_ns - b->rs.t_ns;
}

void sink_report_json(struct sink *sk, struct jw *w, const struct sink_snap *a,
		      const struct sink_snap *b, enum run_report kind)
{
	__u64 dt = rate_ns(sk, a, b, kind), bya, byb;
	__u64 ra = sink_received(sk, a, &bya), rb = sink_received(sk, b, &byb);
	unsigned int has = sink_has(sk, kind);
	struct sink_drops dr;
	const struct sink_stats *d = &dr.prog;

	drops_between(sk, a, b, &dr);
	if (kind == RUN_SUMMARY)
		json_span(sk, w, a, b);
	else
		jw_str(w, "rate_basis", "interval");
	jw_u64(w, "rx_packets", ra - rb);
	jw_u64(w, "rx_bytes", bya - byb);
	jw_u64(w, "tx_packets", sk->ops->sends ? d->tx + d->redirect : 0);
	jw_double(w, "pps", counter_rate(ra, rb, dt));
	jw_double(w, "bps", counter_rate(bya, byb, dt) * 8);
	ctr_json(w, &sink_verdicts, d, has);
	json_parse(w, d, has);
	ctr_json(w, &sink_drop_reasons, &dr, has);
	if (sk->ops->json)
		sk->ops->json(sk, w, a, b, d, &dr, kind);
	if (a->ks && b->ks)
		kstats_json_delta(w, "kernel_stats", a->ks, b->ks);
	json_queues_cpus(sk, w, a, b, dt);
}

static void text_interval(struct sink *sk, const struct sink_snap *a, const struct sink_snap *b,
			  const struct sink_stats *d, const struct sink_drops *dr, unsigned int has)
{
	__u64 dt = a->rs.t_ns - b->rs.t_ns, bya, byb;
	__u64 ra = sink_received(sk, a, &bya), rb = sink_received(sk, b, &byb);
	char b1[32], b2[32], b3[32];

	printf("%8.2fs  rx %7s pps %7sbit/s  total %s",
	       (double)(a->rs.t_ns - sk->base.rs.t_ns) / 1e9,
	       fmt_si(b1, sizeof(b1), counter_rate(ra, rb, dt)),
	       fmt_si(b2, sizeof(b2), counter_rate(bya, byb, dt) * 8),
	       fmt_count(b3, sizeof(b3), ra - sink_received(sk, &sk->base, NULL)));
	if (sk->ops->text)
		sk->ops->text(sk, a, b, d, RUN_INTERVAL);
	/* Each drop reason the mode can have, when one of them moved. */
	if (ctr_sum(&sink_drop_reasons, dr, has)) {
		printf("  drops: ");
		ctr_text(stdout, &sink_drop_reasons, dr, has, " ");
	}
	if (ctr_sum(&sink_parse_errors, d, has))
		printf("  parse errors %s", FMT_COUNT(ctr_sum(&sink_parse_errors, d, has)));
	printf("\n");
}

static void text_summary(struct sink *sk, const struct sink_snap *a, const struct sink_snap *b,
			 const struct sink_stats *d, const struct sink_drops *dr, unsigned int has)
{
	__u64 dt = a->rs.t_ns - b->rs.t_ns, bya, byb;
	__u64 ra = sink_received(sk, a, &bya), rb = sink_received(sk, b, &byb);
	__u64 first = 0, span = traffic_span(sk, a, &first);
	char b1[32], b2[32], b3[32], pk[16];

	printf("xdp-sink %s %s: %s packets, %s bytes in %.2f s; stopped by %s\n", sk->mode_name,
	       FMT_NAME(sk->ifc.name), fmt_count(b1, sizeof(b1), ra - rb),
	       fmt_count(b2, sizeof(b2), bya - byb), (double)dt / 1e9, sk->run.stop_reason);
	if (span) {
		double avg = counter_rate(ra, rb, span);

		printf("  rate:     %s pps, %sbit/s over the %.3f s from the first packet (at %.3f s) to the last",
		       fmt_si(b3, sizeof(b3), avg),
		       fmt_si(b1, sizeof(b1), counter_rate(bya, byb, span) * 8), (double)span / 1e9,
		       first > b->rs.t_ns ? (double)(first - b->rs.t_ns) / 1e9 : 0.0);
		if (peak_of(sk, avg))
			printf("; %s pps in the busiest interval",
			       fmt_si(pk, sizeof(pk), peak_of(sk, avg)));
		printf("\n");
	}
	if (sink_unseen(sk, a, b))
		printf("  NOT SEEN: %s frames arrived on receive queues added during the run (from queue %u on), where the kernel ran no program; restart xdp-sink to cover them\n",
		       FMT_COUNT(sink_unseen(sk, a, b)), sk->nslots - 1);
	printf("  verdicts: ");
	ctr_text(stdout, &sink_verdicts, d, has, ", ");
	if (has & SINK_HAS_PARSE) {
		printf("\n  parsed:   ");
		ctr_text(stdout, &sink_parse, d, has, ", ");
		printf("; errors %s (", FMT_COUNT(ctr_sum(&sink_parse_errors, d, has)));
		ctr_text(stdout, &sink_parse_errors, d, has, ", ");
		printf(")");
		if (ctr_sum(&sink_parse_layers, d, has)) {
			printf("\n  carried in: ");
			ctr_text(stdout, &sink_parse_layers, d, has, ", ");
		}
	}
	printf("\n  drops:    ");
	ctr_text(stdout, &sink_drop_reasons, dr, has, ", ");
	printf("\n");
	if (sk->ops->text)
		sk->ops->text(sk, a, b, d, RUN_SUMMARY);
}

/* -v: where the packets arrived, by queue and by CPU, at rates over dt (the report's basis). */
static void text_queues_cpus(const struct sink *sk, const struct sink_snap *a,
			     const struct sink_snap *b, __u64 dt)
{
	struct sink_stats dq, dc;
	char b1[32], b2[32];
	unsigned int i, key;
	int c;

	for (i = 0; i < sk->nslots; i++) {
		key = slot_key(sk, i);
		stats_sub(&dq, &a->q[key], &b->q[key]);
		if (!dq.packets && key == XDPSG_MAX_QUEUES)
			continue;
		printf("    queue %-3s%-4u %12s packets %8s pps\n",
		       key == XDPSG_MAX_QUEUES ? ">=" : "",
		       key == XDPSG_MAX_QUEUES ? sk->nslots - 1 : key,
		       fmt_count(b1, sizeof(b1), dq.packets),
		       fmt_si(b2, sizeof(b2),
			      counter_rate(a->q[key].packets, b->q[key].packets, dt)));
	}
	for (c = 0; c < sk->ncpus; c++) {
		stats_sub(&dc, &a->cpu[c], &b->cpu[c]);
		printf("    cpu   %-7d %12s packets %8s pps\n", c,
		       fmt_count(b1, sizeof(b1), dc.packets),
		       fmt_si(b2, sizeof(b2),
			      counter_rate(a->cpu[c].packets, b->cpu[c].packets, dt)));
	}
}

/*
 * The line a person reads first, last: what was received and whether every
 * packet is accounted for. A mode with books of its own says its verdict.
 */
void sink_result_begin(const struct sink *sk, const struct sink_snap *a, const struct sink_snap *b)
{
	printf("RESULT: ");
	if (sk->detached_ns)
		printf("PROGRAM DETACHED from %s %.2f s into the run (removed, or replaced by another process: --force?): nothing counted after; ",
		       FMT_NAME(sk->ifc.name), (double)(sk->detached_ns - b->rs.t_ns) / 1e9);
	if (sink_unseen(sk, a, b))
		printf("NOT ALL SEEN: %s frames passed unseen on queues added during the run; ",
		       FMT_COUNT(sink_unseen(sk, a, b)));
}

static void text_result(const struct sink *sk, const struct sink_snap *a, const struct sink_snap *b,
			const struct sink_drops *dr, unsigned int has)
{
	__u64 n = sink_received(sk, a, NULL) - sink_received(sk, b, NULL);
	__u64 lost = ctr_sum(&sink_drop_reasons, dr, has);

	if (sk->ops->result) {
		sk->ops->result(sk, a, b, dr);
		return;
	}
	sink_result_begin(sk, a, b);
	printf("%s packets, each counted once (", FMT_COUNT(n));
	ctr_text(stdout, &sink_verdicts, &dr->prog, has, ", ");
	if (lost) {
		printf("); %s dropped on the way (", FMT_COUNT(lost));
		ctr_text_nonzero(stdout, &sink_drop_reasons, dr, has, ", ");
	}
	printf(")\n");
}

void sink_report_text(struct sink *sk, const struct sink_snap *a, const struct sink_snap *b,
		      enum run_report kind)
{
	const struct sink_cfg *cfg = sk->cfg;
	bool summary = kind == RUN_SUMMARY;
	unsigned int has = sink_has(sk, kind);
	struct sink_drops dr;

	drops_between(sk, a, b, &dr);
	if (summary)
		text_summary(sk, a, b, &dr.prog, &dr, has);
	else
		text_interval(sk, a, b, &dr.prog, &dr, has);
	if (cfg->verbose && (summary || !cfg->quiet))
		text_queues_cpus(sk, a, b, rate_ns(sk, a, b, kind));
	if (a->ks && b->ks && (summary || !cfg->quiet))
		kstats_print_delta(stdout, sk->ifc.name, a->ks, b->ks, cfg->verbose);
	if (summary)
		text_result(sk, a, b, &dr, has);
}

/* The program's per-queue counts of packets and bytes (not xsk: its sockets' are its own). */
static void metrics_rx_queues(const struct sink *sk, struct metrics_w *w, const struct sink_snap *a,
			      const struct sink_snap *b, unsigned int has)
{
	const struct ctr_desc *r;
	struct sink_stats dq;
	unsigned int i, key;
	char q[16];

	for (r = sink_rx.rows; r < sink_rx.rows + sink_rx.n; r++) {
		if (!ctr_shown(r, CTR_METRIC, has))
			continue;
		ctr_metric_head(w, &sink_rx, r);
		for (i = 0; i < sk->nslots; i++) {
			key = slot_key(sk, i);
			stats_sub(&dq, &a->q[key], &b->q[key]);
			snprintf(q, sizeof(q), "%u", key);
			ctr_metric_at(w, &sink_rx, r, "queue",
				      key == XDPSG_MAX_QUEUES ? "overflow" : q, &dq);
		}
	}
}

/* The OpenMetrics rows of a reading: the same counts as the report of a against b. */
void sink_report_metrics(struct sink *sk, struct metrics_w *w, const struct sink_snap *a,
			 const struct sink_snap *b, enum run_report kind)
{
	unsigned int has = sink_has(sk, kind);
	struct sink_drops dr;

	drops_between(sk, a, b, &dr);
	metrics_rx_queues(sk, w, a, b, has);
	ctr_metrics(w, &sink_verdicts, &dr.prog, has);
	ctr_metrics(w, &sink_drop_reasons, &dr, has);
	if (sk->ops->metrics)
		sk->ops->metrics(sk, w, a, b, kind);
}
