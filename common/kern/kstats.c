// SPDX-License-Identifier: GPL-2.0
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

/*
 * Large enough for any one dump part: the kernel sizes a dump part by the
 * buffer the reader last offered, up to 32 KiB.
 */
#define KSTATS_NLBUF (64 * 1024)

/* An ethtool counter's place in struct kstats_vq; queue -1: not a queue counter. */
struct vq_slot {
	int queue;
	int off; /* offsetof in struct kstats_vq, or -1 for peer_ifindex, -2 for none */
};

struct kstats_reader {
	char ifname[IF_NAMESIZE];
	int ifindex;
	int fd;
	__u32 seq;
	bool is_veth;
	struct iface_estats *est;
	struct vq_slot *slots; /* one per ethtool counter */
	unsigned int slots_gen; /* est->names_gen they were made from */
	char *buf;
	struct kstats *tmp; /* a reading in progress: out changes only when it succeeds */
};

const struct kstats_vq_field kstats_vq_fields[KSTATS_VQ_FIELDS] = {
	{ "rx", "xdp_packets", "rx_xdp_packets", offsetof(struct kstats_vq, rx_xdp_packets) },
	{ "rx", "xdp_bytes", "rx_xdp_bytes", offsetof(struct kstats_vq, rx_xdp_bytes) },
	{ "rx", "drops", "rx_drops", offsetof(struct kstats_vq, rx_drops) },
	{ "rx", "xdp_drops", "rx_xdp_drops", offsetof(struct kstats_vq, rx_xdp_drops) },
	{ "rx", "xdp_redirect", "rx_xdp_redirect", offsetof(struct kstats_vq, rx_xdp_redirect) },
	{ "rx", "xdp_tx", "rx_xdp_tx", offsetof(struct kstats_vq, rx_xdp_tx) },
	{ "rx", "xdp_tx_errors", "rx_xdp_tx_errors", offsetof(struct kstats_vq, rx_xdp_tx_errors) },
	{ "tx", "xdp_xmit", "tx_xdp_xmit", offsetof(struct kstats_vq, tx_xdp_xmit) },
	{ "tx", "xdp_xmit_errors", "tx_xdp_xmit_errors",
	  offsetof(struct kstats_vq, tx_xdp_xmit_errors) },
};

#define VQ_FIELD(vq, i) (*(__u64 *)((char *)(vq) + kstats_vq_fields[i].off))
#define VQ_CFIELD(vq, i) KSTATS_VQ_FIELD(vq, i)

static struct vq_slot map_estat(const char *name)
{
	struct vq_slot s = { .queue = -1, .off = -2 };
	unsigned int i;
	unsigned long q;
	char *end;

	if (!strcmp(name, "peer_ifindex")) {
		s.off = -1;
		return s;
	}
	if (strncmp(name + 2, "_queue_", 7) || (strncmp(name, "rx", 2) && strncmp(name, "tx", 2)))
		return s;
	if (name[9] < '0' || name[9] > '9')
		return s;
	q = strtoul(name + 9, &end, 10);
	if (*end != '_' || q > 0xffff)
		return s;
	for (i = 0; i < KSTATS_VQ_FIELDS; i++) {
		if (!strncmp(name, kstats_vq_fields[i].dir, 2) &&
		    !strcmp(end + 1, kstats_vq_fields[i].suffix)) {
			s.queue = (int)q;
			s.off = (int)kstats_vq_fields[i].off;
			break;
		}
	}
	return s;
}

