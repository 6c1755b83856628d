// SPDX-License-Identifier: GPL-2.0
/*
 * The generator: options checked, one template per frame size and per-flow
 * checksum deltas built (build.h), and the marks of a run (gen.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkt/build.h"
#include "pkt/gen.h"

/* Generator */

/* What to add to a checksum's ones'-complement sum to turn stored value c0 into c1. */
static __u16 field_delta(const __u8 *f0, const __u8 *f1, unsigned int off)
{
	__u16 c0, c1;

	memcpy(&c0, f0 + off, 2);
	memcpy(&c1, f1 + off, 2);
	return pkt_csum_fold((__u64)(__u16)~c1 + c0);
}

/*
 * Flow i's tuple, and its checksums as deltas from flow 0's: both frames are
 * built whole (at the smallest size, the stamp zeroed), so every kind of
 * header gets them from one rule, whatever enters which checksum.
 */
static void flow_setup(struct pkt_gen *g, const struct pkt_opts *o, __u32 i, const __u8 *f0,
		       __u8 *fi, unsigned int len)
{
	const struct pkt_layout *l = &g->lay;
	struct pkt_flow *fl = &g->flows[i];
	struct pkt_tuple t;

	pkt_flow_tuple(o, i, &t);
	if (g->family == PKT_IPV6) {
		memcpy(&fl->v6.saddr_lo, t.saddr + 8, 8);
		memcpy(&fl->v6.daddr_lo, t.daddr + 8, 8);
	} else {
		memcpy(&fl->v4.saddr, t.saddr, 4);
		memcpy(&fl->v4.daddr, t.daddr, 4);
	}
	fl->sport = htons(t.sport);
	fl->dport = htons(t.dport);
	pkt_build_frame(o, l, &t, fi, len);
	if (g->family == PKT_IPV4)
		fl->ip_delta = field_delta(f0, fi, l->l3_off + 10);
	fl->udp_delta = field_delta(f0, fi, l->csum_off);
	if (l->ol4_off) {
		fl->ocsum_delta = field_delta(f0, fi, l->ol4_off + PKT_UDP_OFF_CSUM);
		memcpy(&fl->osport, fi + l->ol4_off, 2);
	}
}

/* The headers' own rules: tags, VNI, the outer addresses' family. */
static int check_headers(const struct pkt_opts *o, char *err, size_t errlen)
{
	unsigned int i;

	if (o->nvlan > PKT_VLAN_MAX) {
		PKT_SETERR(err, errlen,
			   "%u VLAN tags: at most %d (QinQ); give --vlan once or twice", o->nvlan,
			   PKT_VLAN_MAX);
		return -EINVAL;
	}
	for (i = 0; i < o->nvlan; i++)
		if (o->vlan[i] > 4095) {
			PKT_SETERR(err, errlen, "VLAN id %u: ids are 0-4095; fix --vlan",
				   o->vlan[i]);
			return -EINVAL;
		}
	if (o->vlan_prio > 7) {
		PKT_SETERR(err, errlen, "VLAN priority %u: priorities are 0-7; fix --vlan-prio",
			   o->vlan_prio);
		return -EINVAL;
	}
	if (o->vni > PKT_VNI_MAX) {
		PKT_SETERR(err, errlen, "VNI %u: a VNI is 24 bits (0-%u); fix --encap", o->vni,
			   PKT_VNI_MAX);
		return -EINVAL;
	}
	if (o->encap && o->outer_src.family != o->outer_dst.family) {
		PKT_SETERR(
			err, errlen,
			"the tunnel's outer addresses are not one family; give --outer-src-ip and --outer-dst-ip of one family");
		return -EINVAL;
	}
	return 0;
}

/* One frame size against the headers' minimum and the interface's maximum. */
static int check_size(const struct pkt_opts *o, unsigned int size, char *err, size_t errlen)
{
	unsigned int min = pkt_opts_min_size(o);
	struct pkt_layout l;

	pkt_opts_layout(o, &l);
	if (size < min && ((o->proto && o->proto != PKT_UDP) || o->nvlan || o->encap)) {
		PKT_SETERR(
			err, errlen,
			"size %u is below the %u-byte minimum for %s %s%s%s%s%s; use -s %u or more",
			size, min, pkt_family_name(o->src_ip.family), pkt_proto_name(l.proto),
			o->nvlan ? " with VLAN tags" : "", o->encap ? " in " : "",
			o->encap ? pkt_encap_name(o->encap) : "", o->no_stamp ? "" : " and a stamp",
			min);
		return -EINVAL;
	}
	return pkt_check_size(o->src_ip.family, !o->no_stamp, size, o->max_size, err, errlen);
}

