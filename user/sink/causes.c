// SPDX-License-Identifier: GPL-2.0
/*
 * --drop-causes: the drop tracer's books joined with the sink's per-run
 * books (causes.h). Nothing here runs per packet: the tracer counts in the
 * kernel, and its books are read once, at the summary.
 */
#include <errno.h>
#include <inttypes.h>
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

/* A cause of a run's losses, or a count charged to no run (run 0, !charged). */
struct cause {
	struct drops_count c;
	__u32 run;
	bool charged; /* an unidentified count charged to the run arriving when it was dropped */
	bool unseen; /* a run's drops, but no frame of that run reached the sink */
	bool mark; /* the run's marks dropped: no frame of its books, never a cause of lost */
};

/*
 * Drops without their run (unidentified: the socket's XSK_*, XDP_XMIT the
 * tracer could not read, a stamp beyond its copy) are read every
 * CAUSES_SLICE_NS and charged by when they happened: to the one run whose
 * frames were arriving then (a run's first to last receive, widened by
 * CAUSES_MARGIN_NS), on the sink's own interface always, elsewhere only on a
 * device where the tracer counted drops of the sink's runs by their stamp (a
 * device on their path: a drop on a device no run of ours goes through is
 * not ours because of when it happened).
 */
#define CAUSES_SLICE_NS 50000000ULL
#define CAUSES_MARGIN_NS 20000000ULL

/* An unidentified count's growth between two readings. */
struct slice {
	__u64 t0, t1;
	struct xdpsg_drops_key key; /* reason and device */
	__u64 packets;
};

/* An unidentified count as last read. */
struct seen {
	struct xdpsg_drops_key key;
	__u64 packets;
};

struct causes {
	struct drops *d;
	struct slice *sl; /* unidentified drops, by time */
	size_t nsl, capsl;
	struct seen *seen; /* their totals at the last reading, by key */
	size_t nseen;
	__u64 last_t;
	int ifindex; /* the sink's interface */
	__u32 netns; /* and its namespace's inode */
	bool settled;
	struct drops_snapshot snap;
	struct cause *v;
	size_t n;
	__u64 unstamped; /* frames without a stamp the tracer saw dropped: never a run's */
	__u64 forged; /* frames whose stamp failed the check: never a run's */
};

const char *causes_test_btf(void)
{
#ifdef XDPSG_TEST_HOOKS
	return getenv("XDPSG_TEST_DROPS_BTF");
#else
	return NULL;
#endif
}

int causes__open(struct sink *sk)
{
	struct drops_opts o = { .btf_path = causes_test_btf(),
				.run_entries = (unsigned int)sk->cfg->drop_runs,
				.key = &sk->key };
	struct causes *c;
	struct stat st;
	char why[512];
	int err;

	if (sk->cfg->no_verify) {
		pr_warn("--drop-causes joins the tracer's drops with the run's books, which "
			"--no-verify does not keep; drop one of them\n");
		return -EINVAL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->ifindex = sk->ifc.ifindex;
	if (!stat("/proc/self/ns/net", &st))
		c->netns = (__u32)st.st_ino;
	/* The first slice starts now: the books are empty. */
	c->last_t = now_ns();
	err = drops__open(&o, &c->d, why, sizeof(why));
	if (err) {
		pr_warn("--drop-causes: cannot attach the drop tracer: %s\n", why);
		free(c);
		/* Whatever the kernel said, the environment refused: a usage problem. */
		return err == -ENOMEM ? err : -EOPNOTSUPP;
	}
	sk->causes = c;
	return 0;
}

void causes__destroy(struct causes *c)
{
	if (!c)
		return;
	drops__destroy(c->d);
	drops_snapshot_free(&c->snap);
	free(c->v);
	free(c->sl);
	free(c->seen);
	free(c);
}

static bool same_dev(const struct drops_count *a, const struct drops_count *b)
{
	return a->key.ifindex == b->key.ifindex && a->key.netns == b->key.netns;
}

static bool is_in(__u32 run, const struct causes_run *runs, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (runs[i].id == run)
			return true;
	return false;
}

static bool same_key(const struct xdpsg_drops_key *a, const struct xdpsg_drops_key *b)
{
	return !memcmp(a, b, sizeof(*a));
}

static bool on_sink(const struct causes *c, const struct drops_count *k)
{
	return k->key.ifindex == c->ifindex && k->key.netns == c->netns;
}

/* The entry of seen for key, made with 0 packets if there is none; NULL without memory. */
static struct seen *seen_of(struct causes *c, const struct xdpsg_drops_key *key)
{
	struct seen *p;
	size_t j;

	for (j = 0; j < c->nseen; j++)
		if (same_key(&c->seen[j].key, key))
			return &c->seen[j];
	p = realloc(c->seen, (c->nseen + 1) * sizeof(*c->seen));
	if (!p)
		return NULL;
	c->seen = p;
	c->seen[c->nseen] = (struct seen){ .key = *key };
	return &c->seen[c->nseen++];
}

/* The unidentified drops since the last reading, as slices [last_t, t]. */
static int record(struct causes *c, const struct drops_snapshot *s, __u64 t)
{
	struct seen *was;
	size_t i;
	void *p;

	for (i = 0; i < s->n; i++) {
		const struct drops_count *k = &s->v[i];

		if (k->key.kind != XDPSG_DROPS_UNIDENTIFIED)
			continue;
		was = seen_of(c, &k->key);
		if (!was)
			return -ENOMEM;
		if (k->packets <= was->packets)
			continue;
		if (c->nsl == c->capsl) {
			p = realloc(c->sl, (c->capsl ? c->capsl * 2 : 64) * sizeof(*c->sl));
			if (!p)
				return -ENOMEM;
			c->sl = p;
			c->capsl = c->capsl ? c->capsl * 2 : 64;
		}
		c->sl[c->nsl++] = (struct slice){ c->last_t, t, k->key, k->packets - was->packets };
		was->packets = k->packets;
	}
	c->last_t = t;
	return 0;
}

void causes_tick(struct causes *c, __u64 now)
{
	if (!c || c->settled || now - c->last_t < CAUSES_SLICE_NS)
		return;
	/* A failed reading leaves its drops to the next one: nothing is lost, only blurred. */
	if (!drops_read_other(c->d, &c->snap))
		record(c, &c->snap, c->snap.t_ns);
}

/* The one run whose frames were arriving during slice x, or 0. */
static __u32 slice_run(const struct slice *x, const struct causes_run *runs, unsigned int n)
{
	__u32 one = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (runs[i].first_ns > x->t1 + CAUSES_MARGIN_NS ||
		    runs[i].last_ns + CAUSES_MARGIN_NS < x->t0)
			continue;
		if (one)
			return 0;
		one = runs[i].id;
	}
	return one;
}

