// SPDX-License-Identifier: GPL-2.0
/*
 * What every mode sends: addresses (given, or the interface's own and its
 * neighbour's), sizes, flows and the run id, and one packet generator per
 * thread, each sending its own shard of the flows.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>

#include "gen.h"

static int resolve_addresses(struct gen *g)
{
	const struct gen_cfg *cfg = g->cfg;
	int family = cfg->ipv6 ? AF_INET6 : AF_INET;
	char err[256], ip[INET6_ADDRSTRLEN + 1], dst_one[INET6_ADDRSTRLEN + 1];
	const char *dst = cfg->dst_ip;
	unsigned char mac[6];
	struct pkt_opts *o = &g->popts;

	memcpy(o->src_mac, g->ifc.mac, 6);
	if (cfg->src_mac && pkt_parse_mac(cfg->src_mac, o->src_mac, err, sizeof(err)))
		goto bad;

	if (cfg->src_ip) {
		if (pkt_parse_ip_range(cfg->src_ip, &o->src_ip, err, sizeof(err)))
			goto bad;
	} else if (!iface_first_addr(g->ifc.name, family, ip, sizeof(ip))) {
		pkt_parse_ip_range(ip, &o->src_ip, err, sizeof(err));
	} else if (cfg->ipv6) {
		pkt_parse_ip_range("fd00::1", &o->src_ip, err, sizeof(err));
	}

	/* The destination: the one given, or the interface's first neighbour. */
	if (!dst) {
		if (iface_neigh_lookup(g->ifc.ifindex, family, NULL, ip, sizeof(ip), mac)) {
			if (!cfg->dst_mac) {
				snprintf(
					err, sizeof(err),
					"%s has no %s neighbour entry to send to; give --dst-ip and --dst-mac",
					g->ifc.name, cfg->ipv6 ? "IPv6" : "IPv4");
				goto bad;
			}
			dst = cfg->ipv6 ? "fd00::2" : "10.0.0.2";
		} else {
			dst = ip;
			memcpy(o->dst_mac, mac, 6);
		}
	} else if (!cfg->dst_mac) {
		/* The first address of a range names the neighbour to ask for. */
		const char *dash = strchr(dst, '-');
		size_t l = dash ? (size_t)(dash - dst) : strlen(dst);

		snprintf(dst_one, sizeof(dst_one), "%.*s", (int)(l < sizeof(dst_one) ? l : 0), dst);
		if (iface_neigh_lookup(g->ifc.ifindex, family, dst_one, ip, sizeof(ip), mac)) {
			snprintf(
				err, sizeof(err),
				"no neighbour entry for %s on %s to take its MAC from; give --dst-mac",
				dst_one, g->ifc.name);
			goto bad;
		}
		memcpy(o->dst_mac, mac, 6);
	}
	if (cfg->dst_mac && pkt_parse_mac(cfg->dst_mac, o->dst_mac, err, sizeof(err)))
		goto bad;
	if (pkt_parse_ip_range(dst, &o->dst_ip, err, sizeof(err)))
		goto bad;
	if (o->src_ip.family != o->dst_ip.family) {
		snprintf(
			err, sizeof(err),
			"source and destination addresses are of different families; use --ipv6 with IPv6 addresses");
		goto bad;
	}
	if (o->dst_ip.family == PKT_IPV6 && !cfg->ipv6) {
		snprintf(err, sizeof(err), "IPv6 addresses given without --ipv6; add --ipv6");
		goto bad;
	}
	return 0;
bad:
	fprintf(stderr, "xdp-gen: %s\n", err);
	return -EINVAL;
}

static int build_opts(struct gen *g)
{
	const struct gen_cfg *cfg = g->cfg;
	struct pkt_opts *o = &g->popts;
	char err[256];
	__u32 run = 0;
	__u64 tuples;
	int rc;

	pkt_opts_init(o);
	rc = resolve_addresses(g);
	if (rc)
		return rc;
	if (cfg->src_port && pkt_parse_port_range(cfg->src_port, &o->src_port, err, sizeof(err)))
		goto bad;
	if (cfg->dst_port && pkt_parse_port_range(cfg->dst_port, &o->dst_port, err, sizeof(err)))
		goto bad;
	o->size = cfg->size ? (unsigned int)cfg->size :
			      pkt_min_size(cfg->ipv6 ? PKT_IPV6 : PKT_IPV4, !cfg->no_stamp);
	if (o->size < PKT_SIZE_DEFAULT && !cfg->size)
		o->size = PKT_SIZE_DEFAULT;
	o->max_size = g->ifc.mtu + PKT_ETH_HLEN;
	o->no_stamp = cfg->no_stamp;
	o->random = cfg->random;
	if (cfg->imix || cfg->imix_sizes) {
		if (cfg->imix_sizes) {
			if (pkt_parse_imix(cfg->imix_sizes, &g->imix, err, sizeof(err)))
				goto bad;
		} else {
			pkt_imix_default(&g->imix, pkt_min_size(cfg->ipv6 ? PKT_IPV6 : PKT_IPV4,
								!cfg->no_stamp));
		}
		o->imix = &g->imix;
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
	if (!cfg->flows && !cfg->src_port && tuples < o->flows)
		o->src_port.end = (__u16)(o->src_port.start + o->flows - 1);
	getrandom(&run, sizeof(run), 0);
	o->run = run;
	o->seed = ((__u64)run << 32) | 0x9e3779b9u;
	return 0;
bad:
	fprintf(stderr, "xdp-gen: %s\n", err);
	return -EINVAL;
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
	}
	return 0;
}

/* Addresses, sizes and flows from the options; then one generator per thread. */
int gen_build_packets(struct gen *g)
{
	int err = build_opts(g);

	return err ? err : make_thread_gens(g);
}
