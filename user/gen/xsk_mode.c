// SPDX-License-Identifier: GPL-2.0
/*
 * xdp-gen xsk, the mode around the threads: the plan, the checks before
 * anything is opened, and what the reports read from the sockets.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fmt.h"
#include "base/log.h"
#include "gen.h"
#include "replay.h"
#include "report/counter_desc.h"
#include "rtt.h"
#include "xsk_tx.h"

struct xsk_snap {
	__u64 tx_invalid; /* XDP_STATISTICS tx_invalid_descs over the sockets */
};

static struct xsk_tx *tx_of(const struct gen *g, unsigned int i)
{
	return g->th[i].m;
}

static int xsk_plan(struct gen *g, unsigned int maxq)
{
	unsigned int i;
	int err = gen_plan_queues(g, maxq);

	for (i = 0; !err && i < g->nthreads; i++) {
		g->th[i].m = calloc(1, sizeof(struct xsk_tx));
		if (!g->th[i].m)
			err = -ENOMEM;
	}
	return err;
}

/*
 * A frame larger than a UMEM frame goes as a chain over a slot of them: the
 * smallest power of two that holds the largest frame of the run (of the
 * file, or of every stream: th[0].pg is the largest).
 */
static int plan_chains(struct gen *g)
{
	const struct gen_cfg *cfg = g->cfg;
	__u32 chunk = (__u32)cfg->xsk.frame_size, slot = 1, shift = 0, i;
	__u32 len = g->replay ? g->replay->f.max_len : pkt_gen_max_len(g->th[0].pg);

	while (slot * chunk < len && slot <= GEN_XSK_SLOT_MAX)
		slot <<= 1;
	if (slot > GEN_XSK_SLOT_MAX) {
		__u32 most = GEN_XSK_SLOT_MAX * UMEM_FRAME_SIZE_MAX;

		if (len <= most)
			fprintf(stderr,
				"xdp-gen: frames of %u bytes need more than %u UMEM frames of %u bytes; use --frame-size %u\n",
				len, GEN_XSK_SLOT_MAX, chunk, UMEM_FRAME_SIZE_MAX);
		else
			fprintf(stderr,
				"xdp-gen: frames of %u bytes need more than %u UMEM frames; use -s %u or less, or 'xdp-gen qdisc', which sends frames up to the MTU\n",
				len, GEN_XSK_SLOT_MAX, most);
		return -EINVAL;
	}
	if (slot > 1 && cfg->rtt) {
		fprintf(stderr,
			"xdp-gen: --rtt reads returns of one UMEM frame (%u bytes) and frames of %u bytes are larger; use -s %u or less\n",
			chunk, len, chunk);
		return -EINVAL;
	}
	while ((1U << shift) < chunk)
		shift++;
	for (i = 0; i < g->nthreads; i++) {
		struct xsk_tx *x = tx_of(g, i);

		x->slot_frames = slot;
		x->chain_max = (len + chunk - 1) / chunk;
		x->chunk_shift = shift;
		x->slot_mask = (__u64)slot * chunk - 1;
	}
	if (slot > 1)
		pr_debug(
			"frames up to %u bytes: chains of up to %u descriptors over %u UMEM frames\n",
			len, (len + chunk - 1) / chunk, slot);
	return 0;
}

static int xsk_preflight(struct gen *g)
{
	const struct gen_cfg *cfg = g->cfg;

	if (xsk_queue_check_cli(g->ifc.driver, &cfg->xsk, cfg->ring_size))
		return -EINVAL;
	if (cfg->xsk_batch > cfg->ring_size) {
		fprintf(stderr,
			"xdp-gen: --batch %" PRIu64 " is larger than the ring (%" PRIu64
			"); lower it or raise --ring-size\n",
			(uint64_t)cfg->xsk_batch, (uint64_t)cfg->ring_size);
		return -EINVAL;
	}
	if (cfg->tx_budget &&
	    (cfg->tx_budget < XSK_TX_BUDGET_MIN || cfg->tx_budget > cfg->ring_size)) {
		fprintf(stderr,
			"xdp-gen: --tx-budget %" PRIu64
			" is outside what the kernel takes (%u to the ring's "
			"%" PRIu64 "); choose one in that range or raise --ring-size\n",
			(uint64_t)cfg->tx_budget, XSK_TX_BUDGET_MIN, (uint64_t)cfg->ring_size);
		return -EINVAL;
	}
	if (cfg->rtt && (cfg->no_stamp || cfg->pcap)) {
		fprintf(stderr, "xdp-gen: --rtt times frames by their stamps; drop %s\n",
			cfg->no_stamp ? "--no-stamp" : "--pcap");
		return -EINVAL;
	}
	if ((cfg->pcap || cfg->stamp || cfg->pcap_timing) && gen_replay_preflight(g))
		return -EINVAL;
	return plan_chains(g);
}

static const char *xsk_describe(const struct gen *g)
{
	return tx_of(g, 0)->zerocopy ? "zero-copy mode" : "copy mode";
}

static void xsk_sample(struct gen *g, struct gen_snapshot *s)
{
	struct xsk_snap *m = s->m;
	struct xdp_statistics st;
	unsigned int i;

	m->tx_invalid = 0;
	for (i = 0; i < g->nthreads; i++)
		if (tx_of(g, i)->q) { /* a failed read gives the last good one */
			xsk_queue_stats(tx_of(g, i)->q, &st);
			m->tx_invalid += st.tx_invalid_descs;
		}
}

