// SPDX-License-Identifier: GPL-2.0
/*
 * xdp-sink drops: the drop tracer alone, host-wide, through the run
 * skeleton (intervals, -d, signals, summary, metrics). For a DUT that is a
 * machine of its own: its counts, by generator run, reason and device, join
 * the sink's books (elsewhere) by run id. No interface, no XDP program.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fmt.h"
#include "base/log.h"
#include "base/runtime.h"
#include "causes.h"
#include "drops.h"
#include "report/counter_desc.h"
#include "sink.h"

struct dsnap {
	struct run_snap rs; /* first: the run skeleton's view */
	struct drops_snapshot ds;
};

struct dstate {
	const struct sink_cfg *cfg;
	struct drops *d;
	struct stamp_key key;
	struct dsnap base, prev, cur;
	struct drops_snapshot delta; /* scratch for a report */
	struct metrics *m;
	struct run run;
};

static int sample(void *ctx, struct run_snap *s)
{
	struct dstate *st = ctx;
	struct dsnap *ds = (struct dsnap *)s;
	int err = drops_read(st->d, &ds->ds);

	ds->rs.t_ns = ds->ds.t_ns;
	return err;
}

static void copy(void *ctx, struct run_snap *dst, const struct run_snap *src)
{
	struct dsnap *d = (struct dsnap *)dst;
	const struct dsnap *s = (const struct dsnap *)src;
	struct drops_count *v = d->ds.v;
	size_t cap = d->ds.cap;

	(void)ctx;
	if (s->ds.n > cap) {
		v = realloc(d->ds.v, s->ds.n * sizeof(*v));
		if (!v) {
			/* The copy is then empty: the next report shows more, never less. */
			d->ds.n = 0;
			d->rs = s->rs;
			return;
		}
		cap = s->ds.n;
	}
	d->rs = s->rs;
	d->ds = s->ds;
	d->ds.v = v;
	d->ds.cap = cap;
	if (s->ds.n)
		memcpy(v, s->ds.v, s->ds.n * sizeof(*v));
}

static void started(void *ctx)
{
	const struct dstate *st = ctx;
	unsigned int h;

	char key[32];

	printf("xdp-sink drops: tracing drops %s on",
	       st->cfg->drops_local ? "on this network namespace's devices (--local)" :
				      "host-wide");
	for (h = 0; h < DROPS_HOOK_COUNT; h++)
		if (drops_hooks(st->d) & (1U << h))
			printf(" %s", drops_hook_name(h));
	printf("; stamps checked with key %s; Ctrl-C to stop\n",
	       stamp_key_name(&st->key, key, sizeof(key)));
}

/* The counts between two readings, in st->delta; NULL when they cannot be had. */
static const struct drops_snapshot *delta(struct dstate *st, const struct run_snap *a,
					  const struct run_snap *b)
{
	const struct dsnap *sa = (const struct dsnap *)a, *sb = (const struct dsnap *)b;

	return drops_delta(&sa->ds, &sb->ds, &st->delta) ? NULL : &st->delta;
}

static void json_count(struct dstate *st, struct jw *w, const struct drops_count *c)
{
	char r[64], ns[256];

	jw_obj(w, NULL);
	jw_str(w, "kind", drops_kind_name(c->key.kind));
	if (c->key.kind == XDPSG_DROPS_RUN || c->key.kind == XDPSG_DROPS_MARK)
		jw_u64(w, "run", c->key.run);
	jw_str(w, "reason", causes_reason(st->d, c->key.reason, r, sizeof(r)));
	jw_str(w, "dev", c->dev);
	jw_i64(w, "ifindex", c->key.ifindex);
	jw_u64(w, "netns", c->key.netns);
	if (c->key.netns && !drops_netns_name(c->key.netns, ns, sizeof(ns)))
		jw_str(w, "ns", ns);
	jw_u64(w, "packets", c->packets);
	jw_u64(w, "bytes", c->bytes);
	jw_end_obj(w);
}

static void json(void *ctx, struct jw *w, const struct run_snap *a, const struct run_snap *b,
		 enum run_report kind)
{
	struct dstate *st = ctx;
	const struct drops_snapshot *d = delta(st, a, b);
	unsigned int h;
	char key[32];
	size_t i;

