// SPDX-License-Identifier: GPL-2.0
/*
 * xdp-gen kernel: BPF_PROG_RUN with live frames. Each thread runs
 * xdp_gen.bpf.c on its own CPU; the program rewrites every frame and
 * redirects it out of the interface. What happens after the redirect is read
 * from tracepoints that count this process's frames only, or where they
 * cannot attach, from the device's own counters (veth), which count every
 * sender's.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/cpu.h"
#include "base/fmt.h"
#include "base/log.h"
#include "base/runtime.h"
#include "gen.h"
#include "gen_prog.h"
#include "kernel.h"
#include "marks.h"
#include "replay.h"
#include "report/counter_desc.h"
#include "xsk/umem.h"
#include "xsk_tx.h"

/* The mode's failures read from the kernel's books, in gen_failures.x[]. */
enum { KERN_XMIT_ERR, KERN_NOT_QUEUED };

struct kernel_snap {
	__u64 xdp_xmit, xdp_xmit_errors; /* the device's own ndo_xdp_xmit counters */
	struct gen_xmit_stats tp; /* what the raw tracepoints saw for the target */
};

static bool kernel_has_live_frames(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return true; /* cannot tell: let BPF_PROG_RUN answer */
	return major > 5 || (major == 5 && minor >= 18);
}

/* The target must transmit redirected frames: for veth, its peer needs NAPI. */
static int kernel_check_peer(struct gen *g)
{
	struct kernel_gen *k = kg(g);
	struct peer_napi pn;
	int err;

	if (strcmp(g->ifc.driver, "veth"))
		return 0;
	err = iface_peer_napi(&g->ifc, g->cfg->fix_peer, &pn);
	if (err) {
		pr_info("the veth peer of %s is out of reach (%s), so its NAPI cannot be checked; failed transmits show as xdp_xmit_errors\n",
			g->ifc.name, strerror(-err));
		return 0;
	}
	snprintf(k->peer_desc, sizeof(k->peer_desc), "%s%s%s", pn.name,
		 pn.netns[0] ? " in netns " : "", pn.netns);
	if (pn.fixed) {
		k->peer_fixed = true;
		pr_info("--fix-peer: GRO turned on at %s so it can receive redirected frames; turned off again at exit\n",
			k->peer_desc);
		return 0;
	}
	if (!pn.xdp && !pn.gro) {
		fprintf(stderr,
			"xdp-gen: %s cannot transmit redirected frames: its veth peer %s runs no NAPI; attach an XDP program there (e.g. xdp-sink drop %s), turn GRO on (ethtool -K %s gro on), or add --fix-peer\n",
			g->ifc.name, k->peer_desc, pn.name, pn.name);
		return -EINVAL;
	}
	return 0;
}

static int kernel_plan(struct gen *g, unsigned int maxq)
{
	unsigned int ncpu = (unsigned int)cpu_online_count();
	int err = gen_plan_threads(g, maxq);

	if (err)
		return err;
	/* Kernel mode keeps per-CPU state: one thread per CPU. */
	if (g->nthreads > ncpu && !g->cfg->cpus.n) {
		fprintf(stderr,
			"xdp-gen: --threads %u is more than the %u CPUs; use at most %u (one thread per CPU)\n",
			g->nthreads, ncpu, ncpu);
		return -EINVAL;
	}
	g->m = calloc(1, sizeof(struct kernel_gen));
	return g->m ? 0 : -ENOMEM;
}

static int kernel_preflight(struct gen *g)
{
	if (g->cfg->pcap)
		return gen_replay_refuse_kernel();
	if (!kernel_has_live_frames()) {
		fprintf(stderr,
			"xdp-gen: kernel mode needs BPF_PROG_RUN live frames (Linux 5.18 or newer); use 'xdp-gen xsk'\n");
		return -EINVAL;
	}
	if (pkt_gen_max_len(g->th[0].pg) > XDPSG_LIVE_FRAME_MAX) {
		unsigned int len = pkt_gen_max_len(g->th[0].pg);

		/* The mode that sends it: xsk up to 16 UMEM frames (gen/xsk_tx.h), qdisc the MTU. */
		fprintf(stderr,
			"xdp-gen: frames of %u bytes are larger than live frames allow (%d, a kernel limit); use -s %d or less, or '%s', which sends them\n",
			len, XDPSG_LIVE_FRAME_MAX, XDPSG_LIVE_FRAME_MAX,
			len <= GEN_XSK_SLOT_MAX * UMEM_FRAME_SIZE_MAX ? "xdp-gen xsk" :
									"xdp-gen qdisc");
		return -EINVAL;
	}
	return kernel_check_peer(g);
}

