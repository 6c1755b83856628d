/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_UMEM_H
#define XDPSG_UMEM_H

/*
 * One UMEM per queue, placed on the NUMA node of the CPU that runs the queue's
 * thread (never the NIC's node: that one is only reported, see
 * numa_iface_node()).
 *
 *   umem__create(&u, &opts)   map anonymous private memory (2 MiB huge pages
 *                             when opts.huge_pages), mbind it to the cpu's
 *                             node, touch every page from a thread pinned to
 *                             opts.cpu (the caller if it is pinned to exactly
 *                             that cpu, else a short-lived thread), then ask the
 *                             kernel where the pages are (u->placed_node).
 *                             Needs no privileges: unit tests use it alone.
 *   umem_register(u, fill, comp)  register with AF_XDP (xsk_umem__create) and
 *                             create the fill and completion rings. Raises
 *                             RLIMIT_MEMLOCK first if it can.
 *   umem_unregister(u)        undo umem_register (the memory stays).
 *   umem_placement(u, &pl)    ask the kernel again, pages per node.
 *   umem__destroy(u)          NULL-safe.
 *
 * Threading: the creating thread owns the object; after registration the fill
 * ring belongs to the queue thread (single producer) and so does the
 * completion ring (single consumer). The area is shared with the kernel.
 */
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <xdp/xsk.h>

#include "base/numa.h"

#define UMEM_FRAME_SIZE_DEFAULT 4096
#define UMEM_FRAME_SIZE_MAX 4096 /* --frame-size takes 2048 or this */
#define UMEM_HUGE_PAGE_SIZE (2UL << 20)

struct umem_opts {
	int cpu; /* cpu of the queue thread; -1: the calling thread's current cpu */
	__u32 nr_frames;
	__u32 frame_size; /* 2048 or 4096; 0 means 4096 */
	__u32 headroom; /* bytes before each packet, below frame_size - 256 */
	bool huge_pages; /* 2 MiB pages; -ENOMEM with advice if the node lacks them */
};

struct umem {
	void *area;
	size_t size; /* nr_frames * frame_size: what is registered */
	size_t map_size; /* size rounded up to page_size: what is mapped */
	size_t page_size;
	bool huge_pages;
	__u32 nr_frames;
	__u32 frame_size;
	__u32 headroom;
	int cpu; /* cpu the pages were touched from */
	int node; /* node the pages were bound to */
	/* placement seen right after creation */
	int placed_node; /* node holding every page, or -1 if spread / unknown */
	__u64 pages_total;
	__u64 pages_on_node; /* pages found on 'node' */
	/* after umem_register() */
	struct xsk_umem *xsk;
	struct xsk_ring_prod fill;
	struct xsk_ring_cons comp;
	__u32 fill_size;
	__u32 comp_size;
};

struct umem_placement {
	int node; /* expected node */
	__u64 pages;
	__u64 absent; /* not present or not queryable */
	int nr_nodes; /* entries of per_node that are meaningful */
	__u64 per_node[NUMA_MAX_NODES];
};

int umem__create(struct umem **out, const struct umem_opts *opts);
void umem__destroy(struct umem *u);

int umem_register(struct umem *u, __u32 fill_size, __u32 comp_size);
void umem_unregister(struct umem *u);

/* 0, or -EXDEV when a page is not on u->node (pl is filled either way). */
int umem_placement(const struct umem *u, struct umem_placement *pl);
/* "node0 512" or "node0 500 node1 12 absent 0": nodes with pages only. */
void umem_placement_format(const struct umem_placement *pl, char *buf, size_t len);

/*
 * Huge pages of 2 MiB free on node (or system-wide when the kernel has no
 * NUMA sysfs); -errno if unknown.
 */
long umem_free_huge_pages(int node);

static inline void *umem_frame_data(const struct umem *u, __u64 addr)
{
	return xsk_umem__get_data(u->area, addr);
}

#endif
