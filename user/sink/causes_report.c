// SPDX-License-Identifier: GPL-2.0
/*
 * --drop-causes' reports (causes.h): each run's causes, what was charged to
 * no run, and where they were counted, in text, JSON and metrics.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/fmt.h"
#include "causes_int.h"
#include "report/counter_desc.h"
#include "sink.h"

/* A cause's reason: the kernel's name here, or as another host's tracer named it. */
static const char *cause_reason(const struct causes *c, const struct cause *x, char *buf,
				size_t len)
{
	return x->rc ? x->rc->reason : causes_reason(c->d, x->c.key.reason, buf, len);
}

/* Where: "dev", "dev@ns", and for another host's count "dev@ns (at HOST)". */
static void cause_where(const struct cause *x, char *buf, size_t len)
{
	char dev[64];

	if (!x->rc) {
		causes_dev_name(&x->c, buf, len);
		return;
	}
	fmt_name(dev, sizeof(dev), x->rc->dev[0] ? x->rc->dev : "?");
	snprintf(buf, len, "%.63s%s%.63s (at %.100s)", dev, x->rc->netns[0] ? "@" : "",
		 x->rc->netns, x->src->host);
}

static void json_cause(const struct causes *c, struct jw *w, const struct cause *x)
{
	char r[64], ns[256];

	jw_obj(w, NULL);
	if (x->unseen)
		jw_u64(w, "run", x->run);
	jw_str(w, "reason", cause_reason(c, x, r, sizeof(r)));
	jw_str(w, "dev", x->c.dev);
	jw_u64(w, "netns", x->c.key.netns);
	if (x->rc && x->rc->netns[0])
		jw_str(w, "ns", x->rc->netns);
	else if (!x->rc && x->c.key.netns && !drops_netns_name(x->c.key.netns, ns, sizeof(ns)))
		jw_str(w, "ns", ns);
	/* this host's tracer, or the URL of another's (--drop-causes-from) */
	jw_str(w, "source", x->src ? x->src->url : "local");
	jw_u64(w, "packets", x->c.packets);
	/* false: charged for want of the frame, by when it was dropped. */
	jw_bool(w, "identified", x->c.key.kind != XDPSG_DROPS_UNIDENTIFIED);
	if (x->mark)
		jw_bool(w, "mark", true);
	jw_end_obj(w);
}

void causes_json_run(const struct causes *c, struct jw *w, __u32 run, const struct causes_books *bk)
{
	struct drops_balance b;
	size_t i;

	if (!c || !c->settled)
		return;
	b = causes_balance(c, run, bk);
	jw_arr(w, "lost_causes");
	for (i = 0; i < c->n; i++)
		if (c->v[i].run == run && !c->v[i].mark)
			json_cause(c, w, &c->v[i]);
	jw_end_arr(w);
	jw_u64(w, "lost_unexplained", b.unexplained);
	jw_u64(w, "lost_overexplained", b.over);
	/* Of lost_causes' unidentified drops, those taken as the run's missing marks. */
	jw_u64(w, "marks_charged", b.marks_charged);
	/* The run's start and end marks dropped: outside its frames and lost. */
	jw_u64(w, "marks_dropped", causes_run_total(c, run, true) + b.marks_charged);
}

void causes_json_rest(const struct causes *c, struct jw *w)
{
	size_t i;

	if (!c || !c->settled)
		return;
	jw_obj(w, "drop_causes");
	jw_arr(w, "unattributed");
	for (i = 0; i < c->n; i++)
		if (!c->v[i].run)
			json_cause(c, w, &c->v[i]);
	jw_end_arr(w);
	/* Runs of which no frame arrived (all lost, or another sink's): the tracer's counts. */
	jw_arr(w, "unseen_runs");
	for (i = 0; i < c->n; i++)
		if (c->v[i].unseen)
			json_cause(c, w, &c->v[i]);
	jw_end_arr(w);
	jw_u64(w, "unstamped", c->unstamped);
	jw_u64(w, "forged", c->forged);
	jw_u64(w, "overflow", c->snap.overflow);
	/* Drops of runs the run books had no room for (--drop-runs entries). */
	jw_u64(w, "uncharged", c->snap.uncharged);
	jw_u64(w, "drop_runs", c->snap.run_entries);
	jw_u64(w, "runs_used", c->snap.runs_used);
	jw_arr(w, "sources");
	for (i = 0; i < c->nsrc; i++) {
		const struct causes_src *s = &c->src[i];

		jw_obj(w, NULL);
		jw_str(w, "url", s->url);
		jw_u64(w, "reads", s->reads);
		jw_u64(w, "failures", s->fails);
		/* false: the last reading failed, and the drops since the one before are unexplained */
		jw_bool(w, "read_at_end", s->read_ns && !s->failing);
		jw_u64(w, "counts", s->n);
		if (s->failing)
			jw_str(w, "error", s->err);
		else
			jw_null(w, "error");
		jw_end_obj(w);
	}
	jw_end_arr(w);
	jw_end_obj(w);
}

