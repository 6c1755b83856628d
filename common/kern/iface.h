/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_IFACE_H
#define XDPSG_IFACE_H

#include <stdbool.h>
#include <linux/types.h>
#include <net/if.h>

/*
 * Facts about a network interface that the tools check before they attach or
 * send, and the kernel's own counters they read to tell where packets went.
 * Nothing here is on a hot path.
 */

struct iface {
	char name[IF_NAMESIZE];
	int ifindex;
	bool up;
	unsigned int mtu;
	unsigned char mac[6];
	char driver[32]; /* "veth", ... (ethtool driver name) */
	unsigned int rx_queues, tx_queues; /* from /sys/class/net/IF/queues */
	int numa_node; /* the device's node, for reporting only; -1 if none */
};

/* 0, or -ENODEV when the interface does not exist in this namespace. */
int iface_get(const char *name, struct iface *out);

/*
 * Whether the interface iface_get() found is still here under its name: false
 * once it was deleted, renamed or moved to another namespace (its index then
 * names nothing, or another device). One ioctl: for the main thread's ticks.
 */
/* The interface's queues now: prefix "rx" or "tx" (/sys/class/net/IFNAME/queues/). */
unsigned int iface_count_queues(const char *ifname, const char *prefix);
/* /sys/class/net/IFNAME/ATTR as a number (iface.c and iface_peer.c). */
int iface_sysfs_u64(const char *ifname, const char *attr, __u64 *val);
bool iface_still_there(const struct iface *ifc);

/*
 * For a veth: the peer's name if it lives in this namespace (*peer_here is
 * then true), and whether its receive side runs NAPI (an XDP program attached,
 * or GRO on), without which frames redirected into the veth are dropped.
 * Returns -ENOENT when the peer is in another namespace (cannot be checked).
 */
int iface_veth_peer(const struct iface *ifc, char *peer, size_t len);
int iface_napi_state(const char *name, bool *xdp_attached, bool *gro_on);

/* Set GRO on or off (used by --fix-peer style helpers and tests). */
int iface_set_gro(const char *name, bool on);

/*
 * Whether the veth peer of ifc runs NAPI (XDP attached in native mode, or GRO on; a generic-mode program is not enough), wherever the
 * peer lives: in this namespace, or in a named one (/run/netns, as ip netns and
 * the lab make them), found by its netns id. With 'fix', turn GRO on there when
 * it runs none (*fixed is then true; undo with iface_peer_set_gro(ifc, false)).
 * Returns -ENOENT when the peer cannot be reached (an unnamed namespace).
 */
struct peer_napi {
	char name[IF_NAMESIZE]; /* the peer's name in its namespace */
	char netns[64]; /* its namespace's name, "" when it is ours */
	bool xdp, gro, fixed;
};
int iface_peer_napi(const struct iface *ifc, bool fix, struct peer_napi *out);
int iface_peer_set_gro(const struct iface *ifc, bool on);

/* Link counters from /sys/class/net/IF/statistics. */
struct link_stats {
	__u64 rx_packets, rx_bytes, rx_dropped, rx_errors;
	__u64 tx_packets, tx_bytes, tx_dropped, tx_errors;
};
int iface_link_stats(const char *name, struct link_stats *out);

/*
 * ethtool -S: names and values refreshed by iface_estats_read(), which asks
 * the device's count every time (it changes with the channel count on veth).
 */
struct iface_estats {
	char ifname[IF_NAMESIZE];
	unsigned int n;
	unsigned int names_gen; /* changes whenever names[] was read again */
	char (*names)[32];
	__u64 *values;
};
int iface_estats__open(const char *ifname, struct iface_estats **out);
void iface_estats__close(struct iface_estats *st);
int iface_estats_read(struct iface_estats *st);
/* Value of one named counter; false if the device has no such counter. */
bool iface_estat(const struct iface_estats *st, const char *name, __u64 *val);
/*
 * Sum of the per-queue counters "<prefix>N<suffix>" (e.g. "rx_queue_", "_xdp_tx_errors");
 * *found tells whether any existed.
 */
__u64 iface_estat_sum(const struct iface_estats *st, const char *prefix, const char *suffix,
		      bool *found);
/* The same counter for queue q. */
bool iface_estat_queue(const struct iface_estats *st, const char *prefix, unsigned int q,
		       const char *suffix, __u64 *val);

/*
 * The interface's first address of a family (IPv6: not link-local), as text.
 * -ENOENT when it has none.
 */
int iface_first_addr(const char *ifname, int family, char *buf, size_t len);

/*
 * A usable neighbour entry on ifindex from the kernel's table (netlink):
 * the one for 'ip' (text) if given, else the first of the family. Writes the
 * address as text and the MAC. -ENOENT when there is none.
 */
int iface_neigh_lookup(int ifindex, int family, const char *ip, char *ip_out, size_t ip_len,
		       unsigned char mac[6]);

/* Privileges to load BPF and attach XDP: CAP_BPF (or CAP_SYS_ADMIN) and CAP_NET_ADMIN. */
bool iface_have_caps(char *missing, size_t len);

/*
 * What both tools check first: the privileges, then that the interface exists
 * here and is up. Prints one line naming the problem and the fix; returns 0,
 * -EPERM, -EINVAL (missing or down) or another -errno. 'side' names the lab
 * side to run on in the hint ("gen" or "sink").
 */
int iface_preflight(const char *name, const char *side, struct iface *out);

/*
 * The /run/netns name (as ip netns and the lab give them) of the network
 * namespace whose inode is inum: 0 with the name in buf, -ENOENT if none has it.
 */
int netns_name_of(__u64 inum, char *buf, size_t len);

/*
 * Whether this process runs in another network namespace than the host's
 * (init's): 1 with its name in buf ("" if it has none), 0 when it is the
 * host's or that cannot be told (init's namespace unreadable and ours unnamed).
 */
int netns_self(char *buf, size_t len);

#endif
