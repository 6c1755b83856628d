// SPDX-License-Identifier: GPL-2.0
/*
 * What every mode sends: addresses (given, or the interface's own and its
 * neighbour's), sizes, flows and the run id, and one packet generator per
 * thread, each sending its own shard of the flows.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>

#include "gen.h"
#include "pkt/text.h"
#include "streams.h"

/*
 * One pair of ends, given or found: src the given one, else the interface's
 * address; dst the given one, else the interface's first neighbour. With
 * macs, dst's neighbour entry gives the destination MAC (the ends on the
 * wire); without (a tunnel's inner packet), fallbacks stand in.
 */
static int resolve_ends(struct gen *g, const struct gen_cfg *cfg, struct pkt_opts *o,
			const char *src, const char *dst, bool v6, struct pkt_ip_range *s,
			struct pkt_ip_range *d, bool macs, char *err, size_t errlen)
{
	int family = v6 ? AF_INET6 : AF_INET;
	char ip[INET6_ADDRSTRLEN + 1], dst_one[INET6_ADDRSTRLEN + 1];
	unsigned char mac[6];

	if (src) {
		if (pkt_text_ip_range(src, s, err, errlen))
			return -EINVAL;
	} else if (!iface_first_addr(g->ifc.name, family, ip, sizeof(ip))) {
		pkt_text_ip_range(ip, s, err, errlen);
	} else {
		pkt_text_ip_range(v6 ? "fd00::1" : "10.0.0.1", s, err, errlen);
	}
	if (!dst) {
		if (iface_neigh_lookup(g->ifc.ifindex, family, NULL, ip, sizeof(ip), mac)) {
			if (macs && !cfg->dst_mac) {
				snprintf(
					err, errlen,
					"%s has no %s neighbour entry to send to; give --dst-ip and --dst-mac",
					g->ifc.name, v6 ? "IPv6" : "IPv4");
				return -EINVAL;
			}
			dst = v6 ? "fd00::2" : "10.0.0.2";
		} else {
			dst = ip;
			if (macs)
				memcpy(o->dst_mac, mac, 6);
		}
	} else if (macs && !cfg->dst_mac) {
		/* The first address of a range names the neighbour to ask for. */
		const char *dash = strchr(dst, '-');
		size_t l = dash ? (size_t)(dash - dst) : strlen(dst);

		snprintf(dst_one, sizeof(dst_one), "%.*s", (int)(l < sizeof(dst_one) ? l : 0), dst);
		if (iface_neigh_lookup(g->ifc.ifindex, family, dst_one, ip, sizeof(ip), mac)) {
			snprintf(
				err, errlen,
				"no neighbour entry for %s on %s to take its MAC from; give --dst-mac",
				dst_one, g->ifc.name);
			return -EINVAL;
		}
		memcpy(o->dst_mac, mac, 6);
	}
	if (pkt_text_ip_range(dst, d, err, errlen))
		return -EINVAL;
	if (s->family != d->family) {
		snprintf(
			err, errlen,
			"source and destination addresses are of different families; use --ipv6 with IPv6 addresses");
		return -EINVAL;
	}
	return 0;
}

/* A tunnel's outer family: its addresses', else the inner one. */
static bool outer_v6(const struct gen_cfg *cfg)
{
	const char *a = cfg->outer_dst_ip ? cfg->outer_dst_ip : cfg->outer_src_ip;

	return a ? strchr(a, ':') != NULL : cfg->ipv6;
}

