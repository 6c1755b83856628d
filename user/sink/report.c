// SPDX-License-Identifier: GPL-2.0
/* Readings and the report lines every mode shares: verdicts, queues, CPUs, kernel counters. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fmt.h"
#include "kstats.h"
#include "runtime.h"
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
	const __u64 *pa = (const __u64 *)a, *pb = (const __u64 *)b;
	__u64 *r = (__u64 *)res;
	unsigned int i;

	for (i = 0; i < SINK_NFIELDS; i++)
		r[i] = pa[i] - pb[i];
}

static unsigned int slot_key(const struct sink *sk, unsigned int i)
{
	/* The last slot read is always the overflow slot for queues >= MAX. */
	return i + 1 == sk->nslots ? XDPSG_MAX_QUEUES : i;
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

static void drops_between(const struct sink *sk, const struct sink_snap *a,
			  const struct sink_snap *b, struct sink_drops *d)
{
	memset(d, 0, sizeof(*d));
	d->xdp_aborted = a->total.aborted - b->total.aborted;
	d->redirect_no_target = a->total.redirect_err - b->total.redirect_err;
	d->veth_rx_drops = a->veth_rx_drops - b->veth_rx_drops;
	if (sk->ops->drops)
		sk->ops->drops(sk, a, b, d);
}

static __u64 parse_errors(const struct sink_stats *s)
{
	return s->err_eth + s->err_ip + s->err_ip6_ext + s->err_udp;
}

static void json_actions(struct jw *w, const struct sink_stats *s)
{
	jw_obj(w, "actions");
	jw_u64(w, "drop", s->drop);
	jw_u64(w, "pass", s->pass);
	jw_u64(w, "tx", s->tx);
	jw_u64(w, "redirect", s->redirect);
	jw_u64(w, "aborted", s->aborted);
	jw_end_obj(w);
}

static void json_parse(struct jw *w, const struct sink_stats *s)
{
	jw_obj(w, "parse");
	jw_u64(w, "udp4", s->udp4);
	jw_u64(w, "udp6", s->udp6);
	jw_u64(w, "other", s->other);
	jw_obj(w, "errors");
	jw_u64(w, "eth", s->err_eth);
	jw_u64(w, "ip", s->err_ip);
	jw_u64(w, "ip6_ext", s->err_ip6_ext);
	jw_u64(w, "udp", s->err_udp);
	jw_end_obj(w);
	jw_end_obj(w);
}