/*
 * xdp_redirect_err fires only on a failure: always attached, it costs
 * nothing while all goes well. xdp_devmap_xmit fires for every flushed bulk
 * (about 3% of the rate here, measured): loaded and attached with
 * --own-counts, or where the device keeps no xmit counters of its own to
 * count with.
 */
static bool per_bulk(const struct gen *g)
{
	return g->cfg->own_counts || !kg(g)->estats;
}

/* The generator, and the raw tracepoints that see what happens after it. */
static int kernel_load(struct gen *g, bool tracing)
{
	struct kernel_gen *k = kg(g);

	k->skel = xdp_gen_bpf__open();
	if (!k->skel)
		return -errno;
	gen_prog_set_rodata(k->skel, g->th[0].pg, (__u32)g->ifc.ifindex);
	k->skel->rodata->clock_every = g->cfg->batch; /* one clock read per batch */
	/* The stamps' clock is this process's CLOCK_MONOTONIC, in a time namespace too. */
	k->skel->rodata->clock_off = g->clock.bpf_offset_ns;
	/* Tracepoints are global; ifindexes are per namespace: count only our own flushes. */
	k->skel->rodata->owner_tgid = (__u32)getpid();
	/* --stream: the dispatcher runs here, each stream's xdp_gen in an object of its own. */
	gen_prog_set_dispatch(k->skel, g->nstreams, kernel_streams_paced(g));
	bpf_program__set_autoload(k->skel->progs.xdp_gen_bare, false);
	bpf_program__set_autoload(k->skel->progs.xdp_gen_rtt, false);
	bpf_program__set_autoload(k->skel->progs.gen_devmap_xmit, tracing && per_bulk(g));
	bpf_program__set_autoload(k->skel->progs.gen_redirect_err, tracing);
	if (tracing && per_bulk(g)) {
		int err = gen_prog_set_netdev_off(k->skel);

		if (err)
			return err;
	}
	gen_prog_size_marks(k->skel, k->mark_base[g->nthreads]);
	return xdp_gen_bpf__load(k->skel);
}

/* Each thread's range of the marks' slots: a batch of its marks each. */
static int mark_ranges(struct gen *g)
{
	struct kernel_gen *k = kg(g);
	unsigned int i;

	k->mark_base = calloc(g->nthreads + 1, sizeof(*k->mark_base));
	if (!k->mark_base)
		return -ENOMEM;
	for (i = 0; i < g->nthreads; i++)
		k->mark_base[i + 1] = k->mark_base[i] + gen_marks_batch(&g->th[i]);
	return 0;
}

/*
 * Test build only (build/test-hooks/xdp-gen): XDPSG_TEST_NO_TRACEPOINTS=1
 * counts as on a kernel without the tracepoints, with the device's counters.
 */
static bool no_tracepoints_hook(void)
{
#ifdef XDPSG_TEST_HOOKS
	return getenv("XDPSG_TEST_NO_TRACEPOINTS") != NULL;
#else
	return false;
#endif
}

/* The raw tracepoints that kernel_load() loaded (per_bulk() says which). */
static void kernel_attach_tracepoints(struct gen *g)
{
	struct kernel_gen *k = kg(g);
	bool bulk = per_bulk(g);

	if (bpf_program__fd(k->skel->progs.gen_redirect_err) < 0 || no_tracepoints_hook())
		return;
	k->tp_links[TP_ERR] = bpf_program__attach(k->skel->progs.gen_redirect_err);
	if (bulk)
		k->tp_links[TP_XMIT] = bpf_program__attach(k->skel->progs.gen_devmap_xmit);
	if ((bulk && !k->tp_links[TP_XMIT]) || !k->tp_links[TP_ERR]) {
		pr_debug("xdp tracepoints not attachable; counting with the device's counters\n");
		bpf_link__destroy(k->tp_links[0]);
		bpf_link__destroy(k->tp_links[1]);
		k->tp_links[0] = k->tp_links[1] = NULL;
	}
}

