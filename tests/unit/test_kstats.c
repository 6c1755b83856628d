// SPDX-License-Identifier: GPL-2.0
/*
 * common/kern/kstats: the qdisc message parser on hand-built RTM_NEWQDISC
 * messages, root totals, delta semantics and the JSON shape, without a
 * kernel; then one real read of "lo", which needs no privileges.
 */
#include <linux/gen_stats.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include "kern/kstats.h"
#include "test.h"

/* A message under construction; nh points at the start of b. */
struct msgbuf {
	struct nlmsghdr *nh;
	size_t nest_at[4];
	int depth;
	char b[1024] __attribute__((aligned(8)));
};

static void msg_init(struct msgbuf *m, __u16 type, int ifindex, __u32 handle, __u32 parent)
{
	struct tcmsg *tc;

	memset(m, 0, sizeof(*m));
	m->nh = (struct nlmsghdr *)m->b;
	m->nh->nlmsg_type = type;
	m->nh->nlmsg_len = NLMSG_LENGTH(sizeof(*tc));
	tc = NLMSG_DATA(m->nh);
	tc->tcm_family = AF_UNSPEC;
	tc->tcm_ifindex = ifindex;
	tc->tcm_handle = handle;
	tc->tcm_parent = parent;
}

static void msg_put(struct msgbuf *m, __u16 type, const void *data, size_t len)
{
	struct rtattr *rta = (struct rtattr *)(m->b + NLMSG_ALIGN(m->nh->nlmsg_len));

	rta->rta_type = type;
	rta->rta_len = (unsigned short)RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(rta), data, len);
	m->nh->nlmsg_len = NLMSG_ALIGN(m->nh->nlmsg_len) + RTA_ALIGN(rta->rta_len);
}

static void msg_nest(struct msgbuf *m, __u16 type)
{
	m->nest_at[m->depth++] = NLMSG_ALIGN(m->nh->nlmsg_len);
	msg_put(m, type, NULL, 0);
}

static void msg_nest_end(struct msgbuf *m)
{
	struct rtattr *rta = (struct rtattr *)(m->b + m->nest_at[--m->depth]);

	rta->rta_len = (unsigned short)(m->nh->nlmsg_len - m->nest_at[m->depth]);
}

/* A qdisc message as the kernel sends it: kind, options, TCA_STATS2{BASIC, QUEUE}. */
static void build_qdisc(struct msgbuf *m, int ifindex, const char *kind, __u32 handle, __u32 parent,
			__u64 bytes, __u32 packets, const struct gnet_stats_queue *qs,
			__u16 stats2_flags)
{
	struct gnet_stats_basic b = { .bytes = bytes, .packets = packets };
	struct tc_fifo_qopt opt = { .limit = 100 };

	msg_init(m, RTM_NEWQDISC, ifindex, handle, parent);
	msg_put(m, TCA_KIND, kind, strlen(kind) + 1);
	msg_put(m, TCA_OPTIONS, &opt, sizeof(opt));
	msg_nest(m, TCA_STATS2 | stats2_flags);
	msg_put(m, TCA_STATS_BASIC, &b, sizeof(b));
	msg_put(m, TCA_STATS_RATE_EST, NULL, 0); /* unknown to us: skipped */
	msg_put(m, TCA_STATS_QUEUE, qs, sizeof(*qs));
	msg_nest_end(m);
}

static void test_parse_stats2(void)
{
	struct gnet_stats_queue qs = {
		.qlen = 7, .backlog = 420, .drops = 11, .requeues = 3, .overlimits = 5
	};
	struct kstats_qdisc q;
	struct msgbuf m;

	build_qdisc(&m, 4, "pfifo", 0x80700000, TC_H_ROOT, 60000, 1000, &qs, 0);
	if (!ASSERT_EQ(kstats_parse_qdisc(m.nh, 4, &q), 1, "parse own ifindex"))
		return;
	ASSERT_STREQ(q.kind, "pfifo", "kind");
	ASSERT_EQ(q.handle, 0x80700000, "handle");
	ASSERT_EQ_U64(q.parent, TC_H_ROOT, "parent");
	ASSERT_EQ(q.bytes, 60000, "bytes");
	ASSERT_EQ(q.packets, 1000, "packets");
	ASSERT_EQ(q.drops, 11, "drops");
	ASSERT_EQ(q.overlimits, 5, "overlimits");
	ASSERT_EQ(q.requeues, 3, "requeues");
	ASSERT_EQ(q.backlog, 420, "backlog");
	ASSERT_EQ(q.qlen, 7, "qlen");

	/* The same with NLA_F_NESTED on the nest, as newer kernels may send. */
	build_qdisc(&m, 4, "tbf", 0x10000, TC_H_ROOT, 1, 2, &qs, NLA_F_NESTED);
	if (ASSERT_EQ(kstats_parse_qdisc(m.nh, 4, &q), 1, "parse nested flag"))
		ASSERT_EQ(q.drops, 11, "drops with NLA_F_NESTED");
}

