// SPDX-License-Identifier: GPL-2.0
/*
 * xdp-sink: absorb or forward everything that arrives on an interface and
 * report exactly what happened, from the kernel's own counters.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "iface.h"
#include "log.h"
#include "params.h"
#include "runtime.h"
#include "shared.h"
#include "stats.h"
#include "xdp_attach.h"
#include "xdp_sink.skel.h"

#define PIN_ROOT "/sys/fs/bpf/xdp-sink"
#define SINK_NFIELDS (sizeof(struct sink_stats) / sizeof(__u64))

enum sink_mode { MODE_DROP, MODE_PASS, MODE_TX, MODE_REDIRECT };

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
	__u64 cost;
	const char *to;
};

static const struct sink_cfg defaults = {
	.interval = 1000000000ULL,
	.xdp_mode = XDPSG_MODE_NATIVE,
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
	{ NULL },
};

static const struct param_def redirect_opts[] = {
	{ "to", 0, PARAM_STRING, OPT(to), "IFNAME", "interface to redirect to (required)" },
	{ NULL },
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

static const struct param_cmd *const cmds[] = { &cmd_drop, &cmd_pass, &cmd_tx, &cmd_redirect,
						NULL };

static const char *const prog_names[] = {
	[MODE_DROP] = "xdp_sink_drop",
	[MODE_PASS] = "xdp_sink_pass",
	[MODE_TX] = "xdp_sink_tx",
	[MODE_REDIRECT] = "xdp_sink_redirect",
};

/* Counters at one moment: the program's maps plus the kernel's own. */
struct snapshot {
	__u64 t_ns;
	struct sink_stats total;
	struct sink_stats q[XDPSG_STATS_SLOTS];
	struct sink_stats *cpu; /* per CPU, summed over queues */
	struct link_stats link;
	__u64 veth_rx_drops; /* frames the veth could not queue for us (ring full) */
	__u64 xdp_tx_errors; /* XDP_TX frames the kernel failed to send */
	__u64 to_xmit; /* frames the redirect target transmitted */
	__u64 to_xmit_errors; /* frames the redirect target dropped */
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
	char pin_dir[128];
	bool pinned;
	int ncpus;
	unsigned int nslots; /* queue slots read: the device's rx queues (+ overflow) */
	struct sink_stats *buf; /* lookup buffer, one value per possible CPU */
	struct snapshot base, prev, cur;
	bool warned_tx, warned_xmit;
	const char *stop_reason;
};

