// SPDX-License-Identifier: GPL-2.0
/*
 * The life of a run, whatever the mode: preflight, load, pin, attach, the run
 * skeleton's callbacks, teardown. The mode comes in through sk->ops.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "base/fmt.h"
#include "base/log.h"
#include "causes.h"
#include "kern/iface.h"
#include "kern/kstats.h"
#include "kern/xdp_attach.h"
#include "sample.h"
#include "sink.h"
#include "xdp_sink.skel.h"
#include "xdp_sink_hw.skel.h"

static int sample(void *ctx, struct run_snap *s)
{
	return sink_snap_read(ctx, (struct sink_snap *)s);
}

static void copy(void *ctx, struct run_snap *dst, const struct run_snap *src)
{
	sink_snap_copy(ctx, (struct sink_snap *)dst, (const struct sink_snap *)src);
}

/* Attached (and, for xsk, every socket bound): scripts can start sending now. */
static void started(void *ctx)
{
	struct sink *sk = ctx;

	printf("xdp-sink %s on %s (%s mode, queues %u)%s; Ctrl-C to stop\n", sk->mode_name,
	       FMT_NAME(sk->ifc.name), sk->cfg->xdp_mode == XDPSG_MODE_SKB ? "skb" : "native",
	       sk->ifc.rx_queues, xdp_attachment_is_single(sk->att) ? "" : " via libxdp");
}

/*
 * ethtool -L during the run: say so when it happens. Queues added while the
 * program is attached may never run it (veth here), and the summary counts
 * what passed there unseen from the kernel's counters.
 */
static void watch_queues(struct sink *sk)
{
	unsigned int n = iface_count_queues(sk->ifc.name, "rx");

	if (!n || n == sk->rx_queues_now)
		return;
	pr_warn("%s has %u receive queues now (%u before, %u at the start)%s\n", sk->ifc.name, n,
		sk->rx_queues_now, sk->nslots - 1,
		n > sk->nslots - 1 ? "; frames on the added ones may pass without the program "
				     "(veth runs none there): restart xdp-sink to cover them" :
				     "");
	sk->rx_queues_now = n;
}

static const char *check(void *ctx, struct run_snap *cur, const struct run_snap *base)
{
	struct sink *sk = ctx;
	struct sink_snap *s = (struct sink_snap *)cur;
	__u64 n;
	int err = sample(sk, cur);

	if (err) {
		run_fail(&sk->run, err);
		return "error";
	}
	watch_queues(sk);
	/* Another process took the interface (--force): nothing more arrives here. */
	if (sk->att && !sk->detached_ns && !xdp_attachment_held(sk->att)) {
		/* Gone since run's look this tick: its program went with it, taken by no one. */
		if (sk->run.o.ifc && !iface_still_there(sk->run.o.ifc)) {
			sk->run.gone_ns = s->rs.t_ns;
			return "interface gone";
		}
		sk->detached_ns = s->rs.t_ns;
		return "program detached";
	}
	causes_tick(sk->causes, s->rs.t_ns);
	if (sk->ops->explain)
		sk->ops->explain(sk, s);
	if (sk->ops->tick)
		sk->ops->tick(sk, s);
	n = sink_received(sk, s, NULL) - sink_received(sk, (const struct sink_snap *)base, NULL);
	/* Traffic moved the count since the last tick: it flowed at least until now. */
	if (n != sk->seen) {
		if (!sk->seen)
			sk->first_rx_ns = s->rs.t_ns;
		sk->last_rx_ns = s->rs.t_ns;
		sk->seen = n;
	}
	return sk->cfg->count && n >= sk->cfg->count ? "count" : NULL;
}

/*
 * The peak interval: each row's packets over the part of it that carried
 * traffic (the row in which traffic started counts from the first packet, the
 * one in which it stopped up to the last), so the peak is measured the way the
 * summary's average is. Rows carrying traffic for less than half their length
 * are too short to judge and are left out.
 */