static int kernel_setup(struct gen *g)
{
	struct kernel_gen *k = kg(g);
	int ncpus = libbpf_num_possible_cpus();
	unsigned int i;
	int err;

	err = mark_ranges(g);
	if (err)
		return err;
	/* Before the load: whether the device counts its xmits decides what loads. */
	iface_estats__open(g->ifc.name, &k->estats);
	log_libbpf_expect_failures(true);
	err = kernel_load(g, true);
	log_libbpf_expect_failures(false);
	if (err) {
		/* A kernel without BTF or the tracepoints: load the generator alone. */
		pr_debug("loading with the xdp tracepoints failed (%s); counting without them\n",
			 strerror(-err));
		xdp_gen_bpf__destroy(k->skel);
		err = kernel_load(g, false);
	}
	if (err) {
		pr_warn("cannot load the generator's BPF program: %s (run with -vv for the verifier's log)\n",
			strerror(-err));
		return err;
	}
	err = gen_prog_fill_maps(k->skel, g->th[0].pg);
	for (i = 0; !err && !g->nstreams && i < g->nthreads; i++)
		err = gen_prog_set_cpu(k->skel, g->th[i].pg, g->th[i].cpu, g->th[i].pace.rate,
				       g->th[i].pace.quota) ?:
		      gen_prog_set_shape(k->skel, g->th[i].cpu, &g->th[i].pace,
					 (__u32)g->cfg->batch);
	if (err) {
		pr_warn("cannot fill the generator's maps: %s\n", strerror(-err));
		return err;
	}
	if (g->nstreams) {
		err = kernel_streams_setup(g);
		if (err)
			return err;
	}
	k->prog_fd = bpf_program__fd(g->nstreams ? k->skel->progs.xdp_gen_streams :
						   k->skel->progs.xdp_gen);
	k->frame_len = pkt_gen_max_len(g->th[0].pg);
	k->frames = calloc(g->nthreads, k->frame_len);
	k->cpu_vals = calloc((size_t)ncpus, sizeof(*k->cpu_vals));
	k->tp_vals = calloc((size_t)ncpus, sizeof(*k->tp_vals));
	if (!k->frames || !k->cpu_vals || !k->tp_vals)
		return -ENOMEM;
	for (i = 0; i < g->nthreads; i++)
		gen_prog_input_frame(g->th[i].pg, k->frames + (size_t)i * k->frame_len);
	kernel_attach_tracepoints(g);
	/*
	 * Without the tracepoints the books are the device's counters. veth
	 * keeps them per receive queue of the peer, picked by CPU; with more
	 * sending CPUs than queues two CPUs share a counter and the kernel
	 * loses increments (measured: 13,104 of 22.4M errors missing).
	 */
	if (!k->tp_links[TP_XMIT] && !strcmp(g->ifc.driver, "veth") &&
	    g->nthreads > g->ifc.tx_queues)
		pr_warn("%u threads on %s with %u queue%s: veth's xdp_xmit counters lose counts when CPUs share a queue, so 'unexplained' may not be 0; use a lab with --queues %u\n",
			g->nthreads, g->ifc.name, g->ifc.tx_queues,
			g->ifc.tx_queues == 1 ? "" : "s", g->nthreads);
	return 0;
}

static const char *kernel_describe(const struct gen *g)
{
	(void)g;
	return "live frames";
}

/* What the program redirected, counted by the program itself. */
static void sample_program(struct gen *g, struct gen_snapshot *s)
{
	struct kernel_gen *k = kg(g);
	__u32 key = 0;
	unsigned int i;

	if (g->nstreams) {
		kernel_streams_sample(g, s);
		return;
	}
	bpf_map__lookup_elem(k->skel->maps.cpu_state, &key, sizeof(key), k->cpu_vals,
			     (size_t)libbpf_num_possible_cpus() * sizeof(*k->cpu_vals), 0);
	for (i = 0; i < g->nthreads; i++) {
		const struct gen_cpu *v = &k->cpu_vals[g->th[i].cpu];

		s->per[i].sent = v->packets;
		s->per[i].bytes = v->bytes;
		s->per[i].m[KERN_REDIRECT_ERR] = v->redirect_err;
	}
}