static int check_opts(const struct pkt_opts *o, char *err, size_t errlen)
{
	enum pkt_family fam = o->src_ip.family;
	__u32 shards = o->shards ? o->shards : 1;
	unsigned int i;
	__u64 tuples;
	int ret;

	if (fam != PKT_IPV4 && fam != PKT_IPV6) {
		PKT_SETERR(err, errlen, "no source address family set; give a source address");
		return -EINVAL;
	}
	if (o->dst_ip.family != fam) {
		PKT_SETERR(err, errlen,
			   "source is %s but destination is %s; give both addresses in one family",
			   pkt_family_name(fam), pkt_family_name(o->dst_ip.family));
		return -EINVAL;
	}
	if (o->src_port.start > o->src_port.end || o->dst_port.start > o->dst_port.end ||
	    o->src_ip.lo_start > o->src_ip.lo_end || o->dst_ip.lo_start > o->dst_ip.lo_end) {
		PKT_SETERR(err, errlen, "a range starts above its end; write ranges as LOW-HIGH");
		return -EINVAL;
	}
	ret = check_headers(o, err, errlen);
	if (ret)
		return ret;
	if (o->imix) {
		if (!o->imix->n || o->imix->seq_len == 0 || o->imix->seq_len > PKT_IMIX_SEQ_MAX) {
			PKT_SETERR(err, errlen, "empty IMIX; give SIZE:WEIGHT pairs like %s",
				   PKT_IMIX_DEFAULT);
			return -EINVAL;
		}
		for (i = 0; i < o->imix->n; i++) {
			ret = check_size(o, o->imix->size[i], err, errlen);
			if (ret)
				return ret;
		}
	} else {
		ret = check_size(o, o->size, err, errlen);
		if (ret)
			return ret;
	}
	if (o->flows == 0) {
		PKT_SETERR(err, errlen, "--flows 0: need at least 1 flow");
		return -EINVAL;
	}
	if (o->flows > PKT_FLOWS_MAX) {
		PKT_SETERR(
			err, errlen,
			"--flows %u is more than %d, the most the stamp's 16-bit flow id tells apart (0xffff names a mark); use --flows %d or fewer",
			o->flows, PKT_FLOWS_MAX, PKT_FLOWS_MAX);
		return -EINVAL;
	}
	tuples = pkt_tuple_count(o);
	if (o->flows > tuples) {
		PKT_SETERR(
			err, errlen,
			"--flows %u is more than the %llu distinct (src ip, dst ip, src port, dst port) tuples the ranges give; widen an address or port range, or use --flows %llu or fewer",
			o->flows, (unsigned long long)tuples, (unsigned long long)tuples);
		return -EINVAL;
	}
	if (o->shard >= shards || shards > o->flows) {
		PKT_SETERR(
			err, errlen,
			"%u flows cannot be shared by %u queues (queue %u); give every queue a flow: --flows %u or more",
			o->flows, shards, o->shard, shards);
		return -EINVAL;
	}
	return 0;
}