void causes_text_run(const struct causes *c, __u32 run, const struct causes_books *bk)
{
	char r[64], dev[256];
	struct drops_balance b;
	size_t i;

	if (!c || !c->settled)
		return;
	b = causes_balance(c, run, bk);
	printf("    run %08x lost %s", run, FMT_ICOUNT(bk->lost));
	if (bk->head)
		printf(" and %s missing before the first frame", FMT_COUNT(bk->head));
	printf(":");
	for (i = 0; i < c->n; i++) {
		if (c->v[i].run != run || c->v[i].mark)
			continue;
		cause_where(&c->v[i], dev, sizeof(dev));
		printf(" %s %s %s%s,", cause_reason(c, &c->v[i], r, sizeof(r)), dev,
		       FMT_COUNT(c->v[i].c.packets), c->v[i].charged ? " (unidentified)" : "");
	}
	printf(" unexplained %s", FMT_COUNT(b.unexplained));
	if (b.over)
		printf("; %s more dropped than lost (dropped and delivered anyway, or the tail of a "
		       "run whose end was not seen)",
		       FMT_COUNT(b.over));
	if (causes_run_total(c, run, true) + b.marks_charged)
		printf("; %s of its marks dropped%s",
		       FMT_COUNT(causes_run_total(c, run, true) + b.marks_charged),
		       b.marks_charged ? " (the unidentified drops beyond lost)" : "");
	printf("\n");
}

/* The tracer's own limits, when they were reached. */
static void text_limits(const struct causes *c)
{
	const struct drops_snapshot *s = &c->snap;

	if (s->uncharged)
		printf("    the tracer's run books were full (%s entries): %s drops of runs went "
		       "uncharged, counted by reason and device but not by run; raise --drop-runs\n",
		       FMT_COUNT(s->run_entries), FMT_COUNT(s->uncharged));
	else if (s->runs_used >= s->run_entries)
		printf("    the tracer's run books are full (%s entries): another run's drops would go "
		       "uncharged; raise --drop-runs\n",
		       FMT_COUNT(s->run_entries));
	if (s->overflow)
		printf("    the tracer's books were full: %s drops not counted\n",
		       FMT_COUNT(s->overflow));
}

void causes_text_rest(const struct causes *c)
{
	char r[64], dev[256];
	size_t i;

	if (!c || !c->settled)
		return;
	for (i = 0; i < c->n; i++) {
		if (c->v[i].run && !c->v[i].unseen)
			continue;
		cause_where(&c->v[i], dev, sizeof(dev));
		if (c->v[i].unseen)
			printf("    run %08x (no frame of it arrived) dropped: ", c->v[i].run);
		else
			printf("    dropped, no run's (unidentified; several runs or none arriving "
			       "then, or no run of ours dropped there by its stamp): ");
		printf("%s%s %s %s\n", c->v[i].mark ? "marks " : "",
		       cause_reason(c, &c->v[i], r, sizeof(r)), dev, FMT_COUNT(c->v[i].c.packets));
	}
	if (c->forged)
		printf("    dropped with a stamp that fails the key's check (forged, or another key): "
		       "%s, no run's\n",
		       FMT_COUNT(c->forged));
	text_limits(c);
	for (i = 0; i < c->nsrc; i++) {
		const struct causes_src *s = &c->src[i];

		if (!s->failing)
			printf("    drops from %s: read at the end (%u readings)\n", s->url,
			       s->reads);
		else if (s->read_ns)
			printf("    drops from %s: NOT read at the end (%s): its counts are from an "
			       "earlier reading; drops after it are unexplained\n",
			       s->url, s->err);
		else
			printf("    drops from %s: NEVER read (%s): its share of the losses is "
			       "unexplained\n",
			       s->url, s->err);
	}
}