static void json_queues_cpus(const struct sink *sk, struct jw *w, const struct sink_snap *a,
			     const struct sink_snap *b)
{
	__u64 dt = a->rs.t_ns - b->rs.t_ns;
	struct sink_stats dq, dc;
	unsigned int i, key;
	int c;

	jw_arr(w, "queues");
	for (i = 0; i < sk->nslots; i++) {
		key = slot_key(sk, i);
		stats_sub(&dq, &a->q[key], &b->q[key]);
		jw_obj(w, NULL);
		if (key == XDPSG_MAX_QUEUES)
			jw_str(w, "queue", "overflow");
		else
			jw_u64(w, "queue", key);
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
static __u64 traffic_span(const struct sink *sk, const struct sink_snap *a, __u64 *first)
{
	__u64 f = 0, l = 0;

	if (!sk->ops->span || !sk->ops->span(sk, a, &f, &l)) {
		if (!sk->seen)
			return 0;
		f = sk->first_rx_ns - SINK_TICK_NS;
		l = sk->last_rx_ns;
	}
	*first = f;
	return l > f ? l - f : 0;
}

static void json_span(struct sink *sk, struct jw *w, const struct sink_snap *a,
		      const struct sink_snap *b)
{
	__u64 first = 0, span = traffic_span(sk, a, &first);
	__u64 n = sink_received(sk, a, NULL) - sink_received(sk, b, NULL);

	jw_double(w, "active_s", (double)span / 1e9);
	jw_double(w, "active_pps", span ? (double)n * 1e9 / (double)span : 0);
	jw_double(w, "first_packet_s",
		  first > sk->base.rs.t_ns ? (double)(first - sk->base.rs.t_ns) / 1e9 : 0);
	jw_double(w, "peak_pps", sk->peak_pps);
}

void sink_report_json(struct sink *sk, struct jw *w, const struct sink_snap *a,
		      const struct sink_snap *b, enum run_report kind)
{
	__u64 dt = a->rs.t_ns - b->rs.t_ns, bya, byb;
	__u64 ra = sink_received(sk, a, &bya), rb = sink_received(sk, b, &byb);
	struct sink_stats d;
	struct sink_drops dr;

	stats_sub(&d, &a->total, &b->total);
	drops_between(sk, a, b, &dr);
	if (kind == RUN_SUMMARY)
		json_span(sk, w, a, b);
	jw_u64(w, "rx_packets", ra - rb);
	jw_u64(w, "rx_bytes", bya - byb);
	jw_u64(w, "tx_packets", sk->ops->sends ? d.tx + d.redirect : 0);
	jw_double(w, "pps", counter_rate(ra, rb, dt));
	jw_double(w, "bps", counter_rate(bya, byb, dt) * 8);
	json_actions(w, &d);
	if (sk->cfg->parse)
		json_parse(w, &d);
	sk->ops->json(sk, w, a, b, &d, &dr, kind);
	if (a->ks && b->ks)
		kstats_json_delta(w, "kernel_stats", a->ks, b->ks);
	json_queues_cpus(sk, w, a, b);
}

static void text_interval(struct sink *sk, const struct sink_snap *a, const struct sink_snap *b,
			  const struct sink_stats *d, const struct sink_drops *dr)
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
	if (dr->xdp_aborted || dr->redirect_no_target || dr->xdp_tx_errors || dr->xdp_xmit_errors ||
	    dr->veth_rx_drops)
		printf("  drops: aborted %" PRIu64 " no_target %" PRIu64 " tx_err %" PRIu64
		       " xmit_err %" PRIu64 " veth_drops %" PRIu64,
		       (uint64_t)dr->xdp_aborted, (uint64_t)dr->redirect_no_target,
		       (uint64_t)dr->xdp_tx_errors, (uint64_t)dr->xdp_xmit_errors,
		       (uint64_t)dr->veth_rx_drops);
	if (sk->cfg->parse && parse_errors(d))
		printf("  parse errors %" PRIu64, (uint64_t)parse_errors(d));
	printf("\n");
}

static void text_summary(struct sink *sk, const struct sink_snap *a, const struct sink_snap *b,
			 const struct sink_stats *d, const struct sink_drops *dr)
{
	__u64 dt = a->rs.t_ns - b->rs.t_ns, bya, byb;
	__u64 ra = sink_received(sk, a, &bya), rb = sink_received(sk, b, &byb);
	__u64 first = 0, span = traffic_span(sk, a, &first);
	char b1[32], b2[32], b3[32], pk[16];

	printf("xdp-sink %s %s: %s packets, %s bytes in %.2f s; stopped by %s\n", sk->mode_name,
	       sk->ifc.name, fmt_count(b1, sizeof(b1), ra - rb),
	       fmt_count(b2, sizeof(b2), bya - byb), (double)dt / 1e9, sk->run.stop_reason);
	if (span)
		printf("  rate:     %s pps, %sbit/s over the %.3f s from the first packet (at %.3f s) to the last; %s pps peak interval\n",
		       fmt_si(b3, sizeof(b3), counter_rate(ra, rb, span)),
		       fmt_si(b1, sizeof(b1), counter_rate(bya, byb, span) * 8), (double)span / 1e9,
		       first > b->rs.t_ns ? (double)(first - b->rs.t_ns) / 1e9 : 0.0,
		       fmt_si(pk, sizeof(pk), sk->peak_pps));
	printf("  verdicts: drop %" PRIu64 ", pass %" PRIu64 ", tx %" PRIu64 ", redirect %" PRIu64
	       ", aborted %" PRIu64 "\n",
	       (uint64_t)d->drop, (uint64_t)d->pass, (uint64_t)d->tx, (uint64_t)d->redirect,
	       (uint64_t)d->aborted);
	if (sk->cfg->parse)
		printf("  parsed:   udp4 %" PRIu64 ", udp6 %" PRIu64 ", other %" PRIu64
		       "; errors %" PRIu64 " (eth %" PRIu64 ", ip %" PRIu64 ", ip6_ext %" PRIu64
		       ", udp %" PRIu64 ")\n",
		       (uint64_t)d->udp4, (uint64_t)d->udp6, (uint64_t)d->other,
		       (uint64_t)parse_errors(d), (uint64_t)d->err_eth, (uint64_t)d->err_ip,
		       (uint64_t)d->err_ip6_ext, (uint64_t)d->err_udp);
	printf("  drops:    xdp_aborted %" PRIu64, (uint64_t)dr->xdp_aborted);
	if (sk->ops->text_drops)
		sk->ops->text_drops(sk, dr);
	if (sk->estats)
		printf(", veth_rx_drops %" PRIu64, (uint64_t)dr->veth_rx_drops);
	printf("\n");
	if (sk->ops->text)
		sk->ops->text(sk, a, b, d, RUN_SUMMARY);
}

/* -v: where the packets arrived, by queue and by CPU. */
static void text_queues_cpus(const struct sink *sk, const struct sink_snap *a,
			     const struct sink_snap *b)
{
	__u64 dt = a->rs.t_ns - b->rs.t_ns;
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
		       key == XDPSG_MAX_QUEUES ? ">=" : "", key,
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

void sink_report_text(struct sink *sk, const struct sink_snap *a, const struct sink_snap *b,
		      enum run_report kind)
{
	const struct sink_cfg *cfg = sk->cfg;
	bool summary = kind == RUN_SUMMARY;
	struct sink_stats d;
	struct sink_drops dr;

	stats_sub(&d, &a->total, &b->total);
	drops_between(sk, a, b, &dr);
	if (summary)
		text_summary(sk, a, b, &d, &dr);
	else
		text_interval(sk, a, b, &d, &dr);
	if (cfg->verbose && (summary || !cfg->quiet))
		text_queues_cpus(sk, a, b);
	if (a->ks && b->ks && (summary || !cfg->quiet))
		kstats_print_delta(stdout, sk->ifc.name, a->ks, b->ks, cfg->verbose);
}

/* The program's per-queue counts of packets or bytes. */
static void metrics_rx_queues(const struct sink *sk, struct metrics_w *w, const char *name,
			      const char *help, const struct sink_snap *a,
			      const struct sink_snap *b, bool bytes)
{
	unsigned int i, key;
	__u64 v;

	metrics_family(w, name, "counter", NULL, help);
	for (i = 0; i < sk->nslots; i++) {
		key = slot_key(sk, i);
		v = bytes ? a->q[key].bytes - b->q[key].bytes :
			    a->q[key].packets - b->q[key].packets;
		if (key == XDPSG_MAX_QUEUES)
			metrics_u64(w, name, "queue", "overflow", v);
		else
			metrics_u64_at(w, name, "queue", key, v);
	}
}

static void metrics_verdicts(struct metrics_w *w, const struct sink_stats *d)
{
	static const char *const name = "xdp_sink_verdicts_total";

	metrics_family(w, name, "counter", NULL,
		       "XDP verdicts of the sink's program, by verdict (aborted is also a drop).");
	metrics_u64(w, name, "verdict", "drop", d->drop);
	metrics_u64(w, name, "verdict", "pass", d->pass);
	metrics_u64(w, name, "verdict", "tx", d->tx);
	metrics_u64(w, name, "verdict", "redirect", d->redirect);
	metrics_u64(w, name, "verdict", "aborted", d->aborted);
}

static void metrics_drops(const struct sink *sk, struct metrics_w *w, const struct sink_snap *a,
			  const struct sink_snap *b, const struct sink_drops *dr)
{
	static const char *const name = "xdp_sink_drops_total";

	metrics_family(w, name, "counter", NULL,
		       "Packets lost on the receive path, by the layer that dropped them.");
	metrics_u64(w, name, "reason", "xdp_aborted", dr->xdp_aborted);
	metrics_u64(w, name, "reason", "redirect_no_target", dr->redirect_no_target);
	metrics_u64(w, name, "reason", "xdp_tx_errors", dr->xdp_tx_errors);
	metrics_u64(w, name, "reason", "xdp_xmit_errors", dr->xdp_xmit_errors);
	if (sk->estats)
		metrics_u64(w, name, "reason", "veth_rx_drops", dr->veth_rx_drops);
	if (sk->ops->metrics_drops)
		sk->ops->metrics_drops(sk, w, a, b);
}

/* The OpenMetrics rows of a reading: the same counts as the report of a against b. */
void sink_report_metrics(struct sink *sk, struct metrics_w *w, const struct sink_snap *a,
			 const struct sink_snap *b, enum run_report kind)
{
	struct sink_stats d;
	struct sink_drops dr;

	stats_sub(&d, &a->total, &b->total);
	drops_between(sk, a, b, &dr);
	/* What arrived, unless the mode counts that itself (xsk: what the sockets got). */
	if (!sk->ops->metrics_rx) {
		metrics_rx_queues(sk, w, "xdp_sink_rx_packets_total",
				  "Packets received, by receive queue.", a, b, false);
		metrics_rx_queues(sk, w, "xdp_sink_rx_bytes_total",
				  "Bytes received, by receive queue.", a, b, true);
	}
	metrics_verdicts(w, &d);
	metrics_drops(sk, w, a, b, &dr);
	if (sk->ops->metrics)
		sk->ops->metrics(sk, w, a, b, kind);
}
