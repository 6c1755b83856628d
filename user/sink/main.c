// SPDX-License-Identifier: GPL-2.0
/*
 * xdp-sink: absorb or forward everything that arrives on an interface and
 * report exactly what happened, from the kernel's own counters.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "hist.h"
#include "cpu.h"
#include "iface.h"
#include "kstats.h"
#include "log.h"
#include "params.h"
#include "runtime.h"
#include "shared.h"
#include "seqtrack.h"
#include "stamp.h"
#include "fmt.h"
#include "json_writer.h"
#include "xdp_attach.h"
#include "xdp_sink.skel.h"
#include "xsk_queue.h"

#define PIN_ROOT "/sys/fs/bpf/xdp-sink"
#define SINK_NFIELDS (sizeof(struct sink_stats) / sizeof(__u64))

enum sink_mode { MODE_DROP, MODE_PASS, MODE_TX, MODE_REDIRECT, MODE_XSK };

struct sink_cfg {
	__u64 duration;
	__u64 count;
	__u64 interval;
	bool json;
	bool quiet;
	int verbose;
	int xdp_mode;
	bool force;
	bool pin;
	bool keep_pins;
	bool parse;
	bool kernel_stats;
	__u64 cost;
	const char *to;
	/* xsk */
	struct param_list queues, cpus;
	__u64 batch, ring_size;
	struct xsk_cli xsk;
	bool poll, no_verify;
	const char *hist;
};

static const struct sink_cfg defaults = {
	.interval = 1000000000ULL,
	.xdp_mode = XDPSG_MODE_NATIVE,
	.queues = { .n = 1, .ids = { 0 } },
	.batch = 64,
	.ring_size = 2048,
	.xsk = XSK_CLI_DEFAULTS,
};

static const struct param_enum xdp_modes[] = {
	{ "native", XDPSG_MODE_NATIVE },
	{ "skb", XDPSG_MODE_SKB },
	{ NULL, 0 },
};

#define OPT(f) offsetof(struct sink_cfg, f)

static const struct param_def common_opts[] = {
	{ "duration", 'd', PARAM_DURATION, OPT(duration), "TIME", "stop after this long", 1, 0 },
	{ "count", 'n', PARAM_COUNT, OPT(count), "PACKETS", "stop once this many have arrived", 1,
	  0 },
	{ "interval", 'i', PARAM_DURATION, OPT(interval), "TIME", "statistics period", 10000000ULL,
	  3600000000000ULL },
	{ "json", 'j', PARAM_FLAG, OPT(json), NULL, "one JSON object per line" },
	{ "quiet", 'q', PARAM_FLAG, OPT(quiet), NULL, "print only the final summary" },
	{ "verbose", 'v', PARAM_COUNTER, OPT(verbose), NULL,
	  "per-queue and per-CPU detail; twice for libbpf's messages" },
	{ "xdp-mode", 'm', PARAM_ENUM, OPT(xdp_mode), "MODE", "XDP attach mode: native or skb", 0,
	  0, xdp_modes },
	{ "force", 0, PARAM_FLAG, OPT(force), NULL,
	  "replace an XDP program already on the interface" },
	{ "pin", 0, PARAM_FLAG, OPT(pin), NULL, "pin maps under " PIN_ROOT "/IFNAME/" },
	{ "keep-pins", 0, PARAM_FLAG, OPT(keep_pins), NULL, "leave the pins in place at exit" },
	{ "parse", 0, PARAM_FLAG, OPT(parse), NULL,
	  "parse Ethernet/IPv4/IPv6/UDP per packet and count what is found" },
	{ "cost", 0, PARAM_UINT, OPT(cost), "NS", "busy work per packet in nanoseconds (slow sink)",
	  0, 1000000 },
	{ "kernel-stats", 0, PARAM_FLAG, OPT(kernel_stats), NULL,
	  "also show the interface's link, qdisc and veth counters" },
	{ NULL },
};

static const struct param_def redirect_opts[] = {
	{ "to", 0, PARAM_STRING, OPT(to), "IFNAME", "interface to redirect to (required)" },
	{ NULL },
};

static const struct param_def xsk_opts[] = {
	{ "queues", 0, PARAM_LIST, OPT(queues), "all|LIST",
	  "receive queues, one socket and thread each", 0, XDPSG_MAX_QUEUES - 1 },
	{ "cpus", 0, PARAM_LIST, OPT(cpus), "LIST",
	  "CPU of each queue's thread (default: the highest CPUs, queue 0 on the last)", 0, 4095 },
	{ "batch", 'b', PARAM_UINT, OPT(batch), "N", "descriptors per ring operation", 1, 2048 },
	{ "ring-size", 0, PARAM_UINT, OPT(ring_size), "N",
	  "rx ring entries (the fill ring gets twice as many)", 64, 16384 },
	XSK_CLI_PARAMS(struct sink_cfg, xsk),
	{ "poll", 0, PARAM_FLAG, OPT(poll), NULL, "sleep in poll() when the ring is empty" },
	{ "no-verify", 0, PARAM_FLAG, OPT(no_verify), NULL,
	  "count only: do not read stamps (no loss, order or latency checks)" },
	{ "hist", 0, PARAM_STRING, OPT(hist), "FILE",
	  "write the latency histogram to FILE (.csv or .json)" },
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
	.tables = { common_opts, xsk_opts, NULL },
};

static const struct param_cmd cmd_drop = {
	.name = "drop",
	.summary = "drop every packet in XDP (XDP_DROP) and count it",
	.positional = "IFNAME",
	.tables = { common_opts, NULL },
};

static const struct param_cmd cmd_pass = {
	.name = "pass",
	.summary = "count every packet and hand it to the kernel stack (XDP_PASS)",
	.positional = "IFNAME",
	.tables = { common_opts, NULL },
};

static const struct param_cmd cmd_tx = {
	.name = "tx",
	.summary = "bounce every packet back out of the same interface, MACs swapped (XDP_TX)",
	.description = "On a veth, bounced frames reach the peer only if the peer runs NAPI\n"
		       "(an XDP program attached, or GRO on); otherwise the kernel drops them\n"
		       "and xdp-sink reports them as xdp_tx_errors.",
	.positional = "IFNAME",
	.tables = { common_opts, NULL },
};

static const struct param_cmd cmd_redirect = {
	.name = "redirect",
	.summary = "forward every packet to another interface through a devmap (XDP_REDIRECT)",
	.description = "A veth target takes redirected frames only if its peer runs NAPI\n"
		       "(an XDP program attached, or GRO on). xdp-sink checks this before it\n"
		       "starts when the peer is in this namespace, and reports the kernel's\n"
		       "transmit errors (xdp_xmit_errors) on the target either way.",
	.positional = "IFNAME",
	.tables = { common_opts, redirect_opts, NULL },
};

static const struct param_cmd *const cmds[] = { &cmd_drop,     &cmd_pass, &cmd_tx,
						&cmd_redirect, &cmd_xsk,  NULL };

static const char *const prog_names[] = {
	[MODE_DROP] = "xdp_sink_drop", [MODE_PASS] = "xdp_sink_pass",
	[MODE_TX] = "xdp_sink_tx",     [MODE_REDIRECT] = "xdp_sink_redirect",
	[MODE_XSK] = "xdp_sink_xsk",
};

/* What one AF_XDP queue's thread publishes: written by it only, read by main. */
struct xq_counters {
	__u64 rx_packets; /* delivered to user space */
	__u64 rx_bytes;
	__u64 foreign; /* without a stamp */
	struct seqtrack_counts st;
} __attribute__((aligned(64)));