/* The device's own ndo_xdp_xmit counters (veth); kept as they were if it cannot be read. */
static void read_device_xmit(struct kernel_gen *k, struct kernel_snap *m)
{
	if (k->estats && !iface_estats_read(k->estats)) {
		m->xdp_xmit = iface_estat_sum(k->estats, "tx_queue_", "_xdp_xmit", NULL);
		m->xdp_xmit_errors =
			iface_estat_sum(k->estats, "tx_queue_", "_xdp_xmit_errors", NULL);
	}
}

/*
 * The kernel's counts first, then the program's: a frame is counted by the
 * program before the kernel reports it, so while threads run the program's
 * count is never behind (the difference is in flight, not unexplained).
 */
static void kernel_sample(struct gen *g, struct gen_snapshot *s)
{
	struct kernel_gen *k = kg(g);
	struct kernel_snap *m = s->m;
	int c, n = libbpf_num_possible_cpus();
	__u32 key = 0;

	read_device_xmit(k, m);
	memset(&m->tp, 0, sizeof(m->tp));
	if (k->tp_links[TP_ERR] &&
	    !bpf_map__lookup_elem(k->skel->maps.xmit_stats, &key, sizeof(key), k->tp_vals,
				  (size_t)n * sizeof(*k->tp_vals), 0))
		for (c = 0; c < n; c++) {
			m->tp.sent += k->tp_vals[c].sent;
			m->tp.drops += k->tp_vals[c].drops;
			m->tp.err += k->tp_vals[c].err;
		}
	sample_program(g, s);
}

/*
 * Every tick as well: if the device goes away, its counters end at their
 * last reading, and what the program sent after it is unconfirmed. One
 * ethtool read per tick keeps that to a tick's worth of frames.
 */
static const char *kernel_check(struct gen *g, struct gen_snapshot *cur)
{
	read_device_xmit(kg(g), cur->m);
	return NULL;
}

/*
 * sent + marks = transmitted + failed, this run's frames only where the
 * tracepoints count them (own), else the device's counters, which count
 * every sender's. The marks (marks.h) take the frames' way, so the kernel
 * counts them with the frames; sent is the frames alone.
 * failed = xmit errors (the device took the frames and dropped them) +
 * frames the kernel could not queue to it at all (device down, frame too
 * big: xdp_redirect_err), which the device never counts.
 */
struct books {
	bool have, own;
	/*
	 * Summary only (interval readings are not simultaneous): the device
	 * counted frames that were not this run's; if they are in the figures
	 * (not own), the figures are shared and the run's own cannot be told.
	 */
	bool others, shared;
	__u64 foreign; /* the device's frames that were not this run's */
	__u64 sent, marks, xmit, xmit_err, not_queued, failed, unconfirmed, unexplained;
	__u64 dev_xmit, dev_xmit_err; /* the device's counters: every sender's */
	struct gen_xmit_stats tp;
};

static void books_between(const struct gen *g, const struct gen_snapshot *a,
			  const struct gen_snapshot *b, bool final, struct books *bk)
{
	const struct kernel_snap *ma = a->m, *mb = b->m;
	const struct kernel_gen *k = kg(g);
	__u64 accounted, dev_total, ours;

	bk->own = k->tp_links[TP_XMIT] != NULL;
	bk->have = bk->own || k->estats;
	bk->sent = a->total.sent - b->total.sent;
	bk->marks = a->total.marks - b->total.marks;
	bk->dev_xmit = ma->xdp_xmit - mb->xdp_xmit;
	bk->dev_xmit_err = ma->xdp_xmit_errors - mb->xdp_xmit_errors;
	bk->tp.sent = ma->tp.sent - mb->tp.sent;
	bk->tp.drops = ma->tp.drops - mb->tp.drops;
	bk->tp.err = ma->tp.err - mb->tp.err;
	bk->xmit = bk->own ? bk->tp.sent : bk->dev_xmit;
	bk->xmit_err = bk->own ? bk->tp.drops : bk->dev_xmit_err;
	bk->not_queued = bk->tp.err;
	bk->failed = bk->xmit_err + bk->not_queued;
	dev_total = bk->dev_xmit + bk->dev_xmit_err;
	ours = bk->own ? bk->tp.sent + bk->tp.drops : bk->sent + bk->marks - bk->not_queued;
	bk->others = final && k->estats && dev_total > ours;
	bk->foreign = bk->others ? dev_total - ours : 0;
	bk->shared = bk->others && !bk->own;
	accounted = bk->xmit + bk->failed;
	/*
	 * Sent but not (yet) reported by the kernel: in flight at an interval's
	 * reading; at the end, after the interface went away (its counters
	 * stopped at their last reading, up to a tick before), unconfirmed
	 * rather than unexplained. A shared figure can exceed what was sent:
	 * never a negative difference.
	 */
	bk->unconfirmed = bk->unexplained = 0;
	if (!bk->have || bk->sent + bk->marks <= accounted)
		return;
	if (!final || (g->run.gone_ns && !bk->own))
		bk->unconfirmed = bk->sent + bk->marks - accounted;
	else
		bk->unexplained = bk->sent + bk->marks - accounted;
}