static int snapshot_alloc(struct snapshot *s, int ncpus)
{
	s->cpu = calloc((size_t)ncpus, sizeof(*s->cpu));
	return s->cpu ? 0 : -ENOMEM;
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
	if (sk->estats && !iface_estats_read(sk->estats)) {
		s->veth_rx_drops = iface_estat_sum(sk->estats, "rx_queue_", "_drops", NULL);
		s->xdp_tx_errors = iface_estat_sum(sk->estats, "rx_queue_", "_xdp_tx_errors", NULL);
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
	__u64 veth_rx_ring_full;
};

static void drops_between(const struct sink *sk, const struct snapshot *a, const struct snapshot *b,
			  struct drops *d)
{
	memset(d, 0, sizeof(*d));
	d->xdp_aborted = a->total.aborted - b->total.aborted;
	d->redirect_no_target = a->total.redirect_err - b->total.redirect_err;
	d->veth_rx_ring_full = a->veth_rx_drops - b->veth_rx_drops;
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
		jw_u64(w, "veth_rx_ring_full", d->veth_rx_ring_full);
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

/* Print one interval (a = now, b = previous) or the summary (b = base). */
static void report(struct sink *sk, const struct snapshot *a, const struct snapshot *b,
		   bool summary)
{
	const struct sink_cfg *cfg = sk->cfg;
	__u64 dt = a->t_ns - b->t_ns;
	double secs = (double)dt / 1e9;
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
		if (summary)
			jw_str(&w, "stop_reason", sk->stop_reason);
		jw_double(&w, "time_s", (double)(a->t_ns - sk->base.t_ns) / 1e9);
		jw_double(&w, "duration_s", secs);
		jw_u64(&w, "rx_packets", d.packets);
		jw_u64(&w, "rx_bytes", d.bytes);
		jw_u64(&w, "tx_packets", d.tx + d.redirect);
		jw_double(&w, "pps", stats_rate(a->total.packets, b->total.packets, dt));
		jw_double(&w, "bps", stats_rate(a->total.bytes, b->total.bytes, dt) * 8);
		json_actions(&w, &d);
		if (cfg->parse)
			json_parse(&w, &d);
		json_drops(&w, sk, &dr);
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
			jw_double(&w, "pps", stats_rate(a->q[key].packets, b->q[key].packets, dt));
			jw_end_obj(&w);
		}
		jw_end_arr(&w);
		jw_arr(&w, "cpus");
		for (c = 0; c < sk->ncpus; c++) {
			stats_sub(&dc, &a->cpu[c], &b->cpu[c]);
			jw_obj(&w, NULL);
			jw_u64(&w, "cpu", (__u64)c);
			jw_u64(&w, "rx_packets", dc.packets);
			jw_double(&w, "pps", stats_rate(a->cpu[c].packets, b->cpu[c].packets, dt));
			jw_end_obj(&w);
		}
		jw_end_arr(&w);
		jw_finish(&w);
		return;
	}

	if (!summary) {
		printf("%8.2fs  rx %7s pps %7sbit/s  total %s",
		       (double)(a->t_ns - sk->base.t_ns) / 1e9,
		       fmt_si(b1, sizeof(b1), stats_rate(a->total.packets, b->total.packets, dt)),
		       fmt_si(b2, sizeof(b2), stats_rate(a->total.bytes, b->total.bytes, dt) * 8),
		       fmt_count(b3, sizeof(b3), a->total.packets - sk->base.total.packets));
		if (dr.xdp_aborted || dr.redirect_no_target || dr.xdp_tx_errors ||
		    dr.xdp_xmit_errors || dr.veth_rx_ring_full)
			printf("  drops: aborted %" PRIu64 " no_target %" PRIu64 " tx_err %" PRIu64
			       " xmit_err %" PRIu64 " ring_full %" PRIu64,
			       (uint64_t)dr.xdp_aborted, (uint64_t)dr.redirect_no_target,
			       (uint64_t)dr.xdp_tx_errors, (uint64_t)dr.xdp_xmit_errors,
			       (uint64_t)dr.veth_rx_ring_full);
		if (cfg->parse && parse_errors(&d))
			printf("  parse errors %" PRIu64, (uint64_t)parse_errors(&d));
		printf("\n");
	} else {
		printf("xdp-sink %s %s: %s packets, %s bytes in %.2f s (%s pps, %sbit/s); stopped by %s\n",
		       sk->mode_name, sk->ifc.name, fmt_count(b1, sizeof(b1), d.packets),
		       fmt_count(b2, sizeof(b2), d.bytes), secs,
		       fmt_si(b3, sizeof(b3), stats_rate(a->total.packets, b->total.packets, dt)),
		       fmt_si(b3 + 16, 16, stats_rate(a->total.bytes, b->total.bytes, dt) * 8),
		       sk->stop_reason);
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
			printf(", veth_rx_ring_full %" PRIu64, (uint64_t)dr.veth_rx_ring_full);
		printf("\n");
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
				      stats_rate(a->q[key].packets, b->q[key].packets, dt)));
		}
		for (c = 0; c < sk->ncpus; c++) {
			stats_sub(&dc, &a->cpu[c], &b->cpu[c]);
			printf("    cpu   %-7d %12s packets %8s pps\n", c,
			       fmt_count(b1, sizeof(b1), dc.packets),
			       fmt_si(b2, sizeof(b2),
				      stats_rate(a->cpu[c].packets, b->cpu[c].packets, dt)));
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
	unsigned int i, n = sk->mode == MODE_REDIRECT ? 2 : 1;
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
	char missing[64], name[IF_NAMESIZE];
	int err;

	snprintf(name, sizeof(name), "%s", sk->ifc.name);
	if (!iface_have_caps(missing, sizeof(missing))) {
		pr_warn("missing privileges: needs %s (run as root)\n", missing);
		return -EPERM;
	}
	err = iface_get(name, &sk->ifc);
	if (err == -ENAMETOOLONG || err == -ENODEV) {
		pr_warn("interface '%s' not found in this namespace; check 'ip link' (in the lab: testenv/testenv.sh exec sink -- ...)\n",
			name);
		return -EINVAL;
	}
	if (err) {
		pr_warn("cannot inspect interface %s: %s\n", name, strerror(-err));
		return err;
	}
	if (!sk->ifc.up) {
		pr_warn("interface %s is down; bring it up with 'ip link set dev %s up'\n", name,
			name);
		return -EINVAL;
	}
	if (sk->mode == MODE_REDIRECT) {
		err = check_target(sk);
		if (err)
			return err;
	}
	if (cfg->keep_pins && !cfg->pin) {
		pr_warn("--keep-pins needs --pin\n");
		return -EINVAL;
	}
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
	if (!sk->buf || snapshot_alloc(&sk->base, sk->ncpus) ||
	    snapshot_alloc(&sk->prev, sk->ncpus) || snapshot_alloc(&sk->cur, sk->ncpus))
		return -ENOMEM;

	/* Load: settings go into rodata first; only the chosen program loads. */
	sk->skel = xdp_sink_bpf__open();
	if (!sk->skel) {
		err = -errno;
		pr_warn("cannot open the BPF object: %s\n", strerror(-err));
		return err;
	}
	sk->skel->rodata->do_parse = cfg->parse;
	sk->skel->rodata->cost_ns = cfg->cost;
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
	return xdp_attachment__create(sk->skel->obj, prog_names[sk->mode], &aopts, &sk->att);
}

