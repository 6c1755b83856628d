// SPDX-License-Identifier: GPL-2.0
/*
 * redirect-cpu, xdp-bench's mode of the same name: the program on the
 * interface sends each frame, round robin, to a CPU of --cpu through a
 * cpumap; on that CPU the cpumap entry's own program (xdp_sink_cpumap)
 * counts it and drops it or hands it to the stack there (--remote-action).
 * What each CPU saw is its own copy of one per-CPU entry, so the per-CPU
 * counts are exact and need no atomics. A frame redirected but never seen
 * on its CPU was dropped at the enqueue (the CPU's queue, --qsize, full).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/cpu.h"
#include "base/fmt.h"
#include "base/log.h"
#include "report/counter_desc.h"
#include "sink.h"
#include "xdp_sink.skel.h"

struct cpumap_state {
	unsigned int n; /* CPUs redirected to */
	unsigned int cpu[PARAM_LIST_MAX];
};

/* One struct sink_cpumap_stats per possible CPU: each CPU's copy of the entry. */
static size_t cpumap_snap_size(const struct sink *sk)
{
	return (size_t)sk->ncpus * sizeof(struct sink_cpumap_stats);
}

static int cpumap_plan(struct sink *sk)
{
	const struct sink_cfg *cfg = sk->cfg;
	unsigned int i, online = (unsigned int)cpu_online_count();
	struct cpumap_state *cs;

	cs = calloc(1, sizeof(*cs));
	if (!cs)
		return -ENOMEM;
	sk->ms = cs;
	if (cfg->remote_cpus.all || !cfg->remote_cpus.n) {
		for (i = 0; i < online && i < PARAM_LIST_MAX; i++)
			cs->cpu[cs->n++] = i;
		return 0;
	}
	for (i = 0; i < cfg->remote_cpus.n; i++) {
		if (cfg->remote_cpus.ids[i] >= online) {
			pr_warn("CPU %u is not online (CPUs 0-%u); fix --cpu\n",
				cfg->remote_cpus.ids[i], online - 1);
			return -EINVAL;
		}
		cs->cpu[cs->n++] = cfg->remote_cpus.ids[i];
	}
	return 0;
}

static void cpumap_configure(struct sink *sk)
{
	const struct cpumap_state *cs = sk->ms;

	sk->skel->rodata->cpu_count = cs->n;
	sk->skel->rodata->remote_pass = sk->cfg->remote_action == 1;
}

/* Every CPU's entry, with its queue and program, before the attach: no redirect finds none. */
static int cpumap_loaded(struct sink *sk)
{
	const struct cpumap_state *cs = sk->ms;
	struct bpf_cpumap_val v = {
		.qsize = (__u32)sk->cfg->qsize,
		.bpf_prog.fd = bpf_program__fd(sk->skel->progs.xdp_sink_cpumap),
	};
	int avail = bpf_map__fd(sk->skel->maps.cpus_available);
	int map = bpf_map__fd(sk->skel->maps.cpu_map);
	unsigned int i;
	int err;

	for (i = 0; i < cs->n; i++) {
		__u32 key = i, cpu = cs->cpu[i];

		if (bpf_map_update_elem(map, &cpu, &v, 0) ||
		    bpf_map_update_elem(avail, &key, &cpu, 0)) {
			err = -errno;
			pr_warn("cannot add CPU %u to the cpumap: %s\n", cpu, strerror(-err));
			return err;
		}
	}
	return 0;
}

static __u64 cpumap_seen(const struct sink *sk, const struct sink_cpumap_stats *c)
{
	__u64 n = 0;
	int i;

	for (i = 0; i < sk->ncpus; i++)
		n += c[i].packets;
	return n;
}

/*
 * Once the run stopped (the program detached), frames still in a CPU's
 * queue are counted there when its kthread gets to them: microseconds on
 * an idle machine, but a busy one can keep the kthread off its CPU for
 * longer (a kthread sharing its CPU with the other tests of a busy machine
 * waited tens of milliseconds). The last reading waits while the count moves,
 * and gives up after 500 ms without progress (or 5 s in all): what is left
 * unseen then was dropped, not merely late.
 */
static void cpumap_read(struct sink *sk, struct sink_snap *s)
{
	struct sink_cpumap_stats *c = s->mode;
	int fd = bpf_map__fd(sk->skel->maps.cpumap_stats), still = 0, tries = 0;
	__u64 seen, last = 0;
	__u32 zero = 0;

	for (;;) {
		if (bpf_map_lookup_elem(fd, &zero, c))
			return;
		if (!run_stop_requested(&sk->run))
			return;
		seen = cpumap_seen(sk, c);
		if (seen >= s->total.redirect || ++tries > 5000)
			return;
		still = seen == last ? still + 1 : 0;
		if (still > 500)
			return;
		last = seen;
		usleep(1000);
	}
}