#define CNT_READ(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define CNT_SET(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

struct sink;

struct xq {
	struct sink *sk;
	unsigned int queue;
	int cpu;
	pthread_t tid;
	bool created;
	int err, ready, finished;
	struct xsk_queue *q;
	struct seqtrack *tr;
	struct hist *hist;
	struct xq_counters c;
	char accounting[160];
	bool accounting_ok;
};

/* Counters at one moment: the program's maps plus the kernel's own. */
struct snapshot {
	__u64 t_ns;
	struct sink_stats total;
	struct sink_stats q[XDPSG_STATS_SLOTS];
	struct sink_stats *cpu; /* per CPU, summed over queues */
	struct link_stats link;
	__u64 veth_rx_drops; /* dropped in the veth receive path after XDP (e.g. failed redirects) */
	__u64 xdp_tx_errors; /* XDP_TX frames the kernel failed to send */
	__u64 to_xmit; /* frames the redirect target transmitted */
	__u64 to_xmit_errors; /* frames the redirect target dropped */
	/* xsk: per queue, from the threads and the sockets' XDP_STATISTICS */
	struct xq_counters *xc;
	struct xdp_statistics *xs;
	struct kstats *ks; /* with --kernel-stats */
};

struct sink {
	const struct sink_cfg *cfg;
	enum sink_mode mode;
	const char *mode_name;
	struct iface ifc;
	struct iface to;
	struct xdp_sink_bpf *skel;
	struct xdp_attachment *att;
	struct iface_estats *estats, *to_estats;
	struct kstats_reader *kr;
	char pin_dir[128];
	bool pinned;
	int ncpus;
	unsigned int nslots; /* queue slots read: the device's rx queues (+ overflow) */
	struct sink_stats *buf; /* lookup buffer, one value per possible CPU */
	struct snapshot base, prev, cur;
	bool warned_tx, warned_xmit;
	const char *stop_reason;
	double peak_pps; /* highest interval rate */
	/* xsk */
	unsigned int nxq;
	struct xq *xq;
	int go, stop;
};

static int snapshot_alloc(struct snapshot *s, int ncpus, unsigned int nxq)
{
	s->cpu = calloc((size_t)ncpus, sizeof(*s->cpu));
	if (nxq) {
		s->xc = calloc(nxq, sizeof(*s->xc));
		s->xs = calloc(nxq, sizeof(*s->xs));
		if (!s->xc || !s->xs)
			return -ENOMEM;
	}
	return s->cpu ? 0 : -ENOMEM;
}

static void snapshot_free(struct snapshot *s)
{
	free(s->ks);
	free(s->cpu);
	free(s->xc);
	free(s->xs);
}

