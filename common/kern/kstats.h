/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_KSTATS_H
#define XDPSG_KSTATS_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <linux/types.h>
#include <linux/netlink.h>

#include "base/fmt.h"
#include "base/json_writer.h"
#include "kern/iface.h"

/*
 * The kernel's own counters for one interface, layer by layer, so a run can
 * prove where every packet went: qdisc (rtnetlink RTM_GETQDISC), link
 * (RTM_GETSTATS, IFLA_STATS_LINK_64) and, on a veth, the per-queue ethtool
 * counters of its XDP/NAPI path. A reader keeps one netlink socket and the
 * ethtool names; reading it once per interval is cheap (two netlink round
 * trips and one ethtool ioctl), but it is not for a hot path.
 *
 * Not exposed by the kernel, so not here: whether a TX queue is stopped
 * (no sysfs or netlink attribute; infer it from qdisc backlog that stays > 0
 * while nothing is sent), and BQL inflight on veth (veth has no BQL).
 */

#define KSTATS_MAX_QDISC 64 /* qdiscs stored; the root's totals are always complete */
#define KSTATS_MAX_QUEUES 64 /* veth queues stored; the veth sums are always complete */
#define KSTATS_KIND_LEN 16

/* TC_H_ROOT and TC_H_INGRESS from <linux/pkt_sched.h>, for callers that do not include it. */
#define KSTATS_PARENT_ROOT 0xFFFFFFFFU
#define KSTATS_PARENT_INGRESS 0xFFFFFFF1U

struct kstats_qdisc {
	char kind[KSTATS_KIND_LEN]; /* "pfifo", "noqueue", "mq", "tbf", ... */
	__u32 handle, parent; /* parent KSTATS_PARENT_ROOT for the root qdisc */
	/* counters */
	__u64 bytes, packets; /* sent (dequeued to the device) */
	__u64 drops, overlimits, requeues;
	/* gauges: a delta keeps the newer reading */
	__u64 backlog; /* bytes queued */
	__u64 qlen; /* packets queued */
};

/* One veth queue: rx_queue_N_* and tx_queue_N_* of ethtool -S. */
struct kstats_vq {
	/*
	 * Frames the XDP program saw. Bytes of frames that came through the
	 * peer's ndo_start_xmit exclude the Ethernet header (skb->len after
	 * eth_type_trans); those from ndo_xdp_xmit include it.
	 */
	__u64 rx_xdp_packets, rx_xdp_bytes;
	__u64 rx_drops; /* ring full (ndo_xdp_xmit/skb) or no memory on receive */
	__u64 rx_xdp_drops; /* XDP_DROP and XDP_ABORTED */
	__u64 rx_xdp_redirect, rx_xdp_tx, rx_xdp_tx_errors;
	__u64 tx_xdp_xmit, tx_xdp_xmit_errors; /* ndo_xdp_xmit into the peer */
};

/*
 * struct kstats_vq described once: ethtool's rx_queue_N_<suffix> or
 * tx_queue_N_<suffix> (dir "rx" or "tx"), the name in JSON and text, and
 * where the field is. The reader, the deltas and the reports loop over it.
 */
struct kstats_vq_field {
	const char *dir, *suffix, *name;
	size_t off;
};

#define KSTATS_VQ_FIELDS 9
extern const struct kstats_vq_field kstats_vq_fields[KSTATS_VQ_FIELDS];
#define KSTATS_VQ_FIELD(vq, i) (*(const __u64 *)((const char *)(vq) + kstats_vq_fields[i].off))

struct kstats {
	__u64 t_ns; /* CLOCK_MONOTONIC of the reading; in a delta: the time between */
	struct link_stats link;

	/* Root qdisc totals (for mq: the sum of its children). kind "none" if no qdisc. */
	struct kstats_qdisc root;
	unsigned int nqdisc; /* stored in qdisc[]: root, children, ingress/clsact */
	unsigned int qdisc_total; /* seen; > nqdisc when qdisc[] was too small */
	struct kstats_qdisc qdisc[KSTATS_MAX_QDISC];

	bool is_veth; /* the device has veth's ethtool counters */
	__u64 veth_peer_ifindex; /* gauge; in the peer's namespace */
	struct kstats_vq veth; /* sum over all queues */
	unsigned int veth_nq; /* queues stored in vq[] */
	struct kstats_vq vq[KSTATS_MAX_QUEUES];
};

struct kstats_reader;

/*
 * Resolve ifname in the current network namespace and open the netlink socket
 * and ethtool names. 0, -ENODEV (no such interface), or another -errno.
 */
int kstats_reader__open(const char *ifname, struct kstats_reader **out);
void kstats_reader__close(struct kstats_reader *r);
const char *kstats_reader_ifname(const struct kstats_reader *r);

/*
 * One snapshot of every layer. 0, or -errno (-ENODEV once the interface is
 * gone), and then out keeps the last reading that succeeded.
 */
int kstats_read(struct kstats_reader *r, struct kstats *out);

/*
 * d = now - then. Counters subtract (a counter that went backwards, or a qdisc
 * that was replaced, counts from zero); gauges (backlog, qlen, peer_ifindex)
 * keep 'now'. d may alias now, not then.
 */
void kstats_delta(const struct kstats *now, const struct kstats *then, struct kstats *d);

/* The root qdisc's totals: s->root, or NULL when the interface has no qdisc. */
const struct kstats_qdisc *kstats_root(const struct kstats *s);

/* "8001:" or "8001:2" as tc prints handles; "root" and "ingress" for those parents. */
const char *kstats_handle_str(__u32 h, char *buf, size_t len);

/* One human-readable block; verbose adds qdisc children and veth queues. */
void kstats_print(FILE *f, const char *ifname, const struct kstats *s, bool verbose);

/*
 * As a member 'key' of the object being written (NULL inside an array):
 * {"t_ns":..,"link":{rx_packets,rx_bytes,rx_dropped,rx_errors,tx_..},
 *  "qdisc":{"kind","handle","sent_bytes","sent_packets","drops","overlimits",
 *           "requeues","backlog_bytes","qlen","children":[{..,"parent"}]},
 *  "veth":{"peer_ifindex","rx_xdp_packets","rx_xdp_bytes","rx_drops","rx_xdp_drops",
 *          "rx_xdp_redirect","rx_xdp_tx","rx_xdp_tx_errors","tx_xdp_xmit",
 *          "tx_xdp_xmit_errors","queues":[{"queue":N,..same..}]}}
 * "children" only when the root has children; "veth" only on a veth.
 */
void kstats_json(struct jw *w, const char *key, const struct kstats *s);
/* The change from 'then' to 'now', as JSON under key or as text (nothing without memory). */
void kstats_json_delta(struct jw *w, const char *key, const struct kstats *now,
		       const struct kstats *then);
void kstats_print_delta(FILE *f, const char *ifname, const struct kstats *now,
			const struct kstats *then, bool verbose);

/* Exposed for unit tests: no kernel involved. */

/*
 * Parse one RTM_NEWQDISC message. Returns 1 and fills *q when it belongs to
 * ifindex, 0 when it is another interface's (or another message type),
 * -EINVAL when it is malformed.
 */
int kstats_parse_qdisc(const struct nlmsghdr *nh, int ifindex, struct kstats_qdisc *q);
/* Start a qdisc dump (clears the list), add one qdisc, compute s->root at the end. */
void kstats_qdisc_reset(struct kstats *s);
void kstats_qdisc_add(struct kstats *s, const struct kstats_qdisc *q);
void kstats_qdisc_finish(struct kstats *s);

#endif