static void cpumap_delta(const struct sink *sk, const struct sink_snap *a,
			 const struct sink_snap *b, int cpu, struct sink_cpumap_stats *d)
{
	const struct sink_cpumap_stats *ca = a->mode, *cb = b->mode;

	memset(d, 0, sizeof(*d));
	if (cpu >= 0) {
		ctr_sub(d, &ca[cpu], &cb[cpu], sizeof(*d));
		return;
	}
	for (cpu = 0; cpu < sk->ncpus; cpu++) {
		d->packets += ca[cpu].packets - cb[cpu].packets;
		d->bytes += ca[cpu].bytes - cb[cpu].bytes;
		d->drop += ca[cpu].drop - cb[cpu].drop;
		d->pass += ca[cpu].pass - cb[cpu].pass;
	}
}

static void cpumap_drops(const struct sink *sk, const struct sink_snap *a,
			 const struct sink_snap *b, struct sink_drops *d)
{
	struct sink_cpumap_stats t;

	cpumap_delta(sk, a, b, -1, &t);
	d->cpumap_unseen = d->prog.redirect > t.packets ? d->prog.redirect - t.packets : 0;
}

static const char *remote_action(const struct sink *sk)
{
	return sk->cfg->remote_action == 1 ? "pass" : "drop";
}

static void cpumap_json(const struct sink *sk, struct jw *w, const struct sink_snap *a,
			const struct sink_snap *b, const struct sink_stats *d,
			const struct sink_drops *dr, enum run_report kind)
{
	const struct cpumap_state *cs = sk->ms;
	unsigned int has = sink_has(sk, kind), i;
	struct sink_cpumap_stats t;

	(void)d;
	(void)dr;
	cpumap_delta(sk, a, b, -1, &t);
	jw_obj(w, "cpumap");
	jw_str(w, "remote_action", remote_action(sk));
	jw_u64(w, "qsize", sk->cfg->qsize);
	ctr_json_members(w, &sink_cpumap, &t, has);
	jw_arr(w, "cpus");
	for (i = 0; i < cs->n; i++) {
		cpumap_delta(sk, a, b, (int)cs->cpu[i], &t);
		jw_obj(w, NULL);
		jw_u64(w, "cpu", cs->cpu[i]);
		ctr_json_members(w, &sink_cpumap, &t, has);
		jw_end_obj(w);
	}
	jw_end_arr(w);
	jw_end_obj(w);
}

/* The summary's line of its own; an interval's part of its one line. */
static void cpumap_text(const struct sink *sk, const struct sink_snap *a, const struct sink_snap *b,
			const struct sink_stats *d, enum run_report kind)
{
	const struct cpumap_state *cs = sk->ms;
	struct sink_cpumap_stats t;
	unsigned int i;

	(void)d;
	cpumap_delta(sk, a, b, -1, &t);
	if (kind == RUN_SUMMARY)
		printf("  cpumap:   %s packets on the remote CPUs (%s there):",
		       FMT_COUNT(t.packets), remote_action(sk));
	else
		printf("  cpumap");
	for (i = 0; i < cs->n; i++) {
		cpumap_delta(sk, a, b, (int)cs->cpu[i], &t);
		printf(" cpu %u %s", cs->cpu[i], FMT_COUNT(t.packets));
	}
	if (kind == RUN_SUMMARY)
		printf("\n");
}

static void cpumap_metrics(const struct sink *sk, struct metrics_w *w, const struct sink_snap *a,
			   const struct sink_snap *b, enum run_report kind)
{
	const struct cpumap_state *cs = sk->ms;
	unsigned int has = sink_has(sk, kind), i;
	const struct ctr_desc *r;
	struct sink_cpumap_stats t;
	char cpu[16];

	for (r = sink_cpumap.rows; r < sink_cpumap.rows + sink_cpumap.n; r++) {
		if (!ctr_shown(r, CTR_METRIC, has))
			continue;
		ctr_metric_head(w, &sink_cpumap, r);
		for (i = 0; i < cs->n; i++) {
			cpumap_delta(sk, a, b, (int)cs->cpu[i], &t);
			snprintf(cpu, sizeof(cpu), "%u", cs->cpu[i]);
			ctr_metric_at(w, &sink_cpumap, r, "cpu", cpu, &t);
		}
	}
}

static void cpumap_cleanup(struct sink *sk)
{
	free(sk->ms);
	sk->ms = NULL;
}

const struct sink_mode_ops sink_redirect_cpu_ops = {
	.prog = "xdp_sink_redirect_cpu",
	.remote_prog = "xdp_sink_cpumap",
	.has = SINK_HAS_VERDICT | SINK_HAS_CPUMAP,
	.pins = SINK_PIN_STATS,
	.plan = cpumap_plan,
	.configure = cpumap_configure,
	.loaded = cpumap_loaded,
	.snap_size = cpumap_snap_size,
	.read = cpumap_read,
	.drops = cpumap_drops,
	.json = cpumap_json,
	.text = cpumap_text,
	.metrics = cpumap_metrics,
	.cleanup = cpumap_cleanup,
};