static void xq_counters_read(struct xq_counters *d, const struct xq_counters *s)
{
	const __u64 *src = (const __u64 *)s;
	__u64 *dst = (__u64 *)d;
	unsigned int i;

	for (i = 0; i < sizeof(*s) / sizeof(__u64); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

/* Totals over the AF_XDP queues of a snapshot. */
static void xq_total(const struct sink *sk, const struct snapshot *s, struct xq_counters *c,
		     struct xdp_statistics *x)
{
	unsigned int i;

	memset(c, 0, sizeof(*c));
	memset(x, 0, sizeof(*x));
	for (i = 0; i < sk->nxq; i++) {
		c->rx_packets += s->xc[i].rx_packets;
		c->rx_bytes += s->xc[i].rx_bytes;
		c->foreign += s->xc[i].foreign;
		seqtrack_counts_merge(&c->st, &s->xc[i].st);
		x->rx_dropped += s->xs[i].rx_dropped;
		x->rx_invalid_descs += s->xs[i].rx_invalid_descs;
		x->rx_ring_full += s->xs[i].rx_ring_full;
		x->rx_fill_ring_empty_descs += s->xs[i].rx_fill_ring_empty_descs;
	}
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

static int take_snapshot(struct sink *sk, struct snapshot *s)
{
	int fd = bpf_map__fd(sk->skel->maps.stats);
	unsigned int i, key;
	int c, err;

	s->t_ns = now_ns();
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
	for (i = 0; i < sk->nxq; i++) {
		xq_counters_read(&s->xc[i], &sk->xq[i].c);
		if (!sk->xq[i].q || xsk_queue_stats(sk->xq[i].q, &s->xs[i]))
			memset(&s->xs[i], 0, sizeof(s->xs[i]));
	}
	if (sk->to_estats && !iface_estats_read(sk->to_estats)) {
		s->to_xmit = iface_estat_sum(sk->to_estats, "tx_queue_", "_xdp_xmit", NULL);
		s->to_xmit_errors =
			iface_estat_sum(sk->to_estats, "tx_queue_", "_xdp_xmit_errors", NULL);
	}
	return 0;
}

/* Drops named by layer, as deltas between two snapshots. */
struct drops {
	__u64 xdp_aborted;
	__u64 redirect_no_target;
	__u64 xdp_tx_errors;
	__u64 xdp_xmit_errors;
	__u64 veth_rx_drops;
};

static void drops_between(const struct sink *sk, const struct snapshot *a, const struct snapshot *b,
			  struct drops *d)
{
	memset(d, 0, sizeof(*d));
	d->xdp_aborted = a->total.aborted - b->total.aborted;
	d->redirect_no_target = a->total.redirect_err - b->total.redirect_err;
	d->veth_rx_drops = a->veth_rx_drops - b->veth_rx_drops;
	if (sk->mode == MODE_TX)
		d->xdp_tx_errors = a->xdp_tx_errors - b->xdp_tx_errors;
	if (sk->mode == MODE_REDIRECT)
		d->xdp_xmit_errors = a->to_xmit_errors - b->to_xmit_errors;
}

static void json_drops(struct jw *w, const struct sink *sk, const struct drops *d)
{
	jw_obj(w, "drops");
	jw_u64(w, "xdp_aborted", d->xdp_aborted);
	if (sk->mode == MODE_REDIRECT) {
		jw_u64(w, "redirect_no_target", d->redirect_no_target);
		jw_u64(w, "xdp_xmit_errors", d->xdp_xmit_errors);
	}
	if (sk->mode == MODE_TX)
		jw_u64(w, "xdp_tx_errors", d->xdp_tx_errors);
	if (sk->estats)
		jw_u64(w, "veth_rx_drops", d->veth_rx_drops);
	jw_end_obj(w);
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

static __u64 parse_errors(const struct sink_stats *s)
{
	return s->err_eth + s->err_ip + s->err_ip6_ext + s->err_udp;
}

/* Packets the sink received: what the program saw, or in xsk mode what user space read. */
static __u64 received(const struct sink *sk, const struct snapshot *s)
{
	struct xq_counters c;
	struct xdp_statistics x;

	if (sk->mode != MODE_XSK)
		return s->total.packets;
	xq_total(sk, s, &c, &x);
	return c.rx_packets;
}

static __u64 received_bytes(const struct sink *sk, const struct snapshot *s)
{
	struct xq_counters c;
	struct xdp_statistics x;

	if (sk->mode != MODE_XSK)
		return s->total.bytes;
	xq_total(sk, s, &c, &x);
	return c.rx_bytes;
}

static void merged_hist(const struct sink *sk, struct hist *h)
{
	unsigned int i;

	hist_init(h);
	for (i = 0; i < sk->nxq; i++)
		if (sk->xq[i].hist)
			hist_merge(h, sk->xq[i].hist);
}

/*
 * Where every packet the program saw went, for the AF_XDP sink: delivered to
 * user space, or dropped at a named place. Returns the unexplained rest.
 */
static __s64 xsk_balance(const struct sink_stats *d, const struct xq_counters *c,
			 const struct xdp_statistics *x)
{
	return (__s64)d->packets - (__s64)(c->rx_packets + d->redirect_err + x->rx_dropped +
					   x->rx_ring_full + x->rx_invalid_descs);
}

static void xsk_deltas(const struct sink *sk, const struct snapshot *a, const struct snapshot *b,
		       struct xq_counters *c, struct xdp_statistics *x)
{
	struct xq_counters cb;
	struct xdp_statistics xb;
	__u64 *pc = (__u64 *)c;
	const __u64 *pb = (const __u64 *)&cb;
	unsigned int i;

	xq_total(sk, a, c, x);
	xq_total(sk, b, &cb, &xb);
	for (i = 0; i < sizeof(*c) / sizeof(__u64); i++)
		pc[i] -= pb[i];
	x->rx_dropped -= xb.rx_dropped;
	x->rx_invalid_descs -= xb.rx_invalid_descs;
	x->rx_ring_full -= xb.rx_ring_full;
	x->rx_fill_ring_empty_descs -= xb.rx_fill_ring_empty_descs;
}

static void json_xsk(struct jw *w, const struct sink *sk, const struct snapshot *a,
		     const struct snapshot *b, const struct sink_stats *d, bool summary)
{
	struct xq_counters c;
	struct xdp_statistics x;
	unsigned int i;

	xsk_deltas(sk, a, b, &c, &x);
	jw_u64(w, "xdp_packets", d->packets);
	if (!sk->cfg->no_verify) {
		jw_u64(w, "stamped", c.st.received);
		jw_u64(w, "foreign", c.foreign);
		/* Signed: a reordered packet filling an earlier gap takes one back. */
		jw_i64(w, "lost", (__s64)c.st.lost);
		jw_u64(w, "duplicates", c.st.duplicates);
		jw_u64(w, "reordered", c.st.reordered);
		jw_u64(w, "late", c.st.late);
		jw_u64(w, "restarts", c.st.restarts);
	}
	jw_obj(w, "drops");
	jw_u64(w, "no_socket", d->redirect_err);
	jw_u64(w, "xsk_fill_ring_empty", x.rx_dropped);
	jw_u64(w, "xsk_rx_ring_full", x.rx_ring_full);
	jw_u64(w, "xsk_rx_invalid", x.rx_invalid_descs);
	jw_end_obj(w);
	jw_obj(w, "xsk");
	jw_u64(w, "rx_dropped", x.rx_dropped);
	jw_u64(w, "rx_ring_full", x.rx_ring_full);
	jw_u64(w, "rx_fill_ring_empty_descs", x.rx_fill_ring_empty_descs);
	jw_u64(w, "rx_invalid_descs", x.rx_invalid_descs);
	jw_end_obj(w);
	if (summary)
		jw_i64(w, "unexplained", xsk_balance(d, &c, &x));
	if (summary && !sk->cfg->no_verify) {
		struct hist_summary hs;
		struct hist *h = malloc(sizeof(*h));

		if (h) {
			merged_hist(sk, h);
			hist_summarize(h, &hs);
			jw_obj(w, "latency_ns");
			jw_u64(w, "count", hs.count);
			jw_u64(w, "min", hs.min);
			jw_u64(w, "p50", hs.p50);
			jw_u64(w, "p90", hs.p90);
			jw_u64(w, "p99", hs.p99);
			jw_u64(w, "p999", hs.p999);
			jw_u64(w, "max", hs.max);
			jw_double(w, "mean", hs.mean);
			jw_end_obj(w);
			free(h);
		}
	}
	jw_arr(w, "sockets");
	for (i = 0; i < sk->nxq; i++) {
		const struct xq_counters *ca = &a->xc[i], *cb = &b->xc[i];

		jw_obj(w, NULL);
		jw_u64(w, "queue", sk->xq[i].queue);
		jw_u64(w, "cpu", (__u64)sk->xq[i].cpu);
		jw_str(w, "mode", sk->xq[i].q && sk->xq[i].q->zerocopy ? "zero-copy" : "copy");
		jw_u64(w, "rx_packets", ca->rx_packets - cb->rx_packets);
		jw_double(w, "pps",
			  counter_rate(ca->rx_packets, cb->rx_packets, a->t_ns - b->t_ns));
		if (!sk->cfg->no_verify) {
			jw_i64(w, "lost", (__s64)(ca->st.lost - cb->st.lost));
			jw_u64(w, "duplicates", ca->st.duplicates - cb->st.duplicates);
			jw_u64(w, "reordered", ca->st.reordered - cb->st.reordered);
		}
		jw_u64(w, "rx_ring_full", a->xs[i].rx_ring_full - b->xs[i].rx_ring_full);
		jw_u64(w, "fill_ring_empty", a->xs[i].rx_dropped - b->xs[i].rx_dropped);
		if (summary && sk->xq[i].accounting[0]) {
			jw_bool(w, "frames_balanced", sk->xq[i].accounting_ok);
			jw_str(w, "frame_accounting", sk->xq[i].accounting);
		}
		jw_end_obj(w);
	}
	jw_end_arr(w);
}

static void text_xsk(const struct sink *sk, const struct snapshot *a, const struct snapshot *b,
		     const struct sink_stats *d, bool summary)
{
	char l[7][24];
	struct xq_counters c;
	struct xdp_statistics x;
	unsigned int i;

	xsk_deltas(sk, a, b, &c, &x);
	if (!summary) {
		if (!sk->cfg->no_verify)
			printf("  lost %" PRId64 " dup %" PRIu64 " reord %" PRIu64
			       " foreign %" PRIu64,
			       (int64_t)c.st.lost, (uint64_t)c.st.duplicates,
			       (uint64_t)c.st.reordered, (uint64_t)c.foreign);
		if (x.rx_dropped || x.rx_ring_full || d->redirect_err)
			printf("  drops: fill empty %" PRIu64 " ring full %" PRIu64
			       " no socket %" PRIu64,
			       (uint64_t)x.rx_dropped, (uint64_t)x.rx_ring_full,
			       (uint64_t)d->redirect_err);
		return;
	}
	if (!sk->cfg->no_verify) {
		struct hist_summary hs;
		struct hist *h = malloc(sizeof(*h));

		printf("  checked:  %s stamped, %s foreign; lost %" PRIu64 ", duplicates %" PRIu64
		       ", reordered %" PRIu64 ", late %" PRIu64 ", restarts %" PRIu64 "\n",
		       fmt_count(l[0], sizeof(l[0]), c.st.received),
		       fmt_count(l[1], sizeof(l[1]), c.foreign), (uint64_t)c.st.lost,
		       (uint64_t)c.st.duplicates, (uint64_t)c.st.reordered, (uint64_t)c.st.late,
		       (uint64_t)c.st.restarts);
		if (h) {
			merged_hist(sk, h);
			hist_summarize(h, &hs);
			if (hs.count)
				printf("  latency:  min %s, p50 %s, p90 %s, p99 %s, p99.9 %s, max %s\n",
				       fmt_ns(l[0], 24, hs.min), fmt_ns(l[1], 24, hs.p50),
				       fmt_ns(l[2], 24, hs.p90), fmt_ns(l[3], 24, hs.p99),
				       fmt_ns(l[4], 24, hs.p999), fmt_ns(l[5], 24, hs.max));
			free(h);
		}
	}
	printf("  accounted: XDP saw %s = delivered %s + no socket %" PRIu64
	       " + fill ring empty %" PRIu64 " + rx ring full %" PRIu64 " + invalid %" PRIu64
	       "; unexplained %" PRId64 "\n",
	       fmt_count(l[0], sizeof(l[0]), d->packets),
	       fmt_count(l[1], sizeof(l[1]), c.rx_packets), (uint64_t)d->redirect_err,
	       (uint64_t)x.rx_dropped, (uint64_t)x.rx_ring_full, (uint64_t)x.rx_invalid_descs,
	       (int64_t)xsk_balance(d, &c, &x));
	for (i = 0; i < sk->nxq; i++)
		printf("    socket queue %-3u cpu %-3d %s mode %14s packets%s%s\n", sk->xq[i].queue,
		       sk->xq[i].cpu, sk->xq[i].q && sk->xq[i].q->zerocopy ? "zero-copy" : "copy",
		       fmt_count(l[0], sizeof(l[0]), a->xc[i].rx_packets - b->xc[i].rx_packets),
		       sk->xq[i].accounting[0] ? "  frames: " : "", sk->xq[i].accounting);
}

/* After the summary: the histogram file, and the frame accounting verdict. */
static int xsk_finish(struct sink *sk)
{
	const char *path = sk->cfg->hist;
	unsigned int i;
	int err = 0;

	if (path) {
		struct hist *h = malloc(sizeof(*h));
		FILE *f = fopen(path, "w");
		size_t len = strlen(path);

		if (!h || !f) {
			pr_warn("cannot write %s: %s\n", path, strerror(errno));
			err = -EIO;
		} else {
			merged_hist(sk, h);
			err = len > 5 && !strcmp(path + len - 5, ".json") ? hist_write_json(h, f) :
									    hist_write_csv(h, f);
		}
		if (f && fclose(f))
			err = -EIO;
		free(h);
	}
	for (i = 0; i < sk->nxq; i++)
		if (sk->xq[i].accounting[0] && !sk->xq[i].accounting_ok) {
			pr_warn("queue %u: frame accounting does not balance: %s\n",
				sk->xq[i].queue, sk->xq[i].accounting);
			err = -EIO;
		}
	return err;
}

/* Print one interval (a = now, b = previous) or the summary (b = base). */
static void report(struct sink *sk, const struct snapshot *a, const struct snapshot *b,
		   bool summary)
{
	const struct sink_cfg *cfg = sk->cfg;
	__u64 dt = a->t_ns - b->t_ns;
	double secs = (double)dt / 1e9;
	__u64 ra = received(sk, a), rb = received(sk, b);
	__u64 bya = received_bytes(sk, a), byb = received_bytes(sk, b);
	struct sink_stats d, dq, dc;
	struct drops dr;
	char b1[32], b2[32], b3[32];
	unsigned int i, key;
	int c;

	stats_sub(&d, &a->total, &b->total);
	drops_between(sk, a, b, &dr);
	if (cfg->json) {
		struct jw w;

		jw_begin(&w, stdout, summary ? "summary" : "interval");
		jw_str(&w, "tool", "xdp-sink");
		jw_str(&w, "mode", sk->mode_name);
		jw_str(&w, "ifname", sk->ifc.name);
		if (summary) {
			jw_str(&w, "stop_reason", sk->stop_reason);
			jw_double(&w, "peak_pps", sk->peak_pps);
		}
		jw_double(&w, "time_s", (double)(a->t_ns - sk->base.t_ns) / 1e9);
		jw_double(&w, "duration_s", secs);
		if (sk->mode == MODE_XSK) {
			struct xq_counters c;
			struct xdp_statistics x;

			xsk_deltas(sk, a, b, &c, &x);
			jw_u64(&w, "rx_packets", c.rx_packets);
			jw_u64(&w, "rx_bytes", c.rx_bytes);
			jw_u64(&w, "tx_packets", 0);
			jw_double(&w, "pps", (double)c.rx_packets * 1e9 / (double)(dt ? dt : 1));
			jw_double(&w, "bps", (double)c.rx_bytes * 8e9 / (double)(dt ? dt : 1));
			json_actions(&w, &d);
			if (cfg->parse)
				json_parse(&w, &d);
			json_xsk(&w, sk, a, b, &d, summary);
		} else {
			jw_u64(&w, "rx_packets", d.packets);
			jw_u64(&w, "rx_bytes", d.bytes);
			jw_u64(&w, "tx_packets", d.tx + d.redirect);
			jw_double(&w, "pps", counter_rate(a->total.packets, b->total.packets, dt));
			jw_double(&w, "bps", counter_rate(a->total.bytes, b->total.bytes, dt) * 8);
			json_actions(&w, &d);
			if (cfg->parse)
				json_parse(&w, &d);
			json_drops(&w, sk, &dr);
		}
		if (a->ks && b->ks) {
			struct kstats *kd = malloc(sizeof(*kd));

			if (kd) {
				kstats_delta(a->ks, b->ks, kd);
				kstats_json(&w, "kernel_stats", kd);
				free(kd);
			}
		}
		jw_arr(&w, "queues");
		for (i = 0; i < sk->nslots; i++) {
			key = slot_key(sk, i);
			stats_sub(&dq, &a->q[key], &b->q[key]);
			jw_obj(&w, NULL);
			if (key == XDPSG_MAX_QUEUES)
				jw_str(&w, "queue", "overflow");
			else
				jw_u64(&w, "queue", key);
			jw_u64(&w, "rx_packets", dq.packets);
			jw_u64(&w, "rx_bytes", dq.bytes);
			jw_double(&w, "pps",
				  counter_rate(a->q[key].packets, b->q[key].packets, dt));
			jw_end_obj(&w);
		}
		jw_end_arr(&w);
		jw_arr(&w, "cpus");
		for (c = 0; c < sk->ncpus; c++) {
			stats_sub(&dc, &a->cpu[c], &b->cpu[c]);
			jw_obj(&w, NULL);
			jw_u64(&w, "cpu", (__u64)c);
			jw_u64(&w, "rx_packets", dc.packets);
			jw_double(&w, "pps",
				  counter_rate(a->cpu[c].packets, b->cpu[c].packets, dt));
			jw_end_obj(&w);
		}
		jw_end_arr(&w);
		jw_finish(&w);
		return;
	}

	if (!summary) {
		printf("%8.2fs  rx %7s pps %7sbit/s  total %s",
		       (double)(a->t_ns - sk->base.t_ns) / 1e9,
		       fmt_si(b1, sizeof(b1), counter_rate(ra, rb, dt)),
		       fmt_si(b2, sizeof(b2), counter_rate(bya, byb, dt) * 8),
		       fmt_count(b3, sizeof(b3), ra - received(sk, &sk->base)));
		if (sk->mode == MODE_XSK)
			text_xsk(sk, a, b, &d, false);
		if (dr.xdp_aborted || dr.redirect_no_target || dr.xdp_tx_errors ||
		    dr.xdp_xmit_errors || dr.veth_rx_drops)
			printf("  drops: aborted %" PRIu64 " no_target %" PRIu64 " tx_err %" PRIu64
			       " xmit_err %" PRIu64 " veth_drops %" PRIu64,
			       (uint64_t)dr.xdp_aborted, (uint64_t)dr.redirect_no_target,
			       (uint64_t)dr.xdp_tx_errors, (uint64_t)dr.xdp_xmit_errors,
			       (uint64_t)dr.veth_rx_drops);
		if (cfg->parse && parse_errors(&d))
			printf("  parse errors %" PRIu64, (uint64_t)parse_errors(&d));
		printf("\n");
	} else {
		char pk[16];

		printf("xdp-sink %s %s: %s packets, %s bytes in %.2f s (%s pps average, %s peak, %sbit/s); stopped by %s\n",
		       sk->mode_name, sk->ifc.name, fmt_count(b1, sizeof(b1), ra - rb),
		       fmt_count(b2, sizeof(b2), bya - byb), secs,
		       fmt_si(b3, sizeof(b3), counter_rate(ra, rb, dt)),
		       fmt_si(pk, sizeof(pk), sk->peak_pps),
		       fmt_si(b3 + 16, 16, counter_rate(bya, byb, dt) * 8), sk->stop_reason);
		printf("  verdicts: drop %" PRIu64 ", pass %" PRIu64 ", tx %" PRIu64
		       ", redirect %" PRIu64 ", aborted %" PRIu64 "\n",
		       (uint64_t)d.drop, (uint64_t)d.pass, (uint64_t)d.tx, (uint64_t)d.redirect,
		       (uint64_t)d.aborted);
		if (cfg->parse)
			printf("  parsed:   udp4 %" PRIu64 ", udp6 %" PRIu64 ", other %" PRIu64
			       "; errors %" PRIu64 " (eth %" PRIu64 ", ip %" PRIu64
			       ", ip6_ext %" PRIu64 ", udp %" PRIu64 ")\n",
			       (uint64_t)d.udp4, (uint64_t)d.udp6, (uint64_t)d.other,
			       (uint64_t)parse_errors(&d), (uint64_t)d.err_eth, (uint64_t)d.err_ip,
			       (uint64_t)d.err_ip6_ext, (uint64_t)d.err_udp);
		printf("  drops:    xdp_aborted %" PRIu64, (uint64_t)dr.xdp_aborted);
		if (sk->mode == MODE_REDIRECT)
			printf(", redirect_no_target %" PRIu64 ", xdp_xmit_errors %" PRIu64
			       " (on %s)",
			       (uint64_t)dr.redirect_no_target, (uint64_t)dr.xdp_xmit_errors,
			       sk->to.name);
		if (sk->mode == MODE_TX)
			printf(", xdp_tx_errors %" PRIu64, (uint64_t)dr.xdp_tx_errors);
		if (sk->estats)
			printf(", veth_rx_drops %" PRIu64, (uint64_t)dr.veth_rx_drops);
		printf("\n");
		if (sk->mode == MODE_XSK)
			text_xsk(sk, a, b, &d, true);
	}
	if (cfg->verbose && (summary || !cfg->quiet)) {
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
	if (a->ks && b->ks && (summary || !cfg->quiet)) {
		struct kstats *kd = malloc(sizeof(*kd));

		if (kd) {
			kstats_delta(a->ks, b->ks, kd);
			kstats_print(stdout, sk->ifc.name, kd, cfg->verbose);
			free(kd);
		}
	}
	fflush(stdout);
}

/* Kernel-side losses the program cannot see: say once what they mean. */
static void explain_kernel_drops(struct sink *sk, const struct snapshot *s)
{
	if (sk->mode == MODE_TX && !sk->warned_tx && s->xdp_tx_errors > sk->base.xdp_tx_errors) {
		pr_warn("the kernel dropped bounced frames on %s (xdp_tx_errors): if it is a veth, its peer needs an XDP program or GRO on\n",
			sk->ifc.name);
		sk->warned_tx = true;
	}
	if (sk->mode == MODE_REDIRECT && !sk->warned_xmit &&
	    s->to_xmit_errors > sk->base.to_xmit_errors) {
		pr_warn("the kernel dropped frames redirected to %s (xdp_xmit_errors): %s\n",
			sk->to.name,
			strcmp(sk->to.driver, "veth") ?
				"the target's driver refused them" :
				"its veth peer needs an XDP program or GRO on (NAPI), or its ring is full");
		sk->warned_xmit = true;
	}
}

/* ---------------------------------------------------------------------------
 * AF_XDP: one socket, UMEM and thread per queue
 */

static int xq_setup(struct xq *x)
{
	const struct sink_cfg *cfg = x->sk->cfg;
	struct xsk_queue_opts o;
	__u32 key = x->queue;
	int fd, err;

	xsk_queue_opts_init(&o);
	o.ifname = x->sk->ifc.name;
	o.queue_id = x->queue;
	o.cpu = x->cpu;
	o.rx_size = (__u32)cfg->ring_size;
	o.fill_size = 2 * (__u32)cfg->ring_size;
	o.rx = true;
	o.tx = false;
	xsk_queue_apply_cli(&o, &cfg->xsk);
	o.batch = (__u32)cfg->batch;
	err = xsk_queue__create(&x->q, &o);
	if (err)
		return err;
	if (!cfg->no_verify) {
		x->tr = seqtrack__create(0);
		x->hist = malloc(sizeof(*x->hist));
		if (!x->tr || !x->hist)
			return -ENOMEM;
		hist_init(x->hist);
	}
	/* The program redirects this queue's packets into this socket from now on. */
	fd = xsk_queue_fd(x->q);
	if (bpf_map_update_elem(bpf_map__fd(x->sk->skel->maps.xsks), &key, &fd, 0)) {
		err = -errno;
		pr_warn("cannot add the socket of queue %u to the XSKMAP: %s\n", x->queue,
			strerror(-err));
		return err;
	}
	return 0;
}

/* Busy work per packet, the user-space twin of the XDP --cost knob. */
static void spin_until(__u64 t)
{
	while (now_ns() < t)
		;
}

static void *xq_thread(void *arg)
{
	struct xq *x = arg;
	struct sink *sk = x->sk;
	const struct sink_cfg *cfg = sk->cfg;
	__u32 batch = (__u32)cfg->batch, idle = 0;
	__u64 packets = 0, bytes = 0, foreign = 0, stop_seen = 0;
	struct pollfd pfd;
	int err, drained = 0;

	runtime_block_signals();
	err = cpu_pin_self(x->cpu);
	if (!err)
		err = xq_setup(x);
	x->err = err;
	__atomic_store_n(&x->ready, 1, __ATOMIC_RELEASE);
	if (err)
		goto out;
	pfd.fd = xsk_queue_fd(x->q);
	pfd.events = POLLIN;

	for (;;) {
		__u32 idx, i, n = xsk_queue_rx_peek(x->q, batch, &idx);
		__u64 now;

		if (!n) {
			/*
			 * Stopping: the program is detached, so once the ring stays
			 * empty every packet it redirected here has been read.
			 */
			if (__atomic_load_n(&sk->stop, __ATOMIC_ACQUIRE)) {
				if (++drained > 2)
					break;
				usleep(2000);
				continue;
			}
			xsk_queue_wakeup_rx(x->q);
			/* Spin while traffic flows; sleep in poll() when it does not. */
			if (cfg->poll || ++idle > 10000) {
				poll(&pfd, 1, 10);
				idle = 0;
			}
			continue;
		}
		idle = 0;
		drained = 0;
		now = now_ns();
		/* Stopping, but the ring never empties (the detach failed?): bound the drain. */
		if (__atomic_load_n(&sk->stop, __ATOMIC_ACQUIRE)) {
			if (!stop_seen)
				stop_seen = now;
			else if (now - stop_seen > 200000000ULL)
				break;
		}
		for (i = 0; i < n; i++) {
			const struct xdp_desc *d = xsk_queue_rx_desc(x->q, idx + i);
			const void *data = xsk_queue_frame_data(x->q, d->addr);
			struct xdpsg_stamp st;

			bytes += d->len;
			if (x->tr) {
				if (!stamp_read(data, d->len, &st)) {
					seqtrack_update(x->tr, &st);
					if (st.ts_ns <= now)
						hist_record(x->hist, now - st.ts_ns);
				} else {
					foreign++;
				}
			}
			if (cfg->cost)
				spin_until(now_ns() + cfg->cost);
		}
		packets += n;
		xsk_queue_rx_recycle(x->q, idx, n);
		xsk_queue_refill(x->q);
		/* Publish once per batch: plain stores, one writer. */
		CNT_SET(x->c.rx_packets, packets);
		CNT_SET(x->c.rx_bytes, bytes);
		CNT_SET(x->c.foreign, foreign);
		if (x->tr) {
			const __u64 *src = (const __u64 *)&x->tr->counts;
			__u64 *dst = (__u64 *)&x->c.st;

			for (i = 0; i < sizeof(x->c.st) / sizeof(__u64); i++)
				CNT_SET(dst[i], src[i]);
		}
	}
	x->accounting_ok = !frame_alloc_check(x->q->fa, x->accounting, sizeof(x->accounting));
out:
	__atomic_store_n(&x->finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int xsk_plan(struct sink *sk)
{
	const struct sink_cfg *cfg = sk->cfg;
	unsigned int i, n, ncpu = (unsigned int)cpu_online_count();
	unsigned int nrx = sk->ifc.rx_queues ? sk->ifc.rx_queues : 1;

	if (xsk_queue_check_cli(sk->ifc.driver, &cfg->xsk, cfg->ring_size))
		return -EINVAL;
	if (cfg->no_verify && cfg->hist) {
		pr_warn("--hist needs the stamps that --no-verify skips; drop one of them\n");
		return -EINVAL;
	}
	if (cfg->hist) {
		FILE *f = fopen(cfg->hist, "w");

		if (!f) {
			pr_warn("cannot write --hist %s: %s\n", cfg->hist, strerror(errno));
			return -EINVAL;
		}
		fclose(f);
	}
	n = cfg->queues.all ? nrx : cfg->queues.n;
	if (n > XDPSG_MAX_QUEUES)
		n = XDPSG_MAX_QUEUES;
	if (!cfg->cpus.all && cfg->cpus.n && cfg->cpus.n != n) {
		pr_warn("--cpus names %u CPUs for %u queues; give one CPU per queue\n", cfg->cpus.n,
			n);
		return -EINVAL;
	}
	sk->xq = calloc(n, sizeof(*sk->xq));
	if (!sk->xq)
		return -ENOMEM;
	sk->nxq = n;
	for (i = 0; i < n; i++) {
		struct xq *x = &sk->xq[i];

		x->sk = sk;
		x->queue = cfg->queues.all ? i : cfg->queues.ids[i];
		if (x->queue >= nrx) {
			pr_warn("%s has no queue %u (it has %u); pick from 0-%u\n", sk->ifc.name,
				x->queue, nrx, nrx - 1);
			return -EINVAL;
		}
		/*
		 * Default: the highest CPUs, away from a generator on the same
		 * machine (xdp-gen starts at CPU 0, and on veth the receive work
		 * runs in the sender's softirq on the sender's CPU).
		 */
		x->cpu = (cfg->cpus.n && !cfg->cpus.all) ? (int)cfg->cpus.ids[i] :
							   (int)(ncpu - 1 - i % ncpu);
		if (x->cpu >= (int)ncpu) {
			pr_warn("CPU %d is not online (CPUs 0-%u); fix --cpus\n", x->cpu, ncpu - 1);
			return -EINVAL;
		}
	}
	return 0;
}

static int xsk_start(struct sink *sk)
{
	unsigned int i;
	int err;

	for (i = 0; i < sk->nxq; i++) {
		err = -pthread_create(&sk->xq[i].tid, NULL, xq_thread, &sk->xq[i]);
		if (err) {
			pr_warn("cannot start a thread: %s\n", strerror(-err));
			return err;
		}
		sk->xq[i].created = true;
	}
	for (i = 0; i < sk->nxq; i++)
		while (!__atomic_load_n(&sk->xq[i].ready, __ATOMIC_ACQUIRE))
			usleep(1000);
	for (i = 0; i < sk->nxq; i++)
		if (sk->xq[i].err)
			return sk->xq[i].err;
	return 0;
}

/* Detach first, so nothing new arrives; then let every thread drain its ring. */
static void xsk_stop(struct sink *sk)
{
	unsigned int i;

	xdp_attachment__destroy(sk->att);
	sk->att = NULL;
	__atomic_store_n(&sk->stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < sk->nxq; i++) {
		if (sk->xq[i].created)
			pthread_join(sk->xq[i].tid, NULL);
		sk->xq[i].created = false;
	}
}

static void xsk_free(struct sink *sk)
{
	unsigned int i;

	if (!sk->xq)
		return;
	__atomic_store_n(&sk->stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < sk->nxq; i++) {
		struct xq *x = &sk->xq[i];

		if (x->created)
			pthread_join(x->tid, NULL);
		xsk_queue__destroy(x->q);
		seqtrack__destroy(x->tr);
		free(x->hist);
	}
	free(sk->xq);
	sk->xq = NULL;
}

static int check_bpffs(void)
{
	struct statfs st;

	if (statfs("/sys/fs/bpf", &st) || st.f_type != BPF_FS_MAGIC) {
		pr_warn("bpffs is not mounted at /sys/fs/bpf; mount it with 'mount -t bpf bpf /sys/fs/bpf' (inside 'ip netns exec' too)\n");
		return -ENOENT;
	}
	return 0;
}

static const char *const pin_names[] = { "stats", "tx_port", "xsks" };

static struct bpf_map *pin_map(struct sink *sk, unsigned int i)
{
	switch (i) {
	case 0:
		return sk->skel->maps.stats;
	case 1:
		return sk->skel->maps.tx_port;
	default:
		return sk->skel->maps.xsks;
	}
}

static void unpin_all(struct sink *sk, bool rmdir_too)
{
	char path[192];
	unsigned int i;

	for (i = 0; i < sizeof(pin_names) / sizeof(pin_names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", sk->pin_dir, pin_names[i]);
		unlink(path);
	}
	if (rmdir_too) {
		rmdir(sk->pin_dir);
		rmdir(PIN_ROOT); /* only succeeds when no other sink pins there */
	}
}

static bool pin_dir_busy(const char *dir)
{
	char path[192];
	unsigned int i;

	for (i = 0; i < sizeof(pin_names) / sizeof(pin_names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, pin_names[i]);
		if (!access(path, F_OK))
			return true;
	}
	return false;
}

/* 0, -EEXIST (stale pins, usage error) or another -errno. */
static int pin_maps(struct sink *sk)
{
	unsigned int i, n = sk->mode == MODE_REDIRECT ? 2 : sk->mode == MODE_XSK ? 3 : 1;
	char path[192];
	int err;

	err = check_bpffs();
	if (err)
		return -EEXIST;
	snprintf(sk->pin_dir, sizeof(sk->pin_dir), "%s/%s", PIN_ROOT, sk->ifc.name);
	if (pin_dir_busy(sk->pin_dir)) {
		if (!sk->cfg->force) {
			pr_warn("maps from an earlier run are still pinned in %s; remove them with 'rm -r %s' or use --force\n",
				sk->pin_dir, sk->pin_dir);
			return -EEXIST;
		}
		unpin_all(sk, false);
	}
	if ((mkdir(PIN_ROOT, 0700) && errno != EEXIST) ||
	    (mkdir(sk->pin_dir, 0700) && errno != EEXIST)) {
		err = -errno;
		pr_warn("cannot create %s: %s\n", sk->pin_dir, strerror(-err));
		return err;
	}
	sk->pinned = true;
	for (i = 0; i < n; i++) {
		if (sk->mode == MODE_XSK && i == 1)
			continue; /* no devmap in xsk mode */
		snprintf(path, sizeof(path), "%s/%s", sk->pin_dir, pin_names[i]);
		err = bpf_map__pin(pin_map(sk, i), path);
		if (!err && chmod(path, 0600))
			err = -errno;
		if (err) {
			pr_warn("cannot pin %s: %s\n", path, strerror(-err));
			return err;
		}
	}
	pr_info("maps pinned in %s (bpftool map dump pinned %s/stats)\n", sk->pin_dir, sk->pin_dir);
	return 0;
}

/* Report what --cost achieves, measured with BPF_PROG_RUN, then zero the counters. */
static int measure_cost(struct sink *sk)
{
	unsigned char pkt[60] = { [12] = 0x08, [13] = 0x00 };
	LIBBPF_OPTS(bpf_test_run_opts, topts, .data_in = pkt, .data_size_in = sizeof(pkt),
		    .repeat = 0);
	int fd = bpf_program__fd(sk->skel->progs.xdp_sink_drop);
	int map_fd = bpf_map__fd(sk->skel->maps.stats);
	unsigned int key;
	int err;

	/* About 5 ms of work, whatever the cost asked. */
	topts.repeat = (__u32)(5000000 / (sk->cfg->cost + 50)) + 1;
	err = bpf_prog_test_run_opts(fd, &topts);
	if (err) {
		pr_debug("cannot measure the per-packet cost: %s\n", strerror(errno));
		return 0;
	}
	pr_info("cost: %" PRIu64 " ns asked, %u ns measured per packet (BPF_PROG_RUN, %u runs)\n",
		(uint64_t)sk->cfg->cost, topts.duration, topts.repeat);
	memset(sk->buf, 0, (size_t)sk->ncpus * sizeof(*sk->buf));
	for (key = 0; key < XDPSG_STATS_SLOTS; key++)
		bpf_map_update_elem(map_fd, &key, sk->buf, BPF_ANY);
	return 0;
}

/* Preflight for redirect: the target exists, is up, and can take frames. */
static int check_target(struct sink *sk)
{
	const struct sink_cfg *cfg = sk->cfg;
	bool xdp = false, gro = false;
	char peer[IF_NAMESIZE];
	int err;

	if (!cfg->to) {
		pr_warn("redirect needs a target: add --to IFNAME\n");
		return -EINVAL;
	}
	if (!strcmp(cfg->to, sk->ifc.name)) {
		pr_warn("--to %s is the interface itself; use 'xdp-sink tx %s' to bounce packets, or name another interface\n",
			cfg->to, cfg->to);
		return -EINVAL;
	}
	err = iface_get(cfg->to, &sk->to);
	if (err) {
		pr_warn("redirect target '%s' not found in this namespace; check 'ip link'\n",
			cfg->to);
		return -EINVAL;
	}
	if (!sk->to.up) {
		pr_warn("redirect target %s is down; bring it up with 'ip link set dev %s up'\n",
			cfg->to, cfg->to);
		return -EINVAL;
	}
	if (strcmp(sk->to.driver, "veth"))
		return 0;
	err = iface_veth_peer(&sk->to, peer, sizeof(peer));
	if (err) {
		pr_info("the veth peer of %s is in another namespace, so its NAPI cannot be checked; watching %s's xdp_xmit_errors instead\n",
			cfg->to, cfg->to);
		return 0;
	}
	err = iface_napi_state(peer, &xdp, &gro);
	if (!err && !xdp && !gro) {
		pr_warn("%s cannot take redirected frames: its veth peer %s runs no NAPI; attach an XDP program to %s (e.g. xdp-sink pass %s) or turn GRO on ('ethtool -K %s gro on')\n",
			cfg->to, peer, peer, peer, peer);
		return -EINVAL;
	}
	return 0;
}

static int preflight(struct sink *sk)
{
	const struct sink_cfg *cfg = sk->cfg;
	int err;

	err = iface_preflight(sk->ifc.name, "sink", &sk->ifc);
	if (err)
		return err;
	if (sk->mode == MODE_REDIRECT) {
		err = check_target(sk);
		if (err)
			return err;
	}
	if (cfg->keep_pins && !cfg->pin) {
		pr_warn("--keep-pins needs --pin\n");
		return -EINVAL;
	}
	if (sk->mode == MODE_XSK)
		return xsk_plan(sk);
	return 0;
}

static int setup(struct sink *sk)
{
	const struct sink_cfg *cfg = sk->cfg;
	struct xdp_attach_opts aopts = {
		.tool = "xdp-sink",
		.own_prefix = "xdp_sink_",
		.ifname = sk->ifc.name,
		.ifindex = sk->ifc.ifindex,
		.mode = cfg->xdp_mode,
		.force = cfg->force,
	};
	struct bpf_program *p;
	__u32 key = 0, val;
	int err;

	sk->ncpus = libbpf_num_possible_cpus();
	if (sk->ncpus <= 0)
		return -EINVAL;
	sk->nslots = (sk->ifc.rx_queues ? sk->ifc.rx_queues : 1);
	if (sk->nslots > XDPSG_MAX_QUEUES)
		sk->nslots = XDPSG_MAX_QUEUES;
	sk->nslots++; /* the overflow slot */
	sk->buf = calloc((size_t)sk->ncpus, sizeof(*sk->buf));
	if (!sk->buf || snapshot_alloc(&sk->base, sk->ncpus, sk->nxq) ||
	    snapshot_alloc(&sk->prev, sk->ncpus, sk->nxq) ||
	    snapshot_alloc(&sk->cur, sk->ncpus, sk->nxq))
		return -ENOMEM;
	if (cfg->kernel_stats) {
		err = kstats_reader__open(sk->ifc.name, &sk->kr);
		if (err) {
			pr_warn("cannot read the kernel counters of %s: %s\n", sk->ifc.name,
				strerror(-err));
			return err;
		}
		sk->base.ks = calloc(1, sizeof(struct kstats));
		sk->prev.ks = calloc(1, sizeof(struct kstats));
		sk->cur.ks = calloc(1, sizeof(struct kstats));
		if (!sk->base.ks || !sk->prev.ks || !sk->cur.ks)
			return -ENOMEM;
	}

	/* Load: settings go into rodata first; only the chosen program loads. */
	sk->skel = xdp_sink_bpf__open();
	if (!sk->skel) {
		err = -errno;
		pr_warn("cannot open the BPF object: %s\n", strerror(-err));
		return err;
	}
	sk->skel->rodata->do_parse = cfg->parse;
	sk->skel->rodata->cost_ns = sk->mode == MODE_XSK ? 0 : cfg->cost;
	bpf_object__for_each_program(p, sk->skel->obj)
		bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), prog_names[sk->mode]));
	err = xdp_sink_bpf__load(sk->skel);
	if (err) {
		pr_warn("cannot load the BPF programs: %s (run with -vv for the verifier's log)\n",
			strerror(-err));
		return err;
	}
	if (cfg->cost && sk->mode == MODE_DROP)
		measure_cost(sk);

	if (sk->mode == MODE_REDIRECT) {
		val = (__u32)sk->to.ifindex;
		if (bpf_map_update_elem(bpf_map__fd(sk->skel->maps.tx_port), &key, &val, 0)) {
			err = -errno;
			pr_warn("cannot add %s to the devmap: %s\n", sk->to.name, strerror(-err));
			return err;
		}
		iface_estats__open(sk->to.name, &sk->to_estats);
	}
	if (!strcmp(sk->ifc.driver, "veth"))
		iface_estats__open(sk->ifc.name, &sk->estats);

	if (cfg->pin) {
		err = pin_maps(sk);
		if (err)
			return err;
	}
	/* Sockets first: the program finds them in the XSKMAP from its first packet. */
	if (sk->mode == MODE_XSK) {
		err = xsk_start(sk);
		if (err)
			return err;
	}
	/*
	 * The base is read before the program sees a packet: nothing can then be
	 * counted by the program before the base and read by user space after it.
	 */
	err = take_snapshot(sk, &sk->base);
	if (err)
		return err;
	return xdp_attachment__create(sk->skel->obj, prog_names[sk->mode], &aopts, &sk->att);
}

static void teardown(struct sink *sk)
{
	xdp_attachment__destroy(sk->att);
	sk->att = NULL;
	xsk_free(sk);
	if (sk->pinned && !sk->cfg->keep_pins)
		unpin_all(sk, true);
	else if (sk->pinned)
		pr_info("maps left pinned in %s (--keep-pins); remove with 'rm -r %s'\n",
			sk->pin_dir, sk->pin_dir);
	xdp_sink_bpf__destroy(sk->skel);
	iface_estats__close(sk->estats);
	iface_estats__close(sk->to_estats);
	kstats_reader__close(sk->kr);
	free(sk->buf);
	snapshot_free(&sk->base);
	snapshot_free(&sk->prev);
	snapshot_free(&sk->cur);
}

static void copy_snapshot(struct sink *sk, struct snapshot *dst, const struct snapshot *src)
{
	struct sink_stats *cpu = dst->cpu;
	struct xq_counters *xc = dst->xc;
	struct xdp_statistics *xs = dst->xs;
	struct kstats *ks = dst->ks;

	*dst = *src;
	dst->ks = ks;
	if (ks && src->ks)
		*ks = *src->ks;
	dst->cpu = cpu;
	dst->xc = xc;
	dst->xs = xs;
	memcpy(cpu, src->cpu, (size_t)sk->ncpus * sizeof(*cpu));
	if (sk->nxq) {
		memcpy(xc, src->xc, sk->nxq * sizeof(*xc));
		memcpy(xs, src->xs, sk->nxq * sizeof(*xs));
	}
}

static int run(struct sink *sk)
{
	const struct sink_cfg *cfg = sk->cfg;
	__u64 start, next_report, end = 0, tick;
	int err;

	/* Counters are from before the attach; the clock starts now (attaching takes time). */
	sk->base.t_ns = now_ns();
	copy_snapshot(sk, &sk->prev, &sk->base);
	start = sk->base.t_ns;
	next_report = start + cfg->interval;
	if (cfg->duration)
		end = start + cfg->duration;
	/* Wake often enough to stop close to --count; rates use measured times. */
	tick = cfg->count ? 10000000ULL : 100000000ULL;
	/* Attached (and, for xsk, every socket bound): scripts can start sending now. */
	if (cfg->json) {
		struct jw w;

		jw_begin(&w, stdout, "ready");
		jw_str(&w, "tool", "xdp-sink");
		jw_str(&w, "mode", sk->mode_name);
		jw_str(&w, "ifname", sk->ifc.name);
		jw_finish(&w);
	} else if (!cfg->quiet)
		printf("xdp-sink %s on %s (%s mode, queues %u)%s; Ctrl-C to stop\n", sk->mode_name,
		       sk->ifc.name, cfg->xdp_mode == XDPSG_MODE_SKB ? "skb" : "native",
		       sk->ifc.rx_queues, xdp_attachment_is_single(sk->att) ? "" : " via libxdp");
	fflush(stdout);

	while (!runtime_stop) {
		__u64 wake = next_report;

		if (end && end < wake)
			wake = end;
		if (now_ns() + tick < wake)
			wake = now_ns() + tick;
		runtime_sleep_until(wake);
		err = take_snapshot(sk, &sk->cur);
		if (err)
			return err;
		explain_kernel_drops(sk, &sk->cur);
		if (cfg->count && received(sk, &sk->cur) - received(sk, &sk->base) >= cfg->count) {
			sk->stop_reason = "count";
			break;
		}
		if (end && sk->cur.t_ns >= end) {
			sk->stop_reason = "duration";
			break;
		}
		if (sk->cur.t_ns >= next_report) {
			double pps = counter_rate(received(sk, &sk->cur), received(sk, &sk->prev),
						  sk->cur.t_ns - sk->prev.t_ns);

			if (pps > sk->peak_pps)
				sk->peak_pps = pps;
			if (!cfg->quiet)
				report(sk, &sk->cur, &sk->prev, false);
			copy_snapshot(sk, &sk->prev, &sk->cur);
			next_report += cfg->interval;
			if (next_report < sk->cur.t_ns)
				next_report = sk->cur.t_ns + cfg->interval;
		}
	}
	if (runtime_stop)
		sk->stop_reason = runtime_signal == SIGTERM ? "SIGTERM" :
				  runtime_signal == SIGHUP  ? "SIGHUP" :
							      "SIGINT";
	/* Detach first: the summary then holds every packet the program counted. */
	if (sk->mode == MODE_XSK) {
		xsk_stop(sk);
	} else {
		xdp_attachment__destroy(sk->att);
		sk->att = NULL;
	}
	err = take_snapshot(sk, &sk->cur);
	if (err)
		return err;
	report(sk, &sk->cur, &sk->base, true);
	if (sk->mode == MODE_XSK)
		return xsk_finish(sk);
	return 0;
}

int main(int argc, char **argv)
{
	struct sink_cfg cfg = defaults;
	const struct param_cmd *cmd;
	struct sink sk = { .cfg = &cfg };
	const char *ifname;
	int err;

	log_set_prog("xdp-sink");
	err = params_dispatch("xdp-sink",
			      "Absorb or forward packets in XDP and count them exactly.", cmds,
			      &defaults, argc, argv, &cmd);
	if (err >= 0)
		return err;
	err = params_parse("xdp-sink", cmd, argc - 1, argv + 1, &cfg, &defaults, &ifname);
	if (err)
		return err == PARAMS_EXIT ? 0 : 2;

	log_setup(cfg.quiet, cfg.verbose);
	sk.mode = cmd == &cmd_drop     ? MODE_DROP :
		  cmd == &cmd_pass     ? MODE_PASS :
		  cmd == &cmd_tx       ? MODE_TX :
		  cmd == &cmd_redirect ? MODE_REDIRECT :
					 MODE_XSK;
	sk.mode_name = cmd->name;
	snprintf(sk.ifc.name, sizeof(sk.ifc.name), "%s", ifname);

	/* Check everything that can be checked before touching the kernel. */
	err = preflight(&sk);
	if (err)
		return err == -ENOMEM ? 1 : 2;
	err = runtime_install_signals();
	if (err)
		return 1;

	/* Load, pin, attach; any failure undoes what was done. */
	err = setup(&sk);
	if (!err)
		err = run(&sk);
	teardown(&sk);
	if (err == -EBUSY || err == -EOPNOTSUPP || err == -EEXIST || err == -EINVAL ||
	    err == -ENODEV || (err == -ENOMEM && cfg.xsk.huge_pages))
		return 2;
	return err ? 1 : 0;
}
