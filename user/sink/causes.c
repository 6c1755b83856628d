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
#include "causes_int.h"
#include "sink.h"

const char *causes_test_btf(void)
{
#ifdef XDPSG_TEST_HOOKS
	return getenv("XDPSG_TEST_DROPS_BTF");
#else
	return NULL;
#endif
}

/*
 * Read every --drop-causes-from source, each in timeout_ms at most. A source
 * that stops answering is named once, until it answers again; what it said
 * before stays (its counts only grow).
 */
static void remote_read(struct causes *c, int timeout_ms, __u64 now)
{
	unsigned int i;

	c->remote_next = now + c->remote_every;
	for (i = 0; i < c->nsrc; i++) {
		struct causes_src *s = &c->src[i];
		bool was = s->failing;

		if (!causes_src_read(s, timeout_ms)) {
			if (was)
				pr_info("--drop-causes-from %s: read again\n", s->url);
			continue;
		}
		if (!was)
			pr_warn("--drop-causes-from %s: %s; its share of the losses is unexplained "
				"until it answers (is 'xdp-sink drops --metrics-listen' running there?)\n",
				s->url, s->err);
	}
}

int causes__open(struct sink *sk)
{
	struct drops_opts o = { .btf_path = causes_test_btf(),
				.run_entries = (unsigned int)sk->cfg->drop_runs,
				.key = &sk->key };
	const struct param_strings *from = &sk->cfg->causes_from;
	unsigned int i;
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
	if (sk->cfg->drop_causes == SINK_CAUSES_LOCAL)
		o.only_netns = c->netns;
	c->src = calloc(from->n ? from->n : 1, sizeof(*c->src));
	if (!c->src) {
		free(c);
		return -ENOMEM;
	}
	for (i = 0; i < from->n; i++) {
		if (causes_src_parse(from->v[i], &c->src[i], why, sizeof(why))) {
			pr_warn("%s\n", why);
			free(c->src);
			free(c);
			return -EINVAL;
		}
	}
	c->nsrc = from->n;
	c->remote_every = sk->cfg->interval;
	/* The first slice starts now: the books are empty. */
	c->last_t = now_ns();
	err = drops__open(&o, &c->d, why, sizeof(why));
	if (err) {
		pr_warn("--drop-causes: cannot attach the drop tracer: %s\n", why);
		free(c->src);
		free(c);
		/* Whatever the kernel said, the environment refused: a usage problem. */
		return err == -ENOMEM ? err : -EOPNOTSUPP;
	}
	sk->causes = c;
	remote_read(c, CAUSES_REMOTE_TICK_MS, now_ns());
	return 0;
}

void causes__destroy(struct causes *c)
{
	unsigned int i;

	if (!c)
		return;
	drops__destroy(c->d);
	drops_snapshot_free(&c->snap);
	for (i = 0; i < c->nsrc; i++)
		causes_src_free(&c->src[i]);
	free(c->src);
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
	if (!c || c->settled)
		return;
	if (c->nsrc && now >= c->remote_next)
		remote_read(c, CAUSES_REMOTE_TICK_MS, now);
	if (now - c->last_t < CAUSES_SLICE_NS)
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

/*
 * Another host's counts, as its tracer booked them: a run's drops and marks
 * are that run's causes (by id, whatever host they were counted on); its
 * drops without a run are beside the runs (that host's time is not ours to
 * charge them by); frames without a stamp or with a forged one are that
 * host's business.
 */
static void remote_join(struct causes *c, const struct causes_run *runs, unsigned int n)
{
	unsigned int i;
	size_t j;

	for (i = 0; i < c->nsrc; i++)
		for (j = 0; j < c->src[i].n; j++) {
			const struct remote_cause *rc = &c->src[i].v[j];
			bool run = !strcmp(rc->kind, "run"), mark = !strcmp(rc->kind, "mark");
			struct cause *x = &c->v[c->n];

			if (!rc->packets || (!run && !mark && strcmp(rc->kind, "unidentified") &&
					     strcmp(rc->kind, "uncharged")))
				continue;
			x->src = &c->src[i];
			x->rc = rc;
			x->c.packets = rc->packets;
			x->c.key.kind = run  ? XDPSG_DROPS_RUN :
					mark ? XDPSG_DROPS_MARK :
					       XDPSG_DROPS_UNCHARGED;
			x->c.key.netns = (__u32)strtoul(rc->netns, NULL, 10);
			snprintf(x->c.dev, sizeof(x->c.dev), "%.*s", (int)sizeof(x->c.dev) - 1,
				 rc->dev);
			x->mark = mark;
			x->run = run || mark ? rc->run : 0;
			x->unseen = x->run && !is_in(x->run, runs, n);
			c->n++;
		}
}

int causes_settle(struct causes *c, const struct causes_run *runs, unsigned int n)
{
	size_t i, remote;
	int err;

	if (c->settled)
		return 0;
	err = drops_read(c->d, &c->snap);
	if (!err)
		err = record(c, &c->snap, c->snap.t_ns);
	if (err)
		return err;
	if (c->nsrc)
		remote_read(c, CAUSES_REMOTE_END_MS, now_ns());
	for (i = 0, remote = 0; i < c->nsrc; i++)
		remote += c->src[i].n;
	c->v = calloc(c->snap.n + c->nsl + remote + 1, sizeof(*c->v));
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
	remote_join(c, runs, n);
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
__u64 causes_run_sum(const struct causes *c, __u32 run, bool mark, bool unidentified_only)
{
	__u64 t = 0;
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->v[i].run == run && c->v[i].mark == mark &&
		    (!unidentified_only || c->v[i].c.key.kind == XDPSG_DROPS_UNIDENTIFIED))
			t += c->v[i].c.packets;
	return t;
}

__u64 causes_run_total(const struct causes *c, __u32 run, bool mark)
{
	return causes_run_sum(c, run, mark, false);
}

/* The run's causes against what its books miss (drops_balance()). */
struct drops_balance causes_balance(const struct causes *c, __u32 run,
				    const struct causes_books *bk)
{
	return drops_balance(bk->lost + (__s64)bk->head, causes_run_total(c, run, false),
			     causes_run_sum(c, run, false, true), causes_run_total(c, run, true),
			     bk->marks_missing);
}