static void test_parse_skips_and_rejects(void)
{
	struct gnet_stats_queue qs = {};
	struct kstats_qdisc q;
	struct msgbuf m;

	build_qdisc(&m, 5, "pfifo", 0x10000, TC_H_ROOT, 1, 1, &qs, 0);
	ASSERT_EQ(kstats_parse_qdisc(m.nh, 4, &q), 0, "other ifindex skipped");
	m.nh->nlmsg_type = RTM_NEWLINK;
	ASSERT_EQ(kstats_parse_qdisc(m.nh, 5, &q), 0, "other message type skipped");

	msg_init(&m, RTM_NEWQDISC, 5, 0, TC_H_ROOT); /* no TCA_KIND */
	ASSERT_ERR(kstats_parse_qdisc(m.nh, 5, &q), -EINVAL, "no kind");
	m.nh->nlmsg_len = NLMSG_LENGTH(2); /* shorter than a tcmsg */
	ASSERT_ERR(kstats_parse_qdisc(m.nh, 5, &q), -EINVAL, "truncated tcmsg");
}

static void test_parse_pkt64_and_old_stats(void)
{
	struct gnet_stats_queue qs = { .drops = 1 };
	struct tc_stats st = {
		.bytes = 900, .packets = 9, .drops = 2, .overlimits = 3, .qlen = 4, .backlog = 5
	};
	__u64 pkts = 0x100000005ULL;
	struct kstats_qdisc q;
	struct msgbuf m;

	/* A 32-bit count that wrapped comes with TCA_STATS_PKT64 after BASIC. */
	msg_init(&m, RTM_NEWQDISC, 3, 0x10000, TC_H_ROOT);
	msg_put(&m, TCA_KIND, "pfifo", 6);
	msg_nest(&m, TCA_STATS2);
	{
		struct gnet_stats_basic b = { .bytes = 1ULL << 40, .packets = 5 };

		msg_put(&m, TCA_STATS_BASIC, &b, sizeof(b));
	}
	msg_put(&m, TCA_STATS_PKT64, &pkts, sizeof(pkts));
	msg_put(&m, TCA_STATS_QUEUE, &qs, sizeof(qs));
	msg_nest_end(&m);
	if (ASSERT_EQ(kstats_parse_qdisc(m.nh, 3, &q), 1, "parse pkt64")) {
		ASSERT_EQ_U64(q.packets, pkts, "64-bit packets");
		ASSERT_EQ_U64(q.bytes, 1ULL << 40, "bytes");
		ASSERT_EQ(q.drops, 1, "drops");
	}

	/* Only the old TCA_STATS struct. */
	msg_init(&m, RTM_NEWQDISC, 3, 0x20000, TC_H_ROOT);
	msg_put(&m, TCA_KIND, "bfifo", 6);
	msg_put(&m, TCA_STATS, &st, sizeof(st));
	if (ASSERT_EQ(kstats_parse_qdisc(m.nh, 3, &q), 1, "parse TCA_STATS")) {
		ASSERT_STREQ(q.kind, "bfifo", "kind");
		ASSERT_EQ(q.bytes, 900, "bytes");
		ASSERT_EQ(q.packets, 9, "packets");
		ASSERT_EQ(q.drops, 2, "drops");
		ASSERT_EQ(q.overlimits, 3, "overlimits");
		ASSERT_EQ(q.qlen, 4, "qlen");
		ASSERT_EQ(q.backlog, 5, "backlog");
	}
}

static struct kstats_qdisc mkq(const char *kind, __u32 handle, __u32 parent, __u64 base)
{
	struct kstats_qdisc q = { .handle = handle, .parent = parent };

	snprintf(q.kind, sizeof(q.kind), "%s", kind);
	q.bytes = base * 60;
	q.packets = base;
	q.drops = base + 1;
	q.overlimits = base + 2;
	q.requeues = base + 3;
	q.backlog = base + 4;
	q.qlen = base + 5;
	return q;
}

