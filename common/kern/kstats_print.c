// SPDX-License-Identifier: GPL-2.0
/* kstats readings as text and JSON: the tools' --kernel-stats output. */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/gen_stats.h>
#include <linux/if_link.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include "base/runtime.h"
#include "kern/kstats.h"

const char *kstats_handle_str(__u32 h, char *buf, size_t len)
{
	if (h == TC_H_ROOT)
		snprintf(buf, len, "root");
	else if (h == TC_H_INGRESS)
		snprintf(buf, len, "ingress");
	else if (TC_H_MIN(h))
		snprintf(buf, len, "%x:%x", TC_H_MAJ(h) >> 16, TC_H_MIN(h));
	else
		snprintf(buf, len, "%x:", TC_H_MAJ(h) >> 16);
	return buf;
}

static bool is_child(const struct kstats_qdisc *q)
{
	return q->parent != TC_H_ROOT && q->parent != TC_H_INGRESS;
}

static void print_qdisc(FILE *f, const char *indent, const struct kstats_qdisc *q)
{
	char h[16], p[16], a[32], b[32];

	fprintf(f,
		"%sqdisc %s %s parent %s: sent %s pkts %s bytes, dropped %" PRIu64
		", overlimits %" PRIu64 ", requeues %" PRIu64 ", backlog %" PRIu64 "b %" PRIu64
		"p\n",
		indent, q->kind, kstats_handle_str(q->handle, h, sizeof(h)),
		kstats_handle_str(q->parent, p, sizeof(p)), fmt_count(a, sizeof(a), q->packets),
		fmt_count(b, sizeof(b), q->bytes), (uint64_t)q->drops, (uint64_t)q->overlimits,
		(uint64_t)q->requeues, (uint64_t)q->backlog, (uint64_t)q->qlen);
}

static void print_vq(FILE *f, const char *what, const struct kstats_vq *v)
{
	char a[32];

	fprintf(f,
		"  %s: rx xdp %s pkts, drops %" PRIu64 ", xdp_drops %" PRIu64 ", redirect %" PRIu64
		", xdp_tx %" PRIu64 " (errors %" PRIu64 ") | tx xdp_xmit %" PRIu64
		" (errors %" PRIu64 ")\n",
		what, fmt_count(a, sizeof(a), v->rx_xdp_packets), (uint64_t)v->rx_drops,
		(uint64_t)v->rx_xdp_drops, (uint64_t)v->rx_xdp_redirect, (uint64_t)v->rx_xdp_tx,
		(uint64_t)v->rx_xdp_tx_errors, (uint64_t)v->tx_xdp_xmit,
		(uint64_t)v->tx_xdp_xmit_errors);
}

void kstats_print(FILE *f, const char *ifname, const struct kstats *s, bool verbose)
{
	const struct link_stats *l = &s->link;
	char a[32], b[32];
	unsigned int i;

	fprintf(f,
		"kernel %s: link tx %s pkts, dropped %" PRIu64 ", errors %" PRIu64
		" | rx %s pkts, dropped %" PRIu64 ", errors %" PRIu64 "\n",
		ifname, fmt_count(a, sizeof(a), l->tx_packets), (uint64_t)l->tx_dropped,
		(uint64_t)l->tx_errors, fmt_count(b, sizeof(b), l->rx_packets),
		(uint64_t)l->rx_dropped, (uint64_t)l->rx_errors);
	if (kstats_root(s))
		print_qdisc(f, "  ", &s->root);
	else
		fprintf(f, "  qdisc none\n");
	for (i = 0; verbose && i < s->nqdisc; i++)
		if (is_child(&s->qdisc[i]) || s->qdisc[i].parent == TC_H_INGRESS)
			print_qdisc(f, "    ", &s->qdisc[i]);
	if (s->is_veth) {
		print_vq(f, "veth", &s->veth);
		for (i = 0; verbose && i < s->veth_nq; i++) {
			char q[24];

			snprintf(q, sizeof(q), "  queue %u", i);
			print_vq(f, q, &s->vq[i]);
		}
	}
}

static void json_qdisc(struct jw *w, const struct kstats_qdisc *q, bool with_parent)
{
	char h[16];

	jw_str(w, "kind", q->kind);
	jw_str(w, "handle", kstats_handle_str(q->handle, h, sizeof(h)));
	if (with_parent)
		jw_str(w, "parent", kstats_handle_str(q->parent, h, sizeof(h)));
	jw_u64(w, "sent_bytes", q->bytes);
	jw_u64(w, "sent_packets", q->packets);
	jw_u64(w, "drops", q->drops);
	jw_u64(w, "overlimits", q->overlimits);
	jw_u64(w, "requeues", q->requeues);
	jw_u64(w, "backlog_bytes", q->backlog);
	jw_u64(w, "qlen", q->qlen);
}

static void json_vq(struct jw *w, const struct kstats_vq *v)
{
	unsigned int i;

	for (i = 0; i < KSTATS_VQ_FIELDS; i++)
		jw_u64(w, kstats_vq_fields[i].name, KSTATS_VQ_FIELD(v, i));
}

void kstats_json(struct jw *w, const char *key, const struct kstats *s)
{
	const struct link_stats *l = &s->link;
	unsigned int i, nchild = 0;

	jw_obj(w, key);
	jw_u64(w, "t_ns", s->t_ns);
	jw_obj(w, "link");
	jw_u64(w, "rx_packets", l->rx_packets);
	jw_u64(w, "rx_bytes", l->rx_bytes);
	jw_u64(w, "rx_dropped", l->rx_dropped);
	jw_u64(w, "rx_errors", l->rx_errors);
	jw_u64(w, "tx_packets", l->tx_packets);
	jw_u64(w, "tx_bytes", l->tx_bytes);
	jw_u64(w, "tx_dropped", l->tx_dropped);
	jw_u64(w, "tx_errors", l->tx_errors);
	jw_end_obj(w);

	jw_obj(w, "qdisc");
	json_qdisc(w, &s->root, false);
	for (i = 0; i < s->nqdisc; i++)
		nchild += is_child(&s->qdisc[i]);
	if (nchild) {
		jw_arr(w, "children");
		for (i = 0; i < s->nqdisc; i++) {
			if (!is_child(&s->qdisc[i]))
				continue;
			jw_obj(w, NULL);
			json_qdisc(w, &s->qdisc[i], true);
			jw_end_obj(w);
		}
		jw_end_arr(w);
	}
	jw_end_obj(w);

	if (s->is_veth) {
		jw_obj(w, "veth");
		jw_u64(w, "peer_ifindex", s->veth_peer_ifindex);
		json_vq(w, &s->veth);
		jw_arr(w, "queues");
		for (i = 0; i < s->veth_nq; i++) {
			jw_obj(w, NULL);
			jw_u64(w, "queue", i);
			json_vq(w, &s->vq[i]);
			jw_end_obj(w);
		}
		jw_end_arr(w);
		jw_end_obj(w);
	}
	jw_end_obj(w);
}

void kstats_json_delta(struct jw *w, const char *key, const struct kstats *now,
		       const struct kstats *then)
{
	struct kstats *d = malloc(sizeof(*d)); /* too large for a thread's stack frame */

	if (!d)
		return;
	kstats_delta(now, then, d);
	kstats_json(w, key, d);
	free(d);
}

void kstats_print_delta(FILE *f, const char *ifname, const struct kstats *now,
			const struct kstats *then, bool verbose)
{
	struct kstats *d = malloc(sizeof(*d));

	if (!d)
		return;
	kstats_delta(now, then, d);
	kstats_print(f, ifname, d, verbose);
	free(d);
}