static void teardown(struct sink *sk)
{
	xdp_attachment__destroy(sk->att);
	sk->att = NULL;
	if (sk->pinned && !sk->cfg->keep_pins)
		unpin_all(sk, true);
	else if (sk->pinned)
		pr_info("maps left pinned in %s (--keep-pins); remove with 'rm -r %s'\n",
			sk->pin_dir, sk->pin_dir);
	xdp_sink_bpf__destroy(sk->skel);
	iface_estats__close(sk->estats);
	iface_estats__close(sk->to_estats);
	free(sk->buf);
	free(sk->base.cpu);
	free(sk->prev.cpu);
	free(sk->cur.cpu);
}

static void copy_snapshot(struct sink *sk, struct snapshot *dst, const struct snapshot *src)
{
	struct sink_stats *cpu = dst->cpu;

	*dst = *src;
	dst->cpu = cpu;
	memcpy(cpu, src->cpu, (size_t)sk->ncpus * sizeof(*cpu));
}

static int run(struct sink *sk)
{
	const struct sink_cfg *cfg = sk->cfg;
	__u64 start, next_report, end = 0, tick;
	int err;

	err = take_snapshot(sk, &sk->base);
	if (err)
		return err;
	copy_snapshot(sk, &sk->prev, &sk->base);
	start = sk->base.t_ns;
	next_report = start + cfg->interval;
	if (cfg->duration)
		end = start + cfg->duration;
	/* Wake often enough to stop close to --count; rates use measured times. */
	tick = cfg->count ? 10000000ULL : 100000000ULL;
	if (!cfg->quiet && !cfg->json)
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
		if (cfg->count && sk->cur.total.packets - sk->base.total.packets >= cfg->count) {
			sk->stop_reason = "count";
			break;
		}
		if (end && sk->cur.t_ns >= end) {
			sk->stop_reason = "duration";
			break;
		}
		if (sk->cur.t_ns >= next_report) {
			if (!cfg->quiet)
				report(sk, &sk->cur, &sk->prev, false);
			copy_snapshot(sk, &sk->prev, &sk->cur);
			next_report += cfg->interval;
			if (next_report < sk->cur.t_ns)
				next_report = sk->cur.t_ns + cfg->interval;
		}
	}
	if (runtime_stop) {
		sk->stop_reason = runtime_signal == SIGTERM ? "SIGTERM" :
				  runtime_signal == SIGHUP  ? "SIGHUP" :
							      "SIGINT";
		err = take_snapshot(sk, &sk->cur);
		if (err)
			return err;
	}
	report(sk, &sk->cur, &sk->base, true);
	return 0;
}

static void usage_tool(FILE *out)
{
	params_usage_tool(out, "xdp-sink",
			  "Absorb or forward packets in XDP and count them exactly.", cmds);
}

int main(int argc, char **argv)
{
	struct sink_cfg cfg = defaults;
	const struct param_cmd *cmd;
	struct sink sk = { .cfg = &cfg };
	const char *ifname;
	int err;

	log_set_prog("xdp-sink");
	if (argc < 2) {
		fprintf(stderr,
			"xdp-sink: missing command; usage: xdp-sink drop|pass|tx|redirect [OPTIONS] IFNAME (see xdp-sink --help)\n");
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage_tool(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--man-options")) {
		params_man_tool(stdout, cmds, &defaults);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("xdp-sink %s\n", XDPSG_VERSION);
		return 0;
	}
	cmd = params_find_cmd(cmds, argv[1]);
	if (!cmd) {
		fprintf(stderr,
			"xdp-sink: unknown command '%s'; use drop, pass, tx or redirect (see xdp-sink --help)\n",
			argv[1]);
		return 2;
	}
	err = params_parse("xdp-sink", cmd, argc - 1, argv + 1, &cfg, &defaults, &ifname);
	if (err)
		return err == PARAMS_EXIT ? 0 : 2;

	log_set_level(cfg.quiet	       ? LOG_LEVEL_WARN :
		      cfg.verbose >= 2 ? LOG_LEVEL_TRACE :
		      cfg.verbose      ? LOG_LEVEL_DEBUG :
					 LOG_LEVEL_INFO);
	log_route_libbpf();
	sk.mode = cmd == &cmd_drop ? MODE_DROP :
		  cmd == &cmd_pass ? MODE_PASS :
		  cmd == &cmd_tx   ? MODE_TX :
				     MODE_REDIRECT;
	sk.mode_name = cmd->name;
	snprintf(sk.ifc.name, sizeof(sk.ifc.name), "%s", ifname);

	/* Check everything that can be checked before touching the kernel. */
	err = preflight(&sk);
	if (err)
		return 2;
	err = runtime_install_signals();
	if (err)
		return 1;

	/* Load, pin, attach; any failure undoes what was done. */
	err = setup(&sk);
	if (!err)
		err = run(&sk);
	teardown(&sk);
	if (err == -EBUSY || err == -EOPNOTSUPP || err == -EEXIST || err == -EINVAL)
		return 2;
	return err ? 1 : 0;
}