static void test_root_totals(void)
{
	static struct kstats s;
	struct kstats_qdisc q;
	const struct kstats_qdisc *r;

	kstats_qdisc_reset(&s);
	kstats_qdisc_finish(&s);
	ASSERT_TRUE(kstats_root(&s) == NULL, "no qdisc: no root");
	ASSERT_STREQ(s.root.kind, "none", "no qdisc: kind none");

	/* mq: the root's own numbers are replaced by its children's sum. */
	kstats_qdisc_reset(&s);
	q = mkq("mq", 0x80010000, TC_H_ROOT, 1);
	kstats_qdisc_add(&s, &q);
	q = mkq("pfifo_fast", 0, 0x80010001, 100);
	kstats_qdisc_add(&s, &q);
	q = mkq("pfifo_fast", 0, 0x80010002, 200);
	kstats_qdisc_add(&s, &q);
	q = mkq("clsact", 0xffff0000, TC_H_INGRESS, 1000);
	kstats_qdisc_add(&s, &q);
	kstats_qdisc_finish(&s);
	r = kstats_root(&s);
	if (!ASSERT_TRUE(r != NULL, "mq root"))
		return;
	ASSERT_STREQ(r->kind, "mq", "root kind");
	ASSERT_EQ(r->handle, 0x80010000, "root handle");
	ASSERT_EQ(r->packets, 300, "mq packets = children's sum");
	ASSERT_EQ(r->bytes, 18000, "mq bytes");
	ASSERT_EQ(r->drops, 302, "mq drops");
	ASSERT_EQ(r->overlimits, 304, "mq overlimits");
	ASSERT_EQ(r->requeues, 306, "mq requeues");
	ASSERT_EQ(r->backlog, 308, "mq backlog");
	ASSERT_EQ(r->qlen, 310, "mq qlen");
	ASSERT_EQ(s.nqdisc, 4, "all stored");

	/* Any other root: its own numbers. */
	kstats_qdisc_reset(&s);
	q = mkq("tbf", 0x10000, TC_H_ROOT, 7);
	kstats_qdisc_add(&s, &q);
	q = mkq("pfifo", 0, 0x10001, 3);
	kstats_qdisc_add(&s, &q);
	kstats_qdisc_finish(&s);
	ASSERT_EQ(s.root.packets, 7, "tbf root keeps its own count");

	/* More qdiscs than fit: stored list truncated, mq falls back to its own sum. */
	kstats_qdisc_reset(&s);
	q = mkq("mq", 0x80010000, TC_H_ROOT, 1);
	kstats_qdisc_add(&s, &q);
	for (unsigned int i = 0; i < KSTATS_MAX_QDISC + 3; i++) {
		q = mkq("pfifo", 0, 0x80010001 + i, 1);
		kstats_qdisc_add(&s, &q);
	}
	kstats_qdisc_finish(&s);
	ASSERT_EQ(s.nqdisc, KSTATS_MAX_QDISC, "stored");
	ASSERT_EQ(s.qdisc_total, KSTATS_MAX_QDISC + 4, "seen");
	ASSERT_EQ(s.root.packets, 1, "truncated mq: the kernel's own sum");
}

static void test_delta(void)
{
	static struct kstats a, b, d;
	struct kstats_qdisc q;

	kstats_qdisc_reset(&a);
	q = mkq("pfifo", 0x10000, TC_H_ROOT, 10);
	kstats_qdisc_add(&a, &q);
	kstats_qdisc_finish(&a);
	a.t_ns = 1000;
	a.link.tx_packets = 100;
	a.link.tx_dropped = 5;
	a.is_veth = true;
	a.veth_peer_ifindex = 9;
	a.veth_nq = 2;
	a.veth.rx_xdp_packets = 50;
	a.vq[1].rx_xdp_packets = 50;

	b = a;
	b.t_ns = 3000;
	b.link.tx_packets = 160;
	b.link.tx_dropped = 5;
	b.qdisc[0] = mkq("pfifo", 0x10000, TC_H_ROOT, 70);
	b.qdisc[0].backlog = 2; /* a gauge that went down */
	b.qdisc[0].qlen = 1;
	kstats_qdisc_reset(&b);
	q = b.qdisc[0];
	kstats_qdisc_add(&b, &q);
	kstats_qdisc_finish(&b);
	b.veth.rx_xdp_packets = 80;
	b.vq[1].rx_xdp_packets = 80;

	kstats_delta(&b, &a, &d);
	ASSERT_EQ(d.t_ns, 2000, "t_ns is the time between");
	ASSERT_EQ(d.link.tx_packets, 60, "link counter");
	ASSERT_EQ(d.link.tx_dropped, 0, "unchanged counter");
	ASSERT_EQ(d.root.packets, 60, "qdisc packets");
	ASSERT_EQ(d.root.bytes, 3600, "qdisc bytes");
	ASSERT_EQ(d.root.drops, 60, "qdisc drops");
	ASSERT_EQ(d.root.requeues, 60, "qdisc requeues");
	ASSERT_EQ(d.root.backlog, 2, "backlog is a gauge: now");
	ASSERT_EQ(d.root.qlen, 1, "qlen is a gauge: now");
	ASSERT_EQ(d.qdisc[0].packets, 60, "listed qdisc matched by handle");
	ASSERT_EQ(d.veth.rx_xdp_packets, 30, "veth sum");
	ASSERT_EQ(d.vq[1].rx_xdp_packets, 30, "veth queue");
	ASSERT_EQ(d.veth_peer_ifindex, 9, "peer_ifindex is a gauge");

	/* d may be now itself. */
	d = b;
	kstats_delta(&d, &a, &d);
	ASSERT_EQ(d.root.packets, 60, "in place");
	ASSERT_EQ(d.link.tx_packets, 60, "in place link");

	/* A replaced qdisc (new handle) counts from zero; so does a counter reset. */
	d = b;
	d.root.handle = 0x20000;
	d.link.tx_packets = 7;
	kstats_delta(&d, &a, &d);
	ASSERT_EQ(d.root.packets, 70, "replaced qdisc: whole count");
	ASSERT_EQ(d.link.tx_packets, 7, "counter went backwards: from zero");
}