static void observe(void *ctx, const struct run_snap *a, const struct run_snap *b)
{
	struct sink *sk = ctx;
	const struct sink_snap *sa = (const struct sink_snap *)a;
	__u64 first = 0, last = a->t_ns, from = b->t_ns, to = a->t_ns;
	__u64 n =
		sink_received(sk, sa, NULL) - sink_received(sk, (const struct sink_snap *)b, NULL);
	double pps;

	if (!n || !sink_traffic_span(sk, sa, &first, &last))
		return;
	if (first > from)
		from = first;
	if (last < to)
		to = last;
	if (to <= from || (to - from) * 2 < a->t_ns - b->t_ns)
		return;
	pps = (double)n * 1e9 / (double)(to - from);
	if (pps > sk->peak_pps)
		sk->peak_pps = pps;
}

static void json(void *ctx, struct jw *w, const struct run_snap *a, const struct run_snap *b,
		 enum run_report kind)
{
	sink_report_json(ctx, w, (const struct sink_snap *)a, (const struct sink_snap *)b, kind);
}

static void text(void *ctx, const struct run_snap *a, const struct run_snap *b,
		 enum run_report kind)
{
	sink_report_text(ctx, (const struct sink_snap *)a, (const struct sink_snap *)b, kind);
}

/* Detach before the workers stop: the summary then holds every packet the program counted. */
static void quiesce(void *ctx)
{
	struct sink *sk = ctx;

	xdp_attachment__destroy(sk->att);
	sk->att = NULL;
}

static void metrics(void *ctx, struct metrics_w *w, const struct run_snap *a,
		    const struct run_snap *b, enum run_report kind)
{
	sink_report_metrics(ctx, w, (const struct sink_snap *)a, (const struct sink_snap *)b, kind);
}

static int verdict(void *ctx, const char *stop_reason)
{
	struct sink *sk = ctx;

	int err;

	(void)stop_reason;
	err = sk->ops->finish ? sk->ops->finish(sk) : 0;
	if (sk->detached_ns) {
		pr_warn("its XDP program was detached from %s %.2f s into the run (removed, or replaced by another process: --force?); the counts above end there\n",
			sk->ifc.name, (double)(sk->detached_ns - sk->run.base->t_ns) / 1e9);
		return err ? err : -ENOLINK;
	}
	return err;
}

static const struct run_ops sink_run_ops = {
	.sample = sample,
	.copy = copy,
	.started = started,
	.check = check,
	.observe = observe,
	.json = json,
	.text = text,
	.quiesce = quiesce,
	.metrics = metrics,
	.verdict = verdict,
};

/* Check everything that can be checked before touching the kernel. */
int sink_preflight(struct sink *sk)
{
	const struct sink_cfg *cfg = sk->cfg;
	struct run_opts ro = {
		.tool = "xdp-sink",
		.mode = sk->mode_name,
		.ifname = sk->ifc.name,
		.ifc = &sk->ifc,
		.duration_ns = cfg->duration,
		.interval_ns = cfg->interval,
		/* Wake often enough to stop close to --count; rates use measured times. */
		.tick_ns = SINK_TICK_NS,
		.json = cfg->json,
		.quiet = cfg->quiet,
		.json_ready = true,
	};
	int err;

	/* First, so that teardown is safe whatever preflight refuses. */
	run_init(&sk->run, &sink_run_ops, sk, &ro, &sk->base.rs, &sk->prev.rs, &sk->cur.rs);
	err = iface_preflight(sk->ifc.name, "sink", &sk->ifc);
	if (err)
		return err;
	if (cfg->keep_pins && !cfg->pin) {
		pr_warn("--keep-pins needs --pin\n");
		return -EINVAL;
	}
	if (cfg->drop_runs && !cfg->drop_causes) {
		pr_warn("--drop-runs sizes the drop tracer's books; it goes with --drop-causes\n");
		return -EINVAL;
	}
	if (cfg->hw_time && cfg->no_verify) {
		pr_warn("--hw-time times the stamped frames, which --no-verify does not read; drop one of them\n");
		return -EINVAL;
	}
	if (cfg->causes_from.n && !cfg->drop_causes) {
		pr_warn("--drop-causes-from joins another host's drops with this host's: add --drop-causes "
			"(--drop-causes local where that host is another namespace of this kernel)\n");
		return -EINVAL;
	}
	{
		char kerr[256];

		if (stamp_key_resolve(&sk->key, cfg->stamp_key, kerr, sizeof(kerr))) {
			pr_warn("%s\n", kerr);
			return -EINVAL;
		}
	}
	err = sk->ops->plan ? sk->ops->plan(sk) : 0;
	if (err)
		return err;
	/* Host-wide, before the first frame can be lost: a tracer that cannot load refuses the run. */
	if (cfg->drop_causes) {
		err = causes__open(sk);
		if (err)
			return err;
	}
	/* Last: the metrics port is taken only once nothing else can refuse the run. */
	err = metrics__create(&(struct metrics_opts){ .tool = "xdp-sink",
						      .mode = sk->mode_name,
						      .ifname = sk->ifc.name,
						      .cli = &cfg->metrics },
			      &sk->metrics);
	sk->run.o.metrics = sk->metrics;
	return err;
}

