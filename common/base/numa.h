/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_NUMA_H
#define XDPSG_NUMA_H

/*
 * NUMA topology and memory placement without libnuma: topology comes from
 * sysfs, placement and queries from the raw mbind/move_pages/get_mempolicy
 * system calls.
 *
 * Topology:
 *   numa_node_count()        highest online node + 1, from
 *                            /sys/devices/system/node/online ("0", "0-3,6")
 *   numa_node_of_cpu(cpu)    from the /sys/devices/system/cpu/cpuN/nodeM link;
 *                            0 on kernels without NUMA (no link, no node dir)
 *   numa_iface_node(ifname)  /sys/class/net/IF/device/numa_node, for REPORTING
 *                            only; -1 when the device has none (veth)
 *
 * Placement:
 *   numa_bind(addr, len, node)          mbind(MPOL_BIND) before first touch
 *   numa_page_nodes(addr, len, pgsz, ...) ask the kernel where each page is
 *
 * Pinning threads to CPUs is cpu.h's.
 *
 * Every function is thread-safe (no shared state) and returns 0 / a value >= 0
 * or -errno.
 */
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* The kernel's largest MAX_NUMNODES (NODES_SHIFT = 10). */
#define NUMA_MAX_NODES 1024

int numa_node_count(void);
/* Parse a sysfs list such as "0-3,6" into the highest id + 1 (exposed for tests). */
int numa_parse_node_list(const char *s);
int numa_node_of_cpu(int cpu);
/* Node of the NIC behind ifname, -1 if it has none; -ENODEV if no such interface. */
int numa_iface_node(const char *ifname);

int numa_bind(void *addr, size_t len, int node);

/*
 * Where the pages of [addr, addr + len) are, stepping by page_size. counts has
 * max_nodes entries and receives the number of pages on each node; *absent
 * (may be NULL) receives pages not present (never touched) or not queryable.
 */
int numa_page_nodes(void *addr, size_t len, size_t page_size, __u64 *counts, int max_nodes,
		    __u64 *absent);

#endif