	if (kind == RUN_SUMMARY) {
		jw_arr(w, "hooks");
		for (h = 0; h < DROPS_HOOK_COUNT; h++)
			if (drops_hooks(st->d) & (1U << h))
				jw_str(w, NULL, drops_hook_name(h));
		jw_end_arr(w);
		jw_str(w, "stamp_key", stamp_key_name(&st->key, key, sizeof(key)));
	}
	jw_u64(w, "overflow", d ? d->overflow : 0);
	/* Drops of runs that found the run books full, and the books (--drop-runs). */
	jw_u64(w, "uncharged", d ? d->uncharged : 0);
	jw_u64(w, "drop_runs", d ? d->run_entries : 0);
	jw_u64(w, "runs_used", d ? d->runs_used : 0);
	jw_arr(w, "counts");
	for (i = 0; d && i < d->n; i++)
		json_count(st, w, &d->v[i]);
	jw_end_arr(w);
}

/*
 * The summary's last line: every drop the tracer saw, by kind, so a script
 * (and a reader) gets one line, as from every other mode.
 */
static void result_line(const struct drops_snapshot *d, double secs)
{
	__u64 k[XDPSG_DROPS_UNCHARGED + 1] = { 0 }, all = 0, runs = 0, last = 0;
	size_t i;

	for (i = 0; d && i < d->n; i++) {
		const struct drops_count *c = &d->v[i];

		if (c->key.kind <= XDPSG_DROPS_UNCHARGED)
			k[c->key.kind] += c->packets;
		all += c->packets;
		/* sorted by run first: a new run id is a new run */
		if (c->key.kind == XDPSG_DROPS_RUN && (!runs || c->key.run != last)) {
			runs++;
			last = c->key.run;
		}
	}
	printf("RESULT: %s frames dropped in %.1f s: runs' frames %s (of %s run%s), their marks %s, forged %s, unidentified %s, unstamped %s",
	       FMT_COUNT(all), secs, FMT_COUNT(k[XDPSG_DROPS_RUN]), FMT_COUNT(runs),
	       runs == 1 ? "" : "s", FMT_COUNT(k[XDPSG_DROPS_MARK]),
	       FMT_COUNT(k[XDPSG_DROPS_FORGED]), FMT_COUNT(k[XDPSG_DROPS_UNIDENTIFIED]),
	       FMT_COUNT(k[XDPSG_DROPS_UNSTAMPED]));
	if (k[XDPSG_DROPS_UNCHARGED])
		printf(", uncharged %s (runs' drops past full run books)",
		       FMT_COUNT(k[XDPSG_DROPS_UNCHARGED]));
	if (d && d->overflow)
		printf(", not counted %s (the books were full)", FMT_COUNT(d->overflow));
	printf("\n");
}

static void text(void *ctx, const struct run_snap *a, const struct run_snap *b,
		 enum run_report kind)
{
	struct dstate *st = ctx;
	const struct drops_snapshot *d = delta(st, a, b);
	char r[64], dev[64], run[16], ns[256];
	size_t i, shown = 0;

	printf("%s %.1f s:\n", kind == RUN_SUMMARY ? "Summary, dropped in" : "Dropped in",
	       (double)(a->t_ns - b->t_ns) / 1e9);
	for (i = 0; d && i < d->n; i++) {
		const struct drops_count *c = &d->v[i];

		/* Unstamped drops are the host's own (ND, ARP, other traffic): only with -v. */
		if (c->key.kind == XDPSG_DROPS_UNSTAMPED && !st->cfg->verbose)
			continue;
		snprintf(run, sizeof(run), "%08x", c->key.run);
		causes_dev_name(c, dev, sizeof(dev));
		if (!c->key.netns || drops_netns_name(c->key.netns, ns, sizeof(ns)))
			ns[0] = 0;
		printf("  %-12s %-8s %-20s %s%s%s %s\n", drops_kind_name(c->key.kind),
		       c->key.kind == XDPSG_DROPS_RUN || c->key.kind == XDPSG_DROPS_MARK ? run :
											   "-",
		       causes_reason(st->d, c->key.reason, r, sizeof(r)), dev, ns[0] ? "@" : "", ns,
		       FMT_COUNT(c->packets));
		shown++;
	}
	if (!shown)
		printf("  nothing%s\n", st->cfg->verbose ? "" : " stamped (-v: unstamped too)");
	if (d && d->uncharged)
		printf("  the run books were full (%s entries): %s drops of runs went uncharged, "
		       "counted by reason and device but not by run; raise --drop-runs\n",
		       FMT_COUNT(d->run_entries), FMT_COUNT(d->uncharged));
	else if (d && kind == RUN_SUMMARY && d->runs_used >= d->run_entries)
		printf("  the run books are full (%s entries): another run's drops would go "
		       "uncharged; raise --drop-runs\n",
		       FMT_COUNT(d->run_entries));
	if (d && d->overflow)
		printf("  the books were full: %s drops not counted\n", FMT_COUNT(d->overflow));
	if (kind == RUN_SUMMARY)
		result_line(d, (double)(a->t_ns - b->t_ns) / 1e9);
}