/* Where each ethtool counter goes; again whenever the device's list changed. */
static int map_slots(struct kstats_reader *r)
{
	struct vq_slot *slots = calloc(r->est->n ? r->est->n : 1, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (unsigned int i = 0; i < r->est->n; i++)
		slots[i] = map_estat(r->est->names[i]);
	free(r->slots);
	r->slots = slots;
	r->slots_gen = r->est->names_gen;
	return 0;
}

int kstats_reader__open(const char *ifname, struct kstats_reader **out)
{
	struct kstats_reader *r;
	struct iface ifc;
	int err;

	*out = NULL;
	err = iface_get(ifname, &ifc);
	if (err)
		return err;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->fd = -1;
	snprintf(r->ifname, sizeof(r->ifname), "%s", ifname);
	r->ifindex = ifc.ifindex;
	r->buf = malloc(KSTATS_NLBUF);
	r->tmp = malloc(sizeof(*r->tmp));
	if (!r->buf || !r->tmp) {
		err = -ENOMEM;
		goto out;
	}
	r->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (r->fd < 0) {
		err = -errno;
		goto out;
	}
	r->is_veth = !strcmp(ifc.driver, "veth");
	/* Devices without ethtool stats are fine: they just have no veth view. */
	if (r->is_veth && iface_estats__open(ifname, &r->est) == 0)
		err = map_slots(r);
out:
	if (err)
		kstats_reader__close(r);
	else
		*out = r;
	return err;
}

void kstats_reader__close(struct kstats_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	iface_estats__close(r->est);
	free(r->slots);
	free(r->buf);
	free(r->tmp);
	free(r);
}

const char *kstats_reader_ifname(const struct kstats_reader *r)
{
	return r->ifname;
}

/* Attribute walk tolerant of NLA_F_NESTED and of attributes it does not know. */
static void parse_attrs(const struct rtattr **tb, unsigned int max, const struct rtattr *rta,
			int len)
{
	memset(tb, 0, sizeof(*tb) * (max + 1));
	for (; RTA_OK(rta, len); rta = RTA_NEXT(rta, len)) {
		unsigned int type = rta->rta_type & NLA_TYPE_MASK;

		if (type <= max && !tb[type])
			tb[type] = rta;
	}
}

static void parse_stats2(struct kstats_qdisc *q, const struct rtattr *nest)
{
	const struct rtattr *tb[TCA_STATS_MAX + 1];

	parse_attrs(tb, TCA_STATS_MAX, RTA_DATA(nest), (int)RTA_PAYLOAD(nest));
	if (tb[TCA_STATS_BASIC] && RTA_PAYLOAD(tb[TCA_STATS_BASIC]) >= 12) {
		struct gnet_stats_basic b = {};

		memcpy(&b, RTA_DATA(tb[TCA_STATS_BASIC]),
		       RTA_PAYLOAD(tb[TCA_STATS_BASIC]) < sizeof(b) ? 12 : sizeof(b));
		q->bytes = b.bytes;
		q->packets = b.packets;
	}
	/* The kernel adds the 64-bit packet count when the 32-bit one wrapped. */
	if (tb[TCA_STATS_PKT64] && RTA_PAYLOAD(tb[TCA_STATS_PKT64]) >= sizeof(__u64))
		memcpy(&q->packets, RTA_DATA(tb[TCA_STATS_PKT64]), sizeof(__u64));
	if (tb[TCA_STATS_QUEUE] &&
	    RTA_PAYLOAD(tb[TCA_STATS_QUEUE]) >= sizeof(struct gnet_stats_queue)) {
		struct gnet_stats_queue qs;

		memcpy(&qs, RTA_DATA(tb[TCA_STATS_QUEUE]), sizeof(qs));
		q->qlen = qs.qlen;
		q->backlog = qs.backlog;
		q->drops = qs.drops;
		q->requeues = qs.requeues;
		q->overlimits = qs.overlimits;
	}
}

int kstats_parse_qdisc(const struct nlmsghdr *nh, int ifindex, struct kstats_qdisc *q)
{
	const struct rtattr *tb[TCA_MAX + 1];
	const struct tcmsg *tc;
	int len;

	if (nh->nlmsg_type != RTM_NEWQDISC)
		return 0;
	if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*tc)))
		return -EINVAL;
	tc = NLMSG_DATA(nh);
	if (tc->tcm_ifindex != ifindex)
		return 0;
	len = (int)(nh->nlmsg_len - NLMSG_LENGTH(sizeof(*tc)));
	parse_attrs(tb, TCA_MAX,
		    (const struct rtattr *)((const char *)tc + NLMSG_ALIGN(sizeof(*tc))), len);
	if (!tb[TCA_KIND] || RTA_PAYLOAD(tb[TCA_KIND]) < 1)
		return -EINVAL;

	memset(q, 0, sizeof(*q));
	snprintf(q->kind, sizeof(q->kind), "%.*s", (int)RTA_PAYLOAD(tb[TCA_KIND]),
		 (const char *)RTA_DATA(tb[TCA_KIND]));
	q->handle = tc->tcm_handle;
	q->parent = tc->tcm_parent;
	if (tb[TCA_STATS2]) {
		parse_stats2(q, tb[TCA_STATS2]);
	} else if (tb[TCA_STATS] && RTA_PAYLOAD(tb[TCA_STATS]) >= sizeof(struct tc_stats)) {
		struct tc_stats st;

		memcpy(&st, RTA_DATA(tb[TCA_STATS]), sizeof(st));
		q->bytes = st.bytes;
		q->packets = st.packets;
		q->drops = st.drops;
		q->overlimits = st.overlimits;
		q->qlen = st.qlen;
		q->backlog = st.backlog;
	}
	return 1;
}