/* Did the tracer count drops of one of the sink's runs, by their stamp, on k's device? */
static bool on_path(const struct causes *c, const struct drops_count *k,
		    const struct causes_run *runs, unsigned int n)
{
	size_t i;

	for (i = 0; i < c->snap.n; i++)
		if (c->snap.v[i].key.kind == XDPSG_DROPS_RUN && same_dev(&c->snap.v[i], k) &&
		    is_in(c->snap.v[i].key.run, runs, n))
			return true;
	return false;
}

/* Add a slice's drops to the cause of (k, run), or make it. */
static void charge(struct causes *c, const struct drops_count *k, __u32 run, __u64 packets)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->v[i].run == run && same_key(&c->v[i].c.key, &k->key)) {
			c->v[i].c.packets += packets;
			return;
		}
	c->v[c->n] = (struct cause){ .c = *k, .run = run, .charged = run != 0 };
	c->v[c->n++].c.packets = packets;
}

/* An unidentified count, slice by slice, to the run arriving then (or to none). */
static void charge_slices(struct causes *c, const struct drops_count *k,
			  const struct causes_run *runs, unsigned int n)
{
	bool ours = on_sink(c, k) || on_path(c, k, runs, n);
	size_t j;

	for (j = 0; j < c->nsl; j++)
		if (same_key(&c->sl[j].key, &k->key))
			charge(c, k, ours ? slice_run(&c->sl[j], runs, n) : 0, c->sl[j].packets);
}

int causes_settle(struct causes *c, const struct causes_run *runs, unsigned int n)
{
	size_t i;
	int err;

	if (c->settled)
		return 0;
	err = drops_read(c->d, &c->snap);
	if (!err)
		err = record(c, &c->snap, c->snap.t_ns);
	if (err)
		return err;
	c->v = calloc(c->snap.n + c->nsl + 1, sizeof(*c->v));
	if (!c->v)
		return -ENOMEM;
	for (i = 0; i < c->snap.n; i++) {
		const struct drops_count *k = &c->snap.v[i];
		struct cause *x = &c->v[c->n];

		switch (k->key.kind) {
		case XDPSG_DROPS_UNSTAMPED:
			c->unstamped += k->packets;
			continue;
		case XDPSG_DROPS_FORGED:
			c->forged += k->packets;
			continue;
		case XDPSG_DROPS_UNCHARGED:
			/* A run's drops that found no entry: their run is unknown (snap.uncharged). */
			continue;
		case XDPSG_DROPS_UNIDENTIFIED:
			charge_slices(c, k, runs, n);
			continue;
		default:
			break;
		}
		/* A run that lost every frame, or another sink's run on the host: beside the runs. */
		x->c = *k;
		x->mark = k->key.kind == XDPSG_DROPS_MARK;
		x->run = k->key.run;
		x->unseen = !is_in(k->key.run, runs, n);
		c->n++;
	}
	c->settled = true;
	return 0;
}

const char *causes_reason(struct drops *d, __u32 reason, char *buf, size_t len)
{
	return drops_reason_name(d, reason, buf, len);
}

void causes_dev_name(const struct drops_count *k, char *buf, size_t len)
{
	fmt_name(buf, len, k->dev[0] ? k->dev : "?");
	if (!k->dev[0] && k->key.ifindex)
		snprintf(buf, len, "ifindex%d", k->key.ifindex);
}