/* Buffers for the readings, sized by the device's queues and the possible CPUs. */
static int alloc_readings(struct sink *sk)
{
	int err;

	sk->ncpus = libbpf_num_possible_cpus();
	if (sk->ncpus <= 0)
		return -EINVAL;
	sk->nslots = (sk->ifc.rx_queues ? sk->ifc.rx_queues : 1);
	if (sk->nslots > XDPSG_MAX_QUEUES)
		sk->nslots = XDPSG_MAX_QUEUES;
	sk->rx_queues_now = sk->nslots;
	sk->nslots++; /* the overflow slot */
	if (sk->cfg->kernel_stats) {
		err = kstats_reader__open(sk->ifc.name, &sk->kr);
		if (err) {
			pr_warn("cannot read the kernel counters of %s: %s\n", sk->ifc.name,
				strerror(-err));
			return err;
		}
	}
	sk->buf = calloc((size_t)sk->ncpus, sizeof(*sk->buf));
	if (!sk->buf || sink_snap_alloc(sk, &sk->base) || sink_snap_alloc(sk, &sk->prev) ||
	    sink_snap_alloc(sk, &sk->cur))
		return -ENOMEM;
	return 0;
}

/*
 * The sink's object; with hw_time, the bytes of xdp_sink_hw.bpf.c (the one
 * that calls the receive-time kfunc) under the same skeleton: its programs,
 * maps and rodata are the same, by name and layout.
 */
static struct xdp_sink_bpf *sink_open(bool hw_time)
{
	struct xdp_sink_bpf *obj;
	int err;

	if (!hw_time)
		return xdp_sink_bpf__open();
	obj = calloc(1, sizeof(*obj));
	if (!obj)
		return NULL;
	err = xdp_sink_bpf__create_skeleton(obj);
	if (!err) {
		obj->skeleton->data = (void *)xdp_sink_hw_bpf__elf_bytes(&obj->skeleton->data_sz);
		err = bpf_object__open_skeleton(obj->skeleton, NULL);
	}
	if (err) {
		xdp_sink_bpf__destroy(obj);
		errno = -err;
		return NULL;
	}
	return obj;
}