static __u64 xsk_outstanding(const struct gen_counters *c)
{
	return c->submitted - c->sent;
}

static void xsk_failures_read(struct gen *g, const struct gen_snapshot *a,
			      const struct gen_snapshot *b, struct gen_failures *f)
{
	const struct xsk_snap *ma = a->m, *mb = b->m;

	(void)g;
	f->x[0] = ma->tx_invalid - mb->tx_invalid;
}

static void xsk_json(struct gen *g, struct jw *w, const struct gen_snapshot *a,
		     const struct gen_snapshot *b, enum run_report kind)
{
	(void)a;
	(void)b;
	if (kind == RUN_SUMMARY && g->replay)
		gen_replay_json(g, w);
	if (kind == RUN_SUMMARY)
		gen_rtt_json(g, w);
}

static void xsk_metrics(struct gen *g, struct metrics_w *w, enum run_report kind)
{
	/* The books are the workers' until they end: the round trip is in the last export. */
	if (kind == RUN_SUMMARY)
		gen_rtt_metrics(g, w);
}

static int xsk_mode_setup(struct gen *g)
{
	return g->cfg->rtt ? gen_rtt_setup(g) : 0;
}

static void xsk_json_queue(struct gen *g, struct jw *w, unsigned int i,
			   const struct gen_snapshot *a, enum run_report kind)
{
	const struct xsk_tx *x = tx_of(g, i);

	(void)a;
	if (kind == RUN_SUMMARY && x->accounting[0]) {
		jw_bool(w, "frames_balanced", x->accounting_ok);
		jw_str(w, "frame_accounting", x->accounting);
	}
}

static void xsk_text(struct gen *g, const struct gen_snapshot *a, const struct gen_snapshot *b,
		     enum run_report kind)
{
	struct gen_counters d;

	if (kind != RUN_SUMMARY)
		return;
	ctr_sub(&d, &a->total, &b->total, sizeof(d));
	printf("  stalls:   ");
	ctr_text(stdout, &gen_stalls, &d, 0, ", ");
	printf(" (kicks %s); outstanding %s\n", FMT_COUNT(d.kicks),
	       FMT_COUNT(xsk_outstanding(&a->total)));
	gen_rtt_text(g);
}

static void xsk_text_queue(struct gen *g, unsigned int i, const struct gen_snapshot *a,
			   const struct gen_snapshot *b, enum run_report kind)
{
	const struct xsk_tx *x = tx_of(g, i);

	(void)a;
	(void)b;
	if (kind == RUN_SUMMARY && x->accounting[0])
		printf("  frames: %s", x->accounting);
}

static int xsk_verdict(struct gen *g, const char *stop_reason)
{
	unsigned int i;

	(void)stop_reason;
	if (g->cur.link.tx_dropped != g->base.link.tx_dropped)
		pr_warn("%s dropped %llu of the frames the kernel took (link tx_dropped): a veth without a qdisc drops when its peer's ring is full; give it one (tc qdisc add dev %s root pfifo) to get backpressure instead\n",
			g->ifc.name,
			(unsigned long long)(g->cur.link.tx_dropped - g->base.link.tx_dropped),
			g->ifc.name);
	for (i = 0; i < g->nthreads; i++) {
		const struct xsk_tx *x = tx_of(g, i);

		if (x->accounting[0] && !x->accounting_ok) {
			pr_warn("queue %u: frame accounting does not balance: %s\n", g->th[i].queue,
				x->accounting);
			return -EIO;
		}
	}
	return 0;
}

static void xsk_cleanup(struct gen *g)
{
	unsigned int i;

	for (i = 0; g->th && i < g->nthreads; i++) {
		struct xsk_tx *x = g->th[i].m;

		if (!x)
			continue;
		xsk_queue__destroy(x->q);
		replay_q_free(x->rp);
		free(x->addrs);
		free(x->lens);
		free(x);
		g->th[i].m = NULL;
	}
	gen_rtt_cleanup(g);
}

static const struct ctr_desc failure_rows[] = {
	{ "xsk_tx_invalid", GEN_FAIL_X(0), CTR_COUNTER, "frames", CTR_ALL, 0,
	  "Descriptors the sockets refused (XDP_STATISTICS tx_invalid_descs): never sent. A frame sent as a chain (larger than a UMEM frame) counts once for each of its descriptors." },
};

static const struct ctr_family xsk_failures = {
	.name = "gen_xsk_failures",
	.json = "drops",
	.metric = "xdp_gen_failures_total",
	.label = "reason",
	CTR_ROWS(failure_rows),
};

const struct gen_mode gen_mode_xsk = {
	.unit = "queue",
	.failures = &xsk_failures,
	.snap_size = sizeof(struct xsk_snap),
	.plan = xsk_plan,
	.preflight = xsk_preflight,
	.setup = xsk_mode_setup,
	.worker = gen_xsk_worker,
	.outstanding = xsk_outstanding,
	.describe = xsk_describe,
	.sample = xsk_sample,
	.json = xsk_json,
	.failures_read = xsk_failures_read,
	.json_queue = xsk_json_queue,
	.text = xsk_text,
	.text_queue = xsk_text_queue,
	.metrics = xsk_metrics,
	.verdict = xsk_verdict,
	.cleanup = xsk_cleanup,
	.mark_send = gen_xsk_mark_send,
};