static void kernel_json(struct gen *g, struct jw *w, const struct gen_snapshot *a,
			const struct gen_snapshot *b, enum run_report kind)
{
	struct books bk;

	books_between(g, a, b, kind == RUN_SUMMARY, &bk);
	if (bk.have) {
		jw_u64(w, "transmitted", bk.xmit);
		jw_u64(w, "failed", bk.failed);
		jw_u64(w, "unconfirmed", bk.unconfirmed);
		jw_u64(w, "unexplained", bk.unexplained);
		jw_str(w, "counted_by", bk.own ? "tracepoints" : "device");
	}
	if (bk.have && kind == RUN_SUMMARY) {
		jw_bool(w, "other_senders", bk.others);
		jw_bool(w, "shared", bk.shared);
	}
	if (kg(g)->tp_links[TP_ERR]) {
		jw_obj(w, "tracepoints");
		if (kg(g)->tp_links[TP_XMIT]) {
			jw_u64(w, "devmap_xmit_sent", bk.tp.sent);
			jw_u64(w, "devmap_xmit_drops", bk.tp.drops);
		}
		jw_u64(w, "redirect_err", bk.tp.err);
		jw_end_obj(w);
	}
}

static void kernel_failures_read(struct gen *g, const struct gen_snapshot *a,
				 const struct gen_snapshot *b, struct gen_failures *f)
{
	struct books bk;

	books_between(g, a, b, false, &bk);
	f->x[KERN_XMIT_ERR] = bk.xmit_err;
	f->x[KERN_NOT_QUEUED] = bk.not_queued;
}

static void kernel_json_kernel(struct gen *g, struct jw *w, const struct gen_snapshot *a,
			       const struct gen_snapshot *b)
{
	struct books bk;

	if (!kg(g)->estats)
		return;
	books_between(g, a, b, false, &bk);
	jw_u64(w, "xdp_xmit", bk.dev_xmit);
	jw_u64(w, "xdp_xmit_errors", bk.dev_xmit_err);
}

static void kernel_text(struct gen *g, const struct gen_snapshot *a, const struct gen_snapshot *b,
			enum run_report kind)
{
	struct books bk;

	/* An interval's failures are in its drops list. */
	if (kind == RUN_INTERVAL)
		return;
	books_between(g, a, b, true, &bk);
	if (bk.have)
		printf("  sent %s + marks %s%stransmitted %s + failed %s (xdp_xmit_errors %s: %s; not queued, device down or frame too big: %s)%s%s\n"
		       "  counted by %s\n",
		       FMT_COUNT(bk.sent), FMT_COUNT(bk.marks),
		       bk.shared ? "; the device's, SHARED (below): " : " = ", FMT_COUNT(bk.xmit),
		       FMT_COUNT(bk.failed), FMT_COUNT(bk.xmit_err),
		       bk.xmit_err ? "the peer's ring was full or it runs no NAPI" : "none",
		       FMT_COUNT(bk.not_queued), bk.unconfirmed ? " + unconfirmed (below)" : "",
		       bk.unexplained ? "  UNEXPLAINED difference" : "",
		       bk.own ? "this process's xdp_devmap_xmit and xdp_redirect_err tracepoints" :
				"the device's xdp_xmit counters (every sender's)");
	if (bk.others)
		printf("  another sender was seen: %s's xdp_xmit counters hold %s frames that were not this run's; %s\n",
		       g->ifc.name, FMT_COUNT(bk.foreign),
		       bk.shared ? "transmitted and failed above include them, so this run's "
				   "own cannot be told; --own-counts counts them apart" :
				   "the figures above are this run's own");
	if (bk.unconfirmed)
		printf("  unconfirmed %s: sent after the last reading of %s's counters, "
		       "before it went away\n",
		       FMT_COUNT(bk.unconfirmed), g->ifc.name);
	printf("  redirect refused by the kernel: %s\n",
	       FMT_COUNT(gen_mode_delta(a, b, KERN_REDIRECT_ERR)));
	if (kg(g)->tp_links[TP_XMIT])
		printf("  tracepoints: xdp_devmap_xmit sent %s, dropped %s; xdp_redirect_err %s\n",
		       FMT_COUNT(bk.tp.sent), FMT_COUNT(bk.tp.drops), FMT_COUNT(bk.tp.err));
}