/* drops, overlimits and requeues are 32-bit in the kernel: a wrap is not a reset. */
static void test_delta_32bit_wrap(void)
{
	static struct kstats a, b, d;
	struct kstats_qdisc q;

	kstats_qdisc_reset(&a);
	q = mkq("pfifo", 0x10000, TC_H_ROOT, 10);
	q.drops = 0xfffffff0u;
	q.overlimits = 0xffffffffu;
	q.requeues = 0x80000000u;
	kstats_qdisc_add(&a, &q);
	kstats_qdisc_finish(&a);

	kstats_qdisc_reset(&b);
	q = mkq("pfifo", 0x10000, TC_H_ROOT, 20);
	q.drops = 0x10; /* wrapped: 0x20 more */
	q.overlimits = 4; /* wrapped: 5 more */
	q.requeues = 0x80000003u; /* no wrap: 3 more */
	kstats_qdisc_add(&b, &q);
	kstats_qdisc_finish(&b);

	kstats_delta(&b, &a, &d);
	ASSERT_EQ(d.root.drops, 0x20, "drops across a 32-bit wrap");
	ASSERT_EQ(d.root.overlimits, 5, "overlimits across a 32-bit wrap");
	ASSERT_EQ(d.root.requeues, 3, "requeues without a wrap");
	ASSERT_EQ(d.qdisc[0].drops, 0x20, "listed qdisc: drops across a wrap");
}

static char *json_of(const struct kstats *s, size_t *len)
{
	char *buf = NULL;
	struct jw w;
	FILE *f;

	f = open_memstream(&buf, len);
	if (!f)
		return NULL;
	jw_begin(&w, f, "t");
	kstats_json(&w, "kstats", s);
	jw_finish(&w);
	fclose(f);
	return buf;
}

static bool balanced(const char *s)
{
	int depth = 0;

	for (; *s; s++) {
		if (*s == '{' || *s == '[')
			depth++;
		else if (*s == '}' || *s == ']')
			depth--;
		if (depth < 0)
			return false;
	}
	return depth == 0;
}