void causes_metric_sample(struct metrics_w *w, const char *name, const char *run, const char *kind,
			  const char *reason, const struct drops_count *k, __u64 v)
{
	char esc[4][128], dev[64] = "", ns[256] = "";

	if (k) {
		snprintf(dev, sizeof(dev), "%s", k->dev);
		if (!dev[0] && k->key.ifindex)
			snprintf(dev, sizeof(dev), "ifindex%d", k->key.ifindex);
		if (k->key.netns && drops_netns_name(k->key.netns, ns, sizeof(ns)))
			snprintf(ns, sizeof(ns), "%u", k->key.netns);
	}
	if (!metrics_escape(run, esc[0], sizeof(esc[0])) ||
	    !metrics_escape(reason, esc[1], sizeof(esc[1])) ||
	    !metrics_escape(dev, esc[2], sizeof(esc[2])) ||
	    !metrics_escape(ns, esc[3], sizeof(esc[3])))
		return;
	/* device is where the frames were dropped: the sink's own would be a second device. */
	fprintf(w->f, "%s{%s%s", name, w->labels_nodev, w->labels_nodev[0] ? "," : "");
	if (kind)
		fprintf(w->f, "kind=\"%s\",", kind);
	fprintf(w->f, "run=\"%s\",reason=\"%s\",device=\"%s\",netns=\"%s\"} %" PRIu64 "\n", esc[0],
		esc[1], esc[2], esc[3], (uint64_t)v);
}

void causes_metrics_head(const struct causes *c, struct metrics_w *w)
{
	struct sink_cause_vals v = { .drop_runs_uncharged = c ? c->snap.uncharged : 0 };
	const struct ctr_desc *d = &sink_causes.rows[SINK_CAUSE_UNCHARGED];

	if (!c || !c->settled)
		return;
	ctr_metric_head(w, &sink_causes, d);
	ctr_metric_at(w, &sink_causes, d, NULL, NULL, &v);
	ctr_metric_head(w, &sink_causes, &sink_causes.rows[SINK_CAUSE_LOST]);
}

/* Another host's count: its own labels, and source, the URL it was read from. */
static void remote_metric_sample(struct metrics_w *w, const char *name, const char *run,
				 const struct cause *x)
{
	char esc[5][CAUSES_SRC_URL_MAX * 2];

	if (!metrics_escape(run, esc[0], sizeof(esc[0])) ||
	    !metrics_escape(x->rc->reason, esc[1], sizeof(esc[1])) ||
	    !metrics_escape(x->rc->dev, esc[2], sizeof(esc[2])) ||
	    !metrics_escape(x->rc->netns, esc[3], sizeof(esc[3])) ||
	    !metrics_escape(x->src->url, esc[4], sizeof(esc[4])))
		return;
	fprintf(w->f,
		"%s{%s%srun=\"%s\",reason=\"%s\",device=\"%s\",netns=\"%s\",source=\"%s\"} %" PRIu64
		"\n",
		name, w->labels_nodev, w->labels_nodev[0] ? "," : "", esc[0], esc[1], esc[2],
		esc[3], esc[4], (uint64_t)x->c.packets);
}

void causes_metrics_run(const struct causes *c, struct metrics_w *w, __u32 run,
			const struct causes_books *bk)
{
	static const char *const name = "xdp_sink_lost_by_cause_total";
	char r[64], id[16];
	size_t i;

	if (!c || !c->settled)
		return;
	snprintf(id, sizeof(id), "%08x", run);
	for (i = 0; i < c->n; i++) {
		if (c->v[i].run != run || c->v[i].mark)
			continue;
		if (c->v[i].rc)
			remote_metric_sample(w, name, id, &c->v[i]);
		else
			causes_metric_sample(w, name, id, NULL,
					     causes_reason(c->d, c->v[i].c.key.reason, r,
							   sizeof(r)),
					     &c->v[i].c, c->v[i].c.packets);
	}
	/* So that a run's samples add up to its lost. */
	causes_metric_sample(w, name, id, NULL, "unexplained", NULL,
			     causes_balance(c, run, bk).unexplained);
}