/* Settings go into rodata first; only the mode's program loads. */
static int load(struct sink *sk)
{
	const struct sink_cfg *cfg = sk->cfg;
	struct bpf_program *p;
	int err;

	sk->hw_time = cfg->hw_time && sk->ops->rx_time && !cfg->no_verify;
	sk->skel = sink_open(sk->hw_time);
	if (!sk->skel) {
		err = -errno;
		pr_warn("cannot open the BPF object: %s\n", strerror(-err));
		return err;
	}
	sk->skel->rodata->do_parse = cfg->parse;
	sk->skel->rodata->queue_slots = sk->nslots - 1;
	sk->skel->rodata->cost_ns = sk->ops->user_cost ? 0 : cfg->cost;
	sk->skel->rodata->reflect = cfg->reflect;
	sk->skel->rodata->packet_op = (__u32)cfg->packet_op;
	/* A cpumap takes no more entries than the kernel has possible CPUs. */
	bpf_map__set_max_entries(sk->skel->maps.cpu_map, (__u32)sk->ncpus);
	bpf_map__set_max_entries(sk->skel->maps.cpus_available, (__u32)sk->ncpus);
	/* Only stamps are timed: --no-verify reads none. */
	sk->skel->rodata->rx_time = sk->ops->rx_time && !cfg->no_verify;
	sk->skel->rodata->rx_time_all = cfg->time_all;
	sk->frags = sk->ifc.mtu > SINK_MTU_ONE_BUF;
	sk->skel->rodata->frags = sk->frags;
	sample_configure(sk);
	if (sk->ops->configure)
		sk->ops->configure(sk);
	bpf_object__for_each_program(p, sk->skel->obj) {
		const char *name = bpf_program__name(p);
		bool load = !strcmp(name, sink_prog(sk)) ||
			    (sk->ops->remote_prog && !strcmp(name, sk->ops->remote_prog));

		bpf_program__set_autoload(p, load);
		if (load && sk->frags)
			bpf_program__set_flags(p, bpf_program__flags(p) | BPF_F_XDP_HAS_FRAGS);
		/* --hw-time: the metadata kfuncs reach the driver only from a program bound to it */
		if (load && sk->hw_time) {
			bpf_program__set_ifindex(p, (__u32)sk->ifc.ifindex);
			bpf_program__set_flags(p,
					       bpf_program__flags(p) | SINK_F_XDP_DEV_BOUND_ONLY);
		}
	}
	if (sk->frags)
		pr_debug("%s has an MTU of %u: %s loaded frags-aware (frames of several buffers)\n",
			 sk->ifc.name, sk->ifc.mtu, sink_prog(sk));
	err = xdp_sink_bpf__load(sk->skel);
	if (err && sk->hw_time) {
		pr_warn("--hw-time: cannot load the receive program bound to %s for its receive timestamps: %s (Linux 6.3 or later); leave --hw-time out\n",
			sk->ifc.name, strerror(-err));
		return -EOPNOTSUPP;
	}
	if (err) {
		pr_warn("cannot load the BPF programs: %s (run with -vv for the verifier's log)\n",
			strerror(-err));
		return err;
	}
	return sk->ops->loaded ? sk->ops->loaded(sk) : 0;
}

/* Load, pin, start, attach; teardown undoes whatever was done. */
int sink_setup(struct sink *sk)
{
	struct xdp_attach_opts aopts = {
		.tool = "xdp-sink",
		.own_prefix = "xdp_sink_",
		.ifname = sk->ifc.name,
		.ifindex = sk->ifc.ifindex,
		.mode = sk->cfg->xdp_mode,
		.force = sk->cfg->force,
		.mtu = sk->ifc.mtu,
	};
	int err;

	err = alloc_readings(sk);
	if (!err)
		err = load(sk);
	if (err)
		return err;
	if (!strcmp(sk->ifc.driver, "veth"))
		iface_estats__open(sk->ifc.name, &sk->estats);
	if (sk->cfg->pin) {
		err = sink_pin_maps(sk);
		if (err)
			return err;
	}
	if (sk->ops->start) {
		err = sk->ops->start(sk);
		if (err)
			return err;
	}
	/*
	 * The base is read before the program sees a packet: nothing can then be
	 * counted by the program before the base and read by user space after it.
	 */
	err = run_take_base(&sk->run);
	if (err)
		return err;
	return xdp_attachment__create(sk->skel->obj, sink_prog(sk), &aopts, &sk->att);
}

void sink_teardown(struct sink *sk)
{
	xdp_attachment__destroy(sk->att);
	sk->att = NULL;
	if (sk->ops->cleanup)
		sk->ops->cleanup(sk);
	if (sk->pinned && !sk->cfg->keep_pins)
		sink_unpin_maps(sk, true);
	else if (sk->pinned)
		pr_info("maps left pinned in %s (--keep-pins); remove with 'rm -r %s'\n",
			sk->pin_dir, sk->pin_dir);
	xdp_sink_bpf__destroy(sk->skel);
	causes__destroy(sk->causes);
	sk->causes = NULL;
	iface_estats__close(sk->estats);
	kstats_reader__close(sk->kr);
	metrics__destroy(sk->metrics);
	sk->metrics = NULL;
	free(sk->buf);
	sink_snap_free(&sk->base);
	sink_snap_free(&sk->prev);
	sink_snap_free(&sk->cur);
}