void kstats_qdisc_reset(struct kstats *s)
{
	s->nqdisc = 0;
	s->qdisc_total = 0;
	memset(&s->root, 0, sizeof(s->root));
	snprintf(s->root.kind, sizeof(s->root.kind), "none");
}

void kstats_qdisc_add(struct kstats *s, const struct kstats_qdisc *q)
{
	s->qdisc_total++;
	if (s->nqdisc < KSTATS_MAX_QDISC)
		s->qdisc[s->nqdisc++] = *q;
}

static void qdisc_sum(struct kstats_qdisc *t, const struct kstats_qdisc *q)
{
	t->bytes += q->bytes;
	t->packets += q->packets;
	t->drops += q->drops;
	t->overlimits += q->overlimits;
	t->requeues += q->requeues;
	t->backlog += q->backlog;
	t->qlen += q->qlen;
}

/* mq-like roots hold nothing themselves: one child per TX queue does the queueing. */
static bool is_mq_kind(const char *kind)
{
	return !strcmp(kind, "mq") || !strcmp(kind, "mqprio");
}

void kstats_qdisc_finish(struct kstats *s)
{
	const struct kstats_qdisc *root = NULL;
	struct kstats_qdisc sum = {};
	unsigned int i, nchild = 0;

	for (i = 0; i < s->nqdisc && !root; i++)
		if (s->qdisc[i].parent == TC_H_ROOT)
			root = &s->qdisc[i];
	if (!root)
		return;
	s->root = *root;
	/*
	 * The kernel's mq dump already reports its children's sum; adding the
	 * children ourselves gives the same numbers from one consistent list, and
	 * is only possible when none of them was left out.
	 */
	if (!is_mq_kind(root->kind) || s->qdisc_total != s->nqdisc)
		return;
	for (i = 0; i < s->nqdisc; i++) {
		const struct kstats_qdisc *q = &s->qdisc[i];

		if (q->parent != TC_H_ROOT && q->parent != TC_H_INGRESS &&
		    TC_H_MAJ(q->parent) == TC_H_MAJ(root->handle)) {
			qdisc_sum(&sum, q);
			nchild++;
		}
	}
	if (!nchild)
		return;
	memcpy(sum.kind, root->kind, sizeof(sum.kind));
	sum.handle = root->handle;
	sum.parent = root->parent;
	s->root = sum;
}

const struct kstats_qdisc *kstats_root(const struct kstats *s)
{
	return strcmp(s->root.kind, "none") ? &s->root : NULL;
}

/*
 * One request, its replies handed to fn until the dump ends (or the one
 * reply of a non-dump request arrives). 0 or -errno.
 */