static void metrics(void *ctx, struct metrics_w *w, const struct run_snap *a,
		    const struct run_snap *b, enum run_report kind)
{
	struct dstate *st = ctx;
	const struct drops_snapshot *d = delta(st, a, b);
	char r[64], run[16];
	size_t i;

	(void)kind;
	ctr_metric_head(w, &sink_causes, &sink_causes.rows[SINK_CAUSE_DROPPED]);
	for (i = 0; d && i < d->n; i++) {
		const struct drops_count *c = &d->v[i];

		snprintf(run, sizeof(run), "%08x", c->key.run);
		causes_metric_sample(w, "xdp_sink_dropped_by_cause_total", run,
				     drops_kind_name(c->key.kind),
				     causes_reason(st->d, c->key.reason, r, sizeof(r)), c,
				     c->packets);
	}
}

static const struct run_ops drops_run_ops = {
	.sample = sample,
	.copy = copy,
	.started = started,
	.json = json,
	.text = text,
	.metrics = metrics,
};

static int drops_alone(struct sink *sk)
{
	const struct sink_cfg *cfg = sk->cfg;
	struct dstate st = { .cfg = cfg };
	struct drops_opts o = { .btf_path = causes_test_btf(),
				.run_entries = (unsigned int)cfg->drop_runs,
				.key = &st.key };
	struct run_opts ro = {
		.tool = "xdp-sink",
		.mode = sk->mode_name,
		.ifname = "",
		.duration_ns = cfg->duration,
		.interval_ns = cfg->interval,
		.tick_ns = SINK_TICK_NS * 10,
		.json = cfg->json,
		.quiet = cfg->quiet,
		.json_ready = true,
	};
	char why[512];
	int err, ret = 2;

	run_init(&st.run, &drops_run_ops, &st, &ro, &st.base.rs, &st.prev.rs, &st.cur.rs);
	if (cfg->drops_local) {
		struct stat ns;

		if (stat("/proc/self/ns/net", &ns)) {
			pr_warn("--local: cannot read this network namespace (/proc/self/ns/net): %s\n",
				strerror(errno));
			goto out;
		}
		o.only_netns = (__u32)ns.st_ino;
	}
	/* The key first: a drop counts under a run only if its stamp checks with it. */
	if (stamp_key_resolve(&st.key, cfg->stamp_key, why, sizeof(why))) {
		pr_warn("%s\n", why);
		goto out;
	}
	err = metrics__create(&(struct metrics_opts){ .tool = "xdp-sink",
						      .mode = sk->mode_name,
						      .ifname = "",
						      .cli = &cfg->metrics },
			      &st.m);
	if (err)
		goto out;
	st.run.o.metrics = st.m;
	err = drops__open(&o, &st.d, why, sizeof(why));
	if (err) {
		pr_warn("cannot attach the drop tracer: %s\n", why);
		ret = err == -ENOMEM ? 1 : 2;
		goto out;
	}
	ret = 1;
	if (runtime_install_signals())
		goto out;
	err = run_loop(&st.run);
	ret = run_exit_code(err, false);
out:
	drops__destroy(st.d);
	metrics__destroy(st.m);
	drops_snapshot_free(&st.base.ds);
	drops_snapshot_free(&st.prev.ds);
	drops_snapshot_free(&st.cur.ds);
	drops_snapshot_free(&st.delta);
	return ret;
}

const struct sink_mode_ops sink_drops_ops = {
	.has = SINK_HAS_DROPS,
	.alone = drops_alone,
};
