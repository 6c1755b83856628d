// SPDX-License-Identifier: GPL-2.0
/*
 * drops-probe: the drop tracer (user/sink/drops) alone, host-wide, for tests and
 * for looking at a lab by hand, until the sink carries it.
 *   drops-probe -d 5          count for 5 seconds
 *   drops-probe               count until SIGINT or SIGTERM
 *   drops-probe -i 1 -d 10    and a line of deltas every second
 * Output, one JSON object a line: {"type":"ready","hooks":[..]} once attached;
 * with -i, {"type":"interval","counts":[..]} per period; at the end one
 * {"type":"count",..} per (kind, run, reason, device) counted since attach,
 * then {"type":"summary","hooks":[..],"overflow":N,"uncharged":N,"drop_runs":N,
 * "runs_used":N,"events":N,"duration_s":T} (with --prog-stats also each
 * hook's runs and run_ns, the kernel's count). A count: kind
 * (run|mark|forged|unstamped|unidentified|uncharged), run (run, mark), reason,
 * dev, ifindex, netns (inode), ns (its /run/netns name, "" for ours), where
 * (skb drops: function+offset of the last one), packets, bytes. Exit 2 if
 * the tracer cannot load: one line says what is missing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "../../user/sink/drops.h"
#include "base/json_writer.h"
#include "base/log.h"
#include "base/runtime.h"
#include "cli/params_cmd.h"
#include "pkt/stamp.h"

struct cfg {
	__u64 duration;
	__u64 interval;
	__u64 max_entries;
	__u64 drop_runs;
	const char *stamp_key;
	bool no_unstamped;
	bool prog_stats;
	const char *btf;
	const char *hooks;
	int verbose;
};

#define OPT(f) offsetof(struct cfg, f)
static const struct param_def opts[] = {
	PARAM_OPT("duration", PARAM_DURATION, OPT(duration), .short_opt = 'd', .metavar = "TIME",
		  .help = "stop after this long (0: on a signal)"),
	PARAM_OPT("interval", PARAM_DURATION, OPT(interval), .short_opt = 'i', .metavar = "TIME",
		  .help = "print the counts of each period (0: only at the end)"),
	PARAM_OPT("max-entries", PARAM_UINT, OPT(max_entries), .metavar = "N",
		  .help = "size of the tracer's books for everything but runs", .min = 16,
		  .max = 1 << 20),
	PARAM_OPT("drop-runs", PARAM_UINT, OPT(drop_runs), .metavar = "N",
		  .help = "size of the tracer's run books, one entry per (run, reason, device)",
		  .min = 16, .max = 1 << 20),
	PARAM_OPT(
		"stamp-key", PARAM_STRING, OPT(stamp_key), .metavar = "FILE",
		.help = "check stamps with the key in FILE (default: $XDPSG_STAMP_KEY's file, else the public key)"),
	PARAM_OPT("no-unstamped", PARAM_FLAG, OPT(no_unstamped),
		  .help = "do not count drops of frames without a stamp"),
	PARAM_OPT(
		"prog-stats", PARAM_FLAG, OPT(prog_stats),
		.help = "turn on the kernel's BPF run-time statistics while running; report each hook's"),
	PARAM_OPT("hooks", PARAM_STRING, OPT(hooks), .metavar = "LIST",
		  .help = "attach only these hooks (comma-separated; kfree_skb always)"),
	PARAM_OPT("btf", PARAM_STRING, OPT(btf), .metavar = "PATH",
		  .help = "kernel BTF (default /sys/kernel/btf/vmlinux)"),
	PARAM_OPT("verbose", PARAM_COUNTER, OPT(verbose), .short_opt = 'v',
		  .help = "more messages (-vv: libbpf's)"),
	{},
};

static const struct param_cmd cmd = {
	.name = "",
	.summary = "count drops per generator run, reason and device, host-wide",
	.description = "Attaches the drop tracer to every hook the kernel has and prints "
		       "what it counted as JSON lines.",
	.tables = { opts, NULL },
};

static void emit_hooks(struct jw *w, const struct drops *d)
{
	unsigned int h;

	jw_arr(w, "hooks");
	for (h = 0; h < DROPS_HOOK_COUNT; h++)
		if (drops_hooks(d) & (1U << h))
			jw_str(w, NULL, drops_hook_name(h));
	jw_end_arr(w);
}

static void emit_prog_stats(struct jw *w, const struct drops *d)
{
	__u64 runs, ns;
	unsigned int h;

	jw_arr(w, "prog_stats");
	for (h = 0; h < DROPS_HOOK_COUNT; h++) {
		if (drops_hook_stats(d, h, &runs, &ns))
			continue;
		jw_obj(w, NULL);
		jw_str(w, "hook", drops_hook_name(h));
		jw_u64(w, "runs", runs);
		jw_u64(w, "run_ns", ns);
		jw_end_obj(w);
	}
	jw_end_arr(w);
}

static void emit_count(struct jw *w, struct drops *d, const struct drops_count *c)
{
	char rbuf[48], ns[256], where[300];

	jw_str(w, "kind", drops_kind_name(c->key.kind));
	if (c->key.kind == XDPSG_DROPS_RUN || c->key.kind == XDPSG_DROPS_MARK)
		jw_u64(w, "run", c->key.run);
	jw_str(w, "reason", drops_reason_name(d, c->key.reason, rbuf, sizeof(rbuf)));
	jw_str(w, "dev", c->dev);
	jw_i64(w, "ifindex", c->key.ifindex);
	jw_u64(w, "netns", c->key.netns);
	if (c->key.netns && !drops_netns_name(c->key.netns, ns, sizeof(ns)))
		jw_str(w, "ns", ns);
	if (!drops_location_name(d, c->location, where, sizeof(where)))
		jw_str(w, "where", where);
	jw_u64(w, "packets", c->packets);
	jw_u64(w, "bytes", c->bytes);
}

static void emit_interval(struct drops *d, const struct drops_snapshot *s)
{
	struct jw w;
	size_t i;

	jw_begin(&w, stdout, "interval");
	jw_u64(&w, "overflow", s->overflow);
	jw_u64(&w, "uncharged", s->uncharged);
	jw_arr(&w, "counts");
	for (i = 0; i < s->n; i++) {
		jw_obj(&w, NULL);
		emit_count(&w, d, &s->v[i]);
		jw_end_obj(&w);
	}
	jw_end_arr(&w);
	jw_finish(&w);
	fflush(stdout);
}

static void emit_final(struct drops *d, const struct drops_snapshot *s, __u64 t0, bool prog_stats)
{
	struct jw w;
	size_t i;

	for (i = 0; i < s->n; i++) {
		jw_begin(&w, stdout, "count");
		emit_count(&w, d, &s->v[i]);
		jw_finish(&w);
	}
	jw_begin(&w, stdout, "summary");
	emit_hooks(&w, d);
	if (prog_stats)
		emit_prog_stats(&w, d);
	jw_u64(&w, "counts", s->n);
	jw_u64(&w, "overflow", s->overflow);
	jw_u64(&w, "uncharged", s->uncharged);
	jw_u64(&w, "drop_runs", s->run_entries);
	jw_u64(&w, "runs_used", s->runs_used);
	jw_u64(&w, "events", s->events);
	jw_double(&w, "duration_s", (double)(s->t_ns - t0) / 1e9);
	jw_finish(&w);
	fflush(stdout);
}

/* --hooks: names to bits; -EINVAL after one line naming the unknown one. */
static int parse_hooks(const char *list, unsigned int *out)
{
	char *copy = strdup(list), *tok, *save = NULL;
	int h, err = 0;

	if (!copy)
		return -ENOMEM;
	*out = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		h = drops_hook_by_name(tok);
		if (h < 0) {
			fprintf(stderr,
				"drops-probe: --hooks: no hook '%s'; give kfree_skb, xdp_redirect_err, xdp_devmap_xmit or xdp_bulk_tx\n",
				tok);
			err = -EINVAL;
			break;
		}
		*out |= 1U << h;
	}
	free(copy);
	return err;
}

