// SPDX-License-Identifier: GPL-2.0
/*
 * parse-probe: both readers of include/bpf/parsing.h's rule on every frame of a
 * capture, for tests that hold them to an outside judge (tshark, scapy).
 *   parse-probe FILE.pcap
 * Each frame runs once through the sink's XDP program with --parse
 * (BPF_PROG_RUN) and once through pkt_parse_l4() in user space. Output, one
 * JSON object a line per frame: {"i":N,"prog":"udp4","layers":["vlan"],
 * "reader":"udp4"|"other"|"error","payload_off":N,"stamp":true|false}.
 * "prog" is the counter that moved (a parse result or parse error name);
 * "reader" is user space's answer in the same words. Exit 2 on bad input.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../unit/parse_counters.h"
#include "pkt/pcapio.h"
#include "pkt/gen.h"
#include "pkt/stamp.h"
#include "shared.h"
#include "xdp_sink.skel.h"

/* enum parse_result's names, the counters' names in the sink's JSON. */
static const char *const results[] = {
	[PARSE_UDP4] = "udp4",	       [PARSE_UDP6] = "udp6",
	[PARSE_TCP4] = "tcp4",	       [PARSE_TCP6] = "tcp6",
	[PARSE_ICMP4] = "icmp4",       [PARSE_ICMP6] = "icmp6",
	[PARSE_OTHER] = "other",       [PARSE_ERR_ETH] = "err_eth",
	[PARSE_ERR_IP] = "err_ip",     [PARSE_ERR_IP6_EXT] = "err_ip6_ext",
	[PARSE_ERR_UDP] = "err_udp",   [PARSE_ERR_TCP] = "err_tcp",
	[PARSE_ERR_ICMP] = "err_icmp", [PARSE_ERR_TUNNEL] = "err_tunnel",
};

static const struct {
	const char *name;
	size_t at;
} layers[] = {
	{ "vlan", offsetof(struct sink_stats, vlan) },
	{ "qinq", offsetof(struct sink_stats, qinq) },
	{ "ip6_ext", offsetof(struct sink_stats, ip6_ext) },
	{ "vxlan", offsetof(struct sink_stats, vxlan) },
	{ "geneve", offsetof(struct sink_stats, geneve) },
	{ "gre", offsetof(struct sink_stats, gre) },
	{ "ipip", offsetof(struct sink_stats, ipip) },
};

_Static_assert(sizeof(results) / sizeof(results[0]) == PARSE_ERR_TUNNEL + 1, "a name per result");

static int read_stats(struct xdp_sink_bpf *skel, struct sink_stats *sum)
{
	int ncpu = libbpf_num_possible_cpus(), c, fd = bpf_map__fd(skel->maps.stats);
	struct sink_stats *vals;
	__u32 key = 0;
	unsigned int i;

	vals = calloc((size_t)ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	memset(sum, 0, sizeof(*sum));
	if (bpf_map_lookup_elem(fd, &key, vals)) {
		free(vals);
		return -errno;
	}
	for (c = 0; c < ncpu; c++)
		for (i = 0; i < sizeof(*sum) / 8; i++)
			((__u64 *)sum)[i] += ((__u64 *)&vals[c])[i];
	free(vals);
	return 0;
}

static const char *reader_name(int ret, const struct pkt_info *pi)
{
	bool v6 = pi->family == PKT_IPV6;

	if (ret == -ENOENT)
		return "other";
	if (ret)
		return "error";
	switch (pi->proto) {
	case 17:
		return v6 ? "udp6" : "udp4";
	case 6:
		return v6 ? "tcp6" : "tcp4";
	default:
		return v6 ? "icmp6" : "icmp4";
	}
}

static int probe(struct xdp_sink_bpf *skel, const struct pcap_frames *f)
{
	struct sink_stats a, b;
	struct pkt_info pi;
	struct stamp st;
	struct stamp_key kb, *key = &kb;
	const char *sep;
	unsigned int i, k;
	int ret, cls;

	/* The key the tests stamp with: $XDPSG_STAMP_KEY's, else the public one. */
	if (stamp_key_resolve(key, NULL, NULL, 0))
		stamp_key_public(key);

	for (i = 0; i < f->n; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pcap_frame(f, i),
			    .data_size_in = f->len[i], .repeat = 1);

		if (read_stats(skel, &a) ||
		    bpf_prog_test_run_opts(bpf_program__fd(skel->progs.xdp_sink_drop), &o) ||
		    read_stats(skel, &b)) {
			fprintf(stderr, "parse-probe: frame %u: BPF_PROG_RUN failed: %s\n", i,
				strerror(errno));
			return -1;
		}
		cls = parse_moved(&a, &b);
		memset(&pi, 0, sizeof(pi));
		ret = pkt_parse_l4(pcap_frame(f, i), f->len[i], &pi);
		printf("{\"i\":%u,\"prog\":\"%s\",\"layers\":[", i,
		       cls >= 0 ? results[cls] : "none");
		for (k = 0, sep = ""; k < sizeof(layers) / sizeof(layers[0]); k++)
			if (parse_counter(&b, layers[k].at) != parse_counter(&a, layers[k].at)) {
				printf("%s\"%s\"", sep, layers[k].name);
				sep = ",";
			}
		printf("],\"reader\":\"%s\",\"payload_off\":%u,\"stamp\":%s}\n",
		       reader_name(ret, &pi), ret ? 0 : pi.payload_off,
		       stamp_read(pcap_frame(f, i), f->len[i], key, &st) >= 0 ? "true" : "false");
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct pcap_frames f = { 0 };
	struct xdp_sink_bpf *skel;
	char why[256];
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: parse-probe FILE.pcap\n");
		return 2;
	}
	if (pcapio_load(argv[1],
			&(struct pcapio_limits){
				.max_len = 65535, .what = "64 KiB", .max_frames = 1000000 },
			&f, why, sizeof(why))) {
		fprintf(stderr, "parse-probe: %s\n", why);
		return 2;
	}
	skel = xdp_sink_bpf__open();
	if (!skel) {
		pcapio_frames_free(&f);
		fprintf(stderr, "parse-probe: cannot open the sink's BPF object\n");
		return 2;
	}
	skel->rodata->do_parse = true;
	if (xdp_sink_bpf__load(skel)) {
		fprintf(stderr, "parse-probe: cannot load the sink's program with --parse\n");
		ret = 2;
	} else {
		ret = probe(skel, &f) ? 1 : 0;
	}
	xdp_sink_bpf__destroy(skel);
	pcapio_frames_free(&f);
	return ret;
}