static int resolve_addresses(struct gen *g, const struct gen_cfg *cfg, struct pkt_opts *o,
			     const char *where)
{
	bool ov6 = outer_v6(cfg);
	char err[256];
	int rc;

	memcpy(o->src_mac, g->ifc.mac, 6);
	if (cfg->src_mac && pkt_text_mac(cfg->src_mac, o->src_mac, err, sizeof(err)))
		goto bad;
	if (o->encap) {
		/* The outer ends are on the wire: they take the MAC; the inner ones fall back. */
		rc = resolve_ends(g, cfg, o, cfg->outer_src_ip, cfg->outer_dst_ip, ov6,
				  &o->outer_src, &o->outer_dst, true, err, sizeof(err));
		if (!rc && cfg->ipv6 == ov6 && !cfg->src_ip && !cfg->dst_ip) {
			o->src_ip = o->outer_src;
			o->dst_ip = o->outer_dst;
		} else if (!rc) {
			rc = resolve_ends(g, cfg, o, cfg->src_ip, cfg->dst_ip, cfg->ipv6,
					  &o->src_ip, &o->dst_ip, false, err, sizeof(err));
		}
	} else {
		rc = resolve_ends(g, cfg, o, cfg->src_ip, cfg->dst_ip, cfg->ipv6, &o->src_ip,
				  &o->dst_ip, true, err, sizeof(err));
	}
	if (rc)
		goto bad;
	if (cfg->dst_mac && pkt_text_mac(cfg->dst_mac, o->dst_mac, err, sizeof(err)))
		goto bad;
	if (o->dst_ip.family == PKT_IPV6 && !cfg->ipv6) {
		snprintf(err, sizeof(err), "IPv6 addresses given without --ipv6; add --ipv6");
		goto bad;
	}
	if (o->dst_ip.family == PKT_IPV4 && cfg->ipv6) {
		snprintf(err, sizeof(err), "IPv4 addresses given with --ipv6; drop --ipv6");
		goto bad;
	}
	return 0;
bad:
	fprintf(stderr, "xdp-gen: %s%s\n", where, err);
	return -EINVAL;
}

/* --proto, --tcp-flags, --vlan, --vlan-prio, --encap: into o, or one line saying what is wrong. */
static int header_opts(const struct gen_cfg *cfg, struct pkt_opts *o, char *err, size_t errlen)
{
	unsigned int i;
	char *end;

	o->proto = cfg->proto ? (enum pkt_proto)cfg->proto : PKT_UDP;
	o->tcp_flags = PKT_TCP_SYN;
	if (cfg->tcp_flags && o->proto != PKT_TCP) {
		snprintf(err, errlen, "--tcp-flags applies to --proto tcp only; add --proto tcp");
		return -EINVAL;
	}
	if (cfg->tcp_flags && pkt_text_tcp_flags(cfg->tcp_flags, &o->tcp_flags, err, errlen))
		return -EINVAL;
	if (o->proto == PKT_ICMP && (cfg->src_port || cfg->dst_port)) {
		snprintf(
			err, errlen,
			"ports do not apply to --proto icmp (the echo id follows the flow); drop --src-port/--dst-port");
		return -EINVAL;
	}
	if (cfg->vlan.n > PKT_VLAN_MAX) {
		snprintf(err, errlen,
			 "--vlan given %u times: at most twice (QinQ: outer 802.1ad, inner 802.1Q)",
			 cfg->vlan.n);
		return -EINVAL;
	}
	for (i = 0; i < cfg->vlan.n; i++) {
		unsigned long v = strtoul(cfg->vlan.v[i], &end, 10);

		if (*end || end == cfg->vlan.v[i] || v > 4095 || cfg->vlan.v[i][0] == '-') {
			snprintf(err, errlen, "--vlan %s: a VLAN id is a number from 0 to 4095",
				 cfg->vlan.v[i]);
			return -EINVAL;
		}
		o->vlan[i] = (__u16)v;
	}
	o->nvlan = cfg->vlan.n;
	o->vlan_prio = (__u8)cfg->vlan_prio;
	if (cfg->vlan_prio && !o->nvlan) {
		snprintf(err, errlen, "--vlan-prio needs a tag; add --vlan ID");
		return -EINVAL;
	}
	if (cfg->encap && pkt_text_encap(cfg->encap, &o->encap, &o->vni, err, errlen))
		return -EINVAL;
	if (!cfg->encap && (cfg->outer_src_ip || cfg->outer_dst_ip)) {
		snprintf(err, errlen, "--outer-src-ip/--outer-dst-ip need a tunnel; add --encap");
		return -EINVAL;
	}
	if ((cfg->pcap || cfg->rtt) && (o->proto != PKT_UDP || o->nvlan || o->encap)) {
		snprintf(err, errlen, "%s sends UDP only; drop --proto, --vlan and --encap",
			 cfg->pcap ? "--pcap replays the file's frames and" : "--rtt");
		return -EINVAL;
	}
	return 0;
}