static int nl_talk(struct kstats_reader *r, struct nlmsghdr *req,
		   int (*fn)(struct kstats_reader *r, const struct nlmsghdr *nh, void *ctx),
		   void *ctx)
{
	bool dump = req->nlmsg_flags & NLM_F_DUMP;
	int err = 0;

	req->nlmsg_seq = ++r->seq;
	if (send(r->fd, req, req->nlmsg_len, 0) < 0)
		return -errno;
	for (;;) {
		struct msghdr mh = {};
		struct iovec iov = { r->buf, KSTATS_NLBUF };
		struct nlmsghdr *nh;
		ssize_t n;

		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		n = recvmsg(r->fd, &mh, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (mh.msg_flags & MSG_TRUNC)
			return -EMSGSIZE;
		for (nh = (struct nlmsghdr *)r->buf; NLMSG_OK(nh, (unsigned int)n);
		     nh = NLMSG_NEXT(nh, n)) {
			/* Leftovers of an earlier request that failed half-way. */
			if (nh->nlmsg_seq != r->seq)
				continue;
			if (nh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(nh);

				if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
					return -EPROTO;
				return err ? err : e->error;
			}
			if (nh->nlmsg_type == NLMSG_DONE)
				return err;
			if (!err)
				err = fn(r, nh, ctx);
			if (!dump)
				return err;
		}
	}
}

static int on_qdisc(struct kstats_reader *r, const struct nlmsghdr *nh, void *ctx)
{
	struct kstats_qdisc q;
	int ret;

	ret = kstats_parse_qdisc(nh, r->ifindex, &q);
	if (ret > 0)
		kstats_qdisc_add(ctx, &q);
	return ret < 0 ? ret : 0;
}

static int on_stats(struct kstats_reader *r, const struct nlmsghdr *nh, void *ctx)
{
	const struct rtattr *tb[IFLA_STATS_MAX + 1];
	const struct if_stats_msg *ism;
	struct rtnl_link_stats64 s64;
	struct link_stats *ls = ctx;

	if (nh->nlmsg_type != RTM_NEWSTATS || nh->nlmsg_len < NLMSG_LENGTH(sizeof(*ism)))
		return -EPROTO;
	ism = NLMSG_DATA(nh);
	if ((int)ism->ifindex != r->ifindex)
		return -EPROTO;
	parse_attrs(tb, IFLA_STATS_MAX,
		    (const struct rtattr *)((const char *)ism + NLMSG_ALIGN(sizeof(*ism))),
		    (int)(nh->nlmsg_len - NLMSG_LENGTH(sizeof(*ism))));
	if (!tb[IFLA_STATS_LINK_64] || RTA_PAYLOAD(tb[IFLA_STATS_LINK_64]) < sizeof(s64))
		return -EPROTO;
	memcpy(&s64, RTA_DATA(tb[IFLA_STATS_LINK_64]), sizeof(s64));
	ls->rx_packets = s64.rx_packets;
	ls->rx_bytes = s64.rx_bytes;
	ls->rx_dropped = s64.rx_dropped;
	ls->rx_errors = s64.rx_errors;
	ls->tx_packets = s64.tx_packets;
	ls->tx_bytes = s64.tx_bytes;
	ls->tx_dropped = s64.tx_dropped;
	ls->tx_errors = s64.tx_errors;
	return 0;
}

static int read_veth(struct kstats_reader *r, struct kstats *s)
{
	unsigned int i;
	int err;

	err = iface_estats_read(r->est);
	if (!err && r->slots_gen != r->est->names_gen)
		err = map_slots(r);
	if (err)
		return err;
	s->is_veth = true;
	for (i = 0; i < r->est->n; i++) {
		const struct vq_slot *sl = &r->slots[i];
		__u64 v = r->est->values[i];

		if (sl->off == -1) {
			s->veth_peer_ifindex = v;
		} else if (sl->off >= 0) {
			*(__u64 *)((char *)&s->veth + sl->off) += v;
			if (sl->queue < KSTATS_MAX_QUEUES) {
				*(__u64 *)((char *)&s->vq[sl->queue] + sl->off) = v;
				if ((unsigned int)sl->queue + 1 > s->veth_nq)
					s->veth_nq = (unsigned int)sl->queue + 1;
			}
		}
	}
	return 0;
}

static int kstats_read_into(struct kstats_reader *r, struct kstats *out)
{
	struct {
		struct nlmsghdr nh;
		struct tcmsg tc;
	} qreq = {
		.nh = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct tcmsg)),
			.nlmsg_type = RTM_GETQDISC,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		/* The kernel dumps every device's qdiscs; on_qdisc keeps ours. */
		.tc = { .tcm_family = AF_UNSPEC, .tcm_ifindex = r->ifindex },
	};
	struct {
		struct nlmsghdr nh;
		struct if_stats_msg ism;
	} sreq = {
		.nh = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct if_stats_msg)),
			.nlmsg_type = RTM_GETSTATS,
			.nlmsg_flags = NLM_F_REQUEST },
		.ism = { .family = AF_UNSPEC,
			 .ifindex = (__u32)r->ifindex,
			 .filter_mask = IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_64) },
	};
	int err;

	memset(out, 0, sizeof(*out));
	out->t_ns = now_ns();
	err = nl_talk(r, &sreq.nh, on_stats, &out->link);
	if (err)
		goto out;
	kstats_qdisc_reset(out);
	err = nl_talk(r, &qreq.nh, on_qdisc, out);
	if (err)
		goto out;
	kstats_qdisc_finish(out);
	if (r->est)
		err = read_veth(r, out);
