// SPDX-License-Identifier: GPL-2.0
/* Loss episodes: the books' counts and the longest kept whole (episodes.h). */
#include <stdlib.h>
#include <string.h>

#include "measure/episodes.h"

const __u64 episode_bounds_ns[EPISODE_BOUNDS] = {
	100000ULL,    1000000ULL,   5000000ULL,	  10000000ULL,	 20000000ULL,	50000000ULL,
	100000000ULL, 200000000ULL, 500000000ULL, 1000000000ULL, 5000000000ULL, 30000000000ULL,
};

/* A before B in the report: longer, then by flow, then by sequence number. */
static bool longer(const struct episode *a, const struct episode *b)
{
	if (a->outage_ns != b->outage_ns)
		return a->outage_ns > b->outage_ns;
	if (a->flow != b->flow)
		return a->flow < b->flow;
	return a->first < b->first;
}

static void keep_longest(struct episodes *e, const struct episode *x, unsigned int keep)
{
	unsigned int i, v = 0;

	if (keep > EPISODES_MAX)
		keep = EPISODES_MAX;
	if (e->nlong < keep) {
		e->longest[e->nlong++] = *x;
		return;
	}
	if (!e->nlong)
		return;
	/* Full: the new one takes the shortest's place, if it is longer. Rare: once an episode. */
	for (i = 1; i < e->nlong; i++)
		if (longer(&e->longest[v], &e->longest[i]))
			v = i;
	if (longer(x, &e->longest[v]))
		e->longest[v] = *x;
}

void episodes_add(struct episodes *e, const struct episode *x, unsigned int keep)
{
	unsigned int b = 0;

	while (b < EPISODE_BOUNDS && x->outage_ns > episode_bounds_ns[b])
		b++;
	e->buckets[b]++;
	e->count++;
	e->frames += x->frames;
	e->total_ns += x->outage_ns;
	if (e->count == 1 || x->outage_ns > e->max_ns) {
		e->max_ns = x->outage_ns;
		e->max_flow = x->flow;
	}
	keep_longest(e, x, keep);
}

void episodes_merge(struct episodes *a, const struct episodes *b, unsigned int keep)
{
	unsigned int i;

	if (b->count && (!a->count || b->max_ns > a->max_ns)) {
		a->max_ns = b->max_ns;
		a->max_flow = b->max_flow;
	}
	a->count += b->count;
	a->frames += b->frames;
	a->total_ns += b->total_ns;
	a->amended += b->amended;
	for (i = 0; i <= EPISODE_BOUNDS; i++)
		a->buckets[i] += b->buckets[i];
	for (i = 0; i < b->nlong; i++)
		keep_longest(a, &b->longest[i], keep);
}

static int cmp_longer(const void *pa, const void *pb)
{
	const struct episode *a = pa, *b = pb;

	return longer(a, b) ? -1 : longer(b, a) ? 1 : 0;
}

unsigned int episodes_sorted(const struct episodes *e, struct episode *out)
{
	unsigned int n = e->nlong <= EPISODES_MAX ? e->nlong : EPISODES_MAX;

	memcpy(out, e->longest, n * sizeof(*out));
	qsort(out, n, sizeof(*out), cmp_longer);
	return n;
}