/*
 * One stream's frames from cfg into o (imix: its sizes); where prefixes an
 * error line ("" for the run's one stream, "--stream 1: " for one of several).
 */
static int build_opts(struct gen *g, const struct gen_cfg *cfg, struct pkt_opts *o,
		      struct pkt_imix *imix, const char *where)
{
	char err[256];
	__u32 run = 0;
	__u64 tuples;
	int rc;

	pkt_opts_init(o);
	if (header_opts(cfg, o, err, sizeof(err)))
		goto bad;
	rc = resolve_addresses(g, cfg, o, where);
	if (rc)
		return rc;
	if (o->proto == PKT_ICMP)
		o->dst_port = (struct pkt_port_range){ 0, 0 }; /* echo sequence number 0 */
	if (cfg->src_port && pkt_text_port_range(cfg->src_port, &o->src_port, err, sizeof(err)))
		goto bad;
	if (cfg->dst_port && pkt_text_port_range(cfg->dst_port, &o->dst_port, err, sizeof(err)))
		goto bad;
	o->no_stamp = cfg->no_stamp;
	o->key = &g->key;
	/* Without --size, the smallest frame the headers fit in (at least 60). */
	o->size = cfg->size ? (unsigned int)cfg->size : pkt_opts_min_size(o);
	if (o->size < PKT_SIZE_DEFAULT && !cfg->size)
		o->size = PKT_SIZE_DEFAULT;
	o->max_size = g->ifc.mtu + PKT_ETH_HLEN;
	o->random = cfg->random;
	if (cfg->imix || cfg->imix_sizes) {
		if (cfg->imix_sizes) {
			if (pkt_text_imix(cfg->imix_sizes, imix, err, sizeof(err)))
				goto bad;
		} else {
			pkt_imix_default(imix, pkt_opts_min_size(o));
		}
		o->imix = imix;
	}
	/*
	 * Each flow is sent by one thread, so its sequence numbers stay in
	 * order: at least one flow per thread. Without --flows and --src-port,
	 * give each thread its own source port.
	 */
	o->flows = cfg->flows ? (__u32)cfg->flows : g->nthreads;
	if (o->flows < g->nthreads) {
		snprintf(
			err, sizeof(err),
			"--flows %u is fewer than the %u threads; use --flows %u or more (each flow is sent by one thread)",
			o->flows, g->nthreads, g->nthreads);
		goto bad;
	}
	tuples = pkt_tuple_count(o);
	/* ICMP takes no ports: its echo ids always spread to the flows. */
	if ((!cfg->flows || o->proto == PKT_ICMP) && !cfg->src_port && tuples < o->flows)
		o->src_port.end = (__u16)(o->src_port.start + o->flows - 1);
	getrandom(&run, sizeof(run), 0);
	o->run = run;
	o->seed = ((__u64)run << 32) | 0x9e3779b9u;
	return 0;
bad:
	fprintf(stderr, "xdp-gen: %s%s\n", where, err);
	return -EINVAL;
}

static int build_stream(struct gen *g, const struct gen_cfg *cfg, struct pkt_opts *o,
			struct pkt_imix *imix, const char *where)
{
	char pre[128];

	snprintf(pre, sizeof(pre), "%s: ", where);
	return build_opts(g, cfg, o, imix, pre);
}

static int make_thread_gens(struct gen *g)
{
	char err[256];
	unsigned int i;

	for (i = 0; i < g->nthreads; i++) {
		struct pkt_opts o = g->popts;

		o.shard = i;
		o.shards = g->nthreads;
		o.seed += i;
		g->th[i].pg = pkt_gen__create(&o, err, sizeof(err));
		if (!g->th[i].pg) {
			fprintf(stderr, "xdp-gen: %s\n", err);
			return -EINVAL;
		}
		g->th[i].pg->clock_off = g->clock.user_offset_ns;
	}
	return 0;
}

/* Addresses, sizes and flows from the options; then one generator per thread. */
int gen_build_packets(struct gen *g)
{
	int err;

	if (!g->key.id[0])
		stamp_key_public(&g->key);
	if (g->nstreams)
		return gen_streams_build(g, build_stream);
	err = build_opts(g, g->cfg, &g->popts, &g->imix, "");
	return err ? err : make_thread_gens(g);
}