out:
	return err;
}

int kstats_read(struct kstats_reader *r, struct kstats *out)
{
	int err = kstats_read_into(r, r->tmp);

	if (!err)
		memcpy(out, r->tmp, sizeof(*out));
	return err;
}

static __u64 ctr(__u64 now, __u64 then)
{
	return now >= then ? now - then : now;
}

/*
 * The kernel keeps these in 32 bits (struct gnet_stats_queue): a smaller
 * reading is a wrap, not a reset (a replaced qdisc is told apart by its
 * handle, parent and kind), so the delta is taken modulo 2^32.
 */
static __u64 ctr32(__u64 now, __u64 then)
{
	return (__u32)((__u32)now - (__u32)then);
}

static void qdisc_delta(struct kstats_qdisc *d, const struct kstats_qdisc *then)
{
	d->bytes = ctr(d->bytes, then->bytes);
	d->packets = ctr(d->packets, then->packets);
	d->drops = ctr32(d->drops, then->drops);
	d->overlimits = ctr32(d->overlimits, then->overlimits);
	d->requeues = ctr32(d->requeues, then->requeues);
}

static bool same_qdisc(const struct kstats_qdisc *a, const struct kstats_qdisc *b)
{
	return a->handle == b->handle && a->parent == b->parent && !strcmp(a->kind, b->kind);
}

static void vq_delta(struct kstats_vq *d, const struct kstats_vq *then)
{
	unsigned int i;

	for (i = 0; i < KSTATS_VQ_FIELDS; i++)
		VQ_FIELD(d, i) = ctr(VQ_FIELD(d, i), VQ_CFIELD(then, i));
}

void kstats_delta(const struct kstats *now, const struct kstats *then, struct kstats *d)
{
	struct link_stats *l = &d->link;
	const struct link_stats *t = &then->link;
	unsigned int i, j;

	if (d != now)
		memcpy(d, now, sizeof(*d));
	d->t_ns = ctr(now->t_ns, then->t_ns);
	l->rx_packets = ctr(l->rx_packets, t->rx_packets);
	l->rx_bytes = ctr(l->rx_bytes, t->rx_bytes);
	l->rx_dropped = ctr(l->rx_dropped, t->rx_dropped);
	l->rx_errors = ctr(l->rx_errors, t->rx_errors);
	l->tx_packets = ctr(l->tx_packets, t->tx_packets);
	l->tx_bytes = ctr(l->tx_bytes, t->tx_bytes);
	l->tx_dropped = ctr(l->tx_dropped, t->tx_dropped);
	l->tx_errors = ctr(l->tx_errors, t->tx_errors);

	/* A replaced qdisc starts from zero: its whole count is new. */
	if (same_qdisc(&d->root, &then->root))
		qdisc_delta(&d->root, &then->root);
	for (i = 0; i < d->nqdisc; i++) {
		for (j = 0; j < then->nqdisc; j++) {
			if (same_qdisc(&d->qdisc[i], &then->qdisc[j])) {
				qdisc_delta(&d->qdisc[i], &then->qdisc[j]);
				break;
			}
		}
	}

	if (d->is_veth && then->is_veth) {
		vq_delta(&d->veth, &then->veth);
		for (i = 0; i < d->veth_nq && i < then->veth_nq; i++)
			vq_delta(&d->vq[i], &then->vq[i]);
	}
}