static __u64 splitmix64(__u64 x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

struct pkt_gen *pkt_gen__create(const struct pkt_opts *o, char *err, size_t errlen)
{
	struct pkt_gen *g = NULL;
	struct pkt_tuple t0;
	__u8 *f0 = NULL;
	unsigned int i;
	int ret;

	ret = check_opts(o, err, errlen);
	if (ret)
		goto out;
	ret = -ENOMEM;
	g = calloc(1, sizeof(*g));
	if (!g)
		goto out;
	g->family = o->src_ip.family;
	g->stamp = !o->no_stamp;
	g->random = o->random;
	g->copy_payload = o->copy_payload;
	pkt_opts_layout(o, &g->lay);
	g->copy_len = pkt_opts_min_size(o);
	g->nflows = o->flows;
	g->shards = o->shards ? o->shards : 1;
	g->shard = o->shard;
	g->nlocal = (g->nflows - g->shard + g->shards - 1) / g->shards;
	g->flow_pos = g->shard;
	g->rng = splitmix64(o->seed);
	if (!g->rng)
		g->rng = 1; /* xorshift never leaves 0 */
	if (o->imix) {
		g->ntmpl = o->imix->n;
		g->size_seq_len = o->imix->seq_len;
		memcpy(g->size_seq, o->imix->seq, o->imix->seq_len);
	} else {
		g->ntmpl = 1;
		g->size_seq_len = 1;
	}
	g->flows = calloc(g->nflows, sizeof(*g->flows));
	g->seq = calloc(g->nflows, sizeof(*g->seq));
	g->tag = calloc(g->nflows, sizeof(*g->tag));
	if (!g->flows || !g->seq || !g->tag)
		goto out;
	g->run = o->run;
	if (o->key)
		g->key = *o->key;
	else
		stamp_key_public(&g->key);
	g->opts = *o;
	g->opts.imix = NULL;
	g->opts.key = NULL;
	for (i = 0; i < g->nflows; i++)
		stamp_flow_state(&g->tag[i], &g->key, g->run, (__u16)i);
	pkt_flow_tuple(o, 0, &t0);
	for (i = 0; i < g->ntmpl; i++) {
		struct pkt_tmpl *tp = &g->tmpl[i];

		tp->len = o->imix ? o->imix->size[i] : o->size;
		tp->data = malloc(tp->len);
		if (!tp->data)
			goto out;
		pkt_build_frame(o, &g->lay, &t0, tp->data, tp->len);
		if (g->family == PKT_IPV4)
			memcpy(&tp->ip_csum, tp->data + g->lay.l3_off + 10, 2);
		memcpy(&tp->udp_csum, tp->data + g->lay.csum_off, 2);
		if (g->lay.ol4_off)
			memcpy(&tp->ocsum, tp->data + g->lay.ol4_off + PKT_UDP_OFF_CSUM, 2);
	}
	f0 = malloc(2 * (size_t)g->copy_len);
	if (!f0)
		goto out;
	pkt_build_frame(o, &g->lay, &t0, f0, g->copy_len);
	for (i = 0; i < g->nflows; i++)
		flow_setup(g, o, i, f0, f0 + g->copy_len, g->copy_len);
	ret = 0;
out:
	free(f0);
	if (ret) {
		if (ret == -ENOMEM)
			PKT_SETERR(err, errlen, "out of memory building packet templates");
		pkt_gen__destroy(g);
		errno = -ret;
		return NULL;
	}
	return g;
}

void pkt_gen__destroy(struct pkt_gen *g)
{
	unsigned int i;

	if (!g)
		return;
	for (i = 0; i < g->ntmpl; i++)
		free(g->tmpl[i].data);
	free(g->flows);
	free(g->seq);
	free(g->tag);
	free(g);
}

unsigned int pkt_gen_max_len(const struct pkt_gen *g)
{
	unsigned int i, max = 0;

	for (i = 0; i < g->ntmpl; i++)
		if (g->tmpl[i].len > max)
			max = g->tmpl[i].len;
	return max;
}

void pkt_gen_prefill(const struct pkt_gen *g, void *frame)
{
	unsigned int i, best = 0;

	for (i = 1; i < g->ntmpl; i++)
		if (g->tmpl[i].len > g->tmpl[best].len)
			best = i;
	memcpy(frame, g->tmpl[best].data, g->tmpl[best].len);
}

const __u8 *pkt_gen_template(const struct pkt_gen *g, unsigned int t, unsigned int *len)
{
	if (t >= g->ntmpl)
		return NULL;
	if (len)
		*len = g->tmpl[t].len;
	return g->tmpl[t].data;
}

unsigned int pkt_gen_copy_len(const struct pkt_gen *g)
{
	return g->copy_len;
}

unsigned int pkt_gen_mark_len(const struct pkt_gen *g)
{
	unsigned int len = g->lay.pay_off + PKT_MARK_PAYLOAD;

	return len < PKT_SIZE_DEFAULT ? PKT_SIZE_DEFAULT : len;
}

unsigned int pkt_gen_mark(const struct pkt_gen *g, __u32 flow, __u64 ts_ns,
			  const struct xdpsg_mark *m, void *frame)
{
	unsigned int len = pkt_gen_mark_len(g);
	__u8 body[PKT_MARK_PAYLOAD];
	struct pkt_tuple t;

	pkt_flow_tuple(&g->opts, flow, &t);
	stamp_write_mark(body, &g->key, g->run, ts_ns, m);
	pkt_build_frame_payload(&g->opts, &g->lay, &t, frame, len, body, sizeof(body));
	return len;
}