/* Count until the deadline or a signal; print each period's deltas if asked. */
static int run(struct drops *d, const struct cfg *c, struct drops_snapshot *last, __u64 t0)
{
	struct drops_snapshot cur = { 0 }, delta = { 0 }, tmp;
	__u64 end = c->duration ? deadline_after(t0, c->duration) : ~0ULL, next;
	int err = 0;

	while (!runtime_stop && now_ns() < end) {
		next = c->interval ? deadline_after(now_ns(), c->interval) : end;
		if (next > end)
			next = end;
		/* Without a duration or an interval: wake now and then to see the signal flag. */
		if (next == ~0ULL)
			next = now_ns() + 1000000000ULL;
		runtime_sleep_until(next);
		if (!c->interval)
			continue;
		err = drops_read(d, &cur);
		if (!err)
			err = drops_delta(&cur, last, &delta);
		if (err)
			break;
		emit_interval(d, &delta);
		tmp = *last;
		*last = cur;
		cur = tmp;
	}
	drops_snapshot_free(&cur);
	drops_snapshot_free(&delta);
	return err;
}

int main(int argc, char **argv)
{
	struct cfg c = { .max_entries = XDPSG_DROPS_ENTRIES, .drop_runs = XDPSG_DROPS_RUN_ENTRIES };
	const struct cfg defaults = c;
	struct drops_snapshot last = { 0 };
	const char *positional;
	struct drops_opts o = { 0 };
	struct drops *d = NULL;
	struct stamp_key key;
	int stats_fd = -1;
	char why[512];
	struct jw w;
	__u64 t0;
	int err, ret = 1;

	log_set_prog("drops-probe");
	err = params_command("drops-probe", &cmd, argc, argv, &c, &defaults, &positional);
	if (err >= 0)
		return err;
	log_setup(false, c.verbose);
	runtime_install_signals();

	o.max_entries = (unsigned int)c.max_entries;
	o.run_entries = (unsigned int)c.drop_runs;
	o.no_unstamped = c.no_unstamped;
	if (stamp_key_resolve(&key, c.stamp_key, why, sizeof(why))) {
		fprintf(stderr, "drops-probe: %s\n", why);
		return 2;
	}
	o.key = &key;
	o.btf_path = c.btf;
	if (c.hooks && parse_hooks(c.hooks, &o.hooks))
		return 2;
	/* On only while we run: it costs every BPF program on the host two clock reads. */
	if (c.prog_stats) {
		stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (stats_fd < 0) {
			fprintf(stderr, "drops-probe: --prog-stats: %s\n", strerror(errno));
			return 2;
		}
	}

	/* Load and attach; the books start empty, so a final read is the count since now. */
	err = drops__open(&o, &d, why, sizeof(why));
	if (err) {
		fprintf(stderr, "drops-probe: %s\n", why);
		ret = 2;
		goto out;
	}
	t0 = now_ns();
	jw_begin(&w, stdout, "ready");
	emit_hooks(&w, d);
	jw_finish(&w);
	fflush(stdout);

	err = run(d, &c, &last, t0);
	if (!err)
		err = drops_read(d, &last);
	if (err) {
		fprintf(stderr, "drops-probe: reading the tracer's books: %s\n", strerror(-err));
		goto out;
	}
	emit_final(d, &last, t0, c.prog_stats);
	ret = 0;
out:
	drops_snapshot_free(&last);
	drops__destroy(d);
	if (stats_fd >= 0)
		close(stats_fd);
	return ret;
}
