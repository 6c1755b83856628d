/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_TEST_PARSE_COUNTERS_H
#define XDPSG_TEST_PARSE_COUNTERS_H

/*
 * For tests that ask the sink's program what it made of a frame: the
 * struct sink_stats counter of each parse result, in enum parse_result's
 * order, and parse_moved(), which result's counter moved between two reads.
 */
#include <stddef.h>

#include "bpf/parsing.h"
#include "shared.h"

static const size_t parse_result_at[] = {
	offsetof(struct sink_stats, udp4),     offsetof(struct sink_stats, udp6),
	offsetof(struct sink_stats, tcp4),     offsetof(struct sink_stats, tcp6),
	offsetof(struct sink_stats, icmp4),    offsetof(struct sink_stats, icmp6),
	offsetof(struct sink_stats, other),    offsetof(struct sink_stats, err_eth),
	offsetof(struct sink_stats, err_ip),   offsetof(struct sink_stats, err_ip6_ext),
	offsetof(struct sink_stats, err_udp),  offsetof(struct sink_stats, err_tcp),
	offsetof(struct sink_stats, err_icmp), offsetof(struct sink_stats, err_tunnel),
};

_Static_assert(sizeof(parse_result_at) / sizeof(parse_result_at[0]) == PARSE_ERR_TUNNEL + 1,
	       "a counter per result");

static inline __u64 parse_counter(const struct sink_stats *s, size_t off)
{
	return *(const __u64 *)((const char *)s + off);
}

/* The result whose counter moved from a to b, or -1. */
static inline int parse_moved(const struct sink_stats *a, const struct sink_stats *b)
{
	int i;

	for (i = 0; i <= PARSE_ERR_TUNNEL; i++)
		if (parse_counter(b, parse_result_at[i]) != parse_counter(a, parse_result_at[i]))
			return i;
	return -1;
}

#endif