static void test_json_shape(void)
{
	static const char *const want[] = {
		"{\"type\":\"t\",\"schema\":1,\"kstats\":{\"t_ns\":5,\"link\":{\"rx_packets\":0,",
		"\"tx_packets\":12,\"tx_bytes\":0,\"tx_dropped\":3,\"tx_errors\":0}",
		("\"qdisc\":{\"kind\":\"mq\",\"handle\":\"8001:\",\"sent_bytes\":18000,"
		 "\"sent_packets\":300,\"drops\":302,\"overlimits\":304,\"requeues\":306,"
		 "\"backlog_bytes\":308,\"qlen\":310,\"children\":[{\"kind\":\"pfifo\","
		 "\"handle\":\"0:\",\"parent\":\"8001:1\","),
		"\"veth\":{\"peer_ifindex\":2,\"rx_xdp_packets\":40,\"rx_xdp_bytes\":0,\"rx_drops\":1,",
		("\"tx_xdp_xmit\":0,\"tx_xdp_xmit_errors\":0,\"queues\":[{\"queue\":0,"
		 "\"rx_xdp_packets\":40,"),
	};
	static struct kstats s;
	struct kstats_qdisc q;
	size_t len, i;
	char *j;

	kstats_qdisc_reset(&s);
	q = mkq("mq", 0x80010000, TC_H_ROOT, 1);
	kstats_qdisc_add(&s, &q);
	q = mkq("pfifo", 0, 0x80010001, 100);
	kstats_qdisc_add(&s, &q);
	q = mkq("pfifo", 0, 0x80010002, 200);
	kstats_qdisc_add(&s, &q);
	kstats_qdisc_finish(&s);
	s.t_ns = 5;
	s.link.tx_packets = 12;
	s.link.tx_dropped = 3;
	s.is_veth = true;
	s.veth_peer_ifindex = 2;
	s.veth_nq = 1;
	s.veth.rx_xdp_packets = s.vq[0].rx_xdp_packets = 40;
	s.veth.rx_drops = s.vq[0].rx_drops = 1;

	j = json_of(&s, &len);
	if (!ASSERT_TRUE(j != NULL, "memstream"))
		return;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!ASSERT_TRUE(strstr(j, want[i]) != NULL, want[i]))
			fprintf(stderr, "  got: %s", j);
	ASSERT_TRUE(balanced(j), "braces balanced");
	ASSERT_EQ(j[len - 1], '\n', "one line");
	ASSERT_TRUE(strchr(j, '\n') == j + len - 1, "exactly one line");
	free(j);

	/* No qdisc, not a veth: kind "none", no children, no veth object. */
	memset(&s, 0, sizeof(s));
	kstats_qdisc_reset(&s);
	kstats_qdisc_finish(&s);
	j = json_of(&s, &len);
	if (!ASSERT_TRUE(j != NULL, "memstream"))
		return;
	ASSERT_TRUE(strstr(j, "\"qdisc\":{\"kind\":\"none\",") != NULL, "kind none");
	ASSERT_TRUE(strstr(j, "children") == NULL, "no children");
	ASSERT_TRUE(strstr(j, "veth") == NULL, "no veth object");
	ASSERT_TRUE(balanced(j), "braces balanced");
	free(j);
}

static void test_handle_str(void)
{
	char b[16];

	ASSERT_STREQ(kstats_handle_str(0x80010000, b, sizeof(b)), "8001:", "major only");
	ASSERT_STREQ(kstats_handle_str(0x80010002, b, sizeof(b)), "8001:2", "major:minor");
	ASSERT_STREQ(kstats_handle_str(0, b, sizeof(b)), "0:", "zero");
	ASSERT_STREQ(kstats_handle_str(TC_H_ROOT, b, sizeof(b)), "root", "root");
	ASSERT_STREQ(kstats_handle_str(TC_H_INGRESS, b, sizeof(b)), "ingress", "ingress");
}

/* A real read: "lo" exists in every namespace and reading it needs no privileges. */
static void test_read_lo(void)
{
	static struct kstats a, b, d;
	struct kstats_reader *r = NULL;
	int err;

	ASSERT_ERR(kstats_reader__open("no-such-if0", &r), -ENODEV, "missing interface");
	err = kstats_reader__open("lo", &r);
	if (!ASSERT_OK(err, "open lo"))
		return;
	if (!ASSERT_OK(kstats_read(r, &a), "read lo") || !ASSERT_OK(kstats_read(r, &b), "again"))
		goto out;
	ASSERT_FALSE(a.is_veth, "lo is no veth");
	ASSERT_GE(a.qdisc_total, 1, "lo has a root qdisc (noqueue)");
	ASSERT_TRUE(kstats_root(&a) != NULL, "root");
	ASSERT_STREQ(kstats_reader_ifname(r), "lo", "ifname");
	kstats_delta(&b, &a, &d);
	ASSERT_GE(b.link.tx_packets, a.link.tx_packets, "link counter monotonic");
	ASSERT_GT(b.t_ns, a.t_ns, "time moves");
out:
	kstats_reader__close(r);
}

static const struct test_case cases[] = {
	TEST_CASE(parse_stats2),
	TEST_CASE(parse_skips_and_rejects),
	TEST_CASE(parse_pkt64_and_old_stats),
	TEST_CASE(root_totals),
	TEST_CASE(delta),
	TEST_CASE(delta_32bit_wrap),
	TEST_CASE(json_shape),
	TEST_CASE(handle_str),
	TEST_CASE(read_lo),
};

TEST_MAIN("kstats", cases)