/* A run's causes (mark false), or its marks dropped (mark true); only unidentified ones too. */
static __u64 run_sum(const struct causes *c, __u32 run, bool mark, bool unidentified_only)
{
	__u64 t = 0;
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->v[i].run == run && c->v[i].mark == mark &&
		    (!unidentified_only || c->v[i].c.key.kind == XDPSG_DROPS_UNIDENTIFIED))
			t += c->v[i].c.packets;
	return t;
}

static __u64 run_total(const struct causes *c, __u32 run, bool mark)
{
	return run_sum(c, run, mark, false);
}

static void json_cause(const struct causes *c, struct jw *w, const struct cause *x)
{
	char r[64], ns[256];

	jw_obj(w, NULL);
	if (x->unseen)
		jw_u64(w, "run", x->run);
	jw_str(w, "reason", causes_reason(c->d, x->c.key.reason, r, sizeof(r)));
	jw_str(w, "dev", x->c.dev);
	jw_u64(w, "netns", x->c.key.netns);
	if (x->c.key.netns && !drops_netns_name(x->c.key.netns, ns, sizeof(ns)))
		jw_str(w, "ns", ns);
	jw_u64(w, "packets", x->c.packets);
	/* false: charged for want of the frame, by when it was dropped. */
	jw_bool(w, "identified", x->c.key.kind != XDPSG_DROPS_UNIDENTIFIED);
	if (x->mark)
		jw_bool(w, "mark", true);
	jw_end_obj(w);
}

/* The run's causes against what its books miss (drops_balance()). */
static struct drops_balance balance(const struct causes *c, __u32 run,
				    const struct causes_books *bk)
{
	return drops_balance(bk->lost + (__s64)bk->head, run_total(c, run, false),
			     run_sum(c, run, false, true), run_total(c, run, true),
			     bk->marks_missing);
}

void causes_json_run(const struct causes *c, struct jw *w, __u32 run, const struct causes_books *bk)
{
	struct drops_balance b;
	size_t i;

	if (!c || !c->settled)
		return;
	b = balance(c, run, bk);
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
	jw_u64(w, "marks_dropped", run_total(c, run, true) + b.marks_charged);
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
	jw_end_obj(w);
}

void causes_text_run(const struct causes *c, __u32 run, const struct causes_books *bk)
{
	char r[64], dev[64];
	struct drops_balance b;
	size_t i;

	if (!c || !c->settled)
		return;
	b = balance(c, run, bk);
	printf("    run %08x lost %s", run, FMT_ICOUNT(bk->lost));
	if (bk->head)
		printf(" and %s missing before the first frame", FMT_COUNT(bk->head));
	printf(":");
	for (i = 0; i < c->n; i++) {
		if (c->v[i].run != run || c->v[i].mark)
			continue;
		causes_dev_name(&c->v[i].c, dev, sizeof(dev));
		printf(" %s %s %s%s,", causes_reason(c->d, c->v[i].c.key.reason, r, sizeof(r)), dev,
		       FMT_COUNT(c->v[i].c.packets), c->v[i].charged ? " (unidentified)" : "");
	}
	printf(" unexplained %s", FMT_COUNT(b.unexplained));
	if (b.over)
		printf("; %s more dropped than lost (dropped and delivered anyway, or the tail of a "
		       "run whose end was not seen)",
		       FMT_COUNT(b.over));
	if (run_total(c, run, true) + b.marks_charged)
		printf("; %s of its marks dropped%s",
		       FMT_COUNT(run_total(c, run, true) + b.marks_charged),
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
	char r[64], dev[64];
	size_t i;

	if (!c || !c->settled)
		return;
	for (i = 0; i < c->n; i++) {
		if (c->v[i].run && !c->v[i].unseen)
			continue;
		causes_dev_name(&c->v[i].c, dev, sizeof(dev));
		if (c->v[i].unseen)
			printf("    run %08x (no frame of it arrived) dropped: ", c->v[i].run);
		else
			printf("    dropped, no run's (unidentified; several runs or none arriving "
			       "then, or no run of ours dropped there by its stamp): ");
		printf("%s%s %s %s\n", c->v[i].mark ? "marks " : "",
		       causes_reason(c->d, c->v[i].c.key.reason, r, sizeof(r)), dev,
		       FMT_COUNT(c->v[i].c.packets));
	}
	if (c->forged)
		printf("    dropped with a stamp that fails the key's check (forged, or another key): "
		       "%s, no run's\n",
		       FMT_COUNT(c->forged));
	text_limits(c);
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
		causes_metric_sample(w, name, id, NULL,
				     causes_reason(c->d, c->v[i].c.key.reason, r, sizeof(r)),
				     &c->v[i].c, c->v[i].c.packets);
	}
	/* So that a run's samples add up to its lost. */
	causes_metric_sample(w, name, id, NULL, "unexplained", NULL,
			     balance(c, run, bk).unexplained);
}