static int kernel_verdict(struct gen *g, const char *stop_reason)
{
	struct books bk;

	(void)stop_reason;
	books_between(g, &g->cur, &g->base, true, &bk);
	if (bk.shared)
		pr_warn("another sender used %s during the run and its counters count both, so this run's books cannot be checked; --own-counts counts its own apart\n",
			g->ifc.name);
	if (bk.unexplained) {
		pr_warn("the books do not balance: the program sent %llu and %llu marks, the kernel counted %llu transmitted or failed\n",
			(unsigned long long)bk.sent, (unsigned long long)bk.marks,
			(unsigned long long)(bk.xmit + bk.failed));
		return -EIO;
	}
	return 0;
}

static void kernel_cleanup(struct gen *g)
{
	struct kernel_gen *k = kg(g);

	if (!k)
		return;
	if (k->peer_fixed && iface_peer_set_gro(&g->ifc, false))
		pr_warn("could not turn GRO off again at %s; do it with 'ethtool -K <peer> gro off'\n",
			k->peer_desc);
	bpf_link__destroy(k->tp_links[0]);
	bpf_link__destroy(k->tp_links[1]);
	free(k->tp_vals);
	free(k->mark_base);
	kernel_streams_destroy(k);
	xdp_gen_bpf__destroy(k->skel);
	free(k->frames);
	free(k->cpu_vals);
	iface_estats__close(k->estats);
	free(k);
	g->m = NULL;
}

static const struct ctr_desc failure_rows[] = {
	{ "redirect_refused", GEN_FAIL_M(KERN_REDIRECT_ERR), CTR_COUNTER, "frames", CTR_ALL, 0,
	  "Frames bpf_redirect refused in the program: never sent." },
	{ "xdp_xmit_errors", GEN_FAIL_X(KERN_XMIT_ERR), CTR_COUNTER, "frames", CTR_ALL, 0,
	  "Frames the device took and dropped (a veth: its peer's ring was full or it runs no NAPI)." },
	{ "not_queued", GEN_FAIL_X(KERN_NOT_QUEUED), CTR_COUNTER, "frames", CTR_ALL, 0,
	  "Frames the kernel could not hand to the device (down, frame too big: xdp_redirect_err)." },
};

static const struct ctr_family kernel_failures = {
	.name = "gen_kernel_failures",
	.json = "drops",
	.metric = "xdp_gen_failures_total",
	.label = "reason",
	CTR_ROWS(failure_rows),
};

const struct gen_mode gen_mode_kernel = {
	.unit = "thread",
	.failures = &kernel_failures,
	.wake_by_signal = true,
	.snap_size = sizeof(struct kernel_snap),
	.plan = kernel_plan,
	.preflight = kernel_preflight,
	.setup = kernel_setup,
	.worker = kernel_worker,
	.describe = kernel_describe,
	.sample = kernel_sample,
	.check = kernel_check,
	.json = kernel_json,
	.failures_read = kernel_failures_read,
	.json_kernel = kernel_json_kernel,
	.text = kernel_text,
	.verdict = kernel_verdict,
	.cleanup = kernel_cleanup,
	.mark_send = kernel_mark_send,
	.mark_sync = kernel_mark_sync,
};
